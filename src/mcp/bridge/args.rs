//! The command-line arguments of `awtui mcp`: declared once, for clap
//! ([`BridgeArgs`]), and also read without clap when they are plainly
//! given ([`BridgeArgs::plain`]). One bridge runs per agent for the
//! agent's whole life, and clap's parser is code that would then stay
//! resident in each (about 0.3 MiB of a bridge's ~7.5; docs/figures.md).
//! Whatever is not plainly given (`--help`, `--agent=x`, a mistake) is
//! left to the whole command line's grammar, which answers as it always
//! did.

use std::ffi::OsString;
use std::path::PathBuf;

/// The command-line arguments of `awtui mcp` (parsed by clap straight into
/// this struct; the field docs are the help texts).
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct BridgeArgs {
    /// The running instance (default: with --workflow, that workflow's
    /// own; otherwise the only one running in the folder).
    #[arg(long)]
    pub instance: Option<String>,
    /// The agent to act as (its token comes from AWTUI_TOKEN or the
    /// instance's token folder in the per-user state dir).
    #[arg(long)]
    pub agent: String,
    /// The folder holding .workflow/<instance>/ (default: the current
    /// directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// The workflow file, whose context settings say where the instance
    /// lives.
    #[arg(long, conflicts_with = "dir")]
    pub workflow: Option<PathBuf>,
}

impl BridgeArgs {
    /// The arguments that follow `mcp` when each is given as `--name
    /// value`, at most once, with `--agent` among them and not both
    /// `--dir` and `--workflow`; `None` for anything else. What it
    /// accepts, clap accepts and reads the same (tested against clap).
    pub fn plain(argv: impl IntoIterator<Item = OsString>) -> Option<BridgeArgs> {
        let (mut instance, mut agent, mut dir, mut workflow) = (None, None, None, None);
        let mut argv = argv.into_iter();
        while let Some(flag) = argv.next() {
            let value = argv.next()?;
            // clap takes `--agent -x` for a missing value; leave such to it.
            if value.is_empty() || value.as_encoded_bytes().starts_with(b"-") {
                return None;
            }
            let again = match flag.to_str()? {
                "--instance" => instance.replace(value.into_string().ok()?).is_some(),
                "--agent" => agent.replace(value.into_string().ok()?).is_some(),
                "--dir" => dir.replace(PathBuf::from(value)).is_some(),
                "--workflow" => workflow.replace(PathBuf::from(value)).is_some(),
                _ => return None,
            };
            if again {
                return None;
            }
        }
        if dir.is_some() && workflow.is_some() {
            return None;
        }
        Some(BridgeArgs {
            instance,
            agent: agent?,
            dir,
            workflow,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Args, FromArgMatches};
    use proptest::prelude::*;

    /// What clap makes of `awtui mcp <argv>`.
    fn clap(argv: &[OsString]) -> Result<BridgeArgs, clap::Error> {
        let matches = BridgeArgs::augment_args(clap::Command::new("mcp"))
            .try_get_matches_from(std::iter::once(OsString::from("mcp")).chain(argv.to_vec()))?;
        BridgeArgs::from_arg_matches(&matches)
    }

    fn words(argv: &[&str]) -> Vec<OsString> {
        argv.iter().map(OsString::from).collect()
    }

    #[test]
    fn plainly_given_arguments_are_read_as_clap_reads_them() {
        for argv in [
            &["--agent", "coder"][..],
            &[
                "--instance",
                "default",
                "--agent",
                "coder",
                "--dir",
                "/tmp/x y",
            ],
            &[
                "--workflow",
                "review.yaml",
                "--agent",
                "a",
                "--instance",
                "i",
            ],
        ] {
            let argv = words(argv);
            assert_eq!(BridgeArgs::plain(argv.clone()), Some(clap(&argv).unwrap()));
        }
    }

    #[test]
    fn anything_else_is_left_to_clap() {
        for argv in [
            &[][..],
            &["--help"],
            &["--agent=coder"],
            &["--agent"],
            &["--agent", "-x"],
            &["--agent", ""],
            &["--agent", "a", "--agent", "b"],
            &["--agent", "a", "--dir", "d", "--workflow", "w"],
            &["--agent", "a", "--bogus", "b"],
            &["--agent", "a", "--", "b"],
        ] {
            assert_eq!(BridgeArgs::plain(words(argv)), None, "{argv:?}");
        }
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStringExt;
            let not_utf8 = OsString::from_vec(vec![0x66, 0xff]);
            let argv = vec!["--agent".into(), not_utf8.clone()];
            assert_eq!(BridgeArgs::plain(argv), None);
            let argv = vec!["--agent".into(), "a".into(), "--dir".into(), not_utf8];
            assert_eq!(BridgeArgs::plain(argv.clone()), Some(clap(&argv).unwrap()));
        }
    }

    proptest! {
        #[test]
        fn what_is_read_without_clap_is_what_clap_reads(
            argv in prop::collection::vec(
                prop::sample::select(vec![
                    "--instance", "--agent", "--dir", "--workflow", "--agent=a", "--help",
                    "-x", "--", "", "a", "b c", "-",
                ]),
                0..8,
            )
        ) {
            let argv = words(&argv);
            if let Some(args) = BridgeArgs::plain(argv.clone()) {
                prop_assert_eq!(Some(args), clap(&argv).ok());
            }
        }
    }
}
