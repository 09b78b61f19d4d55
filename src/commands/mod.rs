//! The implementations behind each subcommand; `main` only dispatches here.
//! Each returns the process exit code.
pub mod agent;
pub mod aop_check;
pub mod approve;
pub mod attach;
pub mod child;
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
pub mod reset;
pub mod run;
pub mod send;
pub mod start;
pub mod startup;
pub mod stop;
pub mod tally;
pub mod tasks;
pub mod validate;
pub mod web;
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

/// How long a command's end waits for work still running on the runtime's
/// threads (a tool call stuck in a git filter, a write to a stalled disk)
/// before the process exits anyway: such work cannot be interrupted, and
/// the instance must end within seconds of `stop` or SIGTERM.
pub const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// A command's tokio runtime: on drop it waits at most [`SHUTDOWN_GRACE`]
/// for blocking work, where a plain runtime would wait for it forever.
pub struct CommandRuntime(Option<tokio::runtime::Runtime>);

impl std::ops::Deref for CommandRuntime {
    type Target = tokio::runtime::Runtime;
    fn deref(&self) -> &Self::Target {
        self.0.as_ref().expect("the runtime lives until dropped")
    }
}

impl Drop for CommandRuntime {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_timeout(SHUTDOWN_GRACE);
        }
    }
}

/// A tokio runtime for a command (`multi`: several worker threads, for
/// commands that run an engine). Prints why it could not start.
pub fn runtime(multi: bool) -> Option<CommandRuntime> {
    let mut builder = if multi {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    match builder.enable_all().build() {
        Ok(rt) => Some(CommandRuntime(Some(rt))),
        Err(e) => {
            crate::errln!("cannot start: {e}");
            None
        }
    }
}
