//! Codex's `codex exec --json` JSONL events (`thread.started`,
//! `item.started`/`item.completed`, `turn.completed`, `turn.failed`, `error`).

use serde_json::Value;

use super::{StreamParser, count, json_line, str_field};
use crate::agents::backend::event::{BackendEvent, Usage};

/// Parser for Codex exec events.
#[derive(Debug, Default)]
pub struct CodexParser {
    /// The last agent message: the turn's answer.
    last_message: Option<String>,
}

fn item_tool_name(item: &Value) -> Option<String> {
    match str_field(item, "type")? {
        "mcp_tool_call" => Some(str_field(item, "tool").unwrap_or("mcp").to_string()),
        "command_execution" => Some("shell".into()),
        "file_change" => Some("edit".into()),
        "web_search" => Some("web_search".into()),
        _ => None,
    }
}

impl StreamParser for CodexParser {
    fn line(&mut self, line: &str) -> Vec<BackendEvent> {
        let Some(v) = json_line(line) else {
            return Vec::new();
        };
        let item = v.get("item").unwrap_or(&Value::Null);
        match str_field(&v, "type").unwrap_or("") {
            "thread.started" => str_field(&v, "thread_id")
                .map(|id| BackendEvent::Session { id: id.to_string() })
                .into_iter()
                .collect(),
            "turn.started" => vec![BackendEvent::Thinking],
            "item.started" => item_tool_name(item)
                .map(|name| BackendEvent::ToolCall { name })
                .into_iter()
                .collect(),
            "item.completed" => self.completed(item),
            "turn.completed" => {
                let u = v.get("usage").unwrap_or(&Value::Null);
                let mut out = vec![BackendEvent::Usage {
                    usage: Usage {
                        input_tokens: count(u, "input_tokens"),
                        output_tokens: count(u, "output_tokens"),
                        cost_usd: None,
                    },
                }];
                out.push(BackendEvent::Final {
                    text: self.last_message.take().unwrap_or_default(),
                });
                out
            }
            "turn.failed" | "error" => {
                let message = v
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .or_else(|| str_field(&v, "message"))
                    .unwrap_or("codex reported an error");
                vec![BackendEvent::Error {
                    message: message.to_string(),
                }]
            }
            _ => Vec::new(),
        }
    }
}

impl CodexParser {
    fn completed(&mut self, item: &Value) -> Vec<BackendEvent> {
        match str_field(item, "type") {
            Some("agent_message") => {
                let text = str_field(item, "text").unwrap_or("").to_string();
                self.last_message = Some(text.clone());
                vec![BackendEvent::Text { text }]
            }
            Some("reasoning") => vec![BackendEvent::Thinking],
            _ => {
                let Some(name) = item_tool_name(item) else {
                    return Vec::new();
                };
                let ok = match str_field(item, "status") {
                    Some(s) => s == "completed",
                    None => item.get("exit_code").and_then(Value::as_i64).unwrap_or(0) == 0,
                } && item.get("error").is_none_or(Value::is_null);
                vec![BackendEvent::ToolDone { name, ok }]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_exec_stream() {
        let mut p = CodexParser::default();
        let lines = [
            r#"{"type":"thread.started","thread_id":"th-9"}"#,
            r#"{"type":"turn.started"}"#,
            r#"{"type":"item.started","item":{"id":"i1","type":"mcp_tool_call","server":"awtui","tool":"inbox_check","status":"in_progress"}}"#,
            r#"{"type":"item.completed","item":{"id":"i1","type":"mcp_tool_call","server":"awtui","tool":"inbox_check","status":"completed"}}"#,
            r#"{"type":"item.completed","item":{"id":"i2","type":"command_execution","command":"ls","exit_code":2,"status":"failed"}}"#,
            r#"{"type":"item.completed","item":{"id":"i3","type":"agent_message","text":"All done."}}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":1000,"output_tokens":30}}"#,
        ];
        let events: Vec<_> = lines.iter().flat_map(|l| p.line(l)).collect();
        assert_eq!(
            events,
            vec![
                BackendEvent::Session { id: "th-9".into() },
                BackendEvent::Thinking,
                BackendEvent::ToolCall {
                    name: "inbox_check".into()
                },
                BackendEvent::ToolDone {
                    name: "inbox_check".into(),
                    ok: true
                },
                BackendEvent::ToolDone {
                    name: "shell".into(),
                    ok: false
                },
                BackendEvent::Text {
                    text: "All done.".into()
                },
                BackendEvent::Usage {
                    usage: Usage {
                        input_tokens: 1200,
                        output_tokens: 30,
                        cost_usd: None
                    }
                },
                BackendEvent::Final {
                    text: "All done.".into()
                },
            ]
        );
    }

    #[test]
    fn codex_failures() {
        let mut p = CodexParser::default();
        assert_eq!(
            p.line(r#"{"type":"turn.failed","error":{"message":"stream disconnected"}}"#),
            vec![BackendEvent::Error {
                message: "stream disconnected".into()
            }]
        );
        assert_eq!(
            p.line(r#"{"type":"error","message":"quota exceeded"}"#),
            vec![BackendEvent::Error {
                message: "quota exceeded".into()
            }]
        );
    }
}
