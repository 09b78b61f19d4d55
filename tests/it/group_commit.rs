//! Group commit of sends: concurrent senders share one flush, nothing is
//! visible (or answered) before it is durable, a failed flush fails every
//! send of its batch and leaves the channel clean, and a file context
//! keeps every acknowledged message and a complete mirror.

use std::io;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use awtui::context::store::{CursorState, Fsync, Journal, Pending, Store, SyncTarget};
use awtui::context::{ChannelEntry, ContextError, ContextStore, FileStore, StoreLayout};
use awtui::mcp::{ContextEvent, SharedContext};

use crate::patience;
use patience::PATIENCE;

fn layout() -> StoreLayout {
    StoreLayout {
        channel: "channel.md".into(),
        document: "notes.md".into(),
        documents: vec![],
        agents: vec!["coder".into(), "reviewer".into()],
    }
}

/// What the fake journal saw, and how its flushes behave.
#[derive(Debug, Default)]
struct State {
    writes: usize,
    flushes: usize,
    rollbacks: usize,
    /// Flushes wait while this is set.
    hold: bool,
    /// How many flushes (from the next one on) fail.
    fail: usize,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut s = self.state.lock().unwrap();
        let out = f(&mut s);
        self.changed.notify_all();
        out
    }

    fn wait_for(&self, what: &str, check: impl Fn(&State) -> bool) {
        let deadline = Instant::now() + PATIENCE;
        let mut s = self.state.lock().unwrap();
        while !check(&s) {
            let left = deadline
                .checked_duration_since(Instant::now())
                .unwrap_or_else(|| panic!("timed out waiting for {what}: {s:?}"));
            s = self.changed.wait_timeout(s, left).unwrap().0;
        }
    }
}

/// A flush that can be held back and made to fail.
#[derive(Debug)]
struct Gate(Arc<Shared>);

impl Fsync for Gate {
    fn fsync(&self) -> io::Result<()> {
        let mut s = self.0.state.lock().unwrap();
        s.flushes += 1;
        self.0.changed.notify_all();
        while s.hold {
            s = self.0.changed.wait(s).unwrap();
        }
        if s.fail > 0 {
            s.fail -= 1;
            return Err(io::Error::other("injected fdatasync failure"));
        }
        Ok(())
    }
}

/// A journal whose flushes go through [`Gate`].
#[derive(Debug)]
struct GateJournal(Arc<Shared>);

impl Journal for GateJournal {
    fn write(
        &mut self,
        _entry: &ChannelEntry,
    ) -> awtui::context::Result<Option<awtui::context::index::Loc>> {
        self.0.with(|s| s.writes += 1);
        Ok(None)
    }
    fn sync_target(&self) -> Option<SyncTarget> {
        Some(SyncTarget {
            file: Arc::new(Gate(Arc::clone(&self.0))),
            path: "fake/channel.jsonl".into(),
            position: 0,
            epoch: 0,
        })
    }
    fn durable(&mut self, _target: &SyncTarget) {}
    fn rollback(&mut self) {
        self.0.with(|s| s.rollbacks += 1);
    }
    fn save_cursors(&mut self, _state: CursorState<'_>) -> awtui::context::Result<Pending> {
        Ok(Pending::none())
    }
}

fn gated() -> (SharedContext, Arc<Shared>) {
    let shared = Arc::new(Shared::default());
    let store = Store::with_journal(&layout(), GateJournal(Arc::clone(&shared))).unwrap();
    (SharedContext::new(Box::new(store)), shared)
}

fn send(
    ctx: &SharedContext,
    text: String,
) -> thread::JoinHandle<Result<ChannelEntry, ContextError>> {
    let ctx = ctx.clone();
    thread::spawn(move || ctx.append("coder", &text))
}

#[test]
fn concurrent_senders_share_one_flush_and_nothing_shows_before_it_is_durable() {
    let (ctx, shared) = gated();
    let mut events = ctx.subscribe();
    shared.with(|s| s.hold = true);
    let mut senders = vec![send(&ctx, "@reviewer first".into())];
    // The first sender leads a flush, which is held back...
    shared.wait_for("the first flush", |s| s.flushes == 1);
    // ...while 19 more write their lines and wait for a flush.
    for i in 1..20 {
        senders.push(send(&ctx, format!("@reviewer message {i}")));
    }
    shared.wait_for("every line written", |s| s.writes == 20);

    // Not durable yet: invisible to readers, inboxes and events.
    assert_eq!(ctx.read(|s| s.len()), 0);
    assert_eq!(ctx.read(|s| s.last_id()), 0);
    assert!(ctx.read(|s| s.inbox("reviewer").unwrap()).is_empty());
    assert!(events.try_recv().is_err());
    assert!(senders.iter().all(|t| !t.is_finished()));

    shared.with(|s| s.hold = false);
    let mut ids: Vec<u64> = senders
        .into_iter()
        .map(|t| t.join().unwrap().unwrap().id)
        .collect();
    ids.sort();
    assert_eq!(ids, (1..=20).collect::<Vec<_>>());
    // The held flush covered the first message; the 19 that waited shared
    // the second.
    assert_eq!(shared.with(|s| s.flushes), 2);
    assert_eq!(ctx.read(|s| s.len()), 20);
    assert_eq!(ctx.read(|s| s.inbox("reviewer").unwrap().len()), 20);
    let announced: Vec<u64> = std::iter::from_fn(|| events.try_recv().ok())
        .map(|e| match e {
            ContextEvent::MessageAppended { entry } => entry.id,
            other => panic!("unexpected event {other:?}"),
        })
        .collect();
    assert_eq!(announced, (1..=20).collect::<Vec<_>>());
}

