//! Take it or leave it: merging an agent's branch into the branch it was
//! based on, reverting one of its turns, discarding its workspace, and
//! cleaning up what is merged or discarded.
//!
//! Everything is worked out from git alone (the branch, its recorded base
//! and target, `git worktree list`), so these work whether or not the
//! instance runs. Nothing is ever half done in a checkout: the new commit is
//! built with `git merge-tree` (no index, no working files), then one ref
//! moves — atomically with `update-ref <new> <old>` when the branch is not
//! checked out, or with `git merge --ff-only` in a clean checkout that has it.
//! A conflict therefore changes nothing anywhere.

use std::path::PathBuf;

use super::commit::steps;
use super::diff::{Located, step_range};
use super::{Git, Repo, WorkspaceError, branch_name, parse_worktree_list};

/// The config key naming the branch a workspace branch merges into.
fn into_key(branch: &str) -> String {
    format!("branch.{branch}.awtuiinto")
}

/// The config key holding a workspace's status (`discarded`).
fn status_key(branch: &str) -> String {
    format!("branch.{branch}.awtuistatus")
}

/// The status `awtui discard` records.
pub const DISCARDED: &str = "discarded";

/// How an agent's branch gets into its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeKind {
    /// Every commit is there already.
    UpToDate,
    /// The target moves forward to the branch.
    FastForward,
    /// A merge commit with the target and the branch as parents.
    MergeCommit,
}

/// Chooses how to merge from the ancestry of the two tips (pure).
pub fn plan_merge(branch_in_target: bool, target_in_branch: bool, no_ff: bool) -> MergeKind {
    if branch_in_target {
        MergeKind::UpToDate
    } else if target_in_branch && !no_ff {
        MergeKind::FastForward
    } else {
        MergeKind::MergeCommit
    }
}

/// Splits `git merge-tree --write-tree --name-only --no-messages` output
/// into the tree and the conflicting files (pure).
pub fn parse_merge_tree(out: &str) -> (String, Vec<String>) {
    let mut lines = out.lines();
    let tree = lines.next().unwrap_or_default().trim().to_string();
    let mut files: Vec<String> = lines
        .take_while(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    files.dedup();
    (tree, files)
}

/// What [`merge`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merged {
    pub branch: String,
    pub into: String,
    pub kind: MergeKind,
    /// The target's new tip.
    pub commit: String,
    /// The checkout whose files were updated (the target was checked out
    /// there), if any.
    pub checkout: Option<PathBuf>,
}

/// Records the branch `branch` merges into (called when it is made).
pub fn record_into(repo: &Repo, branch: &str, into: &str) -> Result<(), WorkspaceError> {
    repo.git.run(&["config", &into_key(branch), into])?;
    Ok(())
}

/// The local branch a new workspace based on `base` should merge into:
/// `base` itself when it names a branch, else the checkout's current branch
/// (`None` when its HEAD is detached).
pub fn default_into(repo: &Repo, base: Option<&str>) -> Result<Option<String>, WorkspaceError> {
    if let Some(b) = base
        && repo.git.check(&[
            "show-ref",
            "--verify",
            "--quiet",
            &format!("refs/heads/{b}"),
        ])?
    {
        return Ok(Some(b.to_string()));
    }
    Ok(repo
        .git
        .query(&["symbolic-ref", "--quiet", "--short", "HEAD"])?
        .filter(|s| !s.is_empty()))
}

/// The branch `branch` merges into: `into` when given, else the recorded
/// one, else the branch of the repository's main checkout.
pub fn target_of(repo: &Repo, branch: &str, into: Option<&str>) -> Result<String, WorkspaceError> {
    if let Some(i) = into {
        return Ok(i.to_string());
    }
    if let Some(i) = repo
        .git
        .query(&["config", "--get", &into_key(branch)])?
        .filter(|s| !s.is_empty())
    {
        return Ok(i);
    }
    let list = parse_worktree_list(&repo.git.run(&["worktree", "list", "--porcelain"])?);
    list.into_iter()
        .next()
        .and_then(|(_, b)| b)
        .ok_or_else(|| WorkspaceError::NoTarget(branch.to_string()))
}

