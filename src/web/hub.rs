//! Every running instance, as the page sees it: the hub re-reads the
//! registry every [`POLL_EVERY`] (instances started before and after
//! `awtui web` alike), keeps one control connection per instance for its
//! live events and its commands, and polls each one's status and `user`'s
//! inbox like the home screen ([`crate::commands::home::poll_one`]) to build
//! the attention list ([`crate::tui::attention::collect`]).
//!
//! What happens goes out on one broadcast of ready-made SSE payloads:
//! `overview` (instances, attention, pending approvals) when it changed,
//! `event` (one instance's engine event, as [`super::view::event`] shapes
//! it), and `resync` (this instance's events were lost: ask it again, the
//! rule `attach` follows).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{Notify, broadcast, mpsc};
use tokio_util::sync::CancellationToken;

use super::view;
use crate::instance::registry::{self, InstanceInfo};
use crate::tui::attention::{self, AttentionItem, FirstSeen, Jump, Polled};
use crate::vocab::{ApprovalEvent, Request};
use crate::vocab::{Command, CommandFailed, CommandSender, EngineEvent, Reply, RequestError};

/// How often the registry is read and every instance asked for its status.
pub const POLL_EVERY: Duration = Duration::from_secs(1);
/// How many SSE payloads a slow page may fall behind before it resyncs.
const FANOUT: usize = 4096;

/// The page's name for an instance: a hash of its folder (two instances
/// may share a name; a folder's path is not for the address bar).
pub fn instance_id(home: &std::path::Path) -> String {
    crate::instance::layout::path_hash(home)[..12].to_string()
}

/// One instance the hub follows.
struct Followed {
    info: InstanceInfo,
    /// Its commands, once connected.
    commands: Option<CommandSender>,
    /// What waits for a decision, oldest first.
    pending: Vec<Request>,
    stop: CancellationToken,
}

#[derive(Default)]
struct Shared {
    followed: BTreeMap<String, Followed>,
    /// The latest overview, as sent.
    overview: Value,
}

/// Why a command from the page was not carried out.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// No running instance has this id.
    #[error("no running instance {0}")]
    NoInstance(String),
    /// The instance is not connected (yet, or any more).
    #[error("instance @{0} does not answer")]
    Gone(String),
    /// The engine refused.
    #[error(transparent)]
    Failed(#[from] CommandFailed),
}

/// The instances, their live events and their commands.
#[derive(Clone)]
pub struct Hub {
    shared: Arc<Mutex<Shared>>,
    tx: broadcast::Sender<Arc<str>>,
    kick: Arc<Notify>,
}

/// A new attention item, for the webhook.
pub type Fresh = AttentionItem;

