//! Agent Mail status messages (`PROGRESS`, `HELP_REQUEST`, `OFFERING_READY`,
//! `FAILED`, `CHECKPOINT`, …): a pure parser into typed records, plus filters
//! over parsed records, so the engine and the TUI can show agent status.
//!
//! Decisions, and where this does better than the reference parser:
//! - The type is matched as a whole word and in capitals, so `ABANDONED` is
//!   not `DONE` and "almost done" is not `DONE`. Lenient mode takes the first
//!   type word in the subject; strict mode requires it to come first (after
//!   `Subject:`, `Re:` and the bead).
//! - `Re: HELP_REQUEST` is a `HELP_RESPONSE` (`in_reply_to` says so) in the
//!   request's thread. A reply to any other type is not a status message: its
//!   kind is unknown and `in_reply_to` keeps the original type.
//! - Labels (`Bead:`, `Status:`, …) are read only at line start (after an
//!   optional list bullet and `**` emphasis), so `Checkpoint Reason:` is not
//!   `Reason:`. Top-level labels are read before the first `#`/`##` heading,
//!   section labels inside their section; lenient mode falls back to the whole
//!   body when a label is not where the seed puts it.
//! - A `## Section` runs to the next `#` or `##` heading: `###` subsections
//!   stay inside it.
//! - The bead id comes from the body (`Bead:`, `Accepted bead:`, `Issue:`)
//!   first, then from the subject (`[bead] TYPE`, `bead: TYPE`). The thread id
//!   defaults to the bead id, as the seed recommends; callers may overwrite it.
//! - Required fields (missing ones are errors in strict mode, warnings in
//!   lenient mode): every type but `HELP_RESPONSE` needs the bead id;
//!   `BEAD_ACCEPTED` Title; `PROGRESS` Step, Status; `HELP_REQUEST` Issue Type,
//!   Problem, Question; `HELP_RESPONSE` a non-empty body; `OFFERING_READY` and
//!   `DONE` Status, Commit, Tests, Lint, Build; `FAILED` Type, Reason;
//!   `CHECKPOINT` Reason, Commit; `SPAWN_REQUEST` Resume, Orchestrator and
//!   Checkpoint when resuming; `SPAWN_ACK` Status and Session when spawned.
//!   Values outside the seed's vocabularies are invalid fields.
//! - A success is an `OFFERING_READY` or `DONE` whose self-validation reports
//!   no FAIL; pending messages need an ack, are not acknowledged, and (for
//!   `HELP_REQUEST`) have no later `HELP_RESPONSE` in the same thread.

use std::fmt;

use serde::{Deserialize, Serialize};

pub use super::aop::Mode;

mod reader;
use reader::Reader;

/// Declares a closed vocabulary of upper-case keywords, with lookup by keyword.
macro_rules! keyword_enum {
    (
        $(#[$meta:meta])*
        $name:ident { $($(#[$vmeta:meta])* $variant:ident = $word:literal,)+ }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $word)] $variant,)+
        }

        impl $name {
            /// Every value, in the seed's order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The keyword as written in messages.
            pub fn keyword(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)+
                }
            }

            /// Reads a keyword, ignoring ASCII case and surrounding spaces.
            pub fn from_keyword(text: &str) -> Option<Self> {
                let text = text.trim();
                Self::ALL
                    .iter()
                    .copied()
                    .find(|v| v.keyword().eq_ignore_ascii_case(text))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.keyword())
            }
        }
    };
}

keyword_enum! {
    /// The ten status message types of the protocol.
    MessageType {
        /// A worker accepted a bead.
        BeadAccepted = "BEAD_ACCEPTED",
        /// Periodic status update.
        Progress = "PROGRESS",
        /// A worker is stuck and asks for guidance.
        HelpRequest = "HELP_REQUEST",
        /// Guidance answering a help request.
        HelpResponse = "HELP_RESPONSE",
        /// Work complete and ready for review.
        OfferingReady = "OFFERING_READY",
        /// Alternate completion signal.
        Done = "DONE",
        /// Implementation failed.
        Failed = "FAILED",
        /// Context exhausted; partial progress for a successor.
        Checkpoint = "CHECKPOINT",
        /// Request to spawn a worker.
        SpawnRequest = "SPAWN_REQUEST",
        /// Answer to a spawn request.
        SpawnAck = "SPAWN_ACK",
    }
}

