//! The seed's one namespace for everything running: `agent` (a standalone
//! agent, or an agent of the only or current instance), `agent@instance`,
//! and `@instance`. Resolving a target picks one running instance.
//!
//! When a name fits several running instances (two workflows both started
//! as `default` in different folders), the one whose folder holds the
//! current directory is meant — the "current" instance; otherwise the
//! command refuses and lists the candidates.

use std::path::Path;

use super::registry::InstanceInfo;
use crate::context::mentions::{self, USER};

/// What a command-line target names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `agent`: a standalone agent, or an agent of the only/current instance.
    Agent(String),
    /// `agent@instance`.
    AgentAt {
        /// The agent.
        agent: String,
        /// The instance.
        instance: String,
    },
    /// `@instance`: the whole instance.
    Instance(String),
}

/// Why a target names nothing usable.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Not `agent`, `agent@instance` or `@instance`.
    #[error("'{0}' is not a target: use agent, agent@instance or @instance")]
    Invalid(String),
    /// Nothing running matches.
    #[error("{0}")]
    NotFound(String),
    /// Several running instances match.
    #[error("{0}")]
    Ambiguous(String),
}

impl Target {
    /// Parses `agent`, `agent@instance` or `@instance`.
    pub fn parse(text: &str) -> Result<Target, TargetError> {
        let bad = || TargetError::Invalid(text.to_string());
        let instance_ok = |i: &str| crate::workflow::setup::is_valid_instance_name(i);
        match text.split_once('@') {
            None if mentions::is_valid_name(text) => Ok(Target::Agent(text.to_string())),
            Some(("", i)) if instance_ok(i) => Ok(Target::Instance(i.to_string())),
            Some((a, i)) if mentions::is_valid_name(a) && instance_ok(i) => Ok(Target::AgentAt {
                agent: a.to_string(),
                instance: i.to_string(),
            }),
            _ => Err(bad()),
        }
    }
}

/// A target resolved to one running instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// The instance.
    pub info: InstanceInfo,
    /// The agent named, if any (`None` for `@instance` or no target).
    pub agent: Option<String>,
}

fn names(list: &[&InstanceInfo]) -> String {
    list.iter()
        .map(|i| format!("@{} ({})", i.instance, i.home.display()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Picks one of `candidates`: the only one, or the current one.
fn pick<'a>(
    candidates: Vec<&'a InstanceInfo>,
    cwd: &Path,
    what: &str,
) -> Result<&'a InstanceInfo, TargetError> {
    if candidates.len() == 1 {
        return Ok(candidates[0]);
    }
    let depth = |i: &InstanceInfo| {
        [
            i.workdir.as_path(),
            i.workflow.parent().unwrap_or(&i.workdir),
        ]
        .iter()
        .filter(|d| cwd.starts_with(d))
        .map(|d| d.components().count())
        .max()
    };
    let best = candidates.iter().filter_map(|i| depth(i)).max();
    let current: Vec<&&InstanceInfo> = candidates
        .iter()
        .filter(|i| best.is_some() && depth(i) == best)
        .collect();
    if let [one] = current.as_slice() {
        return Ok(one);
    }
    // What to type: the exact targets; the folder only helps when the
    // instances live in different ones.
    let agent = (!what.starts_with('@') && what != "no target").then_some(what);
    let choices: Vec<String> = candidates
        .iter()
        .map(|i| match agent {
            Some(a) => format!("{a}@{}", i.instance),
            None => format!("@{}", i.instance),
        })
        .collect();
    let folders: std::collections::BTreeSet<&Path> =
        candidates.iter().map(|i| i.workdir.as_path()).collect();
    let from_folder = if folders.len() > 1 {
        " (or run the command from the instance's folder)"
    } else {
        ""
    };
    Err(TargetError::Ambiguous(format!(
        "{what} could mean {}; say which: {}{from_folder}",
        names(&candidates),
        choices.join(" or ")
    )))
}

fn instance_named<'a>(
    name: &str,
    running: &'a [InstanceInfo],
    cwd: &Path,
) -> Result<&'a InstanceInfo, TargetError> {
    let candidates: Vec<&InstanceInfo> = running.iter().filter(|i| i.instance == name).collect();
    if candidates.is_empty() {
        return Err(TargetError::NotFound(format!(
            "no running instance '{name}'{}",
            running_hint(running)
        )));
    }
    pick(candidates, cwd, &format!("@{name}"))
}

fn running_hint(running: &[InstanceInfo]) -> String {
    if running.is_empty() {
        " (nothing is running)".to_string()
    } else {
        let all: Vec<String> = running.iter().map(|i| format!("@{}", i.instance)).collect();
        format!(" (running: {})", all.join(", "))
    }
}

