//! The control room's state and its one update function. Everything that
//! happens — an engine event, a key, a mouse click, a timer tick, an action
//! from a test — goes through [`App::update`], which changes the state and
//! returns [`Effect`]s for the caller to carry out (send a command to the
//! engine, copy to the clipboard, open the pager, quit). No I/O happens
//! here, so the whole app is tested by feeding inputs and reading state.
//!
//! A key goes to the first component that takes it (gitui's consumed / not
//! consumed): the layers over the panes, top first ([`Layer`]: a question,
//! the help, the rules, the approval card, the diff view, each through its
//! keymap section), the command bar
//! ([`BarEvent`](super::panes::command_bar::BarEvent)), the editor (its
//! `[keys.editor]` bindings, else a character types), and finally the
//! keymap: the focused pane's section, then global.
//!
//! This module holds the state and what crosses panes (handing input to a
//! pane's [`Component`] and carrying out its [`Outcome`]); `input` turns
//! keys, the mouse and the bar into actions, `actions` hands each action
//! to its handler (`session`, `agents`, `views`, `tasks`), and `engine`
//! applies the engine's events, replies and snapshots.

/// The layers drawn over the panes, bottom first: drawn in this order and
/// asked for keys in the reverse one (the top layer first), so what takes
/// a key is always what the person sees on top (help over an approval
/// card takes `y`, `d` and Esc; the card does not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    /// One agent's live view, full screen.
    Live,
    /// An agent's diff, full screen.
    Diff,
    /// The oldest approval request's card.
    Card,
    /// The approval rules.
    Rules,
    /// `?`.
    Help,
    /// A yes/no question.
    Confirm,
}

impl Layer {
    /// Every layer, bottom first.
    pub const BOTTOM_FIRST: [Layer; 6] = [
        Layer::Live,
        Layer::Diff,
        Layer::Card,
        Layer::Rules,
        Layer::Help,
        Layer::Confirm,
    ];

    /// The keymap section of the layer's keys.
    pub fn section(self) -> Section {
        match self {
            Layer::Live => Section::Live,
            Layer::Diff => Section::Diff,
            Layer::Card => Section::Card,
            Layer::Rules => Section::Rules,
            Layer::Help => Section::Help,
            Layer::Confirm => Section::Confirm,
        }
    }
}

mod actions;
mod add_agent;
mod agents;
mod engine;
mod input;
mod live;
mod session;
mod tasks;
mod views;

use std::collections::BTreeMap;
use std::time::Duration;

use ratatui::crossterm::event::{KeyEvent, MouseEvent};
use ratatui::layout::Rect;

