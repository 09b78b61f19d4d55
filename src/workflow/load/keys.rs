//! The keys each mapping of a workflow file may hold, read once from the
//! `JsonSchema` of the schema types (`workflow/schema.rs`): a key is
//! declared in one place, the field of its struct (`#[schemars(skip)]` for
//! a field that is no key, `rename` for a key spelt otherwise).

use std::sync::LazyLock;

use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value as Json};

use crate::workflow::schema::{
    AgentDef, ContextConfig, ContextFiles, FileTask, HostDef, Limits, McpTransport, Sandbox,
    SetupTask, Workflow, Workspace,
};

/// The keys one kind of mapping may hold: those it needs first, in the
/// order their fields are declared, then the others alphabetically (the
/// order "expected one of" lists them in).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KeySet(Vec<String>);

impl KeySet {
    /// The keys of a closed set of names (`approve:`'s verdicts).
    pub(crate) fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> KeySet {
        KeySet(names.into_iter().map(str::to_string).collect())
    }

    /// The keys of `T` written as a mapping (its first mapping form when
    /// it can also be written otherwise, like `workspace: worktree`).
    fn of<T: JsonSchema>() -> KeySet {
        Self::forms::<T>().into_iter().next().unwrap_or_default()
    }

    /// The keys of each mapping form of `T` (an untagged enum's variants).
    fn forms<T: JsonSchema>() -> Vec<KeySet> {
        let schema = SchemaGenerator::default().into_root_schema_for::<T>();
        let mut forms = Vec::new();
        mapping_forms(schema.as_value(), &mut forms);
        forms.into_iter().map(KeySet::from_mapping).collect()
    }

    /// The form of `T` that needs key `required` (an MCP server's kind).
    fn form_needing<T: JsonSchema>(required: &str) -> KeySet {
        Self::forms::<T>()
            .into_iter()
            .find(|k| k.0.first().is_some_and(|k| k == required))
            .unwrap_or_default()
    }

    fn from_mapping(schema: &Map<String, Json>) -> KeySet {
        let required: Vec<String> = schema
            .get("required")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(|k| k.as_str().map(str::to_string))
            .collect();
        let others = schema
            .get("properties")
            .and_then(Json::as_object)
            .into_iter()
            .flat_map(|p| p.keys())
            .filter(|k| !required.contains(k))
            .cloned()
            .collect::<std::collections::BTreeSet<String>>();
        KeySet(required.into_iter().chain(others).collect())
    }

    /// Whether `name` is one of the keys.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|k| k == name)
    }

    /// The keys in order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> + Clone {
        self.0.iter().map(String::as_str)
    }

    /// The keys joined with ", ", for messages.
    pub(crate) fn joined(&self) -> String {
        self.0.join(", ")
    }
}

/// Every object schema with `properties` in `schema`: itself, or the
/// alternatives of its `anyOf`/`oneOf`.
fn mapping_forms<'s>(schema: &'s Json, out: &mut Vec<&'s Map<String, Json>>) {
    let Some(object) = schema.as_object() else {
        return;
    };
    if object.contains_key("properties") {
        out.push(object);
        return;
    }
    for alternatives in ["anyOf", "oneOf"] {
        for alt in object
            .get(alternatives)
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            mapping_forms(alt, out);
        }
    }
}

