//! The channel's messages: taking them in (threads, streams, duplicates),
//! the listed order with its filter and search, and the lookups other
//! panes use.

use std::collections::HashMap;

use crate::action::Filter;
use crate::protocols::aop::{Block, BlockType, Segment};
use crate::sanitize::for_terminal;
use crate::vocab::Annotations;
use crate::vocab::ChannelEntry;
use crate::vocab::mentions::{self};

use super::*;

impl Channel {
    /// Replaces everything with a snapshot's messages.
    pub fn reset(&mut self, messages: Vec<(ChannelEntry, Annotations)>, total: usize) {
        *self = Channel {
            filter: std::mem::take(&mut self.filter),
            search: self.search.take(),
            ..Channel::default()
        };
        self.not_loaded = total.saturating_sub(messages.len());
        for (entry, annotations) in messages {
            self.ingest(entry, annotations);
        }
        self.rebuild();
    }

    /// The user acknowledged everything through `acked`: once that
    /// reaches the loaded messages, the older unread ones are read too.
    pub fn user_acked(&mut self, acked: u64) {
        let first = self.messages.first().map_or(u64::MAX, |m| m.entry.id);
        if acked.saturating_add(1) >= first {
            self.user_unread_not_loaded = 0;
        }
    }

    /// The Agent Mail messages about `bead` (any case), oldest first.
    pub fn about_bead(&self, bead: &str) -> &[usize] {
        self.beads
            .get(&bead.to_ascii_lowercase())
            .map_or(&[], Vec::as_slice)
    }

    /// The newest message id held.
    pub fn last_id(&self) -> u64 {
        self.messages.last().map_or(0, |m| m.entry.id)
    }

    /// The message with this id.
    pub fn by_id(&self, id: u64) -> Option<&Message> {
        self.by_id.get(&id).map(|i| &self.messages[*i])
    }

    /// Stores a message; true when it changes the list order (reply).
    pub(super) fn ingest(
        &mut self,
        entry: ChannelEntry,
        annotations: Annotations,
    ) -> Option<usize> {
        if entry.id <= self.last_id() && !self.messages.is_empty() {
            return None;
        }
        let idx = self.messages.len();
        let mut msg = Message::new(entry, annotations);
        // Streams: a message made only of STREAM chunks continues the
        // sender's open stream.
        if let Some(blocks) = msg.only_stream_blocks() {
            let last = blocks.iter().any(|b| b.is_last_chunk());
            let texts: Vec<String> = blocks.iter().map(|b| b.content.clone()).collect();
            let from = msg.entry.from.clone();
            match self.open_streams.get(&from).copied() {
                Some(head) => {
                    msg.folded = true;
                    let h = &mut self.messages[head];
                    h.stream_more.extend(texts);
                    h.cache = None;
                    if last {
                        h.stream_open = false;
                        self.open_streams.remove(&from);
                    }
                }
                None if !last => {
                    msg.stream_open = true;
                    self.open_streams.insert(from, idx);
                }
                None => {}
            }
        }
        for r in msg.entry.mentions.iter().filter(|r| **r != msg.entry.from) {
            self.mentions.entry(r.clone()).or_default().push(idx);
        }
        if let Some(bead) = msg
            .annotations
            .mail
            .as_ref()
            .and_then(|m| m.bead_id.as_ref())
        {
            self.beads
                .entry(bead.to_ascii_lowercase())
                .or_default()
                .push(idx);
        }
        self.by_id.insert(msg.entry.id, idx);
        self.messages.push(msg);
        Some(idx)
    }

    /// Adds a live message. Returns a notice when it landed out of view
    /// (a reply to an old thread).
    pub fn push(&mut self, entry: ChannelEntry, annotations: Annotations) -> Option<String> {
        let idx = self.ingest(entry, annotations)?;
        if self.messages[idx].folded {
            // A stream chunk: its head message grows instead.
            return None;
        }
        let root = self.root_of(idx);
        if root != idx && self.filter.is_empty() {
            self.rebuild();
            let pos = self.order.iter().position(|(i, _)| *i == idx)?;
            // Keep the view on the same messages although one was inserted.
            match &mut self.view {
                View::Top(p, _) | View::Bottom(p) if pos <= *p => *p += 1,
                _ => {}
            }
            let (top, _) = self.drawn.top;
            let in_view = pos >= top && pos <= self.drawn.bottom + 1;
            if !in_view && pos + 1 < self.order.len() {
                return Some(format!(
                    "reply from {} in the thread of #{} (above)",
                    for_terminal(&self.messages[idx].entry.from),
                    self.messages[root].entry.id
                ));
            }
            return None;
        }
        if self.messages[idx].matches(&self.filter) {
            self.order.push((idx, 0));
            if let Some(q) = &self.search
                && contains_ci(&self.messages[idx].clean, q)
            {
                self.matches.push(self.order.len() - 1);
            }
            if self.view != View::Follow {
                self.unseen += 1;
            }
        }
        None
    }

    /// Whether a stream is still growing (the spinner must tick).
    pub fn streaming(&self) -> bool {
        !self.open_streams.is_empty()
    }

    /// The root of `idx`'s thread (itself when it is not a reply).
    pub(super) fn root_of(&self, idx: usize) -> usize {
        let mut cur = idx;
        for _ in 0..64 {
            match self.messages[cur]
                .entry
                .reply_to
                .and_then(|id| self.by_id.get(&id))
            {
                Some(&parent) if parent < cur => cur = parent,
                _ => break,
            }
        }
        cur
    }

