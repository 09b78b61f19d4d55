//! The state's facts: what the channel, cursors, documents, task board
//! and approvals publish on the state's one stream when a change is
//! written (the stream itself, its bus, is the state's). The engine, the
//! MCP server's notifier and the document watcher read them.

use serde::Serialize;

use crate::approvals::ApprovalEvent;
use crate::channel::{ChannelEntry, Cursor, DocumentChange};
use crate::tasks::TaskEvent;

/// Something that changed in the instance's state: the one stream of the
/// state's facts (channel, cursors, documents, tasks, approvals), each
/// published once, when it is written. The engine follows it (and turns
/// it into its own events for front ends), the MCP server's resource
/// notifier and the document watcher read it; nobody re-reads the store to
/// learn what changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ContextEvent {
    /// A message was appended to the channel (it is already durable).
    MessageAppended {
        /// The new entry, with its id and mentions.
        entry: ChannelEntry,
    },
    /// A document was written, appended to, created or deleted.
    DocumentChanged {
        /// The document's path relative to the document folder.
        path: String,
        /// What happened to it.
        change: DocumentChange,
        /// Who changed it.
        by: String,
    },
    /// A recipient's delivery or acknowledgement cursor moved.
    CursorChanged {
        /// Whose inbox.
        agent: String,
        /// The new cursor.
        cursor: Cursor,
    },
    /// Something changed on the task board, with who caused it.
    TaskChanged {
        /// The change and its cause.
        change: Box<CausedEvent>,
    },
    /// A tool approval was requested or decided, or the "always" rules
    /// changed.
    ApprovalChanged {
        /// What happened.
        approval: Box<ApprovalEvent>,
    },
}

/// A change on the board with who made it: the caller of the tool call
/// (the board's `change_by`), `None` for the engine's and the person's
/// own changes made through `change`. The engine uses it so
/// that an agent is not woken by what its own call caused.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CausedEvent {
    /// Who made the change, if an agent's call did.
    pub by: Option<String>,
    /// The change.
    pub event: TaskEvent,
}
