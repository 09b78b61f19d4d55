//! What the page may ask an instance to do: an engine [`Command`], the
//! same the control room and the CLI send, with its tag spelled `action`
//! (`{"action":"stop","agent":"qa"}`). Two commands also take the page's
//! flatter shape ([`PageShape`]), and only the commands
//! [`page_may_send`] names get through.

use serde::Deserialize;
use serde_json::Value;

use crate::vocab::{Answer, Command, Since, Verdict};

/// The commands a person at the page may send; anything else (`shutdown`,
/// adding agents, writing documents) is refused. A command shown in the
/// web is added here, next to its button in `static/app.js`.
pub fn page_may_send(command: &Command) -> bool {
    matches!(
        command,
        Command::Post { .. }
            | Command::Ack { .. }
            | Command::Approve { .. }
            | Command::Stop { .. }
            | Command::Cancel { .. }
            | Command::Restart { .. }
            | Command::Resume
    )
}

/// The page's own shapes of two commands: an approval's verdict inline
/// rather than an [`Answer`], and an acknowledgement up to a message
/// number rather than a [`Since`] text.
#[derive(Debug, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
enum PageShape {
    /// Acknowledge `agent`'s inbox up to message `until`.
    Ack {
        /// Whose inbox.
        agent: String,
        /// The last message acknowledged.
        until: u64,
    },
    /// Answer a pending tool call.
    Approve {
        /// The request's number.
        request: u64,
        /// Allow or deny.
        verdict: Verdict,
        /// Also keep it as a rule for the agent.
        #[serde(default)]
        always: bool,
        /// Why (the model reads it on a deny).
        #[serde(default)]
        reason: Option<String>,
    },
}

impl PageShape {
    fn command(self) -> Command {
        match self {
            PageShape::Ack { agent, until } => Command::Ack {
                agent,
                until: Since::Id(until),
            },
            PageShape::Approve {
                request,
                verdict,
                always,
                reason,
            } => Command::Approve {
                request,
                answer: Answer {
                    verdict: Some(verdict),
                    always,
                    rule: None,
                    reason: reason.filter(|r| !r.trim().is_empty()),
                },
            },
        }
    }
}

/// Why a body is not an action the page may send (answered with 400).
#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    /// Not JSON, not a command, or a command's fields are wrong.
    #[error("bad action: {0}")]
    Unreadable(String),
    /// A command the page may not send.
    #[error("bad action: the page may not send {0}")]
    NotForThePage(&'static str),
    /// An approval answered `ask`.
    #[error("the verdict is allow or deny")]
    AskIsNoVerdict,
}

/// The engine command a page's body asks for.
pub fn read(body: &[u8]) -> Result<Command, ActionError> {
    let unreadable = |e: serde_json::Error| ActionError::Unreadable(e.to_string());
    let value: Value = serde_json::from_slice(body).map_err(unreadable)?;
    let command = match serde_json::from_value::<PageShape>(value.clone()) {
        Ok(shape) => shape.command(),
        Err(_) => {
            let mut value = value;
            if let Some(fields) = value.as_object_mut()
                && let Some(action) = fields.remove("action")
            {
                fields.insert("command".into(), action);
            }
            serde_json::from_value::<Command>(value).map_err(unreadable)?
        }
    };
    if !page_may_send(&command) {
        return Err(ActionError::NotForThePage(command.name()));
    }
    if let Command::Approve { answer, .. } = &command
        && answer.verdict == Some(Verdict::Ask)
    {
        return Err(ActionError::AskIsNoVerdict);
    }
    Ok(command)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read_json(v: Value) -> Result<Command, ActionError> {
        read(v.to_string().as_bytes())
    }

    #[test]
    fn the_page_posts_commands_and_its_two_shapes() {
        assert_eq!(
            read_json(json!({"action": "stop", "agent": "qa"})).unwrap(),
            Command::Stop { agent: "qa".into() }
        );
        assert_eq!(
            read_json(json!({"action": "resume"})).unwrap(),
            Command::Resume
        );
        assert_eq!(
            read_json(json!({"action": "ack", "agent": "user", "until": 4})).unwrap(),
            Command::Ack {
                agent: "user".into(),
                until: Since::Id(4),
            }
        );
        let approve = json!({"action": "approve", "request": 2, "verdict": "deny", "reason": " "});
        match read_json(approve).unwrap() {
            Command::Approve { request, answer } => {
                assert_eq!(request, 2);
                assert_eq!(answer.verdict, Some(Verdict::Deny));
                assert_eq!(answer.reason, None);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn what_the_page_may_not_send_is_refused() {
        for bad in [
            json!({"action": "shutdown"}),
            json!({"action": "delete_document", "file": "notes.md"}),
            json!({"action": "launch"}),
            json!({"action": "stop"}),
            json!({"action": "approve", "request": 1, "verdict": "ask"}),
            json!("post"),
        ] {
            assert!(read_json(bad.clone()).is_err(), "{bad}");
        }
    }
}
