//! The engine's event loop: runner decisions in, effects out. Everything
//! that changes the instance happens here, in one task, in order.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{broadcast, mpsc};
use tokio::time::Instant;

use super::command::{Command, CommandFailed, Reply};
use super::event::{AgentSnapshot, EngineEvent, MessageSnapshot, Snapshot};
use super::launch::{self, LaunchContext};
use super::link::Envelope;
use super::ops::{self, OpsFiles, OpsState};
use super::{orphans, sessions};
use crate::agents::backend::event::short_tool_name;
use crate::agents::backend::turn::TurnStopper;
use crate::agents::backend::{BackendEvent, TurnOutcome as BackendOutcome, TurnUpdate};
use crate::agents::runner::{
    AgentStatus, Effect, Event, Millis, RunOutcome, Runner, TurnActivity, TurnId, TurnOutcome,
};
use crate::context::mentions::{SYSTEM, USER};
use crate::context::{ChannelEntry, Since};
use crate::context::{ContextEvent, blocking};
use crate::mcp::McpHandle;
use crate::protocols::agent_ops::parse_ops;
use crate::workflow::BackendKind;

/// How long a shutdown waits for stopped turns to report.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(10);

/// A turn in progress, as the driver tracks it.
struct Running {
    turn: TurnId,
    stopper: TurnStopper,
    start: TurnStart,
}

/// What the loop knew when it launched a turn, kept until the turn ends.
#[derive(Debug, Default)]
struct TurnStart {
    /// The messages the turn delivered (its frontmatter `id` must be the last).
    messages: Vec<u64>,
    /// How often the agent had listed awtui's tools when the turn started,
    /// for CLIs that list them at start (`None`: no such signal).
    tool_lists_at_start: Option<u64>,
    /// The first approval request id the turn could make, to tell the
    /// calls a person or a rule denied from those the CLI refused itself.
    approvals_from: u64,
    /// The agent's own turn number (pane, logs and commits).
    number: u32,
    /// The host connection the turn runs over and which of its masters
    /// was up when it started (a remote turn only).
    link: Option<(Arc<crate::agents::runtime::ssh::Connection>, u64)>,
}

/// A turn whose process is being started on a blocking thread (writing its
/// private files and spawning its CLI wait on the disk and the kernel, up
/// to tens of milliseconds each while git commits fill the disk's queue).
struct Launching {
    turn: TurnId,
    /// The runner stopped the turn before its process was up: stop it as
    /// soon as it is.
    stop: bool,
}

/// A launch's result, handed back to the loop.
struct Launched {
    agent: String,
    turn: TurnId,
    start: TurnStart,
    result: Result<crate::agents::backend::RunningTurn, crate::agents::backend::BackendError>,
}

/// How many notices a snapshot carries.
const RECENT_NOTICES: usize = 8;

/// What the task relaying one turn's updates hands the engine loop.
enum Relayed {
    /// Something the turn did.
    Update(TurnUpdate),
    /// The turn ended. A successful turn in a worktree is committed by the
    /// relay before the loop hears of the end (git's work stays off the
    /// loop, and no next turn starts in the worktree meanwhile); what the
    /// commit had to say, if anything (see `commit::after_turn_of`).
    Done {
        outcome: BackendOutcome,
        committed: Option<String>,
        /// A failed remote turn whose host connection was lost: what to
        /// say (naming the host).
        lost: Option<String>,
    },
}

