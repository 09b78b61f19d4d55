//! The document journal: what makes a document write durable with one
//! `fdatasync` instead of three.
//!
//! A write appends one record (path, content, checksum) to
//! `.documents.journal` in the document folder and `fdatasync`s it; then
//! the document is replaced atomically (temp file + rename, no sync), so
//! readers see the old or the new content, never a mix. A thread of its own
//! (a [`BatchWriter`]) later syncs the written files and their folders and empties the journal
//! when nothing newer was logged meanwhile. On open, the records still in
//! the journal are applied again, durably, so after a crash (or power loss)
//! every acknowledged write is there and whole; a torn last record was
//! never acknowledged and is dropped. Opening, appending and replaying
//! follow the rules of every journal ([`crate::journal`]); this file adds
//! the record format ([`DocFormat`]) and the checkpoints.
//!
//! Deleting a document first makes everything journaled durable and
//! empties the journal, so a replay can never bring a deleted document
//! back. The journal stays bounded ([`LIMIT`]): past it, a write first
//! waits for that same checkpoint.

use std::fs::File;
use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::batch_writer::{BatchWriter, Options};
use crate::fsutil::{MIB, stable_hash_u64};
use crate::journal::{Decoded, Format, Journal};

/// The journal's name in the document folder (hidden, so never a document).
pub const JOURNAL_FILE: &str = ".documents.journal";

/// Largest the journal grows before a write waits for a checkpoint.
pub const LIMIT: u64 = 8 * MIB;

/// Marks the start of each record.
const MAGIC: &[u8; 4] = b"AWD1";
/// Magic, path length (u32), content length (u64), checksum (u64).
const HEADER: usize = 4 + 4 + 8 + 8;

/// A write found in the journal on open, to apply again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The document's path relative to the folder, as validated then.
    pub path: String,
    /// Its content.
    pub content: Vec<u8>,
}

/// A write to log: the document's path and its new content.
#[derive(Clone, Copy, Debug)]
pub struct DocWrite<'a> {
    /// The document's path relative to the folder, validated.
    pub path: &'a str,
    /// Its new content.
    pub content: &'a [u8],
}

/// The journal's record format: magic, lengths and a checksum, then the
/// path and the content. Reading stops at the first incomplete or damaged
/// record (a crash mid-write), which is cut off.
#[derive(Debug)]
pub struct DocFormat;

impl Format for DocFormat {
    type Record = Record;
    type Entry<'a> = DocWrite<'a>;

    fn encode(entry: &DocWrite<'_>) -> io::Result<Vec<u8>> {
        Ok(encode(entry.path, entry.content))
    }

    fn decode(bytes: &[u8], path: &Path) -> Decoded<Record> {
        let (records, keep) = parse(bytes);
        let warnings = (keep < bytes.len())
            .then(|| {
                format!(
                    "{}: dropped a torn or damaged last record (the instance stopped mid-write)",
                    path.display()
                )
            })
            .into_iter()
            .collect();
        Decoded {
            records,
            keep,
            warnings,
        }
    }
}

#[derive(Debug)]
struct State {
    journal: Journal<DocFormat>,
    /// Records logged whose documents are not synced yet: the journal may
    /// be emptied behind only when none is left.
    unsynced: u64,
    /// The journal holds the last run's records, not yet applied again.
    replaying: bool,
    /// Syncing a batch behind failed (or was never done): those writes are
    /// durable only in the journal until a checkpoint syncs the whole file
    /// system.
    failed: bool,
}

#[derive(Debug)]
struct Shared {
    path: PathBuf,
    state: Mutex<State>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Syncs a batch of documents written behind, and empties the journal
    /// when every record logged is now synced in its own file.
    fn sync_behind(&self, batch: &[Settled]) -> Result<(), Arc<io::Error>> {
        let synced = sync_all(batch);
        let mut state = self.lock();
        match &synced {
            Ok(()) => {
                state.unsynced = state.unsynced.saturating_sub(batch.len() as u64);
                if state.unsynced == 0 && !state.replaying && !state.failed {
                    // Not synced: a crash before this reaches the disk only
                    // replays writes that are already whole on disk.
                    let _ = state.journal.cut(0);
                }
            }
            Err(e) => {
                tracing::warn!(
                    "cannot sync documents written behind ({e}); {} keeps them until a checkpoint",
                    self.path.display()
                );
                state.failed = true;
            }
        }
        synced.map_err(Arc::new)
    }
}

/// The journal of one document folder, with its checkpoint thread.
#[derive(Debug)]
pub struct DocJournal {
    shared: Arc<Shared>,
    /// Syncs written documents behind (a [`BatchWriter`]); `None` syncs
    /// them inline.
    behind: Option<BatchWriter<Settled, Arc<io::Error>>>,
}

/// A document replaced after its record was logged.
#[derive(Debug)]
struct Settled {
    file: File,
    dir: OwnedFd,
    name: String,
}

