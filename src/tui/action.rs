//! The one command grammar of the control room. Keys (through the keymap),
//! the command bar (`/stop coder`) and tests all produce the same
//! [`Action`]s from the same text, so everything reachable by a key is also
//! a command and the other way round.
//!
//! Grammar (one action per line, words separated by spaces):
//!
//! ```text
//! quit | quit! | detach
//! focus next|prev|agents|channel|inbox|documents|bar
//! up [n] | down [n] | page-up | page-down | top | bottom | scroll-up [n] | scroll-down [n]
//! open | back | help | expand | copy | pager | newest
//! stop [agent|@instance] | restart [agent] | resume
//! ack [agent] [id|all]
//! send @agent message…   | post message…
//! doc <file> | new <file> | delete [file] | edit | save
//! resolve mine|theirs|both
//! search [text] | search-next | search-prev
//! filter [from:NAME] [type:TYPE] [bead:ID] [words…] | filter off
//! task add <name…> [--after <task>…] [--for <agent>] [--in <workflow>]
//! task release [task] | task skip [task]
//! task done [task] [outcome…] | task fail [task] [error…]
//! task filter [from:NAME] [type:STATUS] [bead:ID] [words…] | task filter off
//! prompt [text]            (focus the command bar, pre-filled)
//! approve [#id] [always] | deny [#id] [always] [reason…]
//! rules | revoke @agent <rule>
//! ```
//!
//! `approve` and `deny` answer a tool approval request (the one on the card
//! without a number); `always` keeps the answer as a rule for the agent
//! (the call's exact command or file).
//!
//! In the command bar a line starting with `/` is an action, any other line
//! is posted to the channel as `user`; `//text` posts `/text`.
//!
//! A `[task]` left out means the task selected on the board; `task done`
//! and `task fail` without their text put the command back in the bar,
//! completed with the task's id, for the outcome or error to be typed.

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
    /// Remove one of an agent's "always" rules.
    Revoke {
        /// The agent.
        agent: String,
        /// The rule, as shown (`Bash(make)`).
        rule: String,
    },
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

