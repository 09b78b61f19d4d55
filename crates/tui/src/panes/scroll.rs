//! The scroll arithmetic every list and text view shares: how far a page
//! goes, where an offset or a selection lands after a motion, clamping an
//! offset to the last page, and which row to show first so the selection
//! is in view. One helper, so the help, the rules, the diff view, the
//! document viewer, the task board, the inbox, the agents and the command
//! bar scroll alike.

use crate::action::Motion;

/// A view over `len` rows showing `height` of them at a time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Window {
    /// How many rows there are.
    pub len: usize,
    /// How many are shown at once (as last drawn).
    pub height: usize,
}

impl Window {
    /// A view `height` rows tall whose rows are not counted yet (they are
    /// laid out when drawn): offsets move freely and drawing clamps them
    /// ([`Window::clamp`] with the real count).
    pub fn uncounted(height: usize) -> Window {
        Window {
            len: usize::MAX,
            height,
        }
    }

    /// A page: the height less one row, so one row of the last page stays
    /// in view (at least one row).
    pub fn page(self) -> usize {
        self.height.saturating_sub(1).max(1)
    }

    /// The largest offset: the last page is full.
    fn last_offset(self) -> usize {
        self.len.saturating_sub(self.height)
    }

    /// `offset` (the first row shown) clamped so the last page stays full.
    pub fn clamp(self, offset: usize) -> usize {
        offset.min(self.last_offset())
    }

    /// Where `motion` takes row `from`: rows for up, down and the scrolls,
    /// a page for page up and down, the ends for top and bottom (the
    /// bottom as far as can be: callers clamp).
    fn moved(self, from: usize, motion: Motion) -> usize {
        match motion {
            Motion::Up(n) | Motion::ScrollUp(n) => from.saturating_sub(n),
            Motion::Down(n) | Motion::ScrollDown(n) => from.saturating_add(n),
            Motion::PageUp => from.saturating_sub(self.page()),
            Motion::PageDown => from.saturating_add(self.page()),
            Motion::Top => 0,
            Motion::Bottom => usize::MAX,
        }
    }

    /// The first row shown after `motion` moves the view from `offset`,
    /// never past the last page.
    pub fn scroll(self, offset: usize, motion: Motion) -> usize {
        self.clamp(self.moved(offset, motion))
    }

    /// The selected row after `motion` moves it from `selected`: always a
    /// row of the list (0 when it is empty).
    pub fn select(self, selected: usize, motion: Motion) -> usize {
        self.moved(selected, motion).min(self.len.saturating_sub(1))
    }

    /// The first row to show so that row `row` is in view: the top while
    /// it fits on the first page, else with `row` at the bottom.
    pub fn first_showing(self, row: usize) -> usize {
        (row + 1).saturating_sub(self.height)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_keeps_one_row_of_the_last_in_view() {
        assert_eq!(Window { len: 0, height: 36 }.page(), 35);
        assert_eq!(Window { len: 0, height: 1 }.page(), 1);
        assert_eq!(Window { len: 0, height: 0 }.page(), 1);
    }

    #[test]
    fn offsets_move_by_rows_pages_and_ends_and_stop_at_the_last_page() {
        let w = Window {
            len: 100,
            height: 10,
        };
        assert_eq!(w.scroll(0, Motion::Down(3)), 3);
        assert_eq!(w.scroll(3, Motion::ScrollUp(5)), 0);
        assert_eq!(w.scroll(0, Motion::PageDown), 9);
        assert_eq!(w.scroll(20, Motion::PageUp), 11);
        assert_eq!(w.scroll(20, Motion::Top), 0);
        assert_eq!(w.scroll(0, Motion::Bottom), 90);
        assert_eq!(w.scroll(89, Motion::Down(5)), 90);
        assert_eq!(w.clamp(500), 90);
        // Fewer rows than the view: nothing to scroll.
        assert_eq!(Window { len: 4, height: 10 }.scroll(0, Motion::Bottom), 0);
        // Rows not counted yet: drawing clamps.
        let w = Window::uncounted(10);
        assert_eq!(w.scroll(0, Motion::PageDown), 9);
        assert_eq!(
            Window { len: 30, ..w }.clamp(w.scroll(0, Motion::Bottom)),
            20
        );
    }

    #[test]
    fn selections_stay_on_a_row() {
        let w = Window { len: 5, height: 3 };
        assert_eq!(w.select(0, Motion::Down(2)), 2);
        assert_eq!(w.select(4, Motion::Down(1)), 4);
        assert_eq!(w.select(1, Motion::Up(3)), 0);
        assert_eq!(w.select(0, Motion::PageDown), 2);
        assert_eq!(w.select(4, Motion::PageUp), 2);
        assert_eq!(w.select(2, Motion::Bottom), 4);
        assert_eq!(w.select(2, Motion::ScrollDown(1)), 3);
        assert_eq!(w.select(3, Motion::Top), 0);
        assert_eq!(Window { len: 0, height: 3 }.select(7, Motion::Down(1)), 0);
    }

    #[test]
    fn the_selection_is_kept_in_view() {
        let w = Window {
            len: 50,
            height: 10,
        };
        assert_eq!(w.first_showing(0), 0);
        assert_eq!(w.first_showing(9), 0);
        assert_eq!(w.first_showing(10), 1);
        assert_eq!(w.first_showing(49), 40);
        assert_eq!(Window { len: 50, height: 0 }.first_showing(3), 4);
    }
}
