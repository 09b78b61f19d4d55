//! One engine per instance: an exclusive `flock` on `<home>/instance.lock`,
//! held for the engine's whole life. The OS releases it when the process
//! dies, even on `kill -9`, so a crash never leaves an instance locked. The
//! file also records the holder's pid, for the "already running" message.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, flock};

use super::layout::LOCK_FILE;

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it: the instance is running.
    #[error("{}", held_message(.pid, .home))]
    Held {
        /// The holder, when it recorded itself.
        pid: Option<u32>,
        /// The instance folder.
        home: PathBuf,
    },
    /// The lock file could not be opened or locked.
    #[error("cannot lock {path}: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
}

fn held_message(pid: &Option<u32>, home: &Path) -> String {
    let by = pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
    format!("the instance in {} is already running{by}", home.display())
}

/// The held lock; dropping it releases the instance.
#[derive(Debug)]
pub struct InstanceLock {
    _file: File,
    path: PathBuf,
}

impl InstanceLock {
    /// Takes the lock of the instance in `home` (which must exist) without
    /// waiting, and records this process's pid in it.
    pub fn acquire(home: &Path) -> Result<InstanceLock, LockError> {
        let path = home.join(LOCK_FILE);
        let io_err = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let mut file = {
            use std::os::unix::fs::OpenOptionsExt;
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                // Never through a link, never blocking on a FIFO.
                .custom_flags(
                    (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32,
                )
                .open(&path)
                .map_err(io_err)?
        };
        let kind = rustix::fs::FileType::from_raw_mode(
            rustix::fs::fstat(&file)
                .map_err(|e| io_err(e.into()))?
                .st_mode,
        );
        if kind != rustix::fs::FileType::RegularFile {
            return Err(io_err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "it is {}, not a regular file; remove it",
                    crate::fsutil::kind_name(kind)
                ),
            )));
        }
        // A holder killed a moment ago still holds the lock while the
        // kernel tears it down: wait for it (bounded), never for a live one.
        let deadline = std::time::Instant::now() + DEAD_OWNER_GRACE;
        loop {
            match flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => break,
                Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
                    let pid = read_pid(&mut file);
                    let dying = pid.is_some_and(|p| !super::process::process_alive(p));
                    if !dying || std::time::Instant::now() >= deadline {
                        return Err(LockError::Held {
                            pid,
                            home: home.to_path_buf(),
                        });
                    }
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(e) => return Err(io_err(e.into())),
            }
        }
        file.set_len(0).map_err(io_err)?;
        file.rewind().map_err(io_err)?;
        writeln!(file, "{}", std::process::id()).map_err(io_err)?;
        Ok(InstanceLock { _file: file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn read_pid(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// Whether some process holds the lock of the instance in `home` (without
/// keeping it: a free lock is released at once).
pub fn is_held(home: &Path) -> bool {
    // Never blocks: a FIFO put where the lock belongs opens at once.
    let Ok(fd) = rustix::fs::open(
        home.join(LOCK_FILE),
        crate::fsutil::READ_FLAGS,
        rustix::fs::Mode::empty(),
    ) else {
        return false;
    };
    let file = File::from(fd);
    match flock(&file, FlockOperation::NonBlockingLockShared) {
        Ok(()) => {
            let _ = flock(&file, FlockOperation::Unlock);
            false
        }
        Err(_) => true,
    }
}

/// How long a lock whose recorded owner is dead may take to be released: a
/// process killed with SIGKILL shows as a zombie while its other threads are
/// still being torn down, and its files (the lock among them) are closed only
/// when the last one is gone.
pub const DEAD_OWNER_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether the lock is held by a live process: when it looks held but
/// `owner_alive` says the recorded owner is gone, waits up to
/// [`DEAD_OWNER_GRACE`] for the dying process to release it.
pub fn is_held_by_live(home: &Path, owner_alive: impl Fn() -> bool) -> bool {
    let deadline = std::time::Instant::now() + DEAD_OWNER_GRACE;
    loop {
        if !is_held(home) {
            return false;
        }
        if owner_alive() || std::time::Instant::now() >= deadline {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_fails_with_pid_and_release_frees_it() {
        let dir = tempfile::tempdir().unwrap();
        let lock = InstanceLock::acquire(dir.path()).unwrap();
        assert!(is_held(dir.path()));
        match InstanceLock::acquire(dir.path()) {
            Err(LockError::Held { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("{other:?}"),
        }
        drop(lock);
        assert!(!is_held(dir.path()));
        InstanceLock::acquire(dir.path()).unwrap();
    }
}
