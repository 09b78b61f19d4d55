//! `awtui stop [target] [--all]`.
//!
//! - `agent@instance` (or `agent` when only one running instance has it)
//!   stops that agent: its turn ends (its whole process group), its unread
//!   messages stay, and it is not woken until restarted; the instance keeps
//!   running.
//! - `@instance`, a standalone agent's name, or no target with exactly one
//!   instance running stops the instance: every agent stops, state is
//!   flushed, and its process exits — the same as SIGTERM or Ctrl-C.
//! - `--all` stops every running instance and standalone agent.
//! - `--clean` (with `@instance`, or no target with one instance running)
//!   stops the instance if it runs, then removes its worktrees and branches
//!   that are merged or discarded; unmerged work and uncommitted changes
//!   stay unless `--force`. An instance that is not running is cleaned in
//!   the repository of the current folder.
//!
//! The command returns once the agent is stopped or the instance's process
//! has exited.

use crate::errln;
use std::time::{Duration, Instant};

use super::exit;
use super::remote;
use crate::agents::runner::AgentStatus;
use crate::context::mentions::USER;
use crate::engine::{Command, EngineEvent};
use crate::instance::process;
use crate::instance::registry::InstanceInfo;

/// How long an instance may take to stop (agents get a grace period each).
const STOP_WAIT: Duration = Duration::from_secs(60);
/// How often progress is checked while waiting.
const POLL: Duration = Duration::from_millis(50);

/// `awtui stop [target] [--all] [--clean [--force]]`.
#[derive(Clone, Debug, clap::Args)]
pub struct StopArgs {
    /// agent, agent@instance or @instance (default: the only instance).
    pub target: Option<String>,
    /// Stop every running instance and standalone agent.
    #[arg(long, conflicts_with = "target")]
    pub all: bool,
    /// Then remove the instance's worktrees and branches (workspace:
    /// worktree) that are merged or discarded; works on an instance
    /// that is not running too (@instance, repository of the current
    /// folder).
    #[arg(long, conflicts_with = "all")]
    pub clean: bool,
    /// With --clean: remove unmerged work and uncommitted changes too.
    #[arg(long, requires = "clean")]
    pub force: bool,
    /// Cancel only the agent's current turn (an ACP agent gets
    /// `session/cancel` and keeps its conversation); the agent stays
    /// runnable and the turn's messages count as handled.
    #[arg(long, conflicts_with_all = ["all", "clean"], requires = "target")]
    pub turn: bool,
}

/// Stops what the target names (or everything with `--all`); returns the
/// exit code.
pub fn run(args: &StopArgs) -> u8 {
    let target = args.target.as_deref();
    let Some(rt) = remote::runtime() else {
        return exit::FAILED;
    };
    rt.block_on(async move {
        if args.clean {
            return stop_and_clean(target, args.force).await;
        }
        if args.all {
            let running = match remote::running() {
                Ok(r) => r,
                Err(code) => return code,
            };
            if running.is_empty() {
                errln!("nothing is running");
            }
            let mut code = exit::OK;
            for info in &running {
                let c = stop_instance(info).await;
                if c != exit::OK {
                    code = c;
                }
            }
            return code;
        }
        let resolved = match remote::resolve(target) {
            Ok(r) => r,
            Err(code) => return code,
        };
        match resolved.agent {
            Some(agent) if agent == USER => {
                errln!("'user' is you: there is nothing to stop");
                exit::INVALID
            }
            Some(agent) if args.turn => cancel_turn(&resolved.info, &agent).await,
            Some(agent) if !resolved.info.standalone => stop_agent(&resolved.info, &agent).await,
            None if args.turn => {
                errln!("--turn cancels one agent's turn: name the agent (agent or agent@instance)");
                exit::INVALID
            }
            _ => stop_instance(&resolved.info).await,
        }
    })
}

