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
use std::path::PathBuf;
use std::sync::mpsc;
use std::thread::JoinHandle;

/// The writer thread and its queue.
#[derive(Debug)]
pub struct Behind {
    tx: Option<mpsc::Sender<(PathBuf, Vec<u8>)>>,
    thread: Option<JoinHandle<()>>,
}

impl Behind {
    /// Starts the writer thread.
    pub fn start() -> Behind {
        let (tx, rx) = mpsc::channel::<(PathBuf, Vec<u8>)>();
        let thread = std::thread::Builder::new()
            .name("awtui-behind".into())
            .spawn(move || {
                while let Ok(first) = rx.recv() {
                    // Everything queued meanwhile, newest per file.
                    let mut batch: BTreeMap<PathBuf, Vec<u8>> = BTreeMap::new();
                    batch.insert(first.0, first.1);
                    while let Ok((path, bytes)) = rx.try_recv() {
                        batch.insert(path, bytes);
                    }
                    for (path, bytes) in batch {
                        let written = match path.parent() {
                            Some(dir) => crate::fsutil::create_dir_if_missing(dir),
                            None => Ok(()),
                        }
                        .and_then(|()| crate::fsutil::atomic_write(&path, &bytes));
                        if let Err(e) = written {
                            tracing::warn!("cannot write {}: {e}", path.display());
                        }
                    }
                }
            })
            .ok();
        Behind {
            tx: thread.as_ref().map(|_| tx),
            thread,
        }
    }

    /// Queues `bytes` as the whole new content of `path`; written at once
    /// when the thread could not start.
    pub fn write(&self, path: PathBuf, bytes: Vec<u8>) {
        let Some(tx) = &self.tx else {
            if let Err(e) = crate::fsutil::atomic_write(&path, &bytes) {
                tracing::warn!("cannot write {}: {e}", path.display());
            }
            return;
        };
        let _ = tx.send((path, bytes));
    }
}

impl Drop for Behind {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
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