impl MessageType {
    /// Whether the sender expects an acknowledgement (the seed's table).
    pub fn ack_required(self) -> bool {
        matches!(
            self,
            MessageType::HelpRequest | MessageType::OfferingReady | MessageType::SpawnRequest
        )
    }

    /// Whether the message ends a worker's attempt at a bead.
    pub fn is_completion(self) -> bool {
        matches!(
            self,
            MessageType::OfferingReady
                | MessageType::Done
                | MessageType::Failed
                | MessageType::Checkpoint
        )
    }
}

keyword_enum! {
    /// Why a worker asks for help.
    IssueType {
        /// Cannot proceed, unclear how.
        Stuck = "STUCK",
        /// The specification is ambiguous.
        SpecUnclear = "SPEC_UNCLEAR",
        /// An external dependency blocks progress.
        Blocked = "BLOCKED",
        /// A technical problem needing expert help.
        Technical = "TECHNICAL",
    }
}

keyword_enum! {
    /// Why an implementation failed.
    FailureType {
        /// Tests do not pass.
        TestsFail = "TESTS_FAIL",
        /// Build or compilation fails.
        BuildFail = "BUILD_FAIL",
        /// The specification cannot be implemented.
        SpecImpossible = "SPEC_IMPOSSIBLE",
        /// The context window is exhausted.
        ContextHigh = "CONTEXT_HIGH",
        /// Unexpected error.
        Error = "ERROR",
    }
}

keyword_enum! {
    /// Why a checkpoint was written.
    CheckpointReason {
        /// Context window above 80%.
        ContextHigh = "CONTEXT_HIGH",
        /// Manual checkpoint requested.
        Manual = "MANUAL",
        /// Time limit reached.
        Timeout = "TIMEOUT",
    }
}

keyword_enum! {
    /// Outcome of a spawn request.
    SpawnStatus {
        /// The worker was started.
        Spawned = "spawned",
        /// The worker could not be started.
        Failed = "failed",
    }
}

/// Self-validation results of a completion (`None`: not reported).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Validation {
    /// Tests passed.
    pub tests: Option<bool>,
    /// Lint passed.
    pub lint: Option<bool>,
    /// Build passed.
    pub build: Option<bool>,
}

impl Validation {
    /// True unless some check reported FAIL.
    pub fn passed(&self) -> bool {
        [self.tests, self.lint, self.build]
            .iter()
            .all(|flag| *flag != Some(false))
    }
}

/// Fields shared by `OFFERING_READY` and `DONE`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Completion {
    /// `Status:` line (normally DONE).
    pub status: Option<String>,
    /// Commit with the changes.
    pub commit: Option<String>,
    /// Changed files.
    pub files: Vec<String>,
    /// Self-validation flags.
    pub validation: Validation,
    /// Summary section.
    pub summary: Option<String>,
}

