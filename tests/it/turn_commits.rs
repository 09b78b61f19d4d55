//! A turn's commit lands only on the agent's branch in the agent's
//! worktree. An agent that removes its worktree's `.git`, checks out the
//! user's branch there, or switches to a branch of its own gets its turn
//! left uncommitted with the reason, and the user's checkout, index and
//! branches are untouched (they used to receive the agent's turn,
//! sweeping in the user's uncommitted edits).

use crate::cli_support;

use std::path::Path;

use awtui::workspace::commit::{after_turn, commit_turn};
use awtui::workspace::{AgentWorkspace, Repo, WorkspaceError, Workspaces};
use cli_support::{git, init_repo};

/// The user's repository with an uncommitted edit, and an agent's worktree
/// on its own branch, as awtui makes them.
fn setup(tmp: &Path) -> AgentWorkspace {
    let repo = tmp.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    init_repo(&repo, &[("app.txt", "v1\n")]);
    let base = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    let root = tmp.join("wt");
    git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "awtui/i/a",
            root.to_str().unwrap(),
            &base,
        ],
    );
    // The user's work in progress in their own checkout.
    std::fs::write(repo.join("app.txt"), "user's unsaved idea\n").unwrap();
    AgentWorkspace {
        agent: "a".into(),
        branch: "awtui/i/a".into(),
        repo: repo.clone(),
        workdir: root.clone(),
        root,
        base,
    }
}

/// What the user's checkout looks like: HEAD, branches, staged changes.
fn user_state(repo: &Path) -> (String, String, String) {
    (
        git(repo, &["rev-parse", "HEAD"]),
        git(
            repo,
            &[
                "for-each-ref",
                "--format=%(refname) %(objectname)",
                "refs/heads",
            ],
        ),
        git(repo, &["diff", "--cached", "--name-only"]),
    )
}

fn assert_refused(
    result: Result<Option<awtui::workspace::commit::Step>, WorkspaceError>,
    why: &str,
) {
    match result {
        Err(e @ WorkspaceError::NotOwnWorktree { .. }) => {
            let text = e.to_string();
            assert!(text.contains(why), "{text}");
            assert!(text.contains("nothing was staged or committed"), "{text}");
        }
        other => panic!("expected a refusal ({why}), got {other:?}"),
    }
}

#[test]
fn a_normal_turn_is_committed_on_the_agents_branch() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = setup(tmp.path());
    std::fs::write(ws.root.join("new.txt"), "agent work\n").unwrap();
    let step = commit_turn(&ws, &[3]).unwrap().expect("a step");
    assert_eq!(step.turn, 1);
    assert_eq!(
        git(&ws.root, &["rev-parse", "awtui/i/a"]).trim(),
        step.commit
    );
}

#[test]
fn a_removed_git_link_leaves_the_users_checkout_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = setup(tmp.path());
    let repo = tmp.path().join("repo");
    // The worktree inside the user's repository, as awtui places it
    // (.workflow/.worktrees/…): without its .git link, git would find the
    // user's repository above it.
    let inner = repo.join(".workflow/.worktrees/i/a");
    std::fs::create_dir_all(inner.parent().unwrap()).unwrap();
    git(
        &repo,
        &[
            "worktree",
            "move",
            ws.root.to_str().unwrap(),
            inner.to_str().unwrap(),
        ],
    );
    let ws = AgentWorkspace {
        root: inner.clone(),
        workdir: inner.clone(),
        ..ws
    };
    std::fs::write(inner.join("new.txt"), "agent work\n").unwrap();
    std::fs::remove_file(inner.join(".git")).unwrap();
    let before = user_state(&repo);
    assert_refused(commit_turn(&ws, &[1]), ".git link is gone");
    assert_eq!(
        user_state(&repo),
        before,
        "the user's checkout is untouched"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("app.txt")).unwrap(),
        "user's unsaved idea\n"
    );
}

