//! The one implementation of [`ContextStore`], parameterised by where
//! documents live and how the channel is persisted. [`super::MemoryStore`]
//! and [`super::FileStore`] are its two instances, so they cannot drift apart.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use chrono::Utc;

use super::documents::Docs;
use super::index::{ChannelIndex, Loc};
pub use super::writer::Pending;
use super::{
    ChannelEntry, ContextStore, Cursor, DeliveryState, Handover, InboxItem, Page, PageOf, Result,
    Since,
};

/// How a store makes channel entries and cursors durable.
///
/// Entries are written first ([`Journal::write`]) and made durable in
/// batches (a [`Flusher`] built from [`Journal::sync_target`]), so
/// concurrent senders share one `fdatasync` (group commit).
pub trait Journal: Send {
    /// Writes a new entry (one `write`, no sync); where its line is, for
    /// a journal the index reads texts back from.
    fn write(&mut self, entry: &ChannelEntry) -> Result<Option<Loc>>;
    /// The file to sync to make everything written so far durable, and how
    /// far that reaches; `None` when written entries need nothing more.
    fn sync_target(&self) -> Option<SyncTarget>;
    /// A sync of `target` succeeded: everything up to its position is
    /// durable, unless a rollback since the target was taken cut it off
    /// (then it says nothing about what is in the file now).
    fn durable(&mut self, target: &SyncTarget);
    /// A sync failed: cuts off everything written after the last durable
    /// position, so the next write starts on a clean line.
    fn rollback(&mut self);
    /// Entries that became durable and visible, oldest first (for derived
    /// files such as the markdown mirror, written behind).
    fn published(&mut self, _entries: &[ChannelEntry]) {}
    /// Persists all cursors and hidden ids atomically, possibly behind (on
    /// a writer thread): the returned [`Pending`] says when it is durable.
    fn save_cursors(&mut self, state: CursorState<'_>) -> Result<Pending>;
}

/// What a flush syncs: the channel file (`fdatasync`). A trait so a
/// journal can say what durable means for it (and tests can make a flush
/// fail or wait).
pub trait Fsync: Send + Sync + std::fmt::Debug {
    /// Makes everything written so far durable.
    fn fsync(&self) -> std::io::Result<()>;
}

impl Fsync for File {
    fn fsync(&self) -> std::io::Result<()> {
        self.sync_data()
    }
}

/// A file to `fdatasync` and the journal position the sync makes durable.
#[derive(Clone, Debug)]
pub struct SyncTarget {
    /// The channel file (a shared handle: syncing needs no lock).
    pub file: Arc<dyn Fsync>,
    /// Its path, for error messages.
    pub path: PathBuf,
    /// The journal's length when the target was taken.
    pub position: u64,
    /// How many rollbacks the journal had made when the target was taken.
    pub epoch: u64,
}

/// Makes every message staged so far durable, callable without holding
/// the store, so other senders keep writing meanwhile: the group commit's
/// one `fdatasync`. See [`ContextStore::flusher`].
#[derive(Clone, Debug)]
pub struct Flusher {
    target: Option<SyncTarget>,
    seq: u64,
}

impl Flusher {
    /// Syncs the channel file (nothing to do for a memory store).
    pub fn flush(&self) -> std::result::Result<(), FlushError> {
        match &self.target {
            Some(t) => t.file.fsync().map_err(|e| FlushError {
                path: t.path.clone(),
                kind: e.kind(),
                text: e.to_string(),
            }),
            None => Ok(()),
        }
    }

    /// The newest staged message this flush covers (see [`Staged::seq`]).
    pub fn seq(&self) -> u64 {
        self.seq
    }
}

/// A failed flush, kept so every sender of the batch gets the same error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlushError {
    path: PathBuf,
    kind: std::io::ErrorKind,
    text: String,
}

impl From<FlushError> for super::ContextError {
    fn from(e: FlushError) -> Self {
        super::ContextError::Io {
            path: e.path,
            source: std::io::Error::new(e.kind, e.text),
        }
    }
}

