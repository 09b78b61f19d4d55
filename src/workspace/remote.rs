//! The other half of a worktree on another host (`host:` agents): where it
//! is, recorded on the agent's local branch, so cleaning the local
//! workspace cleans the one there too — and only what awtui made there.

use std::process::{Command, Stdio};

use super::Repo;
use super::WorkspaceError;

/// The config keys of the local branch naming the host's copy.
pub fn keys(branch: &str) -> [String; 3] {
    [
        format!("branch.{branch}.awtuihost"),
        format!("branch.{branch}.awtuihostrepo"),
        format!("branch.{branch}.awtuihostworktree"),
    ]
}

/// The key, in the host's repository, that says awtui made `branch` there
/// (so a branch of the user's of the same name is never taken or deleted).
pub fn made_key(branch: &str) -> String {
    format!("branch.{branch}.awtuimade")
}

/// Where the host's copy of a local workspace branch is, as recorded on
/// the branch (read before the branch is removed: its config goes with it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostCopy {
    pub branch: String,
    /// The ssh destination.
    pub dest: String,
    /// The repository there.
    pub repo: String,
    /// The worktree there.
    pub worktree: String,
}

impl HostCopy {
    /// The host's copy of `branch`, if it has one.
    pub fn recorded(repo: &Repo, branch: &str) -> Result<Option<HostCopy>, WorkspaceError> {
        let [host_key, repo_key, wt_key] = keys(branch);
        let (Some(dest), Some(there), Some(worktree)) = (
            repo.git.query(&["config", "--get", &host_key])?,
            repo.git.query(&["config", "--get", &repo_key])?,
            repo.git.query(&["config", "--get", &wt_key])?,
        ) else {
            return Ok(None);
        };
        Ok(Some(HostCopy {
            branch: branch.to_string(),
            dest,
            repo: there,
            worktree,
        }))
    }

    /// Removes the worktree there, and the branch and awtui's ref there
    /// when awtui made them, after the local workspace was removed.
    /// Returns what to tell the person when the host could not be reached
    /// (the local removal stands; nothing is retried).
    pub fn clean(&self, local: &Repo) -> Option<String> {
        let tail = self.branch.trim_start_matches("awtui/");
        let _ = local
            .git
            .run(&["update-ref", "-d", &format!("refs/awtui/remote/{tail}")]);
        let q = crate::agents::runtime::ssh::quote;
        let (r, b, wt) = (q(&self.repo), q(&self.branch), q(&self.worktree));
        let script = format!(
            "git -C {r} worktree remove --force {wt} 2>/dev/null; rm -rf {wt}; git -C {r} worktree prune; \
             if [ \"$(git -C {r} config --get {made})\" = yes ]; then \
               git -C {r} branch -D {b} >/dev/null 2>&1; git -C {r} config --unset {made}; fi; \
             git -C {r} update-ref -d {sync} 2>/dev/null; true",
            made = q(&made_key(&self.branch)),
            sync = q(&format!("refs/awtui/sync/{tail}")),
        );
        let out = Command::new(crate::agents::runtime::ssh::SSH)
            .args([
                "-o",
                "BatchMode=yes",
                "-o",
                "ConnectTimeout=15",
                &self.dest,
                &script,
            ])
            .stdin(Stdio::null())
            .output();
        match out {
            Ok(o) if o.status.success() => None,
            Ok(o) => Some(format!(
                "could not clean {}'s worktree on {} ({}): {}",
                self.branch,
                self.dest,
                self.worktree,
                crate::sanitize::for_terminal(String::from_utf8_lossy(&o.stderr).trim())
            )),
            Err(e) => Some(format!(
                "could not run ssh to clean {}'s worktree on {}: {e}",
                self.branch, self.dest
            )),
        }
    }
}
