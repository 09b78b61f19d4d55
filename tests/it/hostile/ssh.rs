//! The attacker here is the network (or anyone who can end a process): the
//! SSH master connection to a host dies while agents work there. awtui's
//! own action is starting the replacement master; it must belong to the
//! host, not to one turn — a turn's cleanup ends every process carrying the
//! turn's marker, and a master started from inside a turn's script carries
//! it, so one agent's turn ending took every other agent's session on that
//! host with it (issue 34, found 7).
//!
//! Against the real OpenSSH server on loopback (`tests/sshd_support`).

use std::path::{Path, PathBuf};

use crate::cli_support::{World, git, init_repo, wait_for};
use crate::sshd_support::Sshd;

/// An agent whose turn `n` (one more than the `turn-*.txt` files in its
/// worktree) records each start in `$GATES/starts`, then waits until
/// `$GATES/<agent>-<n>.open` exists (saying so in `<agent>-<n>.waiting`),
/// leaves its file and posts `<agent>-<n> done` through the forward.
const AGENT: &str = r#"#!/bin/sh
cat >/dev/null
n=$(ls turn-*.txt 2>/dev/null | wc -l)
n=$((n + 1))
gate="$GATES/$AWTUI_AGENT-$n"
echo "$AWTUI_AGENT-$n" >> "$GATES/starts"
if [ ! -e "$gate.open" ]; then
  echo waiting > "$gate.waiting"
  while [ ! -e "$gate.open" ]; do sleep 0.1; done
fi
echo "turn $n" > "turn-$n.txt"
"$AWTUI_BIN" ctx send "$AWTUI_AGENT-$n done"
"#;

/// Two agents, `a` and `b`, on one host; their gates in `gates`.
fn two_on_one_host(sshd: &Sshd, gates: &Path) -> World {
    let mut w = World::new();
    let remote = w.tmp.path().join("remote/app");
    let agent = |name: &str| {
        format!(
            "  {name}:\n    command: ./agent.sh\n    host: box\n    workspace: worktree\n    \
             env:\n      GATES: \"{}\"\n",
            gates.display()
        )
    };
    let workflow = format!(
        "name: far\nhosts:\n  box:\n    ssh: {alias}\n    dir: {remote}\nagents:\n{a}{b}\
         kickoff: '@all go'\nlimits:\n  retries: 3\n  retry_backoff: 1s\n",
        alias = sshd.host_alias(),
        remote = remote.display(),
        a = agent("a"),
        b = agent("b"),
    );
    init_repo(
        &w.dir,
        &[
            ("far.yaml", &workflow),
            ("agent.sh", AGENT),
            ("src/lib.txt", "code\n"),
        ],
    );
    w.env = sshd.ssh_command_env();
    w
}

fn open(gates: &Path, gate: &str) {
    std::fs::write(gates.join(format!("{gate}.open")), "").unwrap();
}

fn wait_waiting(gates: &Path, gate: &str) {
    let file = gates.join(format!("{gate}.waiting"));
    wait_for(&format!("{gate} to wait at its gate"), || {
        file.exists().then_some(())
    });
}

/// How many times `gate`'s turn started (first try and retries).
fn starts(gates: &Path, gate: &str) -> usize {
    std::fs::read_to_string(gates.join("starts"))
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == gate)
        .count()
}

fn messages(w: &World) -> Vec<String> {
    w.channel("i")
        .iter()
        .filter_map(|m| m["message"].as_str().map(str::to_string))
        .collect()
}

fn said(w: &World, what: &str) -> String {
    wait_for(&format!("'{what}' in the channel"), || {
        messages(w).into_iter().find(|m| m.contains(what))
    })
}

/// Waits until `agent`'s turn `n` came back and was committed locally
/// (its turn, remote commit and fetch included, is over).
fn came_back(w: &World, agent: &str, n: u32) {
    let branch = format!("awtui/i/{agent}");
    let file = format!("turn-{n}.txt");
    wait_for(&format!("{agent}'s turn {n} to come back"), || {
        let files = git(&w.dir, &["ls-tree", "-r", "--name-only", &branch]);
        files.contains(&file).then_some(())
    });
}

/// The control socket of the instance's master connection.
fn control_socket(w: &World) -> PathBuf {
    wait_for("the control socket", || {
        std::fs::read_dir(w.state.join("ssh"))
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "sock"))
    })
}

/// The master's pid, as `ssh -O check` reports it, when one answers.
fn master_pid(sshd: &Sshd, socket: &Path) -> Option<u32> {
    let out = sshd
        .ssh()
        .arg("-S")
        .arg(socket)
        .args(["-O", "check", sshd.host_alias()])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stderr);
    let rest = &text[text.find("pid=")? + 4..];
    rest[..rest.find(')')?].parse().ok()
}

/// SIGKILLs the master connection (as a lost link or an OOM kill would
/// end it); returns its pid.
fn kill_master(sshd: &Sshd, socket: &Path) -> u32 {
    let pid = wait_for("a master to answer -O check", || master_pid(sshd, socket));
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    pid
}

/// Live processes whose command line is an ssh master (`-M`) on `socket`.
fn masters_on(socket: &Path) -> Vec<u32> {
    let socket = socket.display().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rfind(')')
                .is_some_and(|i| stat[i + 1..].trim_start().starts_with('Z'));
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<String> = cmd
                .split(|b| *b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            !zombie && args.iter().any(|a| a == "-M") && args.contains(&socket)
        })
        .collect()
}

