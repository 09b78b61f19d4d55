//! `awtui web` at scale: a real instance (the release binary, started in
//! the background) whose channel holds 100,000 messages (`--messages N` to
//! change; written directly, as a long run would have left them) with 20
//! agents, served by a real `awtui web`. Prints medians of:
//!
//! - the page's first load of the instance (`GET /api/instances/<id>`: the
//!   state with the newest 200 messages, as JSON), and its size;
//! - the overview (`GET /api/overview`: instances, attention, approvals);
//! - older messages on request (the 200 before the middle of the channel);
//! - one live update: a message posted through the API until it arrives on
//!   the page's event stream (`/api/events`).
//!
//!   cargo bench --bench web

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use awtui::context::ChannelEntry;

const AGENTS: usize = 20;
const RUNS: usize = 30;
const PATIENCE: Duration = Duration::from_secs(120);

/// One request; the status and the body (read by its length).
fn http(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut req =
        format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (
        status,
        String::from_utf8_lossy(&raw[split + 4..]).into_owned(),
    )
}

fn median(mut times: Vec<Duration>) -> String {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    format!(
        "median {:.2} ms (min {:.2}, max {:.2})",
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1])
    )
}

fn wait<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The workflow (20 idle agents) and its channel of `messages` messages,
/// every one already read.
fn build(dir: &Path, messages: u64) {
    let agents: String = (0..AGENTS)
        .map(|i| format!("  agent{i:02}:\n    command: \"true\"\n"))
        .collect();
    std::fs::write(
        dir.join("bench.yaml"),
        format!("name: bench\nagents:\n{agents}"),
    )
    .unwrap();
    let home = dir.join(".workflow").join("bench");
    std::fs::create_dir_all(&home).unwrap();
    let mut out = std::io::BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(home.join("channel.jsonl")).unwrap(),
    );
    let t0 = chrono::Utc::now() - chrono::Duration::days(3);
    let mut last = None;
    for id in 1..=messages {
        let to = format!("agent{:02}", (id * 7) % AGENTS as u64);
        let message = if id % 10 == 0 {
            format!(
                "=== AOP-FINAL | agent=agent{:02} ===\nStep {id} done: tests pass.\n=== END-AOP-FINAL ===\n@{to} over to you",
                id % AGENTS as u64
            )
        } else {
            format!(
                "@{to} progress report {id}: tests pass, moving on to the next part of the task"
            )
        };
        let e = ChannelEntry {
            id,
            timestamp: t0 + chrono::Duration::milliseconds(id as i64),
            from: format!("agent{:02}", id % AGENTS as u64),
            message,
            mentions: vec![to],
            reply_to: None,
        };
        serde_json::to_writer(&mut out, &e).unwrap();
        out.write_all(b"\n").unwrap();
        last = Some(e);
    }
    out.flush().unwrap();
    let cursors: serde_json::Map<String, serde_json::Value> = (0..AGENTS)
        .map(|i| {
            (
                format!("agent{i:02}"),
                serde_json::json!({"acked": messages, "delivered": messages}),
            )
        })
        .collect();
    std::fs::write(
        home.join("state.json"),
        serde_json::json!({"version": 1, "cursors": cursors}).to_string(),
    )
    .unwrap();
    if let Some(last) = last {
        std::fs::write(
            home.join("channel.md"),
            awtui::context::file_store::mirror_text(&last),
        )
        .unwrap();
    }
}

struct Killed(Vec<Child>, Vec<u32>);

impl Drop for Killed {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
        for pid in &self.1 {
            if let Some(p) = rustix::process::Pid::from_raw(*pid as i32) {
                let _ = rustix::process::kill_process(p, rustix::process::Signal::TERM);
            }
        }
    }
}

