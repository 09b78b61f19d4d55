//! STREAM blocks from a `command` agent reach the channel while the
//! process still runs: the agent prints a chunk, then waits for a file the
//! test creates only after it saw the chunk in the channel.

use std::path::Path;

use awtui::agents::runner::RunMode;
use awtui::engine::{Command, Engine, EngineEvent, EngineOptions, Reply};
use tokio::sync::broadcast;

#[path = "cli_support/patience.rs"]
mod patience;
use patience::PATIENCE;

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
    tokio::time::timeout(PATIENCE, async {
        loop {
            if let EngineEvent::Message { entry, .. } = events.recv().await.expect("events")
                && entry.from == from
            {
                return entry.message;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no message from {from}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_agents_stream_grows_in_the_channel_while_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("streams.yaml"), workflow(dir.path())).unwrap();
    let workflow = awtui::workflow::load(&dir.path().join("streams.yaml"))
        .unwrap()
        .workflow;
    let (engine, mut events) = Engine::start(
        workflow,
        EngineOptions {
            instance: "default".into(),
            mode: RunMode::Start,
            watch_documents: false,
        },
    )
    .await
    .unwrap();
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
