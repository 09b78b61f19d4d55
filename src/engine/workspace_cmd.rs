//! The control room's workspace commands (`ReadDiff`, `Workspace`): git
//! work that takes tens of milliseconds, so the driver runs it on a
//! blocking thread and answers when it is done, never stalling the loop.

use super::command::{CommandError, Reply};
use crate::tasks::PlanWorkspace;
use crate::workspace::diff::Located;
use crate::workspace::view::{self, DiffTarget};
use crate::workspace::{Repo, Workspaces};

/// A workspace command made ready to run off the driver's loop: the
/// branch found, nothing of the driver borrowed.
pub struct Job {
    target: DiffTarget,
    repo: RepoAt,
    at: Located,
    what: What,
}

/// Where a job's git runs.
#[derive(Debug, PartialEq)]
enum RepoAt {
    /// The repository of an agent's worktree, as awtui recorded it when it
    /// made the worktree (its main checkout's top folder; never found from
    /// the worktree, whose `.git` the agent can rewrite).
    Worktree(std::path::PathBuf),
    /// The workflow's own repository, which a task workspace's record
    /// names (checked before git runs: an old record may name any folder,
    /// even one an agent wrote).
    Workflow {
        dir: std::path::PathBuf,
        named: Option<std::path::PathBuf>,
    },
}

enum What {
    Read(Option<u32>),
    Apply(view::WorkspaceOp),
}

/// What the driver knows that a job needs.
pub struct Known<'a> {
    /// The agents' worktrees.
    pub workspaces: &'a Workspaces,
    /// Whether a name is an agent of the workflow.
    pub is_agent: &'a dyn Fn(&str) -> bool,
    /// The newest workspace linked to a task id.
    pub task_workspace: &'a dyn Fn(&str) -> Option<PlanWorkspace>,
    /// The workflow file's folder, in the only repository a task
    /// workspace's git runs in.
    pub workflow_dir: &'a std::path::Path,
}

/// The job answering `read_diff`: `target`'s steps and the diff of step
/// `turn` (or of everything); an error names what has no workspace.
pub fn read(known: &Known, target: DiffTarget, turn: Option<u32>) -> Result<Job, CommandError> {
    locate(known, target, What::Read(turn))
}

/// The job answering `workspace`: `op` on `agent`'s workspace branch.
pub fn apply(known: &Known, agent: String, op: view::WorkspaceOp) -> Result<Job, CommandError> {
    locate(known, DiffTarget::Agent(agent), What::Apply(op))
}

fn locate(known: &Known, target: DiffTarget, what: What) -> Result<Job, CommandError> {
    match &target {
        DiffTarget::Agent(agent) => {
            if !(known.is_agent)(agent) {
                return Err(CommandError::UnknownAgent {
                    name: agent.clone(),
                });
            }
            let Some(ws) = known.workspaces.get(agent) else {
                return Err(CommandError::Workspace(format!(
                    "'{agent}' has no worktree (it works in the shared checkout; \
                     give it `workspace: worktree` in the workflow)"
                )));
            };
            Ok(Job {
                repo: RepoAt::Worktree(ws.repo.clone()),
                at: Located {
                    branch: ws.branch.clone(),
                    base: ws.base.clone(),
                    worktree: Some(ws.root.clone()),
                },
                target,
                what,
            })
        }
        DiffTarget::Task(task) => {
            let ws = (known.task_workspace)(task).ok_or_else(|| {
                CommandError::Workspace(format!(
                    "task '{task}' has no workspace (workspace_create)"
                ))
            })?;
            let base = ws
                .base_commit
                .clone()
                .or_else(|| ws.base_branch.clone())
                .ok_or_else(|| {
                    CommandError::Workspace(format!(
                        "the workspace of task '{task}' records no base"
                    ))
                })?;
            let worktree = ws.worktree_path.as_ref().map(std::path::PathBuf::from);
            let repo = RepoAt::Workflow {
                dir: known.workflow_dir.to_path_buf(),
                named: ws.repo_path.as_ref().map(std::path::PathBuf::from),
            };
            if matches!(what, What::Apply(_)) {
                return Err(CommandError::Workspace(
                    "merge a task's workspace with workspace_update or git".into(),
                ));
            }
            Ok(Job {
                repo,
                at: Located {
                    branch: ws.branch.clone(),
                    base,
                    worktree: worktree.filter(|p| p.is_dir()),
                },
                target,
                what,
            })
        }
    }
}

