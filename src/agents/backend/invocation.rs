//! How each CLI backend is started for one turn: program, arguments,
//! environment, stdin and the private config files it reads. Pure: the
//! process runner does the I/O.

use std::path::PathBuf;

use serde_json::json;

use super::TurnRequest;
use crate::workflow::BackendKind;

/// The MCP server's name in every generated agent config; Claude Code tool
/// names become `mcp__awtui__<tool>`.
pub const MCP_SERVER_NAME: &str = "awtui";

/// A file written (mode 0600) before the process starts.
#[derive(Clone, Debug, PartialEq)]
pub struct PrivateFile {
    pub path: PathBuf,
    pub content: String,
}

/// Everything needed to start one turn's process.
#[derive(Clone, Debug, PartialEq)]
pub struct Invocation {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Written to stdin, which is then closed.
    pub stdin: Option<String>,
    pub files: Vec<PrivateFile>,
    pub cwd: PathBuf,
}

/// The executable a backend runs (for `command`, its first word).
pub fn executable(kind: BackendKind, command: Option<&[String]>) -> Option<String> {
    Some(match kind {
        BackendKind::Claude => "claude".into(),
        BackendKind::Codex => "codex".into(),
        BackendKind::Cursor => "cursor-agent".into(),
        BackendKind::Gemini => "gemini".into(),
        BackendKind::Opencode => "opencode".into(),
        BackendKind::Command => command?.first()?.clone(),
        BackendKind::Anthropic | BackendKind::Openai => return None,
    })
}

/// The Claude-style MCP config every agent gets as `AWTUI_MCP_CONFIG`.
pub fn mcp_config_json(url: &str, token: &str) -> String {
    let config = json!({
        "mcpServers": {
            MCP_SERVER_NAME: {
                "type": "http",
                "url": url,
                "headers": { "Authorization": format!("Bearer {token}") }
            }
        }
    });
    serde_json::to_string_pretty(&config).unwrap_or_default()
}

/// Drops a `provider/` prefix the CLI would not understand
/// (`anthropic/claude-sonnet-4-5` → `claude-sonnet-4-5` for Claude Code).
fn cli_model(kind: BackendKind, model: &str) -> String {
    let prefix = match kind {
        BackendKind::Claude => "anthropic/",
        BackendKind::Codex => "openai/",
        BackendKind::Gemini => "google/",
        _ => return model.to_string(),
    };
    model.strip_prefix(prefix).unwrap_or(model).to_string()
}

/// The system prompt and the turn prompt as one text, for CLIs without a
/// system-prompt flag.
fn combined_prompt(req: &TurnRequest) -> String {
    if req.system_prompt.trim().is_empty() {
        req.prompt.clone()
    } else {
        format!("{}\n\n---\n\n{}", req.system_prompt.trim_end(), req.prompt)
    }
}

