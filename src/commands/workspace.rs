//! `awtui merge`, `awtui revert` and `awtui discard`: taking or leaving an
//! agent's work in its worktree. Like `awtui diff`, they find the agent's
//! branch from the repository alone, so they work whether or not the
//! instance runs; the git work is [`crate::workspace::manage`]'s.

use std::path::{Path, PathBuf};

use super::exit;
use crate::errln;
use crate::workspace::diff::{self, Located};
use crate::workspace::manage;
use crate::workspace::{Repo, WorkspaceError};

/// An agent's workspace found from `agent[@instance]` and a folder of the
/// repository (the current folder by default).
pub struct Target {
    pub agent: String,
    pub repo: Repo,
    pub at: Located,
}

/// Finds `target`'s workspace branch, or the exit code after saying why not.
pub fn find(target: &str, dir: Option<&Path>) -> Result<Target, u8> {
    let (agent, instance) = match target.split_once('@') {
        Some((a, i)) => (a, Some(i)),
        None => (target, None),
    };
    if agent.is_empty() || instance.is_some_and(str::is_empty) {
        errln!("'{target}' is not agent or agent@instance");
        return Err(exit::INVALID);
    }
    let here: PathBuf = match dir {
        Some(d) => d.to_path_buf(),
        None => std::env::current_dir().map_err(|e| {
            errln!("cannot read the current folder: {e}");
            exit::FAILED
        })?,
    };
    // Never from inside an agent's worktree: its `.git` is the agent's.
    let found = Repo::find(&crate::workspace::outside_worktrees(&here)).and_then(|repo| {
        let at = diff::locate(&repo, agent, instance)?;
        Ok(Target {
            agent: agent.to_string(),
            repo,
            at,
        })
    });
    found.map_err(failed)
}

/// Says what went wrong; the exit code: a target that fits several
/// instances is invalid usage (2, as the README's exit codes say), every
/// other failure 1.
fn failed(e: WorkspaceError) -> u8 {
    errln!("{e}");
    match e {
        WorkspaceError::Ambiguous { .. } => exit::INVALID,
        _ => exit::FAILED,
    }
}

/// `awtui merge <agent[@instance]> [--into B] [--no-ff]`.
#[derive(Clone, Debug, clap::Args)]
pub struct MergeArgs {
    /// agent or agent@instance.
    pub target: String,
    /// Always make a merge commit.
    #[arg(long)]
    pub no_ff: bool,
    /// The branch to merge into (default: the one the workspace was
    /// based on).
    #[arg(long)]
    pub into: Option<String>,
    /// A folder of the repository (default: the current folder).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// `awtui revert <agent[@instance]> --turn N`.
#[derive(Clone, Debug, clap::Args)]
pub struct RevertArgs {
    /// agent or agent@instance.
    pub target: String,
    /// The turn to undo (as `awtui diff --turn` numbers them).
    #[arg(long)]
    pub turn: u32,
    /// A folder of the repository (default: the current folder).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// `awtui discard <agent[@instance]>`.
#[derive(Clone, Debug, clap::Args)]
pub struct DiscardArgs {
    /// agent or agent@instance.
    pub target: String,
    /// A folder of the repository (default: the current folder).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// Merges the agent's branch; returns the exit code.
pub fn merge(args: &MergeArgs) -> u8 {
    let t = match find(&args.target, args.dir.as_deref()) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let m = match manage::merge(&t.repo, &t.at, args.into.as_deref(), args.no_ff) {
        Ok(m) => m,
        Err(e) => return failed(e),
    };
    super::print::line(crate::workspace::view::merged_sentence(&m));
    match diff::uncommitted(&t.repo, &t.at) {
        Ok(pending) if !pending.is_empty() => errln!(
            "note: {} file(s) in its worktree are not committed yet and were not merged",
            pending.len()
        ),
        Ok(_) => {}
        Err(e) => errln!("note: {e}"),
    }
    exit::OK
}

/// Reverts one turn; returns the exit code.
pub fn revert(args: &RevertArgs) -> u8 {
    let t = match find(&args.target, args.dir.as_deref()) {
        Ok(t) => t,
        Err(code) => return code,
    };
    match manage::revert(&t.repo, &t.at, &t.agent, args.turn) {
        Ok(r) => {
            super::print::line(crate::workspace::view::reverted_sentence(&t.at.branch, &r));
            exit::OK
        }
        Err(e) => failed(e),
    }
}

/// Marks the workspace discarded; returns the exit code.
pub fn discard(args: &DiscardArgs) -> u8 {
    let t = match find(&args.target, args.dir.as_deref()) {
        Ok(t) => t,
        Err(code) => return code,
    };
    match manage::discard(&t.repo, &t.at.branch) {
        Ok(()) => {
            super::print::line(crate::workspace::view::discarded_sentence(&t.at.branch));
            exit::OK
        }
        Err(e) => failed(e),
    }
}

/// Cleans `instance`'s workspaces in the repository at `dir` and prints
/// what was removed and kept; the exit code (failed when work was kept).
pub fn clean(dir: &Path, instance: &str, force: bool) -> u8 {
    let top = crate::workspace::outside_worktrees(dir);
    let done = match Repo::find(&top).and_then(|repo| manage::clean(&repo, instance, force)) {
        Ok(d) => d,
        Err(e) => return failed(e),
    };
    for b in &done.removed {
        super::print::line(format!("removed {b} and its worktree"));
    }
    for (b, why) in &done.kept {
        errln!("kept {b}: {why} (merge it, `awtui discard` it, or use --force)");
    }
    if done.removed.is_empty() && done.kept.is_empty() {
        super::print::line(format!("no workspaces of @{instance} to clean"));
    }
    if done.kept.is_empty() {
        exit::OK
    } else {
        exit::FAILED
    }
}
