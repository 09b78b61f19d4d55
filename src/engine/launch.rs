//! Starting one agent turn: the prompt from the channel, the request for the
//! agent's backend, and the backend itself (a process or an API loop).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use std::collections::HashMap;

use crate::agents::runtime::{Local, Runtime, Sandboxed, ssh};

use serde_json::Value;

use crate::agents::backend::api::{NoTools, ToolExecutor, ToolResult, ToolSpec};
use crate::agents::backend::{self, BackendError, RunningTurn, TurnRequest};
use crate::agents::prompt::{PromptInput, Teammate, turn_prompt};
use crate::context::ChannelEntry;
use crate::context::SharedContext;
use crate::mcp::ToolBox;
use crate::workflow::setup::Prepared;
use crate::workflow::{AgentDef, ContextConfig, Workflow};

/// How many earlier channel messages a turn prompt quotes.
const RECENT_MESSAGES: usize = 12;

/// What every turn of this instance shares.
pub struct LaunchContext {
    pub workflow: Workflow,
    pub prepared: Prepared,
    pub context: SharedContext,
    pub tools: ToolBox,
    /// How agents reach the context (`None` with `context: false`: no
    /// tools, no MCP config, no AWTUI_MCP_URL or AWTUI_TOKEN).
    pub mcp: Option<McpAccess>,
    /// Per-agent folders (configs, logs, session ids) live under here.
    pub state_root: PathBuf,
    /// The worktrees of `workspace: worktree` agents, by agent.
    pub workspaces: crate::workspace::Workspaces,
    /// Where each agent runs: `None` here, else a host of `hosts:`.
    pub places: HashMap<String, Option<String>>,
    /// The hosts agents run on, connected at start (or why not).
    pub hosts: HashMap<String, Result<Arc<ssh::Connection>, String>>,
}

/// The context's MCP server as agents reach it.
pub struct McpAccess {
    /// Its streamable HTTP URL.
    pub url: String,
    /// Each agent's token (its identity).
    pub tokens: crate::mcp::Tokens,
}

impl LaunchContext {
    /// The private folder of `agent`.
    pub fn agent_dir(&self, agent: &str) -> PathBuf {
        agent_dir(&self.state_root, agent)
    }

    /// Where `agent` runs, as `awtui list` and the Agents pane say it.
    pub fn place_name(&self, agent: &AgentDef) -> String {
        match self.host_of(&agent.name) {
            Some(host) => host.to_string(),
            None if agent.sandbox.is_some() => "sandbox".into(),
            None => "local".into(),
        }
    }

    /// The host `agent` runs on, `None` for this machine.
    pub fn host_of(&self, agent: &str) -> Option<&str> {
        self.places.get(agent).and_then(|h| h.as_deref())
    }
}

/// `<state root>/agents/<agent>`.
pub fn agent_dir(state_root: &Path, agent: &str) -> PathBuf {
    state_root.join("agents").join(agent)
}

/// The context tools, run in-process as one agent (for API backends).
struct AgentTools {
    tools: ToolBox,
    agent: String,
}

impl ToolExecutor for AgentTools {
    fn specs(&self) -> Vec<ToolSpec> {
        crate::mcp::tools::specs()
            .into_iter()
            .map(|s| ToolSpec {
                name: s.name.to_string(),
                description: s.description.to_string(),
                input_schema: s.input_schema,
            })
            .collect()
    }

    fn call(&self, name: &str, arguments: &Value) -> ToolResult {
        match self
            .tools
            .call(&self.agent, name, arguments.as_object().cloned())
        {
            Ok(v) => ToolResult {
                content: v.to_string(),
                is_error: false,
            },
            Err(e) => ToolResult {
                content: e.to_string(),
                is_error: true,
            },
        }
    }
}

