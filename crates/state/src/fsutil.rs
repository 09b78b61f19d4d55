//! File-system helpers shared by every part of awtui, so each rule lives in
//! one place:
//!
//! - **Reading on someone's behalf** ([`read_regular_capped`],
//!   [`read_text_capped`]): the file is opened without blocking
//!   (`O_NONBLOCK|O_NOCTTY`, so a FIFO or a terminal cannot hang the read),
//!   must be a regular file (not `/dev/zero`, a FIFO or a socket) and may be
//!   at most a given size; at most `cap + 1` bytes are ever read, so a file
//!   that grows meanwhile is caught too.
//! - **Durable writes** ([`atomic_write`], [`write_private_file`],
//!   [`replace_at`]): a hidden temp file created in the target's folder,
//!   fsynced, renamed over the target, then the folder fsynced. A reader
//!   never sees half a file, and a link at the target is replaced, never
//!   followed.
//! - **Private folders** ([`private_dir`], [`create_dir_if_missing`],
//!   [`private_location`]): awtui creates the folders it makes with mode
//!   0700 and never changes the mode of a folder that already exists. When
//!   an existing folder is writable by others (or not the user's), private
//!   files go into its [`PRIVATE_SUBDIR`] instead.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// One kibibyte, for size limits.
pub const KIB: u64 = 1024;
/// One mebibyte, for size limits.
pub const MIB: u64 = 1024 * KIB;
/// Largest workflow file awtui reads.
pub const MAX_WORKFLOW_BYTES: u64 = MIB;
/// Largest system prompt file a workflow (or `awtui new --system`) names.
pub const MAX_PROMPT_BYTES: u64 = MIB;
/// Largest `config.toml`.
pub const MAX_CONFIG_BYTES: u64 = 256 * KIB;

/// The subfolder that holds awtui's private files when the folder it was
/// given is writable by others. Hidden, so it is never a document.
pub const PRIVATE_SUBDIR: &str = ".awtui-private";

/// Why a file could not be read; every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Opening or reading failed.
    #[error("cannot read {}: {}", path.display(), self.reason())]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
    /// A device, FIFO, socket or folder.
    #[error("cannot read {}: {}", path.display(), self.reason())]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What it is instead, such as "a character device".
        kind: &'static str,
    },
    /// Larger than the limit for this kind of file.
    #[error("cannot read {}: {}", path.display(), self.reason())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit in bytes.
        limit: u64,
    },
    /// Not UTF-8 where text was expected.
    #[error("cannot read {}: {}", path.display(), self.reason())]
    NotText {
        /// The file.
        path: PathBuf,
    },
}

impl ReadError {
    /// Whether the file does not exist (callers that treat a missing file
    /// as "use the defaults" need to tell).
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }

    /// What is wrong, without the file name (for messages that already
    /// name it in their own words).
    pub fn reason(&self) -> String {
        match self {
            ReadError::Io { source, .. } => source.to_string(),
            ReadError::NotRegular { kind, .. } => format!("it is {kind}, not a regular file"),
            ReadError::TooLarge { limit, .. } => {
                format!("it is larger than the {} limit", human_size(*limit))
            }
            ReadError::NotText { .. } => "it is not UTF-8 text".to_string(),
        }
    }
}

