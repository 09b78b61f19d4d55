//! awtui: a terminal control room for teams of coding agents.
pub use awtui_state::{approvals, batch_writer, context, fsutil, journal, secrets, tasks};
pub use awtui_tui as tui;
pub use awtui_vocab as vocab;
pub use awtui_vocab::{duration, protocols, sanitize};

pub mod agents;
pub mod cli;
pub mod commands;
pub mod engine;
pub mod http_client;
#[warn(missing_docs)]
pub mod instance;
#[warn(missing_docs)]
pub mod mcp;
pub mod output;
#[warn(missing_docs)]
pub mod web;
pub mod workflow;
pub mod workspace;
