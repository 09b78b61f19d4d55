//! `host: NAME` against a real OpenSSH server on loopback (issue 27): the
//! agent's program runs on the host in a worktree of the repository there,
//! reaches awtui's MCP server through the SSH forward with its own token,
//! and its turn comes back as a commit `awtui diff` shows. Faults: an
//! unreachable host fails only its agents, with the host named; a
//! connection lost mid-turn fails the turn and the retry succeeds after
//! the server is back; kill -9 of awtui leaves nothing running there.
//!
//! These tests need `sshd`, `ssh` and `git`; `.ci/run` installs them.

use crate::cli_support;
use crate::llm_server;
use crate::sshd_support;

use cli_support::{World, git, init_repo, wait_for};
use sshd_support::Sshd;

/// A command agent that says where it runs through awtui's MCP server
/// (so the forward and its token work), leaves a file, and with `$HOLD`
/// waits for that file to exist first (a turn the test can interrupt).
const AGENT: &str = r#"#!/bin/sh
cat >/dev/null
n=$(ls turn-*.txt 2>/dev/null | wc -l)
n=$((n + 1))
if [ -n "$HOLD" ] && [ ! -e "$HOLD" ]; then
  echo "holding-$AWTUI_AGENT" > "$HOLD.waiting"
  while [ ! -e "$HOLD" ]; do sleep 0.1; done
fi
echo "turn $n in $(pwd)" > "turn-$n.txt"
"$AWTUI_BIN" ctx send "far-$n from $(pwd) via $AWTUI_MCP_URL"
echo "done $n"
"#;

/// A world whose workflow puts `tester` on the fixture's host, whose
/// repository is `<tmp>/remote/app` (made by awtui). `extra` is added to
/// the agent's definition.
fn far_world(sshd: &Sshd, extra: &str) -> World {
    let mut w = World::new();
    let remote = w.tmp.path().join("remote/app");
    let workflow = format!(
        "name: far
hosts:
  box:
    ssh: {alias}
    dir: {remote}
agents:
  tester:
    command: ./agent.sh
    host: box
    workspace: worktree
{extra}kickoff: '@all go'
limits:
  retries: 5
  retry_backoff: 1s
",
        alias = sshd.host_alias(),
        remote = remote.display(),
    );
    init_repo(
        &w.dir,
        &[
            ("far.yaml", &workflow),
            ("agent.sh", AGENT),
            ("src/lib.txt", "code\n"),
        ],
    );
    w.env = sshd.ssh_command_env();
    w
}

/// Changes `from` to `to` in the world's workflow and commits it (a
/// worktree starts from a clean checkout).
fn edit_workflow(w: &World, from: &str, to: &str) {
    let path = w.dir.join("far.yaml");
    let yaml = std::fs::read_to_string(&path).unwrap();
    assert!(yaml.contains(from), "{from} is not in the workflow");
    std::fs::write(&path, yaml.replace(from, to)).unwrap();
    git(&w.dir, &["commit", "-qam", "edited"]);
}

/// No retries: a failure to connect is final at once (the tests of such
/// failures need not wait for the back-off).
const NO_RETRIES: (&str, &str) = ("retries: 5", "retries: 0");

/// The repository on the host made by the user before awtui came: one
/// commit of theirs.
fn users_repository_on_the_host(w: &World) -> std::path::PathBuf {
    let remote = w.tmp.path().join("remote/app");
    std::fs::create_dir_all(&remote).unwrap();
    init_repo(&remote, &[("theirs.txt", "theirs\n")]);
    remote
}

/// Waits until `file` is on tester's local branch (its turn came back and
/// was committed); the branch's files.
fn came_back(w: &World, file: &str) -> String {
    wait_for(&format!("{file} to come back"), || {
        let files = git(&w.dir, &["ls-tree", "-r", "--name-only", "awtui/i/tester"]);
        files.contains(file).then_some(files)
    })
}

