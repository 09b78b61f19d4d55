//! Drawing the home screen: a header line, the list of instances or the
//! attention view in a bordered box, the prompt or news line, and the key
//! hints.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};

use super::help::{self, HelpLine};
use super::{Home, HomeView, Prompt};
use crate::keymap::Section;
use crate::panes::overlay::{Overlay, scroll_title};
use crate::text::{truncate, width};
use crate::theme::Theme;

/// Draws the home screen into `buf`.
pub fn render(home: &Home, theme: &Theme, area: Rect, buf: &mut Buffer) {
    if area.height < 4 || area.width < 20 {
        crate::ui::too_small(area, buf, Style::default().fg(theme.warning));
        return;
    }
    let header = Rect { height: 1, ..area };
    let body = Rect {
        y: area.y + 1,
        height: area.height - 3,
        ..area
    };
    let bottom = Rect {
        y: area.y + area.height - 2,
        height: 1,
        ..area
    };
    let hints = Rect {
        y: area.y + area.height - 1,
        height: 1,
        ..area
    };
    let waiting = home.items.len();
    let title = format!(
        " awtui · {} instance{} running · {} need{} attention",
        home.rows.len(),
        if home.rows.len() == 1 { "" } else { "s" },
        waiting,
        if waiting == 1 { "s" } else { "" },
    );
    Paragraph::new(Line::from(Span::styled(
        truncate(&title, area.width as usize),
        Style::default()
            .fg(theme.accent)
            .add_modifier(Modifier::BOLD),
    )))
    .render(header, buf);
    let (name, lines) = match home.view {
        HomeView::List => (" Instances ", list_lines(home, theme, body.width)),
        HomeView::Attention => (
            " Attention (newest first) ",
            attention_lines(home, theme, body.width),
        ),
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(Style::default().fg(theme.border))
        .title(Span::styled(name, Style::default().fg(theme.accent)));
    let inner = block.inner(body);
    block.render(body, buf);
    // Keep the selection in view.
    let selected = match home.view {
        HomeView::List => home.selected,
        HomeView::Attention => home.item_selected,
    } + 1;
    let visible = inner.height as usize;
    home.list_drawn.set(visible.saturating_sub(1));
    let skip = if visible > 1 && selected >= visible {
        selected + 1 - visible
    } else {
        0
    };
    let mut shown: Vec<Line> = Vec::new();
    if let Some(head) = lines.first() {
        shown.push(head.clone());
    }
    shown.extend(lines.into_iter().skip(1 + skip));
    Paragraph::new(shown).render(inner, buf);
    let (text, style) = match &home.prompt {
        Some(Prompt::Stop(info)) => (
            format!(
                "Stop @{} and every agent in it? ({})",
                crate::sanitize::for_terminal(&info.instance),
                help::yes_no(&home.keymap)
            ),
            Style::default().fg(theme.warning),
        ),
        Some(Prompt::New { text, .. }) => (
            format!("Start workflow file (Tab completes, Enter starts, Esc cancels): {text}"),
            Style::default(),
        ),
        None => match &home.status {
            Some((t, true)) => (t.clone(), Style::default().fg(theme.error)),
            Some((t, false)) => (t.clone(), Style::default().fg(theme.ok)),
            None if !home.loaded => (
                "reading the registry…".to_string(),
                Style::default().fg(theme.dim),
            ),
            None => (String::new(), Style::default()),
        },
    };
    // A long prompt shows its end, where the typing happens.
    let w = area.width as usize;
    let text = if width(&text) > w && matches!(home.prompt, Some(Prompt::New { .. })) {
        let tail: String = text.chars().rev().take(w.saturating_sub(1)).collect();
        format!("…{}", tail.chars().rev().collect::<String>())
    } else {
        truncate(&text, w)
    };
    Paragraph::new(Line::from(Span::styled(text, style))).render(bottom, buf);
    // The same style as an instance's hint line (keys coloured, help and
    // quit kept when space is short).
    let keys = help::hints(&home.keymap, home.view, home.help.is_some());
    crate::ui::hint_line(keys, theme, w).render(hints, buf);
    if let Some(mut scroll) = home.help {
        let lines = help_lines(home, theme);
        let title = scroll_title("help", &home.keymap, Section::Help);
        let frame = Overlay {
            title: &title,
            min_width: 10,
        };
        let page = frame.draw(area, buf, theme, &lines, &mut scroll, |l, w| {
            let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
            Line::raw(truncate(&text, w))
        });
        home.help_drawn
            .set((page, lines.len().saturating_sub(page)));
    }
}

/// The home screen's help ([`help::lines`]), keys in a column wide
/// enough for the widest.
fn help_lines(home: &Home, theme: &Theme) -> Vec<Line<'static>> {
    let title = Style::default()
        .fg(theme.accent)
        .add_modifier(Modifier::BOLD);
    let lines = help::lines(&home.keymap);
    let column = lines
        .iter()
        .map(|l| match l {
            HelpLine::Keys(keys, _) => width(keys) + 2,
            _ => 0,
        })
        .max()
        .unwrap_or(0)
        .max(10);
    lines
        .into_iter()
        .map(|l| match l {
            HelpLine::Heading(name, note) => Line::from(vec![
                Span::styled(name, title),
                Span::raw(format!("  {note}")),
            ]),
            HelpLine::Keys(keys, what) => Line::from(vec![
                Span::styled(
                    format!("  {}", cell(&keys, column)),
                    Style::default().fg(theme.mention),
                ),
                Span::raw(what),
            ]),
            HelpLine::Blank => Line::default(),
        })
        .collect()
}

