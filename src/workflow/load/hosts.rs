//! Where agents run: the workflow's `hosts:` and each agent's `sandbox:`
//! and `host:`.

use std::path::PathBuf;

use super::{Walker, keys};
use crate::workflow::schema::{AgentDef, HostChoice, HostDef, Sandbox};
use crate::workflow::yaml::{Node, Value};

/// Whether `ssh` is one plain ssh destination (`user@host`, a host or a
/// `~/.ssh/config` alias): nothing ssh or git could read as an option, a
/// URL or a transport (`-oProxyCommand=…`, `ext::…`, `fd::…`).
fn is_destination(ssh: &str) -> bool {
    !ssh.is_empty()
        && !ssh.starts_with(['-', '@', '.'])
        && ssh
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@' | '%' | '+'))
}

/// The name under `hosts:` that sets this machine's own slots.
pub const LOCAL_HOST: &str = "local";
/// Slots of a host (this machine included) that does not say.
pub const DEFAULT_SLOTS: u32 = 4;

impl Walker<'_> {
    /// `hosts:`: `<name>: {ssh, dir, max_agents}`; `local: {max_agents}`
    /// sets this machine's slots. Returns the hosts and this machine's slots.
    pub(super) fn hosts(&mut self, node: &Node) -> (Vec<HostDef>, u32) {
        let mut hosts = Vec::new();
        let mut local = DEFAULT_SLOTS;
        let Some(entries) = self.mapping(node, "hosts") else {
            return (hosts, local);
        };
        let unique = self.unique(entries, |key, line| {
            format!(
                "host '{}' is defined twice (first at line {line})",
                key.name
            )
        });
        for (key, def) in unique {
            let what = format!("host '{}'", key.name);
            if !crate::context::mentions::is_valid_name(&key.name) || key.name == "any" {
                self.diags.error(
                    key.pos,
                    format!(
                        "'{}' is not a valid host name: it must match [a-zA-Z][a-zA-Z0-9_-]* and not be 'any'",
                        key.name
                    ),
                );
                continue;
            }
            let Some(fields) = self.keyed(def, &keys::HOST, &what) else {
                continue;
            };
            let max_agents = match fields.get("max_agents") {
                Some(n) => match self.count(n, &format!("{what}: max_agents"), 1) {
                    Some(m) => m,
                    None => continue,
                },
                None => DEFAULT_SLOTS,
            };
            if key.name == LOCAL_HOST {
                for k in ["ssh", "dir"] {
                    if let Some(n) = fields.get(k) {
                        self.diags.error(
                            n.pos,
                            format!(
                                "host 'local' is this machine: it takes only max_agents, not '{k}'"
                            ),
                        );
                    }
                }
                local = max_agents;
                continue;
            }
            let ssh = self.key_string(&fields, "ssh", &what);
            let dir = self.key_string(&fields, "dir", &what);
            match (ssh, dir) {
                (Some(ssh), Some(dir)) => {
                    if !is_destination(&ssh) {
                        self.diags.error(
                            fields.get("ssh").map_or(key.pos, |n| n.pos),
                            format!("{what}: ssh must be one ssh destination (user@host or a ~/.ssh/config alias; a port or a jump host goes in ~/.ssh/config), found '{ssh}'"),
                        );
                        continue;
                    }
                    if dir.trim().is_empty() || dir.contains(['\n', '\0']) {
                        self.diags.error(
                            fields.get("dir").map_or(key.pos, |n| n.pos),
                            format!("{what}: dir must be a folder on that host"),
                        );
                        continue;
                    }
                    hosts.push(HostDef {
                        name: key.name.clone(),
                        pos: key.pos,
                        ssh,
                        dir,
                        max_agents,
                    });
                }
                (ssh, dir) => {
                    let missing: Vec<&str> = [("ssh", ssh.is_none()), ("dir", dir.is_none())]
                        .into_iter()
                        .filter_map(|(k, m)| m.then_some(k))
                        .collect();
                    self.diags.error(
                        key.pos,
                        format!(
                            "{what}: missing {} (ssh: user@host, dir: the repository there)",
                            missing.join(" and ")
                        ),
                    );
                }
            }
        }
        (hosts, local)
    }

    /// `sandbox: true | false | {writable: [...], hidden: [...]}`.
    pub(super) fn sandbox(&mut self, node: &Node, what: &str) -> Option<Sandbox> {
        let what = format!("{what}: sandbox");
        match &node.value {
            Value::Bool(true) => Some(Sandbox::default()),
            Value::Bool(false) | Value::Null => None,
            Value::Map(entries) => {
                let fields = self.fields(entries, &keys::SANDBOX, &what);
                let mut paths = |k: &str| -> Vec<PathBuf> {
                    let Some(n) = fields.get(k) else {
                        return Vec::new();
                    };
                    self.string_list(n, &format!("{what}: {k}"))
                        .into_iter()
                        .map(|p| self.sandbox_path(&p))
                        .collect()
                };
                let writable = paths("writable");
                let hidden = paths("hidden");
                Some(Sandbox { writable, hidden })
            }
            other => {
                self.diags.error(
                    node.pos,
                    format!(
                        "{what} must be true, false or {{writable: [...], hidden: [...]}}, found {}",
                        other.kind()
                    ),
                );
                None
            }
        }
    }

    /// A sandbox path: `~/x` in the home folder, relative ones in the
    /// workflow's folder.
    fn sandbox_path(&self, p: &str) -> PathBuf {
        match p.strip_prefix("~/") {
            Some(rest) => std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/"))
                .join(rest),
            None => self.base_dir.join(p),
        }
    }

    /// `host: NAME | any`.
    pub(super) fn host_choice(&mut self, node: &Node, what: &str) -> HostChoice {
        match self.string(node, &format!("{what}: host")).as_deref() {
            None => HostChoice::Local,
            Some("any") => HostChoice::Any,
            Some(LOCAL_HOST) => HostChoice::Local,
            Some(name) => HostChoice::Named(name.to_string()),
        }
    }

    /// Every `host:` names a host of `hosts:`; a sandboxed agent runs on
    /// this machine.
    pub(super) fn check_hosts(&mut self, agents: &[AgentDef], hosts: &[HostDef]) {
        for a in agents {
            if let HostChoice::Named(name) = &a.host
                && !hosts.iter().any(|h| &h.name == name)
            {
                let known: Vec<&str> = hosts.iter().map(|h| h.name.as_str()).collect();
                self.diags.error(
                    a.pos,
                    format!(
                        "agent '{}': host '{name}' is not one of the workflow's hosts ({})",
                        a.name,
                        if known.is_empty() {
                            "there is no 'hosts:' section".to_string()
                        } else {
                            format!("hosts: {}", known.join(", "))
                        }
                    ),
                );
            }
            if a.sandbox.is_some() && a.host != HostChoice::Local {
                self.diags.error(
                    a.pos,
                    format!(
                        "agent '{}': sandbox: confines an agent on this machine; one on another host runs as that host's user (drop sandbox: or host:)",
                        a.name
                    ),
                );
            }
            if a.host != HostChoice::Local
                && !matches!(a.workspace, crate::workflow::Workspace::Worktree { .. })
            {
                self.diags.error(
                    a.pos,
                    format!(
                        "agent '{}': an agent on another host works in a worktree of the repository there; add workspace: worktree",
                        a.name
                    ),
                );
            }
            if a.host != HostChoice::Local
                && crate::agents::backend::backend_for(a.backend).in_process()
            {
                self.diags.error(
                    a.pos,
                    format!(
                        "agent '{}': the {} backend runs in-process here; host: is for CLI agents",
                        a.name,
                        a.backend.name()
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    fn errors(yaml: &str) -> String {
        match crate::workflow::load_str(yaml, Path::new("/tmp/w.yaml")) {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn hosts_and_sandboxes_are_checked_where_written() {
        let e = errors("hosts:\n  box:\n    ssh: dev@box\nagents:\n  a:\n    command: ./a.sh\n");
        assert!(
            e.contains("w.yaml:2:3") && e.contains("host 'box': missing dir"),
            "{e}"
        );
        let e = errors(
            "agents:\n  a:\n    command: ./a.sh\n    host: nowhere\n    workspace: worktree\n",
        );
        assert!(
            e.contains(
                "host 'nowhere' is not one of the workflow's hosts (there is no 'hosts:' section)"
            ),
            "{e}"
        );
        let e = errors(
            "hosts:\n  box: {ssh: dev@box, dir: ~/app}\nagents:\n  a:\n    command: ./a.sh\n    host: box\n",
        );
        assert!(e.contains("add workspace: worktree"), "{e}");
        let e = errors(
            "hosts:\n  box: {ssh: dev@box, dir: ~/app}\nagents:\n  a:\n    command: ./a.sh\n    host: box\n    workspace: worktree\n    sandbox: true\n",
        );
        assert!(
            e.contains("sandbox: confines an agent on this machine"),
            "{e}"
        );
        for hostile in [
            "-oProxyCommand=x",
            "'ext::sh -c x'",
            "fd::3",
            "ssh://h:22",
            "a;b",
        ] {
            let e = errors(&format!(
                "hosts:\n  box: {{ssh: {hostile}, dir: ~/app}}\nagents:\n  a: {{command: ./a.sh}}\n"
            ));
            assert!(
                e.contains("ssh must be one ssh destination"),
                "{hostile}: {e}"
            );
        }
        for fine in ["dev@box.example", "box", "dev@10.0.0.7", "build-1_x"] {
            let e = errors(&format!(
                "hosts:\n  box: {{ssh: {fine}, dir: ~/app}}\nagents:\n  a: {{command: ./a.sh}}\n"
            ));
            assert!(e.is_empty(), "{fine}: {e}");
        }
        let e = errors(
            "agents:\n  a:\n    command: ./a.sh\n    sandbox: {writable: [out], hiden: [x]}\n",
        );
        assert!(
            e.contains("unknown key 'hiden'") && e.contains("did you mean 'hidden'"),
            "{e}"
        );
        let e = errors("agents:\n  a:\n    command: ./a.sh\n    sandbox: yes please\n");
        assert!(
            e.contains("sandbox must be true, false or {writable"),
            "{e}"
        );
    }

    #[test]
    fn sandbox_paths_are_taken_from_the_workflows_folder_or_home() {
        let w = crate::workflow::load_str(
            "agents:\n  a:\n    command: ./a.sh\n    sandbox: {writable: [out, ~/cache], hidden: [/secret]}\n",
            Path::new("/tmp/w.yaml"),
        )
        .unwrap()
        .workflow;
        let s = w.agents[0].sandbox.clone().unwrap();
        let home = std::path::PathBuf::from(std::env::var("HOME").unwrap());
        assert_eq!(
            s.writable,
            vec![Path::new("/tmp/out").to_path_buf(), home.join("cache")]
        );
        assert_eq!(s.hidden, vec![Path::new("/secret").to_path_buf()]);
    }
}
