//! The help overlay, generated from the keymap and the command list: what
//! the user sees is exactly what is bound.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::tui::action::COMMANDS;
use crate::tui::keymap::{Keymap, Section};
use crate::tui::text::{truncate, width};
use crate::tui::theme::Theme;

/// What a command does, from the command list.
pub fn describe(command: &str) -> String {
    let head = command.split_whitespace().next().unwrap_or("");
    let head = head.trim_end_matches('!');
    let base = COMMANDS
        .iter()
        .find(|(n, _, _)| *n == head)
        .map(|(_, _, d)| *d)
        .unwrap_or("");
    format!("{command:<18} {base}")
}

/// The keys the editor (ratatui-textarea 0.9's defaults) takes that no
/// `[keys.editor]` binding shadows: the first key of each, the others it
/// has, and what they do. Every other key types.
pub const EDITOR_KEYS: [(&str, &str, &str); 17] = [
    ("ctrl-u", "", "undo"),
    ("ctrl-r", "", "redo"),
    ("alt-<", "ctrl-alt-up", "start of the document"),
    ("alt->", "ctrl-alt-down", "end of the document"),
    ("ctrl-a", "home", "start of the line"),
    ("ctrl-e", "end", "end of the line"),
    ("alt-b", "ctrl-left", "word back"),
    ("alt-f", "ctrl-right", "word forward"),
    ("alt-p", "ctrl-up, alt-[", "paragraph back"),
    ("alt-n", "ctrl-down, alt-]", "paragraph forward"),
    ("ctrl-b/f/p/n", "", "left, right, up, down (as the arrows)"),
    ("pgdown", "ctrl-v", "page down (pgup or alt-v: page up)"),
    ("ctrl-w", "alt-backspace", "delete the word before"),
    ("alt-d", "alt-delete", "delete the word after"),
    (
        "ctrl-k",
        "",
        "delete to the end of the line (ctrl-j: to its start)",
    ),
    ("shift-←→↑↓", "", "select (then ctrl-x cut, ctrl-y paste)"),
    ("tab", "", "a tab; ctrl-h / ctrl-d: backspace / delete"),
];

/// The `[editor]` block's editing keys (see [`EDITOR_KEYS`]).
fn editor_lines(keymap: &Keymap, theme: &Theme) -> Vec<Line<'static>> {
    let key_style = Style::new().fg(theme.mention);
    let mut out = vec![Line::styled(
        "  every other key types; the editing keys (ratatui-textarea):",
        theme.dimmed(),
    )];
    for (key, also, what) in EDITOR_KEYS {
        let bound = crate::tui::keymap::Key::parse(key)
            .is_ok_and(|k| keymap.get(Section::Editor, &k).is_some());
        if bound {
            continue;
        }
        let also = if also.is_empty() {
            String::new()
        } else {
            format!(" (also {also})")
        };
        out.push(Line::from(vec![
            Span::styled(format!("  {key:<11}"), key_style),
            Span::raw(if width(key) > 10 { " " } else { "" }),
            Span::raw(format!("{what}{also}")),
        ]));
    }
    out
}

/// The help text: every binding by section, then every command.
pub fn lines(keymap: &Keymap, theme: &Theme) -> Vec<Line<'static>> {
    let title = Style::new().fg(theme.accent).add_modifier(Modifier::BOLD);
    let key_style = Style::new().fg(theme.mention);
    let mut out = Vec::new();
    for section in Section::ALL {
        let bindings: Vec<_> = keymap.bindings(section).collect();
        if bindings.is_empty() {
            continue;
        }
        out.push(Line::styled(format!("[{}]", section.name()), title));
        for b in bindings {
            out.push(Line::from(vec![
                Span::styled(format!("  {:<11}", b.key.to_string()), key_style),
                Span::raw(describe(&b.command)),
            ]));
        }
        if section == Section::Editor {
            out.extend(editor_lines(keymap, theme));
        }
        out.push(Line::default());
    }
    out.push(Line::styled("[command bar]", title));
    out.push(Line::raw(
        "  text        posts to the channel as user (//text posts /text)",
    ));
    out.push(Line::raw("  tab         completes @names and /commands"));
    out.push(Line::raw(
        "  alt-enter   a new line in the message (also ctrl-j); pasted lines are kept",
    ));
    out.push(Line::raw("  up/down     history; esc leaves the bar"));
    out.push(Line::default());
    out.push(Line::styled(
        "[commands]  (type /command in the bar)",
        title,
    ));
    for (_, usage, what) in COMMANDS {
        // A command of several forms gets one line per form.
        let mut forms = usage.split(" | ");
        out.push(Line::from(vec![
            Span::styled(format!("  /{}", forms.next().unwrap_or("")), key_style),
            Span::styled(format!("  {what}"), theme.dimmed()),
        ]));
        for form in forms {
            out.push(Line::styled(format!("    /{form}"), key_style));
        }
    }
    out.push(Line::default());
    out.push(Line::styled("[marks]", title));
    out.push(Line::raw(
        "  @name·  queued   @name✓ delivered   @name✓✓ acked   ! high priority",
    ));
    out.push(Line::raw(
        "  ○ idle  ◷ queued  ⠋ working  ⚠ stalled  ↻ retrying  ■ stopped  ✗ failed",
    ));
    out
}

