//! Where an agent's process runs: on this machine as the user
//! ([`Local`]), on this machine confined by bubblewrap ([`Sandboxed`]), or
//! on another machine over OpenSSH ([`ssh::Remote`]).
//!
//! Every CLI backend describes a turn as an [`Invocation`] for this
//! machine and knows nothing of where it runs; the process runner hands
//! that invocation to the agent's [`Runtime`], which writes its files,
//! finds its program and says which process to start here ([`Launch`]).
//! The runner then supervises that process the same way for every
//! runtime: its output, its process group, its end.

pub mod placement;
pub mod sandbox;
pub mod spawner;
pub mod ssh;

use std::path::{Path, PathBuf};

use super::backend::invocation::{Invocation, Mirror, PrivateFile};
use super::backend::{BackendError, find_executable};
use crate::workflow::{AgentDef, HostChoice};

pub use sandbox::Sandboxed;

/// Checks before a start that `agent` can run where it is to run: its CLI
/// here (unless it runs on another host, where the start checks it), and
/// bubblewrap working when it is sandboxed. The error says what is
/// missing.
pub fn preflight(agent: &AgentDef, workdir: &Path) -> Result<(), BackendError> {
    if agent.host != HostChoice::Local {
        // Its CLI is on the other host; here it needs only ssh (a host
        // left `any` may be placed here, so its CLI is checked there too).
        if find_executable(ssh::SSH, workdir, None).is_none() {
            return Err(BackendError::Unavailable(format!(
                "it runs on another host and '{}' was not found on PATH; install OpenSSH's client",
                ssh::SSH
            )));
        }
        if agent.host != HostChoice::Any {
            return Ok(());
        }
    }
    crate::agents::backend::preflight(agent, workdir)?;
    if agent.sandbox.is_some() {
        sandbox::check().map_err(BackendError::Unavailable)?;
    }
    Ok(())
}

/// The process to start on this machine for one turn.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    /// An absolute path.
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    /// Written to stdin first.
    pub stdin: Option<String>,
    /// Keep stdin open after [`stdin`](Launch::stdin) until the turn ends:
    /// its end is how a remote turn learns that awtui stopped it or died.
    pub hold_stdin: bool,
}

/// Where one agent's processes run. One implementation per kind of place;
/// every backend's turns go through it.
pub trait Runtime: Send + Sync + std::fmt::Debug {
    /// Where the agent runs, as `awtui list` and the Agents pane say it:
    /// `local`, `sandbox` or the host's name.
    fn place(&self) -> String;

    /// Makes `inv` ready to start: writes its files, finds its program
    /// (`hint` says how to install it) and says which process starts here.
    fn prepare(&self, inv: Invocation, hint: &str) -> Result<Launch, BackendError>;
}

/// This machine, as the user: the invocation as it is.
#[derive(Clone, Copy, Debug, Default)]
pub struct Local;

impl Runtime for Local {
    fn place(&self) -> String {
        "local".into()
    }

    fn prepare(&self, inv: Invocation, hint: &str) -> Result<Launch, BackendError> {
        if let Some(m) = &inv.mirror {
            mirror(m, &inv.files)?;
        }
        for f in &inv.files {
            write_private(f)?;
        }
        let program = resolve(&inv, hint)?;
        Ok(Launch {
            program,
            args: inv.args,
            env: inv.env,
            cwd: inv.cwd,
            stdin: inv.stdin,
            hold_stdin: false,
        })
    }
}

/// A program of this machine awtui itself runs (`sh`, `bwrap`), by name.
pub fn resolve_local(program: &str) -> Result<PathBuf, BackendError> {
    find_executable(program, Path::new("/"), None).ok_or_else(|| BackendError::NotInstalled {
        program: program.into(),
        hint: String::new(),
    })
}

/// The program of `inv` on this machine, found as a shell would (the
/// agent's own `PATH` first).
fn resolve(inv: &Invocation, hint: &str) -> Result<PathBuf, BackendError> {
    let path = inv
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str());
    match find_executable(&inv.program, &inv.cwd, path) {
        Some(p) => Ok(p),
        None if inv.program.contains('/') => Err(BackendError::NoSuchProgram {
            program: inv.program.clone(),
            dir: inv.cwd.clone(),
        }),
        None => Err(BackendError::NotInstalled {
            program: inv.program.clone(),
            hint: hint.to_string(),
        }),
    }
}

fn write_private(file: &PrivateFile) -> Result<(), BackendError> {
    // Made again before every turn: atomic, not synced.
    crate::fsutil::write_private_file_unsynced(&file.path, file.content.as_bytes()).map_err(
        |source| BackendError::Io {
            path: file.path.clone(),
            source,
        },
    )
}

/// Links every entry of the user's folder into the private one, except
/// names the invocation writes itself; links already there are kept. A
/// missing user folder links nothing.
fn mirror(m: &Mirror, written: &[PrivateFile]) -> Result<(), BackendError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BackendError::Io { path, source }
    };
    crate::fsutil::create_dir_if_missing(&m.into).map_err(io(&m.into))?;
    let Ok(entries) = std::fs::read_dir(&m.from) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let link = m.into.join(entry.file_name());
        if written.iter().any(|f| f.path == link) || link.symlink_metadata().is_ok() {
            continue;
        }
        std::os::unix::fs::symlink(entry.path(), &link).map_err(io(&link))?;
    }
    Ok(())
}
