//! Background instances (`awtui start --background`). The binary re-runs
//! itself with a hidden flag rather than forking a process that already
//! runs tokio: the child starts its own session (`setsid`, so closing the
//! terminal does not stop it), writes its output to `<home>/awtui.log`, and
//! serves the instance. The parent waits until the child has registered
//! and its control socket answers, then reports its pid; if the child
//! exits first, the parent shows what it wrote and exits with its code.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::layout::{self, LOG_FILE, LayoutError};
use super::registry::{self, InstanceInfo};

/// The hidden flag that makes `awtui start` the detached child.
pub const CHILD_FLAG: &str = "--daemon-child";
/// How often the parent looks for the child's registration.
const POLL: Duration = Duration::from_millis(50);

/// A background instance that is up.
#[derive(Clone, Debug)]
pub struct Detached {
    /// Its record.
    pub info: InstanceInfo,
    /// Its log file.
    pub log: PathBuf,
}

/// Why the background instance is not up.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The instance folder could not be made.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// The log could not be opened or the binary could not be run.
    #[error("cannot start the background instance: {0}")]
    Spawn(std::io::Error),
    /// The child exited before it was up.
    #[error("the background instance exited{}{}", .code.map(|c| format!(" with code {c}")).unwrap_or_default(), output_suffix(.output))]
    Exited {
        /// Its exit code.
        code: Option<i32>,
        /// What it wrote to its log meanwhile.
        output: String,
    },
    /// It is still starting after the wait (setup can be slow); it keeps
    /// running.
    #[error("the background instance (pid {pid}) is still starting after {waited:?}; follow {}", .log.display())]
    Slow {
        /// Its process.
        pid: u32,
        /// How long the parent waited.
        waited: Duration,
        /// Its log.
        log: PathBuf,
    },
}

fn output_suffix(output: &str) -> String {
    let t = output.trim_end();
    if t.is_empty() {
        String::new()
    } else {
        format!(":\n{t}")
    }
}

/// Runs `awtui <args> --daemon-child` detached, logging to `<home>/awtui.log`,
/// and waits up to `wait` until it serves the instance in `home`.
pub fn spawn(args: &[OsString], home: &Path, wait: Duration) -> Result<Detached, DaemonError> {
    layout::private_dir(home)?;
    let log_path = home.join(LOG_FILE);
    let log = crate::fsutil::open_log(&log_path).map_err(DaemonError::Spawn)?;
    let offset = log.metadata().map(|m| m.len()).unwrap_or(0);
    let exe = std::env::current_exe().map_err(DaemonError::Spawn)?;
    let mut child = Command::new(exe)
        .args(args)
        .arg(CHILD_FLAG)
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(DaemonError::Spawn)?)
        .stderr(log)
        .spawn()
        .map_err(DaemonError::Spawn)?;
    let pid = child.id();
    let started = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(DaemonError::Exited {
                code: status.code(),
                output: read_from(&log_path, offset),
            });
        }
        if let Some(info) = registry::read_home(home)
            && info.pid == pid
            && std::os::unix::net::UnixStream::connect(&info.control).is_ok()
        {
            return Ok(Detached {
                info,
                log: log_path,
            });
        }
        if started.elapsed() > wait {
            return Err(DaemonError::Slow {
                pid,
                waited: wait,
                log: log_path,
            });
        }
        std::thread::sleep(POLL);
    }
}

fn read_from(path: &Path, offset: u64) -> String {
    // A log of a lifetime is not read whole: its last mebibyte says why.
    crate::fsutil::read_tail(path, offset, crate::fsutil::MIB)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// In the child: leaves the parent's session and terminal, so hang-ups and
/// Ctrl-C in the starting terminal do not reach the instance.
pub fn detach() -> std::io::Result<()> {
    rustix::process::setsid()
        .map(drop)
        .map_err(std::io::Error::from)
}
