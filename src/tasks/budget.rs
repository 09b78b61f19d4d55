//! `task_load_context`: what an agent needs to work on a task, most
//! relevant first, cut to a token budget, saying what was left out.
//!
//! Tokens are estimated as the characters of each item's compact JSON
//! divided by four, rounded up (the usual rule of thumb for English and
//! code; no tokenizer is bundled). Items are added in this order until the
//! next one would not fit: the task itself (always; a long description is
//! shortened), its checkpoints (newest first), the outcomes of its direct
//! dependencies, the workflow's plan (one line per task), then outcomes of
//! other completed tasks (newest first).

use serde_json::{Value, json};

use super::model::{Task, TaskStatus};
use super::store::TaskStore;

/// The default budget, as the seed says.
pub const DEFAULT_MAX_TOKENS: usize = 8000;
/// Checkpoints included when `include` does not say.
pub const DEFAULT_RECENT_CHECKPOINTS: usize = 5;

/// What to include (the seed's `include` object).
#[derive(Clone, Debug, PartialEq)]
pub struct Include {
    pub workflow_plan: bool,
    pub prior_task_outcomes: bool,
    pub dependency_outcomes: bool,
    pub recent_checkpoints: usize,
    pub all_checkpoints: bool,
}

impl Default for Include {
    fn default() -> Self {
        Include {
            workflow_plan: true,
            prior_task_outcomes: true,
            dependency_outcomes: true,
            recent_checkpoints: DEFAULT_RECENT_CHECKPOINTS,
            all_checkpoints: false,
        }
    }
}

/// Estimated tokens of a JSON value.
pub fn tokens(value: &Value) -> usize {
    value.to_string().chars().count().div_ceil(4)
}

/// Spends a budget.
struct Budget {
    left: usize,
}

impl Budget {
    fn take(&mut self, value: &Value) -> bool {
        let cost = tokens(value);
        if cost <= self.left {
            self.left -= cost;
            true
        } else {
            false
        }
    }
}

fn task_core(task: &Task) -> Value {
    json!({
        "id": task.id,
        "name": task.name,
        "description": task.description,
        "status": task.status,
        "depends_on": task.depends_on,
        "assignee": task.assignee,
        "role": task.role,
        "claimed_by": task.claimed_by,
        "plan": task.plan,
        "context": task.context,
        "outcome": task.outcome,
        "error": task.error,
    })
}

fn outcome_of(task: &Task) -> Value {
    json!({
        "id": task.id,
        "name": task.name,
        "status": task.status,
        "outcome": task.outcome,
        "outcome_detail": task.outcome_detail,
        "error": task.error,
    })
}