/// The loop's state.
pub struct Driver {
    pub runner: Runner,
    /// Shared with the threads that launch turns.
    pub cx: Arc<LaunchContext>,
    /// Turns whose process is being started, by agent.
    launching: HashMap<String, Launching>,
    launched_tx: mpsc::UnboundedSender<Launched>,
    launched_rx: mpsc::UnboundedReceiver<Launched>,
    /// The context's MCP server (`None` with `context: false`).
    pub mcp: Option<McpHandle>,
    pub events: broadcast::Sender<EngineEvent>,
    pub ctx_events: broadcast::Receiver<ContextEvent>,
    announcer: super::tasks::Announcer,
    pub commands: mpsc::UnboundedReceiver<Envelope>,
    pub notices: Vec<String>,
    /// What repairing the agents' worktrees did at start (posted to the
    /// channel as system lines).
    pub repairs: Vec<String>,
    /// The latest notices, for snapshots (see `Snapshot::notices`).
    recent_notices: std::cell::RefCell<VecDeque<String>>,
    /// Whether the state root is a temporary folder to remove at the end.
    pub temporary_state: bool,
    turn_tx: mpsc::UnboundedSender<(String, TurnId, Relayed)>,
    turn_rx: mpsc::UnboundedReceiver<(String, TurnId, Relayed)>,
    running: HashMap<String, Running>,
    /// Each agent's current (or last) turn as it happens, for snapshots.
    live: HashMap<String, crate::vocab::live::AgentLive>,
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
    /// Backends whose project config (Cursor's `.cursor/mcp.json`) this
    /// run changed and must restore.
    prepared_workdirs: std::collections::HashSet<BackendKind>,
    /// Agents already reported as running without awtui's tools (the
    /// channel says so once per agent).
    without_tools: std::collections::HashSet<String>,
    /// Agents that had awtui's tools in at least one successful turn.
    with_tools: std::collections::HashSet<String>,
    /// Agents asked for strict AOP (`protocols: [aop-strict]`) whose
    /// unmarked output was already noted in this run (once each).
    unmarked_noted: std::collections::HashSet<String>,
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
        let (turn_tx, turn_rx) = mpsc::unbounded_channel();
        let (lost_tx, lost_rx) = mpsc::unbounded_channel();
        let (behind_tx, behind_failed) = mpsc::unbounded_channel();
        let (launched_tx, launched_rx) = mpsc::unbounded_channel();
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
        Driver {
            runner,
            cx: Arc::new(cx),
            mcp,
            events,
            announcer: super::tasks::Announcer::default(),
            ctx_events,
            commands,
            notices,
            repairs: Vec::new(),
            recent_notices: Default::default(),
            temporary_state,
            turn_tx,
            turn_rx,
            running: HashMap::new(),
            live: HashMap::new(),
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
            launching: HashMap::new(),
            launched_tx,
            launched_rx,
            saved_sessions: HashMap::new(),
            pause_record,
            prepared_workdirs: std::collections::HashSet::new(),
            without_tools: std::collections::HashSet::new(),
            with_tools: std::collections::HashSet::new(),
            unmarked_noted: std::collections::HashSet::new(),
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
        // Liveness as the seed says: silent registrations are marked
        // offline, and stale holders lose their claims after
        // `release_after` missed heartbeats (a default unless the workflow
        // says otherwise).
        let release_after = u64::from(
            self.cx
                .workflow
                .limits
                .release_after_missed_heartbeats
                .unwrap_or(crate::tasks::store::RELEASE_AFTER_MISSED),
        );
        let mut stale_check = Some(tokio::time::interval(Duration::from_millis(
            crate::tasks::store::HEARTBEAT_MS / 3,
        )));
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
                Some(cmd) = self.commands.recv() => self.command(cmd).await,
                Some(lost) = self.lost_rx.recv() => self.answer_lost(lost),
                Some(failed) = self.behind_failed.recv() => self.notice(failed),
                Some(said) = self.host_notices.recv() => self.notice(said),
                Some(launched) = self.launched_rx.recv() => self.turn_launched(launched),
                ev = self.ctx_events.recv() => self.context_event(ev),
                () = next_tick(&mut stale_check) => {
                    self.mark_silent_offline();
                    self.release_stale(release_after);
                }
                Some((agent, turn, relayed)) = self.turn_rx.recv() => match relayed {
                    Relayed::Update(update) => self.turn_update(agent, turn, update),
                    Relayed::Done {
                        outcome,
                        committed,
                        lost,
                    } => self.turn_done(agent, turn, outcome, committed, lost),
                },
                () = sleep_until(deadline) => {
                    self.deliver_deferred();
                    self.handle(Event::Tick);
                }
            }
        }
    }

    /// Posts the kickoff on a fresh channel and tells the runner what is
    /// already waiting (after a restart: every unread mention).
    fn begin(&mut self) {
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
        self.spawned = super::spawn::load(&self.cx.state_root);
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
            if let Some(entry) = self.announce_tasks(None) {
                backlog.extend(entry.mentions.iter().map(|a| (a.clone(), entry.id)));
            }
        } else {
            // Already announced before the instance stopped.
            let agents = self.cx.workflow.agent_names();
            let _ = self.announcer.news(self.cx.context.tasks(), &agents, None);
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
        if let Err(e) =
            super::tasks::create_file_plan(self.cx.context.tasks(), &self.cx.workflow.name, plan)
        {
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

    /// Reports channel entries the front ends and runner have not seen.
    /// A SPAWN_REQUEST among them is answered before the runner sees it,
    /// so what the answer posts (the worker's hand-over, SPAWN_ACK) reaches
    /// the runner in the same round and a `run` cannot end in between.
    fn sync_messages(&mut self) {
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
        use super::spawn::Decision;
        let decision = super::spawn::decide(
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
                if let Err(e) = super::spawn::save(&self.cx.state_root, &self.spawned) {
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
                if let Some(running) = self.running.get_mut(&agent)
                    && running.turn == turn
                {
                    running.stopper.stop();
                }
                if let Some(launching) = self.launching.get_mut(&agent)
                    && launching.turn == turn
                {
                    launching.stop = true;
                }
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
                    self.release_claims_of(&agent, &how);
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

    fn start_turn(
        &mut self,
        agent: String,
        turn: TurnId,
        messages: Vec<u64>,
        session: Option<String>,
        number: u32,
    ) {
        let Some(def) = self.cx.workflow.agent(&agent).cloned() else {
            return;
        };
        let backend = crate::agents::backend::backend_for(def.backend);
        // Over ACP the servers come in `session/new`: no project file.
        let headless = crate::agents::backend::acp::drive(&def, &self.cx.workflow.base_dir)
            != Ok(crate::agents::backend::acp::Drive::Acp);
        if headless
            && backend.workdir_config().is_some()
            && !self.prepared_workdirs.contains(&def.backend)
            && let Some(mcp) = &self.cx.mcp
        {
            // Every agent of this backend shares the project's config file.
            let servers: Vec<_> = self
                .cx
                .workflow
                .agents
                .iter()
                .filter(|a| a.backend == def.backend)
                .flat_map(|a| a.mcp.iter().cloned())
                .collect();
            match backend.prepare_workdir(&self.cx.workflow.base_dir, &mcp.url, &servers) {
                Ok(_) => {
                    self.prepared_workdirs.insert(def.backend);
                }
                Err(e) => self.notice(format!(
                    "cannot give {} the MCP server: {e}",
                    def.backend.name()
                )),
            }
        }
        if let Some(last) = messages.iter().max() {
            // Behind the agent's previous answer (see `answers`).
            self.queue_held_answer();
            self.answers.queue(super::answers::Job::Deliver {
                agent: agent.clone(),
                through: *last,
            });
        }
        // A warm ACP agent listed its tools once, when its session began.
        let tool_lists_at_start =
            (backend.lists_tools_at_start() && headless && self.cx.mcp.is_some())
                .then(|| self.cx.context.tool_lists(&agent));
        // Started on a blocking thread; the loop hears of it as `Launched`.
        self.launching
            .insert(agent.clone(), Launching { turn, stop: false });
        let approvals_from = self.cx.context.approvals().next_id();
        let (cx, launched) = (self.cx.clone(), self.launched_tx.clone());
        tokio::task::spawn_blocking(move || {
            let result = launch::start_turn(&cx, &def, &messages, session);
            // Read after the turn's preparation waited for the host's
            // master: the one the turn runs over.
            let link = launch::connection_of(&cx, &agent).and_then(|conn| {
                let generation = conn.link.session()?.generation;
                Some((conn, generation))
            });
            let _ = launched.send(Launched {
                agent,
                turn,
                start: TurnStart {
                    messages,
                    tool_lists_at_start,
                    approvals_from,
                    number,
                    link,
                },
                result,
            });
        });
    }

    /// A turn's process is up (or could not be started): the loop starts
    /// relaying it, or reports the failure as the turn's end.
    fn turn_launched(&mut self, launched: Launched) {
        let Launched {
            agent,
            turn,
            start,
            result,
        } = launched;
        let stop = match self.launching.get(&agent) {
            Some(l) if l.turn == turn => self.launching.remove(&agent).is_some_and(|l| l.stop),
            _ => false,
        };
        match result {
            Ok(running) => {
                if let Some(pid) = running.pid
                    && let Err(e) = orphans::record(&self.cx.state_root, &agent, pid)
                {
                    self.notice(format!("cannot record {agent}'s turn: {e}"));
                }
                let (mut updates, stopper) = running.into_parts();
                let (answered, number) = (start.messages.clone(), start.number);
                let link = start.link.clone();
                // A running turn counts as alive on the task board.
                self.cx.context.tasks().set_in_turn(&agent, true);
                self.running.insert(
                    agent.clone(),
                    Running {
                        turn,
                        stopper,
                        start,
                    },
                );
                if stop {
                    // Stopped while it was being started.
                    if let Some(r) = self.running.get_mut(&agent) {
                        r.stopper.stop();
                    }
                }
                let tx = self.turn_tx.clone();
                let name = agent.clone();
                let workspace = self.cx.workspaces.get(&agent).cloned();
                tokio::spawn(async move {
                    while let Some(update) = updates.recv().await {
                        let relayed = match update.redacted() {
                            TurnUpdate::Done(outcome) => {
                                let committed =
                                    match workspace.clone() {
                                        Some(ws) if outcome.success => {
                                            let answered = answered.clone();
                                            tokio::task::spawn_blocking(move || {
                                                crate::workspace::commit::after_turn_of(
                                                    &ws,
                                                    &answered,
                                                    Some(number),
                                                )
                                            })
                                            .await
                                            .unwrap_or_else(|e| {
                                                Some(format!(
                                                    "committing {name}'s turn failed: {e}"
                                                ))
                                            })
                                        }
                                        _ => None,
                                    };
                                // A failed turn on a host: did its
                                // connection go? (Off the loop: it may
                                // ask the master.)
                                let lost = match &link {
                                    Some((conn, generation)) if !outcome.success => conn
                                        .link
                                        .lost_during(*generation)
                                        .await
                                        .map(|e| e.to_string()),
                                    _ => None,
                                };
                                Relayed::Done {
                                    outcome,
                                    committed,
                                    lost,
                                }
                            }
                            other => Relayed::Update(other),
                        };
                        if tx.send((name.clone(), turn, relayed)).is_err() {
                            break;
                        }
                    }
                });
                // A new turn starts a new live view.
                self.live.insert(agent.clone(), Default::default());
                self.queue.push_back(Event::TurnStarted { agent, turn });
            }
            Err(e) => {
                self.queue.push_back(Event::TurnFinished {
                    agent,
                    turn,
                    outcome: TurnOutcome::Failure {
                        reason: e.to_string(),
                        session_id: None,
                    },
                });
            }
        }
        self.drain();
    }

    fn turn_update(&mut self, agent: String, turn: TurnId, update: TurnUpdate) {
        match update {
            TurnUpdate::Event(event) => {
                let activity = match &event {
                    BackendEvent::Thinking => Some(TurnActivity::Thinking),
                    BackendEvent::Text { .. } => Some(TurnActivity::Text),
                    BackendEvent::Stream { text } => {
                        Some(TurnActivity::Stream { text: text.clone() })
                    }
                    BackendEvent::ToolCall { name } => Some(TurnActivity::ToolCall {
                        name: short_tool_name(name).to_string(),
                    }),
                    BackendEvent::Session { id } => {
                        // Kept at once, so a crash mid-turn still resumes
                        // the agent's own session.
                        self.save_session(&agent, id);
                        Some(TurnActivity::SessionId { id: id.clone() })
                    }
                    _ => None,
                };
                self.live.entry(agent.clone()).or_default().apply(&event);
                self.emit(EngineEvent::Activity {
                    agent: agent.clone(),
                    activity: event,
                });
                if let Some(event) = activity {
                    self.handle(Event::Backend { agent, turn, event });
                }
            }
            TurnUpdate::Done(outcome) => self.turn_done(agent, turn, outcome, None, None),
        }
    }

    fn turn_done(
        &mut self,
        agent: String,
        turn: TurnId,
        outcome: BackendOutcome,
        committed: Option<String>,
        lost: Option<String>,
    ) {
        // Everything the agent posted during the turn reaches the runner
        // first: that is how it knows not to post the final answer again.
        self.sync_messages();
        let TurnStart {
            messages: delivered_at_start,
            tool_lists_at_start,
            approvals_from,
            number,
            ..
        } = match self.running.get(&agent) {
            Some(r) if r.turn == turn => {
                orphans::clear(&self.cx.state_root, &agent);
                self.cx.context.tasks().set_in_turn(&agent, false);
                self.cx
                    .context
                    .approvals()
                    .close_agent(&agent, "the agent's turn ended while the request waited");
                self.running.remove(&agent).map(|r| r.start)
            }
            _ => None,
        }
        .unwrap_or_default();
        if let Some(id) = &outcome.session_id {
            self.save_session(&agent, id);
        }
        // Messages the agent fetched itself mid-turn (inbox_check) count as
        // delivered by this turn.
        let delivered = self.cx.context.read(|s| {
            let cursor = s.cursor(&agent).unwrap_or_default();
            s.inbox_ids(&agent)
                .unwrap_or_default()
                .into_iter()
                .filter(|id| *id <= cursor.delivered)
                .collect::<Vec<u64>>()
        });
        // What the CLI said about its MCP servers wins; else, for CLIs
        // that list awtui's tools at start, whether the server saw a
        // listing from this agent during a successful turn.
        let listed = tool_lists_at_start
            .filter(|_| outcome.success)
            .map(|before| self.cx.context.tool_lists(&agent) > before);
        let connected = outcome.tools_connected.or(listed);
        let without_tools = connected == Some(false);
        if connected == Some(true) {
            self.with_tools.insert(agent.clone());
        }
        // A call a person or a rule denied is in the CLI's refusals too;
        // its decision is already in the channel, and it is no matter of
        // configuration.
        let denied: Vec<String> = self
            .cx
            .context
            .approvals()
            .denied_since(&agent, approvals_from)
            .into_iter()
            .map(|d| d.tool)
            .collect();
        let refused: Vec<String> = outcome
            .refused
            .iter()
            .filter(|tool| !denied.contains(tool))
            .cloned()
            .collect();
        let usage = outcome.usage;
        self.queue.push_back(Event::Backend {
            agent: agent.clone(),
            turn,
            event: TurnActivity::Usage {
                tokens_in: usage.input_tokens,
                tokens_out: usage.output_tokens,
                cost_usd: usage.cost_usd,
            },
        });
        let cut = ops::Cut {
            truncated: outcome.truncated,
            full: outcome.full_output.as_deref(),
        };
        // The relay committed the turn off the loop (see `Relayed`).
        if let Some(n) = committed {
            // In the channel, where the person sees why the turn is not a
            // step (it mentions nobody, so it wakes nobody).
            tracing::warn!("{n}");
            self.post(SYSTEM, &n);
        }
        let mut aop_answer = None;
        let result = if outcome.success {
            self.settle_woken_again(&agent);
            // An answer cut to nothing still says where the output went.
            let answer = outcome
                .answer
                .clone()
                .or_else(|| cut.truncated.then(String::new));
            let answer =
                answer.map(|a| self.operations(&agent, number, &delivered_at_start, a, cut));
            aop_answer.clone_from(&answer);
            TurnOutcome::Success {
                delivered,
                // The runner saw the agent's own posts (synced above).
                posted: false,
                final_text: answer.filter(|a| !a.trim().is_empty()),
                session_id: outcome.session_id,
            }
        } else {
            let reason = lost
                .clone()
                .or(outcome.error)
                .unwrap_or_else(|| "the turn failed".into());
            let printed = outcome.answer.as_deref().unwrap_or_default();
            let now = chrono::Utc::now();
            let kept =
                self.ops_files
                    .keep_failed(&agent, u64::from(number), printed, &reason, cut, now);
            if let Some(notice) = kept {
                self.notice(notice);
            }
            match lost {
                Some(_) => TurnOutcome::ConnectionLost {
                    reason,
                    session_id: outcome.session_id,
                },
                None => TurnOutcome::Failure {
                    reason,
                    session_id: outcome.session_id,
                },
            }
        };
        self.handle(Event::TurnFinished {
            agent: agent.clone(),
            turn,
            outcome: result,
        });
        // After the answer is posted, so the note follows it.
        if let Some(a) = aop_answer {
            self.report_aop(&agent, &a);
        }
        if without_tools {
            self.warn_without_tools(&agent);
        }
        if !refused.is_empty() {
            self.report_refused(&agent, &refused);
        }
    }

    /// AOP problems in an answer accepted leniently: the agent's activity
    /// and one compact system note say so during the run (not only `awtui
    /// aop check`), for agents taught AOP.
    fn report_aop(&mut self, agent: &str, answer: &str) {
        let protocols = self.cx.workflow.agent(agent).map(|a| a.protocols);
        if protocols.is_some_and(|p| p.aop_strict) && !self.unmarked_noted.contains(agent) {
            // The seed's strict receiver warns of unmarked output: once
            // per agent and run, not on every turn.
            if let Some(text) = crate::protocols::aop::unmarked_note(agent, answer) {
                self.unmarked_noted.insert(agent.to_string());
                self.post_after_answers(&text);
            }
        }
        let taught = protocols.is_some_and(|p| p.aop);
        let Some(text) = taught
            .then(|| crate::protocols::aop::run_note(agent, answer))
            .flatten()
        else {
            return;
        };
        self.emit(EngineEvent::Activity {
            agent: agent.to_string(),
            activity: BackendEvent::Error {
                message: text.clone(),
            },
        });
        self.post_after_answers(&text);
    }

    /// The CLI refused tools for lack of permission: the turn did not do
    /// all it tried, and the channel and the agent's activity say so
    /// instead of letting it pass as a plain success.
    fn report_refused(&mut self, agent: &str, tools: &[String]) {
        let permissions = self
            .cx
            .workflow
            .agents
            .iter()
            .find(|a| a.name == agent)
            .map_or("workspace-write", |a| a.permissions.name());
        let text = format!(
            "{agent}'s CLI refused {} for lack of permission (permissions: {permissions}); \
             allow it with the agent's `permissions:` or `tools:`",
            tools.join(", ")
        );
        self.emit(EngineEvent::Activity {
            agent: agent.to_string(),
            activity: BackendEvent::Error {
                message: text.clone(),
            },
        });
        self.post_after_answers(&text);
    }

    /// A turn ran without awtui's tools (the CLI did not connect to the MCP
    /// server): the agent's activity shows it every time, the channel once.
    fn warn_without_tools(&mut self, agent: &str) {
        let text = format!(
            "{agent} ran without awtui's tools: its CLI did not connect to awtui's MCP server, so it could not read or post to the channel itself (see {}/stderr.log)",
            self.cx.agent_dir(agent).display()
        );
        self.emit(EngineEvent::Activity {
            agent: agent.to_string(),
            activity: BackendEvent::Error {
                message: text.clone(),
            },
        });
        if self.without_tools.insert(agent.to_string()) {
            self.post_after_answers(&text);
        }
    }

    /// Archives a turn's output and runs the operations in its frontmatter;
    /// returns the answer without the frontmatter.
    fn operations(
        &mut self,
        agent: &str,
        number: u32,
        delivered: &[u64],
        output: String,
        cut: ops::Cut<'_>,
    ) -> String {
        let now = chrono::Utc::now();
        let (output, problem) = blocking(|| {
            self.ops_files
                .keep_output(agent, u64::from(number), output, cut, now)
        });
        if let Some(problem) = problem {
            self.notice(problem);
        }
        let mut peers = self.cx.workflow.agent_names();
        peers.push(USER.to_string());
        let peers: Vec<&str> = peers.iter().map(String::as_str).collect();
        let parsed = parse_ops(&output, delivered.iter().max().copied(), &peers);
        let has_frontmatter =
            !parsed.ops.is_empty() || !parsed.problems.is_empty() || parsed.refused.is_some();
        if !has_frontmatter {
            return output;
        }
        let executed = match self.ops_files.log() {
            Ok(mut log) => ops::execute(
                &parsed,
                agent,
                &self.cx.context,
                &mut self.ops,
                &mut log,
                now,
            ),
            Err(e) => {
                self.notice(format!("cannot write logs/ops.log: {e}"));
                ops::execute(
                    &parsed,
                    agent,
                    &self.cx.context,
                    &mut self.ops,
                    &mut std::io::sink(),
                    now,
                )
            }
        };
        for (id, state) in executed.threads {
            self.emit(EngineEvent::Thread { id, state });
        }
        if executed.changed {
            self.save_ops();
        }
        for text in executed.notices {
            self.post(SYSTEM, &text);
        }
        parsed.body
    }

    fn save_ops(&self) {
        if let Err(e) = blocking(|| super::ops::save_state(&self.ops, &self.cx.state_root)) {
            self.notice(format!("cannot save {}: {e}", ops::STATE_FILE));
        }
        self.emit(EngineEvent::Deferred {
            deferred: self.ops.deferred.clone(),
        });
    }

    /// `messages` for `agent`'s turn, with the messages it put off until
    /// its next wake (`defer: <id>`): they are new to it again, once.
    fn with_next_wake(&mut self, agent: &str, mut messages: Vec<u64>) -> Vec<u64> {
        let again = self.ops.next_wake(agent);
        if again.is_empty() {
            self.woken_again.remove(agent);
            return messages;
        }
        self.woken_again.insert(agent.to_string(), again.clone());
        messages.extend(again);
        messages.sort_unstable();
        messages.dedup();
        messages
    }

    /// `agent`'s turn succeeded: the messages it had again (see
    /// [`Self::with_next_wake`]) are no longer deferred. Before the turn's
    /// own operations run, which may defer them once more.
    fn settle_woken_again(&mut self, agent: &str) {
        if let Some(ids) = self.woken_again.remove(agent) {
            self.ops.forget_next_wake(agent, &ids);
            self.save_ops();
        }
    }

    /// Delivers timed deferrals that are due as reminders.
    fn deliver_deferred(&mut self) {
        let due = self.ops.take_due(chrono::Utc::now());
        if due.is_empty() {
            return;
        }
        self.save_ops();
        for d in due {
            let text = format!(
                "@{} reminder: you deferred message #{}; it is due now.",
                d.agent, d.id
            );
            if let Err(e) = self.cx.context.transact(|tx| tx.reply(SYSTEM, &text, d.id)) {
                self.notice(format!(
                    "cannot deliver deferred #{} to {}: {e}",
                    d.id, d.agent
                ));
            }
        }
    }

    fn context_event(&mut self, event: Result<ContextEvent, broadcast::error::RecvError>) {
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

    /// A change on the task board: shown to front ends; tasks that became
    /// available wake the agents allowed to take them (one system message),
    /// except the agent whose tool call made them available.
    fn task_event(&mut self, change: Option<crate::tasks::CausedEvent>) {
        let (check, by) = match change {
            Some(crate::tasks::CausedEvent { by, event }) => {
                self.announcer.observe(&event, by.as_deref());
                let check = super::tasks::may_free_tasks(&event);
                self.emit(EngineEvent::Task {
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
            let _ = self.announce_tasks(by.as_deref());
            self.drain();
        }
    }

    /// Marks the registrations silent for too long offline (the board and
    /// `awtui tasks` show it; they must register again to claim).
    fn mark_silent_offline(&mut self) {
        let now = chrono::Utc::now();
        let marked = self
            .cx
            .context
            .tasks()
            .change(|s| match s.mark_silent_offline(now) {
                Ok(agents) => (
                    agents.len(),
                    agents
                        .into_iter()
                        .map(crate::tasks::TaskEvent::AgentChanged)
                        .collect(),
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

    /// Releases the claims of the registrations awtui agent `agent` made,
    /// now that its process is gone (`how`: stopped, failed).
    fn release_claims_of(&mut self, agent: &str, how: &str) {
        let board = self.cx.context.tasks().clone();
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
                self.post(SYSTEM, &format!("Released task {task} “{name}”: {why}."));
            }
        }
    }

    /// Releases the claims of holders that missed `missed` heartbeats
    /// (awtui agents in a running turn never do), with a system note.
    fn release_stale(&mut self, missed: u64) {
        let board = self.cx.context.tasks().clone();
        let now = chrono::Utc::now();
        for (task, holder) in board.read(|s| s.stale_claims(missed, now)) {
            let why = format!("{holder} missed {missed} heartbeats");
            let released = board.change(|s| match s.release(&task, SYSTEM, &why, now) {
                Ok(t) => (true, crate::tasks::with_last_checkpoint(s, t)),
                Err(_) => (false, Vec::new()),
            });
            if released {
                self.post(SYSTEM, &format!("Released task {task}: {why}."));
            }
        }
    }

    /// Posts the news of newly available tasks, if any. When `by` (an agent
    /// of the workflow) made them available, the runner is told the news
    /// is its doing ([`Event::CausedBy`]): the loop guard counts it as a
    /// message of `by`'s.
    fn announce_tasks(&mut self, by: Option<&str>) -> Option<crate::context::ChannelEntry> {
        let agents = self.cx.workflow.agent_names();
        let text = self.announcer.news(self.cx.context.tasks(), &agents, by)?;
        match self.cx.context.append(SYSTEM, &text) {
            Ok(entry) => {
                if let Some(agent) = by.filter(|a| agents.iter().any(|n| n == a)) {
                    self.queue.push_back(Event::CausedBy {
                        agent: agent.to_string(),
                        id: entry.id,
                    });
                }
                Some(entry)
            }
            Err(e) => {
                self.notice(format!("cannot post the task news: {e}"));
                None
            }
        }
    }

    /// Carries out one command and answers its sender alone: a snapshot or
    /// a document read, `Done`, or why it failed. The broadcast only sees
    /// what the command changed.
    async fn command(&mut self, envelope: Envelope) {
        let Envelope { command, reply } = envelope;
        let name = command.name();
        if let Command::Send { text } | Command::Post { text } = command {
            match &self.posts {
                Some(posts) => posts.queue(name, text, reply),
                None => {
                    let _ = reply.send(Err(CommandFailed {
                        command: name.to_string(),
                        error: "the instance is stopping; nothing was sent".into(),
                    }));
                }
            }
            return;
        }
        let is_agent = |a: &str| self.cx.workflow.agent(a).is_some();
        let task_workspace = |t: &str| {
            self.cx
                .context
                .tasks()
                .read(|s| s.workspaces_of_task(t).last().map(|w| (*w).clone()))
        };
        let known = super::workspace_cmd::Known {
            workspaces: &self.cx.workspaces,
            is_agent: &is_agent,
            task_workspace: &task_workspace,
            workflow_dir: &self.cx.workflow.base_dir,
        };
        let sources = super::jobs::Sources {
            context: &self.cx.context,
            ops_files: &self.ops_files,
            agent_dir: &|agent: &str| self.cx.agent_dir(agent),
            known,
            threads: &self.ops.threads,
        };
        if let Some(job) = super::jobs::for_command(&sources, &command) {
            // Disk, git or pages: off the loop, answered when done.
            super::jobs::dispatch(name, job, reply);
            return;
        }
        let answer = self.carry_out(command).map_err(|error| CommandFailed {
            command: name.to_string(),
            error,
        });
        if let Err(failed) = &answer {
            tracing::info!("{failed}");
        }
        // The sender may have stopped waiting; nobody else is told.
        let _ = reply.send(answer);
    }

    /// Adds the person's agent `new` to the instance's kept list (checked
    /// as a workflow file's agent) and says so in the channel. It joins the
    /// agents the next time the instance starts.
    fn add_agent(&mut self, new: &crate::vocab::agents::NewAgent) -> Result<Reply, String> {
        let home = match &self.cx.prepared.context_dir {
            Some(dir) => dir.clone(),
            None => crate::instance::layout::home(&self.cx.workflow, &self.cx.prepared.instance)
                .map_err(|e| e.to_string())?,
        };
        let path = crate::instance::added::file(&home).map_err(|e| e.to_string())?;
        let def = crate::instance::added::add(&path, &self.cx.workflow, new)
            .map_err(|e| e.to_string())?;
        let workspace = match def.workspace {
            crate::workflow::Workspace::Shared => "shared",
            crate::workflow::Workspace::Worktree { .. } => "worktree",
        };
        let text = format!(
            "agent {} added by user ({}, {workspace} workspace); it joins when the instance is next started (awtui stop, then awtui start)",
            def.name, new.backend
        );
        self.post(SYSTEM, &crate::context::mentions::inert(&text));
        Ok(Reply::Said { text })
    }

    fn carry_out(&mut self, cmd: Command) -> Result<Reply, String> {
        let known = |d: &Driver, agent: &str| d.cx.workflow.agent(agent).is_some();
        let unknown = |agent: &str| format!("there is no agent '{agent}' in this workflow");
        match cmd {
            Command::Stop { agent } | Command::Cancel { agent } | Command::Restart { agent }
                if !known(self, &agent) =>
            {
                return Err(unknown(&agent));
            }
            Command::Stop { agent } => {
                self.cx
                    .context
                    .approvals()
                    .close_agent(&agent, "the agent was stopped while the request waited");
                self.handle(Event::Stop { agent })
            }
            Command::Cancel { agent } => {
                self.cx.context.approvals().close_agent(
                    &agent,
                    "the agent's turn was cancelled while the request waited",
                );
                // Its next prompt quotes the cancelled turn's messages as
                // recent history: they were cancelled, not left unanswered.
                if self.running.contains_key(&agent) {
                    crate::agents::backend::acp::note(
                        &self.cx.agent_dir(&agent),
                        "The person cancelled your previous turn: do not redo it unless they ask again.",
                    );
                }
                self.handle(Event::Cancel { agent })
            }
            Command::Restart { agent } => self.handle(Event::Restart { agent }),
            Command::Resume => self.handle(Event::Resume),
            Command::Ack { agent, until } => {
                self.cx
                    .context
                    .ack(&agent, until)
                    .map_err(|e| e.to_string())?;
            }
            Command::Approve { request, answer } => {
                self.cx
                    .context
                    .approvals()
                    .decide(request, answer, USER)
                    .map_err(|e| e.to_string())?;
            }
            Command::RevokeApproval { agent, rule } => {
                let rule = crate::approvals::Rule::parse(&rule).map_err(|e| e.to_string())?;
                self.cx
                    .context
                    .approvals()
                    .revoke(&agent, &rule)
                    .map_err(|e| e.to_string())?;
                self.post(
                    SYSTEM,
                    &crate::context::mentions::inert(&format!(
                        "approval rule revoked: {agent} {rule} (by user)"
                    )),
                );
            }
            Command::AddAgent { agent } => return self.add_agent(&agent),
            Command::Shutdown => {
                let pending = self.pending();
                self.outcome = Some(RunOutcome::Incomplete { pending });
            }
            Command::Task { task } => {
                super::tasks::carry_out(self.cx.context.tasks(), task, &self.cx.workflow.name)?;
            }
            Command::ReadTask { task } => {
                return self.cx.context.tasks().read(|s| {
                    let t = s
                        .task(&task)
                        .cloned()
                        .ok_or_else(|| format!("there is no task '{task}' on the board"))?;
                    Ok(Reply::Task {
                        checkpoints: s.checkpoints(&task).to_vec(),
                        task: Box::new(t),
                    })
                });
            }
            // Answered off the loop by `command` (the posts' lane,
            // workspace_cmd, log reads, peeks).
            Command::Send { .. }
            | Command::Post { .. }
            | Command::Peek { .. }
            | Command::ReadDiff { .. }
            | Command::Workspace { .. }
            | Command::ReadAgentLogs { .. } => {
                return Err("a file-reading command reached the driver's loop".into());
            }
            Command::Snapshot { messages } => {
                return Ok(Reply::Snapshot {
                    snapshot: Box::new(self.snapshot(messages)),
                });
            }
            Command::ReadDocument { file } => {
                let (file, content) = self
                    .cx
                    .context
                    .read(|s| {
                        let path = file.unwrap_or_else(|| s.entry_document().to_string());
                        s.read_document(Some(&path)).map(|c| (path, c))
                    })
                    .map_err(|e| e.to_string())?;
                return Ok(Reply::Document { file, content });
            }
            Command::WriteDocument { file, content } => {
                self.cx
                    .context
                    .transact(|tx| tx.write_document(USER, file.as_deref(), &content))
                    .map_err(|e| e.to_string())?;
            }
            Command::CreateDocument { file, content } => {
                self.cx
                    .context
                    .transact(|tx| tx.create_document(USER, &file, &content))
                    .map_err(|e| e.to_string())?;
            }
            Command::DeleteDocument { file } => {
                self.cx
                    .context
                    .transact(|tx| tx.delete_document(USER, &file))
                    .map_err(|e| e.to_string())?;
            }
        }
        Ok(Reply::Done)
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

    /// The whole state, for a front end drawing from scratch.
    fn snapshot(&self, limit: usize) -> Snapshot {
        let runner_agents = self.runner.agents();
        let agents = self
            .cx
            .workflow
            .agents
            .iter()
            .map(|def| {
                let view = runner_agents.iter().find(|v| v.name == def.name);
                AgentSnapshot {
                    protocol: crate::agents::backend::acp::protocol_name(
                        def,
                        &self.cx.workflow.base_dir,
                    ),
                    live: self.live.get(&def.name).cloned().unwrap_or_default(),
                    place: self.cx.place_name(def),
                    name: def.name.clone(),
                    backend: def.backend.name().to_string(),
                    model: def.model.clone(),
                    status: view.map(|v| v.status.clone()).unwrap_or(AgentStatus::Idle),
                    metrics: view.map(|v| v.metrics.clone()).unwrap_or_default(),
                }
            })
            .collect();
        let mut recipients = self.cx.workflow.agent_names();
        recipients.push(USER.to_string());
        self.cx.context.read(|s| {
            // Bounded in bytes too: one agent's huge messages must not
            // weigh on every front end's first draw (issue 34).
            let page = crate::instance::query::newest(s, None, limit);
            Snapshot {
                workflow: self.cx.workflow.name.clone(),
                instance: self.cx.prepared.instance.clone(),
                agents,
                messages: page
                    .items
                    .into_iter()
                    .map(|item| MessageSnapshot {
                        entry: item.entry,
                        annotations: item.annotations,
                        cut: item.cut,
                    })
                    .collect(),
                left_out: page.left_out,
                total_messages: s.len(),
                user_unread: s.unread_count(USER).unwrap_or(0),
                documents: s.list_documents().unwrap_or_default(),
                entry_document: s.entry_document().to_string(),
                cursors: recipients
                    .into_iter()
                    .filter_map(|r| s.cursor(&r).ok().map(|c| (r, c)))
                    .collect(),
                paused: self.runner.pause_reason().cloned(),
                ops: self.ops.clone(),
                tasks: super::tasks::snapshot(self.cx.context.tasks()),
                started: Some(self.started),
                approvals: self.cx.context.approvals().snapshot(),
                notices: self.recent_notices.borrow().iter().cloned().collect(),
            }
        })
    }

    fn pending(&self) -> Vec<crate::agents::runner::PendingWork> {
        self.runner
            .agents()
            .iter()
            .filter(|a| a.metrics.unread > 0)
            .map(|a| crate::agents::runner::PendingWork {
                agent: a.name.clone(),
                unread: a.metrics.unread,
                status: a.status.clone(),
            })
            .collect()
    }

    /// A run that handled everything, but in which some agent never had
    /// awtui's tools in any turn, did not do what the workflow meant.
    fn without_tools_outcome(&self, outcome: RunOutcome) -> RunOutcome {
        let mut agents: Vec<String> = self
            .without_tools
            .iter()
            .filter(|a| !self.with_tools.contains(*a))
            .cloned()
            .collect();
        agents.sort();
        match outcome {
            RunOutcome::Completed | RunOutcome::NothingToDo if !agents.is_empty() => {
                RunOutcome::WithoutTools { agents }
            }
            other => other,
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

    /// Stops what still runs, waits briefly for it, and releases the
    /// instance's resources.
    async fn end(mut self, outcome: RunOutcome) -> RunOutcome {
        let outcome = self.without_tools_outcome(outcome);
        // Nobody will answer any more: the CLIs get a deny, not silence.
        self.cx
            .context
            .approvals()
            .close_all("the instance ended while the request waited");
        let deadline = Instant::now() + SHUTDOWN_WAIT;
        // Turns still being started come up first, to be stopped with the
        // rest.
        while !self.launching.is_empty() {
            match tokio::time::timeout_at(deadline, self.launched_rx.recv()).await {
                Ok(Some(launched)) => self.turn_launched(launched),
                Ok(None) | Err(_) => break,
            }
        }
        for running in self.running.values_mut() {
            running.stopper.stop();
        }
        while !self.running.is_empty() {
            match tokio::time::timeout_at(deadline, self.turn_rx.recv()).await {
                Ok(Some((agent, turn, Relayed::Done { outcome: o, .. }))) => {
                    if let Some(id) = &o.session_id {
                        self.save_session(&agent, id);
                    }
                    if self.running.get(&agent).is_some_and(|r| r.turn == turn) {
                        self.running.remove(&agent);
                        orphans::clear(&self.cx.state_root, &agent);
                    }
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
        for kind in std::mem::take(&mut self.prepared_workdirs) {
            let backend = crate::agents::backend::backend_for(kind);
            if let Err(e) = backend.restore_workdir(&self.cx.workflow.base_dir) {
                self.notice(format!(
                    "cannot restore {}: {e}",
                    backend.workdir_config().unwrap_or("the project's config")
                ));
            }
        }
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

/// The next tick of an optional interval (never, without one).
async fn next_tick(interval: &mut Option<tokio::time::Interval>) {
    match interval {
        Some(i) => {
            i.tick().await;
        }
        None => std::future::pending().await,
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
