//! The context MCP server: the channel, inboxes and documents of one running
//! instance, served to its agents over streamable HTTP on loopback and on a
//! unix socket, with one secret token per participant as identity.
//!
//! - [`McpServer::start`] starts it and returns an [`McpHandle`] (URL,
//!   socket, tokens, change events, stop).
//! - [`tools`] is the tool logic, callable without HTTP.
//! - [`bridge`] is `awtui mcp`, a stdio relay for clients that only start
//!   stdio servers.
//!
//! Decisions where the seed leaves a gap or falls into a known trap:
//! - Identity is the bearer token only (`user` has one too); requests
//!   without a known token get HTTP 401 before any MCP handling.
//! - `channel_read` and `channel_peek` return the newest `limit` entries
//!   after `since` (default [`tools::DEFAULT_LIMIT`], at most
//!   [`tools::MAX_LIMIT`]) and say when older ones were left out.
//!   `channel_read` acknowledges up to the last entry returned, as in the
//!   seed, but never past an unread mention it did not show: such mentions
//!   stay in the inbox instead of being silently dropped.
//! - Cursors and acknowledgements use message ids; a timestamp given as
//!   `since`/`until` is turned into the id of the last message at or before
//!   it.
//! - Results are JSON objects, sent once, as text content (no tool declares
//!   an output schema, so there is no structured copy).

pub mod approval_tools;
pub mod bridge;
pub mod endpoint;
pub mod identity;
pub mod notify;
pub mod registry;
pub mod relay;
pub mod resources;
pub mod results;
pub mod schema;
pub mod server;
pub mod task_tools;
pub mod tool;
pub mod tools;
pub mod transport;
pub mod workspace_tools;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The instance's state lives in the context, below the server; the
/// names stay reachable here for the server's users.
pub use crate::context::shared::{self, ContextEvent, DocumentChange, SharedContext};
pub use endpoint::Endpoint;
pub use identity::{Caller, Tokens};
pub use tools::ToolBox;

use crate::context::mentions;

/// The largest piece of agent-produced text awtui takes in whole; the
/// store defines it (the server only enforces it on requests).
pub use crate::context::MAX_BODY;

/// A request over [`MAX_BODY`]: one wording wherever one is refused (the
/// server's 413, the stdio bridge, `awtui ctx`), so every refusal names
/// the limit and the size instead of a bare transport error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub struct TooLarge {
    /// Its size, when known (a stream cut off at the limit has none).
    pub bytes: Option<u64>,
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.bytes {
            Some(n) => write!(f, "the request is {n} bytes, over ")?,
            None => write!(f, "the request is over ")?,
        }
        write!(
            f,
            "the {} MiB limit on one MCP request ({MAX_BODY} bytes)",
            MAX_BODY / (1024 * 1024)
        )
    }
}

