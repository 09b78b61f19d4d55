//! The `awtui` binary: parses the command line and dispatches.

use std::process::ExitCode;

use awtui::cli::{AopCommand, Cli, Command};
use awtui::commands;
use clap::Parser;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Some(command) = cli.command else {
        // `required = true` on `file` makes clap refuse a bare `awtui`.
        let file = cli.file.unwrap_or_default();
        return ExitCode::from(commands::open::run(&file, &cli.instance));
    };
    let code = match command {
        Command::Open { file, instance } => commands::open::run(&file, &instance),
        Command::Mcp {
            instance,
            agent,
            dir,
            workflow,
        } => {
            return awtui::mcp::bridge::main(awtui::mcp::bridge::BridgeArgs {
                instance,
                agent,
                dir,
                workflow,
            });
        }
        Command::Validate { file, instance } => commands::validate::run(&file, &instance),
        Command::Run { file, instance } => commands::run::run(&file, &instance),
        Command::Ctx { json, command } => commands::ctx::run(command, json),
        Command::Aop {
            command: AopCommand::Check { strict, source },
        } => commands::aop_check::run(&source, strict),
    };
    ExitCode::from(code)
}
