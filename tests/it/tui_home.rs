//! The home screen (`awtui` with no argument) and the instance screen's
//! hooks into it, without a terminal: the list of instances and the
//! attention view drawn at 120×40 and 80×24 and compared with snapshots;
//! `H` / `!` leaving an instance for the list, an attention jump selecting
//! its message or agent, and `/stop @other` reaching another instance.

use std::collections::BTreeMap;
use std::path::Path;

use awtui::agents::runner::{AgentMetrics, AgentStatus, Budget, PauseReason};
use awtui::context::{ChannelEntry, mentions};
use awtui::engine::event::{AgentSnapshot, MessageSnapshot, Snapshot};
use awtui::engine::{Command, Reply};
use awtui::instance::query::{InstanceStatus, PeekItem};
use awtui::instance::registry::InstanceInfo;
use awtui::tui::action::{Action, Pane};
use awtui::tui::app::{App, Effect, Exit, Input};
use awtui::tui::attention::{Jump, Polled};
use awtui::tui::home::{Home, HomeEffect};
use awtui::tui::{Config, QuitAction};
use chrono::{TimeZone, Utc};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

use crate::fixture;
use fixture::new_app;

fn at(h: u32, m: u32, s: u32) -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 15, h, m, s).unwrap()
}

fn info(name: &str, folder: &str, started: chrono::DateTime<Utc>) -> InstanceInfo {
    InstanceInfo {
        instance: name.into(),
        workflow_name: "review".into(),
        workflow: format!("{folder}/review.yaml").into(),
        workdir: folder.into(),
        home: format!("{folder}/.workflow/{name}").into(),
        pid: 1,
        mode: "start".into(),
        standalone: false,
        agents: vec!["planner".into(), "coder".into(), "reviewer".into()],
        control: "/c.sock".into(),
        token_file: "/c.token".into(),
        mcp_url: "http://127.0.0.1:1/mcp".into(),
        mcp_socket: None,
        log: None,
        state_dir: None,
        started,
    }
}

fn agent(name: &str, status: AgentStatus, cost: f64) -> AgentSnapshot {
    AgentSnapshot {
        place: String::new(),
        protocol: String::new(),
        live: Default::default(),
        name: name.into(),
        backend: "command".into(),
        model: None,
        status,
        metrics: AgentMetrics {
            cost_usd: cost,
            ..AgentMetrics::default()
        },
    }
}

