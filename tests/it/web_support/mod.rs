//! Helpers for the `awtui web` tests: a running `awtui web` in a test's
//! [`World`], a tiny blocking HTTP/1.1 client (std only, so a test sets
//! any header it likes, `Host` included, and sees the raw answer), and the
//! fake Claude Code workflow that asks for approval (as in
//! `approvals_cli.rs`).

pub mod webdriver;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::cli_support::{Lines, World, wait_for};

/// An HTTP answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    /// The first header named `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("{e}: not JSON ({}): {}", self.status, self.body))
    }
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = body.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = usize::from_str_radix(
            std::str::from_utf8(&body[..end])
                .unwrap()
                .split(';')
                .next()
                .unwrap()
                .trim(),
            16,
        )
        .unwrap_or(0);
        if size == 0 {
            return out;
        }
        body = &body[end + 2..];
        out.extend_from_slice(&body[..size.min(body.len())]);
        body = &body[(size + 2).min(body.len())..];
    }
}

/// One request to `127.0.0.1:port` with `headers` (a `Host` of
/// `127.0.0.1:port` unless given), read to the end.
pub fn http(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(crate::cli_support::PATIENCE))
        .unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    s.write_all(req.as_bytes()).unwrap();
    // Read the head, then the body by its length (some servers keep the
    // connection open whatever the request says).
    let mut raw = Vec::new();
    let mut buf = [0u8; 16384];
    let split = loop {
        if let Some(at) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = s.read(&mut buf).expect("read the answer");
        assert!(n > 0, "the connection closed before the head");
        raw.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .expect("a status");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: Option<usize> = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok());
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    loop {
        let have = raw.len() - (split + 4);
        let done = match length {
            Some(n) => have >= n,
            None if chunked => raw.ends_with(b"0\r\n\r\n"),
            None => false,
        };
        if done {
            break;
        }
        let n = s.read(&mut buf).expect("read the answer");
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
    }
    let rest = &raw[split + 4..];
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    Answer {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// The status of one request to `127.0.0.1:port` (only the status line is
/// read: a live stream that never ends answers too).
pub fn status_of(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> u16 {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(crate::cli_support::PATIENCE))
        .unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 1024];
    while !raw.windows(2).any(|w| w == b"\r\n") {
        let n = s.read(&mut buf).expect("read the status line");
        assert!(
            n > 0,
            "{method} {path}: the connection closed before the status"
        );
        raw.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&raw)
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("a status")
}

/// A running `awtui web`.
pub struct Web {
    pub pid: u32,
    pub lines: Lines,
    /// The address printed, with the sign-in token in its fragment.
    pub url: String,
    pub port: u16,
    /// The sign-in token of the printed address.
    pub token: String,
    /// The data dir (the token file is `web/token` in it).
    pub state: PathBuf,
    /// The test's own session value, once signed in.
    session: std::sync::OnceLock<String>,
}

impl Web {
    /// `awtui web --port 0 <extra>` in `w`, once it printed its address
    /// (with an empty user config: the tester's own is never read); the
    /// test signs in with the printed address (spending it: a browser
    /// opens [`Web::link`]).
    pub fn start(w: &mut World, extra: &[&str]) -> Web {
        Web::start_with_config(w, extra, "")
    }

    /// [`Web::start`] with `config` as the user's `config.toml`.
    pub fn start_with_config(w: &mut World, extra: &[&str], config: &str) -> Web {
        let web = Web::start_signed_out(w, extra, config);
        web.session();
        web
    }

    /// [`Web::start_with_config`] without signing in: the printed address
    /// is left for a browser.
    pub fn start_signed_out(w: &mut World, extra: &[&str], config: &str) -> Web {
        let dir = w.tmp.path().join("config");
        std::fs::create_dir_all(dir.join("awtui")).unwrap();
        std::fs::write(dir.join("awtui").join("config.toml"), config).unwrap();
        let mut args = vec!["web", "--port", "0"];
        args.extend_from_slice(extra);
        let mut cmd = w.cmd(&args);
        cmd.env("XDG_CONFIG_HOME", &dir);
        let (pid, mut lines, _stdin) = w.spawn_cmd(cmd);
        lines.wait_for("http://127.0.0.1:");
        let url = lines
            .seen
            .iter()
            .find(|l| l.starts_with("http://127.0.0.1:"))
            .expect("the address line")
            .clone();
        let port = url["http://127.0.0.1:".len()..]
            .split('/')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let token = url.split("#token=").nth(1).expect("a token").to_string();
        Web {
            pid,
            lines,
            url,
            port,
            token,
            state: w.state.clone(),
            session: std::sync::OnceLock::new(),
        }
    }

