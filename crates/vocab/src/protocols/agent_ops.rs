//! Agent operations: the `key: value` frontmatter an agent may put at the top
//! of a turn's output (`ack`, `done`, `fail`, `reply`, `send`, `delegate`,
//! `defer`, `delete`, `surface`/`mca`). This module only parses; executing the
//! operations is the engine's job.
//!
//! Decisions where the seed is silent or wrong:
//! - Message and thread ids are awtui channel ids: integers, optionally
//!   written with a leading `#` (`done: #12`). The seed's string ids
//!   (`review-123`) are refused as not being message ids.
//! - The frontmatter must start on the first line (a UTF-8 BOM is skipped) and
//!   end with a second `---` line; an opening `---` that is never closed is a
//!   markdown rule, not frontmatter: no operation is read and a problem says so.
//! - `id` must equal the id of the message that woke the turn. If it differs,
//!   if a turn not woken by a message carries one, or if operations are
//!   present without any `id`, all operations are refused with a reason.
//! - Keys are case-insensitive; a value wrapped in one pair of matching quotes
//!   is unwrapped; blank lines and `#` comment lines are ignored.
//! - Peers may be written with a leading `@` and must be in the known peers.
//! - `defer` without `until` defers to the next wake; `until` is an RFC 3339
//!   timestamp or a duration made of `<n>d`, `<n>h`, `<n>m`, `<n>s` parts
//!   (`1h30m`).
//! - Strict mode refuses every operation when any line is malformed; lenient
//!   mode (the default) keeps the valid ones.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use super::aop::Mode;

/// When a deferred message should come back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeferUntil {
    /// At this instant.
    Absolute(DateTime<Utc>),
    /// This many seconds after the operation is executed.
    Relative(u64),
    /// The next time the agent is woken anyway.
    NextWake,
}

/// One operation, as written in the frontmatter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// Acknowledge a message without further action.
    Ack {
        /// Message acknowledged.
        id: u64,
    },
    /// Mark a message or thread as complete.
    Done {
        /// Message or thread completed.
        id: u64,
    },
    /// Report failure to process a message.
    Fail {
        /// Message that failed.
        id: u64,
        /// Why; `unspecified` when not given.
        reason: String,
    },
    /// Append a reply to a thread.
    Reply {
        /// Thread replied to.
        thread: u64,
        /// Reply text.
        message: String,
    },
    /// Send a message to a peer.
    Send {
        /// Recipient (without `@`).
        peer: String,
        /// Message text.
        message: String,
    },
    /// Hand a thread to another agent.
    Delegate {
        /// Thread handed over.
        thread: u64,
        /// New owner (without `@`).
        peer: String,
    },
    /// Postpone a message.
    Defer {
        /// Message postponed.
        id: u64,
        /// When it comes back.
        until: DeferUntil,
    },
    /// Discard a thread.
    Delete {
        /// Thread discarded.
        id: u64,
    },
    /// Surface an MCA for community pickup (`surface` or `mca`).
    Surface {
        /// What should be picked up.
        description: String,
    },
}

/// Why a frontmatter line was not turned into an operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "error", rename_all = "snake_case")]
pub enum OpError {
    /// The line is not `key: value`.
    #[error("expected `key: value`")]
    NotKeyValue,
    /// The key is not an operation.
    #[error("unknown operation `{key}`")]
    UnknownKey {
        /// The key as written.
        key: String,
    },
    /// The value is empty.
    #[error("`{key}` needs a value")]
    EmptyValue {
        /// The operation.
        key: String,
    },
    /// A required `|`-separated part is missing or empty.
    #[error("`{key}` needs `{expected}`")]
    MissingPart {
        /// The operation.
        key: String,
        /// The expected form, e.g. `thread|message`.
        expected: String,
    },
    /// A message or thread id is not an integer.
    #[error("`{value}` is not a message id (expected a number such as 12 or #12)")]
    BadId {
        /// The value as written.
        value: String,
    },
    /// A peer is not part of the workflow.
    #[error("unknown peer `{peer}`")]
    UnknownPeer {
        /// The peer as written (without `@`).
        peer: String,
    },
    /// A defer time is neither RFC 3339 nor a duration.
    #[error("`{value}` is neither an RFC 3339 time nor a duration like 10m, 2h or 30s")]
    BadUntil {
        /// The value as written.
        value: String,
    },
    /// The frontmatter was opened but never closed.
    #[error("frontmatter opened with `---` is never closed; no operation was read")]
    UnclosedFrontmatter,
}

