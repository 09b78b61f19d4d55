//! `awtui mail check [--strict] <file|->`: checks one Agent Mail status
//! message (as an agent writes it to the channel: leading `@mentions` are
//! skipped) and prints each problem, then a one-line verdict, the way
//! `awtui aop check` does for AOP blocks.

use super::aop_check::{CheckArgs, read_input};
use super::exit;
use crate::protocols::agent_mail::{self, MailCheck, Mode};
use crate::{errln, outln};

/// Reads the source (`-` for stdin), prints problems as `name: level: …`
/// and a verdict. With `--strict`, any problem makes it exit 1.
pub fn run(args: &CheckArgs) -> u8 {
    let strict = args.strict;
    let (name, text) = match read_input(&args.source) {
        Ok(t) => t,
        Err(e) => {
            errln!("{e}");
            return exit::INVALID;
        }
    };
    let mode = if strict { Mode::Strict } else { Mode::Lenient };
    let checked = agent_mail::check(&text, mode);
    for line in report(&name, &checked, mode) {
        outln!("{line}");
    }
    if strict && !checked.problems.is_empty() {
        exit::FAILED
    } else {
        exit::OK
    }
}

/// The lines printed for one checked message: each problem, then the
/// verdict (type, bead, thread, whether it awaits an ack, the count).
pub fn report(name: &str, checked: &MailCheck, mode: Mode) -> Vec<String> {
    let level = match mode {
        Mode::Strict => "error",
        Mode::Lenient => "warning",
    };
    let mut lines: Vec<String> = checked
        .problems
        .iter()
        .map(|p| format!("{name}: {level}: {p}"))
        .collect();
    let record = &checked.record;
    let mut what = match (record.kind(), record.in_reply_to) {
        (Some(kind), _) => kind.keyword().to_string(),
        (None, Some(original)) => format!("a reply to {original} (not a status message)"),
        (None, None) => "no known message type".to_string(),
    };
    if let Some(bead) = &record.bead_id {
        what.push_str(&format!(" about {bead}"));
    }
    if record.thread_id.is_some() && record.thread_id != record.bead_id {
        what.push_str(&format!(
            " in thread {}",
            record.thread_id.as_deref().unwrap_or_default()
        ));
    }
    if record.ack_required {
        what.push_str(" (ack required)");
    }
    let n = checked.problems.len();
    lines.push(format!(
        "{name}: {what}, {n} finding{}",
        if n == 1 { "" } else { "s" }
    ));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_names_the_type_bead_and_ack() {
        let text = "@user [ol-3] HELP_REQUEST\nIssue Type: STUCK\n## Problem\np\n## Question\nq?";
        let c = agent_mail::check(text, Mode::Strict);
        assert_eq!(
            report("m.txt", &c, Mode::Strict),
            ["m.txt: HELP_REQUEST about ol-3 (ack required), 0 findings"]
        );
        let c = agent_mail::check("hello there", Mode::Lenient);
        let lines = report("<stdin>", &c, Mode::Lenient);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].starts_with("<stdin>: warning: no known message type"));
        assert_eq!(lines[1], "<stdin>: no known message type, 1 finding");
    }
}
