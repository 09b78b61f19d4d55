//! `awtui mcp`, the stdio bridge, run as the real binary against an
//! instance started in this process.

use crate::support;

use std::path::Path;
use std::process::Stdio;

use rmcp::ServiceExt;
use serde_json::{Value, json};
use support::*;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

fn bridge(args: &[&str], token_env: Option<&str>) -> Command {
    bridge_of(
        Path::new(env!("CARGO_BIN_EXE_awtui")),
        &["mcp"],
        args,
        token_env,
    )
}

/// `program` with `first` then `args` (the bridge's arguments), pipes for
/// a client, no token unless given.
fn bridge_of(program: &Path, first: &[&str], args: &[&str], token_env: Option<&str>) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(first)
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

/// The bridge's arguments for `agent` of the instance under `root`.
fn args_for<'a>(root: &'a Path, agent: &'a str) -> [&'a str; 6] {
    [
        "--instance",
        "default",
        "--agent",
        agent,
        "--dir",
        root.to_str().unwrap(),
    ]
}

fn spawn_for(root: &Path, agent: &str, token_env: Option<&str>) -> Child {
    bridge(&args_for(root, agent), token_env).spawn().unwrap()
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

/// `awtui mcp` reads plainly given arguments without clap (src/main.rs,
/// `BridgeArgs::plain`); its help and usage errors still come from the
/// whole command line's grammar, word for word.
/// The program a process runs now (after any hand-over), as the kernel
/// names it.
fn program_of(child: &Child) -> std::path::PathBuf {
    std::fs::read_link(format!("/proc/{}/exe", child.id().unwrap())).unwrap()
}

/// Handshake through a raw bridge, a check that it runs `program` by then,
/// and one `channel_send` of `text`; the message's id. The bridge ends when
/// its stdin closes.
async fn send_through(mut child: Child, program: &Path, text: &str) -> (Child, u64) {
    let mut raw = Raw {
        stdin: child.stdin.take().unwrap(),
        stdout: BufReader::new(child.stdout.take().unwrap()).lines(),
    };
    raw_handshake(&mut raw).await;
    assert_eq!(program_of(&child), program, "{text}");
    raw.send(json!({
        "jsonrpc": "2.0", "id": "send", "method": "tools/call",
        "params": {"name": "channel_send", "arguments": {"message": text}}
    }))
    .await;
    let reply = raw.recv().await;
    let id = raw_payload(&reply["result"])["id"]
        .as_u64()
        .unwrap_or_else(|| panic!("{reply}"));
    drop(raw);
    (child, id)
}

/// Which program each way of starting a bridge ends up running, and that
/// each relays: `awtui mcp` hands over to the `awtui-mcp` installed beside
/// it; an `awtui` copied alone, or beside an `awtui-mcp` that is not a
/// program (a script that would run with the shell), runs the bridge
/// itself; an `awtui-mcp` of another version hands the bridge back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_runs_as_awtui_mcp_only_when_that_is_its_own_program() {
    use awtui::mcp::bridge::handover;
    let inst = Instance::start().await;
    let args = args_for(inst.root(), "qa");
    let awtui = std::fs::canonicalize(env!("CARGO_BIN_EXE_awtui")).unwrap();
    let lean = std::fs::canonicalize(env!("CARGO_BIN_EXE_awtui-mcp")).unwrap();
    let alone = tempfile::tempdir().unwrap();
    let copy = alone.path().join("awtui");
    std::fs::copy(&awtui, &copy).unwrap();
    let fake = tempfile::tempdir().unwrap();
    let fake_copy = fake.path().join("awtui");
    std::fs::copy(&awtui, &fake_copy).unwrap();
    let ran = fake.path().join("the script ran");
    let script = fake.path().join(handover::BINARY);
    std::fs::write(&script, format!("touch '{}'\n", ran.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();

    let mut stale = bridge_of(&lean, &[], &args, None);
    stale
        .env(handover::VERSION_ENV, "0.0.0-stale")
        .env(handover::PARENT_ENV, &awtui);
    // Handed back to an `awtui` that is gone since: served where it is.
    let gone = alone.path().join("gone");
    let mut orphan = bridge_of(&lean, &[], &args, None);
    orphan
        .env(handover::VERSION_ENV, "0.0.0-stale")
        .env(handover::PARENT_ENV, &gone);
    let cases = [
        ("awtui mcp", bridge(&args, None), &lean),
        (
            "a copy alone",
            bridge_of(&copy, &["mcp"], &args, None),
            &copy,
        ),
        (
            "beside a script",
            bridge_of(&fake_copy, &["mcp"], &args, None),
            &fake_copy,
        ),
        ("a stale awtui-mcp", stale, &awtui),
        ("handed back to nothing", orphan, &lean),
    ];
    for (n, (case, mut command, program)) in cases.into_iter().enumerate() {
        let child = command.spawn().unwrap();
        let (mut child, id) = send_through(child, program, case).await;
        let status = tokio::time::timeout(PATIENCE, child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(status.success(), "{case}: {status}");
        assert_eq!(id, n as u64 + 1, "{case}");
        let entry = inst.handle.context().read(|s| s.entry(id)).unwrap();
        assert_eq!((entry.from.as_str(), entry.message.as_str()), ("qa", case));
    }
    assert!(!ran.exists(), "a script named awtui-mcp was run");
    inst.handle.stop().await;
}

#[test]
fn the_bridge_s_help_and_usage_errors_are_the_command_line_s() {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_awtui"))
            .args(args)
            .env_remove("AWTUI_TOKEN")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let help = run(&["mcp", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert_eq!(help.stdout, run(&["help", "mcp"]).stdout);
    // `awtui-mcp` takes plain arguments only, and hands the rest to
    // `awtui mcp`: the same help.
    let lean = std::process::Command::new(env!("CARGO_BIN_EXE_awtui-mcp"))
        .arg("--help")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(lean.status.code(), Some(0));
    assert_eq!(lean.stdout, help.stdout);
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(
        text.contains("Usage: awtui mcp [OPTIONS] --agent <AGENT>"),
        "{text}"
    );
    for (args, says) in [
        (&["mcp"][..], "required arguments were not provided"),
        (
            &["mcp", "--agent", "a", "--dir", ".", "--workflow", "w.yaml"],
            "cannot be used with",
        ),
        (
            &["mcp", "--agent", "a", "--agent", "b"],
            "cannot be used multiple times",
        ),
        (
            &["mcp", "--agent=a", "--bogus", "b"],
            "unexpected argument '--bogus'",
        ),
    ] {
        let out = run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(says) && stderr.contains("Usage: awtui mcp"),
            "{args:?}: {stderr}"
        );
    }
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

/// How long a test waits between the pieces of a request it writes, so
/// they reach the bridge in reads of their own (any pause would do: the
/// assertions hold however the pieces are grouped).
const PAUSE: std::time::Duration = std::time::Duration::from_millis(5);

/// A raw client of the bridge whose answers are read by a task of their
/// own (so the bridge never waits on a full pipe while the test writes),
/// counting the answers to each request id.
struct Flow {
    stdin: ChildStdin,
    lines: tokio::sync::mpsc::UnboundedReceiver<Value>,
    /// Answers by request id (its JSON text): the first one, and how many.
    /// (Answers with a null id, to lines without one, are not counted.)
    answers: std::collections::HashMap<String, (Value, usize)>,
    /// Notifications seen.
    notifications: usize,
    child: Child,
}

impl Flow {
    /// A bridge for `agent`, past the handshake.
    async fn start(inst: &Instance, agent: &str) -> Flow {
        let mut child = spawn_for(inst.root(), agent, None);
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let (tx, lines) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok(Some(line)) = stdout.next_line().await {
                let value = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("the bridge wrote a line that is not JSON ({e}): {line}")
                });
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let mut flow = Flow {
            stdin,
            lines,
            answers: Default::default(),
            notifications: 0,
            child,
        };
        flow.write(
            format!(
                "{}\n",
                json!({
                    "jsonrpc": "2.0", "id": "init", "method": "initialize",
                    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
                })
            )
            .as_bytes(),
        )
        .await;
        flow.expect(&[json!("init")]).await;
        flow.write(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await;
        flow
    }

    async fn write(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// Writes `bytes` cut at `cuts` (byte offsets), each piece flushed and
    /// followed by a pause.
    async fn write_cut(&mut self, bytes: &[u8], cuts: &[usize]) {
        let mut start = 0;
        for &end in cuts.iter().chain(std::iter::once(&bytes.len())) {
            self.write(&bytes[start..end]).await;
            tokio::time::sleep(PAUSE).await;
            start = end;
        }
    }

    /// Writes a few whole pings (ids `<prefix>-0`…), so their answers flow
    /// while what follows is read; returns their ids.
    async fn pings(&mut self, prefix: &str) -> Vec<Value> {
        let ids: Vec<Value> = (0..3).map(|i| json!(format!("{prefix}-{i}"))).collect();
        let lines: String = ids
            .iter()
            .map(|id| {
                format!(
                    "{}\n",
                    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
                )
            })
            .collect();
        self.write(lines.as_bytes()).await;
        ids
    }

    /// Reads the next line the bridge wrote, counting it.
    async fn next(&mut self) -> Value {
        let value = tokio::time::timeout(PATIENCE, self.lines.recv())
            .await
            .expect("an answer in time")
            .expect("the bridge is still running");
        if value.get("method").is_some() {
            self.notifications += 1;
        } else if !value["id"].is_null() {
            let entry = self
                .answers
                .entry(value["id"].to_string())
                .or_insert((value.clone(), 0));
            entry.1 += 1;
            assert_eq!(entry.1, 1, "a second answer to one request: {value}");
        }
        value
    }

    /// Reads until each of `ids` has been answered (once); returns their
    /// answers in the order of `ids`.
    async fn expect(&mut self, ids: &[Value]) -> Vec<Value> {
        let missing = |flow: &Flow| -> Vec<String> {
            ids.iter()
                .map(Value::to_string)
                .filter(|id| !flow.answers.contains_key(id))
                .collect()
        };
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while !missing(self).is_empty() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "no answer in time to {:?}",
                missing(self)
            );
            self.next().await;
        }
        ids.iter()
            .map(|id| self.answers[&id.to_string()].0.clone())
            .collect()
    }
}

/// A `tools/call` line (with its newline).
fn tool_line(id: &str, tool: &str, arguments: Value) -> String {
    let call = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}
    });
    format!("{call}\n")
}

/// Where `needle` starts in `line`, plus `into` bytes.
fn at(line: &str, needle: &str, into: usize) -> usize {
    line.find(needle)
        .unwrap_or_else(|| panic!("{needle} not in {line}"))
        + into
}

/// Requests cut at every kind of boundary (every byte; inside a key, a
/// string and an escape; inside a multi-byte character; before the
/// newline; two requests in one write with the second cut) each reach the
/// bridge in reads of their own while earlier requests' answers and inbox
/// notifications flow: every request is answered, once, with its result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_cut_anywhere_are_framed_by_newline_while_answers_flow() {
    let inst = Instance::start().await;
    let mut flow = Flow::start(&inst, "coder").await;
    // The reviewer keeps mentioning coder meanwhile: notifications flow
    // through the bridge's server stream while requests are being read.
    let (reviewer, _) = http_client(inst.handle.url(), &inst.token("reviewer")).await;
    let stop = tokio_util::sync::CancellationToken::new();
    let noise = tokio::spawn({
        let stop = stop.clone();
        async move {
            let mut i = 0;
            while !stop.is_cancelled() {
                call(
                    &reviewer,
                    "channel_send",
                    json!({"message": format!("@coder note {i}")}),
                )
                .await;
                i += 1;
                tokio::time::sleep(PAUSE).await;
            }
            reviewer.cancel().await.unwrap();
        }
    });

    let text = "@reviewer héllo 日本語 🦀 \"quoted\" end";
    let send = |id: &str| tool_line(id, "channel_send", json!({"message": text}));
    let mut cases: Vec<(String, Vec<usize>)> = Vec::new();
    let line = send("bytes");
    let cuts = (1..line.len()).collect();
    cases.push((line, cuts));
    let line = send("key");
    let cuts = vec![at(&line, "\"method\"", 4), at(&line, "\"arguments\"", 1)];
    cases.push((line, cuts));
    let line = send("string");
    let cuts = vec![at(&line, "llo", 1), at(&line, "\\\"quoted", 1)];
    cases.push((line, cuts));
    let line = send("utf8");
    let cuts = vec![
        at(&line, "é", 1),
        at(&line, "日", 1),
        at(&line, "日", 2),
        at(&line, "🦀", 1),
        at(&line, "🦀", 2),
        at(&line, "🦀", 3),
    ];
    cases.push((line, cuts));
    let line = send("newline");
    let cuts = vec![line.len() - 1];
    cases.push((line, cuts));
    let first = send("pair-1");
    let line = format!("{first}{}", send("pair-2"));
    let cuts = vec![first.len() + 10];
    cases.push((line, cuts));

    let mut ids = Vec::new();
    for (line, cuts) in &cases {
        let case: Value = serde_json::from_str(line.lines().last().unwrap()).unwrap();
        ids.extend(flow.pings(case["id"].as_str().unwrap()).await);
        flow.write_cut(line.as_bytes(), cuts).await;
        for l in line.lines() {
            ids.push(serde_json::from_str::<Value>(l).unwrap()["id"].clone());
        }
    }
    for answer in flow.expect(&ids).await {
        assert!(answer.get("result").is_some(), "{answer}");
    }
    let sent: Vec<String> = inst.handle.context().read(|s| {
        (1..=s.len() as u64)
            .filter_map(|id| s.entry(id))
            .filter(|e| e.from == "coder")
            .map(|e| e.message)
            .collect()
    });
    assert_eq!(sent, vec![text.to_string(); 7]);
    stop.cancel();
    noise.await.unwrap();
    // Nothing answered twice, and the notifications came through.
    let last = flow.pings("last").await;
    flow.expect(&last).await;
    while flow.notifications == 0 {
        flow.next().await;
    }
}

