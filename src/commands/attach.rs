//! `awtui attach [instance]`: follows an instance that is already running,
//! from any terminal.
//!
//! This build has no TUI yet, so attach is a follow mode: it prints the
//! agents and the recent channel, then every message and status change as
//! it happens (like `run`). Each line typed on standard input is posted to
//! the channel as `user`. Ctrl-C detaches and leaves the instance running;
//! when the instance stops, attach says so and exits 0.
//!
//! The TUI will take a [`crate::engine::Link`] from
//! [`crate::instance::connect`] instead, as here.

use std::io::BufRead;

use tokio::sync::broadcast;

use super::exit;
use super::print;
use super::remote;
use crate::engine::{Command, EngineEvent};
use crate::instance::registry::InstanceInfo;
use crate::sanitize::for_terminal;

/// How many recent messages attach shows first.
const RECENT: usize = 20;

/// Follows the instance; returns the exit code.
pub fn run(instance: Option<&str>) -> u8 {
    let target = instance.map(|i| {
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
    let Some(rt) = remote::runtime() else {
        return exit::FAILED;
    };
    rt.block_on(follow(resolved.info))
}

async fn follow(info: InstanceInfo) -> u8 {
    let link =
        match tokio::time::timeout(remote::ANSWER_TIMEOUT, crate::instance::connect(&info)).await {
            Ok(Ok(link)) => link,
            Ok(Err(e)) => {
                eprintln!("{e}");
                return remote::control_failure(&e);
            }
            Err(_) => {
                eprintln!("instance '{}' does not answer", info.instance);
                return exit::FAILED;
            }
        };
    let mut events = link.events;
    let commands = link.commands;
    let _ = commands.send(Command::Snapshot { messages: RECENT });
    // Lines typed here are posted as `user`.
    let posts = commands.clone();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if !line.trim().is_empty() && posts.send(Command::Post { text: line }).is_err() {
                break;
            }
        }
    });
    let mut buffered: Vec<EngineEvent> = Vec::new();
    let mut shown_snapshot = false;
    let mut last_id = 0u64;
    loop {
        let event = tokio::select! {
            _ = tokio::signal::ctrl_c() => {
                eprintln!("detached; @{} keeps running", info.instance);
                return exit::OK;
            }
            e = events.recv() => e,
        };
        let event = match event {
            Ok(e) => e,
            Err(broadcast::error::RecvError::Lagged(n)) => {
                eprintln!("({n} events not shown)");
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => {
                eprintln!("@{} went away", info.instance);
                return exit::NOT_RUNNING;
            }
        };
        if !shown_snapshot {
            match event {
                EngineEvent::Snapshot { snapshot } => {
                    shown_snapshot = true;
                    let agents: Vec<String> = snapshot
                        .agents
                        .iter()
                        .map(|a| format!("{} ({})", a.name, a.status))
                        .collect();
                    eprintln!(
                        "attached to @{} ({}, pid {}): {} messages; agents: {}",
                        info.instance,
                        info.source(),
                        info.pid,
                        snapshot.total_messages,
                        for_terminal(&agents.join(", "))
                    );
                    eprintln!("type a line to post it as user; Ctrl-C detaches");
                    for m in &snapshot.messages {
                        print::message(&m.entry, Some(&m.annotations));
                        last_id = m.entry.id;
                    }
                    for e in std::mem::take(&mut buffered) {
                        if show(&e, &mut last_id, &info) {
                            return exit::OK;
                        }
                    }
                }
                other => buffered.push(other),
            }
            continue;
        }
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
        EngineEvent::Snapshot { .. } => {}
        EngineEvent::Finished { .. } => {
            eprintln!("@{} stopped", info.instance);
            return true;
        }
        other => print::event(other, false),
    }
    false
}
