//! Keys, the mouse, pasted text and the command bar: which component
//! takes each input (see the parent module), turned into actions.

use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::Position;

use crate::QuitAction;
use crate::action::{Action, FocusTarget, Motion, Pane};
use crate::component::{Component, Handle, Mouse};
use crate::keymap::{Key, Section};
use crate::panes::command_bar::{BarEvent, BarMode};
use crate::panes::scroll::Window;
use crate::sanitize::for_terminal;

use super::*;

impl App {
    pub(super) fn key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if key.kind == KeyEventKind::Release {
            self.dirty = false;
            return Vec::new();
        }
        let Some(k) = Key::from_event(&key) else {
            return Vec::new();
        };
        if let Some(effects) = self.add_agent_key(&key) {
            return effects;
        }
        // The overlays on top get the key first, in the order they are
        // drawn (see [`Layer`]): what takes a key is what is seen on top.
        for overlay in Layer::BOTTOM_FIRST.into_iter().rev() {
            if let Some(effects) = self.overlay_key(overlay, &key, &k) {
                return effects;
            }
        }
        self.status = None;
        if self.focus == Pane::Bar {
            return self.bar_key(key, k);
        }
        if self.focus == Pane::Documents
            && let Some(o) = Component::key(&mut self.documents, &key, &k, &self.keymap)
        {
            return self.apply(Some(Pane::Documents), o);
        }
        match self.keymap.lookup(self.focus, &k).cloned() {
            Some(a) => self.act(a),
            None => {
                self.dirty = false;
                Vec::new()
            }
        }
    }

    /// Gives the key to `overlay` when it is open and takes it; `None`
    /// lets it go on down (to the overlay below, then the panes).
    fn overlay_key(&mut self, overlay: Layer, key: &KeyEvent, k: &Key) -> Option<Vec<Effect>> {
        let (key, k) = (*key, *k);
        match overlay {
            Layer::Confirm => self.confirm_key(k),
            Layer::Help | Layer::Rules => self.scrolling_overlay_key(overlay, k),
            Layer::Card => self.card_key(k),
            Layer::Diff => self.diff_key(key, k),
            Layer::Live => self.live_key(key, k),
        }
    }

    /// The question takes every key: `[keys.confirm]` says what each
    /// answers; a key with Ctrl, Alt or Shift that is not bound itself
    /// answers as the bare key does; any other key answers no (a stray
    /// key never leaves a question open for a later `y`).
    fn confirm_key(&mut self, k: Key) -> Option<Vec<Effect>> {
        let c = self.confirm.clone()?;
        let bare = Key {
            ctrl: false,
            alt: false,
            shift: false,
            ..k
        };
        let Some(action) = self
            .keymap
            .get(Section::Confirm, &k)
            .or_else(|| self.keymap.get(Section::Confirm, &bare))
            .cloned()
        else {
            return Some(self.answer_no());
        };
        Some(match action {
            Action::Detach => {
                if c.on_yes == ConfirmAction::Quit && self.options.on_quit == QuitAction::Ask {
                    self.confirm = None;
                    self.act(Action::Detach)
                } else {
                    self.answer_no()
                }
            }
            // Quitting again while asked to quit means it; over any other
            // question it answers no.
            Action::Quit { .. } => {
                if c.on_yes == ConfirmAction::Quit {
                    self.act(Action::Yes)
                } else {
                    self.act(Action::No)
                }
            }
            a => self.act(a),
        })
    }

    fn diff_key(&mut self, key: KeyEvent, k: Key) -> Option<Vec<Effect>> {
        let d = self.diff.as_mut()?;
        // The diff view takes every key.
        let o = Component::key(d, &key, &k, &self.keymap).unwrap_or_default();
        if o.close {
            self.diff = None;
        }
        Some(self.apply(None, o))
    }

    /// The scroll of the help or the rules overlay, with its page (as
    /// last drawn); `None` for the other layers.
    fn overlay_scroll(&mut self, overlay: Layer) -> Option<(&mut Option<usize>, usize)> {
        match overlay {
            Layer::Help => Some((&mut self.help, self.help_page)),
            Layer::Rules => Some((&mut self.rules_view, self.rules_page)),
            _ => None,
        }
    }

    /// `[keys.help]` or `[keys.rules]` while that overlay is open: it
    /// takes every key; its moves scroll it (a page as drawn, keeping one
    /// line of the last in view; drawing clamps it to the last page),
    /// `back` closes it, any other command is carried out.
    fn scrolling_overlay_key(&mut self, overlay: Layer, k: Key) -> Option<Vec<Effect>> {
        let action = self.keymap.get(overlay.section(), &k).cloned();
        let (scroll, page) = self.overlay_scroll(overlay)?;
        let offset = (*scroll)?;
        match action {
            Some(Action::Move(m)) => *scroll = Some(Window::uncounted(page).scroll(offset, m)),
            Some(Action::Back) => *scroll = None,
            Some(other) => return Some(self.act(other)),
            None => {}
        }
        Some(Vec::new())
    }

    /// `[keys.card]` while the card is shown: its commands act on the
    /// card's request (`approve`, `deny`, and a prompt of `/approve` or
    /// `/deny` gets its number), its moves scroll it (drawing clamps the
    /// offset to the last page); unbound keys go on down, and so do all
    /// keys while the screen is too small to show the card.
    fn card_key(&mut self, k: Key) -> Option<Vec<Effect>> {
        // A line being typed in the live view keeps its keys.
        let typing = self
            .live
            .as_ref()
            .is_some_and(|l| !l.input.input.is_empty());
        if self.focus == Pane::Bar || self.documents.editor.is_some() || typing {
            return None;
        }
        let request = self.card()?.id;
        // A card too small to draw shows nothing: it decides nothing.
        if self.card_page == 0 {
            return None;
        }
        let action = match self.keymap.get(Section::Card, &k)?.clone() {
            Action::Decide {
                request: None,
                allow,
                always,
                reason,
            } => Action::Decide {
                request: Some(request),
                allow,
                always,
                reason,
            },
            Action::Prompt(text) => Action::Prompt(for_request(&text, request)),
            Action::Move(m) => {
                let offset = self
                    .card_scroll
                    .filter(|(id, _)| *id == request)
                    .map_or(0, |(_, offset)| offset);
                let moved = Window::uncounted(self.card_page).scroll(offset, m);
                self.card_scroll = Some((request, moved));
                return Some(Vec::new());
            }
            a => a,
        };
        Some(self.act(action))
    }

    pub(super) fn bar_key(&mut self, key: KeyEvent, k: Key) -> Vec<Effect> {
        // `@` completes agents, then every running instance.
        let mut names = self.names();
        for i in &self.instances {
            if !names.contains(i) {
                names.push(i.clone());
            }
        }
        match self.bar.event(&key, &names) {
            BarEvent::Consumed => Vec::new(),
            BarEvent::Leave => {
                self.focus = self.before_bar;
                Vec::new()
            }
            BarEvent::Submit(line, BarMode::Search) => {
                self.focus = Pane::Channel;
                self.act(Action::Search(Some(line)))
            }
            BarEvent::Submit(line, mode) => {
                let parsed = if mode == BarMode::CommandLine {
                    Action::from_command_line(&line)
                } else {
                    Action::from_bar(&line)
                };
                match parsed {
                    None => Vec::new(),
                    Some(Ok(a)) => {
                        let focus_was = self.focus;
                        let effects = self.act(a);
                        // A refused command keeps its line to fix.
                        if self.focus == focus_was && self.status.as_ref().is_some_and(|s| s.error)
                        {
                            self.keep_line(mode, &line);
                        }
                        effects
                    }
                    Some(Err(e)) => {
                        self.keep_line(mode, &line);
                        self.error(e.to_string());
                        Vec::new()
                    }
                }
            }
            // Keys the bar does not use: Tab with nothing to complete says
            // so and keeps the line (from an empty bar it moves the focus,
            // as everywhere); Shift-Tab moves the focus; global bindings
            // with Ctrl work.
            BarEvent::NotConsumed => match key.code {
                KeyCode::Tab if !self.bar.input.is_empty() => {
                    let why = self.bar.no_completion();
                    self.info(why);
                    Vec::new()
                }
                KeyCode::Tab | KeyCode::BackTab => {
                    // Leaving an empty bar: it opens for messages again.
                    if self.bar.input.is_empty() {
                        self.bar.mode = BarMode::Command;
                    }
                    let next = if key.code == KeyCode::Tab {
                        FocusTarget::Next
                    } else {
                        FocusTarget::Prev
                    };
                    self.act(Action::Focus(next))
                }
                _ if k.reaches_past_the_bar() => {
                    match self.keymap.get(Section::Global, &k).cloned() {
                        Some(a) => self.act(a),
                        None => Vec::new(),
                    }
                }
                _ => Vec::new(),
            },
        }
    }

    /// Puts a line that was not carried out back in the bar, in the mode
    /// it was typed in (a command line stays one: it is never posted).
    fn keep_line(&mut self, mode: BarMode, line: &str) {
        self.bar.mode = mode;
        self.bar.set(line);
    }

    pub(super) fn paste(&mut self, text: &str) {
        let text = for_terminal(text);
        if let Some(view) = &mut self.live {
            view.input.insert(&text);
            return;
        }
        if self.focus == Pane::Documents
            && let Some(e) = &mut self.documents.editor
        {
            e.area.insert_str(text);
            return;
        }
        if self.focus != Pane::Bar {
            self.before_bar = self.focus;
            self.focus = Pane::Bar;
        }
        self.bar.insert(&text);
    }

    pub(super) fn pane_at(&self, x: u16, y: u16) -> Option<Pane> {
        let p = Position::new(x, y);
        let a = &self.areas;
        [
            (a.agents, Pane::Agents),
            (a.channel, Pane::Channel),
            (a.inbox, Pane::Inbox),
            (a.documents, Pane::Documents),
            (a.tasks, Pane::Tasks),
            (a.bar, Pane::Bar),
        ]
        .into_iter()
        .find(|(r, _)| r.contains(p))
        .map(|(_, pane)| pane)
    }

    pub(super) fn mouse(&mut self, m: MouseEvent) -> Vec<Effect> {
        // Over the live view the wheel scrolls it; nothing else reaches
        // the panes under it.
        if let Some(view) = &mut self.live
            && self.diff.is_none()
        {
            match m.kind {
                MouseEventKind::ScrollDown => view.scroll_by(Motion::ScrollDown(3)),
                MouseEventKind::ScrollUp => view.scroll_by(Motion::ScrollUp(3)),
                _ => self.dirty = false,
            }
            return Vec::new();
        }
        if self.help.is_some() || self.confirm.is_some() {
            let motion = match m.kind {
                MouseEventKind::ScrollDown => Some(Motion::ScrollDown(3)),
                MouseEventKind::ScrollUp => Some(Motion::ScrollUp(3)),
                _ => None,
            };
            if let (Some(s), Some(motion)) = (&mut self.help, motion) {
                *s = Window::uncounted(self.help_page).scroll(*s, motion);
            }
            return Vec::new();
        }
        let Some(pane) = self.pane_at(m.column, m.row) else {
            self.dirty = false;
            return Vec::new();
        };
        let area = match pane {
            Pane::Agents => self.areas.agents,
            Pane::Channel => self.areas.channel,
            Pane::Inbox => self.areas.inbox,
            Pane::Documents => self.areas.documents,
            Pane::Tasks => self.areas.tasks,
            Pane::Bar => self.areas.bar,
        };
        let row = m.row.saturating_sub(area.y + 1) as usize;
        match m.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                if pane == Pane::Bar {
                    if self.focus != Pane::Bar {
                        self.before_bar = self.focus;
                    }
                    self.focus = Pane::Bar;
                    return Vec::new();
                }
                // Leaving the editor by clicking elsewhere keeps it open.
                self.focus = pane;
                self.main = if pane == Pane::Agents {
                    self.main
                } else {
                    pane
                };
                if matches!(pane, Pane::Documents | Pane::Tasks) {
                    self.lower = pane;
                }
                let click = Mouse::Click {
                    row,
                    x: m.column,
                    y: m.row,
                };
                self.handle(pane, Handle::Mouse(click))
            }
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
                let up = m.kind == MouseEventKind::ScrollUp;
                self.handle(pane, Handle::Mouse(Mouse::Scroll { up }))
            }
            _ => {
                self.dirty = false;
                Vec::new()
            }
        }
    }
}

/// A prompt of `/approve` or `/deny` without a number gets the card's
/// (`/deny ` becomes `/deny 3 `); any other text is kept.
fn for_request(text: &str, request: u64) -> String {
    for head in ["/approve", "/deny"] {
        if let Some(rest) = text.strip_prefix(head)
            && (rest.is_empty() || rest.starts_with(char::is_whitespace))
        {
            let numbered = rest
                .split_whitespace()
                .next()
                .is_some_and(|w| w.trim_start_matches('#').parse::<u64>().is_ok());
            if !numbered {
                let rest = rest.strip_prefix(' ').unwrap_or(rest);
                return format!("{head} {request} {rest}");
            }
        }
    }
    text.to_string()
}
