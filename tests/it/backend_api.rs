//! The API backends against a fake model server: streaming, tool use executed
//! in-process, usage, step limits and API errors.

use crate::fixture;
use crate::llm_server;

use std::sync::{Arc, Mutex};

use awtui::agents::backend::api::{self, ApiConfig, ToolExecutor, ToolResult, ToolSpec};
use awtui::workflow::BackendKind;
use fixture::collect;
use llm_server::{Scripted, sse};
use serde_json::{Value, json};

/// Records tool calls and answers them.
#[derive(Default)]
struct Tools {
    calls: Mutex<Vec<(String, Value)>>,
}

impl ToolExecutor for Tools {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "channel_send".into(),
            description: "post to the channel".into(),
            input_schema: json!({"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}),
        }]
    }
    fn call(&self, name: &str, arguments: &Value) -> ToolResult {
        self.calls
            .lock()
            .unwrap()
            .push((name.to_string(), arguments.clone()));
        ToolResult {
            content: "{\"id\":7}".into(),
            is_error: false,
        }
    }
}

fn config(kind: BackendKind, url: &str) -> ApiConfig {
    let mut c = ApiConfig::new(kind, "m", Some(url), None);
    c.api_key = Some("key-123".into());
    c
}

#[tokio::test]
async fn anthropic_tool_use_round_trip() {
    let tool_turn = sse(&[
        (
            "message_start",
            json!({"type":"message_start","message":{"usage":{"input_tokens":40,"output_tokens":1}}}),
        ),
        (
            "content_block_start",
            json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"tu1","name":"channel_send","input":{}}}),
        ),
        (
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"message\":\"@coder "}}),
        ),
        (
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"fix it\"}"}}),
        ),
        (
            "content_block_stop",
            json!({"type":"content_block_stop","index":0}),
        ),
        (
            "message_delta",
            json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":12}}),
        ),
        ("message_stop", json!({"type":"message_stop"})),
    ]);
    let final_turn = sse(&[
        (
            "message_start",
            json!({"type":"message_start","message":{"usage":{"input_tokens":60,"output_tokens":1}}}),
        ),
        (
            "content_block_start",
            json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        ),
        (
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Asked "}}),
        ),
        (
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"@coder."}}),
        ),
        (
            "content_block_stop",
            json!({"type":"content_block_stop","index":0}),
        ),
        (
            "message_delta",
            json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}),
        ),
    ]);
    let (url, recorded) = llm_server::start(vec![
        Scripted {
            status: 200,
            body: tool_turn,
        },
        Scripted {
            status: 200,
            body: final_turn,
        },
    ])
    .await;
    let tools = Arc::new(Tools::default());
    let turn = api::spawn(
        config(BackendKind::Anthropic, &url),
        "be brief".into(),
        "@reviewer go".into(),
        tools.clone(),
        None,
    );
    let (_, o) = collect(turn).await;
    assert!(o.success, "{:?}", o.error);
    assert_eq!(o.answer.as_deref(), Some("Asked @coder."));
    assert_eq!((o.usage.input_tokens, o.usage.output_tokens), (100, 17));
    assert_eq!(
        tools.calls.lock().unwrap()[0],
        (
            "channel_send".to_string(),
            json!({"message":"@coder fix it"})
        )
    );
    assert_eq!(o.tools_called, vec!["channel_send"]);

    let reqs = recorded.lock().unwrap();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].path, "/v1/messages");
    assert_eq!(reqs[0].header("x-api-key"), Some("key-123"));
    assert_eq!(reqs[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(reqs[0].body["system"], "be brief");
    assert_eq!(reqs[0].body["tools"][0]["name"], "channel_send");
    assert_eq!(reqs[0].body["stream"], true);
    let second = &reqs[1].body["messages"];
    assert_eq!(second[1]["content"][0]["type"], "tool_use");
    assert_eq!(second[2]["content"][0]["tool_use_id"], "tu1");
}

#[tokio::test]
async fn openai_tool_calls_round_trip() {
    let tool_turn = sse(&[
        (
            "",
            json!({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"channel_send","arguments":"{\"message\":\"hi @qa\"}"}}]}}]}),
        ),
        (
            "",
            json!({"choices":[{"delta":{},"finish_reason":"tool_calls"}]}),
        ),
        (
            "",
            json!({"choices":[],"usage":{"prompt_tokens":30,"completion_tokens":4}}),
        ),
    ]) + "data: [DONE]\n\n";
    let final_turn = sse(&[
        ("", json!({"choices":[{"delta":{"content":"Done."}}]})),
        ("", json!({"choices":[{"delta":{},"finish_reason":"stop"}]})),
        (
            "",
            json!({"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":2}}),
        ),
    ]) + "data: [DONE]\n\n";
    let (url, recorded) = llm_server::start(vec![
        Scripted {
            status: 200,
            body: tool_turn,
        },
        Scripted {
            status: 200,
            body: final_turn,
        },
    ])
    .await;
    let tools = Arc::new(Tools::default());
    let (_, o) = collect(api::spawn(
        config(BackendKind::Openai, &url),
        "sys".into(),
        "go".into(),
        tools.clone(),
        None,
    ))
    .await;
    assert!(o.success, "{:?}", o.error);
    assert_eq!(o.answer.as_deref(), Some("Done."));
    assert_eq!((o.usage.input_tokens, o.usage.output_tokens), (80, 6));
    assert_eq!(tools.calls.lock().unwrap().len(), 1);
    let reqs = recorded.lock().unwrap();
    assert_eq!(reqs[0].path, "/chat/completions");
    assert_eq!(reqs[0].header("authorization"), Some("Bearer key-123"));
    assert_eq!(reqs[0].body["messages"][0]["role"], "system");
    assert_eq!(reqs[0].body["tools"][0]["function"]["name"], "channel_send");
    let m = &reqs[1].body["messages"];
    assert_eq!(m[2]["tool_calls"][0]["id"], "c1");
    assert_eq!(m[3]["role"], "tool");
    assert_eq!(m[3]["tool_call_id"], "c1");
}

#[tokio::test]
async fn api_errors_and_step_limits_fail_with_reasons() {
    let (url, _) = llm_server::start(vec![Scripted {
        status: 401,
        body: "{\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}"
            .into(),
    }])
    .await;
    let (_, o) = collect(api::spawn(
        config(BackendKind::Anthropic, &url),
        String::new(),
        "x".into(),
        Arc::new(Tools::default()),
        None,
    ))
    .await;
    assert!(!o.success);
    assert!(
        o.error.as_deref().unwrap().contains("401")
            && o.error.as_deref().unwrap().contains("invalid x-api-key"),
        "{:?}",
        o.error
    );

    let looping = || Scripted {
        status: 200,
        body: sse(&[(
            "",
            json!({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"channel_send","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}),
        )]),
    };
    let (url, _) = llm_server::start(vec![looping(), looping()]).await;
    let mut cfg = config(BackendKind::Openai, &url);
    cfg.max_steps = 2;
    let (_, o) = collect(api::spawn(
        cfg,
        String::new(),
        "x".into(),
        Arc::new(Tools::default()),
        None,
    ))
    .await;
    assert_eq!(
        o.error.as_deref(),
        Some("no final answer after 2 model calls (the step limit of one turn)")
    );
}
