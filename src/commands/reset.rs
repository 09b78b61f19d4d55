//! `awtui reset <file> [--instance N] [--yes]`: starts an instance afresh.
//! It stops the instance when it runs, then removes what awtui made for
//! it: its worktrees and `awtui/<instance>/…` branches (those awtui
//! recorded as its own, unmerged work included), its instance folder
//! (channel, documents, tasks, logs) and its approvals journal and channel
//! key in the per-user data dir. The next start posts the kickoff again.
//!
//! Every path comes from the workflow file and the instance name, as
//! `start` computes them, never from a file in the instance folder (which
//! agents can write). Links are never followed: a link planted in the
//! instance folder is removed as a link, and an instance folder that is
//! itself a link is refused with nothing removed.

use crate::{errln, outln};
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use super::exit;
use super::startup::{self, Preflight, WorkflowArgs};
use crate::instance::layout;

/// `awtui reset <file> [--instance N] [--yes]`.
#[derive(Clone, Debug, clap::Args)]
pub struct ResetArgs {
    #[command(flatten)]
    pub workflow: WorkflowArgs,
    /// Do not ask: remove everything of the instance.
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// Why a reset removed nothing, or stopped part way.
#[derive(Debug, thiserror::Error)]
pub enum ResetError {
    /// The instance folder (or its worktrees' folder), or a folder on the
    /// way to it below the workflow's folder, is a link: whatever it points
    /// to is not awtui's to remove.
    #[error("{} is a link, not a folder awtui made; nothing was removed", .0.display())]
    LinkedFolder(PathBuf),
    /// A file or folder could not be removed.
    #[error("cannot remove {}: {source}", path.display())]
    Remove {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Resets the instance of `args`; the exit code.
pub fn run(args: &ResetArgs) -> u8 {
    let prepared = match startup::prepare(&args.workflow, Preflight::Done) {
        Ok(p) => p,
        Err(code) => return code,
    };
    // Without a trailing `/`, whose lstat would follow a link.
    let home: PathBuf = match prepared.home() {
        Ok(h) => h.components().collect(),
        Err(code) => return code,
    };
    let instance = prepared.instance.clone();
    if !args.yes && !confirmed(&instance, &home) {
        return exit::INVALID;
    }
    let worktrees = crate::workspace::worktrees_root(&prepared.workflow.base_dir, &instance);
    let base_dir = prepared.workflow.base_dir.clone();
    if let Err(e) = no_link_on_the_way(&base_dir, &home)
        .and_then(|()| no_link_on_the_way(&base_dir, &worktrees))
    {
        errln!("{e}");
        return exit::FAILED;
    }
    let Some(rt) = super::remote::runtime() else {
        return exit::FAILED;
    };
    let code = rt.block_on(stop_if_running(&instance, &prepared.workflow.file));
    if code != exit::OK {
        return code;
    }
    // Nobody may start it while it is being removed.
    let claim = match startup::claim(&prepared) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if has_repo(&base_dir) {
        let code = super::workspace::clean(&base_dir, &instance, true);
        if code != exit::OK {
            return code;
        }
    }
    let removed = own_files(&home).and_then(|files| {
        remove_tree(&worktrees)?;
        remove_tree(&home)?;
        files.iter().try_for_each(|f| remove_file(f))
    });
    drop(claim);
    match removed {
        Ok(()) => {
            outln!(
                "reset @{instance}: its channel, documents, tasks and worktrees are gone; the next start begins afresh"
            );
            exit::OK
        }
        Err(e) => {
            errln!("{e}");
            exit::FAILED
        }
    }
}

/// Asks the person on a terminal; without one, says to add `--yes`.
fn confirmed(instance: &str, home: &Path) -> bool {
    let what = format!(
        "reset @{instance}: remove its channel, documents and tasks ({}) and its worktrees and branches, unmerged work included",
        home.display()
    );
    if !std::io::stdin().is_terminal() {
        errln!("{what}? nothing was removed: add --yes to confirm");
        return false;
    }
    eprint!("{what}? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    let yes = matches!(answer.trim(), "y" | "Y" | "yes");
    if !yes {
        errln!("nothing was removed");
    }
    yes
}

/// Stops the instance of `workflow` named `instance` when it runs.
async fn stop_if_running(instance: &str, workflow: &Path) -> u8 {
    let running = match super::remote::running() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let same = |p: &Path| std::fs::canonicalize(p).ok() == std::fs::canonicalize(workflow).ok();
    match running
        .iter()
        .find(|i| !i.standalone && i.instance == instance && same(&i.workflow))
    {
        Some(info) => super::stop::stop_instance(info).await,
        None => exit::OK,
    }
}

/// Whether `dir` is in a git repository (only then can it have worktrees).
fn has_repo(dir: &Path) -> bool {
    crate::workspace::Repo::find(dir).is_ok()
}

/// The instance's files kept outside its folder (approvals journal,
/// channel key, a standing pause, the agents added to it), named from the
/// instance folder before it goes: afresh means as the workflow file says.
fn own_files(home: &Path) -> Result<Vec<PathBuf>, ResetError> {
    let mut files = Vec::new();
    for path in [
        layout::approvals_journal(home),
        layout::channel_key(home),
        layout::pause_record(home),
        layout::added_agents(home),
    ]
    .into_iter()
    .flatten()
    {
        // Without a data dir these fall back into the instance folder,
        // which goes whole.
        if !path.starts_with(home) {
            files.push(path);
        }
    }
    Ok(files)
}

/// Refuses `path` when it, or a folder between `base` (the workflow's
/// folder, the person's own) and it, is a link: an agent that replaced
/// `.workflow` with a link to the home folder must not make a reset
/// remove a folder there. A path outside `base` is checked from its
/// parent down.
fn no_link_on_the_way(base: &Path, path: &Path) -> Result<(), ResetError> {
    let from = if path.starts_with(base) {
        base
    } else {
        path.parent().unwrap_or(path)
    };
    for p in path
        .ancestors()
        .take_while(|p| *p != from && p.starts_with(from))
    {
        if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(ResetError::LinkedFolder(p.to_path_buf()));
        }
    }
    Ok(())
}

/// Removes the folder `dir` and everything in it, following no link: a
/// link inside is removed as a link; `dir` itself being a link is refused.
fn remove_tree(dir: &Path) -> Result<(), ResetError> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(ResetError::Remove {
            path: dir.to_path_buf(),
            source,
        }),
        Ok(m) if m.file_type().is_symlink() => Err(ResetError::LinkedFolder(dir.to_path_buf())),
        // `remove_dir_all` never follows links (std documents it).
        Ok(_) => std::fs::remove_dir_all(dir).map_err(|source| ResetError::Remove {
            path: dir.to_path_buf(),
            source,
        }),
    }
}

/// Removes one of awtui's own files, if there.
fn remove_file(path: &Path) -> Result<(), ResetError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(ResetError::Remove {
            path: path.to_path_buf(),
            source: e,
        }),
        _ => Ok(()),
    }
}
