//! Whether a file a command line redirects to (or from) lies inside the
//! agent's workspace: an allow rule covers `ls > out.txt` but not
//! `ls > ~/.bashrc`, `ls > ../x` or `ls > link` where `link` in the
//! workspace points out of it (issue 34).
//!
//! Conservative by construction: the workspace comes from awtui's own
//! records, never from the request; the target is followed the way the
//! kernel would open it (links and `..` resolved on disk, as far as the
//! path exists), and anything that cannot be resolved — a dangling link,
//! a `..` below a folder that does not exist yet, an unreadable folder —
//! is outside.

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

/// The one file outside every workspace a redirection may name.
const DEV_NULL: &str = "/dev/null";

/// Whether `target` (as the shell would open it, relative to
/// `workspace`, which is the command's working folder) stays inside
/// `workspace`. Without a workspace only `/dev/null` does.
pub fn holds(workspace: Option<&Path>, target: &str) -> bool {
    if target == DEV_NULL {
        return true;
    }
    let Some(workspace) = workspace.filter(|w| w.is_absolute()) else {
        return false;
    };
    if target.is_empty() {
        return false;
    }
    let Ok(root) = workspace.canonicalize() else {
        return false;
    };
    resolve(&workspace.join(target)).is_some_and(|real| real.starts_with(&root))
}

/// Folders whose names mean something else in every process (`/proc/self`,
/// `/dev/fd/3`, `/dev/stdout`): resolved here they would name awtui's own
/// files, not those of the command's shell.
const PER_PROCESS: [&str; 3] = ["/proc", "/dev", "/sys"];

/// How many links a path may go through (as the kernel's limit).
const MAX_LINKS: usize = 40;

/// `path` as the kernel would reach it, followed one name at a time: each
/// link read and followed, `..` taken on the folder reached, the names
/// that do not exist yet appended (only plain names: a `..` after a
/// missing folder cannot be known). `None` when it cannot be resolved (a
/// dangling link, a loop, no permission) or passes through
/// [`PER_PROCESS`].
fn resolve(path: &Path) -> Option<PathBuf> {
    let mut todo: VecDeque<PathBuf> = components(path);
    let mut real = PathBuf::from("/");
    let (mut links, mut missing) = (0, false);
    while let Some(part) = todo.pop_front() {
        match part.components().next()? {
            Component::RootDir => real = PathBuf::from("/"),
            Component::CurDir => {}
            Component::ParentDir if missing => return None,
            Component::ParentDir => {
                real.pop();
            }
            Component::Normal(name) => {
                let next = real.join(name);
                match next.symlink_metadata() {
                    _ if missing => real = next,
                    Ok(m) if m.file_type().is_symlink() => {
                        links += 1;
                        if links > MAX_LINKS {
                            return None;
                        }
                        let target = std::fs::read_link(&next).ok()?;
                        for c in components(&target).into_iter().rev() {
                            todo.push_front(c);
                        }
                    }
                    Ok(_) => real = next,
                    Err(e) if e.kind() == ErrorKind::NotFound => {
                        missing = true;
                        real = next;
                    }
                    Err(_) => return None,
                }
            }
            Component::Prefix(_) => return None,
        }
        if PER_PROCESS.iter().any(|p| real.starts_with(p)) {
            return None;
        }
    }
    Some(real)
}

/// The parts of `path`, one per entry (`/` first when absolute).
fn components(path: &Path) -> VecDeque<PathBuf> {
    path.components()
        .map(|c| PathBuf::from(c.as_os_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_inside_the_workspace_are_held_and_links_out_are_not() {
        let ws = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let w = ws.path();
        std::fs::create_dir(w.join("sub")).unwrap();
        std::fs::write(w.join("file"), "").unwrap();
        std::os::unix::fs::symlink(out.path(), w.join("away")).unwrap();
        std::os::unix::fs::symlink(out.path().join("none"), w.join("dangling")).unwrap();
        std::os::unix::fs::symlink(w.join("file"), w.join("near")).unwrap();
        let held = |t: &str| holds(Some(w), t);
        for inside in [
            "file",
            "new",
            "sub/new",
            "./sub/../file",
            "near",
            "sub/a/b/c",
            &format!("{}/file", w.display()),
            "/dev/null",
        ] {
            assert!(held(inside), "{inside} is inside");
        }
        for outside in [
            "../x",
            "sub/../../x",
            "away/x",
            "away",
            "away/../x",
            "dangling",
            "missing/../x",
            "/etc/passwd",
            "/tmp/x",
            "",
            "/dev/tty",
        ] {
            assert!(!held(outside), "{outside} is outside");
        }
        assert!(!holds(None, "file"));
        // Names that mean another file in the command's own process.
        let cwd = std::env::current_dir().unwrap();
        for per_process in ["/proc/self/cwd/x", "/dev/fd/1", "/dev/stdout"] {
            assert!(!holds(Some(&cwd), per_process), "{per_process}");
        }
        std::os::unix::fs::symlink("/proc/self/cwd", w.join("me")).unwrap();
        assert!(!held("me/x"));
        std::os::unix::fs::symlink("loop", w.join("loop")).unwrap();
        assert!(!held("loop"));
        assert!(holds(None, "/dev/null"));
        assert!(!holds(Some(Path::new("relative")), "file"));
    }
}
