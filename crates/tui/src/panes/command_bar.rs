//! The command bar: the input line. Plain text is posted to the channel
//! as `user`; `/command` runs a command of the grammar. Tab completes
//! `@names` (and command names after `/`), repeated Tab cycles through the
//! candidates; Up/Down walk the history. Its editing keys are fixed (they
//! type): Enter, Esc, Backspace, Delete, arrows, Home/End, Ctrl-A/E/U/W.
//! Tab with nothing to complete leaves the line as it is (the app says
//! why); only from an empty bar does it move the focus on, as everywhere.
//!
//! `:` opens it as a command line ([`BarMode::CommandLine`], a `:`
//! prompt): what is typed there runs as the command `/<text>` and is never
//! posted to the channel.
//!
//! Multi-line messages: Alt-Enter or Ctrl-J (and Shift-Enter where the
//! terminal reports it) put a line break in the message, and pasted line
//! breaks are kept (bracketed paste); the bar grows to [`MAX_ROWS`] rows
//! and scrolls with the cursor beyond that. A search stays on one line.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::scroll::Window;
use crate::action::{COMMANDS, CommandDef};
use crate::text::{char_width, width};
use crate::theme::Theme;

/// What the bar is asking for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BarMode {
    /// A message or a `/command`.
    #[default]
    Command,
    /// A command line (`:`): the text is a command of the grammar, with or
    /// without its `/`; it is never posted.
    CommandLine,
    /// A channel search.
    Search,
}

#[derive(Clone, Debug, Default)]
struct Completion {
    start: usize,
    candidates: Vec<String>,
    next: usize,
}

/// What the bar did with a key (gitui's consumed / not consumed, plus
/// what the app must act on).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BarEvent {
    /// The bar used the key (typing, editing, completion, history).
    Consumed,
    /// Not a key for the bar: the app handles it (focus keys, Ctrl-C on an
    /// empty line, …).
    NotConsumed,
    /// Enter: this line was entered, in this mode.
    Submit(String, BarMode),
    /// Esc: leave the bar.
    Leave,
}

/// The bar's state.
#[derive(Clone, Debug, Default)]
pub struct CommandBar {
    /// The text typed.
    pub input: String,
    /// Cursor position (byte index at a character boundary).
    pub cursor: usize,
    /// What the bar asks for.
    pub mode: BarMode,
    /// Lines entered before, oldest first.
    pub history: Vec<String>,
    history_pos: Option<usize>,
    completion: Option<Completion>,
}

impl CommandBar {
    /// Sets the text and puts the cursor at its end.
    pub fn set(&mut self, text: &str) {
        self.input = self.normalize(text);
        self.cursor = self.input.len();
        self.completion = None;
        self.history_pos = None;
    }

    /// Takes the entered line, remembering it in the history (a command
    /// line's with its `/`, so recalled in the bar it runs, never posts).
    pub fn take(&mut self) -> String {
        let line = std::mem::take(&mut self.input);
        self.cursor = 0;
        self.completion = None;
        self.history_pos = None;
        let remembered = match self.mode {
            BarMode::CommandLine if !line.trim_start().starts_with('/') => {
                format!("/{}", line.trim_start())
            }
            _ => line.clone(),
        };
        if self.mode != BarMode::Search
            && !line.trim().is_empty()
            && self.history.last() != Some(&remembered)
        {
            self.history.push(remembered);
        }
        line
    }

    /// Line breaks as the bar keeps them: `\n` in a message (`\r\n` and
    /// lone `\r` too), spaces in a search.
    fn normalize(&self, text: &str) -> String {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        match self.mode {
            BarMode::Command => text,
            BarMode::CommandLine | BarMode::Search => text.replace('\n', " "),
        }
    }

    /// Inserts text at the cursor (line breaks kept in a message).
    pub fn insert(&mut self, text: &str) {
        let text = self.normalize(text);
        self.input.insert_str(self.cursor, &text);
        self.cursor += text.len();
        self.completion = None;
    }

    fn prev_boundary(&self) -> usize {
        self.input[..self.cursor]
            .char_indices()
            .next_back()
            .map_or(0, |(i, _)| i)
    }

