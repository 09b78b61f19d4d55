//! How long a wake takes to reach the agent's first update: a warm ACP
//! session (the agent's process and session alive since its last turn, a
//! wake is one `session/prompt`) against a cold headless start of the same
//! CLI (one process per turn, its conversation resumed), offline, against
//! the project's fake model API (tests/fakes/llm_server.rs), which answers
//! at once: what is measured is the CLI and awtui, not a model.
//!
//! Both ways run through awtui's own start paths with a local runtime:
//! `acp::start` with the vendor's `acp_invocation` (as the engine does for
//! an agent driven over ACP) and `Backend::start` (headless). For each
//! CLI it prints the median, over a handful of turns, of the time from the
//! start call to the first update that is the agent's own (text, a tool
//! call, usage: not the session id, which awtui reports by itself) and to
//! the turn's end; and the ACP agent's first turn (process start,
//! `initialize`, `session/new`, the prompt) for comparison.
//!
//! Needs the real CLIs: `scripts/install-clis.sh` (Gemini CLI and opencode
//! in `$AWTUI_CLI_CACHE` or `~/.cache/awtui-clis`). To be sure nothing
//! leaves the machine, run it in a loopback-only network namespace:
//!
//!   unshare -rn sh -c 'ip link set lo up && cargo bench --offline --bench acp_wake'
//!
//! Optionally `-- --wakes N` (warm ACP wakes, default 5), `-- --cold N`
//! (headless turns after the first, default 3: each costs seconds) and
//! `-- --only gemini|opencode`. The whole bench takes 35 s on a quiet
//! 2-core machine (70 s on a busy one).

// The fixture allows its own dead code (the bench uses one part of it).
#[path = "../tests/fakes/llm_server.rs"]
mod llm_server;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use awtui::agents::backend::api::NoTools;
use awtui::agents::backend::{
    BackendEvent, RunningTurn, TurnOutcome, TurnRequest, TurnUpdate, acp, backend_for,
};
use awtui::agents::runtime::Local;
use awtui::workflow::{BackendKind, Permissions};
use serde_json::{Value, json};

/// What the fake model answers, and what each turn must end with.
const ANSWER: &str = "pong";
/// No turn may take longer (a CLI that hangs fails the bench).
const TURN_LIMIT: Duration = Duration::from_secs(120);

/// One agent CLI and how to point it at the fake model.
struct Cli {
    kind: BackendKind,
    program: &'static str,
    model: &'static str,
    /// The user's own configuration (files under `root`, variables), as
    /// a user pointing the CLI at `url` would write it.
    setup: fn(root: &Path, url: &str) -> Vec<(String, String)>,
}

const GEMINI: Cli = Cli {
    kind: BackendKind::Gemini,
    program: "gemini",
    model: "gemini-2.5-flash",
    setup: gemini_setup,
};

const OPENCODE: Cli = Cli {
    kind: BackendKind::Opencode,
    program: "opencode",
    model: "fake/fake-model",
    setup: opencode_setup,
};

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `~/.gemini/settings.json` choosing the API key (else it asks for a
/// gateway and exits 41), no updates or telemetry; the fake's URL.
fn gemini_setup(root: &Path, url: &str) -> Vec<(String, String)> {
    let dir = root.join("home/.gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
    });
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    pairs(&[
        ("GOOGLE_GEMINI_BASE_URL", url),
        ("GEMINI_API_KEY", "gemini-fake"),
    ])
}

/// An `opencode.json` with an OpenAI-compatible provider at the fake.
fn opencode_setup(root: &Path, url: &str) -> Vec<(String, String)> {
    let config = root.join("opencode.json");
    let text = json!({
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": false,
        "share": "disabled",
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "fake",
            "options": {"baseURL": format!("{url}/v1"), "apiKey": "fake-key"},
            "models": {"fake-model": {"name": "fake-model", "tool_call": true}}
        }}
    });
    std::fs::write(&config, text.to_string()).unwrap();
    pairs(&[
        ("OPENCODE_CONFIG", &config.display().to_string()),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
        ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
        ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
    ])
}

