//! The one command grammar of the control room. Keys (through the keymap),
//! the command bar (`/stop coder`) and tests all produce the same
//! [`Action`]s from the same text, so everything reachable by a key is also
//! a command and the other way round.
//!
//! Each command is declared once, in [`COMMANDS`] (`commands.rs`): its
//! name, its forms, what it does, an example, and the function reading
//! its words into an [`Action`]. The parser, the command bar's completion
//! and hints, `?` and the command list of `docs/control-room.md` (kept
//! equal to the table by a test) all come from that table.
//!
//! In the command bar a line starting with `/` is an action, any other line
//! is posted to the channel as `user`; `//text` posts `/text`.

mod commands;
mod text;

pub use commands::{COMMANDS, CommandDef};
pub use text::{TextEdit, TextMotion, TextOp};

use std::fmt;

/// A pane of the control room.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pane {
    /// Agents and their status.
    Agents,
    /// The channel.
    Channel,
    /// The selected agent's (and the user's) unread mentions.
    Inbox,
    /// Documents: list, viewer, editor.
    Documents,
    /// The task board: tasks by status, a task's details.
    Tasks,
    /// The command bar.
    Bar,
}

impl Pane {
    /// Panes in Tab order.
    pub const ORDER: [Pane; 6] = [
        Pane::Agents,
        Pane::Channel,
        Pane::Inbox,
        Pane::Documents,
        Pane::Tasks,
        Pane::Bar,
    ];

    /// The name used in commands and the keymap.
    pub fn name(self) -> &'static str {
        match self {
            Pane::Agents => "agents",
            Pane::Channel => "channel",
            Pane::Inbox => "inbox",
            Pane::Documents => "documents",
            Pane::Tasks => "tasks",
            Pane::Bar => "bar",
        }
    }

    /// The pane with this name.
    pub fn from_name(name: &str) -> Option<Pane> {
        Pane::ORDER.into_iter().find(|p| p.name() == name)
    }
}

/// Where `focus` goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FocusTarget {
    /// The next pane in Tab order.
    Next,
    /// The previous pane in Tab order.
    Prev,
    /// A named pane.
    Pane(Pane),
}

/// A movement inside the focused pane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Motion {
    /// Select `n` items up.
    Up(usize),
    /// Select `n` items down.
    Down(usize),
    /// One page up.
    PageUp,
    /// One page down.
    PageDown,
    /// The first item (oldest message).
    Top,
    /// The last item (newest message).
    Bottom,
    /// Scroll the view `n` lines up without moving the selection.
    ScrollUp(usize),
    /// Scroll the view `n` lines down without moving the selection.
    ScrollDown(usize),
}

/// How far an `ack` goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AckTarget {
    /// The selected inbox item (or, from the Agents pane, everything).
    Selected,
    /// Everything unread.
    All,
    /// Up to and including this message id.
    Id(u64),
}

/// How a document conflict is resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// Keep the editor's text; their version is saved beside it.
    Mine,
    /// Load their version; the editor's text is saved beside it.
    Theirs,
    /// Merge both into the editor with conflict markers.
    Both,
}

/// What `step` does in the diff view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The next turn (from everything, the first).
    Next,
    /// The previous turn (from the first, everything).
    Prev,
    /// Every turn together, against the base.
    All,
    /// Read the shown turn again.
    Refresh,
    /// Revert the shown turn, after a question.
    Revert,
}

/// One filter term set for the channel; all given terms must match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only messages from this sender.
    pub from: Option<String>,
    /// Only messages of this Agent Mail type or AOP block type (any case).
    pub kind: Option<String>,
    /// Only Agent Mail messages about this bead.
    pub bead: Option<String>,
    /// Only messages containing this text (any case).
    pub text: Option<String>,
}

impl Filter {
    /// Whether the filter lets everything through.
    pub fn is_empty(&self) -> bool {
        *self == Filter::default()
    }

