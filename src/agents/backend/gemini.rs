//! Gemini CLI (`gemini --output-format stream-json`): the prompt on stdin
//! (mentions escaped: it attaches `@word` files), its settings in a private
//! `GEMINI_CLI_HOME` outside the workspace: the user's own `settings.json`
//! with awtui's server and the agent's `mcp:` servers added. A system
//! settings file would be ignored unless root owns it and every folder
//! above it.

use std::path::PathBuf;

use serde_json::json;

use super::acp::AcpProgram;
use super::invocation::{
    AUTH_FROM_ENV, Invocation, MCP_SERVER_NAME, Mirror, PrivateFile, cli_model, combined_prompt,
    pairs,
};
use super::parse::{GeminiParser, StreamParser};
use super::{Backend, TurnRequest, env_var};
use crate::workflow::{BackendKind, McpServer, McpTransport, Permissions};

/// The Gemini CLI backend.
pub struct Gemini;

/// Gemini CLI's settings for an agent: the user's own settings (`user`,
/// the text of their `settings.json`, when any) with awtui's MCP server and
/// `extra` added; the user's own servers only when `keep_user` is set.
/// With no `url` (an ACP agent, which gets its servers in `session/new`)
/// no server is written, and only those servers are allowed.
pub fn gemini_settings(
    user: Option<&str>,
    url: &str,
    extra: &[McpServer],
    keep_user: bool,
) -> String {
    let mut root = user
        .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
        .filter(serde_json::Value::is_object)
        .unwrap_or_else(|| json!({}));
    if !keep_user || !root["mcpServers"].is_object() {
        root["mcpServers"] = json!({});
    }
    if !url.is_empty() {
        root["mcpServers"][MCP_SERVER_NAME] = json!({
            "httpUrl": url,
            "headers": { "Authorization": AUTH_FROM_ENV },
            "trust": true
        });
    }
    if !keep_user {
        // Only awtui's and the agent's servers, whatever other settings
        // (the project's `.gemini/settings.json`, extensions) add.
        if !root["mcp"].is_object() {
            root["mcp"] = json!({});
        }
        let mut allowed = vec![MCP_SERVER_NAME.to_string()];
        allowed.extend(extra.iter().map(|s| s.name.clone()));
        root["mcp"]["allowed"] = json!(allowed);
    }
    for s in extra.iter().filter(|_| !url.is_empty()) {
        root["mcpServers"][&s.name] = match &s.transport {
            McpTransport::Stdio { command, args, env } => json!({
                "command": command, "args": args, "env": pairs(env), "trust": true
            }),
            McpTransport::Http { url, headers } => json!({
                "httpUrl": url, "headers": pairs(headers), "trust": true
            }),
        };
    }
    serde_json::to_string_pretty(&root).unwrap_or_default()
}

/// Gemini's `--approval-mode` for `permissions:` (`default` asks).
fn approval_mode(p: Permissions) -> &'static str {
    match p {
        Permissions::ReadOnly | Permissions::Ask => "default",
        Permissions::WorkspaceWrite => "auto_edit",
        Permissions::Full => "yolo",
    }
}

/// Gemini's ACP session modes for `permissions:`.
fn gemini_modes(p: Permissions) -> &'static [&'static str] {
    match p {
        Permissions::ReadOnly | Permissions::Ask => &["default"],
        Permissions::WorkspaceWrite => &["autoEdit", "auto_edit"],
        Permissions::Full => &["yolo"],
    }
}

impl Gemini {
    /// A private `GEMINI_CLI_HOME` with the user's settings and awtui's
    /// server at `url` (none when empty), the user's folder linked in.
    fn private_home(&self, req: &TurnRequest, inv: &mut Invocation, url: &str) {
        let home = req.private_dir.join("gemini-home");
        inv.files.push(PrivateFile {
            path: home.join(".gemini").join("settings.json"),
            content: gemini_settings(
                req.user_config.as_deref(),
                url,
                &req.mcp_servers,
                req.keep_user_mcp,
            ),
        });
        inv.env
            .push(("GEMINI_CLI_HOME".into(), home.display().to_string()));
        if let Some(user_dir) = &req.user_config_dir {
            inv.mirror = Some(Mirror {
                from: user_dir.clone(),
                into: home.join(".gemini"),
            });
        }
    }
}

