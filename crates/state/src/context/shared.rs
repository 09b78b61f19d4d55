//! The context store shared by the MCP server, the engine and front ends,
//! plus the stream of changes made to it.
//!
//! Every change goes through [`SharedContext::transact`], which holds the
//! store's lock only for the store calls themselves (never across an
//! `.await`) and publishes one [`ContextEvent`] per change while still
//! holding it, so events arrive in the same order as the changes.
//!
//! [`SharedContext::append`] is the fast path for sends: group commit. Each
//! sender writes its line under the lock; the first to find no flush under
//! way becomes the leader, releases the lock and `fdatasync`s everything
//! written so far, then publishes the batch; the others wait for that flush
//! (or lead the next one). A message is visible to nobody, and its sender
//! gets no answer, before it is durable.
//!
//! Nothing here blocks an async worker: the store's lock is held only for
//! memory work and `write`s (cursor files are made durable by a writer
//! thread, waited for after the lock is released), and every call that may
//! wait (for the lock, a flush or a cursor write) runs through
//! [`blocking`], which hands the worker's other tasks to another thread
//! first when called on a multi-thread runtime's worker.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use tokio::sync::broadcast;

pub use super::bus::{Bus, EVENT_CAPACITY, Publisher};
use crate::context::store::FlushError;
use crate::context::{ChannelEntry, ContextStore, Cursor, Result, Since};
use crate::tasks::TaskBoard;
pub use crate::vocab::channel::DocumentChange;
pub use crate::vocab::state::ContextEvent;

/// Runs `f`, which may block (an `fsync`, a contended lock), without
/// stalling the async runtime: on a multi-thread runtime's worker it goes
/// through [`tokio::task::block_in_place`] (the worker's other tasks move
/// to another thread meanwhile); elsewhere (a blocking-pool thread, plain
/// threads, a current-thread runtime) it simply runs.
pub fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// How many failed flushes are remembered for the senders still waiting
/// on them (a failed flush is rare; each waiter looks its own up).
const FAILURES_KEPT: usize = 256;

/// The store and the group commit's state, under one lock.
struct Locked {
    store: Box<dyn ContextStore>,
    /// A leader is syncing outside the lock.
    flushing: bool,
    /// Recent failed flushes: staged seqs `first..=last` and the error.
    failures: std::collections::VecDeque<(u64, u64, FlushError)>,
}

impl Locked {
    /// Publishes what `flushed` covered, announcing each message in order.
    fn publish(&mut self, flushed: &crate::context::store::Flusher, events: &Bus) {
        for entry in self.store.publish_staged(flushed) {
            events.publish(ContextEvent::MessageAppended { entry });
        }
    }

    /// Drops every staged message after a failed flush and remembers the
    /// error for their senders.
    fn fail(&mut self, error: FlushError) {
        let dropped = self.store.discard_staged();
        if let (Some(first), Some(last)) = (dropped.first(), dropped.last()) {
            if self.failures.len() == FAILURES_KEPT {
                self.failures.pop_front();
            }
            self.failures.push_back((first.seq, last.seq, error));
        }
    }

    fn failure_of(&self, seq: u64) -> Option<&FlushError> {
        self.failures
            .iter()
            .find(|(first, last, _)| (*first..=*last).contains(&seq))
            .map(|(_, _, e)| e)
    }
}

/// A context store behind a mutex, cloneable and shareable across tasks,
/// with a broadcast of the changes made through it.
#[derive(Clone)]
pub struct SharedContext {
    store: Arc<(Mutex<Locked>, Condvar)>,
    /// The state's one stream of facts, owned here; the board and the
    /// approvals hold publishers of it.
    events: Arc<Bus>,
    /// The instance's tasks (caw protocol), served by the same MCP server.
    tasks: TaskBoard,
    /// How many times each participant's MCP client listed awtui's tools:
    /// what "its CLI connected to awtui's tools" looks like from the
    /// server, for every CLI alike.
    tool_lists: Arc<Mutex<std::collections::HashMap<String, u64>>>,
    /// The instance's tool approvals (`permission_request`), also served
    /// by the same MCP server.
    approvals: crate::approvals::Approvals,
}

impl std::fmt::Debug for SharedContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedContext").finish_non_exhaustive()
    }
}

impl SharedContext {
    /// Shares `store`, with an empty task board and approvals in memory;
    /// changes made through the returned value are announced to every
    /// [`SharedContext::subscribe`]r.
    pub fn new(store: Box<dyn ContextStore>) -> Self {
        let bus = Bus::new();
        let tasks = TaskBoard::new(crate::tasks::TaskStore::in_memory(), bus.publisher());
        SharedContext::with_tasks(store, bus, tasks)
    }

