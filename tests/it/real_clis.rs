//! The real agent CLIs (Claude Code, Codex, Gemini CLI, opencode) inside a
//! real awtui workflow, against the project's fake model API, offline.
//!
//! The CLIs are not installed by the tests: `scripts/install-clis.sh` puts
//! pinned versions in `$AWTUI_CLI_CACHE` (default `~/.cache/awtui-clis`),
//! and `.ci/run` calls it first. A missing CLI fails its test with the
//! command to run; nothing is skipped.
//!
//! Each test runs in a loopback-only network namespace (`unshare -rn`, the
//! test binary re-running itself there) when the system allows it, so no
//! request can leave the machine; otherwise the CLIs are only pointed at
//! 127.0.0.1.

use crate::cli_support;
use crate::llm_server;
use crate::real_support;

use std::path::Path;

use cli_support::World;
use llm_server::{ModelScript, Recorded};
use real_support::*;
use serde_json::{Value, json};

/// One agent on a real CLI is woken by a mention, calls awtui's
/// `channel_send` as itself, and its reply lands once (the final answer is
/// not posted again). No request to the model carries a token.
fn one_turn(cli: &Cli, test: &str) {
    if isolated(module_path!(), test) {
        return;
    }
    bin_dir(cli.program);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let w = World::new();
    let workflow = format!(
        "name: real\nagents:\n  a:\n    backend: {}\n    model: {}\n    protocol: headless\n    timeout: 240s\n\
         \x20   system_prompt: \"SYSTEM-MARKER: be terse.\"\n\
         limits:\n  retries: 0\nkickoff: \"@a please greet @user\"\n",
        cli.backend, cli.model
    );
    let hello = format!("@user hello from {} via awtui", cli.backend);
    // Files named like the participants: a CLI that expands `@name` into a
    // file's content (gemini) would send them to the model.
    std::fs::write(w.dir.join("user"), "DECOY-SECRET-OF-USER\n").unwrap();
    std::fs::write(w.dir.join("a"), "DECOY-SECRET-OF-A\n").unwrap();
    let r = run(&w, &rt, &workflow, &[(cli, posts(&hello))]);
    let why = r.explain();
    assert!(
        !r.requests.iter().any(|q| q.raw.contains("DECOY-SECRET")),
        "an @mention pulled a file into the model request\n{why}"
    );
    assert_eq!(r.report["success"], true, "{why}");
    assert_eq!(r.from("a"), vec![hello.clone()], "{why}");
    let model_calls: Vec<&Recorded> = r.requests.iter().filter(|q| !q.body.is_null()).collect();
    assert!(
        model_calls.iter().any(|q| q.raw.contains("channel_send")),
        "the model was never offered awtui's tools\n{why}"
    );
    assert!(
        model_calls
            .iter()
            .any(|q| q.raw.contains("SYSTEM-MARKER: be terse.")),
        "the system prompt did not reach the model\n{why}"
    );
    no_secret_reached_the_model(&w, &r);
}

#[test]
fn claude_code_turn() {
    one_turn(&CLAUDE, "claude_code_turn");
}

#[test]
fn codex_turn() {
    one_turn(&CODEX, "codex_turn");
}

#[test]
fn gemini_cli_turn() {
    one_turn(&GEMINI, "gemini_cli_turn");
}

#[test]
fn opencode_turn() {
    one_turn(&OPENCODE, "opencode_turn");
}

/// Claude Code wakes Codex with a mention; Codex answers the person. Each
/// posts once, as itself.
#[test]
fn claude_to_codex_relay() {
    if isolated(module_path!(), "claude_to_codex_relay") {
        return;
    }
    bin_dir(CLAUDE.program);
    bin_dir(CODEX.program);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let w = World::new();
    let workflow = format!(
        "name: relay\nagents:\n  lead:\n    backend: claude\n    model: {}\n    protocol: headless\n    timeout: 240s\n\
         \x20 helper:\n    backend: codex\n    model: {}\n    protocol: headless\n    timeout: 240s\n\
         limits:\n  retries: 0\nkickoff: \"@lead ask the helper to check the build\"\n",
        CLAUDE.model, CODEX.model
    );
    let r = run(
        &w,
        &rt,
        &workflow,
        &[
            (&CLAUDE, posts("@helper please check the build")),
            (&CODEX, posts("@user the build is green")),
        ],
    );
    let why = r.explain();
    assert_eq!(r.report["success"], true, "{why}");
    assert_eq!(
        r.from("lead"),
        vec!["@helper please check the build"],
        "{why}"
    );
    assert_eq!(r.from("helper"), vec!["@user the build is green"], "{why}");
    no_secret_reached_the_model(&w, &r);
}

