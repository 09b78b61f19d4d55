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
use ratatui_textarea::{CursorMove, Scrolling, TextArea, WrapMode};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, ThemeSet};
use syntect::parsing::SyntaxSet;

use crate::action::{Motion, TextEdit, TextMotion, TextOp};
use crate::panes::scroll::Window;
use crate::sanitize::for_terminal;
use crate::text::{truncate, truncate_middle};
use crate::theme::Theme;
use crate::vocab::EDITOR;
use crate::vocab::mentions::USER;

pub(crate) static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);
pub(crate) static THEMES: LazyLock<ThemeSet> = LazyLock::new(ThemeSet::load_defaults);

/// Documents up to this many lines are highlighted whole, exactly; longer
/// ones only around the lines shown ([`Viewer::visible`]).
pub const WHOLE_LINES: usize = 2_000;
/// Lines highlighted above the first one shown in a long document, to let
/// the highlighter settle (a construct opened further up may be missed).
pub const CONTEXT_LINES: usize = 100;

/// Highlights `content` by the file's extension (plain text when unknown).
/// In markdown, fenced code blocks (```` ```lang ````) are highlighted as
/// their language. Lines longer than 2,000 characters are shown plain.
pub fn highlight(file: &str, content: &str) -> Vec<Line<'static>> {
    highlight_lines(file, content.split_inclusive('\n'))
}

/// Highlights consecutive lines (each with its `\n`), starting from a
/// fresh highlighter state.
fn highlight_lines<'a>(file: &str, lines: impl Iterator<Item = &'a str>) -> Vec<Line<'static>> {
    let ext = file.rsplit('.').next().unwrap_or("");
    let syntax = SYNTAXES
        .find_syntax_by_extension(ext)
        .unwrap_or_else(|| SYNTAXES.find_syntax_plain_text());
    let markdown = syntax.name == "Markdown";
    let theme = &THEMES.themes["base16-ocean.dark"];
    let mut outer = HighlightLines::new(syntax, theme);
    // The highlighter of the fenced block we are in, with its fence.
    let mut fence: Option<(HighlightLines, String)> = None;
    let mut out = Vec::new();
    for line in lines {
        let plain = || plain_line(line);
        if line.len() > 2000 {
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
        let mut l = styled(&mut outer, line).unwrap_or_else(plain);
        if markdown && let Some(marker) = list_marker(line) {
            calm_list_item(&mut l, marker, theme);
        }
        out.push(l);
    }
    out
}

/// The width of a markdown list item's marker with its indent (`  - `,
/// `12. `, `3) `), when `line` is one.
fn list_marker(line: &str) -> Option<usize> {
    let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
    let rest = &line[indent..];
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let marker = if digits > 0 && digits <= 9 {
        rest[digits..]
            .starts_with(['.', ')'])
            .then_some(digits + 1)?
    } else if rest.starts_with(['-', '*', '+']) {
        1
    } else {
        return None;
    };
    rest[marker..]
        .starts_with([' ', '\t', '\n'])
        .then_some(indent + marker)
}

/// The colour of list markers (bullets and numbers): the highlighting
/// theme's blue, not its red (which reads as an error).
const LIST_MARK: Color = Color::Rgb(143, 161, 179);

/// A list item as the highlighter colours it is red from its marker to
/// its end; the marker becomes [`LIST_MARK`] and the item's text the plain
/// foreground (spans styled otherwise, such as `code`, keep their colour).
fn calm_list_item(line: &mut Line<'static>, marker: usize, theme: &syntect::highlighting::Theme) {
    let Some(red) = line
        .spans
        .iter()
        .find(|s| !s.content.trim().is_empty())
        .and_then(|s| s.style.fg)
    else {
        return;
    };
    let text = theme
        .settings
        .foreground
        .map_or(Color::Reset, |c| Color::Rgb(c.r, c.g, c.b));
    // Split the span where the marker ends, then recolour.
    let mut spans = Vec::new();
    let mut at = 0;
    for span in std::mem::take(&mut line.spans) {
        let len = span.content.len();
        let recolour = |content: String, fg: Color| {
            let style = if span.style.fg == Some(red) {
                span.style.fg(fg)
            } else {
                span.style
            };
            Span::styled(content, style)
        };
        if at >= marker {
            spans.push(recolour(span.content.to_string(), text));
        } else if at + len <= marker {
            spans.push(recolour(span.content.to_string(), LIST_MARK));
        } else {
            let (head, tail) = span.content.split_at(marker - at);
            spans.push(recolour(head.to_string(), LIST_MARK));
            spans.push(recolour(tail.to_string(), text));
        }
        at += len;
    }
    line.spans = spans;
}

