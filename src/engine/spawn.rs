//! Agent Mail's SPAWN_REQUEST → SPAWN_ACK: an agent asks for a worker and
//! awtui starts one of the workflow's `spawn:` slots, within its limits.
//!
//! A `spawn:` template with `max: N` makes N slots (`<template>-1 …`) that
//! are agents of the instance from the start, stopped. A request from an
//! agent the template allows starts the first slot not used yet: awtui
//! posts a message that hands the worker its issue (mentioning it, so it
//! wakes) and answers the requester with SPAWN_ACK (`Status: spawned`,
//! `Session: <worker>`); a request it cannot grant gets SPAWN_ACK
//! `Status: failed` with the reason. Each slot is used once per instance
//! (`max` bounds how many workers a run may ever start), and the slots
//! used are kept in `spawned.json` so a reopened instance starts them
//! again rather than handing them out twice. [`decide`] is pure.

use std::collections::BTreeSet;
use std::path::Path;

use crate::protocols::agent_mail::{MailContent, MailRecord};
use crate::workflow::AgentDef;

/// The file in the instance folder listing the slots already used.
pub const SPAWNED_FILE: &str = "spawned.json";

/// What to do about one SPAWN_REQUEST.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Start `slot`: post `handover` (mentions the worker) and `ack`
    /// (mentions the requester).
    Spawn {
        slot: String,
        handover: String,
        ack: String,
    },
    /// Answer `ack` (Status: failed) and start nothing.
    Refuse { ack: String },
}

/// The template a request names with `Template: <name>` (awtui's
/// addition to the seed's fields), if any.
fn named_template(message: &str) -> Option<&str> {
    message.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim().eq_ignore_ascii_case("template")).then(|| v.trim())
    })
}

fn ack(
    from: &str,
    issue: &str,
    status: &str,
    session: Option<&str>,
    reason: Option<&str>,
) -> String {
    let mut text = format!("@{from} [{issue}] SPAWN_ACK\nIssue: {issue}\nStatus: {status}\n");
    if let Some(s) = session {
        text.push_str(&format!("Session: {s}\n"));
    }
    if let Some(r) = reason {
        text.push_str(&format!("Reason: {r}\n"));
    }
    text
}

/// Decides a SPAWN_REQUEST `record` (its whole text `message`) posted by
/// `from`, given the workflow's agents and the slots already `used`.
pub fn decide(
    agents: &[AgentDef],
    used: &BTreeSet<String>,
    from: &str,
    message: &str,
    record: &MailRecord,
) -> Decision {
    let issue = record.bead_id.clone().unwrap_or_else(|| "?".into());
    let refuse = |reason: String| Decision::Refuse {
        ack: ack(from, &issue, "failed", None, Some(&reason)),
    };
    let mut templates: Vec<&str> = agents
        .iter()
        .filter_map(|a| a.spawn.as_ref().map(|s| s.template.as_str()))
        .collect();
    templates.dedup();
    if templates.is_empty() {
        return refuse("this workflow has no spawn: templates".into());
    }
    let template = match (named_template(message), templates.as_slice()) {
        (Some(t), _) if templates.contains(&t) => t.to_string(),
        (Some(t), _) => {
            return refuse(format!(
                "no spawn template '{t}' (templates: {})",
                templates.join(", ")
            ));
        }
        (None, [one]) => one.to_string(),
        (None, _) => {
            return refuse(format!(
                "say which template with 'Template: <name>' (templates: {})",
                templates.join(", ")
            ));
        }
    };
    let slots: Vec<&AgentDef> = agents
        .iter()
        .filter(|a| a.spawn.as_ref().is_some_and(|s| s.template == template))
        .collect();
    let allowed = slots
        .first()
        .and_then(|a| a.spawn.as_ref())
        .is_none_or(|s| s.from.is_empty() || s.from.iter().any(|f| f == from));
    if !allowed {
        return refuse(format!("{from} may not spawn '{template}' workers"));
    }
    let Some(slot) = slots.iter().find(|a| !used.contains(&a.name)) else {
        return refuse(format!(
            "all {} '{template}' workers of this instance were already spawned",
            slots.len()
        ));
    };
    let (resume, checkpoint) = match &record.content {
        MailContent::SpawnRequest {
            resume, checkpoint, ..
        } => (resume.unwrap_or(false), checkpoint.clone()),
        _ => (false, None),
    };
    let mut handover = format!(
        "@{} you were spawned by {from} to work on {issue}.",
        slot.name
    );
    if resume {
        match &checkpoint {
            Some(c) => handover.push_str(&format!(" Resume from checkpoint {c}.")),
            None => handover.push_str(" Resume from the last checkpoint."),
        }
    }
    handover.push_str(&format!(
        " Report with Agent Mail ([{issue}] BEAD_ACCEPTED, PROGRESS, OFFERING_READY or FAILED)."
    ));
    Decision::Spawn {
        slot: slot.name.clone(),
        handover,
        ack: ack(from, &issue, "spawned", Some(&slot.name), None),
    }
}

