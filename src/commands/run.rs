//! `awtui run <file>`: the workflow headless until every agent is idle.
//!
//! Output (see the README):
//! - default: each channel message on stdout as it arrives; status changes,
//!   pauses and notices on stderr;
//! - `--verbose`: also agent activity (tool calls, errors), document changes
//!   and counters on stderr;
//! - `--json`: status changes on stderr, one final object on stdout
//!   ([`super::report::RunReport`]);
//! - `--json --verbose`: every engine event as a JSON line on stdout instead.
//!
//! A run registers like any instance, so `list`, `send`, `peek` and `stop`
//! reach it while it runs. Exit: 0 when every agent is idle with nothing
//! unread, 1 when it ended otherwise (a failed agent, a loop-guard or budget
//! pause, a failed setup step, a stop), 2 for an invalid workflow, 4 when
//! the instance is already running.

use std::path::Path;

use super::host::{self, HostOptions, Output};
use crate::agents::runner::RunMode;

/// Runs `file` as instance `instance`; returns the exit code.
pub fn run(file: &Path, instance: Option<&str>, verbose: bool, json: bool) -> u8 {
    let output = match (json, verbose) {
        (true, true) => Output::JsonLines,
        (true, false) => Output::Report,
        (false, verbose) => Output::Human { verbose },
    };
    host::host(HostOptions {
        file,
        instance,
        mode: RunMode::Run,
        output,
        daemon_child: false,
    })
}
