//! What waits for the person, across every running instance: unacknowledged
//! `@user` mentions, HELP_REQUESTs (Agent Mail, always addressed to
//! `user`), failed or stalled agents and paused instances. Pure: built from
//! what the home screen polled ([`Polled`]), sorted newest first, each item
//! naming where it happened ([`Jump`]).
//!
//! A new kind of attention (pending approvals, say) is one more
//! [`AttentionKind`] variant and one more source in [`collect`].

use std::collections::HashMap;
use std::path::PathBuf;

use chrono::{DateTime, Utc};

use crate::protocols::agent_mail::{MailContent, MessageType};
use crate::sanitize::for_terminal;
use crate::vocab::AgentStatus;
use crate::vocab::InstanceInfo;
use crate::vocab::mentions::USER;
use crate::vocab::{InstanceStatus, PeekItem};

/// One running instance as the home screen last saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct Polled {
    /// Its registry record.
    pub info: InstanceInfo,
    /// Its status, or `None` when it did not answer in time.
    pub status: Option<InstanceStatus>,
    /// `user`'s inbox (unacknowledged mentions), oldest first.
    pub inbox: Vec<PeekItem>,
    /// The tool calls waiting for the person, oldest first, when the
    /// poller knows them (`awtui web` follows each instance's approval
    /// events; home leaves this empty and says only that an agent waits).
    pub approvals: Vec<crate::vocab::Request>,
}

/// Why something needs the person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttentionKind {
    /// A message mentions `@user` and is not acknowledged.
    Mention,
    /// An agent asks for help (Agent Mail HELP_REQUEST to `user`).
    HelpRequest,
    /// An agent is out of retries (with the reason).
    Failed(String),
    /// An agent's backend has been silent too long.
    Stalled,
    /// The instance is paused (with the reason).
    Paused(String),
    /// An agent's CLI waits for the person to allow or deny a tool call
    /// (`permissions: ask`); opening the instance shows its card.
    Approval,
}

impl AttentionKind {
    /// The short label shown in the attention view.
    pub fn label(&self) -> &'static str {
        match self {
            AttentionKind::Mention => "mention",
            AttentionKind::HelpRequest => "HELP_REQUEST",
            AttentionKind::Failed(_) => "failed",
            AttentionKind::Stalled => "stalled",
            AttentionKind::Paused(_) => "paused",
            AttentionKind::Approval => "approval",
        }
    }
}

/// Where an attention item happened, to open the instance there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Jump {
    /// Select this channel message.
    Message(u64),
    /// Select this agent.
    Agent(String),
    /// Just open the instance.
    Instance,
}

/// One thing waiting for the person.
#[derive(Clone, Debug, PartialEq)]
pub struct AttentionItem {
    /// The instance's name.
    pub instance: String,
    /// The instance's folder (two instances may share a name).
    pub home: PathBuf,
    /// What it is.
    pub kind: AttentionKind,
    /// When it happened (a message's time; else when it was first seen).
    pub when: DateTime<Utc>,
    /// Who: the sender or the agent (empty for the instance).
    pub from: String,
    /// One line about it, sanitized.
    pub summary: String,
    /// Where to go.
    pub jump: Jump,
}

impl AttentionItem {
    /// A stable identity across polls, for "is it new" and first-seen times.
    pub fn key(&self) -> String {
        let what = match &self.jump {
            Jump::Message(id) => format!("message:{id}"),
            Jump::Agent(a) => format!("agent:{a}"),
            Jump::Instance => "instance".to_string(),
        };
        format!("{}|{}|{what}", self.home.display(), self.kind.label())
    }
}

/// When items without a time of their own (agents, pauses) were first seen,
/// kept between polls so their place in the list does not move.
#[derive(Clone, Debug, Default)]
pub struct FirstSeen(HashMap<String, DateTime<Utc>>);

