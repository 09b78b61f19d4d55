//! Layout and drawing: where each pane goes at the current size, and the
//! header, banner, borders, hints and overlays around them. Wide screens
//! (100 columns and more) show agents and inbox on the left, the channel
//! on the right and under it the documents and the task board: side by
//! side from 180 columns, else one of them (the one focused last, `4` or
//! `5`) with tabs. Narrower screens keep the agents on top and show one of
//! channel / inbox / documents / tasks below, with tabs. Nothing here
//! panics at any size: tiny screens get a one-line notice.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};

use super::action::Pane;
use super::app::{App, Areas};
use super::component::{Component, Draw};
use super::keymap::Section;
use super::panes::command_bar::{BarMode, CommandBar};
use super::panes::help;
use super::text::{truncate, width};

/// The smallest screen that gets the full layout.
pub const MIN_WIDTH: u16 = 40;
/// The smallest screen height that gets the full layout.
pub const MIN_HEIGHT: u16 = 10;

/// A pane to draw: which, where, its title, and whether it shares its
/// place with another (tabs).
type PaneSlot = (Pane, Rect, fn(&App) -> String, bool);

/// Draws the whole screen.
pub fn draw(app: &mut App, frame: &mut Frame) {
    let area = frame.area();
    let cursor = render(app, area, frame.buffer_mut());
    if let Some((x, y)) = cursor {
        frame.set_cursor_position((x, y));
    }
}

/// What a screen too small to use says, whole at any size: the longest
/// form that fits (`awtui: enlarge the terminal`, wrapped onto a second
/// row when there is one, down to `enlarge` and `↔`).
pub fn too_small(area: Rect, buf: &mut Buffer, style: Style) {
    let w = area.width as usize;
    let forms: [&[&str]; 5] = [
        &["awtui: enlarge the terminal"],
        &["awtui: enlarge", "the terminal"],
        &["enlarge the terminal"],
        &["enlarge"],
        &["↔"],
    ];
    let Some(rows) = forms
        .into_iter()
        .find(|rows| rows.len() <= area.height as usize && rows.iter().all(|r| width(r) <= w))
    else {
        return;
    };
    for (i, row) in rows.iter().enumerate() {
        buf.set_string(area.x, area.y + i as u16, row, style);
    }
}

