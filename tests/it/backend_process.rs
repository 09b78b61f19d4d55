//! The process runner on real processes: fake agent CLIs (tests/fakes) check
//! the arguments, environment and config they get and print their real event
//! formats; crashes, hangs and stops become clear outcomes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use awtui::agents::backend::process::spawn;
use awtui::agents::backend::{BackendEvent, TurnOutcome, TurnRequest, invocation, parse};
use awtui::agents::runtime::Local;
use awtui::workflow::BackendKind;

use crate::fixture;
use fixture::{collect, eventually};

fn fake_bin(dir: &Path, name: &str) {
    let fake = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fakes/fake_agent.py");
    std::os::unix::fs::symlink(fake, dir.join(name)).unwrap();
}

fn request(kind: BackendKind, dir: &Path, env: &[(&str, &str)]) -> TurnRequest {
    TurnRequest {
        agent: "coder".into(),
        instance: "t".into(),
        backend: kind,
        model: Some("m".into()),
        system_prompt: "be brief".into(),
        prompt: "@coder hello".into(),
        session_id: None,
        mcp_url: "http://127.0.0.1:9/mcp".into(),
        token: "secret-token".into(),
        tools: vec![],
        command: None,
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        workdir: dir.to_path_buf(),
        state_dir: dir.join("state"),
        private_dir: dir.join("private"),
        user_config: None,
        user_config_dir: None,
        permissions: awtui::workflow::Permissions::WorkspaceWrite,
        approval_timeout: std::time::Duration::from_secs(600),
        args: vec![],
        mcp_servers: vec![],
        keep_user_mcp: false,
        user_mcp_servers: vec![],
        base_url: None,
        api_key_env: None,
    }
}

/// Runs a turn to its end with the fakes first on PATH.
async fn run(req: TurnRequest, bin: &Path) -> (Vec<BackendEvent>, TurnOutcome) {
    let mut inv = invocation(&req).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    inv.env.push(("PATH".into(), path.clone()));
    // `find_executable` looks at our PATH; resolve the fake explicitly.
    if bin.join(&inv.program).exists() {
        inv.program = bin.join(&inv.program).display().to_string();
    }
    let turn = spawn(
        inv,
        parse::parser_for(req.backend),
        &req.state_dir.join("stderr.log"),
        None,
        "",
        &Local,
    )
    .unwrap();
    collect(turn).await
}

