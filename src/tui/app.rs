//! The control room's state and its one update function. Everything that
//! happens — an engine event, a key, a mouse click, a timer tick, an action
//! from a test — goes through [`App::update`], which changes the state and
//! returns [`Effect`]s for the caller to carry out (send a command to the
//! engine, copy to the clipboard, open the pager, quit). No I/O happens
//! here, so the whole app is tested by feeding inputs and reading state.
//!
//! A key goes to the first component that takes it (gitui's consumed / not
//! consumed): an open question (y/n), the help overlay, the command bar
//! ([`BarEvent`]), the editor (its `[keys.editor]` bindings, then the text
//! area), and finally the keymap: the focused pane's section, then global.

use crate::workspace::view::DiffTarget;
use std::collections::BTreeMap;
use std::time::Duration;

use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};

use super::QuitAction;
use super::action::{AckTarget, Action, FocusTarget, Pane, TaskAction};
use super::component::{Component, Handle, Mouse, Outcome, Visit};
use super::config::Config;
use super::keymap::{Key, Keymap, Section};
use super::panes::agents::{AgentRow, Agents, AgentsContext};
use super::panes::channel::{Channel, DrawContext};
use super::panes::command_bar::{BarEvent, BarMode, CommandBar};
use super::panes::documents::Documents;
use super::panes::inbox::{self, Inbox, InboxContext};
use super::panes::tasks::{self, BoardContext, Tasks};
use super::theme::Theme;
use crate::agents::runner::{AgentStatus, PauseReason};
use crate::context::mentions::{ALL, USER};
use crate::context::{Cursor, Since};
use crate::engine::link::Resync;
use crate::engine::tasks::TaskCommand;
use crate::engine::{Command, CommandFailed, EngineEvent, Reply, RequestError};
use crate::sanitize::for_terminal;

/// Something that happened, for [`App::update`].
#[derive(Debug)]
pub enum Input {
    /// An event from the engine (a fact every front end sees).
    Engine(EngineEvent),
    /// The engine's private answer to one of this app's commands.
    Reply(Result<Reply, CommandFailed>),
    /// The engine's event stream ended.
    EngineGone,
    /// A key press.
    Key(KeyEvent),
    /// A mouse event.
    Mouse(MouseEvent),
    /// Pasted text (bracketed paste).
    Paste(String),
    /// Time passed: `elapsed` since the control room opened.
    Tick(Duration),
    /// An action, as from the keymap or the command bar.
    Action(Action),
}

impl Input {
    /// A request's outcome as the app's input: its reply, or the engine
    /// gone.
    pub fn reply(outcome: Result<Reply, RequestError>) -> Input {
        match outcome {
            Ok(reply) => Input::Reply(Ok(reply)),
            Err(RequestError::Failed(failed)) => Input::Reply(Err(failed)),
            Err(RequestError::EngineGone) => Input::EngineGone,
        }
    }
}

/// What the caller must do after an update.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Send this command to the engine.
    Command(Command),
    /// Put this text on the clipboard (OSC 52).
    Copy(String),
    /// Show this text in `$PAGER`, suspending the screen.
    Pager(String),
    /// Stop another running instance (as `awtui stop @name`).
    StopInstance(String),
    /// Leave the control room.
    Quit,
}

/// A question waiting for yes or no.
#[derive(Clone, Debug, PartialEq)]
pub struct Confirm {
    /// The question.
    pub question: String,
    /// What yes does.
    pub on_yes: ConfirmAction,
}

/// What a confirmed question does.
#[derive(Clone, Debug, PartialEq)]
pub enum ConfirmAction {
    /// Quit although agents are working.
    Quit,
    /// Delete this document.
    Delete(String),
    /// Leave the editor, dropping unsaved changes.
    DiscardEdit,
    /// Save the edited document although what it cannot show is dropped.
    SaveAnyway,
    /// Merge, revert or discard an agent's workspace.
    Workspace {
        /// Whose workspace.
        agent: String,
        /// What to do.
        op: crate::workspace::view::WorkspaceOp,
    },
}

/// How the control room ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exit {
    /// The user quit and the instance was shut down.
    Shutdown,
    /// The user left; the instance keeps running.
    Detached,
    /// The instance ended by itself (or its link broke).
    EngineEnded,
    /// Back to the home list, or its attention view (the instance keeps
    /// running).
    Home {
        /// The attention view rather than the list.
        attention: bool,
    },
}

/// A line in the status bar.
#[derive(Clone, Debug, PartialEq)]
pub struct Status {
    /// The text (already sanitised).
    pub text: String,
    /// Whether it reports an error.
    pub error: bool,
}

/// Where each pane was drawn (for the mouse).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Areas {
    /// The agents pane (with border).
    pub agents: Rect,
    /// The channel pane (with border).
    pub channel: Rect,
    /// The inbox pane (with border).
    pub inbox: Rect,
    /// The documents pane (with border).
    pub documents: Rect,
    /// The task board (with border).
    pub tasks: Rect,
    /// The command bar.
    pub bar: Rect,
}

/// Settings the app starts with.
#[derive(Clone, Debug)]
pub struct AppOptions {
    /// What quitting does.
    pub on_quit: QuitAction,
    /// Offset from UTC for timestamps, in seconds.
    pub utc_offset: i32,
}

/// The whole state of the control room.
#[derive(Debug)]
pub struct App {
    /// Key bindings.
    pub keymap: Keymap,
    /// Colours.
    pub theme: Theme,
    /// Settings.
    pub options: AppOptions,
    /// Whether the first snapshot arrived.
    pub ready: bool,
    /// Events held while a snapshot is on its way.
    resync: Resync,
    /// The workflow's name.
    pub workflow: String,
    /// The instance's name.
    pub instance: String,
    /// Time since the control room opened.
    pub elapsed: Duration,
    /// When the instance's engine started (from the snapshot), so the
    /// header's up time is the instance's under `attach` too.
    pub started: Option<chrono::DateTime<chrono::Utc>>,
    /// Why the instance is paused, if it is.
    pub paused: Option<PauseReason>,
    /// Thread states set by agent operations (done, fail, delete), by root id.
    pub threads: std::collections::BTreeMap<u64, crate::engine::ops::ThreadState>,
    /// Messages agents deferred, shown in their inbox until they come back.
    pub deferred: Vec<crate::engine::ops::Deferred>,
    /// The task board, kept up to date by task events.
    pub tasks: crate::engine::tasks::TaskSnapshot,
    /// Tool approvals: requests waiting, rules (kept up to date by events).
    pub approvals: crate::approvals::ApprovalsSnapshot,
    /// The approval request whose card was put away (Esc) until a newer
    /// one comes.
    pub card_hidden: Option<u64>,
    /// The approval rules overlay, with its scroll.
    pub rules_view: Option<usize>,
    /// The agents pane.
    pub agents: Agents,
    /// The channel pane.
    pub channel: Channel,
    /// The inbox pane.
    pub inbox: Inbox,
    /// The documents pane.
    pub documents: Documents,
    /// The task board pane (its view of [`App::tasks`]).
    pub board: Tasks,
    /// Which of documents and tasks the wide layout shows under the
    /// channel when there is room for one only.
    pub lower: Pane,
    /// The wall-clock time, for the board's ages: set by the loop before
    /// each draw (tests fix it).
    pub now: chrono::DateTime<chrono::Utc>,
    /// The command bar.
    pub bar: CommandBar,
    /// Each recipient's cursor.
    pub cursors: BTreeMap<String, Cursor>,
    /// The focused pane.
    pub focus: Pane,
    /// The big pane shown when the screen is narrow.
    pub main: Pane,
    /// Focus before the bar took it.
    pub before_bar: Pane,
    /// The help overlay, with its scroll.
    pub help: Option<usize>,
    /// The diff view of an agent's workspace.
    pub diff: Option<super::panes::diff::DiffPane>,
    /// A question waiting.
    pub confirm: Option<Confirm>,
    /// The status line.
    pub status: Option<Status>,
    /// Spinner frame.
    pub spinner: usize,
    /// A shutdown was asked for and the engine has not finished yet.
    pub stopping: bool,
    /// The instance ended.
    pub ended: bool,
    /// How the app ended, once it did.
    pub exit: Option<Exit>,
    /// Whether the screen needs drawing.
    pub dirty: bool,
    /// Where panes were drawn.
    pub areas: Areas,
    /// Whether the last draw had room for one big pane only.
    pub narrow: bool,
    /// Where to go once the first snapshot is in (from the attention view).
    pub jump: Option<super::attention::Jump>,
    /// Every running instance's name (the loop refreshes it), for `@`
    /// completion and `/stop @other`.
    pub instances: Vec<String>,
}