/// The tip of local branch `name`.
fn tip(repo: &Repo, name: &str) -> Result<String, WorkspaceError> {
    repo.git
        .query(&[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{name}^{{commit}}"),
        ])?
        .filter(|s| !s.is_empty())
        .ok_or_else(|| WorkspaceError::UnknownBase {
            repo: repo.toplevel.clone(),
            base: name.to_string(),
        })
}

/// Where local branch `name` is checked out, if anywhere.
fn checked_out(repo: &Repo, name: &str) -> Result<Option<PathBuf>, WorkspaceError> {
    Ok(
        parse_worktree_list(&repo.git.run(&["worktree", "list", "--porcelain"])?)
            .into_iter()
            .find(|(_, b)| b.as_deref() == Some(name))
            .map(|(p, _)| p),
    )
}

/// Tracked files changed in the checkout at `dir` (untracked ones too when
/// `untracked`), read with `git`, the checkout's ([`Repo::checkout_git`]).
fn changed_files(git: &Git, untracked: bool) -> Result<Vec<String>, WorkspaceError> {
    let flag = if untracked {
        "--untracked-files=all"
    } else {
        "--untracked-files=no"
    };
    Ok(git
        .run(&["status", "--porcelain", "--ignore-submodules=all", flag])?
        .lines()
        .filter_map(|l| l.get(3..))
        .map(str::to_string)
        .collect())
}

/// The environment naming who makes awtui's merge and revert commits: the
/// user when git knows them, awtui otherwise.
pub fn identity_env(git: &Git) -> Result<Vec<(&'static str, &'static str)>, WorkspaceError> {
    let mut env = Vec::new();
    if !git.check(&["var", "GIT_AUTHOR_IDENT"])? {
        env.extend([
            ("GIT_AUTHOR_NAME", "awtui"),
            ("GIT_AUTHOR_EMAIL", "awtui@awtui.invalid"),
        ]);
    }
    if !git.check(&["var", "GIT_COMMITTER_IDENT"])? {
        env.extend([
            ("GIT_COMMITTER_NAME", "awtui"),
            ("GIT_COMMITTER_EMAIL", "awtui@awtui.invalid"),
        ]);
    }
    Ok(env)
}

/// A commit of `tree` with `parents`, made without touching any index or
/// working file.
fn commit_tree(
    repo: &Repo,
    tree: &str,
    parents: &[&str],
    message: &str,
) -> Result<String, WorkspaceError> {
    let mut args = vec!["-c", "commit.gpgsign=false", "commit-tree", tree];
    for p in parents {
        args.extend(["-p", p]);
    }
    args.extend(["-m", message]);
    Ok(repo
        .git
        .run_env(&args, &identity_env(&repo.git)?)?
        .trim()
        .to_string())
}

/// Moves branch `name` from `old` to `new` (a descendant): with
/// `git merge --ff-only` in the checkout that has it (refused, with nothing
/// changed, when that checkout has uncommitted changes to tracked files),
/// else atomically with `update-ref`. Returns the checkout updated.
fn advance(
    repo: &Repo,
    name: &str,
    old: &str,
    new: &str,
) -> Result<Option<PathBuf>, WorkspaceError> {
    match checked_out(repo, name)? {
        Some(dir) => {
            let git = repo.checkout_git(&dir)?;
            let dirty = changed_files(&git, false)?;
            if !dirty.is_empty() {
                return Err(WorkspaceError::CheckoutDirty {
                    branch: name.to_string(),
                    at: dir,
                    files: dirty.join(", "),
                });
            }
            // No hooks: every git awtui runs has them off (`Git`); the
            // files are checked out with the attributes of the checkout's
            // own tree (for the agent's worktree: its recorded base), never
            // those of the commits coming in.
            git.run(&["merge", "--ff-only", "--quiet", new])?;
            Ok(Some(dir))
        }
        None => {
            repo.git.run(&[
                "update-ref",
                "-m",
                "awtui",
                &format!("refs/heads/{name}"),
                new,
                old,
            ])?;
            Ok(None)
        }
    }
}

