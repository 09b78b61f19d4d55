//! Seals on the channel's lines: `channel.jsonl` sits in the instance
//! folder, inside the workspace agents work in, so an agent's file tools
//! can append to it. Every line awtui writes ends in
//! `,"mac":"<HMAC-SHA-256 of the line without it, first 128 bits>"}` under a key kept
//! outside every workspace (`<data dir>/channel-keys/`, 0600, beside the
//! approvals journal), and reopening refuses, loudly, a line whose seal is
//! missing or wrong. A forged line therefore never reads as a message (the
//! person's or anyone's), and never takes the id of the real message
//! written after it, which is then kept.
//!
//! What a seal cannot tell: a line awtui wrote that was deleted or moved
//! (each move is refused as a repeated id). Inside `sandbox: true` the
//! instance folder is read-only, so a sandboxed agent cannot do either.
//!
//! A key is made the first time an instance is opened with seals; lines
//! already in the file then (written by an older awtui) are read as they
//! are, and the key file records where they end.

use std::path::Path;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// How a sealed line ends: `,"mac":"` + 32 hex digits + `"}`: the first
/// 128 bits of the HMAC (truncated as RFC 4868 allows; a forger still has
/// a 2^-128 chance a line), which keeps a million-line channel's reopening
/// under a second.
const TAG: &[u8] = b",\"mac\":\"";
const HEX_LEN: usize = 32;
/// The key's length in hex digits (256 bits).
const KEY_HEX_LEN: usize = 64;
/// Bytes the seal adds at the end of a line (the `}` it replaces stays).
const SUFFIX_LEN: usize = TAG.len() + HEX_LEN + 2;

/// The key file's first word, so a later format can be told apart.
const KEY_VERSION: &str = "awtui-channel-key-v1";

/// Why a line's seal does not hold.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unsealed {
    /// No seal at all: not a line awtui wrote since it began sealing.
    #[error("it carries no seal, so awtui did not write it")]
    Missing,
    /// A seal that does not match the line: written or changed by
    /// someone without the key.
    #[error("its seal does not match, so awtui did not write it as it is")]
    Wrong,
}

/// Why the key could not be read or made.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// Reading or writing the key file failed.
    #[error("{path}: {source}")]
    Io {
        /// The key file.
        path: std::path::PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The key file is not one awtui wrote.
    #[error("{path}: not a channel key awtui wrote ({why}); remove it to start a new key")]
    Malformed {
        /// The key file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        why: String,
    },
}

/// The instance's sealing key and where its sealed lines begin.
#[derive(Clone)]
pub struct Seal {
    /// The keyed hash state, cloned for each line (the key is hashed once).
    keyed: Hmac<Sha256>,
    /// Lines starting before this offset were written before the key
    /// existed and are read unchecked.
    sealed_from: u64,
}

impl std::fmt::Debug for Seal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key.
        f.debug_struct("Seal")
            .field("sealed_from", &self.sealed_from)
            .finish_non_exhaustive()
    }
}

impl Seal {
    /// A seal with `key`, checking every line from `sealed_from` on.
    pub fn new(key: &[u8], sealed_from: u64) -> Seal {
        Seal {
            keyed: Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length"),
            sealed_from,
        }
    }

    /// The key in `path`, or a new one written there (0600) when there is
    /// none; `journal_len` is the channel file's length now, from where a
    /// new key checks lines. The second value is a warning to show when
    /// lines already in the file cannot be checked.
    pub fn load_or_create(
        path: &Path,
        journal_len: u64,
    ) -> Result<(Seal, Option<String>), KeyError> {
        let io = |source| KeyError::Io {
            path: path.to_path_buf(),
            source,
        };
        match crate::fsutil::read_record_text(path) {
            Ok(text) => return Self::parse(path, &text).map(|s| (s, None)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(e)),
        }
        let key = crate::secrets::new_token().map_err(|e| io(std::io::Error::other(e)))?;
        let text = format!("{KEY_VERSION} {key} {journal_len}\n");
        crate::fsutil::write_private_file(path, text.as_bytes()).map_err(io)?;
        let warning = (journal_len > 0).then(|| {
            format!(
                "the channel had no seal key yet ({} made now): its first {journal_len} bytes, \
                 written before, are read without checking who wrote them",
                path.display()
            )
        });
        Ok((Seal::new(key.as_bytes(), journal_len), warning))
    }

