//! Panes as components. Each pane handles the actions and mouse events
//! that concern it alone and answers with an [`Outcome`] (commands for the
//! engine, a status line, a question, a follow-up action); it names the
//! commands it offers for the hint line; and it draws itself. The app
//! keeps only what crosses panes (focus, the bar, questions, overlays) and
//! carries out outcomes in one place ([`crate::app::App`]).

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;

use super::action::Action;
use super::confirm::Confirm;
use super::keymap::{Key, Keymap, Section};
use crate::vocab::Command;

/// What a component asks of the app after handling something.
#[derive(Debug, Default, PartialEq)]
pub struct Outcome {
    /// Commands for the engine.
    pub commands: Vec<Command>,
    /// A status line: the text and whether it reports a problem.
    pub note: Option<(String, bool)>,
    /// Whether the component should take the focus.
    pub focus: bool,
    /// A yes/no question to ask before going on.
    pub confirm: Option<Confirm>,
    /// An action the app carries out next (one that crosses panes, such
    /// as the pager or moving the focus).
    pub then: Option<Action>,
    /// Whether the component (an overlay) asks to be closed.
    pub close: bool,
}

impl Outcome {
    /// Sends one command.
    pub fn command(c: Command) -> Outcome {
        Outcome {
            commands: vec![c],
            ..Outcome::default()
        }
    }

    /// Shows a line in the status bar.
    pub fn info(text: impl Into<String>) -> Outcome {
        Outcome {
            note: Some((text.into(), false)),
            ..Outcome::default()
        }
    }

    /// Reports a problem in the status bar.
    pub fn error(text: impl Into<String>) -> Outcome {
        Outcome {
            note: Some((text.into(), true)),
            ..Outcome::default()
        }
    }

    /// Asks the app to carry out `action` next.
    pub fn then(action: Action) -> Outcome {
        Outcome {
            then: Some(action),
            ..Outcome::default()
        }
    }

    /// Asks to be closed (an overlay).
    pub fn close() -> Outcome {
        Outcome {
            close: true,
            ..Outcome::default()
        }
    }

    /// Asks `confirm` before going on.
    pub fn ask(confirm: Confirm) -> Outcome {
        Outcome {
            confirm: Some(confirm),
            ..Outcome::default()
        }
    }
}

/// What copy and the pager take from a pane.
#[derive(Clone, Debug, PartialEq)]
pub enum Selection {
    /// This text, named in the status line ("task T1", "#12").
    Text {
        /// How the status line names it.
        name: String,
        /// The text copied or shown.
        text: String,
    },
    /// Nothing is selected: the status line says this instead.
    Nothing(String),
}

/// A mouse event inside a component's area.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mouse {
    /// A left click: `row` inside the border, and the screen position.
    Click {
        /// The row under the pointer, counted from the first inside the
        /// border.
        row: usize,
        /// The screen column.
        x: u16,
        /// The screen row.
        y: u16,
    },
    /// The wheel turned (`up` or down).
    Scroll {
        /// Whether it turned up.
        up: bool,
    },
}

/// A pane of the control room.
pub trait Component {
    /// What the component reads from the rest of the app (other panes,
    /// the theme, the task board) to handle input and draw.
    type Context<'a>;

    /// Handles an action that concerns this pane alone (open, back, a
    /// motion); the default outcome when it has nothing to do.
    fn act(&mut self, action: &Action, cx: &Self::Context<'_>) -> Outcome;

    /// Offers a key before the keymap: `None` when the component does not
    /// take it (the keymap then looks it up), else what it asks. Panes
    /// whose keys are all in the keymap keep the default.
    fn key(&mut self, key: &KeyEvent, k: &Key, keymap: &Keymap) -> Option<Outcome> {
        let _ = (key, k, keymap);
        None
    }

    /// Handles a mouse event inside the pane.
    fn mouse(&mut self, mouse: Mouse, cx: &Self::Context<'_>) -> Outcome;

    /// What copy and the pager (`verb`) take from the pane; `None` when it
    /// has no selection of its own (the app then takes the channel's).
    fn selection(&self, verb: &str, cx: &Self::Context<'_>) -> Option<Selection> {
        let _ = (verb, cx);
        None
    }

    /// The keymap section the pane's keys are in and the commands it
    /// offers, in order (the hint line shows their keys).
    fn commands(&self) -> (Section, &'static [&'static str]);

    /// Draws the pane into `area` (inside its border).
    fn draw(&mut self, area: Rect, buf: &mut Buffer, cx: &Self::Context<'_>, focused: bool);
}

/// Something done to whichever component a pane is, with that pane's
/// context (see [`crate::app::App::visit`]): the one place that knows
/// what each pane reads serves handling input and drawing alike.
pub trait Visit {
    /// What the visit gives back.
    type Out;

    /// Does it to `component`.
    fn visit<C: Component>(self, component: &mut C, cx: &C::Context<'_>) -> Self::Out;
}

/// Hands an action or a mouse event to a component.
pub enum Handle<'a> {
    /// An action (open, back, a motion).
    Act(&'a Action),
    /// A mouse event inside the pane.
    Mouse(Mouse),
}

impl Visit for Handle<'_> {
    type Out = Outcome;

    fn visit<C: Component>(self, component: &mut C, cx: &C::Context<'_>) -> Outcome {
        match self {
            Handle::Act(action) => component.act(action, cx),
            Handle::Mouse(mouse) => component.mouse(mouse, cx),
        }
    }
}

/// Asks a component what copy or the pager (the verb) takes.
pub struct Selected<'v>(pub &'v str);

impl Visit for Selected<'_> {
    type Out = Option<Selection>;

