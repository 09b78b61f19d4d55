//! The control endpoint of a running instance: a unix socket
//! (`<home>/control.sock`, 0600) speaking JSON lines, so other terminals can
//! steer it (`send`, `stop`, `peek`, `list`, `attach`).
//!
//! Protocol (one JSON object per line, both ways):
//! 1. The client's first line is [`Hello`]: `{"token": "…"}`, the admin
//!    token from the file its record names (`<state dir>/control/<hash>.token`,
//!    0600, outside the workspace; see [`super::layout::control_token`]).
//! 2. The server answers with a [`Greeting`]: `{"hello":"welcome",…}` with
//!    the instance's record, or `{"hello":"refused","error":…}` and closes.
//! 3. From then on the client sends engine [`Command`]s (`{"command":…}`,
//!    exactly as the local TUI does) or [`Request`]s (`{"request":…}`).
//!    Each line is answered, in the order of the lines, with one [`Reply`]
//!    (`{"reply":…}`) to this client alone: a command with `done`,
//!    `snapshot`, `document` or `error` (naming the `command`), a request
//!    with `posted`, `messages`, `status` or `error`. A line may carry
//!    `"ref": n` (a number the client picks); its reply carries the same
//!    `ref`.
//! 4. The server streams every [`EngineEvent`] (`{"event":…}`) from the
//!    moment of the greeting: the facts every front end sees, never another
//!    client's replies.
//!
//! [`connect`] turns a connection into an [`engine::Link`](crate::engine::Link),
//! so a front end drives a remote instance the way it drives a local one.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::{FuturesOrdered, FuturesUnordered};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{broadcast, mpsc};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::query::{InstanceStatus, PeekItem, PeekQuery};
use super::registry::InstanceInfo;
use crate::engine::event::{AgentSnapshot, Snapshot};
use crate::engine::link::{Envelope, Resync};
use crate::engine::{
    Command, CommandFailed, CommandSender, Engine, EngineEvent, Link, RequestError,
};

/// Version of this protocol, in the greeting.
pub const PROTOCOL: u32 = 1;
/// How many events a slow client may fall behind before it misses some.
const EVENT_CAPACITY: usize = 8192;
/// How long the server waits for a client's hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// The client's first line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// The admin token.
    pub token: String,
}

/// The server's answer to [`Hello`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "hello", rename_all = "snake_case")]
pub enum Greeting {
    /// Authenticated: commands and requests may follow.
    Welcome {
        /// The instance's record.
        instance: Box<InstanceInfo>,
        /// [`PROTOCOL`].
        protocol: u32,
    },
    /// Not authenticated; the server closes the connection.
    Refused {
        /// Why.
        error: String,
    },
}

/// A question answered to the asking client alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "request", rename_all = "snake_case")]
pub enum Request {
    /// Post as `user`; answered with the message's id.
    Post {
        /// The message.
        text: String,
    },
    /// Recent channel messages or an inbox.
    Peek(PeekQuery),
    /// The instance and its agents.
    Status,
}

/// The answer to one line from a client (a [`Request`] or an engine
/// [`Command`]), sent to that client alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    /// The posted message's id.
    Posted {
        /// Its id.
        id: u64,
    },
    /// The messages asked for.
    Messages {
        /// Oldest first (channel) or in inbox order, within the byte
        /// budget of a page ([`crate::vocab::pages`]).
        items: Vec<PeekItem>,
        /// How many of those asked for were left out to keep that budget.
        #[serde(default, skip_serializing_if = "crate::vocab::pages::is_zero")]
        left_out: usize,
    },
    /// The instance's status.
    Status {
        /// The instance and its agents.
        status: Box<InstanceStatus>,
    },
    /// The request, the command (then named) or an unreadable line failed.
    Error {
        /// Why.
        error: String,
        /// The failed command's name, for commands.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        command: Option<String>,
    },
    /// The engine's answer to a command (`done`, `snapshot`, `document`).
    #[serde(untagged)]
    Engine(crate::engine::Reply),
}

impl Reply {
    /// An error that is not a command's.
    pub fn error(error: impl Into<String>) -> Reply {
        Reply::Error {
            error: error.into(),
            command: None,
        }
    }

    /// The engine's answer to the command `command` (its name) as a line.
    fn from_engine(command: &str, result: Result<crate::engine::Reply, RequestError>) -> Reply {
        match result {
            Ok(reply) => Reply::Engine(reply),
            Err(RequestError::Failed(f)) => Reply::Error {
                error: f.error,
                command: Some(f.command),
            },
            Err(RequestError::EngineGone) => Reply::Error {
                error: "the instance has ended".into(),
                command: Some(command.to_string()),
            },
        }
    }

