//! How each CLI backend is started for one turn: program, arguments,
//! environment, stdin and the private config files it reads. Pure: the
//! process runner does the I/O.

use std::path::PathBuf;

use serde_json::json;

use super::TurnRequest;
use crate::workflow::{BackendKind, Permissions};

/// The MCP server's name in every generated agent config; Claude Code tool
/// names become `mcp__awtui__<tool>`.
pub const MCP_SERVER_NAME: &str = "awtui";

/// A file written (mode 0600) before the process starts.
#[derive(Clone, Debug, PartialEq)]
pub struct PrivateFile {
    pub path: PathBuf,
    pub content: String,
}

/// Every entry of `from` linked into `into` (except the files the
/// invocation writes itself), so a CLI given a private config home still
/// finds the user's credentials and history.
#[derive(Clone, Debug, PartialEq)]
pub struct Mirror {
    pub from: PathBuf,
    pub into: PathBuf,
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
    /// A user's config folder to link into a private one first.
    pub mirror: Option<Mirror>,
    pub cwd: PathBuf,
}

/// The flags awtui sets for each CLI, which an agent's `args:` may not
/// (they decide how awtui reads its output, reaches its tools, resumes it,
/// and what it may do).
pub fn reserved_flags(kind: BackendKind) -> &'static [&'static str] {
    match kind {
        BackendKind::Claude => &[
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
        ],
        BackendKind::Codex => &[
            "exec",
            "--json",
            "--sandbox",
            "-s",
            "--model",
            "-m",
            "resume",
            "--dangerously-bypass-approvals-and-sandbox",
            "--full-auto",
        ],
        BackendKind::Gemini => &[
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
        ],
        BackendKind::Opencode => &[
            "run",
            "--format",
            "--model",
            "-m",
            "--session",
            "-s",
            "--continue",
            "-c",
        ],
        BackendKind::Cursor => &[
            "-p",
            "--print",
            "--output-format",
            "--force",
            "-f",
            "--approve-mcps",
            "--model",
            "--resume",
        ],
        BackendKind::Command | BackendKind::Anthropic | BackendKind::Openai => &[],
    }
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

/// The `Authorization` header every generated MCP config sends, naming the
/// environment variable instead of holding the token: no config file awtui
/// writes carries a secret (Claude Code and Gemini CLI expand `${VAR}`).
pub const AUTH_FROM_ENV: &str = "Bearer ${AWTUI_TOKEN}";

/// The Claude-style MCP config every agent gets as `AWTUI_MCP_CONFIG`. The
/// token stays in the agent's environment (`AWTUI_TOKEN`).
pub fn mcp_config_json(url: &str) -> String {
    let config = json!({
        "mcpServers": {
            MCP_SERVER_NAME: {
                "type": "http",
                "url": url,
                "headers": { "Authorization": AUTH_FROM_ENV }
            }
        }
    });
    serde_json::to_string_pretty(&config).unwrap_or_default()
}

/// The prompt with every `@` escaped as `\@`: Claude Code and Gemini CLI
/// read `@word` as a file to attach (`@user` would send a file named
/// `user` in the workspace to the model; both seen with the real CLIs), and
/// Cursor's agent CLI takes `@` references too. Escaped, the model still
/// reads the mention; a note after the prompt tells it how to write one.
pub fn escape_at_mentions(prompt: &str) -> String {
    format!("{}\n\n{ESCAPE_NOTE}", prompt.replace('@', "\\@"))
}

/// Told to models whose prompt has its mentions escaped.
pub const ESCAPE_NOTE: &str = "(In this prompt a backslash precedes each at sign so that your CLI does not read mentions as file names; when you mention someone, write the at sign without the backslash.)";

/// Whether a CLI expands `@word` in its prompt into a file's content.
pub fn expands_at_mentions(kind: BackendKind) -> bool {
    matches!(
        kind,
        BackendKind::Claude | BackendKind::Gemini | BackendKind::Cursor
    )
}

/// Gemini CLI's settings for an agent: the user's own settings (`user`,
/// the text of their `settings.json`, when any) with awtui's MCP server
/// added next to theirs.
pub fn gemini_settings(user: Option<&str>, url: &str) -> String {
    let mut root = user
        .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
        .filter(serde_json::Value::is_object)
        .unwrap_or_else(|| json!({}));
    if !root["mcpServers"].is_object() {
        root["mcpServers"] = json!({});
    }
    root["mcpServers"][MCP_SERVER_NAME] = json!({
        "httpUrl": url,
        "headers": { "Authorization": AUTH_FROM_ENV },
        "trust": true
    });
    serde_json::to_string_pretty(&root).unwrap_or_default()
}

/// opencode's inline config (`OPENCODE_CONFIG_CONTENT`, merged by opencode
/// over the user's own config files): awtui's MCP server (none when `url`
/// is empty: no context), the token read from the environment, and the
/// agent's permissions. A user's own inline config is kept.
pub fn opencode_config(user: Option<&str>, url: &str, permissions: Permissions) -> String {
    let mut root = user
        .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
        .filter(serde_json::Value::is_object)
        .unwrap_or_else(|| json!({}));
    if !root["mcp"].is_object() {
        root["mcp"] = json!({});
    }
    // The agent's `permissions:` decide edits and shell commands.
    let (edit, bash) = match permissions {
        // `ask` is refused by `validate` for opencode; the safe side if reached.
        Permissions::ReadOnly | Permissions::Ask => ("deny", "deny"),
        Permissions::WorkspaceWrite => ("allow", "deny"),
        Permissions::Full => ("allow", "allow"),
    };
    if !root["permission"].is_object() {
        root["permission"] = json!({});
    }
    root["permission"]["edit"] = json!(edit);
    root["permission"]["bash"] = json!(bash);
    if !url.is_empty() {
        root["mcp"][MCP_SERVER_NAME] = json!({
            "type": "remote",
            "url": url,
            "enabled": true,
            "headers": { "Authorization": "Bearer {env:AWTUI_TOKEN}" }
        });
    }
    root.to_string()
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
            content: mcp_config_json(&req.mcp_url),
        });
    }
    env.extend(req.env.iter().cloned());
    let model = req.model.as_deref().map(|m| cli_model(req.backend, m));
    let program = executable(req.backend, req.command.as_deref())?;
    let mut args: Vec<String> = Vec::new();
    let mut stdin = None;
    let mut mirror = None;
    let escape = |prompt: String| {
        if expands_at_mentions(req.backend) {
            escape_at_mentions(&prompt)
        } else {
            prompt
        }
    };
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
            let mode = match req.permissions {
                Permissions::ReadOnly => "dontAsk",
                Permissions::WorkspaceWrite => "acceptEdits",
                Permissions::Full => "bypassPermissions",
                // Everything that would prompt goes to awtui's approval tool.
                Permissions::Ask => "default",
            };
            push(&mut args, &["--permission-mode", mode]);
            if req.permissions == Permissions::Ask && shared {
                push(
                    &mut args,
                    &[
                        "--permission-prompt-tool",
                        &format!(
                            "mcp__{MCP_SERVER_NAME}__{}",
                            crate::mcp::approval_tools::NAME
                        ),
                    ],
                );
            }
            if !allowed.is_empty() {
                args.push("--allowedTools".into());
                args.push(allowed.join(","));
            }
            if !req.system_prompt.is_empty() {
                // A file, not an argument: one argument may not exceed
                // 128 KiB.
                let path = req.state_dir.join("system-prompt.md");
                files.push(PrivateFile {
                    path: path.clone(),
                    content: req.system_prompt.clone(),
                });
                push(
                    &mut args,
                    &["--append-system-prompt-file", &path.display().to_string()],
                );
            }
            if let Some(m) = &model {
                push(&mut args, &["--model", m]);
            }
            if let Some(id) = &req.session_id {
                push(&mut args, &["--resume", id]);
            }
            args.extend(req.args.iter().cloned());
            // Without these the first request can go out before the MCP
            // server is connected, or the tools hide behind a search tool.
            // The agent's own `env:` wins over these defaults.
            for (key, value) in [
                ("MCP_CONNECTION_NONBLOCKING", "false"),
                ("ENABLE_TOOL_SEARCH", "false"),
            ] {
                if !req.env.iter().any(|(k, _)| k == key) {
                    env.push((key.into(), value.into()));
                }
            }
            stdin = Some(escape(req.prompt.clone()));
        }
        BackendKind::Codex => {
            push(&mut args, &["exec", "--json", "--skip-git-repo-check"]);
            let sandbox = match req.permissions {
                Permissions::ReadOnly | Permissions::Ask => "read-only",
                Permissions::WorkspaceWrite => "workspace-write",
                Permissions::Full => "danger-full-access",
            };
            push(&mut args, &["--sandbox", sandbox]);
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
            args.extend(req.args.iter().cloned());
            if let Some(id) = &req.session_id {
                push(&mut args, &["resume", id]);
            }
            args.push("-".into());
            stdin = Some(combined_prompt(req));
        }
        BackendKind::Cursor => {
            push(
                &mut args,
                &["-p", "--output-format", "stream-json", "--approve-mcps"],
            );
            if req.permissions == Permissions::Full {
                args.push("--force".into());
            }
            if let Some(m) = &model {
                push(&mut args, &["--model", m]);
            }
            if let Some(id) = &req.session_id {
                push(&mut args, &["--resume", id]);
            }
            args.extend(req.args.iter().cloned());
            args.push(escape(combined_prompt(req)));
        }
        BackendKind::Gemini => {
            // Gemini reads its user settings from `$GEMINI_CLI_HOME/.gemini`:
            // a private copy of the user's, with awtui's server added (see
            // `gemini_home`); a system settings file is ignored unless root
            // owns it and every folder above it.
            // Without a context the user's own settings are used as they are.
            if shared {
                let home = req.private_dir.join("gemini-home");
                files.push(PrivateFile {
                    path: home.join(".gemini").join("settings.json"),
                    content: gemini_settings(req.user_config.as_deref(), &req.mcp_url),
                });
                env.push(("GEMINI_CLI_HOME".into(), home.display().to_string()));
                if let Some(user_dir) = &req.user_config_dir {
                    mirror = Some(Mirror {
                        from: user_dir.clone(),
                        into: home.join(".gemini"),
                    });
                }
            }
            let mode = match req.permissions {
                Permissions::ReadOnly | Permissions::Ask => "default",
                Permissions::WorkspaceWrite => "auto_edit",
                Permissions::Full => "yolo",
            };
            push(
                &mut args,
                &[
                    "--output-format",
                    "stream-json",
                    "--approval-mode",
                    mode,
                    "--skip-trust",
                ],
            );
            if let Some(m) = &model {
                push(&mut args, &["-m", m]);
            }
            if let Some(id) = &req.session_id {
                push(&mut args, &["--resume", id]);
            }
            args.extend(req.args.iter().cloned());
            stdin = Some(escape(combined_prompt(req)));
        }
        BackendKind::Opencode => {
            let url = if shared { req.mcp_url.as_str() } else { "" };
            let content = opencode_config(req.user_config.as_deref(), url, req.permissions);
            env.push(("OPENCODE_CONFIG_CONTENT".into(), content));
            push(&mut args, &["run", "--format", "json"]);
            if let Some(m) = &model {
                push(&mut args, &["-m", m]);
            }
            if let Some(id) = &req.session_id {
                push(&mut args, &["--session", id]);
            }
            args.extend(req.args.iter().cloned());
            stdin = Some(combined_prompt(req));
        }
        BackendKind::Anthropic | BackendKind::Openai => return None,
    }
    Some(Invocation {
        program,
        args,
        env,
        stdin,
        files,
        mirror,
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
            private_dir: "/run/awtui/agents/h/coder".into(),
            user_config: None,
            user_config_dir: None,
            permissions: Permissions::WorkspaceWrite,
            args: vec!["--extra".into(), "x".into()],
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
        assert!(has(
            a,
            &[
                "--append-system-prompt-file",
                "/proj/.workflow/pr-1/agents/coder/system-prompt.md"
            ]
        ));
        assert!(
            inv.files
                .iter()
                .any(|f| f.path.ends_with("system-prompt.md") && f.content == "You fix bugs.")
        );
        assert!(has(a, &["--model", "claude-sonnet-4-5"]));
        assert!(has(a, &["--resume", "sess-7", "--extra", "x"]));
        assert!(
            inv.stdin
                .as_deref()
                .unwrap()
                .starts_with("\\@coder fix it\n\n(In this prompt"),
            "{:?}",
            inv.stdin
        );
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
        assert!(inv.files[0].content.contains("Bearer ${AWTUI_TOKEN}"));
        assert_eq!(inv.cwd, PathBuf::from("/proj"));
    }

    #[test]
    fn the_agents_env_wins_over_awtuis_defaults() {
        let mut r = req(BackendKind::Claude);
        r.env.push(("ENABLE_TOOL_SEARCH".into(), "auto".into()));
        let inv = invocation(&r).unwrap();
        let values: Vec<&str> = inv
            .env
            .iter()
            .filter(|(k, _)| k == "ENABLE_TOOL_SEARCH")
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(values, ["auto"]);
    }

    #[test]
    fn permissions_map_to_each_clis_own_flags() {
        let args = |kind, p| {
            let mut r = req(kind);
            r.permissions = p;
            let inv = invocation(&r).unwrap();
            (inv.args, inv.env)
        };
        use Permissions::*;
        for (p, claude, codex, gemini) in [
            (ReadOnly, "dontAsk", "read-only", "default"),
            (
                WorkspaceWrite,
                "acceptEdits",
                "workspace-write",
                "auto_edit",
            ),
            (Full, "bypassPermissions", "danger-full-access", "yolo"),
        ] {
            assert!(has(
                &args(BackendKind::Claude, p).0,
                &["--permission-mode", claude]
            ));
            assert!(has(&args(BackendKind::Codex, p).0, &["--sandbox", codex]));
            assert!(has(
                &args(BackendKind::Gemini, p).0,
                &["--approval-mode", gemini]
            ));
            assert_eq!(
                args(BackendKind::Cursor, p)
                    .0
                    .contains(&"--force".to_string()),
                p == Full
            );
        }
        let (_, env) = args(BackendKind::Opencode, ReadOnly);
        let inline = &env
            .iter()
            .find(|(k, _)| k == "OPENCODE_CONFIG_CONTENT")
            .unwrap()
            .1;
        let v: serde_json::Value = serde_json::from_str(inline).unwrap();
        assert_eq!(v["permission"]["edit"], "deny");
        assert_eq!(v["permission"]["bash"], "deny");
    }

    #[test]
    fn claude_asks_awtui_through_the_permission_prompt_tool_with_permissions_ask() {
        let mut r = req(BackendKind::Claude);
        r.permissions = Permissions::Ask;
        let args = invocation(&r).unwrap().args;
        assert!(has(&args, &["--permission-mode", "default"]));
        assert!(has(
            &args,
            &["--permission-prompt-tool", "mcp__awtui__permission_request"]
        ));
        r.permissions = Permissions::WorkspaceWrite;
        let args = invocation(&r).unwrap().args;
        assert!(!args.contains(&"--permission-prompt-tool".to_string()));
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
        assert!(has(a, &["--extra", "x", "resume", "sess-7", "-"]));
        assert!(inv.stdin.unwrap().starts_with("You fix bugs."));
    }

    #[test]
    fn gemini_gets_a_private_home_stream_json_and_an_escaped_prompt_on_stdin() {
        let mut r = req(BackendKind::Gemini);
        r.prompt = "You are @coder; @user asked".into();
        r.user_config = Some(
            r#"{"security":{"auth":{"selectedType":"gemini-api-key"}},"mcpServers":{"gh":{"command":"gh-mcp"}}}"#
                .into(),
        );
        r.user_config_dir = Some("/home/u/.gemini".into());
        let inv = invocation(&r).unwrap();
        assert!(has(
            &inv.args,
            &[
                "--output-format",
                "stream-json",
                "--approval-mode",
                "auto_edit",
                "--skip-trust"
            ]
        ));
        assert!(has(&inv.args, &["-m", "anthropic/claude-sonnet-4-5"]));
        assert!(
            !inv.args.iter().any(|a| a.contains("@coder")),
            "prompt in argv"
        );
        let stdin = inv.stdin.unwrap();
        assert!(stdin.contains("You are \\@coder; \\@user asked"), "{stdin}");
        assert!(!stdin.replace("\\@", "").contains('@'), "{stdin}");
        let home = "/run/awtui/agents/h/coder/gemini-home";
        assert!(
            inv.env
                .iter()
                .any(|(k, v)| k == "GEMINI_CLI_HOME" && v == home)
        );
        let settings = inv
            .files
            .iter()
            .find(|f| f.path.ends_with(".gemini/settings.json"))
            .unwrap();
        assert!(settings.path.starts_with(home));
        let v: serde_json::Value = serde_json::from_str(&settings.content).unwrap();
        assert_eq!(v["security"]["auth"]["selectedType"], "gemini-api-key");
        assert_eq!(v["mcpServers"]["gh"]["command"], "gh-mcp");
        assert_eq!(
            v["mcpServers"]["awtui"]["httpUrl"],
            "http://127.0.0.1:4000/mcp"
        );
        assert_eq!(v["mcpServers"]["awtui"]["trust"], true);
        assert_eq!(
            inv.mirror,
            Some(Mirror {
                from: "/home/u/.gemini".into(),
                into: format!("{home}/.gemini").into()
            })
        );
    }

    #[test]
    fn no_generated_config_holds_the_token() {
        for kind in [
            BackendKind::Claude,
            BackendKind::Codex,
            BackendKind::Gemini,
            BackendKind::Opencode,
            BackendKind::Cursor,
        ] {
            let inv = invocation(&req(kind)).unwrap();
            for f in &inv.files {
                assert!(!f.content.contains("tok\""), "{kind:?}: {}", f.content);
                assert!(!f.content.contains("Bearer tok"), "{kind:?}: {}", f.content);
            }
            assert!(
                !inv.args.iter().any(|a| a.contains("Bearer tok")),
                "{kind:?}"
            );
            for (k, v) in &inv.env {
                assert!(
                    k == "AWTUI_TOKEN" || !v.contains("Bearer tok"),
                    "{kind:?}: {k}"
                );
            }
        }
    }

    #[test]
    fn opencode_and_cursor_and_command() {
        let inv = invocation(&req(BackendKind::Opencode)).unwrap();
        assert!(has(&inv.args, &["run", "--format", "json"]));
        assert!(has(&inv.args, &["--session", "sess-7"]));
        assert!(
            !inv.args.iter().any(|a| a.contains("fix it")),
            "prompt in argv"
        );
        assert!(inv.stdin.as_deref().unwrap().ends_with("@coder fix it"));
        let inline = inv
            .env
            .iter()
            .find(|(k, _)| k == "OPENCODE_CONFIG_CONTENT")
            .map(|(_, v)| v.clone())
            .unwrap();
        assert!(inline.contains("Bearer {env:AWTUI_TOKEN}"), "{inline}");
        // The user's own OPENCODE_CONFIG is left alone.
        assert!(!inv.env.iter().any(|(k, _)| k == "OPENCODE_CONFIG"));

        let inv = invocation(&req(BackendKind::Cursor)).unwrap();
        assert_eq!(inv.program, "cursor-agent");
        assert!(has(&inv.args, &["--extra", "x"]));
        assert!(inv.args.last().unwrap().contains("\\@coder fix it"));
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
            // No MCP config (a system prompt file is fine).
            assert!(
                inv.files
                    .iter()
                    .all(|f| !f.content.contains("mcpServers") && !f.content.contains("\"mcp\"")),
                "{kind:?}: {:?}",
                inv.files
            );
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
