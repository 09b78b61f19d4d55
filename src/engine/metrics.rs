//! The counters that outlive a run: each agent's turns, tokens and cost,
//! kept in `<instance>/agents/<name>/metrics.json` and loaded when the
//! instance opens again, so reopening does not reset them to 0. Unread
//! counts, steps and labels are not kept: they are rebuilt from the
//! channel and the agents' next messages.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::agents::runner::AgentMetrics;

/// The file's name in an agent's folder.
pub const FILE: &str = "metrics.json";

/// The lasting part of [`AgentMetrics`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Lasting {
    /// Turns started, over every run of the instance.
    pub turns: u32,
    /// Input tokens.
    pub tokens_in: u64,
    /// Output tokens.
    pub tokens_out: u64,
    /// Spend in US dollars.
    pub cost_usd: f64,
}

impl Lasting {
    /// The lasting counters of `m`.
    pub fn of(m: &AgentMetrics) -> Lasting {
        Lasting {
            turns: m.turns,
            tokens_in: m.tokens_in,
            tokens_out: m.tokens_out,
            cost_usd: m.cost_usd,
        }
    }

    /// Puts these counters into `m`.
    pub fn apply(&self, m: &mut AgentMetrics) {
        m.turns = self.turns;
        m.tokens_in = self.tokens_in;
        m.tokens_out = self.tokens_out;
        m.cost_usd = self.cost_usd;
    }
}

/// Where `agent`'s counters are kept in the instance folder `state_root`.
pub fn path(state_root: &Path, agent: &str) -> PathBuf {
    super::launch::agent_dir(state_root, agent).join(FILE)
}

/// The counters kept for `agent`: `None` when there are none; a file that
/// cannot be read is logged and counted as none (the counters only inform).
pub fn load(state_root: &Path, agent: &str) -> Option<Lasting> {
    let p = path(state_root, agent);
    let bytes = match crate::fsutil::read_record(&p) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::warn!("cannot read {}: {e}; counting from 0", p.display());
            return None;
        }
    };
    serde_json::from_slice(&bytes)
        .inspect_err(|e| tracing::warn!("{} is damaged ({e}); counting from 0", p.display()))
        .ok()
}

/// The file's content for `lasting` (written behind the engine's loop,
/// atomically: a crash leaves the old or the new).
pub fn encode(lasting: &Lasting) -> std::io::Result<Vec<u8>> {
    serde_json::to_vec(lasting).map_err(std::io::Error::other)
}
