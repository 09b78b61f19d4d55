//! Durable writes of a small file (the inbox cursors' `state.json`) on a
//! thread of their own, newest content wins.
//!
//! A caller hands over the file's complete new content and gets a
//! [`Pending`] at once; the writer thread (a
//! [`crate::batch_writer::BatchWriter`]) replaces the file atomically and
//! durably ([`crate::fsutil::atomic_write`]: temp file, `fdatasync`, rename,
//! folder `fsync`), skipping contents that a newer one replaced before it
//! got to them. So the `fsync`s never run under the store's lock nor on an
//! async worker, and a burst of cursor changes costs one write. Whoever
//! must answer only once the change is durable waits on its [`Pending`]
//! after releasing the lock.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{ContextError, Result};
use crate::batch_writer::{BatchError, BatchWriter, Options, Ticket};

/// A write's error, shared by every waiter of its batch.
type WriteError = Arc<io::Error>;

/// What the writer and its [`Pending`]s share.
#[derive(Debug)]
struct Shared {
    path: PathBuf,
    /// Every version up to this one is durable.
    durable: AtomicU64,
}

impl Shared {
    /// Writes `bytes` as `version` durably; records it when it succeeded.
    fn write(&self, version: u64, bytes: &[u8]) -> std::result::Result<(), WriteError> {
        crate::fsutil::atomic_write(&self.path, bytes).map_err(Arc::new)?;
        self.durable.fetch_max(version, Ordering::AcqRel);
        Ok(())
    }
}

/// The writer of one file; dropping it writes what is still queued first.
#[derive(Debug)]
pub struct LatestWriter {
    shared: Arc<Shared>,
    version: u64,
    /// The thread writing the file (a [`BatchWriter`] whose batches keep
    /// only their newest content); `None` writes inline.
    writer: Option<BatchWriter<(u64, Vec<u8>), WriteError>>,
    /// The newest content's ticket.
    last: Ticket<WriteError>,
}

impl LatestWriter {
    /// Starts the thread that writes `path`. Without a thread (the system
    /// refused one), [`LatestWriter::submit`] writes inline instead.
    pub fn start(path: PathBuf) -> LatestWriter {
        let shared = Arc::new(Shared {
            path,
            durable: AtomicU64::new(0),
        });
        let worker = Arc::clone(&shared);
        let writer = BatchWriter::start(
            "awtui-state",
            Options::default(),
            move |contents: &mut Vec<(u64, Vec<u8>)>| match contents.pop() {
                // The newest content replaces the older ones of its batch.
                Some((version, bytes)) => worker.write(version, &bytes),
                None => Ok(()),
            },
        )
        .map_err(|e| tracing::warn!("cannot start the state writer, writing inline: {e}"))
        .ok();
        LatestWriter {
            shared,
            version: 0,
            writer,
            last: Ticket::answered(Ok(())),
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
        self.last = match &self.writer {
            Some(w) => w.submit((version, bytes)),
            None => Ticket::answered(self.shared.write(version, &bytes).map_err(BatchError::Sink)),
        };
        self.pending()
    }

    /// What waits for everything submitted so far.
    pub fn pending(&self) -> Pending {
        Pending {
            shared: Some(Arc::clone(&self.shared)),
            version: self.version,
            ticket: self.last.clone(),
        }
    }
}

/// A change handed to a [`LatestWriter`]: wait on it, without holding any
/// lock, to know it is durable.
#[derive(Clone, Debug)]
pub struct Pending {
    shared: Option<Arc<Shared>>,
    version: u64,
    /// The batch that writes this version (or a newer one).
    ticket: Ticket<WriteError>,
}

impl Default for Pending {
    fn default() -> Self {
        Pending {
            shared: None,
            version: 0,
            ticket: Ticket::answered(Ok(())),
        }
    }
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
        let failed = match self.ticket.wait() {
            Ok(()) => return Ok(()),
            // A newer content written since covers this one.
            Err(_) if shared.durable.load(Ordering::Acquire) >= self.version => return Ok(()),
            Err(BatchError::Sink(e)) => io::Error::new(e.kind(), e.to_string()),
            Err(other) => io::Error::other(other.to_string()),
        };
        Err(ContextError::Io {
            path: shared.path.clone(),
            source: failed,
        })
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
