//! The document watcher: edits made outside the engine are reported as
//! `Document { by: "editor" }`; the engine's own writes are not reported
//! again.

use std::time::Duration;

use awtui::context::{FileStore, StoreLayout};
use awtui::engine::{EngineEvent, watch};
use awtui::mcp::{DocumentChange, SharedContext};
use tokio::sync::broadcast;

fn layout() -> StoreLayout {
    StoreLayout {
        channel: "channel.md".into(),
        document: "notes.md".into(),
        documents: vec!["findings/review.md".into()],
        agents: vec!["coder".into()],
    }
}

async fn next_document(rx: &mut broadcast::Receiver<EngineEvent>) -> Option<EngineEvent> {
    tokio::time::timeout(Duration::from_secs(3), async {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outside_edits_are_reported_own_writes_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::open(dir.path(), &layout()).unwrap();
    let context = SharedContext::new(Box::new(store));
    let (events, mut rx) = broadcast::channel(64);
    let _watch = watch::spawn(dir.path(), context.clone(), events).expect("watcher starts");
    tokio::time::sleep(Duration::from_millis(100)).await;

    // The engine's own writes are not reported as outside edits, nor are
    // channel files.
    context
        .transact(|tx| tx.write_document("user", Some("notes.md"), "through the engine\n"))
        .unwrap();
    context.append("user", "hello").unwrap();
    assert!(
        next_document(&mut rx).await.is_none(),
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
