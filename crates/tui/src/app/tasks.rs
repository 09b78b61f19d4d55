//! What the person does to the task board (`/task …`): each becomes one
//! engine command, a prompt for what is missing, or a change of the
//! board's view.

use crate::action::{Pane, TaskAction};
use crate::panes::tasks;
use crate::sanitize::for_terminal;
use crate::vocab::Command;
use crate::vocab::TaskCommand;

use super::*;

impl App {
    /// The task a `/task` command names (`None`: the current one), or an
    /// error on the status line.
    pub(super) fn task_target(
        &mut self,
        reference: Option<&str>,
        what: &str,
    ) -> Option<crate::vocab::Task> {
        let found = match reference {
            Some(r) => tasks::resolve(&self.tasks, r).cloned(),
            None => self
                .board
                .current(&self.tasks)
                .cloned()
                .ok_or_else(|| "no task selected (5 shows the board)".to_string()),
        };
        match found {
            Ok(t) => Some(t),
            Err(e) => {
                self.error(format!("task {what}: {e}"));
                None
            }
        }
    }

    /// Carries out a `/task` command: one [`Command::Task`] for the engine
    /// (its refusal comes back as this app's error line), a prompt for a
    /// missing outcome or error, or a change of the board's filter.
    pub(super) fn task_action(&mut self, action: TaskAction) -> Vec<Effect> {
        let (command, note) = match action {
            TaskAction::Add {
                name,
                after,
                assignee,
                workflow,
            } => {
                if let Some(a) = &assignee
                    && !self.agent_known(a)
                {
                    return self.refuse(format!("task add: there is no agent '{a}'"));
                }
                let mut depends_on = Vec::new();
                for d in &after {
                    match tasks::resolve(&self.tasks, d) {
                        Ok(t) => depends_on.push(t.id.clone()),
                        Err(e) => {
                            return self.refuse(format!("task add: --after {e}"));
                        }
                    }
                }
                let note = format!("adding task “{name}”");
                let command = TaskCommand::Add {
                    workflow,
                    name,
                    description: String::new(),
                    depends_on,
                    assignee,
                };
                (command, note)
            }
            TaskAction::Release(r) => {
                let Some(t) = self.task_target(r.as_deref(), "release") else {
                    return Vec::new();
                };
                let note = format!("releasing “{}” ({})", t.name, t.id);
                (TaskCommand::Release { task: t.id }, note)
            }
            TaskAction::Skip(r) => {
                let Some(t) = self.task_target(r.as_deref(), "skip") else {
                    return Vec::new();
                };
                let note = format!("skipping “{}” ({})", t.name, t.id);
                let command = TaskCommand::Status {
                    task: t.id,
                    status: "skipped".into(),
                    outcome: None,
                    error: None,
                };
                (command, note)
            }
            TaskAction::Done {
                task,
                outcome: text,
            } => return self.task_finish(task, text, true),
            TaskAction::Fail { task, error: text } => return self.task_finish(task, text, false),
            TaskAction::Filter(f) => {
                self.board.filter = f.unwrap_or_default();
                self.board.detail = None;
                self.focus = Pane::Tasks;
                self.main = Pane::Tasks;
                self.lower = Pane::Tasks;
                if self.board.filter.is_empty() {
                    self.info("task filter off");
                } else {
                    let n = tasks::listed(&self.tasks, &self.board.filter).len();
                    self.info(format!(
                        "task filter {}: {n} task{} (F clears)",
                        self.board.filter,
                        if n == 1 { "" } else { "s" }
                    ));
                }
                return Vec::new();
            }
        };
        self.info(note);
        if self.focus == Pane::Bar {
            self.focus = self.before_bar;
        }
        vec![Effect::Command(Command::Task { task: command })]
    }

    /// `/task done` (`done`) or `/task fail`: without the outcome or error
    /// the bar asks for it, completed with the task's id.
    pub(super) fn task_finish(
        &mut self,
        task: Option<String>,
        text: Option<String>,
        done: bool,
    ) -> Vec<Effect> {
        let verb = if done { "done" } else { "fail" };
        let Some(t) = self.task_target(task.as_deref(), verb) else {
            return Vec::new();
        };
        let Some(text) = text else {
            let effects = self.act(Action::Prompt(format!(
                "/task {verb} {} ",
                for_terminal(&t.id)
            )));
            self.info(format!(
                "type what {} “{}”, then enter",
                if done { "came of" } else { "went wrong with" },
                t.name
            ));
            return effects;
        };
        self.info(format!(
            "marking “{}” ({}) {}",
            t.name,
            t.id,
            if done { "completed" } else { "failed" }
        ));
        if self.focus == Pane::Bar {
            self.focus = self.before_bar;
        }
        let (status, outcome, error) = if done {
            ("completed", Some(text), None)
        } else {
            ("failed", None, Some(text))
        };
        vec![Effect::Command(Command::Task {
            task: TaskCommand::Status {
                task: t.id,
                status: status.into(),
                outcome,
                error,
            },
        })]
    }
}
