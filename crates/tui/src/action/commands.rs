//! Every command of the grammar, declared once: its name (and other words
//! for it), its forms, what it does, an example, and the function reading
//! its words into an [`Action`]. The parser looks commands up here; `?`,
//! the command bar's completion and hints, and the command list of the
//! docs are made from the same table.

use super::{
    AckTarget, Action, Filter, FocusTarget, Motion, Pane, ParseError, Resolution, Step, TaskAction,
    TextOp,
};
use crate::vocab::{DiffTarget, WorkspaceOp};

/// One command of the grammar.
pub struct CommandDef {
    /// The word that starts it (`stop`).
    pub name: &'static str,
    /// Other words that start it (`q` for `quit`).
    pub aliases: &'static [&'static str],
    /// Its forms, separated by ` | ` (`?` shows one line per form, and a
    /// usage error quotes them).
    pub usage: &'static str,
    /// What it does, in one line.
    pub help: &'static str,
    /// A line that parses (`?`'s test and the docs use it).
    pub example: &'static str,
    /// Reads the words after the name.
    parse: fn(&Args<'_>) -> Result<Action, ParseError>,
}

impl CommandDef {
    /// The command that starts with `word` (its name or another word for
    /// it).
    pub fn find(word: &str) -> Option<&'static CommandDef> {
        COMMANDS
            .iter()
            .find(|c| c.name == word || c.aliases.contains(&word))
    }
}

/// The words of one command line, for the command's parser.
struct Args<'a> {
    /// The command read.
    def: &'static CommandDef,
    /// The word it was started with (`q!`).
    head: &'a str,
    /// Everything after that word, trimmed.
    rest: &'a str,
    /// Everything after that word, trailing spaces kept (`prompt`).
    raw: &'a str,
    /// The words of `rest`.
    words: Vec<&'a str>,
}

impl Args<'_> {
    /// A usage error of this command.
    fn usage(&self, message: impl Into<String>) -> ParseError {
        ParseError::Usage {
            command: self.def.name.to_string(),
            message: message.into(),
            usage: self.def.usage,
        }
    }

    /// `action`, when no words follow the command.
    fn none(&self, action: Action) -> Result<Action, ParseError> {
        if self.words.is_empty() {
            Ok(action)
        } else {
            Err(self.usage("takes no arguments"))
        }
    }

    /// Refuses more than `max` words.
    fn at_most(&self, max: usize) -> Result<(), ParseError> {
        if self.words.len() > max {
            Err(self.usage("too many arguments"))
        } else {
            Ok(())
        }
    }

    /// The optional count (`down 5`): 1 without one.
    fn count(&self) -> Result<usize, ParseError> {
        self.at_most(1)?;
        match self.words.first() {
            None => Ok(1),
            Some(a) => a
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=10_000).contains(n))
                .ok_or_else(|| self.usage(format!("'{a}' is not a number from 1 to 10000"))),
        }
    }

    /// An agent's name (`@` allowed).
    fn agent(&self, word: &str) -> Result<String, ParseError> {
        let name = word.strip_prefix('@').unwrap_or(word);
        if crate::vocab::mentions::is_valid_name(name) {
            Ok(name.to_string())
        } else {
            Err(self.usage(format!("'{word}' is not an agent name")))
        }
    }

    /// The optional agent named by the only word.
    fn optional_agent(&self) -> Result<Option<String>, ParseError> {
        self.at_most(1)?;
        self.words.first().map(|a| self.agent(a)).transpose()
    }

    /// A message id (`#12` or `12`).
    fn message_id(&self, word: &str) -> Result<u64, ParseError> {
        word.strip_prefix('#')
            .unwrap_or(word)
            .parse()
            .map_err(|_| self.usage(format!("'{word}' is not a message id")))
    }

    /// The rest of the line, or `None` when empty.
    fn text(&self) -> Option<String> {
        (!self.rest.is_empty()).then(|| self.rest.to_string())
    }

    /// The rest of the line, which must not be empty.
    fn required(&self, missing: &str) -> Result<String, ParseError> {
        self.text().ok_or_else(|| self.usage(missing))
    }
}

