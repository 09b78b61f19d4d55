//! The real agent CLIs (Claude Code, Codex, Gemini CLI, opencode) inside a
//! real awtui workflow, against the project's fake model API, offline.
//!
//! The CLIs are not installed by the tests: `scripts/install-clis.sh` puts
//! pinned versions in `$AWTUI_CLI_CACHE` (default `~/.cache/awtui-clis`),
//! and `.ci/run` calls it first. A missing CLI fails its test with the
//! command to run; nothing is skipped.
//!
//! Each test runs in a loopback-only network namespace (`unshare -rn`, the
//! test binary re-running itself there) when the system allows it, so no
//! request can leave the machine; otherwise the CLIs are only pointed at
//! 127.0.0.1.

mod cli_support;
#[path = "fakes/llm_server.rs"]
mod llm_server;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cli_support::World;
use llm_server::{Log, ModelScript, Recorded};
use serde_json::{Value, json};

/// Set inside the namespace, so the re-run test does the work.
const INSIDE: &str = "AWTUI_REAL_CLI_NETNS";

/// How long one `awtui run` of a real CLI may take before the test fails.
const RUN_LIMIT: Duration = Duration::from_secs(300);

/// The cache folder of the pinned CLIs.
fn cache() -> PathBuf {
    std::env::var_os("AWTUI_CLI_CACHE")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/awtui-clis")
        })
}

/// The folder holding the CLIs' executables; fails when `program` is not
/// there.
fn bin_dir(program: &str) -> PathBuf {
    let dir = cache().join("node_modules/.bin");
    assert!(
        dir.join(program).exists(),
        "{program} is not installed in {}: run scripts/install-clis.sh (or set AWTUI_CLI_CACHE)",
        cache().display()
    );
    dir
}

