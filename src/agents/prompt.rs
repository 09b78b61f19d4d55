//! The prompt of one turn: who the agent is and who its team is, how to use
//! the context tools, the messages delivered in this turn (with their ids),
//! and recent channel context. Pure text building.

use std::fmt::Write;

use crate::context::ChannelEntry;
use crate::context::mentions::priority;

/// How much of an older message the recent-context section quotes.
const CONTEXT_MESSAGE_CHARS: usize = 600;

/// A teammate as the prompt names it.
#[derive(Clone, Debug, PartialEq)]
pub struct Teammate {
    pub name: String,
    /// `claude`, `codex`, … — helps agents know who can do what.
    pub backend: String,
}

/// Everything a turn prompt is made from.
#[derive(Clone, Debug)]
pub struct PromptInput<'a> {
    pub agent: &'a str,
    pub workflow: &'a str,
    pub team: &'a [Teammate],
    /// The entry document and other documents, when context is enabled.
    pub documents: Option<(&'a str, &'a [String])>,
    /// Messages delivered in this turn, oldest first.
    pub delivered: &'a [ChannelEntry],
    /// Recent channel messages before the delivered ones, oldest first.
    pub recent: &'a [ChannelEntry],
    /// The task board has tasks: teach the task lifecycle.
    pub tasks: bool,
    /// The protocols to teach (the agent's `protocols:`).
    pub protocols: crate::workflow::Protocols,
}

/// How to answer in AOP blocks.
const AOP: &str = "- Answer format (AOP): wrap your final answer in a block, each marker on a line of its own:\n  === AOP-FINAL | agent={agent} ===\n  your answer\n  === END-AOP-FINAL ===\n  FINAL and ERROR blocks are passed on untouched (ERROR also needs agent={agent}); INTERMEDIATE is work in progress; CONTEXT is metadata; STREAM | chunk=1/3 … splits a long answer.\n";

/// What strict AOP (`protocols: [aop-strict]`) adds.
const AOP_STRICT: &str =
    "  Strict: write nothing outside AOP blocks; unmarked output is noted in the channel.\n";

/// How to act on delivered messages with operations.
const OPS: &str = "- Operations: to act on the messages delivered to you, start your answer with a frontmatter block; its id: must be the id given under \"New messages for you\":\n  ---\n  id: 12\n  done: 12\n  ---\n  One per line: ack: <id> · done: <id> · fail: <id>|<reason> · reply: <id>|<message> · send: <peer>|<message> · delegate: <id>|<peer> · defer: <id>|<1h30m or RFC 3339 time> (or just <id>: at your next wake) · delete: <id> · surface: <note for the person>. Ids are channel message ids (#12 or 12); peers are teammates' names.\n";

/// How to report status with Agent Mail.
const MAIL: &str = "- Status messages (Agent Mail): report status with channel_send in this shape, the type word in capitals:\n  Subject: [<task or bead id>] PROGRESS\n  Bead: <id>\n  Step: <what you are doing>\n  Status: <IN_PROGRESS | BLOCKED | …>\n  Types: PROGRESS (Step, Status), HELP_REQUEST (Issue Type, Problem, Question), OFFERING_READY or DONE (Status, Commit, Tests, Lint, Build as PASS/FAIL), FAILED (Type, Reason), CHECKPOINT (Reason, Commit).\n";

/// The protocols section, or nothing when every protocol is off.
fn protocols(out: &mut String, agent: &str, p: crate::workflow::Protocols) {
    if !(p.aop || p.ops || p.mail) {
        return;
    }
    out.push_str("## Protocols awtui reads\n");
    if p.aop {
        out.push_str(&AOP.replace("{agent}", agent));
    }
    if p.aop_strict {
        out.push_str(AOP_STRICT);
    }
    if p.ops {
        out.push_str(OPS);
    }
    if p.mail {
        out.push_str(MAIL);
    }
    out.push('\n');
}

