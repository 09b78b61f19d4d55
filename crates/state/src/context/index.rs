//! The in-memory channel index both stores share: what each entry is
//! (id, time, sender, priority, where its text lies) in id order, a
//! per-recipient list of the entries that mention them, and cursors.
//!
//! Reads, inbox checks and delivery lookups cost O(log n + result), never a
//! scan of the history. The index does not hold the messages themselves
//! for a file store: their text is read back from the channel file by
//! offset ([`Bodies`]), and only the newest [`RECENT`] entries (at most
//! [`RECENT_BYTES`] of text) are kept
//! whole, so memory grows by a few dozen bytes per message, not by its size.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::mentions::{self, Priority};
use super::{
    ChannelEntry, ContextError, Cursor, DeliveryState, Handover, InboxItem, Page, PageOf, Result,
    Since,
};

/// How many of the newest entries a file-backed index keeps whole (what
/// reads of the latest messages and prompts mostly ask for).
pub const RECENT: usize = 2048;
/// And at most this many bytes of their texts: one agent's huge messages
/// are read back from the file, not held (issue 34).
pub const RECENT_BYTES: usize = 16 * 1024 * 1024;

/// Where an entry's line lies in the channel file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loc {
    /// Byte offset of the line.
    pub offset: u64,
    /// Its length without the newline.
    pub len: u32,
}

/// What the index keeps of one entry: everything its lookups need, not
/// its text.
#[derive(Clone, Copy, Debug)]
struct Meta {
    id: u64,
    /// The timestamp, in milliseconds.
    millis: i64,
    /// The sender, as an index into `ChannelIndex::names`.
    from: u32,
    /// Where its line is (file-backed indexes).
    loc: Loc,
}

/// Where the entries' texts are.
#[derive(Debug)]
pub enum Bodies {
    /// All in memory (the memory store).
    Memory(Vec<ChannelEntry>),
    /// In the channel file, read by offset; the newest kept whole.
    File {
        /// The channel file (shared with the journal that appends to it).
        file: Arc<File>,
        /// Its path, for messages.
        path: PathBuf,
        /// The newest entries, whole: `(position, entry)`.
        recent: VecDeque<(usize, ChannelEntry)>,
        /// The bytes of their texts.
        recent_bytes: usize,
        /// Checks each line read back was written by awtui (the file is in
        /// the agents' workspace; see [`super::seal`]).
        seal: Option<Box<super::seal::Seal>>,
    },
}

impl Default for Bodies {
    fn default() -> Self {
        Bodies::Memory(Vec::new())
    }
}

/// Channel entries plus the derived inbox index and cursors.
#[derive(Debug, Default)]
pub struct ChannelIndex {
    agents: Vec<String>,
    meta: Vec<Meta>,
    bodies: Bodies,
    /// Sender names, interned.
    names: Vec<String>,
    /// Each sender name's index in `names`.
    name_ids: std::collections::HashMap<String, u32>,
    /// Positions in `meta` of the messages mentioning each recipient.
    mentioned: BTreeMap<String, Vec<u32>>,
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
    /// An empty index for these agents (`user` always has an inbox too),
    /// entries kept in memory.
    pub fn new(agents: Vec<String>) -> Self {
        ChannelIndex {
            agents,
            ..Default::default()
        }
    }

    /// An empty index whose entries' texts stay in `file` (at `path`),
    /// pushed with their [`Loc`]; a line read back must pass `seal`.
    pub fn over_file(
        agents: Vec<String>,
        file: Arc<File>,
        path: PathBuf,
        seal: Option<super::seal::Seal>,
    ) -> Self {
        ChannelIndex {
            agents,
            bodies: Bodies::File {
                file,
                path,
                recent: VecDeque::new(),
                recent_bytes: 0,
                seal: seal.map(Box::new),
            },
            ..Default::default()
        }
    }

    fn intern(&mut self, name: &str) -> u32 {
        if let Some(id) = self.name_ids.get(name) {
            return *id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.to_string());
        self.name_ids.insert(name.to_string(), id);
        id
    }

    fn name_id(&self, name: &str) -> Option<u32> {
        self.name_ids.get(name).copied()
    }

