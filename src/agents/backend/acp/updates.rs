//! `session/update` notifications folded into awtui's events: text
//! chunks, thoughts, tool calls with their kind, status, files and diffs,
//! the plan and usage. Pure.
//!
//! The agent's texts are untrusted: every title, path and preview is made
//! safe for a terminal and cut short here, once, before any front end
//! sees it (the streamed text is redacted and sanitized where every
//! backend's is).

use std::collections::HashMap;

use serde_json::Value;

use crate::agents::backend::capped::{OUTPUT_CAP, cut_to};
use crate::agents::backend::event::{BackendEvent, FileDiff, PlanEntry, ToolCallView, Usage};
use crate::sanitize::for_terminal;

/// How long a title, a path or a plan step may be.
const SHORT: usize = 300;
/// How much of a call's diffs is previewed, all files together (the
/// engine keeps its recent events whole: a call's event stays small).
const PREVIEW: usize = 4096;
/// How long one diff may take to compute (a hostile agent's huge texts).
const DIFF_TIME: std::time::Duration = std::time::Duration::from_millis(50);
/// How many files one call may list, and diffs it may carry.
const MAX_FILES: usize = 20;
const MAX_DIFFS: usize = 10;
/// How many tool calls of one turn are remembered (a hostile agent could
/// send endless new ids).
const MAX_CALLS: usize = 2000;
/// How many entries one plan may hold.
const MAX_ITEMS: usize = 50;

/// One turn's updates, folded.
#[derive(Debug, Default)]
pub struct TurnFold {
    calls: HashMap<String, ToolCallView>,
    /// The agent's text of this turn (its answer), capped.
    answer: String,
    truncated: bool,
    usage: Usage,
}

impl TurnFold {
    /// Folds one `session/update`'s `update` object in; returns what to
    /// report.
    pub fn apply(&mut self, update: &Value) -> Vec<BackendEvent> {
        let kind = update
            .get("sessionUpdate")
            .and_then(Value::as_str)
            .unwrap_or("");
        match kind {
            "agent_message_chunk" => {
                let Some(text) = content_text(update.get("content")) else {
                    return Vec::new();
                };
                if !self.truncated {
                    self.answer.push_str(&text);
                    self.truncated = cut_to(&mut self.answer, OUTPUT_CAP);
                }
                vec![BackendEvent::Text { text }]
            }
            "agent_thought_chunk" => vec![BackendEvent::Thinking],
            "tool_call" | "tool_call_update" => self.tool(update),
            "plan" => vec![BackendEvent::Plan {
                entries: plan(update),
            }],
            "usage_update" => {
                // `used` is the context window filled so far: the best
                // measure of input the protocol gives mid-turn.
                if let Some(used) = update.get("used").and_then(Value::as_u64) {
                    self.usage.input_tokens = used;
                }
                if let Some(cost) = update.pointer("/cost/amount").and_then(Value::as_f64) {
                    self.usage.cost_usd = Some(cost);
                }
                vec![BackendEvent::Usage { usage: self.usage }]
            }
            _ => Vec::new(),
        }
    }

    /// Folds the prompt result's `usage` (tokens of the whole turn).
    pub fn prompt_usage(&mut self, result: &Value) -> Option<BackendEvent> {
        let usage = result
            .get("usage")
            .or_else(|| result.pointer("/_meta/usage"))?;
        let n = |k: &str| usage.get(k).and_then(Value::as_u64);
        let input = n("inputTokens").or_else(|| n("input_tokens"))?;
        self.usage.input_tokens = input + n("cachedReadTokens").unwrap_or(0);
        self.usage.output_tokens = n("outputTokens")
            .or_else(|| n("output_tokens"))
            .unwrap_or(0);
        Some(BackendEvent::Usage { usage: self.usage })
    }

    /// The turn's text so far, and whether it was cut.
    pub fn answer(&self) -> (&str, bool) {
        (&self.answer, self.truncated)
    }

    /// The turn's usage as last reported.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// The call `id`, as last reported.
    pub fn call(&self, id: &str) -> Option<&ToolCallView> {
        self.calls.get(id)
    }

