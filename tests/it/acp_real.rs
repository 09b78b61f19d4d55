//! The real ACP agents inside a real awtui instance, against the project's
//! fake model API, offline: Gemini CLI (`gemini --acp`) and opencode
//! (`opencode acp`), which speak ACP themselves, and Claude Code and Codex
//! through their adapters (`claude-agent-acp`, `codex-acp`).
//!
//! Like tests/real_clis.rs (whose helpers, tests/real_support, it shares):
//! the programs come pinned from `scripts/install-clis.sh`, a missing one
//! fails with the command to run, and each test re-runs itself in a
//! loopback-only network namespace when the system can make one.
//!
//! The model is [`llm_server::start_directed`]: the prompt says which
//! tools it calls (`[[shell: …]]`, `[[call: …]]`), so one live session can
//! be driven over several turns, and every request it received is kept to
//! check what the agent told its model.
//!
//! Per agent: a shell call allowed and one denied with a reason, then a
//! post through awtui's MCP server; a stop during a long call, then the
//! conversation resumed; a model API that refuses (the fault: the turn
//! fails and says why). And a team of two vendors working a task.

use crate::cli_support;
use crate::llm_server;
use crate::real_support;

use cli_support::{PATIENCE, World};
use llm_server::{Log, Recorded};
use real_support::*;
use serde_json::{Value, json};

/// One ACP agent under test.
struct Agent {
    /// The CLI whose fake-model environment it uses.
    cli: &'static Cli,
    /// The ACP adapter it runs through (`None`: the CLI itself).
    adapter: Option<&'static str>,
    /// Whether its shell calls must ask to leave the sandbox to be asked
    /// about at all (codex-acp runs commands inside the workspace without
    /// asking in its `workspace-write` mode).
    escalate: bool,
}

const GEMINI_ACP: Agent = Agent {
    cli: &GEMINI,
    adapter: None,
    escalate: false,
};
const OPENCODE_ACP: Agent = Agent {
    cli: &OPENCODE,
    adapter: None,
    escalate: false,
};
const CLAUDE_ACP: Agent = Agent {
    cli: &CLAUDE,
    adapter: Some("claude-agent-acp"),
    escalate: false,
};
const CODEX_ACP: Agent = Agent {
    cli: &CODEX,
    adapter: Some("codex-acp"),
    escalate: true,
};

/// What the model answers once the prompt's calls are done.
const FINAL: &str = "Turn finished.";
const INSTANCE: &str = "t";

impl Agent {
    /// Fails when its program is not installed.
    fn installed(&self) {
        bin_dir(self.cli.program);
        if let Some(a) = self.adapter {
            adapter(a);
        }
    }

    /// A directive to run `command` with the agent's shell tool.
    fn shell(&self, command: &str) -> String {
        let bang = if self.escalate { "!" } else { "" };
        format!("[[shell{bang}: {command}]]")
    }

    /// The workflow: one agent `a` of this CLI over ACP that asks the
    /// person before its tools run.
    fn workflow(&self, kickoff: &str) -> String {
        format!(
            "name: acp\nagents:\n  a:\n    backend: {}\n    protocol: acp\n    model: {}\n\
             \x20   permissions: ask\n    timeout: 240s\n\
             limits:\n  retries: 0\nkickoff: {}\n",
            self.cli.backend,
            self.cli.model,
            json!(kickoff)
        )
    }
}

/// A running instance of one ACP agent and its fake model.
struct Live {
    w: World,
    log: Log,
    _rt: tokio::runtime::Runtime,
}

impl Live {
    /// Starts `agent` in the background with `kickoff`.
    fn start(agent: &Agent, kickoff: &str) -> Live {
        Live::start_with(agent, kickoff, &[])
    }

