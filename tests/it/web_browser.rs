//! `awtui web` in a real browser: headless Chromium driven over WebDriver
//! (the distribution's `chromedriver`) against the real binary. The
//! attention list, the approval card and the channel render; a message
//! typed in the page reaches the channel; a card approved in the page lets
//! the call run and one denied with a reason carries the reason to the
//! model; agent text that looks like HTML stays text; a cross-site page
//! cannot post.
//!
//! With `AWTUI_WEB_SCREENSHOTS=<folder>`, `screenshots_at_phone_and_desktop_sizes`
//! writes `web-phone.png` (390×844), `web-desktop.png` (1280×800) and
//! `web-live.png` (one ACP agent's live view, 1280×800) there
//! (`scripts/screenshots/web.sh`).

use crate::acp_live_support;
use crate::cli_support;
use crate::web_support;

use std::io::{Read, Write};

use cli_support::{World, wait_for};
use serde_json::json;
use web_support::webdriver::Browser;
use web_support::{Web, approvals_workflow, wait_answers};

const XSS: &str = "<img src=x onerror=alert(1)>";

#[test]
fn the_page_renders_the_channel_posts_from_its_box_and_keeps_hostile_text_as_text() {
    let mut w = World::demo();
    w.start_background("demo.yaml", "demo");
    let web = Web::start(&mut w, &[]);
    web.instance_id("demo");
    let b = Browser::start(1280, 800);
    b.go(&web.link());
    // The token left the address bar.
    let at = b.script("return location.href");
    let at = at.as_str().unwrap();
    assert!(
        at.starts_with(&format!("http://127.0.0.1:{}/", web.port)) && !at.contains("token"),
        "{at}"
    );
    b.wait_script(
        "the kickoff in the channel",
        "return [...document.querySelectorAll('#channel .msg')].some(m => m.textContent.includes('add a --shout flag'))",
    );
    b.wait_element("#instances .inst.on");
    // @name completion from the agents' names.
    let compose = b.wait_element("#compose");
    b.type_into(&compose, "@plan");
    let choice = b.wait_element("#completions button");
    assert_eq!(b.text(&choice), "@planner");
    b.click(&choice);
    b.type_into(&compose, &format!("look: {XSS}"));
    b.click(&b.wait_element("#send"));
    let posted = format!("@planner look: {XSS}");
    wait_for("the post in the channel on disk", || {
        w.channel("demo")
            .iter()
            .any(|m| m["from"] == "user" && m["message"] == posted.as_str())
            .then_some(())
    });
    // It comes back over the live stream, as text.
    b.wait_script(
        "the hostile message shown as text",
        &format!(
            "return [...document.querySelectorAll('#channel .msg .text')].some(t => t.textContent === {})",
            json!(posted)
        ),
    );
    assert_eq!(
        b.script("return document.querySelectorAll('img').length"),
        0
    );
    assert_eq!(b.alert(), None, "an alert opened");
    // Keys: `2` shows the agents, `1` the channel again.
    b.press("\u{E00C}");
    b.press("2");
    b.wait_script(
        "the agents tab",
        "return !document.getElementById('tab-agents').hidden && document.querySelectorAll('#agents .agent').length === 3",
    );
    b.press("1");
    b.wait_script(
        "the channel tab",
        "return !document.getElementById('tab-channel').hidden",
    );
    // Visible as typed (innerText: what the person sees).
    let shown = b.script(
        "return [...document.querySelectorAll('#channel .msg .text')].map(t => t.innerText).find(t => t.includes('onerror')) || ''",
    );
    assert!(shown.as_str().unwrap().contains(XSS), "{shown}");
}

