//! Workflow files: every field, defaults, each validation error with its
//! position, interpolation and setup.

use std::path::{Path, PathBuf};
use std::time::Duration;

use awtui::workflow::setup::{SetupError, prepare};
use awtui::workflow::{
    BackendKind, ContextConfig, LoadError, Loaded, PromptSource, load, load_str,
};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn ok(text: &str) -> Loaded {
    let dir = tempfile::tempdir().unwrap();
    load_str(text, &dir.path().join("review.yaml")).unwrap_or_else(|e| panic!("{e}"))
}

/// Every error line (rendered as `file:line:col: error: …`).
fn errors(text: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    match load_str(text, &dir.path().join("w.yaml")) {
        Ok(_) => panic!("expected errors for:\n{text}"),
        Err(LoadError::Invalid(d)) => d
            .errors()
            .into_iter()
            .map(|e| format!("{}:{}: {}", e.pos.line, e.pos.col, e.message))
            .collect(),
        Err(e) => panic!("{e}"),
    }
}

fn assert_error(text: &str, at: &str, needle: &str) {
    let errs = errors(text);
    assert!(
        errs.iter()
            .any(|e| e.starts_with(&format!("{at}: ")) && e.contains(needle)),
        "no error at {at} containing {needle:?} in {errs:#?}"
    );
}

#[test]
fn the_seed_example_loads_with_defaults() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "prompts/reviewer.md",
        "Review ${{ workflow.name }}.",
    );
    write(dir.path(), "prompts/coder.md", "Code.");
    let path = write(
        dir.path(),
        "review.yaml",
        "# review.yaml\nagents:\n  reviewer:\n    model: anthropic/claude-sonnet-4-5\n    system_prompt: prompts/reviewer.md\n  coder:\n    model: anthropic/claude-sonnet-4-5\n    system_prompt: prompts/coder.md\nsetup:\n  - shell: echo diff-text\n    as: diff\nkickoff: |\n  PR diff:\n  ${{ diff }}\n\n  @reviewer please review these changes.\n",
    );
    let loaded = load(&path).unwrap();
    let w = &loaded.workflow;
    assert_eq!(w.name, "review", "name defaults to the file stem");
    assert_eq!(w.agent_names(), vec!["reviewer", "coder"]);
    let reviewer = w.agent("reviewer").unwrap();
    assert_eq!(reviewer.backend, BackendKind::Anthropic);
    assert_eq!(reviewer.system_prompt.value, "Review ${{ workflow.name }}.");
    assert!(
        matches!(&reviewer.prompt_source, PromptSource::File(p) if p.ends_with("prompts/reviewer.md"))
    );
    let ContextConfig::File(files) = &w.context else {
        panic!("{:?}", w.context)
    };
    assert_eq!(files.channel, "channel.md");
    assert_eq!(files.document, "notes.md");
    assert!(loaded.warnings.warnings().is_empty());

    let prepared = prepare(w, "pr-123").unwrap();
    assert_eq!(
        prepared.kickoff.as_deref(),
        Some("PR diff:\ndiff-text\n\n@reviewer please review these changes.\n")
    );
    assert_eq!(prepared.system_prompts["reviewer"], "Review review.");
    assert_eq!(
        prepared.context_dir.unwrap(),
        dir.path().join(".workflow/pr-123/")
    );
}