/// A line as shown without highlighting.
fn plain_line(line: &str) -> Line<'static> {
    Line::raw(line.trim_end_matches('\n').replace('\t', "    "))
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

/// A document open in the viewer. Opening one costs no highlighting:
/// lines are highlighted when first drawn, only those shown (plus some
/// context above them in a long document), so a huge document never holds
/// up input.
#[derive(Clone, Debug)]
pub struct Viewer {
    /// Its path.
    pub file: String,
    /// Its content (sanitised).
    pub content: String,
    /// Its content as read (line endings, control bytes), for the editor.
    pub raw: String,
    /// Where each line starts in `content` (and where the last ends).
    bounds: Vec<usize>,
    /// Highlighted lines, filled in as they are drawn.
    styled: Vec<Option<Line<'static>>>,
    /// First (wrapped) line shown.
    pub scroll: usize,
    /// For the last width drawn: the first wrapped row of each line, and
    /// the total.
    rows: Option<(usize, Vec<usize>)>,
    /// Lines highlighted so far (what opening and drawing cost).
    pub highlighted: usize,
    /// Who changed it last, when known.
    pub changed_by: Option<String>,
    /// Why it could not be read (not UTF-8, too large…), shown in its place
    /// so an unreadable document never looks empty (and is never edited).
    pub unreadable: Option<String>,
}

