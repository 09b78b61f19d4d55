//! Task announcing, one of the engine's actors: it follows the task board,
//! posts the news of tasks that became available (waking the agents
//! allowed to take them), and frees what holders left behind (stale
//! claims, silent registrations, an agent whose process is gone). The
//! driver's loop forwards it the board's changes and its own ticks, and
//! carries out what it answers ([`Outbox`]).

use std::time::Duration;

use super::launch::LaunchContext;
use super::outbox::Outbox;
use super::tasks::{Announcer, may_free_tasks};
use crate::agents::runner::Event;
use crate::context::ChannelEntry;
use crate::context::mentions::SYSTEM;
use crate::tasks::{CausedEvent, TaskEvent};
use crate::vocab::event::EngineEvent;

/// What was announced, and when holders are checked for liveness.
pub(super) struct Announce {
    /// The tasks already told as news, and who freed those given back.
    announcer: Announcer,
    /// Stale holders lose their claims after this many missed heartbeats.
    release_after: u64,
    /// When registrations and claims are checked for liveness (made at the
    /// first wait, inside the loop's runtime).
    stale_check: Option<tokio::time::Interval>,
}

impl Announce {
    /// Liveness as the seed says: silent registrations are marked offline,
    /// and stale holders lose their claims after `release_after` missed
    /// heartbeats (a default unless the workflow says otherwise).
    pub fn new(cx: &LaunchContext) -> Announce {
        let release_after = u64::from(
            cx.workflow
                .limits
                .release_after_missed_heartbeats
                .unwrap_or(crate::tasks::store::RELEASE_AFTER_MISSED),
        );
        Announce {
            announcer: Announcer::default(),
            release_after,
            stale_check: None,
        }
    }

    /// The next liveness check is due (cancel-safe: for the loop's
    /// `select!`).
    pub async fn tick(&mut self) {
        let every = Duration::from_millis(crate::tasks::store::HEARTBEAT_MS / 3);
        self.stale_check
            .get_or_insert_with(|| tokio::time::interval(every))
            .tick()
            .await;
    }

    /// A liveness check: silent registrations go offline, stale claims are
    /// released.
    pub fn check_liveness(&mut self, cx: &LaunchContext, out: &mut Outbox) {
        mark_silent_offline(cx);
        self.release_stale(cx, out);
    }

    /// A reopened instance: what is free now was already announced before
    /// it stopped.
    pub fn already_told(&mut self, cx: &LaunchContext) {
        let agents = cx.workflow.agent_names();
        let _ = self.announcer.news(cx.context.tasks(), &agents, None);
    }

    /// A change on the task board (`None`: changes were missed): shown to
    /// front ends; tasks that became available wake the agents allowed to
    /// take them (one system message), except the agent whose tool call
    /// made them available. Whether the runner has news to hear.
    pub fn task_event(
        &mut self,
        cx: &LaunchContext,
        change: Option<CausedEvent>,
        out: &mut Outbox,
    ) -> bool {
        let (check, by) = match change {
            Some(CausedEvent { by, event }) => {
                self.announcer.observe(&event, by.as_deref());
                let check = may_free_tasks(&event);
                out.emits.push(EngineEvent::Task {
                    change: Box::new(event),
                });
                (check, by)
            }
            // Changes were missed: look for free tasks anyway.
            None => {
                self.announcer.resync();
                (true, None)
            }
        };
        if check {
            let _ = self.announce(cx, by.as_deref(), out);
        }
        check
    }

    /// Posts the news of newly available tasks, if any. When `by` (an agent
    /// of the workflow) made them available, the runner is told the news
    /// is its doing ([`Event::CausedBy`]): the loop guard counts it as a
    /// message of `by`'s.
    pub fn announce(
        &mut self,
        cx: &LaunchContext,
        by: Option<&str>,
        out: &mut Outbox,
    ) -> Option<ChannelEntry> {
        let agents = cx.workflow.agent_names();
        let text = self.announcer.news(cx.context.tasks(), &agents, by)?;
        match cx.context.append(SYSTEM, &text) {
            Ok(entry) => {
                if let Some(agent) = by.filter(|a| agents.iter().any(|n| n == a)) {
                    out.events.push(Event::CausedBy {
                        agent: agent.to_string(),
                        id: entry.id,
                    });
                }
                Some(entry)
            }
            Err(e) => {
                out.notice(format!("cannot post the task news: {e}"));
                None
            }
        }
    }

    /// Releases the claims of holders that missed their heartbeats
    /// (awtui agents in a running turn never do), with a system note.
    fn release_stale(&mut self, cx: &LaunchContext, out: &mut Outbox) {
        let missed = self.release_after;
        let board = cx.context.tasks().clone();
        let now = chrono::Utc::now();
        for (task, holder) in board.read(|s| s.stale_claims(missed, now)) {
            let why = format!("{holder} missed {missed} heartbeats");
            let released = board.change(|s| match s.release(&task, SYSTEM, &why, now) {
                Ok(t) => (true, crate::tasks::with_last_checkpoint(s, t)),
                Err(_) => (false, Vec::new()),
            });
            if released {
                post(cx, &format!("Released task {task}: {why}."), out);
            }
        }
    }
}

/// Releases the claims of the registrations awtui agent `agent` made, now
/// that its process is gone (`how`: stopped, failed).
pub(super) fn release_claims_of(cx: &LaunchContext, agent: &str, how: &str, out: &mut Outbox) {
    let board = cx.context.tasks().clone();
    let now = chrono::Utc::now();
    for (task, _) in board.read(|s| s.claims_of_owner(agent)) {
        let why = format!("{agent} {how}");
        let released = board.change(|s| match s.release(&task, SYSTEM, &why, now) {
            Ok(t) => (
                Some(t.name.clone()),
                crate::tasks::with_last_checkpoint(s, t),
            ),
            Err(_) => (None, Vec::new()),
        });
        if let Some(name) = released {
            post(cx, &format!("Released task {task} “{name}”: {why}."), out);
        }
    }
}

/// Marks the registrations silent for too long offline (the board and
/// `awtui tasks` show it; they must register again to claim).
fn mark_silent_offline(cx: &LaunchContext) {
    let now = chrono::Utc::now();
    let marked = cx
        .context
        .tasks()
        .change(|s| match s.mark_silent_offline(now) {
            Ok(agents) => (
                agents.len(),
                agents.into_iter().map(TaskEvent::AgentChanged).collect(),
            ),
            Err(e) => {
                tracing::warn!("cannot mark silent agents offline: {e}");
                (0, Vec::new())
            }
        });
    if marked > 0 {
        tracing::info!("{marked} silent registration(s) marked offline");
    }
}

/// Posts `text` as `system` (a failure is a notice).
fn post(cx: &LaunchContext, text: &str, out: &mut Outbox) {
    if let Err(e) = cx.context.append(SYSTEM, text) {
        out.notice(format!("cannot post {SYSTEM}'s message: {e}"));
    }
}
