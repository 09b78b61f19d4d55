//! Where an instance keeps its own files, and where the per-user state
//! lives, so every command finds the same places from any directory.
//!
//! - An instance with a file context lives in its context folder
//!   (`.workflow/<instance>/` by default): `instance.json`, `instance.lock`,
//!   `control.sock`, `control.token` and `awtui.log` sit next to the channel.
//! - An instance whose context is in memory or disabled has no such folder;
//!   its files go to `<state dir>/volatile/<instance>-<hash of the workflow
//!   file>/`.
//! - The per-user state dir is `$AWTUI_STATE_DIR` when set (tests use it),
//!   else `$XDG_RUNTIME_DIR/awtui`, else `~/.local/state/awtui`. It holds the
//!   registry of running instances. Standalone agents (`awtui new`) are kept
//!   in the data dir: `$AWTUI_STATE_DIR` again, else `$XDG_STATE_HOME/awtui`
//!   or `~/.local/state/awtui` (not the runtime dir, which is wiped at
//!   logout).
//! - Finding instances needs none of those variables: MCP clients and cron
//!   start awtui with little more than HOME, PATH and USER. Readers look in
//!   every state dir awtui may have used ([`state_dirs`]: the runtime dir
//!   named by `$XDG_RUNTIME_DIR` or `/run/user/<uid>`, `$XDG_STATE_HOME`,
//!   `~/.local/state`), and an instance whose state dir is elsewhere
//!   (`$AWTUI_STATE_DIR`) also leaves its registry record, which holds no
//!   secret, in `~/.local/state/awtui/instances` ([`pointer_registry_dir`]).
//!   Only a reader that sets `$AWTUI_STATE_DIR` itself looks there alone.

use std::path::{Path, PathBuf};

use crate::fsutil;

/// The instance's record of itself (reserved: never a document).
pub const INSTANCE_FILE: &str = "instance.json";
/// The pause record's name in the instance folder when there is no per-user
/// data dir to keep it in.
pub const PAUSE_FILE: &str = "pause.json";
/// The lock held by the one engine serving the instance.
pub const LOCK_FILE: &str = "instance.lock";
/// The control endpoint (unix socket).
pub const CONTROL_SOCKET: &str = "control.sock";
/// The admin token for the control endpoint (0600).
pub const CONTROL_TOKEN: &str = "control.token";
/// Where a background instance writes its output.
pub const LOG_FILE: &str = "awtui.log";
/// Overrides every per-user folder (registry, sockets, standalone agents).
pub const STATE_DIR_ENV: &str = "AWTUI_STATE_DIR";

/// Longest unix socket path the platform accepts (`sun_path` minus NUL).
const MAX_SOCKET_PATH: usize = 107;

/// Why a folder could not be found or made.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// No `$AWTUI_STATE_DIR`, `$XDG_RUNTIME_DIR` or `$HOME`.
    #[error("cannot find a folder for awtui's state: set AWTUI_STATE_DIR or HOME")]
    NoStateDir,
    /// A private folder could not be created or used.
    #[error(transparent)]
    Private(#[from] fsutil::PrivateDirError),
}

