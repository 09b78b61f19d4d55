//! What the driver tells the runner: everything that happened, with no I/O.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::context::ChannelEntry;
use crate::protocols::agent_mail;

/// A point on the driver's monotonic clock, in milliseconds since an origin
/// the driver chooses (usually the instance start). The runner never reads a
/// clock: time reaches it only through [`Runner::handle`](super::Runner::handle),
/// so every decision is deterministic and testable.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Millis(pub u64);

impl Millis {
    /// `self` moved forward by `d` (saturating), for deadlines.
    pub fn after(self, d: Duration) -> Millis {
        let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        Millis(self.0.saturating_add(ms))
    }

    /// Time elapsed from `earlier` to `self` (zero if `earlier` is later).
    pub fn since(self, earlier: Millis) -> Duration {
        Duration::from_millis(self.0.saturating_sub(earlier.0))
    }
}

/// Identifies one turn. Turn ids are unique for the runner's lifetime, so an
/// event from a turn that was killed or superseded is recognised and ignored.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct TurnId(pub u64);

/// Something that happened, reported by the driver. Events naming an unknown
/// agent, or a turn that is not the agent's current one, are ignored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The instance is up. The driver has already appended the kickoff (from
    /// `system`) to the channel and passes the stored entry here so the
    /// agents it mentions start at once. `backlog` lists messages already
    /// unread in agents' inboxes when an existing instance is reopened, as
    /// `(agent, message id)`. Events before `Started` are recorded, but no
    /// turn starts until it arrives.
    Started {
        /// The kickoff as stored, if the workflow has one.
        kickoff: Option<ChannelEntry>,
        /// Unread `(agent, message id)` pairs of a reopened instance.
        #[serde(default)]
        backlog: Vec<(String, u64)>,
    },
    /// A message was appended to the channel (by anyone, including the
    /// runner's own [`Effect::PostSystem`](super::Effect::PostSystem) and
    /// [`Effect::PostFinalAnswer`](super::Effect::PostFinalAnswer) once the
    /// driver has written them). Entries should arrive in id order, but one
    /// reported late (a kickoff behind a backlog entry) is still news; an
    /// id already reported is a duplicate and ignored.
    MessagePosted(ChannelEntry),
    /// [`Event::MessagePosted`] with the message's Agent Mail record
    /// already read ([`agent_mail::from_channel_message`]): the driver reads
    /// each message's protocols once, for the front ends and the runner.
    MessageRead {
        /// The new entry.
        entry: ChannelEntry,
        /// Its Agent Mail record, if it is one.
        mail: Option<Box<agent_mail::MailRecord>>,
    },
    /// The final answer `text` that `agent`'s turn handed to the driver
    /// ([`Effect::PostFinalAnswer`](super::Effect::PostFinalAnswer)) could
    /// not be written: it will never be seen back in the channel, so a run
    /// must not wait for it.
    AnswerLost {
        /// Whose answer.
        agent: String,
        /// The answer.
        text: String,
    },
    /// `agent` acknowledged its inbox up to `through` outside a turn's end,
    /// for example with the `inbox_ack` tool mid-turn or the user's ack key.
    InboxAcked {
        /// Whose inbox.
        agent: String,
        /// The last acknowledged id.
        through: u64,
    },
    /// The backend process of `turn` is running (after a
    /// [`Effect::StartTurn`](super::Effect::StartTurn)).
    TurnStarted {
        /// Whose turn.
        agent: String,
        /// The turn, from the `StartTurn` effect.
        turn: TurnId,
    },
    /// A structured event from the backend during `turn`.
    Backend {
        /// Whose backend.
        agent: String,
        /// The turn it belongs to.
        turn: TurnId,
        /// What it reported.
        event: TurnActivity,
    },
    /// `turn` ended, well or badly.
    TurnFinished {
        /// Whose turn.
        agent: String,
        /// The turn that ended.
        turn: TurnId,
        /// How it ended.
        outcome: TurnOutcome,
    },
    /// A shared document changed: the agents are making progress, so the
    /// cycle detector starts over.
    DocumentChanged,
    /// The user stopped `agent`: its running turn is killed and it is not
    /// woken again until restarted. Its messages stay unread.
    Stop {
        /// The agent to stop.
        agent: String,
    },
    /// The user cancelled `agent`'s current turn: it ends (ACP agents get
    /// `session/cancel`), the messages it was handed are acked, and the
    /// agent stays runnable; nothing happens when no turn runs.
    Cancel {
        /// The agent whose turn to cancel.
        agent: String,
    },
    /// The user restarted `agent`: a stopped, failed or out-of-budget agent
    /// becomes runnable again with a fresh retry count and turn allowance (a
    /// running one has its turn killed and starts over with everything unread).
    Restart {
        /// The agent to restart.
        agent: String,
    },
    /// Message `id`, already in the channel and reported later as
    /// [`Event::MessagePosted`], mentions `agent`: it counts as unread at
    /// once. The engine's own answers (a spawned worker's hand-over, a
    /// SPAWN_ACK) use it, so a `run` never sees everyone idle between a
    /// request and its answer.
    Mentioned {
        /// Who is mentioned.
        agent: String,
        /// The message.
        id: u64,
    },
    /// Message `id`, posted by `system` and reported later as
    /// [`Event::MessagePosted`], was caused by `agent`'s tool call (the
    /// news of tasks its plan or its status change made available): the
    /// loop guard counts it as `agent`'s message, so plan → announce →
    /// plan cycles are paused like any ring.
    CausedBy {
        /// Whose call caused it.
        agent: String,
        /// The message.
        id: u64,
    },
    /// `agent`'s CLI began (`waiting: true`) or stopped waiting for a tool
    /// approval. While it waits, its turn's timeout and stall clocks stop.
    Approval {
        /// Whose CLI.
        agent: String,
        /// Whether a request of it waits now.
        waiting: bool,
    },
    /// The user resumed after a pause (loop guard or budget): queued
    /// messages are delivered again, budgets are renewed.
    Resume,
    /// Time passed. Drives retries, stall detection and turn timeouts; the
    /// driver sends one at [`Runner::next_deadline`](super::Runner::next_deadline)
    /// (or periodically).
    Tick,
}

