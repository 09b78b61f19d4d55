//! Reading one YAML node as a value of a workflow key (a string, a list,
//! a count, a duration, a mapping with known keys), each problem reported
//! where it is written.

use super::*;

impl Walker<'_> {
    /// Checks the keys of a mapping: unknown ones (with a suggestion) and
    /// duplicates are errors. Returns the known entries.
    pub(super) fn fields<'n>(
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
