//! Runs one turn's process: its own process group, private config files,
//! prompt on stdin, stdout parsed into events, stderr appended to the agent's
//! log file.
//!
//! Decisions:
//! - The turn ends when the agent process (the direct child) exits, not when
//!   its stdout closes: a background child that inherited the pipe would
//!   otherwise hold the turn open until it exits.
//! - Every turn ends every process it started, however it ends (exit, stop,
//!   timeout): SIGTERM, [`STOP_GRACE`] to exit, then SIGKILL. Processes are
//!   found by the turn's marker (`AWTUI_TURN`) in their environment, so
//!   children that called `setsid` are found too ([`super::contain`]).
//!   Nothing an agent starts outlives its turn.
//! - Only then is the rest of stdout read: once every process of the turn
//!   has ended, the pipe closes and nothing the agent printed is lost, even
//!   after a stop or a timeout (the outcome keeps the answer; the engine
//!   archives it). If something escaped and still holds the pipe, reading
//!   gives up after [`DRAIN`].
//! - Output is read as bytes, never stopped early (so the agent never dies
//!   of SIGPIPE): lines are decoded lossily and cut at
//!   [`OUTPUT_CAP`](super::capped::OUTPUT_CAP), and so is the answer. When
//!   the answer was cut (or lost with a cut line), the whole raw stdout is
//!   kept in a file next to the stderr log for the engine's output archive.

use std::collections::VecDeque;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::BackendError;
use super::capped::{LineSplitter, OUTPUT_CAP, cut_to};
use super::contain::Scope;
use super::event::BackendEvent;
use super::invocation::Invocation;
use super::outcome::{Exit, OutcomeBuilder};
use super::parse::StreamParser;
use super::turn::{RunningTurn, TurnUpdate};
use crate::agents::runtime::{Runtime, spawner};

/// How long a turn's processes get between SIGTERM and SIGKILL.
pub(super) const STOP_GRACE: Duration = Duration::from_secs(3);
/// How long output is still read after every process of the turn has
/// ended (only something that escaped can keep the pipes open that long).
const DRAIN: Duration = Duration::from_secs(2);
/// How many stderr lines are kept to explain a failure.
const STDERR_TAIL: usize = 20;
/// How much of one stderr line the failure explanation keeps.
const STDERR_TAIL_LINE: usize = 4096;
/// The variable that marks every process of one turn: `<awtui pid>-<n>`.
pub const TURN_VAR: &str = "AWTUI_TURN";

/// A marker value no other turn of this process (or of any other live
/// awtui process) carries.
pub(super) fn next_turn_mark() -> String {
    static TURNS: AtomicU64 = AtomicU64::new(0);
    let n = TURNS.fetch_add(1, Ordering::Relaxed);
    format!("{}-{n}", std::process::id())
}

