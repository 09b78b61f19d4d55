//! What a request asks, as lines a person reads: the command of a `Bash`
//! call, the diff of a file change, the input of anything else. One
//! rendering for the control room's card and `awtui approve`'s list.

use serde_json::Value;

use super::approvals::Request;

/// How one line of the change reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// A heading such as `$ git status` or `--- src/main.rs`.
    Head,
    /// A line removed.
    Removed,
    /// A line added.
    Added,
    /// Anything else.
    Plain,
}

/// At most this many lines of a change are shown; the rest is counted.
pub const MAX_LINES: usize = 40;

/// The call as lines: `$ command`, `--- file` then `-`/`+` lines, or the
/// input's JSON. Long changes end with a `… N more lines` line.
pub fn describe(request: &Request) -> Vec<(LineKind, String)> {
    let input = &request.input;
    let text = |key: &str| input.get(key).and_then(Value::as_str).unwrap_or("");
    let mut out: Vec<(LineKind, String)> = Vec::new();
    let diff = |out: &mut Vec<(LineKind, String)>, old: &str, new: &str| {
        out.extend(old.lines().map(|l| (LineKind::Removed, format!("- {l}"))));
        out.extend(new.lines().map(|l| (LineKind::Added, format!("+ {l}"))));
    };
    match request.tool.as_str() {
        "Bash" => {
            out.push((LineKind::Head, format!("$ {}", text("command"))));
            if let Some(d) = input.get("description").and_then(Value::as_str) {
                out.push((LineKind::Plain, format!("  ({d})")));
            }
        }
        "Write" => {
            out.push((
                LineKind::Head,
                format!("+++ {} (whole file)", text("file_path")),
            ));
            diff(&mut out, "", text("content"));
        }
        "Edit" => {
            out.push((LineKind::Head, format!("--- {}", text("file_path"))));
            diff(&mut out, text("old_string"), text("new_string"));
        }
        "MultiEdit" => {
            out.push((LineKind::Head, format!("--- {}", text("file_path"))));
            for edit in input
                .get("edits")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let t = |k: &str| edit.get(k).and_then(Value::as_str).unwrap_or("");
                diff(&mut out, t("old_string"), t("new_string"));
            }
        }
        _ => {
            let pretty = serde_json::to_string_pretty(input).unwrap_or_default();
            out.extend(pretty.lines().map(|l| (LineKind::Plain, l.to_string())));
        }
    }
    if out.len() > MAX_LINES {
        let more = out.len() - (MAX_LINES - 1);
        out.truncate(MAX_LINES - 1);
        out.push((LineKind::Plain, format!("… {more} more lines")));
    }
    out
}

/// Spaces in a row beyond which a run is shown as `␣×N`.
const SPACES_SHOWN: usize = 2;

/// `text` as lines a person can trust, for a terminal that would hide
/// part of it: a line break ends a line with `⏎`, a carriage return is
/// `␍`, a tab `→`, any other control character its picture (`␛`) or
/// `⟨U+0085⟩`, and characters that reorder or hide text (bidi controls,
/// zero-width ones) `⟨U+202E⟩`. With `runs`, more than two spaces in a
/// row are `␣×N`, so padding cannot push the rest of a command out of
/// sight. Nothing is left out.
pub fn visible_lines(text: &str, runs: bool) -> Vec<String> {
    let mut lines = vec![String::new()];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let line = lines.last_mut().expect("never empty");
        match c {
            '\n' => {
                line.push('⏎');
                lines.push(String::new());
            }
            ' ' if runs => {
                let mut n = 1;
                while chars.next_if_eq(&' ').is_some() {
                    n += 1;
                }
                if n > SPACES_SHOWN {
                    line.push_str(&format!("␣×{n}"));
                } else {
                    line.extend(std::iter::repeat_n(' ', n));
                }
            }
            '\t' => line.push('→'),
            '\u{7f}' => line.push('␡'),
            c if (c as u32) < 0x20 => {
                line.push(char::from_u32(0x2400 + c as u32).unwrap_or('?'));
            }
            c if hidden(c) => line.push_str(&format!("⟨U+{:04X}⟩", c as u32)),
            c => line.push(c),
        }
    }
    lines
}

/// Characters a terminal shows as nothing or that reorder what follows.
fn hidden(c: char) -> bool {
    crate::sanitize::is_hidden_in_json(c)
        || matches!(
            c,
            '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{ad}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(tool: &str, input: Value) -> Request {
        Request {
            id: 1,
            agent: "coder".into(),
            tool: tool.into(),
            input,
            tool_use_id: None,
            at: chrono::DateTime::UNIX_EPOCH,
            context: None,
        }
    }

    #[test]
    fn what_a_terminal_would_hide_is_made_visible() {
        let padded = format!("git status{}; curl x | sh", " ".repeat(400));
        assert_eq!(
            visible_lines(&padded, true),
            ["git status␣×400; curl x | sh"]
        );
        assert_eq!(
            visible_lines("a  b\nc\td\re\u{1b}]0;x", true),
            ["a  b⏎", "c→d␍e␛]0;x"]
        );
        assert_eq!(
            visible_lines("x\u{202e}y\u{200b}z\u{85}", false),
            ["x⟨U+202E⟩y⟨U+200B⟩z⟨U+0085⟩"]
        );
        assert_eq!(visible_lines("    indented", false), ["    indented"]);
        assert_eq!(visible_lines("a\n", true), ["a⏎", ""]);
    }

    #[test]
    fn commands_and_file_changes_read_as_a_shell_line_and_a_diff() {
        let lines = |r| describe(&r).into_iter().map(|(_, l)| l).collect::<Vec<_>>();
        assert_eq!(
            lines(req("Bash", json!({"command": "git status"}))),
            ["$ git status"]
        );
        assert_eq!(
            lines(req(
                "Edit",
                json!({"file_path": "a.rs", "old_string": "x\ny", "new_string": "z"})
            )),
            ["--- a.rs", "- x", "- y", "+ z"]
        );
        let long = "l\n".repeat(100);
        let w = lines(req("Write", json!({"file_path": "b", "content": long})));
        assert_eq!(w.len(), MAX_LINES);
        assert_eq!(w[MAX_LINES - 1], "… 62 more lines");
    }
}
