//! One live ACP agent: its process, the JSON-RPC traffic on its stdio,
//! its session, and the turn in progress.
//!
//! Decisions:
//! - The process and its session outlive a turn: a wake is one
//!   `session/prompt` to a warm agent, not a cold start.
//! - What the agent sends is untrusted. A line that is not a message is
//!   skipped (and logged); lines are cut at the output cap; a request
//!   awtui does not serve (`fs/*`, `terminal/*`, anything else) is
//!   answered "method not found", naming it: awtui advertises neither
//!   capability, so an agent has no business asking, and an agent's
//!   path never reaches awtui's own file access.
//! - A permission request is answered only with an option the agent
//!   offered, or `cancelled`: after the turn is cancelled (or ended),
//!   every request still waiting, and every later one, is answered
//!   cancelled, and nothing more is asked of the person.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::permission::{Ask, outcome, standing_verdict};
use super::updates::TurnFold;
use super::wire::{self, Incoming, RpcError};
use crate::agents::backend::capped::{LineSplitter, OUTPUT_CAP};
use crate::agents::backend::contain::Scope;
use crate::agents::backend::process::{TURN_VAR, collect_stderr, next_turn_mark};
use crate::agents::backend::turn::TurnUpdate;
use crate::agents::backend::{BackendError, BackendEvent};
use crate::agents::runtime::{Launch, spawner};
use crate::approvals::{Approvals, Verdict};
use crate::workflow::Permissions;

/// Who the agent is to awtui: what its permission requests are checked
/// against. All of it comes from the workflow and awtui's records.
#[derive(Clone)]
pub struct Host {
    pub agent: String,
    pub permissions: Permissions,
    /// The agent's workspace (its workdir), from awtui's records.
    pub workspace: PathBuf,
    /// The instance's approvals (the person, the rules, the journal).
    pub approvals: Option<Approvals>,
    /// The agent's `tools:` as allow rules (`Bash(git *)`, `Edit`): what
    /// the standing permissions allow beyond their own.
    pub tools: crate::approvals::RuleSet,
}

/// Why the connection failed.
#[derive(Debug, thiserror::Error)]
pub enum ConnError {
    /// The agent answered with an error.
    #[error("the agent answered {method} with an error: {error}")]
    Rpc { method: String, error: RpcError },
    /// The process ended (its status and the end of its stderr).
    #[error("{0}")]
    Gone(String),
    #[error("the agent did not answer {method} within {} s", .after.as_secs())]
    Silent { method: String, after: Duration },
}

/// The turn in progress, as the reader sees it.
struct Sink {
    session: String,
    tx: mpsc::UnboundedSender<TurnUpdate>,
    fold: TurnFold,
    /// Cancelled when the turn is cancelled or ends: permission requests
    /// waiting for the person are answered cancelled.
    over: CancellationToken,
    /// Calls refused by the agent's standing permissions.
    refused: Vec<String>,
    /// Whether a person, a rule or the standing permissions said no to
    /// a call in this turn (an agent may end its turn `cancelled` then).
    denied: bool,
}

/// A live agent process speaking ACP.
pub struct Conn {
    host: Host,
    out: mpsc::UnboundedSender<String>,
    pending: Mutex<HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>>,
    next_id: AtomicU64,
    sink: Mutex<Option<Sink>>,
    /// The agent process (leader of its process group).
    pub pid: u32,
    scope: Scope,
    /// Cancelled once the process has ended or its stdout closed.
    dead: CancellationToken,
    /// Cancelled once how the process ended is recorded in `ended`.
    exited: CancellationToken,
    /// How it ended, for the turn's failure.
    ended: Mutex<Option<String>>,
    /// What the person or a rule said no to, for the next prompt (ACP has
    /// no field for a reason).
    notes: Mutex<Vec<String>>,
    /// The session, once made or loaded.
    pub session: Mutex<Option<String>>,
    /// Whether the session was made new by this process (its first prompt
    /// carries the system prompt).
    pub fresh: AtomicBool,
}

