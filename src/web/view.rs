//! The engine's data as the page draws it: small JSON objects with the
//! words already chosen (an agent's status as text, an approval's call as
//! lines, a message's AOP blocks as framed parts). Agent text goes out as
//! it is; the page only ever puts it in the document as text.
//!
//! An agent's live view (its streamed text, tool calls with kind, status,
//! files and diff previews, its plan and usage) goes out in the agent's
//! row and piece by piece in `activity` events ([`live_part`]), bounded
//! as `list --json` bounds it ([`crate::commands::report::shown`]).
//!
//! Every page is bounded in bytes ([`crate::vocab::pages`]): a message
//! longer than 64 KiB goes out shortened with `truncated: true` and its
//! whole size in `bytes` (the page offers "show all", which reads it from
//! `/api/instances/<id>/messages/<msg>`), in the first load, the "older"
//! pages and the live stream alike; the first load keeps the newest
//! messages that fit and says how many it left out (`left_out`).

use serde_json::{Value, json};

use crate::commands::report::{shown_call, shown_plan, shown_within, text_end};
use crate::protocols::Annotations;
use crate::protocols::aop::Segment;
use crate::vocab::BackendEvent;
use crate::vocab::EngineEvent;
use crate::vocab::pages::{Cut, MESSAGE_CAP, MESSAGES_BUDGET, json_len, within_budget};
use crate::vocab::{AgentSnapshot, MessageSnapshot, PeekItem, Snapshot};
use crate::vocab::{AgentStatus, ChannelEntry};
use crate::vocab::{Request, approval_view::LineKind};

/// One word for an agent's status, for the page's colours.
pub fn status_class(status: &AgentStatus) -> &'static str {
    match status {
        AgentStatus::Idle => "idle",
        AgentStatus::Queued(_) => "queued",
        AgentStatus::Starting | AgentStatus::Thinking | AgentStatus::CallingTool(_) => "working",
        AgentStatus::Stalled | AgentStatus::Retrying { .. } => "warning",
        AgentStatus::Stopped => "stopped",
        AgentStatus::Failed(_) | AgentStatus::OutOfBudget => "failed",
        AgentStatus::WaitingForApproval => "approval",
    }
}

/// A channel message as a page shows it: shortened to [`MESSAGE_CAP`]
/// (and annotated again) when it is longer, marked so.
pub fn capped(entry: &ChannelEntry, annotations: &Annotations) -> Value {
    if entry.message.len() <= MESSAGE_CAP {
        return message(entry, annotations, Cut::default());
    }
    let mut short = entry.clone();
    let cut = Cut::shorten(&mut short, MESSAGE_CAP);
    message(&short, &crate::protocols::annotate(&short.message), cut)
}

/// A message of a peek (already shortened by the instance, or whole when
/// asked for whole).
pub fn peeked(item: &PeekItem) -> Value {
    message(&item.entry, &item.annotations, item.cut)
}

/// A channel message: its text, its AOP blocks (each with its type), the
/// Agent Mail type it carries, if any, and whether the text is shortened
/// (`truncated`, with the whole size in `bytes`).
pub fn message(entry: &ChannelEntry, annotations: &Annotations, cut: Cut) -> Value {
    let parts: Vec<Value> = match &annotations.aop {
        Some(parsed) => parsed
            .segments
            .iter()
            .filter(|s| !s.is_blank_text())
            .map(|s| match s {
                Segment::Text { text, .. } => json!({"text": text}),
                Segment::Block(b) => json!({
                    "block": b.kind.name(),
                    "attrs": b.attributes.iter().map(|a| format!("{}={}", a.key, a.value)).collect::<Vec<_>>().join(" "),
                    "text": b.content,
                }),
            })
            .collect(),
        None => Vec::new(),
    };
    json!({
        "id": entry.id,
        "at": entry.timestamp,
        "from": entry.from,
        "text": entry.message,
        "mentions": entry.mentions,
        "reply_to": entry.reply_to,
        "parts": parts,
        "mail": annotations.mail.as_ref().and_then(|m| m.kind()).map(|k| k.to_string()),
        "truncated": cut.truncated,
        "bytes": cut.bytes.unwrap_or(entry.message.len()),
    })
}

