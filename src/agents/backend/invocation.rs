//! How a CLI backend is started for one turn: program, arguments,
//! environment, stdin and the private config files it reads. Pure: the
//! process runner does the I/O. The parts every CLI shares live here; each
//! vendor's own part is its [`Backend`](super::Backend) implementation.

use std::path::PathBuf;

use serde_json::json;

use super::{PromptTransport, TurnRequest, backend_for};
use crate::workflow::{BackendKind, McpTransport};

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

impl Invocation {
    /// What every CLI turn gets before its vendor's part: `program` in the
    /// agent's workdir, `AWTUI_AGENT`/`AWTUI_INSTANCE`, with a context also
    /// `AWTUI_MCP_URL`, `AWTUI_TOKEN`, `AWTUI_MCP_CONFIG` and that file
    /// (Claude's format: awtui's server and the agent's `mcp:` servers),
    /// then the agent's own `env:`.
    pub fn base(req: &TurnRequest, program: String) -> Invocation {
        let mut env = vec![
            ("AWTUI_AGENT".to_string(), req.agent.clone()),
            ("AWTUI_INSTANCE".to_string(), req.instance.clone()),
        ];
        let mut files = Vec::new();
        if req.has_context() {
            let path = mcp_config_path(req);
            env.extend([
                ("AWTUI_MCP_URL".to_string(), req.mcp_url.clone()),
                ("AWTUI_TOKEN".to_string(), req.token.clone()),
                ("AWTUI_MCP_CONFIG".to_string(), path.display().to_string()),
            ]);
            files.push(PrivateFile {
                path,
                content: mcp_config_json(&req.mcp_url, &req.mcp_servers),
            });
        }
        env.extend(req.env.iter().cloned());
        Invocation {
            program,
            args: Vec::new(),
            env,
            stdin: None,
            files,
            mirror: None,
            cwd: req.workdir.clone(),
        }
    }

    /// Appends arguments.
    pub fn push(&mut self, items: &[&str]) {
        self.args.extend(items.iter().map(|s| s.to_string()));
    }

    /// Sets a variable awtui needs unless the agent's own `env:` sets it
    /// (the agent's wins).
    pub fn default_env(&mut self, req: &TurnRequest, key: &str, value: &str) {
        if !req.env.iter().any(|(k, _)| k == key) {
            self.env.push((key.into(), value.into()));
        }
    }

    /// Hands the prompt over the way `backend` takes it, its mentions
    /// escaped when the CLI would expand them.
    pub fn give_prompt(&mut self, req: &TurnRequest, prompt: String) {
        let backend = backend_for(req.backend);
        let prompt = if backend.expands_at_mentions() {
            escape_at_mentions(&prompt)
        } else {
            prompt
        };
        match backend.prompt_transport() {
            PromptTransport::Stdin => self.stdin = Some(prompt),
            PromptTransport::Argument => self.args.push(prompt),
        }
    }
}

/// Where the agent's Claude-style MCP config (`AWTUI_MCP_CONFIG`) is written.
pub fn mcp_config_path(req: &TurnRequest) -> PathBuf {
    req.state_dir.join("mcp.json")
}

/// The flags awtui sets for each CLI, which an agent's `args:` may not.
pub fn reserved_flags(kind: BackendKind) -> &'static [&'static str] {
    backend_for(kind).reserved_flags()
}

/// The executable a backend runs (for `command`, its first word).
pub fn executable(kind: BackendKind, command: Option<&[String]>) -> Option<String> {
    backend_for(kind).program(command)
}

/// The `Authorization` header every generated MCP config sends, naming the
/// environment variable instead of holding the token: no config file awtui
/// writes carries a secret (Claude Code and Gemini CLI expand `${VAR}`).
pub const AUTH_FROM_ENV: &str = "Bearer ${AWTUI_TOKEN}";

