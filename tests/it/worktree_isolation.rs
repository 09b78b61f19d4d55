//! Agents' files cannot stall the instance (issue 21): an agent's worktree
//! lives outside the watched document folder, the document watcher does
//! bounded work on any burst of files, and documents never reach into a
//! worktree.
//!
//! Each test runs the real `awtui` host in the background with a worktree
//! agent `a` and a plain agent `b`; the test stands in for them (it writes
//! the build output into `a`'s worktree and sends as `b` over MCP with
//! `b`'s own token). These tests need the `git` program.

use crate::cli_support;
use crate::support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cli_support::{PATIENCE, World, git, init_repo, wait_for};
use serde_json::json;
use support::{Client, call, http_client, try_call};

/// How many files a burst writes (the figure).
const BURST: usize = 20_000;

/// How many sends go on after a burst is written, while the watcher
/// deals with it. Latencies are printed (the bound is a 50 ms
/// median), never asserted: a stalled instance fails by not answering
/// within [`PATIENCE`], not by being slow on a busy machine.
const AFTER_BURST: usize = 10;

/// An agent that tells the test (through a file outside every worktree)
/// its MCP address and token, and where it runs.
const AGENT: &str = "#!/bin/sh
cat >/dev/null
printf '%s\\n%s\\n%s\\n' \"$AWTUI_MCP_URL\" \"$AWTUI_TOKEN\" \"$(pwd)\" > \"$OUT/$AGENT_NAME.tmp\"
mv \"$OUT/$AGENT_NAME.tmp\" \"$OUT/$AGENT_NAME.env\"
echo done
";

/// A repository holding a workflow whose agent `a` works in a worktree
/// and `b` in the shared checkout, started in the background as `@i`.
fn started_team() -> World {
    let mut w = World::new();
    let out = w.tmp.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let workflow = format!(
        "name: team
agents:
  a:
    command: ./agent.sh
    workspace: worktree
    env:
      AGENT_NAME: a
      OUT: \"{out}\"
  b:
    command: ./agent.sh
    env:
      AGENT_NAME: b
      OUT: \"{out}\"
kickoff: '@a and @b: say where you are'
",
        out = out.display()
    );
    init_repo(
        &w.dir,
        &[
            ("team.yaml", &workflow),
            ("agent.sh", AGENT),
            ("src/lib.txt", "code\n"),
        ],
    );
    w.start_background("team.yaml", "i");
    w
}

/// What agent `name` wrote about itself: (MCP URL, token, folder).
fn agent_env(w: &World, name: &str) -> (String, String, PathBuf) {
    let file = w.tmp.path().join("out").join(format!("{name}.env"));
    let text = wait_for(&format!("agent {name} to run"), || {
        std::fs::read_to_string(&file).ok()
    });
    let mut lines = text.lines().map(str::to_string);
    let mut next = || lines.next().unwrap_or_default();
    (next(), next(), PathBuf::from(next()))
}

/// Where git has `a`'s branch checked out.
fn worktree_of_a(w: &World) -> PathBuf {
    let listed = git(&w.dir, &["worktree", "list", "--porcelain"]);
    awtui::workspace::parse_worktree_list(&listed)
        .into_iter()
        .find(|(_, b)| b.as_deref() == Some("awtui/i/a"))
        .map(|(p, _)| p)
        .unwrap_or_else(|| panic!("no worktree for awtui/i/a:\n{listed}"))
}

/// Writes [`BURST`] small files under `dir` in folders of 500, like a
/// build's output.
fn write_burst(dir: PathBuf) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for i in 0..BURST {
            let sub = dir.join(format!("d{}", i / 500));
            if i % 500 == 0 {
                std::fs::create_dir_all(&sub).unwrap();
            }
            std::fs::write(sub.join(format!("f{i}.o")), format!("object {i}\n")).unwrap();
        }
    })
}

