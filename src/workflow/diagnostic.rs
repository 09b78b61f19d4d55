//! Problems found in a workflow file, each pointing at `file:line:col`.

use std::fmt;
use std::path::PathBuf;

use super::yaml::Pos;

/// How bad a finding is: errors stop a start, warnings are shown and ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One finding about a workflow file.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub pos: Pos,
    pub message: String,
}

/// All findings for one file, with the text needed to quote offending lines.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics {
    pub file: PathBuf,
    source: String,
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Starts an empty list for `file`, whose text is quoted in reports.
    pub fn new(file: PathBuf, source: &str) -> Self {
        Diagnostics {
            file,
            source: source.to_string(),
            items: Vec::new(),
        }
    }

    /// An empty list for the same file and text (to report more findings
    /// about a file already read).
    pub fn fresh(&self) -> Diagnostics {
        Diagnostics::new(self.file.clone(), &self.source)
    }

    /// Records an error at `pos`.
    pub fn error(&mut self, pos: Pos, message: impl Into<String>) {
        self.push(Severity::Error, pos, message.into());
    }

    /// Records a warning at `pos`.
    pub fn warn(&mut self, pos: Pos, message: impl Into<String>) {
        self.push(Severity::Warning, pos, message.into());
    }

    fn push(&mut self, severity: Severity, pos: Pos, message: String) {
        self.items.push(Diagnostic {
            severity,
            pos,
            message,
        });
    }

    /// Where `needle` first appears in the file at or after `from` (within
    /// the next lines a value may span), so a finding inside a string
    /// points at its own text, not at the string's start; `from` when it
    /// is not found (an escaped or folded string).
    pub fn locate(&self, from: Pos, needle: &str) -> Pos {
        self.locate_where(from, needle, |_| true)
    }

    /// Where the `${{ name }}` of a template is, at or after `from` (see
    /// [`Diagnostics::locate`]).
    pub fn locate_template(&self, from: Pos, name: &str) -> Pos {
        self.locate_where(from, "${{", |after| {
            after
                .trim_start()
                .strip_prefix(name)
                .is_some_and(|rest| rest.trim_start().starts_with("}}"))
        })
    }

    /// The first `needle` at or after `from` whose following text passes
    /// `fits`.
    fn locate_where(&self, from: Pos, needle: &str, fits: impl Fn(&str) -> bool) -> Pos {
        let first = (from.line as usize).saturating_sub(1);
        for (i, text) in self.source.lines().enumerate().skip(first).take(200) {
            let skip = if i == first {
                (from.col as usize).saturating_sub(1)
            } else {
                0
            };
            let mut start: usize = text.chars().take(skip).map(char::len_utf8).sum();
            while let Some(at) = text.get(start..).and_then(|t| t.find(needle)) {
                let here = start + at;
                if fits(&text[here + needle.len()..]) {
                    return Pos {
                        line: (i + 1) as _,
                        col: (text[..here].chars().count() + 1) as _,
                    };
                }
                start = here + needle.len();
            }
        }
        from
    }

    /// Whether any error (not warning) was recorded.
    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity == Severity::Error)
    }

    /// Every finding, in file order.
    pub fn items(&self) -> Vec<&Diagnostic> {
        let mut items: Vec<&Diagnostic> = self.items.iter().collect();
        items.sort_by_key(|d| d.pos);
        items
    }

    /// The errors only, in file order.
    pub fn errors(&self) -> Vec<&Diagnostic> {
        self.filtered(Severity::Error)
    }

    /// The warnings only, in file order.
    pub fn warnings(&self) -> Vec<&Diagnostic> {
        self.filtered(Severity::Warning)
    }

    fn filtered(&self, severity: Severity) -> Vec<&Diagnostic> {
        self.items()
            .into_iter()
            .filter(|d| d.severity == severity)
            .collect()
    }

    /// Renders one finding as `file:line:col: error: message` followed by the
    /// offending line and a caret under the column.
    pub fn render(&self, d: &Diagnostic) -> String {
        let label = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut out = format!(
            "{}:{}:{}: {label}: {}",
            self.file.display(),
            d.pos.line,
            d.pos.col,
            d.message
        );
        if let Some(text) = self
            .source
            .lines()
            .nth((d.pos.line as usize).saturating_sub(1))
        {
            let number = d.pos.line.to_string();
            let pad = " ".repeat(number.len());
            let caret_pad: String = text
                .chars()
                .take((d.pos.col as usize).saturating_sub(1))
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            out.push_str(&format!("\n {number} | {text}\n {pad} | {caret_pad}^"));
        }
        out
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.items().into_iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}", self.render(d))?;
        }
        Ok(())
    }
}

/// ` (did you mean 'x'?)` when a candidate is close to `word`, else nothing:
/// the tail of an "unknown …" message.
pub fn hint<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    did_you_mean(word, candidates)
        .map(|s| format!(" (did you mean '{s}'?)"))
        .unwrap_or_default()
}

/// Suggests the closest of `candidates` to a misspelt `word`, if one is close.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(word, c), c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3) && *d < c.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_close_ones_only() {
        assert_eq!(did_you_mean("modle", ["model", "tools"]), Some("model"));
        assert_eq!(
            did_you_mean("kickof", ["kickoff", "setup"]),
            Some("kickoff")
        );
        assert_eq!(did_you_mean("zzzzz", ["model", "tools"]), None);
    }

    #[test]
    fn render_quotes_the_line_with_a_caret() {
        let mut d = Diagnostics::new("w.yaml".into(), "a: 1\n  modle: x\n");
        d.error(Pos { line: 2, col: 3 }, "unknown key 'modle'");
        let text = d.to_string();
        assert_eq!(
            text,
            "w.yaml:2:3: error: unknown key 'modle'\n 2 |   modle: x\n   |   ^"
        );
    }
}