/// Why a private folder could not be made or used.
#[derive(Debug, thiserror::Error)]
pub enum PrivateDirError {
    /// Creating or inspecting the folder failed.
    #[error("cannot create {}: {source}", path.display())]
    Io {
        /// The folder.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
    /// The private subfolder exists but others can use it, or it is a link.
    #[error(
        "{} is not private to you ({reason}); remove it and awtui makes a new one",
        path.display()
    )]
    NotPrivate {
        /// The folder.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// `1048576` → `1 MiB`, `262144` → `256 KiB`: limits as people write them.
pub fn human_size(bytes: u64) -> String {
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// What a file of this mode is, for error messages.
pub fn kind_name(file_type: FileType) -> &'static str {
    match file_type {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a folder",
        FileType::Symlink => "a link",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        _ => "a special file",
    }
}

/// Flags for opening a file to read on someone's behalf: never blocks (a
/// FIFO without a writer opens at once), never becomes our terminal.
pub const READ_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

/// What a bounded read of an open file found.
#[derive(Debug)]
pub enum Capped {
    /// The whole content (at most the cap).
    Bytes(Vec<u8>),
    /// Not a regular file; what it is instead.
    NotRegular(&'static str),
    /// Larger than the cap (by its size or by what could be read).
    TooLarge,
}

/// Reads an open file if it is a regular file of at most `cap` bytes,
/// reading at most `cap + 1` bytes whatever its size claims.
pub fn read_open_capped(fd: OwnedFd, cap: u64) -> io::Result<Capped> {
    let stat = rustix::fs::fstat(&fd)?;
    let file_type = FileType::from_raw_mode(stat.st_mode);
    if file_type != FileType::RegularFile {
        return Ok(Capped::NotRegular(kind_name(file_type)));
    }
    if u64::try_from(stat.st_size).unwrap_or(u64::MAX) > cap {
        return Ok(Capped::TooLarge);
    }
    let mut bytes = Vec::new();
    File::from(fd).take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Ok(Capped::TooLarge);
    }
    Ok(Capped::Bytes(bytes))
}

/// Reads `path` (links followed: the user named it) if it is a regular
/// file of at most `cap` bytes, without ever blocking on a special file.
pub fn read_regular_capped(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let io_err = |source: io::Error| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let fd = rustix::fs::open(path, READ_FLAGS, Mode::empty()).map_err(|e| io_err(e.into()))?;
    match read_open_capped(fd, cap).map_err(io_err)? {
        Capped::Bytes(bytes) => Ok(bytes),
        Capped::NotRegular(kind) => Err(ReadError::NotRegular {
            path: path.to_path_buf(),
            kind,
        }),
        Capped::TooLarge => Err(ReadError::TooLarge {
            path: path.to_path_buf(),
            limit: cap,
        }),
    }
}

/// [`read_regular_capped`] for text files.
pub fn read_text_capped(path: &Path, cap: u64) -> Result<String, ReadError> {
    String::from_utf8(read_regular_capped(path, cap)?).map_err(|_| ReadError::NotText {
        path: path.to_path_buf(),
    })
}

/// Largest record awtui keeps about itself and reads back (registry
/// entries, endpoints, tokens, pids, session ids, saved state): far above
/// any real one, far below what a link to `/dev/zero` would cost.
pub const MAX_RECORD_BYTES: u64 = 4 * MIB;

/// Reads one of awtui's own records with [`read_regular_capped`] under
/// [`MAX_RECORD_BYTES`], as an `io::Result` so callers keep treating
/// `NotFound` as "none"; any other error names the file and what is wrong.
pub fn read_record(path: &Path) -> io::Result<Vec<u8>> {
    read_regular_capped(path, MAX_RECORD_BYTES).map_err(ReadError::into_io)
}

/// [`read_record`] for text records.
pub fn read_record_text(path: &Path) -> io::Result<String> {
    read_text_capped(path, MAX_RECORD_BYTES).map_err(ReadError::into_io)
}

/// The last `max` bytes of a regular file from `offset` on (a log, an
/// agent's output), never blocking on a special file: what a tail shows
/// without reading a file that keeps growing, or `/dev/zero`, whole.
pub fn read_tail(path: &Path, offset: u64, max: u64) -> io::Result<Vec<u8>> {
    use std::io::{Seek, SeekFrom};
    let fd = rustix::fs::open(path, READ_FLAGS, Mode::empty())?;
    let stat = rustix::fs::fstat(&fd)?;
    let file_type = FileType::from_raw_mode(stat.st_mode);
    if file_type != FileType::RegularFile {
        return Err(ReadError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_name(file_type),
        }
        .into_io());
    }
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    let start = offset.max(size.saturating_sub(max));
    let mut file = File::from(fd);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Opens (or creates, 0600) a log of awtui's to append to: never through
/// a link, never blocking on a FIFO put in its place (opening one for
/// writing waits for a reader forever), and only a regular file; anything
/// else is an error naming the file and what it is.
pub fn open_log(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags((OFlags::NOFOLLOW | OFlags::NONBLOCK).bits() as i32)
        .open(path)
        .map_err(|e| {
            // A FIFO without a reader (ENXIO) or a link (ELOOP): say what
            // is there instead of the bare errno.
            match fs::symlink_metadata(path) {
                Ok(m) if !m.is_file() => ReadError::NotRegular {
                    path: path.to_path_buf(),
                    kind: kind_name(FileType::from_raw_mode(m.mode())),
                }
                .into_io(),
                _ => io::Error::new(e.kind(), format!("cannot open {}: {e}", path.display())),
            }
        })?;
    let kind = FileType::from_raw_mode(rustix::fs::fstat(&file)?.st_mode);
    if kind != FileType::RegularFile {
        return Err(ReadError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_name(kind),
        }
        .into_io());
    }
    Ok(file)
}

