//! The append-only journals awtui keeps of its own state (tasks,
//! approvals, document writes), on one set of rules:
//!
//! - **Private and never through a link**: the file is created 0600 and
//!   opened with `O_NOFOLLOW`; a link, a FIFO, a device or a folder in its
//!   place is refused with an error naming the file and what is there.
//! - **Durable appends**: a record is written whole and `fdatasync`ed
//!   before [`Journal::append`] returns, so an acknowledged change survives
//!   `kill -9` and power loss. A write that fails is cut off again, so the
//!   next record starts clean.
//! - **Replay on open**: every record is read back; a torn or damaged tail
//!   (a crash mid-write: never acknowledged) is cut off the file, with a
//!   warning naming the file.
//!
//! How records are laid out is a [`Format`]: [`JsonLines`] (one JSON value
//! a line: `tasks.jsonl`, `approvals.jsonl`) or the document journal's
//! checksummed binary records ([`crate::context::doc_journal`]).

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::marker::PhantomData;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::fsutil::{ReadError, kind_name, open_parent};

/// How one journal lays out its records in its file.
pub trait Format {
    /// What reopening reads back.
    type Record;
    /// What one append writes (it may borrow what a record owns).
    type Entry<'a>: ?Sized
    where
        Self: 'a;
    /// The bytes of one entry, appended whole.
    fn encode(entry: &Self::Entry<'_>) -> io::Result<Vec<u8>>;
    /// Reads back a whole file (`path` only names it in warnings).
    fn decode(bytes: &[u8], path: &Path) -> Decoded<Self::Record>;
}

/// What [`Format::decode`] found in a file.
#[derive(Debug)]
pub struct Decoded<R> {
    /// Every record, in the order written.
    pub records: Vec<R>,
    /// How many bytes to keep: what follows (a torn or damaged tail) is
    /// cut off the file.
    pub keep: usize,
    /// Problems found (each names the file).
    pub warnings: Vec<String>,
}

/// What reopening a journal found.
#[derive(Debug)]
pub struct Replay<R> {
    /// Every record, in the order written.
    pub records: Vec<R>,
    /// Problems found (each names the file and line).
    pub warnings: Vec<String>,
}

impl<R> Default for Replay<R> {
    fn default() -> Self {
        Replay {
            records: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// One JSON value a line: a record reads back as `R` and is written from
/// an `E` (`[T]` for a `Vec<T>`, say). A torn last line (a crash
/// mid-write) and an unreadable last line are dropped; an unreadable line
/// elsewhere is skipped; each with a warning naming the file and line.
pub struct JsonLines<R, E: ?Sized = R> {
    record: PhantomData<fn() -> R>,
    entry: PhantomData<fn(&E)>,
}

impl<R: DeserializeOwned, E: Serialize + ?Sized> Format for JsonLines<R, E> {
    type Record = R;
    type Entry<'a>
        = E
    where
        Self: 'a;

    fn encode(entry: &E) -> io::Result<Vec<u8>> {
        let mut line = serde_json::to_vec(entry).map_err(io::Error::other)?;
        line.push(b'\n');
        Ok(line)
    }

    fn decode(bytes: &[u8], path: &Path) -> Decoded<R> {
        let (mut records, mut warnings) = (Vec::new(), Vec::new());
        let (mut keep, mut start, mut line_no) = (0usize, 0usize, 0usize);
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
            match serde_json::from_slice::<R>(line) {
                Ok(record) => records.push(record),
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
            keep = start;
        }
        Decoded {
            records,
            keep,
            warnings,
        }
    }
}

/// One open journal file in format `F`.
pub struct Journal<F: Format> {
    file: File,
    path: PathBuf,
    /// Length of the whole records written so far.
    len: u64,
    format: PhantomData<fn() -> F>,
}

impl<F: Format> fmt::Debug for Journal<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Journal")
            .field("path", &self.path)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl<F: Format> Journal<F> {
    /// Opens (or creates) the journal at `path` and reads it back.
    pub fn open(path: &Path) -> io::Result<(Self, Replay<F::Record>)> {
        let (dir, name) = open_parent(path)?;
        Self::open_in(dir.as_fd(), &name, path)
    }

    /// Opens (or creates) the journal `name` in the open folder `dir` and
    /// reads it back; `path` is where that is, for messages.
    pub fn open_in(
        dir: BorrowedFd<'_>,
        name: &str,
        path: &Path,
    ) -> io::Result<(Self, Replay<F::Record>)> {
        let flags =
            OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NOCTTY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o600)).map_err(|e| {
            match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                // A link (ELOOP) or a folder (EISDIR): say what is there.
                Ok(st) if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile => {
                    not_regular(path, FileType::from_raw_mode(st.st_mode))
                }
                _ => e.into(),
            }
        })?;
        let kind = FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode);
        if kind != FileType::RegularFile {
            return Err(not_regular(path, kind));
        }
        let file = File::from(fd);
        let mut bytes = Vec::new();
        (&file).read_to_end(&mut bytes)?;
        let Decoded {
            records,
            keep,
            warnings,
        } = F::decode(&bytes, path);
        if keep < bytes.len() {
            file.set_len(keep as u64)?;
            file.sync_all()?;
        }
        let journal = Journal {
            file,
            path: path.to_path_buf(),
            len: keep as u64,
            format: PhantomData,
        };
        Ok((journal, Replay { records, warnings }))
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Length of the records written so far, in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether it holds no record.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `entry` and syncs it: once this returns, it survives a
    /// crash. Returns where it starts, for [`Journal::cut`]. A failed
    /// write leaves nothing of it behind.
    pub fn append(&mut self, entry: &F::Entry<'_>) -> io::Result<u64> {
        let bytes = F::encode(entry)?;
        let at = self.len;
        let written = self
            .file
            .write_all_at(&bytes, at)
            .and_then(|()| self.file.sync_data());
        if let Err(e) = written {
            let _ = self.file.set_len(at);
            return Err(e);
        }
        self.len = at + bytes.len() as u64;
        Ok(at)
    }

