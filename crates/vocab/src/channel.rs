//! The channel's words: a message, a position in the channel, where a
//! message stands for a recipient, and how a document changed.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

/// One message of the channel. `id` is unique and strictly increasing; it is
/// what cursors, acks and agent operations refer to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChannelEntry {
    pub id: u64,
    #[serde(with = "timestamp_format")]
    pub timestamp: DateTime<Utc>,
    pub from: String,
    /// The message exactly as sent (not trimmed).
    pub message: String,
    /// Mentioned agents (and `user`), deduplicated, in order of appearance.
    pub mentions: Vec<String>,
    /// The message this one answers (agent operations `reply` and
    /// `delegate`); a thread is a root message and its replies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<u64>,
}

impl ChannelEntry {
    /// The timestamp as written on disk and in tool results.
    pub fn timestamp_text(&self) -> String {
        format_timestamp(&self.timestamp)
    }
}

/// RFC 3339 with milliseconds and `Z`, as on disk and in tool results.
pub fn format_timestamp(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

mod timestamp_format {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::format_timestamp(t))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        let text = String::deserialize(d)?;
        DateTime::parse_from_rfc3339(&text)
            .map(|t| t.with_timezone(&Utc))
            .map_err(serde::de::Error::custom)
    }
}

/// A position in the channel given by a caller: an entry id or a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Since {
    Id(u64),
    Time(DateTime<Utc>),
}

/// Where one message stands for one recipient.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryState {
    /// Not yet handed to the recipient.
    Queued,
    /// Handed over (in a prompt or an `inbox_check`), not yet acknowledged.
    Delivered,
    /// Acknowledged by the recipient.
    Acked,
}

/// A recipient's progress through its inbox: everything up to `delivered`
/// was handed over, everything up to `acked` was acknowledged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    pub acked: u64,
    pub delivered: u64,
}

impl Cursor {
    /// Where message `id` (which mentions this cursor's owner) stands.
    pub fn state_of(&self, id: u64) -> DeliveryState {
        if id <= self.acked {
            DeliveryState::Acked
        } else if id <= self.delivered {
            DeliveryState::Delivered
        } else {
            DeliveryState::Queued
        }
    }
}

/// Whether every addressee of message `mentions` acknowledged it, given
/// where the message stands for each (`state_of`; `None`: not in that
/// recipient's inbox). A message addressed to nobody has nobody to wait
/// for and is not acknowledged. The one rule behind an Agent Mail
/// record's `acknowledged` in `run --json`, `peek --json`, the control
/// room and the web page.
pub fn acked_by_all(mentions: &[String], state_of: impl Fn(&str) -> Option<DeliveryState>) -> bool {
    !mentions.is_empty()
        && mentions
            .iter()
            .all(|m| state_of(m) == Some(DeliveryState::Acked))
}

/// What happened to a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DocumentChange {
    /// Its content was replaced.
    Written,
    /// Text was added at its end.
    Appended,
    /// It was created.
    Created,
    /// It was deleted.
    Deleted,
}

impl Since {
    /// Parses `42`, `#42` or an RFC 3339 / ISO 8601 timestamp.
    pub fn parse(text: &str) -> Result<Since, SinceError> {
        let t = text.trim();
        let digits = t.strip_prefix('#').unwrap_or(t);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return digits
                .parse()
                .map(Since::Id)
                .map_err(|_| SinceError { value: text.into() });
        }
        DateTime::parse_from_rfc3339(t)
            .map(|d| Since::Time(d.with_timezone(&Utc)))
            .map_err(|_| SinceError { value: text.into() })
    }
}

/// Text that is neither a message id nor a timestamp.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{value}' is neither a message id nor an RFC 3339 timestamp (such as 2026-01-15T10:05:00.000Z)"
)]
pub struct SinceError {
    /// The text as given.
    pub value: String,
}