impl Job {
    /// Runs the git work (blocking).
    pub fn run(self) -> Result<Reply, CommandError> {
        self.run_git().map_err(CommandError::Workspace)
    }

    fn run_git(self) -> Result<Reply, String> {
        let repo = match &self.repo {
            RepoAt::Worktree(repo) => Ok(Repo::at(repo)),
            RepoAt::Workflow { dir, named } => Repo::workflow_own(dir, named.as_deref()),
        }
        .map_err(|e| e.to_string())?;
        match self.what {
            What::Read(turn) => view::read(&repo, &self.target, &self.at, turn)
                .map(|v| Reply::Diff { view: Box::new(v) })
                .map_err(|e| e.to_string()),
            What::Apply(op) => {
                let DiffTarget::Agent(agent) = &self.target else {
                    return Err("only an agent's workspace is merged from here".into());
                };
                let text = view::apply(&repo, agent, &self.at, op).map_err(|e| e.to_string())?;
                tracing::info!("{text}");
                Ok(Reply::Said { text })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::view::WorkspaceOp;

    fn ws() -> PlanWorkspace {
        serde_json::from_value(serde_json::json!({
            "id": "ws_000000000001", "workflow_id": "wf_000000000001",
            "branch": "feature/parser", "base_commit": "abc123",
            "repo_path": "/repo", "worktree_path": "/nonexistent/wt",
            "task_ids": ["tk_1"], "status": "active", "created_by": "coder",
            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"
        }))
        .unwrap()
    }

    fn with<T>(f: impl FnOnce(&Known) -> T) -> T {
        let workspaces = Workspaces::new();
        let is_agent = |a: &str| a == "coder";
        let task_workspace = |t: &str| (t == "tk_1").then(ws);
        f(&Known {
            workspaces: &workspaces,
            is_agent: &is_agent,
            task_workspace: &task_workspace,
            workflow_dir: std::path::Path::new("/wf"),
        })
    }

    fn diff(known: &Known, target: DiffTarget) -> Result<Job, CommandError> {
        read(known, target, None)
    }

    #[test]
    fn a_task_diff_uses_its_workspace_branch_base_and_repository() {
        let job = with(|k| diff(k, DiffTarget::Task("tk_1".into()))).unwrap();
        assert_eq!(job.at.branch, "feature/parser");
        assert_eq!(job.at.base, "abc123");
        assert_eq!(
            job.repo,
            RepoAt::Workflow {
                dir: "/wf".into(),
                named: Some("/repo".into())
            }
        );
        // A worktree already cleaned up is not looked at.
        assert_eq!(job.at.worktree, None);
    }

    #[test]
    fn a_task_diff_runs_no_git_in_a_repository_other_than_the_workflows() {
        let tmp = tempfile::tempdir().unwrap();
        let (own, other) = (tmp.path().join("own"), tmp.path().join("other"));
        for dir in [&own, &other] {
            std::fs::create_dir_all(dir).unwrap();
            crate::workspace::Git::new(dir)
                .run(&["init", "-q"])
                .unwrap();
        }
        let job = Job {
            target: DiffTarget::Task("tk_1".into()),
            repo: RepoAt::Workflow {
                dir: own,
                named: Some(other.clone()),
            },
            at: Located {
                branch: "feature/parser".into(),
                base: "abc123".into(),
                worktree: None,
            },
            what: What::Read(None),
        };
        let err = job.run().err().unwrap().to_string();
        assert!(err.contains("is not this workflow's repository"), "{err}");
        assert!(err.contains(&other.display().to_string()), "{err}");
    }

    #[test]
    fn what_has_no_workspace_is_named() {
        let err = |t: DiffTarget| with(|k| diff(k, t)).err().unwrap().to_string();
        assert!(err(DiffTarget::Task("tk_9".into())).contains("task 'tk_9' has no workspace"));
        assert!(err(DiffTarget::Agent("ghost".into())).contains("no agent 'ghost'"));
        assert!(err(DiffTarget::Agent("coder".into())).contains("'coder' has no worktree"));
        let merge = with(|k| apply(k, "coder".into(), WorkspaceOp::Merge));
        assert!(
            merge
                .err()
                .unwrap()
                .to_string()
                .contains("'coder' has no worktree")
        );
    }
}
