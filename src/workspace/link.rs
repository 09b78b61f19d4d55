//! The `.git` link of an agent's worktree, held against the repository's
//! own record before awtui runs any git there.
//!
//! git finds a linked worktree's repository through the `.git` file in the
//! worktree (`gitdir: <common dir>/worktrees/<id>`), a file the agent can
//! rewrite: pointed at a git dir of its own (its config naming a filter,
//! its `alternates` borrowing the real objects), it would make awtui's
//! `git add` run the agent's command as the person. awtui therefore finds
//! the git dir from the repository's records (each record's `gitdir` file
//! names the worktree's `.git`), gives it to git explicitly
//! ([`super::Git::linked`]), and first checks here that the worktree's
//! link still says the same: a link that is gone, moved, a symbolic link,
//! a folder or a FIFO means the worktree is not what awtui made, and no
//! git runs there.

use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};

use super::{Git, Repo, WorkspaceError, same_path};
use crate::fsutil::{Capped, READ_FLAGS, read_open_capped};

/// The largest `.git` link file read: a real one is one short line.
pub const MAX_LINK_BYTES: u64 = 4096;

/// What the `.git` entry of a worktree says, read without following a
/// symbolic link or blocking on a FIFO.
#[derive(Debug, PartialEq, Eq)]
pub enum Link {
    /// No `.git` at all.
    Missing,
    /// A link file naming this git dir (relative paths resolved against
    /// the worktree).
    GitDir(PathBuf),
    /// Anything else; why it is not a worktree link.
    Not(String),
}

/// Reads the `.git` entry of the worktree `root`.
pub fn read(root: &Path) -> Link {
    let path = root.join(".git");
    let fd = match rustix::fs::open(&path, READ_FLAGS | OFlags::NOFOLLOW, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Link::Missing,
        Err(rustix::io::Errno::LOOP) => {
            let to = std::fs::read_link(&path)
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            return Link::Not(format!(
                "its .git is a symbolic link (to {to}), not a worktree link"
            ));
        }
        Err(e) => return Link::Not(format!("its .git cannot be read ({e})")),
    };
    match read_open_capped(fd, MAX_LINK_BYTES) {
        Ok(Capped::Bytes(bytes)) => parse(root, &String::from_utf8_lossy(&bytes)),
        Ok(Capped::NotRegular(kind)) => {
            Link::Not(format!("its .git is {kind}, not a worktree link"))
        }
        Ok(Capped::TooLarge) => Link::Not(format!(
            "its .git is larger than {MAX_LINK_BYTES} bytes, not a worktree link"
        )),
        Err(e) => Link::Not(format!("its .git cannot be read ({e})")),
    }
}

/// The git dir a `.git` file's `text` names (pure).
pub fn parse(root: &Path, text: &str) -> Link {
    let mut lines = text.lines();
    let named = lines
        .next()
        .and_then(|l| l.strip_prefix("gitdir:"))
        .map(str::trim)
        .filter(|p| !p.is_empty());
    match named {
        Some(p) if lines.all(|l| l.trim().is_empty()) => Link::GitDir(root.join(p)),
        _ => Link::Not("its .git is not a worktree link (one line 'gitdir: <path>')".into()),
    }
}

/// Checks that the `.git` link of the worktree `root` names `record`, the
/// git dir the repository keeps for it; the reason when not.
pub fn check(root: &Path, record: &Path) -> Result<(), String> {
    match read(root) {
        Link::GitDir(dir) if same_path(&dir, record) => Ok(()),
        Link::GitDir(dir) => Err(format!(
            "its .git link points to {}, not to the repository's record {}",
            dir.display(),
            record.display()
        )),
        Link::Missing => Err("its .git link is gone".into()),
        Link::Not(why) => Err(why),
    }
}

impl Repo {
    /// The repository's folder of worktree records (`<common dir>/worktrees`).
    pub(crate) fn worktree_records(&self) -> Result<PathBuf, WorkspaceError> {
        let common = self.git.run(&["rev-parse", "--git-common-dir"])?;
        Ok(self.toplevel.join(common.trim()).join("worktrees"))
    }

