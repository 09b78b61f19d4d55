//! `awtui` with no argument: the control room's home, a list of every
//! running instance of this user (the registry `awtui list` reads) and the
//! attention view across them (see [`crate::tui::home`] for the keys).
//!
//! - A poller re-reads the registry every [`POLL_EVERY`] (and at once after
//!   a stop or start from here), asking each instance for its status and
//!   `user`'s inbox with a [`ASK_TIMEOUT`] each, all at the same time; an
//!   instance that does not answer is listed as unresponsive.
//! - Enter opens an instance attached, through the same code as `awtui
//!   attach`; `H` (or `q`) there comes back to the list, `!` to the
//!   attention view; the instance keeps running.
//! - `s` + `y` runs `awtui stop @name` and `n` runs `awtui start <file>
//!   --background` as child processes (their exact behaviour, their output
//!   shown in the bottom line).
//! - The poller rings the bell and sends a desktop notification (per
//!   `[notify]`) for attention items that are new and not on the screen,
//!   whichever screen is open.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::FuturesUnordered;
use ratatui::crossterm::event::Event;
use tokio::sync::{Notify, mpsc, watch};

use super::child;
use super::exit;
use crate::context::mentions::USER;
use crate::errln;
use crate::instance::control::{Client, Reply, Request};
use crate::instance::query::PeekQuery;
use crate::instance::registry::{self, InstanceInfo};
use crate::tui::attention::{self, FirstSeen, Jump, Polled};
use crate::tui::home::{self, Home, HomeEffect, HomeView};
use crate::tui::notify::{Looking, Notifier, NotifyConfig};
use crate::tui::{
    Alerts, Config, Happened, QuitAction, Screen, Term, TuiError, TuiExit, TuiOptions,
};

/// How often the list re-reads the registry and asks every instance.
pub const POLL_EVERY: Duration = Duration::from_secs(2);
/// How long one instance may take to answer a poll.
pub const ASK_TIMEOUT: Duration = Duration::from_secs(2);
/// How many of `user`'s unacknowledged mentions are read per instance.
const INBOX_LIMIT: usize = 200;

/// Opens the home screen; returns the exit code.
pub fn run() -> u8 {
    if !std::io::IsTerminal::is_terminal(&std::io::stdout())
        || !std::io::IsTerminal::is_terminal(&std::io::stdin())
    {
        errln!(
            "awtui with no argument opens the list of running instances and needs a terminal \
             (awtui list prints them; awtui <workflow.yaml> opens one)"
        );
        return exit::INVALID;
    }
    let config = match Config::load() {
        Ok(c) => c,
        Err(e) => {
            errln!("awtui: bad config: {e}");
            return exit::INVALID;
        }
    };
    let Some(rt) = super::runtime(true) else {
        return exit::FAILED;
    };
    rt.block_on(home_loop(config))
}

/// One instance's status and `user`'s inbox, or `None` in both when it
/// does not answer in time.
pub async fn poll_one(info: InstanceInfo) -> Polled {
    let asked = tokio::time::timeout(ASK_TIMEOUT, async {
        let mut client = Client::open(&info).await.ok()?;
        let status = match client.request(Request::Status).await.ok()? {
            Reply::Status { status } => *status,
            _ => return None,
        };
        let inbox = match client
            .call(crate::engine::Command::Peek {
                query: PeekQuery {
                    agent: Some(USER.to_string()),
                    limit: INBOX_LIMIT,
                    kind: None,
                    bead: None,
                    before: None,
                    message: None,
                },
            })
            .await
            .ok()?
        {
            Ok(crate::engine::Reply::Messages { items, .. }) => items,
            _ => Vec::new(),
        };
        Some((status, inbox))
    })
    .await
    .ok()
    .flatten();
    match asked {
        Some((status, inbox)) => Polled {
            info,
            status: Some(status),
            inbox,
            approvals: Vec::new(),
        },
        None => Polled {
            info,
            status: None,
            inbox: Vec::new(),
            approvals: Vec::new(),
        },
    }
}

/// Every running instance, asked all at once.
async fn poll_all() -> Vec<Polled> {
    let running = tokio::task::spawn_blocking(registry::running)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    futures_util::future::join_all(running.into_iter().map(poll_one)).await
}

