//! The task board pane: every task of the instance's plans, grouped by
//! status (board order: pending … skipped), each with its short id, name,
//! holder (the awtui agent whose registration holds it) or assignee, the
//! tasks it waits for, its last checkpoint, the latest Agent Mail message
//! about it and its age. Enter shows one task: plan (pretty JSON), every
//! checkpoint, outcome or error, and the Agent Mail messages linked to it.
//!
//! Agent Mail meets the caw board here: a message whose bead id equals a
//! task's id or its name (the key of a task declared in a workflow file),
//! in any case, is linked to that task. The board's filter reads like the
//! channel's: `bead:ID` keeps the task with that id or name, `from:NAME`
//! the tasks held by or meant for that agent, `type:STATUS` one status,
//! other words search names, ids and descriptions.
//!
//! Everything here is pure: rows, the details and name resolution are
//! computed from the board the app holds ([`TaskSnapshot`]), the channel's
//! messages and the time given.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::channel::{Channel, Message};
use super::scroll::Window;
use crate::action::{Filter, Motion};
use crate::duration::age;
use crate::protocols::agent_mail::MailContent;
use crate::sanitize::for_terminal;
use crate::text::{truncate, width};
use crate::theme::Theme;
use crate::vocab::TaskSnapshot;
use crate::vocab::{Checkpoint, Task, TaskStatus};

mod filter;
pub use filter::{listed, matches, resolve};

/// The details of one task, shown in place of the list.
#[derive(Clone, Debug, PartialEq)]
pub struct Detail {
    /// The task's id.
    pub task: String,
    /// Lines scrolled off the top.
    pub scroll: usize,
    /// Every checkpoint, once the engine answered `read_task` (until then
    /// the board's newest one is shown).
    pub checkpoints: Option<Vec<Checkpoint>>,
}

/// The task board pane's state.
#[derive(Clone, Debug, Default)]
pub struct Tasks {
    /// The selected task's id (kept by id, so a task moving to another
    /// status group stays selected).
    pub selected: Option<String>,
    /// The board's filter.
    pub filter: Filter,
    /// The task whose details are shown.
    pub detail: Option<Detail>,
    /// The task id drawn on each row of the last draw (mouse clicks).
    pub rows: Vec<Option<String>>,
    /// Height of the last draw (paging).
    pub view_height: usize,
}

/// A task id as listed: `tk_` ids by their first 6 hex digits, others
/// (given by a plan) up to 10 characters. Commands take these prefixes.
pub fn short_id(id: &str) -> String {
    let id = for_terminal(id);
    match id.strip_prefix("tk_") {
        Some(hex) if hex.len() > 6 && hex.is_char_boundary(6) => hex[..6].to_string(),
        _ => truncate(&id, 10),
    }
}

/// The awtui agent holding `task` (the owner of the registration that
/// claimed it; the registration id when it is unknown).
pub fn holder(board: &TaskSnapshot, task: &Task) -> Option<String> {
    let id = task.claimed_by.as_ref()?;
    Some(
        board
            .agents
            .iter()
            .find(|a| &a.id == id)
            .map(|a| a.owner.clone())
            .unwrap_or_else(|| id.clone()),
    )
}

/// The channel's Agent Mail messages linked to `task` (bead id equal to
/// its id or its name, any case), as message indices, oldest first.
pub fn linked(channel: &Channel, task: &Task) -> Vec<usize> {
    let mut all: Vec<usize> = channel.about_bead(&task.id).to_vec();
    if !task.name.eq_ignore_ascii_case(&task.id) {
        all.extend_from_slice(channel.about_bead(&task.name));
        all.sort_unstable();
        all.dedup();
    }
    all
}

fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// A task's workspace in a few words: its branch and status (`active`,
/// `merged` with its commit, `abandoned`).
pub fn workspace_summary(ws: &crate::vocab::PlanWorkspace) -> String {
    let mut s = format!(
        "⎇ {} ({}",
        for_terminal(&ws.branch),
        for_terminal(&ws.status)
    );
    if let Some(c) = &ws.merge_commit {
        s.push_str(&format!(" {}", for_terminal(c.get(..8).unwrap_or(c))));
    }
    s.push(')');
    s
}