    /// Shares `store` and the task board `tasks` (a file context keeps its
    /// tasks on disk next to its channel), made with a publisher of `bus`;
    /// its approvals are kept in memory.
    pub fn with_tasks(store: Box<dyn ContextStore>, bus: Bus, tasks: TaskBoard) -> Self {
        let approvals = crate::approvals::Approvals::in_memory(bus.publisher());
        SharedContext::assemble(store, bus, tasks, approvals)
    }

    /// The state of one instance: `store`, its stream of facts `bus`, and
    /// the board and approvals made with publishers of that bus, so every
    /// fact goes out on one stream.
    ///
    /// # Panics
    /// When `tasks` or `approvals` announce on another stream: a part made
    /// for another state (or alone) would publish where nobody listens.
    pub fn assemble(
        mut store: Box<dyn ContextStore>,
        bus: Bus,
        tasks: TaskBoard,
        approvals: crate::approvals::Approvals,
    ) -> Self {
        assert!(
            tasks.publishes_on(&bus) && approvals.publishes_on(&bus),
            "a state's board and approvals must publish on its own bus"
        );
        // Cursor writes become durable behind the lock (see `transact`).
        store.defer_durability();
        let locked = Locked {
            store,
            flushing: false,
            failures: Default::default(),
        };
        SharedContext {
            store: Arc::new((Mutex::new(locked), Condvar::new())),
            events: Arc::new(bus),
            tasks,
            tool_lists: Arc::default(),
            approvals,
        }
    }

    /// Notes that `agent`'s MCP client listed awtui's tools.
    pub fn note_tool_list(&self, agent: &str) {
        let mut lists = self.tool_lists.lock().unwrap_or_else(|e| e.into_inner());
        *lists.entry(agent.to_string()).or_default() += 1;
    }

    /// How many times `agent`'s MCP client listed awtui's tools so far (a
    /// turn compares the count at its start and its end).
    pub fn tool_lists(&self, agent: &str) -> u64 {
        let lists = self.tool_lists.lock().unwrap_or_else(|e| e.into_inner());
        lists.get(agent).copied().unwrap_or(0)
    }

    /// The instance's task board.
    pub fn tasks(&self) -> &TaskBoard {
        &self.tasks
    }

    /// The instance's tool approvals.
    pub fn approvals(&self) -> &crate::approvals::Approvals {
        &self.approvals
    }

    /// A context in memory for these agents (default file names), for tests
    /// and throwaway front ends.
    pub fn in_memory(agents: &[&str]) -> Self {
        let layout = crate::context::StoreLayout {
            channel: "channel.md".into(),
            document: "notes.md".into(),
            documents: vec![],
            agents: agents.iter().map(|a| a.to_string()).collect(),
        };
        // A memory store with no listed documents cannot fail to open.
        let store = crate::context::MemoryStore::new(&layout).expect("memory store");
        SharedContext::new(Box::new(store))
    }

