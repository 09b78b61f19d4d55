//! The caw protocol's tools (seed `caw-agent-protocol.md`) on awtui's MCP
//! server, acting on the instance's [`TaskBoard`] as the caller's identity.
//! Parameter names and response shapes follow the seed; where it is
//! silent they follow caw. Errors carry the seed's codes.

use chrono::Utc;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::tool::{Example, Scope, define_tool};
use super::tools::ToolError;
use crate::tasks::budget::{self, Include};
use crate::tasks::{PlannedTask, TaskBoard, TaskError, TaskEvent, TaskStore};

impl From<TaskError> for ToolError {
    fn from(e: TaskError) -> Self {
        ToolError::Coded {
            code: e.code(),
            message: e.to_string(),
        }
    }
}

/// The caw tools, in the order `tools/list` shows them (derived from
/// [`super::registry::TOOLS`]: the tools a task board alone runs).
pub const NAMES: [&str; super::registry::board_tool_count()] = super::registry::board_tool_names();

/// Runs caw tool `name` for `caller` on `board` alone.
pub fn call(
    board: &TaskBoard,
    caller: &str,
    name: &str,
    args: Option<Map<String, Value>>,
) -> Result<Value, ToolError> {
    super::registry::call(Scope::Board(board), caller, name, args)
}

/// `agent_register`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RegisterArgs {
    /// A human-friendly name.
    name: String,
    /// Your runtime: claude_code, codex, opencode, gemini, cursor or custom.
    runtime: String,
    /// coordinator or worker (default worker).
    role: Option<String>,
    /// Such as typescript, testing.
    #[serde(default)]
    capabilities: Vec<String>,
    /// Where you work.
    workspace_path: Option<String>,
    /// Anything else about you, kept with your registration.
    metadata: Option<Map<String, Value>>,
}

/// `agent_heartbeat`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct HeartbeatArgs {
    /// Your id from agent_register.
    agent_id: String,
    /// The task you work on.
    current_task_id: Option<String>,
    /// online or busy.
    status: Option<String>,
}

/// `agent_unregister`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct IdArgs {
    /// Your id from agent_register.
    id: String,
}

/// `workflow_create`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateArgs {
    /// Workflow name.
    name: String,
    /// prompt, github_issue, linear, jira or custom (default prompt).
    source_type: Option<String>,
    /// The prompt or issue the work comes from.
    source_content: Option<String>,
    /// A URL or identifier of the source.
    source_ref: Option<String>,
    /// Tasks worked on at once (default 1).
    #[schemars(range(min = 1))]
    max_parallel_tasks: Option<u32>,
}

/// One task of the plan.
// (Informational fields are checked and not kept.)
#[derive(Deserialize, JsonSchema)]
pub(super) struct PlanTaskArgs {
    /// Unique within the plan.
    name: String,
    /// What to do.
    #[serde(default)]
    description: String,
    /// Names of tasks that must be completed first.
    #[serde(default)]
    depends_on: Vec<String>,
    /// The agent meant to do it.
    assignee: Option<String>,
    /// The role meant to do it.
    role: Option<String>,
    /// Informational.
    #[expect(dead_code, reason = "informational: checked, not kept")]
    parallel_group: Option<String>,
    /// low, medium or high.
    #[expect(dead_code, reason = "informational: checked, not kept")]
    estimated_complexity: Option<String>,
    /// Informational.
    #[expect(dead_code, reason = "informational: checked, not kept")]
    files_likely_affected: Option<Vec<String>>,
}

/// `workflow_set_plan`'s plan.
#[derive(Deserialize, JsonSchema)]
pub(super) struct PlanArgs {
    /// A brief description.
    #[serde(default)]
    summary: String,
    /// Every task, in plan order.
    tasks: Vec<PlanTaskArgs>,
}

/// `workflow_set_plan`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SetPlanArgs {
    /// Workflow id.
    id: String,
    /// The summary and every task.
    plan: PlanArgs,
}

