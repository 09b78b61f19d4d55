//! A tiny WebDriver client (the W3C protocol over [`super::http`]) and a
//! headless Chromium driven by the distribution's `chromedriver`. A missing
//! `chromium` or `chromedriver` fails the test (`.ci/run` installs them).

use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use super::{free_port, http};
use crate::cli_support::wait_for;

/// Where the distribution puts them.
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// The browser.
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// The key of an element reference in WebDriver answers.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A browser session; the driver and the browser end when it is dropped.
pub struct Browser {
    driver: Child,
    port: u16,
    session: String,
    /// The browser's profile folder (taken by [`Browser::quit`]).
    profile: Option<tempfile::TempDir>,
}

impl Browser {
    /// Starts `chromedriver` and a headless Chromium of `width`×`height`.
    pub fn start(width: u32, height: u32) -> Browser {
        for tool in [CHROMEDRIVER, CHROMIUM] {
            assert!(
                Path::new(tool).exists(),
                "{tool} is missing: these tests need chromium and chromium-driver \
                 (apt-get install chromium chromium-driver; .ci/run installs them)"
            );
        }
        let port = free_port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let mut b = Browser {
            driver,
            port,
            session: String::new(),
            profile: Some(tempfile::tempdir().unwrap()),
        };
        wait_for("chromedriver to be ready", || {
            std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
            let a = http(port, "GET", "/status", &[], "");
            (a.status == 200 && a.json()["value"]["ready"] == true).then_some(())
        });
        let profile = b.profile.as_ref().unwrap().path().display().to_string();
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", "--hide-scrollbars",
                    format!("--user-data-dir={profile}"),
                    format!("--window-size={width},{height}"),
                ],
            },
        }}});
        let v = b.call("POST", "/session", caps);
        b.session = v["sessionId"].as_str().expect("a session").to_string();
        b.resize(width, height);
        b
    }

    /// One WebDriver command; its `value` (panics on a WebDriver error).
    fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let v = self.try_call(method, path, body);
        match v {
            Ok(v) => v,
            Err(e) => panic!("WebDriver {method} {path}: {e}"),
        }
    }

    /// One WebDriver command; its `value` or the error.
    fn try_call(&self, method: &str, path: &str, body: Value) -> Result<Value, Value> {
        let text = if method == "GET" || method == "DELETE" {
            String::new()
        } else {
            body.to_string()
        };
        let a = http(
            self.port,
            method,
            path,
            &[("Content-Type", "application/json")],
            &text,
        );
        let v = a.json();
        if a.status == 200 {
            Ok(v["value"].clone())
        } else {
            Err(v["value"].clone())
        }
    }

    fn at(&self, what: &str) -> String {
        format!("/session/{}/{what}", self.session)
    }

    /// Opens `url`.
    pub fn go(&self, url: &str) {
        self.call("POST", &self.at("url"), json!({"url": url}));
    }

    /// Goes one entry back in the tab's history, as the Back button does.
    pub fn back(&self) {
        self.call("POST", &self.at("back"), json!({}));
    }

    /// Goes one entry forward in the tab's history.
    pub fn forward(&self) {
        self.call("POST", &self.at("forward"), json!({}));
    }

    /// Ends the browser (it writes its history and session files out) and
    /// hands back its profile folder, for a test that reads them as an
    /// attacker would.
    pub fn quit(mut self) -> tempfile::TempDir {
        let session = std::mem::take(&mut self.session);
        let _ = self.try_call("DELETE", &format!("/session/{session}"), json!({}));
        self.end_driver();
        self.profile.take().expect("the profile folder")
    }

    /// Ends chromedriver (and with it the browser).
    fn end_driver(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }

    /// The elements matching the CSS `selector`.
    pub fn find_all(&self, selector: &str) -> Vec<String> {
        self.call(
            "POST",
            &self.at("elements"),
            json!({"using": "css selector", "value": selector}),
        )
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e[ELEMENT].as_str().unwrap().to_string())
        .collect()
    }

    /// The first element matching `selector`, once there is one.
    pub fn wait_element(&self, selector: &str) -> String {
        wait_for(&format!("an element {selector}"), || {
            self.find_all(selector).into_iter().next()
        })
    }

    /// An element's visible text.
    pub fn text(&self, element: &str) -> String {
        self.call(
            "GET",
            &self.at(&format!("element/{element}/text")),
            json!({}),
        )
        .as_str()
        .unwrap_or("")
        .to_string()
    }

    /// Types `keys` into an element.
    pub fn type_into(&self, element: &str, keys: &str) {
        self.call(
            "POST",
            &self.at(&format!("element/{element}/value")),
            json!({"text": keys}),
        );
    }

    /// Clicks an element.
    pub fn click(&self, element: &str) {
        self.call(
            "POST",
            &self.at(&format!("element/{element}/click")),
            json!({}),
        );
    }

    /// Presses and releases one key on whatever has the focus.
    pub fn press(&self, key: &str) {
        self.call(
            "POST",
            &self.at("actions"),
            json!({"actions": [{"type": "key", "id": "keyboard", "actions": [
                {"type": "keyDown", "value": key},
                {"type": "keyUp", "value": key},
            ]}]}),
        );
    }

    /// Runs `script` (a function body) in the page; what it returns.
    pub fn script(&self, script: &str) -> Value {
        self.call(
            "POST",
            &self.at("execute/sync"),
            json!({"script": script, "args": []}),
        )
    }

    /// Waits until `script` returns something truthy; that value.
    pub fn wait_script(&self, what: &str, script: &str) -> Value {
        wait_for(what, || {
            let v = self.script(script);
            let truthy = !(v.is_null() || v == false || v == "" || v == 0);
            truthy.then_some(v)
        })
    }

    /// The text of an open `alert()`, if one is open.
    pub fn alert(&self) -> Option<String> {
        self.try_call("GET", &self.at("alert/text"), json!({}))
            .ok()
            .map(|v| v.as_str().unwrap_or("").to_string())
    }

    /// Makes the viewport exactly `width`×`height` CSS pixels (the window
    /// size includes the browser's own frame), as a phone when narrow.
    pub fn resize(&self, width: u32, height: u32) {
        self.call(
            "POST",
            &self.at("goog/cdp/execute"),
            json!({"cmd": "Emulation.setDeviceMetricsOverride", "params": {
                "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600,
            }}),
        );
    }

    /// A PNG of the viewport.
    pub fn screenshot(&self) -> Vec<u8> {
        let b64 = self.call("GET", &self.at("screenshot"), json!({}));
        base64_decode(b64.as_str().unwrap())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = self.try_call("DELETE", &format!("/session/{}", self.session), json!({}));
        }
        self.end_driver();
    }
}

/// Standard base64 (no crate for one screenshot).
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let digits: Vec<u32> = text.bytes().filter_map(value).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, d)| acc | d << (18 - 6 * i));
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len().saturating_sub(1)]);
    }
    out
}
