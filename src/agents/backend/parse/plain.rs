//! Plain output (the `command` backend): every stdout line is answer text.

use super::StreamParser;
use crate::agents::backend::event::BackendEvent;

/// Collects stdout as the answer.
#[derive(Debug, Default)]
pub struct PlainParser {
    answer: String,
}

impl StreamParser for PlainParser {
    fn line(&mut self, line: &str) -> Vec<BackendEvent> {
        self.answer.push_str(line);
        self.answer.push('\n');
        vec![BackendEvent::Text {
            text: line.to_string(),
        }]
    }

    fn finish(&mut self) -> Vec<BackendEvent> {
        let text = std::mem::take(&mut self.answer).trim_end().to_string();
        vec![BackendEvent::Final { text }]
    }
}
