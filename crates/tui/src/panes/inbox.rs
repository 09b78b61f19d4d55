//! The inbox pane: the selected agent's unread mentions, then the user's
//! own, high priority first (marked `!`), then oldest first, each with its
//! delivery state. Acks go through the engine (`Command::Ack`); since an
//! inbox is a cursor over message ids, acknowledging one message also
//! acknowledges the older unread ones, and the status line says how many.
//!
//! Deferred items: the engine does not report deferrals (agent operation
//! `defer` only delays a turn), so nothing is shown as deferred.

use std::collections::BTreeMap;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::channel::{Channel, clock, mark};
use super::scroll::Window;
use crate::action::Motion;
use crate::sanitize::for_terminal;
use crate::text::truncate;
use crate::theme::Theme;
use crate::vocab::mentions::{Priority, USER};
use crate::vocab::{Cursor, DeliveryState};

/// One unread mention.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// Whose inbox.
    pub recipient: String,
    /// The message id.
    pub id: u64,
    /// Index into the channel's messages.
    pub index: usize,
    /// Its priority.
    pub priority: Priority,
    /// Queued or delivered.
    pub state: DeliveryState,
}

/// `recipient`'s unread mentions among the loaded messages, high priority
/// first, then oldest first.
pub fn unread(channel: &Channel, cursors: &BTreeMap<String, Cursor>, recipient: &str) -> Vec<Item> {
    let cursor = cursors.get(recipient).copied().unwrap_or_default();
    let Some(list) = channel.mentions.get(recipient) else {
        return Vec::new();
    };
    let start = list.partition_point(|i| channel.messages[*i].entry.id <= cursor.acked);
    let mut items: Vec<Item> = list[start..]
        .iter()
        .map(|&i| {
            let m = &channel.messages[i];
            Item {
                recipient: recipient.to_string(),
                id: m.entry.id,
                index: i,
                priority: m.priority,
                state: cursor.state_of(m.entry.id),
            }
        })
        .collect();
    items.sort_by_key(|i| (i.priority, i.id));
    items
}

/// A preview without the `@names` a message starts with (the inbox
/// already says whose it is).
fn skip_leading_mentions(line: &str) -> &str {
    let mut rest = line;
    while let Some(r) = rest.strip_prefix('@') {
        match r.find(char::is_whitespace) {
            Some(i) => rest = r[i..].trim_start(),
            None => return line,
        }
    }
    if rest.is_empty() { line } else { rest }
}

/// The inbox pane's state.
#[derive(Clone, Debug, Default)]
pub struct Inbox {
    /// The selected item (over both sections).
    pub selected: usize,
    /// List rows drawn (item index per row).
    pub rows: Vec<Option<usize>>,
}

/// The items shown: the agent's, then the user's.
pub fn items(
    channel: &Channel,
    cursors: &BTreeMap<String, Cursor>,
    agent: Option<&str>,
) -> Vec<Item> {
    let mut all = agent
        .filter(|a| *a != USER)
        .map(|a| unread(channel, cursors, a))
        .unwrap_or_default();
    all.extend(unread(channel, cursors, USER));
    all
}

impl Inbox {
    /// Moves the selection among `n` items; a page is the whole inbox (it
    /// is short).
    pub fn step(&mut self, motion: Motion, n: usize) {
        self.selected = Window { len: n, height: n }.select(self.selected, motion);
    }

