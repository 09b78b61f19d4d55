//! The help overlay, generated from the keymap and the command table:
//! what the user sees is exactly what is bound.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::action::{COMMANDS, CommandDef, TextOp};
use crate::keymap::{Key, Keymap, Section};
use crate::text::{truncate, width};
use crate::theme::Theme;

/// What `prompt :` does, in `?`.
const COMMAND_LINE: &str = "a command line: runs what is typed as a command, never posts it";

/// What a command does, from the command table: the command, then what
/// it does; an editor's `text` command says first what it does (`undo
/// (text undo)`), as the editor's keys read best that way.
pub fn describe(command: &str) -> String {
    let mut words = command.split_whitespace();
    let head = words.next().unwrap_or("");
    if head == "text"
        && let Ok(op) = TextOp::parse(&words.collect::<Vec<_>>())
    {
        return format!("{} ({command})", op.help());
    }
    let base = match CommandDef::find(head) {
        // The `:` key's: what sets the command line apart from the bar.
        Some(_) if command.starts_with("prompt :") => COMMAND_LINE,
        found => found.map_or("", |c| c.help),
    };
    format!("{command:<18} {base}")
}

/// A binding's line in `?`: the key in its column (a key wider than the
/// column keeps a space after it), then [`describe`].
fn binding_columns(key: &Key, command: &str) -> (String, String) {
    let key = key.to_string();
    let gap = if width(&key) >= 11 { " " } else { "" };
    (format!("  {key:<11}{gap}"), describe(command))
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
            let (key, what) = binding_columns(&b.key, &b.command);
            out.push(Line::from(vec![
                Span::styled(key, key_style),
                Span::raw(what),
            ]));
        }
        if section == Section::Editor {
            out.push(Line::styled(
                "  every other character types",
                theme.dimmed(),
            ));
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
    for CommandDef {
        usage, help: what, ..
    } in COMMANDS
    {
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
    let title = super::overlay::scroll_title("help", keymap, Section::Help);
    let frame = super::overlay::Overlay {
        title: &title,
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

    /// `?` as plain text, one line a row.
    fn help_text(config: &crate::config::Config) -> Vec<String> {
        lines(&config.keymap, &config.theme)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    /// Every key the shipped keymap binds, in every section, is in `?`
    /// with what it does, under its section's heading.
    #[test]
    fn every_keymap_entry_appears_in_help() {
        let config = crate::config::Config::defaults();
        let text = help_text(&config);
        let mut checked = 0;
        for section in Section::ALL {
            let heading = text
                .iter()
                .position(|l| *l == format!("[{}]", section.name()));
            for b in config.keymap.bindings(section) {
                let at = heading.unwrap_or_else(|| panic!("no [{}] in help", section.name()));
                let (key, what) = binding_columns(&b.key, &b.command);
                let line = format!("{key}{what}");
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

    /// Every declared command is in `?` (each of its forms, the first with
    /// what it does) and parses from its own example.
    #[test]
    fn every_declared_command_appears_in_help_and_parses_from_its_example() {
        let config = crate::config::Config::defaults();
        let text = help_text(&config);
        for c in COMMANDS {
            let mut forms = c.usage.split(" | ");
            let first = format!("  /{}  {}", forms.next().unwrap_or_default(), c.help);
            assert!(text.contains(&first), "{first:?} is not in ?");
            for form in forms {
                let line = format!("    /{form}");
                assert!(text.contains(&line), "{line:?} is not in ?");
            }
            assert!(
                crate::action::Action::parse(c.example).is_ok(),
                "{} does not parse",
                c.example
            );
        }
    }

    /// The approval card's and the confirm prompt's keys are in `?`, each
    /// under its own heading.
    #[test]
    fn the_card_and_confirm_keys_are_in_help() {
        let config = crate::config::Config::defaults();
        let text = help_text(&config);
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
        let mut config = crate::config::Config::defaults();
        let all = help_text(&config);
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
        let all = help_text(&config);
        assert!(!all.iter().any(|l| l.contains("ctrl-u     undo")));
        assert!(all.iter().any(|l| l.contains("ctrl-u     save")));
    }
}
