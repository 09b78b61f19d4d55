//! Agents' workspaces as front ends see them: steps, diffs, and what can
//! be done to a workspace branch.

use serde::{Deserialize, Serialize};

/// One step on an agent's branch, as listed in the diff view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepLine {
    /// The step number (`--turn N`).
    pub turn: u32,
    /// Its commit, abbreviated.
    pub commit: String,
}

/// Whose work a diff view shows: an agent's worktree, or the workspace of
/// a task (caw's `workspace_create`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "of", content = "name", rename_all = "snake_case")]
pub enum DiffTarget {
    /// `workspace: worktree` of this agent.
    Agent(String),
    /// The newest workspace linked to this task id.
    Task(String),
}

/// Everything the diff view draws for one agent, read in one go so a
/// screen never mixes two moments of the branch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffView {
    pub target: DiffTarget,
    pub branch: String,
    /// The commit the branch started from, abbreviated.
    pub base: String,
    /// Its steps, oldest first.
    pub steps: Vec<StepLine>,
    /// The step shown; everything against the base when `None`.
    pub turn: Option<u32>,
    /// The diff (`--patch-with-stat`), uncoloured and unsanitised: the
    /// view cleans each line it draws.
    pub patch: String,
    /// Files changed in the worktree and not committed yet (a turn is
    /// running), as `git status --porcelain` lines.
    pub uncommitted: Vec<String>,
}

/// An operation on an agent's workspace, from the diff view or the command
/// grammar (`/merge`, `/revert`, `/discard`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum WorkspaceOp {
    /// Merge the branch into its target (fast-forward when possible).
    Merge,
    /// Undo one step with a new commit.
    Revert { turn: u32 },
    /// Mark the branch discarded, for `awtui stop --clean`.
    Discard,
}

impl DiffTarget {
    /// As shown: the agent's name, or `task <id>`.
    pub fn label(&self) -> String {
        match self {
            DiffTarget::Agent(a) => a.clone(),
            DiffTarget::Task(t) => format!("task {t}"),
        }
    }
}

impl WorkspaceOp {
    /// The command's name (`merge`, `revert`, `discard`), for errors.
    pub fn name(&self) -> &'static str {
        match self {
            WorkspaceOp::Merge => "merge",
            WorkspaceOp::Revert { .. } => "revert",
            WorkspaceOp::Discard => "discard",
        }
    }
}