    /// This line as the engine's answer to the command `command` (its name).
    fn into_engine(self, command: &str) -> Result<crate::engine::Reply, CommandFailed> {
        match self {
            Reply::Engine(reply) => Ok(reply),
            Reply::Error { error, command: c } => Err(CommandFailed {
                command: c.unwrap_or_else(|| command.to_string()),
                error,
            }),
            other => Err(CommandFailed {
                command: command.to_string(),
                error: format!("unexpected answer: {other:?}"),
            }),
        }
    }
}

/// What a client asks after its hello.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ClientLine {
    /// An engine command.
    Command(Command),
    /// A request for this client.
    Request(Request),
}

/// A line a client sends after its hello: what it asks, and optionally the
/// `ref` its reply will carry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClientMessage {
    /// The command or request.
    #[serde(flatten)]
    pub line: ClientLine,
    /// Chosen by the client, echoed in the reply.
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<u64>,
}

/// A reply line: the answer, and the `ref` of the line it answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// The answer.
    #[serde(flatten)]
    pub reply: Reply,
    /// The answered line's `ref`, when it had one.
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<u64>,
}

/// Any line the server sends after its greeting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ServerLine {
    /// Something that happened in the instance (for every client).
    Event(Box<EngineEvent>),
    /// The answer to one of this client's lines (for it alone).
    Reply(Answer),
}

/// Why the control endpoint could not be served or reached.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// Nobody answers, or the instance went away.
    #[error("instance '{instance}' is not running: {reason}")]
    NotRunning {
        /// The instance.
        instance: String,
        /// What was seen.
        reason: String,
    },
    /// The token was refused or unreadable.
    #[error("instance '{instance}' refused the connection: {reason}")]
    Refused {
        /// The instance.
        instance: String,
        /// Why.
        reason: String,
    },
    /// The other side sent something this side cannot read.
    #[error("unexpected answer from instance '{instance}': {reason}")]
    Protocol {
        /// The instance.
        instance: String,
        /// What was wrong.
        reason: String,
    },
    /// Serving failed (socket or token file).
    #[error("cannot serve control on {path}: {source}")]
    Serve {
        /// The socket or token file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
}

/// What the server knows about the engine without asking it: kept up to
/// date from the events (and its own private snapshots), so `list` never
/// asks the engine anything.
#[derive(Debug, Default)]
struct Mirror {
    agents: Vec<AgentSnapshot>,
    paused: Option<crate::agents::runner::PauseReason>,
    finished: Option<crate::agents::runner::RunOutcome>,
    /// Events held while a snapshot is on its way.
    resync: Resync,
}

impl Mirror {
    /// An event from the engine.
    fn event(&mut self, event: &EngineEvent) {
        if !self.resync.holding() {
            self.apply(event);
        } else if let Some(event) = self.resync.arrived(event.clone()) {
            self.apply(&event);
        }
    }

    /// The answer to a snapshot the server asked for (`None`: it failed).
    fn snapshot(&mut self, snapshot: Option<&Snapshot>) {
        if let Some(s) = snapshot {
            self.agents = s.agents.clone();
            self.paused = s.paused.clone();
        }
        for event in self.resync.answered() {
            self.apply(&event);
        }
    }

    fn apply(&mut self, event: &EngineEvent) {
        let agent = |m: &mut Mirror, name: &str| m.agents.iter_mut().position(|a| a.name == name);
        match event {
            EngineEvent::Status {
                agent: name,
                status,
            } => {
                if let Some(i) = agent(self, name) {
                    // A new turn starts a new live view (as the engine's).
                    if *status == crate::agents::runner::AgentStatus::Starting {
                        self.agents[i].live = Default::default();
                    }
                    self.agents[i].status = status.clone();
                }
            }
            EngineEvent::Activity {
                agent: name,
                activity,
            } => {
                if let Some(i) = agent(self, name) {
                    self.agents[i].live.apply(activity);
                }
            }
            EngineEvent::Metrics {
                agent: name,
                metrics,
            } => {
                if let Some(i) = agent(self, name) {
                    self.agents[i].metrics = metrics.clone();
                }
            }
            EngineEvent::Paused { reason } => self.paused = Some(reason.clone()),
            EngineEvent::Resumed => self.paused = None,
            EngineEvent::Finished { outcome } => self.finished = Some(outcome.clone()),
            _ => {}
        }
    }
}

/// What every connection shares.
struct Shared {
    token: String,
    info: InstanceInfo,
    commands: CommandSender,
    /// The engine's facts: each connection subscribes itself.
    facts: crate::vocab::Facts,
    mirror: Mutex<Mirror>,
    stop: CancellationToken,
}