/// A frontmatter line that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpProblem {
    /// 1-based line in the output.
    pub line: usize,
    /// The line as written (without its line break).
    pub text: String,
    /// What is wrong with it.
    pub reason: OpError,
}

/// Everything read from one turn's output.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OpsParse {
    /// Valid operations in written order (empty when refused).
    pub ops: Vec<Op>,
    /// Lines that could not be used.
    pub problems: Vec<OpProblem>,
    /// Why all operations were refused, if they were.
    pub refused: Option<String>,
    /// The output after the frontmatter (all of it when there is none).
    pub body: String,
}

/// Why a whole set of operations is refused.
#[derive(Debug, thiserror::Error)]
enum Refusal {
    #[error(
        "operations refused: `id` is required and must be the id of the message that woke the turn (#{0})"
    )]
    MissingId(u64),
    #[error("operations refused: `id` is required, but this turn was not woken by a message")]
    NoWakingMessage,
    #[error(
        "operations refused: id #{found} does not match the message that woke the turn (#{expected})"
    )]
    Mismatch { found: u64, expected: u64 },
    #[error("operations refused: `{0}` is not a message id")]
    BadId(String),
    #[error("operations refused: strict mode and {0} malformed line(s)")]
    Strict(usize),
}

/// Parses a turn's output leniently (valid operations survive bad lines).
pub fn parse_ops(output: &str, woke_by: Option<u64>, known_peers: &[&str]) -> OpsParse {
    parse_ops_with(output, woke_by, known_peers, Mode::Lenient)
}

/// Parses a turn's output in the given mode (strict refuses on any bad line).
pub fn parse_ops_with(
    output: &str,
    woke_by: Option<u64>,
    known_peers: &[&str],
    mode: Mode,
) -> OpsParse {
    let text = output.strip_prefix('\u{feff}').unwrap_or(output);
    let Some(front) = split_frontmatter(text) else {
        return OpsParse {
            body: output.to_string(),
            ..OpsParse::default()
        };
    };
    let mut result = OpsParse {
        body: front.body.to_string(),
        ..OpsParse::default()
    };
    let Some(lines) = front.lines else {
        result.problems.push(OpProblem {
            line: 1,
            text: "---".to_string(),
            reason: OpError::UnclosedFrontmatter,
        });
        return result;
    };
    let mut ids = Vec::new();
    let mut any_line = false;
    for (number, line) in lines {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        any_line = true;
        match parse_line(trimmed, known_peers) {
            Ok(Line::Id(id)) => ids.push(id),
            Ok(Line::Op(op)) => result.ops.push(op),
            Err(reason) => result.problems.push(OpProblem {
                line: number,
                text: line.to_string(),
                reason,
            }),
        }
    }
    let refusal = check_ids(&ids, woke_by, any_line).or_else(|| {
        (mode == Mode::Strict && !result.problems.is_empty())
            .then_some(Refusal::Strict(result.problems.len()))
    });
    if let Some(refusal) = refusal {
        result.ops.clear();
        result.refused = Some(refusal.to_string());
    }
    result
}

/// The frontmatter lines (with 1-based numbers) and the body after it.
struct Frontmatter<'a> {
    /// `None` when the opening `---` is never closed.
    lines: Option<Vec<(usize, &'a str)>>,
    body: &'a str,
}

/// Splits off a leading `---` … `---` block, if the text starts with one.
fn split_frontmatter(text: &str) -> Option<Frontmatter<'_>> {
    let mut lines = text.split_inclusive('\n');
    let first = lines.next()?;
    if first.trim_end() != "---" {
        return None;
    }
    let mut offset = first.len();
    let mut inner = Vec::new();
    for (index, line) in lines.enumerate() {
        offset += line.len();
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare.trim_end() == "---" {
            return Some(Frontmatter {
                lines: Some(inner),
                body: &text[offset..],
            });
        }
        inner.push((index + 2, bare));
    }
    Some(Frontmatter {
        lines: None,
        body: text,
    })
}

/// A frontmatter line that parsed.
enum Line {
    Id(Result<u64, String>),
    Op(Op),
}

