//! The live structure of a turn in the control room, without a terminal:
//! the agents pane shows each agent's protocol and, while a turn runs, its
//! running tool call, plan progress and usage; `v` opens one agent's live
//! view (text, tool calls with diffs, plan, usage), Enter posts the typed
//! line to it, Esc cancels its turn (not the agent) and then closes the
//! view. A hostile
//! agent's titles never reach the screen's cells as escape sequences, and
//! a flood of tool calls stays bounded.

use std::collections::BTreeMap;

use awtui::agents::backend::BackendEvent;
use awtui::agents::runner::{AgentMetrics, AgentStatus};
use awtui::engine::event::{AgentSnapshot, Snapshot};
use awtui::engine::{Command, EngineEvent, Reply};
use awtui::tui::app::{App, Effect, Input};
use awtui::tui::panes::live::body;
use awtui::tui::theme::Theme;
use awtui::tui::{QuitAction, ui};
use awtui::vocab::activity::{FileDiff, PlanEntry, ToolCallView, Usage};
use awtui::vocab::live::{AgentLive, CALLS_KEPT};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Color;

use crate::fixture;
use fixture::new_app;

/// Escape sequences and controls a hostile agent puts in every text.
const HOSTILE: &str = "\x1b]52;c;aGk=\x07\x1b[2J\u{9b}31m\r\nX\x08\x1b[?1049l";

fn call(id: &str, kind: &str, title: &str, status: &str) -> ToolCallView {
    ToolCallView {
        id: id.into(),
        kind: kind.into(),
        title: title.into(),
        status: status.into(),
        ..ToolCallView::default()
    }
}

fn plan(done: usize, of: usize) -> Vec<PlanEntry> {
    (0..of)
        .map(|i| PlanEntry {
            content: format!("step {}", i + 1),
            status: if i < done { "completed" } else { "pending" }.into(),
            priority: "medium".into(),
        })
        .collect()
}

/// A turn under way: a finished edit with a diff, a running test run on
/// two files, a plan 2/5 done, 1.2k tokens for $0.03.
fn working_live() -> AgentLive {
    let mut edit = call("e1", "edit", "Fix greet", "completed");
    edit.locations = vec!["greet.sh".into()];
    edit.diffs = vec![FileDiff {
        path: "greet.sh".into(),
        added: 1,
        removed: 1,
        preview: "-echo hi\n+echo HI\n".into(),
    }];
    let mut run = call("r1", "execute", "cargo test", "in_progress");
    run.locations = vec!["src/lib.rs".into(), "tests/a.rs".into()];
    AgentLive {
        text: "I will fix the greeting, then run the tests.".into(),
        calls: vec![edit, run],
        plan: plan(2, 5),
        usage: Usage {
            input_tokens: 1000,
            output_tokens: 200,
            cost_usd: Some(0.03),
        },
    }
}

fn agent(name: &str, protocol: &str, status: AgentStatus, live: AgentLive) -> AgentSnapshot {
    AgentSnapshot {
        name: name.into(),
        backend: "gemini".into(),
        model: None,
        status,
        metrics: AgentMetrics::default(),
        place: "local".into(),
        protocol: protocol.into(),
        live,
    }
}

fn snapshot(agents: Vec<AgentSnapshot>) -> Snapshot {
    Snapshot {
        workflow: "live".into(),
        instance: "default".into(),
        agents,
        messages: Vec::new(),
        left_out: 0,
        total_messages: 0,
        user_unread: 0,
        documents: vec!["notes.md".into()],
        entry_document: "notes.md".into(),
        cursors: BTreeMap::new(),
        paused: None,
        ops: Default::default(),
        tasks: Default::default(),
        started: None,
        approvals: Default::default(),
        notices: Vec::new(),
    }
}

/// An app showing `agents`, the agents pane focused.
fn app(agents: Vec<AgentSnapshot>) -> App {
    let mut app = new_app(QuitAction::Shutdown);
    app.update(Input::Reply(Ok(Reply::Snapshot {
        snapshot: Box::new(snapshot(agents)),
    })));
    app.update(ch('1'));
    app
}

/// A working ACP agent `gem` and an idle headless one `cod`.
fn two_agents() -> App {
    app(vec![
        agent(
            "gem",
            "acp",
            AgentStatus::CallingTool("cargo test".into()),
            working_live(),
        ),
        agent("cod", "headless", AgentStatus::Idle, AgentLive::default()),
    ])
}

