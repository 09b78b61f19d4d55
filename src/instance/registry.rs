//! Running instances, findable from any directory: each records itself in
//! its folder (`instance.json`) and in the per-user registry
//! (`<state dir>/instances/<name>.<hash of its folder>.json`). Two instances
//! may share a name when they run from different folders; commands then ask
//! which one is meant (see [`super::target`]).
//!
//! A recorded instance counts as running only when its process is alive
//! (not a zombie) and its control socket answers, or, when the socket does
//! not answer, its lock is still held (a busy or starting instance). Records
//! of anything else are stale: they are removed when found, never shown.

use std::io;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::layout::{self, INSTANCE_FILE, LayoutError};
use super::lock;
use crate::fsutil::atomic_write;

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
    /// When the engine started.
    pub started: DateTime<Utc>,
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

    fn registry_name(&self) -> String {
        format!("{}.{}.json", self.instance, layout::path_hash(&self.home))
    }
}

/// Why the registry could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// No state dir.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// A record could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The record.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
}

/// Records a running instance in the registry, then in its folder: the
/// folder's record is what a starting parent waits for, so once it is there
/// every command can find the instance.
pub fn register(info: &InstanceInfo) -> Result<(), RegistryError> {
    let text = serde_json::to_vec_pretty(info).unwrap_or_default();
    let dir = layout::private_dir(&layout::registry_dir()?)?;
    for path in [
        dir.join(info.registry_name()),
        info.home.join(INSTANCE_FILE),
    ] {
        atomic_write(&path, &text).map_err(|source| RegistryError::Write { path, source })?;
    }
    Ok(())
}

/// Removes the records of an instance that stops.
pub fn unregister(info: &InstanceInfo) {
    if let Ok(dir) = layout::registry_dir() {
        let _ = std::fs::remove_file(dir.join(info.registry_name()));
    }
    let _ = std::fs::remove_file(info.home.join(INSTANCE_FILE));
}

/// The record in an instance folder, if any (running or not).
pub fn read_home(home: &Path) -> Option<InstanceInfo> {
    let bytes = std::fs::read(home.join(INSTANCE_FILE)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Whether process `pid` exists and is not a zombie.
pub fn process_alive(pid: u32) -> bool {
    let Some(p) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    if rustix::process::test_kill_process(p).is_err() {
        return false;
    }
    // A zombie (killed, not yet reaped) still answers kill(0).
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_none_or(|state| state != "Z" && state != "X"),
        Err(_) => true,
    }
}

/// Whether the recorded instance is running (see the module doc).
pub fn is_running(info: &InstanceInfo) -> bool {
    if !process_alive(info.pid) {
        return false;
    }
    if std::os::unix::net::UnixStream::connect(&info.control).is_ok() {
        return true;
    }
    lock::is_held(&info.home) && read_home(&info.home).is_some_and(|i| i.pid == info.pid)
}

/// Every running instance on this machine (for this user), oldest first.
/// Stale records are removed on the way.
pub fn running() -> Result<Vec<InstanceInfo>, RegistryError> {
    let dir = layout::registry_dir()?;
    let mut found = Vec::new();
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(_) => return Ok(found),
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let info: Option<InstanceInfo> = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        match info {
            Some(info) if is_running(&info) => found.push(info),
            Some(info) => {
                let _ = std::fs::remove_file(&path);
                // The folder's record too, unless a newer instance wrote it.
                if read_home(&info.home).is_some_and(|i| i.pid == info.pid) {
                    let _ = std::fs::remove_file(info.home.join(INSTANCE_FILE));
                }
            }
            None => {
                // A half-written record is never left by atomic writes;
                // anything unreadable here is not ours to keep.
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    found.sort_by(|a, b| a.started.cmp(&b.started).then(a.instance.cmp(&b.instance)));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_dead_one_is_not() {
        assert!(process_alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!process_alive(pid));
    }

    #[test]
    fn sources_and_addresses() {
        let mut info = InstanceInfo {
            instance: "pr-1".into(),
            workflow_name: "review".into(),
            workflow: "/w/review.yaml".into(),
            workdir: "/w".into(),
            home: "/w/.workflow/pr-1".into(),
            pid: 1,
            mode: "start".into(),
            standalone: false,
            agents: vec!["coder".into()],
            control: "/w/.workflow/pr-1/control.sock".into(),
            token_file: "/w/.workflow/pr-1/control.token".into(),
            mcp_url: "http://127.0.0.1:1/mcp".into(),
            mcp_socket: None,
            log: None,
            started: Utc::now(),
        };
        assert_eq!(info.source(), "review.yaml");
        assert_eq!(info.address("coder"), "coder@pr-1");
        info.standalone = true;
        info.instance = "coder".into();
        assert_eq!(info.source(), "(standalone)");
        assert_eq!(info.address("coder"), "coder");
    }
}
