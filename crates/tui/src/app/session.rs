//! Leaving the control room (quit, detach, back home) and the answers to
//! its yes/no questions.

use crate::QuitAction;
use crate::keymap::Section;
use crate::vocab::Command;

use super::*;

impl App {
    /// The key a question names for `command` (`[keys.confirm]`): a plain
    /// lowercase letter when one is bound (`y` rather than `Y` or
    /// `enter`), else the shortest key, else `default`.
    pub(super) fn answer_key(&self, command: &str, default: &str) -> String {
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

    /// Stops the instance (at once when it already ended).
    pub(super) fn shutdown(&mut self) -> Vec<Effect> {
        if self.ended {
            self.exit = Some(Exit::Shutdown);
            return vec![Effect::Quit];
        }
        self.stopping = true;
        self.info("stopping the agents…");
        vec![Effect::Command(Command::Shutdown)]
    }

    /// Quits as the screen was opened to: stopping or detaching.
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
            return self.refuse(
                "detach: this instance keeps its context in memory and cannot run \
                 without the screen (/quit stops it)",
            );
        }
        self.exit = Some(if self.ended {
            Exit::EngineEnded
        } else {
            Exit::Detached
        });
        vec![Effect::Quit]
    }

    /// `quit`: asks first (unless `force`) when an edit is unsaved or
    /// while an agent is in a turn (then, on `awtui <file>`, whether to
    /// stop or detach); an idle instance quits at once.
    pub(super) fn ask_quit(&mut self, force: bool) -> Vec<Effect> {
        if self.stopping {
            return Vec::new();
        }
        let (yes, no, detach) = (
            self.answer_key("yes", "y"),
            self.answer_key("no", "n"),
            self.answer_key("detach", "d"),
        );
        if !force && let Some(e) = self.documents.editor.as_ref().filter(|e| e.dirty()) {
            let question = format!(
                "{} has unsaved changes (ctrl-s saves). Quit anyway? ({yes}/{no})",
                e.file
            );
            return self.ask_to_quit(question);
        }
        let working: Vec<&str> = self
            .agents
            .rows
            .iter()
            .filter(|r| r.working())
            .map(|r| r.name.as_str())
            .collect();
        let busy = match working.as_slice() {
            [] => String::new(),
            [one] => format!("{one} is working. "),
            many => format!("{} agents are working. ", many.len()),
        };
        // Idle, nothing is lost by stopping (the context is on disk and
        // `awtui <file>` resumes it): only a turn in progress is worth a
        // question.
        if !force && !busy.is_empty() && self.options.on_quit == QuitAction::Ask && !self.ended {
            let question = format!(
                "{busy}Quit: stop @{} ({yes}) or detach, it keeps running ({detach})? ({yes}/{detach}/{no})",
                self.instance
            );
            return self.ask_to_quit(question);
        }
        if !force && !busy.is_empty() && self.options.on_quit == QuitAction::Shutdown && !self.ended
        {
            return self.ask_to_quit(format!("{busy}Quit and stop every agent? ({yes}/{no})"));
        }
        self.quit()
    }

    /// Asks `question` before quitting.
    fn ask_to_quit(&mut self, question: String) -> Vec<Effect> {
        self.confirm = Some(Confirm {
            question,
            on_yes: ConfirmAction::Quit,
        });
        Vec::new()
    }

    /// `home` and `attention`: back to the list of instances (or its
    /// attention view), when the screen was opened from it.
    pub(super) fn leave_for_home(&mut self, attention: bool) -> Vec<Effect> {
        if self.options.on_quit != QuitAction::Home {
            return self.refuse(
                "the list of instances and the attention view open with awtui \
                 (no argument)",
            );
        }
        self.exit = Some(Exit::Home { attention });
        vec![Effect::Quit]
    }

    /// Yes to the question asked: does what it asked about.
    pub(super) fn answer_yes(&mut self) -> Vec<Effect> {
        match self.confirm.take().map(|c| c.on_yes) {
            Some(ConfirmAction::Quit) => self.quit(),
            Some(ConfirmAction::StopAgent(agent)) => {
                self.info(format!("stopping {agent}"));
                vec![Effect::Command(Command::Stop { agent })]
            }
            Some(ConfirmAction::Delete(file)) => {
                vec![Effect::Command(Command::DeleteDocument { file })]
            }
            Some(ConfirmAction::DiscardEdit) => {
                self.documents.editor = None;
                Vec::new()
            }
            Some(ConfirmAction::SaveAnyway) => self.documents_do(|d| d.save(true)),
            Some(ConfirmAction::Workspace { agent, op }) => {
                vec![Effect::Command(Command::Workspace { agent, op })]
            }
            None => Vec::new(),
        }
    }

    /// No to the question asked (or any key it does not bind): nothing
    /// happens; a stop not done is said.
    pub(super) fn answer_no(&mut self) -> Vec<Effect> {
        if let Some(ConfirmAction::StopAgent(agent)) = self.confirm.take().map(|c| c.on_yes) {
            self.info(format!("{agent} not stopped"));
        }
        Vec::new()
    }

    /// `stop` of an agent: asks first, as the web page does (a stray `s`
    /// must not end a turn); `y` stops it.
    pub(super) fn ask_stop(&mut self, agent: String) -> Vec<Effect> {
        let (yes, no) = (self.answer_key("yes", "y"), self.answer_key("no", "n"));
        self.confirm = Some(Confirm {
            question: format!(
                "Stop {agent}? Its turn ends; its unread messages stay. ({yes}/{no})"
            ),
            on_yes: ConfirmAction::StopAgent(agent),
        });
        Vec::new()
    }

    /// `delete`: asks before deleting the document (the selected one
    /// without a name).
    pub(super) fn ask_delete(&mut self, file: Option<String>) -> Vec<Effect> {
        let Some(f) = file.or_else(|| self.documents.selected_file().map(str::to_string)) else {
            return self.refuse("delete: no document selected");
        };
        let (yes, no) = (self.answer_key("yes", "y"), self.answer_key("no", "n"));
        self.confirm = Some(Confirm {
            question: format!("Delete {f}? ({yes}/{no})"),
            on_yes: ConfirmAction::Delete(f),
        });
        Vec::new()
    }
}
