//! Tool approvals in the control room: the card of the request waiting
//! (agent, tool, the whole command or the diff of the file change, with
//! what a terminal would hide made visible, the agent's last message, the
//! keys; it scrolls when it does not fit) and the rules overlay (each asking agent's
//! workflow rules and the "always" decisions, with how to revoke them).
//! Drawing only; the state is [`crate::vocab::ApprovalsSnapshot`].

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};

use crate::keymap::{Keymap, Section};
use crate::panes::scroll::Window;
use crate::sanitize::for_terminal;
use crate::text::{truncate, wrap_runs};
use crate::theme::Theme;
use crate::vocab::approval_view::{LineKind, describe, visible_lines};
use crate::vocab::{ApprovalsSnapshot, Request, Verdict};

/// The card's commands in the order its last line says them, with what
/// each does (a command bound to no key in `[keys.card]` is left out).
pub const CARD_KEYS: [(&str, &str); 5] = [
    ("approve", "allow once"),
    ("prompt /deny ", "deny (reason)"),
    ("approve always", "always allow"),
    ("deny always", "always deny"),
    ("later", "later"),
];

/// The card's last line: its keys as `[keys.card]` binds them
/// (`y allow once · n deny (reason) · …`).
pub fn card_keys(keymap: &Keymap) -> String {
    CARD_KEYS
        .iter()
        .filter_map(|(command, what)| {
            keymap
                .key_in(Section::Card, command)
                .map(|k| format!("{k} {what}"))
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The card's scrolling lines, wrapped to `width`: who asks, the call
/// (the whole command, what a terminal would hide made visible, before
/// the agent's description of it), the agent's last message. Nothing is
/// cut: what does not fit scrolls.
fn card_body(request: &Request, theme: &Theme, width: usize) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(vec![
        Span::styled(
            format!("@{}", for_terminal(&request.agent)),
            Style::new().fg(theme.accent).add_modifier(Modifier::BOLD),
        ),
        Span::raw(" wants to run "),
        Span::styled(
            for_terminal(&request.tool),
            Style::new().add_modifier(Modifier::BOLD),
        ),
    ])];
    lines.push(Line::raw(""));
    // A command's spacing is what it does: runs of spaces are counted.
    let runs = request.tool == "Bash";
    let mut push = |text: &str, style: Style| {
        for line in visible_lines(text, runs) {
            lines.extend(wrap_runs(&[(for_terminal(&line), style)], width));
        }
    };
    for (kind, text) in describe(request) {
        let style = match kind {
            LineKind::Head => Style::new().add_modifier(Modifier::BOLD),
            LineKind::Removed => Style::new().fg(theme.error),
            LineKind::Added => Style::new().fg(theme.ok),
            LineKind::Plain => Style::new(),
        };
        push(&text, style);
    }
    if let Some(context) = request.context.as_deref().filter(|c| !c.trim().is_empty()) {
        push("", Style::new());
        let first = context.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        push(&format!("last message: {}", first.trim()), theme.dimmed());
    }
    lines
}

/// The card's fixed last lines: how many more requests wait, the keys.
fn card_footer(waiting: usize, keymap: &Keymap, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = vec![Line::raw("")];
    if waiting > 1 {
        lines.push(Line::styled(
            format!("{} more waiting after this one", waiting - 1),
            Style::new().fg(theme.warning),
        ));
    }
    lines.push(Line::styled(card_keys(keymap), theme.dimmed()));
    lines
}

/// The line that says the card holds more than it shows, and how to
/// scroll it.
fn more_line(above: usize, below: usize, keymap: &Keymap, theme: &Theme) -> Line<'static> {
    let key = |command| keymap.key_in(Section::Card, command);
    let mut parts = Vec::new();
    if below > 0 {
        let how = key("page-down")
            .map(|k| format!(" · {k} scrolls"))
            .unwrap_or_default();
        parts.push(format!("↓ {below} more below{how}"));
    }
    if above > 0 {
        let how = key("page-up")
            .map(|k| format!(" · {k} back"))
            .unwrap_or_default();
        parts.push(format!("↑ {above} above{how}"));
    }
    Line::styled(parts.join("   "), Style::new().fg(theme.warning))
}

