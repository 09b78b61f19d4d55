//! The web session attacked from another loopback port (issue 34, found 4).
//!
//! The attacker is a server the person's browser visits on another
//! 127.0.0.1 port: a sandboxed agent's "preview" server (the sandbox does
//! not confine the network) or another local user's. It records whatever
//! the browser sends it and replays that to `awtui web`. It also reads the
//! browser's history (the profile's files) for the address the person
//! opened, and, as a plain local process, knocks on every route.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::cli_support::{World, wait_for};
use crate::web_support::webdriver::Browser;
use crate::web_support::{Web, http, status_of};

/// A "preview" server on another loopback port that records the head of
/// every request the browser sends it.
fn preview_server() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(s) = stream else { continue };
            // One thread each: a connection the browser opens ahead and
            // never uses must not hold up the next.
            let record = record.clone();
            std::thread::spawn(move || answer_preview(s, &record));
        }
    });
    (port, seen)
}

/// Records one request's head and answers with the preview page.
fn answer_preview(mut s: std::net::TcpStream, record: &Mutex<Vec<String>>) {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    while !raw.windows(4).any(|w| w == b"\r\n\r\n") {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    }
    record
        .lock()
        .unwrap()
        .push(String::from_utf8_lossy(&raw).into_owned());
    let page = "<!doctype html><title>preview</title><p>the agent's preview</p>";
    let _ = write!(
        s,
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
        page.len()
    );
}

/// The header lines of a recorded request head (without the request line
/// and `Host`), to replay to `awtui web`.
fn replayable(head: &str) -> Vec<(String, String)> {
    head.lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .filter(|(k, _)| !k.eq_ignore_ascii_case("host") && !k.is_empty())
        .collect()
}

/// Every value the page keeps in its origin's storage.
fn stored_values(b: &Browser) -> Vec<String> {
    let v = b.script(
        "const out = []; for (const s of [localStorage, sessionStorage]) \
         for (let i = 0; i < s.length; i++) out.push(s.getItem(s.key(i))); return out",
    );
    v.as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x.as_str().map(str::to_string))
        .filter(|x| x.len() >= 16)
        .collect()
}

/// Runs of hex digits following `token=` in any file under `dir`: what an
/// attacker reading the browser's history and session files would try.
fn tokens_in_files(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let Ok(bytes) = std::fs::read(&p) else {
                continue;
            };
            for at in bytes
                .windows(6)
                .enumerate()
                .filter(|(_, w)| *w == b"token=")
                .map(|(i, _)| i + 6)
            {
                let run: String = bytes[at..]
                    .iter()
                    .take_while(|b| b.is_ascii_hexdigit())
                    .map(|&b| b as char)
                    .collect();
                if run.len() >= 32 && !found.contains(&run) {
                    found.push(run);
                }
            }
        }
    }
    found
}

/// Every way a secret could be presented to the server: cookie, bearer,
/// the old `?token=` and the sign-in exchange.
fn presentations(secret: &str) -> Vec<Vec<(String, String)>> {
    vec![
        vec![("Cookie".into(), format!("awtui_web={secret}"))],
        vec![("Authorization".into(), format!("Bearer {secret}"))],
    ]
}