/// Where `scripts/install-clis.sh` puts the CLIs.
fn cache() -> PathBuf {
    std::env::var_os("AWTUI_CLI_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").expect("HOME")).join(".cache/awtui-clis")
        })
}

/// The cached CLIs' folder, checked to hold `program`.
fn bin_dir(program: &str) -> PathBuf {
    let bin = cache().join("node_modules/.bin");
    assert!(
        bin.join(program).exists(),
        "{program} is not in {}: install the CLIs with scripts/install-clis.sh",
        bin.display()
    );
    bin
}

/// One turn's request for `cli` in `root` (a fresh HOME there), as the
/// engine builds it: the user's own config read from the environment.
fn request(cli: &Cli, root: &Path, env: &[(String, String)], prompt: &str) -> TurnRequest {
    let backend = backend_for(cli.kind);
    let workdir = root.join("work");
    std::fs::create_dir_all(&workdir).unwrap();
    TurnRequest {
        agent: "bench".into(),
        instance: "bench".into(),
        backend: cli.kind,
        model: Some(cli.model.into()),
        system_prompt: "Answer in one word.".into(),
        prompt: prompt.into(),
        session_id: None,
        mcp_url: String::new(),
        token: String::new(),
        tools: vec![],
        command: None,
        env: env.to_vec(),
        workdir,
        state_dir: root.join("state"),
        private_dir: root.join("private"),
        user_config: backend.user_config(env),
        user_config_dir: backend.user_config_dir(env),
        permissions: Permissions::WorkspaceWrite,
        approval_timeout: Duration::from_secs(600),
        args: vec![],
        mcp_servers: vec![],
        keep_user_mcp: false,
        user_mcp_servers: vec![],
        base_url: None,
        api_key_env: None,
    }
}

/// What one turn took.
struct Timing {
    /// To the agent's first update.
    first: Duration,
    /// To the turn's outcome.
    done: Duration,
}

/// Reads `turn` to its end; times from `started`.
async fn time_turn(mut turn: RunningTurn, started: Instant, what: &str) -> (Timing, TurnOutcome) {
    let mut first = None;
    loop {
        let update = tokio::time::timeout(TURN_LIMIT, turn.updates.recv())
            .await
            .unwrap_or_else(|_| panic!("{what}: no end within {TURN_LIMIT:?}"))
            .unwrap_or_else(|| panic!("{what}: the turn ended without an outcome"));
        match update {
            TurnUpdate::Event(BackendEvent::Session { .. }) => {}
            TurnUpdate::Event(_) => {
                first.get_or_insert_with(|| started.elapsed());
            }
            TurnUpdate::Done(outcome) => {
                let done = started.elapsed();
                assert!(
                    outcome.success && outcome.answer.as_deref().unwrap_or("").contains(ANSWER),
                    "{what}: {:?} (answer {:?})",
                    outcome.error,
                    outcome.answer
                );
                let timing = Timing {
                    first: first.unwrap_or(done),
                    done,
                };
                return (timing, outcome);
            }
        }
    }
}

/// One turn over ACP: the agent's live process, or a new one.
async fn acp_turn(req: TurnRequest, what: &str) -> (Timing, TurnOutcome) {
    let backend = backend_for(req.backend);
    let program = backend.acp_program().expect("an ACP program");
    let started = Instant::now();
    let inv = backend.acp_invocation(&req).expect("an ACP invocation");
    let turn = acp::start(req, inv, program, None, &Local).expect("acp::start");
    time_turn(turn, started, what).await
}

/// One headless turn: a new process.
async fn headless_turn(req: TurnRequest, what: &str) -> (Timing, TurnOutcome) {
    let started = Instant::now();
    let turn = backend_for(req.backend)
        .start(req, Arc::new(NoTools), &Local)
        .expect("Backend::start");
    time_turn(turn, started, what).await
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1e3)
}

