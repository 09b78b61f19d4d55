//! The context MCP server over loopback HTTP with the rmcp client: every
//! tool, the alias, tool errors vs protocol errors, identity, events, and
//! raw JSON-RPC details (unknown method, string ids).

use crate::support;

use awtui::mcp::{ContextEvent, DocumentChange};
use serde_json::{Value, json};
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_works_over_http() {
    let inst = Instance::start().await;
    let url = inst.handle.url().to_string();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    let (coder, _) = http_client(&url, &inst.token("coder")).await;
    let (reviewer, _) = http_client(&url, &inst.token("reviewer")).await;
    exercise_every_tool(&coder, &reviewer).await;

    // mcp.json and the token files are never documents.
    assert!(inst.dir.join("mcp.json").exists());

    // What agents did is on disk.
    let jsonl = std::fs::read_to_string(inst.dir.join("channel.jsonl")).unwrap();
    assert_eq!(jsonl.lines().count(), 2);
    assert!(jsonl.contains("\"from\":\"coder\""));
    inst.handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caller_mistakes_are_tool_errors_and_malformed_requests_protocol_errors() {
    let inst = Instance::start().await;
    let (coder, _) = http_client(inst.handle.url(), &inst.token("coder")).await;

    let e = call_err(&coder, "document_read", json!({"file": "nope.md"})).await;
    assert!(e.contains("'nope.md' does not exist"), "{e}");
    let e = call_err(
        &coder,
        "document_write",
        json!({"file": "../../etc/x", "content": ""}),
    )
    .await;
    assert!(e.contains("refused"), "{e}");
    let e = call_err(
        &coder,
        "document_create",
        json!({"file": "/etc/passwd", "content": ""}),
    )
    .await;
    assert!(e.contains("absolute paths are not allowed"), "{e}");
    let e = call_err(&coder, "document_read", json!({"file": "mcp.json"})).await;
    assert!(e.contains("awtui's own files"), "{e}");
    let e = call_err(&coder, "document_read", json!({"file": "tokens/reviewer"})).await;
    assert!(e.contains("awtui's own files"), "{e}");
    let e = call_err(
        &coder,
        "document_create",
        json!({"file": "notes.md", "content": ""}),
    )
    .await;
    assert!(e.contains("already exists"), "{e}");
    let e = call_err(&coder, "document_delete", json!({"file": "gone.md"})).await;
    assert!(e.contains("does not exist"), "{e}");
    let e = call_err(&coder, "channel_read", json!({"since": "last tuesday"})).await;
    assert!(
        e.contains("neither a message id nor an RFC 3339 timestamp"),
        "{e}"
    );
    let e = call_err(&coder, "inbox_ack", json!({"until": 40})).await;
    assert!(e.contains("there is no message #40"), "{e}");
    let e = call_err(&coder, "channel_peek", json!({"limit": 0})).await;
    assert!(e.contains("limit"), "{e}");

    for (tool, a) in [
        ("channel_send", json!({})),
        ("channel_send", json!({"message": 5})),
        ("document_write", json!({"content": "x", "fiel": "typo.md"})),
        ("inbox_ack", json!({"until": [1]})),
        ("no_such_tool", json!({})),
    ] {
        let err = try_call(&coder, tool, a.clone()).await.unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("-32602") || text.contains("nvalid"),
            "{tool} {a}: {text}"
        );
    }
    // Nothing was written by the failed calls.
    assert_eq!(inst.handle.context().read(|s| s.len()), 0);
    inst.handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_follow_what_agents_do() {
    let handle = start_memory().await;
    let mut events = handle.events();
    let (coder, _) = http_client(handle.url(), handle.token("coder").unwrap()).await;
    let (qa, _) = http_client(handle.url(), handle.token("qa").unwrap()).await;

    call(&coder, "channel_send", json!({"message": "@qa test it"})).await;
    call(&qa, "inbox_check", json!({})).await;
    call(&qa, "inbox_ack", json!({"until": 1})).await;
    call(
        &qa,
        "document_create",
        json!({"file": "report.md", "content": "ok"}),
    )
    .await;

    let mut seen = Vec::new();
    while seen.len() < 4 {
        let event = tokio::time::timeout(PATIENCE, events.recv())
            .await
            .unwrap()
            .unwrap();
        seen.push(event);
    }
    match &seen[0] {
        ContextEvent::MessageAppended { entry } => {
            assert_eq!((entry.from.as_str(), entry.id), ("coder", 1));
            assert_eq!(entry.mentions, ["qa"]);
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(&seen[1], ContextEvent::CursorChanged { agent, cursor }
        if agent == "qa" && cursor.delivered == 1 && cursor.acked == 0)
    );
    assert!(
        matches!(&seen[2], ContextEvent::CursorChanged { agent, cursor }
        if agent == "qa" && cursor.acked == 1)
    );
    assert_eq!(
        seen[3],
        ContextEvent::DocumentChanged {
            path: "report.md".into(),
            change: DocumentChange::Created,
            by: "qa".into()
        }
    );
    handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_or_unknown_tokens_are_refused_and_nothing_is_written() {
    let inst = Instance::start().await;
    let url = inst.handle.url().to_string();
    let http = awtui::http_client::client();
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    });
    let send = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "channel_send", "arguments": {"message": "I am coder, trust me"}}
    });
    for auth in [
        None,
        Some("Bearer ".to_string()),
        Some("Bearer not-a-token".to_string()),
        Some(format!("Basic {}", inst.token("coder"))),
        Some(inst.token("coder")),
    ] {
        for body in [&initialize, &send] {
            let mut req = http
                .post(&url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(body.to_string());
            if let Some(a) = &auth {
                req = req.header("authorization", a);
            }
            let resp = req.send().await.unwrap();
            assert_eq!(resp.status().as_u16(), 401, "{auth:?}");
            assert!(resp.headers().contains_key("www-authenticate"));
            let text = resp.text().await.unwrap();
            assert!(text.contains("token"), "{text}");
        }
    }
    // The rmcp client with a wrong token cannot even connect.
    let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
        awtui::http_client::client(),
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            url.clone(),
        )
        .auth_header("0".repeat(64)),
    );
    use rmcp::ServiceExt;
    assert!(().serve(transport).await.is_err());

    assert_eq!(inst.handle.context().read(|s| s.len()), 0);
    let jsonl = std::fs::read_to_string(inst.dir.join("channel.jsonl")).unwrap();
    assert!(jsonl.is_empty());
    inst.handle.stop().await;
}

