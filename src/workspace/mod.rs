//! Workspaces: a git worktree per agent (`workspace: worktree`), so agents
//! editing the same files do not overwrite each other, and every turn's
//! change is a commit the user can see, revert and merge.
//!
//! Layout: the worktree of `agent` lives next to the instance folders, not
//! in one: `<workflow dir>/.workflow/.worktrees/<instance>/<agent>`
//! ([`worktrees_root`]), on the branch `awtui/<instance>/<agent>`. Outside
//! the instance's document folder, no document tool reaches into an
//! agent's worktree and no build output of an agent reaches the document
//! watcher; under `.workflow/`, it is on the checkout's file system and
//! ignored by git with the rest of `.workflow/` (its `.gitignore`, or the
//! repository's local `info/exclude` when that does not cover it, so
//! `git status` stays clean). Instance names never start with a dot, so
//! `.worktrees` is no instance's folder. An instance made when worktrees
//! lived in its folder (`<instance folder>/worktrees/<agent>`) continues in
//! the worktree git has checked out there ([`place`]): moving it would
//! change the folder the agent's CLI resumes its session in.
//!
//! The base commit a branch started from is kept in the repository's
//! config as `branch.<branch>.awtuibase` (removed by git together with the
//! branch).

pub mod commit;
pub mod diff;
pub mod git;
pub mod heal;
pub mod link;
pub mod manage;
pub mod remote;
pub mod view;

use std::path::{Path, PathBuf};

pub use git::Git;

use crate::workflow::{Workflow, Workspace};

/// Why a workspace cannot be made or used.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("git was not found on PATH; workspace: worktree needs git installed")]
    GitMissing,
    #[error("{} is not inside a git repository; workspace: worktree needs one (git init, or use workspace: shared)", .0.display())]
    NotARepo(PathBuf),
    #[error("the checkout at {} has a detached HEAD; write 'base: <branch or commit>' under workspace so the agents' branches start from a known point", .0.display())]
    Detached(PathBuf),
    #[error("the checkout at {} has uncommitted changes to tracked files ({files}); the agents' worktrees start from the last commit and would not see them: commit or stash them first", repo.display())]
    Dirty { repo: PathBuf, files: String },
    #[error("base '{base}' is not a branch or commit of the repository at {}", repo.display())]
    UnknownBase { repo: PathBuf, base: String },
    #[error(
        "branch '{0}' already exists and was not made by awtui; delete or rename it, or use another instance name"
    )]
    BranchExists(String),
    #[error("'{0}' cannot be a git branch name (instance and agent names make it)")]
    BadBranch(String),
    #[error("branch '{branch}' is checked out at {} (not its awtui worktree {}); remove that worktree first (git worktree remove)", at.display(), expected.display())]
    CheckedOutElsewhere {
        branch: String,
        at: PathBuf,
        expected: PathBuf,
    },
    #[error("{agent}'s turn was not committed: {} is not its awtui worktree any more ({reason}); nothing was staged or committed anywhere", root.display())]
    NotOwnWorktree {
        agent: String,
        root: PathBuf,
        reason: String,
    },
    #[error("the worktree {} is not as awtui made it: {reason}; awtui runs no git there (nothing was staged, committed, checked out or removed): look at what is in it, then point its .git back to the repository's record or remove it by hand (reopening the instance moves it aside and checks its branch out again)", root.display())]
    LinkMoved { root: PathBuf, reason: String },
    #[error("no awtui workspace branch for '{0}' in this repository (awtui/<instance>/<agent>)")]
    NoWorkspace(String),
    #[error(
        "'{agent}' has workspace branches in several instances ({instances}); name one: {agent}@<instance>"
    )]
    Ambiguous { agent: String, instances: String },
    #[error("{branch} has no turn {turn} (its turns: {known})")]
    NoTurn {
        branch: String,
        turn: u32,
        known: String,
    },
    #[error("branch '{0}' has no recorded base (branch.{0}.awtuibase); it was not made by awtui")]
    NoBase(String),
    #[error(
        "branch '{branch}' is not merged into {into}; it is kept (discard it with status 'abandoned', or merge it first)"
    )]
    Unmerged { branch: String, into: String },
    #[error("the worktree {} has uncommitted changes; they are kept (commit them, or discard the workspace with status 'abandoned')", .0.display())]
    UncommittedWork(PathBuf),
    #[error(
        "cannot tell which branch {0} merges into (none recorded, and the main checkout has a detached HEAD); name it with --into"
    )]
    NoTarget(String),
    #[error("{branch} is checked out at {} with uncommitted changes ({files}); nothing was changed: commit or stash them, then run the command again", at.display())]
    CheckoutDirty {
        branch: String,
        at: PathBuf,
        files: String,
    },
    #[error("{what} conflicts in: {files}; nothing was changed ({hint})")]
    Conflict {
        what: String,
        files: String,
        hint: String,
    },
    #[error("the worktree {} has uncommitted changes ({files}): the agent's turn is running or left them; nothing was changed: wait for the turn's commit, then try again", path.display())]
    Busy { path: PathBuf, files: String },
    #[error("{} is not this workflow's repository ({}); awtui runs git only in the repository holding the workflow file: leave repo_path out, or name that folder", path.display(), repo.display())]
    RepoNotAllowed { path: PathBuf, repo: PathBuf },
    #[error("git {args} failed in {}: {message}", dir.display())]
    Git {
        dir: PathBuf,
        args: String,
        message: String,
    },
    #[error("cannot update {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl WorkspaceError {
    /// A stable code for tool callers (the caw tools' error style).
    pub fn code(&self) -> &'static str {
        match self {
            WorkspaceError::GitMissing => "GIT_MISSING",
            WorkspaceError::NotARepo(_) => "NOT_A_REPOSITORY",
            WorkspaceError::RepoNotAllowed { .. } => "REPO_NOT_ALLOWED",
            WorkspaceError::Detached(_) => "DETACHED_BASE",
            WorkspaceError::Dirty { .. } => "DIRTY_BASE",
            WorkspaceError::UnknownBase { .. } => "UNKNOWN_BASE",
            WorkspaceError::BranchExists(_) | WorkspaceError::CheckedOutElsewhere { .. } => {
                "BRANCH_EXISTS"
            }
            WorkspaceError::BadBranch(_) => "INVALID_ARGUMENT",
            WorkspaceError::Unmerged { .. } | WorkspaceError::UncommittedWork(_) => "UNMERGED_WORK",
            WorkspaceError::NoWorkspace(_)
            | WorkspaceError::Ambiguous { .. }
            | WorkspaceError::NoTurn { .. }
            | WorkspaceError::NoBase(_) => "WORKSPACE_NOT_FOUND",
            WorkspaceError::NoTarget(_) => "INVALID_ARGUMENT",
            WorkspaceError::CheckoutDirty { .. }
            | WorkspaceError::Busy { .. }
            | WorkspaceError::NotOwnWorktree { .. }
            | WorkspaceError::LinkMoved { .. } => "INVALID_STATE",
            WorkspaceError::Conflict { .. } => "MERGE_CONFLICT",
            WorkspaceError::Git { .. } | WorkspaceError::Io { .. } => "GIT_ERROR",
        }
    }
}

