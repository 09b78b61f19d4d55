//! What agent operations leave behind: thread states, deferred messages,
//! surfaced items.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Where a thread stands after `done`, `fail` or `delete`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ThreadState {
    Done { by: String },
    Failed { by: String, reason: String },
    Deleted { by: String },
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
    pub threads: BTreeMap<u64, ThreadState>,
    pub deferred: Vec<Deferred>,
    pub surfaced: Vec<Surfaced>,
}