fn env_dir(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn local_state() -> Option<PathBuf> {
    env_dir("XDG_STATE_HOME")
        .or_else(|| env_dir("HOME").map(|h| h.join(".local").join("state")))
        .map(|d| d.join("awtui"))
}

/// The per-user folder of running things: the registry and fallback sockets.
pub fn state_dir() -> Result<PathBuf, LayoutError> {
    env_dir(STATE_DIR_ENV)
        .or_else(|| env_dir("XDG_RUNTIME_DIR").map(|d| d.join("awtui")))
        .or_else(local_state)
        .ok_or(LayoutError::NoStateDir)
}

/// The state dir a reader finds with nothing but `$HOME`.
fn home_state() -> Option<PathBuf> {
    env_dir("HOME").map(|h| h.join(".local").join("state").join("awtui"))
}

/// Every state dir an instance of this user may have used, the one this
/// process would use first, without duplicates (see the module doc).
pub fn state_dirs() -> Vec<PathBuf> {
    if let Some(dir) = env_dir(STATE_DIR_ENV) {
        return vec![dir];
    }
    let uid = rustix::process::getuid().as_raw();
    let candidates = [
        state_dir().ok(),
        env_dir("XDG_RUNTIME_DIR").map(|d| d.join("awtui")),
        Some(PathBuf::from(format!("/run/user/{uid}/awtui"))),
        local_state(),
        home_state(),
    ];
    let mut dirs: Vec<PathBuf> = Vec::new();
    for dir in candidates.into_iter().flatten() {
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}

/// Where an instance whose state dir a reader with only `$HOME` would not
/// look in also records itself; `None` when [`state_dir`] is that place.
pub fn pointer_registry_dir() -> Option<PathBuf> {
    let home = home_state()?;
    let own = state_dir().ok()?;
    let readers_look = state_dirs_without_override();
    (own != home && !readers_look.contains(&own))
        .then(|| fsutil::private_location(&home.join("instances")))
}

/// The dirs a reader without `$AWTUI_STATE_DIR` looks in, whatever this
/// process's own variables say, except the ones only it can know.
fn state_dirs_without_override() -> Vec<PathBuf> {
    let uid = rustix::process::getuid().as_raw();
    [
        Some(PathBuf::from(format!("/run/user/{uid}/awtui"))),
        home_state(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Every registry folder [`state_dirs`] holds.
pub fn registry_dirs() -> Vec<PathBuf> {
    state_dirs()
        .iter()
        .map(|d| fsutil::private_location(&d.join("instances")))
        .collect()
}

/// The per-user folder of lasting things: standalone agents.
pub fn data_dir() -> Result<PathBuf, LayoutError> {
    env_dir(STATE_DIR_ENV)
        .or_else(local_state)
        .ok_or(LayoutError::NoStateDir)
}

/// The registry folder: one file per running instance (its private
/// subfolder when the folder is open to others, see [`private_dir`]).
pub fn registry_dir() -> Result<PathBuf, LayoutError> {
    Ok(fsutil::private_location(&state_dir()?.join("instances")))
}

/// Where standalone agents (`awtui new`) are kept, one folder each (its
/// private subfolder when the folder is open to others).
pub fn standalone_root() -> Result<PathBuf, LayoutError> {
    Ok(fsutil::private_location(&data_dir()?.join("standalone")))
}

/// A stable 64-bit hash (FNV-1a) of a path, to name files after folders.
pub fn path_hash(path: &Path) -> String {
    crate::fsutil::stable_hash(path.as_os_str().as_encoded_bytes())
}

/// Makes `path` ready for private files and returns the folder to put them
/// in: `path` itself, created 0700 when missing, or, when it exists and
/// others can write to it, a private subfolder ([`fsutil::private_dir`]).
/// The mode of an existing folder is never changed.
pub fn private_dir(path: &Path) -> Result<PathBuf, LayoutError> {
    Ok(fsutil::private_dir(path)?)
}

/// Where the control endpoint's admin token goes: in the per-user state
/// dir beside the agents' tokens (`<state dir>/control/<hash of the
/// instance folder>.token`), never in the instance folder, which sits in
/// the workspace agents work in; the token decides approvals, so no
/// agent's file tools may come across it. A token an older awtui left in
/// the instance folder is removed. Without a state dir (no `$HOME`) it
/// stays in the instance's private folder.
pub fn control_token(home: &Path, private: &Path) -> Result<PathBuf, LayoutError> {
    let legacy = private.join(CONTROL_TOKEN);
    if std::fs::symlink_metadata(&legacy).is_ok_and(|m| m.is_file()) {
        let _ = std::fs::remove_file(&legacy);
    }
    let Ok(state) = state_dir() else {
        return Ok(legacy);
    };
    let dir = private_dir(&state.join("control"))?;
    Ok(dir.join(format!("{}.token", path_hash(home))))
}

/// Where an instance's approvals journal goes: in the per-user data dir
/// (`<data dir>/approvals/<hash of the instance folder>.jsonl`), which
/// outlives a logout, never in the instance folder: the journal's
/// "always" lines let calls through without asking, and the instance
/// folder is in reach of every agent's file tools (awtui's documents
/// included). Without a data dir (no `$HOME`) it stays in the instance
/// folder.
pub fn approvals_journal(home: &Path) -> Result<PathBuf, LayoutError> {
    kept_for_instance(
        home,
        "approvals",
        "jsonl",
        crate::approvals::journal::APPROVALS_FILE,
    )
}

/// Where an instance's channel seal key goes: in the per-user data dir
/// (`<data dir>/channel-keys/<hash of the instance folder>.key`), beside
/// the approvals journal and for the same reason: the instance folder is
/// in reach of every agent's file tools, and whoever holds the key can
/// write lines the channel accepts as awtui's ([`crate::context::seal`]).
/// Without a data dir (no `$HOME`) it stays in the instance folder.
pub fn channel_key(home: &Path) -> Result<PathBuf, LayoutError> {
    kept_for_instance(
        home,
        "channel-keys",
        "key",
        crate::context::file_store::CHANNEL_KEY_FILE,
    )
}

/// Where an instance's pause is kept (the loop guard's or a budget's):
/// in the per-user data dir (`<data dir>/pauses/<hash of the instance
/// folder>.json`), beside the channel's seal key: an agent whose file
/// tools reach the instance folder must not end a pause by deleting a
/// file (a pause exists to stop paying for agents that keep each other
/// busy). Without a data dir (no `$HOME`) it stays in the instance folder.
pub fn pause_record(home: &Path) -> Result<PathBuf, LayoutError> {
    kept_for_instance(home, "pauses", "json", PAUSE_FILE)
}

/// Where the agents the person added to an instance are kept
/// (`<data dir>/added-agents/<hash of the instance folder>.json`), never
/// in the instance folder: an agent that could write it would choose its
/// teammates, their backends and where they work. Without a data dir (no
/// `$HOME`) there is no such place, and agents cannot be added: unlike
/// the other kept files it never falls back to the instance folder.
pub fn added_agents(home: &Path) -> Result<PathBuf, LayoutError> {
    data_dir()?;
    kept_for_instance(home, "added-agents", "json", "")
}

/// A file kept for the instance in `home` outside every workspace:
/// `<data dir>/<folder>/<hash of the instance folder>.<ext>`, the folder
/// private; `fallback` in the instance folder without a data dir.
fn kept_for_instance(
    home: &Path,
    folder: &str,
    ext: &str,
    fallback: &str,
) -> Result<PathBuf, LayoutError> {
    let Ok(data) = data_dir() else {
        return Ok(home.join(fallback));
    };
    let dir = private_dir(&data.join(folder))?;
    let home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    Ok(dir.join(format!("{}.{ext}", path_hash(&home))))
}

/// Where the control socket goes: in the instance folder, or under the
/// state dir when that path is too long for a unix socket.
pub fn control_socket(home: &Path) -> Result<PathBuf, LayoutError> {
    let path = home.join(CONTROL_SOCKET);
    if path.as_os_str().len() <= MAX_SOCKET_PATH {
        return Ok(path);
    }
    let dir = private_dir(&state_dir()?.join("sockets"))?;
    Ok(dir.join(format!("{}.sock", path_hash(home))))
}

/// Where the user's config file (`config.toml`: keys, colours, the
/// webhook) is looked for; the sandbox hides it from agents.
pub fn user_config_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("awtui").join("config.toml"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_stable_and_differ() {
        assert_eq!(path_hash(Path::new("/a")), path_hash(Path::new("/a")));
        assert_ne!(path_hash(Path::new("/a")), path_hash(Path::new("/b")));
        assert_eq!(path_hash(Path::new("")), "cbf29ce484222325");
    }

    #[test]
    fn short_homes_keep_their_socket() {
        let short = Path::new("/tmp/i");
        assert_eq!(control_socket(short).unwrap(), short.join(CONTROL_SOCKET));
    }
}
