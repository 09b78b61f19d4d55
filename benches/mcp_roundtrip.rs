//! Round trips of the context MCP server over loopback HTTP with the rmcp
//! client (and, for comparison, over the unix socket): `channel_send`,
//! `channel_read {limit: 50}` and `inbox_check`, with 100 and 50,000
//! messages already in the channel (written through the file store
//! directly). Prints p50 and p95 per tool; the target is p50 under 1 ms and
//! no growth with history.
//!
//! Run: `cargo bench --bench mcp_roundtrip` (optionally `-- --samples N`).

use std::time::{Duration, Instant};

use awtui::context::{ContextStore, FileStore, Since, StoreLayout};
use awtui::mcp::{McpConfig, McpHandle, McpServer, SharedContext};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value, json};

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
/// who has acknowledged all but the last few.
fn prefilled(dir: &std::path::Path, history: u64) -> FileStore {
    let mut store = FileStore::open(dir, &layout()).unwrap();
    for i in 1..=history {
        let message = if i % 10 == 0 {
            format!("message {i} for @checker: please look at the diff")
        } else {
            format!("message {i}: progress on the refactoring, nothing urgent")
        };
        store.append("other", &message).unwrap();
    }
    let mentions: Vec<u64> = (1..=history).filter(|i| i % 10 == 0).collect();
    let keep = mentions.len().saturating_sub(UNREAD as usize);
    if keep > 0 {
        store.ack("checker", Since::Id(mentions[keep - 1])).unwrap();
    }
    store
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
        let transport = StreamableHttpClientTransport::from_config(
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

async fn bench(history: u64, unix: bool, samples: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("inst");
    let store = prefilled(&dir, history);
    let handle = McpServer::start(McpConfig {
        context: SharedContext::new(Box::new(store)),
        agents: AGENTS.iter().map(|a| a.to_string()).collect(),
        instance_dir: Some(dir),
    })
    .await
    .unwrap();
    let sender = client(&handle, "sender", unix).await;
    let reader = client(&handle, "reader", unix).await;
    let checker = client(&handle, "checker", unix).await;

    let transport = if unix { "unix socket" } else { "loopback HTTP" };
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
        println!(
            "{transport:<13}  history {history:>6}  {tool:<13}  p50 {}  p95 {}  ({samples} calls)",
            ms(percentile(&times, 0.50)),
            ms(percentile(&times, 0.95)),
        );
    }
    let unread = handle.context().read(|s| s.inbox("checker").unwrap().len());
    assert_eq!(unread as u64, UNREAD.min(history / 10));
    for c in [sender, reader, checker] {
        let _ = c.cancel().await;
    }
    handle.stop().await;
}

fn main() {
    let mut samples = 2000;
    let mut argv = std::env::args().skip(1);
    while let Some(a) = argv.next() {
        if a == "--samples" {
            samples = argv.next().and_then(|n| n.parse().ok()).unwrap_or(samples);
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        for unix in [false, true] {
            for history in [100, 50_000] {
                bench(history, unix, samples).await;
            }
        }
    });
}
