//! Where the user is in the channel: the selection, the view anchor,
//! scrolling and folding, and the pane as a component.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::action::Motion;
use crate::panes::scroll::Window;
use crate::theme::Theme;

use super::render::{body, indent_width};
use super::*;

impl Channel {
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
        let page = Window {
            len: n,
            height: self.drawn.height,
        }
        .page();
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

    pub(super) fn newest_keep_selection(&mut self) {
        self.view = View::Follow;
        self.unseen = 0;
    }

    pub(super) fn item_height(
        &mut self,
        pos: usize,
        width: usize,
        theme: &Theme,
        names: &[String],
    ) -> usize {
        let (idx, depth) = self.order[pos];
        let w = width.saturating_sub(indent_width(depth));
        let height = self.drawn.height;
        let m = &mut self.messages[idx];
        let expanded = m.expanded;
        let total = body(m, w, theme, names, 0).len();
        1 + fold_at(total, expanded, height).map_or(total, |k| k + 1)
    }
}

pub(super) fn scroll_n(m: Motion) -> usize {
    match m {
        Motion::ScrollUp(n) | Motion::ScrollDown(n) => n,
        _ => 1,
    }
}

impl crate::component::Component for Channel {
    type Context<'a> = DrawContext<'a>;

    fn act(
        &mut self,
        action: &crate::action::Action,
        cx: &DrawContext<'_>,
    ) -> crate::component::Outcome {
        use crate::action::Action;
        use crate::component::Outcome;
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
        mouse: crate::component::Mouse,
        cx: &DrawContext<'_>,
    ) -> crate::component::Outcome {
        use crate::component::Mouse;
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

    fn selection(&self, verb: &str, _cx: &DrawContext<'_>) -> Option<crate::component::Selection> {
        Some(message_selection(self.selected_message(), verb))
    }

    fn commands(&self) -> (crate::keymap::Section, &'static [&'static str]) {
        use crate::action::Pane;
        (
            crate::keymap::Section::Pane(Pane::Channel),
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

/// A message as copy and the pager (`verb`) take it, or what to do first.
pub fn message_selection(m: Option<&Message>, verb: &str) -> crate::component::Selection {
    use crate::component::Selection;
    match m {
        Some(m) => Selection::Text {
            name: format!("#{}", m.entry.id),
            text: m.clean.clone(),
        },
        None => Selection::Nothing(format!("{verb}: select a message first (j/k)")),
    }
}