/// The type-specific fields of a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum MailContent {
    /// See [`MessageType::BeadAccepted`].
    BeadAccepted {
        /// Issue title.
        title: Option<String>,
        /// `Starting implementation at:` timestamp, as written.
        started_at: Option<String>,
    },
    /// See [`MessageType::Progress`].
    Progress {
        /// Current step.
        step: Option<String>,
        /// What is happening.
        status: Option<String>,
        /// Context window usage, 0–100 %.
        context_usage: Option<u8>,
        /// Files modified so far.
        files_touched: Vec<String>,
    },
    /// See [`MessageType::HelpRequest`].
    HelpRequest {
        /// Category of the problem.
        issue_type: Option<IssueType>,
        /// `## Problem` section.
        problem: Option<String>,
        /// `## What I Tried` section.
        what_tried: Option<String>,
        /// `## Files Touched` list.
        files_touched: Vec<String>,
        /// `## Question` section.
        question: Option<String>,
    },
    /// See [`MessageType::HelpResponse`].
    HelpResponse {
        /// The guidance text (body without its `Bead:` line).
        guidance: Option<String>,
    },
    /// See [`MessageType::OfferingReady`].
    OfferingReady(Completion),
    /// See [`MessageType::Done`].
    Done(Completion),
    /// See [`MessageType::Failed`].
    Failed {
        /// `Status:` line (normally FAILED).
        status: Option<String>,
        /// Category of the failure.
        failure_type: Option<FailureType>,
        /// Why it failed.
        reason: Option<String>,
        /// How many internal retries were made.
        internal_attempts: Option<u32>,
        /// Commit with partial work.
        partial_commit: Option<String>,
        /// Files of the partial work.
        files: Vec<String>,
        /// What needs to happen to unblock.
        recommendation: Option<String>,
    },
    /// See [`MessageType::Checkpoint`].
    Checkpoint {
        /// Why the checkpoint was written.
        reason: Option<CheckpointReason>,
        /// Commit with partial work.
        commit: Option<String>,
        /// What is done and what remains.
        description: Option<String>,
        /// Context window usage, 0–100 %.
        context_usage: Option<u8>,
        /// Guidance for the successor.
        next_steps: Option<String>,
    },
    /// See [`MessageType::SpawnRequest`] (the issue is the record's bead id).
    SpawnRequest {
        /// Whether to resume from a checkpoint.
        resume: Option<bool>,
        /// Commit to resume from.
        checkpoint: Option<String>,
        /// Requesting orchestrator.
        orchestrator: Option<String>,
    },
    /// See [`MessageType::SpawnAck`] (the issue is the record's bead id).
    SpawnAck {
        /// Whether the worker was spawned.
        status: Option<SpawnStatus>,
        /// Session name of the new worker.
        session: Option<String>,
    },
    /// The subject names no known type.
    Unknown,
}

impl MailContent {
    /// The message type, or `None` for unknown messages.
    pub fn kind(&self) -> Option<MessageType> {
        Some(match self {
            MailContent::BeadAccepted { .. } => MessageType::BeadAccepted,
            MailContent::Progress { .. } => MessageType::Progress,
            MailContent::HelpRequest { .. } => MessageType::HelpRequest,
            MailContent::HelpResponse { .. } => MessageType::HelpResponse,
            MailContent::OfferingReady(_) => MessageType::OfferingReady,
            MailContent::Done(_) => MessageType::Done,
            MailContent::Failed { .. } => MessageType::Failed,
            MailContent::Checkpoint { .. } => MessageType::Checkpoint,
            MailContent::SpawnRequest { .. } => MessageType::SpawnRequest,
            MailContent::SpawnAck { .. } => MessageType::SpawnAck,
            MailContent::Unknown => return None,
        })
    }
}

/// Something wrong with a message: an error in strict mode, a warning otherwise.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum MailProblem {
    /// The subject names no known type.
    #[error("no known message type in subject {subject:?}")]
    UnknownType {
        /// The subject as given.
        subject: String,
    },
    /// A field the type requires is absent or empty.
    #[error("{message_type} is missing required field `{field}`")]
    MissingField {
        /// The message's type.
        message_type: MessageType,
        /// The label or section, as the seed writes it.
        field: String,
    },
    /// A field's value is outside what the seed allows.
    #[error("field `{field}` has invalid value {value:?} (expected {expected})")]
    InvalidField {
        /// The label, as the seed writes it.
        field: String,
        /// The value as written.
        value: String,
        /// What the seed allows.
        expected: String,
    },
}

/// Strict-mode error: the message and everything wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("malformed message {subject:?}: {}", join_problems(.problems))]
pub struct MalformedMail {
    /// The subject as given.
    pub subject: String,
    /// Every problem found.
    pub problems: Vec<MailProblem>,
}

fn join_problems(problems: &[MailProblem]) -> String {
    let texts: Vec<String> = problems.iter().map(ToString::to_string).collect();
    texts.join("; ")
}

/// A parsed status message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailRecord {
    /// The subject as given (without a `Subject:` prefix).
    pub subject: String,
    /// Bead id from the body, else from the subject.
    pub bead_id: Option<String>,
    /// Thread the message belongs to (defaults to the bead id).
    pub thread_id: Option<String>,
    /// For `Re: TYPE` subjects, the type replied to.
    pub in_reply_to: Option<MessageType>,
    /// Whether the sender expects an acknowledgement.
    pub ack_required: bool,
    /// Whether it was acknowledged (the parser sets false; the engine updates it).
    pub acknowledged: bool,
    /// Type-specific fields.
    pub content: MailContent,
    /// Problems found (always empty for records returned in strict mode).
    pub problems: Vec<MailProblem>,
}

