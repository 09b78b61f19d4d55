//! awtui: a terminal control room for teams of coding agents.
pub mod cli;
pub mod context;
pub mod fsutil;
#[warn(missing_docs)]
pub mod mcp;
pub mod protocols;
pub mod workflow;
