//! Shared helpers for the MCP integration tests: start an instance in
//! process, connect rmcp clients, call tools, wait for conditions.

use std::future::Future;
use std::path::{Path, PathBuf};

use awtui::context::{FileStore, MemoryStore, StoreLayout};
use awtui::mcp::{McpConfig, McpHandle, McpServer, SharedContext};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, ResourceUpdatedNotificationParam,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

pub use crate::patience::{PATIENCE, eventually, within};

pub fn agents() -> Vec<String> {
    vec!["coder".into(), "reviewer".into(), "qa".into()]
}

pub fn layout() -> StoreLayout {
    StoreLayout {
        channel: "channel.md".into(),
        document: "notes.md".into(),
        documents: vec!["notes.md".into(), "goals.md".into()],
        agents: agents(),
    }
}

/// An instance with a file store in `<tmp>/.workflow/default`.
pub struct Instance {
    pub tmp: tempfile::TempDir,
    pub dir: PathBuf,
    pub handle: McpHandle,
}

impl Instance {
    pub async fn start() -> Instance {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(".workflow").join("default");
        let store = FileStore::open(&dir, &layout()).unwrap();
        let handle = McpServer::start(McpConfig {
            context: SharedContext::new(Box::new(store)),
            agents: agents(),
            instance_dir: Some(dir.clone()),
            tool_timeout: None,
        })
        .await
        .unwrap();
        Instance { tmp, dir, handle }
    }

    pub fn token(&self, agent: &str) -> String {
        self.handle.token(agent).unwrap().to_string()
    }

    pub fn root(&self) -> &Path {
        self.tmp.path()
    }
}

/// A server over a memory store (HTTP only).
pub async fn start_memory() -> McpHandle {
    McpServer::start(McpConfig {
        context: SharedContext::new(Box::new(MemoryStore::new(&layout()).unwrap())),
        agents: agents(),
        instance_dir: None,
        tool_timeout: None,
    })
    .await
    .unwrap()
}

/// A client handler that forwards resource notifications to a channel.
#[derive(Clone)]
pub struct Watcher {
    updates: mpsc::UnboundedSender<String>,
}

impl Watcher {
    pub fn new(updates: mpsc::UnboundedSender<String>) -> Self {
        Watcher { updates }
    }
}

impl ClientHandler for Watcher {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::default()
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.updates.send(params.uri);
    }
}

pub type Client = RunningService<RoleClient, Watcher>;

fn watcher() -> (Watcher, mpsc::UnboundedReceiver<String>) {
    let (updates, rx) = mpsc::unbounded_channel();
    (Watcher { updates }, rx)
}

/// An rmcp client over loopback HTTP, and its resource notifications.
pub async fn http_client(url: &str, token: &str) -> (Client, mpsc::UnboundedReceiver<String>) {
    let transport = StreamableHttpClientTransport::with_client(
        awtui::http_client::client(),
        StreamableHttpClientTransportConfig::with_uri(url.to_string()).auth_header(token),
    );
    let (handler, rx) = watcher();
    let client = handler.serve(transport).await.expect("client connects");
    (client, rx)
}

/// An rmcp client over the unix socket.
pub async fn unix_client(socket: &Path, token: &str) -> (Client, mpsc::UnboundedReceiver<String>) {
    let transport = StreamableHttpClientTransport::from_unix_socket_with_config(
        &socket.to_string_lossy(),
        StreamableHttpClientTransportConfig::with_uri("http://localhost/mcp").auth_header(token),
    );
    let (handler, rx) = watcher();
    let client = handler.serve(transport).await.expect("client connects");
    (client, rx)
}

pub fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("arguments must be an object, not {other}"),
    }
}

/// Calls a tool; protocol errors are returned as `Err`.
pub async fn try_call(
    client: &Client,
    tool: &str,
    arguments: Value,
) -> Result<CallToolResult, rmcp::ServiceError> {
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args(arguments)))
        .await
}

