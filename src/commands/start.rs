//! `awtui start <file>`: a persistent instance that never ends on idle, only
//! when stopped (`awtui stop`, Ctrl-C, SIGTERM). In the foreground it shows
//! the channel like `run`; `--background` detaches it (see
//! [`crate::instance::daemon`]) and prints its name and pid. Both go
//! through [`super::startup`]: with `--background` this process loads and
//! checks the workflow, and the host it starts only loads it.

use std::ffi::OsString;
use std::time::Duration;

use super::exit;
use super::host::{self, HostOptions, Output};
use super::startup::{self, Preflight, Prepared, WorkflowArgs};
use crate::agents::runner::RunMode;
use crate::errln;
use crate::instance::{InstanceError, daemon, layout, lock, process, registry};

/// How long `--background` waits for the instance to be up (setup steps
/// run first and may be slow).
const READY_WAIT: Duration = Duration::from_secs(120);

/// `awtui start <file> [--instance N] [--background] [--verbose] [--json]`.
#[derive(Clone, Debug, clap::Args)]
pub struct StartArgs {
    /// The workflow and the instance's name.
    #[command(flatten)]
    pub workflow: WorkflowArgs,
    /// Detach: run in the background (logs in the instance folder) and
    /// print its name and pid.
    #[arg(long)]
    pub background: bool,
    /// Also show agent activity, document changes and counters.
    #[arg(long)]
    pub verbose: bool,
    /// Print every event as a JSON line (with --background: the started
    /// instance as JSON).
    #[arg(long)]
    pub json: bool,
    /// Internal: this process is the detached child of --background.
    #[arg(long = "daemon-child", hide = true)]
    pub daemon_child: bool,
}

/// Starts the instance; returns the exit code.
pub fn run(args: &StartArgs) -> u8 {
    if args.background && !args.daemon_child {
        return background(&args.workflow, args.verbose, args.json);
    }
    let preflight = if args.daemon_child {
        if let Err(e) = daemon::detach() {
            errln!("warning: cannot start a session of its own: {e}");
        }
        // The process that started this one checked the backends.
        Preflight::Done
    } else {
        Preflight::First
    };
    let prepared = match startup::prepare(&args.workflow, preflight) {
        Ok(p) => p,
        Err(code) => return code,
    };
    host::host(
        prepared,
        HostOptions {
            mode: RunMode::Start,
            output: if args.daemon_child {
                Output::Log {
                    verbose: args.verbose,
                }
            } else if args.json {
                Output::JsonLines
            } else {
                Output::Human {
                    verbose: args.verbose,
                }
            },
            daemon_child: args.daemon_child,
        },
    )
}

/// Starts the workflow in the background and prints where it runs
/// (`start --background`, `new`); returns the exit code.
pub fn background(args: &WorkflowArgs, verbose: bool, json: bool) -> u8 {
    let prepared = match startup::prepare(args, Preflight::First) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let d = match spawn_background(&prepared, verbose) {
        Ok(d) => d,
        Err(code) => return code,
    };
    if json {
        super::print::json(
            serde_json::json!({
                "instance": d.info.instance,
                "pid": d.info.pid,
                "log": d.log,
                "home": d.info.home,
            })
            .to_string(),
        );
    } else {
        super::print::line(format!(
            "started @{} in the background (pid {}); log: {}",
            d.info.instance,
            d.info.pid,
            d.log.display()
        ));
    }
    exit::OK
}

/// Starts the prepared instance in a background host (which loads the
/// workflow again to run it, and trusts this process's check of its
/// backends) and waits until it serves; the exit code after saying why
/// not, with what the host said.
pub fn spawn_background(prepared: &Prepared, verbose: bool) -> Result<daemon::Detached, u8> {
    let instance = prepared.instance.as_str();
    let home = prepared.home()?;
    let owner_alive = || registry::read_home(&home).is_some_and(|i| process::process_alive(i.pid));
    if lock::is_held_by_live(&home, owner_alive) {
        let e = InstanceError::AlreadyRunning {
            instance: instance.to_string(),
            pid: registry::read_home(&home).map(|i| i.pid),
            home,
        };
        errln!("{e}");
        return Err(exit::ALREADY_RUNNING);
    }
    // This process's part of the start is logged where the host's is.
    let log = home.join(layout::LOG_FILE);
    if let Err(e) = super::logging::to_file(&log) {
        errln!("warning: cannot write the log {}: {e}", log.display());
    }
    super::tally::log_tally();
    let mut child_args: Vec<OsString> = vec![
        "start".into(),
        prepared.workflow.file.clone().into(),
        "--instance".into(),
        instance.into(),
    ];
    if verbose {
        child_args.push("--verbose".into());
    }
    match daemon::spawn(&child_args, &home, READY_WAIT) {
        Ok(d) => Ok(d),
        Err(daemon::DaemonError::Exited { code, output }) => {
            // What it said, as it would have said it in the foreground:
            // its log's own records stay in the log.
            let said: Vec<&str> = output.lines().filter(|l| !is_log_record(l)).collect();
            let said = said.join("\n");
            if !said.trim().is_empty() {
                errln!("{}", said.trim_end());
            }
            errln!("the background instance did not start");
            Err(code
                .and_then(|c| u8::try_from(c).ok())
                .filter(|c| *c != 0)
                .unwrap_or(exit::FAILED))
        }
        Err(e) => {
            errln!("{e}");
            Err(exit::FAILED)
        }
    }
}

/// Whether `line` is one of awtui's own log records
/// (`2026-11-24T21:30:41.027651Z  INFO awtui::…: …`), not something the
/// instance printed for the person.
fn is_log_record(line: &str) -> bool {
    let Some((stamp, rest)) = line.split_once(' ') else {
        return false;
    };
    let stamp_like = stamp.len() >= 20
        && stamp.as_bytes()[4] == b'-'
        && stamp.as_bytes()[10] == b'T'
        && stamp.ends_with('Z');
    let level = rest.trim_start();
    stamp_like
        && ["TRACE ", "DEBUG ", "INFO ", "WARN ", "ERROR "]
            .iter()
            .any(|l| level.starts_with(l))
}

#[cfg(test)]
mod tests {
    use super::is_log_record;

    #[test]
    fn log_records_are_told_from_what_the_instance_printed() {
        assert!(is_log_record(
            "2026-11-24T21:30:41.027651Z  INFO awtui::commands::host: hosting f.yaml"
        ));
        assert!(is_log_record("2026-11-24T21:30:41Z ERROR awtui: x"));
        assert!(!is_log_record("setup step 1 failed with exit status: 3"));
        assert!(!is_log_record("broken"));
        assert!(!is_log_record("2026 was a year INFO like others"));
    }
}
