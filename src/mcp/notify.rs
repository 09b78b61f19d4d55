//! Resource change notifications: who is listening, and the task that turns
//! [`ContextEvent`]s into `notifications/resources/updated`.
//!
//! Two kinds of listeners:
//! - sessions (protocol versions with `initialize`): registered when the
//!   client sends `notifications/initialized`, with the URIs it subscribed to
//!   through `resources/subscribe`. A message mentioning an agent notifies
//!   that agent's inbox to all of its sessions, subscribed or not.
//! - `subscriptions/listen` streams (2026-07-28 and later, no sessions): they
//!   receive updates for the URIs they were accepted for.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};
use tokio::sync::broadcast::{
    self,
    error::{RecvError, TryRecvError},
};
use tokio_util::sync::CancellationToken;

use super::resources::{CHANNEL_URI, document_uri, inbox_uri};
use crate::context::{ContextEvent, DocumentChange};

/// How long the notifier gathers events after the first of a burst, so the
/// reply of the call that caused them goes out first and a burst costs one
/// notice per target and URI.
const GATHER: Duration = Duration::from_millis(2);

/// How long one notification may take before it is given up.
const SEND_TIMEOUT: Duration = Duration::from_secs(5);

struct Session {
    agent: String,
    peer: Peer<RoleServer>,
    uris: HashSet<String>,
}

struct Listener {
    sink: SubscriptionSink,
}

#[derive(Default)]
struct State {
    sessions: HashMap<String, Session>,
    listeners: HashMap<u64, Listener>,
    next_listener: u64,
}

/// The registry of everyone who should hear about changes.
#[derive(Default)]
pub struct Hub {
    state: Mutex<State>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.lock();
        f.debug_struct("Hub")
            .field("sessions", &s.sessions.len())
            .field("listeners", &s.listeners.len())
            .finish()
    }
}

/// What to tell a client.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Notice {
    Updated(String),
    ListChanged,
}

enum Target {
    Session(String, Peer<RoleServer>),
    Listener(u64, SubscriptionSink),
}

impl Hub {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records an open session of `agent` (idempotent).
    pub fn register_session(&self, session_id: &str, agent: &str, peer: Peer<RoleServer>) {
        let mut s = self.lock();
        s.sessions
            .entry(session_id.to_string())
            .or_insert_with(|| Session {
                agent: agent.to_string(),
                peer,
                uris: HashSet::new(),
            });
    }

    /// Subscribes a session to `uri`.
    pub fn subscribe(&self, session_id: &str, agent: &str, peer: Peer<RoleServer>, uri: &str) {
        self.register_session(session_id, agent, peer);
        if let Some(session) = self.lock().sessions.get_mut(session_id) {
            session.uris.insert(uri.to_string());
        }
    }

    /// Cancels a session's subscription to `uri`.
    pub fn unsubscribe(&self, session_id: &str, uri: &str) {
        if let Some(session) = self.lock().sessions.get_mut(session_id) {
            session.uris.remove(uri);
        }
    }

    /// Adds a `subscriptions/listen` stream; returns its key for removal.
    pub fn add_listener(&self, sink: SubscriptionSink) -> u64 {
        let mut s = self.lock();
        s.next_listener += 1;
        let id = s.next_listener;
        s.listeners.insert(id, Listener { sink });
        id
    }

    /// Removes a listener added by [`Hub::add_listener`].
    pub fn remove_listener(&self, id: u64) {
        self.lock().listeners.remove(&id);
    }

    /// Number of open sessions (for tests and diagnostics).
    pub fn session_count(&self) -> usize {
        self.lock().sessions.len()
    }

    fn forget_session(&self, id: &str) {
        self.lock().sessions.remove(id);
    }

    /// Who gets what for one event.
    fn plan(&self, event: &ContextEvent) -> Vec<(Target, Notice)> {
        let mut notices: Vec<Notice> = Vec::new();
        let mut mentioned: Vec<&str> = Vec::new();
        match event {
            ContextEvent::MessageAppended { entry } => {
                notices.push(Notice::Updated(CHANNEL_URI.to_string()));
                for m in &entry.mentions {
                    notices.push(Notice::Updated(inbox_uri(m)));
                    mentioned.push(m);
                }
            }
            ContextEvent::CursorChanged { agent, .. } => {
                notices.push(Notice::Updated(inbox_uri(agent)));
            }
            ContextEvent::DocumentChanged { path, change, .. } => {
                notices.push(Notice::Updated(document_uri(path)));
                if matches!(change, DocumentChange::Created | DocumentChange::Deleted) {
                    notices.push(Notice::ListChanged);
                }
            }
            // No resource shows the task board or the approvals.
            ContextEvent::TaskChanged { .. } | ContextEvent::ApprovalChanged { .. } => {}
        }
        self.targets(&notices, &mentioned)
    }

    fn targets(&self, notices: &[Notice], mentioned: &[&str]) -> Vec<(Target, Notice)> {
        let mut s = self.lock();
        s.sessions
            .retain(|_, session| !session.peer.is_transport_closed());
        let mut out = Vec::new();
        for (id, session) in &s.sessions {
            let own_inbox = inbox_uri(&session.agent);
            let was_mentioned = mentioned.contains(&session.agent.as_str());
            for notice in notices {
                let wanted = match notice {
                    Notice::ListChanged => true,
                    Notice::Updated(uri) => {
                        session.uris.contains(uri) || (was_mentioned && *uri == own_inbox)
                    }
                };
                if wanted {
                    out.push((
                        Target::Session(id.clone(), session.peer.clone()),
                        notice.clone(),
                    ));
                }
            }
        }
        for (id, listener) in &s.listeners {
            let accepted = listener.sink.accepted();
            for notice in notices {
                let wanted = match notice {
                    Notice::ListChanged => accepted.resources_list_changed == Some(true),
                    Notice::Updated(uri) => accepted
                        .resource_subscriptions
                        .as_ref()
                        .is_some_and(|uris| uris.contains(uri)),
                };
                if wanted {
                    out.push((Target::Listener(*id, listener.sink.clone()), notice.clone()));
                }
            }
        }
        out
    }

