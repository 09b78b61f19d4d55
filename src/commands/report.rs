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
//!   cost as the backends reported it).
//! - `tasks` is the task board at the end (workflows, tasks, registered
//!   agents, last checkpoints), the same object as `awtui tasks --json`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::agents::runner::{AgentStatus, RunOutcome};
use crate::context::{ContextStore, DeliveryState};
use crate::engine::EngineEvent;
use crate::engine::event::{AgentSnapshot, MessageSnapshot};
use crate::engine::tasks::TaskSnapshot;
use crate::protocols::agent_mail::{self, MailRecord, MessageType};
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

/// Reads the channel with the protocols, marking acknowledged records.
pub fn messages(store: &dyn ContextStore) -> Vec<MessageSnapshot> {
    store
        .read(None, None)
        .unwrap_or_default()
        .into_iter()
        .map(|entry| {
            let mut annotations = crate::protocols::annotate(&entry.message);
            if let Some(mail) = annotations.mail.as_mut() {
                mail.acknowledged = !entry.mentions.is_empty()
                    && entry
                        .mentions
                        .iter()
                        .all(|m| store.delivery(entry.id, m) == Some(DeliveryState::Acked));
            }
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
    let agents = tracker.agents().to_vec();
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
}
