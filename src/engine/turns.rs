//! Turn supervision, one of the engine's actors: it owns every turn being
//! started or running (their stoppers, their relays, their live views) and
//! what the run learnt about the agents' tools. The driver's loop forwards
//! it the runner's `StartTurn`/`KillTurn` and what the turns report
//! ([`TurnNews`]), and carries out what it answers ([`Outbox`]).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tokio::sync::mpsc;

use super::launch::{self, LaunchContext};
use super::orphans;
use super::outbox::Outbox;
use crate::agents::backend::event::short_tool_name;
use crate::agents::backend::turn::TurnStopper;
use crate::agents::backend::{BackendEvent, TurnOutcome as BackendOutcome, TurnUpdate};
use crate::agents::runner::{Event, RunOutcome, TurnActivity, TurnId, TurnOutcome};
use crate::vocab::live::AgentLive;
use crate::workflow::{AgentDef, BackendKind};

/// A turn in progress, as the driver tracks it.
struct Running {
    turn: TurnId,
    stopper: TurnStopper,
    start: TurnStart,
}

/// What the loop knew when it launched a turn, kept until the turn ends.
#[derive(Debug, Default)]
pub(super) struct TurnStart {
    /// The messages the turn delivered (its frontmatter `id` must be the last).
    pub messages: Vec<u64>,
    /// How often the agent had listed awtui's tools when the turn started,
    /// for CLIs that list them at start (`None`: no such signal).
    pub tool_lists_at_start: Option<u64>,
    /// The first approval request id the turn could make, to tell the
    /// calls a person or a rule denied from those the CLI refused itself.
    pub approvals_from: u64,
    /// The agent's own turn number (pane, logs and commits).
    pub number: u32,
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
pub(super) struct Launched {
    agent: String,
    turn: TurnId,
    start: TurnStart,
    result: Result<crate::agents::backend::RunningTurn, crate::agents::backend::BackendError>,
}

/// What the task relaying one turn's updates hands the engine loop.
pub(super) enum Relayed {
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

/// What the turns report to the loop, one message at a time.
pub(super) enum TurnNews {
    /// A turn's process is up, or could not be started.
    Launched(Launched),
    /// A running turn did something, or ended.
    Relayed {
        agent: String,
        turn: TurnId,
        relayed: Relayed,
    },
}

/// The turns being started and running, and what the run learnt about the
/// agents' tools.
pub(super) struct Turns {
    /// Turns whose process is being started, by agent.
    launching: HashMap<String, Launching>,
    launched_tx: mpsc::UnboundedSender<Launched>,
    launched_rx: mpsc::UnboundedReceiver<Launched>,
    relay_tx: mpsc::UnboundedSender<(String, TurnId, Relayed)>,
    relay_rx: mpsc::UnboundedReceiver<(String, TurnId, Relayed)>,
    running: HashMap<String, Running>,
    /// Each agent's current (or last) turn as it happens, for snapshots.
    live: HashMap<String, AgentLive>,
    /// Backends whose project config (Cursor's `.cursor/mcp.json`) this
    /// run changed and must restore.
    prepared_workdirs: HashSet<BackendKind>,
    /// Agents already reported as running without awtui's tools (the
    /// channel says so once per agent).
    without_tools: HashSet<String>,
    /// Agents that had awtui's tools in at least one successful turn.
    with_tools: HashSet<String>,
    /// Agents asked for strict AOP (`protocols: [aop-strict]`) whose
    /// unmarked output was already noted in this run (once each).
    unmarked_noted: HashSet<String>,
}

impl Turns {
    /// No turn yet.
    pub fn new() -> Turns {
        let (launched_tx, launched_rx) = mpsc::unbounded_channel();
        let (relay_tx, relay_rx) = mpsc::unbounded_channel();
        Turns {
            launching: HashMap::new(),
            launched_tx,
            launched_rx,
            relay_tx,
            relay_rx,
            running: HashMap::new(),
            live: HashMap::new(),
            prepared_workdirs: HashSet::new(),
            without_tools: HashSet::new(),
            with_tools: HashSet::new(),
            unmarked_noted: HashSet::new(),
        }
    }

    /// The next thing a turn reports (cancel-safe: for the loop's
    /// `select!`). The actor keeps both senders, so this never ends.
    pub async fn next(&mut self) -> TurnNews {
        tokio::select! {
            Some(launched) = self.launched_rx.recv() => TurnNews::Launched(launched),
            Some((agent, turn, relayed)) = self.relay_rx.recv() => TurnNews::Relayed {
                agent,
                turn,
                relayed,
            },
        }
    }

