//! Command-line definitions.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// awtui: a terminal control room for teams of coding agents.
#[derive(Debug, Parser)]
#[command(name = "awtui", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check a workflow file and print a summary of what it would start.
    Validate {
        /// The workflow file (YAML).
        file: PathBuf,
        /// Instance name used to show where the context would live.
        #[arg(long, default_value = crate::workflow::DEFAULT_INSTANCE)]
        instance: String,
    },
    /// Serve the running instance's context MCP tools on stdin/stdout, for
    /// agent CLIs that only start stdio servers (a relay: it never serves a
    /// context of its own; exits with code 3 when the instance is not running).
    Mcp {
        /// The running instance.
        #[arg(long, default_value = crate::workflow::DEFAULT_INSTANCE)]
        instance: String,
        /// The agent to act as (its token comes from AWTUI_TOKEN or the
        /// instance's tokens folder).
        #[arg(long)]
        agent: String,
        /// The folder holding .workflow/<instance>/ (default: the current
        /// directory).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// The workflow file, whose context settings say where the instance
        /// lives.
        #[arg(long, conflicts_with = "dir")]
        workflow: Option<PathBuf>,
    },
}
