//! The owner of one host's master connection (issue 34). The connection
//! belongs to the host, not to a turn: awtui's own process starts the
//! master and, when it is gone, starts it again — one start at a time;
//! whoever needs it meanwhile waits for that one start. No turn's script
//! starts a master and none carries a turn's marker (`AWTUI_TURN`), so no
//! turn's cleanup can end the connection every agent on the host shares,
//! and two turns never race to forward the same port.
//!
//! A master that ends is told apart from an agent that failed:
//! [`Link::lost_during`] says why the master a turn ran over ended, so the
//! engine says "connection to host 'box' lost: <why>" and retries the turn
//! once the connection is back instead of counting it as the agent's
//! failure.

use std::collections::HashMap;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::{SSH, SSH_OPTIONS, STEP_LIMIT, mux_args, ssh_output};
use crate::agents::backend::process::TURN_VAR;

/// How long a turn's end may come before the link hears that its master
/// ended (both follow the same kill; the watcher is usually first).
const SETTLE: Duration = Duration::from_secs(5);

/// What a master is started with.
#[derive(Clone, Debug)]
pub(super) struct MasterSpec {
    /// The key under `hosts:`.
    pub host: String,
    /// The ssh destination.
    pub dest: String,
    /// The control socket.
    pub control: PathBuf,
    /// awtui's MCP port, forwarded from a port the host picks.
    pub local_mcp_port: Option<u16>,
}

/// One master the link started: what a turn over it needs to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Session {
    /// Which master this is (1 for the first, one more per restart).
    pub generation: u64,
    /// The host's port forwarded to awtui's MCP server by this master.
    pub mcp_port: Option<u16>,
}

/// What the link knows of its masters.
#[derive(Clone, Debug, Default)]
struct State {
    /// The live master, if one is up.
    up: Option<Session>,
    /// Why each master that ended ended, by generation.
    ended: HashMap<u64, String>,
    /// The last generation started.
    generation: u64,
}

/// Why a host's connection is not there for a turn.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// The master a turn ran over ended.
    #[error("connection to host '{host}' lost: {reason}")]
    Lost { host: String, reason: String },
    /// The master was gone and starting it again failed.
    #[error("connection to host '{host}' lost: {reason}; reconnecting failed: {why}")]
    Reconnect {
        host: String,
        reason: String,
        why: String,
    },
}

/// The owner of one host's master connection (see the module doc).
/// Dropping it ends the master.
#[derive(Debug)]
pub struct Link {
    spec: MasterSpec,
    state: Arc<watch::Sender<State>>,
    /// Held while a master starts: one start at a time.
    starting: tokio::sync::Mutex<()>,
    /// The runtime masters are started on (turns are prepared on blocking
    /// threads).
    runtime: tokio::runtime::Handle,
    /// Ends the watchers, and with them their masters.
    stop: CancellationToken,
    /// Where a master's end is said as it happens (the engine's notices).
    notices: Arc<OnceLock<mpsc::UnboundedSender<String>>>,
}

impl Drop for Link {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Link {
    /// Starts the first master; the error says why it could not.
    pub(super) async fn start(spec: MasterSpec) -> Result<Link, String> {
        let link = Link {
            spec,
            state: Arc::new(watch::Sender::new(State::default())),
            starting: tokio::sync::Mutex::new(()),
            runtime: tokio::runtime::Handle::current(),
            stop: CancellationToken::new(),
            notices: Arc::default(),
        };
        link.start_one().await?;
        Ok(link)
    }

    /// Says from now on to `to` when a master ends, naming the host (a
    /// drop while no turn runs is said too). Only the first call counts.
    pub fn tell(&self, to: mpsc::UnboundedSender<String>) {
        let _ = self.notices.set(to);
    }

    /// The live master, if one is up.
    pub fn session(&self) -> Option<Session> {
        self.state.borrow().up
    }

    /// The live master, started again first when it is gone. Callers that
    /// come while it starts wait for that one start.
    pub async fn ensure(&self) -> Result<Session, LinkError> {
        if let Some(up) = self.session() {
            return Ok(up);
        }
        let _one = self.starting.lock().await;
        if let Some(up) = self.session() {
            return Ok(up);
        }
        let reason = self.last_reason();
        self.start_one().await.map_err(|why| LinkError::Reconnect {
            host: self.spec.host.clone(),
            reason,
            why,
        })
    }

