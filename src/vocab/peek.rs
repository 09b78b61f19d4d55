//! What `awtui peek` (and `awtui web`'s older messages) ask of a running
//! instance, and the messages they get back, annotated.

use serde::{Deserialize, Serialize};

use super::channel::{ChannelEntry, DeliveryState};
use super::mentions::Priority;
use super::ops::ThreadState;
use super::pages::Cut;
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
