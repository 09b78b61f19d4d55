//! `awtui validate <file>`: every problem with its position, or a summary.

use crate::{errln, outln};
use std::path::Path;

use super::exit;
use crate::workflow::setup::{SetupError, is_valid_instance_name};
use crate::workflow::{self, LoadError, Loaded};

/// Loads a workflow, printing every error (and warnings) the way
/// `awtui validate` does; `None` when it has errors.
pub fn load_reporting(file: &Path) -> Option<Loaded> {
    match workflow::load(file) {
        Ok(loaded) => {
            for w in loaded.warnings.warnings() {
                errln!("{}", loaded.warnings.render(w));
            }
            Some(loaded)
        }
        Err(LoadError::Invalid(diags)) => {
            errln!("{diags}");
            let n = diags.errors().len();
            errln!(
                "{n} error{} in {}",
                if n == 1 { "" } else { "s" },
                file.display()
            );
            None
        }
        Err(e @ LoadError::Io { .. }) => {
            errln!("{e}");
            None
        }
    }
}

/// Prints the summary (exit 0) or every error (exit 2); warnings go to stderr.
pub fn run(file: &Path, instance: Option<&str>) -> u8 {
    let Some(loaded) = load_reporting(file) else {
        return exit::INVALID;
    };
    let instance = &crate::instance::owner::resolve(&loaded.workflow, instance);
    if !is_valid_instance_name(instance) {
        errln!("{}", SetupError::InstanceName(instance.into()));
        return exit::INVALID;
    }
    outln!(
        "{}",
        workflow::summary::summary(&loaded.workflow, instance).trim_end_matches('\n')
    );
    // A backend that cannot run is a validation error too: say what to
    // install or set before anything starts.
    let mut problems: Vec<String> = crate::engine::preflight(&loaded.workflow)
        .iter()
        .map(ToString::to_string)
        .collect();
    // Worktrees: the repository, base and branch names are checked as a
    // start would, without making anything.
    let state_root = workflow::setup::context_dir(&loaded.workflow, instance)
        .ok()
        .flatten();
    problems.extend(crate::workspace::preflight(
        &loaded.workflow,
        instance,
        state_root.as_deref(),
    ));
    for p in &problems {
        errln!("{}: error: {p}", file.display());
    }
    if problems.is_empty() {
        exit::OK
    } else {
        exit::INVALID
    }
}
