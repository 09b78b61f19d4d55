//! What remote clients ask a running instance directly, answered to that
//! client alone (unlike engine commands, whose answers go to every front
//! end): recent messages or an inbox with the Agent Mail filters, and the
//! instance's status for `list`.

use crate::context::{ChannelEntry, ContextStore, Page};
use crate::protocols;
use crate::protocols::agent_mail::MailRecord;
pub use crate::vocab::instances::InstanceStatus;
use crate::vocab::pages::{Cut, MESSAGES_BUDGET, json_len};
pub use crate::vocab::peek::{PeekItem, PeekQuery};

/// Marks an Agent Mail record in `annotations` acknowledged when every
/// addressee of `entry` acked it in `store`
/// ([`crate::vocab::channel::acked_by_all`]): what `run --json`, `peek`
/// and snapshots report.
pub fn mark_acknowledged(
    store: &dyn ContextStore,
    entry: &ChannelEntry,
    annotations: &mut protocols::Annotations,
) {
    if let Some(mail) = annotations.mail.as_mut() {
        mail.acknowledged =
            crate::vocab::channel::acked_by_all(&entry.mentions, |m| store.delivery(entry.id, m));
    }
}

/// Marks the acknowledged Agent Mail records of a page's items.
fn mark_page(store: &dyn ContextStore, mut page: Bounded) -> Bounded {
    for item in &mut page.items {
        mark_acknowledged(store, &item.entry, &mut item.annotations);
    }
    page
}

/// A page of messages within the byte budget of a page.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bounded {
    /// Oldest first (channel) or in inbox order.
    pub items: Vec<PeekItem>,
    /// How many of the messages asked for were left out (the oldest, or
    /// the last in inbox order) to keep the page within
    /// [`MESSAGES_BUDGET`].
    pub left_out: usize,
}

/// Whether an Agent Mail record passes the query's filters (the same tests
/// as `agent_mail::by_type` and `agent_mail::by_bead`).
fn passes(mail: Option<&MailRecord>, q: &PeekQuery) -> bool {
    let Some(record) = mail else { return false };
    let one = std::slice::from_ref(record);
    q.kind
        .is_none_or(|k| !crate::protocols::agent_mail::by_type(one, k).is_empty())
        && q.bead
            .as_deref()
            .is_none_or(|b| !crate::protocols::agent_mail::by_bead(one, b).is_empty())
}

/// Whether the query filters by Agent Mail type or bead.
fn filtered(q: &PeekQuery) -> bool {
    q.kind.is_some() || q.bead.is_some()
}

/// Whether `entry` passes the query's filters (read on the whole text).
fn wanted(entry: &ChannelEntry, q: &PeekQuery) -> bool {
    !filtered(q) || passes(protocols::annotate(&entry.message).mail.as_ref(), q)
}

/// The channel's messages before `before` (every one when `None`), newest
/// first, each read from the store only when the page asks for it.
fn newest_first(
    store: &dyn ContextStore,
    before: Option<u64>,
) -> impl Iterator<Item = ChannelEntry> + '_ {
    let mut cursor = before.unwrap_or(u64::MAX);
    std::iter::from_fn(move || {
        let entry = store.page(Page::Before(cursor), 1).entries.pop()?;
        cursor = entry.id;
        Some(entry)
    })
}

/// Shows `candidates` (the front first) shortened, as many as fit
/// [`MESSAGES_BUDGET`]; the rest is counted as left out (`known`: how many
/// candidates there are, when known without reading them).
fn fill(candidates: impl Iterator<Item = ChannelEntry>, known: Option<usize>) -> Bounded {
    let mut page = Bounded::default();
    let mut used = 0usize;
    let mut candidates = candidates.map(PeekItem::shown);
    for item in candidates.by_ref() {
        used = used.saturating_add(json_len(&item));
        if used > MESSAGES_BUDGET {
            page.left_out = 1;
            break;
        }
        page.items.push(item);
    }
    if page.left_out > 0 {
        page.left_out = match known {
            Some(n) => n.saturating_sub(page.items.len()),
            None => 1 + candidates.count(),
        };
    }
    page
}

/// The newest `limit` channel messages before `before` (all when `None`)
/// that fit a page, oldest first: what a snapshot and `awtui peek` show.
pub fn newest(store: &dyn ContextStore, before: Option<u64>, limit: usize) -> Bounded {
    let known = store.count_before(before.unwrap_or(u64::MAX)).min(limit);
    let mut page = fill(newest_first(store, before).take(limit), Some(known));
    page.items.reverse();
    mark_page(store, page)
}

