//! Small text helpers shared by the panes: wrapping styled text to a width,
//! display widths, and highlighting @mentions. Everything here receives
//! text that was already sanitised with [`crate::sanitize::for_terminal`].

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// The display width of a character (0 for combining marks).
pub fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// The display width of a string.
pub fn width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

/// Cuts `s` to at most `max` columns, ending with `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = char_width(c);
        if w + cw + 1 > max {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    out
}

/// Cuts `s` to at most `max` columns by eliding its middle (`…`), keeping
/// its start and, preferably, its end: names that differ only at the end
/// (`review.md`, `review.md.theirs`) stay distinguishable.
pub fn truncate_middle(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    if max < 3 {
        return truncate(s, max);
    }
    let room = max - 1;
    let tail_w = room - room / 3;
    let mut tail: Vec<char> = Vec::new();
    let mut w = 0;
    for c in s.chars().rev() {
        let cw = char_width(c);
        if w + cw > tail_w {
            break;
        }
        tail.push(c);
        w += cw;
    }
    let head_w = room - w;
    let mut out = String::new();
    let mut hw = 0;
    for c in s.chars() {
        let cw = char_width(c);
        if hw + cw > head_w {
            break;
        }
        out.push(c);
        hw += cw;
    }
    out.push('…');
    out.extend(tail.into_iter().rev());
    out
}

/// Cuts a styled line to at most `max` columns, ending with `…` (in the
/// style of the span it cuts) when cut.
pub fn truncate_line(line: Line<'static>, max: usize) -> Line<'static> {
    if line_width(&line) <= max {
        return line;
    }
    let mut spans = Vec::new();
    let mut used = 0;
    for span in line.spans {
        let w = width(&span.content);
        if used + w < max {
            used += w;
            spans.push(span);
            continue;
        }
        let cut = truncate(&format!("{}\u{2026}", span.content), max - used);
        spans.push(Span::styled(cut, span.style));
        break;
    }
    Line::from(spans)
}

/// Gives every occurrence of `query` in the line (ignoring case) the
/// `mark` style on top of its own, so search hits stand out in the text.
pub fn highlight_matches(line: &Line<'static>, query: &str, mark: Style) -> Line<'static> {
    let fold = |c: char| c.to_lowercase().next().unwrap_or(c);
    let needle: Vec<char> = query.chars().map(fold).collect();
    if needle.is_empty() {
        return line.clone();
    }
    let mut chars: Vec<(char, Style)> = line
        .spans
        .iter()
        .flat_map(|s| s.content.chars().map(move |c| (c, s.style)))
        .collect();
    let mut i = 0;
    let mut found = false;
    while i + needle.len() <= chars.len() {
        if chars[i..i + needle.len()]
            .iter()
            .zip(&needle)
            .all(|((c, _), n)| fold(*c) == *n)
        {
            for (_, style) in &mut chars[i..i + needle.len()] {
                *style = style.patch(mark);
            }
            found = true;
            i += needle.len();
        } else {
            i += 1;
        }
    }
    if !found {
        return line.clone();
    }
    let mut out = to_line(&chars);
    out.style = line.style;
    out
}

/// Splits one line of text into styled runs, giving `@mentions` of known
/// names the `mention` style.
pub fn mention_runs(
    line: &str,
    base: Style,
    mention: Style,
    names: &dyn Fn(&str) -> bool,
) -> Vec<(String, Style)> {
    let mut runs = Vec::new();
    let mut last = 0;
    for (at, name) in crate::vocab::mentions::scan(line) {
        if !names(name) {
            continue;
        }
        let end = at + 1 + name.len();
        if at > last {
            runs.push((line[last..at].to_string(), base));
        }
        runs.push((line[at..end].to_string(), mention));
        last = end;
    }
    if last < line.len() {
        runs.push((line[last..].to_string(), base));
    }
    runs
}

/// Wraps styled runs (one logical line, no newlines) to `width` columns,
/// breaking after spaces where possible and inside words otherwise.
/// Always returns at least one line.
pub fn wrap_runs(runs: &[(String, Style)], width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let mut chars: Vec<(char, Style)> = Vec::new();
    for (text, style) in runs {
        for c in text.chars() {
            if c == '\t' {
                chars.extend(std::iter::repeat_n((' ', *style), 4));
            } else {
                chars.push((c, *style));
            }
        }
    }
    let mut lines = Vec::new();
    let mut start = 0;
    while start < chars.len() {
        let mut w = 0;
        let mut end = start;
        let mut last_space = None;
        while end < chars.len() {
            let cw = char_width(chars[end].0);
            if w + cw > width && end > start {
                break;
            }
            w += cw;
            if chars[end].0 == ' ' {
                last_space = Some(end);
            }
            end += 1;
        }
        let brk = if end < chars.len() {
            match last_space {
                Some(s) if s > start => s + 1,
                _ => end,
            }
        } else {
            end
        };
        lines.push(to_line(&chars[start..brk]));
        start = brk;
    }
    if lines.is_empty() {
        lines.push(Line::default());
    }
    lines
}

fn to_line(chars: &[(char, Style)]) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut current = String::new();
    let mut style = None;
    for (c, s) in chars {
        if style != Some(*s) {
            if let Some(st) = style
                && !current.is_empty()
            {
                spans.push(Span::styled(std::mem::take(&mut current), st));
            }
            style = Some(*s);
        }
        current.push(*c);
    }
    if let Some(st) = style
        && !current.is_empty()
    {
        spans.push(Span::styled(current, st));
    }
    Line::from(spans)
}

/// The display width of a line.
pub fn line_width(line: &Line) -> usize {
    line.spans.iter().map(|s| width(&s.content)).sum()
}

/// Wraps multi-line text with one style.
pub fn wrap_plain(text: &str, width: usize, style: Style) -> Vec<Line<'static>> {
    text.lines()
        .flat_map(|l| wrap_runs(&[(l.to_string(), style)], width))
        .collect()
}