/// Re-runs this test inside a loopback-only network namespace when the
/// system can make one; `true` when it did (the caller is done).
fn isolated(test: &str) -> bool {
    if std::env::var_os(INSIDE).is_some() {
        return false;
    }
    let can = Command::new("unshare")
        .args(["-rn", "sh", "-c", "ip link set lo up"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !can {
        eprintln!("no network namespace here: the CLIs are pointed at 127.0.0.1 only");
        return false;
    }
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("unshare")
        .args(["-rn", "sh", "-c", "ip link set lo up && exec \"$0\" \"$@\""])
        .arg(&exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(INSIDE, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{test} failed in its network namespace:\n{stdout}\n{stderr}"
    );
    true
}

/// One real CLI: its backend, model and how to point it at the fake.
struct Cli {
    backend: &'static str,
    program: &'static str,
    model: &'static str,
}

const CLAUDE: Cli = Cli {
    backend: "claude",
    program: "claude",
    model: "claude-sonnet-4-5",
};
const CODEX: Cli = Cli {
    backend: "codex",
    program: "codex",
    model: "gpt-5.1-codex",
};
const GEMINI: Cli = Cli {
    backend: "gemini",
    program: "gemini",
    model: "gemini-2.5-flash",
};
const OPENCODE: Cli = Cli {
    backend: "opencode",
    program: "opencode",
    model: "fake/fake-model",
};

/// The environment that points every CLI at the fake model at `url` with
/// a fresh home under `root`; writes the config files they need.
fn cli_env(root: &Path, url: &str) -> Vec<(String, String)> {
    let home = root.join("home");
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    std::fs::write(
        home.join(".gemini/settings.json"),
        json!({"security": {"auth": {"selectedType": "gemini-api-key"}},
               "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
               "privacy": {"usageStatisticsEnabled": false},
               "telemetry": {"enabled": false}})
        .to_string(),
    )
    .unwrap();
    let codex_home = root.join("codex-home");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model_provider = \"fake\"\ncheck_for_update_on_startup = false\n\
             [model_providers.fake]\nname = \"fake\"\nbase_url = \"{url}/v1\"\n\
             env_key = \"FAKE_OPENAI_KEY\"\nwire_api = \"responses\"\n\
             [analytics]\nenabled = false\n[feedback]\nenabled = false\n\
             [features]\nplugins = false\n"
        ),
    )
    .unwrap();
    let opencode = root.join("opencode.json");
    std::fs::write(
        &opencode,
        json!({
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": false,
            "share": "disabled",
            "provider": {"fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "fake",
                "options": {"baseURL": format!("{url}/v1"), "apiKey": "fake-key"},
                "models": {"fake-model": {"name": "fake-model", "tool_call": true}}
            }}
        })
        .to_string(),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        cache().join("node_modules/.bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    [
        ("HOME", home.display().to_string()),
        ("PATH", path),
        ("ANTHROPIC_BASE_URL", url.to_string()),
        ("ANTHROPIC_API_KEY", "sk-ant-fake".into()),
        ("DISABLE_TELEMETRY", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
        ("DISABLE_ERROR_REPORTING", "1".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("IS_SANDBOX", "1".into()),
        ("CODEX_HOME", codex_home.display().to_string()),
        ("FAKE_OPENAI_KEY", "sk-fake".into()),
        ("GOOGLE_GEMINI_BASE_URL", url.to_string()),
        ("GEMINI_API_KEY", "gemini-fake".into()),
        ("OPENCODE_CONFIG", opencode.display().to_string()),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
        ("OPENCODE_DISABLE_MODELS_FETCH", "1".into()),
        ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1".into()),
        ("NO_COLOR", "1".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// A finished `awtui run`: its JSON report, the channel, the requests the
/// model received and the agents' stderr logs.
struct Run {
    report: Value,
    channel: Vec<Value>,
    requests: Vec<Recorded>,
    logs: String,
}

impl Run {
    /// Messages posted by `agent`.
    fn from(&self, agent: &str) -> Vec<String> {
        self.channel
            .iter()
            .filter(|m| m["from"] == agent)
            .map(|m| m["message"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// Everything for a failure message.
    fn explain(&self) -> String {
        let requests: Vec<String> = self
            .requests
            .iter()
            .map(|r| {
                format!(
                    "{} {} {}",
                    r.method,
                    r.path,
                    r.raw.chars().take(3000).collect::<String>()
                )
            })
            .collect();
        format!(
            "report: {:#}\nchannel: {:#}\nrequests:\n{}\nlogs:\n{}",
            self.report,
            json!(self.channel),
            requests.join("\n"),
            self.logs
        )
    }
}

/// Runs `workflow` with `awtui run --json`; each agent `<name>: <cli>`
/// talks to its own scripted model.
fn run(
    w: &World,
    rt: &tokio::runtime::Runtime,
    workflow: &str,
    models: &[(&str, ModelScript)],
) -> Run {
    let mut logs: Vec<(String, Log)> = Vec::new();
    let mut env: Vec<(String, String)> = Vec::new();
    for (agent, script) in models {
        let (url, log) = rt.block_on(llm_server::start_model(script.clone()));
        env = cli_env(&w.tmp.path().join(agent), &url);
        logs.push((agent.to_string(), log));
    }
    std::fs::write(w.dir.join("wf.yaml"), workflow).unwrap();
    let wrappers = wrap_clis(w);
    for (k, v) in env.iter_mut() {
        if k == "PATH" {
            *v = format!("{}:{v}", wrappers.display());
        }
    }
    let mut cmd = w.cmd(&["run", "wf.yaml", "--instance", "t", "--json"]);
    cmd.envs(env)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    let pid = child.id();
    let started = Instant::now();
    let waiter = std::thread::spawn(move || child.wait_with_output());
    while !waiter.is_finished() {
        if started.elapsed() > RUN_LIMIT {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            panic!("awtui run took longer than {RUN_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = waiter.join().unwrap().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report = serde_json::from_str(&stdout).unwrap_or_else(
        |_| json!({"stdout": stdout, "stderr": String::from_utf8_lossy(&out.stderr)}),
    );
    let mut text = String::new();
    for path in glob_logs(&w.dir.join(".workflow/t/agents")) {
        text.push_str(&format!(
            "== {}\n{}\n",
            path.display(),
            std::fs::read_to_string(&path).unwrap_or_default()
        ));
    }
    text.push_str(&format!(
        "== awtui stderr\n{}",
        String::from_utf8_lossy(&out.stderr)
    ));
    let requests: Vec<Recorded> = logs
        .iter()
        .flat_map(|(_, l)| l.lock().unwrap().clone())
        .collect();
    // Kept for a look after a failure (the test's folder is removed).
    let dump = Path::new(env!("CARGO_TARGET_TMPDIR")).join("real_clis");
    let _ = std::fs::create_dir_all(&dump);
    let name = std::thread::current().name().unwrap_or("run").to_string();
    let all: Vec<Value> = requests
        .iter()
        .map(|r| json!({"method": r.method, "path": r.path, "headers": r.headers, "body": r.body}))
        .collect();
    let _ = std::fs::write(
        dump.join(format!("{name}.json")),
        format!("{:#}", json!(all)),
    );
    let _ = std::fs::write(dump.join(format!("{name}.log")), &text);
    Run {
        report,
        channel: w.channel("t"),
        requests,
        logs: text,
    }
}

/// A folder of wrappers, one per CLI, that note every token of the run
/// (the agent's own and the token files awtui wrote) in `secrets.txt`,
/// then run the real CLI.
fn wrap_clis(w: &World) -> PathBuf {
    let dir = w.tmp.path().join("wrappers");
    std::fs::create_dir_all(&dir).unwrap();
    let secrets = w.tmp.path().join("secrets.txt");
    for program in ["claude", "codex", "gemini", "opencode"] {
        let real = cache().join("node_modules/.bin").join(program);
        let script = format!(
            "#!/bin/sh\n{{ echo \"$AWTUI_TOKEN\"; find \"{state}\" \"{work}\" -path '*/tokens/*' -type f -exec sh -c 'cat \"$1\"; echo' sh {{}} \\; 2>/dev/null; }} >> \"{secrets}\"\nexec \"{real}\" \"$@\"\n",
            state = w.state.display(),
            work = w.dir.display(),
            secrets = secrets.display(),
            real = real.display(),
        );
        let path = dir.join(program);
        std::fs::write(&path, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

fn glob_logs(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for agent in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        for f in std::fs::read_dir(agent.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if f.file_name().to_string_lossy().ends_with(".log") {
                out.push(f.path());
            }
        }
    }
    out
}

/// A model that posts `message` to the channel, then answers `final_text`.
fn posts(message: &str) -> ModelScript {
    ModelScript {
        tool: "channel_send".into(),
        arguments: json!({ "message": message }),
        final_text: "All done here.".into(),
    }
}

/// Fails when any secret awtui made for this run (every participant's
/// token, as the wrapped CLIs saw them) appears in a request to the model.
fn no_secret_reached_the_model(w: &World, r: &Run) {
    let seen = std::fs::read_to_string(w.tmp.path().join("secrets.txt")).unwrap_or_default();
    let secrets: std::collections::BTreeSet<&str> =
        seen.split_whitespace().filter(|s| s.len() >= 32).collect();
    assert!(
        !secrets.is_empty(),
        "the wrapped CLI saw no token\n{}",
        r.explain()
    );
    for q in &r.requests {
        let headers: String = q
            .headers
            .iter()
            .map(|(k, v)| format!("{k}: {v}\n"))
            .collect();
        for s in &secrets {
            assert!(
                !q.raw.contains(s) && !headers.contains(s),
                "a token reached the model in {} {}\n{}",
                q.method,
                q.path,
                r.explain()
            );
        }
    }
}

/// One agent on a real CLI is woken by a mention, calls awtui's
/// `channel_send` as itself, and its reply lands once (the final answer is
/// not posted again). No request to the model carries a token.
fn one_turn(cli: &Cli, test: &str) {
    if isolated(test) {
        return;
    }
    bin_dir(cli.program);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let w = World::new();
    let workflow = format!(
        "name: real\nagents:\n  a:\n    backend: {}\n    model: {}\n    timeout: 240s\n\
         limits:\n  retries: 0\nkickoff: \"@a please greet @user\"\n",
        cli.backend, cli.model
    );
    let hello = format!("@user hello from {} via awtui", cli.backend);
    let r = run(&w, &rt, &workflow, &[("a", posts(&hello))]);
    let why = r.explain();
    assert_eq!(r.report["success"], true, "{why}");
    assert_eq!(r.from("a"), vec![hello.clone()], "{why}");
    let model_calls: Vec<&Recorded> = r.requests.iter().filter(|q| !q.body.is_null()).collect();
    assert!(
        model_calls.iter().any(|q| q.raw.contains("channel_send")),
        "the model was never offered awtui's tools\n{why}"
    );
    no_secret_reached_the_model(&w, &r);
}

#[test]
fn claude_code_turn() {
    one_turn(&CLAUDE, "claude_code_turn");
}

#[test]
fn codex_turn() {
    one_turn(&CODEX, "codex_turn");
}

#[test]
fn gemini_cli_turn() {
    one_turn(&GEMINI, "gemini_cli_turn");
}

#[test]
fn opencode_turn() {
    one_turn(&OPENCODE, "opencode_turn");
}
