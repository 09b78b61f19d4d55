//! The form `n` opens in the control room (the claude-squad habit): a new
//! agent's name, backend and workspace, sent to the engine as
//! [`Command::AddAgent`](crate::vocab::Command::AddAgent) on Enter. The
//! engine checks it as a workflow file's agent; its refusal shows in the
//! form, which stays open until the engine accepts or Esc cancels. Pure:
//! keys in, [`FormEvent`]s out, drawn from its state.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::{Position, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};

use crate::theme::Theme;
use crate::vocab::agents::{ADDABLE_BACKENDS, NewAgent, WorkspaceMode};

/// The longest name the form takes (far past any real agent name).
const MAX_NAME: usize = 64;

/// A field of the form.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Field {
    /// The agent's name (typed).
    #[default]
    Name,
    /// Its backend (cycled).
    Backend,
    /// Its workspace (cycled).
    Workspace,
}

impl Field {
    const ORDER: [Field; 3] = [Field::Name, Field::Backend, Field::Workspace];

    fn step(self, forward: bool) -> Field {
        let i = Field::ORDER.iter().position(|f| *f == self).unwrap_or(0);
        let n = Field::ORDER.len();
        Field::ORDER[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }]
    }
}

/// What a key did to the form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FormEvent {
    /// Changed (or not) the form; nothing to send.
    Nothing,
    /// Add this agent (the form waits for the engine's answer).
    Submit(NewAgent),
    /// Close the form.
    Cancel,
}

/// The form's state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AddAgentForm {
    /// The name typed so far.
    pub name: String,
    /// The backend chosen, an index into [`ADDABLE_BACKENDS`].
    pub backend: usize,
    /// The workspace chosen; `None`: the workflow's default.
    pub workspace: Option<WorkspaceMode>,
    /// The field keys go to.
    pub field: Field,
    /// Why the last try was refused (the engine's words).
    pub error: Option<String>,
    /// A try was sent and its answer has not come.
    pub waiting: bool,
}

/// The workspace choices in cycle order.
const WORKSPACES: [Option<WorkspaceMode>; 3] = [
    None,
    Some(WorkspaceMode::Shared),
    Some(WorkspaceMode::Worktree),
];

fn cycle<T: PartialEq + Copy>(all: &[T], now: T, forward: bool) -> T {
    let i = all.iter().position(|x| *x == now).unwrap_or(0);
    let n = all.len();
    all[if forward {
        (i + 1) % n
    } else {
        (i + n - 1) % n
    }]
}

impl AddAgentForm {
    /// The agent the form describes now.
    pub fn agent(&self) -> NewAgent {
        NewAgent {
            name: self.name.trim().to_string(),
            backend: ADDABLE_BACKENDS[self.backend % ADDABLE_BACKENDS.len()].to_string(),
            workspace: self.workspace,
        }
    }

    /// Cycles the focused choice (the backend or the workspace).
    fn cycle(&mut self, forward: bool) {
        match self.field {
            Field::Name => self.field = self.field.step(forward),
            Field::Backend => {
                let all: Vec<usize> = (0..ADDABLE_BACKENDS.len()).collect();
                self.backend = cycle(&all, self.backend, forward);
            }
            Field::Workspace => self.workspace = cycle(&WORKSPACES, self.workspace, forward),
        }
    }

    /// Takes one key: Esc cancels, Enter adds, Up/Down move between
    /// fields, Tab/Shift-Tab and Left/Right cycle the backend and the
    /// workspace (on the name, Tab moves on), characters type the name.
    pub fn key(&mut self, key: &KeyEvent) -> FormEvent {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return FormEvent::Cancel,
            KeyCode::Char('c') if ctrl => return FormEvent::Cancel,
            KeyCode::Enter if self.waiting => {}
            KeyCode::Enter if self.name.trim().is_empty() => {
                self.error = Some("name the agent first".into());
                self.field = Field::Name;
            }
            KeyCode::Enter => {
                self.error = None;
                self.waiting = true;
                return FormEvent::Submit(self.agent());
            }
            KeyCode::Up => self.field = self.field.step(false),
            KeyCode::Down => self.field = self.field.step(true),
            KeyCode::Tab | KeyCode::Right => self.cycle(true),
            KeyCode::BackTab | KeyCode::Left => self.cycle(false),
            KeyCode::Char(' ') if self.field != Field::Name => self.cycle(true),
            KeyCode::Backspace if self.field == Field::Name => {
                self.name.pop();
                self.error = None;
            }
            KeyCode::Char(c)
                if self.field == Field::Name
                    && !ctrl
                    && !c.is_control()
                    && self.name.chars().count() < MAX_NAME =>
            {
                self.name.push(c);
                self.error = None;
            }
            _ => {}
        }
        FormEvent::Nothing
    }

    /// The engine refused the last try: say why, and let the person fix
    /// it.
    pub fn refused(&mut self, error: &str) {
        self.waiting = false;
        self.error = Some(crate::sanitize::for_terminal(error));
    }

    /// Draws the form centred over `area`; the terminal cursor's place
    /// when the name field has the focus.
    pub fn draw(&self, area: Rect, buf: &mut Buffer, theme: &Theme) -> Option<Position> {
        let w = area.width.saturating_sub(4).min(72);
        let h = 8u16.min(area.height);
        if w < 30 || h < 6 {
            return None;
        }
        let rect = Rect::new(
            area.x + (area.width - w) / 2,
            area.y + (area.height - h) / 2,
            w,
            h,
        );
        Clear.render(rect, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(Style::new().fg(theme.accent))
            .title(" add an agent · enter adds · esc cancels ");
        let inner = block.inner(rect);
        block.render(rect, buf);
        let workspace = match self.workspace {
            None => "as the workflow says",
            Some(m) => m.name(),
        };
        let name = crate::sanitize::for_terminal(&self.name);
        let rows = [
            (Field::Name, "name", name.clone()),
            (
                Field::Backend,
                "backend",
                format!("‹ {} ›", self.agent().backend),
            ),
            (Field::Workspace, "workspace", format!("‹ {workspace} ›")),
        ];
        let width = inner.width as usize;
        for (i, (field, label, value)) in rows.iter().enumerate() {
            let style = if *field == self.field {
                Style::new().fg(theme.accent).add_modifier(Modifier::BOLD)
            } else {
                Style::new()
            };
            let line = format!("{label:>10}: {value}");
            let line: String = line.chars().take(width.saturating_sub(1)).collect();
            buf.set_string(inner.x + 1, inner.y + i as u16, line, style);
        }
        let (note, style) = match (&self.error, self.waiting) {
            (Some(e), _) => (e.clone(), Style::new().fg(theme.error)),
            (None, true) => ("adding…".to_string(), Style::new().fg(theme.dim)),
            (None, false) => (
                "↑/↓ field · tab/←/→ choose".to_string(),
                Style::new().fg(theme.dim),
            ),
        };
        // The engine's reasons are long: up to two lines under the fields.
        let chars: Vec<char> = note.chars().collect();
        let per_line = width.saturating_sub(2).max(1);
        for (i, chunk) in chars.chunks(per_line).take(2).enumerate() {
            let y = inner.y + inner.height.saturating_sub(2) + i as u16;
            buf.set_string(inner.x + 1, y, chunk.iter().collect::<String>(), style);
        }
        (self.field == Field::Name).then(|| {
            let typed = crate::text::width(&name) as u16;
            Position::new(
                (inner.x + 13 + typed).min(inner.x + inner.width - 1),
                inner.y,
            )
        })
    }
}
