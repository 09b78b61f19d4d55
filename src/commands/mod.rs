//! The implementations behind each subcommand; `main` only dispatches here.
//! Each returns the process exit code.
pub mod aop_check;
pub mod approve;
pub mod attach;
pub mod ctx;
pub mod diff;
pub mod home;
pub mod host;
pub mod init;
pub mod list;
pub mod logging;
pub mod mail_check;
pub mod new;
pub mod open;
pub mod peek;
pub mod print;
pub mod remote;
pub mod report;
pub mod run;
pub mod send;
pub mod start;
pub mod stop;
pub mod tasks;
pub mod validate;
pub mod workspace;

/// Exit codes shared by every command (documented in the README).
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// The run or check failed.
    pub const FAILED: u8 = 1;
    /// Invalid usage or an invalid workflow.
    pub const INVALID: u8 = 2;
    /// The instance (or agent) named is not running.
    pub const NOT_RUNNING: u8 = 3;
    /// The instance is already running (start, run, new).
    pub const ALREADY_RUNNING: u8 = 4;
}

/// A tokio runtime for a command (`multi`: several worker threads, for
/// commands that run an engine). Prints why it could not start.
pub fn runtime(multi: bool) -> Option<tokio::runtime::Runtime> {
    let mut builder = if multi {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    match builder.enable_all().build() {
        Ok(rt) => Some(rt),
        Err(e) => {
            crate::errln!("cannot start: {e}");
            None
        }
    }
}
