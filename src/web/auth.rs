//! Who may talk to `awtui web`: the sign-in token (kept 0600 in the data
//! dir, outside every workspace, rotated by `--new-token`), the session
//! values it is exchanged for, the Host check against DNS rebinding and
//! the CSRF rules for requests that change something.
//!
//! - Nothing is ambient: no cookie grants anything (a browser hands a
//!   cookie of `127.0.0.1` to every port of `127.0.0.1`, such as an
//!   agent's preview server). Every API request and the live stream carry
//!   a session value in `Authorization: Bearer …`; the page keeps it in
//!   its origin's `localStorage` (scheme, host *and port*).
//! - The address `awtui web` prints carries the sign-in token in its
//!   fragment (`/#token=…`), which no browser sends to a server. The page
//!   takes it out of the address at once and exchanges it at
//!   `POST /api/signin` for a session value. The token is spent by the
//!   exchange (a new one is written to the file: `awtui web --link` prints
//!   it), so the address the browser's history keeps grants nothing. The
//!   token itself is taken nowhere else.
//! - Session values live in the server's memory only: they end with the
//!   server (whoever binds its port later finds nothing valid in the
//!   page's storage) and with a rotation by `--new-token`.
//! - A request whose `Host` is not one of the server's own addresses is
//!   refused before anything else: a rebound DNS name pointing at loopback
//!   never reaches the API.
//! - A request that changes something (POST) also needs the per-process
//!   CSRF value in `X-Awtui-Csrf` (handed out by `/api/session`), a JSON
//!   content type, and no foreign `Origin` or `Sec-Fetch-Site`.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::SystemTime;

use axum::http::{HeaderMap, header};

use crate::instance::layout;

/// The cookie the old design kept the secret in: ignored, and cleared
/// whenever a browser still sends it.
pub const OLD_COOKIE: &str = "awtui_web";
/// The header a state-changing request repeats the CSRF value in.
pub const CSRF_HEADER: &str = "x-awtui-csrf";
/// How many sessions a server keeps (the oldest is dropped first).
pub const MAX_SESSIONS: usize = 64;
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

/// The secret as last read, where it is kept, and the sessions made from
/// it: `awtui web --new-token` in another process rotates it for a server
/// already running too, and ends that server's sessions.
#[derive(Debug)]
struct Secret {
    /// The token file (`None`: the token given is the only one).
    path: Option<PathBuf>,
    /// The token, the file's modification time when it was read, and the
    /// sessions.
    current: std::sync::Mutex<Current>,
}

/// The mutable part of [`Secret`].
#[derive(Debug)]
struct Current {
    /// The sign-in token not yet spent.
    token: String,
    /// The token file's modification time when last read or written.
    modified: Option<SystemTime>,
    /// The live session values, oldest first.
    sessions: VecDeque<String>,
}