/// An Agent Mail message in a few words: its type and what it says
/// (the step, the reason, the summary…).
pub fn mail_summary(m: &Message) -> String {
    let Some(mail) = &m.annotations.mail else {
        return String::new();
    };
    let kind = mail.kind().map_or("MAIL", |k| k.keyword());
    let what: Option<String> = match &mail.content {
        MailContent::Progress { step, status, .. } => {
            let parts: Vec<&str> = [step.as_deref(), status.as_deref()]
                .into_iter()
                .flatten()
                .collect();
            (!parts.is_empty()).then(|| parts.join(" · "))
        }
        MailContent::OfferingReady(c) | MailContent::Done(c) => {
            c.summary.clone().or_else(|| c.status.clone())
        }
        MailContent::Failed { reason, .. } => reason.clone(),
        MailContent::Checkpoint { description, .. } => description.clone(),
        MailContent::BeadAccepted { title, .. } => title.clone(),
        MailContent::HelpRequest {
            question, problem, ..
        } => question.clone().or_else(|| problem.clone()),
        MailContent::HelpResponse { guidance } => guidance.clone(),
        _ => None,
    };
    let what = what.unwrap_or_default();
    let what = first_line(&what);
    if what.is_empty() {
        kind.to_string()
    } else {
        format!("{kind} {}", for_terminal(what))
    }
}

/// A status's mark and style on the board.
pub fn status_style(status: TaskStatus, theme: &Theme) -> (&'static str, Style) {
    match status {
        TaskStatus::Pending => ("○", Style::new()),
        TaskStatus::Claimed => ("◔", Style::new().fg(theme.accent)),
        TaskStatus::Planning => ("◑", Style::new().fg(theme.accent)),
        TaskStatus::InProgress => ("●", Style::new().fg(theme.ok)),
        TaskStatus::Paused => ("‖", Style::new().fg(theme.warning)),
        TaskStatus::Completed => ("✓", theme.dimmed()),
        TaskStatus::Failed => (
            "✗",
            Style::new().fg(theme.error).add_modifier(Modifier::BOLD),
        ),
        TaskStatus::Skipped => ("⊘", theme.dimmed()),
    }
}

fn local(t: DateTime<Utc>, utc_offset: i32, format: &str) -> String {
    (t + chrono::Duration::seconds(utc_offset as i64))
        .format(format)
        .to_string()
}

/// One piece of a row (dependencies, checkpoint, mail…) and its style.
type Fact = (String, Style);

/// A row of the list: a status heading (with its count), a task, or the
/// second line of a task.
#[derive(Clone, Copy)]
enum Row {
    Header(TaskStatus, usize),
    Task(usize),
    More(usize),
}

/// What the board needs to draw besides its own state.
pub struct BoardContext<'a> {
    /// The board.
    pub board: &'a TaskSnapshot,
    /// The channel (for Agent Mail links).
    pub channel: &'a Channel,
    /// Colours.
    pub theme: &'a Theme,
    /// Now, for ages.
    pub now: DateTime<Utc>,
    /// Offset from UTC for times, in seconds.
    pub utc_offset: i32,
    /// The board's tasks by id (dependencies are looked up per row).
    by_id: HashMap<&'a str, &'a Task>,
}

