//! A Bash command line split into the simple commands it would run, so
//! approval rules judge each command rather than the line's text (issue
//! 22: under `Bash(git status*)`, `git status; rm -rf ~` must not pass).
//!
//! Pure and deliberately partial: it understands the shell well enough to
//! find every command (`;`, `&&`, `||`, `|`, `&`, newlines, `( … )`,
//! `{ …; }`, backticks, `$( … )`, `<( … )`, `>( … )`, quotes), and flags
//! as [`Unclear`] whatever it cannot read with confidence (heredocs,
//! `eval`, `sh -c`, unbalanced quotes, a program only known at run
//! time), so such a line is put to the person, never allowed by a rule.

/// Reserved words that only shape control flow; a command after them is
/// still the command (`if true; then rm x; fi` runs `rm x`).
const KEYWORDS: [&str; 12] = [
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}",
];

/// Programs that run the rest of their arguments as a command. Deny and
/// ask rules see through them (`sudo rm -rf x` is `rm -rf x`).
const WRAPPERS: [&str; 9] = [
    "sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time", "xargs",
];

/// Shells whose `-c` runs a string this parser does not read.
const SHELLS: [&str; 7] = ["sh", "bash", "zsh", "dash", "ksh", "fish", "busybox"];

/// How deep substitutions and subshells may nest before the line is
/// unclear (keeps the parser's recursion bounded).
const MAX_DEPTH: usize = 32;

/// Why a line cannot be judged command by command.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unclear {
    /// A quote, `(`, `$(`, `${` or backtick is never closed.
    #[error("'{0}' is never closed")]
    Unclosed(char),
    /// A `)` (or `(`) where none belongs.
    #[error("a stray '{0}'")]
    Stray(char),
    /// `<<`: the heredoc's body is read by the shell, not here.
    #[error("a heredoc (<<)")]
    Heredoc,
    /// `eval`, or a shell given `-c` and a string: a command in a string.
    #[error("'{0}' runs a command held in a string")]
    Indirect(String),
    /// The program is only known when the line runs (`$X`, `$(…) x`, `*`).
    #[error("the program '{0}' is only known when it runs")]
    Program(String),
    /// A wrapper such as `sudo` or `env` given options.
    #[error("'{0}' with options")]
    WrapperOptions(String),
    /// A redirection without its target.
    #[error("a redirection without a target")]
    Redirection,
    /// Substitutions nested deeper than anyone writes by hand.
    #[error("nested too deeply")]
    TooDeep,
    /// `case`, `function`, `select`: syntax this parser does not follow.
    #[error("'{0}' is not followed here")]
    Syntax(String),
    /// An expansion whose result the parser cannot know is only data:
    /// `${X@P}` (bash runs the command substitutions the value holds),
    /// `${!X}`, `${a[i]}`, `${X:i}`, `$[…]`, `$((…))` (arithmetic, which
    /// expands what a variable holds, `a[$(…)]` included), `$_`.
    #[error("the expansion '{0}' is evaluated in a way this parser does not follow")]
    Expansion(String),
}

/// What a redirection points at, as far as the line says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Another file descriptor (`2>&1`, `>&2`, `<&0`, `2>&-`).
    Descriptor,
    /// A here-string's text (`<<< word`): no file.
    Text,
    /// A file named plainly (no expansion, glob or `~`): `path` as the
    /// shell opens it, quotes removed; `writes` unless only read (`<`).
    File {
        /// The file's name as the shell would open it.
        path: String,
        /// Whether the file is written (`>`, `>>`, `>|`, `&>`, `<>`, …).
        writes: bool,
    },
    /// A target only known when the line runs (`$HOME/x`, `~/.bashrc`,
    /// `*.txt`, `>(…)`), or none.
    Unknown,
}

/// One redirection of a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirection {
    /// As written (`2>&1`, `> out.txt`).
    pub written: String,
    /// Where it points.
    pub target: Target,
}

