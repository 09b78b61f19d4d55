//! The loopback OpenSSH fixture (`tests/sshd_support`) does what the ssh
//! tests rely on: a session through its config and through the `PATH`
//! wrapper, a git clone over it, a ControlMaster with a dynamically
//! allocated remote forward, and `stop`/`kill_all`/`restart`/`Drop` with
//! the process semantics they document. No test skips: without sshd,
//! `Sshd::start` panics.

use crate::sshd_support;

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use sshd_support::{PATIENCE, Sshd, wait_for};

fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// Polls `cond` until it holds; panics with `what` after `PATIENCE`.
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    wait_for(what, || cond().then_some(()))
}

/// git isolated from the user's and the system's configuration.
fn git(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args(["-c", "user.name=fixture", "-c", "user.email=fixture@test"])
        .stdin(Stdio::null());
    cmd
}

/// `ssh` with a per-test ControlMaster that persists in the background.
fn mux(sshd: &Sshd, dir: &Path) -> Command {
    let mut cmd = sshd.ssh();
    cmd.arg("-o")
        .arg("ControlMaster=auto")
        .arg("-o")
        .arg(format!("ControlPath={}/cm-%C", dir.display()))
        .arg("-o")
        .arg("ControlPersist=60");
    cmd
}

#[test]
fn a_session_through_the_config_runs_a_command() {
    let tmp = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(tmp.path());
    let out = sshd
        .ssh()
        .args([sshd.host_alias(), "echo", "ok"])
        .output()
        .unwrap();
    assert_eq!(ok(out, "ssh -F config echo ok"), "ok\n");
    assert_eq!(
        sshd.config(),
        tmp.path().canonicalize().unwrap().join("ssh_config")
    );
    assert!(sshd.log().contains("Accepted publickey"), "{}", sshd.log());
    // Sessions live in the fixture's own home (no startup file of the
    // real user's runs there).
    let out = sshd
        .ssh()
        .args([sshd.host_alias(), "printf %s \"$HOME\""])
        .output()
        .unwrap();
    assert_eq!(ok(out, "ssh … $HOME"), sshd.home().display().to_string());
}

#[test]
fn the_wrapper_dir_makes_plain_ssh_use_the_fixture() {
    let tmp = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(tmp.path());
    let out = Command::new("sh")
        .args(["-c", "command -v ssh && ssh awtui-test-host echo ok"])
        .envs(sshd.ssh_command_env())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let wrapper = sshd.wrapper_dir().join("ssh");
    assert_eq!(
        ok(out, "plain ssh through the wrapper"),
        format!("{}\nok\n", wrapper.display())
    );
}

#[test]
fn git_clones_over_the_fixture_with_ssh_from_path() {
    let tmp = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(tmp.path());
    let dir = tmp.path().canonicalize().unwrap();
    let bare = dir.join("remote.git");
    let work = dir.join("work");
    std::fs::create_dir(&work).unwrap();
    ok(
        git(&dir)
            .args(["init", "-q", "--bare"])
            .arg(&bare)
            .output()
            .unwrap(),
        "git init --bare",
    );
    ok(
        git(&work).args(["init", "-q"]).output().unwrap(),
        "git init",
    );
    std::fs::write(work.join("hello.txt"), "over ssh\n").unwrap();
    ok(
        git(&work).args(["add", "hello.txt"]).output().unwrap(),
        "git add",
    );
    ok(
        git(&work)
            .args(["commit", "-q", "-m", "one"])
            .output()
            .unwrap(),
        "git commit",
    );
    ok(
        git(&work)
            .arg("push")
            .arg("-q")
            .arg(&bare)
            .arg("HEAD:refs/heads/main")
            .output()
            .unwrap(),
        "git push to the bare repo",
    );

    // `host:path` is always git's ssh transport, and the alias only
    // resolves through the fixture's config, so success means git ran
    // the wrapper from PATH.
    let mut env = sshd.ssh_command_env();
    env.retain(|(k, _)| k == "PATH");
    let url = format!("{}:{}", sshd.host_alias(), bare.display());
    ok(
        git(&dir)
            .args(["clone", "-q", "-b", "main"])
            .arg(&url)
            .arg("clone")
            .env_remove("GIT_SSH_COMMAND")
            .env_remove("GIT_SSH")
            .envs(env)
            .output()
            .unwrap(),
        "git clone over ssh",
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("clone/hello.txt")).unwrap(),
        "over ssh\n"
    );
}

#[test]
fn a_control_master_serves_later_sessions() {
    let tmp = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(tmp.path());
    let dir = tmp.path();
    let host = sshd.host_alias();
    let first = mux(&sshd, dir)
        .args([host, "echo", "one"])
        .output()
        .unwrap();
    assert_eq!(ok(first, "first session (starts the master)"), "one\n");
    let second = mux(&sshd, dir)
        .args([host, "echo", "two"])
        .output()
        .unwrap();
    assert_eq!(ok(second, "second session (through the master)"), "two\n");
    let check = mux(&sshd, dir)
        .args(["-O", "check", host])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&check.stderr).to_string();
    ok(check, "ssh -O check");
    assert!(stderr.contains("Master running"), "{stderr}");
    ok(
        mux(&sshd, dir).args(["-O", "exit", host]).output().unwrap(),
        "ssh -O exit",
    );
}