#[test]
fn checking_out_the_users_branch_in_the_worktree_is_not_committed_on_it() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = setup(tmp.path());
    let repo = tmp.path().join("repo");
    git(
        &ws.root,
        &["checkout", "-q", "--ignore-other-worktrees", "main"],
    );
    std::fs::write(ws.root.join("new.txt"), "agent work\n").unwrap();
    let before = user_state(&repo);
    assert_refused(commit_turn(&ws, &[1]), "it is on main");
    assert_eq!(user_state(&repo), before, "main did not move");
}

#[test]
fn a_branch_of_the_agents_own_is_reported_not_committed() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = setup(tmp.path());
    git(&ws.root, &["switch", "-q", "-c", "side"]);
    std::fs::write(ws.root.join("new.txt"), "agent work\n").unwrap();
    let side = git(&ws.root, &["rev-parse", "side"]);
    assert_refused(commit_turn(&ws, &[1]), "it is on side");
    assert_eq!(git(&ws.root, &["rev-parse", "side"]), side);
    assert!(
        git(&ws.root, &["diff", "--cached", "--name-only"]).is_empty(),
        "nothing staged"
    );
}

/// [`after_turn`] for the one workspace `ws`: the repairs and the commit
/// the driver makes at the end of a turn, and its notice.
fn end_turn(ws: &AgentWorkspace) -> Option<String> {
    let mut all = Workspaces::new();
    all.insert(ws.agent.clone(), ws.clone());
    after_turn(&all, &ws.agent, &[1])
}

/// The worktree moved inside the user's repository, where awtui puts it
/// (`.workflow/.worktrees/…`): without its `.git` link, git would find the
/// user's repository above it.
fn inside_the_users_repo(tmp: &Path, ws: AgentWorkspace) -> AgentWorkspace {
    let repo = tmp.join("repo");
    let inner = repo.join(".workflow/.worktrees/i/a");
    std::fs::create_dir_all(inner.parent().unwrap()).unwrap();
    std::fs::write(repo.join(".git/info/exclude"), ".workflow/\n").unwrap();
    git(
        &repo,
        &[
            "worktree",
            "move",
            ws.root.to_str().unwrap(),
            inner.to_str().unwrap(),
        ],
    );
    AgentWorkspace {
        root: inner.clone(),
        workdir: inner,
        ..ws
    }
}

/// `rm .git` in the worktree mid-turn: at the turn's end the link is
/// written again and the turn lands on the agent's branch, the user's
/// checkout untouched.
#[test]
fn a_removed_git_link_is_relinked_and_the_turn_lands_on_the_agents_branch() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = inside_the_users_repo(tmp.path(), setup(tmp.path()));
    let repo = tmp.path().join("repo");
    std::fs::write(ws.root.join("new.txt"), "agent work\n").unwrap();
    std::fs::remove_file(ws.root.join(".git")).unwrap();
    let before = user_state(&repo);
    let notice = end_turn(&ws).expect("a notice");
    assert!(
        notice.contains("had lost its .git link; it is linked again"),
        "{notice}"
    );
    assert_eq!(
        user_state(&repo).2,
        before.2,
        "nothing staged in the user's index"
    );
    assert_eq!(
        user_state(&repo).0,
        before.0,
        "the user's HEAD did not move"
    );
    assert_eq!(
        git(&ws.root, &["show", "--name-only", "--format=", "awtui/i/a"]),
        "new.txt\n",
        "the turn is the agent's commit"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("app.txt")).unwrap(),
        "user's unsaved idea\n"
    );
}