#[test]
fn an_approval_card_denies_with_a_reason_and_allows_from_the_page() {
    let mut w = World::new();
    let log = approvals_workflow(&w);
    w.start_background("cc.yaml", "default");
    let web = Web::start(&mut w, &[]);
    web.instance_id("default");
    let b = Browser::start(390, 844);
    b.go(&web.link());
    b.wait_element("#approvals .approval");
    let text = b.script("return document.querySelector('#approvals .approval').textContent");
    let text = text.as_str().unwrap();
    assert!(
        text.contains("@cc wants to run Bash") && text.contains("$ git push"),
        "{text}"
    );
    // The attention list names it too, and the tab title counts.
    b.wait_script(
        "the approval in the attention list",
        "return document.querySelector('#attention .k-approval')",
    );
    b.wait_script(
        "the count in the title",
        "return /^\\(\\d+\\) awtui$/.test(document.title)",
    );
    // Phone layout: the approvals come first.
    let order = b.script(
        "const a = document.querySelector('#approvals-box').getBoundingClientRect().top; \
         const c = document.querySelector('#channel').getBoundingClientRect().top; return a < c",
    );
    assert_eq!(order, true);
    let reason = b.wait_element("#approvals .approval .reason");
    b.type_into(&reason, "not on main");
    b.click(&b.wait_element("#approvals .approval .deny"));
    let got = wait_answers(&log, 1);
    assert_eq!(
        got[0],
        json!({"behavior": "deny", "message": "Denied by user: not on main"})
    );
    b.wait_script(
        "the card closed",
        "return document.querySelectorAll('#approvals .approval').length === 0",
    );
    // New items raise a browser notification (the page asks the browser's
    // Notification; here a stand-in records them, as headless Chromium
    // shows none).
    b.script(
        "window.__shown = []; \
         window.Notification = function (title, o) { window.__shown.push(title + ' | ' + o.body); }; \
         window.Notification.permission = 'granted'; return true",
    );
    // A new turn from the page's box asks again; allowed from its card.
    b.click(&b.wait_element("#tabs button[data-tab=channel]"));
    let compose = b.wait_element("#compose");
    b.type_into(&compose, "@cc try again\n");
    // The desktop key: `y` allows the first card (Escape leaves the box
    // first).
    b.wait_element("#approvals .approval .allow");
    b.press("\u{E00C}");
    b.press("y");
    let got = wait_answers(&log, 2);
    assert_eq!(got[1]["behavior"], "allow", "{got:?}");
    // A decision made in the shell closes the card in the page.
    let id = web.instance_id("default");
    assert_eq!(
        web.act(&id, json!({"action": "post", "text": "@cc and again"}))
            .status,
        200
    );
    b.wait_element("#approvals .approval");
    // The third request (#1 and #2 are answered; the overview may still
    // list #2 a moment after its answer).
    let o = web.overview_when("the third card", |o| {
        let cards = o["approvals"].as_array().unwrap();
        cards.len() == 1 && cards[0]["id"].as_u64().is_some_and(|id| id > 2)
    });
    let n = o["approvals"][0]["id"].to_string();
    let r = w.run(&[
        "deny",
        &n,
        "--reason",
        "from the shell",
        "--instance",
        "default",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    b.wait_script(
        "the card closed by the shell's decision",
        "return document.querySelectorAll('#approvals .approval').length === 0",
    );
    assert_eq!(wait_answers(&log, 3)[2]["behavior"], "deny");
    let shown = b.script("return window.__shown");
    assert!(
        shown.as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("awtui: @cc wants Bash | git push")),
        "{shown}"
    );
}

/// Serves one tiny page (another origin: `localhost` on another port).
fn other_site() -> u16 {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let page = "<!doctype html><title>elsewhere</title><p>elsewhere</p>";
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                page.len()
            );
        }
    });
    port
}

