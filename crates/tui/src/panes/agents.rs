//! The agents pane: every agent with its status icon (a spinner while it
//! works), backend and model, what it is doing (thinking, calling a tool,
//! its Agent Mail step), unread count, turns, tokens and cost. Failed and
//! stalled agents stand out. ACP agents also show, while a turn runs, the
//! tool call under way (kind, title, status, files), their plan's
//! progress and the turn's usage; every agent shows how awtui talks to it
//! (`acp` or `headless`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::channel::SPINNER;
use super::scroll::Window;
use crate::action::Motion;
use crate::sanitize::for_terminal;
use crate::text::{truncate, width};
use crate::theme::Theme;
use crate::vocab::AgentSnapshot;
use crate::vocab::BackendEvent;
use crate::vocab::activity::{PlanEntry, ToolCallView, Usage, short_tool_name};
use crate::vocab::live::AgentLive;
use crate::vocab::{AgentMetrics, AgentStatus};

/// One agent as shown.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentRow {
    /// Its name.
    pub name: String,
    /// Its backend's name.
    pub backend: String,
    /// Its model, when set.
    pub model: Option<String>,
    /// What the runner says it is doing.
    pub status: AgentStatus,
    /// Counters.
    pub metrics: AgentMetrics,
    /// The latest activity from its backend while a turn runs.
    pub activity: Option<String>,
    /// Where it runs (`local`, `sandbox`, a host).
    pub place: String,
    /// How awtui talks to it: `acp`, `headless` or empty (in-process).
    pub protocol: String,
    /// Its current (or last) turn as it happens: text, tool calls, plan,
    /// usage (the live view draws it whole).
    pub live: AgentLive,
}

impl AgentRow {
    /// A row from a snapshot.
    pub fn from_snapshot(a: AgentSnapshot) -> AgentRow {
        AgentRow {
            name: a.name,
            backend: a.backend,
            model: a.model,
            status: a.status,
            metrics: a.metrics,
            activity: None,
            place: a.place,
            protocol: a.protocol,
            live: a.live,
        }
    }

    /// Whether a turn is under way.
    pub fn working(&self) -> bool {
        matches!(
            self.status,
            AgentStatus::Starting
                | AgentStatus::Thinking
                | AgentStatus::CallingTool(_)
                | AgentStatus::Stalled
                | AgentStatus::Retrying { .. }
                | AgentStatus::WaitingForApproval
        )
    }

    /// Records a backend event as the current activity, and folds it into
    /// the live turn.
    pub fn apply_activity(&mut self, event: &BackendEvent) {
        self.live.apply(event);
        self.activity = match event {
            BackendEvent::Thinking => Some("thinking".into()),
            BackendEvent::Text { .. } | BackendEvent::Stream { .. } => Some("writing".into()),
            BackendEvent::ToolCall { name } => {
                Some(format!("calling `{}`", for_terminal(short_tool_name(name))))
            }
            BackendEvent::ToolDone { .. } => Some("thinking".into()),
            BackendEvent::Error { message } => Some(format!(
                "error: {}",
                for_terminal(message.lines().next().unwrap_or(""))
            )),
            BackendEvent::Final { .. } => Some("answering".into()),
            // The running call (or, when none runs any more, thinking).
            BackendEvent::Tool { .. } => Some(match self.live.running().last() {
                Some(call) => call_summary(call),
                None => "thinking".into(),
            }),
            BackendEvent::Session { .. }
            | BackendEvent::Usage { .. }
            | BackendEvent::Plan { .. } => {
                return;
            }
        };
    }

    /// Sets the status; a turn that begins starts a new live view (as the
    /// engine's does).
    pub fn set_status(&mut self, status: AgentStatus) {
        let was_working = self.working();
        self.status = status;
        if !self.working() {
            self.activity = None;
        } else if !was_working {
            self.live = AgentLive::default();
        }
    }