impl<'a> BoardContext<'a> {
    /// What the board draws with.
    pub fn new(
        board: &'a TaskSnapshot,
        channel: &'a Channel,
        theme: &'a Theme,
        now: DateTime<Utc>,
        utc_offset: i32,
    ) -> BoardContext<'a> {
        BoardContext {
            board,
            channel,
            theme,
            now,
            utc_offset,
            by_id: board.tasks.iter().map(|t| (t.id.as_str(), t)).collect(),
        }
    }

    fn name_of(&self, id: &str) -> String {
        self.by_id
            .get(id)
            .map(|t| for_terminal(&t.name))
            .unwrap_or_else(|| for_terminal(id))
    }

    /// A checkpoint's author: the awtui agent of a registration, else as
    /// recorded (`user`, `system`).
    fn who(&self, by: &str) -> String {
        self.board
            .agents
            .iter()
            .find(|a| a.id == by)
            .map_or_else(|| by.to_string(), |a| a.owner.clone())
    }

    fn dep_done(&self, id: &str) -> bool {
        self.by_id.get(id).is_some_and(|t| t.status.is_done())
    }

    /// The row's facts after name and holder: the dependencies (only
    /// when one is unfinished unless `all_deps`), and the outcome or
    /// error, last checkpoint and latest linked message.
    fn facts(&self, t: &Task, all_deps: bool) -> (Option<Fact>, Vec<Fact>) {
        let theme = self.theme;
        let mut deps = None;
        let mut out = Vec::new();
        let waiting = t.depends_on.iter().any(|d| !self.dep_done(d));
        if !t.depends_on.is_empty() && (all_deps || waiting) {
            let names: Vec<String> = t
                .depends_on
                .iter()
                .map(|d| {
                    let mark = if self.dep_done(d) { "✓" } else { "" };
                    format!("{}{mark}", self.name_of(d))
                })
                .collect();
            deps = Some((format!("after {}", names.join(",")), theme.dimmed()));
        }
        if let Some(o) = &t.outcome {
            out.push((
                format!("= {}", for_terminal(first_line(o))),
                Style::new().fg(theme.ok),
            ));
        }
        if let Some(e) = &t.error {
            out.push((
                format!("✗ {}", for_terminal(first_line(e))),
                Style::new().fg(theme.error),
            ));
        }
        if let Some(cp) = self
            .board
            .last_checkpoints
            .iter()
            .find(|c| c.task_id == t.id)
            && t.outcome.is_none()
        {
            out.push((
                format!("▸ {}: {}", cp.kind, for_terminal(first_line(&cp.summary))),
                Style::new(),
            ));
        }
        if let Some(ws) = self.board.workspaces_of(&t.id).last() {
            out.push((workspace_summary(ws), theme.dimmed()));
        }
        if let Some(&i) = linked(self.channel, t).last() {
            out.push((
                format!("✉ {}", mail_summary(&self.channel.messages[i])),
                Style::new().fg(theme.badge),
            ));
        }
        (deps, out)
    }

    /// A task's first line: mark, short id, name, holder or assignee,
    /// facts (all of them unless `two`, which leaves all but the
    /// dependencies to a second line), age.
    fn task_line(
        &self,
        t: &Task,
        w: usize,
        name_w: usize,
        two: bool,
        marked: bool,
    ) -> Line<'static> {
        const WHO_W: usize = 10;
        let theme = self.theme;
        let (who, who_style) = match holder(self.board, t) {
            Some(h) => (h.clone(), theme.sender(&h)),
            None => match &t.assignee {
                Some(a) => (format!("→{a}"), theme.dimmed()),
                None => (String::new(), Style::new()),
            },
        };
        let age = age(t.updated_at, self.now);
        let fixed = 2 + 7 + name_w + 1 + WHO_W + 1;
        let room = w.saturating_sub(fixed + 1 + width(&age));
        let mut spans = vec![
            Span::styled(
                if marked { "› " } else { "  " },
                Style::new().fg(theme.accent),
            ),
            Span::styled(format!("{:<7}", short_id(&t.id)), theme.dimmed()),
            Span::styled(
                format!("{:<name_w$} ", truncate(&for_terminal(&t.name), name_w)),
                Style::new().add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                format!("{:<WHO_W$} ", truncate(&for_terminal(&who), WHO_W)),
                who_style,
            ),
        ];
        // One line: finished dependencies are left out.
        let (deps, mut more) = self.facts(t, two);
        let mut first: Vec<Fact> = deps.into_iter().collect();
        if !two {
            first.append(&mut more);
        }
        let (facts, used) = fit(first, room, theme);
        spans.extend(facts);
        spans.push(Span::raw(" ".repeat(room.saturating_sub(used) + 1)));
        spans.push(Span::styled(age, theme.dimmed()));
        Line::from(spans)
    }

    /// The details of `task` as lines: for the pane and, as plain text,
    /// for the pager.
    pub fn detail_lines(&self, task: &Task, detail: Option<&Detail>) -> Vec<Line<'static>> {
        let theme = self.theme;
        let title = Style::new().fg(theme.accent).add_modifier(Modifier::BOLD);
        let label = |l: &str| Span::styled(format!("{l:<10}"), theme.dimmed());
        let when = |t: DateTime<Utc>| {
            format!(
                "{} ({} ago)",
                local(t, self.utc_offset, "%H:%M:%S"),
                age(t, self.now)
            )
        };
        let (mark, style) = status_style(task.status, theme);
        let mut out = vec![Line::from(vec![
            Span::styled(format!("{mark} "), style),
            Span::styled(
                for_terminal(&task.name),
                Style::new().add_modifier(Modifier::BOLD),
            ),
            Span::styled(format!(" · {} · ", for_terminal(&task.id)), theme.dimmed()),
            Span::styled(task.status.as_str(), style),
        ])];
        let wf = self
            .board
            .workflows
            .iter()
            .find(|w| w.id == task.workflow_id)
            .map(|w| format!("{} ({})", for_terminal(&w.name), for_terminal(&w.id)))
            .unwrap_or_else(|| for_terminal(&task.workflow_id));
        out.push(Line::from(vec![label("workflow"), Span::raw(wf)]));
        if let Some(h) = &task.claimed_by {
            let who = holder(self.board, task).unwrap_or_default();
            let since = task
                .claimed_at
                .map(|t| format!(" since {}", local(t, self.utc_offset, "%H:%M:%S")))
                .unwrap_or_default();
            out.push(Line::from(vec![
                label("holder"),
                Span::styled(for_terminal(&who), theme.sender(&who)),
                Span::styled(format!(" ({}){since}", for_terminal(h)), theme.dimmed()),
            ]));
        }
        if let Some(a) = &task.assignee {
            out.push(Line::from(vec![label("for"), Span::raw(for_terminal(a))]));
        }
        if let Some(r) = &task.role {
            out.push(Line::from(vec![label("role"), Span::raw(for_terminal(r))]));
        }
        if !task.depends_on.is_empty() {
            let deps: Vec<String> = task
                .depends_on
                .iter()
                .map(|d| {
                    let status = self
                        .board
                        .tasks
                        .iter()
                        .find(|t| &t.id == d)
                        .map_or("unknown", |t| t.status.as_str());
                    format!("{} ({status})", self.name_of(d))
                })
                .collect();
            out.push(Line::from(vec![label("after"), Span::raw(deps.join(", "))]));
        }
        for ws in self.board.workspaces_of(&task.id) {
            let mut text = workspace_summary(ws);
            if let Some(path) = &ws.worktree_path {
                text.push_str(&format!(" · {}", for_terminal(path)));
            }
            out.push(Line::from(vec![label("workspace"), Span::raw(text)]));
        }
        out.push(Line::from(vec![
            label("times"),
            Span::raw(format!(
                "created {} · updated {}",
                local(task.created_at, self.utc_offset, "%Y-%m-%d %H:%M:%S"),
                when(task.updated_at)
            )),
        ]));
        let block = |out: &mut Vec<Line<'static>>, name: &str, text: &str, style: Style| {
            out.push(Line::default());
            out.push(Line::styled(name.to_string(), title));
            for l in for_terminal(text).lines() {
                out.push(Line::styled(format!("  {l}"), style));
            }
        };
        if let Some(o) = &task.outcome {
            block(&mut out, "outcome", o, Style::new().fg(theme.ok));
            if !task.outcome_detail.is_null() {
                let json = serde_json::to_string_pretty(&task.outcome_detail).unwrap_or_default();
                block(&mut out, "outcome detail", &json, Style::new());
            }
        }
        if let Some(e) = &task.error {
            block(&mut out, "error", e, Style::new().fg(theme.error));
        }
        // Every checkpoint once the engine answered; else the newest.
        let newest: Vec<Checkpoint> = self
            .board
            .last_checkpoints
            .iter()
            .filter(|c| c.task_id == task.id)
            .cloned()
            .collect();
        let (checkpoints, all) = match detail.and_then(|d| d.checkpoints.as_ref()) {
            Some(all) => (all.clone(), true),
            None => (newest, false),
        };
        out.push(Line::default());
        out.push(Line::styled(
            if all {
                format!("checkpoints · {}", checkpoints.len())
            } else {
                "checkpoints · newest (loading the others…)".to_string()
            },
            title,
        ));
        if checkpoints.is_empty() {
            out.push(Line::styled("  none yet", theme.dimmed()));
        }
        for c in &checkpoints {
            out.push(Line::from(vec![
                Span::styled(
                    format!(
                        "  #{} {} ",
                        c.sequence,
                        local(c.created_at, self.utc_offset, "%H:%M:%S")
                    ),
                    theme.dimmed(),
                ),
                Span::styled(format!("{} ", c.kind), Style::new().fg(theme.accent)),
                Span::raw(for_terminal(first_line(&c.summary))),
                Span::styled(
                    format!(" ({})", for_terminal(&self.who(&c.by))),
                    theme.dimmed(),
                ),
            ]));
            for l in for_terminal(&c.summary).lines().skip(1) {
                out.push(Line::raw(format!("      {l}")));
            }
            if !c.files_changed.is_empty() {
                out.push(Line::styled(
                    format!("      files: {}", for_terminal(&c.files_changed.join(", "))),
                    theme.dimmed(),
                ));
            }
            if !c.detail.is_null() {
                let json = serde_json::to_string(&c.detail).unwrap_or_default();
                out.push(Line::styled(
                    format!("      {}", for_terminal(&json)),
                    theme.dimmed(),
                ));
            }
        }
        let mail = linked(self.channel, task);
        out.push(Line::default());
        out.push(Line::styled(format!("agent mail · {}", mail.len()), title));
        if mail.is_empty() {
            out.push(Line::styled(
                format!(
                    "  no message with Bead: {} or {}",
                    for_terminal(&task.id),
                    for_terminal(&task.name)
                ),
                theme.dimmed(),
            ));
        }
        for i in mail {
            let m = &self.channel.messages[i];
            out.push(Line::from(vec![
                Span::styled(
                    format!(
                        "  #{} {} ",
                        m.entry.id,
                        local(m.entry.timestamp, self.utc_offset, "%H:%M:%S")
                    ),
                    theme.dimmed(),
                ),
                Span::styled(
                    format!("{} ", for_terminal(&m.entry.from)),
                    theme.sender(&m.entry.from),
                ),
                Span::styled(mail_summary(m), Style::new().fg(theme.badge)),
            ]));
        }
        if !task.description.trim().is_empty() {
            block(&mut out, "description", &task.description, Style::new());
        }
        if !task.plan.is_null() {
            let json = serde_json::to_string_pretty(&task.plan).unwrap_or_default();
            block(&mut out, "plan", &json, Style::new());
        }
        if !task.context.is_null() {
            let json = serde_json::to_string_pretty(&task.context).unwrap_or_default();
            block(&mut out, "context", &json, Style::new());
        }
        out
    }
}