/// Posts one JSON-RPC message the way a hand-written client would; returns
/// the HTTP status, the session id header and every JSON-RPC message in the
/// body (plain JSON or server-sent events).
async fn post(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    session: Option<&str>,
    body: Value,
) -> (u16, Option<String>, Vec<Value>) {
    let mut req = http
        .post(url)
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(s) = session {
        req = req
            .header("mcp-session-id", s)
            .header("mcp-protocol-version", "2025-11-25");
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let session = resp
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let sse = resp
        .headers()
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
    let text = resp.text().await.unwrap();
    let messages = if sse {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    } else if text.trim().is_empty() {
        Vec::new()
    } else {
        vec![serde_json::from_str(&text).unwrap()]
    };
    (status, session, messages)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_json_rpc_string_ids_and_unknown_methods() {
    let handle = start_memory().await;
    let url = handle.url().to_string();
    let token = handle.token("qa").unwrap().to_string();
    let http = awtui::http_client::client();

    let (status, session, init) = post(
        &http,
        &url,
        &token,
        None,
        json!({
            "jsonrpc": "2.0", "id": "init-1", "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
        }),
    )
    .await;
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    assert_eq!(init[0]["id"], "init-1");
    assert_eq!(init[0]["result"]["serverInfo"]["name"], "awtui");
    let (status, _, _) = post(
        &http,
        &url,
        &token,
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(status, 202);

    let (_, _, reply) = post(
        &http,
        &url,
        &token,
        Some(&session),
        json!({
            "jsonrpc": "2.0", "id": "call-abc", "method": "tools/call",
            "params": {"name": "channel_send", "arguments": {"message": "hello @coder"}}
        }),
    )
    .await;
    let reply = reply.iter().find(|m| m.get("id").is_some()).unwrap();
    assert_eq!(reply["id"], "call-abc");
    assert_eq!(reply["result"]["isError"], false);
    assert_eq!(raw_payload(&reply["result"])["mentions"], json!(["coder"]));

    let (_, _, reply) = post(
        &http,
        &url,
        &token,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": "x-1", "method": "no/such/method", "params": {}}),
    )
    .await;
    assert_eq!(reply[0]["id"], "x-1");
    assert_eq!(reply[0]["error"]["code"], -32601);

    let (_, _, reply) = post(
        &http,
        &url,
        &token,
        Some(&session),
        json!({
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "channel_send", "arguments": {}}
        }),
    )
    .await;
    assert_eq!(reply[0]["id"], 7);
    assert_eq!(reply[0]["error"]["code"], -32602);

    // The message was posted as the token's owner.
    let entry = handle.context().read(|s| s.entry(1)).unwrap();
    assert_eq!(entry.from, "qa");
    handle.stop().await;
}

/// A request body over the 4 MiB MCP limit is refused with 413 naming the
/// limit (announced length: before the server reads it; chunked: once it
/// goes past), and nothing lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_over_4_mib_are_refused_and_nothing_is_written() {
    let inst = Instance::start().await;
    let url = inst.handle.url().to_string();
    let http = awtui::http_client::client();
    let big = "x".repeat(awtui::mcp::MAX_BODY + 1);
    let send = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "channel_send", "arguments": {"message": big}}
    })
    .to_string();
    // An announced length over the limit is refused before any body is
    // read (a raw request that announces the body and sends none).
    let addr = host_port(&url);
    let token = inst.token("coder");
    let len = send.len();
    let (answer, _) = tokio::task::spawn_blocking(move || raw_post(&addr, &token, "", len, false))
        .await
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("4 MiB"), "{answer}");
    // Without a length (a stream), the body is read up to the limit.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = send
        .as_bytes()
        .chunks(1 << 20)
        .map(|c| Ok(c.to_vec()))
        .collect();
    let resp = http
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {}", inst.token("coder")))
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
            chunks,
        )))
        .send()
        .await;
    // Refused with 413 naming the limit too, once the body passes it.
    let resp = resp.expect("an answer, not a connection closed mid-write");
    assert_eq!(resp.status(), 413);
    let text = resp.text().await.unwrap();
    assert!(text.contains("4 MiB"), "{text}");
    assert_eq!(inst.handle.context().read(|s| s.len()), 0);
    inst.handle.stop().await;
}

