//! Document storage: a folder on disk or a map in memory, behind the same
//! path rules ([`super::paths`]).
//!
//! The folder on disk is shared with awtui's own files (the channel, cursors,
//! tokens), so documents must reach nothing but documents, even when an
//! agent or a program put links there. [`FileDocs`] holds the folder open
//! and resolves every path one component at a time from that handle
//! (`openat` with `O_NOFOLLOW`): a link anywhere on the way is refused, a
//! file with more than one hard link is refused, special files (FIFOs,
//! devices) are refused without blocking, and a write creates its temp file
//! and renames it inside the folder handle it resolved, so swapping a folder
//! for a link meanwhile cannot move the write elsewhere.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::doc_journal::DocJournal;
use super::{ContextError, Result, paths};
use crate::fsutil::{self, Capped};

/// Largest document awtui reads or writes (the size of one MCP request
/// body, so an agent can always read back what it wrote).
pub const MAX_DOCUMENT_BYTES: u64 = super::MAX_BODY as u64;

/// How deep [`FileDocs`] lists folders; deeper ones are left out.
const MAX_LIST_DEPTH: usize = 32;
/// Folder entries a listing looks at, at most: a folder an agent filled
/// with build output costs a bounded walk (under the store's lock), not
/// one that grows with it.
pub const MAX_LIST_ENTRIES: usize = 20_000;

/// Documents kept in memory (the memory provider).
#[derive(Debug, Default)]
pub struct MemoryDocs {
    entry: String,
    own_files: Vec<String>,
    files: BTreeMap<String, String>,
}

/// A document folder held open: every path is resolved from its handle,
/// one component at a time, never through a link (see the module doc).
/// [`FileDocs`] reads and writes through one; the document watcher reads
/// through its own copy ([`DocFolder::try_clone`]), so looking at files
/// never needs the store's lock.
#[derive(Debug)]
pub struct DocFolder {
    root: OwnedFd,
    root_path: PathBuf,
    own_files: Vec<String>,
}

/// What a document on disk is at one moment: which file and its size and
/// change times. A write through the engine (a new file renamed into
/// place) or by an editor changes it; reading does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DocStamp {
    dev: u64,
    ino: u64,
    size: i64,
    mtime: (i64, u64),
    ctime: (i64, u64),
}

impl DocStamp {
    // The field types differ between targets; the casts only widen.
    #[allow(clippy::unnecessary_cast)]
    fn of(stat: &rustix::fs::Stat) -> Self {
        DocStamp {
            dev: stat.st_dev as u64,
            ino: stat.st_ino as u64,
            size: stat.st_size as i64,
            mtime: (stat.st_mtime as i64, stat.st_mtime_nsec as u64),
            ctime: (stat.st_ctime as i64, stat.st_ctime_nsec as u64),
        }
    }
}

/// How much of a folder a bounded listing ([`DocFolder::stamps`]) saw.
#[derive(Debug, Default)]
pub struct Stamps {
    /// The documents found, with their stamps, in the order met.
    pub found: Vec<(String, DocStamp)>,
    /// Whether the listing stopped at its bound before the end.
    pub truncated: bool,
}

/// Documents kept as files in the instance folder (the file provider),
/// reached only through the folder handle opened at start (see the module
/// doc). Writes are made durable through the document journal
/// ([`super::doc_journal`]): one `fdatasync` per write.
#[derive(Debug)]
pub struct FileDocs {
    folder: DocFolder,
    entry: String,
    journal: DocJournal,
}

/// The operations both document stores offer, used by the context stores.
pub trait Docs {
    /// The entry document's relative path.
    fn entry(&self) -> &str;
    /// Names the document store must not touch.
    fn own_files(&self) -> &[String];
    /// Reads a validated path; `None` when it does not exist.
    fn get(&self, path: &str) -> Result<Option<String>>;
    /// Writes a validated path, creating folders.
    fn put(&mut self, path: &str, content: &str) -> Result<()>;
    /// Removes a validated, existing path.
    fn remove(&mut self, path: &str) -> Result<()>;
    /// All documents, sorted.
    fn list(&self) -> Result<Vec<String>>;
    /// The folder on disk the documents are in, if any.
    fn folder(&self) -> Option<&DocFolder> {
        None
    }

