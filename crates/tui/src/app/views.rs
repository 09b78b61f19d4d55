//! What changes the person's view rather than the instance: the focus,
//! the command bar, the overlays, the channel's search, filter and folds,
//! copying and paging, and which document is shown or edited.

use crate::action::{Filter, FocusTarget, Pane, TextOp};
use crate::component::{Handle, Selected, Selection};
use crate::panes::command_bar::BarMode;

use super::*;

impl App {
    /// `focus`: moves the focus (the bar remembers where it came from).
    pub(super) fn focus_on(&mut self, target: FocusTarget) -> Vec<Effect> {
        let i = Pane::ORDER
            .iter()
            .position(|p| *p == self.focus)
            .unwrap_or(0);
        let n = Pane::ORDER.len();
        let next = match target {
            FocusTarget::Next => Pane::ORDER[(i + 1) % n],
            FocusTarget::Prev => Pane::ORDER[(i + n - 1) % n],
            FocusTarget::Pane(p) => p,
        };
        if next == Pane::Bar && self.focus != Pane::Bar {
            self.before_bar = self.focus;
            // A line left in the bar keeps its mode: a command line or a
            // search never becomes a message to post.
            if self.bar.input.is_empty() {
                self.bar.mode = BarMode::Command;
            }
        }
        if matches!(
            next,
            Pane::Channel | Pane::Inbox | Pane::Documents | Pane::Tasks
        ) {
            self.main = next;
        }
        if matches!(next, Pane::Documents | Pane::Tasks) {
            self.lower = next;
        }
        self.focus = next;
        Vec::new()
    }

    /// Gives the bar the focus in `mode`, holding `text`.
    fn open_bar(&mut self, mode: BarMode, text: &str) {
        if self.focus != Pane::Bar {
            self.before_bar = self.focus;
        }
        self.focus = Pane::Bar;
        self.bar.mode = mode;
        self.bar.set(text);
    }

    /// `prompt`: the bar, holding `text`; `prompt :` (the `:` key) opens
    /// it as a command line, holding what follows the `:`.
    pub(super) fn prompt(&mut self, text: &str) -> Vec<Effect> {
        match text.strip_prefix(':') {
            Some(rest) => self.open_bar(BarMode::CommandLine, rest),
            None => self.open_bar(BarMode::Command, text),
        }
        Vec::new()
    }

    /// `back`: closes the help, leaves the bar, or goes back in the
    /// focused pane.
    pub(super) fn back(&mut self) -> Vec<Effect> {
        if self.help.take().is_some() {
            return Vec::new();
        }
        if self.focus == Pane::Bar {
            self.focus = self.before_bar;
            return Vec::new();
        }
        self.handle(self.focus, Handle::Act(&Action::Back))
    }

    /// `help`: opens or closes `?`.
    pub(super) fn toggle_help(&mut self) -> Vec<Effect> {
        self.help = if self.help.is_some() { None } else { Some(0) };
        Vec::new()
    }

    /// `rules`: opens or closes the approval rules.
    pub(super) fn toggle_rules(&mut self) -> Vec<Effect> {
        self.rules_view = if self.rules_view.is_some() {
            None
        } else {
            Some(0)
        };
        Vec::new()
    }

    /// `expand`: folds or unfolds the selected message.
    pub(super) fn expand(&mut self) -> Vec<Effect> {
        if !self.channel.toggle_expand() {
            self.error("the selected message has no CONTEXT block and fits the screen");
        }
        Vec::new()
    }

    /// `copy` (to the clipboard) or `pager`: the focused pane's selection,
    /// else the channel's.
    pub(super) fn copy_or_page(&mut self, copy: bool) -> Vec<Effect> {
        let verb = if copy { "copy" } else { "pager" };
        let selection = self
            .visit(self.focus, Selected(verb))
            .flatten()
            .or_else(|| self.visit(Pane::Channel, Selected(verb)).flatten());
        match selection {
            Some(Selection::Text { name, text }) if copy => {
                self.info(format!("copied {name} to the clipboard"));
                vec![Effect::Copy(text)]
            }
            Some(Selection::Text { text, .. }) => vec![Effect::Pager(text)],
            Some(Selection::Nothing(e)) => self.refuse(e),
            None => Vec::new(),
        }
    }

    /// `search`: asks for the text in the bar, or searches the channel.
    pub(super) fn search(&mut self, query: Option<String>) -> Vec<Effect> {
        let Some(q) = query else {
            let last = self.channel.search.clone().unwrap_or_default();
            self.open_bar(BarMode::Search, &last);
            return Vec::new();
        };
        self.show_channel();
        let n = self.channel.set_search(Some(q.clone()));
        if q.is_empty() {
            self.info("search cleared");
        } else if n == 0 {
            self.error(format!("no message contains '{q}'"));
        } else {
            self.info(format!("{n} matches for '{q}' (n older, N newer)"));
        }
        Vec::new()
    }

    /// `search-next` (`next`) or `search-prev`.
    pub(super) fn search_step(&mut self, next: bool) -> Vec<Effect> {
        match self.channel.next_match(next) {
            Some((k, n)) => self.info(format!("match {k}/{n}")),
            // `n` adds an agent (as in the agents pane) while no search is on.
            None if next => return self.add_agent(None),
            None => self.error("no search (press / to search)"),
        }
        Vec::new()
    }

    /// `filter`: filters the channel (`None` clears it).
    pub(super) fn filter(&mut self, filter: Option<Filter>) -> Vec<Effect> {
        match filter {
            Some(f) => {
                let text = f.to_string();
                self.channel.set_filter(f);
                self.info(format!(
                    "filter {text}: {} messages (F clears)",
                    self.channel.order.len()
                ));
            }
            None => {
                self.channel.set_filter(Default::default());
                self.info("filter off");
            }
        }
        self.show_channel();
        Vec::new()
    }

    /// Shows and focuses the channel.
    fn show_channel(&mut self) {
        self.focus = Pane::Channel;
        self.main = Pane::Channel;
    }

    /// `doc`: shows a document in the focused documents pane.
    pub(super) fn show_document(&mut self, file: String) -> Vec<Effect> {
        self.focus = Pane::Documents;
        self.main = Pane::Documents;
        self.lower = Pane::Documents;
        self.documents_do(|d| d.open(file))
    }

    /// `text`: a move or an edit in the editor.
    pub(super) fn text(&mut self, op: TextOp) -> Vec<Effect> {
        match &mut self.documents.editor {
            Some(e) => {
                e.apply(op);
                Vec::new()
            }
            None => self.refuse(format!("text {op}: nothing is being edited (e edits)")),
        }
    }
}