impl MailRecord {
    /// The message type, or `None` for unknown messages.
    pub fn kind(&self) -> Option<MessageType> {
        self.content.kind()
    }

    /// The shared completion fields of `OFFERING_READY` and `DONE`.
    pub fn completion(&self) -> Option<&Completion> {
        match &self.content {
            MailContent::OfferingReady(c) | MailContent::Done(c) => Some(c),
            _ => None,
        }
    }
}

/// Reads a channel message as a status message: leading `@mentions` are
/// skipped (channel messages address someone first), then it is parsed
/// leniently. `None` unless it has a known type and looks deliberate: a bead
/// id, or the subject starting with the type, so chat such as "almost DONE
/// here" is not a status message.
pub fn from_channel_message(message: &str) -> Option<MailRecord> {
    let record = read(skip_mentions(message), Mode::Lenient);
    let kind = record.kind()?;
    let subject = record.subject.trim_start();
    let subject = subject.strip_prefix("Re:").unwrap_or(subject).trim_start();
    let leads = subject.split_whitespace().next() == Some(kind.keyword());
    (record.bead_id.is_some() || leads).then_some(record)
}

/// A channel message without its leading `@mentions` (channel messages
/// address someone first; the status message follows).
fn skip_mentions(message: &str) -> &str {
    let mut text = message.trim_start();
    while let Some(rest) = text.strip_prefix('@') {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        text = rest[end..].trim_start();
    }
    text
}

/// What `awtui mail check` finds in one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailCheck {
    /// The message as read in the mode asked for (type, bead, thread, ack).
    pub record: MailRecord,
    /// Everything wrong with it: errors in strict mode, warnings otherwise.
    pub problems: Vec<MailProblem>,
}

/// Checks one message as an agent writes it to the channel (leading
/// `@mentions` skipped), in `mode`.
pub fn check(message: &str, mode: Mode) -> MailCheck {
    let mut record = read(skip_mentions(message), mode);
    let problems = std::mem::take(&mut record.problems);
    MailCheck { record, problems }
}

/// Whether a channel message is a help request (not a reply to one): it goes
/// to `user` with high priority.
pub fn is_help_request(message: &str) -> bool {
    from_channel_message(message)
        .is_some_and(|r| r.kind() == Some(MessageType::HelpRequest) && r.in_reply_to.is_none())
}

/// Parses a whole message: first non-blank line is the subject, the rest the body.
///
/// # Errors
/// In strict mode, [`MalformedMail`] lists every problem found.
pub fn parse(text: &str, mode: Mode) -> Result<MailRecord, MalformedMail> {
    into_result(read(text, mode), mode)
}

/// Reads a whole message into a record that lists its problems, whatever
/// the mode (the mode decides what counts as a problem).
fn read(text: &str, mode: Mode) -> MailRecord {
    let text = text.trim_start();
    let (subject, body) = text.split_once('\n').unwrap_or((text, ""));
    read_parts(subject, body, mode)
}

/// A record as [`parse`] returns it: an error in strict mode when anything
/// is wrong.
fn into_result(record: MailRecord, mode: Mode) -> Result<MailRecord, MalformedMail> {
    match mode {
        Mode::Strict if !record.problems.is_empty() => Err(MalformedMail {
            subject: record.subject,
            problems: record.problems,
        }),
        _ => Ok(record),
    }
}

/// Parses a message whose subject and body are already separate.
///
/// # Errors
/// In strict mode, [`MalformedMail`] lists every problem found.
pub fn parse_parts(subject: &str, body: &str, mode: Mode) -> Result<MailRecord, MalformedMail> {
    into_result(read_parts(subject, body, mode), mode)
}

fn read_parts(subject: &str, body: &str, mode: Mode) -> MailRecord {
    let subject = strip_label(subject.trim(), "Subject").unwrap_or(subject.trim());
    let head = Subject::parse(subject, mode);
    let mut reader = Reader::new(body, mode);
    let content = match head.kind {
        Some(kind) => reader.content(kind),
        None => {
            reader.problems.push(MailProblem::UnknownType {
                subject: subject.to_string(),
            });
            MailContent::Unknown
        }
    };
    let bead_id = reader.bead_id().or(head.bead);
    if let Some(kind) = head.kind
        && kind != MessageType::HelpResponse
        && bead_id.is_none()
    {
        reader.missing(kind, bead_label(kind));
    }
    MailRecord {
        subject: subject.to_string(),
        thread_id: bead_id.clone(),
        bead_id,
        in_reply_to: head.in_reply_to,
        ack_required: head.kind.is_some_and(MessageType::ack_required),
        acknowledged: false,
        content,
        problems: reader.problems,
    }
}

