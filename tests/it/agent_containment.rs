//! Agent processes are contained and their output is never cut short, on
//! real processes (`command` agents written in sh): a turn ends when the
//! agent exits, even if a background child holds its stdout; whatever the
//! agent started, `setsid` or not, ends with the turn, with a stop, with a
//! timeout, and after a `kill -9` of the instance; stdout that is not UTF-8
//! or is huge arrives whole (lossily, capped, the rest archived).

use crate::cli_support;
use crate::fixture;

use std::path::{Path, PathBuf};
use std::time::Duration;

use awtui::agents::backend::capped::OUTPUT_CAP;
use awtui::agents::backend::process::spawn;
use awtui::agents::backend::{BackendEvent, RunningTurn, TurnRequest, invocation, parse};
use awtui::agents::runtime::Local;
use awtui::engine::{Command, Engine, EngineEvent};
use awtui::instance::process::process_alive;
use awtui::workflow::BackendKind;

use cli_support::{eventually, within};
use fixture::{collect, next_event, start_engine};

/// Kills, at the end of a test, the processes whose pids the agents wrote
/// into `*.pid` files, if they are still this test's (their environment
/// names the test's folder), so a failing test leaves no `sleep 1000`.
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes an executable sh script.
    fn script(&self, name: &str, body: &str) {
        use std::os::unix::fs::PermissionsExt;
        let path = self.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\nset -eu\n{body}")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// Waits for an agent to write a pid into `name`.
    async fn pid(&self, name: &str) -> u32 {
        let path = self.path().join(name);
        eventually(&format!("a pid in {name}"), || {
            let pid = std::fs::read_to_string(&path)
                .ok()
                .and_then(|t| t.trim().parse().ok());
            async move { pid }
        })
        .await
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let mine = self.path().display().to_string();
        for entry in std::fs::read_dir(self.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if entry.path().extension().is_none_or(|e| e != "pid") {
                continue;
            }
            let Some(pid) = std::fs::read_to_string(entry.path())
                .ok()
                .and_then(|t| t.trim().parse::<i32>().ok())
            else {
                continue;
            };
            let ours = std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| String::from_utf8_lossy(&env).contains(&mine));
            if ours && let Some(p) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
            }
        }
    }
}

/// A `command` agent running `./agent.sh` in the sandbox.
fn request(dir: &Path) -> TurnRequest {
    TurnRequest {
        agent: "coder".into(),
        instance: "t".into(),
        backend: BackendKind::Command,
        model: None,
        system_prompt: String::new(),
        prompt: "@coder go".into(),
        session_id: None,
        mcp_url: "http://127.0.0.1:9/mcp".into(),
        token: "t".into(),
        tools: vec![],
        command: Some(vec!["./agent.sh".into()]),
        env: vec![],
        workdir: dir.to_path_buf(),
        state_dir: dir.join("state"),
        private_dir: std::env::temp_dir(),
        user_config: None,
        user_config_dir: None,
        permissions: awtui::workflow::Permissions::WorkspaceWrite,
        approval_timeout: std::time::Duration::from_secs(600),
        args: vec![],
        mcp_servers: vec![],
        keep_user_mcp: false,
        user_mcp_servers: vec![],
        base_url: None,
        api_key_env: None,
    }
}

fn start_turn(dir: &Path, timeout: Option<Duration>) -> RunningTurn {
    let req = request(dir);
    spawn(
        invocation(&req).unwrap(),
        parse::parser_for(req.backend),
        &req.state_dir.join("stderr.log"),
        timeout,
        "",
        &Local,
    )
    .unwrap()
}

/// Starts a child in its own session (`setsid`) that writes its pid to
/// `name` and sleeps; waits until the pid is written.
fn setsid_sleeper(name: &str) -> String {
    format!(
        "setsid sh -c 'echo $$ > {name}.tmp && mv {name}.tmp {name} && exec sleep 1000' </dev/null >/dev/null 2>&1 &\n\
         while [ ! -s {name} ]; do sleep 0.02; done\n"
    )
}

