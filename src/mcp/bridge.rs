//! `awtui mcp`: a stdio MCP server for clients that only start stdio
//! servers. It relays JSON-RPC between its stdin/stdout and the running
//! instance's endpoint (the unix socket when there is one, else loopback
//! HTTP), authenticated with the agent's token. It never serves a context of
//! its own: when the instance is not running it says so and exits with
//! [`EXIT_NOT_RUNNING`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ServerJsonRpcMessage};
use rmcp::service::{RoleClient, RoleServer};
use rmcp::transport::async_rw::TransportAdapterAsyncRW;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport, Transport};
use tokio::task::JoinSet;

use super::endpoint::Endpoint;
use super::identity::{self, TOKEN_ENV};
use super::transport::MCP_PATH;
use crate::context::mentions;
use crate::workflow;

/// Exit code when the instance is not running (no endpoint, or nobody
/// answers on it), or stops while relaying.
pub const EXIT_NOT_RUNNING: u8 = 3;
/// Exit code for bad arguments, a missing token or a refused one.
pub const EXIT_USAGE: u8 = 2;
/// Exit code for other failures while relaying.
pub const EXIT_FAILED: u8 = 1;

/// How often the bridge checks that the instance still answers, so it
/// exits soon after the instance stops even when idle.
const LIVENESS_INTERVAL: Duration = Duration::from_secs(1);

/// The command-line arguments of `awtui mcp`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BridgeArgs {
    /// The running instance's name (see [`instance_dir`] when absent).
    pub instance: Option<String>,
    /// Who to act as; picks the token file.
    pub agent: String,
    /// The folder holding `.workflow/<instance>/` (default: the current
    /// directory), or the instance folder itself.
    pub dir: Option<PathBuf>,
    /// A workflow file whose context settings say where the instance lives.
    pub workflow: Option<PathBuf>,
}

/// Why the bridge stopped without success.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// No endpoint file, nobody answers on it, or the instance stopped.
    #[error("{0}")]
    NotRunning(String),
    /// Bad arguments, no token, or a token the instance refused.
    #[error("{0}")]
    Usage(String),
    /// Anything else (stdout closed, no runtime).
    #[error("{0}")]
    Failed(String),
}

impl BridgeError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            BridgeError::NotRunning(_) => EXIT_NOT_RUNNING,
            BridgeError::Usage(_) => EXIT_USAGE,
            BridgeError::Failed(_) => EXIT_FAILED,
        }
    }
}

