//! Tool approvals' words: a request, its answer and decision, the rules.
//! How a rule is read and matched lives with the approvals
//! (`crate::approvals::rules`); here is only what crosses to front ends.

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
