//! `awtui agent add NAME --backend B [--workspace shared|worktree]
//! [--instance I]`: adds an agent to a running instance from the shell, as
//! the person (the same engine command as `n` in the control room and
//! `/agent add`), through the instance's control socket, whose token only
//! the person's own processes can read.

use super::{exit, remote};
use crate::engine::{Command, Reply};
use crate::vocab::agents::{NewAgent, WorkspaceMode};

/// `awtui agent …`.
#[derive(Debug, clap::Subcommand)]
pub enum AgentCommand {
    /// Add an agent to a running instance; it is kept, so the instance's
    /// next starts bring it back.
    Add(AddArgs),
}

/// `awtui agent add`: the agent and the instance.
#[derive(Clone, Debug, clap::Args)]
pub struct AddArgs {
    /// The agent's name (as @mentioned).
    pub name: String,
    /// Its backend (claude, codex, gemini, …), as `backend:` in a workflow.
    #[arg(long)]
    pub backend: String,
    /// shared or worktree (default: the workflow's `workspace:`).
    #[arg(long, value_parser = parse_workspace)]
    pub workspace: Option<WorkspaceMode>,
    /// The instance (default: the only one running).
    #[arg(long)]
    pub instance: Option<String>,
}

/// Reads `shared` or `worktree`.
fn parse_workspace(text: &str) -> Result<WorkspaceMode, String> {
    WorkspaceMode::parse(text).ok_or_else(|| format!("'{text}' is not shared or worktree"))
}

/// Runs `awtui agent …`; its exit code.
pub fn run(command: &AgentCommand) -> u8 {
    match command {
        AgentCommand::Add(args) => add(args),
    }
}

fn add(args: &AddArgs) -> u8 {
    let (resolved, rt) = match remote::resolve_option(args.instance.as_deref()) {
        Ok(found) => found,
        Err(code) => return code,
    };
    let agent = NewAgent {
        name: args.name.clone(),
        backend: args.backend.clone(),
        workspace: args.workspace,
    };
    rt.block_on(async move {
        let mut client = match remote::open(&resolved.info).await {
            Ok(c) => c,
            Err(code) => return code,
        };
        let what = format!("@{}", client.info.instance);
        match remote::command(&mut client, &what, Command::AddAgent { agent }).await {
            Ok(Reply::Said { text }) => {
                super::print::line(crate::sanitize::for_terminal(&text));
                exit::OK
            }
            Ok(_) => exit::OK,
            Err(code) => code,
        }
    })
}