/// A serving control endpoint. [`ControlHandle::stop`] (or dropping it)
/// stops serving and removes the socket and token files.
#[derive(Debug)]
pub struct ControlHandle {
    socket: PathBuf,
    token_file: PathBuf,
    stop: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

/// Serves `engine`'s control endpoint on `info.control`, with a new admin
/// token written to `info.token_file`. The caller holds the instance lock,
/// so a socket file already there is a crash's leftover and is replaced.
pub async fn listen(engine: &Engine, info: &InstanceInfo) -> Result<ControlHandle, ControlError> {
    let serve_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ControlError::Serve { path, source }
    };
    let token = crate::mcp::identity::new_token().map_err(|e| ControlError::Serve {
        path: info.token_file.clone(),
        source: std::io::Error::other(e.to_string()),
    })?;
    crate::fsutil::write_private_file(&info.token_file, token.as_bytes())
        .map_err(serve_err(&info.token_file))?;
    let _ = std::fs::remove_file(&info.control);
    let listener =
        tokio::net::UnixListener::bind(&info.control).map_err(serve_err(&info.control))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&info.control, std::fs::Permissions::from_mode(0o600))
            .map_err(serve_err(&info.control))?;
    }
    let stop = CancellationToken::new();
    let shared = Arc::new(Shared {
        token,
        info: info.clone(),
        commands: engine.commands(),
        facts: engine.facts(),
        mirror: Mutex::new(Mirror {
            agents: info
                .agents
                .iter()
                .map(|name| AgentSnapshot {
                    place: String::new(),
                    protocol: String::new(),
                    live: Default::default(),
                    name: name.clone(),
                    backend: String::new(),
                    model: None,
                    status: crate::agents::runner::AgentStatus::Idle,
                    metrics: Default::default(),
                })
                .collect(),
            ..Mirror::default()
        }),
        stop: stop.clone(),
    });
    let source = engine.subscribe();
    let forward = tokio::spawn(forward(source, shared.clone()));
    let accept = {
        let shared = shared.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = shared.stop.cancelled() => return,
                    conn = listener.accept() => match conn {
                        Ok((stream, _)) => { tokio::spawn(connection(stream, shared.clone())); }
                        Err(e) => {
                            tracing::warn!("control socket: {e}");
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                    },
                }
            }
        })
    };
    Ok(ControlHandle {
        socket: info.control.clone(),
        token_file: info.token_file.clone(),
        stop,
        tasks: vec![forward, accept],
    })
}

