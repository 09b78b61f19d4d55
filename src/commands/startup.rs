//! The one way an instance starts. `awtui <file>` (`open`), `run`, `start`
//! (in the foreground and with `--background`), `new` and the home
//! screen's `n` (which runs `awtui start --background`) all begin with
//! [`prepare`], then either host the engine in this process ([`claim`] and
//! [`launch`], see [`super::host`] and the control room of a memory
//! context in [`super::open`]) or start a background host
//! ([`super::start::spawn_background`]) and attach to it.
//!
//! Each process loads the workflow once, and a start checks its backends
//! (the preflight) once: in the process the person ran, before anything
//! is made on disk. A background host is that process's child
//! (`--daemon-child`): it loads the workflow to run it and trusts its
//! parent's check ([`Preflight::Done`]). Once its log is open, a process
//! says how often it did each ([`tally::log_tally`]), which the tests count.

use std::path::PathBuf;

use tokio::sync::broadcast;

use super::validate::load_reporting;
use super::{exit, tally};
use crate::agents::runner::RunMode;
use crate::engine::{Engine, EngineError, EngineEvent, EngineOptions};
use crate::errln;
use crate::instance::{self, Claim, InstanceError, layout, owner, standalone};
use crate::workflow::Workflow;
use crate::workflow::setup::{self, SetupError, is_valid_instance_name};

/// `<file> [--instance NAME]`: the workflow an instance runs and its name,
/// the arguments every command that starts one shares.
#[derive(Clone, Debug, clap::Args)]
pub struct WorkflowArgs {
    /// The workflow file (YAML).
    pub file: PathBuf,
    /// Instance name (its context lives in .workflow/<instance>/;
    /// default: the workflow file's name, e.g. `review` for review.yaml).
    #[arg(long)]
    pub instance: Option<String>,
}

/// Whether this process checks the workflow's backends, and how it says
/// that one cannot run (exit 2 either way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preflight {
    /// Check them; say the first that cannot run (`run`, `start`, `new`).
    First,
    /// Check them; say each that cannot run, at the workflow file (the
    /// control room, before the screen opens).
    Each,
    /// Already checked by the process that started this one (a
    /// background host).
    Done,
}

/// A workflow loaded (and its backends checked) for one start, with the
/// name of its instance.
#[derive(Debug)]
pub struct Prepared {
    /// The workflow, pointed at the folder a standalone agent works in.
    pub workflow: Workflow,
    /// The instance's name (given, or the workflow's own).
    pub instance: String,
}

/// Loads the workflow named by `args`, names its instance and checks its
/// backends as `preflight` says; the exit code after saying what is wrong.
pub fn prepare(args: &WorkflowArgs, preflight: Preflight) -> Result<Prepared, u8> {
    let Some(loaded) = load_reporting(&args.file) else {
        return Err(exit::INVALID);
    };
    let mut workflow = loaded.workflow;
    standalone::apply_workdir(&mut workflow);
    let instance = owner::resolve(&workflow, args.instance.as_deref());
    if !is_valid_instance_name(&instance) {
        errln!("{}", SetupError::InstanceName(instance));
        return Err(exit::INVALID);
    }
    // The agents the person added to this instance join the file's.
    for left_out in crate::instance::added::apply(&mut workflow, &instance) {
        errln!("warning: {left_out}");
    }
    if preflight != Preflight::Done {
        tally::count_check();
        // A backend that cannot run is reported before the instance
        // folder is made or locked.
        let problems = crate::engine::preflight(&workflow);
        if let Some(first) = problems.first() {
            match preflight {
                Preflight::First => errln!("{first}"),
                _ => {
                    for p in &problems {
                        errln!("{}: error: {p}", args.file.display());
                    }
                }
            }
            return Err(exit::INVALID);
        }
    }
    Ok(Prepared { workflow, instance })
}

impl Prepared {
    /// The folder of a file context (`None`: the context is in memory or
    /// disabled, so nothing outlives the process that runs the engine).
    pub fn context_dir(&self) -> Option<PathBuf> {
        setup::context_dir(&self.workflow, &self.instance)
            .ok()
            .flatten()
    }

    /// The instance folder (its lock, log and control socket); the exit
    /// code after saying why it has none.
    pub fn home(&self) -> Result<PathBuf, u8> {
        layout::home(&self.workflow, &self.instance).map_err(|e| {
            let e = InstanceError::from(e);
            errln!("{e}");
            claim_failure(&e)
        })
    }
}

/// Locks the instance for an engine in this process; the exit code after
/// saying why not (another process runs it, say).
pub fn claim(prepared: &Prepared) -> Result<Claim, u8> {
    instance::claim(&prepared.workflow, &prepared.instance).map_err(|e| {
        errln!("{e}");
        claim_failure(&e)
    })
}

/// The exit code for an instance that could not be claimed.
pub fn claim_failure(e: &InstanceError) -> u8 {
    match e {
        InstanceError::AlreadyRunning { .. } => exit::ALREADY_RUNNING,
        InstanceError::Home(layout::HomeError::Setup(_)) | InstanceError::Owner(_) => exit::INVALID,
        _ => exit::FAILED,
    }
}

/// Starts the engine of a claimed instance (setup steps, agents, the MCP
/// server, the document watcher); the engine and its first receiver of
/// events, which has every event since the start, or the exit code after
/// saying why not (1 for a setup step that failed, else 2).
pub async fn launch(
    prepared: Prepared,
    mode: RunMode,
) -> Result<(Engine, broadcast::Receiver<EngineEvent>), u8> {
    let options = EngineOptions {
        instance: prepared.instance,
        mode,
        // Outside edits reach screens attached later too.
        watch_documents: true,
    };
    Engine::start(prepared.workflow, options)
        .await
        .map_err(|e| {
            errln!("{e}");
            match e {
                EngineError::Setup(SetupError::Failed { .. } | SetupError::Spawn { .. }) => {
                    exit::FAILED
                }
                _ => exit::INVALID,
            }
        })
}