/// Renders one message as `#12 · 10:00:05 · reviewer · high` plus its text.
fn message(out: &mut String, e: &ChannelEntry, full: bool) {
    let level = match priority(&e.message, &e.mentions) {
        crate::context::Priority::High => " · high priority",
        crate::context::Priority::Normal => "",
    };
    let _ = writeln!(
        out,
        "#{} · {} · from {}{level}",
        e.id,
        e.timestamp.format("%H:%M:%S"),
        e.from
    );
    let text = e.message.trim_end();
    if full || text.chars().count() <= CONTEXT_MESSAGE_CHARS {
        let _ = writeln!(out, "{text}");
    } else {
        let cut: String = text.chars().take(CONTEXT_MESSAGE_CHARS).collect();
        let _ = writeln!(
            out,
            "{cut}… (cut; channel_read with since={} shows it whole)",
            e.id - 1
        );
    }
    out.push('\n');
}

/// How agents take part in a plan of tasks (the caw protocol).
const TASK_LIFECYCLE: &str = "\n## Tasks\nThis workflow has a plan of tasks. To take one: agent_register {name, runtime} once (keep the id it returns) → workflow_list / workflow_next_tasks {workflow_id} → task_claim {task_id, agent_id} ({success: false} means you cannot take it — someone was first, or its reason says why: take the next) → task_load_context {task_id} → task_update_status {id, status: in_progress} → checkpoint_add {task_id, type: progress, summary} after each significant step → task_update_status {id, status: completed, outcome} (or failed with error). Send agent_heartbeat {agent_id} during long work. Claim only what you will do now; when your task is done, look for the next one.\n";