/// A structured event from a backend while a turn runs. Any of them counts
/// as a sign of life for stall detection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TurnActivity {
    /// The model is reasoning.
    Thinking,
    /// The model produced text (the text itself goes to the log, not here).
    Text,
    /// The model called a tool.
    ToolCall {
        /// The tool's name, as shown in the status.
        name: String,
    },
    /// Usage since the previous `Usage` event of this turn (increments, not
    /// totals); `cost_usd` when the backend reports it.
    Usage {
        /// Input tokens (prompt, cache reads included).
        tokens_in: u64,
        /// Output tokens.
        tokens_out: u64,
        /// Spend in US dollars, if the backend reports it.
        cost_usd: Option<f64>,
    },
    /// The backend's session id, as soon as it is known, so a retry can
    /// resume the session even if this turn fails.
    SessionId {
        /// The session id.
        id: String,
    },
    /// A STREAM block the agent printed, to post now (its output goes to
    /// the channel as it comes, not only at the end of the turn).
    Stream {
        /// The block, marker lines included.
        text: String,
    },
}

/// How a turn ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum TurnOutcome {
    /// The agent finished its turn.
    Success {
        /// Ids handed to the agent during the turn in addition to those of
        /// [`Effect::StartTurn`](super::Effect::StartTurn), for example by
        /// `inbox_check`. They are acknowledged too.
        #[serde(default)]
        delivered: Vec<u64>,
        /// Whether the agent posted to the channel itself during the turn.
        /// (The runner also notices posts from the agent while it runs.)
        posted: bool,
        /// The agent's final answer, posted for it if it posted nothing.
        final_text: Option<String>,
        /// The backend session to resume next turn, if it reported one.
        session_id: Option<String>,
    },
    /// The turn failed (crash, non-zero exit, API error). Nothing is acked.
    Failure {
        /// What went wrong, shown in the agent's status.
        reason: String,
        /// A session id learnt before the failure, kept for the retry.
        session_id: Option<String>,
    },
    /// The turn lost the connection to the host it ran on (not the
    /// agent's failure): it is retried once the connection is back, up to
    /// a bound. Nothing is acked.
    ConnectionLost {
        /// What was lost, naming the host ("connection to host 'box'
        /// lost: …").
        reason: String,
        /// A session id learnt before the loss, kept for the retry.
        session_id: Option<String>,
    },
}