#[test]
fn every_agent_field_parses() {
    let l = ok(r#"
name: full
agents:
  runner:
    backend: command
    command: ./agents/x.sh --flag "two words"
    system_prompt: You run things.
    tools: [bash, read]
    max_turns: 7
    timeout: 1h30m
    env:
      MODE: fast
      LEVEL: 3
  lister:
    command: [python3, -c, "print(1)"]
  cc:
    backend: claude
    model: sonnet
  local:
    model: ollama/llama3
"#);
    let w = &l.workflow;
    let r = w.agent("runner").unwrap();
    assert_eq!(r.backend, BackendKind::Command);
    assert_eq!(
        r.command.as_deref().unwrap(),
        ["./agents/x.sh", "--flag", "two words"]
    );
    assert_eq!(r.system_prompt.value, "You run things.");
    assert_eq!(r.prompt_source, PromptSource::Inline);
    assert_eq!(r.tools, vec!["bash", "read"]);
    assert_eq!(r.max_turns, Some(7));
    assert_eq!(r.timeout, Some(Duration::from_secs(5400)));
    let env: Vec<(&str, &str)> = r
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.value.as_str()))
        .collect();
    assert_eq!(env, vec![("MODE", "fast"), ("LEVEL", "3")]);
    assert_eq!(
        w.agent("lister").unwrap().backend,
        BackendKind::Command,
        "command implies the backend"
    );
    assert_eq!(w.agent("cc").unwrap().backend, BackendKind::Claude);
    assert_eq!(w.agent("local").unwrap().backend, BackendKind::Openai);
}

#[test]
fn context_forms() {
    let agents = "agents:\n  a:\n    model: anthropic/m\n";
    let w = ok(&format!("{agents}context:\n")).workflow;
    assert!(
        matches!(w.context, ContextConfig::File(_)),
        "null means the default file provider"
    );
    let w = ok(&format!("{agents}context: false\n")).workflow;
    assert_eq!(w.context, ContextConfig::Disabled);
    let w = ok(&format!("{agents}context:\n  provider: memory\n")).workflow;
    assert!(matches!(w.context, ContextConfig::Memory(_)));
    let w = ok(&format!(
        "{agents}context:\n  provider: file\n  config:\n    dir: ./my-context/${{{{ workflow.instance }}}}\n    channel: discussion.md\n    document: workspace.md\n    documents:\n      - goals.md\n      - findings/auth.md\n"
    ))
    .workflow;
    let ContextConfig::File(f) = &w.context else {
        panic!()
    };
    assert_eq!(f.dir.value, "./my-context/${{ workflow.instance }}");
    assert_eq!(
        (f.channel.as_str(), f.document.as_str()),
        ("discussion.md", "workspace.md")
    );
    assert_eq!(f.documents, vec!["goals.md", "findings/auth.md"]);
    let p = prepare(&w, "x1").unwrap();
    assert!(p.context_dir.unwrap().ends_with("my-context/x1"));
    assert_eq!(
        p.vars.get("context.channel").unwrap(),
        w.base_dir
            .join("./my-context/x1/discussion.md")
            .display()
            .to_string()
    );
}

#[test]
fn yaml_syntax_errors_point_at_the_line() {
    assert_error("agents:\n  a: [1, 2\n", "2:6", "invalid YAML");
}

#[test]
fn unknown_keys_suggest_the_right_one() {
    assert_error(
        "agents:\n  a:\n    modle: anthropic/x\n",
        "3:5",
        "unknown key 'modle' in agent 'a' (did you mean 'model'?)",
    );
    assert_error(
        "kickof: hi\nagents:\n  a:\n    model: anthropic/x\n",
        "1:1",
        "did you mean 'kickoff'?",
    );
    assert_error(
        "agents:\n  a:\n    model: anthropic/x\ncontext:\n  config:\n    chanel: x.md\n",
        "6:5",
        "did you mean 'channel'?",
    );
    assert_error(
        "agents:\n  a:\n    model: anthropic/x\nsetup:\n  - shel: ls\n",
        "5:5",
        "did you mean 'shell'?",
    );
}

#[test]
fn missing_or_empty_agents() {
    assert_error("name: x\n", "1:1", "missing 'agents'");
    assert_error("agents:\n", "1:7", "'agents' is empty");
    assert_error("", "1:1", "missing 'agents'");
}

