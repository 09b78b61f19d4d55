//! Watches a file context's document folder for changes made outside the
//! engine (the user's editor, `git checkout`, a script) and reports them as
//! `EngineEvent::Document { by: "editor", .. }`, so every front end shows
//! them live.
//!
//! Nothing anyone writes into the folder can stall the instance or make
//! the watcher's work grow without bound:
//!
//! - The notifier's callback only filters paths by their letters (hidden
//!   names such as `.git`, awtui's own files and anything else that cannot
//!   be a document are dropped there) and hands the rest to a bounded
//!   [`queue`]; a burst of more than [`queue::MAX_QUEUED`] paths in one
//!   window becomes a single rescan.
//! - The work happens on a thread of its own, never on the async runtime
//!   and never under the store's lock: it looks at files through its own
//!   handle on the folder ([`DocFolder`]). A batch costs one `stat` per
//!   path; a rescan one listing of at most [`known::MAX_SCANNED`] entries,
//!   at most once per [`RESCAN_GAP`]; at most [`known::MAX_TRACKED`]
//!   documents are followed and [`MAX_REPORTED`] changes reported one by
//!   one per batch.
//! - Stopping the watch only sets a flag and wakes the thread: nothing
//!   calls into a runtime that may be shutting down.
//!
//! Agents' worktrees are not in the folder at all (see
//! [`crate::workspace`]); those of instances made before they moved out
//! carry a reserved name and are dropped by the filter.
//!
//! Telling the engine's own writes from other editors': a write through the
//! engine (agents over MCP, front ends) is announced on the context's event
//! channel while it is made; before each batch the watcher records the
//! written documents' stamps, so a notification of the engine's own write
//! finds the stamp unchanged and is dropped. Notifications settle for
//! [`SETTLE`] first, which also coalesces the bursts editors make when
//! saving.
//!
//! A change from outside does not reach the runner (it does not wake
//! agents or reset the loop guard): it is news for the people watching.

mod known;
mod queue;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use notify::event::ModifyKind;
use notify::{EventKind, RecursiveMode, Watcher};
use tokio::sync::broadcast;

use self::known::{Change, Known};
pub use self::known::{MAX_SCANNED, MAX_TRACKED};
pub use self::queue::MAX_QUEUED;
use self::queue::{Queue, Wait};
use super::EngineEvent;
use crate::context::documents::DocFolder;
use crate::context::paths;
use crate::context::{ContextEvent, DocumentChange, SharedContext};

pub use crate::vocab::EDITOR;

/// How long notifications settle before they are looked at.
const SETTLE: Duration = Duration::from_millis(150);

/// Least time between two rescans: a stream of files costs one bounded
/// listing a second at most.
const RESCAN_GAP: Duration = Duration::from_secs(1);

/// How often the engine's own writes are taken in while nothing else
/// happens (so their announcements never pile up).
const IDLE_TICK: Duration = Duration::from_secs(1);

/// Most changes one batch reports one by one; the rest are counted in a
/// notice.
pub const MAX_REPORTED: usize = 200;

/// A running watcher; dropping it stops it.
pub struct Watch {
    queue: Arc<Queue>,
    _watcher: notify::RecommendedWatcher,
}

impl Drop for Watch {
    fn drop(&mut self) {
        // The worker sees this at its next step and ends; the notifier
        // stops when the field is dropped right after.
        self.queue.close();
    }
}

/// Starts watching the document folder of `context`. Returns `None` (after
/// logging why) when the documents are not in a folder or the platform
/// watcher cannot start: the instance works the same, only without live
/// outside edits.
///
/// Returns once the folder has been looked at (one bounded listing), so
/// every change made after is reported; call it off the async workers.
pub fn spawn(context: SharedContext, events: broadcast::Sender<EngineEvent>) -> Option<Watch> {
    let folder = match context.read(|s| s.document_folder()) {
        Ok(Some(f)) => f,
        Ok(None) => return None,
        Err(e) => {
            tracing::warn!("not watching the documents: {e}");
            return None;
        }
    };
    let shown = folder.path().to_path_buf();
    let not_watching = |e: &dyn std::fmt::Display| {
        tracing::warn!("not watching {}: {e}", shown.display());
    };
    let root = match folder.path().canonicalize() {
        Ok(r) => r,
        Err(e) => {
            not_watching(&e);
            return None;
        }
    };
    let queue = Arc::new(Queue::default());
    let handler = notifier(root.clone(), folder.own_files().to_vec(), queue.clone());
    // Links are not followed: one to `/` must not make the notifier
    // watch the whole disk.
    let config = notify::Config::default().with_follow_symlinks(false);
    let mut watcher = match notify::RecommendedWatcher::new(handler, config) {
        Ok(w) => w,
        Err(e) => {
            not_watching(&e);
            return None;
        }
    };
    if let Err(e) = watcher.watch(&root, RecursiveMode::Recursive) {
        not_watching(&e);
        return None;
    }
    let known = Known::scan(&folder);
    let worker = Worker {
        folder,
        queue: queue.clone(),
        own: context.subscribe(),
        events,
    };
    if let Err(e) = std::thread::Builder::new()
        .name("awtui-watch".into())
        .spawn(move || worker.run(known))
    {
        not_watching(&e);
        return None;
    }
    Some(Watch {
        queue,
        _watcher: watcher,
    })
}