    /// What the live turn adds to the row while it runs: the plan's
    /// progress and the turn's usage (`plan 2/5 · 1.2k tok $0.03`).
    pub fn live_summary(&self) -> Option<String> {
        if !self.working() {
            return None;
        }
        let mut parts = Vec::new();
        if let Some(p) = plan_progress(&self.live.plan) {
            parts.push(p);
        }
        if let Some(u) = usage_text(&self.live.usage) {
            parts.push(u);
        }
        (!parts.is_empty()).then(|| parts.join(" · "))
    }

    /// What it is doing, in a few words (with the live turn's plan and
    /// usage while it runs).
    pub fn doing(&self) -> String {
        match self.live_summary() {
            Some(live) => format!("{} · {live}", self.doing_status()),
            None => self.doing_status(),
        }
    }

    fn doing_status(&self) -> String {
        let status = match &self.status {
            // An ACP agent says more: the call's kind, status and files.
            AgentStatus::CallingTool(t) => match self.live.running().last() {
                Some(call) => call_summary(call),
                None => format!("calling `{}`", for_terminal(t)),
            },
            s @ (AgentStatus::Thinking | AgentStatus::Starting) => {
                self.activity.clone().unwrap_or_else(|| s.to_string())
            }
            s => for_terminal(&s.to_string()),
        };
        match &self.metrics.step {
            Some(step) if self.working() || self.metrics.label.is_none() => {
                format!("{status} · step {}", for_terminal(step))
            }
            _ => match &self.metrics.label {
                Some(label) => format!("{status} · {}", for_terminal(label)),
                None => status,
            },
        }
    }

    fn icon(&self, spinner: usize, theme: &Theme) -> (String, Style) {
        match &self.status {
            AgentStatus::Idle => ("○".into(), theme.dimmed()),
            AgentStatus::Queued(_) => ("◷".into(), Style::new().fg(theme.accent)),
            AgentStatus::Starting | AgentStatus::Thinking | AgentStatus::CallingTool(_) => (
                SPINNER[spinner % SPINNER.len()].into(),
                Style::new().fg(theme.ok),
            ),
            AgentStatus::Stalled => (
                "⚠".into(),
                Style::new().fg(theme.warning).add_modifier(Modifier::BOLD),
            ),
            AgentStatus::Retrying { .. } => ("↻".into(), Style::new().fg(theme.warning)),
            AgentStatus::Stopped => ("■".into(), theme.dimmed()),
            AgentStatus::Failed(_) => (
                "✗".into(),
                Style::new().fg(theme.error).add_modifier(Modifier::BOLD),
            ),
            AgentStatus::OutOfBudget => ("$".into(), Style::new().fg(theme.warning)),
            AgentStatus::WaitingForApproval => (
                "?".into(),
                Style::new().fg(theme.warning).add_modifier(Modifier::BOLD),
            ),
        }
    }

    fn status_style(&self, theme: &Theme) -> Style {
        match &self.status {
            AgentStatus::Failed(_) => Style::new().fg(theme.error).add_modifier(Modifier::BOLD),
            AgentStatus::Stalled
            | AgentStatus::Retrying { .. }
            | AgentStatus::OutOfBudget
            | AgentStatus::WaitingForApproval => {
                Style::new().fg(theme.warning).add_modifier(Modifier::BOLD)
            }
            AgentStatus::Idle | AgentStatus::Stopped => theme.dimmed(),
            _ => Style::new().fg(theme.ok),
        }
    }

    /// Backend and model, how awtui talks to it, and where it runs when
    /// that is not simply here (`claude/opus acp on box`, `codex headless
    /// in sandbox`).
    pub fn engine(&self) -> String {
        let engine = match &self.model {
            Some(m) => format!("{}/{}", self.backend, for_terminal(m)),
            None => self.backend.clone(),
        };
        let engine = match self.protocol.as_str() {
            "" => engine,
            p => format!("{engine} {}", one_line(p)),
        };
        match self.place.as_str() {
            "" | "local" => engine,
            "sandbox" => format!("{engine} in sandbox"),
            host => format!("{engine} on {}", for_terminal(host)),
        }
    }

