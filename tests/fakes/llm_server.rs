//! A fake model API for tests (fixture, never shipped): an HTTP/1.1 server on
//! loopback that records each request and answers it.
//!
//! Two ways to answer: [`start`] plays a fixed list of responses in order
//! (for the API backends' unit-like tests); [`start_model`] is a scripted
//! model that speaks what each real agent CLI needs (Anthropic Messages,
//! OpenAI Responses and Chat Completions, Gemini generateContent and
//! streamGenerateContent), streamed or not: when the request offers the
//! scripted tool and does not yet carry its result, it calls the tool; then
//! it answers with the final text.
#![allow(dead_code)] // Each test binary uses a different part of this fixture.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A recorded request.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`Null` when it is not JSON).
    pub body: Value,
    /// The body as text (lossy), for searching every byte sent.
    pub raw: String,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One scripted answer: status and body (SSE text for streams).
pub struct Scripted {
    pub status: u16,
    pub body: String,
}

/// Builds an SSE body from `(event, json)` pairs (`event` may be empty).
pub fn sse(events: &[(&str, Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| {
            let head = if name.is_empty() {
                String::new()
            } else {
                format!("event: {name}\n")
            };
            format!("{head}data: {data}\n\n")
        })
        .collect()
}

/// The recorded requests of a running fake.
pub type Log = Arc<Mutex<Vec<Recorded>>>;

/// Starts the server answering with `script`, in order; returns its base
/// URL and the recorded requests.
pub async fn start(script: Vec<Scripted>) -> (String, Log) {
    let script = Mutex::new(script.into_iter());
    serve(move |_| {
        script.lock().unwrap().next().unwrap_or(Scripted {
            status: 500,
            body: "{\"error\":{\"message\":\"script exhausted\"}}".into(),
        })
    })
    .await
}

/// What the scripted model does in a turn.
#[derive(Clone, Debug)]
pub struct ModelScript {
    /// The tool to call (matched by suffix: `mcp__awtui__channel_send`,
    /// `awtui_channel_send` and `channel_send` all match `channel_send`).
    pub tool: String,
    /// The tool call's arguments.
    pub arguments: Value,
    /// The text answered once the tool's result is in the request (or when
    /// the request offers no such tool).
    pub final_text: String,
    /// When set, every model request is refused with HTTP 400 and this
    /// message, in the API's own error shape.
    pub refuse: Option<String>,
}

/// Starts the scripted model; returns its base URL (no `/v1`) and the
/// recorded requests.
pub async fn start_model(script: ModelScript) -> (String, Log) {
    serve(move |req| answer_model(&script, req)).await
}

/// Starts a model (Anthropic Messages only) that makes the tool calls of
/// `steps` one after the other, one per request, as long as the request
/// offers the tool: the call made next is the one after as many as the
/// request carries results of. Then it answers `final_text`.
pub async fn start_steps(steps: Vec<(String, Value)>, final_text: &str) -> (String, Log) {
    let final_text = final_text.to_string();
    serve(move |req| {
        let path = req.path.split('?').next().unwrap_or("");
        let ok = |body: String| Scripted { status: 200, body };
        if path.ends_with("/messages/count_tokens") {
            return ok(json!({"input_tokens": 10}).to_string());
        }
        if !path.ends_with("/messages") {
            return Scripted {
                status: 404,
                body: json!({"error": {"message": format!("the fake model has no {path}")}})
                    .to_string(),
            };
        }
        let body = &req.body;
        let results = body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .filter(|b| b["type"] == "tool_result")
            .count();
        let stream = body["stream"].as_bool().unwrap_or(false);
        let model = body["model"].as_str().unwrap_or("m");
        let step = steps.get(results);
        let script = ModelScript {
            tool: step.map(|s| s.0.clone()).unwrap_or_default(),
            arguments: step.map(|s| s.1.clone()).unwrap_or(Value::Null),
            final_text: final_text.clone(),
            refuse: None,
        };
        let mv = match step.and_then(|(tool, _)| offered(&body["tools"], tool)) {
            Some(name) => Move::Call(name),
            None => Move::Answer,
        };
        ok(anthropic_call(
            &script,
            mv,
            stream,
            model,
            &format!("toolu_{:02}", results + 1),
        ))
    })
    .await
}

/// Starts a model speaking Anthropic Messages, OpenAI Responses and Chat
/// Completions that makes the tool calls of `steps` one after the other,
/// one per request, as long as the request offers the tool (the call made
/// next is the one after as many as the request carries results of), then
/// answers `final_text`. Arguments may name what the conversation holds:
/// `{wf}` and `{ag}` are the first workflow and registration ids in the
/// tool results so far, `{task:NAME}` the id of the task named NAME
/// anywhere in the request (the announcement in the prompt).
pub async fn start_steps_any(steps: Vec<(String, Value)>, final_text: &str) -> (String, Log) {
    let final_text = final_text.to_string();
    serve(move |req| {
        let path = req.path.split('?').next().unwrap_or("");
        let body = &req.body;
        let ok = |body: String| Scripted { status: 200, body };
        if path.ends_with("/messages/count_tokens") {
            return ok(json!({"input_tokens": 10}).to_string());
        }
        if path.ends_with("/models") {
            return ok(json!({"object": "list", "data": [], "models": []}).to_string());
        }
        let items = |list: &Value, key: &str, value: &str| -> Vec<Value> {
            list.as_array()
                .into_iter()
                .flatten()
                .flat_map(|m| match &m["content"] {
                    Value::Array(blocks) if key == "type" && value == "tool_result" => {
                        blocks.clone()
                    }
                    _ => vec![m.clone()],
                })
                .filter(|b| b[key] == value)
                .collect()
        };
        let results = if path.ends_with("/messages") {
            items(&body["messages"], "type", "tool_result")
        } else if path.ends_with("/responses") {
            items(&body["input"], "type", "function_call_output")
        } else if path.ends_with("/chat/completions") {
            items(&body["messages"], "role", "tool")
        } else {
            return Scripted {
                status: 404,
                body: json!({"error": {"message": format!("the fake model has no {path}")}})
                    .to_string(),
            };
        };
        let seen = Value::Array(results.clone()).to_string();
        let step = steps.get(results.len());
        let script = ModelScript {
            tool: step.map(|s| s.0.clone()).unwrap_or_default(),
            arguments: step.map_or(Value::Null, |s| fill(&s.1, &seen, &req.raw)),
            final_text: final_text.clone(),
            refuse: None,
        };
        let mv = match step.and_then(|(tool, _)| offered(&body["tools"], tool)) {
            Some(name) => Move::Call(name),
            None => Move::Answer,
        };
        let stream = body["stream"].as_bool().unwrap_or(false);
        let id = format!("call_{:02}", results.len() + 1);
        if path.ends_with("/messages") {
            let model = body["model"].as_str().unwrap_or("m");
            ok(anthropic_call(
                &script,
                mv,
                stream,
                model,
                &format!("toolu_{id}"),
            ))
        } else if path.ends_with("/responses") {
            ok(responses(&script, mv, stream, &id))
        } else {
            ok(chat(&script, mv, stream, &id))
        }
    })
    .await
}

/// Starts a model, speaking every API [`start_model`] speaks, that does
/// what the latest prompt says, so one conversation can run several turns
/// (an ACP session): each `[[shell: CMD]]` in the latest user text is a
/// call of the CLI's own shell tool with `CMD` (`[[shell!: CMD]]` asks for
/// it outside the sandbox, which Codex asks the person about), each
/// `[[call: TOOL JSON]]` a call of `TOOL` (matched as in [`start_model`])
/// with those arguments, in order (those of the last line that has any:
/// the newest message), one per request: the call made next is
/// the one after as many as the request carries results of since that
/// prompt. Then, or when the tool is not offered, it answers `final_text`.
/// System reminders (text starting `<system-reminder>`) are not prompts.
pub async fn start_directed(final_text: &str) -> (String, Log) {
    let final_text = final_text.to_string();
    let counter = std::sync::atomic::AtomicUsize::new(0);
    serve(move |req| {
        let path = req.path.split('?').next().unwrap_or("");
        let ok = |body: String| Scripted { status: 200, body };
        if path.ends_with("/messages/count_tokens") {
            return ok(json!({"input_tokens": 10}).to_string());
        }
        if path.contains(":countTokens") {
            return ok(json!({"totalTokens": 10}).to_string());
        }
        if path.ends_with("/models") {
            return ok(json!({"object": "list", "data": [], "models": []}).to_string());
        }
        let Some(api) = Api::of(path) else {
            return Scripted {
                status: 404,
                body: json!({"error": {"message": format!("the fake model has no {path}")}})
                    .to_string(),
            };
        };
        let body = &req.body;
        let (prompt, results) = api.latest_prompt(body);
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let step = directives(last_directed_line(&prompt))
            .into_iter()
            .nth(results)
            .and_then(|d| d.resolve(&body["tools"]));
        let script = ModelScript {
            tool: String::new(),
            arguments: step.as_ref().map_or(Value::Null, |(_, args)| args.clone()),
            final_text: final_text.clone(),
            refuse: None,
        };
        let mv = step.map_or(Move::Answer, |(name, _)| Move::Call(name));
        let stream = body["stream"].as_bool().unwrap_or(false);
        let id = format!("call_{n:02}");
        ok(match api {
            Api::Messages => anthropic_message(
                &script,
                mv,
                stream,
                body["model"].as_str().unwrap_or("m"),
                &format!("toolu_{n:02}"),
                &format!("msg_{n:02}"),
            ),
            Api::Responses => responses(&script, mv, stream, &id),
            Api::Chat => chat(&script, mv, stream, &id),
            Api::Gemini { stream } => gemini(&script, mv, stream),
        })
    })
    .await
}

/// The model APIs the fake speaks.
#[derive(Clone, Copy)]
enum Api {
    Messages,
    Responses,
    Chat,
    Gemini { stream: bool },
}

impl Api {
    fn of(path: &str) -> Option<Api> {
        if path.ends_with("/messages") {
            Some(Api::Messages)
        } else if path.ends_with("/responses") {
            Some(Api::Responses)
        } else if path.ends_with("/chat/completions") {
            Some(Api::Chat)
        } else if path.contains(":streamGenerateContent") || path.contains(":generateContent") {
            Some(Api::Gemini {
                stream: path.contains(":streamGenerateContent"),
            })
        } else {
            None
        }
    }

    /// The text of the latest user prompt in `body`, and how many tool
    /// results come after it.
    fn latest_prompt(self, body: &Value) -> (String, usize) {
        // Every block of the conversation in order: Some(text) for a
        // prompt's text, None for a tool result.
        let mut blocks: Vec<Option<String>> = Vec::new();
        let list = |key: &str| body[key].as_array().cloned().unwrap_or_default();
        match self {
            Api::Messages => {
                for m in list("messages").iter().filter(|m| m["role"] == "user") {
                    match &m["content"] {
                        Value::String(t) => blocks.push(Some(t.clone())),
                        Value::Array(parts) => {
                            for b in parts {
                                if b["type"] == "tool_result" {
                                    blocks.push(None);
                                } else if let Some(t) = b["text"].as_str() {
                                    blocks.push(Some(t.to_string()));
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            Api::Responses => {
                for item in list("input") {
                    if item["type"] == "function_call_output" {
                        blocks.push(None);
                    } else if item["role"] == "user" {
                        blocks.push(Some(text_of(&item["content"])));
                    }
                }
            }
            Api::Chat => {
                for m in list("messages") {
                    if m["role"] == "tool" {
                        blocks.push(None);
                    } else if m["role"] == "user" {
                        blocks.push(Some(text_of(&m["content"])));
                    }
                }
            }
            Api::Gemini { .. } => {
                for c in list("contents").iter().filter(|c| c["role"] == "user") {
                    for p in c["parts"].as_array().into_iter().flatten() {
                        if p.get("functionResponse").is_some() {
                            blocks.push(None);
                        } else if let Some(t) = p["text"].as_str() {
                            blocks.push(Some(t.to_string()));
                        }
                    }
                }
            }
        }
        let is_prompt = |b: &Option<String>| {
            b.as_ref()
                .is_some_and(|t| !t.starts_with("<system-reminder>"))
        };
        let Some(at) = blocks.iter().rposition(is_prompt) else {
            return (String::new(), 0);
        };
        let results = blocks[at..].iter().filter(|b| b.is_none()).count();
        (blocks[at].clone().unwrap_or_default(), results)
    }
}

/// The latest user prompt of a model request (for a failure message).
pub fn latest_prompt(req: &Recorded) -> String {
    Api::of(req.path.split('?').next().unwrap_or(""))
        .map(|api| api.latest_prompt(&req.body).0)
        .unwrap_or_default()
}

/// The tool calls the model made earlier in the conversation of a model
/// request (their arguments as JSON text): what only the conversation's
/// history holds, unlike text the prompt may quote.
pub fn earlier_calls(req: &Recorded) -> Vec<String> {
    let body = &req.body;
    let each = |v: &Value| v.as_array().cloned().unwrap_or_default();
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    let mut out = Vec::new();
    match Api::of(req.path.split('?').next().unwrap_or("")) {
        Some(Api::Messages) => {
            for m in each(&body["messages"])
                .iter()
                .filter(|m| m["role"] == "assistant")
            {
                for b in each(&m["content"])
                    .iter()
                    .filter(|b| b["type"] == "tool_use")
                {
                    out.push(b["input"].to_string());
                }
            }
        }
        Some(Api::Responses) => {
            for i in each(&body["input"])
                .iter()
                .filter(|i| i["type"] == "function_call")
            {
                out.push(text(&i["arguments"]));
            }
        }
        Some(Api::Chat) => {
            for m in each(&body["messages"])
                .iter()
                .filter(|m| m["role"] == "assistant")
            {
                for c in each(&m["tool_calls"]) {
                    out.push(text(&c["function"]["arguments"]));
                }
            }
        }
        Some(Api::Gemini { .. }) => {
            for c in each(&body["contents"])
                .iter()
                .filter(|c| c["role"] == "model")
            {
                for p in each(&c["parts"]) {
                    if let Some(call) = p.get("functionCall") {
                        out.push(call["args"].to_string());
                    }
                }
            }
        }
        None => {}
    }
    out
}

/// The last line of `prompt` that holds a directive, in its newest
/// messages (after awtui's "New messages for you" heading when there is
/// one: earlier messages may be quoted above it).
fn last_directed_line(prompt: &str) -> &str {
    let newest = prompt
        .rfind("New messages for you")
        .map_or(prompt, |at| &prompt[at..]);
    newest
        .lines()
        .rev()
        .find(|l| l.contains("[["))
        .unwrap_or("")
}

/// The text of a message's content (a string, or text parts).
fn text_of(content: &Value) -> String {
    match content {
        Value::String(t) => t.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// One thing a prompt tells the directed model to do.
#[derive(Debug, PartialEq)]
enum Directive {
    /// Run a command with the CLI's shell tool (`escalated`: outside
    /// Codex's sandbox).
    Shell { command: String, escalated: bool },
    /// Call a tool by (the end of) its name.
    Call { tool: String, arguments: Value },
}

/// The directives of `prompt`, in order (a `\@` gemini's escaping put in
/// is read as `@`).
fn directives(prompt: &str) -> Vec<Directive> {
    let text = prompt.replace("\\@", "@");
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("[[") {
        let Some(len) = rest[start..].find("]]") else {
            break;
        };
        let inner = &rest[start + 2..start + len];
        rest = &rest[start + len + 2..];
        if let Some(command) = inner.strip_prefix("shell: ") {
            out.push(Directive::Shell {
                command: command.to_string(),
                escalated: false,
            });
        } else if let Some(command) = inner.strip_prefix("shell!: ") {
            out.push(Directive::Shell {
                command: command.to_string(),
                escalated: true,
            });
        } else if let Some(call) = inner.strip_prefix("call: ")
            && let Some((tool, args)) = call.split_once(' ')
            && let Ok(arguments) = serde_json::from_str(args)
        {
            out.push(Directive::Call {
                tool: tool.to_string(),
                arguments,
            });
        }
    }
    out
}

impl Directive {
    /// The tool as the request offers it and its arguments; `None` when
    /// it is not offered.
    fn resolve(&self, tools: &Value) -> Option<(ToolName, Value)> {
        match self {
            Directive::Call { tool, arguments } => Some((offered(tools, tool)?, arguments.clone())),
            Directive::Shell { command, escalated } => {
                // Each CLI's shell tool and how it takes the command.
                let shells: [(&str, Value); 6] = [
                    ("Bash", json!({"command": command})),
                    ("run_shell_command", json!({"command": command})),
                    ("bash", json!({"command": command, "description": "run it"})),
                    ("shell_command", json!({"command": command})),
                    ("exec_command", {
                        let mut a = json!({"cmd": command, "yield_time_ms": 30000});
                        if *escalated {
                            a["sandbox_permissions"] = json!("require_escalated");
                            a["justification"] = json!("the test asks for it");
                        }
                        a
                    }),
                    ("shell", json!({"command": ["bash", "-lc", command]})),
                ];
                shells.into_iter().find_map(|(name, args)| {
                    let found = offered(tools, name).filter(|t| t.name == name)?;
                    Some((found, args))
                })
            }
        }
    }
}

/// The first id with `prefix` (`wf_`, `ag_`, `tk_` and 12 hex digits) in
/// `text` after byte `from`, and where it ends.
fn find_id(text: &str, prefix: &str, from: usize) -> Option<(String, usize)> {
    let mut at = from;
    while let Some(i) = text.get(at..)?.find(prefix) {
        let start = at + i;
        let hex: String = text[start + prefix.len()..]
            .chars()
            .take_while(char::is_ascii_hexdigit)
            .collect();
        if hex.len() == 12 {
            return Some((format!("{prefix}{hex}"), start + prefix.len() + 12));
        }
        at = start + prefix.len();
    }
    None
}

/// `args` with its placeholders filled (see [`start_steps_any`]).
fn fill(args: &Value, results: &str, request: &str) -> Value {
    let mut text = args.to_string();
    for (key, prefix) in [("{wf}", "wf_"), ("{ag}", "ag_")] {
        if let Some((id, _)) = find_id(results, prefix, 0) {
            text = text.replace(key, &id);
        }
    }
    while let Some(start) = text.find("{task:") {
        let Some(len) = text[start..].find('}') else {
            break;
        };
        let name = text[start + 6..start + len].to_string();
        let mut at = 0;
        let mut found = String::from("tk_unknown");
        while let Some((id, end)) = find_id(request, "tk_", at) {
            let after: String = request[end..].chars().take(40).collect();
            if after.contains(&name) {
                found = id;
                break;
            }
            at = end;
        }
        text.replace_range(start..start + len + 1, &found);
    }
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// Serves `respond` on a free loopback port.
async fn serve(respond: impl Fn(&Recorded) -> Scripted + Send + Sync + 'static) -> (String, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let recorded: Log = Arc::new(Mutex::new(Vec::new()));
    let log = recorded.clone();
    let respond = Arc::new(respond);
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let log = log.clone();
            let respond = respond.clone();
            tokio::spawn(async move {
                // Keep-alive: answer requests on this connection until the
                // client closes it.
                let mut buf = Vec::new();
                while let Some(req) = read_request(&mut sock, &mut buf).await {
                    log.lock().unwrap().push(req.clone());
                    let Scripted { status, body } = respond(&req);
                    let kind = if body.starts_with("event:") || body.starts_with("data:") {
                        "text/event-stream"
                    } else {
                        "application/json"
                    };
                    let response = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if sock.write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, recorded)
}

/// Reads one request (content-length or chunked body); `None` at the end
/// of the connection. `buf` keeps bytes of the next request.
async fn read_request(sock: &mut tokio::net::TcpStream, buf: &mut Vec<u8>) -> Option<Recorded> {
    let mut chunk = [0u8; 16384];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = sock.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.lines();
    let mut first = lines.next().unwrap_or("").split(' ');
    let method = first.next().unwrap_or("").to_string();
    let path = first.next().unwrap_or("").to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let find = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let chunked = find("transfer-encoding").is_some_and(|v| v.contains("chunked"));
    buf.drain(..head_end);
    let mut body = Vec::new();
    if chunked {
        loop {
            let line_end = loop {
                if let Some(i) = buf.windows(2).position(|w| w == b"\r\n") {
                    break i;
                }
                let n = sock.read(&mut chunk).await.unwrap_or(0);
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&chunk[..n]);
            };
            let size_text = String::from_utf8_lossy(&buf[..line_end]).to_string();
            let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
                .unwrap_or(0);
            while buf.len() < line_end + 2 + size + 2 {
                let n = sock.read(&mut chunk).await.unwrap_or(0);
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            body.extend_from_slice(&buf[line_end + 2..line_end + 2 + size]);
            buf.drain(..line_end + 2 + size + 2);
            if size == 0 {
                break;
            }
        }
    } else {
        let len: usize = find("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        while buf.len() < len {
            let n = sock.read(&mut chunk).await.unwrap_or(0);
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        body.extend(buf.drain(..len));
    }
    Some(Recorded {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        raw: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// Whether `name` is the scripted tool under some CLI's naming.
fn is_tool(name: &str, tool: &str) -> bool {
    name == tool
        || name.ends_with(&format!("__{tool}"))
        || name.ends_with(&format!("_{tool}"))
        || name.ends_with(&format!(".{tool}"))
}

/// How a request names the tool: its name, and the namespace it sits in
/// (Codex groups an MCP server's tools in a `namespace` tool).
#[derive(Clone, Debug)]
struct ToolName {
    name: String,
    namespace: Option<String>,
}

/// The first `name` field (at any depth) of `tools` naming the tool.
fn offered(tools: &Value, tool: &str) -> Option<ToolName> {
    match tools {
        Value::Object(map) => {
            if let Some(name) = map.get("name").and_then(Value::as_str)
                && is_tool(name, tool)
            {
                return Some(ToolName {
                    name: name.to_string(),
                    namespace: None,
                });
            }
            let inner = map.values().find_map(|v| offered(v, tool))?;
            let namespace = (map.get("type").and_then(Value::as_str) == Some("namespace"))
                .then(|| map.get("name").and_then(Value::as_str).map(String::from))
                .flatten();
            Some(ToolName {
                namespace: inner.namespace.or(namespace),
                ..inner
            })
        }
        Value::Array(items) => items.iter().find_map(|v| offered(v, tool)),
        _ => None,
    }
}

/// Whether `v` contains an object whose `key` field is `value` (or, with
/// `value` empty, that has a `key` field at all).
fn contains(v: &Value, key: &str, value: &str) -> bool {
    match v {
        Value::Object(map) => {
            map.get(key).is_some_and(|f| value.is_empty() || f == value)
                || map.values().any(|v| contains(v, key, value))
        }
        Value::Array(items) => items.iter().any(|v| contains(v, key, value)),
        _ => false,
    }
}

/// What the model does for this request.
enum Move {
    /// Call the tool by this name.
    Call(ToolName),
    Answer,
}

/// Calls the tool when it is offered and the last message does not carry
/// a tool result yet.
fn decide(script: &ModelScript, tools: &Value, last: &Value, result_key: (&str, &str)) -> Move {
    match offered(tools, &script.tool) {
        Some(name) if !contains(last, result_key.0, result_key.1) => Move::Call(name),
        _ => Move::Answer,
    }
}

fn answer_model(script: &ModelScript, req: &Recorded) -> Scripted {
    let path = req.path.split('?').next().unwrap_or("");
    let body = &req.body;
    let stream = body["stream"].as_bool().unwrap_or(false);
    let ok = |body: String| Scripted { status: 200, body };
    if let Some(message) = &script.refuse {
        let error = if path.contains(":streamGenerateContent") || path.contains(":generateContent")
        {
            json!({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})
        } else {
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
        };
        return Scripted {
            status: 400,
            body: error.to_string(),
        };
    }
    if path.ends_with("/messages/count_tokens") {
        return ok(json!({"input_tokens": 10}).to_string());
    }
    if path.ends_with("/messages") {
        let last = body["messages"].as_array().and_then(|m| m.last()).cloned();
        let mv = decide(
            script,
            &body["tools"],
            &last.unwrap_or(Value::Null),
            ("type", "tool_result"),
        );
        return ok(anthropic(
            script,
            mv,
            stream,
            body["model"].as_str().unwrap_or("m"),
        ));
    }
    if path.ends_with("/responses") {
        let last = body["input"].as_array().and_then(|m| m.last()).cloned();
        let mv = decide(
            script,
            &body["tools"],
            &last.unwrap_or(Value::Null),
            ("type", "function_call_output"),
        );
        return ok(responses(script, mv, stream, "call_01"));
    }
    if path.ends_with("/chat/completions") {
        let last = body["messages"].as_array().and_then(|m| m.last()).cloned();
        let mv = decide(
            script,
            &body["tools"],
            &last.unwrap_or(Value::Null),
            ("role", "tool"),
        );
        return ok(chat(script, mv, stream, "call_01"));
    }
    if path.contains(":streamGenerateContent") || path.contains(":generateContent") {
        let last = body["contents"].as_array().and_then(|m| m.last()).cloned();
        let mv = decide(
            script,
            &body["tools"],
            &last.unwrap_or(Value::Null),
            ("functionResponse", ""),
        );
        return ok(gemini(script, mv, path.contains(":streamGenerateContent")));
    }
    if path.contains(":countTokens") {
        return ok(json!({"totalTokens": 10}).to_string());
    }
    if path.ends_with("/models") {
        return ok(json!({"object": "list", "data": [], "models": []}).to_string());
    }
    Scripted {
        status: 404,
        body: json!({"error": {"message": format!("the fake model has no {path}")}}).to_string(),
    }
}

fn anthropic(script: &ModelScript, mv: Move, stream: bool, model: &str) -> String {
    anthropic_call(script, mv, stream, model, "toolu_01")
}

/// [`anthropic`] with the tool call's id (each call of a conversation
/// needs its own).
fn anthropic_call(script: &ModelScript, mv: Move, stream: bool, model: &str, id: &str) -> String {
    anthropic_message(script, mv, stream, model, id, "msg_01")
}

/// [`anthropic_call`] with the message's id: Claude Code merges assistant
/// messages that share one, so a conversation of several turns needs its
/// own per answer.
fn anthropic_message(
    script: &ModelScript,
    mv: Move,
    stream: bool,
    model: &str,
    id: &str,
    message_id: &str,
) -> String {
    let usage = json!({"input_tokens": 50, "output_tokens": 5});
    let (block, stop) = match &mv {
        Move::Call(t) => (
            json!({"type": "tool_use", "id": id, "name": t.name, "input": script.arguments}),
            "tool_use",
        ),
        Move::Answer => (
            json!({"type": "text", "text": script.final_text}),
            "end_turn",
        ),
    };
    if !stream {
        return json!({
            "id": message_id, "type": "message", "role": "assistant", "model": model,
            "content": [block], "stop_reason": stop, "stop_sequence": null, "usage": usage
        })
        .to_string();
    }
    let (start_block, delta) = match &mv {
        Move::Call(t) => (
            json!({"type": "tool_use", "id": id, "name": t.name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": script.arguments.to_string()}),
        ),
        Move::Answer => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": script.final_text}),
        ),
    };
    sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {
                "id": message_id, "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": 50, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": start_block}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                   "usage": {"output_tokens": 5}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ])
}

fn responses(script: &ModelScript, mv: Move, stream: bool, call_id: &str) -> String {
    let item = match &mv {
        Move::Call(t) => {
            let mut call = json!({
                "type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id, "status": "completed",
                "name": t.name, "arguments": script.arguments.to_string()
            });
            if let Some(ns) = &t.namespace {
                call["namespace"] = json!(ns);
            }
            call
        }
        Move::Answer => json!({
            "type": "message", "id": "msg_01", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": script.final_text, "annotations": []}]
        }),
    };
    let response = |status: &str, output: Value| {
        json!({
            "id": "resp_01", "object": "response", "created_at": 0, "status": status,
            "model": "m", "output": output,
            "usage": {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": 55}
        })
    };
    if !stream {
        return response("completed", json!([item])).to_string();
    }
    let mut events = vec![
        (
            "response.created",
            json!({"type": "response.created", "response": response("in_progress", json!([]))}),
        ),
        (
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        ),
    ];
    if let Move::Answer = mv {
        events.push((
            "response.output_text.delta",
            json!({"type": "response.output_text.delta", "item_id": "msg_01", "output_index": 0,
                   "content_index": 0, "delta": script.final_text}),
        ));
    }
    events.push((
        "response.output_item.done",
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
    ));
    events.push((
        "response.completed",
        json!({"type": "response.completed", "response": response("completed", json!([item]))}),
    ));
    sse(&events)
}

fn chat(script: &ModelScript, mv: Move, stream: bool, call_id: &str) -> String {
    let usage = json!({"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55});
    let call = |name: &str| {
        json!([{"index": 0, "id": call_id, "type": "function",
                "function": {"name": name, "arguments": script.arguments.to_string()}}])
    };
    let (message, finish) = match &mv {
        Move::Call(t) => (
            json!({"role": "assistant", "content": null, "tool_calls": call(&t.name)}),
            "tool_calls",
        ),
        Move::Answer => (
            json!({"role": "assistant", "content": script.final_text}),
            "stop",
        ),
    };
    if !stream {
        return json!({
            "id": "chatcmpl-01", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage
        })
        .to_string();
    }
    let chunk = |delta: Value, finish: Value, usage: Value| {
        json!({"id": "chatcmpl-01", "object": "chat.completion.chunk", "created": 0, "model": "m",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], "usage": usage})
    };
    let mut out = sse(&[
        ("", chunk(message, Value::Null, Value::Null)),
        ("", chunk(json!({}), json!(finish), usage)),
    ]);
    out.push_str("data: [DONE]\n\n");
    out
}

fn gemini(script: &ModelScript, mv: Move, stream: bool) -> String {
    let part = match &mv {
        Move::Call(t) => json!({"functionCall": {"name": t.name, "args": script.arguments}}),
        Move::Answer => json!({"text": script.final_text}),
    };
    let doc = json!({
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 5, "totalTokenCount": 55},
        "modelVersion": "gemini-2.5-flash"
    });
    if stream {
        sse(&[("", doc)])
    } else {
        doc.to_string()
    }
}
