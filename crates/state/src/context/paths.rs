//! Lexical rules for document paths, shared by both stores and by workflow
//! validation of `documents:`.
//!
//! A document path is relative, uses `/`, has no empty, `.` or `..`
//! components, no hidden (`.`-prefixed) components, and no component names
//! one of awtui's own files (at any depth). Links are dealt with by the file
//! store, which never follows one ([`super::documents`]).

use super::ContextError;

/// Files and folders of an instance that belong to awtui, never to documents.
///
/// `worktrees` and `workspaces` held git worktrees in instances made before
/// worktrees moved out of the instance folder; they stay reserved so a
/// resumed old instance's worktrees are no documents.
pub const RESERVED_FILES: [&str; 18] = [
    "agents",
    "worktrees",
    "workspaces",
    "workflow.json",
    "tasks.jsonl",
    "approvals.jsonl",
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
    // At any depth: a folder of documents may hold another instance's
    // folder, whose files are not documents either.
    if parts.iter().any(|p| is_own_name(p, own_files)) {
        return Err(refuse("this is one of awtui's own files"));
    }
    Ok(trimmed.to_string())
}

/// Whether `path` can name a document by its letters alone: it passes
/// [`validate`] as it is (no hidden, `..` or reserved component, nothing to
/// normalise). Cheap enough for every path a file-system notification names.
pub fn may_be_document(path: &str, own_files: &[String]) -> bool {
    let own: Vec<&str> = own_files.iter().map(String::as_str).collect();
    validate(path, &own).is_ok_and(|v| v == path)
}

/// Whether one path component names a file or folder awtui keeps for itself.
fn is_own_name(part: &str, own_files: &[&str]) -> bool {
    RESERVED_FILES.contains(&part)
        || own_files.contains(&part)
        || part.ends_with(".sock")
        || part.ends_with(".jsonl")
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
            "worktrees/a/notes.txt",
            "workspaces/ws_1/app.txt",
            "sub/state.json",
            "a/tokens/user",
            "old/channel.jsonl",
            "C:\\x",
            "~/x",
        ] {
            let err = validate(bad, &["channel.md"]).unwrap_err();
            assert!(err.to_string().contains(&format!("'{bad}'")), "{err}");
        }
    }
}
