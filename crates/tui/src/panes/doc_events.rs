//! How the documents pane reacts to engine events and to the user's
//! document actions. Each operation returns an [`Outcome`]: the commands to
//! send, a line for the status bar, and whether the pane wants the focus.
//! The app only carries it out.

use super::documents::{Conflict, Documents, Editor, Viewer, by_whom};
use crate::action::Resolution;
pub use crate::component::Outcome;
use crate::confirm::{Confirm, ConfirmAction};
use crate::sanitize::for_terminal;
use crate::vocab::Command;
use crate::vocab::DocumentChange;
use crate::vocab::EDITOR;

impl Documents {
    fn name(path: &str) -> String {
        for_terminal(path)
    }

    /// A document changed in the engine (`EngineEvent::Document`).
    pub fn changed(&mut self, path: String, change: DocumentChange, by: String) -> Outcome {
        self.changed_by.insert(path.clone(), by.clone());
        match change {
            DocumentChange::Created => {
                if let Err(i) = self.files.binary_search(&path) {
                    self.files.insert(i, path.clone());
                }
                if self.pending_new.as_deref() == Some(path.as_str()) {
                    self.pending_new = None;
                    self.edit_after_load = true;
                    let mut o = self.open(path);
                    o.focus = true;
                    return o;
                }
            }
            DocumentChange::Deleted => {
                if let Ok(i) = self.files.binary_search(&path) {
                    self.files.remove(i);
                    if self.selected >= self.files.len() {
                        self.selected = self.files.len().saturating_sub(1);
                    }
                }
                if self.viewer.as_ref().is_some_and(|v| v.file == path) {
                    self.viewer = None;
                }
                let (name, by) = (Self::name(&path), by_whom(&by));
                return if self.editor.as_ref().is_some_and(|e| e.file == path) {
                    Outcome::error(format!(
                        "{name} was deleted {by}; saving will create it again"
                    ))
                } else {
                    Outcome::info(format!("{name} deleted {by}"))
                };
            }
            DocumentChange::Written | DocumentChange::Appended => {}
        }
        let shown = self.viewer.as_ref().is_some_and(|v| v.file == path)
            || self.editor.as_ref().is_some_and(|e| e.file == path);
        if shown {
            Outcome::command(Command::ReadDocument { file: Some(path) })
        } else {
            Outcome::default()
        }
    }

    /// A document's content arrived (`Reply::Document`, the answer to this
    /// front end's own read): show it, start editing it if asked, or
    /// compare it with the editor's text.
    pub fn content(&mut self, file: String, content: String) -> Outcome {
        let by = self
            .changed_by
            .get(&file)
            .cloned()
            .unwrap_or_else(|| "someone".into());
        let was_pending = self.pending.as_deref() == Some(file.as_str());
        if was_pending {
            self.pending = None;
        }
        let viewing = self.viewer.as_ref().is_some_and(|v| v.file == file);
        if viewing || was_pending {
            let scroll = if viewing {
                self.viewer.as_ref().map_or(0, |v| v.scroll)
            } else {
                0
            };
            let mut v = Viewer::new(file.clone(), &content);
            v.scroll = scroll;
            v.changed_by = Some(by.clone());
            self.viewer = Some(v);
            if was_pending && let Some(i) = self.files.iter().position(|f| *f == file) {
                self.selected = i;
            }
        }
        if was_pending && self.edit_after_load {
            self.edit_after_load = false;
            self.editor = Some(Editor::new(file, &content));
            return Outcome {
                focus: true,
                ..Outcome::info("editing: ctrl-s saves, esc leaves")
            };
        }
        let Some(e) = self.editor.as_mut().filter(|e| e.file == file) else {
            return Outcome::default();
        };
        let name = Self::name(&file);
        let clean = for_terminal(&content);
        if e.saving.as_deref() == Some(clean.as_str()) {
            e.saving = None;
            e.base = clean;
            Outcome::info(format!("saved {name}"))
        } else if clean == e.base || clean == e.text() {
            e.base = clean;
            Outcome::default()
        } else if !e.dirty() {
            e.load(&content);
            Outcome::info(format!("{name} changed {}; reloaded", by_whom(&by)))
        } else {
            let msg = format!(
                "{name} changed {}: m keep mine, t take theirs, b see both",
                by_whom(&by)
            );
            e.conflict = Some(Conflict { theirs: clean, by });
            Outcome::error(msg)
        }
    }

