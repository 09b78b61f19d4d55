//! What one of the engine's actors (turn supervision, task announcing)
//! asks of the driver's loop after handling a message: the actor owns its
//! state, the loop alone tells the person, the front ends and the runner.

use super::event::EngineEvent;
use crate::agents::runner::Event;

/// What an actor's message handler says, carried out by the loop in this
/// order: events to the front ends, notices, then events to the runner.
#[derive(Debug, Default)]
pub(super) struct Outbox {
    /// Shown to every front end.
    pub emits: Vec<EngineEvent>,
    /// Said to the person (and logged), as the loop's notices.
    pub notices: Vec<String>,
    /// Queued for the runner, in order.
    pub events: Vec<Event>,
}

impl Outbox {
    /// Says `text` to the person.
    pub fn notice(&mut self, text: impl Into<String>) {
        self.notices.push(text.into());
    }
}