    /// Gives `def`'s backend the MCP server in the project's config file
    /// (Cursor's), once per backend and run, when it reads it there.
    pub fn prepare_workdir(&mut self, cx: &LaunchContext, def: &AgentDef, out: &mut Outbox) {
        let backend = crate::agents::backend::backend_for(def.backend);
        if headless(cx, def)
            && backend.workdir_config().is_some()
            && !self.prepared_workdirs.contains(&def.backend)
            && let Some(mcp) = &cx.mcp
        {
            // Every agent of this backend shares the project's config file.
            let servers: Vec<_> = cx
                .workflow
                .agents
                .iter()
                .filter(|a| a.backend == def.backend)
                .flat_map(|a| a.mcp.iter().cloned())
                .collect();
            match backend.prepare_workdir(&cx.workflow.base_dir, &mcp.url, &servers) {
                Ok(_) => {
                    self.prepared_workdirs.insert(def.backend);
                }
                Err(e) => out.notice(format!(
                    "cannot give {} the MCP server: {e}",
                    def.backend.name()
                )),
            }
        }
    }

    /// Starts `def`'s turn `turn` on a blocking thread; the loop hears of
    /// it as [`TurnNews::Launched`].
    pub fn launch(
        &mut self,
        cx: &Arc<LaunchContext>,
        def: AgentDef,
        turn: TurnId,
        messages: Vec<u64>,
        session: Option<String>,
        number: u32,
    ) {
        let agent = def.name.clone();
        let backend = crate::agents::backend::backend_for(def.backend);
        // A warm ACP agent listed its tools once, when its session began.
        let tool_lists_at_start =
            (backend.lists_tools_at_start() && headless(cx, &def) && cx.mcp.is_some())
                .then(|| cx.context.tool_lists(&agent));
        self.launching
            .insert(agent.clone(), Launching { turn, stop: false });
        let approvals_from = cx.context.approvals().next_id();
        let (cx, launched) = (cx.clone(), self.launched_tx.clone());
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

    /// A turn's process is up (or could not be started): its updates are
    /// relayed from now on, or the failure is the turn's end.
    pub fn launched(&mut self, cx: &LaunchContext, launched: Launched, out: &mut Outbox) {
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
        let running = match result {
            Ok(running) => running,
            Err(e) => {
                out.events.push(Event::TurnFinished {
                    agent,
                    turn,
                    outcome: TurnOutcome::Failure {
                        reason: e.to_string(),
                        session_id: None,
                    },
                });
                return;
            }
        };
        if let Some(pid) = running.pid
            && let Err(e) = orphans::record(&cx.state_root, &agent, pid)
        {
            out.notice(format!("cannot record {agent}'s turn: {e}"));
        }
        let (updates, mut stopper) = running.into_parts();
        let (answered, number) = (start.messages.clone(), start.number);
        let link = start.link.clone();
        // A running turn counts as alive on the task board.
        cx.context.tasks().set_in_turn(&agent, true);
        if stop {
            // Stopped while it was being started.
            stopper.stop();
        }
        self.running.insert(
            agent.clone(),
            Running {
                turn,
                stopper,
                start,
            },
        );
        let workspace = cx.workspaces.get(&agent).cloned();
        let relay = Relay {
            tx: self.relay_tx.clone(),
            name: agent.clone(),
            turn,
            workspace,
            answered,
            number,
            link,
        };
        tokio::spawn(relay.run(updates));
        // A new turn starts a new live view.
        self.live.insert(agent.clone(), Default::default());
        out.events.push(Event::TurnStarted { agent, turn });
    }

    /// Something `agent`'s turn did, kept for its live view; what the
    /// runner is told of it, if anything.
    pub fn activity(&mut self, agent: &str, event: &BackendEvent) -> Option<TurnActivity> {
        self.live.entry(agent.to_string()).or_default().apply(event);
        match event {
            BackendEvent::Thinking => Some(TurnActivity::Thinking),
            BackendEvent::Text { .. } => Some(TurnActivity::Text),
            BackendEvent::Stream { text } => Some(TurnActivity::Stream { text: text.clone() }),
            BackendEvent::ToolCall { name } => Some(TurnActivity::ToolCall {
                name: short_tool_name(name).to_string(),
            }),
            BackendEvent::Session { id } => Some(TurnActivity::SessionId { id: id.clone() }),
            _ => None,
        }
    }

    /// The runner killed `agent`'s turn `turn`: it is stopped, now or as
    /// soon as its process is up.
    pub fn kill(&mut self, agent: &str, turn: TurnId) {
        if let Some(running) = self.running.get_mut(agent)
            && running.turn == turn
        {
            running.stopper.stop();
        }
        if let Some(launching) = self.launching.get_mut(agent)
            && launching.turn == turn
        {
            launching.stop = true;
        }
    }

    /// Whether `agent` has a turn running.
    pub fn is_running(&self, agent: &str) -> bool {
        self.running.contains_key(agent)
    }

    /// `agent`'s turn `turn` ended: it is forgotten (its orphan record,
    /// its board liveness, its waiting approvals) and what it started with
    /// is returned (the default for a turn no longer current).
    pub fn finish(&mut self, cx: &LaunchContext, agent: &str, turn: TurnId) -> TurnStart {
        match self.running.get(agent) {
            Some(r) if r.turn == turn => {
                orphans::clear(&cx.state_root, agent);
                cx.context.tasks().set_in_turn(agent, false);
                cx.context
                    .approvals()
                    .close_agent(agent, "the agent's turn ended while the request waited");
                self.running.remove(agent).map(|r| r.start)
            }
            _ => None,
        }
        .unwrap_or_default()
    }

    /// `agent`'s turn had awtui's tools.
    pub fn had_tools(&mut self, agent: &str) {
        self.with_tools.insert(agent.to_string());
    }

    /// `agent`'s turn ran without awtui's tools; whether that is the first
    /// time in this run (the channel says so once).
    pub fn first_without_tools(&mut self, agent: &str) -> bool {
        self.without_tools.insert(agent.to_string())
    }

    /// `agent`'s unmarked output was noted (strict AOP says so once per
    /// agent and run).
    pub fn note_unmarked(&mut self, agent: &str) {
        self.unmarked_noted.insert(agent.to_string());
    }

    /// Whether `agent`'s unmarked output was already noted in this run.
    pub fn unmarked_noted(&self, agent: &str) -> bool {
        self.unmarked_noted.contains(agent)
    }

    /// A run that handled everything, but in which some agent never had
    /// awtui's tools in any turn, did not do what the workflow meant.
    pub fn without_tools_outcome(&self, outcome: RunOutcome) -> RunOutcome {
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

    /// `agent`'s current (or last) turn as it happens.
    pub fn live(&self, agent: &str) -> AgentLive {
        self.live.get(agent).cloned().unwrap_or_default()
    }

    /// Whether a turn is still being started.
    pub fn any_launching(&self) -> bool {
        !self.launching.is_empty()
    }

    /// The next launch's result (at the end of the run).
    pub async fn next_launched(&mut self) -> Option<Launched> {
        self.launched_rx.recv().await
    }

    /// Stops every running turn (at the end of the run).
    pub fn stop_all(&mut self) {
        for running in self.running.values_mut() {
            running.stopper.stop();
        }
    }

    /// Whether a turn still runs.
    pub fn any_running(&self) -> bool {
        !self.running.is_empty()
    }

    /// The next report of a running turn (at the end of the run).
    pub async fn next_relayed(&mut self) -> Option<(String, TurnId, Relayed)> {
        self.relay_rx.recv().await
    }

    /// `agent`'s turn `turn` ended with the run: forgotten, with its
    /// orphan record.
    pub fn ended(&mut self, cx: &LaunchContext, agent: &str, turn: TurnId) {
        if self.running.get(agent).is_some_and(|r| r.turn == turn) {
            self.running.remove(agent);
            orphans::clear(&cx.state_root, agent);
        }
    }

    /// Gives back the project config files this run changed (at its end).
    pub fn restore_workdirs(&mut self, cx: &LaunchContext, out: &mut Outbox) {
        for kind in std::mem::take(&mut self.prepared_workdirs) {
            let backend = crate::agents::backend::backend_for(kind);
            if let Err(e) = backend.restore_workdir(&cx.workflow.base_dir) {
                out.notice(format!(
                    "cannot restore {}: {e}",
                    backend.workdir_config().unwrap_or("the project's config")
                ));
            }
        }
    }
}

/// Whether `def` runs headless (over ACP the MCP servers come in
/// `session/new`: no project file).
fn headless(cx: &LaunchContext, def: &AgentDef) -> bool {
    crate::agents::backend::acp::drive(def, &cx.workflow.base_dir)
        != Ok(crate::agents::backend::acp::Drive::Acp)
}

/// The task relaying one turn's updates to the loop.
struct Relay {
    tx: mpsc::UnboundedSender<(String, TurnId, Relayed)>,
    name: String,
    turn: TurnId,
    workspace: Option<crate::workspace::AgentWorkspace>,
    /// The messages the turn answered (named in its commit).
    answered: Vec<u64>,
    number: u32,
    link: Option<(Arc<crate::agents::runtime::ssh::Connection>, u64)>,
}

impl Relay {
    async fn run(self, mut updates: mpsc::UnboundedReceiver<TurnUpdate>) {
        while let Some(update) = updates.recv().await {
            let relayed = match update.redacted() {
                TurnUpdate::Done(outcome) => self.done(outcome).await,
                other => Relayed::Update(other),
            };
            if self
                .tx
                .send((self.name.clone(), self.turn, relayed))
                .is_err()
            {
                break;
            }
        }
    }

    /// The turn's end, committed (a successful turn in a worktree) and,
    /// for a failed remote turn, whether its connection went.
    async fn done(&self, outcome: BackendOutcome) -> Relayed {
        let committed = match self.workspace.clone() {
            Some(ws) if outcome.success => {
                let (answered, number) = (self.answered.clone(), self.number);
                tokio::task::spawn_blocking(move || {
                    crate::workspace::commit::after_turn_of(&ws, &answered, Some(number))
                })
                .await
                .unwrap_or_else(|e| Some(format!("committing {}'s turn failed: {e}", self.name)))
            }
            _ => None,
        };
        // A failed turn on a host: did its connection go? (Off the loop: it
        // may ask the master.)
        let lost = match &self.link {
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
}