#[test]
fn a_cross_site_page_cannot_post_and_no_token_gets_401() {
    let mut w = World::demo();
    w.start_background("demo.yaml", "demo");
    let web = Web::start(&mut w, &[]);
    let id = web.instance_id("demo");
    let b = Browser::start(1280, 800);
    // Without the token: 401 and nothing of the instance.
    b.go(&format!("http://127.0.0.1:{}/", web.port));
    let body = b.wait_script(
        "the sign-in message",
        "return document.body && document.body.textContent.includes('open the address') && document.body.textContent",
    );
    assert!(!body.as_str().unwrap().contains("planner"), "{body}");
    // Signed in, then a page of another site tries every way to post.
    b.go(&web.link());
    b.wait_element("#channel .msg");
    b.go(&format!("http://localhost:{}/", other_site()));
    let target = format!("http://127.0.0.1:{}/api/instances/{id}/action", web.port);
    b.script(&format!(
        "const u = {}; const body = JSON.stringify({{action: 'post', text: 'forged from elsewhere'}});
         fetch(u, {{method: 'POST', mode: 'no-cors', credentials: 'include', headers: {{'Content-Type': 'text/plain'}}, body}}).catch(() => {{}});
         fetch(u, {{method: 'POST', credentials: 'include', headers: {{'Content-Type': 'application/json', 'X-Awtui-Csrf': 'guess'}}, body}}).catch(() => {{}});
         const f = document.createElement('form'); f.method = 'POST'; f.action = u; f.enctype = 'text/plain';
         const i = document.createElement('input'); i.name = 'x'; i.value = body; f.appendChild(i);
         document.body.appendChild(f); f.submit(); return true;",
        json!(target)
    ));
    // The form's answer is the refusal.
    b.wait_script(
        "the form's refusal",
        "return document.body && /401|403|open the address|refused/.test(document.body.textContent)",
    );
    // A real post after them: once it is in, the forged ones would be too.
    let a = web.act(&id, json!({"action": "post", "text": "barrier"}));
    assert_eq!(a.status, 200, "{}", a.body);
    let channel = wait_for("the barrier post", || {
        let c = w.channel("demo");
        c.iter().any(|m| m["message"] == "barrier").then_some(c)
    });
    assert!(
        !channel
            .iter()
            .any(|m| m["message"].as_str().unwrap_or("").contains("forged")),
        "a cross-site post got through"
    );
    // A link to the page followed from another site (a webhook's) carries
    // no credential; the page signs itself in from its own storage.
    b.go(&format!("http://localhost:{}/", other_site()));
    b.script(&format!(
        "const a = document.createElement('a'); a.href = {}; a.textContent = 'open'; \
         document.body.appendChild(a); a.click(); return true;",
        json!(format!("http://127.0.0.1:{}/", web.port))
    ));
    b.wait_script(
        "the page after a cross-site link",
        "return location.port && document.querySelectorAll('#channel .msg').length > 0",
    );
}

#[test]
fn screenshots_at_phone_and_desktop_sizes() {
    let Some(dir) = std::env::var_os("AWTUI_WEB_SCREENSHOTS") else {
        // Made on request by scripts/screenshots/web.sh; the other tests
        // here drive the same page.
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let mut w = World::demo();
    let log = approvals_workflow(&w);
    w.start_background("demo.yaml", "demo");
    w.start_background("cc.yaml", "default");
    let web = Web::start(&mut w, &[]);
    let demo = web.instance_id("demo");
    web.instance_id("default");
    web.overview_when("the approval card", |o| {
        !o["approvals"].as_array().unwrap().is_empty()
    });
    // The demo's agents finish their run; a question for the person, and
    // a message with an AOP block and an Agent Mail record.
    wait_for("the demo's reviewer to answer", || {
        w.channel("demo")
            .iter()
            .any(|m| m["from"] == "reviewer")
            .then_some(())
    });
    for text in [
        "@coder please also add a test for --shout",
        "@reviewer looks good; anything else before we merge?",
    ] {
        assert_eq!(
            web.act(&demo, json!({"action": "post", "text": text}))
                .status,
            200
        );
    }
    let b = Browser::start(390, 844);
    b.go(&format!("{}&i={demo}", web.link()));
    b.wait_element("#approvals .approval");
    b.wait_script(
        "the channel",
        "return document.querySelectorAll('#channel .msg').length > 3",
    );
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("web-phone.png"), b.screenshot()).unwrap();
    b.resize(1280, 800);
    b.wait_script("the desktop layout", "return window.innerWidth >= 1000");
    b.script(
        "const c = document.getElementById('channel'); c.scrollTop = c.scrollHeight; return true",
    );
    std::fs::write(dir.join("web-desktop.png"), b.screenshot()).unwrap();
    drop(log);
    // One ACP agent's live view mid-turn: its edit with the diff, its
    // plan, its usage.
    let mut w = World::new();
    acp_live_support::acp_workflow(&w, "acp.yaml", &[acp_live_support::edit_turn(true)]);
    w.start_background("acp.yaml", "default");
    let web = Web::start(&mut w, &[]);
    web.instance_id("default");
    let b = Browser::start(1280, 800);
    b.go(&web.link());
    open_live(&b, "coder");
    b.wait_script(
        "the edit, the plan and the usage",
        "return !!document.querySelector('#live-calls .call pre') && document.querySelectorAll('#live-plan li').length === 2 \
         && document.getElementById('live-usage').textContent.includes('$0.0500')",
    );
    std::fs::write(dir.join("web-live.png"), b.screenshot()).unwrap();
}