fn key(code: KeyCode) -> Input {
    Input::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn ch(c: char) -> Input {
    key(KeyCode::Char(c))
}

fn typed(text: &str) -> Vec<Input> {
    text.chars().map(ch).collect()
}

fn activity(agent: &str, event: BackendEvent) -> Input {
    Input::Engine(EngineEvent::Activity {
        agent: agent.into(),
        activity: event,
    })
}

fn status(agent: &str, status: AgentStatus) -> Input {
    Input::Engine(EngineEvent::Status {
        agent: agent.into(),
        status,
    })
}

fn render(app: &mut App, w: u16, h: u16) -> Buffer {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    ui::render(app, area, &mut buf);
    buf
}

/// The buffer as text, one line per row (wide characters once).
fn text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in 0..area.height {
        let mut skip = 0;
        for x in 0..area.width {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let sym = buf[(x, y)].symbol();
            out.push_str(sym);
            skip = awtui::tui::text::width(sym).max(1) - 1;
        }
        out.push('\n');
    }
    out
}

fn screen(app: &mut App, w: u16, h: u16) -> String {
    text(&render(app, w, h))
}

/// No cell holds a control character (ESC, BEL, CSI, BS…), and no
/// remnant of an escape sequence shows (the whole sequence is removed,
/// not only its ESC).
fn assert_clean(buf: &Buffer) {
    for cell in buf.content() {
        assert!(
            !cell.symbol().chars().any(char::is_control),
            "control character drawn: {:?}\n{}",
            cell.symbol(),
            text(buf)
        );
    }
    let shown = text(buf);
    for remnant in ["52;c;", "[2J", "[?1049", "31m"] {
        assert!(!shown.contains(remnant), "{remnant:?} drawn:\n{shown}");
    }
}

/// The row of the screen holding `needle`.
fn row_with(screen: &str, needle: &str) -> String {
    screen
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no row holds {needle:?}:\n{screen}"))
        .to_string()
}

// ----- the agents pane ---------------------------------------------------

#[test]
fn the_agents_pane_shows_protocol_running_call_plan_and_usage() {
    let mut a = two_agents();
    // Under 100 columns the agents pane spans the screen.
    let s = screen(&mut a, 99, 30);
    let gem = row_with(&s, "gem ");
    for part in ["execute `cargo test` in_progress", "gemini acp"] {
        assert!(gem.contains(part), "{part:?} not in {gem:?}");
    }
    assert_eq!(
        a.agents.rows[0].doing(),
        "execute `cargo test` in_progress · src/lib.rs +1 · plan 2/5 · 1.2k tok $0.03"
    );
    let cod = row_with(&s, "cod ");
    assert!(cod.contains("gemini headless"), "{cod}");
    assert!(
        !cod.contains("plan"),
        "an idle agent shows no live turn: {cod}"
    );
}

#[test]
fn activity_updates_the_row_as_it_happens_and_a_new_turn_starts_afresh() {
    let mut a = app(vec![agent(
        "gem",
        "acp",
        AgentStatus::Idle,
        AgentLive::default(),
    )]);
    a.update(status("gem", AgentStatus::Thinking));
    let mut read = call("c1", "read", "Read notes", "pending");
    read.locations = vec!["notes.md".into()];
    a.update(activity("gem", BackendEvent::Tool { call: read.clone() }));
    a.update(activity(
        "gem",
        BackendEvent::Plan {
            entries: plan(1, 3),
        },
    ));
    a.update(activity(
        "gem",
        BackendEvent::Usage {
            usage: Usage {
                input_tokens: 950,
                output_tokens: 0,
                cost_usd: None,
            },
        },
    ));
    let row = a.agents.rows[0].clone();
    assert_eq!(
        row.doing(),
        "read `Read notes` pending · notes.md · plan 1/3 · 950 tok"
    );
    read.status = "completed".into();
    a.update(activity("gem", BackendEvent::Tool { call: read }));
    assert_eq!(a.agents.rows[0].doing(), "thinking · plan 1/3 · 950 tok");
    // The turn ends: the row says so; the last turn stays for the view.
    a.update(status("gem", AgentStatus::Idle));
    assert_eq!(a.agents.rows[0].doing(), "idle");
    assert_eq!(a.agents.rows[0].live.calls.len(), 1);
    // The next turn starts from nothing, as the engine's live view does.
    a.update(status("gem", AgentStatus::Starting));
    assert_eq!(a.agents.rows[0].live, AgentLive::default());
}

// ----- the live view -------------------------------------------------------

