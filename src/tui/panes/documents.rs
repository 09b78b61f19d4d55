//! The documents pane: the file list, a viewer with syntax highlighting
//! (syntect's bundled syntaxes: markdown with its fenced code blocks, and
//! whatever the file's extension names), and an editor (ratatui-textarea).
//! Every change goes through the engine (`WriteDocument`, `CreateDocument`,
//! `DeleteDocument`); changes by agents or other editors arrive as
//! `EngineEvent::Document` and are read again.
//!
//! Conflicts: when the document being edited changes elsewhere while the
//! editor holds unsaved changes, the user chooses: keep mine (their version
//! is saved beside it as `<file>.theirs`), take theirs (mine is saved as
//! `<file>.mine`), or see both (the editor gets conflict markers). Nothing
//! is lost either way. Without unsaved changes the editor simply reloads.
//! Text shown or edited is sanitised: control characters in a document are
//! not shown; saving such a document from the editor asks first (they
//! would be dropped). The editor keeps the document's line endings: a CRLF
//! file is saved with CRLF.

use std::sync::LazyLock;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use ratatui_textarea::{TextArea, WrapMode};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, ThemeSet};
use syntect::parsing::SyntaxSet;

use crate::sanitize::for_terminal;
use crate::tui::text::{truncate, truncate_middle};
use crate::tui::theme::Theme;

pub(crate) static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);
pub(crate) static THEMES: LazyLock<ThemeSet> = LazyLock::new(ThemeSet::load_defaults);

/// Highlights `content` by the file's extension (plain text when unknown).
/// In markdown, fenced code blocks (```` ```lang ````) are highlighted as
/// their language. Lines longer than 2,000 characters or files over 20,000
/// lines are shown plain, so a huge file cannot stall the screen.
pub fn highlight(file: &str, content: &str) -> Vec<Line<'static>> {
    let ext = file.rsplit('.').next().unwrap_or("");
    let syntax = SYNTAXES
        .find_syntax_by_extension(ext)
        .unwrap_or_else(|| SYNTAXES.find_syntax_plain_text());
    let markdown = syntax.name == "Markdown";
    let too_big = content.lines().count() > 20_000;
    let theme = &THEMES.themes["base16-ocean.dark"];
    let mut outer = HighlightLines::new(syntax, theme);
    // The highlighter of the fenced block we are in, with its fence.
    let mut fence: Option<(HighlightLines, String)> = None;
    let mut out = Vec::new();
    for line in content.split_inclusive('\n') {
        let plain = || Line::raw(line.trim_end_matches('\n').replace('\t', "    "));
        if too_big || line.len() > 2000 {
            out.push(plain());
            continue;
        }
        let trimmed = line.trim_start();
        if markdown {
            let closes = fence
                .as_ref()
                .is_some_and(|(_, f)| trimmed.trim_end().starts_with(f.as_str()));
            if closes {
                fence = None;
            } else if fence.is_none() && (trimmed.starts_with("```") || trimmed.starts_with("~~~"))
            {
                let marker: String = trimmed
                    .chars()
                    .take_while(|c| *c == '`' || *c == '~')
                    .collect();
                let lang = trimmed[marker.len()..]
                    .split_whitespace()
                    .next()
                    .unwrap_or("");
                let inner = SYNTAXES
                    .find_syntax_by_token(lang)
                    .unwrap_or_else(|| SYNTAXES.find_syntax_plain_text());
                out.push(styled(&mut outer, line).unwrap_or_else(plain));
                fence = Some((HighlightLines::new(inner, theme), marker));
                continue;
            } else if let Some((h, _)) = &mut fence {
                out.push(styled(h, line).unwrap_or_else(plain));
                continue;
            }
        }
        out.push(styled(&mut outer, line).unwrap_or_else(plain));
    }
    out
}

pub(crate) fn styled(h: &mut HighlightLines, line: &str) -> Option<Line<'static>> {
    let ranges = h.highlight_line(line, &SYNTAXES).ok()?;
    Some(Line::from(
        ranges
            .into_iter()
            .map(|(style, text)| {
                let mut s = Style::new().fg(Color::Rgb(
                    style.foreground.r,
                    style.foreground.g,
                    style.foreground.b,
                ));
                if style.font_style.contains(FontStyle::BOLD) {
                    s = s.add_modifier(Modifier::BOLD);
                }
                if style.font_style.contains(FontStyle::ITALIC) {
                    s = s.add_modifier(Modifier::ITALIC);
                }
                Span::styled(text.trim_end_matches('\n').replace('\t', "    "), s)
            })
            .collect::<Vec<_>>(),
    ))
}

