//! Attention items sent to a webhook while nobody looks at the page: each
//! new item (see [`crate::tui::notify::Notifier`]: what waited before
//! `awtui web` started does not go out) is POSTed to the URL of
//! `[notify.webhook]` in the user's `config.toml`:
//!
//! ```toml
//! [notify.webhook]
//! url = "https://ntfy.sh/my-awtui-topic"
//! format = "ntfy"        # "ntfy" (plain text, Title/Priority headers) or "json"
//! priority = "high"      # ntfy's Priority header (min, low, default, high, urgent)
//! link = "http://127.0.0.1:7780/"   # where the link points (default: the page)
//! ```
//!
//! The body carries a link back to the page, never a token. Deliveries run
//! in their own task from a bounded queue (the poll never waits on them);
//! a failure (no answer, a non-2xx status) is retried with back-off and
//! logged to awtui's log, never printed.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::tui::attention::AttentionItem;

/// How a webhook wants its body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// ntfy-style: the text as the body, `Title`, `Priority`, `Click` and
    /// `Tags` headers.
    Ntfy,
    /// A JSON object (`text` and `content` for chat webhooks, and each
    /// field on its own).
    Json,
}

/// `[notify.webhook]`, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Webhook {
    /// Where to POST.
    pub url: String,
    /// The body's shape.
    pub format: Format,
    /// ntfy's priority.
    pub priority: String,
    /// Where the link points; the page's own address when `None`.
    pub link: Option<String>,
}

/// `[notify.webhook]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWebhook {
    url: String,
    format: Option<String>,
    priority: Option<String>,
    link: Option<String>,
}

impl RawWebhook {
    /// The checked settings; the error names the bad entry.
    pub fn check(&self) -> Result<Webhook, String> {
        let http = |u: &str| u.starts_with("http://") || u.starts_with("https://");
        if !http(&self.url) {
            return Err(format!(
                "[notify.webhook] url = \"{}\": expected an http:// or https:// address",
                crate::sanitize::for_terminal(&self.url)
            ));
        }
        let format = match self.format.as_deref().unwrap_or("ntfy") {
            "ntfy" => Format::Ntfy,
            "json" => Format::Json,
            other => {
                return Err(format!(
                    "[notify.webhook] format = \"{}\": expected \"ntfy\" or \"json\"",
                    crate::sanitize::for_terminal(other)
                ));
            }
        };
        let priority = self.priority.clone().unwrap_or_else(|| "high".into());
        if priority.is_empty() || !priority.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(format!(
                "[notify.webhook] priority = \"{}\": expected a word such as high or a number 1-5",
                crate::sanitize::for_terminal(&priority)
            ));
        }
        if let Some(link) = &self.link
            && !http(link)
        {
            return Err(format!(
                "[notify.webhook] link = \"{}\": expected an http:// or https:// address",
                crate::sanitize::for_terminal(link)
            ));
        }
        Ok(Webhook {
            url: self.url.clone(),
            format,
            priority,
            link: self.link.clone(),
        })
    }
}

/// How many attempts one item gets.
pub const ATTEMPTS: u32 = 6;
/// The wait before the first retry; it doubles after each.
pub const FIRST_RETRY: Duration = Duration::from_secs(1);
/// How long one attempt may take.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);
/// How many items may wait for delivery.
const QUEUE: usize = 256;

/// One delivery: the headers and the body.
#[derive(Clone, Debug, PartialEq)]
pub struct Delivery {
    /// Extra headers.
    pub headers: Vec<(&'static str, String)>,
    /// The content type.
    pub content_type: &'static str,
    /// The body.
    pub body: String,
}

/// Only printable ASCII in a header (agent text may hold anything).
fn header_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .take(250)
        .collect()
}