    /// Asks for a document to show (leaving the editor if it edits another
    /// document without unsaved changes).
    pub fn open(&mut self, file: String) -> Outcome {
        if let Some(i) = self.files.iter().position(|f| *f == file) {
            self.selected = i;
        }
        if let Some(e) = &self.editor
            && e.file != file
        {
            if e.dirty() {
                self.edit_after_load = false;
                return Outcome::error("save (ctrl-s) or leave (esc) the editor first");
            }
            self.editor = None;
        }
        self.pending = Some(file.clone());
        Outcome::command(Command::ReadDocument { file: Some(file) })
    }

    /// Creates a document and opens it in the editor once it exists.
    pub fn create(&mut self, file: String) -> Outcome {
        self.pending_new = Some(file.clone());
        Outcome {
            focus: true,
            ..Outcome::command(Command::CreateDocument {
                file,
                content: String::new(),
            })
        }
    }

    /// The engine could not read the document asked for: the viewer says
    /// why instead of keeping the previous one or showing it empty.
    pub fn read_failed(&mut self, error: &str) {
        if let Some(file) = self.pending.take() {
            self.edit_after_load = false;
            if let Some(i) = self.files.iter().position(|f| *f == file) {
                self.selected = i;
            }
            self.viewer = Some(Viewer::unreadable(file, error));
        }
    }

    /// Edits the shown document (or the selected one, once it is read).
    pub fn edit(&mut self) -> Outcome {
        let focus = Outcome {
            focus: true,
            ..Outcome::default()
        };
        if self.editor.is_some() {
            return focus;
        }
        match &self.viewer {
            Some(v) if self.pending.is_none() && v.unreadable.is_some() => Outcome::error(format!(
                "cannot edit {}: {}",
                Self::name(&v.file),
                v.unreadable.as_deref().unwrap_or_default()
            )),
            Some(v) if self.pending.is_none() => {
                self.editor = Some(Editor::new(v.file.clone(), &v.raw));
                Outcome {
                    focus: true,
                    ..Outcome::info("editing: ctrl-s saves, esc leaves")
                }
            }
            _ => match self.selected_file().map(str::to_string) {
                Some(f) => {
                    self.edit_after_load = true;
                    Outcome {
                        focus: true,
                        ..self.open(f)
                    }
                }
                None => Outcome::error("edit: no document"),
            },
        }
    }

    /// Saves the editor's text through the engine, with the document's
    /// line endings and a line break at its end. A document holding what the editor cannot show is
    /// saved only once `confirmed` (the outcome asks first).
    pub fn save(&mut self, confirmed: bool) -> Outcome {
        let Some(e) = &mut self.editor else {
            return Outcome::error("save: nothing is being edited (e edits)");
        };
        if e.conflict.is_some() {
            return Outcome::error("resolve the conflict first: m, t or b");
        }
        if e.unshown && !confirmed {
            return Outcome::ask(Confirm {
                question: format!(
                    "{} holds control characters the editor cannot show; saving drops them. Save? (y/n)",
                    Self::name(&e.file)
                ),
                on_yes: ConfirmAction::SaveAnyway,
            });
        }
        e.unshown = false;
        e.end_with_newline();
        let content = e.to_save();
        e.saving = Some(e.text());
        let file = e.file.clone();
        Outcome {
            note: Some((format!("saving {}…", Self::name(&file)), false)),
            ..Outcome::command(Command::WriteDocument {
                file: Some(file),
                content,
            })
        }
    }

