//! The in-memory channel index both stores share: entries in id order, a
//! per-recipient list of the entries that mention them, and cursors.
//!
//! Reads, inbox checks and delivery lookups cost O(log n + result), never a
//! scan of the history.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use super::mentions::{self, Priority};
use super::{
    ChannelEntry, ContextError, Cursor, DeliveryState, Handover, InboxItem, Page, PageOf, Result,
    Since,
};

/// Channel entries plus the derived inbox index and cursors.
#[derive(Debug, Default)]
pub struct ChannelIndex {
    agents: Vec<String>,
    entries: Vec<ChannelEntry>,
    /// Positions in `entries` of the messages mentioning each recipient.
    mentioned: BTreeMap<String, Vec<usize>>,
    cursors: BTreeMap<String, Cursor>,
    /// Messages hidden from every inbox.
    hidden: BTreeSet<u64>,
    /// Unacknowledged hand-overs per recipient, oldest first.
    handovers: BTreeMap<String, Vec<Handover>>,
}

/// How many unacknowledged hand-overs are kept per recipient. Dropping the
/// oldest is safe: its messages then count as answered only by a post made
/// after a later hand-over, never by an earlier one.
const MAX_HANDOVERS: usize = 64;

impl ChannelIndex {
    /// An empty index for these agents (`user` always has an inbox too).
    pub fn new(agents: Vec<String>) -> Self {
        ChannelIndex {
            agents,
            ..Default::default()
        }
    }

    /// The agents whose names count as mentions.
    pub fn agents(&self) -> &[String] {
        &self.agents
    }

    /// Builds the next entry (id, monotonic timestamp, mentions) without
    /// adding it, so a store can persist it first.
    pub fn prepare(&self, from: &str, message: &str, now: DateTime<Utc>) -> ChannelEntry {
        let now = truncate_to_millis(now);
        let timestamp = match self.entries.last() {
            Some(last) if last.timestamp > now => last.timestamp,
            _ => now,
        };
        ChannelEntry {
            id: self.last_id() + 1,
            timestamp,
            from: from.to_string(),
            message: message.to_string(),
            mentions: mentions::extract(message, &self.agents, from),
            reply_to: None,
        }
    }

    /// Adds an entry whose id is greater than every id so far; an entry that
    /// breaks the order is refused.
    pub fn push(&mut self, entry: ChannelEntry) -> Result<(), ChannelEntry> {
        if entry.id <= self.last_id() {
            return Err(entry);
        }
        let at = self.entries.len();
        for name in &entry.mentions {
            self.mentioned.entry(name.clone()).or_default().push(at);
        }
        self.entries.push(entry);
        Ok(())
    }

    /// Hides messages from every inbox; returns whether anything changed.
    pub fn hide(&mut self, ids: &[u64]) -> bool {
        let before = self.hidden.len();
        self.hidden.extend(ids.iter().copied());
        self.hidden.len() != before
    }

    /// The hidden message ids, for persisting.
    pub fn hidden(&self) -> &BTreeSet<u64> {
        &self.hidden
    }

    /// Sets a cursor as loaded from disk.
    pub fn set_cursor(&mut self, recipient: &str, cursor: Cursor) {
        self.cursors.insert(recipient.to_string(), cursor);
    }

    /// Sets a recipient's unacknowledged hand-overs as loaded from disk.
    pub fn set_handovers(&mut self, recipient: &str, mut handovers: Vec<Handover>) {
        let acked = self.cursors.get(recipient).map_or(0, |c| c.acked);
        handovers.retain(|h| h.through > acked);
        handovers.sort_by_key(|h| (h.through, h.at));
        if !handovers.is_empty() {
            self.handovers.insert(recipient.to_string(), handovers);
        }
    }

    /// Every recipient's unacknowledged hand-overs, for persisting.
    pub fn handovers(&self) -> &BTreeMap<String, Vec<Handover>> {
        &self.handovers
    }