/// Splits `room` columns among texts `widths` wide: short ones get what
/// they need, the rest share what is left equally.
pub fn fair_shares(widths: &[usize], room: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..widths.len()).collect();
    order.sort_by_key(|&i| widths[i]);
    let mut shares = vec![0; widths.len()];
    let mut left = room;
    for (k, &i) in order.iter().enumerate() {
        let fair = left / (widths.len() - k);
        shares[i] = widths[i].min(fair);
        left -= shares[i];
    }
    shares
}

/// Facts side by side in `room` columns (each cut to its fair share,
/// separated by ` · `), and the columns used.
fn fit(facts: Vec<Fact>, room: usize, theme: &Theme) -> (Vec<Span<'static>>, usize) {
    let widths: Vec<usize> = facts.iter().map(|(f, _)| width(f)).collect();
    let seps = 3 * facts.len().saturating_sub(1);
    let shares = fair_shares(&widths, room.saturating_sub(seps));
    let mut spans = Vec::new();
    let mut used = 0;
    for ((text, style), share) in facts.into_iter().zip(shares) {
        if share < 4 {
            continue;
        }
        let sep = if used == 0 { "" } else { " · " };
        let piece = truncate(&text, share);
        used += width(sep) + width(&piece);
        spans.push(Span::styled(sep, theme.dimmed()));
        spans.push(Span::styled(piece, style));
    }
    (spans, used)
}

