//! Agents over the Agent Client Protocol: Gemini CLI (`gemini --acp`),
//! opencode (`opencode acp`), Cursor (`cursor-agent acp`), Claude Code and
//! Codex through their adapters (`claude-agent-acp`, `codex-acp`), and any
//! other ACP agent (`backend: acp` with `command:`).
//!
//! One process and one session per agent live across turns ([`conn`]):
//! a wake is one `session/prompt`, its `session/update`s become awtui's
//! events ([`updates`]), its permission requests go to awtui's approvals
//! ([`permission`]), a stop is `session/cancel`, and after a restart the
//! saved session is loaded again where the agent can.
//!
//! Why not the `agent-client-protocol` crate: awtui uses six methods of
//! the protocol and must read whatever an agent sends as untrusted input
//! (lines cut at the output cap, garbage skipped, unknown updates and
//! fields of newer vendor versions ignored, ids echoed as sent). A typed
//! schema that rejects what it does not know would turn a vendor's new
//! field into a failed turn, and the crate would add its own runtime
//! glue and a dependency tree for what is ~300 lines of `serde_json`.

pub mod conn;
pub mod permission;
pub mod updates;
pub mod wire;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::invocation::{
    ESCAPE_NOTE, Invocation, MCP_SERVER_NAME, combined_prompt, escape_at_mentions,
};
use super::outcome::TurnOutcome;
use super::turn::{RunningTurn, TurnUpdate};
use super::{Backend, BackendError, BackendEvent, TurnRequest, backend_for, find_executable};
use crate::agents::runtime::{Launch, Runtime};
use crate::workflow::{
    AgentDef, AgentProtocol, BackendKind, HostChoice, McpTransport, Permissions,
};
use conn::{Conn, ConnError, Host, PromptEnd, SETUP_WAIT};

/// How one vendor's CLI speaks ACP.
#[derive(Clone, Copy, Debug)]
pub struct AcpProgram {
    /// The program (`None`: the agent's `command:`).
    pub program: Option<&'static str>,
    /// Whether it is an adapter installed beside the CLI (used only when
    /// found, unless `protocol: acp` asks for it).
    pub adapter: bool,
    /// How to install it.
    pub hint: &'static str,
    /// The session modes that match each `permissions:`, best first
    /// (chosen among those `session/new` offers).
    pub modes: fn(Permissions) -> &'static [&'static str],
    /// Whether the agent leaves a cancelled turn's commands running
    /// (codex-acp does): awtui then ends what the turn started.
    pub leaves_commands_on_cancel: bool,
    /// When the agent's `model:` is set on the session
    /// (`session/set_model`) rather than by a flag: the provider prefix to
    /// take off it (`openai/`).
    pub session_model: Option<&'static str>,
}

/// No preferred modes.
pub fn no_modes(_: Permissions) -> &'static [&'static str] {
    &[]
}

/// How an agent runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drive {
    /// Over ACP: one live process and session.
    Acp,
    /// One headless run of the CLI per turn.
    Headless,
}

impl Drive {
    /// As `validate`, the agents pane and `list --json` say it.
    pub fn name(self) -> &'static str {
        match self {
            Drive::Acp => "acp",
            Drive::Headless => "headless",
        }
    }
}

/// Which way `agent` runs: `backend: acp` always over ACP; `protocol:`
/// when written; otherwise ACP for CLIs that speak it natively, and for
/// Claude and Codex when their adapter is found on the agent's `PATH`;
/// headless on another host (ACP agents run here, sandboxed or not) and
/// for everything else. An error when what is written cannot run.
pub fn drive(agent: &AgentDef, workdir: &Path) -> Result<Drive, String> {
    let vendor = backend_for(agent.backend);
    let Some(acp) = vendor.acp_program() else {
        return Ok(Drive::Headless);
    };
    let remote = agent.host != HostChoice::Local;
    match (agent.backend, agent.protocol) {
        (BackendKind::Acp, _) | (_, Some(AgentProtocol::Acp)) if remote => Err(format!(
            "agent '{}' runs on another host, and ACP agents run on this machine (sandboxed or not); \
             use protocol: headless there",
            agent.name
        )),
        (BackendKind::Acp, _) | (_, Some(AgentProtocol::Acp)) => Ok(Drive::Acp),
        (_, Some(AgentProtocol::Headless)) => Ok(Drive::Headless),
        _ if remote => Ok(Drive::Headless),
        _ if !acp.adapter => Ok(Drive::Acp),
        _ => {
            let program = acp.program.unwrap_or_default();
            Ok(
                if find_executable(program, workdir, agent.own_path()).is_some() {
                    Drive::Acp
                } else {
                    Drive::Headless
                },
            )
        }
    }
}

