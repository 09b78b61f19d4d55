//! `awtui <file>` / `awtui open <file>`: the control room over an engine in
//! this process. Everything that can go wrong before the screen opens (bad
//! config, bad workflow, a backend that cannot run, setup failing) is
//! printed as plain text, with the same messages as `awtui validate` and
//! `awtui run`. `q` asks: stop the instance (agents stopped cleanly, its
//! context left on disk, so the same command resumes it), or detach: the
//! instance is handed over to a background host (`awtui start
//! --background`), which resumes it from that context; a turn in progress
//! is stopped by the handover, exactly as by quitting and reopening.
//! Logs go to `awtui.log` in the instance folder (a temporary file for a
//! memory context), never to the terminal.

use crate::errln;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use super::exit;
use super::validate::load_reporting;
use crate::agents::runner::RunMode;
use crate::engine::{Engine, EngineError, EngineOptions, Link};
use crate::tui::{self, QuitAction, TuiOptions};
use crate::workflow::setup::{self, SetupError, is_valid_instance_name};

/// Opens `file` as instance `instance` (default: the workflow's own, see
/// [`crate::instance::owner`]); returns the exit code.
pub fn run(file: &Path, instance: Option<&str>) -> u8 {
    let config = match tui::Config::load() {
        Ok(c) => c,
        Err(e) => {
            errln!("awtui: bad config: {e}");
            return exit::INVALID;
        }
    };
    let Some(loaded) = load_reporting(file) else {
        return exit::INVALID;
    };
    let instance = &crate::instance::owner::resolve(&loaded.workflow, instance);
    if !is_valid_instance_name(instance) {
        errln!("{}", SetupError::InstanceName(instance.into()));
        return exit::INVALID;
    }
    let problems = crate::engine::preflight(&loaded.workflow);
    for p in &problems {
        errln!("{}: error: {p}", file.display());
    }
    if !problems.is_empty() {
        return exit::INVALID;
    }
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        errln!(
            "awtui: the control room needs a terminal; use `awtui run {}` to run headless",
            file.display()
        );
        return exit::INVALID;
    }
    let dir = setup::context_dir(&loaded.workflow, instance)
        .ok()
        .flatten();
    let log = log_path(dir.as_deref(), instance);
    if let Err(e) = super::logging::to_file(&log) {
        errln!("warning: cannot write the log {}: {e}", log.display());
    }
    tracing::info!("opening {} as instance {instance}", file.display());

    // One engine per instance, reachable from other terminals (list, send,
    // stop, attach) like any started instance.
    let claim = match crate::instance::claim(&loaded.workflow, instance) {
        Ok(c) => c,
        Err(e) => {
            errln!("{e}");
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
    let ended = runtime.block_on(async move {
        let (engine, first) = match Engine::start(loaded.workflow, options).await {
            Ok(started) => started,
            Err(e) => {
                errln!("{e}");
                return Ended::Code(match e {
                    EngineError::Setup(SetupError::Failed { .. }) => exit::FAILED,
                    _ => exit::INVALID,
                });
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
        // Whatever was printed is out before the screen is taken.
        crate::output::flush();
        let result = tui::run(
            link,
            TuiOptions {
                config,
                // With the context on disk the instance can outlive the
                // screen: `q` asks whether to stop it or leave it running.
                on_quit: if dir.is_some() {
                    QuitAction::Ask
                } else {
                    QuitAction::Shutdown
                },
                ..TuiOptions::default()
            },
        )
        .await;
        // Whatever happened on screen, the agents stop cleanly. An
        // in-process engine cannot outlive the screen: detaching hands the
        // instance over to a background host below, which resumes it from
        // its context on disk.
        engine.send(crate::engine::Command::Shutdown);
        let outcome = engine.wait().await;
        if let Some(served) = served {
            served.close().await;
        }
        tracing::info!("instance ended: {outcome:?}");
        // The terminal may be gone (SIGHUP): printed through the writer.
        match result {
            Ok(tui::TuiExit::Detached) => Ended::Detached,
            Ok(_) => {
                if let Some(d) = &dir {
                    crate::outln!(
                        "awtui: instance '{instance}' stopped; its context is in {} \
                         (open the same workflow again to resume it)",
                        d.display()
                    );
                }
                Ended::Code(exit::OK)
            }
            Err(e) => {
                tracing::error!("{e}");
                errln!("awtui: {e} (log: {})", log.display());
                Ended::Code(exit::FAILED)
            }
        }
    });
    match ended {
        Ended::Code(code) => code,
        Ended::Detached => hand_over(file, instance),
    }
}

/// How the screen's run ended.
enum Ended {
    /// With this exit code.
    Code(u8),
    /// The user detached: the instance must keep running.
    Detached,
}

/// Restarts the instance in the background from its context on disk, so
/// detaching from `awtui <file>` leaves it running; returns the exit code.
fn hand_over(file: &Path, instance: &str) -> u8 {
    let code = super::start::background(file, Some(instance), false, false);
    if code == exit::OK {
        crate::outln!(
            "detached; @{instance} keeps running (`awtui attach {instance}` reopens it, \
             `awtui stop @{instance}` stops it)"
        );
    } else {
        errln!("awtui: @{instance} could not be left running; it is stopped, its context kept");
    }
    code
}

fn log_path(dir: Option<&Path>, instance: &str) -> PathBuf {
    match dir {
        Some(d) => d.join("awtui.log"),
        None => std::env::temp_dir().join(format!("awtui-{instance}.log")),
    }
}