/// Draws into a buffer; returns where the text cursor goes, if shown.
pub fn render(app: &mut App, area: Rect, buf: &mut Buffer) -> Option<(u16, u16)> {
    app.dirty = false;
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        app.areas = Areas::default();
        // No card is shown, so none takes keys.
        app.card_page = 0;
        too_small(area, buf, Style::new().fg(app.theme.warning));
        return None;
    }
    let mut y = area.y;
    header(app, Rect::new(area.x, y, area.width, 1), buf);
    y += 1;
    if let Some(text) = banner_text(app) {
        let style = Style::new()
            .fg(Color::Black)
            .bg(app.theme.warning)
            .add_modifier(Modifier::BOLD);
        let r = Rect::new(area.x, y, area.width, 1);
        buf.set_style(r, style);
        buf.set_string(area.x, y, truncate(&text, area.width as usize), style);
        y += 1;
    }
    let bottom = area.y + area.height;
    // The bar grows with a multi-line message, leaving the panes room.
    let bar_h = app
        .bar
        .height(area.width)
        .min(area.height.saturating_sub(8).max(1));
    let bar = Rect::new(area.x, bottom - 1 - bar_h, area.width, bar_h);
    let hints = Rect::new(area.x, bottom - 1, area.width, 1);
    let main = Rect::new(area.x, y, area.width, bar.y.saturating_sub(y));
    let areas = layout(app, main);
    app.areas = Areas { bar, ..areas };
    app.narrow = areas.inbox.height == 0 || areas.channel.height == 0;
    let shared = areas.documents.height == 0 || areas.tasks.height == 0;

    let theme = app.theme.clone();
    let panes: [PaneSlot; 5] = [
        (Pane::Agents, areas.agents, agents_title, false),
        (Pane::Channel, areas.channel, channel_title, false),
        (Pane::Inbox, areas.inbox, inbox_title, false),
        (Pane::Documents, areas.documents, documents_title, shared),
        (Pane::Tasks, areas.tasks, tasks_title, shared),
    ];
    for (pane, r, title, shared) in panes {
        if r.height > 0 {
            let title = title(app);
            let area = pane_block(app, pane, r, buf, title, shared);
            let focused = app.focus == pane;
            app.visit(
                pane,
                Draw {
                    area,
                    buf: &mut *buf,
                    focused,
                },
            );
        }
    }
    let cursor = app.bar.draw(bar, buf, &theme, app.focus == Pane::Bar);
    hints_line(app, hints, buf);
    // The layers over the panes, bottom first (the order keys go to them
    // is the reverse: see `Layer`).
    let mut live_cursor = None;
    for layer in super::app::Layer::BOTTOM_FIRST {
        match layer {
            super::app::Layer::Live => {
                if let Some(view) = &mut app.live {
                    let row = app.agents.rows.iter().find(|r| r.name == view.agent);
                    let note = app.status.as_ref().map(|s| {
                        let style = if s.error {
                            Style::new().fg(theme.error).add_modifier(Modifier::BOLD)
                        } else if s.warning {
                            Style::new().fg(theme.warning)
                        } else {
                            Style::new().fg(theme.ok)
                        };
                        (s.text.clone(), style)
                    });
                    live_cursor = view.draw(area, buf, row, note, &theme, &app.keymap);
                }
            }
            super::app::Layer::Diff => {
                if let Some(d) = &mut app.diff {
                    let cx = super::panes::diff::DiffContext {
                        theme: &theme,
                        keymap: &app.keymap,
                    };
                    Component::draw(d, area, buf, &cx, true);
                }
            }
            super::app::Layer::Card => {
                if let Some(request) = app.card().cloned() {
                    // A new request's card starts at its top.
                    let mut scroll = app
                        .card_scroll
                        .filter(|(id, _)| *id == request.id)
                        .map_or(0, |(_, offset)| offset);
                    app.card_page = super::panes::approvals::draw_card(
                        area,
                        buf,
                        &request,
                        app.approvals.pending.len(),
                        app.approvals.timeout_secs,
                        &app.keymap,
                        &theme,
                        &mut scroll,
                    );
                    app.card_scroll = Some((request.id, scroll));
                }
            }
            super::app::Layer::Rules => {
                if let Some(mut scroll) = app.rules_view {
                    app.rules_page = super::panes::approvals::draw_rules(
                        area,
                        buf,
                        &app.approvals,
                        &app.keymap,
                        &theme,
                        &mut scroll,
                    );
                    app.rules_view = Some(scroll);
                }
            }
            super::app::Layer::Help => {
                if let Some(mut scroll) = app.help {
                    app.help_page = help::draw(area, buf, &app.keymap, &theme, &mut scroll);
                    app.help = Some(scroll);
                }
            }
            super::app::Layer::Confirm => {
                if let Some(c) = &app.confirm {
                    let question = crate::sanitize::for_terminal(&c.question);
                    let w = (width(&question) as u16 + 4).min(area.width);
                    let r = Rect::new(
                        area.x + (area.width - w) / 2,
                        area.y + area.height / 2 - 1,
                        w,
                        3,
                    );
                    Clear.render(r, buf);
                    let block = Block::default()
                        .borders(Borders::ALL)
                        .border_type(BorderType::Rounded)
                        .border_style(Style::new().fg(theme.warning));
                    let inner = block.inner(r);
                    block.render(r, buf);
                    buf.set_string(
                        inner.x + 1,
                        inner.y,
                        truncate(&question, inner.width.saturating_sub(1) as usize),
                        Style::new().add_modifier(Modifier::BOLD),
                    );
                }
            }
        }
    }
    // The form adding an agent sits on top of everything while open.
    let form_cursor = app
        .add_agent
        .as_ref()
        .and_then(|f| f.draw(area, buf, &theme));
    // The editor shows its own cursor; only the bar's (or the live
    // view's line's, or the form's) is the terminal's.
    let cursor = if app.add_agent.is_some() {
        return form_cursor.map(|p| (p.x, p.y));
    } else if app.live.is_some() {
        live_cursor
    } else {
        cursor
    };
    cursor.filter(|_| {
        app.help.is_none()
            && app.confirm.is_none()
            && app.diff.is_none()
            && app.rules_view.is_none()
    })
}

