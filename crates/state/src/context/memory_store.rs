//! The memory provider: the same behaviour as [`super::FileStore`], nothing
//! on disk. For tests and throwaway runs.

use super::documents::{Docs, MemoryDocs};
use super::index::{ChannelIndex, Loc};
use super::store::{CursorState, Journal, Pending, Store, SyncTarget};
use super::{ChannelEntry, Result, StoreLayout};

/// A journal that keeps nothing: memory-only contexts.
#[derive(Debug, Default)]
pub struct NoJournal;

impl Journal for NoJournal {
    fn write(&mut self, _entry: &ChannelEntry) -> Result<Option<Loc>> {
        Ok(None)
    }
    fn sync_target(&self) -> Option<SyncTarget> {
        None
    }
    fn durable(&mut self, _target: &SyncTarget) {}
    fn rollback(&mut self) {}
    fn save_cursors(&mut self, _state: CursorState<'_>) -> Result<Pending> {
        Ok(Pending::none())
    }
}

/// A context kept entirely in memory.
pub type MemoryStore = Store<MemoryDocs, NoJournal>;

impl MemoryStore {
    /// An empty context laid out as `config` says, listed documents created
    /// empty.
    pub fn new(config: &StoreLayout) -> Result<Self> {
        Store::with_journal(config, NoJournal)
    }
}

impl<J: Journal> Store<MemoryDocs, J> {
    /// Documents in memory, the channel through `journal`: for a caller
    /// that decides itself how messages become durable (tests inject
    /// failing or waiting flushes this way).
    pub fn with_journal(config: &StoreLayout, journal: J) -> Result<Self> {
        let mut docs = MemoryDocs::new(&config.document, config.own_files());
        docs.ensure(&config.documents)?;
        Ok(Store::from_parts(
            ChannelIndex::new(config.agents.clone()),
            docs,
            journal,
        ))
    }
}