    /// The entry at position `pos`, whole: from memory, or read back from
    /// the channel file (a line that cannot be read any more becomes an
    /// entry saying so, naming the file).
    fn load(&self, pos: usize) -> ChannelEntry {
        let meta = self.meta[pos];
        match &self.bodies {
            Bodies::Memory(all) => all[pos].clone(),
            Bodies::File {
                file,
                path,
                recent,
                seal,
                ..
            } => {
                if let Some(first) = recent.front()
                    && pos >= first.0
                {
                    return recent[pos - first.0].1.clone();
                }
                let mut line = vec![0u8; meta.loc.len as usize];
                let read = file
                    .read_exact_at(&mut line, meta.loc.offset)
                    .map_err(|e| e.to_string())
                    .and_then(|()| match seal {
                        Some(seal) => seal
                            .check(meta.loc.offset, &line)
                            .map_err(|e| format!("it was changed on disk: {e}")),
                        None => Ok(()),
                    })
                    .and_then(|()| {
                        serde_json::from_slice::<ChannelEntry>(&line).map_err(|e| e.to_string())
                    });
                match read {
                    Ok(entry) if entry.id == meta.id => entry,
                    Ok(other) => self.unreadable(meta, path, &format!("found #{}", other.id)),
                    Err(e) => self.unreadable(meta, path, &e),
                }
            }
        }
    }

    fn unreadable(&self, meta: Meta, path: &std::path::Path, why: &str) -> ChannelEntry {
        tracing::warn!(
            "cannot read message #{} from {}: {why}",
            meta.id,
            path.display()
        );
        ChannelEntry {
            id: meta.id,
            timestamp: DateTime::from_timestamp_millis(meta.millis).unwrap_or_default(),
            from: self.names[meta.from as usize].clone(),
            message: format!(
                "(message #{} cannot be read from {}: {why})",
                meta.id,
                path.display()
            ),
            mentions: Vec::new(),
            reply_to: None,
        }
    }

    fn load_range(&self, range: std::ops::Range<usize>) -> Vec<ChannelEntry> {
        range.map(|p| self.load(p)).collect()
    }

    /// How many entries are held whole in memory (all of them for a memory
    /// index, at most [`RECENT`] for a file-backed one).
    pub fn resident(&self) -> usize {
        match &self.bodies {
            Bodies::Memory(all) => all.len(),
            Bodies::File { recent, .. } => recent.len(),
        }
    }

    /// The newest entry.
    pub fn last(&self) -> Option<ChannelEntry> {
        (!self.meta.is_empty()).then(|| self.load(self.meta.len() - 1))
    }

