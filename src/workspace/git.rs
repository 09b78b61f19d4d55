//! Running the `git` program. awtui shells out to the real `git` rather than
//! a library: worktrees, `worktree list --porcelain` and the user's own
//! config behave exactly as in the user's shell, except for what runs code
//! on its own.
//!
//! Agents must not get awtui to run their commands: every git awtui runs
//! ignores the system config and runs no hooks, no fsmonitor, no `ext::`
//! transport and only plain `ssh` ([`HARDENING`]). Filters (git-lfs) and
//! the user's global and repository config are kept: the user's real
//! repository needs them, and a repository an agent built (whose config
//! names the command) is never one git runs in, since the agents' tools
//! accept only the workflow's own repository
//! ([`super::Repo::workflow_own`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::WorkspaceError;

/// The `-c` settings before every git command: nothing in a config file
/// starts a program git would not run anyway (see the module doc).
pub const HARDENING: [&str; 4] = [
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.sshCommand=ssh",
    "protocol.ext.allow=never",
];

/// `git -C <dir>` with a stable, non-interactive environment.
#[derive(Clone, Debug)]
pub struct Git {
    dir: PathBuf,
}

impl Git {
    /// Git commands run in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Git {
        Git { dir: dir.into() }
    }

    /// The folder the commands run in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(&self.dir);
        for setting in HARDENING {
            cmd.arg("-c").arg(setting);
        }
        cmd.args(args);
        // An inherited GIT_DIR (awtui started from a hook) would point every
        // command at another repository.
        for var in ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX"] {
            cmd.env_remove(var);
        }
        cmd.env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("LC_ALL", "C");
        cmd.stdin(std::process::Stdio::null());
        cmd
    }

    fn output(&self, args: &[&str], env: &[(&str, &str)]) -> Result<Output, WorkspaceError> {
        let mut cmd = self.command(args);
        cmd.envs(env.iter().copied());
        cmd.output().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                WorkspaceError::GitMissing
            } else {
                WorkspaceError::Git {
                    dir: self.dir.clone(),
                    args: args.join(" "),
                    message: e.to_string(),
                }
            }
        })
    }

    /// Runs `git args…`; its stdout, or an error with its stderr.
    pub fn run(&self, args: &[&str]) -> Result<String, WorkspaceError> {
        self.run_env(args, &[])
    }

    /// [`Git::run`] with extra environment variables.
    pub fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Result<String, WorkspaceError> {
        let out = self.output(args, env)?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(WorkspaceError::Git {
                dir: self.dir.clone(),
                args: args.join(" "),
                message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            })
        }
    }

    /// Whether `git args…` succeeds (a failing check is an answer, not an
    /// error; only a missing `git` is).
    pub fn check(&self, args: &[&str]) -> Result<bool, WorkspaceError> {
        Ok(self.output(args, &[])?.status.success())
    }

    /// `git args…`'s exit code and stdout, for commands whose failure code
    /// is an answer (`merge-tree` exits 1 on a conflict); only a missing or
    /// killed `git` is an error.
    pub fn status(&self, args: &[&str]) -> Result<(i32, String, String), WorkspaceError> {
        let out = self.output(args, &[])?;
        let code = out.status.code().ok_or_else(|| WorkspaceError::Git {
            dir: self.dir.clone(),
            args: args.join(" "),
            message: format!("ended by a signal ({})", out.status),
        })?;
        Ok((
            code,
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ))
    }

    /// `git args…`'s trimmed stdout when it succeeds, `None` when it fails.
    pub fn query(&self, args: &[&str]) -> Result<Option<String>, WorkspaceError> {
        let out = self.output(args, &[])?;
        Ok(out
            .status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_naming_hooks_or_fsmonitor_runs_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let git = Git::new(tmp.path());
        let marker = tmp.path().join("ran");
        let run = format!("touch '{}'", marker.display());
        git.run(&["init", "-q"]).unwrap();
        std::fs::create_dir_all(tmp.path().join("hooks")).unwrap();
        let hook = tmp.path().join("hooks/post-checkout");
        std::fs::write(&hook, format!("#!/bin/sh\n{run}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        for (key, value) in [
            ("core.fsmonitor", run.as_str()),
            (
                "core.hooksPath",
                &tmp.path().join("hooks").display().to_string(),
            ),
            ("user.name", "t"),
            ("user.email", "t@t.invalid"),
        ] {
            git.run(&["config", key, value]).unwrap();
        }
        std::fs::write(tmp.path().join("f.txt"), "x\n").unwrap();
        git.run(&["add", "f.txt"]).unwrap();
        git.run(&["commit", "-qm", "one"]).unwrap();
        git.run(&["status", "--porcelain"]).unwrap();
        git.run(&["checkout", "-q", "-b", "other"]).unwrap();
        assert!(!marker.exists(), "a configured command ran");
    }
}
