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

mod claims;

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
mod tests;