#[test]
fn a_failed_flush_fails_every_send_of_its_batch_and_the_channel_goes_on() {
    let (ctx, shared) = gated();
    shared.with(|s| {
        s.hold = true;
        s.fail = 1;
    });
    let mut senders = vec![send(&ctx, "first".into())];
    shared.wait_for("the first flush", |s| s.flushes == 1);
    for i in 1..6 {
        senders.push(send(&ctx, format!("message {i}")));
    }
    shared.wait_for("every line written", |s| s.writes == 6);
    shared.with(|s| s.hold = false);
    for t in senders {
        let e = t.join().unwrap().unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("fake/channel.jsonl") && text.contains("injected"),
            "{text}"
        );
    }
    // Everything unsynced was cut off the journal; nobody saw any of it.
    assert_eq!(shared.with(|s| s.rollbacks), 1);
    assert_eq!(ctx.read(|s| s.len()), 0);

    let next = ctx.append("coder", "after the failure").unwrap();
    assert_eq!(next.id, 1);
    assert_eq!(
        ctx.read(|s| s.entry(1)).unwrap().message,
        "after the failure"
    );
}

#[test]
fn a_failed_inline_flush_is_an_error_for_a_transaction_too() {
    let (ctx, shared) = gated();
    shared.with(|s| s.fail = 1);
    let e = ctx
        .transact(|tx| tx.append("coder", "inside a transaction"))
        .unwrap_err();
    assert!(e.to_string().contains("injected"), "{e}");
    assert_eq!(ctx.read(|s| s.len()), 0);
    assert_eq!(
        ctx.transact(|tx| tx.append("coder", "again")).unwrap().id,
        1
    );
}

#[test]
fn concurrent_sends_to_a_file_context_survive_reopening_with_a_complete_mirror() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = SharedContext::new(Box::new(FileStore::open(dir.path(), &layout()).unwrap()));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let ctx = ctx.clone();
            thread::spawn(move || {
                for i in 0..25 {
                    ctx.append("coder", &format!("@reviewer {t}/{i}")).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    drop(ctx);

    let store = FileStore::open(dir.path(), &layout()).unwrap();
    assert!(
        store.open_warnings().is_empty(),
        "{:?}",
        store.open_warnings()
    );
    let ids: Vec<u64> = store
        .read(None, None)
        .unwrap()
        .iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(ids, (1..=200).collect::<Vec<_>>());
    drop(store);
    let mirror = std::fs::read_to_string(dir.path().join("channel.md")).unwrap();
    assert_eq!(mirror.matches("### ").count(), 200, "{mirror}");
    assert!(mirror.contains("[coder] #200\n@reviewer"), "{mirror}");
}

#[test]
fn a_mirror_missing_its_tail_is_rebuilt_on_open() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut s = FileStore::open(dir.path(), &layout()).unwrap();
        for i in 1..=3 {
            s.append("coder", &format!("message {i}")).unwrap();
        }
    }
    // A crash lost the mirror's tail (it is written behind).
    let path = dir.path().join("channel.md");
    let full = std::fs::read_to_string(&path).unwrap();
    let cut = full.find("### ").unwrap() + full[1..].find("### ").unwrap() + 1;
    std::fs::write(&path, &full[..cut]).unwrap();

    drop(FileStore::open(dir.path(), &layout()).unwrap());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), full);
}

/// A send waiting for its `fdatasync` must not stall the async runtime:
/// with one worker thread, another task still runs meanwhile (the engine
/// sends from its async driver).
#[test]
fn a_held_flush_never_stalls_the_async_runtime() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (ctx, shared) = gated();
    shared.with(|s| s.hold = true);
    let sender = {
        let ctx = ctx.clone();
        runtime.spawn(async move { ctx.append("coder", "@reviewer held") })
    };
    shared.wait_for("the held flush", |s| s.flushes == 1);
    // The only worker was running the sender: another task (with a timer)
    // must still get to run while the flush is held.
    let (tx, rx) = std::sync::mpsc::channel();
    runtime.spawn(async move {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let _ = tx.send(());
    });
    let ran = rx.recv_timeout(PATIENCE).is_ok();
    // Released either way, so a failure ends instead of hanging.
    shared.with(|s| s.hold = false);
    assert!(ran, "the runtime stalled while a flush was held");
    let entry = runtime.block_on(sender).unwrap().unwrap();
    assert_eq!(entry.id, 1);
}

/// Cursor changes are written behind the store's lock, yet an
/// acknowledgement through the shared context is durable when it returns.
#[test]
fn an_acknowledgement_is_on_disk_when_it_returns() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::open(dir.path(), &layout()).unwrap();
    let ctx = SharedContext::new(Box::new(store));
    for i in 0..3 {
        ctx.append("user", &format!("@coder {i}")).unwrap();
    }
    ctx.mark_delivered("coder", 3).unwrap();
    ctx.ack("coder", awtui::context::Since::Id(2)).unwrap();
    let state = std::fs::read_to_string(dir.path().join("state.json")).unwrap();
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    assert_eq!(state["cursors"]["coder"]["acked"], 2, "{state}");
    assert_eq!(state["cursors"]["coder"]["delivered"], 3, "{state}");
}
