//! `awtui attach [instance]`: the control room on an instance that is
//! already running (from `start --background` or another terminal), over
//! its control endpoint. Quitting detaches and leaves it running; with
//! `--follow` (or without a terminal) it follows in plain text instead: the
//! agents and the recent channel, then every message and status change,
//! each line typed on standard input posted as `user`, Ctrl-C detaching.

use crate::{errln, outln};
use std::io::BufRead;

use tokio::sync::broadcast;

use super::exit;
use super::print;
use super::remote;
use crate::sanitize::for_terminal;
use crate::vocab::InstanceInfo;
use crate::vocab::{Command, EngineEvent, Reply, RequestError};

/// How many recent messages attach shows first.
const RECENT: usize = 20;

/// `awtui attach [instance] [--follow]`.
#[derive(Clone, Debug, clap::Args)]
pub struct AttachArgs {
    /// The instance (default: the only or current one).
    pub instance: Option<String>,
    /// Follow in plain text instead of the screen (also without a
    /// terminal): lines typed are posted, Ctrl-C detaches.
    #[arg(long)]
    pub follow: bool,
}

/// Attaches with the control room, or in plain text with `--follow` or
/// without a terminal; returns the exit code.
pub fn run(args: &AttachArgs) -> u8 {
    let follow_mode = args.follow
        || !std::io::IsTerminal::is_terminal(&std::io::stdout())
        || !std::io::IsTerminal::is_terminal(&std::io::stdin());
    let target = args.instance.as_deref().map(|i| {
        if i.starts_with('@') {
            i.to_string()
        } else {
            format!("@{i}")
        }
    });
    let resolved = match remote::resolve(target.as_deref()) {
        Ok(r) => r,
        Err(code) => return code,
    };
    if follow_mode {
        let Some(rt) = remote::runtime() else {
            return exit::FAILED;
        };
        return rt.block_on(follow(resolved.info));
    }
    let config = match crate::tui::Config::load() {
        Ok(c) => c,
        Err(e) => {
            errln!("awtui: bad config: {e}");
            return exit::INVALID;
        }
    };
    let Some(rt) = super::runtime(true) else {
        return exit::FAILED;
    };
    rt.block_on(screen(resolved.info, config))
}

/// The control room over `info`'s control endpoint with `options` (the
/// home screen opens instances through here too); how it ended, or the
/// exit code after saying why it could not connect.
pub async fn attached(
    info: &InstanceInfo,
    options: crate::tui::TuiOptions,
) -> Result<Result<crate::tui::TuiExit, crate::tui::TuiError>, u8> {
    let link = connect(info).await?;
    // Whatever was printed is out before the screen is taken.
    crate::output::flush();
    Ok(crate::tui::run(link, options).await)
}

/// The control room over the instance's control endpoint; quitting detaches.
async fn screen(info: InstanceInfo, config: crate::tui::Config) -> u8 {
    let options = crate::tui::TuiOptions {
        config,
        on_quit: crate::tui::QuitAction::Detach,
        neighbours: Some(super::child::neighbours()),
        ..crate::tui::TuiOptions::default()
    };
    let ended = match attached(&info, options).await {
        Ok(ended) => ended,
        Err(code) => return code,
    };
    match ended {
        Ok(crate::tui::TuiExit::Detached | crate::tui::TuiExit::Home { .. }) => {
            outln!("detached; @{} keeps running", info.instance);
            exit::OK
        }
        Ok(crate::tui::TuiExit::Shutdown) => {
            outln!("@{} stopped", info.instance);
            exit::OK
        }
        Ok(crate::tui::TuiExit::EngineEnded) => {
            outln!("@{} ended", info.instance);
            exit::OK
        }
        Err(e) => {
            errln!("awtui: {e}");
            exit::FAILED
        }
    }
}

/// A link to the instance, or the exit code after saying why not.
async fn connect(info: &InstanceInfo) -> Result<crate::vocab::Link, u8> {
    match tokio::time::timeout(remote::ANSWER_TIMEOUT, crate::instance::connect(info)).await {
        Ok(Ok(link)) => Ok(link),
        Ok(Err(e)) => {
            errln!("{e}");
            Err(remote::control_failure(&e))
        }
        Err(_) => {
            errln!("instance '{}' does not answer", info.instance);
            Err(exit::FAILED)
        }
    }
}

