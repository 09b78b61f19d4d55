//! One batching writer: a named thread that takes whatever was queued
//! while it worked, hands it to a sink as one batch (write, then one
//! `fsync`/`fdatasync` for all of it), and answers every item of the batch
//! with the batch's one result.
//!
//! Every writer thread of awtui is one of these (the channel's mirror,
//! the inbox cursors, the documents' checkpoints, the standard output, the
//! engine's lanes), so queueing, batching, ordering and shutdown are
//! written and tested once. Guarantees:
//!
//! - items reach the sink in the order they were submitted, never split
//!   or reordered across batches;
//! - a [`Ticket`] is answered only once its batch's sink call returned:
//!   `Ok` means the sink succeeded for it (durable, when the sink syncs);
//! - dropping the writer hands everything still queued to the sink, then
//!   joins the thread;
//! - a waiter never hangs: a sink that panics answers its batch
//!   [`BatchError::Panicked`], and everything queued or submitted after it
//!   [`BatchError::Stopped`] (the writer stops, the sink is not trusted
//!   again).
//!
//! Depends on nothing of awtui's (only std, thiserror and tracing), so it
//! can live in the lowest crate.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Why an item's batch was not written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BatchError<E> {
    /// The sink returned this error for the item's batch.
    #[error("{0}")]
    Sink(E),
    /// The sink panicked while writing the item's batch.
    #[error("the writer thread {0} panicked")]
    Panicked(String),
    /// The writer stopped (a batch before panicked, or its thread is gone)
    /// before it got to the item: it was not written.
    #[error("the writer thread {0} has stopped")]
    Stopped(String),
}

/// How a [`BatchWriter`] gathers its batches.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// How long the thread waits after the first item of a burst before it
    /// takes the batch, so a burst costs one sink call (zero: take what is
    /// queued at once). Closing does not wait.
    pub gather: Duration,
    /// At most this many items wait; [`BatchWriter::submit`] blocks while
    /// the queue is full (`None`: unbounded).
    pub capacity: Option<usize>,
}

/// The answer of one batch, shared by the tickets of its items.
#[derive(Debug)]
struct Slot<E> {
    outcome: Mutex<Option<Result<(), BatchError<E>>>>,
    done: Condvar,
}

