//! `sandbox:`: the agent's process under bubblewrap (`bwrap`). It sees the
//! whole filesystem read-only but for what it may write (its workspace,
//! its own folders, its CLI's state folders), a private `/tmp`, and an
//! empty folder where the other agents' folders and every token file are.
//! What awtui trusts stays read-only even inside a writable workspace:
//! the repository's git dir, the workflow file and the files it names,
//! awtui's instance folder (channel, documents), and any `.git` directly
//! inside a writable folder. The network is not confined: awtui's MCP
//! endpoint and the model API stay reachable (and so does everything else;
//! see the README).
//!
//! The mount list is pure but for resolving links ([`Sandboxed::args`]);
//! [`check`] runs `bwrap` once to see that it works here.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{Launch, Local, Runtime};
use crate::agents::backend::BackendError;
use crate::agents::backend::invocation::Invocation;

/// The program that confines.
pub const BWRAP: &str = "bwrap";

/// What one sandboxed agent may touch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sandboxed {
    /// Folders (or files) it may write: its workspace, its own folders,
    /// its CLI's state, the workflow's `writable:`.
    pub writable: Vec<PathBuf>,
    /// Folders (or files) awtui trusts, read-only even inside a writable
    /// folder (a writable folder deeper inside one is writable again): the
    /// git dir, the workflow file and what it names, the instance folder.
    pub read_only: Vec<PathBuf>,
    /// Folders (or files) it may not see: the token and control folders,
    /// every agent's folders (its own are writable again above them), the
    /// workflow's `hidden:`.
    pub hidden: Vec<PathBuf>,
    /// Folders (or files) under `/tmp` it still reads (the private `/tmp`
    /// would hide them): the workflow's folder, its program's folder, its
    /// `PATH`, awtui's own binary. A writable path at the same place wins.
    pub readable: Vec<PathBuf>,
}

/// How a path is mounted, in the order that decides what lies on top at
/// the same depth: read-only wins over writable, hidden over both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Mount {
    Readable,
    Writable,
    ReadOnly,
    Hidden,
}

/// The git link or folder directly inside `dir`, when there is one: a
/// writable workspace's own `.git` is never writable from inside (its
/// config, hooks and attributes run as the person when awtui's git or the
/// person's own git reads them; its link says which repository awtui's
/// git works on).
fn git_entry(dir: &Path) -> Option<PathBuf> {
    let git = dir.join(".git");
    git.symlink_metadata().is_ok().then_some(git)
}

impl Sandboxed {
    /// The `bwrap` arguments before `--` and the command. Deeper paths are
    /// mounted later, so an agent's own folder inside a hidden one is
    /// visible again, and a hidden or read-only folder inside a writable
    /// workspace stays so. A `.git` directly inside a writable folder is
    /// read-only. Paths that do not exist are left out (a writable one is
    /// made first by [`prepare`](Runtime::prepare)).
    pub fn args(&self) -> Vec<String> {
        let mut args: Vec<String> = [
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--unshare-pid",
            "--unshare-ipc",
            "--new-session",
            "--die-with-parent",
        ]
        .map(String::from)
        .to_vec();
        let mut mounts: Vec<(PathBuf, Mount)> = Vec::new();
        let mut add = |paths: &[PathBuf], how: Mount| {
            for p in paths {
                if let Ok(real) = p.canonicalize() {
                    mounts.push((real, how));
                }
            }
        };
        add(&self.readable, Mount::Readable);
        add(&self.writable, Mount::Writable);
        add(&self.read_only, Mount::ReadOnly);
        let gits: Vec<PathBuf> = self.writable.iter().filter_map(|w| git_entry(w)).collect();
        add(&gits, Mount::ReadOnly);
        add(&self.hidden, Mount::Hidden);
        mounts.sort_by(|(a, ha), (b, hb)| {
            a.components()
                .count()
                .cmp(&b.components().count())
                .then(ha.cmp(hb))
        });
        mounts.dedup();
        for (path, how) in mounts {
            let p = path.display().to_string();
            match how {
                Mount::Readable | Mount::ReadOnly => {
                    args.extend(["--ro-bind".into(), p.clone(), p])
                }
                Mount::Writable => args.extend(["--bind".into(), p.clone(), p]),
                Mount::Hidden if path.is_dir() => args.extend(["--tmpfs".into(), p]),
                Mount::Hidden => args.extend(["--ro-bind".into(), "/dev/null".into(), p]),
            }
        }
        args
    }
}

