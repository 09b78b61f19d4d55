//! `awtui mcp`: a stdio MCP server for clients that only start stdio
//! servers. It relays JSON-RPC between its stdin/stdout and the running
//! instance's endpoint (the unix socket when there is one, else loopback
//! HTTP), authenticated with the agent's token, as bytes: results stream
//! through without being held whole ([`super::relay`]), and an idle bridge
//! wakes nobody (it learns that the instance stopped from a connection the
//! kernel closes, not from polling). It never serves a context of
//! its own: when the instance is not running it says so and exits with
//! [`EXIT_NOT_RUNNING`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use std::sync::Arc;

use hyper::body::Bytes;
use hyper::{Method, StatusCode};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::task::JoinSet;

use super::endpoint::Endpoint;
use super::identity::{self, TOKEN_ENV};
use super::relay::{Addr, Answer, SESSION_HEADER, SseLines, Upstream};
use crate::context::mentions;
use crate::workflow;

/// Exit code when the instance is not running (no endpoint, or nobody
/// answers on it), or stops while relaying.
pub const EXIT_NOT_RUNNING: u8 = 3;
/// Exit code for bad arguments, a missing token or a refused one.
pub const EXIT_USAGE: u8 = 2;
/// Exit code for other failures while relaying.
pub const EXIT_FAILED: u8 = 1;

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

/// The few fields of a client message the bridge looks at (the rest is
/// skipped, not stored).
#[derive(Debug, Default, serde::Deserialize)]
struct Head {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    method: Option<String>,
}

/// Stdout, one message at a time.
type Out = Arc<tokio::sync::Mutex<tokio::io::Stdout>>;

/// Why relaying one message failed.
#[derive(Debug)]
enum Fail {
    /// The instance could not be reached, or the answer broke off.
    Up(std::io::Error),
    /// The instance refused the token.
    Refused,
    /// An HTTP error whose body is not a JSON-RPC message.
    Status(StatusCode, String),
    /// Stdout is gone.
    Stdout(std::io::Error),
}

impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fail::Up(e) => write!(f, "{e}"),
            Fail::Refused => write!(f, "401 Unauthorized"),
            Fail::Status(s, text) => write!(f, "HTTP {s}: {text}"),
            Fail::Stdout(e) => write!(f, "cannot write to stdout: {e}"),
        }
    }
}

/// Largest error or handshake body the bridge reads whole.
const SMALL_BODY: usize = 1024 * 1024;

/// Copies an answer's messages to stdout as they arrive, one line each,
/// holding stdout only while a message is being written.
async fn copy_answer(answer: &mut Answer, out: &Out) -> Result<(), Fail> {
    let sse = answer.is_sse();
    let mut lines = SseLines::default();
    let mut guard = None;
    let mut buf = Vec::new();
    while let Some(chunk) = answer.chunk().await {
        let chunk = chunk.map_err(Fail::Up)?;
        buf.clear();
        let finished = if sse {
            lines.feed(&chunk, &mut buf)
        } else {
            buf.extend_from_slice(&chunk);
            0
        };
        if !buf.is_empty() {
            if guard.is_none() {
                guard = Some(out.lock().await);
            }
            if let Some(g) = guard.as_mut() {
                g.write_all(&buf).await.map_err(Fail::Stdout)?;
            }
        }
        if finished > 0
            && !lines.in_message()
            && let Some(mut g) = guard.take()
        {
            g.flush().await.map_err(Fail::Stdout)?;
        }
    }
    if let Some(mut g) = guard.take() {
        if !sse {
            g.write_all(b"\n").await.map_err(Fail::Stdout)?;
        }
        g.flush().await.map_err(Fail::Stdout)?;
    }
    Ok(())
}

/// Writes one whole message line.
async fn write_line(out: &Out, line: &[u8]) -> Result<(), Fail> {
    let mut g = out.lock().await;
    g.write_all(line).await.map_err(Fail::Stdout)?;
    g.write_all(b"\n").await.map_err(Fail::Stdout)?;
    g.flush().await.map_err(Fail::Stdout)
}

