//! `host: NAME`: the agent's CLI on another machine, through the system's
//! OpenSSH client (so `~/.ssh/config`, keys and agents are the user's own).
//!
//! One [`Connection`] per host and instance: a master connection (OpenSSH
//! connection sharing) whose own session is a lifeline — it reads awtui's
//! pipe, so when awtui ends, even by kill -9, the master ends too — and,
//! with a context, a remote forward to awtui's MCP port on a port the
//! remote picks. The master belongs to the host, not to a turn: its
//! [`Link`] starts it and starts it again when it is gone, in awtui's own
//! process, one start at a time (see [`link`]). Each turn is one local
//! shell script in the turn's process group ([`Remote::prepare`]), which
//! only uses the master:
//!
//! 1. push the agent's branch to the host's repository
//!    (`refs/awtui/sync/<instance>/<agent>`);
//! 2. over the master, make or reset the agent's worktree there, write its
//!    files, environment and prompt (sent on stdin: the token never appears
//!    on a command line), and run the CLI in its own session; a watcher
//!    ends that session when stdin closes, which is how a stop, a timeout,
//!    a lost connection or awtui's death reach the host;
//! 3. commit what the turn left there and fetch it back into the agent's
//!    local worktree, where awtui commits the turn as for a local agent, so
//!    `awtui diff`, merge and revert work unchanged.

pub mod link;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::process::Command;

pub use link::{Link, LinkError, Session};

use super::{Launch, Runtime, resolve_local};
use crate::agents::backend::BackendError;
use crate::agents::backend::invocation::Invocation;
use std::collections::HashMap;

use crate::agents::backend::backend_for;
use crate::workflow::{AgentDef, HostDef, Workflow};

/// The OpenSSH client awtui runs.
pub const SSH: &str = "ssh";

/// Options on every ssh awtui runs: never prompt (no terminal to ask on),
/// notice a dead link within seconds.
const SSH_OPTIONS: [&str; 6] = [
    "-o",
    "BatchMode=yes",
    "-o",
    "ServerAliveInterval=5",
    "-o",
    "ServerAliveCountMax=3",
];

/// Why a host cannot run agents.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("host '{host}' ({dest}): {what}")]
    Failed {
        host: String,
        dest: String,
        what: String,
    },
}

/// A live connection to one host, shared by its agents.
#[derive(Debug)]
pub struct Connection {
    /// The key under `hosts:`.
    pub name: String,
    /// The ssh destination.
    pub dest: String,
    /// The master's control socket.
    control: PathBuf,
    /// The remote home folder.
    home: String,
    /// The repository there, absolute.
    pub repo: String,
    /// The local MCP port the master forwards to.
    local_mcp_port: Option<u16>,
    /// The owner of the master (dropped with the connection, and the
    /// master with it).
    pub link: Link,
}

/// The arguments that reuse the master on `control`.
fn mux_args(control: &Path) -> Vec<String> {
    let mut args = vec![
        "-S".to_string(),
        control.display().to_string(),
        "-o".into(),
        "ControlMaster=no".into(),
    ];
    args.extend(SSH_OPTIONS.map(String::from));
    args
}

impl Connection {
    /// The arguments that reuse the master.
    fn mux(&self) -> Vec<String> {
        mux_args(&self.control)
    }

    /// `ssh …` with the master, as one shell word list.
    fn ssh_words(&self) -> String {
        let mut words = vec![SSH.to_string()];
        words.extend(self.mux());
        join(&words)
    }

    /// Where this instance keeps an agent's files there: inside the
    /// repository's git folder, out of every checkout, gone with it.
    fn run_dir(&self, instance_key: &str, agent: &str) -> String {
        format!("{}/.git/awtui/run/{instance_key}/{agent}", self.repo)
    }

    /// Where an agent's worktree is there (beside its files).
    fn worktree(&self, instance_key: &str, agent: &str) -> String {
        format!("{}/.git/awtui/worktrees/{instance_key}/{agent}", self.repo)
    }
}

/// How long one step of connecting to a host may take (a shell startup
/// file that waits, a host that stops answering) before the host is
/// given up on; its agents fail saying so, the others run.
const STEP_LIMIT: Duration = Duration::from_secs(60);

