//! A tool call that never finishes (here: `workspace_create` checking out a
//! repository whose smudge filter waits, as git-lfs does on a dead network)
//! must not hang its caller, the other agents, or `awtui stop`.

use crate::cli_support;

use std::process::Command;

use cli_support::{World, init_repo, wait_for};
use serde_json::Value;

/// `awtui ctx --json call TOOL ARGS` as the agent whose MCP env `env` holds.
fn ctx(w: &World, env: &(String, String), tool: &str, args: Value) -> Command {
    let mut c = w.cmd(&["ctx", "--json", "call", tool, &args.to_string()]);
    c.env("AWTUI_MCP_URL", &env.0).env("AWTUI_TOKEN", &env.1);
    c
}

/// The MCP URL and token an agent's turn saw (its script saved them).
fn agent_env(w: &World, agent: &str) -> (String, String) {
    let path = w.dir.join(format!("{agent}.env"));
    let text = wait_for(&format!("{agent}'s first turn"), || {
        std::fs::read_to_string(&path)
            .ok()
            .filter(|t| t.lines().count() >= 2)
    });
    let mut lines = text.lines();
    (
        lines.next().unwrap().to_string(),
        lines.next().unwrap().to_string(),
    )
}

#[test]
fn a_stuck_tool_call_is_answered_at_its_deadline_and_does_not_hold_up_others_or_stop() {
    let mut w = World::new();
    let release = w.dir.join("RELEASE");
    // The user's repository: every file goes through a filter that waits
    // until the test releases it.
    init_repo(
        &w.dir,
        &[
            (".gitattributes", "*.txt filter=slow\n"),
            ("big.txt", "content\n"),
            (".gitignore", "*.env\nagent.sh\n.workflow/\n"),
        ],
    );
    // Defined in the person's global config: awtui's git switches off
    // drivers the repository's own config defines (agents can write it).
    w.global_git_config(&format!(
        "[filter \"slow\"]\n\tsmudge = \"sh -c 'while [ ! -e {} ] && [ -d {} ]; do sleep 0.05; done; cat'\"\n\tclean = cat\n",
        release.display(),
        w.dir.display()
    ));

    w.script(
        "agent.sh",
        "#!/bin/sh\ncat >/dev/null\nprintf '%s\\n%s\\n' \"$AWTUI_MCP_URL\" \"$AWTUI_TOKEN\" > \"$AWTUI_AGENT.env\"\n",
    );
    std::fs::write(
        w.dir.join("stuck.yaml"),
        "name: stuck\nagents:\n  a:\n    command: ./agent.sh\n  b:\n    command: ./agent.sh\n\
         limits:\n  tool_timeout: 2s\nkickoff: \"@a @b hello\"\n",
    )
    .unwrap();
    let pid = w.start_background("stuck.yaml", "s");
    let (a, b) = (agent_env(&w, "a"), agent_env(&w, "b"));

    let made = ctx(
        &w,
        &a,
        "workflow_create",
        serde_json::json!({"name": "w", "source_type": "prompt", "source_content": "x"}),
    )
    .output()
    .unwrap();
    assert!(made.status.success(), "{made:?}");
    let workflow: Value = serde_json::from_slice(&made.stdout).unwrap();
    let workflow_id = workflow["id"]
        .as_str()
        .or_else(|| workflow["workflow"]["id"].as_str())
        .unwrap_or_else(|| panic!("no id in {workflow}"))
        .to_string();

    // The stuck call, in the background.
    let stuck = ctx(
        &w,
        &a,
        "workspace_create",
        serde_json::json!({
            "workflow_id": workflow_id,
            "branch": "slow",
            "create_worktree": true,
            "repo_path": w.dir.display().to_string(),
        }),
    )
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();

    // Another agent is served meanwhile.
    let sent = ctx(
        &w,
        &b,
        "channel_send",
        serde_json::json!({"message": "still here"}),
    )
    .output()
    .unwrap();
    assert!(sent.status.success(), "{sent:?}");

    // The stuck caller gets a structured error at the deadline, not never.
    let out = stuck.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("DEADLINE_EXCEEDED"), "{text}");
    assert!(text.contains("tool_timeout"), "{text}");

    // The instance still answers, and stops although the call's thread is
    // still waiting on git (git is released only once the process ended).
    let again = ctx(
        &w,
        &b,
        "channel_send",
        serde_json::json!({"message": "and again"}),
    )
    .output()
    .unwrap();
    assert!(again.status.success(), "{again:?}");
    let stopped = w.run(&["stop", "@s"]);
    assert_eq!(stopped.code, 0, "{stopped:?}");
    wait_for("the instance's process to end", || {
        (!cli_support::alive(pid)).then_some(())
    });
    std::fs::write(&release, "").unwrap();
    let log = std::fs::read_to_string(w.dir.join(".workflow/s/awtui.log")).unwrap_or_default();
    assert!(!log.contains("panicked"), "{log}");
}
