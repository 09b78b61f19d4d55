//! The task store: registered agents, workflows, tasks and checkpoints,
//! with every rule of the caw protocol (who may act as whom, claims,
//! transitions, dependencies) and an index that keeps `next_tasks` and
//! `claim` independent of how many tasks exist.
//!
//! Each operation validates, writes its changed records to the journal
//! (durable before it returns), then applies them; a failed write changes
//! nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::TaskError;
use super::journal::{Replay, TaskJournal};
use super::model::{
    CHECKPOINT_TYPES, Checkpoint, PlanWorkflow, PlanWorkspace, Record, RegisteredAgent, Task,
    TaskStatus,
};
use super::transitions;

/// How often agents are asked to send a heartbeat.
pub const HEARTBEAT_MS: u64 = 30_000;
/// Missed heartbeats after which a registered agent counts as stale and
/// is marked offline (90 s).
pub const STALE_AFTER_MISSED: u32 = 3;
/// Missed heartbeats after which a stale holder's claims are released
/// (3 min), unless the workflow says otherwise
/// (`limits.release_after_missed_heartbeats`): twice the offline mark, so
/// an agent that was slow once finds its task still its own.
pub const RELEASE_AFTER_MISSED: u32 = 6;

/// A task of a plan, as `workflow_set_plan` (or a workflow file) gives it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlannedTask {
    /// A fixed id (workflow files), or `None` for a generated `tk_…`.
    pub id: Option<String>,
    pub name: String,
    pub description: String,
    /// Names or ids of earlier tasks of the same plan.
    pub depends_on: Vec<String>,
    pub assignee: Option<String>,
    pub role: Option<String>,
}

/// Tasks that just became available to claim, for waking agents.
#[derive(Clone, Debug, PartialEq)]
pub struct Available {
    pub workflow_id: String,
    pub tasks: Vec<Task>,
}

/// Per-workflow index of what can be claimed.
#[derive(Debug, Default)]
struct Index {
    /// Task ids in plan order.
    order: Vec<String>,
    /// Pending, unheld tasks whose dependencies are done: (sequence, id).
    ready: BTreeSet<(u32, String)>,
    /// Failed tasks whose dependencies are done: (sequence, id).
    failed: BTreeSet<(u32, String)>,
    /// Tasks completed or skipped.
    done: usize,
    /// Tasks someone has touched: not pending, or held.
    touched: usize,
}

/// Whether a task counts as touched for its workflow's status.
fn is_touched(task: &Task) -> bool {
    task.status != TaskStatus::Pending || task.claimed_by.is_some()
}

/// Everything about tasks for one instance.
pub struct TaskStore {
    agents: BTreeMap<String, RegisteredAgent>,
    workflows: BTreeMap<String, PlanWorkflow>,
    tasks: BTreeMap<String, Task>,
    checkpoints: BTreeMap<String, Vec<Checkpoint>>,
    /// Undone dependencies per task.
    open_deps: BTreeMap<String, usize>,
    /// Tasks that depend on each task.
    dependents: BTreeMap<String, Vec<String>>,
    index: BTreeMap<String, Index>,
    /// awtui agents whose turn is running (alive without heartbeats).
    in_turn: BTreeSet<String>,
    /// Workspaces (`workspace_create`) by id.
    workspaces: BTreeMap<String, PlanWorkspace>,
    journal: Box<dyn TaskJournal>,
}

impl std::fmt::Debug for TaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskStore")
            .field("workflows", &self.workflows.len())
            .field("tasks", &self.tasks.len())
            .finish_non_exhaustive()
    }
}

fn new_id(prefix: &str) -> String {
    let mut bytes = [0u8; 6];
    // The OS CSPRNG; a failure leaves zeros, made unique by the caller's
    // collision check.
    let _ = getrandom::fill(&mut bytes);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}_{hex}")
}

impl TaskStore {
    /// A store that keeps its changes in `journal`, rebuilt from `replay`.
    pub fn open(journal: Box<dyn TaskJournal>, replay: Replay) -> TaskStore {
        let mut store = TaskStore {
            agents: BTreeMap::new(),
            workflows: BTreeMap::new(),
            tasks: BTreeMap::new(),
            checkpoints: BTreeMap::new(),
            open_deps: BTreeMap::new(),
            dependents: BTreeMap::new(),
            index: BTreeMap::new(),
            in_turn: BTreeSet::new(),
            workspaces: BTreeMap::new(),
            journal,
        };
        for record in replay.records {
            store.apply(record);
        }
        store
    }

    /// An empty store that keeps nothing on disk.
    pub fn in_memory() -> TaskStore {
        TaskStore::open(Box::new(super::journal::NoJournal), Replay::default())
    }

    fn unique_id(&self, prefix: &str) -> String {
        loop {
            let id = new_id(prefix);
            let taken = self.agents.contains_key(&id)
                || self.workflows.contains_key(&id)
                || self.tasks.contains_key(&id)
                || self.workspaces.contains_key(&id);
            if !taken {
                return id;
            }
        }
    }

    /// A fresh workspace id (`ws_…`).
    pub fn new_workspace_id(&self) -> String {
        self.unique_id("ws")
    }

    /// Checks that `workflow_id` exists and every task of `task_ids` is
    /// one of its tasks, before a workspace is linked to them.
    pub fn check_workspace_links(
        &self,
        workflow_id: &str,
        task_ids: &[String],
    ) -> Result<(), TaskError> {
        self.workflow_or_err(workflow_id)?;
        for id in task_ids {
            let t = self.task_or_err(id)?;
            if t.workflow_id != workflow_id {
                return Err(TaskError::Invalid(format!(
                    "task '{id}' belongs to workflow '{}', not '{workflow_id}'",
                    t.workflow_id
                )));
            }
        }
        Ok(())
    }

    /// Stores a new or changed workspace.
    pub fn save_workspace(&mut self, workspace: PlanWorkspace) -> Result<(), TaskError> {
        self.commit(vec![Record::Workspace(workspace)])
    }

    /// The workspace `id`.
    pub fn workspace(&self, id: &str) -> Option<&PlanWorkspace> {
        self.workspaces.get(id)
    }

    /// Every workspace, by id.
    pub fn workspaces(&self) -> impl Iterator<Item = &PlanWorkspace> {
        self.workspaces.values()
    }

