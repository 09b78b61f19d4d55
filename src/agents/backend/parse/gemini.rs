//! Gemini CLI's `--output-format json`: one JSON document when the run ends,
//! `{response, stats, error, session_id?}`.

use serde_json::Value;

use super::{StreamParser, count, str_field};
use crate::agents::backend::capped::{OUTPUT_CAP, cap_label, push_capped};
use crate::agents::backend::event::{BackendEvent, Usage};

/// Parser for Gemini's single JSON document (collected up to
/// [`OUTPUT_CAP`], parsed at the end).
#[derive(Debug, Default)]
pub struct GeminiParser {
    buffer: String,
    cut: bool,
}

impl StreamParser for GeminiParser {
    fn line(&mut self, line: &str) -> Vec<BackendEvent> {
        // The document may be preceded by notices such as "Loaded cached
        // credentials."; keep everything from its first line on.
        if !self.buffer.is_empty() || line.trim_start().starts_with('{') {
            self.cut = self.cut
                || push_capped(&mut self.buffer, line, OUTPUT_CAP)
                || push_capped(&mut self.buffer, "\n", OUTPUT_CAP);
        }
        Vec::new()
    }

    fn finish(&mut self) -> Vec<BackendEvent> {
        if self.cut {
            return vec![BackendEvent::Error {
                message: format!("gemini's output is larger than {}", cap_label()),
            }];
        }
        let Ok(v) = serde_json::from_str::<Value>(&self.buffer) else {
            return if self.buffer.trim().is_empty() {
                Vec::new()
            } else {
                vec![BackendEvent::Error {
                    message: "gemini printed output that is not JSON".into(),
                }]
            };
        };
        let mut out = Vec::new();
        if let Some(id) = str_field(&v, "session_id").or_else(|| str_field(&v, "sessionId")) {
            out.push(BackendEvent::Session { id: id.to_string() });
        }
        if let Some(models) = v.pointer("/stats/models").and_then(Value::as_object) {
            let mut usage = Usage::default();
            for m in models.values() {
                let t = m.get("tokens").unwrap_or(&Value::Null);
                usage.input_tokens += count(t, "prompt");
                usage.output_tokens += count(t, "candidates");
            }
            out.push(BackendEvent::Usage { usage });
        }
        if let Some(tools) = v.pointer("/stats/tools/byName").and_then(Value::as_object) {
            for (name, stats) in tools {
                let ok = count(stats, "fail") == 0;
                out.push(BackendEvent::ToolDone {
                    name: name.clone(),
                    ok,
                });
            }
        }
        match v.get("error").filter(|e| !e.is_null()) {
            Some(e) => {
                let message = str_field(e, "message").unwrap_or("gemini reported an error");
                out.push(BackendEvent::Error {
                    message: message.to_string(),
                });
            }
            None => out.push(BackendEvent::Final {
                text: str_field(&v, "response").unwrap_or("").to_string(),
            }),
        }
        out
    }

    fn truncated(&self) -> bool {
        self.cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_document_after_notices() {
        let mut p = GeminiParser::default();
        for l in [
            "Loaded cached credentials.",
            r#"{"session_id":"g-1","response":"Reviewed.","#,
            r#" "stats":{"models":{"gemini-2.5-pro":{"tokens":{"prompt":300,"candidates":20,"total":320}}},"tools":{"byName":{"channel_send":{"count":1,"success":1,"fail":0}}}}}"#,
        ] {
            assert!(p.line(l).is_empty());
        }
        assert_eq!(
            p.finish(),
            vec![
                BackendEvent::Session { id: "g-1".into() },
                BackendEvent::Usage {
                    usage: Usage {
                        input_tokens: 300,
                        output_tokens: 20,
                        cost_usd: None
                    }
                },
                BackendEvent::ToolDone {
                    name: "channel_send".into(),
                    ok: true
                },
                BackendEvent::Final {
                    text: "Reviewed.".into()
                },
            ]
        );
    }

    #[test]
    fn gemini_error_and_garbage() {
        let mut p = GeminiParser::default();
        p.line(r#"{"error":{"type":"ApiError","message":"quota"}}"#);
        assert_eq!(
            p.finish(),
            vec![BackendEvent::Error {
                message: "quota".into()
            }]
        );
        let mut p = GeminiParser::default();
        p.line("{ not json");
        assert!(matches!(p.finish()[0], BackendEvent::Error { .. }));
    }
}