fn messages(w: &World) -> Vec<String> {
    w.channel("i")
        .iter()
        .filter_map(|m| m["message"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn a_command_agent_works_on_the_host_and_its_turn_comes_back() {
    let tmp = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(tmp.path());
    let mut w = far_world(&sshd, "");
    w.start_background("far.yaml", "i");
    let remote = w.tmp.path().join("remote/app");
    let said = wait_for("the agent to post through the forward", || {
        messages(&w)
            .into_iter()
            .find(|m| m.starts_with("far-1 from "))
    });
    // It ran in a worktree on the host, not in the local one.
    assert!(said.contains("/remote/app/.git/awtui/worktrees/"), "{said}");
    assert!(!said.contains(&w.dir.display().to_string()), "{said}");
    assert!(
        remote.join(".git").exists(),
        "the host's repository was not made"
    );
    // The forward is another port than awtui's own.
    // Its turn is a commit on the local branch, which `awtui diff` shows.
    let files = came_back(&w, "turn-1.txt");
    assert!(files.contains("src/lib.txt"), "{files}");
    let diff = w.run(&["diff", "tester@i"]);
    assert_eq!(diff.code, 0, "{}", diff.stderr);
    assert!(
        diff.stdout.contains("turn-1.txt") && diff.stdout.contains("turn 1 in"),
        "{}",
        diff.stdout
    );
    // Nothing of the token on any command line on the machine.
    let token = std::fs::read_dir(w.state.join("tokens"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .find_map(|d| std::fs::read_to_string(d.path().join("tester")).ok())
        .expect("tester's token");
    assert_eq!(token.trim().len(), 64);
    for pid in sshd.remote_processes_with("") {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&cmdline).contains(token.trim()),
            "the token is on process {pid}'s command line"
        );
    }
}

#[test]
fn an_unreachable_host_fails_its_agent_with_the_host_named() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sshd = Sshd::start(tmp.path());
    let mut w = far_world(&sshd, "  here:\n    command: ./agent.sh\n");
    edit_workflow(&w, NO_RETRIES.0, NO_RETRIES.1);
    sshd.stop();
    w.start_background("far.yaml", "i");
    // The local agent works; the far one fails with the host named.
    wait_for("the agent on this machine to post", || {
        messages(&w)
            .into_iter()
            .find(|m| m.starts_with("far-1 from ") && m.contains(&w.dir.display().to_string()))
    });
    let said = wait_for("the host's failure to be said", || {
        messages(&w)
            .into_iter()
            .find(|m| m.contains("host 'box'") && m.contains("cannot connect"))
    });
    assert!(said.contains(sshd.host_alias()), "{said}");
    // The message to the far agent stays unread: nothing answered it.
    let unread = w.list()[0]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "tester")
        .map(|a| a["unread"].as_u64().unwrap_or(0))
        .unwrap();
    assert!(unread >= 1, "the far agent's message was taken as read");
}

#[test]
fn refused_authentication_and_a_missing_cli_are_said_at_start() {
    let tmp = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(tmp.path());
    // A user the host does not have: the server refuses.
    let mut w = far_world(&sshd, "");
    edit_workflow(&w, NO_RETRIES.0, NO_RETRIES.1);
    edit_workflow(
        &w,
        &format!("ssh: {}", sshd.host_alias()),
        &format!("ssh: no-such-user-awtui@{}", sshd.host_alias()),
    );
    w.start_background("far.yaml", "i");
    let said = wait_for("the refusal to be said", || {
        messages(&w)
            .into_iter()
            .find(|m| m.contains("host 'box'") && m.contains("cannot connect"))
    });
    assert!(said.contains("Permission denied"), "{said}");
    // A CLI that is not on the host.
    let mut w = far_world(
        &sshd,
        "  gem:\n    backend: gemini\n    model: gemini-2.5-flash\n    host: box\n    workspace: worktree\n    env:\n      PATH: /nonexistent\n",
    );
    edit_workflow(&w, NO_RETRIES.0, NO_RETRIES.1);
    w.start_background("far.yaml", "j");
    let said = wait_for("the missing CLI to be said", || {
        w.channel("j")
            .iter()
            .filter_map(|m| m["message"].as_str().map(str::to_string))
            .find(|m| m.contains("host 'box'") && m.contains("'gemini' is not installed there"))
    });
    assert!(
        said.contains("set PATH in the agent's env: or install it"),
        "{said}"
    );
}

#[test]
fn a_connection_lost_mid_turn_fails_the_turn_and_the_retry_succeeds() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sshd = Sshd::start(tmp.path());
    let hold = tmp.path().join("go");
    let mut w = far_world(
        &sshd,
        &format!("    env:\n      HOLD: \"{}\"\n", hold.display()),
    );
    w.start_background("far.yaml", "i");
    wait_for("the turn to hold", || {
        hold.with_extension("waiting").exists().then_some(())
    });
    sshd.kill_all();
    // The agent's process on the host ends with its connection.
    wait_for("the agent's process on the host to end", || {
        sshd.remote_processes_with("holding")
            .is_empty()
            .then_some(())
    });
    sshd.restart();
    std::fs::write(&hold, "").unwrap();
    let said = wait_for("a retry to finish the turn", || {
        messages(&w)
            .into_iter()
            .find(|m| m.starts_with("far-1 from "))
    });
    assert!(said.contains("/remote/app/.git/awtui/worktrees/"), "{said}");
}