impl Viewer {
    /// A viewer over `content`.
    pub fn new(file: String, content: &str) -> Viewer {
        let raw = content.to_string();
        let content = for_terminal(content);
        let mut bounds = vec![0];
        bounds.extend(content.match_indices('\n').map(|(i, _)| i + 1));
        if bounds.last() != Some(&content.len()) {
            bounds.push(content.len());
        }
        let n = bounds.len() - 1;
        Viewer {
            raw,
            file,
            content,
            bounds,
            styled: vec![None; n],
            scroll: 0,
            rows: None,
            highlighted: 0,
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

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.styled.len()
    }

    /// Whether the document is empty.
    pub fn is_empty(&self) -> bool {
        self.styled.is_empty()
    }

    fn line(&self, i: usize) -> &str {
        &self.content[self.bounds[i]..self.bounds[i + 1]]
    }

    /// Highlights the lines `range` unless they already are: a short
    /// document whole, a long one from [`CONTEXT_LINES`] above.
    fn ensure_styled(&mut self, range: std::ops::Range<usize>) {
        if self.styled[range.clone()].iter().all(Option::is_some) {
            return;
        }
        let from = if self.len() <= WHOLE_LINES {
            0
        } else {
            range.start.saturating_sub(CONTEXT_LINES)
        };
        let to = if self.len() <= WHOLE_LINES {
            self.len()
        } else {
            range.end
        };
        let lines = highlight_lines(&self.file, (from..to).map(|i| self.line(i)));
        self.highlighted += lines.len();
        for (i, l) in (from..to).zip(lines) {
            // Lines drawn before keep their (better settled) colours.
            if range.contains(&i) || self.styled[i].is_none() {
                self.styled[i] = Some(l);
            }
        }
    }

    /// The rows of lines wrapped to `width` (plain text: colours do not
    /// change widths), cached per width.
    fn row_starts(&mut self, width: usize) -> &[usize] {
        if !matches!(&self.rows, Some((w, _)) if *w == width) {
            let mut starts = Vec::with_capacity(self.len() + 1);
            let mut at = 0;
            for i in 0..self.len() {
                starts.push(at);
                let text = self.line(i).trim_end_matches('\n').to_string();
                at += crate::text::wrap_runs(&[(text, Style::new())], width)
                    .len()
                    .max(1);
            }
            starts.push(at);
            self.rows = Some((width, starts));
        }
        self.rows
            .as_ref()
            .map(|(_, s)| s.as_slice())
            .unwrap_or(&[0])
    }

    /// The wrapped rows to show in a `width` × `height` view, scrolled by
    /// [`Viewer::scroll`] (clamped to the end); highlights only the lines
    /// they come from.
    pub fn visible(&mut self, width: usize, height: usize) -> Vec<Line<'static>> {
        if self.is_empty() {
            return Vec::new();
        }
        let wanted = self.scroll;
        let n = self.len();
        let starts = self.row_starts(width);
        let total = *starts.last().unwrap_or(&0);
        let scroll = Window {
            len: total,
            height: height.max(1),
        }
        .clamp(wanted);
        let first = starts.partition_point(|&s| s <= scroll).saturating_sub(1);
        let skip = scroll - starts[first];
        let end = starts.partition_point(|&s| s < scroll + height).min(n);
        self.scroll = scroll;
        self.ensure_styled(first..end.max(first + 1));
        (first..end.max(first + 1))
            .flat_map(|i| {
                let runs: Vec<(String, Style)> = self.styled[i]
                    .as_ref()
                    .map(|l| {
                        l.spans
                            .iter()
                            .map(|s| (s.content.to_string(), s.style))
                            .collect()
                    })
                    .unwrap_or_default();
                crate::text::wrap_runs(&runs, width)
            })
            .skip(skip)
            .take(height)
            .collect()
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

    /// Ends the text with a line break unless it has one (or is empty):
    /// a saved document ends with exactly the one it had, or one. The line
    /// break is put in the editor itself (an empty last line, as a
    /// document that ends with one shows), so what is shown is what is
    /// saved; the cursor stays where it was.
    pub fn end_with_newline(&mut self) {
        if self.area.lines().last().is_none_or(String::is_empty) {
            return;
        }
        let at = self.area.cursor();
        let (row, col) = (at.0, at.1);
        self.area.cancel_selection();
        self.area.move_cursor(CursorMove::Bottom);
        self.area.move_cursor(CursorMove::End);
        self.area.insert_newline();
        // Past 65,535 lines the cursor comes back to that line.
        let clamp = |n: usize| u16::try_from(n).unwrap_or(u16::MAX);
        self.area
            .move_cursor(CursorMove::Jump(clamp(row), clamp(col)));
    }

    /// Whether it differs from the base.
    pub fn dirty(&self) -> bool {
        self.text() != self.base
    }

    /// Carries out a `text` command: a move (ending the selection, or
    /// extending it) or an edit.
    pub fn apply(&mut self, op: TextOp) {
        let a = &mut self.area;
        match op {
            TextOp::Move { motion, select } => {
                if !select {
                    a.cancel_selection();
                } else if !a.is_selecting() {
                    a.start_selection();
                }
                match cursor_moves(motion) {
                    Some(moves) => moves.iter().for_each(|m| a.move_cursor(*m)),
                    None if motion == TextMotion::PageUp => a.scroll(Scrolling::PageUp),
                    None => a.scroll(Scrolling::PageDown),
                }
            }
            TextOp::Edit(edit) => {
                match edit {
                    TextEdit::Newline => a.insert_newline(),
                    TextEdit::Tab => _ = a.insert_tab(),
                    TextEdit::Backspace => _ = a.delete_char(),
                    TextEdit::Delete => _ = a.delete_next_char(),
                    TextEdit::DeleteWordBack => _ = a.delete_word(),
                    TextEdit::DeleteWordForward => _ = a.delete_next_word(),
                    TextEdit::DeleteToLineEnd => _ = a.delete_line_by_end(),
                    TextEdit::DeleteToLineStart => _ = a.delete_line_by_head(),
                    TextEdit::Undo => _ = a.undo(),
                    TextEdit::Redo => _ = a.redo(),
                    TextEdit::Cut => _ = a.cut(),
                    TextEdit::Copy => a.copy(),
                    TextEdit::Paste => _ = a.paste(),
                };
            }
        }
    }
}

/// The text area's moves for a `text` move; `None` for a page (the text
/// area scrolls instead). The start and the end of the document are its
/// first and last character (the text area's top and bottom keep the
/// column).
fn cursor_moves(m: TextMotion) -> Option<&'static [CursorMove]> {
    Some(match m {
        TextMotion::Left => &[CursorMove::Back],
        TextMotion::Right => &[CursorMove::Forward],
        TextMotion::Up => &[CursorMove::Up],
        TextMotion::Down => &[CursorMove::Down],
        TextMotion::PageUp | TextMotion::PageDown => return None,
        TextMotion::LineStart => &[CursorMove::Head],
        TextMotion::LineEnd => &[CursorMove::End],
        TextMotion::WordBack => &[CursorMove::WordBack],
        TextMotion::WordForward => &[CursorMove::WordForward],
        TextMotion::ParagraphBack => &[CursorMove::ParagraphBack],
        TextMotion::ParagraphForward => &[CursorMove::ParagraphForward],
        TextMotion::Top => &[CursorMove::Top, CursorMove::Head],
        TextMotion::Bottom => &[CursorMove::Bottom, CursorMove::End],
    })
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

    /// The file list as a view (for moving its selection).
    pub(super) fn list_window(&self) -> Window {
        Window {
            len: self.files.len(),
            height: self.view_height,
        }
    }

