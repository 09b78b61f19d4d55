//! Backends: how one agent turn runs on Claude Code, Codex, Cursor, Gemini
//! CLI, opencode or any program, reporting structured events.
//!
//! The per-backend parts are pure ([`invocation`], [`parse`]); one process
//! runner ([`process`]) serves them all.

pub mod acp;
pub mod api;
pub mod capped;
pub mod claude;
pub mod codex;
pub mod command;
pub mod contain;
pub mod cursor;
pub use crate::vocab::activity as event;
pub mod gemini;
pub mod invocation;
pub mod opencode;
pub mod outcome;
pub mod parse;
pub mod process;
pub mod turn;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use event::{BackendEvent, Usage, UsageMode};
pub use invocation::{Invocation, invocation};
pub use outcome::TurnOutcome;
pub use turn::{RunningTurn, TurnUpdate};

use crate::workflow::{AgentDef, BackendKind, McpServer};
use api::ToolExecutor;
use parse::StreamParser;

/// What one turn of one agent needs.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnRequest {
    pub agent: String,
    pub instance: String,
    pub backend: BackendKind,
    pub model: Option<String>,
    pub system_prompt: String,
    /// The turn's prompt: guide, delivered messages, recent context.
    pub prompt: String,
    /// The agent's previous conversation, to resume it.
    pub session_id: Option<String>,
    /// The context's MCP server; empty when the workflow shares no context
    /// (`context: false`): the turn then gets no MCP config and no
    /// AWTUI_MCP_URL, AWTUI_TOKEN or AWTUI_MCP_CONFIG.
    pub mcp_url: String,
    /// The agent's MCP bearer token (its identity).
    pub token: String,
    /// Extra tools to allow (the workflow's `tools:`).
    pub tools: Vec<String>,
    /// Program and arguments of the `command` backend.
    pub command: Option<Vec<String>>,
    pub env: Vec<(String, String)>,
    /// Where the agent works: the workflow file's folder.
    pub workdir: PathBuf,
    /// The agent's private folder in the instance: configs and logs.
    pub state_dir: PathBuf,
    /// The agent's private folder outside the workspace (per-user state
    /// dir): config homes that link to the user's credentials go here, out
    /// of reach of any CLI's file-attach feature.
    pub private_dir: PathBuf,
    /// The user's own config of this CLI, to merge awtui's server into
    /// (Gemini's `settings.json`, opencode's `OPENCODE_CONFIG_CONTENT`).
    pub user_config: Option<String>,
    /// The user's own config folder of this CLI (Gemini's `~/.gemini`),
    /// linked into the private config home.
    pub user_config_dir: Option<PathBuf>,
    /// What the CLI may do on its own (`permissions:`).
    pub permissions: crate::workflow::Permissions,
    /// How long an approval request may wait for the person
    /// (`limits.approval_timeout`): an asking CLI must wait as long.
    pub approval_timeout: std::time::Duration,
    /// The agent's extra CLI arguments (`args:`), after awtui's own.
    pub args: Vec<String>,
    /// Extra MCP servers next to awtui's (`mcp:`).
    pub mcp_servers: Vec<McpServer>,
    /// Keep the user's own configured MCP servers (`keep_user_mcp:`).
    pub keep_user_mcp: bool,
    /// The user's own MCP servers the CLI would load from its config files
    /// (turned off unless `keep_user_mcp`).
    pub user_mcp_servers: Vec<String>,
    /// API backends: the server's base URL (`base_url:`).
    pub base_url: Option<String>,
    /// API backends: the variable holding the key (`api_key_env:`).
    pub api_key_env: Option<String>,
}

impl TurnRequest {
    /// Whether the turn reaches a shared context (an MCP server).
    pub fn has_context(&self) -> bool {
        !self.mcp_url.is_empty()
    }
}

/// Why a backend cannot run.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("'{program}' was not found on PATH; {hint}")]
    NotInstalled { program: String, hint: String },
    /// A program named by its path (`./agent.sh`) that is not there.
    #[error(
        "'{program}' is not an executable file (a relative path is taken from the workflow's folder, {})",
        dir.display()
    )]
    NoSuchProgram { program: String, dir: PathBuf },
    #[error("{variable} is not set; the {backend} backend needs an API key ({hint})")]
    MissingKey {
        backend: &'static str,
        variable: String,
        hint: String,
    },
    #[error("cannot start {program}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Where it is to run cannot run it (bubblewrap missing, a host not
    /// reachable); the text says what and how to fix it.
    #[error("{0}")]
    Unavailable(String),
    #[error("the {0} backend runs in-process, not as a program")]
    NotAProgram(&'static str),
    /// One argument over the kernel's limit: the program only takes its
    /// prompt as an argument (Cursor) and this turn's is too big.
    #[error(
        "'{program}' takes its prompt as a command-line argument, and this turn's is {bytes} bytes: \
         over the {limit}-byte limit of one argument; shorten the kickoff or the messages to this agent, \
         or use a backend that reads the prompt from stdin"
    )]
    ArgumentTooLong {
        program: String,
        bytes: usize,
        limit: usize,
    },
}

