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
//! drawing and lists its commands for the hint line and the help. The loop
//! here only moves inputs in and effects out, and draws when something
//! changed (a dirty flag coalesces bursts of events into one frame).
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
//! - `q` on `awtui <file>` asks: stop the instance (y) or detach (d),
//!   which leaves its background host running; with a memory context
//!   (nothing to resume from) it asks only while agents work, and
//!   `/detach` is refused. A second Ctrl-C answers yes (stop).
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

pub mod action;
pub mod app;
pub mod attention;
pub mod component;
pub mod config;
pub mod home;
pub mod keymap;
pub mod notify;
pub mod panes;
pub mod terminal;
pub mod text;
pub mod theme;
pub mod ui;

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::FuturesUnordered;
use ratatui::crossterm::event::{Event, EventStream};
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

pub use app::Exit as TuiExit;
use app::{App, AppOptions, Effect, Input};
pub use config::{Config, ConfigError};

use crate::engine::{Command, EngineEvent, Link, Reply, RequestError};

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
/// ends. The terminal is restored on every path.
pub async fn run(link: Link, options: TuiOptions) -> Result<TuiExit, TuiError> {
    let Link {
        commands,
        mut events,
    } = link;
    let mut app = App::new(
        options.config,
        AppOptions {
            on_quit: options.on_quit,
            utc_offset: local_utc_offset(),
        },
    );
    app.jump = options.jump.clone();
    // Notifications from the home screen's poller, written between frames.
    let mut alerts = match &options.alerts {
        Some(a) => Some(a.0.clone().lock_owned().await),
        None => None,
    };
    // Every running instance (for `@` completion and `/stop @other`).
    let mut instances = watch_instances();
    // Instances being stopped from here: what each stop said.
    let mut stops: FuturesUnordered<BoxFuture<'static, Result<String, String>>> =
        FuturesUnordered::new();
    // Replies on their way back to the app (each command's own answer).
    let mut replies: FuturesUnordered<BoxFuture<'static, Result<Reply, RequestError>>> =
        FuturesUnordered::new();
    if commands.is_closed() {
        return Ok(TuiExit::EngineEnded);
    }
    replies.push(Box::pin(commands.request(app.resync(options.history))));
    // Never dropped: ratatui's `Drop` reports a failure to show the cursor
    // with `eprintln!`, which panics once the terminal has hung up. The
    // guard restores the terminal (cursor included) on every path instead.
    let mut terminal = std::mem::ManuallyDrop::new(terminal::init()?);
    let _guard = terminal::Guard;
    let mut input = Some(EventStream::new());
    let started = Instant::now();
    let mut signals = Signals::new();
    let mut stop_deadline: Option<tokio::time::Instant> = None;
    let mut screen_gone = false;
    // The last tick: input does not re-arm the wake-up, so the header's
    // clock keeps moving while the user types.
    let mut last_tick = tokio::time::Instant::now();

    loop {
        if app.dirty && !screen_gone {
            app.now = chrono::Utc::now();
            terminal.draw(|f| ui::draw(&mut app, f))?;
        }
        app.now = chrono::Utc::now();
        let wake = tokio::time::Instant::now() + app.wake_after(last_tick.elapsed());
        let mut effects = tokio::select! {
            ev = events.recv() => match ev {
                Ok(e) => app.update(Input::Engine(e)),
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!("fell {n} events behind; asking for a new snapshot");
                    vec![Effect::Command(app.resync(options.history))]
                }
                Err(RecvError::Closed) => app.update(Input::EngineGone),
            },
            Some(reply) = replies.next(), if !replies.is_empty() => app.update(Input::reply(reply)),
            Some(ev) = next_input(&mut input) => match ev {
                Ok(Event::Key(k)) => app.update(Input::Key(k)),
                Ok(Event::Mouse(m)) => app.update(Input::Mouse(m)),
                Ok(Event::Paste(p)) => app.update(Input::Paste(p)),
                Ok(Event::Resize(..)) => { app.dirty = true; Vec::new() }
                Ok(_) => Vec::new(),
                Err(e) => {
                    // The terminal is gone (hang-up): stop as on SIGHUP.
                    tracing::warn!("terminal input failed: {e}");
                    input = None;
                    screen_gone = true;
                    app.update(Input::Action(action::Action::Quit { force: true }))
                }
            },
            () = tokio::time::sleep_until(wake) => {
                last_tick = tokio::time::Instant::now();
                app.update(Input::Tick(started.elapsed()))
            }
            () = sleep_until(stop_deadline) => {
                tracing::warn!("the engine did not stop in time; leaving");
                app.exit.get_or_insert(TuiExit::Shutdown);
                vec![Effect::Quit]
            }
            Some(bytes) = next_alert(&mut alerts) => {
                use std::io::Write;
                let backend = terminal.backend_mut();
                if let Err(e) = backend.write_all(bytes.as_bytes()).and_then(|()| backend.flush()) {
                    tracing::warn!("notification: {e}");
                }
                Vec::new()
            }
            Ok(()) = instances.changed() => {
                app.instances = instances.borrow_and_update().iter().map(|(n, _)| n.clone()).collect();
                Vec::new()
            }
            Some(said) = stops.next(), if !stops.is_empty() => {
                app.status = Some(match said {
                    Ok(text) => app::Status { text, error: false, warning: false },
                    Err(text) => app::Status { text, error: true, warning: false },
                });
                app.dirty = true;
                Vec::new()
            }
            hangup = signals.recv() => {
                tracing::info!("signal received; quitting");
                screen_gone |= hangup;
                app.update(Input::Action(action::Action::Quit { force: true }))
            }
        };
        // Coalesce: take every event already waiting before drawing again.
        loop {
            match events.try_recv() {
                Ok(e) => effects.extend(app.update(Input::Engine(e))),
                Err(TryRecvError::Lagged(_)) => {
                    effects.push(Effect::Command(app.resync(options.history)))
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
                        stop_deadline = Some(tokio::time::Instant::now() + STOP_WAIT);
                    }
                    if commands.is_closed() {
                        app.update(Input::EngineGone);
                        quit = true;
                    } else {
                        replies.push(Box::pin(commands.request(c)));
                    }
                }
                Effect::Copy(text) => {
                    if let Err(e) = terminal::copy(&text) {
                        tracing::warn!("clipboard: {e}");
                    }
                }
                Effect::Pager(text) => {
                    // Stop reading keys: the pager owns the terminal now.
                    drop(input.take());
                    terminal::suspend();
                    let result = tokio::task::spawn_blocking(move || terminal::page(&text))
                        .await
                        .unwrap_or_else(|e| Err(e.to_string()));
                    terminal::resume()?;
                    // A fresh terminal redraws everything on the blank
                    // screen (`clear` would query the cursor position).
                    let fresh = ratatui::Terminal::new(ratatui::backend::CrosstermBackend::new(
                        std::io::stdout(),
                    ))?;
                    std::mem::forget(std::mem::replace(&mut *terminal, fresh));
                    input = Some(EventStream::new());
                    if let Err(e) = result {
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
                    let dir = instances
                        .borrow()
                        .iter()
                        .find(|(n, _)| *n == name)
                        .map(|(_, d)| d.clone())
                        .unwrap_or_else(|| std::path::PathBuf::from("/"));
                    let args = vec!["stop".to_string(), format!("@{name}")];
                    stops.push(Box::pin(
                        async move { home::child::awtui(&args, &dir).await },
                    ));
                }
                Effect::Quit => quit = true,
            }
        }
        if quit {
            break;
        }
    }
    drop(input);
    terminal::restore();
    Ok(app.exit.unwrap_or(TuiExit::EngineEnded))
}