/// Why a sign-in was refused.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    /// Not the current sign-in token (a spent one, a rotated one, a guess).
    #[error(
        "this sign-in address is spent or wrong: each works once; run `awtui web --link` \
         for a new one"
    )]
    Wrong,
    /// The spent token could not be replaced in its file; no session is
    /// made, as the spent token would stay valid on the next start.
    #[error("cannot replace the spent sign-in token in {path}: {source}")]
    Spend {
        /// The token file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// No random bytes.
    #[error(transparent)]
    Random(#[from] crate::mcp::identity::IdentityError),
}

fn modified(path: &std::path::Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

impl Secret {
    /// The state now: the token re-read when the file changed (one `stat`
    /// a check); a token this server did not write there (a rotation)
    /// ends every session.
    fn lock(&self) -> std::sync::MutexGuard<'_, Current> {
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(path) = &self.path {
            let now = modified(path);
            if now.is_some() && now != current.modified {
                if let Ok(text) = crate::fsutil::read_record_text(path)
                    && well_formed(text.trim())
                    && !same(text.trim(), &current.token)
                {
                    crate::secrets::register(text.trim());
                    current.token = text.trim().to_string();
                    current.sessions.clear();
                }
                current.modified = now;
            }
        }
        current
    }

    /// Spends `token` for a new session value.
    fn sign_in(&self, token: &str) -> Result<String, SignInError> {
        let mut current = self.lock();
        if !same(token, &current.token) {
            return Err(SignInError::Wrong);
        }
        let next = crate::mcp::identity::new_token()?;
        if let Some(path) = &self.path {
            crate::fsutil::write_private_file(path, format!("{next}\n").as_bytes()).map_err(
                |source| SignInError::Spend {
                    path: path.clone(),
                    source,
                },
            )?;
            current.modified = modified(path);
        }
        current.token = next;
        let session = crate::mcp::identity::new_token()?;
        if current.sessions.len() >= MAX_SESSIONS {
            current.sessions.pop_front();
        }
        current.sessions.push_back(session.clone());
        Ok(session)
    }

    /// Whether `value` is a live session.
    fn is_session(&self, value: &str) -> bool {
        self.lock().sessions.iter().any(|s| same(s, value))
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
    /// No or a wrong session (401).
    Unauthorized,
    /// A state-changing request without the CSRF proofs (403).
    Forbidden,
}

/// The value of an `Authorization: Bearer …` header, if there is one.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, rest) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
}

impl Guard {
    /// A guard for `token` on a server reached as `hosts`; with `file`, the
    /// token kept there replaces it when the file changes (a rotation), and
    /// a spent token is replaced there.
    pub fn new(
        token: String,
        file: Option<PathBuf>,
        hosts: Vec<String>,
    ) -> Result<Guard, SecretError> {
        let csrf = crate::mcp::identity::new_token()?;
        let modified = file.as_deref().and_then(modified);
        Ok(Guard {
            secret: Secret {
                path: file,
                current: std::sync::Mutex::new(Current {
                    token,
                    modified,
                    sessions: VecDeque::new(),
                }),
            },
            csrf,
            hosts,
        })
    }

    /// The CSRF value of this server (handed to the page by `/api/session`).
    pub fn csrf(&self) -> &str {
        &self.csrf
    }

    /// Spends the sign-in token the request carries (`Authorization:
    /// Bearer`) for a new session value.
    pub fn sign_in(&self, headers: &HeaderMap) -> Result<String, SignInError> {
        self.secret
            .sign_in(bearer(headers).ok_or(SignInError::Wrong)?)
    }

    /// Whether the request's `Host` is one of ours.
    pub fn host_ok(&self, headers: &HeaderMap) -> bool {
        headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|h| self.hosts.iter().any(|ok| ok.eq_ignore_ascii_case(h)))
    }

    /// Whether the request carries a live session value.
    pub fn has_session(&self, headers: &HeaderMap) -> bool {
        bearer(headers).is_some_and(|v| self.secret.is_session(v))
    }

    /// Whether a request that sends something comes from a page of ours,
    /// as far as the browser says: a JSON body (a form cannot send one),
    /// an `Origin` (when present) of our own addresses, a `Sec-Fetch-Site`
    /// (when present) of the same origin.
    pub fn same_origin_ok(&self, headers: &HeaderMap) -> bool {
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
        json && origin_ok && site_ok
    }

    /// Whether a state-changing request proves it comes from the page:
    /// the CSRF header and [`Guard::same_origin_ok`].
    pub fn csrf_ok(&self, headers: &HeaderMap) -> bool {
        let header_ok = headers
            .get(CSRF_HEADER)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| same(v, &self.csrf));
        header_ok && self.same_origin_ok(headers)
    }

    /// The decision for a request (`post`: it changes state).
    pub fn check(&self, headers: &HeaderMap, post: bool) -> Verdict {
        if !self.host_ok(headers) {
            Verdict::BadHost
        } else if !self.has_session(headers) {
            Verdict::Unauthorized
        } else if post && !self.csrf_ok(headers) {
            Verdict::Forbidden
        } else {
            Verdict::Pass
        }
    }
}

/// Whether the request still carries the old design's cookie (the answer
/// then clears it, so the browser stops handing it to other ports).
pub fn has_old_cookie(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .any(|(name, _)| name == OLD_COOKIE)
}