/// How `agent` is driven, as `validate`, the agents pane and `list
/// --json` say it: `acp` or `headless`, empty for in-process API agents
/// and plain programs (`command:`).
pub fn protocol_name(agent: &AgentDef, workdir: &Path) -> String {
    let vendor = backend_for(agent.backend);
    if vendor.in_process() || agent.backend == BackendKind::Command {
        return String::new();
    }
    drive(agent, workdir).map_or("acp", Drive::name).to_string()
}

/// The ACP program of `agent` (its `command:`'s first word for
/// `backend: acp`).
pub fn program_of(agent: &AgentDef) -> Option<String> {
    let acp = backend_for(agent.backend).acp_program()?;
    match acp.program {
        Some(p) => Some(p.to_string()),
        None => agent.command.as_ref()?.first().cloned(),
    }
}

/// Checks before a start that an agent driven over ACP can run.
pub fn preflight(agent: &AgentDef, workdir: &Path) -> Result<(), BackendError> {
    let acp = backend_for(agent.backend)
        .acp_program()
        .ok_or(BackendError::NotAProgram(agent.backend.name()))?;
    let program = program_of(agent).unwrap_or_default();
    super::require_executable(program, workdir, agent.own_path(), acp.hint)
}

/// The live agents of this awtui process, by their private folder.
fn live() -> &'static Mutex<HashMap<PathBuf, Arc<Conn>>> {
    static LIVE: std::sync::OnceLock<Mutex<HashMap<PathBuf, Arc<Conn>>>> =
        std::sync::OnceLock::new();
    LIVE.get_or_init(Default::default)
}

fn live_conn(key: &Path) -> Option<Arc<Conn>> {
    let mut map = live().lock().unwrap_or_else(|p| p.into_inner());
    match map.get(key) {
        Some(c) if !c.is_dead() => Some(c.clone()),
        Some(_) => {
            map.remove(key);
            None
        }
        None => None,
    }
}

fn forget(key: &Path, conn: &Arc<Conn>) {
    let mut map = live().lock().unwrap_or_else(|p| p.into_inner());
    if map.get(key).is_some_and(|c| Arc::ptr_eq(c, conn)) {
        map.remove(key);
    }
}

/// Leaves a note for the next prompt of the live agent whose private
/// folder is `state_dir` (none when it has no live process: a headless
/// agent's next prompt is built anew).
pub fn note(state_dir: &Path, text: &str) {
    if let Some(c) = live_conn(state_dir) {
        c.add_note(text.to_string());
    }
}

/// Ends every live agent under `root` (the instance ends).
pub async fn end_all_under(root: &Path) {
    let conns: Vec<Arc<Conn>> = {
        let mut map = live().lock().unwrap_or_else(|p| p.into_inner());
        let keys: Vec<PathBuf> = map
            .keys()
            .filter(|k| k.starts_with(root))
            .cloned()
            .collect();
        keys.iter().filter_map(|k| map.remove(k)).collect()
    };
    for c in conns {
        c.end().await;
    }
}

/// Each agent's turns, one at a time: a wake right after a cancel waits
/// until the cancelled prompt has ended (or its agent was ended), so two
/// prompts never share one connection's turn state.
fn turn_lock(key: &Path) -> Arc<tokio::sync::Mutex<()>> {
    static LOCKS: std::sync::OnceLock<Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>> =
        std::sync::OnceLock::new();
    LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(key.to_path_buf())
        .or_default()
        .clone()
}

