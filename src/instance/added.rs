//! The agents the person added to an instance (`n` in the control room,
//! `/agent add`), kept by awtui alone outside every workspace
//! ([`layout::added_agents`]) and written atomically, so a reopened
//! instance brings them back and a crash leaves the list as it was before
//! the add or after it, never half.

use std::path::{Path, PathBuf};

use super::layout::{self, LayoutError};
use crate::vocab::agents::NewAgent;
use crate::workflow::{AddAgentError, Workflow, added_agent};

/// The most bytes the list may take (far more than any real list).
const MAX_BYTES: u64 = 1 << 20;

/// Why the list could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum AddedError {
    /// No place for the list.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// No instance folder to keep the list for.
    #[error(transparent)]
    Home(#[from] layout::HomeError),
    /// The list is there but not a readable list.
    #[error("cannot read the added agents {}: {reason}", path.display())]
    Read {
        /// The list's file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The list could not be written.
    #[error("cannot keep the added agents in {}: {source}", path.display())]
    Write {
        /// The list's file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The list's file for the instance whose folder is `home`.
pub fn file(home: &Path) -> Result<PathBuf, AddedError> {
    Ok(layout::added_agents(home)?)
}

/// The agents added so far, in the order added (none when the file is
/// missing).
pub fn load(path: &Path) -> Result<Vec<NewAgent>, AddedError> {
    let text = match crate::fsutil::read_text_capped(path, MAX_BYTES) {
        Ok(text) => text,
        Err(e) if e.is_not_found() => return Ok(Vec::new()),
        Err(e) => {
            return Err(AddedError::Read {
                path: path.to_path_buf(),
                reason: e.reason(),
            });
        }
    };
    serde_json::from_str(&text).map_err(|e| AddedError::Read {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// Replaces the list, durably and atomically.
pub fn save(path: &Path, agents: &[NewAgent]) -> Result<(), AddedError> {
    let json = serde_json::to_vec_pretty(agents).unwrap_or_default();
    crate::fsutil::atomic_write(path, &json).map_err(|source| AddedError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Checks `new` against `workflow` and the agents `added` before it, and
/// appends it to the list at `path`; its definition, to start it.
pub fn add(
    path: &Path,
    workflow: &Workflow,
    new: &NewAgent,
) -> Result<crate::workflow::AgentDef, AddError> {
    let mut added = load(path)?;
    let mut taken = workflow.agent_names();
    taken.extend(added.iter().map(|a| a.name.clone()));
    let def = added_agent(workflow, &taken, new)?;
    added.push(new.clone());
    save(path, &added)?;
    Ok(def)
}

/// Why [`add`] refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum AddError {
    /// The agent is not one the workflow could have.
    #[error(transparent)]
    Refused(#[from] AddAgentError),
    /// The list could not be read or written.
    #[error(transparent)]
    Kept(#[from] AddedError),
}

/// Adds the agents kept for the instance `instance` of `workflow` to it
/// (at its start); what was left out, and why, for the person.
pub fn apply(workflow: &mut Workflow, instance: &str) -> Vec<String> {
    let listed = layout::home(workflow, instance)
        .map_err(AddedError::from)
        .and_then(|home| load(&file(&home)?));
    let added = match listed {
        Ok(added) => added,
        // Without a data dir nothing could be added (see `layout`).
        Err(AddedError::Home(layout::HomeError::Layout(LayoutError::NoStateDir))) => {
            return Vec::new();
        }
        Err(e) => return vec![format!("{e}; the added agents are left out")],
    };
    let mut notices = Vec::new();
    for new in added {
        match added_agent(workflow, &workflow.agent_names(), &new) {
            Ok(def) => workflow.agents.push(def),
            Err(e) => notices.push(format!("added agent '{}' is left out: {e}", new.name)),
        }
    }
    notices
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::agents::WorkspaceMode;

    fn workflow(dir: &Path) -> Workflow {
        let file = dir.join("w.yaml");
        std::fs::write(&file, "agents:\n  lead:\n    command: ['true']\n").unwrap();
        crate::workflow::load(&file).unwrap().workflow
    }

    fn new(name: &str) -> NewAgent {
        NewAgent {
            name: name.into(),
            backend: "codex".into(),
            workspace: Some(WorkspaceMode::Shared),
        }
    }

    #[test]
    fn the_list_grows_by_checked_adds_and_refuses_a_name_twice() {
        let dir = tempfile::tempdir().unwrap();
        let w = workflow(dir.path());
        let path = dir.path().join("added.json");
        assert!(load(&path).unwrap().is_empty(), "no file: nothing added");
        add(&path, &w, &new("helper")).unwrap();
        let e = add(&path, &w, &new("helper")).unwrap_err().to_string();
        assert!(e.contains("already an agent 'helper'"), "{e}");
        assert!(add(&path, &w, &new("lead")).is_err());
        add(&path, &w, &new("second")).unwrap();
        let names: Vec<String> = load(&path).unwrap().into_iter().map(|a| a.name).collect();
        assert_eq!(names, ["helper", "second"]);
    }

    #[test]
    fn a_damaged_list_is_an_error_naming_the_file_not_an_empty_list() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("added.json");
        std::fs::write(&path, "[{\"name\": ").unwrap();
        let e = load(&path).unwrap_err().to_string();
        assert!(e.contains(&path.display().to_string()), "{e}");
        // Nothing is added over a list that cannot be read.
        let w = workflow(dir.path());
        assert!(add(&path, &w, &new("helper")).is_err());
    }
}
