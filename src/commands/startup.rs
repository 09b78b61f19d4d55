//! Starting an instance: what `awtui <file>`, `open`, `run` and `start`
//! are given to start.

use std::path::PathBuf;

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