#[test]
fn agent_names_must_be_mentionable_and_not_reserved() {
    assert_error(
        "agents:\n  2bot:\n    model: anthropic/x\n",
        "2:3",
        "'2bot' is not a valid agent name",
    );
    assert_error(
        "agents:\n  my bot:\n    model: anthropic/x\n",
        "2:3",
        "not a valid agent name",
    );
    for reserved in ["system", "user", "all"] {
        assert_error(
            &format!("agents:\n  {reserved}:\n    model: anthropic/x\n"),
            "2:3",
            "is reserved",
        );
    }
    assert_error(
        "agents:\n  a:\n    model: anthropic/x\n  a:\n    model: anthropic/y\n",
        "4:3",
        "defined twice (first at line 2)",
    );
}

#[test]
fn a_missing_system_prompt_file_is_an_error_naming_it() {
    assert_error(
        "agents:\n  a:\n    model: anthropic/x\n    system_prompt: prompts/nope.md\n",
        "4:20",
        "system_prompt file 'prompts/nope.md' does not exist",
    );
}

#[test]
fn backend_problems() {
    assert_error(
        "agents:\n  a:\n    backend: claud\n",
        "3:14",
        "unknown backend 'claud' (did you mean 'claude'?)",
    );
    assert_error(
        "agents:\n  a:\n    model: gpt-4\n",
        "2:3",
        "cannot tell which backend runs model 'gpt-4'",
    );
    assert_error(
        "agents:\n  a:\n    backend: command\n",
        "2:3",
        "needs 'command:",
    );
    assert_error(
        "agents:\n  a:\n    backend: claude\n    command: ls\n",
        "4:14",
        "only used with backend: command",
    );
    assert_error(
        "agents:\n  a:\n    backend: gemini\n",
        "2:3",
        "needs a 'model'",
    );
    assert_error(
        "agents:\n  a:\n    system_prompt: hi\n",
        "2:3",
        "needs a 'model'",
    );
}

#[test]
fn typed_fields_are_checked() {
    let base = "agents:\n  a:\n    model: anthropic/x\n";
    assert_error(
        &format!("{base}    max_turns: 0\n"),
        "4:16",
        "max_turns must be a whole number",
    );
    assert_error(&format!("{base}    max_turns: lots\n"), "4:16", "max_turns");
    assert_error(
        &format!("{base}    timeout: forever\n"),
        "4:14",
        "'forever' is not a duration",
    );
    assert_error(
        &format!("{base}    tools: bash\n"),
        "4:12",
        "tools must be a list",
    );
    assert_error(
        &format!("{base}    env:\n      1BAD: x\n"),
        "5:7",
        "not an environment variable name",
    );
    assert_error(
        &format!("{base}context: 3\n"),
        "4:10",
        "context must be false, empty, or a mapping",
    );
    assert_error(
        &format!("{base}context:\n  provider: fil\n"),
        "5:13",
        "did you mean 'file'?",
    );
    assert_error(
        &format!("{base}context:\n  provider: memory\n  config:\n    dir: x\n"),
        "7:5",
        "memory provider keeps no files",
    );
    assert_error(
        &format!("{base}context:\n  config:\n    documents: [../x.md]\n"),
        "6:17",
        "'../x.md' refused",
    );
    assert_error(&format!("{base}setup: ls\n"), "4:8", "setup must be a list");
    assert_error(
        &format!("{base}setup:\n  - as: x\n"),
        "5:5",
        "has no 'shell'",
    );
    assert_error(
        &format!("{base}setup:\n  - shell: ls\n    as: env\n"),
        "6:9",
        "reserved variable name",
    );
}

#[test]
fn every_error_is_reported_not_only_the_first() {
    let errs = errors("agents:\n  a:\n    modle: x\n  user:\n    model: anthropic/x\nkickof: x\n");
    assert!(errs.len() >= 3, "{errs:#?}");
}

