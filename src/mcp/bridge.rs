//! `awtui mcp`: a stdio MCP server for clients that only start stdio
//! servers. It relays JSON-RPC between its stdin/stdout and the running
//! instance's endpoint (the unix socket when there is one, else loopback
//! HTTP), authenticated with the agent's token, as bytes: results stream
//! through without being held whole ([`super::relay`]), and an idle bridge
//! wakes nobody (it learns that the instance stopped from a connection the
//! kernel closes, not from polling). It never serves a context of
//! its own: when the instance is not running it says so and exits with
//! [`EXIT_NOT_RUNNING`].
//!
//! Stdin is cut into lines by a task of its own ([`read_lines`]), however
//! the client's writes are split, and never more than the instance takes
//! in one request ([`super::MAX_BODY`]) is held. A line that is not JSON,
//! not one message (a batch), or longer than that, is answered by the
//! bridge with a JSON-RPC error (-32700; -32600, naming the limit for a
//! long one), never relayed or dropped silently.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use std::sync::Arc;

use hyper::body::Bytes;
use hyper::{Method, StatusCode};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

mod args;
pub mod handover;
pub use args::BridgeArgs;

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
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
}

/// What the reader hands the relay loop: stdin cut at newlines.
#[derive(Debug, PartialEq)]
enum Input {
    /// One line, without its newline, at most [`super::MAX_BODY`] bytes
    /// (the most the instance takes in one request).
    Line(Vec<u8>),
    /// A longer line, thrown away as it was read: its length, and its id
    /// when its start has one.
    TooLong { bytes: u64, id: Option<Value> },
}

/// Cuts a byte stream into [`Input`]s holding at most `cap` bytes: a line
/// that grows past the cap is thrown away up to its newline, so a client
/// cannot make the bridge buffer without bound.
#[derive(Debug)]
struct Framer {
    cap: usize,
    line: Vec<u8>,
    /// The length so far and the id of a line being thrown away.
    dropped: Option<(u64, Option<Value>)>,
}

impl Framer {
    fn new(cap: usize) -> Framer {
        Framer {
            cap,
            line: Vec::new(),
            dropped: None,
        }
    }

    /// Takes `buf` up to and including its first newline; returns how many
    /// bytes it took and the line that ended there, if one did.
    fn feed(&mut self, buf: &[u8]) -> (usize, Option<Input>) {
        let end = buf.iter().position(|b| *b == b'\n');
        let piece = &buf[..end.unwrap_or(buf.len())];
        if let Some((bytes, _)) = &mut self.dropped {
            *bytes += piece.len() as u64;
        } else if self.line.len() + piece.len() > self.cap {
            let bytes = (self.line.len() + piece.len()) as u64;
            let room = self.cap - self.line.len();
            self.line.reserve_exact(room);
            self.line.extend_from_slice(&piece[..room]);
            let id = id_of(&self.line);
            self.line = Vec::new();
            self.dropped = Some((bytes, id));
        } else {
            self.line.extend_from_slice(piece);
        }
        match end {
            Some(i) => (i + 1, Some(self.finish())),
            None => (buf.len(), None),
        }
    }

    /// Ends the line in progress (at its newline, or at the end of input).
    fn finish(&mut self) -> Input {
        match self.dropped.take() {
            Some((bytes, id)) => Input::TooLong { bytes, id },
            None => Input::Line(std::mem::take(&mut self.line)),
        }
    }

    /// Whether nothing of a line has been read since the last one ended.
    fn is_empty(&self) -> bool {
        self.line.is_empty() && self.dropped.is_none()
    }
}

/// The id of a JSON-RPC message from the start of its text (cut
/// anywhere), when `"id"` and the next member's name come before the cut
/// (so a number cut short is not taken for the id): members are read in
/// order and skipped, not stored, until the id.
fn id_of(start: &[u8]) -> Option<Value> {
    use serde::Deserializer as _;
    use serde::de::{IgnoredAny, MapAccess, Visitor};
    struct Find<'a>(&'a mut Option<Value>);
    impl<'de> Visitor<'de> for Find<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON-RPC message")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<String>()? {
                if key == "id" {
                    let id = map.next_value()?;
                    map.next_key::<IgnoredAny>()?;
                    *self.0 = Some(id);
                    return Ok(());
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let mut id = None;
    // The cut (or what follows the id) is an error after the id is found.
    let _ = serde_json::Deserializer::from_slice(start).deserialize_map(Find(&mut id));
    id
}

