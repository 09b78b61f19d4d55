//! Drawing the channel: headers with delivery marks, bodies laid out per
//! width (AOP blocks framed, long bodies folded).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::protocols::aop::{Block, BlockType, Segment};
use crate::sanitize::for_terminal;
use crate::text::{self, line_width, mention_runs, truncate, wrap_plain, wrap_runs};
use crate::theme::Theme;
use crate::vocab::mentions::{self, Priority, SYSTEM, USER};
use crate::vocab::{ChannelEntry, DeliveryState};

use super::*;

impl Channel {
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

pub(super) fn fold_notice(hidden: usize, width: usize, theme: &Theme) -> Line<'static> {
    Line::styled(
        truncate(
            &format!("▸ {hidden} more lines · e unfolds · o opens it in the pager"),
            width,
        ),
        Style::new().fg(theme.accent),
    )
}

pub(super) fn indent_width(depth: u8) -> usize {
    if depth > 0 { 4 } else { 0 }
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

pub(super) fn header_line(
    m: &Message,
    ctx: &DrawContext,
    width: usize,
    matched: bool,
) -> Line<'static> {
    let theme = ctx.theme;
    let mut spans = vec![
        Span::styled(clock(&m.entry, ctx.utc_offset), theme.dimmed()),
        Span::raw(" "),
        Span::styled(
            truncate(&for_terminal(&m.entry.from), 20),
            theme.sender(&m.entry.from),
        ),
    ];
    if let Some(state) = ctx.threads.get(&m.entry.id) {
        spans.push(thread_badge(state, theme));
    }
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
        // has acked it (one addressed to nobody, like a SPAWN_REQUEST that
        // awtui answers itself, has nobody to wait for).
        if m.annotations.mail.as_ref().is_some_and(|r| r.ack_required)
            && !m.entry.mentions.is_empty()
        {
            let acked = crate::vocab::channel::acked_by_all(&m.entry.mentions, |r| {
                Some(
                    ctx.cursors
                        .get(r)
                        .copied()
                        .unwrap_or_default()
                        .state_of(m.entry.id),
                )
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

/// The state an agent's `done`, `fail` or `delete` gave the thread a
/// message starts, on that message's header (sanitized, cut short).
fn thread_badge(state: &crate::vocab::ThreadState, theme: &Theme) -> Span<'static> {
    use crate::vocab::ThreadState;
    let style = match state {
        ThreadState::Done { .. } => Style::new().fg(theme.ok),
        ThreadState::Failed { .. } => Style::new().fg(theme.warning).add_modifier(Modifier::BOLD),
        ThreadState::Deleted { .. } => theme.dimmed(),
    };
    Span::styled(
        format!(" [{}]", truncate(&for_terminal(&state.label()), 40)),
        style,
    )
}

/// The context window usage an Agent Mail message reports (PROGRESS or
/// CHECKPOINT), 0–100 %.
pub(super) fn mail_context_usage(r: &crate::protocols::agent_mail::MailRecord) -> Option<u8> {
    use crate::protocols::agent_mail::MailContent;
    match &r.content {
        MailContent::Progress { context_usage, .. } => *context_usage,
        MailContent::Checkpoint { context_usage, .. } => *context_usage,
        _ => None,
    }
}

/// The body lines of a message at `width`, cached unless a stream grows.
pub(super) fn body<'m>(
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

pub(super) fn layout_body(
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

pub(super) fn block_lines(
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
