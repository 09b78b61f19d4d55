//! `awtui diff <agent[@instance]> [--turn N] [--stat]`: an agent's work in
//! its worktree against its base, in total or for one turn (colour only on
//! a terminal; otherwise the patch exactly as git prints it).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use super::exit;
use crate::errln;
use crate::workspace::diff::{self, DiffRequest};

/// `awtui diff <agent[@instance]> [--turn N] [--stat] [--dir D]`.
#[derive(Clone, Debug, clap::Args)]
pub struct DiffArgs {
    /// agent or agent@instance.
    pub target: String,
    /// Only this turn's changes (the agent's turns are numbered on its
    /// branch: 1, 2, …).
    #[arg(long)]
    pub turn: Option<u32>,
    /// Files and line counts only.
    #[arg(long)]
    pub stat: bool,
    /// A folder of the repository (default: the current folder).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// Prints the diff; returns the exit code.
pub fn run(args: &DiffArgs) -> u8 {
    let (turn, stat) = (args.turn, args.stat);
    let t = match super::workspace::find(&args.target, args.dir.as_deref()) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let shown = diff::diff_text(&t.repo, &t.at, DiffRequest { turn, stat }).and_then(|text| {
        let pending = if turn.is_none() {
            diff::uncommitted(&t.repo, &t.at)?
        } else {
            Vec::new()
        };
        Ok((text, pending))
    });
    let (text, pending) = match shown {
        Ok(s) => s,
        Err(e) => {
            errln!("{e}");
            return exit::FAILED;
        }
    };
    let at = t.at;
    if text.trim().is_empty() {
        // Said on stderr: stdout stays an (empty) patch for scripts.
        match turn {
            Some(n) => errln!("no changes: turn {n} of {} changed nothing", args.target),
            None => errln!(
                "no changes: {} is at its base {} (nothing committed yet)",
                at.branch,
                at.base.get(..10).unwrap_or(&at.base)
            ),
        }
    } else if std::io::stdout().is_terminal() {
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
