//! What remote clients ask a running instance directly, answered to that
//! client alone (unlike engine commands, whose answers go to every front
//! end): recent messages or an inbox with the Agent Mail filters, and the
//! instance's status for `list`.

use crate::context::{ChannelEntry, ContextStore};
use crate::protocols;
use crate::protocols::agent_mail::MailRecord;
pub use crate::vocab::instances::InstanceStatus;
pub use crate::vocab::peek::{PeekItem, PeekQuery};

impl PeekItem {
    /// What `awtui peek --json` prints: an inbox item (priority and state
    /// known) in the one inbox item shape `inbox_check` returns
    /// ([`crate::context::inbox_item_json`]); a channel message as itself
    /// with its annotations.
    pub fn to_json(&self) -> serde_json::Value {
        match (self.priority, self.state) {
            (Some(priority), Some(state)) => {
                crate::context::inbox_item_json(&self.entry, priority, state)
            }
            _ => serde_json::to_value(self).unwrap_or_default(),
        }
    }
}

/// Whether an Agent Mail record passes the query's filters (the same tests
/// as `agent_mail::by_type` and `agent_mail::by_bead`).
fn passes(mail: Option<&MailRecord>, q: &PeekQuery) -> bool {
    if q.kind.is_none() && q.bead.is_none() {
        return true;
    }
    let Some(record) = mail else { return false };
    let one = std::slice::from_ref(record);
    q.kind
        .is_none_or(|k| !crate::protocols::agent_mail::by_type(one, k).is_empty())
        && q.bead
            .as_deref()
            .is_none_or(|b| !crate::protocols::agent_mail::by_bead(one, b).is_empty())
}

/// Answers a peek from the store.
pub fn peek(store: &dyn ContextStore, q: &PeekQuery) -> Result<Vec<PeekItem>, String> {
    let item = |entry: ChannelEntry| PeekItem {
        annotations: protocols::annotate(&entry.message),
        entry,
        priority: None,
        state: None,
    };
    match &q.agent {
        Some(agent) => Ok(store
            .inbox(agent)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|i| PeekItem {
                priority: Some(i.priority),
                state: Some(i.state),
                ..item(i.entry)
            })
            .filter(|i| passes(i.annotations.mail.as_ref(), q))
            .take(q.limit)
            .collect()),
        None if q.kind.is_none() && q.bead.is_none() && q.before.is_some() => Ok(store
            .page(crate::context::Page::Before(q.before.unwrap_or(0)), q.limit)
            .entries
            .into_iter()
            .map(item)
            .collect()),
        None if q.kind.is_none() && q.bead.is_none() => Ok(store
            .read(None, Some(q.limit))
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(item)
            .collect()),
        None => {
            let mut all: Vec<PeekItem> = store
                .read(None, None)
                .map_err(|e| e.to_string())?
                .into_iter()
                .filter(|e| q.before.is_none_or(|b| e.id < b))
                .map(item)
                .filter(|i| passes(i.annotations.mail.as_ref(), q))
                .collect();
            let skip = all.len().saturating_sub(q.limit);
            Ok(all.split_off(skip))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{DeliveryState, MemoryStore, Priority, StoreLayout};
    use crate::protocols::agent_mail::MessageType;

    fn store() -> MemoryStore {
        let mut s = MemoryStore::new(&StoreLayout {
            channel: "channel.md".into(),
            document: "notes.md".into(),
            documents: vec![],
            agents: vec!["coder".into()],
        })
        .unwrap();
        s.append("system", "@coder start").unwrap();
        s.append(
            "coder",
            "@user [ol-3] HELP_REQUEST\nIssue Type: STUCK\n## Problem\np\n## Question\nq?",
        )
        .unwrap();
        s.append(
            "coder",
            "[ol-4] PROGRESS\nBead: ol-4\nStep: 1\nStatus: working",
        )
        .unwrap();
        s
    }

    #[test]
    fn channel_inbox_and_filters() {
        let s = store();
        let q = |agent: Option<&str>, kind, bead: Option<&str>| PeekQuery {
            agent: agent.map(str::to_string),
            limit: 10,
            kind,
            bead: bead.map(str::to_string),
            before: None,
        };
        assert_eq!(peek(&s, &q(None, None, None)).unwrap().len(), 3);
        let older = peek(
            &s,
            &PeekQuery {
                before: Some(3),
                ..q(None, None, None)
            },
        )
        .unwrap();
        let ids: Vec<u64> = older.iter().map(|i| i.entry.id).collect();
        assert_eq!(ids, [1, 2]);
        // Edges a careless or hostile client sends: nothing before the
        // first message; everything before a number past the end.
        for (before, want) in [(0, 0), (1, 0), (u64::MAX, 3)] {
            let got = peek(
                &s,
                &PeekQuery {
                    before: Some(before),
                    ..q(None, None, None)
                },
            )
            .unwrap();
            assert_eq!(got.len(), want, "before {before}");
        }
        let help = peek(&s, &q(None, Some(MessageType::HelpRequest), None)).unwrap();
        assert_eq!(help.len(), 1);
        assert_eq!(help[0].entry.id, 2);
        assert_eq!(
            peek(&s, &q(None, None, Some("ol-4"))).unwrap()[0].entry.id,
            3
        );
        let inbox = peek(&s, &q(Some("coder"), None, None)).unwrap();
        assert_eq!(inbox.len(), 1);
        assert_eq!(inbox[0].state, Some(DeliveryState::Queued));
        let user = peek(&s, &q(Some("user"), None, None)).unwrap();
        assert_eq!(user[0].priority, Some(Priority::High));
        let last = peek(
            &s,
            &PeekQuery {
                limit: 1,
                ..q(None, None, None)
            },
        )
        .unwrap();
        assert_eq!(last[0].entry.id, 3);
    }

    /// Issue 23 (6): `awtui peek --json` on an inbox prints each item in
    /// the shape `inbox_check` returns, the same values.
    #[test]
    fn an_inbox_peek_prints_the_inbox_check_item_shape() {
        let s = store();
        let q = PeekQuery {
            agent: Some("user".into()),
            limit: 10,
            ..PeekQuery::default()
        };
        let shown: Vec<serde_json::Value> = peek(&s, &q)
            .unwrap()
            .iter()
            .map(PeekItem::to_json)
            .collect();
        let mcp: Vec<serde_json::Value> = s
            .inbox("user")
            .unwrap()
            .iter()
            .map(|i| i.to_json())
            .collect();
        assert_eq!(shown.len(), 1);
        assert_eq!(shown, mcp);
        assert!(
            crate::context::has_inbox_item_shape(&shown[0]),
            "{}",
            shown[0]
        );
        // The channel (no inbox) keeps the message with its annotations.
        let channel = peek(
            &s,
            &PeekQuery {
                limit: 10,
                ..PeekQuery::default()
            },
        )
        .unwrap();
        assert!(channel[1].to_json()["entry"]["id"].is_u64());
    }
}