/// Sends as the client's agent until `writer` is done and [`AFTER_BURST`]
/// sends more; every send must answer (within [`PATIENCE`]). Returns the
/// latencies, sorted.
async fn send_through(
    client: &Client,
    what: &str,
    writer: std::thread::JoinHandle<()>,
) -> Vec<Duration> {
    let mut took = Vec::new();
    let mut after = 0;
    loop {
        if writer.is_finished() {
            if after == AFTER_BURST {
                break;
            }
            after += 1;
        }
        let n = took.len();
        let start = Instant::now();
        let sent = tokio::time::timeout(
            PATIENCE,
            try_call(
                client,
                "channel_send",
                json!({"message": format!("{what}: still here ({n})")}),
            ),
        )
        .await;
        let elapsed = start.elapsed();
        match sent {
            Ok(Ok(r)) => assert_eq!(r.is_error, Some(false), "send {n}: {r:?}"),
            Ok(Err(e)) => panic!("{what}: send {n} failed: {e}"),
            Err(_) => {
                panic!("{what}: send {n} never answered (the instance is stalled)")
            }
        }
        took.push(elapsed);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    writer.join().unwrap();
    took.sort();
    let median = took[took.len() / 2];
    let max = took[took.len() - 1];
    println!(
        "{what}: {} sends, median {median:?}, max {max:?} (issue bound: median under 50 ms)",
        took.len()
    );
    took
}

/// `awtui stop @i` ends the instance, and the log shows no panic.
fn stop_promptly(w: &World) {
    let start = Instant::now();
    let r = w.run(&["stop", "@i"]);
    println!("stop took {:?}", start.elapsed());
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let log = std::fs::read_to_string(w.dir.join(".workflow/i/awtui.log")).unwrap_or_default();
    assert!(
        !log.contains("panicked") && !log.contains("being shutdown"),
        "{log}"
    );
}

fn is_under(path: &Path, dir: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    canon(path).starts_with(canon(dir))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_thousand_files_from_an_agent_stall_no_one() {
    let w = started_team();
    let (url, token, _) = agent_env(&w, "b");
    let (_, _, a_dir) = agent_env(&w, "a");
    let worktree = worktree_of_a(&w);
    assert!(is_under(&a_dir, &worktree), "a ran in its worktree");
    let documents = w.dir.join(".workflow/i");
    assert!(
        !is_under(&worktree, &documents),
        "{} is inside the document folder",
        worktree.display()
    );
    let (b, _) = http_client(&url, &token).await;
    call(&b, "channel_send", json!({"message": "ready"})).await;

    // An agent's build writes 20,000 files in its worktree.
    let took = send_through(&b, "worktree burst", write_burst(worktree.join("target"))).await;
    assert!(took.len() > AFTER_BURST, "sends went on through the burst");

    // A hostile agent writes 20,000 files straight into the document
    // folder: the watcher stays bounded all the same.
    let took = send_through(
        &b,
        "document folder burst",
        write_burst(documents.join("junk")),
    )
    .await;
    assert!(took.len() > AFTER_BURST, "sends went on through the burst");
    drop(b);

    stop_promptly(&w);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_do_not_reach_into_worktrees() {
    let w = started_team();
    let (url, token, _) = agent_env(&w, "b");
    agent_env(&w, "a");
    let worktree = worktree_of_a(&w);
    std::fs::write(worktree.join("notes.txt"), "a's private notes\n").unwrap();
    let (b, _) = http_client(&url, &token).await;

    for path in ["worktrees/a/notes.txt", "worktrees/a/src/lib.txt"] {
        let r = try_call(&b, "document_read", json!({"file": path}))
            .await
            .unwrap();
        assert_eq!(r.is_error, Some(true), "{path} is not a document: {r:?}");
    }
    let listed = call(&b, "document_list", json!({})).await.to_string();
    assert!(!listed.contains("notes.txt"), "{listed}");
    assert!(!listed.contains("lib.txt"), "{listed}");

    // A write there lands in the document folder or is refused, never in
    // a's worktree.
    let _ = try_call(
        &b,
        "document_write",
        json!({"file": "worktrees/a/planted.sh", "content": "echo owned\n"}),
    )
    .await
    .unwrap();
    assert!(!worktree.join("planted.sh").exists());
    // (a's turn may be committing notes.txt meanwhile: only the planted
    // file matters.)
    assert!(!git(&worktree, &["status", "--porcelain"]).contains("planted"));
    let history = git(&worktree, &["log", "--all", "--name-only", "--format="]);
    assert!(!history.contains("planted"), "{history}");
    drop(b);

    stop_promptly(&w);
}