/// The live agent of `key`, or a new process started from `launch`.
fn connect(
    key: &Path,
    launch: &Launch,
    host: &Host,
    log: &Path,
) -> Result<Arc<Conn>, BackendError> {
    if let Some(c) = live_conn(key) {
        return Ok(c);
    }
    let c = Conn::spawn(launch, host.clone(), log.to_path_buf())?;
    live()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key.to_path_buf(), c.clone());
    Ok(c)
}

/// Starts one turn of an agent over ACP: its live process (started now
/// if it has none), its session (made, or loaded after a restart), one
/// prompt. `inv` starts the process when there is none (made ready by the
/// runtime every turn, so a process that died while the previous turn
/// ended can be replaced).
pub fn start(
    req: TurnRequest,
    inv: Invocation,
    acp: AcpProgram,
    approvals: Option<crate::approvals::Approvals>,
    runtime: &dyn Runtime,
) -> Result<RunningTurn, BackendError> {
    let key = req.state_dir.clone();
    let launch = runtime.prepare(inv, acp.hint)?;
    let host = Host {
        agent: req.agent.clone(),
        permissions: req.permissions,
        workspace: req.workdir.clone(),
        approvals,
        tools: crate::approvals::RuleSet {
            allow: req
                .tools
                .iter()
                .filter_map(|t| crate::approvals::rules::Rule::parse(t).ok())
                .collect(),
            ..Default::default()
        },
    };
    let log = req.state_dir.join("stderr.log");
    let first = connect(&key, &launch, &host, &log)?;
    let (tx, rx) = mpsc::unbounded_channel();
    let (stop_tx, stop_rx) = oneshot::channel();
    let pid = first.pid;
    tokio::spawn(async move {
        let lock = turn_lock(&key);
        let _one_at_a_time = lock.lock().await;
        // The previous turn may have ended the agent meanwhile.
        let conn = match first.is_dead() {
            false => Ok(first),
            true => connect(&key, &launch, &host, &log),
        };
        let outcome = match conn {
            Ok(conn) => {
                let outcome = turn(&conn, &req, acp, &tx, stop_rx).await;
                if conn.is_dead() {
                    forget(&key, &conn);
                }
                outcome
            }
            Err(e) => failed(e.to_string(), req.session_id.clone()),
        };
        let _ = tx.send(TurnUpdate::Done(outcome));
    });
    Ok(RunningTurn::new(Some(pid), rx, stop_tx))
}

async fn turn(
    conn: &Arc<Conn>,
    req: &TurnRequest,
    acp: AcpProgram,
    tx: &mpsc::UnboundedSender<TurnUpdate>,
    mut stop: oneshot::Receiver<()>,
) -> TurnOutcome {
    let session = tokio::select! {
        s = session(conn, req, acp) => s,
        _ = &mut stop => Err(ConnError::Gone("stopped".into())),
    };
    let (session, loaded_note) = match session {
        Ok(s) => s,
        Err(e) => {
            conn.end().await;
            return failed(e.to_string(), None);
        }
    };
    let _ = tx.send(TurnUpdate::Event(BackendEvent::Session {
        id: session.clone(),
    }));
    let first = conn.fresh.swap(false, std::sync::atomic::Ordering::Relaxed);
    let mut notes = conn.take_notes();
    notes.extend(loaded_note);
    let text = prompt_text(req, first, &notes);
    let before = if acp.leaves_commands_on_cancel {
        conn.members().await
    } else {
        Vec::new()
    };
    let end = conn.prompt(&session, text, tx.clone(), &mut stop).await;
    if let PromptEnd::Answered(result) = &end {
        conn.prompt_usage(result);
    }
    let conn::TurnEnd {
        fold,
        refused,
        denied,
    } = conn.finish_turn().unwrap_or_default();
    let (answer, truncated) = fold.answer();
    let mut outcome = TurnOutcome {
        answer: (!answer.is_empty()).then(|| answer.to_string()),
        session_id: Some(session),
        usage: fold.usage(),
        truncated,
        refused,
        ..TurnOutcome::default()
    };
    let error = match end {
        PromptEnd::Answered(result) => {
            match result
                .get("stopReason")
                .and_then(Value::as_str)
                .unwrap_or("end_turn")
            {
                "refusal" => Some("the model refused to go on".to_string()),
                // Codex ends its turn so when a call was denied: the turn
                // is over, not failed (the reason goes with the next prompt).
                "cancelled" if denied => None,
                "cancelled" => Some("the agent cancelled the turn".to_string()),
                _ => None,
            }
        }
        PromptEnd::Cancelled { agent_stayed } => {
            if agent_stayed && acp.leaves_commands_on_cancel {
                conn.end_started_since(&before).await;
            }
            Some("cancelled (session/cancel)".to_string())
        }
        PromptEnd::Failed(e) => Some(e.to_string()),
    };
    outcome.success = error.is_none();
    outcome.error = error.map(|e| crate::sanitize::for_terminal(&e));
    outcome
}