impl ReadError {
    /// As an `io::Error` of the same kind (`NotFound` stays `NotFound`)
    /// whose message names the file.
    pub fn into_io(self) -> io::Error {
        let kind = match &self {
            ReadError::Io { source, .. } => source.kind(),
            ReadError::NotText { .. } => io::ErrorKind::InvalidData,
            _ => io::ErrorKind::InvalidInput,
        };
        io::Error::new(kind, self.to_string())
    }
}

/// Replaces `name` inside the open folder `dir` with `data`: a hidden temp
/// file is created in `dir` (never through a link), written, fsynced,
/// renamed over `name` within `dir`, then `dir` is fsynced. With `private`,
/// the temp file is made 0600 with `fchmod` before anything is written, so
/// whatever mode an existing file had does not matter.
pub fn replace_at(dir: BorrowedFd<'_>, name: &str, data: &[u8], private: bool) -> io::Result<()> {
    replace_with(dir, name, data, private, true).map(drop)
}

/// Like [`replace_at`] but without any `fsync`: atomic for readers (a
/// rename), durable only once the caller syncs the returned file (the new
/// content) and the folder. For writes made durable otherwise, such as the
/// document journal ([`crate::context::doc_journal`]).
pub fn replace_at_unsynced(dir: BorrowedFd<'_>, name: &str, data: &[u8]) -> io::Result<File> {
    replace_with(dir, name, data, false, false)
}

fn replace_with(
    dir: BorrowedFd<'_>,
    name: &str,
    data: &[u8],
    private: bool,
    sync: bool,
) -> io::Result<File> {
    let tmp = format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mode = if private {
        Mode::from_raw_mode(0o600)
    } else {
        Mode::from_raw_mode(0o666)
    };
    let fd = rustix::fs::openat(dir, tmp.as_str(), flags, mode)?;
    let result = (|| {
        if private {
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o600))?;
        }
        let mut file = File::from(fd);
        file.write_all(data)?;
        if sync {
            file.sync_data()?;
        }
        rustix::fs::renameat(dir, tmp.as_str(), dir, name)?;
        if sync {
            rustix::fs::fsync(dir)?;
        }
        Ok(file)
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(dir, tmp.as_str(), AtFlags::empty());
    }
    result
}

/// Opens the folder of `path` and returns it with the file name.
pub(crate) fn open_parent(path: &Path) -> io::Result<(OwnedFd, String)> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a UTF-8 file name"))?;
    let fd = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    Ok((fd, name.to_string()))
}

/// Writes `data` to `path` durably (see [`replace_at`]); the folder must
/// exist.
pub fn atomic_write(path: &Path, data: &[u8]) -> io::Result<()> {
    let (dir, name) = open_parent(path)?;
    replace_at(dir.as_fd(), &name, data, false)
}

/// Writes a secret: like [`atomic_write`], but the file ends 0600 whatever
/// was there before, and missing folders on the way are created 0700.
pub fn write_private_file(path: &Path, data: &[u8]) -> io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_dir_if_missing(parent)?;
    }
    let (dir, name) = open_parent(path)?;
    replace_at(dir.as_fd(), &name, data, true)
}

/// Writes a secret that is written anew before every use (a turn's config
/// files: the MCP config with the agent's token, settings): atomic and
/// 0600 like [`write_private_file`], but not synced. After a crash it is
/// written again before it is read, so waiting for the disk buys nothing,
/// and ten turns starting while git commits fill the disk's queue would
/// each wait tens of milliseconds on the engine's loop.
pub fn write_private_file_unsynced(path: &Path, data: &[u8]) -> io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_dir_if_missing(parent)?;
    }
    let (dir, name) = open_parent(path)?;
    replace_with(dir.as_fd(), &name, data, true, false).map(drop)
}

