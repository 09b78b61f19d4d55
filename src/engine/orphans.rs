//! Agent processes an instance left behind when it was killed (`kill -9`,
//! a crash, a power cut in a container): each CLI turn runs in its own
//! process group, which outlives the engine. The engine records the group
//! of every running turn in `<state root>/agents/<agent>/turn.pgid` and
//! clears it when the turn ends; the next start of the instance ends any
//! group still recorded, so a resumed agent never works next to its own
//! orphan (two Claude sessions editing the same files).
//!
//! A group is only ended when one of its processes carries this agent's
//! `AWTUI_MCP_CONFIG` path in its environment (read from `/proc`), so a
//! recycled process id is never touched. Without `/proc` nothing is ended.

use std::path::Path;
use std::time::{Duration, Instant};

use super::launch::agent_dir;

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

/// The processes of group `pgid`, from `/proc`.
fn members(pgid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    let rest = stat.rsplit_once(')')?.1;
                    let mut fields = rest.split_whitespace();
                    let state = fields.next()?;
                    let pgrp: u32 = fields.nth(1)?.parse().ok()?;
                    Some(pgrp == pgid && state != "Z")
                })
                .unwrap_or(false)
        })
        .collect()
}

fn carries(pid: u32, marker: &[u8]) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|env| env.split(|b| *b == 0).any(|var| var == marker))
        .unwrap_or(false)
}

/// Ends the recorded turns of `agents` that are still running; returns a
/// notice for each group ended.
pub fn reap(state_root: &Path, agents: &[String]) -> Vec<String> {
    use rustix::process::{Pid, Signal, kill_process_group};
    let mut notices = Vec::new();
    for agent in agents {
        let dir = agent_dir(state_root, agent);
        let Some(pgid) = std::fs::read_to_string(dir.join(FILE))
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
        else {
            continue;
        };
        clear(state_root, agent);
        let marker = format!("AWTUI_MCP_CONFIG={}", dir.join("mcp.json").display());
        let ours = members(pgid)
            .into_iter()
            .any(|pid| carries(pid, marker.as_bytes()));
        let Some(group) = i32::try_from(pgid).ok().and_then(Pid::from_raw) else {
            continue;
        };
        if !ours {
            continue;
        }
        let _ = kill_process_group(group, Signal::TERM);
        let deadline = Instant::now() + GRACE;
        while !members(pgid).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = kill_process_group(group, Signal::KILL);
        notices.push(format!(
            "ended {agent}'s turn left running by an earlier run of this instance (process group {pgid})"
        ));
    }
    notices
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // Until `sleep` has exec'd, /proc shows the test's own environment.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !std::fs::read(format!("/proc/{}/environ", orphan.id()))
            .is_ok_and(|e| String::from_utf8_lossy(&e).contains(&marker))
        {
            assert!(std::time::Instant::now() < deadline, "sleep never started");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
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
