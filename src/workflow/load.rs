//! Reading a workflow file into a [`Workflow`], collecting every problem with
//! its `file:line:col` rather than stopping at the first.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::diagnostic::{Diagnostics, did_you_mean};
use super::interpolate::references;
use super::schema::*;
use super::yaml::{self, Key, Node, Pos, Value};
use crate::agents::backend::{PromptTransport, backend_for};
use crate::context::{mentions, paths};
use crate::duration::parse_duration;
use crate::fsutil::{self, ReadError};
use keys::KeySet;

mod added;
mod hosts;
mod keys;
pub use added::{AddAgentError, added_agent};
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

/// The value of key `k` among a mapping's checked fields.
fn field<'n>(fields: &[(&Key, &'n Node)], k: &str) -> Option<&'n Node> {
    fields
        .iter()
        .find(|(key, _)| key.name == k)
        .map(|(_, n)| *n)
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

/// Names every template may use besides setup outputs and `env.*`.
const RESERVED_VARS: [&str; 5] = [
    "workflow.name",
    "workflow.instance",
    "instance",
    "context.channel",
    "context.document",
];

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
        let get = |k: &str| field(&top, k);

        let name = match get("name") {
            Some(node) => self.string(node, "name").unwrap_or_default(),
            None => file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "workflow".into()),
        };
        let context = self.context(get("context"));
        let setup = get("setup").map(|n| self.setup(n)).unwrap_or_default();
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

        let default_workspace = get("workspace")
            .and_then(|n| self.workspace(n, "workspace"))
            .unwrap_or_default();
        let mut agents = match get("agents") {
            Some(node) => self.agents(node, &scope, &default_workspace),
            None => {
                self.diags.error(
                    root.pos,
                    "missing 'agents': a workflow needs at least one agent",
                );
                Vec::new()
            }
        };
        if let Some(node) = get("spawn") {
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
        let kickoff = get("kickoff").and_then(|node| match &node.value {
            Value::Null => None,
            _ => self.string(node, "kickoff").map(|value| Located {
                value,
                pos: node.pos,
            }),
        });
        if let Some(k) = &kickoff {
            self.check_template(k, "kickoff", &scope);
            self.check_kickoff_mentions(k, &declared_agents(get("agents")));
        }
        let limits = get("limits").map(|n| self.limits(n)).unwrap_or_default();
        self.check_ask_timeouts(&agents, &limits);
        let tasks = get("tasks").map(|n| self.tasks(n, &agents));
        let (hosts, local_slots) = get("hosts")
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

    /// `tasks:`: a list of `{id, name, description, depends_on, assignee,
    /// role}`; every dependency must name a task of the list, without a
    /// cycle; an assignee must be an agent.
    fn tasks(&mut self, node: &Node, agents: &[AgentDef]) -> Vec<FileTask> {
        let items = match &node.value {
            Value::Seq(items) => items,
            Value::Null => return Vec::new(),
            other => {
                self.diags.error(
                    node.pos,
                    format!("tasks must be a list of tasks, found {}", other.kind()),
                );
                return Vec::new();
            }
        };
        let mut tasks: Vec<FileTask> = Vec::new();
        let mut deps_at: Vec<Vec<(String, Pos)>> = Vec::new();
        let mut positions = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let what = format!("task {}", i + 1);
            let Some(entries) = self.mapping(item, &what) else {
                continue;
            };
            let fields = self.fields(entries, &keys::TASK, &what);
            let get = |k: &str| field(&fields, k);
            let id = get("id").and_then(|n| self.string(n, &format!("{what}: id")));
            let name = get("name").and_then(|n| self.string(n, &format!("{what}: name")));
            let Some(key) = id
                .clone()
                .or_else(|| name.clone())
                .filter(|k| !k.trim().is_empty())
            else {
                self.diags
                    .error(item.pos, format!("{what} needs an 'id' or a 'name'"));
                continue;
            };
            if let Some(first) = tasks.iter().position(|t| t.key == key) {
                self.diags.error(
                    item.pos,
                    format!(
                        "task '{key}' is declared twice (first as task {})",
                        first + 1
                    ),
                );
                continue;
            }
            let description = get("description")
                .and_then(|n| self.string(n, &format!("{what}: description")))
                .unwrap_or_default();
            let mut deps = Vec::new();
            if let Some(n) = get("depends_on") {
                match &n.value {
                    Value::Seq(list) => {
                        for d in list {
                            if let Some(s) = self.string(d, &format!("{what}: depends_on")) {
                                deps.push((s, d.pos));
                            }
                        }
                    }
                    Value::Str(s) => deps.push((s.clone(), n.pos)),
                    Value::Null => {}
                    other => self.diags.error(
                        n.pos,
                        format!(
                            "{what}: depends_on must be a list of task ids, found {}",
                            other.kind()
                        ),
                    ),
                }
            }
            let assignee = get("assignee").and_then(|n| {
                let a = self.string(n, &format!("{what}: assignee"))?;
                if !agents.iter().any(|x| x.name == a) {
                    let hint = did_you_mean(&a, agents.iter().map(|x| x.name.as_str()))
                        .map(|s| format!(" (did you mean '{s}'?)"))
                        .unwrap_or_default();
                    self.diags.error(
                        n.pos,
                        format!("{what}: assignee '{a}' is not an agent of this workflow{hint}"),
                    );
                }
                Some(a)
            });
            let role = get("role").and_then(|n| self.string(n, &format!("{what}: role")));
            tasks.push(FileTask {
                name: name.unwrap_or_else(|| key.clone()),
                key,
                description,
                depends_on: deps.iter().map(|(d, _)| d.clone()).collect(),
                assignee,
                role,
            });
            deps_at.push(deps);
            positions.push(item.pos);
        }
        // Dependencies: known, not itself, no cycle.
        let mut graph: Vec<Vec<usize>> = vec![Vec::new(); tasks.len()];
        for (i, deps) in deps_at.iter().enumerate() {
            for (d, pos) in deps {
                match tasks.iter().position(|t| &t.key == d || &t.name == d) {
                    Some(j) if j == i => self.diags.error(
                        *pos,
                        format!("task '{}' cannot depend on itself", tasks[i].key),
                    ),
                    Some(j) => graph[i].push(j),
                    None => {
                        let hint = did_you_mean(d, tasks.iter().map(|t| t.key.as_str()))
                            .map(|s| format!(" (did you mean '{s}'?)"))
                            .unwrap_or_default();
                        self.diags.error(
                            *pos,
                            format!(
                                "task '{}' depends on '{d}', which is not a task of this workflow{hint}",
                                tasks[i].key
                            ),
                        );
                    }
                }
            }
        }
        if let Some(cycle) = crate::tasks::find_cycle(&graph) {
            let names: Vec<&str> = cycle.iter().map(|i| tasks[*i].key.as_str()).collect();
            self.diags.error(
                positions[cycle[0]],
                format!(
                    "the tasks' dependencies form a cycle: {}",
                    names.join(" → ")
                ),
            );
        }
        tasks
    }

    /// Checks the keys of a mapping: unknown ones (with a suggestion) and
    /// duplicates are errors. Returns the known entries.
    fn fields<'n>(
        &mut self,
        entries: &'n [(Key, Node)],
        allowed: &KeySet,
        what: &str,
    ) -> Vec<(&'n Key, &'n Node)> {
        let mut seen: Vec<&Key> = Vec::new();
        let mut out = Vec::new();
        for (key, node) in entries {
            if let Some(first) = seen.iter().find(|k| k.name == key.name) {
                self.diags.error(
                    key.pos,
                    format!(
                        "'{}' is given twice in {what} (first at line {})",
                        key.name, first.pos.line
                    ),
                );
                continue;
            }
            seen.push(key);
            if allowed.contains(&key.name) {
                out.push((key, node));
            } else {
                let hint = did_you_mean(&key.name, allowed.names())
                    .map(|s| format!(" (did you mean '{s}'?)"))
                    .unwrap_or_else(|| format!(" (expected one of: {})", allowed.joined()));
                self.diags.error(
                    key.pos,
                    format!("unknown key '{}' in {what}{hint}", key.name),
                );
            }
        }
        out
    }

    fn mapping<'n>(&mut self, node: &'n Node, what: &str) -> Option<&'n [(Key, Node)]> {
        match &node.value {
            Value::Map(entries) => Some(entries),
            other => {
                self.diags.error(
                    node.pos,
                    format!("{what} must be a mapping, found {}", other.kind()),
                );
                None
            }
        }
    }

    fn string(&mut self, node: &Node, what: &str) -> Option<String> {
        match &node.value {
            Value::Str(s) => Some(s.clone()),
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(f.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            other => {
                self.diags.error(
                    node.pos,
                    format!("{what} must be a string, found {}", other.kind()),
                );
                None
            }
        }
    }

    fn string_list(&mut self, node: &Node, what: &str) -> Vec<String> {
        match &node.value {
            Value::Seq(items) => items
                .iter()
                .filter_map(|item| self.string(item, &format!("each entry of {what}")))
                .collect(),
            Value::Null => Vec::new(),
            other => {
                self.diags.error(
                    node.pos,
                    format!("{what} must be a list, found {}", other.kind()),
                );
                Vec::new()
            }
        }
    }

    /// A whole number of at least `min`.
    fn count(&mut self, node: &Node, what: &str, min: i64) -> Option<u32> {
        match node.value {
            Value::Int(i) if i >= min && i <= u32::MAX as i64 => Some(i as u32),
            _ => {
                self.diags.error(
                    node.pos,
                    format!("{what} must be a whole number of at least {min}"),
                );
                None
            }
        }
    }

    /// A duration like `30s`, `10m` or a number of seconds, more than zero.
    fn duration(&mut self, node: &Node, what: &str) -> Option<std::time::Duration> {
        let text = self.string(node, what)?;
        match parse_duration(&text) {
            Ok(d) if !d.is_zero() => Some(d),
            Ok(_) => {
                self.diags
                    .error(node.pos, format!("{what} must be more than zero"));
                None
            }
            Err(e) => {
                self.diags.error(node.pos, format!("{what}: {e}"));
                None
            }
        }
    }

    fn limits(&mut self, node: &Node) -> Limits {
        let mut limits = Limits::default();
        let Some(entries) = self.mapping(node, "limits") else {
            return limits;
        };
        for (key, value) in self.fields(entries, &keys::LIMITS, "limits") {
            let what = format!("limits.{}", key.name);
            match key.name.as_str() {
                "max_turns" => limits.max_turns = self.count(value, &what, 1),
                "agent_max_turns" => limits.agent_max_turns = self.count(value, &what, 1),
                "retries" => limits.retries = self.count(value, &what, 0),
                "loop_repeats" => limits.loop_repeats = self.count(value, &what, 0),
                "release_after_missed_heartbeats" => {
                    limits.release_after_missed_heartbeats = self.count(value, &what, 1)
                }
                "wall_clock" => limits.wall_clock = self.duration(value, &what),
                "retry_backoff" => limits.retry_backoff = self.duration(value, &what),
                "stall_after" => limits.stall_after = self.duration(value, &what),
                "approval_timeout" => limits.approval_timeout = self.duration(value, &what),
                "tool_timeout" => limits.tool_timeout = self.duration(value, &what),
                _ => {
                    limits.cost_usd = match value.value {
                        Value::Int(i) if i > 0 => Some(i as f64),
                        Value::Float(f) if f > 0.0 => Some(f),
                        _ => {
                            self.diags.error(
                                value.pos,
                                format!("{what} must be a positive amount of US dollars"),
                            );
                            None
                        }
                    }
                }
            }
        }
        limits
    }

    fn context(&mut self, node: Option<&Node>) -> ContextConfig {
        let defaults = |pos: Pos| ContextFiles {
            dir: Located {
                value: DEFAULT_CONTEXT_DIR.into(),
                pos,
            },
            channel: DEFAULT_CHANNEL.into(),
            document: DEFAULT_DOCUMENT.into(),
            documents: Vec::new(),
        };
        let Some(node) = node else {
            return ContextConfig::File(defaults(Pos::default()));
        };
        let entries = match &node.value {
            Value::Null | Value::Bool(true) => return ContextConfig::File(defaults(node.pos)),
            Value::Bool(false) => return ContextConfig::Disabled,
            Value::Map(entries) => entries,
            other => {
                self.diags.error(
                    node.pos,
                    format!(
                        "context must be false, empty, or a mapping with 'provider', found {}",
                        other.kind()
                    ),
                );
                return ContextConfig::Disabled;
            }
        };
        let fields = self.fields(entries, &keys::CONTEXT, "context");
        let get = |k: &str| field(&fields, k);
        let provider = match get("provider") {
            Some(p) => self.string(p, "context.provider").map(|s| (s, p.pos)),
            None => Some(("file".to_string(), node.pos)),
        };
        let mut files = defaults(node.pos);
        let mut file_keys: Vec<&Key> = Vec::new();
        if let Some(config) = get("config")
            && let Some(entries) = self.mapping(config, "context.config")
        {
            for (key, value) in self.fields(entries, &keys::CONTEXT_CONFIG, "context.config") {
                match key.name.as_str() {
                    "dir" => {
                        file_keys.push(key);
                        if let Some(dir) = self.string(value, "context.config.dir") {
                            files.dir = Located {
                                value: dir,
                                pos: value.pos,
                            };
                        }
                    }
                    "channel" => {
                        file_keys.push(key);
                        if let Some(c) = self.file_name(value, "context.config.channel", &[]) {
                            files.channel = c;
                        }
                    }
                    "document" => {
                        if let Some(d) = self.file_name(value, "context.config.document", &[]) {
                            files.document = d;
                        }
                    }
                    _ => files.documents = self.document_list(value),
                }
            }
        }
        self.check_document_clash(&files, node.pos);
        match provider {
            Some((p, _)) if p == "file" => ContextConfig::File(files),
            Some((p, _)) if p == "memory" => {
                for key in file_keys {
                    self.diags.error(
                        key.pos,
                        format!("the memory provider keeps no files; remove '{}'", key.name),
                    );
                }
                ContextConfig::Memory(files)
            }
            Some((p, pos)) => {
                let hint = did_you_mean(&p, ["file", "memory"])
                    .map(|s| format!(" (did you mean '{s}'?)"))
                    .unwrap_or_default();
                self.diags.error(
                    pos,
                    format!("unknown context provider '{p}'{hint}; use 'file' or 'memory'"),
                );
                ContextConfig::Disabled
            }
            None => ContextConfig::Disabled,
        }
    }

    fn file_name(&mut self, node: &Node, what: &str, own: &[&str]) -> Option<String> {
        let name = self.string(node, what)?;
        match paths::validate(&name, own) {
            Ok(n) => Some(n),
            Err(e) => {
                self.diags.error(node.pos, format!("{what}: {e}"));
                None
            }
        }
    }

    fn document_list(&mut self, node: &Node) -> Vec<String> {
        let Value::Seq(items) = &node.value else {
            self.string_list(node, "context.config.documents");
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|item| self.file_name(item, "context.config.documents", &[]))
            .collect()
    }

    fn check_document_clash(&mut self, files: &ContextFiles, pos: Pos) {
        let docs = std::iter::once(&files.document).chain(&files.documents);
        for doc in docs {
            if doc == &files.channel {
                self.diags.error(
                    pos,
                    format!("document '{doc}' is also the channel file; give them different names"),
                );
            }
        }
    }

    fn setup(&mut self, node: &Node) -> Vec<SetupTask> {
        let items = match &node.value {
            Value::Seq(items) => items,
            Value::Null => return Vec::new(),
            other => {
                self.diags.error(
                    node.pos,
                    format!(
                        "setup must be a list of {{shell, as}} steps, found {}",
                        other.kind()
                    ),
                );
                return Vec::new();
            }
        };
        let mut tasks = Vec::new();
        let mut names: BTreeSet<String> = BTreeSet::new();
        for (i, item) in items.iter().enumerate() {
            let what = format!("setup step {}", i + 1);
            let Some(entries) = self.mapping(item, &what) else {
                continue;
            };
            let fields = self.fields(entries, &keys::SETUP, &what);
            let get = |k: &str| field(&fields, k);
            let Some(shell_node) = get("shell") else {
                self.diags
                    .error(item.pos, format!("{what} has no 'shell' command"));
                continue;
            };
            let Some(shell) = self.string(shell_node, &format!("{what}: shell")) else {
                continue;
            };
            let output = get("as").and_then(|n| {
                let name = self.string(n, &format!("{what}: as"))?;
                let ok = name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                    && name
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
                if !ok {
                    self.diags.error(
                        n.pos,
                        format!("'{name}' is not a variable name (letters, digits, _ and -)"),
                    );
                    return None;
                }
                if RESERVED_VARS.contains(&name.as_str())
                    || name == "env"
                    || name == "workflow"
                    || name == "context"
                {
                    self.diags
                        .error(n.pos, format!("'{name}' is a reserved variable name"));
                    return None;
                }
                if !names.insert(name.clone()) {
                    self.diags.warn(
                        n.pos,
                        format!(
                            "'{name}' is set by an earlier setup step too; the later value wins"
                        ),
                    );
                }
                Some(name)
            });
            tasks.push(SetupTask {
                shell: Located {
                    value: shell,
                    pos: shell_node.pos,
                },
                output,
            });
        }
        tasks
    }

    /// `workspace:`: `shared`, `worktree`, or `{mode: worktree, base: <ref>}`
    /// (a mapping's mode defaults to `worktree`).
    fn workspace(&mut self, node: &Node, what: &str) -> Option<Workspace> {
        let mode_of = |w: &mut Self, n: &Node| -> Option<bool> {
            match w.string(n, &format!("{what}: mode"))?.as_str() {
                "shared" => Some(false),
                "worktree" => Some(true),
                other => {
                    w.diags.error(
                        n.pos,
                        format!("{what}: unknown mode '{other}' (expected shared or worktree)"),
                    );
                    None
                }
            }
        };
        let (worktree, base) = match &node.value {
            Value::Map(entries) => {
                let fields = self.fields(entries, &keys::WORKSPACE, what);
                let get = |k: &str| {
                    fields
                        .iter()
                        .find(|(key, _)| key.name == k)
                        .map(|(_, n)| *n)
                };
                let worktree = match get("mode") {
                    Some(n) => mode_of(self, n)?,
                    None => true,
                };
                let base = match get("base") {
                    Some(n) => Some((self.string(n, &format!("{what}: base"))?, n.pos)),
                    None => None,
                };
                (worktree, base)
            }
            _ => (mode_of(self, node)?, None),
        };
        match (worktree, base) {
            (false, Some((_, pos))) => {
                self.diags.error(
                    pos,
                    format!("{what}: 'base' is only used with mode: worktree"),
                );
                None
            }
            (false, None) => Some(Workspace::Shared),
            (true, Some((base, pos))) if base.trim().is_empty() || base.starts_with('-') => {
                self.diags.error(
                    pos,
                    format!("{what}: base '{base}' is not a branch or commit name"),
                );
                None
            }
            (true, base) => Some(Workspace::Worktree {
                base: base.map(|(b, _)| b),
            }),
        }
    }

    fn agents(&mut self, node: &Node, scope: &Scope, workspace: &Workspace) -> Vec<AgentDef> {
        let entries = match &node.value {
            Value::Map(entries) if !entries.is_empty() => entries,
            Value::Map(_) | Value::Null => {
                self.diags.error(
                    node.pos,
                    "'agents' is empty: a workflow needs at least one agent",
                );
                return Vec::new();
            }
            other => {
                self.diags.error(
                    node.pos,
                    format!(
                        "'agents' must be a mapping of agent names, found {}",
                        other.kind()
                    ),
                );
                return Vec::new();
            }
        };
        let mut agents = Vec::new();
        let mut seen: Vec<&Key> = Vec::new();
        for (key, def) in entries {
            if let Some(first) = seen.iter().find(|k| k.name == key.name) {
                self.diags.error(
                    key.pos,
                    format!(
                        "agent '{}' is defined twice (first at line {})",
                        key.name, first.pos.line
                    ),
                );
                continue;
            }
            seen.push(key);
            if !mentions::is_valid_name(&key.name) {
                self.diags.error(
                    key.pos,
                    format!(
                        "'{}' is not a valid agent name: it must match [a-zA-Z][a-zA-Z0-9_-]* so it can be @mentioned",
                        key.name
                    ),
                );
                continue;
            }
            if mentions::RESERVED_NAMES.contains(&key.name.as_str()) {
                self.diags.error(
                    key.pos,
                    format!(
                        "'{}' is reserved (system, user, all); choose another agent name",
                        key.name
                    ),
                );
                continue;
            }
            if let Some(agent) = self.agent(key, def, scope, workspace) {
                agents.push(agent);
            }
        }
        agents
    }

    /// `spawn:`: worker templates (`<template>: {max, from, …agent keys}`),
    /// each made into `max` stopped slots `<template>-1 … -<max>` that an
    /// agent's SPAWN_REQUEST starts.
    fn spawn(
        &mut self,
        node: &Node,
        scope: &Scope,
        workspace: &Workspace,
        agents: &[AgentDef],
    ) -> Vec<AgentDef> {
        let Some(entries) = self.mapping(node, "spawn") else {
            return Vec::new();
        };
        let mut slots: Vec<AgentDef> = Vec::new();
        for (key, def) in entries {
            let what = format!("spawn template '{}'", key.name);
            if !mentions::is_valid_name(&key.name) {
                self.diags.error(
                    key.pos,
                    format!(
                        "'{}' is not a valid template name: it must match [a-zA-Z][a-zA-Z0-9_-]*",
                        key.name
                    ),
                );
                continue;
            }
            let Some(fields) = self.mapping(def, &what) else {
                continue;
            };
            let get = |k: &str| fields.iter().find(|(f, _)| f.name == k).map(|(_, n)| n);
            let max = match get("max") {
                Some(n) => match self.count(n, &format!("{what}: max"), 1) {
                    Some(m) if m > MAX_SPAWN_SLOTS => {
                        self.diags.error(
                            n.pos,
                            format!("{what}: max is at most {MAX_SPAWN_SLOTS} workers"),
                        );
                        continue;
                    }
                    Some(m) => m,
                    None => continue,
                },
                None => 1,
            };
            let from = get("from")
                .map(|n| {
                    let names = self.string_list(n, &format!("{what}: from"));
                    for name in &names {
                        if !agents.iter().any(|a| &a.name == name) {
                            self.diags.error(
                                n.pos,
                                format!("{what}: from names '{name}', which is not an agent of the workflow"),
                            );
                        }
                    }
                    names
                })
                .unwrap_or_default();
            // The rest is an agent definition.
            let agent_fields: Vec<(Key, Node)> = fields
                .iter()
                .filter(|(f, _)| f.name != "max" && f.name != "from")
                .cloned()
                .collect();
            let template = Node {
                pos: def.pos,
                value: Value::Map(agent_fields),
            };
            let Some(def) = self.agent(key, &template, scope, workspace) else {
                continue;
            };
            for n in 1..=max {
                let name = format!("{}-{n}", key.name);
                if agents.iter().chain(&slots).any(|a| a.name == name) {
                    self.diags.error(
                        key.pos,
                        format!("{what}: its worker '{name}' has the name of another agent"),
                    );
                    continue;
                }
                slots.push(AgentDef {
                    name,
                    spawn: Some(SpawnSlot {
                        template: key.name.clone(),
                        from: from.clone(),
                    }),
                    ..def.clone()
                });
            }
        }
        slots
    }

    fn agent(
        &mut self,
        key: &Key,
        node: &Node,
        scope: &Scope,
        default_workspace: &Workspace,
    ) -> Option<AgentDef> {
        let name = &key.name;
        let what = format!("agent '{name}'");
        let entries: &[(Key, Node)] = match &node.value {
            Value::Map(e) => e,
            Value::Null => &[],
            other => {
                self.diags.error(
                    node.pos,
                    format!("{what} must be a mapping, found {}", other.kind()),
                );
                return None;
            }
        };
        let fields = self.fields(entries, &keys::AGENT, &what);
        let get = |k: &str| field(&fields, k);

        let model = get("model").and_then(|n| self.string(n, &format!("{what}: model")));
        let command = get("command").and_then(|n| self.command(n, &what));
        // `modle: x` is already reported as a typo; "needs a model" would be noise.
        let model_misspelt = entries.iter().any(|(k, _)| {
            !keys::AGENT.contains(&k.name) && did_you_mean(&k.name, ["model"]).is_some()
        });
        let backend = if model.is_none() && model_misspelt && get("backend").is_none() {
            None
        } else {
            self.backend(key, get("backend"), model.as_deref(), command.is_some())
        };
        let protocol = get("protocol").and_then(|n| {
            let kind = backend.as_ref().map(|(k, _)| *k);
            self.protocol(n, &what, kind)
        });
        // Headless for certain: written so, or on another host.
        let headless = protocol == Some(AgentProtocol::Headless) || get("host").is_some();
        if let Some((kind, _)) = backend {
            self.check_backend_fields(
                key,
                kind,
                model.as_deref(),
                get("command"),
                command.is_some(),
                headless,
            );
        }
        let prompt = match get("system_prompt") {
            Some(n) => self.system_prompt(n, &what),
            None => Some((
                Located {
                    value: String::new(),
                    pos: key.pos,
                },
                PromptSource::None,
            )),
        };
        if let Some((text, _)) = &prompt {
            self.check_template(text, &format!("{what}: system_prompt"), scope);
        }

        let tools = get("tools")
            .map(|n| self.string_list(n, &format!("{what}: tools")))
            .unwrap_or_default();
        let max_turns =
            get("max_turns").and_then(|n| self.count(n, &format!("{what}: max_turns"), 1));
        let timeout = get("timeout").and_then(|n| self.duration(n, &format!("{what}: timeout")));
        let base_url = get("base_url").and_then(|n| self.string(n, &format!("{what}: base_url")));
        let api_key_env =
            get("api_key_env").and_then(|n| self.string(n, &format!("{what}: api_key_env")));
        if let Some((kind, _)) = &backend
            && !backend_for(*kind).in_process()
        {
            for key in ["base_url", "api_key_env"] {
                if let Some(n) = get(key) {
                    self.diags.error(
                        n.pos,
                        format!("{what}: '{key}' is only used by the anthropic and openai backends (this agent uses {})", kind.name()),
                    );
                }
            }
        }
        let env = get("env")
            .map(|n| self.env(n, &what, scope))
            .unwrap_or_default();
        let workspace = match get("workspace") {
            Some(n) => self.workspace(n, &format!("{what}: workspace"))?,
            None => default_workspace.clone(),
        };
        if let (Some((kind, _)), Workspace::Worktree { .. }) = (&backend, &workspace)
            && let Some(file) = backend_for(*kind).workdir_config()
            && (headless || backend_for(*kind).acp_program().is_none())
        {
            self.diags.error(
                get("workspace").map_or(key.pos, |n| n.pos),
                format!("{what}: workspace: worktree is not available for the {} backend run headless (it reads its MCP servers only from the project's {file}, which would land in the agent's commits); over ACP it is", kind.name()),
            );
        }
        let approve = get("approve")
            .map(|n| self.approve(n, &what))
            .unwrap_or_default();
        let permissions = match get("permissions") {
            Some(n) => {
                let found = self.permissions(n, &what);
                if let (Some(p), Some(a)) = (found, get("approve"))
                    && p != Permissions::Ask
                {
                    self.diags.error(
                        a.pos,
                        format!(
                            "{what}: approve: rules answer the CLI's questions, so they need permissions: ask (this agent has permissions: {})",
                            p.name()
                        ),
                    );
                }
                found.unwrap_or_default()
            }
            // `approve:` alone means the agent asks.
            None if get("approve").is_some() => Permissions::Ask,
            None => Permissions::default(),
        };
        if permissions == Permissions::Ask
            && let Some((kind, _)) = &backend
            && *kind != BackendKind::Claude
            && (backend_for(*kind).acp_program().is_none()
                || protocol == Some(AgentProtocol::Headless))
        {
            self.diags.error(
                get("permissions")
                    .or(get("approve"))
                    .map_or(key.pos, |n| n.pos),
                format!(
                    "{what}: permissions: ask needs a CLI that lets awtui answer its permission prompts: an ACP agent (backend: acp, or gemini, opencode, cursor, codex and claude over ACP) or Claude Code headless (--permission-prompt-tool); {} {} has no such hook: use read-only, workspace-write or full",
                    kind.name(),
                    if protocol == Some(AgentProtocol::Headless) {
                        "with protocol: headless"
                    } else {
                        "(headless only)"
                    }
                ),
            );
        }
        let protocols = match get("protocols") {
            Some(n) => {
                let names = self.string_list(n, &format!("{what}: protocols"));
                for name in &names {
                    if !Protocols::NAMES.contains(&name.as_str()) {
                        let hint = did_you_mean(name, Protocols::NAMES)
                            .map(|s| format!(" (did you mean '{s}'?)"))
                            .unwrap_or_default();
                        self.diags.error(
                            n.pos,
                            format!(
                                "{what}: unknown protocol '{name}'{hint}; protocols: lists some of {}",
                                Protocols::NAMES.join(", ")
                            ),
                        );
                    }
                }
                Protocols::only(&names)
            }
            None => Protocols::default(),
        };
        let args = match get("args") {
            Some(n) => {
                let args = self.string_list(n, &format!("{what}: args"));
                if let Some((kind, _)) = &backend {
                    self.check_args(n.pos, *kind, &args, &what);
                }
                args
            }
            None => Vec::new(),
        };
        let mcp = get("mcp")
            .map(|n| self.mcp_servers(n, &what))
            .unwrap_or_default();
        if let Some(n) = get("mcp").filter(|_| !scope.context_enabled) {
            self.diags.error(
                n.pos,
                format!("{what}: 'mcp' servers are handed to the CLI next to awtui's, and with context: false there is no MCP config at all; remove context: false or configure the servers in the CLI itself"),
            );
        }
        let keep_user_mcp = match get("keep_user_mcp") {
            Some(n) => match n.value {
                Value::Bool(b) => b,
                ref other => {
                    self.diags.error(
                        n.pos,
                        format!(
                            "{what}: keep_user_mcp must be true or false, found {}",
                            other.kind()
                        ),
                    );
                    false
                }
            },
            None => false,
        };
        if let Some((kind, _)) = &backend
            && !backend_for(*kind).supports_extra_mcp()
        {
            for key in ["mcp", "keep_user_mcp"] {
                if let Some(n) = get(key) {
                    self.diags.error(
                        n.pos,
                        format!(
                            "{what}: '{key}' is not supported by the {} backend: it runs the model in-process and gives it only awtui's tools; use a CLI backend (claude, codex, gemini, opencode) for extra MCP servers",
                            kind.name()
                        ),
                    );
                }
            }
        }
        let ((backend, backend_choice), (system_prompt, prompt_source)) = (backend?, prompt?);
        // `tools:` a backend cannot apply would be silently ignored: say so
        // where they are written.
        if !tools.is_empty()
            && let Some(why) = backend_for(backend).tools_unsupported()
            && let Some(n) = get("tools")
        {
            self.diags.warn(
                n.pos,
                format!(
                    "{what}: tools: [{}] is not applied by the {} backend: {why}",
                    tools.join(", "),
                    backend.name()
                ),
            );
        }
        let sandbox = get("sandbox").and_then(|n| self.sandbox(n, &what));
        let host = get("host")
            .map(|n| self.host_choice(n, &what))
            .unwrap_or_default();
        Some(AgentDef {
            sandbox,
            host,
            spawn: None,
            name: name.clone(),
            pos: key.pos,
            model,
            backend,
            backend_choice,
            system_prompt,
            prompt_source,
            tools,
            command,
            max_turns,
            timeout,
            env,
            base_url,
            api_key_env,
            workspace,
            permissions,
            approve,
            args,
            protocols,
            mcp,
            keep_user_mcp,
            protocol,
        })
    }

    /// Reads `protocol:`: `acp` only for backends that speak it (natively
    /// or through an adapter), `headless` only for CLIs that also run
    /// headless.
    fn protocol(
        &mut self,
        node: &Node,
        what: &str,
        backend: Option<BackendKind>,
    ) -> Option<AgentProtocol> {
        let name = self.string(node, &format!("{what}: protocol"))?;
        let Some(found) = AgentProtocol::from_name(&name) else {
            let names = AgentProtocol::ALL.map(|(_, n)| n);
            let hint = did_you_mean(&name, names)
                .map(|s| format!(" (did you mean '{s}'?)"))
                .unwrap_or_default();
            self.diags.error(
                node.pos,
                format!(
                    "{what}: unknown protocol '{name}'{hint}; one of: {}",
                    names.join(", ")
                ),
            );
            return None;
        };
        let kind = backend?;
        let vendor = backend_for(kind);
        let refused = match found {
            AgentProtocol::Acp if vendor.acp_program().is_none() => Some(format!(
                "the {} backend does not speak ACP (gemini, opencode, cursor, codex, claude and acp do)",
                kind.name()
            )),
            AgentProtocol::Headless if kind == BackendKind::Acp => Some(
                "backend: acp is ACP only; use the vendor's backend to run its CLI headless".into(),
            ),
            AgentProtocol::Headless if vendor.in_process() || kind == BackendKind::Command => Some(
                format!("the {} backend has no protocol to choose", kind.name()),
            ),
            _ => None,
        };
        if let Some(why) = refused {
            self.diags
                .error(node.pos, format!("{what}: protocol: {name}: {why}"));
            return None;
        }
        Some(found)
    }

    fn check_backend_fields(
        &mut self,
        key: &Key,
        backend: BackendKind,
        model: Option<&str>,
        command_node: Option<&Node>,
        has_command: bool,
        headless: bool,
    ) {
        let what = format!("agent '{}'", key.name);
        if has_command && !matches!(backend, BackendKind::Command | BackendKind::Acp) {
            self.diags.error(
                command_node.map_or(key.pos, |n| n.pos),
                format!(
                    "{what}: 'command' is only used with backend: command or backend: acp (this agent uses {})",
                    backend.name()
                ),
            );
        }
        if backend == BackendKind::Command && !has_command && command_node.is_none() {
            self.diags.error(
                key.pos,
                format!("{what}: backend 'command' needs 'command: <program and arguments>'"),
            );
        }
        if backend == BackendKind::Acp && !has_command && command_node.is_none() {
            self.diags.error(
                key.pos,
                format!(
                    "{what}: backend 'acp' needs the ACP agent to run: 'command: [gemini, --acp]', 'command: [opencode, acp]', 'command: [claude-agent-acp]' or any other"
                ),
            );
        }
        let vendor = backend_for(backend);
        // Over ACP the prompt is a message, of any size.
        let over_acp = vendor.acp_program().is_some() && !headless;
        if vendor.prompt_transport() == PromptTransport::Argument && !over_acp {
            self.diags.warn(
                key.pos,
                format!(
                    "{what}: {} takes its prompt as a command-line argument, so a turn whose prompt \
                     (kickoff, messages, context) is over 128 KiB fails; every other backend reads it from stdin",
                    vendor.program(None).unwrap_or_default()
                ),
            );
        }
        if vendor.needs_model() && model.is_none() {
            self.diags.error(
                key.pos,
                format!("{what}: backend '{}' needs a 'model'", backend.name()),
            );
        }
    }

    /// Refuses extra arguments awtui must control for this CLI, naming them.
    fn check_args(&mut self, pos: Pos, kind: BackendKind, args: &[String], what: &str) {
        let vendor = backend_for(kind);
        if matches!(kind, BackendKind::Command | BackendKind::Acp) || vendor.in_process() {
            let instead = if matches!(kind, BackendKind::Command | BackendKind::Acp) {
                "put the arguments in 'command:'"
            } else {
                "it runs in-process, not as a program"
            };
            self.diags.error(
                pos,
                format!(
                    "{what}: 'args' is for agent CLIs, not the {} backend ({instead})",
                    kind.name()
                ),
            );
            return;
        }
        let reserved = vendor.reserved_flags();
        let clashes: Vec<&str> = args
            .iter()
            .map(|a| a.split('=').next().unwrap_or(a))
            .filter(|flag| reserved.contains(flag))
            .collect();
        if !clashes.is_empty() {
            self.diags.error(
                pos,
                format!(
                    "{what}: args: {} {} set by awtui for {} (it needs them to drive the CLI); use the agent's model:, permissions:, tools: or system_prompt: instead",
                    clashes.iter().map(|c| format!("'{c}'")).collect::<Vec<_>>().join(", "),
                    if clashes.len() == 1 { "is" } else { "are" },
                    kind.name()
                ),
            );
        }
    }

    /// `approve:` — a mapping of `allow`, `deny` and `ask` to a rule or a
    /// list of rules (`Bash(git status*)`, `Write`), each checked here.
    fn approve(&mut self, node: &Node, what: &str) -> crate::approvals::RuleSet {
        use crate::approvals::{Rule, Verdict};
        let mut set = crate::approvals::RuleSet::default();
        let what = format!("{what}: approve");
        let Some(entries) = self.mapping(node, &what) else {
            return set;
        };
        let names = KeySet::new(Verdict::ALL.map(|(_, n)| n));
        for (key, value) in self.fields(entries, &names, &what) {
            let verdict = Verdict::from_name(&key.name).unwrap_or(Verdict::Ask);
            let inner = format!("{what}.{}", key.name);
            let items: Vec<&Node> = match &value.value {
                Value::Seq(items) => items.iter().collect(),
                _ => vec![value],
            };
            for item in items {
                let Some(text) = self.string(item, &inner) else {
                    continue;
                };
                match Rule::parse(&text) {
                    Ok(rule) => set.of_mut(verdict).push(rule),
                    Err(e) => self.diags.error(item.pos, format!("{inner}: {e}")),
                }
            }
        }
        set
    }

    /// `permissions: read-only | workspace-write | full | ask`.
    fn permissions(&mut self, node: &Node, what: &str) -> Option<Permissions> {
        let name = self.string(node, &format!("{what}: permissions"))?;
        let found = Permissions::from_name(&name);
        if found.is_none() {
            let names = Permissions::ALL.map(|(_, n)| n);
            let hint = did_you_mean(&name, names)
                .map(|s| format!(" (did you mean '{s}'?)"))
                .unwrap_or_default();
            self.diags.error(
                node.pos,
                format!(
                    "{what}: unknown permissions '{name}'{hint}; one of: {}",
                    names.join(", ")
                ),
            );
        }
        found
    }

    fn backend(
        &mut self,
        key: &Key,
        node: Option<&Node>,
        model: Option<&str>,
        has_command: bool,
    ) -> Option<(BackendKind, BackendChoice)> {
        let what = format!("agent '{}'", key.name);
        if let Some(node) = node {
            let name = self.string(node, &format!("{what}: backend"))?;
            return match BackendKind::from_name(&name) {
                Some(kind) => Some((kind, BackendChoice::Explicit)),
                None => {
                    let names = BackendKind::ALL.map(|(_, n)| n);
                    let hint = did_you_mean(&name, names)
                        .map(|s| format!(" (did you mean '{s}'?)"))
                        .unwrap_or_default();
                    self.diags.error(
                        node.pos,
                        format!(
                            "{what}: unknown backend '{name}'{hint}; one of: {}",
                            names.join(", ")
                        ),
                    );
                    None
                }
            };
        }
        if has_command {
            return Some((BackendKind::Command, BackendChoice::FromModel));
        }
        let Some(model) = model else {
            self.diags.error(
                key.pos,
                format!(
                    "{what} needs a 'model' (such as anthropic/claude-sonnet-4-5) or a 'backend'"
                ),
            );
            return None;
        };
        match model_provider(model) {
            Some(kind) => Some((kind, BackendChoice::FromModel)),
            None => {
                self.diags.error(
                    key.pos,
                    format!(
                        "{what}: cannot tell which backend runs model '{model}'; prefix it with anthropic/, openai/ or ollama/, or set 'backend:' ({})",
                        BackendKind::ALL.map(|(_, n)| n).join(", ")
                    ),
                );
                None
            }
        }
    }

    fn command(&mut self, node: &Node, what: &str) -> Option<Vec<String>> {
        let argv = match &node.value {
            Value::Str(s) => match shlex::split(s) {
                Some(argv) => argv,
                None => {
                    self.diags.error(
                        node.pos,
                        format!("{what}: command has an unclosed quote: {s}"),
                    );
                    return None;
                }
            },
            Value::Seq(_) => self.string_list(node, &format!("{what}: command")),
            other => {
                self.diags.error(
                    node.pos,
                    format!(
                        "{what}: command must be a string or a list, found {}",
                        other.kind()
                    ),
                );
                return None;
            }
        };
        if argv.is_empty() {
            self.diags
                .error(node.pos, format!("{what}: command is empty"));
            return None;
        }
        Some(argv)
    }

    fn system_prompt(
        &mut self,
        node: &Node,
        what: &str,
    ) -> Option<(Located<String>, PromptSource)> {
        let text = self.string(node, &format!("{what}: system_prompt"))?;
        if !looks_like_path(&text) {
            return Some((
                Located {
                    value: text,
                    pos: node.pos,
                },
                PromptSource::Inline,
            ));
        }
        let path = self.base_dir.join(text.trim());
        match fsutil::read_text_capped(&path, fsutil::MAX_PROMPT_BYTES) {
            Ok(content) => Some((
                Located {
                    value: content,
                    pos: node.pos,
                },
                PromptSource::File(path),
            )),
            Err(e) => {
                let reason = if e.is_not_found() {
                    "does not exist".to_string()
                } else {
                    format!("cannot be read: {}", e.reason())
                };
                self.diags.error(
                    node.pos,
                    format!(
                        "{what}: system_prompt file '{}' {reason} (looked at {})",
                        text.trim(),
                        path.display()
                    ),
                );
                None
            }
        }
    }

    /// `mcp: { name: {command, args, env} | {url, headers} }`: extra MCP
    /// servers, each error at its own line and column.
    fn mcp_servers(&mut self, node: &Node, what: &str) -> Vec<McpServer> {
        let Some(entries) = self.mapping(node, &format!("{what}: mcp")) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (key, value) in entries {
            let here = format!("{what}: mcp.{}", key.name);
            let valid = !key.name.is_empty()
                && key
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !valid {
                self.diags.error(
                    key.pos,
                    format!("{here}: a server name may only hold letters, digits, '_' and '-'"),
                );
                continue;
            }
            if key.name == crate::agents::backend::invocation::MCP_SERVER_NAME {
                self.diags.error(
                    key.pos,
                    format!("{here}: the name 'awtui' is awtui's own server; choose another"),
                );
                continue;
            }
            let Some(fields) = self.mapping(value, &here) else {
                continue;
            };
            let field = |name: &str| fields.iter().find(|(k, _)| k.name == name).map(|(_, n)| n);
            let (command, url) = (field("command"), field("url"));
            let allowed: &KeySet = match (command, url) {
                (Some(_), None) => &keys::MCP_STDIO,
                (None, Some(_)) => &keys::MCP_HTTP,
                (Some(_), Some(_)) => {
                    self.diags.error(
                        value.pos,
                        format!("{here}: give either 'command' (a stdio server) or 'url' (an HTTP server), not both"),
                    );
                    continue;
                }
                (None, None) => {
                    self.diags.error(
                        value.pos,
                        format!("{here}: needs 'command' (a stdio server: command, args, env) or 'url' (an HTTP server: url, headers)"),
                    );
                    continue;
                }
            };
            let mut ok = true;
            for (k, _) in fields {
                if !allowed.contains(&k.name) {
                    ok = false;
                    self.diags.error(
                        k.pos,
                        format!(
                            "{here}: unknown key '{}'; this server takes {}",
                            k.name,
                            allowed.joined()
                        ),
                    );
                }
            }
            let transport = if let Some(c) = command {
                let command = self.plain_string(c, &format!("{here}.command"));
                let args = field("args")
                    .map(|n| self.string_list(n, &format!("{here}.args")))
                    .unwrap_or_default();
                let env = field("env")
                    .map(|n| self.string_map(n, &format!("{here}.env"), true))
                    .unwrap_or_default();
                command.map(|command| McpTransport::Stdio { command, args, env })
            } else {
                let url = url.and_then(|n| {
                    let u = self.plain_string(n, &format!("{here}.url"))?;
                    if u.starts_with("http://") || u.starts_with("https://") {
                        Some(u)
                    } else {
                        self.diags.error(
                            n.pos,
                            format!("{here}.url: '{u}' is not an http:// or https:// URL"),
                        );
                        None
                    }
                });
                let headers = field("headers")
                    .map(|n| self.string_map(n, &format!("{here}.headers"), false))
                    .unwrap_or_default();
                url.map(|url| McpTransport::Http { url, headers })
            };
            if let (Some(transport), true) = (transport, ok) {
                out.push(McpServer {
                    name: key.name.clone(),
                    transport,
                });
            }
        }
        out
    }

    /// A non-empty string without `${{ }}` templates (not expanded here).
    fn plain_string(&mut self, node: &Node, what: &str) -> Option<String> {
        let s = self.string(node, what)?;
        if s.trim().is_empty() {
            self.diags.error(node.pos, format!("{what} is empty"));
            return None;
        }
        if s.contains("${{") {
            self.diags.error(
                node.pos,
                format!("{what}: ${{{{ }}}} templates are not expanded in mcp:; put the value in the agent's env: and refer to it the way the CLI does (e.g. ${{VAR}})"),
            );
            return None;
        }
        Some(s)
    }

    /// A mapping of names to strings (`env:` names checked when `vars`).
    fn string_map(&mut self, node: &Node, what: &str, vars: bool) -> Vec<(String, String)> {
        let Some(entries) = self.mapping(node, what) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (key, value) in entries {
            let var_name = is_env_name(&key.name);
            if vars && !var_name {
                self.diags.error(
                    key.pos,
                    format!("{what}: '{}' is not an environment variable name", key.name),
                );
                continue;
            }
            if let Some(v) = self.plain_string(value, &format!("{what}.{}", key.name)) {
                out.push((key.name.clone(), v));
            }
        }
        out
    }

    fn env(&mut self, node: &Node, what: &str, scope: &Scope) -> Vec<(String, Located<String>)> {
        let Some(entries) = self.mapping(node, &format!("{what}: env")) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (key, value) in entries {
            let valid = is_env_name(&key.name);
            if !valid {
                self.diags.error(
                    key.pos,
                    format!("{what}: '{}' is not an environment variable name", key.name),
                );
                continue;
            }
            if let Some(v) = self.string(value, &format!("{what}: env.{}", key.name)) {
                let located = Located {
                    value: v,
                    pos: value.pos,
                };
                self.check_template(&located, &format!("{what}: env.{}", key.name), scope);
                out.push((key.name.clone(), located));
            }
        }
        out
    }

    /// Checks that every `${{ name }}` in a template will resolve.
    fn check_template(&mut self, t: &Located<String>, what: &str, scope: &Scope) {
        let refs = match references(&t.value) {
            Ok(refs) => refs,
            Err(e) => {
                self.diags.error(t.pos, format!("{what}: {e}"));
                return;
            }
        };
        for r in refs {
            let name = r.name.as_str();
            let at = self.diags.locate_template(t.pos, name);
            if let Some(var) = name.strip_prefix("env.") {
                if std::env::var_os(var).is_none() {
                    self.diags.error(
                        at,
                        format!("{what}: ${{{{ {name} }}}} uses environment variable {var}, which is not set"),
                    );
                }
                continue;
            }
            if name.starts_with("context.")
                && !scope.context_enabled
                && RESERVED_VARS.contains(&name)
            {
                self.diags.error(
                    at,
                    format!("{what}: ${{{{ {name} }}}} is not available here (context is disabled, or not yet created)"),
                );
                continue;
            }
            if RESERVED_VARS.contains(&name) || scope.outputs.iter().any(|o| o == name) {
                continue;
            }
            let candidates = RESERVED_VARS
                .iter()
                .copied()
                .chain(scope.outputs.iter().map(String::as_str));
            let hint = did_you_mean(name, candidates)
                .map(|s| format!(" (did you mean '{s}'?)"))
                .unwrap_or_else(|| {
                    " (not a setup output of an earlier step, env.*, workflow.name, workflow.instance, context.channel or context.document)".into()
                });
            self.diags.error(
                at,
                format!("{what}: unknown variable '{name}' in ${{{{ {name} }}}}{hint}"),
            );
        }
    }

    /// An asking agent whose `env:` sets Claude Code's `MCP_TOOL_TIMEOUT`
    /// below the approval timeout: its CLI stops waiting first, and every
    /// request still open then expires.
    fn check_ask_timeouts(&mut self, agents: &[AgentDef], limits: &Limits) {
        let approval = limits
            .approval_timeout
            .unwrap_or(crate::approvals::DEFAULT_TIMEOUT);
        for a in agents.iter().filter(|a| a.permissions == Permissions::Ask) {
            let Some((_, set)) = a.env.iter().find(|(k, _)| k == "MCP_TOOL_TIMEOUT") else {
                continue;
            };
            let Ok(ms) = set.value.trim().parse::<u64>() else {
                self.diags.warn(
                    set.pos,
                    format!(
                        "agent '{}': MCP_TOOL_TIMEOUT is in milliseconds, and {:?} is no number",
                        a.name, set.value
                    ),
                );
                continue;
            };
            if std::time::Duration::from_millis(ms) < approval {
                self.diags.warn(
                    set.pos,
                    format!(
                        "agent '{}': MCP_TOOL_TIMEOUT {ms} ms is shorter than the approval timeout ({}): its CLI stops waiting first, and a request still open then expires; leave it unset (awtui sets it) or raise it",
                        a.name,
                        crate::duration::human(approval)
                    ),
                );
            }
        }
    }

    fn check_kickoff_mentions(&mut self, kickoff: &Located<String>, agents: &[String]) {
        let mut wakes = false;
        for (at, name) in mentions::scan(&kickoff.value) {
            // The word as written, past what a name may hold (`@café`).
            let written: String = kickoff.value[at..]
                .chars()
                .skip(1)
                .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-'))
                .collect::<String>()
                .trim_end_matches('-')
                .to_string();
            if written == name
                && (agents.iter().any(|a| a == name)
                    || (name == mentions::ALL && !agents.is_empty()))
            {
                wakes = true;
            } else if !mentions::RESERVED_NAMES.contains(&name) || written != name {
                let names: Vec<&str> = agents.iter().map(String::as_str).collect();
                let hint = did_you_mean(&written, names.iter().copied())
                    .map(|s| format!(" (did you mean '@{s}'?)"))
                    .unwrap_or_default();
                let known = if names.is_empty() {
                    "no agent of it has a valid name yet".to_string()
                } else {
                    format!("agents: {}", names.join(", "))
                };
                let pos = self.diags.locate(kickoff.pos, &format!("@{written}"));
                self.diags.warn(
                    pos,
                    format!(
                        "kickoff mentions @{written}, which is not an agent of this workflow{hint}; {known}"
                    ),
                );
            }
        }
        if !wakes && !agents.is_empty() {
            self.diags.warn(
                kickoff.pos,
                "kickoff mentions no agent, so nobody starts working (write @name to wake an agent)",
            );
        }
    }
}

