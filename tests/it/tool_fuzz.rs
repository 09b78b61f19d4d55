//! Every MCP tool against hostile arguments, generated from the tool's own
//! input schema (as `tools/list` serves it) plus variations a careless or
//! hostile agent sends: missing and extra fields, wrong types, 0, negative
//! and huge numbers, empty and 1 MB strings, unicode, unknown ids,
//! dependency cycles. For each call: an answer (result or structured
//! error) within a deadline, no panic, and the instance answering
//! afterwards. A fixed seed and a bounded number of cases keep CI
//! repeatable.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use awtui::context::{FileStore, StoreLayout};
use awtui::mcp::{McpConfig, McpServer, SharedContext};
use awtui::tasks::journal::FileJournal;
use awtui::tasks::{TaskBoard, TaskStore};
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use rmcp::model::CallToolRequestParams;
use serde_json::{Map, Value, json};
use support::{Client, PATIENCE, call, http_client};

/// A small deterministic generator, seeded by proptest's case.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }
}

/// Values of the wrong type for anything.
fn wrong_type(g: &mut Gen) -> Value {
    g.pick(&[
        Value::Null,
        json!(true),
        json!(-1),
        json!(1e308),
        json!("x"),
        json!([]),
        json!({}),
        json!([null, {"a": [1]}]),
    ])
}

fn string(g: &mut Gen, ids: &[String]) -> Value {
    let s = match g.below(14) {
        0 => String::new(),
        1 => "x".into(),
        2 | 3 if !ids.is_empty() => g.pick(ids),
        4 => "unknown-id-0".into(),
        5 => "../../etc/passwd".into(),
        6 => "/etc/passwd".into(),
        7 => "héllo 🎉 \u{202e}evil\u{200b} \u{9b}31m \u{1b}[2J".into(),
        8 => "nul\0byte".into(),
        9 if g.chance(25) => "a".repeat(1024 * 1024),
        10 => "b".repeat(10_000),
        11 => "@all @user @coder @reviewer please".into(),
        12 => "notes.md".into(),
        _ => format!("t{}", g.below(5)),
    };
    json!(s)
}

fn number(g: &mut Gen, integer: bool) -> Value {
    match g.below(10) {
        0 => json!(0),
        1 => json!(-1),
        2 => json!(i64::MAX),
        3 => json!(i64::MIN),
        4 => json!(u64::MAX),
        5 => json!(9_007_199_254_740_993u64),
        6 if !integer => json!(0.5),
        6 => json!(1),
        7 => json!(1e300),
        _ => json!(g.below(50)),
    }
}

/// A value for `schema`, hostile now and then. A field named like an id
/// mostly gets one that exists, so the call reaches past the lookup.
fn value(g: &mut Gen, name: &str, schema: &Value, ids: &[String], depth: usize) -> Value {
    if g.chance(8) {
        return wrong_type(g);
    }
    let id_like = name == "id" || name.ends_with("_id") || name.ends_with("_ids");
    if id_like && !ids.is_empty() && g.chance(60) {
        // An id of the kind the name says, when there is one.
        let prefix = if name.contains("task") {
            "tk_"
        } else if name.contains("workflow") {
            "wf_"
        } else {
            ""
        };
        let kind: Vec<String> = ids
            .iter()
            .filter(|i| i.starts_with(prefix))
            .cloned()
            .collect();
        let id = json!(g.pick(if kind.is_empty() { ids } else { &kind }));
        return if name.ends_with("_ids") {
            json!([id])
        } else {
            id
        };
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.is_empty()
        && g.chance(80)
    {
        return g.pick(options);
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(types)) if !types.is_empty() => {
            g.pick(types).as_str().unwrap_or("string").to_string()
        }
        _ => g.pick(&["string", "integer", "object"]).to_string(),
    };
    match ty.as_str() {
        "string" => string(g, ids),
        "integer" => number(g, true),
        "number" => number(g, false),
        "boolean" => json!(g.chance(50)),
        "null" => Value::Null,
        "array" if depth < 4 => {
            let len = if g.chance(3) { 1000 } else { g.below(4) };
            let item = schema.get("items").cloned().unwrap_or(json!({}));
            Value::Array(
                (0..len)
                    .map(|_| value(g, name, &item, ids, depth + 1))
                    .collect(),
            )
        }
        "object" if depth < 4 => object(g, schema, ids, depth + 1),
        _ => Value::Null,
    }
}

fn object(g: &mut Gen, schema: &Value, ids: &[String], depth: usize) -> Value {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Map::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, sub) in props {
            let keep = if required.contains(&name.as_str()) {
                g.chance(92)
            } else {
                g.chance(50)
            };
            if keep {
                out.insert(name.clone(), value(g, name, sub, ids, depth));
            }
        }
    }
    if g.chance(10) {
        out.insert("unexpected_field".into(), wrong_type(g));
    }
    Value::Object(out)
}

/// A plan whose tasks depend on each other in a cycle, and real ids to
/// point at.
async fn seed(client: &Client) -> Vec<String> {
    let w = call(
        client,
        "workflow_create",
        json!({"name": "fuzz", "source_type": "prompt", "source_content": "x"}),
    )
    .await;
    let wid = w["id"]
        .as_str()
        .or_else(|| w["workflow"]["id"].as_str())
        .unwrap()
        .to_string();
    let plan = call(
        client,
        "workflow_set_plan",
        json!({"id": wid, "plan": {"summary": "s", "tasks": [
            {"name": "t0", "description": "first"},
            {"name": "t1", "description": "second", "depends_on": ["t0"]},
        ]}}),
    )
    .await;
    let mut ids = vec![wid];
    if let Some(tasks) = plan["tasks"].as_array() {
        ids.extend(
            tasks
                .iter()
                .filter_map(|t| t["id"].as_str().map(str::to_string)),
        );
    }
    ids.push("coder".into());
    ids.push("1".into());
    ids
}

