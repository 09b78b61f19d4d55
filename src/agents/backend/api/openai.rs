//! The OpenAI Chat Completions API (and compatible servers such as Ollama),
//! streamed: content deltas, `tool_calls` deltas by index, usage in the last
//! chunk.

use serde_json::{Value, json};

use super::{ApiConfig, Call, Reporter, Step, ToolResult, ToolSpec, stream_request};
use crate::agents::backend::event::BackendEvent;

/// The messages of one turn so far.
#[derive(Debug)]
pub(super) struct Conversation {
    messages: Vec<Value>,
}

impl Conversation {
    pub(super) fn start(system: &str, prompt: &str) -> Self {
        let mut messages = Vec::new();
        if !system.is_empty() {
            messages.push(json!({ "role": "system", "content": system }));
        }
        messages.push(json!({ "role": "user", "content": prompt }));
        Conversation { messages }
    }

    /// Appends the model's tool calls and their results.
    pub(super) fn push_step(&mut self, step: &Step, results: &[ToolResult]) {
        let calls: Vec<Value> = step
            .calls
            .iter()
            .map(|c| json!({ "id": c.id, "type": "function", "function": { "name": c.name, "arguments": c.arguments } }))
            .collect();
        let content = if step.text.is_empty() {
            Value::Null
        } else {
            json!(step.text)
        };
        self.messages
            .push(json!({ "role": "assistant", "content": content, "tool_calls": calls }));
        for (call, r) in step.calls.iter().zip(results) {
            let content = if r.is_error {
                format!("error: {}", r.content)
            } else {
                r.content.clone()
            };
            self.messages
                .push(json!({ "role": "tool", "tool_call_id": call.id, "content": content }));
        }
    }
}

/// The request body for one call.
pub(super) fn body(cfg: &ApiConfig, c: &Conversation, specs: &[ToolSpec]) -> Value {
    let mut body = json!({
        "model": cfg.model,
        "messages": c.messages,
        "stream": true,
        "stream_options": { "include_usage": true },
    });
    if !specs.is_empty() {
        body["tools"] = specs
            .iter()
            .map(|s| json!({ "type": "function", "function": { "name": s.name, "description": s.description, "parameters": s.input_schema } }))
            .collect();
    }
    body
}

fn fold(step: &mut Step, data: &Value) {
    if let Some(u) = data.get("usage").filter(|u| u.is_object()) {
        let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
        step.usage.input_tokens = n("prompt_tokens");
        step.usage.output_tokens = n("completion_tokens");
    }
    let Some(choice) = data.pointer("/choices/0") else {
        return;
    };
    let delta = choice.get("delta").unwrap_or(&Value::Null);
    if let Some(text) = delta.get("content").and_then(Value::as_str) {
        step.text.push_str(text);
    }
    for tc in delta
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let index = tc.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
        while step.calls.len() <= index {
            step.calls.push(Call {
                id: String::new(),
                name: String::new(),
                arguments: String::new(),
            });
        }
        let call = &mut step.calls[index];
        if let Some(id) = tc.get("id").and_then(Value::as_str) {
            call.id = id.to_string();
        }
        if let Some(name) = tc.pointer("/function/name").and_then(Value::as_str) {
            call.name.push_str(name);
        }
        if let Some(args) = tc.pointer("/function/arguments").and_then(Value::as_str) {
            call.arguments.push_str(args);
        }
    }
    if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
        step.wants_tools = reason == "tool_calls";
    }
}

/// One streamed call.
pub(super) async fn call(
    http: &reqwest::Client,
    cfg: &ApiConfig,
    c: &Conversation,
    specs: &[ToolSpec],
    reporter: &mut Reporter<'_>,
) -> Result<Step, String> {
    let mut request = http
        .post(format!("{}/chat/completions", cfg.base_url))
        .header("content-type", "application/json")
        .body(body(cfg, c, specs).to_string());
    if let Some(key) = &cfg.api_key {
        request = request.header("authorization", format!("Bearer {key}"));
    }
    let mut step = Step::default();
    stream_request(request, |event| {
        if event.data.trim() == "[DONE]" {
            return Ok(());
        }
        match serde_json::from_str::<Value>(&event.data) {
            Ok(data) => {
                if let Some(message) = data.pointer("/error/message").and_then(Value::as_str) {
                    return Err(format!("the model API reported: {message}"));
                }
                fold(&mut step, &data);
                Ok(())
            }
            Err(_) => Ok(()),
        }
    })
    .await?;
    // Some servers stream tool calls yet finish with "stop".
    step.wants_tools |= !step.calls.is_empty();
    if !step.text.is_empty() {
        reporter.emit(BackendEvent::Text {
            text: step.text.clone(),
        });
    }
    Ok(step)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_tool_call_deltas_by_index() {
        let mut step = Step::default();
        for chunk in [
            r#"{"choices":[{"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"channel_send","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"message\":"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"hi\"}"}}]},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":7}}"#,
        ] {
            fold(&mut step, &serde_json::from_str(chunk).unwrap());
        }
        assert!(step.wants_tools);
        assert_eq!(step.calls[0].name, "channel_send");
        assert_eq!(step.calls[0].arguments, r#"{"message":"hi"}"#);
        assert_eq!((step.usage.input_tokens, step.usage.output_tokens), (50, 7));
    }
}
