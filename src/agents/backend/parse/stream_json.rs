//! Claude Code's `--output-format stream-json --verbose`, which Cursor's
//! `cursor-agent -p --output-format stream-json` mirrors (plus its own
//! `tool_call` events).

use std::collections::HashMap;

use serde_json::Value;

use super::{StreamParser, count, json_line, str_field};
use crate::agents::backend::event::{BackendEvent, Usage};
use crate::agents::backend::invocation::MCP_SERVER_NAME;

/// Parser for Claude-style stream-json.
#[derive(Debug, Default)]
pub struct StreamJsonParser {
    /// Tool names by call id, to name the results.
    tools: HashMap<String, String>,
    /// awtui's server status from the `init` event's `mcp_servers`.
    connected: Option<bool>,
    /// Tools refused for lack of permission (the `result` event's
    /// `permission_denials`).
    refused: Vec<String>,
}

impl StreamParser for StreamJsonParser {
    fn line(&mut self, line: &str) -> Vec<BackendEvent> {
        let Some(v) = json_line(line) else {
            return Vec::new();
        };
        match str_field(&v, "type").unwrap_or("") {
            "system" => {
                if let Some(servers) = v.get("mcp_servers").and_then(Value::as_array) {
                    let awtui = servers
                        .iter()
                        .find(|s| str_field(s, "name") == Some(MCP_SERVER_NAME));
                    self.connected =
                        Some(awtui.is_some_and(|s| str_field(s, "status") == Some("connected")));
                }
                session(&v).into_iter().collect()
            }
            "assistant" => self.assistant(&v),
            "user" => self.tool_results(&v),
            "tool_call" => self.cursor_tool_call(&v),
            "result" => {
                for denial in v
                    .get("permission_denials")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let name = str_field(denial, "tool_name")
                        .unwrap_or("a tool")
                        .to_string();
                    if !self.refused.contains(&name) {
                        self.refused.push(name);
                    }
                }
                result(&v)
            }
            _ => Vec::new(),
        }
    }

    fn tools_connected(&self) -> Option<bool> {
        self.connected
    }

    fn refused(&self) -> Vec<String> {
        self.refused.clone()
    }
}

fn session(v: &Value) -> Option<BackendEvent> {
    str_field(v, "session_id").map(|id| BackendEvent::Session { id: id.to_string() })
}