/// The workflow file's top level.
pub(crate) static TOP: LazyLock<KeySet> = LazyLock::new(KeySet::of::<Workflow>);
/// One agent (and a `spawn:` template, besides `max` and `from`).
pub(crate) static AGENT: LazyLock<KeySet> = LazyLock::new(KeySet::of::<AgentDef>);
/// One task of `tasks:`.
pub(crate) static TASK: LazyLock<KeySet> = LazyLock::new(KeySet::of::<FileTask>);
/// `limits:`.
pub(crate) static LIMITS: LazyLock<KeySet> = LazyLock::new(KeySet::of::<Limits>);
/// One host of `hosts:`.
pub(crate) static HOST: LazyLock<KeySet> = LazyLock::new(KeySet::of::<HostDef>);
/// `sandbox:` as a mapping.
pub(crate) static SANDBOX: LazyLock<KeySet> = LazyLock::new(KeySet::of::<Sandbox>);
/// One step of `setup:`.
pub(crate) static SETUP: LazyLock<KeySet> = LazyLock::new(KeySet::of::<SetupTask>);
/// `context:` as a mapping.
pub(crate) static CONTEXT: LazyLock<KeySet> = LazyLock::new(KeySet::of::<ContextConfig>);
/// `context.config:`.
pub(crate) static CONTEXT_CONFIG: LazyLock<KeySet> = LazyLock::new(KeySet::of::<ContextFiles>);
/// `workspace:` as a mapping.
pub(crate) static WORKSPACE: LazyLock<KeySet> = LazyLock::new(KeySet::of::<Workspace>);
/// An MCP server run as a program (`command:`).
pub(crate) static MCP_STDIO: LazyLock<KeySet> =
    LazyLock::new(|| KeySet::form_needing::<McpTransport>("command"));
/// An MCP server reached over HTTP (`url:`).
pub(crate) static MCP_HTTP: LazyLock<KeySet> =
    LazyLock::new(|| KeySet::form_needing::<McpTransport>("url"));

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(keys: &KeySet) -> Vec<&str> {
        let mut v: Vec<&str> = keys.names().collect();
        v.sort_unstable();
        v
    }

    fn set(names: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn every_mapping_takes_the_keys_of_its_schema_type() {
        let cases: [(&KeySet, &[&str]); 12] = [
            (
                &TOP,
                &[
                    "spawn",
                    "hosts",
                    "name",
                    "context",
                    "agents",
                    "setup",
                    "kickoff",
                    "limits",
                    "tasks",
                    "workspace",
                ],
            ),
            (
                &TASK,
                &[
                    "id",
                    "name",
                    "description",
                    "depends_on",
                    "assignee",
                    "role",
                ],
            ),
            (
                &LIMITS,
                &[
                    "max_turns",
                    "agent_max_turns",
                    "wall_clock",
                    "cost_usd",
                    "retries",
                    "retry_backoff",
                    "stall_after",
                    "loop_repeats",
                    "release_after_missed_heartbeats",
                    "approval_timeout",
                    "tool_timeout",
                ],
            ),
            (
                &AGENT,
                &[
                    "sandbox",
                    "host",
                    "workspace",
                    "model",
                    "system_prompt",
                    "tools",
                    "backend",
                    "command",
                    "max_turns",
                    "timeout",
                    "env",
                    "base_url",
                    "api_key_env",
                    "permissions",
                    "approve",
                    "args",
                    "protocols",
                    "mcp",
                    "keep_user_mcp",
                    "protocol",
                ],
            ),
            (&MCP_STDIO, &["command", "args", "env"]),
            (&MCP_HTTP, &["url", "headers"]),
            (&CONTEXT, &["provider", "config"]),
            (
                &CONTEXT_CONFIG,
                &["dir", "channel", "document", "documents"],
            ),
            (&SETUP, &["shell", "as"]),
            (&WORKSPACE, &["mode", "base"]),
            (&HOST, &["ssh", "dir", "max_agents"]),
            (&SANDBOX, &["writable", "hidden"]),
        ];
        for (keys, expected) in cases {
            assert_eq!(sorted(keys), set(expected), "{keys:?}");
        }
    }

    #[test]
    fn the_keys_a_mapping_needs_come_first() {
        assert_eq!(MCP_STDIO.joined(), "command, args, env");
        assert_eq!(MCP_HTTP.joined(), "url, headers");
        assert_eq!(SETUP.joined(), "shell, as");
        assert!(AGENT.contains("model") && !AGENT.contains("name"));
        assert_eq!(
            TOP.joined(),
            "agents, context, hosts, kickoff, limits, name, setup, spawn, tasks, workspace"
        );
        assert!(
            AGENT
                .joined()
                .starts_with("api_key_env, approve, args, backend,")
        );
    }
}
