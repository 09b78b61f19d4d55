//! The command line's grammar: the top-level parser and the table of
//! subcommands. Each subcommand's arguments are declared once, as a
//! `clap::Args` struct next to the command that takes them
//! ([`crate::commands`]), and handed to it whole.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::commands::{
    aop_check, approve, attach, ctx, diff, list, new, peek, reset, run, send, start, startup, stop,
    tasks, validate, web, workspace,
};

/// awtui: a terminal control room for teams of coding agents.
///
/// `awtui <workflow.yaml>` opens the control room (the same as `awtui open`);
/// `awtui` alone opens the list of every running instance.
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
    /// The workflow file to open in the control room (without it: the list
    /// of every running instance and what needs your attention).
    pub file: Option<PathBuf>,
    /// Instance name (its context lives in .workflow/<instance>/; default:
    /// the workflow file's name, e.g. `review` for review.yaml).
    #[arg(long)]
    pub instance: Option<String>,
}

/// The subcommands. Each carries its arguments as one `clap::Args` struct,
/// defined next to the command in [`crate::commands`] and handed to its
/// `run` whole.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check a workflow file and print a summary of what it would start.
    Validate(validate::ValidateArgs),
    /// Open the control room (the same as `awtui <file>`): the workflow
    /// runs in a background host (started, or found running) and the
    /// screen shows it live. `q` stops it (the instance stays on disk to
    /// be resumed); while an agent is in a turn it asks: stop (y) or
    /// detach (d; it keeps running).
    Open(startup::WorkflowArgs),
    /// Run a workflow headless until every agent is idle, printing each
    /// channel message as it arrives (stdout) and status changes (stderr).
    Run(run::RunArgs),
    /// Start a workflow that keeps running until stopped (`awtui stop`).
    Start(start::StartArgs),
    /// Stop an agent (agent, agent@instance), an instance (@instance) or
    /// everything (--all).
    Stop(stop::StopArgs),
    /// Start an instance afresh: stop it if it runs, then remove its
    /// channel, documents, tasks, worktrees and branches (asks, or --yes).
    Reset(reset::ResetArgs),
    /// List running instances and standalone agents: NAME SOURCE STATUS
    /// UNREAD COST.
    #[command(alias = "ls")]
    List(list::ListArgs),
    /// Post a message to a running instance as `user`.
    Send(send::SendArgs),
    /// Show recent channel messages, or one agent's inbox.
    Peek(peek::PeekArgs),
    /// Allow a tool call an agent's CLI asks about (`permissions: ask`), or
    /// list what waits when no request is given.
    Approve(approve::DecisionArgs),
    /// Deny a tool call an agent's CLI asks about; the model gets the
    /// reason.
    Deny(approve::DecisionArgs),
    /// The task board of a running instance: tasks grouped by status with
    /// holder, dependencies, last checkpoint and age.
    Tasks(tasks::TasksArgs),
    /// An agent's changes in its worktree (workspace: worktree) against its
    /// base, or one turn's; found from the repository of the current folder.
    Diff(diff::DiffArgs),
    /// Merge an agent's branch into the branch it was based on: a
    /// fast-forward when possible, else a merge commit. A conflict lists
    /// the files and changes nothing.
    Merge(workspace::MergeArgs),
    /// Undo one turn of an agent: a revert commit on its branch.
    Revert(workspace::RevertArgs),
    /// Mark an agent's workspace discarded: `awtui stop --clean` then
    /// removes its worktree and branch although it is not merged.
    Discard(workspace::DiscardArgs),
    /// Create and start a standalone agent (in the background, working in
    /// the current directory).
    New(new::NewArgs),
    /// The control room on an instance that is already running; quitting
    /// detaches and leaves it running.
    Attach(attach::AttachArgs),
    /// Serve every running instance to a browser (the channel, approvals,
    /// what waits for you) until Ctrl-C; prints the address to open.
    Web(web::WebArgs),
    /// Write a starter review.yaml and its prompts into the current folder.
    Init,
    /// The shared context from the shell, as the agent awtui started
    /// (uses AWTUI_MCP_URL and AWTUI_TOKEN).
    Ctx(ctx::CtxArgs),
    /// Serve the running instance's context MCP tools on stdin/stdout, for
    /// agent CLIs that only start stdio servers (a relay: it never serves a
    /// context of its own; exits with code 3 when the instance is not running).
    Mcp(crate::mcp::bridge::BridgeArgs),
    /// Add an agent to a running instance without editing its workflow
    /// file (kept for the instance's next starts).
    Agent {
        #[command(subcommand)]
        command: crate::commands::agent::AgentCommand,
    },
    /// Agent Output Protocol tools.
    Aop {
        #[command(subcommand)]
        command: AopCommand,
    },
    /// Agent Mail tools.
    Mail {
        #[command(subcommand)]
        command: MailCommand,
    },
}

/// `awtui mail …`.
#[derive(Debug, Subcommand)]
pub enum MailCommand {
    /// Check one Agent Mail status message (PROGRESS, HELP_REQUEST, …; leading
    /// @mentions are skipped) and print each problem.
    Check(aop_check::CheckArgs),
}

/// `awtui aop …`.
#[derive(Debug, Subcommand)]
pub enum AopCommand {
    /// Validate agent output and print each finding with its line.
    Check(aop_check::CheckArgs),
}
