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
        let (file, lines, warnings) = open_lines::<Vec<Record>>(&path)?;
        let replay = Replay {
            records: lines.into_iter().flatten().collect(),
            warnings,
        };
        Ok((FileJournal { file, path }, replay))
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Opens (or creates, 0600, never through a link) an append-only file of
/// JSON lines and reads back every line as a `T`: a torn last line (a
/// crash mid-write) is cut off, an unreadable line elsewhere is skipped;
/// both with a warning naming the file and line. Shared by every journal
/// (tasks, approvals).
pub fn open_lines<T: serde::de::DeserializeOwned>(
    path: &Path,
) -> std::io::Result<(File, Vec<T>, Vec<String>)> {
    let mut file = {
        use std::os::unix::fs::OpenOptionsExt;
        OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(path)?
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
    let (mut items, mut warnings) = (Vec::new(), Vec::new());
    let mut good_len = 0usize;
    let mut start = 0usize;
    let mut line_no = 0usize;
    while start < bytes.len() {
        line_no += 1;
        let Some(end) = bytes[start..].iter().position(|b| *b == b'\n') else {
            warnings.push(format!(
                "{}:{line_no}: dropped a torn last line (the instance stopped mid-write)",
                path.display()
            ));
            break;
        };
        let line = &bytes[start..start + end];
        match serde_json::from_slice::<T>(line) {
            Ok(item) => items.push(item),
            Err(e) if start + end + 1 == bytes.len() => {
                warnings.push(format!(
                    "{}:{line_no}: dropped an unreadable last line ({e})",
                    path.display()
                ));
                break;
            }
            Err(e) => warnings.push(format!(
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
    Ok((file, items, warnings))
}

/// Appends one JSON line to `file` and syncs it: once this returns, the
/// line survives a crash.
pub fn append_line<T: serde::Serialize>(file: &mut File, item: &T) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(item).map_err(std::io::Error::other)?;
    line.push(b'\n');
    file.write_all(&line)?;
    file.sync_data()
}

impl TaskJournal for FileJournal {
    fn write(&mut self, records: &[Record]) -> std::io::Result<()> {
        append_line(&mut self.file, &records)
    }
}