/// A 1 MB request (well under the 4 MiB cap, many reads long) reaches the
/// instance whole while other requests are in flight, and the request
/// written right after it is answered too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_1_mb_request_arrives_whole_while_others_are_in_flight() {
    let inst = Instance::start().await;
    let mut flow = Flow::start(&inst, "coder").await;
    let content = "ünïcödé line of a big document\n".repeat(30_000);
    assert!(content.len() > 1_000_000);
    let line = tool_line(
        "big",
        "document_write",
        json!({"file": "big.md", "content": content}),
    );
    let next = tool_line(
        "next",
        "channel_send",
        json!({"message": "after the big one"}),
    );
    let both = format!("{line}{next}");
    // Pieces of an odd size (cutting characters too), the last one
    // holding the end of the big request and the start of the next.
    let cuts: Vec<usize> = (1..)
        .map(|i| i * 65_537)
        .take_while(|&c| c < line.len() + 20)
        .collect();
    let mut ids = flow.pings("before").await;
    flow.write_cut(both.as_bytes(), &cuts).await;
    ids.extend([json!("big"), json!("next")]);
    for answer in flow.expect(&ids).await {
        assert!(answer.get("result").is_some(), "{answer}");
        assert_ne!(answer["result"]["isError"], true, "{answer}");
    }
    let (reviewer, _) = http_client(inst.handle.url(), &inst.token("reviewer")).await;
    let read = call(&reviewer, "document_read", json!({"file": "big.md"})).await;
    assert!(
        read["content"] == content,
        "the document differs from what was sent"
    );
    reviewer.cancel().await.unwrap();
    let last = flow.pings("last").await;
    flow.expect(&last).await;
}

