//! The shared context: channel, per-agent inboxes with delivery state, and
//! documents. One trait, [`ContextStore`], with a file and a memory
//! implementation that behave identically (the same test suite runs on both).

pub mod bus;
pub mod doc_journal;
pub mod documents;
pub mod file_store;
pub mod index;
pub mod memory_store;
pub use crate::vocab::mentions;
pub use crate::vocab::peek::{INBOX_ITEM_FIELDS, has_inbox_item_shape, inbox_item_json};
pub mod paths;
pub mod seal;
pub mod shared;
pub mod store;
pub mod writer;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use crate::vocab::channel::{ChannelEntry, Cursor, DeliveryState, Since, format_timestamp};
pub use bus::{Bus, Publisher};
pub use file_store::FileStore;
pub use shared::{ContextEvent, DocumentChange, SharedContext, blocking};

/// The largest piece of agent-produced text awtui takes in whole: 4 MiB.
/// One constant for every such cap (a document, an MCP body, one line of
/// an agent's output, one final answer), so an answer never fits one path
/// and not another. Output past it is archived, not posted (see
/// `agents::backend::capped`). Defined here, in the store, so nothing of
/// the store reaches up into the MCP server.
pub const MAX_BODY: usize = 4 * 1024 * 1024;
pub use memory_store::MemoryStore;
pub use mentions::Priority;

/// The names a context uses, shared by both stores so they refuse the same
/// document paths.
#[derive(Clone, Debug)]
pub struct StoreLayout {
    /// The channel's markdown mirror, such as `channel.md`.
    pub channel: String,
    /// The entry document, such as `notes.md`.
    pub document: String,
    /// Documents to create empty when missing.
    pub documents: Vec<String>,
    /// Agents whose names count as mentions.
    pub agents: Vec<String>,
}

impl StoreLayout {
    /// The channel files, which are never documents.
    pub fn own_files(&self) -> Vec<String> {
        vec![
            self.channel.clone(),
            file_store::jsonl_name(&self.channel),
            file_store::CHANNEL_KEY_FILE.to_string(),
        ]
    }
}

/// Which slice of the channel a read returns, so every message can be
/// reached however long the history (pages cost O(page), not O(history)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Page {
    /// The newest entries after a position (after the start without one).
    Newest(Option<Since>),
    /// The oldest entries after a position: paging forward.
    After(Since),
    /// The newest entries before a message id: paging back.
    Before(u64),
}

/// One page of the channel, oldest first.
#[derive(Clone, Debug, PartialEq)]
pub struct PageOf {
    /// The entries, oldest first.
    pub entries: Vec<ChannelEntry>,
    /// Whether more entries lie beyond this page in its direction (older
    /// for [`Page::Newest`] and [`Page::Before`], newer for
    /// [`Page::After`]).
    pub more: bool,
}

/// One hand-over of messages to a recipient: everything up to `through`
/// was handed to it when the channel's newest message was `at`. A post by
/// the recipient with an id above `at` was made after it saw them, so it
/// can count as their answer after a crash; an older post cannot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handover {
    pub through: u64,
    pub at: u64,
}

/// An unread mention in someone's inbox.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InboxItem {
    pub entry: ChannelEntry,
    pub priority: Priority,
    pub state: DeliveryState,
}

impl InboxItem {
    /// This item in the documented shape (see [`inbox_item_json`]).
    pub fn to_json(&self) -> serde_json::Value {
        inbox_item_json(&self.entry, self.priority, self.state)
    }
}

/// Everything that can go wrong with the context, each naming what it is about.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("document path '{path}' refused: {reason}")]
    PathRefused { path: String, reason: String },
    #[error("document '{path}' does not exist")]
    DocumentNotFound { path: String },
    #[error("document '{path}' already exists")]
    DocumentExists { path: String },
    #[error("document '{path}' is not UTF-8 text")]
    NotText { path: String },
    #[error("document '{path}' is larger than the {limit} limit")]
    TooLarge { path: String, limit: String },
    #[error(transparent)]
    InvalidSince(#[from] crate::vocab::channel::SinceError),
    #[error("there is no message #{id} (the last is #{last})")]
    UnknownId { id: u64, last: u64 },
    #[error("'{name}' is not an agent of this workflow")]
    UnknownAgent { name: String },
    #[error("{path}: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    #[error("the message is empty; write something to send")]
    EmptyMessage,
    #[error(
        "the message is {bytes} bytes, over the {} MiB limit on one channel message ({MAX_BODY} bytes); nothing was sent",
        MAX_BODY / (1024 * 1024)
    )]
    MessageTooLong { bytes: usize },
}

/// Whether `message` may be posted: not blank, and at most [`MAX_BODY`]
/// bytes (what an agent can post in one MCP request, so every agent can be
/// sent it). One check for every way a message enters the channel: an
/// agent's `channel_send`, `awtui send`, the control socket, the control
/// room.
pub fn check_message(message: &str) -> Result<()> {
    if message.trim().is_empty() {
        return Err(ContextError::EmptyMessage);
    }
    if message.len() > MAX_BODY {
        return Err(ContextError::MessageTooLong {
            bytes: message.len(),
        });
    }
    Ok(())
}

/// Result alias for context operations.
pub type Result<T, E = ContextError> = std::result::Result<T, E>;

/// The operations of a shared context, used by the engine, the MCP server and
/// front ends. Both implementations behave identically.
pub trait ContextStore: Send {
    /// The agents whose names count as mentions.
    fn agents(&self) -> &[String];
    /// The entry document's path, relative to the document folder.
    fn entry_document(&self) -> &str;