/// The branch of `agent`'s worktree in `instance`.
pub fn branch_name(instance: &str, agent: &str) -> String {
    format!("awtui/{instance}/{agent}")
}

/// The folder of `.workflow/` holding every instance's worktrees.
pub const WORKTREES_FOLDER: &str = ".worktrees";

/// The folder holding `instance`'s worktrees, for the workflow in
/// `workflow_dir`: `<workflow dir>/.workflow/.worktrees/<instance>`.
pub fn worktrees_root(workflow_dir: &Path, instance: &str) -> PathBuf {
    workflow_dir
        .join(crate::fsutil::WORKFLOW_FOLDER)
        .join(WORKTREES_FOLDER)
        .join(instance)
}

/// The workflow folder whose instance worktrees folder is `root`: the
/// inverse of [`worktrees_root`], so a task board that knows where its
/// worktrees go also knows its workflow's repository (`None` when `root`
/// was not made by [`worktrees_root`]).
pub fn workflow_dir_of(root: &Path) -> Option<&Path> {
    let worktrees = root.parent()?;
    let workflow = worktrees.parent()?;
    (worktrees.file_name() == Some(WORKTREES_FOLDER.as_ref())
        && workflow.file_name() == Some(crate::fsutil::WORKFLOW_FOLDER.as_ref()))
    .then(|| workflow.parent())
    .flatten()
}

