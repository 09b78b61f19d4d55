//! `awtui aop check` and `awtui mail check` on the real binary: findings
//! (with line numbers for AOP); strict mode fails on any error, lenient mode
//! only warns.

use crate::cli_support;

use std::io::Write;
use std::process::{Command, Stdio};

fn check(args: &[&str], stdin: &str) -> (i32, String) {
    checker("aop", args, stdin)
}

/// `awtui <tool> check <args>` with `stdin`: the exit code and stdout.
fn checker(tool: &str, args: &[&str], stdin: &str) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_awtui"))
        .args([tool, "check"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

const VALID: &str = "=== AOP-FINAL | agent=coder | status=all tests pass ===\nPass through EXACTLY as-is\ndone\n=== END-AOP-FINAL ===\n";

#[test]
fn valid_output_passes_in_strict_mode() {
    let (code, out) = check(&["--strict", "-"], VALID);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("<stdin>: 1 block (FINAL), 0 findings"),
        "{out}"
    );
}

#[test]
fn problems_are_reported_with_lines_and_fail_only_in_strict_mode() {
    let text = format!("{VALID}=== AOP-ERROR | agent=coder ===\nboom\n");
    let (code, out) = check(&["-"], &text);
    assert_eq!(code, 0, "lenient mode warns: {out}");
    assert!(out.contains("<stdin>:5: warning:"), "{out}");
    let (code, out) = check(&["--strict", "-"], &text);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("<stdin>:5: error:") && out.contains("END-AOP-ERROR"),
        "{out}"
    );
}

#[test]
fn files_are_read_and_missing_files_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.txt");
    std::fs::write(&path, "no markers here\n").unwrap();
    let (code, out) = check(&["--strict", path.to_str().unwrap()], "");
    assert_eq!(code, 1);
    assert!(
        out.contains(&format!("{}:1: error:", path.display())),
        "{out}"
    );
    let (code, _) = check(&["/nonexistent/out.txt"], "");
    assert_eq!(code, 2);
}

/// The seed's own examples write bare markers (`=== AOP-FINAL ===`, no
/// `agent=`): a strict check passes them, warning about the missing agent.
#[test]
fn the_seeds_bare_examples_pass_a_strict_check_with_a_warning() {
    let seed = "=== AOP-CONTEXT ===\n{\"metadata\": \"values\", \"stats\": {}}\n=== END-AOP-CONTEXT ===\n\n=== AOP-FINAL ===\n**Pass through EXACTLY as-is** — NO summarizing, NO rephrasing, NO commentary\n[main content]\n=== END-AOP-FINAL ===\n";
    let (code, out) = check(&["--strict", "-"], seed);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("<stdin>:5: warning:") && out.contains("agent"),
        "{out}"
    );
    assert!(
        out.contains("2 blocks (CONTEXT, FINAL), 1 finding"),
        "{out}"
    );
    let (code, out) = check(
        &["--strict", "-"],
        "=== AOP-ERROR ===\n[error message, stack trace, diagnostic info]\n=== END-AOP-ERROR ===\n",
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("<stdin>:1: warning:"), "{out}");
}

/// `awtui mail check` checks one Agent Mail message like `aop check` checks
/// AOP: problems listed, a verdict line, exit 1 only in strict mode; a
/// channel message's leading @mentions are skipped; files are read too.
#[test]
fn mail_check_lists_problems_and_fails_only_in_strict_mode() {
    let good = "@lead [ol-3] PROGRESS\nBead: ol-3\nStep: 2/5 parser\nStatus: on track\n";
    let (code, out) = checker("mail", &["--strict", "-"], good);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out, "<stdin>: PROGRESS about ol-3, 0 findings\n");

    let bad = "@lead PROGRESS\nStep: one\n";
    let (code, out) = checker("mail", &["-"], bad);
    assert_eq!(code, 0, "lenient mode warns: {out}");
    assert!(
        out.contains("<stdin>: warning: PROGRESS is missing required field `Status`"),
        "{out}"
    );
    let (code, out) = checker("mail", &["--strict", "-"], bad);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("<stdin>: error: PROGRESS is missing required field `Bead`"),
        "{out}"
    );
    assert!(out.ends_with("<stdin>: PROGRESS, 2 findings\n"), "{out}");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("help.txt");
    std::fs::write(
        &path,
        "[ol-9] HELP_REQUEST\nIssue Type: STUCK\n## Problem\nthe build hangs\n## Question\nwhich flag?\n",
    )
    .unwrap();
    let (code, out) = checker("mail", &["--strict", path.to_str().unwrap()], "");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("HELP_REQUEST about ol-9 (ack required), 0 findings"),
        "{out}"
    );
    let (code, _) = checker("mail", &["--strict", "/nonexistent/message.txt"], "");
    assert_eq!(code, 2);
}

/// Issue 36: while agents run, an agent whose workflow asks for strict AOP
/// (`protocols: [aop-strict]`) and answers with unmarked text is noted
/// once per run (the seed: a strict receiver warns), however many such
/// turns it has; an agent taught AOP leniently (the default) is not.
#[test]
fn unmarked_output_of_a_strict_aop_agent_is_noted_once_per_run() {
    let w = cli_support::World::new();
    // strict answers plainly on each of its two turns; lenient too.
    w.script(
        "strict.sh",
        "#!/bin/sh\ncat >/dev/null\nn=$(( $(cat count 2>/dev/null || echo 0) + 1 ))\necho $n > count\nif [ $n = 1 ]; then echo '@lenient plain words'; else echo 'plain again'; fi\n",
    );
    w.script(
        "lenient.sh",
        "#!/bin/sh\ncat >/dev/null\necho '@strict plain too'\n",
    );
    std::fs::write(
        w.dir.join("strict.yaml"),
        "agents:\n  strict:\n    command: ./strict.sh\n    protocols: [aop-strict]\n  lenient:\n    command: ./lenient.sh\nkickoff: '@strict go'\n",
    )
    .unwrap();
    let r = w.run(&["run", "strict.yaml", "--instance", "strict"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let channel = w.channel("strict");
    let notes: Vec<&str> = channel
        .iter()
        .filter(|m| m["from"] == "system")
        .filter_map(|m| m["message"].as_str())
        .filter(|t| t.contains("unmarked output"))
        .collect();
    assert_eq!(notes.len(), 1, "{channel:#?}");
    assert!(notes[0].starts_with("strict's answer"), "{}", notes[0]);
    assert_eq!(
        channel.iter().filter(|m| m["from"] == "strict").count(),
        2,
        "two unmarked answers, one note: {channel:#?}"
    );
}
