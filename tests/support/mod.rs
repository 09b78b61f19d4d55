//! Shared helpers for the MCP integration tests: start an instance in
//! process, connect rmcp clients, call tools, wait for conditions.
#![allow(dead_code)]

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use awtui::context::{FileStore, MemoryStore, StoreLayout};
use awtui::mcp::{McpConfig, McpHandle, McpServer, SharedContext};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, ResourceUpdatedNotificationParam,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Map, Value};
use tokio::sync::mpsc;

/// Generous limit for anything a test waits for.
pub const PATIENCE: Duration = Duration::from_secs(30);

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
    let transport = StreamableHttpClientTransport::from_config(
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

/// Calls a tool that must succeed; returns its structured JSON, after
/// checking the text content says the same.
pub async fn call(client: &Client, tool: &str, arguments: Value) -> Value {
    let result = try_call(client, tool, arguments.clone())
        .await
        .unwrap_or_else(|e| panic!("{tool} {arguments}: {e}"));
    assert_eq!(
        result.is_error,
        Some(false),
        "{tool} {arguments}: {result:?}"
    );
    let structured = result
        .structured_content
        .clone()
        .expect("structured content");
    let text = result.content[0]
        .as_text()
        .expect("text content")
        .text
        .clone();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), structured);
    structured
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
    result.structured_content.unwrap()["error"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Waits until `check` holds, polling; panics after [`PATIENCE`].
pub async fn wait_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The next notification, or a panic after [`PATIENCE`].
pub async fn next_update(rx: &mut mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(PATIENCE, rx.recv())
        .await
        .expect("a notification in time")
        .expect("client still open")
}
