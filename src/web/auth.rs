//! Who may talk to `awtui web`: the per-user secret (kept 0600 in the data
//! dir, outside every workspace, rotated by `--new-token`), the cookie it
//! is exchanged for, the Host check against DNS rebinding and the CSRF
//! rules for requests that change something.
//!
//! - Every request carries the secret in the `awtui_web` cookie (HttpOnly,
//!   SameSite=Strict), set when the address printed by `awtui web`
//!   (`/?token=…`) is first opened; that visit is redirected to `/` so the
//!   token leaves the address bar and the history.
//! - A request whose `Host` is not one of the server's own addresses is
//!   refused before anything else: a rebound DNS name pointing at loopback
//!   never reaches the API.
//! - A request that changes something (POST) also needs the per-process
//!   CSRF value in `X-Awtui-Csrf` (only the page's own script can read it,
//!   from `/api/session`), a JSON content type, and no foreign `Origin`.

use std::path::PathBuf;

use axum::http::{HeaderMap, header};

use crate::instance::layout;

/// The cookie holding the secret.
pub const COOKIE: &str = "awtui_web";
/// The header a state-changing request repeats the CSRF value in.
pub const CSRF_HEADER: &str = "x-awtui-csrf";

/// Why the secret could not be read or made.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// No data dir (no `$HOME`, no `$AWTUI_STATE_DIR`).
    #[error(transparent)]
    Layout(#[from] layout::LayoutError),
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The token file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// No random bytes.
    #[error(transparent)]
    Random(#[from] crate::mcp::identity::IdentityError),
}

/// Where the web secret lives: `<data dir>/web/token` (the data dir is
/// `$AWTUI_STATE_DIR`, else `$XDG_STATE_HOME/awtui` or
/// `~/.local/state/awtui`), never in a workspace.
pub fn token_path() -> Result<PathBuf, SecretError> {
    let dir = layout::private_dir(&layout::data_dir()?.join("web"))?;
    Ok(dir.join("token"))
}

/// Whether `text` has the shape of a token awtui makes.
fn well_formed(text: &str) -> bool {
    text.len() == crate::secrets::TOKEN_LEN && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The user's web secret: the one on disk, or a new one (written 0600)
/// when there is none, it is malformed, or `rotate` asks for a new one.
pub fn load_or_create(rotate: bool) -> Result<String, SecretError> {
    let path = token_path()?;
    if !rotate {
        match crate::fsutil::read_record_text(&path) {
            Ok(text) if well_formed(text.trim()) => {
                let token = text.trim().to_string();
                crate::secrets::register(&token);
                return Ok(token);
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(SecretError::Io { path, source }),
        }
    }
    let token = crate::mcp::identity::new_token()?;
    crate::fsutil::write_private_file(&path, format!("{token}\n").as_bytes())
        .map_err(|source| SecretError::Io { path, source })?;
    Ok(token)
}

/// Compares without stopping at the first difference.
pub fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The secret as last read, and where it is kept: `awtui web --new-token`
/// in another process rotates it for a server already running too.
#[derive(Debug)]
struct Secret {
    /// The token file (`None`: the token given is the only one).
    path: Option<PathBuf>,
    /// The token and the file's modification time when it was read.
    current: std::sync::Mutex<(String, Option<std::time::SystemTime>)>,
}

impl Secret {
    /// The token now: re-read when the file changed (one `stat` a check).
    fn get(&self) -> String {
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(path) = &self.path {
            let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
            if modified.is_some() && modified != current.1 {
                if let Ok(text) = crate::fsutil::read_record_text(path)
                    && well_formed(text.trim())
                {
                    crate::secrets::register(text.trim());
                    current.0 = text.trim().to_string();
                }
                current.1 = modified;
            }
        }
        current.0.clone()
    }
}

/// The checks every request goes through, for one server.
#[derive(Debug)]
pub struct Guard {
    secret: Secret,
    csrf: String,
    /// Accepted `Host` values (`127.0.0.1:7780`, `localhost:7780`, …).
    hosts: Vec<String>,
}

/// What [`Guard::check`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Go on.
    Pass,
    /// The Host header is not ours (421).
    BadHost,
    /// No or a wrong secret (401).
    Unauthorized,
    /// A state-changing request without the CSRF proofs (403).
    Forbidden,
}

impl Guard {
    /// A guard for `token` on a server reached as `hosts`; with `file`, the
    /// token kept there replaces it when the file changes (a rotation).
    pub fn new(
        token: String,
        file: Option<PathBuf>,
        hosts: Vec<String>,
    ) -> Result<Guard, SecretError> {
        let csrf = crate::mcp::identity::new_token()?;
        let modified = file
            .as_deref()
            .and_then(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
        Ok(Guard {
            secret: Secret {
                path: file,
                current: std::sync::Mutex::new((token, modified)),
            },
            csrf,
            hosts,
        })
    }

    /// The CSRF value of this server (handed to the page by `/api/session`).
    pub fn csrf(&self) -> &str {
        &self.csrf
    }

    /// Whether `token` is the secret.
    pub fn is_token(&self, token: &str) -> bool {
        same(token, &self.secret.get())
    }

    /// The `Set-Cookie` value that stores the secret in the browser.
    pub fn cookie(&self) -> String {
        format!(
            "{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/; Max-Age=31536000",
            self.secret.get()
        )
    }

    /// Whether the request's `Host` is one of ours.
    pub fn host_ok(&self, headers: &HeaderMap) -> bool {
        headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|h| self.hosts.iter().any(|ok| ok.eq_ignore_ascii_case(h)))
    }

    /// Whether the request carries the secret in its cookie.
    pub fn has_cookie(&self, headers: &HeaderMap) -> bool {
        let token = self.secret.get();
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .any(|(name, value)| name == COOKIE && same(value, &token))
    }

    /// Whether a state-changing request proves it comes from the page:
    /// the CSRF header, a JSON body, and its own origin (when the browser
    /// says one).
    pub fn csrf_ok(&self, headers: &HeaderMap) -> bool {
        let header_ok = headers
            .get(CSRF_HEADER)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| same(v, &self.csrf));
        let json = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| {
                v.split(';')
                    .next()
                    .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
            });
        let origin_ok = match headers.get(header::ORIGIN).map(|o| o.to_str()) {
            None => true,
            Some(Ok(origin)) => self
                .hosts
                .iter()
                .any(|h| origin.eq_ignore_ascii_case(&format!("http://{h}"))),
            Some(Err(_)) => false,
        };
        let site_ok = headers
            .get("sec-fetch-site")
            .and_then(|v| v.to_str().ok())
            .is_none_or(|v| v == "same-origin" || v == "none");
        header_ok && json && origin_ok && site_ok
    }

    /// The decision for a request to `path` (`post`: it changes state).
    pub fn check(&self, headers: &HeaderMap, post: bool) -> Verdict {
        if !self.host_ok(headers) {
            Verdict::BadHost
        } else if !self.has_cookie(headers) {
            Verdict::Unauthorized
        } else if post && !self.csrf_ok(headers) {
            Verdict::Forbidden
        } else {
            Verdict::Pass
        }
    }
}

