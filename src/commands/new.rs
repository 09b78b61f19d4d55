//! `awtui new <name>`: a standalone agent in an instance of its own (see
//! [`crate::instance::standalone`]), started in the background. It works in
//! the current directory; `send --to <name>` talks to it, `peek --to <name>`
//! reads the conversation, `stop <name>` ends it. Running `new` again for a
//! stopped agent rewrites its settings and starts it again (with
//! `--context`, its conversation continues).

use crate::errln;
use std::path::Path;

use super::exit;
use super::remote;
use super::start;
use super::startup::WorkflowArgs;
use crate::context::mentions;
use crate::instance::standalone::{self, Spec};

/// `awtui new <name> [--model M] [--backend B] [--system S] [--context]
/// [--command P] [--json]`.
#[derive(Clone, Debug, clap::Args)]
pub struct NewArgs {
    /// Its name (send --to <name> talks to it).
    pub name: String,
    /// Model (an anthropic/, openai/ or ollama/ prefix picks the backend).
    #[arg(long)]
    pub model: Option<String>,
    /// Backend (default: claude, unless --model or --command decides).
    #[arg(long)]
    pub backend: Option<String>,
    /// System prompt: text, or a file to read it from.
    #[arg(long)]
    pub system: Option<String>,
    /// Keep its conversation and a notes document on disk (otherwise the
    /// conversation lives in memory while it runs).
    #[arg(long)]
    pub context: bool,
    /// Program for the command backend.
    #[arg(long)]
    pub command: Option<String>,
    /// Print the started agent as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Creates and starts the agent; returns the exit code.
pub fn run(args: &NewArgs) -> u8 {
    let name = args.name.as_str();
    if !mentions::is_valid_name(name) || mentions::RESERVED_NAMES.contains(&name) {
        errln!(
            "'{name}' cannot be an agent name: use letters, digits, '_' and '-', starting with a letter (not system, user or all)"
        );
        return exit::INVALID;
    }
    let running = match remote::running() {
        Ok(r) => r,
        Err(code) => return code,
    };
    if let Some(other) = running.iter().find(|i| i.instance == name) {
        errln!(
            "'{name}' is already running (pid {}, {}); stop it first with `awtui stop {}`",
            other.pid,
            other.source(),
            if other.standalone {
                name.to_string()
            } else {
                format!("@{name}")
            }
        );
        return exit::ALREADY_RUNNING;
    }
    let system = match args.system.as_deref() {
        Some(s) if Path::new(s).exists() && !Path::new(s).is_dir() => {
            match crate::fsutil::read_text_capped(Path::new(s), crate::fsutil::MAX_PROMPT_BYTES) {
                Ok(text) => Some(text),
                Err(e) => {
                    errln!("{e}");
                    return exit::INVALID;
                }
            }
        }
        other => other.map(str::to_string),
    };
    let workdir = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            errln!("cannot read the current directory: {e}");
            return exit::FAILED;
        }
    };
    let spec = Spec {
        name: name.to_string(),
        model: args.model.clone(),
        backend: args.backend.clone(),
        command: args.command.clone(),
        system,
        context: args.context,
        workdir,
    };
    let file = match standalone::write(&spec) {
        Ok(f) => f,
        Err(e) => {
            errln!("{e}");
            return exit::FAILED;
        }
    };
    let workflow = WorkflowArgs {
        file,
        instance: Some(name.to_string()),
    };
    start::background(&workflow, false, args.json)
}
