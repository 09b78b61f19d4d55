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
    /// Agent Output Protocol tools.
    Aop {
        #[command(subcommand)]
        command: AopCommand,
    },
}

/// `awtui aop …`.
#[derive(Debug, Subcommand)]
pub enum AopCommand {
    /// Validate agent output and print each finding with its line.
    Check {
        /// Exit non-zero when anything is wrong (lenient mode only warns).
        #[arg(long)]
        strict: bool,
        /// A file, or `-` for standard input.
        source: PathBuf,
    },
}
