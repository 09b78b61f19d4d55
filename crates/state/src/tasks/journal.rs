//! How task state is made durable: one JSON line per operation (all the
//! records it changed), appended and `fdatasync`ed before the operation
//! answers, so an acknowledged claim survives `kill -9`. Reopening replays
//! the lines; a torn last line (a crash mid-write) is cut off, an
//! unreadable line elsewhere is skipped with a warning (the rules of every
//! journal, [`crate::journal`]).

use std::path::Path;

use super::model::Record;
use crate::journal::{self, Journal, JsonLines};

/// The journal's file name in the instance folder (reserved: never a document).
pub const TASKS_FILE: &str = "tasks.jsonl";

/// Where a task store persists its changes.
pub trait TaskJournal: Send {
    /// Persists one operation's records; when this returns they survive a crash.
    fn write(&mut self, records: &[Record]) -> std::io::Result<()>;
}

/// Keeps nothing (memory contexts, tests).
#[derive(Debug, Default)]
pub struct NoJournal;

impl TaskJournal for NoJournal {
    fn write(&mut self, _records: &[Record]) -> std::io::Result<()> {
        Ok(())
    }
}

/// One line of `tasks.jsonl`: the records one operation changed.
type Lines = JsonLines<Vec<Record>, [Record]>;

/// `tasks.jsonl` in an instance folder.
#[derive(Debug)]
pub struct FileJournal {
    journal: Journal<Lines>,
}

/// What reopening a journal found: every record in the order written.
pub type Replay = journal::Replay<Record>;

impl FileJournal {
    /// Opens (or creates) `<dir>/tasks.jsonl` and reads back what it holds.
    pub fn open(dir: &Path) -> std::io::Result<(FileJournal, Replay)> {
        let (journal, lines) = Journal::<Lines>::open(&dir.join(TASKS_FILE))?;
        let replay = Replay {
            records: lines.records.into_iter().flatten().collect(),
            warnings: lines.warnings,
        };
        Ok((FileJournal { journal }, replay))
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        self.journal.path()
    }
}

impl TaskJournal for FileJournal {
    fn write(&mut self, records: &[Record]) -> std::io::Result<()> {
        self.journal.append(records).map(drop)
    }
}
