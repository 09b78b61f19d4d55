//! Command-line definitions.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

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

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check a workflow file and print a summary of what it would start.
    Validate {
        /// The workflow file (YAML).
        file: PathBuf,
        /// Instance name used to show where the context would live
        /// (default: the workflow file's name).
        #[arg(long)]
        instance: Option<String>,
        /// Also connect to every host agents run on (`hosts:`): reachable,
        /// authentication accepted, the agents' CLIs installed there.
        #[arg(long)]
        check_hosts: bool,
    },
    /// Open the control room (the same as `awtui <file>`): the workflow
    /// runs in a background host (started, or found running) and the
    /// screen shows it live. `q` asks: stop the agents (y; the instance
    /// stays on disk to be resumed) or detach (d; it keeps running).
    Open {
        /// The workflow file (YAML).
        file: PathBuf,
        /// Instance name (its context lives in .workflow/<instance>/;
        /// default: the workflow file's name, e.g. `review` for review.yaml).
        #[arg(long)]
        instance: Option<String>,
    },
    /// Run a workflow headless until every agent is idle, printing each
    /// channel message as it arrives (stdout) and status changes (stderr).
    Run {
        /// The workflow file (YAML).
        file: PathBuf,
        /// Instance name (its context lives in .workflow/<instance>/;
        /// default: the workflow file's name, e.g. `review` for review.yaml).
        #[arg(long)]
        instance: Option<String>,
        /// Also show agent activity, document changes and counters (stderr);
        /// with --json, stream every event as a JSON line instead.
        #[arg(long)]
        verbose: bool,
        /// Print one JSON object with the whole result at the end (stdout).
        #[arg(long)]
        json: bool,
    },
    /// Start a workflow that keeps running until stopped (`awtui stop`).
    Start {
        /// The workflow file (YAML).
        file: PathBuf,
        /// Instance name (its context lives in .workflow/<instance>/;
        /// default: the workflow file's name, e.g. `review` for review.yaml).
        #[arg(long)]
        instance: Option<String>,
        /// Detach: run in the background (logs in the instance folder) and
        /// print its name and pid.
        #[arg(long)]
        background: bool,
        /// Also show agent activity, document changes and counters.
        #[arg(long)]
        verbose: bool,
        /// Print every event as a JSON line (with --background: the started
        /// instance as JSON).
        #[arg(long)]
        json: bool,
        /// Internal: this process is the detached child of --background.
        #[arg(long = "daemon-child", hide = true)]
        daemon_child: bool,
    },
    /// Stop an agent (agent, agent@instance), an instance (@instance) or
    /// everything (--all).
    Stop {
        /// agent, agent@instance or @instance (default: the only instance).
        target: Option<String>,
        /// Stop every running instance and standalone agent.
        #[arg(long, conflicts_with = "target")]
        all: bool,
        /// Then remove the instance's worktrees and branches (workspace:
        /// worktree) that are merged or discarded; works on an instance
        /// that is not running too (@instance, repository of the current
        /// folder).
        #[arg(long, conflicts_with = "all")]
        clean: bool,
        /// With --clean: remove unmerged work and uncommitted changes too.
        #[arg(long, requires = "clean")]
        force: bool,
    },
    /// List running instances and standalone agents: NAME SOURCE STATUS
    /// UNREAD COST.
    #[command(alias = "ls")]
    List {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Post a message to a running instance as `user`.
    Send {
        /// The message (`-` reads it from standard input).
        message: String,
        /// agent@instance (adds the @mention), @instance (as is), or agent
        /// (a standalone agent, or an agent of the only running instance).
        #[arg(long)]
        to: Option<String>,
        /// Wait for the mentioned agents' replies and print them.
        #[arg(long)]
        wait: bool,
        /// With --wait: give up after this many seconds.
        #[arg(long, default_value_t = 600)]
        timeout: u64,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Show recent channel messages, or one agent's inbox.
    Peek {
        /// agent@instance (its inbox), @instance (the channel), or a
        /// standalone agent (its conversation).
        #[arg(long)]
        to: Option<String>,
        /// How many messages.
        #[arg(short = 'n', default_value_t = 20)]
        n: usize,
        /// Only Agent Mail messages of this type (HELP_REQUEST, PROGRESS, …).
        #[arg(long = "type")]
        kind: Option<String>,
        /// Only Agent Mail messages about this bead.
        #[arg(long)]
        bead: Option<String>,
        /// Also show the task board (with --json: one object with
        /// `messages` and `tasks`).
        #[arg(long)]
        tasks: bool,
        /// JSON output (an inbox's items as inbox_check returns them:
        /// id, timestamp, from, message, priority, state).
        #[arg(long)]
        json: bool,
    },
    /// Allow a tool call an agent's CLI asks about (`permissions: ask`), or
    /// list what waits when no request is given.
    Approve {
        #[command(flatten)]
        decision: DecisionArgs,
    },
    /// Deny a tool call an agent's CLI asks about; the model gets the
    /// reason.
    Deny {
        #[command(flatten)]
        decision: DecisionArgs,
    },
    /// The task board of a running instance: tasks grouped by status with
    /// holder, dependencies, last checkpoint and age.
    Tasks {
        /// The instance (default: the only one running).
        instance: Option<String>,
        /// The whole board as JSON.
        #[arg(long)]
        json: bool,
    },
    /// An agent's changes in its worktree (workspace: worktree) against its
    /// base, or one turn's; found from the repository of the current folder.
    Diff {
        /// agent or agent@instance.
        target: String,
        /// Only this turn's changes (the agent's turns are numbered on its
        /// branch: 1, 2, …).
        #[arg(long)]
        turn: Option<u32>,
        /// Files and line counts only.
        #[arg(long)]
        stat: bool,
        /// A folder of the repository (default: the current folder).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Merge an agent's branch into the branch it was based on: a
    /// fast-forward when possible, else a merge commit. A conflict lists
    /// the files and changes nothing.
    Merge {
        /// agent or agent@instance.
        target: String,
        /// Always make a merge commit.
        #[arg(long)]
        no_ff: bool,
        /// The branch to merge into (default: the one the workspace was
        /// based on).
        #[arg(long)]
        into: Option<String>,
        /// A folder of the repository (default: the current folder).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Undo one turn of an agent: a revert commit on its branch.
    Revert {
        /// agent or agent@instance.
        target: String,
        /// The turn to undo (as `awtui diff --turn` numbers them).
        #[arg(long)]
        turn: u32,
        /// A folder of the repository (default: the current folder).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Mark an agent's workspace discarded: `awtui stop --clean` then
    /// removes its worktree and branch although it is not merged.
    Discard {
        /// agent or agent@instance.
        target: String,
        /// A folder of the repository (default: the current folder).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Create and start a standalone agent (in the background, working in
    /// the current directory).
    New {
        /// Its name (send --to <name> talks to it).
        name: String,
        /// Model (an anthropic/, openai/ or ollama/ prefix picks the backend).
        #[arg(long)]
        model: Option<String>,
        /// Backend (default: claude, unless --model or --command decides).
        #[arg(long)]
        backend: Option<String>,
        /// System prompt: text, or a file to read it from.
        #[arg(long)]
        system: Option<String>,
        /// Keep its conversation and a notes document on disk (otherwise the
        /// conversation lives in memory while it runs).
        #[arg(long)]
        context: bool,
        /// Program for the command backend.
        #[arg(long)]
        command: Option<String>,
        /// Print the started agent as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The control room on an instance that is already running; quitting
    /// detaches and leaves it running.
    Attach {
        /// The instance (default: the only or current one).
        instance: Option<String>,
        /// Follow in plain text instead of the screen (also without a
        /// terminal): lines typed are posted, Ctrl-C detaches.
        #[arg(long)]
        follow: bool,
    },
    /// Serve every running instance to a browser (the channel, approvals,
    /// what waits for you) until Ctrl-C; prints the address to open.
    Web {
        /// The port (0: any free one).
        #[arg(long, default_value_t = crate::web::DEFAULT_PORT)]
        port: u16,
        /// Listen on this address instead of 127.0.0.1 (needs
        /// --allow-remote unless it is a loopback address).
        #[arg(long, default_value = "127.0.0.1")]
        listen: std::net::IpAddr,
        /// Allow a --listen address other than loopback.
        #[arg(long)]
        allow_remote: bool,
        /// Make a new access token first; the old one stops working.
        #[arg(long)]
        new_token: bool,
    },
    /// Write a starter review.yaml and its prompts into the current folder.
    Init,
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
        /// The running instance (default: with --workflow, that workflow's
        /// own; otherwise the only one running in the folder).
        #[arg(long)]
        instance: Option<String>,
        /// The agent to act as (its token comes from AWTUI_TOKEN or the
        /// instance's token folder in the per-user state dir).
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
    Check {
        /// Exit non-zero when anything is wrong (lenient mode only warns).
        #[arg(long)]
        strict: bool,
        /// A file, or `-` for standard input.
        source: PathBuf,
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
    /// Read the channel (the newest, after `since`, or a page with
    /// `--after` / `--before`), acknowledging your mentions.
    Read {
        #[arg(long, conflicts_with_all = ["after", "before"])]
        since: Option<String>,
        #[command(flatten)]
        page: PageArgs,
        #[arg(long)]
        limit: Option<u64>,
    },
    /// Read the channel's newest messages (or a page) without acknowledging
    /// anything.
    Peek {
        #[command(flatten)]
        page: PageArgs,
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
    /// Every context tool an agent can call, with what it does and its
    /// arguments (or only NAME's); needs no running instance.
    Tools {
        /// One tool.
        name: Option<String>,
    },
    /// Call any context tool by name with a JSON object of arguments (the
    /// task tools, for instance: `ctx call task_claim '{"task_id":…}'`);
    /// prints its JSON result.
    Call {
        tool: String,
        /// The arguments as a JSON object (default `{}`; `-` reads stdin).
        args: Option<String>,
    },
}

/// Paging through the channel's whole history; `--json` output carries
/// `next`, the position of the following page.
#[derive(Debug, clap::Args)]
pub struct PageArgs {
    /// The oldest messages after this id (0: from the start) or time.
    #[arg(long, conflicts_with = "before")]
    pub after: Option<String>,
    /// The newest messages before this id.
    #[arg(long)]
    pub before: Option<String>,
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

/// `awtui approve` / `awtui deny`: which request, how, where.
#[derive(Clone, Debug, clap::Args)]
pub struct DecisionArgs {
    /// The request's number (`#3` or `3`); without it, list what waits.
    pub request: Option<String>,
    /// Keep the decision for this agent: for the call's exact command or
    /// file, or for RULE (such as 'Bash(git status*)') when given.
    #[arg(long, value_name = "RULE", num_args = 0..=1, default_missing_value = "")]
    pub always: Option<String>,
    /// Why (the model sees it when denied).
    #[arg(long)]
    pub reason: Option<String>,
    /// The instance (default: the only one running).
    #[arg(long)]
    pub instance: Option<String>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}
