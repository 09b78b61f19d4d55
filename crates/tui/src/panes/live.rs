//! One agent's live view, over the whole screen: its turn as it happens
//! (the streamed text, every tool call with its status, kind, title, files
//! and diff previews, the plan and the usage) and a line to type to it.
//! Enter posts the line to the channel addressed to the agent (`@name
//! text`, as the command bar does: it wakes the agent and stays in the
//! channel's record); `interrupt` (Esc) cancels the running turn, or
//! closes the view when none runs. Its keys are `[keys.live]`; every
//! other key types.
//!
//! Everything drawn from the agent is its text: each piece goes through
//! [`for_terminal`] (via [`one_line`] for single rows) here, whatever the
//! core did before, and what one turn can make the view draw is bounded
//! (the core keeps [`crate::vocab::live::CALLS_KEPT`] calls and
//! [`crate::vocab::live::TEXT_KEPT`] bytes of text; the view shows a few
//! files and preview lines of each call).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};

use super::agents::{AgentRow, call_summary, one_line, plan_progress, usage_text};
use super::command_bar::CommandBar;
use super::scroll::Window;
use crate::action::Motion;
use crate::keymap::{Keymap, Section};
use crate::sanitize::for_terminal;
use crate::text::{truncate, truncate_line, wrap_plain};
use crate::theme::Theme;
use crate::vocab::activity::{FileDiff, ToolCallView};

/// The files of one call the view lists.
const FILES_SHOWN: usize = 5;
/// The diffs of one call the view previews.
const DIFFS_SHOWN: usize = 3;
/// The preview lines of one diff the view shows.
const PREVIEW_LINES: usize = 8;

/// The live view's state: whose it is, the line being typed, the scroll.
#[derive(Clone, Debug)]
pub struct LiveView {
    /// The agent shown.
    pub agent: String,
    /// The line typed to it.
    pub input: CommandBar,
    /// The first body row shown; `None` follows the end.
    pub scroll: Option<usize>,
    /// Body rows and rows shown, as last drawn.
    drawn: Window,
}

impl LiveView {
    /// The view of `agent`, following the end.
    pub fn new(agent: String) -> LiveView {
        LiveView {
            agent,
            input: CommandBar::default(),
            scroll: None,
            drawn: Window::default(),
        }
    }

    /// Scrolls the body; reaching the end follows it again.
    pub fn scroll_by(&mut self, motion: Motion) {
        let w = self.drawn;
        let last = w.len.saturating_sub(w.height);
        let from = self.scroll.unwrap_or(last);
        let to = w.scroll(from, motion);
        self.scroll = (to < last).then_some(to);
    }

    /// The footer: the view's keys as `[keys.live]` binds them.
    fn footer(keymap: &Keymap) -> String {
        let mut parts = vec!["enter send".to_string()];
        for (command, what) in [
            ("interrupt", "cancel the turn / close"),
            ("back", "close"),
            ("page-up", "scroll up"),
            ("page-down", "scroll down"),
        ] {
            if let Some(k) = keymap.key_in(Section::Live, command) {
                parts.push(format!("{k} {what}"));
            }
        }
        parts.join(" · ")
    }

