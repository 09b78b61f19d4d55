//! Folding a turn's events and exit into one outcome: success, answer,
//! session, usage, and a reason when it failed.

use std::path::PathBuf;

use super::capped::{OUTPUT_CAP, cut_to};
use super::event::{BackendEvent, Usage, UsageMode};

/// How a turn ended.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurnOutcome {
    pub success: bool,
    /// The final answer, when the backend gave one (at most
    /// [`OUTPUT_CAP`] bytes). Kept when the turn failed too: what an agent
    /// printed before it was stopped or timed out is archived, not lost.
    pub answer: Option<String>,
    pub session_id: Option<String>,
    pub usage: Usage,
    /// Why it failed.
    pub error: Option<String>,
    /// Names of the tools called, in order.
    pub tools_called: Vec<String>,
    /// Whether awtui's MCP server was connected (`Some(false)`: the turn ran
    /// without awtui's tools), when the CLI reports it.
    pub tools_connected: Option<bool>,
    /// Tools the CLI refused for lack of permission.
    pub refused: Vec<String>,
    /// Whether the answer or a line of output was cut at [`OUTPUT_CAP`].
    pub truncated: bool,
    /// When `truncated`, the agent's whole raw output (a file the engine
    /// moves into the output archive), if it could be kept.
    pub full_output: Option<PathBuf>,
}

/// Accumulates events into a [`TurnOutcome`].
#[derive(Debug)]
pub struct OutcomeBuilder {
    mode: UsageMode,
    outcome: TurnOutcome,
    reported_error: Option<String>,
}

/// How the process ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Exit {
    /// It exited with this code (`None` when killed by a signal).
    Code(Option<i32>),
    /// We stopped it (user stop).
    Stopped,
    /// It ran longer than the agent's timeout.
    TimedOut(std::time::Duration),
}

impl OutcomeBuilder {
    /// Starts an empty outcome for a backend with this usage mode.
    pub fn new(mode: UsageMode) -> Self {
        OutcomeBuilder {
            mode,
            outcome: TurnOutcome::default(),
            reported_error: None,
        }
    }

    /// Folds one event in.
    pub fn apply(&mut self, event: &BackendEvent) {
        let o = &mut self.outcome;
        match event {
            BackendEvent::Session { id } => o.session_id = Some(id.clone()),
            BackendEvent::ToolCall { name } => o.tools_called.push(name.clone()),
            BackendEvent::Usage { usage } => match self.mode {
                UsageMode::Total => o.usage = *usage,
                UsageMode::PerStep => o.usage.add(*usage),
            },
            BackendEvent::Final { text } => {
                let mut text = text.clone();
                o.truncated |= cut_to(&mut text, OUTPUT_CAP);
                o.answer = Some(text);
            }
            BackendEvent::Error { message } => self.reported_error = Some(message.clone()),
            BackendEvent::Thinking
            | BackendEvent::Text { .. }
            | BackendEvent::ToolDone { .. }
            | BackendEvent::Stream { .. }
            | BackendEvent::Tool { .. }
            | BackendEvent::Plan { .. } => {}
        }
    }

    /// Records that output was cut at the cap, and where the whole of it
    /// is.
    pub fn truncated(&mut self, full_output: Option<PathBuf>) {
        self.outcome.truncated = true;
        self.outcome.full_output = full_output;
    }

    /// Records whether the CLI connected to awtui's MCP server.
    pub fn tools_connected(&mut self, connected: Option<bool>) {
        self.outcome.tools_connected = connected;
    }

    /// Records the tools the CLI refused for lack of permission.
    pub fn refused(&mut self, tools: Vec<String>) {
        self.outcome.refused = tools;
    }

    /// Whether a final answer arrived.
    pub fn has_answer(&self) -> bool {
        self.outcome.answer.is_some()
    }

    /// Whether the answer was cut at the cap so far.
    pub fn is_truncated(&self) -> bool {
        self.outcome.truncated
    }

    /// The outcome, given how the process ended and the tail of its stderr.
    pub fn finish(mut self, exit: Exit, stderr_tail: &str) -> TurnOutcome {
        let stderr = stderr_tail.trim();
        let error = match (&exit, self.reported_error.take()) {
            (Exit::Stopped, _) => Some("stopped".to_string()),
            (Exit::TimedOut(d), _) => Some(format!("timed out after {}s", d.as_secs())),
            (_, Some(reported)) => Some(reported),
            (Exit::Code(Some(0)), None) => None,
            (Exit::Code(code), None) => {
                let status = code.map_or("was killed by a signal".to_string(), |c| {
                    format!("exited with status {c}")
                });
                Some(if stderr.is_empty() {
                    format!("the agent {status}")
                } else {
                    format!("the agent {status}: {}", stderr_reason(stderr))
                })
            }
        };
        self.outcome.success = error.is_none();
        // The reason quotes the agent (its stderr, its error event) and is
        // shown in status lines and posted in a system message: no escape
        // sequence of the agent's may ride along.
        self.outcome.error = error.map(|e| crate::sanitize::for_terminal(&e));
        self.outcome
    }
}

/// The last meaningful part of an agent's stderr: not a stack frame, not a
/// line of punctuation closing a multi-line block (gemini prints errors as
/// multi-line JSON and node error objects; their last line is `}`). A JSON
/// error is reduced to its message.
fn stderr_reason(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let balance = |l: &str| {
        let count = |set: &[char]| l.chars().filter(|c| set.contains(c)).count() as i64;
        count(&['}', ']']) - count(&['{', '['])
    };
    let mut depth = 0i64;
    let mut block_end = None;
    for (i, line) in lines.iter().enumerate().rev() {
        let t = line.trim();
        let before = depth;
        depth = (depth + balance(t)).max(0);
        if before == 0 && depth > 0 {
            block_end = Some(i);
        }
        if depth > 0 {
            continue;
        }
        // A block just closed here: it may be one JSON document.
        if let Some(end) = block_end.take()
            && let Some(message) = json_message(&lines[i..=end].join("\n"))
        {
            return message;
        }
        let noise = t.starts_with("at ") || !t.chars().any(char::is_alphanumeric);
        if !noise {
            return json_message(t).unwrap_or_else(|| t.to_string());
        }
    }
    lines
        .last()
        .map(|l| l.trim().to_string())
        .unwrap_or_default()
}

