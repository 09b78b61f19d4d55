//! opencode (`opencode run --format json`): the prompt on stdin, awtui's
//! server, the agent's `mcp:` servers and its permissions in
//! `OPENCODE_CONFIG_CONTENT`, which opencode merges over the user's own
//! config files.

use serde_json::json;

use super::invocation::{Invocation, MCP_SERVER_NAME, cli_model, combined_prompt};
use super::parse::{OpencodeParser, StreamParser};
use std::path::{Path, PathBuf};

use super::acp::{AcpProgram, no_modes};
use super::{Backend, TurnRequest, env_var, servers_to_disable};
use crate::workflow::{BackendKind, McpServer, McpTransport, Permissions};

/// The opencode backend.
pub struct Opencode;

/// opencode's inline config: the user's own inline config (`user`) with
/// awtui's MCP server (none when `url` is empty: no context), the token
/// read from the environment, the agent's `extra` servers, its
/// permissions and its `tools` (allowed by name). The user's own inline servers are dropped unless
/// `keep_user`.
#[allow(clippy::too_many_arguments)]
pub fn opencode_config(
    user: Option<&str>,
    url: &str,
    permissions: Permissions,
    tools: &[String],
    extra: &[McpServer],
    keep_user: bool,
    disable: &[&str],
) -> String {
    let mut root = user
        .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
        .filter(serde_json::Value::is_object)
        .unwrap_or_else(|| json!({}));
    if !keep_user || !root["mcp"].is_object() {
        root["mcp"] = json!({});
    }
    // The user's servers from their config files, turned off (opencode
    // merges this config over theirs).
    for name in disable {
        root["mcp"][*name] = json!({ "enabled": false });
    }
    // The agent's `permissions:` decide edits and shell commands.
    let (edit, bash) = match permissions {
        // Only over ACP can opencode ask (headless, `validate` refuses it).
        Permissions::Ask => ("ask", "ask"),
        Permissions::ReadOnly => ("deny", "deny"),
        Permissions::WorkspaceWrite => ("allow", "deny"),
        Permissions::Full => ("allow", "allow"),
    };
    if !root["permission"].is_object() {
        root["permission"] = json!({});
    }
    root["permission"]["edit"] = json!(edit);
    root["permission"]["bash"] = json!(bash);
    // The agent's `tools:` (opencode's tool names: bash, edit, webfetch, …)
    // are allowed on top, as Claude's --allowedTools allows them.
    for tool in tools {
        root["permission"][tool.as_str()] = json!("allow");
    }
    if !url.is_empty() {
        root["mcp"][MCP_SERVER_NAME] = json!({
            "type": "remote",
            "url": url,
            "enabled": true,
            "headers": { "Authorization": "Bearer {env:AWTUI_TOKEN}" }
        });
        for s in extra {
            root["mcp"][&s.name] = match &s.transport {
                McpTransport::Stdio { command, args, env } => {
                    let mut cmd = vec![command.clone()];
                    cmd.extend(args.iter().cloned());
                    json!({
                        "type": "local",
                        "command": cmd,
                        "environment": super::invocation::pairs(env),
                        "enabled": true
                    })
                }
                McpTransport::Http { url, headers } => json!({
                    "type": "remote",
                    "url": url,
                    "headers": super::invocation::pairs(headers),
                    "enabled": true
                }),
            };
        }
    }
    root.to_string()
}

/// The names under `mcp` in an opencode config file.
fn server_names(text: &str) -> Vec<String> {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| {
            v.get("mcp")?
                .as_object()
                .map(|m| m.keys().cloned().collect())
        })
        .unwrap_or_default()
}

impl Backend for Opencode {
    /// opencode's data, state, cache and config folders (XDG).
    fn state_dirs(&self, env: &[(String, String)]) -> Vec<PathBuf> {
        [
            ("XDG_DATA_HOME", ".local/share"),
            ("XDG_STATE_HOME", ".local/state"),
            ("XDG_CACHE_HOME", ".cache"),
            ("XDG_CONFIG_HOME", ".config"),
        ]
        .into_iter()
        .filter_map(|(var, default)| super::env_dir_or_home(env, var, default))
        .map(|d| d.join("opencode"))
        .collect()
    }

    fn kind(&self) -> BackendKind {
        BackendKind::Opencode
    }

