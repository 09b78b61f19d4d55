//! kill -9 in the middle of task work: every claim, status change and
//! checkpoint that returned is there after reopening the journal, in
//! order, and nothing torn is read back.
//!
//! The child is this test binary, re-run with an environment variable that
//! turns `tasks_crash_child` into a loop of plans, claims and completions.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::patience;
use patience::PATIENCE;

use awtui::tasks::journal::{FileJournal, NoJournal};
use awtui::tasks::{PlannedTask, TaskStore};
use chrono::Utc;
use serde_json::Value;

const CHILD_DIR: &str = "AWTUI_TASKS_CRASH_CHILD_DIR";

fn open(dir: &std::path::Path) -> TaskStore {
    let (journal, replay) = FileJournal::open(dir).unwrap();
    TaskStore::open(Box::new(journal), replay)
}

/// In the child: workflows of 5 tasks, each claimed, checkpointed with a
/// long summary and completed; prints every step once it returned.
#[test]
fn tasks_crash_child() {
    let Ok(dir) = std::env::var(CHILD_DIR) else {
        return;
    };
    let mut store = open(std::path::Path::new(&dir));
    let now = Utc::now;
    let me = store
        .register(
            "coder",
            "w",
            "custom",
            None,
            vec![],
            None,
            Value::Null,
            now(),
        )
        .unwrap()
        .id;
    let long = "y".repeat(3000);
    for round in 0.. {
        let wf = store
            .create_workflow("coder", &format!("wf{round}"), "prompt", "", None, 1, now())
            .unwrap()
            .id;
        let planned: Vec<PlannedTask> = (0..5)
            .map(|i| PlannedTask {
                name: format!("t{i}"),
                ..Default::default()
            })
            .collect();
        let tasks = store.set_plan(&wf, "", &planned, now()).unwrap();
        for t in tasks {
            store.claim("coder", &t.id, &me, now()).unwrap().unwrap();
            println!("CLAIMED {}", t.id);
            store
                .add_checkpoint(
                    "coder",
                    &t.id,
                    "progress",
                    &long,
                    Value::Null,
                    vec![],
                    now(),
                )
                .unwrap();
            store
                .update_status(
                    "coder",
                    &t.id,
                    "in_progress",
                    None,
                    Value::Null,
                    None,
                    now(),
                )
                .unwrap();
            store
                .update_status(
                    "coder",
                    &t.id,
                    "completed",
                    Some("ok".into()),
                    Value::Null,
                    None,
                    now(),
                )
                .unwrap();
            println!("COMPLETED {}", t.id);
        }
    }
}

#[test]
fn kill_9_loses_no_acknowledged_task_change() {
    let dir = tempfile::tempdir().unwrap();
    let mut claimed = Vec::new();
    let mut completed = Vec::new();
    for round in 0..3 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                &crate::test_path(module_path!(), "tasks_crash_child"),
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_DIR, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let wanted = 10 + round * 7;
        let deadline = Instant::now() + PATIENCE;
        let mut seen = 0;
        let record = |line: &str, claimed: &mut Vec<String>, completed: &mut Vec<String>| {
            if let Some(id) = line.strip_prefix("CLAIMED ") {
                claimed.push(id.to_string());
            } else if let Some(id) = line.strip_prefix("COMPLETED ") {
                completed.push(id.to_string());
            }
        };
        while seen < wanted && Instant::now() < deadline {
            let Some(Ok(line)) = lines.next() else { break };
            record(&line, &mut claimed, &mut completed);
            if line.starts_with("COMPLETED") {
                seen += 1;
            }
        }
        child.kill().unwrap(); // SIGKILL, mid-loop
        child.wait().unwrap();
        for line in lines.map_while(Result::ok) {
            record(&line, &mut claimed, &mut completed);
        }
        assert!(seen >= wanted, "the child stopped early");

        let (_, replay) = FileJournal::open(dir.path()).unwrap();
        let store = TaskStore::open(Box::new(NoJournal), replay);
        for id in &claimed {
            let t = store
                .task(id)
                .unwrap_or_else(|| panic!("claimed {id} is gone"));
            assert!(t.claimed_by.is_some() || t.status.is_done(), "{t:?}");
        }
        for id in &completed {
            let t = store.task(id).unwrap();
            assert_eq!(t.status.as_str(), "completed", "{t:?}");
            let cps = store.checkpoints(id);
            assert!(
                cps.iter()
                    .all(|c| c.summary == "y".repeat(3000) || c.summary == "ok")
            );
        }
        // Each workflow's tasks are whole: a plan is written in one line.
        for w in store.workflows() {
            let n = store.tasks_of(&w.id).len();
            assert!(n == 0 || n == 5, "{} has {n} tasks", w.id);
        }
    }
}
