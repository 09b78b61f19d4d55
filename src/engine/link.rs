//! A front end's connection to an engine: commands out, events in. The TUI
//! and other front ends take a [`Link`], whether the engine runs in this
//! process or behind an instance's control endpoint.

use tokio::sync::{broadcast, mpsc};

use super::{Command, Engine, EngineEvent};

/// Commands to an engine and the stream of its events.
#[derive(Debug)]
pub struct Link {
    pub commands: mpsc::UnboundedSender<Command>,
    pub events: broadcast::Receiver<EngineEvent>,
}

impl Link {
    /// A link to an engine in this process.
    pub fn local(engine: &Engine) -> Link {
        Link {
            commands: engine.commands(),
            events: engine.subscribe(),
        }
    }

    /// Sends a command; `false` when the engine has gone.
    pub fn send(&self, command: Command) -> bool {
        self.commands.send(command).is_ok()
    }
}
