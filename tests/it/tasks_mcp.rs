//! The caw protocol through a real MCP client over loopback HTTP: every
//! tool, every error code, identity from the token, the 20-way claim race,
//! the transition table, dependencies, the context budget, and durability
//! of task state across a reopen.

use crate::support;

use std::path::PathBuf;

use awtui::context::{FileStore, StoreLayout};
use awtui::mcp::{McpConfig, McpHandle, McpServer, SharedContext};
use awtui::tasks::journal::FileJournal;
use awtui::tasks::{TaskBoard, TaskStore};
use serde_json::{Value, json};
use support::{Client, call, http_client, payload, try_call};

struct Inst {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    handle: McpHandle,
}

fn layout(agents: &[String]) -> StoreLayout {
    StoreLayout {
        channel: "channel.md".into(),
        document: "notes.md".into(),
        documents: vec![],
        agents: agents.to_vec(),
    }
}

async fn start_at(tmp: tempfile::TempDir, agents: Vec<String>) -> Inst {
    let dir = tmp.path().join(".workflow").join("t");
    let store = FileStore::open(&dir, &layout(&agents)).unwrap();
    let (journal, replay) = FileJournal::open(&dir).unwrap();
    let bus = awtui::context::Bus::new();
    let board = TaskBoard::new(TaskStore::open(Box::new(journal), replay), bus.publisher());
    let handle = McpServer::start(McpConfig {
        context: SharedContext::with_tasks(Box::new(store), bus, board),
        agents,
        instance_dir: Some(dir.clone()),
        tool_timeout: None,
    })
    .await
    .unwrap();
    Inst {
        _tmp: tmp,
        dir,
        handle,
    }
}

async fn start(agents: &[&str]) -> Inst {
    start_at(
        tempfile::tempdir().unwrap(),
        agents.iter().map(|a| a.to_string()).collect(),
    )
    .await
}

async fn client(inst: &Inst, agent: &str) -> Client {
    http_client(inst.handle.url(), inst.handle.token(agent).unwrap())
        .await
        .0
}

/// A tool error: its code and sentence.
async fn coded(client: &Client, tool: &str, args: Value) -> (String, String) {
    let r = try_call(client, tool, args.clone())
        .await
        .unwrap_or_else(|e| panic!("{tool} {args}: protocol error {e}"));
    assert_eq!(r.is_error, Some(true), "{tool} {args}: {r:?}");
    let s = payload(&r);
    (
        s["code"].as_str().unwrap().to_string(),
        s["error"].as_str().unwrap().to_string(),
    )
}

async fn register(c: &Client, name: &str) -> String {
    let r = call(
        c,
        "agent_register",
        json!({"name": name, "runtime": "custom"}),
    )
    .await;
    r["id"].as_str().unwrap().to_string()
}