#[test]
fn v_opens_the_live_view_with_text_calls_diffs_plan_and_usage() {
    let mut a = two_agents();
    a.update(ch('v'));
    assert_eq!(a.live.as_ref().map(|l| l.agent.as_str()), Some("gem"));
    let buf = render(&mut a, 120, 40);
    let s = text(&buf);
    for part in [
        " live · gem · acp · calling tool (cargo test) ",
        "plan 2/5",
        "✓ step 1",
        "I will fix the greeting, then run the tests.",
        "tool calls: 2 (1 running)",
        "✓ edit `Fix greet` completed · greet.sh",
        "▶ execute `cargo test` in_progress · src/lib.rs +1",
        "files: src/lib.rs, tests/a.rs",
        "greet.sh +1 -1",
        "-echo hi",
        "+echo HI",
        "usage: 1.2k tok $0.03",
        "enter send · esc cancel the turn / close",
    ] {
        assert!(s.contains(part), "{part:?} not on the live view:\n{s}");
    }
    // Added lines green, removed lines red.
    let colour_of = |needle: &str| {
        let (y, line) = s
            .lines()
            .enumerate()
            .find(|(_, l)| l.contains(needle))
            .unwrap();
        let x = line[..line.find(needle).unwrap()].chars().count() as u16;
        buf[(x, y as u16)].fg
    };
    let theme = Theme::default();
    assert_eq!(colour_of("+echo HI"), theme.ok);
    assert_eq!(colour_of("-echo hi"), theme.error);
    assert_ne!(theme.ok, Color::Reset);
}

#[test]
fn enter_posts_the_typed_line_to_the_agent_as_the_channel_input_does() {
    let mut a = two_agents();
    a.update(ch('v'));
    let mut inputs = typed("look at src/lib.rs");
    inputs.push(key(KeyCode::Enter));
    let effects = awtui::tui::drive(&mut a, inputs);
    assert_eq!(
        effects,
        vec![Effect::Command(Command::Post {
            text: "@gem look at src/lib.rs".into()
        })]
    );
    // The same line from the command bar makes the same command.
    let mut b = two_agents();
    let mut inputs = vec![ch('i')];
    inputs.extend(typed("@gem look at src/lib.rs"));
    inputs.push(key(KeyCode::Enter));
    assert_eq!(awtui::tui::drive(&mut b, inputs), effects);
    // Keys bound elsewhere type here (`q` does not quit, `s` does not stop).
    let effects = awtui::tui::drive(&mut a, typed("qs"));
    assert!(effects.is_empty(), "{effects:?}");
    assert_eq!(a.live.as_ref().unwrap().input.input, "qs");
}

#[test]
fn esc_cancels_the_running_turn_then_closes_the_view() {
    let mut a = two_agents();
    a.update(ch('v'));
    let effects = a.update(key(KeyCode::Esc));
    assert_eq!(
        effects,
        vec![Effect::Command(Command::Cancel {
            agent: "gem".into()
        })]
    );
    assert!(a.live.is_some(), "the first Esc keeps the view open");
    let s = screen(&mut a, 120, 40);
    assert!(s.contains("cancelling gem's turn"), "{s}");
    // The turn ends; the agent stays ready, and a line typed now
    // reaches it (it wakes on its own: no restart).
    a.update(status("gem", AgentStatus::Idle));
    let mut inputs = typed("try again, smaller");
    inputs.push(key(KeyCode::Enter));
    assert_eq!(
        awtui::tui::drive(&mut a, inputs),
        vec![Effect::Command(Command::Post {
            text: "@gem try again, smaller".into()
        })]
    );
    // No turn runs: Esc closes the view and sends nothing.
    assert!(a.update(key(KeyCode::Esc)).is_empty());
    assert!(a.live.is_none());
}

#[test]
fn esc_without_a_running_turn_closes_at_once_and_a_stopped_agent_stays_stopped() {
    let mut a = two_agents();
    a.update(ch('j'));
    a.update(ch('v'));
    assert_eq!(a.live.as_ref().unwrap().agent, "cod");
    assert!(a.update(key(KeyCode::Esc)).is_empty());
    assert!(a.live.is_none());
    // Stopped with `s`: a line is posted, the agent is not restarted.
    a.update(status("cod", AgentStatus::Stopped));
    a.update(ch('v'));
    let mut inputs = typed("hi");
    inputs.push(key(KeyCode::Enter));
    assert_eq!(
        awtui::tui::drive(&mut a, inputs),
        vec![Effect::Command(Command::Post {
            text: "@cod hi".into()
        })]
    );
    let s = screen(&mut a, 120, 40);
    assert!(s.contains("cod is stopped"), "{s}");
}

