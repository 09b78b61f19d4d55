//! The memory provider: the same behaviour as [`super::FileStore`], nothing
//! on disk. For tests and throwaway runs.

use std::collections::BTreeMap;

use super::documents::{Docs, MemoryDocs};
use super::index::ChannelIndex;
use super::store::{Journal, Store};
use super::{ChannelEntry, Cursor, Result};

/// A journal that keeps nothing: memory-only contexts.
#[derive(Debug, Default)]
pub struct NoJournal;

impl Journal for NoJournal {
    fn append(&mut self, _entry: &ChannelEntry) -> Result<()> {
        Ok(())
    }
    fn save_cursors(&mut self, _cursors: &BTreeMap<String, Cursor>) -> Result<()> {
        Ok(())
    }
}

/// A context kept entirely in memory.
pub type MemoryStore = Store<MemoryDocs, NoJournal>;

impl MemoryStore {
    /// An empty context for `agents` with `entry` as the entry document and
    /// `documents` created empty.
    pub fn new(agents: Vec<String>, entry: &str, documents: &[String]) -> Result<Self> {
        let mut docs = MemoryDocs::new(entry, Vec::new());
        docs.ensure(documents)?;
        Ok(Store {
            index: ChannelIndex::new(agents),
            docs,
            journal: NoJournal,
        })
    }
}
