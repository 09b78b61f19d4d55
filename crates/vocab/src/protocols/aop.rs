//! Agent Output Protocol (AOP): pure parser for `=== AOP-{TYPE} ===` blocks.
//!
//! An agent wraps its output in typed blocks so that receivers know whether
//! they may touch it (INTERMEDIATE), must pass it through untouched (FINAL,
//! ERROR), should treat it as metadata (CONTEXT) or as one chunk of a longer
//! stream (STREAM). [`parse`] splits any text into plain and block segments and
//! reports everything that breaks the protocol as [`Finding`]s with 1-based line
//! numbers; [`group_streams`] joins STREAM chunks into streams.
//!
//! Decisions where the seed is silent or wrong:
//! - A marker must stand on a line of its own (surrounding whitespace is
//!   allowed); a marker in the middle of a sentence is ordinary text.
//! - Attribute values may contain spaces and `=` (the seed's sample regex
//!   forbids spaces); they end at the next `|` or at the closing `===`.
//! - FINAL and ERROR should carry an `agent` attribute, as in the reference
//!   validator; the other types need none. A missing `agent` is a warning
//!   in every mode, never an error: the seed's own examples write bare
//!   `=== AOP-FINAL ===` markers, and those must pass a strict check.
//! - Block content is the exact bytes between the start marker line and the
//!   end marker line, minus the single line break that precedes the end
//!   marker. An unclosed block runs to the end of the text.
//! - Every non-blank text outside blocks is "unmarked output"; text with no
//!   block at all (even empty text) is reported once.
//! - The seed never says how the last STREAM chunk is marked: a chunk is last
//!   when it has `final=true` (or `last=true`), when `chunk=N` equals
//!   `total=N`, or when it is written `chunk=N/N`; otherwise a stream completes
//!   when its agent produces anything else that is not blank text.

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// How strictly protocol violations are judged; shared by all protocol parsers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Accept what can be understood and record violations as warnings.
    #[default]
    Lenient,
    /// Record violations as errors, so the output counts as invalid.
    Strict,
}

/// How serious a finding is, derived from the [`Mode`] the text was parsed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The output violates the protocol (strict mode).
    Error,
    /// The output violates the protocol but was accepted (lenient mode).
    Warning,
}

impl Mode {
    /// The severity a violation gets in this mode.
    pub fn severity(self) -> Severity {
        match self {
            Mode::Lenient => Severity::Warning,
            Mode::Strict => Severity::Error,
        }
    }
}

/// The kind of protocol violation, so front ends can group or filter findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A block was opened and never closed.
    MissingEnd,
    /// A block was closed by an end marker of another type.
    MismatchedEnd,
    /// An end marker appeared with no block open.
    StrayEnd,
    /// A marker names a type that AOP does not define.
    UnknownType,
    /// A marker appeared inside another block (kept as that block's content).
    NestedMarker,
    /// Text was found outside any block, or no block at all.
    UnmarkedOutput,
    /// A block lacks an attribute its type requires.
    MissingAttribute,
    /// An attribute is not written as `key=value`.
    MalformedAttribute,
}

/// One protocol violation, located by its 1-based line number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// 1-based line of the offending marker or text.
    pub line: usize,
    /// What went wrong.
    pub kind: FindingKind,
    /// Human-readable explanation.
    pub message: String,
    /// Error in strict mode, warning in lenient mode.
    pub severity: Severity,
}

/// The five AOP block types, plus whatever else an agent wrote.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BlockType {
    /// Must be passed through byte for byte.
    Final,
    /// May be summarised or transformed.
    Intermediate,
    /// One chunk of a longer output.
    Stream,
    /// Error text to show unchanged.
    Error,
    /// Metadata, usually JSON.
    Context,
    /// A type name AOP does not define (reported as [`FindingKind::UnknownType`]).
    Unknown(String),
}

impl BlockType {
    /// Maps a marker's type name (case-sensitive, as in the seed) to a type.
    pub fn from_name(name: &str) -> Self {
        match name {
            "FINAL" => BlockType::Final,
            "INTERMEDIATE" => BlockType::Intermediate,
            "STREAM" => BlockType::Stream,
            "ERROR" => BlockType::Error,
            "CONTEXT" => BlockType::Context,
            other => BlockType::Unknown(other.to_string()),
        }
    }

