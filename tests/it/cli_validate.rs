//! `awtui validate` on the real binary: summary and exit 0, or every error
//! with file:line:col and exit 2.

use std::path::Path;
use std::process::Command;

use crate::patience;
use patience::{PATIENCE, poll_within};

fn awtui(args: &[&str]) -> (i32, String, String) {
    awtui_with_path(args, &std::env::var("PATH").unwrap())
}

fn awtui_with_path(args: &[&str], path: &str) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_awtui"))
        .args(args)
        .env("PATH", path)
        // The API agents in these files need a key to pass the backend check.
        .env("ANTHROPIC_API_KEY", "test-key")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_valid_workflow_prints_a_summary_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("prompts")).unwrap();
    std::fs::write(dir.path().join("prompts/r.md"), "review").unwrap();
    let script = dir.path().join("fix.sh");
    std::fs::write(&script, "#!/bin/sh\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = dir.path().join("review.yaml");
    std::fs::write(
        &file,
        "name: code-review\nagents:\n  reviewer:\n    model: anthropic/claude-sonnet-4-5\n    system_prompt: prompts/r.md\n  coder:\n    backend: command\n    command: ./fix.sh\ncontext:\n  config:\n    documents: [goals.md]\nsetup:\n  - shell: echo diff\n    as: diff\nkickoff: |\n  ${{ diff }}\n  @reviewer please review\n",
    )
    .unwrap();
    let (code, stdout, stderr) = awtui(&["validate", file.to_str().unwrap(), "--instance", "pr-7"]);
    assert_eq!(code, 0, "{stderr}");
    for needle in [
        "workflow   code-review",
        "reviewer  anthropic/claude-sonnet-4-5 · backend anthropic (from model) · prompt prompts/r.md",
        "coder     (a program) · backend command · command ./fix.sh",
        "context    file provider in .workflow/pr-7",
        "documents  notes.md (entry), goals.md",
        "1. echo diff  → ${{ diff }}",
        "kickoff    wakes @reviewer",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in:\n{stdout}");
    }
    assert!(stderr.is_empty(), "{stderr}");
    assert!(
        !dir.path().join(".workflow").exists(),
        "validate creates nothing"
    );
}

