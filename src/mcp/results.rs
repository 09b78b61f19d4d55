//! What each task tool returns, as one example per tool: the one place
//! both `awtui ctx tools NAME` and docs/tasks.md take result shapes from
//! (a test checks the doc against this table, and this table against what
//! the tools return), so a script knows it reads `id`, not `agent_id`,
//! without reading the source.

/// One tool's result: an example of a successful answer (compact JSON)
/// and, when the tool has another answer that is not an error, that one.
#[derive(Clone, Copy, Debug)]
pub struct ResultShape {
    /// The tool's name.
    pub tool: &'static str,
    /// A successful result.
    pub returns: &'static str,
    /// Another result that is not a tool error (a claim someone else got).
    pub otherwise: Option<&'static str>,
}

/// Every task tool's result, in the order docs/tasks.md lists them.
pub const TASK_RESULTS: &[ResultShape] = &[
    ResultShape {
        tool: "agent_register",
        returns: r#"{"id":"ag_0f3a9c2b7d1e","name":"coder","status":"online"}"#,
        otherwise: None,
    },
    ResultShape {
        tool: "agent_heartbeat",
        returns: r#"{"success":true,"next_heartbeat_ms":30000}"#,
        otherwise: None,
    },
    ResultShape {
        tool: "agent_unregister",
        returns: r#"{"success":true}"#,
        otherwise: None,
    },
    ResultShape {
        tool: "workflow_create",
        returns: r#"{"id":"wf_5b2e8a0c4f71","name":"refactor","status":"planning","max_parallel_tasks":3}"#,
        otherwise: None,
    },
    ResultShape {
        tool: "workflow_set_plan",
        returns: r#"{"success":true,"tasks":[{"id":"tk_9d04c1e7a2b3","name":"tests","depends_on":[]}]}"#,
        otherwise: None,
    },
    ResultShape {
        tool: "workflow_list",
        returns: r#"{"workflows":[{"id":"wf_5b2e8a0c4f71","name":"refactor","status":"in_progress","summary":"","source_type":"prompt","max_parallel_tasks":3,"total_tasks":2,"completed_tasks":1,"created_at":"2026-01-05T10:00:00Z"}],"total":1}"#,
        otherwise: None,
    },
    ResultShape {
        tool: "workflow_progress",
        returns: r#"{"workflow_id":"wf_5b2e8a0c4f71","workflow_status":"in_progress","total_tasks":2,"by_status":{"completed":1,"in_progress":1},"blocked_tasks":[{"id":"tk_2","name":"docs","blocked_by":["tk_1"]}],"in_progress":[{"id":"tk_1","name":"tests","status":"in_progress","claimed_by":"ag_0f3a9c2b7d1e"}],"estimated_remaining":1}"#,
        otherwise: None,
    },
    ResultShape {
        tool: "workflow_next_tasks",
        returns: r#"{"tasks":[{"id":"tk_9d04c1e7a2b3","workflow_id":"wf_5b2e8a0c4f71","name":"tests","description":"","depends_on":[],"status":"pending","sequence":1,"created_at":"2026-01-05T10:00:00Z","updated_at":"2026-01-05T10:00:00Z"}],"max_parallel":3,"recommended_count":1,"workflow_status":"ready","all_complete":false}"#,
        otherwise: None,
    },
    ResultShape {
        tool: "task_claim",
        returns: r#"{"success":true}"#,
        otherwise: Some(
            r#"{"success":false,"already_claimed_by":"ag_7c1d2e3f4a5b","code":"ALREADY_CLAIMED","reason":"task 'tk_9d04c1e7a2b3' is already claimed by ag_7c1d2e3f4a5b"}"#,
        ),
    },
    ResultShape {
        tool: "task_load_context",
        returns: r#"{"current_task":{"id":"tk_9d04c1e7a2b3","name":"tests","description":"","status":"claimed","claimed_by":"ag_0f3a9c2b7d1e","assignee":null,"role":null,"depends_on":[],"plan":null,"context":null,"outcome":null,"error":null,"checkpoints":[],"checkpoints_total":0},"workflow":{"id":"wf_5b2e8a0c4f71","name":"refactor","status":"in_progress","summary":"","source_content":"","tasks":[{"id":"tk_9d04c1e7a2b3","name":"tests","status":"claimed","depends_on":[]}]},"prior_tasks":[],"dependency_outcomes":[],"max_tokens":8000,"token_estimate":190,"tokens_counted_as":"characters of the whole result's compact JSON / 4","over_budget":false,"description_shortened":false,"shortened":[],"omitted":{}}"#,
        otherwise: None,
    },
    ResultShape {
        tool: "task_set_plan",
        returns: r#"{"success":true}"#,
        otherwise: None,
    },
    ResultShape {
        tool: "task_update_status",
        returns: r#"{"success":true,"id":"tk_9d04c1e7a2b3","status":"completed"}"#,
        otherwise: None,
    },
    ResultShape {
        tool: "checkpoint_add",
        returns: r#"{"id":"cp_1a2b3c4d5e6f","sequence":1,"task_id":"tk_9d04c1e7a2b3"}"#,
        otherwise: None,
    },
];

