//! One startup path (`awtui::commands::startup`): every process that takes
//! part in starting an instance loads its workflow once, and the backends
//! are checked once per start, by the process the person ran; the
//! background host it starts trusts that check. Each process says how
//! often it did both in the instance's log, which these tests count (the
//! control room's `awtui <file>` is counted in `tests/tui_e2e.rs`).

use crate::cli_support;

use std::path::PathBuf;

use cli_support::{World, startup_tallies};

/// The client, then the background host it started: one load each, one
/// check in all.
const CLIENT_AND_HOST: [(u64, u64); 2] = [(1, 1), (1, 0)];

/// Runs `awtui <args>`, which starts an instance in the background and
/// prints it as JSON; the instance's log (its process is stopped with the
/// world).
fn started_log(w: &mut World, args: &[&str]) -> PathBuf {
    let r = w.run(args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let started = r.json();
    w.adopt(started["pid"].as_u64().unwrap() as u32);
    PathBuf::from(started["log"].as_str().expect("the started instance's log"))
}

#[test]
fn a_background_start_loads_once_per_process_and_checks_once() {
    let mut w = World::demo();
    let log = started_log(
        &mut w,
        &[
            "start",
            "demo.yaml",
            "--instance",
            "once",
            "--background",
            "--json",
        ],
    );
    assert_eq!(startup_tallies(&log), CLIENT_AND_HOST);
    assert_eq!(w.run(&["stop", "@once"]).code, 0);
}

#[test]
fn a_new_standalone_agent_loads_once_per_process_and_checks_once() {
    let mut w = World::new();
    w.script("answer.sh", "#!/bin/sh\ncat >/dev/null\necho here\n");
    let log = started_log(
        &mut w,
        &["new", "solo", "--command", "./answer.sh", "--json"],
    );
    assert_eq!(startup_tallies(&log), CLIENT_AND_HOST);
    assert_eq!(w.run(&["stop", "solo"]).code, 0);
}

#[test]
fn a_run_loads_and_checks_once() {
    let w = World::new();
    w.script("done.sh", "#!/bin/sh\ncat >/dev/null\necho done\n");
    std::fs::write(
        w.dir.join("quick.yaml"),
        "agents:\n  a:\n    command: ./done.sh\nkickoff: \"@a go\"\n",
    )
    .unwrap();
    let r = w.run(&["run", "quick.yaml", "--instance", "q"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let log = w.dir.join(".workflow/q/awtui.log");
    assert_eq!(startup_tallies(&log), [(1, 1)]);
}