fn content(v: &Value) -> &[Value] {
    v.pointer("/message/content")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

impl StreamJsonParser {
    fn assistant(&mut self, v: &Value) -> Vec<BackendEvent> {
        let mut out = Vec::new();
        for part in content(v) {
            match str_field(part, "type") {
                Some("text") => {
                    if let Some(text) = str_field(part, "text") {
                        out.push(BackendEvent::Text {
                            text: text.to_string(),
                        });
                    }
                }
                Some("thinking") | Some("redacted_thinking") => out.push(BackendEvent::Thinking),
                Some("tool_use") => {
                    let name = str_field(part, "name").unwrap_or("tool").to_string();
                    if let Some(id) = str_field(part, "id") {
                        self.tools.insert(id.to_string(), name.clone());
                    }
                    out.push(BackendEvent::ToolCall { name });
                }
                _ => {}
            }
        }
        out
    }

    fn tool_results(&mut self, v: &Value) -> Vec<BackendEvent> {
        content(v)
            .iter()
            .filter(|p| str_field(p, "type") == Some("tool_result"))
            .map(|p| {
                let id = str_field(p, "tool_use_id").unwrap_or("");
                let name = self.tools.remove(id).unwrap_or_else(|| "tool".into());
                let failed = p.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                BackendEvent::ToolDone { name, ok: !failed }
            })
            .collect()
    }

    /// Cursor: `{"type":"tool_call","subtype":"started"|"completed","call_id":…,
    /// "tool_call":{"<kind>ToolCall":{"args":{…},"result":{…}}}}`.
    fn cursor_tool_call(&mut self, v: &Value) -> Vec<BackendEvent> {
        let Some((kind, call)) = v
            .get("tool_call")
            .and_then(Value::as_object)
            .and_then(|o| o.iter().next())
        else {
            return Vec::new();
        };
        let name = call
            .pointer("/args/toolName")
            .or_else(|| call.pointer("/args/name"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| kind.trim_end_matches("ToolCall").to_string());
        match str_field(v, "subtype") {
            Some("started") => vec![BackendEvent::ToolCall { name }],
            Some("completed") => {
                let ok = call.pointer("/result/error").is_none()
                    && call.pointer("/result/rejected").is_none();
                vec![BackendEvent::ToolDone { name, ok }]
            }
            _ => Vec::new(),
        }
    }
}

fn result(v: &Value) -> Vec<BackendEvent> {
    let mut out: Vec<BackendEvent> = session(v).into_iter().collect();
    if let Some(u) = v.get("usage") {
        let input = count(u, "input_tokens")
            + count(u, "cache_creation_input_tokens")
            + count(u, "cache_read_input_tokens");
        out.push(BackendEvent::Usage {
            usage: Usage {
                input_tokens: input,
                output_tokens: count(u, "output_tokens"),
                cost_usd: v.get("total_cost_usd").and_then(Value::as_f64),
            },
        });
    }
    let is_error = v.get("is_error").and_then(Value::as_bool).unwrap_or(false)
        || str_field(v, "subtype").is_some_and(|s| s != "success");
    let text = str_field(v, "result").unwrap_or("").to_string();
    if is_error {
        let message = if text.is_empty() {
            format!(
                "the agent reported {}",
                str_field(v, "subtype").unwrap_or("an error")
            )
        } else {
            text
        };
        out.push(BackendEvent::Error { message });
    } else {
        out.push(BackendEvent::Final { text });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_denials_are_collected() {
        let mut p = StreamJsonParser::default();
        p.line(r#"{"type":"result","subtype":"success","result":"ok","permission_denials":[{"tool_name":"Write","tool_use_id":"t1","tool_input":{}},{"tool_name":"Write","tool_use_id":"t2","tool_input":{}},{"tool_name":"Bash","tool_use_id":"t3","tool_input":{}}]}"#);
        assert_eq!(p.refused(), ["Write", "Bash"]);
    }

    #[test]
    fn the_init_event_says_whether_awtuis_server_connected() {
        let mut p = StreamJsonParser::default();
        assert_eq!(p.tools_connected(), None);
        p.line(r#"{"type":"system","subtype":"init","session_id":"s","mcp_servers":[{"name":"awtui","status":"connected"}]}"#);
        assert_eq!(p.tools_connected(), Some(true));
        let mut p = StreamJsonParser::default();
        p.line(r#"{"type":"system","subtype":"init","session_id":"s","mcp_servers":[{"name":"awtui","status":"failed"},{"name":"gh","status":"connected"}]}"#);
        assert_eq!(p.tools_connected(), Some(false));
        let mut p = StreamJsonParser::default();
        p.line(r#"{"type":"system","subtype":"init","session_id":"s","mcp_servers":[]}"#);
        assert_eq!(p.tools_connected(), Some(false));
    }

    fn run(lines: &[&str]) -> Vec<BackendEvent> {
        let mut p = StreamJsonParser::default();
        lines.iter().flat_map(|l| p.line(l)).collect()
    }

    #[test]
    fn claude_stream() {
        let events = run(&[
            r#"{"type":"system","subtype":"init","session_id":"s-1","tools":["mcp__awtui__channel_send"],"mcp_servers":[{"name":"awtui","status":"connected"}]}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"hm"},{"type":"tool_use","id":"t1","name":"mcp__awtui__channel_send","input":{"message":"@coder hi"}}]},"session_id":"s-1"}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"{}"}]}}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Posted."}]}}"#,
            "not json at all",
            r#"{"type":"result","subtype":"success","is_error":false,"result":"Posted.","session_id":"s-1","total_cost_usd":0.0123,"usage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":5}}"#,
        ]);
        assert_eq!(
            events,
            vec![
                BackendEvent::Session { id: "s-1".into() },
                BackendEvent::Thinking,
                BackendEvent::ToolCall {
                    name: "mcp__awtui__channel_send".into()
                },
                BackendEvent::ToolDone {
                    name: "mcp__awtui__channel_send".into(),
                    ok: true
                },
                BackendEvent::Text {
                    text: "Posted.".into()
                },
                BackendEvent::Session { id: "s-1".into() },
                BackendEvent::Usage {
                    usage: Usage {
                        input_tokens: 100,
                        output_tokens: 5,
                        cost_usd: Some(0.0123)
                    }
                },
                BackendEvent::Final {
                    text: "Posted.".into()
                },
            ]
        );
    }

    #[test]
    fn claude_error_result() {
        let events = run(&[
            r#"{"type":"result","subtype":"error_max_turns","is_error":true,"session_id":"s"}"#,
        ]);
        assert_eq!(
            events.last(),
            Some(&BackendEvent::Error {
                message: "the agent reported error_max_turns".into()
            })
        );
    }

    #[test]
    fn cursor_tool_calls() {
        let events = run(&[
            r#"{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"mcpToolCall":{"args":{"name":"awtui-channel_send","toolName":"channel_send"}}}}"#,
            r#"{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"mcpToolCall":{"args":{"toolName":"channel_send"},"result":{"success":{}}}}}"#,
            r#"{"type":"tool_call","subtype":"completed","call_id":"c2","tool_call":{"readToolCall":{"args":{"path":"x"},"result":{"error":{"message":"nope"}}}}}"#,
        ]);
        assert_eq!(
            events,
            vec![
                BackendEvent::ToolCall {
                    name: "channel_send".into()
                },
                BackendEvent::ToolDone {
                    name: "channel_send".into(),
                    ok: true
                },
                BackendEvent::ToolDone {
                    name: "read".into(),
                    ok: false
                },
            ]
        );
    }
}
