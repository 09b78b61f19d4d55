//! Running the `git` program. awtui shells out to the real `git` rather than
//! a library: worktrees, `worktree list --porcelain` and the user's own
//! config behave exactly as in the user's shell, except for what runs code
//! on its own.
//!
//! awtui is never an agent's deputy: no git it runs takes a program to
//! run, a repository or a setting from anything an agent can write.
//!
//! - Every git ignores the system config and runs no hooks, no fsmonitor,
//!   no `ext::` transport, only plain `ssh` and no submodule recursion
//!   ([`HARDENING`]); `GIT_*` variables awtui inherited (but the person's
//!   identity and global config file) are dropped, so none names another
//!   repository, object store, attribute source or config.
//! - Git for an agent's worktree names its git dir (the repository's own
//!   record, `<common dir>/worktrees/<id>`) and its work tree explicitly
//!   ([`Git::linked`]): the worktree's `.git` file, which the agent can
//!   rewrite, is never read by git (awtui compares it with the record
//!   first, see [`super::link`]).
//! - Attributes come from a tree awtui chose ([`Git::with_attributes_from`]:
//!   the branch's recorded base for a worktree, the checkout's `HEAD`
//!   otherwise), never from `.gitattributes` files in a working tree, so an
//!   agent cannot select a filter, textconv or merge driver of the person's
//!   config. git older than 2.40 has no `--attr-source`: there every
//!   filter, textconv, diff command and merge driver configured anywhere is
//!   switched off instead ([`neutralized`]), which also switches off the
//!   person's git-lfs for awtui's commits and checkouts.
//! - Drivers the repository's own config files define (`.git/config`,
//!   `config.worktree`: in the workspace, where agents write) are switched
//!   off whatever git's version ([`repository_scoped`]), since
//!   `.git/info/attributes` may select them; awtui's commits are never
//!   signed nor its merges checked, so no configured signing program runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, OnceLock};

use super::WorkspaceError;

/// The `-c` settings before every git command: nothing in a config file
/// starts a program git would not run anyway (see the module doc).
pub const HARDENING: [&str; 11] = [
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.sshCommand=ssh",
    "protocol.ext.allow=never",
    "submodule.recurse=false",
    "diff.ignoreSubmodules=all",
    // awtui's own commits and merges are never signed nor checked: a
    // repository config asking for it names the program that would run.
    "commit.gpgSign=false",
    "merge.verifySignatures=false",
    "gpg.program=gpg",
    "gpg.ssh.program=ssh-keygen",
    "gpg.x509.program=gpgsm",
];

/// The only `GIT_*` variables of awtui's own environment its git keeps:
/// the person's identity and their choice of global config file. Any other
/// (`GIT_DIR`, `GIT_ALTERNATE_OBJECT_DIRECTORIES`, `GIT_CONFIG_*`,
/// `GIT_ATTR_SOURCE`, `GIT_EXTERNAL_DIFF`, …) could point awtui's git at
/// another repository or run a program.
pub const KEPT_ENV: [&str; 7] = [
    "GIT_CONFIG_GLOBAL",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
];

/// The variables awtui's git is given: no prompt, no system config, plain
/// messages.
const SET_ENV: [(&str, &str); 3] = [
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("LC_ALL", "C"),
];

/// The shell lines giving a script's git the environment of awtui's own
/// (see [`dropped_env`] and [`Git::script_args`]).
pub const SCRIPT_ENV: &str = "for v in $(env | sed -n 's/^\\(GIT_[A-Za-z0-9_]*\\)=.*/\\1/p'); do \
     case $v in GIT_CONFIG_GLOBAL|GIT_AUTHOR_NAME|GIT_AUTHOR_EMAIL|GIT_AUTHOR_DATE|\
     GIT_COMMITTER_NAME|GIT_COMMITTER_EMAIL|GIT_COMMITTER_DATE) ;; *) unset \"$v\" ;; esac; done\n\
     export GIT_TERMINAL_PROMPT=0 GIT_CONFIG_NOSYSTEM=1\n";

/// Whether awtui's git drops the inherited variable `name`.
pub fn dropped_env(name: &str) -> bool {
    name.starts_with("GIT_") && !KEPT_ENV.contains(&name)
}

/// The first git with `--attr-source`.
const ATTR_SOURCE_SINCE: (u32, u32) = (2, 40);

