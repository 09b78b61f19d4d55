//! The engine's event loop: runner decisions in, effects out. Everything
//! that changes the instance happens here, in one task, in order. The loop
//! forwards: commands to their place (`commands`), the turns' reports to
//! turn supervision ([`Turns`]) and the board's changes to task announcing
//! ([`Announce`]); those actors own their state and answer with an
//! [`Outbox`] the loop carries out.

mod commands;
mod start;
mod state_events;
mod turn_end;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{broadcast, mpsc};
use tokio::time::Instant;

use super::announce::{self, Announce};
use super::event::EngineEvent;
use super::launch::LaunchContext;
use super::link::Envelope;
use super::ops::{OpsFiles, OpsState};
use super::outbox::Outbox;
use super::sessions;
use super::turns::{Relayed, TurnNews, Turns};
use crate::agents::runner::{AgentStatus, Effect, Event, Millis, RunOutcome, Runner};
use crate::context::mentions::SYSTEM;
use crate::context::{ContextEvent, blocking};
use crate::mcp::McpHandle;

/// How long a shutdown waits for stopped turns to report.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(10);

/// How many notices a snapshot carries.
const RECENT_NOTICES: usize = 8;

/// The loop's state.
pub struct Driver {
    pub runner: Runner,
    /// Shared with the threads that launch turns.
    pub cx: Arc<LaunchContext>,
    /// Turn supervision: the turns being started and running.
    turns: Turns,
    /// Task announcing: the board's news and its holders' liveness.
    announce: Announce,
    /// The context's MCP server (`None` with `context: false`).
    pub mcp: Option<McpHandle>,
    pub events: broadcast::Sender<EngineEvent>,
    pub ctx_events: broadcast::Receiver<ContextEvent>,
    pub commands: mpsc::UnboundedReceiver<Envelope>,
    pub notices: Vec<String>,
    /// What repairing the agents' worktrees did at start (posted to the
    /// channel as system lines).
    pub repairs: Vec<String>,
    /// The latest notices, for snapshots (see `Snapshot::notices`).
    recent_notices: std::cell::RefCell<VecDeque<String>>,
    /// Whether the state root is a temporary folder to remove at the end.
    pub temporary_state: bool,
    ops: OpsState,
    ops_files: OpsFiles,
    queue: VecDeque<Event>,
    /// The last channel id reported to front ends and the runner.
    reported: u64,
    /// The `spawn:` slots already started (see `spawn`).
    spawned: std::collections::BTreeSet<String>,
    clock: Instant,
    /// When the engine started (for front ends' up time).
    started: chrono::DateTime<chrono::Utc>,
    /// The messages each agent's current turn has again because it put
    /// them off until this wake (forgotten when the turn succeeds).
    woken_again: HashMap<String, Vec<u64>>,
    /// Each agent's lasting counters as last written to its folder.
    kept_metrics: HashMap<String, super::metrics::Lasting>,
    /// Writes the counters behind the loop.
    behind: super::behind::Behind,
    /// Writes final answers and acks behind the loop, in order.
    answers: super::answers::Answers,
    /// Writes the person's posts behind the loop, in order (`None` once
    /// the run ended).
    posts: Option<super::jobs::Posts>,
    /// A final answer waiting for the ack that follows it in the same
    /// round of effects (they are written as one job).
    answer_held: Option<super::answers::Job>,
    /// Answers (and acks) the writer could not write.
    lost_rx: mpsc::UnboundedReceiver<super::answers::Lost>,
    /// State files (counters, session ids) written behind the loop that
    /// could not be written: told to the person.
    behind_failed: mpsc::UnboundedReceiver<String>,
    /// What the hosts' connections say as it happens (a master that ended)
    /// and its sender (kept: the channel stays open without hosts).
    host_notices: mpsc::UnboundedReceiver<String>,
    _host_tx: mpsc::UnboundedSender<String>,
    /// The session id last saved for each agent (saved once per change:
    /// the id a turn started with is saved mid-turn, not again at its end).
    saved_sessions: HashMap<String, String>,
    /// Where the pause is kept, so reopening does not undo it.
    pause_record: super::pause::PauseRecord,
    outcome: Option<RunOutcome>,
}

