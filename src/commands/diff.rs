//! `awtui diff <agent[@instance]> [--turn N] [--stat]`: an agent's work in
//! its worktree against its base, in total or for one turn (colour only on
//! a terminal; otherwise the patch exactly as git prints it).

use std::io::IsTerminal;
use std::path::Path;

use super::exit;
use crate::errln;
use crate::workspace::diff::{self, DiffRequest};

/// Prints the diff; returns the exit code.
pub fn run(target: &str, turn: Option<u32>, stat: bool, dir: Option<&Path>) -> u8 {
    let t = match super::workspace::find(target, dir) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let shown = diff::diff_text(&t.repo, &t.at, DiffRequest { turn, stat }).and_then(|text| {
        let pending = if turn.is_none() {
            diff::uncommitted(&t.at)?
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
            Some(n) => errln!("no changes: turn {n} of {target} changed nothing"),
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
