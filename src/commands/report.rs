//! The result of `awtui run --json`: one object with everything a script
//! wants to know about a finished run.
//!
//! - `messages` is the whole channel (of a resumed instance too), each with
//!   its AOP blocks and Agent Mail record. A record is `acknowledged` when
//!   every recipient it mentions has acknowledged it.
//! - `threads` groups Agent Mail records by thread (the bead id by default):
//!   the ids in it, the last type, the ids still awaiting an ack or a help
//!   response, and a state: `done` (a passing `OFFERING_READY`/`DONE`),
//!   `failed`, `checkpoint`, `needs_help` (an unanswered `HELP_REQUEST`) or
//!   `in_progress`.
//! - `agents` has each agent's final status and counters (turns, tokens,
//!   cost as the backends reported it), how awtui talked to it
//!   (`protocol`: `acp` or `headless`) and its last turn as it went
//!   (`live`: the tool calls with kind, status, files and diffs, the plan,
//!   the usage, the end of its text), bounded by [`shown`].
//! - `tasks` is the task board at the end (workflows, tasks, registered
//!   agents, last checkpoints), the same object as `awtui tasks --json`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::agents::runner::{AgentStatus, RunOutcome};
use crate::context::ContextStore;
use crate::engine::EngineEvent;
use crate::engine::event::{AgentSnapshot, MessageSnapshot};
use crate::engine::tasks::TaskSnapshot;
use crate::protocols::agent_mail::{self, MailRecord, MessageType};
use crate::vocab::activity::{PlanEntry, ToolCallView};
use crate::vocab::live::AgentLive;
use crate::workflow::Workflow;

/// The final object.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// Every agent idle with nothing unread.
    pub success: bool,
    /// How the run ended.
    pub outcome: RunOutcome,
    /// The instance name.
    pub instance: String,
    /// The workflow name.
    pub workflow: String,
    /// The workflow file.
    pub file: PathBuf,
    /// Wall-clock time of the run, in milliseconds.
    pub duration_ms: u64,
    /// The channel, oldest first.
    pub messages: Vec<MessageSnapshot>,
    /// Agent Mail threads.
    pub threads: Vec<ThreadState>,
    /// Each agent at the end.
    pub agents: Vec<AgentSnapshot>,
    /// The sum of the agents' reported cost, in US dollars.
    pub cost_usd: f64,
    /// The entry document.
    pub document: Document,
    /// The task board at the end (as `awtui tasks --json` shows it).
    pub tasks: TaskSnapshot,
}

/// The entry document at the end of the run.
#[derive(Clone, Debug, Serialize)]
pub struct Document {
    /// Its path in the document folder.
    pub file: String,
    /// Its content.
    pub content: String,
}

/// One Agent Mail thread.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThreadState {
    /// The thread id.
    pub thread: String,
    /// The message ids in it, oldest first.
    pub messages: Vec<u64>,
    /// The type of its last status message.
    pub last_type: Option<MessageType>,
    /// Messages still awaiting an ack or a help response.
    pub pending: Vec<u64>,
    /// `done`, `failed`, `checkpoint`, `needs_help` or `in_progress`.
    pub state: &'static str,
}

/// Follows the agents through the events of a run.
#[derive(Clone, Debug)]
pub struct AgentTracker {
    agents: Vec<AgentSnapshot>,
}

impl AgentTracker {
    /// Every agent of `workflow`, idle.
    pub fn new(workflow: &Workflow) -> Self {
        AgentTracker {
            agents: workflow
                .agents
                .iter()
                .map(|a| AgentSnapshot {
                    place: match (&a.host, &a.sandbox) {
                        (crate::workflow::HostChoice::Named(h), _) => h.clone(),
                        (crate::workflow::HostChoice::Any, _) => "any".into(),
                        (_, Some(_)) => "sandbox".into(),
                        _ => "local".into(),
                    },
                    name: a.name.clone(),
                    backend: a.backend.name().to_string(),
                    model: a.model.clone(),
                    status: AgentStatus::Idle,
                    metrics: Default::default(),
                    protocol: crate::agents::backend::acp::protocol_name(a, &workflow.base_dir),
                    live: Default::default(),
                })
                .collect(),
        }
    }

