//! The serving side of the control endpoint: the socket, one task per
//! client (hello, then lines in, events and replies out), and the mirror
//! of the engine's state that answers `status` without asking the engine.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::{FuturesOrdered, FuturesUnordered};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::OwnedReadHalf;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{
    Answer, ClientLine, ControlError, FELL_BEHIND, Greeting, HELLO_TIMEOUT, Hello, InstanceInfo,
    InstanceStatus, MAX_LINE, PROTOCOL, Reply, Request, ServerLine, write_line,
};
use crate::engine::event::{AgentSnapshot, Snapshot};
use crate::engine::link::Resync;
use crate::engine::{Command, CommandSender, Engine, EngineEvent, RequestError};

/// What the server knows about the engine without asking it: kept up to
/// date from the events (and its own private snapshots), so `list` never
/// asks the engine anything.
#[derive(Debug, Default)]
pub(super) struct Mirror {
    pub(super) agents: Vec<AgentSnapshot>,
    paused: Option<crate::agents::runner::PauseReason>,
    finished: Option<crate::agents::runner::RunOutcome>,
    /// Events held while a snapshot is on its way.
    pub(super) resync: Resync,
}

impl Mirror {
    /// An event from the engine.
    pub(super) fn event(&mut self, event: &EngineEvent) {
        if !self.resync.holding() {
            self.apply(event);
        } else if let Some(event) = self.resync.arrived(event.clone()) {
            self.apply(&event);
        }
    }

    /// The answer to a snapshot the server asked for (`None`: it failed).
    pub(super) fn snapshot(&mut self, snapshot: Option<&Snapshot>) {
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
pub(super) fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
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
pub(super) enum Framed<'a> {
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
pub(super) fn framed(buf: &[u8], ended: bool) -> Framed<'_> {
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
    let parsed = match ClientLine::read(value) {
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
