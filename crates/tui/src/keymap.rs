//! Keys to actions. A key is written as text (`q`, `G`, `ctrl-c`,
//! `shift-tab`, `enter`, `pgdown`, `f1`, `space`) and bound to a command of
//! the one grammar (`"s" = "stop"`), per section: `global` applies
//! everywhere, the pane sections (`agents`, `channel`, `inbox`,
//! `documents`, `tasks`) while that pane has the focus and win over `global`,
//! `editor` while a document is being edited (its moves and edits are
//! `text …` commands; every other character types), `conflict` while a
//! document conflict waits for an answer, `card` while a tool approval card
//! is shown (its commands act on the card's request), `confirm` while a
//! yes/no question is asked, `diff` in the diff view, `live` in an agent's
//! live view (every key it does not bind types), `rules` and `help`
//! in those overlays (their moves scroll them, `back` closes them) and
//! `home` on the list of instances. Every key of every view is here, so
//! `?` lists them all and a user's config changes any of them.

use std::collections::BTreeMap;
use std::fmt;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::{Action, Pane, ParseError};

/// Where a binding applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Section {
    /// Everywhere (after the focused pane's own keys).
    Global,
    /// The focused pane.
    Pane(Pane),
    /// The document editor.
    Editor,
    /// A document conflict question.
    Conflict,
    /// The tool approval card.
    Card,
    /// A yes/no question (quit, delete, discard).
    Confirm,
    /// The diff view.
    Diff,
    /// One agent's live view (every key it does not bind types).
    Live,
    /// The approval rules overlay.
    Rules,
    /// The help overlay.
    Help,
    /// The list of instances (home).
    Home,
}

impl Section {
    /// Every section, in help order.
    pub const ALL: [Section; 15] = [
        Section::Global,
        Section::Pane(Pane::Agents),
        Section::Pane(Pane::Channel),
        Section::Pane(Pane::Inbox),
        Section::Pane(Pane::Documents),
        Section::Pane(Pane::Tasks),
        Section::Editor,
        Section::Conflict,
        Section::Card,
        Section::Confirm,
        Section::Diff,
        Section::Live,
        Section::Rules,
        Section::Help,
        Section::Home,
    ];

    /// The section's name in the config file.
    pub fn name(self) -> &'static str {
        match self {
            Section::Global => "global",
            Section::Pane(p) => p.name(),
            Section::Editor => "editor",
            Section::Conflict => "conflict",
            Section::Card => "card",
            Section::Confirm => "confirm",
            Section::Diff => "diff",
            Section::Live => "live",
            Section::Rules => "rules",
            Section::Help => "help",
            Section::Home => "home",
        }
    }

    /// The section with this name (`bar` has no bindings: it types).
    pub fn from_name(name: &str) -> Option<Section> {
        Section::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Every section's name, for errors (`global, agents, …`).
    pub fn names() -> String {
        Section::ALL.map(Section::name).join(", ")
    }
}

/// One key with its modifiers, normalised so that `G` and `shift-g` are the
/// same key and Shift-Tab is `backtab`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// The key.
    pub code: KeyCodeKey,
    /// Ctrl and Alt (Shift only for non-character keys).
    pub ctrl: bool,
    /// Alt held.
    pub alt: bool,
    /// Shift held (never set for characters: `A` is the character).
    pub shift: bool,
}

/// The keys a binding can name (an ordered mirror of crossterm's codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeyCodeKey {
    /// A character.
    Char(char),
    /// A function key.
    F(u8),
    /// Enter.
    Enter,
    /// Escape.
    Esc,
    /// Tab.
    Tab,
    /// Shift-Tab.
    BackTab,
    /// Backspace.
    Backspace,
    /// Delete.
    Delete,
    /// Insert.
    Insert,
    /// Up arrow.
    Up,
    /// Down arrow.
    Down,
    /// Left arrow.
    Left,
    /// Right arrow.
    Right,
    /// Home.
    Home,
    /// End.
    End,
    /// Page up.
    PageUp,
    /// Page down.
    PageDown,
}

/// A key name that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a key (examples: q, G, ctrl-c, shift-tab, enter, pgdown, f1, space)")]
pub struct BadKey(pub String);

impl Key {
    /// A plain character key.
    pub fn char(c: char) -> Key {
        Key {
            code: KeyCodeKey::Char(c),
            ctrl: false,
            alt: false,
            shift: false,
        }
    }

