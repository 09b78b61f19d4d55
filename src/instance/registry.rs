//! Running instances, findable from any directory: each records itself in
//! its folder (`instance.json`) and in the per-user registry
//! (`<state dir>/instances/<name>.<hash of its folder>.json`). Two instances
//! may share a name when they run from different folders; commands then ask
//! which one is meant (see [`super::target`]).
//!
//! A recorded instance counts as running only when its process is alive
//! (not a zombie) and its control socket answers, or, when the socket does
//! not answer, its lock is still held (a busy or starting instance). Records
//! of anything else are stale: they are removed when found, never shown.

use std::io;
use std::path::{Path, PathBuf};

use super::layout::{self, INSTANCE_FILE, LayoutError};
use super::lock;
use super::process::process_alive;
use crate::fsutil::atomic_write;
pub use crate::vocab::instances::InstanceInfo;

/// The file that records `info` in the registry.
fn registry_name(info: &InstanceInfo) -> String {
    format!("{}.{}.json", info.instance, layout::path_hash(&info.home))
}

/// Why the registry could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// No state dir.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// A record could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The record.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
}

/// Records a running instance in the registry, then in its folder: the
/// folder's record is what a starting parent waits for, so once it is there
/// every command can find the instance.
pub fn register(info: &InstanceInfo) -> Result<(), RegistryError> {
    let text = serde_json::to_vec_pretty(info).unwrap_or_default();
    // The pointer for readers with less environment first: a missing one
    // only costs them the instance, so it may fail with a warning.
    if let Some(pointers) = layout::pointer_registry_dir() {
        let written = layout::private_dir(&pointers)
            .map_err(|e| e.to_string())
            .and_then(|d| {
                atomic_write(&d.join(registry_name(info)), &text).map_err(|e| e.to_string())
            });
        if let Err(e) = written {
            tracing::warn!("cannot record the instance in {}: {e}", pointers.display());
        }
    }
    let dir = layout::private_dir(&layout::registry_dir()?)?;
    for path in [dir.join(registry_name(info)), info.home.join(INSTANCE_FILE)] {
        atomic_write(&path, &text).map_err(|source| RegistryError::Write { path, source })?;
    }
    Ok(())
}

/// Removes the records of an instance that stops.
pub fn unregister(info: &InstanceInfo) {
    for dir in layout::registry_dir()
        .ok()
        .into_iter()
        .chain(layout::pointer_registry_dir())
    {
        let _ = std::fs::remove_file(dir.join(registry_name(info)));
    }
    let _ = std::fs::remove_file(info.home.join(INSTANCE_FILE));
}

/// The record of the instance in folder `home`, if any (running or not).
///
/// `instance.json` lies in the instance folder, in reach of every agent's
/// file tools, and its fields are paths awtui acts on: the control socket
/// a client hands the admin token to, the token file, the MCP URL a bridge
/// hands an agent's token to, the state dir tokens are read from, the pid
/// a screen signals. So the folder's copy only says where to look: the
/// record returned is the same instance's copy in a private registry
/// ([`layout::registry_dirs`]), for this very folder and pid. A folder
/// record with no such copy is not believed.
pub fn read_home(home: &Path) -> Option<InstanceInfo> {
    let bytes = crate::fsutil::read_record(&home.join(INSTANCE_FILE)).ok()?;
    let claimed: InstanceInfo = serde_json::from_slice(&bytes).ok()?;
    let name = registry_name(&claimed);
    let here = std::fs::canonicalize(home).ok();
    layout::registry_dirs()
        .into_iter()
        .chain(layout::pointer_registry_dir())
        .find_map(|dir| {
            let bytes = crate::fsutil::read_record(&dir.join(&name)).ok()?;
            let record: InstanceInfo = serde_json::from_slice(&bytes).ok()?;
            let same_folder = record.home == home
                || (here.is_some() && std::fs::canonicalize(&record.home).ok() == here);
            (same_folder && record.pid == claimed.pid).then_some(record)
        })
}

/// Whether the recorded instance is running (see the module doc).
pub fn is_running(info: &InstanceInfo) -> bool {
    if !process_alive(info.pid) {
        return false;
    }
    if std::os::unix::net::UnixStream::connect(&info.control).is_ok() {
        return true;
    }
    lock::is_held(&info.home) && read_home(&info.home).is_some_and(|i| i.pid == info.pid)
}

/// Every running instance on this machine (for this user), oldest first,
/// from every registry an instance may have used ([`layout::registry_dirs`]).
/// Stale records are removed on the way; anything in a registry that is not
/// a regular file under [`crate::fsutil::MAX_RECORD_BYTES`] (a FIFO, a link
/// to a device) is skipped with a warning naming it, never read or removed.
pub fn running() -> Result<Vec<InstanceInfo>, RegistryError> {
    let mut found: Vec<InstanceInfo> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for dir in layout::registry_dirs() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let info = match crate::fsutil::read_record(&path) {
                Ok(bytes) => serde_json::from_slice::<InstanceInfo>(&bytes).ok(),
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => {
                    tracing::warn!("registry: skipped: {e}");
                    continue;
                }
            };
            match info {
                Some(info) if is_running(&info) => {
                    if seen.insert((info.home.clone(), info.pid)) {
                        found.push(info);
                    }
                }
                Some(info) => {
                    let _ = std::fs::remove_file(&path);
                    // The folder's record too, unless a newer instance wrote it.
                    if read_home(&info.home).is_some_and(|i| i.pid == info.pid) {
                        let _ = std::fs::remove_file(info.home.join(INSTANCE_FILE));
                    }
                }
                None => {
                    // A half-written record is never left by atomic writes;
                    // a regular file here that is no record is not ours to keep.
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
    }
    found.sort_by(|a, b| a.started.cmp(&b.started).then(a.instance.cmp(&b.instance)));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    #[test]
    fn sources_and_addresses() {
        let mut info = InstanceInfo {
            instance: "pr-1".into(),
            workflow_name: "review".into(),
            workflow: "/w/review.yaml".into(),
            workdir: "/w".into(),
            home: "/w/.workflow/pr-1".into(),
            pid: 1,
            mode: "start".into(),
            standalone: false,
            agents: vec!["coder".into()],
            control: "/w/.workflow/pr-1/control.sock".into(),
            token_file: "/w/.workflow/pr-1/control.token".into(),
            mcp_url: "http://127.0.0.1:1/mcp".into(),
            mcp_socket: None,
            log: None,
            state_dir: None,
            started: Utc::now(),
        };
        assert_eq!(info.source(), "review.yaml");
        assert_eq!(info.address("coder"), "coder@pr-1");
        info.standalone = true;
        info.instance = "coder".into();
        assert_eq!(info.source(), "(standalone)");
        assert_eq!(info.address("coder"), "coder");
    }
}
