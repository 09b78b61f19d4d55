//! The scrolling overlays (help, approval rules): a centred, bordered box
//! over the panes, its lines drawn from a scroll position clamped to the
//! last page. One helper, so every overlay frames and scrolls alike.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};

use super::scroll::Window;
use crate::keymap::{Keymap, Section};
use crate::theme::Theme;

/// A scrolling overlay's title with its keys as `section` binds them
/// (` help · j/k scroll · esc closes `).
pub fn scroll_title(name: &str, keymap: &Keymap, section: Section) -> String {
    let key = |command, preferred| keymap.key_preferring(section, command, preferred);
    let mut parts = vec![name.to_string()];
    if let (Some(down), Some(up)) = (key("down", "j"), key("up", "k")) {
        parts.push(format!("{down}/{up} scroll"));
    }
    if let Some(back) = key("back", "esc") {
        parts.push(format!("{back} closes"));
    }
    format!(" {} ", parts.join(" · "))
}

/// One overlay's frame: its title and the narrowest box worth drawing.
pub struct Overlay<'a> {
    /// The border's title.
    pub title: &'a str,
    /// Nothing is drawn in a box narrower than this.
    pub min_width: u16,
}

impl Overlay<'_> {
    /// Draws `lines` in a box over `area` (at most 100 columns wide), from
    /// line `scroll` (clamped so the last page stays full). `cut` shortens
    /// a line wider than the box to the given width. Returns how many
    /// lines the box shows (0 when it is not drawn).
    pub fn draw(
        &self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        lines: &[Line<'static>],
        scroll: &mut usize,
        cut: impl Fn(&Line<'static>, usize) -> Line<'static>,
    ) -> usize {
        let w = area.width.saturating_sub(4).min(100);
        let h = area.height.saturating_sub(2);
        if w < self.min_width || h < 3 {
            return 0;
        }
        let rect = Rect::new(area.x + (area.width - w) / 2, area.y + 1, w, h);
        Clear.render(rect, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(Style::new().fg(theme.accent))
            .title(self.title.to_string());
        let inner = block.inner(rect);
        block.render(rect, buf);
        *scroll = Window {
            len: lines.len(),
            height: inner.height as usize,
        }
        .clamp(*scroll);
        let width = inner.width as usize;
        for (row, line) in lines
            .iter()
            .skip(*scroll)
            .take(inner.height as usize)
            .enumerate()
        {
            let y = inner.y + row as u16;
            if crate::text::line_width(line) > width {
                buf.set_line(inner.x, y, &cut(line, width), inner.width);
            } else {
                buf.set_line(inner.x, y, line, inner.width);
            }
        }
        inner.height as usize
    }
}
