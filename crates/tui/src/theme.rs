//! Colours of the control room, from the `[theme]` table of the config.
//! A colour is a name (`red`, `lightblue`, `darkgray`, `reset`), `#rrggbb`
//! or a 256-colour index (`208`).

use std::collections::BTreeMap;

use ratatui::style::{Color, Modifier, Style};

/// Every colour the panes use.
#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    /// Titles, the focused border, selections.
    pub accent: Color,
    /// Unfocused borders.
    pub border: Color,
    /// Dimmed text: system messages, hints, timestamps.
    pub dim: Color,
    /// Errors, failed agents, AOP ERROR blocks.
    pub error: Color,
    /// Warnings: stalled agents, high priority, the pause banner.
    pub warning: Color,
    /// Good news: working agents, acks.
    pub ok: Color,
    /// @mentions in messages.
    pub mention: Color,
    /// Background of the selected line.
    pub selection: Color,
    /// AOP FINAL frames.
    pub aop_final: Color,
    /// AOP INTERMEDIATE frames and text.
    pub aop_intermediate: Color,
    /// AOP STREAM frames.
    pub aop_stream: Color,
    /// AOP CONTEXT frames.
    pub aop_context: Color,
    /// Agent Mail type badges.
    pub badge: Color,
    /// Sender colours, picked by a stable hash of the name.
    pub senders: Vec<Color>,
}

/// A theme entry that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThemeError {
    /// No such theme key.
    #[error("[theme] {0}: unknown key")]
    UnknownKey(String),
    /// The colour cannot be read.
    #[error("[theme] {key} = \"{value}\": not a colour (a name such as red, #rrggbb or 0-255)")]
    BadColor {
        /// The key.
        key: String,
        /// The value as written.
        value: String,
    },
}

/// Reads one colour.
pub fn parse_color(text: &str) -> Option<Color> {
    let t = text.trim();
    if let Some(hex) = t.strip_prefix('#') {
        if hex.len() == 6 {
            let v = u32::from_str_radix(hex, 16).ok()?;
            return Some(Color::Rgb((v >> 16) as u8, (v >> 8) as u8, v as u8));
        }
        return None;
    }
    if let Ok(n) = t.parse::<u8>() {
        return Some(Color::Indexed(n));
    }
    Some(
        match t.to_ascii_lowercase().replace(['_', '-', ' '], "").as_str() {
            "reset" | "default" => Color::Reset,
            "black" => Color::Black,
            "red" => Color::Red,
            "green" => Color::Green,
            "yellow" => Color::Yellow,
            "blue" => Color::Blue,
            "magenta" => Color::Magenta,
            "cyan" => Color::Cyan,
            "gray" | "grey" => Color::Gray,
            "darkgray" | "darkgrey" => Color::DarkGray,
            "lightred" => Color::LightRed,
            "lightgreen" => Color::LightGreen,
            "lightyellow" => Color::LightYellow,
            "lightblue" => Color::LightBlue,
            "lightmagenta" => Color::LightMagenta,
            "lightcyan" => Color::LightCyan,
            "white" => Color::White,
            _ => return None,
        },
    )
}

impl Default for Theme {
    fn default() -> Self {
        Theme {
            accent: Color::Cyan,
            border: Color::DarkGray,
            dim: Color::DarkGray,
            error: Color::LightRed,
            warning: Color::Yellow,
            ok: Color::Green,
            mention: Color::LightYellow,
            selection: Color::Indexed(236),
            aop_final: Color::LightGreen,
            aop_intermediate: Color::DarkGray,
            aop_stream: Color::LightBlue,
            aop_context: Color::Magenta,
            badge: Color::LightMagenta,
            senders: vec![
                Color::LightCyan,
                Color::LightGreen,
                Color::LightBlue,
                Color::LightMagenta,
                Color::Yellow,
                Color::Cyan,
            ],
        }
    }
}