/// Resolves `target` (or, without one, the only or current instance)
/// among `running`, with `cwd` breaking ties.
pub fn resolve(
    target: Option<&Target>,
    running: &[InstanceInfo],
    cwd: &Path,
) -> Result<Resolved, TargetError> {
    match target {
        None => {
            if running.is_empty() {
                return Err(TargetError::NotFound("nothing is running".to_string()));
            }
            let info = pick(running.iter().collect(), cwd, "no target")?;
            Ok(Resolved {
                info: info.clone(),
                agent: None,
            })
        }
        Some(Target::Instance(name)) => Ok(Resolved {
            info: instance_named(name, running, cwd)?.clone(),
            agent: None,
        }),
        Some(Target::AgentAt { agent, instance }) => {
            let info = instance_named(instance, running, cwd)?;
            if agent != USER && !info.agents.contains(agent) {
                return Err(TargetError::NotFound(format!(
                    "instance '{instance}' has no agent '{agent}' (agents: {})",
                    info.agents.join(", ")
                )));
            }
            Ok(Resolved {
                info: info.clone(),
                agent: Some(agent.clone()),
            })
        }
        Some(Target::Agent(agent)) => {
            if let Some(info) = running
                .iter()
                .find(|i| i.standalone && &i.instance == agent)
            {
                return Ok(Resolved {
                    info: info.clone(),
                    agent: Some(agent.clone()),
                });
            }
            let candidates: Vec<&InstanceInfo> = running
                .iter()
                .filter(|i| i.agents.contains(agent))
                .collect();
            if candidates.is_empty() {
                return Err(TargetError::NotFound(format!(
                    "no running agent '{agent}'{}",
                    running_hint(running)
                )));
            }
            let info = pick(candidates, cwd, agent)?;
            Ok(Resolved {
                info: info.clone(),
                agent: Some(agent.clone()),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: &str, dir: &str, agents: &[&str], standalone: bool) -> InstanceInfo {
        InstanceInfo {
            instance: name.into(),
            workflow_name: "w".into(),
            workflow: format!("{dir}/w.yaml").into(),
            workdir: dir.into(),
            home: format!("{dir}/.workflow/{name}").into(),
            pid: 1,
            mode: "start".into(),
            standalone,
            agents: agents.iter().map(|a| a.to_string()).collect(),
            control: "/x".into(),
            token_file: "/x".into(),
            mcp_url: String::new(),
            mcp_socket: None,
            log: None,
            state_dir: None,
            started: chrono::Utc::now(),
        }
    }

    #[test]
    fn parses_the_three_forms() {
        assert_eq!(Target::parse("coder"), Ok(Target::Agent("coder".into())));
        assert_eq!(
            Target::parse("coder@pr-1"),
            Ok(Target::AgentAt {
                agent: "coder".into(),
                instance: "pr-1".into()
            })
        );
        assert_eq!(Target::parse("@pr-1"), Ok(Target::Instance("pr-1".into())));
        for bad in ["", "@", "a@", "a@b@c", "1x", "@-x", "a b"] {
            assert!(Target::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn resolves_only_current_and_standalone() {
        let a = info("pr-1", "/w/a", &["coder", "reviewer"], false);
        let b = info("pr-2", "/w/b", &["coder"], false);
        let s = info("helper", "/h", &["helper"], true);
        let all = vec![a.clone(), b.clone(), s.clone()];
        let cwd = Path::new("/elsewhere");
        let r = |t: &str, cwd: &Path| resolve(Some(&Target::parse(t).unwrap()), &all, cwd);
        assert_eq!(r("reviewer", cwd).unwrap().info, a);
        assert_eq!(r("helper", cwd).unwrap().info, s);
        assert!(matches!(r("coder", cwd), Err(TargetError::Ambiguous(_))));
        assert_eq!(r("coder", Path::new("/w/b/src")).unwrap().info, b);
        assert_eq!(
            r("coder@pr-1", cwd).unwrap().agent.as_deref(),
            Some("coder")
        );
        assert!(matches!(r("qa@pr-1", cwd), Err(TargetError::NotFound(_))));
        assert!(matches!(r("@pr-9", cwd), Err(TargetError::NotFound(_))));
        assert!(matches!(
            resolve(None, &all, cwd),
            Err(TargetError::Ambiguous(_))
        ));
        assert_eq!(resolve(None, &all[..1], cwd).unwrap().info, a);
        assert!(matches!(
            resolve(None, &[], cwd),
            Err(TargetError::NotFound(_))
        ));
    }
}
