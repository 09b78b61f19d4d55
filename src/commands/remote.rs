//! What the commands that talk to a running instance share: finding it from
//! a target, connecting, and turning failures into exit codes.

use crate::errln;
use std::path::PathBuf;
use std::time::Duration;

use super::exit;
use crate::instance::control::{Client, ControlError, Reply, Request};
use crate::instance::query::InstanceStatus;
use crate::instance::registry::{self, InstanceInfo};
use crate::instance::target::{self, Resolved, Target, TargetError};

/// How long a client waits for an instance to answer a request.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// A small runtime for one client command.
pub fn runtime() -> Option<super::CommandRuntime> {
    super::runtime(false)
}

/// Every running instance, or the exit code after saying why not.
pub fn running() -> Result<Vec<InstanceInfo>, u8> {
    registry::running().map_err(|e| {
        errln!("{e}");
        exit::FAILED
    })
}

fn cwd() -> PathBuf {
    std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .unwrap_or_default()
}

/// The exit code for a target that names nothing usable.
pub fn target_failure(e: &TargetError) -> u8 {
    match e {
        TargetError::NotFound(_) => exit::NOT_RUNNING,
        TargetError::Invalid(_) | TargetError::Ambiguous(_) => exit::INVALID,
    }
}

/// The instance an `--instance NAME` option names (`NAME` or `@NAME`), or
/// the only one running, with a runtime to reach it; or the exit code
/// after saying why not. One place for the commands that take the option.
pub fn resolve_option(instance: Option<&str>) -> Result<(Resolved, super::CommandRuntime), u8> {
    let target = instance.map(|i| format!("@{}", i.trim_start_matches('@')));
    let resolved = resolve(target.as_deref())?;
    let rt = runtime().ok_or(exit::FAILED)?;
    Ok((resolved, rt))
}

/// Resolves a command-line target among the running instances, or the exit
/// code after saying why it cannot be.
pub fn resolve(text: Option<&str>) -> Result<Resolved, u8> {
    let parsed = match text.map(Target::parse).transpose() {
        Ok(t) => t,
        Err(e) => {
            errln!("{e}");
            return Err(target_failure(&e));
        }
    };
    let running = running()?;
    target::resolve(parsed.as_ref(), &running, &cwd()).map_err(|e| {
        errln!("{e}");
        target_failure(&e)
    })
}

/// The exit code for a failed connection or request.
pub fn control_failure(e: &ControlError) -> u8 {
    match e {
        ControlError::NotRunning { .. } => exit::NOT_RUNNING,
        _ => exit::FAILED,
    }
}

/// Connects to `info`, or the exit code after saying why not.
pub async fn open(info: &InstanceInfo) -> Result<Client, u8> {
    match tokio::time::timeout(ANSWER_TIMEOUT, Client::open(info)).await {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => {
            errln!("{e}");
            Err(control_failure(&e))
        }
        Err(_) => {
            errln!(
                "instance '{}' (pid {}) does not answer on {}",
                info.instance,
                info.pid,
                info.control.display()
            );
            Err(exit::FAILED)
        }
    }
}

/// Makes a request with a time limit; an error reply becomes `Err`.
pub async fn request(client: &mut Client, request: Request) -> Result<Reply, u8> {
    let instance = client.info.instance.clone();
    match tokio::time::timeout(ANSWER_TIMEOUT, client.request(request)).await {
        Ok(Ok(Reply::Error { error, .. })) => {
            errln!("instance '{instance}': {error}");
            Err(exit::FAILED)
        }
        Ok(Ok(reply)) => Ok(reply),
        Ok(Err(e)) => {
            errln!("{e}");
            Err(control_failure(&e))
        }
        Err(_) => {
            errln!("instance '{instance}' did not answer within {ANSWER_TIMEOUT:?}");
            Err(exit::FAILED)
        }
    }
}

/// Sends an engine command with a time limit and waits for its answer;
/// a failure is printed (prefixed with `what`) and becomes `Err(exit code)`.
pub async fn command(
    client: &mut Client,
    what: &str,
    command: crate::engine::Command,
) -> Result<crate::engine::Reply, u8> {
    let instance = client.info.instance.clone();
    match tokio::time::timeout(ANSWER_TIMEOUT, client.call(command)).await {
        Ok(Ok(Ok(reply))) => Ok(reply),
        Ok(Ok(Err(failed))) => {
            errln!("{what}: {failed}");
            Err(exit::FAILED)
        }
        Ok(Err(e)) => {
            errln!("{e}");
            Err(control_failure(&e))
        }
        Err(_) => {
            errln!("instance '{instance}' did not answer within {ANSWER_TIMEOUT:?}");
            Err(exit::FAILED)
        }
    }
}

/// The status of a connected instance.
pub async fn status(client: &mut Client) -> Result<InstanceStatus, u8> {
    match request(client, Request::Status).await? {
        Reply::Status { status } => Ok(*status),
        other => {
            errln!("unexpected answer: {other:?}");
            Err(exit::FAILED)
        }
    }
}
