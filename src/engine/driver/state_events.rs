//! What the instance's state says, as the loop hears it: new messages
//! (read once for everyone, a SPAWN_REQUEST answered), task changes (for
//! task announcing), approvals and document and cursor changes.

use tokio::sync::broadcast;

use super::Driver;
use crate::agents::runner::Event;
use crate::context::mentions::{SYSTEM, USER};
use crate::context::{ChannelEntry, ContextEvent, Since};
use crate::engine::event::EngineEvent;
use crate::engine::outbox::Outbox;

impl Driver {
    pub(super) fn context_event(
        &mut self,
        event: Result<ContextEvent, broadcast::error::RecvError>,
    ) {
        match event {
            Ok(ContextEvent::MessageAppended { entry }) => self.message_appended(entry),
            Ok(ContextEvent::TaskChanged { change }) => self.task_event(Some(*change)),
            Ok(ContextEvent::ApprovalChanged { approval }) => self.approval_event(*approval),
            // The one resync rule: read what the channel has that was not
            // reported, look for tasks that became free, and say that
            // updates were missed (front ends' snapshots are current).
            Err(broadcast::error::RecvError::Lagged(n)) => {
                self.notice(format!(
                    "{n} state updates were missed; the channel was read again and the snapshot is current"
                ));
                self.sync_messages();
                self.task_event(None);
            }
            Ok(ContextEvent::DocumentChanged { path, change, by }) => {
                self.emit(EngineEvent::Document { path, change, by });
                self.handle(Event::DocumentChanged);
            }
            Ok(ContextEvent::CursorChanged { agent, cursor }) => {
                self.emit(EngineEvent::Cursor {
                    agent: agent.clone(),
                    cursor,
                });
                if agent != USER {
                    self.handle(Event::InboxAcked {
                        agent,
                        through: cursor.acked,
                    });
                }
            }
            Err(broadcast::error::RecvError::Closed) => {}
        }
    }

    /// Reports channel entries the front ends and runner have not seen.
    /// A SPAWN_REQUEST among them is answered before the runner sees it,
    /// so what the answer posts (the worker's hand-over, SPAWN_ACK) reaches
    /// the runner in the same round and a `run` cannot end in between.
    pub(super) fn sync_messages(&mut self) {
        loop {
            let entries = self.cx.context.read(|s| {
                s.read(Some(Since::Id(self.reported)), None)
                    .unwrap_or_default()
            });
            if entries.is_empty() {
                break;
            }
            for entry in entries {
                self.report_message(entry);
            }
        }
        self.drain();
    }

    /// A message appended to the channel, as its writer announced it: the
    /// next one after those reported is taken as it is, with no read of
    /// the store; any other (one missed, or already read by
    /// [`Driver::sync_messages`]) makes the driver read what it lacks.
    fn message_appended(&mut self, entry: ChannelEntry) {
        if entry.id <= self.reported {
            return;
        }
        if entry.id == self.reported + 1 {
            self.report_message(entry);
            self.drain();
        } else {
            self.sync_messages();
        }
    }

    /// Reads one new message's protocols, once, for everyone: front ends
    /// get it annotated, the runner gets its Agent Mail record, and a
    /// SPAWN_REQUEST is answered before the runner sees it.
    fn report_message(&mut self, entry: ChannelEntry) {
        self.reported = entry.id;
        let annotations = crate::protocols::annotate(&entry.message);
        if let Some(mail) = &annotations.mail
            && mail.kind() == Some(crate::protocols::agent_mail::MessageType::SpawnRequest)
            && self.cx.workflow.agent(&entry.from).is_some()
        {
            self.spawn(&entry.from, &entry.message, mail);
        }
        let mail = annotations.mail.clone().map(Box::new);
        self.emit(EngineEvent::Message {
            annotations: Box::new(annotations),
            entry: entry.clone(),
        });
        self.queue.push_back(Event::MessageRead { entry, mail });
    }

    /// Answers one SPAWN_REQUEST: queues the start of a `spawn:` slot (or
    /// says why not) and acks it with SPAWN_ACK.
    fn spawn(
        &mut self,
        from: &str,
        message: &str,
        record: &crate::protocols::agent_mail::MailRecord,
    ) {
        use crate::engine::spawn::Decision;
        let decision = crate::engine::spawn::decide(
            &self.cx.workflow.agents,
            &self.spawned,
            from,
            message,
            record,
        );
        let ack = match decision {
            Decision::Spawn {
                slot,
                handover,
                ack,
            } => {
                self.spawned.insert(slot.clone());
                if let Err(e) = crate::engine::spawn::save(&self.cx.state_root, &self.spawned) {
                    self.notice(format!("cannot record that {slot} was spawned: {e}"));
                }
                tracing::info!("{from} spawned {slot}");
                self.queue.push_back(Event::Restart {
                    agent: slot.clone(),
                });
                self.post_mentioning(&handover, &slot);
                ack
            }
            Decision::Refuse { ack } => ack,
        };
        self.post_mentioning(&ack, from);
    }

    /// Posts `text` as `system`, telling the runner at once that it
    /// mentions `agent` (see [`Event::Mentioned`]).
    fn post_mentioning(&mut self, text: &str, agent: &str) {
        match self.cx.context.append(SYSTEM, text) {
            Ok(entry) => self.queue.push_back(Event::Mentioned {
                agent: agent.to_string(),
                id: entry.id,
            }),
            Err(e) => self.notice(format!("cannot post the answer to a SPAWN_REQUEST: {e}")),
        }
    }

    /// A change on the task board (`None`: changes were missed), for task
    /// announcing; the runner hears of any news at once.
    fn task_event(&mut self, change: Option<crate::tasks::CausedEvent>) {
        let mut out = Outbox::default();
        let news = self.announce.task_event(&self.cx, change, &mut out);
        self.take(out);
        if news {
            self.drain();
        }
    }

    /// Follows the approvals: front ends see each change; the runner
    /// learns who waits (its status, its paused timeout); every decision
    /// becomes one system line in the channel.
    fn approval_event(&mut self, event: crate::approvals::ApprovalEvent) {
        use crate::approvals::ApprovalEvent;
        let waiting = |d: &Driver, agent: &str| d.cx.context.approvals().is_waiting(agent);
        match &event {
            ApprovalEvent::Requested { request } => {
                tracing::info!(
                    "approval #{} asked by {}: {} {}",
                    request.id,
                    request.agent,
                    request.tool,
                    request.subject()
                );
                let waiting = waiting(self, &request.agent);
                self.handle(Event::Approval {
                    agent: request.agent.clone(),
                    waiting,
                });
            }
            ApprovalEvent::Decided { decision } => {
                tracing::info!("{}", decision.summary());
                self.post(SYSTEM, &decision.summary());
                let waiting = waiting(self, &decision.agent);
                self.handle(Event::Approval {
                    agent: decision.agent.clone(),
                    waiting,
                });
            }
            ApprovalEvent::Standing { .. } => {}
        }
        self.emit(EngineEvent::Approval {
            approval: Box::new(event),
        });
    }
}