    /// [`ensure`](Link::ensure) from a thread outside the runtime (a
    /// turn is prepared on a blocking thread).
    pub fn ensure_blocking(&self) -> Result<Session, LinkError> {
        self.runtime.block_on(self.ensure())
    }

    /// Whether master `generation` is gone (a turn over it failed): why,
    /// as the error to show, or `None` when it is still up and answers.
    pub async fn lost_during(&self, generation: u64) -> Option<LinkError> {
        let current = self.session().map(|s| s.generation);
        if current == Some(generation) && self.answers().await {
            return None;
        }
        let mut rx = self.state.subscribe();
        let ended =
            tokio::time::timeout(SETTLE, rx.wait_for(|s| s.ended.contains_key(&generation))).await;
        let reason = match ended {
            Ok(Ok(state)) => state.ended.get(&generation).cloned(),
            _ => None,
        };
        Some(LinkError::Lost {
            host: self.spec.host.clone(),
            reason: reason.unwrap_or_else(|| "its master connection stopped answering".into()),
        })
    }

    /// Whether the master answers on its control socket.
    async fn answers(&self) -> bool {
        let mut args = mux_args(&self.spec.control);
        args.extend(["-O".into(), "check".into(), self.spec.dest.clone()]);
        ssh_output(&args, "checking the master connection")
            .await
            .is_ok()
    }

    /// Why the last master ended.
    fn last_reason(&self) -> String {
        let state = self.state.borrow();
        state
            .ended
            .get(&state.generation)
            .cloned()
            .unwrap_or_else(|| "its master connection is gone".into())
    }

    /// Starts a master and its watcher; the caller holds `starting` (or is
    /// [`Link::start`]).
    async fn start_one(&self) -> Result<Session, String> {
        let master = start_master(&self.spec).await?;
        let mut session = Session {
            generation: 0,
            mcp_port: master.mcp_port,
        };
        self.state.send_modify(|s| {
            s.generation += 1;
            session.generation = s.generation;
            s.up = Some(session);
        });
        tokio::spawn(watch_master(
            master,
            self.state.clone(),
            session.generation,
            self.stop.clone(),
            self.spec.host.clone(),
            self.notices.clone(),
        ));
        Ok(session)
    }
}

/// A running master.
struct Master {
    child: Child,
    /// The last line it wrote to stderr.
    last_error: Arc<Mutex<String>>,
    /// Ends when its stderr closes.
    drained: tokio::task::JoinHandle<()>,
    mcp_port: Option<u16>,
}

/// Starts a master whose own session is a lifeline (it reads awtui's pipe,
/// so when awtui ends, even by kill -9, the master ends too) and, with an
/// MCP port, forwards a port the host picks to it.
async fn start_master(spec: &MasterSpec) -> Result<Master, String> {
    // A master that died leaves its socket; a new one would not take it.
    let _ = std::fs::remove_file(&spec.control);
    let mut child = Command::new(SSH)
        .args(["-M", "-S"])
        .arg(&spec.control)
        .args(["-o", "ControlPersist=no", "-o", "ConnectTimeout=15"])
        .args(SSH_OPTIONS)
        .arg(&spec.dest)
        .arg("echo awtui-ready; exec cat >/dev/null")
        // awtui's own, never a turn's: no turn's cleanup finds it.
        .env_remove(TURN_VAR)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot run {SSH}: {e}"))?;
    let last_error = Arc::new(Mutex::new(String::new()));
    let drained = tokio::spawn(keep_last_line(
        child.stderr.take().expect("piped"),
        last_error.clone(),
    ));
    let stdout = child.stdout.take().expect("piped");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let ready = tokio::time::timeout(STEP_LIMIT, lines.next_line())
        .await
        .unwrap_or(Ok(None));
    if !matches!(ready, Ok(Some(ref l)) if l.trim() == "awtui-ready") {
        let _ = child.kill().await;
        let _ = tokio::time::timeout(Duration::from_secs(2), drained).await;
        let last = last_error.lock().expect("not poisoned").clone();
        let last = if last.is_empty() {
            "the connection closed".into()
        } else {
            last
        };
        return Err(format!("cannot connect: {last}"));
    }
    // Keep draining its output so it never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let mcp_port = match spec.local_mcp_port {
        Some(port) => Some(forward(spec, port).await?),
        None => None,
    };
    Ok(Master {
        child,
        last_error,
        drained,
        mcp_port,
    })
}

