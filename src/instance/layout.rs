//! Where an instance keeps its files: the state crate's layout
//! ([`awtui_state::layout`], re-exported whole), plus the instance folder
//! itself, which depends on the workflow (its `context.config.dir`) and so
//! is named here, above the workflow.

pub use awtui_state::layout::*;

use std::path::PathBuf;

use crate::workflow::Workflow;
use crate::workflow::setup::{self, SetupError};

/// Why an instance's folder could not be named or found.
#[derive(Debug, thiserror::Error)]
pub enum HomeError {
    /// A bad instance name or a bad `context.config.dir`.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// No state dir, or a folder that could not be made private.
    #[error(transparent)]
    Layout(#[from] LayoutError),
}

/// The folder holding the instance's own files (see the module doc).
pub fn home(workflow: &Workflow, instance: &str) -> Result<PathBuf, HomeError> {
    if !setup::is_valid_instance_name(instance) {
        return Err(SetupError::InstanceName(instance.to_string()).into());
    }
    if let Some(dir) = setup::context_dir(workflow, instance)? {
        return Ok(dir);
    }
    Ok(state_dir()?
        .join("volatile")
        .join(format!("{instance}-{}", &path_hash(&workflow.file)[..12])))
}
