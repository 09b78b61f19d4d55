//! Helpers shared by the tests that run the real agent CLIs
//! (tests/real_clis.rs, tests/acp_real.rs): where the pinned CLIs are
//! (`scripts/install-clis.sh`), a loopback-only network namespace per test,
//! the environment that points each CLI at the project's fake model API,
//! and one `awtui run` with its report, channel and model requests.
//!
//! A test crate using it declares `mod cli_support;` and
//! `#[path = "fakes/llm_server.rs"] mod llm_server;` at its root.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::cli_support::World;
use crate::llm_server::{self, Log, ModelScript, Recorded};
use serde_json::{Value, json};

/// Set inside the namespace, so the re-run test does the work.
pub const INSIDE: &str = "AWTUI_REAL_CLI_NETNS";

/// How long one `awtui run` of a real CLI may take before the test fails.
pub const RUN_LIMIT: Duration = Duration::from_secs(300);

/// The cache folder of the pinned CLIs.
pub fn cache() -> PathBuf {
    std::env::var_os("AWTUI_CLI_CACHE")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/awtui-clis")
        })
}

/// The folder holding the CLIs' executables; fails when `program` is not
/// there.
pub fn bin_dir(program: &str) -> PathBuf {
    let dir = cache().join("node_modules/.bin");
    assert!(
        dir.join(program).exists(),
        "{program} is not installed in {}: run scripts/install-clis.sh (or set AWTUI_CLI_CACHE)",
        cache().display()
    );
    dir
}

