//! The caw protocol's tools (seed `caw-agent-protocol.md`) on awtui's MCP
//! server, acting on the instance's [`TaskBoard`] as the caller's identity.
//! Parameter names and response shapes follow the seed; where it is
//! silent they follow caw. Errors carry the seed's codes.

use chrono::Utc;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::tools::{ToolError, ToolSpec};
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

/// The caw tools, in the order `tools/list` shows them.
pub const NAMES: [&str; 15] = [
    "agent_register",
    "agent_heartbeat",
    "agent_unregister",
    "workflow_create",
    "workflow_set_plan",
    "workflow_list",
    "workflow_progress",
    "workflow_next_tasks",
    "task_claim",
    "task_load_context",
    "task_set_plan",
    "task_update_status",
    "checkpoint_add",
    "workspace_create",
    "workspace_update",
];

/// Whether `name` is one of the caw tools.
pub fn is_task_tool(name: &str) -> bool {
    NAMES.contains(&name)
}

fn schema(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn s(what: &str) -> Value {
    json!({"type": "string", "description": what})
}

fn spec(
    name: &'static str,
    description: &'static str,
    input_schema: Value,
    read_only: bool,
) -> ToolSpec {
    ToolSpec {
        name,
        description,
        input_schema,
        read_only,
        destructive: false,
    }
}

/// Every caw tool's description.
pub fn specs() -> Vec<ToolSpec> {
    let strings =
        |what: &str| json!({"type": "array", "items": {"type": "string"}, "description": what});
    vec![
        spec(
            "agent_register",
            "Register yourself for task work (step 1 of the task lifecycle). Returns your agent \
             id (ag_…), which task_claim and agent_heartbeat take. Registering again returns the \
             same id.",
            schema(
                json!({
                    "name": s("A human-friendly name."),
                    "runtime": s("Your runtime: claude_code, codex, opencode, gemini, cursor or custom."),
                    "role": s("coordinator or worker (default worker)."),
                    "capabilities": strings("Such as typescript, testing."),
                    "workspace_path": s("Where you work."),
                    "metadata": {"type": "object"},
                }),
                &["name", "runtime"],
            ),
            false,
        ),
        spec(
            "agent_heartbeat",
            "Tell the board you are alive (every next_heartbeat_ms while you work). A holder \
             silent for too long may lose its claim.",
            schema(
                json!({
                    "agent_id": s("Your id from agent_register."),
                    "current_task_id": s("The task you work on."),
                    "status": s("online or busy."),
                }),
                &["agent_id"],
            ),
            false,
        ),
        spec(
            "agent_unregister",
            "Leave: you are marked offline and tasks you hold go back to pending.",
            schema(json!({"id": s("Your id from agent_register.")}), &["id"]),
            false,
        ),
        spec(
            "workflow_create",
            "Create a workflow (a plan of tasks) to split work among agents. Returns its id (wf_…).",
            schema(
                json!({
                    "name": s("Workflow name."),
                    "source_type": s("prompt, github_issue, linear, jira or custom (default prompt)."),
                    "source_content": s("The prompt or issue the work comes from."),
                    "source_ref": s("A URL or identifier of the source."),
                    "max_parallel_tasks": {"type": "integer", "minimum": 1, "description": "Tasks worked on at once (default 1)."},
                }),
                &["name"],
            ),
            false,
        ),
        spec(
            "workflow_set_plan",
            "Set a workflow's plan: every task at once, with dependencies by task name. Agents \
             allowed to take the tasks that can start are woken.",
            schema(
                json!({
                    "id": s("Workflow id."),
                    "plan": {
                        "type": "object",
                        "properties": {
                            "summary": s("A brief description."),
                            "tasks": {"type": "array", "items": {
                                "type": "object",
                                "properties": {
                                    "name": s("Unique within the plan."),
                                    "description": s("What to do."),
                                    "depends_on": strings("Names of tasks that must be completed first."),
                                    "assignee": s("The agent meant to do it."),
                                    "role": s("The role meant to do it."),
                                    "parallel_group": s("Informational."),
                                    "estimated_complexity": s("low, medium or high."),
                                    "files_likely_affected": strings("Informational."),
                                },
                                "required": ["name"],
                            }},
                        },
                        "required": ["tasks"],
                    },
                }),
                &["id", "plan"],
            ),
            false,
        ),
        spec(
            "workflow_list",
            "Workflows with their status (planning, ready, in_progress, completed) and counts. \
             For context recovery: list in_progress ones, then workflow_progress.",
            schema(
                json!({
                    "status": {
                        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
                        "description": "Only this status or these statuses: a string (\"in_progress\") or a list ([\"in_progress\", \"ready\"]).",
                    },
                    "limit": {"type": "integer", "minimum": 1, "description": "Default 20."},
                    "offset": {"type": "integer", "minimum": 0},
                }),
                &[],
            ),
            true,
        ),
        spec(
            "workflow_progress",
            "A workflow's progress: tasks per status, blocked tasks and what blocks them, who holds what.",
            schema(json!({"workflow_id": s("Workflow id.")}), &["workflow_id"]),
            true,
        ),
        spec(
            "workflow_next_tasks",
            "Tasks you can claim now: pending, not held, every dependency completed (with \
             include_failed, failed ones too), in plan order.",
            schema(
                json!({
                    "workflow_id": s("Workflow id."),
                    "include_failed": {"type": "boolean", "description": "Also failed tasks, to retry (default false)."},
                }),
                &["workflow_id"],
            ),
            true,
        ),
        spec(
            "task_claim",
            "Claim a task atomically. {success: true} makes it yours; {success: false, \
             already_claimed_by} means another agent was first: take the next one. Any other \
             claim that cannot be taken (a task not pending, open dependencies, an agent id \
             that is not yours or is offline) is {success: false, code, reason}.",
            schema(
                json!({"task_id": s("Task id (tk_…)."), "agent_id": s("Your id from agent_register.")}),
                &["task_id", "agent_id"],
            ),
            false,
        ),
        spec(
            "task_load_context",
            "Everything you need for a task within max_tokens (default 8000; the whole \
             result's compact JSON counted as characters / 4): the task, its checkpoints, \
             dependency outcomes, the plan, prior outcomes; says what it left out.",
            schema(
                json!({
                    "task_id": s("Task id."),
                    "include": {
                        "type": "object",
                        "properties": {
                            "workflow_plan": {"type": "boolean"},
                            "prior_task_outcomes": {"type": "boolean"},
                            "dependency_outcomes": {"type": "boolean"},
                            "recent_checkpoints": {"type": "integer", "minimum": 0},
                            "all_checkpoints": {"type": "boolean"},
                        },
                        "additionalProperties": false,
                    },
                    "max_tokens": {"type": "integer", "minimum": 1},
                }),
                &["task_id"],
            ),
            true,
        ),
        spec(
            "task_set_plan",
            "Record your approach for a task you hold (kept as a plan checkpoint).",
            schema(
                json!({
                    "id": s("Task id."),
                    "plan": {
                        "type": "object",
                        "properties": {
                            "approach": s("How you will do it."),
                            "steps": strings("The steps."),
                            "files_to_modify": strings(""),
                            "files_to_create": strings(""),
                            "context_needed": strings(""),
                        },
                        "required": ["approach"],
                    },
                    "context": {"type": "object", "description": "Anything else to keep with the task."},
                }),
                &["id", "plan"],
            ),
            false,
        ),
        spec(
            "task_update_status",
            "Move a task you hold: claimed → planning | in_progress; in_progress → paused | \
             completed (needs outcome) | failed (needs error); paused → in_progress. Anything \
             else is INVALID_TRANSITION.",
            schema(
                json!({
                    "id": s("Task id."),
                    "status": s("The new status."),
                    "outcome": s("Required for completed: what was done."),
                    "outcome_detail": {"type": "object"},
                    "error": s("Required for failed: what went wrong."),
                }),
                &["id", "status"],
            ),
            false,
        ),
        spec(
            "checkpoint_add",
            "Record progress on a task you hold, for recovery: type plan, progress, decision, \
             error, recovery or complete.",
            schema(
                json!({
                    "task_id": s("Task id."),
                    "type": s("plan, progress, decision, error, recovery or complete."),
                    "summary": s("What happened."),
                    "detail": {"type": "object"},
                    "files_changed": strings("Files touched."),
                }),
                &["task_id", "type", "summary"],
            ),
            false,
        ),
        spec(
            "workspace_create",
            "Create a workspace for some tasks of a workflow. With create_worktree: true, a new \
             branch checked out in its own git worktree (under .workflow/.worktrees/) so \
             parallel agents do not overwrite each other. Without create_worktree the \
             workspace is only recorded (branch name, tasks): nothing is made in git, the \
             branch must not exist yet. Returns the workspace with its id (ws_…), \
             branch_created and worktree_path.",
            schema(
                json!({
                    "workflow_id": s("Workflow id."),
                    "branch": s("The new branch, e.g. feature/google-oauth."),
                    "base_branch": s("Branch or commit to start from (default: the repository's current branch)."),
                    "create_worktree": {"type": "boolean", "description": "Make the branch and a git worktree for it (default false: record only, nothing made in git)."},
                    "repo_path": s("The workflow's repository folder (the default; no other repository is accepted)."),
                    "task_ids": strings("Tasks worked on there."),
                }),
                &["workflow_id", "branch"],
            ),
            false,
        ),
        spec(
            "workspace_update",
            "Update a workspace: status active, merged or abandoned, the merge commit, and with \
             cleanup_worktree remove its worktree and branch (only when merged, or when \
             abandoned: unmerged work is never removed otherwise).",
            schema(
                json!({
                    "id": s("Workspace id."),
                    "status": s("active, merged or abandoned."),
                    "merge_commit": s("The commit that merged it."),
                    "cleanup_worktree": {"type": "boolean", "description": "Remove its worktree and branch."},
                }),
                &["id"],
            ),
            false,
        ),
    ]
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RegisterArgs {
    name: String,
    runtime: String,
    role: Option<String>,
    #[serde(default)]
    capabilities: Vec<String>,
    workspace_path: Option<String>,
    #[serde(default)]
    metadata: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HeartbeatArgs {
    agent_id: String,
    current_task_id: Option<String>,
    status: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IdArgs {
    id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    name: String,
    source_type: Option<String>,
    source_content: Option<String>,
    source_ref: Option<String>,
    max_parallel_tasks: Option<u32>,
}

#[derive(Deserialize)]
struct PlanTaskArgs {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    depends_on: Vec<String>,
    assignee: Option<String>,
    role: Option<String>,
}

#[derive(Deserialize)]
struct PlanArgs {
    #[serde(default)]
    summary: String,
    tasks: Vec<PlanTaskArgs>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetPlanArgs {
    id: String,
    plan: PlanArgs,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    status: Option<OneOrMany>,
    limit: Option<usize>,
    offset: Option<usize>,
}

/// A string or a list of strings (`workflow_list`'s `status`: the seed's
/// code passes a list, its prose a single status).
#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkflowIdArgs {
    workflow_id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NextArgs {
    workflow_id: String,
    include_failed: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClaimArgs {
    task_id: String,
    agent_id: String,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct IncludeArgs {
    workflow_plan: Option<bool>,
    prior_task_outcomes: Option<bool>,
    dependency_outcomes: Option<bool>,
    recent_checkpoints: Option<usize>,
    all_checkpoints: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LoadArgs {
    task_id: String,
    include: Option<IncludeArgs>,
    max_tokens: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskPlanArgs {
    id: String,
    plan: Value,
    #[serde(default)]
    context: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StatusArgs {
    id: String,
    status: String,
    outcome: Option<String>,
    #[serde(default)]
    outcome_detail: Value,
    error: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckpointArgs {
    task_id: String,
    #[serde(rename = "type")]
    kind: String,
    summary: String,
    #[serde(default)]
    detail: Value,
    #[serde(default)]
    files_changed: Vec<String>,
}

/// A tool's arguments as `T`, or an invalid-arguments error naming it.
pub(super) fn parse<T: serde::de::DeserializeOwned>(
    tool: &str,
    args: Option<Map<String, Value>>,
) -> Result<T, ToolError> {
    serde_json::from_value(Value::Object(args.unwrap_or_default()))
        .map_err(|e| ToolError::Invalid(format!("{tool}: invalid arguments: {e}")))
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

/// Runs caw tool `name` for `caller`.
pub fn call(
    board: &TaskBoard,
    caller: &str,
    name: &str,
    args: Option<Map<String, Value>>,
) -> Result<Value, ToolError> {
    let now = Utc::now();
    match name {
        "workspace_create" => super::workspace_tools::create(board, caller, args),
        "workspace_update" => super::workspace_tools::update(board, caller, args),
        "agent_register" => {
            let a: RegisterArgs = parse(name, args)?;
            let agent = board.change_by(caller, |s| {
                match s.register(
                    caller,
                    &a.name,
                    &a.runtime,
                    a.role.as_deref(),
                    a.capabilities,
                    a.workspace_path,
                    a.metadata,
                    now,
                ) {
                    Ok(agent) => (Ok(agent.clone()), vec![TaskEvent::AgentChanged(agent)]),
                    Err(e) => (Err(e), vec![]),
                }
            })?;
            Ok(json!({"id": agent.id, "name": agent.name, "status": agent.status}))
        }
        "agent_heartbeat" => {
            let a: HeartbeatArgs = parse(name, args)?;
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
        "agent_unregister" => {
            let a: IdArgs = parse(name, args)?;
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
        "workflow_create" => {
            let a: CreateArgs = parse(name, args)?;
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
        "workflow_set_plan" => {
            let a: SetPlanArgs = parse(name, args)?;
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
        "workflow_list" => {
            let a: ListArgs = parse(name, args)?;
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
        "workflow_progress" => {
            let a: WorkflowIdArgs = parse(name, args)?;
            Ok(board.read(|s| progress_json(s, &a.workflow_id))?)
        }
        "workflow_next_tasks" => {
            let a: NextArgs = parse(name, args)?;
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
        "task_claim" => {
            let a: ClaimArgs = parse(name, args)?;
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
        "task_load_context" => {
            let a: LoadArgs = parse(name, args)?;
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
        "task_set_plan" => {
            let a: TaskPlanArgs = parse(name, args)?;
            if !a.plan.is_object() {
                return Err(ToolError::Invalid(format!(
                    "{name}: invalid arguments: plan must be an object with `approach` and `steps`"
                )));
            }
            board.change_by(caller, |s| {
                match s.set_task_plan(caller, &a.id, a.plan, a.context, now) {
                    Ok(t) => (Ok(()), TaskEvent::with_last_checkpoint(s, t)),
                    Err(e) => (Err(e), vec![]),
                }
            })?;
            Ok(json!({"success": true}))
        }
        "task_update_status" => {
            let a: StatusArgs = parse(name, args)?;
            let task = board.change_by(caller, |s| {
                match s.update_status(
                    caller,
                    &a.id,
                    &a.status,
                    a.outcome,
                    a.outcome_detail,
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
        "checkpoint_add" => {
            let a: CheckpointArgs = parse(name, args)?;
            let cp = board.change_by(caller, |s| {
                match s.add_checkpoint(
                    caller,
                    &a.task_id,
                    &a.kind,
                    &a.summary,
                    a.detail,
                    a.files_changed,
                    now,
                ) {
                    Ok(cp) => (Ok(cp.clone()), vec![TaskEvent::CheckpointAdded(cp)]),
                    Err(e) => (Err(e), vec![]),
                }
            })?;
            Ok(json!({"id": cp.id, "sequence": cp.sequence, "task_id": cp.task_id}))
        }
        other => Err(ToolError::Invalid(format!("unknown task tool '{other}'"))),
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

    /// Issue 23 (7): without `create_worktree`, `workspace_create` records
    /// the workspace and makes nothing in git (the branch is not created;
    /// `tests/workspaces.rs` checks the behaviour). What the tool and the
    /// README say agrees with that.
    #[test]
    fn workspace_create_is_documented_as_record_only_without_create_worktree() {
        let spec = specs()
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
        let start = readme.find("**caw's workspace tools.**").unwrap();
        let para = &readme[start..start + 700];
        assert!(
            !para.contains("makes the\n  branch and, when asked, a worktree"),
            "{para}"
        );
        assert!(para.contains("Without `create_worktree`"), "{para}");
    }
}
