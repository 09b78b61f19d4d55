//! What an agent may do without asking: `permissions:`, `approve:`, and
//! the timeouts of asking.

use super::Walker;
use super::keys::KeySet;
use crate::workflow::schema::{AgentDef, Limits, Permissions};
use crate::workflow::yaml::{Node, Value};

impl Walker<'_> {
    /// `permissions: read-only | workspace-write | full | ask`.
    pub(super) fn permissions(&mut self, node: &Node, what: &str) -> Option<Permissions> {
        self.one_of(node, what, "permissions", &Permissions::ALL)
    }

    /// `approve:` — a mapping of `allow`, `deny` and `ask` to a rule or a
    /// list of rules (`Bash(git status*)`, `Write`), each checked here.
    pub(super) fn approve(&mut self, node: &Node, what: &str) -> crate::approvals::RuleSet {
        use crate::approvals::{Rule, Verdict};
        let mut set = crate::approvals::RuleSet::default();
        let what = format!("{what}: approve");
        let names = KeySet::new(Verdict::ALL.map(|(_, n)| n));
        let Some(fields) = self.keyed(node, &names, &what) else {
            return set;
        };
        for (key, value) in fields {
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

    /// An asking agent whose `env:` sets Claude Code's `MCP_TOOL_TIMEOUT`
    /// below the approval timeout: its CLI stops waiting first, and every
    /// request still open then expires.
    pub(super) fn check_ask_timeouts(&mut self, agents: &[AgentDef], limits: &Limits) {
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
}
