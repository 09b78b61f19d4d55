//! What agent operations leave behind: thread states, deferred messages,
//! surfaced items.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize};

/// Where a thread stands after `done`, `fail` or `delete`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ThreadState {
    Done { by: String },
    Failed { by: String, reason: String },
    Deleted { by: String },
}

impl ThreadState {
    /// What the state says on the message it closes, in every front end:
    /// `done by coder`, `failed by coder: why`, `deleted by coder`
    /// (agent text: a terminal front end sanitizes it).
    pub fn label(&self) -> String {
        match self {
            ThreadState::Done { by } => format!("done by {by}"),
            ThreadState::Failed { by, reason } => format!("failed by {by}: {reason}"),
            ThreadState::Deleted { by } => format!("deleted by {by}"),
        }
    }
}

/// A message an agent put off, to be delivered to it again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Deferred {
    pub agent: String,
    pub id: u64,
    /// `None`: at the agent's next wake.
    pub until: Option<DateTime<Utc>>,
}

/// Something an agent surfaced for people to pick up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Surfaced {
    pub by: String,
    pub description: String,
    pub at: DateTime<Utc>,
}

/// The operations' lasting effects.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpsState {
    /// Thread states by root message id.
    #[serde(default, deserialize_with = "u64_keys")]
    pub threads: BTreeMap<u64, ThreadState>,
    pub deferred: Vec<Deferred>,
    pub surfaced: Vec<Surfaced>,
}

/// A map keyed by message ids, read from JSON's string keys. Serde reads
/// integer keys only from the top of a document: inside a tagged enum (a
/// snapshot in a `Reply`) they come as strings, and a snapshot with one
/// thread state could not be read by any front end.
fn u64_keys<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<u64, ThreadState>, D::Error> {
    BTreeMap::<String, ThreadState>::deserialize(d)?
        .into_iter()
        .map(|(k, v)| {
            k.parse()
                .map(|k| (k, v))
                .map_err(|_| serde::de::Error::custom(format!("'{k}' is not a message id")))
        })
        .collect()
}

impl OpsState {
    /// The earliest time a deferred message is due.
    pub fn next_due(&self) -> Option<DateTime<Utc>> {
        self.deferred.iter().filter_map(|d| d.until).min()
    }

    /// Removes and returns the timed deferrals due at `now`.
    pub fn take_due(&mut self, now: DateTime<Utc>) -> Vec<Deferred> {
        self.take_where(|d| d.until.is_some_and(|t| t <= now))
    }

    /// The ids `agent` put off until its next wake (`defer: <id>` without
    /// a time), oldest first: the turn that wakes it delivers them again
    /// among its new messages. They stay deferred until a turn that had
    /// them succeeds ([`OpsState::forget_next_wake`]), so a failed turn's
    /// retry has them too.
    pub fn next_wake(&self, agent: &str) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .deferred
            .iter()
            .filter(|d| d.until.is_none() && d.agent == agent)
            .map(|d| d.id)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// A turn of `agent` that had `ids` again succeeded: they are no
    /// longer deferred.
    pub fn forget_next_wake(&mut self, agent: &str, ids: &[u64]) {
        self.take_where(|d| d.until.is_none() && d.agent == agent && ids.contains(&d.id));
    }

    fn take_where(&mut self, due: impl Fn(&Deferred) -> bool) -> Vec<Deferred> {
        let (due, keep): (Vec<Deferred>, Vec<Deferred>) =
            self.deferred.drain(..).partition(|d| due(d));
        self.deferred = keep;
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 36: a snapshot whose threads have a state reaches front ends
    /// (it travels inside a tagged `Reply`).
    #[test]
    fn thread_states_survive_a_tagged_envelope() {
        #[derive(Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "reply", rename_all = "snake_case")]
        enum Envelope {
            Snapshot { ops: OpsState },
        }
        let mut ops = OpsState::default();
        ops.threads
            .insert(12, ThreadState::Done { by: "coder".into() });
        let sent = Envelope::Snapshot { ops };
        let json = serde_json::to_string(&sent).unwrap();
        assert_eq!(serde_json::from_str::<Envelope>(&json).unwrap(), sent);
        assert!(
            serde_json::from_str::<OpsState>(
                r#"{"threads":{"x":{"state":"done","by":"a"}},"deferred":[],"surfaced":[]}"#
            )
            .is_err()
        );
    }
}
