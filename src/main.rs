//! The `awtui` binary: parses the command line and dispatches.

use std::process::ExitCode;

use awtui::cli::{Cli, Command};
use awtui::workflow::{self, LoadError};
use clap::Parser;

/// Exit code for invalid usage or an invalid workflow.
const EXIT_INVALID: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Validate { file, instance } => validate(&file, &instance),
        Command::Mcp {
            instance,
            agent,
            dir,
            workflow,
        } => awtui::mcp::bridge::main(awtui::mcp::bridge::BridgeArgs {
            instance,
            agent,
            dir,
            workflow,
        }),
    }
}

fn validate(file: &std::path::Path, instance: &str) -> ExitCode {
    if !workflow::setup::is_valid_instance_name(instance) {
        eprintln!(
            "{}",
            workflow::setup::SetupError::InstanceName(instance.into())
        );
        return ExitCode::from(EXIT_INVALID);
    }
    match workflow::load(file) {
        Ok(loaded) => {
            print!("{}", workflow::summary::summary(&loaded.workflow, instance));
            for w in loaded.warnings.warnings() {
                eprintln!("{}", loaded.warnings.render(w));
            }
            ExitCode::SUCCESS
        }
        Err(LoadError::Invalid(diags)) => {
            eprintln!("{diags}");
            let n = diags.errors().len();
            eprintln!(
                "{n} error{} in {}",
                if n == 1 { "" } else { "s" },
                file.display()
            );
            ExitCode::from(EXIT_INVALID)
        }
        Err(e @ LoadError::Io { .. }) => {
            eprintln!("{e}");
            ExitCode::from(EXIT_INVALID)
        }
    }
}