/// Every well-formed agent name under `agents:`, even of agents with errors,
/// so one mistake does not also make every mention of that agent a warning.
fn declared_agents(node: Option<&Node>) -> Vec<String> {
    match node.map(|n| &n.value) {
        Some(Value::Map(entries)) => entries
            .iter()
            .map(|(k, _)| k.name.clone())
            .filter(|n| {
                mentions::is_valid_name(n) && !mentions::RESERVED_NAMES.contains(&n.as_str())
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The backend a `provider/model` name implies: `anthropic/` and `openai/`
/// are the API backends; `ollama/` is an OpenAI-compatible local server.
pub fn model_provider(model: &str) -> Option<BackendKind> {
    let (prefix, _) = model.split_once('/')?;
    match prefix {
        "anthropic" => Some(BackendKind::Anthropic),
        "openai" | "ollama" => Some(BackendKind::Openai),
        _ => None,
    }
}

/// A `system_prompt` is a file path when it is one line without spaces that
/// ends in a prompt-file extension or contains a `/`; anything else is the
/// prompt itself.
fn looks_like_path(text: &str) -> bool {
    let t = text.trim();
    if t.is_empty() || t.contains(char::is_whitespace) {
        return false;
    }
    let ext = [".md", ".txt", ".markdown", ".prompt"];
    t.contains('/') || ext.iter().any(|e| t.to_ascii_lowercase().ends_with(e))
}
