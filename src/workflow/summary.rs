//! The human summary `awtui validate` prints for a valid workflow.

use std::fmt::Write;
use std::path::Path;

use super::schema::{
    AgentDef, BackendChoice, BackendKind, ContextConfig, HostChoice, PromptSource, Workflow,
};
use super::setup::context_dir;
use crate::context::mentions;

/// Agents the kickoff wakes, in order of first mention.
pub fn kickoff_wakes(workflow: &Workflow) -> Vec<String> {
    let Some(kickoff) = &workflow.kickoff else {
        return Vec::new();
    };
    let agents = workflow.agent_names();
    mentions::extract(&kickoff.value, &agents, mentions::SYSTEM)
        .into_iter()
        .filter(|m| m != mentions::USER)
        .collect()
}

/// Describes agents, context location, documents, setup steps and who the
/// kickoff wakes, for instance `instance`.
pub fn summary(workflow: &Workflow, instance: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "workflow   {} ({})",
        workflow.name,
        workflow.file.display()
    );
    let _ = writeln!(out, "agents     {}", workflow.agents.len());
    let width = workflow
        .agents
        .iter()
        .map(|a| a.name.len())
        .max()
        .unwrap_or(0);
    for a in &workflow.agents {
        let model = match (&a.model, a.backend) {
            (Some(m), _) => m.as_str(),
            // A program of its own: no model to speak of.
            (None, crate::workflow::BackendKind::Command) => "(a program)",
            (None, _) => "(backend default model)",
        };
        let how = match a.backend_choice {
            BackendChoice::Explicit => "",
            BackendChoice::FromModel if a.command.is_some() => " (from command)",
            BackendChoice::FromModel => " (from model)",
        };
        let mut line = format!(
            "  {:width$}  {model} · backend {}{how}",
            a.name,
            a.backend.name()
        );
        if let Some(cmd) = &a.command {
            let _ = write!(
                line,
                " · command {}",
                shlex::try_join(cmd.iter().map(String::as_str)).unwrap_or_default()
            );
        }
        match &a.prompt_source {
            PromptSource::File(p) => {
                let shown = p.strip_prefix(&workflow.base_dir).unwrap_or(p);
                let _ = write!(line, " · prompt {}", shown.display());
            }
            PromptSource::Inline => line.push_str(" · inline prompt"),
            PromptSource::None => {}
        }
        if let Some(how) = protocol_line(a, &workflow.base_dir) {
            let _ = write!(line, " · {how}");
        }
        if let Some(n) = a.max_turns {
            let _ = write!(line, " · max {n} turns");
        }
        if let Some(t) = a.timeout {
            let _ = write!(line, " · timeout {}s", t.as_secs());
        }
        let _ = write!(line, " · {}", place_of(a));
        if let super::schema::Workspace::Worktree { base } = &a.workspace {
            let _ = write!(
                line,
                " · worktree awtui/{instance}/{} from {}",
                a.name,
                base.as_deref().unwrap_or("the current branch")
            );
        }
        let _ = writeln!(out, "{line}");
    }
    match &workflow.context {
        ContextConfig::Disabled => {
            let _ = writeln!(
                out,
                "context    disabled (agents share no channel or documents)"
            );
        }
        ContextConfig::Memory(files) => {
            let _ = writeln!(out, "context    memory provider (nothing kept on disk)");
            let _ = writeln!(
                out,
                "documents  {}",
                document_line(&files.document, &files.documents)
            );
        }
        ContextConfig::File(files) => {
            let dir = match context_dir(workflow, instance) {
                Ok(Some(d)) => d
                    .strip_prefix(&workflow.base_dir)
                    .map(|r| r.display().to_string())
                    .unwrap_or_else(|_| d.display().to_string()),
                _ => files.dir.value.clone(),
            };
            let _ = writeln!(
                out,
                "context    file provider in {dir} (instance {instance}; channel {})",
                files.channel
            );
            let _ = writeln!(
                out,
                "documents  {}",
                document_line(&files.document, &files.documents)
            );
        }
    }
    if workflow.setup.is_empty() {
        let _ = writeln!(out, "setup      none");
    } else {
        let _ = writeln!(out, "setup      {} step(s)", workflow.setup.len());
        for (i, s) in workflow.setup.iter().enumerate() {
            let into = s
                .output
                .as_ref()
                .map(|o| format!("  → ${{{{ {o} }}}}"))
                .unwrap_or_default();
            let _ = writeln!(out, "  {}. {}{into}", i + 1, s.shell.value.trim());
        }
    }
    for h in &workflow.hosts {
        let _ = writeln!(
            out,
            "hosts      {} ({}, {}; at most {} agents)",
            h.name, h.ssh, h.dir, h.max_agents
        );
    }
    let tasks = match workflow.tasks.as_ref().map(Vec::len) {
        None | Some(0) => "none in the workflow file (agents may plan their own)".to_string(),
        Some(n) => format!("{n} from the workflow file"),
    };
    let _ = writeln!(out, "tasks      {tasks}");
    let wakes = kickoff_wakes(workflow);
    let kickoff = match (&workflow.kickoff, wakes.is_empty()) {
        (None, _) => "none (agents wait for a message)".to_string(),
        (Some(_), true) => "wakes nobody".to_string(),
        (Some(_), false) => format!(
            "wakes {}",
            wakes
                .iter()
                .map(|w| format!("@{w}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let _ = writeln!(out, "kickoff    {kickoff}");
    out
}

/// How `agent` will be talked to, and why: `acp (native)`, `acp (adapter
/// codex-acp found)`, `headless (adapter codex-acp not found)`, `headless
/// (protocol: headless)`… `None` for in-process API agents and plain
/// programs, which have no protocol to choose.
pub fn protocol_line(agent: &AgentDef, workdir: &Path) -> Option<String> {
    use crate::agents::backend::acp;
    let name = acp::protocol_name(agent, workdir);
    if name.is_empty() {
        return None;
    }
    let program = acp::program_of(agent);
    let why = match (&agent.protocol, &program) {
        _ if agent.backend == BackendKind::Acp => "backend: acp".to_string(),
        (Some(p), _) => format!("protocol: {}", p.name()),
        (None, None) => "no ACP for this CLI".to_string(),
        (None, Some(_)) if agent.host != HostChoice::Local => "on another host".to_string(),
        (None, Some(p)) => match crate::agents::backend::backend_for(agent.backend).acp_program() {
            Some(a) if a.adapter => {
                let found = crate::agents::backend::find_executable(p, workdir, agent.own_path());
                format!(
                    "adapter {p} {}",
                    if found.is_some() {
                        "found"
                    } else {
                        "not found"
                    }
                )
            }
            _ => "native".to_string(),
        },
    };
    Some(format!("{name} ({why})"))
}

/// Where an agent runs: this machine or a host (`host:`), and whether in
/// a sandbox (`sandbox:`, with its extra writable and hidden folders).
fn place_of(a: &AgentDef) -> String {
    let machine = match &a.host {
        HostChoice::Local => "on this machine".to_string(),
        HostChoice::Named(h) => format!("on host {h}"),
        HostChoice::Any => "on the host with the most free slots (host: any)".to_string(),
    };
    let Some(sandbox) = &a.sandbox else {
        return machine;
    };
    let folders = |what: &str, paths: &[std::path::PathBuf]| {
        (!paths.is_empty()).then(|| {
            let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            format!("{what} {}", shown.join(", "))
        })
    };
    let extra: Vec<String> = [
        folders("writable", &sandbox.writable),
        folders("hidden", &sandbox.hidden),
    ]
    .into_iter()
    .flatten()
    .collect();
    if extra.is_empty() {
        format!("{machine} · sandbox")
    } else {
        format!("{machine} · sandbox ({})", extra.join("; "))
    }
}

fn document_line(entry: &str, others: &[String]) -> String {
    let mut parts = vec![format!("{entry} (entry)")];
    parts.extend(others.iter().cloned());
    parts.join(", ")
}