    /// [`Live::start`] with `files` (name, content) in the workspace.
    fn start_with(agent: &Agent, kickoff: &str, files: &[(&str, &str)]) -> Live {
        agent.installed();
        let rt = tokio::runtime::Runtime::new().unwrap();
        let mut w = World::new();
        let (url, log) = rt.block_on(llm_server::start_directed(FINAL));
        let root = w.tmp.path().to_path_buf();
        let mut env = common_env(&root, &wrap_clis_and_adapters(&w));
        env.extend(cli_env(&root, agent.cli, &url));
        w.env.extend(env);
        std::fs::write(w.dir.join("wf.yaml"), agent.workflow(kickoff)).unwrap();
        for (name, content) in files {
            std::fs::write(w.dir.join(name), content).unwrap();
        }
        w.start_background("wf.yaml", INSTANCE);
        Live { w, log, _rt: rt }
    }

    /// Starts the instance again (after it was stopped).
    fn restart(&mut self) {
        self.w.start_background("wf.yaml", INSTANCE);
    }

    fn awtui(&self, args: &[&str]) -> cli_support::Ran {
        let mut full = args.to_vec();
        full.extend(["--instance", INSTANCE]);
        self.w.run(&full)
    }

    /// The approval requests waiting now.
    fn pending(&self) -> Vec<Value> {
        let r = self.awtui(&["approve", "--json"]);
        serde_json::from_str(&r.stdout).unwrap_or_default()
    }

    /// Waits for the one request whose command contains `needle`, then
    /// allows it, or denies it with `reason`.
    fn answer(&self, needle: &str, deny: Option<&str>) -> Value {
        let request = self.within(&format!("a request to run {needle:?}"), || {
            self.pending().into_iter().find(|p| {
                p["input"]["command"]
                    .as_str()
                    .unwrap_or("")
                    .contains(needle)
            })
        });
        let id = request["id"].as_u64().unwrap().to_string();
        let args: Vec<&str> = match deny {
            None => vec!["approve", &id],
            Some(reason) => vec!["deny", &id, "--reason", reason],
        };
        let r = self.awtui(&args);
        assert_eq!(
            r.code,
            0,
            "awtui {args:?}: {}\n{}",
            r.stderr,
            self.explain()
        );
        request
    }

    /// `awtui send` as the person.
    fn send(&self, text: &str) {
        let r = self
            .w
            .run(&["send", text, "--to", &format!("a@{INSTANCE}")]);
        assert_eq!(r.code, 0, "send: {}\n{}", r.stderr, self.explain());
    }

    /// The messages `who` posted.
    fn from(&self, who: &str) -> Vec<String> {
        self.w
            .channel(INSTANCE)
            .iter()
            .filter(|m| m["from"] == who)
            .map(|m| m["message"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// Waits until `a` has posted a message holding `text`; fails at once
    /// when `a` failed. All of `a`'s messages.
    fn posted(&self, text: &str) -> Vec<String> {
        self.within(&format!("a's message with {text:?}"), || {
            let failed = self
                .from("system")
                .into_iter()
                .find(|m| m.contains("a failed"));
            assert!(failed.is_none(), "{failed:?}\n{}", self.explain());
            let said = self.from("a");
            said.iter().any(|m| m.contains(text)).then_some(said)
        })
    }

    /// [`wait_for`] that explains the instance when it times out.
    fn within<T>(&self, what: &str, check: impl FnMut() -> Option<T>) -> T {
        cli_support::poll_within(PATIENCE, check).unwrap_or_else(|| {
            panic!(
                "timed out waiting for {what} (within {PATIENCE:?})\n{}",
                self.explain()
            )
        })
    }

    /// The model requests received so far.
    fn requests(&self) -> Vec<Recorded> {
        self.log.lock().unwrap().clone()
    }

    /// The requests whose body holds `needle`.
    fn requests_with(&self, needle: &str) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|q| q.raw.contains(needle))
            .collect()
    }

    /// Everything for a failure message: the channel, the requests, the
    /// instance's and the agent's logs.
    fn explain(&self) -> String {
        self.dump();
        let requests: Vec<String> = self
            .requests()
            .iter()
            .map(|r| {
                let prompt = llm_server::latest_prompt(r);
                let tail: String = r.raw.chars().rev().take(600).collect();
                format!(
                    "{} {}\n  latest prompt: …{}\n  end: …{}",
                    r.method,
                    r.path,
                    prompt
                        .chars()
                        .skip(prompt.chars().count().saturating_sub(800))
                        .collect::<String>(),
                    tail.chars().rev().collect::<String>()
                )
            })
            .collect();
        let home = self.w.dir.join(".workflow").join(INSTANCE);
        let mut logs = std::fs::read_to_string(home.join("awtui.log")).unwrap_or_default();
        let outputs = std::fs::read_dir(home.join("logs/output"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path());
        for path in glob_logs(&home.join("agents")).into_iter().chain(outputs) {
            logs.push_str(&format!(
                "== {}\n{}\n",
                path.display(),
                std::fs::read_to_string(&path).unwrap_or_default()
            ));
        }
        format!(
            "channel: {:#}\nrequests:\n{}\nlogs:\n{logs}",
            json!(self.w.channel(INSTANCE)),
            requests.join("\n")
        )
    }

    /// Keeps the model requests for a look after a failure (the test's
    /// folder is removed): `target/tmp/acp_real/<test>.json`.
    fn dump(&self) {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("acp_real");
        let _ = std::fs::create_dir_all(&dir);
        let name = std::thread::current().name().unwrap_or("run").to_string();
        let all: Vec<Value> = self
            .requests()
            .iter()
            .map(|r| json!({"method": r.method, "path": r.path, "headers": r.headers, "body": r.body}))
            .collect();
        let _ = std::fs::write(
            dir.join(format!("{name}.json")),
            format!("{:#}", json!(all)),
        );
    }

    /// Stops the instance and waits for it to end.
    fn stop(&self) {
        let r = self.w.run(&["stop", &format!("@{INSTANCE}")]);
        assert_eq!(r.code, 0, "stop: {}\n{}", r.stderr, self.explain());
    }
}

/// The processes whose command line is exactly `argv`.
fn processes(argv: &[&str]) -> Vec<u32> {
    let want: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            (cmdline == want && cli_support::alive(pid)).then_some(pid)
        })
        .collect()
}

