//! Runs one turn's process: its own process group, private config files,
//! prompt on stdin, stdout parsed into events, stderr appended to the agent's
//! log file. Stopping or a timeout ends the whole process group.

use std::collections::VecDeque;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::{mpsc, oneshot};

use super::event::BackendEvent;
use super::invocation::{Invocation, PrivateFile};
use super::outcome::{Exit, OutcomeBuilder};
use super::parse::StreamParser;
use super::turn::{RunningTurn, TurnUpdate};
use super::{BackendError, find_executable};

/// How long a stopped process group gets between SIGTERM and SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(3);
/// How many stderr lines are kept to explain a failure.
const STDERR_TAIL: usize = 20;

fn write_private(file: &PrivateFile) -> Result<(), BackendError> {
    crate::fsutil::write_private_file(&file.path, file.content.as_bytes()).map_err(|source| {
        BackendError::Io {
            path: file.path.clone(),
            source,
        }
    })
}

/// Starts a turn. Must be called inside a tokio runtime.
pub fn spawn(
    inv: Invocation,
    parser: Box<dyn StreamParser>,
    stderr_log: &Path,
    timeout: Option<Duration>,
    not_found_hint: &str,
) -> Result<RunningTurn, BackendError> {
    for f in &inv.files {
        write_private(f)?;
    }
    let path = inv
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str());
    let program = match find_executable(&inv.program, &inv.cwd, path) {
        Some(p) => p,
        None => {
            return Err(BackendError::NotInstalled {
                program: inv.program.clone(),
                hint: not_found_hint.to_string(),
            });
        }
    };
    if let Some(parent) = stderr_log.parent() {
        std::fs::create_dir_all(parent).map_err(|source| BackendError::Io {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    let mut cmd = Command::new(&program);
    cmd.args(&inv.args)
        .envs(inv.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&inv.cwd)
        .stdin(if inv.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|source| BackendError::Spawn {
        program: inv.program.clone(),
        source,
    })?;
    let pid = child.id().unwrap_or(0);
    let (tx, rx) = mpsc::unbounded_channel();
    let (stop_tx, stop_rx) = oneshot::channel();

    if let (Some(text), Some(mut stdin)) = (inv.stdin, child.stdin.take()) {
        tokio::spawn(async move {
            // An agent that exits without reading its prompt closes the pipe;
            // its exit status tells the story, not this write.
            let _ = stdin.write_all(text.as_bytes()).await;
            let _ = stdin.shutdown().await;
        });
    }
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let log_path = stderr_log.to_path_buf();
    tokio::spawn(async move {
        let stderr_task = tokio::spawn(collect_stderr(stderr, log_path));
        let mode = parser.usage_mode();
        let mut builder = OutcomeBuilder::new(mode);
        let read = read_stdout(stdout, parser, &tx, &mut builder);
        let exit = supervise(&mut child, pid, read, stop_rx, timeout).await;
        let tail = stderr_task.await.unwrap_or_default();
        let _ = tx.send(TurnUpdate::Done(builder.finish(exit, &tail)));
    });
    Ok(RunningTurn::new(Some(pid), rx, stop_tx))
}

/// Reads stdout to its end, forwarding parsed events.
async fn read_stdout(
    stdout: Option<tokio::process::ChildStdout>,
    mut parser: Box<dyn StreamParser>,
    tx: &mpsc::UnboundedSender<TurnUpdate>,
    builder: &mut OutcomeBuilder,
) {
    let mut emit = |events: Vec<BackendEvent>| {
        for e in events {
            builder.apply(&e);
            let _ = tx.send(TurnUpdate::Event(e));
        }
    };
    if let Some(stdout) = stdout {
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            emit(parser.line(&line));
        }
    }
    emit(parser.finish());
}

/// Waits for stdout to close and the process to exit, unless stopped or
/// timed out first, in which case the process group is ended.
async fn supervise(
    child: &mut tokio::process::Child,
    pid: u32,
    read: impl std::future::Future<Output = ()>,
    stop: oneshot::Receiver<()>,
    timeout: Option<Duration>,
) -> Exit {
    let deadline = async {
        match timeout {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending().await,
        }
    };
    let finished = async {
        read.await;
        child.wait().await.ok().map(|s| s.code())
    };
    tokio::select! {
        status = finished => Exit::Code(status.flatten()),
        Ok(()) = stop => { end_group(child, pid).await; Exit::Stopped }
        () = deadline => { end_group(child, pid).await; Exit::TimedOut(timeout.unwrap_or_default()) }
    }
}

/// SIGTERM to the whole group, SIGKILL after a grace period.
async fn end_group(child: &mut tokio::process::Child, pid: u32) {
    use rustix::process::{Pid, Signal, kill_process_group};
    let Some(group) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        let _ = child.kill().await;
        return;
    };
    let _ = kill_process_group(group, Signal::TERM);
    if tokio::time::timeout(STOP_GRACE, child.wait())
        .await
        .is_err()
    {
        let _ = kill_process_group(group, Signal::KILL);
        let _ = child.wait().await;
    } else {
        // The leader is gone; make sure nothing it started lingers.
        let _ = kill_process_group(group, Signal::KILL);
    }
}

/// Appends stderr to the agent's log and returns its last lines.
async fn collect_stderr(stderr: Option<tokio::process::ChildStderr>, log: PathBuf) -> String {
    let mut tail: VecDeque<String> = VecDeque::new();
    let mut file = OpenOptions::new().create(true).append(true).open(&log).ok();
    if let Some(stderr) = stderr {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(f) = file.as_mut() {
                let _ = writeln!(f, "{line}");
            }
            if tail.len() == STDERR_TAIL {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    }
    tail.into_iter().collect::<Vec<_>>().join("\n")
}
