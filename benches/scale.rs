//! Scale (issue 15 item 7): one file context with 100 agents and
//! 1,000,000 messages (`--messages N` to change). Builds `channel.jsonl`
//! and `state.json` once in a temp folder (written directly, as a long run
//! would have left them), then measures, in this process:
//!
//! - reopening (`FileStore::open`): wall time, CPU time, RSS after it and
//!   the peak while opening;
//! - reads of the newest 50, a page of 1,000 deep in the history, and one
//!   entry by id (p50 of many);
//! - what an engine start reads: every agent's unread mentions;
//! - a 10,000-item inbox (p50), and RSS before and after 20 of them (it
//!   must not stay raised).
//!
//! Targets: reopen < 1 s, RSS ≤ 200 MiB, read/inbox p50 flat (compare with
//! `--messages 100000`). Run: `cargo bench --bench scale`.

use std::io::Write;
use std::time::{Duration, Instant};

use awtui::context::{ChannelEntry, ContextStore, FileStore, Page, Since, StoreLayout};

mod support;
use support::{process_cpu as cpu, status_kb};

const AGENTS: usize = 100;

fn layout() -> StoreLayout {
    StoreLayout {
        channel: "channel.md".into(),
        document: "notes.md".into(),
        documents: vec![],
        agents: (0..AGENTS).map(|i| format!("agent{i}")).collect(),
    }
}

fn mib(kb: u64) -> String {
    format!("{:.0} MiB", kb as f64 / 1024.0)
}

/// Writes `messages` messages (agent `i % 100` mentions `(i * 7) % 100`)
/// and cursors: everyone has read everything except `agent0`, who has read
/// nothing (10,000 unread at 1,000,000 messages).
fn build(dir: &std::path::Path, messages: u64) {
    let start = Instant::now();
    let mut out = std::io::BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(dir.join("channel.jsonl")).unwrap(),
    );
    // Sealed as an instance writes them, so reopening checks every line.
    let key = dir.join(awtui::context::file_store::CHANNEL_KEY_FILE);
    let (seal, _) = awtui::context::seal::Seal::load_or_create(&key, 0).unwrap();
    let t0 = chrono::Utc::now() - chrono::Duration::days(30);
    let mut last = None;
    for id in 1..=messages {
        let from = format!("agent{}", id % AGENTS as u64);
        let to = format!("agent{}", (id * 7) % AGENTS as u64);
        let e = ChannelEntry {
            id,
            timestamp: t0 + chrono::Duration::milliseconds(id as i64),
            from,
            message: format!(
                "@{to} progress report {id}: tests pass, moving on to the next part of the task"
            ),
            mentions: vec![to],
            reply_to: None,
        };
        let mut line = serde_json::to_vec(&e).unwrap();
        seal.sign(&mut line);
        line.push(b'\n');
        out.write_all(&line).unwrap();
        last = Some(e);
    }
    out.flush().unwrap();
    drop(out);
    let mut cursors = serde_json::Map::new();
    for i in 0..AGENTS {
        let through = if i == 0 { 0 } else { messages };
        cursors.insert(
            format!("agent{i}"),
            serde_json::json!({"acked": through, "delivered": through}),
        );
    }
    let state = serde_json::json!({"version": 1, "cursors": cursors});
    std::fs::write(dir.join("state.json"), state.to_string()).unwrap();
    // A current mirror would take as long to write as the channel; an old
    // one is rebuilt on open, which is not what is measured here.
    if let Some(last) = last {
        std::fs::write(
            dir.join("channel.md"),
            awtui::context::file_store::mirror_text(&last),
        )
        .unwrap();
    }
    println!(
        "built {messages} messages ({:.0} MiB) in {:.1} s",
        std::fs::metadata(dir.join("channel.jsonl")).unwrap().len() as f64 / 1048576.0,
        start.elapsed().as_secs_f64()
    );
}

fn p50(mut times: Vec<Duration>) -> String {
    times.sort();
    let d = times[times.len() / 2];
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn timed<T>(n: usize, mut f: impl FnMut() -> T) -> Vec<Duration> {
    (0..n)
        .map(|_| {
            let s = Instant::now();
            std::hint::black_box(f());
            s.elapsed()
        })
        .collect()
}

fn main() {
    let mut messages = 1_000_000u64;
    let mut argv = std::env::args().skip(1);
    while let Some(a) = argv.next() {
        if a == "--messages" {
            messages = argv.next().and_then(|n| n.parse().ok()).unwrap_or(messages);
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    build(tmp.path(), messages);
    let before = status_kb("VmRSS");

    let (wall, cpu0) = (Instant::now(), cpu());
    let store = FileStore::open(tmp.path(), &layout()).unwrap();
    let (open_wall, open_cpu) = (wall.elapsed(), cpu() - cpu0);
    let after_open = status_kb("VmRSS");
    println!(
        "{messages} messages, {AGENTS} agents: reopen {:.2} s wall, {:.2} s CPU; RSS {} before, {} after (peak {}) — target < 1 s, ≤ 200 MiB",
        open_wall.as_secs_f64(),
        open_cpu.as_secs_f64(),
        mib(before),
        mib(after_open),
        mib(status_kb("VmHWM")),
    );

    let last = store.last_id();
    println!(
        "  read newest 50        p50 {}",
        p50(timed(2000, || store.read(None, Some(50)).unwrap()))
    );
    println!(
        "  page of 1,000 (middle) p50 {}",
        p50(timed(200, || store.page(Page::Before(last / 2), 1000)))
    );
    println!(
        "  entry by id (old)     p50 {}",
        p50(timed(2000, || store.entry(last / 3)))
    );
    let (wall, cpu0) = (Instant::now(), cpu());
    let unread: usize = (0..AGENTS)
        .map(|i| store.inbox(&format!("agent{i}")).unwrap().len())
        .sum();
    println!(
        "  every agent's inbox (an engine start: {unread} unread) {:.3} s wall, {:.3} s CPU",
        wall.elapsed().as_secs_f64(),
        (cpu() - cpu0).as_secs_f64()
    );
    let rss0 = status_kb("VmRSS");
    let inbox = timed(20, || store.inbox("agent0").unwrap());
    let n = store.inbox("agent0").unwrap().len();
    println!(
        "  inbox of {n}       p50 {}; RSS {} before 20 of them, {} after",
        p50(inbox),
        mib(rss0),
        mib(status_kb("VmRSS"))
    );
    // What attaching the control room costs the engine: the newest 10,000
    // messages (the app's history) with their protocol annotations.
    println!(
        "  control-room snapshot (newest 10,000, annotated) p50 {}",
        p50(timed(20, || {
            store
                .read(None, Some(10_000))
                .unwrap()
                .into_iter()
                .map(|e| awtui::protocols::annotate(&e.message))
                .collect::<Vec<_>>()
        }))
    );
    println!(
        "  read after cursor     p50 {}",
        p50(timed(200, || store
            .read(Some(Since::Id(last - 500)), Some(1000))
            .unwrap()))
    );
}