/// A 200 KB kickoff (far over what one argument may hold) reaches every
/// CLI whole: each model sees the marker written at its very end.
#[test]
fn a_200_kb_prompt_reaches_every_cli() {
    if isolated(module_path!(), "a_200_kb_prompt_reaches_every_cli") {
        return;
    }
    let clis = [&CLAUDE, &CODEX, &GEMINI, &OPENCODE];
    for cli in clis {
        bin_dir(cli.program);
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let w = World::new();
    let line = "diff --git a/src/lib.rs b/src/lib.rs +let x = compute(y); // unchanged context\n";
    let diff = line.repeat(200 * 1024 / line.len());
    std::fs::write(
        w.dir.join("big.diff"),
        format!("{diff}END-OF-DIFF-MARKER\n"),
    )
    .unwrap();
    let mut workflow = String::from("name: big\nagents:\n");
    for cli in clis {
        workflow.push_str(&format!(
            "  {0}:\n    backend: {0}\n    model: {1}\n    protocol: headless\n    timeout: 240s\n",
            cli.backend, cli.model
        ));
    }
    workflow.push_str(
        "setup:\n  - shell: cat big.diff\n    as: diff\nlimits:\n  retries: 0\n\
         kickoff: |\n  @claude @codex @gemini @opencode review this:\n  ${{ diff }}\n",
    );
    let models: Vec<(&Cli, ModelScript)> = clis
        .iter()
        .map(|c| (*c, posts(&format!("@user {} read it all", c.backend))))
        .collect();
    let r = run(&w, &rt, &workflow, &models);
    let why = r.explain();
    assert_eq!(r.report["success"], true, "{why}");
    for cli in clis {
        assert_eq!(
            r.from(cli.backend),
            vec![format!("@user {} read it all", cli.backend)],
            "{why}"
        );
    }
    let whole = r
        .requests
        .iter()
        .filter(|q| q.raw.contains("END-OF-DIFF-MARKER") && q.raw.len() > 200 * 1024)
        .count();
    assert!(
        whole >= clis.len(),
        "not every model saw the whole prompt\n{why}"
    );
}

/// A model API that refuses the request: the agent fails, and the reason
/// shown is the API's message, not a stray line of the CLI's stderr (gemini
/// prints its error as multi-line JSON).
fn failure_says_why(cli: &Cli, test: &str) {
    if isolated(module_path!(), test) {
        return;
    }
    bin_dir(cli.program);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let w = World::new();
    let workflow = format!(
        "name: real\nagents:\n  a:\n    backend: {}\n    model: {}\n    protocol: headless\n    timeout: 240s\n\
         limits:\n  retries: 0\nkickoff: \"@a go\"\n",
        cli.backend, cli.model
    );
    let mut script = posts("never");
    script.refuse = Some("quota exhausted for this fake key".into());
    let r = run(&w, &rt, &workflow, &[(cli, script)]);
    let why = r.explain();
    assert_eq!(r.report["success"], false, "{why}");
    let reason = r.report.to_string();
    assert!(
        reason.contains("quota exhausted for this fake key"),
        "the failure does not say why\n{why}"
    );
}

#[test]
fn gemini_failure_says_why() {
    failure_says_why(&GEMINI, "gemini_failure_says_why");
}

/// A real CLI that cannot connect to awtui's MCP server (fault: a wrong
/// token in the agent's env) still answers, but the channel says once that
/// it ran without awtui's tools, and the run fails (`without_tools`)
/// instead of passing as a normal run. Claude Code says so in its `init`
/// event; Gemini CLI and opencode say nothing on stdout or stderr (their
/// warnings need `--debug` / `--print-logs`), so awtui's server notices
/// that they never listed its tools. Headless (the token an ACP agent
/// uses comes in `session/new`, not from its environment).
fn without_awtuis_tools(cli: &Cli, test: &str) {
    if isolated(module_path!(), test) {
        return;
    }
    bin_dir(cli.program);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let w = World::new();
    let workflow = format!(
        "name: real\nagents:\n  a:\n    backend: {}\n    model: {}\n    protocol: headless\n    timeout: 240s\n\
         \x20   env:\n      AWTUI_TOKEN: not-the-token\n\
         limits:\n  retries: 0\nkickoff: \"@a go\"\n",
        cli.backend, cli.model
    );
    let r = run(&w, &rt, &workflow, &[(cli, posts("never posted"))]);
    let why = r.explain();
    assert_eq!(r.from("a"), vec!["All done here."], "{why}");
    let warnings = r
        .from("system")
        .into_iter()
        .filter(|m| m.contains("a ran without awtui's tools"))
        .count();
    assert_eq!(warnings, 1, "{why}");
    assert_eq!(r.report["success"], false, "{why}");
    assert_eq!(r.report["outcome"]["outcome"], "without_tools", "{why}");
}

#[test]
fn a_turn_without_awtuis_tools_is_visible() {
    without_awtuis_tools(&CLAUDE, "a_turn_without_awtuis_tools_is_visible");
}

#[test]
fn a_gemini_turn_without_awtuis_tools_is_visible() {
    without_awtuis_tools(&GEMINI, "a_gemini_turn_without_awtuis_tools_is_visible");
}

#[test]
fn an_opencode_turn_without_awtuis_tools_is_visible() {
    without_awtuis_tools(
        &OPENCODE,
        "an_opencode_turn_without_awtuis_tools_is_visible",
    );
}

/// `permissions:` maps to Claude Code's own modes: read-only refuses a
/// write and the channel says so (the turn does not pass as a plain
/// success); workspace-write lets the same write through.
#[test]
fn claude_permissions_refuse_or_allow_a_write() {
    if isolated(module_path!(), "claude_permissions_refuse_or_allow_a_write") {
        return;
    }
    bin_dir(CLAUDE.program);
    let rt = tokio::runtime::Runtime::new().unwrap();
    for (permissions, allowed) in [("read-only", false), ("workspace-write", true)] {
        let w = World::new();
        let target = w.dir.join("made-by-agent.txt");
        let workflow = format!(
            "name: real\nagents:\n  a:\n    backend: claude\n    model: {}\n    protocol: headless\n    timeout: 240s\n\
             \x20   permissions: {permissions}\n\
             limits:\n  retries: 0\nkickoff: \"@a write the file\"\n",
            CLAUDE.model
        );
        let script = ModelScript {
            tool: "Write".into(),
            arguments: json!({"file_path": target.display().to_string(), "content": "hello\n"}),
            final_text: "Tried to write the file.".into(),
            refuse: None,
        };
        let r = run(&w, &rt, &workflow, &[(&CLAUDE, script)]);
        let why = r.explain();
        assert_eq!(target.exists(), allowed, "{permissions}\n{why}");
        let said = r
            .from("system")
            .into_iter()
            .filter(|m| {
                m.contains("a's CLI refused Write for lack of permission (permissions: read-only)")
            })
            .count();
        assert_eq!(said, usize::from(!allowed), "{permissions}\n{why}");
    }
}

/// An agent's `mcp:` gives its real CLI a second stdio MCP server (a tiny
/// fixture) next to awtui's: the tool list the CLI sends to the model holds
/// both awtui's `channel_send` and the fixture's tool, and the turn still
/// works through awtui's server.
fn extra_mcp_server_reaches_the_model(cli: &Cli, test: &str) {
    if isolated(module_path!(), test) {
        return;
    }
    bin_dir(cli.program);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let w = World::new();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fakes/extra_mcp_server.py");
    let workflow = format!(
        "name: real\nagents:\n  a:\n    backend: {}\n    model: {}\n    protocol: headless\n    timeout: 240s\n\
         \x20   mcp:\n      fixture:\n        command: python3\n        args: [\"{}\"]\n\
         limits:\n  retries: 0\nkickoff: \"@a go\"\n",
        cli.backend,
        cli.model,
        fixture.display()
    );
    let r = run(&w, &rt, &workflow, &[(cli, posts("@user both servers"))]);
    let why = r.explain();
    assert_eq!(r.report["success"], true, "{why}");
    assert_eq!(r.from("a"), vec!["@user both servers"], "{why}");
    assert!(
        r.requests
            .iter()
            .any(|q| q.raw.contains("channel_send") && q.raw.contains("fixture_echo_7f3a")),
        "the model was not offered both awtui's and the extra server's tools\n{why}"
    );
}

#[test]
fn claude_code_sees_an_extra_mcp_server() {
    extra_mcp_server_reaches_the_model(&CLAUDE, "claude_code_sees_an_extra_mcp_server");
}

#[test]
fn codex_sees_an_extra_mcp_server() {
    extra_mcp_server_reaches_the_model(&CODEX, "codex_sees_an_extra_mcp_server");
}

/// The user's own MCP servers (here one in `~/.claude.json`, the fixture)
/// are left out by default, so a run sees only awtui's and the agent's
/// `mcp:` servers; `keep_user_mcp: true` keeps them.
#[test]
fn claude_code_keeps_the_users_mcp_servers_only_when_asked() {
    if isolated(
        module_path!(),
        "claude_code_keeps_the_users_mcp_servers_only_when_asked",
    ) {
        return;
    }
    bin_dir(CLAUDE.program);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fakes/extra_mcp_server.py");
    for keep in [false, true] {
        let w = World::new();
        let home = w.tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            home.join(".claude.json"),
            json!({"mcpServers": {"mine": {"type": "stdio", "command": "python3",
                   "args": [fixture.display().to_string()]}}})
            .to_string(),
        )
        .unwrap();
        let workflow = format!(
            "name: real\nagents:\n  a:\n    backend: claude\n    model: {}\n    protocol: headless\n    timeout: 240s\n\
             \x20   keep_user_mcp: {keep}\n\
             limits:\n  retries: 0\nkickoff: \"@a go\"\n",
            CLAUDE.model
        );
        let r = run(&w, &rt, &workflow, &[(&CLAUDE, posts("@user hi"))]);
        let why = r.explain();
        assert_eq!(r.report["success"], true, "{why}");
        let offered = |tool: &str| r.requests.iter().any(|q| q.raw.contains(tool));
        assert!(offered("channel_send"), "{why}");
        assert_eq!(
            offered("fixture_echo_7f3a"),
            keep,
            "keep_user_mcp: {keep}\n{why}"
        );
    }
}

