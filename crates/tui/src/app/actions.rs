//! Carrying out actions (from the keymap, the command bar or a test):
//! [`App::act`] hands each to its handler. Those that cross panes live in
//! this module's siblings by concern (`session`: quitting and questions;
//! `agents`: agents, approvals and posting; `views`: the focus, the bar,
//! the channel's view, documents and overlays; `tasks`: the board); the
//! rest go to the focused pane.

use crate::action::{Action, Pane};
use crate::component::{Handle, Outcome};
use crate::panes::documents::Documents;

use super::*;

impl App {
    /// Carries out one action.
    pub fn act(&mut self, action: Action) -> Vec<Effect> {
        self.dirty = true;
        match action {
            Action::Quit { force } => self.ask_quit(force),
            Action::Detach => self.detach(),
            Action::Home => self.leave_for_home(false),
            Action::Attention => self.leave_for_home(true),
            Action::Start(_) => self.refuse(
                "start: the list of instances starts workflow files (awtui with no argument)",
            ),
            Action::Yes => self.answer_yes(),
            Action::No => self.answer_no(),
            Action::Focus(target) => self.focus_on(target),
            Action::Prompt(text) => self.prompt(&text),
            Action::Move(_) | Action::Open => self.handle(self.focus, Handle::Act(&action)),
            Action::Back => self.back(),
            Action::Help => self.toggle_help(),
            Action::Rules => self.toggle_rules(),
            Action::Expand => self.expand(),
            Action::Copy => self.copy_or_page(true),
            Action::Pager => self.copy_or_page(false),
            Action::Newest => {
                self.channel.newest();
                Vec::new()
            }
            Action::Search(query) => self.search(query),
            Action::SearchNext => self.search_step(true),
            Action::SearchPrev => self.search_step(false),
            Action::Filter(filter) => self.filter(filter),
            Action::Stop(target) => self.stop(target),
            Action::Restart(target) => self.restart(target),
            Action::Logs(target) => self.logs(target),
            Action::Live(target) => self.open_live(target),
            Action::Interrupt(target) => self.interrupt(target),
            Action::Diff { target, turn } => self.diff(target, turn),
            Action::Step(step) => self.step(step),
            Action::Workspace { agent, op } => self.workspace(agent, op),
            Action::Resume => self.resume(),
            Action::Ack { agent, until } => self.ack(agent, until),
            Action::Send { to, text } => self.send(to, text),
            Action::Post(text) => self.post(text),
            Action::Decide {
                request,
                allow,
                always,
                reason,
            } => self.decide(request, allow, always, reason),
            Action::Later => self.later(),
            Action::Engine(command) => vec![Effect::Command(command.0)],
            Action::AddAgent(agent) => self.add_agent(agent),
            Action::Task(task) => self.task_action(task),
            Action::Doc(file) => self.show_document(file),
            Action::New(file) => self.documents_do(|d| d.create(file)),
            Action::Delete(file) => self.ask_delete(file),
            Action::Edit => self.documents_do(Documents::edit),
            Action::Save => self.documents_do(|d| d.save(false)),
            Action::Resolve(r) => self.documents_do(|d| d.resolve(r)),
            Action::Text(op) => self.text(op),
        }
    }

    /// Says why an action cannot be done here; does nothing else.
    pub(super) fn refuse(&mut self, why: impl Into<String>) -> Vec<Effect> {
        self.error(why);
        Vec::new()
    }

    /// Does `f` to the documents pane and carries out what it asks.
    pub(super) fn documents_do(
        &mut self,
        f: impl FnOnce(&mut Documents) -> Outcome,
    ) -> Vec<Effect> {
        let o = f(&mut self.documents);
        self.apply(Some(Pane::Documents), o)
    }
}
