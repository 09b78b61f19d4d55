//! `awtui aop check` on the real binary: findings with line numbers; strict
//! mode fails on any finding, lenient mode only warns.

use std::io::Write;
use std::process::{Command, Stdio};

fn check(args: &[&str], stdin: &str) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_awtui"))
        .args(["aop", "check"])
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