    /// Reads `from:NAME type:TYPE bead:ID words…`; `None` for no words or
    /// `off` (no filter). The channel and the task board read it alike. A
    /// term with nothing after its colon (`from:`) is an error naming the
    /// term, not a filter that silently matches nothing.
    pub fn parse(args: &[&str]) -> Result<Option<Filter>, String> {
        if args.is_empty() || args == ["off"] {
            return Ok(None);
        }
        let mut filter = Filter::default();
        let mut words = Vec::new();
        for a in args {
            let slot = if let Some(v) = a.strip_prefix("from:") {
                Some(("from", v.trim_start_matches('@'), &mut filter.from))
            } else if let Some(v) = a.strip_prefix("type:") {
                Some(("type", v, &mut filter.kind))
            } else if let Some(v) = a.strip_prefix("bead:") {
                Some(("bead", v, &mut filter.bead))
            } else {
                None
            };
            match slot {
                Some((term, "", _)) => {
                    return Err(format!("'{term}:' needs a value ({term}:NAME, no space)"));
                }
                Some((_, v, field)) => *field = Some(v.to_string()),
                None => words.push(*a),
            }
        }
        if !words.is_empty() {
            filter.text = Some(words.join(" "));
        }
        Ok(Some(filter))
    }
}

/// What the person does to the task board (`/task …`). A `None` task is
/// the one selected on the board; the app resolves names and id prefixes
/// against the board it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskAction {
    /// Add a task.
    Add {
        /// Its name.
        name: String,
        /// Tasks it waits for (ids or names).
        after: Vec<String>,
        /// The agent meant to do it.
        assignee: Option<String>,
        /// The workflow it joins (needed when there are several).
        workflow: Option<String>,
    },
    /// Give a held task back.
    Release(Option<String>),
    /// Mark a task completed; without an outcome the bar asks for it.
    Done {
        /// Which task.
        task: Option<String>,
        /// What came of it.
        outcome: Option<String>,
    },
    /// Mark a task failed; without an error the bar asks for it.
    Fail {
        /// Which task.
        task: Option<String>,
        /// What went wrong.
        error: Option<String>,
    },
    /// Decide a task will not be done.
    Skip(Option<String>),
    /// Filter the board (`None` clears the filter).
    Filter(Option<Filter>),
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(v) = &self.from {
            parts.push(format!("from:{v}"));
        }
        if let Some(v) = &self.kind {
            parts.push(format!("type:{v}"));
        }
        if let Some(v) = &self.bead {
            parts.push(format!("bead:{v}"));
        }
        if let Some(v) = &self.text {
            parts.push(v.clone());
        }
        f.write_str(&parts.join(" "))
    }
}

