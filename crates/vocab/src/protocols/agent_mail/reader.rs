//! Reading an Agent Mail body: its fields, by label and section, and the
//! problems found on the way.

use super::*;

/// Where a label is looked for.
#[derive(Clone, Copy)]
enum Scope {
    /// Before the first `#`/`##` heading.
    Top,
    /// Inside the `##` section with one of these titles.
    Section(&'static [&'static str]),
}

/// Reads fields from a body and collects the problems found.
pub(super) struct Reader<'a> {
    lines: Vec<&'a str>,
    mode: Mode,
    kind: Option<MessageType>,
    pub(super) problems: Vec<MailProblem>,
}

impl<'a> Reader<'a> {
    pub(super) fn new(body: &'a str, mode: Mode) -> Self {
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

    pub(super) fn missing(&mut self, kind: MessageType, field: &str) {
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

    pub(super) fn bead_id(&self) -> Option<String> {
        ["Bead", "Accepted bead", "Issue"]
            .iter()
            .find_map(|label| self.find(Scope::Top, label))
            .map(str::to_string)
    }

    pub(super) fn content(&mut self, kind: MessageType) -> MailContent {
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