/// How long the checkpoint thread gathers writes before syncing them, so
/// a burst of writes costs one sync per document and folder, not one per
/// write (and its syncs compete less with the writes' own).
const BATCH_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

/// Syncs each written file (the newest per name: an older one was
/// replaced) and each folder once.
fn sync_all(batch: &[Settled]) -> io::Result<()> {
    let mut dirs: Vec<(u64, u64)> = Vec::new();
    let mut files: Vec<((u64, u64), &str)> = Vec::new();
    for s in batch.iter().rev() {
        let st = rustix::fs::fstat(&s.dir)?;
        let dir = (st.st_dev as u64, st.st_ino as u64);
        if files.contains(&(dir, s.name.as_str())) {
            continue;
        }
        files.push((dir, s.name.as_str()));
        s.file.sync_data()?;
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    // Folders after their files, so a rename is durable only with its data.
    let mut synced: Vec<(u64, u64)> = Vec::new();
    for s in batch.iter().rev() {
        let st = rustix::fs::fstat(&s.dir)?;
        let dir = (st.st_dev as u64, st.st_ino as u64);
        if !synced.contains(&dir) {
            rustix::fs::fsync(&s.dir)?;
            synced.push(dir);
        }
    }
    Ok(())
}

/// The records in `bytes`, up to the first incomplete or damaged one,
/// and how many bytes they take.
fn parse(bytes: &[u8]) -> (Vec<Record>, usize) {
    let mut out = Vec::new();
    let mut at = 0usize;
    while bytes.len() - at >= HEADER && &bytes[at..at + 4] == MAGIC {
        let num = |from: usize, n: usize| {
            let mut b = [0u8; 8];
            b[..n].copy_from_slice(&bytes[at + from..at + from + n]);
            u64::from_le_bytes(b)
        };
        let (path_len, content_len, sum) = (num(4, 4), num(8, 8), num(16, 8));
        let body = at + HEADER;
        let Some(end) = usize::try_from(path_len.saturating_add(content_len))
            .ok()
            .and_then(|n| body.checked_add(n))
            .filter(|end| *end <= bytes.len())
        else {
            break;
        };
        if stable_hash_u64(&bytes[body..end]) != sum {
            break;
        }
        let split = body + path_len as usize;
        let Ok(path) = String::from_utf8(bytes[body..split].to_vec()) else {
            break;
        };
        out.push(Record {
            path,
            content: bytes[split..end].to_vec(),
        });
        at = end;
    }
    (out, at)
}

/// How long a record of `content` for `path` is.
fn record_len(path: &str, content: &[u8]) -> u64 {
    (HEADER + path.len() + content.len()) as u64
}

/// One record's bytes.
fn encode(path: &str, content: &[u8]) -> Vec<u8> {
    let mut buf = Vec::with_capacity(record_len(path, content) as usize);
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&(path.len() as u32).to_le_bytes());
    buf.extend_from_slice(&(content.len() as u64).to_le_bytes());
    buf.extend_from_slice(&[0; 8]);
    buf.extend_from_slice(path.as_bytes());
    buf.extend_from_slice(content);
    let sum = stable_hash_u64(&buf[HEADER..]);
    buf[16..24].copy_from_slice(&sum.to_le_bytes());
    buf
}

impl DocJournal {
    /// Opens (or creates) the journal in folder `dir` (at `dir_path`, for
    /// messages) and returns it with the records left by the last run,
    /// which the caller applies again and then confirms with
    /// [`DocJournal::checkpoint`].
    pub fn open(dir: BorrowedFd<'_>, dir_path: &Path) -> io::Result<(DocJournal, Vec<Record>)> {
        let path = dir_path.join(JOURNAL_FILE);
        let (journal, replay) = Journal::open_in(dir, JOURNAL_FILE, &path)?;
        for w in &replay.warnings {
            tracing::warn!("{w}");
        }
        let records = replay.records;
        let shared = Arc::new(Shared {
            path,
            state: Mutex::new(State {
                replaying: !journal.is_empty(),
                journal,
                unsynced: 0,
                failed: false,
            }),
        });
        let worker = Arc::clone(&shared);
        let options = Options {
            gather: BATCH_WAIT,
            capacity: None,
        };
        let behind = BatchWriter::start("awtui-docs", options, move |batch: &mut Vec<Settled>| {
            worker.sync_behind(batch)
        })
        .map_err(|e| {
            tracing::warn!("cannot start the document checkpoint thread: {e}");
        })
        .ok();
        Ok((DocJournal { shared, behind }, records))
    }

    /// The journal file, for error messages.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// Appends a record of `content` for `path` and makes it durable.
    /// Returns where it starts, for [`DocJournal::cut`].
    pub fn log(&self, path: &str, content: &[u8]) -> io::Result<u64> {
        let full = {
            let state = self.shared.lock();
            state.journal.len() + record_len(path, content) > LIMIT && !state.journal.is_empty()
        };
        if full {
            self.checkpoint()?;
        }
        let mut state = self.shared.lock();
        let at = state.journal.append(&DocWrite { path, content })?;
        state.unsynced += 1;
        Ok(at)
    }

