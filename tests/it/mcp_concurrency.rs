//! 20 MCP clients posting 500 messages each, all at once, through the file
//! store: every message lands exactly once, with a unique id, each sender's
//! messages in its own order, and every mention in the right inbox.

use crate::support;

use std::collections::{BTreeMap, HashSet};

use awtui::context::{FileStore, StoreLayout};
use awtui::mcp::{McpConfig, McpServer, SharedContext};
use serde_json::json;
use support::*;

const CLIENTS: usize = 20;
const MESSAGES: usize = 500;

fn name(i: usize) -> String {
    format!("a{i:02}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_clients_times_five_hundred_messages() {
    let agents: Vec<String> = (0..CLIENTS).map(name).collect();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("inst");
    let layout = StoreLayout {
        channel: "channel.md".into(),
        document: "notes.md".into(),
        documents: vec![],
        agents: agents.clone(),
    };
    let store = FileStore::open(&dir, &layout).unwrap();
    let handle = McpServer::start(McpConfig {
        context: SharedContext::new(Box::new(store)),
        agents: agents.clone(),
        instance_dir: Some(dir.clone()),
        tool_timeout: None,
    })
    .await
    .unwrap();

    let mut clients = Vec::new();
    for agent in &agents {
        let (client, _) = http_client(handle.url(), handle.token(agent).unwrap()).await;
        clients.push(client);
    }
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(CLIENTS));
    let mut tasks = Vec::new();
    for (i, client) in clients.into_iter().enumerate() {
        let start = start.clone();
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            let mut ids = Vec::with_capacity(MESSAGES);
            for seq in 0..MESSAGES {
                // Everyone mentions the next agent; every tenth message also
                // mentions the one after.
                let mut message = format!("{} #{seq} @{}", name(i), name((i + 1) % CLIENTS));
                if seq % 10 == 0 {
                    message.push_str(&format!(" and @{}", name((i + 2) % CLIENTS)));
                }
                let sent = call(&client, "channel_send", json!({ "message": message })).await;
                ids.push(sent["id"].as_u64().unwrap());
            }
            client.cancel().await.unwrap();
            ids
        }));
    }
    let mut returned: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (i, task) in tasks.into_iter().enumerate() {
        returned.insert(name(i), task.await.unwrap());
    }

    let entries = handle.context().read(|s| s.read(None, None)).unwrap();
    assert_eq!(entries.len(), CLIENTS * MESSAGES);
    let ids: Vec<u64> = entries.iter().map(|e| e.id).collect();
    assert_eq!(ids, (1..=(CLIENTS * MESSAGES) as u64).collect::<Vec<_>>());
    let unique: HashSet<u64> = returned.values().flatten().copied().collect();
    assert_eq!(unique.len(), CLIENTS * MESSAGES);

    // Each sender's messages appear in the order it sent them, under the ids
    // it was told.
    for (i, agent) in agents.iter().enumerate() {
        let mine: Vec<_> = entries.iter().filter(|e| &e.from == agent).collect();
        assert_eq!(mine.len(), MESSAGES, "{agent}");
        for (seq, e) in mine.iter().enumerate() {
            assert!(
                e.message.starts_with(&format!("{} #{seq} ", name(i))),
                "{}",
                e.message
            );
        }
        let ids: Vec<u64> = mine.iter().map(|e| e.id).collect();
        assert_eq!(ids, returned[agent], "{agent}");
    }

    // Every mention is in the right inbox, and only there.
    for (i, agent) in agents.iter().enumerate() {
        let expected: Vec<u64> = entries
            .iter()
            .filter(|e| {
                e.from == name((i + CLIENTS - 1) % CLIENTS)
                    || (e.from == name((i + CLIENTS - 2) % CLIENTS) && e.message.contains(" and @"))
            })
            .map(|e| e.id)
            .collect();
        assert_eq!(expected.len(), MESSAGES + MESSAGES / 10, "{agent}");
        let mut inbox: Vec<u64> = handle
            .context()
            .read(|s| s.inbox(agent))
            .unwrap()
            .iter()
            .map(|item| item.entry.id)
            .collect();
        inbox.sort();
        assert_eq!(inbox, expected, "{agent}");
    }

    // And it is all on disk, in the same order.
    handle.stop().await;
    let reopened = FileStore::open(&dir, &layout).unwrap();
    use awtui::context::ContextStore;
    assert_eq!(reopened.read(None, None).unwrap(), entries);
}