fn failed(error: String, session_id: Option<String>) -> TurnOutcome {
    TurnOutcome {
        success: false,
        error: Some(crate::sanitize::for_terminal(&error)),
        session_id,
        ..TurnOutcome::default()
    }
}

/// The session of the agent: the live one, the saved one loaded again
/// (after awtui restarted), or a new one. Also a note for the prompt
/// when the saved one could not be loaded.
async fn session(
    conn: &Arc<Conn>,
    req: &TurnRequest,
    acp: AcpProgram,
) -> Result<(String, Option<String>), ConnError> {
    if let Some(s) = conn
        .session
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
    {
        return Ok((s, None));
    }
    let init = conn
        .call(
            "initialize",
            json!({
                "protocolVersion": wire::PROTOCOL_VERSION,
                "clientCapabilities": {
                    "fs": {"readTextFile": false, "writeTextFile": false},
                    "terminal": false
                },
                "clientInfo": {"name": "awtui", "version": env!("CARGO_PKG_VERSION")}
            }),
            Some(SETUP_WAIT),
        )
        .await?;
    let can_load = init
        .pointer("/agentCapabilities/loadSession")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let cwd = req.workdir.display().to_string();
    let servers = mcp_servers(req);
    let mut note = None;
    if let Some(id) = req.session_id.as_deref().filter(|_| can_load) {
        let loaded = conn
            .call(
                "session/load",
                json!({"sessionId": id, "cwd": cwd, "mcpServers": servers}),
                Some(SETUP_WAIT),
            )
            .await;
        match loaded {
            Ok(result) => {
                set_mode(conn, id, &result, req.permissions, acp).await;
                set_model(conn, id, &result, req, acp).await;
                *conn.session.lock().unwrap_or_else(|p| p.into_inner()) = Some(id.to_string());
                return Ok((id.to_string(), None));
            }
            Err(ConnError::Rpc { error, .. }) => {
                note = Some(format!(
                    "Your earlier conversation could not be loaded ({}); this is a new one: read the channel and the documents again for what happened before.",
                    crate::sanitize::for_terminal(&error.message)
                ));
            }
            Err(e) => return Err(e),
        }
    }
    let made = conn
        .call(
            "session/new",
            json!({"cwd": cwd, "mcpServers": servers}),
            Some(SETUP_WAIT),
        )
        .await?;
    let Some(id) = made.get("sessionId").and_then(Value::as_str) else {
        return Err(ConnError::Gone(
            "the agent answered session/new without a sessionId".into(),
        ));
    };
    let id = updates::short(id);
    set_mode(conn, &id, &made, req.permissions, acp).await;
    set_model(conn, &id, &made, req, acp).await;
    *conn.session.lock().unwrap_or_else(|p| p.into_inner()) = Some(id.clone());
    conn.fresh.store(true, std::sync::atomic::Ordering::Relaxed);
    Ok((id, note))
}