    /// Takes back everything from `at` on (not synced: what is cut was
    /// either never acknowledged or is no longer needed).
    pub fn cut(&mut self, at: u64) -> io::Result<()> {
        self.file.set_len(at)?;
        self.len = at;
        Ok(())
    }

    /// Empties it durably: nothing in it is replayed any more.
    pub fn clear(&mut self) -> io::Result<()> {
        self.cut(0)?;
        self.file.sync_data()
    }
}

impl<F: Format> AsFd for Journal<F> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }
}

/// The error for something other than a regular file at `path`.
fn not_regular(path: &Path, kind: FileType) -> io::Error {
    ReadError::NotRegular {
        path: path.to_path_buf(),
        kind: kind_name(kind),
    }
    .into_io()
}

#[cfg(test)]
mod tests {
    use super::*;

    type Lines = Journal<JsonLines<u32>>;

    fn open(path: &Path) -> (Lines, Replay<u32>) {
        Lines::open(path).unwrap()
    }

    #[test]
    fn appends_replay_in_order_and_the_file_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let (mut j, replay) = open(&path);
        assert!(replay.records.is_empty() && replay.warnings.is_empty());
        assert!(j.is_empty());
        assert_eq!(j.append(&1).unwrap(), 0);
        assert_eq!(j.append(&22).unwrap(), 2);
        assert_eq!(j.len(), 5);
        drop(j);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "1\n22\n");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let (mut j, replay) = open(&path);
        assert_eq!(replay.records, vec![1, 22]);
        assert_eq!(j.len(), 5, "appends go after what is there");
        j.append(&3).unwrap();
        assert_eq!(open(&path).1.records, vec![1, 22, 3]);
    }

    #[test]
    fn a_torn_tail_is_cut_off_and_a_bad_line_skipped_with_warnings() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        std::fs::write(&path, "1\nnope\n2\n3").unwrap();
        let (mut j, replay) = open(&path);
        assert_eq!(replay.records, vec![1, 2]);
        assert_eq!(replay.warnings.len(), 2, "{:?}", replay.warnings);
        assert!(replay.warnings[0].contains("j.jsonl:2: skipped an unreadable line"));
        assert!(replay.warnings[1].contains("j.jsonl:4: dropped a torn last line"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "1\nnope\n2\n");
        // The next record starts on a line of its own.
        j.append(&4).unwrap();
        let again = open(&path).1;
        assert_eq!(again.records, vec![1, 2, 4]);
        assert_eq!(again.warnings.len(), 1);

        // An unreadable last line (whole, but not a record) is dropped too.
        std::fs::write(&path, "1\n{\n").unwrap();
        let replay = open(&path).1;
        assert_eq!(replay.records, vec![1]);
        assert!(replay.warnings[0].contains(":2: dropped an unreadable last line"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "1\n");
    }

    #[test]
    fn cut_and_clear_take_records_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let (mut j, _) = open(&path);
        j.append(&1).unwrap();
        let at = j.append(&2).unwrap();
        j.cut(at).unwrap();
        j.append(&3).unwrap();
        assert_eq!(open(&path).1.records, vec![1, 3]);
        j.clear().unwrap();
        assert!(j.is_empty());
        assert!(open(&path).1.records.is_empty());
    }

    #[test]
    fn a_link_or_special_file_in_its_place_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "7\n").unwrap();
        let link = dir.path().join("j.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = Lines::open(&link).unwrap_err().to_string();
        assert!(e.contains("j.jsonl") && e.contains("a link"), "{e}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "7\n");
        // A dangling link is not followed to create its target either.
        let dangling = dir.path().join("d.jsonl");
        std::os::unix::fs::symlink(dir.path().join("missing"), &dangling).unwrap();
        assert!(Lines::open(&dangling).is_err());
        assert!(!dir.path().join("missing").exists());

        let socket = dir.path().join("s.jsonl");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let e = Lines::open(&socket).unwrap_err().to_string();
        assert!(e.contains("s.jsonl") && e.contains("a socket"), "{e}");
        let fifo = dir.path().join("f.jsonl");
        let (cwd, mode) = (rustix::fs::CWD, Mode::from_raw_mode(0o600));
        rustix::fs::mknodat(cwd, &fifo, FileType::Fifo, mode, 0).unwrap();
        let e = Lines::open(&fifo).unwrap_err().to_string();
        assert!(e.contains("f.jsonl") && e.contains("a FIFO"), "{e}");
        let folder = dir.path().join("sub.jsonl");
        std::fs::create_dir(&folder).unwrap();
        let e = Lines::open(&folder).unwrap_err().to_string();
        assert!(e.contains("a folder"), "{e}");
    }
}