/// Polls until every receiver is gone: publishes each poll, and sends the
/// notification bytes for items new and not on the screen to `alerts`.
fn spawn_poller(
    notify: NotifyConfig,
    looking: watch::Receiver<Looking>,
    alerts: mpsc::UnboundedSender<String>,
    kick: Arc<Notify>,
) -> watch::Receiver<Option<Arc<Vec<Polled>>>> {
    let (tx, rx) = watch::channel(None);
    tokio::spawn(async move {
        let mut seen = FirstSeen::default();
        let mut notifier = Notifier::default();
        loop {
            let polled = poll_all().await;
            let items = attention::collect(&polled, &mut seen, chrono::Utc::now());
            let fresh = notifier.fresh(&items, &looking.borrow());
            let bytes = crate::tui::notify::alert(&notify, &fresh);
            if !bytes.is_empty() {
                let _ = alerts.send(bytes);
            }
            if tx.send(Some(Arc::new(polled))).is_err() {
                break;
            }
            tokio::select! {
                () = kick.notified() => {}
                () = tokio::time::sleep(POLL_EVERY) => {}
                () = tx.closed() => break,
            }
        }
    });
    rx
}

/// What the list screen left for.
enum Next {
    /// Open this instance at `jump`.
    Open(Box<InstanceInfo>, Jump),
    /// Leave awtui.
    Quit,
}

/// What the home screen shares between its list and the instances it opens.
struct Session {
    config: Config,
    board: watch::Receiver<Option<Arc<Vec<Polled>>>>,
    alerts: Alerts,
    looking: watch::Sender<Looking>,
    kick: Arc<Notify>,
    /// Stops and starts under way: what each said.
    jobs: FuturesUnordered<BoxFuture<'static, Result<String, String>>>,
}

async fn home_loop(config: Config) -> u8 {
    let (alerts_tx, alerts) = Alerts::channel();
    let (looking, looking_rx) = watch::channel(Looking::List);
    let kick = Arc::new(Notify::new());
    let board = spawn_poller(config.notify, looking_rx, alerts_tx, kick.clone());
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let mut home = Home::new(cwd, crate::tui::local_utc_offset());
    home.keymap = config.keymap.clone();
    let mut s = Session {
        config,
        board,
        alerts,
        looking,
        kick,
        jobs: FuturesUnordered::new(),
    };
    loop {
        crate::output::flush();
        let next = match list_screen(&mut home, &mut s).await {
            Ok(n) => n,
            Err(e) => {
                errln!("awtui: {e}");
                return exit::FAILED;
            }
        };
        let (info, jump) = match next {
            Next::Quit => return exit::OK,
            Next::Open(info, jump) => (info, jump),
        };
        s.looking.send_replace(Looking::Instance(info.home.clone()));
        let options = TuiOptions {
            config: s.config.clone(),
            on_quit: QuitAction::Home,
            jump: Some(jump),
            alerts: Some(s.alerts.clone()),
            neighbours: Some(child::neighbours()),
            ..TuiOptions::default()
        };
        let name = crate::sanitize::for_terminal(&info.instance);
        match super::attach::attached(&info, options).await {
            Ok(Ok(TuiExit::Home { attention })) => {
                home.view = if attention {
                    HomeView::Attention
                } else {
                    HomeView::List
                };
            }
            Ok(Ok(TuiExit::Detached)) => {
                home.view = HomeView::List;
                home.say(&format!("left @{name}; it keeps running"), false);
            }
            Ok(Ok(TuiExit::Shutdown)) => home.say(&format!("stopped @{name}"), false),
            Ok(Ok(TuiExit::EngineEnded)) => home.say(&format!("@{name} ended"), false),
            Ok(Err(e)) => {
                errln!("awtui: {e}");
                return exit::FAILED;
            }
            Err(_) => home.say(&format!("could not open @{name}"), true),
        }
        s.kick.notify_one();
    }
}

/// The list (or attention view) until the user opens an instance or quits.
/// The terminal is restored on every path ([`crate::tui::Screen`]).
async fn list_screen(home: &mut Home, s: &mut Session) -> Result<Next, TuiError> {
    if let Some(p) = s.board.borrow_and_update().clone() {
        home.polled((*p).clone(), chrono::Utc::now());
    }
    let alerts = s.alerts.clone();
    crate::tui::run_screen(&mut List { home, s }, Some(&alerts)).await
}

/// The list screen in the terminal loop.
struct List<'a> {
    home: &'a mut Home,
    s: &'a mut Session,
}

/// News from the list's own sources.
enum ListNews {
    /// A new poll.
    Polled,
    /// A stop or start under way ended: what it said.
    Said(Result<String, String>),
    /// Up times move.
    Later,
}

