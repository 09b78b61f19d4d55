//! Finding and ending every process of an agent turn, including those that
//! left its process group (`setsid`, double forks) and those reparented to
//! init after their parent exited.
//!
//! Decision: processes are identified, not adopted. Every agent process is
//! started with marker variables in its environment (`AWTUI_TURN`, unique
//! per turn, and `AWTUI_MCP_CONFIG`, unique per instance and agent); a
//! process keeps its environment across `setsid`, forks and `exec` unless it
//! replaces it on purpose, so `/proc/<pid>/environ` tells whose it is. A
//! turn's processes are: the processes carrying its marker, its process
//! group when one of the group's processes carries the marker (a recycled
//! group id is never touched), and every live descendant of those (which
//! catches a child started with an emptied environment while its parent
//! lives).
//!
//! awtui does not make itself a child subreaper: adopted orphans would have
//! to be reaped by awtui, and a reaper cannot tell them from the children
//! other parts of awtui wait for (setup commands, the editor) without
//! stealing exit statuses. Left-over processes are reparented to init as
//! usual, which reaps them. What escapes: a process that both empties its
//! environment and outlives its parent. Without `/proc` nothing is found
//! (only the process group is signalled by the runner).

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

/// One process as `/proc/<pid>/stat` describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: u32,
    pub ppid: u32,
    pub pgid: u32,
    /// Start time (clock ticks after boot): with the pid, identifies the
    /// process even after its pid is reused.
    pub start: u64,
    /// Exited and waiting to be reaped: nothing left to end.
    pub zombie: bool,
}

/// Parses the text of `/proc/<pid>/stat`.
pub fn parse_stat(pid: u32, text: &str) -> Option<ProcStat> {
    // The command name (field 2) may hold spaces and parentheses.
    let rest = text.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Fields from 3 on: state, ppid, pgrp, session, …, starttime (22).
    Some(ProcStat {
        pid,
        zombie: matches!(*fields.first()?, "Z" | "X"),
        ppid: fields.get(1)?.parse().ok()?,
        pgid: fields.get(2)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// Chooses a turn's processes from a snapshot of all processes: the live
/// ones `carries` marks, `group`'s when one of them is marked, and all
/// their live descendants; never `me` or its ancestors.
pub fn select(
    procs: &[ProcStat],
    mut carries: impl FnMut(u32) -> bool,
    group: Option<u32>,
    me: u32,
) -> Vec<ProcStat> {
    let by_pid: HashMap<u32, &ProcStat> = procs.iter().map(|p| (p.pid, p)).collect();
    let mut spared = HashSet::new();
    let mut cur = Some(me);
    while let Some(pid) = cur.filter(|p| *p != 0 && spared.insert(*p)) {
        cur = by_pid.get(&pid).map(|p| p.ppid);
    }
    let live: Vec<&ProcStat> = procs
        .iter()
        .filter(|p| !p.zombie && !spared.contains(&p.pid))
        .collect();
    let marked: HashSet<u32> = live
        .iter()
        .filter(|p| carries(p.pid))
        .map(|p| p.pid)
        .collect();
    let trusted_group =
        group.filter(|g| live.iter().any(|p| p.pgid == *g && marked.contains(&p.pid)));
    let mut chosen: HashSet<u32> = live
        .iter()
        .filter(|p| marked.contains(&p.pid) || Some(p.pgid) == trusted_group)
        .map(|p| p.pid)
        .collect();
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for p in &live {
        children.entry(p.ppid).or_default().push(p.pid);
    }
    let mut queue: VecDeque<u32> = chosen.iter().copied().collect();
    while let Some(pid) = queue.pop_front() {
        for child in children.get(&pid).into_iter().flatten() {
            if chosen.insert(*child) {
                queue.push_back(*child);
            }
        }
    }
    live.into_iter()
        .filter(|p| chosen.contains(&p.pid))
        .copied()
        .collect()
}

fn read_stat(pid: u32) -> Option<ProcStat> {
    parse_stat(
        pid,
        &std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?,
    )
}

/// Every process `/proc` shows (empty without `/proc`).
fn snapshot() -> Vec<ProcStat> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(read_stat)
        .collect()
}

/// Whether `pid`'s environment holds exactly `var` (`NAME=value`).
pub fn carries(pid: u32, var: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|env| env.split(|b| *b == 0).any(|v| v == var.as_bytes()))
        .unwrap_or(false)
}

/// Whether `pid` is an agent's process or was started by one: it or one
/// of its ancestors carries an agent turn's marker ([`super::process::TURN_VAR`])
/// in its environment. The walk stops at this process (an awtui started by
/// an agent does not make every client an agent). What escapes: a process
/// that empties its environment and whose parents did too, or that left
/// its parents (a double fork) and emptied its environment.
pub fn started_by_an_agent(pid: u32) -> bool {
    let me = std::process::id();
    let prefix = format!("{}=", super::process::TURN_VAR);
    let mut at = pid;
    for _ in 0..64 {
        if at <= 1 || at == me {
            return false;
        }
        let marked = std::fs::read(format!("/proc/{at}/environ")).is_ok_and(|env| {
            env.split(|b| *b == 0)
                .any(|v| v.starts_with(prefix.as_bytes()))
        });
        if marked {
            return true;
        }
        match read_stat(at) {
            Some(stat) => at = stat.ppid,
            None => return false,
        }
    }
    false
}

/// Whether the process `p` described is still running (not the same pid
/// reused by another process, not a zombie).
fn running(p: &ProcStat) -> bool {
    read_stat(p.pid).is_some_and(|now| now.start == p.start && !now.zombie)
}

/// Sends `sig` to `p` if it is still the same process.
fn signal(p: &ProcStat, sig: Signal) {
    if running(p)
        && let Some(pid) = i32::try_from(p.pid).ok().and_then(Pid::from_raw)
    {
        let _ = rustix::process::kill_process(pid, sig);
    }
}

/// The processes of one agent turn (or of every turn of one agent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scope {
    /// The marker variable, `NAME=value`.
    pub marker: String,
    /// The turn's process group, if known.
    pub group: Option<u32>,
}

