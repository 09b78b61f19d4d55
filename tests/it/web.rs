//! `awtui web` over HTTP, with the real binary: the sign-in token (spent
//! by one sign-in, `--link`, rotation, 0600 file), sessions (401 without
//! one, the old cookie ignored and cleared), the Host check, CSRF-proof
//! posts, the security headers, posting to the channel, answering an
//! approval from the fake Claude Code, the loopback rule, and the webhook
//! (a local server that fails first, then takes the item).

use crate::acp_live_support;
use crate::cli_support;
use crate::web_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use cli_support::{World, wait_for};
use serde_json::json;
use web_support::{Web, approvals_workflow, http, wait_answers};

/// A world with the demo instance running and `awtui web` serving it.
fn demo_served() -> (World, Web, String) {
    let mut w = World::demo();
    w.start_background("demo.yaml", "demo");
    let web = Web::start(&mut w, &[]);
    let id = web.instance_id("demo");
    (w, web, id)
}

#[test]
fn no_session_or_a_wrong_one_gets_401_and_no_data() {
    let (_w, web, id) = demo_served();
    let old_cookie = format!("awtui_web={}", web.token);
    let zeros = format!("Bearer {}", "0".repeat(64));
    let printed = format!("Bearer {}", web.token);
    for path in [
        "/api/overview".to_string(),
        "/api/events".to_string(),
        "/api/session".to_string(),
        format!("/api/instances/{id}"),
    ] {
        for credential in [
            None,
            Some(("Cookie", old_cookie.as_str())),
            Some(("Authorization", "Bearer 0123")),
            Some(("Authorization", zeros.as_str())),
            // The sign-in token itself is taken only by the exchange.
            Some(("Authorization", printed.as_str())),
        ] {
            let headers: Vec<(&str, &str)> = credential.into_iter().collect();
            let a = http(web.port, "GET", &path, &headers, "");
            assert_eq!(a.status, 401, "{path} with {credential:?}: {}", a.body);
            assert!(
                !a.body.contains("demo") && !a.body.contains("planner"),
                "{}",
                a.body
            );
        }
    }
    // A wrong sign-in token makes no session.
    let wrong = web.sign_in_with(&"1".repeat(64));
    assert_eq!(wrong.status, 401, "{}", wrong.body);
    assert!(wrong.body.contains("awtui web --link"), "{}", wrong.body);
    // The session reads everything.
    assert_eq!(web.get("/api/overview").status, 200);
    assert!(
        web.get(&format!("/api/instances/{id}"))
            .body
            .contains("planner")
    );
}