/// The notifier's callback: changed paths that may be documents go to
/// `queue`; anything the notifier could not follow asks for a rescan.
fn notifier(root: PathBuf, own_files: Vec<String>, queue: Arc<Queue>) -> impl notify::EventHandler {
    move |res: notify::Result<notify::Event>| {
        let event = match res {
            Ok(e) => e,
            Err(e) => {
                tracing::debug!("the file notifier reported {e}; looking at everything again");
                queue.rescan();
                return;
            }
        };
        if event.need_rescan() {
            queue.rescan();
            return;
        }
        // Only changes: reading a document or listing the folder (as the
        // watcher itself does) must not count, or it would wake itself
        // forever.
        let change = matches!(
            event.kind,
            EventKind::Create(_)
                | EventKind::Remove(_)
                | EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Name(_) | ModifyKind::Any)
        );
        if !change {
            return;
        }
        for p in &event.paths {
            if let Some(rel) = relative(&root, p)
                && paths::may_be_document(&rel, &own_files)
            {
                queue.push(rel);
            }
        }
    }
}

/// `path` relative to `root`, with `/`, when it is below it.
fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?.to_str()?;
    (!rel.is_empty()).then(|| rel.to_string())
}

/// The watcher's own thread: takes batches from the queue and reports
/// what changed.
struct Worker {
    folder: DocFolder,
    queue: Arc<Queue>,
    /// The context's announcements (the engine's own writes).
    own: broadcast::Receiver<ContextEvent>,
    events: broadcast::Sender<EngineEvent>,
}

impl Worker {
    fn run(mut self, mut known: Known) {
        let mut last_rescan: Option<Instant> = None;
        loop {
            let batch = match self.queue.wait(SETTLE, IDLE_TICK) {
                Wait::Closed => return,
                Wait::Idle => {
                    if !self.take_own_writes(&mut known) {
                        return;
                    }
                    continue;
                }
                Wait::Ready(b) => b,
            };
            if batch.rescan
                && let Some(at) = last_rescan
                && !self.queue.pause(RESCAN_GAP.saturating_sub(at.elapsed()))
            {
                return;
            }
            // The engine's own writes first: their notifications then
            // find the stamps unchanged.
            if !self.take_own_writes(&mut known) {
                return;
            }
            let mut changes = Vec::new();
            if batch.rescan {
                known.rescan(&self.folder, &mut changes);
                last_rescan = Some(Instant::now());
            } else {
                for rel in &batch.paths {
                    if self.queue.is_closed() {
                        return;
                    }
                    known.check(&self.folder, rel, &mut changes);
                }
            }
            self.report(changes);
        }
    }

    /// Records the documents the engine wrote since last time; false once
    /// the context is gone (the instance ended).
    fn take_own_writes(&mut self, known: &mut Known) -> bool {
        use broadcast::error::TryRecvError;
        loop {
            match self.own.try_recv() {
                Ok(ContextEvent::DocumentChanged { path, .. }) => {
                    known.own_write(&self.folder, &path);
                }
                Ok(_) => {}
                // Which documents the engine wrote is lost: take the
                // folder as it is now.
                Err(TryRecvError::Lagged(_)) => *known = Known::scan(&self.folder),
                Err(TryRecvError::Empty) => return true,
                Err(TryRecvError::Closed) => return false,
            }
        }
    }

    /// Reports `changes`, at most [`MAX_REPORTED`] one by one and the rest
    /// as one notice. Edits and deletions of documents already followed
    /// come first: a burst of new files that lands in the same rescan as
    /// an edit of the notes (a loaded machine settles them together) must
    /// not push that edit into the count.
    fn report(&self, changes: Vec<Change>) {
        report(&self.events, changes);
    }
}

/// Reports `changes` on `events`: see [`Worker::report`].
fn report(events: &broadcast::Sender<EngineEvent>, mut changes: Vec<Change>) {
    changes.sort_by_key(|(_, change)| *change == DocumentChange::Created);
    let more = changes.len().saturating_sub(MAX_REPORTED);
    for (path, change) in changes.into_iter().take(MAX_REPORTED) {
        tracing::info!("{path} {change:?} by another editor");
        let _ = events.send(EngineEvent::Document {
            path,
            change,
            by: EDITOR.to_string(),
        });
    }
    if more > 0 {
        let _ = events.send(EngineEvent::Notice {
            text: format!("{more} more documents were changed outside awtui"),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rescan that finds many new files and one edited document (a
    /// loaded machine settles a burst and the edit together) reports the
    /// edit one by one, not in the count.
    #[test]
    fn an_edit_is_reported_before_a_burst_of_new_files() {
        let (events, mut rx) = broadcast::channel(4 * MAX_REPORTED);
        let mut changes: Vec<Change> = (0..MAX_REPORTED * 2)
            .map(|i| (format!("junk/f{i}.md"), DocumentChange::Created))
            .collect();
        changes.push(("notes.md".into(), DocumentChange::Written));
        report(&events, changes);
        let mut seen = Vec::new();
        while let Ok(e) = rx.try_recv() {
            seen.push(e);
        }
        assert!(
            matches!(&seen[0], EngineEvent::Document { path, change: DocumentChange::Written, .. } if path == "notes.md"),
            "{:?}",
            seen.first()
        );
        assert!(matches!(seen.last(), Some(EngineEvent::Notice { .. })));
    }
}