fn layout(app: &App, main: Rect) -> Areas {
    let mut a = Areas::default();
    let n_agents = app.agents.rows.len().max(1) as u16;
    if main.width >= 100 && main.height >= 16 {
        let left_w = (main.width * 3 / 10).clamp(32, 46);
        let want_agents = n_agents * 2 + 2;
        let agents_h = want_agents.min(main.height / 2).max(3);
        a.agents = Rect::new(main.x, main.y, left_w, agents_h);
        a.inbox = Rect::new(main.x, main.y + agents_h, left_w, main.height - agents_h);
        let rx = main.x + left_w;
        let rw = main.width - left_w;
        let docs_h = if matches!(app.focus, Pane::Documents | Pane::Tasks) {
            main.height * 3 / 5
        } else {
            (main.height * 7 / 20).max(6)
        };
        let chan_h = main.height - docs_h;
        a.channel = Rect::new(rx, main.y, rw, chan_h);
        let lower = Rect::new(rx, main.y + chan_h, rw, docs_h);
        if main.width >= 180 {
            // The documents keep room for their file list (60 inside).
            let dw = (rw * 2 / 5).max(62);
            a.documents = Rect::new(rx, lower.y, dw, docs_h);
            a.tasks = Rect::new(rx + dw, lower.y, rw - dw, docs_h);
        } else if app.lower == Pane::Tasks {
            a.tasks = lower;
        } else {
            a.documents = lower;
        }
    } else {
        let agents_h = (n_agents + 2).min(main.height / 3).max(3);
        a.agents = Rect::new(main.x, main.y, main.width, agents_h);
        let rest = Rect::new(
            main.x,
            main.y + agents_h,
            main.width,
            main.height - agents_h,
        );
        match app.main {
            Pane::Inbox => a.inbox = rest,
            Pane::Documents => a.documents = rest,
            Pane::Tasks => a.tasks = rest,
            _ => a.channel = rest,
        }
    }
    a
}

/// Draws a pane's border and title; `shared` says documents and tasks take
/// turns in one place (tabs on their border).
fn pane_block(
    app: &App,
    pane: Pane,
    area: Rect,
    buf: &mut Buffer,
    title: String,
    shared: bool,
) -> Rect {
    let focused = app.focus == pane;
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Rounded
        })
        .border_style(app.theme.border(focused))
        .title(Span::styled(
            truncate(&title, area.width.saturating_sub(4) as usize),
            if focused {
                Style::new()
                    .fg(app.theme.accent)
                    .add_modifier(Modifier::BOLD)
            } else {
                Style::new()
            },
        ));
    // Tabs for the panes that share the space: everything but the agents
    // on narrow screens, documents and tasks on some wide ones.
    let tabs: &[Pane] = if app.narrow && pane != Pane::Agents {
        &[Pane::Channel, Pane::Inbox, Pane::Documents, Pane::Tasks]
    } else if shared && matches!(pane, Pane::Documents | Pane::Tasks) {
        &[Pane::Documents, Pane::Tasks]
    } else {
        &[]
    };
    if !tabs.is_empty() {
        let tabs: Vec<Span> = tabs
            .iter()
            .copied()
            .map(|p| {
                let label = format!(" {} ", p.name());
                if p == pane {
                    Span::styled(
                        label,
                        Style::new()
                            .fg(app.theme.accent)
                            .add_modifier(Modifier::BOLD),
                    )
                } else {
                    Span::styled(label, app.theme.dimmed())
                }
            })
            .collect();
        block = block.title_top(Line::from(tabs).right_aligned());
    }
    let inner = block.inner(area);
    block.render(area, buf);
    inner
}

fn header(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let up = crate::text::up_time(app.up_time().as_secs());
    let cost: f64 = app.agents.rows.iter().map(|r| r.metrics.cost_usd).sum();
    let mut spans = vec![
        Span::styled(
            " awtui ",
            Style::new()
                .fg(Color::Black)
                .bg(t.accent)
                .add_modifier(Modifier::BOLD),
        ),
        Span::raw(" "),
        Span::styled(
            if app.ready {
                app.workflow.clone()
            } else {
                "connecting…".into()
            },
            Style::new().add_modifier(Modifier::BOLD),
        ),
        Span::styled(format!(" · instance {}", app.instance), t.dimmed()),
        Span::styled(format!(" · up {up}"), t.dimmed()),
        Span::styled(format!(" · ${cost:.2}"), t.dimmed()),
        Span::styled(
            format!(
                " · {}/{} working",
                app.working_count(),
                app.agents.rows.len()
            ),
            t.dimmed(),
        ),
        Span::styled(
            format!(
                " · {} msgs",
                app.channel.messages.len() + app.channel.not_loaded
            ),
            t.dimmed(),
        ),
    ];
    let troubled = app.troubled();
    if !troubled.is_empty() {
        let names: Vec<&str> = troubled.iter().map(|r| r.name.as_str()).collect();
        spans.push(Span::styled(
            format!(" · ⚠ {}", names.join(", ")),
            Style::new().fg(t.error).add_modifier(Modifier::BOLD),
        ));
    }
    let line = Line::from(spans);
    buf.set_line(area.x, area.y, &line, area.width);
}