fn main() {
    let messages: u64 = std::env::args()
        .skip_while(|a| a != "--messages")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("w");
    let state = tmp.path().join("state");
    std::fs::create_dir_all(&dir).unwrap();
    let built = Instant::now();
    build(&dir, messages);
    println!(
        "built {messages} messages, {AGENTS} agents in {:.1} s",
        built.elapsed().as_secs_f64()
    );
    let bin = env!("CARGO_BIN_EXE_awtui");
    let awtui = |args: &[&str]| {
        let mut c = Command::new(bin);
        c.args(args)
            .current_dir(&dir)
            .env("AWTUI_STATE_DIR", &state)
            .env("XDG_CONFIG_HOME", tmp.path().join("config"))
            .env_remove("XDG_RUNTIME_DIR");
        c
    };
    let mut guard = Killed(Vec::new(), Vec::new());
    let started = awtui(&[
        "start",
        "bench.yaml",
        "--instance",
        "bench",
        "--background",
        "--json",
    ])
    .output()
    .unwrap();
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&started.stdout).unwrap();
    guard.1.push(v["pid"].as_u64().unwrap() as u32);
    let mut web = awtui(&["web", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(web.stdout.take().unwrap());
    guard.0.push(web);
    let mut url = String::new();
    lines.read_line(&mut url).unwrap();
    let url = url.trim().to_string();
    let port: u16 = url["http://127.0.0.1:".len()..]
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let token = url.split("token=").nth(1).unwrap().to_string();
    // The page's sign-in: the printed token for a session value.
    let (status, signed) = http(
        port,
        "POST",
        "/api/signin",
        &[
            ("Authorization", &format!("Bearer {token}")),
            ("Content-Type", "application/json"),
        ],
        "{}",
    );
    assert_eq!(status, 200, "{signed}");
    let signed: serde_json::Value = serde_json::from_str(&signed).unwrap();
    let auth = format!("Bearer {}", signed["session"].as_str().unwrap());
    let get = |path: &str| http(port, "GET", path, &[("Authorization", &auth)], "");
    let id = wait("the instance in the overview", || {
        let (_, body) = get("/api/overview");
        let o: serde_json::Value = serde_json::from_str(&body).ok()?;
        o["instances"]
            .as_array()?
            .iter()
            .find(|i| i["connected"] == true)
            .map(|i| i["id"].as_str().unwrap().to_string())
    });
    let (status, first) = get(&format!("/api/instances/{id}"));
    assert_eq!(status, 200, "{first}");
    let state_json: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(state_json["total_messages"], messages);
    let loads: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            let (s, _) = get(&format!("/api/instances/{id}"));
            assert_eq!(s, 200);
            t.elapsed()
        })
        .collect();
    let middle = messages / 2;
    let pages: Vec<Duration> = (0..RUNS / 3)
        .map(|_| {
            let t = Instant::now();
            let (s, body) = get(&format!("/api/instances/{id}/messages?before={middle}"));
            assert_eq!(s, 200, "{body}");
            t.elapsed()
        })
        .collect();
    let overviews: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            get("/api/overview");
            t.elapsed()
        })
        .collect();
    // The live stream, then posts through the API.
    let (_, session) = get("/api/session");
    let csrf = serde_json::from_str::<serde_json::Value>(&session).unwrap()["csrf"]
        .as_str()
        .unwrap()
        .to_string();
    let mut sse = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sse.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(
        sse,
        "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: {auth}\r\n\r\n"
    )
    .unwrap();
    let mut events = BufReader::new(sse);
    let mut line = String::new();
    while !line.contains("\"hello\"") {
        line.clear();
        events.read_line(&mut line).unwrap();
    }
    let updates: Vec<Duration> = (0..RUNS)
        .map(|i| {
            let text = format!("bench update {i}");
            let body = serde_json::json!({"action": "post", "text": text}).to_string();
            let t = Instant::now();
            let (s, b) = http(
                port,
                "POST",
                &format!("/api/instances/{id}/action"),
                &[
                    ("Authorization", &auth),
                    ("Content-Type", "application/json"),
                    ("X-Awtui-Csrf", &csrf),
                ],
                &body,
            );
            assert_eq!(s, 200, "{b}");
            loop {
                line.clear();
                events.read_line(&mut line).unwrap();
                if line.starts_with("data:") && line.contains(&text) {
                    break;
                }
            }
            t.elapsed()
        })
        .collect();
    println!("awtui web, {messages} messages, {AGENTS} agents, {RUNS} runs each:");
    println!(
        "  first load of the instance ({} KiB JSON, newest {} messages): {}",
        first.len() / 1024,
        state_json["messages"].as_array().unwrap().len(),
        median(loads)
    );
    println!("  overview: {}", median(overviews));
    println!(
        "  older messages on request (the 200 before #{middle}): {}",
        median(pages)
    );
    println!(
        "  live update (post through the API until it is on the event stream): {}",
        median(updates)
    );
    drop(guard);
    let _ = awtui(&["stop", "@bench"]).output();
}