/// Pads or cuts `s` to exactly `w` columns.
fn cell(s: &str, w: usize) -> String {
    let t = truncate(s, w);
    let pad = w.saturating_sub(width(&t));
    format!("{t}{}", " ".repeat(pad))
}

/// Cuts a path from the left (`…/end`), keeping its most telling part.
fn left_cut(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_string();
    }
    if w == 0 {
        return String::new();
    }
    let tail: String = s.chars().rev().take(w - 1).collect();
    format!("…{}", tail.chars().rev().collect::<String>())
}

fn up(secs: i64) -> String {
    crate::text::up_time(secs.max(0) as u64)
}

/// `@name`, with `(paused)`, `(stopping)` or `(no answer)` when it is.
fn display_name(r: &super::HomeRow) -> String {
    match r.note {
        Some(n) => format!("@{} ({n})", r.name),
        None => format!("@{}", r.name),
    }
}

fn list_lines(home: &Home, theme: &Theme, width_total: u16) -> Vec<Line<'static>> {
    let inner = (width_total as usize).saturating_sub(2);
    let name_w = home
        .rows
        .iter()
        .map(|r| width(&display_name(r)))
        .max()
        .unwrap_or(5)
        .clamp(5, 22);
    let wf_w = home
        .rows
        .iter()
        .map(|r| width(&r.workflow))
        .max()
        .unwrap_or(8)
        .clamp(8, 16);
    // NAME WORKFLOW AGENTS UNREAD COST UP ATTN FOLDER
    let fixed = name_w + 1 + wf_w + 1 + 7 + 7 + 8 + 7 + 5;
    let folder_w = inner.saturating_sub(fixed).max(6);
    let dim = Style::default().fg(theme.dim);
    let mut lines = vec![Line::from(Span::styled(
        format!(
            "{} {} {} {} {} {} {} {}",
            cell("NAME", name_w),
            cell("WORKFLOW", wf_w),
            cell("AGENTS", 6),
            cell("UNREAD", 6),
            cell("COST", 7),
            cell("UP", 6),
            cell("ATTN", 4),
            "FOLDER"
        ),
        dim.add_modifier(Modifier::BOLD),
    ))];
    if home.rows.is_empty() && home.loaded {
        let text = match help::start_key(&home.keymap) {
            Some(key) => format!("nothing is running: {key} starts a workflow file"),
            None => "nothing is running".to_string(),
        };
        lines.push(Line::from(Span::styled(text, dim)));
    }
    for (i, r) in home.rows.iter().enumerate() {
        let base = if i == home.selected {
            Style::default().bg(theme.selection)
        } else {
            Style::default()
        };
        let agents = format!("{}/{}", r.working, r.total);
        let attn_style = if r.attention > 0 {
            base.fg(theme.warning).add_modifier(Modifier::BOLD)
        } else {
            base
        };
        let unread_style = if r.unread > 0 {
            base.fg(theme.mention)
        } else {
            base
        };
        let name = display_name(r);
        let name_style = match r.note {
            Some("no answer") => base.fg(theme.error),
            Some(_) => base.fg(theme.warning),
            None => base.fg(theme.accent),
        };
        let spans = vec![
            Span::styled(format!("{} ", cell(&name, name_w)), name_style),
            Span::styled(format!("{} ", cell(&r.workflow, wf_w)), base),
            Span::styled(format!("{} ", cell(&agents, 6)), base),
            Span::styled(format!("{} ", cell(&r.unread.to_string(), 6)), unread_style),
            Span::styled(format!("{} ", cell(&format!("${:.2}", r.cost), 7)), base),
            Span::styled(
                format!("{} ", cell(&up((home.now - r.started).num_seconds()), 6)),
                base,
            ),
            Span::styled(
                format!("{} ", cell(&r.attention.to_string(), 4)),
                attn_style,
            ),
            Span::styled(
                cell(&left_cut(&r.folder, folder_w), folder_w),
                base.fg(theme.dim),
            ),
        ];
        lines.push(Line::from(spans));
    }
    lines
}