/// What the live views of an instance's agents may weigh together in the
/// page's first load (within the page's budget, beside the messages).
pub const LIVES_BUDGET: usize = 384 * 1024;
/// What one agent's live view may weigh in the first load however many
/// agents there are.
pub const LIVE_FLOOR: usize = 4 * 1024;

/// An agent's row: status (text and class), counters, where it runs, how
/// awtui talks to it (`protocol`) and its current turn as it goes
/// (`live`: text, tool calls, plan, usage) within `budget` bytes of JSON.
pub fn agent(a: &AgentSnapshot, budget: usize) -> Value {
    json!({
        "name": a.name,
        "backend": a.backend,
        "model": a.model,
        "status": a.status.to_string(),
        "class": status_class(&a.status),
        "metrics": a.metrics,
        "place": a.place,
        "protocol": a.protocol,
        "live": shown_within(&a.live, budget),
    })
}

/// The piece of an agent's live view an event changes, as the page folds
/// it in (the engine's [`crate::vocab::live::AgentLive::apply`] rules):
/// `text` (appended), `call` (replaces the call of the same id, else is
/// added), `plan` (replaces the plan), `usage` (replaces the usage).
pub fn live_part(a: &BackendEvent) -> Option<Value> {
    Some(match a {
        BackendEvent::Text { text } => json!({"text": text_end(text)}),
        BackendEvent::Tool { call } => json!({"call": shown_call(call)}),
        BackendEvent::Plan { entries } => json!({"plan": shown_plan(entries)}),
        BackendEvent::Usage { usage } => json!({"usage": usage}),
        _ => return None,
    })
}

/// A pending approval as its card shows it: who, which tool, the call as
/// lines (`$ command` or a diff), the agent's last message.
pub fn approval(instance: &str, r: &Request) -> Value {
    let lines: Vec<Value> = crate::vocab::approval_view::describe(r)
        .into_iter()
        .map(|(kind, text)| {
            let kind = match kind {
                LineKind::Head => "head",
                LineKind::Removed => "removed",
                LineKind::Added => "added",
                LineKind::Plain => "plain",
            };
            json!({"kind": kind, "text": text})
        })
        .collect();
    json!({
        "instance": instance,
        "id": r.id,
        "agent": r.agent,
        "tool": r.tool,
        "subject": r.subject(),
        "at": r.at,
        "lines": lines,
        "context": r.context,
    })
}

/// What a running agent is doing, in a few words.
pub fn activity(a: &BackendEvent) -> Option<String> {
    let cut = |t: &str| t.chars().take(160).collect::<String>();
    Some(match a {
        BackendEvent::Thinking => "thinking".into(),
        BackendEvent::Text { text } | BackendEvent::Stream { text } => cut(text),
        BackendEvent::ToolCall { name } => {
            format!("calling {}", crate::vocab::activity::short_tool_name(name))
        }
        BackendEvent::ToolDone { name, ok } => format!(
            "{} {}",
            crate::vocab::activity::short_tool_name(name),
            if *ok { "done" } else { "failed" }
        ),
        BackendEvent::Final { text } => cut(text),
        BackendEvent::Error { message } => format!("error: {}", cut(message)),
        _ => return None,
    })
}