    /// A receiver of every change made from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<ContextEvent> {
        self.events.subscribe()
    }

    fn lock(&self) -> MutexGuard<'_, Locked> {
        // A panic inside a store call is a bug; the store's state is still
        // the best there is, so keep serving it.
        match self.store.0.try_lock() {
            Ok(guard) => guard,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            // Someone holds it: wait off the async workers.
            Err(std::sync::TryLockError::WouldBlock) => {
                blocking(|| self.store.0.lock().unwrap_or_else(|e| e.into_inner()))
            }
        }
    }

    /// Runs `f` with read access to the store.
    pub fn read<T>(&self, f: impl FnOnce(&dyn ContextStore) -> T) -> T {
        let guard = self.lock();
        f(guard.store.as_ref())
    }

    /// Runs `f` with the store locked; every change `f` makes through the
    /// [`Recorder`] is announced, in order, before the lock is released.
    /// Returns once the changes are durable: cursor changes are waited for
    /// after the lock is released, and a failure to write them is the
    /// result when `f` succeeded.
    pub fn transact<T, E: From<crate::context::ContextError>>(
        &self,
        f: impl FnOnce(&mut Recorder<'_>) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        blocking(|| {
            let mut guard = self.lock();
            let mut recorder = Recorder {
                locked: &mut guard,
                events: &self.events,
                cursors_changed: false,
            };
            let result = f(&mut recorder);
            let pending = recorder.cursors_changed.then(|| guard.store.pending_sync());
            drop(guard);
            // An inline flush may have published messages others wait for.
            self.store.1.notify_all();
            match (result, pending.map(|p| p.wait())) {
                (Ok(_), Some(Err(e))) => Err(e.into()),
                (result, _) => result,
            }
        })
    }

    /// Appends a message from `from`; it is durable when this returns, and
    /// announced once it is. Concurrent callers share one `fdatasync`
    /// (group commit). Blocks: call it off the async workers.
    pub fn append(&self, from: &str, message: &str) -> Result<ChannelEntry> {
        blocking(|| self.append_blocking(from, message))
    }

    fn append_blocking(&self, from: &str, message: &str) -> Result<ChannelEntry> {
        self.append_all_blocking(&[(from, message)])
            .pop()
            .unwrap_or_else(|| unreachable!("one message in, one result out"))
    }

    /// Appends `messages` (sender, text) in order, durable together with
    /// one `fdatasync` shared with any concurrent sender; one result per
    /// message. A message the store refuses (too long, a bad name) fails
    /// alone; the others are still written. Blocks: call it off the async
    /// workers.
    pub fn append_all(&self, messages: &[(&str, &str)]) -> Vec<Result<ChannelEntry>> {
        blocking(|| self.append_all_blocking(messages))
    }

    fn append_all_blocking(&self, messages: &[(&str, &str)]) -> Vec<Result<ChannelEntry>> {
        let (locked, wake) = &*self.store;
        let mut guard = self.lock();
        let staged: Vec<_> = messages
            .iter()
            .map(|(from, message)| guard.store.stage(from, message, None))
            .collect();
        loop {
            let waiting = staged
                .iter()
                .any(|s| s.as_ref().is_ok_and(|s| guard.store.is_staged(s.seq)));
            if !waiting {
                return staged
                    .into_iter()
                    .map(|s| {
                        let s = s?;
                        match guard.failure_of(s.seq) {
                            Some(e) => Err(e.clone().into()),
                            None => Ok(s.entry),
                        }
                    })
                    .collect();
            }
            if guard.flushing {
                guard = wake.wait(guard).unwrap_or_else(|e| e.into_inner());
                continue;
            }
            // Lead: sync everything staged so far without the lock.
            guard.flushing = true;
            let flusher = guard.store.flusher();
            drop(guard);
            let flushed = flusher.flush();
            guard = locked.lock().unwrap_or_else(|e| e.into_inner());
            guard.flushing = false;
            match flushed {
                Ok(()) => guard.publish(&flusher, &self.events),
                // Only what is still staged failed (an inline flush may
                // have covered part of it meanwhile).
                Err(e) => guard.fail(e),
            }
            wake.notify_all();
        }
    }

    /// Records that `agent` was handed everything up to `through`.
    pub fn mark_delivered(&self, agent: &str, through: u64) -> Result<Cursor> {
        self.transact(|tx| tx.mark_delivered(agent, through))
    }

    /// Moves `agent`'s acknowledgement cursor forward to `until`.
    pub fn ack(&self, agent: &str, until: Since) -> Result<Cursor> {
        self.transact(|tx| tx.ack(agent, until))
    }
}

/// Mutating access to a locked store that announces each change.
pub struct Recorder<'a> {
    locked: &'a mut Locked,
    events: &'a Bus,
    /// A cursor change was handed to the store: wait for it to be durable.
    cursors_changed: bool,
}