/// Hands the engine's events to the clients and keeps the mirror, which
/// starts from a private snapshot (agents' backends, statuses) and asks for
/// another when it fell behind.
async fn forward(mut source: broadcast::Receiver<EngineEvent>, shared: Arc<Shared>) {
    let mut snapshots = FuturesUnordered::new();
    ask_snapshot(&shared, &mut snapshots);
    loop {
        tokio::select! {
            Some(answer) = snapshots.next(), if !snapshots.is_empty() => {
                let snapshot = match &answer {
                    Ok(crate::engine::Reply::Snapshot { snapshot }) => Some(&**snapshot),
                    _ => None,
                };
                if let Ok(mut m) = shared.mirror.lock() {
                    m.snapshot(snapshot);
                }
            }
            event = source.recv() => match event {
                Ok(event) => {
                    if let Ok(mut m) = shared.mirror.lock() {
                        m.event(&event);
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => ask_snapshot(&shared, &mut snapshots),
                Err(broadcast::error::RecvError::Closed) => return,
            },
        }
    }
}

type Pending<T> = FuturesUnordered<BoxFuture<'static, T>>;

/// Asks the engine for a snapshot for the mirror, holding events until it
/// comes.
fn ask_snapshot(
    shared: &Shared,
    snapshots: &mut Pending<Result<crate::engine::Reply, RequestError>>,
) {
    if let Ok(mut m) = shared.mirror.lock() {
        m.resync.asked();
    }
    snapshots.push(Box::pin(
        shared.commands.request(Command::Snapshot { messages: 0 }),
    ));
}

impl ControlHandle {
    /// Stops serving: connected clients get the events already sent, then
    /// end of file. Removes the socket and the token file.
    pub async fn stop(mut self) {
        self.stop.cancel();
        for task in self.tasks.drain(..) {
            task.abort();
            let _ = task.await;
        }
        self.remove_files();
    }

    fn remove_files(&self) {
        let _ = std::fs::remove_file(&self.socket);
        let _ = std::fs::remove_file(&self.token_file);
    }
}

impl Drop for ControlHandle {
    fn drop(&mut self) {
        self.stop.cancel();
        for task in &self.tasks {
            task.abort();
        }
        self.remove_files();
    }
}

/// Compares tokens without stopping at the first difference.
fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

async fn write_line<T: Serialize>(w: &mut OwnedWriteHalf, value: &T) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    line.push(b'\n');
    w.write_all(&line).await
}

/// Longest first line a client may send (it carries only the token).
const MAX_HELLO: u64 = 64 * 1024;

/// One client: hello, then commands and requests in, events and replies out.
async fn connection(stream: UnixStream, shared: Arc<Shared>) {
    // Who connects: an agent's process (or one it started) may steer the
    // instance like any client, but never decide an approval.
    let agent_pid = stream
        .peer_cred()
        .ok()
        .and_then(|c| c.pid())
        .and_then(|pid| u32::try_from(pid).ok())
        .filter(|pid| crate::agents::backend::contain::started_by_an_agent(*pid));
    let (r, mut w) = stream.into_split();
    let mut reader = BufReader::new(r);
    // The hello comes before the token is checked: it is read no further
    // than [`MAX_HELLO`], so a client without the token cannot make the
    // instance hold an endless line.
    let mut hello = String::new();
    let mut limited = (&mut reader).take(MAX_HELLO);
    match tokio::time::timeout(HELLO_TIMEOUT, limited.read_line(&mut hello)).await {
        Ok(Ok(n)) if n as u64 >= MAX_HELLO && !hello.ends_with('\n') => {
            let error = format!("the first line is over the {MAX_HELLO}-byte limit of a hello");
            let _ = write_line(&mut w, &Greeting::Refused { error }).await;
            return;
        }
        Ok(Ok(n)) if n > 0 => {}
        // A liveness probe (connect, then close) or a silent client.
        _ => return,
    }
    match serde_json::from_str::<Hello>(&hello) {
        Ok(h) if same_token(h.token.trim(), &shared.token) => {}
        Ok(_) => {
            let error = "wrong token".to_string();
            let _ = write_line(&mut w, &Greeting::Refused { error }).await;
            return;
        }
        Err(e) => {
            let error = format!("the first line must be {{\"token\": …}}: {e}");
            let _ = write_line(&mut w, &Greeting::Refused { error }).await;
            return;
        }
    }
    let mut events = shared.facts.subscribe();
    // The engine ended: its last facts were handed over; requests are
    // still answered until the endpoint stops.
    let mut ended = false;
    let welcome = Greeting::Welcome {
        instance: Box::new(shared.info.clone()),
        protocol: PROTOCOL,
    };
    if write_line(&mut w, &welcome).await.is_err() {
        return;
    }
    // Answers on their way, for this client alone, in the order of its
    // lines (so a client without refs knows which is which too).
    let mut answers: FuturesOrdered<BoxFuture<'static, Answer>> = FuturesOrdered::new();
    // The line being read (never more than [`MAX_LINE`]), and whether more
    // are: after the client's end of input or an over-long line, only the
    // answers already owed are written.
    let mut line = Vec::new();
    let mut reading = true;
    loop {
        if !reading && answers.is_empty() {
            break;
        }
        tokio::select! {
            read = read_capped(&mut reader, &mut line), if reading => {
                let ended = !matches!(read, Ok(n) if n > 0);
                match framed(&line, ended) {
                    Framed::Partial => continue,
                    Framed::Line(text) => {
                        if !text.trim().is_empty() {
                            answers.push_back(handle_line(&shared, text, agent_pid));
                        }
                    }
                    Framed::NotText => answers.push_back(now(
                        Reply::error("unreadable line (not UTF-8 text)"),
                        None,
                    )),
                    Framed::TooLong => {
                        let error = format!(
                            "a line is over the {MAX_LINE}-byte limit of this socket; \
                             the connection is closed"
                        );
                        answers.push_back(now(Reply::error(error), None));
                        reading = false;
                    }
                }
                line.clear();
                if ended {
                    reading = false;
                }
            }
            Some(answer) = answers.next(), if !answers.is_empty() => {
                if write_line(&mut w, &ServerLine::Reply(answer)).await.is_err() {
                    break;
                }
            }
            event = events.recv(), if !ended => match event {
                Ok(event) => {
                    if write_line(&mut w, &ServerLine::Event(Box::new(event))).await.is_err() {
                        break;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    let text = format!("{n} {FELL_BEHIND}; ask for a snapshot");
                    let event = EngineEvent::Notice { text };
                    if write_line(&mut w, &ServerLine::Event(Box::new(event))).await.is_err() {
                        break;
                    }
                }
                Err(broadcast::error::RecvError::Closed) => ended = true,
            },
            () = shared.stop.cancelled() => {
                // Hand over what was already sent (the final events).
                while let Ok(event) = events.try_recv() {
                    if write_line(&mut w, &ServerLine::Event(Box::new(event))).await.is_err() {
                        break;
                    }
                }
                break;
            }
        }
    }
    let _ = w.shutdown().await;
}

/// The longest line a client may send after its hello: the largest
/// command (a 4 MiB post or document) with every byte escaped in JSON
/// (`\u001b` is six bytes for one), and room for the rest of the line.
/// A token holder (any process of the user's, an agent's included) can
/// then not make the instance hold an endless line.
pub const MAX_LINE: u64 = 6 * crate::context::MAX_BODY as u64 + 64 * 1024;

/// Reads on into `line` up to a newline, never past [`MAX_LINE`] bytes in
/// all. What was read stays in `line` if the read is given up (it is one
/// branch of the connection's `select!`).
async fn read_capped(
    reader: &mut BufReader<OwnedReadHalf>,
    line: &mut Vec<u8>,
) -> std::io::Result<usize> {
    let mut limited = reader.take(MAX_LINE.saturating_sub(line.len() as u64));
    limited.read_until(b'\n', line).await
}

/// What the bytes read so far make.
#[derive(Debug, PartialEq, Eq)]
enum Framed<'a> {
    /// Not a whole line yet.
    Partial,
    /// One line (without its newline).
    Line(&'a str),
    /// A whole line that is not UTF-8.
    NotText,
    /// [`MAX_LINE`] bytes and still no newline.
    TooLong,
}

/// Cuts `buf` (read up to a newline, [`MAX_LINE`] or the end of input,
/// `ended`) into what it is.
fn framed(buf: &[u8], ended: bool) -> Framed<'_> {
    let body = match buf.strip_suffix(b"\n") {
        Some(body) => body,
        None if buf.len() as u64 >= MAX_LINE => return Framed::TooLong,
        None if ended => buf,
        None => return Framed::Partial,
    };
    match std::str::from_utf8(body) {
        Ok(text) => Framed::Line(text),
        Err(_) => Framed::NotText,
    }
}

/// An answer ready now.
fn now(reply: Reply, reference: Option<u64>) -> BoxFuture<'static, Answer> {
    Box::pin(std::future::ready(Answer { reply, reference }))
}

