//! `workspace:` (workflow-wide or an agent's): the shared folder or a git
//! worktree.

use super::Walker;
use super::keys;
use crate::workflow::schema::Workspace;
use crate::workflow::yaml::{Node, Value};

impl Walker<'_> {
    /// `workspace:`: `shared`, `worktree`, or `{mode: worktree, base: <ref>}`
    /// (a mapping's mode defaults to `worktree`).
    pub(super) fn workspace(&mut self, node: &Node, what: &str) -> Option<Workspace> {
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
                let worktree = match fields.get("mode") {
                    Some(n) => mode_of(self, n)?,
                    None => true,
                };
                let base = match fields.get("base") {
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
}
