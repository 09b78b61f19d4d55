//! Three command agents split a five-task plan with dependencies, declared
//! in the workflow file, through the task tools alone (`awtui ctx call`):
//! the engine announces available tasks, wakes the agents allowed to take
//! them, and the run ends with every task completed exactly once. Also:
//! `awtui validate` reports plan mistakes with their positions, and
//! `awtui tasks` shows the board of a running instance.

mod cli_support;

use awtui::tasks::TaskStore;
use awtui::tasks::journal::{FileJournal, NoJournal};
use cli_support::{World, wait_for};

const WORKER: &str = r#"#!/usr/bin/env python3
import json, os, subprocess, sys
sys.stdin.read()
awtui = os.environ["AWTUI_BIN"]
me = os.environ["AWTUI_AGENT"]

def call(tool, args):
    r = subprocess.run([awtui, "ctx", "--json", "call", tool, json.dumps(args)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": r.stderr}
    return json.loads(r.stdout)

agent = call("agent_register", {"name": me, "runtime": "custom"})["id"]
did = []
for wf in call("workflow_list", {})["workflows"]:
    while True:
        claimed = None
        for t in call("workflow_next_tasks", {"workflow_id": wf["id"]})["tasks"]:
            if call("task_claim", {"task_id": t["id"], "agent_id": agent}).get("success"):
                claimed = t
                break
        if claimed is None:
            break
        call("task_update_status", {"id": claimed["id"], "status": "in_progress"})
        ctx = call("task_load_context", {"task_id": claimed["id"]})
        deps = [d["outcome"] for d in ctx["dependency_outcomes"]]
        call("checkpoint_add", {"task_id": claimed["id"], "type": "progress",
                                "summary": "built on " + ", ".join(deps)})
        with open("done.log", "a") as f:
            f.write(me + " " + claimed["name"] + "\n")
        r = call("task_update_status", {"id": claimed["id"], "status": "completed",
                                        "outcome": claimed["name"] + " by " + me})
        assert r.get("success"), r
        did.append(claimed["name"])
print("did " + (", ".join(did) if did else "nothing new"))
"#;

const PLAN: &str = "agents:
  w1:
    command: ./worker.py
  w2:
    command: ./worker.py
  w3:
    command: ./worker.py
tasks:
  - id: schema
    description: the tables
  - id: api
    depends_on: [schema]
  - id: ui
    depends_on: [schema]
  - id: docs
    depends_on: [schema]
  - id: tests
    depends_on: [api, ui]
";

#[test]
fn three_agents_split_a_five_task_plan_and_each_task_is_done_once() {
    let w = World::new();
    w.script("worker.py", WORKER);
    std::fs::write(w.dir.join("plan.yaml"), PLAN).unwrap();
    let r = w.run(&["validate", "plan.yaml"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);

    let r = w.run(&["run", "plan.yaml"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);

    let log = std::fs::read_to_string(w.dir.join("done.log")).unwrap();
    let mut done: Vec<&str> = log.lines().map(|l| l.split(' ').nth(1).unwrap()).collect();
    done.sort();
    assert_eq!(done, ["api", "docs", "schema", "tests", "ui"], "{log}");
    // tests came after api and ui.
    let pos = |name: &str| log.lines().position(|l| l.ends_with(name)).unwrap();
    assert!(
        pos("tests") > pos("api") && pos("tests") > pos("ui"),
        "{log}"
    );

    // The board on disk: everything completed, each outcome by whoever did it.
    let (_, replay) = FileJournal::open(&w.dir.join(".workflow/plan")).unwrap();
    let store = TaskStore::open(Box::new(NoJournal), replay);
    let tasks = store.all_tasks();
    assert_eq!(tasks.len(), 5);
    for t in &tasks {
        assert_eq!(t.status.as_str(), "completed", "{t:?}");
        let by = log
            .lines()
            .find(|l| l.ends_with(&format!(" {}", t.name)))
            .unwrap()
            .split(' ')
            .next()
            .unwrap();
        assert_eq!(
            t.outcome.as_deref(),
            Some(format!("{} by {by}", t.name).as_str())
        );
        assert!(t.id.starts_with("tk_"), "{}", t.id);
    }
    // The announcements woke the agents: the first one names schema.
    let channel = w.channel("plan");
    let first = channel[0]["message"].as_str().unwrap();
    assert!(
        first.contains("schema") && first.contains("@w1 @w2 @w3"),
        "{first}"
    );
}

#[test]
fn validate_reports_plan_mistakes_with_their_positions() {
    let w = World::new();
    w.script("a.sh", "#!/bin/sh\necho hi\n");
    std::fs::write(
        w.dir.join("bad.yaml"),
        "agents:\n  a:\n    command: ./a.sh\ntasks:\n  - id: one\n    depends_on: [three]\n  - id: two\n    depends_on: [four]\n    assignee: b\n  - id: four\n    depends_on: [two]\n",
    )
    .unwrap();
    let r = w.run(&["validate", "bad.yaml"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("bad.yaml:6:18") && r.stderr.contains("'three'"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("assignee 'b' is not an agent") && r.stderr.contains("bad.yaml:9:15"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("cycle: two → four → two"), "{}", r.stderr);
}

#[test]
fn awtui_tasks_shows_the_board_of_a_running_instance() {
    let mut w = World::new();
    w.script("idle.sh", "#!/bin/sh\ncat >/dev/null\necho waiting\n");
    std::fs::write(
        w.dir.join("b.yaml"),
        "agents:\n  a:\n    command: ./idle.sh\ntasks:\n  - id: first\n    assignee: a\n  - id: second\n    depends_on: [first]\n",
    )
    .unwrap();
    w.start_background("b.yaml", "b");
    let out = wait_for("the board", || {
        let r = w.run(&["tasks", "b"]);
        (r.code == 0 && r.stdout.contains("second")).then_some(r.stdout)
    });
    assert!(out.contains("pending (2)"), "{out}");
    assert!(out.contains("first · for a"), "{out}");
    assert!(out.contains("second · after first"), "{out}");
    let r = w.run(&["tasks", "b", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["tasks"].as_array().unwrap().len(), 2);
    let r = w.run(&["stop", "@b"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}