    /// Reads `ctrl-alt-x`-style text.
    pub fn parse(text: &str) -> Result<Key, BadKey> {
        let bad = || BadKey(text.to_string());
        let mut ctrl = false;
        let mut alt = false;
        let mut shift = false;
        let mut rest = text;
        // A single character is always itself ("-" included).
        loop {
            if rest.chars().count() == 1 {
                break;
            }
            let lower = rest.to_ascii_lowercase();
            if let Some(r) = lower.strip_prefix("ctrl-").or(lower.strip_prefix("c-")) {
                ctrl = true;
                rest = &rest[rest.len() - r.len()..];
            } else if let Some(r) = lower.strip_prefix("alt-").or(lower.strip_prefix("a-")) {
                alt = true;
                rest = &rest[rest.len() - r.len()..];
            } else if let Some(r) = lower.strip_prefix("shift-").or(lower.strip_prefix("s-")) {
                shift = true;
                rest = &rest[rest.len() - r.len()..];
            } else {
                break;
            }
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => {
                if shift && c.is_ascii_alphabetic() {
                    shift = false;
                    KeyCodeKey::Char(c.to_ascii_uppercase())
                } else if ctrl && c.is_ascii_alphabetic() {
                    KeyCodeKey::Char(c.to_ascii_lowercase())
                } else {
                    KeyCodeKey::Char(c)
                }
            }
            _ => match rest.to_ascii_lowercase().as_str() {
                "enter" | "return" | "cr" => KeyCodeKey::Enter,
                "esc" | "escape" => KeyCodeKey::Esc,
                "tab" if shift => {
                    shift = false;
                    KeyCodeKey::BackTab
                }
                "tab" => KeyCodeKey::Tab,
                "backtab" => KeyCodeKey::BackTab,
                "backspace" | "bs" => KeyCodeKey::Backspace,
                "delete" | "del" => KeyCodeKey::Delete,
                "insert" | "ins" => KeyCodeKey::Insert,
                "up" => KeyCodeKey::Up,
                "down" => KeyCodeKey::Down,
                "left" => KeyCodeKey::Left,
                "right" => KeyCodeKey::Right,
                "home" => KeyCodeKey::Home,
                "end" => KeyCodeKey::End,
                "pgup" | "pageup" | "page-up" => KeyCodeKey::PageUp,
                "pgdown" | "pagedown" | "page-down" | "pgdn" => KeyCodeKey::PageDown,
                "space" => KeyCodeKey::Char(' '),
                "minus" => KeyCodeKey::Char('-'),
                f if f.starts_with('f') => {
                    let n: u8 = f[1..].parse().map_err(|_| bad())?;
                    if !(1..=24).contains(&n) {
                        return Err(bad());
                    }
                    KeyCodeKey::F(n)
                }
                _ => return Err(bad()),
            },
        };
        Ok(Key {
            code,
            ctrl,
            alt,
            shift,
        })
    }

    /// The key of a terminal key event; `None` for keys nobody binds.
    pub fn from_event(event: &KeyEvent) -> Option<Key> {
        let m = event.modifiers;
        let mut shift = m.contains(KeyModifiers::SHIFT);
        let code = match event.code {
            KeyCode::Char(c) => {
                shift = false;
                KeyCodeKey::Char(
                    if m.contains(KeyModifiers::CONTROL) && c.is_ascii_alphabetic() {
                        c.to_ascii_lowercase()
                    } else {
                        c
                    },
                )
            }
            KeyCode::F(n) => KeyCodeKey::F(n),
            KeyCode::Enter => KeyCodeKey::Enter,
            KeyCode::Esc => KeyCodeKey::Esc,
            KeyCode::Tab if shift => {
                shift = false;
                KeyCodeKey::BackTab
            }
            KeyCode::Tab => KeyCodeKey::Tab,
            KeyCode::BackTab => {
                shift = false;
                KeyCodeKey::BackTab
            }
            KeyCode::Backspace => KeyCodeKey::Backspace,
            KeyCode::Delete => KeyCodeKey::Delete,
            KeyCode::Insert => KeyCodeKey::Insert,
            KeyCode::Up => KeyCodeKey::Up,
            KeyCode::Down => KeyCodeKey::Down,
            KeyCode::Left => KeyCodeKey::Left,
            KeyCode::Right => KeyCodeKey::Right,
            KeyCode::Home => KeyCodeKey::Home,
            KeyCode::End => KeyCodeKey::End,
            KeyCode::PageUp => KeyCodeKey::PageUp,
            KeyCode::PageDown => KeyCodeKey::PageDown,
            _ => return None,
        };
        Some(Key {
            code,
            ctrl: m.contains(KeyModifiers::CONTROL),
            alt: m.contains(KeyModifiers::ALT),
            shift,
        })
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("ctrl-")?;
        }
        if self.alt {
            f.write_str("alt-")?;
        }
        if self.shift {
            f.write_str("shift-")?;
        }
        match self.code {
            KeyCodeKey::Char(' ') => f.write_str("space"),
            KeyCodeKey::Char(c) => write!(f, "{c}"),
            KeyCodeKey::F(n) => write!(f, "f{n}"),
            KeyCodeKey::Enter => f.write_str("enter"),
            KeyCodeKey::Esc => f.write_str("esc"),
            KeyCodeKey::Tab => f.write_str("tab"),
            KeyCodeKey::BackTab => f.write_str("shift-tab"),
            KeyCodeKey::Backspace => f.write_str("backspace"),
            KeyCodeKey::Delete => f.write_str("delete"),
            KeyCodeKey::Insert => f.write_str("insert"),
            KeyCodeKey::Up => f.write_str("up"),
            KeyCodeKey::Down => f.write_str("down"),
            KeyCodeKey::Left => f.write_str("left"),
            KeyCodeKey::Right => f.write_str("right"),
            KeyCodeKey::Home => f.write_str("home"),
            KeyCodeKey::End => f.write_str("end"),
            KeyCodeKey::PageUp => f.write_str("pgup"),
            KeyCodeKey::PageDown => f.write_str("pgdown"),
        }
    }
}

