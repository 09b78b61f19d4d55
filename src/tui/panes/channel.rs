//! The channel pane: every message, live. It follows new messages unless
//! the user scrolled back; replies (`reply_to`) are grouped under the root
//! of their thread; AOP blocks are framed per type; Agent Mail messages
//! carry their type as a badge; each mentioned recipient gets a delivery
//! mark (`·` queued, `✓` delivered, `✓✓` acked) from the engine's cursors.
//!
//! Decisions: a thread stays where its root is, so a reply to an old
//! message appears up in the history (the status line says so when the
//! reply is out of view); with a filter active the list is flat. STREAM
//! chunks that follow an open stream of the same agent are folded into the
//! message that opened it, which grows until a chunk says it is the last.
//!
//! Speed: only the messages in view are laid out; a message's body is laid
//! out once per width and cached (headers, which carry the live delivery
//! marks, are built when drawn), and the view is anchored to a message, so
//! a frame costs the same with 100 or 100,000 messages.

use std::collections::HashMap;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::context::mentions::{self, Priority, SYSTEM, USER};
use crate::context::{ChannelEntry, Cursor, DeliveryState};
use crate::protocols::Annotations;
use crate::protocols::aop::{Block, BlockType, Segment};
use crate::sanitize::for_terminal;
use crate::tui::action::{Filter, Motion};
use crate::tui::text::{self, line_width, mention_runs, truncate, wrap_plain, wrap_runs};
use crate::tui::theme::Theme;

