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

use std::path::{Path, PathBuf};

use chrono::Utc;
use serde::Deserialize;
use serde_json::{Map, Value, json};

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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    workflow_id: String,
    branch: String,
    base_branch: Option<String>,
    #[serde(default)]
    create_worktree: bool,
    repo_path: Option<String>,
    #[serde(default)]
    task_ids: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateArgs {
    id: String,
    status: Option<String>,
    merge_commit: Option<String>,
    #[serde(default)]
    cleanup_worktree: bool,
}

fn invalid(message: String) -> ToolError {
    ToolError::Coded {
        code: "INVALID_ARGUMENT",
        message,
    }
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
pub fn create(
    board: &TaskBoard,
    caller: &str,
    args: Option<Map<String, Value>>,
) -> Result<Value, ToolError> {
    let a: CreateArgs = super::task_tools::parse("workspace_create", args)?;
    let id = board.read(|s| {
        s.check_workspace_links(&a.workflow_id, &a.task_ids)
            .map(|()| s.new_workspace_id())
    })?;
    let (mut base_commit, mut worktree_path) = (None, None);
    if a.create_worktree {
        let repo_dir = a.repo_path.as_deref().ok_or_else(|| {
            invalid(
                "workspace_create: create_worktree needs repo_path (the repository's folder)"
                    .into(),
            )
        })?;
        let root = board.worktree_root().ok_or_else(|| ToolError::Coded {
            code: "INVALID_STATE",
            message: "this instance keeps nothing on disk (context: memory or false), so it has no place for worktrees".into(),
        })?;
        let repo = Repo::find(Path::new(repo_dir))?;
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
        repo_path: a.repo_path,
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
/// `cleanup_worktree`, removes the worktree and branch of a merged or
/// abandoned workspace.
pub fn update(board: &TaskBoard, args: Option<Map<String, Value>>) -> Result<Value, ToolError> {
    let a: UpdateArgs = super::task_tools::parse("workspace_update", args)?;
    let mut ws = board
        .read(|s| s.workspace(&a.id).cloned())
        .ok_or_else(|| ToolError::Coded {
            code: "WORKSPACE_NOT_FOUND",
            message: format!("there is no workspace '{}'", a.id),
        })?;
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
        if let Some(repo_dir) = &ws.repo_path {
            let repo = Repo::find(Path::new(repo_dir))?;
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