    /// Applies a status or metrics event.
    pub fn apply(&mut self, event: &EngineEvent) {
        let find = |agents: &mut Vec<AgentSnapshot>, name: &str| {
            agents.iter_mut().position(|a| a.name == name)
        };
        match event {
            EngineEvent::Status { agent, status } => {
                if let Some(i) = find(&mut self.agents, agent) {
                    // A new turn starts a new live view (as the engine's).
                    if *status == AgentStatus::Starting {
                        self.agents[i].live = AgentLive::default();
                    }
                    self.agents[i].status = status.clone();
                }
            }
            EngineEvent::Metrics { agent, metrics } => {
                if let Some(i) = find(&mut self.agents, agent) {
                    self.agents[i].metrics = metrics.clone();
                }
            }
            EngineEvent::Activity { agent, activity } => {
                if let Some(i) = find(&mut self.agents, agent) {
                    self.agents[i].live.apply(activity);
                }
            }
            _ => {}
        }
    }

    /// The agents as tracked.
    pub fn agents(&self) -> &[AgentSnapshot] {
        &self.agents
    }
}

/// How many tool calls of a turn the outputs show (the newest).
pub const CALLS_SHOWN: usize = crate::vocab::live::CALLS_KEPT;
/// How many diffs of one call the outputs show.
pub const DIFFS_SHOWN: usize = 10;
/// How many files of one call the outputs show.
pub const LOCATIONS_SHOWN: usize = 20;
/// How many plan steps the outputs show.
pub const PLAN_SHOWN: usize = 50;
/// How much of one diff's preview the outputs show, in bytes.
pub const PREVIEW_SHOWN: usize = 4096;

/// What one agent's live view may weigh as JSON in `list --json` and
/// `run --json`.
pub const LIVE_BUDGET: usize = 256 * 1024;

/// An agent's live view as `list --json` and `run --json` show it:
/// whatever an agent sends (a flood of calls, of files, of diffs), at
/// most [`CALLS_SHOWN`] calls of at most [`DIFFS_SHOWN`] diffs and
/// [`LOCATIONS_SHOWN`] files, previews cut at [`PREVIEW_SHOWN`] bytes,
/// within [`LIVE_BUDGET`] bytes. The texts stay as the agent's (made safe
/// for a terminal by the backend); a page puts them in as text only.
pub fn shown(live: &AgentLive) -> AgentLive {
    shown_within(live, LIVE_BUDGET)
}

/// [`shown`] within `budget` bytes of JSON (about: the calls that fit,
/// newest first, after the text, the plan and the usage, and at least the
/// newest call with the diffs that fit; the text is cut to a quarter of
/// the budget first when it would take more).
pub fn shown_within(live: &AgentLive, budget: usize) -> AgentLive {
    use crate::vocab::pages::{json_len, within_budget};
    let mut out = AgentLive {
        text: tail(&live.text, crate::vocab::live::TEXT_KEPT.min(budget / 4)),
        calls: Vec::new(),
        plan: shown_plan(&live.plan),
        usage: live.usage,
    };
    let left = budget.saturating_sub(json_len(&out));
    let newest_first = live.calls.iter().rev().take(CALLS_SHOWN).map(shown_call);
    out.calls = within_budget(newest_first, left, |c| json_len(c) + 1);
    if out.calls.is_empty()
        && let Some(newest) = live.calls.last()
    {
        // Not even the newest call fits whole: it goes out with the diffs
        // (then the files) that fit.
        let mut c = shown_call(newest);
        while json_len(&c) > left && c.diffs.pop().is_some() {}
        while json_len(&c) > left && c.locations.pop().is_some() {}
        out.calls.push(c);
    }
    out.calls.reverse();
    out
}

/// One tool call as the outputs show it (see [`shown`]).
pub fn shown_call(call: &ToolCallView) -> ToolCallView {
    let mut c = call.clone();
    c.locations.truncate(LOCATIONS_SHOWN);
    c.diffs.truncate(DIFFS_SHOWN);
    for d in &mut c.diffs {
        crate::agents::backend::capped::cut_to(&mut d.preview, PREVIEW_SHOWN);
    }
    c
}

/// A plan as the outputs show it (see [`shown`]).
pub fn shown_plan(plan: &[PlanEntry]) -> Vec<PlanEntry> {
    plan.iter().take(PLAN_SHOWN).cloned().collect()
}