/// The folder to find the repository from when a person runs awtui in
/// `dir`: `dir` itself, or, when `dir` is in one of awtui's worktree folders
/// (`<workflow dir>/.workflow/.worktrees/…`, or an old instance's
/// `<workflow dir>/.workflow/<instance>/worktrees/…`), the workflow folder
/// holding it: git is never asked to find a repository from an agent's
/// worktree, whose `.git` the agent can point anywhere.
pub fn outside_worktrees(dir: &Path) -> PathBuf {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let workflow = crate::fsutil::WORKFLOW_FOLDER.as_ref();
    let is_worktrees = |a: &Path| {
        let parent = a.parent();
        let new_place = a.file_name() == Some(WORKTREES_FOLDER.as_ref())
            && parent.and_then(Path::file_name) == Some(workflow);
        let old_place = a.file_name() == Some("worktrees".as_ref())
            && parent.and_then(Path::parent).and_then(Path::file_name) == Some(workflow);
        new_place || old_place
    };
    // The outermost: a `.workflow/.worktrees` an agent made inside its
    // worktree is still inside the worktree.
    let outermost = dir.ancestors().filter(|a| is_worktrees(a)).last();
    outermost
        .and_then(|a| a.ancestors().find(|x| x.file_name() == Some(workflow)))
        .and_then(Path::parent)
        .map_or(dir.clone(), Path::to_path_buf)
}

/// The worktree folder of `agent` in an instance's worktrees folder
/// `root` ([`worktrees_root`]).
pub fn worktree_dir(root: &Path, agent: &str) -> PathBuf {
    root.join(agent)
}

/// Where a task workspace (`workspace_create`) goes in an instance's
/// worktrees folder `root`: under `.workspaces`, a name no agent can have.
pub fn task_worktree_dir(root: &Path, id: &str) -> PathBuf {
    root.join(".workspaces").join(id)
}

/// Where instances made before worktrees moved out of the instance folder
/// (`state_root`) kept `agent`'s worktree.
pub fn legacy_worktree_dir(state_root: &Path, agent: &str) -> PathBuf {
    state_root.join("worktrees").join(agent)
}

/// Where `agent`'s worktree is: the old place in the instance folder when
/// git has the branch checked out there (an old instance continues where
/// its agents' sessions are), else the new one.
pub fn place(seen: &Observed, new: PathBuf, legacy: PathBuf) -> PathBuf {
    match &seen.checked_out_at {
        Some(at) if same_path(at, &legacy) => legacy,
        _ => new,
    }
}

/// Removes the folders awtui made above a worktree at `path` that it just
/// removed, as far as they are empty (`.workspaces`, `.worktrees/<instance>`,
/// `.worktrees`); nothing above `.worktrees`, nothing for a worktree
/// elsewhere.
fn remove_empty_parents(path: &Path) {
    // `.worktrees/<instance>/<agent>` or `.worktrees/<instance>/.workspaces/<id>`.
    let Some(top) = path
        .ancestors()
        .take(4)
        .position(|a| a.file_name() == Some(WORKTREES_FOLDER.as_ref()))
    else {
        return;
    };
    for dir in path.ancestors().skip(1).take(top) {
        if std::fs::remove_dir(dir).is_err() {
            break;
        }
    }
}

/// The config key holding the commit a workspace branch started from.
fn base_key(branch: &str) -> String {
    format!("branch.{branch}.awtuibase")
}

/// One agent's worktree: where it is and what it is based on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentWorkspace {
    pub agent: String,
    pub branch: String,
    /// The top folder of the repository's main checkout (where awtui's git
    /// runs to repair the worktree; never found from the worktree itself,
    /// whose `.git` an agent may have removed).
    pub repo: PathBuf,
    /// The worktree's top folder.
    pub root: PathBuf,
    /// Where the agent's CLI runs: the worktree's copy of the workflow
    /// file's folder.
    pub workdir: PathBuf,
    /// The commit the branch started from.
    pub base: String,
}

/// What must happen for an agent's worktree to exist (decided from what git
/// reports; [`decide`] is pure).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// The worktree is there on its branch: continue in it.
    Reuse,
    /// The branch exists (made by awtui) but its worktree is gone: check it
    /// out again.
    Reattach,
    /// A new branch at this commit and its worktree.
    Create { base: String },
}

/// What git says about one agent's branch and folder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observed {
    pub branch_exists: bool,
    /// Its `awtuibase` config (made by awtui).
    pub recorded_base: Option<String>,
    /// Where the branch is checked out, if anywhere.
    pub checked_out_at: Option<PathBuf>,
}

/// Chooses the [`Action`] for a branch given what git reports; `base` is
/// resolved lazily, only when a new branch is needed.
pub fn decide(
    branch: &str,
    expected: &Path,
    seen: &Observed,
    base: impl FnOnce() -> Result<String, WorkspaceError>,
) -> Result<Action, WorkspaceError> {
    if !seen.branch_exists {
        return Ok(Action::Create { base: base()? });
    }
    if seen.recorded_base.is_none() {
        return Err(WorkspaceError::BranchExists(branch.to_string()));
    }
    match &seen.checked_out_at {
        Some(at) if same_path(at, expected) => Ok(Action::Reuse),
        Some(at) => Err(WorkspaceError::CheckedOutElsewhere {
            branch: branch.to_string(),
            at: at.clone(),
            expected: expected.to_path_buf(),
        }),
        None => Ok(Action::Reattach),
    }
}

