//! The agent runner: a pure state machine that decides who works when.
//!
//! [`Runner::handle`] takes an [`Event`] (something that happened, with the
//! time it happened on the driver's monotonic clock) and returns the
//! [`Effect`]s to carry out, in order. It does no I/O, reads no clock and
//! spawns nothing, so queueing, retries, idle detection and loop guards are
//! tested without processes or timers.
//!
//! # The driver's contract
//!
//! - Append the kickoff (from `system`) to the channel, then send
//!   [`Event::Started`] with the stored entry.
//! - Report every channel append as [`Event::MessagePosted`], in id order,
//!   including the runner's own [`Effect::PostSystem`] and
//!   [`Effect::PostFinalAnswer`] once written.
//! - For [`Effect::StartTurn`]: mark the messages delivered, start the
//!   backend, report [`Event::TurnStarted`], the backend's events and one
//!   [`Event::TurnFinished`], all with the effect's [`TurnId`].
//! - Report acks made outside a turn's end (the `inbox_ack` tool, the user's
//!   ack key) as [`Event::InboxAcked`], document writes as
//!   [`Event::DocumentChanged`], and the user's stop, restart and resume.
//! - Send [`Event::Tick`] at [`Runner::next_deadline`] (a periodic tick works
//!   too) and at [`Effect::ScheduleRetry`] times.
//! - Execute [`Effect::Ack`], [`Effect::KillTurn`], post messages, broadcast
//!   status, and exit on [`Effect::Finish`]. Keep [`Effect::Paused`]
//!   durably (it comes before its banner) and, when reopening a paused
//!   instance, call [`Runner::set_paused`] before [`Event::Started`].
//!
//! # Decisions
//!
//! - A turn delivers *all* of the agent's unread messages. Channel ids only
//!   grow, so everything unread up to the last delivered id was delivered,
//!   and the success ack ("up to id") acknowledges exactly what the agent saw.
//! - A failed turn acks nothing. It is retried (with every message unread by
//!   then, including new ones) after the [`RetryPolicy`] backoff; when the
//!   retries run out the agent is failed and its messages stay unread.
//! - A message never interrupts a turn: it waits in the inbox until the turn
//!   ends. An agent mentioning itself does not wake itself.
//! - One event wakes an agent once: a message an agent's running turn
//!   caused ([`Event::CausedBy`], the news of a task it completed) wakes
//!   nobody before that turn is over and its final answer is back in the
//!   channel; the woken agent's one turn is handed both (the answer often
//!   mentions it too). A message of its own wakes it as usual, and is
//!   handed with everything else unread.
//! - The final answer is posted for the agent only when it did not post
//!   during the turn, neither by its own account nor as seen by the runner
//!   (a message from the agent while its turn runs). The runner remembers
//!   the answers it handed out, so seeing one come back is not mistaken for
//!   a mid-turn post, and a `run` does not finish before they are back (they
//!   may wake someone).
//! - Every turn, retries included, counts against the agent's `max_turns` and
//!   the workflow's turn budget. An agent over its own limit is "out of
//!   budget"; an exhausted workflow budget (turns, wall clock, cost) pauses
//!   the instance. Running turns are never killed for a budget. `Resume`
//!   grants the same budgets again; `Restart` renews one agent.
//! - A reopened instance that was paused comes back paused
//!   ([`Runner::set_paused`]); only [`Event::Resume`] ends a pause.
//! - The cycle detector (see [`CycleConfig`]) pauses the instance. A message
//!   from a person (anyone but the agents and `system`), a document change
//!   or a resume starts it over. A `system` message an agent's tool call
//!   caused ([`Event::CausedBy`], the news of tasks its plan made
//!   available) counts as that agent's, so plan → announce → plan cycles
//!   are paused like any ring.
//! - A message is news once, whatever order it is reported in: backlog
//!   ids (unread mentions) mark nothing as seen, so a kickoff reported
//!   after the task news posted behind it still wakes its agents.
//! - In `run` mode a paused instance counts as having no runnable agent, so
//!   a headless run stuck in a loop ends ([`RunOutcome::Incomplete`])
//!   instead of hanging.
//! - A restart keeps the agent's backend session, so it resumes its context.
//! - Agent Mail: a message an agent posts that parses as a status message
//!   (with the bead id the protocol requires, so chat saying "DONE" does not
//!   count) updates its step and context usage (`PROGRESS`) or its label
//!   (`OFFERING_READY`, `DONE`, `FAILED`, `CHECKPOINT`).
//! - In `run` mode, no kickoff and no backlog means nothing to do: a warning
//!   and [`RunOutcome::NothingToDo`]. In `start` mode agents just wait.
//! - After [`Effect::Finish`] every event is ignored.

