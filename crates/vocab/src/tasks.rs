//! The records of the caw protocol: registered agents, workflows (plans),
//! tasks and checkpoints, as they are stored and returned by the tools.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a task stands. The allowed moves are in [`super::transitions`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Waiting for a claim (its dependencies may still be open).
    Pending,
    /// Held by an agent that has not started yet.
    Claimed,
    /// Its holder is writing a plan for it.
    Planning,
    /// Its holder is working on it.
    InProgress,
    /// Put aside by its holder.
    Paused,
    /// Done, with an outcome.
    Completed,
    /// Given up, with an error; it can be claimed again.
    Failed,
    /// Will not be done (only the person decides that).
    Skipped,
}

impl TaskStatus {
    /// Every status, in board order.
    pub const ALL: [TaskStatus; 8] = [
        TaskStatus::Pending,
        TaskStatus::Claimed,
        TaskStatus::Planning,
        TaskStatus::InProgress,
        TaskStatus::Paused,
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Skipped,
    ];

    /// The name used on the wire and in the README's table.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::Claimed => "claimed",
            TaskStatus::Planning => "planning",
            TaskStatus::InProgress => "in_progress",
            TaskStatus::Paused => "paused",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Skipped => "skipped",
        }
    }

    /// Parses a wire name.
    pub fn parse(text: &str) -> Option<TaskStatus> {
        TaskStatus::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Whether a task in this status satisfies its dependents.
    pub fn is_done(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Skipped)
    }

    /// Whether an agent holds the task in this status.
    pub fn is_held(self) -> bool {
        matches!(
            self,
            TaskStatus::Claimed
                | TaskStatus::Planning
                | TaskStatus::InProgress
                | TaskStatus::Paused
        )
    }
}

impl std::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An agent registered with `agent_register`. Its `owner` is the awtui
/// identity (the token) that registered it: only that caller may act as it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RegisteredAgent {
    /// `ag_` and 12 hex digits.
    pub id: String,
    pub name: String,
    pub runtime: String,
    pub role: String,
    #[serde(default)]
    pub capabilities: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_path: Option<String>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub metadata: Value,
    /// The awtui agent (or `user`) whose token registered it.
    pub owner: String,
    /// `online`, `busy` or `offline` as the agent said; staleness is
    /// computed from `last_heartbeat`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_task_id: Option<String>,
    pub registered_at: DateTime<Utc>,
    pub last_heartbeat: DateTime<Utc>,
}

/// A workflow: a named plan of tasks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanWorkflow {
    /// `wf_` and 12 hex digits.
    pub id: String,
    pub name: String,
    pub source_type: String,
    #[serde(default)]
    pub source_content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_ref: Option<String>,
    pub max_parallel_tasks: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_summary: Option<String>,
    /// Set once when it was given up (`abandoned`); otherwise the status is
    /// derived from its tasks.
    #[serde(default)]
    pub abandoned: bool,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
}

/// One task of a workflow's plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// `tk_` and 12 hex digits, or the id a workflow file gave it.
    pub id: String,
    pub workflow_id: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Position in the plan (1-based).
    pub sequence: u32,
    /// Ids of the tasks that must be completed (or skipped) first.
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// The awtui agent meant to do it, if the plan says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assignee: Option<String>,
    /// The role meant to do it (matched against registered roles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    pub status: TaskStatus,
    /// The registered agent holding it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub plan: Value,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub context: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub outcome_detail: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// The kinds of checkpoint the seed names.
pub const CHECKPOINT_TYPES: [&str; 6] = [
    "plan", "progress", "decision", "error", "recovery", "complete",
];

/// A step recorded on a task, for recovery and for people.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// `cp_` and 12 hex digits.
    pub id: String,
    pub task_id: String,
    /// 1-based, per task.
    pub sequence: u32,
    #[serde(rename = "type")]
    pub kind: String,
    pub summary: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub detail: Value,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files_changed: Vec<String>,
    /// Who recorded it: a registered agent id, or `user` / `system`.
    pub by: String,
    pub created_at: DateTime<Utc>,
}