impl<E: Clone> Slot<E> {
    fn new() -> Arc<Slot<E>> {
        Arc::new(Slot {
            outcome: Mutex::new(None),
            done: Condvar::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Option<Result<(), BatchError<E>>>> {
        self.outcome.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Answers the batch once (a later answer is ignored).
    fn answer(&self, result: Result<(), BatchError<E>>) {
        let mut outcome = self.lock();
        if outcome.is_none() {
            *outcome = Some(result);
        }
        drop(outcome);
        self.done.notify_all();
    }
}

/// What waits for one submitted item: its batch's result.
#[derive(Clone, Debug)]
pub struct Ticket<E> {
    slot: Option<Arc<Slot<E>>>,
    /// An answer known when the ticket was made.
    ready: Option<Result<(), BatchError<E>>>,
}

impl<E: Clone> Ticket<E> {
    /// A ticket already answered with `result` (an item written inline,
    /// or nothing to wait for).
    pub fn answered(result: Result<(), BatchError<E>>) -> Ticket<E> {
        Ticket {
            slot: None,
            ready: Some(result),
        }
    }

    /// Blocks until the item's batch was handled; its result.
    pub fn wait(&self) -> Result<(), BatchError<E>> {
        let Some(slot) = &self.slot else {
            return self.ready.clone().unwrap_or(Ok(()));
        };
        let mut outcome = slot.lock();
        loop {
            if let Some(result) = &*outcome {
                return result.clone();
            }
            outcome = slot
                .done
                .wait(outcome)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Like [`Ticket::wait`], but gives up after `timeout` (`None`).
    pub fn wait_timeout(&self, timeout: Duration) -> Option<Result<(), BatchError<E>>> {
        let Some(slot) = &self.slot else {
            return Some(self.ready.clone().unwrap_or(Ok(())));
        };
        let deadline = Instant::now() + timeout;
        let mut outcome = slot.lock();
        loop {
            if let Some(result) = &*outcome {
                return Some(result.clone());
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            outcome = slot
                .done
                .wait_timeout(outcome, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

#[derive(Debug)]
struct State<T, E> {
    /// Items submitted and not yet taken by the thread, oldest first.
    queue: Vec<T>,
    /// The batch the queued items will be written in.
    open: Arc<Slot<E>>,
    /// The batch of the newest item submitted: answered once everything
    /// submitted so far was handled.
    last: Option<Arc<Slot<E>>>,
    /// No more items come: the thread writes what is queued and ends.
    closed: bool,
    /// The thread has ended: nothing is written any more.
    stopped: bool,
}

#[derive(Debug)]
struct Shared<T, E> {
    name: String,
    capacity: Option<usize>,
    state: Mutex<State<T, E>>,
    /// Wakes the thread: an item in an empty queue, or closing.
    work: Condvar,
    /// Wakes submitters waiting for room in a full queue.
    space: Condvar,
}

impl<T, E> Shared<T, E> {
    fn lock(&self) -> MutexGuard<'_, State<T, E>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A queue and the named thread that hands it, a batch at a time, to a
/// sink. Dropping it writes everything queued first.
#[derive(Debug)]
pub struct BatchWriter<T, E> {
    shared: Arc<Shared<T, E>>,
    thread: Option<JoinHandle<()>>,
}

impl<T: Send + 'static, E: Clone + Send + 'static> BatchWriter<T, E> {
    /// Starts the thread `name`, which hands each batch to `sink` (the
    /// sink takes what it writes out of the vector; whatever it leaves is
    /// dropped). An error when the system refuses a thread: the caller
    /// decides whether to write inline or drop.
    pub fn start<S>(name: &str, options: Options, sink: S) -> std::io::Result<BatchWriter<T, E>>
    where
        S: FnMut(&mut Vec<T>) -> Result<(), E> + Send + 'static,
    {
        let shared = Arc::new(Shared {
            name: name.to_string(),
            capacity: options.capacity,
            state: Mutex::new(State {
                queue: Vec::new(),
                open: Slot::new(),
                last: None,
                closed: false,
                stopped: false,
            }),
            work: Condvar::new(),
            space: Condvar::new(),
        });
        let worker = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || run(&worker, options, sink))?;
        Ok(BatchWriter {
            shared,
            thread: Some(thread),
        })
    }

    /// Queues `item` behind everything submitted before it (waiting for
    /// room when the queue is full); the ticket says how its batch went.
    pub fn submit(&self, item: T) -> Ticket<E> {
        let mut state = self.shared.lock();
        while let Some(cap) = self.shared.capacity
            && !state.stopped
            && state.queue.len() >= cap
        {
            state = self
                .shared
                .space
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if state.stopped {
            // Refused: and so is a flush of everything submitted so far.
            let refused = Slot::new();
            refused.answer(Err(BatchError::Stopped(self.shared.name.clone())));
            state.last = Some(Arc::clone(&refused));
            return Ticket {
                slot: Some(refused),
                ready: None,
            };
        }
        let wake = state.queue.is_empty();
        state.queue.push(item);
        let slot = Arc::clone(&state.open);
        state.last = Some(Arc::clone(&slot));
        drop(state);
        if wake {
            self.shared.work.notify_one();
        }
        Ticket {
            slot: Some(slot),
            ready: None,
        }
    }

    /// What waits for everything submitted so far (batches are handled in
    /// order): the newest item's ticket.
    pub fn flush(&self) -> Ticket<E> {
        match &self.shared.lock().last {
            Some(slot) => Ticket {
                slot: Some(Arc::clone(slot)),
                ready: None,
            },
            None => Ticket::answered(Ok(())),
        }
    }
}

impl<T, E> Drop for BatchWriter<T, E> {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.work.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Marks the writer stopped when its thread ends, however it ends: what
/// is still queued is answered [`BatchError::Stopped`], never left waiting.
struct Stopping<'a, T, E: Clone>(&'a Shared<T, E>);

impl<T, E: Clone> Drop for Stopping<'_, T, E> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.stopped = true;
        let unwritten = std::mem::take(&mut state.queue);
        let open = std::mem::replace(&mut state.open, Slot::new());
        drop(state);
        if !unwritten.is_empty() {
            tracing::warn!(
                "the writer thread {} stopped with {} items unwritten",
                self.0.name,
                unwritten.len()
            );
        }
        drop(unwritten);
        open.answer(Err(BatchError::Stopped(self.0.name.clone())));
        self.0.space.notify_all();
    }
}

/// The thread: waits for items, gathers a burst, hands it to the sink,
/// answers its tickets; ends once closed and empty, or when the sink
/// panics.
fn run<T, E: Clone>(
    shared: &Shared<T, E>,
    options: Options,
    mut sink: impl FnMut(&mut Vec<T>) -> Result<(), E>,
) {
    let _stopping = Stopping(shared);
    let mut batch = Vec::new();
    loop {
        let mut state = shared.lock();
        while state.queue.is_empty() && !state.closed {
            state = shared
                .work
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if state.queue.is_empty() {
            return;
        }
        let deadline = Instant::now() + options.gather;
        while !state.closed {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                break;
            };
            if left.is_zero() {
                break;
            }
            state = shared
                .work
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        std::mem::swap(&mut batch, &mut state.queue);
        let slot = std::mem::replace(&mut state.open, Slot::new());
        drop(state);
        shared.space.notify_all();
        let outcome = catch_unwind(AssertUnwindSafe(|| sink(&mut batch)));
        batch.clear();
        match outcome {
            Ok(result) => slot.answer(result.map_err(BatchError::Sink)),
            Err(_) => {
                tracing::error!("the writer thread {} panicked; it stops", shared.name);
                slot.answer(Err(BatchError::Panicked(shared.name.clone())));
                return;
            }
        }
    }
}

#[cfg(test)]
#[path = "batch_writer_tests.rs"]
mod tests;