/// The prompt for a turn delivering `messages` to `agent`.
pub fn prompt_for(cx: &LaunchContext, agent: &str, messages: &[u64]) -> String {
    let (delivered, recent) = cx.context.read(|store| {
        let delivered: Vec<ChannelEntry> =
            messages.iter().filter_map(|id| store.entry(*id)).collect();
        // Messages put off until this wake were acknowledged before: the
        // recent ones quoted are those before the first new one.
        let acked = store.cursor(agent).map(|c| c.acked).unwrap_or(0);
        let first = messages
            .iter()
            .filter(|id| **id > acked)
            .min()
            .or(messages.iter().min())
            .copied()
            .unwrap_or(u64::MAX);
        let recent: Vec<ChannelEntry> = store
            .read(None, Some(RECENT_MESSAGES + messages.len()))
            .unwrap_or_default()
            .into_iter()
            .filter(|e| e.id < first && !messages.contains(&e.id))
            .collect();
        let skip = recent.len().saturating_sub(RECENT_MESSAGES);
        (delivered, recent[skip..].to_vec())
    });
    let team: Vec<Teammate> = cx
        .workflow
        .agents
        .iter()
        .map(|a| Teammate {
            name: a.name.clone(),
            backend: a.backend.name().to_string(),
        })
        .collect();
    let files = cx.workflow.context.files();
    let documents = files.map(|f| (f.document.as_str(), f.documents.as_slice()));
    let documents = match cx.workflow.context {
        ContextConfig::Disabled => None,
        _ => documents,
    };
    turn_prompt(&PromptInput {
        agent,
        workflow: &cx.workflow.name,
        team: &team,
        documents,
        delivered: &delivered,
        recent: &recent,
        tasks: cx.context.tasks().read(|s| s.has_tasks()),
        protocols: cx
            .workflow
            .agents
            .iter()
            .find(|a| a.name == agent)
            .map(|a| a.protocols)
            .unwrap_or_default(),
    })
}

/// The agent's environment: the workflow's `env:` plus `AWTUI_BIN`, so
/// scripts can call `"$AWTUI_BIN" ctx …` whether or not awtui is on PATH.
fn agent_env(cx: &LaunchContext, agent: &str) -> Vec<(String, String)> {
    let mut env = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        env.push(("AWTUI_BIN".to_string(), exe.display().to_string()));
    }
    env.extend(
        cx.prepared
            .agent_env
            .get(agent)
            .cloned()
            .unwrap_or_default(),
    );
    env
}

/// The `command` backend's program and arguments. An agent in a worktree
/// still runs the program the workflow names in the workflow's own folder
/// (`./agents/x.sh` need not be committed): a relative program path is made
/// absolute against that folder.
fn command_for(cx: &LaunchContext, agent: &AgentDef) -> Option<Vec<String>> {
    let mut command = agent.command.clone()?;
    // On another host the program is the one in its worktree there.
    if cx.workspaces.contains_key(&agent.name)
        && cx.host_of(&agent.name).is_none()
        && let Some(program) = command.first_mut()
        && program.contains('/')
        && Path::new(program.as_str()).is_relative()
    {
        *program = cx.workflow.base_dir.join(&*program).display().to_string();
    }
    Some(command)
}

/// The agent's private folder outside the workspace:
/// `<per-user state dir>/agents/<hash of the instance folder>/<agent>`,
/// made 0700, so config homes that lead to the user's credentials are out
/// of reach of every agent's file tools.
fn private_agent_dir(state_root: &Path, agent: &str) -> Result<PathBuf, BackendError> {
    let base = crate::instance::layout::state_dir().map_err(|e| BackendError::Io {
        path: state_root.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    })?;
    let root = crate::fsutil::private_dir(&base.join("agents")).map_err(|e| BackendError::Io {
        path: base.join("agents"),
        source: std::io::Error::other(e.to_string()),
    })?;
    Ok(root
        .join(crate::instance::layout::path_hash(state_root))
        .join(agent))
}

