//! The real binary writing to pipes that close or are never read: awtui
//! neither panics nor stalls, keeps serving the instance, and stops cleanly
//! with its agents.

use crate::cli_support;

use std::io::Read;
use std::process::Child;

use cli_support::{World, alive, wait_for};

/// A workflow whose agent `worker` runs `script` (woken by the kickoff)
/// and whose agent `helper` answers at once.
fn workflow(w: &World, script: &str) {
    w.script("worker.sh", script);
    w.script(
        "helper.sh",
        "#!/bin/sh\ncat >/dev/null\necho at your service\n",
    );
    std::fs::write(
        w.dir.join("wf.yaml"),
        "agents:\n  worker:\n    command: ./worker.sh\n  helper:\n    command: ./helper.sh\n\
         kickoff: \"@worker go\"\n",
    )
    .unwrap();
}

/// `awtui start wf.yaml --instance p` with stdout and stderr both on the
/// write end of one pipe (`2>&1 |`); the read end for the test.
fn start_into_pipe(w: &mut World) -> (Child, std::io::PipeReader) {
    let (reader, writer) = std::io::pipe().unwrap();
    let mut cmd = w.cmd(&["start", "wf.yaml", "--instance", "p"]);
    cmd.stdout(writer.try_clone().unwrap()).stderr(writer);
    let child = cmd.spawn().unwrap();
    // The command holds copies of the write end: only the child's remain.
    drop(cmd);
    w.adopt(child.id());
    (child, reader)
}

fn exit_code(child: &mut Child) -> i32 {
    wait_for("awtui to exit", || child.try_wait().unwrap())
        .code()
        .unwrap_or(-1)
}

fn log(w: &World) -> String {
    std::fs::read_to_string(w.dir.join(".workflow/p/awtui.log")).unwrap_or_default()
}

#[test]
fn a_pipe_closed_after_100_bytes_neither_crashes_nor_strands_agents() {
    let mut w = World::new();
    let pid_file = w.dir.join("worker.pid");
    // The agent works until it is stopped.
    workflow(
        &w,
        &format!(
            "#!/bin/sh\ncat >/dev/null\necho $$ > '{}'\nwhile :; do sleep 0.05; done\n",
            pid_file.display()
        ),
    );
    let (mut awtui, mut reader) = start_into_pipe(&mut w);
    let mut head = [0u8; 100];
    reader.read_exact(&mut head).unwrap();
    assert!(
        String::from_utf8_lossy(&head).contains("instance p running"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    // `| head -c 100` exits.
    drop(reader);
    let worker: u32 = wait_for("the agent to start", || {
        std::fs::read_to_string(&pid_file).ok()?.trim().parse().ok()
    });
    // More output for the closed pipe: messages and status changes.
    let r = w.run(&["send", "@helper are you there?"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    wait_for("the helper's answer", || {
        w.channel("p")
            .iter()
            .any(|m| m["from"] == "helper")
            .then_some(())
    });
    // Still serving.
    let listed = w.list();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["responsive"], true, "{listed:?}");
    assert!(awtui.try_wait().unwrap().is_none(), "awtui exited");

    let r = w.run(&["stop", "@p"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(exit_code(&mut awtui), 0, "log:\n{}", log(&w));
    assert!(!alive(worker), "the agent (pid {worker}) was left behind");
    let log = log(&w);
    assert!(!log.contains("panicked"), "{log}");
}

#[test]
fn a_pipe_nobody_reads_does_not_hold_up_stop() {
    let mut w = World::new();
    // One answer far bigger than a pipe holds (64 KiB).
    workflow(
        &w,
        "#!/bin/sh\ncat >/dev/null\ni=0\nwhile [ $i -lt 3000 ]; do\n  \
         echo \"line $i of a long answer that fills any pipe nobody reads\"\n  \
         i=$((i+1))\ndone\n",
    );
    let (mut awtui, reader) = start_into_pipe(&mut w);
    wait_for("the long answer in the channel", || {
        w.channel("p")
            .iter()
            .any(|m| m["from"] == "worker")
            .then_some(())
    });
    // The agent can be steered meanwhile.
    let r = w.run(&["send", "@worker again"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    wait_for("the second answer", || {
        (w.channel("p")
            .iter()
            .filter(|m| m["from"] == "worker")
            .count()
            >= 2)
            .then_some(())
    });
    let r = w.run(&["stop", "@p"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("stopped @p"), "{}", r.stdout);
    assert_eq!(exit_code(&mut awtui), 0, "log:\n{}", log(&w));
    drop(reader);
    assert!(!log(&w).contains("panicked"));
}

#[test]
fn a_background_instance_logs_warnings_not_every_message() {
    let mut w = World::demo();
    // The channel's readable mirror cannot be written: the store warns
    // (through `tracing`) on every message.
    std::fs::create_dir_all(w.dir.join(".workflow/p/channel.md")).unwrap();
    w.start_background("demo.yaml", "p");
    wait_for("the demo to finish", || {
        w.channel("p")
            .iter()
            .any(|m| m["from"] == "reviewer")
            .then_some(())
    });
    let r = w.run(&["stop", "@p"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let log = log(&w);
    assert!(
        log.contains("WARN") && log.contains("cannot update") && log.contains("channel.md"),
        "{log}"
    );
    // Status changes are logged; the messages themselves are in the
    // channel, not the log.
    assert!(log.contains("reviewer: thinking"), "{log}");
    assert!(!log.contains("── #"), "{log}");
    assert!(!log.contains("please plan it"), "{log}");
    assert!(!log.contains("the review is done"), "{log}");
}