/// One binding: the key, the command text as written, and its action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    /// The key.
    pub key: Key,
    /// The command as written in the config.
    pub command: String,
    /// The parsed command.
    pub action: Action,
}

/// A problem with one binding, naming where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeymapError {
    /// The section is not one of the known ones.
    #[error("[keys.{0}]: unknown section (known: {known})", known = Section::names())]
    Section(String),
    /// The key cannot be read.
    #[error("[keys.{section}] \"{key}\": {source}")]
    Key {
        /// The section.
        section: String,
        /// The key as written.
        key: String,
        /// Why.
        source: BadKey,
    },
    /// The command cannot be read.
    #[error("[keys.{section}] \"{key}\" = \"{command}\": {source}")]
    Command {
        /// The section.
        section: String,
        /// The key as written.
        key: String,
        /// The command as written.
        command: String,
        /// Why.
        source: ParseError,
    },
}

/// Every binding by section.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Keymap {
    sections: BTreeMap<Section, BTreeMap<Key, Binding>>,
}

impl Keymap {
    /// Adds (or replaces) bindings from `section = { key = command }`
    /// tables; an empty command (`""`) removes a binding.
    pub fn apply(
        &mut self,
        tables: &BTreeMap<String, BTreeMap<String, String>>,
    ) -> Result<(), Box<KeymapError>> {
        for (section_name, bindings) in tables {
            let section = Section::from_name(section_name)
                .ok_or_else(|| Box::new(KeymapError::Section(section_name.clone())))?;
            for (key_text, command) in bindings {
                let key = Key::parse(key_text).map_err(|source| {
                    Box::new(KeymapError::Key {
                        section: section_name.clone(),
                        key: key_text.clone(),
                        source,
                    })
                })?;
                let map = self.sections.entry(section).or_default();
                if command.trim().is_empty() {
                    map.remove(&key);
                    continue;
                }
                let action = Action::parse(command).map_err(|source| {
                    Box::new(KeymapError::Command {
                        section: section_name.clone(),
                        key: key_text.clone(),
                        command: command.clone(),
                        source,
                    })
                })?;
                map.insert(
                    key,
                    Binding {
                        key,
                        command: command.clone(),
                        action,
                    },
                );
            }
        }
        Ok(())
    }

    /// The action for `key` in `section` (not falling back to global).
    pub fn get(&self, section: Section, key: &Key) -> Option<&Action> {
        self.sections
            .get(&section)
            .and_then(|m| m.get(key))
            .map(|b| &b.action)
    }

    /// The action for `key` with the focus on `pane`: the pane's own
    /// binding, else the global one.
    pub fn lookup(&self, pane: Pane, key: &Key) -> Option<&Action> {
        self.get(Section::Pane(pane), key)
            .or_else(|| self.get(Section::Global, key))
    }

    /// The bindings of one section, by key.
    pub fn bindings(&self, section: Section) -> impl Iterator<Item = &Binding> {
        self.sections
            .get(&section)
            .into_iter()
            .flat_map(|m| m.values())
    }

    /// The key to show for `command` in `section` alone: the shortest to
    /// read (`q` rather than `ctrl-c`).
    pub fn key_in(&self, section: Section, command: &str) -> Option<Key> {
        shortest(
            self.bindings(section)
                .filter(|b| b.command == command)
                .map(|b| b.key),
        )
    }

    /// The first key bound to `command` in `section` (or global), for hints.
    pub fn key_for(&self, section: Section, command: &str) -> Option<Key> {
        self.key_in(section, command)
            .or_else(|| self.key_in(Section::Global, command))
    }

