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

impl TurnUpdate {
    /// The update with every token awtui made taken out of its texts (an
    /// agent that prints its environment, a CLI that echoes its config in
    /// an error), before anything shows, posts or logs it.
    pub fn redacted(mut self) -> Self {
        use crate::secrets::redact_in_place as clean;
        match &mut self {
            TurnUpdate::Event(
                BackendEvent::Text { text }
                | BackendEvent::Stream { text }
                | BackendEvent::Final { text },
            ) => clean(text),
            TurnUpdate::Event(BackendEvent::Error { message }) => clean(message),
            TurnUpdate::Event(BackendEvent::Tool { call }) => {
                clean(&mut call.title);
                call.locations.iter_mut().for_each(clean);
                for d in &mut call.diffs {
                    clean(&mut d.path);
                    clean(&mut d.preview);
                }
            }
            TurnUpdate::Event(BackendEvent::Plan { entries }) => {
                entries.iter_mut().for_each(|e| clean(&mut e.content));
            }
            TurnUpdate::Event(
                BackendEvent::ToolCall { name } | BackendEvent::ToolDone { name, .. },
            ) => clean(name),
            TurnUpdate::Event(_) => {}
            TurnUpdate::Done(outcome) => {
                for text in [&mut outcome.answer, &mut outcome.error]
                    .into_iter()
                    .flatten()
                {
                    clean(text);
                }
            }
        }
        self
    }
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

    /// Splits the turn so one task can read its updates while another keeps
    /// the means to stop it.
    pub fn into_parts(self) -> (mpsc::UnboundedReceiver<TurnUpdate>, TurnStopper) {
        (self.updates, TurnStopper(self.stop))
    }
}

/// Stops a turn whose updates are read elsewhere.
#[derive(Debug)]
pub struct TurnStopper(Option<oneshot::Sender<()>>);

impl TurnStopper {
    /// Asks the turn to stop (once; later calls do nothing).
    pub fn stop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}