/// Starts a turn of `agent` on its backend.
pub fn start_turn(
    cx: &LaunchContext,
    agent: &AgentDef,
    messages: &[u64],
    session_id: Option<String>,
) -> Result<RunningTurn, BackendError> {
    let prompt = prompt_for(cx, &agent.name, messages);
    let system_prompt = cx
        .prepared
        .system_prompts
        .get(&agent.name)
        .cloned()
        .unwrap_or_default();
    let backend = backend::backend_for(agent.backend);
    let env = agent_env(cx, &agent.name);
    let mut req = TurnRequest {
        agent: agent.name.clone(),
        instance: cx.prepared.instance.clone(),
        backend: agent.backend,
        model: agent.model.clone(),
        system_prompt,
        prompt,
        session_id,
        mcp_url: cx.mcp.as_ref().map(|m| m.url.clone()).unwrap_or_default(),
        token: cx
            .mcp
            .as_ref()
            .and_then(|m| m.tokens.get(&agent.name))
            .unwrap_or_default()
            .to_string(),
        tools: agent.tools.clone(),
        command: command_for(cx, agent),
        env: env.clone(),
        workdir: cx
            .workspaces
            .get(&agent.name)
            .map_or_else(|| cx.workflow.base_dir.clone(), |w| w.workdir.clone()),
        state_dir: cx.agent_dir(&agent.name),
        // In-process backends need no config home.
        private_dir: if backend.in_process() {
            PathBuf::new()
        } else {
            private_agent_dir(&cx.state_root, &agent.name)?
        },
        user_config: backend.user_config(&env),
        user_config_dir: backend.user_config_dir(&env),
        permissions: agent.permissions,
        approval_timeout: cx
            .workflow
            .limits
            .approval_timeout
            .unwrap_or(crate::approvals::DEFAULT_TIMEOUT),
        args: agent.args.clone(),
        mcp_servers: agent.mcp.clone(),
        keep_user_mcp: agent.keep_user_mcp,
        user_mcp_servers: Vec::new(),
        base_url: agent.base_url.clone(),
        api_key_env: agent.api_key_env.clone(),
    };
    if !req.keep_user_mcp {
        req.user_mcp_servers = backend.user_mcp_servers(&env, &req.workdir);
    }
    let tools: Arc<dyn ToolExecutor> = match cx.mcp {
        Some(_) => Arc::new(AgentTools {
            tools: cx.tools.clone(),
            agent: agent.name.clone(),
        }),
        None => Arc::new(NoTools),
    };
    let runtime = runtime_for(cx, agent, &req);
    let drive = backend::acp::drive(agent, &req.workdir).map_err(BackendError::Unavailable)?;
    if drive == backend::acp::Drive::Acp {
        let acp = backend
            .acp_program()
            .ok_or(BackendError::NotAProgram(agent.backend.name()))?;
        let inv = backend
            .acp_invocation(&req)
            .ok_or(BackendError::NotAProgram(agent.backend.name()))?;
        let approvals = Some(cx.context.approvals().clone());
        return backend::acp::start(req, inv, acp, approvals, runtime.as_ref());
    }
    backend.start(req, tools, runtime.as_ref())
}

/// The connection `agent`'s turns run over, when it runs on a host that
/// connected: the engine asks it whether a failed turn lost it.
pub fn connection_of(cx: &LaunchContext, agent: &str) -> Option<Arc<ssh::Connection>> {
    let host = cx.host_of(agent)?;
    cx.hosts.get(host)?.as_ref().ok().cloned()
}

