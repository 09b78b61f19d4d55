//! The home screen (`awtui` with no argument): every running instance of
//! this user in one list, and the attention view (what waits for the
//! person across them). Pure state and keys: [`Home::key`] returns
//! [`HomeEffect`]s that the caller (`commands::home`) carries out (open an
//! instance attached, stop one, start a workflow file); what it polled
//! comes in through [`Home::polled`].
//!
//! Keys in the list: `j`/`k` (arrows) move, `g`/`G` first/last, Enter
//! opens, `s` stops (after `y`), `n` starts a workflow file (a path prompt;
//! Tab completes), `!` or `a` shows the attention view, `q` or Ctrl-C
//! leaves (every instance keeps running). In the attention view: Enter
//! jumps to the item, `!`, `a` or Esc goes back to the list. `?` shows
//! these keys.

pub mod view;

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::attention::{self, AttentionItem, FirstSeen, Jump, Polled};
use super::notify::Looking;
use crate::sanitize::for_terminal;
use crate::vocab::AgentStatus;
use crate::vocab::InstanceInfo;

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

/// Lists a folder for path completion: each entry's name and whether it is
/// a folder.
pub type Lister<'a> = &'a dyn Fn(&Path) -> Vec<(String, bool)>;

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
    pub help_drawn: std::cell::Cell<(usize, usize)>,
}

/// The home screen's keys, for its `?` help.
pub const HELP: [(&str, &str); 14] = [
    ("[instances]", ""),
    (
        "enter",
        "open the instance (attached: leaving it keeps it running)",
    ),
    ("s", "stop the instance and its agents (asks y/n)"),
    ("n", "start a workflow file (tab completes the path)"),
    ("! or a", "the attention view"),
    ("j/k ↑↓", "move (g/G or home/end: first/last)"),
    ("?", "this help (j/k, pgup/pgdown scroll; esc closes)"),
    ("q ctrl-c", "leave (every instance keeps running)"),
    ("", ""),
    ("[attention]", ""),
    (
        "enter",
        "jump to the item: its instance, at its message or agent",
    ),
    ("! a esc", "back to the instances"),
    ("", ""),
    (
        "[in an instance]",
        "H back to this list, ! its attention view, ? its keys",
    ),
];