/// `workflow_list`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ListArgs {
    /// Only this status or these statuses: a string ("in_progress") or a
    /// list (["in_progress", "ready"]).
    status: Option<OneOrMany>,
    /// Default 20.
    #[schemars(range(min = 1))]
    limit: Option<usize>,
    /// How many to skip first (default 0).
    offset: Option<usize>,
}

/// A string or a list of strings (`workflow_list`'s `status`: the seed's
/// code passes a list, its prose a single status).
#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
pub(super) enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn contains(&self, x: &str) -> bool {
        match self {
            OneOrMany::One(s) => s == x,
            OneOrMany::Many(all) => all.iter().any(|s| s == x),
        }
    }
}

/// `workflow_progress`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct WorkflowIdArgs {
    /// Workflow id.
    workflow_id: String,
}

/// `workflow_next_tasks`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct NextArgs {
    /// Workflow id.
    workflow_id: String,
    /// Also failed tasks, to retry (default false).
    include_failed: Option<bool>,
}

/// `task_claim`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ClaimArgs {
    /// Task id (tk_…).
    task_id: String,
    /// Your id from agent_register.
    agent_id: String,
}

/// What `task_load_context` includes (each has a default).
#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct IncludeArgs {
    /// The workflow's plan (default true).
    workflow_plan: Option<bool>,
    /// Outcomes of the workflow's other completed tasks (default true).
    prior_task_outcomes: Option<bool>,
    /// Outcomes of the tasks this one depends on (default true).
    dependency_outcomes: Option<bool>,
    /// How many of the task's newest checkpoints (default 5).
    recent_checkpoints: Option<usize>,
    /// Every checkpoint of the task (default false).
    all_checkpoints: Option<bool>,
}

/// `task_load_context`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct LoadArgs {
    /// Task id.
    task_id: String,
    /// What to include (each part has a default).
    include: Option<IncludeArgs>,
    /// The budget in tokens (default 8000).
    #[schemars(range(min = 1))]
    max_tokens: Option<usize>,
}

/// The shape of `task_set_plan`'s plan: checked, then kept as given.
#[derive(Deserialize, JsonSchema)]
#[expect(dead_code, reason = "read only to check the plan's shape")]
struct TaskPlan {
    /// How you will do it.
    approach: String,
    /// The steps.
    steps: Option<Vec<String>>,
    /// Files you will change.
    files_to_modify: Option<Vec<String>>,
    /// Files you will create.
    files_to_create: Option<Vec<String>>,
    /// What you need to know or have first.
    context_needed: Option<Vec<String>>,
}

/// `task_set_plan`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct TaskPlanArgs {
    /// Task id.
    id: String,
    /// Your approach.
    #[schemars(with = "TaskPlan")]
    plan: Value,
    /// Anything else to keep with the task.
    context: Option<Map<String, Value>>,
}

/// `task_update_status`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct StatusArgs {
    /// Task id.
    id: String,
    /// The new status.
    status: String,
    /// Required for completed: what was done.
    outcome: Option<String>,
    /// Details of the outcome, kept with the task.
    outcome_detail: Option<Map<String, Value>>,
    /// Required for failed: what went wrong.
    error: Option<String>,
}

/// `checkpoint_add`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CheckpointArgs {
    /// Task id.
    task_id: String,
    /// plan, progress, decision, error, recovery or complete.
    #[serde(rename = "type")]
    kind: String,
    /// What happened.
    summary: String,
    /// Details, kept with the checkpoint.
    detail: Option<Map<String, Value>>,
    /// Files touched.
    #[serde(default)]
    files_changed: Vec<String>,
}

/// An optional JSON object argument as the store keeps it (null when
/// absent).
fn object(value: Option<Map<String, Value>>) -> Value {
    value.map(Value::Object).unwrap_or_default()
}

