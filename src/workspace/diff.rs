//! An agent's changes against its base, in total or for one step, found
//! from git alone (branch `awtui/<instance>/<agent>` and its recorded base),
//! so `awtui diff` works whether or not the instance is running.

use std::path::PathBuf;

use super::commit::{Step, steps};
use super::{Repo, WorkspaceError, branch_name, parse_worktree_list};

/// The workspace branch of one agent, located in a repository.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    pub branch: String,
    pub base: String,
    /// Its worktree, when checked out.
    pub worktree: Option<PathBuf>,
}

/// Which changes to show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiffRequest {
    /// One step (`--turn N`), else everything against the base.
    pub turn: Option<u32>,
    /// Files and line counts only.
    pub stat: bool,
}

/// The instance part of `awtui/<instance>/<agent>` branches for `agent`.
pub fn instances_of(branches: &str, agent: &str) -> Vec<String> {
    branches
        .lines()
        .filter_map(|b| {
            let rest = b.trim().strip_prefix("awtui/")?;
            let (instance, name) = rest.rsplit_once('/')?;
            (name == agent && !instance.contains('/')).then(|| instance.to_string())
        })
        .collect()
}

/// Finds `agent`'s workspace branch (in `instance`, or the only instance
/// that has one).
pub fn locate(repo: &Repo, agent: &str, instance: Option<&str>) -> Result<Located, WorkspaceError> {
    let branch = match instance {
        Some(i) => branch_name(i, agent),
        None => {
            let refs = repo.git.run(&[
                "for-each-ref",
                "--format=%(refname:short)",
                "refs/heads/awtui/",
            ])?;
            match instances_of(&refs, agent).as_slice() {
                [] => return Err(WorkspaceError::NoWorkspace(agent.to_string())),
                [one] => branch_name(one, agent),
                many => {
                    return Err(WorkspaceError::Ambiguous {
                        agent: agent.to_string(),
                        instances: many.join(", "),
                    });
                }
            }
        }
    };
    let seen = repo.observe(&branch)?;
    if !seen.branch_exists {
        return Err(WorkspaceError::NoWorkspace(branch));
    }
    let base = seen
        .recorded_base
        .ok_or_else(|| WorkspaceError::NoBase(branch.clone()))?;
    Ok(Located {
        branch,
        base,
        worktree: seen.checked_out_at,
    })
}

/// The commits a step spans: from the step before it (or the base) to its
/// own commit.
pub fn step_range(
    branch: &str,
    base: &str,
    all: &[Step],
    turn: u32,
) -> Result<(String, String), WorkspaceError> {
    let Some(i) = all.iter().position(|s| s.turn == turn) else {
        let known = all
            .iter()
            .map(|s| s.turn.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        return Err(WorkspaceError::NoTurn {
            branch: branch.to_string(),
            turn,
            known: if known.is_empty() {
                "none yet".into()
            } else {
                known
            },
        });
    };
    let from = if i == 0 {
        base.to_string()
    } else {
        all[i - 1].commit.clone()
    };
    Ok((from, all[i].commit.clone()))
}

/// The diff text git prints for `request` (no colour: callers colour it).
pub fn diff_text(
    repo: &Repo,
    at: &Located,
    request: DiffRequest,
) -> Result<String, WorkspaceError> {
    let (from, to) = match request.turn {
        Some(n) => step_range(
            &at.branch,
            &at.base,
            &steps(&repo.git, &at.base, &at.branch)?,
            n,
        )?,
        None => (at.base.clone(), at.branch.clone()),
    };
    let form = if request.stat {
        "--stat"
    } else {
        "--patch-with-stat"
    };
    repo.git.run(&[
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        form,
        &from,
        &to,
    ])
}

/// Files the agent changed in its worktree and not committed yet (its turn
/// is still running), as `git status --porcelain` lines; git runs there
/// only while the worktree is as awtui made it ([`Repo::checkout_git`]).
pub fn uncommitted(repo: &Repo, at: &Located) -> Result<Vec<String>, WorkspaceError> {
    let Some(path) = &at.worktree else {
        return Ok(Vec::new());
    };
    let status =
        repo.checkout_git(path)?
            .run(&["status", "--porcelain", "--ignore-submodules=all"])?;
    Ok(status.lines().map(str::to_string).collect())
}

/// Colours a diff for a terminal: each line cleaned of escape sequences
/// first (file contents are the agents'), then additions green, removals
/// red, hunk headers cyan, file headers bold.
pub fn colorize(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for line in text.lines() {
        let clean = crate::sanitize::for_terminal(line);
        let sgr = if clean.starts_with("diff --git")
            || clean.starts_with("+++ ")
            || clean.starts_with("--- ")
            || clean.starts_with("index ")
        {
            Some("1")
        } else if clean.starts_with("@@") {
            Some("36")
        } else if clean.starts_with('+') {
            Some("32")
        } else if clean.starts_with('-') {
            Some("31")
        } else {
            None
        };
        match sgr {
            Some(code) => out.push_str(&format!("\u{1b}[{code}m{clean}\u{1b}[0m\n")),
            None => {
                out.push_str(&clean);
                out.push('\n');
            }
        }
    }
    out
}

/// Lists the worktrees git knows (path and branch), for checks that awtui's
/// record and git agree.
pub fn worktrees(repo: &Repo) -> Result<Vec<(PathBuf, Option<String>)>, WorkspaceError> {
    Ok(parse_worktree_list(&repo.git.run(&[
        "worktree",
        "list",
        "--porcelain",
    ])?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_are_found_from_branch_names() {
        let refs = "awtui/a/coder\nawtui/b/coder\nawtui/a/reviewer\nmain\nawtui/x/y/coder\n";
        assert_eq!(instances_of(refs, "coder"), vec!["a", "b"]);
        assert!(instances_of(refs, "qa").is_empty());
    }

    #[test]
    fn a_step_spans_from_the_step_before() {
        let s = |turn, c: &str| Step {
            turn,
            commit: c.into(),
        };
        let all = [s(1, "c1"), s(2, "c2")];
        assert_eq!(
            step_range("b", "base", &all, 1).unwrap(),
            ("base".into(), "c1".into())
        );
        assert_eq!(
            step_range("b", "base", &all, 2).unwrap(),
            ("c1".into(), "c2".into())
        );
        let e = step_range("b", "base", &all, 3).unwrap_err().to_string();
        assert!(e.contains("no turn 3") && e.contains("1, 2"), "{e}");
    }

    #[test]
    fn colour_never_passes_an_agents_escape_sequence() {
        let out = colorize("+hello \u{1b}]0;pwned\u{7}x\n-old\n context");
        assert!(out.contains("\u{1b}[32m+hello x\u{1b}[0m"));
        assert!(out.contains("\u{1b}[31m-old\u{1b}[0m"));
        assert!(!out.contains("pwned"));
    }
}
