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
    assert_eq!(w.channel("demo").len(), 4);
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

/// Two workflows in one folder, each run without `--instance`, keep their
/// own channels; opening one's instance for the other is refused with both
/// files named; an instance made before the ownership record (its folder
/// `.workflow/default/` with no record) keeps opening.
#[test]
fn two_workflows_in_one_folder_never_share_an_instance() {
    let w = World::new();
    w.script("answer.sh", "#!/bin/sh\ncat >/dev/null\necho done\n");
    for name in ["one", "two"] {
        std::fs::write(
            w.dir.join(format!("{name}.yaml")),
            format!("agents:\n  a:\n    command: ./answer.sh\nkickoff: \"@a this is {name}\"\n"),
        )
        .unwrap();
    }
    let r = w.run(&["run", "one.yaml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = w.run(&["run", "two.yaml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let first = |instance: &str| w.channel(instance)[0]["message"].clone();
    assert_eq!(first("one"), "@a this is one");
    assert_eq!(first("two"), "@a this is two", "two posted its own kickoff");
    assert_eq!(w.channel("one").len(), 2);

    // Explicitly opening one's instance for two: refused, nothing written.
    let r = w.run(&["run", "two.yaml", "--instance", "one"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("one.yaml"), "{}", r.stderr);
    assert!(r.stderr.contains("two.yaml"), "{}", r.stderr);
    assert!(r.stderr.contains("--instance"), "{}", r.stderr);
    assert_eq!(w.channel("one").len(), 2, "nothing was added");
    // A new name is the way out.
    let r = w.run(&["run", "two.yaml", "--instance", "two-b"]);
    assert_eq!(r.code, 0, "{}", r.stderr);

    // An instance from before the record: `.workflow/default/` of one.yaml.
    let r = w.run(&["run", "one.yaml", "--instance", "default"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    std::fs::remove_file(w.dir.join(".workflow/default/workflow.json")).unwrap();
    std::fs::remove_dir_all(w.dir.join(".workflow/one")).unwrap();
    let r = w.run(&["run", "one.yaml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !w.dir.join(".workflow/one").exists(),
        "the old default instance was resumed"
    );
    assert_eq!(w.channel("default").len(), 2, "no second kickoff");
    assert!(w.dir.join(".workflow/default/workflow.json").exists());
    // Now recorded for one.yaml, two.yaml cannot take it over.
    let r = w.run(&["run", "two.yaml", "--instance", "default"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}
