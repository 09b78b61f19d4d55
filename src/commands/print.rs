//! How the command line shows a channel message and an engine event to a
//! person: shared by `run`, `start`, `attach` and `peek`, so a message looks
//! the same everywhere. Agent text is sanitized before it reaches the
//! terminal.

use std::io::Write;

use crate::agents::backend::BackendEvent;
use crate::context::ChannelEntry;
use crate::engine::EngineEvent;
use crate::protocols::Annotations;
use crate::sanitize::for_terminal;

/// `── #12 10:00:05 coder → @reviewer` then the message.
pub fn message_text(entry: &ChannelEntry, annotations: Option<&Annotations>) -> String {
    let to = if entry.mentions.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = entry.mentions.iter().map(|m| format!("@{m}")).collect();
        format!(" → {}", names.join(" "))
    };
    let reply = entry
        .reply_to
        .map(|id| format!(" (re #{id})"))
        .unwrap_or_default();
    let tag = annotations
        .and_then(|a| a.mail.as_ref())
        .and_then(|m| {
            m.kind().map(|k| match &m.bead_id {
                Some(b) => format!(" [{k} {b}]"),
                None => format!(" [{k}]"),
            })
        })
        .unwrap_or_default();
    format!(
        "── #{} {} {}{to}{reply}{}\n{}\n",
        entry.id,
        entry.timestamp.format("%H:%M:%S"),
        for_terminal(&entry.from),
        for_terminal(&tag),
        for_terminal(entry.message.trim_end())
    )
}

/// Prints a message on stdout.
pub fn message(entry: &ChannelEntry, annotations: Option<&Annotations>) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", message_text(entry, annotations));
    let _ = out.flush();
}

/// Prints, on stderr, why one of this front end's commands failed (told
/// to it alone, never on the event stream).
pub fn failure(failed: &crate::engine::CommandFailed) {
    eprintln!(
        "✗ {}: {}",
        for_terminal(&failed.command),
        for_terminal(&failed.error)
    );
}

/// Prints an event for a person: messages on stdout, everything else on
/// stderr. `verbose` adds agent activity and document changes.
pub fn event(event: &EngineEvent, verbose: bool) {
    match event {
        EngineEvent::Message { entry, annotations } => message(entry, Some(annotations)),
        EngineEvent::Status { agent, status } => {
            eprintln!(
                "· {}: {}",
                for_terminal(agent),
                for_terminal(&status.to_string())
            )
        }
        EngineEvent::Paused { reason } => {
            eprintln!("⏸ paused: {}", for_terminal(&reason.to_string()))
        }
        EngineEvent::Resumed => eprintln!("▶ resumed"),
        EngineEvent::Notice { text } => eprintln!("! {}", for_terminal(text)),
        EngineEvent::Activity { agent, activity } if verbose => match activity {
            BackendEvent::ToolCall { name } => {
                eprintln!("  {} ⚙ {}", for_terminal(agent), for_terminal(name))
            }
            BackendEvent::ToolDone { name, ok: false } => {
                eprintln!("  {} ✗ {} failed", for_terminal(agent), for_terminal(name))
            }
            BackendEvent::Error { message } => {
                eprintln!("  {} ✗ {}", for_terminal(agent), for_terminal(message))
            }
            _ => {}
        },
        EngineEvent::Document { path, change, by } if verbose => eprintln!(
            "· {} {} by {}",
            for_terminal(path),
            format!("{change:?}").to_lowercase(),
            for_terminal(by)
        ),
        EngineEvent::Metrics { agent, metrics } if verbose => eprintln!(
            "  {} turns {} · tokens {}/{} · ${:.4}",
            for_terminal(agent),
            metrics.turns,
            metrics.tokens_in,
            metrics.tokens_out,
            metrics.cost_usd
        ),
        _ => {}
    }
}

/// Prints an event as one JSON line on stdout.
pub fn json_line(event: &EngineEvent) {
    if let Ok(line) = serde_json::to_string(event) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

/// Writes a line to stdout, ignoring a closed pipe (`awtui list | head`).
pub fn line(text: impl std::fmt::Display) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}