fn attention_lines(home: &Home, theme: &Theme, width_total: u16) -> Vec<Line<'static>> {
    let inner = (width_total as usize).saturating_sub(2);
    let inst_w = home
        .items
        .iter()
        .map(|i| width(&i.instance) + 1)
        .max()
        .unwrap_or(9)
        .clamp(9, 16);
    let from_w = home
        .items
        .iter()
        .map(|i| width(&i.from))
        .max()
        .unwrap_or(4)
        .clamp(4, 12);
    let fixed = 5 + 1 + inst_w + 1 + 12 + 1 + from_w + 1;
    let sum_w = inner.saturating_sub(fixed).max(8);
    let dim = Style::default().fg(theme.dim);
    let mut lines = vec![Line::from(Span::styled(
        format!(
            "{} {} {} {} WHAT",
            cell("TIME", 5),
            cell("INSTANCE", inst_w),
            cell("KIND", 12),
            cell("FROM", from_w)
        ),
        dim.add_modifier(Modifier::BOLD),
    ))];
    if home.items.is_empty() && home.loaded {
        lines.push(Line::from(Span::styled("nothing waits for you", dim)));
    }
    let offset = chrono::FixedOffset::east_opt(home.utc_offset)
        .unwrap_or_else(|| chrono::FixedOffset::east_opt(0).expect("zero offset"));
    for (i, item) in home.items.iter().enumerate() {
        let base = if i == home.item_selected {
            Style::default().bg(theme.selection)
        } else {
            Style::default()
        };
        let kind_style = match item.kind {
            crate::attention::AttentionKind::Mention => base.fg(theme.mention),
            crate::attention::AttentionKind::HelpRequest
            | crate::attention::AttentionKind::Failed(_) => {
                base.fg(theme.error).add_modifier(Modifier::BOLD)
            }
            _ => base.fg(theme.warning),
        };
        let time = item.when.with_timezone(&offset).format("%H:%M").to_string();
        lines.push(Line::from(vec![
            Span::styled(format!("{} ", cell(&time, 5)), base.fg(theme.dim)),
            Span::styled(
                format!("{} ", cell(&format!("@{}", item.instance), inst_w)),
                base.fg(theme.accent),
            ),
            Span::styled(format!("{} ", cell(item.kind.label(), 12)), kind_style),
            Span::styled(format!("{} ", cell(&item.from, from_w)), base),
            Span::styled(cell(&item.summary, sum_w), base),
        ]));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_paths_and_up_times() {
        assert_eq!(cell("abc", 5), "abc  ");
        assert_eq!(cell("abcdef", 4), "abc…");
        assert_eq!(left_cut("/home/me/projects/api", 10), "…jects/api");
        assert_eq!(up(59), "59s");
        assert_eq!(up(-5), "0s");
        assert_eq!(up(3_700), "1h01m");
        assert_eq!(up(90_000), "1d1h");
    }
}
