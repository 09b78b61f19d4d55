//! What each task tool returns, as one example per tool (written beside
//! the tool, `EXAMPLE`): the one place both `awtui ctx tools NAME` and
//! docs/tasks.md take result shapes from (a test checks the doc against
//! the examples, and the examples against what the tools return), so a script knows it reads `id`, not `agent_id`,
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

/// Every tool's example result, in the order `tools/list` shows them
/// (each written beside its tool, [`super::tool::Tool::EXAMPLE`]).
pub fn task_results() -> Vec<ResultShape> {
    super::registry::TOOLS
        .iter()
        .filter_map(|t| {
            t.example.map(|e| ResultShape {
                tool: t.name,
                returns: e.returns,
                otherwise: e.otherwise,
            })
        })
        .collect()
}

/// The result shape of tool `name`, when it shows one.
pub fn of(name: &str) -> Option<ResultShape> {
    task_results().into_iter().find(|r| r.tool == name)
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
        for r in task_results() {
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
        for r in task_results() {
            assert!(covered.contains(&r.tool), "{} is not exercised", r.tool);
        }
    }
}