/// A line as plain text (for the pager and the clipboard).
pub fn plain(lines: &[Line]) -> String {
    let mut s = String::new();
    for l in lines {
        for span in &l.spans {
            s.push_str(&span.content);
        }
        s.push('\n');
    }
    s
}

impl Tasks {
    /// The selected task among `list` (the first when none is selected or
    /// the selected one is no longer listed).
    pub fn selected_index(&self, list: &[&Task]) -> Option<usize> {
        if list.is_empty() {
            return None;
        }
        Some(
            self.selected
                .as_ref()
                .and_then(|id| list.iter().position(|t| &t.id == id))
                .unwrap_or(0),
        )
    }

    /// Moves the selection (in the list) or scrolls the details (drawing
    /// clamps them to the last page).
    pub fn motion(&mut self, m: Motion, board: &TaskSnapshot) {
        if let Some(d) = &mut self.detail {
            d.scroll = Window::uncounted(self.view_height).scroll(d.scroll, m);
            return;
        }
        let list = listed(board, &self.filter);
        let Some(cur) = self.selected_index(&list) else {
            return;
        };
        let window = Window {
            len: list.len(),
            height: self.view_height,
        };
        self.selected = Some(list[window.select(cur, m)].id.clone());
    }

    /// Leaves the details; false when they were not shown (not consumed).
    pub fn back(&mut self) -> bool {
        self.detail.take().is_some()
    }