/// Everything the user can ask the control room to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Leave (asks first when agents are working, unless `force`).
    Quit {
        /// Skip the question.
        force: bool,
    },
    /// Leave without stopping the instance.
    Detach,
    /// Back to the list of instances (when opened from it; the instance
    /// keeps running).
    Home,
    /// The attention view of every instance (when opened from the list).
    Attention,
    /// Start a workflow file in the background (on the list of
    /// instances; it asks for the file when none is given).
    Start(Option<String>),
    /// Move the focus.
    Focus(FocusTarget),
    /// Move inside the focused pane.
    Move(Motion),
    /// Open the selection (document, message in the pager, fold).
    Open,
    /// Close an overlay, leave the editor or the bar.
    Back,
    /// Show or hide the key help.
    Help,
    /// Fold or unfold the selected message's CONTEXT blocks.
    Expand,
    /// Copy the selected message to the clipboard (OSC 52).
    Copy,
    /// Show the selected message in `$PAGER`.
    Pager,
    /// Jump to the newest message and follow again.
    Newest,
    /// Show what an agent did (its last turns' raw output and its stderr
    /// log) in the pager; the selected agent without a name.
    Logs(Option<String>),
    /// Open the diff view of an agent's or a task's worktree (the selected
    /// agent, or task on the board, without a name): step `turn`, or
    /// everything.
    Diff {
        /// Whose work.
        target: Option<crate::vocab::DiffTarget>,
        /// One step, or everything.
        turn: Option<u32>,
    },
    /// Move in the open diff view: another step, everything, read again,
    /// or revert the step shown (after a question).
    Step(Step),
    /// Merge, revert a step of, or discard an agent's workspace, after a
    /// question (the diff view's or the selected agent without a name).
    Workspace {
        /// Whose workspace.
        agent: Option<String>,
        /// What to do.
        op: crate::vocab::WorkspaceOp,
    },
    /// Stop an agent (the selected one without a name); `@instance` stops
    /// the whole instance.
    Stop(Option<String>),
    /// Let a stopped or failed agent work again.
    Restart(Option<String>),
    /// Open an agent's live view (the selected one without a name).
    Live(Option<String>),
    /// Cancel an agent's running turn (the live view's, else the selected
    /// one, without a name); in the live view with no turn running, close
    /// it.
    Interrupt(Option<String>),
    /// Resume after a loop-guard or budget pause.
    Resume,
    /// Acknowledge an inbox (the selected agent's without a name).
    Ack {
        /// Whose inbox.
        agent: Option<String>,
        /// How far.
        until: AckTarget,
    },
    /// Post `@to text` to the channel.
    Send {
        /// The addressee (without `@`).
        to: String,
        /// The message.
        text: String,
    },
    /// Post text to the channel as `user`.
    Post(String),
    /// Show a document.
    Doc(String),
    /// Create a document.
    New(String),
    /// Delete a document (the selected one without a name).
    Delete(Option<String>),
    /// Edit the shown document.
    Edit,
    /// Save the editor's text.
    Save,
    /// Move the editor's cursor or edit its text.
    Text(TextOp),
    /// Resolve a document conflict.
    Resolve(Resolution),
    /// Search the channel (asks for the text when none is given).
    Search(Option<String>),
    /// The next search match.
    SearchNext,
    /// The previous search match.
    SearchPrev,
    /// Filter the channel (`None` clears the filter).
    Filter(Option<Filter>),
    /// Change the task board or its view.
    Task(TaskAction),
    /// Focus the command bar with this text.
    Prompt(String),
    /// Answer yes to a question.
    Yes,
    /// Answer no to a question.
    No,
    /// Answer a tool approval request (the card's without a number).
    Decide {
        /// The request.
        request: Option<u64>,
        /// Allow or deny.
        allow: bool,
        /// Keep it as a rule for the agent.
        always: bool,
        /// Why (the model sees it on a deny).
        reason: Option<String>,
    },
    /// Put the approval card away until a newer request comes.
    Later,
    /// Show or hide the approval rules.
    Rules,
    /// Add an agent to the instance (kept for its next starts); without
    /// one, open the form that asks for it.
    AddAgent(Option<crate::vocab::agents::NewAgent>),
    /// Send an engine command as it is, for the palette's commands that
    /// need no selection and no question (`revoke`): adding one is a
    /// `CommandDef` whose `parse` builds the command.
    Engine(EngineCommand),
}

/// An engine [`Command`](crate::vocab::Command) an [`Action`] carries.
/// Actions compare whole (`Eq`); a command's fields hold no floats, so its
/// equality is one.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineCommand(pub crate::vocab::Command);

impl Eq for EngineCommand {}

impl From<crate::vocab::Command> for Action {
    fn from(command: crate::vocab::Command) -> Self {
        Action::Engine(EngineCommand(command))
    }
}
/// Why a command could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Nothing was given.
    #[error("empty command")]
    Empty,
    /// The first word names no command.
    #[error("unknown command '{0}' (see ? for the list)")]
    Unknown(String),
    /// The command's arguments are wrong.
    #[error("{command}: {message} (usage: {usage})")]
    Usage {
        /// The command.
        command: String,
        /// What is wrong.
        message: String,
        /// The expected form.
        usage: &'static str,
    },
}
impl Action {
    /// Reads one command (without the bar's leading `/`).
    pub fn parse(text: &str) -> Result<Action, ParseError> {
        commands::parse(text)
    }

    /// Reads a command-bar line: `/command …` is an action, anything else
    /// is posted to the channel. `None` for a blank line.
    pub fn from_bar(line: &str) -> Option<Result<Action, ParseError>> {
        if line.trim().is_empty() {
            return None;
        }
        if let Some(rest) = line.strip_prefix("//") {
            return Some(Ok(Action::Post(format!("/{rest}"))));
        }
        match line.strip_prefix('/') {
            Some(cmd) => Some(Action::parse(cmd)),
            None => Some(Ok(Action::Post(line.to_string()))),
        }
    }