#[test]
fn unknown_variables_are_errors_naming_them() {
    // Each error points at the `${{` of its variable, not at the string.
    let base = "agents:\n  a:\n    model: anthropic/x\n";
    assert_error(
        &format!("{base}setup:\n  - shell: echo\n    as: diff\nkickoff: \"${{{{ dif }}}} @a\"\n"),
        "7:11",
        "unknown variable 'dif' in ${{ dif }} (did you mean 'diff'?)",
    );
    assert_error(
        &format!("{base}kickoff: \"${{{{ env.AWTUI_TEST_SURELY_UNSET }}}} @a\"\n"),
        "4:11",
        "AWTUI_TEST_SURELY_UNSET, which is not set",
    );
    // A setup step may use only the outputs of earlier steps.
    assert_error(
        &format!(
            "{base}setup:\n  - shell: echo ${{{{ later }}}}\n  - shell: echo hi\n    as: later\n"
        ),
        "5:17",
        "unknown variable 'later'",
    );
    assert_error(
        &format!("{base}context: false\nkickoff: \"${{{{ context.channel }}}} @a\"\n"),
        "5:11",
        "context is disabled",
    );
    assert_error(
        &format!("{base}kickoff: \"${{{{ oops @a\"\n"),
        "4:10",
        "unclosed",
    );
}

#[test]
fn kickoff_mention_warnings() {
    let base = "agents:\n  coder:\n    model: anthropic/x\n";
    let l = ok(&format!("{base}kickoff: hello everyone\n"));
    let w: Vec<String> = l
        .warnings
        .warnings()
        .iter()
        .map(|d| d.message.clone())
        .collect();
    assert!(w.iter().any(|m| m.contains("mentions no agent")), "{w:?}");
    let l = ok(&format!("{base}kickoff: \"@codr please start\"\n"));
    let w: Vec<String> = l
        .warnings
        .warnings()
        .iter()
        .map(|d| d.message.clone())
        .collect();
    assert!(
        w.iter()
            .any(|m| m.contains("@codr, which is not an agent")
                && m.contains("did you mean '@coder'")),
        "{w:?}"
    );
    let l = ok(&format!("{base}kickoff: \"@coder go, tell @user\"\n"));
    assert!(l.warnings.warnings().is_empty());
}

#[test]
fn setup_outputs_feed_later_steps_and_the_kickoff() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "marker.txt", "from-the-workflow-folder");
    let path = write(
        dir.path(),
        "w.yaml",
        "name: wf\nagents:\n  a:\n    model: anthropic/x\n    system_prompt: \"you are in ${{ workflow.name }}/${{ workflow.instance }}\"\n    env:\n      DIFF: \"${{ second }}\"\nsetup:\n  - shell: cat marker.txt\n    as: first\n  - shell: \"printf '  %s-2  \\n' ${{ first }}\"\n    as: second\nkickoff: \"@a ${{ second }}\"\n",
    );
    let w = load(&path).unwrap().workflow;
    let p = prepare(&w, "i1").unwrap();
    assert_eq!(
        p.kickoff.as_deref(),
        Some("@a from-the-workflow-folder-2"),
        "stdout is trimmed"
    );
    assert_eq!(p.system_prompts["a"], "you are in wf/i1");
    assert_eq!(
        p.agent_env["a"],
        vec![("DIFF".to_string(), "from-the-workflow-folder-2".to_string())]
    );
}