    /// The workspaces linked to task `task_id` (for the task board).
    pub fn workspaces_of_task(&self, task_id: &str) -> Vec<&PlanWorkspace> {
        self.workspaces
            .values()
            .filter(|w| w.task_ids.iter().any(|t| t == task_id))
            .collect()
    }

    /// Persists `records`, then applies them.
    fn commit(&mut self, records: Vec<Record>) -> Result<(), TaskError> {
        self.journal
            .write(&records)
            .map_err(|e| TaskError::Storage(e.to_string()))?;
        for r in records {
            self.apply(r);
        }
        Ok(())
    }

    /// Applies one record to memory and keeps the index in step.
    fn apply(&mut self, record: Record) {
        match record {
            Record::Agent(a) => {
                self.agents.insert(a.id.clone(), a);
            }
            Record::Workflow(w) => {
                self.index.entry(w.id.clone()).or_default();
                self.workflows.insert(w.id.clone(), w);
            }
            Record::Checkpoint(c) => {
                let list = self.checkpoints.entry(c.task_id.clone()).or_default();
                match list.iter_mut().find(|x| x.id == c.id) {
                    Some(x) => *x = c,
                    None => list.push(c),
                }
            }
            Record::Task(t) => self.apply_task(t),
            Record::Workspace(w) => {
                self.workspaces.insert(w.id.clone(), w);
            }
        }
    }

    fn apply_task(&mut self, task: Task) {
        let old = self.tasks.get(&task.id);
        let was = old.map(|o| (o.status.is_done(), is_touched(o)));
        let index = self.index.entry(task.workflow_id.clone()).or_default();
        let (was_done, was_touched) = was.unwrap_or((false, false));
        let (now_done, now_touched) = (task.status.is_done(), is_touched(&task));
        index.done = index.done + usize::from(now_done) - usize::from(was_done);
        index.touched = index.touched + usize::from(now_touched) - usize::from(was_touched);
        if was.is_none() {
            index.order.push(task.id.clone());
            let mut open = 0;
            for dep in &task.depends_on {
                self.dependents
                    .entry(dep.clone())
                    .or_default()
                    .push(task.id.clone());
                if !self.tasks.get(dep).is_some_and(|d| d.status.is_done()) {
                    open += 1;
                }
            }
            self.open_deps.insert(task.id.clone(), open);
        }
        let id = task.id.clone();
        self.tasks.insert(id.clone(), task);
        self.reindex(&id);
        if now_done != was_done {
            for dependent in self.dependents.get(&id).cloned().unwrap_or_default() {
                if let Some(n) = self.open_deps.get_mut(&dependent) {
                    if now_done {
                        *n = n.saturating_sub(1);
                    } else {
                        *n += 1;
                    }
                }
                self.reindex(&dependent);
            }
        }
    }

    /// Puts a task in (or out of) its workflow's ready and failed sets.
    fn reindex(&mut self, id: &str) {
        let Some(task) = self.tasks.get(id) else {
            return;
        };
        let unblocked = self.open_deps.get(id).copied().unwrap_or(0) == 0;
        let key = (task.sequence, task.id.clone());
        let ready = unblocked && task.status == TaskStatus::Pending && task.claimed_by.is_none();
        let failed = unblocked && task.status == TaskStatus::Failed && task.claimed_by.is_none();
        let index = self.index.entry(task.workflow_id.clone()).or_default();
        if ready {
            index.ready.insert(key.clone());
        } else {
            index.ready.remove(&key);
        }
        if failed {
            index.failed.insert(key);
        } else {
            index.failed.remove(&key);
        }
    }

    // ---- lookups -------------------------------------------------------

    /// A registered agent.
    pub fn agent(&self, id: &str) -> Option<&RegisteredAgent> {
        self.agents.get(id)
    }

    /// Every registered agent.
    pub fn agents(&self) -> impl Iterator<Item = &RegisteredAgent> {
        self.agents.values()
    }

    /// The registration made with `owner`'s token, if any.
    pub fn registration_of(&self, owner: &str) -> Option<&RegisteredAgent> {
        self.agents.values().find(|a| a.owner == owner)
    }

    /// A task.
    pub fn task(&self, id: &str) -> Option<&Task> {
        self.tasks.get(id)
    }

    /// A workflow.
    pub fn workflow(&self, id: &str) -> Option<&PlanWorkflow> {
        self.workflows.get(id)
    }

    /// Every workflow, oldest first.
    pub fn workflows(&self) -> Vec<&PlanWorkflow> {
        let mut all: Vec<&PlanWorkflow> = self.workflows.values().collect();
        all.sort_by_key(|w| (w.created_at, w.id.clone()));
        all
    }

    /// A workflow's tasks in plan order.
    pub fn tasks_of(&self, workflow_id: &str) -> Vec<&Task> {
        self.index
            .get(workflow_id)
            .map(|i| i.order.iter().filter_map(|id| self.tasks.get(id)).collect())
            .unwrap_or_default()
    }

    /// Every task of every workflow, workflows oldest first.
    pub fn all_tasks(&self) -> Vec<&Task> {
        self.workflows()
            .into_iter()
            .flat_map(|w| self.tasks_of(&w.id))
            .collect()
    }

    /// Whether any workflow has tasks (agents are then taught the lifecycle).
    pub fn has_tasks(&self) -> bool {
        !self.tasks.is_empty()
    }

    /// A task's checkpoints, oldest first.
    pub fn checkpoints(&self, task_id: &str) -> &[Checkpoint] {
        self.checkpoints.get(task_id).map_or(&[], Vec::as_slice)
    }

    /// How many tasks a workflow has, and how many of them are done
    /// (completed or skipped), without going through them.
    pub fn counts(&self, workflow_id: &str) -> (usize, usize) {
        self.index
            .get(workflow_id)
            .map_or((0, 0), |i| (i.order.len(), i.done))
    }

    /// Whether a workflow has tasks and every one is done.
    pub fn is_complete(&self, workflow_id: &str) -> bool {
        let (total, done) = self.counts(workflow_id);
        total > 0 && done == total
    }

