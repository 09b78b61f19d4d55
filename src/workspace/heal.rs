//! Bringing an agent's worktree back to what awtui made: its own folder,
//! linked to the repository, on its own branch.
//!
//! An agent (or a person) can break a worktree: delete the folder, remove
//! or replace its `.git` link, switch it to another branch. awtui never
//! commits in a worktree that is not its own ([`super::commit::check_own`]);
//! this module repairs what can be repaired without losing anything and
//! says what it did, in words for the channel:
//!
//! - a folder that is gone is checked out again from the agent's branch on
//!   reopen (its committed turns are there);
//! - a `.git` link that is gone is written again when the repository still
//!   knows the worktree (the files, uncommitted work included, stay);
//! - a folder whose `.git` is something else (a folder of its own, a link)
//!   is moved aside, kept for the person, and the worktree is checked out
//!   again from the branch;
//! - a worktree switched to another branch is put back on the agent's
//!   branch when that loses nothing and moves no branch but the agent's
//!   (the other branch stays as it was); otherwise it is left as it is,
//!   and the person is told how to decide.

use std::path::{Path, PathBuf};

use super::{Git, Repo, WorkspaceError, parse_worktree_list, same_path};

/// What [`Repo::heal_folder`] did before the worktree can be used again.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Healed {
    /// What was wrong and what awtui did (one line each, for the channel).
    pub notes: Vec<String>,
    /// The folder is gone now (moved aside or never there): the worktree
    /// must be checked out again.
    pub recreate: bool,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> WorkspaceError + '_ {
    move |source| WorkspaceError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl Repo {
    /// Moves `root` aside, beside it, and forgets its worktree record.
    fn move_aside(&self, root: &Path) -> Result<PathBuf, WorkspaceError> {
        let name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S");
        let mut aside = root.with_file_name(format!("{name}.broken-{stamp}"));
        let mut n = 1;
        while std::fs::symlink_metadata(&aside).is_ok() {
            n += 1;
            aside = root.with_file_name(format!("{name}.broken-{stamp}-{n}"));
        }
        std::fs::rename(root, &aside).map_err(io(root))?;
        self.git.run(&["worktree", "prune"])?;
        Ok(aside)
    }

    /// Repairs the worktree folder `root` of `agent`'s `branch` (made by
    /// awtui) before it is used again (see the module doc).
    pub fn heal_folder(
        &self,
        agent: &str,
        root: &Path,
        branch: &str,
    ) -> Result<Healed, WorkspaceError> {
        let mut healed = Healed::default();
        let shown = root.display();
        if std::fs::symlink_metadata(root).is_err() {
            self.git.run(&["worktree", "prune"])?;
            healed.notes.push(format!(
                "{agent}'s worktree {shown} was gone; checked out again from its branch {branch} \
                 (its committed turns are there; changes never committed are lost)"
            ));
            healed.recreate = true;
            return Ok(healed);
        }
        let link = root.join(".git");
        let broken: Option<String> = match std::fs::symlink_metadata(&link) {
            Err(_) => match self.relink(agent, root)? {
                Some(note) => {
                    healed.notes.push(note);
                    None
                }
                None => Some("its .git link is gone and the repository no longer knows it".into()),
            },
            Ok(_) => match self.branch_git(root, branch) {
                Ok(_) => None,
                Err(WorkspaceError::LinkMoved { reason, .. }) => Some(reason),
                Err(e) => return Err(e),
            },
        };
        if let Some(why) = broken {
            let aside = self.move_aside(root)?;
            healed.notes.push(format!(
                "{agent}'s worktree {shown} was broken ({why}); it was moved to {} for you to \
                 look at, and checked out again from its branch {branch}",
                aside.display()
            ));
            healed.recreate = true;
            return Ok(healed);
        }
        let git = self.branch_git(root, branch)?;
        healed
            .notes
            .extend(self.bring_back(agent, root, branch, &git)?);
        Ok(healed)
    }

    /// Writes the `.git` link of the worktree at `root` again when it is
    /// gone and the repository still has the worktree's record: the files,
    /// uncommitted work included, become the worktree again. `None` when
    /// the link is there or no record names the folder.
    fn relink(&self, agent: &str, root: &Path) -> Result<Option<String>, WorkspaceError> {
        let link = root.join(".git");
        if std::fs::symlink_metadata(&link).is_ok() || !root.is_dir() {
            return Ok(None);
        }
        let Some(record) = self.record_of(root)? else {
            return Ok(None);
        };
        crate::fsutil::atomic_write(&link, format!("gitdir: {}\n", record.display()).as_bytes())
            .map_err(io(&link))?;
        Ok(Some(format!(
            "{agent}'s worktree {} had lost its .git link; it is linked again (the files, \
             uncommitted work included, are as the agent left them)",
            root.display()
        )))
    }

    /// At the end of a turn, before its commit: what can be repaired in
    /// place (a lost `.git` link, a switched branch; see the module doc),
    /// nothing moved. What cannot stays for [`super::commit::check_own`]
    /// to refuse, and for [`Repo::heal_folder`] on reopen.
    pub fn heal_in_place(
        &self,
        agent: &str,
        root: &Path,
        branch: &str,
    ) -> Result<Vec<String>, WorkspaceError> {
        let mut notes: Vec<String> = self.relink(agent, root)?.into_iter().collect();
        match self.branch_git(root, branch) {
            Ok(git) => notes.extend(self.bring_back(agent, root, branch, &git)?),
            // Not the agent's own any more: no git runs there, and the
            // commit that follows refuses it with the reason.
            Err(WorkspaceError::LinkMoved { .. }) => {}
            Err(e) => return Err(e),
        }
        Ok(notes)
    }

    /// Git for `branch`'s worktree at `root` ([`Repo::worktree_git`]),
    /// attributes from the branch's recorded base.
    fn branch_git(&self, root: &Path, branch: &str) -> Result<Git, WorkspaceError> {
        let base = self.recorded_base(branch)?;
        self.worktree_git(root, base.as_deref())
    }

    /// Puts the worktree at `root` back on `branch` when the agent
    /// switched it elsewhere, if that loses nothing (see the module doc);
    /// `git` is the worktree's ([`Repo::worktree_git`]). `None` when it
    /// was on its branch.
    pub fn bring_back(
        &self,
        agent: &str,
        root: &Path,
        branch: &str,
        git: &Git,
    ) -> Result<Option<String>, WorkspaceError> {
        let own_ref = format!("refs/heads/{branch}");
        let head = git.query(&["symbolic-ref", "-q", "HEAD"])?;
        if head.as_deref() == Some(own_ref.as_str()) {
            return Ok(None);
        }
        let other = head
            .as_deref()
            .map(|h| h.strip_prefix("refs/heads/").unwrap_or(h).to_string());
        let on = other
            .clone()
            .unwrap_or_else(|| "a detached HEAD".to_string());
        let head_commit = git.run(&["rev-parse", "HEAD"])?.trim().to_string();
        let own_commit = git.run(&["rev-parse", &own_ref])?.trim().to_string();
        let back = |git: &Git| git.run(&["symbolic-ref", "HEAD", &own_ref]);
        if head_commit == own_commit {
            // Same commit: only HEAD moves; index and files stay.
            back(git)?;
            return Ok(Some(format!(
                "{agent} had switched its worktree to {on}; it is back on its branch {branch} \
                 with its work, and {on} is left as it was"
            )));
        }
        let ahead = git.check(&["merge-base", "--is-ancestor", &own_commit, &head_commit])?;
        let elsewhere = match &other {
            Some(b) => {
                let list = self.git.run(&["worktree", "list", "--porcelain"])?;
                parse_worktree_list(&list)
                    .into_iter()
                    .any(|(p, at)| at.as_deref() == Some(b) && !same_path(&p, root))
            }
            None => false,
        };
        // Only commits the agent made after its branch: none of them is on
        // a branch other than the one it switched to.
        let foreign = {
            let mut args = vec!["rev-list", "--count", &head_commit, "--not", &own_commit];
            let others: Vec<String> = self
                .git
                .run(&["for-each-ref", "--format=%(refname)", "refs/heads"])?
                .lines()
                .filter(|r| *r != own_ref && Some(*r) != head.as_deref())
                .map(str::to_string)
                .collect();
            let all = git.run(&args)?.trim().parse::<u64>().unwrap_or(u64::MAX);
            args.extend(others.iter().map(String::as_str));
            let only_here = git.run(&args)?.trim().parse::<u64>().unwrap_or(0);
            all != only_here
        };
        if ahead && !elsewhere && !foreign && other.as_ref().is_none_or(|b| self.newer(b, branch)) {
            git.run(&["update-ref", &own_ref, &head_commit, &own_commit])?;
            back(git)?;
            return Ok(Some(format!(
                "{agent} had switched its worktree to {on} and committed there; its branch \
                 {branch} now has that work and the worktree is back on it ({on} is left as it was)"
            )));
        }
        Ok(Some(format!(
            "{agent}'s worktree {} is on {on}, not on its branch {branch}, and awtui cannot bring \
             it back without losing or moving work that is not the agent's; its turns are not \
             committed until you decide: `git -C {} switch {branch}` to go back, or keep the \
             work on {on} yourself",
            root.display(),
            root.display()
        )))
    }

    /// Whether local branch `b` was made after `than` (by their reflogs;
    /// `false` when either has none).
    fn newer(&self, b: &str, than: &str) -> bool {
        let born = |name: &str| -> Option<i64> {
            let log = self
                .git
                .query(&[
                    "reflog",
                    "show",
                    "--date=unix",
                    "--format=%gd",
                    &format!("refs/heads/{name}"),
                    "--",
                ])
                .ok()??;
            let last = log.lines().last()?;
            last.rsplit_once("@{")?.1.trim_end_matches('}').parse().ok()
        };
        matches!((born(b), born(than)), (Some(b), Some(t)) if b >= t)
    }
}