/// The scratch folder of the child process the fuzz runs in, set by the
/// test that starts it.
const SCRATCH: &str = "AWTUI_TOOL_FUZZ_SCRATCH";

#[test]
fn every_tool_answers_hostile_arguments_within_a_deadline() {
    // The fuzz counts panics with a process-wide hook, and relative
    // repository paths it makes up resolve in the working directory: both
    // belong to the whole process, which other tests share. So it runs
    // alone in a child process whose working directory is a scratch
    // folder, never this crate's own checkout.
    if let Some(scratch) = std::env::var_os(SCRATCH) {
        return fuzz(std::path::Path::new(&scratch));
    }
    let tmp = tempfile::tempdir().unwrap();
    let name = "every_tool_answers_hostile_arguments_within_a_deadline";
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &crate::test_path(module_path!(), name)])
        .args(["--nocapture", "--test-threads=1"])
        .current_dir(tmp.path())
        .env(SCRATCH, tmp.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "the fuzz failed in its child process:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The fuzz itself, in `scratch`, the working directory of its process.
fn fuzz(scratch: &std::path::Path) {
    let panics = Arc::new(AtomicUsize::new(0));
    {
        let panics = panics.clone();
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            panics.fetch_add(1, Ordering::SeqCst);
            previous(info);
        }));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let agents: Vec<String> = vec!["coder".into(), "reviewer".into()];
    let dir = scratch.join(".workflow").join("f");
    let (handle, coder, reviewer) = rt.block_on(async {
        let store = FileStore::open(
            &dir,
            &StoreLayout {
                channel: "channel.md".into(),
                document: "notes.md".into(),
                documents: vec!["notes.md".into()],
                agents: agents.clone(),
            },
        )
        .unwrap();
        let (journal, replay) = FileJournal::open(&dir).unwrap();
        let bus = awtui::context::Bus::new();
        let board = TaskBoard::new(TaskStore::open(Box::new(journal), replay), bus.publisher());
        let handle = McpServer::start(McpConfig {
            context: SharedContext::with_tasks(Box::new(store), bus, board),
            agents: agents.clone(),
            instance_dir: Some(dir.clone()),
            tool_timeout: Some(Duration::from_secs(10)),
        })
        .await
        .unwrap();
        let (coder, _) = http_client(handle.url(), handle.token("coder").unwrap()).await;
        let (reviewer, _) = http_client(handle.url(), handle.token("reviewer").unwrap()).await;
        (handle, coder, reviewer)
    });
    let ids = rt.block_on(seed(&coder));
    let tools: Vec<(String, Value)> = rt
        .block_on(coder.list_all_tools())
        .unwrap()
        .into_iter()
        .map(|t| (t.name.to_string(), Value::Object((*t.input_schema).clone())))
        .collect();
    assert!(tools.len() > 20, "every tool is listed: {}", tools.len());

    let config = Config {
        cases: 600,
        rng_seed: RngSeed::Fixed(21),
        failure_persistence: None,
        // A hang holds the board: shrinking would only wait on it again.
        max_shrink_iters: 0,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let strategy = (0..tools.len(), proptest::prelude::any::<u64>());
    let outcome = runner.run(&strategy, |(index, seed)| {
        let (name, schema) = &tools[index];
        let mut g = Gen(seed);
        let args = if g.chance(4) {
            json!({})
        } else {
            object(&mut g, schema, &ids, 0)
        };
        let client = if g.chance(50) { &coder } else { &reviewer };
        let shown: String = args.to_string().chars().take(300).collect();
        let answer = rt.block_on(async {
            tokio::time::timeout(
                PATIENCE, // the server's own deadline is shorter: a hang shows as its error
                client.call_tool(
                    CallToolRequestParams::new(name.clone())
                        .with_arguments(args.as_object().cloned().unwrap_or_default()),
                ),
            )
            .await
        });
        let answer = answer
            .map_err(|_| TestCaseError::fail(format!("{name} {shown}: no answer in time")))?;
        // A result, a tool error or a JSON-RPC error are all answers; a
        // deadline error means a tool did unbounded work.
        if let Ok(result) = &answer {
            let text = format!("{:?}", result.content);
            if text.contains("DEADLINE_EXCEEDED") {
                return Err(TestCaseError::fail(format!(
                    "{name} {shown}: hit the deadline"
                )));
            }
        }
        if panics.load(Ordering::SeqCst) > 0 {
            return Err(TestCaseError::fail(format!("{name} {shown}: panicked")));
        }
        // The instance still answers.
        let alive = rt.block_on(async {
            tokio::time::timeout(
                PATIENCE, // the server's own deadline is shorter: a hang shows as its error
                support::try_call(&reviewer, "channel_peek", json!({"limit": 1})),
            )
            .await
        });
        match alive {
            Ok(Ok(r)) if r.is_error != Some(true) => Ok(()),
            other => Err(TestCaseError::fail(format!(
                "after {name} {shown}: the instance does not answer: {other:?}"
            ))),
        }
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
    assert_eq!(panics.load(Ordering::SeqCst), 0);
    rt.block_on(async {
        drop(coder);
        drop(reviewer);
        handle.stop().await;
    });
}