/// The `Host` values a server on `port` answers to: the loopback names,
/// and `listen` when it names another address.
pub fn hosts_for(listen: std::net::IpAddr, port: u16) -> Vec<String> {
    let mut hosts = vec![
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ];
    if !listen.is_loopback() && !listen.is_unspecified() {
        hosts.push(match listen {
            std::net::IpAddr::V4(a) => format!("{a}:{port}"),
            std::net::IpAddr::V6(a) => format!("[{a}]:{port}"),
        });
    }
    hosts
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn guard() -> Guard {
        Guard::new(
            "ab".repeat(32),
            None,
            hosts_for([127, 0, 0, 1].into(), 7780),
        )
        .unwrap()
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn host_cookie_and_csrf_are_each_required() {
        let g = guard();
        let cookie = format!("other=1; {COOKIE}={}", "ab".repeat(32));
        let good = [("host", "127.0.0.1:7780"), ("cookie", cookie.as_str())];
        assert_eq!(g.check(&headers(&good), false), Verdict::Pass);
        assert_eq!(
            g.check(&headers(&[("host", "evil.example:7780"), good[1]]), false),
            Verdict::BadHost
        );
        assert_eq!(
            g.check(&headers(&[good[0], ("cookie", "awtui_web=00")]), false),
            Verdict::Unauthorized
        );
        assert_eq!(g.check(&headers(&good), true), Verdict::Forbidden);
        let csrf = g.csrf().to_string();
        let mut post = good.to_vec();
        post.push(("content-type", "application/json"));
        post.push(("x-awtui-csrf", &csrf));
        assert_eq!(g.check(&headers(&post), true), Verdict::Pass);
        post.push(("origin", "http://evil.example"));
        assert_eq!(g.check(&headers(&post), true), Verdict::Forbidden);
        post.pop();
        post.push(("origin", "http://localhost:7780"));
        assert_eq!(g.check(&headers(&post), true), Verdict::Pass);
        post[2] = ("content-type", "text/plain");
        assert_eq!(g.check(&headers(&post), true), Verdict::Forbidden);
    }
}
