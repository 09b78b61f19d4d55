//! `awtui <file>` / `awtui open <file>`: the control room over an engine in
//! this process. Everything that can go wrong before the screen opens (bad
//! config, bad workflow, a backend that cannot run, setup failing) is
//! printed as plain text, with the same messages as `awtui validate` and
//! `awtui run`. Quitting shuts the instance down (agents stopped cleanly)
//! and leaves its context on disk, so the same command resumes it.
//! Logs go to `awtui.log` in the instance folder (a temporary file for a
//! memory context), never to the terminal.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::exit;
use super::validate::load_reporting;
use crate::agents::runner::RunMode;
use crate::engine::{Engine, EngineError, EngineOptions, Link};
use crate::tui::{self, QuitAction, TuiOptions};
use crate::workflow::setup::{self, SetupError, is_valid_instance_name};

/// Opens `file` as instance `instance`; returns the exit code.
pub fn run(file: &Path, instance: &str) -> u8 {
    if !is_valid_instance_name(instance) {
        eprintln!("{}", SetupError::InstanceName(instance.into()));
        return exit::INVALID;
    }
    let config = match tui::Config::load() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("awtui: bad config: {e}");
            return exit::INVALID;
        }
    };
    let Some(loaded) = load_reporting(file) else {
        return exit::INVALID;
    };
    let problems = crate::engine::preflight(&loaded.workflow);
    for p in &problems {
        eprintln!("{}: error: {p}", file.display());
    }
    if !problems.is_empty() {
        return exit::INVALID;
    }
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        eprintln!(
            "awtui: the control room needs a terminal; use `awtui run {}` to run headless",
            file.display()
        );
        return exit::INVALID;
    }
    let dir = setup::context_dir(&loaded.workflow, instance)
        .ok()
        .flatten();
    let log = log_path(dir.as_deref(), instance);
    init_logging(&log);
    tracing::info!("opening {} as instance {instance}", file.display());

    // One engine per instance, reachable from other terminals (list, send,
    // stop, attach) like any started instance.
    let claim = match crate::instance::claim(&loaded.workflow, instance) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return super::host::claim_failure(&e);
        }
    };
    let Some(runtime) = super::runtime(true) else {
        return exit::FAILED;
    };
    let options = EngineOptions {
        instance: instance.to_string(),
        mode: RunMode::Start,
        watch_documents: true,
    };
    runtime.block_on(async move {
        let (engine, first) = match Engine::start(loaded.workflow, options).await {
            Ok(started) => started,
            Err(e) => {
                eprintln!("{e}");
                return match e {
                    EngineError::Setup(SetupError::Failed { .. }) => exit::FAILED,
                    _ => exit::INVALID,
                };
            }
        };
        let served = match crate::instance::serve(&engine, claim, RunMode::Start).await {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::warn!("not reachable from other terminals: {e}");
                None
            }
        };
        // The first receiver has every event since the start (notices of
        // recovered files, say), which a fresh subscription would miss.
        let link = Link {
            commands: engine.commands(),
            events: first,
        };
        let result = tui::run(
            link,
            TuiOptions {
                config,
                on_quit: QuitAction::Shutdown,
                ..TuiOptions::default()
            },
        )
        .await;
        // Whatever happened on screen, the agents stop cleanly. (An
        // in-process engine cannot outlive the screen: detaching needs
        // `awtui start` + `attach`.)
        engine.send(crate::engine::Command::Shutdown);
        let outcome = engine.wait().await;
        if let Some(served) = served {
            served.close().await;
        }
        tracing::info!("instance ended: {outcome:?}");
        // The terminal may be gone (SIGHUP): `println!` would panic.
        use std::io::Write;
        match result {
            Ok(_) => {
                if let Some(d) = &dir {
                    let _ = writeln!(
                        std::io::stdout(),
                        "awtui: instance '{instance}' stopped; its context is in {} \
                         (open the same workflow again to resume it)",
                        d.display()
                    );
                }
                exit::OK
            }
            Err(e) => {
                tracing::error!("{e}");
                let _ = writeln!(std::io::stderr(), "awtui: {e} (log: {})", log.display());
                exit::FAILED
            }
        }
    })
}

fn log_path(dir: Option<&Path>, instance: &str) -> PathBuf {
    match dir {
        Some(d) => d.join("awtui.log"),
        None => std::env::temp_dir().join(format!("awtui-{instance}.log")),
    }
}

/// Sends tracing output to `path` (appending); silently does without logs
/// when the file cannot be opened.
fn init_logging(path: &Path) {
    // The instance folder may not exist yet: it is made 0700 here as when
    // the instance claims it. The log is the user's alone and never written
    // through a link (it may sit in the shared temp folder).
    if let Some(parent) = path.parent() {
        let _ = crate::fsutil::create_dir_if_missing(parent);
    }
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
    else {
        return;
    };
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    // awtui's own news at info, the libraries' (rmcp is chatty) at warn.
    let filter = tracing_subscriber::filter::Targets::new()
        .with_target("awtui", tracing::Level::INFO)
        .with_default(tracing::Level::WARN);
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(Mutex::new(file))
                .with_ansi(false),
        )
        .with(filter)
        .try_init();
}
