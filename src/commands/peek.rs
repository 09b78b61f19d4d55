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
//! A page is bounded in bytes ([`crate::vocab::pages`]): a message longer
//! than 64 KiB is shown shortened, marked with its whole size and the
//! command that prints it whole (`--message ID`; with `--json`, the item
//! carries `truncated: true` and `bytes`), and when the messages would pass
//! the page's budget the oldest are left out, saying how many and how to
//! page back (`--before ID`).
//!
//! `--tasks` adds the instance's task board: after the messages as text (as
//! `awtui tasks` shows it), or with `--json` one object
//! `{"messages": [...], "tasks": {...}}` instead of the bare array (which
//! stays what `--json` alone prints, for existing scripts).

use super::exit;
use super::print;
use super::remote;
use crate::engine::{Command, Reply};
use crate::errln;
use crate::instance::query::{PeekItem, PeekQuery};
use crate::protocols::agent_mail::MessageType;

/// `awtui peek [--to target] [-n N] [--type T] [--bead B] [--before ID]
/// [--message ID] [--tasks] [--json]`.
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
    /// Only messages before this id (paging back through the channel).
    #[arg(long, value_name = "ID")]
    pub before: Option<u64>,
    /// Only this message, whole: a page shows at most 64 KiB of each
    /// message and says so when it shortened one.
    #[arg(long, value_name = "ID", conflicts_with_all = ["n", "kind", "bead", "before", "tasks"])]
    pub message: Option<u64>,
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
        before: args.before,
        message: args.message,
    };
    let Some(rt) = remote::runtime() else {
        return exit::FAILED;
    };
    rt.block_on(async move {
        let mut client = match remote::open(&resolved.info).await {
            Ok(c) => c,
            Err(code) => return code,
        };
        let what = format!("instance '{}'", resolved.info.instance);
        let peek = Command::Peek {
            query: query.clone(),
        };
        let (items, left_out) = match remote::command(&mut client, &what, peek).await {
            Ok(Reply::Messages { items, left_out }) => (items, left_out),
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
        if left_out > 0 {
            // Paging back applies to the channel, not to an inbox.
            let oldest = items.first().filter(|_| query.agent.is_none());
            errln!(
                "{}",
                left_out_note(left_out, oldest.map(|i| i.entry.id), args.to.as_deref())
            );
        }
        if args.json {
            if args.message.is_some() {
                return print_json(items.first().map(PeekItem::to_json));
            }
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
            if let Some(thread) = &item.thread {
                print::line(crate::sanitize::for_terminal(&format!(
                    "[thread {}]",
                    thread.label()
                )));
            }
            let fetch = whole_command(item.entry.id, args);
            if let Some(note) = item.cut.note(item.entry.message.len(), &fetch) {
                print::line(note);
            }
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

/// The command that prints message `id` whole, with the same target.
fn whole_command(id: u64, args: &PeekArgs) -> String {
    match &args.to {
        Some(to) => format!("awtui peek --message {id} --to {to}"),
        None => format!("awtui peek --message {id}"),
    }
}

/// What a person is told when the page left older messages out: how
/// many, and for the channel (`oldest`: the oldest shown) how to page back.
fn left_out_note(left_out: usize, oldest: Option<u64>, to: Option<&str>) -> String {
    let budget = crate::vocab::pages::PAGE_BUDGET / (1024 * 1024);
    let back = match (oldest, to) {
        (Some(id), Some(to)) => format!("; page back with `awtui peek --to {to} --before {id}`"),
        (Some(id), None) => format!("; page back with `awtui peek --before {id}`"),
        (None, _) => String::new(),
    };
    let s = if left_out == 1 { "" } else { "s" };
    format!("{left_out} older message{s} left out to keep this page within {budget} MiB{back}")
}

/// Prints one JSON value (an item, or `null`).
fn print_json(value: Option<serde_json::Value>) -> u8 {
    match serde_json::to_string_pretty(&value.unwrap_or_default()) {
        Ok(text) => {
            super::print::json(text);
            exit::OK
        }
        Err(e) => {
            errln!("{e}");
            exit::FAILED
        }
    }
}