impl Screen for List<'_> {
    type News = ListNews;
    type Exit = Next;

    /// The list is cheap: drawn after everything.
    fn dirty(&self) -> bool {
        true
    }

    fn draw(&mut self, frame: &mut ratatui::Frame<'_>) {
        self.home.now = chrono::Utc::now();
        let area = frame.area();
        home::view::render(self.home, &self.s.config.theme, area, frame.buffer_mut());
    }

    async fn next(&mut self) -> ListNews {
        let now = self.home.looking();
        self.s.looking.send_if_modified(|l| {
            let changed = *l != now;
            *l = now;
            changed
        });
        let s = &mut *self.s;
        tokio::select! {
            Ok(()) = s.board.changed() => ListNews::Polled,
            Some(said) = s.jobs.next(), if !s.jobs.is_empty() => ListNews::Said(said),
            () = tokio::time::sleep(Duration::from_secs(30)) => ListNews::Later,
        }
    }

    async fn handle(
        &mut self,
        what: Happened<ListNews>,
        _term: &mut Term,
    ) -> Result<Option<Next>, TuiError> {
        let (home, s) = (&mut *self.home, &mut *self.s);
        let effects = match what {
            Happened::News(ListNews::Polled) => {
                if let Some(p) = s.board.borrow_and_update().clone() {
                    home.polled((*p).clone(), chrono::Utc::now());
                }
                Vec::new()
            }
            Happened::News(ListNews::Said(said)) => {
                match said {
                    Ok(text) => home.say(&text, false),
                    Err(text) => home.say(&text, true),
                }
                s.kick.notify_one();
                Vec::new()
            }
            Happened::News(ListNews::Later) => Vec::new(),
            Happened::Input(Event::Key(k)) => home.key(k, &home::list_folder),
            Happened::Input(_) => Vec::new(),
            // The terminal is gone, or a signal.
            Happened::InputGone | Happened::Signal => vec![HomeEffect::Quit],
        };
        for effect in effects {
            match effect {
                HomeEffect::Quit => return Ok(Some(Next::Quit)),
                HomeEffect::Open { info, jump } => {
                    return Ok(Some(Next::Open(Box::new(info), jump)));
                }
                HomeEffect::Stop(info) => {
                    let args = vec!["stop".to_string(), format!("@{}", info.instance)];
                    let dir = info.workdir.clone();
                    s.jobs
                        .push(Box::pin(async move { child::awtui(&args, &dir).await }));
                }
                HomeEffect::Start(path) => {
                    let dir = home.cwd.clone();
                    let args = vec![
                        "start".to_string(),
                        path.display().to_string(),
                        "--background".to_string(),
                    ];
                    s.jobs
                        .push(Box::pin(async move { child::awtui(&args, &dir).await }));
                }
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(dir: &std::path::Path, name: &str) -> InstanceInfo {
        let token = dir.join(format!("{name}.token"));
        std::fs::write(&token, "secret").unwrap();
        InstanceInfo {
            instance: name.into(),
            workflow_name: "review".into(),
            workflow: dir.join("review.yaml"),
            workdir: dir.to_path_buf(),
            home: dir.join(name),
            pid: std::process::id(),
            mode: "start".into(),
            standalone: false,
            agents: vec!["coder".into()],
            control: dir.join(format!("{name}.sock")),
            token_file: token,
            mcp_url: "http://127.0.0.1:1/mcp".into(),
            mcp_socket: None,
            log: None,
            state_dir: None,
            started: chrono::Utc::now(),
        }
    }

    /// A hung instance (its socket accepts, then never answers) and a gone
    /// one (nothing listens) are listed as not answering, with the agents
    /// of their record; neither holds up the poll for good.
    #[tokio::test]
    async fn instances_that_do_not_answer_are_polled_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let hung = record(dir.path(), "hung");
        let gone = record(dir.path(), "gone");
        let listener = tokio::net::UnixListener::bind(&hung.control).unwrap();
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                open.push(stream);
            }
        });
        let polled =
            futures_util::future::join_all([poll_one(hung.clone()), poll_one(gone.clone())]).await;
        held.abort();
        for p in &polled {
            assert_eq!(p.status, None, "{}", p.info.instance);
            assert!(p.inbox.is_empty());
        }
        let rows = home::rows(&polled, &[]);
        assert_eq!(rows[0].note, Some("no answer"));
        assert_eq!(rows[0].total, 1);
    }
}
