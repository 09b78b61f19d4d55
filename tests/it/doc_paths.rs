//! Documents reach only documents: links and hard links already sitting in
//! the document folder (put there by an agent with a shell, or a careless
//! script) cannot make a document operation read, overwrite or delete
//! awtui's own files or anything outside the folder, and a folder swapped
//! for a link while writes go on cannot place a file outside.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use awtui::context::{ContextError, ContextStore, FileStore, StoreLayout};

use crate::patience;
use patience::PATIENCE;

fn layout() -> StoreLayout {
    StoreLayout {
        channel: "channel.md".into(),
        document: "notes.md".into(),
        documents: vec![],
        agents: vec!["coder".into()],
    }
}

struct Fixture {
    _tmp: tempfile::TempDir,
    /// The instance (and document) folder.
    dir: PathBuf,
    /// A folder beside it that documents must never reach.
    outside: PathBuf,
    store: FileStore,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("inst");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "outside secret").unwrap();
    let mut store = FileStore::open(&dir, &layout()).unwrap();
    store.append("coder", "hello").unwrap();
    store.write_document(None, "notes").unwrap();
    std::fs::create_dir_all(dir.join("tokens")).unwrap();
    std::fs::write(dir.join("tokens/user"), "user-token").unwrap();
    std::fs::write(dir.join("state.json"), r#"{"version":1,"cursors":{}}"#).unwrap();
    Fixture {
        _tmp: tmp,
        dir,
        outside,
        store,
    }
}

