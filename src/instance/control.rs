//! The control endpoint of a running instance: a unix socket
//! (`<home>/control.sock`, 0600) speaking JSON lines, so other terminals can
//! steer it (`send`, `stop`, `peek`, `list`, `attach`).
//!
//! Protocol (one JSON object per line, both ways):
//! 1. The client's first line is [`Hello`]: `{"token": "…"}`, the admin
//!    token from `<home>/control.token` (0600, only the owner can read it).
//! 2. The server answers with a [`Greeting`]: `{"hello":"welcome",…}` with
//!    the instance's record, or `{"hello":"refused","error":…}` and closes.
//! 3. From then on the client sends engine [`Command`]s (`{"command":…}`,
//!    exactly as the local TUI does; their answers are [`EngineEvent`]s to
//!    every front end) or [`Request`]s (`{"request":…}`, answered with one
//!    [`Reply`] to this client alone), and the server streams every
//!    [`EngineEvent`] (`{"event":…}`) from the moment of the greeting.
//!
//! [`connect`] turns a connection into an [`engine::Link`](crate::engine::Link),
//! so a front end drives a remote instance the way it drives a local one.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{broadcast, mpsc};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::query::{self, InstanceStatus, PeekItem, PeekQuery};
use super::registry::InstanceInfo;
use crate::context::mentions::USER;
use crate::engine::event::AgentSnapshot;
use crate::engine::{Command, Engine, EngineEvent, Link};
use crate::mcp::SharedContext;

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

/// The answer to a [`Request`].
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
        /// Oldest first (channel) or in inbox order.
        items: Vec<PeekItem>,
    },
    /// The instance's status.
    Status {
        /// The instance and its agents.
        status: Box<InstanceStatus>,
    },
    /// The request (or an unreadable line) failed.
    Error {
        /// Why.
        error: String,
    },
}

/// Any line a client sends after its hello.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ClientLine {
    /// An engine command.
    Command(Command),
    /// A request for this client.
    Request(Request),
}

/// Any line the server sends after its greeting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ServerLine {
    /// Something that happened in the instance.
    Event(Box<EngineEvent>),
    /// The answer to this client's request.
    Reply(Reply),
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
/// date from the events, so `list` never makes the engine broadcast.
#[derive(Debug, Default)]
struct Mirror {
    agents: Vec<AgentSnapshot>,
    paused: Option<crate::agents::runner::PauseReason>,
    finished: Option<crate::agents::runner::RunOutcome>,
}