    /// Appends a message; it is durable when this returns.
    fn append(&mut self, from: &str, message: &str) -> Result<ChannelEntry>;
    /// Appends a reply to message `to` (which must exist).
    fn reply(&mut self, from: &str, message: &str, to: u64) -> Result<ChannelEntry>;
    /// Writes a message (a reply to `reply_to`, which must exist, if given)
    /// without waiting for it to be durable. It stays invisible (not read,
    /// not in any inbox) until a flush covers it and
    /// [`ContextStore::publish_staged`] runs; ids keep increasing across
    /// staged messages. Group commit: many senders stage, one flush.
    fn stage(&mut self, from: &str, message: &str, reply_to: Option<u64>) -> Result<store::Staged>;
    /// What makes every message staged so far durable; call its
    /// [`store::Flusher::flush`] without holding the store.
    fn flusher(&self) -> store::Flusher;
    /// After `flushed` succeeded: publishes the staged messages it covers,
    /// oldest first, and returns them.
    fn publish_staged(&mut self, flushed: &store::Flusher) -> Vec<ChannelEntry>;
    /// After a failed flush: cuts every staged message off the journal and
    /// returns them (their senders get the flush's error).
    fn discard_staged(&mut self) -> Vec<store::Staged>;
    /// From now on, cursor changes ([`ContextStore::mark_delivered`],
    /// [`ContextStore::ack`], [`ContextStore::hide`]) return before they
    /// are durable, so a shared store need not hold its lock across the
    /// `fsync`s; the caller then waits on [`ContextStore::pending_sync`]
    /// after releasing it. Without this call they are durable on return.
    fn defer_durability(&mut self);
    /// What makes every cursor change made so far durable (waitable
    /// without holding the store).
    fn pending_sync(&self) -> store::Pending;
    /// Whether the staged message `seq` still waits for a flush.
    fn is_staged(&self, seq: u64) -> bool;
    /// The last `limit` entries after `since` (all of them without a limit).
    fn read(&self, since: Option<Since>, limit: Option<usize>) -> Result<Vec<ChannelEntry>>;
    /// At most `limit` entries of `page`.
    fn page(&self, page: Page, limit: usize) -> PageOf;
    /// The entry with this id.
    fn entry(&self, id: u64) -> Option<ChannelEntry>;
    /// How many entries have an id below `id`, without reading any (a
    /// page bounded in bytes says how many it left out).
    fn count_before(&self, id: u64) -> usize;
    /// The id of the newest entry, 0 when empty.
    fn last_id(&self) -> u64;
    /// Number of entries.
    fn len(&self) -> usize;
    /// Whether the channel is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `agent`'s unread mentions, high priority first, then oldest first.
    /// Changes nothing.
    fn inbox(&self, agent: &str) -> Result<Vec<InboxItem>>;
    /// The ids of `agent`'s unread mentions in inbox order, without
    /// building the inbox (only unread messages are read, for their
    /// priority; cheap however long the history).
    fn inbox_ids(&self, agent: &str) -> Result<Vec<u64>>;
    /// How many unread mentions `agent` has, without reading any.
    fn unread_count(&self, agent: &str) -> Result<usize>;
    /// The id of `agent`'s oldest unread mention, without building the inbox.
    fn oldest_unread(&self, agent: &str) -> Result<Option<u64>>;
    /// Records that `agent` was handed everything up to `through`.
    fn mark_delivered(&mut self, agent: &str, through: u64) -> Result<Cursor>;
    /// Moves `agent`'s cursor forward to `until` (never back); durable on
    /// return unless [`ContextStore::defer_durability`] was called.
    fn ack(&mut self, agent: &str, until: Since) -> Result<Cursor>;
    /// `agent`'s cursor.
    fn cursor(&self, agent: &str) -> Result<Cursor>;
    /// After a crash: the last message `agent` was handed and answered
    /// (it posted after that hand-over) without the answer being
    /// acknowledged. `None` when nothing handed over was answered.
    fn answered_through(&self, agent: &str) -> Result<Option<u64>>;
    /// Hides messages from every inbox (agent operation `delete`).
    fn hide(&mut self, ids: &[u64]) -> Result<()>;
    /// Where message `id` stands for `recipient`; `None` if it does not
    /// mention them.
    fn delivery(&self, id: u64, recipient: &str) -> Option<DeliveryState>;

    /// Reads a document (the entry point when `file` is `None`); a missing
    /// entry point reads as empty.
    fn read_document(&self, file: Option<&str>) -> Result<String>;
    /// Replaces a document's content, creating it if needed.
    fn write_document(&mut self, file: Option<&str>, content: &str) -> Result<()>;
    /// Appends to a document, creating it if needed.
    fn append_document(&mut self, file: Option<&str>, content: &str) -> Result<()>;
    /// Every document, sorted, as relative paths with `/`.
    fn list_documents(&self) -> Result<Vec<String>>;
    /// Creates a document; fails if it exists.
    fn create_document(&mut self, file: &str, content: &str) -> Result<()>;
    /// Deletes a document.
    fn delete_document(&mut self, file: &str) -> Result<()>;
    /// A handle of its own on the folder the documents are in (`None`
    /// when they are kept in memory), for looking at files without the
    /// store: the document watcher.
    fn document_folder(&self) -> Result<Option<documents::DocFolder>> {
        Ok(None)
    }
}