/// A number of seconds no other test sleeps for (its `sleep` is found by
/// its command line).
fn unique_seconds() -> String {
    (100_000 + std::process::id() % 100_000).to_string()
}

/// The person allows one shell call and denies the next with a reason:
/// the allowed command ran, the denied one did not, both decisions are in
/// the journal; the person's next message makes the agent post to the
/// channel through awtui's MCP server, as itself, and the model request
/// of that turn carries the reason of the denial.
fn allow_then_deny_with_a_reason(agent: &Agent, test: &str) {
    if isolated(module_path!(), test) {
        return;
    }
    let kickoff = format!(
        "@a {} {}",
        agent.shell("echo yes > allowed.txt"),
        agent.shell("echo no > denied.txt")
    );
    let live = Live::start(agent, &kickoff);
    live.answer("allowed.txt", None);
    live.answer("denied.txt", Some("REASON-7: not in this repository"));
    // Sent at once: it wakes `a` when this turn ends (opencode and Codex
    // end it at the denial, with no answer).
    live.send(r#"next [[call: channel_send {"message": "posted by a over ACP"}]]"#);
    let said = live.posted("posted by a over ACP");
    let why = live.explain();
    live.stop();
    assert!(
        said.iter().any(|m| m == "posted by a over ACP"),
        "a never posted through awtui's tool\n{why}"
    );
    assert_eq!(
        std::fs::read_to_string(live.w.dir.join("allowed.txt"))
            .ok()
            .as_deref(),
        Some("yes\n"),
        "{why}"
    );
    assert!(
        !live.w.dir.join("denied.txt").exists(),
        "the denied command ran\n{why}"
    );
    let second_turn = live.requests_with("posted by a over ACP");
    assert!(
        second_turn
            .iter()
            .any(|q| q.raw.contains("REASON-7: not in this repository")),
        "the denial's reason never reached the model\n{why}"
    );
    let decided = cli_support::approval_decisions(&live.w.state);
    assert_eq!(decided.len(), 2, "{decided:?}\n{why}");
    no_secret_in(&live.w, &live.requests(), &why);
}

/// How the person stops a turn and lets the agent go on.
#[derive(Clone, Copy, PartialEq)]
enum Stop {
    /// `awtui stop a@t --turn`: `session/cancel`; the same process and
    /// session take the next message.
    Turn,
    /// `awtui stop a@t`, then the instance stopped and started again (a
    /// stopped agent is woken only after a restart): a new process loads
    /// the saved session (`session/load`).
    AgentThenRestart,
}

/// The person stops the agent's turn while its approved command (a long
/// `sleep`) runs: the command ends, its follow-up never runs. Then the
/// person asks on, and the conversation goes on where it was: the model
/// request of that turn carries the first turn's call.
fn cancel_a_long_call_then_resume(agent: &Agent, how: Stop, test: &str) {
    if isolated(module_path!(), test) {
        return;
    }
    let seconds = unique_seconds();
    // A script, not `sleep` in the command: Claude Code refuses `sleep N;
    // …` chains by itself, Gemini CLI mangles `sh -c '…'`.
    let command = "sh long.sh; echo late > late.txt";
    // Before a restart, the agent acknowledges the message first (as a
    // model may): the stopped turn's message is then not handed over
    // again, and the next prompt holds only the person's question.
    let ack = match how {
        Stop::Turn => "",
        Stop::AgentThenRestart => r#"[[call: inbox_ack {"until": "2999-01-01T00:00:00Z"}]] "#,
    };
    let kickoff = format!("@a {ack}{}", agent.shell(command));
    let mut live = Live::start_with(
        agent,
        &kickoff,
        &[("long.sh", &format!("sleep {seconds}\n"))],
    );
    live.answer("long.sh", None);
    live.within("the approved sleep to run", || {
        (!processes(&["sleep", &seconds]).is_empty()).then_some(())
    });
    let target = format!("a@{INSTANCE}");
    let mut stop = vec!["stop", target.as_str()];
    if how == Stop::Turn {
        stop.push("--turn");
    }
    let r = live.w.run(&stop);
    assert_eq!(r.code, 0, "{stop:?}: {}\n{}", r.stderr, live.explain());
    live.within("the stopped turn's sleep to end", || {
        processes(&["sleep", &seconds]).is_empty().then_some(())
    });
    if how == Stop::AgentThenRestart {
        live.stop();
        live.restart();
    }
    live.send("REMEMBER-MARKER: what did you run before?");
    let said = live.posted(FINAL);
    let why = live.explain();
    live.stop();
    assert!(
        !live.w.dir.join("late.txt").exists(),
        "the stopped command went on\n{said:?}\n{why}"
    );
    let resumed = live.requests_with("REMEMBER-MARKER");
    assert!(
        resumed.iter().any(|q| llm_server::earlier_calls(q)
            .iter()
            .any(|c| c.contains("long.sh"))),
        "the resumed turn's model request lacks the first turn's call\n{why}"
    );
}

#[test]
fn gemini_acp_allows_and_denies() {
    allow_then_deny_with_a_reason(&GEMINI_ACP, "gemini_acp_allows_and_denies");
}

#[test]
fn opencode_acp_allows_and_denies() {
    allow_then_deny_with_a_reason(&OPENCODE_ACP, "opencode_acp_allows_and_denies");
}

#[test]
fn claude_acp_allows_and_denies() {
    allow_then_deny_with_a_reason(&CLAUDE_ACP, "claude_acp_allows_and_denies");
}

/// Fails with the core as it is: codex-acp ends a turn whose call was
/// denied with `stopReason: cancelled`, which awtui counts as a failed
/// turn (src/agents/backend/acp/mod.rs, the `"cancelled"` arm): the agent
/// is failed, the person's next message does not wake it and the reason
/// never reaches the model.
#[test]
fn codex_acp_allows_and_denies() {
    allow_then_deny_with_a_reason(&CODEX_ACP, "codex_acp_allows_and_denies");
}

/// Fails with the core as it is: a stopped agent is woken only by a
/// restart, which ends its live process (the engine's `Restart`, or a new
/// instance), and gemini 0.61.0 cannot `session/load`: the model gets a
/// new conversation and awtui's note that the earlier one is lost
/// (`awtui stop --turn` keeps it: `gemini_acp_cancel_a_turn_then_resume`).
#[test]
#[ignore = "a stopped gemini agent comes back in a new conversation: gemini cannot session/load"]
fn gemini_acp_stop_restart_then_resume() {
    cancel_a_long_call_then_resume(
        &GEMINI_ACP,
        Stop::AgentThenRestart,
        "gemini_acp_stop_restart_then_resume",
    );
}

#[test]
fn opencode_acp_stop_restart_then_resume() {
    cancel_a_long_call_then_resume(
        &OPENCODE_ACP,
        Stop::AgentThenRestart,
        "opencode_acp_stop_restart_then_resume",
    );
}

#[test]
fn claude_acp_stop_restart_then_resume() {
    cancel_a_long_call_then_resume(
        &CLAUDE_ACP,
        Stop::AgentThenRestart,
        "claude_acp_stop_restart_then_resume",
    );
}

#[test]
fn codex_acp_stop_restart_then_resume() {
    cancel_a_long_call_then_resume(
        &CODEX_ACP,
        Stop::AgentThenRestart,
        "codex_acp_stop_restart_then_resume",
    );
}

/// Fails at times with the core as it is (see opencode's).
#[test]
fn gemini_acp_cancel_a_turn_then_resume() {
    cancel_a_long_call_then_resume(
        &GEMINI_ACP,
        Stop::Turn,
        "gemini_acp_cancel_a_turn_then_resume",
    );
}

/// Fails with the core as it is: after `stop --turn` the runner starts
/// the next turn at once, and awtui sends its `session/prompt` before
/// opencode answered the cancelled one; when that answer comes, the old
/// turn's `finish_turn` takes the new turn's sink, and the new turn's
/// answer ("Turn finished.") is dropped: nothing is posted.
#[test]
fn opencode_acp_cancel_a_turn_then_resume() {
    cancel_a_long_call_then_resume(
        &OPENCODE_ACP,
        Stop::Turn,
        "opencode_acp_cancel_a_turn_then_resume",
    );
}

/// Fails at times with the core as it is (see opencode's).
#[test]
fn claude_acp_cancel_a_turn_then_resume() {
    cancel_a_long_call_then_resume(
        &CLAUDE_ACP,
        Stop::Turn,
        "claude_acp_cancel_a_turn_then_resume",
    );
}

/// Fails at times with the core as it is (see opencode's).
#[test]
fn codex_acp_cancel_a_turn_then_resume() {
    cancel_a_long_call_then_resume(
        &CODEX_ACP,
        Stop::Turn,
        "codex_acp_cancel_a_turn_then_resume",
    );
}

/// Two ACP agents of different vendors in one team, driven through
/// awtui's task tools: Claude Code (`lead`, over its adapter) plans a task
/// for opencode (`tester`, native ACP), which registers, claims and
/// completes it. The task ends completed once, by its worker.
#[test]
fn a_team_of_two_acp_vendors_plans_claims_and_finishes() {
    if isolated(
        module_path!(),
        "a_team_of_two_acp_vendors_plans_claims_and_finishes",
    ) {
        return;
    }
    CLAUDE_ACP.installed();
    OPENCODE_ACP.installed();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let w = World::new();
    let workflow = format!(
        "name: team\nagents:\n  lead:\n    backend: claude\n    protocol: acp\n    model: {}\n\
         \x20   timeout: 240s\n\
         \x20 tester:\n    backend: opencode\n    protocol: acp\n    model: {}\n    timeout: 240s\n\
         limits:\n  retries: 0\nkickoff: \"@lead plan the work for the team\"\n",
        CLAUDE.model, OPENCODE.model
    );
    let step = |tool: &str, args: Value| (tool.to_string(), args);
    let lead = vec![
        step("workflow_create", json!({"name": "ship"})),
        step(
            "workflow_set_plan",
            json!({"id": "{wf}", "plan": {"summary": "one part", "tasks": [
                {"name": "beta-part", "assignee": "tester"}]}}),
        ),
    ];
    let tester = vec![
        step(
            "agent_register",
            json!({"name": "tester", "runtime": "opencode"}),
        ),
        step(
            "task_claim",
            json!({"task_id": "{task:beta-part}", "agent_id": "{ag}"}),
        ),
        step(
            "task_update_status",
            json!({"id": "{task:beta-part}", "status": "completed",
                   "outcome": "beta-part by tester"}),
        ),
    ];
    let servers = vec![
        (
            &CLAUDE,
            rt.block_on(llm_server::start_steps_any(lead, "Planned.")),
        ),
        (
            &OPENCODE,
            rt.block_on(llm_server::start_steps_any(tester, "Beta done.")),
        ),
    ];
    let r = run_with_wrappers(
        &w,
        &workflow,
        servers,
        &wrap_clis_and_adapters(&w),
        &mut || {},
    );
    let why = r.explain();
    assert_eq!(r.report["success"], true, "{why}");
    let done: Vec<(String, String, String)> = r.report["tasks"]["tasks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let s = |k: &str| t[k].as_str().unwrap_or("").to_string();
            (s("name"), s("status"), s("outcome"))
        })
        .collect();
    assert_eq!(
        done,
        [(
            "beta-part".to_string(),
            "completed".to_string(),
            "beta-part by tester".to_string()
        )],
        "{why}"
    );
    for (agent, answer) in [("lead", "Planned."), ("tester", "Beta done.")] {
        let answers = r.from(agent).iter().filter(|m| m.contains(answer)).count();
        assert_eq!(answers, 1, "{agent} answered {answers} times\n{why}");
    }
    let protocols: Vec<Value> = r.report["agents"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| json!([a["name"], a["protocol"]]))
        .collect();
    assert_eq!(
        protocols,
        [json!(["lead", "acp"]), json!(["tester", "acp"])],
        "not every agent ran over ACP\n{why}"
    );
}