/// The slots used so far (none when the file is missing or unreadable).
pub fn load(dir: &Path) -> BTreeSet<String> {
    crate::fsutil::read_text_capped(&dir.join(SPAWNED_FILE), 1 << 20)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Records the slots used, durably (atomic write).
pub fn save(dir: &Path, used: &BTreeSet<String>) -> std::io::Result<()> {
    let json = serde_json::to_vec_pretty(used).unwrap_or_default();
    crate::fsutil::atomic_write(&dir.join(SPAWNED_FILE), &json)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::agent_mail::{self, Mode};
    use crate::workflow::SpawnSlot;

    fn agents(max: usize, from: &[&str]) -> Vec<AgentDef> {
        let yaml = "agents:\n  lead:\n    command: ['true']\n";
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("w.yaml");
        std::fs::write(&file, yaml).unwrap();
        let lead = crate::workflow::load(&file).unwrap().workflow.agents[0].clone();
        let mut all = vec![lead.clone()];
        for n in 1..=max {
            all.push(AgentDef {
                name: format!("worker-{n}"),
                spawn: Some(SpawnSlot {
                    template: "worker".into(),
                    from: from.iter().map(|s| s.to_string()).collect(),
                }),
                ..lead.clone()
            });
        }
        all
    }

    const REQUEST: &str =
        "[ol-7] SPAWN_REQUEST\nIssue: ol-7\nResume: true\nCheckpoint: abc123\nOrchestrator: lead\n";

    fn record(text: &str) -> MailRecord {
        agent_mail::parse(text, Mode::Lenient).unwrap()
    }

    #[test]
    fn a_request_starts_the_first_free_slot_and_acks_with_its_session() {
        let a = agents(2, &[]);
        let mut used = BTreeSet::new();
        let Decision::Spawn {
            slot,
            handover,
            ack,
        } = decide(&a, &used, "lead", REQUEST, &record(REQUEST))
        else {
            panic!("spawned")
        };
        assert_eq!(slot, "worker-1");
        assert!(handover.starts_with("@worker-1 "), "{handover}");
        assert!(
            handover.contains("ol-7") && handover.contains("abc123"),
            "{handover}"
        );
        // The ack is a well-formed SPAWN_ACK for the requester.
        let r = record(ack.trim_start_matches("@lead "));
        assert_eq!(r.bead_id.as_deref(), Some("ol-7"));
        assert!(matches!(
            r.content,
            MailContent::SpawnAck {
                session: Some(ref s),
                ..
            } if s == "worker-1"
        ));
        used.insert(slot);
        let Decision::Spawn { slot, .. } = decide(&a, &used, "lead", REQUEST, &record(REQUEST))
        else {
            panic!("second")
        };
        assert_eq!(slot, "worker-2");
        used.insert(slot);
        // Past the limit: failed, with the reason.
        let Decision::Refuse { ack } = decide(&a, &used, "lead", REQUEST, &record(REQUEST)) else {
            panic!("refused")
        };
        assert!(ack.contains("Status: failed"), "{ack}");
        assert!(ack.contains("all 2 'worker' workers"), "{ack}");
    }

    #[test]
    fn only_allowed_requesters_and_known_templates_spawn() {
        let a = agents(1, &["lead"]);
        let used = BTreeSet::new();
        let refused = |from: &str, text: &str| match decide(&a, &used, from, text, &record(text)) {
            Decision::Refuse { ack } => ack,
            d => panic!("{d:?}"),
        };
        assert!(refused("worker-1", REQUEST).contains("worker-1 may not spawn 'worker'"));
        let named = format!("{REQUEST}Template: builder\n");
        assert!(refused("lead", &named).contains("no spawn template 'builder'"));
        let none = agents(0, &[]);
        assert!(matches!(
            decide(&none, &used, "lead", REQUEST, &record(REQUEST)),
            Decision::Refuse { ack } if ack.contains("no spawn: templates")
        ));
    }

    #[test]
    fn used_slots_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        assert!(load(dir.path()).is_empty());
        let used: BTreeSet<String> = ["worker-1".to_string()].into();
        save(dir.path(), &used).unwrap();
        assert_eq!(load(dir.path()), used);
    }
}