/// `(major, minor)` of a `git version` line.
pub fn parse_version(line: &str) -> Option<(u32, u32)> {
    let v = line.trim().strip_prefix("git version ")?;
    let mut parts = v.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()?;
    Some((major, minor))
}

/// Whether the `git` on PATH knows `--attr-source` (asked once).
fn knows_attr_source() -> bool {
    static KNOWS: OnceLock<bool> = OnceLock::new();
    *KNOWS.get_or_init(|| {
        let out = Command::new("git")
            .arg("version")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .output();
        out.ok()
            .and_then(|o| parse_version(&String::from_utf8_lossy(&o.stdout)))
            .is_some_and(|v| v >= ATTR_SOURCE_SINCE)
    })
}

/// The `-c` settings switching off every driver named in `listing` (the
/// output of `git config --name-only --get-regexp`): each filter's
/// commands (and `required`), each diff driver's textconv, each merge
/// driver's command (an empty one fails, which awtui reports as a
/// conflict). For git without `--attr-source`; external diff commands are
/// off by `--no-ext-diff` wherever awtui asks for a patch.
pub fn neutralized(listing: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for key in listing.lines().map(str::trim) {
        let Some((section, rest)) = key.split_once('.') else {
            continue;
        };
        let Some((name, var)) = rest.rsplit_once('.') else {
            continue;
        };
        let section = section.to_ascii_lowercase();
        let settings: &[(&str, &str)] = match (section.as_str(), var.to_ascii_lowercase().as_str())
        {
            ("filter", _) => &[
                ("clean", ""),
                ("smudge", ""),
                ("process", ""),
                ("required", "false"),
            ],
            ("diff", "textconv") => &[("textconv", "")],
            ("merge", "driver") => &[("driver", "")],
            _ => continue,
        };
        for (var, value) in settings {
            let setting = format!("{section}.{name}.{var}={value}");
            if !out.contains(&setting) {
                out.push(setting);
            }
        }
    }
    out
}

/// The names in a `git config --show-scope --name-only` listing: all of
/// them when `everywhere`, else those from the repository's own config
/// files (scope `local` or `worktree`), which agents in the workspace can
/// write.
pub fn repository_scoped(listing: &str, everywhere: bool) -> String {
    listing
        .lines()
        .filter_map(|line| {
            let (scope, name) = line.split_once('\t')?;
            (everywhere || matches!(scope, "local" | "worktree")).then_some(name)
        })
        .map(|name| format!("{name}\n"))
        .collect()
}

/// Where a [`Git`]'s attributes come from.
#[derive(Clone, Debug)]
enum Attributes {
    /// The checkout's `HEAD` tree, found at the first command (the empty
    /// tree while the branch has no commit).
    Head(Arc<OnceLock<Option<String>>>),
    /// A tree-ish awtui recorded.
    Rev(String),
}

/// `git` run in a checkout with a stable, non-interactive environment and
/// the settings of the module doc.
#[derive(Clone, Debug)]
pub struct Git {
    dir: PathBuf,
    /// The git dir awtui's records name, for a linked worktree.
    git_dir: Option<PathBuf>,
    attributes: Attributes,
}

impl Git {
    /// Git commands run in `dir` (a checkout the person made, or a folder
    /// in one), with attributes from its `HEAD`.
    pub fn new(dir: impl Into<PathBuf>) -> Git {
        Git {
            dir: dir.into(),
            git_dir: None,
            attributes: Attributes::Head(Arc::default()),
        }
    }

    /// Git commands in the linked worktree `work_tree` whose git dir is
    /// `git_dir` (from the repository's records, never from the worktree's
    /// `.git` file), with attributes from `attributes` (the branch's
    /// recorded base: a tree the person made), else from its `HEAD`.
    pub fn linked(git_dir: &Path, work_tree: &Path, attributes: Option<&str>) -> Git {
        Git {
            dir: work_tree.to_path_buf(),
            git_dir: Some(git_dir.to_path_buf()),
            attributes: match attributes {
                Some(rev) => Attributes::Rev(rev.to_string()),
                None => Attributes::Head(Arc::default()),
            },
        }
    }

    /// The same git with attributes read from the tree-ish `rev`.
    pub fn with_attributes_from(mut self, rev: &str) -> Git {
        self.attributes = Attributes::Rev(rev.to_string());
        self
    }

