//! `agents:` and `spawn:`: each agent's definition, checked key by key
//! against what its backend can do.

use super::keys;
use super::values::Fields;
use super::{MAX_SPAWN_SLOTS, Scope, Walker, is_env_name};
use crate::agents::backend::backend_for;
use crate::context::mentions;
use crate::workflow::diagnostic::{did_you_mean, hint};
use crate::workflow::schema::{
    AgentDef, AgentProtocol, BackendKind, Located, Permissions, PromptSource, Protocols, SpawnSlot,
    Workspace,
};
use crate::workflow::yaml::{Key, Node, Value};

impl Walker<'_> {
    pub(super) fn agents(
        &mut self,
        node: &Node,
        scope: &Scope,
        workspace: &Workspace,
    ) -> Vec<AgentDef> {
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
        let unique = self.unique(entries, |key, line| {
            format!(
                "agent '{}' is defined twice (first at line {line})",
                key.name
            )
        });
        for (key, def) in unique {
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
    pub(super) fn spawn(
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
            let Some(entries) = self.mapping(def, &what) else {
                continue;
            };
            let fields = Fields::all(entries);
            let max = match fields.get("max") {
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
            let from = fields.get("from")
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
            let agent_fields: Vec<(Key, Node)> = entries
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

    pub(super) fn agent(
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

        let model = self.key_string(&fields, "model", &what);
        let command = fields.get("command").and_then(|n| self.command(n, &what));
        // `modle: x` is already reported as a typo; "needs a model" would be noise.
        let model_misspelt = entries.iter().any(|(k, _)| {
            !keys::AGENT.contains(&k.name) && did_you_mean(&k.name, ["model"]).is_some()
        });
        let backend = if model.is_none() && model_misspelt && fields.get("backend").is_none() {
            None
        } else {
            self.backend(
                key,
                fields.get("backend"),
                model.as_deref(),
                command.is_some(),
            )
        };
        let protocol = fields.get("protocol").and_then(|n| {
            let kind = backend.as_ref().map(|(k, _)| *k);
            self.protocol(n, &what, kind)
        });
        // Headless for certain: written so, or on another host.
        let headless = protocol == Some(AgentProtocol::Headless) || fields.get("host").is_some();
        if let Some((kind, _)) = backend {
            self.check_backend_fields(
                key,
                kind,
                model.as_deref(),
                fields.get("command"),
                command.is_some(),
                headless,
            );
        }
        let prompt = match fields.get("system_prompt") {
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

        let tools = fields
            .get("tools")
            .map(|n| self.string_list(n, &format!("{what}: tools")))
            .unwrap_or_default();
        let max_turns = fields
            .get("max_turns")
            .and_then(|n| self.count(n, &format!("{what}: max_turns"), 1));
        let timeout = fields
            .get("timeout")
            .and_then(|n| self.duration(n, &format!("{what}: timeout")));
        let base_url = self.key_string(&fields, "base_url", &what);
        let api_key_env = self.key_string(&fields, "api_key_env", &what);
        if let Some((kind, _)) = &backend
            && !backend_for(*kind).in_process()
        {
            for key in ["base_url", "api_key_env"] {
                if let Some(n) = fields.get(key) {
                    self.diags.error(
                        n.pos,
                        format!("{what}: '{key}' is only used by the anthropic and openai backends (this agent uses {})", kind.name()),
                    );
                }
            }
        }
        let env = fields
            .get("env")
            .map(|n| self.env(n, &what, scope))
            .unwrap_or_default();
        let workspace = match fields.get("workspace") {
            Some(n) => self.workspace(n, &format!("{what}: workspace"))?,
            None => default_workspace.clone(),
        };
        if let (Some((kind, _)), Workspace::Worktree { .. }) = (&backend, &workspace)
            && let Some(file) = backend_for(*kind).workdir_config()
            && (headless || backend_for(*kind).acp_program().is_none())
        {
            self.diags.error(
                fields.get("workspace").map_or(key.pos, |n| n.pos),
                format!("{what}: workspace: worktree is not available for the {} backend run headless (it reads its MCP servers only from the project's {file}, which would land in the agent's commits); over ACP it is", kind.name()),
            );
        }
        let approve = fields
            .get("approve")
            .map(|n| self.approve(n, &what))
            .unwrap_or_default();
        let permissions = match fields.get("permissions") {
            Some(n) => {
                let found = self.permissions(n, &what);
                if let (Some(p), Some(a)) = (found, fields.get("approve"))
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
            None if fields.get("approve").is_some() => Permissions::Ask,
            None => Permissions::default(),
        };
        if permissions == Permissions::Ask
            && let Some((kind, _)) = &backend
            && *kind != BackendKind::Claude
            && (backend_for(*kind).acp_program().is_none()
                || protocol == Some(AgentProtocol::Headless))
        {
            self.diags.error(
                fields.get("permissions")
                    .or(fields.get("approve"))
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
        let protocols = match fields.get("protocols") {
            Some(n) => {
                let names = self.string_list(n, &format!("{what}: protocols"));
                for name in &names {
                    if !Protocols::NAMES.contains(&name.as_str()) {
                        let hint = hint(name, Protocols::NAMES);
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
        let args = match fields.get("args") {
            Some(n) => {
                let args = self.string_list(n, &format!("{what}: args"));
                if let Some((kind, _)) = &backend {
                    self.check_args(n.pos, *kind, &args, &what);
                }
                args
            }
            None => Vec::new(),
        };
        let mcp = fields
            .get("mcp")
            .map(|n| self.mcp_servers(n, &what))
            .unwrap_or_default();
        if let Some(n) = fields.get("mcp").filter(|_| !scope.context_enabled) {
            self.diags.error(
                n.pos,
                format!("{what}: 'mcp' servers are handed to the CLI next to awtui's, and with context: false there is no MCP config at all; remove context: false or configure the servers in the CLI itself"),
            );
        }
        let keep_user_mcp = match fields.get("keep_user_mcp") {
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
                if let Some(n) = fields.get(key) {
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
            && let Some(n) = fields.get("tools")
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
        let sandbox = fields.get("sandbox").and_then(|n| self.sandbox(n, &what));
        let host = fields
            .get("host")
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

    pub(super) fn env(
        &mut self,
        node: &Node,
        what: &str,
        scope: &Scope,
    ) -> Vec<(String, Located<String>)> {
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
            if let Some(located) = self.located(value, &format!("{what}: env.{}", key.name)) {
                self.check_template(&located, &format!("{what}: env.{}", key.name), scope);
                out.push((key.name.clone(), located));
            }
        }
        out
    }
}
