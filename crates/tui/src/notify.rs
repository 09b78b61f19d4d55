//! Telling the person that something new needs them while they look
//! elsewhere: a terminal bell and a desktop notification (OSC 9, the
//! iTerm2 / Windows Terminal / kitty form, or OSC 777, the rxvt / foot /
//! WezTerm form), set in `config.toml`:
//!
//! ```toml
//! [notify]
//! bell = true     # ring the terminal bell
//! osc = "9"       # "9", "777" or "off"
//! ```
//!
//! Pure: [`Notifier`] decides which attention items are new and not looked
//! at; [`alert`] builds the bytes, which the screen writes through its
//! terminal backend. Agent text in a notification is sanitized (no escape
//! sequence or control character of an agent reaches the terminal).

use std::collections::HashSet;
use std::path::PathBuf;

use serde::Deserialize;

use super::attention::AttentionItem;
use crate::sanitize::for_terminal;

/// Which desktop notification escape to write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Osc {
    /// `ESC ] 9 ; text BEL`.
    #[default]
    Nine,
    /// `ESC ] 777 ; notify ; title ; text BEL`.
    SevenSevenSeven,
    /// None.
    Off,
}

/// The `[notify]` settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotifyConfig {
    /// Ring the bell.
    pub bell: bool,
    /// The desktop notification.
    pub osc: Osc,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig {
            bell: true,
            osc: Osc::Nine,
        }
    }
}

/// `[notify]` as written in the file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawNotify {
    bell: Option<bool>,
    osc: Option<String>,
    /// `[notify.webhook]`: where `awtui web` sends new attention items.
    pub(crate) webhook: Option<super::webhook::RawWebhook>,
}

impl NotifyConfig {
    /// Applies a file's `[notify]` table; the error names the bad entry.
    pub(crate) fn apply(&mut self, raw: &RawNotify) -> Result<(), String> {
        if let Some(b) = raw.bell {
            self.bell = b;
        }
        if let Some(o) = &raw.osc {
            self.osc = match o.as_str() {
                "9" => Osc::Nine,
                "777" => Osc::SevenSevenSeven,
                "off" | "" => Osc::Off,
                other => {
                    return Err(format!(
                        "[notify] osc = \"{}\": expected \"9\", \"777\" or \"off\"",
                        for_terminal(other)
                    ));
                }
            };
        }
        Ok(())
    }
}

/// What the screen shows now, to tell what the person is looking at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Looking {
    /// The list of instances (attention counts, not the items).
    #[default]
    List,
    /// The attention view: every item is seen.
    Attention,
    /// One instance's control room (its folder): its items are seen there.
    Instance(PathBuf),
}

impl Looking {
    /// Whether `item` is on the screen now.
    pub fn sees(&self, item: &AttentionItem) -> bool {
        match self {
            Looking::List => false,
            Looking::Attention => true,
            Looking::Instance(home) => *home == item.home,
        }
    }
}

/// Remembers which items were already there, so only new ones alert. The
/// first poll only primes it: what waited before the screen opened does
/// not ring.
#[derive(Clone, Debug, Default)]
pub struct Notifier {
    known: HashSet<String>,
    primed: bool,
}

impl Notifier {
    /// The items of this poll that are new since the last one and not on
    /// the screen now. Items that went away are forgotten (they alert again
    /// if they come back).
    pub fn fresh<'a>(
        &mut self,
        items: &'a [AttentionItem],
        looking: &Looking,
    ) -> Vec<&'a AttentionItem> {
        let keys: HashSet<String> = items.iter().map(AttentionItem::key).collect();
        let fresh = if self.primed {
            items
                .iter()
                .filter(|i| !self.known.contains(&i.key()) && !looking.sees(i))
                .collect()
        } else {
            Vec::new()
        };
        self.known = keys;
        self.primed = true;
        fresh
    }
}

