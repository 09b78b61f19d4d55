//! What the home screen says about its keys, from the keymap: its `?`
//! help, its hint line and the stop question's answers. Each names the
//! keys bound now, so a user's rebinding shows where it acts, and every
//! `[keys.home]` binding is in `?`.

use super::HomeView;
use crate::keymap::{Key, KeyCodeKey, Keymap, Section};

/// One line of home's `?`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HelpLine {
    /// A part's title (`[instances]`), and a note after it.
    Heading(&'static str, String),
    /// Keys, and what they do.
    Keys(String, String),
    /// Space between parts.
    Blank,
}

/// The `[keys.home]` commands `?` explains on lines of their own; any
/// other binding gets a line after them.
const EXPLAINED: [&str; 12] = [
    "open",
    "stop",
    "start",
    "attention",
    "down",
    "up",
    "top",
    "bottom",
    "help",
    "quit",
    "back",
    "home",
];

/// A hint: the commands whose keys it shows (joined by `sep`), and what
/// they do.
type Hint = (&'static [&'static str], &'static str, &'static str);

/// The list's hints.
const LIST_HINTS: [Hint; 7] = [
    (&["open"], "", "open"),
    (&["stop"], "", "stop"),
    (&["start"], "", "new"),
    (&["attention"], "", "attention"),
    (&["down", "up"], "/", "move"),
    (&["help"], "", "help"),
    (&["quit"], "", "quit"),
];

/// The attention view's hints.
const ATTENTION_HINTS: [Hint; 5] = [
    (&["open"], "", "jump to it"),
    (&["attention", "back"], " ", "list"),
    (&["down", "up"], "/", "move"),
    (&["help"], "", "help"),
    (&["quit"], "", "quit"),
];

/// The keys `section` binds to any of `commands`, the shortest to read
/// first (as [`Keymap::key_in`] picks them).
fn bound(keymap: &Keymap, section: Section, commands: &[&str]) -> Vec<Key> {
    let mut keys: Vec<Key> = keymap
        .bindings(section)
        .filter(|b| commands.contains(&b.command.as_str()))
        .map(|b| b.key)
        .collect();
    keys.sort_by_key(|k| (k.to_string().chars().count(), *k));
    keys
}

/// The keys given, joined by `sep` (`j/k`); `None` when there are none.
fn joined(keys: impl IntoIterator<Item = Option<Key>>, sep: &str) -> Option<String> {
    joined_text(keys.into_iter().map(|k| k.map(|k| k.to_string())), sep)
}

/// The keys given, one after the other (`! a`).
fn spaced(keys: Vec<Key>) -> Option<String> {
    joined(keys.into_iter().map(Some), " ")
}

/// Every key of `[keys.home]` for `commands` (`! a esc`).
fn home_keys(keymap: &Keymap, commands: &[&str]) -> Option<String> {
    spaced(bound(keymap, Section::Home, commands))
}

/// The keys of two opposite commands: side by side when each has as
/// many (`j/k down/up`), else each's apart (`J j down/k up`).
fn pairs(keymap: &Keymap, a: &str, b: &str) -> Option<String> {
    let (a, b) = (
        bound(keymap, Section::Home, &[a]),
        bound(keymap, Section::Home, &[b]),
    );
    if a.len() != b.len() {
        return joined_text([spaced(a), spaced(b)], "/");
    }
    let pairs = a.into_iter().zip(b).map(|(a, b)| format!("{a}/{b}"));
    joined_text(pairs.map(Some), " ")
}

/// The texts given, joined by `sep`; `None` when there are none.
fn joined_text(texts: impl IntoIterator<Item = Option<String>>, sep: &str) -> Option<String> {
    let texts: Vec<String> = texts.into_iter().flatten().collect();
    (!texts.is_empty()).then(|| texts.join(sep))
}

/// The stop question's answers, as `[keys.confirm]` binds them (`y/n`):
/// for each, a plain lowercase letter when one is bound (`y` rather than
/// `Y` or `enter`), else the shortest key.
pub fn yes_no(keymap: &Keymap) -> String {
    let answer = |command| {
        let keys = bound(keymap, Section::Confirm, &[command]);
        let letter = keys.iter().find(|k| {
            !k.ctrl && !k.alt && matches!(k.code, KeyCodeKey::Char(c) if c.is_ascii_lowercase())
        });
        letter.or(keys.first()).copied()
    };
    joined([answer("yes"), answer("no")], "/").unwrap_or_default()
}

/// The help's keys a line down and up (`j/k`), as its title shows them.
fn help_scroll(keymap: &Keymap) -> Option<String> {
    let key = |command, preferred| keymap.key_preferring(Section::Help, command, preferred);
    joined([key("down", "j"), key("up", "k")], "/")
}

