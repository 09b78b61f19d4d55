//! The home screen (`awtui` with no argument): every running instance of
//! this user in one list, and the attention view (what waits for the
//! person across them). Pure state and keys: [`Home::key`] returns
//! [`HomeEffect`]s that the caller (`commands::home`) carries out (open an
//! instance attached, stop one, start a workflow file); what it polled
//! comes in through [`Home::polled`].
//!
//! Every key is a binding ([`keys`]): `[keys.home]` on the list and the
//! attention view (by default `j`/`k` move, `g`/`G` first/last, Enter
//! opens or jumps, `s` stops, `n` starts a workflow file, `!` or `a`
//! switches views, Esc goes back to the list, `?` shows the keys, `q` or
//! Ctrl-C leaves, every instance keeps running), `[keys.help]` in `?` and
//! `[keys.confirm]` for the stop question. Only the path typed after `n`
//! is plain text input (Tab completes it, [`complete`]).

pub mod complete;
pub mod help;
pub mod keys;
pub mod view;

use std::cell::Cell;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use super::attention::{self, AttentionItem, FirstSeen, Jump, Polled};
use super::keymap::Keymap;
use super::notify::Looking;
use crate::sanitize::for_terminal;
use crate::vocab::AgentStatus;
use crate::vocab::InstanceInfo;

pub use complete::{Lister, complete, list_folder};

/// One instance as a row of the list.
#[derive(Clone, Debug, PartialEq)]
pub struct HomeRow {
    /// `@name`'s name.
    pub name: String,
    /// The workflow's name.
    pub workflow: String,
    /// Where its agents work.
    pub folder: String,
    /// Agents with a turn running.
    pub working: usize,
    /// Agents in all.
    pub total: usize,
    /// `user`'s unacknowledged mentions.
    pub unread: usize,
    /// Spend of every agent, in US dollars.
    pub cost: f64,
    /// When its engine started.
    pub started: DateTime<Utc>,
    /// How many attention items it has.
    pub attention: usize,
    /// `paused`, `stopping` or `no answer` (its control socket did not
    /// answer in time), when it is.
    pub note: Option<&'static str>,
}

/// Whether an agent counts as working in the list.
fn working(status: &AgentStatus) -> bool {
    matches!(
        status,
        AgentStatus::Starting
            | AgentStatus::Thinking
            | AgentStatus::CallingTool(_)
            | AgentStatus::Stalled
            | AgentStatus::Retrying { .. }
    )
}

/// The list's rows for what was polled (in the same order).
pub fn rows(polled: &[Polled], items: &[AttentionItem]) -> Vec<HomeRow> {
    polled
        .iter()
        .map(|p| {
            let (working_n, total, cost, note) = match &p.status {
                Some(s) => (
                    s.agents.iter().filter(|a| working(&a.status)).count(),
                    s.agents.len(),
                    s.agents.iter().map(|a| a.metrics.cost_usd).sum(),
                    if s.finished.is_some() {
                        Some("stopping")
                    } else if s.paused.is_some() {
                        Some("paused")
                    } else {
                        None
                    },
                ),
                None => (0, p.info.agents.len(), 0.0, Some("no answer")),
            };
            HomeRow {
                name: for_terminal(&p.info.instance),
                workflow: for_terminal(&if p.info.standalone {
                    "(standalone)".to_string()
                } else {
                    p.info.workflow_name.clone()
                }),
                folder: for_terminal(&p.info.workdir.display().to_string()),
                working: working_n,
                total,
                unread: p.inbox.len(),
                cost,
                started: p.info.started,
                attention: items.iter().filter(|i| i.home == p.info.home).count(),
                note,
            }
        })
        .collect()
}

/// Which of the two lists is shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HomeView {
    /// The instances.
    #[default]
    List,
    /// What waits for the person.
    Attention,
}

/// A question or prompt in the bottom line.
#[derive(Clone, Debug, PartialEq)]
pub enum Prompt {
    /// Stop this instance? (y/n)
    Stop(Box<InstanceInfo>),
    /// The workflow file to start, as typed; with the candidates Tab
    /// cycles through, once there are several.
    New {
        /// The text typed.
        text: String,
        /// Candidates and the one shown.
        cycle: Option<(Vec<String>, usize)>,
    },
}