#[tokio::test]
async fn a_background_child_holding_stdout_does_not_hold_the_turn() {
    let s = Sandbox::new();
    // `sleep` inherits stdout: the pipe stays open after the agent exits.
    s.script(
        "agent.sh",
        "cat >/dev/null\necho the answer\nsleep 1000 &\necho $! > bg.pid\n",
    );
    let (_, outcome) = collect(start_turn(s.path(), None)).await;
    assert!(outcome.success, "{outcome:?}");
    assert_eq!(outcome.answer.as_deref(), Some("the answer"));
    assert!(
        !process_alive(s.pid("bg.pid").await),
        "the background child ended with the turn"
    );
}

#[tokio::test]
async fn children_that_called_setsid_end_with_the_turn() {
    let s = Sandbox::new();
    s.script(
        "agent.sh",
        &format!(
            "cat >/dev/null\n{}echo done\n",
            setsid_sleeper("escaped.pid")
        ),
    );
    let (_, outcome) = collect(start_turn(s.path(), None)).await;
    assert_eq!(outcome.answer.as_deref(), Some("done"), "{outcome:?}");
    assert!(
        !process_alive(s.pid("escaped.pid").await),
        "a child in its own session ended with the turn"
    );
}

#[tokio::test]
async fn a_stop_ends_children_that_called_setsid() {
    let s = Sandbox::new();
    s.script(
        "agent.sh",
        &format!(
            "cat >/dev/null\n{}echo working\nsleep 1000\n",
            setsid_sleeper("escaped.pid")
        ),
    );
    let mut turn = start_turn(s.path(), None);
    let escaped = s.pid("escaped.pid").await;
    assert!(process_alive(escaped));
    turn.stop();
    let (_, outcome) = collect(turn).await;
    assert_eq!(outcome.error.as_deref(), Some("stopped"));
    assert!(!process_alive(escaped), "the setsid'ed child was ended");
}

/// Decision: a turn that timed out failed (it is retried; its messages stay
/// unread), but what the agent printed is kept in the outcome, and the
/// engine archives it (see `an_engine_timeout_archives_what_was_printed`).
#[tokio::test]
async fn with_a_timeout_what_was_printed_is_kept() {
    let s = Sandbox::new();
    s.script(
        "agent.sh",
        "cat >/dev/null\necho the answer so far\necho started > started.pid\nsleep 1000\n",
    );
    let (_, outcome) = collect(start_turn(s.path(), Some(Duration::from_secs(2)))).await;
    assert!(!outcome.success);
    assert_eq!(outcome.error.as_deref(), Some("timed out after 2s"));
    assert_eq!(outcome.answer.as_deref(), Some("the answer so far"));
}

#[tokio::test]
async fn output_that_is_not_utf8_arrives_whole() {
    let s = Sandbox::new();
    // After the bad line, far more than a pipe holds: a reader that gave up
    // there would kill the agent with SIGPIPE.
    s.script(
        "agent.sh",
        "cat >/dev/null\nprintf 'first\\n\\377\\376 bad\\n'\n\
         head -c 300000 /dev/zero | tr '\\0' x\nprintf '\\nlast\\n'\n",
    );
    let (events, outcome) = collect(start_turn(s.path(), None)).await;
    assert!(outcome.success, "not killed by SIGPIPE: {outcome:?}");
    let answer = outcome.answer.unwrap();
    let lines: Vec<&str> = answer.lines().collect();
    assert_eq!(lines.len(), 4, "every line arrived");
    assert_eq!(lines[0], "first");
    assert_eq!(lines[1], "\u{fffd}\u{fffd} bad");
    assert_eq!(lines[2], "x".repeat(300_000));
    assert_eq!(lines[3], "last");
    let texts = events
        .iter()
        .filter(|e| matches!(e, BackendEvent::Text { .. }))
        .count();
    assert_eq!(texts, 4);
}