/// A workspace (`workspace_create`): a branch, usually in its own git
/// worktree, where the work on some tasks of a workflow happens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanWorkspace {
    /// `ws_` and 12 hex digits.
    pub id: String,
    pub workflow_id: String,
    pub branch: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_branch: Option<String>,
    /// The commit the branch started from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<String>,
    /// The workflow's own repository (the only one its git runs in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_path: Option<String>,
    /// Whether awtui made `branch` for it (`create_worktree`): cleanup only
    /// ever deletes such a branch, never one the user (or anyone) made.
    /// Records from before default to `false`.
    #[serde(default)]
    pub branch_created: bool,
    /// The worktree awtui made for it (until cleaned up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree_path: Option<String>,
    #[serde(default)]
    pub task_ids: Vec<String>,
    /// `active`, `merged` or `abandoned`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_commit: Option<String>,
    /// The agent that made it: only it, a holder of one of its tasks, or
    /// the user may change it.
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// The statuses a workspace can have.
pub const WORKSPACE_STATUSES: [&str; 3] = ["active", "merged", "abandoned"];

/// One durable change: the new state of one record. Replaying them in
/// order (last one per id wins) rebuilds everything.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum Record {
    Agent(RegisteredAgent),
    Workflow(PlanWorkflow),
    Task(Task),
    Checkpoint(Checkpoint),
    Workspace(PlanWorkspace),
}

/// Something that changed on the board, for the engine (waking agents)
/// and front ends (the task board).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TaskEvent {
    /// A task was created or changed.
    TaskChanged(Task),
    /// A registration changed (registered, heartbeat, offline).
    AgentChanged(RegisteredAgent),
    /// A checkpoint was recorded.
    CheckpointAdded(Checkpoint),
    /// A workflow was created or its plan set.
    WorkflowChanged(PlanWorkflow),
    /// A workspace (`workspace_create`) was made or changed (status,
    /// merge commit, worktree cleaned up), so a task's board line can show
    /// where its work happens.
    WorkspaceChanged(PlanWorkspace),
}

/// Everything on the board, for a front end drawing it from scratch.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskSnapshot {
    pub workflows: Vec<PlanWorkflow>,
    /// Every task, workflows oldest first, each in plan order.
    pub tasks: Vec<Task>,
    pub agents: Vec<RegisteredAgent>,
    /// The latest checkpoint of each task that has one.
    pub last_checkpoints: Vec<Checkpoint>,
    /// The workspaces (`workspace_create`), oldest first, each naming its
    /// tasks.
    #[serde(default)]
    pub workspaces: Vec<PlanWorkspace>,
}

impl TaskSnapshot {
    /// Keeps a front end's copy up to date with one change.
    pub fn apply(&mut self, event: TaskEvent) {
        fn upsert<T>(list: &mut Vec<T>, item: T, same: impl Fn(&T, &T) -> bool) {
            match list.iter_mut().find(|x| same(x, &item)) {
                Some(x) => *x = item,
                None => list.push(item),
            }
        }
        match event {
            TaskEvent::TaskChanged(t) => upsert(&mut self.tasks, t, |a, b| a.id == b.id),
            TaskEvent::AgentChanged(a) => upsert(&mut self.agents, a, |x, y| x.id == y.id),
            TaskEvent::WorkflowChanged(w) => upsert(&mut self.workflows, w, |a, b| a.id == b.id),
            TaskEvent::CheckpointAdded(c) => {
                upsert(&mut self.last_checkpoints, c, |a, b| a.task_id == b.task_id)
            }
            TaskEvent::WorkspaceChanged(w) => upsert(&mut self.workspaces, w, |a, b| a.id == b.id),
        }
    }

    /// The workspaces linked to task `task_id`.
    pub fn workspaces_of(&self, task_id: &str) -> impl Iterator<Item = &PlanWorkspace> {
        self.workspaces
            .iter()
            .filter(move |w| w.task_ids.iter().any(|t| t == task_id))
    }
}

/// What the person can do to the board (the same through keys, the
/// command bar and the control endpoint).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum TaskCommand {
    /// Add a task to a workflow (the only one, or the one named); a
    /// workflow named `workflow` is made when there is none.
    Add {
        workflow: Option<String>,
        name: String,
        #[serde(default)]
        description: String,
        #[serde(default)]
        depends_on: Vec<String>,
        assignee: Option<String>,
    },
    /// Give a held task back (recorded as a `recovery` checkpoint).
    Release { task: String },
    /// Move a task (the person may move any task the table allows).
    Status {
        task: String,
        status: String,
        outcome: Option<String>,
        error: Option<String>,
    },
}