/// One simple command of a line, in the two forms rules look at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// As written (each word and redirection as in the line, joined by
    /// one space, control keywords dropped): what allow rules must match,
    /// so `/tmp/evil/git status` is not `git status`.
    pub written: String,
    /// Its program and arguments with quotes removed, the program's
    /// directory, leading `VAR=value` and wrappers dropped: what deny and
    /// ask rules also match, so `/bin/rm`, `"rm"` or `sudo rm` is `rm`.
    pub core: String,
    /// The program's name (`rm` for `/bin/rm`); empty when the command is
    /// only assignments or redirections.
    pub program: String,
    /// Its leading `VAR=value` assignments.
    pub assignments: Vec<String>,
    /// Its redirections (`> out.txt`, `2>&1`).
    pub redirections: Vec<Redirection>,
}

/// A line split into its commands.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Every command found, substitutions' commands included, whether or
    /// not the line as a whole could be read.
    pub commands: Vec<Command>,
    /// The first reason the line cannot be trusted to be only these
    /// commands, if any.
    pub unclear: Option<Unclear>,
}

/// Splits `line` into the commands it runs.
pub fn parse(line: &str) -> Parsed {
    let mut p = Parser {
        s: line.chars().collect(),
        pos: 0,
        depth: 0,
        out: Parsed::default(),
    };
    p.list(None);
    p.out
}

/// One word or redirection of a command being read.
#[derive(Debug)]
struct Token {
    /// As written.
    raw: String,
    /// With quotes and escapes removed (substitutions kept as written).
    value: String,
    /// Holds an unquoted or double-quoted `$` or backtick expansion.
    expands: bool,
    /// Holds an unquoted `*`, `?` or `[`.
    globs: bool,
    /// Is a redirection (`>`, `2>&1`, `<(…)` is a word, not this): where
    /// it points.
    redirection: Option<Target>,
    /// Where it starts and ends in the line.
    span: (usize, usize),
}

struct Parser {
    s: Vec<char>,
    pos: usize,
    depth: usize,
    out: Parsed,
}