/// A workflow as lists show it.
fn workflow_json(store: &TaskStore, w: &crate::tasks::PlanWorkflow) -> Value {
    let (total, done) = store.counts(&w.id);
    json!({
        "id": w.id,
        "name": w.name,
        "status": store.workflow_status(w),
        "summary": w.plan_summary,
        "source_type": w.source_type,
        "max_parallel_tasks": w.max_parallel_tasks,
        "total_tasks": total,
        "completed_tasks": done,
        "created_at": w.created_at,
    })
}

/// `workflow_progress`'s answer (also `awtui tasks --json`).
pub fn progress_json(store: &TaskStore, workflow_id: &str) -> Result<Value, TaskError> {
    let w = store
        .workflow(workflow_id)
        .ok_or_else(|| TaskError::WorkflowNotFound {
            id: workflow_id.to_string(),
        })?;
    let tasks = store.tasks_of(workflow_id);
    let mut by_status = Map::new();
    for t in &tasks {
        let n = by_status
            .get(t.status.as_str())
            .and_then(Value::as_u64)
            .unwrap_or(0);
        by_status.insert(t.status.as_str().to_string(), json!(n + 1));
    }
    let blocked: Vec<Value> = tasks
        .iter()
        .filter(|t| !t.status.is_done())
        .filter_map(|t| {
            let by = store.blocked_by(t);
            (!by.is_empty()).then(|| {
                json!({"id": t.id, "name": t.name, "blocked_by": by.iter().map(|d| &d.id).collect::<Vec<_>>()})
            })
        })
        .collect();
    let held: Vec<Value> = tasks
        .iter()
        .filter(|t| t.status.is_held())
        .map(
            |t| json!({"id": t.id, "name": t.name, "status": t.status, "claimed_by": t.claimed_by}),
        )
        .collect();
    Ok(json!({
        "workflow_id": w.id,
        "workflow_status": store.workflow_status(w),
        "total_tasks": tasks.len(),
        "by_status": by_status,
        "blocked_tasks": blocked,
        "in_progress": held,
        "estimated_remaining": tasks.iter().filter(|t| !t.status.is_done()).count(),
    }))
}

/// A claim that cannot be taken, as the seed answers it: `{success: false}`
/// with the reason (`code` and a sentence `reason`), whatever the store
/// refused it for (a task that is not pending or failed, open
/// dependencies, someone else's registration, an offline agent, …). Only
/// the seed's error codes for `task_claim` (`TASK_NOT_FOUND`,
/// `AGENT_NOT_FOUND`: the call named nothing that exists) and a failure to
/// save (the claim might succeed on a retry) stay tool errors.
fn claim_refused(e: TaskError) -> Result<Value, ToolError> {
    match e {
        TaskError::TaskNotFound { .. }
        | TaskError::AgentNotFound { .. }
        | TaskError::Storage(_) => Err(e.into()),
        e => Ok(json!({
            "success": false,
            "code": e.code(),
            "reason": e.to_string(),
        })),
    }
}

define_tool! {
    /// Registers the caller for task work.
    AgentRegister = "agent_register", RegisterArgs, TaskBoard,
    "Register yourself for task work (step 1 of the task lifecycle). Returns your agent \
     id (ag_…), which task_claim and agent_heartbeat take. Registering again returns the \
     same id.",
    example: Example {
        returns: r#"{"id":"ag_0f3a9c2b7d1e","name":"coder","status":"online"}"#,
        otherwise: None,
    },
    |board, caller, a| {
        let now = Utc::now();
        let agent = board.change_by(caller, |s| {
            match s.register(
                caller,
                &a.name,
                &a.runtime,
                a.role.as_deref(),
                a.capabilities,
                a.workspace_path,
                object(a.metadata),
                now,
            ) {
                Ok(agent) => (Ok(agent.clone()), vec![TaskEvent::AgentChanged(agent)]),
                Err(e) => (Err(e), vec![]),
            }
        })?;
        Ok(json!({"id": agent.id, "name": agent.name, "status": agent.status}))
    }
}

