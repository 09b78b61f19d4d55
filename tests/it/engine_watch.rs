//! The document watcher: edits made outside the engine are reported as
//! `Document { by: "editor" }`; the engine's own writes are not reported
//! again.

use std::time::Duration;

use awtui::context::{FileStore, StoreLayout};
use awtui::engine::{EngineEvent, watch};
use awtui::mcp::{DocumentChange, SharedContext};
use tokio::sync::broadcast;

use crate::patience;
use patience::PATIENCE;

/// How long a test listens for a report that must not come: short on
/// purpose, as it is paid in full each time the test passes.
const QUIET: Duration = Duration::from_secs(3);

fn layout() -> StoreLayout {
    StoreLayout {
        channel: "channel.md".into(),
        document: "notes.md".into(),
        documents: vec!["findings/review.md".into()],
        agents: vec!["coder".into()],
    }
}

/// The next document change, or `None` after `within`.
async fn document_within(
    rx: &mut broadcast::Receiver<EngineEvent>,
    within: Duration,
) -> Option<EngineEvent> {
    tokio::time::timeout(within, async {
        loop {
            match rx.recv().await {
                Ok(e @ EngineEvent::Document { .. }) => return Some(e),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
    })
    .await
    .ok()
    .flatten()
}

/// The next document change, or `None` after [`PATIENCE`].
async fn next_document(rx: &mut broadcast::Receiver<EngineEvent>) -> Option<EngineEvent> {
    document_within(rx, PATIENCE).await
}

/// Proves the watcher is at work: a probe document moved into the folder
/// from outside (in one step, so it is one change) is reported.
async fn probe(dir: &std::path::Path, rx: &mut broadcast::Receiver<EngineEvent>) {
    let hidden = dir.join(".probe.tmp");
    std::fs::write(&hidden, "probe\n").unwrap();
    std::fs::rename(&hidden, dir.join("probe.md")).unwrap();
    match next_document(rx).await {
        Some(EngineEvent::Document { path, change, .. }) => {
            assert_eq!(
                (path.as_str(), change),
                ("probe.md", DocumentChange::Created)
            );
        }
        other => panic!("expected the probe, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outside_edits_are_reported_own_writes_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::open(dir.path(), &layout()).unwrap();
    let context = SharedContext::new(Box::new(store));
    let (events, mut rx) = broadcast::channel(64);
    let _watch = watch::spawn(context.clone(), events).expect("watcher starts");
    probe(dir.path(), &mut rx).await;

    // The engine's own writes are not reported as outside edits, nor are
    // channel files.
    context
        .transact(|tx| tx.write_document("user", Some("notes.md"), "through the engine\n"))
        .unwrap();
    context.append("user", "hello").unwrap();
    assert!(
        document_within(&mut rx, QUIET).await.is_none(),
        "own writes are not outside edits"
    );

    // Another editor writes the entry document.
    std::fs::write(dir.path().join("notes.md"), "edited outside\n").unwrap();
    match next_document(&mut rx).await {
        Some(EngineEvent::Document { path, change, by }) => {
            assert_eq!(path, "notes.md");
            assert_eq!(change, DocumentChange::Written);
            assert_eq!(by, watch::EDITOR);
        }
        other => panic!("expected an editor change, got {other:?}"),
    }

    // Creating and deleting from outside.
    std::fs::write(dir.path().join("new.md"), "fresh\n").unwrap();
    match next_document(&mut rx).await {
        Some(EngineEvent::Document { path, change, .. }) => {
            assert_eq!((path.as_str(), change), ("new.md", DocumentChange::Created));
        }
        other => panic!("expected a creation, got {other:?}"),
    }
    std::fs::remove_file(dir.path().join("new.md")).unwrap();
    match next_document(&mut rx).await {
        Some(EngineEvent::Document { path, change, .. }) => {
            assert_eq!((path.as_str(), change), ("new.md", DocumentChange::Deleted));
        }
        other => panic!("expected a deletion, got {other:?}"),
    }
}

/// A burst of files written straight into the document folder (a hostile
/// agent, or a build pointed at the wrong folder) costs bounded work: far
/// fewer reports than files, never more than the watcher follows, and
/// edits to the real documents are still seen after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_files_is_bounded_work_and_later_edits_are_still_seen() {
    const FILES: usize = 5_000;
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::open(dir.path(), &layout()).unwrap();
    let context = SharedContext::new(Box::new(store));
    let (events, mut rx) = broadcast::channel(4 * FILES);
    let _watch = watch::spawn(context.clone(), events).expect("watcher starts");
    // Followed from the start (the initial scan sees it).
    std::fs::write(dir.path().join("notes.md"), "before\n").unwrap();
    match next_document(&mut rx).await {
        Some(EngineEvent::Document { path, .. }) => assert_eq!(path, "notes.md"),
        other => panic!("expected notes.md, got {other:?}"),
    }

    let junk = dir.path().join("junk");
    std::fs::create_dir(&junk).unwrap();
    for i in 0..FILES {
        std::fs::write(junk.join(format!("f{i}.md")), "x").unwrap();
    }
    // Not documents: not reported, whatever their number.
    let git = dir.path().join(".git");
    std::fs::create_dir(&git).unwrap();
    for i in 0..FILES {
        std::fs::write(git.join(format!("o{i}")), "x").unwrap();
    }
    std::fs::write(dir.path().join("notes.md"), "after the burst\n").unwrap();

    let (mut reported, mut notices) = (0, 0);
    let seen_edit = tokio::time::timeout(PATIENCE, async {
        loop {
            match rx.recv().await {
                Ok(EngineEvent::Document { path, change, .. }) if path == "notes.md" => {
                    assert_eq!(change, DocumentChange::Written);
                    return;
                }
                Ok(EngineEvent::Document { path, .. }) => {
                    assert!(path.starts_with("junk/"), "{path}");
                    reported += 1;
                }
                Ok(EngineEvent::Notice { .. }) => notices += 1,
                Ok(_) => {}
                Err(e) => panic!("{e}"),
            }
        }
    })
    .await;
    assert!(seen_edit.is_ok(), "the edit after the burst was not seen");
    println!("{FILES} files: {reported} reported one by one, {notices} notices");
    assert!(
        reported <= watch::MAX_TRACKED,
        "{reported} reports for {FILES} files"
    );
}