    /// Resolves a conflict; the version not kept is saved beside the
    /// document (or both end up in the editor), so nothing is lost.
    pub fn resolve(&mut self, r: Resolution) -> Outcome {
        let files = &self.files;
        let Some(e) = &mut self.editor else {
            return Outcome::error("resolve: nothing is being edited");
        };
        let Some(c) = e.conflict.take() else {
            return Outcome::error("resolve: there is no conflict");
        };
        let spare = |suffix: &str| {
            let base = format!("{}.{suffix}", e.file);
            let mut name = base.clone();
            let mut n = 2;
            while files.contains(&name) {
                name = format!("{base}.{n}");
                n += 1;
            }
            name
        };
        match r {
            Resolution::Mine => {
                let file = spare("theirs");
                e.base = c.theirs.clone();
                Outcome {
                    note: Some((
                        format!(
                            "kept yours (ctrl-s saves it); theirs is in {}",
                            Self::name(&file)
                        ),
                        false,
                    )),
                    ..Outcome::command(Command::CreateDocument {
                        file,
                        content: c.theirs,
                    })
                }
            }
            Resolution::Theirs => {
                let file = spare("mine");
                let mine = e.text();
                e.load(&c.theirs);
                Outcome {
                    note: Some((
                        format!("took theirs; yours is in {}", Self::name(&file)),
                        false,
                    )),
                    ..Outcome::command(Command::CreateDocument {
                        file,
                        content: mine,
                    })
                }
            }
            Resolution::Both => {
                let mine = e.text();
                let (merged, hunks) = mark_differences(&mine, &c.theirs, &theirs_label(&c.by));
                e.set_text(&merged);
                e.base = c.theirs;
                Outcome::info(format!(
                    "{hunks} place{} differ{}, between markers in the editor; edit, then ctrl-s",
                    if hunks == 1 { "" } else { "s" },
                    if hunks == 1 { "s" } else { "" },
                ))
            }
        }
    }
}

/// The label of their side in conflict markers.
fn theirs_label(by: &str) -> String {
    match by {
        EDITOR => "theirs (on disk)".to_string(),
        "" | "someone" => "theirs".to_string(),
        other => format!("theirs ({})", for_terminal(other)),
    }
}

/// Both versions in one text: the lines they share once, and conflict
/// markers (`<<<<<<< yours`, `=======`, `>>>>>>> <label>`) around each
/// place where they differ. Returns the text and how many places differ.
pub fn mark_differences(mine: &str, theirs: &str, label: &str) -> (String, usize) {
    use similar::{ChangeTag, TextDiff};
    fn line(out: &mut String, l: &str) {
        out.push_str(l);
        if !l.ends_with('\n') {
            out.push('\n');
        }
    }
    let diff = TextDiff::from_lines(mine, theirs);
    let mut out = String::new();
    let (mut yours, mut their) = (Vec::new(), Vec::new());
    let mut hunks = 0;
    let mut flush = |out: &mut String, yours: &mut Vec<&str>, their: &mut Vec<&str>| {
        if yours.is_empty() && their.is_empty() {
            return;
        }
        hunks += 1;
        out.push_str("<<<<<<< yours\n");
        yours.drain(..).for_each(|l| line(out, l));
        out.push_str("=======\n");
        their.drain(..).for_each(|l| line(out, l));
        out.push_str(&format!(">>>>>>> {label}\n"));
    };
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Equal => {
                flush(&mut out, &mut yours, &mut their);
                out.push_str(change.value());
            }
            ChangeTag::Delete => yours.push(change.value()),
            ChangeTag::Insert => their.push(change.value()),
        }
    }
    flush(&mut out, &mut yours, &mut their);
    (out, hunks)
}

impl crate::component::Component for Documents {
    type Context<'a> = crate::theme::Theme;

