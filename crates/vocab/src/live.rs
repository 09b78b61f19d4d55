//! One agent's turn as it happens: its streamed text, its tool calls (with
//! kind, status, files and diffs), its plan and its usage. Folded from the
//! backend's events by the engine (for snapshots) and by every front end
//! (the agents pane, the live view, the web page) alike.

use serde::{Deserialize, Serialize};

use super::activity::{BackendEvent, PlanEntry, ToolCallView, Usage};

/// How much streamed text is kept (the newest part).
pub const TEXT_KEPT: usize = 16 * 1024;
/// How many tool calls are kept (the newest).
pub const CALLS_KEPT: usize = 40;

/// The live state of one agent's current (or last) turn.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentLive {
    /// The newest [`TEXT_KEPT`] bytes of the turn's text.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// The turn's tool calls, oldest first (at most [`CALLS_KEPT`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<ToolCallView>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plan: Vec<PlanEntry>,
    #[serde(default)]
    pub usage: Usage,
}

impl AgentLive {
    /// Folds one event in.
    pub fn apply(&mut self, event: &BackendEvent) {
        match event {
            BackendEvent::Text { text } => {
                self.text.push_str(text);
                if self.text.len() > TEXT_KEPT {
                    let mut cut = self.text.len() - TEXT_KEPT;
                    while !self.text.is_char_boundary(cut) {
                        cut += 1;
                    }
                    self.text.drain(..cut);
                }
            }
            BackendEvent::Tool { call } => match self.calls.iter_mut().find(|c| c.id == call.id) {
                Some(c) => *c = call.clone(),
                None => {
                    self.calls.push(call.clone());
                    if self.calls.len() > CALLS_KEPT {
                        self.calls.remove(0);
                    }
                }
            },
            BackendEvent::Plan { entries } => self.plan = entries.clone(),
            BackendEvent::Usage { usage } => self.usage = *usage,
            _ => {}
        }
    }

    /// The calls still running.
    pub fn running(&self) -> impl Iterator<Item = &ToolCallView> {
        self.calls.iter().filter(|c| !c.finished())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_update_in_place_and_text_keeps_its_newest_part() {
        let mut l = AgentLive::default();
        let call = |status: &str| BackendEvent::Tool {
            call: ToolCallView {
                id: "1".into(),
                status: status.into(),
                ..ToolCallView::default()
            },
        };
        l.apply(&call("pending"));
        l.apply(&call("completed"));
        assert_eq!(l.calls.len(), 1);
        assert_eq!(l.running().count(), 0);
        l.apply(&BackendEvent::Text {
            text: "é".repeat(TEXT_KEPT),
        });
        assert!(l.text.len() <= TEXT_KEPT && l.text.starts_with('é'));
    }
}