/// Spinner frames, shared by every pane.
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// One message as the pane keeps it.
#[derive(Clone, Debug)]
pub struct Message {
    /// The entry as the engine sent it.
    pub entry: ChannelEntry,
    /// What the protocols read in it.
    pub annotations: Annotations,
    /// Its inbox priority.
    pub priority: Priority,
    /// The message text, sanitised once.
    pub clean: String,
    /// Whether its CONTEXT blocks are unfolded.
    pub expanded: bool,
    /// STREAM chunks from later messages folded into this one.
    pub stream_more: Vec<String>,
    /// Whether this message opened a stream that has not ended.
    pub stream_open: bool,
    /// Whether it was folded into an earlier stream (not listed).
    pub folded: bool,
    cache: Option<(usize, Vec<Line<'static>>)>,
}

impl Message {
    fn new(entry: ChannelEntry, annotations: Annotations) -> Message {
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
    fn only_stream_blocks(&self) -> Option<Vec<&Block>> {
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

    fn has_context_block(&self) -> bool {
        self.annotations
            .aop
            .as_ref()
            .is_some_and(|a| a.blocks().any(|b| b.kind == BlockType::Context))
    }

    fn matches(&self, filter: &Filter) -> bool {
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

fn contains_ci(haystack: &str, needle: &str) -> bool {
    haystack.to_lowercase().contains(&needle.to_lowercase())
}

/// Where the view is anchored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum View {
    /// The newest message is at the bottom and new ones scroll in.
    #[default]
    Follow,
    /// Item `pos` (minus `skip` lines) is at the top.
    Top(usize, usize),
    /// Item `pos` ends at the bottom.
    Bottom(usize),
}

/// What the last draw showed, for scrolling and mouse clicks.
#[derive(Clone, Debug, Default)]
pub struct Drawn {
    /// First item and lines of it skipped.
    pub top: (usize, usize),
    /// Last item (fully or partly) shown.
    pub bottom: usize,
    /// Whether the end of the list is in view.
    pub at_end: bool,
    /// The list position of each row drawn, top to bottom.
    pub rows: Vec<Option<usize>>,
    /// Height and width of the text area.
    pub height: usize,
    /// Width of the text area.
    pub width: usize,
}

/// The channel pane's state.
#[derive(Debug, Default)]
pub struct Channel {
    /// Every message received, in id order.
    pub messages: Vec<Message>,
    by_id: HashMap<u64, usize>,
    /// The listed messages (index, thread depth), in display order.
    pub order: Vec<(usize, u8)>,
    /// The active filter.
    pub filter: Filter,
    /// The active search text.
    pub search: Option<String>,
    /// Positions in `order` that match the search.
    pub matches: Vec<usize>,
    /// The selected position in `order`.
    pub selected: Option<usize>,
    /// The view anchor.
    pub view: View,
    /// Messages that arrived while scrolled back.
    pub unseen: usize,
    /// What the last draw showed.
    pub drawn: Drawn,
    /// Messages the engine holds that were not loaded (older history).
    pub not_loaded: usize,
    /// The user's unread mentions among the messages not loaded: counted
    /// (the engine says how many), not listed.
    pub user_unread_not_loaded: usize,
    /// Each recipient's messages (indices), for inboxes.
    pub mentions: HashMap<String, Vec<usize>>,
    /// Agent Mail messages (indices, oldest first) by bead id in lower
    /// case, for the task board's links.
    pub beads: HashMap<String, Vec<usize>>,
    open_streams: HashMap<String, usize>,
}

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
    fn ingest(&mut self, entry: ChannelEntry, annotations: Annotations) -> Option<usize> {
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
        for r in &msg.entry.mentions {
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
    fn root_of(&self, idx: usize) -> usize {
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

    fn refresh_matches(&mut self) {
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

    /// Folds or unfolds the selected message's CONTEXT blocks, or the
    /// whole of a message longer than a screen; false when it has neither.
    pub fn toggle_expand(&mut self) -> bool {
        let Some(&(i, _)) = self.selected.and_then(|p| self.order.get(p)) else {
            return false;
        };
        let height = self.drawn.height;
        let m = &mut self.messages[i];
        let long = m
            .cache
            .as_ref()
            .is_some_and(|(_, lines)| fold_at(lines.len(), false, height).is_some());
        if !m.has_context_block() && !long {
            return false;
        }
        m.expanded = !m.expanded;
        m.cache = None;
        true
    }

    /// Selects list position `pos` and brings it into view.
    pub fn select(&mut self, pos: usize) {
        if self.order.is_empty() {
            self.selected = None;
            return;
        }
        let pos = pos.min(self.order.len() - 1);
        self.selected = Some(pos);
        let (top, skip) = self.drawn.top;
        if pos < top || (pos == top && skip > 0) {
            self.view = View::Top(pos, 0);
        } else if pos >= self.drawn.bottom && !(pos == self.drawn.bottom && self.drawn.at_end) {
            self.view = if pos + 1 == self.order.len() {
                View::Follow
            } else {
                View::Bottom(pos)
            };
        }
        if self.view == View::Follow {
            self.unseen = 0;
        }
    }

    /// Selects the message with this id when it is listed (attention
    /// jumps); false when it is not.
    pub fn select_id(&mut self, id: u64) -> bool {
        let pos = self
            .order
            .iter()
            .position(|(i, _)| self.messages[*i].entry.id == id);
        match pos {
            Some(p) => {
                self.select(p);
                true
            }
            None => false,
        }
    }

    /// Jumps to the newest message and follows again.
    pub fn newest(&mut self) {
        self.view = View::Follow;
        self.unseen = 0;
        self.selected = None;
    }

    /// Applies a motion.
    pub fn motion(&mut self, motion: Motion, theme: &Theme, names: &[String]) {
        let n = self.order.len();
        if n == 0 {
            return;
        }
        let page = self.drawn.height.saturating_sub(1).max(1);
        let last_seen = if self.drawn.height == 0 || self.view == View::Follow {
            n - 1
        } else {
            self.drawn.bottom.min(n - 1)
        };
        let current = self.selected.unwrap_or(last_seen);
        match motion {
            Motion::Up(k) => self.select(if self.selected.is_none() {
                current
            } else {
                current.saturating_sub(k)
            }),
            Motion::Down(k) => self.select(if self.selected.is_none() {
                current
            } else {
                current.saturating_add(k)
            }),
            Motion::Top => self.select(0),
            Motion::Bottom => self.select(n - 1),
            Motion::PageUp | Motion::ScrollUp(_) => {
                let k = if motion == Motion::PageUp {
                    page
                } else {
                    scroll_n(motion)
                };
                self.scroll_up(k, theme, names);
            }
            Motion::PageDown | Motion::ScrollDown(_) => {
                let k = if motion == Motion::PageDown {
                    page
                } else {
                    scroll_n(motion)
                };
                self.scroll_down(k, theme, names);
            }
        }
    }

    /// Scrolls the view up `k` lines.
    pub fn scroll_up(&mut self, k: usize, theme: &Theme, names: &[String]) {
        let (mut pos, mut skip) = self.drawn.top;
        let width = self.drawn.width;
        let mut k = k;
        loop {
            if skip >= k {
                skip -= k;
                break;
            }
            k -= skip;
            if pos == 0 {
                skip = 0;
                break;
            }
            pos -= 1;
            skip = self.item_height(pos, width, theme, names);
        }
        self.view = View::Top(pos, skip);
    }

    /// Scrolls the view down `k` lines; follows again at the end.
    pub fn scroll_down(&mut self, k: usize, theme: &Theme, names: &[String]) {
        if self.drawn.at_end {
            self.newest_keep_selection();
            return;
        }
        let (mut pos, mut skip) = self.drawn.top;
        skip = skip.saturating_add(k);
        let width = self.drawn.width;
        while pos < self.order.len() {
            let h = self.item_height(pos, width, theme, names);
            if skip < h {
                break;
            }
            skip -= h;
            pos += 1;
        }
        if pos >= self.order.len() {
            self.newest_keep_selection();
        } else {
            self.view = View::Top(pos, skip);
        }
    }

    fn newest_keep_selection(&mut self) {
        self.view = View::Follow;
        self.unseen = 0;
    }

    fn item_height(&mut self, pos: usize, width: usize, theme: &Theme, names: &[String]) -> usize {
        let (idx, depth) = self.order[pos];
        let w = width.saturating_sub(indent_width(depth));
        let height = self.drawn.height;
        let m = &mut self.messages[idx];
        let expanded = m.expanded;
        let total = body(m, w, theme, names, 0).len();
        1 + fold_at(total, expanded, height).map_or(total, |k| k + 1)
    }

    /// Draws the list into `area` (no border).
    pub fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &DrawContext) {
        let height = area.height as usize;
        let width = area.width as usize;
        self.drawn.height = height;
        self.drawn.width = width;
        self.drawn.rows.clear();
        if height == 0 || width == 0 {
            return;
        }
        if self.order.is_empty() {
            let text = if self.filter.is_empty() {
                "No messages yet. Type below to post to the channel.".to_string()
            } else {
                format!("No message matches the filter '{}'.", self.filter)
            };
            buf.set_line(
                area.x,
                area.y,
                &Line::styled(truncate(&text, width), ctx.theme.dimmed()),
                area.width,
            );
            self.drawn.at_end = true;
            return;
        }
        // Which items, and which of their lines, fill the view.
        let n = self.order.len();
        let (top, skip) = match self.view {
            View::Top(pos, skip) => (pos.min(n - 1), skip),
            View::Follow | View::Bottom(_) => {
                let last = match self.view {
                    View::Bottom(p) => p.min(n - 1),
                    _ => n - 1,
                };
                let mut used = 0;
                let mut pos = last;
                let mut skip = 0;
                loop {
                    let h = self.item_height(pos, width, ctx.theme, ctx.names);
                    if used + h >= height {
                        skip = used + h - height;
                        break;
                    }
                    used += h;
                    if pos == 0 {
                        break;
                    }
                    pos -= 1;
                }
                (pos, skip)
            }
        };
        let mut y = 0usize;
        let mut pos = top;
        let mut first_skip = skip;
        let mut bottom = top;
        while y < height && pos < n {
            let (idx, depth) = self.order[pos];
            let indent = indent_width(depth);
            let w = width.saturating_sub(indent);
            let selected = self.selected == Some(pos);
            let matched = self.search.is_some() && self.matches.binary_search(&pos).is_ok();
            let header = header_line(&self.messages[idx], ctx, w, matched);
            let expanded = self.messages[idx].expanded;
            let lines = body(
                &mut self.messages[idx],
                w,
                ctx.theme,
                ctx.names,
                ctx.spinner,
            );
            // A message longer than a screen is folded after its first
            // lines, with a notice (`e` unfolds, `o` pages it).
            let fold = fold_at(lines.len(), expanded, height);
            let notice = fold.map(|k| fold_notice(lines.len() - k, w, ctx.theme));
            let lines = &lines[..fold.unwrap_or(lines.len())];
            let total = 1 + lines.len() + usize::from(notice.is_some());
            for l in first_skip..total {
                if y >= height {
                    break;
                }
                let row = area.y + y as u16;
                let hit;
                let line = match (l, &self.search) {
                    (0, _) => &header,
                    (l, _) if l > lines.len() => notice.as_ref().expect("a folded message"),
                    (_, Some(q)) if matched => {
                        hit = text::highlight_matches(&lines[l - 1], q, ctx.theme.search_hit());
                        &hit
                    }
                    _ => &lines[l - 1],
                };
                // The selection first: a search hit's own background
                // stays visible on the selected message.
                if selected {
                    buf.set_style(
                        Rect::new(area.x, row, area.width, 1),
                        Style::new().bg(ctx.theme.selection),
                    );
                }
                if depth > 0 {
                    buf.set_string(area.x, row, "  │ ", ctx.theme.dimmed());
                }
                buf.set_line(area.x + indent as u16, row, line, w as u16);
                self.drawn.rows.push(Some(pos));
                y += 1;
            }
            first_skip = 0;
            bottom = pos;
            pos += 1;
        }
        self.drawn.top = (top, skip);
        self.drawn.bottom = bottom;
        self.drawn.at_end = pos >= n;
        if self.drawn.at_end && self.view != View::Follow && y < height {
            // Everything below fits: nothing left to scroll back to.
            self.view = View::Follow;
        }
    }
}

/// Where a message body of `total` lines is folded in a pane `height`
/// rows high: `None` when it fits a screen with its header (or was
/// unfolded), else how many lines are shown before the notice.
pub fn fold_at(total: usize, expanded: bool, height: usize) -> Option<usize> {
    let shown = height.saturating_sub(2).max(3);
    (!expanded && height > 0 && total + 1 > height.max(shown + 2)).then_some(shown)
}

fn fold_notice(hidden: usize, width: usize, theme: &Theme) -> Line<'static> {
    Line::styled(
        truncate(
            &format!("▸ {hidden} more lines · e unfolds · o opens it in the pager"),
            width,
        ),
        Style::new().fg(theme.accent),
    )
}

fn scroll_n(m: Motion) -> usize {
    match m {
        Motion::ScrollUp(n) | Motion::ScrollDown(n) => n,
        _ => 1,
    }
}

fn indent_width(depth: u8) -> usize {
    if depth > 0 { 4 } else { 0 }
}

/// What drawing needs besides the pane's own state.
pub struct DrawContext<'a> {
    /// Colours.
    pub theme: &'a Theme,
    /// Names that count as mentions.
    pub names: &'a [String],
    /// Each recipient's cursor.
    pub cursors: &'a std::collections::BTreeMap<String, Cursor>,
    /// Spinner frame.
    pub spinner: usize,
    /// Offset from UTC for timestamps, in seconds.
    pub utc_offset: i32,
}

/// The delivery mark of a state.
pub fn mark(state: DeliveryState) -> &'static str {
    match state {
        DeliveryState::Queued => "·",
        DeliveryState::Delivered => "✓",
        DeliveryState::Acked => "✓✓",
    }
}

/// A timestamp as shown (local time by `utc_offset`).
pub fn clock(entry: &ChannelEntry, utc_offset: i32) -> String {
    let t = entry.timestamp + chrono::Duration::seconds(utc_offset as i64);
    t.format("%H:%M:%S").to_string()
}

fn header_line(m: &Message, ctx: &DrawContext, width: usize, matched: bool) -> Line<'static> {
    let theme = ctx.theme;
    let mut spans = vec![
        Span::styled(clock(&m.entry, ctx.utc_offset), theme.dimmed()),
        Span::raw(" "),
        Span::styled(
            truncate(&for_terminal(&m.entry.from), 20),
            theme.sender(&m.entry.from),
        ),
    ];
    if let Some(kind) = m.annotations.mail.as_ref().and_then(|r| r.kind()) {
        spans.push(Span::raw(" "));
        spans.push(Span::styled(
            format!(" {} ", kind.keyword()),
            Style::new()
                .fg(ratatui::style::Color::Black)
                .bg(theme.badge)
                .add_modifier(Modifier::BOLD),
        ));
        if let Some(bead) = m.annotations.mail.as_ref().and_then(|r| r.bead_id.as_ref()) {
            spans.push(Span::styled(
                format!(" {}", truncate(&for_terminal(bead), 16)),
                Style::new().fg(theme.badge),
            ));
        }
        if let Some(usage) = m.annotations.mail.as_ref().and_then(mail_context_usage) {
            spans.push(Span::styled(
                format!(" ctx {usage}%"),
                if usage >= 80 {
                    Style::new().fg(theme.warning).add_modifier(Modifier::BOLD)
                } else {
                    theme.dimmed()
                },
            ));
        }
        // A message the protocol wants acknowledged, until every addressee
        // has acked it.
        if m.annotations.mail.as_ref().is_some_and(|r| r.ack_required) {
            let acked = !m.entry.mentions.is_empty()
                && m.entry.mentions.iter().all(|r| {
                    ctx.cursors
                        .get(r)
                        .copied()
                        .unwrap_or_default()
                        .state_of(m.entry.id)
                        == DeliveryState::Acked
                });
            spans.push(if acked {
                Span::styled(" acked", Style::new().fg(theme.ok))
            } else {
                Span::styled(
                    " awaits ack",
                    Style::new().fg(theme.warning).add_modifier(Modifier::BOLD),
                )
            });
        }
    }
    if m.priority == Priority::High && !m.entry.mentions.is_empty() {
        spans.push(Span::styled(
            " !",
            Style::new().fg(theme.warning).add_modifier(Modifier::BOLD),
        ));
    }
    if !m.entry.mentions.is_empty() {
        spans.push(Span::styled(" →", theme.dimmed()));
        for r in &m.entry.mentions {
            let state = ctx
                .cursors
                .get(r)
                .copied()
                .unwrap_or_default()
                .state_of(m.entry.id);
            let style = match state {
                DeliveryState::Queued => theme.dimmed(),
                DeliveryState::Delivered => Style::new().fg(theme.accent),
                DeliveryState::Acked => Style::new().fg(theme.ok),
            };
            spans.push(Span::styled(
                format!(" @{r}"),
                Style::new().fg(theme.mention),
            ));
            spans.push(Span::styled(mark(state), style));
        }
    }
    if let Some(to) = m.entry.reply_to {
        spans.push(Span::styled(format!(" ↩#{to}"), theme.dimmed()));
    }
    let id = format!(" #{}", m.entry.id);
    let mut line = Line::from(spans);
    if matched {
        line.spans.insert(
            0,
            Span::styled(
                "▶",
                Style::new().fg(theme.warning).add_modifier(Modifier::BOLD),
            ),
        );
    }
    // The id is always shown: the rest of the header gives way (`…`).
    let id_w = text::width(&id);
    let mut line = text::truncate_line(line, width.saturating_sub(id_w));
    let used = line_width(&line);
    if used + id_w <= width {
        line.spans.push(Span::raw(" ".repeat(width - used - id_w)));
        line.spans.push(Span::styled(id, theme.dimmed()));
    }
    line
}

/// The context window usage an Agent Mail message reports (PROGRESS or
/// CHECKPOINT), 0–100 %.
fn mail_context_usage(r: &crate::protocols::agent_mail::MailRecord) -> Option<u8> {
    use crate::protocols::agent_mail::MailContent;
    match &r.content {
        MailContent::Progress { context_usage, .. } => *context_usage,
        MailContent::Checkpoint { context_usage, .. } => *context_usage,
        _ => None,
    }
}

/// The body lines of a message at `width`, cached unless a stream grows.
fn body<'m>(
    m: &'m mut Message,
    width: usize,
    theme: &Theme,
    names: &[String],
    spinner: usize,
) -> &'m [Line<'static>] {
    let fresh = matches!(&m.cache, Some((w, _)) if *w == width) && !m.stream_open;
    if !fresh {
        let lines = layout_body(m, width, theme, names, spinner);
        m.cache = Some((width, lines));
    }
    m.cache.as_ref().map(|(_, l)| l.as_slice()).unwrap_or(&[])
}

