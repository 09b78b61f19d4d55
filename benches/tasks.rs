//! The task store at 100, 1,000 and 10,000 tasks: `workflow_next_tasks` and
//! `task_claim`, as store calls (`TaskStore::ready`, `TaskStore::claim`) and
//! as the caw tools agents call (`task_tools::call`, JSON in and out), with
//! a memory journal and with the file journal (`tasks.jsonl`, fdatasync per
//! operation) in a temporary folder. Prints p50 and p95 per call; the
//! target is no growth with the number of tasks.
//!
//! The plan is ten parallel chains (task i depends on task i-10), so ten
//! tasks are ready at any size: what is measured is the cost of finding and
//! claiming them, not of returning a longer list. Each measured claim is
//! undone (released, unmeasured) so the next one finds the same board.
//!
//! Run: `cargo bench --bench tasks` (optionally `-- --samples N`, the
//! memory-journal sample count; the file journal takes a tenth of it).

use std::time::{Duration, Instant};

use awtui::mcp::task_tools;
use awtui::tasks::journal::FileJournal;
use awtui::tasks::{PlannedTask, TaskBoard, TaskStore};
use chrono::Utc;
use serde_json::{Map, Value, json};

const SIZES: [usize; 3] = [100, 1_000, 10_000];
/// Parallel chains in the plan: how many tasks are ready at once.
const CHAINS: usize = 10;
const OWNER: &str = "worker";

/// `n` tasks in [`CHAINS`] chains.
fn plan(n: usize) -> Vec<PlannedTask> {
    (0..n)
        .map(|i| PlannedTask {
            name: format!("task-{i:05}"),
            description: format!("step {i} of the refactoring: one module, its tests and docs"),
            depends_on: if i >= CHAINS {
                vec![format!("task-{:05}", i - CHAINS)]
            } else {
                Vec::new()
            },
            ..PlannedTask::default()
        })
        .collect()
}

/// A board holding one workflow with an `n`-task plan and one registered
/// agent; returns (board, workflow id, agent id).
fn board(store: TaskStore, n: usize) -> (TaskBoard, String, String) {
    let mut store = store;
    let now = Utc::now();
    let wf = store
        .create_workflow("user", "bench", "prompt", "", None, 4, now)
        .unwrap();
    store.set_plan(&wf.id, "bench plan", &plan(n), now).unwrap();
    let agent = store
        .register(
            OWNER,
            OWNER,
            "custom",
            None,
            Vec::new(),
            None,
            Value::Null,
            now,
        )
        .unwrap();
    (TaskBoard::alone(store), wf.id, agent.id)
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => unreachable!("arguments are objects"),
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn us(d: Duration) -> String {
    format!("{:>9.1} µs", d.as_secs_f64() * 1e6)
}

/// Times `samples` calls of `measured`, each after an unmeasured `before`
/// and followed by an unmeasured `after`; a tenth as many warm-up rounds first.
fn time(
    samples: usize,
    mut before: impl FnMut() -> String,
    mut measured: impl FnMut(&str),
    mut after: impl FnMut(&str),
) -> Vec<Duration> {
    for _ in 0..samples / 10 {
        let x = before();
        measured(&x);
        after(&x);
    }
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        let x = before();
        let t = Instant::now();
        measured(&x);
        times.push(t.elapsed());
        after(&x);
    }
    times.sort();
    times
}

fn report(journal: &str, n: usize, call: &str, samples: usize, times: &[Duration]) {
    println!(
        "{journal:<6}  tasks {n:>6}  {call:<28}  p50 {}  p95 {}  ({samples} calls)",
        us(percentile(times, 0.50)),
        us(percentile(times, 0.95)),
    );
}

fn bench(journal: &str, board: &TaskBoard, wf: &str, agent: &str, n: usize, samples: usize) {
    let nothing = || String::new();
    let first_ready = || board.read(|s| s.ready(wf, false)[0].id.clone());
    let release = |id: &str| {
        board
            .change(|s| (s.release(id, "user", "bench", Utc::now()), Vec::new()))
            .unwrap();
    };

    let t = time(
        samples,
        nothing,
        |_| {
            let ready = board.read(|s| s.ready(wf, false).len());
            assert_eq!(ready, CHAINS);
        },
        |_| {},
    );
    report(journal, n, "TaskStore::ready", samples, &t);

    let t = time(
        samples,
        nothing,
        |_| {
            let v = task_tools::call(
                board,
                OWNER,
                "workflow_next_tasks",
                Some(args(json!({"workflow_id": wf}))),
            )
            .unwrap();
            assert_eq!(v["tasks"].as_array().map(Vec::len), Some(CHAINS));
        },
        |_| {},
    );
    report(journal, n, "workflow_next_tasks (tool)", samples, &t);

    let t = time(
        samples,
        first_ready,
        |id| {
            board
                .change(|s| (s.claim(OWNER, id, agent, Utc::now()), Vec::new()))
                .unwrap()
                .unwrap();
        },
        release,
    );
    report(journal, n, "TaskStore::claim", samples, &t);

    let t = time(
        samples,
        first_ready,
        |id| {
            let v = task_tools::call(
                board,
                OWNER,
                "task_claim",
                Some(args(json!({"task_id": id, "agent_id": agent}))),
            )
            .unwrap();
            assert_eq!(v["success"], true);
        },
        release,
    );
    report(journal, n, "task_claim (tool)", samples, &t);
}

fn main() {
    let mut samples = 2000;
    let mut argv = std::env::args().skip(1);
    while let Some(a) = argv.next() {
        if a == "--samples" {
            samples = argv.next().and_then(|n| n.parse().ok()).unwrap_or(samples);
        }
    }
    for n in SIZES {
        let (board, wf, agent) = board(TaskStore::in_memory(), n);
        bench("memory", &board, &wf, &agent, n, samples);
    }
    for n in SIZES {
        let dir = tempfile::tempdir().unwrap();
        let (journal, replay) = FileJournal::open(dir.path()).unwrap();
        let built = Instant::now();
        let (board, wf, agent) = board(TaskStore::open(Box::new(journal), replay), n);
        let setup = built.elapsed();
        bench("file", &board, &wf, &agent, n, (samples / 10).max(10));
        drop(board);
        let t = Instant::now();
        let (_, replay) = FileJournal::open(dir.path()).unwrap();
        let store = TaskStore::open(Box::new(awtui::tasks::journal::NoJournal), replay);
        assert_eq!(store.all_tasks().len(), n);
        println!(
            "file    tasks {n:>6}  plan set in {:.1} ms, journal reopened in {:.1} ms",
            setup.as_secs_f64() * 1e3,
            t.elapsed().as_secs_f64() * 1e3
        );
    }
}
