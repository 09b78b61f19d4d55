//! Agent output as bytes, never trusted to be UTF-8 or reasonably sized:
//! split into lines, each decoded lossily and cut at [`OUTPUT_CAP`], and
//! text that grows (an answer) kept under the same cap. Pure: the process
//! runner reads, this decides.
//!
//! Why: a reader that stops at the first line that is not UTF-8 loses the
//! rest of the answer and closes the pipe, so the agent dies of SIGPIPE; a
//! reader without a cap turns a 50 MB answer into a 50 MB channel message
//! (and holds it in memory several times). The reader therefore never stops
//! before the end of the output: bytes past a cap are dropped here, and the
//! runner keeps the raw output for the archive.

/// The cap on one line of agent output and on one final answer: the MCP
/// body cap, so whatever an agent could post it can also answer.
pub const OUTPUT_CAP: usize = crate::context::MAX_BODY;

/// The cap as people read it ("4 MiB").
pub fn cap_label() -> String {
    format!("{} MiB", OUTPUT_CAP / (1024 * 1024))
}

/// Splits a byte stream into lines (without `\n` or a trailing `\r`),
/// decoded lossily; a line longer than the cap keeps its first `cap` bytes.
#[derive(Debug)]
pub struct LineSplitter {
    cap: usize,
    line: Vec<u8>,
    /// Whether any line was cut.
    cut: bool,
}

impl LineSplitter {
    /// A splitter whose lines keep at most `cap` bytes.
    pub fn new(cap: usize) -> Self {
        LineSplitter {
            cap,
            line: Vec::new(),
            cut: false,
        }
    }

    /// Feeds the next bytes; `out` gets every line they complete.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut impl FnMut(String)) {
        while !bytes.is_empty() {
            let (part, rest, complete) = match bytes.iter().position(|b| *b == b'\n') {
                Some(nl) => (&bytes[..nl], &bytes[nl + 1..], true),
                None => (bytes, &[][..], false),
            };
            let room = self.cap.saturating_sub(self.line.len());
            if part.len() > room {
                self.cut = true;
            }
            self.line.extend_from_slice(&part[..part.len().min(room)]);
            if complete {
                out(decode(&std::mem::take(&mut self.line)));
            }
            bytes = rest;
        }
    }

    /// Ends the stream: `out` gets the last line if it had no newline.
    pub fn finish(&mut self, out: &mut impl FnMut(String)) {
        if !self.line.is_empty() {
            out(decode(&std::mem::take(&mut self.line)));
        }
    }

    /// Whether a line was cut at the cap.
    pub fn cut(&self) -> bool {
        self.cut
    }
}

fn decode(line: &[u8]) -> String {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    String::from_utf8_lossy(line).into_owned()
}

/// Cuts `text` to at most `cap` bytes, at a character boundary; says
/// whether it cut.
pub fn cut_to(text: &mut String, cap: usize) -> bool {
    if text.len() <= cap {
        return false;
    }
    let mut end = cap;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    true
}

/// Appends `more` to `text` without growing it past `cap`; says whether
/// something was left out.
pub fn push_capped(text: &mut String, more: &str, cap: usize) -> bool {
    let room = cap.saturating_sub(text.len());
    if more.len() <= room {
        text.push_str(more);
        return false;
    }
    let mut end = room;
    while !more.is_char_boundary(end) {
        end -= 1;
    }
    text.push_str(&more[..end]);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]], cap: usize) -> (Vec<String>, bool) {
        let mut s = LineSplitter::new(cap);
        let mut lines = Vec::new();
        for c in chunks {
            s.feed(c, &mut |l| lines.push(l));
        }
        s.finish(&mut |l| lines.push(l));
        (lines, s.cut())
    }

    #[test]
    fn invalid_utf8_is_replaced_and_reading_goes_on() {
        let (lines, cut) = split(&[b"one\r\ntw", b"o \xff\xfe x\nthree\nlast"], 100);
        assert_eq!(lines, ["one", "two \u{fffd}\u{fffd} x", "three", "last"]);
        assert!(!cut);
    }

    #[test]
    fn long_lines_keep_their_start_and_the_next_line_is_whole() {
        let (lines, cut) = split(&[b"abcdef", b"ghij\nnext\n"], 4);
        assert_eq!(lines, ["abcd", "next"]);
        assert!(cut);
    }

    #[test]
    fn text_is_cut_at_a_character_boundary() {
        let mut t = "héé".to_string();
        assert!(cut_to(&mut t, 4), "é is two bytes");
        assert_eq!(t, "hé");
        let mut t = "ab".to_string();
        assert!(!push_capped(&mut t, "c", 3));
        assert!(push_capped(&mut t, "éx", 4));
        assert_eq!(t, "abc");
        assert_eq!(cap_label(), "4 MiB");
    }
}
