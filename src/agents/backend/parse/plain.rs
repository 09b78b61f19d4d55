//! Plain output (the `command` backend): every stdout line is answer text.

use super::StreamParser;
use crate::agents::backend::capped::{OUTPUT_CAP, push_capped};
use crate::agents::backend::event::BackendEvent;

/// Collects stdout as the answer, up to [`OUTPUT_CAP`].
#[derive(Debug, Default)]
pub struct PlainParser {
    answer: String,
    cut: bool,
}

impl StreamParser for PlainParser {
    fn line(&mut self, line: &str) -> Vec<BackendEvent> {
        if !self.cut {
            self.cut = push_capped(&mut self.answer, line, OUTPUT_CAP)
                || push_capped(&mut self.answer, "\n", OUTPUT_CAP);
        }
        vec![BackendEvent::Text {
            text: line.to_string(),
        }]
    }

    fn finish(&mut self) -> Vec<BackendEvent> {
        let text = std::mem::take(&mut self.answer).trim_end().to_string();
        vec![BackendEvent::Final { text }]
    }

    fn truncated(&self) -> bool {
        self.cut
    }
}
