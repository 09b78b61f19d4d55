//! awtui's own log, `awtui.log` in the instance folder: the control room and
//! the headless hosts (`run`, `start`, in the foreground or the background)
//! all log there, never to the terminal, so warnings from the engine, the
//! MCP server or the file watcher are kept wherever the instance runs.
//!
//! awtui's own news is logged at info, the libraries' (rmcp is chatty) at
//! warn. Lines are sanitized like everything awtui prints (people read the
//! log with `tail -f`), and a panic is logged too, so a crash leaves a trace
//! next to the instance even when its terminal or pipe is gone.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::{Mutex, Once};

use crate::sanitize::for_terminal;

/// A log file whose lines carry no escape sequences, control characters or
/// tokens ([`crate::secrets`]).
struct SanitizedFile(File);

impl Write for SanitizedFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let line = crate::secrets::redact_bytes(buf);
        self.0
            .write_all(for_terminal(&String::from_utf8_lossy(&line)).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Sends this process's tracing output to `path` (appended, created 0600)
/// and logs panics there. Only the first call in a process takes effect.
pub fn to_file(path: &Path) -> io::Result<()> {
    // The instance folder may not exist yet: it is made 0700 here as when
    // the instance claims it. The log is the user's alone and never written
    // through a link (it may sit in the shared temp folder).
    if let Some(parent) = path.parent() {
        crate::fsutil::create_dir_if_missing(parent)?;
    }
    let file = crate::fsutil::open_log(path)?;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = tracing_subscriber::filter::Targets::new()
        .with_target("awtui", tracing::Level::INFO)
        .with_default(tracing::Level::WARN);
    let installed = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(Mutex::new(SanitizedFile(file)))
                .with_ansi(false),
        )
        .with(filter)
        .try_init()
        .is_ok();
    if installed {
        log_panics();
    }
    Ok(())
}

/// Logs every panic before the previous hook (the default message, or the
/// control room's terminal restore installed later) runs.
fn log_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            tracing::error!("awtui panicked: {info}");
            previous(info);
        }));
    });
}