    /// Turns, tokens, cost, and the context window usage its latest
    /// Agent Mail PROGRESS or CHECKPOINT reported.
    pub fn counters(&self) -> String {
        let m = &self.metrics;
        let context = m
            .context_usage
            .map(|u| format!(" ctx {u}%"))
            .unwrap_or_default();
        format!(
            "t{} {} ${:.2}{context}",
            m.turns,
            tokens(m.tokens_in + m.tokens_out),
            m.cost_usd
        )
    }
}

/// Agent text on one row: made safe for the terminal, line breaks and
/// tabs as spaces.
pub fn one_line(text: &str) -> String {
    for_terminal(text)
        .chars()
        .map(|c| if c == '\n' || c == '\t' { ' ' } else { c })
        .collect()
}

/// A tool call in a few words: its kind, title, status and first file
/// (`execute `cargo test` in_progress · src/lib.rs +1`).
pub fn call_summary(call: &ToolCallView) -> String {
    let title = if call.title.is_empty() {
        String::new()
    } else {
        format!(" `{}`", one_line(&call.title))
    };
    let files = match call.locations.split_first() {
        Some((first, [])) => format!(" · {}", one_line(first)),
        Some((first, rest)) => format!(" · {} +{}", one_line(first), rest.len()),
        None => String::new(),
    };
    format!(
        "{}{title} {}{files}",
        one_line(&call.kind),
        one_line(&call.status)
    )
}

/// The plan's progress: `plan 2/5` (steps completed of all), or nothing
/// without a plan.
pub fn plan_progress(plan: &[PlanEntry]) -> Option<String> {
    if plan.is_empty() {
        return None;
    }
    let done = plan.iter().filter(|e| e.status == "completed").count();
    Some(format!("plan {done}/{}", plan.len()))
}

/// A turn's usage in a short form (`1.2k tok $0.03`), or nothing when
/// none was reported.
pub fn usage_text(u: &Usage) -> Option<String> {
    let n = u.input_tokens + u.output_tokens;
    match (n, u.cost_usd) {
        (0, None) => None,
        (n, None) => Some(tokens(n)),
        (n, Some(c)) => Some(format!("{} ${c:.2}", tokens(n))),
    }
}

/// Tokens in a short form: `950`, `12.3k`, `4.1M`.
pub fn tokens(n: u64) -> String {
    if n < 1000 {
        format!("{n} tok")
    } else if n < 1_000_000 {
        format!("{:.1}k tok", n as f64 / 1000.0)
    } else {
        format!("{:.1}M tok", n as f64 / 1_000_000.0)
    }
}

/// The agents pane's state.
#[derive(Clone, Debug, Default)]
pub struct Agents {
    /// The agents in workflow order.
    pub rows: Vec<AgentRow>,
    /// The selected row.
    pub selected: usize,
    /// Rows per agent in the last draw, and the first row drawn.
    pub drawn: (usize, usize),
}

impl Agents {
    /// The selected agent.
    pub fn selected(&self) -> Option<&AgentRow> {
        self.rows.get(self.selected)
    }