/// The JSON a tool result carries, once: one text block, no structured
/// copy (no tool declares an output schema).
pub fn payload(result: &CallToolResult) -> Value {
    assert_eq!(result.content.len(), 1, "one content block: {result:?}");
    assert!(
        result.structured_content.is_none(),
        "the data is sent once, as text: {result:?}"
    );
    let text = &result.content[0].as_text().expect("text content").text;
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// [`payload`] of a raw JSON-RPC `tools/call` result.
pub fn raw_payload(result: &Value) -> Value {
    assert!(
        result.get("structuredContent").is_none(),
        "the data is sent once, as text: {result}"
    );
    let text = result["content"][0]["text"].as_str().expect("text content");
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// Calls a tool that must succeed; returns its JSON.
pub async fn call(client: &Client, tool: &str, arguments: Value) -> Value {
    let result = try_call(client, tool, arguments.clone())
        .await
        .unwrap_or_else(|e| panic!("{tool} {arguments}: {e}"));
    assert_eq!(
        result.is_error,
        Some(false),
        "{tool} {arguments}: {result:?}"
    );
    payload(&result)
}

/// Calls a tool that must fail with a tool error; returns its message.
pub async fn call_err(client: &Client, tool: &str, arguments: Value) -> String {
    let result = try_call(client, tool, arguments.clone())
        .await
        .unwrap_or_else(|e| panic!("{tool} {arguments}: protocol error {e}"));
    assert_eq!(
        result.is_error,
        Some(true),
        "{tool} {arguments}: {result:?}"
    );
    payload(&result)["error"].as_str().unwrap().to_string()
}

/// Waits until `check` holds, polling; panics after [`PATIENCE`].
pub async fn wait_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let asked = |holds: bool| holds.then_some(());
    eventually(what, || {
        let holds = check();
        async move { asked(holds.await) }
    })
    .await
}

/// The next notification, or a panic after [`PATIENCE`].
pub async fn next_update(rx: &mut mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(PATIENCE, rx.recv())
        .await
        .expect("a notification in time")
        .expect("client still open")
}

/// Every tool and the alias, as `coder` and `reviewer`, on a fresh instance
/// (documents notes.md and goals.md, empty channel); the same scenario runs
/// over each transport.
pub async fn exercise_every_tool(coder: &Client, reviewer: &Client) {
    let mut names: Vec<String> = coder
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "channel_mentions",
            "channel_peek",
            "channel_read",
            "channel_send",
            "document_append",
            "document_create",
            "document_delete",
            "document_list",
            "document_read",
            "document_write",
            "inbox_ack",
            "inbox_check",
            "inbox_peek",
            "workflow_agents"
        ]
        .into_iter()
        .chain(awtui::mcp::task_tools::NAMES)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
    );

    // workflow_agents names the caller.
    let who = call(reviewer, "workflow_agents", json!({})).await;
    assert_eq!(who["you"], "reviewer");
    let mentions: Vec<&str> = who["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["mention"].as_str().unwrap())
        .collect();
    assert_eq!(mentions, ["@coder", "@reviewer", "@qa"]);

    // channel_send: the sender is the token's owner.
    let sent = call(
        coder,
        "channel_send",
        json!({"message": "@reviewer please look"}),
    )
    .await;
    assert_eq!(sent["id"], 1);
    assert_eq!(sent["mentions"], json!(["reviewer"]));
    assert!(sent["timestamp"].as_str().unwrap().ends_with('Z'));
    call(
        coder,
        "channel_send",
        json!({"message": "URGENT @reviewer the build is red"}),
    )
    .await;

    // channel_peek changes nothing.
    let peek = call(reviewer, "channel_peek", json!({"limit": 1})).await;
    assert_eq!(peek["entries"][0]["id"], 2);
    assert_eq!(peek["entries"][0]["from"], "coder");
    assert_eq!(call(reviewer, "inbox_peek", json!({})).await["count"], 2);

    // inbox_check: high priority first, delivered not acked.
    let inbox = call(reviewer, "inbox_check", json!({})).await;
    assert_eq!(inbox["count"], 2);
    assert_eq!(inbox["messages"][0]["id"], 2);
    assert_eq!(inbox["messages"][0]["priority"], "high");
    assert_eq!(inbox["messages"][0]["from"], "coder");
    assert_eq!(inbox["messages"][1]["priority"], "normal");
    let again = call(reviewer, "channel_mentions", json!({})).await;
    assert_eq!(again["count"], 2);
    assert_eq!(again["messages"][0]["state"], "delivered");

    // inbox_ack by id, as a string or a number.
    let acked = call(reviewer, "inbox_ack", json!({"until": "1"})).await;
    assert_eq!(acked, json!({"acked_until": 1, "unread": 1}));

    // channel_read acknowledges up to the last entry returned.
    let read = call(reviewer, "channel_read", json!({"since": 1})).await;
    assert_eq!(read["entries"].as_array().unwrap().len(), 1);
    assert_eq!(read["acked_until"], 2);
    assert_eq!(call(reviewer, "inbox_peek", json!({})).await["count"], 0);

    // since as a timestamp.
    let t1 = read["entries"][0]["timestamp"]
        .as_str()
        .unwrap()
        .to_string();
    let by_time = call(coder, "channel_read", json!({"since": t1, "limit": 5})).await;
    assert_eq!(by_time["entries"], json!([]));

    // Documents.
    call(coder, "document_write", json!({"content": "# Notes\n"})).await;
    call(
        reviewer,
        "document_append",
        json!({"content": "- looked\n"}),
    )
    .await;
    let notes = call(coder, "document_read", json!({})).await;
    assert_eq!(
        notes,
        json!({"file": "notes.md", "content": "# Notes\n- looked\n"})
    );
    let created = call(
        coder,
        "document_create",
        json!({"file": "findings/auth.md", "content": "weak hash"}),
    )
    .await;
    assert_eq!(created["file"], "findings/auth.md");
    call(
        coder,
        "document_append",
        json!({"file": "findings/auth.md", "content": "!"}),
    )
    .await;
    let auth = call(
        reviewer,
        "document_read",
        json!({"file": "findings/auth.md"}),
    )
    .await;
    assert_eq!(auth["content"], "weak hash!");
    call(
        coder,
        "document_write",
        json!({"file": "goals.md", "content": "ship"}),
    )
    .await;
    let list = call(coder, "document_list", json!({})).await;
    assert_eq!(
        list["documents"],
        json!(["findings/auth.md", "goals.md", "notes.md"])
    );
    assert_eq!(list["entry_point"], "notes.md");
    call(
        coder,
        "document_delete",
        json!({"file": "findings/auth.md"}),
    )
    .await;
    let list = call(coder, "document_list", json!({})).await;
    assert_eq!(list["documents"], json!(["goals.md", "notes.md"]));

    // Mistakes a caller can fix are tool errors; malformed calls are not.
    let e = call_err(coder, "document_read", json!({"file": "../../etc/passwd"})).await;
    assert!(e.contains("refused"), "{e}");
    let e = call_err(coder, "document_read", json!({"file": "nope.md"})).await;
    assert!(e.contains("does not exist"), "{e}");
    let e = call_err(coder, "channel_read", json!({"since": "soon"})).await;
    assert!(e.contains("neither a message id"), "{e}");
    assert!(try_call(coder, "channel_send", json!({})).await.is_err());
}
