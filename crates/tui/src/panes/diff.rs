//! The diff view: an agent's work in its worktree, step by step or in
//! total against its base: the steps, the files changed and the unified
//! diff with syntax highlighting (syntect, by each file's extension) over
//! added/removed colours. From here the person merges the branch, reverts
//! the shown step or discards the workspace (each after a y/n question).
//! It refreshes when the agent's status changes, so it is live while the
//! agent works. Every line drawn is sanitised: file contents are the
//! agents'.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};
use syntect::easy::HighlightLines;

use super::documents::{SYNTAXES, THEMES, styled};
use super::scroll::Window;
use crate::action::{Action, Step};
use crate::component::{Component, Mouse, Outcome};
use crate::confirm::{Confirm, ConfirmAction};
use crate::keymap::{Key, Keymap, Section};
use crate::sanitize::for_terminal;
use crate::text::{truncate, truncate_line};
use crate::theme::Theme;
use crate::vocab::Command;
use crate::vocab::{DiffTarget, DiffView, WorkspaceOp};
use ratatui::crossterm::event::KeyEvent;

/// Beyond this many diff lines the rest is shown without syntax colours, so
/// a huge diff cannot stall the screen.
const HIGHLIGHT_LINES: usize = 20_000;
/// Lines longer than this are shown without syntax colours.
const HIGHLIGHT_WIDTH: usize = 2_000;

/// The open diff view.
#[derive(Clone, Debug)]
pub struct DiffPane {
    /// What was read last.
    pub view: DiffView,
    /// The first body line shown.
    pub scroll: usize,
    /// A newer read was asked for (shown in the title until it comes).
    pub loading: bool,
    lines: Vec<Line<'static>>,
    /// How many body lines the last drawing showed (a page).
    rows: usize,
}

/// What `r` (`step revert`) says over every turn: one turn is reverted
/// at a time.
const PICK_A_TURN: &str = "revert undoes one turn: step to that turn first, then revert";

/// What a key (or a command) in the diff view asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiffKey {
    /// Handled inside the view (scrolling), or not a key of the view.
    Nothing,
    /// A command of another kind, for the app to carry out.
    Then(Action),
    /// Close the view.
    Close,
    /// Read the diff of this step (everything when `None`).
    Read(Option<u32>),
    /// Nothing to do, and the person is told why (`r` over every turn).
    Explain(&'static str),
    /// Ask the person before carrying this out.
    Ask(WorkspaceOp),
}

impl DiffPane {
    /// Opens the view on a read.
    pub fn new(view: DiffView) -> DiffPane {
        let lines = body(&view);
        DiffPane {
            view,
            scroll: 0,
            loading: false,
            lines,
            rows: 0,
        }
    }

    /// A newer read of the same agent: keeps the scroll when the same step
    /// is shown again (a live refresh), else starts at the top.
    pub fn replace(&mut self, view: DiffView) {
        if view.turn != self.view.turn || view.target != self.view.target {
            self.scroll = 0;
        }
        self.lines = body(&view);
        self.view = view;
        self.loading = false;
    }

    /// The command reading step `turn` (everything when `None`) of the
    /// same agent or task; the title says so until the answer comes.
    pub fn read(&mut self, turn: Option<u32>) -> Command {
        self.loading = true;
        Command::ReadDiff {
            target: self.view.target.clone(),
            turn,
        }
    }

    /// The step before or after the one shown (`None` for the total); the
    /// total sits before the first step.
    fn neighbour(&self, forward: bool) -> Option<Option<u32>> {
        let turns: Vec<Option<u32>> = std::iter::once(None)
            .chain(self.view.steps.iter().map(|s| Some(s.turn)))
            .collect();
        let at = turns.iter().position(|t| *t == self.view.turn)?;
        let next = if forward {
            at.checked_add(1)?
        } else {
            at.checked_sub(1)?
        };
        turns.get(next).copied()
    }

    /// Handles one key, as `[keys.diff]` binds it; an unbound key does
    /// nothing (the view takes every key).
    pub fn key(&mut self, k: &Key, keymap: &Keymap) -> DiffKey {
        match keymap.get(Section::Diff, k) {
            Some(action) => self.act_on(&action.clone()),
            None => DiffKey::Nothing,
        }
    }

