//! What front ends ask the engine to do. The engine is the only place that
//! changes state; front ends send these and render events. Commands and
//! events are plain data (serde), so a remote front end speaks the same
//! protocol as the local TUI.

use serde::{Deserialize, Serialize};

use crate::context::Since;

/// A request to the engine. Answers come back as events to every front end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Command {
    /// Post a message to the channel as `user`.
    Post { text: String },
    /// Stop an agent (its whole process group); its unread messages stay.
    Stop { agent: String },
    /// Let a stopped or failed agent work again.
    Restart { agent: String },
    /// Resume after a loop-guard or budget pause.
    Resume,
    /// Acknowledge `agent`'s inbox up to `until` (the user's ack).
    Ack {
        agent: String,
        #[serde(with = "since_text")]
        until: Since,
    },
    /// Ask for the whole current state (answered by `EngineEvent::Snapshot`),
    /// with at most `messages` recent channel messages.
    Snapshot { messages: usize },
    /// Ask for a document's content (answered by `EngineEvent::DocumentContent`).
    ReadDocument { file: Option<String> },
    /// Replace a document's content (atomic write) as `user`.
    WriteDocument {
        file: Option<String>,
        content: String,
    },
    /// Create a document as `user`; fails if it exists.
    CreateDocument { file: String, content: String },
    /// Delete a document as `user`.
    DeleteDocument { file: String },
    /// Stop every agent and end the instance, leaving it on disk.
    Shutdown,
}

/// `Since` as the text a person types: `42`, `#42` or a timestamp.
mod since_text {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::context::{Since, format_timestamp};

    pub fn serialize<S: Serializer>(since: &Since, s: S) -> Result<S::Ok, S::Error> {
        match since {
            Since::Id(id) => s.serialize_str(&id.to_string()),
            Since::Time(t) => s.serialize_str(&format_timestamp(t)),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Since, D::Error> {
        let text = String::deserialize(d)?;
        Since::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_round_trip_as_json() {
        for c in [
            Command::Post {
                text: "@coder hi".into(),
            },
            Command::Ack {
                agent: "coder".into(),
                until: Since::Id(7),
            },
            Command::WriteDocument {
                file: None,
                content: "x".into(),
            },
            Command::Snapshot { messages: 200 },
            Command::Shutdown,
        ] {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(serde_json::from_str::<Command>(&json).unwrap(), c, "{json}");
        }
        let c: Command = serde_json::from_str(r#"{"command":"stop","agent":"qa"}"#).unwrap();
        assert_eq!(c, Command::Stop { agent: "qa".into() });
    }
}
