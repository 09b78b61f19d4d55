//! A turn in progress, whatever runs it (a process or an API loop): its
//! updates and a way to stop it. The engine treats every backend alike.

use tokio::sync::{mpsc, oneshot};

use super::event::BackendEvent;
use super::outcome::TurnOutcome;

/// What a running turn reports: events, then exactly one outcome.
#[derive(Debug)]
pub enum TurnUpdate {
    Event(BackendEvent),
    Done(TurnOutcome),
}

/// A turn in progress.
#[derive(Debug)]
pub struct RunningTurn {
    /// Process id (also its process group id) for CLI backends.
    pub pid: Option<u32>,
    pub updates: mpsc::UnboundedReceiver<TurnUpdate>,
    stop: Option<oneshot::Sender<()>>,
}

impl RunningTurn {
    /// A turn whose runner reports on `updates` and watches `stop`.
    pub fn new(
        pid: Option<u32>,
        updates: mpsc::UnboundedReceiver<TurnUpdate>,
        stop: oneshot::Sender<()>,
    ) -> Self {
        RunningTurn {
            pid,
            updates,
            stop: Some(stop),
        }
    }

    /// Asks the turn to stop. The outcome still arrives on `updates`, failed
    /// with "stopped".
    pub fn stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}
