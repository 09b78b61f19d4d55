//! What the runner asks the driver to do. Effects are returned in the order
//! they must be executed.

use serde::{Deserialize, Serialize};

use super::event::{Millis, TurnId};
use super::state::{AgentMetrics, AgentStatus};

/// One thing for the driver to do (or broadcast).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum Effect {
    /// Mark `messages` delivered to `agent` in the store (they are all its
    /// unread messages, so `mark_delivered(agent, last id)` is exact), then
    /// start a backend turn whose prompt carries them.
    StartTurn {
        /// Who works.
        agent: String,
        /// The id every event about this turn must carry.
        turn: TurnId,
        /// The channel ids handed over, oldest first.
        messages: Vec<u64>,
        /// The backend session to resume, when one is known.
        session_id: Option<String>,
        /// 0 for a first try, n for the n-th retry after failures.
        attempt: u32,
        /// The agent's own turn number (1, 2, 3 …, kept across reopening
        /// with its counters): the one its pane, its output logs and its
        /// turn commits all show.
        #[serde(default)]
        number: u32,
    },
    /// Acknowledge `agent`'s inbox up to `through` in the store: its turn
    /// succeeded and every unread message up to there was delivered to it.
    Ack {
        /// Whose inbox.
        agent: String,
        /// The last acknowledged id.
        through: u64,
    },
    /// Kill the process group of `agent`'s running `turn` (stop, restart or
    /// timeout). Whatever that turn reports afterwards is ignored.
    KillTurn {
        /// Whose process.
        agent: String,
        /// The turn to kill.
        turn: TurnId,
    },
    /// Append a message from `system` to the channel. The text never
    /// `@`-mentions an agent, so it wakes nobody.
    PostSystem {
        /// The message.
        text: String,
    },
    /// Append `agent`'s final answer to the channel, as from `agent`: it did
    /// not post during the turn, so what it says arrives exactly once. A
    /// `run` does not finish before this post is reported back.
    PostFinalAnswer {
        /// The author.
        agent: String,
        /// The answer, exactly as the backend returned it.
        text: String,
    },
    /// Send an [`Event::Tick`](super::Event::Tick) at `at` (or later), when
    /// a failed turn of `agent` is retried. A tick for a retry that was
    /// cancelled meanwhile (stop, restart) is harmless.
    ScheduleRetry {
        /// Who is retried.
        agent: String,
        /// When.
        at: Millis,
        /// Which retry (1-based).
        retry: u32,
    },
    /// The instance paused: no new turn starts until
    /// [`Event::Resume`](super::Event::Resume). Running turns finish normally.
    Paused {
        /// Why, for the status line.
        reason: PauseReason,
    },
    /// The pause ended (or out-of-budget agents were renewed).
    Resumed,
    /// `agent`'s status changed (to broadcast to front ends).
    StatusChanged {
        /// Whose status.
        agent: String,
        /// The new status.
        status: AgentStatus,
    },
    /// `agent`'s counters or self-reported progress changed (to broadcast).
    MetricsChanged {
        /// Whose metrics.
        agent: String,
        /// All of them, current.
        metrics: AgentMetrics,
    },
    /// `run` mode only, always the last effect: the run is over.
    Finish {
        /// How it ended.
        outcome: RunOutcome,
    },
}

/// Why the instance paused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PauseReason {
    /// Agents kept waking each other in a repeating pattern with no message
    /// from a person and no document change.
    Cycle {
        /// Everyone in the pattern, sorted.
        agents: Vec<String>,
        /// One period of the pattern, as `(sender, woken agents)`.
        pattern: Vec<(String, Vec<String>)>,
        /// How many times in a row it repeated.
        repeats: usize,
    },
    /// A workflow-wide budget ran out.
    Budget(Budget),
}

/// A workflow-wide budget that ran out. Resuming grants the same amount again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "budget", rename_all = "snake_case")]
pub enum Budget {
    /// Turns across all agents.
    Turns {
        /// The allowance.
        limit: u32,
    },
    /// Wall-clock time since start (or the last resume).
    WallClock {
        /// The allowance, in milliseconds.
        limit_ms: u64,
    },
    /// Spend reported by the backends.
    Cost {
        /// The allowance, in US dollars.
        limit_usd: f64,
        /// What was spent against it.
        spent_usd: f64,
    },
}

/// A sentence for people (banners, the headless printer): why it paused.
impl std::fmt::Display for PauseReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PauseReason::Cycle {
                agents, repeats, ..
            } => write!(
                f,
                "loop guard: {} kept waking each other ({repeats}× in a row)",
                agents.join(", ")
            ),
            PauseReason::Budget(Budget::Turns { limit }) => {
                write!(f, "the turn budget ({limit} turns) ran out")
            }
            PauseReason::Budget(Budget::WallClock { limit_ms }) => {
                write!(f, "the time budget ({}s) ran out", limit_ms / 1000)
            }
            PauseReason::Budget(Budget::Cost {
                limit_usd,
                spent_usd,
            }) => write!(
                f,
                "the cost budget ran out (${spent_usd:.2} of ${limit_usd:.2})"
            ),
        }
    }
}

/// How a `run` ended, so the driver can report it and pick an exit code.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum RunOutcome {
    /// Every message to an agent was handled.
    Completed,
    /// No turn ever ran and nothing is unread: the kickoff (if any) woke nobody.
    NothingToDo,
    /// Messages remain unread for agents that cannot take them now (failed,
    /// stopped, out of budget, or the instance is paused).
    Incomplete {
        /// The agents left with unread messages.
        pending: Vec<PendingWork>,
    },
    /// Every message was handled, but these agents ran every turn without
    /// awtui's tools (their CLI never connected to awtui's MCP server): the
    /// run did not do what the workflow meant.
    WithoutTools {
        /// The agents, sorted.
        agents: Vec<String>,
    },
}

/// An agent left with unread messages at the end of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingWork {
    /// The agent.
    pub agent: String,
    /// How many messages it did not handle.
    pub unread: usize,
    /// Why: its status at the end.
    pub status: AgentStatus,
}