    fn tool(&mut self, update: &Value) -> Vec<BackendEvent> {
        let Some(id) = update.get("toolCallId").and_then(Value::as_str) else {
            return Vec::new();
        };
        let known = self.calls.contains_key(id);
        if !known && self.calls.len() >= MAX_CALLS {
            return Vec::new();
        }
        let call = self
            .calls
            .entry(id.to_string())
            .or_insert_with(|| ToolCallView {
                id: short(id),
                status: "pending".into(),
                kind: "other".into(),
                ..ToolCallView::default()
            });
        let was_finished = call.finished();
        let before = known.then(|| call.clone());
        merge(call, update);
        if before.as_ref() == Some(call) {
            // Nothing changed: nothing to report.
            return Vec::new();
        }
        let call = call.clone();
        let mut events = Vec::new();
        if !known {
            events.push(BackendEvent::ToolCall {
                name: display_name(&call),
            });
        }
        events.push(BackendEvent::Tool { call: call.clone() });
        if call.finished() && !was_finished {
            events.push(BackendEvent::ToolDone {
                name: display_name(&call),
                ok: call.status == "completed",
            });
        }
        events
    }
}

/// The name the status line shows for a call: its title, else its kind.
pub fn display_name(call: &ToolCallView) -> String {
    if call.title.is_empty() {
        call.kind.clone()
    } else {
        call.title.clone()
    }
}

/// Applies the fields an update carries (absent fields stay as they were).
pub fn merge(call: &mut ToolCallView, update: &Value) {
    let text = |k: &str| update.get(k).and_then(Value::as_str).map(short);
    if let Some(t) = text("title") {
        call.title = t;
    }
    if let Some(k) = text("kind") {
        call.kind = k;
    }
    if let Some(s) = text("status") {
        call.status = s;
    }
    if let Some(locations) = update.get("locations").and_then(Value::as_array) {
        call.locations = locations
            .iter()
            .filter_map(|l| l.get("path").and_then(Value::as_str))
            .take(MAX_FILES)
            .map(short)
            .collect();
    }
    if let Some(content) = update.get("content").and_then(Value::as_array) {
        let blocks: Vec<&Value> = content
            .iter()
            .filter(|c| c.get("type").and_then(Value::as_str) == Some("diff"))
            .take(MAX_DIFFS)
            .collect();
        let budget = PREVIEW / blocks.len().max(1);
        let diffs: Vec<FileDiff> = blocks.into_iter().map(|b| diff(b, budget)).collect();
        if !diffs.is_empty() {
            call.diffs = diffs;
        }
    }
}

/// A `diff` content block as counts and a preview of at most `budget`
/// bytes.
fn diff(block: &Value, budget: usize) -> FileDiff {
    let s = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or("");
    let (old, new) = (s("oldText"), s("newText"));
    let change = similar::TextDiff::configure()
        .deadline(std::time::Instant::now() + DIFF_TIME)
        .diff_lines(old, new);
    let (mut added, mut removed) = (0, 0);
    let mut preview = String::new();
    for op in change.iter_all_changes() {
        let sign = match op.tag() {
            similar::ChangeTag::Insert => {
                added += 1;
                '+'
            }
            similar::ChangeTag::Delete => {
                removed += 1;
                '-'
            }
            similar::ChangeTag::Equal => continue,
        };
        if preview.len() < budget {
            preview.push(sign);
            preview.push_str(op.value().trim_end_matches('\n'));
            preview.push('\n');
        }
    }
    let mut preview = for_terminal(&preview);
    cut_to(&mut preview, budget);
    FileDiff {
        path: short(s("path")),
        added,
        removed,
        preview,
    }
}

