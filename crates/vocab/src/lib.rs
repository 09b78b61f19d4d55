//! The shared vocabulary of the engine and its front ends: the commands a
//! front end sends ([`Command`]), the private answers ([`Reply`]), the
//! facts everyone sees ([`EngineEvent`]), the [`Snapshot`] a front end
//! draws from scratch, and every type they carry — channel entries,
//! cursors, agent statuses and metrics, threads, tasks, approvals,
//! workspaces, document changes — plus the [`Link`] that carries them.
//!
//! This is a leaf: it imports nothing of the engine, the MCP server or the
//! stores (only the pure protocol parsers, for a message's annotations).
//! The modules that own the behaviour (`context`, `engine`, `tasks`,
//! `approvals`, `workspace`, `agents`) re-export these types and add their
//! logic in `impl` blocks of their own; a front end (the control room,
//! `awtui web`, `attach`, the headless printer) imports this module and the
//! protocol parsers, nothing else.

pub mod activity;
pub mod agents;
pub mod approval_view;
pub mod approvals;
pub mod channel;
pub mod command;
pub mod duration;
pub mod event;
pub mod instances;
pub mod link;
pub mod live;
pub mod mentions;
pub mod ops;
pub mod pages;
pub mod peek;
pub mod protocols;
pub mod sanitize;
pub mod state;
pub mod tag;
pub mod tasks;
pub mod transitions;
pub mod workspace;

pub use activity::BackendEvent;
pub use agents::{AgentMetrics, AgentStatus, Budget, PauseReason, PendingWork, RunOutcome};
pub use approvals::{
    Answer, ApprovalEvent, ApprovalsSnapshot, Decision, Request, Rule, RuleSet, Standing, Verdict,
};
pub use channel::{ChannelEntry, Cursor, DeliveryState, DocumentChange, Since};
pub use command::{Command, CommandError, CommandFailed, ErrorKind, Reply};
pub use event::{AgentSnapshot, EngineEvent, MessageSnapshot, Snapshot};
pub use instances::{InstanceInfo, InstanceStatus};
pub use link::{CommandSender, Envelope, Facts, Link, ReplyTo, RequestError, Resync};
pub use ops::{Deferred, OpsState, ThreadState};
pub use pages::Cut;
pub use peek::{PeekItem, PeekQuery};
pub use tasks::{
    Checkpoint, PlanWorkflow, PlanWorkspace, RegisteredAgent, Task, TaskCommand, TaskEvent,
    TaskSnapshot, TaskStatus,
};
pub use workspace::{DiffTarget, DiffView, StepLine, WorkspaceOp};

/// A message's annotations (AOP blocks, Agent Mail record), read once by
/// the pure protocol parsers.
pub use crate::protocols::Annotations;

/// Who changed a document outside awtui (an editor, `git checkout`), as
/// the document watcher reports it.
pub const EDITOR: &str = "editor";
