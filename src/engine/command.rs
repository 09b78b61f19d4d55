//! What front ends ask the engine to do. The engine is the only place that
//! changes state; front ends send these and render events.

use crate::context::Since;

/// A request to the engine.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Post a message to the channel as `user`.
    Post { text: String },
    /// Stop an agent (its whole process group); its unread messages stay.
    Stop { agent: String },
    /// Let a stopped or failed agent work again.
    Restart { agent: String },
    /// Resume after a loop-guard or budget pause.
    Resume,
    /// Acknowledge `agent`'s inbox up to `until` (the user's ack).
    Ack { agent: String, until: Since },
    /// Stop every agent and end the instance, leaving it on disk.
    Shutdown,
}