/// The Claude-style MCP config every agent gets as `AWTUI_MCP_CONFIG`:
/// awtui's server and the agent's `mcp:` servers. The token stays in the
/// agent's environment (`AWTUI_TOKEN`).
pub fn mcp_config_json(url: &str, extra: &[crate::workflow::McpServer]) -> String {
    let mut servers = serde_json::Map::new();
    servers.insert(
        MCP_SERVER_NAME.into(),
        json!({
            "type": "http",
            "url": url,
            "headers": { "Authorization": AUTH_FROM_ENV }
        }),
    );
    for s in extra {
        servers.insert(s.name.clone(), mcp_entry(&s.transport));
    }
    let config = json!({ "mcpServers": servers });
    serde_json::to_string_pretty(&config).unwrap_or_default()
}

/// One extra server in the Claude-style `mcpServers` format (also
/// Cursor's): `{type: stdio, command, args, env}` or `{type: http, url,
/// headers}`.
pub fn mcp_entry(t: &McpTransport) -> serde_json::Value {
    match t {
        McpTransport::Stdio { command, args, env } => json!({
            "type": "stdio",
            "command": command,
            "args": args,
            "env": pairs(env),
        }),
        McpTransport::Http { url, headers } => json!({
            "type": "http",
            "url": url,
            "headers": pairs(headers),
        }),
    }
}

/// Name/value pairs as a JSON object.
pub fn pairs(items: &[(String, String)]) -> serde_json::Value {
    serde_json::Value::Object(
        items
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
            .collect(),
    )
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
    backend_for(kind).expands_at_mentions()
}

/// The model name without a `provider/` prefix the CLI would not
/// understand (`anthropic/claude-sonnet-4-5` → `claude-sonnet-4-5`).
pub fn cli_model(req: &TurnRequest, prefix: Option<&str>) -> Option<String> {
    let model = req.model.as_deref()?;
    Some(match prefix {
        Some(p) => model.strip_prefix(p).unwrap_or(model).to_string(),
        None => model.to_string(),
    })
}

/// The system prompt and the turn prompt as one text, for CLIs without a
/// system-prompt flag.
pub fn combined_prompt(req: &TurnRequest) -> String {
    if req.system_prompt.trim().is_empty() {
        req.prompt.clone()
    } else {
        format!("{}\n\n---\n\n{}", req.system_prompt.trim_end(), req.prompt)
    }
}

/// Builds the invocation of a CLI backend (`None` for API backends).
pub fn invocation(req: &TurnRequest) -> Option<Invocation> {
    backend_for(req.backend).invocation(req)
}

/// A turn request for unit tests of every backend.
#[cfg(test)]
pub mod tests_support {
    use super::*;
    use crate::workflow::Permissions;

