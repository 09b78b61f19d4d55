//! `approvals.jsonl`: every request that waited for a person, every
//! decision, every "always" rule added or revoked, one JSON line each,
//! synced before it counts (read back with the task journal's reader).

use std::fs::File;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Decision, Request, Standing};
use crate::tasks::journal::{append_line, open_lines};

/// The journal's file name in the instance folder (reserved: never a document).
pub const APPROVALS_FILE: &str = "approvals.jsonl";

/// One line of the journal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum Record {
    /// A request began to wait for a person.
    Requested {
        /// The request.
        request: Request,
    },
    /// A request was answered (or decided by a rule at once).
    Decided {
        /// The decision.
        decision: Decision,
    },
    /// A person added an "always" rule.
    Always {
        /// The rule.
        standing: Standing,
    },
    /// A person revoked one.
    Revoked {
        /// The rule.
        standing: Standing,
    },
}

/// The open journal file.
#[derive(Debug)]
pub struct Journal {
    file: File,
    path: PathBuf,
}

/// What reopening found.
#[derive(Debug, Default)]
pub struct Replay {
    /// Every record, in the order written.
    pub records: Vec<Record>,
    /// Problems found (each names the file and line).
    pub warnings: Vec<String>,
}

impl Journal {
    /// Opens (or creates) `<dir>/approvals.jsonl` and reads it back.
    pub fn open(dir: &Path) -> std::io::Result<(Journal, Replay)> {
        let path = dir.join(APPROVALS_FILE);
        let (file, records, warnings) = open_lines::<Record>(&path)?;
        Ok((Journal { file, path }, Replay { records, warnings }))
    }

    /// Appends `record`; once this returns it survives a crash.
    pub fn write(&mut self, record: &Record) -> std::io::Result<()> {
        append_line(&mut self.file, record)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", self.path.display())))
    }
}
