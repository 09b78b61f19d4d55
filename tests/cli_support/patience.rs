//! The one bound every test waits with, shared by `cli_support`, `support`
//! and the test files that use neither (include it with
//! `#[path = "cli_support/patience.rs"] mod patience;`).

use std::time::Duration;

/// Generous limit for anything a test waits for: tests wait for
/// conditions, never for wall-clock speed, so this only bounds a failure.
pub const PATIENCE: Duration = Duration::from_secs(60);
