//! Context store benchmarks: append, read of the last 50 and inbox check at
//! 100, 10,000 and 100,000 messages; pages of 1,000 at the start, middle and
//! end of 100,000 messages; reopening a 100,000-message instance;
//! and the resident memory of such an instance.
//!
//! `cargo bench --bench context`. Targets: read and inbox flat with history
//! (at 100,000 no more than twice the cost at 100), reopen under one second,
//! a 100,000-message instance under 100 MB resident.

use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use awtui::context::{ContextStore, FileStore, MemoryStore, Page, Since, StoreLayout};
use criterion::{BenchmarkId, Criterion};

const SIZES: [usize; 3] = [100, 10_000, 100_000];

fn layout() -> StoreLayout {
    StoreLayout {
        channel: "channel.md".into(),
        document: "notes.md".into(),
        documents: vec![],
        agents: vec!["coder".into(), "reviewer".into(), "qa".into()],
    }
}

/// A realistic message: about 200 bytes, every tenth one mentions @coder.
fn message(i: usize) -> String {
    let who = if i.is_multiple_of(10) { "@coder " } else { "" };
    format!(
        "{who}step {i}: looked at src/auth/session.rs and the token refresh path; the expiry check uses <= where it should use <, which lets a token live one tick too long."
    )
}

/// Writes an instance folder holding `n` messages, built through the memory
/// store (same entry type, same JSON) to skip `n` fsyncs, then opens it.
fn instance_with(dir: &Path, n: usize) -> FileStore {
    let mut mem = MemoryStore::new(&layout()).unwrap();
    for i in 0..n {
        mem.append(
            if i.is_multiple_of(2) {
                "reviewer"
            } else {
                "qa"
            },
            &message(i),
        )
        .unwrap();
    }
    std::fs::create_dir_all(dir).unwrap();
    let mut out =
        std::io::BufWriter::new(std::fs::File::create(dir.join("channel.jsonl")).unwrap());
    for e in mem.read(None, None).unwrap() {
        serde_json::to_writer(&mut out, &e).unwrap();
        out.write_all(b"\n").unwrap();
    }
    out.flush().unwrap();
    drop(out);
    let mut store = FileStore::open(dir, &layout()).unwrap();
    // Leave five unread mentions in coder's inbox whatever the history.
    let keep_unread = 50;
    let until = store.last_id().saturating_sub(keep_unread);
    store.ack("coder", Since::Id(until)).unwrap();
    store
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Reports reopen time and resident memory of a 100,000-message instance.
fn open_report() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big");
    drop(instance_with(&path, 100_000));
    let mut times = Vec::new();
    for _ in 0..7 {
        let start = Instant::now();
        let store = FileStore::open(&path, &layout()).unwrap();
        times.push(start.elapsed());
        black_box(store.len());
    }
    times.sort();
    // Resident memory is measured in a fresh process: this one has already
    // allocated and freed several stores.
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .env(RSS_CHILD, &path)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&child.stdout);
    let mut numbers = report
        .split_whitespace()
        .filter_map(|n| n.parse::<u64>().ok());
    let (before, after) = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
    println!(
        "reopen 100,000 messages: median {:.1} ms (min {:.1} ms, max {:.1} ms)",
        ms(times[3]),
        ms(times[0]),
        ms(times[6])
    );
    println!(
        "resident memory: {:.1} MB for the open 100,000-message store (process total {:.1} MB)",
        (after.saturating_sub(before)) as f64 / 1024.0,
        after as f64 / 1024.0
    );
}

const RSS_CHILD: &str = "AWTUI_BENCH_RSS_OF";

/// In the child: resident memory before and after opening the store.
fn rss_child(path: &str) {
    let before = rss_kib();
    let store = FileStore::open(Path::new(path), &layout()).unwrap();
    let after = rss_kib();
    println!("{before} {after}");
    black_box(store.len());
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut stores: Vec<(usize, FileStore)> = SIZES
        .iter()
        .map(|&n| (n, instance_with(&dir.path().join(n.to_string()), n)))
        .collect();

    let mut group = c.benchmark_group("read_last_50");
    for (n, store) in &stores {
        group.bench_with_input(BenchmarkId::from_parameter(n), n, |b, _| {
            b.iter(|| black_box(store.read(None, Some(50)).unwrap()))
        });
    }
    group.finish();

    // Paging through all history costs O(page): the first, middle and
    // last pages of 1,000 of the 100,000-message channel cost the same.
    let (_, big) = stores.last().unwrap();
    let mut group = c.benchmark_group("page_of_1000_at_100000");
    for after in [0u64, 50_000, 99_000] {
        group.bench_with_input(BenchmarkId::from_parameter(after), &after, |b, &after| {
            b.iter(|| black_box(big.page(Page::After(Since::Id(after)), 1000)))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("inbox_check");
    for (n, store) in &stores {
        group.bench_with_input(BenchmarkId::from_parameter(n), n, |b, _| {
            b.iter(|| black_box(store.inbox("coder").unwrap()))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("append_fsync");
    for (n, store) in &mut stores {
        group.bench_function(BenchmarkId::from_parameter(*n), |b| {
            b.iter(|| {
                black_box(
                    store
                        .append("reviewer", "@qa please re-run the auth tests")
                        .unwrap(),
                )
            })
        });
    }
    group.finish();

    let mut mem = MemoryStore::new(&layout()).unwrap();
    c.bench_function("append_memory", |b| {
        b.iter(|| {
            black_box(
                mem.append("reviewer", "@qa please re-run the auth tests")
                    .unwrap(),
            )
        })
    });
}

fn main() {
    if let Ok(path) = std::env::var(RSS_CHILD) {
        return rss_child(&path);
    }
    open_report();
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    benches(&mut c);
    c.final_summary();
}