/// Opens `agent`'s live view from its card in the agents tab.
fn open_live(b: &Browser, agent: &str) {
    // The instance opens once its state came (its tabs are hidden before).
    b.wait_element("#instances .inst.on");
    b.wait_script(
        "the instance shown with its agents",
        &format!(
            "return !document.getElementById('instance').hidden && !!document.querySelector('#agents li[data-agent={agent}]')"
        ),
    );
    b.click(&b.wait_element("#tabs button[data-tab=agents]"));
    b.click(&b.wait_element(&format!("#agents li[data-agent={agent}] .open-live")));
    b.wait_script(
        "the live view",
        "return !document.getElementById('tab-live').hidden",
    );
}

/// Nothing the agent sent ran: no image, no script but the page's own,
/// no handler fired, no alert, no escape character in the document.
fn assert_inert(b: &Browser) {
    assert_eq!(
        b.script("return document.querySelectorAll('img, iframe, object, embed').length"),
        0
    );
    assert_eq!(
        b.script("return [...document.scripts].map(s => s.getAttribute('src')).join(' ')"),
        "/signin.js /app.js"
    );
    assert_eq!(
        b.script("return window.__pwned === undefined"),
        true,
        "agent markup ran"
    );
    assert_eq!(b.alert(), None, "an alert opened");
    assert_eq!(
        b.script(
            "return /[\\u0000-\\u0008\\u000b-\\u001f\\u007f]/.test(document.body.textContent)"
        ),
        false,
        "a control character reached the page"
    );
}

/// Issue 35: the live view of a hostile ACP agent shows its tool call's
/// title, file and diff preview, its plan and its streamed text exactly as
/// text (markup never parsed, escapes gone); Esc cancels its turn over
/// ACP (`session/cancel`) and leaves it idle; a line typed there reaches
/// the channel addressed to it and wakes the same process, and the Cancel
/// button cancels that turn too.
#[test]
fn the_live_view_shows_a_hostile_agents_structure_inert_types_to_it_and_cancels() {
    let mut w = World::new();
    let log = acp_live_support::acp_workflow(&w, "acp.yaml", &[acp_live_support::hostile_turn()]);
    w.start_background("acp.yaml", "default");
    let web = Web::start(&mut w, &[]);
    web.instance_id("default");
    let b = Browser::start(1280, 800);
    b.go(&web.link());
    open_live(&b, "coder");
    b.wait_script(
        "the hostile title shown as text",
        &format!(
            "const t = document.querySelector('#live-calls .call .title'); return !!t && t.textContent === {}",
            json!(acp_live_support::HOSTILE_TITLE_SHOWN)
        ),
    );
    b.wait_script(
        "the plan, the diff, the file, the text and the usage",
        "const live = document.getElementById('tab-live').textContent; \
         return live.includes('<script>window.__pwned=5</script>') \
           && live.includes('+<img src=x onerror=window.__pwned=4>') \
           && live.includes('src/<img src=x onerror=window.__pwned=3>.rs') \
           && live.includes('+red') \
           && document.getElementById('live-text').textContent.includes('<img src=x onerror=window.__pwned=6>streamed') \
           && document.getElementById('live-usage').textContent.includes('$0.0500') \
           && document.getElementById('live-proto').textContent === 'acp'",
    );
    assert_inert(&b);
    // Esc cancels the running turn, not the agent: ACP's session/cancel
    // reaches it, and it stays runnable.
    b.press("\u{E00C}");
    wait_for("session/cancel at the agent", || {
        (acp_live_support::count(&log, "session/cancel") == 1).then_some(())
    });
    b.wait_script(
        "the agent idle after its cancelled turn",
        "return document.getElementById('live-status').textContent === 'idle'",
    );
    // A line to the agent: in the channel, addressed to it; it wakes the
    // agent (the same process and session), whose turn the button cancels.
    let prompts = acp_live_support::count(&log, "session/prompt");
    let input = b.wait_element("#live-input");
    b.type_into(&input, "<b>hi</b> go on\n");
    wait_for("the line in the channel", || {
        w.channel("default")
            .iter()
            .any(|m| m["from"] == "user" && m["message"] == "@coder <b>hi</b> go on")
            .then_some(())
    });
    wait_for("a new turn", || {
        (acp_live_support::count(&log, "session/prompt") > prompts).then_some(())
    });
    assert_eq!(
        acp_live_support::count(&log, "initialize"),
        1,
        "the agent was started again"
    );
    b.wait_script(
        "the new turn running",
        "return document.getElementById('live-status').textContent !== 'idle' && !!document.querySelector('#live-calls .call')",
    );
    b.click(&b.wait_element("#live-cancel"));
    wait_for("a second session/cancel", || {
        (acp_live_support::count(&log, "session/cancel") == 2).then_some(())
    });
    b.wait_script(
        "the agent idle again",
        "return document.getElementById('live-status').textContent === 'idle'",
    );
    assert_inert(&b);
}

