//! Per-agent state: what the runner tracks internally and what it shows.

use std::collections::BTreeSet;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::event::{Millis, TurnId};
use crate::protocols::agent_mail::{self, MailContent};
pub use crate::vocab::agents::{AgentMetrics, AgentStatus};

/// A snapshot of one agent for front ends that pull rather than listen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentView {
    /// The agent.
    pub name: String,
    /// What it is doing.
    pub status: AgentStatus,
    /// Its counters and reported progress.
    pub metrics: AgentMetrics,
    /// The backend session the next turn resumes (the driver persists it).
    pub session_id: Option<String>,
}

/// What the backend is doing during a turn.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Activity {
    Starting,
    Thinking,
    Tool(String),
}

/// A running turn.
#[derive(Clone, Debug)]
pub(crate) struct Turn {
    pub id: TurnId,
    /// The ids handed over in its prompt.
    pub messages: Vec<u64>,
    pub started_at: Millis,
    pub last_activity: Millis,
    pub activity: Activity,
    pub stalled: bool,
    /// The agent posted to the channel during this turn.
    pub posted: bool,
    /// Since when its CLI waits for an approval (the timeout and stall
    /// clocks stop meanwhile).
    pub waiting_since: Option<Millis>,
}

/// Where an agent is in its life cycle.
#[derive(Clone, Debug)]
pub(crate) enum Phase {
    Idle,
    Running(Turn),
    RetryWait {
        at: Millis,
        retry: u32,
        reason: String,
    },
    Stopped,
    Failed(String),
    OutOfBudget,
}

/// Everything the runner knows about one agent.
#[derive(Clone, Debug)]
pub(crate) struct AgentState {
    pub name: String,
    pub max_turns: u32,
    pub turn_timeout: Option<Duration>,
    pub phase: Phase,
    /// Ids of messages mentioning it, not yet acknowledged.
    pub unread: BTreeSet<u64>,
    /// Everything up to here is acknowledged.
    pub acked_through: u64,
    /// Failed attempts since its last success.
    pub failures: u32,
    /// Turns cut off by a lost host connection since its last success
    /// (retried without counting as failures, up to a bound).
    pub connection_losses: u32,
    /// Turns counted against `max_turns` (reset by restart and resume).
    pub budget_turns: u32,
    pub metrics: AgentMetrics,
    pub session_id: Option<String>,
    /// Final answers handed to the driver to post for it and not yet seen
    /// back in the channel: seeing one is not the agent posting mid-turn.
    pub pending_answers: Vec<String>,
    /// What front ends were last told.
    pub shown_status: AgentStatus,
    pub shown_metrics: AgentMetrics,
}

impl AgentState {
    /// The effect posting `text` as this agent, remembered (at most `keep`
    /// texts) so that seeing it back in the channel is not taken for a
    /// post the agent made itself.
    pub fn post_for_it(&mut self, text: String, keep: usize) -> super::Effect {
        if self.pending_answers.len() >= keep {
            self.pending_answers.remove(0);
        }
        self.pending_answers.push(text.clone());
        super::Effect::PostFinalAnswer {
            agent: self.name.clone(),
            text,
        }
    }

    pub fn new(name: String, max_turns: u32, turn_timeout: Option<Duration>) -> Self {
        AgentState {
            name,
            max_turns,
            turn_timeout,
            phase: Phase::Idle,
            unread: BTreeSet::new(),
            acked_through: 0,
            failures: 0,
            connection_losses: 0,
            budget_turns: 0,
            metrics: AgentMetrics::default(),
            session_id: None,
            pending_answers: Vec::new(),
            shown_status: AgentStatus::Idle,
            shown_metrics: AgentMetrics::default(),
        }
    }

    /// The running turn, if `id` is it.
    pub fn turn_mut(&mut self, id: TurnId) -> Option<&mut Turn> {
        match &mut self.phase {
            Phase::Running(turn) if turn.id == id => Some(turn),
            _ => None,
        }
    }

    /// Whether a turn runs or a retry is pending: the agent is still working.
    pub fn is_working(&self) -> bool {
        matches!(self.phase, Phase::Running(_) | Phase::RetryWait { .. })
    }

    /// Forgets everything up to `through`.
    pub fn ack(&mut self, through: u64) {
        self.acked_through = self.acked_through.max(through);
        self.unread = self.unread.split_off(&(through.saturating_add(1)));
    }

    /// The status to show; `budget_paused` when the workflow budget ran out.
    pub fn status(&self, budget_paused: bool) -> AgentStatus {
        match &self.phase {
            Phase::Running(turn) if turn.waiting_since.is_some() => AgentStatus::WaitingForApproval,
            Phase::Running(turn) if turn.stalled => AgentStatus::Stalled,
            Phase::Running(turn) => match &turn.activity {
                Activity::Starting => AgentStatus::Starting,
                Activity::Thinking => AgentStatus::Thinking,
                Activity::Tool(name) => AgentStatus::CallingTool(name.clone()),
            },
            Phase::RetryWait { retry, reason, .. } => AgentStatus::Retrying {
                retry: *retry,
                reason: reason.clone(),
            },
            Phase::Stopped => AgentStatus::Stopped,
            Phase::Failed(reason) => AgentStatus::Failed(reason.clone()),
            Phase::OutOfBudget => AgentStatus::OutOfBudget,
            Phase::Idle if self.unread.is_empty() => AgentStatus::Idle,
            Phase::Idle if budget_paused => AgentStatus::OutOfBudget,
            Phase::Idle => AgentStatus::Queued(self.unread.len()),
        }
    }

