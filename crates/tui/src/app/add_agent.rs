//! Adding an agent from the control room: `n` (or `/agent add`) opens the
//! form ([`AddAgentForm`]), `/agent add NAME BACKEND [workspace]` sends
//! at once; the engine's answer closes the form or shows in it.

use crate::panes::add_agent::{AddAgentForm, FormEvent};
use crate::vocab::agents::NewAgent;

use super::*;

impl App {
    /// `agent add`: the form without an agent, else the command.
    pub(super) fn add_agent(&mut self, agent: Option<NewAgent>) -> Vec<Effect> {
        match agent {
            None => {
                self.add_agent = Some(AddAgentForm::default());
                Vec::new()
            }
            Some(agent) => vec![Effect::Command(Command::AddAgent { agent })],
        }
    }

    /// The open form takes every key; `None` when no form is open.
    pub(super) fn add_agent_key(&mut self, key: &KeyEvent) -> Option<Vec<Effect>> {
        let form = self.add_agent.as_mut()?;
        Some(match form.key(key) {
            FormEvent::Nothing => Vec::new(),
            FormEvent::Cancel => {
                self.add_agent = None;
                Vec::new()
            }
            FormEvent::Submit(agent) => vec![Effect::Command(Command::AddAgent { agent })],
        })
    }

    /// The engine answered an add: accepted (`None`) closes a waiting
    /// form, a refusal shows in it. Whether the form took the answer.
    pub(super) fn add_agent_answered(&mut self, refused: Option<&str>) -> bool {
        let Some(form) = self.add_agent.as_mut().filter(|f| f.waiting) else {
            return false;
        };
        match refused {
            Some(error) => form.refused(error),
            None => self.add_agent = None,
        }
        true
    }
}
