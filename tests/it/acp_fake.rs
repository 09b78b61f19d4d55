//! `backend: acp` end to end with the real binary and a fake ACP agent
//! (tests/fakes/fake_acp_agent.py, python3): approvals asked, denied with a
//! reason, answered by rules and by an "always"; the MCP post under the
//! agent's own name; cancel during a long tool call, an agent that never
//! answers cancel, a permission request after cancel; a crash mid-prompt;
//! malformed and hostile lines; `fs/*` requests; the session loaded again
//! after awtui restarts. The fake logs every message awtui sends it
//! (FAKE_ACP_LOG), so each test checks what awtui said, not only what it
//! shows.

use crate::cli_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use cli_support::{World, alive, poll_within, wait_for};
use serde_json::Value;

/// The fake ACP agent.
fn fake() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fakes/fake_acp_agent.py")
}

/// Fails (never skips) when python3 is missing, saying how to get it.
fn need_python() {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "these tests run a fake ACP agent with python3: install it (apt-get install -y python3)"
    );
}

/// One fake ACP agent in a world: where it logs and keeps its sessions.
struct Agent {
    name: &'static str,
    log: PathBuf,
    state: PathBuf,
    pidfile: PathBuf,
}

impl Agent {
    fn new(w: &World, name: &'static str) -> Agent {
        let dir = w.tmp.path().join(format!("fake-{name}"));
        std::fs::create_dir_all(&dir).unwrap();
        Agent {
            name,
            log: dir.join("log.jsonl"),
            state: dir.join("sessions"),
            pidfile: dir.join("sleep.pid"),
        }
    }

    /// The agent's workflow entry: `backend: acp` running the fake, with
    /// `extra` agent keys (indented by four) and `env` for the fake (a
    /// value starting with `"` is YAML as written, escapes and all).
    fn yaml(&self, extra: &str, env: &[(&str, &str)]) -> String {
        let mut s = format!(
            "  {}:\n    backend: acp\n    command: [python3, \"{}\"]\n{extra}    env:\n      FAKE_ACP_LOG: \"{}\"\n      FAKE_ACP_STATE: \"{}\"\n      FAKE_ACP_PIDFILE: \"{}\"\n",
            self.name,
            fake().display(),
            self.log.display(),
            self.state.display(),
            self.pidfile.display()
        );
        for (k, v) in env {
            // A value already in YAML double quotes (with escapes) as is.
            if v.starts_with('"') {
                s.push_str(&format!("      {k}: {v}\n"));
            } else {
                s.push_str(&format!("      {k}: '{v}'\n"));
            }
        }
        s
    }