/// The handshake's answer: kept whole (it is small) to learn the session
/// and protocol version, then relayed.
async fn relay_handshake(up: &Upstream, answer: &mut Answer, out: &Out) -> Result<(), Fail> {
    let session = answer.response.headers().get(SESSION_HEADER).cloned();
    let body = answer.text(SMALL_BODY).await.map_err(Fail::Up)?;
    let mut text = Vec::new();
    if answer.is_sse() {
        SseLines::default().feed(&body, &mut text);
    } else {
        text = body;
        text.push(b'\n');
    }
    let version = text
        .split(|b| *b == b'\n')
        .filter_map(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
        .find_map(|v| v["result"]["protocolVersion"].as_str().map(str::to_string));
    up.set_session(session, version.as_deref());
    let mut g = out.lock().await;
    g.write_all(&text).await.map_err(Fail::Stdout)?;
    g.flush().await.map_err(Fail::Stdout)
}

/// POSTs one client message and relays what comes back.
async fn exchange(up: &Upstream, out: &Out, body: Bytes, initialize: bool) -> Result<(), Fail> {
    let mut answer = up.send(Method::POST, body).await.map_err(Fail::Up)?;
    let status = answer.status();
    if status == StatusCode::UNAUTHORIZED {
        return Err(Fail::Refused);
    }
    if !status.is_success() {
        let text = answer.text(SMALL_BODY).await.map_err(Fail::Up)?;
        let text = String::from_utf8_lossy(&text).trim().to_string();
        // A JSON-RPC error from the server is the client's answer.
        let rpc = serde_json::from_str::<serde_json::Value>(&text)
            .is_ok_and(|v| v.get("jsonrpc").is_some());
        if rpc {
            write_line(out, text.as_bytes()).await?;
            up.release(answer);
            return Ok(());
        }
        return Err(Fail::Status(status, text));
    }
    if initialize {
        relay_handshake(up, &mut answer, out).await?;
    } else {
        copy_answer(&mut answer, out).await?;
    }
    up.release(answer);
    Ok(())
}

/// Relays one message after the handshake; a fatal problem (stdout gone,
/// instance gone) is returned, anything else answers the request with an
/// error so the client does not wait forever.
async fn relay_message(
    up: Arc<Upstream>,
    out: Out,
    body: Bytes,
    id: Option<serde_json::Value>,
    instance: String,
) -> Option<BridgeError> {
    let e = match exchange(&up, &out, body, false).await {
        Ok(()) => return None,
        Err(Fail::Stdout(e)) => {
            return Some(BridgeError::Failed(format!("cannot write to stdout: {e}")));
        }
        Err(e) => e,
    };
    if let Err(gone) = up.connect().await {
        return Some(not_running(&instance, &up, &gone));
    }
    crate::errln!("awtui mcp: a message could not be relayed: {e}");
    let id = id?;
    let error = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32603, "message": format!("awtui mcp could not relay this request: {e}")}
    });
    match write_line(&out, error.to_string().as_bytes()).await {
        Err(Fail::Stdout(e)) => Some(BridgeError::Failed(format!("cannot write to stdout: {e}"))),
        _ => None,
    }
}

/// Relays the server's own stream (notifications such as resource
/// updates) for as long as it lasts.
async fn relay_server_stream(up: Arc<Upstream>, out: Out) -> Option<BridgeError> {
    let mut answer = up.send(Method::GET, Bytes::new()).await.ok()?;
    if !answer.status().is_success() || !answer.is_sse() {
        return None;
    }
    match copy_answer(&mut answer, &out).await {
        Err(Fail::Stdout(e)) => Some(BridgeError::Failed(format!("cannot write to stdout: {e}"))),
        // It ends with the instance; the watch tells.
        _ => None,
    }
}