    /// Calls `f` with every entry, oldest first (reading each back).
    pub fn for_each(&self, mut f: impl FnMut(&ChannelEntry)) {
        for pos in 0..self.meta.len() {
            f(&self.load(pos));
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
        let timestamp = match self.meta.last() {
            Some(last) if last.millis > now.timestamp_millis() => {
                DateTime::from_timestamp_millis(last.millis).unwrap_or(now)
            }
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

    /// Adds an entry whose id is greater than every id so far, its line
    /// at `loc` in the channel file (file-backed indexes); an entry that
    /// breaks the order is refused.
    pub fn push(&mut self, entry: ChannelEntry, loc: Option<Loc>) -> Result<(), ChannelEntry> {
        if entry.id <= self.last_id() {
            return Err(entry);
        }
        let at = self.meta.len();
        // The sender is never its own recipient (channels written before
        // `mentions::extract` dropped the sender may still list it).
        for name in entry.mentions.iter().filter(|n| **n != entry.from) {
            self.mentioned
                .entry(name.clone())
                .or_default()
                .push(at as u32);
        }
        let from = self.intern(&entry.from);
        self.meta.push(Meta {
            id: entry.id,
            millis: entry.timestamp.timestamp_millis(),
            from,
            loc: loc.unwrap_or(Loc { offset: 0, len: 0 }),
        });
        match &mut self.bodies {
            Bodies::Memory(all) => all.push(entry),
            Bodies::File {
                recent,
                recent_bytes,
                ..
            } => {
                *recent_bytes += entry.message.len();
                recent.push_back((at, entry));
                while recent.len() > RECENT || *recent_bytes > RECENT_BYTES {
                    let Some((_, old)) = recent.pop_front() else {
                        break;
                    };
                    *recent_bytes -= old.message.len();
                }
            }
        }
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
        let Some(sender) = self.name_id(recipient) else {
            return Ok(None);
        };
        let Some(post) = self.meta[start..]
            .iter()
            .rev()
            .find(|m| m.from == sender)
            .map(|m| m.id)
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
        self.meta.last().map_or(0, |e| e.id)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.meta.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.meta.is_empty()
    }

    fn position(&self, id: u64) -> Option<usize> {
        self.meta.binary_search_by_key(&id, |e| e.id).ok()
    }

    /// Whether an entry with `id` exists.
    pub fn contains(&self, id: u64) -> bool {
        self.position(id).is_some()
    }

    /// The entry with `id`.
    pub fn entry(&self, id: u64) -> Option<ChannelEntry> {
        self.position(id).map(|p| self.load(p))
    }

    /// How many entries have an id below `id`, in O(log n).
    pub fn count_before(&self, id: u64) -> usize {
        self.meta.partition_point(|e| e.id < id)
    }

    /// Index of the first entry after `since`.
    fn start_after(&self, since: Since) -> usize {
        match since {
            Since::Id(id) => self.meta.partition_point(|e| e.id <= id),
            Since::Time(t) => {
                let t = t.timestamp_millis();
                self.meta.partition_point(|e| e.millis <= t)
            }
        }
    }

    /// One page of the channel, in O(log n + limit) whatever its place in
    /// the history.
    pub fn page(&self, page: Page, limit: usize) -> PageOf {
        let (start, end, more) = match page {
            Page::Newest(since) => {
                let floor = since.map_or(0, |s| self.start_after(s));
                let end = self.meta.len();
                let start = floor.max(end.saturating_sub(limit));
                (start, end, start > floor)
            }
            Page::After(after) => {
                let start = self.start_after(after);
                let end = self.meta.len().min(start.saturating_add(limit));
                (start, end, end < self.meta.len())
            }
            Page::Before(id) => {
                let end = self.meta.partition_point(|e| e.id < id);
                let start = end.saturating_sub(limit);
                (start, end, start > 0)
            }
        };
        PageOf {
            entries: self.load_range(start..end),
            more,
        }
    }

    /// The last `limit` entries after `since`.
    pub fn read(&self, since: Option<Since>, limit: Option<usize>) -> Vec<ChannelEntry> {
        let start = since.map_or(0, |s| self.start_after(s));
        let start = match limit {
            Some(n) => start.max(self.meta.len().saturating_sub(n)),
            None => start,
        };
        self.load_range(start..self.meta.len())
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
        let first_unread = positions.partition_point(|&p| self.meta[p as usize].id <= cursor.acked);
        Ok(positions[first_unread..]
            .iter()
            .map(|&p| self.meta[p as usize].id)
            .find(|id| !self.hidden.contains(id)))
    }

    /// `recipient`'s unread mentions, read back, in inbox order (high
    /// priority first, then by id). Priority depends on the text, so only
    /// unread messages are read, never the history.
    fn unread(&self, recipient: &str) -> Result<Vec<(Priority, ChannelEntry)>> {
        let cursor = self.cursor(recipient)?;
        let Some(positions) = self.mentioned.get(recipient) else {
            return Ok(Vec::new());
        };
        let first_unread = positions.partition_point(|&p| self.meta[p as usize].id <= cursor.acked);
        let mut unread: Vec<(Priority, ChannelEntry)> = positions[first_unread..]
            .iter()
            .map(|&p| p as usize)
            .filter(|&p| !self.hidden.contains(&self.meta[p].id))
            .map(|p| {
                let entry = self.load(p);
                (mentions::priority(&entry.message, &entry.mentions), entry)
            })
            .collect();
        unread.sort_by_key(|(priority, e)| (*priority, e.id));
        Ok(unread)
    }

    /// How many unread mentions `recipient` has, read from the index alone
    /// (a snapshot's count; the messages may be huge).
    pub fn unread_count(&self, recipient: &str) -> Result<usize> {
        let cursor = self.cursor(recipient)?;
        let Some(positions) = self.mentioned.get(recipient) else {
            return Ok(0);
        };
        let first_unread = positions.partition_point(|&p| self.meta[p as usize].id <= cursor.acked);
        Ok(positions[first_unread..]
            .iter()
            .filter(|&&p| !self.hidden.contains(&self.meta[p as usize].id))
            .count())
    }

    /// Ids of `recipient`'s unread mentions in inbox order.
    pub fn inbox_ids(&self, recipient: &str) -> Result<Vec<u64>> {
        Ok(self
            .unread(recipient)?
            .into_iter()
            .map(|(_, e)| e.id)
            .collect())
    }

    /// Unread mentions of `recipient`, high priority first, then by id.
    pub fn inbox(&self, recipient: &str) -> Result<Vec<InboxItem>> {
        let cursor = self.cursor(recipient)?;
        Ok(self
            .unread(recipient)?
            .into_iter()
            .map(|(priority, entry)| InboxItem {
                priority,
                state: state_for(entry.id, cursor),
                entry,
            })
            .collect())
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
                Ok(if end == 0 { 0 } else { self.meta[end - 1].id })
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
        let pos = self.position(id)? as u32;
        if self.mentioned.get(recipient)?.binary_search(&pos).is_err() {
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
