//! The same service on the instance's unix socket, the files the server
//! leaves in the instance folder, resources and their notifications, for
//! clients with sessions (`resources/subscribe`) and without
//! (`server/discover` + `subscriptions/listen`, protocol 2026-07-28).
// `resources/subscribe` is deprecated by the newest protocol but is what
// every client with a session uses.
#![allow(deprecated)]

use crate::support;

use std::os::unix::fs::PermissionsExt;

use awtui::mcp::Endpoint;
use awtui::mcp::identity::tokens_dir;
use rmcp::model::{ReadResourceRequestParams, SubscribeRequestParams};
use serde_json::json;
use support::*;

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn socket_serves_the_same_tools_and_files_are_private() {
    let inst = Instance::start().await;
    let socket = inst.handle.socket_path().unwrap().to_path_buf();
    assert_eq!(socket, inst.dir.join("mcp.sock"));
    assert_eq!(mode(&socket), 0o600);
    for agent in ["coder", "reviewer", "qa", "user"] {
        let file = tokens_dir(&inst.dir).join(agent);
        assert_eq!(mode(&file), 0o600, "{agent}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), inst.token(agent));
    }
    assert_eq!(mode(&tokens_dir(&inst.dir)), 0o700);
    // Secrets live outside the workspace.
    assert!(!tokens_dir(&inst.dir).starts_with(&inst.dir));
    assert!(!inst.dir.join("tokens").exists());
    let endpoint = Endpoint::read(&inst.dir).unwrap().unwrap();
    assert_eq!(endpoint.url, inst.handle.url());
    assert_eq!(endpoint.socket.as_deref(), Some(socket.as_path()));
    assert_eq!(endpoint.pid, std::process::id());

    let (user, _) = unix_client(&socket, &inst.token("user")).await;
    let (coder, _) = http_client(inst.handle.url(), &inst.token("coder")).await;
    let sent = call(
        &user,
        "channel_send",
        json!({"message": "@coder fix line 42"}),
    )
    .await;
    assert_eq!(sent["mentions"], json!(["coder"]));
    let inbox = call(&coder, "inbox_check", json!({})).await;
    assert_eq!(inbox["messages"][0]["from"], "user");
    assert_eq!(
        call(&user, "workflow_agents", json!({})).await["you"],
        "user"
    );

    let dir = inst.dir.clone();
    let tokens = tokens_dir(&dir);
    inst.handle.stop().await;
    assert!(!tokens.exists());
    assert!(!dir.join("mcp.json").exists());
    assert!(!dir.join("mcp.sock").exists());
    assert!(!dir.join("tokens").exists());
    // The context itself stays.
    assert!(dir.join("channel.jsonl").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_works_over_the_socket() {
    let inst = Instance::start().await;
    let socket = inst.handle.socket_path().unwrap().to_path_buf();
    let (coder, _) = unix_client(&socket, &inst.token("coder")).await;
    let (reviewer, _) = unix_client(&socket, &inst.token("reviewer")).await;
    exercise_every_tool(&coder, &reviewer).await;
    inst.handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_token_is_refused_on_the_socket_too() {
    let inst = Instance::start().await;
    let socket = inst.handle.socket_path().unwrap().to_path_buf();
    let transport = rmcp::transport::StreamableHttpClientTransport::from_unix_socket_with_config(
        &socket.to_string_lossy(),
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            "http://localhost/mcp",
        )
        .auth_header("f".repeat(64)),
    );
    use rmcp::ServiceExt;
    assert!(().serve(transport).await.is_err());
    assert_eq!(inst.handle.context().read(|s| s.len()), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_list_read_and_notify() {
    let inst = Instance::start().await;
    let socket = inst.handle.socket_path().unwrap().to_path_buf();
    let (reviewer, mut reviewer_updates) = unix_client(&socket, &inst.token("reviewer")).await;
    let (coder, mut coder_updates) = http_client(inst.handle.url(), &inst.token("coder")).await;
    wait_until("both sessions registered", || async {
        inst.handle.session_count() == 2
    })
    .await;

    let uris: Vec<String> = reviewer
        .list_all_resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    assert_eq!(
        uris,
        [
            "awtui://channel",
            "awtui://inbox/coder",
            "awtui://inbox/reviewer",
            "awtui://inbox/qa",
            "awtui://inbox/user",
            "awtui://document/goals.md",
            "awtui://document/notes.md"
        ]
    );

    // A mention notifies the mentioned agent's inbox without a subscription.
    call(
        &coder,
        "channel_send",
        json!({"message": "@reviewer ready"}),
    )
    .await;
    assert_eq!(
        next_update(&mut reviewer_updates).await,
        "awtui://inbox/reviewer"
    );

    let read = reviewer
        .read_resource(ReadResourceRequestParams::new("awtui://inbox/reviewer"))
        .await
        .unwrap();
    let text = match &read.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("{other:?}"),
    };
    assert!(text.contains("@reviewer ready"), "{text}");

    // Subscriptions: the channel and a document.
    coder
        .subscribe(SubscribeRequestParams::new("awtui://channel"))
        .await
        .unwrap();
    coder
        .subscribe(SubscribeRequestParams::new("awtui://document/notes.md"))
        .await
        .unwrap();
    call(&reviewer, "channel_send", json!({"message": "looking"})).await;
    assert_eq!(next_update(&mut coder_updates).await, "awtui://channel");
    call(
        &reviewer,
        "document_append",
        json!({"content": "reviewed\n"}),
    )
    .await;
    assert_eq!(
        next_update(&mut coder_updates).await,
        "awtui://document/notes.md"
    );
    let doc = coder
        .read_resource(ReadResourceRequestParams::new("awtui://document/notes.md"))
        .await
        .unwrap();
    assert!(matches!(&doc.contents[0],
        rmcp::model::ResourceContents::TextResourceContents { text, .. } if text == "reviewed\n"));

    // Unknown resources are refused.
    assert!(
        coder
            .read_resource(ReadResourceRequestParams::new("awtui://inbox/ghost"))
            .await
            .is_err()
    );
    assert!(
        coder
            .subscribe(SubscribeRequestParams::new("awtui://document/../x"))
            .await
            .is_err()
    );
    // The reviewer was told about its own inbox only.
    assert!(reviewer_updates.try_recv().is_err());
    inst.handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_less_clients_discover_call_and_listen() {
    use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};

    let inst = Instance::start().await;
    let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
        awtui::http_client::client(),
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            inst.handle.url().to_string(),
        )
        .auth_header(inst.token("qa")),
    );
    let qa = ()
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("discover works");
    let who = qa
        .call_tool(rmcp::model::CallToolRequestParams::new("workflow_agents"))
        .await
        .unwrap();
    assert_eq!(payload(&who)["you"], "qa");

    let filter = SubscriptionFilter::builder()
        .resource_subscriptions(vec!["awtui://inbox/qa".to_string()])
        .build();
    let mut subscription = qa.listen(filter).await.unwrap();
    assert_eq!(
        subscription.acknowledged().resource_subscriptions,
        Some(vec!["awtui://inbox/qa".to_string()])
    );
    let (coder, _) = http_client(inst.handle.url(), &inst.token("coder")).await;
    call(
        &coder,
        "channel_send",
        json!({"message": "@qa over to you"}),
    )
    .await;
    let notification = tokio::time::timeout(PATIENCE, subscription.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    match notification {
        ServerNotification::ResourceUpdatedNotification(n) => {
            assert_eq!(n.params.uri, "awtui://inbox/qa")
        }
        other => panic!("{other:?}"),
    }
    inst.handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_on_a_running_instance_is_refused_and_leaves_it_alone() {
    use awtui::context::MemoryStore;
    use awtui::mcp::{McpConfig, McpError, McpServer, SharedContext};

    let inst = Instance::start().await;
    let endpoint = std::fs::read_to_string(inst.dir.join("mcp.json")).unwrap();
    let second = McpServer::start(McpConfig {
        context: SharedContext::new(Box::new(MemoryStore::new(&layout()).unwrap())),
        agents: agents(),
        instance_dir: Some(inst.dir.clone()),
        tool_timeout: None,
    })
    .await;
    match second {
        Err(e @ McpError::AlreadyRunning { .. }) => {
            assert!(e.to_string().contains("already running"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    // The running instance's files are untouched and it still serves.
    assert_eq!(
        std::fs::read_to_string(inst.dir.join("mcp.json")).unwrap(),
        endpoint
    );
    assert_eq!(
        std::fs::read_to_string(tokens_dir(&inst.dir).join("coder")).unwrap(),
        inst.token("coder")
    );
    let (coder, _) = unix_client(inst.handle.socket_path().unwrap(), &inst.token("coder")).await;
    call(&coder, "channel_send", json!({"message": "still here"})).await;
    inst.handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_left_by_a_crashed_instance_are_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(".workflow/default");
    std::fs::create_dir_all(dir.join("tokens")).unwrap();
    std::fs::write(dir.join("tokens/old-agent"), "stale").unwrap();
    std::os::unix::net::UnixListener::bind(dir.join("mcp.sock")).unwrap();
    Endpoint {
        url: "http://127.0.0.1:9/mcp".into(),
        socket: Some(dir.join("mcp.sock")),
        pid: 1,
    }
    .write(&dir)
    .unwrap();

    let store = awtui::context::FileStore::open(&dir, &layout()).unwrap();
    let handle = awtui::mcp::McpServer::start(awtui::mcp::McpConfig {
        context: awtui::mcp::SharedContext::new(Box::new(store)),
        agents: agents(),
        instance_dir: Some(dir.clone()),
        tool_timeout: None,
    })
    .await
    .unwrap();
    let endpoint = Endpoint::read(&dir).unwrap().unwrap();
    assert_eq!(endpoint.url, handle.url());
    assert!(!dir.join("tokens/old-agent").exists());
    let (qa, _) = unix_client(handle.socket_path().unwrap(), handle.token("qa").unwrap()).await;
    assert_eq!(call(&qa, "workflow_agents", json!({})).await["you"], "qa");
    handle.stop().await;
}
