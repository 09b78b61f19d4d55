//! `sandbox:`: the agent's process under bubblewrap (`bwrap`). It sees the
//! whole filesystem read-only but for what it may write (its workspace,
//! its own folders, its CLI's state folders), a private `/tmp`, and an
//! empty folder where the other agents' folders and every token file are.
//! The network is not confined: awtui's MCP endpoint and the model API
//! stay reachable (and so does everything else; see the README).
//!
//! The mount list is pure ([`Sandboxed::args`]); [`check`] runs `bwrap`
//! once to see that it works here.

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
    /// Folders (or files) it may not see: the token and control folders,
    /// every agent's folders (its own are writable again above them), the
    /// workflow's `hidden:`.
    pub hidden: Vec<PathBuf>,
    /// Folders under `/tmp` it still reads (the private `/tmp` would hide
    /// them): the workflow's folder, its program's folder, its `PATH`.
    pub readable: Vec<PathBuf>,
}

/// How a path is mounted, in the order that decides what lies on top at
/// the same depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Mount {
    Readable,
    Writable,
    Hidden,
}

impl Sandboxed {
    /// The `bwrap` arguments before `--` and the command. Deeper paths are
    /// mounted later, so an agent's own folder inside a hidden one is
    /// visible again, and a hidden folder inside a writable workspace
    /// stays hidden. Paths that do not exist are left out (a writable one
    /// is made first by [`prepare`](Runtime::prepare)).
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
                Mount::Readable => args.extend(["--ro-bind".into(), p.clone(), p]),
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
            readable: vec![],
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
            readable: vec![],
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
}
