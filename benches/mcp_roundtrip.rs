//! Round trips of the context MCP server over loopback HTTP with the rmcp
//! client on a keep-alive connection, as the agents' CLIs hold theirs (and,
//! for comparison, over the unix socket with rmcp's client, which opens a
//! connection per request, for the ping too): `channel_send`,
//! `channel_read {limit: 50}` and `inbox_check`, with 100 and 50,000
//! messages already in the channel. Every figure stands next to an MCP
//! `ping` and an fdatasync'd append in the same folder, measured in the same
//! run (the machine is shared; ratios hold, absolute times drift).
//!
//! Also measured (loopback HTTP): `inbox_check` with 5,000 unread, a 20 KiB
//! `document_write`, and 20 concurrent clients × 500 sends (msg/s).
//!
//! Targets (issue 15): send p50 ≤ ping + append + 0.15 ms; 20 × 500 sends
//! ≥ 5,000 msg/s; 20 KiB write p50 ≤ ping + 1 ms.
//!
//! The server runs on a runtime of its own (two workers, as in `awtui`),
//! the clients on another, like separate processes; `--one-runtime` puts
//! both on one. `--only single|heavy|concurrent` runs one part;
//! `--history N` sets the channel's size for the heavy part. The CPU
//! time per concurrent send counts clients and server together.
//!
//! Run: `cargo bench --bench mcp_roundtrip` (optionally `-- --samples N`).

use std::io::Write;
use std::time::{Duration, Instant};

use awtui::context::{ContextStore, FileStore, MemoryStore, Since, StoreLayout};
use awtui::mcp::{McpConfig, McpHandle, McpServer, SharedContext, ToolBox};
use rmcp::model::{CallToolRequestParams, ClientRequest, PingRequest};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value, json};

mod support;
use support::process_cpu;

type Client = RunningService<RoleClient, ()>;

const AGENTS: [&str; 4] = ["sender", "reader", "checker", "other"];
/// Unread mentions `checker` has while `inbox_check` is measured.
const UNREAD: u64 = 5;

fn layout() -> StoreLayout {
    StoreLayout {
        channel: "channel.md".into(),
        document: "notes.md".into(),
        documents: vec![],
        agents: AGENTS.iter().map(|a| a.to_string()).collect(),
    }
}

/// A file store with `history` messages; every tenth mentions `checker`,
/// who has acknowledged all but the last `unread`. The channel is built in
/// memory and written as JSONL in one go (same entries, no fsync per line).
fn prefilled(dir: &std::path::Path, history: u64, unread: u64) -> FileStore {
    let mut mem = MemoryStore::new(&layout()).unwrap();
    for i in 1..=history {
        let message = if i % 10 == 0 {
            format!("message {i} for @checker: please look at the diff")
        } else {
            format!("message {i}: progress on the refactoring, nothing urgent")
        };
        mem.append("other", &message).unwrap();
    }
    std::fs::create_dir_all(dir).unwrap();
    let mut out =
        std::io::BufWriter::new(std::fs::File::create(dir.join("channel.jsonl")).unwrap());
    for e in mem.read(None, None).unwrap() {
        serde_json::to_writer(&mut out, &e).unwrap();
        out.write_all(b"\n").unwrap();
    }
    out.flush().unwrap();
    drop(out);
    let mut store = FileStore::open(dir, &layout()).unwrap();
    let mentions: Vec<u64> = (1..=history).filter(|i| i % 10 == 0).collect();
    let keep = mentions.len().saturating_sub(unread as usize);
    if keep > 0 {
        store.ack("checker", Since::Id(mentions[keep - 1])).unwrap();
    }
    store
}

/// fdatasync'd appends of a channel-sized line to a file in the instance
/// folder: the floor a durable send cannot go under.
struct Probe {
    file: std::fs::File,
    line: String,
}

impl Probe {
    fn open(dir: &std::path::Path) -> Probe {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("append-probe.jsonl"))
            .unwrap();
        Probe {
            file,
            line: format!("{}\n", "x".repeat(160)),
        }
    }

    fn append(&mut self) -> Duration {
        let start = Instant::now();
        self.file.write_all(self.line.as_bytes()).unwrap();
        self.file.sync_data().unwrap();
        start.elapsed()
    }
}

async fn time_pings(client: &Client, samples: usize, warmup: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(samples);
    for i in 0..samples + warmup {
        let start = Instant::now();
        client
            .send_request(ClientRequest::PingRequest(PingRequest::default()))
            .await
            .unwrap();
        if i >= warmup {
            times.push(start.elapsed());
        }
    }
    times.sort();
    times
}

async fn client(handle: &McpHandle, agent: &str, unix: bool) -> Client {
    let token = handle.token(agent).unwrap();
    if unix {
        let transport = StreamableHttpClientTransport::from_unix_socket_with_config(
            &handle.socket_path().unwrap().to_string_lossy(),
            StreamableHttpClientTransportConfig::with_uri("http://localhost/mcp")
                .auth_header(token),
        );
        ().serve(transport).await.unwrap()
    } else {
        // Keep-alive, as the real clients do (Node's fetch pools its
        // connections); rmcp's default client opens a connection per request.
        let transport = StreamableHttpClientTransport::with_client(
            reqwest::Client::builder().build().unwrap(),
            StreamableHttpClientTransportConfig::with_uri(handle.url().to_string())
                .auth_header(token),
        );
        ().serve(transport).await.unwrap()
    }
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => unreachable!("arguments are objects"),
    }
}

