//! Tool approvals in the control room: the card of the request waiting
//! (agent, tool, the command or the diff of the file change, the agent's
//! last message, the keys) and the rules overlay (each asking agent's
//! workflow rules and the "always" decisions, with how to revoke them).
//! Drawing only; the state is [`crate::vocab::ApprovalsSnapshot`].

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};

use crate::sanitize::for_terminal;
use crate::tui::keymap::{Keymap, Section};
use crate::tui::text::truncate;
use crate::tui::theme::Theme;
use crate::vocab::approval_view::{LineKind, describe};
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

/// The card's lines: what is asked, the change, the context, the keys.
fn card_lines(
    request: &Request,
    waiting: usize,
    keymap: &Keymap,
    theme: &Theme,
) -> Vec<Line<'static>> {
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
    for (kind, text) in describe(request) {
        let style = match kind {
            LineKind::Head => Style::new().add_modifier(Modifier::BOLD),
            LineKind::Removed => Style::new().fg(theme.error),
            LineKind::Added => Style::new().fg(theme.ok),
            LineKind::Plain => Style::new(),
        };
        lines.push(Line::styled(for_terminal(&text), style));
    }
    if let Some(context) = request.context.as_deref().filter(|c| !c.trim().is_empty()) {
        lines.push(Line::raw(""));
        let first = context.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        lines.push(Line::styled(
            format!("last message: {}", for_terminal(first.trim())),
            theme.dimmed(),
        ));
    }
    lines.push(Line::raw(""));
    if waiting > 1 {
        lines.push(Line::styled(
            format!("{} more waiting after this one", waiting - 1),
            Style::new().fg(theme.warning),
        ));
    }
    lines.push(Line::styled(card_keys(keymap), theme.dimmed()));
    lines
}

/// Draws the card of `request` over the lower part of `area`.
pub fn draw_card(
    area: Rect,
    buf: &mut Buffer,
    request: &Request,
    waiting: usize,
    timeout_secs: u64,
    keymap: &Keymap,
    theme: &Theme,
) {
    let lines = card_lines(request, waiting, keymap, theme);
    let w = area.width.saturating_sub(4).min(100);
    let h = (lines.len() as u16 + 2).min(area.height.saturating_sub(2));
    if w < 20 || h < 4 {
        return;
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
    // The keys always show: the change is cut, not the last line.
    let rows = inner.height as usize;
    let mut shown: Vec<&Line> = lines.iter().collect();
    if shown.len() > rows && rows > 0 {
        let keys = shown.pop();
        shown.truncate(rows - 1);
        shown.extend(keys);
    }
    for (i, line) in shown.into_iter().enumerate() {
        draw_line(buf, inner, i, line);
    }
}

fn draw_line(buf: &mut Buffer, inner: Rect, row: usize, line: &Line<'static>) {
    let width = inner.width as usize;
    let y = inner.y + row as u16;
    if crate::tui::text::line_width(line) > width {
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