/// The bytes that announce `fresh` items (empty when there are none or
/// everything is off).
pub fn alert(config: &NotifyConfig, fresh: &[&AttentionItem]) -> String {
    let Some(first) = fresh.first() else {
        return String::new();
    };
    let mut out = String::new();
    let mut text = format!(
        "@{}: {} {}",
        first.instance,
        first.kind.label(),
        if first.from.is_empty() {
            first.summary.clone()
        } else {
            format!("{}: {}", first.from, first.summary)
        }
    );
    if fresh.len() > 1 {
        text.push_str(&format!(" (+{} more)", fresh.len() - 1));
    }
    // No control character (BEL ends the sequence) and no `;` (separates
    // fields in OSC 777) from agent text.
    let text: String = for_terminal(&text)
        .chars()
        .map(|c| if c.is_control() || c == ';' { ' ' } else { c })
        .take(200)
        .collect();
    match config.osc {
        Osc::Nine => out.push_str(&format!("\x1b]9;{text}\x07")),
        Osc::SevenSevenSeven => out.push_str(&format!("\x1b]777;notify;awtui;{text}\x07")),
        Osc::Off => {}
    }
    if config.bell {
        out.push('\x07');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::{AttentionKind, Jump};

    fn item(home: &str, id: u64, summary: &str) -> AttentionItem {
        AttentionItem {
            instance: "a".into(),
            home: home.into(),
            kind: AttentionKind::Mention,
            when: chrono::Utc::now(),
            from: "coder".into(),
            summary: summary.into(),
            jump: Jump::Message(id),
        }
    }

    #[test]
    fn only_new_items_not_on_screen_alert_and_the_first_poll_primes() {
        let mut n = Notifier::default();
        let one = vec![item("/a", 1, "x")];
        assert!(n.fresh(&one, &Looking::List).is_empty(), "primes");
        assert!(n.fresh(&one, &Looking::List).is_empty(), "already known");
        let two = vec![item("/a", 1, "x"), item("/a", 2, "y")];
        let f = n.fresh(&two, &Looking::List);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].jump, Jump::Message(2));
        // Looking at it: no alert, and it is known afterwards.
        let three = vec![item("/a", 3, "z")];
        assert!(n.fresh(&three, &Looking::Instance("/a".into())).is_empty());
        assert!(n.fresh(&three, &Looking::List).is_empty());
        let four = vec![item("/a", 4, "w")];
        assert_eq!(n.fresh(&four, &Looking::Instance("/b".into())).len(), 1);
        assert!(
            n.fresh(&[item("/a", 5, "v")], &Looking::Attention)
                .is_empty()
        );
    }

    #[test]
    fn alerts_follow_the_config_and_carry_no_agent_escape() {
        let evil = item("/a", 1, "hi\x1b]9;pwned\x07;x\x07");
        let fresh = vec![&evil];
        let nine = alert(&NotifyConfig::default(), &fresh);
        assert!(nine.starts_with("\x1b]9;@a: mention coder: hi"), "{nine:?}");
        assert!(nine.ends_with("\x07\x07"), "osc then bell: {nine:?}");
        assert_eq!(nine.matches('\x1b').count(), 1, "{nine:?}");
        assert!(!nine.contains("pwned\x07"));
        let c = NotifyConfig {
            bell: false,
            osc: Osc::SevenSevenSeven,
        };
        let s = alert(&c, &fresh);
        assert!(
            s.starts_with("\x1b]777;notify;awtui;@a: mention coder: hi"),
            "{s:?}"
        );
        assert_eq!(s.matches(';').count(), 3, "{s:?}");
        let off = NotifyConfig {
            bell: false,
            osc: Osc::Off,
        };
        assert_eq!(alert(&off, &fresh), "");
        assert_eq!(alert(&NotifyConfig::default(), &[]), "");
        let bell_only = NotifyConfig {
            bell: true,
            osc: Osc::Off,
        };
        assert_eq!(alert(&bell_only, &fresh), "\x07");
    }

    #[test]
    fn config_values_and_errors() {
        let mut c = NotifyConfig::default();
        c.apply(&RawNotify {
            bell: Some(false),
            osc: Some("777".into()),
            webhook: None,
        })
        .unwrap();
        assert_eq!(
            c,
            NotifyConfig {
                bell: false,
                osc: Osc::SevenSevenSeven
            }
        );
        let e = c
            .apply(&RawNotify {
                bell: None,
                osc: Some("99".into()),
                webhook: None,
            })
            .unwrap_err();
        assert!(e.contains("[notify] osc = \"99\""), "{e}");
    }
}
