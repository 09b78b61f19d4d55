//! `awtui mcp`, the stdio bridge, run as the real binary against an
//! instance started in this process.

mod support;

use std::path::Path;
use std::process::Stdio;

use rmcp::ServiceExt;
use serde_json::{Value, json};
use support::*;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

fn bridge(args: &[&str], token_env: Option<&str>) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_awtui"));
    cmd.arg("mcp")
        .args(args)
        .env_remove("AWTUI_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(t) = token_env {
        cmd.env("AWTUI_TOKEN", t);
    }
    cmd
}

fn spawn_for(root: &Path, agent: &str, token_env: Option<&str>) -> Child {
    bridge(
        &[
            "--instance",
            "default",
            "--agent",
            agent,
            "--dir",
            root.to_str().unwrap(),
        ],
        token_env,
    )
    .spawn()
    .unwrap()
}

async fn rmcp_over(mut child: Child) -> (Client, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let stdout = child.stdout.take().unwrap();
    let stdin = child.stdin.take().unwrap();
    // The child is killed when the test drops the transport's pipes and
    // the bridge sees stdin close; keep it alive until then.
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let watcher = support::Watcher::new(tx);
    let client = watcher
        .serve((stdout, stdin))
        .await
        .expect("handshake through the bridge");
    (client, rx)
}

