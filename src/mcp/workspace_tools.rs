//! caw's `workspace_create` / `workspace_update` (seed "Workspace
//! Isolation" and "Cleanup"): a branch in its own git worktree for some
//! tasks of a workflow, recorded on the task board (durable in its
//! journal), and removed again once merged or abandoned.
//!
//! Worktrees go in the instance's worktrees folder, outside its document
//! folder, as `.workspaces/<id>` ([`crate::workspace::task_worktree_dir`]);
//! a workspace keeps the path it was made at, so one made in the instance
//! folder before is cleaned up there. The git work is
//! [`crate::workspace`]'s. Unmerged work is never removed unless the
//! workspace is marked `abandoned`.
//!
//! An agent reaches only what is its own: git runs in the workflow's own
//! repository alone ([`Repo::workflow_own`]; `repo_path` may only name it),
//! a branch that exists already is never taken over (`BRANCH_EXISTS`), so
//! cleanup deletes only branches awtui made, and only the agent that made
//! a workspace (or holds one of its tasks, or the user) changes it.

use std::path::{Path, PathBuf};

use chrono::Utc;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::tool::define_tool;
use super::tools::ToolError;
use crate::tasks::model::{PlanWorkspace, WORKSPACE_STATUSES};
use crate::tasks::{TaskBoard, TaskEvent};
use crate::workspace::{Repo, WorkspaceError};

impl From<WorkspaceError> for ToolError {
    fn from(e: WorkspaceError) -> Self {
        ToolError::Coded {
            code: e.code(),
            message: e.to_string(),
        }
    }
}

define_tool! {
    /// Creates a workspace (a branch, maybe in its own worktree) for
    /// some tasks.
    WorkspaceCreate = "workspace_create", CreateArgs, TaskBoard,
    "Create a workspace for some tasks of a workflow. With create_worktree: true, a new \
     branch checked out in its own git worktree (under .workflow/.worktrees/) so \
     parallel agents do not overwrite each other. Without create_worktree the \
     workspace is only recorded (branch name, tasks): nothing is made in git, the \
     branch must not exist yet. Returns the workspace with its id (ws_…), \
     branch_created and worktree_path.",
    |board, caller, a| create(board, caller, a)
}

define_tool! {
    /// Changes a workspace's status, and cleans it up.
    WorkspaceUpdate = "workspace_update", UpdateArgs, TaskBoard,
    "Update a workspace: status active, merged or abandoned, the merge commit, and with \
     cleanup_worktree remove its worktree and branch (only when merged, or when \
     abandoned: unmerged work is never removed otherwise).",
    |board, caller, a| update(board, caller, a)
}

/// `workspace_create`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateArgs {
    /// Workflow id.
    workflow_id: String,
    /// The new branch, e.g. feature/google-oauth.
    branch: String,
    /// Branch or commit to start from (default: the repository's current
    /// branch).
    base_branch: Option<String>,
    /// Make the branch and a git worktree for it (default false: record
    /// only, nothing made in git).
    #[serde(default)]
    create_worktree: bool,
    /// The workflow's repository folder (the default; no other repository
    /// is accepted).
    repo_path: Option<String>,
    /// Tasks worked on there.
    #[serde(default)]
    task_ids: Vec<String>,
}

/// `workspace_update`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct UpdateArgs {
    /// Workspace id.
    id: String,
    /// active, merged or abandoned.
    status: Option<String>,
    /// The commit that merged it.
    merge_commit: Option<String>,
    /// Remove its worktree and branch.
    #[serde(default)]
    cleanup_worktree: bool,
}

fn invalid(message: String) -> ToolError {
    ToolError::Coded {
        code: "INVALID_ARGUMENT",
        message,
    }
}

/// The workflow's own repository, checked against the `repo_path` an agent
/// named; an instance keeping nothing on disk has none.
fn own_repo(board: &TaskBoard, named: Option<&str>) -> Result<Repo, ToolError> {
    let dir = board
        .worktree_root()
        .and_then(crate::workspace::workflow_dir_of)
        .ok_or_else(|| ToolError::Coded {
            code: "INVALID_STATE",
            message: "this instance keeps nothing on disk (context: memory or false), so it has no repository or place for worktrees".into(),
        })?;
    Ok(Repo::workflow_own(dir, named.map(Path::new))?)
}

/// Refuses `caller` changing `ws` unless it made it, holds one of its
/// tasks (claimed by an agent it registered), or is the user.
fn check_owner(board: &TaskBoard, caller: &str, ws: &PlanWorkspace) -> Result<(), ToolError> {
    let holds_task = || {
        board.read(|s| {
            ws.task_ids.iter().any(|t| {
                s.task(t)
                    .and_then(|t| t.claimed_by.as_deref())
                    .and_then(|a| s.agent(a))
                    .is_some_and(|a| a.owner == caller)
            })
        })
    };
    if caller == ws.created_by || caller == crate::context::mentions::USER || holds_task() {
        return Ok(());
    }
    Err(ToolError::Coded {
        code: "NOT_OWNER",
        message: format!(
            "workspace '{}' was made by {} and none of its tasks is yours; only its maker, \
             an agent holding one of its tasks, or the user changes it",
            ws.id, ws.created_by
        ),
    })
}