impl Theme {
    /// Applies `[theme]` entries over this theme.
    pub fn apply(&mut self, table: &BTreeMap<String, toml::Value>) -> Result<(), ThemeError> {
        for (key, value) in table {
            let bad = |v: &str| ThemeError::BadColor {
                key: key.clone(),
                value: v.to_string(),
            };
            if key == "senders" {
                let list = value.as_array().ok_or_else(|| bad(&format!("{value:?}")))?;
                let mut colors = Vec::new();
                for v in list {
                    let s = v.as_str().ok_or_else(|| bad(&format!("{v:?}")))?;
                    colors.push(parse_color(s).ok_or_else(|| bad(s))?);
                }
                if colors.is_empty() {
                    return Err(bad("[]"));
                }
                self.senders = colors;
                continue;
            }
            let text = value.as_str().ok_or_else(|| bad(&format!("{value:?}")))?;
            let color = parse_color(text).ok_or_else(|| bad(text))?;
            let slot = match key.as_str() {
                "accent" => &mut self.accent,
                "border" => &mut self.border,
                "dim" => &mut self.dim,
                "error" => &mut self.error,
                "warning" => &mut self.warning,
                "ok" => &mut self.ok,
                "mention" => &mut self.mention,
                "selection" => &mut self.selection,
                "aop_final" => &mut self.aop_final,
                "aop_intermediate" => &mut self.aop_intermediate,
                "aop_stream" => &mut self.aop_stream,
                "aop_context" => &mut self.aop_context,
                "badge" => &mut self.badge,
                _ => return Err(ThemeError::UnknownKey(key.clone())),
            };
            *slot = color;
        }
        Ok(())
    }

    /// The colour of a sender: `user` and `system` have fixed styles, agents
    /// a stable colour from the palette.
    pub fn sender(&self, name: &str) -> Style {
        match name {
            "system" => Style::new().fg(self.dim).add_modifier(Modifier::ITALIC),
            "user" => Style::new()
                .fg(self.accent)
                .add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            _ => {
                // FNV-1a: stable across runs and platforms.
                let mut h: u32 = 0x811c_9dc5;
                for b in name.bytes() {
                    h = (h ^ b as u32).wrapping_mul(0x0100_0193);
                }
                let color = self.senders[h as usize % self.senders.len().max(1)];
                Style::new().fg(color).add_modifier(Modifier::BOLD)
            }
        }
    }

    /// A pane border, accented when focused.
    pub fn border(&self, focused: bool) -> Style {
        if focused {
            Style::new().fg(self.accent)
        } else {
            Style::new().fg(self.border)
        }
    }

    /// Dimmed text.
    pub fn dimmed(&self) -> Style {
        Style::new().fg(self.dim)
    }

    /// Text a search found, so the eye lands on it.
    pub fn search_hit(&self) -> Style {
        Style::new()
            .fg(Color::Black)
            .bg(self.warning)
            .add_modifier(Modifier::BOLD)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_and_errors() {
        assert_eq!(parse_color("#ff8000"), Some(Color::Rgb(255, 128, 0)));
        assert_eq!(parse_color("light-blue"), Some(Color::LightBlue));
        assert_eq!(parse_color("208"), Some(Color::Indexed(208)));
        assert_eq!(parse_color("#fff"), None);
        let mut t = Theme::default();
        let mut table = BTreeMap::new();
        table.insert("accent".to_string(), toml::Value::from("red"));
        t.apply(&table).unwrap();
        assert_eq!(t.accent, Color::Red);
        table.insert("acent".to_string(), toml::Value::from("red"));
        assert_eq!(
            t.apply(&table).unwrap_err().to_string(),
            "[theme] acent: unknown key"
        );
        let mut table = BTreeMap::new();
        table.insert("error".to_string(), toml::Value::from("bright"));
        assert!(t.apply(&table).unwrap_err().to_string().contains("error"));
        assert_eq!(t.sender("coder"), Theme::default().sender("coder"));
    }
}