/// Carries out one line; its answer, for this client alone (at once for
/// requests and bad lines, when the engine answers for commands).
fn handle_line(shared: &Shared, line: &str, agent_pid: Option<u32>) -> BoxFuture<'static, Answer> {
    let value = match serde_json::from_str::<serde_json::Value>(line) {
        Ok(v) => v,
        Err(e) => {
            return now(
                Reply::error(format!("unreadable line (not JSON): {e}")),
                None,
            );
        }
    };
    let reference = value.get("ref").and_then(serde_json::Value::as_u64);
    let parsed = match serde_json::from_value::<ClientLine>(value) {
        Ok(p) => p,
        Err(e) => {
            let error = format!("unreadable line (expected a command or a request): {e}");
            return now(Reply::error(error), reference);
        }
    };
    let reply = match parsed {
        ClientLine::Command(Command::Approve { .. } | Command::RevokeApproval { .. })
            if agent_pid.is_some() =>
        {
            Reply::error(format!(
                "only the person decides approvals: this connection comes from an agent's process \
             (pid {}, or a process it started), which may not answer a request or change a rule",
                agent_pid.unwrap_or_default()
            ))
        }
        ClientLine::Command(command) => {
            let name = command.name();
            let answer = shared.commands.request(command);
            return Box::pin(async move {
                Answer {
                    reply: Reply::from_engine(name, answer.await),
                    reference,
                }
            });
        }
        // Through the engine, which owns the channel (it does the work
        // off its loop).
        ClientLine::Request(Request::Post { text }) => {
            return engine_request(shared, Command::Send { text }, reference);
        }
        ClientLine::Request(Request::Peek(query)) => {
            return engine_request(shared, Command::Peek { query }, reference);
        }
        ClientLine::Request(Request::Status) => match shared.mirror.lock() {
            Ok(mirror) => Reply::Status {
                status: Box::new(InstanceStatus {
                    info: shared.info.clone(),
                    agents: mirror.agents.clone(),
                    paused: mirror.paused.clone(),
                    finished: mirror.finished.clone(),
                }),
            },
            Err(_) => Reply::error("the instance's status is unavailable"),
        },
    };
    now(reply, reference)
}

/// A client's request carried out by the engine: its answer in the
/// request's own reply shape (`posted`, `messages`), or the error.
fn engine_request(
    shared: &Shared,
    command: Command,
    reference: Option<u64>,
) -> BoxFuture<'static, Answer> {
    let answer = shared.commands.request(command);
    Box::pin(async move {
        let reply = match answer.await {
            Ok(crate::engine::Reply::Posted { id }) => Reply::Posted { id },
            Ok(crate::engine::Reply::Messages { items, left_out }) => {
                Reply::Messages { items, left_out }
            }
            Ok(other) => Reply::error(format!("unexpected answer from the engine: {other:?}")),
            Err(e) => Reply::error(e.to_string()),
        };
        Answer { reply, reference }
    })
}

