//! Answers and errors go to whoever asked: two front ends on one engine,
//! in this process (two links) and over the control socket (two clients).
//! One asks for a snapshot, reads documents and issues failing commands;
//! the other sees none of it, while both see a posted message (a fact).

use std::path::Path;

use awtui::engine::{Command, Engine, EngineEvent, Link, Reply, RequestError};
use awtui::instance::control::{self, ControlHandle};
use awtui::instance::registry::InstanceInfo;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::broadcast;

use crate::fixture;
use fixture::{PATIENCE, start_engine};

/// What A's document holds: must never reach B.
const SECRET: &str = "only-for-A-4711";
/// An agent that does not exist: A's failing stop names it.
const GHOST: &str = "ghost-agent-0815";
/// A document that does not exist: A's failing read names it.
const MISSING: &str = "missing-doc-0815.md";

const WORKFLOW: &str = r#"
name: replies
agents:
  echo:
    command: ["sh", "-c", "cat >/dev/null; echo '@user pong'"]
context:
  config:
    document: notes.md
"#;

async fn start(dir: &Path) -> (Engine, broadcast::Receiver<EngineEvent>) {
    let (engine, first) = start_engine(dir, "replies.yaml", WORKFLOW).await;
    // The document A reads (written through the engine, as a front end would).
    assert_eq!(
        engine
            .request(Command::WriteDocument {
                file: None,
                content: SECRET.into(),
            })
            .await,
        Ok(Reply::Done)
    );
    (engine, first)
}

/// A's private questions over a link, each answered to A.
async fn ask_everything(a: &Link) {
    let Ok(Reply::Snapshot { snapshot }) = a.request(Command::Snapshot { messages: 100 }).await
    else {
        panic!("A gets its snapshot")
    };
    assert_eq!(snapshot.agents[0].name, "echo");
    assert_eq!(
        a.request(Command::ReadDocument { file: None }).await,
        Ok(Reply::Document {
            file: "notes.md".into(),
            content: SECRET.into()
        })
    );
    let stop = a
        .request(Command::Stop {
            agent: GHOST.into(),
        })
        .await;
    assert!(
        matches!(&stop, Err(RequestError::Failed(f)) if f.command == "stop" && f.error.contains(GHOST)),
        "{stop:?}"
    );
    let restart = a
        .request(Command::Restart {
            agent: GHOST.into(),
        })
        .await;
    assert!(
        matches!(&restart, Err(RequestError::Failed(f)) if f.command == "restart"),
        "{restart:?}"
    );
    let read = a
        .request(Command::ReadDocument {
            file: Some(MISSING.into()),
        })
        .await;
    assert!(
        matches!(&read, Err(RequestError::Failed(f)) if f.command == "read_document" && f.error.contains(MISSING)),
        "{read:?}"
    );
}