async fn time_calls(
    client: &Client,
    tool: &str,
    arguments: Value,
    samples: usize,
) -> Vec<Duration> {
    let request = CallToolRequestParams::new(tool.to_string()).with_arguments(args(arguments));
    for _ in 0..samples / 10 {
        client.call_tool(request.clone()).await.unwrap();
    }
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        let start = Instant::now();
        let result = client.call_tool(request.clone()).await.unwrap();
        times.push(start.elapsed());
        assert_eq!(result.is_error, Some(false), "{tool}: {result:?}");
    }
    times.sort();
    times
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn report(label: &str, what: &str, times: &[Duration], base: Duration) {
    let p50 = percentile(times, 0.50);
    println!(
        "{label}  {what:<16}  p50 {}  p95 {}  (p50 - ping {})",
        ms(p50),
        ms(percentile(times, 0.95)),
        ms(p50.saturating_sub(base)),
    );
}

/// The runtime the server runs on: its own (two workers, as in `awtui`),
/// so the clients, like the agents' processes, have threads of their own;
/// with `--one-runtime` the clients' runtime (both share two workers).
static SERVER_RUNTIME: std::sync::OnceLock<Option<tokio::runtime::Runtime>> =
    std::sync::OnceLock::new();

fn server_runtime() -> tokio::runtime::Handle {
    match SERVER_RUNTIME.get().and_then(Option::as_ref) {
        Some(rt) => rt.handle().clone(),
        None => tokio::runtime::Handle::current(),
    }
}

async fn server(dir: &std::path::Path, history: u64, unread: u64) -> McpHandle {
    let store = prefilled(dir, history, unread);
    let dir = dir.to_path_buf();
    server_runtime()
        .spawn(async move {
            McpServer::start(McpConfig {
                context: SharedContext::new(Box::new(store)),
                agents: AGENTS.iter().map(|a| a.to_string()).collect(),
                instance_dir: Some(dir),
                tool_timeout: None,
            })
            .await
            .unwrap()
        })
        .await
        .unwrap()
}

async fn stop(handle: McpHandle) {
    server_runtime()
        .spawn(async move { handle.stop().await })
        .await
        .unwrap();
}

async fn bench(history: u64, unix: bool, samples: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("inst");
    let handle = server(&dir, history, UNREAD).await;
    let sender = client(&handle, "sender", unix).await;
    let reader = client(&handle, "reader", unix).await;
    let checker = client(&handle, "checker", unix).await;

    let transport = if unix { "unix socket" } else { "loopback HTTP" };
    let label = format!("{transport:<13}  history {history:>6}");
    // Ping, a raw fdatasync'd append and a send, interleaved so the disk's
    // and the machine's moods weigh on all three alike.
    let (mut pings, mut appends, mut sends) = (Vec::new(), Vec::new(), Vec::new());
    let mut probe = Probe::open(&dir);
    let send = CallToolRequestParams::new("channel_send")
        .with_arguments(args(json!({"message": "@reader interleaved status"})));
    for i in 0..samples + samples / 10 {
        let ping = time_pings(&reader, 1, 0).await[0];
        let append = probe.append();
        let start = Instant::now();
        sender.call_tool(send.clone()).await.unwrap();
        if i >= samples / 10 {
            pings.push(ping);
            appends.push(append);
            sends.push(start.elapsed());
        }
    }
    // The same send without MCP (the tool itself, on this thread).
    let tools = ToolBox::new(
        handle.context().clone(),
        AGENTS.iter().map(|a| a.to_string()).collect(),
    );
    let mut inside = Vec::new();
    for _ in 0..samples {
        let start = Instant::now();
        let arguments = Some(args(json!({"message": "@reader interleaved status"})));
        tools.call("sender", "channel_send", arguments).unwrap();
        inside.push(start.elapsed());
    }
    inside.sort();
    for v in [&mut pings, &mut appends, &mut sends] {
        v.sort();
    }
    let ping = percentile(&pings, 0.5);
    let append = percentile(&appends, 0.5);
    report(&label, "ping", &pings, ping);
    report(&label, "fdatasync append", &appends, ping);
    let target = ping + append + Duration::from_micros(150);
    let send50 = percentile(&sends, 0.5);
    report(&label, "send (interleaved)", &sends, ping);
    report(&label, "send tool only", &inside, Duration::ZERO);
    println!(
        "{label}  send p50 {} vs target ping + append + 0.15 ms = {}: {}",
        ms(send50),
        ms(target),
        if send50 <= target { "met" } else { "MISSED" }
    );
    let runs = [
        (
            &sender,
            "channel_send",
            json!({"message": "@reader status: tests pass, moving on to the docs"}),
        ),
        (&reader, "channel_read", json!({"limit": 50})),
        (&checker, "inbox_check", json!({})),
    ];
    for (client, tool, arguments) in runs {
        let times = time_calls(client, tool, arguments, samples).await;
        report(&label, tool, &times, ping);
    }
    let unread = handle.context().read(|s| s.inbox("checker").unwrap().len());
    assert_eq!(unread as u64, UNREAD.min(history / 10));
    for c in [sender, reader, checker] {
        let _ = c.cancel().await;
    }
    stop(handle).await;
}