/// Reads one command (without the bar's leading `/`).
pub(super) fn parse(text: &str) -> Result<Action, ParseError> {
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
    let def = CommandDef::find(head).ok_or_else(|| ParseError::Unknown(head.to_string()))?;
    let raw = untrimmed
        .split_once(char::is_whitespace)
        .map_or("", |(_, r)| r);
    let args = Args {
        def,
        head,
        rest,
        raw,
        words: rest.split_whitespace().collect(),
    };
    (def.parse)(&args)
}

/// A command without arguments.
macro_rules! plain {
    ($name:literal, $help:literal, $action:expr) => {
        CommandDef {
            name: $name,
            aliases: &[],
            usage: $name,
            help: $help,
            example: $name,
            parse: |a| a.none($action),
        }
    };
}

/// Every command, in the order `?` lists them.
pub const COMMANDS: &[CommandDef] = &[
    CommandDef {
        name: "quit",
        aliases: &["q", "quit!", "q!"],
        usage: "quit | quit!",
        help: "asks if agents work: stop (y) or detach (d); quit! stops at once",
        example: "quit!",
        parse: |a| {
            a.none(Action::Quit {
                force: a.head.ends_with('!'),
            })
        },
    },
    plain!(
        "detach",
        "leave, the instance keeps running",
        Action::Detach
    ),
    plain!(
        "home",
        "back to the list of instances (awtui with no argument)",
        Action::Home
    ),
    plain!(
        "attention",
        "what waits for you in every instance (awtui with no argument)",
        Action::Attention
    ),
    CommandDef {
        name: "start",
        aliases: &[],
        usage: "start [file]",
        help: "start a workflow file in the background (on the list of instances)",
        example: "start review.yaml",
        parse: |a| Ok(Action::Start(a.text())),
    },
    CommandDef {
        name: "focus",
        aliases: &[],
        usage: "focus next|prev|<pane>",
        help: "move the focus",
        example: "focus documents",
        parse: parse_focus,
    },
    CommandDef {
        name: "up",
        aliases: &[],
        usage: "up [n]",
        help: "select up",
        example: "up 3",
        parse: |a| Ok(Action::Move(Motion::Up(a.count()?))),
    },
    CommandDef {
        name: "down",
        aliases: &[],
        usage: "down [n]",
        help: "select down",
        example: "down 5",
        parse: |a| Ok(Action::Move(Motion::Down(a.count()?))),
    },
    plain!("page-up", "one page up", Action::Move(Motion::PageUp)),
    plain!("page-down", "one page down", Action::Move(Motion::PageDown)),
    plain!("top", "first item", Action::Move(Motion::Top)),
    plain!("bottom", "last item", Action::Move(Motion::Bottom)),
    CommandDef {
        name: "scroll-up",
        aliases: &[],
        usage: "scroll-up [n]",
        help: "scroll the view up",
        example: "scroll-up 10",
        parse: |a| Ok(Action::Move(Motion::ScrollUp(a.count()?))),
    },
    CommandDef {
        name: "scroll-down",
        aliases: &[],
        usage: "scroll-down [n]",
        help: "scroll the view down",
        example: "scroll-down 10",
        parse: |a| Ok(Action::Move(Motion::ScrollDown(a.count()?))),
    },
    plain!("open", "open the selection", Action::Open),
    plain!("back", "close, leave", Action::Back),
    plain!("help", "show the keys and commands", Action::Help),
    plain!("expand", "fold or unfold CONTEXT blocks", Action::Expand),
    plain!("copy", "copy the selected message (OSC 52)", Action::Copy),
    plain!(
        "pager",
        "show the selected message in $PAGER",
        Action::Pager
    ),
    plain!("newest", "jump to the newest message", Action::Newest),
    CommandDef {
        name: "stop",
        aliases: &[],
        usage: "stop [agent|@instance]",
        help: "stop an agent (asks first), or the whole instance",
        example: "stop @coder",
        parse: parse_stop,
    },
    CommandDef {
        name: "restart",
        aliases: &[],
        usage: "restart [agent]",
        help: "let a stopped agent work again",
        example: "restart coder",
        parse: |a| a.optional_agent().map(Action::Restart),
    },
    CommandDef {
        name: "live",
        aliases: &[],
        usage: "live [agent]",
        help: "an agent's live view: its text, tool calls, plan and usage; type to it",
        example: "live coder",
        parse: |a| a.optional_agent().map(Action::Live),
    },
    CommandDef {
        name: "interrupt",
        aliases: &[],
        usage: "interrupt [agent]",
        help: "cancel an agent's running turn (in the live view with none running: close it)",
        example: "interrupt coder",
        parse: |a| a.optional_agent().map(Action::Interrupt),
    },
    CommandDef {
        name: "logs",
        aliases: &[],
        usage: "logs [agent]",
        help: "an agent's last turns' raw output and stderr, in $PAGER",
        example: "logs coder",
        parse: |a| a.optional_agent().map(Action::Logs),
    },
    CommandDef {
        name: "diff",
        aliases: &[],
        usage: "diff [agent] [turn] | diff task <id>",
        help: "an agent's (or task's) work in its worktree: every turn, or one",
        example: "diff coder 2",
        parse: parse_workspace,
    },
    CommandDef {
        name: "step",
        aliases: &[],
        usage: "step next|prev|all|refresh|revert",
        help: "in the diff view: another turn, all turns, read again, or revert the turn shown",
        example: "step next",
        parse: parse_step,
    },
    CommandDef {
        name: "merge",
        aliases: &[],
        usage: "merge [agent]",
        help: "merge an agent's branch into its base (asks first)",
        example: "merge coder",
        parse: parse_workspace,
    },
    CommandDef {
        name: "revert",
        aliases: &[],
        usage: "revert [agent] <turn>",
        help: "undo one turn of an agent with a new commit (asks first)",
        example: "revert coder 2",
        parse: parse_workspace,
    },
    CommandDef {
        name: "discard",
        aliases: &[],
        usage: "discard [agent]",
        help: "discard an agent's workspace (asks first)",
        example: "discard coder",
        parse: parse_workspace,
    },
    plain!("resume", "resume after a pause", Action::Resume),
    CommandDef {
        name: "ack",
        aliases: &[],
        usage: "ack [agent] [id|all]",
        help: "acknowledge an inbox",
        example: "ack coder #12",
        parse: parse_ack,
    },
    CommandDef {
        name: "send",
        aliases: &[],
        usage: "send @agent message",
        help: "post a message to an agent",
        example: "send @coder fix line 42",
        parse: parse_send,
    },
    CommandDef {
        name: "post",
        aliases: &[],
        usage: "post message",
        help: "post to the channel",
        example: "post hello all",
        parse: |a| a.required("no message").map(Action::Post),
    },
    CommandDef {
        name: "doc",
        aliases: &[],
        usage: "doc <file>",
        help: "show a document",
        example: "doc notes.md",
        parse: |a| a.required("which file?").map(Action::Doc),
    },
    CommandDef {
        name: "new",
        aliases: &[],
        usage: "new <file>",
        help: "create a document",
        example: "new drafts/plan.md",
        parse: |a| a.required("which file?").map(Action::New),
    },
    CommandDef {
        name: "delete",
        aliases: &[],
        usage: "delete [file]",
        help: "delete a document",
        example: "delete notes.md",
        parse: |a| Ok(Action::Delete(a.text())),
    },
    plain!("edit", "edit the shown document", Action::Edit),
    plain!("save", "save the editor", Action::Save),
    CommandDef {
        name: "text",
        aliases: &[],
        usage: "text <move> | text select <move> | text <edit>",
        help: "in the editor: move the cursor (select: extending the selection) or edit",
        example: "text select word-forward",
        parse: |a| {
            TextOp::parse(&a.words)
                .map(Action::Text)
                .map_err(|m| a.usage(m))
        },
    },
    CommandDef {
        name: "resolve",
        aliases: &[],
        usage: "resolve mine|theirs|both",
        help: "resolve a document conflict",
        example: "resolve both",
        parse: |a| match a.words.as_slice() {
            ["mine"] => Ok(Action::Resolve(Resolution::Mine)),
            ["theirs"] => Ok(Action::Resolve(Resolution::Theirs)),
            ["both"] => Ok(Action::Resolve(Resolution::Both)),
            _ => Err(a.usage("mine, theirs or both?")),
        },
    },
    CommandDef {
        name: "search",
        aliases: &[],
        usage: "search [text]",
        help: "search the channel",
        example: "search needle",
        parse: |a| Ok(Action::Search(a.text())),
    },
    plain!("search-next", "next match", Action::SearchNext),
    plain!("search-prev", "previous match", Action::SearchPrev),
    CommandDef {
        name: "filter",
        aliases: &[],
        usage: "filter [from:NAME] [type:TYPE] [bead:ID] [text] | filter off",
        help: "filter the channel",
        example: "filter from:coder type:progress",
        parse: |a| {
            Filter::parse(&a.words)
                .map(Action::Filter)
                .map_err(|m| a.usage(m))
        },
    },
    CommandDef {
        name: "task",
        aliases: &[],
        usage: "task add <name> [--after <task>…] [--for <agent>] [--in <workflow>] | task release|skip [task] | task done [task] [outcome] | task fail [task] [error] | task filter [from:NAME] [type:STATUS] [bead:ID] [text]|off",
        help: "change the task board (the selected task when none is named)",
        example: "task add write docs --after parser --for coder",
        parse: |a| parse_task(a).map(Action::Task),
    },
    CommandDef {
        name: "prompt",
        aliases: &[],
        usage: "prompt [text]",
        help: "type in the command bar",
        example: "prompt /send @",
        // Keeps the text after `prompt ` exactly, trailing space included.
        parse: |a| Ok(Action::Prompt(a.raw.to_string())),
    },
    CommandDef {
        name: "approve",
        aliases: &[],
        usage: "approve [#id] [always]",
        help: "allow a tool call an agent asks about (the card's)",
        example: "approve #3 always",
        parse: parse_decide,
    },
    CommandDef {
        name: "deny",
        aliases: &[],
        usage: "deny [#id] [always] [reason]",
        help: "deny a tool call an agent asks about; the model gets the reason",
        example: "deny 3 use the helper",
        parse: parse_decide,
    },
    plain!(
        "later",
        "put the approval card away until a newer request",
        Action::Later
    ),
    plain!("rules", "show the approval rules", Action::Rules),
    CommandDef {
        name: "agent",
        aliases: &[],
        usage: "agent add [<name> <backend> [shared|worktree]]",
        help: "add an agent to the instance, kept when it is reopened (alone: the form)",
        example: "agent add helper claude worktree",
        parse: parse_agent,
    },
    CommandDef {
        name: "revoke",
        aliases: &[],
        usage: "revoke @agent <rule>",
        help: "remove an \"always\" approval rule",
        example: "revoke @coder Bash(make)",
        parse: parse_revoke,
    },
    CommandDef {
        name: "yes",
        aliases: &["y"],
        usage: "yes",
        help: "answer yes",
        example: "yes",
        parse: |a| a.none(Action::Yes),
    },
    CommandDef {
        name: "no",
        aliases: &["n"],
        usage: "no",
        help: "answer no",
        example: "no",
        parse: |a| a.none(Action::No),
    },
];