fn not_running(instance: &str, up: &Upstream, e: &std::io::Error) -> BridgeError {
    BridgeError::NotRunning(format!(
        "instance '{instance}' is not running: nothing answers on {} ({e})",
        up.addr()
    ))
}

/// Returns once the instance is gone (its idle watch connection closed and
/// a new one is refused). Wakes only when a connection closes.
async fn gone(up: &Upstream) -> std::io::Error {
    loop {
        let started = tokio::time::Instant::now();
        if let Err(e) = up.watch().await {
            return e;
        }
        // Closed while the instance still answers (not expected): look
        // again, at most once a second.
        tokio::time::sleep_until(started + Duration::from_secs(1)).await;
    }
}

/// Relays between stdio and the instance until stdin closes (success) or
/// the instance goes away.
async fn relay(
    up: Arc<Upstream>,
    target: &Target,
    agent: &str,
    instance: &str,
) -> Result<(), BridgeError> {
    let out: Out = Arc::new(tokio::sync::Mutex::new(tokio::io::stdout()));
    let mut stdin = BufReader::new(tokio::io::stdin());
    // The handshake (initialize, then notifications/initialized; or the
    // first request of a session-less client) must reach the server in
    // order and be accepted before anything else is sent.
    let mut in_order = 1;
    let mut tasks: JoinSet<Option<BridgeError>> = JoinSet::new();
    let watch = gone(&up);
    tokio::pin!(watch);
    let result = loop {
        let mut line = Vec::new();
        tokio::select! {
            read = stdin.read_until(b'\n', &mut line) => {
                if !matches!(read, Ok(n) if n > 0) {
                    break Ok(());
                }
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let head: Head = serde_json::from_slice(&line).unwrap_or_default();
                let initialize = head.method.as_deref() == Some("initialize");
                if initialize {
                    in_order = 2;
                }
                let body = Bytes::from(line);
                if in_order > 0 {
                    in_order -= 1;
                    match exchange(&up, &out, body, initialize).await {
                        Ok(()) => {}
                        Err(Fail::Stdout(e)) => {
                            break Err(BridgeError::Failed(format!("cannot write to stdout: {e}")));
                        }
                        Err(Fail::Refused) => {
                            break Err(BridgeError::Usage(format!(
                                "instance '{instance}' refused the token of agent '{agent}'"
                            )));
                        }
                        Err(e) => {
                            break Err(startup_failure(target, instance, agent, &e.to_string()).await);
                        }
                    }
                    if in_order == 0 {
                        tasks.spawn(relay_server_stream(Arc::clone(&up), Arc::clone(&out)));
                    }
                } else {
                    tasks.spawn(relay_message(
                        Arc::clone(&up),
                        Arc::clone(&out),
                        body,
                        head.id,
                        instance.to_string(),
                    ));
                }
            }
            Some(joined) = tasks.join_next(), if !tasks.is_empty() => {
                if let Ok(Some(fatal)) = joined {
                    break Err(fatal);
                }
            }
            e = &mut watch => break Err(not_running(instance, &up, &e)),
        }
    };
    // Let the server close the session; do not wait long for a dead one.
    let _ = tokio::time::timeout(
        Duration::from_secs(2),
        up.send(Method::DELETE, Bytes::new()),
    )
    .await;
    result
}

/// Runs the bridge for `args`; returns when stdin closes or the instance
/// goes away.
pub async fn run(args: &BridgeArgs) -> Result<(), BridgeError> {
    let target = locate(args)?;
    let instance = instance_name(&target.instance_dir);
    probe(&target, &instance).await?;
    let addr = match &target.endpoint.socket {
        Some(socket) => Addr::Unix(socket.clone()),
        None => Addr::Tcp(target.endpoint.authority().unwrap_or_default().to_string()),
    };
    let up = Upstream::new(addr, &target.token).map_err(|e| {
        BridgeError::Usage(format!(
            "the token of agent '{}' cannot be sent: {e}",
            args.agent
        ))
    })?;
    relay(Arc::new(up), &target, &args.agent, &instance).await
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
