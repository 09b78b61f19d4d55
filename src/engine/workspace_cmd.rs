//! The control room's workspace commands (`ReadDiff`, `Workspace`): git
//! work that takes tens of milliseconds, so the driver runs it on a
//! blocking thread and answers when it is done, never stalling the loop.

use super::command::{Command, Reply};
use crate::workspace::diff::Located;
use crate::workspace::{Repo, Workspaces, view};

/// A workspace command made ready to run off the driver's loop: the
/// agent's branch found, nothing of the driver borrowed.
pub struct Job {
    agent: String,
    repo_dir: std::path::PathBuf,
    at: Located,
    what: What,
}

enum What {
    Read(Option<u32>),
    Apply(view::WorkspaceOp),
}

/// The job for `command` when it is a workspace command (`None` for every
/// other command); an error names an agent without a worktree.
pub fn job(
    workspaces: &Workspaces,
    is_agent: impl Fn(&str) -> bool,
    command: &Command,
) -> Option<Result<Job, String>> {
    let (agent, what) = match command {
        Command::ReadDiff { agent, turn } => (agent, What::Read(*turn)),
        Command::Workspace { agent, op } => (agent, What::Apply(*op)),
        _ => return None,
    };
    if !is_agent(agent) {
        return Some(Err(format!("there is no agent '{agent}' in this workflow")));
    }
    let Some(ws) = workspaces.get(agent) else {
        return Some(Err(format!(
            "'{agent}' has no worktree (it works in the shared checkout; \
             give it `workspace: worktree` in the workflow)"
        )));
    };
    Some(Ok(Job {
        agent: agent.clone(),
        repo_dir: ws.root.clone(),
        at: Located {
            branch: ws.branch.clone(),
            base: ws.base.clone(),
            worktree: Some(ws.root.clone()),
        },
        what,
    }))
}

impl Job {
    /// Runs the git work (blocking).
    pub fn run(self) -> Result<Reply, String> {
        let repo = Repo::find(&self.repo_dir).map_err(|e| e.to_string())?;
        match self.what {
            What::Read(turn) => view::read(&repo, &self.agent, &self.at, turn)
                .map(|v| Reply::Diff { view: Box::new(v) })
                .map_err(|e| e.to_string()),
            What::Apply(op) => {
                let text =
                    view::apply(&repo, &self.agent, &self.at, op).map_err(|e| e.to_string())?;
                tracing::info!("{text}");
                Ok(Reply::Said { text })
            }
        }
    }
}
