//! How much of the channel one page may carry (issue 34): an agent writes
//! what it likes into the channel, so every page that shows it — `awtui
//! peek`, the web page's first load, its "older" pages and its live
//! stream, a front end's snapshot — is bounded in bytes, not only in
//! messages. A message longer than [`MESSAGE_CAP`] is shown shortened and
//! marked ([`Cut`]: `truncated` and its whole size in `bytes`); a page
//! keeps the newest messages whose JSON fits [`MESSAGES_BUDGET`] and says
//! how many older ones it left out. The whole message stays one request
//! away (`awtui peek --message ID`, `GET /api/instances/<id>/messages/<msg>`).

use serde::{Deserialize, Serialize};

use super::channel::ChannelEntry;

/// At most this many bytes of one message's text are shown on a page.
pub const MESSAGE_CAP: usize = 64 * 1024;
/// What a whole page may weigh: the web page's first load, an "older" page,
/// `awtui peek`'s output.
pub const PAGE_BUDGET: usize = 2 * 1024 * 1024;
/// What the messages of a page may weigh (as JSON), leaving the rest of
/// [`PAGE_BUDGET`] to what comes with them (agents, tasks, documents).
pub const MESSAGES_BUDGET: usize = PAGE_BUDGET - 512 * 1024;

/// Whether a shown message was shortened, and how long it is whole.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cut {
    /// The text shown is the start of the message only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// The whole message's size in bytes (only when shortened).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<usize>,
}

impl Cut {
    /// Shortens `entry`'s text to at most `cap` bytes (on a character
    /// boundary) and says whether it did.
    pub fn shorten(entry: &mut ChannelEntry, cap: usize) -> Cut {
        let bytes = entry.message.len();
        if bytes <= cap {
            return Cut::default();
        }
        entry
            .message
            .truncate(entry.message.floor_char_boundary(cap));
        Cut {
            truncated: true,
            bytes: Some(bytes),
        }
    }

    /// The line a person reads under a shortened message: how much is
    /// shown and how to get the rest (`fetch` is the command or link).
    pub fn note(&self, shown: usize, fetch: &str) -> Option<String> {
        let bytes = self.bytes.filter(|_| self.truncated)?;
        Some(format!(
            "[shortened: the first {shown} of {bytes} bytes; the whole message: {fetch}]"
        ))
    }
}

impl Cut {
    /// `entry` with the note of its cut as a last line, for a front end
    /// that shows only the text (the control room after a snapshot).
    pub fn marked(&self, mut entry: ChannelEntry, instance: &str) -> ChannelEntry {
        let fetch = format!("awtui peek --message {} --to @{instance}", entry.id);
        if let Some(note) = self.note(entry.message.len(), &fetch) {
            entry.message.push('\n');
            entry.message.push_str(&note);
        }
        entry
    }
}

/// Whether a count is zero (such a count is left out of the JSON).
pub fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The size of `value` as JSON, without building the text.
pub fn json_len<T: Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter fails only for values JSON cannot hold.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// Takes items (the newest, or the first in inbox order, first) while
/// their sizes add up to at most `budget`; stops at the first that does
/// not fit, so what is left out is always the older end. Returns the items
/// kept, in the order given.
pub fn within_budget<T>(
    items: impl IntoIterator<Item = T>,
    budget: usize,
    size: impl Fn(&T) -> usize,
) -> Vec<T> {
    let mut used = 0usize;
    let mut kept = Vec::new();
    for item in items {
        used = used.saturating_add(size(&item));
        if used > budget {
            break;
        }
        kept.push(item);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> ChannelEntry {
        ChannelEntry {
            id: 3,
            timestamp: chrono::DateTime::UNIX_EPOCH,
            from: "a".into(),
            message: text.into(),
            mentions: vec![],
            reply_to: None,
        }
    }

    #[test]
    fn a_long_message_is_cut_on_a_character_boundary_and_marked() {
        let mut e = entry(&"é".repeat(10));
        let cut = Cut::shorten(&mut e, 5);
        assert_eq!(e.message, "éé");
        assert_eq!(
            cut,
            Cut {
                truncated: true,
                bytes: Some(20)
            }
        );
        assert_eq!(
            cut.note(4, "awtui peek --message 3").unwrap(),
            "[shortened: the first 4 of 20 bytes; the whole message: awtui peek --message 3]"
        );
        let mut short = entry("hi");
        assert_eq!(Cut::shorten(&mut short, 5), Cut::default());
        assert_eq!(short.message, "hi");
        assert_eq!(Cut::default().note(2, "x"), None);
        let marked = cut.marked(e.clone(), "i");
        assert!(
            marked
                .message
                .starts_with("éé\n[shortened: the first 4 of 20 bytes")
        );
        assert!(marked.message.ends_with("awtui peek --message 3 --to @i]"));
        assert_eq!(Cut::default().marked(e.clone(), "i"), e);
        // Unmarked messages carry no extra fields.
        assert_eq!(serde_json::to_string(&Cut::default()).unwrap(), "{}");
    }

    #[test]
    fn the_budget_keeps_the_front_and_stops_at_the_first_misfit() {
        let kept = within_budget([5, 4, 1, 1], 10, |n| *n);
        assert_eq!(kept, [5, 4, 1]);
        assert_eq!(within_budget([11, 1], 10, |n| *n), Vec::<usize>::new());
        assert_eq!(json_len(&serde_json::json!({"a": "b\u{1}"})), 15);
    }
}