/// `git switch -c side` in the worktree, with work left uncommitted and
/// a commit on side: the work is brought back to the agent's branch, which
/// diff and merge see; side is left as it was.
#[test]
fn a_switch_to_a_branch_of_its_own_is_brought_back() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = setup(tmp.path());
    git(&ws.root, &["switch", "-q", "-c", "side"]);
    std::fs::write(ws.root.join("one.txt"), "1\n").unwrap();
    git(&ws.root, &["add", "one.txt"]);
    git(&ws.root, &["commit", "-qm", "agent on side"]);
    let side = git(&ws.root, &["rev-parse", "side"]);
    std::fs::write(ws.root.join("two.txt"), "2\n").unwrap();
    let notice = end_turn(&ws).expect("a notice");
    assert!(notice.contains("switched its worktree to side"), "{notice}");
    assert_eq!(
        git(&ws.root, &["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/awtui/i/a"
    );
    assert_eq!(
        git(&ws.root, &["rev-parse", "side"]),
        side,
        "side as it was"
    );
    let files = git(&ws.root, &["diff", "--name-only", &ws.base, "awtui/i/a"]);
    assert_eq!(
        files, "one.txt\ntwo.txt\n",
        "all the work is on the agent's branch"
    );
    assert_eq!(git(&ws.root, &["status", "--porcelain"]), "");
}

/// `git checkout --ignore-other-worktrees main` (the user's checked-out
/// branch) with the agent's edits left: HEAD goes back to the agent's
/// branch (same commit), the edits are its turn, main never moves.
#[test]
fn a_checkout_of_the_users_branch_at_the_same_commit_is_brought_back() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = setup(tmp.path());
    let repo = tmp.path().join("repo");
    git(
        &ws.root,
        &["checkout", "-q", "--ignore-other-worktrees", "main"],
    );
    std::fs::write(ws.root.join("new.txt"), "agent work\n").unwrap();
    let before = user_state(&repo);
    let notice = end_turn(&ws).expect("a notice");
    assert!(notice.contains("back on its branch awtui/i/a"), "{notice}");
    let after = user_state(&repo);
    assert_eq!(
        (&after.0, &after.2),
        (&before.0, &before.2),
        "main did not move"
    );
    assert!(
        after
            .1
            .contains(&format!("refs/heads/main {}", before.0.trim())),
        "{after:?}"
    );
    assert_eq!(
        git(&ws.root, &["show", "--name-only", "--format=", "awtui/i/a"]),
        "new.txt\n"
    );
}

/// The agent committed on the user's checked-out main itself: awtui can
/// bring nothing back without taking the user's branch along, so it
/// commits nothing, moves nothing and says how to decide.
#[test]
fn work_on_the_users_branch_is_left_for_the_person() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = setup(tmp.path());
    let repo = tmp.path().join("repo");
    git(
        &ws.root,
        &["checkout", "-q", "--ignore-other-worktrees", "main"],
    );
    std::fs::write(ws.root.join("x.txt"), "x\n").unwrap();
    git(&ws.root, &["add", "x.txt"]);
    git(&ws.root, &["commit", "-qm", "agent commits on main"]);
    std::fs::write(ws.root.join("y.txt"), "y\n").unwrap();
    let before = user_state(&repo);
    let own = git(&repo, &["rev-parse", "awtui/i/a"]);
    let notice = end_turn(&ws).expect("a notice");
    assert!(
        notice.contains("is on main, not on its branch awtui/i/a")
            && notice.contains("until you decide"),
        "{notice}"
    );
    assert_eq!(
        user_state(&repo),
        before,
        "awtui moved nothing of the user's"
    );
    assert_eq!(git(&repo, &["rev-parse", "awtui/i/a"]), own);
    assert!(
        git(&ws.root, &["status", "--porcelain"]).contains("y.txt"),
        "the agent's edit stays where it is"
    );
}