    /// Every message awtui sent the fake, in order.
    fn received(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The messages with `method`.
    fn calls(&self, method: &str) -> Vec<Value> {
        self.received()
            .into_iter()
            .filter(|m| m["method"] == method)
            .collect()
    }

    /// awtui's answers to the fake's own requests of `method`.
    fn answers(&self, method: &str) -> Vec<Value> {
        self.received()
            .into_iter()
            .filter(|m| m["_request"] == method)
            .collect()
    }

    /// The option awtui chose for each permission request (or "cancelled").
    fn permission_outcomes(&self) -> Vec<String> {
        self.answers("session/request_permission")
            .iter()
            .map(|m| {
                let o = &m["result"]["outcome"];
                match o["outcome"].as_str() {
                    Some("selected") => o["optionId"].as_str().unwrap_or("?").to_string(),
                    Some(other) => other.to_string(),
                    None => format!("{m}"),
                }
            })
            .collect()
    }

    /// The text of each `session/prompt` awtui sent.
    fn prompts(&self) -> Vec<String> {
        self.calls("session/prompt")
            .iter()
            .map(|m| {
                m["params"]["prompt"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|b| b["text"].as_str())
                    .collect()
            })
            .collect()
    }

    /// Waits until awtui has sent `n` prompts.
    fn wait_prompts(&self, n: usize) -> Vec<String> {
        wait_for(&format!("{n} session/prompt for {}", self.name), || {
            let p = self.prompts();
            (p.len() >= n).then_some(p)
        })
    }

    /// The pid of the long tool's `sleep` child, once it runs.
    fn sleep_pid(&self) -> u32 {
        wait_for("the long tool's child", || {
            std::fs::read_to_string(&self.pidfile)
                .ok()?
                .trim()
                .parse()
                .ok()
        })
    }
}

/// Writes `file` with these agents and the kickoff; `limits` lines go
/// under `limits:` (indented by two).
fn workflow(w: &World, file: &str, agents: &[String], limits: &str, kickoff: &str) {
    let text = format!(
        "agents:\n{}limits:\n  retries: 0\n{limits}kickoff: \"{kickoff}\"\n",
        agents.concat()
    );
    std::fs::write(w.dir.join(file), text).unwrap();
}

/// The requests waiting in the instance, as `awtui approve` lists them.
fn pending(w: &World) -> Vec<Value> {
    let r = w.run(&["approve", "--instance", "default", "--json"]);
    serde_json::from_str(&r.stdout).unwrap_or_default()
}

fn wait_pending(w: &World, n: usize) -> Vec<Value> {
    wait_for(&format!("{n} approval requests waiting"), || {
        let p = pending(w);
        (p.len() == n).then_some(p)
    })
}

/// Waits for a channel message from `from` containing `text`.
fn wait_message(w: &World, from: &str, text: &str) -> Value {
    wait_for(&format!("a message from {from} with {text:?}"), || {
        w.channel("default")
            .into_iter()
            .find(|m| m["from"] == from && m["message"].as_str().unwrap_or("").contains(text))
    })
}

/// The agent's status in `list --json`.
fn status(w: &World, agent: &str) -> Value {
    let list = w.list();
    list.iter()
        .flat_map(|i| i["agents"].as_array().cloned().unwrap_or_default())
        .find(|a| a["address"] == format!("{agent}@default") || a["name"] == agent)
        .map(|a| a["status"].clone())
        .unwrap_or(Value::Null)
}

fn run_ok(w: &World, args: &[&str]) {
    let r = w.run(args);
    assert_eq!(r.code, 0, "awtui {args:?}: {}{}", r.stdout, r.stderr);
}

fn send(w: &World, text: &str) {
    run_ok(w, &["send", text, "--to", "@default"]);
}

fn stop_instance(w: &World) {
    run_ok(w, &["stop", "@default"]);
}

/// The parent of process `pid`.
fn parent_of(pid: u32) -> u32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    after.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// A hostile agent names its shell call like awtui's own `channel_send`
/// (which awtui allows by itself) and hides an escape sequence in the
/// command: the call still goes to the person, and the listing shows the
/// command without the escape.
#[test]
fn a_shell_call_titled_like_awtuis_own_tool_still_asks_the_person() {
    need_python();
    let mut w = World::new();
    let fa = Agent::new(&w, "fa");
    workflow(
        &w,
        "acp.yaml",
        &[fa.yaml(
            "    permissions: ask\n",
            &[
                ("FAKE_ACP_TITLE", "channel_send"),
                (
                    "FAKE_ACP_COMMAND",
                    r#""echo pwned > pwned.txt # \e]52;c;cHduZWQ=\a\e[2J""#,
                ),
            ],
        )],
        "",
        "@fa go",
    );
    w.start_background("acp.yaml", "default");
    let p = wait_pending(&w, 1);
    assert_eq!(p[0]["tool"], "Bash", "{p:?}");
    assert!(!w.dir.join("pwned.txt").exists());
    let listed = w.run(&["approve", "--instance", "default"]);
    assert!(
        listed.stdout.contains("echo pwned > pwned.txt"),
        "{}",
        listed.stdout
    );
    assert!(!listed.stdout.contains('\x1b'), "{:?}", listed.stdout);
    run_ok(&w, &["deny", "1", "--instance", "default"]);
    wait_message(&w, "fa", "done");
    assert_eq!(fa.permission_outcomes(), ["reject-once"]);
    assert!(!w.dir.join("pwned.txt").exists());
    stop_instance(&w);
}

#[test]
fn an_approval_allowed_from_the_shell_runs_the_command() {
    need_python();
    let mut w = World::new();
    let fa = Agent::new(&w, "fa");
    workflow(
        &w,
        "acp.yaml",
        &[fa.yaml("    permissions: ask\n", &[])],
        "",
        "@fa run it",
    );
    w.start_background("acp.yaml", "default");
    let p = wait_pending(&w, 1);
    assert_eq!(p[0]["agent"], "fa", "{p:?}");
    assert_eq!(p[0]["tool"], "Bash", "{p:?}");
    assert_eq!(p[0]["input"]["command"], "echo ran >> ran.txt", "{p:?}");
    assert!(!w.dir.join("ran.txt").exists(), "ran before the answer");
    run_ok(&w, &["approve", "1", "--instance", "default"]);
    wait_message(&w, "fa", "done");
    assert_eq!(
        std::fs::read_to_string(w.dir.join("ran.txt")).unwrap(),
        "ran\n"
    );
    // The answer is an option the agent offered (awtui keeps "always"
    // itself, so it picks the one-time one).
    assert_eq!(fa.permission_outcomes(), ["allow-once"]);
    // What awtui sent: initialize, a session in the workspace with its MCP
    // server carrying the agent's own bearer token, one prompt.
    let init = &fa.calls("initialize")[0];
    assert_eq!(init["params"]["protocolVersion"], 1);
    let new = &fa.calls("session/new")[0]["params"];
    assert_eq!(
        Path::new(new["cwd"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        w.dir.canonicalize().unwrap()
    );
    let awtui = &new["mcpServers"][0];
    assert_eq!(awtui["type"], "http", "{new}");
    assert!(
        awtui["headers"][0]["value"]
            .as_str()
            .unwrap()
            .starts_with("Bearer "),
        "{new}"
    );
    assert_eq!(fa.prompts().len(), 1);
    stop_instance(&w);
}

#[test]
fn a_denial_s_reason_reaches_the_model_in_the_next_prompt() {
    need_python();
    let mut w = World::new();
    let fa = Agent::new(&w, "fa");
    workflow(
        &w,
        "acp.yaml",
        &[fa.yaml("    permissions: ask\n", &[])],
        "",
        "@fa run it",
    );
    w.start_background("acp.yaml", "default");
    wait_pending(&w, 1);
    run_ok(
        &w,
        &[
            "deny",
            "1",
            "--reason",
            "not on a friday",
            "--instance",
            "default",
        ],
    );
    wait_message(&w, "fa", "was rejected");
    assert_eq!(fa.permission_outcomes(), ["reject-once"]);
    assert!(!w.dir.join("ran.txt").exists());
    // ACP has no field for the reason: the next prompt carries it.
    assert!(
        !fa.prompts()[0].contains("not on a friday"),
        "{:?}",
        fa.prompts()
    );
    send(&w, "@fa try again");
    let prompts = fa.wait_prompts(2);
    assert!(prompts[1].contains("not on a friday"), "{prompts:?}");
    assert_eq!(
        fa.calls("initialize").len(),
        1,
        "the second turn went to the same process"
    );
    let sessions: Vec<Value> = fa
        .calls("session/prompt")
        .iter()
        .map(|m| m["params"]["sessionId"].clone())
        .collect();
    assert_eq!(sessions[0], sessions[1]);
    stop_instance(&w);
}

#[test]
fn the_approve_rules_answer_without_the_person() {
    need_python();
    let mut w = World::new();
    let fa = Agent::new(&w, "fa");
    let fb = Agent::new(&w, "fb");
    workflow(
        &w,
        "acp.yaml",
        &[
            fa.yaml(
                "    approve:\n      allow: [\"Bash(echo ran*)\"]\n",
                &[("FAKE_ACP_REPLY", "fa done")],
            ),
            fb.yaml(
                "    approve:\n      deny: [\"Bash(rm *)\"]\n",
                &[
                    ("FAKE_ACP_COMMAND", "rm -f keep.txt"),
                    ("FAKE_ACP_REPLY", "fb done"),
                ],
            ),
        ],
        "",
        "@fa @fb go",
    );
    std::fs::write(w.dir.join("keep.txt"), "keep").unwrap();
    w.start_background("acp.yaml", "default");
    wait_message(&w, "fa", "fa done");
    wait_message(&w, "fb", "fb done");
    assert_eq!(fa.permission_outcomes(), ["allow-once"]);
    assert_eq!(fb.permission_outcomes(), ["reject-once"]);
    assert!(w.dir.join("ran.txt").exists());
    assert!(w.dir.join("keep.txt").exists(), "the denied rm ran");
    assert!(pending(&w).is_empty());
    let by: Vec<Value> = cli_support::approval_decisions(&w.state)
        .iter()
        .map(|d| d["by"].clone())
        .collect();
    assert_eq!(by, ["rule", "rule"], "{by:?}");
    stop_instance(&w);
}

/// Without `permissions: ask` awtui answers by itself: workspace-write
/// refuses a command, unless the agent's `tools:` allow it (as rules:
/// `Bash(echo ran*)`); no person is asked either way.
#[test]
fn standing_permissions_refuse_a_command_unless_tools_allow_it() {
    need_python();
    let mut w = World::new();
    let fa = Agent::new(&w, "fa");
    let fb = Agent::new(&w, "fb");
    workflow(
        &w,
        "acp.yaml",
        &[
            fa.yaml(
                "    permissions: workspace-write\n    tools: [\"Bash(echo ran*)\"]\n",
                &[("FAKE_ACP_REPLY", "fa done")],
            ),
            fb.yaml(
                "    permissions: workspace-write\n",
                &[
                    ("FAKE_ACP_COMMAND", "echo other >> other.txt"),
                    ("FAKE_ACP_REPLY", "fb done"),
                ],
            ),
        ],
        "",
        "@fa @fb go",
    );
    w.start_background("acp.yaml", "default");
    wait_message(&w, "fa", "fa done");
    wait_message(&w, "fb", "fb done");
    assert_eq!(fa.permission_outcomes(), ["allow-once"]);
    assert_eq!(fb.permission_outcomes(), ["reject-once"]);
    assert!(w.dir.join("ran.txt").exists());
    assert!(!w.dir.join("other.txt").exists(), "the refused command ran");
    assert!(pending(&w).is_empty());
    assert!(cli_support::approval_decisions(&w.state).is_empty());
    stop_instance(&w);
}

#[test]
fn always_becomes_a_rule_that_answers_the_next_identical_request() {
    need_python();
    let mut w = World::new();
    let fa = Agent::new(&w, "fa");
    workflow(
        &w,
        "acp.yaml",
        &[fa.yaml("    permissions: ask\n", &[("FAKE_ACP_REPEAT", "2")])],
        "",
        "@fa run it twice",
    );
    w.start_background("acp.yaml", "default");
    wait_pending(&w, 1);
    run_ok(&w, &["approve", "1", "--always", "--instance", "default"]);
    wait_message(&w, "fa", "done");
    assert_eq!(fa.permission_outcomes(), ["allow-once", "allow-once"]);
    assert_eq!(
        std::fs::read_to_string(w.dir.join("ran.txt")).unwrap(),
        "ran\nran\n"
    );
    let d = cli_support::approval_decisions(&w.state);
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!(d[1]["by"], "rule", "{d:?}");
    stop_instance(&w);
}

#[test]
fn the_agent_posts_through_mcp_under_its_own_name() {
    need_python();
    let mut w = World::new();
    let fa = Agent::new(&w, "fa");
    workflow(
        &w,
        "acp.yaml",
        &[fa.yaml(
            "    permissions: ask\n",
            &[
                ("FAKE_ACP_COMMAND", ""),
                ("FAKE_ACP_MCP", "hello from the fake"),
                ("FAKE_ACP_ASK_MCP", "1"),
            ],
        )],
        "",
        "@fa say hello",
    );
    w.start_background("acp.yaml", "default");
    wait_message(&w, "fa", "hello from the fake");
    // The agent posted, so its final answer is not posted again; the turn
    // ends all the same.
    wait_for("fa to be idle", || {
        (status(&w, "fa") == "idle").then_some(())
    });
    // awtui answered the question about its own tool itself.
    assert_eq!(fa.permission_outcomes(), ["allow-once"]);
    assert!(cli_support::approval_decisions(&w.state).is_empty());
    stop_instance(&w);
}

#[test]
fn malformed_and_hostile_lines_do_not_fail_the_turn_or_reach_the_output() {
    need_python();
    let w = World::new();
    let fa = Agent::new(&w, "fa");
    workflow(
        &w,
        "acp.yaml",
        &[fa.yaml("    permissions: full\n", &[("FAKE_ACP_MODE", "malformed")])],
        "",
        "@fa go",
    );
    let r = w.run(&["run", "acp.yaml", "--instance", "default"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("done"), "{}", r.stdout);
    for out in [&r.stdout, &r.stderr] {
        assert!(!out.contains('\x1b'), "an escape sequence reached: {out:?}");
        assert!(!out.contains('\u{9b}'), "a C1 CSI reached: {out:?}");
    }
    // The channel keeps the agent's text as it came (the `run` output
    // above, like every front end, makes it safe).
    wait_message(&w, "fa", "done");
    // The agent's unknown request was answered "method not found".
    let unknown = fa.answers("fake/unknown_method");
    assert_eq!(unknown[0]["error"]["code"], -32601, "{unknown:?}");
    assert!(std::fs::read_to_string(w.dir.join("ran.txt")).is_ok());
}

#[test]
fn fs_requests_are_refused_outside_and_inside_the_workspace() {
    need_python();
    let w = World::new();
    let fa = Agent::new(&w, "fa");
    std::fs::write(w.dir.join("inside.txt"), "inside").unwrap();
    let inside = w.dir.join("inside.txt").display().to_string();
    let write = w.dir.join("written.txt").display().to_string();
    workflow(
        &w,
        "acp.yaml",
        &[
            fa.yaml(
                "    permissions: full\n",
                &[
                    ("FAKE_ACP_MODE", "fs"),
                    ("FAKE_ACP_COMMAND", ""),
                    ("FAKE_ACP_FS_READ", "/etc/passwd"),
                    ("FAKE_ACP_FS_WRITE", &write),
                ],
            ),
            Agent::new(&w, "fb").yaml(
                "    permissions: full\n",
                &[
                    ("FAKE_ACP_MODE", "fs"),
                    ("FAKE_ACP_COMMAND", ""),
                    ("FAKE_ACP_FS_READ", &inside),
                    ("FAKE_ACP_REPLY", "fb done"),
                ],
            ),
        ],
        "",
        "@fa @fb go",
    );
    let r = w.run(&["run", "acp.yaml", "--instance", "default"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // awtui advertises no file system: every fs/* is "method not found",
    // outside the workspace and inside it alike.
    let init = &fa.calls("initialize")[0]["params"]["clientCapabilities"];
    assert_eq!(init["fs"]["readTextFile"], false, "{init}");
    let read = fa.answers("fs/read_text_file");
    assert_eq!(read[0]["error"]["code"], -32601, "{read:?}");
    assert!(!read[0].to_string().contains("root:"), "{read:?}");
    let wrote = fa.answers("fs/write_text_file");
    assert_eq!(wrote[0]["error"]["code"], -32601, "{wrote:?}");
    assert!(!w.dir.join("written.txt").exists());
    let fb = Agent::new(&w, "fb");
    let read_inside = fb.answers("fs/read_text_file");
    assert_eq!(read_inside[0]["error"]["code"], -32601, "{read_inside:?}");
}

/// Starts `file` in this process's own engine (so the test can stop and
/// restart one agent, as the control room does).
async fn engine(
    w: &World,
    file: &str,
) -> (
    awtui::engine::Engine,
    tokio::sync::broadcast::Receiver<awtui::engine::EngineEvent>,
) {
    let workflow = awtui::workflow::load(&w.dir.join(file)).unwrap().workflow;
    awtui::engine::Engine::start(
        workflow,
        awtui::engine::EngineOptions {
            instance: "default".into(),
            mode: awtui::agents::runner::RunMode::Start,
            watch_documents: false,
        },
    )
    .await
    .unwrap()
}

/// `awtui stop --turn` (the person's Esc) during a long tool call: awtui
/// sends `session/cancel`, the agent kills its command and answers
/// `cancelled`, and stays up; woken again, the same process gets the next
/// prompt in the same session.
#[test]
fn cancel_during_a_long_tool_call_then_the_same_session_goes_on() {
    need_python();
    let mut w = World::new();
    let fa = Agent::new(&w, "fa");
    workflow(
        &w,
        "acp.yaml",
        &[fa.yaml("    permissions: full\n", &[("FAKE_ACP_MODE", "long")])],
        "",
        "@fa go",
    );
    w.start_background("acp.yaml", "default");
    let sleep = fa.sleep_pid();
    let agent_pid = parent_of(sleep);
    run_ok(&w, &["stop", "--turn", "fa@default"]);
    wait_for("the tool's child to end", || (!alive(sleep)).then_some(()));
    let cancels = fa.calls("session/cancel");
    let prompt = &fa.calls("session/prompt")[0];
    assert_eq!(cancels.len(), 1, "{cancels:?}");
    assert_eq!(
        cancels[0]["params"]["sessionId"],
        prompt["params"]["sessionId"]
    );
    wait_for("fa to be idle", || {
        (status(&w, "fa") == "idle").then_some(())
    });
    assert!(alive(agent_pid), "the agent ended its prompt: it stays up");

    std::fs::remove_file(&fa.pidfile).unwrap();
    send(&w, "@fa go on");
    let again = fa.sleep_pid();
    let prompts = fa.calls("session/prompt");
    assert_eq!(prompts.len(), 2);
    assert_eq!(
        prompts[1]["params"]["sessionId"], prompts[0]["params"]["sessionId"],
        "the same session"
    );
    // It is told its last turn was cancelled, not left unanswered.
    let text = prompts[1]["params"]["prompt"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert!(
        text.contains("The person cancelled your previous turn"),
        "{text}"
    );
    assert_eq!(
        (fa.calls("initialize").len(), parent_of(again)),
        (1, agent_pid),
        "the same process"
    );
    stop_instance(&w);
    wait_for("the agent to end with the instance", || {
        (!alive(agent_pid) && !alive(again)).then_some(())
    });
}

#[test]
fn an_agent_that_never_answers_cancel_is_ended_within_a_bound() {
    need_python();
    let mut w = World::new();
    let fa = Agent::new(&w, "fa");
    workflow(
        &w,
        "acp.yaml",
        &[fa.yaml(
            "    permissions: full\n",
            &[
                ("FAKE_ACP_MODE", "long,ignore-cancel"),
                ("FAKE_ACP_IGNORE_TERM", "1"),
            ],
        )],
        "",
        "@fa go",
    );
    w.start_background("acp.yaml", "default");
    let sleep = fa.sleep_pid();
    let agent_pid = parent_of(sleep);
    run_ok(&w, &["stop", "fa@default"]);
    // CANCEL_WAIT, then SIGTERM (ignored), STOP_GRACE, then SIGKILL of the
    // whole group: both end, however busy the machine.
    let gone = poll_within(cli_support::PATIENCE, || {
        (!alive(agent_pid) && !alive(sleep)).then_some(())
    });
    assert!(
        gone.is_some(),
        "the agent ({agent_pid}: {}) or its child ({sleep}: {}) outlived the stop",
        alive(agent_pid),
        alive(sleep),
    );
    assert_eq!(fa.calls("session/cancel").len(), 1);
    wait_for("fa to be stopped", || {
        (status(&w, "fa") == "stopped").then_some(())
    });
    stop_instance(&w);
}

#[test]
fn a_permission_request_after_cancel_is_answered_cancelled_and_nothing_runs() {
    need_python();
    let mut w = World::new();
    let fa = Agent::new(&w, "fa");
    workflow(
        &w,
        "acp.yaml",
        &[fa.yaml(
            "    permissions: ask\n",
            &[("FAKE_ACP_MODE", "ask-after-cancel")],
        )],
        "",
        "@fa go",
    );
    w.start_background("acp.yaml", "default");
    wait_pending(&w, 1);
    run_ok(&w, &["stop", "--turn", "fa@default"]);
    let outcomes = wait_for("both permission requests answered", || {
        let o = fa.permission_outcomes();
        (o.len() == 2).then_some(o)
    });
    assert_eq!(outcomes, ["cancelled", "cancelled"]);
    assert_eq!(fa.calls("session/cancel").len(), 1);
    assert!(
        !w.dir.join("ran.txt").exists(),
        "a command ran after cancel"
    );
    assert!(pending(&w).is_empty(), "{:?}", pending(&w));
    stop_instance(&w);
}

#[test]
fn a_crash_mid_prompt_fails_the_turn_and_the_retry_loads_the_session() {
    need_python();
    let w = World::new();
    let fa = Agent::new(&w, "fa");
    let mark = w.tmp.path().join("crashed");
    workflow(
        &w,
        "acp.yaml",
        &[fa.yaml(
            "    permissions: full\n",
            &[
                ("FAKE_ACP_MODE", "crash"),
                ("FAKE_ACP_CRASH_MARK", &mark.display().to_string()),
                ("FAKE_ACP_COMMAND", ""),
            ],
        )],
        "  retry_backoff: 10ms\n",
        "@fa go",
    );
    let text = std::fs::read_to_string(w.dir.join("acp.yaml"))
        .unwrap()
        .replace("retries: 0", "retries: 1");
    std::fs::write(w.dir.join("acp.yaml"), text).unwrap();
    let r = w.run(&["run", "acp.yaml", "--instance", "default"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(mark.exists(), "it never crashed");
    assert!(
        r.stderr.contains("exited with status 3") && r.stderr.contains("crashing mid-prompt"),
        "the failure does not say why: {}",
        r.stderr
    );
    assert!(r.stdout.contains("done"), "{}", r.stdout);
    let first = fa.calls("session/prompt")[0]["params"]["sessionId"].clone();
    let loads = fa.calls("session/load");
    assert_eq!(fa.calls("initialize").len(), 2, "a new process");
    assert_eq!(loads.len(), 1, "{loads:?}");
    assert_eq!(loads[0]["params"]["sessionId"], first);
    assert_eq!(fa.calls("session/prompt")[1]["params"]["sessionId"], first);
}

#[test]
fn after_awtui_restarts_the_saved_session_is_loaded() {
    need_python();
    let mut w = World::new();
    let fa = Agent::new(&w, "fa");
    workflow(
        &w,
        "acp.yaml",
        &[fa.yaml("    permissions: full\n", &[("FAKE_ACP_COMMAND", "")])],
        "",
        "@fa first",
    );
    w.start_background("acp.yaml", "default");
    wait_message(&w, "fa", "done");
    stop_instance(&w);
    w.start_background("acp.yaml", "default");
    send(&w, "@fa second");
    let prompts = fa.wait_prompts(2);
    assert!(prompts[1].contains("second"), "{prompts:?}");
    let first = fa.calls("session/prompt")[0]["params"]["sessionId"].clone();
    let loads = fa.calls("session/load");
    assert_eq!(fa.calls("initialize").len(), 2, "a new process");
    assert_eq!(loads.len(), 1, "{loads:?}");
    assert_eq!(loads[0]["params"]["sessionId"], first);
    assert_eq!(fa.calls("session/new").len(), 1);
    assert_eq!(fa.calls("session/prompt")[1]["params"]["sessionId"], first);
    stop_instance(&w);
}

/// The turn's structure reaches the front ends as it happens: the tool
/// call with its kind, status and diff, the plan, usage with its cost and
/// the session id, every agent text in it made safe (the title here holds
/// an OSC 52 clipboard write).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_calls_plan_and_usage_reach_the_front_ends_safely() {
    use awtui::agents::backend::BackendEvent;
    use awtui::agents::runner::AgentStatus;
    use awtui::engine::{Command as Cmd, EngineEvent};
    need_python();
    let w = World::new();
    let fa = Agent::new(&w, "fa");
    workflow(
        &w,
        "acp.yaml",
        &[fa.yaml(
            "    permissions: full\n",
            &[
                ("FAKE_ACP_MODE", "plan"),
                (
                    "FAKE_ACP_TITLE",
                    r#""append \e]52;c;cHduZWQ=\a to ran.txt""#,
                ),
            ],
        )],
        "",
        "@fa go",
    );
    let (engine, mut events) = engine(&w, "acp.yaml").await;
    let mut seen = Vec::new();
    let mut cost = 0.0;
    cli_support::within("fa's turn to end", async {
        loop {
            match events.recv().await.expect("engine ended") {
                EngineEvent::Activity { agent, activity } if agent == "fa" => seen.push(activity),
                EngineEvent::Metrics { agent, metrics } if agent == "fa" => {
                    cost = metrics.cost_usd;
                }
                EngineEvent::Status { agent, status }
                    if agent == "fa" && status == AgentStatus::Idle && !seen.is_empty() =>
                {
                    return;
                }
                _ => {}
            }
        }
    })
    .await;
    let tool = seen
        .iter()
        .rev()
        .find_map(|e| match e {
            BackendEvent::Tool { call } if call.kind == "execute" => Some(call.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no tool call in {seen:?}"));
    assert_eq!(tool.status, "completed", "{tool:?}");
    assert!(
        !tool.title.contains('\x1b') && !tool.title.contains('\u{7}'),
        "{tool:?}"
    );
    assert!(tool.title.contains("to ran.txt"), "{tool:?}");
    let diff = tool
        .diffs
        .iter()
        .find(|d| d.path.ends_with("ran.txt"))
        .unwrap_or_else(|| panic!("no diff of ran.txt: {tool:?}"));
    assert_eq!((diff.added, diff.removed), (1, 0), "{diff:?}");
    let plan = seen
        .iter()
        .rev()
        .find_map(|e| match e {
            BackendEvent::Plan { entries } => Some(entries.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no plan in {seen:?}"));
    assert_eq!(plan.len(), 3, "{plan:?}");
    assert!(plan.iter().all(|e| e.status == "completed"), "{plan:?}");
    assert!(
        seen.iter()
            .any(|e| matches!(e, BackendEvent::Usage { usage } if usage.cost_usd == Some(0.01))),
        "{seen:?}"
    );
    // The turn's usage counts in the agent's metrics (its cost).
    assert!((cost - 0.01).abs() < 1e-9, "cost {cost}");
    let session = fa.calls("session/prompt")[0]["params"]["sessionId"].clone();
    assert!(
        seen.iter()
            .any(|e| matches!(e, BackendEvent::Session { id } if session == id.as_str())),
        "{seen:?}"
    );
    engine.send(Cmd::Shutdown);
    engine.wait().await;
}

#[test]
fn nobody_answering_denies_at_the_approval_timeout_and_the_model_is_told() {
    need_python();
    let mut w = World::new();
    let fa = Agent::new(&w, "fa");
    workflow(
        &w,
        "acp.yaml",
        &[fa.yaml("    permissions: ask\n", &[])],
        "  approval_timeout: 1s\n",
        "@fa run it",
    );
    w.start_background("acp.yaml", "default");
    wait_message(&w, "fa", "was rejected");
    assert_eq!(fa.permission_outcomes(), ["reject-once"]);
    assert_eq!(
        cli_support::approval_decisions(&w.state)[0]["by"],
        "timeout"
    );
    send(&w, "@fa again");
    let prompts = fa.wait_prompts(2);
    assert!(prompts[1].contains("nobody answered"), "{prompts:?}");
    stop_instance(&w);
}
