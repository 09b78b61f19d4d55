//! The control room: one ratatui screen over a running instance.
//!
//! [`run`] takes a [`Link`] (commands out, each answered privately; events
//! in), so the same screen drives an engine in this process
//! (`awtui <workflow.yaml>`) or one behind an instance's control endpoint
//! (`awtui attach`). It never touches files or processes: it sends
//! [`Command`]s, takes their replies as the app's own inputs, and draws
//! [`EngineEvent`]s.
//!
//! Shape (gitui / yazi / television): [`app::App`] holds all state and has
//! one pure `update(Input) -> Vec<Effect>`; keys go through the
//! [`keymap`] to [`action::Action`]s, the same grammar the command bar
//! parses; each pane is a module under `panes/` with its own state and
//! drawing and lists its commands for the hint line and the help. The
//! instance screen here only moves inputs in and effects out; it runs in
//! the terminal loop the home list runs in too (`screen`: the key stream,
//! redraws, resizes, signals, the terminal restored on every path), which
//! draws when something changed (a dirty flag coalesces bursts of events
//! into one frame).
//!
//! Decisions where the issue is silent:
//! - On start the screen asks for a snapshot of the newest
//!   [`TuiOptions::history`] messages (10,000 by default); inboxes are
//!   computed from the messages loaded, so a mention older than that is
//!   only counted (in the agent's unread number), not listed.
//! - The spinner ticks ten times a second only while an agent works (a
//!   spinner is shown: a stalled or retrying agent has a still icon) or a
//!   stream grows; otherwise the loop sleeps until the header's up time
//!   turns to its next minute ([`app::wake_after`]): once a minute.
//! - `q` on `awtui <file>` asks only while an agent is in a turn: stop
//!   the instance (y) or detach (d), which leaves its background host
//!   running; idle, it stops at once (`/detach` leaves it running). With
//!   a memory context (nothing to resume from) `/detach` is refused. A second Ctrl-C answers yes (stop).
//!   SIGTERM and SIGHUP quit without asking (the instance is shut down, or
//!   left running when detaching).
//! - Keys in the editor type, except those bound in `[keys.editor]`
//!   (Ctrl-S saves, Esc leaves); Tab indents there.
//! - Timestamps are shown in local time.
//! - The task board is a fifth pane (`5`): under the channel beside the
//!   documents from 180 columns, sharing their place (tabs, the one
//!   focused last shown) from 100, a fourth tab below the agents on
//!   narrower screens. Its ages are refreshed with each frame and the idle
//!   wake-up (once a minute).
//! - `awtui` with no argument opens the home list ([`home`], run by
//!   `commands::home`); an instance opened from it runs with
//!   [`QuitAction::Home`]: `H` (`/home`) or `q` goes back to the list, `!`
//!   (`/attention`) to the attention view, and the instance keeps running.
//!   Elsewhere those keys say where the list is.
//! - Every screen re-reads the registry every 3 s for `@` completion of
//!   instance names and `/stop @other`, which runs `awtui stop @other` as a
//!   child process (in that instance's folder) and shows what it said.

#![warn(missing_docs)]

pub use awtui_state::{fsutil, layout};
pub use awtui_vocab as vocab;
pub use awtui_vocab::{duration, protocols, sanitize};

pub mod action;
pub mod app;
pub mod attention;
pub mod component;
pub mod config;
pub mod confirm;
pub mod home;
pub mod keymap;
pub mod notify;
pub mod panes;
mod screen;
pub mod terminal;
pub mod text;
pub mod theme;
pub mod ui;
pub mod webhook;

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::FuturesUnordered;
use ratatui::crossterm::event::Event;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

pub use app::Exit as TuiExit;
use app::{App, AppOptions, Effect, Input};
pub use config::{Config, ConfigError};
pub use screen::{Happened, Screen, Term, run as run_screen};

use crate::vocab::{Command, CommandSender, EngineEvent, Link, Reply, RequestError};

/// How long quitting waits for the engine to stop its agents.
const STOP_WAIT: Duration = Duration::from_secs(20);

