//! What front ends ask the engine to do, and what it answers them. The
//! engine is the only place that changes state; front ends send commands,
//! get each one's [`Reply`] (or [`CommandFailed`]) privately, and render the
//! events everyone sees. Commands, replies and events are plain data
//! (serde), so a remote front end speaks the same protocol as the local TUI.

use serde::{Deserialize, Serialize};

use super::channel::Since;
use super::event::Snapshot;

/// A request to the engine. Its answer goes back to whoever sent it alone
/// (see [`Reply`]); what it changed reaches every front end as events.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Command {
    /// Post a message to the channel as `user` (answered with `Done` once
    /// it is durable). Like [`Command::Send`], written off the engine's
    /// loop, in the order the engine got them; the engine hears of the
    /// message as of any other.
    Post { text: String },
    /// Post a message to the channel as `user` and answer with its id
    /// ([`Reply::Posted`]): `awtui send`.
    Send { text: String },
    /// Ask for recent messages or an inbox, with the Agent Mail filters
    /// (answered by [`Reply::Messages`]): `awtui peek`, `awtui web`'s
    /// older messages. Read off the engine's loop.
    Peek { query: super::peek::PeekQuery },
    /// Stop an agent (its whole process group); its unread messages stay.
    Stop { agent: String },
    /// Cancel an agent's current turn (ACP: `session/cancel`), not the
    /// agent: it stays runnable and keeps its conversation; the turn's
    /// messages count as handled (the person cancelled them).
    Cancel { agent: String },
    /// Let a stopped or failed agent work again.
    Restart { agent: String },
    /// Resume after a loop-guard or budget pause.
    Resume,
    /// Acknowledge `agent`'s inbox up to `until` (the user's ack).
    Ack {
        agent: String,
        #[serde(with = "since_text")]
        until: Since,
    },
    /// Ask for the whole current state (answered by [`Reply::Snapshot`]),
    /// with at most `messages` recent channel messages.
    Snapshot { messages: usize },
    /// Ask for a document's content (answered by [`Reply::Document`]).
    ReadDocument { file: Option<String> },
    /// Replace a document's content (atomic write) as `user`.
    WriteDocument {
        file: Option<String>,
        content: String,
    },
    /// Create a document as `user`; fails if it exists.
    CreateDocument { file: String, content: String },
    /// Delete a document as `user`.
    DeleteDocument { file: String },
    /// Change the task board as the person (add, release, move).
    Task { task: super::tasks::TaskCommand },
    /// Ask for one task with every checkpoint (answered by
    /// [`Reply::Task`]); events carry only the newest checkpoint.
    ReadTask { task: String },
    /// Ask for what an agent did: the raw output of its last turns and the
    /// end of its stderr log (answered by [`Reply::AgentLogs`]), so a
    /// front end shows them without touching files.
    ReadAgentLogs { agent: String },
    /// Ask for an agent's (or a task's) work in its worktree: its steps
    /// and the diff of step `turn` or of everything (answered by
    /// [`Reply::Diff`]).
    ReadDiff {
        target: super::workspace::DiffTarget,
        turn: Option<u32>,
    },
    /// Merge, revert a step of, or discard an agent's workspace branch
    /// (answered by [`Reply::Said`]).
    Workspace {
        agent: String,
        op: super::workspace::WorkspaceOp,
    },
    /// Answer tool approval request `request` as `user`: allow or deny,
    /// once or always, with a reason for the model.
    Approve {
        request: u64,
        answer: super::approvals::Answer,
    },
    /// Remove one of `agent`'s "always" approval rules (`Bash(make)`).
    RevokeApproval { agent: String, rule: String },
    /// Add an agent to the instance, kept for its next starts (answered
    /// by [`Reply::Said`]); the person's alone: no agent tool sends it.
    AddAgent { agent: super::agents::NewAgent },
    /// Stop every agent and end the instance, leaving it on disk.
    Shutdown,
}

/// The field that names a command on the wire (`{"command": "stop", …}`).
const TAG: &str = "command";

impl Command {
    /// The command's name as on the wire (`stop`, `read_document`, …), for
    /// error messages: serde's own tag (its `rename_all`), read without
    /// serializing the command's fields.
    pub fn name(&self) -> &'static str {
        super::tag::tag_of(self, TAG, Self::names()).unwrap_or(TAG)
    }

    /// Every command's wire name, in declaration order, as serde derives
    /// them.
    pub fn names() -> &'static [&'static str] {
        static NAMES: std::sync::OnceLock<&'static [&'static str]> = std::sync::OnceLock::new();
        NAMES.get_or_init(|| super::tag::variant_names::<Command>(TAG))
    }
}