    fn act(&mut self, action: &crate::action::Action, _theme: &Self::Context<'_>) -> Outcome {
        use crate::action::{Action, Motion};
        match action {
            Action::Open => match self.selected_file() {
                Some(f) => {
                    let f = f.to_string();
                    self.open(f)
                }
                None => Outcome::default(),
            },
            Action::Back => match &self.editor {
                Some(e) if e.dirty() => Outcome::ask(Confirm {
                    question: format!(
                        "Leave the editor and drop your changes to {}? (y/n)",
                        e.file
                    ),
                    on_yes: ConfirmAction::DiscardEdit,
                }),
                Some(_) => {
                    self.editor = None;
                    Outcome::default()
                }
                None => Outcome::default(),
            },
            Action::Move(m) => {
                match *m {
                    // j/k, g/G and Home/End move in the list (the viewer
                    // scrolls with the page and scroll motions).
                    Motion::Up(_) | Motion::Down(_) | Motion::Top | Motion::Bottom => {
                        self.selected = self.list_window().select(self.selected, *m);
                    }
                    m => self.scroll_viewer(m),
                }
                Outcome::default()
            }
            _ => Outcome::default(),
        }
    }

    /// The editor takes every key: its conflict and editor bindings (its
    /// moves and edits are `text` commands), else a character types;
    /// anything else does nothing.
    fn key(
        &mut self,
        key: &ratatui::crossterm::event::KeyEvent,
        k: &crate::keymap::Key,
        keymap: &crate::keymap::Keymap,
    ) -> Option<Outcome> {
        use crate::keymap::{KeyCodeKey, Section};
        let e = self.editor.as_mut()?;
        let bound = e
            .conflict
            .as_ref()
            .and_then(|_| keymap.get(Section::Conflict, k))
            .or_else(|| keymap.get(Section::Editor, k));
        if let Some(a) = bound {
            return Some(Outcome::then(a.clone()));
        }
        if matches!(k.code, KeyCodeKey::Char(_)) && !k.ctrl && !k.alt {
            e.area.input_without_shortcuts(*key);
        }
        Some(Outcome::default())
    }

    fn mouse(&mut self, mouse: crate::component::Mouse, theme: &Self::Context<'_>) -> Outcome {
        use crate::component::Mouse;
        match mouse {
            Mouse::Click { x, y, .. } => {
                let list = self.list_area;
                if list.contains(ratatui::layout::Position::new(x, y)) && self.editor.is_none() {
                    let i = (y - list.y) as usize;
                    if i < self.files.len() {
                        self.selected = i;
                        return self.act(&crate::action::Action::Open, theme);
                    }
                }
            }
            Mouse::Scroll { up } => {
                if let Some(e) = &mut self.editor {
                    e.area.scroll((if up { -3 } else { 3 }, 0));
                } else {
                    self.scroll_viewer(if up {
                        crate::action::Motion::ScrollUp(3)
                    } else {
                        crate::action::Motion::ScrollDown(3)
                    });
                }
            }
        }
        Outcome::default()
    }

    fn commands(&self) -> (crate::keymap::Section, &'static [&'static str]) {
        use crate::action::Pane;
        use crate::keymap::Section;
        match &self.editor {
            Some(e) if e.conflict.is_some() => (
                Section::Conflict,
                &["resolve mine", "resolve theirs", "resolve both"],
            ),
            Some(_) => (Section::Editor, &["save", "back", "quit"]),
            None => (
                Section::Pane(Pane::Documents),
                &["open", "edit", "prompt /new ", "delete"],
            ),
        }
    }

    fn draw(
        &mut self,
        area: ratatui::layout::Rect,
        buf: &mut ratatui::buffer::Buffer,
        theme: &Self::Context<'_>,
        focused: bool,
    ) {
        Documents::draw(self, area, buf, theme, focused);
    }
}