/// Merges the workspace branch `at` into `into` (its recorded target when
/// `None`): a fast-forward when possible unless `no_ff`, else a merge
/// commit. A conflict lists the files and changes nothing.
pub fn merge(
    repo: &Repo,
    at: &Located,
    into: Option<&str>,
    no_ff: bool,
) -> Result<Merged, WorkspaceError> {
    let target = target_of(repo, &at.branch, into)?;
    let old = tip(repo, &target)?;
    let head = tip(repo, &at.branch)?;
    let kind = plan_merge(
        repo.is_merged(&head, &old)?,
        repo.is_merged(&old, &head)?,
        no_ff,
    );
    let new = match kind {
        MergeKind::UpToDate => old.clone(),
        MergeKind::FastForward => head.clone(),
        MergeKind::MergeCommit => {
            let (code, out, err) = repo.git.status(&[
                "merge-tree",
                "--write-tree",
                "--name-only",
                "--no-messages",
                &old,
                &head,
            ])?;
            let (tree, files) = parse_merge_tree(&out);
            match code {
                0 => {}
                1 => {
                    return Err(WorkspaceError::Conflict {
                        what: format!("merging {} into {target}", at.branch),
                        files: files.join(", "),
                        hint: format!(
                            "ask the agent to merge {target} into its branch and resolve them, \
                             or merge by hand (git merge {})",
                            at.branch
                        ),
                    });
                }
                _ => {
                    return Err(WorkspaceError::Git {
                        dir: repo.toplevel.clone(),
                        args: "merge-tree".into(),
                        message: err,
                    });
                }
            }
            commit_tree(
                repo,
                &tree,
                &[&old, &head],
                &format!(
                    "Merge {} into {target}\n\nAwtui-Merge: {}\n",
                    at.branch, at.branch
                ),
            )?
        }
    };
    let checkout = if new == old {
        None
    } else {
        advance(repo, &target, &old, &new)?
    };
    Ok(Merged {
        branch: at.branch.clone(),
        into: target,
        kind,
        commit: new,
        checkout,
    })
}

/// What [`revert`] made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reverted {
    /// The turn undone.
    pub turn: u32,
    /// The revert's own step number on the branch.
    pub step: u32,
    pub commit: String,
}

/// The message of the commit reverting `agent`'s `turn` (`from..to`), itself
/// step `step` of the branch.
pub fn revert_message(agent: &str, turn: u32, step: u32, to: &str) -> String {
    format!(
        "awtui: revert {agent} turn {turn}\n\nThis reverts the changes of turn {turn} (up to commit {to}).\n\n\
         Awtui-Agent: {agent}\n{}: {step}\nAwtui-Reverts: {turn}\n",
        super::commit::TURN_TRAILER
    )
}

/// Adds a commit on the agent's branch undoing turn `turn` (everything the
/// step spans). It is a step of its own, so `awtui diff --turn` shows it.
/// Refused, with nothing changed, while its worktree has uncommitted
/// changes (a turn is running) or when later work conflicts.
pub fn revert(
    repo: &Repo,
    at: &Located,
    agent: &str,
    turn: u32,
) -> Result<Reverted, WorkspaceError> {
    if let Some(dir) = &at.worktree {
        let dirty = changed_files(&repo.checkout_git(dir)?, true)?;
        if !dirty.is_empty() {
            return Err(WorkspaceError::Busy {
                path: dir.clone(),
                files: dirty.join(", "),
            });
        }
    }
    let head = tip(repo, &at.branch)?;
    let all = steps(&repo.git, &at.base, &head)?;
    let (from, to) = step_range(&at.branch, &at.base, &all, turn)?;
    let (code, out, err) = repo.git.status(&[
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--no-messages",
        &format!("--merge-base={to}"),
        &head,
        &from,
    ])?;
    let (tree, files) = parse_merge_tree(&out);
    match code {
        0 => {}
        1 => {
            return Err(WorkspaceError::Conflict {
                what: format!("reverting turn {turn} of {}", at.branch),
                files: files.join(", "),
                hint: "later turns changed the same lines; ask the agent to undo it".into(),
            });
        }
        _ => {
            return Err(WorkspaceError::Git {
                dir: repo.toplevel.clone(),
                args: "merge-tree".into(),
                message: err,
            });
        }
    }
    let step = all.last().map_or(0, |s| s.turn) + 1;
    let commit = commit_tree(
        repo,
        &tree,
        &[&head],
        &revert_message(agent, turn, step, &to),
    )?;
    advance(repo, &at.branch, &head, &commit)?;
    Ok(Reverted { turn, step, commit })
}

