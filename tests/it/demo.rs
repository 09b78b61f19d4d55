//! The offline demo (assets/workflows) as a newcomer sees it: it takes a
//! few seconds so the agents are seen handing work to each other, its
//! FINAL block holds only the answer, and its notes get each section once
//! however many turns the agents take.

use crate::cli_support;

use std::path::Path;
use std::process::Command;

use cli_support::World;

/// A stand-in for `awtui ctx doc read|append` over one notes file, so the
/// demo agents' scripts can run on their own.
const FAKE_CTX: &str = r#"#!/bin/sh
notes="$(dirname "$0")/notes.md"
case "$1 $2 $3" in
  "ctx doc read") cat "$notes" 2>/dev/null || true ;;
  "ctx doc append") printf '%s' "$5" >> "$notes" ;;
  "ctx doc write") : ;;
  "ctx send "*) : ;;
  *) echo "fake ctx: unexpected $*" >&2; exit 2 ;;
esac
"#;

fn agent(dir: &Path, name: &str, prompt: &str) -> String {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("assets/workflows/agents/{name}.sh"));
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("printf '%s' '{prompt}' | '{}'", script.display()))
        .env("AWTUI_BIN", dir.join("awtui"))
        .env("AWTUI_DEMO_PAUSE", "0")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_demo_notes_get_each_section_once_however_many_turns() {
    let w = World::new();
    w.script("awtui", FAKE_CTX);
    for _ in 0..2 {
        agent(&w.dir, "planner", "@planner please plan it");
        agent(&w.dir, "coder", "@coder do it");
    }
    let notes = std::fs::read_to_string(w.dir.join("notes.md")).unwrap();
    assert_eq!(notes.matches("# Plan").count(), 1, "{notes}");
    assert_eq!(notes.matches("## Change").count(), 1, "{notes}");
}

#[test]
fn the_demo_final_block_holds_only_the_answer() {
    let w = World::new();
    w.script("awtui", FAKE_CTX);
    std::fs::write(w.dir.join("notes.md"), "# Plan\n--shout\n## Change\n").unwrap();
    let out = agent(&w.dir, "reviewer", "@reviewer please review");
    let parsed = awtui::protocols::aop::parse(&out, awtui::protocols::aop::Mode::Strict);
    let finals: Vec<_> = parsed
        .blocks()
        .filter(|b| b.kind == awtui::protocols::aop::BlockType::Final)
        .collect();
    assert_eq!(finals.len(), 1, "{out}");
    assert_eq!(
        finals[0].content.trim(),
        "The --shout change is approved. Notes: notes.md, review: findings/review.md.",
        "nothing that looks like prompt text"
    );
}

#[test]
fn the_demo_takes_long_enough_to_watch() {
    let w = World::demo();
    // The pace a newcomer gets: no AWTUI_DEMO_PAUSE.
    let out = w
        .cmd(&["run", "demo.yaml", "--json"])
        .env_remove("AWTUI_DEMO_PAUSE")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["success"], true, "{v}");
    // Six pauses of a second, one after the other (a lower bound only).
    let ms = v["duration_ms"].as_u64().unwrap();
    assert!(ms >= 6000, "the demo took {ms} ms");
}