/// What quitting the control room does to the instance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QuitAction {
    /// Stop every agent (`Command::Shutdown`) and wait for the engine
    /// (an in-process engine with nothing on disk to resume from).
    #[default]
    Shutdown,
    /// Ask: stop every agent, or detach and leave the instance running
    /// (`awtui <file>` with its context on disk: the caller hands it over
    /// to a background host on [`TuiExit::Detached`]).
    Ask,
    /// Leave the instance running (for a remote link).
    Detach,
    /// Leave the instance running and go back to the home list (opened
    /// from it): `H` and `!` work too.
    Home,
}

/// How the control room runs.
#[derive(Clone, Debug)]
pub struct TuiOptions {
    /// Keys and colours (load with [`Config::load`] before the screen opens,
    /// so a bad file is reported as plain text).
    pub config: Config,
    /// What quitting does.
    pub on_quit: QuitAction,
    /// How many recent messages to load at start.
    pub history: usize,
    /// Where to go once the first snapshot is in (from the attention view).
    pub jump: Option<attention::Jump>,
    /// Bytes to write to the terminal between frames (bell and desktop
    /// notifications from the home screen's poller).
    pub alerts: Option<Alerts>,
    /// The other running instances (`@` completion, `/stop @other`); none
    /// without it.
    pub neighbours: Option<Neighbours>,
}

/// How the screen learns of the other running instances and stops one,
/// supplied by the commands layer (`commands::child::neighbours`): the
/// screen reads no registry and starts no process itself.
#[derive(Clone)]
pub struct Neighbours {
    /// Every running instance's name and folder (called on a blocking
    /// thread, every few seconds).
    pub running: std::sync::Arc<dyn Fn() -> Vec<(String, std::path::PathBuf)> + Send + Sync>,
    /// Stops instance `name`, whose folder is `dir`: what it said, or why
    /// it could not.
    #[allow(clippy::type_complexity)]
    pub stop: std::sync::Arc<
        dyn Fn(String, std::path::PathBuf) -> BoxFuture<'static, Result<String, String>>
            + Send
            + Sync,
    >,
}

impl std::fmt::Debug for Neighbours {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Neighbours")
    }
}

/// A feed of notification bytes shared by the screens of one `awtui`
/// process (each screen holds it while it is open).
#[derive(Clone)]
pub struct Alerts(
    pub std::sync::Arc<tokio::sync::Mutex<tokio::sync::mpsc::UnboundedReceiver<String>>>,
);

impl std::fmt::Debug for Alerts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Alerts")
    }
}

impl Alerts {
    /// A feed and its sending end.
    pub fn channel() -> (tokio::sync::mpsc::UnboundedSender<String>, Alerts) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        (tx, Alerts(std::sync::Arc::new(tokio::sync::Mutex::new(rx))))
    }
}

impl Default for TuiOptions {
    fn default() -> Self {
        TuiOptions {
            config: Config::defaults(),
            on_quit: QuitAction::Shutdown,
            history: 10_000,
            jump: None,
            alerts: None,
            neighbours: None,
        }
    }
}

/// Why the control room stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// The terminal could not be set up or written.
    #[error("terminal: {0}")]
    Terminal(#[from] std::io::Error),
}

/// The local time zone's offset from UTC, in seconds.
pub fn local_utc_offset() -> i32 {
    chrono::Local::now().offset().local_minus_utc()
}

/// Runs the control room on `link` until the user quits or the instance
/// ends. The terminal is restored on every path ([`screen::run`]).
pub async fn run(link: Link, options: TuiOptions) -> Result<TuiExit, TuiError> {
    let Link { commands, events } = link;
    let mut app = App::new(
        options.config,
        AppOptions {
            on_quit: options.on_quit,
            utc_offset: local_utc_offset(),
        },
    );
    app.jump = options.jump.clone();
    if commands.is_closed() {
        return Ok(TuiExit::EngineEnded);
    }
    let mut instance = Instance {
        replies: FuturesUnordered::new(),
        stops: FuturesUnordered::new(),
        instances: watch_instances(options.neighbours.clone()),
        neighbours: options.neighbours,
        history: options.history,
        started: Instant::now(),
        stop_deadline: None,
        last_tick: tokio::time::Instant::now(),
        app,
        commands,
        events,
    };
    let resync = instance.app.resync(options.history);
    instance
        .replies
        .push(Box::pin(instance.commands.request(resync)));
    screen::run(&mut instance, options.alerts.as_ref()).await
}