/// Builds the invocation of a CLI backend (`None` for API backends).
pub fn invocation(req: &TurnRequest) -> Option<Invocation> {
    let mcp_config_path = req.state_dir.join("mcp.json");
    // Without a shared context there is no server: nothing points at one.
    let shared = req.has_context();
    let mut env = vec![
        ("AWTUI_AGENT".to_string(), req.agent.clone()),
        ("AWTUI_INSTANCE".to_string(), req.instance.clone()),
    ];
    let mut files = Vec::new();
    if shared {
        env.extend([
            ("AWTUI_MCP_URL".to_string(), req.mcp_url.clone()),
            ("AWTUI_TOKEN".to_string(), req.token.clone()),
            (
                "AWTUI_MCP_CONFIG".to_string(),
                mcp_config_path.display().to_string(),
            ),
        ]);
        files.push(PrivateFile {
            path: mcp_config_path.clone(),
            content: mcp_config_json(&req.mcp_url, &req.token),
        });
    }
    env.extend(req.env.iter().cloned());
    let model = req.model.as_deref().map(|m| cli_model(req.backend, m));
    let program = executable(req.backend, req.command.as_deref())?;
    let mut args: Vec<String> = Vec::new();
    let mut stdin = None;
    let push =
        |args: &mut Vec<String>, items: &[&str]| args.extend(items.iter().map(|s| s.to_string()));

    match req.backend {
        BackendKind::Command => {
            args.extend(req.command.iter().flatten().skip(1).cloned());
            stdin = Some(req.prompt.clone());
            if !req.system_prompt.is_empty() {
                env.push(("AWTUI_SYSTEM_PROMPT".into(), req.system_prompt.clone()));
            }
        }
        BackendKind::Claude => {
            push(
                &mut args,
                &["-p", "--output-format", "stream-json", "--verbose"],
            );
            if shared {
                push(
                    &mut args,
                    &["--mcp-config", &mcp_config_path.display().to_string()],
                );
            }
            // Only awtui's server (or none): never the user's own.
            args.push("--strict-mcp-config".into());
            let mut allowed: Vec<String> = Vec::new();
            if shared {
                allowed.push(format!("mcp__{MCP_SERVER_NAME}"));
            }
            allowed.extend(req.tools.iter().cloned());
            if !allowed.is_empty() {
                args.push("--allowedTools".into());
                args.push(allowed.join(","));
            }
            if !req.system_prompt.is_empty() {
                push(&mut args, &["--append-system-prompt", &req.system_prompt]);
            }
            if let Some(m) = &model {
                push(&mut args, &["--model", m]);
            }
            if let Some(id) = &req.session_id {
                push(&mut args, &["--resume", id]);
            }
            // Without these the first request can go out before the MCP
            // server is connected, or the tools hide behind a search tool.
            env.push(("MCP_CONNECTION_NONBLOCKING".into(), "false".into()));
            env.push(("ENABLE_TOOL_SEARCH".into(), "false".into()));
            stdin = Some(req.prompt.clone());
        }
        BackendKind::Codex => {
            push(&mut args, &["exec", "--json", "--skip-git-repo-check"]);
            let server = format!("mcp_servers.{MCP_SERVER_NAME}");
            let settings = [
                ("url", format!("\"{}\"", req.mcp_url)),
                ("bearer_token_env_var", "\"AWTUI_TOKEN\"".to_string()),
                ("required", "true".to_string()),
                ("default_tools_approval_mode", "\"approve\"".to_string()),
            ];
            for (key, value) in settings.into_iter().filter(|_| shared) {
                args.push("-c".into());
                args.push(format!("{server}.{key}={value}"));
            }
            if let Some(m) = &model {
                push(&mut args, &["-m", m]);
            }
            if let Some(id) = &req.session_id {
                push(&mut args, &["resume", id]);
            }
            args.push("-".into());
            stdin = Some(combined_prompt(req));
        }
        BackendKind::Cursor => {
            push(
                &mut args,
                &[
                    "-p",
                    "--output-format",
                    "stream-json",
                    "--approve-mcps",
                    "--force",
                ],
            );
            if let Some(m) = &model {
                push(&mut args, &["--model", m]);
            }
            if let Some(id) = &req.session_id {
                push(&mut args, &["--resume", id]);
            }
            args.push(combined_prompt(req));
        }
        BackendKind::Gemini => {
            if shared {
                let settings = req.state_dir.join("gemini-settings.json");
                let content = json!({
                    "mcpServers": {
                        MCP_SERVER_NAME: {
                            "httpUrl": req.mcp_url,
                            "headers": { "Authorization": format!("Bearer {}", req.token) },
                            "trust": true
                        }
                    }
                });
                files.push(PrivateFile {
                    path: settings.clone(),
                    content: serde_json::to_string_pretty(&content).unwrap_or_default(),
                });
                env.push((
                    "GEMINI_CLI_SYSTEM_SETTINGS_PATH".into(),
                    settings.display().to_string(),
                ));
            }
            push(&mut args, &["--output-format", "json", "--yolo"]);
            if let Some(m) = &model {
                push(&mut args, &["-m", m]);
            }
            if let Some(id) = &req.session_id {
                push(&mut args, &["--resume", id]);
            }
            args.push("-p".into());
            args.push(combined_prompt(req));
        }
        BackendKind::Opencode => {
            if shared {
                let config = req.state_dir.join("opencode.json");
                let content = json!({
                    "$schema": "https://opencode.ai/config.json",
                    "mcp": {
                        MCP_SERVER_NAME: {
                            "type": "remote",
                            "url": req.mcp_url,
                            "enabled": true,
                            "headers": { "Authorization": format!("Bearer {}", req.token) }
                        }
                    }
                });
                files.push(PrivateFile {
                    path: config.clone(),
                    content: serde_json::to_string_pretty(&content).unwrap_or_default(),
                });
                env.push(("OPENCODE_CONFIG".into(), config.display().to_string()));
            }
            push(&mut args, &["run", "--format", "json"]);
            if let Some(m) = &model {
                push(&mut args, &["-m", m]);
            }
            if let Some(id) = &req.session_id {
                push(&mut args, &["--session", id]);
            }
            args.push(combined_prompt(req));
        }
        BackendKind::Anthropic | BackendKind::Openai => return None,
    }
    Some(Invocation {
        program,
        args,
        env,
        stdin,
        files,
        cwd: req.workdir.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(kind: BackendKind) -> TurnRequest {
        TurnRequest {
            agent: "coder".into(),
            instance: "pr-1".into(),
            backend: kind,
            model: Some("anthropic/claude-sonnet-4-5".into()),
            system_prompt: "You fix bugs.".into(),
            prompt: "@coder fix it".into(),
            session_id: Some("sess-7".into()),
            mcp_url: "http://127.0.0.1:4000/mcp".into(),
            token: "tok".into(),
            tools: vec!["Bash".into()],
            command: Some(vec!["./x.sh".into(), "--flag".into()]),
            env: vec![("EXTRA".into(), "1".into())],
            workdir: "/proj".into(),
            state_dir: "/proj/.workflow/pr-1/agents/coder".into(),
        }
    }

    fn has(args: &[String], pair: &[&str]) -> bool {
        args.windows(pair.len())
            .any(|w| w.iter().zip(pair).all(|(a, b)| a == b))
    }

    #[test]
    fn claude_gets_its_mcp_config_tools_and_resume() {
        let inv = invocation(&req(BackendKind::Claude)).unwrap();
        assert_eq!(inv.program, "claude");
        let a = &inv.args;
        assert!(has(
            a,
            &["-p", "--output-format", "stream-json", "--verbose"]
        ));
        assert!(has(
            a,
            &[
                "--mcp-config",
                "/proj/.workflow/pr-1/agents/coder/mcp.json",
                "--strict-mcp-config"
            ]
        ));
        assert!(has(a, &["--allowedTools", "mcp__awtui,Bash"]));
        assert!(has(a, &["--append-system-prompt", "You fix bugs."]));
        assert!(has(a, &["--model", "claude-sonnet-4-5"]));
        assert!(has(a, &["--resume", "sess-7"]));
        assert_eq!(inv.stdin.as_deref(), Some("@coder fix it"));
        for kv in [
            ("MCP_CONNECTION_NONBLOCKING", "false"),
            ("ENABLE_TOOL_SEARCH", "false"),
            ("AWTUI_TOKEN", "tok"),
            ("EXTRA", "1"),
        ] {
            assert!(
                inv.env.iter().any(|(k, v)| k == kv.0 && v == kv.1),
                "{kv:?}"
            );
        }
        assert!(inv.files[0].content.contains("Bearer tok"));
        assert_eq!(inv.cwd, PathBuf::from("/proj"));
    }

    #[test]
    fn codex_uses_overrides_not_project_config() {
        let inv = invocation(&req(BackendKind::Codex)).unwrap();
        let a = &inv.args;
        assert_eq!(&a[..3], ["exec", "--json", "--skip-git-repo-check"]);
        assert!(has(
            a,
            &["-c", "mcp_servers.awtui.url=\"http://127.0.0.1:4000/mcp\""]
        ));
        assert!(has(
            a,
            &[
                "-c",
                "mcp_servers.awtui.bearer_token_env_var=\"AWTUI_TOKEN\""
            ]
        ));
        assert!(has(a, &["-c", "mcp_servers.awtui.required=true"]));
        assert!(has(
            a,
            &[
                "-c",
                "mcp_servers.awtui.default_tools_approval_mode=\"approve\""
            ]
        ));
        assert!(has(a, &["resume", "sess-7", "-"]));
        assert!(inv.stdin.unwrap().starts_with("You fix bugs."));
    }

    #[test]
    fn gemini_always_passes_the_model_and_trusts_the_server() {
        let inv = invocation(&req(BackendKind::Gemini)).unwrap();
        assert!(has(&inv.args, &["--output-format", "json"]));
        assert!(has(&inv.args, &["-m", "anthropic/claude-sonnet-4-5"]));
        let settings = &inv.files[1];
        assert!(settings.content.contains("\"trust\": true"));
        assert!(
            inv.env
                .iter()
                .any(|(k, _)| k == "GEMINI_CLI_SYSTEM_SETTINGS_PATH")
        );
    }

    #[test]
    fn opencode_and_cursor_and_command() {
        let inv = invocation(&req(BackendKind::Opencode)).unwrap();
        assert!(has(&inv.args, &["run", "--format", "json"]));
        assert!(has(&inv.args, &["--session", "sess-7"]));
        assert!(
            inv.env
                .iter()
                .any(|(k, v)| k == "OPENCODE_CONFIG" && v.ends_with("opencode.json"))
        );

        let inv = invocation(&req(BackendKind::Cursor)).unwrap();
        assert_eq!(inv.program, "cursor-agent");
        assert!(has(&inv.args, &["-p", "--output-format", "stream-json"]));
        assert!(has(&inv.args, &["--resume", "sess-7"]));

        let inv = invocation(&req(BackendKind::Command)).unwrap();
        assert_eq!(inv.program, "./x.sh");
        assert_eq!(inv.args, vec!["--flag"]);
        assert_eq!(inv.stdin.as_deref(), Some("@coder fix it"));
        assert!(
            inv.env
                .iter()
                .any(|(k, v)| k == "AWTUI_MCP_URL" && v == "http://127.0.0.1:4000/mcp")
        );

        assert!(invocation(&req(BackendKind::Anthropic)).is_none());
    }

    /// `context: false`: no backend is pointed at a server or given a token.
    #[test]
    fn without_a_context_no_backend_gets_a_server_or_a_token() {
        for kind in [
            BackendKind::Claude,
            BackendKind::Codex,
            BackendKind::Cursor,
            BackendKind::Gemini,
            BackendKind::Opencode,
            BackendKind::Command,
        ] {
            let mut r = req(kind);
            r.mcp_url = String::new();
            r.token = String::new();
            let inv = invocation(&r).unwrap();
            for (k, _) in &inv.env {
                assert!(
                    !k.starts_with("AWTUI_MCP") && k != "AWTUI_TOKEN",
                    "{kind:?}: {k}"
                );
                assert!(
                    !matches!(
                        k.as_str(),
                        "GEMINI_CLI_SYSTEM_SETTINGS_PATH" | "OPENCODE_CONFIG"
                    ),
                    "{kind:?}: {k}"
                );
            }
            assert!(inv.files.is_empty(), "{kind:?}: {:?}", inv.files);
            assert!(
                !inv.args.iter().any(|a| a.contains("mcp_servers")
                    || a.contains("mcp__")
                    || a == "--mcp-config"),
                "{kind:?}: {:?}",
                inv.args
            );
            assert!(
                inv.env
                    .iter()
                    .any(|(k, v)| k == "AWTUI_AGENT" && v == "coder")
            );
        }
        let mut r = req(BackendKind::Claude);
        r.mcp_url = String::new();
        let inv = invocation(&r).unwrap();
        assert!(has(&inv.args, &["--strict-mcp-config"]));
        assert!(has(&inv.args, &["--allowedTools", "Bash"]));
    }
}