/// The result shape of tool `name`, when it is a task tool.
pub fn of(name: &str) -> Option<&'static ResultShape> {
    TASK_RESULTS.iter().find(|r| r.tool == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::TaskBoard;
    use serde_json::{Value, json};

    /// The keys of an object, of the objects in it and of the first
    /// element of its arrays, as `a`, `a.b`, `a[].c`: what a reader of the
    /// result relies on.
    fn keys(v: &Value, at: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let here = if at.is_empty() {
                        k.clone()
                    } else {
                        format!("{at}.{k}")
                    };
                    out.push(here.clone());
                    // Keyed by status or by what was left out: any keys.
                    if !matches!(k.as_str(), "by_status" | "omitted") {
                        keys(x, &here, out);
                    }
                }
            }
            Value::Array(a) => {
                if let Some(first) = a.first() {
                    keys(first, &format!("{at}[]"), out);
                }
            }
            _ => {}
        }
    }

    fn shape(v: &Value) -> Vec<String> {
        let mut out = Vec::new();
        keys(v, "", &mut out);
        out.sort();
        out
    }

    /// docs/tasks.md shows every example, beside its tool, as written here.
    #[test]
    fn the_doc_shows_every_example() {
        let doc = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/tasks.md"),
        )
        .unwrap();
        for r in TASK_RESULTS {
            let row = doc
                .lines()
                .find(|l| l.starts_with(&format!("| `{}` | ", r.tool)))
                .unwrap_or_else(|| panic!("docs/tasks.md has no row for {}", r.tool));
            assert!(row.contains(&format!("`{}`", r.returns)), "{row}");
            if let Some(o) = r.otherwise {
                assert!(row.contains(&format!("`{o}`")), "{row}");
            }
        }
    }

    /// Every task tool answers with the keys its example shows (a real
    /// board, one caller going through a whole task).
    #[test]
    fn every_example_has_the_keys_the_tool_returns() {
        let board = TaskBoard::default();
        let run = |who: &str, name: &str, args: Value| {
            let got = crate::mcp::task_tools::call(&board, who, name, args.as_object().cloned())
                .unwrap_or_else(|e| panic!("{name}: {e:?}"));
            println!("{name}: {got}");
            got
        };
        let mut got: Vec<(&str, Value)> = Vec::new();
        let agent = run(
            "coder",
            "agent_register",
            json!({"name": "c", "runtime": "custom"}),
        );
        let other = run(
            "rival",
            "agent_register",
            json!({"name": "r", "runtime": "custom"}),
        );
        got.push(("agent_register", agent.clone()));
        let wf = run("coder", "workflow_create", json!({"name": "w"}));
        got.push(("workflow_create", wf.clone()));
        let plan = json!({"id": wf["id"], "plan": {"tasks": [{"name": "a"}, {"name": "b", "depends_on": ["a"]}]}});
        let tasks = run("coder", "workflow_set_plan", plan);
        got.push(("workflow_set_plan", tasks.clone()));
        let task = tasks["tasks"][0]["id"].clone();
        let next = run(
            "coder",
            "workflow_next_tasks",
            json!({"workflow_id": wf["id"]}),
        );
        got.push(("workflow_next_tasks", next));
        let claim = json!({"task_id": task, "agent_id": agent["id"]});
        got.push(("task_claim", run("coder", "task_claim", claim)));
        let lost = run(
            "rival",
            "task_claim",
            json!({"task_id": task, "agent_id": other["id"]}),
        );
        got.push(("task_claim (otherwise)", lost));
        got.push(("workflow_list", run("coder", "workflow_list", json!({}))));
        got.push((
            "task_load_context",
            run("coder", "task_load_context", json!({"task_id": task})),
        ));
        got.push((
            "task_set_plan",
            run(
                "coder",
                "task_set_plan",
                json!({"id": task, "plan": {"approach": "x"}}),
            ),
        ));
        got.push((
            "checkpoint_add",
            run(
                "coder",
                "checkpoint_add",
                json!({"task_id": task, "type": "progress", "summary": "half"}),
            ),
        ));
        got.push((
            "workflow_progress",
            run(
                "coder",
                "workflow_progress",
                json!({"workflow_id": wf["id"]}),
            ),
        ));
        got.push((
            "task_update_status",
            run(
                "coder",
                "task_update_status",
                json!({"id": task, "status": "completed", "outcome": "done"}),
            ),
        ));
        got.push((
            "agent_heartbeat",
            run("coder", "agent_heartbeat", json!({"agent_id": agent["id"]})),
        ));
        got.push((
            "agent_unregister",
            run("coder", "agent_unregister", json!({"id": agent["id"]})),
        ));
        for (name, value) in &got {
            let example = match name.strip_suffix(" (otherwise)") {
                Some(tool) => of(tool).and_then(|r| r.otherwise).unwrap(),
                None => {
                    of(name)
                        .unwrap_or_else(|| panic!("no example for {name}"))
                        .returns
                }
            };
            let example: Value = serde_json::from_str(example).unwrap();
            assert_eq!(shape(&example), shape(value), "{name}: {value}");
        }
        let covered: Vec<&str> = got.iter().map(|(n, _)| *n).collect();
        for r in TASK_RESULTS {
            assert!(covered.contains(&r.tool), "{} is not exercised", r.tool);
        }
    }
}
