//! Which backend runs an agent, with which protocol and program, and the
//! arguments awtui must control.

use super::Walker;
use crate::agents::backend::{PromptTransport, backend_for};
use crate::workflow::schema::{AgentProtocol, BackendChoice, BackendKind};
use crate::workflow::yaml::{Key, Node, Pos, Value};

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

impl Walker<'_> {
    pub(super) fn backend(
        &mut self,
        key: &Key,
        node: Option<&Node>,
        model: Option<&str>,
        has_command: bool,
    ) -> Option<(BackendKind, BackendChoice)> {
        let what = format!("agent '{}'", key.name);
        if let Some(node) = node {
            let kind = self.one_of(node, &what, "backend", &BackendKind::ALL)?;
            return Some((kind, BackendChoice::Explicit));
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

    /// Reads `protocol:`: `acp` only for backends that speak it (natively
    /// or through an adapter), `headless` only for CLIs that also run
    /// headless.
    pub(super) fn protocol(
        &mut self,
        node: &Node,
        what: &str,
        backend: Option<BackendKind>,
    ) -> Option<AgentProtocol> {
        let found = self.one_of(node, what, "protocol", &AgentProtocol::ALL)?;
        let name = found.name();
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

    pub(super) fn check_backend_fields(
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
    pub(super) fn check_args(&mut self, pos: Pos, kind: BackendKind, args: &[String], what: &str) {
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

    pub(super) fn command(&mut self, node: &Node, what: &str) -> Option<Vec<String>> {
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
}
