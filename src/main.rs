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
        return ExitCode::from(commands::open::run(&file, cli.instance.as_deref()));
    };
    let code = match command {
        Command::Open { file, instance } => commands::open::run(&file, instance.as_deref()),
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
        Command::Validate { file, instance } => commands::validate::run(&file, instance.as_deref()),
        Command::Run {
            file,
            instance,
            verbose,
            json,
        } => commands::run::run(&file, instance.as_deref(), verbose, json),
        Command::Start {
            file,
            instance,
            background,
            verbose,
            json,
            daemon_child,
        } => commands::start::run(commands::start::StartArgs {
            file: &file,
            instance: instance.as_deref(),
            background,
            verbose,
            json,
            daemon_child,
        }),
        Command::Stop { target, all } => commands::stop::run(target.as_deref(), all),
        Command::List { json } => commands::list::run(json),
        Command::Send {
            message,
            to,
            wait,
            timeout,
            json,
        } => commands::send::run(commands::send::SendArgs {
            message: &message,
            to: to.as_deref(),
            wait,
            timeout,
            json,
        }),
        Command::Peek {
            to,
            n,
            kind,
            bead,
            json,
        } => commands::peek::run(commands::peek::PeekArgs {
            to: to.as_deref(),
            limit: n,
            kind: kind.as_deref(),
            bead: bead.as_deref(),
            json,
        }),
        Command::New {
            name,
            model,
            backend,
            system,
            context,
            command,
            json,
        } => commands::new::run(commands::new::NewArgs {
            name: &name,
            model: model.as_deref(),
            backend: backend.as_deref(),
            system: system.as_deref(),
            context,
            command: command.as_deref(),
            json,
        }),
        Command::Attach { instance, follow } => {
            if follow {
                commands::attach::run_with(instance.as_deref(), true)
            } else {
                commands::attach::run(instance.as_deref())
            }
        }
        Command::Init => match std::env::current_dir() {
            Ok(dir) => commands::init::run(&dir),
            Err(e) => {
                eprintln!("cannot read the current directory: {e}");
                commands::exit::FAILED
            }
        },
        Command::Ctx { json, command } => commands::ctx::run(command, json),
        Command::Aop {
            command: AopCommand::Check { strict, source },
        } => commands::aop_check::run(&source, strict),
    };
    ExitCode::from(code)
}