impl App {
    /// A control room with no instance state yet (it comes with the first
    /// snapshot).
    pub fn new(config: Config, options: AppOptions) -> App {
        App {
            keymap: config.keymap,
            theme: config.theme,
            options,
            ready: false,
            resync: Resync::waiting(),
            workflow: String::new(),
            instance: String::new(),
            elapsed: Duration::ZERO,
            started: None,
            paused: None,
            threads: Default::default(),
            deferred: Vec::new(),
            tasks: Default::default(),
            approvals: Default::default(),
            card_hidden: None,
            rules_view: None,
            agents: Agents::default(),
            channel: Channel::default(),
            inbox: Inbox::default(),
            documents: Documents::default(),
            board: Tasks::default(),
            lower: Pane::Documents,
            now: chrono::Utc::now(),
            bar: CommandBar::default(),
            cursors: BTreeMap::new(),
            focus: Pane::Channel,
            main: Pane::Channel,
            before_bar: Pane::Channel,
            help: None,
            diff: None,
            confirm: None,
            status: None,
            spinner: 0,
            stopping: false,
            ended: false,
            exit: None,
            dirty: true,
            areas: Areas::default(),
            narrow: false,
            jump: None,
            instances: Vec::new(),
        }
    }

    /// Names that count as mentions and complete after `@`.
    pub fn names(&self) -> Vec<String> {
        let mut n: Vec<String> = self.agents.rows.iter().map(|r| r.name.clone()).collect();
        n.push(USER.to_string());
        n.push(ALL.to_string());
        n
    }

    /// How long the instance has been up: from its engine's start when
    /// known (at [`App::now`], set before each draw), else since the screen
    /// opened.
    pub fn up_time(&self) -> Duration {
        match self.started {
            Some(t) => (self.now - t).to_std().unwrap_or(Duration::ZERO),
            None => self.elapsed,
        }
    }

    /// Whether the spinner must keep turning (something is working).
    pub fn needs_tick(&self) -> bool {
        self.agents.animating() || self.channel.streaming() || self.stopping
    }

    /// How long the screen may sleep before it must change by itself (see
    /// [`wake_after`]); `since_tick` is the time since the last tick.
    pub fn wake_after(&self, since_tick: Duration) -> Duration {
        wake_after(self.needs_tick(), self.up_time(), since_tick)
    }

    fn info(&mut self, text: impl Into<String>) {
        self.status = Some(Status {
            text: for_terminal(&text.into()),
            error: false,
        });
    }

    fn error(&mut self, text: impl Into<String>) {
        self.status = Some(Status {
            text: for_terminal(&text.into()),
            error: true,
        });
    }

    /// Takes one input; returns what the caller must do.
    pub fn update(&mut self, input: Input) -> Vec<Effect> {
        self.dirty = true;
        match input {
            Input::Engine(event) => match self.resync.arrived(event) {
                Some(event) => self.engine(event),
                None => Vec::new(),
            },
            Input::Reply(reply) => self.reply(reply),
            Input::EngineGone => {
                self.ended = true;
                if self.exit.is_none() {
                    self.exit = Some(if self.stopping {
                        Exit::Shutdown
                    } else {
                        Exit::EngineEnded
                    });
                }
                vec![Effect::Quit]
            }
            Input::Key(key) => self.key(key),
            Input::Mouse(m) => self.mouse(m),
            Input::Paste(text) => {
                self.paste(&text);
                Vec::new()
            }
            Input::Tick(elapsed) => {
                self.elapsed = elapsed;
                self.spinner = self.spinner.wrapping_add(1);
                Vec::new()
            }
            Input::Action(a) => self.act(a),
        }
    }

    // ----- engine events -------------------------------------------------

    /// A key while the diff view is open: it takes every key.
    fn diff_key(&mut self, k: &Key) -> Vec<Effect> {
        use super::panes::diff::DiffKey;
        let Some(d) = &mut self.diff else {
            return Vec::new();
        };
        match d.key(k) {
            DiffKey::Nothing => Vec::new(),
            DiffKey::Close => {
                self.diff = None;
                Vec::new()
            }
            DiffKey::Read(turn) => {
                d.loading = true;
                vec![Effect::Command(Command::ReadDiff {
                    target: d.view.target.clone(),
                    turn,
                })]
            }
            DiffKey::Ask(op) => match d.view.target.clone() {
                DiffTarget::Agent(agent) => self.ask_workspace(agent, op),
                DiffTarget::Task(_) => {
                    self.error(format!(
                        "{}: a task's workspace is merged or dropped with workspace_update",
                        op.name()
                    ));
                    Vec::new()
                }
            },
        }
    }

    /// Asks before merging, reverting or discarding `agent`'s work.
    fn ask_workspace(
        &mut self,
        agent: String,
        op: crate::workspace::view::WorkspaceOp,
    ) -> Vec<Effect> {
        use crate::workspace::view::WorkspaceOp;
        let what = match op {
            WorkspaceOp::Merge => format!("Merge {agent}'s branch into its base branch?"),
            WorkspaceOp::Revert { turn } => {
                format!("Revert turn {turn} of {agent} (a new commit on its branch)?")
            }
            WorkspaceOp::Discard => format!(
                "Discard {agent}'s work (`awtui stop --clean` then removes its unmerged branch)?"
            ),
        };
        self.confirm = Some(Confirm {
            question: format!("{what} (y/n)"),
            on_yes: ConfirmAction::Workspace { agent, op },
        });
        Vec::new()
    }

    /// Reads the open diff view again (the same step).
    fn refresh_diff(&mut self) -> Vec<Effect> {
        match &mut self.diff {
            Some(d) => {
                d.loading = true;
                vec![Effect::Command(Command::ReadDiff {
                    target: d.view.target.clone(),
                    turn: d.view.turn,
                })]
            }
            None => Vec::new(),
        }
    }

