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

/// `path` as the kernel would reach it: its longest existing part with
/// every link and `..` resolved, then the parts that do not exist yet
/// (only plain names: a `..` after a missing folder cannot be known).
/// `None` when it cannot be resolved (a dangling link, no permission).
fn resolve(path: &Path) -> Option<PathBuf> {
    let parts: Vec<Component> = path.components().collect();
    for known in (1..=parts.len()).rev() {
        let prefix: PathBuf = parts[..known].iter().collect();
        match prefix.symlink_metadata() {
            Ok(_) => {
                let mut real = prefix.canonicalize().ok()?;
                for part in &parts[known..] {
                    let Component::Normal(name) = part else {
                        return None;
                    };
                    real.push(name);
                }
                return Some(real);
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(_) => return None,
        }
    }
    None
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
        assert!(holds(None, "/dev/null"));
        assert!(!holds(Some(Path::new("relative")), "file"));
    }
}
