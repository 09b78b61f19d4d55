//! `system_prompt:`: the prompt inline or read from a file.

use super::Walker;
use crate::fsutil;
use crate::workflow::schema::{Located, PromptSource};
use crate::workflow::yaml::Node;

/// A `system_prompt` is a file path when it is one line without spaces that
/// ends in a prompt-file extension or contains a `/`; anything else is the
/// prompt itself.
pub(super) fn looks_like_path(text: &str) -> bool {
    let t = text.trim();
    if t.is_empty() || t.contains(char::is_whitespace) {
        return false;
    }
    let ext = [".md", ".txt", ".markdown", ".prompt"];
    t.contains('/') || ext.iter().any(|e| t.to_ascii_lowercase().ends_with(e))
}

impl Walker<'_> {
    pub(super) fn system_prompt(
        &mut self,
        node: &Node,
        what: &str,
    ) -> Option<(Located<String>, PromptSource)> {
        let text = self.string(node, &format!("{what}: system_prompt"))?;
        if !looks_like_path(&text) {
            return Some((
                Located {
                    value: text,
                    pos: node.pos,
                },
                PromptSource::Inline,
            ));
        }
        let path = self.base_dir.join(text.trim());
        match fsutil::read_text_capped(&path, fsutil::MAX_PROMPT_BYTES) {
            Ok(content) => Some((
                Located {
                    value: content,
                    pos: node.pos,
                },
                PromptSource::File(path),
            )),
            Err(e) => {
                let reason = if e.is_not_found() {
                    "does not exist".to_string()
                } else {
                    format!("cannot be read: {}", e.reason())
                };
                self.diags.error(
                    node.pos,
                    format!(
                        "{what}: system_prompt file '{}' {reason} (looked at {})",
                        text.trim(),
                        path.display()
                    ),
                );
                None
            }
        }
    }
}