fn parse_focus(a: &Args<'_>) -> Result<Action, ParseError> {
    a.at_most(1)?;
    let target = match a.words.first().copied() {
        Some("next") => FocusTarget::Next,
        Some("prev") => FocusTarget::Prev,
        Some(name) => FocusTarget::Pane(
            Pane::from_name(name).ok_or_else(|| a.usage(format!("no pane '{name}'")))?,
        ),
        None => return Err(a.usage("which pane?")),
    };
    Ok(Action::Focus(target))
}

fn parse_stop(a: &Args<'_>) -> Result<Action, ParseError> {
    a.at_most(1)?;
    match a.words.first() {
        None => Ok(Action::Stop(None)),
        // `@name` may be the instance: the app decides.
        Some(w) if w.starts_with('@') => {
            if w.len() == 1 {
                Err(a.usage("'@' names nothing"))
            } else {
                Ok(Action::Stop(Some(w.to_string())))
            }
        }
        Some(w) => Ok(Action::Stop(Some(a.agent(w)?))),
    }
}

/// `diff`, `merge`, `revert` and `discard`: an agent and a turn, each
/// optional (`revert` needs the turn; `diff task <id>` names a task).
fn parse_workspace(a: &Args<'_>) -> Result<Action, ParseError> {
    let name = a.def.name;
    a.at_most(2)?;
    // `/diff task <id>`: a task's workspace.
    if name == "diff" && a.words.first() == Some(&"task") {
        let id = a
            .words
            .get(1)
            .ok_or_else(|| a.usage("which task? (/diff task <id>)"))?;
        return Ok(Action::Diff {
            target: Some(DiffTarget::Task(id.to_string())),
            turn: None,
        });
    }
    let mut agent = None;
    let mut turn = None;
    for w in &a.words {
        if w.bytes().all(|b| b.is_ascii_digit()) && turn.is_none() {
            turn = Some(
                w.parse::<u32>()
                    .map_err(|_| a.usage(format!("'{w}' is not a turn number")))?,
            );
        } else if agent.is_none() {
            agent = Some(a.agent(w)?);
        } else {
            return Err(a.usage(format!("unexpected '{w}'")));
        }
    }
    let op = match name {
        "diff" => {
            return Ok(Action::Diff {
                target: agent.map(DiffTarget::Agent),
                turn,
            });
        }
        "revert" => WorkspaceOp::Revert {
            turn: turn.ok_or_else(|| a.usage("which turn? (e.g. /revert coder 2)"))?,
        },
        _ if turn.is_some() => return Err(a.usage("takes no turn number")),
        "merge" => WorkspaceOp::Merge,
        _ => WorkspaceOp::Discard,
    };
    Ok(Action::Workspace { agent, op })
}