    /// Asks for a snapshot of the newest `messages` (at start, or after
    /// falling behind the events); events wait until it comes.
    pub fn resync(&mut self, messages: usize) -> Command {
        self.resync.asked();
        Command::Snapshot { messages }
    }

    /// The engine's answer to one of this app's commands.
    fn reply(&mut self, reply: Result<Reply, CommandFailed>) -> Vec<Effect> {
        match reply {
            Ok(Reply::Done) => Vec::new(),
            Ok(Reply::Snapshot { snapshot }) => {
                let mut effects = self.snapshot(*snapshot);
                for event in self.resync.answered() {
                    effects.extend(self.engine(event));
                }
                effects
            }
            Ok(Reply::Document { file, content }) => {
                let o = self.documents.content(file, content);
                self.apply(Pane::Documents, o)
            }
            // Raw output may hold escape sequences: never to the terminal.
            Ok(Reply::AgentLogs { text, .. }) => vec![Effect::Pager(for_terminal(&text))],
            Ok(Reply::Diff { view }) => {
                match &mut self.diff {
                    Some(d) if d.view.target == view.target => d.replace(*view),
                    _ => self.diff = Some(super::panes::diff::DiffPane::new(*view)),
                }
                Vec::new()
            }
            Ok(Reply::Said { text }) => {
                self.info(for_terminal(&text));
                // The branch moved: show it as it is now.
                self.refresh_diff()
            }
            Ok(Reply::Task { task, checkpoints }) => {
                if let Some(d) = &mut self.board.detail
                    && d.task == task.id
                {
                    d.checkpoints = Some(checkpoints);
                }
                Vec::new()
            }
            Err(CommandFailed { command, error }) => {
                if command == "write_document"
                    && let Some(e) = &mut self.documents.editor
                {
                    e.saving = None;
                }
                if command == "read_document" {
                    self.documents.read_failed(&error);
                }
                self.error(format!("{command} failed: {error}"));
                if command == "snapshot" {
                    return self
                        .resync
                        .abandoned()
                        .into_iter()
                        .flat_map(|event| self.engine(event))
                        .collect();
                }
                Vec::new()
            }
        }
    }

    /// Draws from a snapshot: the whole state, from scratch.
    fn snapshot(&mut self, s: crate::engine::event::Snapshot) -> Vec<Effect> {
        self.ready = true;
        self.threads = s.ops.threads.clone();
        self.deferred = s.ops.deferred.clone();
        self.tasks = s.tasks.clone();
        self.approvals = s.approvals.clone();
        self.workflow = for_terminal(&s.workflow);
        self.instance = for_terminal(&s.instance);
        self.started = s.started;
        let selected = self.agents.selected().map(|r| r.name.clone());
        self.agents.rows = s.agents.into_iter().map(AgentRow::from_snapshot).collect();
        if let Some(name) = selected
            && let Some(i) = self.agents.rows.iter().position(|r| r.name == name)
        {
            self.agents.selected = i;
        }
        self.channel.reset(
            s.messages
                .into_iter()
                .map(|m| (m.entry, m.annotations))
                .collect(),
            s.total_messages,
        );
        self.documents.files = s.documents;
        if !self.documents.files.contains(&s.entry_document) {
            self.documents.files.push(s.entry_document.clone());
            self.documents.files.sort();
        }
        self.documents.entry = s.entry_document.clone();
        self.cursors = s.cursors;
        let loaded = inbox::unread(&self.channel, &self.cursors, USER).len();
        self.channel.user_unread_not_loaded = s.user_unread.saturating_sub(loaded);
        self.paused = s.paused;
        if let Some(jump) = self.jump.take() {
            self.go_to(jump);
        }
        let mut effects = Vec::new();
        // Open details may have missed checkpoints while behind: reload.
        if let Some(d) = &self.board.detail {
            effects.push(Effect::Command(Command::ReadTask {
                task: d.task.clone(),
            }));
        }
        if self.documents.viewer.is_none() && self.documents.pending.is_none() {
            self.documents.selected = self
                .documents
                .files
                .iter()
                .position(|f| *f == s.entry_document)
                .unwrap_or(0);
            self.documents.pending = Some(s.entry_document.clone());
            effects.push(Effect::Command(Command::ReadDocument {
                file: Some(s.entry_document),
            }));
        }
        effects
    }

    /// Shows where an attention item happened: its message selected in
    /// the channel, or its agent in the agents pane.
    fn go_to(&mut self, jump: super::attention::Jump) {
        use super::attention::Jump;
        match jump {
            Jump::Message(id) => {
                self.focus = Pane::Channel;
                self.main = Pane::Channel;
                if !self.channel.select_id(id) {
                    self.error(format!("message #{id} is not among those loaded"));
                }
            }
            Jump::Agent(name) => match self.agents.rows.iter().position(|r| r.name == name) {
                Some(i) => {
                    self.agents.selected = i;
                    self.focus = Pane::Agents;
                    self.main = Pane::Agents;
                }
                None => self.error(format!("there is no agent '{name}' any more")),
            },
            Jump::Instance => {}
        }
    }

    /// A fact from the engine.
    fn engine(&mut self, event: EngineEvent) -> Vec<Effect> {
        match event {
            EngineEvent::Message { entry, annotations } => {
                if let Some(note) = self.channel.push(entry, *annotations) {
                    self.info(note);
                }
                Vec::new()
            }
            EngineEvent::Status { agent, status } => {
                if let Some(row) = self.agents.get_mut(&agent) {
                    row.status = status;
                    if !row.working() {
                        row.activity = None;
                    }
                }
                // A turn began or ended: its step may have been committed.
                if self
                    .diff
                    .as_ref()
                    .is_some_and(|d| d.view.target == DiffTarget::Agent(agent.clone()))
                {
                    return self.refresh_diff();
                }
                Vec::new()
            }
            EngineEvent::Metrics { agent, metrics } => {
                if let Some(row) = self.agents.get_mut(&agent) {
                    row.metrics = metrics;
                }
                Vec::new()
            }
            EngineEvent::Activity { agent, activity } => {
                if let Some(row) = self.agents.get_mut(&agent) {
                    row.apply_activity(&activity);
                }
                Vec::new()
            }
            EngineEvent::Document { path, change, by } => {
                let o = self.documents.changed(path, change, by);
                self.apply(Pane::Documents, o)
            }
            EngineEvent::Cursor { agent, cursor } => {
                if agent == USER {
                    self.channel.user_acked(cursor.acked);
                }
                self.cursors.insert(agent, cursor);
                Vec::new()
            }
            EngineEvent::Paused { reason } => {
                self.paused = Some(reason);
                Vec::new()
            }
            EngineEvent::Resumed => {
                self.paused = None;
                self.info("resumed");
                Vec::new()
            }
            EngineEvent::Notice { text } => {
                self.info(text);
                Vec::new()
            }
            EngineEvent::Finished { .. } => {
                self.ended = true;
                if self.stopping {
                    self.exit = Some(Exit::Shutdown);
                    return vec![Effect::Quit];
                }
                // Stopped from elsewhere (`awtui stop`, a signal to the
                // host): the screen goes too, so the stop completes.
                self.exit = Some(Exit::EngineEnded);
                vec![Effect::Quit]
            }
            EngineEvent::Task { change } => {
                if let crate::tasks::TaskEvent::CheckpointAdded(c) = change.as_ref() {
                    self.board.checkpoint_added(c);
                }
                self.tasks.apply(*change);
                Vec::new()
            }
            EngineEvent::Approval { approval } => {
                self.approval(*approval);
                Vec::new()
            }
            EngineEvent::Deferred { deferred } => {
                self.deferred = deferred;
                Vec::new()
            }
            EngineEvent::Thread { id, state } => {
                use crate::engine::ops::ThreadState;
                let text = match &state {
                    ThreadState::Done { by } => format!("thread #{id} marked done by {by}"),
                    ThreadState::Failed { by, reason } => {
                        format!("thread #{id} failed ({by}): {reason}")
                    }
                    ThreadState::Deleted { by } => format!("thread #{id} deleted by {by}"),
                };
                self.info(for_terminal(&text));
                self.threads.insert(id, state);
                Vec::new()
            }
        }
    }

