//! `awtui mcp` hands itself over to `awtui-mcp`, the bridge built alone,
//! when that program is installed beside `awtui` (`cargo install` puts both
//! there).
//!
//! Why: a bridge runs for each agent's whole life, and its resident memory
//! is mostly the pages of the binary it maps. The bridge runs about 1 MB of
//! `awtui`'s 25 MB, spread across its code; each fault maps the page cache's
//! whole folio around it, so a bridge of the freshly installed `awtui`
//! held 8.0–8.8 MiB. `awtui-mcp` holds only the bridge's code, close
//! together (docs/figures.md, "The stdio bridge").
//!
//! The hand-over is an `exec`: same process, same pipes, same exit code
//! for the agent's CLI. It never costs the bridge: when there is no such
//! program beside `awtui` (a binary copied alone), or it cannot be run, the
//! bridge runs in `awtui` itself. A stale `awtui-mcp` of another version
//! (one binary upgraded, not the other) finds that out from the version
//! `awtui` passes and hands the bridge back to `awtui`, which then runs it
//! itself ([`IN_PROCESS_ENV`] stops a second hand-over).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::{BridgeArgs, EXIT_USAGE};

/// The bridge's own program, looked for beside the running `awtui`.
pub const BINARY: &str = "awtui-mcp";

/// The version of the `awtui` handing over; `awtui-mcp` runs the bridge
/// only when it is its own.
pub const VERSION_ENV: &str = "AWTUI_MCP_VERSION";
/// The `awtui` that handed over, to hand back to.
pub const PARENT_ENV: &str = "AWTUI_MCP_PARENT";
/// Set when the bridge must run in `awtui` itself (handed back).
pub const IN_PROCESS_ENV: &str = "AWTUI_MCP_IN_PROCESS";

/// This build's version, the one both programs must share.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The program `exe` hands over to, if it is an executable file that is a
/// program (ELF), not a folder, a special file or text: `exec` would run
/// text with the shell.
fn beside(exe: &Path) -> Option<PathBuf> {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    let lean = exe.parent()?.join(BINARY);
    let meta = std::fs::metadata(&lean).ok()?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return None;
    }
    let mut magic = [0u8; 4];
    std::fs::File::open(&lean)
        .and_then(|mut file| file.read_exact(&mut magic))
        .ok()?;
    (magic == *b"\x7fELF").then_some(lean)
}

/// Replaces this process with `program` (arguments `args`, plus `env`);
/// returns only when that failed.
fn exec(program: &Path, args: &[OsString], env: &[(&str, &OsString)]) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    let mut command = std::process::Command::new(program);
    command.args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    command.exec()
}

/// Called by `awtui` for `awtui mcp` with plainly given arguments (`args`,
/// those after `mcp`): hands the process over to `awtui-mcp` beside it.
/// Returns when it did not (none there, handed back, or it cannot run), and
/// the bridge then runs here.
pub fn hand_over(args: &[OsString]) {
    if std::env::var_os(IN_PROCESS_ENV).is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let Some(lean) = beside(&exe) else {
        return;
    };
    let version = OsString::from(VERSION);
    let parent = exe.into_os_string();
    // On failure (no exec permission after all, not a program for this
    // machine) the bridge runs here, as without `awtui-mcp`.
    let _ = exec(
        &lean,
        args,
        &[(VERSION_ENV, &version), (PARENT_ENV, &parent)],
    );
}

/// `awtui-mcp`'s whole program: the bridge, when the arguments are plainly
/// given and no other version of `awtui` handed over; otherwise back to
/// `awtui mcp`, which reads any command line (help, usage errors) and runs
/// the bridge itself.
pub fn lean_main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let handed_by_other = std::env::var_os(VERSION_ENV).is_some_and(|v| v != VERSION);
    let plain = BridgeArgs::plain(args.clone());
    let code = match plain {
        Some(plain) if !handed_by_other => super::main(plain),
        _ => hand_back(args, plain),
    };
    crate::output::flush();
    code
}

/// Runs `awtui mcp <args>` in `awtui` itself: the one that handed over, or
/// the one beside this program. When that cannot be run (gone since),
/// plainly given arguments (`plain`) are still served here rather than
/// failing the agent's CLI.
fn hand_back(args: Vec<OsString>, plain: Option<BridgeArgs>) -> ExitCode {
    let parent = std::env::var_os(PARENT_ENV).map(PathBuf::from).or_else(|| {
        let exe = std::env::current_exe().ok()?;
        Some(exe.parent()?.join("awtui"))
    });
    let Some(parent) = parent else {
        crate::errln!("awtui-mcp: cannot find awtui to run `awtui mcp`");
        return ExitCode::from(EXIT_USAGE);
    };
    let yes = OsString::from("1");
    let args: Vec<OsString> = std::iter::once(OsString::from("mcp")).chain(args).collect();
    let e = exec(&parent, &args, &[(IN_PROCESS_ENV, &yes)]);
    let Some(plain) = plain else {
        crate::errln!("awtui-mcp: cannot run {} mcp: {e}", parent.display());
        return ExitCode::from(EXIT_USAGE);
    };
    super::main(plain)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_a_runnable_file_beside_awtui_is_handed_over_to() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("awtui");
        assert_eq!(beside(&exe), None, "nothing there");
        let lean = dir.path().join(BINARY);
        std::fs::create_dir(&lean).unwrap();
        assert_eq!(beside(&exe), None, "a folder");
        std::fs::remove_dir(&lean).unwrap();
        std::fs::write(&lean, b"x").unwrap();
        std::fs::set_permissions(&lean, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(beside(&exe), None, "not executable");
        std::fs::set_permissions(&lean, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(beside(&exe), None, "text, which exec would give the shell");
        std::fs::write(&lean, b"\x7fELF and the rest").unwrap();
        assert_eq!(beside(&exe), Some(lean.clone()));
        std::fs::remove_file(&lean).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &lean).unwrap();
        assert_eq!(beside(&exe), None, "a special file");
        std::fs::remove_file(&lean).unwrap();
        std::fs::write(&lean, b"\x7fELF and the rest").unwrap();
        std::fs::set_permissions(&lean, std::fs::Permissions::from_mode(0o755)).unwrap();
        let link = dir.path().join("elsewhere");
        std::fs::create_dir(&link).unwrap();
        std::os::unix::fs::symlink(&lean, link.join(BINARY)).unwrap();
        assert_eq!(
            beside(&link.join("awtui")),
            Some(link.join(BINARY)),
            "a link to a program is that program"
        );
    }
}
