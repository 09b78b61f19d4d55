//! `tasks:`: the plan of tasks a workflow declares, made at the instance's
//! first start.

use super::Walker;
use super::keys;
use crate::workflow::diagnostic::hint;
use crate::workflow::schema::{AgentDef, FileTask};
use crate::workflow::yaml::{Node, Pos, Value};

impl Walker<'_> {
    /// `tasks:`: a list of `{id, name, description, depends_on, assignee,
    /// role}`; every dependency must name a task of the list, without a
    /// cycle; an assignee must be an agent.
    pub(super) fn tasks(&mut self, node: &Node, agents: &[AgentDef]) -> Vec<FileTask> {
        let items = self.items(node, "tasks", "tasks");
        let mut tasks: Vec<FileTask> = Vec::new();
        let mut deps_at: Vec<Vec<(String, Pos)>> = Vec::new();
        let mut positions = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let what = format!("task {}", i + 1);
            let Some(fields) = self.keyed(item, &keys::TASK, &what) else {
                continue;
            };
            let id = self.key_string(&fields, "id", &what);
            let name = self.key_string(&fields, "name", &what);
            let Some(key) = id
                .clone()
                .or_else(|| name.clone())
                .filter(|k| !k.trim().is_empty())
            else {
                self.diags
                    .error(item.pos, format!("{what} needs an 'id' or a 'name'"));
                continue;
            };
            if let Some(first) = tasks.iter().position(|t| t.key == key) {
                self.diags.error(
                    item.pos,
                    format!(
                        "task '{key}' is declared twice (first as task {})",
                        first + 1
                    ),
                );
                continue;
            }
            let description = self
                .key_string(&fields, "description", &what)
                .unwrap_or_default();
            let mut deps = Vec::new();
            if let Some(n) = fields.get("depends_on") {
                match &n.value {
                    Value::Seq(list) => {
                        for d in list {
                            if let Some(s) = self.string(d, &format!("{what}: depends_on")) {
                                deps.push((s, d.pos));
                            }
                        }
                    }
                    Value::Str(s) => deps.push((s.clone(), n.pos)),
                    Value::Null => {}
                    other => self.diags.error(
                        n.pos,
                        format!(
                            "{what}: depends_on must be a list of task ids, found {}",
                            other.kind()
                        ),
                    ),
                }
            }
            let assignee = fields.get("assignee").and_then(|n| {
                let a = self.string(n, &format!("{what}: assignee"))?;
                if !agents.iter().any(|x| x.name == a) {
                    let hint = hint(&a, agents.iter().map(|x| x.name.as_str()));
                    self.diags.error(
                        n.pos,
                        format!("{what}: assignee '{a}' is not an agent of this workflow{hint}"),
                    );
                }
                Some(a)
            });
            let role = self.key_string(&fields, "role", &what);
            tasks.push(FileTask {
                name: name.unwrap_or_else(|| key.clone()),
                key,
                description,
                depends_on: deps.iter().map(|(d, _)| d.clone()).collect(),
                assignee,
                role,
            });
            deps_at.push(deps);
            positions.push(item.pos);
        }
        // Dependencies: known, not itself, no cycle.
        let mut graph: Vec<Vec<usize>> = vec![Vec::new(); tasks.len()];
        for (i, deps) in deps_at.iter().enumerate() {
            for (d, pos) in deps {
                match tasks.iter().position(|t| &t.key == d || &t.name == d) {
                    Some(j) if j == i => self.diags.error(
                        *pos,
                        format!("task '{}' cannot depend on itself", tasks[i].key),
                    ),
                    Some(j) => graph[i].push(j),
                    None => {
                        let hint = hint(d, tasks.iter().map(|t| t.key.as_str()));
                        self.diags.error(
                            *pos,
                            format!(
                                "task '{}' depends on '{d}', which is not a task of this workflow{hint}",
                                tasks[i].key
                            ),
                        );
                    }
                }
            }
        }
        if let Some(cycle) = crate::tasks::find_cycle(&graph) {
            let names: Vec<&str> = cycle.iter().map(|i| tasks[*i].key.as_str()).collect();
            self.diags.error(
                positions[cycle[0]],
                format!(
                    "the tasks' dependencies form a cycle: {}",
                    names.join(" → ")
                ),
            );
        }
        tasks
    }
}
