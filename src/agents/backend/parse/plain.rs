//! Plain output (the `command` backend): every stdout line is answer text,
//! except AOP STREAM blocks: each is handed on whole as soon as its end
//! marker is read ([`BackendEvent::Stream`]), so the channel shows the
//! stream growing while the process runs, and it is left out of the
//! answer. A STREAM block still open when stdout closes stays in the
//! answer (nothing is lost).

use super::StreamParser;
use crate::agents::backend::capped::{OUTPUT_CAP, push_capped};
use crate::agents::backend::event::BackendEvent;
use crate::protocols::aop::stream_marker;

/// Collects stdout as the answer, up to [`OUTPUT_CAP`].
#[derive(Debug, Default)]
pub struct PlainParser {
    answer: String,
    cut: bool,
    /// A STREAM block being read (its lines so far).
    stream: Option<String>,
}

impl PlainParser {
    fn keep(&mut self, text: &str) {
        if !self.cut {
            self.cut = push_capped(&mut self.answer, text, OUTPUT_CAP);
        }
    }
}

impl StreamParser for PlainParser {
    fn line(&mut self, line: &str) -> Vec<BackendEvent> {
        let mut events = vec![BackendEvent::Text {
            text: line.to_string(),
        }];
        match (&mut self.stream, stream_marker(line)) {
            (Some(block), end) => {
                block.push_str(line);
                block.push('\n');
                if end == Some(true) {
                    let text = self.stream.take().unwrap_or_default();
                    events.push(BackendEvent::Stream { text });
                } else if block.len() > OUTPUT_CAP {
                    // Not a stream chunk but a runaway: back into the answer.
                    let text = self.stream.take().unwrap_or_default();
                    self.keep(&text);
                }
            }
            (None, Some(false)) => self.stream = Some(format!("{line}\n")),
            (None, _) => {
                self.keep(line);
                self.keep("\n");
            }
        }
        events
    }

    fn finish(&mut self) -> Vec<BackendEvent> {
        if let Some(open) = self.stream.take() {
            self.keep(&open);
        }
        let text = std::mem::take(&mut self.answer).trim_end().to_string();
        vec![BackendEvent::Final { text }]
    }

    fn truncated(&self) -> bool {
        self.cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(p: &mut PlainParser, text: &str) -> Vec<BackendEvent> {
        text.lines()
            .flat_map(|l| p.line(l))
            .filter(|e| !matches!(e, BackendEvent::Text { .. }))
            .collect()
    }

    #[test]
    fn stream_blocks_are_handed_on_as_they_end_and_left_out_of_the_answer() {
        let mut p = PlainParser::default();
        assert!(
            feed(
                &mut p,
                "working on it\n=== AOP-STREAM | chunk=1/2 ===\nhalf"
            )
            .is_empty()
        );
        let chunk = "=== AOP-STREAM | chunk=1/2 ===\nhalf\n=== END-AOP-STREAM ===\n";
        assert_eq!(
            feed(&mut p, "=== END-AOP-STREAM ==="),
            [BackendEvent::Stream { text: chunk.into() }]
        );
        feed(&mut p, "=== AOP-FINAL ===\nall done\n=== END-AOP-FINAL ===");
        assert_eq!(
            p.finish(),
            [BackendEvent::Final {
                text: "working on it\n=== AOP-FINAL ===\nall done\n=== END-AOP-FINAL ===".into()
            }]
        );
        // A stream never closed stays in the answer.
        let mut p = PlainParser::default();
        assert!(feed(&mut p, "=== AOP-STREAM ===\ncut off").is_empty());
        assert_eq!(
            p.finish(),
            [BackendEvent::Final {
                text: "=== AOP-STREAM ===\ncut off".into()
            }]
        );
    }
}