/// The whole instance, for the page's first draw (and every resync):
/// `id` is the page's name for it.
pub fn state(id: &str, s: &Snapshot) -> Value {
    // The instance bounds its snapshot; the page's own shapes are bounded
    // again here (an older instance, or shapes heavier than the engine's).
    let newest_first = s
        .messages
        .iter()
        .rev()
        .map(|m: &MessageSnapshot| message(&m.entry, &m.annotations, m.cut));
    let mut messages = within_budget(newest_first, MESSAGES_BUDGET, json_len);
    let left_out = s.left_out + (s.messages.len() - messages.len());
    messages.reverse();
    let live_share = (LIVES_BUDGET / s.agents.len().max(1)).max(LIVE_FLOOR);
    json!({
        "id": id,
        "instance": s.instance,
        "workflow": s.workflow,
        "agents": s.agents.iter().map(|a| agent(a, live_share)).collect::<Vec<_>>(),
        "messages": messages,
        "left_out": left_out,
        "total_messages": s.total_messages,
        "user_unread": s.user_unread,
        "documents": s.documents,
        "entry_document": s.entry_document,
        "cursors": s.cursors,
        "threads": threads(&s.ops.threads),
        "paused": s.paused.as_ref().map(|p| p.to_string()),
        "tasks": s.tasks.tasks.iter().map(|t| json!({
            "id": t.id,
            "name": t.name,
            "status": t.status.as_str(),
            "assignee": t.assignee,
            "claimed_by": t.claimed_by,
            "description": t.description,
        })).collect::<Vec<_>>(),
        "approvals": s.approvals.pending.iter().map(|r| approval(id, r)).collect::<Vec<_>>(),
        "notices": s.notices,
        "started": s.started,
    })
}

