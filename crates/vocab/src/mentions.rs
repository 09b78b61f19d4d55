//! `@name` mentions and message priority.
//!
//! Names follow the seed's pattern `@([a-zA-Z][a-zA-Z0-9_-]*)`, with one
//! refinement: an `@` preceded by a letter, digit, `.`, `_` or `-` is part of
//! an e-mail address or `agent@instance` name, not a mention.

/// The reserved names agents may not take.
pub const RESERVED_NAMES: [&str; 3] = ["system", "user", "all"];

/// The person at the keyboard: always a valid mention target.
pub const USER: &str = "user";

/// Who posts kickoffs and engine notices.
pub const SYSTEM: &str = "system";

/// `@all` mentions every agent except the sender.
pub const ALL: &str = "all";

/// Whether `name` is a valid mention name (`[a-zA-Z][a-zA-Z0-9_-]*`).
pub fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `text` with every `@` that would start a mention made inert (a
/// fullwidth `＠`, which reads the same): for lines that quote what
/// someone else wrote (an approval's command, a delegated thread) and must
/// wake nobody. Any other `@` (an e-mail address, `agent@instance`) is
/// kept as written.
pub fn inert(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (at, _) in scan(text) {
        out.push_str(&text[from..at]);
        out.push('\u{FF20}');
        from = at + 1;
    }
    out.push_str(&text[from..]);
    out
}

/// Every `@name` token in `message`, with the byte offset of its `@`.
pub fn scan(message: &str) -> Vec<(usize, &str)> {
    let bytes = message.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'@' && !is_word_byte_before(bytes, i) {
            let start = i + 1;
            let mut end = start;
            if end < bytes.len() && bytes[end].is_ascii_alphabetic() {
                end += 1;
                while end < bytes.len()
                    && (bytes[end].is_ascii_alphanumeric()
                        || bytes[end] == b'_'
                        || bytes[end] == b'-')
                {
                    end += 1;
                }
                // A trailing '-' is punctuation ("@coder-"), not part of the name.
                while end > start + 1 && bytes[end - 1] == b'-' {
                    end -= 1;
                }
                found.push((i, &message[start..end]));
                i = end;
                continue;
            }
        }
        i += 1;
    }
    found
}

fn is_word_byte_before(bytes: &[u8], at: usize) -> bool {
    at > 0 && {
        let b = bytes[at - 1];
        b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'@')
    }
}

/// The agents (and `user`) that `message` mentions, deduplicated, in order of
/// first appearance. `@all` stands for every agent but `sender`. An Agent
/// Mail `HELP_REQUEST` also reaches `user`, mentioned or not. The sender is
/// never among them: one's own messages never enter one's own inbox.
pub fn extract(message: &str, agents: &[String], sender: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |name: &str| {
        if name != sender && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    };
    for (_, name) in scan(message) {
        if name == ALL {
            agents.iter().filter(|a| *a != sender).for_each(|a| add(a));
        } else if name == USER || agents.iter().any(|a| a == name) {
            add(name);
        }
    }
    if sender != USER && crate::protocols::agent_mail::is_help_request(message) {
        add(USER);
    }
    out
}

/// Inbox priority: coordination (several mentions) or urgency raises it.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    High,
    Normal,
}

/// `high` when a message mentions more than one name, contains one of the
/// words urgent / asap / blocked / critical (whole words, any case), or is an
/// Agent Mail `HELP_REQUEST`.
pub fn priority(message: &str, mentions: &[String]) -> Priority {
    const URGENT: [&str; 4] = ["urgent", "asap", "blocked", "critical"];
    if mentions.len() > 1 || crate::protocols::agent_mail::is_help_request(message) {
        return Priority::High;
    }
    let urgent = message
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| URGENT.iter().any(|u| word.eq_ignore_ascii_case(u)));
    if urgent {
        Priority::High
    } else {
        Priority::Normal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agents() -> Vec<String> {
        vec!["coder".into(), "reviewer".into(), "qa-bot".into()]
    }

    #[test]
    fn extracts_known_names_in_order_without_duplicates() {
        let m = extract(
            "@reviewer then @coder, again @reviewer and @nobody",
            &agents(),
            "x",
        );
        assert_eq!(m, vec!["reviewer", "coder"]);
    }

    #[test]
    fn user_is_always_mentionable_and_all_expands() {
        assert_eq!(extract("@user look", &agents(), "coder"), vec!["user"]);
        assert_eq!(
            extract("@all sync", &agents(), "coder"),
            vec!["reviewer", "qa-bot"]
        );
    }

    #[test]
    fn email_addresses_and_qualified_names_are_not_mentions() {
        assert!(extract("mail bob@coder.com", &agents(), "x").is_empty());
        assert_eq!(
            extract("(@coder) @qa-bot-", &agents(), "x"),
            vec!["coder", "qa-bot"]
        );
        assert_eq!(scan("@1abc @"), vec![]);
    }

    #[test]
    fn priority_rules() {
        let one = vec!["coder".to_string()];
        let two = vec!["coder".to_string(), "reviewer".to_string()];
        assert_eq!(priority("hello", &one), Priority::Normal);
        assert_eq!(priority("hello", &two), Priority::High);
        assert_eq!(priority("this is URGENT!", &one), Priority::High);
        assert_eq!(priority("I'm blocked.", &one), Priority::High);
        assert_eq!(priority("unblocked now, asapish", &one), Priority::Normal);
    }

    #[test]
    fn help_requests_reach_user_with_high_priority() {
        let request = "[ol-3] HELP_REQUEST\nIssue Type: STUCK\n## Problem\np\n## Question\nq?";
        let m = extract(request, &agents(), "coder");
        assert_eq!(m, vec!["user"]);
        assert_eq!(priority(request, &m), Priority::High);
        let reply = "Re: [ol-3] HELP_REQUEST\nTry the other API.";
        assert!(extract(reply, &agents(), "coder").is_empty());
    }

    #[test]
    fn inert_text_mentions_nobody_and_keeps_addresses() {
        let all: Vec<String> = agents();
        for text in [
            "@coder @all @user look",
            "mail bob@coder.com or @reviewer, (@qa-bot) @@coder x@@coder",
            "@coder@reviewer @ @1 end@",
        ] {
            let quiet = inert(text);
            assert!(extract(&quiet, &all, "x").is_empty(), "{quiet}");
            assert!(scan(&quiet).is_empty(), "{quiet}");
            assert_eq!(quiet.replace('\u{FF20}', "@"), text);
            assert_eq!(inert(&quiet), quiet);
        }
        assert_eq!(inert("bob@coder.com"), "bob@coder.com");
    }

    #[test]
    fn names() {
        assert!(is_valid_name("a"));
        assert!(is_valid_name("qa-bot_2"));
        assert!(!is_valid_name("2bot"));
        assert!(!is_valid_name("bad name"));
        assert!(!is_valid_name(""));
    }
}