    /// Rebuilds the display order (threads, filter) and the search matches.
    pub fn rebuild(&mut self) {
        let selected_idx = self
            .selected
            .and_then(|p| self.order.get(p))
            .map(|(i, _)| *i);
        self.order.clear();
        if self.filter.is_empty() {
            let mut replies: HashMap<usize, Vec<usize>> = HashMap::new();
            let mut roots = Vec::new();
            for i in 0..self.messages.len() {
                if self.messages[i].folded {
                    continue;
                }
                let root = self.root_of(i);
                if root == i {
                    roots.push(i);
                } else {
                    replies.entry(root).or_default().push(i);
                }
            }
            for r in roots {
                self.order.push((r, 0));
                if let Some(rs) = replies.get(&r) {
                    self.order.extend(rs.iter().map(|i| (*i, 1)));
                }
            }
        } else {
            for (i, m) in self.messages.iter().enumerate() {
                if !m.folded && m.matches(&self.filter) {
                    self.order.push((i, 0));
                }
            }
        }
        self.selected = selected_idx.and_then(|idx| self.order.iter().position(|(i, _)| *i == idx));
        self.refresh_matches();
        if let View::Top(p, _) | View::Bottom(p) = self.view
            && p >= self.order.len()
        {
            self.view = View::Follow;
        }
    }

    pub(super) fn refresh_matches(&mut self) {
        self.matches = match &self.search {
            Some(q) => self
                .order
                .iter()
                .enumerate()
                .filter(|(_, (i, _))| contains_ci(&self.messages[*i].clean, q))
                .map(|(p, _)| p)
                .collect(),
            None => Vec::new(),
        };
    }

    /// Sets the filter.
    pub fn set_filter(&mut self, filter: Filter) {
        self.filter = filter;
        self.view = View::Follow;
        self.unseen = 0;
        self.rebuild();
    }

    /// Sets the search text and selects the newest match; returns how many.
    pub fn set_search(&mut self, query: Option<String>) -> usize {
        self.search = query.filter(|q| !q.is_empty());
        self.refresh_matches();
        if let Some(&last) = self.matches.last() {
            self.select(last);
        }
        self.matches.len()
    }

    /// Moves to the next older (`older`) or newer search match; returns
    /// (match number, total).
    pub fn next_match(&mut self, older: bool) -> Option<(usize, usize)> {
        if self.matches.is_empty() {
            return None;
        }
        let cur = self.selected.unwrap_or(self.order.len());
        let k = if older {
            self.matches
                .iter()
                .rposition(|p| *p < cur)
                .unwrap_or(self.matches.len() - 1)
        } else {
            self.matches.iter().position(|p| *p > cur).unwrap_or(0)
        };
        self.select(self.matches[k]);
        Some((k + 1, self.matches.len()))
    }

    /// The selected message.
    pub fn selected_message(&self) -> Option<&Message> {
        self.selected
            .and_then(|p| self.order.get(p))
            .map(|(i, _)| &self.messages[*i])
    }
}

impl Message {
    pub(super) fn new(entry: ChannelEntry, annotations: Annotations) -> Message {
        let priority = mentions::priority(&entry.message, &entry.mentions);
        let clean = for_terminal(&entry.message);
        Message {
            entry,
            annotations,
            priority,
            clean,
            expanded: false,
            stream_more: Vec::new(),
            stream_open: false,
            folded: false,
            cache: None,
        }
    }

    /// The STREAM blocks of this message, if it holds nothing else.
    pub(super) fn only_stream_blocks(&self) -> Option<Vec<&Block>> {
        let aop = self.annotations.aop.as_ref()?;
        let mut blocks = Vec::new();
        for s in &aop.segments {
            match s {
                Segment::Block(b) if b.kind == BlockType::Stream => blocks.push(b),
                s if s.is_blank_text() => {}
                _ => return None,
            }
        }
        (!blocks.is_empty()).then_some(blocks)
    }

    pub(super) fn has_context_block(&self) -> bool {
        self.annotations
            .aop
            .as_ref()
            .is_some_and(|a| a.blocks().any(|b| b.kind == BlockType::Context))
    }

    pub(super) fn matches(&self, filter: &Filter) -> bool {
        if let Some(from) = &filter.from
            && !self.entry.from.eq_ignore_ascii_case(from)
        {
            return false;
        }
        if let Some(kind) = &filter.kind {
            let mail = self
                .annotations
                .mail
                .as_ref()
                .and_then(|m| m.kind())
                .is_some_and(|k| k.keyword().eq_ignore_ascii_case(kind));
            let aop = self
                .annotations
                .aop
                .as_ref()
                .is_some_and(|a| a.blocks().any(|b| b.kind.name().eq_ignore_ascii_case(kind)));
            if !(mail || aop) {
                return false;
            }
        }
        if let Some(bead) = &filter.bead
            && !self
                .annotations
                .mail
                .as_ref()
                .and_then(|m| m.bead_id.as_deref())
                .is_some_and(|b| b.eq_ignore_ascii_case(bead))
        {
            return false;
        }
        if let Some(t) = &filter.text
            && !contains_ci(&self.clean, t)
        {
            return false;
        }
        true
    }
}

pub(super) fn contains_ci(haystack: &str, needle: &str) -> bool {
    haystack.to_lowercase().contains(&needle.to_lowercase())
}