/// A document open in the viewer.
#[derive(Clone, Debug)]
pub struct Viewer {
    /// Its path.
    pub file: String,
    /// Its content (sanitised).
    pub content: String,
    /// Its content as read (line endings, control bytes), for the editor.
    pub raw: String,
    /// Highlighted lines.
    pub lines: Vec<Line<'static>>,
    /// First (wrapped) line shown.
    pub scroll: usize,
    /// The lines wrapped to the last width drawn.
    wrapped: Option<(usize, Vec<Line<'static>>)>,
    /// Who changed it last, when known.
    pub changed_by: Option<String>,
    /// Why it could not be read (not UTF-8, too large…), shown in its place
    /// so an unreadable document never looks empty (and is never edited).
    pub unreadable: Option<String>,
}

impl Viewer {
    /// The lines soft-wrapped to `width` (cached per width).
    pub fn wrapped(&mut self, width: usize) -> &[Line<'static>] {
        if !matches!(&self.wrapped, Some((w, _)) if *w == width) {
            let lines = self
                .lines
                .iter()
                .flat_map(|l| {
                    let runs: Vec<(String, Style)> = l
                        .spans
                        .iter()
                        .map(|s| (s.content.to_string(), s.style))
                        .collect();
                    crate::tui::text::wrap_runs(&runs, width)
                })
                .collect();
            self.wrapped = Some((width, lines));
        }
        self.wrapped
            .as_ref()
            .map(|(_, l)| l.as_slice())
            .unwrap_or(&[])
    }

    /// A viewer over `content`.
    pub fn new(file: String, content: &str) -> Viewer {
        let raw = content.to_string();
        let content = for_terminal(content);
        Viewer {
            raw,
            lines: highlight(&file, &content),
            file,
            content,
            scroll: 0,
            wrapped: None,
            changed_by: None,
            unreadable: None,
        }
    }

    /// A document the engine could not read, saying why.
    pub fn unreadable(file: String, reason: &str) -> Viewer {
        let mut v = Viewer::new(file, "");
        v.unreadable = Some(for_terminal(reason));
        v
    }
}

/// The editor over one document.
pub struct Editor {
    /// The document.
    pub file: String,
    /// The text area.
    pub area: TextArea<'static>,
    /// The content the editing started from (or last saved / reloaded).
    pub base: String,
    /// Content sent with `WriteDocument`, not yet seen back.
    pub saving: Option<String>,
    /// Their version, while a conflict waits for an answer.
    pub conflict: Option<Conflict>,
    /// The document's line ending (`\r\n` when most of its lines end so),
    /// restored on save.
    pub line_ending: &'static str,
    /// It holds characters the editor cannot show (control bytes, escape
    /// sequences, lone carriage returns): saving asks first, since they
    /// would be dropped.
    pub unshown: bool,
}

/// A change made elsewhere while the editor had unsaved changes.
#[derive(Clone, Debug, PartialEq)]
pub struct Conflict {
    /// Their content.
    pub theirs: String,
    /// Who changed it.
    pub by: String,
}

impl std::fmt::Debug for Editor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Editor")
            .field("file", &self.file)
            .field("dirty", &self.dirty())
            .field("conflict", &self.conflict)
            .finish()
    }
}

impl Editor {
    /// An editor over `content`.
    pub fn new(file: String, content: &str) -> Editor {
        let mut e = Editor {
            file,
            area: TextArea::default(),
            base: String::new(),
            saving: None,
            conflict: None,
            line_ending: "\n",
            unshown: false,
        };
        e.load(content);
        e
    }

    /// Replaces the text (and the base), noting the content's line ending
    /// and whether it holds what the editor cannot show.
    pub fn load(&mut self, content: &str) {
        let clean = for_terminal(content);
        let crlf = content.matches("\r\n").count();
        self.line_ending = if crlf > 0 && crlf * 2 >= content.matches('\n').count() {
            "\r\n"
        } else {
            "\n"
        };
        self.unshown = content.replace("\r\n", "\n") != clean;
        self.set_text(&clean);
        self.base = clean;
    }

    /// The text to save: the editor's, with the document's line endings.
    pub fn to_save(&self) -> String {
        let text = self.text();
        if self.line_ending == "\n" {
            text
        } else {
            text.replace('\n', self.line_ending)
        }
    }

    /// Replaces the text, keeping the base.
    pub fn set_text(&mut self, text: &str) {
        let lines: Vec<String> = for_terminal(text).split('\n').map(str::to_string).collect();
        self.area = TextArea::new(lines);
        self.area.set_wrap_mode(WrapMode::WordOrGlyph);
        self.area.set_cursor_line_style(Style::new());
        self.area
            .set_line_number_style(Style::new().fg(Color::DarkGray));
    }

    /// The editor's text.
    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    /// Whether it differs from the base.
    pub fn dirty(&self) -> bool {
        self.text() != self.base
    }
}

/// The documents pane's state.
#[derive(Debug, Default)]
pub struct Documents {
    /// Every document.
    pub files: Vec<String>,
    /// The entry document.
    pub entry: String,
    /// The selected file in the list.
    pub selected: usize,
    /// The document shown.
    pub viewer: Option<Viewer>,
    /// The editor, while editing.
    pub editor: Option<Editor>,
    /// A document asked for and not yet received.
    pub pending: Option<String>,
    /// Height of the viewer in the last draw.
    pub view_height: usize,
    /// The list's area in the last draw, for clicks.
    pub list_area: Rect,
    /// Open the editor once the pending document arrives.
    pub edit_after_load: bool,
    /// A document created here, to open once it exists.
    pub pending_new: Option<String>,
    /// Who last changed each document (for conflict messages).
    pub changed_by: std::collections::BTreeMap<String, String>,
}

