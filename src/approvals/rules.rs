//! Approval rules, pure: `Tool` or `Tool(pattern)` (e.g. `Bash(git status*)`,
//! `Write(src/*)`), matched against the tool a CLI wants to run and its
//! input, and the order in which the workflow's rules and the person's
//! "always" decisions are consulted. No I/O here.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// Why a rule's text could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// Nothing was given.
    #[error("an empty rule: write a tool name such as Bash or Bash(git status*)")]
    Empty,
    /// `Tool(` without its `)`, or text after it.
    #[error("'{0}' is not Tool or Tool(pattern): the pattern must end with ')'")]
    Unclosed(String),
    /// The tool name has characters no tool name has.
    #[error("'{0}': a tool name is letters, digits, '_', '-', '.' or '*'")]
    BadTool(String),
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
    /// The subject pattern (`*` any run, `?` one character), if any.
    pub pattern: Option<String>,
}

impl TryFrom<String> for Rule {
    type Error = RuleError;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        Rule::parse(&text)
    }
}

impl From<Rule> for String {
    fn from(rule: Rule) -> String {
        rule.to_string()
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pattern {
            Some(p) => write!(f, "{}({p})", self.tool),
            None => f.write_str(&self.tool),
        }
    }
}

impl Rule {
    /// Reads `Tool` or `Tool(pattern)`.
    pub fn parse(text: &str) -> Result<Rule, RuleError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(RuleError::Empty);
        }
        let (tool, pattern) = match text.split_once('(') {
            Some((tool, rest)) => {
                let Some(pattern) = rest.strip_suffix(')') else {
                    return Err(RuleError::Unclosed(text.to_string()));
                };
                (tool.trim(), Some(pattern.to_string()))
            }
            None => (text, None),
        };
        let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '*');
        if tool.is_empty() || !tool.chars().all(valid) {
            return Err(RuleError::BadTool(text.to_string()));
        }
        Ok(Rule {
            tool: tool.to_string(),
            pattern: pattern.filter(|p| !p.is_empty() && p != "*"),
        })
    }

    /// Whether this rule covers `tool` called with `input`.
    pub fn matches(&self, tool: &str, input: &Value) -> bool {
        if !glob(&self.tool, tool) {
            return false;
        }
        match &self.pattern {
            None => true,
            Some(p) => glob(p, &subject(tool, input)),
        }
    }

    /// The rule an "always" decision on this call stores: the exact
    /// command or file for tools that have one, the whole tool otherwise.
    /// (A `*` or `?` in the command keeps its pattern meaning.)
    pub fn for_call(tool: &str, input: &Value) -> Rule {
        let pattern = subject_field(tool, input);
        Rule {
            tool: tool.to_string(),
            pattern,
        }
    }
}

/// The input field that says what a call does, for the tools that have one.
fn subject_field(tool: &str, input: &Value) -> Option<String> {
    let key = match tool {
        "Bash" => "command",
        "Write" | "Edit" | "MultiEdit" | "Read" => "file_path",
        "NotebookEdit" => "notebook_path",
        "WebFetch" => "url",
        "WebSearch" => "query",
        "Glob" | "Grep" => "pattern",
        _ => return None,
    };
    input.get(key).and_then(Value::as_str).map(str::to_string)
}

/// What a rule's pattern is matched against: the call's subject field, or
/// its compact JSON input.
pub fn subject(tool: &str, input: &Value) -> String {
    subject_field(tool, input).unwrap_or_else(|| input.to_string())
}

/// Shell-style matching of the whole `text`: `*` any run (slashes too),
/// `?` one character, everything else itself.
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative matcher with one backtrack point (linear in practice).
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
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

impl RuleSet {
    /// Whether it holds no rule.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty() && self.ask.is_empty()
    }

    /// The rules of `verdict`.
    pub fn of(&self, verdict: Verdict) -> &[Rule] {
        match verdict {
            Verdict::Allow => &self.allow,
            Verdict::Deny => &self.deny,
            Verdict::Ask => &self.ask,
        }
    }

    /// The rules of `verdict`, to add to.
    pub fn of_mut(&mut self, verdict: Verdict) -> &mut Vec<Rule> {
        match verdict {
            Verdict::Allow => &mut self.allow,
            Verdict::Deny => &mut self.deny,
            Verdict::Ask => &mut self.ask,
        }
    }
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

/// Where a verdict came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A rule in the workflow's `approve:`.
    Workflow(Rule),
    /// An "always" decision a person made earlier.
    Person(Rule),
    /// Nothing matched: ask.
    Default,
}

