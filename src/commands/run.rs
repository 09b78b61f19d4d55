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

use super::host::{self, HostOptions, Output};
use super::startup::{self, Preflight, WorkflowArgs};
use crate::agents::runner::RunMode;

/// `awtui run <file> [--instance N] [--verbose] [--json]`.
#[derive(Clone, Debug, clap::Args)]
pub struct RunArgs {
    /// The workflow and the instance's name.
    #[command(flatten)]
    pub workflow: WorkflowArgs,
    /// Also show agent activity, document changes and counters (stderr);
    /// with --json, stream every event as a JSON line instead.
    #[arg(long)]
    pub verbose: bool,
    /// Print one JSON object with the whole result at the end (stdout).
    #[arg(long)]
    pub json: bool,
}

/// Runs the workflow until every agent is idle; returns the exit code.
pub fn run(args: &RunArgs) -> u8 {
    let output = match (args.json, args.verbose) {
        (true, true) => Output::JsonLines,
        (true, false) => Output::Report,
        (false, verbose) => Output::Human { verbose },
    };
    match startup::prepare(&args.workflow, Preflight::First) {
        Ok(prepared) => host::host(
            prepared,
            HostOptions {
                mode: RunMode::Run,
                output,
                daemon_child: false,
            },
        ),
        Err(code) => code,
    }
}
