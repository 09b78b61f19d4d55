//! Issue 34 (8, must hold 9): one agent must not multiply its output into
//! every page load. The attacker is a scripted agent that posts thirty
//! messages of 128 KiB, then ten of 3 MiB each (the MCP limit is 4 MiB a
//! request), some bytes multi-byte so a careless cut splits a character. awtui's own pages of
//! the channel — `awtui peek`, `peek --json`, the web page's first load and
//! its live stream — stay within their byte budget, say what they
//! shortened, and every message is still fetchable whole (`awtui peek
//! --message ID`, `GET /api/instances/<id>/messages/<msg>`), byte for byte.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;

use serde_json::Value;

use crate::cli_support::{PATIENCE, World, wait_for};
use crate::web_support::Web;

/// The budget every page of messages keeps (the one written in
/// docs/web.md and `awtui peek --help`).
const BUDGET: usize = 2 * 1024 * 1024;
/// How much of one message a page shows at most.
const PER_MESSAGE: usize = 64 * 1024;
/// How many messages the agent posts, and how big: the first
/// [`MEDIUM`] of [`MEDIUM_SIZE`] (more than a page holds even shortened),
/// the others of [`SIZE`].
const COUNT: usize = 40;
const MEDIUM: usize = 30;
const MEDIUM_SIZE: usize = 128 * 1024;
const SIZE: usize = 3 * 1024 * 1024;