/// The first line of a message that says something (not blank, not an
/// AOP block marker), sanitized and cut to `max` characters.
fn first_line(text: &str, max: usize) -> String {
    let clean = for_terminal(text);
    let line = clean
        .lines()
        .map(str::trim)
        .find(|l| !(l.is_empty() || l.starts_with("===") && l.ends_with("===")))
        .unwrap_or("");
    if line.chars().count() > max {
        let cut: String = line.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

/// Everything waiting across `polled`, newest first (ties: by instance,
/// then key, so the order is stable). `now` dates items seen for the first
/// time; `seen` remembers them (and forgets items that went away).
pub fn collect(polled: &[Polled], seen: &mut FirstSeen, now: DateTime<Utc>) -> Vec<AttentionItem> {
    let mut items = Vec::new();
    for p in polled {
        let base = |kind, when, from: &str, summary: String, jump| AttentionItem {
            instance: for_terminal(&p.info.instance),
            home: p.info.home.clone(),
            kind,
            when,
            from: for_terminal(from),
            summary,
            jump,
        };
        for m in &p.inbox {
            let help = m
                .annotations
                .mail
                .as_ref()
                .is_some_and(|r| r.kind() == Some(MessageType::HelpRequest));
            let kind = if help {
                AttentionKind::HelpRequest
            } else {
                AttentionKind::Mention
            };
            // A HELP_REQUEST says its question (else its problem).
            let asked = m.annotations.mail.as_ref().and_then(|r| match &r.content {
                MailContent::HelpRequest {
                    question, problem, ..
                } => question.clone().or_else(|| problem.clone()),
                _ => None,
            });
            // Else the line that mentions the person (not an agent
            // operation's block before it).
            let summary = match asked {
                Some(a) => first_line(&a, 200),
                None => first_line(
                    crate::text::preview_line(&for_terminal(&m.entry.message), USER),
                    200,
                ),
            };
            items.push(base(
                kind,
                m.entry.timestamp,
                &m.entry.from,
                summary,
                Jump::Message(m.entry.id),
            ));
        }
        let Some(status) = &p.status else { continue };
        for a in &status.agents {
            let (kind, summary) = match &a.status {
                AgentStatus::Failed(reason) => (
                    AttentionKind::Failed(first_line(reason, 200)),
                    first_line(reason, 200),
                ),
                AgentStatus::Stalled => (
                    AttentionKind::Stalled,
                    "its backend has been silent too long".to_string(),
                ),
                AgentStatus::WaitingForApproval => {
                    // What it asks, when the poller knows (the oldest
                    // request of the agent's).
                    match p.approvals.iter().find(|r| r.agent == a.name) {
                        Some(r) => {
                            items.push(base(
                                AttentionKind::Approval,
                                r.at,
                                &a.name,
                                first_line(&format!("wants to run {}: {}", r.tool, r.subject()), 200),
                                Jump::Agent(a.name.clone()),
                            ));
                            continue;
                        }
                        None => (
                            AttentionKind::Approval,
                            "waits for your approval of a tool call (y/n on its card, or awtui approve)"
                                .to_string(),
                        ),
                    }
                }
                _ => continue,
            };
            items.push(base(
                kind,
                now,
                &a.name,
                summary,
                Jump::Agent(a.name.clone()),
            ));
        }
        if let Some(reason) = &status.paused {
            let text = first_line(&reason.to_string(), 200);
            items.push(base(
                AttentionKind::Paused(text.clone()),
                now,
                "",
                text,
                Jump::Instance,
            ));
        }
    }
    // Items without a time of their own keep the time they were first seen.
    let mut kept = HashMap::new();
    for item in &mut items {
        if matches!(item.jump, Jump::Message(_)) {
            continue;
        }
        let key = item.key();
        let when = *seen.0.get(&key).unwrap_or(&item.when);
        item.when = when;
        kept.insert(key, when);
    }
    seen.0 = kept;
    items.sort_by(|a, b| {
        b.when
            .cmp(&a.when)
            .then_with(|| a.instance.cmp(&b.instance))
            .then_with(|| a.key().cmp(&b.key()))
    });
    items
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::AgentSnapshot;
    use crate::vocab::ChannelEntry;
    use crate::vocab::{AgentMetrics, PauseReason};
    use chrono::TimeZone;

    pub(crate) fn info(name: &str) -> InstanceInfo {
        InstanceInfo {
            instance: name.into(),
            workflow_name: "review".into(),
            workflow: format!("/w/{name}/review.yaml").into(),
            workdir: format!("/w/{name}").into(),
            home: format!("/w/{name}/.workflow/{name}").into(),
            pid: 1,
            mode: "start".into(),
            standalone: false,
            agents: vec!["coder".into()],
            control: "/c.sock".into(),
            token_file: "/c.token".into(),
            mcp_url: "http://127.0.0.1:1/mcp".into(),
            mcp_socket: None,
            log: None,
            state_dir: None,
            started: Utc.with_ymd_and_hms(2026, 1, 1, 9, 0, 0).unwrap(),
        }
    }

    fn inbox_item(id: u64, minute: u32, from: &str, text: &str) -> PeekItem {
        PeekItem {
            annotations: crate::protocols::annotate(text),
            cut: Default::default(),
            entry: ChannelEntry {
                id,
                timestamp: Utc.with_ymd_and_hms(2026, 1, 1, 10, minute, 0).unwrap(),
                from: from.into(),
                message: text.into(),
                mentions: vec!["user".into()],
                reply_to: None,
            },
            priority: None,
            state: None,
            thread: None,
        }
    }

    fn agent(name: &str, status: AgentStatus) -> AgentSnapshot {
        AgentSnapshot {
            place: String::new(),
            protocol: String::new(),
            live: Default::default(),
            name: name.into(),
            backend: "command".into(),
            model: None,
            status,
            metrics: AgentMetrics::default(),
        }
    }

    fn polled(name: &str, inbox: Vec<PeekItem>, agents: Vec<AgentSnapshot>) -> Polled {
        Polled {
            info: info(name),
            status: Some(InstanceStatus {
                info: info(name),
                agents,
                paused: None,
                finished: None,
            }),
            inbox,
            approvals: Vec::new(),
        }
    }

    const HELP: &str = "[ol-3] HELP_REQUEST\nIssue Type: STUCK\n## Problem\np\n## Question\nq?";

    #[test]
    fn every_kind_is_collected_newest_first_with_its_jump() {
        let now = Utc.with_ymd_and_hms(2026, 1, 1, 11, 0, 0).unwrap();
        let mut a = polled(
            "a",
            vec![inbox_item(
                4,
                5,
                "coder",
                "@user please look \x1b[31mhere\x1b[0m",
            )],
            vec![
                agent("coder", AgentStatus::Idle),
                agent("tester", AgentStatus::Failed("out of retries".into())),
            ],
        );
        a.status.as_mut().unwrap().paused =
            Some(PauseReason::Budget(crate::vocab::Budget::Turns {
                limit: 10,
            }));
        let b = polled(
            "b",
            vec![inbox_item(9, 30, "coder", HELP)],
            vec![
                agent("coder", AgentStatus::Stalled),
                agent("cc", AgentStatus::WaitingForApproval),
            ],
        );
        let items = collect(&[a, b], &mut FirstSeen::default(), now);
        let kinds: Vec<(&str, &str)> = items
            .iter()
            .map(|i| (i.instance.as_str(), i.kind.label()))
            .collect();
        // Agents and pauses were first seen now (newest); then the messages
        // by their own time.
        assert_eq!(
            kinds,
            vec![
                ("a", "failed"),
                ("a", "paused"),
                ("b", "approval"),
                ("b", "stalled"),
                ("b", "HELP_REQUEST"),
                ("a", "mention"),
            ]
        );
        assert_eq!(items[0].jump, Jump::Agent("tester".into()));
        assert_eq!(items[1].jump, Jump::Instance);
        // An approval opens the instance at the agent, where its card shows.
        assert_eq!(items[2].jump, Jump::Agent("cc".into()));
        assert_eq!(items[4].jump, Jump::Message(9));
        assert_eq!(items[5].summary, "@user please look here", "sanitized");
        assert_eq!(
            first_line(
                "=== AOP-FINAL | agent=r ===\n\nAll done.\n=== END-AOP-FINAL ===",
                5
            ),
            "All …"
        );
    }

    #[test]
    fn first_seen_times_hold_between_polls_and_are_forgotten_when_gone() {
        let t1 = Utc.with_ymd_and_hms(2026, 1, 1, 11, 0, 0).unwrap();
        let t2 = Utc.with_ymd_and_hms(2026, 1, 1, 11, 5, 0).unwrap();
        let failed = || {
            polled(
                "a",
                vec![],
                vec![agent("coder", AgentStatus::Failed("x".into()))],
            )
        };
        let mut seen = FirstSeen::default();
        assert_eq!(collect(&[failed()], &mut seen, t1)[0].when, t1);
        assert_eq!(collect(&[failed()], &mut seen, t2)[0].when, t1);
        assert!(collect(&[polled("a", vec![], vec![])], &mut seen, t2).is_empty());
        assert_eq!(collect(&[failed()], &mut seen, t2)[0].when, t2);
    }

    #[test]
    fn a_known_request_says_what_the_waiting_agent_asks_and_when() {
        let asked = Utc.with_ymd_and_hms(2026, 1, 1, 10, 30, 0).unwrap();
        let mut p = polled(
            "a",
            vec![],
            vec![agent("cc", AgentStatus::WaitingForApproval)],
        );
        p.approvals = vec![crate::vocab::Request {
            id: 1,
            agent: "cc".into(),
            tool: "Bash".into(),
            input: serde_json::json!({"command": "git push"}),
            tool_use_id: None,
            at: asked,
            context: None,
        }];
        let items = collect(&[p], &mut FirstSeen::default(), Utc::now());
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].kind, AttentionKind::Approval);
        assert_eq!(items[0].summary, "wants to run Bash: git push");
        assert_eq!(items[0].when, asked);
    }

    #[test]
    fn an_unresponsive_instance_gives_only_its_inbox() {
        let mut p = polled("a", vec![inbox_item(1, 0, "coder", "@user hi")], vec![]);
        p.status = None;
        let items = collect(&[p], &mut FirstSeen::default(), Utc::now());
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].kind, AttentionKind::Mention);
    }
}
