//! Watches a file context's document folder for changes made outside the
//! engine (the user's editor, `git checkout`, a script) and reports them as
//! `EngineEvent::Document { by: "editor", .. }`, so every front end shows
//! them live.
//!
//! Telling the engine's own writes from other editors': the watcher keeps a
//! hash of each document's content as last seen. A write through the engine
//! (agents over MCP, front ends) is announced on the context's event
//! channel right after it lands, and the watcher records the new hash then;
//! file-system notifications are handled 150 ms later (which also
//! coalesces the bursts editors make when saving), so a notification of the
//! engine's own write finds the hash unchanged and is dropped. Only paths
//! the store lists as documents count (channel files, tokens and logs
//! live in the same folder and are ignored).
//!
//! A change from outside does not reach the runner (it does not wake
//! agents or reset the loop guard): it is news for the people watching.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::event::ModifyKind;
use notify::{EventKind, RecursiveMode, Watcher};
use tokio::sync::{broadcast, mpsc};
use tokio::task::JoinHandle;

use super::EngineEvent;
use crate::mcp::{ContextEvent, DocumentChange, SharedContext};

/// Who external changes are attributed to.
pub const EDITOR: &str = "editor";

/// How long notifications settle before they are compared.
const SETTLE: Duration = Duration::from_millis(150);

/// A running watcher; dropping it stops it.
pub struct Watch {
    _watcher: notify::RecommendedWatcher,
    task: JoinHandle<()>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn hash(content: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    content.hash(&mut h);
    h.finish()
}

fn snapshot(context: &SharedContext) -> HashMap<String, u64> {
    context.read(|s| {
        s.list_documents()
            .unwrap_or_default()
            .into_iter()
            .filter_map(|d| s.read_document(Some(&d)).ok().map(|c| (d, hash(&c))))
            .collect()
    })
}

/// Starts watching `dir` (the instance's document folder). Returns `None`
/// (after logging why) when the platform watcher cannot start: the
/// instance works the same, only without live outside edits.
pub fn spawn(
    dir: &Path,
    context: SharedContext,
    events: broadcast::Sender<EngineEvent>,
) -> Option<Watch> {
    let root = match dir.canonicalize() {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!("not watching {}: {e}", dir.display());
            return None;
        }
    };
    let (tx, mut rx) = mpsc::unbounded_channel::<PathBuf>();
    let mut watcher =
        match notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            // Only changes: reading a document or listing the folder (as
            // the watcher itself does) must not count, or it would wake
            // itself forever.
            if let Ok(event) = res
                && matches!(
                    event.kind,
                    EventKind::Create(_)
                        | EventKind::Remove(_)
                        | EventKind::Modify(
                            ModifyKind::Data(_) | ModifyKind::Name(_) | ModifyKind::Any
                        )
                )
            {
                for p in event.paths {
                    let _ = tx.send(p);
                }
            }
        }) {
            Ok(w) => w,
            Err(e) => {
                tracing::warn!("not watching {}: {e}", root.display());
                return None;
            }
        };
    if let Err(e) = watcher.watch(&root, RecursiveMode::Recursive) {
        tracing::warn!("not watching {}: {e}", root.display());
        return None;
    }
    let mut known = snapshot(&context);
    let mut ctx_events = context.subscribe();
    let task = tokio::spawn(async move {
        let mut pending: Vec<String> = Vec::new();
        let mut deadline: Option<tokio::time::Instant> = None;
        loop {
            tokio::select! {
                ev = ctx_events.recv() => match ev {
                    Ok(ContextEvent::DocumentChanged { path, change, .. }) => {
                        if change == DocumentChange::Deleted {
                            known.remove(&path);
                        } else if let Ok(c) = context.read(|s| s.read_document(Some(&path))) {
                            known.insert(path, hash(&c));
                        }
                    }
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => known = snapshot(&context),
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                Some(path) = rx.recv() => {
                    if let Ok(rel) = path.strip_prefix(&root) {
                        let rel = rel.to_string_lossy().replace('\\', "/");
                        if !rel.is_empty() && !pending.contains(&rel) {
                            pending.push(rel);
                        }
                        deadline.get_or_insert_with(|| tokio::time::Instant::now() + SETTLE);
                    }
                }
                () = sleep_until(deadline) => {
                    deadline = None;
                    for rel in pending.drain(..) {
                        if let Some(event) = compare(&context, &mut known, rel) {
                            let _ = events.send(event);
                        }
                    }
                }
            }
        }
    });
    Some(Watch {
        _watcher: watcher,
        task,
    })
}

/// What changed at `rel` compared with what was known, as an event.
fn compare(
    context: &SharedContext,
    known: &mut HashMap<String, u64>,
    rel: String,
) -> Option<EngineEvent> {
    let (is_doc, content) = context.read(|s| {
        let docs = s.list_documents().unwrap_or_default();
        let is_doc = docs.contains(&rel);
        (
            is_doc,
            is_doc.then(|| s.read_document(Some(&rel)).ok()).flatten(),
        )
    });
    let change = match (is_doc, content, known.get(&rel).copied()) {
        (true, Some(c), Some(h)) if hash(&c) == h => return None,
        (true, Some(c), before) => {
            known.insert(rel.clone(), hash(&c));
            if before.is_some() {
                DocumentChange::Written
            } else {
                DocumentChange::Created
            }
        }
        (false, _, Some(_)) => {
            known.remove(&rel);
            DocumentChange::Deleted
        }
        _ => return None,
    };
    tracing::info!("{rel} {change:?} by another editor");
    Some(EngineEvent::Document {
        path: rel,
        change,
        by: EDITOR.to_string(),
    })
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