/// Sets the agent's `model:` on the session, for agents that take it
/// there, when it is not the current one.
async fn set_model(
    conn: &Arc<Conn>,
    session: &str,
    result: &Value,
    req: &TurnRequest,
    acp: AcpProgram,
) {
    let Some(prefix) = acp.session_model else {
        return;
    };
    let Some(model) = super::invocation::cli_model(req, Some(prefix)) else {
        return;
    };
    let current = result
        .pointer("/models/currentModelId")
        .and_then(Value::as_str);
    if current == Some(model.as_str()) {
        return;
    }
    let set = conn
        .call(
            "session/set_model",
            json!({"sessionId": session, "modelId": model}),
            Some(SETUP_WAIT),
        )
        .await;
    if let Err(e) = set {
        tracing::warn!("acp: could not set model {model}: {e}");
    }
}

/// Switches the session to the mode that matches `permissions`, when the
/// agent offers one and is not in it already.
async fn set_mode(
    conn: &Arc<Conn>,
    session: &str,
    result: &Value,
    permissions: Permissions,
    acp: AcpProgram,
) {
    let offered: Vec<&str> = result
        .pointer("/modes/availableModes")
        .and_then(Value::as_array)
        .map(|m| m.iter().filter_map(|m| m.get("id")?.as_str()).collect())
        .unwrap_or_default();
    let current = result
        .pointer("/modes/currentModeId")
        .and_then(Value::as_str);
    let Some(want) = (acp.modes)(permissions)
        .iter()
        .find(|m| offered.contains(m))
    else {
        return;
    };
    if current == Some(*want) {
        return;
    }
    let set = conn
        .call(
            "session/set_mode",
            json!({"sessionId": session, "modeId": want}),
            Some(SETUP_WAIT),
        )
        .await;
    if let Err(e) = set {
        tracing::warn!("acp: could not set mode {want}: {e}");
    }
}

/// awtui's MCP server (with the agent's own token) and the agent's
/// `mcp:` servers, as ACP's `mcpServers` lists them.
pub fn mcp_servers(req: &TurnRequest) -> Value {
    if !req.has_context() {
        return json!([]);
    }
    let header = |k: &str, v: &str| json!({"name": k, "value": v});
    let mut servers = vec![json!({
        "type": "http",
        "name": MCP_SERVER_NAME,
        "url": req.mcp_url,
        "headers": [header("Authorization", &format!("Bearer {}", req.token))],
    })];
    for s in &req.mcp_servers {
        servers.push(match &s.transport {
            McpTransport::Stdio { command, args, env } => json!({
                "name": s.name,
                "command": command,
                "args": args,
                "env": env.iter().map(|(k, v)| header(k, v)).collect::<Vec<_>>(),
            }),
            McpTransport::Http { url, headers } => json!({
                "type": "http",
                "name": s.name,
                "url": url,
                "headers": headers.iter().map(|(k, v)| header(k, v)).collect::<Vec<_>>(),
            }),
        });
    }
    Value::Array(servers)
}

/// The turn's prompt: on a new session with the system prompt before it
/// (a warm or loaded session has it already); what awtui has to tell the
/// agent first (a denial's reason: ACP has no field for it); mentions
/// escaped for CLIs that would read `@word` as a file.
pub fn prompt_text(req: &TurnRequest, first: bool, notes: &[String]) -> String {
    let body = if first {
        combined_prompt(req)
    } else {
        req.prompt.clone()
    };
    let mut text = String::new();
    if !notes.is_empty() {
        text.push_str("Notes from awtui since your last turn:\n");
        for n in notes {
            text.push_str("- ");
            text.push_str(n);
            text.push('\n');
        }
        text.push('\n');
    }
    text.push_str(&body);
    if backend_for(req.backend).expands_at_mentions() {
        format!("{}\n\n{ESCAPE_NOTE}", escape_at_mentions(&text))
    } else {
        text
    }
}

