//! Pure parsers for what agents write: AOP blocks, agent operations in turn
//! frontmatter, and Agent Mail status messages. No I/O; they never panic.
pub mod agent_mail;
pub mod agent_ops;
pub mod aop;

use serde::{Deserialize, Serialize};

/// What the protocols read in one channel message, for front ends.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Annotations {
    /// AOP blocks, when the message has at least one marker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aop: Option<aop::Parsed>,
    /// The Agent Mail status record, when the message is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mail: Option<agent_mail::MailRecord>,
}

/// Reads a channel message with every protocol (lenient mode). Messages
/// without an AOP marker are not reported as "unmarked output".
pub fn annotate(message: &str) -> Annotations {
    let has_marker = message.lines().any(|l| {
        l.trim_start().starts_with("=== AOP-") || l.trim_start().starts_with("=== END-AOP-")
    });
    Annotations {
        aop: has_marker.then(|| aop::parse(message, aop::Mode::Lenient)),
        mail: agent_mail::from_channel_message(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotates_only_what_is_there() {
        assert_eq!(annotate("plain chat, DONE soon"), Annotations::default());
        let a = annotate("=== AOP-FINAL | agent=r ===\nok\n=== END-AOP-FINAL ===\n");
        assert_eq!(a.aop.unwrap().blocks().count(), 1);
        let m = annotate(
            "@user [ol-3] HELP_REQUEST\nIssue Type: STUCK\n## Problem\np\n## Question\nq?",
        );
        assert_eq!(
            m.mail.unwrap().kind(),
            Some(agent_mail::MessageType::HelpRequest)
        );
    }
}