/// How the help scrolls and closes, as `[keys.help]` binds it (`j/k,
/// pgup/pgdown scroll; esc closes`).
fn help_keys(keymap: &Keymap) -> Option<String> {
    let key = |command, preferred| keymap.key_preferring(Section::Help, command, preferred);
    let scroll = joined_text(
        [
            help_scroll(keymap),
            joined([key("page-up", "pgup"), key("page-down", "pgdown")], "/"),
        ],
        ", ",
    );
    joined_text(
        [
            scroll.map(|keys| format!("{keys} scroll")),
            key("back", "esc").map(|k| format!("{k} closes")),
        ],
        "; ",
    )
}

/// What the instance's own keys for the list are (`H back to this list,
/// ! its attention view, ? its keys`).
fn instance_keys(keymap: &Keymap) -> String {
    let shown = [
        ("home", "back to this list"),
        ("attention", "its attention view"),
        ("help", "its keys"),
    ]
    .map(|(command, what)| {
        keymap
            .key_in(Section::Global, command)
            .map(|k| format!("{k} {what}"))
    });
    joined_text(shown, ", ").unwrap_or_default()
}

/// Adds a line for `keys` when any is bound.
fn line(out: &mut Vec<HelpLine>, keys: Option<String>, what: String) {
    if let Some(keys) = keys {
        out.push(HelpLine::Keys(keys, what));
    }
}

/// Home's `?`: the list's keys, the attention view's, and the instance's
/// keys that come back here.
pub fn lines(keymap: &Keymap) -> Vec<HelpLine> {
    let mut out = vec![HelpLine::Heading("[instances]", String::new())];
    for (keys, what) in [
        (
            home_keys(keymap, &["open"]),
            "open the instance (attached: leaving it keeps it running)".to_string(),
        ),
        (
            home_keys(keymap, &["stop"]),
            format!("stop the instance and its agents (asks {})", yes_no(keymap)),
        ),
        (
            home_keys(keymap, &["start"]),
            "start a workflow file (tab completes the path)".to_string(),
        ),
        (
            home_keys(keymap, &["attention"]),
            "the attention view".to_string(),
        ),
        (pairs(keymap, "down", "up"), "move".to_string()),
        (pairs(keymap, "top", "bottom"), "first/last".to_string()),
        (
            home_keys(keymap, &["help"]),
            match help_keys(keymap) {
                Some(keys) => format!("this help ({keys})"),
                None => "this help".to_string(),
            },
        ),
        (
            home_keys(keymap, &["quit"]),
            "leave (every instance keeps running)".to_string(),
        ),
    ] {
        line(&mut out, keys, what);
    }
    for b in keymap
        .bindings(Section::Home)
        .filter(|b| !EXPLAINED.contains(&b.command.as_str()))
    {
        line(
            &mut out,
            Some(b.key.to_string()),
            crate::panes::help::describe(&b.command),
        );
    }
    out.extend([
        HelpLine::Blank,
        HelpLine::Heading("[attention]", String::new()),
    ]);
    line(
        &mut out,
        home_keys(keymap, &["open"]),
        "jump to the item: its instance, at its message or agent".to_string(),
    );
    line(
        &mut out,
        home_keys(keymap, &["attention", "back", "home"]),
        "back to the instances".to_string(),
    );
    out.push(HelpLine::Heading("[in an instance]", instance_keys(keymap)));
    out
}

/// The hint line's `(keys, what they do, kept when space is short)`: the
/// view's commands, or the help's while it is open.
pub fn hints(keymap: &Keymap, view: HomeView, help_open: bool) -> Vec<(String, String, bool)> {
    if help_open {
        let back = keymap.key_preferring(Section::Help, "back", "esc");
        return [
            (help_scroll(keymap), "scroll"),
            (back.map(|k| k.to_string()), "close the help"),
        ]
        .into_iter()
        .filter_map(|(keys, what)| Some((keys?, what.to_string(), false)))
        .collect();
    }
    let table: &[Hint] = match view {
        HomeView::List => &LIST_HINTS,
        HomeView::Attention => &ATTENTION_HINTS,
    };
    table
        .iter()
        .filter_map(|(commands, sep, what)| {
            let keys = joined(
                commands.iter().map(|c| keymap.key_in(Section::Home, c)),
                sep,
            )?;
            let kept = matches!(commands, ["help" | "quit"]);
            Some((keys, what.to_string(), kept))
        })
        .collect()
}

/// The key that starts a workflow file, for the empty list's line.
pub fn start_key(keymap: &Keymap) -> Option<Key> {
    keymap.key_in(Section::Home, "start")
}