#[tokio::test]
async fn every_cli_backend_gets_its_config_and_reports_usage_and_session() {
    for (kind, name) in [
        (BackendKind::Claude, "claude"),
        (BackendKind::Codex, "codex"),
        (BackendKind::Cursor, "cursor-agent"),
        (BackendKind::Gemini, "gemini"),
        (BackendKind::Opencode, "opencode"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        fake_bin(dir.path(), name);
        let (events, outcome) = run(
            request(kind, dir.path(), &[("FAKE_REPLY", "reviewed")]),
            dir.path(),
        )
        .await;
        let log = std::fs::read_to_string(dir.path().join("state/stderr.log")).unwrap_or_default();
        assert!(
            outcome.success,
            "{name}: {:?}\nstderr: {log}",
            outcome.error
        );
        assert_eq!(outcome.answer.as_deref(), Some("reviewed"), "{name}");
        assert_eq!(outcome.session_id.as_deref(), Some("sess-coder"), "{name}");
        assert_eq!(outcome.usage.input_tokens, 100, "{name}");
        assert_eq!(outcome.usage.output_tokens, 20, "{name}");
        assert!(!events.is_empty(), "{name}");
        // The MCP config is private to the owner.
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("state/mcp.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{name}");
    }
}

#[tokio::test]
async fn resume_passes_the_session_id() {
    for (kind, name) in [
        (BackendKind::Claude, "claude"),
        (BackendKind::Codex, "codex"),
        (BackendKind::Opencode, "opencode"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        fake_bin(dir.path(), name);
        let mut req = request(kind, dir.path(), &[]);
        req.session_id = Some("sess-earlier".into());
        let (_, outcome) = run(req, dir.path()).await;
        assert_eq!(
            outcome.answer.as_deref(),
            Some("done (resumed sess-earlier)"),
            "{name}"
        );
    }
}

#[tokio::test]
async fn reported_failures_and_crashes_are_failed_outcomes_with_reasons() {
    let dir = tempfile::tempdir().unwrap();
    fake_bin(dir.path(), "codex");
    let (_, o) = run(
        request(BackendKind::Codex, dir.path(), &[("FAKE_MODE", "fail")]),
        dir.path(),
    )
    .await;
    assert!(!o.success);
    assert_eq!(o.error.as_deref(), Some("simulated failure"));

    let (_, o) = run(
        request(BackendKind::Codex, dir.path(), &[("FAKE_MODE", "crash")]),
        dir.path(),
    )
    .await;
    assert_eq!(
        o.error.as_deref(),
        Some("the agent exited with status 139: fake codex: segmentation fault (simulated)")
    );
    let log = std::fs::read_to_string(dir.path().join("state/stderr.log")).unwrap();
    assert!(
        log.contains("segmentation fault"),
        "stderr goes to the agent's log: {log}"
    );
}

#[tokio::test]
async fn the_command_backend_reads_stdin_and_answers_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let mut req = request(BackendKind::Command, dir.path(), &[]);
    req.command = Some(vec![
        "sh".into(),
        "-c".into(),
        "read line; echo \"$AWTUI_AGENT got: $line\"; echo \"token=$AWTUI_TOKEN\"".into(),
    ]);
    let (_, o) = run(req, dir.path()).await;
    assert!(o.success, "{:?}", o.error);
    assert_eq!(
        o.answer.as_deref(),
        Some("coder got: @coder hello\ntoken=secret-token")
    );
}

#[tokio::test]
async fn stopping_ends_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    fake_bin(dir.path(), "claude");
    let req = request(BackendKind::Claude, dir.path(), &[("FAKE_MODE", "hang")]);
    let mut inv = invocation(&req).unwrap();
    inv.program = dir.path().join("claude").display().to_string();
    let mut turn = spawn(
        inv,
        parse::parser_for(BackendKind::Claude),
        &dir.path().join("err.log"),
        None,
        "",
        &Local,
    )
    .unwrap();
    let group = turn.pid.unwrap();
    // Wait until the fake has started its child (sleep 300) in the group.
    eventually("the fake to start its child", || async {
        (members(group) >= 2).then_some(())
    })
    .await;
    turn.stop();
    let (_, o) = collect(turn).await;
    assert_eq!(o.error.as_deref(), Some("stopped"));
    eventually(
        &format!("process group {group} to have no members"),
        || async { (members(group) == 0).then_some(()) },
    )
    .await;
}

#[tokio::test]
async fn a_hung_turn_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut req = request(BackendKind::Command, dir.path(), &[]);
    req.command = Some(vec!["sleep".into(), "300".into()]);
    let inv = invocation(&req).unwrap();
    let turn = spawn(
        inv,
        parse::parser_for(BackendKind::Command),
        &dir.path().join("e.log"),
        Some(Duration::from_millis(300)),
        "",
        &Local,
    )
    .unwrap();
    let (_, o) = collect(turn).await;
    assert_eq!(o.error.as_deref(), Some("timed out after 0s"));
}

#[test]
fn a_missing_program_says_what_to_install() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let _guard = rt.enter();
    let dir = tempfile::tempdir().unwrap();
    let mut req = request(BackendKind::Command, dir.path(), &[]);
    req.command = Some(vec!["./nope.sh".into()]);
    let err = spawn(
        invocation(&req).unwrap(),
        parse::parser_for(BackendKind::Command),
        &dir.path().join("e"),
        None,
        "check the agent's command",
        &Local,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "'./nope.sh' is not an executable file (a relative path is taken from the workflow's folder, {})",
            dir.path().display()
        )
    );
}

/// Live members of process group `pgid` (zombies excluded).
fn members(pgid: u32) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            // Fields after the command name: state ppid pgrp …
            let rest = stat.rsplit_once(") ").map_or("", |(_, r)| r);
            let fields: Vec<&str> = rest.split_whitespace().collect();
            fields.len() > 2 && fields[2] == pgid.to_string() && fields[0] != "Z"
        })
        .count()
}

#[tokio::test]
async fn a_prompt_over_the_argument_limit_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    fake_bin(dir.path(), "cursor-agent");
    let mut req = request(BackendKind::Cursor, dir.path(), &[]);
    req.prompt = "x".repeat(200 * 1024);
    let inv = invocation(&req).unwrap();
    let err = spawn(
        inv,
        parse::parser_for(BackendKind::Cursor),
        &dir.path().join("state/stderr.log"),
        None,
        "",
        &Local,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("'cursor-agent' takes its prompt as a command-line argument")
            && err.contains("131071-byte limit"),
        "{err}"
    );
}