impl Home {
    /// An empty home screen; `cwd` resolves relative paths typed after `n`.
    pub fn new(cwd: PathBuf, utc_offset: i32) -> Home {
        Home {
            cwd,
            utc_offset,
            now: Utc::now(),
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

    /// A key while the help is open: scrolls it, or closes it (`None`).
    fn help_key(&self, key: KeyEvent, scroll: usize) -> Option<usize> {
        let (page, last) = self.help_drawn.get();
        let page = page.saturating_sub(1).max(1);
        let scroll = match key.code {
            KeyCode::Char('j') | KeyCode::Down => scroll + 1,
            KeyCode::Char('k') | KeyCode::Up => scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => scroll + page,
            KeyCode::PageUp => scroll.saturating_sub(page),
            KeyCode::Char('g') | KeyCode::Home => 0,
            KeyCode::Char('G') | KeyCode::End => last,
            KeyCode::Esc | KeyCode::Char('?' | 'q') | KeyCode::Enter | KeyCode::F(1) => {
                return None;
            }
            _ => scroll,
        };
        Some(scroll.min(last))
    }

    /// Takes one key; `list` lists folders for Tab completion.
    pub fn key(&mut self, key: KeyEvent, list: Lister<'_>) -> Vec<HomeEffect> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return vec![HomeEffect::Quit];
        }
        if let Some(scroll) = self.help {
            self.help = self.help_key(key, scroll);
            return Vec::new();
        }
        match self.prompt.take() {
            Some(Prompt::Stop(info)) => {
                if key.code == KeyCode::Char('y') {
                    self.say(&format!("stopping @{}…", info.instance), false);
                    return vec![HomeEffect::Stop(*info)];
                }
                self.say("not stopped", false);
                return Vec::new();
            }
            Some(Prompt::New { text, cycle }) => return self.new_key(key, text, cycle, list),
            None => {}
        }
        let n = match self.view {
            HomeView::List => self.rows.len(),
            HomeView::Attention => self.items.len(),
        };
        let sel = match self.view {
            HomeView::List => &mut self.selected,
            HomeView::Attention => &mut self.item_selected,
        };
        match key.code {
            KeyCode::Char('j') | KeyCode::Down => *sel = (*sel + 1).min(n.saturating_sub(1)),
            KeyCode::Char('k') | KeyCode::Up => *sel = sel.saturating_sub(1),
            KeyCode::Char('g') | KeyCode::Home => *sel = 0,
            KeyCode::Char('G') | KeyCode::End => *sel = n.saturating_sub(1),
            KeyCode::Char('q') => return vec![HomeEffect::Quit],
            KeyCode::Char('?') | KeyCode::F(1) => self.help = Some(0),
            KeyCode::Char('!') | KeyCode::Char('a') => {
                self.view = match self.view {
                    HomeView::List => HomeView::Attention,
                    HomeView::Attention => HomeView::List,
                };
            }
            KeyCode::Esc if self.view == HomeView::Attention => self.view = HomeView::List,
            KeyCode::Enter => return self.open(),
            KeyCode::Char('s') if self.view == HomeView::List => {
                match self.polled.get(self.selected) {
                    Some(p) => {
                        self.status = None;
                        self.prompt = Some(Prompt::Stop(Box::new(p.info.clone())));
                    }
                    None => self.say("nothing to stop", true),
                }
            }
            KeyCode::Char('n') if self.view == HomeView::List => {
                self.status = None;
                self.prompt = Some(Prompt::New {
                    text: String::new(),
                    cycle: None,
                });
            }
            _ => {}
        }
        Vec::new()
    }

    /// Enter: the selected instance, or where the selected item happened.
    fn open(&mut self) -> Vec<HomeEffect> {
        let target = match self.view {
            HomeView::List => self
                .polled
                .get(self.selected)
                .map(|p| (p.info.clone(), Jump::Instance)),
            HomeView::Attention => self
                .items
                .get(self.item_selected)
                .and_then(|i| self.info(&i.home).map(|info| (info, i.jump.clone()))),
        };
        match target {
            Some((info, jump)) => vec![HomeEffect::Open { info, jump }],
            None => {
                self.say("nothing selected", true);
                Vec::new()
            }
        }
    }

    fn new_key(
        &mut self,
        key: KeyEvent,
        mut text: String,
        cycle: Option<(Vec<String>, usize)>,
        list: Lister<'_>,
    ) -> Vec<HomeEffect> {
        let mut cycle_next = None;
        match key.code {
            KeyCode::Esc => return Vec::new(),
            KeyCode::Enter => {
                let t = text.trim();
                if t.is_empty() {
                    return Vec::new();
                }
                let path = expand(t, &self.cwd);
                self.say(&format!("starting {}…", path.display()), false);
                return vec![HomeEffect::Start(path)];
            }
            KeyCode::Tab => match cycle {
                Some((c, i)) => {
                    let i = (i + 1) % c.len();
                    text = c[i].clone();
                    cycle_next = Some((c, i));
                }
                None => {
                    let c = complete(&text, &self.cwd, list);
                    match c.len() {
                        0 => self.say("no workflow file or folder matches", true),
                        1 => text = c[0].clone(),
                        _ => {
                            let common = common_prefix(&c);
                            if common.len() > text.len() {
                                text = common;
                            } else {
                                text = c[0].clone();
                                cycle_next = Some((c, 0));
                            }
                        }
                    }
                }
            },
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Char(ch) => text.push(ch),
            _ => {}
        }
        self.prompt = Some(Prompt::New {
            text,
            cycle: cycle_next,
        });
        Vec::new()
    }
}

/// `~/…` and relative paths made absolute.
fn expand(text: &str, cwd: &Path) -> PathBuf {
    if let Some(rest) = text.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home).join(rest);
    }
    cwd.join(text)
}

/// The completions of a typed path: folders (with `/`) and YAML files in
/// its folder whose names start with what follows the last `/`, sorted.
pub fn complete(text: &str, cwd: &Path, list: Lister<'_>) -> Vec<String> {
    let (dir, prefix) = match text.rfind('/') {
        Some(i) => (&text[..=i], &text[i + 1..]),
        None => ("", text),
    };
    let folder = if dir.is_empty() {
        cwd.to_path_buf()
    } else {
        expand(dir, cwd)
    };
    let mut out: Vec<String> = list(&folder)
        .into_iter()
        .filter(|(name, _)| name.starts_with(prefix))
        .filter(|(name, _)| !name.starts_with('.') || prefix.starts_with('.'))
        .filter(|(name, is_dir)| *is_dir || name.ends_with(".yaml") || name.ends_with(".yml"))
        .map(|(name, is_dir)| format!("{dir}{name}{}", if is_dir { "/" } else { "" }))
        .collect();
    out.sort();
    out
}

fn common_prefix(c: &[String]) -> String {
    let first = &c[0];
    let mut n = first.len();
    for s in &c[1..] {
        n = n.min(
            first
                .char_indices()
                .zip(s.chars())
                .take_while(|((_, a), b)| a == b)
                .map(|((i, a), _)| i + a.len_utf8())
                .last()
                .unwrap_or(0),
        );
    }
    first[..n].to_string()
}

/// Lists a real folder for [`complete`] (unreadable folders list nothing).
pub fn list_folder(dir: &Path) -> Vec<(String, bool)> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| {
                    let is_dir = e.path().is_dir();
                    (e.file_name().to_string_lossy().into_owned(), is_dir)
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
