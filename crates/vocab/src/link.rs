//! A front end's connection to an engine: commands out with a private way
//! back for each one's answer, and the broadcast of facts in. The TUI and
//! other front ends take a [`Link`], whether the engine runs in this process
//! or behind an instance's control endpoint.

use std::future::Future;

use tokio::sync::{broadcast, mpsc, oneshot};

use super::command::{CommandFailed, Reply};
use super::{Command, EngineEvent};

/// Where the engine answers one command: to its sender alone.
pub type ReplyTo = oneshot::Sender<Result<Reply, CommandFailed>>;

/// A command on its way to the engine, with the way back to its sender.
#[derive(Debug)]
pub struct Envelope {
    /// What to do.
    pub command: Command,
    /// Where the answer goes (dropped unanswered only when the engine ends).
    pub reply: ReplyTo,
}

/// Why a request got no reply.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// The engine could not carry the command out.
    #[error(transparent)]
    Failed(#[from] CommandFailed),
    /// The engine (or the connection to it) has gone.
    #[error("the instance has ended")]
    EngineGone,
}

/// Sends commands to one engine; cheap to clone, one per task that needs it.
#[derive(Clone, Debug)]
pub struct CommandSender {
    tx: mpsc::UnboundedSender<Envelope>,
}

impl CommandSender {
    /// A sender over an engine's command queue (or a bridge to a remote one).
    pub fn new(tx: mpsc::UnboundedSender<Envelope>) -> CommandSender {
        CommandSender { tx }
    }

    /// Sends a command whose answer nobody waits for; `false` when the
    /// engine has gone.
    pub fn send(&self, command: Command) -> bool {
        let (reply, _) = oneshot::channel();
        self.tx.send(Envelope { command, reply }).is_ok()
    }

    /// Sends a command at once and returns its private answer, when it
    /// comes. The returned future owns everything it needs (`'static`), so a
    /// front end can keep many in flight.
    pub fn request(
        &self,
        command: Command,
    ) -> impl Future<Output = Result<Reply, RequestError>> + Send + 'static {
        let (reply, answer) = oneshot::channel();
        let sent = self.tx.send(Envelope { command, reply }).is_ok();
        async move {
            if !sent {
                return Err(RequestError::EngineGone);
            }
            match answer.await {
                Ok(result) => result.map_err(RequestError::Failed),
                Err(_) => Err(RequestError::EngineGone),
            }
        }
    }

    /// Whether the engine has gone.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// Where an engine's facts can be heard: hands out receivers of the one
/// event stream, and nothing else (nobody but the engine publishes on it).
/// The control endpoint gives one to every connection, so each client
/// hears the engine's stream itself, not a copy relayed by another task.
#[derive(Clone, Debug)]
pub struct Facts(broadcast::Sender<EngineEvent>);

impl Facts {
    /// The facts published on `stream` (the engine's own sender).
    pub fn new(stream: broadcast::Sender<EngineEvent>) -> Facts {
        Facts(stream)
    }

    /// A receiver of every fact from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.0.subscribe()
    }
}

/// Commands to an engine (answered privately) and the stream of its facts.
#[derive(Debug)]
pub struct Link {
    /// Commands out; each one's answer comes back to the sender alone.
    pub commands: CommandSender,
    /// The facts every front end sees.
    pub events: broadcast::Receiver<EngineEvent>,
}

impl Link {
    /// Sends a command whose answer nobody waits for; `false` when the
    /// engine has gone.
    pub fn send(&self, command: Command) -> bool {
        self.commands.send(command)
    }

    /// Sends a command and returns its private answer (see
    /// [`CommandSender::request`]).
    pub fn request(
        &self,
        command: Command,
    ) -> impl Future<Output = Result<Reply, RequestError>> + Send + 'static {
        self.commands.request(command)
    }
}

/// The events a front end receives while a snapshot it asked for is on its
/// way. The snapshot answers privately, so it is not ordered with the
/// broadcast: events that arrive before it may be older or newer than it.
/// Holding them and applying them again after the snapshot is right either
/// way — every fact an event carries is the latest value of something
/// (a status, a cursor, a list), and messages carry ids that front ends
/// skip when already held — whereas applying the snapshot after a newer
/// event would go back in time.
#[derive(Debug, Default)]
pub struct Resync {
    /// Snapshots asked for and not answered yet.
    outstanding: usize,
    /// The events held since the first of them was asked for; `Some` while
    /// holding.
    held: Option<Vec<EngineEvent>>,
}

impl Resync {
    /// Holding from the start: everything waits for a first snapshot.
    pub fn waiting() -> Resync {
        Resync {
            outstanding: 0,
            held: Some(Vec::new()),
        }
    }

    /// A snapshot was asked for: hold events until it comes.
    pub fn asked(&mut self) {
        self.outstanding += 1;
        self.held.get_or_insert_with(Vec::new);
    }

    /// Whether events are being held for a snapshot.
    pub fn holding(&self) -> bool {
        self.held.is_some()
    }

    /// An event arrived: returns it to apply now, or holds it for after the
    /// snapshot. Notices and the end of the run are not part of a snapshot
    /// and pass at once.
    pub fn arrived(&mut self, event: EngineEvent) -> Option<EngineEvent> {
        match &mut self.held {
            Some(held)
                if !matches!(
                    event,
                    EngineEvent::Notice { .. } | EngineEvent::Finished { .. }
                ) =>
            {
                held.push(event);
                None
            }
            _ => Some(event),
        }
    }

    /// A snapshot arrived (apply it first): returns the events to apply
    /// after it. While another snapshot is still outstanding, they stay held
    /// for that one too.
    pub fn answered(&mut self) -> Vec<EngineEvent> {
        self.outstanding = self.outstanding.saturating_sub(1);
        if self.outstanding == 0 {
            self.held.take().unwrap_or_default()
        } else {
            self.held.clone().unwrap_or_default()
        }
    }

    /// The snapshot asked for will not come (the request failed).
    pub fn abandoned(&mut self) -> Vec<EngineEvent> {
        self.answered()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notice(text: &str) -> EngineEvent {
        EngineEvent::Notice { text: text.into() }
    }

    #[test]
    fn events_wait_for_the_snapshot_then_replay_in_order() {
        let mut r = Resync::default();
        assert!(r.arrived(EngineEvent::Resumed).is_some(), "not holding");
        r.asked();
        assert!(r.arrived(EngineEvent::Resumed).is_none());
        assert_eq!(r.arrived(notice("n")), Some(notice("n")), "notices pass");
        r.asked();
        assert!(
            r.arrived(EngineEvent::Finished {
                outcome: crate::RunOutcome::Completed
            })
            .is_some()
        );
        // The first answer replays, but keeps holding for the second.
        assert_eq!(r.answered(), vec![EngineEvent::Resumed]);
        assert!(r.holding());
        assert!(r.arrived(EngineEvent::Resumed).is_none());
        assert_eq!(
            r.answered(),
            vec![EngineEvent::Resumed, EngineEvent::Resumed]
        );
        assert!(!r.holding());
        assert!(r.arrived(EngineEvent::Resumed).is_some());
    }

    #[tokio::test]
    async fn a_request_to_a_gone_engine_says_so() {
        let (tx, rx) = mpsc::unbounded_channel();
        let sender = CommandSender::new(tx);
        drop(rx);
        assert_eq!(
            sender.request(Command::Resume).await,
            Err(RequestError::EngineGone)
        );
        assert!(!sender.send(Command::Resume));
    }
}
