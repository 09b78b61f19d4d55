//! `awtui list` (`ls`): every running instance and standalone agent of this
//! user, from any directory, one agent a line:
//!
//! ```text
//! NAME              SOURCE        STATUS    UNREAD  COST     WHERE
//! helper            (standalone)  idle      0       $0.0000  local
//! reviewer@pr-123   review.yaml   thinking  1       $0.0123  box
//! ```
//!
//! `list --json` gives more per agent: its backend, model, counters, how
//! awtui talks to it (`protocol`: `acp` or `headless`) and its current (or
//! last) turn as it goes (`live`: running and finished tool calls with
//! kind, status, files and diff previews, the plan, the usage).
//!
//! `WHERE` is where the agent runs: `local`, `sandbox` or a host of the
//! workflow's `hosts:` (a column after the seed's five, so scripts that
//! read those still work).
//!
//! An instance that does not answer its control socket in time is shown as
//! `unresponsive`. Stale registry records (dead processes) are removed, never
//! shown. With nothing running, stdout stays empty and stderr says so.

use crate::errln;
use serde::Serialize;

use super::exit;
use super::remote;
use crate::instance::query::InstanceStatus;
use crate::instance::registry::InstanceInfo;
use crate::sanitize::for_terminal;
use crate::vocab::live::AgentLive;

/// One agent as `list --json` shows it.
#[derive(Clone, Debug, Serialize)]
struct AgentRow {
    name: String,
    address: String,
    backend: String,
    model: Option<String>,
    /// Where it runs: `local`, `sandbox` or a host's name.
    place: String,
    status: String,
    unread: usize,
    turns: u32,
    tokens_in: u64,
    tokens_out: u64,
    cost_usd: f64,
    /// How awtui talks to it: `acp` or `headless` (empty for in-process
    /// API agents, plain programs and instances of an older awtui).
    protocol: String,
    /// Its current (or last) turn as it goes: tool calls (kind, title,
    /// status, files, diffs), plan, usage, the end of its text; bounded
    /// ([`super::report::shown`]).
    live: AgentLive,
}

/// One instance as `list --json` shows it.
#[derive(Clone, Debug, Serialize)]
struct InstanceRow {
    instance: String,
    source: String,
    pid: u32,
    responsive: bool,
    paused: bool,
    /// Why it is paused (the loop guard, a budget), for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pause_reason: Option<String>,
    stopping: bool,
    agents: Vec<AgentRow>,
    /// The instance's whole record.
    info: InstanceInfo,
}

fn rows(info: InstanceInfo, status: Option<InstanceStatus>) -> InstanceRow {
    let agents = match &status {
        Some(s) => s
            .agents
            .iter()
            .map(|a| AgentRow {
                name: a.name.clone(),
                address: info.address(&a.name),
                backend: a.backend.clone(),
                model: a.model.clone(),
                place: a.place.clone(),
                status: if s.finished.is_some() {
                    "stopping".to_string()
                } else {
                    a.status.to_string()
                },
                unread: a.metrics.unread,
                turns: a.metrics.turns,
                tokens_in: a.metrics.tokens_in,
                tokens_out: a.metrics.tokens_out,
                cost_usd: a.metrics.cost_usd,
                protocol: a.protocol.clone(),
                live: super::report::shown(&a.live),
            })
            .collect(),
        None => info
            .agents
            .iter()
            .map(|name| AgentRow {
                name: name.clone(),
                address: info.address(name),
                backend: String::new(),
                model: None,
                place: String::new(),
                status: "unresponsive".to_string(),
                unread: 0,
                turns: 0,
                tokens_in: 0,
                tokens_out: 0,
                cost_usd: 0.0,
                protocol: String::new(),
                live: AgentLive::default(),
            })
            .collect(),
    };
    InstanceRow {
        instance: info.instance.clone(),
        source: info.source(),
        responsive: status.is_some(),
        paused: status.as_ref().is_some_and(|s| s.paused.is_some()),
        pause_reason: status
            .as_ref()
            .and_then(|s| s.paused.as_ref())
            .map(|p| p.to_string()),
        stopping: status.as_ref().is_some_and(|s| s.finished.is_some()),
        pid: info.pid,
        info,
        agents,
    }
}

/// `awtui list [--json]`.
#[derive(Clone, Debug, clap::Args)]
pub struct ListArgs {
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// Lists what runs; returns the exit code.
pub fn run(args: &ListArgs) -> u8 {
    let json = args.json;
    let Some(rt) = remote::runtime() else {
        return exit::FAILED;
    };
    let running = match remote::running() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let table: Vec<InstanceRow> = rt.block_on(async move {
        let mut table = Vec::new();
        for info in running {
            let status = async {
                let mut client = remote::open(&info).await.ok()?;
                remote::status(&mut client).await.ok()
            }
            .await;
            table.push(rows(info, status));
        }
        table
    });
    if json {
        match serde_json::to_string_pretty(&table) {
            Ok(text) => super::print::json(text),
            Err(e) => {
                errln!("{e}");
                return exit::FAILED;
            }
        }
        return exit::OK;
    }
    if table.is_empty() {
        errln!("nothing is running");
        return exit::OK;
    }
    let mut lines = vec![[
        "NAME".to_string(),
        "SOURCE".to_string(),
        "STATUS".to_string(),
        "UNREAD".to_string(),
        "COST".to_string(),
        "WHERE".to_string(),
    ]];
    for row in &table {
        for a in &row.agents {
            let status = if row.paused {
                format!("{} (paused)", a.status)
            } else {
                a.status.clone()
            };
            lines.push([
                a.address.clone(),
                row.source.clone(),
                for_terminal(&status),
                a.unread.to_string(),
                format!("${:.4}", a.cost_usd),
                for_terminal(&a.place),
            ]);
        }
    }
    let widths: Vec<usize> = (0..6)
        .map(|c| {
            lines
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for l in &lines {
        let mut out = String::new();
        for (c, cell) in l.iter().enumerate() {
            if c + 1 == l.len() {
                out.push_str(cell);
            } else {
                out.push_str(&format!("{cell:<w$}  ", w = widths[c]));
            }
        }
        super::print::line(out.trim_end());
    }
    exit::OK
}
