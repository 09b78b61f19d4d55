//! `awtui aop check [--strict] <file|->`: validates agent output against the
//! Agent Output Protocol and prints each finding with its line.

use crate::{errln, outln};
use std::io::Read;
use std::path::{Path, PathBuf};

use super::exit;
use crate::protocols::aop::{self, Mode, Severity};

/// `awtui aop check` and `awtui mail check`: what to check and how.
#[derive(Clone, Debug, clap::Args)]
pub struct CheckArgs {
    /// Exit non-zero when anything is wrong (lenient mode only warns).
    #[arg(long)]
    pub strict: bool,
    /// A file, or `-` for standard input.
    pub source: PathBuf,
}

/// Reads the source (`-` for stdin), prints findings as
/// `name:line: level: …` and a one-line verdict. With `--strict`, any
/// finding makes it exit 1.
pub fn run(args: &CheckArgs) -> u8 {
    let strict = args.strict;
    let (name, text) = match read_input(&args.source) {
        Ok(t) => t,
        Err(e) => {
            errln!("{e}");
            return exit::INVALID;
        }
    };
    let mode = if strict { Mode::Strict } else { Mode::Lenient };
    let parsed = aop::parse(&text, mode);
    for f in &parsed.findings {
        let level = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        outln!("{name}:{}: {level}: {}", f.line, f.message);
    }
    let blocks = parsed.blocks().count();
    let kinds: Vec<String> = parsed.blocks().map(|b| b.kind.to_string()).collect();
    outln!(
        "{name}: {blocks} block{} ({}), {} finding{}",
        if blocks == 1 { "" } else { "s" },
        if kinds.is_empty() {
            "none".to_string()
        } else {
            kinds.join(", ")
        },
        parsed.findings.len(),
        if parsed.findings.len() == 1 { "" } else { "s" }
    );
    if strict && !parsed.is_valid() {
        exit::FAILED
    } else {
        exit::OK
    }
}

/// Largest file `awtui aop check` and `awtui mail check` read (agent
/// output is far smaller).
const MAX_INPUT_BYTES: u64 = 16 * crate::fsutil::MIB;

/// Reads a checker's input: a regular file (capped), or standard input for
/// `-`; returns the name to print and the text.
pub fn read_input(source: &Path) -> Result<(String, String), String> {
    if source == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        Ok(("<stdin>".into(), text))
    } else {
        let bytes = crate::fsutil::read_regular_capped(source, MAX_INPUT_BYTES)
            .map_err(|e| e.to_string())?;
        Ok((
            source.display().to_string(),
            String::from_utf8_lossy(&bytes).into_owned(),
        ))
    }
}
