//! The terminal loop every full screen runs in: the control room of an
//! instance ([`super::run`]) and the home list (`commands::home`). The
//! loop owns the terminal (raw mode, the alternate screen, mouse capture,
//! restored on every exit path: return, error, panic), its key stream,
//! the notification bytes of the home screen's poller and the signals that
//! end a screen; it draws when the screen says something changed or the
//! terminal was resized. A [`Screen`] brings the rest: its own sources of
//! news, what it does with each, and its frame.

use std::future::Future;
use std::io;

use futures_util::StreamExt;
use ratatui::DefaultTerminal;
use ratatui::crossterm::event::{Event, EventStream};

use super::{Alerts, TuiError, terminal};

/// What reaches a screen.
#[derive(Debug)]
pub enum Happened<N> {
    /// The screen's own news ([`Screen::next`]).
    News(N),
    /// A key, mouse or paste event (resizes are the loop's own).
    Input(Event),
    /// The terminal's input failed: the terminal is gone (a hang-up).
    InputGone,
    /// SIGTERM, SIGINT or SIGHUP (after SIGHUP nothing is drawn: the
    /// terminal is gone).
    Signal,
}

/// A full screen the loop runs: its state, its own sources of news, and
/// how it ends.
pub trait Screen {
    /// News from the screen's own sources (engine events, polls, timers).
    type News;
    /// How the screen ended.
    type Exit;

    /// Whether something changed since the last frame.
    fn dirty(&self) -> bool;

    /// Draws one frame.
    fn draw(&mut self, frame: &mut ratatui::Frame<'_>);

    /// Waits for the screen's own next news.
    fn next(&mut self) -> impl Future<Output = Self::News>;

    /// Takes what happened; `Some` ends the loop with how the screen ended.
    fn handle(
        &mut self,
        what: Happened<Self::News>,
        term: &mut Term,
    ) -> impl Future<Output = Result<Option<Self::Exit>, TuiError>>;
}

/// The open terminal, as a screen may use it between frames.
pub struct Term {
    /// Never dropped: ratatui's `Drop` reports a failure to show the
    /// cursor with `eprintln!`, which panics once the terminal has hung
    /// up. [`terminal::Guard`] restores it (cursor included) instead.
    terminal: std::mem::ManuallyDrop<DefaultTerminal>,
    /// Keys, mouse and paste; `None` while a pager has the terminal or
    /// once it is gone.
    input: Option<EventStream>,
    /// Nothing is drawn any more (input failed, or SIGHUP).
    gone: bool,
    /// Restores the terminal when the loop ends, whichever way; dropped
    /// after the input stream.
    _guard: terminal::Guard,
}

impl Term {
    /// Opens the screen (see [`terminal::init`] for the panic hooks).
    fn open() -> io::Result<Term> {
        let terminal = std::mem::ManuallyDrop::new(terminal::init()?);
        Ok(Term {
            terminal,
            input: Some(EventStream::new()),
            gone: false,
            _guard: terminal::Guard,
        })
    }

    /// Writes `bytes` (a bell, a desktop notification) between frames.
    fn write(&mut self, bytes: &str) {
        use std::io::Write;
        let backend = self.terminal.backend_mut();
        if let Err(e) = backend
            .write_all(bytes.as_bytes())
            .and_then(|()| backend.flush())
        {
            tracing::warn!("notification: {e}");
        }
    }

    /// Shows `text` in `$PAGER` with the screen suspended, then takes the
    /// terminal back and redraws everything; what the pager said when it
    /// could not run.
    pub async fn page(&mut self, text: String) -> io::Result<Result<(), String>> {
        // Stop reading keys: the pager owns the terminal now.
        drop(self.input.take());
        terminal::suspend();
        let result = tokio::task::spawn_blocking(move || terminal::page(&text))
            .await
            .unwrap_or_else(|e| Err(e.to_string()));
        terminal::resume()?;
        // A fresh terminal redraws everything on the blank screen (`clear`
        // would query the cursor position).
        let fresh =
            ratatui::Terminal::new(ratatui::backend::CrosstermBackend::new(std::io::stdout()))?;
        std::mem::forget(std::mem::replace(&mut *self.terminal, fresh));
        self.input = Some(EventStream::new());
        Ok(result)
    }
}

/// Runs `screen` in the terminal until it ends, writing `alerts` between
/// frames when given; the terminal is restored on every path.
pub async fn run<S: Screen>(screen: &mut S, alerts: Option<&Alerts>) -> Result<S::Exit, TuiError> {
    let mut alerts = match alerts {
        Some(a) => Some(a.0.clone().lock_owned().await),
        None => None,
    };
    let mut term = Term::open()?;
    let mut signals = Signals::new();
    // The first frame, and the whole screen again after a resize.
    let mut redraw = true;
    loop {
        if (redraw || screen.dirty()) && !term.gone {
            term.terminal.draw(|f| screen.draw(f))?;
            redraw = false;
        }
        let what = tokio::select! {
            news = screen.next() => Happened::News(news),
            ev = next_input(&mut term.input) => match ev {
                Some(Ok(Event::Resize(..))) => {
                    redraw = true;
                    continue;
                }
                Some(Ok(ev)) => Happened::Input(ev),
                Some(Err(e)) => {
                    tracing::warn!("terminal input failed: {e}");
                    term.input = None;
                    term.gone = true;
                    Happened::InputGone
                }
                None => {
                    term.input = None;
                    term.gone = true;
                    Happened::InputGone
                }
            },
            Some(bytes) = next_alert(&mut alerts) => {
                term.write(&bytes);
                continue;
            }
            hangup = signals.recv() => {
                if hangup {
                    // The terminal is gone: crossterm would keep reading
                    // its closed end (ready at once, forever).
                    term.input = None;
                    term.gone = true;
                }
                Happened::Signal
            }
        };
        if let Some(exit) = screen.handle(what, &mut term).await? {
            return Ok(exit);
        }
    }
}

async fn next_input(input: &mut Option<EventStream>) -> Option<io::Result<Event>> {
    match input {
        Some(s) => s.next().await,
        None => std::future::pending().await,
    }
}

async fn next_alert(
    alerts: &mut Option<tokio::sync::OwnedMutexGuard<tokio::sync::mpsc::UnboundedReceiver<String>>>,
) -> Option<String> {
    match alerts {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// SIGTERM, SIGHUP and SIGINT (Ctrl-C reaches a screen as a key in raw
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
