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

/// Where a label is looked for.
#[derive(Clone, Copy)]
enum Scope {
    /// Before the first `#`/`##` heading.
    Top,
    /// Inside the `##` section with one of these titles.
    Section(&'static [&'static str]),
}

/// Reads fields from a body and collects the problems found.
struct Reader<'a> {
    lines: Vec<&'a str>,
    mode: Mode,
    kind: Option<MessageType>,
    problems: Vec<MailProblem>,
}

impl<'a> Reader<'a> {
    fn new(body: &'a str, mode: Mode) -> Self {
        let mut lines: Vec<&str> = body
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect();
        if let Some(first) = lines.iter().position(|l| !l.trim().is_empty())
            && let Some(rest) = strip_label(lines[first].trim(), "Body")
        {
            lines[first] = rest;
        }
        Reader {
            lines,
            mode,
            kind: None,
            problems: Vec::new(),
        }
    }

    fn missing(&mut self, kind: MessageType, field: &str) {
        self.problems.push(MailProblem::MissingField {
            message_type: kind,
            field: field.to_string(),
        });
    }

    fn top(&self) -> &[&'a str] {
        let end = self
            .lines
            .iter()
            .position(|l| is_section_break(l))
            .unwrap_or(self.lines.len());
        &self.lines[..end]
    }

    fn section(&self, titles: &[&str]) -> Option<&[&'a str]> {
        let start = self.lines.iter().position(|line| {
            heading_level(line) == Some(2)
                && titles.iter().any(|t| {
                    line.trim()
                        .trim_start_matches('#')
                        .trim()
                        .eq_ignore_ascii_case(t)
                })
        })? + 1;
        let len = self.lines[start..]
            .iter()
            .position(|l| is_section_break(l))
            .unwrap_or(self.lines.len() - start);
        Some(&self.lines[start..start + len])
    }

    fn scope(&self, scope: Scope) -> &[&'a str] {
        match scope {
            Scope::Top => self.top(),
            Scope::Section(titles) => self.section(titles).unwrap_or(&[]),
        }
    }

