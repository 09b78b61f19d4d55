//! The control protocol's lines, the mirror and the framing.

use super::server::{Framed, Mirror, framed, same_token};
use super::*;
use crate::engine::EngineEvent;
use crate::engine::event::{AgentSnapshot, Snapshot};
use crate::instance::query::PeekQuery;

#[test]
fn lines_round_trip() {
    for line in [
        ClientLine::Command(Command::Post { text: "hi".into() }),
        ClientLine::Command(Command::Shutdown),
        ClientLine::Request(Request::Status),
        ClientLine::Command(Command::Send { text: "x".into() }),
        ClientLine::Command(Command::Peek {
            query: PeekQuery {
                agent: Some("coder".into()),
                limit: 3,
                kind: None,
                bead: Some("b-1".into()),
                before: None,
                message: None,
            },
        }),
    ] {
        let json = serde_json::to_string(&line).unwrap();
        assert_eq!(
            serde_json::from_str::<ClientLine>(&json).unwrap(),
            line,
            "{json}"
        );
        // With a `ref`, as the server reads it and as a whole message.
        let message = ClientMessage {
            line: line.clone(),
            reference: Some(7),
        };
        let json = serde_json::to_string(&message).unwrap();
        assert!(json.contains(r#""ref":7"#), "{json}");
        assert_eq!(
            serde_json::from_str::<ClientLine>(&json).unwrap(),
            line,
            "{json}"
        );
        assert_eq!(
            serde_json::from_str::<ClientMessage>(&json).unwrap(),
            message,
            "{json}"
        );
    }
    // The wire format the README documents.
    let json = serde_json::to_string(&ServerLine::Reply(Answer {
        reply: Reply::Engine(crate::engine::Reply::Posted { id: 4 }),
        reference: Some(9),
    }))
    .unwrap();
    assert_eq!(json, r#"{"reply":"posted","id":4,"ref":9}"#);
    let json = serde_json::to_string(&ServerLine::Reply(Answer {
        reply: Reply::Engine(crate::engine::Reply::Done),
        reference: None,
    }))
    .unwrap();
    assert_eq!(json, r#"{"reply":"done"}"#);
    let answer =
        |reply: Reply, reference: Option<u64>| ServerLine::Reply(Answer { reply, reference });
    for line in [
        answer(
            Reply::Engine(crate::engine::Reply::Posted { id: 4 }),
            Some(9),
        ),
        ServerLine::Event(Box::new(EngineEvent::Resumed)),
        answer(Reply::error("e"), None),
        answer(
            Reply::Error {
                error: "there is no agent 'x'".into(),
                command: Some("stop".into()),
                kind: crate::vocab::ErrorKind::UnknownAgent,
            },
            Some(2),
        ),
        answer(Reply::Engine(crate::engine::Reply::Done), Some(3)),
        answer(
            Reply::Engine(crate::engine::Reply::Document {
                file: "notes.md".into(),
                content: "x".into(),
            }),
            None,
        ),
    ] {
        let json = serde_json::to_string(&line).unwrap();
        assert_eq!(
            serde_json::from_str::<ServerLine>(&json).unwrap(),
            line,
            "{json}"
        );
    }
}

/// The older spellings of `send` and `peek` (`{"request":"post"}`,
/// `{"request":"peek",…}` with the query inline) are read as the engine's
/// commands.
#[test]
fn older_requests_are_read_as_commands() {
    let read = |line: serde_json::Value| ClientLine::read(line).unwrap();
    assert_eq!(
        read(serde_json::json!({"request": "post", "text": "hi", "ref": 3})),
        ClientLine::Command(Command::Send { text: "hi".into() })
    );
    assert_eq!(
        read(serde_json::json!({"request": "peek", "limit": 2, "agent": "qa", "ref": 1})),
        ClientLine::Command(Command::Peek {
            query: PeekQuery {
                agent: Some("qa".into()),
                limit: 2,
                ..PeekQuery::default()
            },
        })
    );
    assert_eq!(
        read(serde_json::json!({"request": "status", "ref": 1})),
        ClientLine::Request(Request::Status)
    );
    assert!(ClientLine::read(serde_json::json!({"request": "peek", "limit": -1})).is_err());
}

/// A snapshot answers privately, so events may come before it that are
/// newer than it: the mirror applies them again after it.
#[test]
fn the_mirror_keeps_events_that_came_before_its_snapshot() {
    use crate::agents::runner::AgentStatus;
    let agent = |status| AgentSnapshot {
        place: String::new(),
        protocol: String::new(),
        live: Default::default(),
        name: "coder".into(),
        backend: "claude".into(),
        model: None,
        status,
        metrics: Default::default(),
    };
    let mut m = Mirror::default();
    m.resync.asked();
    m.event(&EngineEvent::Status {
        agent: "coder".into(),
        status: AgentStatus::Stopped,
    });
    m.snapshot(Some(&Snapshot {
        left_out: 0,
        workflow: "w".into(),
        instance: "i".into(),
        agents: vec![agent(AgentStatus::Idle)],
        messages: Vec::new(),
        total_messages: 0,
        user_unread: 0,
        documents: Vec::new(),
        entry_document: "notes.md".into(),
        started: None,
        approvals: Default::default(),
        tasks: Default::default(),
        cursors: Default::default(),
        paused: None,
        ops: Default::default(),
        notices: Vec::new(),
    }));
    assert_eq!(m.agents, vec![agent(AgentStatus::Stopped)]);
    assert!(!m.resync.holding());
    m.event(&EngineEvent::Status {
        agent: "coder".into(),
        status: AgentStatus::Idle,
    });
    assert_eq!(m.agents, vec![agent(AgentStatus::Idle)]);
}

#[test]
fn lines_are_framed_by_newline_under_the_cap() {
    assert_eq!(framed(b"{\"a\":1}\n", false), Framed::Line("{\"a\":1}"));
    assert_eq!(framed(b"{\"a\"", false), Framed::Partial);
    assert_eq!(framed(b"last", true), Framed::Line("last"));
    assert_eq!(framed(b"", true), Framed::Line(""));
    assert_eq!(framed(b"\xff\xfe\n", false), Framed::NotText);
    let cap = MAX_LINE as usize;
    let mut long = vec![b'x'; cap - 1];
    long.push(b'\n');
    assert!(matches!(framed(&long, false), Framed::Line(l) if l.len() == cap - 1));
    assert_eq!(framed(&vec![b'x'; cap], false), Framed::TooLong);
    assert_eq!(framed(&vec![b'x'; cap], true), Framed::TooLong);
}

#[test]
fn tokens_compare_whole() {
    assert!(same_token("abc", "abc"));
    assert!(!same_token("abc", "abd"));
    assert!(!same_token("abc", "abcd"));
}