/// Reopening: a worktree folder deleted by hand is checked out again from
/// the branch (its committed turns there); one whose `.git` became a
/// repository of its own is moved aside, kept, and checked out again.
#[test]
fn reopening_recreates_a_deleted_or_broken_worktree_from_its_branch() {
    let tmp = tempfile::tempdir().unwrap();
    let repo_dir = tmp.path().join("repo");
    std::fs::create_dir_all(&repo_dir).unwrap();
    init_repo(&repo_dir, &[("app.txt", "v1\n")]);
    let repo = Repo::find(&repo_dir).unwrap();
    let state = repo_dir.join(".workflow/i");
    let (ws, notes) = repo.ensure(&repo_dir, &state, "i", "a", None).unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    std::fs::write(ws.root.join("turn1.txt"), "kept\n").unwrap();
    commit_turn(&ws, &[1]).unwrap().expect("a step");

    std::fs::remove_dir_all(&ws.root).unwrap();
    let (back, notes) = repo.ensure(&repo_dir, &state, "i", "a", None).unwrap();
    assert_eq!(back.root, ws.root);
    assert!(
        notes[0].contains("was gone; checked out again from its branch awtui/i/a"),
        "{notes:?}"
    );
    assert_eq!(
        std::fs::read_to_string(back.root.join("turn1.txt")).unwrap(),
        "kept\n"
    );
    assert_eq!(
        git(&back.root, &["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/awtui/i/a"
    );

    // rm -rf .git && git init: a repository of its own where the worktree was.
    std::fs::write(back.root.join("unsaved.txt"), "agent's\n").unwrap();
    std::fs::remove_file(back.root.join(".git")).unwrap();
    git(&back.root, &["init", "-q"]);
    let (again, notes) = repo.ensure(&repo_dir, &state, "i", "a", None).unwrap();
    assert!(
        notes[0].contains("was broken (its .git is a folder, not a worktree link)"),
        "{notes:?}"
    );
    let aside = std::fs::read_dir(again.root.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("a.broken-")
        })
        .expect("the broken folder is kept");
    assert_eq!(
        std::fs::read_to_string(aside.join("unsaved.txt")).unwrap(),
        "agent's\n"
    );
    assert_eq!(
        std::fs::read_to_string(again.root.join("turn1.txt")).unwrap(),
        "kept\n"
    );
    assert!(!again.root.join("unsaved.txt").exists());
    assert!(
        std::fs::symlink_metadata(again.root.join(".git"))
            .unwrap()
            .is_file()
    );
    assert_eq!(
        git(&repo_dir, &["status", "--porcelain"]),
        "",
        "the user's checkout is clean"
    );
}

/// Committing a turn is git's work, done off the engine's loop: while a
/// worktree agent's turn commit is stuck in git (a clean filter that
/// waits, as git-lfs does on a dead network), the engine still answers a
/// command that needs it (`awtui approve --json` asks it for a snapshot),
/// and the commit lands once git goes on.
#[test]
fn a_slow_turn_commit_does_not_hold_up_the_engine() {
    let mut w = cli_support::World::new();
    let release = w.dir.join("RELEASE");
    let filtering = w.dir.join("FILTERING");
    init_repo(
        &w.dir,
        &[
            (".gitattributes", "*.slow filter=stall\n"),
            (".gitignore", ".workflow/\nRELEASE\nFILTERING\n"),
            (
                "a.sh",
                "#!/bin/sh\ncat >/dev/null\necho data > out.slow\necho wrote it\n",
            ),
            (
                "slow.yaml",
                "name: slow\nagents:\n  a:\n    command: ./a.sh\n    workspace: worktree\nkickoff: \"@a write\"\n",
            ),
        ],
    );
    // The person's own filter (global config): awtui's git switches off
    // drivers the repository's config defines. It also gives up once the
    // test's folder is gone (a later git call would wait forever).
    w.global_git_config(&format!(
        "[filter \"stall\"]\n\tclean = \"sh -c 'touch {}; while [ ! -e {} ] && [ -d {} ]; do sleep 0.05; done; cat'\"\n\tsmudge = cat\n",
        filtering.display(),
        release.display(),
        w.dir.display()
    ));
    w.start_background("slow.yaml", "s");
    cli_support::wait_for("the turn's commit to reach git", || {
        filtering.exists().then_some(())
    });
    // The engine answers while git is stuck.
    let (tx, rx) = std::sync::mpsc::channel();
    let mut ask = w.cmd(&["approve", "--instance", "s", "--json"]);
    std::thread::spawn(move || {
        let _ = tx.send(ask.output());
    });
    let answered = rx
        .recv_timeout(cli_support::PATIENCE)
        .expect("the engine did not answer while a commit was stuck")
        .unwrap();
    assert!(
        answered.status.success(),
        "{}",
        String::from_utf8_lossy(&answered.stderr)
    );
    assert!(!release.exists());
    std::fs::write(&release, "").unwrap();
    let committed = cli_support::wait_for("the turn's commit", || {
        let log = git(&w.dir, &["log", "--format=%s", "awtui/s/a"]);
        log.contains("awtui: a turn 1").then_some(log)
    });
    assert!(committed.starts_with("awtui: a turn 1"), "{committed}");
    assert_eq!(w.run(&["stop", "@s"]).code, 0);
}
