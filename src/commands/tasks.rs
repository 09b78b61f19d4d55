//! `awtui tasks [instance] [--json]`: the task board of a running instance
//! from the shell — tasks grouped by status with holder, dependencies,
//! last checkpoint and age; `--json` gives the whole board.

use chrono::Utc;

use super::{exit, remote};
use crate::engine::tasks::TaskSnapshot;
use crate::engine::{Command, Reply};
use crate::errln;
use crate::instance::control::Client;
use crate::sanitize::for_terminal;
use crate::tasks::TaskStatus;

/// `awtui tasks [instance] [--json]`.
#[derive(Clone, Debug, clap::Args)]
pub struct TasksArgs {
    /// The instance (default: the only one running).
    pub instance: Option<String>,
    /// The whole board as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Prints the board; returns the exit code.
pub fn run(args: &TasksArgs) -> u8 {
    let json = args.json;
    let (resolved, rt) = match remote::resolve_option(args.instance.as_deref()) {
        Ok(found) => found,
        Err(code) => return code,
    };
    rt.block_on(async move {
        let mut client = match remote::open(&resolved.info).await {
            Ok(c) => c,
            Err(code) => return code,
        };
        let board = match fetch_board(&mut client).await {
            Ok(b) => b,
            Err(code) => return code,
        };
        if json {
            match serde_json::to_string_pretty(&board) {
                Ok(text) => super::print::json(text),
                Err(e) => {
                    errln!("cannot write JSON: {e}");
                    return exit::FAILED;
                }
            }
        } else {
            super::print::line(render(&board, Utc::now()).trim_end().to_string());
        }
        exit::OK
    })
}

/// The task board of a connected instance, or the exit code after saying
/// why it could not be read (`awtui tasks` and `awtui peek --tasks`).
pub async fn fetch_board(client: &mut Client) -> Result<TaskSnapshot, u8> {
    let what = format!("@{}", client.info.instance);
    match remote::command(client, &what, Command::Snapshot { messages: 0 }).await? {
        Reply::Snapshot { snapshot } => Ok(snapshot.tasks),
        other => {
            errln!("unexpected answer: {other:?}");
            Err(exit::FAILED)
        }
    }
}

/// The board as text: one block per workflow, tasks grouped by status.
pub fn render(board: &TaskSnapshot, now: chrono::DateTime<Utc>) -> String {
    if board.tasks.is_empty() && board.workflows.is_empty() {
        return "no tasks: agents create them with workflow_create and workflow_set_plan, \
                or a workflow file declares them under `tasks:`\n"
            .to_string();
    }
    let name_of = |id: &str| {
        board
            .tasks
            .iter()
            .find(|t| t.id == id)
            .map(|t| t.name.clone())
            .unwrap_or_else(|| id.to_string())
    };
    let holder = |id: &str| {
        board
            .agents
            .iter()
            .find(|a| a.id == id)
            .map(|a| format!("{} ({})", a.owner, a.id))
            .unwrap_or_else(|| id.to_string())
    };
    let mut out = String::new();
    for w in &board.workflows {
        let tasks: Vec<_> = board
            .tasks
            .iter()
            .filter(|t| t.workflow_id == w.id)
            .collect();
        let done = tasks.iter().filter(|t| t.status.is_done()).count();
        out.push_str(&format!(
            "{} {} — {done}/{} done\n",
            w.id,
            for_terminal(&w.name),
            tasks.len()
        ));
        for status in TaskStatus::ALL {
            let group: Vec<_> = tasks.iter().filter(|t| t.status == status).collect();
            if group.is_empty() {
                continue;
            }
            out.push_str(&format!("  {status} ({})\n", group.len()));
            for t in group {
                let mut line = format!("    {} {}", t.id, for_terminal(&t.name));
                if let Some(h) = &t.claimed_by {
                    line.push_str(&format!(" · {}", for_terminal(&holder(h))));
                } else if let Some(a) = &t.assignee {
                    line.push_str(&format!(" · for {}", for_terminal(a)));
                }
                if !t.depends_on.is_empty() {
                    let deps: Vec<String> = t.depends_on.iter().map(|d| name_of(d)).collect();
                    line.push_str(&format!(" · after {}", for_terminal(&deps.join(", "))));
                }
                // The last checkpoint, unless it only repeats the outcome
                // or the error shown below (a completion's summary is its
                // outcome).
                let repeats = |cp: &crate::tasks::Checkpoint| {
                    let said = cp.summary.trim();
                    [&t.outcome, &t.error]
                        .into_iter()
                        .flatten()
                        .any(|o| o.trim() == said)
                };
                if let Some(cp) = board
                    .last_checkpoints
                    .iter()
                    .find(|c| c.task_id == t.id)
                    .filter(|cp| !repeats(cp))
                {
                    line.push_str(&format!(
                        " · {}: {}",
                        cp.kind,
                        for_terminal(&cp.summary.chars().take(60).collect::<String>())
                    ));
                }
                let ws: Vec<String> = board
                    .workspaces_of(&t.id)
                    .map(|w| {
                        let status = if w.status == "active" {
                            String::new()
                        } else {
                            format!(" ({})", w.status)
                        };
                        format!("ws: {}{status}", for_terminal(&w.branch))
                    })
                    .collect();
                if !ws.is_empty() {
                    line.push_str(&format!(" · {}", ws.join(", ")));
                }
                if let Some(o) = &t.outcome {
                    line.push_str(&format!(" · outcome: {}", for_terminal(o)));
                }
                if let Some(e) = &t.error {
                    line.push_str(&format!(" · error: {}", for_terminal(e)));
                }
                line.push_str(&format!(" · {}", crate::duration::age(t.updated_at, now)));
                out.push_str(&line);
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::store::{PlannedTask, TaskStore};
    use serde_json::Value;

    /// A completed task's line says its outcome once, not again as the
    /// completion checkpoint's summary.
    #[test]
    fn a_completed_task_says_its_outcome_once() {
        let mut s = TaskStore::in_memory();
        let now = Utc::now();
        let me = s
            .register("w2", "w2", "custom", None, vec![], None, Value::Null, now)
            .unwrap();
        let w = s.create_workflow("w2", "w", "p", "", None, 1, now).unwrap();
        let plan = [PlannedTask {
            name: "api".into(),
            ..Default::default()
        }];
        let t = s.set_plan(&w.id, "", &plan, now).unwrap().remove(0);
        s.claim("w2", &t.id, &me.id, now).unwrap().unwrap();
        s.update_status(
            "w2",
            &t.id,
            "completed",
            Some("done by w2".into()),
            Value::Null,
            None,
            now,
        )
        .unwrap();
        let board = crate::engine::tasks::snapshot(&crate::tasks::TaskBoard::alone(s));
        let text = render(&board, now);
        assert_eq!(text.matches("done by w2").count(), 1, "{text}");
        assert!(text.contains("outcome: done by w2"), "{text}");
    }
}