/// The commands with their usage and what they do, for help and completion.
pub const COMMANDS: &[(&str, &str, &str)] = &[
    (
        "quit",
        "quit | quit!",
        "asks: stop the agents (y) or detach (d); quit! stops at once",
    ),
    ("detach", "detach", "leave, the instance keeps running"),
    (
        "home",
        "home",
        "back to the list of instances (awtui with no argument)",
    ),
    (
        "attention",
        "attention",
        "what waits for you in every instance (awtui with no argument)",
    ),
    ("focus", "focus next|prev|<pane>", "move the focus"),
    ("up", "up [n]", "select up"),
    ("down", "down [n]", "select down"),
    ("page-up", "page-up", "one page up"),
    ("page-down", "page-down", "one page down"),
    ("top", "top", "first item"),
    ("bottom", "bottom", "last item"),
    ("scroll-up", "scroll-up [n]", "scroll the view up"),
    ("scroll-down", "scroll-down [n]", "scroll the view down"),
    ("open", "open", "open the selection"),
    ("back", "back", "close, leave"),
    ("help", "help", "show the keys and commands"),
    ("expand", "expand", "fold or unfold CONTEXT blocks"),
    ("copy", "copy", "copy the selected message (OSC 52)"),
    ("pager", "pager", "show the selected message in $PAGER"),
    ("newest", "newest", "jump to the newest message"),
    (
        "stop",
        "stop [agent|@instance]",
        "stop an agent, or the whole instance",
    ),
    (
        "restart",
        "restart [agent]",
        "let a stopped agent work again",
    ),
    (
        "logs",
        "logs [agent]",
        "an agent's last turns' raw output and stderr, in $PAGER",
    ),
    (
        "diff",
        "diff [agent] [turn] | task <id>",
        "an agent's (or task's) work in its worktree: every turn, or one",
    ),
    (
        "merge",
        "merge [agent]",
        "merge an agent's branch into its base (asks first)",
    ),
    (
        "revert",
        "revert [agent] <turn>",
        "undo one turn of an agent with a new commit (asks first)",
    ),
    (
        "discard",
        "discard [agent]",
        "discard an agent's workspace (asks first)",
    ),
    ("resume", "resume", "resume after a pause"),
    ("ack", "ack [agent] [id|all]", "acknowledge an inbox"),
    ("send", "send @agent message", "post a message to an agent"),
    ("post", "post message", "post to the channel"),
    ("doc", "doc <file>", "show a document"),
    ("new", "new <file>", "create a document"),
    ("delete", "delete [file]", "delete a document"),
    ("edit", "edit", "edit the shown document"),
    ("save", "save", "save the editor"),
    (
        "resolve",
        "resolve mine|theirs|both",
        "resolve a document conflict",
    ),
    ("search", "search [text]", "search the channel"),
    ("search-next", "search-next", "next match"),
    ("search-prev", "search-prev", "previous match"),
    (
        "filter",
        "filter [from:NAME] [type:TYPE] [bead:ID] [text] | filter off",
        "filter the channel",
    ),
    (
        "task",
        "task add <name> [--after <task>…] [--for <agent>] [--in <workflow>] | task release|skip [task] | task done [task] [outcome] | task fail [task] [error] | task filter [from:NAME] [type:STATUS] [bead:ID] [text]|off",
        "change the task board (the selected task when none is named)",
    ),
    ("prompt", "prompt [text]", "type in the command bar"),
    (
        "approve",
        "approve [#id] [always]",
        "allow a tool call an agent asks about (the card's)",
    ),
    (
        "deny",
        "deny [#id] [always] [reason]",
        "deny a tool call an agent asks about; the model gets the reason",
    ),
    (
        "later",
        "later",
        "put the approval card away until a newer request",
    ),
    ("rules", "rules", "show the approval rules"),
    (
        "revoke",
        "revoke @agent <rule>",
        "remove an \"always\" approval rule",
    ),
    ("yes", "yes", "answer yes"),
    ("no", "no", "answer no"),
];

fn usage_of(command: &str) -> &'static str {
    COMMANDS
        .iter()
        .find(|(name, _, _)| *name == command)
        .map(|(_, usage, _)| *usage)
        .unwrap_or("")
}

fn usage(command: &str, message: impl Into<String>) -> ParseError {
    ParseError::Usage {
        command: command.to_string(),
        message: message.into(),
        usage: usage_of(command),
    }
}

fn count(command: &str, arg: Option<&str>) -> Result<usize, ParseError> {
    match arg {
        None => Ok(1),
        Some(a) => a
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=10_000).contains(n))
            .ok_or_else(|| usage(command, format!("'{a}' is not a number from 1 to 10000"))),
    }
}

fn agent_name(command: &str, arg: &str) -> Result<String, ParseError> {
    let name = arg.strip_prefix('@').unwrap_or(arg);
    if crate::vocab::mentions::is_valid_name(name) {
        Ok(name.to_string())
    } else {
        Err(usage(command, format!("'{arg}' is not an agent name")))
    }
}

fn message_id(command: &str, arg: &str) -> Result<u64, ParseError> {
    arg.strip_prefix('#')
        .unwrap_or(arg)
        .parse()
        .map_err(|_| usage(command, format!("'{arg}' is not a message id")))
}