/// A message written but not yet durable, see [`ContextStore::stage`].
#[derive(Clone, Debug, PartialEq)]
pub struct Staged {
    /// The entry as it will be published.
    pub entry: ChannelEntry,
    /// Its place among staged messages: unique, increasing, never reused
    /// (not even after a failed flush discarded it).
    pub seq: u64,
    /// Where the journal wrote it.
    pub loc: Option<Loc>,
}

/// Everything about cursors a journal persists, in one atomic write.
#[derive(Clone, Copy, Debug)]
pub struct CursorState<'a> {
    pub cursors: &'a BTreeMap<String, Cursor>,
    pub hidden: &'a BTreeSet<u64>,
    pub handovers: &'a BTreeMap<String, Vec<Handover>>,
}

/// A channel index, documents, and a journal.
#[derive(Debug)]
pub struct Store<D, J> {
    pub(super) index: ChannelIndex,
    pub(super) docs: D,
    pub(super) journal: J,
    /// Written, not yet durable, invisible: oldest first.
    pub(super) staged: VecDeque<Staged>,
    /// The last [`Staged::seq`] handed out.
    pub(super) seq: u64,
    /// Cursor changes return before they are durable; the caller waits on
    /// [`ContextStore::pending_sync`] (without holding the store).
    pub(super) deferred: bool,
    /// The newest cursor change handed to the journal.
    pub(super) pending: Pending,
}

impl<D: Docs + Send, J: Journal> Store<D, J> {
    /// A store over these parts, nothing staged.
    pub(super) fn from_parts(index: ChannelIndex, docs: D, journal: J) -> Self {
        Store {
            index,
            docs,
            journal,
            staged: VecDeque::new(),
            seq: 0,
            deferred: false,
            pending: Pending::none(),
        }
    }

    /// The next entry after everything indexed and staged.
    fn next_entry(&self, from: &str, message: &str, reply_to: Option<u64>) -> ChannelEntry {
        let mut entry = self.index.prepare(from, message, Utc::now());
        if let Some(last) = self.staged.back() {
            entry.id = last.entry.id + 1;
            entry.timestamp = entry.timestamp.max(last.entry.timestamp);
        }
        entry.reply_to = reply_to;
        entry
    }

    /// Stages an entry and makes it durable and visible before returning.
    fn commit(&mut self, from: &str, message: &str, reply_to: Option<u64>) -> Result<ChannelEntry> {
        let staged = self.stage(from, message, reply_to)?;
        let flusher = self.flusher();
        if let Err(e) = flusher.flush() {
            self.discard_staged();
            return Err(e.into());
        }
        self.publish_staged(&flusher);
        Ok(staged.entry)
    }

    fn persist_cursor_change(&mut self, changed: bool) -> Result<()> {
        if changed {
            let pending = self.journal.save_cursors(CursorState {
                cursors: self.index.cursors(),
                hidden: self.index.hidden(),
                handovers: self.index.handovers(),
            })?;
            if !self.deferred {
                pending.wait()?;
            }
            self.pending = pending;
        }
        Ok(())
    }
}

