//! A real OpenSSH server on loopback for integration tests: `Sshd::start`
//! generates keys and configs in a directory the test owns, runs
//! `/usr/sbin/sshd -D` on a free 127.0.0.1 port and returns once a real
//! `ssh … true` succeeds. Include it with `mod sshd_support;`.
//!
//! The client side lives in the same directory: `ssh_config` names the
//! server `awtui-test-host` (`host_alias()`), with its own key,
//! `known_hosts` and no agent, so nothing reads or writes the user's real
//! `~/.ssh`. Code under test that runs a plain `ssh` (the product, git)
//! reaches the fixture through `wrapper_dir()`: a folder whose `ssh` is a
//! script that `exec`s `/usr/bin/ssh -F <dir>/ssh_config "$@"`; put it
//! first on `PATH` (`ssh_command_env()` does, and sets `GIT_SSH_COMMAND`
//! to it as well).
//!
//! Failure is loud: a missing `sshd`, `ssh` or `ssh-keygen`, or a server
//! that does not answer within `PATIENCE`, panics (with sshd's log), so a
//! test that needs the server fails and never skips. `.ci/run` installs
//! `openssh-server` and `openssh-client`.
//!
//! The server is on the same machine as the test, so "remote" processes
//! are local ones: `remote_processes_with` and `session_processes` look
//! at `/proc`.

use std::collections::{HashMap, HashSet};
use std::fs::{self, OpenOptions};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use rustix::process::{Pid, Signal, kill_process};

pub use crate::patience::{PATIENCE, poll_within, wait_for};

/// The server binary the fixture runs (sshd wants an absolute path).
pub const SSHD: &str = "/usr/sbin/sshd";
/// The real client, which the wrapper script `exec`s.
pub const SSH: &str = "/usr/bin/ssh";
/// The key generator for the host and user keys.
pub const SSH_KEYGEN: &str = "/usr/bin/ssh-keygen";
/// The name `ssh_config` gives the fixture's server.
pub const HOST_ALIAS: &str = "awtui-test-host";

/// A running `sshd` on 127.0.0.1, its keys and the client config that
/// reaches it. Dropping it kills the listener, every session it started
/// and every process those sessions ran.
pub struct Sshd {
    dir: PathBuf,
    config: PathBuf,
    port: u16,
    user: String,
    listener: Option<Child>,
    /// Processes of listeners `stop` ended (pid, start time): their
    /// sessions live on, reparented away from any listener.
    detached: Vec<(u32, u64)>,
}

impl Sshd {
    /// Generates an ed25519 host key and user key in `dir` (a directory
    /// the test owns, e.g. a tempdir), writes `authorized_keys`,
    /// `sshd_config`, `ssh_config`, `known_hosts` and the `ssh` wrapper,
    /// starts sshd on a free loopback port (its stderr appended to
    /// `dir/sshd.log`) and waits until `ssh awtui-test-host true` succeeds.
    /// Panics, with the log, if that does not happen within `PATIENCE`.
    pub fn start(dir: &Path) -> Sshd {
        for tool in [SSHD, SSH, SSH_KEYGEN] {
            assert!(
                Path::new(tool).is_file(),
                "{tool} is missing: the ssh tests need openssh-server and openssh-client \
                 (.ci/run installs them)"
            );
        }
        let dir = dir
            .canonicalize()
            .unwrap_or_else(|e| panic!("fixture dir {}: {e}", dir.display()));
        let text = dir.to_str().expect("fixture dir is UTF-8");
        // sshd_config and ssh_config values are whitespace-separated; the
        // wrapper quotes with single quotes.
        assert!(
            !text.contains(|c: char| c.is_whitespace() || c == '\'' || c == '"'),
            "fixture dir {text} must not contain spaces or quotes"
        );
        let mut sshd = Sshd {
            config: dir.join("ssh_config"),
            dir,
            port: 0,
            user: current_user(),
            listener: None,
            detached: Vec::new(),
        };
        keygen(&sshd.host_key(), "awtui-test-host-key");
        keygen(&sshd.user_key(), "awtui-test-user-key");
        fs::copy(
            sshd.user_key().with_extension("pub"),
            sshd.authorized_keys(),
        )
        .expect("write authorized_keys");
        sshd.write_wrapper();
        // sshd refuses to start without its privilege-separation directory.
        // Creating it needs root; when it fails sshd's log says why.
        let _ = fs::create_dir_all("/run/sshd");

        // The free port is released before sshd binds it, so another
        // process may take it in between: sshd then exits with "Address
        // already in use" and a fresh port is tried.
        let mut last = String::new();
        for _ in 0..5 {
            sshd.port = free_port();
            sshd.write_configs();
            match sshd.spawn_and_wait() {
                Ok(()) => return sshd,
                Err(e) if e.contains("Address already in use") => last = e,
                Err(e) => panic!("{e}"),
            }
        }
        panic!("no free port for sshd after 5 tries: {last}");
    }