    /// Validates `file` (the entry point when `None`).
    fn resolve(&self, file: Option<&str>) -> Result<String> {
        match file {
            None => Ok(self.entry().to_string()),
            Some(f) => {
                let own: Vec<&str> = self.own_files().iter().map(String::as_str).collect();
                paths::validate(f, &own)
            }
        }
    }

    /// Reads a document; the entry point reads as empty when missing.
    fn read(&self, file: Option<&str>) -> Result<String> {
        let path = self.resolve(file)?;
        match self.get(&path)? {
            Some(text) => Ok(text),
            None if path == self.entry() => Ok(String::new()),
            None => Err(ContextError::DocumentNotFound { path }),
        }
    }

    /// Replaces a document.
    fn write(&mut self, file: Option<&str>, content: &str) -> Result<()> {
        let path = self.resolve(file)?;
        self.put(&path, content)
    }

    /// Appends to a document.
    fn append(&mut self, file: Option<&str>, content: &str) -> Result<()> {
        let path = self.resolve(file)?;
        let mut text = self.get(&path)?.unwrap_or_default();
        text.push_str(content);
        self.put(&path, &text)
    }

    /// Creates a document that must not exist yet.
    fn create(&mut self, file: &str, content: &str) -> Result<()> {
        let path = self.resolve(Some(file))?;
        if self.get(&path)?.is_some() {
            return Err(ContextError::DocumentExists { path });
        }
        self.put(&path, content)
    }

    /// Deletes an existing document.
    fn delete(&mut self, file: &str) -> Result<()> {
        let path = self.resolve(Some(file))?;
        if self.get(&path)?.is_none() {
            return Err(ContextError::DocumentNotFound { path });
        }
        self.remove(&path)
    }

    /// Creates each listed document empty unless it exists.
    fn ensure(&mut self, files: &[String]) -> Result<()> {
        for f in files {
            let path = self.resolve(Some(f))?;
            if self.get(&path)?.is_none() {
                self.put(&path, "")?;
            }
        }
        Ok(())
    }
}

impl MemoryDocs {
    /// An empty set of documents with this entry point.
    pub fn new(entry: &str, own_files: Vec<String>) -> Self {
        MemoryDocs {
            entry: entry.to_string(),
            own_files,
            files: BTreeMap::new(),
        }
    }
}

impl Docs for MemoryDocs {
    fn entry(&self) -> &str {
        &self.entry
    }
    fn own_files(&self) -> &[String] {
        &self.own_files
    }
    fn get(&self, path: &str) -> Result<Option<String>> {
        if self
            .files
            .keys()
            .any(|k| k.starts_with(&format!("{path}/")))
        {
            return Err(is_folder(path));
        }
        Ok(self.files.get(path).cloned())
    }
    fn put(&mut self, path: &str, content: &str) -> Result<()> {
        check_size(path, content)?;
        // A file and a folder cannot share a name, as on disk.
        let blocked = self
            .files
            .keys()
            .any(|k| k.starts_with(&format!("{path}/")))
            || ancestors(path).any(|a| self.files.contains_key(a));
        if blocked {
            return Err(ContextError::PathRefused {
                path: path.into(),
                reason: "a document and a folder would share this name".into(),
            });
        }
        self.files.insert(path.to_string(), content.to_string());
        Ok(())
    }
    fn remove(&mut self, path: &str) -> Result<()> {
        self.files.remove(path);
        Ok(())
    }
    fn list(&self) -> Result<Vec<String>> {
        Ok(self.files.keys().cloned().collect())
    }
}

fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(move |(i, _)| &path[..i])
}

fn refused(path: &str, reason: impl Into<String>) -> ContextError {
    ContextError::PathRefused {
        path: path.into(),
        reason: reason.into(),
    }
}

fn is_folder(path: &str) -> ContextError {
    refused(path, "this is a folder, not a document")
}

fn too_large(path: &str) -> ContextError {
    ContextError::TooLarge {
        path: path.into(),
        limit: fsutil::human_size(MAX_DOCUMENT_BYTES),
    }
}

