//! Small state files the engine keeps for reopening (each agent's lasting
//! counters and backend session id) written behind its loop: the loop hands over a file's whole
//! new content and goes on; one thread replaces the files atomically and
//! durably (`fsutil::atomic_write`), newest content per file wins. Ten
//! agents ending turns together then cost the loop nothing but a channel
//! send, where twenty `fsync`s in a row held it for tens of milliseconds
//! (`benches/engine_busy`).
//!
//! Dropping the writer writes what is still queued before it returns, so
//! a clean stop keeps every count; a crash may lose the last turn's count
//! (the counters only inform), or a session id that arrived in the same
//! moment (the turn is then started afresh instead of resumed). A file
//! that cannot be written is told back to the loop, which tells the
//! person.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tokio::sync::mpsc::UnboundedSender;

use super::lane::Lane;

/// The writer thread and its queue.
#[derive(Debug)]
pub struct Behind {
    /// `None` when the thread could not start: files are written at once.
    lane: Option<Lane<(PathBuf, Vec<u8>)>>,
    /// Where a failure is told.
    failed: UnboundedSender<String>,
}

impl Behind {
    /// Starts the writer thread; what cannot be written is told on
    /// `failed`.
    pub fn start(failed: UnboundedSender<String>) -> Behind {
        let told = failed.clone();
        let lane = Lane::start("awtui-behind", move |batch: Vec<(PathBuf, Vec<u8>)>| {
            // Everything queued meanwhile, newest per file.
            let newest: BTreeMap<PathBuf, Vec<u8>> = batch.into_iter().collect();
            for (path, bytes) in newest {
                replace(&path, &bytes, &told);
            }
        });
        Behind {
            lane: lane.ok(),
            failed,
        }
    }

    /// Queues `bytes` as the whole new content of `path`; written at once
    /// when the thread could not start.
    pub fn write(&self, path: PathBuf, bytes: Vec<u8>) {
        match &self.lane {
            Some(lane) => lane.queue((path, bytes)),
            None => replace(&path, &bytes, &self.failed),
        }
    }
}

/// Replaces `path` with `bytes`, atomically and durably (its folder made
/// first); a failure is logged and told on `failed`.
fn replace(path: &Path, bytes: &[u8], failed: &UnboundedSender<String>) {
    let written = match path.parent() {
        Some(dir) => crate::fsutil::create_dir_if_missing(dir),
        None => Ok(()),
    }
    .and_then(|()| crate::fsutil::atomic_write(path, bytes));
    if let Err(e) = written {
        let text = format!("cannot write {}: {e}", path.display());
        tracing::warn!("{text}");
        let _ = failed.send(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_content_lands_and_dropping_waits_for_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a/counters.json");
        let (tx, mut failed) = tokio::sync::mpsc::unbounded_channel();
        let behind = Behind::start(tx);
        for i in 0..100 {
            behind.write(file.clone(), format!("{i}").into_bytes());
        }
        drop(behind);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "99");
        assert!(failed.try_recv().is_err(), "nothing failed");
    }

    #[test]
    fn a_file_that_cannot_be_written_is_told_by_name() {
        let dir = tempfile::tempdir().unwrap();
        // A file where the folder should be.
        std::fs::write(dir.path().join("a"), "").unwrap();
        let file = dir.path().join("a/session");
        let (tx, mut failed) = tokio::sync::mpsc::unbounded_channel();
        let behind = Behind::start(tx);
        behind.write(file.clone(), b"sess-1".to_vec());
        drop(behind);
        let told = failed.try_recv().expect("the failure is told");
        assert!(told.contains(&file.display().to_string()), "{told}");
    }
}
