//! Backends: how one agent turn runs on Claude Code, Codex, Cursor, Gemini
//! CLI, opencode or any program, reporting structured events.
//!
//! The per-backend parts are pure ([`invocation`], [`parse`]); one process
//! runner ([`process`]) serves them all.

pub mod api;
pub mod capped;
pub mod contain;
pub mod cursor_config;
pub mod event;
pub mod invocation;
pub mod outcome;
pub mod parse;
pub mod process;
pub mod turn;

use std::path::{Path, PathBuf};

pub use event::{BackendEvent, Usage, UsageMode};
pub use invocation::{Invocation, invocation};
pub use outcome::TurnOutcome;
pub use turn::{RunningTurn, TurnUpdate};

use crate::workflow::{AgentDef, BackendKind};

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
    #[error("the {0} backend runs in-process, not as a program")]
    NotAProgram(&'static str),
}

/// How to install each agent CLI, for the "not found" error.
pub fn install_hint(kind: BackendKind) -> &'static str {
    match kind {
        BackendKind::Claude => "install Claude Code: npm install -g @anthropic-ai/claude-code",
        BackendKind::Codex => "install Codex: npm install -g @openai/codex",
        BackendKind::Cursor => {
            "install the Cursor CLI: curl https://cursor.com/install -fsS | bash"
        }
        BackendKind::Gemini => "install Gemini CLI: npm install -g @google/gemini-cli",
        BackendKind::Opencode => "install opencode: npm install -g opencode-ai",
        BackendKind::Command => {
            "check the agent's 'command:' (a relative path is taken from the workflow's folder)"
        }
        BackendKind::Anthropic | BackendKind::Openai => "",
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
    let model = agent.model.as_deref();
    let key = |backend: &'static str, default: &str| {
        let variable = agent.api_key_env.as_deref().unwrap_or(default);
        if std::env::var_os(variable).is_some_and(|v| !v.is_empty()) {
            Ok(())
        } else {
            Err(BackendError::MissingKey {
                backend,
                variable: variable.into(),
                hint: format!("export {variable}=…"),
            })
        }
    };
    let local = model.is_some_and(|m| m.starts_with("ollama/")) || agent.base_url.is_some();
    match agent.backend {
        BackendKind::Anthropic => key("anthropic", "ANTHROPIC_API_KEY"),
        BackendKind::Openai if local && agent.api_key_env.is_none() => Ok(()),
        BackendKind::Openai => key("openai", "OPENAI_API_KEY"),
        kind => {
            let program =
                invocation::executable(kind, agent.command.as_deref()).unwrap_or_default();
            // The agent's own PATH, when it sets one without templates.
            let path = agent
                .env
                .iter()
                .find(|(k, v)| k == "PATH" && !v.value.contains("${{"))
                .map(|(_, v)| v.value.as_str());
            match find_executable(&program, workdir, path) {
                Some(_) => Ok(()),
                None => Err(BackendError::NotInstalled {
                    program,
                    hint: install_hint(kind).into(),
                }),
            }
        }
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
            err.to_string()
                .contains("'./no-such-agent.sh' was not found"),
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
    }
}