/// The longest single argument Linux passes to a program (`MAX_ARG_STRLEN`,
/// 32 pages, the terminating NUL included).
pub const MAX_ARGUMENT: usize = 128 * 1024 - 1;

/// How a CLI receives its turn prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptTransport {
    /// On stdin, which is then closed: any size.
    Stdin,
    /// As the last argument: at most [`MAX_ARGUMENT`] bytes.
    Argument,
}

/// Everything awtui knows about one vendor's agent CLI (or API), so that
/// the engine, the loader and the process runner never branch on the
/// backend: adding a CLI is one file implementing this plus one line in
/// [`backend_for`].
pub trait Backend: Sync {
    /// The backend this implements.
    fn kind(&self) -> BackendKind;

    /// The executable it runs (`command`: the command's first word); `None`
    /// for in-process backends.
    fn program(&self, command: Option<&[String]>) -> Option<String>;

    /// What to do when [`program`](Backend::program) is not found.
    fn install_hint(&self) -> &'static str {
        ""
    }

    /// The flags awtui sets, which an agent's `args:` may not (they decide
    /// how awtui reads its output, reaches its tools, resumes it and what
    /// it may do).
    fn reserved_flags(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether the backend needs `model:`.
    fn needs_model(&self) -> bool {
        false
    }

    /// Whether it runs in-process (an API loop) rather than as a program:
    /// `args:` do not apply, `base_url:` and `api_key_env:` do.
    fn in_process(&self) -> bool {
        false
    }

    /// How the prompt reaches the program.
    fn prompt_transport(&self) -> PromptTransport {
        PromptTransport::Stdin
    }

    /// Whether the CLI expands `@word` in its prompt into a file's content
    /// (so awtui escapes mentions as `\@word`).
    fn expands_at_mentions(&self) -> bool {
        false
    }

    /// Whether extra MCP servers (`mcp:`) can be handed to it.
    fn supports_extra_mcp(&self) -> bool {
        true
    }

    /// `None` when the backend applies the agent's `tools:` (the CLI's own
    /// tools, by its names, allowed beyond what `permissions:` allows);
    /// otherwise why it cannot, for the warning `validate` gives at the
    /// list. A backend applies them only through a mechanism its CLI
    /// documents; none is guessed.
    fn tools_unsupported(&self) -> Option<&'static str> {
        Some("awtui knows no way to allow its tools by name")
    }

    /// The project file (relative to the workdir) the CLI reads its MCP
    /// servers from, which [`prepare_workdir`](Backend::prepare_workdir)
    /// changes; `None` when the CLI takes its config elsewhere.
    fn workdir_config(&self) -> Option<&'static str> {
        None
    }

    /// Changes the workdir's config before the first turn (Cursor's
    /// `.cursor/mcp.json`); `true` when something must be restored.
    fn prepare_workdir(
        &self,
        _workdir: &Path,
        _mcp_url: &str,
        _servers: &[McpServer],
    ) -> Result<bool, BackendError> {
        Ok(false)
    }

    /// Puts the workdir's config back as it was; `true` when it found
    /// something to restore (also after a crash).
    fn restore_workdir(&self, _workdir: &Path) -> Result<bool, BackendError> {
        Ok(false)
    }

    /// The user's own config of this CLI that awtui merges its server into
    /// (read from the agent's environment, then awtui's).
    fn user_config(&self, _env: &[(String, String)]) -> Option<String> {
        None
    }

    /// The names of the MCP servers the user configured for this CLI in
    /// files it reads on its own (so awtui can turn them off unless the
    /// agent keeps them); `workdir` is where the CLI will run.
    fn user_mcp_servers(&self, _env: &[(String, String)], _workdir: &Path) -> Vec<String> {
        Vec::new()
    }

    /// The user's own config folder of this CLI, linked into a private one.
    fn user_config_dir(&self, _env: &[(String, String)]) -> Option<PathBuf> {
        None
    }

    /// The folders (and files) the CLI writes its sessions, settings and
    /// caches to, which a sandboxed agent may still write so its
    /// conversation resumes.
    fn state_dirs(&self, _env: &[(String, String)]) -> Vec<PathBuf> {
        Vec::new()
    }

    /// Whether the CLI lists awtui's tools when it starts, so a successful
    /// turn in which awtui's server saw no tool listing from the agent ran
    /// without them (the server-side signal, for CLIs whose output does not
    /// say, or in addition to what it says).
    fn lists_tools_at_start(&self) -> bool {
        false
    }

    /// How to start one turn's process (`None` for in-process backends).
    fn invocation(&self, req: &TurnRequest) -> Option<Invocation>;

    /// How this vendor's CLI speaks the Agent Client Protocol, if it does
    /// (natively or through an adapter).
    fn acp_program(&self) -> Option<acp::AcpProgram> {
        None
    }

    /// The long-lived ACP process of an agent: program, flags,
    /// environment and private config files (its MCP servers come in
    /// `session/new`, not here). `None` when the CLI has no ACP.
    fn acp_invocation(&self, _req: &TurnRequest) -> Option<Invocation> {
        None
    }

    /// The parser of its output. Its
    /// [`tools_connected`](StreamParser::tools_connected) is what "awtui's
    /// tools are connected" looks like for this CLI.
    fn parser(&self) -> Box<dyn StreamParser> {
        Box::new(parse::PlainParser::default())
    }

    /// Checks before a start that the agent can run: its CLI is installed
    /// (or, for API backends, its key is set).
    fn preflight(&self, agent: &AgentDef, workdir: &Path) -> Result<(), BackendError> {
        let program = self.program(agent.command.as_deref()).unwrap_or_default();
        require_executable(program, workdir, agent.own_path(), self.install_hint())
    }

    /// Starts one turn. `tools` serves in-process backends; a CLI reaches
    /// the tools through the MCP server instead; `runtime` is where its
    /// process runs (in-process backends run here).
    fn start(
        &self,
        req: TurnRequest,
        _tools: Arc<dyn ToolExecutor>,
        runtime: &dyn crate::agents::runtime::Runtime,
    ) -> Result<RunningTurn, BackendError> {
        let inv = self
            .invocation(&req)
            .ok_or(BackendError::NotAProgram(self.kind().name()))?;
        let log = req.state_dir.join("stderr.log");
        process::spawn(inv, self.parser(), &log, None, self.install_hint(), runtime)
    }
}