impl Runtime for Sandboxed {
    fn place(&self) -> String {
        "sandbox".into()
    }

    fn prepare(&self, inv: Invocation, hint: &str) -> Result<Launch, BackendError> {
        let mut me = self.clone();
        // Its workspace and its own folders, which a first turn may not
        // have made yet.
        for dir in [
            Some(inv.cwd.clone()),
            inv.mirror.as_ref().map(|m| m.into.clone()),
        ]
        .into_iter()
        .flatten()
        .chain(
            inv.files
                .iter()
                .filter_map(|f| f.path.parent().map(Path::to_path_buf)),
        ) {
            let _ = std::fs::create_dir_all(&dir);
            me.writable.push(dir);
        }
        let path_var = inv
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var("PATH").ok())
            .unwrap_or_default();
        let local = Local.prepare(inv, hint)?;
        if let Some(dir) = local.program.parent() {
            me.readable.push(dir.to_path_buf());
        }
        me.readable
            .extend(std::env::split_paths(&path_var).filter(|p| p.starts_with("/tmp")));
        let bwrap =
            super::super::backend::find_executable(BWRAP, &local.cwd, None).ok_or_else(|| {
                BackendError::NotInstalled {
                    program: BWRAP.into(),
                    hint: INSTALL_HINT.into(),
                }
            })?;
        let mut args = me.args();
        args.extend([
            "--chdir".into(),
            local.cwd.display().to_string(),
            "--".into(),
            local.program.display().to_string(),
        ]);
        args.extend(local.args);
        Ok(Launch {
            program: bwrap,
            args,
            ..local
        })
    }
}

/// How to install bubblewrap.
pub const INSTALL_HINT: &str =
    "install bubblewrap (apt install bubblewrap, dnf install bubblewrap) or drop 'sandbox:'";