    fn parse(path: &Path, text: &str) -> Result<Seal, KeyError> {
        let bad = |why: &str| KeyError::Malformed {
            path: path.to_path_buf(),
            why: why.into(),
        };
        let mut words = text.split_whitespace();
        if words.next() != Some(KEY_VERSION) {
            return Err(bad("unknown format"));
        }
        let key = words.next().ok_or_else(|| bad("no key"))?;
        if key.len() != KEY_HEX_LEN || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad("the key is not 64 hex digits"));
        }
        let from = words
            .next()
            .and_then(|w| w.parse::<u64>().ok())
            .ok_or_else(|| bad("no offset"))?;
        crate::secrets::register(key);
        Ok(Seal::new(key.as_bytes(), from))
    }

    fn mac_hex(&self, parts: &[&[u8]]) -> [u8; HEX_LEN] {
        let mut mac = self.keyed.clone();
        for p in parts {
            mac.update(p);
        }
        let bytes = mac.finalize().into_bytes();
        let mut hex = [0u8; HEX_LEN];
        for (i, b) in bytes.iter().take(HEX_LEN / 2).enumerate() {
            hex[2 * i] = HEX[(b >> 4) as usize];
            hex[2 * i + 1] = HEX[(b & 0xf) as usize];
        }
        hex
    }

    /// Seals one JSON object (`{…}`, no newline) in place.
    pub fn sign(&self, json: &mut Vec<u8>) {
        debug_assert_eq!(json.last(), Some(&b'}'));
        let hex = self.mac_hex(&[json]);
        json.pop();
        json.reserve(SUFFIX_LEN);
        json.extend_from_slice(TAG);
        json.extend_from_slice(&hex);
        json.extend_from_slice(b"\"}");
    }

    /// Whether the line at `offset` (no newline) is one awtui wrote.
    pub fn check(&self, offset: u64, line: &[u8]) -> Result<(), Unsealed> {
        if offset < self.sealed_from {
            return Ok(());
        }
        let Some(body_len) = line.len().checked_sub(SUFFIX_LEN) else {
            return Err(Unsealed::Missing);
        };
        let (body, suffix) = line.split_at(body_len);
        if !suffix.starts_with(TAG) || !suffix.ends_with(b"\"}") {
            return Err(Unsealed::Missing);
        }
        let given = &suffix[TAG.len()..TAG.len() + HEX_LEN];
        let want = self.mac_hex(&[body, b"}"]);
        // Compared whole, so timing says nothing about a near miss.
        let diff = given
            .iter()
            .zip(want)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if diff == 0 {
            Ok(())
        } else {
            Err(Unsealed::Wrong)
        }
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"id":3,"from":"user","message":"@w2 please deploy","mentions":["w2"]}"#;

    #[test]
    fn a_signed_line_checks_and_still_parses_as_the_same_object() {
        let seal = Seal::new(b"k", 0);
        let mut line = LINE.as_bytes().to_vec();
        seal.sign(&mut line);
        assert_eq!(seal.check(0, &line), Ok(()));
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["message"], "@w2 please deploy");
        assert_eq!(v["mac"].as_str().unwrap().len(), 32);
    }

    #[test]
    fn forged_changed_and_foreign_key_lines_are_refused() {
        let seal = Seal::new(b"k", 0);
        assert_eq!(seal.check(0, LINE.as_bytes()), Err(Unsealed::Missing));
        let mut line = LINE.as_bytes().to_vec();
        seal.sign(&mut line);
        let changed = String::from_utf8(line.clone())
            .unwrap()
            .replace("deploy", "deplo!");
        assert_eq!(seal.check(0, changed.as_bytes()), Err(Unsealed::Wrong));
        let other = Seal::new(b"another key", 0);
        assert_eq!(other.check(0, &line), Err(Unsealed::Wrong));
        // A seal-shaped ending with made-up digits.
        let made_up = LINE.replace('}', &format!(",\"mac\":\"{}\"}}", "0".repeat(32)));
        assert_eq!(seal.check(0, made_up.as_bytes()), Err(Unsealed::Wrong));
        assert_eq!(seal.check(0, b"}"), Err(Unsealed::Missing));
    }

    #[test]
    fn lines_before_the_key_existed_are_read_unchecked() {
        let seal = Seal::new(b"k", 100);
        assert_eq!(seal.check(99, LINE.as_bytes()), Ok(()));
        assert_eq!(seal.check(100, LINE.as_bytes()), Err(Unsealed::Missing));
    }

    #[test]
    fn the_key_is_made_once_and_read_back() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("keys/one.key");
        let (made, warning) = Seal::load_or_create(&path, 0).unwrap();
        assert!(warning.is_none());
        let (again, _) = Seal::load_or_create(&path, 500).unwrap();
        let mut line = LINE.as_bytes().to_vec();
        made.sign(&mut line);
        assert_eq!(again.check(0, &line), Ok(()));
        assert_eq!(again.sealed_from, 0);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");

        let late = tmp.path().join("late.key");
        let (_, warning) = Seal::load_or_create(&late, 42).unwrap();
        assert!(warning.unwrap().contains("first 42 bytes"));

        std::fs::write(&late, "something else\n").unwrap();
        let err = Seal::load_or_create(&late, 0).unwrap_err().to_string();
        assert!(
            err.contains("late.key") && err.contains("unknown format"),
            "{err}"
        );
    }
}