    /// What a command means here: moves scroll the diff, `back` closes
    /// it, `step` reads another step, `merge` and `discard` (of no agent
    /// named) ask about the agent shown; any other is the app's.
    pub fn act_on(&mut self, action: &Action) -> DiffKey {
        match action {
            Action::Move(m) => {
                let window = Window {
                    len: self.lines.len(),
                    height: self.rows,
                };
                self.scroll = window.scroll(self.scroll, *m);
                DiffKey::Nothing
            }
            Action::Back => DiffKey::Close,
            Action::Step(step) => self.step(*step),
            Action::Workspace { agent: None, op } => DiffKey::Ask(*op),
            other => DiffKey::Then(other.clone()),
        }
    }

    /// Another step, everything, the same again, or reverting the step
    /// shown (nothing to revert when everything is shown).
    fn step(&self, step: Step) -> DiffKey {
        let read = |turn: Option<Option<u32>>| turn.map_or(DiffKey::Nothing, DiffKey::Read);
        match step {
            Step::Next => read(self.neighbour(true)),
            Step::Prev => read(self.neighbour(false)),
            Step::All => DiffKey::Read(None),
            Step::Refresh => DiffKey::Read(self.view.turn),
            Step::Revert => match self.view.turn {
                Some(turn) => DiffKey::Ask(WorkspaceOp::Revert { turn }),
                None => DiffKey::Explain(PICK_A_TURN),
            },
        }
    }

    /// What the app does for `key`.
    pub fn outcome(&mut self, key: DiffKey) -> Outcome {
        match key {
            DiffKey::Nothing => Outcome::default(),
            DiffKey::Explain(why) => Outcome::info(why),
            DiffKey::Then(action) => Outcome::then(action),
            DiffKey::Close => Outcome::close(),
            DiffKey::Read(turn) => Outcome::command(self.read(turn)),
            DiffKey::Ask(op) => match self.view.target.clone() {
                DiffTarget::Agent(agent) => Outcome::ask(ask_workspace(agent, op)),
                DiffTarget::Task(_) => Outcome::error(format!(
                    "{}: a task's workspace is merged or dropped with workspace_update",
                    op.name()
                )),
            },
        }
    }

    /// The last line: the view's keys as `[keys.diff]` binds them (`[ ]
    /// step · t all · m merge · r revert turn 2 · … · esc close`), only
    /// what applies to the shown step and target. While the view is open
    /// it is the only line of keys on the screen (the screen's own hint
    /// line is left empty: the panes' keys do not reach them).
    fn footer(&self, keymap: &Keymap) -> String {
        let agent = matches!(self.view.target, DiffTarget::Agent(_));
        let revert = match self.view.turn {
            Some(t) if agent => Some(format!("revert turn {t}")),
            _ => None,
        };
        let items: [(&[&str], &str, bool); 7] = [
            (&["step prev", "step next"], "step", true),
            (&["step all"], "all", true),
            (&["merge"], "merge", agent),
            (
                &["step revert"],
                revert.as_deref().unwrap_or(""),
                revert.is_some(),
            ),
            (&["discard"], "discard", agent),
            (&["step refresh"], "refresh", true),
            (&["back"], "close", true),
        ];
        items
            .iter()
            .filter(|(_, _, shown)| *shown)
            .filter_map(|(commands, what, _)| {
                let keys: Vec<String> = commands
                    .iter()
                    .filter_map(|c| keymap.key_preferring(Section::Diff, c, "esc"))
                    .map(|k| k.to_string())
                    .collect();
                (!keys.is_empty()).then(|| format!("{} {what}", keys.join(" ")))
            })
            .collect::<Vec<_>>()
            .join(" · ")
    }