/// Headers as the client helper takes them.
fn pairs(h: &[(String, String)]) -> Vec<(&str, &str)> {
    h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

#[test]
fn a_server_on_another_loopback_port_gets_nothing_and_the_history_keeps_no_live_token() {
    let mut w = World::demo();
    w.start_background("demo.yaml", "demo");
    let web = Web::start_signed_out(&mut w, &[], "");
    let b = Browser::start(1280, 800);
    // The person opens the address awtui web printed and is signed in.
    b.go(&web.url);
    b.wait_element("#channel .msg");
    let origin = format!("http://127.0.0.1:{}/", web.port);
    let here = b.script("return location.href");
    let here = here.as_str().unwrap();
    assert!(
        here.starts_with(&origin) && !here.contains("token"),
        "the token stayed in the address bar: {here}"
    );
    let mut secrets = stored_values(&b);
    secrets.push(web.token.clone());
    // Back and forward never bring an address with the token back.
    let length = b.script("return history.length").as_u64().unwrap();
    for _ in 1..length {
        b.back();
        let at = b.script("return location.href");
        assert!(!at.as_str().unwrap().contains("token"), "back: {at}");
    }
    for _ in 1..length {
        b.forward();
        let at = b.script("return location.href");
        assert!(!at.as_str().unwrap().contains("token"), "forward: {at}");
    }
    b.wait_element("#channel .msg");

    // The person opens the agent's preview on another loopback port, by
    // address and by name.
    let (preview, seen) = preview_server();
    for host in ["127.0.0.1", "localhost"] {
        b.go(&format!("http://{host}:{preview}/preview"));
        b.wait_script(
            "the preview page",
            "return document.body && document.body.textContent.includes('preview')",
        );
        // The preview's own script finds nothing of awtui in its storage
        // (storage is scoped by port too) nor in its cookies.
        let there = stored_values(&b);
        assert!(
            secrets.iter().all(|s| !there.contains(s)),
            "the preview's storage holds an awtui secret: {there:?}"
        );
        let cookies = b.script("return document.cookie");
        assert!(
            secrets
                .iter()
                .all(|s| !cookies.as_str().unwrap().contains(s.as_str())),
            "{cookies}"
        );
    }
    let heads = wait_for("the preview's requests", || {
        let s = seen.lock().unwrap().clone();
        (s.len() >= 2).then_some(s)
    });
    for head in &heads {
        assert!(
            !head.to_ascii_lowercase().contains("awtui_web"),
            "the awtui cookie reached the other port:\n{head}"
        );
        for secret in &secrets {
            assert!(
                !head.contains(secret.as_str()),
                "an awtui secret reached the other port:\n{head}"
            );
        }
        // Replayed to awtui web, what it got grants nothing.
        let h = replayable(head);
        for path in ["/api/session", "/api/overview"] {
            let a = http(web.port, "GET", path, &pairs(&h), "");
            assert_eq!(
                a.status, 401,
                "{path} with the preview's headers: {}",
                a.body
            );
        }
    }

    // The attacker reads the browser's history and session files for the
    // address the person opened: whatever token it finds is spent.
    let profile = b.quit();
    let mut candidates = tokens_in_files(profile.path());
    candidates.push(web.token.clone());
    for found in &candidates {
        let exchanged = http(
            web.port,
            "POST",
            "/api/signin",
            &[
                ("Authorization", &format!("Bearer {found}")),
                ("Content-Type", "application/json"),
            ],
            "{}",
        );
        assert_eq!(
            exchanged.status, 401,
            "a token from the browser's files signs in: {}",
            exchanged.body
        );
        for h in presentations(found) {
            let a = http(web.port, "GET", "/api/session", &pairs(&h), "");
            assert_eq!(a.status, 401, "{h:?}: {}", a.body);
        }
        let old = http(web.port, "GET", &format!("/?token={found}"), &[], "");
        assert!(old.header("set-cookie").is_none(), "{:?}", old.headers);
    }
}

#[test]
fn a_local_process_without_a_session_gets_401_on_every_route() {
    let mut w = World::demo();
    w.start_background("demo.yaml", "demo");
    let web = Web::start(&mut w, &[]);
    let id = web.instance_id("demo");
    let routes: Vec<(&str, String)> = awtui::web::server::ROUTES
        .iter()
        .map(|(method, path)| (*method, path.replace("{id}", &id)))
        .chain([("GET", "/api/not-a-route".to_string())])
        .collect();
    let mut credentials: Vec<Vec<(String, String)>> = vec![vec![]];
    // The cookie the old design set, and the sign-in token itself: only
    // the exchange takes it.
    credentials.extend(presentations(&web.token));
    credentials.push(vec![(
        "Authorization".into(),
        format!("Bearer {}", "0".repeat(64)),
    )]);
    for (method, path) in &routes {
        for h in &credentials {
            let mut h = pairs(h);
            h.push(("Content-Type", "application/json"));
            if *path == "/api/signin" && h.iter().any(|(_, v)| v.contains(&web.token)) {
                continue; // the one place the token is taken (spent below)
            }
            let status = status_of(web.port, method, path, &h, "{}");
            assert_eq!(status, 401, "{method} {path} with {h:?}");
        }
    }
    // The live stream with a session works; the same stream without one
    // is refused (above), so the refusal is the guard's.
    let session = web.session();
    let bearer = format!("Bearer {session}");
    let status = status_of(
        web.port,
        "GET",
        "/api/events",
        &[("Authorization", &bearer)],
        "",
    );
    assert_eq!(status, 200);
}