/// The engine's answer to one [`Command`], for its sender alone: a second
/// front end never sees another's snapshot or document reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    /// Carried out; what it changed reaches everyone as events.
    Done,
    /// The message [`Command::Send`] posted.
    Posted { id: u64 },
    /// The messages [`Command::Peek`] asked for, oldest first, within the
    /// byte budget of a page ([`super::pages`]).
    Messages {
        items: Vec<super::peek::PeekItem>,
        /// How many of those asked for were left out (the oldest) to keep
        /// the page within its budget.
        #[serde(default, skip_serializing_if = "super::pages::is_zero")]
        left_out: usize,
    },
    /// The whole state, answering [`Command::Snapshot`].
    Snapshot { snapshot: Box<Snapshot> },
    /// A document's content, answering [`Command::ReadDocument`].
    Document { file: String, content: String },
    /// A task and its checkpoints, oldest first, answering
    /// [`Command::ReadTask`].
    Task {
        task: Box<super::tasks::Task>,
        checkpoints: Vec<super::tasks::Checkpoint>,
    },
    /// An agent's recent raw output and stderr, as one text for a pager,
    /// answering [`Command::ReadAgentLogs`].
    AgentLogs { agent: String, text: String },
    /// An agent's steps and diff, answering [`Command::ReadDiff`].
    Diff {
        view: Box<super::workspace::DiffView>,
    },
    /// What a command did, in one sentence for the person (a merge's
    /// result), answering [`Command::Workspace`].
    Said { text: String },
}

/// A command the engine could not carry out (bad name, refused path, …),
/// told to its sender alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{command} failed: {error}")]
pub struct CommandFailed {
    /// The command's name ([`Command::name`]).
    pub command: String,
    /// Why, for the person.
    pub error: String,
    /// What kind of failure, for a front end to match on (absent from an
    /// older engine's answers: [`ErrorKind::Other`]).
    #[serde(default, skip_serializing_if = "ErrorKind::is_other")]
    pub kind: ErrorKind,
}

impl CommandFailed {
    /// `command` (its name) failed with `error`.
    pub fn new(command: &str, error: CommandError) -> CommandFailed {
        CommandFailed {
            command: command.to_string(),
            kind: error.kind(),
            error: error.to_string(),
        }
    }
}

/// Why the engine could not carry out a command: each handler's typed
/// error, told to the sender as [`CommandFailed`] (its text as `error`, its
/// [`ErrorKind`] as `kind`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// The command names an agent the workflow does not have.
    #[error("there is no agent '{name}' in this workflow")]
    UnknownAgent { name: String },
    /// The command names a task the board does not have.
    #[error("there is no task '{id}' on the board")]
    UnknownTask { id: String },
    /// The instance is ending: the command came too late.
    #[error("the instance is stopping; nothing was sent")]
    Stopping,
    /// The channel or the documents refused it (a missing document, a
    /// message too long, a file that cannot be written).
    #[error("{0}")]
    Store(String),
    /// The approvals refused it (a request no longer waiting, a rule not
    /// there or not readable).
    #[error("{0}")]
    Approval(String),
    /// The task board refused it.
    #[error("{0}")]
    Task(String),
    /// A workspace (git) command could not run or failed.
    #[error("{0}")]
    Workspace(String),
    /// An agent's logs could not be read.
    #[error("{0}")]
    Logs(String),
    /// The agent could not be added to the instance.
    #[error("{0}")]
    AddAgent(String),
}

impl CommandError {
    /// Its kind, as the wire carries it.
    pub fn kind(&self) -> ErrorKind {
        match self {
            CommandError::UnknownAgent { .. } => ErrorKind::UnknownAgent,
            CommandError::UnknownTask { .. } => ErrorKind::UnknownTask,
            CommandError::Stopping => ErrorKind::Stopping,
            CommandError::Store(_) => ErrorKind::Store,
            CommandError::Approval(_) => ErrorKind::Approval,
            CommandError::Task(_) => ErrorKind::Task,
            CommandError::Workspace(_) => ErrorKind::Workspace,
            CommandError::Logs(_) => ErrorKind::Logs,
            CommandError::AddAgent(_) => ErrorKind::AddAgent,
        }
    }
}

