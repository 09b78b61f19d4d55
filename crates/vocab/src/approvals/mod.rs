//! Tool approvals' words: a request, its answer and decision, and the
//! rule language (`rules`, reading and matching `Bash(make)`, with the
//! `shell` reader it needs); what crosses to front ends and the workflow.

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub mod rules;
pub mod shell;
pub mod workspace;

/// A tool call an agent's CLI asks about.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Its number within the instance (`#3`), for `awtui approve 3`.
    pub id: u64,
    /// Who asks.
    pub agent: String,
    /// The tool the CLI wants to run (`Bash`, `Write`, `mcp__x__y`).
    pub tool: String,
    /// The tool's input, as the CLI gave it.
    pub input: Value,
    /// The CLI's id of the tool call, if it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// When it was asked.
    pub at: DateTime<Utc>,
    /// The agent's last channel message, for context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

/// How a request was answered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The request.
    pub id: u64,
    /// Its agent.
    pub agent: String,
    /// Its tool.
    pub tool: String,
    /// What the call does ([`Request::subject`]).
    pub subject: String,
    /// Allowed or denied.
    pub verdict: Verdict,
    /// Who decided: a person's name (`user`), [`BY_RULE`], [`BY_TIMEOUT`]
    /// or [`BY_AWTUI`].
    pub by: String,
    /// The rule that decided, or the "always" rule the person added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<Rule>,
    /// Why (the model sees it on a deny).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Nobody waited for the answer any more ([`EXPIRED`]): the request
    /// was closed, not decided; `reason` says what ended the wait.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expired: bool,
    /// When.
    pub at: DateTime<Utc>,
}

/// What a person (or awtui) decides about one request.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Answer {
    /// Allow or deny (`ask` is not an answer).
    pub verdict: Option<Verdict>,
    /// Also keep this as a rule for the agent: the rule to keep (`None`:
    /// the call's own command or file, see [`Rule::for_call`]).
    #[serde(default)]
    pub always: bool,
    /// The rule to keep instead of the call's own, with `always`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<Rule>,
    /// Why (shown to the model on a deny).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Something that changed, for the engine and front ends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalEvent {
    /// A request waits for a person.
    Requested { request: Request },
    /// A request was answered (by a person, a rule, the timeout or awtui).
    Decided { decision: Decision },
    /// The "always" rules changed; all of them.
    Standing { standing: Vec<Standing> },
}

/// The approvals as a front end draws them: what waits, the "always"
/// rules and the workflow's rules (part of the engine's snapshot).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ApprovalsSnapshot {
    /// Requests waiting for a person, oldest first.
    pub pending: Vec<Request>,
    /// The "always" decisions, oldest first.
    pub standing: Vec<Standing>,
    /// Each asking agent's `approve:` rules.
    pub rules: BTreeMap<String, RuleSet>,
    /// The approval timeout, in seconds.
    pub timeout_secs: u64,
}

/// What a rule (or a person) says about a tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Run it without asking.
    Allow,
    /// Refuse it; the model is told why.
    Deny,
    /// Ask the person.
    Ask,
}

impl Verdict {
    /// Every verdict with its key in `approve:`.
    pub const ALL: [(Verdict, &'static str); 3] = [
        (Verdict::Allow, "allow"),
        (Verdict::Deny, "deny"),
        (Verdict::Ask, "ask"),
    ];

    /// The verdict named `name` (`allow`, `deny`, `ask`).
    pub fn from_name(name: &str) -> Option<Verdict> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(v, _)| *v)
    }

    /// Its name in workflow files.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(v, _)| *v == self)
            .map_or("?", |(_, n)| n)
    }
}

/// One rule: a tool name (`*` matches any run of characters) and, when
/// given, a pattern for the call's subject (the command of `Bash`, the
/// file of `Write`/`Edit`/`Read`, the URL of `WebFetch`, the input's JSON
/// for other tools).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Rule {
    /// The tool name, possibly with `*`.
    pub tool: String,
    /// The subject pattern (`*` any run, `?` one character, `\*`, `\?`
    /// and `\\` themselves), if any.
    pub pattern: Option<String>,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pattern {
            Some(p) => write!(f, "{}({p})", self.tool),
            None => f.write_str(&self.tool),
        }
    }
}