    /// The name as written in markers.
    pub fn name(&self) -> &str {
        match self {
            BlockType::Final => "FINAL",
            BlockType::Intermediate => "INTERMEDIATE",
            BlockType::Stream => "STREAM",
            BlockType::Error => "ERROR",
            BlockType::Context => "CONTEXT",
            BlockType::Unknown(name) => name,
        }
    }

    /// Attributes a block of this type must carry.
    pub fn required_attributes(&self) -> &'static [&'static str] {
        match self {
            BlockType::Final | BlockType::Error => &["agent"],
            _ => &[],
        }
    }
}

impl fmt::Display for BlockType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One `key=value` pair from a start marker, in written order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attribute {
    /// Attribute name, trimmed.
    pub key: String,
    /// Attribute value, trimmed; inner spaces are kept.
    pub value: String,
}

/// A parsed AOP block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Block {
    /// The block's type.
    pub kind: BlockType,
    /// Attributes of the start marker, in written order.
    pub attributes: Vec<Attribute>,
    /// The exact bytes between the markers (see the module docs).
    pub content: String,
    /// For CONTEXT blocks whose content is JSON, the parsed value.
    pub json: Option<serde_json::Value>,
    /// 1-based line of the start marker.
    pub start_line: usize,
    /// 1-based line of the end marker; `None` when the block was never closed.
    pub end_line: Option<usize>,
}

impl Block {
    /// The value of the first attribute named `key`.
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|a| a.key == key)
            .map(|a| a.value.as_str())
    }

    /// Whether this STREAM chunk says it is the last one (see module docs).
    pub fn is_last_chunk(&self) -> bool {
        let flag = |key: &str| {
            self.attr(key)
                .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "true" | "yes" | "1"))
        };
        if flag("final") || flag("last") {
            return true;
        }
        let Some(chunk) = self.attr("chunk") else {
            return false;
        };
        let (index, total) = match chunk.split_once('/') {
            Some((index, total)) => (index, Some(total)),
            None => (chunk, self.attr("total")),
        };
        let number = |s: &str| s.trim().parse::<u64>().ok();
        match (number(index), total.and_then(number)) {
            (Some(index), Some(total)) => total > 0 && index >= total,
            _ => false,
        }
    }
}

/// A piece of agent output: plain text or a block, in the order written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "segment", rename_all = "snake_case")]
pub enum Segment {
    /// Text outside any block, byte-exact (including its line breaks).
    Text {
        /// The text.
        text: String,
        /// 1-based line where the text starts.
        line: usize,
    },
    /// An AOP block.
    Block(Block),
}

impl Segment {
    /// Whether this is text made only of whitespace (ignored between blocks).
    pub fn is_blank_text(&self) -> bool {
        matches!(self, Segment::Text { text, .. } if text.trim().is_empty())
    }
}

/// The result of [`parse`]: segments in order and every finding.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Parsed {
    /// Plain text and blocks, in the order they appear.
    pub segments: Vec<Segment>,
    /// Protocol violations, ordered by line.
    pub findings: Vec<Finding>,
}

impl Parsed {
    /// True when no finding is an error (always true in lenient mode).
    pub fn is_valid(&self) -> bool {
        self.findings.iter().all(|f| f.severity != Severity::Error)
    }

    /// True when there is no finding at all, whatever the mode.
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }

    /// The blocks, in order.
    pub fn blocks(&self) -> impl Iterator<Item = &Block> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Block(b) => Some(b),
            Segment::Text { .. } => None,
        })
    }
}

/// How many findings a run note lists before "and N more".
const NOTE_FINDINGS: usize = 3;