fn parse_step(a: &Args<'_>) -> Result<Action, ParseError> {
    let step = match a.words.as_slice() {
        ["next"] => Step::Next,
        ["prev"] => Step::Prev,
        ["all"] => Step::All,
        ["refresh"] => Step::Refresh,
        ["revert"] => Step::Revert,
        _ => return Err(a.usage("next, prev, all, refresh or revert?")),
    };
    Ok(Action::Step(step))
}

fn parse_ack(a: &Args<'_>) -> Result<Action, ParseError> {
    a.at_most(2)?;
    let mut agent = None;
    let mut until = AckTarget::Selected;
    for w in &a.words {
        if *w == "all" {
            until = AckTarget::All;
        } else if w.starts_with('#') || w.bytes().all(|b| b.is_ascii_digit()) {
            until = AckTarget::Id(a.message_id(w)?);
        } else if agent.is_none() {
            agent = Some(a.agent(w)?);
        } else {
            return Err(a.usage(format!("unexpected '{w}'")));
        }
    }
    // `/ack coder` means all of coder's inbox.
    if agent.is_some() && until == AckTarget::Selected {
        until = AckTarget::All;
    }
    Ok(Action::Ack { agent, until })
}

fn parse_send(a: &Args<'_>) -> Result<Action, ParseError> {
    let (to, text) = match a.rest.split_once(char::is_whitespace) {
        Some((to, text)) => (to, text.trim()),
        None => (a.rest, ""),
    };
    if to.is_empty() {
        return Err(a.usage("to whom?"));
    }
    let to = a.agent(to)?;
    if text.is_empty() {
        return Err(a.usage("no message"));
    }
    Ok(Action::Send {
        to,
        text: text.to_string(),
    })
}