/// What the caller must do after a key.
#[derive(Clone, Debug, PartialEq)]
pub enum HomeEffect {
    /// Open this instance's control room, attached, at `jump`.
    Open {
        /// The instance.
        info: InstanceInfo,
        /// Where to go in it.
        jump: Jump,
    },
    /// Stop this instance (as `awtui stop @name`).
    Stop(InstanceInfo),
    /// Start this workflow file in the background (as `awtui start
    /// --background`).
    Start(PathBuf),
    /// Leave awtui (instances keep running).
    Quit,
}

/// The home screen's state.
#[derive(Debug, Default)]
pub struct Home {
    /// What the last poll saw.
    pub polled: Vec<Polled>,
    /// One row per instance, from `polled`.
    pub rows: Vec<HomeRow>,
    /// Every attention item, newest first.
    pub items: Vec<AttentionItem>,
    /// First-seen times of items without their own.
    seen: FirstSeen,
    /// Whether a poll has arrived.
    pub loaded: bool,
    /// The selected row.
    pub selected: usize,
    /// The selected attention item.
    pub item_selected: usize,
    /// The list shown.
    pub view: HomeView,
    /// A question or prompt.
    pub prompt: Option<Prompt>,
    /// A line of news (started, stopped, an error), and whether it is an
    /// error.
    pub status: Option<(String, bool)>,
    /// The time for up times (set before each draw; tests fix it).
    pub now: DateTime<Utc>,
    /// Offset from UTC for the attention view's times, in seconds.
    pub utc_offset: i32,
    /// The folder relative workflow paths start from.
    pub cwd: PathBuf,
    /// The help overlay (`?`), with its scroll.
    pub help: Option<usize>,
    /// The help's page and its last scroll position, as last drawn.
    pub help_drawn: Cell<(usize, usize)>,
    /// How many rows of the list or the attention view show, as last
    /// drawn (how far a page moves the selection).
    pub list_drawn: Cell<usize>,
    /// What each key does (`[keys.home]`, `[keys.help]`,
    /// `[keys.confirm]`): the shipped defaults until the caller sets the
    /// user's.
    pub keymap: Keymap,
}

impl Home {
    /// An empty home screen with the shipped keys; `cwd` resolves
    /// relative paths typed after `n`.
    pub fn new(cwd: PathBuf, utc_offset: i32) -> Home {
        Home {
            cwd,
            utc_offset,
            now: Utc::now(),
            keymap: super::config::Config::defaults().keymap,
            ..Home::default()
        }
    }

    /// Takes a new poll: rows and attention items, the selections kept on
    /// the same instance and item where they still exist.
    pub fn polled(&mut self, polled: Vec<Polled>, now: DateTime<Utc>) {
        let was = self.polled.get(self.selected).map(|p| p.info.home.clone());
        let was_item = self.items.get(self.item_selected).map(AttentionItem::key);
        self.items = attention::collect(&polled, &mut self.seen, now);
        self.rows = rows(&polled, &self.items);
        self.polled = polled;
        self.loaded = true;
        self.selected = was
            .and_then(|h| self.polled.iter().position(|p| p.info.home == h))
            .unwrap_or(self.selected)
            .min(self.rows.len().saturating_sub(1));
        self.item_selected = was_item
            .and_then(|k| self.items.iter().position(|i| i.key() == k))
            .unwrap_or(self.item_selected)
            .min(self.items.len().saturating_sub(1));
    }

    /// What the screen shows, for notifications.
    pub fn looking(&self) -> Looking {
        match self.view {
            HomeView::List => Looking::List,
            HomeView::Attention => Looking::Attention,
        }
    }

    /// Sets the news line.
    pub fn say(&mut self, text: &str, error: bool) {
        self.status = Some((for_terminal(text), error));
    }

    /// The instance with this folder, if it still runs.
    fn info(&self, home: &Path) -> Option<InstanceInfo> {
        self.polled
            .iter()
            .find(|p| p.info.home == home)
            .map(|p| p.info.clone())
    }
}

#[cfg(test)]
mod tests;