#[test]
fn a_dynamic_remote_forward_reaches_a_local_listener() {
    let tmp = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(tmp.path());
    let dir = tmp.path();
    let host = sshd.host_alias();
    let local = TcpListener::bind("127.0.0.1:0").unwrap();
    let local_port = local.local_addr().unwrap().port();

    ok(
        mux(&sshd, dir).args([host, "true"]).output().unwrap(),
        "start the master",
    );
    let out = mux(&sshd, dir)
        .args(["-O", "forward", "-R"])
        .arg(format!("0:127.0.0.1:{local_port}"))
        .arg(host)
        .output()
        .unwrap();
    let printed = ok(out, "ssh -O forward -R 0:…");
    let remote_port: u16 = printed
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("allocated port {printed:?}: {e}"));
    assert_ne!(remote_port, 0);

    // From the "remote" side: a session connects to the allocated port.
    let script = format!("printf hello >/dev/tcp/127.0.0.1/{remote_port}");
    let remote = sshd
        .ssh()
        .arg(host)
        .arg(format!("exec bash -c '{script}'"))
        .output()
        .unwrap();
    ok(remote, "connect to the forwarded port on the remote");

    local.set_nonblocking(true).unwrap();
    let mut conn = None;
    wait_until(
        "the forwarded connection reaches the local listener",
        || match local.accept() {
            Ok((s, _)) => {
                conn = Some(s);
                true
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
            Err(e) => panic!("accept: {e}"),
        },
    );
    let mut conn = conn.unwrap();
    conn.set_nonblocking(false).unwrap();
    conn.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut got = String::new();
    conn.read_to_string(&mut got).unwrap();
    assert_eq!(got, "hello");
    ok(
        mux(&sshd, dir).args(["-O", "exit", host]).output().unwrap(),
        "ssh -O exit",
    );
}

/// Starts `ssh host '<needle>=1 sleep 100'` and waits until the remote
/// `sleep` runs; returns the client and the pids of the remote side.
fn open_session(sshd: &Sshd, needle: &str) -> (std::process::Child, Vec<u32>) {
    let client = sshd
        .ssh()
        .arg(sshd.host_alias())
        .arg(format!("{needle}=1 sleep 100"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut remote = Vec::new();
    wait_until("the remote sleep runs", || {
        remote = remote_with(sshd, needle);
        !remote.is_empty()
    });
    (client, remote)
}

/// Processes of this server's sessions whose command line or environment
/// holds `needle` (the local client, which also carries it, left out).
fn remote_with(sshd: &Sshd, needle: &str) -> Vec<u32> {
    let sessions = sshd.session_processes();
    sshd.remote_processes_with(needle)
        .into_iter()
        .filter(|pid| sessions.contains(pid))
        .collect()
}

/// Waits for `client` to exit and returns its status.
fn exit_of(client: &mut std::process::Child, what: &str) -> std::process::ExitStatus {
    let mut status = None;
    wait_until(what, || {
        status = client.try_wait().unwrap();
        status.is_some()
    });
    status.unwrap()
}

/// Whether `pid` names a live (not zombie) process.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|r| !r.trim_start().starts_with('Z'))
    })
}

#[test]
fn stop_refuses_new_sessions_keeps_open_ones_and_restart_serves_again() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sshd = Sshd::start(tmp.path());
    let needle = format!("AWTUI_SSHD_FIXTURE_STOP_{}", std::process::id());
    let (mut client, remote) = open_session(&sshd, &needle);
    let port = sshd.port();
    sshd.stop();
    assert_eq!(sshd.listener_pid(), None);
    let refused = sshd
        .ssh()
        .args([sshd.host_alias(), "true"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(255), "{refused:?}");
    // As with any sshd, the open session outlives its listener.
    assert!(
        client.try_wait().unwrap().is_none(),
        "the open session ended"
    );
    assert_eq!(remote_with(&sshd, &needle), remote);

    sshd.restart();
    assert_eq!(sshd.port(), port, "restart keeps the port");
    let back = sshd
        .ssh()
        .args([sshd.host_alias(), "echo", "back"])
        .output()
        .unwrap();
    assert_eq!(ok(back, "ssh after restart"), "back\n");

    // kill_all reaches the session of the listener stop ended, too.
    sshd.kill_all();
    let status = exit_of(&mut client, "the stopped listener's session drops");
    assert_eq!(status.code(), Some(255));
    drop(sshd);
    wait_until("drop ends the remote command", || {
        remote.iter().all(|&p| !alive(p))
    });
}

#[test]
fn kill_all_drops_open_sessions_restart_recovers_and_drop_cleans_up() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sshd = Sshd::start(tmp.path());
    let needle = format!("AWTUI_SSHD_FIXTURE_KILL_{}", std::process::id());
    let (mut client, orphans) = open_session(&sshd, &needle);
    // The local client carries the needle in its arguments, so it is
    // found as well (the "remote" is this machine).
    assert!(
        sshd.remote_processes_with(&needle).contains(&client.id()),
        "the local ssh client is found by its command line"
    );

    let killed_at = Instant::now();
    sshd.kill_all();
    let status = exit_of(&mut client, "the client exits once its connection is gone");
    eprintln!(
        "client exited {status} {:?} after kill_all",
        killed_at.elapsed()
    );
    assert_eq!(status.code(), Some(255), "a lost connection is ssh's 255");

    let refused = sshd
        .ssh()
        .args([sshd.host_alias(), "true"])
        .output()
        .unwrap();
    assert!(!refused.status.success(), "no listener after kill_all");
    // As on a real host, the command of a dropped session lives on.
    assert_eq!(
        remote_with(&sshd, &needle),
        orphans,
        "kill_all leaves the session's command"
    );

    sshd.restart();
    ok(
        sshd.ssh()
            .args([sshd.host_alias(), "true"])
            .output()
            .unwrap(),
        "ssh after kill_all and restart",
    );

    let listener = sshd.listener_pid().unwrap();
    drop(sshd);
    wait_until("drop ends the listener and the orphaned command", || {
        !alive(listener) && orphans.iter().all(|&p| !alive(p))
    });
}
