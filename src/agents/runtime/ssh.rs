//! `host: NAME`: the agent's CLI on another machine, through the system's
//! OpenSSH client.

/// The OpenSSH client awtui runs.
pub const SSH: &str = "ssh";