    /// The approval request the card shows: the oldest waiting, unless the
    /// person put the card away (Esc) and nothing newer came.
    pub fn card(&self) -> Option<&crate::approvals::Request> {
        let newest = self.approvals.pending.iter().map(|r| r.id).max()?;
        if self.card_hidden.is_some_and(|h| h >= newest) {
            return None;
        }
        self.approvals.pending.first()
    }

    /// Keeps the approvals up to date.
    fn approval(&mut self, event: crate::approvals::ApprovalEvent) {
        use crate::approvals::ApprovalEvent;
        match event {
            ApprovalEvent::Requested { request } => {
                if !self.approvals.pending.iter().any(|r| r.id == request.id) {
                    self.approvals.pending.push(request);
                }
            }
            ApprovalEvent::Decided { decision } => {
                self.approvals.pending.retain(|r| r.id != decision.id);
            }
            ApprovalEvent::Standing { standing } => self.approvals.standing = standing,
        }
    }

    /// Carries out what `pane`'s component asks.
    fn apply(&mut self, pane: Pane, o: Outcome) -> Vec<Effect> {
        match o.note {
            Some((t, true)) => self.error(t),
            Some((t, false)) => self.info(t),
            None => {}
        }
        if o.focus {
            self.focus = pane;
            self.main = pane;
            if matches!(pane, Pane::Documents | Pane::Tasks) {
                self.lower = pane;
            }
        }
        if let Some(c) = o.confirm {
            self.confirm = Some(c);
        }
        let mut effects: Vec<Effect> = o.commands.into_iter().map(Effect::Command).collect();
        if let Some(a) = o.then {
            effects.extend(self.act(a));
        }
        effects
    }

    /// Does `v` to `pane`'s component with that pane's context; `None`
    /// for the bar (not a component).
    pub fn visit<V: Visit>(&mut self, pane: Pane, v: V) -> Option<V::Out> {
        Some(match pane {
            Pane::Agents => {
                let cx = AgentsContext {
                    theme: &self.theme,
                    spinner: self.spinner,
                };
                v.visit(&mut self.agents, &cx)
            }
            Pane::Channel => {
                let names = self.names();
                let cx = DrawContext {
                    theme: &self.theme,
                    names: &names,
                    cursors: &self.cursors,
                    spinner: self.spinner,
                    utc_offset: self.options.utc_offset,
                };
                v.visit(&mut self.channel, &cx)
            }
            Pane::Inbox => {
                let items = self.inbox_items();
                let cx = InboxContext {
                    theme: &self.theme,
                    channel: &self.channel,
                    items: &items,
                    deferred: &self.deferred,
                    agent: self.agents.selected().map(|r| r.name.as_str()),
                    utc_offset: self.options.utc_offset,
                };
                v.visit(&mut self.inbox, &cx)
            }
            Pane::Documents => v.visit(&mut self.documents, &self.theme),
            Pane::Tasks => {
                let cx = BoardContext::new(
                    &self.tasks,
                    &self.channel,
                    &self.theme,
                    self.now,
                    self.options.utc_offset,
                );
                v.visit(&mut self.board, &cx)
            }
            Pane::Bar => return None,
        })
    }

    /// Hands an action or mouse event to `pane` and carries out what it
    /// asks.
    fn handle(&mut self, pane: Pane, h: Handle<'_>) -> Vec<Effect> {
        match self.visit(pane, h) {
            Some(o) => self.apply(pane, o),
            None => Vec::new(),
        }
    }

