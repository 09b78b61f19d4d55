//! Reading one YAML node as a value of a workflow key (a string, a list,
//! a count, a duration, a mapping with known keys), each problem reported
//! where it is written.

use super::keys::KeySet;
use super::{Walker, is_env_name};
use crate::context::paths;
use crate::duration::parse_duration;
use crate::workflow::diagnostic::{did_you_mean, hint};
use crate::workflow::schema::Located;
use crate::workflow::yaml::{Key, Node, Value};

/// The entries of a mapping, looked up by key (those [`Walker::fields`]
/// kept, or all of them).
pub(super) struct Fields<'n>(Vec<(&'n Key, &'n Node)>);

impl<'n> Fields<'n> {
    /// Every entry, keys unchecked (a `spawn:` template, an MCP server).
    pub(super) fn all(entries: &'n [(Key, Node)]) -> Fields<'n> {
        Fields(entries.iter().map(|(k, n)| (k, n)).collect())
    }

    /// The value of key `k`.
    pub(super) fn get(&self, k: &str) -> Option<&'n Node> {
        self.0
            .iter()
            .find(|(key, _)| key.name == k)
            .map(|(_, n)| *n)
    }

    /// The entries in file order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&'n Key, &'n Node)> + '_ {
        self.0.iter().copied()
    }
}

impl<'n> IntoIterator for Fields<'n> {
    type Item = (&'n Key, &'n Node);
    type IntoIter = std::vec::IntoIter<(&'n Key, &'n Node)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl Walker<'_> {
    /// The entries of a mapping but for a key written again, each repeat
    /// an error worded by `twice` (given the key and the line of its
    /// first).
    pub(super) fn unique<'n>(
        &mut self,
        entries: &'n [(Key, Node)],
        twice: impl Fn(&Key, u32) -> String,
    ) -> Vec<(&'n Key, &'n Node)> {
        let mut out: Vec<(&Key, &Node)> = Vec::new();
        for (key, node) in entries {
            match out.iter().find(|(k, _)| k.name == key.name) {
                Some((first, _)) => self.diags.error(key.pos, twice(key, first.pos.line)),
                None => out.push((key, node)),
            }
        }
        out
    }

    /// Checks the keys of a mapping: unknown ones (with a suggestion) and
    /// duplicates are errors. Returns the known entries.
    pub(super) fn fields<'n>(
        &mut self,
        entries: &'n [(Key, Node)],
        allowed: &KeySet,
        what: &str,
    ) -> Fields<'n> {
        let unique = self.unique(entries, |key, line| {
            format!(
                "'{}' is given twice in {what} (first at line {line})",
                key.name
            )
        });
        let mut out = Vec::new();
        for (key, node) in unique {
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
        Fields(out)
    }

    /// A mapping's entries whose keys are among `allowed` ([`Self::fields`]
    /// of [`Self::mapping`]).
    pub(super) fn keyed<'n>(
        &mut self,
        node: &'n Node,
        allowed: &KeySet,
        what: &str,
    ) -> Option<Fields<'n>> {
        let entries = self.mapping(node, what)?;
        Some(self.fields(entries, allowed, what))
    }

    /// The string at `key` of `fields`, named `<what>: <key>` in errors.
    pub(super) fn key_string(&mut self, fields: &Fields, key: &str, what: &str) -> Option<String> {
        let node = fields.get(key)?;
        self.string(node, &format!("{what}: {key}"))
    }

    /// A string with where it is written, for checks made later (templates).
    pub(super) fn located(&mut self, node: &Node, what: &str) -> Option<Located<String>> {
        self.string(node, what).map(|value| Located {
            value,
            pos: node.pos,
        })
    }

    /// The items of a list (`{what} must be a list of {items}` otherwise;
    /// nothing written is no item).
    pub(super) fn items<'n>(&mut self, node: &'n Node, what: &str, items: &str) -> &'n [Node] {
        match &node.value {
            Value::Seq(list) => list,
            Value::Null => &[],
            other => {
                self.diags.error(
                    node.pos,
                    format!("{what} must be a list of {items}, found {}", other.kind()),
                );
                &[]
            }
        }
    }

    /// The value of `<what>: <key>` among the names of `all` (a backend,
    /// a protocol, a permissions setting), with "did you mean" otherwise.
    pub(super) fn one_of<T: Copy, const N: usize>(
        &mut self,
        node: &Node,
        what: &str,
        key: &str,
        all: &[(T, &'static str); N],
    ) -> Option<T> {
        let name = self.string(node, &format!("{what}: {key}"))?;
        if let Some((found, _)) = all.iter().find(|(_, n)| *n == name) {
            return Some(*found);
        }
        let names = all.map(|(_, n)| n);
        self.diags.error(
            node.pos,
            format!(
                "{what}: unknown {key} '{name}'{}; one of: {}",
                hint(&name, names),
                names.join(", ")
            ),
        );
        None
    }

    pub(super) fn mapping<'n>(&mut self, node: &'n Node, what: &str) -> Option<&'n [(Key, Node)]> {
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

    pub(super) fn string(&mut self, node: &Node, what: &str) -> Option<String> {
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

    pub(super) fn string_list(&mut self, node: &Node, what: &str) -> Vec<String> {
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
    pub(super) fn count(&mut self, node: &Node, what: &str, min: i64) -> Option<u32> {
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
    pub(super) fn duration(&mut self, node: &Node, what: &str) -> Option<std::time::Duration> {
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

    /// A non-empty string without `${{ }}` templates (not expanded here).
    pub(super) fn plain_string(&mut self, node: &Node, what: &str) -> Option<String> {
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
    pub(super) fn string_map(
        &mut self,
        node: &Node,
        what: &str,
        vars: bool,
    ) -> Vec<(String, String)> {
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

    pub(super) fn file_name(&mut self, node: &Node, what: &str, own: &[&str]) -> Option<String> {
        let name = self.string(node, what)?;
        match paths::validate(&name, own) {
            Ok(n) => Some(n),
            Err(e) => {
                self.diags.error(node.pos, format!("{what}: {e}"));
                None
            }
        }
    }
}
