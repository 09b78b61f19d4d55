//! The editor's own commands (`text …`): cursor moves, each also
//! extending the selection (`text select word-forward`), and edits. Each is
//! declared once with its name and what it does; `[keys.editor]` binds them
//! and `?` lists them; the editor carries them out.

use std::fmt;

/// Where a `text` move goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextMotion {
    /// One character left.
    Left,
    /// One character right.
    Right,
    /// One line up.
    Up,
    /// One line down.
    Down,
    /// The start of the line.
    LineStart,
    /// The end of the line.
    LineEnd,
    /// The start of the word (or the one before).
    WordBack,
    /// The start of the next word.
    WordForward,
    /// The paragraph before.
    ParagraphBack,
    /// The next paragraph.
    ParagraphForward,
    /// The start of the document.
    Top,
    /// The end of the document.
    Bottom,
    /// A page up.
    PageUp,
    /// A page down.
    PageDown,
}

/// Every move: its name in the grammar and what it does.
pub const MOTIONS: [(TextMotion, &str, &str); 14] = [
    (TextMotion::Left, "left", "left"),
    (TextMotion::Right, "right", "right"),
    (TextMotion::Up, "up", "up"),
    (TextMotion::Down, "down", "down"),
    (TextMotion::LineStart, "line-start", "start of the line"),
    (TextMotion::LineEnd, "line-end", "end of the line"),
    (TextMotion::WordBack, "word-back", "word back"),
    (TextMotion::WordForward, "word-forward", "word forward"),
    (
        TextMotion::ParagraphBack,
        "paragraph-back",
        "paragraph back",
    ),
    (
        TextMotion::ParagraphForward,
        "paragraph-forward",
        "paragraph forward",
    ),
    (TextMotion::Top, "top", "start of the document"),
    (TextMotion::Bottom, "bottom", "end of the document"),
    (TextMotion::PageUp, "page-up", "page up"),
    (TextMotion::PageDown, "page-down", "page down"),
];

/// A change to the editor's text (or its clipboard).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextEdit {
    /// Break the line.
    Newline,
    /// Insert a tab.
    Tab,
    /// Delete the character before the cursor.
    Backspace,
    /// Delete the character under the cursor.
    Delete,
    /// Delete the word before the cursor.
    DeleteWordBack,
    /// Delete the word after the cursor.
    DeleteWordForward,
    /// Delete to the end of the line.
    DeleteToLineEnd,
    /// Delete to the start of the line.
    DeleteToLineStart,
    /// Undo the last change.
    Undo,
    /// Redo what was undone.
    Redo,
    /// Cut the selection.
    Cut,
    /// Copy the selection (inside the editor).
    Copy,
    /// Paste what was cut or copied.
    Paste,
}

/// Every edit: its name in the grammar and what it does.
pub const EDITS: [(TextEdit, &str, &str); 13] = [
    (TextEdit::Newline, "newline", "a new line"),
    (TextEdit::Tab, "tab", "a tab"),
    (
        TextEdit::Backspace,
        "backspace",
        "delete the character before",
    ),
    (TextEdit::Delete, "delete", "delete the character after"),
    (
        TextEdit::DeleteWordBack,
        "delete-word-back",
        "delete the word before",
    ),
    (
        TextEdit::DeleteWordForward,
        "delete-word-forward",
        "delete the word after",
    ),
    (
        TextEdit::DeleteToLineEnd,
        "delete-to-line-end",
        "delete to the end of the line",
    ),
    (
        TextEdit::DeleteToLineStart,
        "delete-to-line-start",
        "delete to the start of the line",
    ),
    (TextEdit::Undo, "undo", "undo"),
    (TextEdit::Redo, "redo", "redo"),
    (TextEdit::Cut, "cut", "cut the selection"),
    (TextEdit::Copy, "copy", "copy the selection"),
    (TextEdit::Paste, "paste", "paste what was cut or copied"),
];

/// One `text` command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextOp {
    /// Move the cursor; `select` extends the selection, else it ends.
    Move {
        /// Where to.
        motion: TextMotion,
        /// Whether the selection follows the cursor.
        select: bool,
    },
    /// Change the text.
    Edit(TextEdit),
}

impl TextOp {
    /// Reads the words after `text`.
    pub fn parse(words: &[&str]) -> Result<TextOp, String> {
        let (select, rest) = match words {
            ["select", rest @ ..] => (true, rest),
            _ => (false, words),
        };
        let [name] = rest else {
            return Err("which move or edit? (see [editor] in ?)".into());
        };
        if let Some((motion, _, _)) = MOTIONS.iter().find(|(_, n, _)| n == name) {
            return Ok(TextOp::Move {
                motion: *motion,
                select,
            });
        }
        match EDITS.iter().find(|(_, n, _)| n == name) {
            Some((edit, _, _)) if !select => Ok(TextOp::Edit(*edit)),
            Some(_) => Err(format!("'{name}' is an edit, not a move to select with")),
            None => Err(format!("'{name}' is no move or edit (see [editor] in ?)")),
        }
    }

    /// Its name and what it does, from the tables.
    fn entry(self) -> (&'static str, &'static str) {
        match self {
            TextOp::Move { motion, .. } => lookup(&MOTIONS, motion),
            TextOp::Edit(edit) => lookup(&EDITS, edit),
        }
    }

    /// What it does, for `?`.
    pub fn help(self) -> String {
        let what = self.entry().1;
        match self {
            TextOp::Move { select: true, .. } => format!("{what}, selecting"),
            _ => what.to_string(),
        }
    }
}

/// The name and help of `item` in `table`.
fn lookup<T: PartialEq>(
    table: &[(T, &'static str, &'static str)],
    item: T,
) -> (&'static str, &'static str) {
    table
        .iter()
        .find(|(t, _, _)| *t == item)
        .map_or(("", ""), |(_, name, what)| (*name, *what))
}

impl fmt::Display for TextOp {
    /// The words after `text` (`select word-forward`, `undo`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let TextOp::Move { select: true, .. } = self {
            f.write_str("select ")?;
        }
        f.write_str(self.entry().0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_move_and_edit_reads_back_from_its_name() {
        for (motion, name, _) in MOTIONS {
            for select in [false, true] {
                let op = TextOp::Move { motion, select };
                let text = op.to_string();
                let words: Vec<&str> = text.split_whitespace().collect();
                assert_eq!(TextOp::parse(&words), Ok(op), "{name}");
                assert!(!op.help().is_empty());
            }
        }
        for (edit, name, _) in EDITS {
            assert_eq!(TextOp::parse(&[name]), Ok(TextOp::Edit(edit)));
            assert!(TextOp::parse(&["select", name]).is_err());
        }
        assert!(TextOp::parse(&[]).is_err());
        assert!(TextOp::parse(&["left", "right"]).is_err());
    }
}
