//! Reading a workflow file into a [`Workflow`], collecting every problem with
//! its `file:line:col` rather than stopping at the first.

use std::path::{Path, PathBuf};

use super::diagnostic::Diagnostics;
use super::schema::*;
use super::yaml::{self, Node, Value};
use crate::fsutil::{self, ReadError};

mod added;
mod agents;
mod backend;
mod context;
mod hosts;
mod keys;
mod limits;
mod mcp;
mod permissions;
mod prompt;
mod setup;
mod tasks;
mod templates;
mod values;
mod workspace;
pub use added::{AddAgentError, added_agent};
pub use backend::model_provider;
pub use hosts::{DEFAULT_SLOTS, LOCAL_HOST};

/// Why a workflow could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read workflow file {}: {}", path.display(), source.reason())]
    Io { path: PathBuf, source: ReadError },
    /// The file has errors; the diagnostics hold them all (and any warnings).
    #[error("{0}")]
    Invalid(Diagnostics),
}

/// A workflow that loaded, with the warnings found on the way.
#[derive(Debug)]
pub struct Loaded {
    pub workflow: Workflow,
    pub warnings: Diagnostics,
}

/// Loads and validates the workflow file at `path`.
pub fn load(path: &Path) -> Result<Loaded, LoadError> {
    load_str(&read(path)?, path)
}

/// The workflow file's text (a regular file under the size cap).
fn read(path: &Path) -> Result<String, LoadError> {
    fsutil::read_text_capped(path, fsutil::MAX_WORKFLOW_BYTES).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// A workflow file checked in full, as `validate` needs it: every finding,
/// and the workflow as far as it was understood (errors included; `None`
/// only when the file is no workflow at all), so the checks that need its
/// agents (can each one run?) report in the same pass as the file's own.
#[derive(Debug)]
pub struct Checked {
    pub workflow: Option<Workflow>,
    pub diags: Diagnostics,
}

/// Reads and checks the workflow file at `path` in full ([`Checked`]);
/// fails only when it cannot be read.
pub fn check(path: &Path) -> Result<Checked, LoadError> {
    Ok(check_str(&read(path)?, path))
}

/// Loads and validates workflow `text` as if read from `path` (which gives the
/// default name and the folder relative paths resolve against).
pub fn load_str(text: &str, path: &Path) -> Result<Loaded, LoadError> {
    match check_str(text, path) {
        Checked {
            workflow: Some(workflow),
            diags,
        } if !diags.has_errors() => Ok(Loaded {
            workflow,
            warnings: diags,
        }),
        Checked { diags, .. } => Err(LoadError::Invalid(diags)),
    }
}

/// Checks workflow `text` as if read from `path`, keeping what was
/// understood whatever the errors.
fn check_str(text: &str, path: &Path) -> Checked {
    let mut diags = Diagnostics::new(path.to_path_buf(), text);
    let root = match yaml::parse(text) {
        Ok(root) => root,
        Err(e) => {
            diags.error(e.pos, format!("invalid YAML: {}", e.message));
            return Checked {
                workflow: None,
                diags,
            };
        }
    };
    let file = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let base_dir = file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let workflow = Walker {
        diags: &mut diags,
        base_dir: &base_dir,
    }
    .workflow(&root, &file);
    Checked { workflow, diags }
}

/// Whether `name` can be an environment variable (`[A-Za-z_][A-Za-z0-9_]*`).
pub fn is_env_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The most workers one `spawn:` template may make.
pub const MAX_SPAWN_SLOTS: u32 = 20;

struct Walker<'a> {
    diags: &'a mut Diagnostics,
    base_dir: &'a Path,
}

/// Where a template is used decides which names it may reference.
struct Scope<'s> {
    outputs: &'s [String],
    context_enabled: bool,
}

impl Walker<'_> {
    fn workflow(&mut self, root: &Node, file: &Path) -> Option<Workflow> {
        let top = match &root.value {
            Value::Map(entries) => self.fields(entries, &keys::TOP, "the workflow"),
            Value::Null => {
                self.diags
                    .error(root.pos, "the workflow file is empty: missing 'agents'");
                return None;
            }
            other => {
                self.diags.error(
                    root.pos,
                    format!(
                        "a workflow is a mapping with 'agents', found {}",
                        other.kind()
                    ),
                );
                return None;
            }
        };

        let name = match top.get("name") {
            Some(node) => self.string(node, "name").unwrap_or_default(),
            None => file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "workflow".into()),
        };
        let context = self.context(top.get("context"));
        let setup = top.get("setup").map(|n| self.setup(n)).unwrap_or_default();
        let outputs: Vec<String> = setup.iter().filter_map(|s| s.output.clone()).collect();
        let scope = Scope {
            outputs: &outputs,
            context_enabled: context != ContextConfig::Disabled,
        };
        for (i, task) in setup.iter().enumerate() {
            let earlier: Vec<String> = setup[..i].iter().filter_map(|s| s.output.clone()).collect();
            let step_scope = Scope {
                outputs: &earlier,
                context_enabled: scope.context_enabled,
            };
            self.check_template(&task.shell, &format!("setup step {}", i + 1), &step_scope);
        }
        if let Some(files) = context.files() {
            let dir_scope = Scope {
                outputs: &[],
                context_enabled: false,
            };
            self.check_template(&files.dir, "context.config.dir", &dir_scope);
        }

        let default_workspace = top
            .get("workspace")
            .and_then(|n| self.workspace(n, "workspace"))
            .unwrap_or_default();
        let mut agents = match top.get("agents") {
            Some(node) => self.agents(node, &scope, &default_workspace),
            None => {
                self.diags.error(
                    root.pos,
                    "missing 'agents': a workflow needs at least one agent",
                );
                Vec::new()
            }
        };
        if let Some(node) = top.get("spawn") {
            let slots = self.spawn(node, &scope, &default_workspace, &agents);
            agents.extend(slots);
        }
        if !matches!(context, ContextConfig::File(_)) {
            for a in agents
                .iter()
                .filter(|a| matches!(a.workspace, Workspace::Worktree { .. }))
            {
                self.diags.error(
                    a.pos,
                    format!(
                        "agent '{}': workspace: worktree needs the file context",
                        a.name
                    ),
                );
            }
        }
        let kickoff = top.get("kickoff").and_then(|node| match &node.value {
            Value::Null => None,
            _ => self.located(node, "kickoff"),
        });
        if let Some(k) = &kickoff {
            self.check_template(k, "kickoff", &scope);
            self.check_kickoff_mentions(k, &templates::declared_agents(top.get("agents")));
        }
        let limits = top
            .get("limits")
            .map(|n| self.limits(n))
            .unwrap_or_default();
        self.check_ask_timeouts(&agents, &limits);
        let tasks = top.get("tasks").map(|n| self.tasks(n, &agents));
        let (hosts, local_slots) = top
            .get("hosts")
            .map(|n| self.hosts(n))
            .unwrap_or((Vec::new(), DEFAULT_SLOTS));
        self.check_hosts(&agents, &hosts);
        Some(Workflow {
            workspace: default_workspace,
            hosts,
            local_slots,
            name,
            file: file.to_path_buf(),
            base_dir: self.base_dir.to_path_buf(),
            agents,
            setup,
            kickoff,
            context,
            limits,
            tasks,
        })
    }
}
