//! `${{ }}` templates and `@mentions` in the file: every name used must
//! resolve, every mention wake an agent.

use super::{Scope, Walker};
use crate::context::mentions;
use crate::workflow::diagnostic::did_you_mean;
use crate::workflow::interpolate::references;
use crate::workflow::schema::Located;
use crate::workflow::yaml::{Node, Value};

/// Names every template may use besides setup outputs and `env.*`.
pub(super) const RESERVED_VARS: [&str; 5] = [
    "workflow.name",
    "workflow.instance",
    "instance",
    "context.channel",
    "context.document",
];

/// Every well-formed agent name under `agents:`, even of agents with errors,
/// so one mistake does not also make every mention of that agent a warning.
pub(super) fn declared_agents(node: Option<&Node>) -> Vec<String> {
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

impl Walker<'_> {
    /// Checks that every `${{ name }}` in a template will resolve.
    pub(super) fn check_template(&mut self, t: &Located<String>, what: &str, scope: &Scope) {
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

    pub(super) fn check_kickoff_mentions(&mut self, kickoff: &Located<String>, agents: &[String]) {
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