impl Hub {
    /// Starts polling until `stop`; new attention items go to `fresh`.
    pub fn start(stop: CancellationToken, fresh: Option<mpsc::Sender<Fresh>>) -> Hub {
        let (tx, _) = broadcast::channel(FANOUT);
        let hub = Hub {
            shared: Arc::new(Mutex::new(Shared {
                overview: json!({"instances": [], "attention": [], "approvals": []}),
                ..Shared::default()
            })),
            tx,
            kick: Arc::new(Notify::new()),
        };
        let poller = hub.clone();
        tokio::spawn(async move { poller.poll_loop(stop, fresh).await });
        hub
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The stream of SSE payloads.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<str>> {
        self.tx.subscribe()
    }

    /// The latest overview.
    pub fn overview(&self) -> Value {
        self.lock().overview.clone()
    }

    fn send(&self, payload: Value) {
        let _ = self.tx.send(Arc::from(payload.to_string()));
    }

    /// The command sender of instance `id`.
    fn commands(&self, id: &str) -> Result<(CommandSender, String), HubError> {
        let shared = self.lock();
        let f = shared
            .followed
            .get(id)
            .ok_or_else(|| HubError::NoInstance(id.to_string()))?;
        match &f.commands {
            Some(c) => Ok((c.clone(), f.info.instance.clone())),
            None => Err(HubError::Gone(f.info.instance.clone())),
        }
    }

    /// Sends `command` to instance `id` and waits for its answer.
    pub async fn call(&self, id: &str, command: Command) -> Result<Reply, HubError> {
        let (commands, name) = self.commands(id)?;
        match commands.request(command).await {
            Ok(reply) => Ok(reply),
            Err(RequestError::Failed(f)) => Err(HubError::Failed(f)),
            Err(RequestError::EngineGone) => Err(HubError::Gone(name)),
        }
    }

    /// The registry record of instance `id`.
    pub fn info(&self, id: &str) -> Option<InstanceInfo> {
        self.lock().followed.get(id).map(|f| f.info.clone())
    }

    async fn poll_loop(self, stop: CancellationToken, fresh: Option<mpsc::Sender<Fresh>>) {
        let mut seen = FirstSeen::default();
        let mut notifier = crate::tui::notify::Notifier::default();
        loop {
            let running = tokio::task::spawn_blocking(registry::running)
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            self.follow(&running, &stop);
            let polled: Vec<Polled> = futures_util::future::join_all(
                running.into_iter().map(crate::commands::home::poll_one),
            )
            .await;
            // What each waiting agent asks, from the approvals followed;
            // an agent seen waiting before its request's event arrived
            // here makes the hub ask the engine (the two come over
            // different connections).
            let mut polled = polled;
            for p in &polled {
                let id = instance_id(&p.info.home);
                let waiting = p.status.iter().flat_map(|s| &s.agents).any(|a| {
                    a.status == crate::vocab::AgentStatus::WaitingForApproval
                        && !self
                            .lock()
                            .followed
                            .get(&id)
                            .is_some_and(|f| f.pending.iter().any(|r| r.agent == a.name))
                });
                if waiting {
                    self.refresh_pending(&id).await;
                }
            }
            {
                let shared = self.lock();
                for p in &mut polled {
                    if let Some(f) = shared.followed.get(&instance_id(&p.info.home)) {
                        p.approvals = f.pending.clone();
                    }
                }
            }
            let items = attention::collect(&polled, &mut seen, chrono::Utc::now());
            if let Some(fresh) = &fresh {
                for item in notifier.fresh(&items, &crate::tui::notify::Looking::List) {
                    // Never blocks the poll: a full queue drops the item
                    // (the sender logs it).
                    if fresh.try_send(item.clone()).is_err() {
                        tracing::warn!("webhook queue full; an attention item was not sent");
                    }
                }
            }
            let overview = self.build_overview(&polled, &items);
            let changed = {
                let mut shared = self.lock();
                let changed = shared.overview != overview;
                shared.overview = overview.clone();
                changed
            };
            if changed {
                self.send(json!({"type": "overview", "overview": overview}));
            }
            tokio::select! {
                () = stop.cancelled() => break,
                () = self.kick.notified() => {}
                () = tokio::time::sleep(POLL_EVERY) => {}
            }
        }
        for f in self.lock().followed.values() {
            f.stop.cancel();
        }
    }

    /// Follows instances new in `running`, forgets those gone.
    fn follow(&self, running: &[InstanceInfo], stop: &CancellationToken) {
        let mut shared = self.lock();
        let ids: Vec<String> = running.iter().map(|i| instance_id(&i.home)).collect();
        shared.followed.retain(|id, f| {
            let keep = ids.contains(id) && !f.stop.is_cancelled();
            if !keep {
                f.stop.cancel();
            }
            keep
        });
        for (id, info) in ids.into_iter().zip(running) {
            if shared.followed.contains_key(&id) {
                continue;
            }
            let token = stop.child_token();
            shared.followed.insert(
                id.clone(),
                Followed {
                    info: info.clone(),
                    commands: None,
                    pending: Vec::new(),
                    stop: token.clone(),
                },
            );
            let hub = self.clone();
            let info = info.clone();
            tokio::spawn(async move { hub.live(id, info, token).await });
        }
    }

    /// One instance's connection: its commands, its pending approvals and
    /// its events, until it ends or `stop`.
    async fn live(self, id: String, info: InstanceInfo, stop: CancellationToken) {
        let link = tokio::select! {
            () = stop.cancelled() => return,
            l = tokio::time::timeout(crate::commands::home::ASK_TIMEOUT, crate::instance::connect(&info)) => l,
        };
        let Ok(Ok(link)) = link else {
            tracing::info!("web: cannot connect to @{}; will retry", info.instance);
            // Forgotten: the next poll follows it again.
            stop.cancel();
            return;
        };
        let mut events = link.events;
        let commands = link.commands;
        let pending = match commands.request(Command::Snapshot { messages: 0 }).await {
            Ok(Reply::Snapshot { snapshot }) => snapshot.approvals.pending,
            _ => Vec::new(),
        };
        if let Some(f) = self.lock().followed.get_mut(&id) {
            f.commands = Some(commands);
            f.pending = pending;
        }
        self.kick.notify_one();
        loop {
            let event = tokio::select! {
                () = stop.cancelled() => break,
                e = events.recv() => e,
            };
            match event {
                Ok(event) => self.on_event(&id, &event),
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    tracing::warn!("web: fell {n} events behind @{}; resync", info.instance);
                    self.resync(&id).await;
                }
                Err(broadcast::error::RecvError::Closed) => break,
            }
        }
        stop.cancel();
        self.kick.notify_one();
    }