/// Asks the master to forward a port the host picks to awtui's `port`;
/// the host's port.
async fn forward(spec: &MasterSpec, port: u16) -> Result<u16, String> {
    let mut args = mux_args(&spec.control);
    args.extend([
        "-O".into(),
        "forward".into(),
        "-R".into(),
        format!("0:127.0.0.1:{port}"),
        spec.dest.clone(),
    ]);
    let out = ssh_output(&args, "forwarding awtui's MCP port").await?;
    out.trim().parse().map_err(|_| {
        format!(
            "forwarding awtui's MCP port: ssh answered '{}', not a port",
            crate::sanitize::for_terminal(out.trim())
        )
    })
}

/// Reads `from` to its end, keeping its last non-empty line (sanitized).
async fn keep_last_line(from: tokio::process::ChildStderr, last: Arc<Mutex<String>>) {
    let mut lines = tokio::io::BufReader::new(from).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if !line.trim().is_empty() {
            *last.lock().expect("not poisoned") = crate::sanitize::for_terminal(line.trim());
        }
    }
    // Anything left without a newline.
    let mut rest = String::new();
    let _ = lines.into_inner().read_to_string(&mut rest).await;
    if !rest.trim().is_empty() {
        *last.lock().expect("not poisoned") = crate::sanitize::for_terminal(rest.trim());
    }
}

/// Waits for master `generation` to end and records why; on `stop` ends
/// it instead (dropping it kills it).
async fn watch_master(
    mut master: Master,
    state: Arc<watch::Sender<State>>,
    generation: u64,
    stop: CancellationToken,
    host: String,
    notices: Arc<OnceLock<mpsc::UnboundedSender<String>>>,
) {
    // Held here: `Child::wait` would close it, and it is the lifeline.
    let _lifeline = master.child.stdin.take();
    let status = tokio::select! {
        status = master.child.wait() => status,
        () = stop.cancelled() => return,
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), &mut master.drained).await;
    let last = master.last_error.lock().expect("not poisoned").clone();
    let reason = why_it_ended(status.ok(), &last);
    let said = format!(
        "connection to host '{host}' lost: {reason}; it is started again when one of its agents' \
         turns needs it"
    );
    match notices.get() {
        Some(to) => {
            let _ = to.send(said);
        }
        None => tracing::warn!("{said}"),
    }
    state.send_modify(|s| {
        if s.up.is_some_and(|u| u.generation == generation) {
            s.up = None;
        }
        s.ended.insert(generation, reason);
    });
}

/// Why a master ended, as said to the person: what ssh said last, else
/// how it exited.
fn why_it_ended(status: Option<ExitStatus>, last_line: &str) -> String {
    if !last_line.is_empty() {
        return last_line.to_string();
    }
    match status {
        Some(s) if s.signal().is_some() => format!(
            "its master connection (ssh) was killed by signal {}",
            s.signal().unwrap_or_default()
        ),
        Some(s) => format!(
            "its master connection (ssh) ended with status {}",
            s.code().unwrap_or_default()
        ),
        None => "its master connection (ssh) ended".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_master_that_said_nothing_is_named_by_how_it_ended() {
        let killed = ExitStatus::from_raw(9);
        assert_eq!(
            why_it_ended(Some(killed), ""),
            "its master connection (ssh) was killed by signal 9"
        );
        let exited = ExitStatus::from_raw(255 << 8);
        assert_eq!(
            why_it_ended(Some(exited), ""),
            "its master connection (ssh) ended with status 255"
        );
        assert_eq!(
            why_it_ended(
                Some(exited),
                "Connection to 127.0.0.1 closed by remote host."
            ),
            "Connection to 127.0.0.1 closed by remote host."
        );
    }

    #[test]
    fn the_error_names_the_host_and_says_lost() {
        let e = LinkError::Lost {
            host: "box".into(),
            reason: "Timeout, server box not responding.".into(),
        };
        assert_eq!(
            e.to_string(),
            "connection to host 'box' lost: Timeout, server box not responding."
        );
        let e = LinkError::Reconnect {
            host: "box".into(),
            reason: "gone".into(),
            why: "cannot connect: Connection refused".into(),
        };
        assert!(e.to_string().starts_with(
            "connection to host 'box' lost: gone; reconnecting failed: cannot connect"
        ));
    }
}