fn layout_body(
    m: &Message,
    width: usize,
    theme: &Theme,
    names: &[String],
    spinner: usize,
) -> Vec<Line<'static>> {
    let width = width.max(1);
    let system = m.entry.from == SYSTEM;
    let base = if system { theme.dimmed() } else { Style::new() };
    let mention = Style::new().fg(theme.mention).add_modifier(Modifier::BOLD);
    let is_name = |n: &str| n == USER || n == mentions::ALL || names.iter().any(|a| a == n);
    let text_lines = |text: &str, out: &mut Vec<Line<'static>>| {
        let clean = for_terminal(text);
        for l in clean.trim_end_matches('\n').split('\n') {
            out.extend(wrap_runs(&mention_runs(l, base, mention, &is_name), width));
        }
    };
    let mut out = Vec::new();
    match &m.annotations.aop {
        Some(aop) => {
            for seg in &aop.segments {
                match seg {
                    Segment::Text { text, .. } => {
                        if !seg.is_blank_text() {
                            text_lines(text.trim_matches('\n'), &mut out);
                        }
                    }
                    Segment::Block(b) => block_lines(b, m, width, theme, spinner, &mut out),
                }
            }
        }
        None => text_lines(&m.entry.message, &mut out),
    }
    out
}

fn block_lines(
    b: &Block,
    m: &Message,
    width: usize,
    theme: &Theme,
    spinner: usize,
    out: &mut Vec<Line<'static>>,
) {
    let attrs: Vec<String> = b
        .attributes
        .iter()
        .map(|a| format!("{}={}", for_terminal(&a.key), for_terminal(&a.value)))
        .collect();
    let (color, content_style) = match b.kind {
        BlockType::Final => (theme.aop_final, Style::new()),
        BlockType::Error => (theme.error, Style::new().fg(theme.error)),
        BlockType::Intermediate => (
            theme.aop_intermediate,
            Style::new()
                .fg(theme.aop_intermediate)
                .add_modifier(Modifier::ITALIC),
        ),
        BlockType::Stream => (theme.aop_stream, Style::new()),
        BlockType::Context => (theme.aop_context, Style::new().fg(theme.aop_context)),
        BlockType::Unknown(_) => (theme.warning, Style::new()),
    };
    let frame = Style::new().fg(color);
    let mut title = b.kind.name().to_string();
    if !attrs.is_empty() {
        title.push(' ');
        title.push_str(&attrs.join(" "));
    }
    if b.end_line.is_none() {
        title.push_str(" (unclosed)");
    }
    let mut content = for_terminal(&b.content);
    if b.kind == BlockType::Stream {
        for more in &m.stream_more {
            content.push_str(&for_terminal(more));
        }
        if m.stream_open {
            title.push(' ');
            title.push_str(SPINNER[spinner % SPINNER.len()]);
        }
    }
    if b.kind == BlockType::Context && !m.expanded {
        let n = content.lines().count();
        out.push(Line::from(vec![
            Span::styled("▸ ", frame),
            Span::styled(
                truncate(
                    &format!(
                        "{title} · {n} line{} (e to expand)",
                        if n == 1 { "" } else { "s" }
                    ),
                    width.saturating_sub(2),
                ),
                frame,
            ),
        ]));
        return;
    }
    if b.kind == BlockType::Context
        && let Some(json) = &b.json
        && let Ok(pretty) = serde_json::to_string_pretty(json)
    {
        content = for_terminal(&pretty);
    }
    if width < 6 {
        out.extend(wrap_plain(&content, width, content_style));
        return;
    }
    let inner = width - 4;
    let title = truncate(&title, inner.saturating_sub(1));
    let top_fill = width.saturating_sub(4 + text::width(&title));
    out.push(Line::from(vec![
        Span::styled("╭─", frame),
        Span::styled(title, frame.add_modifier(Modifier::BOLD)),
        Span::styled(
            format!("{}─╮", "─".repeat(top_fill.saturating_sub(0))),
            frame,
        ),
    ]));
    // FINAL and ERROR content is shown verbatim: only wrapped, never
    // reflowed or trimmed.
    let content = content.strip_suffix('\n').unwrap_or(&content);
    for l in content.split('\n') {
        for wrapped in wrap_runs(&[(l.to_string(), content_style)], inner) {
            let pad = inner.saturating_sub(line_width(&wrapped));
            let mut spans = vec![Span::styled("│ ", frame)];
            spans.extend(wrapped.spans);
            spans.push(Span::raw(" ".repeat(pad)));
            spans.push(Span::styled(" │", frame));
            out.push(Line::from(spans));
        }
    }
    out.push(Line::styled(format!("╰{}╯", "─".repeat(width - 2)), frame));
}

