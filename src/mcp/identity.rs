//! Who is calling: one random secret token per participant, made when the
//! instance starts. The token travels as `Authorization: Bearer <token>`
//! and is the only thing that names the caller; a header anyone can set
//! (a name, a session id) never does.
//!
//! Tokens are kept in memory and, for instances with a folder, in files
//! readable only by their owner (0600), so the stdio bridge can find them.
//! Those files live outside the workspace the agents work in, in the
//! per-user state dir (`<state dir>/tokens/<hash of the instance
//! folder>/<agent>`): no CLI's file-attach feature (gemini's `@name`) or
//! file tool wandering the project can pick them up.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::context::mentions;
use crate::fsutil;

/// Folder of the token files inside an instance folder (a reserved name,
/// never a document).
pub const TOKENS_DIR: &str = "tokens";
/// Environment variable that carries an agent's token to its process.
pub const TOKEN_ENV: &str = "AWTUI_TOKEN";

/// Errors making, storing or finding tokens.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// The OS random source failed.
    #[error(transparent)]
    Random(#[from] crate::secrets::RandomError),
    /// A name that cannot be a file name or a mention.
    #[error("'{0}' cannot have a token: it is not a valid agent name")]
    BadName(String),
    /// The token folder could not be made private.
    #[error(transparent)]
    Private(#[from] fsutil::PrivateDirError),
    /// Reading or writing a token file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder concerned.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
}

/// The caller of a request, as established by its token. Inserted into the
/// HTTP request's extensions by the transport; read by the tool handler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller(pub String);

/// Each participant's secret token.
#[derive(Clone, PartialEq, Eq)]
pub struct Tokens {
    by_agent: BTreeMap<String, String>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print secrets.
        f.debug_struct("Tokens")
            .field("agents", &self.by_agent.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// A new token, registered with [`crate::secrets`] (it lives there, below
/// every server, so the stores can make keys without importing this one).
pub fn new_token() -> Result<String, IdentityError> {
    Ok(crate::secrets::new_token()?)
}

/// Compares without stopping at the first difference, so response times
/// do not reveal how much of a guessed token was right.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Tokens {
    /// Fresh tokens for `agents` and for `user` (the person at the keyboard).
    pub fn generate(agents: &[String]) -> Result<Tokens, IdentityError> {
        let mut by_agent = BTreeMap::new();
        for name in agents.iter().map(String::as_str).chain([mentions::USER]) {
            if !mentions::is_valid_name(name) {
                return Err(IdentityError::BadName(name.to_string()));
            }
            by_agent.insert(name.to_string(), new_token()?);
        }
        Ok(Tokens { by_agent })
    }

    /// The participant a token belongs to.
    pub fn identify(&self, token: &str) -> Option<&str> {
        // Check every token so the time taken does not depend on which one
        // matched.
        let mut found = None;
        for (agent, t) in &self.by_agent {
            if same(t.as_bytes(), token.as_bytes()) {
                found = Some(agent.as_str());
            }
        }
        found
    }

    /// `agent`'s token.
    pub fn get(&self, agent: &str) -> Option<&str> {
        self.by_agent.get(agent).map(String::as_str)
    }

    /// Every participant with a token, sorted.
    pub fn agents(&self) -> impl Iterator<Item = &str> {
        self.by_agent.keys().map(String::as_str)
    }

    /// Writes one 0600 file per participant in [`tokens_dir`] (made 0700)
    /// and removes token files of anyone else, and those an older awtui
    /// left inside the instance folder.
    pub fn write_files(&self, instance_dir: &Path) -> Result<(), IdentityError> {
        remove_legacy_files(instance_dir);
        let dir = match tokens_root() {
            Some(root) => {
                let root = fsutil::private_dir(&root)?;
                fsutil::private_dir(&root.join(instance_key(instance_dir)))?
            }
            None => fsutil::private_dir(&instance_dir.join(TOKENS_DIR))?,
        };
        let io_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| IdentityError::Io { path, source }
        };
        for entry in fs::read_dir(&dir).map_err(io_err(&dir))? {
            let entry = entry.map_err(io_err(&dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if !self.by_agent.contains_key(&name) {
                let _ = fs::remove_file(entry.path());
            }
        }
        for (agent, token) in &self.by_agent {
            let path = dir.join(agent);
            fsutil::write_private_file(&path, token.as_bytes()).map_err(io_err(&path))?;
        }
        Ok(())
    }

    /// Removes the token files written by [`Tokens::write_files`].
    pub fn remove_files(&self, instance_dir: &Path) {
        let dir = tokens_dir(instance_dir);
        for agent in self.by_agent.keys() {
            let _ = fs::remove_file(dir.join(agent));
        }
        let _ = fs::remove_dir(dir);
    }
}

/// Reads `agent`'s token from an instance folder. The tokens are where
/// this process's environment says; when they are not, in the state dir
/// the instance recorded for itself (`instance.json`, no secret), then in
/// every state dir awtui may have used: an MCP client that starts
/// `awtui mcp` with only HOME and PATH still finds them.
pub fn read_token_file(instance_dir: &Path, agent: &str) -> Result<String, IdentityError> {
    if !mentions::is_valid_name(agent) {
        return Err(IdentityError::BadName(agent.to_string()));
    }
    let key = instance_key(instance_dir);
    let recorded = crate::instance::registry::read_home(instance_dir).and_then(|i| i.state_dir);
    let elsewhere = recorded
        .into_iter()
        .chain(crate::instance::layout::state_dirs())
        .map(|d| fsutil::private_location(&d.join(TOKENS_DIR)).join(&key));
    let path = tokens_dir(instance_dir).join(agent);
    let first = fsutil::read_record_text(&path);
    let first_err = match first {
        Ok(t) => return Ok(t.trim().to_string()),
        Err(e) => e,
    };
    if first_err.kind() == std::io::ErrorKind::NotFound {
        for dir in elsewhere {
            if let Ok(t) = fsutil::read_record_text(&dir.join(agent)) {
                return Ok(t.trim().to_string());
            }
        }
    }
    Err(IdentityError::Io {
        path,
        source: first_err,
    })
}

/// `<state dir>/tokens`, when there is a per-user state dir.
fn tokens_root() -> Option<PathBuf> {
    crate::instance::layout::state_dir()
        .ok()
        .map(|d| d.join(TOKENS_DIR))
}

/// Names an instance folder in the tokens root: the hash of its real path,
/// so the bridge finds the same folder whichever way it names the instance.
fn instance_key(instance_dir: &Path) -> String {
    let real = fs::canonicalize(instance_dir).unwrap_or_else(|_| instance_dir.to_path_buf());
    crate::instance::layout::path_hash(&real)
}

/// Removes `<instance>/tokens/*` written by awtui before tokens moved out
/// of the workspace (best effort; nothing else there is touched).
fn remove_legacy_files(instance_dir: &Path) {
    let legacy = fsutil::private_location(&instance_dir.join(TOKENS_DIR));
    if let Ok(entries) = fs::read_dir(&legacy) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_file())
                && mentions::is_valid_name(&entry.file_name().to_string_lossy())
            {
                let _ = fs::remove_file(entry.path());
            }
        }
        let _ = fs::remove_dir(&legacy);
    }
}