/// An up time (or any elapsed time) in one format everywhere in the TUI:
/// `12s`, `4m`, `1h05m`, `2d3h`. Seconds only in the first minute.
pub fn up_time(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86_400 => format!("{}h{:02}m", secs / 3600, secs / 60 % 60),
        _ => format!("{}d{}h", secs / 86_400, secs % 86_400 / 3600),
    }
}

/// How long until [`up_time`] of `up` reads differently: the next second
/// in the first minute, then the next minute, then (past a day) the next
/// hour.
pub fn up_time_turns_in(up: std::time::Duration) -> std::time::Duration {
    let ms = up.as_millis();
    let step: u128 = match up.as_secs() {
        0..60 => 1_000,
        60..86_400 => 60_000,
        _ => 3_600_000,
    };
    std::time::Duration::from_millis((step - ms % step) as u64)
}

/// Whether `line` mentions `@name` (a whole name: `@coder` is not in
/// `@coders`).
pub fn mentions_name(line: &str, name: &str) -> bool {
    let needle = format!("@{name}");
    line.match_indices(&needle).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + needle.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-')
    })
}

/// The line of a message to preview for `name`'s inbox: the first one
/// that mentions `@name`, else the first one with text that is not an
/// agent-operation marker (`=== … ===`).
pub fn preview_line<'a>(text: &'a str, name: &str) -> &'a str {
    let marker = |l: &str| l.starts_with("===") && l.ends_with("===");
    let lines = || {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !marker(l))
    };
    lines()
        .find(|l| mentions_name(l, name))
        .or_else(|| lines().next())
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn wraps_at_spaces_and_inside_long_words() {
        let s = Style::new();
        assert_eq!(
            texts(&wrap_runs(&[("hello big world".into(), s)], 9)),
            ["hello ", "big world"]
        );
        assert_eq!(
            texts(&wrap_runs(&[("abcdefghij".into(), s)], 4)),
            ["abcd", "efgh", "ij"]
        );
        assert_eq!(texts(&wrap_runs(&[("".into(), s)], 4)), [""]);
        assert_eq!(
            texts(&wrap_runs(&[("日本語".into(), s)], 4)),
            ["日本", "語"]
        );
        assert_eq!(texts(&wrap_runs(&[("x".into(), s)], 0)), ["x"]);
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        assert_eq!(
            truncate_middle("findings/review.md.theirs", 16),
            "findi….md.theirs"
        );
        assert_eq!(truncate_middle("abc", 4), "abc");
        let mark = Style::new().bold();
        let hit = highlight_matches(&Line::from("Greet and GREET"), "greet", mark);
        assert_eq!(texts(std::slice::from_ref(&hit)), ["Greet and GREET"]);
        assert_eq!(hit.spans[0].style, mark);
        assert_eq!(hit.spans[1].style, Style::new());
        assert_eq!(hit.spans[2].style, mark);
        let line = Line::from(vec![Span::raw("ab"), Span::raw("cdef")]);
        assert_eq!(texts(&[truncate_line(line, 4)]), ["abc…"]);
    }

    #[test]
    fn mentions_get_their_style() {
        let m = Style::new().bold();
        let runs = mention_runs("hi @coder and @nobody", Style::new(), m, &|n| n == "coder");
        assert_eq!(runs[1], ("@coder".to_string(), m));
        assert_eq!(runs.len(), 3);
    }

    #[test]
    fn up_times_in_one_format() {
        assert_eq!(up_time(0), "0s");
        assert_eq!(up_time(12), "12s");
        assert_eq!(up_time(59), "59s");
        assert_eq!(up_time(60), "1m");
        assert_eq!(up_time(115), "1m");
        assert_eq!(up_time(3_599), "59m");
        assert_eq!(up_time(3_900), "1h05m");
        assert_eq!(up_time(10_800), "3h00m");
        assert_eq!(up_time(183_600), "2d3h");
        let ms = std::time::Duration::from_millis;
        assert_eq!(up_time_turns_in(ms(0)), ms(1_000));
        assert_eq!(up_time_turns_in(ms(12_300)), ms(700));
        assert_eq!(up_time_turns_in(ms(754_000)), ms(26_000));
        assert_eq!(up_time_turns_in(ms(90_000_000)), ms(3_600_000));
    }

    #[test]
    fn previews_show_the_line_that_mentions_the_owner() {
        let text = "=== AOP-INTERMEDIATE | agent=r ===\nReading the diff\n=== END-AOP-INTERMEDIATE ===\n@user please look at greet.sh";
        assert_eq!(preview_line(text, "user"), "@user please look at greet.sh");
        assert_eq!(preview_line(text, "coder"), "Reading the diff");
        assert_eq!(preview_line("hi @users\nthen @user", "user"), "then @user");
        assert_eq!(preview_line("", "user"), "");
    }
}