/// Runs the bridge to completion with empty stdin; returns its exit code
/// and stderr.
async fn run_to_end(mut cmd: Command) -> (i32, String) {
    let out = tokio::time::timeout(PATIENCE, cmd.stdin(Stdio::null()).output())
        .await
        .expect("the bridge exits")
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridge_relays_tools_errors_and_notifications() {
    let inst = Instance::start().await;
    let (coder, mut updates) = rmcp_over(spawn_for(inst.root(), "coder", None)).await;

    assert_eq!(
        call(&coder, "workflow_agents", json!({})).await["you"],
        "coder"
    );
    let sent = call(
        &coder,
        "channel_send",
        json!({"message": "@reviewer via stdio"}),
    )
    .await;
    assert_eq!(sent["mentions"], json!(["reviewer"]));
    assert_eq!(
        inst.handle.context().read(|s| s.entry(1)).unwrap().from,
        "coder"
    );

    let e = call_err(&coder, "document_read", json!({"file": "../secret"})).await;
    assert!(e.contains("refused"), "{e}");
    assert!(try_call(&coder, "channel_send", json!({})).await.is_err());
    assert_eq!(
        coder.list_all_tools().await.unwrap().len(),
        14 + awtui::mcp::task_tools::NAMES.len()
    );

    // Notifications come back through the bridge too.
    let (reviewer, _) = http_client(inst.handle.url(), &inst.token("reviewer")).await;
    call(&reviewer, "channel_send", json!({"message": "@coder done"})).await;
    assert_eq!(next_update(&mut updates).await, "awtui://inbox/coder");
    let inbox = call(&coder, "inbox_check", json!({})).await;
    assert_eq!(inbox["messages"][0]["message"], "@coder done");

    coder.cancel().await.unwrap();
    inst.handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_works_through_the_bridge() {
    let inst = Instance::start().await;
    let (coder, _) = rmcp_over(spawn_for(inst.root(), "coder", None)).await;
    let (reviewer, _) = rmcp_over(spawn_for(inst.root(), "reviewer", None)).await;
    exercise_every_tool(&coder, &reviewer).await;
    coder.cancel().await.unwrap();
    reviewer.cancel().await.unwrap();
    inst.handle.stop().await;
}

struct Raw {
    stdin: ChildStdin,
    stdout: tokio::io::Lines<BufReader<ChildStdout>>,
}

impl Raw {
    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(PATIENCE, self.stdout.next_line())
            .await
            .expect("a reply in time")
            .unwrap()
            .expect("the bridge is still running");
        serde_json::from_str(&line).unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_json_rpc_through_the_bridge_with_the_token_from_the_environment() {
    let inst = Instance::start().await;
    // The token comes from AWTUI_TOKEN even without a token file.
    let token = inst.token("qa");
    std::fs::remove_file(awtui::mcp::identity::tokens_dir(&inst.dir).join("qa")).unwrap();
    let mut child = spawn_for(inst.root(), "qa", Some(&token));
    let mut raw = Raw {
        stdin: child.stdin.take().unwrap(),
        stdout: BufReader::new(child.stdout.take().unwrap()).lines(),
    };
    raw.send(json!({
        "jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    }))
    .await;
    let init = raw.recv().await;
    assert_eq!(init["id"], "init");
    assert_eq!(init["result"]["serverInfo"]["name"], "awtui");
    raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    raw.send(json!({"jsonrpc": "2.0", "id": "probe-1", "method": "no/such/method"}))
        .await;
    let reply = raw.recv().await;
    assert_eq!(reply["id"], "probe-1");
    assert_eq!(reply["error"]["code"], -32601);

    raw.send(json!({
        "jsonrpc": "2.0", "id": "send-1", "method": "tools/call",
        "params": {"name": "channel_send", "arguments": {"message": "raw hello"}}
    }))
    .await;
    let reply = raw.recv().await;
    assert_eq!(reply["id"], "send-1");
    assert_eq!(raw_payload(&reply["result"])["id"], 1);
    assert_eq!(
        inst.handle.context().read(|s| s.entry(1)).unwrap().from,
        "qa"
    );

    // Closing stdin ends the bridge cleanly.
    drop(raw);
    let status = tokio::time::timeout(PATIENCE, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
    inst.handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridge_finds_the_instance_from_the_workflow_file() {
    let inst = Instance::start().await;
    let workflow = inst.root().join("review.yaml");
    std::fs::write(
        &workflow,
        "agents:\n  coder:\n    model: anthropic/x\n  reviewer:\n    model: anthropic/x\n  qa:\n    model: anthropic/x\n",
    )
    .unwrap();
    let child = bridge(
        &[
            "--instance",
            "default",
            "--agent",
            "reviewer",
            "--workflow",
            workflow.to_str().unwrap(),
        ],
        None,
    )
    .spawn()
    .unwrap();
    let (reviewer, _) = rmcp_over(child).await;
    assert_eq!(
        call(&reviewer, "workflow_agents", json!({})).await["you"],
        "reviewer"
    );
    reviewer.cancel().await.unwrap();
    inst.handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridge_refuses_when_the_instance_is_not_running() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_str().unwrap();
    let args = ["--instance", "default", "--agent", "coder", "--dir", root];

    // No instance folder at all.
    let (code, stderr) = run_to_end(bridge(&args, Some("x"))).await;
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("instance 'default' is not running"),
        "{stderr}"
    );
    assert!(stderr.contains("mcp.json does not exist"), "{stderr}");

    // An endpoint file left behind by a crashed instance.
    let dir = tmp.path().join(".workflow/default");
    std::fs::create_dir_all(&dir).unwrap();
    let stale = awtui::mcp::Endpoint {
        url: "http://127.0.0.1:9/mcp".into(),
        socket: Some(dir.join("mcp.sock")),
        pid: 0,
    };
    stale.write(&dir).unwrap();
    let (code, stderr) = run_to_end(bridge(&args, Some("x"))).await;
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("nothing answers"), "{stderr}");

    // The same after a clean stop: the endpoint file is gone.
    let inst = Instance::start().await;
    let root = inst.root().to_path_buf();
    inst.handle.stop().await;
    let (code, stderr) = run_to_end(bridge(
        &[
            "--instance",
            "default",
            "--agent",
            "coder",
            "--dir",
            root.to_str().unwrap(),
        ],
        None,
    ))
    .await;
    assert_eq!(code, 3, "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridge_with_a_wrong_token_fails_and_writes_nothing() {
    let inst = Instance::start().await;
    let mut child = spawn_for(inst.root(), "coder", Some(&"0".repeat(64)));
    let mut stdin = child.stdin.take().unwrap();
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    });
    stdin
        .write_all(format!("{init}\n").as_bytes())
        .await
        .unwrap();
    stdin.flush().await.unwrap();
    let out = tokio::time::timeout(PATIENCE, child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("refused"), "{stderr}");
    assert_eq!(inst.handle.context().read(|s| s.len()), 0);

    // A missing token is a usage error before anything is relayed.
    std::fs::remove_file(awtui::mcp::identity::tokens_dir(&inst.dir).join("coder")).unwrap();
    let (code, stderr) = run_to_end(bridge(
        &[
            "--instance",
            "default",
            "--agent",
            "coder",
            "--dir",
            inst.root().to_str().unwrap(),
        ],
        None,
    ))
    .await;
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no token for agent 'coder'"), "{stderr}");
    inst.handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridge_exits_when_the_instance_stops() {
    let inst = Instance::start().await;
    let mut child = spawn_for(inst.root(), "coder", None);
    let mut raw = Raw {
        stdin: child.stdin.take().unwrap(),
        stdout: BufReader::new(child.stdout.take().unwrap()).lines(),
    };
    raw.send(json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    }))
    .await;
    assert_eq!(raw.recv().await["id"], 1);
    raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(raw.recv().await["id"], 2);
    inst.handle.stop().await;
    // The bridge may already be gone, so a failed write is fine.
    let _ = raw
        .stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n")
        .await;
    let started = std::time::Instant::now();
    let mut stderr = child.stderr.take().unwrap();
    let status = tokio::time::timeout(PATIENCE, child.wait())
        .await
        .expect("the bridge exits")
        .unwrap();
    let mut text = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut text)
        .await
        .unwrap();
    assert_eq!(status.code(), Some(3), "{text}");
    assert!(text.contains("instance 'default'"), "{text}");
    assert!(started.elapsed() < PATIENCE);
}

/// A field of `/proc/<pid>/status`, in kB (`VmRSS`, `VmHWM`) or a count.
fn proc_status(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// Handshake of a raw client through the bridge.
async fn raw_handshake(raw: &mut Raw) {
    raw.send(json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    }))
    .await;
    assert_eq!(raw.recv().await["id"], 0);
    raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
}

/// A 5,000-item inbox (several MB of JSON) streams through the bridge: its
/// peak memory stays within 8 MiB of what it held idle, however often.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_5000_item_inbox_streams_through_a_bridge_that_stays_small() {
    let inst = Instance::start().await;
    let body = "x".repeat(300);
    inst.handle
        .context()
        .transact(|tx| {
            for i in 0..5_000 {
                tx.append("reviewer", &format!("@coder item {i} {body}"))?;
            }
            Ok::<_, awtui::context::ContextError>(())
        })
        .unwrap();
    let mut child = spawn_for(inst.root(), "coder", None);
    let pid = child.id().unwrap();
    let mut raw = Raw {
        stdin: child.stdin.take().unwrap(),
        stdout: BufReader::new(child.stdout.take().unwrap()).lines(),
    };
    raw_handshake(&mut raw).await;
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .await;
    assert_eq!(raw.recv().await["id"], 1);
    let idle = proc_status(pid, "VmRSS");
    for round in 0..3 {
        let id = 10 + round;
        raw.send(json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "inbox_peek", "arguments": {}}
        }))
        .await;
        let line = tokio::time::timeout(PATIENCE, raw.stdout.next_line())
            .await
            .expect("the inbox in time")
            .unwrap()
            .unwrap();
        assert!(line.len() > 1_500_000, "{} bytes", line.len());
        let reply: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(reply["id"], id);
        assert_eq!(raw_payload(&reply["result"])["count"], 5_000);
    }
    let peak = proc_status(pid, "VmHWM");
    eprintln!("bridge RSS idle {idle} kB, peak over 3 inboxes of 5,000 {peak} kB");
    assert!(
        peak <= idle + 8 * 1024,
        "the bridge grew from {idle} kB to {peak} kB relaying a 5,000-item inbox"
    );
    drop(raw);
    let _ = child.wait().await;
    inst.handle.stop().await;
}

