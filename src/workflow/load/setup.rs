//! `setup:`: the shell steps run before agents start, whose output may
//! become template variables.

use super::templates::RESERVED_VARS;
use std::collections::BTreeSet;

use super::Walker;
use super::keys;
use crate::workflow::schema::SetupTask;
use crate::workflow::yaml::Node;

impl Walker<'_> {
    pub(super) fn setup(&mut self, node: &Node) -> Vec<SetupTask> {
        let items = self.items(node, "setup", "{shell, as} steps");
        let mut tasks = Vec::new();
        let mut names: BTreeSet<String> = BTreeSet::new();
        for (i, item) in items.iter().enumerate() {
            let what = format!("setup step {}", i + 1);
            let Some(fields) = self.keyed(item, &keys::SETUP, &what) else {
                continue;
            };
            let Some(shell_node) = fields.get("shell") else {
                self.diags
                    .error(item.pos, format!("{what} has no 'shell' command"));
                continue;
            };
            let Some(shell) = self.located(shell_node, &format!("{what}: shell")) else {
                continue;
            };
            let output = fields.get("as").and_then(|n| {
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
            tasks.push(SetupTask { shell, output });
        }
        tasks
    }
}