    /// Draws the view of `row` over `area`; returns where the text cursor
    /// goes.
    pub fn draw(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        row: Option<&AgentRow>,
        note: Option<(String, Style)>,
        theme: &Theme,
        keymap: &Keymap,
    ) -> Option<(u16, u16)> {
        let w = area.width.saturating_sub(2);
        let h = area.height.saturating_sub(2);
        if w < 20 || h < 8 {
            return None;
        }
        let rect = Rect::new(area.x + 1, area.y + 1, w, h);
        Clear.render(rect, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(Style::new().fg(theme.accent))
            .title(truncate(
                &title(&self.agent, row),
                w.saturating_sub(2) as usize,
            ));
        let inner = block.inner(rect);
        block.render(rect, buf);
        let width = inner.width as usize;
        let bottom = inner.y + inner.height;
        // The status on top; the input and the keys at the bottom.
        let status = match row {
            Some(r) => Line::styled(
                truncate(&r.doing(), width),
                Style::new().add_modifier(Modifier::BOLD),
            ),
            None => Line::styled(
                truncate("this agent is not in the workflow any more", width),
                Style::new().fg(theme.error),
            ),
        };
        buf.set_line(inner.x, inner.y, &status, inner.width);
        let body_top = inner.y + 1;
        let body_h = bottom.saturating_sub(body_top + 2) as usize;
        let lines = match row {
            Some(r) => body(r, width, theme),
            None => Vec::new(),
        };
        self.drawn = Window {
            len: lines.len(),
            height: body_h,
        };
        let first = match self.scroll {
            Some(s) => self.drawn.clamp(s),
            None => lines.len().saturating_sub(body_h),
        };
        for (k, l) in lines.into_iter().skip(first).take(body_h).enumerate() {
            buf.set_line(
                inner.x,
                body_top + k as u16,
                &truncate_line(l, width),
                inner.width,
            );
        }
        // The status line (what a key did) shows where the keys are.
        let (footer, style) = note.unwrap_or_else(|| (Self::footer(keymap), theme.dimmed()));
        buf.set_line(
            inner.x,
            bottom - 1,
            &Line::styled(truncate(&footer, width), style),
            inner.width,
        );
        let input = Rect::new(inner.x, bottom - 2, inner.width, 1);
        self.input.draw(input, buf, theme, true)
    }
}

/// ` live · coder · acp · thinking ` (the title of the view).
fn title(agent: &str, row: Option<&AgentRow>) -> String {
    let mut t = format!(" live · {}", one_line(agent));
    if let Some(r) = row {
        if !r.protocol.is_empty() {
            t.push_str(&format!(" · {}", one_line(&r.protocol)));
        }
        t.push_str(&format!(" · {}", one_line(&r.status.to_string())));
    }
    t.push(' ');
    t
}

/// The body: the plan, the streamed text, then the tool calls (newest
/// last), every agent text made safe and each call's files and diffs cut
/// short.
pub fn body(row: &AgentRow, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let live = &row.live;
    let head = Style::new().fg(theme.accent).add_modifier(Modifier::BOLD);
    let mut out = Vec::new();
    if let Some(progress) = plan_progress(&live.plan) {
        out.push(Line::styled(progress, head));
        for e in &live.plan {
            let (mark, style) = match e.status.as_str() {
                "completed" => ("✓", Style::new().fg(theme.ok)),
                "in_progress" => ("▸", Style::new().fg(theme.accent)),
                _ => ("·", theme.dimmed()),
            };
            out.push(Line::from(vec![
                Span::styled(format!("  {mark} "), style),
                Span::raw(one_line(&e.content)),
            ]));
        }
    }
    if !live.text.is_empty() {
        out.push(Line::styled("text", head));
        out.extend(wrap_plain(
            &for_terminal(&live.text),
            width.saturating_sub(2).max(1),
            Style::new(),
        ));
    }
    if !live.calls.is_empty() {
        let running = live.running().count();
        out.push(Line::styled(
            format!("tool calls: {} ({running} running)", live.calls.len()),
            head,
        ));
        for call in &live.calls {
            out.extend(call_lines(call, theme));
        }
    }
    if let Some(u) = usage_text(&live.usage) {
        out.push(Line::styled(format!("usage: {u}"), theme.dimmed()));
    }
    if out.is_empty() {
        out.push(Line::styled(
            "nothing yet: the agent's turn shows here as it happens",
            theme.dimmed(),
        ));
    }
    out
}

/// One call: its status mark and summary, its files, its diffs' previews
/// (`+` lines green, `-` lines red).
fn call_lines(call: &ToolCallView, theme: &Theme) -> Vec<Line<'static>> {
    let (mark, style) = match call.status.as_str() {
        "completed" => ("✓", Style::new().fg(theme.ok)),
        "failed" => ("✗", Style::new().fg(theme.error)),
        "in_progress" => ("▶", Style::new().fg(theme.warning)),
        _ => ("○", theme.dimmed()),
    };
    let mut out = vec![Line::from(vec![
        Span::styled(format!("  {mark} "), style),
        Span::raw(call_summary(call)),
    ])];
    if call.locations.len() > 1 {
        let mut files: Vec<String> = call
            .locations
            .iter()
            .take(FILES_SHOWN)
            .map(|l| one_line(l))
            .collect();
        if call.locations.len() > FILES_SHOWN {
            files.push(format!("+{} more", call.locations.len() - FILES_SHOWN));
        }
        out.push(Line::styled(
            format!("      files: {}", files.join(", ")),
            theme.dimmed(),
        ));
    }
    for d in call.diffs.iter().take(DIFFS_SHOWN) {
        out.extend(diff_lines(d, theme));
    }
    if call.diffs.len() > DIFFS_SHOWN {
        out.push(Line::styled(
            format!(
                "      … {} more files changed",
                call.diffs.len() - DIFFS_SHOWN
            ),
            theme.dimmed(),
        ));
    }
    out
}

/// One file's change: `path +2 -1` and its first preview lines.
fn diff_lines(d: &FileDiff, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = vec![Line::from(vec![
        Span::raw(format!("      {} ", one_line(&d.path))),
        Span::styled(format!("+{}", d.added), Style::new().fg(theme.ok)),
        Span::raw(" "),
        Span::styled(format!("-{}", d.removed), Style::new().fg(theme.error)),
    ])];
    let preview: Vec<&str> = d.preview.lines().collect();
    for l in preview.iter().take(PREVIEW_LINES) {
        let l = one_line(l);
        let style = if l.starts_with('+') {
            Style::new().fg(theme.ok)
        } else if l.starts_with('-') {
            Style::new().fg(theme.error)
        } else {
            theme.dimmed()
        };
        out.push(Line::styled(format!("        {l}"), style));
    }
    if preview.len() > PREVIEW_LINES {
        out.push(Line::styled(
            format!("        … {} more lines", preview.len() - PREVIEW_LINES),
            theme.dimmed(),
        ));
    }
    out
}