    /// The status of a workflow: derived from its tasks (kept counts, so
    /// independent of how many there are).
    pub fn workflow_status(&self, workflow: &PlanWorkflow) -> &'static str {
        if workflow.abandoned {
            return "abandoned";
        }
        let Some(index) = self.index.get(&workflow.id) else {
            return "planning";
        };
        if index.order.is_empty() {
            "planning"
        } else if index.done == index.order.len() {
            "completed"
        } else if index.touched > 0 {
            "in_progress"
        } else {
            "ready"
        }
    }

    /// Tasks that can be claimed now, in plan order.
    pub fn ready(&self, workflow_id: &str, include_failed: bool) -> Vec<&Task> {
        let Some(index) = self.index.get(workflow_id) else {
            return Vec::new();
        };
        let mut keys: Vec<&(u32, String)> = index.ready.iter().collect();
        if include_failed {
            keys.extend(index.failed.iter());
            keys.sort();
        }
        keys.into_iter()
            .filter_map(|(_, id)| self.tasks.get(id))
            .collect()
    }

    /// Undone dependencies of a task (ids).
    pub fn blocked_by(&self, task: &Task) -> Vec<&Task> {
        task.depends_on
            .iter()
            .filter_map(|d| self.tasks.get(d))
            .filter(|d| !d.status.is_done())
            .collect()
    }

    /// Whether registered agent `id` is alive: in a running awtui turn, or
    /// heard from within [`STALE_AFTER_MISSED`] heartbeat periods.
    pub fn is_alive(&self, agent: &RegisteredAgent, now: DateTime<Utc>) -> bool {
        if agent.status == "offline" {
            return false;
        }
        if self.in_turn.contains(&agent.owner) {
            return true;
        }
        let silent = now.signed_duration_since(agent.last_heartbeat);
        silent.num_milliseconds() < (HEARTBEAT_MS * STALE_AFTER_MISSED as u64) as i64
    }

    /// Why `agent` may not act until it registers again (`None`: alive).
    fn offline_reason(&self, agent: &RegisteredAgent, now: DateTime<Utc>) -> Option<String> {
        if agent.status == "offline" {
            return Some("it unregistered or went silent".into());
        }
        (!self.is_alive(agent, now)).then(|| {
            format!(
                "no heartbeat for {} s",
                now.signed_duration_since(agent.last_heartbeat)
                    .num_seconds()
            )
        })
    }

    /// Marks every registration silent for [`STALE_AFTER_MISSED`]
    /// heartbeat periods (and not in a running awtui turn) offline, as the
    /// seed says; returns them as changed.
    pub fn mark_silent_offline(
        &mut self,
        now: DateTime<Utc>,
    ) -> Result<Vec<RegisteredAgent>, TaskError> {
        let silent: Vec<RegisteredAgent> = self
            .agents
            .values()
            .filter(|a| a.status != "offline" && !self.is_alive(a, now))
            .map(|a| RegisteredAgent {
                status: "offline".into(),
                ..a.clone()
            })
            .collect();
        if !silent.is_empty() {
            self.commit(silent.iter().cloned().map(Record::Agent).collect())?;
        }
        Ok(silent)
    }

    /// The held tasks of registrations `owner` (an awtui agent) made: what
    /// to release when its process is gone (stopped, crashed).
    pub fn claims_of_owner(&self, owner: &str) -> Vec<(String, String)> {
        self.tasks
            .values()
            .filter(|t| t.status.is_held())
            .filter_map(|t| {
                let holder = t.claimed_by.as_ref()?;
                (self.agents.get(holder)?.owner == owner).then(|| (t.id.clone(), holder.clone()))
            })
            .collect()
    }

    /// How many heartbeat periods an agent has missed (0 while alive in a turn).
    pub fn missed_heartbeats(&self, agent: &RegisteredAgent, now: DateTime<Utc>) -> u64 {
        if self.in_turn.contains(&agent.owner) {
            return 0;
        }
        let silent = now
            .signed_duration_since(agent.last_heartbeat)
            .num_milliseconds()
            .max(0) as u64;
        silent / HEARTBEAT_MS
    }

    /// The engine says whether `owner`'s turn is running.
    pub fn set_in_turn(&mut self, owner: &str, running: bool) {
        if running {
            self.in_turn.insert(owner.to_string());
        } else {
            self.in_turn.remove(owner);
        }
    }

    // ---- permission checks --------------------------------------------

    /// The registration `agent_id`, which must be the caller's own.
    fn own_agent(&self, caller: &str, agent_id: &str) -> Result<&RegisteredAgent, TaskError> {
        let agent = self
            .agents
            .get(agent_id)
            .ok_or_else(|| TaskError::AgentNotFound {
                id: agent_id.to_string(),
            })?;
        if agent.owner != caller {
            return Err(TaskError::NotYours {
                agent_id: agent_id.to_string(),
                owner: agent.owner.clone(),
                caller: caller.to_string(),
            });
        }
        Ok(agent)
    }

    fn task_or_err(&self, id: &str) -> Result<&Task, TaskError> {
        self.tasks
            .get(id)
            .ok_or_else(|| TaskError::TaskNotFound { id: id.to_string() })
    }

    fn workflow_or_err(&self, id: &str) -> Result<&PlanWorkflow, TaskError> {
        self.workflows
            .get(id)
            .ok_or_else(|| TaskError::WorkflowNotFound { id: id.to_string() })
    }

    /// A task `caller` may change: one its registration holds, or any task
    /// for the person (`user`).
    fn task_for(&self, caller: &str, id: &str) -> Result<&Task, TaskError> {
        let task = self.task_or_err(id)?;
        if caller == crate::context::mentions::USER {
            return Ok(task);
        }
        let holder = task
            .claimed_by
            .as_ref()
            .and_then(|h| self.agents.get(h).map(|a| (h, a)));
        match holder {
            Some((_, a)) if a.owner == caller => Ok(task),
            Some((h, a)) => Err(TaskError::HeldByOther {
                task_id: id.to_string(),
                holder: h.clone(),
                holder_owner: a.owner.clone(),
            }),
            None => Err(TaskError::NotClaimed {
                task_id: id.to_string(),
            }),
        }
    }

    // ---- agents --------------------------------------------------------

    /// `agent_register`: one registration per awtui identity; registering
    /// again updates it and returns the same id.
    #[allow(clippy::too_many_arguments)]
    pub fn register(
        &mut self,
        caller: &str,
        name: &str,
        runtime: &str,
        role: Option<&str>,
        capabilities: Vec<String>,
        workspace_path: Option<String>,
        metadata: Value,
        now: DateTime<Utc>,
    ) -> Result<RegisteredAgent, TaskError> {
        let agent = match self.registration_of(caller) {
            Some(existing) => RegisteredAgent {
                name: name.to_string(),
                runtime: runtime.to_string(),
                role: role.unwrap_or(&existing.role).to_string(),
                capabilities,
                workspace_path,
                metadata,
                status: "online".into(),
                last_heartbeat: now,
                ..existing.clone()
            },
            None => RegisteredAgent {
                id: self.unique_id("ag"),
                name: name.to_string(),
                runtime: runtime.to_string(),
                role: role.unwrap_or("worker").to_string(),
                capabilities,
                workspace_path,
                metadata,
                owner: caller.to_string(),
                status: "online".into(),
                current_task_id: None,
                registered_at: now,
                last_heartbeat: now,
            },
        };
        self.commit(vec![Record::Agent(agent.clone())])?;
        Ok(agent)
    }

    /// `agent_heartbeat`.
    pub fn heartbeat(
        &mut self,
        caller: &str,
        agent_id: &str,
        current_task_id: Option<String>,
        status: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), TaskError> {
        let mut agent = self.own_agent(caller, agent_id)?.clone();
        if agent.status == "offline" {
            return Err(TaskError::Offline {
                agent_id: agent_id.to_string(),
                why: "it unregistered or went silent".into(),
            });
        }
        if let Some(task) = &current_task_id {
            self.task_or_err(task)?;
        }
        agent.last_heartbeat = now;
        agent.status = status.unwrap_or("online").to_string();
        if current_task_id.is_some() {
            agent.current_task_id = current_task_id;
        }
        self.commit(vec![Record::Agent(agent)])
    }

    /// `agent_unregister`: offline; tasks it held go back to pending with a
    /// `recovery` checkpoint, so nobody waits on an agent that left.
    pub fn unregister(
        &mut self,
        caller: &str,
        agent_id: &str,
        now: DateTime<Utc>,
    ) -> Result<Vec<Task>, TaskError> {
        let mut agent = self.own_agent(caller, agent_id)?.clone();
        agent.status = "offline".into();
        agent.current_task_id = None;
        let mut records = vec![Record::Agent(agent)];
        let mut released = Vec::new();
        for task in self
            .tasks
            .values()
            .filter(|t| t.claimed_by.as_deref() == Some(agent_id) && t.status.is_held())
        {
            let (t, cp) = self.released(task, "system", "its holder unregistered", now);
            released.push(t.clone());
            records.push(Record::Task(t));
            records.push(Record::Checkpoint(cp));
        }
        self.commit(records)?;
        Ok(released)
    }

    // ---- workflows -----------------------------------------------------

    /// `workflow_create`.
    #[allow(clippy::too_many_arguments)]
    pub fn create_workflow(
        &mut self,
        caller: &str,
        name: &str,
        source_type: &str,
        source_content: &str,
        source_ref: Option<String>,
        max_parallel_tasks: u32,
        now: DateTime<Utc>,
    ) -> Result<PlanWorkflow, TaskError> {
        if name.trim().is_empty() {
            return Err(TaskError::Invalid("the workflow needs a name".into()));
        }
        let workflow = PlanWorkflow {
            id: self.unique_id("wf"),
            name: name.to_string(),
            source_type: source_type.to_string(),
            source_content: source_content.to_string(),
            source_ref,
            max_parallel_tasks: max_parallel_tasks.max(1),
            plan_summary: None,
            abandoned: false,
            created_by: caller.to_string(),
            created_at: now,
        };
        self.commit(vec![Record::Workflow(workflow.clone())])?;
        Ok(workflow)
    }

    /// A workflow with a fixed id, made by the instance from its workflow
    /// file (the plan the file declares). Does nothing if it exists.
    pub fn ensure_workflow(
        &mut self,
        id: &str,
        name: &str,
        now: DateTime<Utc>,
    ) -> Result<(), TaskError> {
        if self.workflows.contains_key(id) {
            return Ok(());
        }
        let workflow = PlanWorkflow {
            id: id.to_string(),
            name: name.to_string(),
            source_type: "workflow_file".into(),
            source_content: String::new(),
            source_ref: None,
            max_parallel_tasks: 1,
            plan_summary: None,
            abandoned: false,
            created_by: "system".into(),
            created_at: now,
        };
        self.commit(vec![Record::Workflow(workflow)])
    }

    /// `workflow_set_plan`: creates every task of the plan at once; a
    /// workflow's plan is set once.
    pub fn set_plan(
        &mut self,
        workflow_id: &str,
        summary: &str,
        planned: &[PlannedTask],
        now: DateTime<Utc>,
    ) -> Result<Vec<Task>, TaskError> {
        let workflow = self.workflow_or_err(workflow_id)?.clone();
        if !self.tasks_of(workflow_id).is_empty() {
            return Err(TaskError::InvalidState(format!(
                "workflow {workflow_id} already has a plan ({} tasks); tasks are added with the board or a new workflow",
                self.tasks_of(workflow_id).len()
            )));
        }
        if planned.is_empty() {
            return Err(TaskError::Invalid("the plan has no tasks".into()));
        }
        let ids = plan_ids(
            planned,
            |prefix| self.unique_id(prefix),
            |id| self.tasks.contains_key(id),
        )?;
        let tasks = build_plan(workflow_id, planned, &ids, now)?;
        let mut records: Vec<Record> = Vec::new();
        let mut workflow = workflow;
        workflow.plan_summary = Some(summary.to_string());
        records.push(Record::Workflow(workflow));
        records.extend(tasks.iter().cloned().map(Record::Task));
        self.commit(records)?;
        Ok(tasks)
    }

    // ---- claims and status -------------------------------------------------

    /// `task_claim`: atomic under the store's lock. `Ok(Err(holder))` when
    /// another agent holds it.
    pub fn claim(
        &mut self,
        caller: &str,
        task_id: &str,
        agent_id: &str,
        now: DateTime<Utc>,
    ) -> Result<Result<Task, String>, TaskError> {
        let task = self.task_or_err(task_id)?.clone();
        let mut agent = self.own_agent(caller, agent_id)?.clone();
        if let Some(why) = self.offline_reason(&agent, now) {
            return Err(TaskError::Offline {
                agent_id: agent_id.to_string(),
                why,
            });
        }
        if let Some(holder) = &task.claimed_by {
            if holder == agent_id {
                return Ok(Ok(task));
            }
            return Ok(Err(holder.clone()));
        }
        if !matches!(task.status, TaskStatus::Pending | TaskStatus::Failed) {
            return Err(TaskError::InvalidTransition {
                task_id: task_id.to_string(),
                from: task.status,
                to: TaskStatus::Claimed,
                why: format!("a {} task cannot be claimed", task.status),
            });
        }
        let blocked: Vec<String> = self
            .blocked_by(&task)
            .iter()
            .map(|d| format!("{} ({}, {})", d.id, d.name, d.status))
            .collect();
        if !blocked.is_empty() {
            return Err(TaskError::InvalidTransition {
                task_id: task_id.to_string(),
                from: task.status,
                to: TaskStatus::Claimed,
                why: format!("its dependencies are not done: {}", blocked.join(", ")),
            });
        }
        let mut claimed = task;
        claimed.status = TaskStatus::Claimed;
        claimed.claimed_by = Some(agent_id.to_string());
        claimed.claimed_at = Some(now);
        claimed.error = None;
        claimed.updated_at = now;
        agent.current_task_id = Some(task_id.to_string());
        agent.last_heartbeat = now;
        self.commit(vec![Record::Task(claimed.clone()), Record::Agent(agent)])?;
        Ok(Ok(claimed))
    }

    /// A held task released back to pending, with its `recovery` checkpoint.
    fn released(&self, task: &Task, by: &str, why: &str, now: DateTime<Utc>) -> (Task, Checkpoint) {
        let holder = task.claimed_by.clone().unwrap_or_default();
        let mut t = task.clone();
        t.status = TaskStatus::Pending;
        t.claimed_by = None;
        t.claimed_at = None;
        t.updated_at = now;
        let cp = self.checkpoint_record(
            &t.id,
            "recovery",
            &format!("claim of {holder} released: {why}"),
            json!({"released_from": holder, "reason": why}),
            Vec::new(),
            by,
            now,
        );
        (t, cp)
    }

    /// Releases a held task (the person from the board, or the stale
    /// guard): back to pending, recorded as a `recovery` checkpoint.
    pub fn release(
        &mut self,
        task_id: &str,
        by: &str,
        why: &str,
        now: DateTime<Utc>,
    ) -> Result<Task, TaskError> {
        let task = self.task_or_err(task_id)?;
        if task.claimed_by.is_none() {
            return Err(TaskError::NotClaimed {
                task_id: task_id.to_string(),
            });
        }
        if !task.status.is_held() {
            return Err(TaskError::InvalidTransition {
                task_id: task_id.to_string(),
                from: task.status,
                to: TaskStatus::Pending,
                why: format!("a {} task is not held", task.status),
            });
        }
        let (t, cp) = self.released(task, by, why, now);
        self.commit(vec![Record::Task(t.clone()), Record::Checkpoint(cp)])?;
        Ok(t)
    }

    /// Held tasks whose holders missed at least `missed` heartbeats.
    pub fn stale_claims(&self, missed: u64, now: DateTime<Utc>) -> Vec<(String, String)> {
        self.tasks
            .values()
            .filter(|t| t.status.is_held())
            .filter_map(|t| {
                let holder = t.claimed_by.as_ref()?;
                let agent = self.agents.get(holder)?;
                (self.missed_heartbeats(agent, now) >= missed)
                    .then(|| (t.id.clone(), holder.clone()))
            })
            .collect()
    }

    /// `task_update_status`, by the holder or the person.
    #[allow(clippy::too_many_arguments)]
    pub fn update_status(
        &mut self,
        caller: &str,
        task_id: &str,
        status: &str,
        outcome: Option<String>,
        outcome_detail: Value,
        error: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<Task, TaskError> {
        let task = self.task_or_err(task_id)?;
        let to = TaskStatus::parse(status).ok_or_else(|| TaskError::InvalidTransition {
            task_id: task_id.to_string(),
            from: task.status,
            to: TaskStatus::Pending,
            why: format!(
                "'{status}' is not a task status (the statuses are {})",
                TaskStatus::ALL.map(|s| s.as_str()).join(", ")
            ),
        })?;
        if transitions::allowed(task.status).is_empty() {
            return Err(TaskError::InvalidTransition {
                task_id: task_id.to_string(),
                from: task.status,
                to,
                why: format!("a {} task is final", task.status),
            });
        }
        let held = task.claimed_by.is_some();
        let task = if held {
            self.task_for(caller, task_id)?
        } else if caller == crate::context::mentions::USER {
            task
        } else {
            return Err(TaskError::NotClaimed {
                task_id: task_id.to_string(),
            });
        };
        let from = task.status;
        let refuse = |why: String| TaskError::InvalidTransition {
            task_id: task_id.to_string(),
            from,
            to,
            why,
        };
        if !transitions::is_allowed(from, to) {
            let allowed = transitions::allowed(from);
            return Err(refuse(if allowed.is_empty() {
                format!("a {from} task is final")
            } else {
                format!(
                    "from {from} a task may go to {}",
                    allowed
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }));
        }
        let outcome = outcome.filter(|o| !o.trim().is_empty());
        let error = error.filter(|e| !e.trim().is_empty());
        if to == TaskStatus::Completed && outcome.is_none() {
            return Err(refuse("completing a task requires an `outcome`".into()));
        }
        if to == TaskStatus::Failed && error.is_none() {
            return Err(refuse("failing a task requires an `error`".into()));
        }
        let mut t = task.clone();
        t.status = to;
        t.updated_at = now;
        let mut records = Vec::new();
        match to {
            TaskStatus::Completed => {
                t.outcome = outcome.clone();
                t.outcome_detail = outcome_detail;
            }
            TaskStatus::Failed => t.error = error.clone(),
            _ => {}
        }
        if matches!(
            to,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Pending | TaskStatus::Skipped
        ) {
            // Done or given up: the holder lets go of it.
            if let Some(holder) = t.claimed_by.take()
                && let Some(a) = self.agents.get(&holder)
                && a.current_task_id.as_deref() == Some(task_id)
            {
                let mut a = a.clone();
                a.current_task_id = None;
                records.push(Record::Agent(a));
            }
            t.claimed_at = None;
        }
        let kind = match to {
            TaskStatus::Completed => Some(("complete", outcome.unwrap_or_default())),
            TaskStatus::Failed => Some(("error", error.unwrap_or_default())),
            _ => None,
        };
        if let Some((kind, summary)) = kind {
            let by = self.actor(caller, task);
            records.push(Record::Checkpoint(self.checkpoint_record(
                task_id,
                kind,
                &summary,
                Value::Null,
                Vec::new(),
                &by,
                now,
            )));
        }
        records.insert(0, Record::Task(t.clone()));
        self.commit(records)?;
        Ok(t)
    }

    /// Who to record as having done something on `task`: the caller's
    /// registration holding it, or the caller itself.
    fn actor(&self, caller: &str, task: &Task) -> String {
        match &task.claimed_by {
            Some(h) if self.agents.get(h).is_some_and(|a| a.owner == caller) => h.clone(),
            _ => caller.to_string(),
        }
    }

    /// `task_set_plan`: the holder records its approach (a `plan`
    /// checkpoint); a claimed task moves to planning.
    pub fn set_task_plan(
        &mut self,
        caller: &str,
        task_id: &str,
        plan: Value,
        context: Value,
        now: DateTime<Utc>,
    ) -> Result<Task, TaskError> {
        let task = self.task_for(caller, task_id)?;
        if task.status.is_done() {
            return Err(TaskError::InvalidTransition {
                task_id: task_id.to_string(),
                from: task.status,
                to: TaskStatus::Planning,
                why: format!("a {} task is final", task.status),
            });
        }
        let by = self.actor(caller, task);
        let mut t = task.clone();
        let summary = plan
            .get("approach")
            .and_then(Value::as_str)
            .unwrap_or("plan recorded")
            .to_string();
        t.plan = plan.clone();
        if !context.is_null() {
            t.context = context;
        }
        if t.status == TaskStatus::Claimed {
            t.status = TaskStatus::Planning;
        }
        t.updated_at = now;
        let cp = self.checkpoint_record(task_id, "plan", &summary, plan, Vec::new(), &by, now);
        self.commit(vec![Record::Task(t.clone()), Record::Checkpoint(cp)])?;
        Ok(t)
    }

    #[allow(clippy::too_many_arguments)]
    fn checkpoint_record(
        &self,
        task_id: &str,
        kind: &str,
        summary: &str,
        detail: Value,
        files_changed: Vec<String>,
        by: &str,
        now: DateTime<Utc>,
    ) -> Checkpoint {
        let sequence = self.checkpoints(task_id).len() as u32 + 1;
        Checkpoint {
            id: format!("cp_{}", &new_id("x")[2..]),
            task_id: task_id.to_string(),
            sequence,
            kind: kind.to_string(),
            summary: summary.to_string(),
            detail,
            files_changed,
            by: by.to_string(),
            created_at: now,
        }
    }

    /// `checkpoint_add`, by the holder or the person.
    #[allow(clippy::too_many_arguments)]
    pub fn add_checkpoint(
        &mut self,
        caller: &str,
        task_id: &str,
        kind: &str,
        summary: &str,
        detail: Value,
        files_changed: Vec<String>,
        now: DateTime<Utc>,
    ) -> Result<Checkpoint, TaskError> {
        let task = self.task_for(caller, task_id)?;
        if !CHECKPOINT_TYPES.contains(&kind) {
            return Err(TaskError::Invalid(format!(
                "'{kind}' is not a checkpoint type (the types are {})",
                CHECKPOINT_TYPES.join(", ")
            )));
        }
        if summary.trim().is_empty() {
            return Err(TaskError::Invalid("the checkpoint needs a summary".into()));
        }
        let by = self.actor(caller, task);
        let cp = self.checkpoint_record(task_id, kind, summary, detail, files_changed, &by, now);
        self.commit(vec![Record::Checkpoint(cp.clone())])?;
        Ok(cp)
    }

    /// Adds one task to an existing workflow (the person, from the board).
    pub fn add_task(
        &mut self,
        workflow_id: &str,
        planned: PlannedTask,
        now: DateTime<Utc>,
    ) -> Result<Task, TaskError> {
        self.workflow_or_err(workflow_id)?;
        let sequence = self.tasks_of(workflow_id).len() as u32 + 1;
        let mut depends_on = Vec::new();
        for dep in &planned.depends_on {
            let found = self
                .tasks_of(workflow_id)
                .into_iter()
                .find(|t| &t.id == dep || &t.name == dep)
                .map(|t| t.id.clone())
                .ok_or_else(|| TaskError::UnknownDependency {
                    task: planned.name.clone(),
                    dependency: dep.clone(),
                })?;
            depends_on.push(found);
        }
        let id = match planned.id.clone() {
            Some(id) if self.tasks.contains_key(&id) => {
                return Err(TaskError::Invalid(format!("task id '{id}' is taken")));
            }
            Some(id) => id,
            None => self.unique_id("tk"),
        };
        let task = pending_task(id, workflow_id, &planned, sequence, depends_on, now);
        self.commit(vec![Record::Task(task.clone())])?;
        Ok(task)
    }
}

/// Ids for a plan's tasks: given ones (checked for clashes) or new ones.
fn plan_ids(
    planned: &[PlannedTask],
    mut fresh: impl FnMut(&str) -> String,
    taken: impl Fn(&str) -> bool,
) -> Result<Vec<String>, TaskError> {
    let mut ids: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for p in planned {
        let id = match &p.id {
            Some(id) if taken(id) || seen.contains(id) => {
                return Err(TaskError::Invalid(format!("task id '{id}' is used twice")));
            }
            Some(id) => id.clone(),
            None => loop {
                let id = fresh("tk");
                if !seen.contains(&id) {
                    break id;
                }
            },
        };
        seen.insert(id.clone());
        ids.push(id);
    }
    Ok(ids)
}

/// Builds a plan's tasks: dependencies by name or id, no duplicates, no
/// self-dependency, no cycle (dependencies must be resolvable in some order).
fn build_plan(
    workflow_id: &str,
    planned: &[PlannedTask],
    ids: &[String],
    now: DateTime<Utc>,
) -> Result<Vec<Task>, TaskError> {
    let mut names = BTreeSet::new();
    for p in planned {
        if p.name.trim().is_empty() {
            return Err(TaskError::Invalid("every task needs a name".into()));
        }
        if !names.insert(p.name.as_str()) {
            return Err(TaskError::DuplicateTaskName {
                name: p.name.clone(),
            });
        }
    }
    // Names and ids are unique (checked above and by `plan_ids`).
    let by_name: HashMap<&str, usize> = planned
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.as_str(), i))
        .collect();
    let by_id: HashMap<&str, usize> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    let resolve =
        |dep: &str| -> Option<usize> { by_name.get(dep).or_else(|| by_id.get(dep)).copied() };
    let mut deps: Vec<Vec<usize>> = Vec::new();
    for (i, p) in planned.iter().enumerate() {
        let mut list = Vec::new();
        for d in &p.depends_on {
            let j = resolve(d).ok_or_else(|| TaskError::UnknownDependency {
                task: p.name.clone(),
                dependency: d.clone(),
            })?;
            if j == i {
                return Err(TaskError::SelfDependency {
                    task: p.name.clone(),
                });
            }
            if !list.contains(&j) {
                list.push(j);
            }
        }
        deps.push(list);
    }
    if let Some(cycle) = super::find_cycle(&deps) {
        return Err(TaskError::DependencyCycle {
            tasks: cycle.iter().map(|i| planned[*i].name.clone()).collect(),
        });
    }
    Ok(planned
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let depends_on = deps[i].iter().map(|j| ids[*j].clone()).collect();
            pending_task(
                ids[i].clone(),
                workflow_id,
                p,
                i as u32 + 1,
                depends_on,
                now,
            )
        })
        .collect())
}