/// Waits for the gate file, then posts every `big/*.txt` through the
/// agent's own `awtui ctx send`, then a short last word.
const AGENT: &str = r#"#!/bin/sh
set -eu
cat >/dev/null
i=0; while [ ! -e gate ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done
for f in big/*.txt; do "$AWTUI_BIN" ctx send < "$f" >/dev/null; done
"$AWTUI_BIN" ctx send "all posted" >/dev/null
"#;

/// Message `k`'s text: about [`MEDIUM_SIZE`] or [`SIZE`] bytes, distinct
/// per message, with two- and four-byte characters across every cut a page
/// could make.
fn big(k: usize) -> String {
    let size = if k < MEDIUM { MEDIUM_SIZE } else { SIZE };
    let mut text = format!("big message {k}\n");
    let mut line = 0;
    while text.len() < size {
        text.push_str(&format!("k={k} line={line} \"quoted\" é ü 🚀 tail\n"));
        line += 1;
    }
    text.trim_end().to_string()
}

/// The `VmRSS` and `VmHWM` of `pid`, in MiB, for the report.
fn memory(pid: u32) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or(0, |kb| kb / 1024)
    };
    format!("rss {} MiB (peak {} MiB)", field("VmRSS:"), field("VmHWM:"))
}

/// The live stream of `awtui web`, read line by line.
fn events(web: &Web) -> BufReader<TcpStream> {
    let mut s = TcpStream::connect(("127.0.0.1", web.port)).expect("connect");
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(
        s,
        "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: {}\r\nAccept: text/event-stream\r\n\r\n",
        web.port,
        web.auth()
    )
    .unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    while !line.contains("\"hello\"") {
        line.clear();
        assert!(r.read_line(&mut line).unwrap() > 0, "the stream ended");
    }
    r
}

/// The first `message` event of the live stream about a big message: its
/// SSE line's length and the message as the page gets it.
fn first_big_event(stream: &mut BufReader<TcpStream>) -> (usize, Value) {
    loop {
        let mut line = Vec::new();
        let n = stream.read_until(b'\n', &mut line).unwrap();
        assert!(n > 0, "the stream ended before a big message");
        let Some(data) = line.strip_prefix(b"data: ") else {
            continue;
        };
        let Ok(v) = serde_json::from_slice::<Value>(data) else {
            continue;
        };
        let message = &v["event"]["message"];
        if v["event"]["kind"] == "message" && message["from"] == "a" {
            return (n, message.clone());
        }
    }
}

#[test]
fn one_agents_huge_messages_stay_out_of_every_page() {
    let mut w = World::new();
    w.script("a.sh", AGENT);
    std::fs::create_dir_all(w.dir.join("big")).unwrap();
    let texts: Vec<String> = (0..COUNT).map(big).collect();
    for (k, text) in texts.iter().enumerate() {
        std::fs::write(w.dir.join(format!("big/{k:02}.txt")), text).unwrap();
    }
    std::fs::write(
        w.dir.join("wf.yaml"),
        "agents:\n  a:\n    command: ./a.sh\nkickoff: \"@a go\"\n",
    )
    .unwrap();
    let engine = w.start_background("wf.yaml", "default");
    let web = Web::start(&mut w, &[]);
    let id = web.instance_id("default");
    let mut stream = events(&web);
    std::fs::write(w.dir.join("gate"), "").unwrap();

    // The live stream: a new big message comes shortened.
    let (line, live) = first_big_event(&mut stream);
    eprintln!("live event of a big message: {line} bytes");
    assert!(line <= 4 * PER_MESSAGE, "a live event of {line} bytes");
    assert_eq!(live["truncated"], true, "{}", &live.to_string()[..300]);
    drop(stream);

    let peek_last = |n: &str| w.run(&["peek", "--to", "@default", "-n", n, "--json"]);
    wait_for("the agent's last word", || {
        let r = peek_last("1");
        (r.code == 0 && r.stdout.contains("all posted")).then_some(())
    });
    eprintln!("engine before the pages: {}", memory(engine));

    // `awtui peek -n 5`: bounded, and it says what it shortened.
    let text = w.run(&["peek", "--to", "@default", "-n", "5"]);
    eprintln!("peek -n 5: {} bytes", text.stdout.len());
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(text.stdout.len() <= BUDGET, "{} bytes", text.stdout.len());
    assert!(
        text.stdout.contains("shortened") && text.stdout.contains("awtui peek --message"),
        "nothing says a message was shortened: {}",
        &text.stdout[text.stdout.len().saturating_sub(400)..]
    );

    // `peek --json`: bounded, each shortened message marked with its size.
    let json = peek_last("5");
    eprintln!("peek -n 5 --json: {} bytes", json.stdout.len());
    assert!(json.stdout.len() <= BUDGET, "{} bytes", json.stdout.len());
    let items = json.json();
    let items = items.as_array().unwrap();
    let cut: Vec<&Value> = items.iter().filter(|i| i["truncated"] == true).collect();
    assert!(!cut.is_empty(), "no item marked truncated");
    for item in &cut {
        assert_eq!(item["bytes"].as_u64(), Some(texts[COUNT - 1].len() as u64));
    }
    // More than a page holds: the oldest are left out, and it says so.
    let many = w.run(&["peek", "--to", "@default", "-n", "41"]);
    eprintln!("peek -n 41: {} bytes", many.stdout.len());
    assert!(many.stdout.len() <= BUDGET, "{} bytes", many.stdout.len());
    assert!(many.stderr.contains("left out"), "{}", many.stderr);

    // The web page's first load of the instance: bounded, marked.
    let first = web.get(&format!("/api/instances/{id}"));
    eprintln!("web first load: {} bytes", first.body.len());
    assert_eq!(
        first.status,
        200,
        "{}",
        &first.body[..first.body.len().min(300)]
    );
    assert!(first.body.len() <= BUDGET, "{} bytes", first.body.len());
    let state = first.json();
    let shown = state["messages"].as_array().unwrap();
    assert!(shown.iter().any(|m| m["truncated"] == true), "none marked");
    eprintln!(
        "web first load: {} messages shown, {} left out",
        shown.len(),
        state["left_out"]
    );
    assert!(
        state["left_out"].as_u64().unwrap_or(0) > 0,
        "no count of what was left out"
    );
    // Older pages too.
    let newest = shown.last().unwrap()["id"].as_u64().unwrap();
    let older = web.get(&format!("/api/instances/{id}/messages?before={newest}"));
    assert!(
        older.body.len() <= BUDGET,
        "older: {} bytes",
        older.body.len()
    );

    // Every message stays fetchable whole, byte for byte: by the CLI…
    let ids: Vec<u64> = w
        .channel("default")
        .iter()
        .filter(|e| e["from"] == "a" && e["message"] != "all posted")
        .map(|e| e["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids.len(), COUNT);
    for k in [0, COUNT - 1] {
        let msg = ids[k];
        let whole = w.run(&[
            "peek",
            "--to",
            "@default",
            "--message",
            &msg.to_string(),
            "--json",
        ]);
        assert_eq!(whole.code, 0, "{}", whole.stderr);
        let item = whole.json();
        assert_eq!(item["entry"]["message"].as_str(), Some(texts[k].as_str()));
        assert!(item.get("truncated").is_none_or(|t| t == false));
        let plain = w.run(&["peek", "--to", "@default", "--message", &msg.to_string()]);
        assert!(
            plain.stdout.contains(&texts[k]),
            "the text output is not whole"
        );
        // …and by the page's "show all".
        let page = web.get(&format!("/api/instances/{id}/messages/{msg}"));
        assert_eq!(
            page.status,
            200,
            "{}",
            &page.body[..page.body.len().min(300)]
        );
        assert_eq!(
            page.json()["message"]["text"].as_str(),
            Some(texts[k].as_str())
        );
    }
    eprintln!("engine after the pages: {}", memory(engine));
    eprintln!("web server after the pages: {}", memory(web.pid));
}

/// The page itself: a shortened message says so, and "show all" draws it
/// whole in its place (read in a real Chromium).
#[test]
fn the_page_shows_a_shortened_message_and_shows_all_of_it_on_request() {
    let mut w = World::new();
    w.script("a.sh", AGENT);
    std::fs::create_dir_all(w.dir.join("big")).unwrap();
    let text = big(0);
    std::fs::write(w.dir.join("big/00.txt"), &text).unwrap();
    std::fs::write(w.dir.join("gate"), "").unwrap();
    std::fs::write(
        w.dir.join("wf.yaml"),
        "agents:\n  a:\n    command: ./a.sh\nkickoff: \"@a go\"\n",
    )
    .unwrap();
    w.start_background("wf.yaml", "default");
    wait_for("the agent's last word", || {
        w.channel("default")
            .iter()
            .any(|m| m["message"] == "all posted")
            .then_some(())
    });
    let web = Web::start(&mut w, &[]);
    web.instance_id("default");
    let b = crate::web_support::webdriver::Browser::start(1280, 800);
    b.go(&web.link());
    // Read inside the page: the channel may be drawn again between
    // finding the note and reading it.
    let shown = format!("of {} bytes shown", text.len());
    b.wait_script(
        "the shortened message's note",
        &format!(
            "const n = document.querySelector('#channel .msg .cut');
             return !!n && n.textContent.includes({})",
            serde_json::to_string(&shown).unwrap()
        ),
    );
    // Clicked from inside the page: the channel may be drawn again
    // between finding the button and clicking it.
    let tail = text.lines().last().unwrap().to_string();
    b.wait_script(
        "the whole message drawn in the page",
        &format!(
            "const b = document.querySelector('#channel .msg .cut button'); if (b) b.click();
             return [...document.querySelectorAll('#channel .msg')].some(m => m.textContent.includes({}) && !m.querySelector('.cut'))",
            serde_json::to_string(&tail).unwrap()
        ),
    );
}
