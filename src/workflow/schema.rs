//! The validated shape of a workflow file.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use super::yaml::Pos;

/// A value together with where it was written, for errors found later
/// (interpolation at start, a failing setup command).
#[derive(Clone, Debug, PartialEq)]
pub struct Located<T> {
    pub value: T,
    pub pos: Pos,
}

/// A loaded and validated workflow.
///
/// Its `JsonSchema` is the shape of the file as written: the loader takes
/// the keys a mapping may hold from it (`load::keys`), so a field that is
/// no key is `#[schemars(skip)]` and a key spelt otherwise is `rename`d.
#[derive(Clone, Debug, JsonSchema)]
#[schemars(transform = spawn_key, transform = every_key_optional)]
pub struct Workflow {
    /// `name:` or the file stem.
    pub name: String,
    /// The workflow file, absolute.
    #[schemars(skip)]
    pub file: PathBuf,
    /// The folder of the workflow file: setup commands run here and relative
    /// paths resolve against it.
    #[schemars(skip)]
    pub base_dir: PathBuf,
    /// Agents in the order they are written.
    #[schemars(with = "BTreeMap<String, AgentDef>")]
    pub agents: Vec<AgentDef>,
    pub setup: Vec<SetupTask>,
    pub kickoff: Option<Located<String>>,
    pub context: ContextConfig,
    pub limits: Limits,
    /// The plan of tasks the workflow declares (`tasks:`), made at the
    /// instance's first start.
    pub tasks: Option<Vec<FileTask>>,
    /// Other machines agents may run on (`hosts:`), in the order written.
    #[schemars(with = "BTreeMap<String, HostDef>")]
    pub hosts: Vec<HostDef>,
    /// How many agents this machine runs at once when agents are placed
    /// by free slots (`host: any`, `spawn:` workers); `hosts.local.max_agents`.
    #[schemars(skip)]
    pub local_slots: u32,
    /// The workflow-wide `workspace:` (the default of agents the person
    /// adds later, as of the file's own).
    pub workspace: Workspace,
}

/// `spawn:` is a key of the file without a field of its own: its worker
/// templates (`<template>: {max, from, …agent keys}`) become agents.
fn spawn_key(schema: &mut Schema) {
    let templates = json_schema!({
        "type": "object",
        "description": "Worker templates: <template>: {max, from, …agent keys}",
    });
    if let Some(properties) = schema
        .ensure_object()
        .entry("properties")
        .or_insert_with(|| serde_json::Value::Object(Default::default()))
        .as_object_mut()
    {
        properties.insert("spawn".into(), templates.into());
    }
}

/// No key of the mapping is needed by itself (an agent needs a `model`,
/// a `backend` or a `command`; the loader says which is missing), though
/// its field always has a value once loaded.
fn every_key_optional(schema: &mut Schema) {
    schema.remove("required");
}

/// One task of the plan a workflow file declares (`tasks:`).
#[derive(Clone, Debug, PartialEq, JsonSchema)]
pub struct FileTask {
    /// The key other tasks' `depends_on` use (`id:`, else the name).
    #[schemars(rename = "id")]
    pub key: String,
    pub name: String,
    pub description: String,
    /// Keys of the tasks it waits for.
    pub depends_on: Vec<String>,
    /// The agent meant to do it.
    pub assignee: Option<String>,
    /// The role meant to do it.
    pub role: Option<String>,
}

