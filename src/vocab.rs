//! The shared vocabulary of front ends: the types carried by
//! [`EngineEvent`](crate::engine::EngineEvent), [`Reply`](crate::engine::Reply)
//! and [`Command`](crate::engine::Command) — channel entries, cursors, agent
//! statuses and metrics, threads, tasks, approvals, workspaces, document
//! changes — re-exported from the modules that own them. A front end (the
//! control room, a future web view) imports this leaf module only, so the
//! store, the runner and the task engine can move their internals without
//! touching it. Nothing is defined here.

/// Channel entries, cursors and deliveries (the context store's words).
pub use crate::context::{ChannelEntry, Cursor, DeliveryState, Since};

/// Agents: status, why an instance is paused, budgets, metrics, and what a
/// turn is doing (the runner's and the backends' words).
pub use crate::agents::backend::BackendEvent;
pub use crate::agents::runner::{AgentMetrics, AgentStatus, Budget, PauseReason};

/// Thread states and deferred messages (agent operations).
pub use crate::engine::ops::{Deferred, ThreadState};

/// The task board and what changes it.
pub use crate::engine::tasks::{TaskCommand, TaskSnapshot};
pub use crate::tasks::{Checkpoint, PlanWorkspace, Task, TaskEvent, TaskStatus};

/// Tool approvals: requests, answers, standing rules.
pub use crate::approvals::{Answer, ApprovalEvent, ApprovalsSnapshot, Request, Rule, Verdict};

/// Agents' workspaces: what a diff shows and what can be done to it.
pub use crate::workspace::view::{DiffTarget, DiffView, StepLine, WorkspaceOp};

/// How a document changed, and a message's annotations.
pub use crate::mcp::DocumentChange;
pub use crate::protocols::Annotations;

/// Mentions: the reserved names and how the engine finds `@name` in a
/// message, so a front end highlights exactly what the engine delivers.
pub mod mentions {
    pub use crate::context::mentions::{
        ALL, Priority, SYSTEM, USER, extract, is_valid_name, priority, scan,
    };
}