/// Codex, Gemini CLI and opencode: a server in the user's own config
/// (Codex's `config.toml`, Gemini's `~/.gemini/settings.json`, the
/// project's `opencode.json`) is left out by default and kept with
/// `keep_user_mcp: true`.
fn keeps_user_servers_only_when_asked(cli: &Cli, test: &str) {
    if isolated(module_path!(), test) {
        return;
    }
    bin_dir(cli.program);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fakes/extra_mcp_server.py");
    let fixture = fixture.display().to_string();
    for keep in [false, true] {
        let w = World::new();
        match cli.backend {
            "codex" => {
                let dir = w.tmp.path().join("codex-home");
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(
                    dir.join("config.toml"),
                    format!(
                        "[mcp_servers.mine]\ncommand = \"python3\"\nargs = [{}]\n\
                         default_tools_approval_mode = \"approve\"\n",
                        json!(fixture)
                    ),
                )
                .unwrap();
            }
            "gemini" => {
                // The user's own settings (a project's are not read in a
                // folder gemini does not trust).
                let dir = w.tmp.path().join("home/.gemini");
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(
                    dir.join("settings.json"),
                    json!({"mcpServers": {"mine": {"command": "python3", "args": [fixture], "trust": true}}})
                        .to_string(),
                )
                .unwrap();
            }
            _ => std::fs::write(
                w.dir.join("opencode.json"),
                json!({"mcp": {"mine": {"type": "local", "command": ["python3", fixture], "enabled": true}}})
                    .to_string(),
            )
            .unwrap(),
        }
        let workflow = format!(
            "name: real\nagents:\n  a:\n    backend: {}\n    model: {}\n    protocol: headless\n    timeout: 240s\n\
             \x20   keep_user_mcp: {keep}\n\
             limits:\n  retries: 0\nkickoff: \"@a go\"\n",
            cli.backend, cli.model
        );
        let r = run(&w, &rt, &workflow, &[(cli, posts("@user hi"))]);
        let why = r.explain();
        assert_eq!(r.report["success"], true, "{why}");
        let offered = |tool: &str| r.requests.iter().any(|q| q.raw.contains(tool));
        assert!(offered("channel_send"), "{why}");
        assert_eq!(
            offered("fixture_echo_7f3a"),
            keep,
            "keep_user_mcp: {keep}\n{why}"
        );
    }
}