    /// The task a command without a name means: the one whose details
    /// are shown, else the selected one.
    pub fn current<'a>(&self, board: &'a TaskSnapshot) -> Option<&'a Task> {
        if let Some(d) = &self.detail {
            return board.tasks.iter().find(|t| t.id == d.task);
        }
        let list = listed(board, &self.filter);
        self.selected_index(&list).map(|i| list[i])
    }

    /// Records a checkpoint the engine announced, for open details.
    pub fn checkpoint_added(&mut self, c: &Checkpoint) {
        if let Some(d) = &mut self.detail
            && d.task == c.task_id
            && let Some(all) = &mut d.checkpoints
            && !all.iter().any(|x| x.id == c.id)
        {
            all.push(c.clone());
        }
    }

    /// Draws the list or the details into `area` (no border).
    pub fn draw(&mut self, area: Rect, buf: &mut Buffer, cx: &BoardContext, focused: bool) {
        self.rows.clear();
        let (w, h) = (area.width as usize, area.height as usize);
        self.view_height = h;
        if w == 0 || h == 0 {
            return;
        }
        if let Some(d) = &mut self.detail {
            let Some(task) = cx.board.tasks.iter().find(|t| t.id == d.task) else {
                buf.set_string(
                    area.x,
                    area.y,
                    truncate("the task is gone from the board · esc", w),
                    cx.theme.dimmed(),
                );
                return;
            };
            let lines = cx.detail_lines(task, Some(d));
            d.scroll = Window {
                len: lines.len(),
                height: h,
            }
            .clamp(d.scroll);
            for (k, l) in lines.iter().skip(d.scroll).take(h).enumerate() {
                buf.set_line(area.x, area.y + k as u16, l, area.width);
            }
            return;
        }
        let list = listed(cx.board, &self.filter);
        if list.is_empty() {
            let text = if cx.board.tasks.is_empty() {
                "no tasks yet · a to add one; agents plan with workflow_set_plan"
            } else {
                "no task matches the filter · F clears it"
            };
            buf.set_string(area.x, area.y, truncate(text, w), cx.theme.dimmed());
            return;
        }
        let sel = self.selected_index(&list);
        if let Some(i) = sel {
            self.selected = Some(list[i].id.clone());
        }
        let name_w = (w / 5).clamp(10, 24);
        let groups = TaskStatus::ALL
            .iter()
            .filter(|s| list.iter().any(|t| t.status == **s))
            .count();
        // Two lines per task (checkpoint, mail and outcome on the second)
        // when they all fit; else one, its facts sharing the room.
        let two = groups + 2 * list.len() <= h;
        // The rows, cheaply; lines are built for the rows in view only.
        let mut rows: Vec<Row> = Vec::new();
        for (i, t) in list.iter().enumerate() {
            if i == 0 || list[i - 1].status != t.status {
                let n = list[i..]
                    .iter()
                    .take_while(|x| x.status == t.status)
                    .count();
                rows.push(Row::Header(t.status, n));
            }
            rows.push(Row::Task(i));
            if two && !cx.facts(t, true).1.is_empty() {
                rows.push(Row::More(i));
            }
        }
        let task_of = |r: &Row| match r {
            Row::Task(i) | Row::More(i) => Some(*i),
            Row::Header(..) => None,
        };
        // Keep the selection in view.
        let sel_row = rows
            .iter()
            .rposition(|r| task_of(r) == sel && sel.is_some())
            .unwrap_or(0);
        let first = Window {
            len: rows.len(),
            height: h,
        }
        .first_showing(sel_row);
        for (row, r) in rows.iter().skip(first).take(h).enumerate() {
            let line = match *r {
                Row::Header(status, n) => {
                    let (mark, style) = status_style(status, cx.theme);
                    Line::from(vec![
                        Span::styled(
                            format!("{mark} {status}"),
                            style.add_modifier(Modifier::BOLD),
                        ),
                        Span::styled(format!(" · {n}"), cx.theme.dimmed()),
                    ])
                }
                Row::Task(i) => cx.task_line(list[i], w, name_w, two, focused && Some(i) == sel),
                Row::More(i) => {
                    let (facts, _) = fit(cx.facts(list[i], true).1, w.saturating_sub(9), cx.theme);
                    let mut spans = vec![Span::raw(" ".repeat(9))];
                    spans.extend(facts);
                    Line::from(spans)
                }
            };
            let y = area.y + row as u16;
            buf.set_line(area.x, y, &line, area.width);
            let k = task_of(r);
            if focused && k.is_some() && k == sel {
                buf.set_style(
                    Rect::new(area.x, y, area.width, 1),
                    Style::new().bg(cx.theme.selection),
                );
            }
            self.rows.push(k.map(|i| list[i].id.clone()));
        }
    }
}