/// Measures wakeups (voluntary context switches) of an idle bridge and of
/// the instance serving it, over 5 s after the handshake
/// (`AWTUI_MEASURE_SECS` to change). A measurement,
/// not a test: `cargo test --test mcp_bridge -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement (takes 5 s of wall time); run with --ignored"]
async fn measure_idle_bridge_wakeups() {
    let inst = Instance::start().await;
    let mut child = spawn_for(inst.root(), "coder", None);
    let pid = child.id().unwrap();
    let mut raw = Raw {
        stdin: child.stdin.take().unwrap(),
        stdout: BufReader::new(child.stdout.take().unwrap()).lines(),
    };
    raw_handshake(&mut raw).await;
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .await;
    assert_eq!(raw.recv().await["id"], 1);
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    // Every thread of the bridge, and of this process (the instance), by
    // thread name.
    let switches = |pid: &str| -> std::collections::BTreeMap<String, u64> {
        let mut by_name = std::collections::BTreeMap::new();
        for t in std::fs::read_dir(format!("/proc/{pid}/task"))
            .unwrap()
            .flatten()
        {
            let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
            let field = |name: &str| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(|v| v.trim().to_string())
                    .unwrap_or_default()
            };
            let n: u64 = field("voluntary_ctxt_switches:").parse().unwrap_or(0);
            *by_name.entry(field("Name:")).or_default() += n;
        }
        by_name
    };
    let delta = |a: &std::collections::BTreeMap<String, u64>,
                 b: &std::collections::BTreeMap<String, u64>| {
        b.iter()
            .map(|(k, v)| (k.clone(), v.saturating_sub(a.get(k).copied().unwrap_or(0))))
            .filter(|(_, d)| *d > 0)
            .collect::<Vec<_>>()
    };
    let me = std::process::id().to_string();
    let (b0, i0) = (switches(&pid.to_string()), switches(&me));
    let secs = std::env::var("AWTUI_MEASURE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    std::thread::sleep(std::time::Duration::from_secs(secs));
    let (b1, i1) = (switches(&pid.to_string()), switches(&me));
    let (bd, id) = (delta(&b0, &b1), delta(&i0, &i1));
    let rate = |d: &[(String, u64)]| d.iter().map(|(_, n)| n).sum::<u64>() as f64 / secs as f64;
    println!(
        "idle bridge over {secs} s: {:.2} wakeups/s in the bridge {bd:?}; {:.2}/s in the instance process {id:?} (this test's own sleeping thread included)",
        rate(&bd),
        rate(&id)
    );
    drop(raw);
    let _ = child.wait().await;
    inst.handle.stop().await;
}