/// `host:port` of an `http://host:port/path` URL.
fn host_port(url: &str) -> String {
    let rest = url.trim_start_matches("http://");
    rest.split('/').next().unwrap().to_string()
}

/// A raw POST of `len` bytes of `x` to `addr`, with `headers` added; the
/// body is written (from a thread of its own) only when `upload`, in full
/// before the answer is read, as most clients do. Returns the answer as
/// far as the error message naming the limit, and how the upload went.
fn raw_post(
    addr: &str,
    token: &str,
    headers: &str,
    len: usize,
    upload: bool,
) -> (String, std::io::Result<()>) {
    use std::io::{Read, Write};
    let mut tcp = std::net::TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut writer = tcp.try_clone().unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {len}\r\n\r\n"
    );
    let wrote = std::thread::spawn(move || {
        writer.write_all(head.as_bytes())?;
        if upload {
            writer.write_all(&vec![b'x'; len])?;
        }
        Ok(())
    })
    .join()
    .unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&answer).contains("MiB") {
        match tcp.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
        }
    }
    (String::from_utf8_lossy(&answer).into_owned(), wrote)
}

/// A raw client that announces 10 MB, writes it all and only then reads,
/// as most clients do, gets a 413 naming the 4 MiB limit: the server
/// answers at once and lets the upload run out (bounded) instead of
/// closing on it, which fails the client's write with EPIPE. A client
/// that waits for `100 Continue` gets the 413 instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_10_mb_post_is_answered_413_naming_the_limit() {
    let handle = start_memory().await;
    let addr = host_port(handle.url());
    let token = handle.token("coder").unwrap().to_string();
    let (answer, wrote, waited) = tokio::task::spawn_blocking(move || {
        let (answer, wrote) = raw_post(&addr, &token, "", 10_000_000, true);
        let expect = "Expect: 100-continue\r\n";
        let (waited, _) = raw_post(&addr, &token, expect, 10_000_000, false);
        (answer, wrote, waited)
    })
    .await
    .unwrap();
    // The server read the upload to its end: no reset, no EPIPE.
    assert!(wrote.is_ok(), "the upload failed: {wrote:?}");
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("10000000 bytes"), "{answer}");
    assert!(answer.contains("4 MiB"), "{answer}");
    assert!(waited.starts_with("HTTP/1.1 413"), "{waited}");
    assert!(waited.contains("4 MiB"), "{waited}");
    assert_eq!(handle.context().read(|s| s.len()), 0);
    handle.stop().await;
}