/// A workflow with plan: design; build (after design); docs (after
/// design); ship (after build and docs).
async fn planned(c: &Client) -> (String, Vec<String>) {
    let wf = call(
        c,
        "workflow_create",
        json!({"name": "feature", "source_content": "add login"}),
    )
    .await;
    assert_eq!(wf["status"], "planning");
    let wf = wf["id"].as_str().unwrap().to_string();
    assert!(wf.starts_with("wf_") && wf.len() == 15, "{wf}");
    let plan = call(
        c,
        "workflow_set_plan",
        json!({"id": wf, "plan": {"summary": "login", "tasks": [
            {"name": "design", "description": "sketch the flow"},
            {"name": "build", "depends_on": ["design"]},
            {"name": "docs", "depends_on": ["design"]},
            {"name": "ship", "depends_on": ["build", "docs"]},
        ]}}),
    )
    .await;
    let ids: Vec<String> = plan["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert!(ids.iter().all(|id| id.starts_with("tk_")), "{ids:?}");
    (wf, ids)
}

fn names(next: &Value) -> Vec<String> {
    next["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_lifecycle_with_identity_dependencies_and_error_codes() {
    let inst = start(&["coder", "reviewer"]).await;
    let coder = client(&inst, "coder").await;
    let reviewer = client(&inst, "reviewer").await;

    // Register: ag_ ids, the same id again, one per identity.
    let me = register(&coder, "worker-1").await;
    assert!(me.starts_with("ag_") && me.len() == 15, "{me}");
    assert_eq!(register(&coder, "worker-1 again").await, me);
    let other = register(&reviewer, "worker-2").await;
    assert_ne!(other, me);

    let (wf, ids) = planned(&coder).await;
    let [design, build, docs, ship] = [&ids[0], &ids[1], &ids[2], &ids[3]];
    // Only what has no open dependency can be taken.
    let next = call(&coder, "workflow_next_tasks", json!({"workflow_id": wf})).await;
    assert_eq!(names(&next), ["design"]);
    assert_eq!(next["workflow_status"], "ready");

    // Claim as someone else's registration: refused, as the seed's
    // `{success: false}` with the reason.
    let refused = call(
        &coder,
        "task_claim",
        json!({"task_id": design, "agent_id": other}),
    )
    .await;
    assert_eq!(refused["success"], false, "{refused}");
    assert_eq!(refused["code"], "PERMISSION_DENIED", "{refused}");
    assert!(
        refused["reason"].as_str().unwrap().contains(&other),
        "{refused}"
    );
    // Unknown ids.
    let (code, _) = coded(
        &coder,
        "task_claim",
        json!({"task_id": "tk_nope", "agent_id": me}),
    )
    .await;
    assert_eq!(code, "TASK_NOT_FOUND");
    let (code, _) = coded(
        &coder,
        "task_claim",
        json!({"task_id": design, "agent_id": "ag_nope"}),
    )
    .await;
    assert_eq!(code, "AGENT_NOT_FOUND");
    // A blocked task cannot be claimed: `{success: false}` with the reason.
    let blocked = call(
        &coder,
        "task_claim",
        json!({"task_id": build, "agent_id": me}),
    )
    .await;
    assert_eq!(blocked["success"], false, "{blocked}");
    assert_eq!(blocked["code"], "INVALID_TRANSITION", "{blocked}");
    assert!(
        blocked["reason"].as_str().unwrap().contains("design"),
        "{blocked}"
    );

    // Claim: one winner; the loser learns who holds it.
    let won = call(
        &coder,
        "task_claim",
        json!({"task_id": design, "agent_id": me}),
    )
    .await;
    assert_eq!(won, json!({"success": true}));
    let lost = call(
        &reviewer,
        "task_claim",
        json!({"task_id": design, "agent_id": other}),
    )
    .await;
    assert_eq!(lost["success"], false, "{lost}");
    assert_eq!(lost["already_claimed_by"], me.as_str(), "{lost}");
    assert_eq!(lost["code"], "ALREADY_CLAIMED", "{lost}");
    assert!(lost["reason"].as_str().unwrap().contains(&me), "{lost}");
    assert!(
        names(&call(&coder, "workflow_next_tasks", json!({"workflow_id": wf})).await).is_empty()
    );

    // Only the holder moves it; the table decides where.
    let (code, _) = coded(
        &reviewer,
        "task_update_status",
        json!({"id": design, "status": "in_progress"}),
    )
    .await;
    assert_eq!(code, "PERMISSION_DENIED");
    call(
        &coder,
        "task_set_plan",
        json!({"id": design, "plan": {"approach": "draw it", "steps": ["a", "b"]}}),
    )
    .await;
    call(
        &coder,
        "task_update_status",
        json!({"id": design, "status": "in_progress"}),
    )
    .await;
    let (code, msg) = coded(
        &coder,
        "task_update_status",
        json!({"id": design, "status": "completed"}),
    )
    .await;
    assert_eq!(code, "INVALID_TRANSITION");
    assert!(msg.contains("outcome"), "{msg}");
    let (code, _) = coded(
        &coder,
        "task_update_status",
        json!({"id": design, "status": "failed"}),
    )
    .await;
    assert_eq!(code, "INVALID_TRANSITION");
    let (code, msg) = coded(
        &coder,
        "task_update_status",
        json!({"id": design, "status": "pending"}),
    )
    .await;
    assert_eq!(code, "INVALID_TRANSITION");
    assert!(msg.contains("paused, completed, failed"), "{msg}");
    let (code, _) = coded(
        &coder,
        "task_update_status",
        json!({"id": "tk_nope", "status": "completed", "outcome": "x"}),
    )
    .await;
    assert_eq!(code, "TASK_NOT_FOUND");

    // Checkpoints and heartbeats.
    let cp = call(&coder, "checkpoint_add", json!({"task_id": design, "type": "progress", "summary": "drew the login box", "files_changed": ["design.md"]})).await;
    assert_eq!(cp["sequence"], 2, "the plan was checkpoint 1");
    let (code, _) = coded(
        &coder,
        "checkpoint_add",
        json!({"task_id": "tk_nope", "type": "progress", "summary": "x"}),
    )
    .await;
    assert_eq!(code, "TASK_NOT_FOUND");
    let hb = call(
        &coder,
        "agent_heartbeat",
        json!({"agent_id": me, "current_task_id": design, "status": "busy"}),
    )
    .await;
    assert_eq!(hb, json!({"success": true, "next_heartbeat_ms": 30000}));
    let (code, _) = coded(&coder, "agent_heartbeat", json!({"agent_id": "ag_nope"})).await;
    assert_eq!(code, "AGENT_NOT_FOUND");

    call(
        &coder,
        "task_update_status",
        json!({"id": design, "status": "completed", "outcome": "flow drawn in design.md"}),
    )
    .await;
    let (code, msg) = coded(
        &coder,
        "task_update_status",
        json!({"id": design, "status": "in_progress"}),
    )
    .await;
    assert_eq!(code, "INVALID_TRANSITION");
    assert!(msg.contains("final"), "{msg}");
    // Claiming a completed task: `{success: false}` with the reason, not a
    // tool error (issue 23, 7).
    let r = try_call(
        &reviewer,
        "task_claim",
        json!({"task_id": design, "agent_id": other}),
    )
    .await
    .unwrap();
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let done = payload(&r);
    assert_eq!(done["success"], false, "{done}");
    assert_eq!(done["code"], "INVALID_TRANSITION", "{done}");
    assert!(
        done["reason"].as_str().unwrap().contains("completed"),
        "{done}"
    );

    // Both dependents are free now; ship still waits for them.
    let next = call(&reviewer, "workflow_next_tasks", json!({"workflow_id": wf})).await;
    assert_eq!(names(&next), ["build", "docs"]);
    assert_eq!(next["workflow_status"], "in_progress");
    call(
        &reviewer,
        "task_claim",
        json!({"task_id": docs, "agent_id": other}),
    )
    .await;
    let progress = call(&coder, "workflow_progress", json!({"workflow_id": wf})).await;
    assert_eq!(progress["total_tasks"], 4);
    assert_eq!(
        progress["by_status"],
        json!({"completed": 1, "pending": 2, "claimed": 1})
    );
    let blocked: Vec<&str> = progress["blocked_tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    assert_eq!(blocked, [ship.as_str()]);
    let (code, _) = coded(
        &coder,
        "workflow_progress",
        json!({"workflow_id": "wf_nope"}),
    )
    .await;
    assert_eq!(code, "WORKFLOW_NOT_FOUND");

    // Context: the dependency's outcome reaches the next task.
    let ctx = call(&reviewer, "task_load_context", json!({"task_id": docs})).await;
    assert_eq!(
        ctx["dependency_outcomes"][0]["outcome"],
        "flow drawn in design.md"
    );
    assert_eq!(ctx["workflow"]["tasks"].as_array().unwrap().len(), 4);
    assert_eq!(ctx["current_task"]["name"], "docs");
    // The whole returned JSON fits max_tokens by awtui's own count
    // (characters of the compact JSON / 4), and token_estimate is it.
    for max in [200, 300, 500] {
        let r = try_call(
            &reviewer,
            "task_load_context",
            json!({"task_id": docs, "max_tokens": max}),
        )
        .await
        .unwrap();
        let v = payload(&r);
        // Exactly the text the tool sent.
        let text = r.content[0].as_text().unwrap().text.clone();
        let tokens = text.chars().count().div_ceil(4);
        assert!(tokens <= max, "{max}: {tokens} tokens: {text}");
        assert_eq!(v["token_estimate"], tokens, "{text}");
    }
    let (code, _) = coded(
        &reviewer,
        "task_load_context",
        json!({"task_id": "tk_nope"}),
    )
    .await;
    assert_eq!(code, "TASK_NOT_FOUND");

    // Recovery: list in-progress workflows, all checkpoints of a task.
    let list = call(
        &reviewer,
        "workflow_list",
        json!({"status": ["in_progress"]}),
    )
    .await;
    assert_eq!(list["workflows"][0]["id"], wf.as_str());
    // The seed's prose writes the status as one string: accepted too.
    let one = call(&reviewer, "workflow_list", json!({"status": "in_progress"})).await;
    assert_eq!(one, list);
    let none = call(&reviewer, "workflow_list", json!({"status": "completed"})).await;
    assert_eq!(none["total"], 0, "{none}");
    let all = call(
        &coder,
        "task_load_context",
        json!({"task_id": design, "include": {"all_checkpoints": true}}),
    )
    .await;
    let kinds: Vec<&str> = all["current_task"]["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["plan", "progress", "complete"]);

    // Unregistering gives back what it held.
    call(&reviewer, "agent_unregister", json!({"id": other})).await;
    let next = call(&coder, "workflow_next_tasks", json!({"workflow_id": wf})).await;
    assert_eq!(names(&next), ["build", "docs"]);
    let (code, _) = coded(&reviewer, "agent_unregister", json!({"id": "ag_nope"})).await;
    assert_eq!(code, "AGENT_NOT_FOUND");

    // Plans: unknown dependency, cycle, second plan.
    let wf2 = call(&coder, "workflow_create", json!({"name": "bad"})).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (code, msg) = coded(
        &coder,
        "workflow_set_plan",
        json!({"id": wf2, "plan": {"tasks": [{"name": "a", "depends_on": ["zzz"]}]}}),
    )
    .await;
    assert_eq!(code, "UNKNOWN_DEPENDENCY", "{msg}");
    let (code, msg) = coded(&coder, "workflow_set_plan", json!({"id": wf2, "plan": {"tasks": [
        {"name": "a", "depends_on": ["c"]}, {"name": "b", "depends_on": ["a"]}, {"name": "c", "depends_on": ["b"]}
    ]}})).await;
    assert_eq!(code, "DEPENDENCY_CYCLE");
    assert!(msg.contains("→"), "{msg}");
    let (code, _) = coded(
        &coder,
        "workflow_set_plan",
        json!({"id": wf, "plan": {"tasks": [{"name": "again"}]}}),
    )
    .await;
    assert_eq!(code, "INVALID_STATE");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_agents_claiming_one_task_exactly_one_wins() {
    let agents: Vec<String> = (0..20).map(|i| format!("a{i}")).collect();
    let refs: Vec<&str> = agents.iter().map(String::as_str).collect();
    let inst = start(&refs).await;
    let mut clients = Vec::new();
    let mut ids = Vec::new();
    for a in &agents {
        let c = client(&inst, a).await;
        ids.push(register(&c, a).await);
        clients.push(c);
    }
    let (_, tasks) = planned(&clients[0]).await;
    let design = tasks[0].clone();
    let claims = clients.iter().zip(&ids).map(|(c, id)| {
        let design = design.clone();
        async move { call(c, "task_claim", json!({"task_id": design, "agent_id": id})).await }
    });
    let results = futures_util::future::join_all(claims).await;
    let winners: Vec<usize> = results
        .iter()
        .enumerate()
        .filter(|(_, r)| r["success"] == true)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    let winner = &ids[winners[0]];
    for r in &results {
        if r["success"] == false {
            assert_eq!(r["already_claimed_by"], winner.as_str(), "{r}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_task_state_is_on_disk_when_reopened() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    let inst = start_at(tmp, vec!["coder".into()]).await;
    let c = client(&inst, "coder").await;
    let me = register(&c, "w").await;
    let (wf, ids) = planned(&c).await;
    call(&c, "task_claim", json!({"task_id": ids[0], "agent_id": me})).await;
    call(
        &c,
        "task_update_status",
        json!({"id": ids[0], "status": "in_progress"}),
    )
    .await;
    call(
        &c,
        "checkpoint_add",
        json!({"task_id": ids[0], "type": "decision", "summary": "JWT"}),
    )
    .await;
    // Read the journal as a new process would, while the server still runs.
    let (_, replay) = FileJournal::open(&inst.dir).unwrap();
    let store = TaskStore::open(Box::new(awtui::tasks::journal::NoJournal), replay);
    let t = store.task(&ids[0]).unwrap();
    assert_eq!(t.status.as_str(), "in_progress");
    assert_eq!(t.claimed_by.as_deref(), Some(me.as_str()));
    assert_eq!(store.checkpoints(&ids[0]).last().unwrap().summary, "JWT");
    assert_eq!(store.ready(&wf, false).len(), 0);
    assert_eq!(store.registration_of("coder").unwrap().id, me);
    drop(root);
}
