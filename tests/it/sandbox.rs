//! `sandbox: true` with the real `bwrap` (issue 27): a sandboxed agent
//! writes its own worktree and what `sandbox.writable` names, and cannot
//! write the home folder or another agent's worktree, nor read another
//! agent's token; its turn is committed like any other.
//!
//! These tests need `bwrap` (bubblewrap) and `git`; `.ci/run` installs them.

use crate::cli_support;

use std::path::Path;

use cli_support::{World, git, init_repo, wait_for};

/// Tries everything an agent should and should not be able to do, and
/// writes what happened into `$OUT/<agent>/` (writable through the
/// workflow's `sandbox.writable`).
const PROBE: &str = r#"#!/bin/sh
cat >/dev/null
r="$OUT/$AGENT_NAME"
mkdir -p "$r"
try() { if "$@" 2>/dev/null; then echo yes; else echo no; fi; }
try touch "$HOME/.awtui-sandbox-probe-$AGENT_NAME" > "$r/home"
try touch "$OTHER_WT/from-$AGENT_NAME.txt" > "$r/other-worktree"
try sh -c "echo mine > own-$AGENT_NAME.txt" > "$r/own-worktree"
try sh -c "echo private > /tmp/probe-$AGENT_NAME" > "$r/tmp"
# Every file it can read under awtui's state folder and the instance's.
find "$AWTUI_STATE_DIR" "$INSTANCE_DIR" -type f 2>/dev/null | while read -r f; do
  cat "$f" 2>/dev/null
done > "$r/seen"
# awtui's tools still work from inside.
"$AWTUI_BIN" ctx send "boxed $AGENT_NAME says hello" > "$r/ctx" 2>&1
printf '%s' "$AWTUI_TOKEN" > "$r/token.tmp" && mv "$r/token.tmp" "$r/token"
echo probed
"#;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn a_sandboxed_agent_writes_only_its_own_worktree_and_sees_no_other_token() {
    let mut w = World::new();
    let out = w.tmp.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let worktrees = awtui::workspace::worktrees_root(&w.dir, "i");
    let agent = |name: &str, other: &str, workspace: &str| {
        format!(
            "  {name}:
    command: ./probe.sh
    workspace: {workspace}
    sandbox:
      writable: [\"{out}\"]
    env:
      AGENT_NAME: {name}
      OTHER_WT: \"{other_wt}\"
      OUT: \"{out}\"
      AWTUI_STATE_DIR: \"{state}\"
      INSTANCE_DIR: \"{dir}/.awtui\"
",
            out = out.display(),
            state = w.state.display(),
            dir = w.dir.display(),
            other_wt = worktrees.join(other).display(),
        )
    };
    let workflow = format!(
        "name: boxed\nagents:\n{}{}{}kickoff: '@a, @b and @c: probe'\n",
        agent("a", "b", "worktree"),
        agent("b", "a", "worktree"),
        // In the shared checkout, which it may write, beside the worktrees.
        agent("c", "a", "shared"),
    );
    init_repo(
        &w.dir,
        &[
            ("boxed.yaml", &workflow),
            ("probe.sh", PROBE),
            ("src/lib.txt", "code\n"),
        ],
    );
    w.start_background("boxed.yaml", "i");
    for name in ["a", "b", "c"] {
        wait_for(&format!("agent {name} to probe"), || {
            out.join(name).join("token").exists().then_some(())
        });
    }
    let listed = w.list();
    for agent in listed[0]["agents"].as_array().unwrap() {
        assert_eq!(agent["place"], "sandbox", "{agent}");
    }
    let home = std::env::var("HOME").unwrap();
    for (me, other) in [("a", "b"), ("b", "a"), ("c", "a")] {
        let r = out.join(me);
        assert_eq!(read(&r.join("home")).trim(), "no", "{me} wrote $HOME");
        assert!(
            !Path::new(&home)
                .join(format!(".awtui-sandbox-probe-{me}"))
                .exists()
        );
        assert_eq!(
            read(&r.join("other-worktree")).trim(),
            "no",
            "{me} wrote {other}'s worktree"
        );
        assert_eq!(
            read(&r.join("own-worktree")).trim(),
            "yes",
            "{me} could not write its own worktree"
        );
        assert_eq!(read(&r.join("tmp")).trim(), "yes", "{me} had no /tmp");
        let others_token = read(&out.join(other).join("token"));
        assert_eq!(others_token.len(), 64, "{other}'s token: {others_token:?}");
        let seen = read(&r.join("seen"));
        assert!(
            !seen.contains(&others_token),
            "{me} could read {other}'s token ({} bytes seen)",
            seen.len()
        );
        assert!(
            !Path::new(&format!("/tmp/probe-{me}")).exists(),
            "{me}'s /tmp is not private"
        );
    }
    // awtui's tools work from inside the sandbox.
    for me in ["a", "b", "c"] {
        wait_for(&format!("{me}'s message through awtui ctx"), || {
            w.channel("i")
                .iter()
                .any(|m| m["message"] == format!("boxed {me} says hello"))
                .then_some(())
        });
    }
    // The turn is committed on the agent's branch like any other.
    for me in ["a", "b"] {
        let branch = format!("awtui/i/{me}");
        let files = wait_for(&format!("{me}'s turn to be committed"), || {
            let files = git(&w.dir, &["ls-tree", "-r", "--name-only", &branch]);
            files.contains(&format!("own-{me}.txt")).then_some(files)
        });
        assert!(
            !files.contains("from-"),
            "a probe landed in {branch}: {files}"
        );
    }
}

#[test]
fn validate_says_when_bubblewrap_is_missing() {
    let w = World::new();
    w.script("probe.sh", PROBE);
    std::fs::write(
        w.dir.join("boxed.yaml"),
        "agents:\n  a:\n    command: ./probe.sh\n    sandbox: true\n",
    )
    .unwrap();
    let empty = w.tmp.path().join("nobin");
    std::fs::create_dir_all(&empty).unwrap();
    let out = w
        .cmd(&["validate", "boxed.yaml"])
        .env("PATH", &empty)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("boxed.yaml:2:3")
            && stderr.contains(
                "agent 'a' cannot run: 'bwrap' was not found on PATH; install bubblewrap"
            ),
        "{stderr}"
    );
    // With bwrap on PATH it is valid.
    let ok = w.run(&["validate", "boxed.yaml"]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
}