/// What is sent for `item`, linking to `link` (no token in either).
pub fn delivery(hook: &Webhook, item: &AttentionItem, link: &str) -> Delivery {
    let title = format!("awtui: {} in @{}", item.kind.label(), item.instance);
    let summary = crate::secrets::redact(&item.summary).into_owned();
    let line = if item.from.is_empty() {
        summary.clone()
    } else {
        format!("{}: {summary}", item.from)
    };
    match hook.format {
        Format::Ntfy => Delivery {
            headers: vec![
                ("Title", header_safe(&title)),
                ("Priority", hook.priority.clone()),
                ("Click", header_safe(link)),
                ("Tags", header_safe(&format!("awtui,{}", item.kind.label()))),
            ],
            content_type: "text/plain; charset=utf-8",
            body: format!("{line}\n{link}"),
        },
        Format::Json => Delivery {
            headers: Vec::new(),
            content_type: "application/json",
            body: json!({
                "text": format!("{title}\n{line}\n{link}"),
                "content": format!("{title}\n{line}\n{link}"),
                "title": title,
                "priority": hook.priority,
                "kind": item.kind.label(),
                "instance": item.instance,
                "from": item.from,
                "summary": summary,
                "at": item.when,
                "link": link,
            })
            .to_string(),
        },
    }
}

/// Starts the sender; attention items put in the returned queue go out
/// one by one until `stop`. `page` is the page's address (no token).
pub fn spawn(hook: Webhook, page: String, stop: CancellationToken) -> mpsc::Sender<AttentionItem> {
    let (tx, mut rx) = mpsc::channel::<AttentionItem>(QUEUE);
    let link = hook.link.clone().unwrap_or(page);
    tokio::spawn(async move {
        let http = crate::http_client::client();
        loop {
            let item = tokio::select! {
                () = stop.cancelled() => break,
                i = rx.recv() => match i { Some(i) => i, None => break },
            };
            let d = delivery(&hook, &item, &link);
            let mut wait = FIRST_RETRY;
            for attempt in 1..=ATTEMPTS {
                let mut req = http
                    .post(&hook.url)
                    .timeout(ATTEMPT_TIMEOUT)
                    .header(reqwest::header::CONTENT_TYPE, d.content_type)
                    .body(d.body.clone());
                for (k, v) in &d.headers {
                    req = req.header(*k, v.as_str());
                }
                let why = match req.send().await {
                    Ok(r) if r.status().is_success() => {
                        tracing::info!("webhook: sent {} (attempt {attempt})", item.key());
                        break;
                    }
                    Ok(r) => format!("status {}", r.status()),
                    Err(e) => e.without_url().to_string(),
                };
                if attempt == ATTEMPTS {
                    tracing::warn!(
                        "webhook: gave up on {} after {ATTEMPTS} attempts: {why}",
                        item.key()
                    );
                    break;
                }
                tracing::warn!(
                    "webhook: attempt {attempt} for {} failed ({why}); retrying in {}s",
                    item.key(),
                    wait.as_secs()
                );
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(wait) => {}
                }
                wait *= 2;
            }
        }
    });
    tx
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::attention::{AttentionKind, Jump};

    fn item() -> AttentionItem {
        AttentionItem {
            instance: "demo".into(),
            home: "/w/.workflow/demo".into(),
            kind: AttentionKind::HelpRequest,
            when: chrono::Utc::now(),
            from: "coder".into(),
            summary: "which branch? ünïcode".into(),
            jump: Jump::Message(3),
        }
    }

    #[test]
    fn ntfy_and_json_bodies_carry_the_item_and_the_link() {
        let raw = RawWebhook {
            url: "http://127.0.0.1:9/t".into(),
            ..RawWebhook::default()
        };
        let hook = raw.check().unwrap();
        assert_eq!(hook.format, Format::Ntfy);
        let d = delivery(&hook, &item(), "http://127.0.0.1:7780/");
        assert_eq!(
            d.body,
            "coder: which branch? ünïcode\nhttp://127.0.0.1:7780/"
        );
        assert!(
            d.headers
                .contains(&("Title", "awtui: HELP_REQUEST in @demo".into()))
        );
        assert!(d.headers.contains(&("Priority", "high".into())));
        let json_hook = Webhook {
            format: Format::Json,
            ..hook
        };
        let d = delivery(&json_hook, &item(), "http://x/");
        let v: serde_json::Value = serde_json::from_str(&d.body).unwrap();
        assert_eq!(v["link"], "http://x/");
        assert_eq!(v["kind"], "HELP_REQUEST");
        let bad = RawWebhook {
            url: "ftp://x".into(),
            ..RawWebhook::default()
        };
        assert!(bad.check().unwrap_err().contains("url"));
    }
}