fn read_all(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// Every operation on `path` is refused, naming it; returns how many were.
fn all_refused(s: &mut FileStore, path: &str) -> usize {
    let results: Vec<(&str, Result<(), ContextError>)> = vec![
        ("read", s.read_document(Some(path)).map(drop)),
        ("write", s.write_document(Some(path), "pwned")),
        ("append", s.append_document(Some(path), "pwned")),
        ("create", s.create_document(path, "pwned")),
        ("delete", s.delete_document(path)),
    ];
    for (op, r) in &results {
        let err = r.as_ref().expect_err(&format!("{op} {path} must fail"));
        assert!(
            err.to_string().contains(&format!("'{path}'")),
            "{op} {path}: {err}"
        );
        // "does not exist" would mean the link was followed to nothing.
        assert!(
            !matches!(err, ContextError::DocumentNotFound { .. }) || *op == "delete",
            "{op} {path}: {err}"
        );
    }
    results.len()
}

fn assert_untouched(f: &Fixture) {
    assert_eq!(read_all(&f.dir.join("tokens/user")), "user-token");
    assert_eq!(
        read_all(&f.dir.join("state.json")),
        r#"{"version":1,"cursors":{}}"#
    );
    assert!(read_all(&f.dir.join("channel.jsonl")).contains("hello"));
    assert_eq!(read_all(&f.outside.join("secret.txt")), "outside secret");
    assert_eq!(
        std::fs::read_dir(&f.outside).unwrap().count(),
        1,
        "nothing new outside"
    );
}

#[test]
fn a_link_to_the_parent_folder_reaches_nothing() {
    let mut f = fixture();
    std::fs::create_dir_all(f.dir.join("sub")).unwrap();
    symlink("..", f.dir.join("sub/up")).unwrap();
    let mut refused = 0;
    for path in [
        "sub/up/state.json",
        "sub/up/notes.md",
        "sub/up/tokens/user",
        "sub/up/inst/notes.md",
        "sub/up/outside/secret.txt",
        "sub/up/new.md",
    ] {
        refused += all_refused(&mut f.store, path);
    }
    let err = f
        .store
        .read_document(Some("sub/up/notes.md"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("'sub/up' is a link, and links are not followed"),
        "{err}"
    );
    assert_untouched(&f);
    assert!(!f.dir.join("new.md").exists());
    assert_eq!(read_all(&f.dir.join("notes.md")), "notes");
    println!("refused {refused} attempts through sub/up");
}

#[test]
fn a_link_to_a_token_or_the_channel_is_not_a_document() {
    let mut f = fixture();
    symlink("tokens/user", f.dir.join("t.md")).unwrap();
    symlink("channel.jsonl", f.dir.join("c.md")).unwrap();
    symlink(f.dir.join("state.json"), f.dir.join("s.md")).unwrap();
    symlink(f.outside.join("secret.txt"), f.dir.join("o.md")).unwrap();
    symlink("/dev/zero", f.dir.join("zero.md")).unwrap();
    let mut refused = 0;
    for path in ["t.md", "c.md", "s.md", "o.md", "zero.md"] {
        refused += all_refused(&mut f.store, path);
        let err = f.store.read_document(Some(path)).unwrap_err().to_string();
        assert!(err.contains("it is a link"), "{err}");
    }
    // Links are left alone (deleting them is refused too) and never listed.
    assert!(
        std::fs::symlink_metadata(f.dir.join("c.md"))
            .unwrap()
            .is_symlink()
    );
    assert_eq!(f.store.list_documents().unwrap(), vec!["notes.md"]);
    assert_untouched(&f);
    // The instance still opens: state.json and the channel were not touched.
    drop(f.store);
    let reopened = FileStore::open(&f.dir, &layout()).unwrap();
    assert_eq!(reopened.len(), 1);
    println!("refused {refused} attempts through file links");
}

#[test]
fn hard_linked_files_are_neither_read_nor_written() {
    let mut f = fixture();
    std::fs::hard_link(f.outside.join("secret.txt"), f.dir.join("h.md")).unwrap();
    std::fs::hard_link(f.dir.join("state.json"), f.dir.join("st.md")).unwrap();
    std::fs::create_dir_all(f.dir.join("deep")).unwrap();
    std::fs::hard_link(f.dir.join("tokens/user"), f.dir.join("deep/u.md")).unwrap();
    let mut refused = 0;
    for path in ["h.md", "st.md", "deep/u.md"] {
        refused += all_refused(&mut f.store, path);
        let err = f.store.read_document(Some(path)).unwrap_err().to_string();
        assert!(err.contains("other hard links"), "{err}");
    }
    assert_eq!(f.store.list_documents().unwrap(), vec!["notes.md"]);
    assert_untouched(&f);
    println!("refused {refused} attempts through hard links");
}

#[test]
fn special_files_are_refused_at_once_and_sizes_are_capped() {
    let mut f = fixture();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        f.dir.join("pipe.md"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    // Nobody writes to the FIFO: a blocking open would hang this test.
    let err = f.store.read_document(Some("pipe.md")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "document path 'pipe.md' refused: it is a FIFO, not a document"
    );
    assert!(f.store.write_document(Some("pipe.md"), "x").is_err());
    assert_eq!(f.store.list_documents().unwrap(), vec!["notes.md"]);

    let big = "x".repeat(4 * 1024 * 1024 + 1);
    let err = f.store.write_document(Some("big.md"), &big).unwrap_err();
    assert_eq!(
        err.to_string(),
        "document 'big.md' is larger than the 4 MiB limit"
    );
    assert!(!f.dir.join("big.md").exists());
    std::fs::write(f.dir.join("big.md"), &big).unwrap();
    let err = f.store.read_document(Some("big.md")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "document 'big.md' is larger than the 4 MiB limit"
    );
    let fits = "y".repeat(4 * 1024 * 1024);
    f.store.write_document(Some("big.md"), &fits).unwrap();
    assert_eq!(f.store.read_document(Some("big.md")).unwrap(), fits);
}

#[test]
fn a_folder_swapped_for_a_link_during_writes_places_nothing_outside() {
    let f = fixture();
    let mut store = f.store;
    std::fs::create_dir_all(f.dir.join("sub")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (dir, outside, stop) = (f.dir.clone(), f.outside.clone(), stop.clone());
        std::thread::spawn(move || {
            let (sub, real) = (dir.join("sub"), dir.join("sub-real"));
            let mut swaps = 0u32;
            while !stop.load(Ordering::Relaxed) {
                // Put a link where the folder was, then the folder back.
                if std::fs::rename(&sub, &real).is_ok() {
                    if symlink(&outside, &sub).is_ok() {
                        swaps += 1;
                        // Keep the link up for a while, so writes meet it.
                        for _ in 0..50 {
                            std::thread::yield_now();
                        }
                        let _ = std::fs::remove_file(&sub);
                    }
                    if std::fs::rename(&real, &sub).is_err() {
                        // The writer made a new `sub` meanwhile: merge it
                        // back so swapping goes on.
                        if let Ok(entries) = std::fs::read_dir(&sub) {
                            for e in entries.flatten() {
                                let _ = std::fs::rename(e.path(), real.join(e.file_name()));
                            }
                        }
                        let _ = std::fs::remove_dir(&sub);
                        let _ = std::fs::rename(&real, &sub);
                    }
                }
                // And the folder up for as long.
                for _ in 0..50 {
                    std::thread::yield_now();
                }
            }
            swaps
        })
    };
    // 500 writes that land, each retried while refused.
    // (A generous limit only guards against a hang, never a slow machine.)
    let deadline = std::time::Instant::now() + PATIENCE;
    let (mut ok, mut refused, mut other) = (0, 0, Vec::new());
    while ok < 500 && std::time::Instant::now() < deadline {
        match store.write_document(Some(&format!("sub/d{ok}.md")), "x") {
            Ok(()) => ok += 1,
            Err(ContextError::PathRefused { .. }) => {
                refused += 1;
                // Let the swapper put the folder back.
                std::thread::yield_now();
            }
            Err(e) => other.push(e.to_string()),
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    let outside: Vec<_> = std::fs::read_dir(&f.outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(outside, vec!["secret.txt"], "files were placed outside");
    assert!(other.is_empty(), "only refusals, no failures: {other:?}");
    assert_eq!(ok, 500, "the folder was a link for {refused} attempts");
    // (Hidden temp files the swapper moved mid-write do not count.)
    let inside = ["sub", "sub-real"]
        .iter()
        .filter_map(|d| std::fs::read_dir(f.dir.join(d)).ok())
        .flat_map(|r| r.flatten())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .count();
    assert_eq!(inside, 500, "every write landed inside");
    println!("500 writes racing {swaps} swaps: all inside, {refused} attempts refused, 0 outside");
}

/// The headings of a markdown text as GitHub makes their anchors.
fn anchors(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            l.trim_start_matches('#')
                .strip_prefix(' ')
                .filter(|_| l.starts_with('#'))
        })
        .map(|h| {
            h.trim()
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
                .map(|c| if c == ' ' { '-' } else { c })
                .collect()
        })
        .collect()
}

/// Issue 36: the README stays a front page (at most 650 lines; details
/// live in docs/), and every link it has into docs/ reaches a page that
/// exists, at a heading that exists.
#[test]
fn the_readme_is_short_and_its_docs_links_resolve() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 650,
        "README.md has {lines} lines; move details to docs/"
    );
    let mut checked = 0;
    for (i, _) in readme.match_indices("](docs/") {
        let link = &readme[i + 2..];
        let link = &link[..link.find(')').unwrap()];
        let (file, anchor) = link.split_once('#').unwrap_or((link, ""));
        let page = std::fs::read_to_string(root.join(file))
            .unwrap_or_else(|e| panic!("README links to {file}: {e}"));
        if !anchor.is_empty() && file.ends_with(".md") {
            assert!(
                anchors(&page).iter().any(|a| a == anchor),
                "README links to {link}: no such heading in {file}"
            );
        }
        checked += 1;
    }
    assert!(checked > 10, "only {checked} docs/ links found");
}