#[tokio::test]
async fn a_huge_answer_is_capped_and_the_whole_output_kept() {
    let s = Sandbox::new();
    const TOTAL: usize = 10 * 1024 * 1024;
    // 10 MiB in lines of 100 bytes, then one line of 6 MiB.
    s.script(
        "agent.sh",
        &format!(
            "cat >/dev/null\nyes 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy' | head -c {TOTAL}\n\
             head -c 6291456 /dev/zero | tr '\\0' z\necho\n"
        ),
    );
    let (_, outcome) = collect(start_turn(s.path(), None)).await;
    assert!(outcome.success, "{outcome:?}");
    let answer = outcome.answer.unwrap();
    assert!(
        answer.len() <= OUTPUT_CAP && answer.len() > OUTPUT_CAP - 200,
        "{}",
        answer.len()
    );
    assert!(outcome.truncated);
    let full = outcome.full_output.expect("the whole output is kept");
    assert_eq!(
        std::fs::metadata(&full).unwrap().len() as usize,
        TOTAL + 6 * 1024 * 1024 + 1
    );
}

/// A Claude-style agent (stream-json): a huge tool result line is skipped
/// without touching the answer; a final result too big to read whole is
/// marked cut and its raw output kept, never silently dropped.
#[tokio::test]
async fn a_cut_json_line_marks_the_answer_only_when_it_cost_the_answer() {
    let s = Sandbox::new();
    let huge = "head -c 5242880 /dev/zero | tr '\\0' q";
    s.script(
        "claude",
        &format!(
            "cat >/dev/null\n\
             printf '{{\"type\":\"user\",\"message\":{{\"content\":\"'; {huge}; printf '\"}}}}\\n'\n\
             if [ \"$MODE\" = big ]; then printf '{{\"type\":\"result\",\"result\":\"'; {huge}; printf '\"}}\\n'\n\
             else echo '{{\"type\":\"result\",\"result\":\"the answer\"}}'; fi\n"
        ),
    );
    for mode in ["small", "big"] {
        let mut req = request(s.path());
        req.backend = BackendKind::Claude;
        let mut inv = invocation(&req).unwrap();
        inv.program = s.path().join("claude").display().to_string();
        inv.env.push(("MODE".into(), mode.into()));
        let turn = spawn(
            inv,
            parse::parser_for(req.backend),
            &req.state_dir.join("stderr.log"),
            None,
            "",
            &Local,
        )
        .unwrap();
        let (_, outcome) = collect(turn).await;
        assert!(outcome.success, "{mode}: {outcome:?}");
        if mode == "small" {
            assert_eq!(outcome.answer.as_deref(), Some("the answer"));
            assert!(!outcome.truncated && outcome.full_output.is_none());
        } else {
            assert_eq!(outcome.answer, None);
            assert!(outcome.truncated);
            let full = outcome.full_output.expect("the whole output is kept");
            assert!(std::fs::metadata(full).unwrap().len() > 2 * 5242880);
        }
    }
}

// ---- the engine ----

async fn notice(
    events: &mut tokio::sync::broadcast::Receiver<EngineEvent>,
    needle: &str,
) -> String {
    next_event(events, &format!("a notice with {needle:?}"), |e| match e {
        EngineEvent::Notice { text } if text.contains(needle) => Some(text),
        _ => None,
    })
    .await
}

