//! Which workflow an instance belongs to.
//!
//! Without `--instance`, a workflow opens the instance named after its file
//! (`review.yaml` → `review`), so two workflows in one folder keep their
//! channels apart. The first start records the workflow file in the
//! instance folder (`workflow.json`); opening that folder for another
//! workflow file is refused, naming both files and the way out.
//!
//! Instances made before the record existed keep opening: a folder without
//! a record is adopted by the workflow that opens it (and recorded), and a
//! workflow opened without `--instance` still finds its old
//! `.workflow/default/` when it has no folder of its own yet and that
//! folder is recorded for it, or has no record and knows no recipient
//! outside the workflow's agents.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::fsutil::atomic_write;
use crate::workflow::setup::{self, is_valid_instance_name};
use crate::workflow::{DEFAULT_INSTANCE, Workflow};

/// The record's file name in the instance folder (reserved: never a document).
pub const OWNER_FILE: &str = "workflow.json";

/// The record: which workflow file made this instance.
#[derive(Debug, Serialize, Deserialize)]
struct OwnerRecord {
    /// The workflow file, absolute.
    workflow: PathBuf,
}

/// Why an instance folder cannot be opened for a workflow.
#[derive(Debug, thiserror::Error)]
pub enum OwnerError {
    /// The folder belongs to another workflow file.
    #[error(
        "instance '{instance}' ({home}) belongs to {recorded}, not {opened}; open {recorded} to resume it, or give this workflow an instance of its own with --instance NAME",
        home = .home.display(),
        recorded = .recorded.display(),
        opened = .opened.display()
    )]
    OtherWorkflow {
        /// The instance name.
        instance: String,
        /// Its folder.
        home: PathBuf,
        /// The workflow file recorded in it.
        recorded: PathBuf,
        /// The workflow file being opened.
        opened: PathBuf,
    },
    /// The record could not be written.
    #[error("cannot record the workflow in {path}: {source}", path = .path.display())]
    Write {
        /// The record's path.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
}

/// The instance a workflow file opens when no `--instance` is given: its
/// file name without the extension, made a valid instance name
/// (`review.yaml` → `review`; `default` when nothing of it is usable).
pub fn default_name(workflow_file: &Path) -> String {
    let stem = workflow_file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let cleaned: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .skip_while(|c| !c.is_ascii_alphanumeric())
        .take(100)
        .collect();
    if is_valid_instance_name(&cleaned) {
        cleaned
    } else {
        DEFAULT_INSTANCE.to_string()
    }
}

/// The instance to open: `given`, or the workflow's own (see the module
/// documentation for folders made by earlier versions).
pub fn resolve(workflow: &Workflow, given: Option<&str>) -> String {
    if let Some(name) = given {
        return name.to_string();
    }
    let own = default_name(&workflow.file);
    let folder = |name: &str| setup::context_dir(workflow, name).ok().flatten();
    match (folder(&own), folder(DEFAULT_INSTANCE)) {
        (Some(mine), Some(legacy))
            if !mine.exists() && legacy.is_dir() && legacy_fits(&legacy, workflow) =>
        {
            DEFAULT_INSTANCE.to_string()
        }
        _ => own,
    }
}

/// Whether an old `default` folder is this workflow's.
fn legacy_fits(home: &Path, workflow: &Workflow) -> bool {
    match read(home) {
        Some(record) => same_file(&record.workflow, &workflow.file),
        None => {
            let Ok(bytes) =
                crate::fsutil::read_record(&home.join(crate::context::file_store::STATE_FILE))
            else {
                return false;
            };
            let Ok(state) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
                return false;
            };
            let agents = workflow.agent_names();
            state["cursors"].as_object().is_some_and(|cursors| {
                cursors
                    .keys()
                    .all(|k| k == crate::context::mentions::USER || agents.contains(k))
            })
        }
    }
}

fn read(home: &Path) -> Option<OwnerRecord> {
    let bytes = crate::fsutil::read_record(&home.join(OWNER_FILE)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn same_file(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    canon(a) == canon(b)
}

/// Refuses `home` when it is recorded for another workflow file that still
/// exists; otherwise records `workflow` as its owner (a moved or renamed
/// workflow file takes its instance along).
pub fn check_and_record(
    home: &Path,
    workflow: &Workflow,
    instance: &str,
) -> Result<(), OwnerError> {
    if let Some(record) = read(home) {
        if same_file(&record.workflow, &workflow.file) {
            return Ok(());
        }
        if record.workflow.exists() {
            return Err(OwnerError::OtherWorkflow {
                instance: instance.to_string(),
                home: home.to_path_buf(),
                recorded: record.workflow,
                opened: workflow.file.clone(),
            });
        }
        tracing::warn!(
            "instance '{instance}' was recorded for {}, which no longer exists; it now belongs to {}",
            record.workflow.display(),
            workflow.file.display()
        );
    }
    let record = OwnerRecord {
        workflow: std::fs::canonicalize(&workflow.file).unwrap_or_else(|_| workflow.file.clone()),
    };
    let path = home.join(OWNER_FILE);
    let bytes = serde_json::to_vec_pretty(&record).unwrap_or_default();
    atomic_write(&path, &bytes).map_err(|source| OwnerError::Write { path, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_come_from_the_file_name() {
        assert_eq!(default_name(Path::new("/x/review.yaml")), "review");
        assert_eq!(
            default_name(Path::new("/x/my review.v2.yml")),
            "my-review.v2"
        );
        assert_eq!(default_name(Path::new("/x/_hidden.yaml")), "hidden");
        assert_eq!(default_name(Path::new("/x/ü.yaml")), "default");
        assert_eq!(default_name(Path::new("/x/-.yaml")), "default");
    }
}