/// Parses one non-blank, non-comment frontmatter line.
fn parse_line(line: &str, known_peers: &[&str]) -> Result<Line, OpError> {
    let (key, value) = line.split_once(':').ok_or(OpError::NotKeyValue)?;
    let key = key.trim().to_ascii_lowercase();
    let value = unquote(value.trim());
    if key == "id" {
        return Ok(Line::Id(message_id(value).map_err(|_| value.to_string())));
    }
    if !KEYS.contains(&key.as_str()) {
        return Err(OpError::UnknownKey { key });
    }
    if value.is_empty() {
        return Err(OpError::EmptyValue { key });
    }
    let parts = Parts {
        key: &key,
        value,
        known_peers,
    };
    parts.op().map(Line::Op)
}

/// Every operation key (besides `id`).
const KEYS: &[&str] = &[
    "ack", "done", "fail", "reply", "send", "delegate", "defer", "delete", "surface", "mca",
];

/// The value of one operation line, with the helpers that read its parts.
struct Parts<'a> {
    key: &'a str,
    value: &'a str,
    known_peers: &'a [&'a str],
}

impl Parts<'_> {
    fn op(&self) -> Result<Op, OpError> {
        Ok(match self.key {
            "ack" => Op::Ack { id: self.id()? },
            "done" => Op::Done { id: self.id()? },
            "delete" => Op::Delete { id: self.id()? },
            "fail" => {
                let (id, reason) = self.optional_pair();
                Op::Fail {
                    id: message_id(id)?,
                    reason: reason.unwrap_or("unspecified").to_string(),
                }
            }
            "reply" => {
                let (thread, message) = self.pair("thread|message")?;
                Op::Reply {
                    thread: message_id(thread)?,
                    message: message.to_string(),
                }
            }
            "send" => {
                let (peer, message) = self.pair("peer|message")?;
                Op::Send {
                    peer: self.peer(peer)?,
                    message: message.to_string(),
                }
            }
            "delegate" => {
                let (thread, peer) = self.pair("thread|peer")?;
                Op::Delegate {
                    thread: message_id(thread)?,
                    peer: self.peer(peer)?,
                }
            }
            "defer" => {
                let (id, until) = self.optional_pair();
                Op::Defer {
                    id: message_id(id)?,
                    until: until.map_or(Ok(DeferUntil::NextWake), parse_until)?,
                }
            }
            _ => Op::Surface {
                description: self.value.to_string(),
            },
        })
    }

    fn id(&self) -> Result<u64, OpError> {
        message_id(self.value)
    }

    /// `a|b` where `b` may be absent or empty.
    fn optional_pair(&self) -> (&str, Option<&str>) {
        match self.value.split_once('|') {
            Some((a, b)) => (a.trim(), Some(b.trim()).filter(|b| !b.is_empty())),
            None => (self.value, None),
        }
    }

    /// `a|b` where both parts are required.
    fn pair(&self, expected: &str) -> Result<(&str, &str), OpError> {
        match self.optional_pair() {
            (a, Some(b)) if !a.is_empty() => Ok((a, b)),
            _ => Err(OpError::MissingPart {
                key: self.key.to_string(),
                expected: expected.to_string(),
            }),
        }
    }

    fn peer(&self, peer: &str) -> Result<String, OpError> {
        let peer = peer.strip_prefix('@').unwrap_or(peer);
        if self.known_peers.contains(&peer) {
            Ok(peer.to_string())
        } else {
            Err(OpError::UnknownPeer {
                peer: peer.to_string(),
            })
        }
    }
}

/// Reads `12` or `#12` as a message id.
fn message_id(value: &str) -> Result<u64, OpError> {
    let digits = value.strip_prefix('#').unwrap_or(value);
    digits.parse().map_err(|_| OpError::BadId {
        value: value.to_string(),
    })
}

/// Removes one pair of matching surrounding quotes.
fn unquote(value: &str) -> &str {
    ['"', '\'']
        .iter()
        .find_map(|&q| value.strip_prefix(q)?.strip_suffix(q))
        .map_or(value, str::trim)
}

/// Checks the `id` lines against the waking message.
fn check_ids(ids: &[Result<u64, String>], woke_by: Option<u64>, any_line: bool) -> Option<Refusal> {
    if ids.is_empty() {
        return match (any_line, woke_by) {
            (false, _) => None,
            (true, Some(expected)) => Some(Refusal::MissingId(expected)),
            (true, None) => Some(Refusal::NoWakingMessage),
        };
    }
    let Some(expected) = woke_by else {
        return Some(Refusal::NoWakingMessage);
    };
    ids.iter().find_map(|id| match id {
        Err(value) => Some(Refusal::BadId(value.clone())),
        Ok(found) if *found != expected => Some(Refusal::Mismatch {
            found: *found,
            expected,
        }),
        Ok(_) => None,
    })
}