/// Records `ws` and tells front ends (the task board shows it on its tasks).
fn save(board: &TaskBoard, ws: &PlanWorkspace) -> Result<(), crate::tasks::TaskError> {
    board.change(|s| match s.save_workspace(ws.clone()) {
        Ok(()) => (Ok(()), vec![TaskEvent::WorkspaceChanged(ws.clone())]),
        Err(e) => (Err(e), vec![]),
    })
}

fn workspace_json(w: &PlanWorkspace) -> Value {
    serde_json::to_value(w).unwrap_or(Value::Null)
}

/// `workspace_create`: checks the links first, then makes the worktree
/// (when asked), then records the workspace.
fn create(board: &TaskBoard, caller: &str, a: CreateArgs) -> Result<Value, ToolError> {
    let id = board.read(|s| {
        s.check_workspace_links(&a.workflow_id, &a.task_ids)
            .map(|()| s.new_workspace_id())
    })?;
    // Git is needed to make a worktree or for a named repository; else it
    // only checks the branch is new, when the workflow is in a repository.
    let repo = if a.create_worktree || a.repo_path.is_some() {
        Some(own_repo(board, a.repo_path.as_deref())?)
    } else {
        own_repo(board, None).ok()
    };
    if let Some(repo) = &repo
        && repo.has_branch(&a.branch)?
    {
        return Err(WorkspaceError::BranchExists(a.branch).into());
    }
    let (mut base_commit, mut worktree_path) = (None, None);
    if let (true, Some(repo), Some(root)) = (a.create_worktree, &repo, board.worktree_root()) {
        let base = repo.base_commit(a.base_branch.as_deref())?;
        let path: PathBuf = crate::workspace::task_worktree_dir(root, &id);
        repo.make_room(root)?;
        repo.add_worktree(&a.branch, &path, &base)?;
        base_commit = Some(base);
        worktree_path = Some(path.display().to_string());
    }
    let now = Utc::now();
    let ws = PlanWorkspace {
        id,
        workflow_id: a.workflow_id,
        branch: a.branch,
        base_branch: a.base_branch,
        base_commit,
        repo_path: repo.map(|r| r.toplevel.display().to_string()),
        branch_created: worktree_path.is_some(),
        worktree_path,
        task_ids: a.task_ids,
        status: "active".into(),
        merge_commit: None,
        created_by: caller.to_string(),
        created_at: now,
        updated_at: now,
    };
    save(board, &ws)?;
    Ok(workspace_json(&ws))
}

/// `workspace_update`: a new status (and merge commit); with
/// `cleanup_worktree`, removes the worktree (and the branch awtui made) of
/// a merged or abandoned workspace. Only for its owner ([`check_owner`]).
fn update(board: &TaskBoard, caller: &str, a: UpdateArgs) -> Result<Value, ToolError> {
    let mut ws = board
        .read(|s| s.workspace(&a.id).cloned())
        .ok_or_else(|| ToolError::Coded {
            code: "WORKSPACE_NOT_FOUND",
            message: format!("there is no workspace '{}'", a.id),
        })?;
    check_owner(board, caller, &ws)?;
    if let Some(status) = &a.status {
        if !WORKSPACE_STATUSES.contains(&status.as_str()) {
            return Err(invalid(format!(
                "workspace_update: unknown status '{status}' (expected {})",
                WORKSPACE_STATUSES.join(", ")
            )));
        }
        ws.status = status.clone();
    }
    if let Some(c) = a.merge_commit {
        ws.merge_commit = Some(c);
    }
    if a.cleanup_worktree {
        let discard = match ws.status.as_str() {
            "merged" => false,
            "abandoned" => true,
            other => {
                return Err(ToolError::Coded {
                    code: "INVALID_STATE",
                    message: format!(
                        "workspace '{}' is {other}: only a merged or abandoned workspace is cleaned up",
                        ws.id
                    ),
                });
            }
        };
        // Only what awtui made: a record-only workspace has nothing (and
        // the branch goes only when awtui recorded making it).
        let made = ws.branch_created || ws.worktree_path.is_some();
        if let (Some(repo_dir), true) = (&ws.repo_path, made) {
            // Checked again: a record from before may name any folder.
            let repo = own_repo(board, Some(repo_dir))?;
            // Merged into the merge commit when one is named, else into
            // the base branch (or the current branch).
            let into = ws
                .merge_commit
                .clone()
                .or_else(|| ws.base_branch.clone())
                .unwrap_or_else(|| "HEAD".into());
            let path = ws.worktree_path.as_deref().map(Path::new);
            repo.remove_workspace(&ws.branch, path, &into, discard)?;
        }
        ws.worktree_path = None;
    }
    ws.updated_at = Utc::now();
    save(board, &ws)?;
    Ok(json!({"success": true, "workspace": workspace_json(&ws)}))
}
