//! The hand-off from the file-system notifier's thread to the watcher's
//! worker: the paths changed since the last batch, coalesced over a
//! settling window and bounded.
//!
//! The notifier's callback does constant work per path (an insert under a
//! short lock) and never touches an async runtime, so no burst of files
//! can make it fall behind, and it cannot fail or panic while the
//! instance stops. More than [`MAX_QUEUED`] paths in one window collapse
//! into a single rescan: after that, further paths cost nothing at all.

use std::collections::BTreeSet;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Most paths one batch names; a bigger burst becomes one rescan.
pub const MAX_QUEUED: usize = 512;

/// What the worker looks at next.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Batch {
    /// The changed paths (relative to the document folder), sorted.
    pub paths: Vec<String>,
    /// Too many paths changed (or the notifier lost track): look at the
    /// whole folder instead.
    pub rescan: bool,
}

/// What [`Queue::wait`] returns.
#[derive(Debug, PartialEq, Eq)]
pub enum Wait {
    /// The watch was stopped.
    Closed,
    /// Nothing settled within the time given.
    Idle,
    /// Changes whose window has passed.
    Ready(Batch),
}

#[derive(Default)]
struct State {
    paths: BTreeSet<String>,
    rescan: bool,
    /// When the first change of the open window came.
    since: Option<Instant>,
    closed: bool,
}

/// Changed paths waiting for the worker.
#[derive(Default)]
pub struct Queue {
    state: Mutex<State>,
    wake: Condvar,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes a change at `rel`.
    pub fn push(&self, rel: String) {
        self.note(|s| {
            if s.rescan {
                return;
            }
            if s.paths.len() >= MAX_QUEUED && !s.paths.contains(&rel) {
                s.rescan = true;
                s.paths = BTreeSet::new();
            } else {
                s.paths.insert(rel);
            }
        });
    }

    /// Notes that the whole folder must be looked at again.
    pub fn rescan(&self) {
        self.note(|s| {
            s.rescan = true;
            s.paths = BTreeSet::new();
        });
    }

    fn note(&self, change: impl FnOnce(&mut State)) {
        let mut s = self.lock();
        if s.closed {
            return;
        }
        change(&mut s);
        if s.since.is_none() {
            s.since = Some(Instant::now());
            self.wake.notify_all();
        }
    }

    /// Stops the watch: waiters return [`Wait::Closed`], later changes are
    /// dropped.
    pub fn close(&self) {
        self.lock().closed = true;
        self.wake.notify_all();
    }

    /// Whether [`Queue::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Waits for the changes noted since the last batch, once `settle` has
    /// passed since the first of them; gives up after `idle` when nothing
    /// was noted.
    pub fn wait(&self, settle: Duration, idle: Duration) -> Wait {
        let give_up = Instant::now() + idle;
        let mut s = self.lock();
        loop {
            if s.closed {
                return Wait::Closed;
            }
            let now = Instant::now();
            let until = match s.since {
                Some(first) if now >= first + settle => {
                    let taken = std::mem::take(&mut *s);
                    s.closed = taken.closed;
                    return Wait::Ready(Batch {
                        paths: taken.paths.into_iter().collect(),
                        rescan: taken.rescan,
                    });
                }
                Some(first) => first + settle,
                None if now >= give_up => return Wait::Idle,
                None => give_up,
            };
            s = self
                .wake
                .wait_timeout(s, until - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Sleeps for `time` unless the watch is stopped meanwhile; false when
    /// it was.
    pub fn pause(&self, time: Duration) -> bool {
        let until = Instant::now() + time;
        let mut s = self.lock();
        loop {
            if s.closed {
                return false;
            }
            let now = Instant::now();
            if now >= until {
                return true;
            }
            s = self
                .wake
                .wait_timeout(s, until - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    const NOW: Duration = Duration::ZERO;
    const LONG: Duration = Duration::from_secs(60);

    #[test]
    fn paths_are_coalesced_into_one_sorted_batch() {
        let q = Queue::default();
        for p in ["b.md", "a.md", "b.md"] {
            q.push(p.into());
        }
        assert_eq!(
            q.wait(NOW, LONG),
            Wait::Ready(Batch {
                paths: vec!["a.md".into(), "b.md".into()],
                rescan: false
            })
        );
        // The window closed with the batch.
        assert_eq!(q.wait(NOW, NOW), Wait::Idle);
    }

    #[test]
    fn a_burst_beyond_the_bound_becomes_one_rescan_holding_nothing() {
        let q = Queue::default();
        for i in 0..20_000 {
            q.push(format!("junk/f{i}.md"));
            assert!(q.lock().paths.len() <= MAX_QUEUED);
        }
        assert_eq!(
            q.wait(NOW, LONG),
            Wait::Ready(Batch {
                paths: vec![],
                rescan: true
            })
        );
        q.push("again.md".into());
        assert_eq!(
            q.wait(NOW, LONG),
            Wait::Ready(Batch {
                paths: vec!["again.md".into()],
                rescan: false
            })
        );
    }

    #[test]
    fn closing_wakes_the_worker_and_drops_later_changes() {
        let q = Arc::new(Queue::default());
        let waiter = {
            let q = q.clone();
            std::thread::spawn(move || q.wait(LONG, LONG))
        };
        let pauser = {
            let q = q.clone();
            std::thread::spawn(move || q.pause(LONG))
        };
        q.push("a.md".into());
        q.close();
        assert_eq!(waiter.join().unwrap(), Wait::Closed);
        assert!(!pauser.join().unwrap());
        q.push("b.md".into());
        assert!(q.is_closed());
        assert_eq!(q.wait(NOW, NOW), Wait::Closed);
    }
}