/// The kind of a [`CommandFailed`], without its text (see
/// [`CommandError`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    UnknownAgent,
    UnknownTask,
    Stopping,
    Store,
    Approval,
    Task,
    Workspace,
    Logs,
    AddAgent,
    /// Not said (an older engine, or a failure outside the engine: the
    /// control socket's own).
    #[default]
    Other,
}

impl ErrorKind {
    /// Whether nothing more precise is said (left out on the wire).
    pub fn is_other(&self) -> bool {
        *self == ErrorKind::Other
    }
}

/// `Since` as the text a person types: `42`, `#42` or a timestamp.
mod since_text {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::channel::{Since, format_timestamp};

    pub fn serialize<S: Serializer>(since: &Since, s: S) -> Result<S::Ok, S::Error> {
        match since {
            Since::Id(id) => s.serialize_str(&id.to_string()),
            Since::Time(t) => s.serialize_str(&format_timestamp(t)),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Since, D::Error> {
        let text = String::deserialize(d)?;
        Since::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_round_trip_as_json() {
        for c in [
            Command::Post {
                text: "@coder hi".into(),
            },
            Command::Ack {
                agent: "coder".into(),
                until: Since::Id(7),
            },
            Command::WriteDocument {
                file: None,
                content: "x".into(),
            },
            Command::Snapshot { messages: 200 },
            Command::ReadTask {
                task: "tk_0123456789ab".into(),
            },
            Command::ReadAgentLogs {
                agent: "coder".into(),
            },
            Command::Shutdown,
        ] {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(serde_json::from_str::<Command>(&json).unwrap(), c, "{json}");
        }
        let c: Command = serde_json::from_str(r#"{"command":"stop","agent":"qa"}"#).unwrap();
        assert_eq!(c, Command::Stop { agent: "qa".into() });
    }

    #[test]
    fn a_failure_keeps_its_text_and_tells_its_kind() {
        let failed = CommandFailed::new(
            "stop",
            CommandError::UnknownAgent {
                name: "ghost".into(),
            },
        );
        assert_eq!(failed.error, "there is no agent 'ghost' in this workflow");
        assert_eq!(failed.kind, ErrorKind::UnknownAgent);
        let json = serde_json::to_value(&failed).unwrap();
        assert_eq!(json["kind"], "unknown_agent");
        // An older engine's answer, without a kind, still reads.
        let old: CommandFailed =
            serde_json::from_str(r#"{"command":"stop","error":"no"}"#).unwrap();
        assert_eq!(old.kind, ErrorKind::Other);
    }

    /// One of every command, to check each name against serde's output.
    fn one_of_each() -> Vec<Command> {
        let agent = || "coder".to_string();
        vec![
            Command::Post { text: "x".into() },
            Command::Send { text: "x".into() },
            Command::Peek {
                query: Default::default(),
            },
            Command::Stop { agent: agent() },
            Command::Cancel { agent: agent() },
            Command::Restart { agent: agent() },
            Command::Resume,
            Command::Ack {
                agent: agent(),
                until: Since::Id(1),
            },
            Command::Snapshot { messages: 1 },
            Command::ReadDocument { file: None },
            Command::WriteDocument {
                file: None,
                content: "x".into(),
            },
            Command::CreateDocument {
                file: "a.md".into(),
                content: "x".into(),
            },
            Command::DeleteDocument {
                file: "a.md".into(),
            },
            Command::Task {
                task: super::super::tasks::TaskCommand::Release { task: "t".into() },
            },
            Command::ReadTask { task: "t".into() },
            Command::ReadAgentLogs { agent: agent() },
            Command::ReadDiff {
                target: super::super::workspace::DiffTarget::Agent(agent()),
                turn: None,
            },
            Command::Workspace {
                agent: agent(),
                op: super::super::workspace::WorkspaceOp::Merge,
            },
            Command::Approve {
                request: 1,
                answer: Default::default(),
            },
            Command::RevokeApproval {
                agent: agent(),
                rule: "Bash(make)".into(),
            },
            Command::AddAgent {
                agent: super::super::agents::NewAgent {
                    name: "qa".into(),
                    backend: "claude".into(),
                    workspace: None,
                },
            },
            Command::Shutdown,
        ]
    }

    /// `name()` is serde's tag for every command, and `names()` lists them
    /// all.
    #[test]
    fn every_name_is_serdes_tag() {
        let all = one_of_each();
        for c in &all {
            let json = serde_json::to_value(c).unwrap();
            assert_eq!(json["command"], c.name(), "{json}");
        }
        let named: Vec<&str> = all.iter().map(Command::name).collect();
        assert_eq!(named, Command::names());
    }
}