    /// The folder the commands run in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The arguments before the subcommand that say where git works and
    /// the [`HARDENING`] settings.
    fn location_args(&self) -> Vec<std::ffi::OsString> {
        let mut args: Vec<std::ffi::OsString> = vec!["-C".into(), self.dir.clone().into()];
        if let Some(git_dir) = &self.git_dir {
            args.extend(["--git-dir".into(), git_dir.clone().into()]);
            args.extend(["--work-tree".into(), self.dir.clone().into()]);
        }
        for setting in HARDENING {
            args.extend(["-c".into(), setting.into()]);
        }
        args
    }

    /// The command with the location, hardening and environment, but no
    /// attribute settings.
    fn base_command(&self) -> Command {
        let mut cmd = Command::new("git");
        cmd.args(self.location_args());
        for (name, _) in std::env::vars_os() {
            if name.to_str().is_none_or(dropped_env) {
                cmd.env_remove(&name);
            }
        }
        for (name, value) in SET_ENV {
            cmd.env(name, value);
        }
        cmd.stdin(std::process::Stdio::null());
        cmd
    }

    /// The attribute settings for a git with (`attr_source`) or without
    /// `--attr-source`.
    fn attribute_args(&self, attr_source: bool) -> Vec<String> {
        // Drivers the repository's own config defines are off in any case:
        // that config lies in the workspace, where agents write, and
        // `.git/info/attributes` (also there) is read whatever the source.
        let mut args: Vec<String> = self
            .driver_overrides(!attr_source)
            .into_iter()
            .flat_map(|setting| ["-c".to_string(), setting])
            .collect();
        if attr_source {
            args.extend(
                self.attribute_source()
                    .map(|source| format!("--attr-source={source}")),
            );
        }
        args
    }

    /// Every argument awtui's own git passes before its subcommand here,
    /// for a shell script that runs git on this checkout (a host agent's
    /// turn brings its work back with it); with [`SCRIPT_ENV`] first, the
    /// script's git runs on the same terms.
    pub fn script_args(&self) -> Vec<String> {
        let mut args: Vec<String> = self
            .location_args()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        args.extend(self.attribute_args(knows_attr_source()));
        args
    }

    /// The `-c` settings switching off the configured drivers: every one
    /// when `everywhere` (git without `--attr-source`), else those the
    /// repository's own config files define (local and worktree scope,
    /// with what they include).
    fn driver_overrides(&self, everywhere: bool) -> Vec<String> {
        let mut cmd = self.base_command();
        cmd.args([
            "config",
            "--show-scope",
            "--name-only",
            "--get-regexp",
            r"^(filter|diff|merge)\.",
        ]);
        let listing = cmd
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        neutralized(&repository_scoped(&listing, everywhere))
    }