/// Starts a turn. Must be called inside a tokio runtime.
pub fn spawn(
    inv: Invocation,
    parser: Box<dyn StreamParser>,
    stderr_log: &Path,
    timeout: Option<Duration>,
    not_found_hint: &str,
    runtime: &dyn Runtime,
) -> Result<RunningTurn, BackendError> {
    if let Some(bytes) = inv
        .args
        .iter()
        .map(String::len)
        .find(|n| *n > super::MAX_ARGUMENT)
    {
        // Said plainly before the OS answers "Argument list too long".
        return Err(BackendError::ArgumentTooLong {
            program: inv.program.clone(),
            bytes,
            limit: super::MAX_ARGUMENT,
        });
    }
    let name = inv.program.clone();
    let launch = runtime.prepare(inv, not_found_hint)?;
    if let Some(parent) = stderr_log.parent() {
        std::fs::create_dir_all(parent).map_err(|source| BackendError::Io {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    let mark = next_turn_mark();
    let mut cmd = Command::new(&launch.program);
    cmd.args(&launch.args)
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .env(TURN_VAR, &mark)
        .current_dir(&launch.cwd)
        .stdin(if launch.stdin.is_some() || launch.hold_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    // From awtui's one lasting spawning thread: a sandbox dies with the
    // thread that forked it.
    let mut child = spawner::spawn(cmd).map_err(|source| BackendError::Spawn {
        program: name,
        source,
    })?;
    let pid = child.id().unwrap_or(0);
    let scope = Scope {
        marker: format!("{TURN_VAR}={mark}"),
        group: (pid != 0).then_some(pid),
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let (stop_tx, stop_rx) = oneshot::channel();

    // Held open until the turn's supervisor ends (a remote turn's
    // lifeline), else closed after the prompt.
    let (held_tx, held_rx) = oneshot::channel::<tokio::process::ChildStdin>();
    if let Some(mut stdin) = child.stdin.take() {
        let text = launch.stdin.clone().unwrap_or_default();
        let hold = launch.hold_stdin;
        tokio::spawn(async move {
            // An agent that exits without reading its prompt closes the pipe;
            // its exit status tells the story, not this write.
            let _ = stdin.write_all(text.as_bytes()).await;
            if hold {
                let _ = stdin.flush().await;
                let _ = held_tx.send(stdin);
            } else {
                let _ = stdin.shutdown().await;
            }
        });
    } else {
        drop(held_tx);
    }
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let log_path = stderr_log.to_path_buf();
    let spool = Spool::new(stderr_log.with_file_name(format!("stdout-{pid}.raw")));
    tokio::spawn(async move {
        let give_up = CancellationToken::new();
        let mode = parser.usage_mode();
        let stderr_task = tokio::spawn(collect_stderr(stderr, log_path, give_up.clone()));
        let out = Stdout {
            parser,
            builder: OutcomeBuilder::new(mode),
            tx: tx.clone(),
        };
        let stdout_task = tokio::spawn(read_stdout(stdout, out, spool, give_up.clone()));
        let exit = supervise(&mut child, pid, &scope, stop_rx, timeout).await;
        drop(held_rx);
        // Every process of the turn has ended, so the pipes are closing;
        // read what is left unless something escaped and holds them.
        let give_up_later = {
            let give_up = give_up.clone();
            tokio::spawn(async move {
                tokio::time::sleep(DRAIN).await;
                give_up.cancel();
            })
        };
        let builder = stdout_task
            .await
            .unwrap_or_else(|_| OutcomeBuilder::new(mode));
        let tail = stderr_task.await.unwrap_or_default();
        give_up_later.abort();
        let _ = tx.send(TurnUpdate::Done(builder.finish(exit, &tail)));
    });
    Ok(RunningTurn::new(Some(pid), rx, stop_tx))
}

/// Reads `source` to its end, or until `give_up`, handing each chunk to
/// `sink`. Never stops early otherwise: a writer whose reader went away
/// would die of SIGPIPE.
async fn pump(
    source: Option<impl AsyncRead + Unpin>,
    give_up: &CancellationToken,
    mut sink: impl FnMut(&[u8]),
) {
    let Some(mut source) = source else {
        return;
    };
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = tokio::select! {
            biased;
            () = give_up.cancelled() => break,
            read = source.read(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            },
        };
        sink(&buf[..n]);
    }
}

/// Where parsed stdout goes: the parser, the outcome and the turn's
/// updates.
struct Stdout {
    parser: Box<dyn StreamParser>,
    builder: OutcomeBuilder,
    tx: mpsc::UnboundedSender<TurnUpdate>,
}

impl Stdout {
    fn emit(&mut self, events: Vec<BackendEvent>) {
        for e in events {
            self.builder.apply(&e);
            let _ = self.tx.send(TurnUpdate::Event(e));
        }
    }

    fn line(&mut self, line: String) {
        let events = self.parser.line(&line);
        self.emit(events);
    }
}

/// Reads stdout to its end, forwarding parsed events; returns the outcome
/// so far, with the raw output kept when anything was cut.
async fn read_stdout(
    stdout: Option<tokio::process::ChildStdout>,
    mut out: Stdout,
    mut spool: Spool,
    give_up: CancellationToken,
) -> OutcomeBuilder {
    let mut split = LineSplitter::new(OUTPUT_CAP);
    pump(stdout, &give_up, |bytes| {
        spool.write(bytes);
        split.feed(bytes, &mut |line| out.line(line));
    })
    .await;
    split.finish(&mut |line| out.line(line));
    let events = out.parser.finish();
    out.emit(events);
    let connected = out.parser.tools_connected();
    out.builder.tools_connected(connected);
    let refused = out.parser.refused();
    out.builder.refused(refused);
    // A cut line only matters when it cost the answer: a JSON backend's
    // huge tool result is noise to skip, its cut final result is not.
    let answer_lost = split.cut() && !out.builder.has_answer();
    if answer_lost || out.parser.truncated() || out.builder.is_truncated() {
        out.builder.truncated(spool.keep());
    } else {
        spool.discard();
    }
    out.builder
}

/// A turn's raw stdout, for the archive when output was cut: held in
/// memory up to the cap, written to `path` (mode 0600) past it.
struct Spool {
    path: PathBuf,
    held: Vec<u8>,
    file: Option<std::fs::File>,
    /// Writing failed: the raw output cannot be kept.
    broken: bool,
}

impl Spool {
    fn new(path: PathBuf) -> Self {
        Spool {
            path,
            held: Vec::new(),
            file: None,
            broken: false,
        }
    }

    fn open(&mut self) {
        use std::os::unix::fs::OpenOptionsExt;
        let opened = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&self.path)
            .and_then(|mut f| f.write_all(&self.held).map(|()| f));
        self.held = Vec::new();
        match opened {
            Ok(f) => self.file = Some(f),
            Err(_) => self.broken = true,
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        if self.broken {
            return;
        }
        if self.file.is_none() {
            if self.held.len() + bytes.len() <= OUTPUT_CAP {
                self.held.extend_from_slice(bytes);
                return;
            }
            self.open();
        }
        if let Some(f) = self.file.as_mut()
            && f.write_all(bytes).is_err()
        {
            self.broken = true;
        }
    }

    /// The file holding the whole output, unless it could not be written.
    fn keep(mut self) -> Option<PathBuf> {
        if self.file.is_none() && !self.broken {
            self.open();
        }
        if self.broken {
            let _ = std::fs::remove_file(&self.path);
            return None;
        }
        Some(self.path)
    }

    fn discard(self) {
        if self.file.is_some() || self.broken {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Waits for the agent process to exit, unless stopped or timed out first;
/// then ends every process of the turn.
async fn supervise(
    child: &mut tokio::process::Child,
    pid: u32,
    scope: &Scope,
    stop: oneshot::Receiver<()>,
    timeout: Option<Duration>,
) -> Exit {
    let deadline = async {
        match timeout {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending().await,
        }
    };
    let (exit, leader_running) = tokio::select! {
        status = child.wait() => (Exit::Code(status.ok().and_then(|s| s.code())), false),
        Ok(()) = stop => (Exit::Stopped, true),
        () = deadline => (Exit::TimedOut(timeout.unwrap_or_default()), true),
    };
    end_turn(child, pid, scope, leader_running).await;
    exit
}

/// Ends every process of the turn: SIGTERM, a grace period, SIGKILL. The
/// process group is signalled too while its leader (our child, not yet
/// reaped, so the group id cannot have been reused) is there to pin it; it
/// is all there is to go by without `/proc`.
async fn end_turn(
    child: &mut tokio::process::Child,
    pid: u32,
    scope: &Scope,
    leader_running: bool,
) {
    use rustix::process::{Pid, Signal, kill_process_group};
    let group = i32::try_from(pid).ok().and_then(Pid::from_raw);
    let signal_group = |sig| {
        if let Some(g) = group {
            let _ = kill_process_group(g, sig);
        }
    };
    if leader_running {
        signal_group(Signal::TERM);
    }
    let blocking = scope.clone();
    let found = tokio::task::spawn_blocking(move || blocking.end(STOP_GRACE))
        .await
        .unwrap_or(0);
    if leader_running {
        if found == 0 {
            // Nothing was found in /proc: the leader gets its grace here.
            let _ = tokio::time::timeout(STOP_GRACE, child.wait()).await;
        }
        signal_group(Signal::KILL);
        let _ = child.kill().await;
    }
}

/// Appends stderr to the agent's log as it comes and returns its last
/// lines (decoded lossily, each cut short).
pub(super) async fn collect_stderr(
    stderr: Option<tokio::process::ChildStderr>,
    log: PathBuf,
    give_up: CancellationToken,
) -> String {
    let mut tail: VecDeque<String> = VecDeque::new();
    let mut file = OpenOptions::new().create(true).append(true).open(&log).ok();
    let mut split = LineSplitter::new(STDERR_TAIL_LINE);
    let mut keep = |mut line: String| {
        cut_to(&mut line, STDERR_TAIL_LINE);
        if tail.len() == STDERR_TAIL {
            tail.pop_front();
        }
        tail.push_back(line);
    };
    pump(stderr, &give_up, |bytes| {
        if let Some(f) = file.as_mut() {
            let _ = f.write_all(bytes);
        }
        split.feed(bytes, &mut keep);
    })
    .await;
    split.finish(&mut keep);
    tail.into_iter().collect::<Vec<_>>().join("\n")
}
