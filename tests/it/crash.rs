//! Kill -9 in the middle of appends: reopening yields exactly the entries whose
//! append had returned (plus at most the one in flight), in order, with no
//! duplicate and no torn entry.
//!
//! The child is this same test binary, re-run with an environment variable
//! that turns `crash_child` into an append loop.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::patience;
use patience::PATIENCE;

use awtui::context::{ContextStore, FileStore, StoreLayout};

const CHILD_DIR: &str = "AWTUI_CRASH_CHILD_DIR";

fn layout() -> StoreLayout {
    StoreLayout {
        channel: "channel.md".into(),
        document: "notes.md".into(),
        documents: vec![],
        agents: vec!["coder".into()],
    }
}

/// In the child: append forever, printing each id once append returned.
#[test]
fn crash_child() {
    let Ok(dir) = std::env::var(CHILD_DIR) else {
        return;
    };
    let mut store = FileStore::open(std::path::Path::new(&dir), &layout()).unwrap();
    // A long body makes a torn write likely when the kill lands mid-write.
    let body = "x".repeat(3000);
    for i in 0.. {
        let e = store
            .append("coder", &format!("@coder {i} {body}"))
            .unwrap();
        println!("APPENDED {}", e.id);
    }
}

#[test]
fn kill_9_loses_no_returned_append_and_tears_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..3 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &crate::test_path(module_path!(), "crash_child")])
            .args(["--nocapture", "--test-threads=1"])
            .env(CHILD_DIR, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let mut returned = Vec::new();
        let deadline = Instant::now() + PATIENCE;
        // Let it run for a varying number of appends, then kill it mid-loop.
        let wanted = 40 + round * 37;
        while returned.len() < wanted && Instant::now() < deadline {
            let Some(Ok(line)) = lines.next() else { break };
            if let Some(id) = line.strip_prefix("APPENDED ") {
                returned.push(id.parse::<u64>().unwrap());
            }
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // Whatever else the child printed before dying also returned.
        for line in lines.map_while(Result::ok) {
            if let Some(id) = line.strip_prefix("APPENDED ") {
                returned.push(id.parse::<u64>().unwrap());
            }
        }
        assert!(
            returned.len() >= wanted,
            "child stopped early: {returned:?}"
        );

        let store = FileStore::open(dir.path(), &layout()).unwrap();
        let ids: Vec<u64> = store
            .read(None, None)
            .unwrap()
            .iter()
            .map(|e| e.id)
            .collect();
        let expected_prefix: Vec<u64> = (1..=ids.len() as u64).collect();
        assert_eq!(
            ids, expected_prefix,
            "a prefix of consecutive ids, no duplicates"
        );
        let last_returned = *returned.last().unwrap();
        assert!(
            ids.len() as u64 >= last_returned,
            "every returned append survived"
        );
        assert!(
            ids.len() as u64 <= last_returned + 1,
            "at most the in-flight append extra"
        );
        for e in store.read(None, None).unwrap() {
            assert!(
                e.message.ends_with(&"x".repeat(3000)),
                "entry #{} is whole",
                e.id
            );
        }
    }
}

const DOC_CHILD_DIR: &str = "AWTUI_DOC_CRASH_CHILD_DIR";

/// The content of the `i`th write: one letter, long enough that a kill
/// often lands mid-write.
fn doc_content(i: u64) -> String {
    let letter = char::from(b'a' + (i % 26) as u8);
    letter.to_string().repeat(200 * 1024)
}

/// In the child: rewrite one document forever, printing each write's
/// number once it returned.
#[test]
fn doc_crash_child() {
    let Ok(dir) = std::env::var(DOC_CHILD_DIR) else {
        return;
    };
    let mut store = FileStore::open(std::path::Path::new(&dir), &layout()).unwrap();
    let start: u64 = store
        .read_document(Some("big.md"))
        .ok()
        .and_then(|t| t.bytes().next())
        .map_or(0, |b| u64::from(b - b'a') + 1);
    for i in start.. {
        store
            .write_document(Some("big.md"), &doc_content(i))
            .unwrap();
        println!("WROTE {i}");
    }
}

#[test]
fn kill_9_mid_document_write_leaves_the_old_or_the_new_document_never_a_mix() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..4 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                &crate::test_path(module_path!(), "doc_crash_child"),
                "--nocapture",
                "--test-threads=1",
            ])
            .env(DOC_CHILD_DIR, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let mut returned = Vec::new();
        let deadline = Instant::now() + PATIENCE;
        let wanted = 5 + round * 7;
        while returned.len() < wanted && Instant::now() < deadline {
            let Some(Ok(line)) = lines.next() else { break };
            if let Some(i) = line.strip_prefix("WROTE ") {
                returned.push(i.parse::<u64>().unwrap());
            }
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        for line in lines.map_while(Result::ok) {
            if let Some(i) = line.strip_prefix("WROTE ") {
                returned.push(i.parse::<u64>().unwrap());
            }
        }
        assert!(
            returned.len() >= wanted,
            "child stopped early: {returned:?}"
        );
        let last = *returned.last().unwrap();

        let store = FileStore::open(dir.path(), &layout()).unwrap();
        let text = store.read_document(Some("big.md")).unwrap();
        let last_text = doc_content(last);
        let in_flight = doc_content(last + 1);
        assert!(
            text == last_text || text == in_flight,
            "round {round}: the document is neither write #{last} nor #{} whole ({} bytes, starts {:?})",
            last + 1,
            text.len(),
            &text[..text.len().min(8)]
        );
        // Nothing is left for the next open to replay over it.
        assert_eq!(
            std::fs::metadata(dir.path().join(".documents.journal"))
                .unwrap()
                .len(),
            0
        );
        drop(store);
    }
}