    /// The tree-ish attributes are read from (`None` outside a
    /// repository, where git reads none).
    fn attribute_source(&self) -> Option<String> {
        match &self.attributes {
            Attributes::Rev(rev) => Some(rev.clone()),
            Attributes::Head(found) => found
                .get_or_init(|| {
                    let first_line = |args: &[&str]| {
                        let out = self.base_command().args(args).output().ok()?;
                        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
                        (out.status.success() && !text.is_empty()).then_some(text)
                    };
                    first_line(&["rev-parse", "--verify", "-q", "HEAD^{tree}"])
                        .or_else(|| first_line(&["hash-object", "-t", "tree", "/dev/null"]))
                })
                .clone(),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        self.command_for(args, knows_attr_source())
    }

    /// The command for a git with (`attr_source`) or without
    /// `--attr-source`.
    fn command_for(&self, args: &[&str], attr_source: bool) -> Command {
        let mut cmd = self.base_command();
        cmd.args(self.attribute_args(attr_source));
        cmd.args(args);
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
    fn versions_are_read_from_git_version() {
        assert_eq!(parse_version("git version 2.39.5\n"), Some((2, 39)));
        assert_eq!(parse_version("git version 2.47.3"), Some((2, 47)));
        assert_eq!(parse_version("git version 2.40.0.windows.1"), Some((2, 40)));
        assert_eq!(parse_version("hub version 2"), None);
        assert!((2, 39) < ATTR_SOURCE_SINCE && (2, 47) >= ATTR_SOURCE_SINCE);
    }

    #[test]
    fn only_the_persons_identity_and_global_config_are_inherited() {
        for kept in [
            "GIT_CONFIG_GLOBAL",
            "GIT_AUTHOR_NAME",
            "GIT_COMMITTER_EMAIL",
        ] {
            assert!(!dropped_env(kept), "{kept}");
        }
        for dropped in [
            "GIT_DIR",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
            "GIT_OBJECT_DIRECTORY",
            "GIT_CONFIG_PARAMETERS",
            "GIT_CONFIG_COUNT",
            "GIT_CONFIG_KEY_0",
            "GIT_ATTR_SOURCE",
            "GIT_EXTERNAL_DIFF",
            "GIT_EXEC_PATH",
        ] {
            assert!(dropped_env(dropped), "{dropped}");
        }
        assert!(!dropped_env("HOME"));
    }

    #[test]
    fn a_scripts_git_keeps_the_same_variables_as_awtuis_own() {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("{SCRIPT_ENV}env"))
            .env("GIT_DIR", "/elsewhere")
            .env("GIT_CONFIG_COUNT", "1")
            .env("GIT_CONFIG_GLOBAL", "/home/me/.gitconfig")
            .env("GIT_AUTHOR_NAME", "Me")
            .output()
            .unwrap();
        let env = String::from_utf8_lossy(&out.stdout);
        let names: Vec<&str> = env
            .lines()
            .filter_map(|l| l.split_once('=').map(|(n, _)| n))
            .filter(|n| n.starts_with("GIT_"))
            .collect();
        for name in &names {
            assert!(
                !dropped_env(name) || SET_ENV.iter().any(|(n, _)| n == name),
                "{name} reached the script's git"
            );
        }
        assert!(names.contains(&"GIT_CONFIG_GLOBAL") && names.contains(&"GIT_AUTHOR_NAME"));
        assert!(names.contains(&"GIT_CONFIG_NOSYSTEM"), "{env}");
    }

    #[test]
    fn every_configured_driver_is_switched_off_without_attr_source() {
        let listing = "filter.lfs.clean\nfilter.lfs.smudge\nfilter.My.Dotted.process\n\
                       diff.x.textconv\ndiff.external\ndiff.renames\nmerge.m.driver\nmerge.m.name\n";
        assert_eq!(
            neutralized(listing),
            [
                "filter.lfs.clean=",
                "filter.lfs.smudge=",
                "filter.lfs.process=",
                "filter.lfs.required=false",
                "filter.My.Dotted.clean=",
                "filter.My.Dotted.smudge=",
                "filter.My.Dotted.process=",
                "filter.My.Dotted.required=false",
                "diff.x.textconv=",
                "merge.m.driver=",
            ]
        );
    }

    /// What git < 2.40 gets (no `--attr-source`): a filter the
    /// configuration defines and an in-tree `.gitattributes` selects runs
    /// neither on `add` nor on checkout, whatever git runs the test.
    #[test]
    fn without_attr_source_a_selected_filter_runs_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let git = Git::new(tmp.path());
        let marker = tmp.path().join("ran");
        let run = format!("sh -c 'touch {}; cat'", marker.display());
        git.run(&["init", "-q"]).unwrap();
        for (key, value) in [
            ("filter.x.clean", run.as_str()),
            ("filter.x.smudge", run.as_str()),
            ("filter.x.required", "true"),
            ("user.name", "t"),
            ("user.email", "t@t.invalid"),
            ("commit.gpgSign", "true"),
            ("gpg.program", run.as_str()),
        ] {
            git.run(&["config", key, value]).unwrap();
        }
        std::fs::write(tmp.path().join(".gitattributes"), "* filter=x\n").unwrap();
        std::fs::write(tmp.path().join("f.txt"), "x\n").unwrap();
        let legacy = |args: &[&str]| {
            let out = git.command_for(args, false).output().unwrap();
            assert!(out.status.success(), "{args:?}: {out:?}");
        };
        legacy(&["add", "--all"]);
        legacy(&["commit", "-qm", "one"]);
        std::fs::remove_file(tmp.path().join("f.txt")).unwrap();
        legacy(&["checkout", "--", "f.txt"]);
        assert!(!marker.exists(), "the configured filter ran");
    }

    #[test]
    fn only_the_repositorys_own_drivers_are_picked_unless_all_are() {
        let listing = "global\tfilter.lfs.clean\nlocal\tfilter.x.clean\n\
                       worktree\tdiff.y.textconv\ncommand\tmerge.z.driver\n";
        assert_eq!(
            repository_scoped(listing, false),
            "filter.x.clean\ndiff.y.textconv\n"
        );
        assert_eq!(repository_scoped(listing, true).lines().count(), 4);
    }

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
            ("commit.gpgSign", "true"),
            ("gpg.program", run.as_str()),
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
