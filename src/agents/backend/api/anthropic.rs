//! The Anthropic Messages API, streamed: text and `tool_use` blocks, usage
//! from `message_start` and `message_delta`.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::{ApiConfig, Call, Reporter, Step, ToolResult, ToolSpec, stream_request};
use crate::agents::backend::event::BackendEvent;

/// The messages of one turn so far.
#[derive(Debug)]
pub(super) struct Conversation {
    messages: Vec<Value>,
}

impl Conversation {
    pub(super) fn start(prompt: &str) -> Self {
        Conversation {
            messages: vec![json!({ "role": "user", "content": prompt })],
        }
    }

    /// Appends the model's tool calls and their results.
    pub(super) fn push_step(&mut self, step: &Step, results: &[ToolResult]) {
        let mut blocks = Vec::new();
        if !step.text.is_empty() {
            blocks.push(json!({ "type": "text", "text": step.text }));
        }
        for call in &step.calls {
            let input: Value = serde_json::from_str(&call.arguments).unwrap_or(json!({}));
            blocks.push(
                json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": input }),
            );
        }
        self.messages
            .push(json!({ "role": "assistant", "content": blocks }));
        let results: Vec<Value> = step
            .calls
            .iter()
            .zip(results)
            .map(|(call, r)| {
                json!({ "type": "tool_result", "tool_use_id": call.id, "content": r.content, "is_error": r.is_error })
            })
            .collect();
        self.messages
            .push(json!({ "role": "user", "content": results }));
    }
}

/// The request body for one call.
pub(super) fn body(cfg: &ApiConfig, system: &str, c: &Conversation, specs: &[ToolSpec]) -> Value {
    let mut body = json!({
        "model": cfg.model,
        "max_tokens": cfg.max_tokens,
        "messages": c.messages,
        "stream": true,
    });
    if !system.is_empty() {
        body["system"] = json!(system);
    }
    if !specs.is_empty() {
        body["tools"] = specs
            .iter()
            .map(|s| json!({ "name": s.name, "description": s.description, "input_schema": s.input_schema }))
            .collect();
    }
    body
}

enum Block {
    Text(String),
    Tool(usize),
}

/// Folds the stream of one call into a [`Step`].
#[derive(Default)]
struct Folder {
    step: Step,
    blocks: HashMap<u64, Block>,
}

impl Folder {
    fn event(&mut self, data: &Value, reporter: &mut Reporter<'_>) -> Result<(), String> {
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match data.get("type").and_then(Value::as_str).unwrap_or("") {
            "message_start" => {
                let u = data.pointer("/message/usage").unwrap_or(&Value::Null);
                let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
                self.step.usage.input_tokens = n("input_tokens")
                    + n("cache_creation_input_tokens")
                    + n("cache_read_input_tokens");
                self.step.usage.output_tokens = n("output_tokens");
            }
            "content_block_start" => {
                let block = data.get("content_block").unwrap_or(&Value::Null);
                if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                    let s = |k: &str| {
                        block
                            .get(k)
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string()
                    };
                    self.step.calls.push(Call {
                        id: s("id"),
                        name: s("name"),
                        arguments: String::new(),
                    });
                    self.blocks
                        .insert(index, Block::Tool(self.step.calls.len() - 1));
                } else {
                    self.blocks.insert(index, Block::Text(String::new()));
                }
            }
            "content_block_delta" => {
                let delta = data.get("delta").unwrap_or(&Value::Null);
                match self.blocks.get_mut(&index) {
                    Some(Block::Text(text)) => {
                        text.push_str(delta.get("text").and_then(Value::as_str).unwrap_or(""));
                    }
                    Some(Block::Tool(i)) => {
                        let part = delta
                            .get("partial_json")
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        self.step.calls[*i].arguments.push_str(part);
                    }
                    None => {}
                }
            }
            "content_block_stop" => {
                if let Some(Block::Text(text)) = self.blocks.remove(&index)
                    && !text.is_empty()
                {
                    reporter.emit(BackendEvent::Text { text: text.clone() });
                    self.step.text.push_str(&text);
                }
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.step.wants_tools = reason == "tool_use";
                }
                if let Some(out) = data.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    self.step.usage.output_tokens = out;
                }
            }
            "error" => {
                let message = data
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("stream error");
                return Err(format!("the model API reported: {message}"));
            }
            _ => {}
        }
        Ok(())
    }
}

/// One streamed call.
pub(super) async fn call(
    http: &reqwest::Client,
    cfg: &ApiConfig,
    system: &str,
    c: &Conversation,
    specs: &[ToolSpec],
    reporter: &mut Reporter<'_>,
) -> Result<Step, String> {
    let mut request = http
        .post(format!("{}/v1/messages", cfg.base_url))
        .header("anthropic-version", "2023-06-01")
        .header("content-type", "application/json")
        .body(body(cfg, system, c, specs).to_string());
    if let Some(key) = &cfg.api_key {
        request = request.header("x-api-key", key);
    }
    let mut folder = Folder::default();
    stream_request(request, |event| {
        match serde_json::from_str::<Value>(&event.data) {
            Ok(data) => folder.event(&data, reporter),
            Err(_) => Ok(()),
        }
    })
    .await?;
    Ok(folder.step)
}