/// The `message` of a JSON error (`{"error": {"message": …}}` or
/// `{"message": …}`) starting at the first `{` of `text`.
fn json_message(text: &str) -> Option<String> {
    let start = text.find('{')?;
    let mut stream =
        serde_json::Deserializer::from_str(&text[start..]).into_iter::<serde_json::Value>();
    let v = stream.next()?.ok()?;
    let message = v
        .pointer("/error/message")
        .or_else(|| v.get("message"))
        .and_then(serde_json::Value::as_str)?;
    Some(message.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn success_needs_exit_zero_and_no_reported_error() {
        let mut b = OutcomeBuilder::new(UsageMode::Total);
        b.apply(&BackendEvent::Session { id: "s".into() });
        b.apply(&BackendEvent::Final { text: "ok".into() });
        let o = b.finish(Exit::Code(Some(0)), "");
        assert!(o.success);
        assert_eq!(
            (o.answer.as_deref(), o.session_id.as_deref()),
            (Some("ok"), Some("s"))
        );

        let mut b = OutcomeBuilder::new(UsageMode::Total);
        b.apply(&BackendEvent::Error {
            message: "quota".into(),
        });
        assert_eq!(
            b.finish(Exit::Code(Some(0)), "").error.as_deref(),
            Some("quota")
        );

        let b = OutcomeBuilder::new(UsageMode::Total);
        let o = b.finish(Exit::Code(Some(2)), "warning\nfatal: no auth\n\n");
        assert_eq!(
            o.error.as_deref(),
            Some("the agent exited with status 2: fatal: no auth")
        );
    }

    #[test]
    fn the_reason_is_the_last_meaningful_part_of_stderr() {
        let reason = |stderr: &str| {
            OutcomeBuilder::new(UsageMode::Total)
                .finish(Exit::Code(Some(1)), stderr)
                .error
                .unwrap()
        };
        // Gemini CLI's multi-line JSON error.
        let json = "Loaded cached credentials.\n{\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"API key not valid\"\n  }\n}\n";
        assert_eq!(
            reason(json),
            "the agent exited with status 1: API key not valid"
        );
        // A node error object with its stack and fields.
        let node = "Error when talking to Gemini API _ApiError: {\"error\":{\"code\":400,\"message\":\"quota\"}}\n    at throwErrorIfNotOK (file:///x.js:1:2)\n    at async Turn.run (file:///x.js:3:4) {\n  status: 400\n}\n";
        assert_eq!(reason(node), "the agent exited with status 1: quota");
        // Plain text keeps its last line.
        assert_eq!(
            reason("starting\nfatal: no auth\n"),
            "the agent exited with status 1: fatal: no auth"
        );
    }

    #[test]
    fn the_reason_carries_no_escape_sequences() {
        let b = OutcomeBuilder::new(UsageMode::Total);
        let o = b.finish(
            Exit::Code(Some(1)),
            "\x1b]0;pwned\x07\x1b[2Jboom \x1b]52;c;aGk=\x07now\n",
        );
        assert_eq!(
            o.error.as_deref(),
            Some("the agent exited with status 1: boom now")
        );
        let mut b = OutcomeBuilder::new(UsageMode::Total);
        b.apply(&BackendEvent::Error {
            message: "quota\x1b[31m gone\x07".into(),
        });
        assert_eq!(
            b.finish(Exit::Code(Some(0)), "").error.as_deref(),
            Some("quota gone")
        );
    }

    #[test]
    fn usage_totals_or_steps() {
        let u = |i, o| BackendEvent::Usage {
            usage: Usage {
                input_tokens: i,
                output_tokens: o,
                cost_usd: Some(0.5),
            },
        };
        let mut total = OutcomeBuilder::new(UsageMode::Total);
        let mut steps = OutcomeBuilder::new(UsageMode::PerStep);
        for e in [u(10, 1), u(20, 2)] {
            total.apply(&e);
            steps.apply(&e);
        }
        assert_eq!(total.finish(Exit::Code(Some(0)), "").usage.input_tokens, 20);
        let s = steps.finish(Exit::Code(Some(0)), "").usage;
        assert_eq!(
            (s.input_tokens, s.output_tokens, s.cost_usd),
            (30, 3, Some(1.0))
        );
    }

    #[test]
    fn stops_and_timeouts_are_failures_with_reasons() {
        let o = OutcomeBuilder::new(UsageMode::Total)
            .finish(Exit::TimedOut(std::time::Duration::from_secs(30)), "");
        assert_eq!(o.error.as_deref(), Some("timed out after 30s"));
        let o = OutcomeBuilder::new(UsageMode::Total).finish(Exit::Stopped, "");
        assert!(!o.success);
    }

    #[test]
    fn an_answer_over_the_cap_is_cut_and_marked() {
        let mut b = OutcomeBuilder::new(UsageMode::Total);
        b.apply(&BackendEvent::Final {
            text: "x".repeat(OUTPUT_CAP + 10),
        });
        assert!(b.is_truncated());
        let o = b.finish(Exit::Code(Some(0)), "");
        assert_eq!(o.answer.map(|a| a.len()), Some(OUTPUT_CAP));
        assert!(o.truncated);
    }
}