/// Draws the overlay over `area`, scrolled by `scroll` lines; returns how
/// many lines it shows (a page).
pub fn draw(
    area: Rect,
    buf: &mut Buffer,
    keymap: &Keymap,
    theme: &Theme,
    scroll: &mut usize,
) -> usize {
    let frame = super::overlay::Overlay {
        title: " help · j/k scroll · esc closes ",
        min_width: 10,
    };
    frame.draw(
        area,
        buf,
        theme,
        &lines(keymap, theme),
        scroll,
        |l, width| {
            let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
            Line::raw(truncate(&text, width))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key the shipped keymap binds, in every section, is in `?`
    /// with what it does, under its section's heading.
    #[test]
    fn every_keymap_entry_appears_in_help() {
        let config = crate::tui::config::Config::defaults();
        let text: Vec<String> = lines(&config.keymap, &config.theme)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        let mut checked = 0;
        for section in Section::ALL {
            let heading = text
                .iter()
                .position(|l| *l == format!("[{}]", section.name()));
            for b in config.keymap.bindings(section) {
                let at = heading.unwrap_or_else(|| panic!("no [{}] in help", section.name()));
                let line = format!("  {:<11}{}", b.key.to_string(), describe(&b.command));
                let end = text[at + 1..]
                    .iter()
                    .position(String::is_empty)
                    .map_or(text.len(), |n| at + 1 + n);
                assert!(
                    text[at + 1..end].contains(&line),
                    "{line:?} is not under [{}]",
                    section.name()
                );
                checked += 1;
            }
        }
        assert!(checked > 40, "only {checked} bindings");
    }

    /// The approval card's and the confirm prompt's keys are in `?`, each
    /// under its own heading.
    #[test]
    fn the_card_and_confirm_keys_are_in_help() {
        let config = crate::tui::config::Config::defaults();
        let text: Vec<String> = lines(&config.keymap, &config.theme)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        let block = |heading: &str| {
            let at = text.iter().position(|l| l == heading).expect(heading);
            let end = at + text[at..].iter().position(String::is_empty).unwrap();
            text[at..end].join("\n")
        };
        let card = block("[card]");
        for what in [
            "  y          approve",
            "  a          approve always",
            "  d          deny always",
            "  n          prompt /deny",
            "  esc        later",
        ] {
            assert!(card.contains(what), "{what}:\n{card}");
        }
        let confirm = block("[confirm]");
        for what in [
            "  y          yes",
            "  enter      yes",
            "  n          no",
            "  esc        no",
            "  d          detach",
        ] {
            assert!(confirm.contains(what), "{what}:\n{confirm}");
        }
    }

    /// The editor's own keys (undo, redo, start and end of the document,
    /// word moves) are in `?` under `[editor]`, unless a binding takes
    /// them.
    #[test]
    fn the_editors_keys_are_in_help() {
        let mut config = crate::tui::config::Config::defaults();
        let text = |config: &crate::tui::config::Config| -> Vec<String> {
            lines(&config.keymap, &config.theme)
                .iter()
                .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
                .collect()
        };
        let all = text(&config);
        let at = all.iter().position(|l| l == "[editor]").expect("[editor]");
        let end = at + all[at..].iter().position(String::is_empty).unwrap();
        let block = all[at..end].join("\n");
        for what in [
            "ctrl-u     undo",
            "ctrl-r     redo",
            "alt->      end of the document",
            "alt-<      start of the document",
            "alt-f      word forward",
        ] {
            assert!(block.contains(what), "{what}:\n{block}");
        }
        let mut tables = std::collections::BTreeMap::new();
        tables.insert(
            "editor".to_string(),
            [("ctrl-u".to_string(), "save".to_string())].into(),
        );
        config.keymap.apply(&tables).expect("binds");
        let all = text(&config);
        assert!(!all.iter().any(|l| l.contains("ctrl-u     undo")));
        assert!(all.iter().any(|l| l.contains("ctrl-u     save")));
    }
}