fn plan(update: &Value) -> Vec<PlanEntry> {
    update
        .get("entries")
        .and_then(Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .take(MAX_ITEMS)
                .map(|e| {
                    let s = |k: &str| {
                        e.get(k)
                            .and_then(Value::as_str)
                            .map(short)
                            .unwrap_or_default()
                    };
                    PlanEntry {
                        content: s("content"),
                        status: s("status"),
                        priority: s("priority"),
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The text of a content block (`{"type":"text","text":…}`).
pub fn content_text(content: Option<&Value>) -> Option<String> {
    let c = content?;
    match c.get("type").and_then(Value::as_str) {
        Some("text") | None => c.get("text").and_then(Value::as_str).map(str::to_string),
        _ => None,
    }
}

/// One line of the agent's text, safe for a terminal and cut short.
pub fn short(text: &str) -> String {
    let mut s: String = for_terminal(text).replace('\n', " ");
    cut_to(&mut s, SHORT);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_call_from_pending_to_completed_with_a_diff() {
        let mut f = TurnFold::default();
        let first = f.apply(&json!({
            "sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit src/a.rs",
            "kind": "edit", "status": "pending", "locations": [{"path": "/w/src/a.rs"}]
        }));
        assert!(matches!(&first[0], BackendEvent::ToolCall { name } if name == "Edit src/a.rs"));
        assert!(matches!(&first[1], BackendEvent::Tool { call } if call.status == "pending"));
        let done = f.apply(&json!({
            "sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed",
            "content": [{"type": "diff", "path": "/w/src/a.rs", "oldText": "a\nb\n", "newText": "a\nc\nd\n"}]
        }));
        let BackendEvent::Tool { call } = &done[0] else {
            panic!("{done:?}")
        };
        assert_eq!(call.locations, ["/w/src/a.rs"]);
        assert_eq!((call.diffs[0].added, call.diffs[0].removed), (2, 1));
        assert_eq!(call.diffs[0].preview, "-b\n+c\n+d\n");
        assert!(matches!(&done[1], BackendEvent::ToolDone { ok: true, .. }));
        // A repeated "completed" reports nothing.
        let again = f.apply(
            &json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}),
        );
        assert!(again.is_empty(), "{again:?}");
    }

    #[test]
    fn text_is_the_answer_and_escapes_never_reach_a_title() {
        let mut f = TurnFold::default();
        f.apply(&json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hel"}}));
        f.apply(&json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "lo"}}));
        assert_eq!(f.answer(), ("Hello", false));
        let e = f.apply(&json!({"sessionUpdate": "tool_call", "toolCallId": "x", "title": "a\u{1b}]52;c;AAAA\u{7}b\nc"}));
        let BackendEvent::ToolCall { name } = &e[0] else {
            panic!()
        };
        assert!(!name.contains('\u{1b}') && !name.contains('\n'), "{name:?}");
    }

    #[test]
    fn plan_usage_and_unknown_updates() {
        let mut f = TurnFold::default();
        let p = f.apply(&json!({"sessionUpdate": "plan", "entries": [{"content": "read", "status": "completed", "priority": "high"}]}));
        assert!(matches!(&p[0], BackendEvent::Plan { entries } if entries[0].content == "read"));
        let u = f.prompt_usage(
            &json!({"stopReason": "end_turn", "usage": {"inputTokens": 10, "outputTokens": 3}}),
        );
        assert!(matches!(u, Some(BackendEvent::Usage { usage }) if usage.output_tokens == 3));
        assert!(
            f.apply(&json!({"sessionUpdate": "available_commands_update"}))
                .is_empty()
        );
        assert!(f.apply(&json!("nonsense")).is_empty());
    }

    #[test]
    fn one_calls_files_and_diffs_stay_small_however_many_the_agent_sends() {
        let mut f = TurnFold::default();
        let big: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        let diffs: Vec<Value> = (0..60)
            .map(
                |i| json!({"type": "diff", "path": format!("f{i}"), "oldText": "", "newText": big}),
            )
            .collect();
        let files: Vec<Value> = (0..500).map(|i| json!({"path": format!("p{i}")})).collect();
        let e = f.apply(&json!({
            "sessionUpdate": "tool_call", "toolCallId": "x", "title": "t".repeat(100_000),
            "locations": files, "content": diffs
        }));
        let BackendEvent::Tool { call } = &e[1] else {
            panic!()
        };
        let size = serde_json::to_string(call).unwrap().len();
        assert!(size < 16 * 1024, "{size} bytes");
        assert_eq!(
            (call.locations.len(), call.diffs.len()),
            (MAX_FILES, MAX_DIFFS)
        );
        assert_eq!(call.diffs[0].added, 20_000);
    }

    #[test]
    fn endless_new_calls_are_bounded() {
        let mut f = TurnFold::default();
        for i in 0..(MAX_CALLS + 10) {
            f.apply(&json!({"sessionUpdate": "tool_call", "toolCallId": i.to_string()}));
        }
        assert_eq!(f.calls.len(), MAX_CALLS);
    }
}