/// Loads `task`'s context within `max_tokens`.
pub fn load(store: &TaskStore, task: &Task, include: &Include, max_tokens: usize) -> Value {
    let mut budget = Budget { left: max_tokens };
    let mut omitted = serde_json::Map::new();
    let mut note = |what: &str, n: usize| {
        if n > 0 {
            omitted.insert(what.to_string(), json!(n));
        }
    };

    // 1. The task itself, its description shortened until it fits.
    let mut current = task_core(task);
    let mut truncated_description = false;
    while !budget.take(&current) {
        let desc = current["description"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if desc.is_empty() {
            // Even without a description it does not fit: keep it anyway,
            // it is the one thing the agent cannot work without.
            budget.left = 0;
            break;
        }
        let keep = desc.chars().count() / 2;
        current["description"] = json!(format!(
            "{}… [shortened to fit max_tokens]",
            desc.chars().take(keep).collect::<String>()
        ));
        truncated_description = true;
    }

    // 2. Checkpoints, newest first, shown oldest first.
    let all = store.checkpoints(&task.id);
    let wanted = if include.all_checkpoints {
        all.len()
    } else {
        include.recent_checkpoints.min(all.len())
    };
    let mut checkpoints: Vec<Value> = Vec::new();
    for cp in all.iter().rev().take(wanted) {
        let v = serde_json::to_value(cp).unwrap_or_default();
        if !budget.take(&v) {
            break;
        }
        checkpoints.push(v);
    }
    note("checkpoints", all.len() - checkpoints.len());
    checkpoints.reverse();
    current["checkpoints"] = json!(checkpoints);
    current["checkpoints_total"] = json!(all.len());

    // 3. Direct dependencies' outcomes.
    let mut dependency_outcomes = Vec::new();
    if include.dependency_outcomes {
        let deps: Vec<&Task> = task
            .depends_on
            .iter()
            .filter_map(|d| store.task(d))
            .collect();
        for dep in &deps {
            let v = outcome_of(dep);
            if !budget.take(&v) {
                break;
            }
            dependency_outcomes.push(v);
        }
        note(
            "dependency_outcomes",
            deps.len() - dependency_outcomes.len(),
        );
    }

    // 4. The workflow and its plan.
    let workflow = store.workflow(&task.workflow_id).map(|w| {
        let mut v = json!({
            "id": w.id,
            "name": w.name,
            "status": store.workflow_status(w),
            "summary": w.plan_summary,
            "source_content": w.source_content,
        });
        if !budget.take(&v) {
            v["source_content"] = json!("[left out to fit max_tokens]");
        }
        if include.workflow_plan {
            let tasks = store.tasks_of(&w.id);
            let mut plan = Vec::new();
            for t in &tasks {
                let line = json!({"id": t.id, "name": t.name, "status": t.status, "depends_on": t.depends_on});
                if !budget.take(&line) {
                    break;
                }
                plan.push(line);
            }
            note("plan_tasks", tasks.len() - plan.len());
            v["tasks"] = json!(plan);
        }
        v
    });

    // 5. Other completed tasks' outcomes, newest first.
    let mut prior = Vec::new();
    if include.prior_task_outcomes {
        let mut done: Vec<&Task> = store
            .tasks_of(&task.workflow_id)
            .into_iter()
            .filter(|t| t.status == TaskStatus::Completed && t.id != task.id)
            .filter(|t| !task.depends_on.contains(&t.id))
            .collect();
        done.sort_by_key(|t| std::cmp::Reverse(t.updated_at));
        for t in &done {
            let v = outcome_of(t);
            if !budget.take(&v) {
                break;
            }
            prior.push(v);
        }
        note("prior_tasks", done.len() - prior.len());
    }

    json!({
        "workflow": workflow,
        "current_task": current,
        "dependency_outcomes": dependency_outcomes,
        "prior_tasks": prior,
        "max_tokens": max_tokens,
        "token_estimate": max_tokens - budget.left,
        "tokens_counted_as": "characters of compact JSON / 4",
        "description_shortened": truncated_description,
        "omitted": omitted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::store::PlannedTask;
    use chrono::Utc;

    /// A plan whose tasks have long descriptions and outcomes.
    fn store() -> (TaskStore, String) {
        let mut s = TaskStore::in_memory();
        let now = Utc::now();
        let me = s
            .register("a", "a", "custom", None, vec![], None, Value::Null, now)
            .unwrap()
            .id;
        let w = s
            .create_workflow("a", "w", "prompt", "", None, 1, now)
            .unwrap();
        let mut planned: Vec<PlannedTask> = (0..30)
            .map(|i| PlannedTask {
                name: format!("step {i}"),
                description: "d".repeat(400),
                ..Default::default()
            })
            .collect();
        planned.push(PlannedTask {
            name: "last".into(),
            description: "the one we load".into(),
            depends_on: vec!["step 0".into(), "step 1".into()],
            ..Default::default()
        });
        let tasks = s.set_plan(&w.id, "plan", &planned, now).unwrap();
        for t in &tasks[..30] {
            s.claim("a", &t.id, &me, now).unwrap().unwrap();
            s.update_status(
                "a",
                &t.id,
                "completed",
                Some("o".repeat(300)),
                Value::Null,
                None,
                now,
            )
            .unwrap();
        }
        let last = tasks[30].id.clone();
        s.claim("a", &last, &me, now).unwrap().unwrap();
        for i in 0..20 {
            s.add_checkpoint(
                "a",
                &last,
                "progress",
                &format!("{i} {}", "c".repeat(200)),
                Value::Null,
                vec![],
                now,
            )
            .unwrap();
        }
        (s, last)
    }

    #[test]
    fn the_result_fits_the_budget_most_relevant_first_and_says_what_was_left_out() {
        let (s, id) = store();
        let task = s.task(&id).unwrap();
        for max in [300, 1000, 3000, 8000] {
            let v = load(&s, task, &Include::default(), max);
            assert!(tokens(&v) <= max + 200, "{max}: {} tokens", tokens(&v));
            assert_eq!(v["current_task"]["name"], "last", "the task itself always");
            let omitted = v["omitted"].as_object().unwrap();
            let shown = v["current_task"]["checkpoints"].as_array().unwrap();
            // Newest checkpoints first: what is shown is the latest ones.
            if let Some(last) = shown.last() {
                assert!(last["summary"].as_str().unwrap().starts_with("19 "));
            }
            assert_eq!(
                shown.len()
                    + omitted
                        .get("checkpoints")
                        .and_then(Value::as_u64)
                        .unwrap_or(0) as usize,
                20
            );
            if max <= 1000 {
                assert!(omitted.contains_key("prior_tasks"), "{max}: {omitted:?}");
            }
        }
        // A big budget with everything asked for: nothing left out.
        let all = Include {
            all_checkpoints: true,
            ..Include::default()
        };
        let v = load(&s, task, &all, 100_000);
        assert!(
            v["omitted"].as_object().unwrap().is_empty(),
            "{}",
            v["omitted"]
        );
        assert_eq!(
            v["current_task"]["checkpoints"].as_array().unwrap().len(),
            20
        );
        assert_eq!(v["dependency_outcomes"].as_array().unwrap().len(), 2);
        assert_eq!(
            v["prior_tasks"].as_array().unwrap().len(),
            28,
            "30 done, 2 are dependencies"
        );
    }
}