/// The registry: the implementation of each backend.
pub fn backend_for(kind: BackendKind) -> &'static dyn Backend {
    match kind {
        BackendKind::Claude => &claude::Claude,
        BackendKind::Codex => &codex::Codex,
        BackendKind::Cursor => &cursor::Cursor,
        BackendKind::Gemini => &gemini::Gemini,
        BackendKind::Opencode => &opencode::Opencode,
        BackendKind::Command => &command::Command,
        BackendKind::Acp => &acp::Acp,
        BackendKind::Anthropic => &api::ANTHROPIC,
        BackendKind::Openai => &api::OPENAI,
    }
}

/// Every backend, for work that concerns them all (restoring configs).
pub fn all() -> impl Iterator<Item = &'static dyn Backend> {
    BackendKind::ALL.into_iter().map(|(k, _)| backend_for(k))
}

/// How to install each agent CLI, for the "not found" error.
pub fn install_hint(kind: BackendKind) -> &'static str {
    backend_for(kind).install_hint()
}

/// The user's servers to turn off for this turn: unless the agent keeps
/// them, every one that is not awtui's or one of the agent's `mcp:`.
pub fn servers_to_disable(req: &TurnRequest) -> Vec<&str> {
    if req.keep_user_mcp {
        return Vec::new();
    }
    req.user_mcp_servers
        .iter()
        .map(String::as_str)
        .filter(|n| {
            *n != invocation::MCP_SERVER_NAME && !req.mcp_servers.iter().any(|s| s.name == *n)
        })
        .collect()
}

/// A variable of the agent's environment (its `env:` first, then awtui's).
pub fn env_var(env: &[(String, String)], name: &str) -> Option<String> {
    env.iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var(name).ok())
        .filter(|v| !v.is_empty())
}

/// `$<var>` when set, else `$HOME/<default>` (a CLI's state folder).
pub fn env_dir_or_home(env: &[(String, String)], var: &str, default: &str) -> Option<PathBuf> {
    env_var(env, var)
        .map(PathBuf::from)
        .or_else(|| in_home(env, default))
}

