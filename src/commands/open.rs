//! `awtui <file>` / `awtui open <file>`: the control room. Everything that
//! can go wrong before the screen opens (bad config, bad workflow, a
//! backend that cannot run, setup failing) is printed as plain text, with
//! the same messages as `awtui validate` and `awtui run`.
//!
//! With its context on disk the instance runs in a background host from
//! the start (the one already running for it is found, or one is started
//! as `awtui start --background` starts it, from the workflow loaded and
//! checked here once: [`super::startup`]) and the screen attaches to it
//! like `awtui attach`. `q` stops the instance (agents stopped cleanly, its
//! context left on disk, so the same command resumes it); while an agent
//! is in a turn it asks first: stop, or detach: the screen goes, the host
//! goes on, and a turn in progress is never interrupted (`/detach` does
//! that at any time). SIGTERM and SIGHUP stop it, as `q` then `y` does. A memory
//! context cannot outlive the screen: its engine runs in this process.
//! Logs go to `awtui.log` in the instance folder (a temporary file for a
//! memory context), never to the terminal.

use crate::errln;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use super::exit;
use super::startup::{self, Preflight, Prepared, WorkflowArgs};
use crate::agents::runner::RunMode;
use crate::engine::Link;
use crate::tui::{self, QuitAction, TuiOptions};

/// Opens the workflow as its instance (default name: the workflow's own,
/// see [`crate::instance::owner`]); returns the exit code.
pub fn run(args: &WorkflowArgs) -> u8 {
    let config = match tui::Config::load() {
        Ok(c) => c,
        Err(e) => {
            errln!("awtui: bad config: {e}");
            return exit::INVALID;
        }
    };
    let prepared = match startup::prepare(args, Preflight::Each) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let file = args.file.as_path();
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        errln!(
            "awtui: the control room needs a terminal; use `awtui run {}` to run headless",
            file.display()
        );
        return exit::INVALID;
    }
    let dir = prepared.context_dir();
    let log = log_path(dir.as_deref(), &prepared.instance);
    if let Err(e) = super::logging::to_file(&log) {
        errln!("warning: cannot write the log {}: {e}", log.display());
    }
    tracing::info!(
        "opening {} as instance {}",
        file.display(),
        prepared.instance
    );
    match dir {
        Some(home) => hosted(&prepared, &home, config),
        None => in_process(prepared, &log, config),
    }
}

/// The control room on an engine in this process (a memory context, which
/// cannot outlive the screen); returns the exit code.
fn in_process(prepared: Prepared, log: &Path, config: tui::Config) -> u8 {
    // One engine per instance, reachable from other terminals (list, send,
    // stop, attach) like any started instance.
    let claim = match startup::claim(&prepared) {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::tally::log_tally();
    let Some(runtime) = super::runtime(true) else {
        return exit::FAILED;
    };
    runtime.block_on(async move {
        let (engine, first) = match startup::launch(prepared, RunMode::Start).await {
            Ok(started) => started,
            Err(code) => return code,
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
        // Whatever was printed is out before the screen is taken.
        crate::output::flush();
        let result = tui::run(
            link,
            TuiOptions {
                config,
                // Nothing on disk to resume from: it cannot outlive the
                // screen.
                on_quit: QuitAction::Shutdown,
                neighbours: Some(super::child::neighbours()),
                ..TuiOptions::default()
            },
        )
        .await;
        // Whatever happened on screen, the agents stop cleanly.
        engine.send(crate::engine::Command::Shutdown);
        let outcome = engine.wait().await;
        if let Some(served) = served {
            served.close().await;
        }
        tracing::info!("instance ended: {outcome:?}");
        // The terminal may be gone (SIGHUP): printed through the writer.
        match result {
            Ok(_) => exit::OK,
            Err(e) => {
                tracing::error!("{e}");
                errln!("awtui: {e} (log: {})", log.display());
                exit::FAILED
            }
        }
    })
}

/// The control room attached to the instance's background host, started
/// when none runs (see the module doc); returns the exit code.
fn hosted(prepared: &Prepared, home: &Path, config: tui::Config) -> u8 {
    use crate::instance::{process, registry};
    let instance = &prepared.instance;
    let running = registry::read_home(home).filter(|i| process::process_alive(i.pid));
    let info = match running {
        Some(info) => info,
        None => match super::start::spawn_background(prepared, false) {
            Ok(started) => started.info,
            Err(code) => return code,
        },
    };
    let Some(runtime) = super::runtime(true) else {
        return exit::FAILED;
    };
    let options = TuiOptions {
        config,
        on_quit: QuitAction::Ask,
        neighbours: Some(super::child::neighbours()),
        ..TuiOptions::default()
    };
    let ended = match runtime.block_on(super::attach::attached(&info, options)) {
        Ok(ended) => ended,
        Err(code) => return code,
    };
    match ended {
        Ok(tui::TuiExit::Detached | tui::TuiExit::Home { .. }) => {
            crate::outln!(
                "detached; @{instance} keeps running (`awtui attach {instance}` reopens it, \
                 `awtui stop @{instance}` stops it)"
            );
            exit::OK
        }
        Ok(_) => {
            wait_host_exit(&info);
            crate::outln!(
                "awtui: instance '{instance}' stopped; its context is in {} \
                 (open the same workflow again to resume it)",
                home.display()
            );
            exit::OK
        }
        Err(e) => {
            // The screen failed (the terminal went away mid-write): the
            // instance stops, as on a hang-up, its context kept.
            tracing::error!("{e}; stopping the instance");
            if registry::read_home(home).is_some_and(|i| i.pid == info.pid)
                && let Some(pid) = rustix::process::Pid::from_raw(info.pid as i32)
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            }
            wait_host_exit(&info);
            errln!("awtui: {e}");
            exit::FAILED
        }
    }
}

/// Waits (a while) for the host of `info` to exit, so what is said next is
/// true and the same command can reopen the instance at once.
fn wait_host_exit(info: &crate::instance::registry::InstanceInfo) {
    let deadline = std::time::Instant::now() + HOST_EXIT_WAIT;
    while crate::instance::process::process_alive(info.pid) && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// How long a stopped instance's host may take to exit after its engine.
const HOST_EXIT_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

fn log_path(dir: Option<&Path>, instance: &str) -> PathBuf {
    match dir {
        Some(d) => d.join("awtui.log"),
        None => std::env::temp_dir().join(format!("awtui-{instance}.log")),
    }
}
