//! A turn's commit lands only on the agent's branch in the agent's
//! worktree. An agent that removes its worktree's `.git`, checks out the
//! user's branch there, or switches to a branch of its own gets its turn
//! left uncommitted with the reason, and the user's checkout, index and
//! branches are untouched (they used to receive the agent's turn,
//! sweeping in the user's uncommitted edits).

mod cli_support;

use std::path::Path;

use awtui::workspace::commit::commit_turn;
use awtui::workspace::{AgentWorkspace, WorkspaceError};
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