/// Issue 35: an agent flooding 10,000 tool calls into its turn leaves the
/// page with its newest few (the last one the backend kept among them), in
/// the live view and in the instance's JSON alike.
#[test]
fn a_flood_of_tool_calls_stays_bounded_in_the_page() {
    let mut w = World::new();
    acp_live_support::acp_workflow(
        &w,
        "acp.yaml",
        &[
            acp_live_support::edit_turn(false),
            acp_live_support::flood_turn(true),
        ],
    );
    w.start_background("acp.yaml", "default");
    let web = Web::start(&mut w, &[]);
    let id = web.instance_id("default");
    let b = Browser::start(1280, 800);
    b.go(&web.link());
    open_live(&b, "coder");
    // The first turn ends; the flood comes live, into the open page.
    b.wait_script(
        "the first turn's call, completed",
        "const c = document.querySelector('#live-calls .call'); return !!c && c.classList.contains('s-completed') \
         && document.getElementById('live-status').textContent === 'idle'",
    );
    b.script("window.__marker = 1; return true");
    let a = web.act(&id, json!({"action": "post", "text": "@coder flood me"}));
    assert_eq!(a.status, 200, "{}", a.body);
    b.wait_script(
        "the flood's last call in the live view",
        "const c = [...document.querySelectorAll('#live-calls .call .title')]; \
         return c.length > 0 && c[c.length - 1].textContent === 'flood 1999'",
    );
    // Folded live (the page was not loaded again).
    assert_eq!(b.script("return window.__marker"), 1);
    let n = b.script("return document.querySelectorAll('#live-calls .call').length");
    assert!(n.as_u64().unwrap() <= 40, "{n} calls in the page");
    let kept = b.script("return S.state.agents[0].live.calls.length");
    assert!(
        kept.as_u64().unwrap() <= 40,
        "{kept} calls kept by the page"
    );
    let state = web.get(&format!("/api/instances/{id}"));
    assert_eq!(state.status, 200, "{}", state.body);
    assert!(state.body.len() < 512 * 1024, "{} bytes", state.body.len());
    let calls = state.json()["agents"][0]["live"]["calls"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(calls, 40);
}

/// Issue 36, at a phone's width (360 px): `?` closes by a tap outside
/// it; a mention of @user carries its delivery mark like any other; the
/// attention list's Ack says it acknowledges everything up to its message
/// (acks are a cursor), and once it is pressed the mark says acked.
#[test]
fn on_a_phone_help_closes_outside_user_mentions_are_marked_and_ack_says_what_it_acks() {
    let mut w = World::new();
    let file = cli_support::ops_workflow(&w);
    w.start_background(file, "ops");
    let web = Web::start(&mut w, &[]);
    web.instance_id("ops");
    let b = Browser::start(360, 740);
    b.go(&web.link());
    b.click(&b.wait_element("#help-on"));
    b.wait_script(
        "the help open",
        "return !document.getElementById('help').hidden",
    );
    b.click(&b.wait_element("#top .brand"));
    b.wait_script(
        "the help closed by a tap outside it",
        "return document.getElementById('help').hidden",
    );
    let user_mark = |state: &str| {
        format!(
            "return [...document.querySelectorAll('#channel .msg .mark{state}')].some(m => m.textContent.startsWith('@user '))"
        )
    };
    b.wait_script("the surfaced note's mark for @user", &user_mark(""));
    let ack = b.wait_element("#attention button.ack");
    let label = b.text(&ack);
    let note = w
        .channel("ops")
        .into_iter()
        .find(|m| m["from"] == "worker" && m["mentions"] == json!(["user"]))
        .expect("the surfaced note");
    assert_eq!(label, format!("Ack up to #{}", note["id"]), "{label}");
    b.script("document.querySelector('#attention button.ack').click(); return true");
    b.wait_script("the @user mark acked", &user_mark(".acked"));
    web.overview_when("no mention waiting once acked", |o| {
        o["attention"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["kind"] != "mention")
    });
}