/// Marks the workspace branch discarded: `awtui stop --clean` removes it
/// even though it is not merged.
pub fn discard(repo: &Repo, branch: &str) -> Result<(), WorkspaceError> {
    repo.git.run(&["config", &status_key(branch), DISCARDED])?;
    Ok(())
}

/// Whether `branch` was discarded.
pub fn is_discarded(repo: &Repo, branch: &str) -> Result<bool, WorkspaceError> {
    Ok(repo
        .git
        .query(&["config", "--get", &status_key(branch)])?
        .is_some_and(|s| s == DISCARDED))
}

/// What [`clean`] did with each workspace branch of an instance.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cleaned {
    /// Branches removed with their worktrees.
    pub removed: Vec<String>,
    /// Branches kept, each with the reason.
    pub kept: Vec<(String, String)>,
}

/// Removes the worktrees and branches of `instance` (`awtui/<instance>/…`,
/// made by awtui) that are merged into their target or discarded; keeps
/// unmerged work and uncommitted changes unless `force`.
pub fn clean(repo: &Repo, instance: &str, force: bool) -> Result<Cleaned, WorkspaceError> {
    let prefix = branch_name(instance, "");
    let refs = repo.git.run(&[
        "for-each-ref",
        "--format=%(refname:short)",
        &format!("refs/heads/{prefix}"),
    ])?;
    let mut done = Cleaned::default();
    for branch in refs.lines().map(str::trim).filter(|b| !b.is_empty()) {
        let seen = repo.observe(branch)?;
        if seen.recorded_base.is_none() {
            continue; // not made by awtui
        }
        let path = seen.checked_out_at.as_deref();
        let discard = force || is_discarded(repo, branch)?;
        let into = if discard {
            String::new()
        } else {
            match target_of(repo, branch, None) {
                Ok(i) => i,
                Err(e) => {
                    done.kept.push((branch.to_string(), e.to_string()));
                    continue;
                }
            }
        };
        let host_copy = super::remote::HostCopy::recorded(repo, branch)?;
        match repo.remove_workspace(branch, path, &into, discard) {
            Ok(()) => {
                done.removed.push(branch.to_string());
                if let Some(why) = host_copy.and_then(|c| c.clean(repo)) {
                    done.kept.push((branch.to_string(), why));
                }
            }
            Err(WorkspaceError::Unmerged { into, .. }) => {
                done.kept
                    .push((branch.to_string(), format!("not merged into {into}")));
            }
            Err(WorkspaceError::UncommittedWork(p)) => {
                let why = format!("uncommitted changes in {}", p.display());
                done.kept.push((branch.to_string(), why));
            }
            Err(e @ WorkspaceError::LinkMoved { .. }) => {
                done.kept.push((branch.to_string(), e.to_string()));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_kind_follows_ancestry() {
        assert_eq!(plan_merge(true, false, false), MergeKind::UpToDate);
        assert_eq!(plan_merge(true, true, true), MergeKind::UpToDate);
        assert_eq!(plan_merge(false, true, false), MergeKind::FastForward);
        assert_eq!(plan_merge(false, true, true), MergeKind::MergeCommit);
        assert_eq!(plan_merge(false, false, false), MergeKind::MergeCommit);
    }

    #[test]
    fn merge_tree_output_gives_tree_and_conflicts() {
        assert_eq!(parse_merge_tree("abc\n"), ("abc".into(), vec![]));
        assert_eq!(
            parse_merge_tree("abc\nf.txt\nsrc/g.rs\n"),
            ("abc".into(), vec!["f.txt".into(), "src/g.rs".into()])
        );
    }

    #[test]
    fn a_revert_is_a_step_naming_what_it_undoes() {
        let m = revert_message("coder", 2, 4, "c2");
        assert!(m.starts_with("awtui: revert coder turn 2\n"));
        assert_eq!(super::super::commit::parse_turn(&m), Some(4));
        assert!(m.contains("Awtui-Reverts: 2\n"));
    }
}
