//! The control room's app against a real engine, without a terminal: the
//! headless mode. Actions go in, the app's effects go to the engine as
//! commands, the engine's events and each command's private reply come back
//! into the app.

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::FuturesUnordered;

use awtui::agents::runner::AgentStatus;
use awtui::engine::{Engine, EngineEvent, Link, Reply, RequestError};
use awtui::tui::QuitAction;
use awtui::tui::action::Action;
use awtui::tui::app::{App, Effect, Exit, Input};
use tokio::sync::broadcast;

use crate::fixture;
use fixture::{EngineStart, new_app, start_engine, within};

const WORKFLOW: &str = r#"
name: ping
agents:
  echo:
    command: ["sh", "-c", "cat >/dev/null; echo '@user pong'"]
context:
  config:
    document: notes.md
"#;

struct Headless {
    app: App,
    link: Link,
    replies: FuturesUnordered<BoxFuture<'static, Result<Reply, RequestError>>>,
    quit: bool,
}

impl Headless {
    /// A fresh app on `engine`'s commands and `events`, asking for its
    /// first snapshot.
    fn new(engine: &Engine, events: broadcast::Receiver<EngineEvent>) -> Headless {
        let mut h = Headless {
            app: new_app(QuitAction::Shutdown),
            link: Link {
                commands: engine.commands(),
                events,
            },
            replies: FuturesUnordered::new(),
            quit: false,
        };
        let first = h.app.resync(100);
        h.apply(vec![Effect::Command(first)]);
        h
    }

    fn apply(&mut self, effects: Vec<Effect>) {
        for e in effects {
            match e {
                Effect::Command(c) => self.replies.push(Box::pin(self.link.request(c))),
                Effect::Quit => self.quit = true,
                Effect::Copy(_) | Effect::Pager(_) | Effect::StopInstance(_) => {}
            }
        }
    }

    fn act(&mut self, action: Action) {
        let effects = self.app.update(Input::Action(action));
        self.apply(effects);
    }

    /// Feeds engine events to the app until `done` holds.
    async fn until(&mut self, what: &str, done: impl Fn(&App, bool) -> bool) {
        let wait = async {
            while !done(&self.app, self.quit) {
                let input = tokio::select! {
                    event = self.link.events.recv() => match event {
                        Ok(e) => Input::Engine(e),
                        Err(_) => Input::EngineGone,
                    },
                    Some(reply) = self.replies.next(), if !self.replies.is_empty() => Input::reply(reply),
                };
                let effects = self.app.update(input);
                self.apply(effects);
            }
        };
        within(what, wait).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_drives_a_real_engine() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, events) = EngineStart {
        watch_documents: true,
        ..EngineStart::default()
    }
    .start_yaml(dir.path(), "ping.yaml", WORKFLOW)
    .await;
    let mut h = Headless::new(&engine, events);
    h.until("the snapshot and the notes", |a, _| {
        a.ready && a.documents.viewer.is_some()
    })
    .await;
    assert_eq!(h.app.workflow, "ping");

    // Post: the agent answers the user.
    h.act(Action::Post("@echo ping".into()));
    h.until("the agent's answer", |a, _| {
        a.channel
            .messages
            .iter()
            .any(|m| m.entry.from == "echo" && m.clean.contains("pong"))
    })
    .await;
    assert!(
        !h.app.inbox_items().is_empty(),
        "the answer waits in the user's inbox"
    );

    // Ack everything of the user's.
    h.act(Action::Ack {
        agent: Some("user".into()),
        until: awtui::tui::action::AckTarget::All,
    });
    h.until("the user's inbox acked", |a, _| a.inbox_items().is_empty())
        .await;

    // Edit and save the notes through the engine.
    h.act(Action::Edit);
    h.app
        .documents
        .editor
        .as_mut()
        .unwrap()
        .area
        .insert_str("hello");
    h.act(Action::Save);
    h.until("the save", |a, _| {
        a.documents
            .editor
            .as_ref()
            .is_some_and(|e| e.saving.is_none() && !e.dirty())
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".workflow/default/notes.md")).unwrap(),
        "hello\n",
        "a saved document ends with a line break"
    );
    h.act(Action::Back);

    // Stop the agent (it asks first).
    h.act(Action::Stop(Some("echo".into())));
    h.act(Action::Yes);
    h.until("the agent stopped", |a, _| {
        a.agents.rows[0].status == AgentStatus::Stopped
    })
    .await;

    // Quit: the engine shuts down, then the app leaves.
    h.act(Action::Quit { force: false });
    h.until("the app to quit", |_, quit| quit).await;
    assert_eq!(h.app.exit, Some(Exit::Shutdown));
    engine.wait().await;
}

/// The task board through a real engine: `/task` commands become the
/// engine's changes, its events update the board, its refusals are this
/// app's error line, and Enter loads every checkpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_task_board_changes_through_the_engine() {
    use awtui::tasks::TaskStatus;
    use awtui::tui::action::{FocusTarget, Pane, TaskAction};

    let dir = tempfile::tempdir().unwrap();
    let (engine, events) = start_engine(dir.path(), "ping.yaml", WORKFLOW).await;
    let mut h = Headless::new(&engine, events);
    h.until("the snapshot", |a, _| a.ready).await;

    // Add: the board shows the new task once the engine announces it.
    h.act(Action::Focus(FocusTarget::Pane(Pane::Tasks)));
    h.act(Action::Task(TaskAction::Add {
        name: "write docs".into(),
        after: vec![],
        assignee: None,
        workflow: None,
    }));
    h.until("the new task on the board", |a, _| {
        a.tasks.tasks.iter().any(|t| t.name == "write docs")
    })
    .await;
    let id = h.app.tasks.tasks[0].id.clone();
    assert_eq!(h.app.board.current(&h.app.tasks).unwrap().id, id);

    // A move the table forbids: the engine's refusal is our error line.
    h.act(Action::Task(TaskAction::Done {
        task: Some("write docs".into()),
        outcome: Some("written".into()),
    }));
    h.until("the refusal", |a, _| {
        a.status.as_ref().is_some_and(|s| s.error)
    })
    .await;
    let status = h.app.status.clone().unwrap();
    assert!(
        status.text.starts_with("task failed:") && status.text.contains("pending"),
        "{status:?}"
    );
    assert_eq!(h.app.tasks.tasks[0].status, TaskStatus::Pending);

    // Enter: the details, with every checkpoint from the engine.
    h.act(Action::Open);
    h.until("the task's checkpoints", |a, _| {
        a.board
            .detail
            .as_ref()
            .is_some_and(|d| d.checkpoints.is_some())
    })
    .await;

    // Skip the task shown: the board follows.
    h.act(Action::Task(TaskAction::Skip(None)));
    h.until("the task skipped", |a, _| {
        a.tasks.tasks[0].status == TaskStatus::Skipped
    })
    .await;
    assert_eq!(h.app.tasks.tasks[0].id, id);

    h.act(Action::Quit { force: true });
    h.until("the app to quit", |_, quit| quit).await;
    engine.wait().await;
}
