use super::*;
use crate::vocab::AgentMetrics;
use crate::vocab::AgentSnapshot;
use crate::vocab::ChannelEntry;
use crate::vocab::{InstanceStatus, PeekItem};
use chrono::TimeZone;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

fn info(name: &str) -> InstanceInfo {
    InstanceInfo {
        instance: name.into(),
        workflow_name: "review".into(),
        workflow: format!("/w/{name}/review.yaml").into(),
        workdir: format!("/w/{name}").into(),
        home: format!("/w/{name}/.workflow/{name}").into(),
        pid: 1,
        mode: "start".into(),
        standalone: false,
        agents: vec!["coder".into(), "tester".into()],
        control: "/c.sock".into(),
        token_file: "/c.token".into(),
        mcp_url: "http://127.0.0.1:1/mcp".into(),
        mcp_socket: None,
        log: None,
        state_dir: None,
        started: Utc.with_ymd_and_hms(2026, 1, 1, 9, 0, 0).unwrap(),
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

fn mention(id: u64, text: &str) -> PeekItem {
    PeekItem {
        annotations: crate::protocols::annotate(text),
        cut: Default::default(),
        entry: ChannelEntry {
            id,
            timestamp: Utc.with_ymd_and_hms(2026, 1, 1, 10, 0, id as u32).unwrap(),
            from: "coder".into(),
            message: text.into(),
            mentions: vec!["user".into()],
            reply_to: None,
        },
        priority: None,
        state: None,
        thread: None,
    }
}

fn polled() -> Vec<Polled> {
    vec![
        Polled {
            info: info("one"),
            status: Some(InstanceStatus {
                info: info("one"),
                agents: vec![
                    agent("coder", AgentStatus::Thinking, 0.25),
                    agent("tester", AgentStatus::Failed("boom".into()), 0.5),
                ],
                paused: None,
                finished: None,
            }),
            inbox: vec![mention(3, "@user look")],
            approvals: vec![],
        },
        Polled {
            info: info("two"),
            status: None,
            inbox: vec![],
            approvals: vec![],
        },
    ]
}

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

fn no_files(_: &Path) -> Vec<(String, bool)> {
    Vec::new()
}

fn home() -> Home {
    let mut h = Home::new("/w".into(), 0);
    h.polled(
        polled(),
        Utc.with_ymd_and_hms(2026, 1, 1, 11, 0, 0).unwrap(),
    );
    h
}

#[test]
fn a_row_per_instance_with_its_counts() {
    let h = home();
    assert_eq!(h.rows.len(), 2);
    let one = &h.rows[0];
    assert_eq!((one.working, one.total, one.unread), (1, 2, 1));
    assert!((one.cost - 0.75).abs() < 1e-9);
    assert_eq!(one.attention, 2, "the mention and the failed tester");
    assert_eq!(one.note, None);
    assert_eq!(h.rows[1].note, Some("no answer"));
    assert_eq!(h.rows[1].total, 2, "from the record");
}

#[test]
fn enter_opens_s_y_stops_and_anything_else_keeps_it() {
    let mut h = home();
    let e = h.key(key(KeyCode::Enter), &no_files);
    assert_eq!(
        e,
        vec![HomeEffect::Open {
            info: info("one"),
            jump: Jump::Instance
        }]
    );
    h.key(key(KeyCode::Char('j')), &no_files);
    assert!(h.key(key(KeyCode::Char('s')), &no_files).is_empty());
    assert!(matches!(h.prompt, Some(Prompt::Stop(_))));
    assert!(h.key(key(KeyCode::Char('n')), &no_files).is_empty());
    assert_eq!(h.prompt, None);
    h.key(key(KeyCode::Char('s')), &no_files);
    assert_eq!(
        h.key(key(KeyCode::Char('y')), &no_files),
        vec![HomeEffect::Stop(info("two"))]
    );
    assert_eq!(
        h.key(key(KeyCode::Char('q')), &no_files),
        vec![HomeEffect::Quit]
    );
}

#[test]
fn the_attention_view_jumps_to_where_it_happened() {
    let mut h = home();
    h.key(key(KeyCode::Char('!')), &no_files);
    assert_eq!(h.view, HomeView::Attention);
    assert_eq!(h.looking(), Looking::Attention);
    // Newest first: the failed agent (first seen at the poll), then the
    // mention (10:00:03).
    assert_eq!(
        h.key(key(KeyCode::Enter), &no_files),
        vec![HomeEffect::Open {
            info: info("one"),
            jump: Jump::Agent("tester".into())
        }]
    );
    h.key(key(KeyCode::Char('j')), &no_files);
    assert_eq!(
        h.key(key(KeyCode::Enter), &no_files),
        vec![HomeEffect::Open {
            info: info("one"),
            jump: Jump::Message(3)
        }]
    );
    h.key(key(KeyCode::Esc), &no_files);
    assert_eq!(h.view, HomeView::List);
}

#[test]
fn a_new_poll_keeps_the_selection_on_the_same_instance() {
    let mut h = home();
    h.key(key(KeyCode::Char('j')), &no_files);
    let mut p = polled();
    p.insert(
        0,
        Polled {
            info: info("zero"),
            status: None,
            inbox: vec![],
            approvals: vec![],
        },
    );
    h.polled(p, Utc::now());
    assert_eq!(h.rows[h.selected].name, "two");
    // It stopped elsewhere: the selection stays in range.
    h.polled(polled()[..1].to_vec(), Utc::now());
    assert_eq!(h.selected, 0);
}

#[test]
fn n_prompts_for_a_path_and_tab_completes_yaml_files_and_folders() {
    let files = |dir: &Path| -> Vec<(String, bool)> {
        if dir == Path::new("/w") {
            vec![
                ("review.yaml".into(), false),
                ("release.yml".into(), false),
                ("readme.md".into(), false),
                ("flows".into(), true),
                (".hidden.yaml".into(), false),
            ]
        } else if dir == Path::new("/w/flows/") {
            vec![("demo.yaml".into(), false)]
        } else {
            vec![]
        }
    };
    let mut h = home();
    h.key(key(KeyCode::Char('n')), &files);
    for c in "re".chars() {
        h.key(key(KeyCode::Char(c)), &files);
    }
    // Two matches share "rele"? No: "review.yaml" and "release.yml" share
    // only "re": the first Tab cycles through them.
    h.key(key(KeyCode::Tab), &files);
    let text = |h: &Home| match &h.prompt {
        Some(Prompt::New { text, .. }) => text.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(text(&h), "release.yml");
    h.key(key(KeyCode::Tab), &files);
    assert_eq!(text(&h), "review.yaml");
    // Typing again starts a new completion.
    for _ in 0.."review.yaml".len() {
        h.key(key(KeyCode::Backspace), &files);
    }
    h.key(key(KeyCode::Char('f')), &files);
    h.key(key(KeyCode::Tab), &files);
    assert_eq!(text(&h), "flows/");
    h.key(key(KeyCode::Tab), &files);
    assert_eq!(text(&h), "flows/demo.yaml");
    assert_eq!(
        h.key(key(KeyCode::Enter), &files),
        vec![HomeEffect::Start("/w/flows/demo.yaml".into())]
    );
    assert_eq!(h.prompt, None);
}

/// A `quit` key with Ctrl (Ctrl-C) leaves from the help and both prompts
/// as well as the list; `[keys.help]`'s other keys scroll the help.
#[test]
fn ctrl_c_leaves_from_anywhere_and_the_help_scrolls_by_its_keys() {
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    let mut h = home();
    h.key(key(KeyCode::Char('?')), &no_files);
    assert_eq!(h.key(ctrl_c, &no_files), vec![HomeEffect::Quit]);
    // Drawn 5 lines tall over 14: ctrl-d scrolls 10, clamped to the last
    // page; `?` closes it again.
    h.help_drawn.set((5, 9));
    let ctrl_d = KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL);
    h.key(ctrl_d, &no_files);
    assert_eq!(h.help, Some(9));
    h.key(key(KeyCode::Char('?')), &no_files);
    assert_eq!(h.help, None);
    for prompt in ['s', 'n'] {
        h.key(key(KeyCode::Char(prompt)), &no_files);
        assert!(h.prompt.is_some());
        assert_eq!(h.key(ctrl_c, &no_files), vec![HomeEffect::Quit]);
        h.prompt = None;
    }
}

/// Commands the shipped keys leave out work when bound: a page down by
/// the rows drawn, and `start <file>` starting that file at once.
#[test]
fn other_commands_bound_on_home_do_what_they_say() {
    let mut h = home();
    let mut tables = std::collections::BTreeMap::new();
    tables.insert(
        "home".to_string(),
        std::collections::BTreeMap::from([
            ("pgdown".to_string(), "page-down".to_string()),
            ("R".to_string(), "start flows/review.yaml".to_string()),
        ]),
    );
    h.keymap.apply(&tables).unwrap();
    h.list_drawn.set(3);
    h.key(key(KeyCode::PageDown), &no_files);
    assert_eq!(h.selected, 1, "the last row");
    assert_eq!(
        h.key(key(KeyCode::Char('R')), &no_files),
        vec![HomeEffect::Start("/w/flows/review.yaml".into())]
    );
}