/// Reads the words after `task`.
fn parse_task(args: &[&str]) -> Result<TaskAction, ParseError> {
    let err = |m: String| usage("task", m);
    let (sub, rest) = match args.split_first() {
        Some((s, r)) => (*s, r),
        None => return Err(err("add, release, done, fail, skip or filter?".into())),
    };
    // The task named first, and the words after it.
    let task_and_text = || -> (Option<String>, Option<String>) {
        let task = rest.first().map(|t| t.to_string());
        let text = (rest.len() > 1).then(|| rest[1..].join(" "));
        (task, text)
    };
    // The whole rest names the task (a name may have spaces).
    let one_task =
        || -> Result<Option<String>, ParseError> { Ok((!rest.is_empty()).then(|| rest.join(" "))) };
    match sub {
        "add" => {
            let mut name = Vec::new();
            let mut after = Vec::new();
            let mut assignee = None;
            let mut workflow = None;
            let mut in_after = false;
            let mut words = rest.iter();
            while let Some(w) = words.next() {
                match *w {
                    "--after" => in_after = true,
                    "--for" | "--in" => {
                        in_after = false;
                        let v = words
                            .next()
                            .filter(|v| !v.starts_with("--"))
                            .ok_or_else(|| err(format!("{w} needs a value")))?;
                        if *w == "--for" {
                            assignee = Some(agent_name("task", v)?);
                        } else {
                            workflow = Some(v.to_string());
                        }
                    }
                    f if f.starts_with("--") => {
                        return Err(err(format!("unknown option '{f}'")));
                    }
                    dep if in_after => {
                        after.extend(dep.split(',').filter(|d| !d.is_empty()).map(str::to_string))
                    }
                    word => name.push(word),
                }
            }
            if name.is_empty() {
                return Err(err("the new task needs a name".into()));
            }
            Ok(TaskAction::Add {
                name: name.join(" "),
                after,
                assignee,
                workflow,
            })
        }
        "release" => Ok(TaskAction::Release(one_task()?)),
        "skip" => Ok(TaskAction::Skip(one_task()?)),
        "done" => {
            let (task, outcome) = task_and_text();
            Ok(TaskAction::Done { task, outcome })
        }
        "fail" => {
            let (task, error) = task_and_text();
            Ok(TaskAction::Fail { task, error })
        }
        "filter" => Filter::parse(rest).map(TaskAction::Filter).map_err(err),
        other => Err(err(format!(
            "'{other}' is not add, release, done, fail, skip or filter"
        ))),
    }
}