    /// Draws the view over `area`.
    pub fn draw(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, keymap: &Keymap) {
        let w = area.width.saturating_sub(2);
        let h = area.height.saturating_sub(2);
        if w < 20 || h < 6 {
            return;
        }
        let rect = Rect::new(area.x + 1, area.y + 1, w, h);
        Clear.render(rect, buf);
        let shown = match self.view.turn {
            Some(t) => format!("turn {t}"),
            None => "all turns".into(),
        };
        let title = format!(
            " diff · {} · {} · {shown}{} ",
            for_terminal(&self.view.target.label()),
            for_terminal(&self.view.branch),
            if self.loading { " · reading…" } else { "" }
        );
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(Style::new().fg(theme.accent))
            .title(truncate(&title, w.saturating_sub(2) as usize));
        let inner = block.inner(rect);
        block.render(rect, buf);
        let width = inner.width as usize;
        let mut y = inner.y;
        let bottom = inner.y + inner.height;
        buf.set_line(
            inner.x,
            y,
            &truncate_line(self.steps_line(theme), width),
            inner.width,
        );
        y += 1;
        for l in self.uncommitted_lines(theme) {
            if y + 2 >= bottom {
                break;
            }
            buf.set_line(inner.x, y, &truncate_line(l, width), inner.width);
            y += 1;
        }
        // The last row holds the keys.
        self.rows = bottom.saturating_sub(y + 1) as usize;
        self.scroll = Window {
            len: self.lines.len(),
            height: self.rows,
        }
        .clamp(self.scroll);
        for l in self.lines.iter().skip(self.scroll).take(self.rows) {
            buf.set_line(inner.x, y, &truncate_line(l.clone(), width), inner.width);
            y += 1;
        }
        buf.set_line(
            inner.x,
            bottom - 1,
            &Line::styled(
                truncate(&self.footer(keymap), width),
                Style::new().fg(theme.dim),
            ),
            inner.width,
        );
    }

    /// `base abc · all · 1 · 2 · 3` with the shown one marked.
    fn steps_line(&self, theme: &Theme) -> Line<'static> {
        let mark = Style::new().fg(theme.accent).add_modifier(Modifier::BOLD);
        let plain = Style::new().fg(theme.dim);
        let mut spans = vec![Span::styled(
            format!("base {} · steps: ", for_terminal(&self.view.base)),
            plain,
        )];
        let mut item = |label: String, on: bool| {
            spans.push(Span::styled(
                if on { format!("[{label}]") } else { label },
                if on { mark } else { Style::new() },
            ));
            spans.push(Span::raw(" "));
        };
        item("all".into(), self.view.turn.is_none());
        for s in &self.view.steps {
            item(s.turn.to_string(), self.view.turn == Some(s.turn));
        }
        if self.view.steps.is_empty() {
            spans.push(Span::styled("(no step committed yet)", plain));
        }
        Line::from(spans)
    }

    fn uncommitted_lines(&self, theme: &Theme) -> Vec<Line<'static>> {
        if self.view.uncommitted.is_empty() {
            return Vec::new();
        }
        let mut out = vec![Line::styled(
            format!(
                "not committed yet ({} file(s), committed when the turn ends):",
                self.view.uncommitted.len()
            ),
            Style::new().fg(theme.warning),
        )];
        out.extend(
            self.view
                .uncommitted
                .iter()
                .take(5)
                .map(|l| Line::raw(format!("  {}", for_terminal(l)))),
        );
        if self.view.uncommitted.len() > 5 {
            out.push(Line::raw(format!(
                "  … {} more",
                self.view.uncommitted.len() - 5
            )));
        }
        out
    }
}

/// The file a `diff --git a/x b/y` header names (its new path).
fn file_of(header: &str) -> &str {
    header.rsplit_once(" b/").map_or("", |(_, b)| b)
}