/// Events until the message `text`; panics after [`PATIENCE`].
async fn events_until_post(
    events: &mut broadcast::Receiver<EngineEvent>,
    text: &str,
) -> Vec<String> {
    let mut seen = Vec::new();
    tokio::time::timeout(PATIENCE, async {
        loop {
            let event = events.recv().await.expect("the event stream stays open");
            seen.push(serde_json::to_string(&event).unwrap());
            if matches!(&event, EngineEvent::Message { entry, .. } if entry.message == text) {
                return;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no message {text:?}; saw {seen:#?}"));
    seen
}

/// Nothing A asked for, or was told, in what B saw.
fn assert_none_of_a_s_answers(seen: &[String]) {
    for line in seen {
        for private in [SECRET, GHOST, MISSING, "\"snapshot\"", "total_messages"] {
            assert!(!line.contains(private), "B saw {private}: {line}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_link_sees_none_of_the_first_ones_answers() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, _first) = start(dir.path()).await;
    let mut a = engine.link();
    let mut b = engine.link();

    ask_everything(&a).await;
    let post = "a fact for everyone";
    assert_eq!(
        a.request(Command::Post { text: post.into() }).await,
        Ok(Reply::Done)
    );

    let seen = events_until_post(&mut b.events, post).await;
    assert_none_of_a_s_answers(&seen);
    // A sees the fact too.
    events_until_post(&mut a.events, post).await;

    // B's own questions are answered to B.
    assert!(matches!(
        b.request(Command::Snapshot { messages: 1 }).await,
        Ok(Reply::Snapshot { .. })
    ));
    engine.send(Command::Shutdown);
    engine.wait().await;
}

fn info(dir: &Path, engine: &Engine) -> InstanceInfo {
    InstanceInfo {
        instance: "default".into(),
        workflow_name: "replies".into(),
        workflow: dir.join("replies.yaml"),
        workdir: dir.to_path_buf(),
        home: dir.to_path_buf(),
        pid: std::process::id(),
        mode: "start".into(),
        standalone: false,
        agents: vec!["echo".into()],
        control: dir.join("control.sock"),
        token_file: dir.join("control.token"),
        mcp_url: engine.mcp_url().to_string(),
        mcp_socket: None,
        log: None,
        state_dir: None,
        started: chrono::Utc::now(),
    }
}

/// A client speaking the control protocol's JSON lines itself.
struct Raw {
    lines: Lines<BufReader<OwnedReadHalf>>,
    writer: OwnedWriteHalf,
    /// Replies read while waiting for another.
    replies: Vec<serde_json::Value>,
    /// Other lines (events) read while waiting for a reply: an event may
    /// arrive before the reply to the command that caused it.
    events: std::collections::VecDeque<String>,
}

impl Raw {
    async fn open(info: &InstanceInfo) -> Raw {
        let stream = UnixStream::connect(&info.control).await.unwrap();
        let (r, writer) = stream.into_split();
        let mut raw = Raw {
            lines: BufReader::new(r).lines(),
            writer,
            replies: Vec::new(),
            events: Default::default(),
        };
        let token = std::fs::read_to_string(&info.token_file).unwrap();
        raw.send(&serde_json::json!({ "token": token.trim() }))
            .await;
        let greeting = raw.line().await;
        assert!(greeting.contains(r#""hello":"welcome""#), "{greeting}");
        raw
    }

    async fn send(&mut self, value: &serde_json::Value) {
        let mut line = serde_json::to_vec(value).unwrap();
        line.push(b'\n');
        self.writer.write_all(&line).await.unwrap();
    }

    async fn line(&mut self) -> String {
        tokio::time::timeout(PATIENCE, self.lines.next_line())
            .await
            .expect("the instance answers")
            .unwrap()
            .expect("the connection stays open")
    }

    /// The reply with `reference` (replies may come in any order; others
    /// read meanwhile are kept).
    async fn reply(&mut self, reference: u64) -> serde_json::Value {
        loop {
            if let Some(i) = self.replies.iter().position(|r| r["ref"] == reference) {
                return self.replies.remove(i);
            }
            let line = self.line().await;
            let value: serde_json::Value = serde_json::from_str(&line).unwrap();
            if value.get("reply").is_some() {
                self.replies.push(value);
            } else {
                self.events.push_back(line);
            }
        }
    }

    /// Lines until the message event with `text`.
    async fn until_post(&mut self, text: &str) -> Vec<String> {
        let mut seen = Vec::new();
        loop {
            let line = match self.events.pop_front() {
                Some(kept) => kept,
                None => self.line().await,
            };
            let value: serde_json::Value = serde_json::from_str(&line).unwrap();
            seen.push(line);
            if value["event"] == "message" && value["entry"]["message"] == text {
                return seen;
            }
        }
    }
}

async fn serve(dir: &Path, engine: &Engine) -> (InstanceInfo, ControlHandle) {
    let info = info(dir, engine);
    let handle = control::listen(engine, &info).await.unwrap();
    (info, handle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_clients_get_their_own_replies_by_ref() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, _first) = start(dir.path()).await;
    let (info, handle) = serve(dir.path(), &engine).await;
    let mut a = Raw::open(&info).await;
    let mut b = Raw::open(&info).await;

    a.send(&serde_json::json!({"command": "snapshot", "messages": 5, "ref": 1}))
        .await;
    a.send(&serde_json::json!({"command": "read_document", "file": null, "ref": 2}))
        .await;
    a.send(&serde_json::json!({"command": "stop", "agent": GHOST, "ref": 3}))
        .await;
    a.send(&serde_json::json!({"command": "read_document", "file": MISSING, "ref": 4}))
        .await;
    a.send(&serde_json::json!({"command": "no_such_command", "ref": 5}))
        .await;
    let snapshot = a.reply(1).await;
    assert_eq!(snapshot["reply"], "snapshot", "{snapshot}");
    assert_eq!(snapshot["snapshot"]["agents"][0]["name"], "echo");
    assert_eq!(
        a.reply(2).await,
        serde_json::json!({"reply": "document", "file": "notes.md", "content": SECRET, "ref": 2})
    );
    assert_eq!(
        a.reply(3).await,
        serde_json::json!({
            "reply": "error",
            "error": format!("there is no agent '{GHOST}' in this workflow"),
            "command": "stop",
            "kind": "unknown_agent",
            "ref": 3
        })
    );
    let missing = a.reply(4).await;
    assert_eq!(missing["command"], "read_document", "{missing}");
    assert!(
        missing["error"].as_str().unwrap().contains(MISSING),
        "{missing}"
    );
    let unreadable = a.reply(5).await;
    assert_eq!(unreadable["reply"], "error", "{unreadable}");
    // Without refs, replies come in the order of the lines.
    a.send(&serde_json::json!({"command": "restart", "agent": GHOST}))
        .await;
    a.send(&serde_json::json!({"request": "status"})).await;
    let mut unreferenced = Vec::new();
    while unreferenced.len() < 2 {
        let value: serde_json::Value = serde_json::from_str(&a.line().await).unwrap();
        if value.get("reply").is_some() {
            unreferenced.push(value);
        }
    }
    assert_eq!(unreferenced[0]["command"], "restart", "{unreferenced:?}");
    assert_eq!(unreferenced[1]["reply"], "status", "{unreferenced:?}");
    // The documented request still answers with the message id.
    let post = "posted by A over the socket";
    a.send(&serde_json::json!({"request": "post", "text": post, "ref": 6}))
        .await;
    let posted = a.reply(6).await;
    assert_eq!(posted["reply"], "posted", "{posted}");
    assert!(posted["id"].as_u64().unwrap() > 0);

    let seen = b.until_post(post).await;
    assert_none_of_a_s_answers(&seen);
    for line in &seen {
        assert!(
            line.starts_with(r#"{"event":"#),
            "B got a reply line: {line}"
        );
    }
    a.until_post(post).await;

    handle.stop().await;
    engine.send(Command::Shutdown);
    engine.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_link_gets_its_replies_and_another_sees_only_facts() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, _first) = start(dir.path()).await;
    let (info, handle) = serve(dir.path(), &engine).await;
    let a = control::connect(&info).await.unwrap();
    let mut b = control::connect(&info).await.unwrap();

    ask_everything(&a).await;
    let post = "a fact over the socket";
    assert_eq!(
        a.request(Command::Post { text: post.into() }).await,
        Ok(Reply::Done)
    );
    let seen = events_until_post(&mut b.events, post).await;
    assert_none_of_a_s_answers(&seen);

    // The CLI's client waits for its command's own answer too.
    let mut cli = control::Client::open(&info).await.unwrap();
    let stop = cli
        .call(Command::Stop {
            agent: GHOST.into(),
        })
        .await
        .unwrap();
    assert!(
        matches!(&stop, Err(f) if f.command == "stop" && f.error.contains(GHOST)),
        "{stop:?}"
    );
    assert_eq!(cli.call(Command::Resume).await.unwrap(), Ok(Reply::Done));
    drop(cli);

    // The instance goes: a request still waiting, or made after, says so.
    handle.stop().await;
    let gone = tokio::time::timeout(PATIENCE, a.request(Command::Snapshot { messages: 1 }))
        .await
        .expect("a request to a closed endpoint does not hang");
    assert_eq!(gone, Err(RequestError::EngineGone));
    engine.send(Command::Shutdown);
    engine.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_logs_are_read_through_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, _first) = start_engine(
        dir.path(),
        "logs.yaml",
        r#"
name: logs
agents:
  echo:
    command: ["sh", "-c", "cat >/dev/null; echo 'why-it-failed-42' >&2; echo '@user pong-17'"]
"#,
    )
    .await;
    let mut link = engine.link();
    let ask = Command::ReadAgentLogs {
        agent: "echo".into(),
    };
    // Before any turn: says there is nothing yet.
    let Ok(Reply::AgentLogs { text, .. }) = link.request(ask.clone()).await else {
        panic!("logs answered")
    };
    assert!(text.contains("no turn output archived yet"), "{text}");
    assert_eq!(
        link.request(Command::Post {
            text: "@echo ping".into()
        })
        .await,
        Ok(Reply::Done)
    );
    events_until_post(&mut link.events, "@user pong-17").await;
    let Ok(Reply::AgentLogs { agent, text }) = link.request(ask).await else {
        panic!("logs answered")
    };
    assert_eq!(agent, "echo");
    assert!(text.contains("── logs/output/"), "{text}");
    assert!(text.contains("-echo-turn"), "{text}");
    assert!(text.contains("pong-17"), "the raw output: {text}");
    assert!(text.contains("── agents/echo/stderr.log ──"), "{text}");
    assert!(text.contains("why-it-failed-42"), "the stderr: {text}");
    // An unknown agent is named in the error.
    let Err(RequestError::Failed(f)) = link
        .request(Command::ReadAgentLogs {
            agent: GHOST.into(),
        })
        .await
    else {
        panic!("refused")
    };
    assert!(f.error.contains(GHOST), "{f:?}");
    engine.send(Command::Shutdown);
    engine.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_counts_every_unread_mention_of_the_user_not_only_the_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, mut events) = start(dir.path()).await;
    let link = engine.link();
    assert_eq!(
        link.request(Command::Post {
            text: "@echo ping".into()
        })
        .await,
        Ok(Reply::Done)
    );
    events_until_post(&mut events, "@user pong").await;
    for text in ["later news", "newest news"] {
        assert_eq!(
            link.request(Command::Post { text: text.into() }).await,
            Ok(Reply::Done)
        );
    }
    events_until_post(&mut events, "newest news").await;
    let Ok(Reply::Snapshot { snapshot }) = link.request(Command::Snapshot { messages: 1 }).await
    else {
        panic!("a snapshot")
    };
    assert_eq!(snapshot.messages.len(), 1);
    assert_eq!(snapshot.user_unread, 1, "the pong is older than the window");
    engine.send(Command::Shutdown);
    engine.wait().await;
}

/// A token holder that misbehaves on the control socket (a user's script
/// gone wrong, or an agent's process that read the token): posts the store
/// refuses, peeks with absurd or malformed queries, a flood of pipelined
/// posts, an endless line. Each is answered to it by name, nothing refused
/// is written, the engine answers another client all along, and the
/// endless line closes only that connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_control_client_gets_errors_by_name_and_the_engine_keeps_answering() {
    use awtui::context::MAX_BODY;
    let dir = tempfile::tempdir().unwrap();
    let (engine, _first) = start(dir.path()).await;
    let (info, handle) = serve(dir.path(), &engine).await;
    let mut hostile = Raw::open(&info).await;
    let mut other = Raw::open(&info).await;
    let before = engine.context().read(|s| s.last_id());

    // Posts the store refuses: too long (a byte over 4 MiB), not a message.
    let long = "x".repeat(MAX_BODY + 1);
    hostile
        .send(&serde_json::json!({"request": "post", "text": long, "ref": 1}))
        .await;
    hostile
        .send(&serde_json::json!({"request": "post", "text": "", "ref": 2}))
        .await;
    let too_long = hostile.reply(1).await;
    assert_eq!(too_long["reply"], "error", "{too_long}");
    let says = too_long["error"].as_str().unwrap();
    assert!(says.contains(&MAX_BODY.to_string()), "{says}");
    let empty = hostile.reply(2).await;
    assert_eq!(empty["reply"], "error", "{empty}");

    // Peeks: no such inbox (named), a malformed limit, a limit beyond any
    // channel, and a page before the first message.
    for (reference, query) in [
        (
            3,
            serde_json::json!({"agent": "../../etc/passwd", "limit": 5}),
        ),
        (4, serde_json::json!({"limit": -1})),
        (5, serde_json::json!({"limit": u64::MAX})),
        (6, serde_json::json!({"limit": 10, "before": 0})),
        (
            7,
            serde_json::json!({"limit": u64::MAX, "before": u64::MAX}),
        ),
    ] {
        let mut line = query;
        line["request"] = "peek".into();
        line["ref"] = reference.into();
        hostile.send(&line).await;
    }
    let no_inbox = hostile.reply(3).await;
    assert_eq!(no_inbox["reply"], "error", "{no_inbox}");
    assert!(
        no_inbox["error"]
            .as_str()
            .unwrap()
            .contains("../../etc/passwd"),
        "{no_inbox}"
    );
    let malformed = hostile.reply(4).await;
    assert_eq!(malformed["reply"], "error", "{malformed}");
    for reference in [5, 7] {
        let all = hostile.reply(reference).await;
        assert_eq!(all["reply"], "messages", "{all}");
        assert_eq!(all["items"].as_array().unwrap().len() as u64, before);
    }
    let none = hostile.reply(6).await;
    assert_eq!(none["items"], serde_json::json!([]), "{none}");
    assert_eq!(
        engine.context().read(|s| s.last_id()),
        before,
        "nothing refused was written"
    );

    // A flood of pipelined posts, requests (`send`) and commands (`post`,
    // as the control room sends) mixed: every one answered, all written
    // once and in the order sent; another client's snapshot is answered
    // meanwhile.
    const FLOOD: u64 = 300;
    let as_command = |i: u64| i.is_multiple_of(3);
    for i in 0..FLOOD {
        let (kind, name) = if as_command(i) {
            ("command", "post")
        } else {
            ("request", "post")
        };
        hostile
            .send(&serde_json::json!({kind: name, "text": format!("flood {i}"), "ref": 100 + i}))
            .await;
    }
    other
        .send(&serde_json::json!({"command": "snapshot", "messages": 5, "ref": 1}))
        .await;
    assert_eq!(other.reply(1).await["reply"], "snapshot");
    for i in 0..FLOOD {
        let answer = hostile.reply(100 + i).await;
        let expected = if as_command(i) { "done" } else { "posted" };
        assert_eq!(answer["reply"], expected, "{answer}");
    }
    let flood = engine.context().read(|s| s.read(None, None).unwrap());
    let flood: Vec<(String, String)> = flood[before as usize..]
        .iter()
        .map(|e| (e.from.clone(), e.message.clone()))
        .collect();
    let sent: Vec<(String, String)> = (0..FLOOD)
        .map(|i| ("user".to_string(), format!("flood {i}")))
        .collect();
    assert_eq!(flood, sent, "written once each, in the order sent");
    // The control room's `post` is checked like any other.
    hostile
        .send(&serde_json::json!({"command": "post", "text": " \n ", "ref": 999}))
        .await;
    let blank = hostile.reply(999).await;
    assert_eq!(
        (blank["reply"].as_str(), blank["command"].as_str()),
        (Some("error"), Some("post")),
        "{blank}"
    );
    assert_eq!(engine.context().read(|s| s.last_id()), before + FLOOD);

    // An endless line: a request before it is still answered, then the
    // limit is named and that connection closed. Nothing of it is written.
    hostile
        .send(&serde_json::json!({"request": "status", "ref": 1000}))
        .await;
    let chunk = vec![b'x'; 1 << 20];
    let mut sent = 0u64;
    while sent <= control::MAX_LINE {
        if hostile.writer.write_all(&chunk).await.is_err() {
            break;
        }
        sent += chunk.len() as u64;
    }
    assert_eq!(hostile.reply(1000).await["reply"], "status");
    let refused = loop {
        let line = hostile.line().await;
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        if value.get("reply").is_some() {
            break value;
        }
    };
    assert_eq!(refused["reply"], "error", "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains(&control::MAX_LINE.to_string()),
        "{refused}"
    );
    let closed = loop {
        match tokio::time::timeout(PATIENCE, hostile.lines.next_line())
            .await
            .expect("the connection closes")
        {
            Ok(Some(_event)) => continue,
            Ok(None) | Err(_) => break true,
        }
    };
    assert!(closed);
    assert_eq!(engine.context().read(|s| s.last_id()), before + FLOOD);

    // The other client, and a new one, are served as before.
    other
        .send(&serde_json::json!({"request": "post", "text": "still here", "ref": 2}))
        .await;
    assert_eq!(other.reply(2).await["reply"], "posted");
    let mut again = Raw::open(&info).await;
    again
        .send(&serde_json::json!({"request": "peek", "limit": 1, "ref": 1}))
        .await;
    let last = again.reply(1).await;
    assert_eq!(last["items"][0]["entry"]["message"], "still here", "{last}");

    handle.stop().await;
    engine.send(Command::Shutdown);
    engine.wait().await;
}