    /// The record (git dir) of the worktree at `root`: the one whose
    /// `gitdir` file names `<root>/.git`. Compared by folder, so a `.git`
    /// the agent made a symbolic link is never followed.
    pub fn record_of(&self, root: &Path) -> Result<Option<PathBuf>, WorkspaceError> {
        let Ok(entries) = std::fs::read_dir(self.worktree_records()?) else {
            return Ok(None);
        };
        for entry in entries.flatten() {
            let Ok(text) = crate::fsutil::read_text_capped(&entry.path().join("gitdir"), 4096)
            else {
                continue;
            };
            let named = Path::new(text.trim());
            if named.file_name() == Some(".git".as_ref())
                && named.parent().is_some_and(|p| same_path(p, root))
            {
                return Ok(Some(entry.path()));
            }
        }
        Ok(None)
    }

    /// Git for the linked worktree at `root`, located by the repository's
    /// record and only when the worktree's `.git` link still names it;
    /// attributes from `attributes` (the branch's recorded base) or its
    /// `HEAD` tree. A worktree not as awtui made it is
    /// [`WorkspaceError::LinkMoved`].
    pub fn worktree_git(
        &self,
        root: &Path,
        attributes: Option<&str>,
    ) -> Result<Git, WorkspaceError> {
        let moved = |reason: String| WorkspaceError::LinkMoved {
            root: root.to_path_buf(),
            reason,
        };
        let record = self
            .record_of(root)?
            .ok_or_else(|| moved("the repository has no worktree record for it".into()))?;
        check(root, &record).map_err(moved)?;
        Ok(Git::linked(&record, root, attributes))
    }

    /// Git for the checkout at `dir`: the repository's own (its main
    /// checkout) or a linked worktree ([`Repo::worktree_git`]) with
    /// attributes from its branch's recorded base when awtui made it.
    pub fn checkout_git(&self, dir: &Path) -> Result<Git, WorkspaceError> {
        if same_path(dir, &self.toplevel) {
            return Ok(self.git.clone());
        }
        let list = self.git.run(&["worktree", "list", "--porcelain"])?;
        let branch = super::parse_worktree_list(&list)
            .into_iter()
            .find(|(p, _)| same_path(p, dir))
            .and_then(|(_, b)| b);
        let base = match branch {
            Some(b) => self.recorded_base(&b)?,
            None => None,
        };
        self.worktree_git(dir, base.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_file_names_one_git_dir_and_nothing_else() {
        let root = Path::new("/w/a");
        assert_eq!(
            parse(root, "gitdir: /r/.git/worktrees/a\n"),
            Link::GitDir("/r/.git/worktrees/a".into())
        );
        assert_eq!(
            parse(root, "gitdir: ../../.git/worktrees/a"),
            Link::GitDir("/w/a/../../.git/worktrees/a".into())
        );
        for bad in ["", "gitdir:", "ref: x", "gitdir: /a\ngitdir: /b\n"] {
            assert!(matches!(parse(root, bad), Link::Not(_)), "{bad:?}");
        }
    }

    #[test]
    fn a_symbolic_link_a_folder_or_a_fifo_is_no_link_and_never_blocks() {
        let tmp = tempfile::tempdir().unwrap();
        let record = tmp.path().join("record");
        std::fs::create_dir(&record).unwrap();
        let make = |name: &str, how: &dyn Fn(&Path)| {
            let root = tmp.path().join(name);
            std::fs::create_dir(&root).unwrap();
            how(&root.join(".git"));
            check(&root, &record).unwrap_err()
        };
        let file = |p: &Path| std::fs::write(p, format!("gitdir: {}\n", "/elsewhere")).unwrap();
        assert!(make("moved", &file).contains("points to /elsewhere"));
        let linked = make("symlink", &|p| {
            std::os::unix::fs::symlink(tmp.path().join("moved/.git"), p).unwrap()
        });
        assert!(linked.contains("symbolic link"), "{linked}");
        let dir = make("dir", &|p| std::fs::create_dir(p).unwrap());
        assert!(
            dir.contains("a folder") || dir.contains("directory"),
            "{dir}"
        );
        let fifo = make("fifo", &|p| {
            rustix::fs::mknodat(
                rustix::fs::CWD,
                p,
                rustix::fs::FileType::Fifo,
                Mode::from_raw_mode(0o600),
                0,
            )
            .unwrap()
        });
        assert!(fifo.contains("not a worktree link"), "{fifo}");
        assert_eq!(make("gone", &|_| {}), "its .git link is gone");
        let ok = tmp.path().join("ok");
        std::fs::create_dir(&ok).unwrap();
        std::fs::write(ok.join(".git"), format!("gitdir: {}\n", record.display())).unwrap();
        assert_eq!(check(&ok, &record), Ok(()));
    }
}