use super::QuitAction;
use super::action::{Action, Pane};
use super::component::{Component, Handle, Outcome, Visit};
use super::config::Config;
pub use super::confirm::{Confirm, ConfirmAction};
use super::keymap::{Keymap, Section};
use super::panes::agents::{AgentRow, Agents, AgentsContext};
use super::panes::channel::{Channel, DrawContext};
use super::panes::command_bar::CommandBar;
use super::panes::documents::Documents;
use super::panes::inbox::{self, Inbox, InboxContext};
use super::panes::tasks::{BoardContext, Tasks};
use super::theme::Theme;
use crate::sanitize::for_terminal;
use crate::vocab::Cursor;
use crate::vocab::Resync;
use crate::vocab::mentions::{ALL, USER};
use crate::vocab::{AgentStatus, PauseReason};
use crate::vocab::{Command, CommandFailed, EngineEvent, Reply, RequestError};

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
    /// Whether it is a warning (the engine's notices: a turn that failed,
    /// a file that could not be read), drawn in the warning colour.
    pub warning: bool,
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
    pub threads: std::collections::BTreeMap<u64, crate::vocab::ThreadState>,
    /// Messages agents deferred, shown in their inbox until they come back.
    pub deferred: Vec<crate::vocab::Deferred>,
    /// The task board, kept up to date by task events.
    pub tasks: crate::vocab::TaskSnapshot,
    /// Tool approvals: requests waiting, rules (kept up to date by events).
    pub approvals: crate::vocab::ApprovalsSnapshot,
    /// The approval request whose card was put away (Esc) until a newer
    /// one comes.
    pub card_hidden: Option<u64>,
    /// The card's scroll: the request it was drawn for and its first
    /// body line shown (another request starts at the top).
    pub card_scroll: Option<(u64, usize)>,
    /// How many body lines the card showed when last drawn (a page); 0
    /// when the screen was too small to draw it.
    pub card_page: usize,
    /// The approval rules overlay, with its scroll.
    pub rules_view: Option<usize>,
    /// How many lines of the rules the last drawing showed (a page).
    pub rules_page: usize,
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
    /// How many lines of help the last drawing showed (a page for PgDn).
    pub help_page: usize,
    /// The diff view of an agent's workspace.
    pub diff: Option<super::panes::diff::DiffPane>,
    /// One agent's live view.
    pub live: Option<super::panes::live::LiveView>,
    /// A question waiting.
    pub confirm: Option<Confirm>,
    /// The form adding an agent (`n`), on top of everything while open.
    pub add_agent: Option<super::panes::add_agent::AddAgentForm>,
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
            card_scroll: None,
            card_page: 10,
            rules_view: None,
            rules_page: 10,
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
            help_page: 10,
            diff: None,
            live: None,
            confirm: None,
            add_agent: None,
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
            warning: false,
        });
    }

    fn error(&mut self, text: impl Into<String>) {
        self.status = Some(Status {
            text: for_terminal(&text.into()),
            error: true,
            warning: false,
        });
    }

    /// The engine's notices: what went wrong or needs a look.
    fn warn(&mut self, text: impl Into<String>) {
        self.status = Some(Status {
            text: for_terminal(&text.into()),
            error: false,
            warning: true,
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

    /// Carries out what a component asks: `pane`'s, or an overlay's
    /// (`None`).
    fn apply(&mut self, pane: Option<Pane>, o: Outcome) -> Vec<Effect> {
        match o.note {
            Some((t, true)) => self.error(t),
            Some((t, false)) => self.info(t),
            None => {}
        }
        if o.focus
            && let Some(pane) = pane
        {
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
                    threads: &self.threads,
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
            Some(o) => self.apply(Some(pane), o),
            None => Vec::new(),
        }
    }

    /// The keymap section the focused pane's keys are in and the commands
    /// it offers (the hint line).
    pub fn commands(&self) -> (Section, Vec<&'static str>) {
        let (section, list) = match self.focus {
            Pane::Agents => self.agents.commands(),
            Pane::Channel => self.channel.commands(),
            Pane::Inbox => self.inbox.commands(),
            Pane::Documents => self.documents.commands(),
            Pane::Tasks => self.board.commands(),
            Pane::Bar => (Section::Global, &[][..]),
        };
        // On the board, only what the current task's status allows.
        let status = (self.focus == Pane::Tasks)
            .then(|| self.board.current(&self.tasks).map(|t| t.status))
            .flatten();
        let list = list
            .iter()
            .copied()
            .filter(|c| status.is_none_or(|s| crate::panes::tasks::applies(c, s)))
            .collect();
        (section, list)
    }

    /// The inbox items as shown now.
    pub fn inbox_items(&self) -> Vec<inbox::Item> {
        inbox::items(
            &self.channel,
            &self.cursors,
            self.agents.selected().map(|r| r.name.as_str()),
        )
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
/// How long the screen may sleep before it must change by itself: the
/// rest of a spinner frame (`since_tick` after the last) while something
/// `animating`, else until the header's up time `up` reads differently
/// ([`crate::text::up_time_turns_in`]): each second in the first
/// minute, then once a minute, so an idle screen wakes when its clock
/// turns. Keys and events in between do not move the wake-up.
pub fn wake_after(animating: bool, up: Duration, since_tick: Duration) -> Duration {
    if animating {
        return TICK.saturating_sub(since_tick);
    }
    crate::text::up_time_turns_in(up)
}