    /// Reads a command line (the bar opened with `:`): the text is a
    /// command with or without its `/`, never a message to post (`//x`
    /// is no command either). `None` for a blank line.
    pub fn from_command_line(line: &str) -> Option<Result<Action, ParseError>> {
        let line = line.trim();
        if line.is_empty() {
            return None;
        }
        Some(Action::parse(line.strip_prefix('/').unwrap_or(line)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_documented_form() {
        let ok = |s: &str| Action::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(ok("quit"), Action::Quit { force: false });
        assert_eq!(ok("quit!"), Action::Quit { force: true });
        assert_eq!(ok("focus next"), Action::Focus(FocusTarget::Next));
        assert_eq!(
            ok("focus documents"),
            Action::Focus(FocusTarget::Pane(Pane::Documents))
        );
        assert_eq!(ok("down 5"), Action::Move(Motion::Down(5)));
        assert_eq!(ok("up"), Action::Move(Motion::Up(1)));
        assert_eq!(ok("stop"), Action::Stop(None));
        assert_eq!(ok("stop coder"), Action::Stop(Some("coder".into())));
        assert_eq!(ok("stop @demo"), Action::Stop(Some("@demo".into())));
        assert_eq!(ok("restart @coder"), Action::Restart(Some("coder".into())));
        assert_eq!(
            ok("ack"),
            Action::Ack {
                agent: None,
                until: AckTarget::Selected
            }
        );
        assert_eq!(
            ok("ack coder"),
            Action::Ack {
                agent: Some("coder".into()),
                until: AckTarget::All
            }
        );
        assert_eq!(
            ok("ack coder #12"),
            Action::Ack {
                agent: Some("coder".into()),
                until: AckTarget::Id(12)
            }
        );
        assert_eq!(
            ok("ack all"),
            Action::Ack {
                agent: None,
                until: AckTarget::All
            }
        );
        assert_eq!(
            ok("send @coder fix  line 42"),
            Action::Send {
                to: "coder".into(),
                text: "fix  line 42".into()
            }
        );
        assert_eq!(ok("doc notes.md"), Action::Doc("notes.md".into()));
        assert_eq!(ok("new a/b.md"), Action::New("a/b.md".into()));
        assert_eq!(ok("delete"), Action::Delete(None));
        assert_eq!(ok("resolve both"), Action::Resolve(Resolution::Both));
        assert_eq!(ok("filter off"), Action::Filter(None));
        assert_eq!(
            ok("filter from:@coder type:progress bead:ol-3 hello world"),
            Action::Filter(Some(Filter {
                from: Some("coder".into()),
                kind: Some("progress".into()),
                bead: Some("ol-3".into()),
                text: Some("hello world".into()),
            }))
        );
        assert_eq!(ok("prompt /send @"), Action::Prompt("/send @".into()));
        assert_eq!(ok("prompt /new "), Action::Prompt("/new ".into()));
        assert_eq!(
            ok("task add write docs --after parser,lexer tests --for @coder --in wf_1"),
            Action::Task(TaskAction::Add {
                name: "write docs".into(),
                after: vec!["parser".into(), "lexer".into(), "tests".into()],
                assignee: Some("coder".into()),
                workflow: Some("wf_1".into()),
            })
        );
        assert_eq!(ok("task release"), Action::Task(TaskAction::Release(None)));
        assert_eq!(
            ok("task skip tk_12"),
            Action::Task(TaskAction::Skip(Some("tk_12".into())))
        );
        assert_eq!(
            ok("task done"),
            Action::Task(TaskAction::Done {
                task: None,
                outcome: None
            })
        );
        assert_eq!(
            ok("task fail parser  it  broke"),
            Action::Task(TaskAction::Fail {
                task: Some("parser".into()),
                error: Some("it broke".into())
            })
        );
        assert_eq!(
            ok("task filter bead:ol-3 type:in_progress"),
            Action::Task(TaskAction::Filter(Some(Filter {
                kind: Some("in_progress".into()),
                bead: Some("ol-3".into()),
                ..Filter::default()
            })))
        );
        assert_eq!(
            ok("task filter off"),
            Action::Task(TaskAction::Filter(None))
        );
        assert_eq!(ok("search needle"), Action::Search(Some("needle".into())));
    }

    #[test]
    fn bad_commands_are_errors_not_panics() {
        for bad in [
            "",
            "frobnicate",
            "focus",
            "focus nowhere",
            "down zero",
            "down 0",
            "down 18446744073709551615",
            "send",
            "send @coder",
            "send @9x hi",
            "ack coder qa x",
            "resolve",
            "stop @",
            "stop a b",
            "quit now",
            "doc",
            "task",
            "task add",
            "task add --for",
            "task add x --for 9x",
            "task add x --soon",
            "task explode",
        ] {
            assert!(Action::parse(bad).is_err(), "{bad:?} should fail");
        }
        let e = Action::parse("send @coder").unwrap_err().to_string();
        assert!(e.contains("usage: send @agent message"), "{e}");
    }

    #[test]
    fn bar_lines_post_or_command() {
        assert_eq!(Action::from_bar("   "), None);
        assert_eq!(
            Action::from_bar("@coder hi"),
            Some(Ok(Action::Post("@coder hi".into())))
        );
        assert_eq!(Action::from_bar("/resume"), Some(Ok(Action::Resume)));
        assert_eq!(
            Action::from_bar("//etc/passwd is a path"),
            Some(Ok(Action::Post("/etc/passwd is a path".into())))
        );
        assert!(matches!(Action::from_bar("/nope"), Some(Err(_))));
    }

    #[test]
    fn workspace_commands_take_an_agent_and_a_turn() {
        use crate::vocab::WorkspaceOp;
        let ok = |s: &str| Action::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        let err = |s: &str| Action::parse(s).unwrap_err().to_string();
        use crate::vocab::DiffTarget;
        assert_eq!(
            ok("diff coder 2"),
            Action::Diff {
                target: Some(DiffTarget::Agent("coder".into())),
                turn: Some(2)
            }
        );
        assert_eq!(
            ok("diff"),
            Action::Diff {
                target: None,
                turn: None
            }
        );
        assert_eq!(
            ok("diff task ol-3"),
            Action::Diff {
                target: Some(DiffTarget::Task("ol-3".into())),
                turn: None
            }
        );
        assert_eq!(
            ok("revert @coder 3"),
            Action::Workspace {
                agent: Some("coder".into()),
                op: WorkspaceOp::Revert { turn: 3 }
            }
        );
        assert_eq!(
            ok("merge"),
            Action::Workspace {
                agent: None,
                op: WorkspaceOp::Merge
            }
        );
        assert!(err("revert coder").contains("which turn"));
        assert!(err("merge coder 2").contains("takes no turn"));
    }

    #[test]
    fn every_listed_command_parses_in_some_form() {
        for CommandDef { name, usage, .. } in COMMANDS {
            let sample = match *name {
                "focus" => "focus next".to_string(),
                "send" => "send @a hi".to_string(),
                "post" => "post hi".to_string(),
                "doc" | "new" => format!("{name} x.md"),
                "resolve" => "resolve mine".to_string(),
                "task" => "task release".to_string(),
                "agent" => "agent add".to_string(),
                "revert" => "revert 2".to_string(),
                "revoke" => "revoke @a Bash(make)".to_string(),
                "step" => "step next".to_string(),
                "text" => "text undo".to_string(),
                _ => name.to_string(),
            };
            assert!(Action::parse(&sample).is_ok(), "{sample} ({usage})");
        }
    }

    #[test]
    fn approve_and_deny_take_a_number_always_and_a_reason() {
        let decide = |request, allow, always, reason: Option<&str>| Action::Decide {
            request,
            allow,
            always,
            reason: reason.map(str::to_string),
        };
        assert_eq!(
            Action::parse("approve"),
            Ok(decide(None, true, false, None))
        );
        assert_eq!(
            Action::parse("approve #3 always"),
            Ok(decide(Some(3), true, true, None))
        );
        assert_eq!(
            Action::parse("deny 3 use  the helper"),
            Ok(decide(Some(3), false, false, Some("use  the helper")))
        );
        assert_eq!(
            Action::parse("deny always not here"),
            Ok(decide(None, false, true, Some("not here")))
        );
        assert!(Action::parse("approve 3 because").is_err());
        assert!(Action::parse("revoke @a Bash(x").is_err());
        assert_eq!(
            Action::parse("revoke @a Bash(git status*)"),
            Ok(crate::vocab::Command::RevokeApproval {
                agent: "a".into(),
                rule: "Bash(git status*)".into()
            }
            .into())
        );
    }
}