impl Recorder<'_> {
    /// Read access to the store.
    pub fn store(&self) -> &dyn ContextStore {
        self.locked.store.as_ref()
    }

    fn store_mut(&mut self) -> &mut dyn ContextStore {
        self.locked.store.as_mut()
    }

    fn emit(&self, event: ContextEvent) {
        // Nobody listening is fine.
        self.events.publish(event);
    }

    /// Appends a message and announces it.
    pub fn append(&mut self, from: &str, message: &str) -> Result<ChannelEntry> {
        self.commit(from, message, None)
    }

    /// Appends a reply to message `to` and announces it.
    pub fn reply(&mut self, from: &str, message: &str, to: u64) -> Result<ChannelEntry> {
        self.commit(from, message, Some(to))
    }

    /// Stages a message and flushes inline (holding the lock, which the
    /// transaction needs anyway); other senders' staged messages ride along
    /// and are announced first, in order.
    fn commit(&mut self, from: &str, message: &str, reply_to: Option<u64>) -> Result<ChannelEntry> {
        let staged = self.store_mut().stage(from, message, reply_to)?;
        let flusher = self.locked.store.flusher();
        match flusher.flush() {
            Ok(()) => {
                self.locked.publish(&flusher, self.events);
                Ok(staged.entry)
            }
            Err(e) => {
                self.locked.fail(e.clone());
                Err(e.into())
            }
        }
    }

    /// Hides messages from every inbox (nothing to announce: cursors are
    /// unchanged; front ends learn it from the thread state).
    pub fn hide(&mut self, ids: &[u64]) -> Result<()> {
        self.cursors_changed = true;
        self.store_mut().hide(ids)
    }

    fn cursor_change(&self, agent: &str, before: Cursor, after: Cursor) {
        if before != after {
            self.emit(ContextEvent::CursorChanged {
                agent: agent.to_string(),
                cursor: after,
            });
        }
    }

    /// Marks delivery up to `through`; announces the cursor if it moved.
    pub fn mark_delivered(&mut self, agent: &str, through: u64) -> Result<Cursor> {
        let before = self.store().cursor(agent)?;
        self.cursors_changed = true;
        let after = self.store_mut().mark_delivered(agent, through)?;
        self.cursor_change(agent, before, after);
        Ok(after)
    }

    /// Acknowledges up to `until`; announces the cursor if it moved.
    pub fn ack(&mut self, agent: &str, until: Since) -> Result<Cursor> {
        let before = self.store().cursor(agent)?;
        self.cursors_changed = true;
        let after = self.store_mut().ack(agent, until)?;
        self.cursor_change(agent, before, after);
        Ok(after)
    }

    fn doc_path(&self, file: Option<&str>) -> String {
        match file {
            // The store accepted it, so it only differs from its normal
            // form by trailing slashes.
            Some(f) => f.trim_end_matches('/').to_string(),
            None => self.store().entry_document().to_string(),
        }
    }

    fn doc_event(&self, path: String, change: DocumentChange, by: &str) {
        self.emit(ContextEvent::DocumentChanged {
            path,
            change,
            by: by.to_string(),
        });
    }

    /// Replaces a document; returns its path.
    pub fn write_document(
        &mut self,
        by: &str,
        file: Option<&str>,
        content: &str,
    ) -> Result<String> {
        self.store_mut().write_document(file, content)?;
        let path = self.doc_path(file);
        self.doc_event(path.clone(), DocumentChange::Written, by);
        Ok(path)
    }

    /// Appends to a document; returns its path.
    pub fn append_document(
        &mut self,
        by: &str,
        file: Option<&str>,
        content: &str,
    ) -> Result<String> {
        self.store_mut().append_document(file, content)?;
        let path = self.doc_path(file);
        self.doc_event(path.clone(), DocumentChange::Appended, by);
        Ok(path)
    }

    /// Creates a document; returns its path.
    pub fn create_document(&mut self, by: &str, file: &str, content: &str) -> Result<String> {
        self.store_mut().create_document(file, content)?;
        let path = self.doc_path(Some(file));
        self.doc_event(path.clone(), DocumentChange::Created, by);
        Ok(path)
    }

    /// Deletes a document; returns its path.
    pub fn delete_document(&mut self, by: &str, file: &str) -> Result<String> {
        self.store_mut().delete_document(file)?;
        let path = self.doc_path(Some(file));
        self.doc_event(path.clone(), DocumentChange::Deleted, by);
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared() -> SharedContext {
        SharedContext::in_memory(&["coder", "reviewer"])
    }

    #[test]
    fn changes_are_announced_in_order() {
        let ctx = shared();
        let mut rx = ctx.subscribe();
        let e = ctx.append("coder", "@reviewer look").unwrap();
        ctx.mark_delivered("reviewer", e.id).unwrap();
        ctx.mark_delivered("reviewer", e.id).unwrap(); // no change, no event
        ctx.transact(|tx| tx.write_document("coder", None, "x"))
            .unwrap();
        ctx.transact(|tx| tx.create_document("coder", "a/b.md/", "y"))
            .unwrap();

        assert_eq!(
            rx.try_recv().unwrap(),
            ContextEvent::MessageAppended { entry: e.clone() }
        );
        assert_eq!(
            rx.try_recv().unwrap(),
            ContextEvent::CursorChanged {
                agent: "reviewer".into(),
                cursor: Cursor {
                    acked: 0,
                    delivered: 1
                }
            }
        );
        let doc = |path: &str, change| ContextEvent::DocumentChanged {
            path: path.into(),
            change,
            by: "coder".into(),
        };
        assert_eq!(
            rx.try_recv().unwrap(),
            doc("notes.md", DocumentChange::Written)
        );
        assert_eq!(
            rx.try_recv().unwrap(),
            doc("a/b.md", DocumentChange::Created)
        );
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn failed_changes_announce_nothing() {
        let ctx = shared();
        let mut rx = ctx.subscribe();
        assert!(ctx.ack("reviewer", Since::Id(9)).is_err());
        assert!(
            ctx.transact(|tx| tx.delete_document("coder", "missing.md"))
                .is_err()
        );
        assert!(rx.try_recv().is_err());
    }
}
