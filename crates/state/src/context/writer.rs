//! Durable writes of a small file (the inbox cursors' `state.json`) on a
//! thread of their own, newest content wins.
//!
//! A caller hands over the file's complete new content and gets a
//! [`Pending`] at once; the writer thread replaces the file atomically and
//! durably ([`crate::fsutil::atomic_write`]: temp file, `fdatasync`, rename,
//! folder `fsync`), skipping contents that a newer one replaced before it
//! got to them. So the `fsync`s never run under the store's lock nor on an
//! async worker, and a burst of cursor changes costs one write. Whoever
//! must answer only once the change is durable waits on its [`Pending`]
//! after releasing the lock.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::{ContextError, Result};

#[derive(Debug, Default)]
struct State {
    /// The newest content not yet taken by the thread, with its version.
    next: Option<(u64, Vec<u8>)>,
    /// Every version up to this one is durable.
    durable: u64,
    /// The newest version whose write failed, with the error.
    failed: Option<(u64, io::ErrorKind, String)>,
    /// No more content comes: the thread finishes and ends.
    closed: bool,
}

#[derive(Debug)]
struct Shared {
    path: PathBuf,
    state: Mutex<State>,
    /// Wakes the thread: new content or closing.
    work: Condvar,
    /// Wakes waiters: a write finished.
    done: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes `bytes` as `version` and records the outcome.
    fn write(&self, version: u64, bytes: &[u8]) {
        let outcome = crate::fsutil::atomic_write(&self.path, bytes);
        let mut state = self.lock();
        match outcome {
            Ok(()) => state.durable = state.durable.max(version),
            Err(e) => state.failed = Some((version, e.kind(), e.to_string())),
        }
        drop(state);
        self.done.notify_all();
    }
}

/// The writer of one file; dropping it writes what is still queued first.
#[derive(Debug)]
pub struct LatestWriter {
    shared: Arc<Shared>,
    version: u64,
    thread: Option<JoinHandle<()>>,
}

impl LatestWriter {
    /// Starts the thread that writes `path`. Without a thread (the system
    /// refused one), [`LatestWriter::submit`] writes inline instead.
    pub fn start(path: PathBuf) -> LatestWriter {
        let shared = Arc::new(Shared {
            path,
            state: Mutex::new(State::default()),
            work: Condvar::new(),
            done: Condvar::new(),
        });
        let worker = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("awtui-state".into())
            .spawn(move || writer_loop(&worker))
            .map_err(|e| tracing::warn!("cannot start the state writer, writing inline: {e}"))
            .ok();
        LatestWriter {
            shared,
            version: 0,
            thread,
        }
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// Queues `bytes` as the file's new content (replacing content queued
    /// before and not yet taken); the returned [`Pending`] says when it is
    /// durable.
    pub fn submit(&mut self, bytes: Vec<u8>) -> Pending {
        self.version += 1;
        let version = self.version;
        if self.thread.is_none() {
            self.shared.write(version, &bytes);
        } else {
            self.shared.lock().next = Some((version, bytes));
            self.shared.work.notify_one();
        }
        self.pending()
    }

    /// What waits for everything submitted so far.
    pub fn pending(&self) -> Pending {
        Pending {
            shared: Some(Arc::clone(&self.shared)),
            version: self.version,
        }
    }
}

impl Drop for LatestWriter {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.work.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn writer_loop(shared: &Shared) {
    loop {
        let mut state = shared.lock();
        while state.next.is_none() && !state.closed {
            state = shared.work.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        let Some((version, bytes)) = state.next.take() else {
            return;
        };
        drop(state);
        shared.write(version, &bytes);
    }
}

/// A change handed to a [`LatestWriter`]: wait on it, without holding any
/// lock, to know it is durable.
#[derive(Clone, Debug, Default)]
pub struct Pending {
    shared: Option<Arc<Shared>>,
    version: u64,
}

impl Pending {
    /// Nothing to wait for (a memory store, or nothing changed).
    pub fn none() -> Pending {
        Pending::default()
    }

    /// Blocks until the change is durable; the write's error (naming the
    /// file) when it failed and no newer content was written since.
    pub fn wait(&self) -> Result<()> {
        let Some(shared) = &self.shared else {
            return Ok(());
        };
        let mut state = shared.lock();
        loop {
            if state.durable >= self.version {
                return Ok(());
            }
            if let Some((failed, kind, text)) = &state.failed
                && *failed >= self.version
            {
                return Err(ContextError::Io {
                    path: shared.path.clone(),
                    source: io::Error::new(*kind, text.clone()),
                });
            }
            state = shared.done.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_content_is_durable_when_its_pending_returns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let mut w = LatestWriter::start(path.clone());
        for i in 0..50 {
            w.submit(format!("{i}").into_bytes());
        }
        w.pending().wait().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "49");
    }

    #[test]
    fn a_failed_write_reaches_its_waiters_with_the_path() {
        let dir = tempfile::tempdir().unwrap();
        // The folder does not exist, so the write fails.
        let path = dir.path().join("gone").join("state.json");
        let mut w = LatestWriter::start(path);
        let err = w.submit(b"x".to_vec()).wait().unwrap_err();
        assert!(err.to_string().contains("gone/state.json"), "{err}");
    }

    #[test]
    fn dropping_the_writer_writes_what_was_queued() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let mut w = LatestWriter::start(path.clone());
        w.submit(b"last".to_vec());
        drop(w);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "last");
    }
}
