//! The channel pane: every message, live. It follows new messages unless
//! the user scrolled back; replies (`reply_to`) are grouped under the root
//! of their thread; AOP blocks are framed per type; Agent Mail messages
//! carry their type as a badge; each mentioned recipient gets a delivery
//! mark (`·` queued, `✓` delivered, `✓✓` acked) from the engine's cursors.
//!
//! Decisions: a thread stays where its root is, so a reply to an old
//! message appears up in the history (the status line says so when the
//! reply is out of view); with a filter active the list is flat. STREAM
//! chunks that follow an open stream of the same agent are folded into the
//! message that opened it, which grows until a chunk says it is the last.
//!
//! Speed: only the messages in view are laid out; a message's body is laid
//! out once per width and cached (headers, which carry the live delivery
//! marks, are built when drawn), and the view is anchored to a message, so
//! a frame costs the same with 100 or 100,000 messages.
//!
//! The state lives here; `model` takes messages in and keeps the listed
//! order, `view` keeps the selection and scrolling, `render` draws.

use std::collections::HashMap;

use ratatui::text::Line;

use crate::action::Filter;
use crate::theme::Theme;
use crate::vocab::Annotations;
use crate::vocab::mentions::Priority;
use crate::vocab::{ChannelEntry, Cursor};

mod model;
mod render;
mod view;

pub use render::{clock, fold_at, mark};
pub use view::message_selection;

/// Spinner frames, shared by every pane.
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// One message as the pane keeps it.
#[derive(Clone, Debug)]
pub struct Message {
    /// The entry as the engine sent it.
    pub entry: ChannelEntry,
    /// What the protocols read in it.
    pub annotations: Annotations,
    /// Its inbox priority.
    pub priority: Priority,
    /// The message text, sanitised once.
    pub clean: String,
    /// Whether its CONTEXT blocks are unfolded.
    pub expanded: bool,
    /// STREAM chunks from later messages folded into this one.
    pub stream_more: Vec<String>,
    /// Whether this message opened a stream that has not ended.
    pub stream_open: bool,
    /// Whether it was folded into an earlier stream (not listed).
    pub folded: bool,
    cache: Option<(usize, Vec<Line<'static>>)>,
}

/// Where the view is anchored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum View {
    /// The newest message is at the bottom and new ones scroll in.
    #[default]
    Follow,
    /// Item `pos` (minus `skip` lines) is at the top.
    Top(usize, usize),
    /// Item `pos` ends at the bottom.
    Bottom(usize),
}

/// What the last draw showed, for scrolling and mouse clicks.
#[derive(Clone, Debug, Default)]
pub struct Drawn {
    /// First item and lines of it skipped.
    pub top: (usize, usize),
    /// Last item (fully or partly) shown.
    pub bottom: usize,
    /// Whether the end of the list is in view.
    pub at_end: bool,
    /// The list position of each row drawn, top to bottom.
    pub rows: Vec<Option<usize>>,
    /// Height and width of the text area.
    pub height: usize,
    /// Width of the text area.
    pub width: usize,
}

/// The channel pane's state.
#[derive(Debug, Default)]
pub struct Channel {
    /// Every message received, in id order.
    pub messages: Vec<Message>,
    by_id: HashMap<u64, usize>,
    /// The listed messages (index, thread depth), in display order.
    pub order: Vec<(usize, u8)>,
    /// The active filter.
    pub filter: Filter,
    /// The active search text.
    pub search: Option<String>,
    /// Positions in `order` that match the search.
    pub matches: Vec<usize>,
    /// The selected position in `order`.
    pub selected: Option<usize>,
    /// The view anchor.
    pub view: View,
    /// Messages that arrived while scrolled back.
    pub unseen: usize,
    /// What the last draw showed.
    pub drawn: Drawn,
    /// Messages the engine holds that were not loaded (older history).
    pub not_loaded: usize,
    /// The user's unread mentions among the messages not loaded: counted
    /// (the engine says how many), not listed.
    pub user_unread_not_loaded: usize,
    /// Each recipient's messages (indices), for inboxes.
    pub mentions: HashMap<String, Vec<usize>>,
    /// Agent Mail messages (indices, oldest first) by bead id in lower
    /// case, for the task board's links.
    pub beads: HashMap<String, Vec<usize>>,
    open_streams: HashMap<String, usize>,
}

