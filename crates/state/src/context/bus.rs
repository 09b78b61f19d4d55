//! The state's one stream of facts ([`ContextEvent`]) and who may publish
//! on it. The state ([`super::SharedContext`]) owns the [`Bus`]; the task
//! board and the approvals it is made of get a [`Publisher`] of that bus
//! when they are made, so every fact of one instance goes out on one
//! stream, in the order it was written, and nothing is re-pointed later.

use tokio::sync::broadcast;

use crate::vocab::state::ContextEvent;

/// How many events a slow receiver may fall behind before it misses some
/// (it then gets `RecvError::Lagged` and should re-read the store).
pub const EVENT_CAPACITY: usize = 4096;

/// The stream itself: made once per state, owned by it, subscribed to
/// through it.
#[derive(Debug)]
pub struct Bus {
    sender: broadcast::Sender<ContextEvent>,
}

impl Default for Bus {
    fn default() -> Self {
        Bus::new()
    }
}

impl Bus {
    /// A new stream, with nobody listening yet.
    pub fn new() -> Bus {
        let (sender, _) = broadcast::channel(EVENT_CAPACITY);
        Bus { sender }
    }

    /// A publisher on this stream, for a part of the state (the board,
    /// the approvals) made before the state itself.
    pub fn publisher(&self) -> Publisher {
        Publisher {
            sender: Some(self.sender.clone()),
        }
    }

    /// A receiver of every fact published from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<ContextEvent> {
        self.sender.subscribe()
    }

    /// Publishes `event` (nobody listening is not an error).
    pub fn publish(&self, event: ContextEvent) {
        let _ = self.sender.send(event);
    }

    /// Whether `publisher` publishes on this stream.
    pub fn carries(&self, publisher: &Publisher) -> bool {
        publisher
            .sender
            .as_ref()
            .is_some_and(|s| s.same_channel(&self.sender))
    }
}

/// The right to publish on one state's stream, handed to the parts of the
/// state; cheap to clone.
#[derive(Clone, Debug)]
pub struct Publisher {
    sender: Option<broadcast::Sender<ContextEvent>>,
}

impl Publisher {
    /// A publisher on no stream, for a board or approvals used alone,
    /// outside any state (a snapshot of a task file, a test): what it
    /// publishes reaches nobody, and no state accepts it as a part.
    pub fn unheard() -> Publisher {
        Publisher { sender: None }
    }

    /// Publishes `event` on the stream (nobody listening is not an error).
    pub fn publish(&self, event: ContextEvent) {
        if let Some(sender) = &self.sender {
            let _ = sender.send(event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::channel::Cursor;

    fn moved() -> ContextEvent {
        ContextEvent::CursorChanged {
            agent: "a".into(),
            cursor: Cursor {
                acked: 0,
                delivered: 0,
            },
        }
    }

    #[test]
    fn a_publisher_reaches_its_bus_subscribers_and_an_unheard_one_nobody() {
        let bus = Bus::new();
        let mut rx = bus.subscribe();
        let publisher = bus.publisher();
        publisher.publish(moved());
        assert_eq!(rx.try_recv().unwrap(), moved());
        Publisher::unheard().publish(moved());
        assert!(rx.try_recv().is_err());
        assert!(bus.carries(&publisher));
        assert!(!bus.carries(&Publisher::unheard()));
        assert!(!Bus::new().carries(&publisher));
    }
}