/// The control room of one instance as a [`Screen`]: the app, its link to
/// the engine, and what is under way.
struct Instance {
    app: App,
    commands: CommandSender,
    events: broadcast::Receiver<EngineEvent>,
    /// How many recent messages a resync loads.
    history: usize,
    /// Replies on their way back to the app (each command's own answer).
    replies: FuturesUnordered<BoxFuture<'static, Result<Reply, RequestError>>>,
    /// Every running instance (for `@` completion and `/stop @other`).
    instances: tokio::sync::watch::Receiver<Vec<(String, std::path::PathBuf)>>,
    /// Instances being stopped from here: what each stop said.
    stops: FuturesUnordered<BoxFuture<'static, Result<String, String>>>,
    /// Finds and stops the other instances.
    neighbours: Option<Neighbours>,
    started: Instant,
    /// When a shutdown asked for must be over.
    stop_deadline: Option<tokio::time::Instant>,
    /// The last tick: input does not re-arm the wake-up, so the header's
    /// clock keeps moving while the user types.
    last_tick: tokio::time::Instant,
}

/// News from the control room's own sources.
enum News {
    Engine(Result<EngineEvent, RecvError>),
    Reply(Result<Reply, RequestError>),
    Tick,
    StopOverdue,
    Instances,
    Stopped(Result<String, String>),
}

impl Screen for Instance {
    type News = News;
    type Exit = TuiExit;

    fn dirty(&self) -> bool {
        self.app.dirty
    }

    fn draw(&mut self, frame: &mut ratatui::Frame<'_>) {
        self.app.now = chrono::Utc::now();
        ui::draw(&mut self.app, frame);
    }

    async fn next(&mut self) -> News {
        self.app.now = chrono::Utc::now();
        let wake = tokio::time::Instant::now() + self.app.wake_after(self.last_tick.elapsed());
        tokio::select! {
            ev = self.events.recv() => News::Engine(ev),
            Some(reply) = self.replies.next(), if !self.replies.is_empty() => News::Reply(reply),
            () = tokio::time::sleep_until(wake) => News::Tick,
            () = sleep_until(self.stop_deadline) => News::StopOverdue,
            Ok(()) = self.instances.changed() => News::Instances,
            Some(said) = self.stops.next(), if !self.stops.is_empty() => News::Stopped(said),
        }
    }