/// Whether two paths name the same place, links resolved where they exist
/// (a missing last part, such as a removed `.git` link, is compared by name
/// under its resolved folder).
pub(crate) fn same_path(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| {
        std::fs::canonicalize(p).unwrap_or_else(|_| match (p.parent(), p.file_name()) {
            (Some(dir), Some(name)) => std::fs::canonicalize(dir)
                .map(|d| d.join(name))
                .unwrap_or_else(|_| p.to_path_buf()),
            _ => p.to_path_buf(),
        })
    };
    a == b || canon(a) == canon(b)
}

/// `(worktree path, branch)` pairs from `git worktree list --porcelain`.
pub fn parse_worktree_list(text: &str) -> Vec<(PathBuf, Option<String>)> {
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut path = None;
        let mut branch = None;
        for line in block.lines() {
            if let Some(p) = line.strip_prefix("worktree ") {
                path = Some(PathBuf::from(p));
            } else if let Some(b) = line.strip_prefix("branch ") {
                branch = Some(b.strip_prefix("refs/heads/").unwrap_or(b).to_string());
            }
        }
        if let Some(p) = path {
            out.push((p, branch));
        }
    }
    out
}

/// The repository holding a folder, found with `git rev-parse`.
#[derive(Clone, Debug)]
pub struct Repo {
    /// The top folder of the checkout.
    pub toplevel: PathBuf,
    pub git: Git,
    /// Files awtui reads itself (the workflow file) whose uncommitted
    /// changes do not make the checkout too dirty to start worktrees from:
    /// the agents' worktrees do not need them ([`Repo::with_own_file`]).
    own_files: Vec<PathBuf>,
}

impl Repo {
    /// The repository whose checkout's top folder is `toplevel` (awtui's
    /// own record of it, such as [`AgentWorkspace::repo`]).
    pub fn at(toplevel: &Path) -> Repo {
        Repo {
            toplevel: toplevel.to_path_buf(),
            git: Git::new(toplevel),
            own_files: Vec::new(),
        }
    }

    /// The repository containing `dir`.
    pub fn find(dir: &Path) -> Result<Repo, WorkspaceError> {
        let git = Git::new(dir);
        match git.query(&["rev-parse", "--show-toplevel"])? {
            Some(top) if !top.is_empty() => Ok(Repo {
                git: Git::new(&top),
                toplevel: PathBuf::from(top),
                own_files: Vec::new(),
            }),
            _ => Err(WorkspaceError::NotARepo(dir.to_path_buf())),
        }
    }

    /// The repository of the workflow in `workflow_dir`, the only one
    /// awtui's git runs in for the agents' tools: `named` (a folder an
    /// agent gave) must be that repository's top folder or `workflow_dir`,
    /// compared after resolving links and `..` on the file system alone,
    /// so git never runs in a repository an agent names or wrote (whose
    /// config could run any command).
    pub fn workflow_own(workflow_dir: &Path, named: Option<&Path>) -> Result<Repo, WorkspaceError> {
        let repo = Repo::find(workflow_dir)?;
        let top = std::fs::canonicalize(&repo.toplevel).map_err(|source| WorkspaceError::Io {
            path: repo.toplevel.clone(),
            source,
        })?;
        if let Some(named) = named {
            let allowed = [top.as_path(), workflow_dir];
            let same = std::fs::canonicalize(named).is_ok_and(|n| {
                allowed
                    .iter()
                    .any(|a| std::fs::canonicalize(a).is_ok_and(|a| a == n))
            });
            if !same {
                return Err(WorkspaceError::RepoNotAllowed {
                    path: named.to_path_buf(),
                    repo: top,
                });
            }
        }
        Ok(Repo {
            git: Git::new(&top),
            toplevel: top,
            own_files: Vec::new(),
        })
    }

    /// This repository, with `file` (the workflow file) left out of the
    /// "uncommitted changes" check of [`base_commit`](Repo::base_commit):
    /// iterating on a workflow without committing each try is fine, as
    /// awtui reads it from here and no agent's worktree needs it.
    pub fn with_own_file(mut self, file: &Path) -> Repo {
        self.own_files.push(file.to_path_buf());
        self
    }