/// What the notice telling a client it lost events says (after their
/// number), so a client can take a fresh snapshot.
pub const FELL_BEHIND: &str = "events were dropped because this client fell behind";

/// A connection to a running instance's control endpoint, for clients that
/// also make requests (the CLI). [`Client::into_link`] makes it a [`Link`].
#[derive(Debug)]
pub struct Client {
    lines: Lines<BufReader<OwnedReadHalf>>,
    writer: OwnedWriteHalf,
    /// Events read while waiting for a reply, handed out first.
    pending: VecDeque<EngineEvent>,
    /// The `ref` of the last line sent.
    last_ref: u64,
    /// The instance's record, from the greeting.
    pub info: InstanceInfo,
}

impl Client {
    /// Connects and authenticates with the token in `info.token_file`.
    pub async fn open(info: &InstanceInfo) -> Result<Client, ControlError> {
        let instance = info.instance.clone();
        let not_running = |reason: String| ControlError::NotRunning {
            instance: instance.clone(),
            reason,
        };
        let token = crate::fsutil::read_record_text(&info.token_file).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                not_running(format!("{} does not exist", info.token_file.display()))
            } else {
                ControlError::Refused {
                    instance: instance.clone(),
                    reason: format!("cannot read {}: {e}", info.token_file.display()),
                }
            }
        })?;
        let stream = UnixStream::connect(&info.control).await.map_err(|e| {
            not_running(format!(
                "nothing answers on {} ({e})",
                info.control.display()
            ))
        })?;
        let (r, mut writer) = stream.into_split();
        let mut lines = BufReader::new(r).lines();
        write_line(
            &mut writer,
            &Hello {
                token: token.trim().to_string(),
            },
        )
        .await
        .map_err(|e| not_running(e.to_string()))?;
        let line = lines
            .next_line()
            .await
            .map_err(|e| not_running(e.to_string()))?
            .ok_or_else(|| not_running("it closed the connection".into()))?;
        match serde_json::from_str::<Greeting>(&line) {
            // A record names the instance it serves: one that names
            // another instance's socket (a forged or stale record) must not
            // steer that other instance.
            Ok(Greeting::Welcome {
                instance: served, ..
            }) if served.instance != info.instance
                || served.home != info.home
                || served.pid != info.pid =>
            {
                Err(ControlError::Refused {
                    instance,
                    reason: format!(
                        "{} is served by instance '{}' in {} (pid {}), not the one its record \
                         names; the record is stale or forged and was not used",
                        info.control.display(),
                        served.instance,
                        served.home.display(),
                        served.pid
                    ),
                })
            }
            Ok(Greeting::Welcome { instance, .. }) => Ok(Client {
                lines,
                writer,
                pending: VecDeque::new(),
                last_ref: 0,
                info: *instance,
            }),
            Ok(Greeting::Refused { error }) => Err(ControlError::Refused {
                instance,
                reason: error,
            }),
            Err(e) => Err(ControlError::Protocol {
                instance,
                reason: format!("{e}: {line}"),
            }),
        }
    }

    fn gone(&self, reason: impl Into<String>) -> ControlError {
        ControlError::NotRunning {
            instance: self.info.instance.clone(),
            reason: reason.into(),
        }
    }

    async fn read(&mut self) -> Result<Option<ServerLine>, ControlError> {
        let line = match self.lines.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => return Ok(None),
            Err(e) => return Err(self.gone(e.to_string())),
        };
        serde_json::from_str(&line)
            .map(Some)
            .map_err(|e| ControlError::Protocol {
                instance: self.info.instance.clone(),
                reason: format!("{e}: {line}"),
            })
    }

    /// Sends a line with a new `ref`; returns the `ref`.
    async fn send_line(&mut self, line: ClientLine) -> Result<u64, ControlError> {
        self.last_ref += 1;
        let message = ClientMessage {
            line,
            reference: Some(self.last_ref),
        };
        write_line(&mut self.writer, &message)
            .await
            .map_err(|e| ControlError::NotRunning {
                instance: self.info.instance.clone(),
                reason: e.to_string(),
            })?;
        Ok(self.last_ref)
    }

    /// Sends an engine command without waiting for its answer (which comes
    /// to this client alone, and is skipped).
    pub async fn command(&mut self, command: Command) -> Result<(), ControlError> {
        self.send_line(ClientLine::Command(command))
            .await
            .map(|_| ())
    }

    /// Sends an engine command and waits for its answer: the engine's reply
    /// or why it failed. Events read meanwhile are kept for
    /// [`Client::next_event`].
    pub async fn call(
        &mut self,
        command: Command,
    ) -> Result<Result<crate::engine::Reply, CommandFailed>, ControlError> {
        let name = command.name();
        let reply = self.wait(ClientLine::Command(command)).await?;
        Ok(reply.into_engine(name))
    }

    /// Makes a request and waits for its reply; events read meanwhile are
    /// kept for [`Client::next_event`].
    pub async fn request(&mut self, request: Request) -> Result<Reply, ControlError> {
        self.wait(ClientLine::Request(request)).await
    }

    /// Sends a line and reads until its reply (by `ref`).
    async fn wait(&mut self, line: ClientLine) -> Result<Reply, ControlError> {
        let reference = self.send_line(line).await?;
        loop {
            match self.read().await? {
                Some(ServerLine::Reply(a)) if a.reference == Some(reference) => return Ok(a.reply),
                // The answer to a command sent without waiting.
                Some(ServerLine::Reply(_)) => {}
                Some(ServerLine::Event(event)) => self.pending.push_back(*event),
                None => return Err(self.gone("it closed the connection")),
            }
        }
    }

    /// The next event; `None` when the instance closed the connection.
    pub async fn next_event(&mut self) -> Result<Option<EngineEvent>, ControlError> {
        if let Some(event) = self.pending.pop_front() {
            return Ok(Some(event));
        }
        loop {
            match self.read().await? {
                Some(ServerLine::Event(event)) => return Ok(Some(*event)),
                Some(ServerLine::Reply(_)) => {}
                None => return Ok(None),
            }
        }
    }

    /// Bridges this connection to a [`Link`]: one task writes the link's
    /// commands as lines (each with its own `ref`), another reads events
    /// into its broadcast and hands each reply to the command's sender.
    /// The receiver is closed, and unanswered commands report the instance
    /// gone, when the connection ends.
    pub fn into_link(self) -> Link {
        let Client {
            mut lines,
            mut writer,
            pending,
            last_ref,
            ..
        } = self;
        let (commands, mut command_rx) = mpsc::unbounded_channel::<Envelope>();
        let (events_tx, events) = broadcast::channel(EVENT_CAPACITY);
        for event in pending {
            let _ = events_tx.send(event);
        }
        // Commands waiting for their answers, by `ref`; `None` once the
        // connection has ended.
        type Waiting = Mutex<Option<HashMap<u64, (&'static str, crate::engine::link::ReplyTo)>>>;
        let waiting: Arc<Waiting> = Arc::new(Mutex::new(Some(HashMap::new())));
        let writing = waiting.clone();
        tokio::spawn(async move {
            let mut next = last_ref;
            while let Some(Envelope { command, reply }) = command_rx.recv().await {
                next += 1;
                match writing.lock().ok().as_deref_mut().and_then(Option::as_mut) {
                    Some(w) => w.insert(next, (command.name(), reply)),
                    // Gone: dropping `reply` tells the sender.
                    None => continue,
                };
                let message = ClientMessage {
                    line: ClientLine::Command(command),
                    reference: Some(next),
                };
                if write_line(&mut writer, &message).await.is_err() {
                    break;
                }
            }
            let _ = writer.shutdown().await;
        });
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                match serde_json::from_str::<ServerLine>(&line) {
                    Ok(ServerLine::Event(event)) => {
                        let _ = events_tx.send(*event);
                    }
                    Ok(ServerLine::Reply(Answer {
                        reply,
                        reference: Some(r),
                    })) => {
                        let to = waiting
                            .lock()
                            .ok()
                            .and_then(|mut w| w.as_mut().and_then(|w| w.remove(&r)));
                        if let Some((name, to)) = to {
                            let _ = to.send(reply.into_engine(name));
                        }
                    }
                    _ => {}
                }
            }
            // Dropping the senders tells every waiting command, and the
            // link's receiver, that the instance has gone.
            if let Ok(mut w) = waiting.lock() {
                w.take();
            }
        });
        Link {
            commands: CommandSender::new(commands),
            events,
        }
    }
}

