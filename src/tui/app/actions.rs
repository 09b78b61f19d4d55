//! Carrying out actions (from the keymap, the command bar or a test):
//! the ones that cross panes stay here, the rest go to the focused pane.

use crate::vocab::DiffTarget;

use crate::engine::Command;
use crate::sanitize::for_terminal;
use crate::tui::QuitAction;
use crate::tui::action::{AckTarget, Action, FocusTarget, Pane, TaskAction};
use crate::tui::component::{Handle, Selected, Selection};
use crate::tui::panes::command_bar::BarMode;
use crate::tui::panes::diff::ask_workspace;
use crate::tui::panes::inbox;
use crate::tui::panes::tasks;
use crate::vocab::Since;
use crate::vocab::TaskCommand;
use crate::vocab::mentions::USER;

use super::*;

impl App {
    pub(super) fn agent_known(&self, name: &str) -> bool {
        self.agents.rows.iter().any(|r| r.name == name)
    }

    pub(super) fn target_agent(&mut self, name: Option<String>, what: &str) -> Option<String> {
        match name {
            Some(n) if self.agent_known(&n) => Some(n),
            Some(n) => {
                self.error(format!("{what}: there is no agent '{n}'"));
                None
            }
            None => match self.agents.selected() {
                Some(r) => Some(r.name.clone()),
                None => {
                    self.error(format!("{what}: no agent selected"));
                    None
                }
            },
        }
    }

    /// The key a question names for `command` (`[keys.confirm]`): a plain
    /// lowercase letter when one is bound (`y` rather than `Y` or
    /// `enter`), else the shortest key, else `default`.
    fn answer_key(&self, command: &str, default: &str) -> String {
        use crate::tui::keymap::Section;
        let bound: Vec<String> = self
            .keymap
            .bindings(Section::Confirm)
            .filter(|b| b.command == command)
            .map(|b| b.key.to_string())
            .collect();
        bound
            .iter()
            .find(|k| k.chars().count() == 1 && k.chars().all(|c| c.is_ascii_lowercase()))
            .cloned()
            .or_else(|| {
                self.keymap
                    .key_for(Section::Confirm, command)
                    .map(|k| k.to_string())
            })
            .unwrap_or_else(|| default.to_string())
    }

    pub(super) fn shutdown(&mut self) -> Vec<Effect> {
        if self.ended {
            self.exit = Some(Exit::Shutdown);
            return vec![Effect::Quit];
        }
        self.stopping = true;
        self.info("stopping the agents…");
        vec![Effect::Command(Command::Shutdown)]
    }

    pub(super) fn quit(&mut self) -> Vec<Effect> {
        match self.options.on_quit {
            QuitAction::Shutdown | QuitAction::Ask => self.shutdown(),
            QuitAction::Detach | QuitAction::Home => self.detach(),
        }
    }

    /// Leaves the screen without stopping the instance; refused when the
    /// instance cannot outlive the screen (nothing on disk to resume from).
    pub(super) fn detach(&mut self) -> Vec<Effect> {
        if self.options.on_quit == QuitAction::Shutdown && !self.ended {
            self.error(
                "detach: this instance keeps its context in memory and cannot run \
                 without the screen (/quit stops it)",
            );
            return Vec::new();
        }
        self.exit = Some(if self.ended {
            Exit::EngineEnded
        } else {
            Exit::Detached
        });
        vec![Effect::Quit]
    }

