//! The `awtui` binary: parses the command line and dispatches. Everything
//! it prints, clap's usage errors included, goes through
//! [`awtui::output`]: sanitized, and never a panic on a closed pipe.

use std::process::ExitCode;

use awtui::cli::{AopCommand, Cli, Command, MailCommand};
use awtui::mcp::bridge::BridgeArgs;
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
        None | Some(Command::Open(_) | Command::Run(_) | Command::Start(_) | Command::Mcp(_))
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

/// `awtui mcp`'s arguments, read without clap when plainly given: one
/// bridge runs per agent for the agent's whole life, and neither the whole
/// grammar nor clap's parser should stay resident in each. `None` for any
/// other command line: the full parser then reads it (help and usage
/// errors as always).
/// Such a bridge hands itself over to `awtui-mcp` when that is installed
/// beside `awtui` (the bridge alone, a fraction of the memory;
/// [`awtui::mcp::bridge::handover`]), and runs here when it is not.
fn bridge_args() -> Option<BridgeArgs> {
    let mut argv = std::env::args_os().skip(1);
    if argv.next()? != "mcp" {
        return None;
    }
    let rest: Vec<std::ffi::OsString> = argv.collect();
    let args = BridgeArgs::plain(rest.clone())?;
    awtui::mcp::bridge::handover::hand_over(&rest);
    Some(args)
}

/// Runs the command; its exit code, and whether it hosted an instance.
fn dispatch() -> (ExitCode, bool) {
    let parsed = match bridge_args() {
        Some(args) => Ok(Cli {
            command: Some(Command::Mcp(args)),
            file: None,
            instance: None,
        }),
        None => Cli::try_parse(),
    };
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return (ExitCode::from(usage(e)), false),
    };
    let hosts = hosts(cli.command.as_ref());
    let command = match (cli.command, cli.file) {
        (Some(command), _) => command,
        (None, Some(file)) => {
            if let Some(name) = misspelt_subcommand(&file) {
                errln!(
                    "{} is neither a file nor a command: did you mean `awtui {name}`? (`awtui --help` lists the commands)",
                    file.display()
                );
                return (ExitCode::from(commands::exit::INVALID), false);
            }
            // `awtui <file>` is `awtui open <file>`.
            Command::Open(commands::startup::WorkflowArgs {
                file,
                instance: cli.instance,
            })
        }
        (None, None) => {
            if cli.instance.is_some() {
                errln!(
                    "--instance names the instance of a workflow file: awtui <file> --instance <name>"
                );
                return (ExitCode::from(commands::exit::INVALID), false);
            }
            return (ExitCode::from(commands::home::run()), false);
        }
    };
    (run(command), hosts)
}

/// Runs one subcommand with its arguments; its exit code.
fn run(command: Command) -> ExitCode {
    use awtui::approvals::Verdict;
    let code = match command {
        Command::Mcp(args) => return awtui::mcp::bridge::main(args),
        Command::Validate(args) => commands::validate::run(&args),
        Command::Open(args) => commands::open::run(&args),
        Command::Run(args) => commands::run::run(&args),
        Command::Start(args) => commands::start::run(&args),
        Command::Stop(args) => commands::stop::run(&args),
        Command::Reset(args) => commands::reset::run(&args),
        Command::List(args) => commands::list::run(&args),
        Command::Send(args) => commands::send::run(&args),
        Command::Peek(args) => commands::peek::run(&args),
        Command::Approve(args) => commands::approve::run(Verdict::Allow, &args),
        Command::Agent { command } => commands::agent::run(&command),
        Command::Deny(args) => commands::approve::run(Verdict::Deny, &args),
        Command::Tasks(args) => commands::tasks::run(&args),
        Command::Diff(args) => commands::diff::run(&args),
        Command::Merge(args) => commands::workspace::merge(&args),
        Command::Revert(args) => commands::workspace::revert(&args),
        Command::Discard(args) => commands::workspace::discard(&args),
        Command::New(args) => commands::new::run(&args),
        Command::Attach(args) => commands::attach::run(&args),
        Command::Web(args) => commands::web::run(args),
        Command::Init => commands::init::run_here(),
        Command::Ctx(args) => commands::ctx::run(args),
        Command::Aop {
            command: AopCommand::Check(args),
        } => commands::aop_check::run(&args),
        Command::Mail {
            command: MailCommand::Check(args),
        } => commands::mail_check::run(&args),
    };
    ExitCode::from(code)
}