/// One compact line about the problems in the AOP blocks of `agent`'s
/// final answer, read leniently (it is posted as written), for the agent's
/// activity and a system note during a run; `None` when its blocks are
/// well formed. Text outside blocks, or no block at all, is not reported
/// here: models often write a line around their blocks, and an agent that
/// writes plain text is not using AOP.
pub fn run_note(agent: &str, answer: &str) -> Option<String> {
    let parsed = parse(answer, Mode::Lenient);
    let problems: Vec<&Finding> = parsed
        .findings
        .iter()
        .filter(|f| f.kind != FindingKind::UnmarkedOutput)
        .collect();
    if problems.is_empty() {
        return None;
    }
    let n = problems.len();
    let mut listed: Vec<String> = problems
        .iter()
        .take(NOTE_FINDINGS)
        .map(|f| format!("line {}: {}", f.line, f.message))
        .collect();
    if n > NOTE_FINDINGS {
        listed.push(format!("and {} more", n - NOTE_FINDINGS));
    }
    Some(format!(
        "{agent}'s answer has {n} AOP problem{} (accepted leniently; `awtui aop check` shows all): {}",
        if n == 1 { "" } else { "s" },
        listed.join("; ")
    ))
}

/// What a run says when an agent asked for strict AOP answers with text
/// outside AOP blocks (the seed: a strict receiver warns of unmarked
/// output): the first such line; `None` when every line is in a block (or
/// the answer is empty: nothing was said).
pub fn unmarked_note(agent: &str, answer: &str) -> Option<String> {
    if answer.trim().is_empty() {
        return None;
    }
    let parsed = parse(answer, Mode::Lenient);
    let first = parsed
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::UnmarkedOutput)?;
    Some(format!(
        "{agent}'s answer has unmarked output (line {}: {}) though its workflow asks for strict AOP (protocols: [aop-strict]); said once per run",
        first.line, first.message
    ))
}

/// Parses agent output into segments and findings; never fails or panics.
pub fn parse(text: &str, mode: Mode) -> Parsed {
    let mut parser = Parser {
        text,
        mode,
        out: Parsed::default(),
        open: None,
        text_start: Some((0, 1)),
    };
    let mut offset = 0;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        parser.line(offset, index + 1, line);
        offset += line.len();
    }
    parser.finish()
}

/// Whether `line` opens (`Some(false)`) or closes (`Some(true)`) a STREAM
/// block: lets a reader cut streamed chunks out of output as it arrives.
pub fn stream_marker(line: &str) -> Option<bool> {
    marker(line)
        .filter(|m| m.type_name.eq_ignore_ascii_case("STREAM"))
        .map(|m| m.end)
}

/// A marker line, split into its parts.
struct Marker<'a> {
    end: bool,
    type_name: &'a str,
    attributes: &'a str,
}

/// Recognises `=== AOP-T … ===` and `=== END-AOP-T … ===` lines.
fn marker(line: &str) -> Option<Marker<'_>> {
    let trimmed = line.trim();
    if trimmed.len() < 6 {
        return None;
    }
    let inner = trimmed.strip_prefix("===")?.strip_suffix("===")?.trim();
    let (end, rest) = match inner.strip_prefix("END-AOP-") {
        Some(rest) => (true, rest),
        None => (false, inner.strip_prefix("AOP-")?),
    };
    let split = rest
        .find(|c: char| c == '|' || c.is_whitespace())
        .unwrap_or(rest.len());
    let (type_name, attributes) = rest.split_at(split);
    Some(Marker {
        end,
        type_name,
        attributes: attributes.trim(),
    })
}

/// A block whose end marker has not been seen yet.
struct OpenBlock {
    kind: BlockType,
    type_name: String,
    attributes: Vec<Attribute>,
    start_line: usize,
    content_start: usize,
    crlf: bool,
    nested: Vec<String>,
}

/// Line-by-line state machine behind [`parse`].
struct Parser<'a> {
    text: &'a str,
    mode: Mode,
    out: Parsed,
    open: Option<OpenBlock>,
    /// Byte offset and line of the plain text not yet emitted.
    text_start: Option<(usize, usize)>,
}