    fn program(&self, _command: Option<&[String]>) -> Option<String> {
        Some("opencode".into())
    }

    fn install_hint(&self) -> &'static str {
        "install opencode: npm install -g opencode-ai"
    }

    fn reserved_flags(&self) -> &'static [&'static str] {
        &[
            "run",
            "--format",
            "--model",
            "-m",
            "--session",
            "-s",
            "--continue",
            "-c",
        ]
    }

    fn parser(&self) -> Box<dyn StreamParser> {
        Box::new(OpencodeParser::default())
    }

    /// The servers in the config files opencode reads: `OPENCODE_CONFIG`,
    /// the global `opencode.json`/`config.json` and the project's
    /// `opencode.json` (JSON with comments is skipped).
    fn user_mcp_servers(&self, env: &[(String, String)], workdir: &Path) -> Vec<String> {
        let global = env_var(env, "XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| env_var(env, "HOME").map(|h| PathBuf::from(h).join(".config")))
            .map(|c| c.join("opencode"));
        let mut files: Vec<PathBuf> = env_var(env, "OPENCODE_CONFIG")
            .map(PathBuf::from)
            .into_iter()
            .collect();
        if let Some(dir) = global {
            files.extend(["opencode.json", "opencode.jsonc", "config.json"].map(|f| dir.join(f)));
        }
        files.extend(["opencode.json", "opencode.jsonc"].map(|f| workdir.join(f)));
        let mut names: Vec<String> = files
            .iter()
            .filter_map(|f| {
                crate::fsutil::read_text_capped(f, crate::fsutil::MAX_CONFIG_BYTES).ok()
            })
            .flat_map(|text| server_names(&text))
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// The user's own `OPENCODE_CONFIG_CONTENT`.
    fn user_config(&self, env: &[(String, String)]) -> Option<String> {
        env_var(env, "OPENCODE_CONFIG_CONTENT")
    }

    fn lists_tools_at_start(&self) -> bool {
        true
    }

    /// `tools:` become `permission` entries set to `allow`.
    fn tools_unsupported(&self) -> Option<&'static str> {
        None
    }

    fn acp_program(&self) -> Option<AcpProgram> {
        Some(AcpProgram {
            program: Some("opencode"),
            adapter: false,
            hint: self.install_hint(),
            modes: no_modes,
            leaves_commands_on_cancel: false,
            session_model: None,
        })
    }

    /// `opencode acp`: its permissions and model in
    /// `OPENCODE_CONFIG_CONTENT` (its servers come in `session/new`; the
    /// user's own are turned off unless kept).
    fn acp_invocation(&self, req: &TurnRequest) -> Option<Invocation> {
        let mut inv = Invocation::base(req, "opencode".into());
        let content = opencode_config(
            req.user_config.as_deref(),
            "",
            req.permissions,
            &req.tools,
            &[],
            req.keep_user_mcp,
            &servers_to_disable(req),
        );
        let content = match cli_model(req, None) {
            Some(m) => {
                let mut v: serde_json::Value =
                    serde_json::from_str(&content).unwrap_or_else(|_| json!({}));
                v["model"] = json!(m);
                v.to_string()
            }
            None => content,
        };
        inv.env.push(("OPENCODE_CONFIG_CONTENT".into(), content));
        inv.push(&["acp"]);
        inv.args.extend(req.args.iter().cloned());
        Some(inv)
    }

    fn invocation(&self, req: &TurnRequest) -> Option<Invocation> {
        let mut inv = Invocation::base(req, "opencode".into());
        let url = if req.has_context() {
            req.mcp_url.as_str()
        } else {
            ""
        };
        let content = opencode_config(
            req.user_config.as_deref(),
            url,
            req.permissions,
            &req.tools,
            &req.mcp_servers,
            req.keep_user_mcp,
            &servers_to_disable(req),
        );
        inv.env.push(("OPENCODE_CONFIG_CONTENT".into(), content));
        inv.push(&["run", "--format", "json"]);
        if let Some(m) = cli_model(req, None) {
            inv.push(&["-m", &m]);
        }
        if let Some(id) = &req.session_id {
            inv.push(&["--session", id]);
        }
        inv.args.extend(req.args.iter().cloned());
        inv.give_prompt(req, combined_prompt(req));
        Some(inv)
    }
}