    /// The metrics to show.
    pub fn metrics_view(&self) -> AgentMetrics {
        AgentMetrics {
            unread: self.unread.len(),
            ..self.metrics.clone()
        }
    }

    /// Applies the Agent Mail record of a message this agent posted, if it
    /// is one ([`agent_mail::from_channel_message`]).
    pub fn apply_mail(&mut self, record: Option<&agent_mail::MailRecord>) {
        match record.and_then(mail_update_of) {
            Some(MailUpdate::Progress {
                step,
                context_usage,
            }) => {
                if step.is_some() {
                    self.metrics.step = step;
                }
                if context_usage.is_some() {
                    self.metrics.context_usage = context_usage;
                }
            }
            Some(MailUpdate::Label {
                label,
                context_usage,
            }) => {
                self.metrics.label = Some(label);
                if context_usage.is_some() {
                    self.metrics.context_usage = context_usage;
                }
            }
            None => {}
        }
    }
}

/// What an Agent Mail status message changes in its sender's display.
#[derive(Debug, PartialEq)]
enum MailUpdate {
    Progress {
        step: Option<String>,
        context_usage: Option<u8>,
    },
    Label {
        label: String,
        context_usage: Option<u8>,
    },
}

/// Reads `message` as an Agent Mail status message. Leading `@mentions` are
/// skipped (channel messages address someone first). To keep casual chat
/// such as "DONE, please look" from changing a status, the message must
/// carry the bead id every status type requires, and replies are ignored.
#[cfg(test)]
fn mail_update(message: &str) -> Option<MailUpdate> {
    mail_update_of(&agent_mail::from_channel_message(message)?)
}

/// [`mail_update`] of a record already read.
fn mail_update_of(record: &agent_mail::MailRecord) -> Option<MailUpdate> {
    if record.bead_id.is_none() || record.in_reply_to.is_some() {
        return None;
    }
    let label = |kind: &str, context_usage| {
        Some(MailUpdate::Label {
            label: kind.to_string(),
            context_usage,
        })
    };
    match &record.content {
        MailContent::Progress {
            step,
            context_usage,
            ..
        } => Some(MailUpdate::Progress {
            step: step.clone(),
            context_usage: *context_usage,
        }),
        MailContent::OfferingReady(_) => label("OFFERING_READY", None),
        MailContent::Done(_) => label("DONE", None),
        MailContent::Failed { .. } => label("FAILED", None),
        MailContent::Checkpoint { context_usage, .. } => label("CHECKPOINT", *context_usage),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_sets_step_and_context_usage() {
        let msg = "@lead [ol-1] PROGRESS\nBead: ol-1\nStep: writing tests\nStatus: going well\nContext usage: 45%\n";
        assert_eq!(
            mail_update(msg),
            Some(MailUpdate::Progress {
                step: Some("writing tests".into()),
                context_usage: Some(45),
            })
        );
    }

    #[test]
    fn completions_set_the_label() {
        let done = "DONE\nBead: ol-2\nStatus: DONE\nCommit: abc\n";
        assert_eq!(
            mail_update(done),
            Some(MailUpdate::Label {
                label: "DONE".into(),
                context_usage: None,
            })
        );
        let failed = "[ol-3] FAILED\nType: TESTS_FAIL\nReason: flaky\n";
        assert!(matches!(
            mail_update(failed),
            Some(MailUpdate::Label { label, .. }) if label == "FAILED"
        ));
    }

    #[test]
    fn casual_chat_and_other_types_change_nothing() {
        assert_eq!(mail_update("@reviewer DONE, please have a look"), None);
        assert_eq!(mail_update("hello"), None);
        assert_eq!(
            mail_update("[ol-1] HELP_REQUEST\nIssue Type: STUCK\n"),
            None
        );
        let mut agent = AgentState::new("a".into(), 5, None);
        agent.apply_mail(agent_mail::from_channel_message("just chatting").as_ref());
        assert_eq!(agent.metrics, AgentMetrics::default());
    }

    #[test]
    fn status_of_an_idle_agent_depends_on_its_inbox() {
        let mut agent = AgentState::new("a".into(), 5, None);
        assert_eq!(agent.status(false), AgentStatus::Idle);
        agent.unread.extend([3, 5]);
        assert_eq!(agent.status(false), AgentStatus::Queued(2));
        assert_eq!(agent.status(true), AgentStatus::OutOfBudget);
        agent.ack(4);
        assert_eq!(agent.unread.iter().copied().collect::<Vec<_>>(), vec![5]);
        assert_eq!(agent.acked_through, 4);
    }
}