/// The diff's lines as drawn: file headers bold, hunk headers cyan, added
/// and removed lines on green and red with the code highlighted by the
/// file's language, context highlighted likewise.
pub fn body(view: &DiffView) -> Vec<Line<'static>> {
    let theme = &THEMES.themes["base16-ocean.dark"];
    let plain_syntax = SYNTAXES.find_syntax_plain_text();
    let mut h: Option<HighlightLines> = None;
    let mut out = Vec::new();
    let mut in_hunks = false;
    if view.patch.trim().is_empty() {
        out.push(Line::styled(
            match view.turn {
                Some(t) => {
                    format!("turn {t} changed nothing (the agent's own commit, or a marker)")
                }
                None => "no changes against the base yet".to_string(),
            },
            Style::new().add_modifier(Modifier::ITALIC),
        ));
        return out;
    }
    for (n, raw) in view.patch.lines().enumerate() {
        let line = for_terminal(raw).replace('\t', "    ");
        if line.starts_with("diff --git") {
            in_hunks = false;
            let ext = file_of(&line).rsplit('.').next().unwrap_or("");
            let syntax = SYNTAXES
                .find_syntax_by_extension(ext)
                .unwrap_or(plain_syntax);
            h = Some(HighlightLines::new(syntax, theme));
            // One blank line between files (git already leaves one after the stat).
            if out.last().is_some_and(|l: &Line| l.width() > 0) {
                out.push(Line::raw(""));
            }
            out.push(Line::styled(
                line,
                Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED),
            ));
            continue;
        }
        if line.starts_with("@@") {
            in_hunks = true;
            out.push(Line::styled(line, Style::new().fg(Color::Cyan)));
            continue;
        }
        if !in_hunks {
            // The stat at the top and each file's index/---/+++ lines.
            let style = if line.starts_with("---") || line.starts_with("+++") {
                Style::new().add_modifier(Modifier::BOLD)
            } else {
                Style::new()
            };
            out.push(Line::styled(line, style));
            continue;
        }
        let (mark, code) = match line.chars().next() {
            Some(c @ ('+' | '-' | ' ')) => (c, &line[1..]),
            _ => (' ', line.as_str()),
        };
        let bg = match mark {
            '+' => Some(Color::Rgb(0x1d, 0x3b, 0x23)),
            '-' => Some(Color::Rgb(0x4a, 0x1e, 0x22)),
            _ => None,
        };
        let mark_style = match mark {
            '+' => Style::new().fg(Color::Green),
            '-' => Style::new().fg(Color::Red),
            _ => Style::new(),
        };
        let highlighted = match &mut h {
            Some(h) if n < HIGHLIGHT_LINES && code.len() <= HIGHLIGHT_WIDTH => {
                styled(h, &format!("{code}\n"))
            }
            _ => None,
        };
        let mut spans = vec![Span::styled(mark.to_string(), mark_style)];
        match highlighted {
            Some(l) => spans.extend(l.spans),
            None => spans.push(Span::styled(code.to_string(), mark_style)),
        }
        if let Some(bg) = bg {
            for s in &mut spans {
                s.style = s.style.bg(bg);
            }
        }
        out.push(Line::from(spans));
    }
    out
}

/// The question asked before merging, reverting or discarding `agent`'s
/// work (from the diff view or `/merge`, `/revert`, `/discard`).
pub fn ask_workspace(agent: String, op: WorkspaceOp) -> Confirm {
    let what = match op {
        WorkspaceOp::Merge => format!("Merge {agent}'s branch into its base branch?"),
        WorkspaceOp::Revert { turn } => {
            format!("Revert turn {turn} of {agent} (a new commit on its branch)?")
        }
        WorkspaceOp::Discard => {
            format!(
                "Discard {agent}'s work (`awtui stop --clean` then removes its unmerged branch)?"
            )
        }
    };
    Confirm {
        question: format!("{what} (y/n)"),
        on_yes: ConfirmAction::Workspace { agent, op },
    }
}

/// What the diff view reads to draw.
pub struct DiffContext<'a> {
    /// Colours.
    pub theme: &'a Theme,
    /// The keys its footer names.
    pub keymap: &'a Keymap,
}

/// The diff view is an overlay: it takes every key while open
/// (`[keys.diff]`), and is drawn over the whole screen.
impl Component for DiffPane {
    type Context<'a> = DiffContext<'a>;

    fn act(&mut self, action: &Action, _cx: &DiffContext<'_>) -> Outcome {
        let key = self.act_on(action);
        self.outcome(key)
    }

    fn key(&mut self, _key: &KeyEvent, k: &Key, keymap: &Keymap) -> Option<Outcome> {
        let key = DiffPane::key(self, k, keymap);
        Some(self.outcome(key))
    }