    fn visit<C: Component>(self, component: &mut C, cx: &C::Context<'_>) -> Option<Selection> {
        component.selection(self.0, cx)
    }
}

/// Draws a component into `area` (inside its border).
pub struct Draw<'b> {
    /// Where.
    pub area: Rect,
    /// Into what.
    pub buf: &'b mut Buffer,
    /// Whether the pane has the focus.
    pub focused: bool,
}

impl Visit for Draw<'_> {
    type Out = ();

    fn visit<C: Component>(self, component: &mut C, cx: &C::Context<'_>) {
        component.draw(self.area, self.buf, cx, self.focused);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::{FocusTarget, Motion, Pane};
    use crate::panes::agents::{Agents, AgentsContext};
    use crate::panes::channel::Channel;
    use crate::panes::tasks::{BoardContext, Tasks};
    use crate::theme::Theme;
    use crate::vocab::TaskSnapshot;

    #[test]
    fn open_on_an_agent_moves_the_focus_to_its_inbox() {
        let theme = Theme::default();
        let cx = AgentsContext {
            theme: &theme,
            spinner: 0,
        };
        let o = Agents::default().act(&Action::Open, &cx);
        assert_eq!(o.then, Some(Action::Focus(FocusTarget::Pane(Pane::Inbox))));
        assert!(o.commands.is_empty() && o.note.is_none());
    }

    #[test]
    fn open_on_an_empty_board_says_so_and_asks_nothing_of_the_engine() {
        let (theme, board, channel) = (
            Theme::default(),
            TaskSnapshot::default(),
            Channel::default(),
        );
        let cx = BoardContext::new(&board, &channel, &theme, chrono::Utc::now(), 0);
        let mut tasks = Tasks::default();
        let o = tasks.act(&Action::Open, &cx);
        assert_eq!(
            o.note,
            Some(("open: the board has no task selected".to_string(), true))
        );
        assert!(o.commands.is_empty() && tasks.detail.is_none());
        // Motions on an empty board change nothing and ask nothing.
        assert_eq!(
            tasks.act(&Action::Move(Motion::Down(3)), &cx),
            Outcome::default()
        );
    }

    #[test]
    fn the_board_offers_other_commands_once_a_task_is_open() {
        let mut tasks = Tasks::default();
        let (_, list) = tasks.commands();
        assert!(list.contains(&"open"));
        tasks.detail = Some(crate::panes::tasks::Detail {
            task: "T1".into(),
            scroll: 0,
            checkpoints: None,
        });
        let (_, detail) = tasks.commands();
        assert!(detail.contains(&"back") && !detail.contains(&"open"));
    }

    fn app() -> crate::app::App {
        crate::app::App::new(
            crate::config::Config::defaults(),
            crate::app::AppOptions {
                on_quit: crate::QuitAction::Shutdown,
                utc_offset: 0,
            },
        )
    }

    fn status(a: &crate::app::App) -> (String, bool) {
        let s = a.status.as_ref().expect("a status line");
        (s.text.clone(), s.error)
    }

    #[test]
    fn copy_and_pager_say_what_is_missing_in_the_focused_pane() {
        let mut a = app();
        a.focus = Pane::Tasks;
        assert!(a.act(Action::Copy).is_empty());
        assert_eq!(status(&a), ("no task selected".into(), true));
        a.focus = Pane::Inbox;
        assert!(a.act(Action::Copy).is_empty());
        assert_eq!(
            status(&a),
            ("copy: select a message first (j/k)".into(), true)
        );
        // Panes without a selection of their own take the channel's.
        a.focus = Pane::Documents;
        assert!(a.act(Action::Pager).is_empty());
        assert_eq!(
            status(&a),
            ("pager: select a message first (j/k)".into(), true)
        );
    }

    #[test]
    fn copy_from_the_agents_pane_takes_the_selected_channel_message() {
        use crate::app::Effect;
        let mut a = app();
        let entry = crate::vocab::ChannelEntry {
            id: 7,
            timestamp: chrono::Utc::now(),
            from: "coder".into(),
            message: "the build is green".into(),
            mentions: Vec::new(),
            reply_to: None,
        };
        let annotations = crate::protocols::annotate(&entry.message);
        a.channel.push(entry, annotations);
        a.channel.select(0);
        a.focus = Pane::Agents;
        assert_eq!(
            a.act(Action::Copy),
            vec![Effect::Copy("the build is green".into())]
        );
        assert_eq!(status(&a), ("copied #7 to the clipboard".into(), false));
        assert_eq!(
            a.act(Action::Pager),
            vec![Effect::Pager("the build is green".into())]
        );
    }
}
