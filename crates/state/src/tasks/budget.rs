//! `task_load_context`: what an agent needs to work on a task, most
//! relevant first, cut to a token budget, saying what was left out.
//!
//! Tokens are estimated as the characters of compact JSON divided by four,
//! rounded up (the usual rule of thumb for English and code; no tokenizer
//! is bundled), and what is counted is the whole result the tool returns:
//! its compact JSON, every field of the wrapper included, costs at most
//! `max_tokens` ([`tokens`] of the result, which `token_estimate` reports).
//! The one exception is a task that does not fit even with every text of it
//! cut: it is returned anyway, alone, with `over_budget: true`.
//!
//! Room for the wrapper (its fixed fields, with the longest `shortened`
//! and `omitted` it could have) is set aside first; each item then costs
//! its compact JSON plus one character for the comma joining it to the
//! next. Items are added in this order until the next one would not fit:
//! the task itself (always; a long description is shortened), its
//! checkpoints (newest first), the outcomes of its direct dependencies,
//! the workflow (its texts shortened if needed) and its plan (one line per
//! task), then outcomes of other completed tasks (newest first).

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
    /// Spends what `value` costs as an item of the result: its compact
    /// JSON and the comma that may join it to the next item.
    fn take(&mut self, value: &Value) -> bool {
        let cost = (value.to_string().chars().count() + 1).div_ceil(4);
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

/// Marks a text cut to fit the budget.
const SHORTENED: &str = "… [shortened to fit max_tokens]";
/// Stands for a structured value left out to fit the budget.
const LEFT_OUT: &str = "[left out to fit max_tokens]";

/// The task's fields that may be cut, least needed first.
const TASK_SHORTENABLE: &[&str] = &["description", "context", "plan", "outcome", "error", "name"];
/// The workflow's fields that may be cut, least needed first.
const WORKFLOW_SHORTENABLE: &[&str] = &["source_content", "summary", "name"];

/// What [`fit`] did.
struct Fit {
    /// The fields it cut or left out, in the order it did.
    shortened: Vec<&'static str>,
}

/// Cuts `fields` of `value`, in order, until the whole value costs at most
/// `limit` tokens: a text keeps its longest prefix that fits (found by
/// bisection, so the work is O(log n) serialisations of the value however
/// small the budget), anything else is replaced by [`LEFT_OUT`]. Stops at
/// the first field after which the value fits; the caller checks whether
/// it fits at all.
fn fit(value: &mut Value, fields: &[&'static str], limit: usize) -> Fit {
    let mut shortened = Vec::new();
    for &field in fields {
        if tokens(value) <= limit {
            break;
        }
        let Some(current) = value.get(field) else {
            continue;
        };
        match current {
            Value::Null => continue,
            Value::String(text) if text.is_empty() => continue,
            Value::String(text) => {
                let chars: Vec<char> = text.chars().collect();
                let with = |keep: usize| -> Value {
                    json!(format!(
                        "{}{SHORTENED}",
                        chars[..keep].iter().collect::<String>()
                    ))
                };
                // The longest prefix that fits, or none.
                let (mut lo, mut hi) = (0usize, chars.len());
                value[field] = with(0);
                if tokens(value) > limit {
                    value[field] = json!("");
                } else {
                    while lo < hi {
                        let mid = lo + (hi - lo).div_ceil(2);
                        value[field] = with(mid);
                        if tokens(value) <= limit {
                            lo = mid;
                        } else {
                            hi = mid - 1;
                        }
                    }
                    value[field] = with(lo);
                }
            }
            _ => value[field] = json!(LEFT_OUT),
        }
        shortened.push(field);
    }
    Fit { shortened }
}

/// The result around its items.
#[allow(clippy::too_many_arguments)]
fn wrapper(
    workflow: Value,
    current: Value,
    dependency_outcomes: Vec<Value>,
    prior: Vec<Value>,
    max_tokens: usize,
    shortened: &[&str],
    description_shortened: bool,
    over_budget: bool,
    omitted: serde_json::Map<String, Value>,
) -> Value {
    json!({
        "workflow": workflow,
        "current_task": current,
        "dependency_outcomes": dependency_outcomes,
        "prior_tasks": prior,
        "max_tokens": max_tokens,
        "token_estimate": max_tokens,
        "tokens_counted_as": "characters of the whole result's compact JSON / 4",
        "description_shortened": description_shortened,
        "shortened": shortened,
        "over_budget": over_budget,
        "omitted": omitted,
    })
}

/// Loads `task`'s context within `max_tokens`: the whole result, as
/// compact JSON, costs at most `max_tokens` by [`tokens`], except when the
/// task alone, with every text of it cut, does not fit next to the
/// result's own fields: then it is kept whole-but-cut, nothing else is
/// added, and `over_budget` is true.
pub fn load(store: &TaskStore, task: &Task, include: &Include, max_tokens: usize) -> Value {
    // The wrapper's room, at its largest: every shortenable field named,
    // every kind of item counted as omitted (with as many digits as the
    // most there could be), `false` flags (longer than `true`), a
    // `token_estimate` as long as `max_tokens`, null for the items.
    let most = store.tasks_of(&task.workflow_id).len() + store.checkpoints(&task.id).len() + 1;
    let worst_omitted: serde_json::Map<String, Value> = [
        "checkpoints",
        "dependency_outcomes",
        "workflow",
        "plan_tasks",
        "prior_tasks",
    ]
    .iter()
    .map(|k| (k.to_string(), json!(most)))
    .collect();
    let reserve = tokens(&wrapper(
        Value::Null,
        Value::Null,
        vec![],
        vec![],
        max_tokens,
        TASK_SHORTENABLE,
        false,
        false,
        worst_omitted,
    ));
    let mut budget = Budget {
        left: max_tokens.saturating_sub(reserve),
    };
    let mut omitted = serde_json::Map::new();
    let mut note = |what: &str, n: usize| {
        if n > 0 {
            omitted.insert(what.to_string(), json!(n));
        }
    };

    // 1. The task itself, its longest parts shortened until it fits.
    let all = store.checkpoints(&task.id);
    let mut current = task_core(task);
    // Their room in the task's object is counted with the task.
    current["checkpoints"] = json!([]);
    current["checkpoints_total"] = json!(all.len());
    // One token less: an item also pays for its comma.
    let core_fit = fit(
        &mut current,
        TASK_SHORTENABLE,
        budget.left.saturating_sub(1),
    );
    let truncated_description = core_fit.shortened.contains(&"description");
    let over_budget = !budget.take(&current);
    if over_budget {
        // Even cut to the bone it does not fit: keep it anyway, it is the
        // one thing the agent cannot work without, and say so.
        budget.left = 0;
    }

    // 2. Checkpoints, newest first, shown oldest first.
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

    // 4. The workflow (its texts shortened if need be) and its plan; left
    // out (null) when even shortened it does not fit.
    let workflow = match store.workflow(&task.workflow_id) {
        None => Value::Null,
        Some(w) => {
            let mut v = json!({
                "id": w.id,
                "name": w.name,
                "status": store.workflow_status(w),
                "summary": w.plan_summary,
                "source_content": w.source_content,
            });
            let tasks = if include.workflow_plan {
                // The plan's room in the object is counted with it.
                v["tasks"] = json!([]);
                store.tasks_of(&w.id)
            } else {
                Vec::new()
            };
            let mut fits = budget.take(&v);
            if !fits {
                fit(&mut v, WORKFLOW_SHORTENABLE, budget.left.saturating_sub(1));
                fits = budget.take(&v);
            }
            if fits {
                let mut plan = Vec::new();
                for t in &tasks {
                    let line = json!({"id": t.id, "name": t.name, "status": t.status, "depends_on": t.depends_on});
                    if !budget.take(&line) {
                        break;
                    }
                    plan.push(line);
                }
                note("plan_tasks", tasks.len() - plan.len());
                if include.workflow_plan {
                    v["tasks"] = json!(plan);
                }
                v
            } else {
                note("workflow", 1);
                note("plan_tasks", tasks.len());
                Value::Null
            }
        }
    };

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

    let mut result = wrapper(
        workflow,
        current,
        dependency_outcomes,
        prior,
        max_tokens,
        &core_fit.shortened,
        truncated_description,
        over_budget,
        omitted,
    );
    // `token_estimate` is the count of the whole result, itself included
    // (a fixed point: its digits may change the count once or twice).
    let mut estimate = tokens(&result);
    for _ in 0..4 {
        result["token_estimate"] = json!(estimate);
        let again = tokens(&result);
        if again == estimate {
            break;
        }
        estimate = again;
    }
    debug_assert!(
        over_budget || estimate <= max_tokens,
        "{estimate} > {max_tokens}"
    );
    result
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

    /// Issue 23 (7): the whole returned JSON (what the tool sends, compact)
    /// costs at most `max_tokens` by this module's own count, and
    /// `token_estimate` is that count.
    #[test]
    fn the_whole_returned_json_fits_max_tokens() {
        let (s, id) = store();
        let task = s.task(&id).unwrap();
        let all = Include {
            all_checkpoints: true,
            ..Include::default()
        };
        for include in [Include::default(), all] {
            for max in [
                200, 250, 300, 400, 500, 700, 1000, 1500, 2000, 3000, 5000, 8000,
            ] {
                let v = load(&s, task, &include, max);
                assert_eq!(v["over_budget"], json!(false), "{max}");
                assert!(tokens(&v) <= max, "{max}: {} tokens", tokens(&v));
                assert_eq!(v["token_estimate"], json!(tokens(&v)), "{max}");
            }
        }
    }

    /// A task whose every text is `len` characters long.
    fn long_task(len: usize) -> (TaskStore, String) {
        let mut s = TaskStore::in_memory();
        let now = Utc::now();
        let w = s
            .create_workflow(
                "a",
                &format!("w{}", "w".repeat(len)),
                "prompt",
                &"s".repeat(len),
                None,
                1,
                now,
            )
            .unwrap();
        let planned = vec![PlannedTask {
            name: format!("n{}", "n".repeat(len)),
            description: "d".repeat(len),
            ..Default::default()
        }];
        let tasks = s
            .set_plan(&w.id, &"plan ".repeat(len / 5 + 1), &planned, now)
            .unwrap();
        (s, tasks[0].id.clone())
    }

    /// The budget loop once spun forever for `max_tokens` below the cost of
    /// its own "shortened" marker, holding the board lock.
    #[test]
    fn tiny_budgets_and_long_names_terminate_within_the_budget_or_say_so() {
        let (s, id) = long_task(20_000);
        let task = s.task(&id).unwrap();
        for max in [0, 1, 5, 10, 20, 50, 100, 1000, 8000] {
            let v = load(&s, task, &Include::default(), max);
            let core = tokens(&v["current_task"]);
            if v["over_budget"] == json!(true) {
                // Every text was cut to nothing: only the fixed fields remain.
                assert!(core < 200, "{max}: {core} tokens over budget");
            } else {
                assert!(core <= max, "{max}: {core} tokens");
            }
            assert!(
                tokens(&v["current_task"]) + tokens(&v["workflow"]) <= max.max(core) + 40,
                "{max}: {v}"
            );
        }
        // A budget the name fits in: only the description is cut.
        let (s, id) = long_task(4000);
        let v = load(&s, s.task(&id).unwrap(), &Include::default(), 1500);
        assert_eq!(v["current_task"]["name"].as_str().unwrap().len(), 4001);
        assert_eq!(v["over_budget"], json!(false));
        assert_eq!(v["description_shortened"], json!(true));
        let desc = v["current_task"]["description"].as_str().unwrap();
        assert!(desc.ends_with(SHORTENED) && desc.len() > 500, "{desc:.80}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        #[test]
        fn any_budget_terminates_and_fits_unless_it_says_so(
            len in 0usize..5000,
            max in 0usize..3000,
        ) {
            let (s, id) = long_task(len);
            let task = s.task(&id).unwrap();
            let v = load(&s, task, &Include::default(), max);
            let core = tokens(&v["current_task"]);
            proptest::prop_assert!(v["over_budget"] == json!(true) || core <= max);
            proptest::prop_assert!(v["over_budget"] == json!(true) || tokens(&v) <= max);
        }
    }
}