impl<D: Docs + Send, J: Journal> ContextStore for Store<D, J> {
    fn agents(&self) -> &[String] {
        self.index.agents()
    }
    fn entry_document(&self) -> &str {
        self.docs.entry()
    }
    fn append(&mut self, from: &str, message: &str) -> Result<ChannelEntry> {
        self.commit(from, message, None)
    }
    fn reply(&mut self, from: &str, message: &str, to: u64) -> Result<ChannelEntry> {
        self.commit(from, message, Some(to))
    }
    fn stage(&mut self, from: &str, message: &str, reply_to: Option<u64>) -> Result<Staged> {
        if let Some(to) = reply_to
            && !self.index.contains(to)
        {
            let last = self.index.last_id();
            return Err(super::ContextError::UnknownId { id: to, last });
        }
        // A token an agent printed or posted never reaches the channel.
        let message = crate::secrets::redact(message);
        let entry = self.next_entry(from, &message, reply_to);
        let loc = self.journal.write(&entry)?;
        self.seq += 1;
        let staged = Staged {
            entry,
            seq: self.seq,
            loc,
        };
        self.staged.push_back(staged.clone());
        Ok(staged)
    }
    fn flusher(&self) -> Flusher {
        Flusher {
            target: self.journal.sync_target(),
            seq: self.seq,
        }
    }
    fn publish_staged(&mut self, flushed: &Flusher) -> Vec<ChannelEntry> {
        if let Some(t) = &flushed.target {
            self.journal.durable(t);
        }
        let mut published = Vec::new();
        while let Some(s) = self.staged.pop_front() {
            if s.seq > flushed.seq {
                self.staged.push_front(s);
                break;
            }
            // Staged ids follow the indexed ones, so `push` cannot refuse
            // them.
            let _ = self.index.push(s.entry.clone(), s.loc);
            published.push(s.entry);
        }
        if !published.is_empty() {
            self.journal.published(&published);
        }
        published
    }
    fn discard_staged(&mut self) -> Vec<Staged> {
        self.journal.rollback();
        self.staged.drain(..).collect()
    }
    fn defer_durability(&mut self) {
        self.deferred = true;
    }
    fn pending_sync(&self) -> Pending {
        self.pending.clone()
    }
    fn is_staged(&self, seq: u64) -> bool {
        self.staged.front().is_some_and(|s| s.seq <= seq)
            && self.staged.back().is_some_and(|s| s.seq >= seq)
    }
    fn read(&self, since: Option<Since>, limit: Option<usize>) -> Result<Vec<ChannelEntry>> {
        Ok(self.index.read(since, limit))
    }
    fn page(&self, page: Page, limit: usize) -> PageOf {
        self.index.page(page, limit)
    }
    fn entry(&self, id: u64) -> Option<ChannelEntry> {
        self.index.entry(id)
    }
    fn count_before(&self, id: u64) -> usize {
        self.index.count_before(id)
    }
    fn last_id(&self) -> u64 {
        self.index.last_id()
    }
    fn len(&self) -> usize {
        self.index.len()
    }
    fn inbox(&self, agent: &str) -> Result<Vec<InboxItem>> {
        self.index.inbox(agent)
    }
    fn unread_count(&self, agent: &str) -> Result<usize> {
        self.index.unread_count(agent)
    }
    fn inbox_ids(&self, agent: &str) -> Result<Vec<u64>> {
        self.index.inbox_ids(agent)
    }
    fn oldest_unread(&self, agent: &str) -> Result<Option<u64>> {
        self.index.oldest_unread(agent)
    }
    fn mark_delivered(&mut self, agent: &str, through: u64) -> Result<Cursor> {
        let (cursor, changed) = self.index.mark_delivered(agent, through)?;
        self.persist_cursor_change(changed)?;
        Ok(cursor)
    }
    fn ack(&mut self, agent: &str, until: Since) -> Result<Cursor> {
        let (cursor, changed) = self.index.ack(agent, until)?;
        self.persist_cursor_change(changed)?;
        Ok(cursor)
    }
    fn cursor(&self, agent: &str) -> Result<Cursor> {
        self.index.cursor(agent)
    }
    fn answered_through(&self, agent: &str) -> Result<Option<u64>> {
        self.index.answered_through(agent)
    }
    fn hide(&mut self, ids: &[u64]) -> Result<()> {
        let changed = self.index.hide(ids);
        self.persist_cursor_change(changed)
    }
    fn delivery(&self, id: u64, recipient: &str) -> Option<DeliveryState> {
        self.index.delivery(id, recipient)
    }
    fn read_document(&self, file: Option<&str>) -> Result<String> {
        self.docs.read(file)
    }
    fn write_document(&mut self, file: Option<&str>, content: &str) -> Result<()> {
        self.docs.write(file, content)
    }
    fn append_document(&mut self, file: Option<&str>, content: &str) -> Result<()> {
        self.docs.append(file, content)
    }
    fn list_documents(&self) -> Result<Vec<String>> {
        self.docs.list()
    }
    fn create_document(&mut self, file: &str, content: &str) -> Result<()> {
        self.docs.create(file, content)
    }
    fn delete_document(&mut self, file: &str) -> Result<()> {
        self.docs.delete(file)
    }
    fn document_folder(&self) -> Result<Option<super::documents::DocFolder>> {
        let Some(folder) = self.docs.folder() else {
            return Ok(None);
        };
        folder
            .try_clone()
            .map(Some)
            .map_err(|source| super::ContextError::Io {
                path: folder.path().to_path_buf(),
                source,
            })
    }
}
