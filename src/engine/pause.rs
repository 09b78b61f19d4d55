//! A pause that outlives the process. The loop guard and the workflow's
//! budgets pause an instance to stop paying for turns; reopening it
//! (`awtui start`, the home screen's `n`) must not undo that: only the
//! person's resume does (`R`, `/resume`, the control endpoint's `resume`).
//!
//! The pause is kept in one small record outside every workspace
//! ([`crate::instance::layout::pause_record`]), written durably *before*
//! the pause is announced, so a pause anyone saw (its banner in the
//! channel, a front end's status) survives `kill -9`. A crash before the
//! record is written loses a pause nobody was told of; the loop guard
//! then sees the loop again. The record names the last channel id it
//! knew. Only an empty channel (the instance folder deleted and made anew)
//! makes it stale: a channel shorter than the record says is kept paused,
//! since an agent with file tools can cut lines off `channel.jsonl` but
//! must not end a pause by doing so.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::vocab::agents::PauseReason;

pub use crate::instance::layout::PAUSE_FILE;

/// What the record holds.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    /// Why the instance paused.
    reason: PauseReason,
    /// The last channel id when it paused.
    through: u64,
}

/// Why the pause record could not be kept or read.
#[derive(Debug, thiserror::Error)]
pub enum PauseRecordError {
    /// No place for the record (no state dir, a folder that cannot be made).
    #[error("no place for the pause record of {home}: {reason}")]
    Place {
        /// The instance folder.
        home: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// Writing or removing the record failed.
    #[error("cannot {action} the pause record {path}: {source}")]
    Io {
        /// `write` or `remove`.
        action: &'static str,
        /// The record.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The record is there but cannot be read as one.
    #[error("cannot read the pause record {path}: {reason}")]
    Unreadable {
        /// The record.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
}

/// The pause record of one instance (none for an instance whose state is
/// temporary: it cannot be reopened).
#[derive(Debug, Default)]
pub struct PauseRecord {
    path: Option<PathBuf>,
}

impl PauseRecord {
    /// The record of the instance whose folder is `home`; `temporary` for
    /// an instance that keeps nothing.
    pub fn of(home: &Path, temporary: bool) -> Result<Self, PauseRecordError> {
        if temporary {
            return Ok(PauseRecord::default());
        }
        let path =
            crate::instance::layout::pause_record(home).map_err(|e| PauseRecordError::Place {
                home: home.to_path_buf(),
                reason: e.to_string(),
            })?;
        Ok(PauseRecord { path: Some(path) })
    }

    /// The pause a reopened instance whose channel ends at `last_id` is
    /// still in, if any. A fresh (empty) channel means the record is
    /// stale: it is removed. A channel cut shorter than the record keeps
    /// the pause (an agent can cut it; only the person resumes).
    pub fn load(&self, last_id: u64) -> Result<Option<PauseReason>, PauseRecordError> {
        let Some(path) = &self.path else {
            return Ok(None);
        };
        let text = match crate::fsutil::read_record_text(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(PauseRecordError::Unreadable {
                    path: path.clone(),
                    reason: e.to_string(),
                });
            }
        };
        let record: Record =
            serde_json::from_str(&text).map_err(|e| PauseRecordError::Unreadable {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        if last_id == 0 {
            self.clear()?;
            return Ok(None);
        }
        Ok(Some(record.reason))
    }

    /// Keeps `reason` durably; `through` is the last channel id.
    pub fn save(&self, reason: &PauseReason, through: u64) -> Result<(), PauseRecordError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let record = Record {
            reason: reason.clone(),
            through,
        };
        let json = serde_json::to_vec_pretty(&record).unwrap_or_default();
        crate::fsutil::atomic_write(path, &json).map_err(|source| PauseRecordError::Io {
            action: "write",
            path: path.clone(),
            source,
        })
    }

    /// Forgets the pause (the person resumed), durably.
    pub fn clear(&self) -> Result<(), PauseRecordError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let io = |source| PauseRecordError::Io {
            action: "remove",
            path: path.clone(),
            source,
        };
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io(e)),
        }
        match path.parent() {
            Some(dir) => crate::fsutil::sync_dir(dir).map_err(io),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(dir: &Path) -> PauseRecord {
        PauseRecord {
            path: Some(dir.join(PAUSE_FILE)),
        }
    }

    #[test]
    fn a_pause_is_kept_until_cleared_and_a_stale_one_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let r = record(dir.path());
        assert_eq!(r.load(5).unwrap(), None);
        let reason = PauseReason::Budget(crate::vocab::agents::Budget::Turns { limit: 3 });
        r.save(&reason, 7).unwrap();
        assert_eq!(r.load(9).unwrap(), Some(reason.clone()));
        r.clear().unwrap();
        assert_eq!(r.load(9).unwrap(), None);
        r.clear().unwrap();
        // A channel an agent cut short keeps the pause.
        r.save(&reason, 7).unwrap();
        assert_eq!(r.load(6).unwrap(), Some(reason.clone()), "cut short");
        // A channel made anew (empty) drops it.
        assert_eq!(r.load(0).unwrap(), None, "stale when empty");
        assert!(!dir.path().join(PAUSE_FILE).exists());
        std::fs::write(dir.path().join(PAUSE_FILE), "{not json").unwrap();
        let e = r.load(9).unwrap_err().to_string();
        assert!(e.contains(PAUSE_FILE), "{e}");
        assert!(
            PauseRecord::of(dir.path(), true)
                .unwrap()
                .load(9)
                .unwrap()
                .is_none()
        );
    }
}