impl Parser {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.s.get(self.pos + ahead).copied()
    }

    fn flag(&mut self, why: Unclear) {
        self.out.unclear.get_or_insert(why);
    }

    /// Reads commands until `close` (`)` or a backtick) or the end.
    fn list(&mut self, close: Option<char>) {
        if self.depth >= MAX_DEPTH {
            self.flag(Unclear::TooDeep);
            self.pos = self.s.len();
            return;
        }
        self.depth += 1;
        let mut tokens: Vec<Token> = Vec::new();
        loop {
            self.skip_blanks();
            let Some(c) = self.peek(0) else {
                if let Some(close) = close {
                    self.flag(Unclear::Unclosed(if close == ')' { '(' } else { close }));
                }
                break;
            };
            if Some(c) == close {
                self.pos += 1;
                break;
            }
            match c {
                '&' if self.peek(1) == Some('>') => self.redirection(&mut tokens, close),
                ';' | '&' | '|' | '\n' => {
                    self.pos += 1;
                    self.finish(&mut tokens);
                }
                '(' if tokens.is_empty() => {
                    if self.peek(1) == Some('(') {
                        self.flag(Unclear::Expansion("((…))".into()));
                    }
                    self.pos += 1;
                    self.list(Some(')'));
                }
                '(' | ')' => {
                    self.flag(Unclear::Stray(c));
                    self.pos += 1;
                }
                '<' | '>' if self.peek(1) == Some('(') => {
                    let t = self.word(close);
                    tokens.push(t);
                }
                '<' | '>' => self.redirection(&mut tokens, close),
                _ => {
                    let t = self.word(close);
                    tokens.push(t);
                }
            }
        }
        self.finish(&mut tokens);
        self.depth -= 1;
    }

    fn skip_blanks(&mut self) {
        while let Some(c) = self.peek(0) {
            if c == ' ' || c == '\t' || c == '\r' {
                self.pos += 1;
            } else if c == '\\' && self.peek(1) == Some('\n') {
                self.pos += 2;
            } else {
                break;
            }
        }
    }

    /// Reads a redirection operator and its target; a number written
    /// right before it (`2>`) is its file descriptor.
    fn redirection(&mut self, tokens: &mut Vec<Token>, close: Option<char>) {
        let mut start = self.pos;
        let fd = |t: &Token| {
            t.span.1 == start && !t.raw.is_empty() && t.raw.chars().all(|c| c.is_ascii_digit())
        };
        if let Some(prev) = tokens.pop_if(|t| fd(t)) {
            start = prev.span.0;
        }
        let op_start = self.pos;
        if self.peek(0) == Some('<') && self.peek(1) == Some('<') {
            if self.peek(2) == Some('<') {
                self.pos += 3;
            } else {
                self.flag(Unclear::Heredoc);
                self.pos += 2;
            }
        } else {
            self.pos += 1;
            while matches!(self.peek(0), Some('>' | '&' | '|')) && self.pos - start < 3 {
                self.pos += 1;
            }
        }
        let op: String = self.s[op_start..self.pos].iter().collect();
        self.skip_blanks();
        match self.peek(0) {
            Some(c)
                if Some(c) != close
                    && (!is_operator(c)
                        || ((c == '<' || c == '>') && self.peek(1) == Some('('))) =>
            {
                let word = self.word(close);
                let target = target(&op, &word);
                self.push_redirection(tokens, start, word.span.1, target);
            }
            _ => {
                self.flag(Unclear::Redirection);
                self.push_redirection(tokens, start, self.pos, Target::Unknown);
            }
        }
    }

    fn push_redirection(&self, tokens: &mut Vec<Token>, start: usize, end: usize, to: Target) {
        let raw: String = self.s[start..end].iter().collect();
        tokens.push(Token {
            value: raw.clone(),
            raw,
            expands: false,
            globs: false,
            redirection: Some(to),
            span: (start, end),
        });
    }

    /// Reads one word, recursing into the substitutions it holds.
    fn word(&mut self, close: Option<char>) -> Token {
        let start = self.pos;
        let mut value = String::new();
        let (mut expands, mut globs) = (false, false);
        while let Some(c) = self.peek(0) {
            if c == ' ' || c == '\t' || c == '\r' || Some(c) == close {
                break;
            }
            if is_operator(c) && !((c == '<' || c == '>') && self.peek(1) == Some('(')) {
                break;
            }
            let from = self.pos;
            match c {
                '\\' => {
                    self.pos += 1;
                    match self.peek(0) {
                        Some('\n') => {}
                        Some(e) => value.push(e),
                        None => value.push('\\'),
                    }
                    self.pos = (self.pos + 1).min(self.s.len());
                    continue;
                }
                '\'' => {
                    self.pos += 1;
                    self.single_quoted(&mut value, false);
                    continue;
                }
                '$' if self.peek(1) == Some('\'') => {
                    self.pos += 2;
                    self.single_quoted(&mut value, true);
                    continue;
                }
                '"' => {
                    self.pos += 1;
                    expands |= self.double_quoted(&mut value);
                    continue;
                }
                '*' | '?' | '[' => globs = true,
                _ => {}
            }
            if self.expansion() {
                expands = true;
                value.extend(&self.s[from..self.pos]);
            } else {
                value.push(c);
                self.pos += 1;
            }
        }
        Token {
            raw: self.s[start..self.pos].iter().collect(),
            value,
            expands,
            globs,
            redirection: None,
            span: (start, self.pos),
        }
    }

    /// Reads `'…'` (or `$'…'`, where backslash escapes) after its quote.
    fn single_quoted(&mut self, value: &mut String, escapes: bool) {
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '\'' => return,
                '\\' if escapes => {
                    if let Some(e) = self.ansi_c_escape() {
                        value.push(e);
                    }
                }
                _ => value.push(c),
            }
        }
        self.flag(Unclear::Unclosed('\''));
    }

    /// Reads the escape after a backslash in `$'…'` as bash decodes it
    /// (`\x72` is `r`, `\162` is `r`, `\u0072` is `r`, `\n` a line break),
    /// so `$'\x72m' -rf x` is `rm -rf x` to deny rules. `\c` and anything
    /// it cannot decode make the line unclear.
    fn ansi_c_escape(&mut self) -> Option<char> {
        let e = self.peek(0)?;
        self.pos += 1;
        let simple = match e {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            'x' | 'u' | 'U' | '0'..='7' | 'c' => None,
            other => Some(other),
        };
        if simple.is_some() {
            return simple;
        }
        let (radix, max) = match e {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            'c' => {
                self.flag(Unclear::Expansion("$'\\c…'".into()));
                return None;
            }
            _ => {
                self.pos -= 1;
                (8, 3)
            }
        };
        let from = self.pos;
        while self.pos - from < max && self.peek(0).is_some_and(|c| c.is_digit(radix)) {
            self.pos += 1;
        }
        let digits: String = self.s[from..self.pos].iter().collect();
        let decoded = u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32);
        if decoded.is_none() {
            self.flag(Unclear::Expansion(format!("$'\\{e}{digits}'")));
        }
        decoded
    }

    /// Reads `"…"` after its quote; whether it held an expansion.
    fn double_quoted(&mut self, value: &mut String) -> bool {
        let mut expands = false;
        while let Some(c) = self.peek(0) {
            let from = self.pos;
            if c == '"' {
                self.pos += 1;
                return expands;
            }
            if c == '\\' {
                self.pos += 1;
                if let Some(e) = self.peek(0) {
                    if !matches!(e, '"' | '\\' | '$' | '`' | '\n') {
                        value.push('\\');
                    }
                    value.push(e);
                    self.pos += 1;
                }
            } else if self.expansion() {
                expands = true;
                value.extend(&self.s[from..self.pos]);
            } else {
                value.push(c);
                self.pos += 1;
            }
        }
        self.flag(Unclear::Unclosed('"'));
        expands
    }

    /// Reads an expansion starting here (`$(…)`, backticks, `<(…)`,
    /// `>(…)`, `${…}`, `$NAME`), recursing into the commands it runs;
    /// false (nothing read) when none starts here.
    fn expansion(&mut self) -> bool {
        match (self.peek(0), self.peek(1)) {
            (Some('$'), Some('(')) if self.peek(2) == Some('(') => {
                self.flag(Unclear::Expansion("$((…))".into()));
                self.pos += 2;
                self.list(Some(')'));
            }
            (Some('$' | '<' | '>'), Some('(')) => {
                self.pos += 2;
                self.list(Some(')'));
            }
            (Some('$'), Some('[')) => {
                // Read on as text; what it holds is still found.
                self.flag(Unclear::Expansion("$[…]".into()));
                return false;
            }
            (Some('`'), _) => {
                self.pos += 1;
                self.list(Some('`'));
            }
            (Some('$'), Some('{')) => {
                self.pos += 2;
                self.braced();
            }
            (Some('$'), Some(n)) if n.is_ascii_alphanumeric() || "_@*#?$!-".contains(n) => {
                let name_start = self.pos + 1;
                self.pos += 2;
                if n.is_ascii_alphabetic() || n == '_' {
                    while self.peek(0).is_some_and(is_name_char) {
                        self.pos += 1;
                    }
                }
                if self.s[name_start..self.pos] == ['_'] {
                    self.flag(Unclear::Expansion("$_".into()));
                }
            }
            _ => return false,
        }
        true
    }

    /// Reads `${…}` after its brace. Only a parameter (`${X}`, `${#X}`)
    /// and the operators whose result is data (`:-`, `=`, `?`, `+`, `#`,
    /// `%`, `/`, `^`, `,`, with or without `:`) are clear; the word after
    /// an operator is read like any other, its substitutions found.
    fn braced(&mut self) {
        if self.depth >= MAX_DEPTH {
            self.flag(Unclear::TooDeep);
            self.pos = self.s.len();
            return;
        }
        self.depth += 1;
        self.braced_at_depth();
        self.depth -= 1;
    }

    fn braced_at_depth(&mut self) {
        let start = self.pos;
        if self.peek(0) == Some('#') && self.peek(1).is_some_and(|c| c != '}') {
            self.pos += 1;
        }
        let name_start = self.pos;
        match self.peek(0) {
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                while self.peek(0).is_some_and(is_name_char) {
                    self.pos += 1;
                }
            }
            Some(c) if c.is_ascii_digit() => {
                while self.peek(0).is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
            }
            Some('@' | '*' | '#' | '?' | '$' | '-') => self.pos += 1,
            _ => {}
        }
        let name: String = self.s[name_start..self.pos].iter().collect();
        let op = self.peek(0);
        let clear = match op {
            Some('}') | None => !name.is_empty(),
            Some(':') => matches!(self.peek(1), Some('-' | '=' | '?' | '+')),
            Some(c) => !name.is_empty() && "-=?+#%/^,".contains(c),
        };
        if name == "_" || !clear {
            let shown: String = self.s[start..self.s.len().min(self.pos + 2)]
                .iter()
                .collect();
            self.flag(Unclear::Expansion(format!("${{{shown}…}}")));
        }
        self.braced_word();
    }

    /// Reads the rest of `${…}` up to its `}`, finding the substitutions
    /// it holds. Quotes and backslashes in it are read as text (and make
    /// the line unclear): where bash ends such a word depends on the
    /// quotes around the whole `${…}`, so the first `}` ends it here, as
    /// it always did, and no command after it goes unseen by deny rules.
    fn braced_word(&mut self) {
        while let Some(c) = self.peek(0) {
            match c {
                '}' => {
                    self.pos += 1;
                    return;
                }
                '\\' | '\'' | '"' => {
                    self.flag(Unclear::Expansion(format!("a {c} inside ${{…}}")));
                    self.pos += 1;
                }
                _ => {
                    if !self.expansion() {
                        self.pos += 1;
                    }
                }
            }
        }
        self.flag(Unclear::Unclosed('{'));
    }

    /// Ends the command `tokens` hold, if any, and records it.
    fn finish(&mut self, tokens: &mut Vec<Token>) {
        let taken = std::mem::take(tokens);
        if let Some(command) = self.command(taken) {
            self.out.commands.push(command);
        }
    }

    fn command(&mut self, tokens: Vec<Token>) -> Option<Command> {
        let plain = |t: &Token| t.raw == t.value && t.redirection.is_none();
        let mut rest = tokens.as_slice();
        while let Some((first, tail)) = rest.split_first() {
            if !(plain(first) && KEYWORDS.contains(&first.raw.as_str())) {
                break;
            }
            rest = tail;
        }
        if rest.is_empty() {
            return None;
        }
        let written = join(rest.iter().map(|t| t.raw.as_str()));
        let redirections = rest
            .iter()
            .filter_map(|t| {
                Some(Redirection {
                    written: t.raw.clone(),
                    target: t.redirection.clone()?,
                })
            })
            .collect();
        let mut words = rest.iter().filter(|t| t.redirection.is_none()).peekable();
        let mut assignments = Vec::new();
        while let Some(t) = words.next_if(|t| is_assignment(&t.raw)) {
            assignments.push(t.raw.clone());
        }
        let mut program = None;
        while let Some(t) = words.next() {
            if t.expands || t.globs {
                self.flag(Unclear::Program(t.raw.clone()));
            }
            let name = basename(&t.value);
            if !WRAPPERS.contains(&name) {
                program = Some(name.to_string());
                break;
            }
            if words.peek().is_some_and(|w| w.value.starts_with('-')) {
                self.flag(Unclear::WrapperOptions(name.to_string()));
            }
            while let Some(t) = words.next_if(|t| is_assignment(&t.raw)) {
                assignments.push(t.raw.clone());
            }
        }
        let args: Vec<&Token> = words.collect();
        let program = program.unwrap_or_default();
        self.check_indirect(&program, &args);
        let core = join(
            std::iter::once(program.as_str())
                .filter(|p| !p.is_empty())
                .chain(args.iter().map(|t| t.value.as_str())),
        );
        Some(Command {
            written,
            core,
            program,
            assignments,
            redirections,
        })
    }

    /// Flags a command that runs a command held in a string.
    fn check_indirect(&mut self, program: &str, args: &[&Token]) {
        let dash_c = |t: &&Token| {
            t.value.starts_with('-') && !t.value.starts_with("--") && t.value.contains('c')
        };
        if program == "eval" || (SHELLS.contains(&program) && args.iter().any(dash_c)) {
            self.flag(Unclear::Indirect(program.to_string()));
        }
        if matches!(program, "case" | "function" | "select" | "coproc") {
            self.flag(Unclear::Syntax(program.to_string()));
        }
    }
}