    async fn handle(
        &mut self,
        what: Happened<News>,
        term: &mut Term,
    ) -> Result<Option<TuiExit>, TuiError> {
        let app = &mut self.app;
        let mut effects = match what {
            Happened::News(News::Engine(Ok(e))) => app.update(Input::Engine(e)),
            Happened::News(News::Engine(Err(RecvError::Lagged(n)))) => {
                tracing::warn!("fell {n} events behind; asking for a new snapshot");
                vec![Effect::Command(app.resync(self.history))]
            }
            Happened::News(News::Engine(Err(RecvError::Closed))) => app.update(Input::EngineGone),
            Happened::News(News::Reply(reply)) => app.update(Input::reply(reply)),
            Happened::News(News::Tick) => {
                self.last_tick = tokio::time::Instant::now();
                app.update(Input::Tick(self.started.elapsed()))
            }
            Happened::News(News::StopOverdue) => {
                tracing::warn!("the engine did not stop in time; leaving");
                app.exit.get_or_insert(TuiExit::Shutdown);
                vec![Effect::Quit]
            }
            Happened::News(News::Instances) => {
                app.instances = self
                    .instances
                    .borrow_and_update()
                    .iter()
                    .map(|(n, _)| n.clone())
                    .collect();
                Vec::new()
            }
            Happened::News(News::Stopped(said)) => {
                app.status = Some(match said {
                    Ok(text) => app::Status {
                        text,
                        error: false,
                        warning: false,
                    },
                    Err(text) => app::Status {
                        text,
                        error: true,
                        warning: false,
                    },
                });
                app.dirty = true;
                Vec::new()
            }
            Happened::Input(Event::Key(k)) => app.update(Input::Key(k)),
            Happened::Input(Event::Mouse(m)) => app.update(Input::Mouse(m)),
            Happened::Input(Event::Paste(p)) => app.update(Input::Paste(p)),
            Happened::Input(_) => Vec::new(),
            // The terminal is gone (hang-up): stop as on SIGHUP.
            Happened::InputGone => app.update(Input::Action(action::Action::Quit { force: true })),
            Happened::Signal => {
                tracing::info!("signal received; quitting");
                app.update(Input::Action(action::Action::Quit { force: true }))
            }
        };
        // Coalesce: take every event already waiting before drawing again.
        loop {
            match self.events.try_recv() {
                Ok(e) => effects.extend(app.update(Input::Engine(e))),
                Err(TryRecvError::Lagged(_)) => {
                    effects.push(Effect::Command(app.resync(self.history)))
                }
                Err(TryRecvError::Closed) => {
                    effects.extend(app.update(Input::EngineGone));
                    break;
                }
                Err(TryRecvError::Empty) => break,
            }
        }
        let mut quit = false;
        for effect in effects {
            match effect {
                Effect::Command(c) => {
                    if matches!(c, Command::Shutdown) {
                        self.stop_deadline = Some(tokio::time::Instant::now() + STOP_WAIT);
                    }
                    if self.commands.is_closed() {
                        app.update(Input::EngineGone);
                        quit = true;
                    } else {
                        self.replies.push(Box::pin(self.commands.request(c)));
                    }
                }
                Effect::Copy(text) => {
                    if let Err(e) = terminal::copy(&text) {
                        tracing::warn!("clipboard: {e}");
                    }
                }
                Effect::Pager(text) => {
                    if let Err(e) = term.page(text).await? {
                        app.update(Input::Action(action::Action::Prompt(String::new())));
                        app.status = Some(app::Status {
                            text: crate::sanitize::for_terminal(&e),
                            error: true,
                            warning: false,
                        });
                    }
                    app.dirty = true;
                }
                Effect::StopInstance(name) => {
                    // In its own folder: two instances may share a name.
                    let dir = self
                        .instances
                        .borrow()
                        .iter()
                        .find(|(n, _)| *n == name)
                        .map(|(_, d)| d.clone())
                        .unwrap_or_else(|| std::path::PathBuf::from("/"));
                    let stopped = match &self.neighbours {
                        Some(n) => (n.stop)(name, dir),
                        None => Box::pin(std::future::ready(Err(
                            "other instances cannot be stopped from here".to_string(),
                        ))),
                    };
                    self.stops.push(stopped);
                }
                Effect::Quit => quit = true,
            }
        }
        Ok(quit.then(|| app.exit.take().unwrap_or(TuiExit::EngineEnded)))
    }
}

/// How often the instance screen re-reads the registry (for `@`
/// completion and `/stop @other`).
const INSTANCES_EVERY: Duration = Duration::from_secs(3);

/// Every running instance's name and folder, re-read from the registry
/// every [`INSTANCES_EVERY`] (the task ends with the screen).
fn watch_instances(
    neighbours: Option<Neighbours>,
) -> tokio::sync::watch::Receiver<Vec<(String, std::path::PathBuf)>> {
    let (tx, rx) = tokio::sync::watch::channel(Vec::new());
    let Some(neighbours) = neighbours else {
        return rx;
    };
    tokio::spawn(async move {
        loop {
            let running = neighbours.running.clone();
            let found = tokio::task::spawn_blocking(move || running())
                .await
                .unwrap_or_default();
            tx.send_if_modified(|v| {
                let changed = *v != found;
                *v = found;
                changed
            });
            tokio::select! {
                () = tx.closed() => break,
                () = tokio::time::sleep(INSTANCES_EVERY) => {}
            }
        }
    });
    rx
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// Feeds events and actions to an app without a terminal and returns every
/// effect, for tests and scripts (television's headless mode).
pub fn drive(app: &mut App, inputs: impl IntoIterator<Item = Input>) -> Vec<Effect> {
    inputs.into_iter().flat_map(|i| app.update(i)).collect()
}

/// An event as the engine would send it, for tests.
pub fn engine(event: EngineEvent) -> Input {
    Input::Engine(event)
}