/// Parses a defer time: RFC 3339, or a duration such as `10m` or `1h30m`.
fn parse_until(value: &str) -> Result<DeferUntil, OpError> {
    if let Ok(time) = DateTime::parse_from_rfc3339(value) {
        return Ok(DeferUntil::Absolute(time.with_timezone(&Utc)));
    }
    parse_duration(value)
        .map(DeferUntil::Relative)
        .ok_or_else(|| OpError::BadUntil {
            value: value.to_string(),
        })
}

/// Seconds in a duration made of `<n>d`, `<n>h`, `<n>m` and `<n>s` parts
/// (the crate's one duration syntax); a bare number is not a duration here,
/// since `defer: 12|10` more likely lost its unit than meant ten seconds.
fn parse_duration(value: &str) -> Option<u64> {
    if value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    crate::duration::parse_duration(value)
        .ok()
        .map(|d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PEERS: &[&str] = &["coder", "reviewer"];

    fn ops_of(front: &str) -> OpsParse {
        parse_ops(&format!("---\nid: 7\n{front}\n---\nbody\n"), Some(7), PEERS)
    }

    fn single(front: &str) -> Op {
        let parsed = ops_of(front);
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        assert_eq!(parsed.refused, None);
        assert_eq!(parsed.ops.len(), 1, "{:?}", parsed.ops);
        parsed.ops[0].clone()
    }

    fn problem(front: &str) -> OpError {
        let parsed = ops_of(front);
        assert_eq!(parsed.problems.len(), 1, "{:?}", parsed.problems);
        assert_eq!(parsed.problems[0].line, 3);
        assert_eq!(parsed.problems[0].text, front);
        parsed.problems[0].reason.clone()
    }

    #[test]
    fn each_operation() {
        let cases = [
            ("ack: 12", Op::Ack { id: 12 }),
            ("done: #7", Op::Done { id: 7 }),
            ("delete: 3", Op::Delete { id: 3 }),
            (
                "fail: 5|missing context",
                Op::Fail {
                    id: 5,
                    reason: "missing context".into(),
                },
            ),
            (
                "fail: 5",
                Op::Fail {
                    id: 5,
                    reason: "unspecified".into(),
                },
            ),
            (
                "fail: 5|",
                Op::Fail {
                    id: 5,
                    reason: "unspecified".into(),
                },
            ),
            (
                "reply: #4|Looks good | ship it",
                Op::Reply {
                    thread: 4,
                    message: "Looks good | ship it".into(),
                },
            ),
            (
                "send: @coder|please fix line 42",
                Op::Send {
                    peer: "coder".into(),
                    message: "please fix line 42".into(),
                },
            ),
            (
                "send: reviewer|ready",
                Op::Send {
                    peer: "reviewer".into(),
                    message: "ready".into(),
                },
            ),
            (
                "delegate: 9|reviewer",
                Op::Delegate {
                    thread: 9,
                    peer: "reviewer".into(),
                },
            ),
            (
                "defer: 9",
                Op::Defer {
                    id: 9,
                    until: DeferUntil::NextWake,
                },
            ),
            (
                "defer: 9|10m",
                Op::Defer {
                    id: 9,
                    until: DeferUntil::Relative(600),
                },
            ),
            (
                "defer: 9|2h",
                Op::Defer {
                    id: 9,
                    until: DeferUntil::Relative(7_200),
                },
            ),
            (
                "defer: 9|30s",
                Op::Defer {
                    id: 9,
                    until: DeferUntil::Relative(30),
                },
            ),
            (
                "defer: 9|1h30m",
                Op::Defer {
                    id: 9,
                    until: DeferUntil::Relative(5_400),
                },
            ),
            (
                "surface: Add retry logic to wake mechanism",
                Op::Surface {
                    description: "Add retry logic to wake mechanism".into(),
                },
            ),
            (
                "mca: \"Quoted: idea\"",
                Op::Surface {
                    description: "Quoted: idea".into(),
                },
            ),
            ("DONE: 7", Op::Done { id: 7 }),
        ];
        for (line, expected) in cases {
            assert_eq!(single(line), expected, "{line}");
        }
    }

    #[test]
    fn defer_until_rfc3339() {
        let op = single("defer: 9|2025-06-01T10:30:00+02:00");
        let expected: DateTime<Utc> = "2025-06-01T08:30:00Z".parse().unwrap();
        assert_eq!(
            op,
            Op::Defer {
                id: 9,
                until: DeferUntil::Absolute(expected)
            }
        );
    }

    #[test]
    fn seed_example_with_integer_ids() {
        let output = "---\nid: 42\ndone: 42\nsurface: Add retry logic to wake mechanism\n---\n\n# Review Complete\n\nApproved.\n";
        let parsed = parse_ops(output, Some(42), PEERS);
        assert_eq!(
            parsed.ops,
            [
                Op::Done { id: 42 },
                Op::Surface {
                    description: "Add retry logic to wake mechanism".into()
                }
            ]
        );
        assert_eq!(parsed.body, "\n# Review Complete\n\nApproved.\n");
        assert!(parsed.problems.is_empty() && parsed.refused.is_none());
    }

    #[test]
    fn malformed_lines_are_problems_and_valid_ops_survive() {
        let output = "---\nid: 7\nack: 1\nreply: 4\nfrobnicate: 1\nsend: ghost|hi\ndone: abc\nno colon here\ndefer: 3|tomorrow\ndelegate: 2|\nsurface:\ndone: 2\n---\n";
        let parsed = parse_ops(output, Some(7), PEERS);
        assert_eq!(parsed.ops, [Op::Ack { id: 1 }, Op::Done { id: 2 }]);
        assert_eq!(parsed.refused, None);
        let got: Vec<_> = parsed
            .problems
            .iter()
            .map(|p| (p.line, p.reason.clone()))
            .collect();
        let missing = |key: &str, expected: &str| OpError::MissingPart {
            key: key.into(),
            expected: expected.into(),
        };
        assert_eq!(
            got,
            [
                (4, missing("reply", "thread|message")),
                (
                    5,
                    OpError::UnknownKey {
                        key: "frobnicate".into()
                    }
                ),
                (
                    6,
                    OpError::UnknownPeer {
                        peer: "ghost".into()
                    }
                ),
                (
                    7,
                    OpError::BadId {
                        value: "abc".into()
                    }
                ),
                (8, OpError::NotKeyValue),
                (
                    9,
                    OpError::BadUntil {
                        value: "tomorrow".into()
                    }
                ),
                (10, missing("delegate", "thread|peer")),
                (
                    11,
                    OpError::EmptyValue {
                        key: "surface".into()
                    }
                ),
            ]
        );
        assert_eq!(parsed.problems[2].text, "send: ghost|hi");
        assert!(parsed.problems[2].reason.to_string().contains("ghost"));
    }

    #[test]
    fn unknown_peer() {
        assert_eq!(
            problem("delegate: 3|@ghost"),
            OpError::UnknownPeer {
                peer: "ghost".into()
            }
        );
    }

    #[test]
    fn strict_mode_refuses_on_any_problem() {
        let output = "---\nid: 7\nack: 1\nbogus: 2\n---\n";
        let parsed = parse_ops_with(output, Some(7), PEERS, Mode::Strict);
        assert!(parsed.ops.is_empty());
        assert_eq!(parsed.problems.len(), 1);
        assert!(parsed.refused.unwrap().contains("strict"));
        let clean = parse_ops_with("---\nid: 7\nack: 1\n---\n", Some(7), PEERS, Mode::Strict);
        assert_eq!(clean.ops, [Op::Ack { id: 1 }]);
    }

    #[test]
    fn id_mismatch_refuses() {
        let parsed = parse_ops("---\nid: #8\ndone: 8\n---\nbody", Some(7), PEERS);
        assert!(parsed.ops.is_empty());
        let reason = parsed.refused.unwrap();
        assert!(reason.contains("#8") && reason.contains("#7"), "{reason}");
        assert_eq!(parsed.body, "body");
    }

    #[test]
    fn missing_id_refuses() {
        let parsed = parse_ops("---\ndone: 7\n---\nbody", Some(7), PEERS);
        assert!(parsed.ops.is_empty());
        assert!(parsed.refused.unwrap().contains("required"));
    }

    #[test]
    fn string_id_refuses() {
        let parsed = parse_ops(
            "---\nid: review-pi-proposal\ndone: 7\n---\n",
            Some(7),
            PEERS,
        );
        assert!(parsed.ops.is_empty());
        assert!(parsed.refused.unwrap().contains("review-pi-proposal"));
    }

    #[test]
    fn id_without_waking_message_refuses() {
        let parsed = parse_ops("---\nid: 7\nack: 7\n---\n", None, PEERS);
        assert!(parsed.ops.is_empty());
        assert!(parsed.refused.unwrap().contains("not woken"));
    }

    #[test]
    fn empty_frontmatter_is_not_refused() {
        let parsed = parse_ops("---\n\n# just a comment\n---\nhello", Some(1), PEERS);
        assert_eq!(
            parsed,
            OpsParse {
                body: "hello".into(),
                ..OpsParse::default()
            }
        );
    }

    #[test]
    fn no_frontmatter_yields_full_body() {
        for output in [
            "Just an answer.\n---\nid: 1\n---\n",
            "",
            "\n---\nid: 1\n---\n",
            "--- \n",
        ] {
            let parsed = parse_ops(output, Some(1), PEERS);
            if output == "--- \n" {
                assert_eq!(parsed.problems[0].reason, OpError::UnclosedFrontmatter);
            } else {
                assert!(parsed.problems.is_empty());
            }
            assert!(parsed.ops.is_empty() && parsed.refused.is_none());
            assert_eq!(parsed.body, output);
        }
    }

    #[test]
    fn unclosed_frontmatter_reads_nothing() {
        let output = "---\nid: 1\ndone: 1\n";
        let parsed = parse_ops(output, Some(1), PEERS);
        assert!(parsed.ops.is_empty());
        assert_eq!(parsed.body, output);
        assert_eq!(parsed.problems[0].reason, OpError::UnclosedFrontmatter);
    }

    #[test]
    fn crlf_input() {
        let output =
            "---\r\nid: 7\r\nsend: coder|hi there\r\ndefer: 7|2h\r\nbad\r\n---\r\nBody line\r\n";
        let parsed = parse_ops(output, Some(7), PEERS);
        assert_eq!(
            parsed.ops,
            [
                Op::Send {
                    peer: "coder".into(),
                    message: "hi there".into()
                },
                Op::Defer {
                    id: 7,
                    until: DeferUntil::Relative(7_200)
                }
            ]
        );
        assert_eq!(parsed.problems.len(), 1);
        assert_eq!(parsed.problems[0].text, "bad");
        assert_eq!(parsed.problems[0].line, 5);
        assert_eq!(parsed.body, "Body line\r\n");
    }

    #[test]
    fn bom_is_skipped() {
        let parsed = parse_ops("\u{feff}---\nid: 1\nack: 1\n---\nx", Some(1), PEERS);
        assert_eq!(parsed.ops, [Op::Ack { id: 1 }]);
        assert_eq!(parsed.body, "x");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10m"), Some(600));
        assert_eq!(parse_duration("1d2h3m4s"), Some(93_784));
        assert_eq!(parse_duration("10"), None);
        assert_eq!(parse_duration(""), None);
        assert_eq!(parse_duration("m"), None);
        assert_eq!(parse_duration("99999999999999999999s"), None);
        assert_eq!(parse_duration("10 m"), None);
        assert_eq!(parse_duration("５m"), None);
    }

    #[test]
    fn ops_serialise_for_front_ends() {
        let parsed = ops_of("defer: 7|1m\nbogus: 1");
        let json = serde_json::to_string(&parsed).unwrap();
        assert!(json.contains("\"op\":\"defer\""));
        let back: OpsParse = serde_json::from_str(&json).unwrap();
        assert_eq!(back, parsed);
    }

    proptest! {
        #[test]
        fn never_panics(output in any::<String>(), woke in any::<Option<u64>>()) {
            for mode in [Mode::Lenient, Mode::Strict] {
                let parsed = parse_ops_with(&output, woke, PEERS, mode);
                prop_assert!(output.ends_with(&parsed.body));
            }
        }

        #[test]
        fn never_panics_on_op_soup(lines in prop::collection::vec(prop_oneof![
            Just("---".to_string()),
            Just("---\r".to_string()),
            "(id|ack|done|fail|reply|send|delegate|defer|delete|surface|mca|ünï): ?#?[0-9é]{0,3}(\\|[@a-zé0-9 :TZ+-]{0,12}){0,2}",
            "\\PC{0,10}",
        ], 0..12)) {
            let output = lines.join("\n");
            let parsed = parse_ops(&output, Some(1), PEERS);
            prop_assert!(parsed.refused.is_none() || parsed.ops.is_empty());
        }
    }
}
