//! A thread that does queued work in the order it was queued, a batch at a
//! time: what was queued while it worked is handed over together, so
//! writes queued together can share one `fdatasync`. The engine's loop
//! only queues; the final answers ([`super::answers`]) and the user's
//! posts ([`super::jobs::Posts`]) each have a lane of their own.

use std::convert::Infallible;

use crate::batch_writer::{BatchWriter, Options};

/// The queue and the thread that empties it (a [`BatchWriter`] whose work
/// cannot fail). Dropping it waits until everything queued is done: a
/// clean stop loses nothing.
#[derive(Debug)]
pub struct Lane<T> {
    writer: Option<BatchWriter<T, Infallible>>,
}

impl<T: Send + 'static> Lane<T> {
    /// Starts the thread `name`, which hands `work` each batch in order;
    /// an error when no thread can be started.
    pub fn start(
        name: &str,
        mut work: impl FnMut(Vec<T>) + Send + 'static,
    ) -> std::io::Result<Lane<T>> {
        let writer = BatchWriter::start(name, Options::default(), move |batch: &mut Vec<T>| {
            work(std::mem::take(batch));
            Ok(())
        })?;
        Ok(Lane {
            writer: Some(writer),
        })
    }

    /// A lane that does nothing (what is left once the real one was
    /// dropped at the end of a run).
    pub fn stopped() -> Lane<T> {
        Lane { writer: None }
    }

    /// Queues `item` behind everything queued before it.
    pub fn queue(&self, item: T) {
        if let Some(w) = &self.writer {
            w.submit(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn work_is_done_in_order_and_dropping_waits_for_it() {
        let done = Arc::new(Mutex::new(Vec::new()));
        let seen = done.clone();
        let lane = Lane::start("test-lane", move |batch: Vec<u32>| {
            std::thread::yield_now();
            seen.lock().unwrap().extend(batch);
        })
        .unwrap();
        for i in 0..1000 {
            lane.queue(i);
        }
        drop(lane);
        assert_eq!(*done.lock().unwrap(), (0..1000).collect::<Vec<_>>());
        Lane::<u32>::stopped().queue(1);
    }
}
