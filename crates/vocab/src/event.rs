//! What the engine tells all its front ends (TUI, headless printer, attached
//! clients): facts. Everything that happened comes out as one of these;
//! answers to one front end's command do not (they are its private
//! [`Reply`](super::command::Reply)).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::activity::BackendEvent;
use super::agents::{AgentMetrics, AgentStatus, PauseReason, RunOutcome};
use super::channel::{ChannelEntry, Cursor, DocumentChange};
use super::ops::{Deferred, OpsState, ThreadState};
use crate::protocols::Annotations;

/// One thing that happened in the instance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EngineEvent {
    /// A message reached the channel (durable), with what the protocols
    /// read in it (AOP blocks, Agent Mail record).
    Message {
        entry: ChannelEntry,
        #[serde(flatten)]
        annotations: Box<Annotations>,
    },
    /// An agent's status changed.
    Status { agent: String, status: AgentStatus },
    /// An agent's counters changed (turns, tokens, cost, step).
    Metrics {
        agent: String,
        metrics: AgentMetrics,
    },
    /// What a running agent is doing, from its backend's structured events.
    Activity {
        agent: String,
        activity: BackendEvent,
    },
    /// A document changed (by an agent or a front end).
    Document {
        path: String,
        change: DocumentChange,
        by: String,
    },
    /// A recipient's delivery or ack cursor moved.
    Cursor { agent: String, cursor: Cursor },
    /// The loop guard or a budget paused the instance.
    Paused { reason: PauseReason },
    /// The instance runs again.
    Resumed,
    /// A notice from the engine itself (recovered files, warnings).
    Notice { text: String },
    /// The run ended (run mode, or a shutdown).
    Finished { outcome: RunOutcome },
    /// A thread's state changed through an agent operation (done, fail,
    /// delete).
    Thread { id: u64, state: ThreadState },
    /// The deferred messages changed (an agent deferred one, or one came
    /// back); the whole list.
    Deferred { deferred: Vec<Deferred> },
    /// Something changed on the task board (a task, a registration, a
    /// checkpoint, a workflow).
    Task {
        change: Box<super::tasks::TaskEvent>,
    },
    /// A tool approval was requested or decided, or the "always" rules
    /// changed.
    Approval {
        approval: Box<super::approvals::ApprovalEvent>,
    },
}

/// Everything a front end needs to draw the instance from scratch (the
/// private answer to `Command::Snapshot`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub workflow: String,
    pub instance: String,
    pub agents: Vec<AgentSnapshot>,
    /// The most recent messages, oldest first, within the byte budget of a
    /// page ([`super::pages`]).
    pub messages: Vec<MessageSnapshot>,
    /// How many of the messages asked for were left out (the oldest) to
    /// keep the snapshot within that budget.
    #[serde(default)]
    pub left_out: usize,
    /// How many messages the channel holds in all.
    pub total_messages: usize,
    /// How many mentions of `user` are unread in the whole channel (the
    /// messages above are only the newest).
    #[serde(default)]
    pub user_unread: usize,
    pub documents: Vec<String>,
    pub entry_document: String,
    /// Each recipient's cursor: with a message's mentions, the delivery marks.
    pub cursors: BTreeMap<String, Cursor>,
    pub paused: Option<PauseReason>,
    /// Thread states, deferred messages and surfaced items.
    pub ops: OpsState,
    /// The task board.
    #[serde(default)]
    pub tasks: super::tasks::TaskSnapshot,
    /// When this engine started serving the instance, so a screen that
    /// attaches later shows the instance's up time, not its own.
    #[serde(default)]
    pub started: Option<chrono::DateTime<chrono::Utc>>,
    /// Tool approvals: what waits, the rules.
    #[serde(default)]
    pub approvals: super::approvals::ApprovalsSnapshot,
    /// The latest notices, oldest first: a screen that attaches after they
    /// were sent (`awtui <file>` attaches to its background host once it
    /// has started) still shows what the start found.
    #[serde(default)]
    pub notices: Vec<String>,
}

/// One agent in a snapshot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentSnapshot {
    pub name: String,
    pub backend: String,
    pub model: Option<String>,
    pub status: AgentStatus,
    pub metrics: AgentMetrics,
    /// Where it runs: `local`, `sandbox` or a host's name (empty when not
    /// known: an instance of an older awtui).
    #[serde(default)]
    pub place: String,
    /// How awtui talks to it: `acp` or `headless` (empty for in-process
    /// API agents and instances of an older awtui).
    #[serde(default)]
    pub protocol: String,
    /// Its current (or last) turn as it happens: text, tool calls, plan,
    /// usage.
    #[serde(default)]
    pub live: super::live::AgentLive,
}

/// One message in a snapshot, with what the protocols read in it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MessageSnapshot {
    pub entry: ChannelEntry,
    #[serde(flatten)]
    pub annotations: Annotations,
    /// Whether the text was shortened for the snapshot, and its whole size.
    #[serde(flatten)]
    pub cut: super::pages::Cut,
}
