//! Drawing one full control-room frame at 200×60 into ratatui's TestBackend
//! with 500 tasks (each linked to Agent Mail messages by its bead id), at
//! two sizes:
//!
//! - 20 agents and 100,000 messages, all loaded into the app (ten times
//!   what the control room loads: a stress test of the channel pane);
//! - issue 15's scale: 100 agents and 1,000,000 messages in the instance,
//!   of which the app holds what the engine sends it (the newest 10,000,
//!   `TuiOptions::history`), the rest counted as older history.
//!
//! Prints medians of: a frame with nothing new, a frame after a new
//! message arrives (following), a frame while scrolled back in the middle
//! of the history, and a frame with the task board focused while its tasks
//! change. Target (issue 15): ≤ 2 ms a frame at 1,000,000 messages.
//!
//!   cargo bench --bench tui_frame

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use awtui::agents::runner::{AgentMetrics, AgentStatus};
use awtui::context::{ChannelEntry, Cursor, mentions};
use awtui::engine::event::{AgentSnapshot, MessageSnapshot, Snapshot};
use awtui::engine::{EngineEvent, Reply};
use awtui::tui::action::{Action, Motion};
use awtui::tui::app::{App, AppOptions, Input};
use awtui::tui::{Config, QuitAction, ui};
use chrono::TimeZone;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const TASKS: usize = 500;

/// One size of instance.
#[derive(Clone, Copy)]
struct Size {
    /// Messages in the instance.
    total: u64,
    /// The newest of them, loaded into the app.
    loaded: u64,
    agents: usize,
}

fn agent_names(size: Size) -> Vec<String> {
    (0..size.agents).map(|i| format!("agent{i:02}")).collect()
}

/// A board of `TASKS` tasks in every status, named after the beads of the
/// PROGRESS messages (`ol-3`, `ol-13`, …).
fn board(agents: usize) -> awtui::engine::tasks::TaskSnapshot {
    use awtui::tasks::{PlanWorkflow, Task, TaskStatus};
    let t0 = chrono::Utc.with_ymd_and_hms(2026, 1, 15, 8, 0, 0).unwrap();
    let tasks = (0..TASKS)
        .map(|k| Task {
            id: format!("tk_{k:012x}"),
            workflow_id: "wf_bench".into(),
            name: format!("ol-{}", k * 10 + 3),
            description: String::new(),
            sequence: k as u32 + 1,
            depends_on: (k > 0)
                .then(|| format!("tk_{:012x}", k - 1))
                .into_iter()
                .collect(),
            assignee: Some(format!("agent{:02}", k % agents)),
            role: None,
            status: TaskStatus::ALL[k % TaskStatus::ALL.len()],
            claimed_by: None,
            claimed_at: None,
            plan: serde_json::Value::Null,
            context: serde_json::Value::Null,
            outcome: None,
            outcome_detail: serde_json::Value::Null,
            error: None,
            created_at: t0,
            updated_at: t0,
        })
        .collect();
    awtui::engine::tasks::TaskSnapshot {
        workflows: vec![PlanWorkflow {
            id: "wf_bench".into(),
            name: "bench".into(),
            source_type: "custom".into(),
            source_content: String::new(),
            source_ref: None,
            max_parallel_tasks: 4,
            plan_summary: None,
            abandoned: false,
            created_by: "user".into(),
            created_at: t0,
        }],
        tasks,
        agents: Vec::new(),
        last_checkpoints: Vec::new(),
        workspaces: Vec::new(),
    }
}

fn text(i: u64, agents: &[String]) -> String {
    let to = &agents[(i as usize * 7) % agents.len()];
    match i % 10 {
        0 => format!(
            "=== AOP-FINAL | agent=a{} status=ok ===\nResult {i}: all checks passed.\nSecond line of the final answer.\n=== END-AOP-FINAL ===\n",
            i % 20
        ),
        3 => format!(
            "@{to} [ol-{i}] PROGRESS\nBead: ol-{i}\nStep: {}/5 parser\nStatus: on track",
            i % 5
        ),
        5 => format!(
            "@{to} urgent: message {i} needs a look at crates/tui/src/panes/channel.rs before the build; the rest of this sentence makes it wrap over more than one line at 200 columns for sure, really."
        ),
        _ => format!("@{to} message {i}: please have a look at the next step."),
    }
}