/// Whether `bwrap` is installed and can make a sandbox here; the error
/// says what is missing.
pub fn check() -> Result<(), String> {
    let Some(bwrap) = super::super::backend::find_executable(BWRAP, Path::new("/"), None) else {
        return Err(format!("'{BWRAP}' was not found on PATH; {INSTALL_HINT}"));
    };
    let out = Command::new(&bwrap)
        .args([
            "--ro-bind",
            "/",
            "/",
            "--unshare-pid",
            "--die-with-parent",
            "true",
        ])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bwrap.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} cannot make a sandbox on this machine: {} (user namespaces may be turned off: sysctl kernel.unprivileged_userns_clone)",
            bwrap.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(args: &[String]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut i = 13; // after the fixed head
        while i < args.len() {
            match args[i].as_str() {
                "--tmpfs" => {
                    out.push(("tmpfs".into(), args[i + 1].clone()));
                    i += 2;
                }
                flag => {
                    out.push((flag.trim_start_matches("--").into(), args[i + 2].clone()));
                    i += 3;
                }
            }
        }
        out
    }

    #[test]
    fn an_agents_own_folder_inside_a_hidden_one_is_mounted_after_it() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let agents = root.join("state/agents");
        let me = agents.join("coder");
        std::fs::create_dir_all(&me).unwrap();
        std::fs::create_dir_all(agents.join("other")).unwrap();
        let s = Sandboxed {
            writable: vec![root.clone(), me.clone()],
            hidden: vec![agents.clone()],
            ..Sandboxed::default()
        };
        let mounts = pairs(&s.args());
        let at = |p: &Path| mounts.iter().position(|(_, m)| Path::new(m) == p).unwrap();
        assert!(
            at(&root) < at(&agents) && at(&agents) < at(&me),
            "{mounts:?}"
        );
        assert_eq!(mounts[at(&agents)].0, "tmpfs");
        assert_eq!(mounts[at(&me)].0, "bind");
    }

    #[test]
    fn a_hidden_file_becomes_an_empty_one_and_missing_paths_are_left_out() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("token");
        std::fs::write(&file, "secret").unwrap();
        let s = Sandboxed {
            writable: vec![tmp.path().join("nope")],
            hidden: vec![file.clone()],
            ..Sandboxed::default()
        };
        let mounts = pairs(&s.args());
        assert_eq!(
            mounts,
            vec![(
                "ro-bind".into(),
                file.canonicalize().unwrap().display().to_string()
            )]
        );
    }

    /// The last mount of `path` and its kind (what lies on top).
    fn on_top(mounts: &[(String, String)], path: &Path) -> String {
        mounts
            .iter()
            .rev()
            .find(|(_, m)| Path::new(m) == path)
            .map(|(how, _)| how.clone())
            .unwrap_or_else(|| panic!("{} is not mounted: {mounts:?}", path.display()))
    }

    #[test]
    fn what_awtui_trusts_stays_read_only_inside_a_writable_workspace() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().canonicalize().unwrap();
        let git = ws.join(".git");
        let workflow = ws.join("w.yaml");
        let instance = ws.join(".workflow/i");
        let own = instance.join("agents/me");
        std::fs::create_dir_all(git.join("info")).unwrap();
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(&workflow, "agents: {}").unwrap();
        let s = Sandboxed {
            // The agent's own folder is both written by prepare and trusted:
            // read-only wins at the same place.
            writable: vec![ws.clone(), own.clone()],
            read_only: vec![workflow.clone(), instance.clone(), own.clone()],
            hidden: vec![instance.join("agents")],
            ..Sandboxed::default()
        };
        let mounts = pairs(&s.args());
        assert_eq!(on_top(&mounts, &ws), "bind");
        // The workspace's own `.git` without being named.
        assert_eq!(on_top(&mounts, &git), "ro-bind");
        assert_eq!(on_top(&mounts, &workflow), "ro-bind");
        assert_eq!(on_top(&mounts, &instance), "ro-bind");
        assert_eq!(on_top(&mounts, &instance.join("agents")), "tmpfs");
        assert_eq!(on_top(&mounts, &own), "ro-bind");
    }

    #[test]
    fn a_writable_folder_inside_a_read_only_one_is_writable_again() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let folder = root.join(".workflow");
        let worktree = folder.join(".worktrees/i/me");
        std::fs::create_dir_all(&worktree).unwrap();
        std::fs::write(worktree.join(".git"), "gitdir: /repo/.git/worktrees/me").unwrap();
        let s = Sandboxed {
            writable: vec![worktree.clone()],
            read_only: vec![folder.clone()],
            ..Sandboxed::default()
        };
        let mounts = pairs(&s.args());
        assert_eq!(on_top(&mounts, &folder), "ro-bind");
        assert_eq!(on_top(&mounts, &worktree), "bind");
        // Its `.git` link stays as awtui made it.
        assert_eq!(on_top(&mounts, &worktree.join(".git")), "ro-bind");
    }

    #[test]
    fn awtuis_binary_under_tmp_is_mounted_back_after_the_private_tmp() {
        let tmp = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
        let bin = tmp
            .path()
            .canonicalize()
            .unwrap()
            .join("target/debug/awtui");
        std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
        std::fs::write(&bin, "").unwrap();
        let s = Sandboxed {
            readable: vec![bin.clone()],
            ..Sandboxed::default()
        };
        let args = s.args();
        let tmpfs = args.windows(2).position(|w| w == ["--tmpfs", "/tmp"]);
        let bound = args
            .windows(3)
            .position(|w| w[0] == "--ro-bind" && Path::new(&w[1]) == bin && w[1] == w[2]);
        assert!(
            matches!((tmpfs, bound), (Some(t), Some(b)) if t < b),
            "{args:?}"
        );
    }
}