/// An agent's `approve:` rules from the workflow, by verdict.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleSet {
    /// Run without asking.
    pub allow: Vec<Rule>,
    /// Refuse.
    pub deny: Vec<Rule>,
    /// Always ask the person (even when an `allow` rule matches).
    pub ask: Vec<Rule>,
}

/// One "always" decision a person made for an agent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Standing {
    /// The agent it applies to.
    pub agent: String,
    /// What it covers.
    pub rule: Rule,
    /// Allow or deny (never ask).
    pub verdict: Verdict,
}

/// Who decides when no rule and no person did.
pub const BY_TIMEOUT: &str = "timeout";
/// A rule decided.
pub const BY_RULE: &str = "rule";
/// awtui itself (the agent stopped, the instance ended or restarted).
pub const BY_AWTUI: &str = "awtui";
/// How a request nobody waits for any more is shown everywhere: the CLI
/// gave up (its own timeout, the turn ended, it crashed, the agent or the
/// instance stopped), so an answer would reach nobody and nothing ran.
pub const EXPIRED: &str = "expired: the agent stopped waiting";
impl Request {
    /// What the call does, in one line: the command, the file or the input.
    pub fn subject(&self) -> String {
        rules::subject(&self.tool, &self.input)
    }
}

impl Decision {
    /// How it ended, for a person who tries to answer it again.
    pub fn ended(&self) -> String {
        if self.expired {
            let why = self.reason.as_deref().unwrap_or("it ended");
            return format!("{EXPIRED} ({why}); nothing ran, and an answer now would reach nobody");
        }
        let verb = if self.verdict == Verdict::Allow {
            "allowed"
        } else {
            "denied"
        };
        format!("was already answered: {verb} by {}", self.by)
    }

    /// The message the model receives with a deny.
    pub fn message(&self) -> String {
        let why = self
            .reason
            .as_deref()
            .map(str::trim)
            .filter(|r| !r.is_empty());
        match (self.by.as_str(), &self.rule, why) {
            _ if self.expired => format!("Denied: {EXPIRED}."),
            (BY_RULE, Some(rule), _) => format!("Denied by the workflow rule {rule}."),
            (BY_TIMEOUT, _, Some(why)) | (BY_AWTUI, _, Some(why)) => format!("Denied: {why}."),
            (who, _, Some(why)) => format!("Denied by {who}: {why}"),
            (who, _, None) => format!("Denied by {who}."),
        }
    }

    /// The answer Claude Code's `--permission-prompt-tool` expects:
    /// `{"behavior":"allow","updatedInput":{…}}` with the call's input, or
    /// `{"behavior":"deny","message":"…"}`.
    pub fn answer(&self, input: &Value) -> Value {
        match self.verdict {
            Verdict::Allow => serde_json::json!({"behavior": "allow", "updatedInput": input}),
            _ => serde_json::json!({"behavior": "deny", "message": self.message()}),
        }
    }

    /// One compact line for the channel and logs:
    /// `approval #3: allowed Bash "git status" for coder (user, always Bash(git status))`.
    /// It mentions nobody (the agent's plain name, quoted text made inert):
    /// a line that woke the agent would make it ask again, endlessly.
    pub fn summary(&self) -> String {
        let verb = if self.verdict == Verdict::Allow {
            "allowed"
        } else {
            "denied"
        };
        let mut subject: String = self.subject.chars().take(80).collect();
        if subject.len() < self.subject.len() {
            subject.push('…');
        }
        let subject = subject.replace('\n', " ");
        if self.expired {
            let why = self.reason.as_deref().unwrap_or("it ended");
            return crate::mentions::inert(&format!(
                "approval #{}: {EXPIRED} ({why}); {} {subject:?} for {} did not run",
                self.id, self.tool, self.agent
            ));
        }
        let mut how = self.by.clone();
        match (&self.rule, self.by.as_str()) {
            (Some(rule), BY_RULE) => how = format!("rule {rule}"),
            (Some(rule), _) => how.push_str(&format!(", always {rule}")),
            (None, _) => {}
        }
        if let Some(r) = self.reason.as_deref().filter(|r| !r.trim().is_empty()) {
            how.push_str(&format!(": {}", r.trim()));
        }
        crate::mentions::inert(&format!(
            "approval #{}: {verb} {} {subject:?} for {} ({how})",
            self.id, self.tool, self.agent
        ))
    }
}
