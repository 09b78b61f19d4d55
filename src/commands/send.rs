//! `awtui send <message> [--to target] [--wait]`: posts to a running
//! instance's channel as `user`.
//!
//! - `--to agent@instance` (or `agent` when one running instance has it)
//!   puts `@agent` in front of the message, so it lands in that inbox.
//! - `--to @instance` posts the message as it is (its own @mentions decide
//!   who is woken).
//! - `--to <standalone agent>` mentions that agent.
//! - No `--to` with one instance running: the message as it is (a
//!   standalone agent is mentioned, since it only hears mentions).
//! - `-` as the message reads it from standard input.
//!
//! `--wait` waits until every agent the message mentions has posted after
//! it, and prints those replies; it gives up (exit 1) when such an agent is
//! stopped, failed or out of budget, or after `--timeout` seconds; exit 3
//! when the instance stops meanwhile.

use crate::errln;
use std::collections::BTreeSet;
use std::io::Read;
use std::time::Duration;

use super::exit;
use super::print;
use super::remote;
use crate::agents::runner::AgentStatus;
use crate::context::mentions::{self, USER};
use crate::engine::EngineEvent;
use crate::engine::event::MessageSnapshot;
use crate::engine::{Command, Reply};

/// `awtui send <message> [--to target] [--wait [--timeout S]] [--json]`.
#[derive(Clone, Debug, clap::Args)]
pub struct SendArgs {
    /// The message (`-` reads it from standard input).
    pub message: String,
    /// agent@instance (adds the @mention), @instance (as is), or agent
    /// (a standalone agent, or an agent of the only running instance).
    #[arg(long)]
    pub to: Option<String>,
    /// Wait for the mentioned agents' replies and print them.
    #[arg(long)]
    pub wait: bool,
    /// With --wait: give up after this many seconds.
    #[arg(long, default_value_t = 600)]
    pub timeout: u64,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

fn gave_up(status: &AgentStatus) -> bool {
    matches!(
        status,
        AgentStatus::Stopped | AgentStatus::Failed(_) | AgentStatus::OutOfBudget
    )
}

/// Posts the message; returns the exit code.
pub fn run(args: &SendArgs) -> u8 {
    let mut message = args.message.clone();
    if message == "-" {
        message.clear();
        // One byte past the limit is enough to know it is over.
        let limit = crate::mcp::MAX_BODY as u64;
        if let Err(e) = std::io::stdin()
            .take(limit + 1)
            .read_to_string(&mut message)
        {
            errln!("cannot read the message from standard input: {e}");
            return exit::FAILED;
        }
    }
    // The engine checks it too; here nothing is sent that it would refuse.
    if let Err(e) = crate::context::check_message(&message) {
        errln!("{e}");
        return exit::INVALID;
    }
    let resolved = match remote::resolve(args.to.as_deref()) {
        Ok(r) => r,
        Err(code) => {
            if args.to.is_none() && code == exit::INVALID {
                errln!("name it with --to: awtui send MESSAGE --to @NAME (or --to AGENT@NAME)");
            }
            return code;
        }
    };
    let info = resolved.info;
    let mention = match resolved.agent {
        Some(a) => Some(a),
        None if info.standalone => Some(info.instance.clone()),
        None => None,
    };
    let text = match &mention {
        Some(a) => format!("@{a} {message}"),
        None => message,
    };
    let waiting: BTreeSet<String> = mentions::extract(&text, &info.agents, USER)
        .into_iter()
        .filter(|m| m != USER)
        .collect();
    if args.wait && waiting.is_empty() {
        errln!(
            "--wait needs an agent to wait for: the message mentions none (use --to agent@{})",
            info.instance
        );
        return exit::INVALID;
    }
    let Some(rt) = remote::runtime() else {
        return exit::FAILED;
    };
    rt.block_on(async move {
        let mut client = match remote::open(&info).await {
            Ok(c) => c,
            Err(code) => return code,
        };
        let what = format!("instance '{}'", info.instance);
        let id = match remote::command(&mut client, &what, Command::Send { text }).await {
            Ok(Reply::Posted { id }) => id,
            Ok(other) => {
                errln!("unexpected answer: {other:?}");
                return exit::FAILED;
            }
            Err(code) => return code,
        };
        if !args.wait {
            if args.json {
                super::print::json(
                    serde_json::json!({ "id": id, "instance": info.instance }).to_string(),
                );
            } else {
                errln!("sent #{id} to @{}", info.instance);
            }
            return exit::OK;
        }
        wait_for_replies(&mut client, id, waiting, args).await
    })
}

async fn wait_for_replies(
    client: &mut crate::instance::control::Client,
    id: u64,
    mut waiting: BTreeSet<String>,
    args: &SendArgs,
) -> u8 {
    let instance = client.info.instance.clone();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(args.timeout);
    let mut replies: Vec<MessageSnapshot> = Vec::new();
    // An agent that cannot take the message now will not answer.
    if let Ok(status) = remote::status(client).await {
        for a in &status.agents {
            if waiting.contains(&a.name) && gave_up(&a.status) {
                errln!("{} is {}: it will not answer", a.name, a.status);
                return exit::FAILED;
            }
        }
    }
    let code = loop {
        if waiting.is_empty() {
            break exit::OK;
        }
        let event = match tokio::time::timeout_at(deadline, client.next_event()).await {
            Err(_) => {
                let who: Vec<&str> = waiting.iter().map(String::as_str).collect();
                errln!("no reply from {} within {}s", who.join(", "), args.timeout);
                break exit::FAILED;
            }
            Ok(Err(e)) => {
                errln!("{e}");
                break remote::control_failure(&e);
            }
            Ok(Ok(None)) | Ok(Ok(Some(EngineEvent::Finished { .. }))) => {
                errln!("instance '{instance}' stopped before the reply");
                break exit::NOT_RUNNING;
            }
            Ok(Ok(Some(event))) => event,
        };
        match event {
            EngineEvent::Message { entry, annotations }
                if entry.id > id && waiting.contains(&entry.from) =>
            {
                waiting.remove(&entry.from);
                if !args.json {
                    print::message(&entry, Some(&annotations));
                }
                replies.push(MessageSnapshot {
                    entry,
                    annotations: *annotations,
                    cut: Default::default(),
                });
            }
            EngineEvent::Status { agent, status }
                if waiting.contains(&agent) && gave_up(&status) =>
            {
                errln!("{agent} is {status}: it will not answer");
                break exit::FAILED;
            }
            _ => {}
        }
    };
    if args.json {
        super::print::json(
            serde_json::json!({ "id": id, "instance": instance, "replies": replies }).to_string(),
        );
    }
    code
}