impl Parser<'_> {
    fn finding(&mut self, line: usize, kind: FindingKind, message: String) {
        let severity = self.mode.severity();
        self.finding_as(line, kind, message, severity);
    }

    fn finding_as(&mut self, line: usize, kind: FindingKind, message: String, severity: Severity) {
        self.out.findings.push(Finding {
            line,
            kind,
            message,
            severity,
        });
    }

    fn line(&mut self, offset: usize, number: usize, line: &str) {
        let Some(marker) = marker(line) else {
            return;
        };
        match (self.open.is_some(), marker.end) {
            (false, false) => self.open_block(offset, number, line, &marker),
            (false, true) => self.finding(
                number,
                FindingKind::StrayEnd,
                format!("END-AOP-{} without an open block", marker.type_name),
            ),
            (true, false) => self.nested_start(number, &marker),
            (true, true) => {
                if self.end_inside(offset, number, &marker) {
                    self.text_start = Some((offset + line.len(), number + 1));
                }
            }
        }
    }

    fn flush_text(&mut self, until: usize) {
        if let Some((start, line)) = self.text_start.take()
            && until > start
        {
            let text = self.text[start..until].to_string();
            self.out.segments.push(Segment::Text { text, line });
        }
    }

    fn open_block(&mut self, offset: usize, number: usize, line: &str, marker: &Marker<'_>) {
        self.flush_text(offset);
        let kind = BlockType::from_name(marker.type_name);
        if let BlockType::Unknown(name) = &kind {
            let message = format!("unknown AOP type `{name}`");
            self.finding(number, FindingKind::UnknownType, message);
        }
        let attributes = self.attributes(number, marker.attributes);
        for &required in kind.required_attributes() {
            let present = attributes
                .iter()
                .any(|a| a.key == required && !a.value.is_empty());
            if !present {
                // Only a warning, even in strict mode (see the module doc).
                let message = format!("AOP-{kind} should name its `{required}` attribute");
                self.finding_as(
                    number,
                    FindingKind::MissingAttribute,
                    message,
                    Severity::Warning,
                );
            }
        }
        self.open = Some(OpenBlock {
            kind,
            type_name: marker.type_name.to_string(),
            attributes,
            start_line: number,
            content_start: offset + line.len(),
            crlf: line.ends_with("\r\n"),
            nested: Vec::new(),
        });
    }

    fn attributes(&mut self, number: usize, raw: &str) -> Vec<Attribute> {
        let raw = match raw.strip_prefix('|') {
            Some(rest) => rest,
            None if raw.is_empty() => return Vec::new(),
            None => {
                let message = format!("expected `| key=value` after the type, found `{raw}`");
                self.finding(number, FindingKind::MalformedAttribute, message);
                return Vec::new();
            }
        };
        let mut attributes = Vec::new();
        for piece in raw.split('|').map(str::trim).filter(|p| !p.is_empty()) {
            match piece.split_once('=') {
                Some((key, value)) if !key.trim().is_empty() => attributes.push(Attribute {
                    key: key.trim().to_string(),
                    value: value.trim().to_string(),
                }),
                _ => {
                    let message = format!("attribute `{piece}` is not `key=value`");
                    self.finding(number, FindingKind::MalformedAttribute, message);
                }
            }
        }
        attributes
    }

    fn nested_start(&mut self, number: usize, marker: &Marker<'_>) {
        let Some(open) = self.open.as_mut() else {
            return;
        };
        open.nested.push(marker.type_name.to_string());
        let message = format!(
            "AOP-{} marker inside the AOP-{} block opened at line {}; kept as content",
            marker.type_name, open.type_name, open.start_line
        );
        self.finding(number, FindingKind::NestedMarker, message);
    }

    /// Handles an end marker inside a block; returns whether it closed the block.
    fn end_inside(&mut self, offset: usize, number: usize, marker: &Marker<'_>) -> bool {
        let Some(open) = self.open.as_mut() else {
            return false;
        };
        let name = marker.type_name;
        if open.nested.last().is_some_and(|n| n == name) {
            open.nested.pop();
            return false;
        }
        if name != open.type_name {
            if let Some(pos) = open.nested.iter().rposition(|n| n == name) {
                open.nested.truncate(pos);
                return false;
            }
            let message = format!(
                "END-AOP-{name} closes the AOP-{} block opened at line {}",
                open.type_name, open.start_line
            );
            self.finding(number, FindingKind::MismatchedEnd, message);
        }
        if !marker.attributes.is_empty() {
            let message = format!("end markers take no attributes: `{}`", marker.attributes);
            self.finding(number, FindingKind::MalformedAttribute, message);
        }
        self.close(offset, Some(number));
        true
    }

    /// Closes the open block whose content ends at byte `until`.
    fn close(&mut self, until: usize, end_line: Option<usize>) {
        let Some(open) = self.open.take() else {
            return;
        };
        let mut content = &self.text[open.content_start.min(until)..until];
        if end_line.is_some()
            && let Some(stripped) = content.strip_suffix('\n')
        {
            content = if open.crlf {
                stripped.strip_suffix('\r').unwrap_or(stripped)
            } else {
                stripped
            };
        }
        let json = match open.kind {
            BlockType::Context => serde_json::from_str(content).ok(),
            _ => None,
        };
        self.out.segments.push(Segment::Block(Block {
            kind: open.kind,
            attributes: open.attributes,
            content: content.to_string(),
            json,
            start_line: open.start_line,
            end_line,
        }));
    }

    fn finish(mut self) -> Parsed {
        let len = self.text.len();
        if let Some(open) = &self.open {
            let message = format!(
                "AOP-{} opened at line {} has no END-AOP-{} marker",
                open.type_name, open.start_line, open.type_name
            );
            let line = open.start_line;
            self.finding(line, FindingKind::MissingEnd, message);
            self.close(len, None);
        }
        self.flush_text(len);
        self.unmarked_findings();
        self.out.findings.sort_by_key(|f| f.line);
        self.out
    }

    fn unmarked_findings(&mut self) {
        if self.out.blocks().next().is_none() {
            let line = first_content_line(self.text, 1);
            let message = "output contains no AOP block".to_string();
            self.finding(line, FindingKind::UnmarkedOutput, message);
            return;
        }
        let lines: Vec<usize> = self
            .out
            .segments
            .iter()
            .filter_map(|s| match s {
                Segment::Text { text, line } if !text.trim().is_empty() => {
                    Some(first_content_line(text, *line))
                }
                _ => None,
            })
            .collect();
        for line in lines {
            let message = "text outside any AOP block".to_string();
            self.finding(line, FindingKind::UnmarkedOutput, message);
        }
    }
}