/// The `limits:` section: loop guards and budgets for the whole workflow.
/// Absent values take the runner's defaults.
#[derive(Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct Limits {
    /// Turns of all agents together.
    pub max_turns: Option<u32>,
    /// Turns of each agent without its own `max_turns`.
    pub agent_max_turns: Option<u32>,
    /// Running time before the instance pauses.
    #[schemars(with = "Option<String>")]
    pub wall_clock: Option<Duration>,
    /// Spend (US dollars, as reported by backends) before it pauses.
    pub cost_usd: Option<f64>,
    /// Retries of a failed turn before the agent is marked failed.
    pub retries: Option<u32>,
    /// The first retry's delay; each next one doubles.
    #[schemars(with = "Option<String>")]
    pub retry_backoff: Option<Duration>,
    /// Time without any backend event before a running agent is "stalled".
    #[schemars(with = "Option<String>")]
    pub stall_after: Option<Duration>,
    /// Repeats of a wake pattern before the cycle guard pauses (0: off).
    pub loop_repeats: Option<u32>,
    /// Missed heartbeats after which a stale holder's task claim is
    /// released (absent: never automatically).
    pub release_after_missed_heartbeats: Option<u32>,
    /// How long a tool call waits for a person's approval before it is
    /// denied (default [`crate::approvals::DEFAULT_TIMEOUT`]).
    #[schemars(with = "Option<String>")]
    pub approval_timeout: Option<Duration>,
    /// How long one MCP tool call may run before its caller gets a
    /// `DEADLINE_EXCEEDED` error (default [`crate::mcp::DEFAULT_TOOL_TIMEOUT`];
    /// `permission_request` keeps `approval_timeout`).
    #[schemars(with = "Option<String>")]
    pub tool_timeout: Option<Duration>,
}

impl AgentDef {
    /// The agent's own `PATH` (its `env:`), when it sets one without
    /// templates: where its CLI is looked up, here or on its host.
    pub fn own_path(&self) -> Option<&str> {
        self.env
            .iter()
            .find(|(k, v)| k == "PATH" && !v.value.contains("${{"))
            .map(|(_, v)| v.value.as_str())
    }
}

impl Workflow {
    /// The agent names, in file order.
    pub fn agent_names(&self) -> Vec<String> {
        self.agents.iter().map(|a| a.name.clone()).collect()
    }

    /// The agent called `name`.
    pub fn agent(&self, name: &str) -> Option<&AgentDef> {
        self.agents.iter().find(|a| a.name == name)
    }
}

/// Which program or API runs an agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendKind {
    Claude,
    Codex,
    Cursor,
    Gemini,
    Opencode,
    Anthropic,
    Openai,
    Command,
    /// Any agent that speaks the Agent Client Protocol, given by `command:`.
    Acp,
}

impl BackendKind {
    /// Every backend with the name used in `backend:`.
    pub const ALL: [(BackendKind, &'static str); 9] = [
        (BackendKind::Claude, "claude"),
        (BackendKind::Codex, "codex"),
        (BackendKind::Cursor, "cursor"),
        (BackendKind::Gemini, "gemini"),
        (BackendKind::Opencode, "opencode"),
        (BackendKind::Anthropic, "anthropic"),
        (BackendKind::Openai, "openai"),
        (BackendKind::Command, "command"),
        (BackendKind::Acp, "acp"),
    ];

    /// The name written in workflow files.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(k, _)| *k == self)
            .map_or("?", |(_, n)| n)
    }

    /// Parses a `backend:` value.
    pub fn from_name(name: &str) -> Option<BackendKind> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(k, _)| *k)
    }
}

/// How awtui talks to an agent's CLI (`protocol:`): over the Agent
/// Client Protocol (one live process and session, structured tool calls,
/// approvals, cancel) or one headless run per turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AgentProtocol {
    Acp,
    Headless,
}

impl AgentProtocol {
    /// Every value with its name in workflow files.
    pub const ALL: [(AgentProtocol, &'static str); 2] = [
        (AgentProtocol::Acp, "acp"),
        (AgentProtocol::Headless, "headless"),
    ];

    /// The name written in workflow files.
    pub fn name(self) -> &'static str {
        match self {
            AgentProtocol::Acp => "acp",
            AgentProtocol::Headless => "headless",
        }
    }

    /// Parses a `protocol:` value.
    pub fn from_name(name: &str) -> Option<AgentProtocol> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(p, _)| *p)
    }
}

/// How the backend was decided, shown by `awtui validate`.
#[derive(Clone, Debug, PartialEq)]
pub enum BackendChoice {
    /// Written as `backend:`.
    Explicit,
    /// Derived from the model's `provider/` prefix.
    FromModel,
}

/// Where an agent's system prompt came from.
#[derive(Clone, Debug, PartialEq)]
pub enum PromptSource {
    None,
    Inline,
    File(PathBuf),
}