/// What drawing needs besides the pane's own state.
pub struct DrawContext<'a> {
    /// Colours.
    pub theme: &'a Theme,
    /// Names that count as mentions.
    pub names: &'a [String],
    /// Each recipient's cursor.
    pub cursors: &'a std::collections::BTreeMap<String, Cursor>,
    /// Thread states by root message id (shown on the root).
    pub threads: &'a std::collections::BTreeMap<u64, crate::vocab::ThreadState>,
    /// Spinner frame.
    pub spinner: usize,
    /// Offset from UTC for timestamps, in seconds.
    pub utc_offset: i32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::mentions;
    use chrono::TimeZone;

    fn entry(id: u64, from: &str, text: &str, reply_to: Option<u64>) -> ChannelEntry {
        ChannelEntry {
            id,
            timestamp: chrono::Utc
                .with_ymd_and_hms(2026, 1, 15, 10, 0, id as u32 % 60)
                .unwrap(),
            from: from.into(),
            message: text.into(),
            mentions: mentions::extract(text, &["coder".into(), "qa".into()], from),
            reply_to,
        }
    }

    fn push(c: &mut Channel, e: ChannelEntry) {
        let a = crate::protocols::annotate(&e.message);
        c.push(e, a);
    }

    #[test]
    fn threads_group_under_their_root() {
        let mut c = Channel::default();
        push(&mut c, entry(1, "user", "root @coder", None));
        push(&mut c, entry(2, "qa", "other", None));
        push(&mut c, entry(3, "coder", "answer", Some(1)));
        push(&mut c, entry(4, "qa", "deeper", Some(3)));
        let ids: Vec<(u64, u8)> = c
            .order
            .iter()
            .map(|(i, d)| (c.messages[*i].entry.id, *d))
            .collect();
        assert_eq!(ids, [(1, 0), (3, 1), (4, 1), (2, 0)]);
        c.set_filter(Filter {
            from: Some("qa".into()),
            ..Filter::default()
        });
        assert_eq!(c.order.len(), 2);
    }

    #[test]
    fn streams_grow_in_their_first_message() {
        let mut c = Channel::default();
        push(
            &mut c,
            entry(
                1,
                "w",
                "=== AOP-STREAM | chunk=1/2 ===\nhello \n=== END-AOP-STREAM ===\n",
                None,
            ),
        );
        assert!(c.streaming());
        push(
            &mut c,
            entry(
                2,
                "w",
                "=== AOP-STREAM | chunk=2/2 ===\nworld\n=== END-AOP-STREAM ===\n",
                None,
            ),
        );
        assert!(!c.streaming());
        assert_eq!(c.order.len(), 1);
        assert_eq!(c.messages[0].stream_more.len(), 1);
    }

    #[test]
    fn a_reply_out_of_view_is_announced_and_the_view_stays_put() {
        let mut c = Channel::default();
        for id in 1..=50 {
            push(&mut c, entry(id, "qa", "hello", None));
        }
        c.drawn.top = (40, 0);
        c.drawn.bottom = 49;
        c.view = View::Top(40, 0);
        let a = crate::protocols::annotate("late answer");
        let note = c.push(entry(51, "coder", "late answer", Some(2)), a);
        assert!(note.unwrap().contains("thread of #2"));
        assert_eq!(c.view, View::Top(41, 0), "still on the same message");
        let (i, depth) = c.order[2];
        assert_eq!((c.messages[i].entry.id, depth), (51, 1));
    }

    #[test]
    fn duplicate_and_old_ids_are_ignored() {
        let mut c = Channel::default();
        push(&mut c, entry(5, "qa", "a", None));
        push(&mut c, entry(5, "qa", "a", None));
        push(&mut c, entry(3, "qa", "a", None));
        assert_eq!(c.messages.len(), 1);
    }
}
