//! The real binary in a real terminal (tmux): open the offline demo, type
//! `@pl` + Tab and a message, see it and the planner's answer in the
//! channel, stop an agent from the Agents pane, edit and save a document,
//! quit; the exit code is 0 and the terminal is back on its main screen.
//!
//! Needs tmux: a missing tmux fails the test (CI installs it; `apt-get
//! install tmux`), it never passes silently.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

struct Tmux {
    socket: String,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux runs")
    }

    fn capture(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", "e2e"]).stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "e2e"];
        args.extend_from_slice(keys);
        self.cmd(&args);
        std::thread::sleep(Duration::from_millis(150));
    }

    fn text(&self, text: &str) {
        self.cmd(&["send-keys", "-t", "e2e", "-l", text]);
        std::thread::sleep(Duration::from_millis(150));
    }

    fn wait_for(&self, what: &str, f: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let screen = self.capture();
            if f(&screen) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {what}; screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn copy_demo(dir: &Path) {
    let wf = root().join("assets/workflows");
    std::fs::copy(wf.join("demo.yaml"), dir.join("demo.yaml")).unwrap();
    std::fs::create_dir_all(dir.join("agents")).unwrap();
    for script in ["planner.sh", "coder.sh", "reviewer.sh"] {
        std::fs::copy(
            wf.join("agents").join(script),
            dir.join("agents").join(script),
        )
        .unwrap();
    }
}

/// Fails the test when tmux is not installed.
fn require_tmux() {
    assert!(
        Command::new("tmux").arg("-V").output().is_ok(),
        "tmux is not installed: this end-to-end test needs it (apt-get install tmux; .ci/run installs it)"
    );
}

/// Opens the demo in a fresh tmux server; returns it and the file that
/// receives the exit code.
fn open_demo(dir: &Path, name: &str) -> (Tmux, PathBuf) {
    copy_demo(dir);
    let exit_file = dir.join("exit-code");
    let bin = env!("CARGO_BIN_EXE_awtui");
    let script = format!(
        "cd '{}' && PAGER=cat AWTUI_DEMO_PAUSE=0 XDG_CONFIG_HOME='{}' AWTUI_STATE_DIR='{}' '{bin}' demo.yaml; echo $? > '{}'",
        dir.display(),
        dir.join("config").display(),
        dir.join("state").display(),
        exit_file.display()
    );
    let tmux = session(name, &script);
    (tmux, exit_file)
}

/// A fresh tmux server running `script` in a 120×40 session `e2e` that
/// stays on screen after the program exits.
fn session(name: &str, script: &str) -> Tmux {
    let tmux = Tmux {
        socket: format!("awtui-e2e-{name}-{}", std::process::id()),
    };
    let out = tmux.cmd(&[
        "new-session",
        "-d",
        "-s",
        "e2e",
        "-x",
        "120",
        "-y",
        "40",
        "sh",
        "-c",
        script,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    tmux.cmd(&["set-option", "-t", "e2e", "remain-on-exit", "on"]);
    tmux
}

fn wait_exit(tmux: &Tmux, exit_file: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !exit_file.exists() {
        assert!(
            Instant::now() < deadline,
            "no exit; screen:\n{}",
            tmux.capture()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(100));
    std::fs::read_to_string(exit_file)
        .unwrap()
        .trim()
        .to_string()
}

fn alternate_screen_on(tmux: &Tmux) -> String {
    let alt = tmux.cmd(&["display-message", "-p", "-t", "e2e", "#{alternate_on}"]);
    String::from_utf8_lossy(&alt.stdout).trim().to_string()
}

#[test]
fn sigterm_restores_the_terminal_and_stops_the_instance() {
    require_tmux();
    let dir = tempfile::tempdir().unwrap();
    let (tmux, exit_file) = open_demo(dir.path(), "term");
    tmux.wait_for("the demo's final answer", |s| {
        s.contains("the review is done")
    });
    let awtui = awtui_pid(&tmux);
    let status = Command::new("kill")
        .args(["-TERM", &awtui])
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(wait_exit(&tmux, &exit_file), "0", "{}", tmux.capture());
    assert_eq!(
        alternate_screen_on(&tmux),
        "0",
        "the alternate screen is left"
    );
}

fn awtui_pid(tmux: &Tmux) -> String {
    // The pane runs `sh -c`; awtui is its child.
    let out = tmux.cmd(&["display-message", "-p", "-t", "e2e", "#{pane_pid}"]);
    let sh = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let children = std::fs::read_to_string(format!("/proc/{sh}/task/{sh}/children")).unwrap();
    children
        .split_whitespace()
        .next()
        .expect("awtui runs")
        .to_string()
}

#[test]
fn a_hang_up_stops_the_instance_cleanly() {
    require_tmux();
    let dir = tempfile::tempdir().unwrap();
    let (tmux, _) = open_demo(dir.path(), "hup");
    tmux.wait_for("the demo's final answer", |s| {
        s.contains("the review is done")
    });
    let pid = awtui_pid(&tmux);
    // Closing the terminal sends SIGHUP; writes to it fail from then on.
    tmux.cmd(&["kill-server"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while Path::new(&format!("/proc/{pid}")).exists() {
        assert!(Instant::now() < deadline, "awtui still runs after SIGHUP");
        std::thread::sleep(Duration::from_millis(100));
    }
    let log = std::fs::read_to_string(dir.path().join(".workflow/demo/awtui.log")).unwrap();
    assert!(log.contains("instance ended"), "{log}");
    assert!(!log.contains("panic"), "{log}");
}

#[test]
fn the_control_room_in_a_real_terminal() {
    require_tmux();
    let dir = tempfile::tempdir().unwrap();
    let (tmux, exit_file) = open_demo(dir.path(), "main");

    // The demo runs to its end on screen.
    tmux.wait_for("the demo's final answer", |s| {
        s.contains("the review is done")
    });
    let s = tmux.capture();
    assert!(s.contains("Agents") && s.contains("Channel") && s.contains("Documents"));

    // Type @pl, Tab completes the name; then a message.
    tmux.keys(&["i"]);
    tmux.text("@pl");
    tmux.keys(&["Tab"]);
    tmux.wait_for("the completed name", |s| s.contains("› @planner"));
    tmux.text("please plan it again");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the message in the channel", |s| {
        s.contains("user → @planner") && s.contains("please plan it again")
    });
    // The planner answers (after the user's message).
    tmux.wait_for("the planner's answer", |s| {
        let at = s.find("please plan it again").unwrap_or(usize::MAX);
        s.rfind("Plan written to notes.md").is_some_and(|p| p > at)
    });

    // Open a message in $PAGER (cat here): the screen is suspended and
    // comes back, and keys still work afterwards.
    tmux.keys(&["Escape"]);
    std::thread::sleep(Duration::from_millis(300));
    tmux.keys(&["2"]);
    tmux.keys(&["k"]);
    tmux.keys(&["o"]);
    std::thread::sleep(Duration::from_millis(500));
    tmux.wait_for("the screen back after the pager", |s| {
        s.contains("Channel") && s.contains("Agents")
    });

    // Stop the coder from the Agents pane.
    tmux.keys(&["Escape"]);
    std::thread::sleep(Duration::from_millis(300));
    tmux.keys(&["1"]);
    tmux.keys(&["j"]);
    tmux.keys(&["s"]);
    tmux.wait_for("the coder stopped", |s| {
        s.lines()
            .any(|l| l.contains("coder") && l.contains("stopped"))
    });

    // Edit and save the notes.
    tmux.keys(&["4"]);
    tmux.wait_for("the notes in the viewer", |s| s.contains("# Plan"));
    tmux.keys(&["e"]);
    tmux.wait_for("the editor", |s| s.contains("editing notes.md"));
    tmux.text("E2E was here. ");
    tmux.keys(&["C-s"]);
    tmux.wait_for("the save", |s| s.contains("saved notes.md"));
    let notes = std::fs::read_to_string(dir.path().join(".workflow/demo/notes.md")).unwrap();
    assert!(notes.starts_with("E2E was here. # Plan"), "{notes}");
    tmux.keys(&["Escape"]);
    std::thread::sleep(Duration::from_millis(300));

    // Quit (answering yes if something still works).
    tmux.keys(&["q"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !exit_file.exists() {
        if tmux.capture().contains("(y/") {
            tmux.keys(&["y"]);
        }
        assert!(
            Instant::now() < deadline,
            "no exit; screen:\n{}",
            tmux.capture()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        wait_exit(&tmux, &exit_file),
        "0",
        "screen:\n{}",
        tmux.capture()
    );
    assert_eq!(
        alternate_screen_on(&tmux),
        "0",
        "the alternate screen is left"
    );
    let out = tmux.cmd(&["capture-pane", "-p", "-J", "-S", "-100", "-t", "e2e"]);
    let screen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        screen.contains("instance 'demo' stopped"),
        "the main screen is back: {screen}"
    );
    assert!(
        !screen.contains("╭ Agents"),
        "no TUI left on screen: {screen}"
    );
    // The instance stays on disk to be resumed.
    assert!(dir.path().join(".workflow/demo/channel.jsonl").exists());
}

/// `awtui <args>` in `dir` with the test's own state dir.
fn awtui(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_awtui"))
        .args(args)
        .current_dir(dir)
        .env("AWTUI_STATE_DIR", dir.join("state"))
        .env("AWTUI_DEMO_PAUSE", "0")
        .output()
        .unwrap()
}

#[test]
fn attach_opens_the_control_room_on_a_background_instance_and_quitting_detaches() {
    require_tmux();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_demo(d);
    let started = awtui(d, &["start", "demo.yaml", "--background"]);
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    // Whatever happens below, the background instance is stopped.
    struct Stop<'a>(&'a Path);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            let _ = awtui(self.0, &["stop", "--all"]);
        }
    }
    let _stop = Stop(d);
    let exit_file = d.join("exit-code");
    let script = format!(
        "cd '{}' && XDG_CONFIG_HOME='{}' AWTUI_STATE_DIR='{}' '{}' attach; echo $? > '{}'",
        d.display(),
        d.join("config").display(),
        d.join("state").display(),
        env!("CARGO_BIN_EXE_awtui"),
        exit_file.display()
    );
    let tmux = session("attach", &script);
    tmux.wait_for("the reviewer's answer in the attached screen", |s| {
        s.contains("the review is done")
    });
    tmux.keys(&["q"]);
    let code = wait_exit(&tmux, &exit_file);
    assert_eq!(code, "0", "screen:\n{}", tmux.capture());
    assert_eq!(
        alternate_screen_on(&tmux),
        "0",
        "the terminal is back on its main screen"
    );
    let list = awtui(d, &["list"]);
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(
        listed.contains("reviewer@demo"),
        "detaching left it running: {listed}"
    );
}

#[test]
fn an_open_control_room_is_reachable_from_other_terminals() {
    require_tmux();
    let dir = tempfile::tempdir().unwrap();
    let (tmux, exit_file) = open_demo(dir.path(), "reach");
    tmux.wait_for("the demo's last answer", |s| {
        s.contains("the review is done")
    });
    let list = awtui(dir.path(), &["list"]);
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(listed.contains("planner@demo"), "{listed}");
    let sent = awtui(
        dir.path(),
        &["send", "hello from another terminal", "--to", "@demo"],
    );
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    tmux.wait_for("the message from the other terminal", |s| {
        s.contains("hello from another terminal")
    });
    let stopped = awtui(dir.path(), &["stop", "@demo"]);
    assert!(
        stopped.status.success(),
        "{}",
        String::from_utf8_lossy(&stopped.stderr)
    );
    assert_eq!(wait_exit(&tmux, &exit_file), "0");
}

#[test]
fn detaching_from_an_open_workflow_leaves_the_instance_running() {
    require_tmux();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (tmux, exit_file) = open_demo(d, "handover");
    // Whatever happens below, the background instance is stopped.
    struct Stop<'a>(&'a Path);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            let _ = awtui(self.0, &["stop", "--all"]);
        }
    }
    let _stop = Stop(d);
    tmux.wait_for("the demo's last answer", |s| {
        s.contains("the review is done")
    });
    tmux.keys(&["q"]);
    tmux.wait_for("the stop-or-detach question", |s| s.contains("(y/d/n)"));
    tmux.keys(&["d"]);
    assert_eq!(wait_exit(&tmux, &exit_file), "0", "{}", tmux.capture());
    let out = tmux.cmd(&["capture-pane", "-p", "-J", "-S", "-100", "-t", "e2e"]);
    let screen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(screen.contains("detached; @demo keeps running"), "{screen}");
    assert!(!screen.contains("stopped; its context"), "{screen}");
    let list = awtui(d, &["list"]);
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(listed.contains("planner@demo"), "still running: {listed}");
}