/// Thread states by root message id, each with the words the page shows
/// on that message (`label`).
pub fn threads(threads: &std::collections::BTreeMap<u64, crate::vocab::ThreadState>) -> Value {
    threads
        .iter()
        .map(|(id, state)| {
            let mut v = serde_json::to_value(state).unwrap_or_default();
            if let Some(o) = v.as_object_mut() {
                o.insert("label".into(), state.label().into());
            }
            (id.to_string(), v)
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// A live event as the page applies it (`None`: nothing to show). Kinds
/// the page does not apply piece by piece (`changed`) make it ask for the
/// instance again.
pub fn event(e: &EngineEvent) -> Option<Value> {
    Some(match e {
        EngineEvent::Message { entry, annotations } => {
            json!({"kind": "message", "message": capped(entry, annotations)})
        }
        EngineEvent::Status { agent, status } => json!({
            "kind": "status",
            "agent": agent,
            "status": status.to_string(),
            "class": status_class(status),
        }),
        EngineEvent::Metrics { agent, metrics } => {
            json!({"kind": "metrics", "agent": agent, "metrics": metrics})
        }
        EngineEvent::Activity { agent, activity: a } => {
            let (text, live) = (activity(a), live_part(a));
            if text.is_none() && live.is_none() {
                return None;
            }
            json!({"kind": "activity", "agent": agent, "text": text, "live": live})
        }
        EngineEvent::Cursor { agent, cursor } => {
            json!({"kind": "cursor", "agent": agent, "cursor": cursor})
        }
        EngineEvent::Notice { text } => json!({"kind": "notice", "text": text}),
        EngineEvent::Paused { .. }
        | EngineEvent::Resumed
        | EngineEvent::Document { .. }
        | EngineEvent::Task { .. }
        | EngineEvent::Approval { .. }
        | EngineEvent::Thread { .. }
        | EngineEvent::Deferred { .. }
        | EngineEvent::Finished { .. } => json!({"kind": "changed"}),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_carries_its_blocks_framed_and_its_mail_type() {
        let text = "=== AOP-FINAL | agent=r status=ok ===\nAll <b>done</b>.\n=== END-AOP-FINAL ===\n@user see above";
        let entry = ChannelEntry {
            id: 7,
            timestamp: chrono::DateTime::UNIX_EPOCH,
            from: "r".into(),
            message: text.into(),
            mentions: vec!["user".into()],
            reply_to: None,
        };
        let v = message(&entry, &crate::protocols::annotate(text), Cut::default());
        assert_eq!(v["parts"][0]["block"], "FINAL");
        assert_eq!(v["parts"][0]["attrs"], "agent=r status=ok");
        // Agent text goes out as it is: the page shows it as text.
        assert_eq!(v["parts"][0]["text"], "All <b>done</b>.");
        assert_eq!(v["parts"][1]["text"], "@user see above");
        let help = "[ol-3] HELP_REQUEST\nIssue Type: STUCK\n## Problem\np\n## Question\nq?";
        let v = message(&entry, &crate::protocols::annotate(help), Cut::default());
        assert_eq!(v["mail"], "HELP_REQUEST");
        assert_eq!(v["parts"], serde_json::json!([]));
    }

    /// Issue 34: a live message longer than the cap goes out shortened,
    /// marked with its whole size, on a character boundary.
    #[test]
    fn a_huge_live_message_goes_out_shortened_and_marked() {
        let text = format!("x{}", "é".repeat(MESSAGE_CAP));
        let entry = ChannelEntry {
            id: 9,
            timestamp: chrono::DateTime::UNIX_EPOCH,
            from: "a".into(),
            message: text.clone(),
            mentions: vec![],
            reply_to: None,
        };
        let annotations = crate::protocols::annotate(&text);
        let v = event(&EngineEvent::Message {
            entry: entry.clone(),
            annotations: Box::new(annotations),
        })
        .unwrap();
        let m = &v["message"];
        assert_eq!(m["truncated"], true);
        assert_eq!(m["bytes"], text.len());
        let shown = m["text"].as_str().unwrap();
        assert!(shown.len() <= MESSAGE_CAP && text.starts_with(shown));
        assert!(v.to_string().len() < 2 * MESSAGE_CAP);
    }

    /// Issue 35: an ACP agent's tool call, plan and usage reach the page
    /// piece by piece, the agent's text as it is (the page puts it in as
    /// text), bounded whatever the agent sends.
    #[test]
    fn live_pieces_go_out_bounded_and_as_the_agent_wrote_them() {
        use crate::vocab::activity::{FileDiff, PlanEntry, ToolCallView};
        let hostile = "<img src=x onerror=alert(1)>";
        let call = ToolCallView {
            id: "t1".into(),
            title: hostile.into(),
            kind: "edit".into(),
            status: "in_progress".into(),
            locations: vec!["a".into(); 500],
            diffs: vec![
                FileDiff {
                    path: "a".into(),
                    added: 1,
                    removed: 0,
                    preview: format!("+{hostile}\n").repeat(1000),
                };
                100
            ],
        };
        let v = event(&EngineEvent::Activity {
            agent: "coder".into(),
            activity: BackendEvent::Tool { call },
        })
        .unwrap();
        assert_eq!(v["kind"], "activity");
        assert_eq!(v["text"], Value::Null);
        let c = &v["live"]["call"];
        assert_eq!(c["title"], hostile);
        assert_eq!(c["diffs"].as_array().unwrap().len(), 10);
        assert_eq!(c["locations"].as_array().unwrap().len(), 20);
        assert!(v.to_string().len() < 64 * 1024, "{}", v.to_string().len());
        let plan = event(&EngineEvent::Activity {
            agent: "coder".into(),
            activity: BackendEvent::Plan {
                entries: vec![PlanEntry::default(); 500],
            },
        })
        .unwrap();
        assert_eq!(plan["live"]["plan"].as_array().unwrap().len(), 50);
        // A tool name still says what runs, as before.
        let started = event(&EngineEvent::Activity {
            agent: "coder".into(),
            activity: BackendEvent::ToolCall {
                name: "Edit".into(),
            },
        })
        .unwrap();
        assert_eq!(started["text"], "calling Edit");
        assert_eq!(started["live"], Value::Null);
        // An agent's row in the first load keeps its live view within its
        // share, however heavy.
        let mut live = crate::vocab::live::AgentLive::default();
        for i in 0..100 {
            let mut heavy = v["live"]["call"].clone();
            heavy["id"] = json!(i.to_string());
            live.apply(&BackendEvent::Tool {
                call: serde_json::from_value(heavy).unwrap(),
            });
        }
        let row = agent(
            &AgentSnapshot {
                place: String::new(),
                protocol: "acp".into(),
                live,
                name: "coder".into(),
                backend: "acp".into(),
                model: None,
                status: AgentStatus::Idle,
                metrics: Default::default(),
            },
            LIVES_BUDGET / 20,
        );
        assert!(row["live"].to_string().len() <= LIVES_BUDGET / 20);
        assert!(!row["live"]["calls"].as_array().unwrap().is_empty());
        // Nothing to show: no event.
        assert!(
            event(&EngineEvent::Activity {
                agent: "coder".into(),
                activity: BackendEvent::Session { id: "s".into() },
            })
            .is_none()
        );
    }
}