#[test]
fn the_live_command_and_interrupt_name_agents() {
    let mut a = two_agents();
    let mut inputs = vec![ch('i')];
    inputs.extend(typed("/interrupt gem"));
    inputs.push(key(KeyCode::Enter));
    assert_eq!(
        awtui::tui::drive(&mut a, inputs),
        vec![Effect::Command(Command::Cancel {
            agent: "gem".into()
        })]
    );
    // The bar keeps the focus after a command.
    let mut inputs = typed("/interrupt cod");
    inputs.push(key(KeyCode::Enter));
    let effects = awtui::tui::drive(&mut a, inputs);
    assert!(effects.is_empty(), "{effects:?}");
    assert!(screen(&mut a, 120, 40).contains("cod has no turn running"));
    // The refused line stays to fix: Ctrl-U clears it.
    let mut inputs = vec![Input::Key(KeyEvent::new(
        KeyCode::Char('u'),
        KeyModifiers::CONTROL,
    ))];
    inputs.extend(typed("/live cod"));
    inputs.push(key(KeyCode::Enter));
    awtui::tui::drive(&mut a, inputs);
    assert_eq!(a.live.as_ref().unwrap().agent, "cod");
}

// ----- a hostile agent -----------------------------------------------------

#[test]
fn escape_sequences_in_titles_paths_plan_text_and_diffs_never_reach_the_buffer() {
    let evil = |s: &str| format!("{s}{HOSTILE}");
    let mut a = app(vec![agent(
        "gem",
        "acp",
        AgentStatus::Idle,
        AgentLive::default(),
    )]);
    a.update(status("gem", AgentStatus::Thinking));
    let mut c = call(
        &evil("id"),
        &evil("execute"),
        &evil("rm -rf"),
        &evil("in_progress"),
    );
    c.locations = vec![evil("a.rs"), evil("b.rs")];
    c.diffs = vec![FileDiff {
        path: evil("a.rs"),
        added: 1,
        removed: 1,
        preview: format!("-{HOSTILE}\n+{HOSTILE}\n"),
    }];
    for event in [
        BackendEvent::ToolCall {
            name: evil("rm -rf"),
        },
        BackendEvent::Tool { call: c },
        BackendEvent::Plan {
            entries: vec![PlanEntry {
                content: evil("step"),
                status: evil("pending"),
                priority: evil("high"),
            }],
        },
        BackendEvent::Text {
            text: evil("hello"),
        },
    ] {
        a.update(activity("gem", event));
    }
    // The agents pane, narrow and wide.
    for (w, h) in [(80, 24), (160, 40)] {
        assert_clean(&render(&mut a, w, h));
    }
    a.update(ch('v'));
    for (w, h) in [(80, 24), (120, 40), (40, 10)] {
        let buf = render(&mut a, w, h);
        assert_clean(&buf);
    }
    let s = screen(&mut a, 120, 40);
    assert!(s.contains("rm -rf"), "the title is shown, made safe:\n{s}");
}

#[test]
fn a_flood_of_ten_thousand_tool_calls_stays_bounded() {
    let mut a = app(vec![agent(
        "gem",
        "acp",
        AgentStatus::Idle,
        AgentLive::default(),
    )]);
    a.update(status("gem", AgentStatus::Thinking));
    let big = "x".repeat(10_000);
    let diff = FileDiff {
        path: big.clone(),
        added: 1000,
        removed: 1000,
        preview: "+line\n".repeat(1000),
    };
    for i in 0..10_000 {
        let mut c = call(&format!("c{i}"), "edit", &big, "in_progress");
        c.locations = vec![big.clone(); 50];
        c.diffs = vec![diff.clone(); 50];
        a.update(activity("gem", BackendEvent::Tool { call: c }));
        a.update(activity(
            "gem",
            BackendEvent::Text {
                text: "chunk ".repeat(10),
            },
        ));
    }
    let row = a.agents.rows[0].clone();
    assert!(
        row.live.calls.len() <= CALLS_KEPT,
        "{}",
        row.live.calls.len()
    );
    // The view draws a bounded number of rows whatever the agent sent.
    let lines = body(&row, 100, &Theme::default());
    let per_call = 2 + 3 * (2 + 8) + 1;
    assert!(
        lines.len() <= 3 + CALLS_KEPT * per_call + 16 * 1024 / 98 + 10,
        "{} rows",
        lines.len()
    );
    a.update(ch('v'));
    assert_clean(&render(&mut a, 120, 40));
}