    /// The client config (`dir/ssh_config`), for `ssh -F`.
    pub fn config(&self) -> &Path {
        &self.config
    }

    /// `awtui-test-host`, the name `config()` gives this server.
    pub fn host_alias(&self) -> &str {
        HOST_ALIAS
    }

    /// The loopback port sshd listens on (kept across `restart`).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The pid of the listening sshd, if it is running.
    pub fn listener_pid(&self) -> Option<u32> {
        self.listener.as_ref().map(Child::id)
    }

    /// Everything sshd has written to stderr so far (`dir/sshd.log`).
    pub fn log(&self) -> String {
        fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// The home folder of sessions on this server (their `$HOME`).
    pub fn home(&self) -> PathBuf {
        self.dir.join("home")
    }

    /// `/usr/bin/ssh -F <config>` with stdin from /dev/null; add the host
    /// alias and a command.
    pub fn ssh(&self) -> Command {
        let mut cmd = Command::new(SSH);
        cmd.arg("-F").arg(self.config()).stdin(Stdio::null());
        cmd
    }

    /// A folder whose only entry is an executable `ssh` script that runs
    /// `/usr/bin/ssh -F <dir>/ssh_config "$@"`. Put it first on `PATH` so
    /// that a plain `ssh awtui-test-host …` (the product's, git's) uses the
    /// fixture's keys and config rather than the user's `~/.ssh`.
    pub fn wrapper_dir(&self) -> PathBuf {
        self.dir.join("bin")
    }

    /// The environment a program under test needs so that its plain
    /// `ssh awtui-test-host` reaches this server: `PATH` with
    /// `wrapper_dir()` first (then the test's own `PATH`), and
    /// `GIT_SSH_COMMAND` naming the wrapper, so git uses it even where a
    /// global config sets another ssh command.
    pub fn ssh_command_env(&self) -> Vec<(String, String)> {
        let wrapper = self.wrapper_dir();
        let path = match std::env::var("PATH") {
            Ok(p) if !p.is_empty() => format!("{}:{p}", wrapper.display()),
            _ => wrapper.display().to_string(),
        };
        vec![
            ("PATH".into(), path),
            (
                "GIT_SSH_COMMAND".into(),
                wrapper.join("ssh").display().to_string(),
            ),
        ]
    }

    /// Stops the listener: SIGTERM, then waits for it to exit (SIGKILL
    /// after `PATIENCE`). New connections are refused from then on, but,
    /// as with any sshd, sessions already open live on in their own
    /// processes; the fixture remembers them, so `kill_all` and `Drop`
    /// still end them.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.listener.take() {
            let root = child.id();
            // Stopped, the listener forks no session while its tree is read.
            signal(root, Signal::STOP);
            self.detached
                .extend(descendants(root).iter().map(|p| (p.pid, p.start)));
            signal(root, Signal::TERM);
            signal(root, Signal::CONT);
            if poll_within(PATIENCE, || child.try_wait().ok().flatten()).is_none() {
                signal(child.id(), Signal::KILL);
                let _ = child.wait();
            }
        }
    }

    /// Simulates a lost connection: SIGKILLs the listener and every sshd
    /// session process it started (its descendants whose command line
    /// starts with `sshd:`, and those of listeners `stop` ended), so each
    /// open connection drops at once and its client exits with 255. The
    /// commands those sessions ran are left running, orphaned, as on a
    /// real host (see `session_processes`); `Drop` ends them.
    pub fn kill_all(&mut self) {
        let is_sshd = |info: &ProcInfo| info.cmdline.starts_with(b"sshd:");
        self.kill_tree(is_sshd);
        self.kill_detached(is_sshd);
    }

    /// Starts sshd again on the same port with the same keys (stopping it
    /// first if it runs) and waits until `ssh awtui-test-host true`
    /// succeeds. Panics, with the log, if it does not within `PATIENCE`.
    pub fn restart(&mut self) {
        self.stop();
        if let Err(e) = self.spawn_and_wait() {
            panic!("restart on port {}: {e}", self.port);
        }
    }

    /// Pids of live processes (zombies excluded) anywhere on this machine
    /// whose command line or environment contains `needle`; the test's
    /// own process is left out. The "remote" is this machine, so the
    /// local `ssh` client whose arguments carry `needle` counts too:
    /// intersect with `session_processes()` for the server side only.
    pub fn remote_processes_with(&self, needle: &str) -> Vec<u32> {
        let needle = needle.as_bytes();
        let me = std::process::id();
        processes()
            .into_iter()
            .filter(|p| p.pid != me && p.state != 'Z')
            .filter(|p| {
                contains(&p.cmdline, needle)
                    || read_proc(p.pid, "environ").is_some_and(|env| contains(&env, needle))
            })
            .map(|p| p.pid)
            .collect()
    }

    /// Pids of live processes that sessions of this server started, found
    /// by the `SSH_CONNECTION` sshd puts in their environment (it names
    /// this port), so orphans left by `kill_all` count as well.
    pub fn session_processes(&self) -> Vec<u32> {
        let suffix = format!(" 127.0.0.1 {}", self.port);
        let me = std::process::id();
        processes()
            .into_iter()
            .filter(|p| p.pid != me && p.state != 'Z')
            .filter(|p| {
                read_proc(p.pid, "environ").is_some_and(|env| {
                    env.split(|b| *b == 0).any(|var| {
                        var.starts_with(b"SSH_CONNECTION=") && var.ends_with(suffix.as_bytes())
                    })
                })
            })
            .map(|p| p.pid)
            .collect()
    }

    // ---- internals ----

    fn host_key(&self) -> PathBuf {
        self.dir.join("host_key")
    }

    fn user_key(&self) -> PathBuf {
        self.dir.join("user_key")
    }

    fn authorized_keys(&self) -> PathBuf {
        self.dir.join("authorized_keys")
    }

    fn known_hosts(&self) -> PathBuf {
        self.dir.join("known_hosts")
    }

    fn sshd_config(&self) -> PathBuf {
        self.dir.join("sshd_config")
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("sshd.log")
    }

    fn write_wrapper(&self) {
        let bin = self.wrapper_dir();
        fs::create_dir_all(&bin).expect("create the wrapper dir");
        let script = bin.join("ssh");
        fs::write(
            &script,
            format!(
                "#!/bin/sh\n# awtui test fixture: the real ssh with the fixture's config.\n\
                 exec {SSH} -F '{}' \"$@\"\n",
                self.config.display()
            ),
        )
        .expect("write the ssh wrapper");
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755))
            .expect("make the ssh wrapper executable");
    }

    fn write_configs(&self) {
        let d = &self.dir;
        // Port comes before ListenAddress: sshd applies the ports known
        // when it reads a ListenAddress without one. AcceptEnv is left
        // out, so no client variable is accepted (its default).
        // The "remote" user's home is a folder of the fixture's own
        // (`SetEnv HOME`): sessions read no shell startup file of the real
        // user's (root's .bashrc runs `pyenv rehash`, which serialises
        // every session on a lock and, killed mid-way by a test, leaves it
        // stale), and nothing a test runs there lands in the real home.
        let home = d.join("home");
        fs::create_dir_all(&home).expect("make the remote home");
        let sshd_config = format!(
            "Port {port}\n\
             SetEnv HOME={home}\n\
             ListenAddress 127.0.0.1\n\
             HostKey {host_key}\n\
             AuthorizedKeysFile {authorized_keys}\n\
             PidFile {pid}\n\
             PasswordAuthentication no\n\
             KbdInteractiveAuthentication no\n\
             PubkeyAuthentication yes\n\
             StrictModes no\n\
             UsePAM no\n\
             PermitRootLogin yes\n\
             AllowTcpForwarding yes\n\
             AllowStreamLocalForwarding yes\n\
             StreamLocalBindUnlink yes\n\
             PermitUserEnvironment no\n\
             ClientAliveInterval 2\n\
             ClientAliveCountMax 3\n\
             LogLevel VERBOSE\n\
             Subsystem sftp internal-sftp\n",
            port = self.port,
            host_key = self.host_key().display(),
            authorized_keys = self.authorized_keys().display(),
            pid = d.join("sshd.pid").display(),
            home = home.display(),
        );
        fs::write(self.sshd_config(), sshd_config).expect("write sshd_config");

        let ssh_config = format!(
            "Host {HOST_ALIAS}\n\
             \x20   HostName 127.0.0.1\n\
             \x20   Port {port}\n\
             \x20   User {user}\n\
             \x20   IdentityFile {key}\n\
             \x20   IdentitiesOnly yes\n\
             \x20   IdentityAgent none\n\
             \x20   UserKnownHostsFile {known_hosts}\n\
             \x20   GlobalKnownHostsFile /dev/null\n\
             \x20   StrictHostKeyChecking yes\n\
             \x20   UpdateHostKeys no\n\
             \x20   BatchMode yes\n\
             \x20   LogLevel ERROR\n",
            port = self.port,
            user = self.user,
            key = self.user_key().display(),
            known_hosts = self.known_hosts().display(),
        );
        fs::write(&self.config, ssh_config).expect("write ssh_config");

        let host_pub = fs::read_to_string(self.host_key().with_extension("pub"))
            .expect("read the host public key");
        let key: Vec<&str> = host_pub.split_whitespace().take(2).collect();
        fs::write(
            self.known_hosts(),
            format!("[127.0.0.1]:{} {}\n", self.port, key.join(" ")),
        )
        .expect("write known_hosts");
    }

    /// Runs sshd and waits until a real `ssh … true` gets through; on
    /// failure the listener is gone and the error carries what sshd
    /// logged since this start (the log is appended to across restarts).
    fn spawn_and_wait(&mut self) -> Result<(), String> {
        let logged_before = self.log().len();
        let log_since = |sshd: &Sshd| sshd.log().get(logged_before..).unwrap_or("").to_string();
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("open sshd.log");
        let child = Command::new(SSHD)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(self.sshd_config())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("spawn {SSHD}: {e}"))?;
        self.listener = Some(child);

        let mut last_stderr = String::new();
        let ended = poll_within(PATIENCE, || {
            let child = self.listener.as_mut().expect("listener just spawned");
            if let Ok(Some(status)) = child.try_wait() {
                self.listener = None;
                return Some(Err(format!(
                    "sshd exited ({status}) before it accepted a session; dir {}, sshd.log:\n{}",
                    self.dir.display(),
                    log_since(self)
                )));
            }
            let probe = match self
                .ssh()
                .args(["-o", "ConnectTimeout=10", HOST_ALIAS, "true"])
                .stdout(Stdio::null())
                .output()
            {
                Ok(probe) => probe,
                Err(e) => return Some(Err(format!("run {SSH}: {e}"))),
            };
            if probe.status.success() {
                return Some(Ok(()));
            }
            last_stderr = String::from_utf8_lossy(&probe.stderr).trim().to_string();
            None
        });
        match ended {
            Some(done) => done,
            None => {
                self.stop();
                Err(format!(
                    "sshd on port {} did not accept `ssh {HOST_ALIAS} true` within {PATIENCE:?}; \
                     last ssh stderr: {last_stderr}; sshd.log:\n{}",
                    self.port,
                    log_since(self)
                ))
            }
        }
    }

    /// SIGKILLs those processes of listeners `stop` ended that are still
    /// the same processes (same start time) and that `pick` selects.
    fn kill_detached(&mut self, pick: impl Fn(&ProcInfo) -> bool) {
        let mut alive: Vec<ProcInfo> = processes()
            .into_iter()
            .filter(|p| p.state != 'Z' && self.detached.contains(&(p.pid, p.start)))
            .collect();
        for p in alive.iter().filter(|p| pick(p)) {
            signal(p.pid, Signal::STOP);
        }
        for p in alive.iter().filter(|p| pick(p)) {
            signal(p.pid, Signal::KILL);
        }
        alive.retain(|p| !pick(p));
        self.detached = alive.iter().map(|p| (p.pid, p.start)).collect();
    }

    /// SIGKILLs the listener and those of its descendants `pick` selects.
    /// The listener is stopped (SIGSTOP) first so it forks no new session,
    /// and each picked process is stopped as it is found, until the set
    /// stops growing: killing a parent first would reparent its children
    /// away from the listener and lose them.
    fn kill_tree(&mut self, pick: impl Fn(&ProcInfo) -> bool) -> Vec<u32> {
        let Some(mut child) = self.listener.take() else {
            return Vec::new();
        };
        let root = child.id();
        signal(root, Signal::STOP);
        let mut victims: HashSet<u32> = HashSet::new();
        loop {
            let found: Vec<u32> = descendants(root)
                .into_iter()
                .filter(|p| pick(p))
                .map(|p| p.pid)
                .filter(|pid| !victims.contains(pid))
                .collect();
            if found.is_empty() {
                break;
            }
            for pid in found {
                signal(pid, Signal::STOP);
                victims.insert(pid);
            }
        }
        for &pid in &victims {
            signal(pid, Signal::KILL);
        }
        signal(root, Signal::KILL);
        let _ = child.wait();
        victims.into_iter().collect()
    }
}