/// Refuses content no one could read back.
fn check_size(path: &str, content: &str) -> Result<()> {
    if content.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(too_large(path));
    }
    Ok(())
}

/// Flags for stepping into a folder: never through a link.
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// The folders of a resolved path, each opened from the one before.
struct Resolved<'a> {
    /// `(folder handle, name inside its parent)` from the root down; the
    /// last is where the final component lives (empty: the root).
    dirs: Vec<(OwnedFd, &'a str)>,
    /// The final component.
    name: &'a str,
}

impl Resolved<'_> {
    fn dir<'f>(&'f self, root: &'f OwnedFd) -> BorrowedFd<'f> {
        self.dirs.last().map_or(root.as_fd(), |(fd, _)| fd.as_fd())
    }
}

/// What a name inside a folder is, without following it.
fn kind_at(dir: BorrowedFd<'_>, name: &str) -> io::Result<Option<rustix::fs::Stat>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => Ok(Some(stat)),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn file_type(stat: &rustix::fs::Stat) -> FileType {
    FileType::from_raw_mode(stat.st_mode)
}

/// Whether what a `stat` describes can be a document: a regular file with
/// no other hard links.
fn is_document(stat: &rustix::fs::Stat) -> bool {
    file_type(stat) == FileType::RegularFile && stat.st_nlink == 1
}

impl FileDocs {
    /// Documents in `root`, which must exist; the folder is opened once
    /// (following a link there: the user configured it) and every later
    /// operation starts from that handle.
    pub fn new(root: &Path, entry: &str, own_files: Vec<String>) -> Result<Self> {
        let folder = DocFolder::open(root, own_files)?;
        let (journal, records) =
            DocJournal::open(folder.root.as_fd(), root).map_err(|source| ContextError::Io {
                path: root.join(super::doc_journal::JOURNAL_FILE),
                source,
            })?;
        let docs = FileDocs {
            folder,
            entry: entry.to_string(),
            journal,
        };
        docs.replay(records)?;
        Ok(docs)
    }

    /// Applies again, durably, the writes a crash may have left only in the
    /// journal (the newest per document), then empties it.
    fn replay(&self, records: Vec<super::doc_journal::Record>) -> Result<()> {
        if records.is_empty() {
            return self.confirm_replay();
        }
        let mut newest: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        for r in records {
            newest.insert(r.path, r.content);
        }
        let folder = &self.folder;
        let own: Vec<&str> = folder.own_files.iter().map(String::as_str).collect();
        for (rel, content) in newest {
            // Validated when logged; checked again, a record is only data.
            if paths::validate(&rel, &own).ok().as_deref() != Some(rel.as_str()) {
                tracing::warn!(
                    "{}: skipped a record for '{rel}'",
                    self.journal.path().display()
                );
                continue;
            }
            let resolved = folder
                .resolve_dirs(&rel, true)?
                .ok_or_else(|| folder.io(&rel, Errno::NOENT))?;
            let dir = resolved.dir(&folder.root);
            folder.check_target(&rel, dir, resolved.name)?;
            fsutil::replace_at(dir, resolved.name, &content, false)
                .map_err(|e| folder.io(&rel, e))?;
            tracing::info!("restored document '{rel}' from the document journal");
        }
        self.confirm_replay()
    }

    fn confirm_replay(&self) -> Result<()> {
        self.journal
            .checkpoint()
            .map_err(|source| ContextError::Io {
                path: self.journal.path().to_path_buf(),
                source,
            })
    }
}

impl DocFolder {
    /// Opens the folder `root` (following a link there: the user
    /// configured it); `own_files` are names that are never documents.
    pub fn open(root: &Path, own_files: Vec<String>) -> Result<Self> {
        let fd = rustix::fs::open(
            root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| ContextError::Io {
            path: root.to_path_buf(),
            source: e.into(),
        })?;
        Ok(DocFolder {
            root: fd,
            root_path: root.to_path_buf(),
            own_files,
        })
    }

