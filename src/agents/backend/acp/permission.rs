//! `session/request_permission`: what the agent asks to do, as awtui's
//! approvals see it (a tool and its input, so the same `approve:` rules,
//! cards and journal serve every vendor), and the answer sent back, which
//! is always one of the options the agent offered. Pure.

use std::path::Path;

use serde_json::{Value, json};

use super::updates::short;
use crate::approvals::Verdict;
use crate::workflow::Permissions;

/// One option the agent offers.
#[derive(Clone, Debug, PartialEq)]
pub struct PermissionOption {
    pub id: String,
    /// `allow_once`, `allow_always`, `reject_once` or `reject_always`.
    pub kind: String,
}

/// A permission request, read.
#[derive(Clone, Debug, PartialEq)]
pub struct Ask {
    pub tool_call_id: String,
    pub title: String,
    pub kind: String,
    pub raw_input: Value,
    pub locations: Vec<String>,
    pub options: Vec<PermissionOption>,
    /// Codex marks its questions about MCP tools.
    pub mcp_tool: bool,
}

impl Ask {
    /// Reads the request's params; fields the agent left out are empty.
    pub fn read(params: &Value) -> Ask {
        let call = params.get("toolCall").cloned().unwrap_or(Value::Null);
        let s = |k: &str| {
            call.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let options = params
            .get("options")
            .and_then(Value::as_array)
            .map(|opts| {
                opts.iter()
                    .filter_map(|o| {
                        Some(PermissionOption {
                            id: o.get("optionId")?.as_str()?.to_string(),
                            kind: o.get("kind")?.as_str()?.to_string(),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mcp_tool = params
            .pointer("/_meta/is_mcp_tool_approval")
            .or_else(|| call.pointer("/_meta/is_mcp_tool_approval"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        Ask {
            tool_call_id: s("toolCallId"),
            title: s("title"),
            kind: s("kind"),
            raw_input: call.get("rawInput").cloned().unwrap_or(Value::Null),
            locations: call
                .get("locations")
                .and_then(Value::as_array)
                .map(|l| {
                    l.iter()
                        .filter_map(|p| p.get("path").and_then(Value::as_str))
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            options,
            mcp_tool,
        }
    }

    /// The call as awtui's rules and cards name it: a shell command is
    /// `Bash` with its `command`, an edit `Edit` with its `file_path`, a
    /// read `Read`, a fetch `WebFetch`, a search `Grep`; anything else
    /// its title with the agent's input. The same rules then answer every
    /// vendor (`Bash(git status)`, `Edit(src/**)`).
    pub fn as_tool(&self) -> (String, Value) {
        let first = self.locations.first().cloned();
        let input_str = |keys: &[&str]| {
            keys.iter()
                .find_map(|k| self.raw_input.get(*k))
                .and_then(|v| match v {
                    Value::String(s) => Some(s.clone()),
                    Value::Array(parts) => Some(
                        parts
                            .iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(" "),
                    ),
                    _ => None,
                })
        };
        match self.kind.as_str() {
            "execute" => {
                let command = input_str(&["command", "cmd"]).unwrap_or_else(|| self.title.clone());
                (
                    "Bash".into(),
                    json!({"command": command, "title": self.title}),
                )
            }
            "edit" | "delete" | "move" => {
                let path = first
                    .or_else(|| input_str(&["file_path", "path", "filePath"]))
                    .unwrap_or_default();
                (
                    "Edit".into(),
                    json!({"file_path": path, "title": self.title, "kind": self.kind}),
                )
            }
            "read" => {
                let path = first
                    .or_else(|| input_str(&["file_path", "path", "filePath"]))
                    .unwrap_or_default();
                (
                    "Read".into(),
                    json!({"file_path": path, "title": self.title}),
                )
            }
            "fetch" => {
                let url = input_str(&["url"]).unwrap_or_else(|| self.title.clone());
                ("WebFetch".into(), json!({"url": url, "title": self.title}))
            }
            "search" => {
                let pattern =
                    input_str(&["pattern", "query"]).unwrap_or_else(|| self.title.clone());
                (
                    "Grep".into(),
                    json!({"pattern": pattern, "title": self.title}),
                )
            }
            _ => {
                let name = if self.title.is_empty() {
                    "tool".to_string()
                } else {
                    short(&self.title)
                };
                (name, json!({"input": self.raw_input, "title": self.title}))
            }
        }
    }

    /// Whether it asks about one of awtui's own tools (which awtui
    /// allows itself: every agent may always use the shared context).
    /// `names` are awtui's tool names; `previous_title` is the title of
    /// the call with the same id, for Codex, whose question has none.
    pub fn is_awtui_tool(&self, names: &[&str], previous_title: Option<&str>) -> bool {
        let title = if self.title.is_empty() {
            previous_title.unwrap_or("")
        } else {
            self.title.as_str()
        };
        let server = crate::agents::backend::invocation::MCP_SERVER_NAME;
        // `mcp__awtui__channel_send`, `awtui_channel_send`,
        // `awtui.channel_send`, "channel_send (awtui MCP Server)": the
        // tool's name and awtui's server, never a bare name another
        // server's tool could carry.
        let word = title
            .split(|c: char| c.is_whitespace() || c == '(')
            .next()
            .unwrap_or("");
        let prefixed = [
            format!("mcp__{server}__"),
            format!("{server}_"),
            format!("{server}."),
            format!("{server}/"),
            format!("mcp.{server}."),
        ]
        .iter()
        .find_map(|p| word.strip_prefix(p.as_str()));
        let suffixed = title
            .strip_prefix(word)
            .is_some_and(|rest| rest.trim() == format!("({server} MCP Server)"));
        let name = match (prefixed, suffixed) {
            (Some(bare), _) => bare,
            (None, true) => word,
            (None, false) => return false,
        };
        let kind_ok = self.kind.is_empty()
            || matches!(self.kind.as_str(), "other" | "fetch" | "think")
            || self.mcp_tool;
        names.contains(&name) && kind_ok
    }

    /// The option that carries `verdict`: a one-time answer first (awtui
    /// keeps "always" as its own rule, which the person can revoke), then
    /// the lasting one. `None` when the agent offered no such option: the
    /// request is then answered cancelled, never with a made-up id.
    pub fn option_for(&self, verdict: Verdict) -> Option<&PermissionOption> {
        let kinds: &[&str] = match verdict {
            Verdict::Allow => &["allow_once", "allow_always"],
            _ => &["reject_once", "reject_always"],
        };
        kinds
            .iter()
            .find_map(|k| self.options.iter().find(|o| o.kind == *k))
    }
}

/// The response to a permission request: the chosen option, or cancelled.
pub fn outcome(option: Option<&PermissionOption>) -> Value {
    match option {
        Some(o) => json!({"outcome": {"outcome": "selected", "optionId": o.id}}),
        None => json!({"outcome": {"outcome": "cancelled"}}),
    }
}

/// How awtui answers by itself when the agent does not ask the person
/// (`permissions:` other than `ask`): read-only allows looking only;
/// workspace-write also allows changing files inside the workspace; full
/// allows everything. A command is refused below `full`: awtui cannot see
/// what it would touch.
pub fn standing_verdict(permissions: Permissions, ask: &Ask, workspace: &Path) -> Verdict {
    let looks = matches!(ask.kind.as_str(), "read" | "search" | "think");
    let inside = !ask.locations.is_empty()
        && ask
            .locations
            .iter()
            .all(|p| crate::approvals::workspace::holds(Some(workspace), p));
    let allowed = match permissions {
        Permissions::Full => true,
        Permissions::ReadOnly => looks,
        Permissions::WorkspaceWrite | Permissions::Ask => {
            looks || (matches!(ask.kind.as_str(), "edit" | "delete" | "move") && inside)
        }
    };
    if allowed {
        Verdict::Allow
    } else {
        Verdict::Deny
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(kind: &str, title: &str, input: Value, locations: &[&str]) -> Ask {
        Ask::read(&json!({
            "sessionId": "s",
            "toolCall": {
                "toolCallId": "c1", "title": title, "kind": kind, "rawInput": input,
                "locations": locations.iter().map(|p| json!({"path": p})).collect::<Vec<_>>()
            },
            "options": [
                {"optionId": "proceed_once", "name": "Allow", "kind": "allow_once"},
                {"optionId": "proceed_always", "name": "Always", "kind": "allow_always"},
                {"optionId": "cancel", "name": "Reject", "kind": "reject_once"}
            ]
        }))
    }

    #[test]
    fn a_shell_call_is_bash_with_its_command() {
        let a = ask(
            "execute",
            "echo hi",
            json!({"command": ["bash", "-lc", "echo hi"]}),
            &[],
        );
        let (tool, input) = a.as_tool();
        assert_eq!(tool, "Bash");
        assert_eq!(input["command"], "bash -lc echo hi");
        let edit = ask("edit", "Write a.rs", json!({}), &["/w/a.rs"]);
        assert_eq!(edit.as_tool().1["file_path"], "/w/a.rs");
    }

    #[test]
    fn the_answer_is_an_offered_option() {
        let a = ask("execute", "x", json!({}), &[]);
        assert_eq!(a.option_for(Verdict::Allow).unwrap().id, "proceed_once");
        assert_eq!(a.option_for(Verdict::Deny).unwrap().id, "cancel");
        let mut only_always = a.clone();
        only_always.options.retain(|o| o.kind == "allow_always");
        assert_eq!(
            only_always.option_for(Verdict::Allow).unwrap().id,
            "proceed_always"
        );
        assert_eq!(
            outcome(only_always.option_for(Verdict::Deny)),
            json!({"outcome": {"outcome": "cancelled"}})
        );
    }

    #[test]
    fn awtuis_own_tools_are_recognised_and_a_shell_call_named_like_one_is_not() {
        let names = ["channel_send", "task_done"];
        assert!(
            ask("other", "mcp__awtui__channel_send", json!({}), &[]).is_awtui_tool(&names, None)
        );
        assert!(
            ask("", "channel_send (awtui MCP Server)", json!({}), &[]).is_awtui_tool(&names, None)
        );
        assert!(!ask("execute", "channel_send", json!({}), &[]).is_awtui_tool(&names, None));
        assert!(!ask("other", "rm -rf /", json!({}), &[]).is_awtui_tool(&names, None));
        let mut codex = ask("", "", json!({}), &[]);
        codex.mcp_tool = true;
        assert!(codex.is_awtui_tool(&names, Some("awtui.channel_send")));
    }

    #[test]
    fn standing_permissions_answer_by_kind_and_place() {
        let dir = std::env::temp_dir().join(format!("awtui-acp-perm-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ws = dir.as_path();
        let inside = dir.join("a.rs").display().to_string();
        let outside = dir.join("../etc-x").display().to_string();
        let read = ask("read", "r", json!({}), &["/etc/passwd"]);
        let edit_in = ask("edit", "e", json!({}), &[&inside]);
        let edit_out = ask("edit", "e", json!({}), &[&outside]);
        let shell = ask("execute", "ls", json!({}), &[]);
        assert_eq!(
            standing_verdict(Permissions::ReadOnly, &read, ws),
            Verdict::Allow
        );
        assert_eq!(
            standing_verdict(Permissions::ReadOnly, &edit_in, ws),
            Verdict::Deny
        );
        assert_eq!(
            standing_verdict(Permissions::WorkspaceWrite, &edit_in, ws),
            Verdict::Allow
        );
        assert_eq!(
            standing_verdict(Permissions::WorkspaceWrite, &edit_out, ws),
            Verdict::Deny
        );
        assert_eq!(
            standing_verdict(Permissions::WorkspaceWrite, &shell, ws),
            Verdict::Deny
        );
        assert_eq!(
            standing_verdict(Permissions::Full, &shell, ws),
            Verdict::Allow
        );
    }
}