define_tool! {
    /// Keeps the caller's registration alive.
    AgentHeartbeat = "agent_heartbeat", HeartbeatArgs, TaskBoard,
    "Tell the board you are alive (every next_heartbeat_ms while you work). A holder \
     silent for too long may lose its claim.",
    example: Example {
        returns: r#"{"success":true,"next_heartbeat_ms":30000}"#,
        otherwise: None,
    },
    |board, caller, a| {
        let now = Utc::now();
        board.change_by(caller, |s| {
            let r = s.heartbeat(
                caller,
                &a.agent_id,
                a.current_task_id,
                a.status.as_deref(),
                now,
            );
            let events = s
                .agent(&a.agent_id)
                .filter(|_| r.is_ok())
                .map(|ag| vec![TaskEvent::AgentChanged(ag.clone())])
                .unwrap_or_default();
            (r, events)
        })?;
        Ok(json!({"success": true, "next_heartbeat_ms": crate::tasks::store::HEARTBEAT_MS}))
    }
}

define_tool! {
    /// Takes the caller off the board, releasing what it holds.
    AgentUnregister = "agent_unregister", IdArgs, TaskBoard,
    "Leave: you are marked offline and tasks you hold go back to pending.",
    example: Example {
        returns: r#"{"success":true}"#,
        otherwise: None,
    },
    |board, caller, a| {
        let now = Utc::now();
        board.change_by(caller, |s| match s.unregister(caller, &a.id, now) {
            Ok(released) => {
                let mut events: Vec<TaskEvent> =
                    released.into_iter().map(TaskEvent::TaskChanged).collect();
                if let Some(ag) = s.agent(&a.id) {
                    events.push(TaskEvent::AgentChanged(ag.clone()));
                }
                (Ok(()), events)
            }
            Err(e) => (Err(e), vec![]),
        })?;
        Ok(json!({"success": true}))
    }
}

define_tool! {
    /// Creates a workflow (a plan of tasks).
    WorkflowCreate = "workflow_create", CreateArgs, TaskBoard,
    "Create a workflow (a plan of tasks) to split work among agents. Returns its id (wf_…).",
    example: Example {
        returns: r#"{"id":"wf_5b2e8a0c4f71","name":"refactor","status":"planning","max_parallel_tasks":3}"#,
        otherwise: None,
    },
    |board, caller, a| {
        let now = Utc::now();
        let w = board.change_by(caller, |s| {
            match s.create_workflow(
                caller,
                &a.name,
                a.source_type.as_deref().unwrap_or("prompt"),
                a.source_content.as_deref().unwrap_or_default(),
                a.source_ref,
                a.max_parallel_tasks.unwrap_or(1),
                now,
            ) {
                Ok(w) => (Ok(w.clone()), vec![TaskEvent::WorkflowChanged(w)]),
                Err(e) => (Err(e), vec![]),
            }
        })?;
        Ok(
            json!({"id": w.id, "name": w.name, "status": "planning", "max_parallel_tasks": w.max_parallel_tasks}),
        )
    }
}

define_tool! {
    /// Sets a workflow's whole plan.
    WorkflowSetPlan = "workflow_set_plan", SetPlanArgs, TaskBoard,
    "Set a workflow's plan: every task at once, with dependencies by task name. Agents \
     allowed to take the tasks that can start are woken.",
    example: Example {
        returns: r#"{"success":true,"tasks":[{"id":"tk_9d04c1e7a2b3","name":"tests","depends_on":[]}]}"#,
        otherwise: None,
    },
    |board, caller, a| {
        let now = Utc::now();
        let planned: Vec<PlannedTask> = a
            .plan
            .tasks
            .into_iter()
            .map(|t| PlannedTask {
                id: None,
                name: t.name,
                description: t.description,
                depends_on: t.depends_on,
                assignee: t.assignee,
                role: t.role,
            })
            .collect();
        let tasks = board.change_by(caller, |s| {
            match s.set_plan(&a.id, &a.plan.summary, &planned, now) {
                Ok(tasks) => {
                    let mut events: Vec<TaskEvent> =
                        tasks.iter().cloned().map(TaskEvent::TaskChanged).collect();
                    if let Some(w) = s.workflow(&a.id) {
                        events.push(TaskEvent::WorkflowChanged(w.clone()));
                    }
                    (Ok(tasks), events)
                }
                Err(e) => (Err(e), vec![]),
            }
        })?;
        Ok(json!({
            "success": true,
            "tasks": tasks.iter().map(|t| json!({"id": t.id, "name": t.name, "depends_on": t.depends_on})).collect::<Vec<_>>(),
        }))
    }
}