async fn shutdown(engine: Engine) {
    engine.send(Command::Shutdown);
    within("the engine to shut down", engine.wait()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_timeout_archives_what_was_printed() {
    let s = Sandbox::new();
    s.script(
        "agent.sh",
        "cat >/dev/null\necho the answer so far\nsleep 1000\n",
    );
    let (engine, mut events) = start_engine(
        s.path(),
        "w.yaml",
        "agents:\n  coder:\n    command: ./agent.sh\n    timeout: 2s\nlimits:\n  retries: 0\nkickoff: \"@coder go\"\n",
    )
    .await;
    let text = notice(&mut events, "what it printed is kept in").await;
    let path = text.rsplit(' ').next().unwrap();
    assert!(path.starts_with("logs/output/"), "{text}");
    let archived = s.path().join(".workflow/default").join(path);
    assert_eq!(
        std::fs::read_to_string(&archived).unwrap(),
        "the answer so far"
    );
    shutdown(engine).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_stop_ends_children_that_called_setsid() {
    let s = Sandbox::new();
    s.script(
        "agent.sh",
        &format!(
            "cat >/dev/null\n{}sleep 1000\n",
            setsid_sleeper("escaped.pid")
        ),
    );
    let (engine, _events) = start_engine(
        s.path(),
        "w.yaml",
        "agents:\n  coder:\n    command: ./agent.sh\nkickoff: \"@coder go\"\n",
    )
    .await;
    let escaped = s.pid("escaped.pid").await;
    engine.send(Command::Stop {
        agent: "coder".into(),
    });
    eventually("the setsid'ed child to end with stop", || async {
        (!process_alive(escaped)).then_some(())
    })
    .await;
    shutdown(engine).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_answer_becomes_a_capped_message_and_the_archive_has_it_all() {
    let s = Sandbox::new();
    const TOTAL: usize = 10 * 1024 * 1024;
    s.script(
        "agent.sh",
        &format!("cat >/dev/null\nhead -c {TOTAL} /dev/zero | tr '\\0' a\n"),
    );
    let (engine, _events) = start_engine(
        s.path(),
        "w.yaml",
        "agents:\n  big:\n    command: ./agent.sh\nkickoff: \"@big go\"\n",
    )
    .await;
    let message = eventually("the answer posted", || async {
        engine.context().read(|c| {
            c.read(None, None)
                .unwrap()
                .into_iter()
                .find(|e| e.from == "big")
                .map(|m| m.message)
        })
    })
    .await;
    let (body, note) = message
        .split_once("\n\n[output truncated at 4 MiB; the full output is in ")
        .unwrap_or_else(|| panic!("no note at {}", message.len()));
    assert_eq!(body.len(), OUTPUT_CAP);
    let path = note.strip_suffix(']').unwrap();
    let archived: PathBuf = s.path().join(".workflow/default").join(path);
    assert_eq!(std::fs::metadata(&archived).unwrap().len() as usize, TOTAL);
    shutdown(engine).await;
}

// ---- an instance killed with kill -9 ----

#[test]
fn a_restart_after_kill_9_ends_children_that_called_setsid() {
    use cli_support::{World, alive, wait_for};
    let mut w = World::new();
    w.script(
        "agent.sh",
        &format!(
            "#!/bin/sh\nset -eu\ncat >/dev/null\n{}sleep 1000\n",
            setsid_sleeper("escaped.pid")
        ),
    );
    std::fs::write(
        w.dir.join("w.yaml"),
        "agents:\n  coder:\n    command: ./agent.sh\nkickoff: \"@coder go\"\n",
    )
    .unwrap();
    let first = w.start_background("w.yaml", "default");
    let pid_file = w.dir.join("escaped.pid");
    let escaped: u32 = wait_for("the setsid'ed child", || {
        std::fs::read_to_string(&pid_file).ok()?.trim().parse().ok()
    });
    w.adopt(escaped);
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(first as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    wait_for("the killed instance to die", || {
        (!alive(first)).then_some(())
    });
    assert!(alive(escaped), "kill -9 leaves the child behind");
    std::fs::remove_file(&pid_file).unwrap();
    w.start_background("w.yaml", "default");
    assert!(
        !alive(escaped),
        "the restart ended the earlier run's setsid'ed child before going on"
    );
    // The restart delivers the kickoff again; stopping the instance ends
    // that run's setsid'ed child too.
    let again: u32 = wait_for("the second setsid'ed child", || {
        std::fs::read_to_string(&pid_file).ok()?.trim().parse().ok()
    });
    w.adopt(again);
    let r = w.run(&["stop", "@default"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    wait_for("the second child to end", || (!alive(again)).then_some(()));
}