#[test]
fn a_failing_setup_step_stops_the_start_with_status_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "w.yaml",
        "agents:\n  a:\n    model: anthropic/x\nsetup:\n  - shell: echo ok\n  - shell: echo boom >&2; exit 3\n",
    );
    let w = load(&path).unwrap().workflow;
    let err = prepare(&w, "default").unwrap_err();
    assert!(matches!(err, SetupError::Failed { step: 2, .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("setup step 2 failed with exit status: 3"),
        "{text}"
    );
    assert!(text.contains("boom"), "{text}");
}

#[test]
fn instance_names_must_be_folder_safe() {
    let w = ok("agents:\n  a:\n    model: anthropic/x\n").workflow;
    for bad in ["", "../x", "a/b", ".hidden", "with space"] {
        assert!(
            matches!(prepare(&w, bad), Err(SetupError::InstanceName(_))),
            "{bad}"
        );
    }
}

#[test]
fn limits_and_api_settings_parse_and_are_checked() {
    let w = ok("agents:\n  a:\n    model: openai/gpt-5\n    base_url: http://127.0.0.1:8000/v1\n    api_key_env: MY_KEY\nlimits:\n  max_turns: 30\n  agent_max_turns: 5\n  wall_clock: 20m\n  cost_usd: 2.5\n  retries: 0\n  retry_backoff: 500ms\n  stall_after: 90s\n  loop_repeats: 0\n").workflow;
    let l = &w.limits;
    assert_eq!(
        (l.max_turns, l.agent_max_turns, l.retries, l.loop_repeats),
        (Some(30), Some(5), Some(0), Some(0))
    );
    assert_eq!(l.wall_clock, Some(Duration::from_secs(1200)));
    assert_eq!(l.cost_usd, Some(2.5));
    assert_eq!(l.retry_backoff, Some(Duration::from_millis(500)));
    assert_eq!(l.stall_after, Some(Duration::from_secs(90)));
    let a = w.agent("a").unwrap();
    assert_eq!(
        (a.base_url.as_deref(), a.api_key_env.as_deref()),
        (Some("http://127.0.0.1:8000/v1"), Some("MY_KEY"))
    );

    let base = "agents:\n  a:\n    model: anthropic/x\n";
    assert_error(
        &format!("{base}limits:\n  max_turn: 3\n"),
        "5:3",
        "did you mean 'max_turns'?",
    );
    assert_error(
        &format!("{base}limits:\n  cost_usd: -1\n"),
        "5:13",
        "positive amount",
    );
    assert_error(
        &format!("{base}limits:\n  wall_clock: soon\n"),
        "5:15",
        "not a duration",
    );
    assert_error(
        "agents:\n  a:\n    backend: claude\n    base_url: http://x\n",
        "4:15",
        "only used by the anthropic and openai backends",
    );
}

#[test]
fn permissions_are_one_of_three_and_default_to_workspace_write() {
    assert_error(
        "agents:\n  a:\n    backend: claude\n    permissions: read-onyl\n",
        "4:18",
        "unknown permissions 'read-onyl' (did you mean 'read-only'?); one of: read-only, workspace-write, full, ask",
    );
    let loaded = awtui::workflow::load_str(
        "agents:\n  a:\n    backend: claude\n  b:\n    backend: codex\n    permissions: full\n",
        std::path::Path::new("/tmp/w.yaml"),
    )
    .unwrap();
    let p: Vec<_> = loaded
        .workflow
        .agents
        .iter()
        .map(|a| a.permissions)
        .collect();
    assert_eq!(
        p,
        [
            awtui::workflow::Permissions::WorkspaceWrite,
            awtui::workflow::Permissions::Full
        ]
    );
}

#[test]
fn args_that_awtui_controls_are_refused_by_name() {
    assert_error(
        "agents:\n  a:\n    backend: claude\n    args: [\"--add-dir\", \"../lib\", \"--output-format=text\", \"--model\", \"x\"]\n",
        "4:11",
        "agent 'a': args: '--output-format', '--model' are set by awtui for claude",
    );
    assert_error(
        "agents:\n  a:\n    command: [\"./x.sh\"]\n    args: [\"-v\"]\n",
        "4:11",
        "'args' is for agent CLIs, not the command backend (put the arguments in 'command:')",
    );
    let loaded = awtui::workflow::load_str(
        "agents:\n  a:\n    backend: gemini\n    model: gemini-2.5-pro\n    args: [\"--include-directories\", \"../docs\"]\n",
        std::path::Path::new("/tmp/w.yaml"),
    )
    .unwrap();
    assert_eq!(
        loaded.workflow.agents[0].args,
        ["--include-directories", "../docs"]
    );
}

#[test]
fn protocols_turn_each_one_on_and_default_to_all() {
    assert_error(
        "agents:\n  a:\n    backend: claude\n    protocols: [aop, mial]\n",
        "4:16",
        "unknown protocol 'mial' (did you mean 'mail'?)",
    );
    let loaded = awtui::workflow::load_str(
        "agents:\n  a:\n    backend: claude\n  b:\n    backend: codex\n    protocols: [ops]\n",
        std::path::Path::new("/tmp/w.yaml"),
    )
    .unwrap();
    let a = loaded.workflow.agents[0].protocols;
    let b = loaded.workflow.agents[1].protocols;
    assert!(a.aop && a.ops && a.mail);
    assert!(!b.aop && b.ops && !b.mail);
}

#[test]
fn extra_mcp_servers_load_per_agent_and_default_to_dropping_the_users() {
    use awtui::workflow::McpTransport;
    let loaded = awtui::workflow::load_str(
        "agents:\n  a:\n    backend: claude\n    keep_user_mcp: true\n    mcp:\n      gh:\n        command: gh-mcp\n        args: [--stdio]\n        env: {GH_HOST: example.com}\n      docs:\n        url: https://docs.example/mcp\n        headers: {Authorization: \"Bearer ${DOCS_TOKEN}\"}\n  b:\n    backend: codex\n",
        std::path::Path::new("/tmp/w.yaml"),
    )
    .unwrap();
    let a = &loaded.workflow.agents[0];
    assert!(a.keep_user_mcp);
    assert_eq!(a.mcp.len(), 2);
    assert_eq!(a.mcp[0].name, "gh");
    assert_eq!(
        a.mcp[0].transport,
        McpTransport::Stdio {
            command: "gh-mcp".into(),
            args: vec!["--stdio".into()],
            env: vec![("GH_HOST".into(), "example.com".into())],
        }
    );
    assert_eq!(
        a.mcp[1].transport,
        McpTransport::Http {
            url: "https://docs.example/mcp".into(),
            headers: vec![("Authorization".into(), "Bearer ${DOCS_TOKEN}".into())],
        }
    );
    let b = &loaded.workflow.agents[1];
    assert!(!b.keep_user_mcp && b.mcp.is_empty());
}

#[test]
fn malformed_mcp_entries_are_reported_where_they_are() {
    assert_error(
        "agents:\n  a:\n    backend: claude\n    mcp:\n      gh:\n        args: [x]\n",
        "6:9",
        "agent 'a': mcp.gh: needs 'command' (a stdio server: command, args, env) or 'url'",
    );
    assert_error(
        "agents:\n  a:\n    backend: claude\n    mcp:\n      gh:\n        command: gh-mcp\n        url: http://x\n",
        "6:9",
        "mcp.gh: give either 'command' (a stdio server) or 'url' (an HTTP server), not both",
    );
    assert_error(
        "agents:\n  a:\n    backend: codex\n    mcp:\n      gh:\n        command: gh-mcp\n        headers: {A: b}\n",
        "7:9",
        "mcp.gh: unknown key 'headers'; this server takes command, args, env",
    );
    assert_error(
        "agents:\n  a:\n    backend: gemini\n    model: g\n    mcp:\n      docs:\n        url: ftp://x\n",
        "7:14",
        "mcp.docs.url: 'ftp://x' is not an http:// or https:// URL",
    );
    assert_error(
        "agents:\n  a:\n    backend: claude\n    mcp:\n      awtui:\n        url: http://x\n",
        "5:7",
        "mcp.awtui: the name 'awtui' is awtui's own server",
    );
    assert_error(
        "agents:\n  a:\n    backend: claude\n    mcp: [gh]\n",
        "4:10",
        "agent 'a': mcp must be a mapping, found a list",
    );
    assert_error(
        "agents:\n  a:\n    backend: claude\n    keep_user_mcp: yes please\n",
        "4:20",
        "keep_user_mcp must be true or false",
    );
}

#[test]
fn extra_mcp_servers_need_a_context() {
    assert_error(
        "context: false\nagents:\n  a:\n    backend: claude\n    mcp:\n      gh:\n        command: gh-mcp\n",
        "6:7",
        "agent 'a': 'mcp' servers are handed to the CLI next to awtui's, and with context: false",
    );
}

#[test]
fn api_backends_say_extra_mcp_servers_are_not_supported() {
    assert_error(
        "agents:\n  bot:\n    model: anthropic/claude-x\n    mcp:\n      gh:\n        command: gh-mcp\n",
        "5:7",
        "agent 'bot': 'mcp' is not supported by the anthropic backend",
    );
}

#[test]
fn approve_rules_parse_and_mean_permissions_ask() {
    let loaded = ok(
        "agents:\n  a:\n    backend: claude\n    approve:\n      allow: [\"Bash(git status*)\", Read]\n      deny: Bash(rm *)\n      ask:\n        - Write\nlimits:\n  approval_timeout: 2m\n",
    );
    let a = &loaded.workflow.agents[0];
    assert_eq!(a.permissions, awtui::workflow::Permissions::Ask);
    let shown =
        |rules: &[awtui::approvals::Rule]| rules.iter().map(|r| r.to_string()).collect::<Vec<_>>();
    assert_eq!(shown(&a.approve.allow), ["Bash(git status*)", "Read"]);
    assert_eq!(shown(&a.approve.deny), ["Bash(rm *)"]);
    assert_eq!(shown(&a.approve.ask), ["Write"]);
    assert_eq!(
        loaded.workflow.limits.approval_timeout,
        Some(std::time::Duration::from_secs(120))
    );
}

/// An asking agent's own `MCP_TOOL_TIMEOUT` shorter than the approval
/// timeout makes its CLI stop waiting first: a warning at the entry.
#[test]
fn a_short_mcp_tool_timeout_on_an_asking_agent_is_warned_about() {
    let warned = |yaml: &str| -> Vec<String> {
        ok(yaml)
            .warnings
            .warnings()
            .iter()
            .map(|d| format!("{}:{} {}", d.pos.line, d.pos.col, d.message))
            .collect()
    };
    let w = warned(
        "agents:\n  a:\n    backend: claude\n    permissions: ask\n    env:\n      MCP_TOOL_TIMEOUT: \"60000\"\nlimits:\n  approval_timeout: 5m\n",
    );
    assert!(
        w.iter().any(|m| m.starts_with("6:25 ")
            && m.contains("MCP_TOOL_TIMEOUT 60000 ms is shorter than the approval timeout (5m)")),
        "{w:?}"
    );
    let w = warned(
        "agents:\n  a:\n    backend: claude\n    permissions: ask\n    env:\n      MCP_TOOL_TIMEOUT: \"900000\"\nlimits:\n  approval_timeout: 5m\n",
    );
    assert!(w.is_empty(), "{w:?}");
}

#[test]
fn approve_rules_are_checked_where_they_are_written() {
    assert_error(
        "agents:\n  a:\n    backend: claude\n    approve:\n      allow: [\"Bash(git\"]\n",
        "5:15",
        "approve.allow: 'Bash(git' is not Tool or Tool(pattern)",
    );
    assert_error(
        "agents:\n  a:\n    backend: claude\n    approve:\n      alow: Bash\n",
        "5:7",
        "unknown key 'alow' in agent 'a': approve (did you mean 'allow'?)",
    );
    assert_error(
        "agents:\n  a:\n    backend: claude\n    permissions: full\n    approve:\n      allow: Bash\n",
        "6:7",
        "approve: rules answer the CLI's questions, so they need permissions: ask (this agent has permissions: full)",
    );
}

#[test]
fn permissions_ask_is_refused_for_clis_without_a_permission_hook() {
    // Over ACP every CLI can ask (issue 35); headless only Claude Code.
    for backend in ["codex", "opencode", "cursor"] {
        assert_error(
            &format!(
                "agents:\n  a:\n    backend: {backend}\n    permissions: ask\n    protocol: headless\n"
            ),
            "4:18",
            &format!("{backend} with protocol: headless has no such hook"),
        );
        ok(&format!(
            "agents:\n  a:\n    backend: {backend}\n    permissions: ask\n"
        ));
    }
    assert_error(
        "agents:\n  a:\n    backend: gemini\n    model: gemini-2.5-flash\n    protocol: headless\n    approve:\n      allow: Bash\n",
        "7:7",
        "Claude Code headless",
    );
    for (backend, why) in [
        ("command", "the command backend does not speak ACP"),
        ("openai", "the openai backend does not speak ACP"),
    ] {
        let extra = if backend == "command" {
            "    command: [x]\n"
        } else {
            "    model: openai/x\n"
        };
        assert_error(
            &format!("agents:\n  a:\n    backend: {backend}\n{extra}    protocol: acp\n"),
            "5:15",
            why,
        );
    }
    assert_error(
        "agents:\n  a:\n    backend: acp\n    command: [x]\n    protocol: headless\n",
        "5:15",
        "backend: acp is ACP only",
    );
    assert_error(
        "agents:\n  a:\n    backend: acp\n",
        "2:3",
        "backend 'acp' needs the ACP agent to run",
    );
    assert_error(
        "agents:\n  a:\n    backend: gemini\n    model: m\n    protocol: acpp\n",
        "5:15",
        "unknown protocol 'acpp' (did you mean 'acp'?)",
    );
}

/// Issue 23 (7): `tools:` is applied by the backends that can allow a
/// tool by name (claude: `--allowedTools`; opencode: its `permission`
/// config); every other backend gets a warning at the list, naming it.
#[test]
fn tools_a_backend_cannot_apply_are_warned_about_where_they_are_written() {
    let warned = |yaml: &str| -> Vec<String> {
        ok(yaml)
            .warnings
            .warnings()
            .iter()
            .map(|d| format!("{}:{} {}", d.pos.line, d.pos.col, d.message))
            .collect()
    };
    for (backend, extra) in [
        ("codex", ""),
        ("gemini", "    model: gemini-2.5-flash\n"),
        ("cursor", ""),
        ("command", "    command: ./x.sh\n"),
        ("anthropic", "    model: anthropic/claude-sonnet-4-5\n"),
        ("openai", "    model: openai/gpt-5\n"),
    ] {
        let w = warned(&format!(
            "agents:\n  a:\n    tools: [bash]\n    backend: {backend}\n{extra}"
        ));
        assert!(
            w.iter().any(|m| m.starts_with("3:12 ")
                && m.contains(&format!(
                    "tools: [bash] is not applied by the {backend} backend"
                ))),
            "{backend}: {w:?}"
        );
    }
    // The README's own example: tools on an anthropic/ model (the
    // anthropic backend, chosen by the prefix).
    let w =
        warned("agents:\n  reviewer:\n    model: anthropic/claude-sonnet-4-5\n    tools: [bash]\n");
    assert!(
        w.iter()
            .any(|m| m.starts_with("4:12 ") && m.contains("anthropic backend")),
        "{w:?}"
    );
    for ok_backend in ["claude", "opencode"] {
        let w = warned(&format!(
            "agents:\n  a:\n    tools: [bash]\n    backend: {ok_backend}\n"
        ));
        assert!(w.is_empty(), "{ok_backend}: {w:?}");
    }
}
