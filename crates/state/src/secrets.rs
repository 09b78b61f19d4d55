//! awtui never repeats a secret. Every token awtui makes (agents' MCP
//! tokens, the person's, the control endpoint's) is registered here when
//! it is made, and text that reaches what awtui shows or keeps (the
//! channel, agents' activity and failures, notices, logs) passes through
//! [`redact`] on its way in.
//!
//! Tokens are 64 lowercase hex digits ([`new_token`]),
//! so one pass over the text finds every run of hex digits long enough to
//! hold one and looks its 64-digit windows up in a set: the cost does not
//! grow with the number of tokens, and text without such a run (nearly all)
//! is returned as it is, without a copy.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{OnceLock, RwLock};

/// The length of every token awtui makes.
pub const TOKEN_LEN: usize = 64;

/// What a token is replaced with.
pub const REDACTED: &str = "[redacted token]";

fn set() -> &'static RwLock<HashSet<[u8; TOKEN_LEN]>> {
    static SECRETS: OnceLock<RwLock<HashSet<[u8; TOKEN_LEN]>>> = OnceLock::new();
    SECRETS.get_or_init(Default::default)
}

/// Remembers `secret` for the life of the process; anything that is not a
/// token of awtui's shape is ignored (nothing else is ever redacted).
pub fn register(secret: &str) {
    let Ok(bytes) = <[u8; TOKEN_LEN]>::try_from(secret.as_bytes()) else {
        return;
    };
    if bytes.iter().all(u8::is_ascii_hexdigit) {
        set()
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(bytes.map(|b| b.to_ascii_lowercase()));
    }
}

/// Where registered tokens sit in `bytes`, in order, not overlapping.
fn find(bytes: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut found = Vec::new();
    let secrets = set().read().unwrap_or_else(|e| e.into_inner());
    if secrets.is_empty() {
        return found;
    }
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_hexdigit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_hexdigit() {
            i += 1;
        }
        let mut at = start;
        while at + TOKEN_LEN <= i {
            let mut window = [0u8; TOKEN_LEN];
            window.copy_from_slice(&bytes[at..at + TOKEN_LEN]);
            if secrets.contains(&window.map(|b| b.to_ascii_lowercase())) {
                found.push(at..at + TOKEN_LEN);
                at += TOKEN_LEN;
            } else {
                at += 1;
            }
        }
    }
    found
}

/// `bytes` with every registered token replaced by [`REDACTED`].
pub fn redact_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    let found = find(bytes);
    if found.is_empty() {
        return Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut last = 0;
    for range in found {
        out.extend_from_slice(&bytes[last..range.start]);
        out.extend_from_slice(REDACTED.as_bytes());
        last = range.end;
    }
    out.extend_from_slice(&bytes[last..]);
    Cow::Owned(out)
}

/// `text` with every registered token replaced by [`REDACTED`].
pub fn redact(text: &str) -> Cow<'_, str> {
    match redact_bytes(text.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        // Only ASCII runs were replaced with ASCII: still UTF-8.
        Cow::Owned(bytes) => Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()),
    }
}

/// Redacts `text` where it is.
pub fn redact_in_place(text: &mut String) {
    if let Cow::Owned(clean) = redact(text) {
        *text = clean;
    }
}

/// The operating system's random source failed.
#[derive(Debug, thiserror::Error)]
#[error("cannot get random bytes from the operating system: {0}")]
pub struct RandomError(String);

/// 32 bytes from the operating system's CSPRNG, as 64 hex digits;
/// registered here so awtui never repeats it.
pub fn new_token() -> Result<String, RandomError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| RandomError(e.to_string()))?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    register(&token);
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_tokens_are_redacted_anywhere_and_nothing_else() {
        let token = "0123456789abcdef".repeat(4);
        let other = "fedcba9876543210".repeat(4);
        register(&token);
        register("short");
        let text = format!(
            "AWTUI_TOKEN={token} and x{token}y, {}, {other}",
            token.to_uppercase()
        );
        let clean = redact(&text);
        assert!(!clean.to_lowercase().contains(&token), "{clean}");
        assert_eq!(clean.matches(REDACTED).count(), 3, "{clean}");
        assert!(clean.contains(&other), "an unregistered hex string stays");
        // Inside a longer run of hex digits, too.
        let run = format!("aa{token}bb");
        assert_eq!(redact(&run), format!("aa{REDACTED}bb"));
        let plain = "no secrets here: deadbeef";
        assert!(matches!(redact(plain), Cow::Borrowed(_)));
        let mut s = format!("é{token}é");
        redact_in_place(&mut s);
        assert_eq!(s, format!("é{REDACTED}é"));
    }
}
