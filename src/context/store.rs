//! The one implementation of [`ContextStore`], parameterised by where
//! documents live and how the channel is persisted. [`super::MemoryStore`]
//! and [`super::FileStore`] are its two instances, so they cannot drift apart.

use std::collections::{BTreeMap, BTreeSet};

use chrono::Utc;

use super::documents::Docs;
use super::index::ChannelIndex;
use super::{
    ChannelEntry, ContextStore, Cursor, DeliveryState, Handover, InboxItem, Result, Since,
};

/// How a store makes channel entries and cursors durable.
pub trait Journal: Send {
    /// Persists a new entry; when this returns the entry survives a crash.
    fn append(&mut self, entry: &ChannelEntry) -> Result<()>;
    /// Persists all cursors and hidden ids atomically.
    fn save_cursors(&mut self, state: CursorState<'_>) -> Result<()>;
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
}

impl<D: Docs + Send, J: Journal> Store<D, J> {
    /// Persists a prepared entry, then indexes it.
    fn commit(&mut self, entry: ChannelEntry) -> Result<ChannelEntry> {
        self.journal.append(&entry)?;
        // `prepare` yields the next id, so `push` cannot refuse it.
        let _ = self.index.push(entry.clone());
        Ok(entry)
    }

    fn persist_cursor_change(&mut self, changed: bool) -> Result<()> {
        if changed {
            self.journal.save_cursors(CursorState {
                cursors: self.index.cursors(),
                hidden: self.index.hidden(),
                handovers: self.index.handovers(),
            })?;
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
        let entry = self.index.prepare(from, message, Utc::now());
        self.commit(entry)
    }
    fn reply(&mut self, from: &str, message: &str, to: u64) -> Result<ChannelEntry> {
        let last = self.index.last_id();
        if self.index.entry(to).is_none() {
            return Err(super::ContextError::UnknownId { id: to, last });
        }
        let mut entry = self.index.prepare(from, message, Utc::now());
        entry.reply_to = Some(to);
        self.commit(entry)
    }
    fn read(&self, since: Option<Since>, limit: Option<usize>) -> Result<Vec<ChannelEntry>> {
        Ok(self.index.read(since, limit))
    }
    fn entry(&self, id: u64) -> Option<ChannelEntry> {
        self.index.entry(id).cloned()
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
}