define_tool! {
    /// Lists workflows with their status.
    WorkflowList = "workflow_list", ListArgs, TaskBoard,
    "Workflows with their status (planning, ready, in_progress, completed) and counts. \
     For context recovery: list in_progress ones, then workflow_progress.",
    read_only: true,
    example: Example {
        returns: r#"{"workflows":[{"id":"wf_5b2e8a0c4f71","name":"refactor","status":"in_progress","summary":"","source_type":"prompt","max_parallel_tasks":3,"total_tasks":2,"completed_tasks":1,"created_at":"2026-01-05T10:00:00Z"}],"total":1}"#,
        otherwise: None,
    },
    |board, _caller, a| {
        Ok(board.read(|s| {
            let all: Vec<Value> = s
                .workflows()
                .into_iter()
                .map(|w| workflow_json(s, w))
                .filter(|w| {
                    a.status.as_ref().is_none_or(|want| {
                        w["status"].as_str().is_some_and(|s| want.contains(s))
                    })
                })
                .collect();
            let total = all.len();
            let page: Vec<Value> = all
                .into_iter()
                .skip(a.offset.unwrap_or(0))
                .take(a.limit.unwrap_or(20))
                .collect();
            json!({"workflows": page, "total": total})
        }))
    }
}

define_tool! {
    /// One workflow's progress.
    WorkflowProgress = "workflow_progress", WorkflowIdArgs, TaskBoard,
    "A workflow's progress: tasks per status, blocked tasks and what blocks them, who holds what.",
    read_only: true,
    example: Example {
        returns: r#"{"workflow_id":"wf_5b2e8a0c4f71","workflow_status":"in_progress","total_tasks":2,"by_status":{"completed":1,"in_progress":1},"blocked_tasks":[{"id":"tk_2","name":"docs","blocked_by":["tk_1"]}],"in_progress":[{"id":"tk_1","name":"tests","status":"in_progress","claimed_by":"ag_0f3a9c2b7d1e"}],"estimated_remaining":1}"#,
        otherwise: None,
    },
    |board, _caller, a| Ok(board.read(|s| progress_json(s, &a.workflow_id))?)
}

define_tool! {
    /// The tasks the caller can claim now.
    WorkflowNextTasks = "workflow_next_tasks", NextArgs, TaskBoard,
    "Tasks you can claim now: pending, not held, every dependency completed (with \
     include_failed, failed ones too), in plan order.",
    read_only: true,
    example: Example {
        returns: r#"{"tasks":[{"id":"tk_9d04c1e7a2b3","workflow_id":"wf_5b2e8a0c4f71","name":"tests","description":"","depends_on":[],"status":"pending","sequence":1,"created_at":"2026-01-05T10:00:00Z","updated_at":"2026-01-05T10:00:00Z"}],"max_parallel":3,"recommended_count":1,"workflow_status":"ready","all_complete":false}"#,
        otherwise: None,
    },
    |board, _caller, a| {
        Ok(board.read(|s| -> Result<Value, TaskError> {
            let w = s
                .workflow(&a.workflow_id)
                .ok_or_else(|| TaskError::WorkflowNotFound {
                    id: a.workflow_id.clone(),
                })?;
            let ready = s.ready(&a.workflow_id, a.include_failed.unwrap_or(false));
            let all_complete = s.is_complete(&w.id);
            Ok(json!({
                "tasks": ready,
                "max_parallel": w.max_parallel_tasks,
                "recommended_count": ready.len().min(w.max_parallel_tasks as usize),
                "workflow_status": s.workflow_status(w),
                "all_complete": all_complete,
            }))
        })?)
    }
}

