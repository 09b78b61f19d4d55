//! The memory provider: the same behaviour as [`super::FileStore`], nothing
//! on disk. For tests and throwaway runs.

use super::documents::{Docs, MemoryDocs};
use super::index::ChannelIndex;
use super::store::{CursorState, Journal, Store};
use super::{ChannelEntry, Result, StoreLayout};

/// A journal that keeps nothing: memory-only contexts.
#[derive(Debug, Default)]
pub struct NoJournal;

impl Journal for NoJournal {
    fn append(&mut self, _entry: &ChannelEntry) -> Result<()> {
        Ok(())
    }
    fn save_cursors(&mut self, _state: CursorState<'_>) -> Result<()> {
        Ok(())
    }
}

/// A context kept entirely in memory.
pub type MemoryStore = Store<MemoryDocs, NoJournal>;

impl MemoryStore {
    /// An empty context laid out as `config` says, listed documents created
    /// empty.
    pub fn new(config: &StoreLayout) -> Result<Self> {
        let mut docs = MemoryDocs::new(&config.document, config.own_files());
        docs.ensure(&config.documents)?;
        Ok(Store {
            index: ChannelIndex::new(config.agents.clone()),
            docs,
            journal: NoJournal,
        })
    }
}
