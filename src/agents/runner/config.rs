//! How the runner is set up: mode, agents, limits, retries, loop guards.

use std::time::Duration;

use crate::workflow::schema::Workflow;

/// `run` ends when the work is done; `start` keeps the instance up until the
/// user stops it (the seed's two modes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunMode {
    /// One shot: emit [`Effect::Finish`](super::Effect::Finish) when no agent
    /// is working and no runnable agent has unread messages.
    Run,
    /// Persistent: never finishes on idle.
    Start,
}

/// Per-agent settings the runner needs.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentConfig {
    /// The agent's name, as mentioned with `@`.
    pub name: String,
    /// Turns this agent may take before it is out of budget (`None`: the
    /// runner's default).
    pub max_turns: Option<u32>,
    /// A turn running longer than this is killed and counts as failed.
    pub turn_timeout: Option<Duration>,
    /// The backend session kept from an earlier run of this instance, so the
    /// first turn after a restart resumes the agent's own conversation.
    pub session_id: Option<String>,
}

impl AgentConfig {
    /// An agent with default limits.
    pub fn new(name: impl Into<String>) -> Self {
        AgentConfig {
            name: name.into(),
            max_turns: None,
            turn_timeout: None,
            session_id: None,
        }
    }
}

/// Retries of failed turns: `max_retries` more attempts, waiting `initial`,
/// then `initial * factor`, … (capped at `max_delay`).
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first failure; 0 fails the agent at once.
    pub max_retries: u32,
    /// Wait before the first retry.
    pub initial: Duration,
    /// Growth of the wait per retry.
    pub factor: u32,
    /// Longest wait.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// 3 retries after 2s, 4s and 8s.
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            initial: Duration::from_secs(2),
            factor: 2,
            max_delay: Duration::from_secs(300),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1-based).
    pub fn delay(&self, retry: u32) -> Duration {
        let mut d = self.initial;
        for _ in 1..retry {
            d = d.saturating_mul(self.factor);
            if d >= self.max_delay {
                break;
            }
        }
        d.min(self.max_delay)
    }
}

/// The cycle detector: pause when the same pattern of agents waking agents
/// repeats `repeats` times in a row with no message from a person and no
/// document change.
#[derive(Clone, Debug, PartialEq)]
pub struct CycleConfig {
    /// Consecutive repetitions of the pattern that count as a loop (at least 2).
    pub repeats: usize,
    /// Longest pattern looked for, in messages (a ring of three agents is 3).
    pub max_period: usize,
}

impl Default for CycleConfig {
    /// Four repetitions of patterns up to six messages long: a pair
    /// ping-ponging eight times, or a ring of three going round four times.
    /// Three rounds of review and fix stay legitimate.
    fn default() -> Self {
        CycleConfig {
            repeats: 4,
            max_period: 6,
        }
    }
}

impl CycleConfig {
    /// The default for a workflow of `agents` agents: patterns up to twice
    /// the number of agents (a ring through every agent, or one going
    /// round and back), and never fewer than six messages.
    pub fn for_agents(agents: usize) -> Self {
        CycleConfig {
            max_period: agents.saturating_mul(2).max(6),
            ..CycleConfig::default()
        }
    }
}

/// Everything the runner needs to know before the first event.
#[derive(Clone, Debug, PartialEq)]
pub struct RunnerConfig {
    /// `run` or `start`.
    pub mode: RunMode,
    /// The workflow's agents, in file order (turns start in this order).
    pub agents: Vec<AgentConfig>,
    /// Turns per agent when the workflow does not say.
    pub default_max_turns: u32,
    /// Turns for the whole workflow before it pauses.
    pub max_total_turns: u32,
    /// Time since start after which no new turn starts (the instance pauses).
    pub wall_clock_budget: Option<Duration>,
    /// Reported spend after which no new turn starts (the instance pauses).
    pub cost_budget_usd: Option<f64>,
    /// Retries of failed turns.
    pub retry: RetryPolicy,
    /// A running turn with no backend event for this long shows as stalled.
    pub stall_after: Duration,
    /// The loop detector; `None` turns it off.
    pub cycle: Option<CycleConfig>,
}

/// Turns per agent when neither the workflow nor the caller says.
pub const DEFAULT_MAX_TURNS: u32 = 50;
/// Turns for a whole workflow when the caller does not say.
pub const DEFAULT_MAX_TOTAL_TURNS: u32 = 200;
/// Silence after which a running turn shows as stalled.
pub const DEFAULT_STALL_AFTER: Duration = Duration::from_secs(120);

impl RunnerConfig {
    /// Default limits for agents with these names.
    pub fn new<S: Into<String>>(mode: RunMode, agents: impl IntoIterator<Item = S>) -> Self {
        let agents: Vec<AgentConfig> = agents.into_iter().map(AgentConfig::new).collect();
        RunnerConfig {
            mode,
            cycle: Some(CycleConfig::for_agents(agents.len())),
            agents,
            default_max_turns: DEFAULT_MAX_TURNS,
            max_total_turns: DEFAULT_MAX_TOTAL_TURNS,
            wall_clock_budget: None,
            cost_budget_usd: None,
            retry: RetryPolicy::default(),
            stall_after: DEFAULT_STALL_AFTER,
        }
    }

    /// Default limits, with each agent's `max_turns` and `timeout` from the
    /// workflow file.
    pub fn from_workflow(workflow: &Workflow, mode: RunMode) -> Self {
        let mut config = RunnerConfig::new(mode, workflow.agent_names());
        for (agent, def) in config.agents.iter_mut().zip(&workflow.agents) {
            agent.max_turns = def.max_turns;
            agent.turn_timeout = def.timeout;
        }
        let limits = &workflow.limits;
        if let Some(n) = limits.agent_max_turns {
            config.default_max_turns = n;
        }
        if let Some(n) = limits.max_turns {
            config.max_total_turns = n;
        }
        config.wall_clock_budget = limits.wall_clock;
        config.cost_budget_usd = limits.cost_usd;
        if let Some(n) = limits.retries {
            config.retry.max_retries = n;
        }
        if let Some(d) = limits.retry_backoff {
            config.retry.initial = d;
        }
        if let Some(d) = limits.stall_after {
            config.stall_after = d;
        }
        match limits.loop_repeats {
            Some(0) => config.cycle = None,
            Some(n) => {
                if let Some(c) = config.cycle.as_mut() {
                    c.repeats = n as usize;
                }
            }
            None => {}
        }
        config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_backoff_is_2_4_8_seconds_and_capped() {
        let p = RetryPolicy::default();
        let secs: Vec<u64> = (1..=3).map(|n| p.delay(n).as_secs()).collect();
        assert_eq!(secs, vec![2, 4, 8]);
        assert_eq!(p.delay(40), p.max_delay);
    }
}