/// `inbox_check` with 5,000 unread, a 20 KiB `document_write`, and 20
/// concurrent clients sending 500 messages each, over loopback HTTP.
async fn bench_heavy(samples: usize, history: u64, only_concurrent: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("inst");
    let handle = server(&dir, history, 5_000).await;
    let label = format!("{:<13}  history {history:>6}", "loopback HTTP");
    if !only_concurrent {
        inbox_and_document(&handle, &label, samples).await;
    }
    concurrent_sends(&handle, &label).await;
    stop(handle).await;
}

/// `inbox_check` with 5,000 unread and a 20 KiB `document_write`.
async fn inbox_and_document(handle: &McpHandle, label: &str, samples: usize) {
    let checker = client(handle, "checker", false).await;
    let pings = time_pings(&checker, samples, samples / 10).await;
    let ping = percentile(&pings, 0.5);
    report(label, "ping", &pings, ping);

    let inbox = time_calls(&checker, "inbox_check", json!({}), samples / 20 + 10).await;
    report(label, "inbox 5,000", &inbox, ping);
    // The same call without MCP: what the server itself spends.
    let tools = ToolBox::new(
        handle.context().clone(),
        AGENTS.iter().map(|a| a.to_string()).collect(),
    );
    let mut inside = Vec::new();
    for _ in 0..samples / 20 + 10 {
        let start = Instant::now();
        let v = tools.call("checker", "inbox_check", None).unwrap();
        std::hint::black_box(v.to_string());
        inside.push(start.elapsed());
    }
    inside.sort();
    report(label, "inbox 5,000 tool", &inside, Duration::ZERO);
    let doc = "0123456789abcdef".repeat(20 * 1024 / 16);
    let writes = time_calls(
        &checker,
        "document_write",
        json!({"file": "big.md", "content": doc}),
        samples,
    )
    .await;
    report(label, "doc write 20KiB", &writes, ping);
    let _ = checker.cancel().await;
}

/// 20 clients sending 500 messages each at once: the group commit.
async fn concurrent_sends(handle: &McpHandle, label: &str) {
    let (senders, each) = (20, 500);
    let mut clients = Vec::new();
    for _ in 0..senders {
        clients.push(client(handle, "sender", false).await);
    }
    let (start, cpu0) = (Instant::now(), process_cpu());
    let mut tasks = Vec::new();
    for c in clients {
        tasks.push(tokio::spawn(async move {
            let request = CallToolRequestParams::new("channel_send").with_arguments(args(
                json!({"message": "@reader progress report, all good"}),
            ));
            for _ in 0..each {
                let r = c.call_tool(request.clone()).await.unwrap();
                assert_eq!(r.is_error, Some(false));
            }
            let _ = c.cancel().await;
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let (elapsed, cpu) = (start.elapsed(), process_cpu() - cpu0);
    println!(
        "{label}  {:<16}  {senders} clients × {each} sends in {:.2} s = {:.0} msg/s (target ≥ 5,000); CPU {:.0} µs a send, clients included",
        "concurrent send",
        elapsed.as_secs_f64(),
        (senders * each) as f64 / elapsed.as_secs_f64(),
        cpu.as_secs_f64() * 1e6 / (senders * each) as f64,
    );
}

fn main() {
    let mut samples = 2000;
    // `--only heavy|single|concurrent` runs one part (for profiling).
    let mut only = String::new();
    let mut one_runtime = false;
    let mut heavy_history = 50_000;
    let mut argv = std::env::args().skip(1);
    while let Some(a) = argv.next() {
        match a.as_str() {
            "--samples" => samples = argv.next().and_then(|n| n.parse().ok()).unwrap_or(samples),
            "--only" => only = argv.next().unwrap_or_default(),
            "--one-runtime" => one_runtime = true,
            // The channel's size for the heavy part (50,000 by default).
            "--history" => {
                heavy_history = argv
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(heavy_history)
            }
            _ => {}
        }
    }
    let two_workers = || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    };
    SERVER_RUNTIME.get_or_init(|| (!one_runtime).then(two_workers));
    println!(
        "server and clients: {}",
        if one_runtime {
            "one runtime of 2 workers"
        } else {
            "a runtime of 2 workers each"
        }
    );
    two_workers().block_on(async {
        if only != "single" {
            bench_heavy(samples, heavy_history, only == "concurrent").await;
        }
        if only == "heavy" || only == "concurrent" {
            return;
        }
        for unix in [false, true] {
            for history in [100, 50_000] {
                bench(history, unix, samples).await;
            }
        }
    });
}
