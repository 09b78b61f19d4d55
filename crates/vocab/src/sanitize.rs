//! Agent text is shown in the user's terminal: escape sequences and control
//! characters from an agent must never reach it.

/// Removes ANSI/VT escape sequences (CSI, OSC, DCS, …) and control
/// characters except newline and tab; carriage returns become newlines only
/// in `\r\n` pairs and are dropped otherwise.
pub fn for_terminal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            // C1 control-sequence and string introducers.
            '\u{9b}' => skip_csi(&mut chars),
            '\u{90}' | '\u{9d}' | '\u{9e}' | '\u{9f}' | '\u{98}' => skip_string(&mut chars),
            '\n' | '\t' => out.push(c),
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            c if c.is_control() => {}
            // Bidirectional overrides can disguise text.
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {}
            c => out.push(c),
        }
    }
    out
}

/// Characters that are invisible or reorder text on a screen: C1 controls,
/// bidirectional marks, embeddings, overrides and isolates, line and
/// paragraph separators.
pub fn is_hidden_in_json(c: char) -> bool {
    matches!(c,
        '\u{80}'..='\u{9f}'
        | '\u{61c}'
        | '\u{200e}' | '\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

/// JSON text (as serde writes it) with every [`is_hidden_in_json`]
/// character written as a `\uXXXX` escape: the same JSON value, but a
/// person reading it in a terminal or a pager sees what is there. serde
/// writes non-ASCII only inside strings, where an escape means the same.
pub fn escape_json_invisibles(json: String) -> String {
    if !json.chars().any(is_hidden_in_json) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_hidden_in_json(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

fn skip_escape(chars: &mut Chars) {
    match chars.next() {
        Some('[') => skip_csi(chars),
        Some(']') | Some('P') | Some('X') | Some('^') | Some('_') => skip_string(chars),
        // Two-character sequences (ESC c, ESC 7, ESC ( B …).
        Some('(') | Some(')') | Some('*') | Some('+') | Some('#') | Some('%') => {
            chars.next();
        }
        _ => {}
    }
}

/// CSI: parameters and intermediates up to a final byte in `@`..`~`.
fn skip_csi(chars: &mut Chars) {
    for c in chars.by_ref() {
        if ('@'..='~').contains(&c) {
            break;
        }
    }
}

/// OSC/DCS/…: up to BEL or ST (`ESC \`).
fn skip_string(chars: &mut Chars) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => break,
            '\u{1b}' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                break;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn strips_escapes_and_controls_keeps_text() {
        assert_eq!(for_terminal("\x1b[31mred\x1b[0m ok"), "red ok");
        assert_eq!(for_terminal("a\x1b]0;title\x07b"), "ab");
        assert_eq!(
            for_terminal("a\x1b]52;c;aGk=\x1b\\b"),
            "ab",
            "no clipboard writes"
        );
        assert_eq!(for_terminal("x\x1bPq#0;2;0;0;0\x1b\\y"), "xy");
        assert_eq!(for_terminal("bell\x07 back\x08space"), "bell backspace");
        assert_eq!(for_terminal("line\r\nnext\rover"), "line\nnext\nover");
        assert_eq!(for_terminal("tab\there ünïcode ✓"), "tab\there ünïcode ✓");
        assert_eq!(for_terminal("\u{9b}2Jcleared"), "cleared");
        assert_eq!(for_terminal("evil\u{202e}txt"), "eviltxt");
        let json = serde_json::to_string(&serde_json::json!({"m": "a\u{9b}31m\u{202e}b\u{2067}c"}))
            .unwrap();
        let escaped = escape_json_invisibles(json);
        assert_eq!(escaped, r#"{"m":"a\u009b31m\u202eb\u2067c"}"#);
        let back: serde_json::Value = serde_json::from_str(&escaped).unwrap();
        assert_eq!(back["m"], "a\u{9b}31m\u{202e}b\u{2067}c");
    }

    proptest! {
        #[test]
        fn output_never_contains_controls(s in any::<String>()) {
            let out = for_terminal(&s);
            prop_assert!(out.chars().all(|c| !c.is_control() || c == '\n' || c == '\t'));
        }
    }
}
