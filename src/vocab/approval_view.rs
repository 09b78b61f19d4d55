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
