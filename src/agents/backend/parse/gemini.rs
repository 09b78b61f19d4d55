//! Gemini CLI's `--output-format stream-json`: one JSON event a line, so
//! the control room shows tool calls as they happen. Events (seen with
//! gemini-cli 0.61): `init {session_id, model}`, `message {role, content,
//! delta?}`, `tool_use {tool_name, tool_id, parameters}`, `tool_result
//! {tool_id, status, output?, error?}`, `error {severity, message}` and
//! `result {status, stats, error?}` at the end.

use std::collections::HashMap;

use serde_json::Value;

use super::{StreamParser, count, json_line, str_field};
use crate::agents::backend::capped::{OUTPUT_CAP, push_capped};
use crate::agents::backend::event::{BackendEvent, Usage};
use crate::agents::backend::invocation::MCP_SERVER_NAME;

/// Parser for Gemini's event stream.
#[derive(Debug, Default)]
pub struct GeminiParser {
    /// The assistant's text so far (up to [`OUTPUT_CAP`]).
    answer: String,
    cut: bool,
    /// Tool names by call id, to name each result.
    tools: HashMap<String, String>,
    /// Whether the `result` event arrived.
    ended: bool,
}

/// Gemini names MCP tools `mcp_<server>_<tool>`; awtui's are reported as
/// every other CLI's are, `mcp__awtui__<tool>`.
fn tool_name(name: &str) -> String {
    match name.strip_prefix(&format!("mcp_{MCP_SERVER_NAME}_")) {
        Some(tool) => format!("mcp__{MCP_SERVER_NAME}__{tool}"),
        None => name.to_string(),
    }
}

impl StreamParser for GeminiParser {
    fn line(&mut self, line: &str) -> Vec<BackendEvent> {
        let Some(v) = json_line(line) else {
            return Vec::new();
        };
        match str_field(&v, "type").unwrap_or("") {
            "init" => str_field(&v, "session_id")
                .map(|id| vec![BackendEvent::Session { id: id.to_string() }])
                .unwrap_or_default(),
            "message" if str_field(&v, "role") == Some("assistant") => {
                let text = str_field(&v, "content").unwrap_or("");
                if !v.get("delta").and_then(Value::as_bool).unwrap_or(false) {
                    // A whole message replaces what came before.
                    self.answer.clear();
                }
                self.cut |= push_capped(&mut self.answer, text, OUTPUT_CAP);
                vec![BackendEvent::Text {
                    text: text.to_string(),
                }]
            }
            "tool_use" => {
                let name = tool_name(str_field(&v, "tool_name").unwrap_or("tool"));
                if let Some(id) = str_field(&v, "tool_id") {
                    self.tools.insert(id.to_string(), name.clone());
                }
                // Text before a tool call was narration, not the answer.
                self.answer.clear();
                vec![BackendEvent::ToolCall { name }]
            }
            "tool_result" => {
                let name = str_field(&v, "tool_id")
                    .and_then(|id| self.tools.get(id).cloned())
                    .unwrap_or_else(|| "tool".into());
                let ok = str_field(&v, "status") == Some("success");
                vec![BackendEvent::ToolDone { name, ok }]
            }
            "error" if str_field(&v, "severity") == Some("error") => vec![BackendEvent::Error {
                message: str_field(&v, "message")
                    .unwrap_or("gemini reported an error")
                    .to_string(),
            }],
            "result" => {
                self.ended = true;
                let stats = v.get("stats").unwrap_or(&Value::Null);
                let mut out = vec![BackendEvent::Usage {
                    usage: Usage {
                        input_tokens: count(stats, "input_tokens"),
                        output_tokens: count(stats, "output_tokens"),
                        cost_usd: None,
                    },
                }];
                if str_field(&v, "status") == Some("error") {
                    let message = v
                        .get("error")
                        .and_then(|e| str_field(e, "message"))
                        .unwrap_or("gemini reported an error");
                    out.push(BackendEvent::Error {
                        message: message.to_string(),
                    });
                } else {
                    out.push(BackendEvent::Final {
                        text: std::mem::take(&mut self.answer),
                    });
                }
                out
            }
            _ => Vec::new(),
        }
    }

    fn truncated(&self) -> bool {
        self.cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as gemini-cli 0.61 printed them in a real turn against the
    /// fake model (tests/it/real_clis.rs).
    const REAL: &[&str] = &[
        r#"{"type":"init","timestamp":"2026-11-23T14:20:40.795Z","session_id":"9ce95c88","model":"gemini-2.5-flash"}"#,
        r#"{"type":"message","timestamp":"2026-11-23T14:20:40.809Z","role":"user","content":"You are \\@a"}"#,
        r#"{"type":"tool_use","timestamp":"2026-11-23T14:20:40.965Z","tool_name":"mcp_awtui_channel_send","tool_id":"mcp_awtui_channel_send_1","parameters":{"message":"@user hello"}}"#,
        r#"{"type":"tool_result","timestamp":"2026-11-23T14:20:41.079Z","tool_id":"mcp_awtui_channel_send_1","status":"success","output":"{\"id\":2}"}"#,
        r#"{"type":"message","timestamp":"2026-11-23T14:20:41.099Z","role":"assistant","content":"All done ","delta":true}"#,
        r#"{"type":"message","timestamp":"2026-11-23T14:20:41.099Z","role":"assistant","content":"here.","delta":true}"#,
        r#"{"type":"result","timestamp":"2026-11-23T14:20:41.101Z","status":"success","stats":{"total_tokens":110,"input_tokens":100,"output_tokens":10,"tool_calls":1}}"#,
    ];

    #[test]
    fn a_real_turn_reports_tool_calls_live_and_the_answer_at_the_end() {
        let mut p = GeminiParser::default();
        let events: Vec<BackendEvent> = REAL.iter().flat_map(|l| p.line(l)).collect();
        let tool = "mcp__awtui__channel_send".to_string();
        assert_eq!(
            events,
            vec![
                BackendEvent::Session {
                    id: "9ce95c88".into()
                },
                BackendEvent::ToolCall { name: tool.clone() },
                BackendEvent::ToolDone {
                    name: tool,
                    ok: true
                },
                BackendEvent::Text {
                    text: "All done ".into()
                },
                BackendEvent::Text {
                    text: "here.".into()
                },
                BackendEvent::Usage {
                    usage: Usage {
                        input_tokens: 100,
                        output_tokens: 10,
                        cost_usd: None
                    }
                },
                BackendEvent::Final {
                    text: "All done here.".into()
                },
            ]
        );
        assert!(p.finish().is_empty());
    }

    #[test]
    fn errors_and_noise() {
        let mut p = GeminiParser::default();
        assert!(p.line("Loaded cached credentials.").is_empty());
        assert!(
            p.line(r#"{"type":"error","severity":"warning","message":"loop"}"#)
                .is_empty()
        );
        assert_eq!(
            p.line(r#"{"type":"result","status":"error","error":{"type":"ApiError","message":"quota"},"stats":{}}"#)[1],
            BackendEvent::Error {
                message: "quota".into()
            }
        );
    }
}