impl Mirror {
    fn apply(&mut self, event: &EngineEvent) {
        let agent = |m: &mut Mirror, name: &str| m.agents.iter_mut().position(|a| a.name == name);
        match event {
            EngineEvent::Status {
                agent: name,
                status,
            } => {
                if let Some(i) = agent(self, name) {
                    self.agents[i].status = status.clone();
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
            EngineEvent::Snapshot { snapshot } => {
                self.agents = snapshot.agents.clone();
                self.paused = snapshot.paused.clone();
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
    commands: mpsc::UnboundedSender<Command>,
    events: broadcast::Sender<EngineEvent>,
    context: SharedContext,
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
    let (events, _) = broadcast::channel(EVENT_CAPACITY);
    let stop = CancellationToken::new();
    let shared = Arc::new(Shared {
        token,
        info: info.clone(),
        commands: engine.commands(),
        events: events.clone(),
        context: engine.context().clone(),
        mirror: Mutex::new(Mirror {
            agents: info
                .agents
                .iter()
                .map(|name| AgentSnapshot {
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
    let mut source = engine.subscribe();
    let forward = {
        let shared = shared.clone();
        tokio::spawn(async move {
            loop {
                match source.recv().await {
                    Ok(event) => {
                        if let Ok(mut m) = shared.mirror.lock() {
                            m.apply(&event);
                        }
                        let _ = shared.events.send(event);
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let _ = shared.commands.send(Command::Snapshot { messages: 0 });
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        })
    };
    // The mirror starts from a snapshot (agents' backends, statuses).
    engine.send(Command::Snapshot { messages: 0 });
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

/// One client: hello, then commands and requests in, events and replies out.
async fn connection(stream: UnixStream, shared: Arc<Shared>) {
    let (r, mut w) = stream.into_split();
    let mut lines = BufReader::new(r).lines();
    let hello = match tokio::time::timeout(HELLO_TIMEOUT, lines.next_line()).await {
        Ok(Ok(Some(line))) => line,
        // A liveness probe (connect, then close) or a silent client.
        _ => return,
    };
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
    let mut events = shared.events.subscribe();
    let welcome = Greeting::Welcome {
        instance: Box::new(shared.info.clone()),
        protocol: PROTOCOL,
    };
    if write_line(&mut w, &welcome).await.is_err() {
        return;
    }
    loop {
        tokio::select! {
            line = lines.next_line() => {
                let Ok(Some(line)) = line else { break };
                if line.trim().is_empty() {
                    continue;
                }
                if let Some(reply) = handle_line(&shared, &line)
                    && write_line(&mut w, &ServerLine::Reply(reply)).await.is_err()
                {
                    break;
                }
            }
            event = events.recv() => match event {
                Ok(event) => {
                    if write_line(&mut w, &ServerLine::Event(Box::new(event))).await.is_err() {
                        break;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    let text = format!("{n} events were dropped because this client fell behind; ask for a snapshot");
                    let event = EngineEvent::Notice { text };
                    if write_line(&mut w, &ServerLine::Event(Box::new(event))).await.is_err() {
                        break;
                    }
                }
                Err(broadcast::error::RecvError::Closed) => break,
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

/// Carries out one line; the reply for requests and bad lines.
fn handle_line(shared: &Shared, line: &str) -> Option<Reply> {
    let parsed = match serde_json::from_str::<ClientLine>(line) {
        Ok(p) => p,
        Err(e) => {
            return Some(Reply::Error {
                error: format!("unreadable line (expected a command or a request): {e}"),
            });
        }
    };
    match parsed {
        ClientLine::Command(command) => {
            if shared.commands.send(command).is_err() {
                return Some(Reply::Error {
                    error: "the instance has ended".into(),
                });
            }
            None
        }
        ClientLine::Request(Request::Post { text }) => {
            Some(match shared.context.append(USER, &text) {
                Ok(entry) => Reply::Posted { id: entry.id },
                Err(e) => Reply::Error {
                    error: e.to_string(),
                },
            })
        }
        ClientLine::Request(Request::Peek(q)) => {
            Some(match shared.context.read(|s| query::peek(s, &q)) {
                Ok(items) => Reply::Messages { items },
                Err(error) => Reply::Error { error },
            })
        }
        ClientLine::Request(Request::Status) => {
            let mirror = shared.mirror.lock().ok()?;
            Some(Reply::Status {
                status: Box::new(InstanceStatus {
                    info: shared.info.clone(),
                    agents: mirror.agents.clone(),
                    paused: mirror.paused.clone(),
                    finished: mirror.finished.clone(),
                }),
            })
        }
    }
}

/// A connection to a running instance's control endpoint, for clients that
/// also make requests (the CLI). [`Client::into_link`] makes it a [`Link`].
#[derive(Debug)]
pub struct Client {
    lines: Lines<BufReader<OwnedReadHalf>>,
    writer: OwnedWriteHalf,
    /// Events read while waiting for a reply, handed out first.
    pending: VecDeque<EngineEvent>,
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
        let token = std::fs::read_to_string(&info.token_file).map_err(|e| {
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
            Ok(Greeting::Welcome { instance, .. }) => Ok(Client {
                lines,
                writer,
                pending: VecDeque::new(),
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

    async fn send_line(&mut self, line: &ClientLine) -> Result<(), ControlError> {
        write_line(&mut self.writer, line)
            .await
            .map_err(|e| ControlError::NotRunning {
                instance: self.info.instance.clone(),
                reason: e.to_string(),
            })
    }

    /// Sends an engine command (its answers come as events).
    pub async fn command(&mut self, command: Command) -> Result<(), ControlError> {
        self.send_line(&ClientLine::Command(command)).await
    }

    /// Makes a request and waits for its reply; events read meanwhile are
    /// kept for [`Client::next_event`].
    pub async fn request(&mut self, request: Request) -> Result<Reply, ControlError> {
        self.send_line(&ClientLine::Request(request)).await?;
        loop {
            match self.read().await? {
                Some(ServerLine::Reply(reply)) => return Ok(reply),
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
    /// commands as lines, another reads events into its broadcast. The
    /// receiver is closed when the instance goes away.
    pub fn into_link(self) -> Link {
        let Client {
            mut lines,
            mut writer,
            pending,
            ..
        } = self;
        let (commands, mut command_rx) = mpsc::unbounded_channel::<Command>();
        let (events_tx, events) = broadcast::channel(EVENT_CAPACITY);
        for event in pending {
            let _ = events_tx.send(event);
        }
        tokio::spawn(async move {
            while let Some(command) = command_rx.recv().await {
                if write_line(&mut writer, &ClientLine::Command(command))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            let _ = writer.shutdown().await;
        });
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Ok(ServerLine::Event(event)) = serde_json::from_str::<ServerLine>(&line) {
                    let _ = events_tx.send(*event);
                }
            }
            // Dropping the sender closes the link's receiver.
        });
        Link { commands, events }
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
            })),
        ] {
            let json = serde_json::to_string(&line).unwrap();
            assert_eq!(
                serde_json::from_str::<ClientLine>(&json).unwrap(),
                line,
                "{json}"
            );
        }
        for line in [
            ServerLine::Reply(Reply::Posted { id: 4 }),
            ServerLine::Event(Box::new(EngineEvent::Resumed)),
            ServerLine::Reply(Reply::Error { error: "e".into() }),
        ] {
            let json = serde_json::to_string(&line).unwrap();
            assert_eq!(
                serde_json::from_str::<ServerLine>(&json).unwrap(),
                line,
                "{json}"
            );
        }
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same_token("abc", "abc"));
        assert!(!same_token("abc", "abd"));
        assert!(!same_token("abc", "abcd"));
    }
}