#[test]
fn the_printed_token_is_spent_by_one_sign_in_and_link_prints_the_next() {
    let mut w = World::demo();
    w.start_background("demo.yaml", "demo");
    let web = Web::start_signed_out(&mut w, &[], "");
    // The token rides in the fragment: never sent to a server.
    assert!(
        web.url
            .starts_with(&format!("http://127.0.0.1:{}/#token=", web.port)),
        "{}",
        web.url
    );
    let first = web.sign_in_with(&web.token);
    assert_eq!(first.status, 200, "{}", first.body);
    let session = first.json()["session"].as_str().unwrap().to_string();
    assert_ne!(session, web.token);
    assert_eq!(web.sign_in_with(&web.token).status, 401, "spent twice");
    // `awtui web --link` prints the next address for the same server.
    let r = w.run(&["web", "--link", "--port", &web.port.to_string()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let link = r.stdout.trim();
    assert!(
        link.starts_with(&format!("http://127.0.0.1:{}/#token=", web.port)),
        "{link}"
    );
    let next = link.split("#token=").nth(1).unwrap();
    assert_ne!(next, web.token);
    let second = web.sign_in_with(next);
    assert_eq!(second.status, 200, "{}", second.body);
    // Both sessions work; a foreign page cannot sign in even with a token.
    for s in [&session, second.json()["session"].as_str().unwrap()] {
        let a = http(
            web.port,
            "GET",
            "/api/overview",
            &[("Authorization", &format!("Bearer {s}"))],
            "",
        );
        assert_eq!(a.status, 200, "{}", a.body);
    }
    let r = w.run(&["web", "--link", "--port", &web.port.to_string()]);
    let token = r.stdout.trim().split("#token=").nth(1).unwrap().to_string();
    let foreign = http(
        web.port,
        "POST",
        "/api/signin",
        &[
            ("Authorization", &format!("Bearer {token}")),
            ("Content-Type", "application/json"),
            ("Origin", "http://127.0.0.1:1"),
        ],
        "{}",
    );
    assert_eq!(foreign.status, 403, "{}", foreign.body);
    assert_eq!(web.sign_in_with(&token).status, 200, "a refusal spent it");
}

#[test]
fn the_page_is_served_without_data_the_old_cookie_is_cleared_and_every_answer_is_secured() {
    let (_w, web, _id) = demo_served();
    let page = http(web.port, "GET", "/", &[], "");
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("<script src=\"/signin.js\"></script>")
            && page.body.contains("<script src=\"/app.js\""),
        "{}",
        page.body
    );
    assert!(!page.body.contains("planner"), "{}", page.body);
    // A browser that still holds the old cookie is told to drop it.
    let old = http(
        web.port,
        "GET",
        "/",
        &[("Cookie", &format!("awtui_web={}", web.token))],
        "",
    );
    let cleared = old.header("set-cookie").expect("the old cookie cleared");
    assert!(
        cleared.starts_with("awtui_web=;") && cleared.contains("Max-Age=0"),
        "{cleared}"
    );
    assert!(page.header("set-cookie").is_none());
    // Every answer carries a policy that forbids inline script.
    for a in [
        &page,
        &old,
        &web.get("/api/overview"),
        &http(web.port, "GET", "/api/overview", &[], ""),
    ] {
        let csp = a.header("content-security-policy").expect("a CSP");
        assert!(
            csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
            "{csp}"
        );
        assert_eq!(a.header("x-frame-options"), Some("DENY"));
        assert_eq!(a.header("x-content-type-options"), Some("nosniff"));
    }
}

#[test]
fn a_foreign_host_header_is_refused_before_anything() {
    let (_w, web, _id) = demo_served();
    let auth = web.auth();
    for host in [
        "evil.example",
        &format!("evil.example:{}", web.port),
        "127.0.0.1:1",
    ] {
        let a = http(
            web.port,
            "GET",
            "/api/overview",
            &[("Host", host), ("Authorization", &auth)],
            "",
        );
        assert_eq!(a.status, 421, "{host}: {}", a.body);
        assert!(!a.body.contains("demo"), "{}", a.body);
        let t = http(
            web.port,
            "POST",
            "/api/signin",
            &[
                ("Host", host),
                ("Authorization", &format!("Bearer {}", web.token)),
                ("Content-Type", "application/json"),
            ],
            "{}",
        );
        assert_eq!(t.status, 421);
        assert!(!t.body.contains("session"), "{}", t.body);
        assert_eq!(
            http(web.port, "GET", "/", &[("Host", host)], "").status,
            421
        );
    }
    let ok = http(
        web.port,
        "GET",
        "/api/overview",
        &[
            ("Host", &format!("localhost:{}", web.port)),
            ("Authorization", &auth),
        ],
        "",
    );
    assert_eq!(ok.status, 200);
}

#[test]
fn forged_cross_site_posts_are_refused_and_a_real_one_reaches_the_channel() {
    let (w, web, id) = demo_served();
    let auth = web.auth();
    let csrf = web.csrf();
    let path = format!("/api/instances/{id}/action");
    let body = json!({"action": "post", "text": "forged hello"}).to_string();
    let own = format!("http://127.0.0.1:{}", web.port);
    let forged: Vec<Vec<(&str, &str)>> = vec![
        // A form post from another site: no CSRF header, not JSON.
        vec![
            ("Authorization", &auth),
            ("Content-Type", "text/plain"),
            ("Origin", "http://evil.example"),
        ],
        // JSON without the CSRF header.
        vec![
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
        ],
        // A wrong CSRF value.
        vec![
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
            ("X-Awtui-Csrf", "00"),
        ],
        // The right value from a foreign origin.
        vec![
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
            ("X-Awtui-Csrf", &csrf),
            ("Origin", "http://evil.example"),
        ],
        // The right value, not JSON.
        vec![
            ("Authorization", &auth),
            ("Content-Type", "text/plain"),
            ("X-Awtui-Csrf", &csrf),
            ("Origin", &own),
        ],
        // A cross-site fetch the browser labels.
        vec![
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
            ("X-Awtui-Csrf", &csrf),
            ("Sec-Fetch-Site", "cross-site"),
        ],
    ];
    for headers in &forged {
        let a = http(web.port, "POST", &path, headers, &body);
        assert_eq!(a.status, 403, "{headers:?}: {}", a.body);
    }
    // Without the session: 401.
    let a = http(
        web.port,
        "POST",
        &path,
        &[
            ("Content-Type", "application/json"),
            ("X-Awtui-Csrf", &csrf),
        ],
        &body,
    );
    assert_eq!(a.status, 401);
    // The page's own post goes through the engine's Post command.
    let a = web.act(
        &id,
        json!({"action": "post", "text": "@planner hello from the browser"}),
    );
    assert_eq!(a.status, 200, "{}", a.body);
    let channel = wait_for("the post in the channel", || {
        let c = w.channel("demo");
        c.iter()
            .any(|m| m["from"] == "user" && m["message"] == "@planner hello from the browser")
            .then_some(c)
    });
    assert!(
        !channel
            .iter()
            .any(|m| m["message"].as_str().unwrap_or("").contains("forged")),
        "a forged post got through"
    );
    // Unknown actions and engine commands the page may not send are refused.
    let a = web.act(&id, json!({"action": "shutdown"}));
    assert_eq!(a.status, 400, "{}", a.body);
}

#[test]
fn an_approval_is_denied_with_its_reason_and_another_allowed_from_the_api() {
    let mut w = World::new();
    let log = approvals_workflow(&w);
    w.start_background("cc.yaml", "default");
    let web = Web::start(&mut w, &[]);
    let id = web.instance_id("default");
    let o = web.overview_when("the approval card", |o| {
        o["approvals"].as_array().unwrap().len() == 1
    });
    let card = &o["approvals"][0];
    assert_eq!(card["agent"], "cc");
    assert_eq!(card["tool"], "Bash");
    assert_eq!(card["lines"][0]["text"], "$ git push");
    assert!(
        o["attention"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["kind"] == "approval"),
        "{o}"
    );
    let a = web.act(
        &id,
        json!({"action": "approve", "request": card["id"], "verdict": "deny", "reason": "not on main"}),
    );
    assert_eq!(a.status, 200, "{}", a.body);
    let got = wait_answers(&log, 1);
    assert_eq!(
        got[0],
        json!({"behavior": "deny", "message": "Denied by user: not on main"})
    );
    web.overview_when("the card to close", |o| {
        o["approvals"].as_array().unwrap().is_empty()
    });
    // Answering it again says why not.
    let again = web.act(
        &id,
        json!({"action": "approve", "request": card["id"], "verdict": "allow"}),
    );
    assert_eq!(again.status, 422, "{}", again.body);
    assert!(again.body.contains("already answered"), "{}", again.body);
    // A new turn asks again; this time it is allowed.
    let a = web.act(&id, json!({"action": "post", "text": "@cc try again"}));
    assert_eq!(a.status, 200, "{}", a.body);
    let o = web.overview_when("a second card", |o| {
        o["approvals"].as_array().unwrap().len() == 1
    });
    let a = web.act(
        &id,
        json!({"action": "approve", "request": o["approvals"][0]["id"], "verdict": "allow"}),
    );
    assert_eq!(a.status, 200, "{}", a.body);
    let got = wait_answers(&log, 2);
    assert_eq!(got[1]["behavior"], "allow", "{got:?}");
}

#[test]
fn listening_beyond_loopback_needs_allow_remote_and_says_what_it_exposes() {
    let mut w = World::new();
    let r = w.run(&["web", "--listen", "0.0.0.0", "--port", "0"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr
            .contains("--listen 0.0.0.0 is not a loopback address")
            && r.stderr.contains("--allow-remote"),
        "{}",
        r.stderr
    );
    let mut web = Web::start(&mut w, &["--listen", "0.0.0.0", "--allow-remote"]);
    web.lines.wait_for("not loopback");
    assert!(
        web.lines
            .seen
            .iter()
            .any(|l| l.contains("approve or deny tool calls")),
        "{:?}",
        web.lines.seen
    );
    assert_eq!(web.get("/api/overview").status, 200);
}

#[test]
fn a_new_token_ends_every_session_of_a_running_server_and_the_file_is_0600() {
    let mut w = World::new();
    let first = Web::start_signed_out(&mut w, &[], "");
    let file = w.state.join("web").join("token");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file)
        .expect("the token file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), first.token);
    // The same (unspent) token on the next start.
    let same = Web::start_signed_out(&mut w, &[], "");
    assert_eq!(same.token, first.token);
    // Signed in at the first server: the token is spent, the file holds
    // the next one.
    assert_eq!(first.get("/api/overview").status, 200);
    let next = std::fs::read_to_string(&file).unwrap().trim().to_string();
    assert_ne!(next, first.token);
    let rotated = Web::start(&mut w, &["--new-token"]);
    assert_ne!(rotated.token, next);
    assert_eq!(rotated.get("/api/overview").status, 200);
    // The server already running ends its sessions and takes neither old
    // token.
    let ended = first.get("/api/overview");
    assert_eq!(ended.status, 401, "{}", ended.body);
    for old in [&first.token, &next] {
        assert_eq!(first.sign_in_with(old).status, 401);
    }
    // It takes the current one (what `awtui web --link` prints).
    let current = std::fs::read_to_string(&file).unwrap();
    assert_eq!(first.sign_in_with(current.trim()).status, 200);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
}

/// One request a webhook server got.
#[derive(Clone, Debug)]
struct Hooked {
    head: String,
    body: String,
}

/// A webhook server on a free port that answers 500 to the first
/// `failures` requests, then 200; what it got.
fn webhook_server(failures: usize) -> (u16, Arc<Mutex<Vec<Hooked>>>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let got = Arc::new(Mutex::new(Vec::new()));
    let seen = got.clone();
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            seen.lock().unwrap().push(Hooked {
                head,
                body: String::from_utf8_lossy(&body).into_owned(),
            });
            let status = if n < failures {
                "500 Internal Server Error"
            } else {
                "200 OK"
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
    });
    (port, got)
}

#[test]
fn a_new_attention_item_reaches_the_webhook_after_a_failure_without_the_token() {
    let (hook_port, got) = webhook_server(1);
    let mut w = World::new();
    let log = approvals_workflow(&w);
    // `awtui web` first: what waits when it starts is not sent, what comes
    // after is.
    let web = Web::start_with_config(
        &mut w,
        &[],
        &format!(
            "[notify.webhook]\nurl = \"http://127.0.0.1:{hook_port}/awtui\"\npriority = \"urgent\"\n"
        ),
    );
    let token = web.token.clone();
    let page = web.url.split('#').next().unwrap().to_string();
    w.start_background("cc.yaml", "default");
    let hooked = wait_for("the item after one failure and a retry", || {
        let g = got.lock().unwrap().clone();
        (g.len() >= 2).then_some(g)
    });
    // The same item twice: the failed attempt and the retry.
    assert_eq!(hooked[0].body, hooked[1].body);
    let h = &hooked[1];
    assert!(h.head.starts_with("POST /awtui HTTP/1.1"), "{}", h.head);
    let head = h.head.to_ascii_lowercase();
    assert!(
        head.contains("title: awtui: approval in @default"),
        "{}",
        h.head
    );
    assert!(head.contains("priority: urgent"), "{}", h.head);
    assert!(head.contains(&format!("click: {page}")), "{}", h.head);
    assert!(
        h.body.starts_with("cc: wants to run Bash: git push"),
        "{}",
        h.body
    );
    assert!(h.body.contains(&page), "the link back: {}", h.body);
    for x in &hooked {
        assert!(
            !x.body.contains(&token) && !x.head.contains(&token),
            "a token went out"
        );
    }
    // Nothing else was sent, and the engine was never held up: the call
    // is still waiting to be answered.
    assert!(web_support::answers(&log).is_empty());
}

#[test]
fn instances_started_before_and_after_are_followed_and_ended_ones_leave() {
    let mut w = World::demo();
    std::fs::copy(w.dir.join("demo.yaml"), w.dir.join("second.yaml")).unwrap();
    w.start_background("demo.yaml", "before");
    let web = Web::start(&mut w, &[]);
    web.instance_id("before");
    w.start_background("second.yaml", "after");
    let after = web.instance_id("after");
    assert!(
        web.get(&format!("/api/instances/{after}"))
            .body
            .contains("\"instance\":\"after\"")
    );
    assert_eq!(w.run(&["stop", "@before"]).code, 0);
    web.overview_when("the stopped instance to leave", |o| {
        let names: Vec<&str> = o["instances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["name"].as_str().unwrap())
            .collect();
        names == ["after"]
    });
}

/// Reads the live stream until a payload contains `needle`.
fn sse_until(web: &Web, needle: &str, then: impl FnOnce()) -> String {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", web.port)).unwrap();
    s.set_read_timeout(Some(cli_support::PATIENCE)).unwrap();
    write!(
        s,
        "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: {}\r\n\r\n",
        web.port,
        web.auth()
    )
    .unwrap();
    let mut reader = BufReader::new(s);
    let mut seen = String::new();
    let mut then = Some(then);
    loop {
        let mut line = String::new();
        let n = reader
            .read_line(&mut line)
            .expect("the stream (timed out?)");
        assert!(n > 0, "the stream ended: {seen}");
        seen.push_str(&line);
        if line.contains("\"type\":\"hello\"")
            && let Some(f) = then.take()
        {
            f();
        }
        if line.starts_with("data:") && line.contains(needle) {
            return line;
        }
    }
}

#[test]
fn live_events_arrive_on_the_stream_and_the_commands_reach_the_engine() {
    let (w, web, id) = demo_served();
    let line = sse_until(&web, "live over SSE", || {
        let a = web.act(&id, json!({"action": "post", "text": "live over SSE"}));
        assert_eq!(a.status, 200, "{}", a.body);
    });
    assert!(
        line.contains("\"kind\":\"message\"") && line.contains(&id),
        "{line}"
    );
    // Ack as the person, through the last message.
    let last = w.channel("demo").last().unwrap()["id"].as_u64().unwrap();
    assert_eq!(
        web.act(
            &id,
            json!({"action": "ack", "agent": "user", "until": last})
        )
        .status,
        200
    );
    wait_for("user's cursor to move", || {
        let s = web.get(&format!("/api/instances/{id}")).json();
        (s["cursors"]["user"]["acked"].as_u64() == Some(last)).then_some(())
    });
    // Stop and restart an agent.
    assert_eq!(
        web.act(&id, json!({"action": "stop", "agent": "planner"}))
            .status,
        200
    );
    let agent_status = |name: &str| {
        let s = web.get(&format!("/api/instances/{id}")).json();
        s["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .unwrap()["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    wait_for("planner stopped", || {
        (agent_status("planner") == "stopped").then_some(())
    });
    assert_eq!(
        web.act(&id, json!({"action": "restart", "agent": "planner"}))
            .status,
        200
    );
    wait_for("planner back", || {
        (agent_status("planner") != "stopped").then_some(())
    });
    // A bad agent name is the engine's refusal, told.
    let a = web.act(&id, json!({"action": "stop", "agent": "nobody"}));
    assert_eq!(a.status, 422, "{}", a.body);
    // Documents read through the engine.
    let d = web.get(&format!("/api/instances/{id}/document?file=notes.md"));
    assert_eq!(d.status, 200, "{}", d.body);
    assert_eq!(d.json()["file"], "notes.md");
    // Older messages on request: the window before a message.
    let older = web
        .get(&format!("/api/instances/{id}/messages?before=3"))
        .json();
    let ids: Vec<u64> = older["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [1, 2]);
}

#[test]
fn an_agents_diff_reads_whole_and_per_turn() {
    let mut w = World::new();
    cli_support::init_repo(
        &w.dir,
        &[
            (
                "team.yaml",
                "name: team\nworkspace: worktree\nagents:\n  a:\n    command: ./agent.sh\nkickoff: '@a please edit shared.txt'\n",
            ),
            (
                "agent.sh",
                "#!/bin/sh\ncat >/dev/null\necho \"a was here\" >> shared.txt\necho done\n",
            ),
        ],
    );
    w.start_background("team.yaml", "i");
    let web = Web::start(&mut w, &[]);
    let id = web.instance_id("i");
    let whole = wait_for("a's first turn committed", || {
        let d = web.get(&format!("/api/instances/{id}/diff?agent=a"));
        (d.status == 200 && !d.json()["steps"].as_array().unwrap().is_empty()).then(|| d.json())
    });
    assert!(
        whole["branch"].as_str().unwrap().contains("awtui/i/a"),
        "{whole}"
    );
    assert!(
        whole["patch"].as_str().unwrap().contains("+a was here"),
        "{whole}"
    );
    let turn = whole["steps"][0]["turn"].as_u64().unwrap();
    let one = web
        .get(&format!("/api/instances/{id}/diff?agent=a&turn={turn}"))
        .json();
    assert_eq!(one["turn"], turn);
    assert!(
        one["patch"].as_str().unwrap().contains("shared.txt"),
        "{one}"
    );
    // An agent without a workspace: the engine says why, as JSON.
    let none = web.get(&format!("/api/instances/{id}/diff?agent=nobody"));
    assert_eq!(none.status, 422, "{}", none.body);
    assert!(none.json()["error"].is_string());
}

#[test]
fn always_allow_from_the_api_keeps_a_rule_that_answers_the_next_call() {
    let mut w = World::new();
    let log = approvals_workflow(&w);
    w.start_background("cc.yaml", "default");
    let web = Web::start(&mut w, &[]);
    let id = web.instance_id("default");
    let o = web.overview_when("the approval card", |o| {
        o["approvals"].as_array().unwrap().len() == 1
    });
    let a = web.act(
        &id,
        json!({"action": "approve", "request": o["approvals"][0]["id"], "verdict": "allow", "always": true}),
    );
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(wait_answers(&log, 1)[0]["behavior"], "allow");
    // The next turn asks the same; the rule answers, no card shows.
    assert_eq!(
        web.act(&id, json!({"action": "post", "text": "@cc once more"}))
            .status,
        200
    );
    let got = wait_answers(&log, 2);
    assert_eq!(got[1]["behavior"], "allow", "{got:?}");
    assert!(
        web.get("/api/overview").json()["approvals"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let d = cli_support::approval_decisions(&w.state);
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!(d[1]["by"], "rule", "{d:?}");
}

#[test]
fn a_paused_instance_shows_in_attention_and_resumes_from_the_api() {
    let mut w = World::new();
    w.script("a.sh", "#!/bin/sh\ncat >/dev/null\necho '@b your turn'\n");
    w.script("b.sh", "#!/bin/sh\ncat >/dev/null\necho 'b is done'\n");
    std::fs::write(
        w.dir.join("pair.yaml"),
        "agents:\n  a:\n    command: ./a.sh\n  b:\n    command: ./b.sh\nlimits:\n  max_turns: 1\nkickoff: '@a go'\n",
    )
    .unwrap();
    w.start_background("pair.yaml", "pair");
    let web = Web::start(&mut w, &[]);
    let id = web.instance_id("pair");
    let o = web.overview_when("the pause in attention", |o| {
        o["attention"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["kind"] == "paused")
    });
    assert_eq!(o["instances"][0]["note"], "paused", "{o}");
    let s = web.get(&format!("/api/instances/{id}")).json();
    assert!(s["paused"].is_string(), "{s}");
    assert_eq!(web.act(&id, json!({"action": "resume"})).status, 200);
    wait_for("b's turn after the resume", || {
        w.channel("pair")
            .iter()
            .any(|m| m["from"] == "b" && m["message"] == "b is done")
            .then_some(())
    });
}

#[test]
fn sigterm_ends_it_with_a_live_stream_open_and_stdout_is_the_one_line() {
    let mut w = World::demo();
    w.start_background("demo.yaml", "demo");
    let mut web = Web::start(&mut w, &[]);
    web.instance_id("demo");
    // A page's live stream stays open while it stops.
    let mut s = std::net::TcpStream::connect(("127.0.0.1", web.port)).unwrap();
    write!(
        s,
        "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: {}\r\n\r\n",
        web.port,
        web.auth()
    )
    .unwrap();
    let mut first = [0u8; 12];
    s.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(web.pid as i32).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    assert_eq!(w.wait_child(web.pid), 0);
    web.lines.drain();
    let out: Vec<&String> = web
        .lines
        .seen
        .iter()
        .filter(|l| !l.starts_with("[stderr]"))
        .collect();
    assert_eq!(out, [&web.url], "stdout is the one line");
}

/// Issue 35: an ACP agent's row says `acp` and carries its running tool
/// call, plan and usage; its pieces come over the live stream as they
/// happen; `cancel` ends its turn (ACP's `session/cancel`), not the agent,
/// and a bad name is the engine's refusal.
#[test]
fn an_acp_agents_live_turn_is_served_and_cancel_ends_only_its_turn() {
    let mut w = World::new();
    let log = acp_live_support::acp_workflow(
        &w,
        "acp.yaml",
        &[
            acp_live_support::edit_turn(false),
            acp_live_support::edit_turn(true),
        ],
    );
    w.start_background("acp.yaml", "default");
    let web = Web::start(&mut w, &[]);
    let id = web.instance_id("default");
    let coder = |web: &Web| web.get(&format!("/api/instances/{id}")).json()["agents"][0].clone();
    wait_for("the first turn over", || {
        let a = coder(&web);
        (a["status"] == "idle" && a["live"]["calls"][0]["status"] == "completed").then_some(())
    });
    // The second turn's pieces arrive live.
    let line = sse_until(&web, "\"call\"", || {
        let a = web.act(&id, json!({"action": "post", "text": "@coder again"}));
        assert_eq!(a.status, 200, "{}", a.body);
    });
    assert!(
        line.contains("\"kind\":\"activity\"") && line.contains("Edit src/a.rs"),
        "{line}"
    );
    let a = wait_for("the held turn's call in the state", || {
        let a = coder(&web);
        (a["live"]["calls"][0]["status"] == "in_progress"
            && a["live"]["usage"]["input_tokens"] == 1234)
            .then_some(a)
    });
    assert_eq!(a["protocol"], "acp", "{a}");
    assert_eq!(a["live"]["calls"][0]["diffs"][0]["added"], 2, "{a}");
    assert_eq!(a["live"]["plan"][1]["content"], "write the test", "{a}");
    let c = web.act(&id, json!({"action": "cancel", "agent": "coder"}));
    assert_eq!(c.status, 200, "{}", c.body);
    wait_for("session/cancel at the agent", || {
        (acp_live_support::count(&log, "session/cancel") == 1).then_some(())
    });
    wait_for("the agent idle, not stopped", || {
        (coder(&web)["status"] == "idle").then_some(())
    });
    let bad = web.act(&id, json!({"action": "cancel", "agent": "nobody"}));
    assert_eq!(bad.status, 422, "{}", bad.body);
}

/// Issue 36: the page gets what agent operations leave: a thread state on
/// the message it closes (`threads`, with its words), and a surfaced note
/// as the agent's own plain message to the person, in the channel and in
/// the attention list under the agent's name.
#[test]
fn thread_states_and_surfaced_notes_reach_the_page() {
    let mut w = World::new();
    let file = cli_support::ops_workflow(&w);
    w.start_background(file, "ops");
    let web = Web::start(&mut w, &[]);
    let id = web.instance_id("ops");
    let o = web.overview_when("the surfaced note in attention", |o| {
        o["attention"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["kind"] == "mention" && i["from"] == "worker")
    });
    let item = o["attention"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["from"] == "worker")
        .unwrap();
    assert!(
        !item.to_string().contains("\\u001b"),
        "no escape sequence: {item}"
    );
    let s = web.get(&format!("/api/instances/{id}")).json();
    assert_eq!(s["threads"]["1"]["label"], "done by worker", "{s}");
    assert_eq!(s["threads"]["1"]["state"], "done");
    let note = s["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| cli_support::is_surfaced_note(m["text"].as_str().unwrap_or("")))
        .unwrap_or_else(|| panic!("no surfaced note: {s}"));
    assert_eq!(note["from"], "worker");
    assert_eq!(note["mentions"], json!(["user"]));
}

/// Issue 36: the page's text boxes fit a phone: every placeholder is at
/// most 24 characters (what a 360 px screen shows in the message box);
/// the rest of each hint is in its title.
#[test]
fn the_pages_placeholders_fit_a_phone() {
    let mut w = World::new();
    let web = Web::start(&mut w, &[]);
    let page = http(web.port, "GET", "/", &[], "");
    assert_eq!(page.status, 200);
    let placeholders: Vec<&str> = page
        .body
        .split("placeholder=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert!(placeholders.len() >= 2, "{}", page.body);
    for p in placeholders {
        assert!(p.chars().count() <= 24, "too long for a phone: {p:?}");
    }
}