    /// Takes back the record logged at `at` (its write never happened).
    pub fn cut(&self, at: u64) {
        let mut state = self.shared.lock();
        let _ = state.journal.cut(at);
        state.unsynced = state.unsynced.saturating_sub(1);
    }

    /// The document replaced after its record was logged: `file` holds the
    /// new content, `dir` is its folder and `name` its name there; both get
    /// synced behind.
    pub fn settle(&self, file: File, dir: OwnedFd, name: &str) {
        let settled = Settled {
            file,
            dir,
            name: name.to_string(),
        };
        match &self.behind {
            Some(behind) => {
                behind.submit(settled);
            }
            None => {
                // No thread: settle inline (a failure keeps the record).
                if let Err(e) = self.shared.sync_behind(&[settled]) {
                    tracing::warn!("cannot sync a written document: {e}");
                }
            }
        }
    }

    /// Makes every write so far durable in its own file and empties the
    /// journal (durably), so nothing in it is replayed any more.
    pub fn checkpoint(&self) -> io::Result<()> {
        // Everything settled so far is synced behind first; a batch that
        // failed (or was never synced) sets `failed`.
        let behind = match &self.behind {
            Some(b) => b.flush().wait(),
            None => Ok(()),
        };
        let mut state = self.shared.lock();
        if behind.is_err() {
            state.failed = true;
        }
        if state.failed {
            // Their handles are gone: sync everything on that file system.
            rustix::fs::syncfs(&state.journal)?;
            state.failed = false;
        }
        state.journal.clear()?;
        state.replaying = false;
        state.unsynced = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn records_round_trip_and_a_torn_or_damaged_tail_is_dropped() {
        let mut bytes = encode("a.md", b"first");
        bytes.extend(encode("dir/b.md", "second \u{e9}".as_bytes()));
        let whole = parse(&bytes).0;
        assert_eq!(
            whole,
            vec![
                Record {
                    path: "a.md".into(),
                    content: b"first".to_vec()
                },
                Record {
                    path: "dir/b.md".into(),
                    content: "second \u{e9}".as_bytes().to_vec()
                }
            ]
        );
        // Torn anywhere in the second record: only the first is kept.
        for cut in 1..bytes.len() - whole[0].content.len() - HEADER - 4 {
            let torn = &bytes[..bytes.len() - cut];
            assert_eq!(parse(torn).0.len(), 1, "cut {cut}");
        }
        // A flipped byte in the content fails the checksum.
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert_eq!(parse(&bytes).0.len(), 1);
    }

    #[test]
    fn opening_replays_whole_records_and_cuts_a_torn_one_off() {
        let dir = tempfile::tempdir().unwrap();
        let whole = encode("a.md", b"first");
        let mut bytes = whole.clone();
        bytes.extend(&encode("b.md", b"second")[..HEADER + 2]);
        std::fs::write(dir.path().join(JOURNAL_FILE), &bytes).unwrap();
        let folder = std::fs::File::open(dir.path()).unwrap();
        let (journal, records) = DocJournal::open(folder.as_fd(), dir.path()).unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].path, "a.md");
        let on_disk = std::fs::read(dir.path().join(JOURNAL_FILE)).unwrap();
        assert_eq!(on_disk, whole, "the torn record is cut off");
        // A new record follows the whole one; a checkpoint empties it.
        journal.log("c.md", b"third").unwrap();
        let on_disk = std::fs::read(dir.path().join(JOURNAL_FILE)).unwrap();
        assert_eq!(parse(&on_disk).0.len(), 2);
        journal.checkpoint().unwrap();
        assert!(
            std::fs::read(dir.path().join(JOURNAL_FILE))
                .unwrap()
                .is_empty()
        );
    }

    /// The journal is emptied behind only once every record logged has
    /// its document synced: one logged and not yet settled keeps it.
    #[test]
    fn the_journal_empties_behind_once_every_logged_document_is_synced() {
        let dir = tempfile::tempdir().unwrap();
        let folder = std::fs::File::open(dir.path()).unwrap();
        let (journal, records) = DocJournal::open(folder.as_fd(), dir.path()).unwrap();
        assert!(records.is_empty());
        let journal_len = || {
            std::fs::metadata(dir.path().join(JOURNAL_FILE))
                .unwrap()
                .len()
        };
        let settle = |name: &str| {
            std::fs::write(dir.path().join(name), name).unwrap();
            let file = std::fs::File::open(dir.path().join(name)).unwrap();
            let fd = rustix::io::fcntl_dupfd_cloexec(folder.as_fd(), 0).unwrap();
            journal.settle(file, fd, name);
            journal.behind.as_ref().unwrap().flush().wait().unwrap();
        };
        journal.log("a.md", b"a.md").unwrap();
        journal.log("b.md", b"b.md").unwrap();
        settle("a.md");
        assert!(journal_len() > 0, "b.md is logged and not synced");
        settle("b.md");
        assert_eq!(journal_len(), 0);
    }
}