/// Message `id`, whole (never shortened).
fn whole(store: &dyn ContextStore, id: u64) -> Result<Bounded, String> {
    let entry = store
        .entry(id)
        .ok_or_else(|| format!("there is no message #{id} in the channel"))?;
    Ok(Bounded {
        items: vec![PeekItem {
            annotations: protocols::annotate(&entry.message),
            entry,
            priority: None,
            state: None,
            cut: Cut::default(),
            thread: None,
        }],
        left_out: 0,
    })
}

/// Answers a peek from the store, within the byte budget of a page.
pub fn peek(store: &dyn ContextStore, q: &PeekQuery) -> Result<Bounded, String> {
    unmarked(store, q).map(|page| mark_page(store, page))
}

/// [`peek`] before the acknowledged records are marked.
fn unmarked(store: &dyn ContextStore, q: &PeekQuery) -> Result<Bounded, String> {
    if let Some(id) = q.message {
        return whole(store, id);
    }
    match &q.agent {
        Some(agent) => {
            let inbox: Vec<_> = store
                .inbox(agent)
                .map_err(|e| e.to_string())?
                .into_iter()
                .filter(|i| wanted(&i.entry, q))
                .take(q.limit)
                .collect();
            let known = inbox.len();
            let marks: Vec<_> = inbox.iter().map(|i| (i.priority, i.state)).collect();
            let mut page = fill(inbox.into_iter().map(|i| i.entry), Some(known));
            for (item, (priority, state)) in page.items.iter_mut().zip(marks) {
                item.priority = Some(priority);
                item.state = Some(state);
            }
            Ok(page)
        }
        None if !filtered(q) => Ok(newest(store, q.before, q.limit)),
        None => {
            let mut page = fill(
                newest_first(store, q.before)
                    .filter(|e| wanted(e, q))
                    .take(q.limit),
                None,
            );
            page.items.reverse();
            Ok(page)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{DeliveryState, MemoryStore, Priority, StoreLayout};
    use crate::protocols::agent_mail::MessageType;

    /// The items of a peek (the budget is tested on its own).
    fn peek(s: &dyn ContextStore, q: &PeekQuery) -> Result<Vec<PeekItem>, String> {
        super::peek(s, q).map(|page| page.items)
    }

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
            message: None,
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

    /// Issue 34: a page of huge messages keeps the newest that fit the
    /// budget, each shortened and marked, counts what it left out, and
    /// still hands any one message over whole.
    #[test]
    fn a_page_of_huge_messages_is_bounded_and_each_stays_whole_on_request() {
        let mut s = store();
        let big = "é".repeat(64 * 1024);
        for _ in 0..40 {
            s.append("coder", &big).unwrap();
        }
        let q = PeekQuery {
            limit: 50,
            ..PeekQuery::default()
        };
        let page = super::peek(&s, &q).unwrap();
        let weight: usize = page.items.iter().map(json_len).sum();
        assert!(weight <= MESSAGES_BUDGET, "{weight} bytes");
        assert!(page.left_out > 0);
        assert_eq!(page.items.len() + page.left_out, 43);
        let newest = page.items.last().unwrap();
        assert_eq!(newest.entry.id, 43);
        assert!(newest.cut.truncated && newest.cut.bytes == Some(big.len()));
        assert!(newest.entry.message.len() <= crate::vocab::pages::MESSAGE_CAP);
        let older = super::peek(
            &s,
            &PeekQuery {
                before: Some(page.items[0].entry.id),
                ..q.clone()
            },
        )
        .unwrap();
        assert_eq!(
            older.items.last().unwrap().entry.id + 1,
            page.items[0].entry.id
        );
        let whole = super::peek(
            &s,
            &PeekQuery {
                message: Some(10),
                ..q
            },
        )
        .unwrap();
        assert_eq!(whole.items[0].entry.message, big);
        assert_eq!(whole.items[0].cut, Cut::default());
        let json = whole.items[0].to_json();
        assert!(json.get("truncated").is_none(), "{json}");
        assert!(
            super::peek(
                &s,
                &PeekQuery {
                    message: Some(99),
                    ..PeekQuery::default()
                }
            )
            .is_err()
        );
    }
}
