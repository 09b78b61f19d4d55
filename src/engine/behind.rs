//! Small state files the engine keeps for reopening (each agent's lasting
//! counters) written behind its loop: the loop hands over a file's whole
//! new content and goes on; one thread replaces the files atomically and
//! durably (`fsutil::atomic_write`), newest content per file wins. Ten
//! agents ending turns together then cost the loop nothing but a channel
//! send, where twenty `fsync`s in a row held it for tens of milliseconds
//! (`benches/engine_busy`).
//!
//! Dropping the writer writes what is still queued before it returns, so
//! a clean stop keeps every count; a crash may lose the last turn's count
//! (the counters only inform).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::lane::Lane;

/// The writer thread and its queue.
#[derive(Debug)]
pub struct Behind {
    /// `None` when the thread could not start: files are written at once.
    lane: Option<Lane<(PathBuf, Vec<u8>)>>,
}

impl Behind {
    /// Starts the writer thread.
    pub fn start() -> Behind {
        let lane = Lane::start("awtui-behind", |batch: Vec<(PathBuf, Vec<u8>)>| {
            // Everything queued meanwhile, newest per file.
            let newest: BTreeMap<PathBuf, Vec<u8>> = batch.into_iter().collect();
            for (path, bytes) in newest {
                replace(&path, &bytes);
            }
        });
        Behind { lane: lane.ok() }
    }

    /// Queues `bytes` as the whole new content of `path`; written at once
    /// when the thread could not start.
    pub fn write(&self, path: PathBuf, bytes: Vec<u8>) {
        match &self.lane {
            Some(lane) => lane.queue((path, bytes)),
            None => replace(&path, &bytes),
        }
    }
}

/// Replaces `path` with `bytes`, atomically and durably (its folder made
/// first); a failure is logged (the counters only inform).
fn replace(path: &Path, bytes: &[u8]) {
    let written = match path.parent() {
        Some(dir) => crate::fsutil::create_dir_if_missing(dir),
        None => Ok(()),
    }
    .and_then(|()| crate::fsutil::atomic_write(path, bytes));
    if let Err(e) = written {
        tracing::warn!("cannot write {}: {e}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_content_lands_and_dropping_waits_for_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a/counters.json");
        let behind = Behind::start();
        for i in 0..100 {
            behind.write(file.clone(), format!("{i}").into_bytes());
        }
        drop(behind);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "99");
    }
}