/// Reads stdin into lines for the relay loop, in a task of its own: the
/// loop also waits for answers, and a read into a buffer that it dropped
/// for them would lose the part of a line read so far. Ends with stdin
/// (a last line without a newline still counts) or with the loop.
async fn read_lines(stdin: impl AsyncRead + Unpin, lines: mpsc::Sender<Input>) {
    let mut stdin = BufReader::with_capacity(64 * 1024, stdin);
    let mut framer = Framer::new(super::MAX_BODY);
    loop {
        let buf = match stdin.fill_buf().await {
            Ok(buf) if !buf.is_empty() => buf,
            _ => {
                if !framer.is_empty() {
                    let _ = lines.send(framer.finish()).await;
                }
                return;
            }
        };
        let (taken, line) = framer.feed(buf);
        stdin.consume(taken);
        if let Some(line) = line
            && lines.send(line).await.is_err()
        {
            return;
        }
    }
}

/// A JSON-RPC error answer, for a message the bridge answers itself.
fn rpc_error(id: Option<Value>, code: i64, message: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message}
    })
    .to_string()
}

/// JSON-RPC's code for a message that is not JSON.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for a message that is not a valid request.
const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's code for an error of the server (here: of relaying).
const INTERNAL_ERROR: i64 = -32603;

/// What becomes of one line read from stdin.
#[derive(Debug)]
enum Verdict {
    /// Relayed to the instance, as read.
    Relay(Head, Vec<u8>),
    /// Blank: nothing to do.
    Skip,
    /// Answered by the bridge itself, with this line: over the instance's
    /// limit, not JSON, or not one message.
    Answer(String),
}

