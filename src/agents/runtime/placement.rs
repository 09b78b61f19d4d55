//! Which machine each agent runs on: its `host:`, or for `host: any` (and
//! `spawn:` workers that name no host, when the workflow has hosts) the
//! host with the most free slots (`max_agents`; this machine counts as a
//! host too, with `hosts.local.max_agents`). Pure, decided once at start
//! in the order agents are written (spawn workers after them).

use std::collections::HashMap;

use crate::workflow::{AgentDef, HostChoice, Workflow, Workspace};

/// Where each agent runs: `None` for this machine, else a host's name.
pub fn place(workflow: &Workflow) -> HashMap<String, Option<String>> {
    let mut used: HashMap<Option<String>, u32> = HashMap::new();
    let mut placed = HashMap::new();
    let placed_by_slots = |a: &AgentDef| match a.host {
        HostChoice::Any => true,
        // A `spawn:` worker that names no host goes where there is room,
        // when there are hosts and it can run on one.
        HostChoice::Local => {
            a.spawn.is_some()
                && !workflow.hosts.is_empty()
                && a.sandbox.is_none()
                && matches!(a.workspace, Workspace::Worktree { .. })
                && !crate::agents::backend::backend_for(a.backend).in_process()
        }
        HostChoice::Named(_) => false,
    };
    for a in &workflow.agents {
        if placed_by_slots(a) {
            continue;
        }
        let host = match &a.host {
            HostChoice::Named(h) => Some(h.clone()),
            _ => None,
        };
        *used.entry(host.clone()).or_default() += 1;
        placed.insert(a.name.clone(), host);
    }
    for a in workflow.agents.iter().filter(|a| placed_by_slots(a)) {
        let free =
            |host: &Option<String>, max: u32| max as i64 - *used.get(host).unwrap_or(&0) as i64;
        let mut best: (Option<String>, i64) = (None, free(&None, workflow.local_slots));
        for h in &workflow.hosts {
            let key = Some(h.name.clone());
            let f = free(&key, h.max_agents);
            if f > best.1 {
                best = (key, f);
            }
        }
        *used.entry(best.0.clone()).or_default() += 1;
        placed.insert(a.name.clone(), best.0);
    }
    placed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_goes_where_most_slots_are_free_this_machine_included() {
        let yaml = "hosts:
  local: {max_agents: 2}
  box: {ssh: dev@box, dir: ~/app, max_agents: 3}
  small: {ssh: dev@small, dir: ~/app, max_agents: 1}
agents:
  a: {command: ./a.sh}
  b: {command: ./a.sh, host: box, workspace: worktree}
  c: {command: ./a.sh, host: any, workspace: worktree}
  d: {command: ./a.sh, host: any, workspace: worktree}
  e: {command: ./a.sh, host: any, workspace: worktree}
  f: {command: ./a.sh, host: any, workspace: worktree}
";
        let w = crate::workflow::load_str(yaml, std::path::Path::new("/tmp/w.yaml"))
            .unwrap()
            .workflow;
        let p = place(&w);
        // Free: local 1, box 2, small 1 → c: box (2), then box 1 = local 1
        // = small 1 → d: local (first best), then e: box, f: small.
        assert_eq!(p["a"], None);
        assert_eq!(p["b"].as_deref(), Some("box"));
        assert_eq!(p["c"].as_deref(), Some("box"));
        assert_eq!(p["d"], None);
        assert_eq!(p["e"].as_deref(), Some("box"));
        assert_eq!(p["f"].as_deref(), Some("small"));
    }

    #[test]
    fn spawn_workers_go_where_there_is_room_when_there_are_hosts() {
        let yaml = "hosts:
  local: {max_agents: 1}
  box: {ssh: dev@box, dir: ~/app, max_agents: 2}
agents:
  lead: {command: ./a.sh}
spawn:
  worker: {max: 3, command: ./w.sh, workspace: worktree}
";
        let w = crate::workflow::load_str(yaml, std::path::Path::new("/tmp/w.yaml"))
            .unwrap()
            .workflow;
        let p = place(&w);
        assert_eq!(p["lead"], None);
        // Free: local 0, box 2 → box, box, then local -1 = box 0 → local.
        assert_eq!(p["worker-1"].as_deref(), Some("box"));
        assert_eq!(p["worker-2"].as_deref(), Some("box"));
        assert_eq!(p["worker-3"], None);
    }
}