/// The line of the first non-blank line in `text`, which starts at `line`.
fn first_content_line(text: &str, line: usize) -> usize {
    text.split('\n')
        .position(|l| !l.trim().is_empty())
        .map_or(line, |skip| line + skip)
}

/// Consecutive STREAM chunks from one agent, joined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stream {
    /// The agent that wrote the chunks.
    pub agent: String,
    /// Chunk contents, in arrival order.
    pub chunks: Vec<String>,
    /// Whether the last chunk has arrived (see module docs).
    pub complete: bool,
}

impl Stream {
    /// The chunks joined by line breaks, as a receiver would display them.
    pub fn text(&self) -> String {
        self.chunks.join("\n")
    }
}

/// Groups STREAM blocks from a sequence of (agent, parsed output) into streams.
///
/// Output from other agents may be interleaved; blank text does not interrupt
/// a stream. Streams are returned in the order they started.
pub fn group_streams<'a, I>(items: I) -> Vec<Stream>
where
    I: IntoIterator<Item = (&'a str, &'a Parsed)>,
{
    let mut streams: Vec<Stream> = Vec::new();
    let mut open: HashMap<&str, usize> = HashMap::new();
    for (agent, parsed) in items {
        for segment in &parsed.segments {
            match segment {
                Segment::Block(block) if block.kind == BlockType::Stream => {
                    let index = *open.entry(agent).or_insert_with(|| {
                        streams.push(Stream {
                            agent: agent.to_string(),
                            chunks: Vec::new(),
                            complete: false,
                        });
                        streams.len() - 1
                    });
                    streams[index].chunks.push(block.content.clone());
                    if block.is_last_chunk() {
                        streams[index].complete = true;
                        open.remove(agent);
                    }
                }
                other if other.is_blank_text() => {}
                _ => {
                    if let Some(index) = open.remove(agent) {
                        streams[index].complete = true;
                    }
                }
            }
        }
    }
    streams
}

#[cfg(test)]
mod tests;
