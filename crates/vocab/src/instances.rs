//! Instances as the screens that list them see them: a running instance's
//! record and its status (`awtui list`, the home screen, `awtui web`).

use std::path::PathBuf;

use chrono::{DateTime, Utc};

use serde::{Deserialize, Serialize};

use super::agents::{PauseReason, RunOutcome};
use super::event::AgentSnapshot;

/// What a running instance says about itself (`instance.json` and its
/// registry entry hold the same).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceInfo {
    /// The instance name (`@name`).
    pub instance: String,
    /// The workflow's name.
    pub workflow_name: String,
    /// The workflow file, absolute.
    pub workflow: PathBuf,
    /// Where its agents work (the workflow's folder, or a standalone
    /// agent's working directory).
    pub workdir: PathBuf,
    /// The instance folder.
    pub home: PathBuf,
    /// The engine's process.
    pub pid: u32,
    /// `run` (ends when idle) or `start` (persistent).
    pub mode: String,
    /// A standalone agent made by `awtui new`.
    #[serde(default)]
    pub standalone: bool,
    /// The agents, in workflow order.
    pub agents: Vec<String>,
    /// The control socket.
    pub control: PathBuf,
    /// The file holding the control endpoint's admin token (0600).
    pub token_file: PathBuf,
    /// The MCP server's HTTP URL.
    pub mcp_url: String,
    /// The MCP server's unix socket, when it has one.
    #[serde(default)]
    pub mcp_socket: Option<PathBuf>,
    /// Where a background instance writes its output.
    #[serde(default)]
    pub log: Option<PathBuf>,
    /// The per-user state dir the instance uses (where its agents' tokens
    /// are), so a reader with another environment finds them.
    #[serde(default)]
    pub state_dir: Option<PathBuf>,
    /// When the engine started.
    pub started: DateTime<Utc>,
}

/// A running instance as `list` shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceStatus {
    /// Its record.
    pub info: InstanceInfo,
    /// Each agent's status and counters.
    pub agents: Vec<AgentSnapshot>,
    /// Why it is paused, if it is.
    pub paused: Option<PauseReason>,
    /// How it ended, once it has (it is shutting down).
    pub finished: Option<RunOutcome>,
}

impl InstanceInfo {
    /// The workflow file's name, as `list` shows it (`(standalone)` for
    /// standalone agents).
    pub fn source(&self) -> String {
        if self.standalone {
            return "(standalone)".to_string();
        }
        self.workflow
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.workflow.display().to_string())
    }

    /// How to address agent `agent` of this instance.
    pub fn address(&self, agent: &str) -> String {
        if self.standalone && agent == self.instance {
            agent.to_string()
        } else {
            format!("{agent}@{}", self.instance)
        }
    }
}