#![warn(missing_docs)]

mod config;
mod effect;
mod event;
mod loop_guard;
mod seen;
mod state;
mod turn_faults;

pub use config::{
    AgentConfig, CycleConfig, DEFAULT_MAX_TOTAL_TURNS, DEFAULT_MAX_TURNS, DEFAULT_STALL_AFTER,
    RetryPolicy, RunMode, RunnerConfig,
};
pub use effect::{Budget, Effect, PauseReason, PendingWork, RunOutcome};
pub use event::{Event, Millis, TurnActivity, TurnId, TurnOutcome};
pub use state::{AgentMetrics, AgentStatus, AgentView};

use std::time::Duration;

use crate::context::ChannelEntry;
use crate::context::mentions::SYSTEM;
use crate::duration::human;
use crate::protocols::agent_mail;
use loop_guard::{Cycle, CycleDetector};
use state::{Activity, AgentState, Phase, Turn};

/// Final answers remembered per agent until seen back in the channel.
use seen::Seen;
pub use turn_faults::MAX_CONNECTION_LOSSES;
use turn_faults::{and_list, budget_text, fail_turn, kill_running, lose_connection};

const MAX_PENDING_ANSWERS: usize = 8;
/// With streamed chunks (posted as they come, many a turn), the most
/// remembered.
const MAX_PENDING_STREAM: usize = 64;

/// The agent runner of one instance. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct Runner {
    config: RunnerConfig,
    agents: Vec<AgentState>,
    started: bool,
    finished: bool,
    /// The channel ids already reported (a duplicate is ignored).
    seen: Seen,
    next_turn: u64,
    /// Whether any turn ever started.
    ever_ran: bool,
    total_turns: u32,
    /// Where the current workflow budget started (renewed on resume).
    budget_turns_base: u32,
    budget_clock_base: Millis,
    budget_cost_base: f64,
    pause: Option<PauseReason>,
    cycles: Option<CycleDetector>,
    /// System messages not yet seen that an agent's tool call caused
    /// ([`Event::CausedBy`]): id → agent.
    caused: std::collections::BTreeMap<u64, String>,
    /// Messages whose wake waits for the turn that caused them (see
    /// [`Hold`]): id → what it waits for.
    held: std::collections::BTreeMap<u64, Hold>,
}

/// What a message an agent's turn caused ([`Event::CausedBy`]: the news
/// of a task it completed) waits for before it wakes anyone: that turn's
/// end, then its final answer seen in the channel. The answer often
/// mentions the same agents ("@w2 the schema is done"), so they get one
/// turn with both instead of two, the second finding nothing to do.
#[derive(Clone, Debug)]
enum Hold {
    /// The causing turn still runs.
    Turn { agent: String, turn: TurnId },
    /// It ended; its answer, handed to the driver, is not back yet.
    Answer { agent: String, text: String },
}

/// At most this many [`Event::CausedBy`] notes wait for their message.
const MAX_CAUSED: usize = 256;