/// Draws the card of `request` over the lower part of `area`, its body
/// scrolled to `scroll` (clamped here to the last page); returns how many
/// body lines it shows (a page).
#[allow(clippy::too_many_arguments)]
pub fn draw_card(
    area: Rect,
    buf: &mut Buffer,
    request: &Request,
    waiting: usize,
    timeout_secs: u64,
    keymap: &Keymap,
    theme: &Theme,
    scroll: &mut usize,
) -> usize {
    let w = area.width.saturating_sub(4).min(100);
    let body = card_body(request, theme, w.saturating_sub(2) as usize);
    let footer = card_footer(waiting, keymap, theme);
    let fixed = footer.len() + 2;
    let h = ((body.len() + fixed) as u16).min(area.height.saturating_sub(2));
    // Room for the footer, one line of the body and the "more" line.
    if w < 20 || (h as usize) < fixed + 2 {
        return 0;
    }
    let rect = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + area.height.saturating_sub(h + 2),
        w,
        h,
    );
    Clear.render(rect, buf);
    let title = format!(
        " approval #{} · denied after {} without an answer ",
        request.id,
        crate::duration::human(std::time::Duration::from_secs(timeout_secs))
    );
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(Style::new().fg(theme.warning))
        .title(truncate(&title, w.saturating_sub(2) as usize));
    let inner = block.inner(rect);
    block.render(rect, buf);
    let mut rows = inner.height as usize - footer.len();
    let mut shown: Vec<Line<'static>> = Vec::new();
    if body.len() > rows {
        // The keys always show; the body scrolls above a line saying so.
        rows -= 1;
        let window = Window {
            len: body.len(),
            height: rows,
        };
        *scroll = window.clamp(*scroll);
        shown.extend(body[*scroll..*scroll + rows].iter().cloned());
        let below = body.len() - *scroll - rows;
        shown.push(more_line(*scroll, below, keymap, theme));
    } else {
        *scroll = 0;
        shown.extend(body);
    }
    shown.extend(footer);
    for (i, line) in shown.iter().enumerate() {
        draw_line(buf, inner, i, line);
    }
    rows
}

fn draw_line(buf: &mut Buffer, inner: Rect, row: usize, line: &Line<'static>) {
    let width = inner.width as usize;
    let y = inner.y + row as u16;
    if crate::text::line_width(line) > width {
        buf.set_line(inner.x, y, &cut_line(line, width), inner.width);
    } else {
        buf.set_line(inner.x, y, line, inner.width);
    }
}

/// A line cut to `width`, all in the style of its first span.
fn cut_line(line: &Line<'static>, width: usize) -> Line<'static> {
    let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
    let style = line
        .spans
        .first()
        .map_or(line.style, |s| line.style.patch(s.style));
    Line::from(Span::styled(truncate(&text, width), style))
}

/// The rules overlay's lines.
fn rules_lines(s: &ApprovalsSnapshot, theme: &Theme) -> Vec<Line<'static>> {
    let bold = Style::new().add_modifier(Modifier::BOLD);
    let mut lines = Vec::new();
    if s.rules.is_empty() {
        lines.push(Line::styled(
            "No agent asks: give an agent permissions: ask (and approve: rules) in the workflow.",
            theme.dimmed(),
        ));
        return lines;
    }
    for (agent, rules) in &s.rules {
        lines.push(Line::styled(format!("@{}", for_terminal(agent)), bold));
        lines.push(Line::styled("  workflow (approve:)", theme.dimmed()));
        let mut any = false;
        for verdict in [Verdict::Deny, Verdict::Ask, Verdict::Allow] {
            for rule in rules.of(verdict) {
                any = true;
                lines.push(Line::raw(format!(
                    "    {:<5} {}",
                    verdict.name(),
                    for_terminal(&rule.to_string())
                )));
            }
        }
        if !any {
            lines.push(Line::styled(
                "    (none: every call is asked)",
                theme.dimmed(),
            ));
        }
        lines.push(Line::styled("  always (decided here)", theme.dimmed()));
        let mine: Vec<_> = s.standing.iter().filter(|x| &x.agent == agent).collect();
        if mine.is_empty() {
            lines.push(Line::styled("    (none)", theme.dimmed()));
        }
        for standing in mine {
            let style = match standing.verdict {
                Verdict::Deny => Style::new().fg(theme.error),
                _ => Style::new().fg(theme.ok),
            };
            lines.push(Line::styled(
                format!(
                    "    {:<5} {}   /revoke @{} {}",
                    standing.verdict.name(),
                    for_terminal(&standing.rule.to_string()),
                    for_terminal(agent),
                    for_terminal(&standing.rule.to_string())
                ),
                style,
            ));
        }
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        "First match wins: workflow deny, always deny, always allow, workflow ask, workflow allow; else ask.",
        theme.dimmed(),
    ));
    lines.push(Line::styled(
        format!(
            "A request nobody answers is denied after {}.",
            crate::duration::human(std::time::Duration::from_secs(s.timeout_secs))
        ),
        theme.dimmed(),
    ));
    lines
}

/// Draws the rules overlay over `area`; returns how many lines it shows
/// (a page).
pub fn draw_rules(
    area: Rect,
    buf: &mut Buffer,
    s: &ApprovalsSnapshot,
    keymap: &Keymap,
    theme: &Theme,
    scroll: &mut usize,
) -> usize {
    let title = super::overlay::scroll_title("approval rules", keymap, Section::Rules);
    let frame = super::overlay::Overlay {
        title: &title,
        min_width: 20,
    };
    frame.draw(area, buf, theme, &rules_lines(s, theme), scroll, cut_line)
}