#[test]
fn errors_are_listed_with_positions_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.yaml");
    std::fs::write(
        &file,
        "agents:\n  coder:\n    modle: anthropic/x\n  all:\n    model: anthropic/y\n",
    )
    .unwrap();
    let (code, stdout, stderr) = awtui(&["validate", file.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    let path = file.display().to_string();
    assert!(
        stderr.contains(&format!(
            "{path}:3:5: error: unknown key 'modle' in agent 'coder' (did you mean 'model'?)"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(" 3 |     modle: anthropic/x\n"),
        "quotes the line: {stderr}"
    );
    assert!(
        stderr.contains(&format!("{path}:4:3: error: 'all' is reserved")),
        "{stderr}"
    );
    assert!(
        !stderr.contains("needs a 'model'"),
        "a typo is reported once: {stderr}"
    );
    assert!(stderr.contains("2 errors in"), "{stderr}");
}

#[test]
fn warnings_do_not_fail_validation() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.yaml");
    std::fs::write(
        &file,
        "agents:\n  coder:\n    model: anthropic/x\nkickoff: nobody here\n",
    )
    .unwrap();
    let (code, stdout, stderr) = awtui(&["validate", file.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(stdout.contains("kickoff    wakes nobody"), "{stdout}");
    assert!(
        stderr.contains(":4:10: warning: kickoff mentions no agent"),
        "{stderr}"
    );
}

#[test]
fn a_missing_file_is_a_clear_error() {
    let (code, _, stderr) = awtui(&["validate", "/nonexistent/flow.yaml"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("cannot read workflow file /nonexistent/flow.yaml"),
        "{stderr}"
    );
}

#[test]
fn the_shipped_examples_validate() {
    let root = env!("CARGO_MANIFEST_DIR");
    // The examples use real agent CLIs; stand-ins on PATH let them validate here.
    let bin = tempfile::tempdir().unwrap();
    for name in ["claude", "codex", "cursor-agent", "gemini", "opencode"] {
        std::os::unix::fs::symlink(
            format!("{root}/tests/fakes/fake_agent.py"),
            bin.path().join(name),
        )
        .unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    for entry in std::fs::read_dir(format!("{root}/assets/workflows")).unwrap() {
        let file = entry.unwrap().path();
        if file.extension().is_some_and(|e| e == "yaml") {
            let (code, _, stderr) = awtui_with_path(&["validate", file.to_str().unwrap()], &path);
            assert_eq!(code, 0, "{}: {stderr}", file.display());
        }
    }
}

#[test]
fn a_backend_that_cannot_run_says_what_to_install() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.yaml");
    std::fs::write(&file, "agents:\n  coder:\n    backend: claude\n    env:\n      PATH: /nonexistent\n  api:\n    model: anthropic/claude-sonnet-4-5\n    api_key_env: AWTUI_TEST_UNSET_KEY\n").unwrap();
    let (code, _, stderr) = awtui(&["validate", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "agent 'coder' cannot run: 'claude' was not found on PATH; install Claude Code"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("agent 'api' cannot run: AWTUI_TEST_UNSET_KEY is not set"),
        "{stderr}"
    );
}

/// Runs `awtui` and waits at most a generous 60 s (it should take well
/// under one); a hang is killed and fails the test.
fn awtui_bounded(args: &[&str]) -> (i32, String) {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_awtui"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Not `wait_for`: a hung child is killed before the test fails.
    let Some(status) = poll_within(PATIENCE, || child.try_wait().unwrap()) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("awtui {args:?} hung");
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status.code().unwrap_or(-1), stderr)
}

#[test]
fn a_prompt_file_linked_to_a_device_or_fifo_is_refused_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p");
    std::fs::create_dir_all(&p).unwrap();
    let fifo = dir.path().join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let file = dir.path().join("flow.yaml");
    std::fs::write(
        &file,
        "agents:\n  coder:\n    backend: command\n    command: ./fix.sh\n    system_prompt: p/s.md\nkickoff: \"@coder go\"\n",
    )
    .unwrap();
    for (target, kind) in [
        (Path::new("/dev/zero"), "a character device"),
        (Path::new("/dev/urandom"), "a character device"),
        (fifo.as_path(), "a FIFO"),
    ] {
        let _ = std::fs::remove_file(p.join("s.md"));
        std::os::unix::fs::symlink(target, p.join("s.md")).unwrap();
        let (code, stderr) = awtui_bounded(&["validate", file.to_str().unwrap()]);
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains(&format!(
                ":5:20: error: agent 'coder': system_prompt file 'p/s.md' cannot be read: it is {kind}, not a regular file"
            )),
            "{target:?}: {stderr}"
        );
    }
    // A regular file over the limit names the limit.
    std::fs::remove_file(p.join("s.md")).unwrap();
    std::fs::write(p.join("s.md"), "x".repeat(1024 * 1024 + 1)).unwrap();
    let (code, stderr) = awtui_bounded(&["validate", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "system_prompt file 'p/s.md' cannot be read: it is larger than the 1 MiB limit"
        ),
        "{stderr}"
    );
    // The workflow file itself too.
    let (code, stderr) = awtui_bounded(&["validate", fifo.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "cannot read workflow file {}: it is a FIFO, not a regular file",
            fifo.display()
        )),
        "{stderr}"
    );
}

/// Cursor is the one CLI that takes its prompt as an argument: `validate`
/// states the limit, and a turn over it fails with that message instead of
/// the OS's "Argument list too long".
#[test]
fn validate_states_the_argument_limit_of_cursor() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.yaml");
    std::fs::write(
        &file,
        "agents:\n  c:\n    backend: cursor\n    protocol: headless\n  d:\n    backend: claude\nkickoff: \"@c @d go\"\n",
    )
    .unwrap();
    // (The CLIs are not installed here: validate also says so.)
    let (_, _, stderr) = awtui(&["validate", file.to_str().unwrap()]);
    assert!(
        stderr.contains("agent 'c': cursor-agent takes its prompt as a command-line argument")
            && stderr.contains("128 KiB"),
        "{stderr}"
    );
    assert!(!stderr.contains("agent 'd': cursor-agent"), "{stderr}");
    assert_eq!(
        stderr.matches("command-line argument").count(),
        1,
        "{stderr}"
    );
}

/// A first argument that is no file but close to a command is a typo of
/// that command, said so; a real missing file still says it is missing.
#[test]
fn a_mistyped_command_is_suggested_not_read_as_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_awtui"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = run(&["lsit"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("did you mean `awtui list`?"), "{err}");
    let (_, err) = run(&["stpo"]);
    assert!(err.contains("did you mean `awtui stop`?"), "{err}");
    let (code, err) = run(&["review.yaml"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("cannot read workflow file review.yaml") && !err.contains("did you mean"),
        "{err}"
    );
}

/// `awtui ctx tools` documents every context tool and its arguments
/// without a running instance; one tool by name; a typo is suggested.
#[test]
fn ctx_tools_lists_every_tool_with_its_arguments() {
    let (code, out, err) = awtui(&["ctx", "tools"]);
    assert_eq!(code, 0, "{err}");
    for tool in [
        "channel_send",
        "task_claim",
        "workflow_set_plan",
        "agent_heartbeat",
        "workspace_create",
        "permission_request",
    ] {
        assert!(
            out.contains(&format!("\n{tool}\n")) || out.starts_with(&format!("{tool}\n")),
            "{tool} missing:\n{out}"
        );
    }
    let (code, out, _) = awtui(&["ctx", "tools", "task_claim"]);
    assert_eq!(code, 0);
    assert!(out.contains("- task_id (string, required)"), "{out}");
    assert!(out.contains("- agent_id (string, required)"), "{out}");
    let (code, out, _) = awtui(&["ctx", "--json", "tools", "task_claim"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v[0]["input_schema"]["required"],
        serde_json::json!(["task_id", "agent_id"])
    );
    let (code, _, err) = awtui(&["ctx", "tools", "task_clam"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean task_claim?"), "{err}");
    // Issue 36: the result is shown beside the arguments (a newcomer
    // guessed `agent_id` and crashed three turns).
    let (code, out, _) = awtui(&["ctx", "tools", "agent_register"]);
    assert_eq!(code, 0);
    assert!(
        out.contains(r#"  returns: {"id":"ag_"#) && out.contains(r#""name":"#),
        "{out}"
    );
    let (_, out, _) = awtui(&["ctx", "--json", "tools", "task_claim"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["result_example"], serde_json::json!({"success": true}));
    assert_eq!(v[0]["result_otherwise"]["code"], "ALREADY_CLAIMED");
}

/// What a newcomer's mistakes get from `validate` (issue 25): errors
/// before (and instead of) the summary; a missing script named with its
/// agent's line:col and the folder it was looked for in; an unknown
/// `${{ … }}` pointed at where it is written; a non-ASCII mention quoted
/// whole; a command agent summarised as running a program.
#[test]
fn validate_points_at_each_mistake_where_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.yaml");
    std::fs::write(
        &file,
        "agents:\n  coder:\n    command: ./does-not-exist.sh\nkickoff: \"@coder go\"\n",
    )
    .unwrap();
    let (code, stdout, stderr) = awtui(&["validate", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stdout.is_empty(),
        "no summary for a workflow that cannot start: {stdout}"
    );
    assert!(
        stderr.contains(&format!(
            "w.yaml:2:3: error: agent 'coder' cannot run: './does-not-exist.sh' is not an executable file (a relative path is taken from the workflow's folder, {})",
            dir.path().display()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("1 error in"), "{stderr}");

    std::fs::write(
        &file,
        "agents:\n  coder:\n    command: sh\nkickoff: \"hi @café and @coder: ${{ nope }}\"\n",
    )
    .unwrap();
    let (code, stdout, stderr) = awtui(&["validate", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("w.yaml:4:32: error: kickoff: unknown variable 'nope'"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "w.yaml:4:14: warning: kickoff mentions @café, which is not an agent of this workflow; agents: coder"
        ),
        "{stderr}"
    );

    // When no agent has a valid name, the warning says so (it used to end
    // with an empty "agents: ").
    std::fs::write(
        &file,
        "agents:\n  café:\n    command: sh\nkickoff: \"@café go\"\n",
    )
    .unwrap();
    let (_, _, stderr) = awtui(&["validate", file.to_str().unwrap()]);
    assert!(
        stderr.contains("kickoff mentions @café, which is not an agent of this workflow; no agent of it has a valid name yet"),
        "{stderr}"
    );
    assert!(!stderr.contains("agents: \n"), "{stderr}");
}

/// Writes executable stand-ins for `names` into `dir` (validate only
/// looks them up on the agent's `PATH`).
fn stand_ins(dir: &Path, names: &[&str]) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    for n in names {
        let p = dir.join(n);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// Issue 35: validate says how each agent is talked to and why: gemini
/// over ACP natively, codex over ACP when `codex-acp` is on the agent's
/// `PATH` and headless when not, `protocol: headless` as written, any
/// `backend: acp` agent over ACP; a program (`backend: command`) has no
/// protocol to state.
#[test]
fn validate_says_which_protocol_each_agent_runs_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let with = dir.path().join("with");
    let without = dir.path().join("without");
    stand_ins(&with, &["gemini", "codex", "codex-acp", "my-acp"]);
    stand_ins(&without, &["gemini", "codex"]);
    let path = |d: &Path| format!("{}:/usr/bin:/bin", d.display());
    let file = dir.path().join("team.yaml");
    std::fs::write(
        &file,
        format!(
            "agents:\n\
             \x20 gem:\n    backend: gemini\n    model: gemini-2.5-pro\n    env:\n      PATH: \"{w}\"\n\
             \x20 cx:\n    backend: codex\n    env:\n      PATH: \"{w}\"\n\
             \x20 cx-plain:\n    backend: codex\n    env:\n      PATH: \"{wo}\"\n\
             \x20 gem-old:\n    backend: gemini\n    model: gemini-2.5-pro\n    protocol: headless\n    env:\n      PATH: \"{w}\"\n\
             \x20 mine:\n    backend: acp\n    command: [my-acp, --stdio]\n    env:\n      PATH: \"{w}\"\n\
             \x20 prog:\n    backend: command\n    command: [true]\n",
            w = path(&with),
            wo = path(&without),
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = awtui(&["validate", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}\n{stdout}");
    let line = |name: &str| {
        stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no line for {name} in:\n{stdout}"))
            .to_string()
    };
    for (agent, said) in [
        ("gem", "· acp (native)"),
        ("cx", "· acp (adapter codex-acp found)"),
        ("cx-plain", "· headless (adapter codex-acp not found)"),
        ("gem-old", "· headless (protocol: headless)"),
        ("mine", "· acp (backend: acp)"),
    ] {
        let l = line(agent);
        assert!(l.contains(said), "{agent}: {said:?} missing in {l:?}");
    }
    let prog = line("prog");
    assert!(
        !prog.contains("acp") && !prog.contains("headless"),
        "{prog}"
    );
}

/// Issue 36: an unknown key and an agent that cannot run are reported in
/// the same run (they were one pass each: fix the key, validate again, and
/// only then learn the CLI is missing).
#[test]
fn every_error_of_a_file_is_reported_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.yaml");
    std::fs::write(
        &file,
        "agents:\n  coder:\n    backend: claude\n    env:\n      PATH: /nonexistent\n  api:\n    model: anthropic/claude-sonnet-4-5\n    colour: red\n",
    )
    .unwrap();
    let (code, stdout, stderr) = awtui(&["validate", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    let path = file.display().to_string();
    assert!(
        stderr.contains(&format!(
            "{path}:8:5: error: unknown key 'colour' in agent 'api'"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "{path}:2:3: error: agent 'coder' cannot run: 'claude' was not found on PATH"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("2 errors in"), "{stderr}");
}

/// Issue 36: the summary says where each agent runs (its sandbox, its
/// host) and how many tasks the file plans.
#[test]
fn the_summary_names_sandbox_host_and_tasks() {
    let dir = tempfile::tempdir().unwrap();
    // A worktree agent needs a repository with a commit.
    for args in [
        &["init", "-q", "-b", "main"][..],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "0",
        ],
    ] {
        let ok = Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    }
    let file = dir.path().join("w.yaml");
    std::fs::write(
        &file,
        "hosts:\n  box:\n    ssh: dev@box.example\n    dir: ~/src/app\nagents:\n  boxed:\n    command: [\"true\"]\n    sandbox: true\n  far:\n    command: [\"true\"]\n    host: box\n    workspace: worktree\n  near:\n    command: [\"true\"]\ntasks:\n  - id: one\n  - id: two\n    depends_on: [one]\n",
    )
    .unwrap();
    let (code, stdout, stderr) = awtui(&["validate", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let line = |agent: &str| {
        stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{agent} ")))
            .unwrap_or_else(|| panic!("no line for {agent}:\n{stdout}"))
            .to_string()
    };
    assert!(line("boxed").contains(" · sandbox"), "{stdout}");
    assert!(line("boxed").contains(" · on this machine"), "{stdout}");
    assert!(line("far").contains(" · on host box"), "{stdout}");
    assert!(!line("far").contains("sandbox"), "{stdout}");
    assert!(line("near").contains(" · on this machine"), "{stdout}");
    assert!(
        stdout.contains("hosts      box (dev@box.example, ~/src/app; at most 4 agents)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("tasks      2 from the workflow file"),
        "{stdout}"
    );
}
