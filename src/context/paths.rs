//! Lexical rules for document paths, shared by both stores and by workflow
//! validation of `documents:`.
//!
//! A document path is relative, uses `/`, has no empty, `.` or `..`
//! components, no hidden (`.`-prefixed) components, and does not name one of
//! the store's own files.

use super::ContextError;

/// Files and folders of an instance that belong to awtui, never to documents.
pub const RESERVED_FILES: [&str; 14] = [
    "agents",
    "workflow.json",
    "ops-state.json",
    "state.json",
    "instance.json",
    "instance.lock",
    "control.sock",
    "control.token",
    "mcp.json",
    "awtui.log",
    "surfaced.md",
    "logs",
    "tokens",
    "sessions",
];

/// Checks `path` and returns it normalised (backslashes refused, no trailing
/// slash). `own_files` are extra reserved names, such as the channel files.
pub fn validate(path: &str, own_files: &[&str]) -> Result<String, ContextError> {
    let refuse = |reason: &str| ContextError::PathRefused {
        path: path.to_string(),
        reason: reason.to_string(),
    };
    if path.is_empty() {
        return Err(refuse("empty path"));
    }
    let drive_letter = path.as_bytes().get(1) == Some(&b':');
    if path.starts_with('/') || path.starts_with('~') || drive_letter {
        return Err(refuse(
            "absolute paths are not allowed; use a path inside the document folder",
        ));
    }
    if path.contains('\\') || path.contains('\0') {
        return Err(refuse("backslashes and NUL bytes are not allowed"));
    }
    let trimmed = path.trim_end_matches('/');
    let parts: Vec<&str> = trimmed.split('/').collect();
    for part in &parts {
        match *part {
            "" => return Err(refuse("empty path component")),
            "." | ".." => return Err(refuse("'.' and '..' are not allowed")),
            p if p.starts_with('.') => return Err(refuse("hidden files are not documents")),
            _ => {}
        }
    }
    let first = parts[0];
    if RESERVED_FILES.contains(&first) || (parts.len() == 1 && own_files.contains(&first)) {
        return Err(refuse("this is one of awtui's own files"));
    }
    if parts.len() == 1 && (first.ends_with(".sock") || first.ends_with(".jsonl")) {
        return Err(refuse("this is one of awtui's own files"));
    }
    Ok(trimmed.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_plain_and_nested_paths() {
        assert_eq!(validate("notes.md", &[]).unwrap(), "notes.md");
        assert_eq!(
            validate("findings/auth.md", &[]).unwrap(),
            "findings/auth.md"
        );
    }

    #[test]
    fn refuses_escapes_and_own_files() {
        for bad in [
            "",
            "/etc/passwd",
            "../x.md",
            "a/../../x",
            "a//b",
            "./a",
            ".hidden",
            "a/.git/config",
            "state.json",
            "logs/ops.log",
            "channel.md",
            "channel.jsonl",
            "mcp.sock",
            "mcp.json",
            "tokens/coder",
            "instance.lock",
            "control.token",
            "C:\\x",
            "~/x",
        ] {
            let err = validate(bad, &["channel.md"]).unwrap_err();
            assert!(err.to_string().contains(&format!("'{bad}'")), "{err}");
        }
    }
}
