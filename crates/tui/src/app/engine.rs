//! The engine's side of the control room: its events, its replies to this
//! app's commands, and snapshots (the whole state, from scratch).

use crate::vocab::DiffTarget;

use crate::action::Pane;
use crate::panes::agents::AgentRow;
use crate::panes::inbox;
use crate::sanitize::for_terminal;
use crate::vocab::mentions::USER;
use crate::vocab::{Command, CommandFailed, EngineEvent, Reply};

use super::*;

impl App {
    /// Reads the open diff view again (the same step).
    pub(super) fn refresh_diff(&mut self) -> Vec<Effect> {
        match &mut self.diff {
            Some(d) => {
                let turn = d.view.turn;
                vec![Effect::Command(d.read(turn))]
            }
            None => Vec::new(),
        }
    }

    /// Asks for a snapshot of the newest `messages` (at start, or after
    /// falling behind the events); events wait until it comes.
    pub fn resync(&mut self, messages: usize) -> Command {
        self.resync.asked();
        Command::Snapshot { messages }
    }

    /// The engine's answer to one of this app's commands.
    pub(super) fn reply(&mut self, reply: Result<Reply, CommandFailed>) -> Vec<Effect> {
        match reply {
            // The app neither sends nor peeks (the CLI does).
            Ok(Reply::Done | Reply::Posted { .. } | Reply::Messages { .. }) => Vec::new(),
            Ok(Reply::Snapshot { snapshot }) => {
                let mut effects = self.snapshot(*snapshot);
                for event in self.resync.answered() {
                    effects.extend(self.engine(event));
                }
                effects
            }
            Ok(Reply::Document { file, content }) => {
                let o = self.documents.content(file, content);
                self.apply(Some(Pane::Documents), o)
            }
            // Raw output may hold escape sequences: never to the terminal.
            Ok(Reply::AgentLogs { text, .. }) => vec![Effect::Pager(for_terminal(&text))],
            Ok(Reply::Diff { view }) => {
                match &mut self.diff {
                    Some(d) if d.view.target == view.target => d.replace(*view),
                    _ => self.diff = Some(crate::panes::diff::DiffPane::new(*view)),
                }
                Vec::new()
            }
            Ok(Reply::Said { text }) => {
                self.add_agent_answered(None);
                self.info(for_terminal(&text));
                // The branch moved: show it as it is now.
                self.refresh_diff()
            }
            Ok(Reply::Task { task, checkpoints }) => {
                if let Some(d) = &mut self.board.detail
                    && d.task == task.id
                {
                    d.checkpoints = Some(checkpoints);
                }
                Vec::new()
            }
            Err(CommandFailed { command, error, .. }) => {
                if command == "add_agent" && self.add_agent_answered(Some(&error)) {
                    return Vec::new();
                }
                if command == "write_document"
                    && let Some(e) = &mut self.documents.editor
                {
                    e.saving = None;
                }
                if command == "read_document" {
                    self.documents.read_failed(&error);
                }
                self.error(format!("{command} failed: {error}"));
                if command == "snapshot" {
                    return self
                        .resync
                        .abandoned()
                        .into_iter()
                        .flat_map(|event| self.engine(event))
                        .collect();
                }
                Vec::new()
            }
        }
    }

    /// Draws from a snapshot: the whole state, from scratch.
    pub(super) fn snapshot(&mut self, s: crate::vocab::Snapshot) -> Vec<Effect> {
        // What the engine noticed before this screen attached: the newest,
        // once, as it would have been shown live.
        if !self.ready
            && self.status.is_none()
            && let Some(last) = s.notices.last()
        {
            self.warn(last.clone());
        }
        self.ready = true;
        self.threads = s.ops.threads.clone();
        self.deferred = s.ops.deferred.clone();
        self.tasks = s.tasks.clone();
        self.approvals = s.approvals.clone();
        self.workflow = for_terminal(&s.workflow);
        self.instance = for_terminal(&s.instance);
        self.started = s.started;
        let selected = self.agents.selected().map(|r| r.name.clone());
        self.agents.rows = s.agents.into_iter().map(AgentRow::from_snapshot).collect();
        if let Some(name) = selected
            && let Some(i) = self.agents.rows.iter().position(|r| r.name == name)
        {
            self.agents.selected = i;
        }
        // A message the snapshot shortened says so (issue 34).
        self.channel.reset(
            s.messages
                .into_iter()
                .map(|m| (m.cut.marked(m.entry, &s.instance), m.annotations))
                .collect(),
            s.total_messages,
        );
        self.documents.files = s.documents;
        if !self.documents.files.contains(&s.entry_document) {
            self.documents.files.push(s.entry_document.clone());
            self.documents.files.sort();
        }
        self.documents.entry = s.entry_document.clone();
        self.cursors = s.cursors;
        let loaded = inbox::unread(&self.channel, &self.cursors, USER).len();
        self.channel.user_unread_not_loaded = s.user_unread.saturating_sub(loaded);
        self.paused = s.paused;
        if let Some(jump) = self.jump.take() {
            self.go_to(jump);
        }
        let mut effects = Vec::new();
        // Open details may have missed checkpoints while behind: reload.
        if let Some(d) = &self.board.detail {
            effects.push(Effect::Command(Command::ReadTask {
                task: d.task.clone(),
            }));
        }
        if self.documents.viewer.is_none() && self.documents.pending.is_none() {
            self.documents.selected = self
                .documents
                .files
                .iter()
                .position(|f| *f == s.entry_document)
                .unwrap_or(0);
            self.documents.pending = Some(s.entry_document.clone());
            effects.push(Effect::Command(Command::ReadDocument {
                file: Some(s.entry_document),
            }));
        }
        effects
    }

