//! What the runner asks the driver to do. Effects are returned in the order
//! they must be executed.

use serde::{Deserialize, Serialize};

use super::event::{Millis, TurnId};
use super::state::{AgentMetrics, AgentStatus};
pub use crate::vocab::agents::{Budget, PauseReason, PendingWork, RunOutcome};

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
    /// It comes before the banner ([`Effect::PostSystem`]) saying so, for
    /// the driver to keep the pause first: reopening the instance must not
    /// end it (see `engine::pause`).
    Paused {
        /// Why, for the status line.
        reason: PauseReason,
    },
    /// The pause ended (or out-of-budget agents were renewed); the driver
    /// forgets the pause it kept.
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
