//! awtui never repeats a secret: an agent that prints its token (to
//! stdout, to stderr as it fails, in a channel post) does not get it into
//! the channel, awtui's log, `list --json`, `run --json` or `attach --follow`.

use crate::cli_support;

use cli_support::{World, wait_for};

/// An agent that leaks its token every way it can, then fails.
const LEAKY: &str = r#"#!/bin/sh
cat >/dev/null
printf '%s' "$AWTUI_TOKEN" > "$AWTUI_AGENT.token"
"${AWTUI_BIN:-awtui}" ctx send "my token is $AWTUI_TOKEN" >/dev/null
echo "stdout says $AWTUI_TOKEN"
echo "fatal: auth failed for token $AWTUI_TOKEN" >&2
exit 1
"#;

fn leaky_world() -> World {
    let w = World::new();
    w.script("leak.sh", LEAKY);
    std::fs::write(
        w.dir.join("leak.yaml"),
        "name: leak\nagents:\n  a:\n    command: ./leak.sh\nlimits:\n  retries: 0\nkickoff: \"@a go\"\n",
    )
    .unwrap();
    w
}

fn token(w: &World) -> String {
    wait_for("the agent's turn", || {
        std::fs::read_to_string(w.dir.join("a.token"))
            .ok()
            .filter(|t| t.len() == 64)
    })
}

#[test]
fn a_token_an_agent_prints_is_redacted_everywhere_awtui_shows_or_keeps_it() {
    let mut w = leaky_world();
    let mut cmd = w.cmd(&[
        "start",
        "leak.yaml",
        "--instance",
        "l",
        "--background",
        "--json",
    ]);
    cmd.env("AWTUI_BIN", env!("CARGO_BIN_EXE_awtui"));
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let pid: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    w.adopt(pid["pid"].as_u64().unwrap() as u32);
    let token = token(&w);

    // The failure reached the channel (awtui posts why the agent failed).
    let channel = wait_for("the failure and the post in the channel", || {
        let text = std::fs::read_to_string(w.dir.join(".workflow/l/channel.jsonl")).ok()?;
        (text.contains("auth failed") && text.contains("my token is")).then_some(text)
    });
    assert!(!channel.contains(&token), "channel: {channel}");
    assert!(channel.contains("[redacted token]"), "{channel}");
    let mirror = std::fs::read_to_string(w.dir.join(".workflow/l/channel.md")).unwrap();
    assert!(!mirror.contains(&token), "channel.md: {mirror}");

    let listed = w.run(&["list", "--json"]);
    assert!(!listed.stdout.contains(&token), "list: {}", listed.stdout);

    // attach --follow replays the instance.
    let (_, mut lines, _stdin) = w.spawn(&["attach", "l", "--follow"]);
    lines.wait_for("auth failed");
    lines.wait_for("my token is");
    assert!(
        !lines.seen.iter().any(|l| l.contains(&token)),
        "attach: {:?}",
        lines.seen
    );

    let log = std::fs::read_to_string(w.dir.join(".workflow/l/awtui.log")).unwrap_or_default();
    assert!(!log.contains(&token), "awtui.log: {log}");
}

#[test]
fn run_json_carries_no_token() {
    let w = leaky_world();
    let mut cmd = w.cmd(&["run", "leak.yaml", "--json"]);
    cmd.env("AWTUI_BIN", env!("CARGO_BIN_EXE_awtui"));
    let out = cmd.output().unwrap();
    let token = token(&w);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("auth failed") || stdout.contains("my token is"),
        "{stdout}"
    );
    assert!(!stdout.contains(&token), "run --json: {stdout}");
    assert!(!stderr.contains(&token), "run stderr: {stderr}");
}

/// `--json` keeps every value but escapes what a terminal would hide or
/// reorder: C1 controls and bidirectional marks.
#[test]
fn json_output_escapes_c1_controls_and_bidi_marks() {
    let mut w = World::new();
    w.script(
        "bidi.sh",
        "#!/bin/sh\ncat >/dev/null\nprintf 'looks \\302\\233 fine \\342\\200\\256 txt.exe \\342\\201\\247 end\\n'\n",
    );
    std::fs::write(
        w.dir.join("bidi.yaml"),
        "name: bidi\nagents:\n  a:\n    command: ./bidi.sh\nkickoff: \"@a go\"\n",
    )
    .unwrap();
    let run = w.run(&["run", "bidi.yaml", "--json"]);
    assert!(run.stdout.contains("txt.exe"), "{run:?}");
    w.start_background("bidi.yaml", "b");
    let peek = wait_for("the agent's answer to be peeked", || {
        let peek = w.run(&["peek", "--to", "@b", "--json"]);
        peek.stdout.contains("txt.exe").then_some(peek)
    });
    for (what, out) in [("run", &run.stdout), ("peek", &peek.stdout)] {
        for hidden in ['\u{9b}', '\u{202e}', '\u{2067}'] {
            assert!(
                !out.contains(hidden),
                "{what} --json passes {hidden:?}: {out}"
            );
        }
        assert!(
            out.contains("\\u202e"),
            "{what} --json keeps the mark, escaped: {out}"
        );
    }
    for out in [&run.stdout, &peek.stdout] {
        let value: serde_json::Value = serde_json::from_str(out).unwrap();
        assert!(
            value.to_string().contains('\u{202e}'),
            "the value is the same"
        );
    }
}