/// A new, unclaimed task of `workflow_id`'s plan.
pub fn pending_task(
    id: String,
    workflow_id: &str,
    planned: &PlannedTask,
    sequence: u32,
    depends_on: Vec<String>,
    now: DateTime<Utc>,
) -> Task {
    Task {
        id,
        workflow_id: workflow_id.to_string(),
        name: planned.name.clone(),
        description: planned.description.clone(),
        sequence,
        depends_on,
        assignee: planned.assignee.clone(),
        role: planned.role.clone(),
        status: TaskStatus::Pending,
        claimed_by: None,
        claimed_at: None,
        plan: Value::Null,
        context: Value::Null,
        outcome: None,
        outcome_detail: Value::Null,
        error: None,
        created_at: now,
        updated_at: now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The status as the tasks say it, going through every one.
    fn derived(store: &TaskStore, wf: &str) -> &'static str {
        let tasks = store.tasks_of(wf);
        if tasks.is_empty() {
            "planning"
        } else if tasks.iter().all(|t| t.status.is_done()) {
            "completed"
        } else if tasks
            .iter()
            .any(|t| t.status != TaskStatus::Pending || t.claimed_by.is_some())
        {
            "in_progress"
        } else {
            "ready"
        }
    }

    fn check(store: &TaskStore, wf: &str) {
        let w = store.workflow(wf).unwrap();
        assert_eq!(store.workflow_status(w), derived(store, wf));
        let tasks = store.tasks_of(wf);
        let done = tasks.iter().filter(|t| t.status.is_done()).count();
        assert_eq!(store.counts(wf), (tasks.len(), done));
        assert_eq!(
            store.is_complete(wf),
            !tasks.is_empty() && done == tasks.len()
        );
    }

    /// The kept counts agree with the tasks after every kind of move, and
    /// after a replay of the same records.
    #[test]
    fn kept_counts_follow_every_move_and_survive_a_replay() {
        let records = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Record>::new()));
        struct Keep(std::sync::Arc<std::sync::Mutex<Vec<Record>>>);
        impl TaskJournal for Keep {
            fn write(&mut self, r: &[Record]) -> std::io::Result<()> {
                self.0.lock().unwrap().extend(r.iter().cloned());
                Ok(())
            }
        }
        let mut s = TaskStore::open(Box::new(Keep(records.clone())), Replay::default());
        let now = Utc::now();
        let wf = s
            .create_workflow("user", "w", "prompt", "", None, 2, now)
            .unwrap()
            .id;
        check(&s, &wf);
        let plan: Vec<PlannedTask> = (0..6)
            .map(|i| PlannedTask {
                name: format!("t{i}"),
                depends_on: if i >= 2 {
                    vec![format!("t{}", i - 2)]
                } else {
                    vec![]
                },
                ..PlannedTask::default()
            })
            .collect();
        let ids: Vec<String> = s
            .set_plan(&wf, "p", &plan, now)
            .unwrap()
            .into_iter()
            .map(|t| t.id)
            .collect();
        check(&s, &wf);
        assert_eq!(s.workflow_status(s.workflow(&wf).unwrap()), "ready");
        let a = s
            .register("me", "me", "custom", None, vec![], None, Value::Null, now)
            .unwrap()
            .id;
        // Claim, release, fail, retry, skip and complete everything.
        s.claim("me", &ids[0], &a, now).unwrap().unwrap();
        check(&s, &wf);
        s.release(&ids[0], "user", "test", now).unwrap();
        check(&s, &wf);
        assert_eq!(s.workflow_status(s.workflow(&wf).unwrap()), "ready");
        s.claim("me", &ids[0], &a, now).unwrap().unwrap();
        s.update_status(
            "me",
            &ids[0],
            "failed",
            None,
            Value::Null,
            Some("x".into()),
            now,
        )
        .unwrap();
        check(&s, &wf);
        s.update_status("user", &ids[1], "skipped", None, Value::Null, None, now)
            .unwrap();
        check(&s, &wf);
        for id in [&ids[0], &ids[2], &ids[3], &ids[4], &ids[5]] {
            s.claim("me", id, &a, now).unwrap().unwrap();
            check(&s, &wf);
            s.update_status("me", id, "in_progress", None, Value::Null, None, now)
                .unwrap();
            s.update_status(
                "me",
                id,
                "completed",
                Some("ok".into()),
                Value::Null,
                None,
                now,
            )
            .unwrap();
            check(&s, &wf);
        }
        assert!(s.is_complete(&wf));
        assert_eq!(s.workflow_status(s.workflow(&wf).unwrap()), "completed");

        let replay = Replay {
            records: records.lock().unwrap().clone(),
            warnings: vec![],
        };
        let again = TaskStore::open(Box::new(super::super::journal::NoJournal), replay);
        check(&again, &wf);
        assert!(again.is_complete(&wf));
    }

    #[test]
    fn holders_silent_for_too_long_are_stale_unless_their_turn_runs() {
        let mut s = TaskStore::in_memory();
        let t0 = Utc::now();
        let me = s
            .register("coder", "c", "custom", None, vec![], None, Value::Null, t0)
            .unwrap();
        let w = s
            .create_workflow("coder", "w", "prompt", "", None, 1, t0)
            .unwrap();
        let tasks = s
            .set_plan(
                &w.id,
                "",
                &[PlannedTask {
                    name: "a".into(),
                    ..Default::default()
                }],
                t0,
            )
            .unwrap();
        s.claim("coder", &tasks[0].id, &me.id, t0).unwrap().unwrap();
        let later = |ms: i64| t0 + chrono::Duration::milliseconds(ms);
        let hb = HEARTBEAT_MS as i64;
        assert!(s.stale_claims(3, later(2 * hb)).is_empty());
        assert_eq!(
            s.stale_claims(3, later(3 * hb + 1)),
            vec![(tasks[0].id.clone(), me.id.clone())]
        );
        assert!(!s.is_alive(s.agent(&me.id).unwrap(), later(3 * hb + 1)));
        // An awtui agent in a turn is alive without heartbeats.
        s.set_in_turn("coder", true);
        assert!(s.stale_claims(3, later(10 * hb)).is_empty());
        s.set_in_turn("coder", false);
        // Released: pending again, with a recovery checkpoint, claimable.
        let t = s
            .release(&tasks[0].id, "system", "missed 3 heartbeats", later(4 * hb))
            .unwrap();
        assert_eq!(t.status, TaskStatus::Pending);
        assert_eq!(s.checkpoints(&t.id).last().unwrap().kind, "recovery");
        assert_eq!(s.ready(&w.id, false).len(), 1);
    }

    /// The seed's liveness, on by default: a registration silent for
    /// three heartbeat periods is marked offline (an awtui agent in a
    /// turn never is), must register again before it claims or beats, and
    /// its claims count as stale after [`RELEASE_AFTER_MISSED`] periods;
    /// an unregistered agent cannot claim either.
    #[test]
    fn silent_registrations_go_offline_and_must_register_again() {
        let mut s = TaskStore::in_memory();
        let t0 = Utc::now();
        let hb = HEARTBEAT_MS as i64;
        let later = |ms: i64| t0 + chrono::Duration::milliseconds(ms);
        let me = s
            .register("coder", "c", "custom", None, vec![], None, Value::Null, t0)
            .unwrap();
        let busy = s
            .register("lead", "l", "custom", None, vec![], None, Value::Null, t0)
            .unwrap();
        let w = s
            .create_workflow("coder", "w", "prompt", "", None, 1, t0)
            .unwrap();
        let plan: Vec<PlannedTask> = ["a", "b"]
            .iter()
            .map(|n| PlannedTask {
                name: n.to_string(),
                ..Default::default()
            })
            .collect();
        let tasks = s.set_plan(&w.id, "", &plan, t0).unwrap();
        s.claim("coder", &tasks[0].id, &me.id, t0).unwrap().unwrap();
        s.set_in_turn("lead", true);
        assert!(s.mark_silent_offline(later(2 * hb)).unwrap().is_empty());
        let marked = s.mark_silent_offline(later(3 * hb + 1)).unwrap();
        assert_eq!(
            marked.iter().map(|a| a.id.as_str()).collect::<Vec<_>>(),
            [me.id.as_str()],
            "the agent in a turn stays online"
        );
        assert_eq!(s.agent(&me.id).unwrap().status, "offline");
        assert_eq!(s.agent(&busy.id).unwrap().status, "online");
        let refused = s
            .claim("coder", &tasks[1].id, &me.id, later(3 * hb + 2))
            .unwrap_err();
        assert_eq!(refused.code(), "AGENT_OFFLINE", "{refused}");
        assert!(
            refused.to_string().contains("call agent_register again"),
            "{refused}"
        );
        let beat = s
            .heartbeat("coder", &me.id, None, None, later(3 * hb + 2))
            .unwrap_err();
        assert_eq!(beat.code(), "AGENT_OFFLINE");
        // Its claim is stale after the default number of missed beats.
        let missed = u64::from(RELEASE_AFTER_MISSED);
        assert!(s.stale_claims(missed, later(5 * hb)).is_empty());
        assert_eq!(
            s.stale_claims(missed, later(6 * hb + 1)),
            vec![(tasks[0].id.clone(), me.id.clone())]
        );
        // Registering again brings it back.
        let again = s
            .register(
                "coder",
                "c",
                "custom",
                None,
                vec![],
                None,
                Value::Null,
                later(7 * hb),
            )
            .unwrap();
        assert_eq!(again.id, me.id);
        assert_eq!(again.status, "online");
        s.claim("coder", &tasks[1].id, &me.id, later(7 * hb))
            .unwrap()
            .unwrap();
        // An unregistered agent cannot claim.
        s.unregister("coder", &me.id, later(7 * hb)).unwrap();
        let gone = s
            .claim("coder", &tasks[1].id, &me.id, later(7 * hb + 1))
            .unwrap_err();
        assert_eq!(gone.code(), "AGENT_OFFLINE");
    }

    /// What a stopped or failed awtui agent held: the claims of the
    /// registrations it made, nobody else's.
    #[test]
    fn the_claims_of_an_owner_are_its_registrations_own() {
        let mut s = TaskStore::in_memory();
        let t0 = Utc::now();
        let a = s
            .register("a", "a", "custom", None, vec![], None, Value::Null, t0)
            .unwrap();
        let b = s
            .register("b", "b", "custom", None, vec![], None, Value::Null, t0)
            .unwrap();
        let w = s.create_workflow("a", "w", "p", "", None, 1, t0).unwrap();
        let plan: Vec<PlannedTask> = ["x", "y"]
            .iter()
            .map(|n| PlannedTask {
                name: n.to_string(),
                ..Default::default()
            })
            .collect();
        let tasks = s.set_plan(&w.id, "", &plan, t0).unwrap();
        s.claim("a", &tasks[0].id, &a.id, t0).unwrap().unwrap();
        s.claim("b", &tasks[1].id, &b.id, t0).unwrap().unwrap();
        assert_eq!(
            s.claims_of_owner("a"),
            vec![(tasks[0].id.clone(), a.id.clone())]
        );
        assert!(s.claims_of_owner("c").is_empty());
    }
}
