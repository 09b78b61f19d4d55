//! `awtui diff <agent[@instance]> [--turn N] [--stat]`: an agent's work in
//! its worktree against its base, in total or for one turn (colour only on
//! a terminal; otherwise the patch exactly as git prints it).

use std::io::IsTerminal;
use std::path::Path;

use super::exit;
use crate::errln;
use crate::workspace::Repo;
use crate::workspace::diff::{self, DiffRequest};

/// Prints the diff; returns the exit code.
pub fn run(target: &str, turn: Option<u32>, stat: bool, dir: Option<&Path>) -> u8 {
    let (agent, instance) = match target.split_once('@') {
        Some((a, i)) => (a, Some(i)),
        None => (target, None),
    };
    if agent.is_empty() || instance.is_some_and(str::is_empty) {
        errln!("'{target}' is not agent or agent@instance");
        return exit::INVALID;
    }
    let here = match dir {
        Some(d) => d.to_path_buf(),
        None => match std::env::current_dir() {
            Ok(d) => d,
            Err(e) => {
                errln!("cannot read the current folder: {e}");
                return exit::FAILED;
            }
        },
    };
    let shown = Repo::find(&here).and_then(|repo| {
        let at = diff::locate(&repo, agent, instance)?;
        let text = diff::diff_text(&repo, &at, DiffRequest { turn, stat })?;
        let pending = if turn.is_none() {
            diff::uncommitted(&at)?
        } else {
            Vec::new()
        };
        Ok((text, pending, at))
    });
    let (text, pending, at) = match shown {
        Ok(s) => s,
        Err(e) => {
            errln!("{e}");
            return exit::FAILED;
        }
    };
    if std::io::stdout().is_terminal() {
        crate::output::raw(diff::colorize(&text));
    } else {
        crate::output::raw(text);
    }
    if !pending.is_empty() {
        errln!(
            "{} file(s) changed in {} and not committed yet (the turn is still running): {}",
            pending.len(),
            at.worktree.as_deref().unwrap_or(Path::new("?")).display(),
            pending
                .iter()
                .map(|l| l.get(3..).unwrap_or(l))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    exit::OK
}
