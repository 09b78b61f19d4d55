//! opencode's `opencode run --format json` events: `step_start`, `text`,
//! `tool_use`, `step_finish` (per-step tokens and cost), `error`.

use serde_json::Value;

use super::{StreamParser, count, json_line, str_field};
use crate::agents::backend::capped::{OUTPUT_CAP, push_capped};
use crate::agents::backend::event::{BackendEvent, Usage, UsageMode};

/// Parser for opencode's JSON events.
#[derive(Debug, Default)]
pub struct OpencodeParser {
    session: Option<String>,
    /// Text of the current step; the last step's text is the answer.
    step_text: String,
    /// Whether `step_text` was cut at [`OUTPUT_CAP`].
    cut: bool,
    failed: bool,
}

impl StreamParser for OpencodeParser {
    fn line(&mut self, line: &str) -> Vec<BackendEvent> {
        let Some(v) = json_line(line) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if self.session.is_none()
            && let Some(id) = str_field(&v, "sessionID")
        {
            self.session = Some(id.to_string());
            out.push(BackendEvent::Session { id: id.to_string() });
        }
        let part = v.get("part").unwrap_or(&Value::Null);
        match str_field(&v, "type").unwrap_or("") {
            "step_start" => {
                self.step_text.clear();
                self.cut = false;
                out.push(BackendEvent::Thinking);
            }
            "text" => {
                if let Some(text) = str_field(part, "text") {
                    self.cut |= push_capped(&mut self.step_text, text, OUTPUT_CAP);
                    out.push(BackendEvent::Text {
                        text: text.to_string(),
                    });
                }
            }
            "tool_use" => {
                let name = str_field(part, "tool").unwrap_or("tool").to_string();
                let status = part.pointer("/state/status").and_then(Value::as_str);
                out.push(BackendEvent::ToolCall { name: name.clone() });
                if matches!(status, Some("completed") | Some("error")) {
                    out.push(BackendEvent::ToolDone {
                        name,
                        ok: status == Some("completed"),
                    });
                }
            }
            "step_finish" => {
                let t = part.get("tokens").unwrap_or(&Value::Null);
                out.push(BackendEvent::Usage {
                    usage: Usage {
                        input_tokens: count(t, "input")
                            + part
                                .pointer("/tokens/cache/read")
                                .and_then(Value::as_u64)
                                .unwrap_or(0),
                        output_tokens: count(t, "output"),
                        cost_usd: part.get("cost").and_then(Value::as_f64),
                    },
                });
            }
            "error" => {
                self.failed = true;
                let message = v
                    .pointer("/error/data/message")
                    .or_else(|| v.pointer("/error/message"))
                    .and_then(Value::as_str)
                    .unwrap_or("opencode reported an error");
                out.push(BackendEvent::Error {
                    message: message.to_string(),
                });
            }
            _ => {}
        }
        out
    }

    fn finish(&mut self) -> Vec<BackendEvent> {
        if self.failed {
            return Vec::new();
        }
        vec![BackendEvent::Final {
            text: std::mem::take(&mut self.step_text),
        }]
    }

    fn usage_mode(&self) -> UsageMode {
        UsageMode::PerStep
    }

    fn truncated(&self) -> bool {
        self.cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opencode_steps() {
        let mut p = OpencodeParser::default();
        let lines = [
            r#"{"type":"step_start","timestamp":1,"sessionID":"ses_1","part":{"type":"step-start"}}"#,
            r#"{"type":"tool_use","sessionID":"ses_1","part":{"type":"tool","tool":"awtui_channel_send","state":{"status":"completed","input":{}}}}"#,
            r#"{"type":"step_finish","sessionID":"ses_1","part":{"type":"step-finish","cost":0.001,"tokens":{"input":100,"output":10,"cache":{"read":50,"write":0}}}}"#,
            r#"{"type":"step_start","sessionID":"ses_1","part":{}}"#,
            r#"{"type":"text","sessionID":"ses_1","part":{"type":"text","text":"Sent it."}}"#,
        ];
        let mut events: Vec<_> = lines.iter().flat_map(|l| p.line(l)).collect();
        events.extend(p.finish());
        assert_eq!(
            events,
            vec![
                BackendEvent::Session { id: "ses_1".into() },
                BackendEvent::Thinking,
                BackendEvent::ToolCall {
                    name: "awtui_channel_send".into()
                },
                BackendEvent::ToolDone {
                    name: "awtui_channel_send".into(),
                    ok: true
                },
                BackendEvent::Usage {
                    usage: Usage {
                        input_tokens: 150,
                        output_tokens: 10,
                        cost_usd: Some(0.001)
                    }
                },
                BackendEvent::Thinking,
                BackendEvent::Text {
                    text: "Sent it.".into()
                },
                BackendEvent::Final {
                    text: "Sent it.".into()
                },
            ]
        );
        assert_eq!(p.usage_mode(), UsageMode::PerStep);
    }
}