    /// The agent with this name.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut AgentRow> {
        self.rows.iter_mut().find(|r| r.name == name)
    }

    /// Whether any agent is working.
    pub fn any_working(&self) -> bool {
        self.rows.iter().any(AgentRow::working)
    }

    /// Whether any agent shows a spinner (a stalled, retrying or queued
    /// one shows a still icon: nothing to redraw for it).
    pub fn animating(&self) -> bool {
        self.rows.iter().any(|r| {
            matches!(
                r.status,
                AgentStatus::Starting | AgentStatus::Thinking | AgentStatus::CallingTool(_)
            )
        })
    }

    /// Moves the selection; a page is the whole list (it is short).
    pub fn step(&mut self, motion: Motion) {
        let n = self.rows.len();
        self.selected = Window { len: n, height: n }.select(self.selected, motion);
    }

    /// The agent drawn at row `y` of the pane's inner area.
    pub fn row_at(&self, y: usize) -> Option<usize> {
        let (per, first) = self.drawn;
        let i = first + y / per.max(1);
        (i < self.rows.len()).then_some(i)
    }

    /// Draws the list into `area` (no border). Two lines per agent when
    /// there is room, else one.
    pub fn draw(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        spinner: usize,
        focused: bool,
    ) {
        let (w, h) = (area.width as usize, area.height as usize);
        if w == 0 || h == 0 {
            return;
        }
        let two = h >= self.rows.len() * 2 && w < 70;
        let per = if two { 2 } else { 1 };
        let visible = (h / per).max(1);
        let first = Window {
            len: self.rows.len(),
            height: visible,
        }
        .first_showing(self.selected);
        self.drawn = (per, first);
        let name_w = self.rows.iter().map(|r| width(&r.name)).max().unwrap_or(0);
        let unread_w = self
            .rows
            .iter()
            .map(|r| width(&unread_mark(r.metrics.unread)))
            .max()
            .unwrap_or(0);
        for (k, row) in self.rows.iter().enumerate().skip(first).take(visible) {
            let y = area.y + ((k - first) * per) as u16;
            let (icon, icon_style) = row.icon(spinner, theme);
            let selected = k == self.selected;
            let name_style = {
                let s = theme.sender(&row.name);
                if selected && focused {
                    s.add_modifier(Modifier::REVERSED)
                } else {
                    s
                }
            };
            let unread = unread_mark(row.metrics.unread);
            let name = truncate(&row.name, NAME_MAX);
            let doing = row.doing();
            if two {
                let head = Line::from(vec![
                    Span::styled(format!("{icon} "), icon_style),
                    Span::styled(name.clone(), name_style),
                    Span::styled(unread.clone(), Style::new().fg(theme.mention)),
                    Span::raw(" "),
                    Span::styled(
                        truncate(&doing, w.saturating_sub(4 + width(&name) + width(&unread))),
                        row.status_style(theme),
                    ),
                ]);
                buf.set_line(area.x, y, &head, area.width);
                let detail = format!("  {} · {}", row.engine(), row.counters());
                buf.set_line(
                    area.x,
                    y + 1,
                    &Line::styled(truncate(&detail, w), theme.dimmed()),
                    area.width,
                );
            } else {
                let counters = format!("{} {}", row.engine(), row.counters());
                let cols = columns(w, name_w, unread_w, width(&counters));
                let (doing_w, counters_w) = (cols.doing, cols.counters);
                let name = truncate(&row.name, cols.name);
                let mut spans = vec![
                    Span::styled(format!("{icon} "), icon_style),
                    Span::styled(format!("{name:<nw$}", nw = cols.name), name_style),
                    Span::styled(
                        format!("{unread:<uw$}", uw = cols.unread),
                        Style::new().fg(theme.mention),
                    ),
                    Span::raw(" "),
                    Span::styled(
                        format!("{:<doing_w$}", truncate(&doing, doing_w)),
                        row.status_style(theme),
                    ),
                ];
                if counters_w > 0 {
                    spans.push(Span::raw(" "));
                    spans.push(Span::styled(
                        truncate(&counters, counters_w),
                        theme.dimmed(),
                    ));
                }
                buf.set_line(area.x, y, &Line::from(spans), area.width);
            }
            if selected {
                buf.set_style(
                    Rect::new(area.x, y, area.width, per as u16).intersection(area),
                    Style::new().bg(theme.selection),
                );
            }
        }
    }
}

/// The widest a name column gets.
const NAME_MAX: usize = 16;
/// The unread column when there is room (` ✉123` and a space).
const UNREAD_COL: usize = 6;
/// The status keeps at least this many columns; names give way first.
const DOING_MIN: usize = 16;