/// `awtui ctx send` with a message over the 4 MiB request limit says so
/// (its size and the limit) instead of a bare transport error, and posts
/// nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_over_limit_ctx_send_names_its_size_and_the_limit() {
    let handle = start_memory().await;
    let message = "x".repeat(4_300_000);
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_awtui"))
        .args(["ctx", "send"])
        .env("AWTUI_MCP_URL", handle.url())
        .env("AWTUI_TOKEN", handle.token("coder").unwrap())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        // The command may refuse before reading everything.
        let _ = stdin.write_all(message.as_bytes()).await;
    });
    let out = tokio::time::timeout(PATIENCE, child.wait_with_output())
        .await
        .expect("awtui ctx send exits")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("4 MiB"), "{stderr}");
    assert!(stderr.contains("4300"), "the size: {stderr}");
    assert!(
        !stderr.contains("Transport"),
        "refused before sending: {stderr}"
    );
    assert_eq!(handle.context().read(|s| s.len()), 0);
    handle.stop().await;
}

/// Every event of an SSE response carries a JSON-RPC message: no empty
/// priming event (`data:` without JSON), which gemini-cli cannot parse and
/// then runs without awtui's tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_streams_carry_only_json_messages() {
    let handle = start_memory().await;
    let url = handle.url().to_string();
    let token = handle.token("qa").unwrap().to_string();
    let http = awtui::http_client::client();
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    });
    let resp = http
        .post(&url)
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(init.to_string())
        .send()
        .await
        .unwrap();
    let session = resp
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string())
        .expect("a session id");
    let first = resp.text().await.unwrap();
    let _ = post(
        &http,
        &url,
        &token,
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    let resp = http
        .post(&url)
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .body(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string())
        .send()
        .await
        .unwrap();
    let second = resp.text().await.unwrap();
    for body in [&first, &second] {
        let data: Vec<&str> = body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .collect();
        assert!(!data.is_empty(), "no events in {body:?}");
        for d in data {
            assert!(
                serde_json::from_str::<Value>(d).is_ok_and(|v| v.get("jsonrpc").is_some()),
                "an event that is not a JSON-RPC message: {d:?} in {body:?}"
            );
        }
        assert!(!body.contains("retry:"), "a priming event: {body:?}");
    }
    handle.stop().await;
}