    /// A sign-in address not spent yet, as `awtui web --link` prints it
    /// (the token file's current token).
    pub fn link(&self) -> String {
        let token = std::fs::read_to_string(self.state.join("web").join("token")).unwrap();
        format!("http://127.0.0.1:{}/#token={}", self.port, token.trim())
    }

    /// Spends `token` at `/api/signin` as the page does; the answer.
    pub fn sign_in_with(&self, token: &str) -> Answer {
        http(
            self.port,
            "POST",
            "/api/signin",
            &[
                ("Authorization", &format!("Bearer {token}")),
                ("Content-Type", "application/json"),
                ("Origin", &format!("http://127.0.0.1:{}", self.port)),
            ],
            "{}",
        )
    }

    /// The test's session value (signed in with the current token on
    /// first use).
    pub fn session(&self) -> String {
        self.session
            .get_or_init(|| {
                let link = self.link();
                let token = link.split("#token=").nth(1).unwrap();
                let a = self.sign_in_with(token);
                assert_eq!(a.status, 200, "sign in: {}", a.body);
                a.json()["session"].as_str().unwrap().to_string()
            })
            .clone()
    }

    /// The `Authorization` value the page's requests carry.
    pub fn auth(&self) -> String {
        format!("Bearer {}", self.session())
    }

    /// A GET with the session.
    pub fn get(&self, path: &str) -> Answer {
        http(
            self.port,
            "GET",
            path,
            &[("Authorization", &self.auth())],
            "",
        )
    }

    /// The CSRF value the page reads.
    pub fn csrf(&self) -> String {
        let s = self.get("/api/session");
        assert_eq!(s.status, 200, "{}", s.body);
        s.json()["csrf"].as_str().unwrap().to_string()
    }

    /// A POST of `action` to instance `id` as the page sends it.
    pub fn act(&self, id: &str, action: Value) -> Answer {
        let csrf = self.csrf();
        http(
            self.port,
            "POST",
            &format!("/api/instances/{id}/action"),
            &[
                ("Authorization", &self.auth()),
                ("Content-Type", "application/json"),
                ("X-Awtui-Csrf", &csrf),
                ("Origin", &format!("http://127.0.0.1:{}", self.port)),
            ],
            &action.to_string(),
        )
    }

    /// The overview once `check` accepts it.
    pub fn overview_when(&self, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        wait_for(what, || {
            let a = self.get("/api/overview");
            (a.status == 200 && check(&a.json())).then(|| a.json())
        })
    }

    /// The page's id of the instance named `name`, once the server follows
    /// it (connected).
    pub fn instance_id(&self, name: &str) -> String {
        let o = self.overview_when(&format!("instance {name} in the overview"), |o| {
            o["instances"]
                .as_array()
                .unwrap()
                .iter()
                .any(|i| i["name"] == name && i["connected"] == true)
        });
        o["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == name)
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

/// A workflow with one fake Claude Code agent `cc` (`permissions: ask`)
/// that asks about `git push` once per turn and logs each answer to the
/// returned file.
pub fn approvals_workflow(w: &World) -> PathBuf {
    let bin = w.dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fakes/fake_agent.py");
    let _ = std::os::unix::fs::symlink(fake, bin.join("claude"));
    let log = w.dir.join("answers.log");
    std::fs::write(
        w.dir.join("cc.yaml"),
        format!(
            "agents:\n  cc:\n    backend: claude\n    permissions: ask\n    env:\n      PATH: \"{}:{}\"\n      FAKE_ASK: '{{\"tool\": \"Bash\", \"input\": {{\"command\": \"git push\"}}}}'\n      FAKE_ASK_LOG: \"{}\"\nlimits:\n  retries: 0\nkickoff: \"@cc push it\"\n",
            bin.display(),
            std::env::var("PATH").unwrap(),
            log.display()
        ),
    )
    .unwrap();
    log
}

/// The answers the fake CLI got, in order.
pub fn answers(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Waits until the fake CLI got `n` answers; they all.
pub fn wait_answers(log: &Path, n: usize) -> Vec<Value> {
    wait_for(&format!("{n} answers reaching the CLI"), || {
        let a = answers(log);
        (a.len() >= n).then_some(a)
    })
}

/// A free loopback port (for a program that cannot pick one itself).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