fn app(size: Size) -> App {
    let agents = agent_names(size);
    let base = chrono::Utc.with_ymd_and_hms(2026, 1, 15, 8, 0, 0).unwrap();
    let messages: Vec<MessageSnapshot> = (size.total - size.loaded + 1..=size.total)
        .map(|id| {
            let from = agents[(id as usize) % size.agents].clone();
            let message = text(id, &agents);
            let entry = ChannelEntry {
                id,
                timestamp: base + chrono::Duration::milliseconds(id as i64 * 250),
                mentions: mentions::extract(&message, &agents, &from),
                from,
                message,
                reply_to: (id % 50 == 7).then(|| id - 3),
            };
            MessageSnapshot {
                annotations: awtui::protocols::annotate(&entry.message),
                entry,
                cut: Default::default(),
            }
        })
        .collect();
    let mut cursors = BTreeMap::new();
    for (k, a) in agents.iter().enumerate() {
        let acked = size.total - 45 + k as u64 % 40;
        cursors.insert(
            a.clone(),
            Cursor {
                acked,
                delivered: acked + 5,
            },
        );
    }
    let snapshot = Snapshot {
        left_out: 0,
        workflow: "bench".into(),
        instance: "default".into(),
        agents: agents
            .iter()
            .enumerate()
            .map(|(k, a)| AgentSnapshot {
                place: String::new(),
                protocol: String::new(),
                live: Default::default(),
                name: a.clone(),
                backend: "claude".into(),
                model: Some("sonnet".into()),
                status: if k % 3 == 0 {
                    AgentStatus::Thinking
                } else {
                    AgentStatus::Idle
                },
                metrics: AgentMetrics {
                    unread: k,
                    turns: k as u32,
                    tokens_in: 1000 * k as u64,
                    ..AgentMetrics::default()
                },
            })
            .collect(),
        messages,
        total_messages: size.total as usize,
        user_unread: 0,
        documents: vec!["notes.md".into()],
        entry_document: "notes.md".into(),
        started: None,
        approvals: Default::default(),
        cursors,
        paused: None,
        ops: Default::default(),
        tasks: board(size.agents),
        notices: Vec::new(),
    };
    let mut app = App::new(
        Config::defaults(),
        AppOptions {
            on_quit: QuitAction::Shutdown,
            utc_offset: 0,
        },
    );
    app.update(Input::Reply(Ok(Reply::Snapshot {
        snapshot: Box::new(snapshot),
    })));
    app.update(Input::Reply(Ok(Reply::Document {
        file: "notes.md".into(),
        content: "# Notes\n\nSome *markdown* here.\n\n```rust\nfn main() {}\n```\n".repeat(20),
    })));
    app
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn frames(
    terminal: &mut Terminal<TestBackend>,
    app: &mut App,
    n: usize,
    mut before: impl FnMut(&mut App, usize),
) -> Duration {
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        before(app, i);
        let t = Instant::now();
        terminal.draw(|f| ui::draw(app, f)).unwrap();
        times.push(t.elapsed());
    }
    median(times)
}

fn run(size: Size) {
    let t = Instant::now();
    let mut app = app(size);
    let load = t.elapsed();
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let t = Instant::now();
    terminal.draw(|f| ui::draw(&mut app, f)).unwrap();
    let first = t.elapsed();

    let steady = frames(&mut terminal, &mut app, 300, |app, i| {
        app.update(Input::Tick(Duration::from_millis(100 * i as u64)));
    });
    let mut next = size.total;
    let agents = agent_names(size);
    let live = frames(&mut terminal, &mut app, 300, |app, _| {
        next += 1;
        let message = text(next, &agents);
        let from = agents[next as usize % size.agents].clone();
        let entry = ChannelEntry {
            id: next,
            timestamp: chrono::Utc::now(),
            mentions: mentions::extract(&message, &agents, &from),
            from,
            message,
            reply_to: None,
        };
        app.update(Input::Engine(EngineEvent::Message {
            annotations: Box::new(awtui::protocols::annotate(&entry.message)),
            entry,
        }));
    });
    app.update(Input::Action(Action::Focus(
        awtui::tui::action::FocusTarget::Pane(awtui::tui::action::Pane::Channel),
    )));
    let scrolled = frames(&mut terminal, &mut app, 300, |app, i| {
        let m = if i % 2 == 0 {
            Motion::PageUp
        } else {
            Motion::ScrollDown(3)
        };
        app.update(Input::Action(Action::Move(m)));
    });
    app.update(Input::Action(Action::Focus(
        awtui::tui::action::FocusTarget::Pane(awtui::tui::action::Pane::Tasks),
    )));
    let board = frames(&mut terminal, &mut app, 300, |app, i| {
        let mut t = app.tasks.tasks[(i * 7) % TASKS].clone();
        t.status = awtui::tasks::TaskStatus::ALL[i % 8];
        app.update(Input::Engine(EngineEvent::Task {
            change: Box::new(awtui::tasks::TaskEvent::TaskChanged(t)),
        }));
        app.update(Input::Action(Action::Move(Motion::Down(1))));
    });
    println!(
        "tui_frame: {} messages ({} loaded), {} agents, {TASKS} tasks, 200x60 (TestBackend)",
        size.total, size.loaded, size.agents
    );
    println!("  load snapshot into the app: {load:?}");
    println!(
        "  first frame (lays out the visible messages; highlights the open document for the first time): {first:?}"
    );
    println!("  median frame, nothing new (spinner tick): {steady:?}");
    println!("  median frame, one new message each frame: {live:?}");
    println!("  median frame, scrolling back through history: {scrolled:?}");
    println!("  median frame, task board focused, one task changing each frame: {board:?}");
}

fn main() {
    run(Size {
        total: 100_000,
        loaded: 100_000,
        agents: 20,
    });
    run(Size {
        total: 1_000_000,
        loaded: 10_000,
        agents: 100,
    });
}