impl crate::tui::component::Component for Channel {
    type Context<'a> = DrawContext<'a>;

    fn act(
        &mut self,
        action: &crate::tui::action::Action,
        cx: &DrawContext<'_>,
    ) -> crate::tui::component::Outcome {
        use crate::tui::action::Action;
        use crate::tui::component::Outcome;
        match action {
            Action::Open if !self.toggle_expand() => return Outcome::then(Action::Pager),
            Action::Back => {
                if self.search.is_some() {
                    self.set_search(None);
                } else {
                    self.newest();
                }
            }
            Action::Move(m) => self.motion(*m, cx.theme, cx.names),
            _ => {}
        }
        Outcome::default()
    }

    fn mouse(
        &mut self,
        mouse: crate::tui::component::Mouse,
        cx: &DrawContext<'_>,
    ) -> crate::tui::component::Outcome {
        use crate::tui::component::Mouse;
        match mouse {
            Mouse::Click { row, .. } => {
                if let Some(Some(pos)) = self.drawn.rows.get(row) {
                    let pos = *pos;
                    self.select(pos);
                }
            }
            Mouse::Scroll { up: true } => self.scroll_up(3, cx.theme, cx.names),
            Mouse::Scroll { up: false } => self.scroll_down(3, cx.theme, cx.names),
        }
        Default::default()
    }

