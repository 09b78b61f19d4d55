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

use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::tui::attention::AttentionItem;

pub use crate::tui::webhook::{Format, RawWebhook, Webhook};

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