impl crate::component::Component for Tasks {
    type Context<'a> = BoardContext<'a>;

    fn act(
        &mut self,
        action: &crate::action::Action,
        cx: &BoardContext<'_>,
    ) -> crate::component::Outcome {
        use crate::action::Action;
        use crate::component::Outcome;
        use crate::vocab::Command;
        match action {
            // Shows the current task's details and asks the engine for all
            // of its checkpoints.
            Action::Open => {
                let Some(task) = self.current(cx.board).map(|t| t.id.clone()) else {
                    return Outcome::error("open: the board has no task selected");
                };
                self.detail = Some(Detail {
                    task: task.clone(),
                    scroll: 0,
                    checkpoints: None,
                });
                Outcome::command(Command::ReadTask { task })
            }
            Action::Back => {
                self.back();
                Outcome::default()
            }
            Action::Move(m) => {
                self.motion(*m, cx.board);
                Outcome::default()
            }
            _ => Outcome::default(),
        }
    }

    fn mouse(
        &mut self,
        mouse: crate::component::Mouse,
        cx: &BoardContext<'_>,
    ) -> crate::component::Outcome {
        use crate::component::Mouse;
        match mouse {
            Mouse::Click { row, .. } => {
                if let Some(Some(id)) = self.rows.get(row) {
                    self.selected = Some(id.clone());
                }
            }
            Mouse::Scroll { up: true } => self.motion(Motion::ScrollUp(1), cx.board),
            Mouse::Scroll { up: false } => self.motion(Motion::ScrollDown(1), cx.board),
        }
        Default::default()
    }

    /// The current task's id and details as text.
    fn selection(&self, _verb: &str, cx: &BoardContext<'_>) -> Option<crate::component::Selection> {
        use crate::component::Selection;
        let Some(task) = self.current(cx.board) else {
            return Some(Selection::Nothing("no task selected".into()));
        };
        let detail = self.detail.as_ref().filter(|d| d.task == task.id);
        Some(Selection::Text {
            name: format!("task {}", task.id),
            text: plain(&cx.detail_lines(task, detail)),
        })
    }

    fn commands(&self) -> (crate::keymap::Section, &'static [&'static str]) {
        use crate::action::Pane;
        let section = crate::keymap::Section::Pane(Pane::Tasks);
        if self.detail.is_some() {
            (
                section,
                &[
                    "back",
                    "task done",
                    "task fail",
                    "task release",
                    "task skip",
                    "pager",
                ],
            )
        } else {
            (
                section,
                &[
                    "open",
                    "prompt /task add ",
                    "task release",
                    "task done",
                    "task fail",
                    "prompt /task filter ",
                ],
            )
        }
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, cx: &BoardContext<'_>, focused: bool) {
        Tasks::draw(self, area, buf, cx, focused);
    }
}

/// Whether `command` (one of the board's) applies to a task in `status`:
/// done, fail and skip where the status table allows the move, release
/// where an agent holds the task. Every other command always applies.
pub fn applies(command: &str, status: crate::vocab::TaskStatus) -> bool {
    use crate::vocab::TaskStatus as S;
    use crate::vocab::transitions::is_allowed;
    match command {
        "task done" => is_allowed(status, S::Completed),
        "task fail" => is_allowed(status, S::Failed),
        "task skip" => is_allowed(status, S::Skipped),
        "task release" => status.is_held(),
        _ => true,
    }
}

#[cfg(test)]
mod tests;