#[test]
fn gemini_keeps_the_users_mcp_servers_only_when_asked() {
    keeps_user_servers_only_when_asked(
        &GEMINI,
        "gemini_keeps_the_users_mcp_servers_only_when_asked",
    );
}

#[test]
fn opencode_keeps_the_projects_mcp_servers_only_when_asked() {
    keeps_user_servers_only_when_asked(
        &OPENCODE,
        "opencode_keeps_the_projects_mcp_servers_only_when_asked",
    );
}

#[test]
fn codex_keeps_the_users_mcp_servers_only_when_asked() {
    keeps_user_servers_only_when_asked(&CODEX, "codex_keeps_the_users_mcp_servers_only_when_asked");
}

/// `permissions: ask` with the real Claude Code: each Bash command and
/// file write goes to awtui's `permission_request` and waits; the person
/// answers from the shell (`awtui approve|deny`): a Bash command allowed
/// once runs, a write denied with a reason does not happen and the model
/// receives the reason, an "always" answer lets the same command through
/// the second time without asking, and a workflow `deny` rule answers at
/// once. Every decision is a system line in the channel and a line of
/// `approvals.jsonl`.
#[test]
fn claude_asks_and_the_person_answers_from_the_shell() {
    if isolated(
        module_path!(),
        "claude_asks_and_the_person_answers_from_the_shell",
    ) {
        return;
    }
    bin_dir(CLAUDE.program);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let w = World::new();
    let denied = w.dir.join("denied.txt");
    let workflow = format!(
        "name: real\nagents:\n  a:\n    backend: claude\n    model: {}\n    protocol: headless\n    timeout: 240s\n\
         \x20   permissions: ask\n    approve:\n      deny: Bash(rm *)\n\
         limits:\n  retries: 0\nkickoff: \"@a do the work\"\n",
        CLAUDE.model
    );
    let steps = vec![
        (
            "Bash".to_string(),
            json!({"command": "echo once > once.txt"}),
        ),
        (
            "Write".to_string(),
            json!({"file_path": denied.display().to_string(), "content": "no\n"}),
        ),
        (
            "Bash".to_string(),
            json!({"command": "echo again >> always.txt"}),
        ),
        (
            "Bash".to_string(),
            json!({"command": "echo again >> always.txt"}),
        ),
        ("Bash".to_string(), json!({"command": "rm -f once.txt"})),
    ];
    let server = rt.block_on(llm_server::start_steps(steps, "Work done."));
    // The person: answers each request as it appears, from the shell.
    let mut answered: Vec<(u64, String)> = Vec::new();
    let mut answer = || {
        let out = w
            .cmd(&["approve", "--instance", "t", "--json"])
            .output()
            .unwrap();
        let Ok(pending) = serde_json::from_slice::<Vec<Value>>(&out.stdout) else {
            return;
        };
        for p in pending {
            let id = p["id"].as_u64().unwrap();
            if answered.iter().any(|(a, _)| *a == id) {
                continue;
            }
            let (tool, command) = (p["tool"].as_str().unwrap(), &p["input"]["command"]);
            let id_text = id.to_string();
            let args: Vec<&str> = match (tool, command.as_str()) {
                ("Bash", Some("echo once > once.txt")) => vec!["approve", &id_text],
                ("Write", _) => vec!["deny", &id_text, "--reason", "write the tests first"],
                ("Bash", Some("echo again >> always.txt")) => {
                    vec!["approve", &id_text, "--always"]
                }
                _ => vec!["deny", &id_text, "--reason", "unexpected"],
            };
            let mut full = args.clone();
            full.extend(["--instance", "t"]);
            let done = w.cmd(&full).output().unwrap();
            assert!(
                done.status.success(),
                "awtui {full:?}: {}",
                String::from_utf8_lossy(&done.stderr)
            );
            answered.push((id, format!("{tool} {}", command.as_str().unwrap_or(""))));
        }
    };
    let r = run_with(&w, &workflow, vec![(&CLAUDE, server)], &mut answer);
    let why = format!("answered: {answered:?}\n{}", r.explain());
    assert_eq!(
        answered
            .iter()
            .map(|(_, what)| what.as_str())
            .collect::<Vec<_>>(),
        [
            "Bash echo once > once.txt",
            "Write ",
            "Bash echo again >> always.txt"
        ],
        "the person was asked exactly these, once each\n{why}"
    );
    assert_eq!(
        std::fs::read_to_string(w.dir.join("once.txt"))
            .ok()
            .as_deref(),
        Some("once\n"),
        "the Bash command allowed once ran; the rm the rule denies did not\n{why}"
    );
    assert!(!denied.exists(), "the denied write happened\n{why}");
    assert_eq!(
        std::fs::read_to_string(w.dir.join("always.txt"))
            .ok()
            .as_deref(),
        Some("again\nagain\n"),
        "the always-allowed command ran twice\n{why}"
    );
    // The model received the person's reason and the rule's.
    let results: Vec<String> = r
        .requests
        .iter()
        .flat_map(|q| {
            q.body["messages"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter_map(|m| m["content"].as_array().cloned())
                .flatten()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| b["content"].to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        results.iter().any(|c| c.contains("write the tests first")),
        "the model never saw the reason\n{why}"
    );
    assert!(
        results
            .iter()
            .any(|c| c.contains("Denied by the workflow rule Bash(rm *)")),
        "the model never saw the rule's deny\n{why}"
    );
    let system = r.from("system");
    for line in [
        "approval #1: allowed Bash \"echo once > once.txt\" for a (user)",
        "approval #2: denied Write",
        "(user: write the tests first)",
        "approval #3: allowed Bash \"echo again >> always.txt\" for a (user, always Bash(echo again >> always.txt))",
        "approval #4: allowed Bash \"echo again >> always.txt\" for a (rule Bash(echo again >> always.txt))",
        "approval #5: denied Bash \"rm -f once.txt\" for a (rule Bash(rm *))",
    ] {
        assert!(
            system.iter().any(|m| m.contains(line)),
            "no system line with {line:?}\n{why}"
        );
    }
    // A call the person or a rule denied is reported as that, not as a
    // configuration problem.
    assert!(
        !system.iter().any(|m| m.contains("lack of permission")),
        "a denial read as a permissions: problem\n{why}"
    );
    let decided = cli_support::approval_decisions(&w.state);
    assert_eq!(decided.len(), 5, "{decided:?}\n{why}");
}

/// The real Claude Code stops waiting for `permission_request` after its
/// own MCP timeout (60 s unset: awtui sets `MCP_TOOL_TIMEOUT` to the
/// approval timeout for asking agents; the agent's `env:` sets 3 s here)
/// and goes on. The request it gave up on expires at once, everywhere: it
/// is no longer listed, a person who answers it now is told "expired: the
/// agent stopped waiting" and the command fails, and nothing ran. A second
/// agent (`b`, a command agent waiting for a file) keeps the instance open
/// while the person tries.
#[test]
fn claude_stopping_to_wait_expires_its_request() {
    if isolated(
        module_path!(),
        "claude_stopping_to_wait_expires_its_request",
    ) {
        return;
    }
    bin_dir(CLAUDE.program);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let w = World::new();
    let release = w.dir.join("release");
    let workflow = format!(
        "name: real\nagents:\n  a:\n    backend: claude\n    model: {}\n    protocol: headless\n    timeout: 240s\n\
         \x20   permissions: ask\n    env:\n      MCP_TOOL_TIMEOUT: \"3000\"\n\
         \x20 b:\n    backend: command\n    command: [sh, -c, 'while [ ! -e {} ]; do sleep 0.1; done; echo ok']\n\
         limits:\n  retries: 0\nkickoff: \"@a @b do the work\"\n",
        CLAUDE.model,
        release.display()
    );
    let steps = vec![(
        "Bash".to_string(),
        json!({"command": "echo late > late.txt"}),
    )];
    let server = rt.block_on(llm_server::start_steps(steps, "Work done."));
    let mut seen: Option<u64> = None;
    let mut late: Option<(i32, String)> = None;
    let mut person = || {
        if late.is_some() {
            return;
        }
        let out = w
            .cmd(&["approve", "--instance", "t", "--json"])
            .output()
            .unwrap();
        let Ok(pending) = serde_json::from_slice::<Vec<Value>>(&out.stdout) else {
            return;
        };
        match (seen, pending.first()) {
            (None, Some(p)) => seen = p["id"].as_u64(),
            // Claude gave up: the request is gone from the list; the
            // person answers it anyway.
            (Some(id), None) => {
                let out = w
                    .cmd(&["approve", &id.to_string(), "--instance", "t"])
                    .output()
                    .unwrap();
                late = Some((
                    out.status.code().unwrap_or(-1),
                    String::from_utf8_lossy(&out.stderr).into_owned(),
                ));
                std::fs::write(&release, "").unwrap();
            }
            _ => {}
        }
    };
    let r = run_with(&w, &workflow, vec![(&CLAUDE, server)], &mut person);
    let why = format!("seen: {seen:?}, late: {late:?}\n{}", r.explain());
    let (code, stderr) = late.clone().expect(&why);
    assert_ne!(code, 0, "the late approval succeeded\n{why}");
    assert!(
        stderr.contains("expired: the agent stopped waiting") && stderr.contains("nothing ran"),
        "{why}"
    );
    assert!(!w.dir.join("late.txt").exists(), "the command ran\n{why}");
    let decided = cli_support::approval_decisions(&w.state);
    assert_eq!(decided.len(), 1, "{decided:?}\n{why}");
    assert_eq!(decided[0]["expired"], true, "{decided:?}\n{why}");
    // Claude Code cancels the call (notifications/cancelled) when it
    // stops waiting: the request ends then, not with the turn.
    assert!(
        decided[0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("the CLI cancelled the call")),
        "{decided:?}\n{why}"
    );
    let system = r.from("system");
    assert!(
        system
            .iter()
            .any(|m| m.contains("approval #1: expired: the agent stopped waiting")),
        "{why}"
    );
    assert!(
        !system.iter().any(|m| m.contains("allowed")),
        "nothing may read as allowed\n{why}"
    );
}

/// Issue 23's team story with the real CLIs of three vendors, the scripted
/// model driving them through awtui's task tools: Claude Code (`lead`)
/// plans two tasks once, one for each worker; Codex (`coder`) and opencode
/// (`tester`) are woken by the announcement, register, claim their task and
/// complete it. The run ends with each task completed exactly once by its
/// worker, one workflow, and each agent answering once: the lead is not
/// woken by its own plan's announcement, and nobody by a message that was
/// not news for it.
#[test]
fn a_team_of_three_vendors_plans_claims_and_finishes_together() {
    if isolated(
        module_path!(),
        "a_team_of_three_vendors_plans_claims_and_finishes_together",
    ) {
        return;
    }
    for cli in [&CLAUDE, &CODEX, &OPENCODE] {
        bin_dir(cli.program);
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let w = World::new();
    let workflow = format!(
        "name: real\nagents:\n  lead:\n    backend: claude\n    model: {}\n    protocol: headless\n    timeout: 240s\n\
         \x20 coder:\n    backend: codex\n    model: {}\n    protocol: headless\n    timeout: 240s\n\
         \x20 tester:\n    backend: opencode\n    model: {}\n    protocol: headless\n    timeout: 240s\n\
         limits:\n  retries: 0\nkickoff: \"@lead plan the work for the team\"\n",
        CLAUDE.model, CODEX.model, OPENCODE.model
    );
    let step = |tool: &str, args: Value| (tool.to_string(), args);
    let lead = vec![
        step("workflow_create", json!({"name": "ship"})),
        step(
            "workflow_set_plan",
            json!({"id": "{wf}", "plan": {"summary": "two parts", "tasks": [
                {"name": "alpha-part", "assignee": "coder"},
                {"name": "beta-part", "assignee": "tester"}]}}),
        ),
    ];
    let worker = |me: &str, runtime: &str, task: &str| {
        vec![
            step("agent_register", json!({"name": me, "runtime": runtime})),
            step(
                "task_claim",
                json!({"task_id": format!("{{task:{task}}}"), "agent_id": "{ag}"}),
            ),
            step(
                "task_update_status",
                json!({"id": format!("{{task:{task}}}"), "status": "completed",
                       "outcome": format!("{task} by {me}")}),
            ),
        ]
    };
    let servers = vec![
        (
            &CLAUDE,
            rt.block_on(llm_server::start_steps_any(lead, "Planned.")),
        ),
        (
            &CODEX,
            rt.block_on(llm_server::start_steps_any(
                worker("coder", "codex", "alpha-part"),
                "Alpha done.",
            )),
        ),
        (
            &OPENCODE,
            rt.block_on(llm_server::start_steps_any(
                worker("tester", "opencode", "beta-part"),
                "Beta done.",
            )),
        ),
    ];
    let r = run_with(&w, &workflow, servers, &mut || {});
    let why = r.explain();
    assert_eq!(r.report["success"], true, "{why}");
    let board = &r.report["tasks"];
    assert_eq!(
        board["workflows"].as_array().map(Vec::len),
        Some(1),
        "one workflow: {board}\n{why}"
    );
    let mut done: Vec<(String, String, String)> = board["tasks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            (
                t["name"].as_str().unwrap_or("").to_string(),
                t["status"].as_str().unwrap_or("").to_string(),
                t["outcome"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    done.sort();
    assert_eq!(
        done,
        [
            (
                "alpha-part".to_string(),
                "completed".to_string(),
                "alpha-part by coder".to_string()
            ),
            (
                "beta-part".to_string(),
                "completed".to_string(),
                "beta-part by tester".to_string()
            ),
        ],
        "{why}"
    );
    for (agent, answer) in [
        ("lead", "Planned."),
        ("coder", "Alpha done."),
        ("tester", "Beta done."),
    ] {
        let answers = r.from(agent).iter().filter(|m| m.contains(answer)).count();
        assert_eq!(answers, 1, "{agent} answered {answers} times\n{why}");
    }
    let news: Vec<String> = r
        .from("system")
        .into_iter()
        .filter(|m| m.contains("ready to claim"))
        .collect();
    assert!(!news.is_empty(), "{why}");
    assert!(
        news.iter().all(|m| !m.contains("@lead")),
        "the lead was woken by its own plan: {news:?}\n{why}"
    );
}

/// Claude Code under `sandbox: true` (real bubblewrap) in its worktree:
/// the turn runs offline against the fake model, the file it writes lands
/// in its worktree and is committed on its branch, and awtui's tools work
/// from inside the sandbox.
#[test]
fn claude_code_works_in_a_sandbox() {
    if isolated(module_path!(), "claude_code_works_in_a_sandbox") {
        return;
    }
    bin_dir(CLAUDE.program);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let w = World::new();
    cli_support::init_repo(&w.dir, &[("src/lib.txt", "code\n")]);
    let target = awtui::workspace::worktrees_root(&w.dir, "t").join("a/made-in-sandbox.txt");
    let workflow = format!(
        "name: real\nagents:\n  a:\n    backend: claude\n    model: {}\n    protocol: headless\n    timeout: 240s\n\
         \x20   permissions: full\n    workspace: worktree\n    sandbox: true\n\
         limits:\n  retries: 0\nkickoff: \"@a write the file\"\n",
        CLAUDE.model
    );
    let script = ModelScript {
        tool: "Write".into(),
        arguments: json!({"file_path": target.display().to_string(), "content": "boxed\n"}),
        final_text: "Wrote it.".into(),
        refuse: None,
    };
    let r = run(&w, &rt, &workflow, &[(&CLAUDE, script)]);
    let why = r.explain();
    assert_eq!(r.report["success"], true, "{why}");
    let files = cli_support::git(&w.dir, &["ls-tree", "-r", "--name-only", "awtui/t/a"]);
    assert!(
        files.contains("made-in-sandbox.txt"),
        "not committed: {files}\n{why}"
    );
    assert!(
        !w.dir.join("made-in-sandbox.txt").exists(),
        "the write landed in the shared checkout"
    );
}
