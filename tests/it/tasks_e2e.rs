//! Three command agents split a five-task plan with dependencies, declared
//! in the workflow file, through the task tools alone (`awtui ctx call`):
//! the engine announces available tasks, wakes the agents allowed to take
//! them, and the run ends with every task completed exactly once. Also:
//! `awtui validate` reports plan mistakes with their positions, and
//! `awtui tasks` shows the board of a running instance.

use crate::cli_support;

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

/// `run --json`'s final object carries the task board at the end: the
/// file's plan, every task with its status and outcome, the registered
/// agent and each task's last checkpoint; the older fields stay.
#[test]
fn run_json_reports_the_task_board_at_the_end() {
    let w = World::new();
    w.script("worker.py", WORKER);
    std::fs::write(
        w.dir.join("two.yaml"),
        "agents:\n  w1:\n    command: ./worker.py\ntasks:\n  - id: first\n  - id: second\n    depends_on: [first]\n",
    )
    .unwrap();
    let r = w.run(&["run", "two.yaml", "--json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = r.json();
    assert_eq!(v["success"], true);
    assert!(v["messages"].as_array().is_some_and(|m| !m.is_empty()));
    let board = &v["tasks"];
    let workflows = board["workflows"].as_array().unwrap();
    assert_eq!(workflows.len(), 1, "{board}");
    let tasks = board["tasks"].as_array().unwrap();
    let summary: Vec<(&str, &str, &str)> = tasks
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap(),
                t["status"].as_str().unwrap(),
                t["outcome"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("first", "completed", "first by w1"),
            ("second", "completed", "second by w1")
        ],
        "{board}"
    );
    assert_eq!(tasks[1]["depends_on"][0], tasks[0]["id"]);
    let agents = board["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 1, "{board}");
    assert_eq!(agents[0]["owner"], "w1");
    let last: Vec<&str> = board["last_checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(last, ["complete", "complete"], "{board}");
}

/// `peek --tasks` adds the board: as text after the messages, and with
/// `--json` as one object `{messages, tasks}`; `peek --json` alone stays
/// the bare array of messages existing scripts read.
#[test]
fn peek_tasks_adds_the_board_and_plain_peek_json_is_unchanged() {
    let mut w = World::new();
    w.script("idle.sh", "#!/bin/sh\ncat >/dev/null\necho waiting\n");
    std::fs::write(
        w.dir.join("p.yaml"),
        "agents:\n  a:\n    command: ./idle.sh\ntasks:\n  - id: first\n    assignee: a\n  - id: second\n    depends_on: [first]\n",
    )
    .unwrap();
    w.start_background("p.yaml", "p");
    let v = wait_for("peek --tasks --json with the board", || {
        let r = w.run(&["peek", "--to", "@p", "--tasks", "--json"]);
        (r.code == 0
            && r.json()["tasks"]["tasks"]
                .as_array()
                .is_some_and(|t| t.len() == 2))
        .then(|| r.json())
    });
    assert!(v["messages"].is_array(), "{v}");
    let names: Vec<&str> = v["tasks"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["first", "second"]);
    assert_eq!(v["tasks"]["tasks"][0]["status"], "pending");

    let r = w.run(&["peek", "--to", "@p", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.json().is_array(), "{}", r.stdout);

    let r = w.run(&["peek", "--to", "@p", "--tasks"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("pending (2)"), "{}", r.stdout);
    assert!(r.stdout.contains("second · after first"), "{}", r.stdout);

    let r = w.run(&["stop", "@p"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

const LEAD: &str = r#"#!/usr/bin/env python3
import sys
text = sys.stdin.read()
if "Issue: ol-8\nStatus: failed" in text:
    print("understood, no second worker")
elif "Issue: ol-7\nStatus: spawned\nSession: worker-1" in text:
    print("[ol-8] SPAWN_REQUEST\nIssue: ol-8\nResume: false\nOrchestrator: lead")
else:
    print("[ol-7] SPAWN_REQUEST\nIssue: ol-7\nResume: true\nCheckpoint: abc123\nOrchestrator: lead")
"#;

const SPAWNED_WORKER: &str = r#"#!/usr/bin/env python3
import sys
text = sys.stdin.read()
if "ol-7" in text and "abc123" in text:
    print("took ol-7 from checkpoint abc123")
else:
    print("nothing for me")
"#;

const SPAWN: &str = "agents:
  lead:
    command: ./lead.py
    protocols: []
spawn:
  worker:
    max: 1
    from: [lead]
    command: ./worker.py
    protocols: []
kickoff: '@lead split the work'
";

/// An agent's SPAWN_REQUEST starts a `spawn:` worker, which gets its issue
/// and checkpoint and answers; SPAWN_ACK says spawned with the worker's
/// name; a request past `max` is answered failed with the reason; the
/// slots used are kept with the instance.
#[test]
fn a_spawn_request_starts_a_worker_within_the_limits_and_is_acked() {
    let w = World::new();
    w.script("lead.py", LEAD);
    w.script("worker.py", SPAWNED_WORKER);
    std::fs::write(w.dir.join("spawn.yaml"), SPAWN).unwrap();
    let r = w.run(&["validate", "spawn.yaml"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);

    let r = w.run(&["run", "spawn.yaml", "--json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let said: Vec<(String, String)> = report["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["entry"]["from"].as_str().unwrap().to_string(),
                m["entry"]["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let find = |from: &str, needle: &str| {
        said.iter()
            .position(|(f, m)| f == from && m.contains(needle))
            .unwrap_or_else(|| panic!("no message from {from} with {needle:?}: {said:#?}"))
    };
    let handover = find(
        "system",
        "@worker-1 you were spawned by lead to work on ol-7",
    );
    let ack = find("system", "Issue: ol-7\nStatus: spawned\nSession: worker-1");
    let answer = find("worker-1", "took ol-7 from checkpoint abc123");
    assert!(handover < answer && ack < answer, "{said:#?}");
    let refused = find("system", "Issue: ol-8\nStatus: failed");
    assert!(
        said[refused]
            .1
            .contains("all 1 'worker' workers of this instance were already spawned"),
        "{said:#?}"
    );
    find("lead", "understood, no second worker");
    // The ack parses as Agent Mail, shown as such everywhere.
    let acks = report["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| {
            m["mail"]["subject"]
                .as_str()
                .is_some_and(|s| s.contains("SPAWN_ACK"))
        })
        .count();
    assert_eq!(acks, 2, "{}", r.stdout);
    // The worker is an agent of the instance, and its slot stays used.
    let agents: Vec<&str> = report["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(agents, ["lead", "worker-1"]);
    let used = std::fs::read_to_string(w.dir.join(".workflow/spawn/spawned.json")).unwrap();
    assert!(used.contains("worker-1"), "{used}");
}

#[test]
fn validate_reports_spawn_mistakes_with_their_positions() {
    let w = World::new();
    std::fs::write(
        w.dir.join("bad.yaml"),
        "agents:\n  lead:\n    command: ['true']\nspawn:\n  worker:\n    max: 0\n    command: ['true']\n  helper:\n    from: [ghost]\n    command: ['true']\n",
    )
    .unwrap();
    let r = w.run(&["validate", "bad.yaml"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("bad.yaml:6:10")
            && r.stderr
                .contains("spawn template 'worker': max must be a whole number of at least 1"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("bad.yaml:9:") && r.stderr.contains("from names 'ghost'"),
        "{}",
        r.stderr
    );
}

/// Issue 23: a workflow with `tasks:` and a kickoff. The task announcement
/// (#2) used to reach the runner first and hide the kickoff (#1): the run
/// ended at once, `lead` never ran and its inbox kept the kickoff unread.
#[test]
fn a_kickoff_is_delivered_when_the_workflow_declares_tasks() {
    let w = World::new();
    w.script(
        "lead.sh",
        "#!/bin/sh\ncat >/dev/null\necho \"$AWTUI_AGENT\" >> lead.log\necho split\n",
    );
    w.script("worker.py", WORKER);
    let yaml = "agents:\n  lead:\n    command: ./lead.sh\n  worker:\n    command: ./worker.py\n\
         tasks:\n  - id: schema\n    name: Database schema\n    assignee: worker\n\
         kickoff: \"@lead please split the work\"\n";
    std::fs::write(w.dir.join("k.yaml"), yaml).unwrap();
    let r = w.run(&["run", "k.yaml", "--json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let lead = std::fs::read_to_string(w.dir.join("lead.log")).unwrap_or_default();
    assert_eq!(lead.lines().count(), 1, "lead ran once: {lead:?}");
    let done = std::fs::read_to_string(w.dir.join("done.log")).unwrap();
    assert_eq!(done.trim(), "worker Database schema");
    let channel = w.channel("k");
    assert!(
        channel[0]["message"].as_str().unwrap().starts_with("@lead"),
        "the kickoff is #1: {channel:?}"
    );

    // The same workflow in a control room: once lead has answered, its row
    // (`list`) and its inbox (`peek`) agree that nothing waits for it.
    let mut w = World::new();
    w.script(
        "lead.sh",
        "#!/bin/sh\ncat >/dev/null\necho \"$AWTUI_AGENT\" >> lead.log\necho split\n",
    );
    w.script("worker.py", WORKER);
    std::fs::write(w.dir.join("k.yaml"), yaml).unwrap();
    w.start_background("k.yaml", "k");
    wait_for("lead and worker to finish", || {
        let lead = std::fs::read_to_string(w.dir.join("lead.log")).ok()?;
        let done = std::fs::read_to_string(w.dir.join("done.log")).ok()?;
        let idle = w.list().iter().any(|i| {
            i["instance"] == "k"
                && i["agents"]
                    .as_array()
                    .is_some_and(|a| a.iter().all(|a| a["status"] == "idle"))
        });
        (idle && !lead.is_empty() && !done.is_empty()).then_some(())
    });
    for agent in ["lead", "worker"] {
        let rows = w.list();
        let row = rows
            .iter()
            .filter(|i| i["instance"] == "k")
            .flat_map(|i| i["agents"].as_array().unwrap().clone())
            .find(|a| a["name"] == agent)
            .unwrap();
        let r = w.run(&["peek", "--to", &format!("{agent}@k"), "--json"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let inbox = r.json().as_array().unwrap().len();
        assert_eq!(
            row["unread"], inbox,
            "{agent}: list {row} vs inbox {}",
            r.stdout
        );
        assert_eq!(inbox, 0, "{agent}: {}", r.stdout);
    }
    let lead = std::fs::read_to_string(w.dir.join("lead.log")).unwrap();
    assert_eq!(lead.lines().count(), 1, "{lead:?}");
    let r = w.run(&["stop", "@k"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// Counts this agent's turns in `turns.<agent>`; returns the new count.
const TURN_COUNTER: &str = r#"
n = 1
try:
    n = int(open("turns." + me).read()) + 1
except FileNotFoundError:
    pass
open("turns." + me, "w").write(str(n))
"#;

/// Issue 23: a task announced, claimed and given back (its holder
/// unregisters) is free again, so it is announced again, and taken.
#[test]
fn a_task_given_back_is_announced_again_and_taken_by_another() {
    let w = World::new();
    let head = WORKER.split("agent = call(").next().unwrap();
    // w1 takes the task on its first turn and leaves holding it; w2 does
    // nothing the first time it is woken and takes whatever is free after.
    let giver = format!(
        "{head}{TURN_COUNTER}\nif n == 1:\n    agent = call(\"agent_register\", {{\"name\": me, \"runtime\": \"custom\"}})[\"id\"]\n    wf = call(\"workflow_list\", {{}})[\"workflows\"][0]\n    t = call(\"workflow_next_tasks\", {{\"workflow_id\": wf[\"id\"]}})[\"tasks\"][0]\n    assert call(\"task_claim\", {{\"task_id\": t[\"id\"], \"agent_id\": agent}}).get(\"success\")\n    call(\"agent_unregister\", {{\"id\": agent}})\nprint(\"turn\", n)\n"
    );
    let taker = WORKER.replace(
        "agent = call(",
        &format!(
            "{TURN_COUNTER}\nif n == 1:\n    print('waiting')\n    sys.exit(0)\nagent = call("
        ),
    );
    w.script("giver.py", &giver);
    w.script("taker.py", &taker);
    std::fs::write(
        w.dir.join("g.yaml"),
        "agents:\n  w1:\n    command: ./giver.py\n  w2:\n    command: ./taker.py\ntasks:\n  - id: one\n",
    )
    .unwrap();
    let r = w.run(&["run", "g.yaml", "--json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let done = std::fs::read_to_string(w.dir.join("done.log")).unwrap_or_default();
    let channel = w.channel("g");
    let said: Vec<&str> = channel
        .iter()
        .filter_map(|m| m["message"].as_str())
        .collect();
    assert_eq!(
        done, "w2 one\n",
        "the freed task was taken by w2: {said:#?}"
    );
    let news: Vec<String> = channel
        .iter()
        .filter(|m| m["from"] == "system")
        .filter_map(|m| m["message"].as_str())
        .filter(|m| m.contains("ready to claim"))
        .map(String::from)
        .collect();
    assert_eq!(
        news.len(),
        2,
        "announced when planned and when freed: {news:?}"
    );
    let board = &r.json()["tasks"];
    assert_eq!(board["tasks"][0]["status"], "completed", "{board}");
}

/// A worker that claims a task and then works on it for good is stopped by
/// the person: its process is gone, so what it held is released at once
/// (no waiting for missed heartbeats), announced, and taken by another.
#[test]
fn a_stopped_agents_claims_are_released_and_taken_by_another() {
    let mut w = World::new();
    let head = WORKER.split("agent = call(").next().unwrap();
    let holder = format!(
        "{head}agent = call(\"agent_register\", {{\"name\": me, \"runtime\": \"custom\"}})[\"id\"]\nwf = call(\"workflow_list\", {{}})[\"workflows\"][0]\nt = call(\"workflow_next_tasks\", {{\"workflow_id\": wf[\"id\"]}})[\"tasks\"][0]\nassert call(\"task_claim\", {{\"task_id\": t[\"id\"], \"agent_id\": agent}}).get(\"success\")\nopen(\"claimed\", \"w\").write(\"yes\")\nimport time\nwhile True:\n    time.sleep(0.1)\n"
    );
    let taker = WORKER.replace(
        "agent = call(",
        &format!(
            "{TURN_COUNTER}\nif n == 1:\n    print('waiting')\n    sys.exit(0)\nagent = call("
        ),
    );
    w.script("holder.py", &holder);
    w.script("taker.py", &taker);
    std::fs::write(
        w.dir.join("g.yaml"),
        "agents:\n  w1:\n    command: ./holder.py\n    timeout: 10m\n  w2:\n    command: ./taker.py\ntasks:\n  - id: one\n",
    )
    .unwrap();
    w.start_background("g.yaml", "g");
    wait_for("w1 to hold the task", || {
        w.dir.join("claimed").exists().then_some(())
    });
    let r = w.run(&["stop", "w1@g"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    wait_for("w2 to finish the freed task", || {
        let done = std::fs::read_to_string(w.dir.join("done.log")).unwrap_or_default();
        (done == "w2 one\n").then_some(())
    });
    let said: Vec<String> = w
        .channel("g")
        .iter()
        .filter(|m| m["from"] == "system")
        .filter_map(|m| m["message"].as_str().map(String::from))
        .collect();
    assert!(
        said.iter()
            .any(|m| m.starts_with("Released task ") && m.ends_with("“one”: w1 was stopped.")),
        "{said:#?}"
    );
    assert_eq!(w.run(&["stop", "@g"]).code, 0);
}

/// A lead that plans one task every time it is woken (the workflow
/// `round <n>`), then answers `planned <n>`.
const PLANNER: &str = r#"
call("agent_register", {"name": me, "runtime": "custom"})
w = call("workflow_create", {"name": "round %d" % n})
r = call("workflow_set_plan", {"id": w["id"], "plan": {"summary": "one step",
         "tasks": [{"name": "step %d" % n}]}})
with open("lead.log", "a") as f:
    f.write("planned %d\n" % n)
print("planned %d" % n)
"#;

fn planner() -> String {
    let head = WORKER.split("agent = call(").next().unwrap();
    format!("{head}{TURN_COUNTER}{PLANNER}")
}

/// Issue 23: the news of the tasks an agent's own call made available
/// mentions the agents allowed to take them, not that agent: a lead that
/// plans when woken plans once, not in a loop.
#[test]
fn a_lead_is_not_woken_by_the_tasks_it_planned() {
    let w = World::new();
    w.script("lead.py", &planner());
    w.script("worker.py", WORKER);
    std::fs::write(
        w.dir.join("l.yaml"),
        "agents:\n  lead:\n    command: ./lead.py\n  w1:\n    command: ./worker.py\n  w2:\n    command: ./worker.py\n\
         limits:\n  agent_max_turns: 4\nkickoff: \"@lead plan the work\"\n",
    )
    .unwrap();
    let r = w.run(&["run", "l.yaml", "--json"]);
    let lead = std::fs::read_to_string(w.dir.join("lead.log")).unwrap_or_default();
    assert_eq!(lead, "planned 1\n", "the lead planned once");
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let news: Vec<String> = w
        .channel("l")
        .iter()
        .filter_map(|m| m["message"].as_str())
        .filter(|m| m.contains("ready to claim"))
        .map(String::from)
        .collect();
    assert_eq!(news.len(), 1, "{news:?}");
    assert!(
        news[0].contains("@w1 @w2") && !news[0].contains("@lead"),
        "{news:?}"
    );
    let done = std::fs::read_to_string(w.dir.join("done.log")).unwrap();
    assert_eq!(done.lines().count(), 1, "{done}");
}

/// Issue 23: news an agent's call caused counts as that agent's message
/// for the loop guard: a lead planning each time the worker reports back
/// (plan → announce → report → plan) is paused like any ring.
#[test]
fn plan_announce_plan_cycles_are_paused_by_the_loop_guard() {
    let w = World::new();
    w.script("lead.py", &planner());
    // The worker does what is free and reports to the lead.
    w.script(
        "worker.py",
        &WORKER.replace(
            "print(\"did \" + (\", \".join(did) if did else \"nothing new\"))",
            "print(\"@lead did \" + \", \".join(did))",
        ),
    );
    std::fs::write(
        w.dir.join("c.yaml"),
        "agents:\n  lead:\n    command: ./lead.py\n  w1:\n    command: ./worker.py\n\
         limits:\n  max_turns: 40\nkickoff: \"@lead plan the work\"\n",
    )
    .unwrap();
    let r = w.run(&["run", "c.yaml", "--json"]);
    assert_ne!(r.code, 0, "a paused run is not a success");
    let said: Vec<String> = w
        .channel("c")
        .iter()
        .filter_map(|m| m["message"].as_str().map(String::from))
        .collect();
    let banner = said
        .iter()
        .find(|m| m.starts_with("Paused: "))
        .unwrap_or_else(|| panic!("no loop banner: {said:#?}"));
    assert!(
        banner.contains("lead and w1 keep waking each other"),
        "{banner}"
    );
    let outcome = &r.json()["outcome"];
    assert!(outcome.to_string().contains("incomplete"), "{outcome}");
    let lead = std::fs::read_to_string(w.dir.join("lead.log")).unwrap();
    assert!(
        lead.lines().count() <= 5,
        "paused within a few rounds: {lead}"
    );
}

/// The head of every script of the proof below: the tool caller, the ids
/// this turn was handed (logged to `turns.log`), and a wait for a file.
const TEAM_HEAD: &str = r###"#!/usr/bin/env python3
import json, os, re, subprocess, sys, time
prompt = sys.stdin.read()
awtui = os.environ["AWTUI_BIN"]
me = os.environ["AWTUI_AGENT"]

def call(tool, args):
    r = subprocess.run([awtui, "ctx", "--json", "call", tool, json.dumps(args)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": r.stderr}
    return json.loads(r.stdout)

def wait_file(name):
    deadline = time.time() + 120
    while not os.path.exists(name):
        assert time.time() < deadline, "timed out waiting for " + name
        time.sleep(0.02)

m = re.search(r"## New messages for you \(([^)]*)\)", prompt)
ids = [int(x) for x in re.findall(r"\d+", m.group(1))] if m else []
with open("turns.log", "a") as f:
    f.write(me + " " + " ".join(str(i) for i in ids) + "\n")
turn = sum(1 for l in open("turns.log") if l.split(" ")[0] == me)

def free_tasks():
    out = []
    for wf in call("workflow_list", {})["workflows"]:
        out += call("workflow_next_tasks", {"workflow_id": wf["id"]})["tasks"]
    return out

def claim_one(agent):
    for t in free_tasks():
        if call("task_claim", {"task_id": t["id"], "agent_id": agent}).get("success"):
            return t
    return None

def finish(t):
    with open("done.log", "a") as f:
        f.write(me + " " + t["name"] + "\n")
    r = call("task_update_status", {"id": t["id"], "status": "completed",
                                    "outcome": t["name"] + " by " + me})
    assert r.get("success"), r
"###;

/// The lead plans on its first turn; woken again, it only notes it (it
/// must not be: the news of its own plan's tasks is not for it).
const TEAM_LEAD: &str = r#"
if turn == 1:
    w = call("workflow_create", {"name": "feature", "max_parallel_tasks": 3})
    call("workflow_set_plan", {"id": w["id"], "plan": {"summary": "three parts",
         "tasks": [{"name": "schema"}, {"name": "api"}, {"name": "ui"}]}})
    print("planned")
else:
    print("noted")
"#;

/// w1 claims a task, waits until the others hold theirs, and leaves
/// holding it.
const TEAM_LEAVER: &str = r#"
agent = call("agent_register", {"name": me, "runtime": "custom"})["id"]
t = claim_one(agent)
assert t is not None
open("w1.claimed", "w").write(t["name"])
wait_file("w2.claimed")
wait_file("w3.claimed")
call("agent_unregister", {"id": agent})
print("leaving " + t["name"])
"#;

/// w2 and w3 take one task each once w1 holds one; woken again, they take
/// whatever is free.
const TEAM_WORKER: &str = r#"
agent = call("agent_register", {"name": me, "runtime": "custom"})["id"]
did = []
if turn == 1:
    wait_file("w1.claimed")
    t = claim_one(agent)
    assert t is not None
    open(me + ".claimed", "w").write(t["name"])
    finish(t)
    did.append(t["name"])
else:
    while True:
        t = claim_one(agent)
        if t is None:
            break
        finish(t)
        did.append(t["name"])
print("did " + (", ".join(did) if did else "nothing"))
"#;

/// Issue 23's proof: a lead plans three tasks once; three workers claim;
/// one unregisters holding its claim; the freed task is announced to the
/// others and finished by one of them. Every task is completed exactly
/// once, in one workflow, and every turn was caused by a new message for
/// its agent. Issue 36: the re-announcement does not mention the lead
/// (it planned the workflow), so the lead runs once.
#[test]
fn a_team_plans_claims_and_finishes_together() {
    let w = World::new();
    w.script("lead.py", &format!("{TEAM_HEAD}{TEAM_LEAD}"));
    w.script("leaver.py", &format!("{TEAM_HEAD}{TEAM_LEAVER}"));
    w.script("worker.py", &format!("{TEAM_HEAD}{TEAM_WORKER}"));
    std::fs::write(
        w.dir.join("team.yaml"),
        "agents:\n  lead:\n    command: ./lead.py\n  w1:\n    command: ./leaver.py\n\
         \x20 w2:\n    command: ./worker.py\n  w3:\n    command: ./worker.py\n\
         kickoff: \"@lead please split the work\"\n",
    )
    .unwrap();
    let r = w.run(&["run", "team.yaml", "--json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let report = r.json();
    let channel = w.channel("team");
    let said: Vec<String> = channel
        .iter()
        .map(|m| format!("#{} {}: {}", m["id"], m["from"], m["message"]))
        .collect();

    // Every task completed exactly once, in one workflow.
    let board = &report["tasks"];
    assert_eq!(board["workflows"].as_array().unwrap().len(), 1, "{board}");
    let tasks = board["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 3, "{board}");
    assert!(tasks.iter().all(|t| t["status"] == "completed"), "{board}");
    let done = std::fs::read_to_string(w.dir.join("done.log")).unwrap();
    let mut names: Vec<&str> = done.lines().map(|l| l.split(' ').nth(1).unwrap()).collect();
    names.sort();
    assert_eq!(names, ["api", "schema", "ui"], "{done}");
    let left = std::fs::read_to_string(w.dir.join("w1.claimed")).unwrap();
    assert!(
        !done.lines().any(|l| l.starts_with("w1 ")),
        "w1 left: {done}"
    );
    assert!(
        done.contains(&format!(" {left}")),
        "{left} was finished: {done}"
    );

    // The news: once when planned (not to the lead), once when w1 left
    // (not to w1).
    let news: Vec<&String> = said
        .iter()
        .filter(|m| m.contains("ready to claim"))
        .collect();
    assert_eq!(news.len(), 2, "{said:#?}");
    assert!(
        news[0].contains("@w1 @w2 @w3") && !news[0].contains("@lead"),
        "{news:?}"
    );
    assert!(
        news[1].contains(left.as_str()) && news[1].contains("@w2 @w3") && !news[1].contains("@w1"),
        "{news:?}"
    );
    // Issue 36: the news of its own plan's freed task does not wake the
    // planner either (it used to plan again: a second workflow).
    assert!(!news[1].contains("@lead"), "{news:?}");

    // Every turn was handed at least one message, new for its agent and
    // mentioning it; the lead and w1 ran once.
    let turns = std::fs::read_to_string(w.dir.join("turns.log")).unwrap();
    let mut handed: std::collections::BTreeSet<(String, u64)> = Default::default();
    for line in turns.lines() {
        let mut parts = line.split(' ');
        let agent = parts.next().unwrap().to_string();
        let ids: Vec<u64> = parts.filter_map(|p| p.parse().ok()).collect();
        assert!(
            !ids.is_empty(),
            "a turn without a new message: {line}\n{said:#?}"
        );
        for id in ids {
            assert!(
                handed.insert((agent.clone(), id)),
                "#{id} handed twice to {agent}"
            );
            let entry = channel.iter().find(|m| m["id"] == id).unwrap();
            assert!(
                entry["mentions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|m| m == agent.as_str()),
                "#{id} is not for {agent}: {entry}"
            );
        }
    }
    let count = |a: &str| {
        turns
            .lines()
            .filter(|l| l.split(' ').next() == Some(a))
            .count()
    };
    assert_eq!(count("lead"), 1, "planned, and never woken again: {turns}");
    assert_eq!(count("w1"), 1, "{turns}");
}

/// Issue 36: one event wakes an agent once. w1 completes the task w2's
/// depends on and says so to w2 in its answer: the task news (posted
/// mid-turn, when the task was completed) and w1's own @mention both reach
/// w2, in ONE turn that is handed both (before: two paid turns, the second
/// finding nothing to do).
#[test]
fn a_completed_tasks_news_and_the_completers_mention_wake_once() {
    let w = World::new();
    let finisher = r#"
agent = call("agent_register", {"name": me, "runtime": "custom"})["id"]
t = claim_one(agent)
assert t is not None
finish(t)
print("@w2 " + t["name"] + " is done, the next one is yours")
"#;
    let taker = r#"
agent = call("agent_register", {"name": me, "runtime": "custom"})["id"]
did = []
while True:
    t = claim_one(agent)
    if t is None:
        break
    finish(t)
    did.append(t["name"])
print("did " + (", ".join(did) if did else "nothing"))
"#;
    w.script("w1.py", &format!("{TEAM_HEAD}{finisher}"));
    w.script("w2.py", &format!("{TEAM_HEAD}{taker}"));
    std::fs::write(
        w.dir.join("one.yaml"),
        "agents:\n  w1:\n    command: ./w1.py\n  w2:\n    command: ./w2.py\n\
         tasks:\n  - id: first\n    assignee: w1\n  - id: second\n    assignee: w2\n    depends_on: [first]\n",
    )
    .unwrap();
    let r = w.run(&["run", "one.yaml", "--json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let channel = w.channel("one");
    let said: Vec<String> = channel
        .iter()
        .map(|m| format!("#{} {}: {}", m["id"], m["from"], m["message"]))
        .collect();
    let done = std::fs::read_to_string(w.dir.join("done.log")).unwrap();
    assert_eq!(done, "w1 first\nw2 second\n", "{said:#?}");
    let id_of = |pred: &dyn Fn(&serde_json::Value) -> bool| {
        channel
            .iter()
            .find(|m| pred(m))
            .and_then(|m| m["id"].as_u64())
            .unwrap_or_else(|| panic!("not in the channel: {said:#?}"))
    };
    let news =
        id_of(&|m| m["from"] == "system" && m["message"].as_str().unwrap().contains("“second”"));
    let mention = id_of(&|m| m["from"] == "w1");
    let turns = std::fs::read_to_string(w.dir.join("turns.log")).unwrap();
    let w2: Vec<&str> = turns.lines().filter(|l| l.starts_with("w2 ")).collect();
    assert_eq!(
        w2,
        [format!("w2 {news} {mention}").as_str()],
        "w2 woke once, handed both: {turns}\n{said:#?}"
    );
}