/// The newest [`crate::vocab::live::TEXT_KEPT`] bytes of `text`.
pub fn text_end(text: &str) -> String {
    tail(text, crate::vocab::live::TEXT_KEPT)
}

/// The newest `kept` bytes of `text` (starting on a character).
fn tail(text: &str, kept: usize) -> String {
    let mut cut = text.len().saturating_sub(kept);
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    text[cut..].to_string()
}

/// Reads the channel with the protocols, marking acknowledged records.
pub fn messages(store: &dyn ContextStore) -> Vec<MessageSnapshot> {
    store
        .read(None, None)
        .unwrap_or_default()
        .into_iter()
        .map(|entry| {
            let mut annotations = crate::protocols::annotate(&entry.message);
            crate::instance::query::mark_acknowledged(store, &entry, &mut annotations);
            MessageSnapshot {
                entry,
                annotations,
                cut: Default::default(),
            }
        })
        .collect()
}

fn thread_state(records: &[&MailRecord]) -> &'static str {
    let last = records.last().and_then(|r| r.kind());
    let answered_help = |i: usize| {
        records[i + 1..]
            .iter()
            .any(|r| r.kind() == Some(MessageType::HelpResponse))
    };
    let open_help = records.iter().enumerate().any(|(i, r)| {
        r.kind() == Some(MessageType::HelpRequest) && r.in_reply_to.is_none() && !answered_help(i)
    });
    match last {
        Some(MessageType::OfferingReady | MessageType::Done)
            if records
                .last()
                .is_some_and(|r| r.completion().is_some_and(|c| c.validation.passed())) =>
        {
            "done"
        }
        Some(MessageType::Failed) => "failed",
        Some(MessageType::Checkpoint) => "checkpoint",
        _ if open_help => "needs_help",
        _ => "in_progress",
    }
}

/// Groups the Agent Mail records of `messages` into threads.
pub fn threads(messages: &[MessageSnapshot]) -> Vec<ThreadState> {
    let mut by_thread: BTreeMap<String, Vec<(u64, &MailRecord)>> = BTreeMap::new();
    for m in messages {
        if let Some(record) = &m.annotations.mail
            && let Some(thread) = record.thread_id.clone().or_else(|| record.bead_id.clone())
        {
            by_thread
                .entry(thread)
                .or_default()
                .push((m.entry.id, record));
        }
    }
    by_thread
        .into_iter()
        .map(|(thread, items)| {
            let owned: Vec<MailRecord> = items.iter().map(|(_, r)| (*r).clone()).collect();
            let pending_records = agent_mail::pending(&owned);
            let pending = items
                .iter()
                .zip(&owned)
                .filter(|(_, r)| pending_records.iter().any(|p| std::ptr::eq(*p, *r)))
                .map(|((id, _), _)| *id)
                .collect();
            let refs: Vec<&MailRecord> = owned.iter().collect();
            ThreadState {
                thread,
                messages: items.iter().map(|(id, _)| *id).collect(),
                last_type: owned.last().and_then(|r| r.kind()),
                pending,
                state: thread_state(&refs),
            }
        })
        .collect()
}

