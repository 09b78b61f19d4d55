//! Agents the person adds to an instance without editing its workflow file
//! (`n` in the control room, `/agent add`): each is checked by the very
//! walk that checks a file's `agents:` (name rules, reserved names,
//! backend with "did you mean", workspace mode and what the backend
//! allows), against the workflow it joins.

use std::path::Path;

use super::{Scope, Walker};
use crate::context::mentions;
use crate::vocab::agents::NewAgent;
use crate::workflow::diagnostic::Diagnostics;
use crate::workflow::schema::{AgentDef, ContextConfig, Workflow, Workspace};
use crate::workflow::yaml::{Key, Node, Pos, Value};

/// Why an agent cannot be added.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddAgentError {
    /// An agent of the instance (the file's, a `spawn:` slot or one added
    /// before) has that name.
    #[error("there is already an agent '{0}' in this instance; choose another name")]
    Taken(String),
    /// The name or backend carries control characters (shown escaped).
    #[error("{what} {shown} has control characters")]
    Control { what: &'static str, shown: String },
    /// What the workflow loader says about it, every problem joined.
    #[error("{0}")]
    Invalid(String),
}

/// A string node at no position of any file.
fn text(value: &str) -> Node {
    Node {
        pos: Pos::default(),
        value: Value::Str(value.to_string()),
    }
}

fn key(name: &str) -> Key {
    Key {
        pos: Pos::default(),
        name: name.to_string(),
    }
}

/// `new` as the `agents:` mapping a workflow file would hold.
fn as_agents_node(new: &NewAgent) -> Node {
    let mut fields = vec![(key("backend"), text(&new.backend))];
    if let Some(mode) = new.workspace {
        fields.push((key("workspace"), text(mode.name())));
    }
    let def = Node {
        pos: Pos::default(),
        value: Value::Map(fields),
    };
    Node {
        pos: Pos::default(),
        value: Value::Map(vec![(key(&new.name), def)]),
    }
}

fn refuse_control(what: &'static str, value: &str) -> Result<(), AddAgentError> {
    if value.chars().any(char::is_control) {
        return Err(AddAgentError::Control {
            what,
            shown: format!("{value:?}"),
        });
    }
    Ok(())
}

/// Checks `new` as an agent of `workflow` whose other agents are `taken`
/// (the workflow's and those added before), and returns its definition.
pub fn added_agent(
    workflow: &Workflow,
    taken: &[String],
    new: &NewAgent,
) -> Result<AgentDef, AddAgentError> {
    refuse_control("the agent name", &new.name)?;
    refuse_control("the backend", &new.backend)?;
    if mentions::is_valid_name(&new.name) && taken.iter().any(|t| t == &new.name) {
        return Err(AddAgentError::Taken(new.name.clone()));
    }
    let mut diags = Diagnostics::new(workflow.file.clone(), "");
    let outputs: Vec<String> = workflow
        .setup
        .iter()
        .filter_map(|s| s.output.clone())
        .collect();
    let scope = Scope {
        outputs: &outputs,
        context_enabled: workflow.context != ContextConfig::Disabled,
    };
    let base_dir: &Path = &workflow.base_dir;
    let mut walker = Walker {
        diags: &mut diags,
        base_dir,
    };
    let agent = walker
        .agents(&as_agents_node(new), &scope, &workflow.workspace)
        .pop();
    if let Some(a) = &agent
        && matches!(a.workspace, Workspace::Worktree { .. })
        && !matches!(workflow.context, ContextConfig::File(_))
    {
        diags.error(
            Pos::default(),
            format!(
                "agent '{}': workspace: worktree needs the file context",
                a.name
            ),
        );
    }
    match agent {
        Some(agent) if !diags.has_errors() => Ok(agent),
        _ => Err(AddAgentError::Invalid(
            diags
                .errors()
                .iter()
                .map(|d| d.message.clone())
                .collect::<Vec<_>>()
                .join("; "),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::agents::{ADDABLE_BACKENDS, WorkspaceMode};
    use crate::workflow::BackendKind;

    fn workflow(yaml: &str) -> (tempfile::TempDir, Workflow) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("w.yaml");
        std::fs::write(&file, yaml).unwrap();
        let w = crate::workflow::load(&file).unwrap().workflow;
        (dir, w)
    }

    fn new(name: &str, backend: &str, workspace: Option<WorkspaceMode>) -> NewAgent {
        NewAgent {
            name: name.into(),
            backend: backend.into(),
            workspace,
        }
    }

    const TWO: &str = "agents:\n  lead:\n    command: ['true']\n  coder:\n    command: ['true']\n";

    #[test]
    fn the_form_offers_exactly_the_backends_the_loader_takes_by_name() {
        let (_d, w) = workflow(TWO);
        let taken = w.agent_names();
        let accepted: Vec<&str> = BackendKind::ALL
            .iter()
            .map(|(_, n)| *n)
            .filter(|n| added_agent(&w, &taken, &new("helper", n, None)).is_ok())
            .collect();
        let mut offered = ADDABLE_BACKENDS.to_vec();
        offered.sort();
        let mut accepted = accepted;
        accepted.sort();
        assert_eq!(offered, accepted);
    }

    #[test]
    fn names_backends_and_workspaces_are_checked_as_in_a_workflow_file() {
        let (_d, w) = workflow(TWO);
        let taken = w.agent_names();
        let refused = |a: NewAgent| added_agent(&w, &taken, &a).unwrap_err().to_string();
        assert_eq!(
            refused(new("coder", "claude", None)),
            "there is already an agent 'coder' in this instance; choose another name"
        );
        assert!(refused(new("../x", "claude", None)).contains("'../x' is not a valid agent name"));
        assert!(refused(new("all", "claude", None)).contains("is reserved"));
        let e = refused(new("a\u{7}b", "claude", None));
        assert!(
            e.contains("control characters") && !e.contains('\u{7}'),
            "{e}"
        );
        assert!(
            refused(new("helper", "codx", None))
                .contains("unknown backend 'codx' (did you mean 'codex'?)")
        );
        // The file context is what worktrees need; this one has it by
        // default, a memory context does not.
        let ok = added_agent(
            &w,
            &taken,
            &new("helper", "codex", Some(WorkspaceMode::Worktree)),
        )
        .unwrap();
        assert_eq!(ok.workspace, Workspace::Worktree { base: None });
        let (_m, mem) = workflow(&format!("{TWO}context:\n  provider: memory\n"));
        assert!(
            added_agent(
                &mem,
                &taken,
                &new("helper", "codex", Some(WorkspaceMode::Worktree))
            )
            .unwrap_err()
            .to_string()
            .contains("workspace: worktree needs the file context")
        );
    }

    #[test]
    fn an_added_agent_takes_the_workflows_default_workspace() {
        let (_d, w) = workflow(&format!("workspace: worktree\n{TWO}"));
        let a = added_agent(&w, &w.agent_names(), &new("helper", "codex", None)).unwrap();
        assert_eq!(a.workspace, Workspace::Worktree { base: None });
        let a = added_agent(
            &w,
            &w.agent_names(),
            &new("helper", "codex", Some(WorkspaceMode::Shared)),
        )
        .unwrap();
        assert_eq!(a.workspace, Workspace::Shared);
    }
}