/// `stop --clean [--force]`: stops the instance when it runs, then cleans
/// its workspaces.
async fn stop_and_clean(target: Option<&str>, force: bool) -> u8 {
    let name = match target {
        Some(t) => match t.strip_prefix('@').filter(|n| !n.is_empty()) {
            Some(n) => Some(n.to_string()),
            None => {
                errln!("--clean works on an instance: awtui stop @<instance> --clean");
                return exit::INVALID;
            }
        },
        None => None,
    };
    let running: Vec<InstanceInfo> = match remote::running() {
        Ok(r) => r
            .into_iter()
            .filter(|i| !i.standalone && name.as_ref().is_none_or(|n| &i.instance == n))
            .collect(),
        Err(code) => return code,
    };
    let (instance, dir) = match (running.as_slice(), name) {
        ([info], _) => {
            let code = stop_instance(info).await;
            if code != exit::OK {
                return code;
            }
            (info.instance.clone(), info.workdir.clone())
        }
        ([], Some(n)) => match std::env::current_dir() {
            Ok(d) => (n, d),
            Err(e) => {
                errln!("cannot read the current folder: {e}");
                return exit::FAILED;
            }
        },
        ([], None) => {
            errln!(
                "no instance is running: name the one to clean (awtui stop @<instance> --clean)"
            );
            return exit::INVALID;
        }
        (several, _) => {
            let names: Vec<String> = several
                .iter()
                .map(|i| format!("@{} ({})", i.instance, i.workdir.display()))
                .collect();
            let commands: Vec<String> = several
                .iter()
                .map(|i| format!("awtui stop --clean @{}", i.instance))
                .collect();
            errln!(
                "several instances are running: {}; say which: {}",
                names.join(", "),
                commands.join(", or ")
            );
            return exit::INVALID;
        }
    };
    super::workspace::clean(&dir, &instance, force)
}

/// `stop --turn agent`: cancels the agent's current turn and waits until
/// it no longer runs.
async fn cancel_turn(info: &InstanceInfo, agent: &str) -> u8 {
    let cancel = Command::Cancel {
        agent: agent.to_string(),
    };
    let done = |s: &AgentStatus| !s.in_turn();
    let said = format!("cancelled the turn of {}", info.address(agent));
    let late = format!("{}'s turn did not end", info.address(agent));
    command_and_wait(info, agent, cancel, done, &said, &late).await
}

async fn stop_agent(info: &InstanceInfo, agent: &str) -> u8 {
    let stop = Command::Stop {
        agent: agent.to_string(),
    };
    let done = |s: &AgentStatus| *s == AgentStatus::Stopped;
    let said = format!("stopped {}", info.address(agent));
    let late = format!("{} did not stop", info.address(agent));
    command_and_wait(info, agent, stop, done, &said, &late).await
}

/// Sends `command` about `agent`, then waits (at most [`STOP_WAIT`]) until
/// its status is `done`, saying `said` (or `late` when it took too long).
async fn command_and_wait(
    info: &InstanceInfo,
    agent: &str,
    command: Command,
    done: impl Fn(&AgentStatus) -> bool,
    said: &str,
    late: &str,
) -> u8 {
    let mut client = match remote::open(info).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    if let Err(code) = remote::command(&mut client, &info.address(agent), command).await {
        return code;
    }
    let deadline = Instant::now() + STOP_WAIT;
    loop {
        let status = match remote::status(&mut client).await {
            Ok(s) => s,
            Err(code) => return code,
        };
        if status
            .agents
            .iter()
            .any(|a| a.name == agent && done(&a.status))
        {
            super::print::line(said.to_string());
            return exit::OK;
        }
        if Instant::now() > deadline {
            errln!("{late} within {STOP_WAIT:?}");
            return exit::FAILED;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Shuts an instance down and waits until its process has exited.
pub async fn stop_instance(info: &InstanceInfo) -> u8 {
    let name = if info.standalone {
        info.instance.clone()
    } else {
        format!("@{}", info.instance)
    };
    let mut client = match remote::open(info).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    if let Err(e) = client.command(Command::Shutdown).await {
        errln!("{e}");
        return remote::control_failure(&e);
    }
    let deadline = Instant::now() + STOP_WAIT;
    // The final events, then end of file when it closes the endpoint.
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, client.next_event()).await {
            Ok(Ok(Some(EngineEvent::Finished { .. }))) | Ok(Ok(None)) | Ok(Err(_)) => break,
            Ok(Ok(Some(_))) => {}
            Err(_) => {
                errln!("{name} did not stop within {STOP_WAIT:?}");
                return exit::FAILED;
            }
        }
    }
    drop(client);
    while process::process_alive(info.pid) {
        if Instant::now() > deadline {
            errln!(
                "{name} finished but its process (pid {}) has not exited",
                info.pid
            );
            return exit::FAILED;
        }
        tokio::time::sleep(POLL).await;
    }
    super::print::line(format!("stopped {name}"));
    exit::OK
}
