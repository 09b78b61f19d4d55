//! `awtui validate <file>`: every problem with its position, or a summary.

use crate::{errln, outln};
use std::path::{Path, PathBuf};

use super::exit;
use crate::workflow::setup::{SetupError, is_valid_instance_name};
use crate::workflow::{self, Checked, Diagnostics, LoadError, Loaded};

/// Loads a workflow, printing every error (and warnings) the way
/// `awtui validate` does; `None` when it has errors.
pub fn load_reporting(file: &Path) -> Option<Loaded> {
    super::tally::count_load();
    match workflow::load(file) {
        Ok(loaded) => {
            for w in loaded.warnings.warnings() {
                errln!("{}", loaded.warnings.render(w));
            }
            Some(loaded)
        }
        Err(LoadError::Invalid(diags)) => {
            report(&diags, &[], file);
            None
        }
        Err(e @ LoadError::Io { .. }) => {
            errln!("{e}");
            None
        }
    }
}

/// `awtui validate <file> [--instance N] [--check-hosts]`.
#[derive(Clone, Debug, clap::Args)]
pub struct ValidateArgs {
    /// The workflow file (YAML).
    pub file: PathBuf,
    /// Instance name used to show where the context would live
    /// (default: the workflow file's name).
    #[arg(long)]
    pub instance: Option<String>,
    /// Also connect to every host agents run on (`hosts:`): reachable,
    /// authentication accepted, the agents' CLIs installed there.
    #[arg(long)]
    pub check_hosts: bool,
}

/// Prints the summary (exit 0) or every error (exit 2); warnings go to
/// stderr. Every error of the file is found in one run: the file's own
/// (unknown keys, bad values) and those only its agents show (a CLI that
/// is missing, a key that is unset, a worktree that cannot be made).
pub fn run(args: &ValidateArgs) -> u8 {
    let file = args.file.as_path();
    super::tally::count_load();
    let Checked {
        workflow,
        mut diags,
    } = match workflow::check(file) {
        Ok(c) => c,
        Err(e) => {
            errln!("{e}");
            return exit::INVALID;
        }
    };
    let Some(workflow) = workflow else {
        return report(&diags, &[], file);
    };
    let instance = &crate::instance::owner::resolve(&workflow, args.instance.as_deref());
    if !is_valid_instance_name(instance) {
        errln!("{}", SetupError::InstanceName(instance.into()));
        return exit::INVALID;
    }
    // A backend that cannot run is a validation error too, at the agent
    // it concerns: say what to install or set before anything starts.
    for a in &workflow.agents {
        if let Err(e) = crate::agents::runtime::preflight(a, &workflow.base_dir) {
            diags.error(a.pos, format!("agent '{}' cannot run: {e}", a.name));
        }
    }
    if args.check_hosts {
        check_hosts_now(&workflow, &mut diags);
    }
    // Worktrees: the repository, base and branch names are checked as a
    // start would, without making anything.
    let state_root = workflow::setup::context_dir(&workflow, instance)
        .ok()
        .flatten();
    let unplaced = crate::workspace::preflight(&workflow, instance, state_root.as_deref());
    if diags.has_errors() || !unplaced.is_empty() {
        return report(&diags, &unplaced, file);
    }
    for w in diags.warnings() {
        errln!("{}", diags.render(w));
    }
    outln!(
        "{}",
        workflow::summary::summary(&workflow, instance).trim_end_matches('\n')
    );
    exit::OK
}

/// Every finding (errors and warnings, in file order), the worktree
/// problems, then the count of errors; exit 2. No summary: one of what
/// would not start would read as if it would.
fn report(diags: &Diagnostics, unplaced: &[String], file: &Path) -> u8 {
    errln!("{diags}");
    for p in unplaced {
        errln!("{}: error: {p}", file.display());
    }
    let n = diags.errors().len() + unplaced.len();
    errln!(
        "{n} error{} in {}",
        if n == 1 { "" } else { "s" },
        file.display()
    );
    exit::INVALID
}

/// `--check-hosts`: connects to every host an agent is placed on, as a
/// start would (without forwarding anything), and reports each failure at
/// the host's definition.
fn check_hosts_now(workflow: &crate::workflow::Workflow, found: &mut crate::workflow::Diagnostics) {
    let places = crate::agents::runtime::placement::place(workflow);
    let Some(rt) = super::runtime(false) else {
        return;
    };
    let results = rt.block_on(crate::agents::runtime::ssh::connect_placed(
        workflow,
        &places,
        &workflow.file,
        None,
    ));
    for host in &workflow.hosts {
        if let Some(Err(e)) = results.get(&host.name) {
            found.error(host.pos, e.clone());
        }
    }
}