/// Where `agent`'s turn runs: on its host, confined when it is
/// sandboxed, else here.
fn runtime_for(cx: &LaunchContext, agent: &AgentDef, req: &TurnRequest) -> Box<dyn Runtime> {
    if let Some(host) = cx.host_of(&agent.name) {
        let conn = match cx.hosts.get(host) {
            Some(Ok(conn)) => conn.clone(),
            Some(Err(why)) => {
                return Box::new(ssh::Unreachable {
                    host: host.to_string(),
                    why: why.clone(),
                });
            }
            None => {
                return Box::new(ssh::Unreachable {
                    host: host.to_string(),
                    why: format!("host '{host}' is not connected"),
                });
            }
        };
        let Some(ws) = cx.workspaces.get(&agent.name) else {
            return Box::new(ssh::Unreachable {
                host: host.to_string(),
                why: format!(
                    "agent '{}' has no worktree to bring its turns back to",
                    agent.name
                ),
            });
        };
        // awtui's own git for the worktree the turn comes back to: located
        // by the repository's record and only while it is as awtui made it.
        let local = crate::workspace::Repo::at(&ws.repo).worktree_git(&ws.root, Some(&ws.base));
        let local_git = match local {
            Ok(git) => git.script_args(),
            Err(e) => {
                return Box::new(ssh::Unreachable {
                    host: host.to_string(),
                    why: e.to_string(),
                });
            }
        };
        return Box::new(ssh::Remote {
            conn,
            local_git,
            instance: cx.prepared.instance.clone(),
            instance_key: crate::instance::layout::path_hash(&cx.state_root)[..12].to_string(),
            agent: agent.name.clone(),
            state_dir: req.state_dir.clone(),
            private_dir: req.private_dir.clone(),
            local_worktree: ws.root.clone(),
        });
    }
    let Some(sandbox) = &agent.sandbox else {
        return Box::new(Local);
    };
    let backend = backend::backend_for(agent.backend);
    let cli_state = backend.state_dirs(&req.env);
    for dir in &cli_state {
        // Made now so the CLI can write them (a file such as
        // `~/.claude.json` is left to the CLI).
        if dir.extension().is_none() {
            let _ = std::fs::create_dir_all(dir);
        }
    }
    // Its own folder under the instance folder holds what awtui writes
    // for it before each turn (its MCP config, its system prompt): read,
    // never written, from inside.
    let mut writable = vec![req.workdir.clone()];
    if !req.private_dir.as_os_str().is_empty() {
        let _ = std::fs::create_dir_all(&req.private_dir);
        writable.push(req.private_dir.clone());
    }
    writable.extend(cli_state);
    writable.extend(sandbox.writable.iter().cloned());
    // Every token, every agent's configs and the person's control
    // secrets live in these; the agent's own folders are writable again
    // inside them.
    let mut hidden = crate::instance::layout::state_dirs();
    hidden.extend(crate::instance::layout::data_dir().ok());
    hidden.push(cx.state_root.join("agents"));
    hidden.push(crate::workspace::worktrees_root(
        &cx.workflow.base_dir,
        &cx.prepared.instance,
    ));
    hidden.extend(sandbox.hidden.iter().cloned());
    let mut readable = vec![cx.workflow.base_dir.clone()];
    readable.extend(awtui_binaries());
    Box::new(Sandboxed {
        writable,
        read_only: trusted_paths(cx, req),
        hidden,
        readable,
    })
}

/// awtui's own programs, which the agent runs as `$AWTUI_BIN` (`awtui
/// ctx`) and through its MCP config (`awtui mcp`, handed over to
/// `awtui-mcp` beside it): mounted back read-only into the sandbox, whose
/// private `/tmp` would hide them when awtui was built or installed there.
fn awtui_binaries() -> Vec<PathBuf> {
    let Ok(exe) = std::env::current_exe() else {
        return Vec::new();
    };
    let bridge = exe.with_file_name(crate::mcp::bridge::handover::BINARY);
    vec![exe, bridge]
}

/// What awtui trusts and a sandboxed agent must not write, even inside its
/// writable workspace: the repository's git dir (found from the workflow
/// folder upwards, and each worktree's repository as awtui recorded it),
/// the workflow file and every file it names (system prompts, programs of
/// `command:` and of `mcp:` servers, which unsandboxed agents may run), the
/// person's `config.toml`, awtui's folders in the
/// workflow folder (`.workflow/`) and the instance folder (the channel
/// journal and the documents, which change only through the MCP tools),
/// and the agent's own folder there.
fn trusted_paths(cx: &LaunchContext, req: &TurnRequest) -> Vec<PathBuf> {
    let wf = &cx.workflow;
    let mut paths = vec![
        wf.file.clone(),
        wf.base_dir.join(crate::fsutil::WORKFLOW_FOLDER),
        cx.state_root.clone(),
        req.state_dir.clone(),
    ];
    paths.extend(
        wf.base_dir
            .ancestors()
            .map(|d| d.join(".git"))
            .find(|g| g.symlink_metadata().is_ok()),
    );
    paths.extend(cx.workspaces.values().map(|ws| ws.repo.join(".git")));
    for agent in &wf.agents {
        if let crate::workflow::PromptSource::File(p) = &agent.prompt_source {
            paths.push(p.clone());
        }
        let servers = agent.mcp.iter().filter_map(|m| match &m.transport {
            crate::workflow::McpTransport::Stdio { command, .. } => Some(command),
            crate::workflow::McpTransport::Http { .. } => None,
        });
        let programs = agent
            .command
            .iter()
            .filter_map(|c| c.first())
            .chain(servers);
        for program in programs.filter(|p| p.contains('/')) {
            paths.push(wf.base_dir.join(program));
        }
    }
    paths.extend(crate::instance::layout::user_config_path());
    paths.sort();
    paths.dedup();
    paths
}
