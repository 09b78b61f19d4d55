//! Runs one of awtui's own subcommands (`stop @name`, `start <file>
//! --background`) as a child process with its output captured: the screen
//! stops and starts instances exactly as the command line does, and
//! nothing is printed over it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The other running instances as the control room sees them: found in the
/// registry and stopped with `awtui stop`, here in the commands layer (the
/// screen itself reads no registry and starts no process).
pub fn neighbours() -> crate::tui::Neighbours {
    crate::tui::Neighbours {
        running: Arc::new(|| {
            crate::instance::registry::running()
                .unwrap_or_default()
                .into_iter()
                .filter(|i| !i.standalone)
                .map(|i| (i.instance, i.workdir))
                .collect()
        }),
        stop: Arc::new(|name: String, dir: PathBuf| {
            Box::pin(async move { awtui(&["stop".to_string(), format!("@{name}")], &dir).await })
        }),
    }
}

/// Runs `awtui <args>` in `dir`; its last line of output on success, its
/// error output (or why it could not run) on failure. Sanitized.
pub async fn awtui(args: &[String], dir: &Path) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the awtui binary: {e}"))?;
    let out = tokio::process::Command::new(&exe)
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(false)
        .output()
        .await
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let last = |bytes: &[u8]| {
        let text = crate::sanitize::for_terminal(&String::from_utf8_lossy(bytes));
        text.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .to_string()
    };
    if out.status.success() {
        Ok(last(&out.stdout))
    } else {
        let err = last(&out.stderr);
        Err(if err.is_empty() {
            format!("awtui {} failed ({})", args.join(" "), out.status)
        } else {
            err
        })
    }
}
