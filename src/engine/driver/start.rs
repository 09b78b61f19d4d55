//! How the loop starts an instance: the kickoff (or the note that it is
//! not posted again), the backlog of unread mentions, the pause kept from
//! before, the workflow file's plan and the answers a crash left
//! unacknowledged.

use super::Driver;
use crate::agents::runner::Event;
use crate::context::Since;
use crate::context::mentions::SYSTEM;
use crate::engine::event::EngineEvent;
use crate::engine::outbox::Outbox;

impl Driver {
    /// Posts the kickoff on a fresh channel and tells the runner what is
    /// already waiting (after a restart: every unread mention).
    pub(super) fn begin(&mut self) {
        let agents = self.cx.workflow.agent_names();
        self.settle_answered(&agents);
        let (last, backlog) = self.cx.context.read(|store| {
            // Ids only: only unread mentions are read, however long the
            // history.
            let backlog: Vec<(String, u64)> = agents
                .iter()
                .flat_map(|a| {
                    store
                        .inbox_ids(a)
                        .unwrap_or_default()
                        .into_iter()
                        .map(move |id| (a.clone(), id))
                })
                .collect();
            (store.last_id(), backlog)
        });
        self.reported = last;
        self.runner.set_history(last);
        self.restore_pause(last);
        let kickoff = match (&self.cx.prepared.kickoff, last) {
            (Some(text), 0) => match self.cx.context.append(SYSTEM, text) {
                Ok(entry) => Some(entry),
                Err(e) => {
                    self.notice(format!("cannot post the kickoff: {e}"));
                    None
                }
            },
            (Some(text), _) => {
                let first = self.cx.context.read(|store| store.entry(1));
                let changed = first.is_some_and(|e| e.from == SYSTEM && e.message != *text);
                let file = &self.cx.workflow.file;
                self.notice(resume_note(file, &self.cx.prepared.instance, last, changed));
                None
            }
            (None, _) => None,
        };
        // `spawn:` slots wait, stopped, until a SPAWN_REQUEST starts them.
        self.spawned = crate::engine::spawn::load(&self.cx.state_root);
        for agent in &self.cx.workflow.agents {
            if agent.spawn.is_some() && !self.spawned.contains(&agent.name) {
                self.queue.push_back(Event::Stop {
                    agent: agent.name.clone(),
                });
            }
        }
        let mut backlog = backlog;
        if last == 0 {
            // The file's plan starts with the instance: its first tasks
            // wake the agents allowed to take them, as a kickoff would.
            self.create_file_plan();
            let mut out = Outbox::default();
            if let Some(entry) = self.announce.announce(&self.cx, None, &mut out) {
                backlog.extend(entry.mentions.iter().map(|a| (a.clone(), entry.id)));
            }
            self.take(out);
        } else {
            // Already announced before the instance stopped.
            self.announce.already_told(&self.cx);
        }
        self.handle(Event::Started { kickoff, backlog });
        self.sync_messages();
    }

    /// A reopened instance that was paused stays paused until the person
    /// resumes it: the runner starts paused and front ends are told why.
    fn restore_pause(&mut self, last: u64) {
        match self.pause_record.load(last) {
            Ok(Some(reason)) => {
                self.notice(format!(
                    "instance {} is still paused ({reason}); its agents wait until you resume (R or /resume)",
                    self.cx.prepared.instance
                ));
                self.runner.set_paused(reason.clone());
                self.emit(EngineEvent::Paused { reason });
            }
            Ok(None) => {}
            Err(e) => self.notice(format!("{e}; the instance is not kept paused")),
        }
    }

    /// The plan the workflow file declares (`tasks:`), made at the first
    /// start of the instance.
    fn create_file_plan(&mut self) {
        let Some(plan) = &self.cx.workflow.tasks else {
            return;
        };
        if let Err(e) = crate::engine::tasks::create_file_plan(
            self.cx.context.tasks(),
            &self.cx.workflow.name,
            plan,
        ) {
            self.notice(format!("cannot create the workflow file's tasks: {e}"));
        }
    }

    /// After a crash (or a stop mid-turn), an agent may have answered what
    /// it was handed without its turn ending: it posted after the messages
    /// were handed to it, but they were never acknowledged. Those messages
    /// are acknowledged now instead of delivered again, so no reply is
    /// posted twice. Only a post made after a hand-over answers it (see
    /// [`crate::context::Handover`]); messages handed over later, or never,
    /// are delivered again.
    fn settle_answered(&mut self, agents: &[String]) {
        for agent in agents {
            let answered = self
                .cx
                .context
                .read(|s| s.answered_through(agent).ok().flatten());
            if let Some(through) = answered {
                match self.cx.context.ack(agent, Since::Id(through)) {
                    Ok(_) => self.notice(format!(
                        "{agent} had answered the messages up to #{through} before the instance stopped; they are not delivered again"
                    )),
                    Err(e) => self.notice(format!("cannot acknowledge {agent}'s messages: {e}")),
                }
            }
        }
    }
}

/// What a reopened instance says about its kickoff: never posted again,
/// and, when the workflow's kickoff is no longer the one the instance
/// began with (its first message), that the change is not sent and how to
/// start afresh.
fn resume_note(file: &std::path::Path, instance: &str, last: u64, kickoff_changed: bool) -> String {
    if kickoff_changed {
        let file = file
            .file_name()
            .unwrap_or(file.as_os_str())
            .to_string_lossy();
        format!(
            "resuming instance {instance} with {last} messages; the kickoff changed since this instance began; it is not sent again — `awtui reset {file} --instance {instance}` starts afresh"
        )
    } else {
        format!(
            "resuming instance {instance} with {last} messages; the kickoff is not posted again"
        )
    }
}