    /// Shows where an attention item happened: its message selected in
    /// the channel, or its agent in the agents pane.
    pub(super) fn go_to(&mut self, jump: crate::attention::Jump) {
        use crate::attention::Jump;
        match jump {
            Jump::Message(id) => {
                self.focus = Pane::Channel;
                self.main = Pane::Channel;
                if !self.channel.select_id(id) {
                    self.error(format!("message #{id} is not among those loaded"));
                }
            }
            Jump::Agent(name) => match self.agents.rows.iter().position(|r| r.name == name) {
                Some(i) => {
                    self.agents.selected = i;
                    self.focus = Pane::Agents;
                    self.main = Pane::Agents;
                }
                None => self.error(format!("there is no agent '{name}' any more")),
            },
            Jump::Instance => {}
        }
    }

    /// A fact from the engine.
    pub(super) fn engine(&mut self, event: EngineEvent) -> Vec<Effect> {
        match event {
            EngineEvent::Message { entry, annotations } => {
                if let Some(note) = self.channel.push(entry, *annotations) {
                    self.info(note);
                }
                Vec::new()
            }
            EngineEvent::Status { agent, status } => {
                if let Some(row) = self.agents.get_mut(&agent) {
                    row.set_status(status);
                }
                // A turn began or ended: its step may have been committed.
                if self
                    .diff
                    .as_ref()
                    .is_some_and(|d| d.view.target == DiffTarget::Agent(agent.clone()))
                {
                    return self.refresh_diff();
                }
                Vec::new()
            }
            EngineEvent::Metrics { agent, metrics } => {
                if let Some(row) = self.agents.get_mut(&agent) {
                    row.metrics = metrics;
                }
                Vec::new()
            }
            EngineEvent::Activity { agent, activity } => {
                if let Some(row) = self.agents.get_mut(&agent) {
                    row.apply_activity(&activity);
                }
                Vec::new()
            }
            EngineEvent::Document { path, change, by } => {
                let o = self.documents.changed(path, change, by);
                self.apply(Some(Pane::Documents), o)
            }
            EngineEvent::Cursor { agent, cursor } => {
                if agent == USER {
                    self.channel.user_acked(cursor.acked);
                }
                self.cursors.insert(agent, cursor);
                Vec::new()
            }
            EngineEvent::Paused { reason } => {
                self.paused = Some(reason);
                Vec::new()
            }
            EngineEvent::Resumed => {
                self.paused = None;
                self.info("resumed");
                Vec::new()
            }
            EngineEvent::Notice { text } => {
                self.warn(text);
                Vec::new()
            }
            EngineEvent::Finished { .. } => {
                self.ended = true;
                if self.stopping {
                    self.exit = Some(Exit::Shutdown);
                    return vec![Effect::Quit];
                }
                // Stopped from elsewhere (`awtui stop`, a signal to the
                // host): the screen goes too, so the stop completes.
                self.exit = Some(Exit::EngineEnded);
                vec![Effect::Quit]
            }
            EngineEvent::Task { change } => {
                if let crate::vocab::TaskEvent::CheckpointAdded(c) = change.as_ref() {
                    self.board.checkpoint_added(c);
                }
                self.tasks.apply(*change);
                Vec::new()
            }
            EngineEvent::Approval { approval } => {
                self.approval(*approval);
                Vec::new()
            }
            EngineEvent::Deferred { deferred } => {
                self.deferred = deferred;
                Vec::new()
            }
            EngineEvent::Thread { id, state } => {
                self.info(for_terminal(&format!("thread #{id} {}", state.label())));
                self.threads.insert(id, state);
                Vec::new()
            }
        }
    }

    /// The approval request the card shows: the oldest waiting, unless the
    /// person put the card away (Esc) and nothing newer came.
    pub fn card(&self) -> Option<&crate::vocab::Request> {
        let newest = self.approvals.pending.iter().map(|r| r.id).max()?;
        if self.card_hidden.is_some_and(|h| h >= newest) {
            return None;
        }
        self.approvals.pending.first()
    }

    /// Keeps the approvals up to date.
    pub(super) fn approval(&mut self, event: crate::vocab::ApprovalEvent) {
        use crate::vocab::ApprovalEvent;
        match event {
            ApprovalEvent::Requested { request } => {
                if !self.approvals.pending.iter().any(|r| r.id == request.id) {
                    self.approvals.pending.push(request);
                }
            }
            ApprovalEvent::Decided { decision } => {
                self.approvals.pending.retain(|r| r.id != decision.id);
            }
            ApprovalEvent::Standing { standing } => self.approvals.standing = standing,
        }
    }
}