/// A line that is not JSON gets a parse error (-32700, id null), JSON
/// that is not one message an invalid request error (-32600); a line
/// over the 4 MiB cap gets an error naming the cap (with its id when the
/// id comes before the bulk, else null), is never relayed, and is not
/// held whole; the bridge goes on with the next line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_and_over_cap_lines_are_answered_and_the_bridge_goes_on() {
    let inst = Instance::start().await;
    let mut flow = Flow::start(&inst, "coder").await;
    let error = |answer: &Value| {
        answer["error"]["message"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let parse_error = |answer: &Value| {
        assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
        assert_eq!(answer["id"], Value::Null, "{answer}");
        assert_eq!(answer["error"]["code"], -32700, "{answer}");
    };

    flow.write(b"this is not json\n").await;
    parse_error(&flow.next().await);
    // Cut off mid-object, and cut in pieces.
    flow.write_cut(b"{\"jsonrpc\":\"2.0\",\"id\":5,\n", &[9])
        .await;
    parse_error(&flow.next().await);
    // JSON, but not one message: invalid requests.
    for line in [
        &b"42\n"[..],
        b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n",
    ] {
        flow.write(line).await;
        let answer = flow.next().await;
        assert_eq!(answer["id"], Value::Null, "{answer}");
        assert_eq!(answer["error"]["code"], -32600, "{answer}");
    }

    let pid = flow.child.id().unwrap();
    let idle = proc_status(pid, "VmRSS");
    let bulk = "x".repeat(awtui::mcp::MAX_BODY);
    let early = tool_line("early-id", "channel_send", json!({"message": bulk}));
    flow.write(early.as_bytes()).await;
    let answer = flow.next().await;
    assert_eq!(answer["id"], "early-id", "{answer}");
    assert!(error(&answer).contains("4 MiB"), "{answer}");
    assert!(
        error(&answer).contains(&(early.len() - 1).to_string()),
        "{answer}"
    );

    let late = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{{\"name\":\"channel_send\",\"arguments\":{{\"message\":\"{bulk}\"}}}},\"id\":\"late-id\"}}\n"
    );
    flow.write_cut(late.as_bytes(), &[1_000_000, 3_000_000])
        .await;
    let answer = flow.next().await;
    assert_eq!(answer["id"], Value::Null, "{answer}");
    assert!(error(&answer).contains("4 MiB"), "{answer}");

    // Not JSON and ten times over the cap: the same, and the bridge held
    // no more of it than the cap.
    let mut junk = vec![b'#'; 10 * awtui::mcp::MAX_BODY];
    junk.push(b'\n');
    flow.write(&junk).await;
    let answer = flow.next().await;
    assert_eq!(answer["id"], Value::Null, "{answer}");
    assert!(error(&answer).contains("41943040 bytes"), "{answer}");
    let peak = proc_status(pid, "VmHWM");
    eprintln!("bridge RSS idle {idle} kB, peak after over-long lines {peak} kB");
    assert!(
        peak <= idle + 16 * 1024,
        "the bridge grew from {idle} kB to {peak} kB dropping over-long lines"
    );

    let after = tool_line("after", "channel_send", json!({"message": "still here"}));
    flow.write(after.as_bytes()).await;
    let answer = flow.expect(&[json!("after")]).await.remove(0);
    assert_eq!(raw_payload(&answer["result"])["id"], 1, "{answer}");
    assert_eq!(inst.handle.context().read(|s| s.len()), 1);
}