/// The turn prompt.
pub fn turn_prompt(input: &PromptInput) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "You are @{} in the multi-agent workflow \"{}\".",
        input.agent, input.workflow
    );
    let others: Vec<String> = input
        .team
        .iter()
        .filter(|t| t.name != input.agent)
        .map(|t| format!("@{} ({})", t.name, t.backend))
        .collect();
    if others.is_empty() {
        let _ = writeln!(
            out,
            "You work alone with @user, the person at the keyboard."
        );
    } else {
        let _ = writeln!(
            out,
            "Your team: {}, and @user (the person at the keyboard).",
            others.join(", ")
        );
    }
    out.push('\n');
    match input.documents {
        Some((entry, docs)) => {
            out.push_str("## How to collaborate\n");
            out.push_str("Use the awtui context tools:\n");
            out.push_str("- channel_send {message}: post to the shared channel. Write @name to wake a teammate; they see only messages that mention them.\n");
            out.push_str(
                "- channel_read {since?, limit?} / channel_peek {limit?}: the channel's history.\n",
            );
            out.push_str("- inbox_check / inbox_ack {until}: your unread mentions; inbox_ack with a message id when handled.\n");
            let _ = writeln!(
                out,
                "- document_read / document_write / document_append / document_list / document_create {{file?}}: shared notes. The entry document is {entry}{}.",
                if docs.is_empty() {
                    String::new()
                } else {
                    format!("; others: {}", docs.join(", "))
                }
            );
            out.push_str("- workflow_agents: who is on the team.\n");
            if input.tasks {
                out.push_str(TASK_LIFECYCLE);
            }
            out.push_str("Your final answer is posted to the channel for you unless you already posted with channel_send during this turn. Mention only who needs to act next; do not mention someone just to say thanks.\n\n");
        }
        None => {
            out.push_str("There is no shared channel in this workflow; your final answer is what counts.\n\n");
        }
    }
    protocols(&mut out, input.agent, input.protocols);
    if !input.recent.is_empty() {
        out.push_str("## Recent channel messages\n");
        for e in input.recent {
            message(&mut out, e, false);
        }
    }
    if input.delivered.is_empty() {
        out.push_str("## New messages for you\n(none: continue where you left off)\n");
    } else {
        let ids: Vec<String> = input
            .delivered
            .iter()
            .map(|e| format!("#{}", e.id))
            .collect();
        let _ = writeln!(out, "## New messages for you ({})", ids.join(", "));
        for e in input.delivered {
            message(&mut out, e, true);
        }
        let last = input.delivered.iter().map(|e| e.id).max().unwrap_or(0);
        let _ = writeln!(
            out,
            "These are acknowledged for you when this turn succeeds. To act on them with operations, start your answer with a frontmatter block whose `id:` is {last}."
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn entry(id: u64, from: &str, message: &str, mentions: &[&str]) -> ChannelEntry {
        ChannelEntry {
            id,
            timestamp: chrono::Utc
                .with_ymd_and_hms(2026, 1, 1, 10, 0, id as u32)
                .unwrap(),
            from: from.into(),
            message: message.into(),
            mentions: mentions.iter().map(|s| s.to_string()).collect(),
            reply_to: None,
        }
    }

    #[test]
    fn names_the_team_tools_and_new_messages_with_ids() {
        let team = [
            Teammate {
                name: "coder".into(),
                backend: "claude".into(),
            },
            Teammate {
                name: "reviewer".into(),
                backend: "codex".into(),
            },
        ];
        let recent = [entry(1, "system", &"x".repeat(700), &[])];
        let delivered = [entry(
            2,
            "reviewer",
            "@coder fix line 42, urgent",
            &["coder"],
        )];
        let docs = vec!["goals.md".to_string()];
        let text = turn_prompt(&PromptInput {
            agent: "coder",
            workflow: "review",
            team: &team,
            documents: Some(("notes.md", &docs)),
            delivered: &delivered,
            recent: &recent,
            tasks: true,
            protocols: crate::workflow::Protocols::default(),
        });
        assert!(text.contains("task_claim {task_id, agent_id}"));
        assert!(text.contains("You are @coder in the multi-agent workflow \"review\"."));
        assert!(text.contains("Your team: @reviewer (codex), and @user"));
        assert!(text.contains("The entry document is notes.md; others: goals.md."));
        assert!(text.contains("## New messages for you (#2)\n#2 · 10:00:02 · from reviewer · high priority\n@coder fix line 42, urgent"));
        assert!(text.contains("(cut; channel_read with since=0 shows it whole)"));
        assert!(text.contains("`id:` is 2"));
    }

    /// The examples the prompt teaches are what awtui's own parsers accept.
    #[test]
    fn the_protocols_taught_are_the_ones_parsed() {
        use crate::protocols::{agent_mail, agent_ops, aop};
        let text = turn_prompt(&PromptInput {
            agent: "coder",
            workflow: "w",
            team: &[],
            documents: Some(("notes.md", &[])),
            delivered: &[],
            recent: &[],
            tasks: false,
            protocols: crate::workflow::Protocols::default(),
        });
        // The indented lines after each protocol's first line are its example.
        let example = |start: &str, lines: usize| -> String {
            let at = text.find(start).unwrap();
            text[at..]
                .lines()
                .skip(1)
                .take(lines)
                .map(|l| l.trim_start())
                .collect::<Vec<_>>()
                .join("\n")
        };
        let block = example("- Answer format (AOP)", 3);
        let parsed = aop::parse(&block, aop::Mode::Strict);
        assert!(parsed.findings.is_empty(), "{block}\n{:?}", parsed.findings);
        assert!(block.contains("agent=coder"), "{block}");
        let front = example("- Operations", 4);
        let ops = agent_ops::parse_ops_with(&front, Some(12), &["coder"], aop::Mode::Strict);
        assert_eq!(ops.ops, [agent_ops::Op::Done { id: 12 }], "{front}");
        let mail = example("- Status messages", 4)
            .replace("<task or bead id>", "t-1")
            .replace("<id>", "t-1")
            .replace("<what you are doing>", "writing tests")
            .replace("<IN_PROGRESS | BLOCKED | …>", "IN_PROGRESS");
        let record = agent_mail::parse(&mail, aop::Mode::Strict);
        assert!(record.is_ok(), "{mail}\n{record:?}");

        // protocols: turns them off.
        let none = turn_prompt(&PromptInput {
            agent: "coder",
            workflow: "w",
            team: &[],
            documents: Some(("notes.md", &[])),
            delivered: &[],
            recent: &[],
            tasks: false,
            protocols: crate::workflow::Protocols::only(&[]),
        });
        assert!(!none.contains("## Protocols"));
    }

    #[test]
    fn without_context_there_is_no_tool_guide() {
        let text = turn_prompt(&PromptInput {
            agent: "solo",
            workflow: "w",
            team: &[],
            documents: None,
            delivered: &[],
            recent: &[],
            tasks: false,
            protocols: crate::workflow::Protocols::only(&["ops".to_string()]),
        });
        assert!(!text.contains("channel_send"));
        assert!(text.contains("You work alone"));
        assert!(text.contains("(none: continue where you left off)"));
    }
}