async fn next_alert(
    alerts: &mut Option<tokio::sync::OwnedMutexGuard<tokio::sync::mpsc::UnboundedReceiver<String>>>,
) -> Option<String> {
    match alerts {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// How often the instance screen re-reads the registry (for `@`
/// completion and `/stop @other`).
const INSTANCES_EVERY: Duration = Duration::from_secs(3);

/// Every running instance's name and folder, re-read from the registry
/// every [`INSTANCES_EVERY`] (the task ends with the screen).
fn watch_instances() -> tokio::sync::watch::Receiver<Vec<(String, std::path::PathBuf)>> {
    let (tx, rx) = tokio::sync::watch::channel(Vec::new());
    tokio::spawn(async move {
        loop {
            let found = tokio::task::spawn_blocking(|| {
                crate::instance::registry::running()
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|i| !i.standalone)
                    .map(|i| (i.instance, i.workdir))
                    .collect::<Vec<_>>()
            })
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

async fn next_input(input: &mut Option<EventStream>) -> Option<std::io::Result<Event>> {
    match input {
        Some(s) => s.next().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// SIGTERM, SIGHUP and SIGINT (Ctrl-C reaches the app as a key in raw
/// mode; SIGINT only comes from `kill`).
pub(crate) struct Signals {
    term: Option<tokio::signal::unix::Signal>,
    hup: Option<tokio::signal::unix::Signal>,
    int: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    pub(crate) fn new() -> Signals {
        use tokio::signal::unix::{SignalKind, signal};
        Signals {
            term: signal(SignalKind::terminate()).ok(),
            hup: signal(SignalKind::hangup()).ok(),
            int: signal(SignalKind::interrupt()).ok(),
        }
    }

    /// Resolves on a signal; `true` for a hang-up (the screen is gone).
    pub(crate) async fn recv(&mut self) -> bool {
        async fn one(s: &mut Option<tokio::signal::unix::Signal>) {
            match s {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            () = one(&mut self.term) => false,
            () = one(&mut self.int) => false,
            () = one(&mut self.hup) => true,
        }
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
