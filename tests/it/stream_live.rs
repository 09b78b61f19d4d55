//! STREAM blocks from a `command` agent reach the channel while the
//! process still runs: the agent prints a chunk, then waits for a file the
//! test creates only after it saw the chunk in the channel.

use std::path::Path;

use awtui::engine::{Command, EngineEvent, Reply};
use tokio::sync::broadcast;

use crate::fixture;
use fixture::{next_event, start_engine};

fn workflow(dir: &Path) -> String {
    format!(
        r#"
name: streams
agents:
  writer:
    command: ["sh", "-c", "cat >/dev/null; printf '=== AOP-STREAM | chunk=1/2 ===\nfirst half\n=== END-AOP-STREAM ===\n'; while [ ! -e '{go}' ]; do sleep 0.02; done; printf '=== AOP-STREAM | chunk=2/2 ===\nsecond half\n=== END-AOP-STREAM ===\n@user all written\n'"]
context:
  config:
    document: notes.md
"#,
        go = dir.join("go").display()
    )
}

/// The next message from `from`, skipping every other event.
async fn next_message(events: &mut broadcast::Receiver<EngineEvent>, from: &str) -> String {
    next_event(events, &format!("a message from {from}"), |e| match e {
        EngineEvent::Message { entry, .. } if entry.from == from => Some(entry.message),
        _ => None,
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_agents_stream_grows_in_the_channel_while_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, mut events) =
        start_engine(dir.path(), "streams.yaml", &workflow(dir.path())).await;
    assert_eq!(
        engine
            .request(Command::Post {
                text: "@writer go".into()
            })
            .await,
        Ok(Reply::Done)
    );
    // The first chunk arrives while the agent is still waiting for `go`.
    let first = next_message(&mut events, "writer").await;
    assert!(first.contains("first half"), "{first}");
    assert!(!dir.path().join("go").exists());
    std::fs::write(dir.path().join("go"), "").unwrap();
    let second = next_message(&mut events, "writer").await;
    assert!(
        second.contains("chunk=2/2") && second.contains("second half"),
        "{second}"
    );
    assert!(!second.contains("all written"), "the chunk alone: {second}");
    // The rest of the output is the answer, posted when the turn ends.
    let answer = next_message(&mut events, "writer").await;
    assert_eq!(answer, "@user all written");
    engine.send(Command::Shutdown);
    engine.wait().await;
}