/// One agent of the workflow.
#[derive(Clone, Debug, JsonSchema)]
#[schemars(transform = every_key_optional)]
pub struct AgentDef {
    #[schemars(skip)]
    pub name: String,
    #[schemars(skip)]
    pub pos: Pos,
    pub model: Option<String>,
    pub backend: BackendKind,
    #[schemars(skip)]
    pub backend_choice: BackendChoice,
    /// Prompt text (read from the file when given as a path), not yet interpolated.
    pub system_prompt: Located<String>,
    #[schemars(skip)]
    pub prompt_source: PromptSource,
    pub tools: Vec<String>,
    /// Program and arguments for the `command` backend.
    pub command: Option<Vec<String>>,
    pub max_turns: Option<u32>,
    #[schemars(with = "Option<String>")]
    pub timeout: Option<Duration>,
    /// Extra environment, values not yet interpolated.
    #[schemars(with = "BTreeMap<String, String>")]
    pub env: Vec<(String, Located<String>)>,
    /// API backends: the server's base URL (default per provider).
    pub base_url: Option<String>,
    /// API backends: the variable holding the key (default per provider).
    pub api_key_env: Option<String>,
    /// Where it works: the shared folder or its own git worktree.
    pub workspace: Workspace,
    /// What the agent's CLI may do on its own (mapped to each CLI's flags).
    pub permissions: Permissions,
    /// With `permissions: ask`, the `approve:` rules that answer before
    /// the person is asked.
    #[schemars(with = "BTreeMap<String, Vec<String>>")]
    pub approve: crate::approvals::RuleSet,
    /// Extra arguments for the agent's CLI, after awtui's own.
    pub args: Vec<String>,
    /// Which protocols the turn prompt teaches the agent.
    #[schemars(with = "Vec<String>")]
    pub protocols: Protocols,
    /// Set for a worker slot of `spawn:`: it stays stopped until an
    /// agent's Agent Mail SPAWN_REQUEST starts it.
    #[schemars(skip)]
    pub spawn: Option<SpawnSlot>,
    /// Extra MCP servers the agent's CLI gets next to awtui's (`mcp:`).
    #[schemars(with = "BTreeMap<String, McpTransport>")]
    pub mcp: Vec<McpServer>,
    /// Whether the CLI keeps the user's own configured MCP servers
    /// (`keep_user_mcp:`, default false: only awtui's and `mcp:`).
    pub keep_user_mcp: bool,
    /// `protocol:` as written (`None`: the backend's own choice, see
    /// `agents::backend::acp::drive`).
    pub protocol: Option<AgentProtocol>,
    /// Confine the agent's process with bubblewrap (`sandbox:`).
    pub sandbox: Option<Sandbox>,
    /// Which machine runs it (`host:`): this one unless it names one of
    /// the workflow's `hosts:` (or `any`, placed by free slots).
    pub host: HostChoice,
}

/// `sandbox: true` or `sandbox: {writable: [...], hidden: [...]}`: the
/// agent's process sees the filesystem read-only but for its workspace,
/// its CLI's state folders and a private `/tmp`.
#[derive(Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct Sandbox {
    /// Extra folders it may write (absolute, or relative to the workflow's
    /// folder; `~/` is the home folder).
    pub writable: Vec<PathBuf>,
    /// Extra folders it may not see at all (an empty folder takes their
    /// place).
    pub hidden: Vec<PathBuf>,
}

/// Which machine an agent runs on (`host:`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum HostChoice {
    /// This machine (no `host:`).
    #[default]
    Local,
    /// One of the workflow's `hosts:`, by name.
    Named(String),
    /// `host: any`: the host (this machine counting as one) with the most
    /// free slots when it starts.
    Any,
}

/// One machine of `hosts:`, reached with the system's `ssh`.
#[derive(Clone, Debug, PartialEq, JsonSchema)]
pub struct HostDef {
    /// The key under `hosts:`.
    #[schemars(skip)]
    pub name: String,
    #[schemars(skip)]
    pub pos: Pos,
    /// Any ssh destination (`user@host`, or a `~/.ssh/config` alias).
    pub ssh: String,
    /// The repository on that host (`~/` is the remote home); cloned from
    /// this one if missing.
    pub dir: String,
    /// How many agents it runs at once (default 4).
    pub max_agents: u32,
}

