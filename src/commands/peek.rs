//! `awtui peek [--to target] [-n N] [--type T] [--bead B] [--json]`: reads a
//! running instance without changing anything.
//!
//! - no target or `@instance`: the channel's newest messages;
//! - `agent@instance` (or `agent`): that agent's unread mentions (its
//!   inbox), high priority first, each with its delivery state (with
//!   `--json`, each item in the one inbox item shape `inbox_check` returns,
//!   [`crate::context::inbox_item_json`]);
//!   `user@instance` is your own inbox;
//! - a standalone agent's name: its conversation (the channel).
//!
//! `--type` keeps Agent Mail messages of one type (`HELP_REQUEST`,
//! `PROGRESS`, …) and `--bead` those about one bead; `-n` is applied after
//! the filters.
//!
//! `--tasks` adds the instance's task board: after the messages as text (as
//! `awtui tasks` shows it), or with `--json` one object
//! `{"messages": [...], "tasks": {...}}` instead of the bare array (which
//! stays what `--json` alone prints, for existing scripts).

use super::exit;
use super::print;
use super::remote;
use crate::errln;
use crate::instance::control::{Reply, Request};
use crate::instance::query::PeekQuery;
use crate::protocols::agent_mail::MessageType;

/// `awtui peek [--to target] [-n N] [--type T] [--bead B] [--tasks] [--json]`.
#[derive(Clone, Debug, clap::Args)]
pub struct PeekArgs {
    /// agent@instance (its inbox), @instance (the channel), or a
    /// standalone agent (its conversation).
    #[arg(long)]
    pub to: Option<String>,
    /// How many messages.
    #[arg(short = 'n', default_value_t = 20)]
    pub n: usize,
    /// Only Agent Mail messages of this type (HELP_REQUEST, PROGRESS, …).
    #[arg(long = "type")]
    pub kind: Option<String>,
    /// Only Agent Mail messages about this bead.
    #[arg(long)]
    pub bead: Option<String>,
    /// Also show the task board (with --json: one object with
    /// `messages` and `tasks`).
    #[arg(long)]
    pub tasks: bool,
    /// JSON output (an inbox's items as inbox_check returns them:
    /// id, timestamp, from, message, priority, state).
    #[arg(long)]
    pub json: bool,
}

/// Shows the messages; returns the exit code.
pub fn run(args: &PeekArgs) -> u8 {
    let kind = match args
        .kind
        .as_deref()
        .map(|k| MessageType::from_keyword(k).ok_or(k))
    {
        None => None,
        Some(Ok(k)) => Some(k),
        Some(Err(k)) => {
            let all: Vec<&str> = MessageType::ALL.iter().map(|t| t.keyword()).collect();
            errln!(
                "'{k}' is not an Agent Mail type: use one of {}",
                all.join(", ")
            );
            return exit::INVALID;
        }
    };
    let resolved = match remote::resolve(args.to.as_deref()) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let agent = resolved.agent.filter(|_| !resolved.info.standalone);
    let query = PeekQuery {
        agent,
        limit: args.n,
        kind,
        bead: args.bead.clone(),
        before: None,
    };
    let Some(rt) = remote::runtime() else {
        return exit::FAILED;
    };
    rt.block_on(async move {
        let mut client = match remote::open(&resolved.info).await {
            Ok(c) => c,
            Err(code) => return code,
        };
        let items = match remote::request(&mut client, Request::Peek(query.clone())).await {
            Ok(Reply::Messages { items }) => items,
            Ok(other) => {
                errln!("unexpected answer: {other:?}");
                return exit::FAILED;
            }
            Err(code) => return code,
        };
        let board = if args.tasks {
            match super::tasks::fetch_board(&mut client).await {
                Ok(b) => Some(b),
                Err(code) => return code,
            }
        } else {
            None
        };
        if args.json {
            // An inbox's items in the shape inbox_check returns.
            let items: Vec<serde_json::Value> = items.iter().map(|i| i.to_json()).collect();
            let text = match &board {
                Some(tasks) => serde_json::to_string_pretty(&serde_json::json!({
                    "messages": items,
                    "tasks": tasks,
                })),
                None => serde_json::to_string_pretty(&items),
            };
            match text {
                Ok(text) => super::print::json(text),
                Err(e) => {
                    errln!("{e}");
                    return exit::FAILED;
                }
            }
            return exit::OK;
        }
        if items.is_empty() {
            let what = match &query.agent {
                Some(a) => format!("{} has no unread messages", resolved.info.address(a)),
                None => format!("no messages in @{}", resolved.info.instance),
            };
            errln!("{what}");
        }
        for item in &items {
            if let (Some(priority), Some(state)) = (item.priority, item.state) {
                super::print::line(format!(
                    "[{} priority, {}]",
                    format!("{priority:?}").to_lowercase(),
                    format!("{state:?}").to_lowercase()
                ));
            }
            print::message(&item.entry, Some(&item.annotations));
        }
        if let Some(board) = &board {
            print::line(
                super::tasks::render(board, chrono::Utc::now())
                    .trim_end()
                    .to_string(),
            );
        }
        exit::OK
    })
}