/// Where the redirection `op` (`>`, `>>`, `>|`, `&>`, `&>>`, `<`, `<>`,
/// `>&`, `<&`, `<<<`, `<<`) with the target `word` points.
fn target(op: &str, word: &Token) -> Target {
    // `$'…'` and `$"…"` are decoded by bash in ways a path must not
    // depend on: such a target is unknown.
    let plain = !word.expands
        && !word.globs
        && !word.raw.starts_with('~')
        && !word.raw.contains(['$', '`']);
    let descriptor = word.value == "-"
        || word
            .value
            .trim_end_matches('-')
            .chars()
            .all(|c| c.is_ascii_digit());
    match op {
        // A here-string's text, a heredoc's delimiter: no file.
        "<<<" | "<<" => Target::Text,
        ">&" | "<&" if plain && !word.value.is_empty() && descriptor => Target::Descriptor,
        "<&" => Target::Unknown,
        _ if !plain || word.value.is_empty() => Target::Unknown,
        _ => Target::File {
            path: word.value.clone(),
            writes: op != "<",
        },
    }
}

/// Whether `c` may be part of a variable's name after its first character.
fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Characters that end a word when not quoted.
fn is_operator(c: char) -> bool {
    matches!(c, ';' | '&' | '|' | '<' | '>' | '(' | ')' | '\n')
}

