//! `awtui run` on the real binary: the default output, `--json` (one final
//! object), `--json --verbose` (events as JSON lines), and exit codes.

mod cli_support;

use cli_support::World;
use serde_json::Value;

#[test]
fn run_prints_messages_and_exits_0() {
    let w = World::demo();
    let r = w.run(&["run", "demo.yaml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.matches("── #").count(), 4, "{}", r.stdout);
    assert!(r.stderr.contains("· reviewer: thinking"), "{}", r.stderr);
    // Finished runs leave nothing registered.
    assert!(w.list().is_empty());
    // Running it again resumes the finished instance: nothing to do, no
    // kickoff posted again, no warning added to the channel.
    let r = w.run(&["run", "demo.yaml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(w.channel("default").len(), 4);
}

#[test]
fn run_json_is_one_object_with_everything() {
    let w = World::demo();
    let r = w.run(&["run", "demo.yaml", "--instance", "j", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["success"], true);
    assert_eq!(v["instance"], "j");
    assert_eq!(v["workflow"], "demo");
    assert!(v["duration_ms"].as_u64().is_some());
    let messages = v["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[3]["entry"]["from"], "reviewer");
    let kinds: Vec<&str> = messages[3]["aop"]["segments"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"FINAL"), "{kinds:?}");
    assert!(v["threads"].is_array());
    let agents = v["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 3);
    for a in agents {
        assert_eq!(a["status"]["status"], "idle", "{a}");
        assert_eq!(a["metrics"]["turns"], 1, "{a}");
        assert_eq!(a["backend"], "command");
    }
    assert_eq!(v["cost_usd"], 0.0);
    assert_eq!(v["document"]["file"], "notes.md");
    assert!(
        v["document"]["content"]
            .as_str()
            .unwrap()
            .contains("# Plan")
    );
}

#[test]
fn run_json_verbose_streams_events() {
    let w = World::demo();
    let r = w.run(&["run", "demo.yaml", "--json", "--verbose"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let events: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(events.iter().all(|e| e["event"].is_string()));
    assert_eq!(events.iter().filter(|e| e["event"] == "message").count(), 4);
    assert_eq!(events.last().unwrap()["event"], "finished");
}

#[test]
fn a_failed_agent_fails_the_run() {
    let w = World::new();
    std::fs::write(
        w.dir.join("fail.yaml"),
        "agents:\n  a:\n    command: [\"false\"]\nlimits:\n  retries: 0\nkickoff: \"@a go\"\n",
    )
    .unwrap();
    let r = w.run(&["run", "fail.yaml", "--json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["success"], false);
    assert_eq!(v["outcome"]["outcome"], "incomplete");
}

/// Escape sequences an agent might emit: a window title (OSC 0), a screen
/// clear (CSI 2J) and a clipboard write (OSC 52).
const NASTY: &str = "\x1b]0;pwned\x07\x1b[2J\x1b]52;c;aGk=\x07";

#[test]
fn nothing_raw_reaches_the_terminal_and_json_stays_faithful() {
    let w = World::new();
    w.script(
        "nasty.sh",
        &format!("#!/bin/sh\ncat >/dev/null\nprintf '{NASTY}boom{NASTY}\\n' >&2\nexit 1\n"),
    );
    // The kickoff carries the same sequences (YAML escapes).
    std::fs::write(
        w.dir.join("nasty.yaml"),
        "agents:\n  a:\n    command: ./nasty.sh\nlimits:\n  retries: 0\n\
         kickoff: \"@a go \\x1b]0;title\\x07 \\x1b[2J now\"\n",
    )
    .unwrap();
    let raw = |text: &str| text.contains('\x1b') || text.contains('\x07');

    let r = w.run(&["run", "nasty.yaml", "--instance", "h", "--verbose"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("boom"),
        "the reason is shown: {}",
        r.stderr
    );
    assert!(r.stdout.contains("go"), "{}", r.stdout);
    assert!(!raw(&r.stdout), "stdout: {:?}", r.stdout);
    assert!(!raw(&r.stderr), "stderr: {:?}", r.stderr);
    // The system message that quotes the agent's stderr is clean too.
    let channel = w.channel("h");
    let system: Vec<&str> = channel
        .iter()
        .filter(|m| m["message"].as_str().unwrap().contains("failed after"))
        .map(|m| m["message"].as_str().unwrap())
        .collect();
    assert_eq!(system.len(), 1, "{channel:?}");
    assert!(
        system[0].contains("boom") && !raw(system[0]),
        "{:?}",
        system[0]
    );

    let r = w.run(&["run", "nasty.yaml", "--instance", "j", "--json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!raw(&r.stdout), "JSON escapes control characters");
    assert!(!raw(&r.stderr), "stderr: {:?}", r.stderr);
    let v = r.json();
    let messages = v["messages"].as_array().unwrap();
    // The user's kickoff, exactly as written.
    assert_eq!(
        messages[0]["entry"]["message"],
        "@a go \x1b]0;title\x07 \x1b[2J now"
    );
    let reason = v["agents"][0]["status"].to_string();
    assert!(
        reason.contains("boom") && !reason.contains("\\u001b"),
        "{reason}"
    );
}

#[test]
fn error_paths_are_sanitized_too() {
    let w = World::new();
    // A file name and an unknown argument with escape sequences, echoed
    // back in the error.
    for args in [
        &["run", "\x1b]0;pwned\x07.yaml"][..],
        &["validate", "\x1b[2J.yaml"],
        &["--bogus\x1b]52;c;aGk=\x07"],
    ] {
        let r = w.run(args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(!r.stderr.is_empty(), "{args:?}");
        assert!(
            !r.stderr.contains('\x1b') && !r.stderr.contains('\x07'),
            "{args:?}: {:?}",
            r.stderr
        );
    }
}
