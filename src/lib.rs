//! awtui: a terminal control room for teams of coding agents.
pub mod agents;
pub mod approvals;
pub mod batch_writer;
pub mod cli;
pub mod commands;
pub mod context;
pub mod duration;
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
pub mod protocols;
pub mod sanitize;
pub mod secrets;
pub mod tasks;
#[warn(missing_docs)]
pub mod tui;
pub mod vocab;
#[warn(missing_docs)]
pub mod web;
pub mod workflow;
pub mod workspace;
