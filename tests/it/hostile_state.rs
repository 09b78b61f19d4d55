//! awtui's own files under hostile or unlucky conditions: registry records
//! that are FIFOs or links to endless devices, a start right after
//! `kill -9`, and instances found from the reduced environment MCP clients
//! and cron give their children.

use crate::cli_support;

use cli_support::{World, wait_for};

const IDLE: &str = "name: idle\nagents:\n  a:\n    command: ./agent.sh\n";

fn idle_world() -> World {
    let w = World::new();
    w.script("agent.sh", "#!/bin/sh\ncat >/dev/null\n");
    std::fs::write(w.dir.join("idle.yaml"), IDLE).unwrap();
    w
}

/// The record a running instance keeps in its folder.
fn instance_record(w: &World, instance: &str) -> serde_json::Value {
    let path = w.dir.join(".workflow").join(instance).join("instance.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn kill9(pid: u32) {
    let p = rustix::process::Pid::from_raw(pid as i32).unwrap();
    rustix::process::kill_process(p, rustix::process::Signal::KILL).unwrap();
}

#[test]
fn a_start_right_after_kill_9_is_never_refused() {
    let mut w = idle_world();
    let mut pid = w.start_background("idle.yaml", "k");
    for round in 0..30 {
        // No waiting for the killed process: the next start must cope
        // with a predecessor the kernel is still tearing down.
        kill9(pid);
        let r = w.run(&[
            "start",
            "idle.yaml",
            "--instance",
            "k",
            "--background",
            "--json",
        ]);
        assert_eq!(
            r.code, 0,
            "round {round}: start after kill -9 of {pid} refused:\n{}{}",
            r.stdout, r.stderr
        );
        pid = r.json()["pid"].as_u64().unwrap() as u32;
        w.adopt(pid);
    }
}

/// `list`, `send` and `stop --all` end (with the bad record named or
/// skipped) when a registry record is a FIFO or a link to an endless
/// device; a running instance is still listed.
#[test]
fn registry_records_that_are_fifos_or_devices_do_not_hang_or_bloat_commands() {
    let mut w = idle_world();
    w.start_background("idle.yaml", "r");
    let registry = w.state.join("instances");
    assert!(registry.is_dir(), "the registry is where the test expects");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        registry.join("fifo.0123456789abcdef.json"),
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    std::os::unix::fs::symlink("/dev/zero", registry.join("zero.0123456789abcdef.json")).unwrap();
    std::fs::write(
        registry.join("big.0123456789abcdef.json"),
        vec![b' '; 8 * 1024 * 1024],
    )
    .unwrap();

    let run = |args: &[&str]| {
        let mut child = w
            .cmd(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        wait_for(&format!("awtui {args:?} to end"), || {
            child.try_wait().unwrap().map(|_| ())
        });
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, listed) = run(&["list", "--json"]);
    assert_eq!(code, 0);
    let listed: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["instance"].as_str())
        .collect();
    assert_eq!(names, ["r"], "{listed}");
    let (code, _) = run(&["send", "hello", "--to", "a@r"]);
    assert_eq!(code, 0);
    let (code, _) = run(&["stop", "--all"]);
    assert_eq!(code, 0);
    // The special files are left alone (not ours to delete), the command
    // just does not read them.
    assert!(registry.join("fifo.0123456789abcdef.json").exists());
}

/// `awtui <args>` in `w`'s folder with only HOME, PATH and USER (as MCP
/// clients and cron run it), plus `extra`.
fn bare(
    w: &World,
    home: &std::path::Path,
    extra: &[(&str, &std::path::Path)],
    args: &[&str],
) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_awtui"));
    c.args(args)
        .current_dir(&w.dir)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("USER", "tester")
        .stdin(std::process::Stdio::null());
    for (k, v) in extra {
        c.env(k, v);
    }
    c
}