/// `approve` and `deny`: an optional request number (without one, the
/// request on the card), `always` (keep the answer as a rule for the
/// agent: the call's exact command or file), and (deny only) a reason the
/// model sees.
/// `agent add [<name> <backend> [shared|worktree]]`: the name is checked
/// by the engine (as a workflow file's), the workspace word here.
fn parse_agent(a: &Args<'_>) -> Result<Action, ParseError> {
    use crate::vocab::agents::{NewAgent, WorkspaceMode};
    match a.words.as_slice() {
        ["add"] => Ok(Action::AddAgent(None)),
        ["add", name, backend] | ["add", name, backend, _] => {
            let workspace = match a.words.get(3) {
                None => None,
                Some(w) => Some(WorkspaceMode::parse(w).ok_or_else(|| {
                    a.usage(format!("'{w}' is not a workspace (shared or worktree)"))
                })?),
            };
            Ok(Action::AddAgent(Some(NewAgent {
                name: name.trim_start_matches('@').to_string(),
                backend: backend.to_string(),
                workspace,
            })))
        }
        ["add", _] => Err(a.usage("name its backend too (or /agent add alone for the form)")),
        _ => Err(a.usage("the form is agent add NAME BACKEND [shared|worktree]")),
    }
}

fn parse_decide(a: &Args<'_>) -> Result<Action, ParseError> {
    let allow = a.def.name == "approve";
    let mut words = a.rest.splitn(3, char::is_whitespace).peekable();
    let request = match words.peek() {
        Some(w) if w.trim_start_matches('#').parse::<u64>().is_ok() => {
            Some(a.message_id(words.next().unwrap_or_default())?)
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
    if allow && !reason.is_empty() {
        return Err(a.usage("takes no reason (deny does)"));
    }
    Ok(Action::Decide {
        request,
        allow,
        always,
        reason: (!reason.is_empty()).then_some(reason),
    })
}

fn parse_revoke(a: &Args<'_>) -> Result<Action, ParseError> {
    match a.rest.split_once(char::is_whitespace) {
        Some((agent, rule)) if !rule.trim().is_empty() => {
            let agent = a.agent(agent)?;
            let rule = crate::vocab::Rule::parse(rule).map_err(|e| a.usage(e.to_string()))?;
            Ok(crate::vocab::Command::RevokeApproval {
                agent,
                rule: rule.to_string(),
            }
            .into())
        }
        _ => Err(a.usage("which agent and rule?")),
    }
}

/// Reads the words after `task`. A task left out means the one selected
/// on the board; `task done` and `task fail` without their text are put
/// back in the bar by the app, completed with the task's id, for the
/// outcome or error to be typed.
fn parse_task(a: &Args<'_>) -> Result<TaskAction, ParseError> {
    let (sub, rest) = match a.words.split_first() {
        Some((s, r)) => (*s, r),
        None => return Err(a.usage("add, release, done, fail, skip or filter?")),
    };
    // The task named first, and the words after it.
    let task_and_text = || -> (Option<String>, Option<String>) {
        let task = rest.first().map(|t| t.to_string());
        let text = (rest.len() > 1).then(|| rest[1..].join(" "));
        (task, text)
    };
    // The whole rest names the task (a name may have spaces).
    let one_task = || (!rest.is_empty()).then(|| rest.join(" "));
    match sub {
        "add" => parse_task_add(a, rest),
        "release" => Ok(TaskAction::Release(one_task())),
        "skip" => Ok(TaskAction::Skip(one_task())),
        "done" => {
            let (task, outcome) = task_and_text();
            Ok(TaskAction::Done { task, outcome })
        }
        "fail" => {
            let (task, error) = task_and_text();
            Ok(TaskAction::Fail { task, error })
        }
        "filter" => Filter::parse(rest)
            .map(TaskAction::Filter)
            .map_err(|m| a.usage(m)),
        other => Err(a.usage(format!(
            "'{other}' is not add, release, done, fail, skip or filter"
        ))),
    }
}

/// Reads `task add <name…> [--after <task>…] [--for <agent>] [--in <workflow>]`.
fn parse_task_add(a: &Args<'_>, words: &[&str]) -> Result<TaskAction, ParseError> {
    let mut name = Vec::new();
    let mut after = Vec::new();
    let mut assignee = None;
    let mut workflow = None;
    let mut in_after = false;
    let mut words = words.iter();
    while let Some(w) = words.next() {
        match *w {
            "--after" => in_after = true,
            "--for" | "--in" => {
                in_after = false;
                let v = words
                    .next()
                    .filter(|v| !v.starts_with("--"))
                    .ok_or_else(|| a.usage(format!("{w} needs a value")))?;
                if *w == "--for" {
                    assignee = Some(a.agent(v)?);
                } else {
                    workflow = Some(v.to_string());
                }
            }
            f if f.starts_with("--") => {
                return Err(a.usage(format!("unknown option '{f}'")));
            }
            dep if in_after => {
                after.extend(dep.split(',').filter(|d| !d.is_empty()).map(str::to_string))
            }
            word => name.push(word),
        }
    }
    if name.is_empty() {
        return Err(a.usage("the new task needs a name"));
    }
    Ok(TaskAction::Add {
        name: name.join(" "),
        after,
        assignee,
        workflow,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command list as a markdown table, for `docs/control-room.md`
    /// (a test keeps the two equal).
    fn markdown() -> String {
        let mut out = String::from("| command | what it does |\n| --- | --- |\n");
        for c in COMMANDS {
            let forms: Vec<String> = c
                .usage
                .split(" | ")
                .map(|f| format!("`/{}`", f.replace('|', "\\|")))
                .collect();
            out.push_str(&format!("| {} | {} |\n", forms.join("<br>"), c.help));
        }
        out
    }

    /// Every command parses from its own example (which starts with its
    /// name or another word for it), and each word starts one command
    /// only.
    #[test]
    fn every_command_parses_from_its_example() {
        let mut words = std::collections::BTreeSet::new();
        for c in COMMANDS {
            let first = c.example.split_whitespace().next().unwrap_or_default();
            assert!(
                CommandDef::find(first).is_some_and(|f| f.name == c.name),
                "{}'s example starts with one of its words",
                c.name
            );
            assert!(
                parse(c.example).is_ok(),
                "{}: {:?}",
                c.example,
                parse(c.example)
            );
            for w in std::iter::once(c.name).chain(c.aliases.iter().copied()) {
                assert!(words.insert(w), "'{w}' starts two commands");
            }
        }
    }

    /// The command list in the docs is the table's.
    #[test]
    fn the_docs_list_every_command() {
        let docs = include_str!("../../../../docs/control-room.md");
        let table = markdown();
        assert!(
            docs.contains(&table),
            "docs/control-room.md should hold this command list:\n{table}"
        );
    }

    #[test]
    fn step_and_text_take_their_words() {
        assert_eq!(parse("step prev"), Ok(Action::Step(Step::Prev)));
        assert!(parse("step").is_err() && parse("step sideways").is_err());
        assert!(matches!(parse("text undo"), Ok(Action::Text(_))));
        assert!(parse("text").is_err() && parse("text fly").is_err());
        assert_eq!(parse("start"), Ok(Action::Start(None)));
    }
}
