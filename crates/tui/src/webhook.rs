//! The `[notify.webhook]` table of the user's `config.toml`, read and
//! checked with the rest of the config; `awtui web` sends to it
//! (`web::notify`).

use serde::Deserialize;

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
    /// `url`, unchecked.
    pub url: String,
    /// `format`: `ntfy` (the default) or `json`.
    pub format: Option<String>,
    /// `priority` (default `high`).
    pub priority: Option<String>,
    /// `link`, unchecked.
    pub link: Option<String>,
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