impl Driver {
    /// A loop over a started MCP server and runner.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        mut runner: Runner,
        cx: LaunchContext,
        mcp: Option<McpHandle>,
        events: broadcast::Sender<EngineEvent>,
        ctx_events: broadcast::Receiver<ContextEvent>,
        commands: mpsc::UnboundedReceiver<Envelope>,
        mut notices: Vec<String>,
        temporary_state: bool,
    ) -> Self {
        let (lost_tx, lost_rx) = mpsc::unbounded_channel();
        let (behind_tx, behind_failed) = mpsc::unbounded_channel();
        let (host_tx, host_notices) = mpsc::unbounded_channel();
        for conn in cx.hosts.values().flatten() {
            conn.link.tell(host_tx.clone());
        }
        let answers = super::answers::Answers::start(cx.context.clone(), lost_tx);
        let posts = super::jobs::Posts::start(cx.context.clone());
        // Counters from earlier runs: reopening does not reset them.
        let mut kept_metrics = HashMap::new();
        for name in cx.workflow.agent_names() {
            if let Some(kept) = super::metrics::load(&cx.state_root, &name) {
                runner.restore_metrics(&name, |m| kept.apply(m));
                kept_metrics.insert(name, kept);
            }
        }
        let ops = super::ops::load_state(&cx.state_root);
        let ops_files = OpsFiles::new(&cx.state_root);
        let pause_record = super::pause::PauseRecord::of(&cx.state_root, temporary_state)
            .unwrap_or_else(|e| {
                notices.push(format!("{e}; a pause will not outlive this run"));
                super::pause::PauseRecord::default()
            });
        let announce = Announce::new(&cx);
        Driver {
            runner,
            cx: Arc::new(cx),
            mcp,
            events,
            turns: Turns::new(),
            announce,
            ctx_events,
            commands,
            notices,
            repairs: Vec::new(),
            recent_notices: Default::default(),
            temporary_state,
            ops,
            ops_files,
            queue: VecDeque::new(),
            reported: 0,
            spawned: Default::default(),
            clock: Instant::now(),
            started: chrono::Utc::now(),
            kept_metrics,
            behind: super::behind::Behind::start(behind_tx),
            behind_failed,
            host_notices,
            _host_tx: host_tx,
            posts: Some(posts),
            answers,
            answer_held: None,
            lost_rx,
            saved_sessions: HashMap::new(),
            pause_record,
            woken_again: HashMap::new(),
            outcome: None,
        }
    }

    fn now(&self) -> Millis {
        Millis(self.clock.elapsed().as_millis() as u64)
    }

    fn emit(&self, event: EngineEvent) {
        let _ = self.events.send(event);
    }

    fn notice(&self, text: impl Into<String>) {
        let mut text = text.into();
        crate::secrets::redact_in_place(&mut text);
        tracing::warn!("{text}");
        {
            let mut recent = self.recent_notices.borrow_mut();
            if recent.len() == RECENT_NOTICES {
                recent.pop_front();
            }
            recent.push_back(text.clone());
        }
        self.emit(EngineEvent::Notice { text });
    }

    /// Carries out what an actor answered: front ends first, then the
    /// person, then the runner's queue (drained by the caller).
    fn take(&mut self, out: Outbox) {
        let Outbox {
            emits,
            notices,
            events,
        } = out;
        for event in emits {
            self.emit(event);
        }
        for text in notices {
            self.notice(text);
        }
        self.queue.extend(events);
    }

    /// Runs until the run finishes or a shutdown; returns how it ended.
    pub async fn run(mut self) -> RunOutcome {
        for n in std::mem::take(&mut self.notices) {
            self.notice(n);
        }
        for text in std::mem::take(&mut self.repairs) {
            tracing::warn!("{text}");
            self.post(SYSTEM, &crate::context::mentions::inert(&text));
        }
        self.begin();
        loop {
            if let Some(outcome) = self.outcome.take() {
                return self.end(outcome).await;
            }
            let deadline = self
                .runner
                .next_deadline()
                .map(|m| self.clock + Duration::from_millis(m.0));
            let deferred = self.ops.next_due().map(|t| {
                let wait = (t - chrono::Utc::now()).to_std().unwrap_or_default();
                Instant::now() + wait
            });
            let deadline = match (deadline, deferred) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            tokio::select! {
                Some(cmd) = self.commands.recv() => self.command(cmd),
                Some(lost) = self.lost_rx.recv() => self.answer_lost(lost),
                Some(failed) = self.behind_failed.recv() => self.notice(failed),
                Some(said) = self.host_notices.recv() => self.notice(said),
                news = self.turns.next() => self.turn_news(news),
                ev = self.ctx_events.recv() => self.context_event(ev),
                () = self.announce.tick() => {
                    let mut out = Outbox::default();
                    self.announce.check_liveness(&self.cx, &mut out);
                    self.take(out);
                }
                () = sleep_until(deadline) => {
                    self.deliver_deferred();
                    self.handle(Event::Tick);
                }
            }
        }
    }

    /// Forwards what a turn reported to where it is handled.
    fn turn_news(&mut self, news: TurnNews) {
        match news {
            TurnNews::Launched(launched) => self.turn_launched(launched),
            TurnNews::Relayed {
                agent,
                turn,
                relayed: Relayed::Update(update),
            } => self.turn_update(agent, turn, update),
            TurnNews::Relayed {
                agent,
                turn,
                relayed:
                    Relayed::Done {
                        outcome,
                        committed,
                        lost,
                    },
            } => self.turn_done(agent, turn, outcome, committed, lost),
        }
    }

    /// A turn's process is up (or could not be started).
    fn turn_launched(&mut self, launched: super::turns::Launched) {
        let mut out = Outbox::default();
        self.turns.launched(&self.cx, launched, &mut out);
        self.take(out);
        self.drain();
    }

    /// Feeds one event to the runner and carries out the effects.
    fn handle(&mut self, event: Event) {
        self.queue.push_back(event);
        self.drain();
    }

    fn drain(&mut self) {
        while let Some(event) = self.queue.pop_front() {
            let now = self.now();
            for effect in self.runner.handle(now, event) {
                self.effect(effect);
            }
            self.queue_held_answer();
        }
    }

    /// Hands the final answer held for its ack to the writer as it is.
    fn queue_held_answer(&mut self) {
        if let Some(job) = self.answer_held.take() {
            self.answers.queue(job);
        }
    }

    /// An answer (or ack) the writer could not write: the person is told,
    /// and the runner stops waiting to see the answer in the channel.
    fn answer_lost(&mut self, lost: super::answers::Lost) {
        let super::answers::Lost { agent, text, error } = lost;
        if text.is_empty() {
            self.notice(error);
            return;
        }
        self.notice(format!(
            "cannot post {agent}'s final answer: {error}; the messages it answered stay unacknowledged"
        ));
        self.handle(Event::AnswerLost { agent, text });
    }

    fn effect(&mut self, effect: Effect) {
        match effect {
            Effect::StartTurn {
                agent,
                turn,
                messages,
                session_id,
                number,
                ..
            } => {
                let messages = self.with_next_wake(&agent, messages);
                self.start_turn(agent, turn, messages, session_id, number)
            }
            Effect::Ack { agent, through } => {
                // Behind the loop, after the answers queued before it; a
                // turn's ack rides with its answer.
                let job = match self.answer_held.take() {
                    Some(super::answers::Job::Answer { agent: a, text, .. }) if a == agent => {
                        super::answers::Job::Answer {
                            agent: a,
                            text,
                            then_ack: Some(through),
                        }
                    }
                    held => {
                        if let Some(held) = held {
                            self.answers.queue(held);
                        }
                        super::answers::Job::Ack { agent, through }
                    }
                };
                self.answers.queue(job);
            }
            Effect::KillTurn { agent, turn } => {
                self.cx.context.approvals().close_agent(
                    &agent,
                    "the agent's turn was stopped while the request waited",
                );
                self.turns.kill(&agent, turn);
            }
            Effect::PostSystem { text } => self.post(SYSTEM, &text),
            Effect::PostFinalAnswer { agent, text } => {
                self.queue_held_answer();
                self.answer_held = Some(super::answers::Job::Answer {
                    agent,
                    text,
                    then_ack: None,
                });
            }
            Effect::ScheduleRetry { .. } => {}
            Effect::Paused { reason } => {
                // Kept before its banner is posted: a pause anyone saw
                // survives a crash.
                if let Err(e) = self.pause_record.save(&reason, self.reported) {
                    self.notice(format!(
                        "{e}; reopening the instance will not keep it paused"
                    ));
                }
                self.emit(EngineEvent::Paused { reason })
            }
            Effect::Resumed => {
                if let Err(e) = self.pause_record.clear() {
                    self.notice(e.to_string());
                }
                self.emit(EngineEvent::Resumed)
            }
            Effect::StatusChanged { agent, status } => {
                // Its process is gone for good (until restarted): what it
                // held is free for the others.
                let gone = match &status {
                    AgentStatus::Stopped => Some("was stopped".to_string()),
                    AgentStatus::Failed(why) => Some(format!("failed ({why})")),
                    _ => None,
                };
                if let Some(how) = gone {
                    let mut out = Outbox::default();
                    announce::release_claims_of(&self.cx, &agent, &how, &mut out);
                    self.take(out);
                }
                self.emit(EngineEvent::Status { agent, status })
            }
            Effect::MetricsChanged { agent, metrics } => {
                self.keep_metrics(&agent, &metrics);
                self.emit(EngineEvent::Metrics { agent, metrics })
            }
            Effect::Finish { outcome } => {
                if !self.ops.deferred.is_empty() {
                    self.notice(format!(
                        "{} deferred message(s) were not due before the run ended; they are kept and delivered when the instance runs again",
                        self.ops.deferred.len()
                    ));
                }
                self.outcome = Some(outcome)
            }
        }
    }

    /// Posts a system note about a turn behind the answers queued before
    /// it, so the note follows the answer it is about in the channel.
    fn post_after_answers(&mut self, text: &str) {
        self.queue_held_answer();
        self.answers.queue(super::answers::Job::Note {
            from: SYSTEM.to_string(),
            text: text.to_string(),
        });
    }

    fn post(&mut self, from: &str, text: &str) {
        if let Err(e) = self.cx.context.append(from, text) {
            self.notice(format!("cannot post {from}'s message: {e}"));
        }
    }

    /// The runner starts `agent`'s turn: its messages are marked
    /// delivered behind its previous answer, and turn supervision starts
    /// its process.
    fn start_turn(
        &mut self,
        agent: String,
        turn: crate::agents::runner::TurnId,
        messages: Vec<u64>,
        session: Option<String>,
        number: u32,
    ) {
        let Some(def) = self.cx.workflow.agent(&agent).cloned() else {
            return;
        };
        let mut out = Outbox::default();
        self.turns.prepare_workdir(&self.cx, &def, &mut out);
        self.take(out);
        if let Some(last) = messages.iter().max() {
            // Behind the agent's previous answer (see `answers`).
            self.queue_held_answer();
            self.answers.queue(super::answers::Job::Deliver {
                agent: agent.clone(),
                through: *last,
            });
        }
        // Started on a blocking thread; the loop hears of it as `Launched`.
        self.turns
            .launch(&self.cx, def, turn, messages, session, number);
    }

    /// Keeps `agent`'s session id (durably, behind the loop, newest per
    /// agent winning) when it is not the one already kept.
    fn save_session(&mut self, agent: &str, id: &str) {
        if self.saved_sessions.get(agent).map(String::as_str) == Some(id) {
            return;
        }
        // Behind the loop, like the counters: with ten agents starting at
        // once, ten syncs here would hold every front end's command.
        self.behind.write(
            sessions::path(&self.cx.state_root, agent),
            id.as_bytes().to_vec(),
        );
        self.saved_sessions
            .insert(agent.to_string(), id.to_string());
    }

    /// Writes `agent`'s lasting counters when they changed (a failure is a
    /// notice: the run goes on, only the count after a reopen suffers).
    fn keep_metrics(&mut self, agent: &str, metrics: &crate::agents::runner::AgentMetrics) {
        let lasting = super::metrics::Lasting::of(metrics);
        if self.kept_metrics.get(agent) == Some(&lasting) {
            return;
        }
        match super::metrics::encode(&lasting) {
            Ok(bytes) => {
                self.behind
                    .write(super::metrics::path(&self.cx.state_root, agent), bytes);
                self.kept_metrics.insert(agent.to_string(), lasting);
            }
            Err(e) => tracing::warn!("cannot keep {agent}'s turn counters: {e}"),
        }
    }

    /// Stops what still runs, waits briefly for it, and releases the
    /// instance's resources.
    async fn end(mut self, outcome: RunOutcome) -> RunOutcome {
        let outcome = self.turns.without_tools_outcome(outcome);
        // Nobody will answer any more: the CLIs get a deny, not silence.
        self.cx
            .context
            .approvals()
            .close_all("the instance ended while the request waited");
        let deadline = Instant::now() + SHUTDOWN_WAIT;
        // Turns still being started come up first, to be stopped with the
        // rest.
        while self.turns.any_launching() {
            match tokio::time::timeout_at(deadline, self.turns.next_launched()).await {
                Ok(Some(launched)) => self.turn_launched(launched),
                Ok(None) | Err(_) => break,
            }
        }
        self.turns.stop_all();
        while self.turns.any_running() {
            match tokio::time::timeout_at(deadline, self.turns.next_relayed()).await {
                Ok(Some((agent, turn, Relayed::Done { outcome: o, .. }))) => {
                    if let Some(id) = &o.session_id {
                        self.save_session(&agent, id);
                    }
                    self.turns.ended(&self.cx, &agent, turn);
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        // The ACP agents kept between turns end with the instance.
        crate::agents::backend::acp::end_all_under(&self.cx.state_root).await;
        // The answers and acks still queued land before the last report.
        self.queue_held_answer();
        let answers = std::mem::replace(&mut self.answers, super::answers::Answers::stopped());
        let posts = self.posts.take();
        blocking(move || drop((answers, posts)));
        self.sync_messages();
        let mut out = Outbox::default();
        self.turns.restore_workdirs(&self.cx, &mut out);
        self.take(out);
        if self.temporary_state {
            let _ = std::fs::remove_dir_all(&self.cx.state_root);
        }
        self.emit(EngineEvent::Finished {
            outcome: outcome.clone(),
        });
        if let Some(mcp) = self.mcp.take() {
            mcp.stop().await;
        }
        outcome
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
