//! `mcp:`: extra MCP servers an agent's CLI gets next to awtui's.

use super::Walker;
use super::keys::{self, KeySet};
use super::values::Fields;
use crate::workflow::schema::{McpServer, McpTransport};
use crate::workflow::yaml::Node;

impl Walker<'_> {
    /// `mcp: { name: {command, args, env} | {url, headers} }`: extra MCP
    /// servers, each error at its own line and column.
    pub(super) fn mcp_servers(&mut self, node: &Node, what: &str) -> Vec<McpServer> {
        let Some(entries) = self.mapping(node, &format!("{what}: mcp")) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (key, value) in entries {
            let here = format!("{what}: mcp.{}", key.name);
            let valid = !key.name.is_empty()
                && key
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !valid {
                self.diags.error(
                    key.pos,
                    format!("{here}: a server name may only hold letters, digits, '_' and '-'"),
                );
                continue;
            }
            if key.name == crate::agents::backend::invocation::MCP_SERVER_NAME {
                self.diags.error(
                    key.pos,
                    format!("{here}: the name 'awtui' is awtui's own server; choose another"),
                );
                continue;
            }
            let Some(entries) = self.mapping(value, &here) else {
                continue;
            };
            let fields = Fields::all(entries);
            let (command, url) = (fields.get("command"), fields.get("url"));
            let allowed: &KeySet = match (command, url) {
                (Some(_), None) => &keys::MCP_STDIO,
                (None, Some(_)) => &keys::MCP_HTTP,
                (Some(_), Some(_)) => {
                    self.diags.error(
                        value.pos,
                        format!("{here}: give either 'command' (a stdio server) or 'url' (an HTTP server), not both"),
                    );
                    continue;
                }
                (None, None) => {
                    self.diags.error(
                        value.pos,
                        format!("{here}: needs 'command' (a stdio server: command, args, env) or 'url' (an HTTP server: url, headers)"),
                    );
                    continue;
                }
            };
            let mut ok = true;
            for (k, _) in fields.iter() {
                if !allowed.contains(&k.name) {
                    ok = false;
                    self.diags.error(
                        k.pos,
                        format!(
                            "{here}: unknown key '{}'; this server takes {}",
                            k.name,
                            allowed.joined()
                        ),
                    );
                }
            }
            let transport = if let Some(c) = command {
                let command = self.plain_string(c, &format!("{here}.command"));
                let args = fields
                    .get("args")
                    .map(|n| self.string_list(n, &format!("{here}.args")))
                    .unwrap_or_default();
                let env = fields
                    .get("env")
                    .map(|n| self.string_map(n, &format!("{here}.env"), true))
                    .unwrap_or_default();
                command.map(|command| McpTransport::Stdio { command, args, env })
            } else {
                let url = url.and_then(|n| {
                    let u = self.plain_string(n, &format!("{here}.url"))?;
                    if u.starts_with("http://") || u.starts_with("https://") {
                        Some(u)
                    } else {
                        self.diags.error(
                            n.pos,
                            format!("{here}.url: '{u}' is not an http:// or https:// URL"),
                        );
                        None
                    }
                });
                let headers = fields
                    .get("headers")
                    .map(|n| self.string_map(n, &format!("{here}.headers"), false))
                    .unwrap_or_default();
                url.map(|url| McpTransport::Http { url, headers })
            };
            if let (Some(transport), true) = (transport, ok) {
                out.push(McpServer {
                    name: key.name.clone(),
                    transport,
                });
            }
        }
        out
    }
}