    fn commands(&self) -> (crate::tui::keymap::Section, &'static [&'static str]) {
        use crate::tui::action::Pane;
        (
            crate::tui::keymap::Section::Pane(Pane::Channel),
            &[
                "search",
                "prompt /filter ",
                "expand",
                "copy",
                "pager",
                "newest",
            ],
        )
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, cx: &DrawContext<'_>, _focused: bool) {
        Channel::draw(self, area, buf, cx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn entry(id: u64, from: &str, text: &str, reply_to: Option<u64>) -> ChannelEntry {
        ChannelEntry {
            id,
            timestamp: chrono::Utc
                .with_ymd_and_hms(2026, 1, 15, 10, 0, id as u32 % 60)
                .unwrap(),
            from: from.into(),
            message: text.into(),
            mentions: mentions::extract(text, &["coder".into(), "qa".into()], from),
            reply_to,
        }
    }

    fn push(c: &mut Channel, e: ChannelEntry) {
        let a = crate::protocols::annotate(&e.message);
        c.push(e, a);
    }

    #[test]
    fn threads_group_under_their_root() {
        let mut c = Channel::default();
        push(&mut c, entry(1, "user", "root @coder", None));
        push(&mut c, entry(2, "qa", "other", None));
        push(&mut c, entry(3, "coder", "answer", Some(1)));
        push(&mut c, entry(4, "qa", "deeper", Some(3)));
        let ids: Vec<(u64, u8)> = c
            .order
            .iter()
            .map(|(i, d)| (c.messages[*i].entry.id, *d))
            .collect();
        assert_eq!(ids, [(1, 0), (3, 1), (4, 1), (2, 0)]);
        c.set_filter(Filter {
            from: Some("qa".into()),
            ..Filter::default()
        });
        assert_eq!(c.order.len(), 2);
    }

    #[test]
    fn streams_grow_in_their_first_message() {
        let mut c = Channel::default();
        push(
            &mut c,
            entry(
                1,
                "w",
                "=== AOP-STREAM | chunk=1/2 ===\nhello \n=== END-AOP-STREAM ===\n",
                None,
            ),
        );
        assert!(c.streaming());
        push(
            &mut c,
            entry(
                2,
                "w",
                "=== AOP-STREAM | chunk=2/2 ===\nworld\n=== END-AOP-STREAM ===\n",
                None,
            ),
        );
        assert!(!c.streaming());
        assert_eq!(c.order.len(), 1);
        assert_eq!(c.messages[0].stream_more.len(), 1);
    }

    #[test]
    fn a_reply_out_of_view_is_announced_and_the_view_stays_put() {
        let mut c = Channel::default();
        for id in 1..=50 {
            push(&mut c, entry(id, "qa", "hello", None));
        }
        c.drawn.top = (40, 0);
        c.drawn.bottom = 49;
        c.view = View::Top(40, 0);
        let a = crate::protocols::annotate("late answer");
        let note = c.push(entry(51, "coder", "late answer", Some(2)), a);
        assert!(note.unwrap().contains("thread of #2"));
        assert_eq!(c.view, View::Top(41, 0), "still on the same message");
        let (i, depth) = c.order[2];
        assert_eq!((c.messages[i].entry.id, depth), (51, 1));
    }

    #[test]
    fn duplicate_and_old_ids_are_ignored() {
        let mut c = Channel::default();
        push(&mut c, entry(5, "qa", "a", None));
        push(&mut c, entry(5, "qa", "a", None));
        push(&mut c, entry(3, "qa", "a", None));
        assert_eq!(c.messages.len(), 1);
    }
}