/// Runs `ssh <args>` to its end and returns stdout, or what failed.
async fn ssh_output(args: &[String], what: &str) -> Result<String, String> {
    let run = Command::new(SSH)
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(STEP_LIMIT, run)
        .await
        .map_err(|_| format!("{what} did not finish within {}s", STEP_LIMIT.as_secs()))?
        .map_err(|e| format!("cannot run {SSH}: {e}"))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no message");
    Err(format!(
        "{what} failed: {}",
        crate::sanitize::for_terminal(last.trim())
    ))
}

/// The host's error for `what`.
fn failed(host: &HostDef, what: String) -> HostError {
    HostError::Failed {
        host: host.name.clone(),
        dest: host.ssh.clone(),
        what,
    }
}

/// Connects to `host`: starts the master (authentication happens here)
/// with, when there is a context, a remote port forwarded to `mcp_port`,
/// learns the remote home, makes the repository if missing, and checks
/// that every program in `programs` is there (each with the agent's own
/// `PATH` when it sets one). `control_dir` is a private folder
/// for the control socket.
pub async fn connect(
    host: &HostDef,
    control_dir: &Path,
    instance_dir: &Path,
    mcp_port: Option<u16>,
    programs: &[(String, Option<String>)],
) -> Result<Connection, HostError> {
    let control = control_dir.join(format!(
        "{}.sock",
        &crate::instance::layout::path_hash(&instance_dir.join(&host.ssh))[..12]
    ));
    let link = link::Link::start(link::MasterSpec {
        host: host.name.clone(),
        dest: host.ssh.clone(),
        control: control.clone(),
        local_mcp_port: mcp_port,
    })
    .await
    .map_err(|e| failed(host, e))?;
    let mut conn = Connection {
        name: host.name.clone(),
        dest: host.ssh.clone(),
        control,
        home: String::new(),
        repo: String::new(),
        local_mcp_port: mcp_port,
        link,
    };
    let mut args = conn.mux();
    args.push(host.ssh.clone());
    let mut check = String::from("printf '%s\\n' \"$HOME\"");
    for (p, path) in programs {
        let path = path
            .as_deref()
            .map(|v| format!("PATH={} ", quote(v)))
            .unwrap_or_default();
        check.push_str(&format!(
            "; {path}command -v {} >/dev/null 2>&1 || echo \"missing:\"{}",
            quote(p),
            quote(p)
        ));
    }
    args.push(check);
    let out = ssh_output(&args, "the first command")
        .await
        .map_err(|e| failed(host, e))?;
    let mut out_lines = out.lines();
    conn.home = out_lines.next().unwrap_or_default().trim().to_string();
    if !conn.home.starts_with('/') {
        return Err(failed(
            host,
            format!("its home folder is '{}', not a path", conn.home),
        ));
    }
    let missing: Vec<&str> = out_lines
        .filter_map(|l| l.strip_prefix("missing:"))
        .collect();
    if !missing.is_empty() {
        return Err(failed(
            host,
            format!(
                "{} not installed there (not found on the PATH of a non-interactive ssh session; set PATH in the agent's env: or install it)",
                missing
                    .iter()
                    .map(|m| format!("'{m}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
                    + if missing.len() == 1 { " is" } else { " are" }
            ),
        ));
    }
    conn.repo = match host.dir.strip_prefix("~/") {
        Some(rest) => format!("{}/{rest}", conn.home),
        None if host.dir == "~" => conn.home.clone(),
        None if host.dir.starts_with('/') => host.dir.clone(),
        None => format!("{}/{}", conn.home, host.dir),
    };
    let mut args = conn.mux();
    args.push(host.ssh.clone());
    args.push(format!(
        "mkdir -p {r} && {{ git -C {r} rev-parse --git-dir >/dev/null 2>&1 || git init -q {r}; }}",
        r = quote(&conn.repo)
    ));
    ssh_output(&args, &format!("making the repository {}", conn.repo))
        .await
        .map_err(|e| failed(host, e))?;
    Ok(conn)
}

/// Connects every host of `workflow` an agent was placed on (`places`,
/// from [`super::placement::place`]), once each, checking the programs of
/// its agents there; `instance_dir` names the control sockets,
/// `mcp_port` is forwarded when there is a context.
pub async fn connect_placed(
    workflow: &Workflow,
    places: &HashMap<String, Option<String>>,
    instance_dir: &Path,
    mcp_port: Option<u16>,
) -> HashMap<String, Result<Arc<Connection>, String>> {
    let mut out = HashMap::new();
    for host in &workflow.hosts {
        let on_host = |a: &&AgentDef| {
            places.get(&a.name).and_then(|h| h.as_deref()) == Some(host.name.as_str())
        };
        if !workflow.agents.iter().any(|a| on_host(&a)) {
            continue;
        }
        let programs: Vec<(String, Option<String>)> = workflow
            .agents
            .iter()
            .filter(on_host)
            .filter_map(|a| {
                let program = backend_for(a.backend).program(a.command.as_deref())?;
                (!program.contains('/')).then(|| (program, a.own_path().map(str::to_string)))
            })
            .collect();
        let dir = crate::instance::layout::state_dir()
            .map(|d| d.join("ssh"))
            .unwrap_or_else(|_| instance_dir.join("ssh"));
        let result = match crate::fsutil::private_dir(&dir) {
            Ok(dir) => connect(host, &dir, instance_dir, mcp_port, &programs)
                .await
                .map(Arc::new)
                .map_err(|e| e.to_string()),
            Err(e) => Err(format!("host '{}': {}: {e}", host.name, dir.display())),
        };
        out.insert(host.name.clone(), result);
    }
    out
}

/// One agent's turns on a host.
#[derive(Debug, Clone)]
pub struct Remote {
    pub conn: Arc<Connection>,
    /// `<instance name>` (for branch names).
    pub instance: String,
    /// A short hash naming the instance's folders on the host.
    pub instance_key: String,
    pub agent: String,
    /// The agent's local folders that become its folders there.
    pub state_dir: PathBuf,
    pub private_dir: PathBuf,
    /// The agent's local worktree (its turns are committed here).
    pub local_worktree: PathBuf,
    /// The arguments awtui's own git gives before its subcommand for that
    /// worktree ([`crate::workspace::Git::script_args`]: its git dir from
    /// the repository's record, attributes from the branch's base, the
    /// hardening), so bringing the turn back runs no driver the returning
    /// tree's `.gitattributes` select.
    pub local_git: Vec<String>,
}

impl Remote {
    fn branch(&self) -> String {
        format!("awtui/{}/{}", self.instance, self.agent)
    }

    fn sync_ref(&self) -> String {
        format!("refs/awtui/sync/{}/{}", self.instance, self.agent)
    }

    fn back_ref(&self) -> String {
        format!("refs/awtui/remote/{}/{}", self.instance, self.agent)
    }

    /// The same text with this machine's paths and MCP address made the
    /// host's (the port `session`'s master forwards).
    fn translate(&self, session: &Session, text: &str) -> String {
        let run = self.conn.run_dir(&self.instance_key, &self.agent);
        let mut out = text.to_string();
        let pairs = [
            (
                self.local_worktree.display().to_string(),
                self.conn.worktree(&self.instance_key, &self.agent),
            ),
            (self.state_dir.display().to_string(), format!("{run}/state")),
            (
                self.private_dir.display().to_string(),
                format!("{run}/private"),
            ),
        ];
        for (from, to) in pairs {
            if !from.is_empty() {
                out = out.replace(&from, &to);
            }
        }
        if let (Some(local), Some(remote)) = (self.conn.local_mcp_port, session.mcp_port) {
            for host in ["127.0.0.1", "localhost"] {
                out = out.replace(&format!("{host}:{local}"), &format!("127.0.0.1:{remote}"));
            }
        }
        out
    }

    /// The script run on the host over `session`'s master (its only
    /// argument on the command line; no secret is in it) and the bytes
    /// sent on its stdin first.
    pub fn remote_script(&self, inv: &Invocation, session: &Session) -> (String, Vec<u8>) {
        let run = self.conn.run_dir(&self.instance_key, &self.agent);
        let wt = self.conn.worktree(&self.instance_key, &self.agent);
        let mut payload: Vec<u8> = Vec::new();
        let mut s = String::new();
        s.push_str("set -e; umask 077\n");
        s.push_str(&format!(
            "R={}; WT={}; REPO={}\n",
            quote(&run),
            quote(&wt),
            quote(&self.conn.repo)
        ));
        s.push_str("mkdir -p \"$R/state\" \"$R/private\"\n");
        // A branch of that name awtui did not make is the user's: never
        // taken over (nor, later, deleted).
        s.push_str(&format!(
            "if [ -e \"$WT/.git\" ]; then git -C \"$WT\" reset -q --hard {sync}; \
             else \
               if git -C \"$REPO\" rev-parse -q --verify refs/heads/{branch} >/dev/null && \
                  [ \"$(git -C \"$REPO\" config --get {made})\" != yes ]; then \
                 echo \"awtui: the branch \"{branch}\" already exists in $REPO and awtui did not make it; rename it there\" >&2; exit 97; fi; \
               rm -rf \"$WT\"; git -C \"$REPO\" worktree prune; mkdir -p \"$(dirname \"$WT\")\"; \
               git -C \"$REPO\" worktree add -q -f -B {branch} \"$WT\" {sync}; \
               git -C \"$REPO\" config {made} yes; fi\n",
            sync = quote(&self.sync_ref()),
            branch = quote(&self.branch()),
            made = quote(&crate::workspace::remote::made_key(&self.branch())),
        ));
        let mut take = |s: &mut String, path: &str, bytes: &[u8]| {
            s.push_str(&format!(
                "mkdir -p \"$(dirname {p})\"; head -c {n} > {p}\n",
                p = quote(path),
                n = bytes.len()
            ));
            payload.extend_from_slice(bytes);
        };
        for f in &inv.files {
            let path = self.translate(session, &f.path.display().to_string());
            take(
                &mut s,
                &path,
                self.translate(session, &f.content).as_bytes(),
            );
        }
        let mut env = String::new();
        for (k, v) in &inv.env {
            if crate::workflow::is_env_name(k) {
                env.push_str(&format!(
                    "export {k}={}\n",
                    quote(&self.translate(session, v))
                ));
            }
        }
        take(&mut s, &format!("{run}/env"), env.as_bytes());
        let prompt = inv.stdin.clone().unwrap_or_default();
        take(&mut s, &format!("{run}/prompt"), prompt.as_bytes());
        if let Some(m) = &inv.mirror {
            // The user's own config folder there, linked into the private
            // one as here.
            let home = std::env::var("HOME").unwrap_or_default();
            let from = match m.from.strip_prefix(&home) {
                Ok(rest) if !home.is_empty() => format!("{}/{}", self.conn.home, rest.display()),
                _ => m.from.display().to_string(),
            };
            let into = self.translate(session, &m.into.display().to_string());
            s.push_str(&format!(
                "mkdir -p {into}; for f in {from}/* {from}/.[!.]*; do [ -e \"$f\" ] || continue; \
                 t={into}/\"$(basename \"$f\")\"; [ -e \"$t\" ] || [ -L \"$t\" ] || ln -s \"$f\" \"$t\"; done\n",
                into = quote(&into),
                from = quote(&from),
            ));
        }
        let mut cmd = vec![self.translate(session, &inv.program)];
        cmd.extend(inv.args.iter().map(|a| self.translate(session, a)));
        s.push_str("cd \"$WT\"; . \"$R/env\"; rm -f \"$R/env\"\n");
        s.push_str("set +e; exec 3<&0\n");
        s.push_str("cat <&3 >/dev/null 2>&1 & c=$!\n");
        s.push_str(&format!(
            "setsid {} < \"$R/prompt\" 3<&- & p=$!\n",
            join(&cmd)
        ));
        // The watcher: stdin closed (stopped, lost, awtui gone) ends the
        // agent's whole session.
        s.push_str(
            "( while kill -0 $c 2>/dev/null && kill -0 $p 2>/dev/null; do sleep 1; done; \
             kill -TERM -$p 2>/dev/null; sleep 3; kill -KILL -$p 2>/dev/null ) >/dev/null 2>&1 3<&- & w=$!\n",
        );
        s.push_str("wait $p; rc=$?\n");
        s.push_str("kill $c $w 2>/dev/null; kill -KILL -$p 2>/dev/null\n");
        s.push_str(
            "cd \"$WT\" && git add -A && git -c user.name=awtui -c user.email=awtui@localhost \
             commit -q --allow-empty --no-verify -m 'awtui: turn on host' >/dev/null 2>&1\n",
        );
        s.push_str("exit $rc\n");
        (s, payload)
    }

    /// The local script of one turn: push, run there over the master,
    /// fetch back. It never starts a master: a master gone since the turn
    /// was prepared fails the turn saying so (the link restarts it, and
    /// the engine retries the turn once it is back).
    fn local_script(&self, remote: &str) -> String {
        // The ssh:// form: git never reads `dest:path` as a transport
        // (the destination's letters are checked when the workflow loads;
        // the repository is absolute).
        let url = format!("ssh://{}{}", self.conn.dest, self.conn.repo);
        let ssh = self.conn.ssh_words();
        let dest = quote(&self.conn.dest);
        let control = quote(&self.conn.control.display().to_string());
        let lost = quote(&format!(
            "awtui: connection to host '{}' lost: its master connection is gone",
            self.conn.name
        ));
        let keys = crate::workspace::remote::keys(&self.branch());
        let wt = join(&self.local_git);
        format!(
            "if ! {SSH} -S {control} -O check {dest} >/dev/null 2>&1; then\n\
               echo {lost} >&2; exit 255\n\
             fi\n\
             {git_env}\
             export GIT_SSH_COMMAND={gitssh}\n\
             git {wt} config {k_host} {dest} && git {wt} config {k_repo} {repo} && \
             git {wt} config {k_wt} {remote_wt}\n\
             git {wt} push -q -f {url} HEAD:{sync} || exit 255\n\
             {ssh} -T {dest} {remote}\n\
             rc=$?\n\
             git {wt} fetch -q {url} +refs/heads/{branch}:{back} && \
             git {wt} read-tree -u --reset {back}\n\
             exit $rc\n",
            git_env = crate::workspace::git::SCRIPT_ENV,
            gitssh = quote(&ssh),
            url = quote(&url),
            sync = quote(&self.sync_ref()),
            remote = quote(&format!("sh -c {}", quote(remote))),
            branch = self.branch(),
            back = quote(&self.back_ref()),
            k_host = quote(&keys[0]),
            k_repo = quote(&keys[1]),
            k_wt = quote(&keys[2]),
            repo = quote(&self.conn.repo),
            remote_wt = quote(&self.conn.worktree(&self.instance_key, &self.agent)),
        )
    }
}

impl Runtime for Remote {
    fn place(&self) -> String {
        self.conn.name.clone()
    }

    /// Waits for the host's master first (started again by its link if
    /// it is gone; this runs on a blocking thread).
    fn prepare(&self, inv: Invocation, _hint: &str) -> Result<Launch, BackendError> {
        let session = self
            .conn
            .link
            .ensure_blocking()
            .map_err(|e| BackendError::Unavailable(e.to_string()))?;
        let (remote, payload) = self.remote_script(&inv, &session);
        let script = self.local_script(&remote);
        let sh = resolve_local("sh")?;
        Ok(Launch {
            program: sh,
            args: vec!["-c".into(), script],
            // Only what awtui sets for itself; the agent's own variables
            // travel in the payload.
            env: Vec::new(),
            cwd: self.local_worktree.clone(),
            stdin: Some(String::from_utf8_lossy(&payload).into_owned()),
            hold_stdin: true,
        })
    }
}

/// Where a host cannot be reached: every turn fails at once with why.
#[derive(Debug, Clone)]
pub struct Unreachable {
    pub host: String,
    pub why: String,
}

impl Runtime for Unreachable {
    fn place(&self) -> String {
        self.host.clone()
    }

    fn prepare(&self, _inv: Invocation, _hint: &str) -> Result<Launch, BackendError> {
        Err(BackendError::Unavailable(self.why.clone()))
    }
}

/// One shell word (POSIX single quotes).
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn join(words: &[String]) -> String {
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_quotes_and_spaces() {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "printf '%s|' {}",
                join(&["a b".into(), "it's".into(), "$HOME".into()])
            ))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "a b|it's|$HOME|");
    }
}
