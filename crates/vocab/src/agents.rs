//! The agents' words: what an agent is doing, its counters, why the
//! instance paused and how a run ended.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What an agent is doing, as shown in the status pane. Derived from the
/// runner's state and the backend's structured events, never from output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", content = "detail", rename_all = "snake_case")]
pub enum AgentStatus {
    /// Nothing to do.
    Idle,
    /// `n` unread messages wait for a turn (the instance is paused).
    Queued(usize),
    /// A turn was requested; the backend is not running yet.
    Starting,
    /// The backend is running and the model is working.
    Thinking,
    /// The model is running this tool.
    CallingTool(String),
    /// A turn runs but the backend has been silent for too long.
    Stalled,
    /// The last turn failed; retry number `retry` is scheduled.
    Retrying {
        /// Which retry comes next (1-based).
        retry: u32,
        /// Why the last attempt failed.
        reason: String,
    },
    /// Stopped by the user; not woken until restarted.
    Stopped,
    /// Out of retries; not woken until restarted.
    Failed(String),
    /// Its turn allowance or the workflow's budget is used up.
    OutOfBudget,
    /// Its CLI asked to run a tool and waits for a person's decision (the
    /// turn's timeout does not run meanwhile).
    WaitingForApproval,
}

impl AgentStatus {
    /// Whether a turn runs (or is starting): what a cancel ends.
    pub fn in_turn(&self) -> bool {
        matches!(
            self,
            AgentStatus::Starting
                | AgentStatus::Thinking
                | AgentStatus::CallingTool(_)
                | AgentStatus::Stalled
                | AgentStatus::WaitingForApproval
        )
    }
}

impl fmt::Display for AgentStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentStatus::Idle => f.write_str("idle"),
            AgentStatus::Queued(n) => write!(f, "queued ({n})"),
            AgentStatus::Starting => f.write_str("starting"),
            AgentStatus::Thinking => f.write_str("thinking"),
            AgentStatus::CallingTool(name) => write!(f, "calling tool ({name})"),
            AgentStatus::Stalled => f.write_str("stalled"),
            AgentStatus::Retrying { retry, reason } => write!(f, "retry {retry}: {reason}"),
            AgentStatus::Stopped => f.write_str("stopped"),
            AgentStatus::Failed(reason) => write!(f, "failed: {reason}"),
            AgentStatus::OutOfBudget => f.write_str("out of budget"),
            AgentStatus::WaitingForApproval => f.write_str("waiting for approval"),
        }
    }
}

/// Counters and self-reported progress shown next to an agent's status.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentMetrics {
    /// Messages to it not yet acknowledged.
    pub unread: usize,
    /// Turns started, over every run of the instance (kept in the
    /// agent's `metrics.json`, see `engine::metrics`).
    pub turns: u32,
    /// Input tokens, as reported by the backend.
    pub tokens_in: u64,
    /// Output tokens, as reported by the backend.
    pub tokens_out: u64,
    /// Spend in US dollars, as reported by the backend.
    pub cost_usd: f64,
    /// The step from its latest Agent Mail `PROGRESS` message.
    pub step: Option<String>,
    /// Context window usage (0–100 %) from `PROGRESS` or `CHECKPOINT`.
    pub context_usage: Option<u8>,
    /// Its latest Agent Mail completion: `OFFERING_READY`, `DONE`, `FAILED`
    /// or `CHECKPOINT`.
    pub label: Option<String>,
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

/// An agent the person adds to an instance without editing its workflow
/// file (`n` in the control room, `/agent add`): the engine validates it as
/// the workflow loader validates the file's agents and keeps it, outside
/// every workspace, so reopening the instance brings it back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewAgent {
    /// Its name (`[a-zA-Z][a-zA-Z0-9_-]*`, not taken).
    pub name: String,
    /// Its backend, as `backend:` in a workflow file (`claude`, `codex`, …).
    pub backend: String,
    /// Where it works; `None`: the workflow's default `workspace:`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<WorkspaceMode>,
}

/// The backends an agent can be added with by name alone (the others need
/// a `command:` or a `model:`, which only a workflow file gives): what the
/// control room's form cycles through. A test of the workflow loader keeps
/// it equal to what the loader accepts.
pub const ADDABLE_BACKENDS: [&str; 4] = ["claude", "codex", "opencode", "cursor"];

/// `workspace:` as the person picks it for an added agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkspaceMode {
    /// The workflow file's folder, shared.
    Shared,
    /// A git worktree of its own.
    Worktree,
}

impl WorkspaceMode {
    /// The word a workflow file and `/agent add` use.
    pub fn name(self) -> &'static str {
        match self {
            WorkspaceMode::Shared => "shared",
            WorkspaceMode::Worktree => "worktree",
        }
    }

    /// The mode `word` names (`shared`, `worktree`).
    pub fn parse(word: &str) -> Option<Self> {
        match word {
            "shared" => Some(WorkspaceMode::Shared),
            "worktree" => Some(WorkspaceMode::Worktree),
            _ => None,
        }
    }
}