    /// A request of `coder` with every field set.
    pub fn request(kind: BackendKind) -> TurnRequest {
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
            approval_timeout: std::time::Duration::from_secs(600),
            args: vec!["--extra".into(), "x".into()],
            mcp_servers: vec![],
            keep_user_mcp: false,
            user_mcp_servers: vec![],
            base_url: None,
            api_key_env: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::Permissions;

    fn req(kind: BackendKind) -> TurnRequest {
        tests_support::request(kind)
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

    /// Claude Code gives up on an MCP call after 60 s of its own; an
    /// asking agent's CLI is told to wait as long as the approval timeout
    /// (and a margin), unless the agent's `env:` says otherwise.
    #[test]
    fn an_asking_claude_waits_as_long_as_the_approval_timeout() {
        let timeout_of = |r: &TurnRequest| {
            let set: Vec<String> = invocation(r)
                .unwrap()
                .env
                .into_iter()
                .filter(|(k, _)| k == "MCP_TOOL_TIMEOUT")
                .map(|(_, v)| v)
                .collect();
            assert!(set.len() <= 1, "set twice: {set:?}");
            set.into_iter().next()
        };
        let mut r = req(BackendKind::Claude);
        r.permissions = Permissions::Ask;
        r.approval_timeout = std::time::Duration::from_secs(900);
        assert_eq!(timeout_of(&r).as_deref(), Some("930000"));
        r.env.push(("MCP_TOOL_TIMEOUT".into(), "5000".into()));
        assert_eq!(
            timeout_of(&r).as_deref(),
            Some("5000"),
            "the agent's own env: wins"
        );
        r.env.pop();
        r.permissions = Permissions::WorkspaceWrite;
        assert_eq!(timeout_of(&r), None, "only asking agents wait for a person");
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
        r.keep_user_mcp = true;
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

    /// Issue 23 (7): opencode applies `tools:` as `permission` entries that
    /// allow those tools (as Claude's `--allowedTools` does), over what
    /// `permissions:` set; without `tools:` the permissions stand.
    #[test]
    fn opencode_allows_the_agents_tools_in_its_permission_config() {
        let inline = |tools: &[&str]| -> serde_json::Value {
            let mut r = req(BackendKind::Opencode);
            r.tools = tools.iter().map(|t| t.to_string()).collect();
            let inv = invocation(&r).unwrap();
            let text = inv
                .env
                .iter()
                .find(|(k, _)| k == "OPENCODE_CONFIG_CONTENT")
                .map(|(_, v)| v.clone())
                .unwrap();
            serde_json::from_str(&text).unwrap()
        };
        let none = inline(&[]);
        assert_eq!(none["permission"]["bash"], "deny", "{none}");
        assert_eq!(none["permission"]["edit"], "allow", "{none}");
        let some = inline(&["bash", "webfetch"]);
        assert_eq!(some["permission"]["bash"], "allow", "{some}");
        assert_eq!(some["permission"]["webfetch"], "allow", "{some}");
        assert_eq!(some["permission"]["edit"], "allow", "{some}");
    }

    fn extra() -> Vec<crate::workflow::McpServer> {
        use crate::workflow::{McpServer, McpTransport};
        vec![
            McpServer {
                name: "gh".into(),
                transport: McpTransport::Stdio {
                    command: "gh-mcp".into(),
                    args: vec!["--stdio".into()],
                    env: vec![("GH_HOST".into(), "example.com".into())],
                },
            },
            McpServer {
                name: "docs".into(),
                transport: McpTransport::Http {
                    url: "https://docs.example/mcp".into(),
                    headers: vec![("X-Key".into(), "${DOCS_KEY}".into())],
                },
            },
        ]
    }

    #[test]
    fn claude_gets_extra_servers_in_its_mcp_config_and_may_keep_the_users() {
        let mut r = req(BackendKind::Claude);
        r.mcp_servers = extra();
        let inv = invocation(&r).unwrap();
        let v: serde_json::Value = serde_json::from_str(&inv.files[0].content).unwrap();
        assert_eq!(v["mcpServers"]["gh"]["type"], "stdio");
        assert_eq!(v["mcpServers"]["gh"]["command"], "gh-mcp");
        assert_eq!(v["mcpServers"]["gh"]["args"][0], "--stdio");
        assert_eq!(v["mcpServers"]["gh"]["env"]["GH_HOST"], "example.com");
        assert_eq!(v["mcpServers"]["docs"]["url"], "https://docs.example/mcp");
        assert_eq!(v["mcpServers"]["docs"]["headers"]["X-Key"], "${DOCS_KEY}");
        assert_eq!(v["mcpServers"]["awtui"]["type"], "http");
        assert!(has(
            &inv.args,
            &["--allowedTools", "mcp__awtui,mcp__gh,mcp__docs,Bash"]
        ));
        assert!(inv.args.contains(&"--strict-mcp-config".to_string()));
        r.keep_user_mcp = true;
        let inv = invocation(&r).unwrap();
        assert!(!inv.args.contains(&"--strict-mcp-config".to_string()));
    }

    #[test]
    fn codex_gets_extra_servers_as_overrides_and_turns_the_users_off() {
        let mut r = req(BackendKind::Codex);
        r.mcp_servers = extra();
        r.user_mcp_servers = super::super::codex::user_servers(Some(
            "model = \"x\"\n[mcp_servers.browser]\ncommand = \"b\"\n[mcp_servers.gh]\ncommand = \"old\"\n",
        ));
        let a = invocation(&r).unwrap().args;
        for o in [
            "mcp_servers.gh.command=\"gh-mcp\"",
            "mcp_servers.gh.args=[\"--stdio\"]",
            "mcp_servers.gh.env={\"GH_HOST\" = \"example.com\"}",
            "mcp_servers.gh.default_tools_approval_mode=\"approve\"",
            "mcp_servers.docs.url=\"https://docs.example/mcp\"",
            "mcp_servers.docs.http_headers={\"X-Key\" = \"${DOCS_KEY}\"}",
            "mcp_servers.browser.enabled=false",
        ] {
            assert!(has(&a, &["-c", o]), "{o} in {a:?}");
        }
        // The agent's own `gh` replaces the user's, it is not turned off.
        assert!(!a.iter().any(|x| x == "mcp_servers.gh.enabled=false"));
        // Each override parses as TOML.
        for o in a.iter().filter(|x| x.starts_with("mcp_servers.")) {
            let (_, value) = o.split_once('=').unwrap();
            format!("v = {value}").parse::<toml::Table>().unwrap();
        }
        r.keep_user_mcp = true;
        let a = invocation(&r).unwrap().args;
        assert!(!a.iter().any(|x| x.ends_with(".enabled=false")));
    }

    #[test]
    fn gemini_and_opencode_get_extra_servers_in_their_formats() {
        let mut r = req(BackendKind::Gemini);
        r.mcp_servers = extra();
        r.user_config = Some(r#"{"theme":"x","mcpServers":{"browser":{"command":"b"}}}"#.into());
        let inv = invocation(&r).unwrap();
        let v: serde_json::Value = serde_json::from_str(&inv.files[1].content).unwrap();
        assert_eq!(v["theme"], "x");
        assert_eq!(v["mcpServers"]["gh"]["command"], "gh-mcp");
        assert_eq!(v["mcpServers"]["gh"]["env"]["GH_HOST"], "example.com");
        assert_eq!(
            v["mcpServers"]["docs"]["httpUrl"],
            "https://docs.example/mcp"
        );
        assert!(v["mcpServers"]["browser"].is_null(), "{v}");
        assert_eq!(
            v["mcp"]["allowed"],
            serde_json::json!(["awtui", "gh", "docs"])
        );
        r.keep_user_mcp = true;
        let inv = invocation(&r).unwrap();
        let v: serde_json::Value = serde_json::from_str(&inv.files[1].content).unwrap();
        assert_eq!(v["mcpServers"]["browser"]["command"], "b");
        assert!(v["mcp"]["allowed"].is_null(), "{v}");

        let mut r = req(BackendKind::Opencode);
        r.mcp_servers = extra();
        r.user_config = Some(r#"{"mcp":{"browser":{"type":"local","command":["b"]}}}"#.into());
        // Servers from the user's opencode.json files: turned off, except
        // one the agent's own `mcp:` replaces.
        r.user_mcp_servers = vec!["filesrv".into(), "gh".into()];
        let inv = invocation(&r).unwrap();
        let inline = &inv
            .env
            .iter()
            .find(|(k, _)| k == "OPENCODE_CONFIG_CONTENT")
            .unwrap()
            .1;
        let v: serde_json::Value = serde_json::from_str(inline).unwrap();
        assert_eq!(v["mcp"]["gh"]["type"], "local");
        assert_eq!(
            v["mcp"]["gh"]["command"],
            serde_json::json!(["gh-mcp", "--stdio"])
        );
        assert_eq!(v["mcp"]["gh"]["environment"]["GH_HOST"], "example.com");
        assert_eq!(v["mcp"]["docs"]["type"], "remote");
        assert_eq!(v["mcp"]["docs"]["headers"]["X-Key"], "${DOCS_KEY}");
        assert!(v["mcp"]["browser"].is_null(), "{v}");
        assert_eq!(v["mcp"]["filesrv"], serde_json::json!({"enabled": false}));
        assert_eq!(v["mcp"]["awtui"]["type"], "remote");
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
