//! Whether a process is alive: the check both the lock (wait for a dying
//! holder) and the registry (drop records of dead instances) make, kept
//! below both so neither imports the other for it.

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
    // A zombie (killed, not yet reaped) still answers kill(0), and so does
    // a process the kernel is tearing down after SIGKILL: it may hold its
    // locks a moment longer, but it is not alive.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat_says_dying(&stat) && !kill_pending(pid),
        Err(_) => true,
    }
}

/// The kernel's flag on a task that has begun to exit (`PF_EXITING`).
const PF_EXITING: u64 = 0x4;

/// Whether a `/proc/<pid>/stat` line shows a zombie, a dead task, or one
/// that has begun to exit.
fn stat_says_dying(stat: &str) -> bool {
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return false;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first().copied().unwrap_or("");
    // Field 9 of the line, the 7th after the command's parenthesis.
    let flags = fields
        .get(6)
        .and_then(|f| f.parse::<u64>().ok())
        .unwrap_or(0);
    state == "Z" || state == "X" || flags & PF_EXITING != 0
}

/// Whether SIGKILL is pending for the process (delivered, not yet acted on).
fn kill_pending(pid: u32) -> bool {
    const SIGKILL_BIT: u64 = 1 << (9 - 1);
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status.lines().any(|line| {
        line.strip_prefix("ShdPnd:")
            .or_else(|| line.strip_prefix("SigPnd:"))
            .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
            .is_some_and(|mask| mask & SIGKILL_BIT != 0)
    })
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
    fn zombies_and_exiting_tasks_are_dying() {
        let line = |state: &str, flags: u64| {
            format!("12 (a (weird) name) {state} 1 12 12 0 -1 {flags} 0 0 0 0 0 0")
        };
        assert!(!stat_says_dying(&line("S", 0x400100)));
        assert!(stat_says_dying(&line("Z", 0)));
        assert!(stat_says_dying(&line("X", 0)));
        assert!(stat_says_dying(&line("R", 0x400104)));
    }
}
