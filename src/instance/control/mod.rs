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
//!    exactly as the local TUI does) or the [`Request`] `{"request":"status"}`.
//!    Each line is answered, in the order of the lines, with one [`Reply`]
//!    (`{"reply":…}`) to this client alone: a command with `done`,
//!    `posted`, `messages`, `snapshot`, `document`, … or `error` (naming
//!    the `command`), the status request with `status` or `error`. A line may carry
//!    `"ref": n` (a number the client picks); its reply carries the same
//!    `ref`.
//! 4. The server streams every [`EngineEvent`] (`{"event":…}`) from the
//!    moment of the greeting: the facts every front end sees, never another
//!    client's replies.
//!
//! [`connect`] turns a connection into an [`engine::Link`](crate::engine::Link),
//! so a front end drives a remote instance the way it drives a local one.

mod client;
mod server;

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt;
use tokio::net::unix::OwnedWriteHalf;

use super::query::InstanceStatus;
use super::registry::InstanceInfo;
use crate::engine::{Command, CommandFailed, EngineEvent, RequestError};
pub use client::{Client, connect};
pub use server::{ControlHandle, listen};

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

/// What a client asks that is not an engine command: the endpoint answers
/// it itself, from what it keeps of the engine's events, without asking
/// the engine (so `awtui list` answers while the engine is busy).
///
/// Older clients also send `{"request":"post","text":…}` and
/// `{"request":"peek",…query}`; they are read as the engine's
/// [`Command::Send`] and [`Command::Peek`] ([`ClientLine::read`]), whose
/// replies (`posted`, `messages`) are the same lines as before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "request", rename_all = "snake_case")]
pub enum Request {
    /// The instance and its agents.
    Status,
}

/// The answer to one line from a client (a [`Request`] or an engine
/// [`Command`]), sent to that client alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
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
        /// What kind of failure, for clients that match on it (left out
        /// when nothing more precise than the text is known).
        #[serde(default, skip_serializing_if = "crate::vocab::ErrorKind::is_other")]
        kind: crate::vocab::ErrorKind,
    },
    /// The engine's answer to a command (`done`, `posted`, `messages`,
    /// `snapshot`, `document`, …).
    #[serde(untagged)]
    Engine(crate::engine::Reply),
}

impl Reply {
    /// An error that is not a command's.
    pub fn error(error: impl Into<String>) -> Reply {
        Reply::Error {
            error: error.into(),
            command: None,
            kind: Default::default(),
        }
    }

    /// The engine's answer to the command `command` (its name) as a line.
    pub(super) fn from_engine(
        command: &str,
        result: Result<crate::engine::Reply, RequestError>,
    ) -> Reply {
        match result {
            Ok(reply) => Reply::Engine(reply),
            Err(RequestError::Failed(f)) => Reply::Error {
                error: f.error,
                command: Some(f.command),
                kind: f.kind,
            },
            Err(RequestError::EngineGone) => Reply::Error {
                error: "the instance has ended".into(),
                command: Some(command.to_string()),
                kind: Default::default(),
            },
        }
    }

    /// This line as the engine's answer to the command `command` (its name).
    pub(super) fn into_engine(self, command: &str) -> Result<crate::engine::Reply, CommandFailed> {
        match self {
            Reply::Engine(reply) => Ok(reply),
            Reply::Error {
                error,
                command: c,
                kind,
            } => Err(CommandFailed {
                command: c.unwrap_or_else(|| command.to_string()),
                error,
                kind,
            }),
            other => Err(CommandFailed {
                command: command.to_string(),
                error: format!("unexpected answer: {other:?}"),
                kind: Default::default(),
            }),
        }
    }
}

/// What a client asks after its hello: an engine command, exactly as the
/// local TUI sends it, or a [`Request`] the endpoint answers itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ClientLine {
    /// An engine command.
    Command(Command),
    /// A request for this client.
    Request(Request),
}

impl ClientLine {
    /// Reads a client's line, taking the older spellings of two engine
    /// commands (`{"request":"post","text"}` for `send`,
    /// `{"request":"peek",…query}` for `peek` with the query inline).
    pub fn read(mut line: serde_json::Value) -> Result<ClientLine, serde_json::Error> {
        if let Some(fields) = line.as_object_mut() {
            let older = match fields.get("request").and_then(serde_json::Value::as_str) {
                Some("post") => Some("send"),
                Some("peek") => Some("peek"),
                _ => None,
            };
            if let Some(command) = older {
                fields.remove("request");
                fields.remove("ref");
                if command == "peek" {
                    let query = std::mem::take(fields);
                    fields.insert("query".into(), query.into());
                }
                fields.insert("command".into(), command.into());
            }
        }
        serde_json::from_value(line)
    }
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

/// What the notice telling a client it lost events says (after their
/// number), so a client can take a fresh snapshot.
pub const FELL_BEHIND: &str = "events were dropped because this client fell behind";

/// The longest line a client may send after its hello: the largest
/// command (a 4 MiB post or document) with every byte escaped in JSON
/// (`\u001b` is six bytes for one), and room for the rest of the line.
/// A token holder (any process of the user's, an agent's included) can
/// then not make the instance hold an endless line.
pub const MAX_LINE: u64 = 6 * crate::context::MAX_BODY as u64 + 64 * 1024;

/// Writes `value` as one JSON line.
async fn write_line<T: Serialize>(w: &mut OwnedWriteHalf, value: &T) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    line.push(b'\n');
    w.write_all(&line).await
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

#[cfg(test)]
mod tests;
