//! `awtui init`: a starter workflow in the current folder — `review.yaml`
//! (two Claude Code agents reviewing and fixing the current changes) and
//! its prompts — from assets embedded in the binary. It never overwrites:
//! if any of the files exists, nothing is written.

use crate::errln;
use std::path::Path;

use super::exit;

/// The files `init` writes, relative to the folder, with their content.
pub const FILES: [(&str, &str); 3] = [
    (
        "review.yaml",
        include_str!("../../assets/workflows/review.yaml"),
    ),
    (
        "prompts/reviewer.md",
        include_str!("../../assets/workflows/prompts/reviewer.md"),
    ),
    (
        "prompts/coder.md",
        include_str!("../../assets/workflows/prompts/coder.md"),
    ),
];

/// `awtui init`: writes the starter files into the current folder; returns
/// the exit code.
pub fn run_here() -> u8 {
    match std::env::current_dir() {
        Ok(dir) => run(&dir),
        Err(e) => {
            errln!("cannot read the current directory: {e}");
            exit::FAILED
        }
    }
}

/// The workflow file `init` writes: the asset with its header comment
/// (which names the asset's own path in the repository) replaced by one
/// that names the file written, so the commands it suggests work as typed.
/// Other files are written as they are.
fn starter_text(name: &str, asset: &str) -> String {
    if !name.ends_with(".yaml") {
        return asset.to_string();
    }
    let body: String = asset
        .lines()
        .skip_while(|l| l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    format!(
        "# {name}, written by `awtui init`: a code review by two Claude Code\n\
         # agents. Needs `claude` on PATH and a git repository with changes.\n\
         # Check it with `awtui validate {name}`, run it with `awtui run {name}`.\n{body}"
    )
}

/// Writes the starter files into `dir`; returns the exit code.
pub fn run(dir: &Path) -> u8 {
    let existing: Vec<&str> = FILES
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| dir.join(name).symlink_metadata().is_ok())
        .collect();
    if !existing.is_empty() {
        errln!(
            "refusing to overwrite {} (nothing was written)",
            existing.join(", ")
        );
        return exit::FAILED;
    }
    for (name, content) in FILES {
        let path = dir.join(name);
        let content = &starter_text(name, content);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| {
                use std::io::Write;
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&path)?
                    .write_all(content.as_bytes())
            });
        if let Err(e) = written {
            errln!("cannot write {}: {e}", path.display());
            return exit::FAILED;
        }
        super::print::line(format!("wrote {name}"));
    }
    super::print::line("next: awtui validate review.yaml, then awtui run review.yaml");
    exit::OK
}
