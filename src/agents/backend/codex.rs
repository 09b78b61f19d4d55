//! Codex (`codex exec --json … -`): the prompt on stdin, awtui's server and
//! the agent's `mcp:` servers as `-c mcp_servers.*` overrides, so no
//! project config is needed (Codex reads those only in trusted projects).

use std::path::{Path, PathBuf};

use super::acp::AcpProgram;
use super::invocation::{Invocation, MCP_SERVER_NAME, cli_model, combined_prompt};
use super::parse::{CodexParser, StreamParser};
use super::{Backend, TurnRequest, env_var, servers_to_disable};
use crate::workflow::{BackendKind, McpTransport, Permissions};

/// The Codex backend.
pub struct Codex;

/// A TOML string (JSON's string syntax is valid TOML).
fn toml_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// Name/value pairs as a TOML inline table.
fn toml_table(items: &[(String, String)]) -> String {
    let inner: Vec<String> = items
        .iter()
        .map(|(k, v)| format!("{} = {}", toml_str(k), toml_str(v)))
        .collect();
    format!("{{{}}}", inner.join(", "))
}

/// The `-c key=value` overrides for one server.
fn overrides(name: &str, settings: &[(&str, String)]) -> Vec<String> {
    settings
        .iter()
        .flat_map(|(key, value)| {
            [
                "-c".to_string(),
                format!("mcp_servers.{name}.{key}={value}"),
            ]
        })
        .collect()
}

/// The names of the MCP servers in the user's Codex `config.toml`.
pub fn user_servers(config: Option<&str>) -> Vec<String> {
    config
        .and_then(|t| t.parse::<toml::Table>().ok())
        .and_then(|t| t.get("mcp_servers")?.as_table().cloned())
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default()
}

/// codex-acp's session modes for `permissions:` (its default mode sends
/// approvals to Codex's own reviewer, not to awtui).
fn codex_modes(p: Permissions) -> &'static [&'static str] {
    match p {
        Permissions::ReadOnly => &["read-only"],
        Permissions::WorkspaceWrite | Permissions::Ask => &["workspace-write", "auto"],
        Permissions::Full => &["agent-full-access", "full-access"],
    }
}

impl Backend for Codex {
    /// `$CODEX_HOME` (default `~/.codex`).
    fn state_dirs(&self, env: &[(String, String)]) -> Vec<PathBuf> {
        super::env_dir_or_home(env, "CODEX_HOME", ".codex")
            .into_iter()
            .collect()
    }

    fn kind(&self) -> BackendKind {
        BackendKind::Codex
    }

    fn program(&self, _command: Option<&[String]>) -> Option<String> {
        Some("codex".into())
    }

    fn install_hint(&self) -> &'static str {
        "install Codex: npm install -g @openai/codex"
    }

    fn reserved_flags(&self) -> &'static [&'static str] {
        &[
            "exec",
            "--json",
            "--sandbox",
            "-s",
            "--model",
            "-m",
            "resume",
            "--dangerously-bypass-approvals-and-sandbox",
            "--full-auto",
        ]
    }

    /// awtui's server is `required`: Codex fails the turn when it cannot
    /// connect, so no separate signal is needed.
    fn parser(&self) -> Box<dyn StreamParser> {
        Box::new(CodexParser::default())
    }

    /// The servers of `$CODEX_HOME/config.toml` (default `~/.codex`).
    fn user_mcp_servers(&self, env: &[(String, String)], _workdir: &Path) -> Vec<String> {
        let home = env_var(env, "CODEX_HOME")
            .map(PathBuf::from)
            .or_else(|| env_var(env, "HOME").map(|h| PathBuf::from(h).join(".codex")));
        let text = home.and_then(|h| {
            crate::fsutil::read_text_capped(&h.join("config.toml"), crate::fsutil::MAX_CONFIG_BYTES)
                .ok()
        });
        user_servers(text.as_deref())
    }

    fn tools_unsupported(&self) -> Option<&'static str> {
        Some(
            "Codex has no per-tool allow list for its own tools (its --sandbox, which \
             permissions: sets, decides what commands may do)",
        )
    }

    fn lists_tools_at_start(&self) -> bool {
        true
    }

    fn acp_program(&self) -> Option<AcpProgram> {
        Some(AcpProgram {
            program: Some("codex-acp"),
            adapter: true,
            hint: "install the Codex ACP adapter (node 22 or later): npm install -g @agentclientprotocol/codex-acp",
            modes: codex_modes,
            leaves_commands_on_cancel: true,
            // It takes no flags: the agent's `model:` is set on the session.
            session_model: Some("openai/"),
        })
    }

    /// `codex-acp`: its servers come in `session/new`, its sandbox from
    /// the session mode, the agent's `model:` through `session/set_model`
    /// (it reads no flags); the provider is the user's Codex config
    /// (`CODEX_HOME`). In `workspace-write` Codex runs commands inside its
    /// own sandbox without asking and asks (awtui) for what leaves it:
    /// escalations, network, writes outside the workspace, MCP tools.
    fn acp_invocation(&self, req: &TurnRequest) -> Option<Invocation> {
        Some(Invocation::base(req, "codex-acp".into()))
    }

    fn invocation(&self, req: &TurnRequest) -> Option<Invocation> {
        let mut inv = Invocation::base(req, "codex".into());
        inv.push(&["exec", "--json", "--skip-git-repo-check"]);
        let sandbox = match req.permissions {
            // `ask` is refused by `validate` for codex; the safe side if reached.
            Permissions::ReadOnly | Permissions::Ask => "read-only",
            Permissions::WorkspaceWrite => "workspace-write",
            Permissions::Full => "danger-full-access",
        };
        inv.push(&["--sandbox", sandbox]);
        if req.has_context() {
            inv.args.extend(overrides(
                MCP_SERVER_NAME,
                &[
                    ("url", toml_str(&req.mcp_url)),
                    ("bearer_token_env_var", toml_str("AWTUI_TOKEN")),
                    ("required", "true".into()),
                    ("default_tools_approval_mode", toml_str("approve")),
                ],
            ));
            for server in &req.mcp_servers {
                let mut settings = match &server.transport {
                    McpTransport::Stdio { command, args, env } => {
                        let args: Vec<String> = args.iter().map(|a| toml_str(a)).collect();
                        vec![
                            ("command", toml_str(command)),
                            ("args", format!("[{}]", args.join(", "))),
                            ("env", toml_table(env)),
                        ]
                    }
                    McpTransport::Http { url, headers } => vec![
                        ("url", toml_str(url)),
                        ("http_headers", toml_table(headers)),
                    ],
                };
                settings.push(("default_tools_approval_mode", toml_str("approve")));
                inv.args.extend(overrides(&server.name, &settings));
            }
        }
        for name in servers_to_disable(req) {
            inv.args
                .extend(overrides(name, &[("enabled", "false".into())]));
        }
        if let Some(m) = cli_model(req, Some("openai/")) {
            inv.push(&["-m", &m]);
        }
        inv.args.extend(req.args.iter().cloned());
        if let Some(id) = &req.session_id {
            inv.push(&["resume", id]);
        }
        inv.args.push("-".into());
        inv.give_prompt(req, combined_prompt(req));
        Some(inv)
    }
}