/// Medians of the first update and of the turn's end.
fn medians(t: &[Timing]) -> (Duration, Duration) {
    (
        median(t.iter().map(|t| t.first).collect()),
        median(t.iter().map(|t| t.done).collect()),
    )
}

/// A fresh folder with `cli` set up against the fake at `url`; the
/// environment of its turns.
fn world(cli: &Cli, url: &str) -> (tempfile::TempDir, Vec<(String, String)>) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let path = format!(
        "{}:{}",
        bin_dir(cli.program).display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut env = pairs(&[
        ("HOME", &home.display().to_string()),
        ("PATH", &path),
        ("NO_COLOR", "1"),
    ]);
    env.extend((cli.setup)(dir.path(), url));
    (dir, env)
}

/// How many turns to time.
struct Counts {
    /// Warm ACP wakes, after the agent's first turn.
    wakes: usize,
    /// Headless turns that resume a conversation, after the first.
    cold: usize,
}

/// `counts.wakes` warm ACP wakes (after a first, cold one) and
/// `counts.cold` headless turns (after a first), each way in its own fresh
/// folder; prints the medians.
async fn bench(cli: &Cli, url: &str, counts: &Counts) {
    let name = cli.program;
    let (acp_dir, env) = world(cli, url);
    let prompt = |i: usize| format!("Say {ANSWER}. (wake {i})");
    let (cold, _) = acp_turn(
        request(cli, acp_dir.path(), &env, &prompt(0)),
        &format!("{name} acp first turn"),
    )
    .await;
    let mut warm = Vec::new();
    for i in 1..=counts.wakes {
        let (t, _) = acp_turn(
            request(cli, acp_dir.path(), &env, &prompt(i)),
            &format!("{name} acp wake {i}"),
        )
        .await;
        warm.push(t);
    }
    acp::end_all_under(acp_dir.path()).await;

    let (headless_dir, env) = world(cli, url);
    let mut headless = Vec::new();
    let mut session = None;
    // The first makes the conversation the others resume, as every later
    // wake of a headless agent does.
    for i in 0..=counts.cold {
        let mut req = request(cli, headless_dir.path(), &env, &prompt(i));
        req.session_id = session.take();
        let (t, outcome) = headless_turn(req, &format!("{name} headless turn {i}")).await;
        session = outcome.session_id;
        headless.push(t);
    }
    let headless_first = headless.remove(0);
    let (warm_first, warm_done) = medians(&warm);
    let (cold_first, cold_done) = medians(&headless);
    println!(
        "acp_wake {name}: a wake's first update, median: warm ACP {} ({} wakes) vs cold headless {} \
         ({} turns); turn end {} vs {}",
        ms(warm_first),
        counts.wakes,
        ms(cold_first),
        counts.cold,
        ms(warm_done),
        ms(cold_done),
    );
    println!(
        "acp_wake {name}: first turns: ACP (process, initialize, session/new, prompt) first update {}, \
         end {}; headless (nothing to resume) first update {}, end {}",
        ms(cold.first),
        ms(cold.done),
        ms(headless_first.first),
        ms(headless_first.done),
    );
}

/// The value after `flag` on the command line.
fn arg(flag: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    let i = args.iter().position(|a| a == flag)?;
    args.get(i + 1).cloned()
}

fn main() {
    let count = |flag: &str, default: usize| {
        arg(flag).map_or(default, |n| {
            n.parse()
                .unwrap_or_else(|_| panic!("{flag} takes a number"))
        })
    };
    let counts = Counts {
        wakes: count("--wakes", 5).max(1),
        cold: count("--cold", 3).max(1),
    };
    let only = arg("--only");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (url, _log) = llm_server::start_model(llm_server::ModelScript {
            tool: "no_such_tool".into(),
            arguments: Value::Null,
            final_text: ANSWER.into(),
            refuse: None,
        })
        .await;
        for cli in [&GEMINI, &OPENCODE] {
            if only.as_deref().is_none_or(|o| o == cli.program) {
                bench(cli, &url, &counts).await;
            }
        }
    });
}