/// How often a stop checks whether everything has ended.
const POLL: Duration = Duration::from_millis(20);
/// Rounds of SIGKILL for processes that keep forking.
const KILL_ROUNDS: usize = 50;

impl Scope {
    /// The scope's live processes, from `/proc`.
    pub fn members(&self) -> Vec<ProcStat> {
        let me = std::process::id();
        select(
            &snapshot(),
            |pid| carries(pid, &self.marker),
            self.group,
            me,
        )
    }

    /// Ends every process of the scope: SIGTERM, up to `grace` to exit,
    /// then SIGKILL for whatever is left or was started meanwhile. Returns
    /// how many processes there were. Blocks (polls `/proc`): call it from a
    /// blocking thread.
    pub fn end(&self, grace: Duration) -> usize {
        let found = self.members();
        if found.is_empty() {
            return 0;
        }
        for p in &found {
            signal(p, Signal::TERM);
        }
        let deadline = Instant::now() + grace;
        while found.iter().any(running) && Instant::now() < deadline {
            std::thread::sleep(POLL);
        }
        for _ in 0..KILL_ROUNDS {
            let left = self.members();
            if left.is_empty() {
                break;
            }
            for p in &left {
                signal(p, Signal::KILL);
            }
            std::thread::sleep(POLL);
        }
        found.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: u32, ppid: u32, pgid: u32) -> ProcStat {
        ProcStat {
            pid,
            ppid,
            pgid,
            start: 1,
            zombie: false,
        }
    }

    #[test]
    fn stat_with_a_tricky_command_name() {
        let text = "42 (a) b (c) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 123456 1 1";
        assert_eq!(
            parse_stat(42, text),
            Some(ProcStat {
                pid: 42,
                ppid: 7,
                pgid: 42,
                start: 123456,
                zombie: false
            })
        );
        assert!(
            parse_stat(1, "1 (x) Z 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 0 0 1 0 9 0 0")
                .unwrap()
                .zombie
        );
        assert_eq!(parse_stat(1, "garbage"), None);
    }

    #[test]
    fn marked_processes_their_descendants_and_a_trusted_group() {
        let procs = [
            p(1, 0, 1),
            p(10, 1, 10),  // awtui
            p(20, 10, 20), // the agent, leader of group 20
            p(21, 20, 20), // its child, environment emptied
            p(30, 1, 30),  // setsid'ed, reparented to init, marked
            p(31, 30, 31), // its child, environment emptied
            p(40, 1, 40),  // someone else
            p(50, 1, 99),  // someone else's group 99
        ];
        let marked = [20, 30];
        let mut chosen: Vec<u32> = select(&procs, |pid| marked.contains(&pid), Some(20), 10)
            .iter()
            .map(|p| p.pid)
            .collect();
        chosen.sort();
        assert_eq!(chosen, [20, 21, 30, 31]);

        // A recorded group with no marked process is someone else's now.
        let chosen = select(&procs, |_| false, Some(99), 10);
        assert!(chosen.is_empty());

        // Never the caller or its ancestors, never zombies.
        let mut procs = procs.to_vec();
        procs[3].zombie = true;
        let chosen: Vec<u32> = select(&procs, |_| true, None, 20)
            .iter()
            .map(|p| p.pid)
            .collect();
        assert!(!chosen.contains(&20) && !chosen.contains(&10) && !chosen.contains(&1));
        assert!(!chosen.contains(&21), "zombie");
        assert!(chosen.contains(&30));
    }
}