/// Makes a rename or create in `dir` durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Creates `path` and any missing parents with mode 0700. A folder that
/// already exists is left exactly as it is.
pub fn create_dir_if_missing(path: &Path) -> io::Result<()> {
    let new_workflow_folder = path
        .ancestors()
        .find(|a| a.file_name() == Some(WORKFLOW_FOLDER.as_ref()))
        .filter(|a| !a.exists())
        .map(Path::to_path_buf);
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)?;
    if let Some(folder) = new_workflow_folder {
        ignore_everything_in(&folder);
    }
    Ok(())
}

/// The folder instances live in by default (`.workflow/<instance>/`).
pub const WORKFLOW_FOLDER: &str = ".workflow";

/// Writes a `.gitignore` of `*` into a `.workflow/` folder awtui just
/// made, so the user's `git status` stays clean; an existing one is kept.
/// A failure is only logged: the instance works without it.
fn ignore_everything_in(folder: &Path) {
    let file = folder.join(".gitignore");
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&file)
        .and_then(|mut f| io::Write::write_all(&mut f, b"*\n"));
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => tracing::warn!("cannot write {}: {e}", file.display()),
    }
}

/// Why a folder is unfit for private files, if it is.
fn unfit_for_private(meta: &fs::Metadata, strict: bool) -> Option<String> {
    let uid = rustix::process::geteuid().as_raw();
    let mode = meta.mode() & 0o7777;
    let open_bits = if strict { 0o077 } else { 0o022 };
    if meta.uid() != uid {
        Some(format!("owned by uid {}, not you (uid {uid})", meta.uid()))
    } else if mode & open_bits != 0 {
        Some(format!(
            "mode {mode:04o}: {} can change it",
            if mode & 0o002 != 0 {
                "everyone"
            } else {
                "others"
            }
        ))
    } else {
        None
    }
}

/// Where [`private_dir`] puts private files for `path`, without creating
/// anything: `path` itself unless it exists and is writable by others or
/// not the user's, then its [`PRIVATE_SUBDIR`]. Readers use this to find
/// what writers put there.
pub fn private_location(path: &Path) -> PathBuf {
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() && unfit_for_private(&meta, false).is_some() => {
            path.join(PRIVATE_SUBDIR)
        }
        _ => path.to_path_buf(),
    }
}

/// Makes `path` ready for private files and returns the folder to put them
/// in. A missing folder is created 0700 (parents too). An existing folder's
/// mode is never changed: when others can write to it (or it is not the
/// user's), a warning is logged and a 0700 [`PRIVATE_SUBDIR`] inside it is
/// returned instead, which must be the user's and closed to everyone else.
pub fn private_dir(path: &Path) -> Result<PathBuf, PrivateDirError> {
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| PrivateDirError::Io { path, source }
    };
    create_dir_if_missing(path).map_err(io_err(path))?;
    let meta = fs::metadata(path).map_err(io_err(path))?;
    let Some(reason) = unfit_for_private(&meta, false) else {
        return Ok(path.to_path_buf());
    };
    let sub = path.join(PRIVATE_SUBDIR);
    tracing::warn!(
        "{} is {reason}; awtui leaves it as it is and keeps its private files in {}",
        path.display(),
        sub.display()
    );
    match fs::DirBuilder::new().mode(0o700).create(&sub) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io_err(&sub)(e)),
    }
    let meta = fs::symlink_metadata(&sub).map_err(io_err(&sub))?;
    let refuse = |reason: String| PrivateDirError::NotPrivate {
        path: sub.clone(),
        reason,
    };
    if !meta.is_dir() {
        return Err(refuse("it is not a folder".into()));
    }
    if let Some(reason) = unfit_for_private(&meta, true) {
        return Err(refuse(reason));
    }
    Ok(sub)
}

/// FNV-1a of `bytes` as 16 hex digits: a name derived from content that is
/// the same across builds and platforms (unlike the std hasher), for file
/// names and stable ids. Not for secrets.
pub fn stable_hash(bytes: &[u8]) -> String {
    format!("{:016x}", stable_hash_u64(bytes))
}