    /// The key to show for `command` in `section` alone: `preferred` when
    /// it is bound to it (`esc` to close, though `q` closes too), else the
    /// shortest.
    pub fn key_preferring(&self, section: Section, command: &str, preferred: &str) -> Option<Key> {
        Key::parse(preferred)
            .ok()
            .filter(|k| {
                self.sections
                    .get(&section)
                    .and_then(|m| m.get(k))
                    .is_some_and(|b| b.command == command)
            })
            .or_else(|| self.key_in(section, command))
    }

    /// The key for a global `command` that works while the command bar
    /// types (one with Ctrl or Alt, or a function key: the others type).
    pub fn key_for_in_bar(&self, command: &str) -> Option<Key> {
        shortest(
            self.bindings(Section::Global)
                .filter(|b| b.command == command && b.key.reaches_past_the_bar())
                .map(|b| b.key),
        )
    }
}

/// The shortest key to read among `keys` (the first in key order among
/// equals).
fn shortest(keys: impl Iterator<Item = Key>) -> Option<Key> {
    keys.min_by_key(|k| (k.to_string().chars().count(), *k))
}

impl Key {
    /// Whether the key reaches the global keymap while the command bar has
    /// the focus (see `App::bar_key`): Ctrl, Alt and function keys do.
    pub fn reaches_past_the_bar(&self) -> bool {
        self.ctrl || self.alt || matches!(self.code, KeyCodeKey::F(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::KeyEventKind;

    fn ev(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent {
            code,
            modifiers,
            kind: KeyEventKind::Press,
            state: ratatui::crossterm::event::KeyEventState::NONE,
        }
    }

    #[test]
    fn key_text_round_trips_and_matches_events() {
        for text in [
            "q",
            "G",
            "ctrl-c",
            "shift-tab",
            "enter",
            "esc",
            "pgdown",
            "f1",
            "space",
            "?",
            "/",
            "alt-x",
            "-",
        ] {
            let key = Key::parse(text).unwrap();
            assert_eq!(Key::parse(&key.to_string()).unwrap(), key, "{text}");
        }
        assert_eq!(Key::parse("shift-g").unwrap(), Key::char('G'));
        assert_eq!(Key::parse("C-C").unwrap(), Key::parse("ctrl-c").unwrap());
        assert_eq!(
            Key::from_event(&ev(KeyCode::Char('G'), KeyModifiers::SHIFT)),
            Some(Key::char('G'))
        );
        assert_eq!(
            Key::from_event(&ev(KeyCode::BackTab, KeyModifiers::SHIFT)),
            Key::parse("shift-tab").ok()
        );
        assert_eq!(
            Key::from_event(&ev(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Key::parse("ctrl-c").ok()
        );
        for bad in ["", "ctrl-", "f99", "hyper-x", "enterr"] {
            assert!(Key::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn pane_bindings_win_and_errors_name_the_key() {
        let mut tables = BTreeMap::new();
        tables.insert(
            "global".to_string(),
            BTreeMap::from([("s".to_string(), "help".to_string())]),
        );
        tables.insert(
            "agents".to_string(),
            BTreeMap::from([("s".to_string(), "stop".to_string())]),
        );
        let mut km = Keymap::default();
        km.apply(&tables).unwrap();
        let s = Key::char('s');
        assert_eq!(km.lookup(Pane::Agents, &s), Some(&Action::Stop(None)));
        assert_eq!(km.lookup(Pane::Channel, &s), Some(&Action::Help));

        let mut bad = BTreeMap::new();
        bad.insert(
            "channel".to_string(),
            BTreeMap::from([("x".to_string(), "explode".to_string())]),
        );
        let e = km.apply(&bad).unwrap_err().to_string();
        assert!(e.contains("[keys.channel] \"x\" = \"explode\""), "{e}");
        let mut bad = BTreeMap::new();
        bad.insert(
            "nowhere".to_string(),
            BTreeMap::from([("x".to_string(), "help".to_string())]),
        );
        assert!(km.apply(&bad).unwrap_err().to_string().contains("nowhere"));
    }

    /// Hints show the preferred key when it is bound to the command, else
    /// the shortest; an unknown section's error lists every section.
    #[test]
    fn shown_keys_and_known_sections() {
        let km = crate::config::Config::defaults().keymap;
        let esc = Key::parse("esc").ok();
        assert_eq!(km.key_in(Section::Diff, "back"), Some(Key::char('q')));
        assert_eq!(km.key_preferring(Section::Diff, "back", "esc"), esc);
        assert_eq!(
            km.key_preferring(Section::Diff, "step all", "esc"),
            Some(Key::char('t'))
        );
        assert_eq!(km.key_in(Section::Diff, "quit"), None);
        let mut bad = BTreeMap::new();
        bad.insert("nowhere".to_string(), BTreeMap::new());
        let e = Keymap::default().apply(&bad).unwrap_err().to_string();
        for section in Section::ALL {
            assert!(e.contains(section.name()), "{e}");
        }
    }
}
