//! How every test waits: one bound and one polling helper for each kind of
//! code (blocking and async), shared by `cli_support`, `support`, `fixture`
//! and the test files that use none of them (`use crate::patience;`).

use std::future::Future;
use std::time::{Duration, Instant};

/// Generous limit for anything a test waits for: tests wait for
/// conditions, never for wall-clock speed, so this only bounds a failure.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// How long a polling helper rests between two looks: pacing only, the
/// condition decides when the wait ends.
const POLL: Duration = Duration::from_millis(20);

/// Polls `check` until it returns `Some`, or gives `None` once `limit` has
/// passed: the one blocking polling loop, for waits that clean up before
/// they fail (most tests want [`wait_for`]).
pub fn poll_within<T>(limit: Duration, mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = check() {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(POLL);
    }
}

/// Polls `check` until it returns `Some`, or fails after [`PATIENCE`]
/// naming `what`.
pub fn wait_for<T>(what: &str, check: impl FnMut() -> Option<T>) -> T {
    poll_within(PATIENCE, check)
        .unwrap_or_else(|| panic!("timed out waiting for {what} (within {PATIENCE:?})"))
}

/// Polls the future `check` makes until it yields `Some`, or fails after
/// [`PATIENCE`] naming `what`: the one async polling loop.
pub async fn eventually<T, Fut>(what: &str, mut check: impl FnMut() -> Fut) -> T
where
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what} (within {PATIENCE:?})"
        );
        tokio::time::sleep(POLL).await;
    }
}

/// Awaits `wait` (something that ends by itself, such as a receive loop)
/// for at most [`PATIENCE`]; fails naming `what` if it does not end.
pub async fn within<T>(what: &str, wait: impl Future<Output = T>) -> T {
    tokio::time::timeout(PATIENCE, wait)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what} (within {PATIENCE:?})"))
}