/// A model API that refuses every request: the ACP agent's turn fails,
/// the run fails, and the reason shown is the API's own message.
fn a_refusing_model_fails_the_turn_and_says_why(agent: &Agent, test: &str) {
    if isolated(module_path!(), test) {
        return;
    }
    agent.installed();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let w = World::new();
    let workflow = agent.workflow("@a go");
    let script = llm_server::ModelScript {
        tool: "channel_send".into(),
        arguments: json!({"message": "never"}),
        final_text: "never".into(),
        refuse: Some("quota exhausted for this fake key".into()),
    };
    let server = rt.block_on(llm_server::start_model(script));
    let r = run_with_wrappers(
        &w,
        &workflow,
        vec![(agent.cli, server)],
        &wrap_clis_and_adapters(&w),
        &mut || {},
    );
    let why = r.explain();
    assert_eq!(r.report["success"], false, "{why}");
    assert!(
        r.report
            .to_string()
            .contains("quota exhausted for this fake key"),
        "the failure does not say why\n{why}"
    );
}

#[test]
fn gemini_acp_says_why_the_model_refused() {
    a_refusing_model_fails_the_turn_and_says_why(
        &GEMINI_ACP,
        "gemini_acp_says_why_the_model_refused",
    );
}

#[test]
fn opencode_acp_says_why_the_model_refused() {
    a_refusing_model_fails_the_turn_and_says_why(
        &OPENCODE_ACP,
        "opencode_acp_says_why_the_model_refused",
    );
}

#[test]
fn claude_acp_says_why_the_model_refused() {
    a_refusing_model_fails_the_turn_and_says_why(
        &CLAUDE_ACP,
        "claude_acp_says_why_the_model_refused",
    );
}

/// Fails with the core as it is: codex-acp reports the model API's error
/// as the agent's text (`{"error":{"message":…}}`, after its "Model
/// metadata … not found" warning) and ends the prompt normally; awtui
/// posts that text as `a`'s answer and the run succeeds.
#[test]
#[ignore = "codex-acp's model API error comes as the agent's answer text; awtui counts the turn a success"]
fn codex_acp_says_why_the_model_refused() {
    a_refusing_model_fails_the_turn_and_says_why(
        &CODEX_ACP,
        "codex_acp_says_why_the_model_refused",
    );
}