/// The instance folder named by the arguments. Without `--instance`: the
/// workflow's own instance (`--workflow`), or the only instance of the
/// folder that has an endpoint.
pub fn instance_dir(args: &BridgeArgs) -> Result<PathBuf, BridgeError> {
    let check = |name: &str| {
        if workflow::setup::is_valid_instance_name(name) {
            Ok(())
        } else {
            Err(BridgeError::Usage(
                workflow::setup::SetupError::InstanceName(name.to_string()).to_string(),
            ))
        }
    };
    if let Some(name) = &args.instance {
        check(name)?;
    }
    if let Some(file) = &args.workflow {
        let loaded = workflow::load(file).map_err(|e| BridgeError::Usage(e.to_string()))?;
        let name = crate::instance::owner::resolve(&loaded.workflow, args.instance.as_deref());
        check(&name)?;
        return workflow::setup::context_dir(&loaded.workflow, &name)
            .map_err(|e| BridgeError::Usage(e.to_string()))?
            .ok_or_else(|| {
                BridgeError::Usage(format!(
                    "{}: the context is not kept in a folder (memory or disabled), so there is no \
                     instance endpoint to reach; connect to the instance's HTTP URL instead",
                    file.display()
                ))
            });
    }
    let base = match &args.dir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()
            .map_err(|e| BridgeError::Failed(format!("cannot read the current directory: {e}")))?,
    };
    if base.join(super::endpoint::ENDPOINT_FILE).exists() {
        return Ok(base);
    }
    let instances = base.join(".workflow");
    if let Some(name) = &args.instance {
        return Ok(instances.join(name));
    }
    let mut served: Vec<PathBuf> = std::fs::read_dir(&instances)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.join(super::endpoint::ENDPOINT_FILE).exists())
                .collect()
        })
        .unwrap_or_default();
    served.sort();
    match served.len() {
        1 => Ok(served.remove(0)),
        0 => Err(BridgeError::NotRunning(format!(
            "no instance is running in {}",
            instances.display()
        ))),
        _ => Err(BridgeError::Usage(format!(
            "several instances in {}: name one with --instance ({})",
            instances.display(),
            served
                .iter()
                .filter_map(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Where to connect and with which token.
#[derive(Clone, Debug)]
pub struct Target {
    /// The instance folder that was found.
    pub instance_dir: PathBuf,
    /// Its recorded endpoint.
    pub endpoint: Endpoint,
    /// The agent's token.
    pub token: String,
}

/// The instance's name as its folder says it.
fn instance_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Finds the running instance's endpoint and the agent's token.
pub fn locate(args: &BridgeArgs) -> Result<Target, BridgeError> {
    if !mentions::is_valid_name(&args.agent) {
        return Err(BridgeError::Usage(format!(
            "'{}' is not a valid agent name",
            args.agent
        )));
    }
    let dir = instance_dir(args)?;
    let name = instance_name(&dir);
    let not_running =
        |why: String| BridgeError::NotRunning(format!("instance '{name}' is not running: {why}"));
    let endpoint = Endpoint::read(&dir)
        .map_err(|e| {
            not_running(format!(
                "cannot read {}: {e}",
                dir.join("mcp.json").display()
            ))
        })?
        .ok_or_else(|| {
            not_running(format!(
                "{} does not exist",
                dir.join(super::endpoint::ENDPOINT_FILE).display()
            ))
        })?;
    let token = match std::env::var(TOKEN_ENV) {
        Ok(t) if !t.trim().is_empty() => t.trim().to_string(),
        _ => identity::read_token_file(&dir, &args.agent).map_err(|e| {
            BridgeError::Usage(format!(
                "no token for agent '{}': set {TOKEN_ENV} or make sure {} is readable ({e})",
                args.agent,
                identity::tokens_dir(&dir).join(&args.agent).display()
            ))
        })?,
    };
    Ok(Target {
        instance_dir: dir,
        endpoint,
        token,
    })
}

/// Checks that something answers on the endpoint, so a dead instance is
/// reported before any message is read.
async fn probe(target: &Target, instance: &str) -> Result<(), BridgeError> {
    let refused = |what: &str, e: std::io::Error| {
        BridgeError::NotRunning(format!(
            "instance '{instance}' is not running: nothing answers on {what} ({e})"
        ))
    };
    match &target.endpoint.socket {
        Some(socket) => tokio::net::UnixStream::connect(socket)
            .await
            .map(drop)
            .map_err(|e| refused(&socket.display().to_string(), e)),
        None => {
            let authority = target.endpoint.authority().unwrap_or_default();
            tokio::net::TcpStream::connect(authority)
                .await
                .map(drop)
                .map_err(|e| refused(&target.endpoint.url, e))
        }
    }
}

/// Explains why the handshake could not be relayed: the instance went
/// away, or it refused the token, or something else.
async fn startup_failure(target: &Target, instance: &str, agent: &str, error: &str) -> BridgeError {
    if let Err(gone) = probe(target, instance).await {
        return gone;
    }
    if error.contains("Auth") || error.contains("401") {
        return BridgeError::Usage(format!(
            "instance '{instance}' refused the token of agent '{agent}': {error}"
        ));
    }
    BridgeError::Failed(format!(
        "cannot relay the handshake to instance '{instance}': {error}"
    ))
}

fn is_initialize(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, ClientJsonRpcMessage::Request(r)
        if matches!(r.request, ClientRequest::InitializeRequest(_)))
}

/// Relays between stdio and `up` until stdin closes (success) or the
/// instance goes away.
async fn relay<T>(
    mut up: T,
    target: &Target,
    agent: &str,
    instance: &str,
) -> Result<(), BridgeError>
where
    T: Transport<RoleClient>,
{
    let mut down =
        IntoTransport::<RoleServer, std::io::Error, TransportAdapterAsyncRW>::into_transport(
            rmcp::transport::stdio_pipes(),
        );
    // The handshake (initialize, then notifications/initialized; or the
    // first request of a session-less client) must reach the server in
    // order and be accepted before anything else is sent.
    let mut in_order = 1;
    let mut sends = JoinSet::new();
    // Notice an instance that stopped while nothing was being relayed.
    let mut watch = tokio::time::interval(LIVENESS_INTERVAL);
    watch.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let result = loop {
        tokio::select! {
            message = down.receive() => {
                let Some(message) = message else { break Ok(()) };
                if is_initialize(&message) {
                    in_order = 2;
                }
                let request_id = match &message {
                    ClientJsonRpcMessage::Request(r) => Some(r.id.clone()),
                    _ => None,
                };
                let send = up.send(message);
                if in_order > 0 {
                    in_order -= 1;
                    if let Err(e) = send.await {
                        break Err(startup_failure(target, instance, agent, &e.to_string()).await);
                    }
                } else {
                    sends.spawn(async move { (request_id, send.await) });
                }
            }
            message = up.receive() => {
                let Some(message) = message else {
                    break Err(BridgeError::NotRunning(format!(
                        "instance '{instance}' closed the connection: it stopped"
                    )));
                };
                if let Err(e) = down.send(message).await {
                    break Err(BridgeError::Failed(format!("cannot write to stdout: {e}")));
                }
            }
            Some(joined) = sends.join_next(), if !sends.is_empty() => {
                let Ok((request_id, Err(e))) = joined else { continue };
                if let Err(gone) = probe(target, instance).await {
                    break Err(gone);
                }
                crate::errln!("awtui mcp: a message could not be relayed: {e}");
                // Answer the request so the client does not wait forever.
                if let Some(id) = request_id {
                    let error = ErrorData::internal_error(
                        format!("awtui mcp could not relay this request: {e}"),
                        None,
                    );
                    if let Err(e) = down.send(ServerJsonRpcMessage::error(error, Some(id))).await {
                        break Err(BridgeError::Failed(format!("cannot write to stdout: {e}")));
                    }
                }
            }
            _ = watch.tick() => {
                if let Err(gone) = probe(target, instance).await {
                    break Err(gone);
                }
            }
        }
    };
    // Let the server close the session; do not wait long for a dead one.
    let _ = tokio::time::timeout(Duration::from_secs(2), up.close()).await;
    result
}

/// Runs the bridge for `args`; returns when stdin closes or the instance
/// goes away.
pub async fn run(args: &BridgeArgs) -> Result<(), BridgeError> {
    let target = locate(args)?;
    let instance = instance_name(&target.instance_dir);
    probe(&target, &instance).await?;
    let config = |uri: String| {
        StreamableHttpClientTransportConfig::with_uri(uri).auth_header(target.token.clone())
    };
    match &target.endpoint.socket {
        Some(socket) => {
            // The URI only gives the Host header and path on a socket.
            let config = config(format!("http://localhost{MCP_PATH}"));
            let up = StreamableHttpClientTransport::from_unix_socket_with_config(
                &socket.to_string_lossy(),
                config,
            );
            relay(up, &target, &args.agent, &instance).await
        }
        None => {
            let up =
                StreamableHttpClientTransport::from_config(config(target.endpoint.url.clone()));
            relay(up, &target, &args.agent, &instance).await
        }
    }
}

/// `awtui mcp`: runs the bridge on its own runtime and turns the outcome
/// into an exit code, with the reason on stderr.
pub fn main(args: BridgeArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            crate::errln!("awtui mcp: cannot start: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let outcome = runtime.block_on(run(&args));
    // A read of stdin may still be pending; do not wait for it.
    runtime.shutdown_background();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            crate::errln!("awtui mcp: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