fn banner_text(app: &App) -> Option<String> {
    if app.stopping {
        return Some(" ■ stopping the agents… ".into());
    }
    if app.ended {
        return Some(" ■ the instance has ended · q leaves ".into());
    }
    let reason = app.paused.as_ref()?;
    let why = reason.to_string();
    let key = app
        .keymap
        .key_for(Section::Global, "resume")
        .map(|k| format!("{k} or "))
        .unwrap_or_default();
    Some(format!(" ‖ PAUSED · {key}/resume goes on · {why} "))
}

fn agents_title(app: &App) -> String {
    format!(" Agents · {} ", app.agents.rows.len())
}

fn inbox_title(app: &App) -> String {
    let unread = app.inbox_items().len() + app.channel.user_unread_not_loaded;
    format!(" Inbox · {unread} unread ")
}

fn channel_title(app: &App) -> String {
    let c = &app.channel;
    let mut t = format!(" Channel · {}", c.order.len());
    if !c.filter.is_empty() {
        t.push_str(&format!(" · filter {}", c.filter));
    }
    if let Some(q) = &c.search {
        t.push_str(&format!(" · /{q} ({})", c.matches.len()));
    }
    if c.view != super::panes::channel::View::Follow {
        if c.unseen > 0 {
            t.push_str(&format!(" · ↓ {} new", c.unseen));
        } else {
            t.push_str(" · scrolled");
        }
    }
    t.push(' ');
    t
}

fn tasks_title(app: &App) -> String {
    let b = &app.board;
    let mut t = match b
        .detail
        .as_ref()
        .and_then(|d| app.tasks.tasks.iter().find(|t| t.id == d.task))
    {
        Some(task) => format!(
            " Tasks · {} ({})",
            crate::sanitize::for_terminal(&task.name),
            crate::sanitize::for_terminal(&task.id)
        ),
        None => {
            let done = app
                .tasks
                .tasks
                .iter()
                .filter(|t| t.status.is_done())
                .count();
            format!(" Tasks · {done}/{} done", app.tasks.tasks.len())
        }
    };
    if !b.filter.is_empty() {
        t.push_str(&format!(
            " · filter {}",
            crate::sanitize::for_terminal(&b.filter.to_string())
        ));
    }
    t.push(' ');
    t
}

fn documents_title(app: &App) -> String {
    crate::sanitize::for_terminal(&documents_title_raw(app))
}

fn documents_title_raw(app: &App) -> String {
    let d = &app.documents;
    match (&d.editor, &d.viewer) {
        (Some(e), _) => format!(
            " Documents · editing {}{} ",
            e.file,
            if e.dirty() { " [+]" } else { "" }
        ),
        (None, Some(v)) => format!(" Documents · {} ", v.file),
        _ => format!(" Documents · {} ", d.files.len()),
    }
}