impl Runner {
    /// A runner for `config`'s agents, all idle, before [`Event::Started`].
    pub fn new(config: RunnerConfig) -> Self {
        let agents = config
            .agents
            .iter()
            .map(|a| {
                let mut state = AgentState::new(
                    a.name.clone(),
                    a.max_turns.unwrap_or(config.default_max_turns),
                    a.turn_timeout,
                );
                state.session_id = a.session_id.clone();
                state
            })
            .collect();
        let cycles = config.cycle.clone().map(CycleDetector::new);
        Runner {
            config,
            agents,
            started: false,
            finished: false,
            seen: Seen::default(),
            next_turn: 1,
            ever_ran: false,
            total_turns: 0,
            budget_turns_base: 0,
            budget_clock_base: Millis(0),
            budget_cost_base: 0.0,
            pause: None,
            cycles,
            caused: Default::default(),
            held: Default::default(),
        }
    }

    /// Tells the runner of a reopened instance that the channel already
    /// holds messages up to `last_id` before [`Event::Started`]: they are
    /// history, not news, and a restart with nothing unread is not a
    /// workflow without a kickoff.
    pub fn set_history(&mut self, last_id: u64) {
        self.seen.history(last_id);
    }

    /// Tells the runner of a reopened instance that it was paused when it
    /// stopped (the engine keeps the pause, see `engine::pause`), before
    /// [`Event::Started`]: no turn starts until [`Event::Resume`]. Nothing
    /// is posted; the driver tells front ends.
    pub fn set_paused(&mut self, reason: PauseReason) {
        self.pause = Some(reason);
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &RunnerConfig {
        &self.config
    }

    /// Handles one event that happened at `now`; returns what to do, in order.
    pub fn handle(&mut self, now: Millis, event: Event) -> Vec<Effect> {
        let mut fx = Vec::new();
        if self.finished {
            return fx;
        }
        match event {
            Event::Started { kickoff, backlog } => self.on_started(now, kickoff, backlog, &mut fx),
            Event::MessagePosted(entry) => {
                let mail = agent_mail::from_channel_message(&entry.message);
                self.on_message(&entry, mail.as_ref(), &mut fx);
            }
            Event::MessageRead { entry, mail } => {
                self.on_message(&entry, mail.as_deref(), &mut fx);
            }
            Event::AnswerLost { agent, text } => {
                if let Some(a) = self.agent_mut(&agent)
                    && let Some(i) = a.pending_answers.iter().position(|t| *t == text)
                {
                    a.pending_answers.remove(i);
                }
            }
            Event::InboxAcked { agent, through } => {
                if let Some(a) = self.agent_mut(&agent) {
                    a.ack(through);
                }
            }
            Event::TurnStarted { agent, turn } => {
                if let Some(t) = self.agent_mut(&agent).and_then(|a| a.turn_mut(turn)) {
                    t.activity = Activity::Thinking;
                    t.last_activity = now;
                    t.stalled = false;
                }
            }
            Event::Backend { agent, turn, event } => {
                self.on_backend(now, &agent, turn, event, &mut fx)
            }
            Event::TurnFinished {
                agent,
                turn,
                outcome,
            } => self.on_turn_finished(now, &agent, turn, outcome, &mut fx),
            Event::DocumentChanged => {
                if let Some(c) = &mut self.cycles {
                    c.reset();
                }
            }
            Event::Stop { agent } => {
                if let Some(a) = self.agent_mut(&agent) {
                    kill_running(a, &mut fx);
                    a.phase = Phase::Stopped;
                }
            }
            Event::Cancel { agent } => {
                if let Some(a) = self.agent_mut(&agent)
                    && let Phase::Running(t) = &a.phase
                {
                    let through = a
                        .unread
                        .iter()
                        .take_while(|id| t.messages.contains(id))
                        .last()
                        .copied();
                    kill_running(a, &mut fx);
                    if let Some(through) = through {
                        a.ack(through);
                        fx.push(Effect::Ack {
                            agent: a.name.clone(),
                            through,
                        });
                    }
                }
            }
            Event::Restart { agent } => {
                if let Some(a) = self.agent_mut(&agent) {
                    kill_running(a, &mut fx);
                    a.phase = Phase::Idle;
                    a.failures = 0;
                    a.connection_losses = 0;
                    a.budget_turns = 0;
                }
            }
            Event::Mentioned { agent, id } => {
                if let Some(a) = self.agent_mut(&agent)
                    && id > a.acked_through
                {
                    a.unread.insert(id);
                }
            }
            Event::CausedBy { agent, id } => {
                if !self.seen.contains(id) && self.is_agent(&agent) {
                    self.caused.insert(id, agent);
                    while self.caused.len() > MAX_CAUSED {
                        self.caused.pop_first();
                    }
                }
            }
            Event::Resume => self.on_resume(now, &mut fx),
            Event::Approval { agent, waiting } => {
                if let Some(Phase::Running(t)) = self.agent_mut(&agent).map(|a| &mut a.phase) {
                    match (waiting, t.waiting_since) {
                        (true, None) => t.waiting_since = Some(now),
                        (false, Some(since)) => {
                            // The wait does not count against the timeout.
                            t.started_at = t.started_at.after(now.since(since));
                            t.waiting_since = None;
                            t.last_activity = now;
                            t.stalled = false;
                        }
                        _ => {}
                    }
                }
            }
            Event::Tick => self.on_tick(now, &mut fx),
        }
        self.schedule(now, &mut fx);
        let finish = self.finish_if_done();
        self.publish(&mut fx);
        fx.extend(finish);
        fx
    }

    /// Restores an agent's counters kept from an earlier run (turns,
    /// tokens, cost: see `engine::metrics`). Budgets still count from this
    /// start: the restored spend is their base.
    pub fn restore_metrics(&mut self, agent: &str, restore: impl FnOnce(&mut AgentMetrics)) {
        if let Some(a) = self.agents.iter_mut().find(|a| a.name == agent) {
            restore(&mut a.metrics);
        }
        self.budget_cost_base = self.total_cost();
    }

    /// Every agent, in workflow order.
    pub fn agents(&self) -> Vec<AgentView> {
        self.agents.iter().map(|a| self.view(a)).collect()
    }

    /// One agent, if it exists.
    pub fn agent(&self, name: &str) -> Option<AgentView> {
        self.agents
            .iter()
            .find(|a| a.name == name)
            .map(|a| self.view(a))
    }

    /// The ids of `agent`'s unacknowledged messages, oldest first (empty for
    /// an unknown agent).
    pub fn unread(&self, agent: &str) -> Vec<u64> {
        self.agents
            .iter()
            .find(|a| a.name == agent)
            .map(|a| a.unread.iter().copied().collect())
            .unwrap_or_default()
    }

    /// Why the instance is paused, if it is.
    pub fn pause_reason(&self) -> Option<&PauseReason> {
        self.pause.as_ref()
    }

    /// Whether [`Effect::Finish`] was emitted.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The earliest time at which an [`Event::Tick`] would change something
    /// (a retry falls due, a turn stalls or times out), so the driver can
    /// sleep until then.
    pub fn next_deadline(&self) -> Option<Millis> {
        if self.finished {
            return None;
        }
        self.agents
            .iter()
            .filter_map(|a| match &a.phase {
                Phase::RetryWait { at, .. } => Some(*at),
                Phase::Running(t) if t.waiting_since.is_some() => None,
                Phase::Running(t) => {
                    let stall =
                        (!t.stalled).then(|| t.last_activity.after(self.config.stall_after));
                    let timeout = a.turn_timeout.map(|d| t.started_at.after(d));
                    stall.into_iter().chain(timeout).min()
                }
                _ => None,
            })
            .min()
    }

    fn view(&self, a: &AgentState) -> AgentView {
        AgentView {
            name: a.name.clone(),
            status: a.status(self.budget_paused()),
            metrics: a.metrics_view(),
            session_id: a.session_id.clone(),
        }
    }

    fn agent_mut(&mut self, name: &str) -> Option<&mut AgentState> {
        self.agents.iter_mut().find(|a| a.name == name)
    }

    fn is_agent(&self, name: &str) -> bool {
        self.agents.iter().any(|a| a.name == name)
    }

    fn budget_paused(&self) -> bool {
        matches!(self.pause, Some(PauseReason::Budget(_)))
    }

    fn on_started(
        &mut self,
        now: Millis,
        kickoff: Option<ChannelEntry>,
        backlog: Vec<(String, u64)>,
        fx: &mut Vec<Effect>,
    ) {
        if self.started {
            return;
        }
        self.started = true;
        self.budget_clock_base = now;
        // Backlog ids are mentions, not reports of the messages: they mark
        // nothing as seen, so a kickoff older than a backlog entry (the
        // task news posted after it) is still news when it comes.
        let backlog_news = !backlog.is_empty();
        for (agent, id) in backlog {
            if let Some(a) = self.agent_mut(&agent)
                && id > a.acked_through
            {
                a.unread.insert(id);
            }
        }
        match kickoff {
            Some(entry) => {
                let wakes_someone = entry.mentions.iter().any(|m| self.is_agent(m));
                let mail = agent_mail::from_channel_message(&entry.message);
                if self.on_message(&entry, mail.as_ref(), fx) && !wakes_someone {
                    fx.push(Effect::PostSystem {
                        text: format!(
                            "Warning: the kickoff mentions no agent, so nobody was woken. \
                             Address agents by writing @ and their name ({}).",
                            self.agent_names()
                        ),
                    });
                }
            }
            None if self.config.mode == RunMode::Run
                && self.seen.is_empty()
                && !backlog_news
                && self.agents.iter().all(|a| a.unread.is_empty()) =>
            {
                fx.push(Effect::PostSystem {
                    text: "Warning: the workflow has no kickoff, so nobody was woken.".into(),
                });
            }
            None => {}
        }
    }

    fn agent_names(&self) -> String {
        let names: Vec<&str> = self.agents.iter().map(|a| a.name.as_str()).collect();
        names.join(", ")
    }

    /// Records a channel entry; false if it was a duplicate.
    fn on_message(
        &mut self,
        entry: &ChannelEntry,
        mail: Option<&agent_mail::MailRecord>,
        fx: &mut Vec<Effect>,
    ) -> bool {
        if !self.seen.insert(entry.id) {
            return false;
        }
        let from = entry.from.as_str();
        let mut woken = Vec::new();
        for a in &mut self.agents {
            if a.name == from {
                let ours = a
                    .pending_answers
                    .iter()
                    .position(|t| t.trim() == entry.message.trim());
                match (ours, &mut a.phase) {
                    (Some(i), _) => {
                        a.pending_answers.remove(i);
                    }
                    (None, Phase::Running(turn)) => turn.posted = true,
                    (None, _) => {}
                }
                a.apply_mail(mail);
            } else if entry.mentions.contains(&a.name) {
                if entry.id > a.acked_through {
                    a.unread.insert(entry.id);
                }
                woken.push(a.name.clone());
            }
        }
        // A system message an agent's call caused counts as the agent's,
        // and wakes nobody before that agent's turn is over.
        let cause = self.caused.remove(&entry.id).filter(|_| from == SYSTEM);
        if let Some(causer) = &cause
            && !woken.is_empty()
        {
            self.hold(entry.id, causer);
        }
        let from = cause.as_deref().unwrap_or(from);
        let sender_is_agent = self.is_agent(from);
        let Some(cycles) = &mut self.cycles else {
            return true;
        };
        if !sender_is_agent {
            if from != SYSTEM {
                cycles.reset();
            }
        } else if !woken.is_empty()
            && let Some(cycle) = cycles.record(from, &woken)
            && self.pause.is_none()
        {
            self.pause_for_cycle(cycle, fx);
        }
        true
    }

    /// Holds message `id`'s wake until `causer`'s running turn, if it has
    /// one, is over (see [`Hold`]).
    fn hold(&mut self, id: u64, causer: &str) {
        if let Some(Phase::Running(t)) = self
            .agents
            .iter()
            .find(|a| a.name == causer)
            .map(|a| &a.phase)
        {
            let hold = Hold::Turn {
                agent: causer.to_string(),
                turn: t.id,
            };
            self.held.insert(id, hold);
        }
    }

    /// `agent`'s `turn` ended and its final answer `text` (if any) was
    /// handed to the driver: what the turn held now waits for the answer.
    fn turn_over(&mut self, agent: &str, turn: TurnId, text: Option<&str>) {
        for hold in self.held.values_mut() {
            if let Hold::Turn { agent: a, turn: t } = hold
                && a == agent
                && *t == turn
                && let Some(text) = text
            {
                *hold = Hold::Answer {
                    agent: agent.to_string(),
                    text: text.to_string(),
                };
            }
        }
    }

    /// Drops the holds whose turn is over and whose answer is back (or
    /// will never come: lost, or the turn was stopped or failed).
    fn release_holds(&mut self) {
        let agents = &self.agents;
        let find = |name: &str| agents.iter().find(|a| a.name == name);
        self.held.retain(|_, hold| match hold {
            Hold::Turn { agent, turn } => {
                find(agent).is_some_and(|a| matches!(&a.phase, Phase::Running(t) if t.id == *turn))
            }
            Hold::Answer { agent, text } => {
                find(agent).is_some_and(|a| a.pending_answers.iter().any(|p| p == text))
            }
        });
    }

    fn pause_for_cycle(&mut self, cycle: Cycle, fx: &mut Vec<Effect>) {
        let pattern: Vec<String> = cycle
            .pattern
            .iter()
            .map(|(from, to)| format!("{from} → {}", to.join(" + ")))
            .collect();
        let text = format!(
            "Paused: {} keep waking each other ({}, {} times in a row) with no message from \
             user and no document change, which looks like a loop. Their messages stay queued; \
             resume to continue.",
            and_list(&cycle.agents),
            pattern.join(", "),
            cycle.repeats
        );
        self.pause(
            PauseReason::Cycle {
                agents: cycle.agents,
                pattern: cycle.pattern,
                repeats: cycle.repeats,
            },
            text,
            fx,
        );
    }

    /// Pauses with `reason`: [`Effect::Paused`] comes before the banner,
    /// so the driver keeps the pause before anyone can see it.
    fn pause(&mut self, reason: PauseReason, text: String, fx: &mut Vec<Effect>) {
        fx.push(Effect::Paused {
            reason: reason.clone(),
        });
        fx.push(Effect::PostSystem { text });
        self.pause = Some(reason);
    }

    fn on_backend(
        &mut self,
        now: Millis,
        agent: &str,
        turn: TurnId,
        event: TurnActivity,
        fx: &mut Vec<Effect>,
    ) {
        let Some(a) = self.agent_mut(agent) else {
            return;
        };
        let Some(t) = a.turn_mut(turn) else {
            return;
        };
        t.last_activity = now;
        t.stalled = false;
        match event {
            TurnActivity::Thinking | TurnActivity::Text => t.activity = Activity::Thinking,
            TurnActivity::ToolCall { name } => t.activity = Activity::Tool(name),
            TurnActivity::Usage {
                tokens_in,
                tokens_out,
                cost_usd,
            } => {
                let m = &mut a.metrics;
                m.tokens_in = m.tokens_in.saturating_add(tokens_in);
                m.tokens_out = m.tokens_out.saturating_add(tokens_out);
                if let Some(cost) = cost_usd.filter(|c| c.is_finite() && *c > 0.0) {
                    m.cost_usd += cost;
                }
            }
            TurnActivity::SessionId { id } => a.session_id = Some(id),
            TurnActivity::Stream { text } => {
                // Posted like an answer and remembered like one, so seeing
                // it back is not taken for a post of the agent's own (which
                // would keep the rest of its answer from being posted).
                t.activity = Activity::Thinking;
                fx.push(a.post_for_it(text, MAX_PENDING_STREAM));
            }
        }
    }

    fn on_turn_finished(
        &mut self,
        now: Millis,
        agent: &str,
        turn: TurnId,
        outcome: TurnOutcome,
        fx: &mut Vec<Effect>,
    ) {
        let retry = self.config.retry.clone();
        let Some(a) = self.agent_mut(agent) else {
            return;
        };
        let Phase::Running(t) = &a.phase else {
            return;
        };
        if t.id != turn {
            return;
        }
        let Phase::Running(t) = std::mem::replace(&mut a.phase, Phase::Idle) else {
            return;
        };
        let mut answer = None;
        match outcome {
            TurnOutcome::Success {
                delivered,
                posted,
                final_text,
                session_id,
            } => {
                if session_id.is_some() {
                    a.session_id = session_id;
                }
                a.failures = 0;
                a.connection_losses = 0;
                // Ack up to the last id such that every unread id up to it
                // was handed over: in the prompt or during the turn.
                let through = a
                    .unread
                    .iter()
                    .take_while(|id| t.messages.contains(id) || delivered.contains(id))
                    .last()
                    .copied();
                // The answer is posted before the ack: a crash between the
                // two leaves an answered message unacknowledged (recovery
                // sees the post and acks it), never acked without answer.
                let text = final_text.unwrap_or_default();
                let already_said = posted || t.posted;
                if !already_said && !text.trim().is_empty() {
                    answer = Some(text.clone());
                    fx.push(a.post_for_it(text, MAX_PENDING_ANSWERS));
                }
                if let Some(through) = through {
                    a.ack(through);
                    fx.push(Effect::Ack {
                        agent: a.name.clone(),
                        through,
                    });
                }
            }
            TurnOutcome::Failure { reason, session_id } => {
                if session_id.is_some() {
                    a.session_id = session_id;
                }
                fail_turn(a, reason, now, &retry, fx);
            }
            TurnOutcome::ConnectionLost { reason, session_id } => {
                if session_id.is_some() {
                    a.session_id = session_id;
                }
                lose_connection(a, reason, now, &retry, fx);
            }
        }
        self.turn_over(agent, turn, answer.as_deref());
    }

    fn on_resume(&mut self, now: Millis, fx: &mut Vec<Effect>) {
        let mut resumed = false;
        if let Some(reason) = self.pause.take() {
            resumed = true;
            if matches!(reason, PauseReason::Budget(_)) {
                self.budget_turns_base = self.total_turns;
                self.budget_clock_base = now;
                self.budget_cost_base = self.total_cost();
            }
        }
        for a in &mut self.agents {
            if matches!(a.phase, Phase::OutOfBudget) {
                a.phase = Phase::Idle;
                a.budget_turns = 0;
                resumed = true;
            }
        }
        if let Some(c) = &mut self.cycles {
            c.reset();
        }
        if resumed {
            fx.push(Effect::PostSystem {
                text: "Resumed: queued messages are being delivered again.".into(),
            });
            fx.push(Effect::Resumed);
        }
    }

    fn on_tick(&mut self, now: Millis, fx: &mut Vec<Effect>) {
        let retry = self.config.retry.clone();
        let stall_after = self.config.stall_after;
        for a in &mut self.agents {
            match &mut a.phase {
                Phase::RetryWait { at, .. } if *at <= now => {
                    a.phase = Phase::Idle;
                }
                Phase::Running(t) if t.waiting_since.is_some() => {}
                Phase::Running(t) => {
                    if let Some(limit) = a.turn_timeout
                        && now.since(t.started_at) >= limit
                    {
                        let turn = t.id;
                        fx.push(Effect::KillTurn {
                            agent: a.name.clone(),
                            turn,
                        });
                        a.phase = Phase::Idle;
                        let reason = format!("no result after {} (its timeout)", human(limit));
                        fail_turn(a, reason, now, &retry, fx);
                    } else if now.since(t.last_activity) >= stall_after {
                        t.stalled = true;
                    }
                }
                _ => {}
            }
        }
    }

    fn total_cost(&self) -> f64 {
        self.agents.iter().map(|a| a.metrics.cost_usd).sum()
    }

    /// The workflow budget that ran out, if one did.
    fn exhausted_budget(&self, now: Millis) -> Option<Budget> {
        let limit = self.config.max_total_turns;
        if self.total_turns - self.budget_turns_base >= limit {
            return Some(Budget::Turns { limit });
        }
        if let Some(limit) = self.config.wall_clock_budget
            && now.since(self.budget_clock_base) >= limit
        {
            return Some(Budget::WallClock {
                limit_ms: u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
            });
        }
        if let Some(limit_usd) = self.config.cost_budget_usd {
            let spent_usd = self.total_cost() - self.budget_cost_base;
            if spent_usd >= limit_usd {
                return Some(Budget::Cost {
                    limit_usd,
                    spent_usd,
                });
            }
        }
        None
    }

    /// Starts a turn for every idle agent with unread messages, unless a
    /// limit stops it.
    fn schedule(&mut self, now: Millis, fx: &mut Vec<Effect>) {
        if !self.started {
            return;
        }
        self.release_holds();
        for i in 0..self.agents.len() {
            if self.pause.is_some() {
                return;
            }
            let a = &self.agents[i];
            if !matches!(a.phase, Phase::Idle)
                || a.unread.iter().all(|id| self.held.contains_key(id))
            {
                continue;
            }
            if a.budget_turns >= a.max_turns {
                let text = format!(
                    "{} reached its limit of {} turns; its {} unread message(s) stay unread. \
                     Resume or restart it to allow {} more.",
                    a.name,
                    a.max_turns,
                    a.unread.len(),
                    a.max_turns
                );
                self.agents[i].phase = Phase::OutOfBudget;
                fx.push(Effect::PostSystem { text });
                continue;
            }
            if let Some(budget) = self.exhausted_budget(now) {
                let text = budget_text(&budget);
                self.pause(PauseReason::Budget(budget), text, fx);
                return;
            }
            let turn = TurnId(self.next_turn);
            self.next_turn += 1;
            self.total_turns += 1;
            self.ever_ran = true;
            let a = &mut self.agents[i];
            let messages: Vec<u64> = a.unread.iter().copied().collect();
            a.budget_turns += 1;
            a.metrics.turns += 1;
            fx.push(Effect::StartTurn {
                agent: a.name.clone(),
                turn,
                messages: messages.clone(),
                session_id: a.session_id.clone(),
                attempt: a.failures,
                number: a.metrics.turns,
            });
            a.phase = Phase::Running(Turn {
                id: turn,
                messages,
                started_at: now,
                last_activity: now,
                activity: Activity::Starting,
                stalled: false,
                posted: false,
                waiting_since: None,
            });
        }
    }

    /// In `run` mode, the [`Effect::Finish`] once nothing can happen any more.
    fn finish_if_done(&mut self) -> Option<Effect> {
        if self.config.mode != RunMode::Run || !self.started || self.finished {
            return None;
        }
        // A final answer handed out but not yet seen back may wake someone.
        if self
            .agents
            .iter()
            .any(|a| a.is_working() || !a.pending_answers.is_empty())
        {
            return None;
        }
        let runnable_waiting = self
            .agents
            .iter()
            .any(|a| matches!(a.phase, Phase::Idle) && !a.unread.is_empty());
        if runnable_waiting && self.pause.is_none() {
            return None;
        }
        self.finished = true;
        let budget_paused = self.budget_paused();
        let pending: Vec<PendingWork> = self
            .agents
            .iter()
            .filter(|a| !a.unread.is_empty())
            .map(|a| PendingWork {
                agent: a.name.clone(),
                unread: a.unread.len(),
                status: a.status(budget_paused),
            })
            .collect();
        let outcome = if !pending.is_empty() {
            RunOutcome::Incomplete { pending }
        } else if self.ever_ran {
            RunOutcome::Completed
        } else {
            RunOutcome::NothingToDo
        };
        Some(Effect::Finish { outcome })
    }

    /// Status and metrics changes since the last call, as effects.
    fn publish(&mut self, fx: &mut Vec<Effect>) {
        let budget_paused = self.budget_paused();
        for a in &mut self.agents {
            let status = a.status(budget_paused);
            if status != a.shown_status {
                a.shown_status = status.clone();
                fx.push(Effect::StatusChanged {
                    agent: a.name.clone(),
                    status,
                });
            }
            let metrics = a.metrics_view();
            if metrics != a.shown_metrics {
                a.shown_metrics = metrics.clone();
                fx.push(Effect::MetricsChanged {
                    agent: a.name.clone(),
                    metrics,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests;
