//! Claude Code (`claude -p --output-format stream-json`): the prompt on
//! stdin, the system prompt in a file, awtui's server (and the agent's
//! `mcp:` servers) from a generated `--mcp-config`.

use std::path::PathBuf;

use super::acp::AcpProgram;
use super::invocation::{Invocation, MCP_SERVER_NAME, PrivateFile, cli_model, mcp_config_path};
use super::parse::{StreamJsonParser, StreamParser};
use super::{Backend, TurnRequest};
use crate::workflow::{BackendKind, Permissions};

/// Claude Code's variable for how long it waits for an MCP tool call, in
/// milliseconds (60 s when unset).
pub const MCP_TOOL_TIMEOUT: &str = "MCP_TOOL_TIMEOUT";

/// How much longer than the approval timeout an asking Claude Code waits.
const ASK_MARGIN: std::time::Duration = std::time::Duration::from_secs(30);

/// The Claude Code backend.
pub struct Claude;

/// The adapter's session modes for `permissions:` (it starts in `auto`,
/// a classifier that decides without asking).
fn claude_modes(p: Permissions) -> &'static [&'static str] {
    match p {
        Permissions::Ask => &["default"],
        Permissions::ReadOnly => &["plan", "default"],
        Permissions::WorkspaceWrite => &["acceptEdits"],
        // 0.101 offers no bypass mode: in `default` it asks, and awtui
        // allows everything (never its `auto` classifier).
        Permissions::Full => &["bypassPermissions", "default"],
    }
}

impl Backend for Claude {
    /// `$CLAUDE_CONFIG_DIR` (default `~/.claude`) and `~/.claude.json`.
    fn state_dirs(&self, env: &[(String, String)]) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = super::env_dir_or_home(env, "CLAUDE_CONFIG_DIR", ".claude")
            .into_iter()
            .collect();
        dirs.extend(super::in_home(env, ".claude.json"));
        dirs
    }

    fn kind(&self) -> BackendKind {
        BackendKind::Claude
    }

    fn program(&self, _command: Option<&[String]>) -> Option<String> {
        Some("claude".into())
    }

    fn install_hint(&self) -> &'static str {
        "install Claude Code: npm install -g @anthropic-ai/claude-code"
    }

    fn reserved_flags(&self) -> &'static [&'static str] {
        &[
            "-p",
            "--print",
            "--output-format",
            "--input-format",
            "--verbose",
            "--mcp-config",
            "--strict-mcp-config",
            "--allowedTools",
            "--allowed-tools",
            "--permission-mode",
            "--dangerously-skip-permissions",
            "--permission-prompt-tool",
            "--append-system-prompt",
            "--append-system-prompt-file",
            "--model",
            "--resume",
            "-r",
            "--continue",
            "-c",
        ]
    }

    fn expands_at_mentions(&self) -> bool {
        true
    }

    /// Its `init` event lists each MCP server with its status.
    fn parser(&self) -> Box<dyn StreamParser> {
        Box::new(StreamJsonParser::default())
    }

    fn lists_tools_at_start(&self) -> bool {
        true
    }

    /// `tools:` join `--allowedTools`.
    fn tools_unsupported(&self) -> Option<&'static str> {
        None
    }

    fn acp_program(&self) -> Option<AcpProgram> {
        Some(AcpProgram {
            program: Some("claude-agent-acp"),
            adapter: true,
            hint: "install the Claude Code ACP adapter (node 22 or later): npm install -g @agentclientprotocol/claude-agent-acp",
            modes: claude_modes,
            leaves_commands_on_cancel: false,
            session_model: None,
        })
    }

    /// `claude-agent-acp`: the model in `ANTHROPIC_MODEL`, MCP servers
    /// connected before the first prompt and listed whole (its servers
    /// come in `session/new`; its permission mode is the session mode).
    fn acp_invocation(&self, req: &TurnRequest) -> Option<Invocation> {
        let mut inv = Invocation::base(req, "claude-agent-acp".into());
        if let Some(m) = cli_model(req, Some("anthropic/")) {
            inv.default_env(req, "ANTHROPIC_MODEL", &m);
        }
        inv.default_env(req, "MCP_CONNECTION_NONBLOCKING", "false");
        inv.default_env(req, "ENABLE_TOOL_SEARCH", "false");
        // Else one more model request after every turn, with tools offered.
        inv.default_env(req, "CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION", "false");
        inv.args.extend(req.args.iter().cloned());
        Some(inv)
    }

    fn invocation(&self, req: &TurnRequest) -> Option<Invocation> {
        let shared = req.has_context();
        let mut inv = Invocation::base(req, "claude".into());
        inv.push(&["-p", "--output-format", "stream-json", "--verbose"]);
        if shared {
            inv.push(&["--mcp-config", &mcp_config_path(req).display().to_string()]);
        }
        // Only awtui's server and the agent's `mcp:` (or none), unless the
        // agent keeps the user's own.
        if !req.keep_user_mcp {
            inv.args.push("--strict-mcp-config".into());
        }
        let mut allowed: Vec<String> = Vec::new();
        if shared {
            allowed.push(format!("mcp__{MCP_SERVER_NAME}"));
            allowed.extend(req.mcp_servers.iter().map(|s| format!("mcp__{}", s.name)));
        }
        allowed.extend(req.tools.iter().cloned());
        let mode = match req.permissions {
            Permissions::ReadOnly => "dontAsk",
            Permissions::WorkspaceWrite => "acceptEdits",
            Permissions::Full => "bypassPermissions",
            // Everything that would prompt goes to awtui's approval tool.
            Permissions::Ask => "default",
        };
        inv.push(&["--permission-mode", mode]);
        if req.permissions == Permissions::Ask && shared {
            inv.push(&[
                "--permission-prompt-tool",
                &format!(
                    "mcp__{MCP_SERVER_NAME}__{}",
                    crate::mcp::approval_tools::NAME
                ),
            ]);
            // Claude Code stops waiting for an MCP call after 60 s of its
            // own: the person's answer would reach nobody. It waits as
            // long as awtui does, and a little more, so awtui's timeout
            // answers first (the agent's own `env:` still wins).
            let wait = req.approval_timeout + ASK_MARGIN;
            inv.default_env(req, MCP_TOOL_TIMEOUT, &wait.as_millis().to_string());
        }
        if !allowed.is_empty() {
            inv.args.push("--allowedTools".into());
            inv.args.push(allowed.join(","));
        }
        if !req.system_prompt.is_empty() {
            // A file, not an argument: one argument may not exceed 128 KiB.
            let path = req.state_dir.join("system-prompt.md");
            inv.files.push(PrivateFile {
                path: path.clone(),
                content: req.system_prompt.clone(),
            });
            inv.push(&["--append-system-prompt-file", &path.display().to_string()]);
        }
        if let Some(m) = cli_model(req, Some("anthropic/")) {
            inv.push(&["--model", &m]);
        }
        if let Some(id) = &req.session_id {
            inv.push(&["--resume", id]);
        }
        inv.args.extend(req.args.iter().cloned());
        // Without these the first request can go out before the MCP server
        // is connected, or the tools hide behind a search tool. The agent's
        // own `env:` wins over these defaults.
        inv.default_env(req, "MCP_CONNECTION_NONBLOCKING", "false");
        inv.default_env(req, "ENABLE_TOOL_SEARCH", "false");
        inv.give_prompt(req, req.prompt.clone());
        Some(inv)
    }
}
