//! The whole engine on real processes and real MCP: the offline demo, every
//! CLI backend (fake CLIs that call the real MCP server with their token),
//! retries without loss or duplicates, the cycle guard, failures, stalls,
//! stops and resumed sessions.

use crate::llm_server;

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use awtui::agents::runner::{AgentStatus, Budget, PauseReason, RunMode, RunOutcome};
use awtui::context::{ChannelEntry, ContextStore, FileStore, StoreLayout};
use awtui::engine::{Command, Engine, EngineEvent, Reply, RequestError};
use tokio::sync::broadcast;

use crate::fixture;
use fixture::{EngineStart, next_event, within};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A folder with the fake agent CLIs, for the agents' PATH.
fn fake_bin(dir: &Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for name in ["claude", "codex", "cursor-agent", "gemini", "opencode"] {
        std::os::unix::fs::symlink(root().join("tests/fakes/fake_agent.py"), bin.join(name))
            .unwrap();
    }
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap())
}

fn write_script(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\nset -eu\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn channel(dir: &Path, agents: &[&str]) -> Vec<ChannelEntry> {
    let layout = StoreLayout {
        channel: "channel.md".into(),
        document: "notes.md".into(),
        documents: vec![],
        agents: agents.iter().map(|s| s.to_string()).collect(),
    };
    let store = FileStore::open(&dir.join(".workflow/default"), &layout).unwrap();
    store.read(None, None).unwrap()
}

fn awtui_run(workflow: &Path) -> (i32, String, String) {
    let out = Process::new(env!("CARGO_BIN_EXE_awtui"))
        .args(["run", workflow.to_str().unwrap(), "--instance", "default"])
        .env("AWTUI_DEMO_PAUSE", "0")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_offline_demo_runs_to_completion() {
    let dir = tempfile::tempdir().unwrap();
    let wf = root().join("assets/workflows");
    std::fs::copy(wf.join("demo.yaml"), dir.path().join("demo.yaml")).unwrap();
    std::fs::create_dir_all(dir.path().join("agents")).unwrap();
    for script in ["planner.sh", "coder.sh", "reviewer.sh"] {
        std::fs::copy(
            wf.join("agents").join(script),
            dir.path().join("agents").join(script),
        )
        .unwrap();
    }
    let (code, stdout, stderr) = awtui_run(&dir.path().join("demo.yaml"));
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    let msgs = channel(dir.path(), &["planner", "coder", "reviewer"]);
    let from: Vec<&str> = msgs.iter().map(|m| m.from.as_str()).collect();
    assert_eq!(
        from,
        vec!["system", "planner", "coder", "reviewer"],
        "{stdout}"
    );
    assert!(
        msgs[3]
            .message
            .contains("=== AOP-FINAL | agent=reviewer | status=approved ===")
    );
    let inst = dir.path().join(".workflow/default");
    assert!(
        std::fs::read_to_string(inst.join("notes.md"))
            .unwrap()
            .contains("## Change")
    );
    assert!(
        std::fs::read_to_string(inst.join("findings/review.md"))
            .unwrap()
            .contains("approved")
    );
    assert!(
        stdout.contains("── #4") && stdout.contains("reviewer → @user"),
        "{stdout}"
    );
}

#[test]
fn a_flaky_agent_is_retried_and_nothing_is_lost_or_duplicated() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_script(
        d,
        "first.sh",
        "cat >/dev/null\necho '@second please take it'\n",
    );
    // Fails twice, then works: the counter lives next to the script.
    write_script(
        d,
        "second.sh",
        "cat >/dev/null\nn=$(cat count 2>/dev/null || echo 0)\necho $((n+1)) > count\nif [ \"$n\" -lt 2 ]; then echo boom >&2; exit 1; fi\necho '@third your turn'\n",
    );
    write_script(d, "third.sh", "cat >/dev/null\necho '@user all done'\n");
    std::fs::write(
        d.join("w.yaml"),
        "agents:\n  first:\n    command: ./first.sh\n  second:\n    command: ./second.sh\n  third:\n    command: ./third.sh\nlimits:\n  retry_backoff: 50ms\nkickoff: \"@first start\"\n",
    )
    .unwrap();
    let (code, stdout, stderr) = awtui_run(&d.join("w.yaml"));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("second: retry 1") && stderr.contains("second: retry 2"),
        "{stderr}"
    );
    let msgs = channel(d, &["first", "second", "third"]);
    let texts: Vec<&str> = msgs.iter().map(|m| m.message.as_str()).collect();
    assert_eq!(
        texts,
        vec![
            "@first start",
            "@second please take it",
            "@third your turn",
            "@user all done"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(d.join("count")).unwrap().trim(),
        "3"
    );
}

#[test]
fn a_ring_of_three_is_paused_by_the_cycle_guard() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (me, next) in [("a", "b"), ("b", "c"), ("c", "a")] {
        write_script(
            d,
            &format!("{me}.sh"),
            &format!("cat >/dev/null\necho '@{next} over to you'\n"),
        );
    }
    std::fs::write(
        d.join("w.yaml"),
        "agents:\n  a:\n    command: ./a.sh\n  b:\n    command: ./b.sh\n  c:\n    command: ./c.sh\nkickoff: \"@a go\"\n",
    )
    .unwrap();
    let (code, stdout, stderr) = awtui_run(&d.join("w.yaml"));
    assert_eq!(code, 1, "a paused run fails: {stdout}\n{stderr}");
    let msgs = channel(d, &["a", "b", "c"]);
    assert!(
        msgs.len() < 40,
        "the guard stopped it early: {} messages",
        msgs.len()
    );
    let last = msgs.iter().rev().find(|m| m.from == "system").unwrap();
    assert!(
        last.message.to_lowercase().contains("paus"),
        "{}",
        last.message
    );
}