/// A worker slot made from a `spawn:` template (`<template>-<n>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnSlot {
    /// The template's name.
    pub template: String,
    /// The agents that may ask for it (empty: any agent).
    pub from: Vec<String>,
}

/// One extra MCP server of an agent (`mcp: { name: … }`), handed to its CLI
/// in the CLI's own config format next to awtui's server.
#[derive(Clone, Debug, PartialEq)]
pub struct McpServer {
    /// The server's name (the key under `mcp:`); never `awtui`.
    pub name: String,
    pub transport: McpTransport,
}

/// How an extra MCP server is reached. Each variant's keys are one kind
/// of server's; its required keys tell which kind a mapping is.
#[derive(Clone, Debug, PartialEq, JsonSchema)]
#[schemars(untagged)]
pub enum McpTransport {
    /// A program speaking MCP on stdin/stdout.
    Stdio {
        command: String,
        #[schemars(default)]
        args: Vec<String>,
        #[schemars(default, with = "BTreeMap<String, String>")]
        env: Vec<(String, String)>,
    },
    /// A streamable HTTP server.
    Http {
        url: String,
        #[schemars(default, with = "BTreeMap<String, String>")]
        headers: Vec<(String, String)>,
    },
}

/// The protocols awtui teaches an agent in its turn prompt (`protocols:`,
/// default all): answering in AOP blocks, operations in frontmatter, Agent
/// Mail status messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Protocols {
    /// Agent Output Protocol blocks (`=== AOP-FINAL | agent=… ===`).
    pub aop: bool,
    /// Agent operations in the answer's frontmatter (`done: 12`).
    pub ops: bool,
    /// Agent Mail status messages (`[bead] PROGRESS`).
    pub mail: bool,
    /// AOP, strictly (`aop-strict`): besides teaching it, a run notes once
    /// when the agent's answer has text outside AOP blocks.
    pub aop_strict: bool,
}

impl Default for Protocols {
    fn default() -> Self {
        Protocols {
            aop: true,
            ops: true,
            mail: true,
            aop_strict: false,
        }
    }
}

impl Protocols {
    /// The names used in `protocols:`.
    pub const NAMES: [&'static str; 4] = ["aop", "ops", "mail", "aop-strict"];

    /// Only the protocols named (unknown names are the loader's to report).
    pub fn only(names: &[String]) -> Protocols {
        let on = |n: &str| names.iter().any(|x| x == n);
        Protocols {
            aop: on("aop") || on("aop-strict"),
            ops: on("ops"),
            mail: on("mail"),
            aop_strict: on("aop-strict"),
        }
    }
}

/// What an agent's CLI may do without asking, the same idea on every
/// backend: each maps it to its own flags (Claude `--permission-mode`,
/// Codex `--sandbox`, Gemini `--approval-mode`, opencode's `permission`
/// config, Cursor `--force`). awtui's own tools are always allowed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Permissions {
    /// Read files and run read-only tools; no edits, no commands.
    ReadOnly,
    /// Edit files in the workspace (the default); commands as the CLI's
    /// own sandbox allows.
    #[default]
    WorkspaceWrite,
    /// Everything, without asking (`--yolo`, `bypassPermissions`).
    Full,
    /// Ask before each tool call the CLI would prompt for: the agent's
    /// `approve:` rules answer, or the person in the control room (Claude
    /// Code only, through `--permission-prompt-tool`).
    Ask,
}

impl Permissions {
    /// Every setting with its name in workflow files.
    pub const ALL: [(Permissions, &'static str); 4] = [
        (Permissions::ReadOnly, "read-only"),
        (Permissions::WorkspaceWrite, "workspace-write"),
        (Permissions::Full, "full"),
        (Permissions::Ask, "ask"),
    ];

    /// The setting named `name`.
    pub fn from_name(name: &str) -> Option<Permissions> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(p, _)| *p)
    }

    /// The name written in workflow files.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(p, _)| *p == self)
            .map_or("?", |(_, n)| n)
    }
}

/// Where an agent works (`workspace:` on the agent, or workflow-wide), so
/// two coders need not overwrite each other's files.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Workspace {
    /// The workflow file's folder, shared with every other shared agent.
    #[default]
    Shared,
    /// Its own `git worktree` on the branch `awtui/<instance>/<agent>`,
    /// started from `base` (a branch or commit; default: the current
    /// branch's HEAD).
    Worktree { base: Option<String> },
}