/// Where an instance's token files are: in the per-user state dir, outside
/// the workspace (see the module doc), or `<instance>/tokens` when there is
/// no state dir at all (no `$HOME`). A folder others can write to is
/// replaced by its private subfolder ([`fsutil::private_location`]).
pub fn tokens_dir(instance_dir: &Path) -> PathBuf {
    match tokens_root() {
        Some(root) => fsutil::private_location(&root).join(instance_key(instance_dir)),
        None => fsutil::private_location(&instance_dir.join(TOKENS_DIR)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_hex_and_identify_their_owner() {
        let t = Tokens::generate(&["coder".into(), "reviewer".into()]).unwrap();
        let coder = t.get("coder").unwrap();
        assert_eq!(coder.len(), 64);
        assert!(coder.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(coder, t.get("reviewer").unwrap());
        assert_eq!(t.identify(coder), Some("coder"));
        assert_eq!(t.identify(t.get("user").unwrap()), Some("user"));
        assert_eq!(t.identify("nope"), None);
        assert_eq!(t.identify(""), None);
        assert!(!format!("{t:?}").contains(coder));
        assert!(Tokens::generate(&["bad name".into()]).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn token_files_are_private_and_stale_ones_removed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        // A token an older awtui left in the workspace goes.
        fs::create_dir(dir.path().join("tokens")).unwrap();
        fs::write(dir.path().join("tokens/user"), "old secret").unwrap();
        let old = Tokens::generate(&["gone".into()]).unwrap();
        old.write_files(dir.path()).unwrap();
        let t = Tokens::generate(&["coder".into()]).unwrap();
        t.write_files(dir.path()).unwrap();
        let folder = tokens_dir(dir.path());
        assert!(
            !folder.starts_with(dir.path()),
            "tokens outside the instance"
        );
        assert!(!dir.path().join("tokens").exists());
        let file = folder.join("coder");
        assert_eq!(
            fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            fs::metadata(&folder).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert_eq!(
            read_token_file(dir.path(), "coder").unwrap(),
            t.get("coder").unwrap()
        );
        assert!(!folder.join("gone").exists());
        t.remove_files(dir.path());
        assert!(!folder.exists());
    }
}