impl Action {
    /// Reads one command (without the bar's leading `/`).
    pub fn parse(text: &str) -> Result<Action, ParseError> {
        // `prompt` keeps its text's trailing space (`prompt /new `).
        let untrimmed = text.trim_start();
        let text = text.trim();
        let (head, rest) = match text.split_once(char::is_whitespace) {
            Some((h, r)) => (h, r.trim()),
            None => (text, ""),
        };
        if head.is_empty() {
            return Err(ParseError::Empty);
        }
        let args: Vec<&str> = rest.split_whitespace().collect();
        let no_args = |a: Action| {
            if args.is_empty() {
                Ok(a)
            } else {
                Err(usage(head, "takes no arguments"))
            }
        };
        let at_most_one = |max: usize| {
            if args.len() > max {
                Err(usage(head, "too many arguments"))
            } else {
                Ok(())
            }
        };
        match head {
            "quit" | "q" => no_args(Action::Quit { force: false }),
            "quit!" | "q!" => no_args(Action::Quit { force: true }),
            "detach" => no_args(Action::Detach),
            "home" => no_args(Action::Home),
            "attention" => no_args(Action::Attention),
            "focus" => {
                at_most_one(1)?;
                let target = match args.first().copied() {
                    Some("next") => FocusTarget::Next,
                    Some("prev") => FocusTarget::Prev,
                    Some(name) => FocusTarget::Pane(
                        Pane::from_name(name)
                            .ok_or_else(|| usage(head, format!("no pane '{name}'")))?,
                    ),
                    None => return Err(usage(head, "which pane?")),
                };
                Ok(Action::Focus(target))
            }
            "up" | "down" | "scroll-up" | "scroll-down" => {
                at_most_one(1)?;
                let n = count(head, args.first().copied())?;
                Ok(Action::Move(match head {
                    "up" => Motion::Up(n),
                    "down" => Motion::Down(n),
                    "scroll-up" => Motion::ScrollUp(n),
                    _ => Motion::ScrollDown(n),
                }))
            }
            "page-up" => no_args(Action::Move(Motion::PageUp)),
            "page-down" => no_args(Action::Move(Motion::PageDown)),
            "top" => no_args(Action::Move(Motion::Top)),
            "bottom" => no_args(Action::Move(Motion::Bottom)),
            "open" => no_args(Action::Open),
            "back" => no_args(Action::Back),
            "help" => no_args(Action::Help),
            "expand" => no_args(Action::Expand),
            "copy" => no_args(Action::Copy),
            "pager" => no_args(Action::Pager),
            "newest" => no_args(Action::Newest),
            "resume" => no_args(Action::Resume),
            "edit" => no_args(Action::Edit),
            "save" => no_args(Action::Save),
            "search-next" => no_args(Action::SearchNext),
            "search-prev" => no_args(Action::SearchPrev),
            "yes" | "y" => no_args(Action::Yes),
            "no" | "n" => no_args(Action::No),
            "stop" => {
                at_most_one(1)?;
                match args.first() {
                    None => Ok(Action::Stop(None)),
                    // `@name` may be the instance: the app decides.
                    Some(a) if a.starts_with('@') => {
                        let name = &a[1..];
                        if name.is_empty() {
                            Err(usage(head, "'@' names nothing"))
                        } else {
                            Ok(Action::Stop(Some(a.to_string())))
                        }
                    }
                    Some(a) => Ok(Action::Stop(Some(agent_name(head, a)?))),
                }
            }
            "logs" => {
                at_most_one(1)?;
                args.first()
                    .map(|a| agent_name(head, a))
                    .transpose()
                    .map(Action::Logs)
            }
            "diff" | "merge" | "revert" | "discard" => {
                use crate::vocab::WorkspaceOp;
                if args.len() > 2 {
                    return Err(usage(head, "too many arguments"));
                }
                let mut agent = None;
                let mut turn = None;
                // `/diff task <id>`: a task's workspace.
                if head == "diff" && args.first() == Some(&"task") {
                    let id = args
                        .get(1)
                        .ok_or_else(|| usage(head, "which task? (/diff task <id>)"))?;
                    return Ok(Action::Diff {
                        target: Some(crate::vocab::DiffTarget::Task(id.to_string())),
                        turn: None,
                    });
                }
                for a in &args {
                    if a.bytes().all(|b| b.is_ascii_digit()) && turn.is_none() {
                        turn = Some(
                            a.parse::<u32>()
                                .map_err(|_| usage(head, format!("'{a}' is not a turn number")))?,
                        );
                    } else if agent.is_none() {
                        agent = Some(agent_name(head, a)?);
                    } else {
                        return Err(usage(head, format!("unexpected '{a}'")));
                    }
                }
                let op = match head {
                    "diff" => {
                        return Ok(Action::Diff {
                            target: agent.map(crate::vocab::DiffTarget::Agent),
                            turn,
                        });
                    }
                    "revert" => WorkspaceOp::Revert {
                        turn: turn
                            .ok_or_else(|| usage(head, "which turn? (e.g. /revert coder 2)"))?,
                    },
                    _ if turn.is_some() => {
                        return Err(usage(head, "takes no turn number"));
                    }
                    "merge" => WorkspaceOp::Merge,
                    _ => WorkspaceOp::Discard,
                };
                Ok(Action::Workspace { agent, op })
            }
            "restart" => {
                at_most_one(1)?;
                args.first()
                    .map(|a| agent_name(head, a))
                    .transpose()
                    .map(Action::Restart)
            }
            "ack" => {
                if args.len() > 2 {
                    return Err(usage(head, "too many arguments"));
                }
                let mut agent = None;
                let mut until = AckTarget::Selected;
                for a in &args {
                    if *a == "all" {
                        until = AckTarget::All;
                    } else if a.starts_with('#') || a.bytes().all(|b| b.is_ascii_digit()) {
                        until = AckTarget::Id(message_id(head, a)?);
                    } else if agent.is_none() {
                        agent = Some(agent_name(head, a)?);
                    } else {
                        return Err(usage(head, format!("unexpected '{a}'")));
                    }
                }
                // `/ack coder` means all of coder's inbox.
                if agent.is_some() && until == AckTarget::Selected {
                    until = AckTarget::All;
                }
                Ok(Action::Ack { agent, until })
            }
            "send" => {
                let (to, text) = match rest.split_once(char::is_whitespace) {
                    Some((to, text)) => (to, text.trim()),
                    None => (rest, ""),
                };
                if to.is_empty() {
                    return Err(usage(head, "to whom?"));
                }
                let to = agent_name(head, to)?;
                if text.is_empty() {
                    return Err(usage(head, "no message"));
                }
                Ok(Action::Send {
                    to,
                    text: text.to_string(),
                })
            }
            "post" => {
                if rest.is_empty() {
                    Err(usage(head, "no message"))
                } else {
                    Ok(Action::Post(rest.to_string()))
                }
            }
            "doc" | "new" => {
                if rest.is_empty() {
                    return Err(usage(head, "which file?"));
                }
                Ok(if head == "doc" {
                    Action::Doc(rest.to_string())
                } else {
                    Action::New(rest.to_string())
                })
            }
            "delete" => Ok(Action::Delete((!rest.is_empty()).then(|| rest.to_string()))),
            "resolve" => match args.as_slice() {
                ["mine"] => Ok(Action::Resolve(Resolution::Mine)),
                ["theirs"] => Ok(Action::Resolve(Resolution::Theirs)),
                ["both"] => Ok(Action::Resolve(Resolution::Both)),
                _ => Err(usage(head, "mine, theirs or both?")),
            },
            "search" => Ok(Action::Search((!rest.is_empty()).then(|| rest.to_string()))),
            "filter" => Filter::parse(&args)
                .map(Action::Filter)
                .map_err(|m| usage(head, m)),
            "task" => parse_task(&args).map(Action::Task),
            "prompt" => Ok(Action::Prompt(
                match untrimmed.split_once(char::is_whitespace) {
                    // Keep the text after `prompt ` exactly, trailing space included.
                    Some((_, r)) => r.to_string(),
                    None => String::new(),
                },
            )),
            "approve" | "deny" => {
                let mut words = rest.splitn(3, char::is_whitespace).peekable();
                let request = match words.peek() {
                    Some(w) if w.trim_start_matches('#').parse::<u64>().is_ok() => {
                        Some(message_id(head, words.next().unwrap_or_default())?)
                    }
                    _ => None,
                };
                let always = words
                    .peek()
                    .is_some_and(|w| matches!(*w, "always" | "--always"));
                if always {
                    words.next();
                }
                let reason: String = words.collect::<Vec<_>>().join(" ").trim().to_string();
                if head == "approve" && !reason.is_empty() {
                    return Err(usage(head, "takes no reason (deny does)"));
                }
                Ok(Action::Decide {
                    request,
                    allow: head == "approve",
                    always,
                    reason: (!reason.is_empty()).then_some(reason),
                })
            }
            "later" => no_args(Action::Later),
            "rules" => no_args(Action::Rules),
            "revoke" => match rest.split_once(char::is_whitespace) {
                Some((agent, rule)) if !rule.trim().is_empty() => {
                    let agent = agent_name(head, agent)?;
                    let rule =
                        crate::vocab::Rule::parse(rule).map_err(|e| usage(head, e.to_string()))?;
                    Ok(Action::Revoke {
                        agent,
                        rule: rule.to_string(),
                    })
                }
                _ => Err(usage(head, "which agent and rule?")),
            },
            other => Err(ParseError::Unknown(other.to_string())),
        }
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
        for (name, usage, _) in COMMANDS {
            let sample = match *name {
                "focus" => "focus next".to_string(),
                "send" => "send @a hi".to_string(),
                "post" => "post hi".to_string(),
                "doc" | "new" => format!("{name} x.md"),
                "resolve" => "resolve mine".to_string(),
                "task" => "task release".to_string(),
                "revert" => "revert 2".to_string(),
                "revoke" => "revoke @a Bash(make)".to_string(),
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
            Ok(Action::Revoke {
                agent: "a".into(),
                rule: "Bash(git status*)".into()
            })
        );
    }
}
