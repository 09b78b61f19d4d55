//! How often this process loaded a workflow and checked its backends: each
//! start loads once and checks once ([`super::startup`]), `validate` loads
//! through the same counter ([`super::validate`]), and the tests read the
//! tally from the log. Kept apart so both count without importing each other.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Workflows this process loaded ([`load_reporting`](super::validate::load_reporting)).
static LOADED: AtomicUsize = AtomicUsize::new(0);
/// Times this process checked a workflow's backends.
static CHECKED: AtomicUsize = AtomicUsize::new(0);

/// Counts one load of a workflow file (by
/// [`load_reporting`](super::validate::load_reporting), which every
/// start and `validate` load through).
pub(crate) fn count_load() {
    LOADED.fetch_add(1, Ordering::Relaxed);
}

/// Counts one check of a workflow's backends (by
/// [`prepare`](super::startup::prepare), unless the parent checked).
pub(crate) fn count_check() {
    CHECKED.fetch_add(1, Ordering::Relaxed);
}

/// The line [`log_tally`] writes, before its numbers.
pub const TALLY: &str = "startup: workflow loaded, backends checked in this process:";

/// Logs how often this process loaded the workflow and checked its
/// backends (once its log is open): `startup: … 1 1`.
pub fn log_tally() {
    tracing::info!(
        "{TALLY} {} {}",
        LOADED.load(Ordering::Relaxed),
        CHECKED.load(Ordering::Relaxed)
    );
}
