//! The context store shared by the MCP server, the engine and front ends,
//! plus the stream of changes made to it.
//!
//! Every change goes through [`SharedContext::transact`], which holds the
//! store's lock only for the store calls themselves (never across an
//! `.await`) and publishes one [`ContextEvent`] per change while still
//! holding it, so events arrive in the same order as the changes.

use std::sync::{Arc, Mutex, MutexGuard};

use serde::Serialize;
use tokio::sync::broadcast;

use crate::context::{ChannelEntry, ContextStore, Cursor, Result, Since};
use crate::tasks::TaskBoard;

/// How many events a slow receiver may fall behind before it misses some
/// (it then gets `RecvError::Lagged` and should re-read the store).
pub const EVENT_CAPACITY: usize = 4096;

/// Something that changed in the context, for the engine and front ends to
/// follow what agents do through MCP, and for resource notifications.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ContextEvent {
    /// A message was appended to the channel (it is already durable).
    MessageAppended {
        /// The new entry, with its id and mentions.
        entry: ChannelEntry,
    },
    /// A document was written, appended to, created or deleted.
    DocumentChanged {
        /// The document's path relative to the document folder.
        path: String,
        /// What happened to it.
        change: DocumentChange,
        /// Who changed it.
        by: String,
    },
    /// A recipient's delivery or acknowledgement cursor moved.
    CursorChanged {
        /// Whose inbox.
        agent: String,
        /// The new cursor.
        cursor: Cursor,
    },
}

/// What happened to a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DocumentChange {
    /// Its content was replaced.
    Written,
    /// Text was added at its end.
    Appended,
    /// It was created.
    Created,
    /// It was deleted.
    Deleted,
}

/// A context store behind a mutex, cloneable and shareable across tasks,
/// with a broadcast of the changes made through it.
#[derive(Clone)]
pub struct SharedContext {
    store: Arc<Mutex<Box<dyn ContextStore>>>,
    events: broadcast::Sender<ContextEvent>,
    /// The instance's tasks (caw protocol), served by the same MCP server.
    tasks: TaskBoard,
}

impl std::fmt::Debug for SharedContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedContext").finish_non_exhaustive()
    }
}

impl SharedContext {
    /// Shares `store`; changes made through the returned value are announced
    /// to every [`SharedContext::subscribe`]r.
    pub fn new(store: Box<dyn ContextStore>) -> Self {
        SharedContext::with_tasks(store, TaskBoard::default())
    }

    /// Shares `store` and the task board `tasks` (a file context keeps
    /// its tasks on disk next to its channel).
    pub fn with_tasks(store: Box<dyn ContextStore>, tasks: TaskBoard) -> Self {
        let (events, _) = broadcast::channel(EVENT_CAPACITY);
        SharedContext {
            store: Arc::new(Mutex::new(store)),
            events,
            tasks,
        }
    }

    /// The instance's task board.
    pub fn tasks(&self) -> &TaskBoard {
        &self.tasks
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

    fn lock(&self) -> MutexGuard<'_, Box<dyn ContextStore>> {
        // A panic inside a store call is a bug; the store's state is still
        // the best there is, so keep serving it.
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` with read access to the store.
    pub fn read<T>(&self, f: impl FnOnce(&dyn ContextStore) -> T) -> T {
        let guard = self.lock();
        f(guard.as_ref())
    }

    /// Runs `f` with the store locked; every change `f` makes through the
    /// [`Recorder`] is announced, in order, before the lock is released.
    pub fn transact<T>(&self, f: impl FnOnce(&mut Recorder<'_>) -> T) -> T {
        let mut guard = self.lock();
        let mut recorder = Recorder {
            store: guard.as_mut(),
            events: &self.events,
        };
        f(&mut recorder)
    }

    /// Appends a message from `from`.
    pub fn append(&self, from: &str, message: &str) -> Result<ChannelEntry> {
        self.transact(|tx| tx.append(from, message))
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
    store: &'a mut dyn ContextStore,
    events: &'a broadcast::Sender<ContextEvent>,
}

impl Recorder<'_> {
    /// Read access to the store.
    pub fn store(&self) -> &dyn ContextStore {
        self.store
    }

    fn emit(&self, event: ContextEvent) {
        // Nobody listening is fine.
        let _ = self.events.send(event);
    }

    /// Appends a message and announces it.
    pub fn append(&mut self, from: &str, message: &str) -> Result<ChannelEntry> {
        let entry = self.store.append(from, message)?;
        self.emit(ContextEvent::MessageAppended {
            entry: entry.clone(),
        });
        Ok(entry)
    }

    /// Appends a reply to message `to` and announces it.
    pub fn reply(&mut self, from: &str, message: &str, to: u64) -> Result<ChannelEntry> {
        let entry = self.store.reply(from, message, to)?;
        self.emit(ContextEvent::MessageAppended {
            entry: entry.clone(),
        });
        Ok(entry)
    }

    /// Hides messages from every inbox (nothing to announce: cursors are
    /// unchanged; front ends learn it from the thread state).
    pub fn hide(&mut self, ids: &[u64]) -> Result<()> {
        self.store.hide(ids)
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
        let before = self.store.cursor(agent)?;
        let after = self.store.mark_delivered(agent, through)?;
        self.cursor_change(agent, before, after);
        Ok(after)
    }

    /// Acknowledges up to `until`; announces the cursor if it moved.
    pub fn ack(&mut self, agent: &str, until: Since) -> Result<Cursor> {
        let before = self.store.cursor(agent)?;
        let after = self.store.ack(agent, until)?;
        self.cursor_change(agent, before, after);
        Ok(after)
    }

    fn doc_path(&self, file: Option<&str>) -> String {
        match file {
            // The store accepted it, so it only differs from its normal
            // form by trailing slashes.
            Some(f) => f.trim_end_matches('/').to_string(),
            None => self.store.entry_document().to_string(),
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
        self.store.write_document(file, content)?;
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
        self.store.append_document(file, content)?;
        let path = self.doc_path(file);
        self.doc_event(path.clone(), DocumentChange::Appended, by);
        Ok(path)
    }

    /// Creates a document; returns its path.
    pub fn create_document(&mut self, by: &str, file: &str, content: &str) -> Result<String> {
        self.store.create_document(file, content)?;
        let path = self.doc_path(Some(file));
        self.doc_event(path.clone(), DocumentChange::Created, by);
        Ok(path)
    }

    /// Deletes a document; returns its path.
    pub fn delete_document(&mut self, by: &str, file: &str) -> Result<String> {
        self.store.delete_document(file)?;
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