    /// Scrolls the viewer by `motion` (drawing clamps it to the end).
    pub(super) fn scroll_viewer(&mut self, motion: Motion) {
        if let Some(v) = &mut self.viewer {
            v.scroll = Window::uncounted(self.view_height).scroll(v.scroll, motion);
        }
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
                                by_whom(&c.by)
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
                    None if v.is_empty() => {
                        buf.set_string(view.x, view.y, "(empty)", theme.dimmed());
                    }
                    None => {}
                }
                for (k, l) in v.visible(view.width as usize, h).iter().enumerate() {
                    buf.set_line(view.x, view.y + k as u16, l, view.width);
                }
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

/// Who made a change, as the banners say it: `by coder`, `on disk by
/// another program` (the document watcher's [`EDITOR`]), `by you in
/// another window` (another front end of the user), `elsewhere` when
/// unknown.
pub fn by_whom(by: &str) -> String {
    match by {
        EDITOR => "on disk by another program".to_string(),
        USER => "by you in another window".to_string(),
        "" | "someone" => "elsewhere".to_string(),
        agent => format!("by {}", for_terminal(agent)),
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

    /// Opening a 20,000-line document highlights nothing; drawing it
    /// highlights what is shown (and some context), wherever it is
    /// scrolled, never the whole document.
    #[test]
    fn highlighting_is_bounded_by_the_visible_range() {
        let content: String = (0..20_000)
            .map(|i| format!("## Heading {i}\n\nSome *text* with `code` {i}.\n"))
            .collect();
        let mut v = Viewer::new("big.md".into(), &content);
        assert_eq!(v.len(), 60_000);
        assert_eq!(v.highlighted, 0, "opening highlights nothing");
        let (width, height) = (80, 40);
        let top = v.visible(width, height);
        assert_eq!(top.len(), height);
        assert!(
            top[0].spans.len() > 1 || top[0].spans[0].style != Style::new(),
            "coloured"
        );
        let bound = height + CONTEXT_LINES;
        assert!(
            v.highlighted <= bound,
            "{} lines highlighted",
            v.highlighted
        );
        for scroll in [30_000, usize::MAX] {
            let before = v.highlighted;
            v.scroll = scroll;
            let shown = v.visible(width, height);
            assert_eq!(shown.len(), height);
            assert!(
                v.highlighted - before <= bound,
                "{} lines highlighted to show {height}",
                v.highlighted - before
            );
        }
        // The end is reached: the last line is the last shown.
        let last: String = v.visible(width, height)[height - 1]
            .spans
            .iter()
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(last, "Some *text* with `code` 19999.");
        // Drawing again highlights nothing more.
        let before = v.highlighted;
        v.visible(width, height);
        assert_eq!(v.highlighted, before);
    }

    #[test]
    fn a_short_document_is_highlighted_whole_once() {
        let mut v = Viewer::new("n.md".into(), "```rust\nfn main() {}\n```\ntext\n");
        v.scroll = 1;
        let shown = v.visible(40, 2);
        assert_eq!(v.highlighted, 4);
        // The fence opened above the view still colours the code.
        assert!(shown[0].spans.len() > 1, "{:?}", shown[0]);
    }

    #[test]
    fn editor_tracks_dirtiness() {
        let mut e = Editor::new("n.md".into(), "a\nb");
        assert!(!e.dirty());
        e.area.insert_str("x");
        assert!(e.dirty());
        assert_eq!(e.text(), "xa\nb");
    }

    /// Numbered lists read like bullets: the marker in the list colour, the
    /// text plain, nothing in the highlighter's red (issue 25).
    #[test]
    fn list_items_are_not_red() {
        let red = Some(Color::Rgb(191, 97, 106));
        let lines = highlight(
            "notes.md",
            "# Plan\n1. Parse a --shout flag.\n  12) nested\n- a bullet\n* star\n",
        );
        for l in &lines[1..] {
            let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
            assert!(l.spans.iter().all(|s| s.style.fg != red), "{text}: {l:?}");
            let first = l.spans.iter().find(|s| !s.content.trim().is_empty());
            assert_eq!(first.and_then(|s| s.style.fg), Some(LIST_MARK), "{text}");
        }
        assert_eq!(list_marker("1. one"), Some(2));
        assert_eq!(list_marker("  12) two"), Some(5));
        assert_eq!(list_marker("2024. was a year"), Some(5));
        assert_eq!(list_marker("1.5 is a number"), None);
        assert_eq!(list_marker("-not a list"), None);
    }
}