/// One setup step: a shell command whose trimmed stdout may become a variable.
#[derive(Clone, Debug, JsonSchema)]
pub struct SetupTask {
    pub shell: Located<String>,
    /// The variable its output becomes (`as:`).
    #[schemars(rename = "as")]
    pub output: Option<String>,
}

/// The `context:` section.
#[derive(Clone, Debug, PartialEq)]
pub enum ContextConfig {
    /// `context: false`: agents share nothing.
    Disabled,
    /// The file provider (the default).
    File(ContextFiles),
    /// The memory provider: nothing on disk, for tests and throwaway runs.
    Memory(ContextFiles),
}

impl ContextConfig {
    /// The file settings of an enabled context.
    pub fn files(&self) -> Option<&ContextFiles> {
        match self {
            ContextConfig::Disabled => None,
            ContextConfig::File(f) | ContextConfig::Memory(f) => Some(f),
        }
    }
}

/// Names of the context's files (`context.config`). `dir` is not yet
/// interpolated.
#[derive(Clone, Debug, PartialEq, JsonSchema)]
pub struct ContextFiles {
    pub dir: Located<String>,
    pub channel: String,
    pub document: String,
    pub documents: Vec<String>,
}

/// The seed's default context folder, relative to the workflow file.
pub const DEFAULT_CONTEXT_DIR: &str = ".workflow/${{ workflow.instance }}/";
/// The seed's default channel file name.
pub const DEFAULT_CHANNEL: &str = "channel.md";
/// The seed's default entry document.
pub const DEFAULT_DOCUMENT: &str = "notes.md";
/// The instance name when none is given.
pub const DEFAULT_INSTANCE: &str = "default";

/// A value of a closed set of names, as written in a workflow file.
fn one_of_names(names: &[&str]) -> Schema {
    json_schema!({ "type": "string", "enum": names })
}

/// A located value is written as the value alone.
impl<T: JsonSchema> JsonSchema for Located<T> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        T::json_schema(generator)
    }
}

/// `backend:` is one of [`BackendKind::ALL`]'s names.
impl JsonSchema for BackendKind {
    fn schema_name() -> Cow<'static, str> {
        "BackendKind".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        one_of_names(&BackendKind::ALL.map(|(_, n)| n))
    }
}

/// `protocol:` is one of [`AgentProtocol::ALL`]'s names.
impl JsonSchema for AgentProtocol {
    fn schema_name() -> Cow<'static, str> {
        "AgentProtocol".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        one_of_names(&AgentProtocol::ALL.map(|(_, n)| n))
    }
}

/// `permissions:` is one of [`Permissions::ALL`]'s names.
impl JsonSchema for Permissions {
    fn schema_name() -> Cow<'static, str> {
        "Permissions".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        one_of_names(&Permissions::ALL.map(|(_, n)| n))
    }
}

/// `host:` is a name of `hosts:`, `local` or `any`.
impl JsonSchema for HostChoice {
    fn schema_name() -> Cow<'static, str> {
        "HostChoice".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string" })
    }
}

/// `workspace: shared | worktree | {mode, base}`.
impl JsonSchema for Workspace {
    fn schema_name() -> Cow<'static, str> {
        "Workspace".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let modes = ["shared", "worktree"];
        json_schema!({
            "anyOf": [
                { "type": "string", "enum": modes },
                {
                    "type": "object",
                    "properties": {
                        "mode": { "type": "string", "enum": modes },
                        "base": { "type": "string" },
                    },
                    "additionalProperties": false,
                },
            ]
        })
    }
}

/// `context: false | {provider, config}` (absent or empty: the file
/// provider with its defaults).
impl JsonSchema for ContextConfig {
    fn schema_name() -> Cow<'static, str> {
        "ContextConfig".into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "anyOf": [
                { "type": ["boolean", "null"] },
                {
                    "type": "object",
                    "properties": {
                        "provider": { "type": "string", "enum": ["file", "memory"] },
                        "config": generator.subschema_for::<ContextFiles>(),
                    },
                    "additionalProperties": false,
                },
            ]
        })
    }
}