/// The verdict for `agent` calling `tool` with `input`, and why. The
/// order: the workflow's `deny`, the person's always-deny, the person's
/// always-allow, the workflow's `ask`, the workflow's `allow`, and
/// otherwise ask. So a workflow deny can never be overridden from the UI,
/// and a person's "always" outranks the workflow's "ask" (it is the answer
/// to that very question).
pub fn decide(
    workflow: &RuleSet,
    standing: &[Standing],
    agent: &str,
    tool: &str,
    input: &Value,
) -> (Verdict, Source) {
    let hit = |rules: &[Rule]| rules.iter().find(|r| r.matches(tool, input)).cloned();
    if let Some(r) = hit(&workflow.deny) {
        return (Verdict::Deny, Source::Workflow(r));
    }
    for verdict in [Verdict::Deny, Verdict::Allow] {
        if let Some(s) = standing
            .iter()
            .find(|s| s.agent == agent && s.verdict == verdict && s.rule.matches(tool, input))
        {
            return (verdict, Source::Person(s.rule.clone()));
        }
    }
    if let Some(r) = hit(&workflow.ask) {
        return (Verdict::Ask, Source::Workflow(r));
    }
    if let Some(r) = hit(&workflow.allow) {
        return (Verdict::Allow, Source::Workflow(r));
    }
    (Verdict::Ask, Source::Default)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(s: &str) -> Rule {
        Rule::parse(s).unwrap()
    }

    #[test]
    fn rules_parse_and_print_back() {
        assert_eq!(rule("Bash(git status*)").to_string(), "Bash(git status*)");
        assert_eq!(rule(" Write ").to_string(), "Write");
        assert_eq!(rule("Bash(*)").pattern, None);
        assert_eq!(rule("mcp__*").tool, "mcp__*");
        assert_eq!(Rule::parse(""), Err(RuleError::Empty));
        assert!(matches!(
            Rule::parse("Bash(git"),
            Err(RuleError::Unclosed(_))
        ));
        assert!(matches!(Rule::parse("Ba sh"), Err(RuleError::BadTool(_))));
        // A pattern may hold parentheses itself.
        assert_eq!(rule("Bash(echo (a))").pattern.as_deref(), Some("echo (a)"));
    }

    #[test]
    fn patterns_match_the_command_or_file_of_the_call() {
        let status = json!({"command": "git status --short"});
        assert!(rule("Bash(git status*)").matches("Bash", &status));
        assert!(!rule("Bash(git push*)").matches("Bash", &status));
        assert!(!rule("Bash(git status*)").matches("Write", &status));
        assert!(rule("Bash").matches("Bash", &status));
        let write = json!({"file_path": "/w/src/main.rs", "content": "x"});
        assert!(rule("Write(/w/src/*)").matches("Write", &write));
        assert!(!rule("Write(/w/docs/*)").matches("Write", &write));
        assert!(rule("mcp__*").matches("mcp__other__tool", &json!({})));
    }

    #[test]
    fn glob_handles_stars_and_question_marks() {
        assert!(glob("a*c", "abbbc"));
        assert!(glob("a*", "a"));
        assert!(glob("*", ""));
        assert!(glob("a?c", "abc"));
        assert!(!glob("a?c", "ac"));
        assert!(glob("*x*y", "axbxy"));
        assert!(!glob("abc", "abcd"));
        assert!(glob("ünï*", "ünïcode"));
    }

    #[test]
    fn deny_beats_everything_and_a_persons_always_beats_ask() {
        let wf = RuleSet {
            allow: vec![rule("Bash(git *)")],
            deny: vec![rule("Bash(git push*)")],
            ask: vec![rule("Write")],
        };
        let push = json!({"command": "git push"});
        let log = json!({"command": "git log"});
        let write = json!({"file_path": "a.txt"});
        let always = |verdict, r: &str| Standing {
            agent: "coder".into(),
            rule: rule(r),
            verdict,
        };
        assert_eq!(
            decide(
                &wf,
                &[always(Verdict::Allow, "Bash")],
                "coder",
                "Bash",
                &push
            )
            .0,
            Verdict::Deny
        );
        assert_eq!(decide(&wf, &[], "coder", "Bash", &log).0, Verdict::Allow);
        assert_eq!(decide(&wf, &[], "coder", "Write", &write).0, Verdict::Ask);
        let (v, src) = decide(
            &wf,
            &[always(Verdict::Allow, "Write(a.txt)")],
            "coder",
            "Write",
            &write,
        );
        assert_eq!(v, Verdict::Allow);
        assert_eq!(src, Source::Person(rule("Write(a.txt)")));
        // Another agent's decision does not apply.
        assert_eq!(
            decide(
                &wf,
                &[always(Verdict::Allow, "Write")],
                "other",
                "Write",
                &write
            )
            .0,
            Verdict::Ask
        );
        // A person's deny beats their allow.
        assert_eq!(
            decide(
                &wf,
                &[
                    always(Verdict::Allow, "Edit"),
                    always(Verdict::Deny, "Edit")
                ],
                "coder",
                "Edit",
                &write
            )
            .0,
            Verdict::Deny
        );
        assert_eq!(
            decide(&RuleSet::default(), &[], "coder", "Edit", &write),
            (Verdict::Ask, Source::Default)
        );
    }

    #[test]
    fn always_rules_cover_the_exact_command_or_file() {
        let r = Rule::for_call("Bash", &json!({"command": "ls -la"}));
        assert_eq!(r.to_string(), "Bash(ls -la)");
        assert!(!r.matches("Bash", &json!({"command": "ls -la; rm -rf /"})));
        assert_eq!(
            Rule::for_call("Write", &json!({"file_path": "/x/y"})).to_string(),
            "Write(/x/y)"
        );
        assert_eq!(Rule::for_call("Task", &json!({"a": 1})).to_string(), "Task");
    }
}