    /// Carries out one action.
    pub fn act(&mut self, action: Action) -> Vec<Effect> {
        self.dirty = true;
        match action {
            Action::Quit { force } => {
                if self.stopping {
                    return Vec::new();
                }
                let working: Vec<String> = self
                    .agents
                    .rows
                    .iter()
                    .filter(|r| r.working())
                    .map(|r| r.name.clone())
                    .collect();
                let (yes, no, detach) = (
                    self.answer_key("yes", "y"),
                    self.answer_key("no", "n"),
                    self.answer_key("detach", "d"),
                );
                if !force && let Some(e) = self.documents.editor.as_ref().filter(|e| e.dirty()) {
                    self.confirm = Some(Confirm {
                        question: format!(
                            "{} has unsaved changes (ctrl-s saves). Quit anyway? ({yes}/{no})",
                            e.file
                        ),
                        on_yes: ConfirmAction::Quit,
                    });
                    return Vec::new();
                }
                let busy = match working.len() {
                    0 => String::new(),
                    1 => format!("{} is working. ", working[0]),
                    n => format!("{n} agents are working. "),
                };
                if !force && self.options.on_quit == QuitAction::Ask && !self.ended {
                    self.confirm = Some(Confirm {
                        question: format!(
                            "{busy}Quit: stop @{} ({yes}) or detach, it keeps running ({detach})? ({yes}/{detach}/{no})",
                            self.instance
                        ),
                        on_yes: ConfirmAction::Quit,
                    });
                    return Vec::new();
                }
                if !force
                    && !busy.is_empty()
                    && self.options.on_quit == QuitAction::Shutdown
                    && !self.ended
                {
                    self.confirm = Some(Confirm {
                        question: format!("{busy}Quit and stop every agent? ({yes}/{no})"),
                        on_yes: ConfirmAction::Quit,
                    });
                    return Vec::new();
                }
                self.quit()
            }
            Action::Detach => self.detach(),
            Action::Home | Action::Attention => {
                if self.options.on_quit != QuitAction::Home {
                    self.error(
                        "the list of instances and the attention view open with awtui \
                         (no argument)",
                    );
                    return Vec::new();
                }
                self.exit = Some(Exit::Home {
                    attention: matches!(action, Action::Attention),
                });
                vec![Effect::Quit]
            }
            Action::Yes => match self.confirm.take().map(|c| c.on_yes) {
                Some(ConfirmAction::Quit) => self.quit(),
                Some(ConfirmAction::Delete(file)) => {
                    vec![Effect::Command(Command::DeleteDocument { file })]
                }
                Some(ConfirmAction::DiscardEdit) => {
                    self.documents.editor = None;
                    Vec::new()
                }
                Some(ConfirmAction::SaveAnyway) => {
                    let o = self.documents.save(true);
                    self.apply(Some(Pane::Documents), o)
                }
                Some(ConfirmAction::Workspace { agent, op }) => {
                    vec![Effect::Command(Command::Workspace { agent, op })]
                }
                None => Vec::new(),
            },
            Action::No => {
                self.confirm = None;
                Vec::new()
            }
            Action::Focus(t) => {
                let i = Pane::ORDER
                    .iter()
                    .position(|p| *p == self.focus)
                    .unwrap_or(0);
                let n = Pane::ORDER.len();
                let next = match t {
                    FocusTarget::Next => Pane::ORDER[(i + 1) % n],
                    FocusTarget::Prev => Pane::ORDER[(i + n - 1) % n],
                    FocusTarget::Pane(p) => p,
                };
                if next == Pane::Bar && self.focus != Pane::Bar {
                    self.before_bar = self.focus;
                    self.bar.mode = BarMode::Command;
                }
                if matches!(
                    next,
                    Pane::Channel | Pane::Inbox | Pane::Documents | Pane::Tasks
                ) {
                    self.main = next;
                }
                if matches!(next, Pane::Documents | Pane::Tasks) {
                    self.lower = next;
                }
                self.focus = next;
                Vec::new()
            }
            Action::Decide {
                request,
                allow,
                always,
                reason,
            } => {
                let Some(request) = request.or_else(|| self.card().map(|r| r.id)) else {
                    self.error("no approval request waits");
                    return Vec::new();
                };
                use crate::vocab::{Answer, Verdict};
                let verdict = if allow { Verdict::Allow } else { Verdict::Deny };
                vec![Effect::Command(Command::Approve {
                    request,
                    answer: Answer {
                        verdict: Some(verdict),
                        always,
                        rule: None,
                        reason,
                    },
                })]
            }
            Action::Later => {
                if let Some(request) = self.card().map(|r| r.id) {
                    self.card_hidden = Some(request);
                }
                Vec::new()
            }
            Action::Rules => {
                self.rules_view = match self.rules_view {
                    Some(_) => None,
                    None => Some(0),
                };
                Vec::new()
            }
            Action::Revoke { agent, rule } => {
                vec![Effect::Command(Command::RevokeApproval { agent, rule })]
            }
            Action::Prompt(text) => {
                if self.focus != Pane::Bar {
                    self.before_bar = self.focus;
                }
                self.focus = Pane::Bar;
                self.bar.mode = BarMode::Command;
                self.bar.set(&text);
                Vec::new()
            }
            Action::Move(_) => self.handle(self.focus, Handle::Act(&action)),
            Action::Open => self.handle(self.focus, Handle::Act(&action)),
            Action::Back => {
                if self.help.take().is_some() {
                    return Vec::new();
                }
                if self.focus == Pane::Bar {
                    self.focus = self.before_bar;
                    return Vec::new();
                }
                self.handle(self.focus, Handle::Act(&action))
            }
            Action::Help => {
                self.help = if self.help.is_some() { None } else { Some(0) };
                Vec::new()
            }
            Action::Expand => {
                if !self.channel.toggle_expand() {
                    self.error("the selected message has no CONTEXT block and fits the screen");
                }
                Vec::new()
            }
            Action::Copy | Action::Pager => {
                let verb = if action == Action::Copy {
                    "copy"
                } else {
                    "pager"
                };
                // Panes without a selection of their own copy the channel's.
                let selection = self
                    .visit(self.focus, Selected(verb))
                    .flatten()
                    .or_else(|| self.visit(Pane::Channel, Selected(verb)).flatten());
                match selection {
                    Some(Selection::Text { name, text }) if action == Action::Copy => {
                        self.info(format!("copied {name} to the clipboard"));
                        vec![Effect::Copy(text)]
                    }
                    Some(Selection::Text { text, .. }) => vec![Effect::Pager(text)],
                    Some(Selection::Nothing(e)) => {
                        self.error(e);
                        Vec::new()
                    }
                    None => Vec::new(),
                }
            }
            Action::Newest => {
                self.channel.newest();
                Vec::new()
            }
            Action::Stop(target) => {
                if let Some(t) = &target
                    && let Some(inst) = t.strip_prefix('@')
                {
                    if inst == self.instance {
                        return self.shutdown();
                    }
                    if !self.agent_known(inst) && self.instances.iter().any(|i| i == inst) {
                        self.info(format!("stopping @{inst}…"));
                        return vec![Effect::StopInstance(inst.to_string())];
                    }
                    if !self.agent_known(inst) {
                        self.error(format!(
                            "stop: '{inst}' is neither an agent, this instance ({}) nor a running instance",
                            self.instance
                        ));
                        return Vec::new();
                    }
                }
                let target = target.map(|t| t.trim_start_matches('@').to_string());
                match self.target_agent(target, "stop") {
                    Some(agent) => {
                        self.info(format!("stopping {agent}"));
                        vec![Effect::Command(Command::Stop { agent })]
                    }
                    None => Vec::new(),
                }
            }
            Action::Logs(target) => match self.target_agent(target, "logs") {
                Some(agent) => vec![Effect::Command(Command::ReadAgentLogs { agent })],
                None => Vec::new(),
            },
            Action::Diff { target, turn } => {
                let target = match target {
                    Some(t) => Some(t),
                    // On the board: the selected task's workspace.
                    None if self.focus == Pane::Tasks => match self.board.current(&self.tasks) {
                        Some(t) => Some(DiffTarget::Task(t.id.clone())),
                        None => {
                            self.error("diff: no task selected");
                            None
                        }
                    },
                    None => self.target_agent(None, "diff").map(DiffTarget::Agent),
                };
                match target {
                    Some(DiffTarget::Agent(a)) if !self.agent_known(&a) => {
                        self.error(format!("diff: there is no agent '{a}'"));
                        Vec::new()
                    }
                    Some(target) => vec![Effect::Command(Command::ReadDiff { target, turn })],
                    None => Vec::new(),
                }
            }
            Action::Workspace { agent, op } => {
                let agent = agent.or_else(|| match self.diff.as_ref().map(|d| &d.view.target) {
                    Some(DiffTarget::Agent(a)) => Some(a.clone()),
                    _ => None,
                });
                match self.target_agent(agent, op.name()) {
                    Some(agent) => {
                        self.confirm = Some(ask_workspace(agent, op));
                        Vec::new()
                    }
                    None => Vec::new(),
                }
            }
            Action::Restart(target) => match self.target_agent(target, "restart") {
                Some(agent) => {
                    self.info(format!("restarting {agent}"));
                    vec![Effect::Command(Command::Restart { agent })]
                }
                None => Vec::new(),
            },
            Action::Resume => {
                if self.paused.is_none() {
                    self.info("the instance is not paused");
                }
                vec![Effect::Command(Command::Resume)]
            }
            Action::Ack { agent, until } => self.ack(agent, until),
            Action::Send { to, text } => {
                if !self.names().contains(&to) {
                    self.error(format!("send: there is no agent '{to}'"));
                    return Vec::new();
                }
                vec![Effect::Command(Command::Post {
                    text: format!("@{to} {text}"),
                })]
            }
            Action::Post(text) => {
                self.channel.newest();
                vec![Effect::Command(Command::Post { text })]
            }
            Action::Task(t) => self.task_action(t),
            Action::Doc(file) => {
                self.focus = Pane::Documents;
                self.main = Pane::Documents;
                self.lower = Pane::Documents;
                self.open_document(file)
            }
            Action::New(file) => {
                let o = self.documents.create(file);
                self.apply(Some(Pane::Documents), o)
            }
            Action::Delete(file) => {
                let file = file.or_else(|| self.documents.selected_file().map(str::to_string));
                match file {
                    Some(f) => {
                        let (yes, no) = (self.answer_key("yes", "y"), self.answer_key("no", "n"));
                        self.confirm = Some(Confirm {
                            question: format!("Delete {f}? ({yes}/{no})"),
                            on_yes: ConfirmAction::Delete(f),
                        });
                    }
                    None => self.error("delete: no document selected"),
                }
                Vec::new()
            }
            Action::Edit => {
                let o = self.documents.edit();
                self.apply(Some(Pane::Documents), o)
            }
            Action::Save => {
                let o = self.documents.save(false);
                self.apply(Some(Pane::Documents), o)
            }
            Action::Resolve(r) => {
                let o = self.documents.resolve(r);
                self.apply(Some(Pane::Documents), o)
            }
            Action::Search(None) => {
                if self.focus != Pane::Bar {
                    self.before_bar = self.focus;
                }
                self.focus = Pane::Bar;
                self.bar.mode = BarMode::Search;
                self.bar
                    .set(self.channel.search.clone().unwrap_or_default().as_str());
                Vec::new()
            }
            Action::Search(Some(q)) => {
                self.focus = Pane::Channel;
                self.main = Pane::Channel;
                let n = self.channel.set_search(Some(q.clone()));
                if q.is_empty() {
                    self.info("search cleared");
                } else if n == 0 {
                    self.error(format!("no message contains '{q}'"));
                } else {
                    self.info(format!("{n} matches for '{q}' (n older, N newer)"));
                }
                Vec::new()
            }
            Action::SearchNext | Action::SearchPrev => {
                match self.channel.next_match(action == Action::SearchNext) {
                    Some((k, n)) => self.info(format!("match {k}/{n}")),
                    None => self.error("no search (press / to search)"),
                }
                Vec::new()
            }
            Action::Filter(f) => {
                match f {
                    Some(f) => {
                        let text = f.to_string();
                        self.channel.set_filter(f);
                        self.info(format!(
                            "filter {text}: {} messages (F clears)",
                            self.channel.order.len()
                        ));
                    }
                    None => {
                        self.channel.set_filter(Default::default());
                        self.info("filter off");
                    }
                }
                self.focus = Pane::Channel;
                self.main = Pane::Channel;
                Vec::new()
            }
        }
    }

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
                    self.error(format!("task add: there is no agent '{a}'"));
                    return Vec::new();
                }
                let mut depends_on = Vec::new();
                for d in &after {
                    match tasks::resolve(&self.tasks, d) {
                        Ok(t) => depends_on.push(t.id.clone()),
                        Err(e) => {
                            self.error(format!("task add: --after {e}"));
                            return Vec::new();
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

    pub(super) fn open_document(&mut self, file: String) -> Vec<Effect> {
        let o = self.documents.open(file);
        self.apply(Some(Pane::Documents), o)
    }

    pub(super) fn ack(&mut self, agent: Option<String>, until: AckTarget) -> Vec<Effect> {
        let items = self.inbox_items();
        let (agent, through) = match (agent, until) {
            // In the Inbox pane `a` and `A` act on the inbox of the row
            // under the cursor (an agent's or the user's), never on the
            // agent selected in the Agents pane.
            (None, until @ (AckTarget::Selected | AckTarget::All)) if self.focus == Pane::Inbox => {
                match items.get(self.inbox.selected) {
                    Some(it) if until == AckTarget::Selected => (it.recipient.clone(), it.id),
                    Some(it) => (it.recipient.clone(), self.channel.last_id()),
                    None => {
                        self.error("ack: the inbox is empty");
                        return Vec::new();
                    }
                }
            }
            (agent, until) => {
                let agent = match agent {
                    Some(a) if a == USER || self.agent_known(&a) => a,
                    Some(a) => {
                        self.error(format!("ack: there is no agent '{a}'"));
                        return Vec::new();
                    }
                    None => match self.agents.selected() {
                        Some(r) => r.name.clone(),
                        None => {
                            self.error("ack: no agent selected");
                            return Vec::new();
                        }
                    },
                };
                let through = match until {
                    AckTarget::Id(id) => id,
                    AckTarget::All | AckTarget::Selected => self.channel.last_id(),
                };
                (agent, through)
            }
        };
        let n = inbox::unread(&self.channel, &self.cursors, &agent)
            .iter()
            .filter(|i| i.id <= through)
            .count();
        self.info(format!(
            "acked {agent}'s inbox through #{through} ({n} message{})",
            if n == 1 { "" } else { "s" }
        ));
        vec![Effect::Command(Command::Ack {
            agent,
            until: Since::Id(through),
        })]
    }
}