/// Whether `word` is `NAME=value`.
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The program's name without its directory (`/bin/rm` is `rm`).
fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

fn join<'a>(words: impl Iterator<Item = &'a str>) -> String {
    words.collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each command's core form, and whether the line was unclear.
    fn cores(line: &str) -> (Vec<String>, bool) {
        let p = parse(line);
        let cores = p.commands.into_iter().map(|c| c.core).collect();
        (cores, p.unclear.is_some())
    }

    #[test]
    fn operators_and_groupings_split_commands() {
        let table: [(&str, &[&str]); 16] = [
            ("git status", &["git status"]),
            ("  git   status  ", &["git status"]),
            ("a; b", &["a", "b"]),
            ("a && b || c", &["a", "b", "c"]),
            ("a | b |& c", &["a", "b", "c"]),
            ("a & b", &["a", "b"]),
            ("a\nb", &["a", "b"]),
            ("(a; b)", &["a", "b"]),
            ("{ a; b; }", &["a", "b"]),
            ("a `b`", &["b", "a `b`"]),
            ("a $(b; c)", &["b", "c", "a $(b; c)"]),
            ("a \"x $(b)\"", &["b", "a x $(b)"]),
            ("diff <(a) >(b)", &["a", "b", "diff <(a) >(b)"]),
            ("if a; then b; else c; fi", &["a", "b", "c"]),
            ("while a; do b; done", &["a", "b"]),
            ("a 2>&1 &> f > g", &["a"]),
        ];
        for (line, want) in table {
            let (got, unclear) = cores(line);
            assert_eq!(got, want, "{line:?}");
            assert!(!unclear, "{line:?}: {:?}", parse(line).unclear);
        }
    }

    #[test]
    fn quotes_keep_operators_inside_one_word() {
        let table: [(&str, &str); 6] = [
            ("echo 'a; b'", "echo a; b"),
            ("echo \"a && b\"", "echo a && b"),
            ("echo a\\;b", "echo a;b"),
            ("echo 'x $(rm)'", "echo x $(rm)"),
            ("echo $'a\\'b;c'", "echo a'b;c"),
            ("echo \"a\\\"b\"", "echo a\"b"),
        ];
        for (line, want) in table {
            assert_eq!(cores(line), (vec![want.to_string()], false), "{line:?}");
        }
    }

    #[test]
    fn a_command_is_normalised_for_deny_but_written_for_allow() {
        let c = &parse("  FOO=1 BAR=2 sudo env X=y /usr/bin/rm -rf \"my dir\" > log ").commands[0];
        assert_eq!(
            c.written,
            "FOO=1 BAR=2 sudo env X=y /usr/bin/rm -rf \"my dir\" > log"
        );
        assert_eq!(c.core, "rm -rf my dir");
        assert_eq!(c.program, "rm");
        assert_eq!(c.assignments, ["FOO=1", "BAR=2", "X=y"]);
        let written = |c: &Command| -> Vec<String> {
            c.redirections.iter().map(|r| r.written.clone()).collect()
        };
        assert_eq!(written(c), ["> log"]);
        let r = &parse("a 2>&1 &>f >> g").commands[0];
        assert_eq!(r.written, "a 2>&1 &>f >> g");
        assert_eq!(written(r), ["2>&1", "&>f", ">> g"]);
        assert_eq!(parse("./rm x").commands[0].core, "rm x");
        for escaped in ["$'\\x72m' x", "$'\\162m' x", "$'\\u0072m' x", "$'r\\m' x"] {
            assert_eq!(parse(escaped).commands[0].core, "rm x", "{escaped}");
        }
        assert_eq!(parse("echo $'a\\tb\\0'").commands[0].core, "echo a\tb\0");
        assert_eq!(parse("\"r\"m x").commands[0].core, "rm x");
    }

    /// The targets of the first command's redirections.
    fn targets(line: &str) -> Vec<Target> {
        let commands = parse(line).commands;
        commands
            .last()
            .unwrap()
            .redirections
            .iter()
            .map(|r| r.target.clone())
            .collect()
    }

    fn file(path: &str, writes: bool) -> Target {
        Target::File {
            path: path.into(),
            writes,
        }
    }

    #[test]
    fn redirections_say_where_they_point() {
        use Target::{Descriptor, Text, Unknown};
        let table: [(&str, Target); 23] = [
            ("a > out", file("out", true)),
            ("a >> 'my file'", file("my file", true)),
            ("a >| x", file("x", true)),
            ("a &> x", file("x", true)),
            ("a &>> x", file("x", true)),
            ("a >& x", file("x", true)),
            ("a 3> x", file("x", true)),
            ("a <> x", file("x", true)),
            ("a < x", file("x", false)),
            ("a 2>&1", Descriptor),
            ("a >&2", Descriptor),
            ("a 2>&-", Descriptor),
            ("a <&0", Descriptor),
            ("a 3>&1-", Descriptor),
            ("a <<< $X", Text),
            ("a <<'~/x'", Text),
            ("a > ~/.bashrc", Unknown),
            ("a > $HOME/x", Unknown),
            ("a > \"$HOME\"/x", Unknown),
            ("a > *.txt", Unknown),
            ("a > >(b)", Unknown),
            ("a <& x", Unknown),
            ("a >& $F", Unknown),
        ];
        for (line, want) in table {
            assert_eq!(targets(line), [want], "{line:?}");
        }
        // Decoded by bash, not here: unknown.
        assert_eq!(targets("a > $'\\x2e\\x2e/x'"), [Unknown]);
        assert_eq!(targets("a > $\"../x\""), [Unknown]);
        // A quoted `~` is a file named `~`.
        assert_eq!(targets("a > '~'/x"), [file("~/x", true)]);
    }

    #[test]
    fn expansions_that_run_or_evaluate_are_unclear() {
        for line in [
            "a ${X@P}",
            "a \"${PS4@P}\"",
            "a ${X@Q}",
            "a ${!X}",
            "a ${!X*}",
            "a ${a[i]}",
            "a ${X:i}",
            "a ${X:0:2}",
            "a $_",
            "a \"$_\"",
            "a ${_}",
            "a ${_:-x}",
            "a $[i]",
            "a $((i))",
            "((i))",
            "a ${X:-'}'}",
            "a ${X:-\\}}",
            "a ${}",
        ] {
            assert!(
                matches!(parse(line).unclear, Some(Unclear::Expansion(_))),
                "{line:?}: {:?}",
                parse(line).unclear
            );
        }
        for line in [
            "a $X ${X} \"$X\" ${#X} ${#} $1 ${10} $@ \"${@}\" $? $$ $_x ${_x}",
            "a ${X:-d} ${X-d} ${X:=d} ${X:?no} ${X:+y} ${X+y}",
            "a ${X#p} ${X##p} ${X%p} ${X%%p} ${X/a/b} ${X//a/b} ${X^} ${X^^} ${X,} ${X,,}",
            "a ${X:-${Y:-z}}",
            "a \\$_ '$_' '${X@P}'",
        ] {
            assert_eq!(parse(line).unclear, None, "{line:?}");
        }
        // What such an expansion runs is still found, for deny rules.
        assert_eq!(cores("a ${X:-$(rm -rf x)}").0[0], "rm -rf x");
        assert_eq!(cores("a ${X@P}; rm -rf x").0[1], "rm -rf x");
        assert_eq!(cores("a $(( $(rm -rf x) ))").0[0], "rm -rf x");
        assert_eq!(cores("a \"${X:-'}\"; rm -rf x").0[1], "rm -rf x");
        // Nested braces are bounded too.
        let deep = "${X:-".repeat(10_000);
        assert_eq!(parse(&deep).unclear, Some(Unclear::TooDeep));
    }

    #[test]
    fn what_cannot_be_read_with_confidence_is_unclear() {
        let table: [(&str, Unclear); 13] = [
            ("echo 'a", Unclear::Unclosed('\'')),
            ("echo \"a", Unclear::Unclosed('"')),
            ("echo $(a", Unclear::Unclosed('(')),
            ("echo `a", Unclear::Unclosed('`')),
            ("(a", Unclear::Unclosed('(')),
            ("a )", Unclear::Stray(')')),
            ("cat <<EOF\nx\nEOF", Unclear::Heredoc),
            ("eval 'rm -rf /'", Unclear::Indirect("eval".into())),
            ("bash -c 'rm -rf /'", Unclear::Indirect("bash".into())),
            ("/bin/sh -ec 'x'", Unclear::Indirect("sh".into())),
            ("$RM -rf /", Unclear::Program("$RM".into())),
            ("sudo -u root rm x", Unclear::WrapperOptions("sudo".into())),
            ("echo >", Unclear::Redirection),
        ];
        for (line, want) in table {
            assert_eq!(parse(line).unclear, Some(want), "{line:?}");
        }
        // The commands found are still reported, for deny rules.
        assert_eq!(cores("rm x; cat <<EOF").0[0], "rm x");
        // A here-string is not a heredoc; a shell reading a script file is
        // an ordinary command.
        assert_eq!(parse("cat <<< hi").unclear, None);
        assert_eq!(parse("bash build.sh").unclear, None);
        // Nesting is bounded.
        let deep = "$(".repeat(10_000);
        assert_eq!(parse(&deep).unclear, Some(Unclear::TooDeep));
    }
}