    fn next_boundary(&self) -> usize {
        self.input[self.cursor..]
            .chars()
            .next()
            .map_or(self.cursor, |c| self.cursor + c.len_utf8())
    }

    /// Deletes the character before the cursor.
    pub fn backspace(&mut self) {
        if self.cursor > 0 {
            let p = self.prev_boundary();
            self.input.replace_range(p..self.cursor, "");
            self.cursor = p;
        }
        self.completion = None;
    }

    /// Deletes the character under the cursor.
    pub fn delete(&mut self) {
        let n = self.next_boundary();
        self.input.replace_range(self.cursor..n, "");
        self.completion = None;
    }

    /// Moves the cursor one character left or right.
    pub fn left_right(&mut self, right: bool) {
        self.cursor = if right {
            self.next_boundary()
        } else {
            self.prev_boundary()
        };
    }

    /// Moves the cursor to the start or the end.
    pub fn home_end(&mut self, end: bool) {
        self.cursor = if end { self.input.len() } else { 0 };
    }

    /// Deletes the word before the cursor.
    pub fn delete_word(&mut self) {
        let before = &self.input[..self.cursor];
        let trimmed = before.trim_end();
        // After the last whitespace character (which may be several bytes
        // long, such as a no-break space).
        let start = trimmed
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(0, |(i, c)| i + c.len_utf8());
        self.input.replace_range(start..self.cursor, "");
        self.cursor = start;
        self.completion = None;
    }

    /// Walks the history (`older` = Up).
    pub fn history(&mut self, older: bool) {
        if self.history.is_empty() {
            return;
        }
        let pos = match (self.history_pos, older) {
            (None, true) => Some(self.history.len() - 1),
            (None, false) => None,
            (Some(p), true) => Some(p.saturating_sub(1)),
            (Some(p), false) if p + 1 < self.history.len() => Some(p + 1),
            (Some(_), false) => None,
        };
        self.history_pos = pos;
        self.input = pos.map(|p| self.history[p].clone()).unwrap_or_default();
        self.cursor = self.input.len();
        self.completion = None;
    }

    /// Completes the word before the cursor: `@name` from `names`, or a
    /// command name after a leading `/`. False when there is nothing to
    /// complete.
    pub fn complete(&mut self, names: &[String]) -> bool {
        if let Some(c) = &mut self.completion
            && !c.candidates.is_empty()
        {
            let cand = c.candidates[c.next % c.candidates.len()].clone();
            c.next += 1;
            let start = c.start;
            self.input.replace_range(start..self.cursor, &cand);
            self.cursor = start + cand.len();
            return true;
        }
        let (start, word) = self.word_before_cursor();
        let candidates: Vec<String> = if let Some(prefix) = word.strip_prefix('@') {
            names
                .iter()
                .filter(|n| n.starts_with(prefix))
                .map(|n| format!("@{n} "))
                .collect()
        } else if let Some(slash) = self.command_word(start, word) {
            let mut found: Vec<&str> = COMMANDS
                .iter()
                .map(|c| c.name)
                .filter(|n| n.starts_with(&word[slash.len()..]))
                .collect();
            // Stable: the most used first, leaving last, the rest in order.
            found.sort_by_key(|n| bare_slash_rank(n));
            found.into_iter().map(|n| format!("{slash}{n} ")).collect()
        } else {
            return false;
        };
        if candidates.is_empty() {
            return false;
        }
        self.completion = Some(Completion {
            start,
            candidates,
            next: 0,
        });
        self.complete(names)
    }

    /// The word before the cursor (after the last whitespace) and where
    /// it starts.
    fn word_before_cursor(&self) -> (usize, &str) {
        let before = &self.input[..self.cursor];
        let start = before.rfind(char::is_whitespace).map_or(0, |i| {
            i + before[i..].chars().next().map_or(1, char::len_utf8)
        });
        (start, &before[start..])
    }

