//! What the control room's diff view shows and does: an agent's steps, the
//! diff of one step or of everything against the base, what is not
//! committed yet, and the sentences that report a merge, revert or discard.
//! The shell commands (`awtui diff|merge|revert|discard`) say the same
//! sentences, so both front ends describe an operation alike.

use super::commit::steps;
use super::diff::{self, DiffRequest, Located};
use super::manage::{self, MergeKind, Merged, Reverted};
use super::{Repo, WorkspaceError};
pub use crate::vocab::workspace::{DiffTarget, DiffView, StepLine, WorkspaceOp};

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// Reads what the diff view shows of `at`: its steps, the diff of `turn`
/// (or of everything), and what is uncommitted.
pub fn read(
    repo: &Repo,
    target: &DiffTarget,
    at: &Located,
    turn: Option<u32>,
) -> Result<DiffView, WorkspaceError> {
    let all = steps(&repo.git, &at.base, &at.branch)?;
    let patch = diff::diff_text(repo, at, DiffRequest { turn, stat: false })?;
    Ok(DiffView {
        target: target.clone(),
        branch: at.branch.clone(),
        base: short(&at.base).to_string(),
        steps: all
            .iter()
            .map(|s| StepLine {
                turn: s.turn,
                commit: short(&s.commit).to_string(),
            })
            .collect(),
        turn,
        patch,
        uncommitted: diff::uncommitted(repo, at)?,
    })
}

/// The sentence reporting a merge.
pub fn merged_sentence(m: &Merged) -> String {
    let how = match m.kind {
        MergeKind::UpToDate => format!("{} is already merged into {}", m.branch, m.into),
        MergeKind::FastForward => format!(
            "merged {} into {} (fast-forward to {})",
            m.branch,
            m.into,
            short(&m.commit)
        ),
        MergeKind::MergeCommit => format!(
            "merged {} into {} (merge commit {})",
            m.branch,
            m.into,
            short(&m.commit)
        ),
    };
    match &m.checkout {
        Some(dir) => format!("{how}; the checkout at {} was updated", dir.display()),
        None => how,
    }
}

/// The sentence reporting a revert.
pub fn reverted_sentence(branch: &str, r: &Reverted) -> String {
    format!(
        "reverted turn {} of {branch} with commit {} (its turn {})",
        r.turn,
        short(&r.commit),
        r.step
    )
}

/// The sentence reporting a discard.
pub fn discarded_sentence(branch: &str) -> String {
    format!("discarded {branch}: `awtui stop --clean` removes its worktree and branch")
}

/// Carries out `op` on `agent`'s workspace; the sentence saying what it
/// did. Merges go into the branch's recorded target.
pub fn apply(
    repo: &Repo,
    agent: &str,
    at: &Located,
    op: WorkspaceOp,
) -> Result<String, WorkspaceError> {
    match op {
        WorkspaceOp::Merge => {
            let m = manage::merge(repo, at, None, false)?;
            let mut said = merged_sentence(&m);
            // The merge is done: what the worktree holds is a note on it.
            match diff::uncommitted(repo, at) {
                Ok(pending) if !pending.is_empty() => said.push_str(&format!(
                    " ({} file(s) in its worktree are not committed yet and were not merged)",
                    pending.len()
                )),
                Ok(_) => {}
                Err(e) => said.push_str(&format!(" (note: {e})")),
            }
            Ok(said)
        }
        WorkspaceOp::Revert { turn } => {
            let r = manage::revert(repo, at, agent, turn)?;
            Ok(reverted_sentence(&at.branch, &r))
        }
        WorkspaceOp::Discard => {
            manage::discard(repo, &at.branch)?;
            Ok(discarded_sentence(&at.branch))
        }
    }
}