/// The generic ACP backend (`backend: acp`): the agent is `command:`.
pub struct Acp;

/// Modes of agents awtui knows nothing about: the asking one if offered.
fn generic_modes(p: Permissions) -> &'static [&'static str] {
    match p {
        Permissions::Ask => &["default", "ask"],
        _ => &[],
    }
}

impl Backend for Acp {
    fn kind(&self) -> BackendKind {
        BackendKind::Acp
    }

    fn program(&self, command: Option<&[String]>) -> Option<String> {
        command?.first().cloned()
    }

    fn install_hint(&self) -> &'static str {
        "check the agent's 'command:' (an ACP agent such as 'gemini --acp'; a relative path is taken from the workflow's folder)"
    }

    fn tools_unsupported(&self) -> Option<&'static str> {
        Some(
            "an ACP agent's own tools are its own; permissions: ask and approve: rules decide what runs",
        )
    }

    fn acp_program(&self) -> Option<AcpProgram> {
        Some(AcpProgram {
            program: None,
            adapter: false,
            hint: "check the agent's 'command:' (a relative path is taken from the workflow's folder)",
            modes: generic_modes,
            leaves_commands_on_cancel: false,
            session_model: None,
        })
    }

    fn acp_invocation(&self, req: &TurnRequest) -> Option<Invocation> {
        let command = req.command.as_ref()?;
        let mut inv = Invocation::base(req, command.first()?.clone());
        inv.args.extend(command.iter().skip(1).cloned());
        Some(inv)
    }

    fn invocation(&self, _req: &TurnRequest) -> Option<Invocation> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(yaml: &str) -> AgentDef {
        crate::workflow::load_str(yaml, Path::new("/tmp/w.yaml"))
            .unwrap()
            .workflow
            .agents
            .remove(0)
    }

    #[test]
    fn which_way_each_agent_runs() {
        let dir = Path::new("/");
        let d = |y: &str| drive(&agent(y), dir);
        assert_eq!(
            d("agents:\n  a:\n    backend: acp\n    command: [x]\n"),
            Ok(Drive::Acp)
        );
        assert_eq!(
            d("agents:\n  a:\n    backend: gemini\n    model: m\n"),
            Ok(Drive::Acp)
        );
        assert_eq!(
            d("agents:\n  a:\n    backend: gemini\n    model: m\n    protocol: headless\n"),
            Ok(Drive::Headless)
        );
        // No adapter on this PATH: headless unless asked.
        let no_path = "    env:\n      PATH: /nonexistent\n";
        assert_eq!(
            d(&format!("agents:\n  a:\n    backend: codex\n{no_path}")),
            Ok(Drive::Headless)
        );
        assert_eq!(
            d(&format!(
                "agents:\n  a:\n    backend: codex\n    protocol: acp\n{no_path}"
            )),
            Ok(Drive::Acp)
        );
        assert_eq!(
            d("agents:\n  a:\n    model: anthropic/x\n"),
            Ok(Drive::Headless)
        );
    }

    #[test]
    fn the_prompt_carries_the_system_prompt_once_and_the_notes() {
        let mut req = crate::agents::backend::invocation::tests_support::request(BackendKind::Acp);
        req.system_prompt = "SYS".into();
        req.prompt = "do it".into();
        assert!(prompt_text(&req, true, &[]).starts_with("SYS"));
        let later = prompt_text(&req, false, &["Denied by alice: too risky.".into()]);
        assert!(!later.contains("SYS") && later.contains("too risky") && later.ends_with("do it"));
    }

    #[test]
    fn awtuis_server_carries_the_agents_own_token() {
        let mut req = crate::agents::backend::invocation::tests_support::request(BackendKind::Acp);
        req.mcp_url = "http://127.0.0.1:9/mcp".into();
        req.token = "tok".into();
        let s = mcp_servers(&req);
        assert_eq!(s[0]["name"], "awtui");
        assert_eq!(s[0]["headers"][0]["value"], "Bearer tok");
    }
}