/// A [`Link`] to the running instance `info` describes, for front ends (the
/// TUI's `attach`) that drive a remote instance like a local one.
pub async fn connect(info: &InstanceInfo) -> Result<Link, ControlError> {
    Ok(Client::open(info).await?.into_link())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip() {
        for line in [
            ClientLine::Command(Command::Post { text: "hi".into() }),
            ClientLine::Command(Command::Shutdown),
            ClientLine::Request(Request::Status),
            ClientLine::Request(Request::Post { text: "x".into() }),
            ClientLine::Request(Request::Peek(PeekQuery {
                agent: Some("coder".into()),
                limit: 3,
                kind: None,
                bead: Some("b-1".into()),
                before: None,
                message: None,
            })),
        ] {
            let json = serde_json::to_string(&line).unwrap();
            assert_eq!(
                serde_json::from_str::<ClientLine>(&json).unwrap(),
                line,
                "{json}"
            );
            // With a `ref`, as the server reads it and as a whole message.
            let message = ClientMessage {
                line: line.clone(),
                reference: Some(7),
            };
            let json = serde_json::to_string(&message).unwrap();
            assert!(json.contains(r#""ref":7"#), "{json}");
            assert_eq!(
                serde_json::from_str::<ClientLine>(&json).unwrap(),
                line,
                "{json}"
            );
            assert_eq!(
                serde_json::from_str::<ClientMessage>(&json).unwrap(),
                message,
                "{json}"
            );
        }
        // The wire format the README documents.
        let json = serde_json::to_string(&ServerLine::Reply(Answer {
            reply: Reply::Posted { id: 4 },
            reference: Some(9),
        }))
        .unwrap();
        assert_eq!(json, r#"{"reply":"posted","id":4,"ref":9}"#);
        let json = serde_json::to_string(&ServerLine::Reply(Answer {
            reply: Reply::Engine(crate::engine::Reply::Done),
            reference: None,
        }))
        .unwrap();
        assert_eq!(json, r#"{"reply":"done"}"#);
        let answer =
            |reply: Reply, reference: Option<u64>| ServerLine::Reply(Answer { reply, reference });
        for line in [
            answer(Reply::Posted { id: 4 }, Some(9)),
            ServerLine::Event(Box::new(EngineEvent::Resumed)),
            answer(Reply::error("e"), None),
            answer(
                Reply::Error {
                    error: "there is no agent 'x'".into(),
                    command: Some("stop".into()),
                },
                Some(2),
            ),
            answer(Reply::Engine(crate::engine::Reply::Done), Some(3)),
            answer(
                Reply::Engine(crate::engine::Reply::Document {
                    file: "notes.md".into(),
                    content: "x".into(),
                }),
                None,
            ),
        ] {
            let json = serde_json::to_string(&line).unwrap();
            assert_eq!(
                serde_json::from_str::<ServerLine>(&json).unwrap(),
                line,
                "{json}"
            );
        }
    }

    /// A snapshot answers privately, so events may come before it that are
    /// newer than it: the mirror applies them again after it.
    #[test]
    fn the_mirror_keeps_events_that_came_before_its_snapshot() {
        use crate::agents::runner::AgentStatus;
        let agent = |status| AgentSnapshot {
            place: String::new(),
            protocol: String::new(),
            live: Default::default(),
            name: "coder".into(),
            backend: "claude".into(),
            model: None,
            status,
            metrics: Default::default(),
        };
        let mut m = Mirror::default();
        m.resync.asked();
        m.event(&EngineEvent::Status {
            agent: "coder".into(),
            status: AgentStatus::Stopped,
        });
        m.snapshot(Some(&Snapshot {
            left_out: 0,
            workflow: "w".into(),
            instance: "i".into(),
            agents: vec![agent(AgentStatus::Idle)],
            messages: Vec::new(),
            total_messages: 0,
            user_unread: 0,
            documents: Vec::new(),
            entry_document: "notes.md".into(),
            started: None,
            approvals: Default::default(),
            tasks: Default::default(),
            cursors: Default::default(),
            paused: None,
            ops: Default::default(),
            notices: Vec::new(),
        }));
        assert_eq!(m.agents, vec![agent(AgentStatus::Stopped)]);
        assert!(!m.resync.holding());
        m.event(&EngineEvent::Status {
            agent: "coder".into(),
            status: AgentStatus::Idle,
        });
        assert_eq!(m.agents, vec![agent(AgentStatus::Idle)]);
    }

    #[test]
    fn lines_are_framed_by_newline_under_the_cap() {
        assert_eq!(framed(b"{\"a\":1}\n", false), Framed::Line("{\"a\":1}"));
        assert_eq!(framed(b"{\"a\"", false), Framed::Partial);
        assert_eq!(framed(b"last", true), Framed::Line("last"));
        assert_eq!(framed(b"", true), Framed::Line(""));
        assert_eq!(framed(b"\xff\xfe\n", false), Framed::NotText);
        let cap = MAX_LINE as usize;
        let mut long = vec![b'x'; cap - 1];
        long.push(b'\n');
        assert!(matches!(framed(&long, false), Framed::Line(l) if l.len() == cap - 1));
        assert_eq!(framed(&vec![b'x'; cap], false), Framed::TooLong);
        assert_eq!(framed(&vec![b'x'; cap], true), Framed::TooLong);
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same_token("abc", "abc"));
        assert!(!same_token("abc", "abd"));
        assert!(!same_token("abc", "abcd"));
    }
}
