//! What `awtui peek` (and `awtui web`'s older messages) ask of a running
//! instance, and the messages they get back, annotated.

use serde::{Deserialize, Serialize};

use super::channel::{ChannelEntry, DeliveryState};
use super::mentions::Priority;
use super::ops::ThreadState;
use super::pages::{Cut, MESSAGE_CAP};
use crate::protocols::Annotations;
use crate::protocols::agent_mail::MessageType;

/// Which messages `awtui peek` wants.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PeekQuery {
    /// An agent's (or `user`'s) inbox instead of the channel.
    #[serde(default)]
    pub agent: Option<String>,
    /// At most this many (the newest of the channel; the first of an inbox,
    /// which is ordered high priority first).
    pub limit: usize,
    /// Only Agent Mail messages of this type.
    #[serde(default)]
    pub kind: Option<MessageType>,
    /// Only Agent Mail messages about this bead.
    #[serde(default)]
    pub bead: Option<String>,
    /// Only messages before this id (paging back through the channel:
    /// `awtui web`'s "older messages").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<u64>,
    /// Only this message, whole (never shortened): how a page's shortened
    /// message is read in full (`awtui peek --message`, the web page's
    /// "show all").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<u64>,
}

/// One message of a peek, with what the protocols read in it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PeekItem {
    /// The message.
    pub entry: ChannelEntry,
    /// AOP blocks and the Agent Mail record, when there are any.
    #[serde(flatten)]
    pub annotations: Annotations,
    /// In an inbox: its priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Priority>,
    /// In an inbox: queued or delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<DeliveryState>,
    /// Whether the text was shortened for the page, and its whole size.
    #[serde(flatten)]
    pub cut: Cut,
    /// The state an agent's `done`, `fail` or `delete` gave the thread
    /// this message starts, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<ThreadState>,
}

/// The fields of an inbox item as every reader shows it (`inbox_check`,
/// `inbox_peek`, the `awtui://inbox/<agent>` resource, `awtui peek --json`
/// on an inbox, `awtui ctx inbox`): see [`inbox_item_json`].
pub const INBOX_ITEM_FIELDS: [&str; 6] =
    ["id", "timestamp", "from", "message", "priority", "state"];

/// Whether `item` has exactly the documented inbox item shape
/// ([`INBOX_ITEM_FIELDS`]), for the tests of every place that prints one.
pub fn has_inbox_item_shape(item: &serde_json::Value) -> bool {
    let mut keys: Vec<&str> = item
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let mut want = INBOX_ITEM_FIELDS.to_vec();
    keys.sort_unstable();
    want.sort_unstable();
    keys == want
}

/// One inbox item in the one documented shape:
/// `{id, timestamp, from, message, priority, state}`.
pub fn inbox_item_json(
    entry: &ChannelEntry,
    priority: Priority,
    state: DeliveryState,
) -> serde_json::Value {
    serde_json::json!({
        "id": entry.id,
        "timestamp": entry.timestamp_text(),
        "from": entry.from,
        "message": entry.message,
        "priority": priority,
        "state": state,
    })
}

impl PeekItem {
    /// What `awtui peek --json` prints: an inbox item (priority and state
    /// known) in the one inbox item shape `inbox_check` returns
    /// ([`inbox_item_json`]); a channel message as itself
    /// with its annotations. A shortened message says so either way
    /// (`truncated`, and its whole size in `bytes`).
    pub fn to_json(&self) -> serde_json::Value {
        match (self.priority, self.state) {
            (Some(priority), Some(state)) => {
                let mut item = inbox_item_json(&self.entry, priority, state);
                if let (Some(object), Some(bytes)) = (item.as_object_mut(), self.cut.bytes) {
                    object.insert("truncated".into(), self.cut.truncated.into());
                    object.insert("bytes".into(), bytes.into());
                }
                if let (Some(object), Some(thread)) = (item.as_object_mut(), &self.thread) {
                    object.insert(
                        "thread".into(),
                        serde_json::to_value(thread).unwrap_or_default(),
                    );
                }
                item
            }
            _ => serde_json::to_value(self).unwrap_or_default(),
        }
    }

    /// One message as a page shows it: at most [`MESSAGE_CAP`] bytes of
    /// its text (marked when shortened), annotated.
    pub fn shown(mut entry: ChannelEntry) -> PeekItem {
        let cut = Cut::shorten(&mut entry, MESSAGE_CAP);
        PeekItem {
            annotations: crate::protocols::annotate(&entry.message),
            entry,
            priority: None,
            state: None,
            cut,
            thread: None,
        }
    }
}
