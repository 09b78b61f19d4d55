//! What a key does on the home screen, read from the keymap: `[keys.help]`
//! while `?` is open, `[keys.confirm]` while the stop question waits,
//! `[keys.home]` on the list and the attention view. A `quit` key of
//! `[keys.home]` with Ctrl or Alt (Ctrl-C by default) leaves from
//! anywhere, the help and the prompts included. The path typed after `n`
//! is text: only Tab, Enter, Esc and Backspace act there.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind};

use super::complete::{Lister, common_prefix, complete, expand};
use super::{Home, HomeEffect, HomeView, Prompt};
use crate::action::{Action, Motion};
use crate::attention::Jump;
use crate::keymap::{Key, Section};
use crate::panes::scroll::Window;

impl Home {
    /// Takes one key; `list` lists folders for Tab completion.
    pub fn key(&mut self, key: KeyEvent, list: Lister<'_>) -> Vec<HomeEffect> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        let k = Key::from_event(&key);
        let bound = |section| k.and_then(|k| self.keymap.get(section, &k)).cloned();
        let home = bound(Section::Home);
        if matches!(home, Some(Action::Quit { .. })) && k.is_some_and(|k| k.reaches_past_the_bar())
        {
            return vec![HomeEffect::Quit];
        }
        if let Some(scroll) = self.help {
            return self.help_key(bound(Section::Help), scroll);
        }
        match self.prompt.take() {
            Some(Prompt::Stop(info)) => {
                if bound(Section::Confirm) == Some(Action::Yes) {
                    self.say(&format!("stopping @{}…", info.instance), false);
                    return vec![HomeEffect::Stop(*info)];
                }
                self.say("not stopped", false);
                Vec::new()
            }
            Some(Prompt::New { text, cycle }) => self.new_key(key, text, cycle, list),
            None => home.map(|a| self.act(a)).unwrap_or_default(),
        }
    }

    /// A `[keys.help]` action while the help is open: its moves scroll
    /// it (a page as drawn, never past the last), `back` closes it, any
    /// other command is carried out (`help` closes it again).
    fn help_key(&mut self, action: Option<Action>, scroll: usize) -> Vec<HomeEffect> {
        match action {
            Some(Action::Move(m)) => {
                let (page, last) = self.help_drawn.get();
                let window = Window {
                    len: page + last,
                    height: page,
                };
                self.help = Some(window.scroll(scroll, m));
                Vec::new()
            }
            Some(Action::Back) => {
                self.help = None;
                Vec::new()
            }
            Some(other) => self.act(other),
            None => Vec::new(),
        }
    }

    /// A `[keys.home]` action on the list or the attention view. Stopping
    /// and starting are the list's; the others act on either.
    fn act(&mut self, action: Action) -> Vec<HomeEffect> {
        let on_list = self.view == HomeView::List;
        match action {
            Action::Move(m) => self.select(m),
            Action::Open => return self.open(),
            Action::Stop(None) if on_list => match self.polled.get(self.selected) {
                Some(p) => {
                    self.status = None;
                    self.prompt = Some(Prompt::Stop(Box::new(p.info.clone())));
                }
                None => self.say("nothing to stop", true),
            },
            Action::Start(None) if on_list => {
                self.status = None;
                self.prompt = Some(Prompt::New {
                    text: String::new(),
                    cycle: None,
                });
            }
            Action::Start(Some(path)) if on_list => return self.start(&path),
            Action::Attention => {
                self.view = match self.view {
                    HomeView::List => HomeView::Attention,
                    HomeView::Attention => HomeView::List,
                };
            }
            Action::Back | Action::Home => self.view = HomeView::List,
            Action::Help => {
                self.help = match self.help {
                    Some(_) => None,
                    None => Some(0),
                };
            }
            Action::Quit { .. } => return vec![HomeEffect::Quit],
            _ => {}
        }
        Vec::new()
    }

    /// Moves the selection of the view shown (a page is the rows drawn).
    fn select(&mut self, motion: Motion) {
        let (len, selected) = match self.view {
            HomeView::List => (self.rows.len(), &mut self.selected),
            HomeView::Attention => (self.items.len(), &mut self.item_selected),
        };
        let window = Window {
            len,
            height: self.list_drawn.get(),
        };
        *selected = window.select(*selected, motion);
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

    /// Starts the workflow file `text` names (relative to the folder awtui
    /// was started in); nothing for an empty text.
    fn start(&mut self, text: &str) -> Vec<HomeEffect> {
        let t = text.trim();
        if t.is_empty() {
            return Vec::new();
        }
        let path = expand(t, &self.cwd);
        self.say(&format!("starting {}…", path.display()), false);
        vec![HomeEffect::Start(path)]
    }

    /// A key while the path after `n` is typed: text, with Tab completing
    /// it, Enter starting it and Esc leaving.
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
            KeyCode::Enter => return self.start(&text),
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