/// One request and its answer through `awtui mcp`, the way an MCP client
/// with a reduced environment runs it.
fn bridge_answers(w: &World, home: &std::path::Path, instance: &str) -> String {
    use std::io::Write;
    let mut child = bare(
        w,
        home,
        &[],
        &["mcp", "--instance", instance, "--agent", "a"],
    )
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    writeln!(stdin, "{init}").unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"channel_send","arguments":{{"message":"found you"}}}}}}"#
    )
    .unwrap();
    stdin.flush().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    let answer = loop {
        match rx.recv_timeout(cli_support::PATIENCE) {
            Ok(line) if line.contains(r#""id":2"#) => break line,
            Ok(line) => seen.push(line),
            Err(_) => {
                drop(stdin);
                let out = child.wait_with_output().unwrap();
                panic!(
                    "no answer from awtui mcp; saw {seen:?}; stderr: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    };
    drop(stdin);
    let _ = child.wait();
    answer
}

/// An instance started with `AWTUI_STATE_DIR`, with a private
/// `XDG_RUNTIME_DIR`, or with neither, is found by `list`, `awtui mcp`,
/// `send` and `stop` run with only HOME, PATH and USER.
#[test]
fn instances_are_found_from_a_reduced_environment() {
    let w = idle_world();
    let home = w.tmp.path().join("home");
    let runtime = w.tmp.path().join("runtime");
    let state = w.tmp.path().join("custom-state");
    for dir in [&home, &runtime, &state] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let variants: [(&str, Vec<(&str, &std::path::Path)>); 3] = [
        ("viastate", vec![("AWTUI_STATE_DIR", state.as_path())]),
        ("viaruntime", vec![("XDG_RUNTIME_DIR", runtime.as_path())]),
        ("plain", vec![]),
    ];
    for (name, env) in &variants {
        let started = bare(
            &w,
            &home,
            env,
            &[
                "start",
                "idle.yaml",
                "--instance",
                name,
                "--background",
                "--json",
            ],
        )
        .output()
        .unwrap();
        assert!(started.status.success(), "{name}: {started:?}");
        let listed = bare(&w, &home, &[], &["list", "--json"]).output().unwrap();
        let text = String::from_utf8_lossy(&listed.stdout);
        assert!(
            text.contains(&format!("\"instance\": \"{name}\""))
                || text.contains(&format!("\"instance\":\"{name}\"")),
            "{name}: not listed: {text}"
        );
        let answer = bridge_answers(&w, &home, name);
        assert!(answer.contains("\"result\""), "{name}: {answer}");
        let sent = bare(
            &w,
            &home,
            &[],
            &["send", "hello", "--to", &format!("a@{name}")],
        )
        .output()
        .unwrap();
        assert!(sent.status.success(), "{name}: {sent:?}");
        let stopped = bare(&w, &home, &[], &["stop", &format!("@{name}")])
            .output()
            .unwrap();
        assert!(stopped.status.success(), "{name}: {stopped:?}");
    }
}

/// `awtui start --background` of instance `instance` with a FIFO where its
/// file `file` belongs: it must give up (never wait on the FIFO) and fail;
/// its error output.
fn start_with_a_fifo_at(file: &str, instance: &str) -> String {
    let w = idle_world();
    let home = w.dir.join(".workflow").join(instance);
    std::fs::create_dir_all(&home).unwrap();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        home.join(file),
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    let mut child = w
        .cmd(&["start", "idle.yaml", "--instance", instance, "--background"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("start to give up", || child.try_wait().unwrap().map(|_| ()));
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{stderr}");
    stderr
}

/// A FIFO where the instance's lock belongs is refused by name, at once.
#[test]
fn a_fifo_in_place_of_the_lock_is_named_not_waited_on() {
    let stderr = start_with_a_fifo_at("instance.lock", "f");
    assert!(
        stderr.contains("instance.lock") && stderr.contains("FIFO"),
        "{stderr}"
    );
}

/// `awtui send` keeps the limit an agent's post has, and says so.
#[test]
fn an_over_limit_send_names_the_limit_and_posts_nothing() {
    use std::io::Write;
    let mut w = idle_world();
    w.start_background("idle.yaml", "big");
    let mut child = w
        .cmd(&["send", "-", "--to", "a@big"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        // The command may stop reading at the limit.
        let _ = stdin.write_all(&vec![b'x'; 4_300_000]);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("4 MiB") && stderr.contains("nothing was sent"),
        "{stderr}"
    );
    assert!(w.channel("big").iter().all(|m| m["from"] != "user"));
}

/// A registry record that names another instance's control socket (forged
/// by anything running as the user, or left stale) cannot steer that
/// other instance.
#[test]
fn a_forged_registry_record_cannot_stop_another_instance() {
    let mut w = idle_world();
    let victim = w.start_background("idle.yaml", "victim");
    let registry = w.state.join("instances");
    let record = std::fs::read_dir(&registry)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("victim."))
        .expect("the victim's record")
        .path();
    let mut forged: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    forged["instance"] = "decoy".into();
    forged["home"] = w.dir.join(".workflow/decoy").display().to_string().into();
    std::fs::write(
        registry.join("decoy.0123456789abcdef.json"),
        serde_json::to_vec(&forged).unwrap(),
    )
    .unwrap();
    let stopped = w.run(&["stop", "@decoy"]);
    assert_ne!(stopped.code, 0, "{stopped:?}");
    assert!(
        stopped.stderr.contains("not the one its record"),
        "{stopped:?}"
    );
    assert!(cli_support::alive(victim), "the victim still runs");
    let listed = w.list();
    assert!(
        listed.iter().any(|i| i["instance"] == "victim"),
        "{listed:?}"
    );
}

/// The admin token that decides approvals is nowhere in the workflow's
/// folder (where agents work), and commands still find it.
#[test]
fn the_control_token_lives_outside_the_workspace() {
    let mut w = idle_world();
    w.start_background("idle.yaml", "t");
    let record = instance_record(&w, "t");
    let token_file = record["token_file"].as_str().unwrap().to_string();
    assert!(
        !std::path::Path::new(&token_file).starts_with(&w.dir),
        "{token_file} is inside the workspace"
    );
    fn find(dir: &std::path::Path, name: &str) -> bool {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.file_name() == name || (e.path().is_dir() && find(&e.path(), name)))
    }
    assert!(!find(&w.dir, "control.token"));
    let sent = w.run(&["send", "hi", "--to", "a@t"]);
    assert_eq!(sent.code, 0, "{sent:?}");
}

/// A client without the token cannot make the instance hold an endless
/// first line: past 64 KiB it is refused, naming the limit, and the
/// instance goes on serving.
#[test]
fn an_endless_hello_on_the_control_socket_is_refused_by_its_limit() {
    use std::io::{BufRead, Write};
    let mut w = idle_world();
    w.start_background("idle.yaml", "h");
    let record = instance_record(&w, "h");
    let socket = record["control"].as_str().unwrap().to_string();
    let mut stream = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    stream
        .set_read_timeout(Some(cli_support::PATIENCE))
        .unwrap();
    // More than the limit, no newline; the server may stop reading.
    let _ = stream.write_all(&vec![b'x'; 200 * 1024]);
    let mut answer = String::new();
    std::io::BufReader::new(&stream)
        .read_line(&mut answer)
        .unwrap();
    assert!(
        answer.contains("refused") && answer.contains("limit"),
        "{answer}"
    );
    let sent = w.run(&["send", "still there", "--to", "a@h"]);
    assert_eq!(sent.code, 0, "{sent:?}");
}

/// A FIFO where awtui's log belongs (opening one to write waits for a
/// reader forever) is refused by name, at once.
#[test]
fn a_fifo_in_place_of_the_log_is_named_not_waited_on() {
    let stderr = start_with_a_fifo_at("awtui.log", "l");
    assert!(
        stderr.contains("awtui.log") && stderr.contains("FIFO"),
        "{stderr}"
    );
}