    /// Whether `word`, starting at byte `start`, is a command's name being
    /// typed: the first word after `/` in a message, the first word (its
    /// `/` optional) on a command line. The `/` it keeps (`"/"` or `""`).
    fn command_word(&self, start: usize, word: &str) -> Option<&'static str> {
        match self.mode {
            _ if start != 0 => None,
            BarMode::Command if word.starts_with('/') => Some("/"),
            BarMode::CommandLine if word.starts_with('/') => Some("/"),
            BarMode::CommandLine => Some(""),
            _ => None,
        }
    }

    /// Why Tab found nothing to complete, for the status line: no name
    /// or command matches the word, or the word is neither.
    pub fn no_completion(&self) -> String {
        let (start, word) = self.word_before_cursor();
        if word.starts_with('@') {
            format!("no match: no agent or instance is called {word}…")
        } else if self.command_word(start, word).is_some() {
            format!("no match: no command starts with {word}")
        } else {
            "nothing to complete: Tab completes @names and /commands".into()
        }
    }

    /// The command whose name is typed in full (`/stop coder` → `stop`),
    /// for the hint line to show its forms.
    pub fn command(&self) -> Option<&'static CommandDef> {
        let line = match self.mode {
            BarMode::Search => return None,
            BarMode::Command if self.input.starts_with("//") => return None,
            BarMode::Command => self.input.strip_prefix('/')?,
            BarMode::CommandLine => self.input.strip_prefix('/').unwrap_or(&self.input),
        };
        let (word, _) = line.split_once(char::is_whitespace)?;
        CommandDef::find(word)
    }

    /// Handles a key while the bar has the focus.
    pub fn event(&mut self, key: &KeyEvent, names: &[String]) -> BarEvent {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let newline = match key.code {
            KeyCode::Enter => key
                .modifiers
                .intersects(KeyModifiers::ALT | KeyModifiers::SHIFT),
            KeyCode::Char('j') => ctrl,
            _ => false,
        };
        if newline {
            self.insert("\n");
            return BarEvent::Consumed;
        }
        match key.code {
            KeyCode::Enter => {
                let mode = self.mode;
                let line = self.take();
                self.mode = BarMode::Command;
                return BarEvent::Submit(line, mode);
            }
            KeyCode::Esc => {
                self.set("");
                self.mode = BarMode::Command;
                return BarEvent::Leave;
            }
            KeyCode::Tab if !self.complete(names) => return BarEvent::NotConsumed,
            KeyCode::Tab => {}
            KeyCode::Backspace if ctrl => self.delete_word(),
            KeyCode::Backspace => self.backspace(),
            KeyCode::Delete => self.delete(),
            KeyCode::Left => self.left_right(false),
            KeyCode::Right => self.left_right(true),
            KeyCode::Home => self.home_end(false),
            KeyCode::End => self.home_end(true),
            KeyCode::Up => self.history(true),
            KeyCode::Down => self.history(false),
            KeyCode::Char(c) if ctrl => match c {
                'a' => self.home_end(false),
                'e' => self.home_end(true),
                'u' => self.set(""),
                'w' => self.delete_word(),
                'c' if !self.input.is_empty() => self.set(""),
                _ => return BarEvent::NotConsumed,
            },
            KeyCode::Char(c) => self.insert(c.encode_utf8(&mut [0; 4])),
            _ => return BarEvent::NotConsumed,
        }
        BarEvent::Consumed
    }

    /// The rows the text takes at `width` columns (wrapped, each line
    /// break a new row), with the cursor's row and column.
    fn rows_at(&self, columns: u16) -> (Vec<String>, (usize, usize)) {
        let room = (columns as usize)
            .saturating_sub(width(prompt_of(self.mode)) + 1)
            .max(1);
        let mut rows = vec![String::new()];
        let mut w = 0;
        let mut cursor = (0, 0);
        for (i, c) in self.input.char_indices() {
            if i == self.cursor {
                cursor = (rows.len() - 1, w);
            }
            if c == '\n' {
                rows.push(String::new());
                w = 0;
                continue;
            }
            let cw = char_width(c);
            if w + cw > room {
                rows.push(String::new());
                w = 0;
            }
            rows.last_mut().expect("one row at least").push(c);
            w += cw;
        }
        if self.cursor >= self.input.len() {
            cursor = if w >= room {
                rows.push(String::new());
                (rows.len() - 1, 0)
            } else {
                (rows.len() - 1, w)
            };
        }
        (rows, cursor)
    }

    /// How many rows the bar wants at `width` columns: one per line of
    /// text, up to [`MAX_ROWS`].
    pub fn height(&self, width: u16) -> u16 {
        self.rows_at(width).0.len().clamp(1, MAX_ROWS) as u16
    }

    /// Draws the bar into `area` (as many rows as it has); returns the
    /// cursor's screen position when focused.
    pub fn draw(
        &self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        focused: bool,
    ) -> Option<(u16, u16)> {
        if area.width == 0 || area.height == 0 {
            return None;
        }
        let prompt = prompt_of(self.mode);
        let prompt_style = if focused {
            Style::new().fg(theme.accent).add_modifier(Modifier::BOLD)
        } else {
            theme.dimmed()
        };
        if self.input.is_empty() && !focused {
            let line = Line::from(vec![
                Span::styled(prompt, prompt_style),
                Span::styled(
                    "type to post to the channel, /command, ? for help",
                    theme.dimmed(),
                ),
            ]);
            buf.set_line(area.x, area.y, &line, area.width);
            return None;
        }
        let (rows, (crow, ccol)) = self.rows_at(area.width);
        // Scroll so the cursor's row is shown.
        let shown = area.height as usize;
        let first = Window {
            len: rows.len(),
            height: shown,
        }
        .first_showing(crow);
        let indent = " ".repeat(width(prompt));
        for (k, row) in rows.iter().enumerate().skip(first).take(shown) {
            let lead = if k == 0 {
                Span::styled(prompt, prompt_style)
            } else {
                Span::styled(indent.clone(), prompt_style)
            };
            let line = Line::from(vec![lead, Span::raw(row.clone())]);
            buf.set_line(area.x, area.y + (k - first) as u16, &line, area.width);
        }
        focused.then(|| {
            (
                area.x + (width(prompt) + ccol) as u16,
                area.y + (crow - first) as u16,
            )
        })
    }
}

