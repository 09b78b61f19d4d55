//! `approvals.jsonl`: every request that waited for a person, every
//! decision, every "always" rule added or revoked, one JSON line each,
//! synced before it counts (on the rules of every journal,
//! [`crate::journal`]).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Decision, Request, Standing};
use crate::journal::{self, JsonLines};

/// The journal's file name in the instance folder, where awtui kept it
/// before it moved out of agents' reach (see
/// [`crate::layout::approvals_journal`]); still reserved: never
/// a document.
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

/// The journal file, one [`Record`] a line.
type Lines = journal::Journal<JsonLines<Record>>;

/// The open journal file.
#[derive(Debug)]
pub struct Journal {
    lines: Lines,
}

/// What reopening found: every record in the order written.
pub type Replay = journal::Replay<Record>;

impl Journal {
    /// Opens (or creates) the journal at `path` and reads it back.
    ///
    /// A journal an older awtui kept in the instance folder (`legacy`) is
    /// carried over once and removed: its requests and decisions, never
    /// its "always" rules, which anything that could write a file there
    /// (an agent's document or file tools) might have put in. A warning
    /// says how many rules were left behind.
    pub fn open(path: &Path, legacy: Option<&Path>) -> std::io::Result<(Journal, Replay)> {
        let (lines, mut replay) = Lines::open(path)?;
        let mut journal = Journal { lines };
        if let Some(old) = legacy.filter(|old| *old != path)
            && std::fs::symlink_metadata(old).is_ok_and(|m| m.is_file())
        {
            let (_, old_replay) = Lines::open(old)?;
            replay.warnings.extend(old_replay.warnings);
            let mut dropped = 0;
            for record in old_replay.records {
                match record {
                    Record::Requested { .. } | Record::Decided { .. } => {
                        journal.write(&record)?;
                        replay.records.push(record);
                    }
                    Record::Always { .. } | Record::Revoked { .. } => dropped += 1,
                }
            }
            if dropped > 0 {
                replay.warnings.push(format!(
                    "{}: {dropped} \"always\" approval record(s) were not carried over (that \
                     file is in agents' reach, so a rule in it cannot be trusted); answer with \
                     \"always\" again to keep a rule",
                    old.display()
                ));
            }
            std::fs::remove_file(old)?;
        }
        Ok((journal, replay))
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        self.lines.path()
    }

    /// Appends `record`; once this returns it survives a crash.
    pub fn write(&mut self, record: &Record) -> std::io::Result<()> {
        self.lines.append(record).map(drop).map_err(|e| {
            std::io::Error::new(e.kind(), format!("{}: {e}", self.lines.path().display()))
        })
    }
}