/// What a turn's log says about how its ssh failed.
fn stderr_logs(w: &World) -> String {
    ["a", "b"]
        .iter()
        .map(|a| {
            std::fs::read_to_string(w.dir.join(format!(".workflow/i/agents/{a}/stderr.log")))
                .unwrap_or_default()
        })
        .collect()
}

#[test]
fn a_reconnect_in_one_turn_leaves_the_other_agents_session_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(tmp.path());
    let gates = tmp.path().join("gates");
    std::fs::create_dir_all(&gates).unwrap();
    let mut w = two_on_one_host(&sshd, &gates);
    // b's first turn goes straight through; a's holds.
    open(&gates, "b-1");
    w.start_background("far.yaml", "i");
    came_back(&w, "b", 1);
    wait_waiting(&gates, "a-1");
    let socket = control_socket(&w);
    let first = kill_master(&sshd, &socket);
    // a's turn is tried again, over a new master.
    wait_for("a's turn to be tried again", || {
        (starts(&gates, "a-1") >= 2).then_some(())
    });
    let master = wait_for("a new master", || {
        master_pid(&sshd, &socket).filter(|p| *p != first)
    });
    // The new master is awtui's, not the turn's: it carries no turn's
    // marker, so no turn's cleanup ends it.
    let environ = std::fs::read(format!("/proc/{master}/environ")).unwrap_or_default();
    assert!(
        !String::from_utf8_lossy(&environ).contains("AWTUI_TURN="),
        "the new master (pid {master}) carries a turn's marker"
    );
    // b works while a's retried turn ends and is cleaned up.
    let r = w.run(&["send", "again", "--to", "b@i"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    wait_waiting(&gates, "b-2");
    open(&gates, "a-1");
    said(&w, "a-1 done");
    open(&gates, "b-2");
    said(&w, "b-2 done");
    assert_eq!(
        starts(&gates, "b-2"),
        1,
        "b's turn was cut off when a's turn ended; logs:\n{}",
        stderr_logs(&w)
    );
    assert_eq!(
        master_pid(&sshd, &socket),
        Some(master),
        "the master changed"
    );
    // a's turn lost its connection: it was said, naming the host and why
    // (the master was killed, and said nothing).
    let lost = said(&w, "a's turn was cut off: ");
    assert!(
        lost.contains("connection to host 'box' lost: ") && lost.contains("killed by signal 9"),
        "{lost}"
    );
    let b_lost = messages(&w)
        .into_iter()
        .filter(|m| m.starts_with("b's turn"))
        .collect::<Vec<_>>();
    assert!(b_lost.is_empty(), "b lost its session: {b_lost:?}");
    // The drop itself is a notice of the instance's, naming the host.
    let log = w.dir.join(".workflow/i/awtui.log");
    wait_for("the drop to be noticed in the instance's log", || {
        std::fs::read_to_string(&log)
            .ok()
            .filter(|t| t.contains("connection to host 'box' lost: "))
    });
}

#[test]
fn a_host_that_stays_down_ends_in_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sshd = Sshd::start(tmp.path());
    let gates = tmp.path().join("gates");
    std::fs::create_dir_all(&gates).unwrap();
    let mut w = two_on_one_host(&sshd, &gates);
    open(&gates, "b-1");
    w.start_background("far.yaml", "i");
    wait_waiting(&gates, "a-1");
    came_back(&w, "b", 1);
    let socket = control_socket(&w);
    // The host takes no new connection; then the master goes.
    sshd.stop();
    kill_master(&sshd, &socket);
    let failed = said(&w, "a failed after");
    assert!(
        failed.contains("connection to host 'box' lost: ")
            && failed.contains("reconnecting failed: cannot connect: ")
            && failed.contains("Connection refused"),
        "{failed}"
    );
    // Nothing but the first start ran: no turn went on without the host.
    assert_eq!(starts(&gates, "a-1"), 1);
}

#[test]
fn turns_that_need_a_reconnect_at_once_start_exactly_one_master() {
    let tmp = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(tmp.path());
    let gates = tmp.path().join("gates");
    std::fs::create_dir_all(&gates).unwrap();
    let mut w = two_on_one_host(&sshd, &gates);
    w.start_background("far.yaml", "i");
    wait_waiting(&gates, "a-1");
    wait_waiting(&gates, "b-1");
    let socket = control_socket(&w);
    kill_master(&sshd, &socket);
    // Both turns are cut off and both are tried again at once.
    wait_for("both turns to be tried again", || {
        (starts(&gates, "a-1") >= 2 && starts(&gates, "b-1") >= 2).then_some(())
    });
    open(&gates, "a-1");
    open(&gates, "b-1");
    said(&w, "a-1 done");
    said(&w, "b-1 done");
    let logs = stderr_logs(&w);
    assert!(
        !logs.contains("forwarding failed"),
        "two masters raced for the forward:\n{logs}"
    );
    assert_eq!(
        masters_on(&socket).len(),
        1,
        "not exactly one master on {}:\n{logs}",
        socket.display()
    );
    assert_eq!(starts(&gates, "a-1"), 2, "{logs}");
    assert_eq!(starts(&gates, "b-1"), 2, "{logs}");
}