impl Drop for Sshd {
    /// Kills the listener, its whole process tree and whatever sessions
    /// left behind (by `SSH_CONNECTION`), so no test leaves sshd or a
    /// remote command running. Never panics.
    fn drop(&mut self) {
        let orphans = self.session_processes();
        self.kill_tree(|_| true);
        self.kill_detached(|_| true);
        for pid in orphans {
            signal(pid, Signal::KILL);
        }
    }
}

/// One line of `/proc`: what the fixture needs to walk process trees.
struct ProcInfo {
    pid: u32,
    ppid: u32,
    state: char,
    /// Start time in clock ticks after boot: with the pid, names one
    /// process even after its pid is reused.
    start: u64,
    cmdline: Vec<u8>,
}

/// Every process `/proc` lists now; those that vanish while it is read are
/// skipped.
fn processes() -> Vec<ProcInfo> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = String::from_utf8(read_proc(pid, "stat")?).ok()?;
            // "pid (comm) S ppid …"; comm may hold spaces and parentheses.
            let rest = &stat[stat.rfind(')')? + 1..];
            let mut fields = rest.split_whitespace();
            let state = fields.next()?.chars().next()?;
            let ppid = fields.next()?.parse().ok()?;
            // starttime is field 22, the 20th after the comm.
            let start = fields.nth(17)?.parse().ok()?;
            let cmdline = read_proc(pid, "cmdline").unwrap_or_default();
            Some(ProcInfo {
                pid,
                ppid,
                state,
                start,
                cmdline,
            })
        })
        .collect()
}