/// Re-runs this test (`test` of the caller's `module_path!()`) inside a
/// loopback-only network namespace when the system can make one; `true`
/// when it did (the caller is done).
pub fn isolated(module: &str, test: &str) -> bool {
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
        .arg(crate::test_path(module, test))
        .args(["--exact", "--nocapture", "--test-threads=1"])
        // An ignored test run on purpose (`-- --ignored`) runs there too.
        .args(
            std::env::args()
                .any(|a| a == "--ignored" || a == "--include-ignored")
                .then_some("--include-ignored"),
        )
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

/// One real CLI: its backend, program and a model name.
pub struct Cli {
    pub backend: &'static str,
    pub program: &'static str,
    pub model: &'static str,
}

pub const CLAUDE: Cli = Cli {
    backend: "claude",
    program: "claude",
    model: "claude-sonnet-4-5",
};
pub const CODEX: Cli = Cli {
    backend: "codex",
    program: "codex",
    model: "gpt-5.1-codex",
};
pub const GEMINI: Cli = Cli {
    backend: "gemini",
    program: "gemini",
    model: "gemini-2.5-flash",
};
pub const OPENCODE: Cli = Cli {
    backend: "opencode",
    program: "opencode",
    model: "fake/fake-model",
};

/// What every CLI gets: a fresh home under `root`, the cached CLIs (behind
/// the token-noting wrappers) on PATH, no telemetry or update checks.
pub fn common_env(root: &Path, wrappers: &Path) -> Vec<(String, String)> {
    let home = root.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let path = format!(
        "{}:{}:{}",
        wrappers.display(),
        cache().join("node_modules/.bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    pairs(&[
        ("HOME", &home.display().to_string()),
        ("PATH", &path),
        ("DISABLE_TELEMETRY", "1"),
        ("DISABLE_AUTOUPDATER", "1"),
        ("DISABLE_ERROR_REPORTING", "1"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ("IS_SANDBOX", "1"),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
        ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
        ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
        ("NO_COLOR", "1"),
    ])
}

pub fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The variables and files that point `cli` at the fake model at `url`
/// (the user's own configuration, as a user would write it).
pub fn cli_env(root: &Path, cli: &Cli, url: &str) -> Vec<(String, String)> {
    match cli.backend {
        "claude" => pairs(&[
            ("ANTHROPIC_BASE_URL", url),
            ("ANTHROPIC_API_KEY", "sk-ant-fake"),
        ]),
        "codex" => {
            let codex_home = root.join("codex-home");
            std::fs::create_dir_all(&codex_home).unwrap();
            // Tables a test put there first (its MCP servers) are kept.
            // The model is named too: codex-acp takes no model from awtui.
            let user = std::fs::read_to_string(codex_home.join("config.toml")).unwrap_or_default();
            std::fs::write(
                codex_home.join("config.toml"),
                format!(
                    "model = \"{model}\"\nmodel_provider = \"fake\"\ncheck_for_update_on_startup = false\n\
                     [model_providers.fake]\nname = \"fake\"\nbase_url = \"{url}/v1\"\n\
                     env_key = \"FAKE_OPENAI_KEY\"\nwire_api = \"responses\"\n\
                     [analytics]\nenabled = false\n[feedback]\nenabled = false\n\
                     [features]\nplugins = false\n{user}",
                    model = cli.model
                ),
            )
            .unwrap();
            pairs(&[
                ("CODEX_HOME", &codex_home.display().to_string()),
                ("FAKE_OPENAI_KEY", "sk-fake"),
            ])
        }
        "gemini" => {
            // The user's own settings: awtui merges its server into them.
            let dir = root.join("home/.gemini");
            std::fs::create_dir_all(&dir).unwrap();
            // Settings a test put there first (its MCP servers) are kept.
            let mut settings: Value = std::fs::read_to_string(dir.join("settings.json"))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_else(|| json!({}));
            for (k, v) in [
                (
                    "security",
                    json!({"auth": {"selectedType": "gemini-api-key"}}),
                ),
                (
                    "general",
                    json!({"disableAutoUpdate": true, "disableUpdateNag": true}),
                ),
                ("privacy", json!({"usageStatisticsEnabled": false})),
                ("telemetry", json!({"enabled": false})),
            ] {
                settings[k] = v;
            }
            std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
            pairs(&[
                ("GOOGLE_GEMINI_BASE_URL", url),
                ("GEMINI_API_KEY", "gemini-fake"),
            ])
        }
        "opencode" => {
            // The user's own provider file: awtui must not replace it.
            let config = root.join("opencode.json");
            std::fs::write(
                &config,
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
            pairs(&[("OPENCODE_CONFIG", &config.display().to_string())])
        }
        other => panic!("no real CLI for {other}"),
    }
}

/// A finished `awtui run`: its JSON report, the channel, the requests the
/// model received and the agents' stderr logs.
pub struct Run {
    pub report: Value,
    pub channel: Vec<Value>,
    pub requests: Vec<Recorded>,
    pub logs: String,
}

impl Run {
    /// Messages posted by `agent`.
    pub fn from(&self, agent: &str) -> Vec<String> {
        self.channel
            .iter()
            .filter(|m| m["from"] == agent)
            .map(|m| m["message"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// Everything for a failure message.
    pub fn explain(&self) -> String {
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
pub fn run(
    w: &World,
    rt: &tokio::runtime::Runtime,
    workflow: &str,
    models: &[(&Cli, ModelScript)],
) -> Run {
    let servers = models
        .iter()
        .map(|(cli, script)| (*cli, rt.block_on(llm_server::start_model(script.clone()))))
        .collect();
    run_with(w, workflow, servers, &mut || {})
}

/// [`run`] against fake models already started (`(url, log)` per CLI),
/// calling `during` every 50 ms while the run goes on.
pub fn run_with(
    w: &World,
    workflow: &str,
    servers: Vec<(&Cli, (String, Log))>,
    during: &mut dyn FnMut(),
) -> Run {
    run_with_wrappers(w, workflow, servers, &wrap_clis(w), during)
}

/// [`run_with`] with the programs of `wrappers` first on PATH.
pub fn run_with_wrappers(
    w: &World,
    workflow: &str,
    servers: Vec<(&Cli, (String, Log))>,
    wrappers: &Path,
    during: &mut dyn FnMut(),
) -> Run {
    let root = w.tmp.path();
    let mut env = common_env(root, wrappers);
    let mut logs: Vec<Log> = Vec::new();
    for (cli, (url, log)) in servers {
        env.extend(cli_env(root, cli, &url));
        logs.push(log);
    }
    std::fs::write(w.dir.join("wf.yaml"), workflow).unwrap();
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
        during();
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
        .flat_map(|l| l.lock().unwrap().clone())
        .collect();
    // Kept for a look after a failure (the test's folder is removed).
    let dump = Path::new(env!("CARGO_TARGET_TMPDIR")).join(env!("CARGO_CRATE_NAME"));
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
pub fn wrap_clis(w: &World) -> PathBuf {
    let bin = cache().join("node_modules/.bin");
    let programs = ["claude", "codex", "gemini", "opencode"].map(|p| (p, bin.join(p)));
    wrap(w, &programs)
}

/// The ACP adapters installed beside the CLIs (`$CACHE/bin`, run with the
/// node 22 the script installed); fails naming the install command when
/// one is missing.
pub const ADAPTERS: [&str; 2] = ["claude-agent-acp", "codex-acp"];

/// The cached executable of an ACP adapter; fails when it is not there.
pub fn adapter(program: &str) -> PathBuf {
    let path = cache().join("bin").join(program);
    assert!(
        path.exists(),
        "{program} is not installed in {}: run scripts/install-clis.sh (or set AWTUI_CLI_CACHE)",
        cache().display()
    );
    path
}

/// [`wrap_clis`] plus the two ACP adapters in the same folder: with it on
/// PATH, `backend: claude` and `backend: codex` run over ACP.
pub fn wrap_clis_and_adapters(w: &World) -> PathBuf {
    wrap_clis(w);
    wrap(w, &ADAPTERS.map(|p| (p, adapter(p))))
}

/// Writes the token-noting wrappers of `programs` (name, real path) into
/// the world's `wrappers` folder.
fn wrap(w: &World, programs: &[(&str, PathBuf)]) -> PathBuf {
    let dir = w.tmp.path().join("wrappers");
    std::fs::create_dir_all(&dir).unwrap();
    let secrets = w.tmp.path().join("secrets.txt");
    for (program, real) in programs {
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

pub fn glob_logs(dir: &Path) -> Vec<PathBuf> {
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
pub fn posts(message: &str) -> ModelScript {
    ModelScript {
        tool: "channel_send".into(),
        arguments: json!({ "message": message }),
        final_text: "All done here.".into(),
        refuse: None,
    }
}

/// Fails when any secret awtui made for this run (every participant's
/// token, as the wrapped CLIs saw them) appears in a request to the model.
pub fn no_secret_reached_the_model(w: &World, r: &Run) {
    no_secret_in(w, &r.requests, &r.explain());
}

/// [`no_secret_reached_the_model`] for `requests`, `why` explaining a
/// failure.
pub fn no_secret_in(w: &World, requests: &[Recorded], why: &str) {
    let seen = std::fs::read_to_string(w.tmp.path().join("secrets.txt")).unwrap_or_default();
    let secrets: std::collections::BTreeSet<&str> =
        seen.split_whitespace().filter(|s| s.len() >= 32).collect();
    assert!(!secrets.is_empty(), "the wrapped CLI saw no token\n{why}");
    for q in requests {
        let headers: String = q
            .headers
            .iter()
            .map(|(k, v)| format!("{k}: {v}\n"))
            .collect();
        for s in &secrets {
            assert!(
                !q.raw.contains(s) && !headers.contains(s),
                "a token reached the model in {} {}\n{why}",
                q.method,
                q.path,
            );
        }
    }
}
