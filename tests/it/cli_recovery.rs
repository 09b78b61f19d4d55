//! `kill -9` of a background instance mid-run, on the offline demo, twice:
//! once while the coder works on a message it has not answered, once right
//! after it answered but before its turn ended. Each restart resumes the
//! instance: the channel is intact, the unanswered message is delivered
//! exactly once more, the answered one is not delivered again (so no reply
//! is posted twice), the killed instance's agent processes are ended, stale
//! records are cleaned, and a `.cursor/mcp.json` backup left behind is
//! restored.

use crate::cli_support;

use std::path::Path;

use cli_support::{World, alive, wait_for};

/// The demo coder, held at two gates (files the test creates): before it
/// answers, and after. Each run records its pid.
const CODER: &str = r#"#!/bin/sh
set -eu
cat >/dev/null
echo $$ >> coder-runs.log
gate() { i=0; while [ ! -e "$1" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; }
ctx() { "${AWTUI_BIN:-awtui}" ctx "$@"; }
gate gate1
ctx doc append --text "
## Change
greet.sh now takes --shout.
" >/dev/null
ctx send "Implemented --shout (see notes.md). @reviewer please review." >/dev/null
gate gate2
"#;

fn runs(dir: &Path) -> Vec<u32> {
    std::fs::read_to_string(dir.join("coder-runs.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

fn kill9(pid: u32) {
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    wait_for("the killed instance to die", || (!alive(pid)).then_some(()));
}

fn authors(w: &World) -> Vec<String> {
    w.channel("default")
        .iter()
        .map(|m| m["from"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn kill_9_then_start_resumes_exactly_once() {
    let mut w = World::demo();
    w.script("agents/coder.sh", CODER);

    // Round 1: killed while the coder works on #2, not yet answered.
    let first = w.start_background("demo.yaml", "default");
    wait_for("the coder's first run", || {
        (runs(&w.dir).len() == 1).then_some(())
    });
    kill9(first);
    assert!(w.list().is_empty(), "a dead instance is never listed");
    assert_eq!(
        std::fs::read_dir(w.state.join("instances"))
            .unwrap()
            .count(),
        0,
        "its registry record was cleaned"
    );
    assert!(
        !w.dir.join(".workflow/default/instance.json").exists(),
        "and its folder's record"
    );
    assert_eq!(authors(&w), ["system", "planner"]);

    let second = w.start_background("demo.yaml", "default");
    let orphan = runs(&w.dir)[0];
    assert!(
        !alive(orphan),
        "the killed instance's coder was ended before the restart went on"
    );
    wait_for("the coder's second run", || {
        (runs(&w.dir).len() == 2).then_some(())
    });
    std::fs::write(w.dir.join("gate1"), "").unwrap();
    wait_for("the coder's answer and the review", || {
        (authors(&w).len() == 4).then_some(())
    });
    assert_eq!(authors(&w), ["system", "planner", "coder", "reviewer"]);

    // Round 2: killed after the coder answered, before its turn ended, with
    // a Cursor config backup left behind as a crashed Cursor run leaves it.
    kill9(second);
    let cursor = w.dir.join(".cursor");
    std::fs::create_dir_all(&cursor).unwrap();
    std::fs::write(cursor.join("mcp.json"), "{\"mcpServers\":{\"awtui\":{}}}\n").unwrap();
    std::fs::write(
        cursor.join("mcp.json.awtui-backup"),
        "{\"mcpServers\":{\"mine\":{}}}\n",
    )
    .unwrap();
    let third = w.start_background("demo.yaml", "default");
    assert!(!alive(runs(&w.dir)[1]), "the second orphan was ended too");
    std::fs::write(w.dir.join("gate2"), "").unwrap();
    // Every coder process (the orphans of the killed instances included)
    // has ended before the channel is judged.
    wait_for("every coder run to end", || {
        runs(&w.dir).iter().all(|p| !alive(*p)).then_some(())
    });
    wait_for("the instance to be idle", || {
        let list = w.list();
        let agents = list.first()?["agents"].as_array()?.clone();
        agents
            .iter()
            .all(|a| a["status"] == "idle" && a["unread"] == 0)
            .then_some(())
    });
    assert_eq!(
        runs(&w.dir).len(),
        2,
        "the answered message was not delivered again"
    );
    assert_eq!(
        authors(&w),
        ["system", "planner", "coder", "reviewer"],
        "no message lost, none posted twice"
    );
    let ids: Vec<u64> = w
        .channel("default")
        .iter()
        .map(|m| m["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [1, 2, 3, 4]);
    assert_eq!(
        std::fs::read_to_string(cursor.join("mcp.json")).unwrap(),
        "{\"mcpServers\":{\"mine\":{}}}\n"
    );
    assert!(!cursor.join("mcp.json.awtui-backup").exists());
    let log = std::fs::read_to_string(w.dir.join(".workflow/default/awtui.log")).unwrap();
    assert!(log.contains("resuming instance default"), "{log}");
    assert!(log.contains("restored .cursor/mcp.json"), "{log}");
    assert!(
        log.contains("coder had answered the messages up to #2"),
        "{log}"
    );
    assert!(log.contains("ended coder's turn left running"), "{log}");

    let r = w.run(&["stop", "@default"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!alive(third));
}

/// A Claude Code agent (the fake CLI) killed mid-turn, after it reported
/// its session: the restart resumes that session and answers once.
#[test]
fn kill_9_mid_turn_resumes_the_cli_session() {
    let mut w = World::new();
    let bin = w.dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fakes/fake_agent.py");
    std::os::unix::fs::symlink(fake, bin.join("claude")).unwrap();
    let gate = w.dir.join("gate");
    let argv = w.dir.join("argv.log");
    std::fs::write(
        w.dir.join("cc.yaml"),
        format!(
            "agents:\n  cc:\n    backend: claude\n    env:\n      PATH: \"{}:{}\"\n      FAKE_MODE: gate\n      FAKE_GATE: \"{}\"\n      FAKE_ARGV_LOG: \"{}\"\nkickoff: \"@cc first\"\n",
            bin.display(),
            std::env::var("PATH").unwrap(),
            gate.display(),
            argv.display()
        ),
    )
    .unwrap();
    let session = w.dir.join(".workflow/default/agents/cc/session");
    let first = w.start_background("cc.yaml", "default");
    wait_for("the session id to be saved mid-turn", || {
        std::fs::read_to_string(&session)
            .ok()
            .filter(|s| s.trim() == "sess-cc")
    });
    kill9(first);
    w.start_background("cc.yaml", "default");
    wait_for("the resumed turn", || {
        let log = std::fs::read_to_string(&argv).unwrap_or_default();
        (log.lines().count() == 2).then_some(())
    });
    std::fs::write(&gate, "").unwrap();
    wait_for("the answer", || {
        w.channel("default")
            .iter()
            .any(|m| m["from"] == "cc")
            .then_some(())
    });
    let log = std::fs::read_to_string(&argv).unwrap();
    let second: serde_json::Value = serde_json::from_str(log.lines().nth(1).unwrap()).unwrap();
    let args: Vec<&str> = second["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        args.windows(2).any(|p| p == ["--resume", "sess-cc"]),
        "{args:?}"
    );
    let r = w.run(&["stop", "@default"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let from_cc: Vec<String> = w
        .channel("default")
        .iter()
        .filter(|m| m["from"] == "cc")
        .map(|m| m["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(from_cc, ["done (resumed sess-cc)"]);
}

/// The issue's repro with the binary: `a` is handed `one`, `two` arrives
/// during that turn, `a` answers `one`, its next turn is handed `two`, and
/// the instance is killed mid-turn. The restart must deliver `two` again
/// (the answer to `one` is older than that hand-over), and nothing else.
#[test]
fn kill_9_after_answering_an_earlier_message_still_delivers_the_later_one() {
    const AGENT: &str = r#"#!/bin/sh
prompt=$(cat)
n=$(( $(cat turns 2>/dev/null || echo 0) + 1 ))
echo $n > turns
printf '%s' "$prompt" > "prompt-$n.txt"
echo $$ >> a-runs.log
gate() { i=0; while [ ! -e "$1" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; }
case $n in
  1) gate release1; echo "answer one" ;;
  2) touch turn2; gate never ;;
  *) echo "answer $n" ;;
esac
"#;
    let mut w = World::new();
    w.script("a.sh", AGENT);
    std::fs::write(
        w.dir.join("wf.yaml"),
        "agents:\n  a:\n    command: ./a.sh\n",
    )
    .unwrap();
    let first = w.start_background("wf.yaml", "default");
    let send = |text: &str| {
        let r = w.run(&["send", text, "--to", "@default"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
    };
    send("@a one");
    wait_for("a's first turn", || {
        w.dir.join("prompt-1.txt").exists().then_some(())
    });
    send("@a two");
    wait_for("two in the channel", || {
        (w.channel("default").len() == 2).then_some(())
    });
    std::fs::write(w.dir.join("release1"), "").unwrap();
    wait_for("a's second turn, handed two", || {
        w.dir.join("turn2").exists().then_some(())
    });
    let second_prompt = std::fs::read_to_string(w.dir.join("prompt-2.txt")).unwrap();
    assert!(second_prompt.contains("two"), "{second_prompt}");
    kill9(first);

    let again = w.start_background("wf.yaml", "default");
    wait_for("two delivered again and answered", || {
        w.channel("default")
            .iter()
            .any(|m| m["from"] == "a" && m["message"] == "answer 3")
            .then_some(())
    });
    let third_prompt = std::fs::read_to_string(w.dir.join("prompt-3.txt")).unwrap();
    assert!(third_prompt.contains("two"), "{third_prompt}");
    let texts: Vec<String> = w
        .channel("default")
        .iter()
        .map(|m| {
            format!(
                "{}: {}",
                m["from"].as_str().unwrap(),
                m["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        texts,
        [
            "user: @a one",
            "user: @a two",
            "a: answer one",
            "a: answer 3"
        ],
        "each mention answered once"
    );
    let r = w.run(&["stop", "@default"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!alive(again));
}
