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
//!   which hands it over to a background host; with a memory context
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

pub mod action;
pub mod app;
pub mod config;
pub mod keymap;
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
}

impl Default for TuiOptions {
    fn default() -> Self {
        TuiOptions {
            config: Config::defaults(),
            on_quit: QuitAction::Shutdown,
            history: 10_000,
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
                        });
                    }
                    app.dirty = true;
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
struct Signals {
    term: Option<tokio::signal::unix::Signal>,
    hup: Option<tokio::signal::unix::Signal>,
    int: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn new() -> Signals {
        use tokio::signal::unix::{SignalKind, signal};
        Signals {
            term: signal(SignalKind::terminate()).ok(),
            hup: signal(SignalKind::hangup()).ok(),
            int: signal(SignalKind::interrupt()).ok(),
        }
    }

    /// Resolves on a signal; `true` for a hang-up (the screen is gone).
    async fn recv(&mut self) -> bool {
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
