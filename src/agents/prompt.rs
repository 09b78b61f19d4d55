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
const TASK_LIFECYCLE: &str = "\n## Tasks\nThis workflow has a plan of tasks. To take one: agent_register {name, runtime} once (keep the id it returns) → workflow_list / workflow_next_tasks {workflow_id} → task_claim {task_id, agent_id} ({success: false} means someone was first: take the next) → task_load_context {task_id} → task_update_status {id, status: in_progress} → checkpoint_add {task_id, type: progress, summary} after each significant step → task_update_status {id, status: completed, outcome} (or failed with error). Send agent_heartbeat {agent_id} during long work. Claim only what you will do now; when your task is done, look for the next one.\n";

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
        });
        assert!(text.contains("task_claim {task_id, agent_id}"));
        assert!(text.contains("You are @coder in the multi-agent workflow \"review\"."));
        assert!(text.contains("Your team: @reviewer (codex), and @user"));
        assert!(text.contains("The entry document is notes.md; others: goals.md."));
        assert!(text.contains("## New messages for you (#2)\n#2 · 10:00:02 · from reviewer · high priority\n@coder fix line 42, urgent"));
        assert!(text.contains("(cut; channel_read with since=0 shows it whole)"));
        assert!(text.contains("`id:` is 2"));
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
        });
        assert!(!text.contains("channel_send"));
        assert!(text.contains("You work alone"));
        assert!(text.contains("(none: continue where you left off)"));
    }
}