    fn mouse(&mut self, _mouse: Mouse, _cx: &DiffContext<'_>) -> Outcome {
        Outcome::default()
    }

    /// Its keys are `[keys.diff]`, named in its own footer.
    fn commands(&self) -> (Section, &'static [&'static str]) {
        (Section::Diff, &[])
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, cx: &DiffContext<'_>, _focused: bool) {
        DiffPane::draw(self, area, buf, cx.theme, cx.keymap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::StepLine;

    fn view(turn: Option<u32>, patch: &str) -> DiffView {
        DiffView {
            target: DiffTarget::Agent("coder".into()),
            branch: "awtui/i/coder".into(),
            base: "abc".into(),
            steps: vec![
                StepLine {
                    turn: 1,
                    commit: "c1".into(),
                },
                StepLine {
                    turn: 2,
                    commit: "c2".into(),
                },
            ],
            turn,
            patch: patch.into(),
            uncommitted: vec![],
        }
    }

    /// The view after pressing `c` with the shipped keys.
    fn press(p: &mut DiffPane, c: char) -> DiffKey {
        let keymap = crate::config::Config::defaults().keymap;
        p.key(&Key::char(c), &keymap)
    }

    const PATCH: &str = " a.rs | 2 +-\n 1 file changed\n\ndiff --git a/a.rs b/a.rs\nindex 1..2 100644\n--- a/a.rs\n+++ b/a.rs\n@@ -1 +1 @@\n-fn old() {}\n+fn new() { \u{1b}[31m }\n";

    #[test]
    fn steps_go_from_the_total_through_each_turn_and_stop_at_the_ends() {
        let mut p = DiffPane::new(view(None, PATCH));
        assert_eq!(press(&mut p, '['), DiffKey::Nothing);
        assert_eq!(press(&mut p, ']'), DiffKey::Read(Some(1)));
        p.replace(view(Some(2), PATCH));
        assert_eq!(press(&mut p, ']'), DiffKey::Nothing);
        assert_eq!(press(&mut p, '['), DiffKey::Read(Some(1)));
        assert_eq!(press(&mut p, 't'), DiffKey::Read(None));
    }

    #[test]
    fn revert_needs_a_step_and_operations_are_asked_first() {
        let mut p = DiffPane::new(view(None, PATCH));
        assert_eq!(press(&mut p, 'r'), DiffKey::Explain(PICK_A_TURN));
        assert_eq!(press(&mut p, 'm'), DiffKey::Ask(WorkspaceOp::Merge));
        assert_eq!(press(&mut p, 'x'), DiffKey::Ask(WorkspaceOp::Discard));
        p.replace(view(Some(2), PATCH));
        assert_eq!(
            press(&mut p, 'r'),
            DiffKey::Ask(WorkspaceOp::Revert { turn: 2 })
        );
        assert_eq!(press(&mut p, 'q'), DiffKey::Close);
    }

    #[test]
    fn added_and_removed_lines_are_coloured_and_escapes_never_pass() {
        let lines = body(&view(None, PATCH));
        let text = |l: &Line| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
        };
        let added = lines
            .iter()
            .find(|l| text(l).starts_with("+fn new"))
            .unwrap();
        assert!(added.spans.iter().all(|s| s.style.bg.is_some()));
        // Highlighted by the file's language: more than the mark and one span.
        assert!(added.spans.len() > 2, "{added:?}");
        let removed = lines
            .iter()
            .find(|l| text(l).starts_with("-fn old"))
            .unwrap();
        assert_eq!(removed.spans[0].style.fg, Some(Color::Red));
        assert!(lines.iter().all(|l| !text(l).contains('\u{1b}')));
        let header = lines
            .iter()
            .find(|l| text(l).starts_with("diff --git"))
            .unwrap();
        assert!(header.style.add_modifier.contains(Modifier::BOLD));
    }

    #[test]
    fn an_empty_step_says_so() {
        let lines = body(&view(Some(1), ""));
        assert!(
            lines[0].spans[0].content.contains("changed nothing"),
            "{lines:?}"
        );
    }
}
