//! Command-line definitions.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// awtui: a terminal control room for teams of coding agents.
///
/// `awtui <workflow.yaml>` opens the control room (the same as `awtui open`).
#[derive(Debug, Parser)]
#[command(
    name = "awtui",
    version,
    about,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The workflow file to open in the control room.
    #[arg(required = true)]
    pub file: Option<PathBuf>,
    /// Instance name (its context lives in .workflow/<instance>/).
    #[arg(long, default_value = crate::workflow::DEFAULT_INSTANCE)]
    pub instance: String,
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
    /// Open the control room: start the workflow and show it live (the
    /// same as `awtui <file>`). Quitting stops the agents and leaves the
    /// instance on disk to be resumed.
    Open {
        /// The workflow file (YAML).
        file: PathBuf,
        /// Instance name (its context lives in .workflow/<instance>/).
        #[arg(long, default_value = crate::workflow::DEFAULT_INSTANCE)]
        instance: String,
    },
    /// Run a workflow headless until every agent is idle, printing each
    /// channel message as it arrives.
    Run {
        /// The workflow file (YAML).
        file: PathBuf,
        /// Instance name (its context lives in .workflow/<instance>/).
        #[arg(long, default_value = crate::workflow::DEFAULT_INSTANCE)]
        instance: String,
    },
    /// The shared context from the shell, as the agent awtui started
    /// (uses AWTUI_MCP_URL and AWTUI_TOKEN).
    Ctx {
        /// Print the tool's JSON result.
        #[arg(long, global = true)]
        json: bool,
        #[command(subcommand)]
        command: CtxCommand,
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

/// `awtui ctx …`: one context tool each.
#[derive(Debug, Subcommand)]
pub enum CtxCommand {
    /// Post to the channel (the message, or standard input).
    Send { message: Option<String> },
    /// Read the channel after `since`, acknowledging your mentions.
    Read {
        #[arg(long)]
        since: Option<String>,
        #[arg(long)]
        limit: Option<u64>,
    },
    /// Read the channel's newest messages without acknowledging anything.
    Peek {
        #[arg(long)]
        limit: Option<u64>,
    },
    /// Your unread mentions (marks them delivered; `--peek` changes nothing).
    Inbox {
        #[arg(long)]
        peek: bool,
    },
    /// Acknowledge your inbox up to a message id or timestamp.
    Ack { until: String },
    /// Who is in the workflow.
    Agents,
    /// Shared documents.
    Doc {
        #[command(subcommand)]
        command: DocCommand,
    },
}

/// `awtui ctx doc …`. Without a file, the entry document.
#[derive(Debug, Subcommand)]
pub enum DocCommand {
    /// Print a document.
    Read { file: Option<String> },
    /// Replace a document with `--text` or standard input.
    Write {
        file: Option<String>,
        #[arg(long)]
        text: Option<String>,
    },
    /// Append `--text` or standard input to a document.
    Append {
        file: Option<String>,
        #[arg(long)]
        text: Option<String>,
    },
    /// List the documents.
    List,
    /// Create a document that does not exist yet.
    Create {
        file: String,
        #[arg(long)]
        text: Option<String>,
    },
    /// Delete a document.
    Delete { file: String },
}