/// [`stable_hash`] as a number (FNV-1a, 64 bits), for checksums on disk.
pub fn stable_hash_u64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_new_workflow_folder_gets_a_gitignore_an_existing_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        create_dir_if_missing(&dir.path().join(".workflow/demo/agents")).unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join(".workflow/.gitignore")).unwrap(),
            "*\n"
        );
        let mine = dir.path().join("mine/.workflow");
        fs::create_dir_all(&mine).unwrap();
        create_dir_if_missing(&mine.join("demo")).unwrap();
        assert!(!mine.join(".gitignore").exists(), "not created by awtui");
    }

    #[test]
    fn replaces_content_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        atomic_write(&path, b"one").unwrap();
        atomic_write(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_link_at_the_target_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        fs::write(&outside, "keep").unwrap();
        let path = dir.path().join("secret");
        std::os::unix::fs::symlink(&outside, &path).unwrap();
        write_private_file(&path, b"token").unwrap();
        assert_eq!(fs::read_to_string(&outside).unwrap(), "keep");
        assert!(!fs::symlink_metadata(&path).unwrap().is_symlink());
        assert_eq!(fs::read(&path).unwrap(), b"token");
    }

    #[test]
    fn an_existing_open_file_ends_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/token");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        write_private_file(&path, b"new").unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(fs::read(&path).unwrap(), b"new");
        // Missing folders are made 0700.
        let fresh = dir.path().join("x/y/token");
        write_private_file(&fresh, b"t").unwrap();
        assert_eq!(mode(&dir.path().join("x")), 0o700);
        assert_eq!(mode(&dir.path().join("x/y")), 0o700);
        assert_eq!(mode(&fresh), 0o600);
    }

    #[test]
    fn reads_are_capped_and_only_of_regular_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.md");
        fs::write(&path, "x".repeat(10)).unwrap();
        assert_eq!(read_regular_capped(&path, 10).unwrap().len(), 10);
        let e = read_regular_capped(&path, 9).unwrap_err().to_string();
        assert!(
            e.contains("p.md") && e.contains("larger than the 9 bytes limit"),
            "{e}"
        );
        let e = read_regular_capped(Path::new("/dev/zero"), MIB)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "cannot read /dev/zero: it is a character device, not a regular file"
        );
        let e = read_regular_capped(dir.path(), MIB).unwrap_err();
        assert!(
            matches!(
                e,
                ReadError::NotRegular {
                    kind: "a folder",
                    ..
                }
            ),
            "{e}"
        );
        assert!(
            read_regular_capped(&dir.path().join("missing"), 1)
                .unwrap_err()
                .is_not_found()
        );
        fs::write(&path, [0xff, 0xfe]).unwrap();
        assert!(matches!(
            read_text_capped(&path, 10).unwrap_err(),
            ReadError::NotText { .. }
        ));
        assert_eq!(human_size(MIB), "1 MiB");
        assert_eq!(human_size(256 * KIB), "256 KiB");
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let e = read_regular_capped(&fifo, MIB).unwrap_err();
        assert!(
            matches!(e, ReadError::NotRegular { kind: "a FIFO", .. }),
            "{e}"
        );
    }

    #[test]
    fn private_dirs_are_made_0700_and_existing_ones_keep_their_mode() {
        let dir = tempfile::tempdir().unwrap();
        let made = dir.path().join("new/inner");
        assert_eq!(private_dir(&made).unwrap(), made);
        assert_eq!(mode(&made), 0o700);

        let mine = dir.path().join("mine");
        fs::create_dir(&mine).unwrap();
        fs::set_permissions(&mine, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(private_dir(&mine).unwrap(), mine);
        assert_eq!(mode(&mine), 0o755, "an existing folder is not chmod'ed");

        let shared = dir.path().join("shared");
        fs::create_dir(&shared).unwrap();
        fs::set_permissions(&shared, fs::Permissions::from_mode(0o1777)).unwrap();
        let private = private_dir(&shared).unwrap();
        assert_eq!(private, shared.join(PRIVATE_SUBDIR));
        assert_eq!(private_location(&shared), private);
        assert_eq!(mode(&shared), 0o1777);
        assert_eq!(mode(&private), 0o700);
        assert_eq!(private_dir(&shared).unwrap(), private, "and again");

        // A private subfolder others can use is refused, not repaired.
        fs::set_permissions(&private, fs::Permissions::from_mode(0o770)).unwrap();
        let e = private_dir(&shared).unwrap_err().to_string();
        assert!(e.contains(PRIVATE_SUBDIR) && e.contains("0770"), "{e}");
    }
}