fn hints_line(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    if let Some(s) = &app.status {
        let style = if s.error {
            Style::new().fg(t.error).add_modifier(Modifier::BOLD)
        } else if s.warning {
            Style::new().fg(t.warning)
        } else {
            Style::new().fg(t.ok)
        };
        buf.set_string(
            area.x,
            area.y,
            truncate(&s.text, area.width as usize),
            style,
        );
        return;
    }
    // The diff view over the panes names its own keys in its footer; the
    // panes' keys do not reach them.
    if app.diff.is_some() {
        return;
    }
    let (section, commands) = app.commands();
    // (key, what, whether it is kept before any other when space is short)
    let mut hints: Vec<(String, String, bool)> = Vec::new();
    let mut push = |k: &str, what: &str, kept: bool| hints.push((k.into(), what.into(), kept));
    if app.focus == Pane::Bar {
        // What the keys do in the bar's mode; global hints only for keys
        // that get past it (the others type).
        for &(k, what) in bar_hints(&app.bar) {
            push(k, what, k == "enter" || k == "esc");
        }
        // The forms of the command being typed, when there is room.
        if let Some(c) = app.bar.command() {
            push(&format!("/{}", c.usage), "", false);
        }
        if let Some(k) = app.keymap.key_for_in_bar("help") {
            push(&k.to_string(), "help", true);
        }
        // Ctrl-C quits from an empty bar (it clears a line first).
        if app.bar.input.is_empty()
            && let Some(k) = app.keymap.key_for_in_bar("quit")
        {
            push(&k.to_string(), "quit", true);
        }
    } else {
        for c in commands {
            if let Some(k) = app.keymap.key_for(section, c) {
                let what = c
                    .trim()
                    .trim_start_matches("prompt /")
                    .trim_start_matches("focus ")
                    .trim_start_matches("task ");
                push(&k.to_string(), what, false);
            }
        }
        // In the editor every other key types: no global hints there.
        let editing = app.focus == Pane::Documents && app.documents.editor.is_some();
        // Opened from the home list: the key back to it.
        let home = (app.options.on_quit == super::QuitAction::Home).then_some("home");
        for c in ["focus next", "help"]
            .into_iter()
            .chain(home)
            .chain(["quit"])
            .filter(|_| !editing)
        {
            if let Some(k) = app.keymap.key_for(Section::Global, c) {
                push(
                    &k.to_string(),
                    c.trim_start_matches("focus "),
                    c != "focus next",
                );
            }
        }
    }
    buf.set_line(
        area.x,
        area.y,
        &hint_line(hints, t, area.width as usize),
        area.width,
    );
}

/// A line of key hints `(key, what it does, kept first when space is
/// short)`, keys in the mention colour and what they do dimmed: one style
/// for the instance's screen and the home screen.
pub fn hint_line(
    hints: Vec<(String, String, bool)>,
    t: &crate::theme::Theme,
    room: usize,
) -> Line<'static> {
    let widths: Vec<usize> = hints
        .iter()
        .map(|(k, what, _)| width(k) + 1 + width(what) + 2)
        .collect();
    let shown = fit_hints(
        &hints.iter().map(|h| h.2).collect::<Vec<_>>(),
        &widths,
        room,
    );
    let mut spans = Vec::new();
    for (i, (key, what, _)) in hints.into_iter().enumerate() {
        if shown[i] {
            spans.push(Span::styled(key, Style::new().fg(t.mention)));
            spans.push(Span::styled(format!(" {what}  "), t.dimmed()));
        }
    }
    Line::from(spans)
}

/// The bar's keys while a command is typed (after `/`, or on the `:`
/// command line).
const COMMAND_HINTS: &[(&str, &str)] = &[
    ("enter", "run"),
    ("tab", "complete"),
    ("↑↓", "history"),
    ("esc", "leave"),
];

/// What Enter, Tab, Up/Down and Esc do in the command bar now: typing a
/// message, a `/command` (or on the `:` command line), or a channel
/// search.
fn bar_hints(bar: &CommandBar) -> &'static [(&'static str, &'static str)] {
    let command = bar.input.starts_with('/') && !bar.input.starts_with("//");
    match bar.mode {
        BarMode::Search => &[("enter", "search"), ("esc", "cancel")],
        BarMode::CommandLine => COMMAND_HINTS,
        BarMode::Command if command => COMMAND_HINTS,
        BarMode::Command => &[
            ("enter", "send"),
            ("alt-enter", "new line"),
            ("tab", "complete @name"),
            ("↑↓", "history"),
            ("esc", "leave"),
        ],
    }
}

/// Which hints fit in `room` columns: whole hints only, never one cut in
/// half. The `kept` ones (help, quit) go first; then the others in order
/// while they fit, so the rightmost pane hints are the ones dropped.
pub fn fit_hints(kept: &[bool], widths: &[usize], room: usize) -> Vec<bool> {
    let mut shown = vec![false; widths.len()];
    let mut used = 0;
    for pass in [true, false] {
        for (i, w) in widths.iter().enumerate() {
            if kept[i] != pass {
                continue;
            }
            // The two trailing spaces may fall off the edge.
            if used + w.saturating_sub(2) > room {
                break;
            }
            shown[i] = true;
            used += w;
        }
    }
    shown
}