    /// Draws the two sections into `area` (no border).
    #[allow(clippy::too_many_arguments)]
    pub fn draw(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        channel: &Channel,
        items: &[Item],
        deferred: &[crate::vocab::Deferred],
        agent: Option<&str>,
        focused: bool,
        utc_offset: i32,
    ) {
        self.rows.clear();
        let (w, h) = (area.width as usize, area.height as usize);
        if w == 0 || h == 0 {
            return;
        }
        if self.selected >= items.len() {
            self.selected = items.len().saturating_sub(1);
        }
        let mut lines: Vec<(Line<'static>, Option<usize>)> = Vec::new();
        let section = |title: String, recipient: &str, lines: &mut Vec<_>| {
            let mine: Vec<usize> = items
                .iter()
                .enumerate()
                .filter(|(_, it)| it.recipient == recipient)
                .map(|(k, _)| k)
                .collect();
            // Unread mentions older than the loaded messages are counted.
            let older = if recipient == USER {
                channel.user_unread_not_loaded
            } else {
                0
            };
            lines.push((
                Line::styled(
                    truncate(&format!("{title} · {} unread", mine.len() + older), w),
                    Style::new().fg(theme.accent).add_modifier(Modifier::BOLD),
                ),
                None,
            ));
            if older > 0 {
                lines.push((
                    Line::styled(
                        truncate(&format!("  + {older} older, not loaded"), w),
                        theme.dimmed(),
                    ),
                    None,
                ));
            }
            let put_off: Vec<&crate::vocab::Deferred> =
                deferred.iter().filter(|d| d.agent == recipient).collect();
            if mine.is_empty() && put_off.is_empty() {
                lines.push((Line::styled("  nothing unread", theme.dimmed()), None));
            }
            for d in put_off {
                let when = match d.until {
                    Some(t) => {
                        let local = t + chrono::Duration::seconds(utc_offset as i64);
                        format!("until {}", local.format("%H:%M:%S"))
                    }
                    None => "to next wake".to_string(),
                };
                lines.push((
                    Line::styled(
                        truncate(&format!("  ⏸ #{} deferred {when}", d.id), w),
                        theme.dimmed(),
                    ),
                    None,
                ));
            }
            for k in mine {
                let it = &items[k];
                let m = &channel.messages[it.index];
                // The line that mentions the inbox's owner, else the first.
                let first =
                    skip_leading_mentions(crate::text::preview_line(&m.clean, &it.recipient));
                let mut spans = vec![
                    if it.priority == Priority::High {
                        Span::styled(
                            "! ",
                            Style::new().fg(theme.warning).add_modifier(Modifier::BOLD),
                        )
                    } else {
                        Span::raw("  ")
                    },
                    Span::styled(format!("{:<2} ", mark(it.state)), theme.dimmed()),
                    Span::styled(format!("#{} ", it.id), theme.dimmed()),
                    Span::styled(clock(&m.entry, utc_offset), theme.dimmed()),
                    Span::raw(" "),
                    Span::styled(for_terminal(&m.entry.from), theme.sender(&m.entry.from)),
                    Span::raw(": "),
                ];
                if let Some(kind) = m.annotations.mail.as_ref().and_then(|r| r.kind()) {
                    spans.push(Span::styled(
                        format!("[{}] ", kind.keyword()),
                        Style::new().fg(theme.badge),
                    ));
                }
                let used: usize = spans.iter().map(|s| crate::text::width(&s.content)).sum();
                spans.push(Span::raw(truncate(first, w.saturating_sub(used))));
                let mut line = Line::from(spans);
                if it.priority == Priority::High {
                    line = line.style(Style::new().add_modifier(Modifier::BOLD));
                }
                lines.push((line, Some(k)));
            }
        };
        if let Some(a) = agent.filter(|a| *a != USER) {
            section(format!("@{a}"), a, &mut lines);
        }
        section("you (@user)".to_string(), USER, &mut lines);
        // Keep the selection in view.
        let sel_row = lines
            .iter()
            .position(|(_, k)| *k == Some(self.selected))
            .unwrap_or(0);
        let first = Window {
            len: lines.len(),
            height: h,
        }
        .first_showing(sel_row);
        for (row, (line, k)) in lines.iter().skip(first).take(h).enumerate() {
            let y = area.y + row as u16;
            buf.set_line(area.x, y, line, area.width);
            if focused && *k == Some(self.selected) {
                buf.set_style(
                    Rect::new(area.x, y, area.width, 1),
                    Style::new().bg(theme.selection),
                );
            }
            self.rows.push(*k);
        }
    }
}

/// What the inbox reads from the rest of the app.
pub struct InboxContext<'a> {
    /// Colours.
    pub theme: &'a Theme,
    /// The channel the items point into.
    pub channel: &'a Channel,
    /// The items as shown now ([`items`]).
    pub items: &'a [Item],
    /// Messages agents deferred.
    pub deferred: &'a [crate::vocab::Deferred],
    /// The selected agent, whose inbox is shown.
    pub agent: Option<&'a str>,
    /// Offset from UTC for timestamps, in seconds.
    pub utc_offset: i32,
}

impl crate::component::Component for Inbox {
    type Context<'a> = InboxContext<'a>;

    fn act(
        &mut self,
        action: &crate::action::Action,
        cx: &InboxContext<'_>,
    ) -> crate::component::Outcome {
        use crate::action::Action;
        use crate::component::Outcome;
        match action {
            Action::Open => Outcome::then(Action::Pager),
            Action::Move(m) => {
                self.step(*m, cx.items.len());
                Outcome::default()
            }
            _ => Outcome::default(),
        }
    }

    fn mouse(
        &mut self,
        mouse: crate::component::Mouse,
        cx: &InboxContext<'_>,
    ) -> crate::component::Outcome {
        use crate::component::Mouse;
        match mouse {
            Mouse::Click { row, .. } => {
                if let Some(Some(k)) = self.rows.get(row) {
                    self.selected = *k;
                }
            }
            Mouse::Scroll { up: true } => self.step(Motion::Up(1), cx.items.len()),
            Mouse::Scroll { up: false } => self.step(Motion::Down(1), cx.items.len()),
        }
        Default::default()
    }

    fn selection(&self, verb: &str, cx: &InboxContext<'_>) -> Option<crate::component::Selection> {
        let m = cx
            .items
            .get(self.selected)
            .map(|it| &cx.channel.messages[it.index]);
        Some(super::channel::message_selection(m, verb))
    }

    fn commands(&self) -> (crate::keymap::Section, &'static [&'static str]) {
        use crate::action::Pane;
        (
            crate::keymap::Section::Pane(Pane::Inbox),
            &["ack", "ack all", "pager", "copy"],
        )
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, cx: &InboxContext<'_>, focused: bool) {
        Inbox::draw(
            self,
            area,
            buf,
            cx.theme,
            cx.channel,
            cx.items,
            cx.deferred,
            cx.agent,
            focused,
            cx.utc_offset,
        );
    }
}
