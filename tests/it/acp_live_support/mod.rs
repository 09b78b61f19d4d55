//! A workflow with one `backend: acp` agent `coder` played by the scripted
//! fake `tests/fakes/acp_scripted_agent.py` (its turns: the updates it sends,
//! a flood of tool calls, whether it holds the prompt until a cancel),
//! for the tests of the live structure in `list --json`, `run --json`
//! and the web page.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::cli_support::World;

/// A tool call's title a hostile agent sends: markup and terminal
/// escapes.
pub const HOSTILE_TITLE: &str = "<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=2\">\u{1b}]0;owned\u{7}\u{1b}[2J";
/// The title as every front end gets it (escapes taken out by the
/// backend, markup left for the page to show as text).
pub const HOSTILE_TITLE_SHOWN: &str =
    "<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=2\">";

/// Fails with the command to install it when `python3` is missing.
fn need_python() {
    let found = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "python3 is missing: the fake ACP agent needs it (apt-get install python3)"
    );
}

/// One ordinary turn: an edit with a diff, a plan, usage, text.
pub fn edit_turn(hold: bool) -> Value {
    json!({
        "updates": [
            {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit src/a.rs",
             "kind": "edit", "status": "in_progress", "locations": [{"path": "src/a.rs"}]},
            {"sessionUpdate": "tool_call_update", "toolCallId": "t1",
             "status": if hold { "in_progress" } else { "completed" },
             "content": [{"type": "diff", "path": "src/a.rs", "oldText": "a\nb\n", "newText": "a\nc\nd\n"}]},
            {"sessionUpdate": "plan", "entries": [
                {"content": "read the code", "status": "completed", "priority": "high"},
                {"content": "write the test", "status": "in_progress", "priority": "medium"}]},
            {"sessionUpdate": "usage_update", "used": 1234, "size": 200000,
             "cost": {"amount": 0.05, "currency": "USD"}}
        ],
        "text": "working on it",
        "hold": hold,
    })
}

/// A hostile turn: markup and escapes in a title, a file, a diff, a plan
/// step and the text; held until cancelled.
pub fn hostile_turn() -> Value {
    json!({
        "updates": [
            {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": HOSTILE_TITLE,
             "kind": "edit", "status": "in_progress",
             "locations": [{"path": "src/<img src=x onerror=window.__pwned=3>.rs"}]},
            {"sessionUpdate": "tool_call_update", "toolCallId": "t1",
             "content": [{"type": "diff", "path": "src/x.rs", "oldText": "a\n",
                          "newText": "<img src=x onerror=window.__pwned=4>\n\u{1b}[31mred\n"}]},
            {"sessionUpdate": "plan", "entries": [
                {"content": "<script>window.__pwned=5</script>", "status": "in_progress", "priority": "high"},
                {"content": "ship", "status": "pending", "priority": "low"}]},
            {"sessionUpdate": "usage_update", "used": 1234, "cost": {"amount": 0.05, "currency": "USD"}}
        ],
        "text": "<img src=x onerror=window.__pwned=6>streamed",
        "hold": true,
    })
}

/// A flood: 10,000 new tool calls in one turn.
pub fn flood_turn(hold: bool) -> Value {
    json!({"flood": 10_000, "hold": hold, "text": "flooded"})
}

/// Writes `<file>` (agent `coder`, `backend: acp`, the fake playing
/// `turns`, the last one repeating) into the world's folder; the file
/// where the fake logs every method it gets.
pub fn acp_workflow(w: &World, file: &str, turns: &[Value]) -> PathBuf {
    need_python();
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fakes/acp_scripted_agent.py");
    let script = w.dir.join(format!("{file}.turns.json"));
    std::fs::write(&script, Value::Array(turns.to_vec()).to_string()).unwrap();
    let log = w.dir.join(format!("{file}.methods.log"));
    std::fs::write(
        w.dir.join(file),
        format!(
            "agents:\n  coder:\n    backend: acp\n    command: [\"{}\"]\n    env:\n      FAKE_ACP_SCRIPT: \"{}\"\n      FAKE_ACP_LOG: \"{}\"\nlimits:\n  retries: 0\nkickoff: \"@coder go\"\n",
            fake.display(),
            script.display(),
            log.display()
        ),
    )
    .unwrap();
    log
}

/// The methods the fake got, in order.
pub fn methods(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// How many times the fake got `method`.
pub fn count(log: &Path, method: &str) -> usize {
    methods(log).iter().filter(|m| *m == method).count()
}

/// Agent `name` of the first instance `list --json` shows, once `check`
/// accepts it.
pub fn listed_agent(w: &World, name: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    crate::cli_support::wait_for(what, || {
        w.list().iter().find_map(|i| {
            i["agents"]
                .as_array()?
                .iter()
                .find(|a| a["name"] == name && check(a))
                .cloned()
        })
    })
}