/// Why the server could not start or stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// Agent names must be valid mention names (they are also file names).
    #[error(
        "'{0}' cannot be an agent name: use letters, digits, '_' and '-', starting with a letter"
    )]
    BadAgentName(String),
    /// `user`, `system` and `all` mean something else in mentions.
    #[error("'{0}' is reserved and cannot be an agent name")]
    ReservedAgentName(String),
    /// Tokens could not be made or stored.
    #[error(transparent)]
    Identity(#[from] identity::IdentityError),
    /// A listener could not be bound.
    #[error("cannot listen on {what}: {source}")]
    Listen {
        /// The address or socket path.
        what: String,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// Another server already serves this instance folder.
    #[error("{dir} is already served at {url}: is this instance already running?")]
    AlreadyRunning {
        /// The instance folder.
        dir: PathBuf,
        /// Where the other server answers.
        url: String,
    },
    /// The endpoint file could not be written.
    #[error("cannot write {path}: {source}")]
    Endpoint {
        /// The endpoint file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
}

/// What the server needs: the context, who takes part, and where the
/// instance lives.
#[derive(Clone, Debug)]
pub struct McpConfig {
    /// The context the tools act on.
    pub context: SharedContext,
    /// The workflow's agents (`user` is added automatically).
    pub agents: Vec<String>,
    /// The instance folder. With one, the server also listens on
    /// `<dir>/mcp.sock`, writes `<dir>/mcp.json` and the token files
    /// (outside `<dir>`: [`identity::tokens_dir`]); without one (memory contexts) it serves HTTP only and keeps tokens in
    /// memory.
    pub instance_dir: Option<PathBuf>,
    /// How long one tool call may run before it is answered with
    /// `DEADLINE_EXCEEDED` (None: [`DEFAULT_TOOL_TIMEOUT`]).
    pub tool_timeout: Option<std::time::Duration>,
}

/// How long a tool call may run by default. Every tool does bounded work;
/// this answers the caller when one does not (a git filter that waits on
/// the network, a disk that stalls), so no client waits forever.
pub const DEFAULT_TOOL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// Entry point of the context MCP server.
#[derive(Debug)]
pub struct McpServer;

/// A running server. Dropping it stops serving (without waiting); call
/// [`McpHandle::stop`] to wait until it has stopped.
#[derive(Debug)]
pub struct McpHandle {
    url: String,
    /// The loopback TCP port of [`url`](McpHandle::url) (what a host's
    /// forward leads to).
    port: u16,
    socket: Option<PathBuf>,
    tokens: Tokens,
    context: SharedContext,
    instance_dir: Option<PathBuf>,
    hub: Arc<notify::Hub>,
    stop: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
    /// Whether the token and endpoint files in the instance folder are ours
    /// to remove (not those of another instance that was found running).
    owns_files: bool,
}

impl McpServer {
    /// Starts serving `config.context`: picks a free loopback port, binds
    /// the unix socket and records both in the instance folder.
    pub async fn start(config: McpConfig) -> Result<McpHandle, McpError> {
        for name in &config.agents {
            if mentions::RESERVED_NAMES.contains(&name.as_str()) {
                return Err(McpError::ReservedAgentName(name.clone()));
            }
            if !mentions::is_valid_name(name) {
                return Err(McpError::BadAgentName(name.clone()));
            }
        }
        let store_agents = config.context.read(|s| s.agents().to_vec());
        if store_agents != config.agents {
            tracing::warn!(
                "the MCP server's agents {:?} differ from the context's {:?}: mentions follow the context",
                config.agents,
                store_agents
            );
        }
        let tokens = Tokens::generate(&config.agents)?;
        let stop = CancellationToken::new();
        let hub = Arc::new(notify::Hub::default());
        let toolbox = ToolBox::new(config.context.clone(), config.agents.clone());
        let app = transport::router(
            server::ContextServer::new(
                toolbox,
                hub.clone(),
                config.tool_timeout.unwrap_or(DEFAULT_TOOL_TIMEOUT),
            ),
            Arc::new(tokens.clone()),
            stop.child_token(),
        );

        let mut handle = McpHandle {
            url: String::new(),
            port: 0,
            socket: None,
            tokens,
            context: config.context.clone(),
            instance_dir: config.instance_dir.clone(),
            hub: hub.clone(),
            stop: stop.clone(),
            tasks: Vec::new(),
            owns_files: false,
        };
        handle.tasks.push(tokio::spawn(notify::run(
            hub,
            config.context.subscribe(),
            stop.child_token(),
        )));
        let (addr, task) = transport::serve_tcp(app.clone(), stop.child_token())
            .await
            .map_err(|source| McpError::Listen {
                what: "127.0.0.1".into(),
                source,
            })?;
        handle.url = format!("http://{addr}{}", transport::MCP_PATH);
        handle.port = addr.port();
        handle.tasks.push(task);

        if let Some(dir) = &config.instance_dir {
            refuse_if_running(dir).await?;
            let path = dir.join(endpoint::SOCKET_FILE);
            if path.as_os_str().len() > endpoint::MAX_SOCKET_PATH {
                tracing::warn!(
                    "{} is too long for a unix socket; serving MCP over HTTP only",
                    path.display()
                );
            } else {
                let (socket, task) = transport::serve_unix(app, &path, stop.child_token())
                    .await
                    .map_err(|source| McpError::Listen {
                        what: path.display().to_string(),
                        source,
                    })?;
                handle.socket = Some(socket);
                handle.tasks.push(task);
            }
            handle.owns_files = true;
            handle.tokens.write_files(dir)?;
            let endpoint = Endpoint {
                url: handle.url.clone(),
                socket: handle.socket.clone(),
                pid: std::process::id(),
            };
            endpoint.write(dir).map_err(|source| McpError::Endpoint {
                path: dir.join(endpoint::ENDPOINT_FILE),
                source,
            })?;
        }
        tracing::info!("MCP server listening on {}", handle.url);
        Ok(handle)
    }
}

/// Fails when the endpoint recorded in `dir` answers: another server is
/// serving this instance, and its files must not be replaced. A recorded
/// endpoint nobody answers on was left by a crash and is replaced.
async fn refuse_if_running(dir: &Path) -> Result<(), McpError> {
    let Ok(Some(endpoint)) = Endpoint::read(dir) else {
        return Ok(());
    };
    let answers = match (&endpoint.socket, endpoint.authority()) {
        (Some(socket), _) => tokio::net::UnixStream::connect(socket).await.is_ok(),
        (None, Some(authority)) => tokio::net::TcpStream::connect(authority).await.is_ok(),
        (None, None) => false,
    };
    if answers {
        return Err(McpError::AlreadyRunning {
            dir: dir.to_path_buf(),
            url: endpoint.url,
        });
    }
    Ok(())
}

impl McpHandle {
    /// The streamable HTTP URL, such as `http://127.0.0.1:41234/mcp`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The loopback TCP port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The unix socket serving the same service, if any.
    pub fn socket_path(&self) -> Option<&Path> {
        self.socket.as_deref()
    }

    /// Every participant's token (agents and `user`).
    pub fn tokens(&self) -> &Tokens {
        &self.tokens
    }

    /// `agent`'s token, to put in its environment or MCP config.
    pub fn token(&self, agent: &str) -> Option<&str> {
        self.tokens.get(agent)
    }

    /// The shared context being served.
    pub fn context(&self) -> &SharedContext {
        &self.context
    }

    /// A receiver of every change made to the context from now on (by
    /// agents through MCP, or by anyone through the same [`SharedContext`]).
    pub fn events(&self) -> broadcast::Receiver<ContextEvent> {
        self.context.subscribe()
    }

    /// Number of open MCP sessions (protocol versions with sessions).
    pub fn session_count(&self) -> usize {
        self.hub.session_count()
    }

    /// Stops serving, waits (a few seconds at most) for the listeners to
    /// close, and removes the endpoint file, socket and token files.
    pub async fn stop(mut self) {
        self.stop.cancel();
        for task in std::mem::take(&mut self.tasks) {
            let abort = task.abort_handle();
            if tokio::time::timeout(Duration::from_secs(5), task)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
        self.clean_up();
    }

    fn clean_up(&mut self) {
        if let Some(socket) = self.socket.take() {
            let _ = std::fs::remove_file(socket);
        }
        if std::mem::take(&mut self.owns_files)
            && let Some(dir) = &self.instance_dir
        {
            Endpoint::remove(dir);
            self.tokens.remove_files(dir);
        }
    }
}

impl Drop for McpHandle {
    fn drop(&mut self) {
        self.stop.cancel();
        for task in &self.tasks {
            task.abort();
        }
        self.clean_up();
    }
}