/// `$HOME/<rel>` of the agent's environment.
pub fn in_home(env: &[(String, String)], rel: &str) -> Option<PathBuf> {
    env_var(env, "HOME").map(|h| PathBuf::from(h).join(rel))
}

/// Checks that `program` can be started (found as [`find_executable`]
/// finds it); the error names it and says how to install it (`hint`) or
/// where a relative path was looked for.
pub fn require_executable(
    program: String,
    workdir: &Path,
    path: Option<&str>,
    hint: &str,
) -> Result<(), BackendError> {
    match find_executable(&program, workdir, path) {
        Some(_) => Ok(()),
        None if program.contains('/') => Err(BackendError::NoSuchProgram {
            program,
            dir: workdir.to_path_buf(),
        }),
        None => Err(BackendError::NotInstalled {
            program,
            hint: hint.into(),
        }),
    }
}

/// Finds `program` the way a shell would: a path with `/` relative to
/// `workdir`, else each folder of `path` (the agent's own `PATH` when its
/// environment sets one, else awtui's).
pub fn find_executable(program: &str, workdir: &Path, path: Option<&str>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = workdir.join(program);
        return runnable(&p).then_some(p);
    }
    let paths = match path {
        Some(p) => Some(std::ffi::OsString::from(p)),
        None => std::env::var_os("PATH"),
    };
    paths
        .map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|dir| dir.join(program))
        .find(|p| runnable(p))
}

/// Checks before a start that an agent can run: its CLI is installed, or its
/// API key is set. The error says what to install or set.
pub fn preflight(agent: &AgentDef, workdir: &Path) -> Result<(), BackendError> {
    match acp::drive(agent, workdir).map_err(BackendError::Unavailable)? {
        acp::Drive::Acp => acp::preflight(agent, workdir),
        acp::Drive::Headless
            if agent.permissions == crate::workflow::Permissions::Ask
                && agent.backend != BackendKind::Claude =>
        {
            let hint = backend_for(agent.backend)
                .acp_program()
                .map_or("", |a| a.hint);
            Err(BackendError::Unavailable(format!(
                "permissions: ask needs {} over ACP, and its adapter was not found on PATH: {hint}",
                agent.backend.name()
            )))
        }
        acp::Drive::Headless => backend_for(agent.backend).preflight(agent, workdir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preflight_names_what_to_install() {
        let load = |yaml: &str| {
            crate::workflow::load_str(yaml, Path::new("/tmp/w.yaml"))
                .unwrap()
                .workflow
                .agents
                .remove(0)
        };
        let claude =
            load("agents:\n  a:\n    backend: claude\n    env:\n      PATH: /nonexistent\n");
        let err = preflight(&claude, Path::new("/")).unwrap_err().to_string();
        assert!(
            err.contains("'claude' was not found on PATH") && err.contains("npm install"),
            "{err}"
        );
        let script = load("agents:\n  a:\n    command: ./no-such-agent.sh\n");
        let err = preflight(&script, Path::new("/tmp")).unwrap_err();
        assert!(
            err.to_string().contains(
                "'./no-such-agent.sh' is not an executable file (a relative path is taken from the workflow's folder, /tmp)"
            ),
            "{err}"
        );
        preflight(&load("agents:\n  a:\n    command: sh\n"), Path::new("/tmp")).unwrap();
        preflight(
            &load("agents:\n  a:\n    model: ollama/llama3\n"),
            Path::new("/"),
        )
        .unwrap();
        let keyed = load(
            "agents:\n  a:\n    model: anthropic/x\n    api_key_env: AWTUI_TEST_NO_SUCH_KEY\n",
        );
        let err = preflight(&keyed, Path::new("/")).unwrap_err().to_string();
        assert!(err.contains("AWTUI_TEST_NO_SUCH_KEY is not set"), "{err}");
        // The agent's own env: may hold the key.
        let own = load(
            "agents:\n  a:\n    model: anthropic/x\n    api_key_env: AWTUI_TEST_NO_SUCH_KEY\n    env:\n      AWTUI_TEST_NO_SUCH_KEY: k\n",
        );
        preflight(&own, Path::new("/")).unwrap();
        let cfg = api::ApiConfig::with_env(
            BackendKind::Anthropic,
            "anthropic/x",
            None,
            Some("AWTUI_TEST_NO_SUCH_KEY"),
            &[("AWTUI_TEST_NO_SUCH_KEY".into(), "from-env".into())],
        );
        assert_eq!(cfg.api_key.as_deref(), Some("from-env"));
    }
}