/// Judges one line. A JSON object is relayed for the server to judge;
/// any other JSON (a batch, which the server does not take, or a number)
/// is answered as an invalid request.
fn judge(input: Input) -> Verdict {
    let line = match input {
        Input::TooLong { bytes, id } => {
            let why = super::TooLarge { bytes: Some(bytes) };
            let message = format!("{why}; awtui mcp did not relay it");
            return Verdict::Answer(rpc_error(id, INVALID_REQUEST, &message));
        }
        Input::Line(line) => line,
    };
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let object = line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    match serde_json::from_slice::<Head>(&line) {
        Ok(head) if object => Verdict::Relay(head, line),
        Err(e) if e.is_syntax() || e.is_eof() => {
            let message = format!("Parse error: the line is not JSON ({e})");
            Verdict::Answer(rpc_error(None, PARSE_ERROR, &message))
        }
        _ => {
            let id = if object { id_of(&line) } else { None };
            let message = "Invalid Request: one JSON-RPC message, a JSON object, per line \
                           (batches are not supported)";
            Verdict::Answer(rpc_error(id, INVALID_REQUEST, message))
        }
    }
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
    id: Option<Value>,
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
    let error = rpc_error(
        Some(id),
        INTERNAL_ERROR,
        &format!("awtui mcp could not relay this request: {e}"),
    );
    match write_line(&out, error.as_bytes()).await {
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
    let (lines_in, mut lines) = mpsc::channel(1);
    let reader = tokio::spawn(read_lines(tokio::io::stdin(), lines_in));
    // The handshake (initialize, then notifications/initialized; or the
    // first request of a session-less client) must reach the server in
    // order and be accepted before anything else is sent.
    let mut in_order = 1;
    let mut tasks: JoinSet<Option<BridgeError>> = JoinSet::new();
    let watch = gone(&up);
    tokio::pin!(watch);
    let result = loop {
        tokio::select! {
            input = lines.recv() => {
                let Some(input) = input else {
                    break Ok(());
                };
                let (head, line) = match judge(input) {
                    Verdict::Relay(head, line) => (head, line),
                    Verdict::Skip => continue,
                    Verdict::Answer(answer) => {
                        if let Err(e) = write_line(&out, answer.as_bytes()).await {
                            break Err(BridgeError::Failed(e.to_string()));
                        }
                        continue;
                    }
                };
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
    reader.abort();
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Feeds `stream` in pieces of `size` bytes; returns what came out.
    fn frame(stream: &[u8], size: usize, cap: usize) -> Vec<Input> {
        let mut framer = Framer::new(cap);
        let mut out = Vec::new();
        for piece in stream.chunks(size) {
            let mut piece = piece;
            while !piece.is_empty() {
                let (taken, line) = framer.feed(piece);
                out.extend(line);
                piece = &piece[taken..];
            }
        }
        if !framer.is_empty() {
            out.push(framer.finish());
        }
        out
    }

    #[test]
    fn lines_are_the_same_however_the_stream_is_cut() {
        let stream = "{\"id\":1,\"m\":\"h\u{e9}llo \u{1f980}\"}\n\n{\"id\":2}\nlast".as_bytes();
        let expected = vec![
            Input::Line("{\"id\":1,\"m\":\"h\u{e9}llo \u{1f980}\"}".into()),
            Input::Line(Vec::new()),
            Input::Line(b"{\"id\":2}".to_vec()),
            Input::Line(b"last".to_vec()),
        ];
        for size in 1..=stream.len() {
            assert_eq!(frame(stream, size, 64), expected, "pieces of {size}");
        }
    }

    #[test]
    fn a_line_over_the_cap_is_dropped_with_its_size_and_id_and_the_next_is_whole() {
        let long = "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"params\":\"xxxxxxxxxxxxxxxxxxxxxxxx\"}";
        let stream =
            format!("{long}\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nok\n");
        for size in 1..=stream.len() {
            assert_eq!(
                frame(stream.as_bytes(), size, 40),
                vec![
                    Input::TooLong {
                        bytes: long.len() as u64,
                        id: Some(json!("a"))
                    },
                    Input::TooLong {
                        bytes: 62,
                        id: None
                    },
                    Input::Line(b"ok".to_vec()),
                ],
                "pieces of {size}"
            );
        }
        // Exactly the cap is a line.
        assert_eq!(frame(b"1234\n", 2, 4), vec![Input::Line(b"1234".to_vec())]);
    }

    #[test]
    fn the_id_is_read_from_a_start_cut_anywhere_after_it() {
        let text = r#"{"jsonrpc":"2.0","id":{"n":[1,2]},"method":"tools/call","params":{}}"#;
        let after = text.find(r#":"tools/call"#).unwrap();
        for cut in after..=text.len() {
            assert_eq!(id_of(&text.as_bytes()[..cut]), Some(json!({"n": [1, 2]})));
        }
        for cut in 0..after {
            assert_eq!(id_of(&text.as_bytes()[..cut]), None, "cut at {cut}");
        }
        // A number cut short is not an id; one that ends the message is.
        assert_eq!(id_of(br#"{"id":12"#), None);
        assert_eq!(id_of(br#"{"id":12}"#), Some(json!(12)));
        assert_eq!(id_of(br#"{"params":{"x":"yyyy"#), None);
        assert_eq!(id_of(b"not json"), None);
        assert_eq!(id_of(br#"[{"id":1}]"#), None);
    }

    #[test]
    fn blank_lines_are_skipped_and_bad_ones_answered() {
        let answer = |input: Input| match judge(input) {
            Verdict::Answer(a) => serde_json::from_str::<Value>(&a).unwrap(),
            other => panic!("not answered: {other:?}"),
        };
        assert!(matches!(judge(Input::Line(b" \r".to_vec())), Verdict::Skip));
        let a = answer(Input::Line(b"{\"id\":1,".to_vec()));
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (Value::Null, json!(-32700))
        );
        let a = answer(Input::TooLong {
            bytes: 5_000_000,
            id: Some(json!(9)),
        });
        assert_eq!(a["id"], 9);
        let text = a["error"]["message"].as_str().unwrap();
        assert!(
            text.contains("5000000 bytes") && text.contains("4 MiB"),
            "{text}"
        );
        // JSON that is not one message: an invalid request, with the id
        // when there is one.
        for (line, id) in [
            (&br#"[{"id":1,"method":"ping"}]"#[..], Value::Null),
            (b" 42", Value::Null),
            (br#"{"id":3,"method":5}"#, json!(3)),
        ] {
            let a = answer(Input::Line(line.to_vec()));
            assert_eq!(
                (&a["id"], &a["error"]["code"]),
                (&id, &json!(-32600)),
                "{a}"
            );
        }
        assert!(matches!(
            judge(Input::Line(br#" {"id":1,"method":"ping"}"#.to_vec())),
            Verdict::Relay(Head { id: Some(_), .. }, _)
        ));
    }
}