/// Builds the report at the end of a run.
pub fn build(
    workflow: &Workflow,
    instance: &str,
    outcome: RunOutcome,
    duration: Duration,
    tracker: &AgentTracker,
    store: &dyn ContextStore,
    tasks: TaskSnapshot,
) -> RunReport {
    let messages = messages(store);
    let agents: Vec<AgentSnapshot> = tracker
        .agents()
        .iter()
        .map(|a| AgentSnapshot {
            live: shown(&a.live),
            ..a.clone()
        })
        .collect();
    RunReport {
        success: matches!(outcome, RunOutcome::Completed | RunOutcome::NothingToDo),
        outcome,
        instance: instance.to_string(),
        workflow: workflow.name.clone(),
        file: workflow.file.clone(),
        duration_ms: duration.as_millis() as u64,
        threads: threads(&messages),
        cost_usd: agents.iter().map(|a| a.metrics.cost_usd).sum(),
        agents,
        document: Document {
            file: store.entry_document().to_string(),
            content: store.read_document(None).unwrap_or_default(),
        },
        messages,
        tasks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{MemoryStore, StoreLayout};

    #[test]
    fn threads_follow_help_and_completion() {
        let mut s = MemoryStore::new(&StoreLayout {
            channel: "channel.md".into(),
            document: "notes.md".into(),
            documents: vec![],
            agents: vec!["coder".into(), "lead".into()],
        })
        .unwrap();
        s.append(
            "coder",
            "@lead [ol-3] HELP_REQUEST\nIssue Type: STUCK\n## Problem\np\n## Question\nq?",
        )
        .unwrap();
        s.append(
            "coder",
            "[ol-4] FAILED\nBead: ol-4\nType: build\nReason: no",
        )
        .unwrap();
        let msgs = messages(&s);
        let t = threads(&msgs);
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].thread, "ol-3");
        assert_eq!(t[0].state, "needs_help");
        assert_eq!(t[0].pending, vec![1]);
        assert_eq!(t[1].state, "failed");
        s.append("lead", "@coder Re: [ol-3] HELP_REQUEST\nTry again.")
            .unwrap();
        let t = threads(&messages(&s));
        assert_eq!(t[0].messages, vec![1, 3]);
        assert_eq!(t[0].state, "in_progress");
        assert!(t[0].pending.is_empty());
    }

    /// Issue 35: whatever an agent floods in, the outputs stay bounded.
    #[test]
    fn a_flood_of_calls_files_and_diffs_is_shown_bounded() {
        use crate::vocab::activity::FileDiff;
        let mut live = AgentLive::default();
        for i in 0..10_000 {
            // The newest calls heavy (the others are left out anyway).
            let heavy = i >= 9_950;
            live.calls.push(ToolCallView {
                id: i.to_string(),
                title: format!("call {i}"),
                locations: vec!["f".into(); if heavy { 500 } else { 1 }],
                diffs: vec![
                    FileDiff {
                        preview: "é".repeat(if heavy { 9000 } else { 1 }),
                        ..FileDiff::default()
                    };
                    if heavy { 60 } else { 1 }
                ],
                ..ToolCallView::default()
            });
        }
        let s = shown_within(&live, usize::MAX);
        assert_eq!(s.calls.len(), CALLS_SHOWN);
        assert_eq!(s.calls.last().unwrap().title, "call 9999");
        for c in &s.calls {
            assert_eq!(c.locations.len(), LOCATIONS_SHOWN);
            assert_eq!(c.diffs.len(), DIFFS_SHOWN);
            assert!(c.diffs.iter().all(|d| d.preview.len() <= PREVIEW_SHOWN));
        }
        let s = shown(&live);
        assert!(serde_json::to_string(&s).unwrap().len() <= LIVE_BUDGET);
        // The newest that fit, in order.
        assert_eq!(s.calls.last().unwrap().title, "call 9999");
        let small = shown_within(&live, 64 * 1024);
        assert!(serde_json::to_string(&small).unwrap().len() <= 64 * 1024);
        assert!(!small.calls.is_empty() && small.calls.len() < s.calls.len());
    }

    #[test]
    fn the_tracker_follows_a_turn_live_and_starts_afresh_with_the_next() {
        use crate::vocab::activity::BackendEvent;
        let w = crate::workflow::load_str(
            "agents:\n  a:\n    backend: command\n    command: [x]\n",
            std::path::Path::new("/tmp/w.yaml"),
        )
        .unwrap()
        .workflow;
        let mut t = AgentTracker::new(&w);
        let status = |s| EngineEvent::Status {
            agent: "a".into(),
            status: s,
        };
        t.apply(&status(AgentStatus::Starting));
        t.apply(&EngineEvent::Activity {
            agent: "a".into(),
            activity: BackendEvent::Tool {
                call: ToolCallView {
                    id: "1".into(),
                    status: "in_progress".into(),
                    ..ToolCallView::default()
                },
            },
        });
        assert_eq!(t.agents()[0].live.calls.len(), 1);
        t.apply(&status(AgentStatus::Idle));
        assert_eq!(t.agents()[0].live.calls.len(), 1, "the last turn stays");
        t.apply(&status(AgentStatus::Starting));
        assert!(t.agents()[0].live.calls.is_empty());
    }
}