define_tool! {
    /// Claims a task atomically.
    TaskClaim = "task_claim", ClaimArgs, TaskBoard,
    "Claim a task atomically. {success: true} makes it yours; {success: false, \
     already_claimed_by} means another agent was first: take the next one. Any other \
     claim that cannot be taken (a task not pending, open dependencies, an agent id \
     that is not yours or is offline) is {success: false, code, reason}.",
    example: Example {
        returns: r#"{"success":true}"#,
        otherwise: Some(r#"{"success":false,"already_claimed_by":"ag_7c1d2e3f4a5b","code":"ALREADY_CLAIMED","reason":"task 'tk_9d04c1e7a2b3' is already claimed by ag_7c1d2e3f4a5b"}"#),
    },
    |board, caller, a| {
        let now = Utc::now();
        let result = board.change_by(caller, |s| {
            match s.claim(caller, &a.task_id, &a.agent_id, now) {
                Ok(Ok(task)) => (Ok(Ok(())), vec![TaskEvent::TaskChanged(task)]),
                Ok(Err(holder)) => (Ok(Err(holder)), vec![]),
                Err(e) => (Err(e), vec![]),
            }
        });
        match result {
            Ok(Ok(())) => Ok(json!({"success": true})),
            Ok(Err(holder)) => Ok(json!({
                "success": false,
                "already_claimed_by": holder,
                "code": "ALREADY_CLAIMED",
                "reason": format!("task '{}' is already claimed by {holder}", a.task_id),
            })),
            Err(e) => claim_refused(e),
        }
    }
}

define_tool! {
    /// Everything needed for a task, within a token budget.
    TaskLoadContext = "task_load_context", LoadArgs, TaskBoard,
    "Everything you need for a task within max_tokens (default 8000; the whole \
     result's compact JSON counted as characters / 4): the task, its checkpoints, \
     dependency outcomes, the plan, prior outcomes; says what it left out.",
    read_only: true,
    example: Example {
        returns: r#"{"current_task":{"id":"tk_9d04c1e7a2b3","name":"tests","description":"","status":"claimed","claimed_by":"ag_0f3a9c2b7d1e","assignee":null,"role":null,"depends_on":[],"plan":null,"context":null,"outcome":null,"error":null,"checkpoints":[],"checkpoints_total":0},"workflow":{"id":"wf_5b2e8a0c4f71","name":"refactor","status":"in_progress","summary":"","source_content":"","tasks":[{"id":"tk_9d04c1e7a2b3","name":"tests","status":"claimed","depends_on":[]}]},"prior_tasks":[],"dependency_outcomes":[],"max_tokens":8000,"token_estimate":190,"tokens_counted_as":"characters of the whole result's compact JSON / 4","over_budget":false,"description_shortened":false,"shortened":[],"omitted":{}}"#,
        otherwise: None,
    },
    |board, _caller, a| {
        let inc = a.include.unwrap_or_default();
        let d = Include::default();
        let include = Include {
            workflow_plan: inc.workflow_plan.unwrap_or(d.workflow_plan),
            prior_task_outcomes: inc.prior_task_outcomes.unwrap_or(d.prior_task_outcomes),
            dependency_outcomes: inc.dependency_outcomes.unwrap_or(d.dependency_outcomes),
            recent_checkpoints: inc.recent_checkpoints.unwrap_or(d.recent_checkpoints),
            all_checkpoints: inc.all_checkpoints.unwrap_or(d.all_checkpoints),
        };
        let max = a.max_tokens.unwrap_or(budget::DEFAULT_MAX_TOKENS).max(1);
        Ok(board.read(|s| -> Result<Value, TaskError> {
            let task = s.task(&a.task_id).ok_or_else(|| TaskError::TaskNotFound {
                id: a.task_id.clone(),
            })?;
            Ok(budget::load(s, task, &include, max))
        })?)
    }
}

define_tool! {
    /// Records the caller's approach to a task it holds.
    TaskSetPlan = "task_set_plan", TaskPlanArgs, TaskBoard,
    "Record your approach for a task you hold (kept as a plan checkpoint).",
    example: Example {
        returns: r#"{"success":true}"#,
        otherwise: None,
    },
    |board, caller, a| {
        let now = Utc::now();
        if let Err(e) = TaskPlan::deserialize(&a.plan) {
            return Err(ToolError::Invalid(format!(
                "{}: invalid arguments: plan must be an object with `approach` (and \
                 optionally `steps`): {e}",
                TaskSetPlan::NAME
            )));
        }
        board.change_by(caller, |s| {
            match s.set_task_plan(caller, &a.id, a.plan, object(a.context), now) {
                Ok(t) => (Ok(()), crate::tasks::with_last_checkpoint(s, t)),
                Err(e) => (Err(e), vec![]),
            }
        })?;
        Ok(json!({"success": true}))
    }
}

define_tool! {
    /// Moves a task the caller holds.
    TaskUpdateStatus = "task_update_status", StatusArgs, TaskBoard,
    "Move a task you hold: claimed → planning | in_progress; in_progress → paused | \
     completed (needs outcome) | failed (needs error); paused → in_progress. Anything \
     else is INVALID_TRANSITION.",
    example: Example {
        returns: r#"{"success":true,"id":"tk_9d04c1e7a2b3","status":"completed"}"#,
        otherwise: None,
    },
    |board, caller, a| {
        let now = Utc::now();
        let task = board.change_by(caller, |s| {
            match s.update_status(
                caller,
                &a.id,
                &a.status,
                a.outcome,
                object(a.outcome_detail),
                a.error,
                now,
            ) {
                Ok(t) => {
                    let mut events = vec![TaskEvent::TaskChanged(t.clone())];
                    if t.status.is_done() || t.status == crate::tasks::TaskStatus::Failed {
                        events.extend(
                            s.checkpoints(&t.id)
                                .last()
                                .cloned()
                                .map(TaskEvent::CheckpointAdded),
                        );
                    }
                    (Ok(t), events)
                }
                Err(e) => (Err(e), vec![]),
            }
        })?;
        Ok(json!({"success": true, "id": task.id, "status": task.status}))
    }
}

define_tool! {
    /// Records progress on a task the caller holds.
    CheckpointAdd = "checkpoint_add", CheckpointArgs, TaskBoard,
    "Record progress on a task you hold, for recovery: type plan, progress, decision, \
     error, recovery or complete.",
    example: Example {
        returns: r#"{"id":"cp_1a2b3c4d5e6f","sequence":1,"task_id":"tk_9d04c1e7a2b3"}"#,
        otherwise: None,
    },
    |board, caller, a| {
        let now = Utc::now();
        let cp = board.change_by(caller, |s| {
            match s.add_checkpoint(
                caller,
                &a.task_id,
                &a.kind,
                &a.summary,
                object(a.detail),
                a.files_changed,
                now,
            ) {
                Ok(cp) => (Ok(cp.clone()), vec![TaskEvent::CheckpointAdded(cp)]),
                Err(e) => (Err(e), vec![]),
            }
        })?;
        Ok(json!({"id": cp.id, "sequence": cp.sequence, "task_id": cp.task_id}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 23 (7): any refusal of a claim (whatever variant the store
    /// adds, such as an offline agent's) is the seed's `{success: false}`
    /// with its code and reason; only the seed's not-found codes and a
    /// failure to save stay tool errors.
    #[test]
    fn every_claim_refusal_is_success_false_with_code_and_reason() {
        let refused =
            claim_refused(TaskError::InvalidState("agent 'ag_1' is offline".into())).unwrap();
        assert_eq!(
            refused,
            json!({"success": false, "code": "INVALID_STATE", "reason": "agent 'ag_1' is offline"})
        );
        let not_yours = claim_refused(TaskError::NotYours {
            agent_id: "ag_1".into(),
            owner: "a".into(),
            caller: "b".into(),
        })
        .unwrap();
        assert_eq!(not_yours["code"], "PERMISSION_DENIED");
        for e in [
            TaskError::TaskNotFound { id: "tk_x".into() },
            TaskError::AgentNotFound { id: "ag_x".into() },
            TaskError::Storage("disk full".into()),
        ] {
            let code = e.code();
            match claim_refused(e) {
                Err(ToolError::Coded { code: c, .. }) => assert_eq!(c, code),
                other => panic!("{code}: {other:?}"),
            }
        }
    }

    /// Issue 24 (7): a plan is checked against the shape its schema shows
    /// (`approach` required), then kept as given; an object argument must
    /// be an object, as its schema says.
    #[test]
    fn arguments_are_checked_against_the_schema_they_are_listed_with() {
        let board = TaskBoard::default();
        let run = |name: &str, args: Value| call(&board, "coder", name, args.as_object().cloned());
        let agent = run("agent_register", json!({"name": "c", "runtime": "custom"})).unwrap();
        let wf = run("workflow_create", json!({"name": "w"})).unwrap();
        let plan =
            json!({"id": wf["id"], "plan": {"tasks": [{"name": "a", "parallel_group": "x"}]}});
        let tasks = run("workflow_set_plan", plan).unwrap();
        let task = tasks["tasks"][0]["id"].clone();
        run(
            "task_claim",
            json!({"task_id": task, "agent_id": agent["id"]}),
        )
        .unwrap();
        for bad in [
            json!({"id": task, "plan": {"steps": ["one"]}}),
            json!({"id": task, "plan": "just do it"}),
            json!({"id": task, "plan": {"approach": "x"}, "context": "not an object"}),
        ] {
            let e = run("task_set_plan", bad.clone()).unwrap_err();
            assert!(matches!(e, ToolError::Invalid(_)), "{bad}: {e:?}");
        }
        let given = json!({"approach": "draw it", "steps": ["a"], "notes": {"kept": true}});
        run("task_set_plan", json!({"id": task, "plan": given})).unwrap();
        let kept = board.read(|s| s.task(task.as_str().unwrap()).unwrap().plan.clone());
        assert_eq!(kept, given);
        let e = run(
            "workflow_set_plan",
            json!({"id": wf["id"], "plan": {"tasks": [{"name": "b", "parallel_group": 3}]}}),
        );
        assert!(matches!(e, Err(ToolError::Invalid(_))), "{e:?}");
    }

    /// Issue 23 (7): without `create_worktree`, `workspace_create` records
    /// the workspace and makes nothing in git (the branch is not created;
    /// `tests/it/workspaces.rs` checks the behaviour). What the tool and the
    /// README say agrees with that.
    #[test]
    fn workspace_create_is_documented_as_record_only_without_create_worktree() {
        let spec = super::super::registry::specs()
            .into_iter()
            .find(|s| s.name == "workspace_create")
            .unwrap();
        assert!(!spec.description.contains("  "), "{}", spec.description);
        assert!(
            spec.description
                .to_lowercase()
                .contains("without create_worktree the workspace is only recorded"),
            "{}",
            spec.description
        );
        let readme = include_str!("../../docs/workspaces.md");
        let start = readme.find("**caw's workspace tools**").unwrap();
        let para = &readme[start..start + 700];
        assert!(
            !para.contains("makes the\n  branch and, when asked, a worktree"),
            "{para}"
        );
        assert!(para.contains("Without `create_worktree`"), "{para}");
    }
}