    /// The non-empty value of `label`, in its scope (lenient: anywhere).
    fn find(&self, scope: Scope, label: &str) -> Option<&'a str> {
        let first = |lines: &[&'a str]| {
            lines
                .iter()
                .find_map(|l| label_value(l, label))
                .filter(|v| !v.is_empty())
        };
        first(self.scope(scope)).or_else(|| match self.mode {
            Mode::Lenient => first(&self.lines),
            Mode::Strict => None,
        })
    }

    /// Reads and converts a labelled value, recording missing or invalid ones.
    fn read<T>(
        &mut self,
        scope: Scope,
        label: &str,
        required: bool,
        expected: &str,
        convert: impl Fn(&str) -> Option<T>,
    ) -> Option<T> {
        let Some(raw) = self.find(scope, label) else {
            if let (true, Some(kind)) = (required, self.kind) {
                self.missing(kind, label);
            }
            return None;
        };
        let value = convert(raw);
        if value.is_none() {
            self.problems.push(MailProblem::InvalidField {
                field: label.to_string(),
                value: raw.to_string(),
                expected: expected.to_string(),
            });
        }
        value
    }

    fn text(&mut self, scope: Scope, label: &str, required: bool) -> Option<String> {
        self.read(scope, label, required, "text", |v| Some(v.to_string()))
    }

    fn list(&mut self, scope: Scope, label: &str) -> Vec<String> {
        self.read(scope, label, false, "a list", |v| Some(parse_list(v)))
            .unwrap_or_default()
    }

    fn percent(&mut self, scope: Scope, label: &str) -> Option<u8> {
        self.read(
            scope,
            label,
            false,
            "a percentage from 0 to 100",
            parse_percent,
        )
    }

    fn pass(&mut self, label: &str) -> Option<bool> {
        let scope = Scope::Section(&["Self-Validation", "Self Validation", "Validation"]);
        self.read(scope, label, true, "PASS or FAIL", parse_pass)
    }

    fn keyword<T: fmt::Display>(
        &mut self,
        scope: Scope,
        label: &str,
        all: &[T],
        from: impl Fn(&str) -> Option<T>,
    ) -> Option<T> {
        let expected: Vec<String> = all.iter().map(ToString::to_string).collect();
        let expected = format!("one of {}", expected.join(", "));
        self.read(scope, label, true, &expected, from)
    }

    /// The trimmed text of a section, recording it as missing when required.
    fn section_text(&mut self, titles: &'static [&'static str], required: bool) -> Option<String> {
        let text = self
            .section(titles)
            .map(|lines| lines.join("\n").trim().to_string())
            .filter(|t| !t.is_empty());
        if let (None, true, Some(kind)) = (&text, required, self.kind) {
            self.missing(kind, &format!("## {}", titles[0]));
        }
        text
    }

    fn bead_id(&self) -> Option<String> {
        ["Bead", "Accepted bead", "Issue"]
            .iter()
            .find_map(|label| self.find(Scope::Top, label))
            .map(str::to_string)
    }

    fn content(&mut self, kind: MessageType) -> MailContent {
        self.kind = Some(kind);
        match kind {
            MessageType::BeadAccepted => MailContent::BeadAccepted {
                title: self.text(Scope::Top, "Title", true),
                started_at: self.read(
                    Scope::Top,
                    "Starting implementation at",
                    false,
                    "an ISO 8601 timestamp",
                    parse_timestamp,
                ),
            },
            MessageType::Progress => MailContent::Progress {
                step: self.text(Scope::Top, "Step", true),
                status: self.text(Scope::Top, "Status", true),
                context_usage: self.percent(Scope::Top, "Context usage"),
                files_touched: self.list(Scope::Top, "Files touched"),
            },
            MessageType::HelpRequest => self.help_request(),
            MessageType::HelpResponse => self.help_response(),
            MessageType::OfferingReady => MailContent::OfferingReady(self.completion()),
            MessageType::Done => MailContent::Done(self.completion()),
            MessageType::Failed => self.failed(),
            MessageType::Checkpoint => self.checkpoint(),
            MessageType::SpawnRequest => self.spawn_request(),
            MessageType::SpawnAck => self.spawn_ack(),
        }
    }

    fn help_request(&mut self) -> MailContent {
        let issue_type = self.keyword(
            Scope::Top,
            "Issue Type",
            IssueType::ALL,
            IssueType::from_keyword,
        );
        MailContent::HelpRequest {
            issue_type,
            problem: self.section_text(&["Problem"], true),
            what_tried: self.section_text(&["What I Tried"], false),
            files_touched: self
                .section(&["Files Touched"])
                .map(|lines| parse_list(&lines.join("\n")))
                .unwrap_or_default(),
            question: self.section_text(&["Question"], true),
        }
    }

    fn help_response(&mut self) -> MailContent {
        let kept: Vec<&str> = self
            .lines
            .iter()
            .copied()
            .filter(|l| label_value(l, "Bead").is_none())
            .collect();
        let guidance = Some(kept.join("\n").trim().to_string()).filter(|g| !g.is_empty());
        if guidance.is_none() {
            self.missing(MessageType::HelpResponse, "guidance");
        }
        MailContent::HelpResponse { guidance }
    }

    fn completion(&mut self) -> Completion {
        const CHANGES: Scope = Scope::Section(&["Changes"]);
        Completion {
            status: self.text(Scope::Top, "Status", true),
            commit: self.text(CHANGES, "Commit", true),
            files: self.list(CHANGES, "Files"),
            validation: Validation {
                tests: self.pass("Tests"),
                lint: self.pass("Lint"),
                build: self.pass("Build"),
            },
            summary: self.section_text(&["Summary"], false),
        }
    }

    fn failed(&mut self) -> MailContent {
        const FAILURE: Scope = Scope::Section(&["Failure"]);
        const PARTIAL: Scope = Scope::Section(&["Partial Progress"]);
        let failure_type =
            self.keyword(FAILURE, "Type", FailureType::ALL, FailureType::from_keyword);
        MailContent::Failed {
            status: self.text(Scope::Top, "Status", false),
            failure_type,
            reason: self.text(FAILURE, "Reason", true),
            internal_attempts: self.read(FAILURE, "Internal Attempts", false, "a count", |v| {
                v.trim().parse().ok()
            }),
            partial_commit: self.text(PARTIAL, "Commit", false),
            files: self.list(PARTIAL, "Files"),
            recommendation: self.section_text(&["Recommendation"], false),
        }
    }

    fn checkpoint(&mut self) -> MailContent {
        const PROGRESS: Scope = Scope::Section(&["Progress"]);
        let reason = self.keyword(
            Scope::Top,
            "Reason",
            CheckpointReason::ALL,
            CheckpointReason::from_keyword,
        );
        MailContent::Checkpoint {
            reason,
            commit: self.text(PROGRESS, "Commit", true),
            description: self.text(PROGRESS, "Description", false),
            context_usage: self.percent(PROGRESS, "Context usage"),
            next_steps: self.section_text(&["Next Steps for Successor", "Next Steps"], false),
        }
    }

    fn spawn_request(&mut self) -> MailContent {
        let resume = self.read(Scope::Top, "Resume", true, "true or false", parse_bool);
        MailContent::SpawnRequest {
            resume,
            checkpoint: self.text(Scope::Top, "Checkpoint", resume == Some(true)),
            orchestrator: self.text(Scope::Top, "Orchestrator", true),
        }
    }

    fn spawn_ack(&mut self) -> MailContent {
        let status = self.keyword(
            Scope::Top,
            "Status",
            SpawnStatus::ALL,
            SpawnStatus::from_keyword,
        );
        MailContent::SpawnAck {
            status,
            session: self.text(Scope::Top, "Session", status == Some(SpawnStatus::Spawned)),
        }
    }
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
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ok(text: &str) -> MailRecord {
        let record = parse(text, Mode::Strict).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(record, parse(text, Mode::Lenient).unwrap());
        record
    }

    fn s(text: &str) -> Option<String> {
        Some(text.to_string())
    }

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|i| i.to_string()).collect()
    }

    const OFFERING: &str = "Subject: [ol-527.1] OFFERING_READY\n\nBody:\nBead: ol-527.1\nStatus: DONE\n\n## Changes\n- Commit: abc123def\n- Files: src/auth.rs, src/jwt.rs\n\n## Self-Validation\n- Tests: PASS\n- Lint: PASS\n- Build: PASS\n\n## Summary\nAdded JWT middleware.\n\n### Notes\nRefresh tokens rotate.\n";

    #[test]
    fn table_of_full_messages() {
        let completion = Completion {
            status: s("DONE"),
            commit: s("abc123def"),
            files: v(&["src/auth.rs", "src/jwt.rs"]),
            validation: Validation {
                tests: Some(true),
                lint: Some(true),
                build: Some(true),
            },
            summary: s("Added JWT middleware.\n\n### Notes\nRefresh tokens rotate."),
        };
        let cases: Vec<(String, &str, MailContent)> = vec![
            (
                "[ol-1] BEAD_ACCEPTED\nAccepted bead: ol-1\nTitle: Add login\nStarting implementation at: 2025-01-18T10:00:00Z".into(),
                "ol-1",
                MailContent::BeadAccepted { title: s("Add login"), started_at: s("2025-01-18T10:00:00Z") },
            ),
            (
                "PROGRESS\nBead: ol-2\nStep: Step 4 - implementing auth\nStatus: writing tests\nContext usage: 45%\nFiles touched: a.rs, b/c.rs".into(),
                "ol-2",
                MailContent::Progress {
                    step: s("Step 4 - implementing auth"),
                    status: s("writing tests"),
                    context_usage: Some(45),
                    files_touched: v(&["a.rs", "b/c.rs"]),
                },
            ),
            (
                "Subject: HELP_REQUEST\nBody:\nBead: ol-3\nIssue Type: SPEC_UNCLEAR\n\n## Problem\nTwo specs disagree.\n### Detail\nOne says 5, one says 7.\n\n## What I Tried\nReading both.\n\n## Files Touched\n- path/one.rs\n- path/two.rs\n\n## Question\nWhich wins?".into(),
                "ol-3",
                MailContent::HelpRequest {
                    issue_type: Some(IssueType::SpecUnclear),
                    problem: s("Two specs disagree.\n### Detail\nOne says 5, one says 7."),
                    what_tried: s("Reading both."),
                    files_touched: v(&["path/one.rs", "path/two.rs"]),
                    question: s("Which wins?"),
                },
            ),
            (
                "ol-4: HELP_RESPONSE\nBead: ol-4\nUse the newer spec.\n\nIt supersedes the old one.".into(),
                "ol-4",
                MailContent::HelpResponse { guidance: s("Use the newer spec.\n\nIt supersedes the old one.") },
            ),
            (OFFERING.into(), "ol-527.1", MailContent::OfferingReady(completion.clone())),
            (OFFERING.replace("OFFERING_READY", "DONE"), "ol-527.1", MailContent::Done(completion)),
            (
                "[ol-5] FAILED\nBead: ol-5\nStatus: FAILED\n\n## Failure\nType: TESTS_FAIL\nReason: flaky integration test\nInternal Attempts: 3\n\n## Partial Progress\n- Commit: def456\n- Files: x.rs\n\n## Recommendation\nStabilise the fixture.".into(),
                "ol-5",
                MailContent::Failed {
                    status: s("FAILED"),
                    failure_type: Some(FailureType::TestsFail),
                    reason: s("flaky integration test"),
                    internal_attempts: Some(3),
                    partial_commit: s("def456"),
                    files: v(&["x.rs"]),
                    recommendation: s("Stabilise the fixture."),
                },
            ),
            (
                "CHECKPOINT\nBead: ol-6\nReason: CONTEXT_HIGH\n\n## Progress\n- Commit: 777aaa\n- Description: parser done, tests remain\n- Context usage: 85%\n\n## Next Steps for Successor\nWrite the tests.".into(),
                "ol-6",
                MailContent::Checkpoint {
                    reason: Some(CheckpointReason::ContextHigh),
                    commit: s("777aaa"),
                    description: s("parser done, tests remain"),
                    context_usage: Some(85),
                    next_steps: s("Write the tests."),
                },
            ),
            (
                "SPAWN_REQUEST\nIssue: ol-7\nResume: true\nCheckpoint: 777aaa\nOrchestrator: crank-1".into(),
                "ol-7",
                MailContent::SpawnRequest { resume: Some(true), checkpoint: s("777aaa"), orchestrator: s("crank-1") },
            ),
            (
                "SPAWN_ACK\nIssue: ol-7\nStatus: spawned\nSession: demigod-7".into(),
                "ol-7",
                MailContent::SpawnAck { status: Some(SpawnStatus::Spawned), session: s("demigod-7") },
            ),
        ];
        for (text, bead, content) in cases {
            let record = ok(&text);
            assert_eq!(record.content, content, "{text}");
            assert_eq!(record.bead_id.as_deref(), Some(bead), "{text}");
            assert_eq!(record.thread_id, record.bead_id);
            assert!(record.problems.is_empty());
        }
    }

    #[test]
    fn every_type_is_covered_and_ack_table_matches_seed() {
        let acked: Vec<_> = MessageType::ALL
            .iter()
            .filter(|t| t.ack_required())
            .collect();
        assert_eq!(
            acked,
            [
                &MessageType::HelpRequest,
                &MessageType::OfferingReady,
                &MessageType::SpawnRequest
            ]
        );
        assert_eq!(MessageType::ALL.len(), 10);
        assert!(ok(OFFERING).ack_required);
    }

    #[test]
    fn bead_id_prefers_body_then_subject() {
        let record = ok("[ol-9] PROGRESS\nBead: ol-8\nStep: a\nStatus: b");
        assert_eq!(record.bead_id.as_deref(), Some("ol-8"));
        let record = ok("[ol-9] PROGRESS\nStep: a\nStatus: b");
        assert_eq!(record.bead_id.as_deref(), Some("ol-9"));
        let record = ok("ol-527.1: PROGRESS\nStep: a\nStatus: b");
        assert_eq!(record.bead_id.as_deref(), Some("ol-527.1"));
    }

    // --- Misparses of the reference parser ---

    #[test]
    fn type_is_matched_as_a_word() {
        for subject in [
            "ABANDONED",
            "[ol-1] UNDONE",
            "HELP_REQUEST_DRAFT",
            "almost done",
            "PROGRESSIVE",
        ] {
            let record = parse(subject, Mode::Lenient).unwrap();
            assert_eq!(record.kind(), None, "{subject}");
            assert!(matches!(
                record.problems[0],
                MailProblem::UnknownType { .. }
            ));
        }
        let record = parse(
            "[ol-1] Status: DONE (tests green)\nBead: ol-1",
            Mode::Lenient,
        )
        .unwrap();
        assert_eq!(record.kind(), Some(MessageType::Done));
    }

    #[test]
    fn reply_to_help_request_is_a_response_in_its_thread() {
        let request = ok("[ol-3] HELP_REQUEST\nIssue Type: STUCK\n## Problem\np\n## Question\nq?");
        let response = ok("Re: [ol-3] HELP_REQUEST\nTry the other API.");
        assert_eq!(response.kind(), Some(MessageType::HelpResponse));
        assert_eq!(response.in_reply_to, Some(MessageType::HelpRequest));
        assert_eq!(response.thread_id.as_deref(), Some("ol-3"));
        assert_eq!(
            response.content,
            MailContent::HelpResponse {
                guidance: s("Try the other API.")
            }
        );
        assert_eq!(pending(std::slice::from_ref(&request)).len(), 1);
        assert!(pending(&[request, response]).is_empty());
    }

    #[test]
    fn reply_to_other_types_is_not_that_type() {
        let record = parse("RE: re: [ol-1] DONE\nthanks", Mode::Lenient).unwrap();
        assert_eq!(record.kind(), None);
        assert_eq!(record.in_reply_to, Some(MessageType::Done));
        assert!(completions(&[record]).is_empty());
    }

    #[test]
    fn labels_are_read_only_at_line_start() {
        let text = "CHECKPOINT\nBead: ol-6\nNote: the Reason: field below matters\nReason: MANUAL\n## Progress\n- Commit: abc\nThe Commit: xyz is older";
        let record = ok(text);
        let MailContent::Checkpoint { reason, commit, .. } = record.content else {
            panic!("not a checkpoint");
        };
        assert_eq!(reason, Some(CheckpointReason::Manual));
        assert_eq!(commit, s("abc"));
        let record = ok("PROGRESS\nSubBead: wrong\nBead: right\nStep: a\nStatus: b");
        assert_eq!(record.bead_id, s("right"));
    }

    #[test]
    fn markdown_emphasis_labels() {
        let record = ok("PROGRESS\n**Bead:** ol-1\n**Step**: s\n- **Status:** ok");
        assert_eq!(record.bead_id, s("ol-1"));
        assert!(matches!(
            record.content,
            MailContent::Progress {
                step: Some(_),
                status: Some(_),
                ..
            }
        ));
    }

    #[test]
    fn subsections_stay_inside_their_section() {
        let record = ok(OFFERING);
        let summary = record.completion().unwrap().summary.clone().unwrap();
        assert!(summary.ends_with("### Notes\nRefresh tokens rotate."));
    }

    #[test]
    fn crlf_bodies() {
        let record = ok(&OFFERING.replace('\n', "\r\n"));
        assert_eq!(record.completion().unwrap().commit, s("abc123def"));
        assert_eq!(record.bead_id, s("ol-527.1"));
    }

    // --- Lenient vs strict ---

    #[test]
    fn strict_rejects_missing_required_fields() {
        let err = parse(
            "[ol-1] FAILED\nStatus: FAILED\n## Failure\nType: EXPLODED",
            Mode::Strict,
        )
        .unwrap_err();
        assert_eq!(
            err.problems,
            [
                MailProblem::InvalidField {
                    field: "Type".into(),
                    value: "EXPLODED".into(),
                    expected: "one of TESTS_FAIL, BUILD_FAIL, SPEC_IMPOSSIBLE, CONTEXT_HIGH, ERROR"
                        .into()
                },
                MailProblem::MissingField {
                    message_type: MessageType::Failed,
                    field: "Reason".into()
                },
            ]
        );
        assert!(err.to_string().contains("EXPLODED"));
    }

    #[test]
    fn lenient_keeps_partial_parse_with_warnings() {
        let record = parse("PROGRESS\nStep: one\nContext usage: lots", Mode::Lenient).unwrap();
        assert_eq!(record.kind(), Some(MessageType::Progress));
        assert_eq!(record.bead_id, None);
        let MailContent::Progress {
            step,
            context_usage,
            ..
        } = &record.content
        else {
            panic!("not progress");
        };
        assert_eq!((step.as_deref(), *context_usage), (Some("one"), None));
        assert_eq!(record.problems.len(), 3, "{:?}", record.problems);
        let strict = parse("PROGRESS\nStep: one\nContext usage: lots", Mode::Strict).unwrap_err();
        assert_eq!(strict.problems, record.problems);
    }

    #[test]
    fn check_skips_leading_mentions_and_lists_the_modes_problems() {
        let good = "@lead @qa [ol-3] PROGRESS\nBead: ol-3\nStep: 2/5 parser\nStatus: on track";
        let c = check(good, Mode::Strict);
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!(c.record.kind(), Some(MessageType::Progress));
        assert_eq!(c.record.bead_id, s("ol-3"));
        // Misplaced type word: strict finds it, lenient reads it.
        let text = "@lead Update: PROGRESS\nStep: a\nStatus: b\nBead: c";
        assert!(check(text, Mode::Lenient).problems.is_empty());
        let strict = check(text, Mode::Strict);
        assert!(!strict.problems.is_empty());
        assert_eq!(
            strict.problems,
            parse(&text[6..], Mode::Strict).unwrap_err().problems
        );
    }

    #[test]
    fn unknown_type_is_error_in_strict_mode() {
        let err = parse("STATUS_UPDATE\nBead: x", Mode::Strict).unwrap_err();
        assert!(matches!(err.problems[0], MailProblem::UnknownType { .. }));
        let record = parse("STATUS_UPDATE\nBead: x", Mode::Lenient).unwrap();
        assert_eq!(record.content, MailContent::Unknown);
        assert_eq!(record.bead_id, s("x"));
    }

    #[test]
    fn strict_requires_type_first_and_labels_in_place() {
        let text = "Update: PROGRESS\nStep: a\nStatus: b\nBead: c";
        assert!(parse(text, Mode::Strict).is_err());
        assert_eq!(
            parse(text, Mode::Lenient).unwrap().kind(),
            Some(MessageType::Progress)
        );
        let misplaced = "[ol-1] FAILED\nType: BUILD_FAIL\nReason: linker\n## Failure\n";
        assert!(parse(misplaced, Mode::Strict).is_err());
        let lenient = parse(misplaced, Mode::Lenient).unwrap();
        assert!(lenient.problems.is_empty());
        assert!(matches!(
            lenient.content,
            MailContent::Failed {
                failure_type: Some(FailureType::BuildFail),
                ..
            }
        ));
    }

    #[test]
    fn conditional_requirements() {
        assert!(
            parse(
                "SPAWN_REQUEST\nIssue: a\nResume: false\nOrchestrator: o",
                Mode::Strict
            )
            .is_ok()
        );
        assert!(
            parse(
                "SPAWN_REQUEST\nIssue: a\nResume: true\nOrchestrator: o",
                Mode::Strict
            )
            .is_err()
        );
        assert!(parse("SPAWN_ACK\nIssue: a\nStatus: failed", Mode::Strict).is_ok());
        assert!(parse("SPAWN_ACK\nIssue: a\nStatus: spawned", Mode::Strict).is_err());
        assert!(parse("Re: HELP_REQUEST\n\n", Mode::Strict).is_err());
    }

    #[test]
    fn field_value_parsers() {
        assert_eq!(parse_percent("~45.4 %"), Some(45));
        assert_eq!(parse_percent("101%"), None);
        assert_eq!(parse_percent("NaN"), None);
        assert_eq!(parse_pass("PASS (12 tests)"), Some(true));
        assert_eq!(parse_pass("fail"), Some(false));
        assert_eq!(parse_pass("maybe"), None);
        assert_eq!(parse_list("- a\n* b, c\n\n-"), v(&["a", "b", "c"]));
        assert_eq!(heading_level("### x"), Some(3));
        assert_eq!(heading_level("#hashtag"), None);
    }

    // --- Filters ---

    #[test]
    fn filters() {
        let failing = OFFERING
            .replace("- Tests: PASS", "- Tests: FAIL")
            .replace("ol-527.1", "ol-2");
        let records: Vec<MailRecord> = [
            OFFERING.to_string(),
            failing,
            "[ol-3] FAILED\n## Failure\nType: ERROR\nReason: r".into(),
            "[ol-3] CHECKPOINT\nReason: TIMEOUT\n## Progress\n- Commit: c".into(),
            "[ol-3] PROGRESS\nStep: a\nStatus: b".into(),
            "SPAWN_REQUEST\nIssue: ol-4\nResume: false\nOrchestrator: o".into(),
        ]
        .iter()
        .map(|t| ok(t))
        .collect();
        assert_eq!(completions(&records).len(), 4);
        let wins = successes(&records);
        assert_eq!(wins.len(), 1);
        assert_eq!(wins[0].bead_id, s("ol-527.1"));
        assert_eq!(by_bead(&records, "ol-3").len(), 3);
        assert_eq!(by_type(&records, MessageType::Checkpoint).len(), 1);
        assert_eq!(pending(&records).len(), 3);
        let mut acked = records.clone();
        acked[0].acknowledged = true;
        assert_eq!(pending(&acked).len(), 2);
    }

    #[test]
    fn records_serialise_for_front_ends() {
        let record = ok(OFFERING);
        let json = serde_json::to_value(&record).unwrap();
        assert_eq!(json["content"]["type"], "OFFERING_READY");
        assert_eq!(json["content"]["validation"]["tests"], true);
        let back: MailRecord = serde_json::from_value(json).unwrap();
        assert_eq!(back, record);
    }

    proptest! {
        #[test]
        fn never_panics(text in any::<String>()) {
            for mode in [Mode::Lenient, Mode::Strict] {
                let _ = parse(&text, mode);
            }
        }

        #[test]
        fn never_panics_on_protocol_soup(lines in prop::collection::vec(prop_oneof![
            "(Subject: )?(Re: )?(\\[[a-zé.0-9-]{0,6}\\] )?(BEAD_ACCEPTED|PROGRESS|HELP_REQUEST|HELP_RESPONSE|OFFERING_READY|DONE|FAILED|CHECKPOINT|SPAWN_REQUEST|SPAWN_ACK|ÜBER)",
            "(- )?(\\*\\*)?(Bead|Status|Step|Type|Reason|Commit|Files|Tests|Context usage|Resume|Issue|Session|Issue Type|Internal Attempts|Bodÿ):(\\*\\*)? ?[A-Za-z0-9é%~ ,.]{0,10}",
            "#{1,3} (Changes|Self-Validation|Failure|Progress|Summary|Question|Problem|Ünïcode)",
            "\\PC{0,12}",
        ], 0..16)) {
            let text = lines.join("\n");
            for mode in [Mode::Lenient, Mode::Strict] {
                if let Ok(record) = parse(&text, mode) {
                    let records = [record];
                    let _ = (completions(&records), successes(&records), pending(&records));
                }
            }
        }
    }
}