    /// Whether `rel` (a path as `git status` prints it, from the top
    /// folder) is one of [`own_files`](Repo::own_files).
    fn is_own_file(&self, rel: &str) -> bool {
        let top = std::fs::canonicalize(&self.toplevel).unwrap_or(self.toplevel.clone());
        self.own_files.iter().any(|f| {
            let f = std::fs::canonicalize(f).unwrap_or(f.clone());
            f.strip_prefix(&top).is_ok_and(|r| r == Path::new(rel))
        })
    }

    /// Whether local branch `branch` exists.
    pub fn has_branch(&self, branch: &str) -> Result<bool, WorkspaceError> {
        self.git.check(&[
            "show-ref",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ])
    }

    /// What git reports about `branch`.
    pub fn observe(&self, branch: &str) -> Result<Observed, WorkspaceError> {
        let branch_exists = self.has_branch(branch)?;
        let recorded_base = self.recorded_base(branch)?;
        let list = self.git.run(&["worktree", "list", "--porcelain"])?;
        let checked_out_at = parse_worktree_list(&list)
            .into_iter()
            .find(|(_, b)| b.as_deref() == Some(branch))
            .map(|(p, _)| p);
        Ok(Observed {
            branch_exists,
            recorded_base,
            checked_out_at,
        })
    }

    /// The base commit awtui recorded for `branch`.
    pub fn recorded_base(&self, branch: &str) -> Result<Option<String>, WorkspaceError> {
        Ok(self
            .git
            .query(&["config", "--get", &base_key(branch)])?
            .filter(|s| !s.is_empty()))
    }

