//! Pure parsers from each agent CLI's stdout to [`BackendEvent`]s. No I/O:
//! tested on recorded lines.

mod codex;
mod gemini;
mod opencode;
mod plain;
mod stream_json;

pub use codex::CodexParser;
pub use gemini::GeminiParser;
pub use opencode::OpencodeParser;
pub use plain::PlainParser;
pub use stream_json::StreamJsonParser;

use serde_json::Value;

use super::event::{BackendEvent, UsageMode};
use crate::workflow::BackendKind;

/// Turns a backend's stdout into events, line by line.
pub trait StreamParser: Send {
    /// Events for one line of stdout (without its newline).
    fn line(&mut self, line: &str) -> Vec<BackendEvent>;
    /// Events once stdout has closed; formats that print one document at the
    /// end are parsed here.
    fn finish(&mut self) -> Vec<BackendEvent> {
        Vec::new()
    }
    /// How this backend's usage reports combine.
    fn usage_mode(&self) -> UsageMode {
        UsageMode::Total
    }
    /// Whether awtui's MCP server was connected when the CLI started, when
    /// the CLI reports its servers (Claude Code's and Cursor's `init`
    /// event); `None` when it does not say.
    fn tools_connected(&self) -> Option<bool> {
        None
    }
    /// Tools the CLI refused to run for lack of permission this turn (Claude
    /// Code's `permission_denials`), in order.
    fn refused(&self) -> Vec<String> {
        Vec::new()
    }
    /// Whether text the parser collects (the answer, a document) was cut at
    /// [`OUTPUT_CAP`](crate::agents::backend::capped::OUTPUT_CAP).
    fn truncated(&self) -> bool {
        false
    }
}

/// The parser for a backend's output format.
pub fn parser_for(kind: BackendKind) -> Box<dyn StreamParser> {
    crate::agents::backend::backend_for(kind).parser()
}

/// Parses a line as a JSON object; other lines (banners, warnings) are noise.
fn json_line(line: &str) -> Option<Value> {
    let trimmed = line.trim();
    if !trimmed.starts_with('{') {
        return None;
    }
    serde_json::from_str(trimmed).ok().filter(Value::is_object)
}

/// A string field, if present and non-empty.
fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// A counter field (missing or malformed counts as zero).
fn count(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}