    /// The keymap section the focused pane's keys are in and the commands
    /// it offers (the hint line).
    pub fn commands(&self) -> (Section, &'static [&'static str]) {
        match self.focus {
            Pane::Agents => self.agents.commands(),
            Pane::Channel => self.channel.commands(),
            Pane::Inbox => self.inbox.commands(),
            Pane::Documents => self.documents.commands(),
            Pane::Tasks => self.board.commands(),
            Pane::Bar => (Section::Global, &[]),
        }
    }

    // ----- keys and mouse -------------------------------------------------

    fn key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if key.kind == KeyEventKind::Release {
            self.dirty = false;
            return Vec::new();
        }
        let Some(k) = Key::from_event(&key) else {
            return Vec::new();
        };
        if let Some(c) = self.confirm.clone() {
            return match k.code {
                super::keymap::KeyCodeKey::Char('y' | 'Y') | super::keymap::KeyCodeKey::Enter => {
                    self.act(Action::Yes)
                }
                super::keymap::KeyCodeKey::Char('n' | 'N' | 'q')
                | super::keymap::KeyCodeKey::Esc => self.act(Action::No),
                super::keymap::KeyCodeKey::Char('d' | 'D')
                    if c.on_yes == ConfirmAction::Quit
                        && self.options.on_quit == QuitAction::Ask =>
                {
                    self.confirm = None;
                    self.act(Action::Detach)
                }
                _ if k.ctrl && k.code == super::keymap::KeyCodeKey::Char('c') => {
                    // A second Ctrl-C while asked to quit means it.
                    if c.on_yes == ConfirmAction::Quit {
                        self.act(Action::Yes)
                    } else {
                        self.act(Action::No)
                    }
                }
                _ => Vec::new(),
            };
        }
        if self.diff.is_some() {
            return self.diff_key(&k);
        }
        if let Some(scroll) = &mut self.rules_view {
            use super::keymap::KeyCodeKey as C;
            match k.code {
                C::Char('j') | C::Down => *scroll = scroll.saturating_add(1),
                C::Char('k') | C::Up => *scroll = scroll.saturating_sub(1),
                C::Esc | C::Char('q') | C::Enter => self.rules_view = None,
                C::Char('c') if k.ctrl => self.rules_view = None,
                _ => {}
            }
            return Vec::new();
        }
        if self.focus != Pane::Bar
            && self.documents.editor.is_none()
            && let Some(request) = self.card().map(|r| r.id)
        {
            use super::keymap::KeyCodeKey as C;
            let decide = |allow, always| Action::Decide {
                request: Some(request),
                allow,
                always,
                reason: None,
            };
            match k.code {
                C::Char('y') if !k.ctrl && !k.alt => return self.act(decide(true, false)),
                C::Char('a') if !k.ctrl && !k.alt => return self.act(decide(true, true)),
                C::Char('d') if !k.ctrl && !k.alt => return self.act(decide(false, true)),
                // The reason is typed in the bar; Enter without one denies.
                C::Char('n') if !k.ctrl && !k.alt => {
                    return self.act(Action::Prompt(format!("/deny {request} ")));
                }
                C::Esc => {
                    self.card_hidden = Some(request);
                    return Vec::new();
                }
                _ => {}
            }
        }
        if let Some(scroll) = &mut self.help {
            use super::keymap::KeyCodeKey as C;
            match k.code {
                C::Char('j') | C::Down => *scroll = scroll.saturating_add(1),
                C::Char('k') | C::Up => *scroll = scroll.saturating_sub(1),
                C::Char('d') if k.ctrl => *scroll = scroll.saturating_add(10),
                C::Char('u') if k.ctrl => *scroll = scroll.saturating_sub(10),
                C::PageDown | C::Char(' ') => *scroll = scroll.saturating_add(10),
                C::PageUp => *scroll = scroll.saturating_sub(10),
                C::Char('g') | C::Home => *scroll = 0,
                // Drawing clamps it to the last page.
                C::Char('G') | C::End => *scroll = usize::MAX,
                C::Esc | C::Char('?' | 'q') | C::Enter | C::F(1) => self.help = None,
                C::Char('c') if k.ctrl => self.help = None,
                _ => {}
            }
            return Vec::new();
        }
        self.status = None;
        if self.focus == Pane::Bar {
            return self.bar_key(key, k);
        }
        if self.focus == Pane::Documents && self.documents.editor.is_some() {
            if self
                .documents
                .editor
                .as_ref()
                .is_some_and(|e| e.conflict.is_some())
                && let Some(a) = self.keymap.get(Section::Conflict, &k).cloned()
            {
                return self.act(a);
            }
            if let Some(a) = self.keymap.get(Section::Editor, &k).cloned() {
                return self.act(a);
            }
            if let Some(e) = &mut self.documents.editor {
                e.area.input(key);
            }
            return Vec::new();
        }
        match self.keymap.lookup(self.focus, &k).cloned() {
            Some(a) => self.act(a),
            None => {
                self.dirty = false;
                Vec::new()
            }
        }
    }

    fn bar_key(&mut self, key: KeyEvent, k: Key) -> Vec<Effect> {
        // `@` completes agents, then every running instance.
        let mut names = self.names();
        for i in &self.instances {
            if !names.contains(i) {
                names.push(i.clone());
            }
        }
        match self.bar.event(&key, &names) {
            BarEvent::Consumed => Vec::new(),
            BarEvent::Leave => {
                self.focus = self.before_bar;
                Vec::new()
            }
            BarEvent::Submit(line, BarMode::Search) => {
                self.focus = Pane::Channel;
                self.act(Action::Search(Some(line)))
            }
            BarEvent::Submit(line, BarMode::Command) => match Action::from_bar(&line) {
                None => Vec::new(),
                Some(Ok(a)) => {
                    let focus_was = self.focus;
                    let effects = self.act(a);
                    // A refused command keeps its line to fix.
                    if self.focus == focus_was && self.status.as_ref().is_some_and(|s| s.error) {
                        self.bar.set(&line);
                    }
                    effects
                }
                Some(Err(e)) => {
                    self.bar.set(&line);
                    self.error(e.to_string());
                    Vec::new()
                }
            },
            // Keys the bar does not use: Tab with nothing to complete and
            // Shift-Tab move the focus; global bindings with Ctrl work.
            BarEvent::NotConsumed => match key.code {
                KeyCode::Tab => self.act(Action::Focus(FocusTarget::Next)),
                KeyCode::BackTab => self.act(Action::Focus(FocusTarget::Prev)),
                _ if k.ctrl || k.alt || matches!(k.code, super::keymap::KeyCodeKey::F(_)) => {
                    match self.keymap.get(Section::Global, &k).cloned() {
                        Some(a) => self.act(a),
                        None => Vec::new(),
                    }
                }
                _ => Vec::new(),
            },
        }
    }

    fn paste(&mut self, text: &str) {
        let text = for_terminal(text);
        if self.focus == Pane::Documents
            && let Some(e) = &mut self.documents.editor
        {
            e.area.insert_str(text);
            return;
        }
        if self.focus != Pane::Bar {
            self.before_bar = self.focus;
            self.focus = Pane::Bar;
        }
        self.bar.insert(&text);
    }

    fn pane_at(&self, x: u16, y: u16) -> Option<Pane> {
        let p = Position::new(x, y);
        let a = &self.areas;
        [
            (a.agents, Pane::Agents),
            (a.channel, Pane::Channel),
            (a.inbox, Pane::Inbox),
            (a.documents, Pane::Documents),
            (a.tasks, Pane::Tasks),
            (a.bar, Pane::Bar),
        ]
        .into_iter()
        .find(|(r, _)| r.contains(p))
        .map(|(_, pane)| pane)
    }

    fn mouse(&mut self, m: MouseEvent) -> Vec<Effect> {
        if self.help.is_some() || self.confirm.is_some() {
            if let (Some(s), MouseEventKind::ScrollDown) = (&mut self.help, m.kind) {
                *s += 3;
            } else if let (Some(s), MouseEventKind::ScrollUp) = (&mut self.help, m.kind) {
                *s = s.saturating_sub(3);
            }
            return Vec::new();
        }
        let Some(pane) = self.pane_at(m.column, m.row) else {
            self.dirty = false;
            return Vec::new();
        };
        let area = match pane {
            Pane::Agents => self.areas.agents,
            Pane::Channel => self.areas.channel,
            Pane::Inbox => self.areas.inbox,
            Pane::Documents => self.areas.documents,
            Pane::Tasks => self.areas.tasks,
            Pane::Bar => self.areas.bar,
        };
        let row = m.row.saturating_sub(area.y + 1) as usize;
        match m.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                if pane == Pane::Bar {
                    if self.focus != Pane::Bar {
                        self.before_bar = self.focus;
                    }
                    self.focus = Pane::Bar;
                    return Vec::new();
                }
                // Leaving the editor by clicking elsewhere keeps it open.
                self.focus = pane;
                self.main = if pane == Pane::Agents {
                    self.main
                } else {
                    pane
                };
                if matches!(pane, Pane::Documents | Pane::Tasks) {
                    self.lower = pane;
                }
                let click = Mouse::Click {
                    row,
                    x: m.column,
                    y: m.row,
                };
                self.handle(pane, Handle::Mouse(click))
            }
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
                let up = m.kind == MouseEventKind::ScrollUp;
                self.handle(pane, Handle::Mouse(Mouse::Scroll { up }))
            }
            _ => {
                self.dirty = false;
                Vec::new()
            }
        }
    }

    // ----- actions ----------------------------------------------------------

    /// The inbox items as shown now.
    pub fn inbox_items(&self) -> Vec<inbox::Item> {
        inbox::items(
            &self.channel,
            &self.cursors,
            self.agents.selected().map(|r| r.name.as_str()),
        )
    }

    fn selected_text(&self) -> Option<(u64, String)> {
        let m = match self.focus {
            Pane::Inbox => self
                .inbox_items()
                .get(self.inbox.selected)
                .map(|it| &self.channel.messages[it.index]),
            _ => self.channel.selected_message(),
        }?;
        Some((m.entry.id, m.clean.clone()))
    }

    fn agent_known(&self, name: &str) -> bool {
        self.agents.rows.iter().any(|r| r.name == name)
    }

    fn target_agent(&mut self, name: Option<String>, what: &str) -> Option<String> {
        match name {
            Some(n) if self.agent_known(&n) => Some(n),
            Some(n) => {
                self.error(format!("{what}: there is no agent '{n}'"));
                None
            }
            None => match self.agents.selected() {
                Some(r) => Some(r.name.clone()),
                None => {
                    self.error(format!("{what}: no agent selected"));
                    None
                }
            },
        }
    }

    fn shutdown(&mut self) -> Vec<Effect> {
        if self.ended {
            self.exit = Some(Exit::Shutdown);
            return vec![Effect::Quit];
        }
        self.stopping = true;
        self.info("stopping the agents…");
        vec![Effect::Command(Command::Shutdown)]
    }

    fn quit(&mut self) -> Vec<Effect> {
        match self.options.on_quit {
            QuitAction::Shutdown | QuitAction::Ask => self.shutdown(),
            QuitAction::Detach | QuitAction::Home => self.detach(),
        }
    }

    /// Leaves the screen without stopping the instance; refused when the
    /// instance cannot outlive the screen (nothing on disk to resume from).
    fn detach(&mut self) -> Vec<Effect> {
        if self.options.on_quit == QuitAction::Shutdown && !self.ended {
            self.error(
                "detach: this instance keeps its context in memory and cannot run \
                 without the screen (/quit stops it)",
            );
            return Vec::new();
        }
        self.exit = Some(if self.ended {
            Exit::EngineEnded
        } else {
            Exit::Detached
        });
        vec![Effect::Quit]
    }

    /// Carries out one action.
    pub fn act(&mut self, action: Action) -> Vec<Effect> {
        self.dirty = true;
        match action {
            Action::Quit { force } => {
                if self.stopping {
                    return Vec::new();
                }
                let working: Vec<String> = self
                    .agents
                    .rows
                    .iter()
                    .filter(|r| r.working())
                    .map(|r| r.name.clone())
                    .collect();
                if !force && let Some(e) = self.documents.editor.as_ref().filter(|e| e.dirty()) {
                    self.confirm = Some(Confirm {
                        question: format!(
                            "{} has unsaved changes (ctrl-s saves). Quit anyway? (y/n)",
                            e.file
                        ),
                        on_yes: ConfirmAction::Quit,
                    });
                    return Vec::new();
                }
                let busy = match working.len() {
                    0 => String::new(),
                    1 => format!("{} is working. ", working[0]),
                    n => format!("{n} agents are working. "),
                };
                if !force && self.options.on_quit == QuitAction::Ask && !self.ended {
                    self.confirm = Some(Confirm {
                        question: format!(
                            "{busy}Quit: stop @{} (y) or detach, it keeps running (d)? (y/d/n)",
                            self.instance
                        ),
                        on_yes: ConfirmAction::Quit,
                    });
                    return Vec::new();
                }
                if !force
                    && !busy.is_empty()
                    && self.options.on_quit == QuitAction::Shutdown
                    && !self.ended
                {
                    self.confirm = Some(Confirm {
                        question: format!("{busy}Quit and stop every agent? (y/n)"),
                        on_yes: ConfirmAction::Quit,
                    });
                    return Vec::new();
                }
                self.quit()
            }
            Action::Detach => self.detach(),
            Action::Home | Action::Attention => {
                if self.options.on_quit != QuitAction::Home {
                    self.error(
                        "the list of instances and the attention view open with awtui \
                         (no argument)",
                    );
                    return Vec::new();
                }
                self.exit = Some(Exit::Home {
                    attention: matches!(action, Action::Attention),
                });
                vec![Effect::Quit]
            }
            Action::Yes => match self.confirm.take().map(|c| c.on_yes) {
                Some(ConfirmAction::Quit) => self.quit(),
                Some(ConfirmAction::Delete(file)) => {
                    vec![Effect::Command(Command::DeleteDocument { file })]
                }
                Some(ConfirmAction::DiscardEdit) => {
                    self.documents.editor = None;
                    Vec::new()
                }
                Some(ConfirmAction::SaveAnyway) => {
                    let o = self.documents.save(true);
                    self.apply(Pane::Documents, o)
                }
                Some(ConfirmAction::Workspace { agent, op }) => {
                    vec![Effect::Command(Command::Workspace { agent, op })]
                }
                None => Vec::new(),
            },
            Action::No => {
                self.confirm = None;
                Vec::new()
            }
            Action::Focus(t) => {
                let i = Pane::ORDER
                    .iter()
                    .position(|p| *p == self.focus)
                    .unwrap_or(0);
                let n = Pane::ORDER.len();
                let next = match t {
                    FocusTarget::Next => Pane::ORDER[(i + 1) % n],
                    FocusTarget::Prev => Pane::ORDER[(i + n - 1) % n],
                    FocusTarget::Pane(p) => p,
                };
                if next == Pane::Bar && self.focus != Pane::Bar {
                    self.before_bar = self.focus;
                    self.bar.mode = BarMode::Command;
                }
                if matches!(
                    next,
                    Pane::Channel | Pane::Inbox | Pane::Documents | Pane::Tasks
                ) {
                    self.main = next;
                }
                if matches!(next, Pane::Documents | Pane::Tasks) {
                    self.lower = next;
                }
                self.focus = next;
                Vec::new()
            }
            Action::Decide {
                request,
                allow,
                always,
                reason,
            } => {
                let Some(request) = request.or_else(|| self.card().map(|r| r.id)) else {
                    self.error("no approval request waits");
                    return Vec::new();
                };
                use crate::approvals::{Answer, Verdict};
                let verdict = if allow { Verdict::Allow } else { Verdict::Deny };
                vec![Effect::Command(Command::Approve {
                    request,
                    answer: Answer {
                        verdict: Some(verdict),
                        always,
                        rule: None,
                        reason,
                    },
                })]
            }
            Action::Rules => {
                self.rules_view = match self.rules_view {
                    Some(_) => None,
                    None => Some(0),
                };
                Vec::new()
            }
            Action::Revoke { agent, rule } => {
                vec![Effect::Command(Command::RevokeApproval { agent, rule })]
            }
            Action::Prompt(text) => {
                if self.focus != Pane::Bar {
                    self.before_bar = self.focus;
                }
                self.focus = Pane::Bar;
                self.bar.mode = BarMode::Command;
                self.bar.set(&text);
                Vec::new()
            }
            Action::Move(_) => self.handle(self.focus, Handle::Act(&action)),
            Action::Open => self.handle(self.focus, Handle::Act(&action)),
            Action::Back => {
                if self.help.take().is_some() {
                    return Vec::new();
                }
                if self.focus == Pane::Bar {
                    self.focus = self.before_bar;
                    return Vec::new();
                }
                self.handle(self.focus, Handle::Act(&action))
            }
            Action::Help => {
                self.help = if self.help.is_some() { None } else { Some(0) };
                Vec::new()
            }
            Action::Expand => {
                if !self.channel.toggle_expand() {
                    self.error("the selected message has no CONTEXT block and fits the screen");
                }
                Vec::new()
            }
            Action::Copy | Action::Pager if self.focus == Pane::Tasks => match self.task_text() {
                Some((id, text)) if action == Action::Copy => {
                    self.info(format!("copied task {id} to the clipboard"));
                    vec![Effect::Copy(text)]
                }
                Some((_, text)) => vec![Effect::Pager(text)],
                None => {
                    self.error("no task selected");
                    Vec::new()
                }
            },
            Action::Copy => match self.selected_text() {
                Some((id, text)) => {
                    self.info(format!("copied #{id} to the clipboard"));
                    vec![Effect::Copy(text)]
                }
                None => {
                    self.error("copy: select a message first (j/k)");
                    Vec::new()
                }
            },
            Action::Pager => match self.selected_text() {
                Some((_, text)) => vec![Effect::Pager(text)],
                None => {
                    self.error("pager: select a message first (j/k)");
                    Vec::new()
                }
            },
            Action::Newest => {
                self.channel.newest();
                Vec::new()
            }
            Action::Stop(target) => {
                if let Some(t) = &target
                    && let Some(inst) = t.strip_prefix('@')
                {
                    if inst == self.instance {
                        return self.shutdown();
                    }
                    if !self.agent_known(inst) && self.instances.iter().any(|i| i == inst) {
                        self.info(format!("stopping @{inst}…"));
                        return vec![Effect::StopInstance(inst.to_string())];
                    }
                    if !self.agent_known(inst) {
                        self.error(format!(
                            "stop: '{inst}' is neither an agent, this instance ({}) nor a running instance",
                            self.instance
                        ));
                        return Vec::new();
                    }
                }
                let target = target.map(|t| t.trim_start_matches('@').to_string());
                match self.target_agent(target, "stop") {
                    Some(agent) => {
                        self.info(format!("stopping {agent}"));
                        vec![Effect::Command(Command::Stop { agent })]
                    }
                    None => Vec::new(),
                }
            }
            Action::Logs(target) => match self.target_agent(target, "logs") {
                Some(agent) => vec![Effect::Command(Command::ReadAgentLogs { agent })],
                None => Vec::new(),
            },
            Action::Diff { target, turn } => {
                let target = match target {
                    Some(t) => Some(t),
                    // On the board: the selected task's workspace.
                    None if self.focus == Pane::Tasks => match self.board.current(&self.tasks) {
                        Some(t) => Some(DiffTarget::Task(t.id.clone())),
                        None => {
                            self.error("diff: no task selected");
                            None
                        }
                    },
                    None => self.target_agent(None, "diff").map(DiffTarget::Agent),
                };
                match target {
                    Some(DiffTarget::Agent(a)) if !self.agent_known(&a) => {
                        self.error(format!("diff: there is no agent '{a}'"));
                        Vec::new()
                    }
                    Some(target) => vec![Effect::Command(Command::ReadDiff { target, turn })],
                    None => Vec::new(),
                }
            }
            Action::Workspace { agent, op } => {
                let agent = agent.or_else(|| match self.diff.as_ref().map(|d| &d.view.target) {
                    Some(DiffTarget::Agent(a)) => Some(a.clone()),
                    _ => None,
                });
                match self.target_agent(agent, op.name()) {
                    Some(agent) => self.ask_workspace(agent, op),
                    None => Vec::new(),
                }
            }
            Action::Restart(target) => match self.target_agent(target, "restart") {
                Some(agent) => {
                    self.info(format!("restarting {agent}"));
                    vec![Effect::Command(Command::Restart { agent })]
                }
                None => Vec::new(),
            },
            Action::Resume => {
                if self.paused.is_none() {
                    self.info("the instance is not paused");
                }
                vec![Effect::Command(Command::Resume)]
            }
            Action::Ack { agent, until } => self.ack(agent, until),
            Action::Send { to, text } => {
                if !self.names().contains(&to) {
                    self.error(format!("send: there is no agent '{to}'"));
                    return Vec::new();
                }
                vec![Effect::Command(Command::Post {
                    text: format!("@{to} {text}"),
                })]
            }
            Action::Post(text) => {
                self.channel.newest();
                vec![Effect::Command(Command::Post { text })]
            }
            Action::Task(t) => self.task_action(t),
            Action::Doc(file) => {
                self.focus = Pane::Documents;
                self.main = Pane::Documents;
                self.lower = Pane::Documents;
                self.open_document(file)
            }
            Action::New(file) => {
                let o = self.documents.create(file);
                self.apply(Pane::Documents, o)
            }
            Action::Delete(file) => {
                let file = file.or_else(|| self.documents.selected_file().map(str::to_string));
                match file {
                    Some(f) => {
                        self.confirm = Some(Confirm {
                            question: format!("Delete {f}? (y/n)"),
                            on_yes: ConfirmAction::Delete(f),
                        });
                    }
                    None => self.error("delete: no document selected"),
                }
                Vec::new()
            }
            Action::Edit => {
                let o = self.documents.edit();
                self.apply(Pane::Documents, o)
            }
            Action::Save => {
                let o = self.documents.save(false);
                self.apply(Pane::Documents, o)
            }
            Action::Resolve(r) => {
                let o = self.documents.resolve(r);
                self.apply(Pane::Documents, o)
            }
            Action::Search(None) => {
                if self.focus != Pane::Bar {
                    self.before_bar = self.focus;
                }
                self.focus = Pane::Bar;
                self.bar.mode = BarMode::Search;
                self.bar
                    .set(self.channel.search.clone().unwrap_or_default().as_str());
                Vec::new()
            }
            Action::Search(Some(q)) => {
                self.focus = Pane::Channel;
                self.main = Pane::Channel;
                let n = self.channel.set_search(Some(q.clone()));
                if q.is_empty() {
                    self.info("search cleared");
                } else if n == 0 {
                    self.error(format!("no message contains '{q}'"));
                } else {
                    self.info(format!("{n} matches for '{q}' (n older, N newer)"));
                }
                Vec::new()
            }
            Action::SearchNext | Action::SearchPrev => {
                match self.channel.next_match(action == Action::SearchNext) {
                    Some((k, n)) => self.info(format!("match {k}/{n}")),
                    None => self.error("no search (press / to search)"),
                }
                Vec::new()
            }
            Action::Filter(f) => {
                match f {
                    Some(f) => {
                        let text = f.to_string();
                        self.channel.set_filter(f);
                        self.info(format!(
                            "filter {text}: {} messages (F clears)",
                            self.channel.order.len()
                        ));
                    }
                    None => {
                        self.channel.set_filter(Default::default());
                        self.info("filter off");
                    }
                }
                self.focus = Pane::Channel;
                self.main = Pane::Channel;
                Vec::new()
            }
        }
    }

    /// What the board draws with.
    pub fn board_context(&self) -> BoardContext<'_> {
        BoardContext::new(
            &self.tasks,
            &self.channel,
            &self.theme,
            self.now,
            self.options.utc_offset,
        )
    }

    /// The current task's id and details as text (pager, clipboard).
    fn task_text(&self) -> Option<(String, String)> {
        let task = self.board.current(&self.tasks)?;
        let detail = self.board.detail.as_ref().filter(|d| d.task == task.id);
        let lines = self.board_context().detail_lines(task, detail);
        Some((task.id.clone(), tasks::plain(&lines)))
    }

    /// The task a `/task` command names (`None`: the current one), or an
    /// error on the status line.
    fn task_target(&mut self, reference: Option<&str>, what: &str) -> Option<crate::tasks::Task> {
        let found = match reference {
            Some(r) => tasks::resolve(&self.tasks, r).cloned(),
            None => self
                .board
                .current(&self.tasks)
                .cloned()
                .ok_or_else(|| "no task selected (5 shows the board)".to_string()),
        };
        match found {
            Ok(t) => Some(t),
            Err(e) => {
                self.error(format!("task {what}: {e}"));
                None
            }
        }
    }

    /// Carries out a `/task` command: one [`Command::Task`] for the engine
    /// (its refusal comes back as this app's error line), a prompt for a
    /// missing outcome or error, or a change of the board's filter.
    fn task_action(&mut self, action: TaskAction) -> Vec<Effect> {
        let (command, note) = match action {
            TaskAction::Add {
                name,
                after,
                assignee,
                workflow,
            } => {
                if let Some(a) = &assignee
                    && !self.agent_known(a)
                {
                    self.error(format!("task add: there is no agent '{a}'"));
                    return Vec::new();
                }
                let mut depends_on = Vec::new();
                for d in &after {
                    match tasks::resolve(&self.tasks, d) {
                        Ok(t) => depends_on.push(t.id.clone()),
                        Err(e) => {
                            self.error(format!("task add: --after {e}"));
                            return Vec::new();
                        }
                    }
                }
                let note = format!("adding task “{name}”");
                let command = TaskCommand::Add {
                    workflow,
                    name,
                    description: String::new(),
                    depends_on,
                    assignee,
                };
                (command, note)
            }
            TaskAction::Release(r) => {
                let Some(t) = self.task_target(r.as_deref(), "release") else {
                    return Vec::new();
                };
                let note = format!("releasing “{}” ({})", t.name, t.id);
                (TaskCommand::Release { task: t.id }, note)
            }
            TaskAction::Skip(r) => {
                let Some(t) = self.task_target(r.as_deref(), "skip") else {
                    return Vec::new();
                };
                let note = format!("skipping “{}” ({})", t.name, t.id);
                let command = TaskCommand::Status {
                    task: t.id,
                    status: "skipped".into(),
                    outcome: None,
                    error: None,
                };
                (command, note)
            }
            TaskAction::Done {
                task,
                outcome: text,
            } => return self.task_finish(task, text, true),
            TaskAction::Fail { task, error: text } => return self.task_finish(task, text, false),
            TaskAction::Filter(f) => {
                self.board.filter = f.unwrap_or_default();
                self.board.detail = None;
                self.focus = Pane::Tasks;
                self.main = Pane::Tasks;
                self.lower = Pane::Tasks;
                if self.board.filter.is_empty() {
                    self.info("task filter off");
                } else {
                    let n = tasks::listed(&self.tasks, &self.board.filter).len();
                    self.info(format!(
                        "task filter {}: {n} task{} (F clears)",
                        self.board.filter,
                        if n == 1 { "" } else { "s" }
                    ));
                }
                return Vec::new();
            }
        };
        self.info(note);
        if self.focus == Pane::Bar {
            self.focus = self.before_bar;
        }
        vec![Effect::Command(Command::Task { task: command })]
    }

    /// `/task done` (`done`) or `/task fail`: without the outcome or error
    /// the bar asks for it, completed with the task's id.
    fn task_finish(
        &mut self,
        task: Option<String>,
        text: Option<String>,
        done: bool,
    ) -> Vec<Effect> {
        let verb = if done { "done" } else { "fail" };
        let Some(t) = self.task_target(task.as_deref(), verb) else {
            return Vec::new();
        };
        let Some(text) = text else {
            let effects = self.act(Action::Prompt(format!(
                "/task {verb} {} ",
                for_terminal(&t.id)
            )));
            self.info(format!(
                "type what {} “{}”, then enter",
                if done { "came of" } else { "went wrong with" },
                t.name
            ));
            return effects;
        };
        self.info(format!(
            "marking “{}” ({}) {}",
            t.name,
            t.id,
            if done { "completed" } else { "failed" }
        ));
        if self.focus == Pane::Bar {
            self.focus = self.before_bar;
        }
        let (status, outcome, error) = if done {
            ("completed", Some(text), None)
        } else {
            ("failed", None, Some(text))
        };
        vec![Effect::Command(Command::Task {
            task: TaskCommand::Status {
                task: t.id,
                status: status.into(),
                outcome,
                error,
            },
        })]
    }

    fn open_document(&mut self, file: String) -> Vec<Effect> {
        let o = self.documents.open(file);
        self.apply(Pane::Documents, o)
    }

    fn ack(&mut self, agent: Option<String>, until: AckTarget) -> Vec<Effect> {
        let items = self.inbox_items();
        let (agent, through) = match (agent, until) {
            (None, AckTarget::Selected) if self.focus == Pane::Inbox => {
                match items.get(self.inbox.selected) {
                    Some(it) => (it.recipient.clone(), it.id),
                    None => {
                        self.error("ack: the inbox is empty");
                        return Vec::new();
                    }
                }
            }
            (agent, until) => {
                let agent = match agent {
                    Some(a) if a == USER || self.agent_known(&a) => a,
                    Some(a) => {
                        self.error(format!("ack: there is no agent '{a}'"));
                        return Vec::new();
                    }
                    None => match self.agents.selected() {
                        Some(r) => r.name.clone(),
                        None => {
                            self.error("ack: no agent selected");
                            return Vec::new();
                        }
                    },
                };
                let through = match until {
                    AckTarget::Id(id) => id,
                    AckTarget::All | AckTarget::Selected => self.channel.last_id(),
                };
                (agent, through)
            }
        };
        let n = inbox::unread(&self.channel, &self.cursors, &agent)
            .iter()
            .filter(|i| i.id <= through)
            .count();
        self.info(format!(
            "acked {agent}'s inbox through #{through} ({n} message{})",
            if n == 1 { "" } else { "s" }
        ));
        vec![Effect::Command(Command::Ack {
            agent,
            until: Since::Id(through),
        })]
    }

    /// The names of agents that are working, for the header.
    pub fn working_count(&self) -> usize {
        self.agents.rows.iter().filter(|r| r.working()).count()
    }

    /// Whether an agent failed or stalled (the header warns).
    pub fn troubled(&self) -> Vec<&AgentRow> {
        self.agents
            .rows
            .iter()
            .filter(|r| matches!(r.status, AgentStatus::Failed(_) | AgentStatus::Stalled))
            .collect()
    }
}

/// A spinner frame while something works.
pub const TICK: Duration = Duration::from_millis(100);
/// The header's up time when idle is shown in whole minutes.
const MINUTE: Duration = Duration::from_secs(60);

/// How long the screen may sleep before it must change by itself: the
/// rest of a spinner frame (`since_tick` after the last) while something
/// `animating`, else until the up time `up` reaches its next whole minute,
/// so an idle screen wakes once a minute, when the header's clock turns.
/// Keys and events in between do not move the wake-up.
pub fn wake_after(animating: bool, up: Duration, since_tick: Duration) -> Duration {
    if animating {
        return TICK.saturating_sub(since_tick);
    }
    let into_minute = up.as_millis() % MINUTE.as_millis();
    MINUTE - Duration::from_millis(into_minute as u64)
}
