//! Agent processes an instance left behind when it was killed (`kill -9`,
//! a crash, a power cut in a container): each CLI turn runs in its own
//! process group, which outlives the engine. The engine records the group
//! of every running turn in `<state root>/agents/<agent>/turn.pgid` and
//! clears it when the turn ends; the next start of the instance ends any
//! group still recorded, so a resumed agent never works next to its own
//! orphan (two Claude sessions editing the same files).
//!
//! Every process carrying this agent's `AWTUI_MCP_CONFIG` path in its
//! environment (read from `/proc`) is ended, wherever it is: children that
//! called `setsid` left the recorded group but not their environment. The
//! recorded group, and the descendants of what is found, are ended with
//! them; the group only when one of its processes carries the marker, so a
//! recycled process id is never touched ([`Scope`]). Without `/proc`
//! nothing is ended.

use std::path::Path;
use std::time::Duration;

use super::launch::agent_dir;
use crate::agents::backend::contain::Scope;

const FILE: &str = "turn.pgid";
/// How long an orphaned group gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(3);

/// Records the process group of `agent`'s running turn.
pub fn record(state_root: &Path, agent: &str, pgid: u32) -> std::io::Result<()> {
    let dir = agent_dir(state_root, agent);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join(FILE), pgid.to_string())
}

/// Forgets `agent`'s turn (it ended).
pub fn clear(state_root: &Path, agent: &str) {
    let _ = std::fs::remove_file(agent_dir(state_root, agent).join(FILE));
}

/// Ends what earlier runs of this instance left of `agents`' turns; returns
/// a notice for each agent whose processes were ended.
pub fn reap(state_root: &Path, agents: &[String]) -> Vec<String> {
    let mut notices = Vec::new();
    for agent in agents {
        let dir = agent_dir(state_root, agent);
        let group = crate::fsutil::read_record_text(&dir.join(FILE))
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok());
        clear(state_root, agent);
        let scope = Scope {
            marker: format!("AWTUI_MCP_CONFIG={}", dir.join("mcp.json").display()),
            group,
        };
        let ended = scope.end(GRACE);
        if ended > 0 {
            let group = group
                .map(|g| format!(", process group {g}"))
                .unwrap_or_default();
            notices.push(format!(
                "ended {agent}'s turn left running by an earlier run of this instance ({ended} process(es){group})"
            ));
        }
    }
    notices
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Until the child has exec'd, /proc shows the test's own environment;
    /// `setsid` then execs `sleep` (while it does, its environment cannot
    /// be read): wait until `sleep` runs with the marker.
    fn wait_for_exec(pid: u32, marker: &str) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !(std::fs::read(format!("/proc/{pid}/environ"))
            .is_ok_and(|e| String::from_utf8_lossy(&e).contains(marker))
            && std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim() == "sleep"))
        {
            assert!(std::time::Instant::now() < deadline, "{pid} never started");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    #[test]
    fn ends_a_process_that_left_the_group_with_setsid() {
        let root = tempfile::tempdir().unwrap();
        let dir = agent_dir(root.path(), "coder");
        std::fs::create_dir_all(&dir).unwrap();
        let marker = dir.join("mcp.json").display().to_string();
        // Its own session, no recorded group: only its environment says
        // whose it is.
        let mut escaped = std::process::Command::new("setsid")
            .args(["sleep", "30"])
            .env("AWTUI_MCP_CONFIG", &marker)
            .spawn()
            .unwrap();
        wait_for_exec(escaped.id(), &marker);
        let notices = reap(root.path(), &["coder".into()]);
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(
            escaped.wait().unwrap().code().is_none(),
            "killed by a signal"
        );
    }

    #[test]
    fn ends_only_a_group_carrying_the_marker() {
        let root = tempfile::tempdir().unwrap();
        let dir = agent_dir(root.path(), "coder");
        std::fs::create_dir_all(&dir).unwrap();
        let spawn = |marker: &str| {
            use std::os::unix::process::CommandExt;
            std::process::Command::new("sleep")
                .arg("30")
                .env("AWTUI_MCP_CONFIG", marker)
                .process_group(0)
                .spawn()
                .unwrap()
        };
        // Someone else's group with the same recorded id is left alone.
        let mut other = spawn("/elsewhere/mcp.json");
        record(root.path(), "coder", other.id()).unwrap();
        assert!(reap(root.path(), &["coder".into()]).is_empty());
        assert!(other.try_wait().unwrap().is_none());
        other.kill().unwrap();
        other.wait().unwrap();

        let marker = dir.join("mcp.json").display().to_string();
        let mut orphan = spawn(&marker);
        wait_for_exec(orphan.id(), &marker);
        record(root.path(), "coder", orphan.id()).unwrap();
        let notices = reap(root.path(), &["coder".into(), "qa".into()]);
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(
            orphan.wait().unwrap().code().is_none(),
            "killed by a signal"
        );
        assert!(!dir.join(FILE).exists());
    }
}
