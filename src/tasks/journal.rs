//! How task state is made durable: one JSON line per operation (all the
//! records it changed), appended and `fdatasync`ed before the operation
//! answers, so an acknowledged claim survives `kill -9`. Reopening replays
//! the lines; a torn last line (a crash mid-write) is cut off, an
//! unreadable line elsewhere is skipped with a warning.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::model::Record;

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

/// `tasks.jsonl` in an instance folder.
#[derive(Debug)]
pub struct FileJournal {
    file: File,
    path: PathBuf,
}

/// What reopening a journal found.
#[derive(Debug, Default)]
pub struct Replay {
    /// Every record, in the order written.
    pub records: Vec<Record>,
    /// Problems found (each names the file and line).
    pub warnings: Vec<String>,
}

impl FileJournal {
    /// Opens (or creates) `<dir>/tasks.jsonl` and reads back what it holds.
    pub fn open(dir: &Path) -> std::io::Result<(FileJournal, Replay)> {
        let path = dir.join(TASKS_FILE);
        let mut file = {
            use std::os::unix::fs::OpenOptionsExt;
            // Never through a link; 0600 like the channel's own files.
            OpenOptions::new()
                .read(true)
                .append(true)
                .create(true)
                .mode(0o600)
                .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
                .open(&path)?
        };
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(std::io::Error::other(format!(
                "{} is not a regular file",
                path.display()
            )));
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let mut replay = Replay::default();
        let mut good_len = 0usize;
        let mut start = 0usize;
        let mut line_no = 0usize;
        while start < bytes.len() {
            line_no += 1;
            let Some(end) = bytes[start..].iter().position(|b| *b == b'\n') else {
                replay.warnings.push(format!(
                    "{}:{line_no}: dropped a torn last line (the instance stopped mid-write)",
                    path.display()
                ));
                break;
            };
            let line = &bytes[start..start + end];
            match serde_json::from_slice::<Vec<Record>>(line) {
                Ok(records) => replay.records.extend(records),
                Err(e) if start + end + 1 == bytes.len() => {
                    replay.warnings.push(format!(
                        "{}:{line_no}: dropped an unreadable last line ({e})",
                        path.display()
                    ));
                    break;
                }
                Err(e) => replay.warnings.push(format!(
                    "{}:{line_no}: skipped an unreadable line ({e})",
                    path.display()
                )),
            }
            start += end + 1;
            good_len = start;
        }
        if good_len < bytes.len() {
            file.set_len(good_len as u64)?;
            file.sync_all()?;
        }
        Ok((FileJournal { file, path }, replay))
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl TaskJournal for FileJournal {
    fn write(&mut self, records: &[Record]) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(records).map_err(std::io::Error::other)?;
        line.push(b'\n');
        self.file.write_all(&line)?;
        self.file.sync_data()
    }
}