fn unread_mark(unread: usize) -> String {
    if unread > 0 {
        format!(" ✉{unread}")
    } else {
        String::new()
    }
}

/// Column widths of the one-line layout.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Columns {
    /// The name column.
    pub name: usize,
    /// The unread column.
    pub unread: usize,
    /// What the agent is doing.
    pub doing: usize,
    /// Backend and counters (0: not shown).
    pub counters: usize,
}

/// Shares a row of `w` columns. With room, names get 16 columns and the
/// unread mark 6 (aligned); when tight they shrink to the longest name and
/// mark, then names are cut (down to 4 columns, with `…`) so the status
/// keeps 16. The counters only get room left over.
pub fn columns(w: usize, longest_name: usize, unread: usize, counters: usize) -> Columns {
    let (mut name, mut unread_col) = (NAME_MAX, UNREAD_COL.max(unread));
    // The icon and its space, and the space after the unread column.
    let fixed = |u: usize| 2 + u + 1;
    if fixed(unread_col) + name + DOING_MIN > w {
        unread_col = unread;
        name = longest_name.clamp(1, NAME_MAX);
        let spare = w.saturating_sub(fixed(unread_col) + DOING_MIN);
        name = name.min(spare.max(4));
    }
    let room = w.saturating_sub(fixed(unread_col) + name);
    let (doing, counters) = if room > 40 {
        let c = counters.min(room / 2);
        (room - c - 1, c)
    } else {
        (room, 0)
    };
    Columns {
        name,
        unread: unread_col,
        doing,
        counters,
    }
}

/// What the agents pane draws with.
pub struct AgentsContext<'a> {
    /// Colours.
    pub theme: &'a Theme,
    /// Spinner frame.
    pub spinner: usize,
}

impl crate::component::Component for Agents {
    type Context<'a> = AgentsContext<'a>;

    fn act(
        &mut self,
        action: &crate::action::Action,
        _cx: &AgentsContext<'_>,
    ) -> crate::component::Outcome {
        use crate::action::{Action, FocusTarget, Pane};
        use crate::component::Outcome;
        match action {
            Action::Open => Outcome::then(Action::Focus(FocusTarget::Pane(Pane::Inbox))),
            Action::Move(m) => {
                self.step(*m);
                Outcome::default()
            }
            _ => Outcome::default(),
        }
    }

    fn mouse(
        &mut self,
        mouse: crate::component::Mouse,
        _cx: &AgentsContext<'_>,
    ) -> crate::component::Outcome {
        use crate::component::Mouse;
        match mouse {
            Mouse::Click { row, .. } => {
                if let Some(i) = self.row_at(row) {
                    self.selected = i;
                }
            }
            Mouse::Scroll { up: true } => self.step(Motion::Up(1)),
            Mouse::Scroll { up: false } => self.step(Motion::Down(1)),
        }
        Default::default()
    }

    fn commands(&self) -> (crate::keymap::Section, &'static [&'static str]) {
        use crate::action::Pane;
        (
            crate::keymap::Section::Pane(Pane::Agents),
            &["live", "stop", "restart", "ack", "focus inbox", "resume"],
        )
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, cx: &AgentsContext<'_>, focused: bool) {
        Agents::draw(self, area, buf, cx.theme, cx.spinner, focused);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engine_column_says_where_an_agent_runs_unless_here() {
        let row = |place: &str| AgentRow {
            name: "a".into(),
            backend: "claude".into(),
            model: Some("opus".into()),
            status: AgentStatus::Idle,
            metrics: Default::default(),
            activity: None,
            place: place.into(),
            protocol: String::new(),
            live: Default::default(),
        };
        assert_eq!(row("local").engine(), "claude/opus");
        assert_eq!(row("").engine(), "claude/opus");
        assert_eq!(row("sandbox").engine(), "claude/opus in sandbox");
        assert_eq!(row("box").engine(), "claude/opus on box");
    }
}