/// How long the agent may take to answer `initialize`, `session/new` and
/// `session/load` (a CLI starting up, connecting its MCP servers).
pub const SETUP_WAIT: Duration = Duration::from_secs(120);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Conn {
    /// Starts the agent's process as `launch` says (its runtime made it
    /// ready), with its stderr appended to `log`.
    pub fn spawn(launch: &Launch, host: Host, log: PathBuf) -> Result<Arc<Conn>, BackendError> {
        let name = launch.program.display().to_string();
        if let Some(parent) = log.parent() {
            std::fs::create_dir_all(parent).map_err(|source| BackendError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let mark = next_turn_mark();
        let mut cmd = tokio::process::Command::new(&launch.program);
        cmd.args(&launch.args)
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .env(TURN_VAR, &mark)
            .current_dir(&launch.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = spawner::spawn(cmd).map_err(|source| BackendError::Spawn {
            program: name,
            source,
        })?;
        let pid = child.id().unwrap_or(0);
        let (out, out_rx) = mpsc::unbounded_channel();
        let conn = Arc::new(Conn {
            host,
            out,
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            sink: Mutex::new(None),
            pid,
            scope: Scope {
                marker: format!("{TURN_VAR}={mark}"),
                group: (pid != 0).then_some(pid),
            },
            dead: CancellationToken::new(),
            exited: CancellationToken::new(),
            ended: Mutex::new(None),
            notes: Mutex::new(Vec::new()),
            session: Mutex::new(None),
            fresh: AtomicBool::new(false),
        });
        tokio::spawn(write_lines(child.stdin.take(), out_rx));
        let stderr_done = CancellationToken::new();
        let stderr = tokio::spawn(collect_stderr(
            child.stderr.take(),
            log,
            stderr_done.clone(),
        ));
        tokio::spawn(read_lines(conn.clone(), child.stdout.take()));
        let watcher = conn.clone();
        tokio::spawn(async move {
            let status = child.wait().await;
            // What is left on stderr comes soon after the exit, unless
            // something the agent started still holds the pipe.
            let give_up = {
                let t = stderr_done.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_secs(2)).await;
                    t.cancel();
                })
            };
            let tail = stderr.await.unwrap_or_default();
            give_up.abort();
            let status = match status.ok().and_then(|s| s.code()) {
                Some(c) => format!("exited with status {c}"),
                None => "was killed by a signal".into(),
            };
            let tail = crate::sanitize::for_terminal(tail.trim());
            let text = if tail.is_empty() {
                format!("the agent {status}")
            } else {
                format!("the agent {status}: {}", last_lines(&tail, 5))
            };
            *lock(&watcher.ended) = Some(text);
            watcher.exited.cancel();
            watcher.die();
        });
        Ok(conn)
    }

    /// Whether the process is gone.
    pub fn is_dead(&self) -> bool {
        self.dead.is_cancelled()
    }

    /// How the process ended (or that it closed its stdout).
    pub fn ended(&self) -> String {
        lock(&self.ended)
            .clone()
            .unwrap_or_else(|| "the agent closed its output".into())
    }

    /// Marks the connection dead and fails every request waiting for an
    /// answer.
    fn die(&self) {
        self.dead.cancel();
        let waiting: Vec<_> = lock(&self.pending).drain().collect();
        drop(waiting);
        if let Some(sink) = lock(&self.sink).as_ref() {
            sink.over.cancel();
        }
    }

    /// Sends a request and waits (at most `wait`) for its answer.
    pub async fn call(
        &self,
        method: &str,
        params: Value,
        wait: Option<Duration>,
    ) -> Result<Value, ConnError> {
        let (_, rx) = self.send_request(method, params);
        let answered = async {
            tokio::select! {
                r = rx => r.map_err(|_| ConnError::Gone(self.ended())),
                () = self.dead.cancelled() => Err(ConnError::Gone(self.ended())),
            }
        };
        let result =
            match wait {
                Some(after) => tokio::time::timeout(after, answered).await.map_err(|_| {
                    ConnError::Silent {
                        method: method.into(),
                        after,
                    }
                })??,
                None => answered.await?,
            };
        result.map_err(|error| ConnError::Rpc {
            method: method.into(),
            error,
        })
    }

    /// Sends a request; the receiver gets its answer.
    fn send_request(
        &self,
        method: &str,
        params: Value,
    ) -> (u64, oneshot::Receiver<Result<Value, RpcError>>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        let _ = self.out.send(wire::request(id, method, params));
        (id, rx)
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) {
        let _ = self.out.send(wire::notification(method, params));
    }

    /// Records that a call of this turn was denied.
    fn mark_denied(&self) {
        if let Some(s) = lock(&self.sink).as_mut() {
            s.denied = true;
        }
    }

    /// Adds a note for the next prompt.
    pub fn add_note(&self, note: String) {
        lock(&self.notes).push(note);
    }

    /// Takes the notes for the next prompt.
    pub fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.notes))
    }

    /// Runs one prompt on `session`: updates go to `tx` as they come; the
    /// result is the prompt's answer, or `None` when `stop` fired first
    /// (the turn was then cancelled: see [`Conn::cancel`]).
    pub async fn prompt(
        self: &Arc<Self>,
        session: &str,
        text: String,
        tx: mpsc::UnboundedSender<TurnUpdate>,
        stop: &mut oneshot::Receiver<()>,
    ) -> PromptEnd {
        let over = CancellationToken::new();
        *lock(&self.sink) = Some(Sink {
            session: session.to_string(),
            tx,
            fold: TurnFold::default(),
            over: over.clone(),
            refused: Vec::new(),
            denied: false,
        });
        let params = json!({
            "sessionId": session,
            "prompt": [{"type": "text", "text": text}],
        });
        let (_, answer) = self.send_request("session/prompt", params);
        tokio::pin!(answer);
        let end = tokio::select! {
            r = &mut answer => match r {
                Ok(Ok(result)) => PromptEnd::Answered(result),
                Ok(Err(error)) => PromptEnd::Failed(ConnError::Rpc { method: "session/prompt".into(), error }),
                Err(_) => PromptEnd::Failed(ConnError::Gone(self.ended())),
            },
            () = self.dead.cancelled() => PromptEnd::Failed(ConnError::Gone(self.ended())),
            _ = stop => {
                over.cancel();
                self.cancel(session, answer).await
            }
        };
        over.cancel();
        end
    }

    /// Cancels the turn: `session/cancel`, every waiting permission
    /// request answered cancelled, then up to [`CANCEL_WAIT`] for the
    /// prompt to end. An agent that does not end it by then is ended
    /// (its whole process group).
    async fn cancel(
        self: &Arc<Self>,
        session: &str,
        answer: impl std::future::Future<
            Output = Result<Result<Value, RpcError>, oneshot::error::RecvError>,
        >,
    ) -> PromptEnd {
        self.notify("session/cancel", json!({"sessionId": session}));
        let ended = tokio::select! {
            r = tokio::time::timeout(CANCEL_WAIT, answer) => r.is_ok(),
            () = self.dead.cancelled() => false,
        };
        if !ended {
            self.end().await;
        }
        PromptEnd::Cancelled {
            agent_stayed: ended,
        }
    }

    /// Ends the agent: its whole process group and whatever it started.
    /// It counts as dead from the start, so no turn picks it up while it
    /// is being ended.
    pub async fn end(&self) {
        self.die();
        let scope = self.scope.clone();
        let _ = tokio::task::spawn_blocking(move || {
            scope.end(crate::agents::backend::process::STOP_GRACE)
        })
        .await;
    }

    /// Ends the processes of this agent that started after `since` (the
    /// commands of a cancelled turn some agents leave running), leaving
    /// the agent itself and what it ran before.
    pub async fn end_started_since(&self, since: &[u32]) {
        let scope = self.scope.clone();
        let keep: Vec<u32> = since.iter().copied().chain([self.pid]).collect();
        let _ = tokio::task::spawn_blocking(move || {
            let extra = Scope {
                marker: scope.marker.clone(),
                group: None,
            };
            for p in extra.members() {
                if !keep.contains(&p.pid)
                    && let Some(pid) = i32::try_from(p.pid)
                        .ok()
                        .and_then(rustix::process::Pid::from_raw)
                {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
        })
        .await;
    }

    /// The processes of this agent now (read from `/proc` on a blocking
    /// thread).
    pub async fn members(&self) -> Vec<u32> {
        let scope = self.scope.clone();
        tokio::task::spawn_blocking(move || scope.members().iter().map(|p| p.pid).collect())
            .await
            .unwrap_or_default()
    }

    /// Ends the turn's bookkeeping: the fold (answer, usage, calls) and
    /// the calls refused by standing permissions.
    pub fn finish_turn(&self) -> Option<TurnEnd> {
        lock(&self.sink).take().map(|s| {
            s.over.cancel();
            TurnEnd {
                fold: s.fold,
                refused: s.refused,
                denied: s.denied,
            }
        })
    }

    /// Reports a folded event of the current turn.
    fn report(&self, session: &str, update: &Value) {
        let mut sink = lock(&self.sink);
        let Some(s) = sink.as_mut().filter(|s| s.session == session) else {
            return;
        };
        for event in s.fold.apply(update) {
            let _ = s.tx.send(TurnUpdate::Event(event));
        }
    }

    /// Emits an event of the current turn (usage from the prompt result).
    pub fn emit(&self, event: BackendEvent) {
        if let Some(s) = lock(&self.sink).as_ref() {
            let _ = s.tx.send(TurnUpdate::Event(event));
        }
    }

    /// Folds the prompt result's usage into the turn.
    pub fn prompt_usage(&self, result: &Value) {
        let event = lock(&self.sink)
            .as_mut()
            .and_then(|s| s.fold.prompt_usage(result));
        if let Some(e) = event {
            self.emit(e);
        }
    }

    /// Answers one request of the agent's.
    async fn serve(self: Arc<Self>, id: Value, method: String, params: Value) {
        let line = match method.as_str() {
            "session/request_permission" => wire::response(&id, self.permission(&params).await),
            other => wire::error_response(
                &id,
                wire::METHOD_NOT_FOUND,
                &format!(
                    "awtui does not serve '{}' (it offers no file system or terminal to agents)",
                    crate::sanitize::for_terminal(other)
                        .chars()
                        .take(100)
                        .collect::<String>()
                ),
            ),
        };
        let _ = self.out.send(line);
    }

    /// Decides a permission request: awtui's own tools are allowed; with
    /// `permissions: ask` the request goes to the approvals (rules, the
    /// person, the journal); otherwise the standing permissions answer.
    async fn permission(&self, params: &Value) -> Value {
        let ask = Ask::read(params);
        // The call shows while it waits (Gemini sends no `tool_call`).
        if let (Some(session), Some(call)) = (
            params.get("sessionId").and_then(Value::as_str),
            params
                .get("toolCall")
                .filter(|c| c.get("toolCallId").is_some()),
        ) {
            let mut update = call.clone();
            update["sessionUpdate"] = json!("tool_call_update");
            if update.get("status").is_none() {
                update["status"] = json!("pending");
            }
            self.report(session, &update);
        }
        let (over, earlier_title) = {
            let sink = lock(&self.sink);
            match sink.as_ref() {
                Some(s) if !s.over.is_cancelled() => (
                    s.over.clone(),
                    s.fold.call(&ask.tool_call_id).map(|c| c.title.clone()),
                ),
                // No turn, or a cancelled one: nothing may run.
                _ => return outcome(None),
            }
        };
        if ask.is_awtui_tool(&own_tools(), earlier_title.as_deref()) {
            return outcome(ask.option_for(Verdict::Allow));
        }
        let (tool, input) = ask.as_tool();
        let verdict = match (&self.host.approvals, self.host.permissions) {
            (Some(approvals), Permissions::Ask) => {
                let context = (!ask.title.is_empty()).then(|| ask.title.clone());
                let decision = approvals
                    .ask(
                        &self.host.agent,
                        &tool,
                        input,
                        Some(ask.tool_call_id.clone()),
                        context,
                        over.cancelled(),
                    )
                    .await;
                // Expired: the agent was stopped (or the instance ended)
                // while it waited; the stop may not have reached the
                // turn yet, and nothing may run.
                if over.is_cancelled() || decision.expired {
                    return outcome(None);
                }
                if decision.verdict != Verdict::Allow {
                    self.mark_denied();
                    lock(&self.notes).push(format!(
                        "{} (your request to run {} {:?})",
                        decision.message(),
                        decision.tool,
                        decision.subject
                    ));
                }
                decision.verdict
            }
            (_, permissions) => {
                let mut verdict = standing_verdict(permissions, &ask, &self.host.workspace);
                if verdict != Verdict::Allow && !self.host.tools.allow.is_empty() {
                    let (by_tools, _) = crate::approvals::rules::decide(
                        &self.host.tools,
                        &[],
                        &self.host.agent,
                        &tool,
                        &input,
                        Some(&self.host.workspace),
                    );
                    if by_tools == Verdict::Allow {
                        verdict = Verdict::Allow;
                    }
                }
                if verdict != Verdict::Allow
                    && let Some(s) = lock(&self.sink).as_mut()
                {
                    s.refused.push(tool);
                    s.denied = true;
                }
                verdict
            }
        };
        outcome(ask.option_for(verdict))
    }
}

/// A turn's bookkeeping at its end.
#[derive(Debug, Default)]
pub struct TurnEnd {
    /// Its text, calls and usage.
    pub fold: TurnFold,
    /// The calls the standing permissions refused.
    pub refused: Vec<String>,
    /// Whether any call was denied.
    pub denied: bool,
}

/// How a prompt ended.
#[derive(Debug)]
pub enum PromptEnd {
    /// The agent answered (`stopReason`, `usage`).
    Answered(Value),
    /// awtui cancelled it; `agent_stayed` when the agent ended the prompt
    /// in time (its process and session live on).
    Cancelled {
        agent_stayed: bool,
    },
    Failed(ConnError),
}

/// How long, after the agent closed its output, its exit status is
/// waited for (the watcher gives stderr 2 s after the exit).
const EXIT_WAIT: Duration = Duration::from_secs(5);

/// How long a cancelled prompt may take to end before the agent is ended
/// (the real agents take 0.04–0.25 s).
pub const CANCEL_WAIT: Duration = Duration::from_secs(5);

/// awtui's tool names (allowed without asking).
fn own_tools() -> Vec<&'static str> {
    static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    NAMES
        .get_or_init(|| crate::mcp::tools::specs().iter().map(|s| s.name).collect())
        .clone()
}

