//! The instance commands on the real binary: start --background, list,
//! send --wait, peek, attach (follow mode), stop, two instances at once,
//! standalone agents, signals, and every error with its exit code.

use crate::acp_live_support;
use crate::cli_support;

use cli_support::{World, alive, type_line, wait_for};
use serde_json::Value;

/// The messages of the demo once it has finished its first round.
fn demo_done(w: &World, instance: &str) -> Vec<Value> {
    wait_for("the demo to finish", || {
        let ch = w.channel(instance);
        (ch.len() >= 4).then_some(ch)
    })
}

fn agents(list: &[Value]) -> Vec<(String, String, String)> {
    list.iter()
        .flat_map(|i| {
            let source = i["source"].as_str().unwrap_or_default().to_string();
            i["agents"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(move |a| {
                    (
                        a["address"].as_str().unwrap_or_default().to_string(),
                        source.clone(),
                        a["status"].as_str().unwrap_or_default().to_string(),
                    )
                })
        })
        .collect()
}

#[test]
fn background_cycle_start_list_send_peek_attach_stop() {
    let mut w = World::demo();
    let pid = w.start_background("demo.yaml", "pr-1");
    assert!(alive(pid));
    demo_done(&w, "pr-1");

    // list, from another directory, as a table and as JSON.
    let table = w.cmd(&["list"]).current_dir(w.tmp.path()).output().unwrap();
    let table = String::from_utf8_lossy(&table.stdout).into_owned();
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("NAME"), "{table}");
    for a in ["planner@pr-1", "coder@pr-1", "reviewer@pr-1"] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(a) && l.contains("demo.yaml")),
            "{a} missing:\n{table}"
        );
    }
    let list = w.list();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["pid"].as_u64(), Some(pid as u64));

    // send --wait prints the reviewer's reply.
    let r = w.run(&[
        "send",
        "please look again",
        "--to",
        "reviewer@pr-1",
        "--wait",
        "--timeout",
        "60",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("reviewer → @user"), "{}", r.stdout);
    assert!(r.stdout.contains("AOP-FINAL"), "{}", r.stdout);
    let posted = w
        .channel("pr-1")
        .into_iter()
        .find(|m| m["from"] == "user")
        .expect("the user's message is in the channel");
    assert_eq!(posted["message"], "@reviewer please look again");

    // peek: the channel, JSON with annotations, an inbox, filters.
    let r = w.run(&["peek", "-n", "2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.matches("── #").count(), 2, "{}", r.stdout);
    let r = w.run(&["peek", "--to", "@pr-1", "--json", "-n", "50"]);
    let items = r.json();
    let items = items.as_array().unwrap();
    assert!(items.len() >= 6);
    assert!(
        items.iter().any(|i| i["aop"].is_object()),
        "AOP annotations"
    );
    let r = w.run(&["peek", "--to", "user@pr-1", "--json"]);
    let inbox = r.json();
    assert!(
        inbox
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["id"].is_u64() && i["priority"].is_string() && i["state"].is_string()),
        "{inbox}"
    );
    let r = w.run(&["peek", "--type", "HELP_REQUEST", "--json"]);
    assert_eq!(r.code, 0);
    assert_eq!(r.json(), serde_json::json!([]));

    // attach follows the live channel and posts typed lines; Ctrl-C detaches.
    let (attach, mut out, mut stdin) = w.spawn(&["attach", "pr-1"]);
    out.wait_for("attached to @pr-1");
    out.wait_for("please look again");
    out.mark();
    type_line(&mut stdin, "@planner once more, from attach");
    out.wait_for("user → @planner");
    out.wait_for("once more, from attach");
    out.wait_for("planner → @coder");
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(attach as i32).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    assert_eq!(w.wait_child(attach), 0);
    assert!(alive(pid), "detaching leaves the instance running");

    // The end of input detaches too, once what was typed is posted.
    let (piped, mut out, mut stdin) = w.spawn(&["attach", "pr-1"]);
    out.wait_for("attached to @pr-1");
    type_line(&mut stdin, "a last word from a pipe");
    drop(stdin);
    assert_eq!(w.wait_child(piped), 0);
    out.wait_for("end of input: detached; @pr-1 keeps running");
    assert!(
        w.channel("pr-1")
            .iter()
            .any(|m| m["message"] == "a last word from a pipe"),
        "posted before leaving"
    );
    assert!(alive(pid));

    // stop one agent: the instance keeps running.
    let r = w.run(&["stop", "planner@pr-1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let statuses = agents(&w.list());
    assert!(statuses.contains(&("planner@pr-1".into(), "demo.yaml".into(), "stopped".into())));

    // stop the instance: its process exits and list shows nothing.
    let r = w.run(&["stop", "@pr-1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("stopped @pr-1"));
    assert!(!alive(pid));
    assert!(w.list().is_empty());
    let r = w.run(&["list"]);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(!w.dir.join(".workflow/pr-1/control.sock").exists());
    assert!(!w.dir.join(".workflow/pr-1/instance.json").exists());
}

#[test]
fn two_instances_are_told_apart() {
    let mut w = World::demo();
    let a = w.start_background("demo.yaml", "pr-1");
    let b = w.start_background("demo.yaml", "pr-2");
    demo_done(&w, "pr-1");
    demo_done(&w, "pr-2");
    let all = agents(&w.list());
    assert_eq!(all.len(), 6, "{all:?}");
    assert!(all.iter().any(|(n, _, _)| n == "coder@pr-2"));

    // Starting a running instance again fails with its pid and a hint.
    let r = w.run(&["start", "demo.yaml", "--instance", "pr-1", "--background"]);
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert!(r.stderr.contains(&format!("pid {a}")), "{}", r.stderr);
    assert!(r.stderr.contains("awtui attach pr-1"), "{}", r.stderr);
    let r = w.run(&["run", "demo.yaml", "--instance", "pr-2"]);
    assert_eq!(r.code, 4, "{}", r.stderr);

    // Without a target, or with an agent both have, it is ambiguous, and
    // the error says what to type (both live in the same folder: running
    // the command from "its folder" would not help).
    let r = w.run(&["send", "hi"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("say which: @pr-1 or @pr-2"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("folder"), "{}", r.stderr);
    assert!(r.stderr.contains("--to @NAME"), "{}", r.stderr);
    let r = w.run(&["send", "hi", "--to", "coder"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("say which: coder@pr-1 or coder@pr-2"),
        "{}",
        r.stderr
    );
    let r = w.run(&["stop", "--clean"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("say which: awtui stop --clean @pr-1, or awtui stop --clean @pr-2"),
        "{}",
        r.stderr
    );
    let r = w.run(&["send", "hi there", "--to", "@pr-2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(w.channel("pr-2").iter().any(|m| m["message"] == "hi there"));
    assert!(!w.channel("pr-1").iter().any(|m| m["message"] == "hi there"));

    let r = w.run(&["stop", "@pr-1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!alive(a));
    assert!(alive(b));
    let left = w.list();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["instance"], "pr-2");
    // With one instance left, no target is needed.
    assert_eq!(w.run(&["peek", "-n", "1"]).code, 0);

    let r = w.run(&["stop", "--all"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!alive(b));
    assert!(w.list().is_empty());
}

#[test]
fn sigterm_stops_an_instance_like_stop() {
    let mut w = World::demo();
    let pid = w.start_background("demo.yaml", "default");
    demo_done(&w, "default");
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid as i32).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    wait_for("the instance to exit", || (!alive(pid)).then_some(()));
    assert!(w.list().is_empty());
    assert_eq!(w.channel("default").len(), 4, "the channel is intact");
    let log = std::fs::read_to_string(w.dir.join(".workflow/default/awtui.log")).unwrap();
    assert!(log.contains("instance default running"), "{log}");
}

#[test]
fn standalone_agent_new_send_peek_stop() {
    let mut w = World::new();
    // A command agent: answers each turn on stdout.
    w.script(
        "echo-agent.sh",
        "#!/bin/sh\nprompt=$(cat)\ncase \"$prompt\" in\n  *ping*) echo \"pong from $(basename \"$PWD\")\" ;;\n  *) echo \"say ping\" ;;\nesac\n",
    );
    let r = w.run(&[
        "new",
        "echo",
        "--command",
        "./echo-agent.sh",
        "--context",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let pid = r.json()["pid"].as_u64().unwrap() as u32;
    w.adopt(pid);

    let list = w.list();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["source"], "(standalone)");
    let table = w.run(&["list"]).stdout;
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("echo ") && l.contains("(standalone)")),
        "{table}"
    );

    // It works in the folder `new` ran in, and answers through the channel.
    let r = w.run(&["send", "ping", "--to", "echo", "--wait", "--timeout", "60"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("pong from w"), "{}", r.stdout);
    let r = w.run(&["peek", "--to", "echo"]);
    assert!(r.stdout.contains("@echo ping"), "{}", r.stdout);
    assert!(r.stdout.contains("pong from w"), "{}", r.stdout);

    // One of each name.
    let r = w.run(&["new", "echo", "--command", "./echo-agent.sh"]);
    assert_eq!(r.code, 4, "{}", r.stderr);

    let r = w.run(&["stop", "echo"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!alive(pid));
    assert!(w.list().is_empty());

    // Started again, the conversation (--context) is still there.
    let r = w.run(&[
        "new",
        "echo",
        "--command",
        "./echo-agent.sh",
        "--context",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    w.adopt(r.json()["pid"].as_u64().unwrap() as u32);
    let r = w.run(&["peek", "--to", "echo"]);
    assert!(r.stdout.contains("pong from w"), "{r:?}");
    assert_eq!(w.run(&["stop", "--all"]).code, 0);
}

#[test]
fn errors_and_exit_codes() {
    let w = World::demo();
    // Nothing running.
    let r = w.run(&["list"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    assert!(r.stderr.contains("nothing is running"));
    assert_eq!(w.run(&["list", "--json"]).json(), serde_json::json!([]));
    for args in [
        &["send", "hi"][..],
        &["send", "hi", "--to", "coder@nope"],
        &["send", "hi", "--to", "@nope"],
        &["peek"],
        &["stop", "@nope"],
        &["stop", "coder"],
        &["attach"],
        &["attach", "nope"],
    ] {
        let r = w.run(args);
        assert_eq!(r.code, 3, "{args:?}: {}", r.stderr);
        assert!(!r.stderr.is_empty());
    }
    assert_eq!(w.run(&["stop", "--all"]).code, 0);
    // Invalid usage.
    for args in [
        &["send", "   "][..],
        &["send", "hi", "--to", "a b"],
        &["send", "hi", "--to", "x@"],
        &["peek", "--type", "NOPE"],
        &["new", "user"],
        &["new", "bad name"],
        &["run", "missing.yaml"],
        &["start", "missing.yaml", "--background"],
        &["run", "demo.yaml", "--instance", "bad name"],
        &["stop", "a", "--all"],
        &["frobnicate"],
    ] {
        let r = w.run(args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
    }
    // A background start whose setup fails reports the child's output.
    std::fs::write(
        w.dir.join("broken.yaml"),
        "agents:\n  a:\n    command: [\"true\"]\nsetup:\n  - shell: echo boom >&2; exit 7\nkickoff: \"@a go\"\n",
    )
    .unwrap();
    let r = w.run(&["start", "broken.yaml", "--background"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("boom"), "{}", r.stderr);
    assert!(w.list().is_empty());
}

#[test]
fn init_writes_a_starter_and_never_overwrites() {
    let w = World::new();
    let r = w.run(&["init"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for f in ["review.yaml", "prompts/reviewer.md", "prompts/coder.md"] {
        assert!(w.dir.join(f).is_file(), "{f}");
    }
    let loaded = awtui::workflow::load(&w.dir.join("review.yaml")).unwrap();
    assert_eq!(loaded.workflow.agent_names(), vec!["reviewer", "coder"]);
    // Issue 36: its header comment names the user's file, not the asset
    // awtui was built from.
    let text = std::fs::read_to_string(w.dir.join("review.yaml")).unwrap();
    let header: String = text.lines().take_while(|l| l.starts_with('#')).collect();
    assert!(header.contains("awtui validate review.yaml"), "{header}");
    assert!(!header.contains("assets/"), "{header}");
    std::fs::write(w.dir.join("prompts/coder.md"), "mine").unwrap();
    let r = w.run(&["init"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("refusing to overwrite"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(w.dir.join("prompts/coder.md")).unwrap(),
        "mine"
    );
}

#[test]
fn foreground_start_and_a_registered_run() {
    let mut w = World::demo();
    // A foreground start shows the channel and ends when stopped.
    let (start, mut out, _stdin) = w.spawn(&["start", "demo.yaml", "--instance", "fg"]);
    out.wait_for("instance fg running");
    out.wait_for("reviewer → @user");
    let listed = w.list();
    assert_eq!(listed[0]["info"]["mode"], "start");
    let r = w.run(&["stop"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(w.wait_child(start), 0);

    // A run registers while it runs, so list, send and stop reach it.
    w.script(
        "slow.sh",
        "#!/bin/sh\ncat >/dev/null\nwhile [ ! -e go ]; do sleep 0.05; done\necho finished\n",
    );
    std::fs::write(
        w.dir.join("slow.yaml"),
        "agents:\n  slow:\n    command: ./slow.sh\nkickoff: \"@slow begin\"\n",
    )
    .unwrap();
    let (run, mut out, _stdin) = w.spawn(&["run", "slow.yaml", "--instance", "once"]);
    out.wait_for("slow: thinking");
    let listed = w.list();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["info"]["mode"], "run");
    assert_eq!(agents(&listed)[0].0, "slow@once");
    std::fs::write(w.dir.join("go"), "").unwrap();
    assert_eq!(w.wait_child(run), 0);
    assert!(w.list().is_empty());
}

#[test]
fn a_standalone_agent_without_context_lives_in_memory() {
    let mut w = World::new();
    w.script(
        "answer.sh",
        "#!/bin/sh\ncat >/dev/null\necho \"yes, here\"\n",
    );
    let r = w.run(&["new", "quick", "--command", "./answer.sh", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    w.adopt(r.json()["pid"].as_u64().unwrap() as u32);
    // With one thing running, send needs no target; the agent is mentioned.
    let r = w.run(&[
        "send",
        "are you there?",
        "--wait",
        "--timeout",
        "60",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["replies"][0]["entry"]["message"], "yes, here");
    assert!(
        !w.state.join("standalone/quick/context").exists(),
        "nothing of the conversation on disk"
    );
    assert_eq!(w.run(&["stop", "quick"]).code, 0);
    assert!(w.list().is_empty());
}

#[test]
fn a_backend_that_cannot_run_leaves_no_instance_folder() {
    let w = World::new();
    std::fs::write(
        w.dir.join("missing.yaml"),
        "agents:\n  a:\n    command: ./not-there.sh\nkickoff: \"@a go\"\n",
    )
    .unwrap();
    for args in [
        &["run", "missing.yaml"][..],
        &["start", "missing.yaml"],
        &["start", "missing.yaml", "--background"],
    ] {
        let r = w.run(args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("not-there.sh"), "{}", r.stderr);
    }
    assert!(!w.dir.join(".workflow").exists());
}

/// Issue 35: `list --json` shows, while it runs, how each agent is talked
/// to and its turn as it goes: the ACP agent's running tool call (kind,
/// title, status, file, diff), its plan and its usage. A stop cancels the
/// turn over ACP (`session/cancel`).
#[test]
fn list_json_shows_an_acp_agents_running_tool_call_plan_and_usage() {
    let mut w = World::new();
    let log = acp_live_support::acp_workflow(&w, "acp.yaml", &[acp_live_support::edit_turn(true)]);
    w.start_background("acp.yaml", "default");
    let coder =
        acp_live_support::listed_agent(&w, "coder", "the running tool call in list --json", |a| {
            a["live"]["calls"][0]["diffs"][0]["added"] == 2
                && a["live"]["usage"]["input_tokens"] == 1234
        });
    assert_eq!(coder["protocol"], "acp", "{coder}");
    let call = &coder["live"]["calls"][0];
    assert_eq!(call["title"], "Edit src/a.rs");
    assert_eq!(call["kind"], "edit");
    assert_eq!(call["status"], "in_progress");
    assert_eq!(call["locations"][0], "src/a.rs");
    assert_eq!(call["diffs"][0]["preview"], "-b\n+c\n+d\n");
    assert_eq!(coder["live"]["plan"][0]["content"], "read the code");
    assert_eq!(coder["live"]["usage"]["cost_usd"], 0.05);
    let r = w.run(&["stop", "coder@default"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    wait_for("session/cancel at the agent", || {
        (acp_live_support::count(&log, "session/cancel") == 1).then_some(())
    });
}

/// Issue 35: an agent flooding 10,000 tool calls into its turn shows its
/// newest few in `list --json`, never all of them.
#[test]
fn a_flood_of_tool_calls_stays_bounded_in_list_json() {
    let mut w = World::new();
    acp_live_support::acp_workflow(&w, "acp.yaml", &[acp_live_support::flood_turn(true)]);
    w.start_background("acp.yaml", "default");
    let coder = acp_live_support::listed_agent(&w, "coder", "the flood's last call", |a| {
        a["live"]["calls"]
            .as_array()
            .and_then(|c| c.last())
            .is_some_and(|c| c["title"] == "flood 1999")
    });
    assert_eq!(coder["live"]["calls"].as_array().unwrap().len(), 40);
    let r = w.run(&["list", "--json"]);
    assert!(r.stdout.len() < 256 * 1024, "{} bytes", r.stdout.len());
}

/// Issue 36: a loop-guard pause survives `kill -9` and a new `awtui start`,
/// even when an agent (here the test, playing one with file tools in the
/// shared workspace) deletes every file of the instance folder it could
/// take for the pause: the reopened instance runs no turn, posts nothing,
/// and `list` shows its agents paused. (Before, each start ran eight more
/// turns and paused again: 10 → 19 → 28 channel lines.)
#[test]
fn a_paused_ping_pong_stays_paused_after_kill_9_and_start() {
    let mut w = World::new();
    for (me, next) in [("a", "b"), ("b", "a")] {
        w.script(
            &format!("{me}.sh"),
            &format!("#!/bin/sh\ncat >/dev/null\necho '@{next} over to you'\n"),
        );
    }
    std::fs::write(
        w.dir.join("p.yaml"),
        "agents:\n  a:\n    command: ./a.sh\n  b:\n    command: ./b.sh\nkickoff: \"@a go\"\n",
    )
    .unwrap();
    let pid = w.start_background("p.yaml", "p");
    let paused = |w: &World| {
        w.channel("p").iter().any(|m| {
            m["from"] == "system" && m["message"].as_str().unwrap().starts_with("Paused: ")
        })
    };
    wait_for("the loop guard's pause", || paused(&w).then_some(()));
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    wait_for("the killed instance to die", || (!alive(pid)).then_some(()));
    let before = w.channel("p").len();
    // The attacker: every file of the instance folder but the channel and
    // the cursors (without which there is nothing to reopen) is gone.
    let home = w.dir.join(".workflow/p");
    for entry in std::fs::read_dir(&home).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if entry.file_type().unwrap().is_file() && name != "channel.jsonl" && name != "state.json" {
            std::fs::remove_file(entry.path()).unwrap();
        }
    }

    w.start_background("p.yaml", "p");
    let listed = wait_for("the reopened instance in the list", || {
        w.list()
            .into_iter()
            .find(|i| i["instance"] == "p" && i["responsive"] == true)
    });
    assert_eq!(listed["paused"], true, "{listed:#}");
    assert!(
        listed["pause_reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("loop guard: a, b kept waking each other")),
        "{listed:#}"
    );
    let table = w.run(&["list"]).stdout;
    assert!(table.contains("(paused)"), "{table}");
    assert_eq!(
        w.channel("p").len(),
        before,
        "no turn ran after the reopening"
    );
    assert_eq!(w.run(&["stop", "@p"]).code, 0);

    // `awtui reset` starts afresh: the pause goes with the instance.
    let pauses = || {
        walk(&w.state)
            .into_iter()
            .filter(|p| p.parent().is_some_and(|d| d.ends_with("pauses")))
            .collect::<Vec<_>>()
    };
    assert_eq!(pauses().len(), 1, "the pause is kept outside the instance");
    let r = w.run(&["reset", "p.yaml", "--instance", "p", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        pauses(),
        Vec::<std::path::PathBuf>::new(),
        "reset left the pause"
    );
}

/// Every file under `dir`, recursively.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// Issue 36: what agent operations and Agent Mail leave reaches `peek`:
/// the thread state `done` on the message it closes, a surfaced note as
/// the agent's own plain message in the person's inbox (no escape
/// sequence, no mention that wakes an agent), and an OFFERING_READY its
/// addressee acked reported `acknowledged: true`, as `run --json` and the
/// control room say.
#[test]
fn peek_shows_thread_states_surfaced_notes_and_acks() {
    let mut w = World::new();
    let file = cli_support::ops_workflow(&w);
    w.start_background(file, "ops");
    let items = wait_for("lead's ack of the OFFERING_READY", || {
        let r = w.run(&["peek", "--to", "@ops", "--json", "-n", "50"]);
        let items = r.json().as_array().cloned().unwrap_or_default();
        items
            .iter()
            .any(|i| i["mail"]["acknowledged"] == true)
            .then_some(items)
    });
    let offering = items
        .iter()
        .find(|i| {
            i["entry"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("OFFERING_READY")
        })
        .unwrap_or_else(|| panic!("{items:#?}"));
    assert_eq!(offering["mail"]["acknowledged"], true, "{offering}");
    let kickoff = items.iter().find(|i| i["entry"]["id"] == 1).unwrap();
    assert_eq!(
        kickoff["thread"],
        serde_json::json!({"state": "done", "by": "worker"}),
        "{kickoff}"
    );
    let note = items
        .iter()
        .find(|i| cli_support::is_surfaced_note(i["entry"]["message"].as_str().unwrap_or("")))
        .unwrap_or_else(|| panic!("no surfaced note: {items:#?}"));
    let note = &note["entry"];
    assert_eq!(note["from"], "worker", "marked with who surfaced it");
    assert_eq!(
        note["mentions"],
        serde_json::json!(["user"]),
        "it wakes no agent"
    );
    let inbox = w.run(&["peek", "--to", "user@ops", "--json"]).json();
    assert!(
        inbox
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["id"] == note["id"]),
        "in the person's inbox: {inbox}"
    );
    let text = w.run(&["peek", "--to", "@ops", "-n", "50"]);
    assert!(
        text.stdout.contains("[thread done by worker]"),
        "{}",
        text.stdout
    );
    assert!(!text.stdout.contains('\u{1b}'), "{:?}", text.stdout);
}

/// Issue 36, item 17: an agent added to a running instance (`awtui agent
/// add`, the control room's `n` and `/agent add` send the same command) is
/// checked like a workflow file's agent, kept by awtui outside the
/// instance folder, and back on the next start, where it takes turns; a
/// list planted in the instance folder (which agents can write) is not
/// read, and the workflow file is not edited.
#[test]
fn an_agent_added_to_a_running_instance_comes_back_on_start_and_works() {
    let mut w = World::demo();
    let bin = w.dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fakes/fake_agent.py");
    std::os::unix::fs::symlink(fake, bin.join("claude")).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    w.env.push(("PATH".into(), path));
    // Its MCP token works: it posts through awtui's tools too.
    w.env
        .push(("FAKE_MCP".into(), "helper posts through MCP".into()));
    let workflow = std::fs::read_to_string(w.dir.join("demo.yaml")).unwrap();
    let first = w.start_background("demo.yaml", "pr-1");
    demo_done(&w, "pr-1");

    let add = |args: &[&str]| {
        let mut all = vec!["agent", "add"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--instance", "pr-1"]);
        w.run(&all)
    };
    for (args, said) in [
        (
            &["coder", "--backend", "claude"][..],
            "there is already an agent 'coder'",
        ),
        (&["../x", "--backend", "claude"], "not a valid agent name"),
        (
            &["bad\u{1b}[2Jname", "--backend", "claude"],
            "control characters",
        ),
        (&["user", "--backend", "claude"], "is reserved"),
        (
            &["helper", "--backend", "cluade"],
            "unknown backend 'cluade' (did you mean 'claude'?)",
        ),
    ] {
        let r = add(args);
        assert_ne!(r.code, 0, "{args:?} refused");
        assert!(r.stderr.contains(said), "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains('\u{1b}'), "{}", r.stderr);
    }
    let r = add(&["helper", "--backend", "claude", "--workspace", "shared"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("agent helper added"), "{}", r.stdout);
    let again = add(&["helper", "--backend", "codex"]);
    assert!(
        again.stderr.contains("there is already an agent 'helper'"),
        "{}",
        again.stderr
    );
    assert!(
        w.channel("pr-1").iter().any(|m| m["from"] == "system"
            && m["message"]
                .as_str()
                .unwrap()
                .contains("agent helper added")),
        "the channel says so"
    );
    // An agent writes a list of its own into the instance folder: ignored.
    std::fs::write(
        w.dir.join(".workflow/pr-1/added-agents.json"),
        r#"[{"name":"intruder","backend":"claude"}]"#,
    )
    .unwrap();

    // Killed right after the add was answered: the agent is kept.
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(first as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    wait_for("the killed instance to die", || {
        (!alive(first)).then_some(())
    });
    let names = |w: &World| -> Vec<String> { agents(&w.list()).into_iter().map(|a| a.0).collect() };
    w.start_background("demo.yaml", "pr-1");
    assert!(
        names(&w).contains(&"helper@pr-1".to_string()),
        "{:?}",
        names(&w)
    );
    // And a stopped instance brings it back too; the planted one never.
    assert_eq!(w.run(&["stop", "@pr-1"]).code, 0);
    w.start_background("demo.yaml", "pr-1");
    let listed = names(&w);
    assert!(listed.contains(&"helper@pr-1".to_string()), "{listed:?}");
    assert!(
        !listed.iter().any(|n| n.starts_with("intruder")),
        "{listed:?}"
    );
    let r = w.run(&["send", "say hi", "--to", "helper@pr-1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    wait_for("the added agent's post through MCP", || {
        let ch = w.channel("pr-1");
        let said = |text: &str| {
            ch.iter()
                .any(|m| m["from"] == "helper" && m["message"].as_str().unwrap().contains(text))
        };
        // (Its post answers the message, so its final text is not posted.)
        said("helper posts through MCP").then_some(())
    });
    assert_eq!(
        std::fs::read_to_string(w.dir.join("demo.yaml")).unwrap(),
        workflow,
        "the workflow file is not edited"
    );
    assert_eq!(w.run(&["stop", "@pr-1"]).code, 0);
}

/// Issue 36: reopening an instance whose workflow's kickoff was edited
/// says the new kickoff is not sent (and how to start afresh); an
/// unchanged kickoff says only that it is not posted again.
#[test]
fn a_changed_kickoff_on_a_reopened_instance_is_said() {
    let w = World::new();
    w.script("a.sh", "#!/bin/sh\ncat >/dev/null\necho ok\n");
    let yaml =
        |kickoff: &str| format!("agents:\n  a:\n    command: ./a.sh\nkickoff: \"{kickoff}\"\n");
    std::fs::write(w.dir.join("w.yaml"), yaml("@a go")).unwrap();
    assert_eq!(w.run(&["run", "w.yaml"]).code, 0);
    let again = w.run(&["run", "w.yaml"]);
    assert!(
        again.stderr.contains("the kickoff is not posted again"),
        "{}",
        again.stderr
    );
    assert!(!again.stderr.contains("changed"), "{}", again.stderr);
    std::fs::write(w.dir.join("w.yaml"), yaml("@a go further")).unwrap();
    let changed = w.run(&["run", "w.yaml"]);
    assert!(
        changed.stderr.contains(
            "the kickoff changed since this instance began; it is not sent again — `awtui reset w.yaml --instance w` starts afresh"
        ),
        "{}",
        changed.stderr
    );
    assert!(
        !w.channel("w")
            .iter()
            .any(|m| m["message"] == "@a go further"),
        "the changed kickoff was posted"
    );
}