/// The label the seed uses for the bead id of a type.
fn bead_label(kind: MessageType) -> &'static str {
    match kind {
        MessageType::BeadAccepted => "Accepted bead",
        MessageType::SpawnRequest | MessageType::SpawnAck => "Issue",
        _ => "Bead",
    }
}

/// What the subject line says.
struct Subject {
    kind: Option<MessageType>,
    bead: Option<String>,
    in_reply_to: Option<MessageType>,
}

impl Subject {
    fn parse(subject: &str, mode: Mode) -> Self {
        let (replied, rest) = strip_replies(subject);
        let (bead, rest) = split_bead(rest);
        let (replied_again, rest) = strip_replies(rest);
        let written = find_type(rest, mode);
        match (replied || replied_again, written) {
            (true, Some(MessageType::HelpRequest)) => Subject {
                kind: Some(MessageType::HelpResponse),
                bead,
                in_reply_to: Some(MessageType::HelpRequest),
            },
            (true, Some(other)) => Subject {
                kind: None,
                bead,
                in_reply_to: Some(other),
            },
            (_, kind) => Subject {
                kind,
                bead,
                in_reply_to: None,
            },
        }
    }
}

/// Strips any number of leading `Re:` prefixes; says whether there was one.
fn strip_replies(mut subject: &str) -> (bool, &str) {
    let mut replied = false;
    while let Some(rest) = strip_label(subject, "Re") {
        replied = true;
        subject = rest;
    }
    (replied, subject)
}

/// Splits `[bead] rest` or `bead: rest` into the bead and the rest.
fn split_bead(subject: &str) -> (Option<String>, &str) {
    let subject = subject.trim_start();
    if let Some(inner) = subject.strip_prefix('[')
        && let Some((bead, rest)) = inner.split_once(']')
        && !bead.trim().is_empty()
    {
        return (Some(bead.trim().to_string()), rest.trim_start());
    }
    let token = subject.split_whitespace().next().unwrap_or("");
    if let Some(bead) = token.strip_suffix(':')
        && is_bead_token(bead)
    {
        return (Some(bead.to_string()), subject[token.len()..].trim_start());
    }
    (None, subject)
}

/// Whether a token looks like a bead id (`ol-527.1`): it must contain a `-`.
fn is_bead_token(token: &str) -> bool {
    token.contains('-')
        && token
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._/#".contains(c))
}

/// The type named in the subject, matched as a whole upper-case word.
fn find_type(rest: &str, mode: Mode) -> Option<MessageType> {
    let mut words = rest
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty());
    let exact = |word: &str| {
        MessageType::ALL
            .iter()
            .copied()
            .find(|t| t.keyword() == word)
    };
    match mode {
        Mode::Strict => words.next().and_then(exact),
        Mode::Lenient => words.find_map(exact),
    }
}

/// Strips `label:` (ASCII case-insensitive) from the start; returns the trimmed rest.
fn strip_label<'a>(text: &'a str, label: &str) -> Option<&'a str> {
    let head = text.get(..label.len())?;
    if !head.eq_ignore_ascii_case(label) {
        return None;
    }
    let rest = &text[label.len()..];
    let rest = rest.strip_prefix("**").unwrap_or(rest);
    let rest = rest.strip_prefix(':')?;
    Some(rest.strip_prefix("**").unwrap_or(rest).trim())
}

/// The value of `label:` on this line, after an optional bullet and `**`.
fn label_value<'a>(line: &'a str, label: &str) -> Option<&'a str> {
    let line = line.trim_start();
    let line = ["- ", "* ", "+ "]
        .iter()
        .find_map(|bullet| line.strip_prefix(bullet))
        .unwrap_or(line)
        .trim_start();
    strip_label(line.strip_prefix("**").unwrap_or(line), label)
}

