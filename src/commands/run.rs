//! `awtui run <file>`: the workflow headless until every agent is idle. Each
//! channel message is printed as it arrives (stdout), status changes and
//! notices go to stderr.

use std::io::Write;
use std::path::Path;

use tokio::sync::broadcast;

use super::exit;
use super::validate::load_reporting;
use crate::agents::runner::{RunMode, RunOutcome};
use crate::engine::{Command, Engine, EngineError, EngineEvent, EngineOptions};
use crate::sanitize::for_terminal;
use crate::workflow::setup::SetupError;

/// Runs `file` as instance `instance`; returns the exit code.
pub fn run(file: &Path, instance: &str) -> u8 {
    let Some(loaded) = load_reporting(file) else {
        return exit::INVALID;
    };
    let Some(runtime) = super::runtime(true) else {
        return exit::FAILED;
    };
    let options = EngineOptions {
        instance: instance.to_string(),
        mode: RunMode::Run,
    };
    runtime.block_on(async move {
        let (engine, events) = match Engine::start(loaded.workflow, options).await {
            Ok(started) => started,
            Err(e) => {
                eprintln!("{e}");
                return match e {
                    EngineError::Setup(SetupError::Failed { .. }) => exit::FAILED,
                    _ => exit::INVALID,
                };
            }
        };
        let commands = engine.commands();
        tokio::spawn(async move {
            shutdown_signal().await;
            let _ = commands.send(Command::Shutdown);
        });
        print_events(events).await;
        match engine.wait().await {
            RunOutcome::Completed | RunOutcome::NothingToDo => exit::OK,
            RunOutcome::Incomplete { pending } => {
                for p in pending {
                    eprintln!("{}: {} with {} unread", p.agent, p.status, p.unread);
                }
                exit::FAILED
            }
        }
    })
}

/// Prints events until the instance finishes.
async fn print_events(mut events: broadcast::Receiver<EngineEvent>) {
    loop {
        match events.recv().await {
            Ok(EngineEvent::Finished { .. }) | Err(broadcast::error::RecvError::Closed) => return,
            Ok(event) => print_event(&event),
            Err(broadcast::error::RecvError::Lagged(n)) => {
                eprintln!("(output fell behind; {n} events not shown)");
            }
        }
    }
}

fn print_event(event: &EngineEvent) {
    match event {
        EngineEvent::Message { entry, .. } => {
            let to = if entry.mentions.is_empty() {
                String::new()
            } else {
                format!(
                    " → {}",
                    entry
                        .mentions
                        .iter()
                        .map(|m| format!("@{m}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            };
            let mut out = std::io::stdout().lock();
            let _ = writeln!(
                out,
                "── #{} {} {}{to}\n{}\n",
                entry.id,
                entry.timestamp.format("%H:%M:%S"),
                for_terminal(&entry.from),
                for_terminal(entry.message.trim_end())
            );
            let _ = out.flush();
        }
        EngineEvent::Status { agent, status } => {
            eprintln!("· {agent}: {}", for_terminal(&status.to_string()))
        }
        EngineEvent::Paused { reason } => {
            eprintln!("⏸ paused: {}", for_terminal(&format!("{reason:?}")))
        }
        EngineEvent::Resumed => eprintln!("▶ resumed"),
        EngineEvent::Notice { text } => eprintln!("! {}", for_terminal(text)),
        _ => {}
    }
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