fn entry(id: u64, from: &str, text: &str, time: chrono::DateTime<Utc>) -> ChannelEntry {
    let agents: Vec<String> = ["planner", "coder", "reviewer"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    ChannelEntry {
        id,
        timestamp: time,
        from: from.into(),
        message: text.into(),
        mentions: mentions::extract(text, &agents, from),
        reply_to: None,
    }
}

fn inbox(id: u64, from: &str, text: &str, time: chrono::DateTime<Utc>) -> PeekItem {
    PeekItem {
        annotations: awtui::protocols::annotate(text),
        entry: entry(id, from, text, time),
        priority: None,
        state: None,
        cut: Default::default(),
        thread: None,
    }
}

const HELP: &str = "[ol-7] HELP_REQUEST\nIssue Type: STUCK\n## Problem\nThe fixture database is gone.\n## Question\nMay I recreate it?";

fn polled() -> Vec<Polled> {
    let api = info("api-refactor", "/home/dev/work/api", at(8, 0, 0));
    let docs = info(
        "docs",
        "/home/dev/projects/a-very-long-folder-name/documentation-site",
        at(9, 30, 0),
    );
    let old = info("nightly", "/srv/ci/nightly", at(1, 0, 0));
    vec![
        Polled {
            status: Some(InstanceStatus {
                info: api.clone(),
                agents: vec![
                    agent("planner", AgentStatus::Thinking, 0.42),
                    agent("coder", AgentStatus::Failed("exit status 3".into()), 1.1),
                    agent("reviewer", AgentStatus::Idle, 0.0),
                ],
                paused: None,
                finished: None,
            }),
            inbox: vec![
                inbox(12, "reviewer", "@user the review is done.", at(10, 1, 0)),
                inbox(15, "coder", HELP, at(10, 5, 0)),
            ],
            approvals: vec![],
            info: api,
        },
        Polled {
            status: Some(InstanceStatus {
                info: docs.clone(),
                agents: vec![agent("writer", AgentStatus::Idle, 0.05)],
                paused: Some(PauseReason::Budget(Budget::Turns { limit: 40 })),
                finished: None,
            }),
            inbox: vec![],
            approvals: vec![],
            info: docs,
        },
        Polled {
            info: old,
            status: None,
            inbox: vec![],
            approvals: vec![],
        },
    ]
}

fn home() -> Home {
    let mut h = Home::new("/home/dev".into(), 0);
    h.polled(polled(), at(10, 6, 0));
    h.now = at(10, 12, 34);
    h
}

fn draw(home: &Home, w: u16, h: u16) -> String {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    awtui::tui::home::view::render(home, &Config::defaults().theme, area, &mut buf);
    let mut out = String::new();
    for y in 0..h {
        let mut line = String::new();
        let mut skip = 0;
        for x in 0..w {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let sym = buf[(x, y)].symbol();
            line.push_str(sym);
            skip = awtui::tui::text::width(sym).max(1) - 1;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

fn no_files(_: &Path) -> Vec<(String, bool)> {
    Vec::new()
}

#[test]
fn home_list_snapshots() {
    let mut h = home();
    h.key(key(KeyCode::Char('j')), &no_files);
    insta::assert_snapshot!("home_list_120x40", draw(&h, 120, 40));
    insta::assert_snapshot!("home_list_80x24", draw(&h, 80, 24));
    let text = draw(&h, 80, 24);
    assert!(text.contains("@api-refactor"), "{text}");
    assert!(text.contains("1/3"), "one of three working: {text}");
    assert!(text.contains("$1.52"), "the instance's cost: {text}");
    assert!(
        text.contains("(paused)") && text.contains("(no answer)"),
        "{text}"
    );
}

#[test]
fn attention_view_snapshots() {
    let mut h = home();
    h.key(key(KeyCode::Char('!')), &no_files);
    insta::assert_snapshot!("attention_120x40", draw(&h, 120, 40));
    insta::assert_snapshot!("attention_80x24", draw(&h, 80, 24));
    let text = draw(&h, 120, 40);
    for what in ["HELP_REQUEST", "failed", "paused", "mention"] {
        assert!(text.contains(what), "{what}: {text}");
    }
    // Newest first: the failed agent and the pause were first seen at the
    // poll (10:06), then the HELP_REQUEST (10:05), then the mention (10:01).
    let pos = |s: &str| text.find(s).unwrap();
    assert!(pos("failed") < pos("HELP_REQUEST"));
    assert!(pos("HELP_REQUEST") < pos("mention"));
}

#[test]
fn attention_enter_jumps_to_the_help_request() {
    let mut h = home();
    h.key(key(KeyCode::Char('!')), &no_files);
    let i = h
        .items
        .iter()
        .position(|i| i.kind.label() == "HELP_REQUEST")
        .unwrap();
    for _ in 0..i {
        h.key(key(KeyCode::Char('j')), &no_files);
    }
    match h.key(key(KeyCode::Enter), &no_files).as_slice() {
        [HomeEffect::Open { info, jump }] => {
            assert_eq!(info.instance, "api-refactor");
            assert_eq!(*jump, Jump::Message(15));
        }
        other => panic!("{other:?}"),
    }
}

// ----- the instance screen's hooks -------------------------------------

fn snapshot() -> Snapshot {
    Snapshot {
        approvals: Default::default(),
        left_out: 0,
        user_unread: 0,
        workflow: "review".into(),
        instance: "api-refactor".into(),
        agents: vec![
            agent("planner", AgentStatus::Idle, 0.0),
            agent("coder", AgentStatus::Failed("exit status 3".into()), 0.0),
            agent("reviewer", AgentStatus::Idle, 0.0),
        ],
        messages: (1..=20)
            .map(|i| {
                let e = entry(
                    i,
                    "planner",
                    &format!("message {i} for @coder"),
                    at(10, 0, i as u32),
                );
                MessageSnapshot {
                    annotations: awtui::protocols::annotate(&e.message),
                    entry: e,
                    cut: Default::default(),
                }
            })
            .collect(),
        total_messages: 20,
        documents: vec!["notes.md".into()],
        entry_document: "notes.md".into(),
        cursors: BTreeMap::new(),
        paused: None,
        ops: Default::default(),
        tasks: Default::default(),
        started: Some(at(8, 0, 0)),
        notices: Vec::new(),
    }
}

fn app(on_quit: QuitAction, jump: Option<Jump>) -> App {
    let mut app = new_app(on_quit);
    app.jump = jump;
    app.update(Input::Reply(Ok(Reply::Snapshot {
        snapshot: Box::new(snapshot()),
    })));
    app
}

/// The instance screen's last line, drawn at 120 columns.
fn hints(a: &mut App) -> String {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
    terminal.draw(|f| awtui::tui::ui::draw(a, f)).unwrap();
    let buf = terminal.backend().buffer().clone();
    (0..120)
        .map(|x| buf[(x, 39)].symbol().to_string())
        .collect()
}

#[test]
fn h_and_bang_leave_for_the_list_only_when_opened_from_it() {
    let mut a = app(QuitAction::Home, None);
    assert!(hints(&mut a).contains("H home"), "{}", hints(&mut a));
    assert!(!hints(&mut app(QuitAction::Detach, None)).contains("H home"));
    assert_eq!(
        a.update(Input::Key(key(KeyCode::Char('H')))),
        vec![Effect::Quit]
    );
    assert_eq!(a.exit, Some(Exit::Home { attention: false }));
    let mut a = app(QuitAction::Home, None);
    assert_eq!(
        a.update(Input::Key(key(KeyCode::Char('!')))),
        vec![Effect::Quit]
    );
    assert_eq!(a.exit, Some(Exit::Home { attention: true }));
    // q leaves too, and never stops the instance.
    let mut a = app(QuitAction::Home, None);
    assert_eq!(
        a.update(Input::Key(key(KeyCode::Char('q')))),
        vec![Effect::Quit]
    );
    assert_eq!(a.exit, Some(Exit::Detached));
    // Elsewhere (awtui <file>, attach) the keys say where the list is.
    let mut a = app(QuitAction::Detach, None);
    assert!(a.update(Input::Key(key(KeyCode::Char('H')))).is_empty());
    assert_eq!(a.exit, None);
    assert!(
        a.status
            .as_ref()
            .unwrap()
            .text
            .contains("awtui (no argument)")
    );
}

#[test]
fn a_jump_selects_the_message_or_the_agent_once_the_snapshot_is_in() {
    let a = app(QuitAction::Home, Some(Jump::Message(7)));
    assert_eq!(a.focus, Pane::Channel);
    assert_eq!(a.channel.selected_message().unwrap().entry.id, 7);
    let a = app(QuitAction::Home, Some(Jump::Agent("coder".into())));
    assert_eq!(a.focus, Pane::Agents);
    assert_eq!(a.agents.selected().unwrap().name, "coder");
    let a = app(QuitAction::Home, Some(Jump::Message(999)));
    assert!(a.status.as_ref().unwrap().error);
}

#[test]
fn stop_at_another_instance_reaches_it_and_at_completes_instances() {
    let mut a = app(QuitAction::Detach, None);
    a.instances = vec!["api-refactor".into(), "docs".into()];
    assert_eq!(
        a.update(Input::Action(Action::Stop(Some("@docs".into())))),
        vec![Effect::StopInstance("docs".into())]
    );
    // An unknown name is still refused.
    assert!(
        a.update(Input::Action(Action::Stop(Some("@nope".into()))))
            .is_empty()
    );
    assert!(a.status.as_ref().unwrap().error);
    // This instance is stopped as before.
    assert_eq!(
        a.update(Input::Action(Action::Stop(Some("@api-refactor".into())))),
        vec![Effect::Command(Command::Shutdown)]
    );
    // `@d` + Tab on the command line completes the other instance's name.
    let mut a = app(QuitAction::Detach, None);
    a.instances = vec!["api-refactor".into(), "docs".into()];
    a.update(Input::Key(key(KeyCode::Char(':'))));
    for c in "stop @d".chars() {
        a.update(Input::Key(key(KeyCode::Char(c))));
    }
    a.update(Input::Key(key(KeyCode::Tab)));
    assert_eq!(a.bar.input.trim_end(), "stop @docs");
}

#[test]
fn awtui_alone_without_a_terminal_says_what_to_use_instead() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_awtui"))
        .current_dir(dir.path())
        .env("AWTUI_STATE_DIR", dir.path().join("state"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("needs a terminal") && err.contains("awtui list"),
        "{err}"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_awtui"))
        .args(["--instance", "x"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("awtui <file> --instance <name>"), "{err}");
}

/// Issue 25: a mention's preview is the line that mentions the person,
/// not an agent operation's block before it.
#[test]
fn attention_previews_show_the_line_that_mentions_the_person() {
    let text = "=== AOP-INTERMEDIATE | agent=reviewer ===\nReading the diff of greet.sh\n=== END-AOP-INTERMEDIATE ===\n@user may I rename --shout to --loud?";
    let mut p = polled();
    p[0].inbox.push(inbox(16, "reviewer", text, at(10, 5, 30)));
    let mut h = home();
    h.polled(p, at(10, 6, 0));
    h.key(key(KeyCode::Char('!')), &no_files);
    let screen = draw(&h, 120, 40);
    let row = screen
        .lines()
        .find(|l| l.contains("rename") || l.contains("Reading the diff"))
        .unwrap_or_else(|| panic!("the mention is listed: {screen}"));
    assert!(row.contains("may I rename --shout"), "{row}");
}

/// Issue 25: `?` on the home screen shows its keys; PgDn moves by the
/// page shown; Esc closes it.
#[test]
fn question_mark_shows_the_home_screens_keys() {
    let mut h = home();
    assert!(draw(&h, 120, 40).contains("? help"));
    h.key(key(KeyCode::Char('?')), &no_files);
    assert_eq!(h.help, Some(0));
    let text = draw(&h, 120, 40);
    for what in [
        "[instances]",
        "start a workflow file",
        "[attention]",
        "jump to the item",
    ] {
        assert!(text.contains(what), "{what}: {text}");
    }
    // Keys scroll the help and do nothing else: `s` asks nothing.
    h.key(key(KeyCode::Char('s')), &no_files);
    assert_eq!(h.prompt, None);
    // 6 lines shown at 80×10: a page keeps one line of the last in view.
    draw(&h, 80, 10);
    h.key(key(KeyCode::PageDown), &no_files);
    assert_eq!(h.help, Some(5));
    h.key(key(KeyCode::PageDown), &no_files);
    assert_eq!(h.help, Some(8), "clamped to the last page");
    h.key(key(KeyCode::Esc), &no_files);
    assert_eq!(h.help, None);
    assert!(!draw(&h, 120, 40).contains("[instances]"));
}

/// The home screen's hint line is drawn like an instance's: keys in the
/// mention colour, what they do dimmed (it used to be one dim string).
#[test]
fn home_hints_look_like_an_instances() {
    let home = home();
    let theme = Config::defaults().theme;
    let area = ratatui::layout::Rect::new(0, 0, 120, 40);
    let mut buf = Buffer::empty(area);
    awtui::tui::home::view::render(&home, &theme, area, &mut buf);
    let row = (0..40)
        .find(|y| {
            (0..120)
                .map(|x| buf[(x, *y)].symbol().to_string())
                .collect::<String>()
                .starts_with("enter open")
        })
        .expect("the hint line");
    assert_eq!(buf[(0, row)].fg, theme.mention, "the key");
    assert_ne!(buf[(6, row)].fg, theme.mention, "what it does");
}

/// The keys shown in the open help's key column at 120×40, each key of
/// a `j/k`-style pair apart.
fn help_keys_shown(h: &Home) -> Vec<String> {
    let screen = draw(h, 120, 40);
    screen
        .lines()
        .filter_map(|l| {
            // Inside the help's box: `│  keys   what it does │`.
            let inner = l.split('│').nth(2)?;
            let keys = inner.strip_prefix("  ")?.split("  ").next()?;
            (!keys.starts_with(' ')).then_some(keys)
        })
        .flat_map(|keys| keys.split([' ', '/']).map(str::to_string))
        .filter(|k| !k.is_empty())
        .collect()
}

fn overridden(toml: &str) -> Home {
    let mut config = Config::defaults();
    config
        .merge(toml, Path::new("u.toml"))
        .expect("a valid override");
    let mut h = home();
    h.keymap = config.keymap;
    h
}

/// Issue 24: every `[keys.home]` binding, the shipped ones and a user's
/// (one to a command the help has no line of its own for included), is
/// in home's `?`.
#[test]
fn every_home_binding_is_in_homes_help() {
    for toml in [
        "",
        "[keys.home]\n\"x\" = \"stop\"\n\"pgdown\" = \"page-down\"\n",
    ] {
        let mut h = overridden(toml);
        h.key(key(KeyCode::Char('?')), &no_files);
        let shown = help_keys_shown(&h);
        let mut checked = 0;
        for b in h.keymap.bindings(awtui::tui::keymap::Section::Home) {
            let k = b.key.to_string();
            assert!(
                shown.contains(&k),
                "{k} ({}) is not in ?: {shown:?}",
                b.command
            );
            checked += 1;
        }
        assert!(checked >= 18, "only {checked} bindings");
    }
}

/// Issue 24: a rebinding in the user's config changes what the home
/// screen's keys do, and its hints, `?` and the stop question say so.
#[test]
fn a_config_override_rebinds_the_home_keys() {
    let mut h = overridden(
        "[keys.home]\n\"x\" = \"stop\"\n\"s\" = \"\"\n\"J\" = \"down\"\n\"ctrl-q\" = \"quit\"\n\
         [keys.confirm]\n\"o\" = \"yes\"\n\"y\" = \"\"\n\
         [keys.help]\n\"e\" = \"back\"\n",
    );
    let text = draw(&h, 120, 40);
    assert!(
        text.contains("x stop") && !text.contains("s stop"),
        "{text}"
    );
    // `s` is unbound: it asks nothing; `J` moves down.
    assert!(h.key(key(KeyCode::Char('s')), &no_files).is_empty());
    assert_eq!(h.prompt, None);
    h.key(key(KeyCode::Char('J')), &no_files);
    assert_eq!(h.selected, 1);
    // `x` asks, naming the answers as bound; `y` no longer stops, `o` does.
    h.key(key(KeyCode::Char('x')), &no_files);
    assert!(draw(&h, 120, 40).contains("Stop @docs and every agent in it? (o/n)"));
    assert!(h.key(key(KeyCode::Char('y')), &no_files).is_empty());
    assert_eq!(h.prompt, None);
    h.key(key(KeyCode::Char('x')), &no_files);
    match h.key(key(KeyCode::Char('o')), &no_files).as_slice() {
        [HomeEffect::Stop(info)] => assert_eq!(info.instance, "docs"),
        other => panic!("{other:?}"),
    }
    // `?` lists the new keys; `[keys.help]`'s `e` closes it.
    h.key(key(KeyCode::Char('?')), &no_files);
    let text = draw(&h, 120, 40);
    assert!(
        text.contains("stop the instance and its agents (asks o/n)"),
        "{text}"
    );
    assert!(text.contains("J j down/k up    move"), "{text}");
    h.key(key(KeyCode::Char('e')), &no_files);
    assert_eq!(h.help, None);
    // A quit key with Ctrl leaves from anywhere, the help included.
    h.key(key(KeyCode::Char('?')), &no_files);
    assert_eq!(
        h.key(
            KeyEvent::new(KeyCode::Char('q'), KeyModifiers::CONTROL),
            &no_files
        ),
        vec![HomeEffect::Quit]
    );
}