/// The last `n` lines of `text`.
fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

async fn write_lines(
    stdin: Option<tokio::process::ChildStdin>,
    mut lines: mpsc::UnboundedReceiver<String>,
) {
    let Some(mut stdin) = stdin else { return };
    while let Some(line) = lines.recv().await {
        if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
            break;
        }
    }
}

/// Reads the agent's messages until its stdout closes.
async fn read_lines(conn: Arc<Conn>, stdout: Option<tokio::process::ChildStdout>) {
    let Some(mut stdout) = stdout else {
        conn.die();
        return;
    };
    let mut split = LineSplitter::new(OUTPUT_CAP);
    let mut buf = vec![0u8; 64 * 1024];
    let mut lines = Vec::new();
    loop {
        let n = match stdout.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        split.feed(&buf[..n], &mut |l| lines.push(l));
        for line in lines.drain(..) {
            dispatch(&conn, &line);
        }
    }
    split.finish(&mut |l| lines.push(l));
    for line in lines.drain(..) {
        dispatch(&conn, &line);
    }
    // An agent that crashed closed its output as it exited: let the
    // watcher record how it ended (status, stderr) so the turn's failure
    // says why, unless it keeps running without output.
    let _ = tokio::time::timeout(EXIT_WAIT, conn.exited.cancelled()).await;
    conn.die();
}

fn dispatch(conn: &Arc<Conn>, line: &str) {
    if line.trim().is_empty() {
        return;
    }
    match wire::parse_line(line) {
        Ok(Incoming::Response { id, result }) => {
            if let Some(tx) = lock(&conn.pending).remove(&id) {
                let _ = tx.send(result);
            }
        }
        Ok(Incoming::Notification { method, params }) if method == "session/update" => {
            let session = params
                .get("sessionId")
                .and_then(Value::as_str)
                .unwrap_or("");
            if let Some(update) = params.get("update") {
                conn.report(session, update);
            }
        }
        Ok(Incoming::Notification { .. }) => {}
        Ok(Incoming::Request { id, method, params }) => {
            tokio::spawn(conn.clone().serve(id, method, params));
        }
        Err(e) => tracing::debug!(agent = %conn.host.agent, "acp: skipped a line: {e}"),
    }
}