#[test]
fn kill_9_of_awtui_leaves_no_process_on_the_host() {
    let tmp = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(tmp.path());
    let hold = tmp.path().join("go");
    let mut w = far_world(
        &sshd,
        &format!("    env:\n      HOLD: \"{}\"\n", hold.display()),
    );
    let pid = w.start_background("far.yaml", "i");
    wait_for("the turn to hold", || {
        hold.with_extension("waiting").exists().then_some(())
    });
    let marker = format!("{}", hold.display());
    assert!(
        !sshd.remote_processes_with(&marker).is_empty(),
        "the agent should be running on the host"
    );
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    wait_for("every process of the agent on the host to end", || {
        let left: Vec<u32> = sshd
            .remote_processes_with(&marker)
            .into_iter()
            .filter(|p| sshd.session_processes().contains(p))
            .collect();
        left.is_empty().then_some(())
    });
}

#[test]
fn cleaning_removes_the_hosts_worktree_but_never_the_users_branches() {
    let tmp = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(tmp.path());
    let mut w = far_world(&sshd, "");
    // The user's repository on the host already exists, with a branch of
    // their own.
    let remote = users_repository_on_the_host(&w);
    git(&remote, &["branch", "users-work"]);
    w.start_background("far.yaml", "i");
    came_back(&w, "turn-1.txt");
    let there = git(&remote, &["worktree", "list", "--porcelain"]);
    let wt = awtui::workspace::parse_worktree_list(&there)
        .into_iter()
        .find(|(_, b)| b.as_deref() == Some("awtui/i/tester"))
        .map(|(p, _)| p)
        .unwrap_or_else(|| panic!("no worktree of awtui/i/tester on the host:\n{there}"));
    assert!(wt.join("turn-1.txt").exists());
    let r = w.run(&["stop", "@i", "--clean", "--force"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        !wt.exists(),
        "the host's worktree is still there: {}\n{}{}",
        wt.display(),
        r.stdout,
        r.stderr
    );
    let branches = git(&remote, &["branch", "--list", "--format=%(refname:short)"]);
    assert!(!branches.contains("awtui/i/tester"), "{branches}");
    assert!(
        branches.contains("users-work"),
        "the user's branch went: {branches}"
    );
    assert!(remote.join("theirs.txt").exists());
}

#[test]
fn a_users_branch_of_the_same_name_on_the_host_is_never_taken() {
    let tmp = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(tmp.path());
    let mut w = far_world(&sshd, "");
    let remote = users_repository_on_the_host(&w);
    git(&remote, &["branch", "awtui/i/tester"]);
    let before = git(&remote, &["rev-parse", "awtui/i/tester"]);
    w.start_background("far.yaml", "i");
    let log = w.dir.join(".workflow/i/agents/tester/stderr.log");
    wait_for("the refusal to be logged", || {
        std::fs::read_to_string(&log)
            .ok()
            .filter(|t| t.contains("already exists") && t.contains("awtui did not make it"))
    });
    assert_eq!(git(&remote, &["rev-parse", "awtui/i/tester"]), before);
    let r = w.run(&["stop", "@i", "--clean", "--force"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        git(&remote, &["rev-parse", "awtui/i/tester"]),
        before,
        "cleaning deleted the user's branch on the host"
    );
}

#[test]
fn stopping_the_agent_ends_its_process_on_the_host() {
    stopping_ends_the_process_on_the_host("tester@i");
}

#[test]
fn stopping_the_instance_ends_its_agents_processes_on_the_host() {
    stopping_ends_the_process_on_the_host("@i");
}

/// `awtui stop <target>` during a turn that holds on the host: every
/// process of the agent there ends.
fn stopping_ends_the_process_on_the_host(target: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(tmp.path());
    let hold = tmp.path().join("go");
    let mut w = far_world(
        &sshd,
        &format!("    env:\n      HOLD: \"{}\"\n", hold.display()),
    );
    w.start_background("far.yaml", "i");
    wait_for("the turn to hold", || {
        hold.with_extension("waiting").exists().then_some(())
    });
    let marker = hold.display().to_string();
    let on_host = || -> Vec<u32> {
        let sessions = sshd.session_processes();
        sshd.remote_processes_with(&marker)
            .into_iter()
            .filter(|p| sessions.contains(p))
            .collect()
    };
    assert!(
        !on_host().is_empty(),
        "the agent should be running on the host"
    );
    let r = w.run(&["stop", target]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    wait_for("the agent's processes on the host to end", || {
        on_host().is_empty().then_some(())
    });
    if target.starts_with('@') {
        // The instance is gone: so is its connection (the master's own
        // session on the host included).
        wait_for("every session on the host to end", || {
            sshd.session_processes().is_empty().then_some(())
        });
    }
}

/// Claude Code (the real CLI, offline against the fake model) on the host:
/// it is offered awtui's tools through the forward, its shell command runs
/// in its worktree there, and the file it made comes back as its turn.
#[test]
fn claude_code_works_on_the_host_and_its_turn_comes_back() {
    let cache = std::env::var_os("AWTUI_CLI_CACHE")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(std::env::var_os("HOME").expect("HOME"))
                .join(".cache/awtui-clis")
        });
    let bin = cache.join("node_modules/.bin");
    assert!(
        bin.join("claude").exists(),
        "claude is not installed in {}: run scripts/install-clis.sh",
        cache.display()
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (url, log) = rt.block_on(llm_server::start_model(llm_server::ModelScript {
        tool: "Bash".into(),
        arguments: serde_json::json!({
            "command": "echo made on the host > made-on-host.txt",
            "description": "make the file"
        }),
        final_text: "Made it.".into(),
        refuse: None,
    }));
    let tmp = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(tmp.path());
    let mut w = World::new();
    let remote = w.tmp.path().join("remote/app");
    let home = w.tmp.path().join("remote-home");
    std::fs::create_dir_all(&home).unwrap();
    let workflow = format!(
        "name: far
hosts:
  box:
    ssh: {alias}
    dir: {remote}
agents:
  tester:
    backend: claude
    model: claude-sonnet-4-5
    permissions: full
    host: box
    workspace: worktree
    timeout: 240s
    env:
      PATH: \"{bin}:/usr/local/bin:/usr/bin:/bin\"
      HOME: \"{home}\"
      ANTHROPIC_BASE_URL: \"{url}\"
      ANTHROPIC_API_KEY: sk-ant-fake
      DISABLE_TELEMETRY: '1'
      DISABLE_AUTOUPDATER: '1'
      DISABLE_ERROR_REPORTING: '1'
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1'
      IS_SANDBOX: '1'
kickoff: '@tester make the file'
limits:
  retries: 0
",
        alias = sshd.host_alias(),
        remote = remote.display(),
        bin = bin.display(),
        home = home.display(),
    );
    init_repo(
        &w.dir,
        &[("far.yaml", &workflow), ("src/lib.txt", "code\n")],
    );
    w.env = sshd.ssh_command_env();
    w.start_background("far.yaml", "i");
    let files = came_back(&w, "made-on-host.txt");
    assert!(files.contains("src/lib.txt"), "{files}");
    let requests = log.lock().unwrap().clone();
    assert!(
        requests.iter().any(|q| q.raw.contains("channel_send")),
        "the model was never offered awtui's tools (the forward)"
    );
    let diff = w.run(&["diff", "tester@i"]);
    assert!(diff.stdout.contains("made on the host"), "{}", diff.stdout);
}

#[test]
fn validate_check_hosts_says_what_is_missing_on_which_host() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sshd = Sshd::start(tmp.path());
    let w = far_world(
        &sshd,
        "  other:\n    backend: gemini\n    model: gemini-2.5-flash\n    host: box\n    workspace: worktree\n    env:\n      PATH: /nonexistent\n",
    );
    // Without --check-hosts nothing is dialled: valid.
    let r = w.run(&["validate", "far.yaml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = w.run(&["validate", "far.yaml", "--check-hosts"]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("far.yaml:3:3")
            && r.stderr.contains("host 'box'")
            && r.stderr.contains("'gemini' is not installed there"),
        "{}",
        r.stderr
    );
    sshd.stop();
    let r = w.run(&["validate", "far.yaml", "--check-hosts"]);
    assert!(
        r.stderr.contains("host 'box'") && r.stderr.contains("cannot connect"),
        "{}",
        r.stderr
    );
}