    /// The last message `recipient` was handed and then answered: the
    /// newest hand-over older than the recipient's newest post. Only posts
    /// made after a hand-over count, so an answer to earlier messages (or
    /// the previous turn's final answer) never acknowledges messages that
    /// arrived while it was being written.
    pub fn answered_through(&self, recipient: &str) -> Result<Option<u64>> {
        let cursor = self.cursor(recipient)?;
        let Some(handovers) = self.handovers.get(recipient) else {
            return Ok(None);
        };
        let Some(first) = handovers.first() else {
            return Ok(None);
        };
        let start = self.start_after(Since::Id(first.at));
        let Some(post) = self.entries[start..]
            .iter()
            .rev()
            .find(|e| e.from == recipient)
            .map(|e| e.id)
        else {
            return Ok(None);
        };
        Ok(handovers
            .iter()
            .filter(|h| h.at < post)
            .map(|h| h.through)
            .max()
            .filter(|through| *through > cursor.acked))
    }

    /// All cursors, for persisting.
    pub fn cursors(&self) -> &BTreeMap<String, Cursor> {
        &self.cursors
    }

    /// Id of the newest entry, 0 when empty.
    pub fn last_id(&self) -> u64 {
        self.entries.last().map_or(0, |e| e.id)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every entry, oldest first.
    pub fn entries(&self) -> &[ChannelEntry] {
        &self.entries
    }

    /// The entry with `id`.
    pub fn entry(&self, id: u64) -> Option<&ChannelEntry> {
        self.entries
            .binary_search_by_key(&id, |e| e.id)
            .ok()
            .map(|i| &self.entries[i])
    }

    /// Index of the first entry after `since`.
    fn start_after(&self, since: Since) -> usize {
        match since {
            Since::Id(id) => self.entries.partition_point(|e| e.id <= id),
            Since::Time(t) => self.entries.partition_point(|e| e.timestamp <= t),
        }
    }

    /// One page of the channel, in O(log n + limit) whatever its place in
    /// the history.
    pub fn page(&self, page: Page, limit: usize) -> PageOf {
        let (start, end, more) = match page {
            Page::Newest(since) => {
                let floor = since.map_or(0, |s| self.start_after(s));
                let end = self.entries.len();
                let start = floor.max(end.saturating_sub(limit));
                (start, end, start > floor)
            }
            Page::After(after) => {
                let start = self.start_after(after);
                let end = self.entries.len().min(start.saturating_add(limit));
                (start, end, end < self.entries.len())
            }
            Page::Before(id) => {
                let end = self.entries.partition_point(|e| e.id < id);
                let start = end.saturating_sub(limit);
                (start, end, start > 0)
            }
        };
        PageOf {
            entries: self.entries[start..end].to_vec(),
            more,
        }
    }

    /// The last `limit` entries after `since`.
    pub fn read(&self, since: Option<Since>, limit: Option<usize>) -> Vec<ChannelEntry> {
        let start = since.map_or(0, |s| self.start_after(s));
        let start = match limit {
            Some(n) => start.max(self.entries.len().saturating_sub(n)),
            None => start,
        };
        self.entries[start..].to_vec()
    }

    fn check_recipient(&self, name: &str) -> Result<()> {
        if name == mentions::USER || self.agents.iter().any(|a| a == name) {
            Ok(())
        } else {
            Err(ContextError::UnknownAgent { name: name.into() })
        }
    }

    /// `recipient`'s cursor (zero when never used).
    pub fn cursor(&self, recipient: &str) -> Result<Cursor> {
        self.check_recipient(recipient)?;
        Ok(self.cursors.get(recipient).copied().unwrap_or_default())
    }

    /// Id of `recipient`'s oldest unread mention, in O(log n).
    pub fn oldest_unread(&self, recipient: &str) -> Result<Option<u64>> {
        let cursor = self.cursor(recipient)?;
        let Some(positions) = self.mentioned.get(recipient) else {
            return Ok(None);
        };
        let first_unread = positions.partition_point(|&p| self.entries[p].id <= cursor.acked);
        Ok(positions[first_unread..]
            .iter()
            .map(|&p| self.entries[p].id)
            .find(|id| !self.hidden.contains(id)))
    }

    /// Unread mentions of `recipient`, high priority first, then by id.
    pub fn inbox(&self, recipient: &str) -> Result<Vec<InboxItem>> {
        let cursor = self.cursor(recipient)?;
        let Some(positions) = self.mentioned.get(recipient) else {
            return Ok(Vec::new());
        };
        let first_unread = positions.partition_point(|&p| self.entries[p].id <= cursor.acked);
        let mut items: Vec<InboxItem> = positions[first_unread..]
            .iter()
            .filter(|&&p| !self.hidden.contains(&self.entries[p].id))
            .map(|&p| {
                let entry = &self.entries[p];
                InboxItem {
                    priority: mentions::priority(&entry.message, &entry.mentions),
                    state: state_for(entry.id, cursor),
                    entry: entry.clone(),
                }
            })
            .collect();
        items.sort_by_key(|i| (i.priority, i.entry.id));
        Ok(items)
    }

    /// The id `since` stands for when acknowledging: an id must exist; a time
    /// covers every entry at or before it.
    pub fn resolve(&self, since: Since) -> Result<u64> {
        match since {
            Since::Id(id) if id <= self.last_id() => Ok(id),
            Since::Id(id) => Err(ContextError::UnknownId {
                id,
                last: self.last_id(),
            }),
            Since::Time(_) => {
                let end = self.start_after(since);
                Ok(if end == 0 {
                    0
                } else {
                    self.entries[end - 1].id
                })
            }
        }
    }

    /// Moves `recipient`'s acked cursor forward to `until`; returns the
    /// cursor and whether it changed.
    pub fn ack(&mut self, recipient: &str, until: Since) -> Result<(Cursor, bool)> {
        let id = self.resolve(until)?;
        let old = self.cursor(recipient)?;
        let new = Cursor {
            acked: old.acked.max(id),
            delivered: old.delivered.max(id),
        };
        self.cursors.insert(recipient.to_string(), new);
        if let Some(handovers) = self.handovers.get_mut(recipient) {
            handovers.retain(|h| h.through > new.acked);
            if handovers.is_empty() {
                self.handovers.remove(recipient);
            }
        }
        Ok((new, new != old))
    }

    /// Records delivery of everything up to `through`; returns the cursor and
    /// whether it changed.
    pub fn mark_delivered(&mut self, recipient: &str, through: u64) -> Result<(Cursor, bool)> {
        let through = self.resolve(Since::Id(through))?;
        let old = self.cursor(recipient)?;
        let new = Cursor {
            delivered: old.delivered.max(through),
            ..old
        };
        self.cursors.insert(recipient.to_string(), new);
        if new.delivered > old.delivered {
            let at = self.last_id();
            let handovers = self.handovers.entry(recipient.to_string()).or_default();
            handovers.push(Handover {
                through: new.delivered,
                at,
            });
            if handovers.len() > MAX_HANDOVERS {
                handovers.remove(0);
            }
        }
        Ok((new, new != old))
    }

    /// Where message `id` stands for `recipient`.
    pub fn delivery(&self, id: u64, recipient: &str) -> Option<DeliveryState> {
        let entry = self.entry(id)?;
        if !entry.mentions.iter().any(|m| m == recipient) {
            return None;
        }
        let cursor = self.cursors.get(recipient).copied().unwrap_or_default();
        Some(state_for(id, cursor))
    }

    /// The priority of an entry in an inbox.
    pub fn priority(entry: &ChannelEntry) -> Priority {
        mentions::priority(&entry.message, &entry.mentions)
    }
}

fn state_for(id: u64, cursor: Cursor) -> DeliveryState {
    cursor.state_of(id)
}

fn truncate_to_millis(t: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(t.timestamp_millis()).unwrap_or(t)
}