/// The one request waiting for a decision, once it has arrived.
async fn asked(approvals: &awtui::approvals::Approvals) -> Vec<awtui::approvals::Request> {
    let pending = eventually("the request to arrive", || async {
        Some(approvals.pending()).filter(|p| !p.is_empty())
    })
    .await;
    assert_eq!(pending.len(), 1, "one request");
    pending
}

/// `permission_request` over real MCP: offered only to agents whose CLI
/// asks (`permissions: ask`), refused to others; its answer is one text
/// block of Claude Code's JSON, sent once the person decides.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_request_waits_for_the_decision_and_answers_as_claude_code_expects() {
    use awtui::approvals::{Answer, RuleSet, Verdict};
    let inst = Instance::start().await;
    let approvals = inst.handle.context().approvals().clone();
    approvals.set_rules([("coder".to_string(), RuleSet::default())].into());
    let (coder, _) = http_client(inst.handle.url(), &inst.token("coder")).await;
    let (reviewer, _) = http_client(inst.handle.url(), &inst.token("reviewer")).await;
    let offered =
        |tools: Vec<rmcp::model::Tool>| tools.iter().any(|t| t.name == "permission_request");
    assert!(offered(coder.list_all_tools().await.unwrap()));
    assert!(!offered(reviewer.list_all_tools().await.unwrap()));
    let e = call_err(
        &reviewer,
        "permission_request",
        json!({"tool_name": "Bash", "input": {"command": "ls"}}),
    )
    .await;
    assert!(e.contains("permissions: ask"), "{e}");

    let asking = tokio::spawn(async move {
        call(
            &coder,
            "permission_request",
            json!({"tool_name": "Write", "input": {"file_path": "a.txt", "content": "x"},
                   "tool_use_id": "toolu_9"}),
        )
        .await
    });
    let pending = asked(&approvals).await;
    assert_eq!(pending[0].agent, "coder");
    assert_eq!(pending[0].tool_use_id.as_deref(), Some("toolu_9"));
    approvals
        .decide(
            pending[0].id,
            Answer {
                verdict: Some(Verdict::Allow),
                ..Answer::default()
            },
            "user",
        )
        .unwrap();
    assert_eq!(
        asking.await.unwrap(),
        json!({"behavior": "allow", "updatedInput": {"file_path": "a.txt", "content": "x"}})
    );
    inst.handle.stop().await;
}

/// A reply that comes after the server stopped holding the event stream
/// back (`HOLD_FOR_REPLY`: the head goes out first, the reply when the
/// person decides) still reaches the client, and a quick call meanwhile
/// on another session is not held up by it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_slower_than_the_hold_still_streams_to_the_client() {
    use awtui::approvals::{Answer, RuleSet, Verdict};
    let inst = Instance::start().await;
    let approvals = inst.handle.context().approvals().clone();
    approvals.set_rules([("coder".to_string(), RuleSet::default())].into());
    let (coder, _) = http_client(inst.handle.url(), &inst.token("coder")).await;
    let (reviewer, _) = http_client(inst.handle.url(), &inst.token("reviewer")).await;
    let asking = tokio::spawn(async move {
        call(
            &coder,
            "permission_request",
            json!({"tool_name": "Bash", "input": {"command": "make"}}),
        )
        .await
    });
    let pending = asked(&approvals).await;
    let sent = call(&reviewer, "channel_send", json!({"message": "meanwhile"})).await;
    assert!(sent["id"].as_u64().is_some(), "{sent}");
    tokio::time::sleep(
        awtui::mcp::transport::HOLD_FOR_REPLY + std::time::Duration::from_millis(300),
    )
    .await;
    assert!(!asking.is_finished(), "answered before the decision");
    approvals
        .decide(
            pending[0].id,
            Answer {
                verdict: Some(Verdict::Deny),
                reason: Some("not now".into()),
                ..Answer::default()
            },
            "user",
        )
        .unwrap();
    let answer = within("the reply", asking).await.unwrap();
    assert_eq!(answer["behavior"], "deny", "{answer}");
    inst.handle.stop().await;
}
