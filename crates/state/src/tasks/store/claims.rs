//! The task store's claims and status moves: `claim`, `release`, stale
//! claims, `update_status`, the task's own plan and its checkpoints, and
//! adding a task to a plan.

use super::*;

impl TaskStore {
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
    pub(super) fn released(
        &self,
        task: &Task,
        by: &str,
        why: &str,
        now: DateTime<Utc>,
    ) -> (Task, Checkpoint) {
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