/// The heading level of a markdown heading line (`## x` → 2).
fn heading_level(line: &str) -> Option<usize> {
    let trimmed = line.trim_start();
    let level = trimmed.chars().take_while(|&c| c == '#').count();
    let rest = &trimmed[level..];
    (level > 0 && (rest.is_empty() || rest.starts_with([' ', '\t']))).then_some(level)
}

/// Whether a line starts a top-level section (`#` or `##`).
fn is_section_break(line: &str) -> bool {
    heading_level(line).is_some_and(|level| level <= 2)
}

/// Splits a comma- or line-separated list, dropping bullets and blanks.
fn parse_list(text: &str) -> Vec<String> {
    text.split([',', '\n'])
        .map(|item| {
            let item = item.trim();
            ["- ", "* ", "+ "]
                .iter()
                .find_map(|bullet| item.strip_prefix(bullet))
                .unwrap_or(item)
                .trim()
        })
        .filter(|item| !item.is_empty() && *item != "-")
        .map(str::to_string)
        .collect()
}

/// `45`, `45%`, `~45 %` or `45.5%` as a percentage from 0 to 100.
fn parse_percent(text: &str) -> Option<u8> {
    let text = text.trim().trim_start_matches('~');
    let number = text.strip_suffix('%').unwrap_or(text).trim();
    let value: f64 = number.parse().ok()?;
    (value.is_finite() && (0.0..=100.0).contains(&value)).then(|| value.round() as u8)
}

/// PASS/FAIL (and yes/no, true/false, ok) as a flag; trailing notes are ignored.
fn parse_pass(text: &str) -> Option<bool> {
    let word = text
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())?
        .to_ascii_uppercase();
    match word.as_str() {
        "PASS" | "PASSED" | "OK" | "TRUE" | "YES" => Some(true),
        "FAIL" | "FAILED" | "FALSE" | "NO" => Some(false),
        _ => None,
    }
}

/// `true`/`false`/`yes`/`no` as a flag.
fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" => Some(true),
        "false" | "no" => Some(false),
        _ => None,
    }
}

/// An ISO 8601 / RFC 3339 timestamp, kept as written.
fn parse_timestamp(text: &str) -> Option<String> {
    chrono::DateTime::parse_from_rfc3339(text.trim())
        .ok()
        .map(|_| text.to_string())
}

/// The records matching a predicate, in order.
fn select(records: &[MailRecord], keep: impl Fn(&MailRecord) -> bool) -> Vec<&MailRecord> {
    records.iter().filter(|r| keep(r)).collect()
}

/// Messages that end an attempt: `OFFERING_READY`, `DONE`, `FAILED`, `CHECKPOINT`.
pub fn completions(records: &[MailRecord]) -> Vec<&MailRecord> {
    select(records, |r| {
        r.kind().is_some_and(MessageType::is_completion)
    })
}

/// `OFFERING_READY` and `DONE` messages whose self-validation reports no FAIL.
pub fn successes(records: &[MailRecord]) -> Vec<&MailRecord> {
    select(records, |r| {
        r.completion().is_some_and(|c| c.validation.passed())
    })
}

/// Messages still awaiting an acknowledgement (or, for help requests, a response).
pub fn pending(records: &[MailRecord]) -> Vec<&MailRecord> {
    let answered = |index: usize| {
        let thread = records[index].thread_id.as_deref();
        thread.is_some()
            && records[index + 1..].iter().any(|later| {
                later.kind() == Some(MessageType::HelpResponse)
                    && later.thread_id.as_deref() == thread
            })
    };
    records
        .iter()
        .enumerate()
        .filter(|(index, r)| {
            r.ack_required
                && !r.acknowledged
                && !(r.kind() == Some(MessageType::HelpRequest) && answered(*index))
        })
        .map(|(_, r)| r)
        .collect()
}

/// Messages about one bead.
pub fn by_bead<'a>(records: &'a [MailRecord], bead: &str) -> Vec<&'a MailRecord> {
    select(records, |r| r.bead_id.as_deref() == Some(bead))
}

/// Messages of one type.
pub fn by_type(records: &[MailRecord], kind: MessageType) -> Vec<&MailRecord> {
    select(records, |r| r.kind() == Some(kind))
}

#[cfg(test)]
mod tests;
