//! `<instance>/mcp.json`: where a running instance's MCP server listens, so
//! the stdio bridge and other local clients can find it.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::fsutil::atomic_write;

/// The endpoint file's name in the instance folder (reserved: never a
/// document).
pub const ENDPOINT_FILE: &str = "mcp.json";
/// The unix socket's name in the instance folder.
pub const SOCKET_FILE: &str = "mcp.sock";
/// Longest unix socket path the platform accepts (`sun_path` minus NUL).
pub const MAX_SOCKET_PATH: usize = 107;

/// Where a running instance serves MCP.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    /// Streamable HTTP URL on loopback, such as `http://127.0.0.1:41234/mcp`.
    pub url: String,
    /// The unix socket serving the same thing, when there is one.
    pub socket: Option<PathBuf>,
    /// The serving process.
    pub pid: u32,
}

impl Endpoint {
    /// Records the endpoint in `instance_dir`.
    pub fn write(&self, instance_dir: &Path) -> io::Result<()> {
        let text = serde_json::to_vec_pretty(self).map_err(io::Error::other)?;
        atomic_write(&instance_dir.join(ENDPOINT_FILE), &text)
    }

    /// The endpoint recorded in `instance_dir`; `None` when there is none.
    pub fn read(instance_dir: &Path) -> io::Result<Option<Endpoint>> {
        match crate::fsutil::read_record(&instance_dir.join(ENDPOINT_FILE)) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Removes the endpoint file (when the server stops).
    pub fn remove(instance_dir: &Path) {
        let _ = std::fs::remove_file(instance_dir.join(ENDPOINT_FILE));
    }

    /// `host:port` of the HTTP URL.
    pub fn authority(&self) -> Option<&str> {
        let rest = self.url.split_once("://")?.1;
        Some(rest.split('/').next().unwrap_or(rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_reports_absence() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Endpoint::read(dir.path()).unwrap(), None);
        let e = Endpoint {
            url: "http://127.0.0.1:4000/mcp".into(),
            socket: Some(dir.path().join(SOCKET_FILE)),
            pid: 7,
        };
        e.write(dir.path()).unwrap();
        assert_eq!(Endpoint::read(dir.path()).unwrap(), Some(e.clone()));
        assert_eq!(e.authority(), Some("127.0.0.1:4000"));
        Endpoint::remove(dir.path());
        assert_eq!(Endpoint::read(dir.path()).unwrap(), None);
    }
}