async fn follow(info: InstanceInfo) -> u8 {
    let link = match connect(&info).await {
        Ok(link) => link,
        Err(code) => return code,
    };
    let mut events = link.events;
    let commands = link.commands;
    // One listener for the whole session: a Ctrl-C that lands while an
    // event is being printed is kept, not lost between two listeners.
    let mut interrupt =
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()) {
            Ok(s) => s,
            Err(e) => {
                errln!("cannot listen for Ctrl-C: {e}");
                return exit::FAILED;
            }
        };
    // The snapshot is this client's own answer; events that arrive
    // meanwhile wait in the receiver (messages already shown are skipped).
    let snapshot = tokio::select! {
        _ = interrupt.recv() => {
            errln!("detached; @{} keeps running", info.instance);
            return exit::OK;
        }
        answer = commands.request(Command::Snapshot { messages: RECENT }) => answer,
    };
    let snapshot = match snapshot {
        Ok(Reply::Snapshot { snapshot }) => snapshot,
        Ok(other) => {
            errln!("unexpected answer from @{}: {other:?}", info.instance);
            return exit::FAILED;
        }
        Err(RequestError::Failed(f)) => {
            print::failure(&f);
            return exit::FAILED;
        }
        Err(RequestError::EngineGone) => {
            errln!("@{} went away", info.instance);
            return exit::NOT_RUNNING;
        }
    };
    let agents: Vec<String> = snapshot
        .agents
        .iter()
        .map(|a| format!("{} ({})", a.name, a.status))
        .collect();
    errln!(
        "attached to @{} ({}, pid {}): {} messages; agents: {}",
        info.instance,
        info.source(),
        info.pid,
        snapshot.total_messages,
        for_terminal(&agents.join(", "))
    );
    errln!("type a line to post it as user; Ctrl-C or the end of input (Ctrl-D) detaches");
    let mut last_id = 0u64;
    for m in &snapshot.messages {
        print::message(&m.entry, Some(&m.annotations));
        last_id = m.entry.id;
    }
    // Lines typed here are posted as `user`; a failure is told here alone.
    // At the end of input (Ctrl-D, the end of a pipe) every post is
    // answered, then the follow ends: `echo "@coder go" | awtui attach
    // --follow` posts and returns.
    let posts = commands.clone();
    let runtime = tokio::runtime::Handle::current();
    let (input_ended, mut ended) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let mut answers = Vec::new();
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            if posts.is_closed() {
                break;
            }
            let answer = posts.request(Command::Post { text: line });
            answers.push(runtime.spawn(async move {
                if let Err(RequestError::Failed(f)) = answer.await {
                    print::failure(&f);
                }
            }));
        }
        runtime.block_on(async {
            for a in answers {
                let _ = a.await;
            }
        });
        let _ = input_ended.send(());
    });
    loop {
        let event = tokio::select! {
            _ = interrupt.recv() => {
                errln!("detached; @{} keeps running", info.instance);
                return exit::OK;
            }
            Ok(()) = &mut ended => {
                errln!("end of input: detached; @{} keeps running", info.instance);
                return exit::OK;
            }
            e = events.recv() => e,
        };
        let event = match event {
            Ok(e) => e,
            Err(broadcast::error::RecvError::Lagged(n)) => {
                errln!("({n} events not shown)");
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => {
                errln!("@{} went away", info.instance);
                return exit::NOT_RUNNING;
            }
        };
        if show(&event, &mut last_id, &info) {
            return exit::OK;
        }
    }
}

/// Prints one live event; `true` when the instance finished.
fn show(event: &EngineEvent, last_id: &mut u64, info: &InstanceInfo) -> bool {
    match event {
        EngineEvent::Message { entry, .. } if entry.id <= *last_id => {}
        EngineEvent::Message { entry, .. } => {
            *last_id = entry.id;
            print::event(event, false);
        }
        EngineEvent::Finished { .. } => {
            errln!("@{} stopped", info.instance);
            return true;
        }
        other => print::event(other, false),
    }
    false
}