    /// Another handle on the same folder (the same open directory, not the
    /// path opened again).
    pub fn try_clone(&self) -> io::Result<DocFolder> {
        Ok(DocFolder {
            root: rustix::io::fcntl_dupfd_cloexec(&self.root, 0)?,
            root_path: self.root_path.clone(),
            own_files: self.own_files.clone(),
        })
    }

    /// The path the folder was opened at.
    pub fn path(&self) -> &Path {
        &self.root_path
    }

    /// Names that are never documents (besides [`paths::RESERVED_FILES`]).
    pub fn own_files(&self) -> &[String] {
        &self.own_files
    }

    /// The stamp of document `rel`; `None` when nothing, or something that
    /// is not a document (a folder, a link, a special file, a file with
    /// other hard links), is there.
    pub fn stamp(&self, rel: &str) -> Result<Option<DocStamp>> {
        if !paths::may_be_document(rel, &self.own_files) {
            return Ok(None);
        }
        let resolved = match self.resolve_dirs(rel, false) {
            Ok(Some(r)) => r,
            Ok(None) | Err(ContextError::PathRefused { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let dir = resolved.dir(&self.root);
        match kind_at(dir, resolved.name).map_err(|e| self.io(rel, e))? {
            Some(stat) if is_document(&stat) => Ok(Some(DocStamp::of(&stat))),
            _ => Ok(None),
        }
    }

    /// The documents, with their stamps, looking at no more than `entries`
    /// folder entries: the bounded listing for watching a folder anyone
    /// may fill with files.
    pub fn stamps(&self, entries: usize) -> Result<Stamps> {
        let mut out = Stamps::default();
        let mut budget = entries;
        self.walk(self.root.as_fd(), "", 0, &mut budget, &mut |rel, stat| {
            out.found.push((rel, DocStamp::of(stat)));
        })?;
        out.truncated = budget == 0;
        Ok(out)
    }

    /// Reads document `rel` (validated); `None` when it does not exist.
    fn get(&self, rel: &str) -> Result<Option<String>> {
        let Some(resolved) = self.resolve_dirs(rel, false)? else {
            return Ok(None);
        };
        let dir = resolved.dir(&self.root);
        let flags = fsutil::READ_FLAGS | OFlags::NOFOLLOW;
        let fd = match rustix::fs::openat(dir, resolved.name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => {
                self.check_target(rel, dir, resolved.name)?;
                return Err(self.io(rel, e));
            }
        };
        let stat = rustix::fs::fstat(&fd).map_err(|e| self.io(rel, e))?;
        if file_type(&stat) == FileType::Directory {
            return Err(is_folder(rel));
        }
        if stat.st_nlink > 1 {
            return Err(refused(
                rel,
                "it has other hard links, so it may be a file outside the document folder",
            ));
        }
        match fsutil::read_open_capped(fd, MAX_DOCUMENT_BYTES).map_err(|e| self.io(rel, e))? {
            Capped::Bytes(bytes) => String::from_utf8(bytes)
                .map(Some)
                .map_err(|_| ContextError::NotText { path: rel.into() }),
            Capped::NotRegular(kind) => Err(refused(rel, format!("it is {kind}, not a document"))),
            Capped::TooLarge => Err(too_large(rel)),
        }
    }

    /// Every document, sorted.
    fn list(&self) -> Result<Vec<String>> {
        let mut out = Vec::new();
        let mut budget = MAX_LIST_ENTRIES;
        self.walk(self.root.as_fd(), "", 0, &mut budget, &mut |rel, _| {
            out.push(rel)
        })?;
        out.sort();
        Ok(out)
    }

    fn io(&self, rel: &str, source: impl Into<io::Error>) -> ContextError {
        ContextError::Io {
            path: self.root_path.join(rel),
            source: source.into(),
        }
    }

    /// Why stepping into folder `prefix` of `rel` failed with `e`. A link
    /// (`ELOOP`, or `ENOTDIR` for what is not a folder) and a folder that
    /// vanished after it was made are refusals, whatever is there by the
    /// time this looks again, so a racing swap never surfaces as an I/O
    /// error.
    fn step_error(
        &self,
        rel: &str,
        prefix: &str,
        dir: BorrowedFd<'_>,
        name: &str,
        e: Errno,
    ) -> ContextError {
        let link = || {
            refused(
                rel,
                format!("'{prefix}' is a link, and links are not followed in the document folder"),
            )
        };
        match e {
            Errno::LOOP => link(),
            Errno::NOTDIR => match kind_at(dir, name) {
                Ok(Some(stat)) if file_type(&stat) == FileType::RegularFile => {
                    refused(rel, format!("'{prefix}' is a document, not a folder"))
                }
                Ok(Some(stat)) if file_type(&stat) == FileType::Directory => refused(
                    rel,
                    format!("'{prefix}' was replaced while it was opened; try again"),
                ),
                Ok(Some(stat)) if file_type(&stat) != FileType::Symlink => refused(
                    rel,
                    format!(
                        "'{prefix}' is {}, not a folder",
                        fsutil::kind_name(file_type(&stat))
                    ),
                ),
                _ => link(),
            },
            Errno::NOENT => refused(
                rel,
                format!("'{prefix}' was moved while it was opened; try again"),
            ),
            e => self.io(rel, e),
        }
    }

    /// Opens the folders of validated `rel` one by one from the root, never
    /// through a link. `None` when one is missing and `create` is false;
    /// with `create`, missing folders are made (`mkdirat`).
    fn resolve_dirs<'a>(&self, rel: &'a str, create: bool) -> Result<Option<Resolved<'a>>> {
        let mut parts: Vec<&'a str> = rel.split('/').collect();
        let name = parts.pop().unwrap_or_default();
        let mut dirs: Vec<(OwnedFd, &'a str)> = Vec::with_capacity(parts.len());
        let mut consumed = 0;
        for part in parts {
            consumed += part.len() + 1;
            let prefix = &rel[..consumed - 1];
            let parent = dirs.last().map_or(self.root.as_fd(), |(fd, _)| fd.as_fd());
            let opened = match rustix::fs::openat(parent, part, DIR_FLAGS, Mode::empty()) {
                Err(Errno::NOENT) if create => {
                    match rustix::fs::mkdirat(parent, part, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(self.io(prefix, e)),
                    }
                    rustix::fs::openat(parent, part, DIR_FLAGS, Mode::empty())
                }
                other => other,
            };
            match opened {
                Ok(fd) => dirs.push((fd, part)),
                Err(Errno::NOENT) if !create => return Ok(None),
                Err(Errno::NOTDIR)
                    if !create
                        && kind_at(parent, part)
                            .ok()
                            .flatten()
                            .is_some_and(|s| file_type(&s) == FileType::RegularFile) =>
                {
                    // A document where a folder was named: nothing below it.
                    return Ok(None);
                }
                Err(e) => return Err(self.step_error(rel, prefix, parent, part, e)),
            }
        }
        Ok(Some(Resolved { dirs, name }))
    }

    /// Checks what sits at the final component before it is read, replaced
    /// or removed: a plain document (one link, a regular file) or nothing.
    fn check_target(&self, rel: &str, dir: BorrowedFd<'_>, name: &str) -> Result<bool> {
        let Some(stat) = kind_at(dir, name).map_err(|e| self.io(rel, e))? else {
            return Ok(false);
        };
        match file_type(&stat) {
            FileType::RegularFile if stat.st_nlink > 1 => Err(refused(
                rel,
                "it has other hard links, so it may be a file outside the document folder",
            )),
            FileType::RegularFile => Ok(true),
            FileType::Directory => Err(is_folder(rel)),
            FileType::Symlink => Err(refused(
                rel,
                "it is a link, and links are not followed in the document folder",
            )),
            other => Err(refused(
                rel,
                format!("it is {}, not a document", fsutil::kind_name(other)),
            )),
        }
    }

    /// Calls `visit` with each document under `dir` (at `prefix`), looking
    /// at no more than `budget` entries (what is left is written back).
    fn walk(
        &self,
        dir: BorrowedFd<'_>,
        prefix: &str,
        depth: usize,
        budget: &mut usize,
        visit: &mut dyn FnMut(String, &rustix::fs::Stat),
    ) -> Result<()> {
        let entries = rustix::fs::Dir::read_from(dir).map_err(|e| self.io(prefix, e))?;
        let own: Vec<&str> = self.own_files.iter().map(String::as_str).collect();
        for entry in entries {
            if *budget == 0 {
                return Ok(());
            }
            *budget -= 1;
            let entry = entry.map_err(|e| self.io(prefix, e))?;
            let Ok(name) = entry.file_name().to_str() else {
                continue;
            };
            if name == "." || name == ".." {
                continue;
            }
            let rel = if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}/{name}")
            };
            if paths::validate(&rel, &own).is_err() {
                continue;
            }
            let Ok(Some(stat)) = kind_at(dir, name) else {
                continue;
            };
            match file_type(&stat) {
                FileType::Directory if depth < MAX_LIST_DEPTH => {
                    // Opened without following: a folder swapped for a link
                    // since it was listed is skipped.
                    if let Ok(sub) = rustix::fs::openat(dir, name, DIR_FLAGS, Mode::empty()) {
                        self.walk(sub.as_fd(), &rel, depth + 1, budget, visit)?;
                    }
                }
                _ if is_document(&stat) => visit(rel, &stat),
                _ => {}
            }
        }
        Ok(())
    }
}