/// The live descendants of `root` (not `root` itself).
fn descendants(root: u32) -> Vec<ProcInfo> {
    let all = processes();
    let mut children: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, p) in all.iter().enumerate() {
        children.entry(p.ppid).or_default().push(i);
    }
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        for &i in children.get(&pid).map(Vec::as_slice).unwrap_or_default() {
            stack.push(all[i].pid);
            out.push(i);
        }
    }
    let keep: HashSet<usize> = out.into_iter().collect();
    all.into_iter()
        .enumerate()
        .filter(|(i, p)| keep.contains(i) && p.state != 'Z')
        .map(|(_, p)| p)
        .collect()
}

fn read_proc(pid: u32, file: &str) -> Option<Vec<u8>> {
    fs::read(format!("/proc/{pid}/{file}")).ok()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

/// Sends `sig` to `pid`, ignoring a process that is already gone.
fn signal(pid: u32, sig: Signal) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        let _ = kill_process(pid, sig);
    }
}

/// A port nobody listens on now: bind 127.0.0.1:0, note it, release it.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}

fn current_user() -> String {
    let out = Command::new("id")
        .arg("-un")
        .output()
        .expect("run `id -un`");
    assert!(out.status.success(), "`id -un` failed");
    String::from_utf8(out.stdout)
        .expect("user name is UTF-8")
        .trim()
        .to_string()
}

fn keygen(path: &Path, comment: &str) {
    let out = Command::new(SSH_KEYGEN)
        .args(["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run {SSH_KEYGEN}: {e}"));
    assert!(
        out.status.success(),
        "ssh-keygen {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}