// ---- in-process engine with the fake CLIs ----

struct Run {
    _dir: tempfile::TempDir,
    root: PathBuf,
    engine: Engine,
    events: broadcast::Receiver<EngineEvent>,
}

async fn start(yaml: &str, mode: RunMode) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let yaml = yaml.replace("$FAKE_PATH", &fake_bin(&root));
    start_in(dir, root, &yaml, mode).await
}

async fn start_in(dir: tempfile::TempDir, root: PathBuf, yaml: &str, mode: RunMode) -> Run {
    let (engine, events) = EngineStart {
        mode,
        ..EngineStart::default()
    }
    .start_yaml(&root, "w.yaml", yaml)
    .await;
    Run {
        _dir: dir,
        root,
        engine,
        events,
    }
}

/// Waits for an event matching `pred`; returns it.
async fn wait_for(
    events: &mut broadcast::Receiver<EngineEvent>,
    mut pred: impl FnMut(&EngineEvent) -> bool,
) -> EngineEvent {
    next_event(events, "a matching event", |e| pred(&e).then_some(e)).await
}

fn messages(run: &Run) -> Vec<ChannelEntry> {
    run.engine.context().read(|s| s.read(None, None).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_cli_backend_reaches_the_tools_and_replies_land_once() {
    let yaml = r#"
agents:
  cc:
    backend: claude
    env: { PATH: "$FAKE_PATH", FAKE_MCP: "@cx from claude via MCP" }
  cx:
    backend: codex
    env: { PATH: "$FAKE_PATH", FAKE_MCP: "@cu from codex via MCP" }
  cu:
    backend: cursor
    protocol: headless
    env: { PATH: "$FAKE_PATH", FAKE_MCP: "@ge from cursor via MCP" }
  ge:
    backend: gemini
    protocol: headless
    model: gemini-2.5-pro
    env: { PATH: "$FAKE_PATH", FAKE_MCP: "@oc from gemini via MCP" }
  oc:
    backend: opencode
    protocol: headless
    env: { PATH: "$FAKE_PATH", FAKE_REPLY: "@user opencode is done" }
kickoff: "@cc start the chain"
"#;
    let mut run = start(yaml, RunMode::Run).await;
    let mut tokens = std::collections::BTreeMap::new();
    let outcome = within("the run to finish", async {
        loop {
            match run.events.recv().await {
                Ok(EngineEvent::Metrics { agent, metrics }) => {
                    tokens.insert(
                        agent,
                        (metrics.tokens_in, metrics.tokens_out, metrics.turns),
                    );
                }
                Ok(EngineEvent::Finished { outcome }) => return outcome,
                Ok(_) => {}
                Err(e) => panic!("{e}"),
            }
        }
    })
    .await;
    let msgs = messages(&run);
    let lines: Vec<String> = msgs
        .iter()
        .map(|m| format!("{}: {}", m.from, m.message))
        .collect();
    assert_eq!(
        lines,
        vec![
            "system: @cc start the chain",
            "cc: @cx from claude via MCP",
            "cx: @cu from codex via MCP",
            "cu: @ge from cursor via MCP",
            "ge: @oc from gemini via MCP",
            "oc: @user opencode is done",
        ],
        "each reply exactly once: posts through MCP suppress the final answer"
    );
    assert_eq!(outcome, RunOutcome::Completed);
    for agent in ["cc", "cx", "cu", "ge", "oc"] {
        assert_eq!(
            tokens.get(agent),
            Some(&(100, 20, 1)),
            "usage of {agent}: {tokens:?}"
        );
    }
    assert!(
        !run.root.join(".cursor").exists(),
        "the Cursor config was restored"
    );
}

/// One agent per CLI backend, all with the same fake behaviour.
/// Every CLI backend run headless (the fake CLIs print each one's
/// headless output; over ACP they are tested in tests/acp_fake.rs).
fn every_backend(mode: &str, limits: &str) -> String {
    let mut yaml = String::from("agents:\n");
    for (name, backend) in [
        ("cc", "claude"),
        ("cx", "codex"),
        ("cu", "cursor"),
        ("ge", "gemini"),
        ("oc", "opencode"),
    ] {
        yaml.push_str(&format!(
            "  {name}:\n    backend: {backend}\n    protocol: headless\n    model: m\n    env: {{ PATH: \"$FAKE_PATH\", FAKE_MODE: {mode} }}\n"
        ));
    }
    yaml.push_str(&format!("limits:\n{limits}kickoff: \"@all go\"\n"));
    yaml
}

const CLI_AGENTS: [&str; 5] = ["cc", "cx", "cu", "ge", "oc"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_fails_each_backend_with_the_reason_and_keeps_its_message() {
    let yaml = every_backend("crash", "  retries: 1\n  retry_backoff: 20ms\n");
    let mut run = start(&yaml, RunMode::Run).await;
    let mut failed = std::collections::BTreeMap::new();
    while failed.len() < CLI_AGENTS.len() {
        if let EngineEvent::Status {
            agent,
            status: AgentStatus::Failed(reason),
        } = wait_for(&mut run.events, |e| {
            matches!(
                e,
                EngineEvent::Status {
                    status: AgentStatus::Failed(_),
                    ..
                }
            )
        })
        .await
        {
            failed.insert(agent, reason);
        }
    }
    for (agent, reason) in &failed {
        assert!(
            reason.contains("status 139") && reason.contains("segmentation fault"),
            "{agent}: {reason}"
        );
    }
    assert!(matches!(
        run.engine.wait().await,
        RunOutcome::Incomplete { .. }
    ));
    let dir = run.root.join(".workflow/default");
    let layout = StoreLayout {
        channel: "channel.md".into(),
        document: "notes.md".into(),
        documents: vec![],
        agents: CLI_AGENTS.iter().map(|s| s.to_string()).collect(),
    };
    let store = FileStore::open(&dir, &layout).unwrap();
    for agent in CLI_AGENTS {
        assert_eq!(
            store.inbox(agent).unwrap().len(),
            1,
            "{agent}'s kickoff stays unread"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_agent_of_each_backend_is_stalled_and_stopping_ends_it() {
    let yaml = every_backend("hang", "  stall_after: 300ms\n");
    let mut run = start(&yaml, RunMode::Start).await;
    let mut stalled = std::collections::BTreeSet::new();
    while stalled.len() < CLI_AGENTS.len() {
        if let EngineEvent::Status { agent, .. } = wait_for(&mut run.events, |e| {
            matches!(
                e,
                EngineEvent::Status {
                    status: AgentStatus::Stalled,
                    ..
                }
            )
        })
        .await
        {
            stalled.insert(agent);
        }
    }
    run.engine.send(Command::Stop { agent: "cc".into() });
    wait_for(&mut run.events, |e| matches!(e, EngineEvent::Status { agent, status: AgentStatus::Stopped } if agent == "cc")).await;
    run.engine.send(Command::Shutdown);
    assert!(matches!(
        run.engine.wait().await,
        RunOutcome::Incomplete { .. }
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_resume_next_turn_and_after_a_restart() {
    let yaml = "agents:\n  cc:\n    backend: claude\n    env: { PATH: \"$FAKE_PATH\" }\nkickoff: \"@cc first\"\n";
    let mut run = start(yaml, RunMode::Start).await;
    let answer =
        |e: &EngineEvent| matches!(e, EngineEvent::Message { entry, .. } if entry.from == "cc");
    let first = wait_for(&mut run.events, answer).await;
    assert!(
        matches!(&first, EngineEvent::Message { entry, .. } if entry.message == "done"),
        "{first:?}"
    );
    run.engine.send(Command::Post {
        text: "@cc second".into(),
    });
    let second = wait_for(&mut run.events, answer).await;
    assert!(
        matches!(&second, EngineEvent::Message { entry, .. } if entry.message == "done (resumed sess-cc)"),
        "{second:?}"
    );
    run.engine.send(Command::Shutdown);
    run.engine.wait().await;

    // A new engine on the same instance resumes the saved session.
    let Run { _dir, root, .. } = run;
    let yaml = std::fs::read_to_string(root.join("w.yaml")).unwrap();
    let mut again = start_in(_dir, root, &yaml, RunMode::Start).await;
    again.engine.send(Command::Post {
        text: "@cc third".into(),
    });
    let third = wait_for(&mut again.events, answer).await;
    assert!(
        matches!(&third, EngineEvent::Message { entry, .. } if entry.message == "done (resumed sess-cc)"),
        "{third:?}"
    );
    assert_eq!(
        messages(&again)
            .iter()
            .filter(|m| m.from == "system" && m.message == "@cc first")
            .count(),
        1,
        "the kickoff is not posted twice"
    );
    again.engine.send(Command::Shutdown);
    again.engine.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_agent_uses_the_context_tools_in_process_as_itself() {
    use llm_server::{Scripted, sse};
    use serde_json::json;
    let tool_call = sse(&[
        (
            "",
            json!({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"channel_send","arguments":"{\"message\":\"@user hello from the API agent\"}"}}]},"finish_reason":"tool_calls"}]}),
        ),
        (
            "",
            json!({"choices":[],"usage":{"prompt_tokens":70,"completion_tokens":9}}),
        ),
    ]);
    let answer = sse(&[
        (
            "",
            json!({"choices":[{"delta":{"content":"Posted."},"finish_reason":"stop"}]}),
        ),
        (
            "",
            json!({"choices":[],"usage":{"prompt_tokens":90,"completion_tokens":2}}),
        ),
    ]);
    let (url, recorded) = llm_server::start(vec![
        Scripted {
            status: 200,
            body: tool_call,
        },
        Scripted {
            status: 200,
            body: answer,
        },
    ])
    .await;
    let yaml = format!(
        "agents:\n  api:\n    model: ollama/llama3\n    base_url: {url}\n    system_prompt: You are terse.\nkickoff: \"@api say hello\"\n"
    );
    let mut run = start(&yaml, RunMode::Run).await;
    let metrics = wait_for(
        &mut run.events,
        |e| matches!(e, EngineEvent::Metrics { metrics, .. } if metrics.tokens_in > 0),
    )
    .await;
    assert!(
        matches!(metrics, EngineEvent::Metrics { metrics, .. } if metrics.tokens_in == 160 && metrics.tokens_out == 11)
    );
    let context = run.engine.context().clone();
    assert_eq!(run.engine.wait().await, RunOutcome::Completed);
    let lines: Vec<String> = context
        .read(|s| s.read(None, None).unwrap())
        .iter()
        .map(|m| format!("{}: {}", m.from, m.message))
        .collect();
    assert_eq!(
        lines,
        vec![
            "system: @api say hello",
            "api: @user hello from the API agent"
        ]
    );
    let reqs = recorded.lock().unwrap();
    assert_eq!(reqs[0].body["model"], "llama3");
    assert_eq!(reqs[0].body["messages"][0]["content"], "You are terse.");
    assert!(
        reqs[0].body["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("@api say hello")
    );
    let names: Vec<&str> = reqs[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"channel_send")
            && names.contains(&"document_write")
            && names.contains(&"workflow_agents"),
        "{names:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn front_ends_get_snapshots_documents_and_errors_through_commands() {
    let yaml = "agents:\n  cc:\n    backend: claude\n    env: { PATH: \"$FAKE_PATH\" }\ncontext:\n  config:\n    documents: [goals.md]\nkickoff: \"@cc first\"\n";
    let mut run = start(yaml, RunMode::Start).await;
    wait_for(
        &mut run.events,
        |e| matches!(e, EngineEvent::Message { entry, .. } if entry.from == "cc"),
    )
    .await;
    run.engine.send(Command::WriteDocument {
        file: None,
        content: "# Notes\nby user\n".into(),
    });
    let changed = wait_for(&mut run.events, |e| {
        matches!(e, EngineEvent::Document { .. })
    })
    .await;
    assert!(
        matches!(changed, EngineEvent::Document { path, by, .. } if path == "notes.md" && by == "user")
    );
    let content = run
        .engine
        .request(Command::ReadDocument { file: None })
        .await;
    assert_eq!(
        content,
        Ok(Reply::Document {
            file: "notes.md".into(),
            content: "# Notes\nby user\n".into()
        })
    );
    let failed = run
        .engine
        .request(Command::CreateDocument {
            file: "../escape.md".into(),
            content: String::new(),
        })
        .await;
    assert!(
        matches!(&failed, Err(RequestError::Failed(f)) if f.command == "create_document" && f.error.contains("'../escape.md' refused")),
        "{failed:?}"
    );
    let Ok(Reply::Snapshot { snapshot }) =
        run.engine.request(Command::Snapshot { messages: 10 }).await
    else {
        panic!("no snapshot")
    };
    assert_eq!(snapshot.agents[0].name, "cc");
    assert_eq!(snapshot.agents[0].backend, "claude");
    assert_eq!(snapshot.messages.len(), 2);
    assert_eq!(snapshot.documents, vec!["goals.md", "notes.md"]);
    assert_eq!(snapshot.cursors["cc"].acked, 1);
    // Replies cross process boundaries as JSON.
    let reply = Reply::Snapshot { snapshot };
    let json = serde_json::to_string(&reply).unwrap();
    let back: Reply = serde_json::from_str(&json).unwrap();
    assert_eq!(back, reply);
    run.engine.send(Command::Shutdown);
    run.engine.wait().await;
}

#[test]
fn agent_operations_run_in_order_and_are_logged() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_script(
        d,
        "worker.sh",
        "cat >/dev/null\ncat <<'OUT'\n---\nid: 1\ndone: 1\nreply: 1|on it, @helper\nsend: helper|please check the logs\nsurface: flaky auth test\nbogus: x\nack: 999\n---\nHandled.\nOUT\n",
    );
    write_script(d, "helper.sh", "cat >/dev/null\n");
    std::fs::write(
        d.join("w.yaml"),
        "agents:\n  worker:\n    command: ./worker.sh\n  helper:\n    command: ./helper.sh\nkickoff: \"@worker please handle this\"\n",
    )
    .unwrap();
    let (code, stdout, stderr) = awtui_run(&d.join("w.yaml"));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let msgs = channel(d, &["worker", "helper"]);
    let lines: Vec<String> = msgs
        .iter()
        .map(|m| {
            format!(
                "{}{}: {}",
                m.from,
                m.reply_to.map(|r| format!("↩{r}")).unwrap_or_default(),
                m.message
            )
        })
        .collect();
    assert!(
        lines.contains(&"worker↩1: on it, @helper".to_string()),
        "{lines:#?}"
    );
    assert!(
        lines.contains(&"worker: @helper please check the logs".to_string()),
        "{lines:#?}"
    );
    assert!(
        lines.contains(&"worker: @user surfaced: flaky auth test".to_string()),
        "a surfaced note reaches the person, from its agent: {lines:#?}"
    );
    assert!(
        lines.contains(&"worker: Handled.".to_string()),
        "the answer without its frontmatter: {lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("system: worker's operations, line 7 `bogus: x`")),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l
                .starts_with("system: worker's operation ack failed: there is no message #999")),
        "{lines:#?}"
    );
    let inst = d.join(".workflow/default");
    let state = std::fs::read_to_string(inst.join("ops-state.json")).unwrap();
    assert!(
        state.contains("\"done\"") && state.contains("flaky auth test"),
        "{state}"
    );
    assert!(
        std::fs::read_to_string(inst.join("surfaced.md"))
            .unwrap()
            .contains("[worker] flaky auth test")
    );
    let log = std::fs::read_to_string(inst.join("logs/ops.log")).unwrap();
    assert_eq!(
        log.lines().count(),
        6,
        "one line per operation and problem: {log}"
    );
    let archived = std::fs::read_dir(inst.join("logs/output")).unwrap().count();
    assert!(archived >= 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deferred_message_comes_back_when_due() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    write_script(
        &root,
        "worker.sh",
        "prompt=$(cat)\ncase \"$prompt\" in\n  *reminder*) echo 'back on it' ;;\n  *) printf -- '---\\nid: 1\\ndefer: 1|1s\\n---\\nlater\\n' ;;\nesac\n",
    );
    let yaml = "agents:\n  worker:\n    command: ./worker.sh\nkickoff: \"@worker do this\"\n";
    let mut run = start_in(dir, root, yaml, RunMode::Start).await;
    let back = wait_for(
        &mut run.events,
        |e| matches!(e, EngineEvent::Message { entry, .. } if entry.message == "back on it"),
    )
    .await;
    assert!(matches!(back, EngineEvent::Message { .. }));
    let msgs = messages(&run);
    let reminder = msgs
        .iter()
        .find(|m| m.from == "system" && m.message.contains("reminder"))
        .unwrap();
    assert_eq!(reminder.reply_to, Some(1));
    run.engine.send(Command::Shutdown);
    run.engine.wait().await;
}

/// The snapshot of a running engine.
async fn snapshot(run: &Run) -> awtui::engine::event::Snapshot {
    match run.engine.request(Command::Snapshot { messages: 0 }).await {
        Ok(Reply::Snapshot { snapshot }) => *snapshot,
        other => panic!("no snapshot: {other:?}"),
    }
}

/// Issue 36: a loop-guard pause survives reopening the instance. The
/// reopened engine comes back paused (its snapshot says why), starts no
/// turn and posts nothing; only the resume command (`R`, `/resume`) lets
/// the agents go on, and they do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_guard_pause_survives_reopening_until_resumed() {
    pause_survives_reopening_until_resumed(
        "",
        |p| matches!(p, PauseReason::Cycle { agents, .. } if agents == &["a", "b"]),
    )
    .await;
}

/// Issue 36: so does a budget's pause (the workflow's turns ran out).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_pause_survives_reopening_until_resumed() {
    pause_survives_reopening_until_resumed("limits:\n  max_turns: 3\n", |p| {
        matches!(p, PauseReason::Budget(Budget::Turns { limit: 3 }))
    })
    .await;
}

/// A ping-pong of `a` and `b` (with `limits`) until it pauses for a
/// reason `expected` accepts; then reopened, checked and resumed.
async fn pause_survives_reopening_until_resumed(
    limits: &str,
    expected: impl Fn(&PauseReason) -> bool,
) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    for (me, next) in [("a", "b"), ("b", "a")] {
        write_script(
            &root,
            &format!("{me}.sh"),
            &format!("cat >/dev/null\necho '@{next} over to you'\n"),
        );
    }
    let yaml = format!(
        "agents:\n  a:\n    command: ./a.sh\n  b:\n    command: ./b.sh\n{limits}kickoff: \"@a go\"\n"
    );
    let mut run = start_in(dir, root, &yaml, RunMode::Start).await;
    wait_for(
        &mut run.events,
        |e| matches!(e, EngineEvent::Paused { reason } if expected(reason)),
    )
    .await;
    run.engine.send(Command::Shutdown);
    run.engine.wait().await;
    let Run { _dir, root, .. } = run;
    let before = channel(&root, &["a", "b"]).len();

    let mut again = start_in(_dir, root, &yaml, RunMode::Start).await;
    let shot = snapshot(&again).await;
    assert!(
        shot.paused.as_ref().is_some_and(&expected),
        "reopened paused, saying why: {:?}",
        shot.paused
    );
    assert!(
        shot.agents.iter().all(|a| !a.status.in_turn()),
        "no turn starts while paused: {:?}",
        shot.agents
    );
    assert_eq!(messages(&again).len(), before, "the channel did not grow");

    again.engine.send(Command::Resume);
    wait_for(&mut again.events, |e| matches!(e, EngineEvent::Resumed)).await;
    wait_for(
        &mut again.events,
        |e| matches!(e, EngineEvent::Message { entry, .. } if entry.from == "a" || entry.from == "b"),
    )
    .await;
    assert!(messages(&again).len() > before, "the agents went on");
    again.engine.send(Command::Shutdown);
    again.engine.wait().await;
}

/// Issue 36: `defer: <id>` without a time brings the message back among
/// the agent's new messages at its next wake, once (it was kept forever).
#[test]
fn a_message_deferred_to_the_next_wake_is_new_again_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Each turn keeps its prompt; the first defers the kickoff, the
    // second (woken by the boss) fails and is retried, the last is woken
    // by the boss again.
    write_script(
        d,
        "worker.sh",
        "prompt=$(cat)\nn=$(( $(cat count 2>/dev/null || echo 0) + 1 ))\necho $n > count\nprintf '%s' \"$prompt\" > prompt$n.txt\ncase $n in\n  1) printf -- '---\\nid: 1\\ndefer: 1\\n---\\n@boss later\\n' ;;\n  2) exit 1 ;;\n  3) echo '@boss again' ;;\n  *) echo 'all done' ;;\nesac\n",
    );
    write_script(d, "boss.sh", "cat >/dev/null\necho '@worker go on'\n");
    std::fs::write(
        d.join("w.yaml"),
        "agents:\n  worker:\n    command: ./worker.sh\n  boss:\n    command: ./boss.sh\nkickoff: \"@worker do this\"\n",
    )
    .unwrap();
    let (code, stdout, stderr) = awtui_run(&d.join("w.yaml"));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let new_ids = |n: u32| -> Vec<u64> {
        let prompt = std::fs::read_to_string(d.join(format!("prompt{n}.txt"))).unwrap();
        let line = prompt
            .lines()
            .find(|l| l.starts_with("## New messages for you"))
            .unwrap_or_else(|| panic!("turn {n}: {prompt}"))
            .to_string();
        line.split(['(', ')', ',', ' '])
            .filter_map(|w| w.strip_prefix('#')?.parse().ok())
            .collect()
    };
    assert_eq!(new_ids(1), vec![1]);
    let second = new_ids(2);
    assert!(
        second.contains(&1) && second.len() == 2,
        "the deferred kickoff is new again: {second:?}"
    );
    assert_eq!(new_ids(3), second, "a failed turn's retry has it too");
    assert!(!new_ids(4).contains(&1), "once: {:?}", new_ids(4));
    let state = std::fs::read_to_string(d.join(".workflow/default/ops-state.json")).unwrap();
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    assert_eq!(state["deferred"], serde_json::json!([]), "not kept forever");
}
