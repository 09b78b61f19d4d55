//! How fast the engine answers while ten agents end turns in worktrees at
//! once (issue 24: a command is answered within 50 ms). Each agent's turn
//! writes 200 files into its worktree and exits, so every turn end brings
//! a commit of 200 files; all ten are woken by one kickoff. Meanwhile a
//! front end asks for a snapshot every 2 ms; the bench prints the median,
//! the 99th percentile and the slowest answer, over 5 rounds.
//!
//!   cargo bench --bench engine_busy
//!
//! Needs `git`.

use std::path::Path;
use std::process::Command as Process;
use std::time::{Duration, Instant};

use awtui::agents::runner::{AgentStatus, RunMode};
use awtui::engine::{Command, Engine, EngineEvent, EngineOptions};

const AGENTS: usize = 10;
const FILES: usize = 200;
const ROUNDS: usize = 5;

fn git(dir: &Path, args: &[&str]) {
    let ok = Process::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@localhost")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@localhost")
        .status()
        .expect("git")
        .success();
    assert!(ok, "git {args:?}");
}

/// A repository with a workflow of [`AGENTS`] worktree agents.
fn repo(dir: &Path) {
    let script = format!(
        "#!/bin/sh\ncat >/dev/null\nn=$(date +%s%N)\nmkdir -p out\ni=0\nwhile [ $i -lt {FILES} ]; do echo \"$n $i\" > out/f$i.txt; i=$((i+1)); done\necho done\n"
    );
    std::fs::write(dir.join("agent.sh"), script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.join("agent.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut yaml = String::from("name: busy\nworkspace: worktree\nagents:\n");
    for i in 0..AGENTS {
        yaml.push_str(&format!("  a{i}:\n    command: ./agent.sh\n"));
    }
    std::fs::write(dir.join("busy.yaml"), yaml).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "start"]);
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    let workflow = awtui::workflow::load(&dir.path().join("busy.yaml"))
        .unwrap()
        .workflow;
    let mut latencies: Vec<Duration> = Vec::new();
    rt.block_on(async {
        let (engine, mut events) = Engine::start(
            workflow,
            EngineOptions {
                instance: "bench".into(),
                mode: RunMode::Start,
                watch_documents: false,
            },
        )
        .await
        .unwrap();
        for round in 0..ROUNDS {
            let all: Vec<String> = (0..AGENTS).map(|i| format!("@a{i}")).collect();
            engine.send(Command::Post {
                text: format!("{} round {round}", all.join(" ")),
            });
            let started = Instant::now();
            // Until every agent went to work and back to idle (its turn
            // committed: the commit comes before the turn's end).
            let mut working = std::collections::HashSet::new();
            let mut done = std::collections::HashSet::new();
            while done.len() < AGENTS {
                let t = Instant::now();
                engine
                    .request(Command::Snapshot { messages: 50 })
                    .await
                    .unwrap();
                latencies.push(t.elapsed());
                while let Ok(e) = events.try_recv() {
                    if let EngineEvent::Status { agent, status } = e {
                        if status == AgentStatus::Idle {
                            if working.contains(&agent) {
                                done.insert(agent);
                            }
                        } else {
                            working.insert(agent);
                        }
                    }
                }
                assert!(
                    started.elapsed() < Duration::from_secs(120),
                    "round {round} never ended"
                );
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }
        engine.send(Command::Shutdown);
        engine.wait().await;
    });
    latencies.sort();
    println!(
        "engine_busy: {AGENTS} agents × {FILES} files a turn, {ROUNDS} rounds, {} snapshot requests: median {:.2} ms, p99 {:.2} ms, max {:.2} ms (target: under 50 ms)",
        latencies.len(),
        percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        latencies.last().unwrap().as_secs_f64() * 1e3,
    );
}