    /// Takes a fresh list of instance `id`'s pending approvals (over a
    /// connection of its own while the live one is not up yet).
    async fn refresh_pending(&self, id: &str) {
        let asked = match self.call(id, Command::Snapshot { messages: 0 }).await {
            Err(HubError::Gone(_)) => {
                let Some(info) = self.info(id) else { return };
                let direct = async {
                    let mut client = crate::instance::control::Client::open(&info).await.ok()?;
                    client
                        .call(Command::Snapshot { messages: 0 })
                        .await
                        .ok()?
                        .ok()
                };
                tokio::time::timeout(crate::commands::home::ASK_TIMEOUT, direct)
                    .await
                    .ok()
                    .flatten()
            }
            other => other.ok(),
        };
        if let Some(Reply::Snapshot { snapshot }) = asked
            && let Some(f) = self.lock().followed.get_mut(id)
        {
            f.pending = snapshot.approvals.pending;
        }
    }

    /// Takes a fresh list of pending approvals and tells the page to ask
    /// for the instance again.
    async fn resync(&self, id: &str) {
        self.refresh_pending(id).await;
        self.send(json!({"type": "resync", "instance": id}));
        self.kick.notify_one();
    }

    fn on_event(&self, id: &str, event: &EngineEvent) {
        if let EngineEvent::Approval { approval } = event {
            let mut shared = self.lock();
            if let Some(f) = shared.followed.get_mut(id) {
                match approval.as_ref() {
                    ApprovalEvent::Requested { request } => {
                        if !f.pending.iter().any(|r| r.id == request.id) {
                            f.pending.push(request.clone());
                        }
                    }
                    ApprovalEvent::Decided { decision } => {
                        f.pending.retain(|r| r.id != decision.id);
                    }
                    ApprovalEvent::Standing { .. } => {}
                }
            }
            drop(shared);
            self.kick.notify_one();
        }
        // A remote engine tells a client that fell behind with a notice.
        if let EngineEvent::Notice { text } = event
            && text.contains(crate::instance::control::FELL_BEHIND)
        {
            let hub = self.clone();
            let id = id.to_string();
            tokio::spawn(async move { hub.resync(&id).await });
            return;
        }
        if let Some(v) = view::event(event) {
            self.send(json!({"type": "event", "instance": id, "event": v}));
        }
    }

    /// The instances, what waits across them, and the approval cards.
    fn build_overview(&self, polled: &[Polled], items: &[AttentionItem]) -> Value {
        let shared = self.lock();
        let rows = crate::tui::home::rows(polled, items);
        let instances: Vec<Value> = polled
            .iter()
            .zip(rows)
            .map(|(p, row)| {
                let id = instance_id(&p.info.home);
                json!({
                    "id": id,
                    "name": p.info.instance,
                    "workflow": row.workflow,
                    "folder": row.folder,
                    "working": row.working,
                    "total": row.total,
                    "unread": row.unread,
                    "cost": row.cost,
                    "started": row.started,
                    "attention": row.attention,
                    "note": row.note,
                    "connected": shared.followed.get(&id).is_some_and(|f| f.commands.is_some()),
                })
            })
            .collect();
        let attention: Vec<Value> = items
            .iter()
            .map(|i| {
                let (message, agent) = match &i.jump {
                    Jump::Message(m) => (Some(*m), None),
                    Jump::Agent(a) => (None, Some(a.clone())),
                    Jump::Instance => (None, None),
                };
                json!({
                    "key": i.key(),
                    "instance": instance_id(&i.home),
                    "instance_name": i.instance,
                    "kind": i.kind.label(),
                    "at": i.when,
                    "from": i.from,
                    "summary": i.summary,
                    "message": message,
                    "agent": agent,
                })
            })
            .collect();
        let mut approvals: Vec<Value> = Vec::new();
        for (id, f) in &shared.followed {
            for r in &f.pending {
                let mut card = view::approval(id, r);
                card["instance_name"] = json!(f.info.instance);
                approvals.push(card);
            }
        }
        json!({"instances": instances, "attention": attention, "approvals": approvals})
    }
}