/// The most rows the bar grows to.
pub const MAX_ROWS: usize = 5;

fn prompt_of(mode: BarMode) -> &'static str {
    match mode {
        BarMode::Command => "› ",
        BarMode::CommandLine => ":",
        BarMode::Search => "search: ",
    }
}

/// Commands Tab offers first after a bare `/`, most used first: posting,
/// narrowing the channel, documents and tasks (not `/quit`, the first in
/// the table).
const MOST_USED: &[&str] = &["send", "post", "filter", "search", "doc", "task", "stop"];

/// Where a command comes in the completion order: the most used first,
/// the ones that leave the screen last, every other in between.
fn bare_slash_rank(name: &str) -> usize {
    match MOST_USED.iter().position(|m| *m == name) {
        Some(i) => i,
        None if matches!(name, "quit" | "detach") => usize::MAX,
        None => MOST_USED.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deleting_a_word_after_a_wide_space_keeps_utf8_whole() {
        let mut b = CommandBar::default();
        b.set("héllo\u{a0}wörld");
        b.delete_word();
        assert_eq!(b.input, "héllo\u{a0}");
        b.set("a\u{3000}b");
        b.delete_word();
        assert_eq!(b.input, "a\u{3000}");
    }

    #[test]
    fn completes_names_and_cycles() {
        let names = vec![
            "planner".to_string(),
            "plumber".to_string(),
            "user".to_string(),
        ];
        let mut b = CommandBar::default();
        b.set("hi @pl");
        assert!(b.complete(&names));
        assert_eq!(b.input, "hi @planner ");
        assert!(b.complete(&names));
        assert_eq!(b.input, "hi @plumber ");
        b.insert("x");
        assert_eq!(b.input, "hi @plumber x");
        b.set("/st");
        assert!(b.complete(&names));
        assert_eq!(b.input, "/stop ");
        b.set("plain");
        assert!(!b.complete(&names));
    }

    #[test]
    fn history_and_editing() {
        let mut b = CommandBar::default();
        b.set("one");
        b.take();
        b.set("two");
        b.take();
        b.history(true);
        assert_eq!(b.input, "two");
        b.history(true);
        assert_eq!(b.input, "one");
        b.history(false);
        assert_eq!(b.input, "two");
        b.history(false);
        assert_eq!(b.input, "");
        b.set("héllo wörld");
        b.backspace();
        b.left_right(false);
        b.delete();
        assert_eq!(b.input, "héllo wör");
        b.delete_word();
        assert_eq!(b.input, "héllo ");
    }
}
