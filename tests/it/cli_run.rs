//! `awtui run` on the real binary: the default output, `--json` (one final
//! object), `--json --verbose` (events as JSON lines), and exit codes.

use crate::acp_live_support;
use crate::cli_support;

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
    // No plan: an empty board, still there for scripts to read.
    assert_eq!(v["tasks"]["tasks"].as_array().map(Vec::len), Some(0));
    assert_eq!(v["tasks"]["workflows"].as_array().map(Vec::len), Some(0));
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

#[test]
fn the_workflow_folder_awtui_creates_ignores_itself_in_git() {
    let w = World::demo();
    assert!(!w.dir.join(".workflow").exists());
    let r = w.run(&["run", "demo.yaml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ignore = w.dir.join(".workflow/.gitignore");
    assert_eq!(std::fs::read_to_string(&ignore).unwrap(), "*\n");
    // A user's own edit is kept on the next run.
    std::fs::write(&ignore, "*\n!keep.md\n").unwrap();
    let r = w.run(&["run", "demo.yaml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&ignore).unwrap(), "*\n!keep.md\n");
}

#[test]
fn turn_counters_survive_reopening_the_instance() {
    let w = World::demo();
    let r = w.run(&["run", "demo.yaml", "--instance", "k", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let kept = w.dir.join(".workflow/k/agents/planner/metrics.json");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&kept).unwrap()).unwrap();
    assert_eq!(saved["turns"], 1, "{saved}");
    // Reopened: nothing to do, and the counters are where they were.
    let r = w.run(&["run", "demo.yaml", "--instance", "k", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for a in r.json()["agents"].as_array().unwrap() {
        assert_eq!(a["metrics"]["turns"], 1, "{a}");
    }
    // A damaged file counts from 0 rather than failing the instance.
    std::fs::write(&kept, "not json").unwrap();
    let r = w.run(&["run", "demo.yaml", "--instance", "k", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let planner = r.json()["agents"].as_array().unwrap()[0].clone();
    assert_eq!(planner["name"], "planner", "{planner}");
    assert_eq!(planner["metrics"]["turns"], 0, "{planner}");
}

/// `context: false` disables the context: no MCP server, agents get no
/// AWTUI_MCP_URL or AWTUI_TOKEN, so `awtui ctx send '@b …'` cannot post
/// and b is never woken; the agent that was mentioned still runs.
#[test]
fn context_false_gives_agents_no_channel_to_wake_each_other() {
    let w = World::new();
    w.script(
        "a.sh",
        "#!/bin/sh\ncat >/dev/null\necho \"url=${AWTUI_MCP_URL-unset} token=${AWTUI_TOKEN-unset}\" > a.env\nif \"$AWTUI_BIN\" ctx send '@b wake up' 2>a.err; then echo sent >> a.env; else echo refused >> a.env; fi\necho done\n",
    );
    w.script("b.sh", "#!/bin/sh\ncat >/dev/null\ntouch b.ran\necho hi\n");
    std::fs::write(
        w.dir.join("alone.yaml"),
        "context: false\nagents:\n  a:\n    command: ./a.sh\n  b:\n    command: ./b.sh\nkickoff: \"@a go\"\n",
    )
    .unwrap();
    let r = w.run(&["run", "alone.yaml", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let env = std::fs::read_to_string(w.dir.join("a.env")).expect("a ran");
    assert_eq!(env, "url=unset token=unset\nrefused\n");
    let err = std::fs::read_to_string(w.dir.join("a.err")).unwrap();
    assert!(err.contains("AWTUI_MCP_URL"), "{err}");
    assert!(!w.dir.join("b.ran").exists(), "b was woken");
    let v = r.json();
    assert_eq!(v["agents"][1]["metrics"]["turns"], 0, "{}", v["agents"]);
}

/// A workflow whose `a` runs on a fake CLI (`backend`, its program
/// `program`), headless (`protocol: headless`: gemini and opencode would
/// run over ACP by default, claude and codex when their adapter is on
/// PATH); `env` lines are added to the agent's `env:`.
fn fake_cli_workflow(w: &World, backend: &str, program: &str, env: &str) {
    let bin = w.dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fakes/fake_agent.py");
    std::os::unix::fs::symlink(fake, bin.join(program)).unwrap();
    std::fs::write(
        w.dir.join("cc.yaml"),
        format!(
            "agents:\n  a:\n    backend: {backend}\n    model: m\n    protocol: headless\n    env:\n      PATH: \"{}:{}\"\n{env}kickoff: \"@a go\"\n",
            bin.display(),
            std::env::var("PATH").unwrap(),
        ),
    )
    .unwrap();
}

fn fake_claude_workflow(w: &World, env: &str) {
    fake_cli_workflow(w, "claude", "claude", env);
}

/// Fault: the agent's CLI reports that awtui's MCP server failed to
/// connect. Its turns still "succeed", but the run did not do what the
/// workflow meant: `awtui run` exits 1 and names the agent; the JSON
/// report says it too.
#[test]
fn run_exits_1_when_an_agent_ran_every_turn_without_its_tools() {
    let w = World::new();
    fake_claude_workflow(&w, "      FAKE_NO_TOOLS: \"1\"\n");
    let r = w.run(&["run", "cc.yaml"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(
            "a ran every turn without awtui's tools: its CLI never connected to awtui's MCP server"
        ),
        "{}",
        r.stderr
    );
    let r = w.run(&["run", "cc.yaml", "--instance", "j", "--json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["success"], false, "{v}");
    assert_eq!(v["outcome"]["outcome"], "without_tools", "{v}");
    assert_eq!(v["outcome"]["agents"], serde_json::json!(["a"]), "{v}");
}

/// The same CLI connected to awtui's server (it listed the tools): exit 0.
#[test]
fn run_exits_0_when_the_agents_cli_listed_awtuis_tools() {
    let w = World::new();
    fake_claude_workflow(&w, "");
    let r = w.run(&["run", "cc.yaml"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(!r.stderr.contains("without awtui's tools"), "{}", r.stderr);
}

/// CLIs whose output says nothing about their MCP servers (Gemini CLI,
/// opencode, Codex): awtui's server saw no tool listing from the agent, so
/// the channel says once that it ran without its tools and the run exits 1.
#[test]
fn a_cli_that_never_listed_awtuis_tools_is_caught_by_the_server() {
    for (backend, program) in [
        ("gemini", "gemini"),
        ("opencode", "opencode"),
        ("codex", "codex"),
    ] {
        let w = World::new();
        fake_cli_workflow(&w, backend, program, "      FAKE_NO_TOOLS: \"1\"\n");
        let r = w.run(&["run", "cc.yaml", "--instance", "t"]);
        assert_eq!(r.code, 1, "{backend}: {}\n{}", r.stdout, r.stderr);
        let warnings = w
            .channel("t")
            .iter()
            .filter(|m| {
                m["from"] == "system"
                    && m["message"]
                        .as_str()
                        .unwrap_or("")
                        .contains("a ran without awtui's tools")
            })
            .count();
        assert_eq!(warnings, 1, "{backend}: {:?}", w.channel("t"));

        let w = World::new();
        fake_cli_workflow(&w, backend, program, "");
        let r = w.run(&["run", "cc.yaml", "--instance", "t"]);
        assert_eq!(r.code, 0, "{backend}: {}\n{}", r.stdout, r.stderr);
    }
}

/// An answer with AOP problems is accepted leniently, and the run says so
/// while it runs: in the agent's activity and in one compact system note
/// after the answer (not only in `awtui aop check`). A plain answer without
/// markers gets no note.
#[test]
fn lenient_aop_findings_show_during_the_run() {
    let w = World::new();
    w.script(
        "a.sh",
        "#!/bin/sh\ncat >/dev/null\nprintf '=== AOP-FINAL | agent=a ===\\nhalf an answer\\n'\n",
    );
    w.script("b.sh", "#!/bin/sh\ncat >/dev/null\necho plain words\n");
    std::fs::write(
        w.dir.join("aop.yaml"),
        "agents:\n  a:\n    command: ./a.sh\n  b:\n    command: ./b.sh\nkickoff: \"@a @b go\"\n",
    )
    .unwrap();
    let r = w.run(&["run", "aop.yaml", "--instance", "t", "--json", "--verbose"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let note =
        "a's answer has 1 AOP problem (accepted leniently; `awtui aop check` shows all): line 1: ";
    let events: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "activity" && e["agent"] == "a" && e.to_string().contains(note)),
        "{}",
        r.stdout
    );
    let channel = w.channel("t");
    let notes: Vec<usize> = channel
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            m["from"] == "system" && m["message"].as_str().unwrap_or("").contains("AOP problem")
        })
        .map(|(i, _)| i)
        .collect();
    assert_eq!(notes.len(), 1, "{channel:?}");
    assert!(
        channel[notes[0]]["message"]
            .as_str()
            .unwrap()
            .starts_with(note),
        "{channel:?}"
    );
    let answer = channel
        .iter()
        .position(|m| m["from"] == "a")
        .expect("a's answer");
    assert!(
        answer < notes[0],
        "the note follows the answer: {channel:?}"
    );
}

/// Issue 35: `run --json` says each agent's protocol and its last turn as
/// it went: the ACP agent's tool call (kind, title, status, file, diff),
/// its plan and its usage; `run --verbose` prints the changed file and
/// the plan as they happen.
#[test]
fn run_json_shows_an_acp_agents_protocol_tool_calls_plan_and_usage() {
    let w = World::new();
    acp_live_support::acp_workflow(&w, "acp.yaml", &[acp_live_support::edit_turn(false)]);
    let r = w.run(&["run", "acp.yaml", "--json"]);
    let v = r.json();
    let coder = &v["agents"][0];
    assert_eq!(coder["name"], "coder", "{v}");
    assert_eq!(coder["protocol"], "acp", "{coder}");
    let call = &coder["live"]["calls"][0];
    assert_eq!(call["title"], "Edit src/a.rs", "{coder}");
    assert_eq!(call["kind"], "edit");
    assert_eq!(call["status"], "completed");
    assert_eq!(call["locations"][0], "src/a.rs");
    assert_eq!(call["diffs"][0]["path"], "src/a.rs");
    assert_eq!(call["diffs"][0]["added"], 2);
    assert_eq!(call["diffs"][0]["removed"], 1);
    assert_eq!(call["diffs"][0]["preview"], "-b\n+c\n+d\n");
    assert_eq!(coder["live"]["plan"][1]["content"], "write the test");
    assert_eq!(coder["live"]["plan"][1]["status"], "in_progress");
    assert_eq!(coder["live"]["usage"]["cost_usd"], 0.05, "{coder}");
    assert!(
        coder["live"]["text"]
            .as_str()
            .unwrap()
            .contains("working on it"),
        "{coder}"
    );
    // The same run, watched: the file it changed and the plan, on stderr.
    let w = World::new();
    acp_live_support::acp_workflow(&w, "acp.yaml", &[acp_live_support::edit_turn(false)]);
    let r = w.run(&["run", "acp.yaml", "--verbose"]);
    for line in [
        "  coder ⚙ Edit src/a.rs",
        "  coder ✎ src/a.rs +2 −1",
        "  coder ☰ plan 1/2 · write the test",
    ] {
        assert!(
            r.stderr.contains(line),
            "{line:?} missing in:\n{}",
            r.stderr
        );
    }
}

/// Issue 35: an agent that floods 10,000 tool calls into one turn gets
/// the newest few into `run --json`, not all of them.
#[test]
fn a_flood_of_tool_calls_stays_bounded_in_run_json() {
    let w = World::new();
    acp_live_support::acp_workflow(&w, "acp.yaml", &[acp_live_support::flood_turn(false)]);
    let r = w.run(&["run", "acp.yaml", "--json"]);
    assert!(r.stdout.len() < 1024 * 1024, "{} bytes", r.stdout.len());
    let v = r.json();
    let calls = v["agents"][0]["live"]["calls"].as_array().unwrap().clone();
    assert_eq!(calls.len(), 40, "{}", v["agents"][0]);
    // The newest the backend kept (it remembers 2,000 calls of a turn).
    assert_eq!(calls.last().unwrap()["title"], "flood 1999");
}

/// The variables docs/backends.md ("The command backend") says a command
/// agent gets: the first column of its table.
fn documented_command_env() -> std::collections::BTreeSet<String> {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/backends.md"),
    )
    .unwrap();
    let section = doc
        .split("\n## The command backend\n")
        .nth(1)
        .expect("docs/backends.md has a section 'The command backend'");
    let section = section.split("\n## ").next().unwrap();
    section
        .lines()
        .filter_map(|l| l.strip_prefix("| `AWTUI_"))
        .map(|rest| format!("AWTUI_{}", rest.split('`').next().unwrap()))
        .collect()
}

/// Issue 36: a command agent gets exactly the `AWTUI_*` variables the docs
/// name (its system prompt among them), its `command:` arguments and the
/// turn prompt on stdin.
#[test]
fn a_command_agent_gets_the_documented_environment() {
    let w = World::new();
    w.script(
        "agent.sh",
        "#!/bin/sh\ncat > stdin.txt\nenv | sed -n 's/^\\(AWTUI_[A-Z_]*\\)=.*/\\1/p' | sort > env.txt\n\
         printf '%s' \"$AWTUI_SYSTEM_PROMPT\" > system.txt\nprintf '%s\\n' \"$@\" > args.txt\necho done\n",
    );
    std::fs::write(
        w.dir.join("w.yaml"),
        "agents:\n  a:\n    command: [./agent.sh, --fast, two words]\n    system_prompt: \"You review ${{ workflow.name }}.\"\nkickoff: \"@a go\"\n",
    )
    .unwrap();
    let r = w.run(&["run", "w.yaml", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let read = |f: &str| std::fs::read_to_string(w.dir.join(f)).expect(f);
    // What the test's own environment hands awtui passes through as any
    // variable does; the rest is what awtui sets.
    let inherited = ["AWTUI_STATE_DIR", "AWTUI_DEMO_PAUSE"];
    let got: std::collections::BTreeSet<String> = read("env.txt")
        .lines()
        .filter(|v| !inherited.contains(v) && std::env::var_os(v).is_none())
        .map(String::from)
        .collect();
    assert_eq!(got, documented_command_env());
    assert_eq!(read("system.txt"), "You review w.");
    assert_eq!(read("args.txt"), "--fast\ntwo words\n");
    assert!(read("stdin.txt").contains("go"), "{}", read("stdin.txt"));
}