impl Backend for Gemini {
    /// `~/.gemini` (or `$GEMINI_CLI_HOME/.gemini`).
    fn state_dirs(&self, env: &[(String, String)]) -> Vec<PathBuf> {
        self.user_config_dir(env).into_iter().collect()
    }

    fn kind(&self) -> BackendKind {
        BackendKind::Gemini
    }

    fn program(&self, _command: Option<&[String]>) -> Option<String> {
        Some("gemini".into())
    }

    fn install_hint(&self) -> &'static str {
        "install Gemini CLI: npm install -g @google/gemini-cli"
    }

    fn reserved_flags(&self) -> &'static [&'static str] {
        &[
            "--output-format",
            "-o",
            "--approval-mode",
            "--yolo",
            "-y",
            "--model",
            "-m",
            "--resume",
            "-r",
            "--prompt",
            "-p",
            "--prompt-interactive",
            "-i",
            "--skip-trust",
        ]
    }

    fn needs_model(&self) -> bool {
        true
    }

    fn expands_at_mentions(&self) -> bool {
        true
    }

    fn parser(&self) -> Box<dyn StreamParser> {
        Box::new(GeminiParser::default())
    }

    /// `~/.gemini` (or `$GEMINI_CLI_HOME/.gemini`).
    fn user_config_dir(&self, env: &[(String, String)]) -> Option<PathBuf> {
        env_var(env, "GEMINI_CLI_HOME")
            .or_else(|| env_var(env, "HOME"))
            .map(|h| PathBuf::from(h).join(".gemini"))
    }

    /// The user's `settings.json`.
    fn user_config(&self, env: &[(String, String)]) -> Option<String> {
        let path = self.user_config_dir(env)?.join("settings.json");
        crate::fsutil::read_text_capped(&path, crate::fsutil::MAX_CONFIG_BYTES).ok()
    }

    fn tools_unsupported(&self) -> Option<&'static str> {
        Some(
            "Gemini CLI's --allowed-tools is deprecated in favour of its policy engine, which \
             awtui does not configure (permissions: sets --approval-mode; write a rule in \
             ~/.gemini/policies/ to allow a tool)",
        )
    }

    fn lists_tools_at_start(&self) -> bool {
        true
    }

    fn acp_program(&self) -> Option<AcpProgram> {
        Some(AcpProgram {
            program: Some("gemini"),
            adapter: false,
            hint: self.install_hint(),
            modes: gemini_modes,
            leaves_commands_on_cancel: false,
            session_model: None,
        })
    }

    /// `gemini --acp`: the approval mode and the model as flags, the
    /// user's settings (without their MCP servers unless kept) in a
    /// private home; it trusts the workspace and never relaunches itself.
    fn acp_invocation(&self, req: &TurnRequest) -> Option<Invocation> {
        let mut inv = Invocation::base(req, "gemini".into());
        self.private_home(req, &mut inv, "");
        inv.default_env(req, "GEMINI_CLI_TRUST_WORKSPACE", "true");
        inv.default_env(req, "GEMINI_CLI_NO_RELAUNCH", "true");
        inv.push(&["--acp", "--approval-mode", approval_mode(req.permissions)]);
        if let Some(m) = cli_model(req, Some("google/")) {
            inv.push(&["-m", &m]);
        }
        inv.args.extend(req.args.iter().cloned());
        Some(inv)
    }

    fn invocation(&self, req: &TurnRequest) -> Option<Invocation> {
        let mut inv = Invocation::base(req, "gemini".into());
        // Without a context the user's own settings are used as they are.
        if req.has_context() {
            self.private_home(req, &mut inv, &req.mcp_url);
        }
        // Else every turn starts a second node process of itself (~1 s).
        inv.default_env(req, "GEMINI_CLI_NO_RELAUNCH", "true");
        inv.push(&[
            "--output-format",
            "stream-json",
            "--approval-mode",
            approval_mode(req.permissions),
            "--skip-trust",
        ]);
        if let Some(m) = cli_model(req, Some("google/")) {
            inv.push(&["-m", &m]);
        }
        if let Some(id) = &req.session_id {
            inv.push(&["--resume", id]);
        }
        inv.args.extend(req.args.iter().cloned());
        inv.give_prompt(req, combined_prompt(req));
        Some(inv)
    }
}
