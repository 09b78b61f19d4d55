//! The implementations behind each subcommand; `main` only dispatches here.
//! Each returns the process exit code.
pub mod aop_check;
pub mod ctx;
pub mod open;
pub mod run;
pub mod validate;

/// Exit codes shared by every command (documented in the README).
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// The run or check failed.
    pub const FAILED: u8 = 1;
    /// Invalid usage or an invalid workflow.
    pub const INVALID: u8 = 2;
}