impl Documents {
    /// The selected file.
    pub fn selected_file(&self) -> Option<&str> {
        self.files.get(self.selected).map(String::as_str)
    }

    /// Draws list and viewer/editor into `area` (inside the pane border).
    pub fn draw(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        let list_w = if area.width >= 60 {
            (area.width / 4).clamp(14, 30)
        } else {
            0
        };
        let list = Rect::new(area.x, area.y, list_w, area.height);
        let view = Rect::new(
            area.x + list_w + u16::from(list_w > 0),
            area.y,
            area.width.saturating_sub(list_w + u16::from(list_w > 0)),
            area.height,
        );
        self.list_area = list;
        if list_w > 0 {
            for (k, f) in self.files.iter().enumerate().take(list.height as usize) {
                let open = self.viewer.as_ref().is_some_and(|v| &v.file == f);
                let mut style = if open {
                    Style::new().fg(theme.accent).add_modifier(Modifier::BOLD)
                } else {
                    Style::new()
                };
                if k == self.selected && focused && self.editor.is_none() {
                    style = style.bg(theme.selection);
                }
                let mark = if *f == self.entry { "★ " } else { "  " };
                buf.set_string(
                    list.x,
                    list.y + k as u16,
                    format!(
                        "{:<w$}",
                        format!(
                            "{mark}{}",
                            truncate_middle(&for_terminal(f), list_w as usize - 2)
                        ),
                        w = list_w as usize
                    ),
                    style,
                );
            }
            for y in list.y..list.y + list.height {
                buf.set_string(list.x + list_w, y, "│", theme.dimmed());
            }
        }
        self.view_height = view.height as usize;
        if let Some(editor) = &mut self.editor {
            let mut text_area = view;
            if let Some(c) = &editor.conflict {
                let lines = [
                    Line::styled(
                        truncate(
                            &format!(
                                "⚠ {} changed {} while you edit",
                                for_terminal(&editor.file),
                                super::doc_events::by_whom(&c.by)
                            ),
                            view.width as usize,
                        ),
                        Style::new().fg(theme.warning).add_modifier(Modifier::BOLD),
                    ),
                    Line::styled(
                        truncate(
                            "m keep mine · t take theirs · b see both (nothing is lost)",
                            view.width as usize,
                        ),
                        Style::new().fg(theme.warning),
                    ),
                ];
                for (k, l) in lines.iter().enumerate().take(view.height as usize) {
                    buf.set_line(view.x, view.y + k as u16, l, view.width);
                }
                text_area = Rect::new(
                    view.x,
                    view.y + 2,
                    view.width,
                    view.height.saturating_sub(2),
                );
            }
            editor.area.set_cursor_style(if focused {
                Style::new().add_modifier(Modifier::REVERSED)
            } else {
                Style::new()
            });
            if text_area.height > 0 {
                (&editor.area).render(text_area, buf);
            }
            return;
        }
        match &mut self.viewer {
            Some(v) => {
                let h = view.height as usize;
                match &v.unreadable {
                    Some(why) => {
                        buf.set_stringn(
                            view.x,
                            view.y,
                            why,
                            view.width as usize,
                            Style::new().fg(theme.error),
                        );
                    }
                    None if v.lines.is_empty() => {
                        buf.set_string(view.x, view.y, "(empty)", theme.dimmed());
                    }
                    None => {}
                }
                let mut scroll = v.scroll;
                let lines = v.wrapped(view.width as usize);
                scroll = scroll.min(lines.len().saturating_sub(h.max(1)));
                for (k, l) in lines.iter().skip(scroll).take(h).enumerate() {
                    buf.set_line(view.x, view.y + k as u16, l, view.width);
                }
                v.scroll = scroll;
            }
            None => {
                let text = match &self.pending {
                    Some(f) => format!("loading {}…", for_terminal(f)),
                    None => "Enter opens the selected document; e edits it.".into(),
                };
                buf.set_string(
                    view.x,
                    view.y,
                    truncate(&text, view.width as usize),
                    theme.dimmed(),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlights_markdown_with_fenced_code() {
        let lines = highlight("notes.md", "# Title\n\n```rust\nfn main() {}\n```\n");
        assert_eq!(lines.len(), 5);
        assert!(lines[3].spans.len() > 1, "code is coloured: {:?}", lines[3]);
        let plain = highlight("x.unknownext", "a\tb\n");
        assert_eq!(
            plain[0]
                .spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>(),
            "a    b"
        );
    }

    #[test]
    fn editor_tracks_dirtiness() {
        let mut e = Editor::new("n.md".into(), "a\nb");
        assert!(!e.dirty());
        e.area.insert_str("x");
        assert!(e.dirty());
        assert_eq!(e.text(), "xa\nb");
    }
}
