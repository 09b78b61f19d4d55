//! What a backend reports while a turn runs, in one vocabulary for every
//! agent CLI and API. Status comes from these, never from screen scraping.

use serde::{Deserialize, Serialize};

/// Tokens and cost of a turn, as far as the backend reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// US dollars, when the backend reports a cost.
    pub cost_usd: Option<f64>,
}

impl Usage {
    /// Adds another report (per-step usage from opencode, say).
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
    }
}

/// One structured event from a running turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BackendEvent {
    /// The agent's conversation id, to resume it next turn.
    Session { id: String },
    /// The model is working (reasoning, or a new step started).
    Thinking,
    /// Assistant text as it arrives.
    Text { text: String },
    /// A tool call began.
    ToolCall { name: String },
    /// A tool call finished.
    ToolDone { name: String, ok: bool },
    /// Usage reported so far for this turn; replaces earlier reports unless
    /// the backend reports per step (see [`UsageMode`]).
    Usage { usage: Usage },
    /// A whole AOP STREAM block the agent printed (marker lines included),
    /// to post at once so the stream grows live; not part of the answer.
    Stream { text: String },
    /// The turn's final answer.
    Final { text: String },
    /// The agent reported that the turn failed.
    Error { message: String },
    /// A tool call's whole state as it stands (ACP agents report kind,
    /// status, the files it touches and its diffs as they change).
    Tool { call: ToolCallView },
    /// The agent's plan, whole, as it stands (each report replaces the
    /// one before).
    Plan { entries: Vec<PlanEntry> },
}

/// One tool call as the agents pane, the web page and `--json` show it.
/// Every text in it is the agent's, made safe for a terminal and cut
/// short.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCallView {
    /// The agent's id for the call (unique within its session).
    pub id: String,
    pub title: String,
    /// `read`, `edit`, `delete`, `move`, `search`, `execute`, `think`,
    /// `fetch` or `other`.
    pub kind: String,
    /// `pending`, `in_progress`, `completed` or `failed`.
    pub status: String,
    /// The files it reads or changes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locations: Vec<String>,
    /// The changes it made or proposes, one per file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diffs: Vec<FileDiff>,
}

impl ToolCallView {
    /// Whether the call has ended (completed or failed).
    pub fn finished(&self) -> bool {
        matches!(self.status.as_str(), "completed" | "failed")
    }
}

/// One file's change in a tool call: line counts and a short preview.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FileDiff {
    pub path: String,
    pub added: usize,
    pub removed: usize,
    /// The changed lines, `-`/`+` prefixed, cut at a few KiB.
    pub preview: String,
}

/// One step of an agent's plan.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanEntry {
    pub content: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
    /// `high`, `medium` or `low`.
    pub priority: String,
}

/// How a backend's usage reports combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UsageMode {
    /// Each report is the turn's total so far.
    Total,
    /// Each report covers one step; they add up.
    PerStep,
}

/// Names an MCP tool call as the context tool it is, when it is one:
/// `mcp__awtui__channel_send` → `channel_send`.
pub fn short_tool_name(name: &str) -> &str {
    name.rsplit("__").next().unwrap_or(name)
}