    /// Everything everyone subscribed to, for when events were missed.
    fn plan_everything(&self) -> Vec<(Target, Notice)> {
        let s = self.lock();
        let mut out = Vec::new();
        for (id, session) in &s.sessions {
            let own = inbox_uri(&session.agent);
            let mut uris: Vec<String> = session.uris.iter().cloned().collect();
            if !session.uris.contains(&own) {
                uris.push(own);
            }
            for uri in uris {
                out.push((
                    Target::Session(id.clone(), session.peer.clone()),
                    Notice::Updated(uri),
                ));
            }
        }
        for (id, listener) in &s.listeners {
            for uri in listener
                .sink
                .accepted()
                .resource_subscriptions
                .iter()
                .flatten()
            {
                out.push((
                    Target::Listener(*id, listener.sink.clone()),
                    Notice::Updated(uri.clone()),
                ));
            }
        }
        out
    }

    fn dispatch(self: &Arc<Self>, plan: Vec<(Target, Notice)>) {
        for (target, notice) in plan {
            let hub = Arc::clone(self);
            tokio::spawn(async move {
                match target {
                    Target::Session(id, peer) => {
                        let sent = match notice {
                            Notice::Updated(uri) => tokio::time::timeout(
                                SEND_TIMEOUT,
                                peer.notify_resource_updated(
                                    ResourceUpdatedNotificationParam::new(uri),
                                ),
                            )
                            .await
                            .map(|r| r.is_ok()),
                            Notice::ListChanged => tokio::time::timeout(
                                SEND_TIMEOUT,
                                peer.notify_resource_list_changed(),
                            )
                            .await
                            .map(|r| r.is_ok()),
                        };
                        if sent != Ok(true) && peer.is_transport_closed() {
                            hub.forget_session(&id);
                        }
                    }
                    Target::Listener(id, sink) => {
                        let sent = match notice {
                            Notice::Updated(uri) => {
                                tokio::time::timeout(
                                    SEND_TIMEOUT,
                                    sink.notify_resource_updated(uri),
                                )
                                .await
                            }
                            Notice::ListChanged => {
                                tokio::time::timeout(
                                    SEND_TIMEOUT,
                                    sink.notify_resource_list_changed(),
                                )
                                .await
                            }
                        };
                        if let Ok(Err(rmcp::service::SubscriptionSendError::SubscriptionClosed)) =
                            sent
                        {
                            hub.remove_listener(id);
                        }
                    }
                }
            });
        }
    }
}

/// Follows the context's events and notifies listeners until `stop`.
///
/// Notifications are hints ("look again"), so they give way: after an
/// event the task waits [`GATHER`] (the reply of the call that caused it
/// goes out first), then takes every event that arrived meanwhile and
/// sends each target each URI once. A burst of 100 sends mentioning one
/// agent costs that agent a handful of `resources/updated`, not 100.
pub async fn run(
    hub: Arc<Hub>,
    mut events: broadcast::Receiver<ContextEvent>,
    stop: CancellationToken,
) {
    loop {
        let event = tokio::select! {
            _ = stop.cancelled() => return,
            event = events.recv() => event,
        };
        let mut plan = match event {
            Ok(event) => hub.plan(&event),
            Err(RecvError::Lagged(missed)) => lagged(&hub, missed),
            Err(RecvError::Closed) => return,
        };
        tokio::time::sleep(GATHER).await;
        let mut closed = false;
        loop {
            match events.try_recv() {
                Ok(event) => plan.extend(hub.plan(&event)),
                Err(TryRecvError::Lagged(missed)) => plan = lagged(&hub, missed),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Closed) => {
                    closed = true;
                    break;
                }
            }
        }
        hub.dispatch(once_each(plan));
        if closed {
            return;
        }
    }
}

fn lagged(hub: &Hub, missed: u64) -> Vec<(Target, Notice)> {
    tracing::warn!("resource notifications fell {missed} changes behind; refreshing all");
    hub.plan_everything()
}

/// `plan` without repeats of a notice to the same target, in order.
fn once_each(plan: Vec<(Target, Notice)>) -> Vec<(Target, Notice)> {
    first_of_each(plan, |(target, notice)| match target {
        Target::Session(id, _) => (Some(id.clone()), 0, notice.clone()),
        Target::Listener(id, _) => (None, *id, notice.clone()),
    })
}

/// The first item of each key, in their order.
fn first_of_each<T, K: std::hash::Hash + Eq>(items: Vec<T>, key: impl Fn(&T) -> K) -> Vec<T> {
    let mut seen = HashSet::new();
    items.into_iter().filter(|i| seen.insert(key(i))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_keeps_the_first_of_each_target_and_uri_in_order() {
        let burst = vec![
            ("s1", "inbox/a"),
            ("s1", "channel"),
            ("s2", "inbox/a"),
            ("s1", "inbox/a"),
            ("s1", "channel"),
            ("s2", "channel"),
        ];
        assert_eq!(
            first_of_each(burst, |p| *p),
            vec![
                ("s1", "inbox/a"),
                ("s1", "channel"),
                ("s2", "inbox/a"),
                ("s2", "channel"),
            ]
        );
    }
}
