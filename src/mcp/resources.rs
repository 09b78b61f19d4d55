//! The context as MCP resources, so SDK clients and front ends can read and
//! subscribe to it: `awtui://channel`, `awtui://inbox/<agent>` and
//! `awtui://document/<path>`.

use serde_json::json;

use crate::context::SharedContext;
use crate::context::{ContextError, mentions, paths};

/// The channel resource: its newest entries as JSON.
pub const CHANNEL_URI: &str = "awtui://channel";
const INBOX_PREFIX: &str = "awtui://inbox/";
const DOCUMENT_PREFIX: &str = "awtui://document/";
/// How many entries reading [`CHANNEL_URI`] returns (the newest ones).
pub const CHANNEL_RESOURCE_ENTRIES: usize = 100;

/// The URI of `agent`'s inbox.
pub fn inbox_uri(agent: &str) -> String {
    format!("{INBOX_PREFIX}{agent}")
}

/// The URI of a document.
pub fn document_uri(path: &str) -> String {
    format!("{DOCUMENT_PREFIX}{path}")
}

/// A parsed resource URI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResourceUri {
    /// `awtui://channel`.
    Channel,
    /// `awtui://inbox/<agent>`.
    Inbox(String),
    /// `awtui://document/<path>`, path validated.
    Document(String),
}

/// Why a resource URI cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum ResourceError {
    /// Not one of the three kinds of URI.
    #[error(
        "no such resource '{0}': use awtui://channel, awtui://inbox/<agent> or awtui://document/<path>"
    )]
    Unknown(String),
    /// An inbox of someone who is not in the workflow.
    #[error("'{0}' has no inbox: it is not a participant of this workflow")]
    NoInbox(String),
    /// A refused path or a missing document.
    #[error(transparent)]
    Context(#[from] ContextError),
}

/// A resource as listed by `resources/list`.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceInfo {
    /// `awtui://...`.
    pub uri: String,
    /// Short name shown by clients.
    pub name: String,
    /// What it holds.
    pub description: String,
    /// Content type of a read.
    pub mime_type: &'static str,
}

/// A resource's content.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceText {
    /// Content type.
    pub mime_type: &'static str,
    /// The content.
    pub text: String,
}

/// Parses and checks `uri` against the workflow's participants and the
/// document path rules.
pub fn parse(uri: &str, agents: &[String]) -> Result<ResourceUri, ResourceError> {
    if uri == CHANNEL_URI {
        return Ok(ResourceUri::Channel);
    }
    if let Some(agent) = uri.strip_prefix(INBOX_PREFIX) {
        if agent == mentions::USER || agents.iter().any(|a| a == agent) {
            return Ok(ResourceUri::Inbox(agent.to_string()));
        }
        return Err(ResourceError::NoInbox(agent.to_string()));
    }
    if let Some(path) = uri.strip_prefix(DOCUMENT_PREFIX) {
        let path = paths::validate(path, &[])?;
        return Ok(ResourceUri::Document(path));
    }
    Err(ResourceError::Unknown(uri.to_string()))
}

fn mime_for(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("md" | "markdown") => "text/markdown",
        Some("json") => "application/json",
        _ => "text/plain",
    }
}

/// Every resource: the channel, each participant's inbox, each document.
pub fn list(ctx: &SharedContext, agents: &[String]) -> Result<Vec<ResourceInfo>, ContextError> {
    let mut out = vec![ResourceInfo {
        uri: CHANNEL_URI.into(),
        name: "channel".into(),
        description: format!(
            "The shared channel: its newest {CHANNEL_RESOURCE_ENTRIES} messages as JSON"
        ),
        mime_type: "application/json",
    }];
    for agent in agents.iter().map(String::as_str).chain([mentions::USER]) {
        out.push(ResourceInfo {
            uri: inbox_uri(agent),
            name: format!("inbox/{agent}"),
            description: format!("Unread @mentions of {agent} as JSON, high priority first"),
            mime_type: "application/json",
        });
    }
    for doc in ctx.read(|s| s.list_documents())? {
        out.push(ResourceInfo {
            uri: document_uri(&doc),
            description: format!("Shared document {doc}"),
            mime_type: mime_for(&doc),
            name: doc,
        });
    }
    Ok(out)
}

/// Reads a resource without changing anything (reading an inbox does not
/// mark it delivered).
pub fn read(
    ctx: &SharedContext,
    agents: &[String],
    uri: &str,
) -> Result<ResourceText, ResourceError> {
    match parse(uri, agents)? {
        ResourceUri::Channel => {
            let entries = ctx.read(|s| s.read(None, Some(CHANNEL_RESOURCE_ENTRIES)))?;
            Ok(ResourceText {
                mime_type: "application/json",
                text: json!({ "entries": entries }).to_string(),
            })
        }
        ResourceUri::Inbox(agent) => {
            let items = ctx.read(|s| s.inbox(&agent))?;
            let messages = super::tools::inbox_json(&items);
            Ok(ResourceText {
                mime_type: "application/json",
                text: json!({ "agent": agent, "messages": messages }).to_string(),
            })
        }
        ResourceUri::Document(path) => {
            let text = ctx.read(|s| s.read_document(Some(&path)))?;
            Ok(ResourceText {
                mime_type: mime_for(&path),
                text,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{MemoryStore, StoreLayout};

    fn setup() -> (SharedContext, Vec<String>) {
        let agents = vec!["coder".to_string()];
        let layout = StoreLayout {
            channel: "channel.md".into(),
            document: "notes.md".into(),
            documents: vec!["notes.md".into()],
            agents: agents.clone(),
        };
        (
            SharedContext::new(Box::new(MemoryStore::new(&layout).unwrap())),
            agents,
        )
    }

    #[test]
    fn lists_and_reads_every_kind() {
        let (ctx, agents) = setup();
        ctx.append("user", "@coder go").unwrap();
        let uris: Vec<String> = list(&ctx, &agents)
            .unwrap()
            .into_iter()
            .map(|r| r.uri)
            .collect();
        assert_eq!(
            uris,
            vec![
                "awtui://channel",
                "awtui://inbox/coder",
                "awtui://inbox/user",
                "awtui://document/notes.md"
            ]
        );
        let inbox = read(&ctx, &agents, "awtui://inbox/coder").unwrap();
        assert!(inbox.text.contains("@coder go"));
        let channel = read(&ctx, &agents, CHANNEL_URI).unwrap();
        assert!(channel.text.contains("\"id\":1"));
        let doc = read(&ctx, &agents, "awtui://document/notes.md").unwrap();
        assert_eq!(doc.mime_type, "text/markdown");
        // Reading an inbox changes nothing.
        assert_eq!(ctx.read(|s| s.cursor("coder").unwrap().delivered), 0);
    }

    #[test]
    fn refuses_unknown_resources() {
        let (ctx, agents) = setup();
        for bad in [
            "awtui://inbox/ghost",
            "awtui://document/../x",
            "awtui://other",
            "file:///etc/passwd",
        ] {
            assert!(read(&ctx, &agents, bad).is_err(), "{bad}");
        }
        assert!(read(&ctx, &agents, "awtui://document/missing.md").is_err());
    }
}
