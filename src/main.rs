//! The `awtui` binary: parses the command line and dispatches. Everything
//! it prints, clap's usage errors included, goes through
//! [`awtui::output`]: sanitized, and never a panic on a closed pipe.

use std::process::ExitCode;

use awtui::cli::{AopCommand, Cli, Command, MailCommand};
use awtui::{commands, errln, output};
use clap::Parser;

fn main() -> ExitCode {
    let (code, hosts) = dispatch();
    if hosts {
        // `awtui stop` waits for this process to exit: a reader that takes
        // nothing may cost the tail of the output, never the exit.
        output::flush();
    } else {
        output::drain();
    }
    code
}

/// Whether `command` runs an instance (or the MCP bridge) in this process.
fn hosts(command: Option<&Command>) -> bool {
    matches!(
        command,
        None | Some(
            Command::Open { .. }
                | Command::Run { .. }
                | Command::Start { .. }
                | Command::Mcp { .. }
        )
    )
}

/// Prints clap's help, version or usage error (its words echo arguments,
/// which may carry escape sequences); the exit code clap chose.
fn usage(e: clap::Error) -> u8 {
    let text = e.render().to_string();
    let text = text.trim_end_matches('\n');
    if e.use_stderr() {
        errln!("{text}");
    } else {
        awtui::outln!("{text}");
    }
    u8::try_from(e.exit_code()).unwrap_or(commands::exit::INVALID)
}

/// The subcommand `file` looks like a misspelling of, when no such file
/// exists (`awtui lsit` → `list`).
fn misspelt_subcommand(file: &std::path::Path) -> Option<String> {
    use clap::CommandFactory;
    if std::fs::symlink_metadata(file).is_ok() {
        return None;
    }
    let word = file.to_str()?;
    let cli = Cli::command();
    let names: Vec<&str> = cli.get_subcommands().map(|c| c.get_name()).collect();
    awtui::workflow::diagnostic::did_you_mean(word, names).map(str::to_string)
}

/// Runs the command; its exit code, and whether it hosted an instance.
fn dispatch() -> (ExitCode, bool) {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return (ExitCode::from(usage(e)), false),
    };
    let hosts = hosts(cli.command.as_ref());
    let Some(command) = cli.command else {
        let Some(file) = cli.file else {
            if cli.instance.is_some() {
                errln!(
                    "--instance names the instance of a workflow file: awtui <file> --instance <name>"
                );
                return (ExitCode::from(commands::exit::INVALID), false);
            }
            return (ExitCode::from(commands::home::run()), false);
        };
        if let Some(name) = misspelt_subcommand(&file) {
            errln!(
                "{} is neither a file nor a command: did you mean `awtui {name}`? (`awtui --help` lists the commands)",
                file.display()
            );
            return (ExitCode::from(commands::exit::INVALID), false);
        }
        return (
            ExitCode::from(commands::open::run(&file, cli.instance.as_deref())),
            hosts,
        );
    };
    let code = match command {
        Command::Open { file, instance } => commands::open::run(&file, instance.as_deref()),
        Command::Mcp {
            instance,
            agent,
            dir,
            workflow,
        } => {
            let code = awtui::mcp::bridge::main(awtui::mcp::bridge::BridgeArgs {
                instance,
                agent,
                dir,
                workflow,
            });
            return (code, hosts);
        }
        Command::Validate {
            file,
            instance,
            check_hosts,
        } => commands::validate::run(&file, instance.as_deref(), check_hosts),
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
        Command::Stop {
            target,
            all,
            clean,
            force,
        } => commands::stop::run(target.as_deref(), all, clean, force),
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
            tasks,
            json,
        } => commands::peek::run(commands::peek::PeekArgs {
            to: to.as_deref(),
            limit: n,
            kind: kind.as_deref(),
            bead: bead.as_deref(),
            json,
            tasks,
        }),
        Command::Tasks { instance, json } => commands::tasks::run(instance.as_deref(), json),
        Command::Approve { decision } => {
            commands::approve::run(awtui::approvals::Verdict::Allow, &decision)
        }
        Command::Deny { decision } => {
            commands::approve::run(awtui::approvals::Verdict::Deny, &decision)
        }
        Command::Diff {
            target,
            turn,
            stat,
            dir,
        } => commands::diff::run(&target, turn, stat, dir.as_deref()),
        Command::Merge {
            target,
            no_ff,
            into,
            dir,
        } => commands::workspace::merge(&target, into.as_deref(), no_ff, dir.as_deref()),
        Command::Revert { target, turn, dir } => {
            commands::workspace::revert(&target, turn, dir.as_deref())
        }
        Command::Discard { target, dir } => commands::workspace::discard(&target, dir.as_deref()),
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
        Command::Web {
            port,
            listen,
            allow_remote,
            new_token,
        } => commands::web::run(commands::web::WebArgs {
            port,
            listen,
            allow_remote,
            new_token,
        }),
        Command::Init => match std::env::current_dir() {
            Ok(dir) => commands::init::run(&dir),
            Err(e) => {
                errln!("cannot read the current directory: {e}");
                commands::exit::FAILED
            }
        },
        Command::Ctx { json, command } => commands::ctx::run(command, json),
        Command::Aop {
            command: AopCommand::Check { strict, source },
        } => commands::aop_check::run(&source, strict),
        Command::Mail {
            command: MailCommand::Check { strict, source },
        } => commands::mail_check::run(&source, strict),
    };
    (ExitCode::from(code), hosts)
}