/// The `Set-Cookie` value that deletes the old design's cookie.
pub fn clear_old_cookie() -> String {
    format!("{OLD_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict")
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

    fn sign_in(g: &Guard, token: &str) -> Result<String, SignInError> {
        let bearer = format!("Bearer {token}");
        g.sign_in(&headers(&[("authorization", &bearer)]))
    }

    #[test]
    fn host_session_and_csrf_are_each_required_and_no_cookie_counts() {
        let g = guard();
        let session = sign_in(&g, &"ab".repeat(32)).unwrap();
        let bearer = format!("Bearer {session}");
        let good = [
            ("host", "127.0.0.1:7780"),
            ("authorization", bearer.as_str()),
        ];
        assert_eq!(g.check(&headers(&good), false), Verdict::Pass);
        assert_eq!(
            g.check(&headers(&[("host", "evil.example:7780"), good[1]]), false),
            Verdict::BadHost
        );
        let cookie = format!("{OLD_COOKIE}={session}");
        for other in [
            ("authorization", "Bearer 00"),
            ("cookie", cookie.as_str()),
            ("authorization", session.as_str()),
        ] {
            assert_eq!(
                g.check(&headers(&[good[0], other]), false),
                Verdict::Unauthorized,
                "{other:?}"
            );
        }
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

    #[test]
    fn the_sign_in_token_is_spent_by_its_exchange_and_grants_nothing_itself() {
        let g = guard();
        let token = "ab".repeat(32);
        let bearer = format!("Bearer {token}");
        let with_token = [
            ("host", "127.0.0.1:7780"),
            ("authorization", bearer.as_str()),
        ];
        assert_eq!(g.check(&headers(&with_token), false), Verdict::Unauthorized);
        let first = sign_in(&g, &token).unwrap();
        assert!(matches!(sign_in(&g, &token), Err(SignInError::Wrong)));
        assert!(matches!(sign_in(&g, &first), Err(SignInError::Wrong)));
        assert!(g.has_session(&headers(&[("authorization", &format!("Bearer {first}"))])));
    }

    #[test]
    fn a_spent_token_is_replaced_in_its_file_and_a_rotation_there_ends_every_session() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        let first = "cd".repeat(32);
        std::fs::write(&file, format!("{first}\n")).unwrap();
        let g = Guard::new(
            first.clone(),
            Some(file.clone()),
            hosts_for([127, 0, 0, 1].into(), 1),
        )
        .unwrap();
        let session = sign_in(&g, &first).unwrap();
        let next = std::fs::read_to_string(&file).unwrap().trim().to_string();
        assert!(well_formed(&next) && next != first, "{next}");
        let live = |s: &str| g.has_session(&headers(&[("authorization", &format!("Bearer {s}"))]));
        assert!(live(&session), "its own write ends nothing");
        // `awtui web --new-token` in another process.
        let rotated = "ef".repeat(32);
        std::fs::write(&file, format!("{rotated}\n")).unwrap();
        assert!(!live(&session));
        assert!(matches!(sign_in(&g, &next), Err(SignInError::Wrong)));
        assert!(sign_in(&g, &rotated).is_ok());
    }

    #[test]
    fn a_phone_on_the_served_address_signs_in_and_is_checked_as_on_loopback() {
        let g = Guard::new(
            "ab".repeat(32),
            None,
            hosts_for([100, 101, 102, 103].into(), 7780),
        )
        .unwrap();
        let own = [
            ("host", "100.101.102.103:7780"),
            ("origin", "http://100.101.102.103:7780"),
            ("sec-fetch-site", "same-origin"),
            ("content-type", "application/json"),
        ];
        assert!(g.same_origin_ok(&headers(&own)));
        let session = sign_in(&g, &"ab".repeat(32)).unwrap();
        let bearer = format!("Bearer {session}");
        let mut get = own[..1].to_vec();
        get.push(("authorization", &bearer));
        assert_eq!(g.check(&headers(&get), false), Verdict::Pass);
        let foreign = [("origin", "http://100.101.102.104:7780"), own[3]];
        assert!(!g.same_origin_ok(&headers(&foreign)));
    }

    #[test]
    fn the_oldest_session_goes_past_the_cap() {
        let g = guard();
        let mut token = "ab".repeat(32);
        let mut sessions = Vec::new();
        for _ in 0..=MAX_SESSIONS {
            sessions.push(sign_in(&g, &token).unwrap());
            token = g.secret.lock().token.clone();
        }
        let live = |s: &str| g.has_session(&headers(&[("authorization", &format!("Bearer {s}"))]));
        assert!(!live(&sessions[0]));
        assert!(sessions[1..].iter().all(|s| live(s)));
    }

    #[test]
    fn only_the_old_cookie_is_noticed_for_clearing() {
        assert!(has_old_cookie(&headers(&[("cookie", "a=1; awtui_web=x")])));
        assert!(!has_old_cookie(&headers(&[("cookie", "awtui_webx=1")])));
        assert!(clear_old_cookie().contains("Max-Age=0"));
    }
}