#[test]
fn stopping_this_instance_from_an_attached_screen_says_stopped() {
    require_tmux();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_demo(d);
    let started = awtui(d, &["start", "demo.yaml", "--background"]);
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    struct Stop<'a>(&'a Path);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            let _ = awtui(self.0, &["stop", "--all"]);
        }
    }
    let _stop = Stop(d);
    let exit_file = d.join("exit-code");
    let script = format!(
        "cd '{}' && XDG_CONFIG_HOME='{}' AWTUI_STATE_DIR='{}' '{}' attach; echo $? > '{}'",
        d.display(),
        d.join("config").display(),
        d.join("state").display(),
        env!("CARGO_BIN_EXE_awtui"),
        exit_file.display()
    );
    let tmux = session("stopthis", &script);
    tmux.wait_for("the attached screen", |s| s.contains("the review is done"));
    tmux.keys(&[":"]);
    tmux.keys(&["C-u"]);
    tmux.text("/stop @demo");
    tmux.keys(&["Enter"]);
    assert_eq!(wait_exit(&tmux, &exit_file), "0", "{}", tmux.capture());
    let out = tmux.cmd(&["capture-pane", "-p", "-J", "-S", "-100", "-t", "e2e"]);
    let screen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(screen.contains("@demo stopped"), "{screen}");
    assert!(!screen.contains("keeps running"), "{screen}");
    let list = awtui(d, &["list"]);
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(!listed.contains("@demo"), "stopped: {listed}");
}