impl Docs for FileDocs {
    fn entry(&self) -> &str {
        &self.entry
    }
    fn own_files(&self) -> &[String] {
        &self.folder.own_files
    }
    fn get(&self, rel: &str) -> Result<Option<String>> {
        self.folder.get(rel)
    }
    fn put(&mut self, rel: &str, content: &str) -> Result<()> {
        check_size(rel, content)?;
        let folder = &self.folder;
        let resolved = folder
            .resolve_dirs(rel, true)?
            .ok_or_else(|| folder.io(rel, Errno::NOENT))?;
        let dir = resolved.dir(&folder.root);
        folder.check_target(rel, dir, resolved.name)?;
        let journal_error = |source| ContextError::Io {
            path: self.journal.path().to_path_buf(),
            source,
        };
        // Durable once logged; the document itself is synced behind.
        let at = self
            .journal
            .log(rel, content.as_bytes())
            .map_err(journal_error)?;
        let written = fsutil::replace_at_unsynced(dir, resolved.name, content.as_bytes())
            .and_then(|file| Ok((file, rustix::io::fcntl_dupfd_cloexec(dir, 0)?)));
        match written {
            Ok((file, dir)) => {
                self.journal.settle(file, dir, resolved.name);
                Ok(())
            }
            Err(e) => {
                self.journal.cut(at);
                Err(if e.kind() == io::ErrorKind::NotFound {
                    // The folder resolved was deleted meanwhile (the write
                    // went nowhere, and never elsewhere).
                    refused(
                        rel,
                        "its folder was removed while it was written; try again",
                    )
                } else {
                    folder.io(rel, e)
                })
            }
        }
    }
    fn remove(&mut self, rel: &str) -> Result<()> {
        let folder = &self.folder;
        let Some(resolved) = folder.resolve_dirs(rel, false)? else {
            return Err(ContextError::DocumentNotFound { path: rel.into() });
        };
        let dir = resolved.dir(&folder.root);
        if !folder.check_target(rel, dir, resolved.name)? {
            return Err(ContextError::DocumentNotFound { path: rel.into() });
        }
        // Nothing journaled may bring it back after a crash.
        self.confirm_replay()?;
        rustix::fs::unlinkat(dir, resolved.name, AtFlags::empty())
            .map_err(|e| folder.io(rel, e))?;
        // Drop folders the deletion left empty, up to the root.
        let mut dirs = resolved.dirs;
        while let Some((_, name)) = dirs.pop() {
            let parent = dirs
                .last()
                .map_or(folder.root.as_fd(), |(fd, _)| fd.as_fd());
            if rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR).is_err() {
                break;
            }
        }
        Ok(())
    }
    fn list(&self) -> Result<Vec<String>> {
        self.folder.list()
    }
    fn folder(&self) -> Option<&DocFolder> {
        Some(&self.folder)
    }
}