    /// The commit new branches start from: `base` when given, else the
    /// current branch's HEAD, which must be attached and clean.
    pub fn base_commit(&self, base: Option<&str>) -> Result<String, WorkspaceError> {
        if let Some(base) = base {
            return self
                .git
                .query(&[
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    &format!("{base}^{{commit}}"),
                ])?
                .filter(|s| !s.is_empty())
                .ok_or_else(|| WorkspaceError::UnknownBase {
                    repo: self.toplevel.clone(),
                    base: base.to_string(),
                });
        }
        if self
            .git
            .query(&["symbolic-ref", "--quiet", "HEAD"])?
            .is_none()
        {
            return Err(WorkspaceError::Detached(self.toplevel.clone()));
        }
        let status = self
            .git
            .run(&["status", "--porcelain", "--untracked-files=no"])?;
        let files: Vec<&str> = status
            .lines()
            .filter_map(|l| l.get(3..))
            .filter(|f| !f.is_empty() && !self.is_own_file(f))
            .collect();
        if !files.is_empty() {
            return Err(WorkspaceError::Dirty {
                repo: self.toplevel.clone(),
                files: files.join(", "),
            });
        }
        self.git
            .query(&["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])?
            .filter(|s| !s.is_empty())
            .ok_or_else(|| WorkspaceError::UnknownBase {
                repo: self.toplevel.clone(),
                base: "HEAD (the branch has no commit yet)".into(),
            })
    }

    /// Adds `dir` to the repository's local exclude file when it lies in the
    /// checkout and git does not ignore it yet.
    pub fn exclude(&self, dir: &Path) -> Result<(), WorkspaceError> {
        let top = std::fs::canonicalize(&self.toplevel).unwrap_or(self.toplevel.clone());
        let full = std::fs::canonicalize(dir).unwrap_or(dir.to_path_buf());
        let Ok(rel) = full.strip_prefix(&top) else {
            return Ok(());
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        if rel.is_empty() || self.git.check(&["check-ignore", "-q", &rel])? {
            return Ok(());
        }
        let common = self.git.run(&["rev-parse", "--git-common-dir"])?;
        let path = self
            .toplevel
            .join(common.trim())
            .join("info")
            .join("exclude");
        let io = |source| WorkspaceError::Io {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let old = match crate::fsutil::read_record_text(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(io(e)),
        };
        let sep = if old.is_empty() || old.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        let text = format!("{old}{sep}# awtui worktrees\n/{rel}/\n");
        std::fs::write(&path, text).map_err(io)
    }

    /// Makes the worktrees folder `folder` when missing (a new `.workflow/`
    /// gets its ignore-everything `.gitignore`) and keeps it out of
    /// `git status` ([`Repo::exclude`]).
    pub fn make_room(&self, folder: &Path) -> Result<(), WorkspaceError> {
        crate::fsutil::create_dir_if_missing(folder).map_err(|source| WorkspaceError::Io {
            path: folder.to_path_buf(),
            source,
        })?;
        self.exclude(folder)
    }

    /// A new branch `branch` at commit `base`, checked out at `path`, with
    /// its base recorded.
    pub fn add_worktree(
        &self,
        branch: &str,
        path: &Path,
        base: &str,
    ) -> Result<(), WorkspaceError> {
        if !self.git.check(&["check-ref-format", "--branch", branch])? {
            return Err(WorkspaceError::BadBranch(branch.to_string()));
        }
        if self.has_branch(branch)? {
            return Err(WorkspaceError::BranchExists(branch.to_string()));
        }
        self.git.run(&["worktree", "prune"])?;
        let p = path.display().to_string();
        self.git.run(&["worktree", "add", "-b", branch, &p, base])?;
        self.git.run(&["config", &base_key(branch), base])?;
        Ok(())
    }

    /// Whether every commit of `branch` is in `into`.
    pub fn is_merged(&self, branch: &str, into: &str) -> Result<bool, WorkspaceError> {
        self.git
            .check(&["merge-base", "--is-ancestor", branch, into])
    }

    /// Removes a workspace's worktree at `path` (when given) and its
    /// branch. `discard` allows throwing work away; otherwise the branch
    /// must be merged into `into` and the worktree clean. Only a branch
    /// awtui made (its base recorded) is ever deleted: any other is the
    /// user's and stays.
    pub fn remove_workspace(
        &self,
        branch: &str,
        path: Option<&Path>,
        into: &str,
        discard: bool,
    ) -> Result<(), WorkspaceError> {
        let seen = self.observe(branch)?;
        let ours = seen.branch_exists && seen.recorded_base.is_some();
        // A worktree whose `.git` no longer names the repository's record
        // is not removed (not even with `discard`): what is in it is not
        // what awtui made, and the person decides.
        let checkout = match path.filter(|p| p.exists()) {
            Some(p) => Some((p, self.worktree_git(p, seen.recorded_base.as_deref())?)),
            None => None,
        };
        if !discard {
            if ours && !self.is_merged(branch, into)? {
                return Err(WorkspaceError::Unmerged {
                    branch: branch.to_string(),
                    into: into.to_string(),
                });
            }
            if let Some((p, git)) = &checkout {
                let status = git.run(&["status", "--porcelain", "--ignore-submodules=all"])?;
                if !status.trim().is_empty() {
                    return Err(WorkspaceError::UncommittedWork(p.to_path_buf()));
                }
            }
        }
        if let Some((p, _)) = checkout {
            self.git
                .run(&["worktree", "remove", "--force", &p.display().to_string()])?;
            remove_empty_parents(p);
        }
        self.git.run(&["worktree", "prune"])?;
        if ours {
            self.git.run(&["branch", "-D", branch])?;
        }
        Ok(())
    }

    /// `agent`'s branch in `instance`, what git says about it, and where
    /// its worktree is or goes ([`place`]); `state_root` is the instance
    /// folder, where old instances kept their worktrees.
    fn locate(
        &self,
        workflow_dir: &Path,
        state_root: &Path,
        instance: &str,
        agent: &str,
    ) -> Result<(String, Observed, PathBuf), WorkspaceError> {
        let branch = branch_name(instance, agent);
        if !self
            .git
            .check(&["check-ref-format", &format!("refs/heads/{branch}")])?
        {
            return Err(WorkspaceError::BadBranch(branch));
        }
        let seen = self.observe(&branch)?;
        let root = place(
            &seen,
            worktree_dir(&worktrees_root(workflow_dir, instance), agent),
            legacy_worktree_dir(state_root, agent),
        );
        Ok((branch, seen, root))
    }

    /// Makes (or finds again, repairing it, see [`heal`]) `agent`'s
    /// worktree for `instance` (whose instance folder is `state_root`),
    /// starting a new branch at `base`; with what a repair did, for the
    /// channel.
    pub fn ensure(
        &self,
        workflow_dir: &Path,
        state_root: &Path,
        instance: &str,
        agent: &str,
        base: Option<&str>,
    ) -> Result<(AgentWorkspace, Vec<String>), WorkspaceError> {
        let (branch, mut seen, root) = self.locate(workflow_dir, state_root, instance, agent)?;
        // A branch awtui made whose worktree an agent or a person broke:
        // repaired first, so what follows sees the repository as it is.
        let mut notes = Vec::new();
        let mut root = root;
        let here = seen
            .checked_out_at
            .as_deref()
            .is_none_or(|at| same_path(at, &root));
        if seen.recorded_base.is_some() && here && (seen.checked_out_at.is_some() || root.exists())
        {
            notes = self.heal_folder(agent, &root, &branch)?.notes;
            if !notes.is_empty() {
                (_, seen, root) = self.locate(workflow_dir, state_root, instance, agent)?;
            }
        }
        let action = decide(&branch, &root, &seen, || self.base_commit(base))?;
        if let Some(folder) = root.parent() {
            self.make_room(folder)?;
        }
        let root_s = root.display().to_string();
        let base = match action {
            Action::Reuse => seen.recorded_base.unwrap_or_default(),
            Action::Reattach => {
                self.git.run(&["worktree", "prune"])?;
                self.git.run(&["worktree", "add", &root_s, &branch])?;
                seen.recorded_base.unwrap_or_default()
            }
            Action::Create { base: commit } => {
                self.add_worktree(&branch, &root, &commit)?;
                if let Some(into) = manage::default_into(self, base)? {
                    manage::record_into(self, &branch, &into)?;
                }
                commit
            }
        };
        let top = std::fs::canonicalize(&self.toplevel).unwrap_or(self.toplevel.clone());
        let wf = std::fs::canonicalize(workflow_dir).unwrap_or(workflow_dir.to_path_buf());
        let workdir = match wf.strip_prefix(&top) {
            Ok(rel) => root.join(rel),
            Err(_) => root.clone(),
        };
        Ok((
            AgentWorkspace {
                agent: agent.to_string(),
                branch,
                repo: self.toplevel.clone(),
                root,
                workdir,
                base,
            },
            notes,
        ))
    }
}

/// The worktrees of an instance's `workspace: worktree` agents, by agent.
pub type Workspaces = std::collections::BTreeMap<String, AgentWorkspace>;

/// Makes (or finds again) the worktree of every `workspace: worktree` agent
/// of `workflow`, with what repairing them did (for the channel); the
/// first failure names its agent.
pub fn prepare_all(
    workflow: &Workflow,
    instance: &str,
    state_root: &Path,
) -> Result<(Workspaces, Vec<String>), (String, WorkspaceError)> {
    let mut out = Workspaces::new();
    let mut notes = Vec::new();
    let mut repo: Option<Repo> = None;
    for a in &workflow.agents {
        let Workspace::Worktree { base } = &a.workspace else {
            continue;
        };
        let fail = |e| (a.name.clone(), e);
        let r = match &repo {
            Some(r) => r,
            None => repo.insert(
                Repo::find(&workflow.base_dir)
                    .map_err(fail)?
                    .with_own_file(&workflow.file),
            ),
        };
        let (ws, healed) = r
            .ensure(
                &workflow.base_dir,
                state_root,
                instance,
                &a.name,
                base.as_deref(),
            )
            .map_err(fail)?;
        notes.extend(healed);
        out.insert(a.name.clone(), ws);
    }
    Ok((out, notes))
}

/// Checks, without changing anything, that every `workspace: worktree`
/// agent's worktree can be made or found again for `instance`; one message
/// per problem, naming the agent.
pub fn preflight(workflow: &Workflow, instance: &str, state_root: Option<&Path>) -> Vec<String> {
    let agents: Vec<_> = workflow
        .agents
        .iter()
        .filter_map(|a| match &a.workspace {
            Workspace::Worktree { base } => Some((a.name.as_str(), base.as_deref())),
            Workspace::Shared => None,
        })
        .collect();
    if agents.is_empty() {
        return Vec::new();
    }
    let repo = match Repo::find(&workflow.base_dir) {
        Ok(r) => r.with_own_file(&workflow.file),
        Err(e) => return vec![e.to_string()],
    };
    let Some(state_root) = state_root else {
        return Vec::new();
    };
    agents
        .into_iter()
        .filter_map(|(agent, base)| {
            let check = repo
                .locate(&workflow.base_dir, state_root, instance, agent)
                .and_then(|(branch, seen, root)| {
                    decide(&branch, &root, &seen, || repo.base_commit(base))
                });
            check.err().map(|e| format!("agent '{agent}': {e}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worktree_list_is_parsed_with_branches() {
        let text = "worktree /r\nHEAD 1\nbranch refs/heads/main\n\nworktree /r/.workflow/.worktrees/i/a\nHEAD 2\nbranch refs/heads/awtui/i/a\n\nworktree /d\nHEAD 3\ndetached\n";
        assert_eq!(
            parse_worktree_list(text),
            vec![
                (PathBuf::from("/r"), Some("main".into())),
                (
                    PathBuf::from("/r/.workflow/.worktrees/i/a"),
                    Some("awtui/i/a".into())
                ),
                (PathBuf::from("/d"), None),
            ]
        );
    }

    #[test]
    fn worktrees_live_beside_the_instance_folders_old_ones_stay_where_they_are() {
        let root = worktrees_root(Path::new("/r"), "i");
        assert_eq!(root, Path::new("/r/.workflow/.worktrees/i"));
        assert_eq!(
            worktree_dir(&root, "a"),
            Path::new("/r/.workflow/.worktrees/i/a")
        );
        assert_eq!(
            task_worktree_dir(&root, "ws_1"),
            Path::new("/r/.workflow/.worktrees/i/.workspaces/ws_1")
        );
        let (new, old) = (
            worktree_dir(&root, "a"),
            legacy_worktree_dir(Path::new("/r/.workflow/i"), "a"),
        );
        assert_eq!(old, Path::new("/r/.workflow/i/worktrees/a"));
        let at = |p: Option<&PathBuf>| Observed {
            branch_exists: true,
            recorded_base: Some("c".into()),
            checked_out_at: p.cloned(),
        };
        assert_eq!(place(&at(Some(&old)), new.clone(), old.clone()), old);
        assert_eq!(place(&at(Some(&new)), new.clone(), old.clone()), new);
        assert_eq!(place(&at(None), new.clone(), old.clone()), new);
        assert_eq!(place(&Observed::default(), new.clone(), old), new);
    }

    #[test]
    fn a_person_in_an_agents_worktree_finds_the_workflows_repository() {
        let at = |p: &str| outside_worktrees(Path::new(p));
        assert_eq!(at("/r/.workflow/.worktrees/i/a/src"), Path::new("/r"));
        assert_eq!(
            at("/r/.workflow/.worktrees/i/.workspaces/ws_1"),
            Path::new("/r")
        );
        assert_eq!(at("/r/app/.workflow/i/worktrees/a"), Path::new("/r/app"));
        assert_eq!(
            at("/r/.workflow/.worktrees/i/a/.workflow/.worktrees/x/y"),
            Path::new("/r")
        );
        for plain in [
            "/r",
            "/r/src/worktrees/x",
            "/r/.worktrees/i",
            "/r/.workflow/i",
        ] {
            assert_eq!(at(plain), Path::new(plain), "{plain}");
        }
    }

    #[test]
    fn the_workflow_folder_is_found_back_from_its_worktrees_folder() {
        let root = worktrees_root(Path::new("/r/app"), "i");
        assert_eq!(workflow_dir_of(&root), Some(Path::new("/r/app")));
        for other in ["/r/app/.workflow/i", "/r/.worktrees/i", "/i", "/"] {
            assert_eq!(workflow_dir_of(Path::new(other)), None, "{other}");
        }
    }

    #[test]
    fn only_empty_folders_awtui_made_are_removed_after_a_worktree() {
        let tmp = tempfile::tempdir().unwrap();
        let root = worktrees_root(tmp.path(), "i");
        let (a, b) = (worktree_dir(&root, "a"), task_worktree_dir(&root, "ws_1"));
        std::fs::create_dir_all(&b).unwrap();
        remove_empty_parents(&a);
        assert!(b.exists(), "a folder holding another worktree stays");
        std::fs::remove_dir(&b).unwrap();
        remove_empty_parents(&b);
        assert!(!tmp.path().join(".workflow/.worktrees").exists());
        assert!(tmp.path().join(".workflow").exists(), "nothing above");
        let elsewhere = tmp.path().join("x/worktrees/a");
        std::fs::create_dir_all(elsewhere.parent().unwrap()).unwrap();
        remove_empty_parents(&elsewhere);
        assert!(tmp.path().join("x/worktrees").exists());
    }

    #[test]
    fn decide_reuses_reattaches_and_refuses_foreign_branches() {
        let here = Path::new("/w/a");
        let no_base = || -> Result<String, WorkspaceError> { panic!("base not needed") };
        let ours = Observed {
            branch_exists: true,
            recorded_base: Some("abc".into()),
            checked_out_at: Some(here.into()),
        };
        assert_eq!(decide("b", here, &ours, no_base).unwrap(), Action::Reuse);
        let gone = Observed {
            checked_out_at: None,
            ..ours.clone()
        };
        assert_eq!(decide("b", here, &gone, no_base).unwrap(), Action::Reattach);
        let elsewhere = Observed {
            checked_out_at: Some("/x".into()),
            ..ours
        };
        assert!(matches!(
            decide("b", here, &elsewhere, no_base),
            Err(WorkspaceError::CheckedOutElsewhere { .. })
        ));
        let foreign = Observed {
            branch_exists: true,
            ..Observed::default()
        };
        assert!(matches!(
            decide("b", here, &foreign, no_base),
            Err(WorkspaceError::BranchExists(_))
        ));
        assert_eq!(
            decide("b", here, &Observed::default(), || Ok("c1".into())).unwrap(),
            Action::Create { base: "c1".into() }
        );
    }
}
