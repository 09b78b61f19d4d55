//! Hosting an engine in this process for `run` and `start`, in the
//! foreground or as the background host that `start --background` and the
//! control room start: given the workflow [`startup::prepare`]d, lock the
//! instance, start the engine, serve its control endpoint and register it
//! (so `list`, `send`, `stop`, `peek` and `attach` reach it from any
//! terminal), show its events, and on SIGINT, SIGTERM or SIGHUP stop it
//! the way `awtui stop` does. It logs to the instance's `awtui.log`
//! ([`super::logging`]); everything it prints goes through
//! [`crate::output`], so a closed or unread pipe never stops the engine.

use std::time::Instant;

use tokio::sync::broadcast;

use crate::errln;

use super::exit;
use super::report::{self, AgentTracker};
use super::startup::{self, Prepared};
use crate::agents::runner::{RunMode, RunOutcome};
use crate::engine::{Command, EngineEvent};
use crate::instance::{self, layout};

/// How a hosted instance shows what happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// Messages on stdout, status on stderr; `verbose` adds activity.
    Human {
        /// Show agent activity, document changes and counters too.
        verbose: bool,
    },
    /// Status on stderr, one final JSON object on stdout.
    Report,
    /// Every event as a JSON line on stdout.
    JsonLines,
    /// A background instance: its output is its log, so events are logged
    /// (status changes and failures; channel messages only at debug).
    Log {
        /// Log agent activity, document changes and counters too.
        verbose: bool,
    },
}

/// How to host.
#[derive(Clone, Copy, Debug)]
pub struct HostOptions {
    /// `Run` ends when idle; `Start` when stopped.
    pub mode: RunMode,
    /// How to show it.
    pub output: Output,
    /// This process is the detached child of `start --background`.
    pub daemon_child: bool,
}

/// Hosts the prepared instance until it ends; returns the exit code.
pub fn host(prepared: Prepared, opts: HostOptions) -> u8 {
    let claim = match startup::claim(&prepared) {
        Ok(c) => c,
        Err(code) => return code,
    };
    // Warnings go to the instance's log, as the control room's do.
    let log = claim.home().join(layout::LOG_FILE);
    if let Err(e) = super::logging::to_file(&log) {
        errln!("warning: cannot write the log {}: {e}", log.display());
    }
    super::tally::log_tally();
    let workflow = prepared.workflow.clone();
    let name = prepared.instance.clone();
    tracing::info!(
        "hosting {} as instance {} ({:?})",
        workflow.file.display(),
        name,
        opts.mode
    );
    let claim = if opts.daemon_child {
        claim.with_log(log)
    } else {
        claim
    };
    let Some(runtime) = super::runtime(true) else {
        return exit::FAILED;
    };
    let started = Instant::now();
    runtime.block_on(async move {
        let (engine, events) = match startup::launch(prepared, opts.mode).await {
            Ok(started) => started,
            Err(code) => return code,
        };
        let signals = Signals::listen();
        let served = match instance::serve(&engine, claim, opts.mode).await {
            Ok(s) => s,
            Err(e) => {
                errln!("cannot serve the instance: {e}");
                engine.send(Command::Shutdown);
                engine.wait().await;
                return exit::FAILED;
            }
        };
        let running = format!(
            "instance {} running (pid {}); `awtui stop @{}` stops it",
            served.info().instance,
            served.info().pid,
            served.info().instance
        );
        match opts.output {
            Output::Log { .. } => tracing::info!("{running}"),
            Output::JsonLines => {}
            _ if opts.mode == RunMode::Start => errln!("{running}"),
            _ => {}
        }
        let commands = engine.commands();
        tokio::spawn(async move {
            signals.any().await;
            let _ = commands.send(Command::Shutdown);
        });
        let context = engine.context().clone();
        let tracker = follow(events, opts.output, AgentTracker::new(&workflow)).await;
        let outcome = engine.wait().await;
        served.close().await;
        tracing::info!("instance ended: {outcome:?}");
        let success = matches!(outcome, RunOutcome::Completed | RunOutcome::NothingToDo);
        if let RunOutcome::WithoutTools { agents } = &outcome
            && opts.mode == RunMode::Run
        {
            for agent in agents {
                let line = format!(
                    "{agent} ran every turn without awtui's tools: its CLI never connected to awtui's MCP server (see its stderr.log)"
                );
                match opts.output {
                    Output::Log { .. } => tracing::warn!("{line}"),
                    _ => errln!("{line}"),
                }
            }
        }
        if let RunOutcome::Incomplete { pending } = &outcome
            && opts.mode == RunMode::Run
        {
            for p in pending {
                let line = format!("{}: {} with {} unread", p.agent, p.status, p.unread);
                match opts.output {
                    Output::Log { .. } => tracing::warn!("{line}"),
                    _ => errln!("{line}"),
                }
            }
        }
        if opts.output == Output::Report {
            let tasks = crate::engine::tasks::snapshot(context.tasks());
            let report = context.read(|store| {
                report::build(
                    &workflow,
                    &name,
                    outcome.clone(),
                    started.elapsed(),
                    &tracker,
                    store,
                    tasks,
                )
            });
            match serde_json::to_string_pretty(&report) {
                Ok(text) => super::print::json(text),
                Err(e) => errln!("cannot write the report: {e}"),
            }
        }
        match opts.mode {
            // A persistent instance ends only when asked to: that is success.
            RunMode::Start => exit::OK,
            RunMode::Run if success => exit::OK,
            RunMode::Run => exit::FAILED,
        }
    })
}

/// Shows events until the instance finishes; returns the agents' last state.
async fn follow(
    mut events: broadcast::Receiver<EngineEvent>,
    output: Output,
    mut tracker: AgentTracker,
) -> AgentTracker {
    loop {
        let event = match events.recv().await {
            Ok(e) => e,
            Err(broadcast::error::RecvError::Closed) => break,
            Err(broadcast::error::RecvError::Lagged(n)) => {
                let text = format!("(output fell behind; {n} events not shown)");
                match output {
                    Output::Log { .. } => tracing::warn!("{text}"),
                    _ => errln!("{text}"),
                }
                continue;
            }
        };
        match output {
            Output::Human { verbose } => super::print::event(&event, verbose),
            Output::Report => {
                if matches!(
                    event,
                    EngineEvent::Status { .. } | EngineEvent::Notice { .. }
                ) {
                    super::print::event(&event, false);
                }
            }
            Output::JsonLines => super::print::json_line(&event),
            Output::Log { verbose } => super::print::log_event(&event, verbose),
        }
        tracker.apply(&event);
        if matches!(event, EngineEvent::Finished { .. }) {
            break;
        }
    }
    tracker
}

/// SIGINT, SIGTERM and SIGHUP (the terminal went away), listened to from
/// before the instance is served, so a signal sent as soon as it is listed
/// stops it cleanly rather than killing it.
struct Signals(Vec<tokio::signal::unix::Signal>);

impl Signals {
    /// Starts listening (must run inside the runtime).
    fn listen() -> Signals {
        use tokio::signal::unix::{SignalKind, signal};
        Signals(
            [
                SignalKind::interrupt(),
                SignalKind::terminate(),
                SignalKind::hangup(),
            ]
            .into_iter()
            .filter_map(|kind| signal(kind).ok())
            .collect(),
        )
    }

    /// Resolves when one of them arrives.
    async fn any(mut self) {
        if self.0.is_empty() {
            return std::future::pending().await;
        }
        let waits = self.0.iter_mut().map(|s| Box::pin(s.recv()));
        futures_util::future::select_all(waits).await;
    }
}
