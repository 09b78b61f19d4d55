//! awtui: a terminal control room for teams of coding agents.
pub use awtui_vocab as vocab;
pub use awtui_vocab::{duration, protocols, sanitize};

pub mod agents;
pub mod approvals;
pub mod cli;
pub mod commands;
pub mod context;
pub mod engine;
pub mod fsutil;
pub mod http_client;
#[warn(missing_docs)]
pub mod instance;
#[warn(missing_docs)]
pub mod journal;
#[warn(missing_docs)]
pub mod mcp;
pub mod output;
pub mod secrets;
pub mod tasks;
#[warn(missing_docs)]
pub mod tui;
#[warn(missing_docs)]
pub mod web;
pub mod workflow;
pub mod workspace;
