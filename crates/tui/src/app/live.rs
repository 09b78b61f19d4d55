//! One agent's live view: opening it, its keys (`[keys.live]`, every
//! other key types its line), sending the typed line to the agent, and
//! cancelling the agent's running turn.

use ratatui::crossterm::event::KeyEvent;

use crate::action::Action;
use crate::keymap::{Key, Section};
use crate::panes::agents::AgentRow;
use crate::panes::command_bar::BarEvent;
use crate::panes::live::LiveView;
use crate::vocab::{AgentStatus, Command};

use super::*;

impl App {
    /// `live`: opens the live view of the named (or selected) agent.
    pub(super) fn open_live(&mut self, target: Option<String>) -> Vec<Effect> {
        if let Some(agent) = self.target_agent(target, "live") {
            self.live = Some(LiveView::new(agent));
        }
        Vec::new()
    }

    /// The row of `agent`, when it is in the workflow.
    fn row(&self, agent: &str) -> Option<&AgentRow> {
        self.agents.rows.iter().find(|r| r.name == agent)
    }

    /// `interrupt`: cancels the running turn of the named agent (the live
    /// view's, else the selected one); in the live view with no turn
    /// running, closes the view.
    pub(super) fn interrupt(&mut self, target: Option<String>) -> Vec<Effect> {
        let in_view = target.is_none() && self.live.is_some();
        let target = target.or_else(|| self.live.as_ref().map(|l| l.agent.clone()));
        let Some(agent) = self.target_agent(target, "interrupt") else {
            return Vec::new();
        };
        if !self.row(&agent).is_some_and(|r| r.status.in_turn()) {
            if in_view {
                self.live = None;
                return Vec::new();
            }
            return self.refuse(format!("interrupt: {agent} has no turn running"));
        }
        self.info(format!(
            "cancelling {agent}'s turn; it stays ready for the next message"
        ));
        vec![Effect::Command(Command::Cancel { agent })]
    }

    /// Enter in the live view: posts the line to the channel addressed to
    /// the view's agent, as the command bar posts `@agent text` (it wakes
    /// the agent, which goes on with its conversation).
    fn live_send(&mut self, line: String) -> Vec<Effect> {
        let Some(view) = self.live.as_mut() else {
            return Vec::new();
        };
        if line.trim().is_empty() {
            return Vec::new();
        }
        view.scroll = None;
        let agent = view.agent.clone();
        let stopped = self
            .row(&agent)
            .is_some_and(|r| r.status == AgentStatus::Stopped);
        let effects = self.send(agent.clone(), line);
        if effects.is_empty() {
            return effects;
        }
        if stopped {
            self.info(format!(
                "sent; {agent} is stopped: it reads the message once restarted (/restart {agent})"
            ));
        } else {
            self.info(format!("sent to {agent}"));
        }
        effects
    }

    /// A key while the live view is open: its `[keys.live]` binding, else
    /// the key types its line (Enter sends it).
    pub(super) fn live_key(&mut self, key: KeyEvent, k: Key) -> Option<Vec<Effect>> {
        self.live.as_ref()?;
        if let Some(action) = self.keymap.get(Section::Live, &k).cloned() {
            return Some(match action {
                Action::Move(m) => {
                    if let Some(view) = self.live.as_mut() {
                        view.scroll_by(m);
                    }
                    Vec::new()
                }
                Action::Back => {
                    self.live = None;
                    Vec::new()
                }
                a => self.act(a),
            });
        }
        let event = self.live.as_mut()?.input.event(&key, &[]);
        Some(match event {
            BarEvent::Submit(line, _) => self.live_send(line),
            BarEvent::Leave => {
                self.live = None;
                Vec::new()
            }
            BarEvent::Consumed | BarEvent::NotConsumed => Vec::new(),
        })
    }
}
