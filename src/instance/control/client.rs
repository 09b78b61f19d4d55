//! The client side of the control endpoint: [`Client`] for the CLI
//! (commands and the status request, each waiting for its reply), and
//! [`connect`], a [`Link`] to a remote instance for front ends.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{broadcast, mpsc};

use super::{
    Answer, ClientLine, ClientMessage, ControlError, EVENT_CAPACITY, Greeting, Hello, InstanceInfo,
    Reply, Request, ServerLine, write_line,
};
use crate::engine::link::Envelope;
use crate::engine::{Command, CommandFailed, CommandSender, EngineEvent, Link};

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

    /// Asks the endpoint itself (the instance's status) and waits for its
    /// reply; events read meanwhile are kept for [`Client::next_event`].
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
