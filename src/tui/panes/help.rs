//! The help overlay, generated from the keymap and the command list: what
//! the user sees is exactly what is bound.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::tui::action::COMMANDS;
use crate::tui::keymap::{Keymap, Section};
use crate::tui::text::truncate;
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

/// Draws the overlay over `area`, scrolled by `scroll` lines.
pub fn draw(area: Rect, buf: &mut Buffer, keymap: &Keymap, theme: &Theme, scroll: &mut usize) {
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
    );
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
}
