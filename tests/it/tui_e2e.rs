//! The real binary in a real terminal (tmux): open the offline demo, type
//! `@pl` + Tab and a message, see it and the planner's answer in the
//! channel, stop an agent from the Agents pane, edit and save a document,
//! quit; the exit code is 0 and the terminal is back on its main screen.
//!
//! Needs tmux: a missing tmux fails the test (CI installs it; `apt-get
//! install tmux`), it never passes silently.

use crate::cli_support;
use crate::tmux_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use cli_support::{PATIENCE, poll_within, wait_for};
use tmux_support::{SESSION, Tmux};

/// What the session's shell prints once awtui has exited and its exit code
/// is in the file: seen on screen, it also proves tmux has taken in
/// everything awtui wrote before.
const EXITED: &str = "e2e: awtui exited";

/// Escape out of the command bar: emptied and unfocused, it shows its
/// placeholder again.
fn leave_bar(tmux: &Tmux) {
    tmux.escape("the bar left", |s| s.contains("› type to post"));
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
    run_awtui(name, dir, "PAGER=cat AWTUI_DEMO_PAUSE=0", "demo.yaml")
}

/// A fresh tmux server running `awtui <args>` in `dir` with `env` (shell
/// assignments) and the test's own config and state dirs; returns it and
/// the file that receives the exit code (see [`wait_exit`]).
fn run_awtui(name: &str, dir: &Path, env: &str, args: &str) -> (Tmux, PathBuf) {
    let exit_file = dir.join("exit-code");
    let script = format!(
        "cd '{}' && {env} XDG_CONFIG_HOME='{}' AWTUI_STATE_DIR='{}' '{}' {args}; echo $? > '{}'; echo '{EXITED}'",
        dir.display(),
        dir.join("config").display(),
        dir.join("state").display(),
        env!("CARGO_BIN_EXE_awtui"),
        exit_file.display()
    );
    (Tmux::start(name, &script), exit_file)
}

/// Waits until awtui has exited (the shell's [`EXITED`] line is on
/// screen); its exit code.
fn wait_exit(tmux: &Tmux, exit_file: &Path) -> String {
    tmux.wait_for("awtui to exit", |_| tmux.capture_history().contains(EXITED));
    std::fs::read_to_string(exit_file)
        .unwrap()
        .trim()
        .to_string()
}

/// Quits with `q` (again while nothing happens: a key the screen dropped
/// while it switched views), answering yes if asked; the exit code.
fn quit_until_exit(tmux: &Tmux, exit_file: &Path) -> String {
    let exited = || tmux.capture_history().contains(EXITED);
    cli_support::poll_within(cli_support::PATIENCE, || {
        if exited() {
            return Some(());
        }
        let key = if tmux.capture().contains("(y/") {
            "y"
        } else {
            "q"
        };
        tmux.keys(&[key]);
        cli_support::poll_within(Duration::from_secs(3), || exited().then_some(()))
    })
    .unwrap_or_else(|| panic!("awtui did not exit; screen:\n{}", tmux.capture()));
    std::fs::read_to_string(exit_file)
        .unwrap()
        .trim()
        .to_string()
}

/// Quits with `q`, answering yes if asked (something still works); the
/// exit code.
fn quit_answering_yes(tmux: &Tmux, exit_file: &Path) -> String {
    tmux.keys(&["q"]);
    let asked = |s: &str| s.contains("(y/");
    tmux.wait_for("the question or the exit", |s| {
        asked(s) || tmux.capture_history().contains(EXITED)
    });
    if asked(&tmux.capture()) {
        tmux.keys(&["y"]);
    }
    wait_exit(tmux, exit_file)
}

fn alternate_screen_on(tmux: &Tmux) -> String {
    let alt = tmux.cmd(&["display-message", "-p", "-t", SESSION, "#{alternate_on}"]);
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
    let out = tmux.cmd(&["display-message", "-p", "-t", SESSION, "#{pane_pid}"]);
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
    wait_for("awtui to end after SIGHUP", || {
        (!Path::new(&format!("/proc/{pid}")).exists()).then_some(())
    });
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
    leave_bar(&tmux);
    tmux.keys(&["2"]);
    tmux.keys(&["k"]);
    tmux.keys(&["o"]);
    // cat printed the message on the (until then empty) main screen, and
    // the control room is back on the alternate one.
    tmux.wait_for("the screen back after the pager", |s| {
        s.contains("Channel")
            && s.contains("Agents")
            && alternate_screen_on(&tmux) == "1"
            && !tmux.capture_main().trim().is_empty()
    });

    // Stop the coder from the Agents pane: it asks first.
    tmux.keys(&["1"]);
    tmux.keys(&["j"]);
    tmux.keys(&["s"]);
    tmux.wait_for("the stop question", |s| s.contains("Stop coder?"));
    tmux.keys(&["y"]);
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
    tmux.escape("the editor left", |s| {
        !s.contains("editing notes.md") && s.lines().last().is_some_and(|l| l.contains("e edit"))
    });

    // Quit (answering yes if something still works).
    assert_eq!(
        quit_answering_yes(&tmux, &exit_file),
        "0",
        "screen:\n{}",
        tmux.capture()
    );
    assert_eq!(
        alternate_screen_on(&tmux),
        "0",
        "the alternate screen is left"
    );
    let screen = tmux.capture_history();
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

/// Stops every instance of the test's state dir when dropped, whatever
/// happened in the test.
struct StopAll<'a>(&'a Path);

impl Drop for StopAll<'_> {
    fn drop(&mut self) {
        let _ = awtui(self.0, &["stop", "--all"]);
    }
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
    let _stop = StopAll(d);
    let (tmux, exit_file) = run_awtui("attach", d, "", "attach");
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
    let _stop = StopAll(d);
    tmux.wait_for("the demo's last answer", |s| {
        s.contains("the review is done")
    });
    // Every agent is idle, so `q` would stop it: `:detach` leaves it.
    tmux.keys(&[":"]);
    tmux.text("detach");
    tmux.keys(&["Enter"]);
    assert_eq!(wait_exit(&tmux, &exit_file), "0", "{}", tmux.capture());
    let screen = tmux.capture_history();
    assert!(screen.contains("detached; @demo keeps running"), "{screen}");
    assert!(!screen.contains("stopped; its context"), "{screen}");
    let list = awtui(d, &["list"]);
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(listed.contains("planner@demo"), "still running: {listed}");
}

/// `awtui <file>` loads the workflow and checks its backends once, then
/// starts a background host that loads it once more and trusts that check
/// (`awtui::commands::startup`): each process says so in the log.
#[test]
fn opening_loads_the_workflow_once_per_process_and_checks_it_once() {
    require_tmux();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (tmux, exit_file) = open_demo(d, "once");
    let _stop = StopAll(d);
    tmux.wait_for("the control room", |s| s.contains("╭ Agents"));
    assert_eq!(
        cli_support::startup_tallies(&d.join(".workflow/demo/awtui.log")),
        [(1, 1), (1, 0)],
        "the control room, then its host"
    );
    assert_eq!(quit_answering_yes(&tmux, &exit_file), "0");
}

/// Detaching from `awtui <file>` while an agent's turn runs never
/// interrupts it: the instance runs in a background host from the start, so
/// the turn goes on after the screen is gone, finishes once, and is not
/// started again.
#[test]
fn detaching_during_a_turn_lets_it_finish_once() {
    require_tmux();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("slow.sh"),
        "#!/bin/sh\ncat >/dev/null\necho start >> turns.log\n\
         while [ ! -e go ]; do sleep 0.05; done\necho end >> turns.log\necho finished the slow work\n",
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(d.join("slow.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
    }
    std::fs::write(
        d.join("slow.yaml"),
        "agents:\n  slow:\n    command: ./slow.sh\n    timeout: 10m\nkickoff: \"@slow work\"\n",
    )
    .unwrap();
    let _stop = StopAll(d);
    let (tmux, exit_file) = run_awtui("midturn", d, "", "slow.yaml");
    let turns = || std::fs::read_to_string(d.join("turns.log")).unwrap_or_default();
    poll_within(PATIENCE, || (!turns().is_empty()).then_some(()))
        .unwrap_or_else(|| panic!("the turn never started:\n{}", tmux.capture()));
    tmux.wait_for("the control room", |s| s.contains("slow"));
    tmux.keys(&["q"]);
    tmux.wait_for("the stop-or-detach question", |s| s.contains("(y/d/n)"));
    tmux.keys(&["d"]);
    assert_eq!(wait_exit(&tmux, &exit_file), "0", "{}", tmux.capture());
    std::fs::write(d.join("go"), "").unwrap();
    poll_within(PATIENCE, || turns().contains("end").then_some(()))
        .unwrap_or_else(|| panic!("the turn never ended: {:?}", turns()));
    // Its answer is in the channel once: the turn was not run again.
    let channel = wait_for("the answer in the channel", || {
        Some(std::fs::read_to_string(d.join(".workflow/slow/channel.jsonl")).unwrap_or_default())
            .filter(|c| c.contains("finished the slow work"))
    });
    assert_eq!(
        channel.matches("finished the slow work").count(),
        1,
        "{channel}"
    );
    assert_eq!(turns(), "start\nend\n", "the turn ran once, uninterrupted");
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
    let _stop = StopAll(d);
    let (tmux, exit_file) = run_awtui("stopthis", d, "", "attach");
    tmux.wait_for("the attached screen", |s| s.contains("the review is done"));
    tmux.keys(&[":"]);
    tmux.keys(&["C-u"]);
    tmux.text("/stop @demo");
    tmux.keys(&["Enter"]);
    assert_eq!(wait_exit(&tmux, &exit_file), "0", "{}", tmux.capture());
    let screen = tmux.capture_history();
    assert!(screen.contains("@demo stopped"), "{screen}");
    assert!(!screen.contains("keeps running"), "{screen}");
    let list = awtui(d, &["list"]);
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(!listed.contains("@demo"), "stopped: {listed}");
}

/// A workflow whose one agent asks `user` for help (Agent Mail
/// HELP_REQUEST) on its first turn.
fn write_help_workflow(dir: &Path) {
    std::fs::write(
        dir.join("help.yaml"),
        "name: help\nagents:\n  helper:\n    command: ./agents/helper.sh\n    \
         system_prompt: You ask for help.\nkickoff: |\n  @helper please start.\n",
    )
    .unwrap();
    let script = dir.join("agents/helper.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\ncat >/dev/null\ncat <<'MSG'\n[ol-7] HELP_REQUEST\nIssue Type: STUCK\n\
         ## Problem\nThe fixture database is gone.\n## Question\nMay I recreate it?\nMSG\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn the_home_list_jumps_to_a_help_request_stops_an_instance_and_quits_leaving_the_rest() {
    require_tmux();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_demo(d);
    write_help_workflow(d);
    let _stop = StopAll(d);
    for (file, name) in [("demo.yaml", "first"), ("help.yaml", "second")] {
        let started = awtui(d, &["start", file, "--background", "--instance", name]);
        assert!(
            started.status.success(),
            "{}",
            String::from_utf8_lossy(&started.stderr)
        );
    }
    let (tmux, exit_file) = run_awtui("home", d, "", "");
    tmux.wait_for("both instances in the list", |s| {
        s.contains("@first") && s.contains("@second")
    });
    // The attention view lists the HELP_REQUEST; Enter jumps to it.
    tmux.keys(&["!"]);
    let screen = tmux.wait_for("the HELP_REQUEST in the attention view", |s| {
        s.contains("HELP_REQUEST") && s.contains("May I recreate it?")
    });
    let lines: Vec<&str> = screen.lines().collect();
    let first_item = lines.iter().position(|l| l.contains("TIME")).unwrap() + 1;
    let help = lines
        .iter()
        .position(|l| l.contains("HELP_REQUEST"))
        .unwrap();
    for _ in first_item..help {
        tmux.keys(&["j"]);
    }
    tmux.keys(&["Enter"]);
    tmux.wait_for("the second instance's screen at the request", |s| {
        s.contains("instance second") && s.contains("The fixture database is gone")
    });
    // H goes back to the list; the instance keeps running.
    tmux.keys(&["H"]);
    tmux.wait_for("the list again", |s| {
        s.contains("Instances") && s.contains("@second")
    });
    // Select the second (rows are oldest first), s, y.
    tmux.keys(&["g"]);
    tmux.keys(&["j"]);
    tmux.keys(&["s"]);
    tmux.wait_for("the stop question", |s| {
        s.contains("Stop @second and every agent in it? (y/n)")
    });
    tmux.keys(&["y"]);
    tmux.wait_for("the stop's answer", |s| s.contains("stopped @second"));
    let list = awtui(d, &["list"]);
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(listed.contains("planner@first"), "{listed}");
    assert!(!listed.contains("@second"), "stopped: {listed}");
    tmux.wait_for("the list without its row", |s| !s.contains("│@second"));
    // Quitting leaves the first running.
    tmux.keys(&["q"]);
    assert_eq!(wait_exit(&tmux, &exit_file), "0", "{}", tmux.capture());
    assert_eq!(alternate_screen_on(&tmux), "0");
    let list = awtui(d, &["list"]);
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(listed.contains("planner@first"), "still running: {listed}");
}

/// Opens the home screen with `config` as the user's config.toml while the
/// demo runs as `first` (and, with `inside`, opens `first` from the list),
/// then starts the help workflow as `second` from another terminal; whether
/// the terminal's bell rang for its new HELP_REQUEST (tmux's alert-bell
/// hook marks a file).
fn home_rings_for_a_new_help_request(config: &str, inside: bool) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_demo(d);
    write_help_workflow(d);
    std::fs::create_dir_all(d.join("config/awtui")).unwrap();
    std::fs::write(d.join("config/awtui/config.toml"), config).unwrap();
    let _stop = StopAll(d);
    let started = awtui(
        d,
        &["start", "demo.yaml", "--background", "--instance", "first"],
    );
    assert!(started.status.success());
    // The demo's last message (to @user) is in before the screen opens.
    wait_for("the demo to finish", || {
        let peek = awtui(d, &["peek", "--to", "user@first"]);
        String::from_utf8_lossy(&peek.stdout)
            .contains("the review is done")
            .then_some(())
    });
    let (tmux, exit_file) = run_awtui("bell", d, "", "");
    let mark = d.join("bell-rang");
    tmux.cmd(&["set-option", "-g", "monitor-bell", "on"]);
    tmux.cmd(&["set-option", "-g", "bell-action", "any"]);
    tmux.cmd(&[
        "set-hook",
        "-g",
        "alert-bell",
        &format!("run-shell \"touch '{}'\"", mark.display()),
    ]);
    // What waits when the screen opens does not ring.
    tmux.wait_for("the first instance and its mention", |s| {
        s.contains("@first") && s.contains("1 needs attention")
    });
    assert!(!mark.exists(), "rang for what was already there");
    if inside {
        tmux.keys(&["Enter"]);
        tmux.wait_for("the first instance's screen", |s| {
            s.contains("instance first")
        });
    }
    let started = awtui(
        d,
        &["start", "help.yaml", "--background", "--instance", "second"],
    );
    assert!(started.status.success());
    // Inside: rung by the instance's screen, before going back to the list
    // (which would write a queued alert itself).
    let mut rang_inside = false;
    if inside {
        rang_inside = poll_within(PATIENCE, || mark.exists().then_some(())).is_some();
        tmux.keys(&["H"]);
    }
    tmux.wait_for("the second instance's HELP_REQUEST counted", |s| {
        s.contains("@second") && s.contains("2 need attention")
    });
    // The alert is written in the same poll that showed the count: a short
    // bound on purpose, since with the bell off this waits for nothing.
    const SAME_POLL: Duration = Duration::from_secs(2);
    poll_within(SAME_POLL, || mark.exists().then_some(()));
    let rang = if inside { rang_inside } else { mark.exists() };
    assert_eq!(quit_until_exit(&tmux, &exit_file), "0");
    rang
}

#[test]
fn a_new_help_request_rings_the_bell_unless_notify_is_off() {
    require_tmux();
    assert!(
        home_rings_for_a_new_help_request("", false),
        "the default rings"
    );
    assert!(
        home_rings_for_a_new_help_request("", true),
        "it rings inside another instance's screen too"
    );
    assert!(
        !home_rings_for_a_new_help_request("[notify]\nbell = false\nosc = \"off\"\n", false),
        "off is off"
    );
}

/// The decisions in the approvals journals of the test's state dir.
fn journal_decisions(dir: &Path) -> Vec<serde_json::Value> {
    cli_support::approval_decisions(&dir.join("state"))
}

/// The approval card in a real terminal: a (fake) Claude Code agent with
/// `permissions: ask` asks before `git push` on each turn; the card shows
/// it, `y` allows once, `n` + a reason typed in the bar denies, `a` keeps
/// an "always" rule so the next turn is not asked, and quitting while a
/// request waits denies it.
#[test]
fn the_approval_card_and_its_keys_in_a_real_terminal() {
    require_tmux();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bin = d.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(root().join("tests/fakes/fake_agent.py"), bin.join("claude"))
        .unwrap();
    let log = d.join("answers.log");
    std::fs::write(
        d.join("cc.yaml"),
        format!(
            "name: appr\nagents:\n  cc:\n    backend: claude\n    permissions: ask\n    env:\n      PATH: \"{}:{}\"\n      FAKE_ASK: '{{\"tool\": \"Bash\", \"input\": {{\"command\": \"git push\"}}}}'\n      FAKE_ASK_LOG: \"{}\"\nkickoff: \"@cc push it\"\n",
            bin.display(),
            std::env::var("PATH").unwrap(),
            log.display()
        ),
    )
    .unwrap();
    let answers = || std::fs::read_to_string(&log).unwrap_or_default();
    let (tmux, exit_file) = run_awtui("approve", d, "", "cc.yaml");
    let card =
        |id: u32| move |s: &str| s.contains(&format!("approval #{id}")) && s.contains("$ git push");
    let s = tmux.wait_for("the first card", card(1));
    assert!(s.contains("@cc wants to run Bash"), "{s}");
    assert!(s.contains("waiting for approval"), "{s}");
    // y: allowed once.
    tmux.keys(&["y"]);
    tmux.wait_for("the allow in the channel", |s| {
        s.contains("approval #1: allowed Bash")
    });
    assert!(
        answers().contains("\"behavior\":\"allow\""),
        "{}",
        answers()
    );

    // A new turn asks again; n puts /deny 2 in the bar for a reason.
    tmux.keys(&["i"]);
    tmux.text("@cc again");
    tmux.keys(&["Enter"]);
    leave_bar(&tmux);
    tmux.wait_for("the second card", card(2));
    tmux.keys(&["n"]);
    tmux.wait_for("the deny in the bar", |s| s.contains("› /deny 2"));
    tmux.text("not on main");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the deny in the channel", |s| {
        s.contains("approval #2: denied Bash")
    });
    assert!(
        answers().contains("Denied by user: not on main"),
        "{}",
        answers()
    );

    // a: always; the next turn is answered by the rule, with no card.
    leave_bar(&tmux);
    tmux.keys(&["i"]);
    tmux.text("@cc once more");
    tmux.keys(&["Enter"]);
    leave_bar(&tmux);
    tmux.wait_for("the third card", card(3));
    tmux.keys(&["a"]);
    tmux.keys(&["i"]);
    tmux.text("@cc and again");
    tmux.keys(&["Enter"]);
    leave_bar(&tmux);
    tmux.wait_for("the rule's allow in the channel", |s| {
        s.contains("approval #4: allowed Bash") && s.contains("(rule Bash(git push))")
    });
    let decided = journal_decisions(d);
    assert!(
        decided[3..].iter().all(|d| d["by"] == "rule"),
        "after the always, only the rule answers: {decided:?}"
    );

    // Revoked, the rule no longer answers: the next turn asks, and
    // quitting while it waits denies it.
    tmux.keys(&[":"]);
    tmux.text("revoke @cc Bash(git push)");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the revoke in the channel", |s| {
        s.contains("approval rule revoked: cc Bash(git push)")
    });
    leave_bar(&tmux);
    let asked_before = decided.len();
    tmux.keys(&["i"]);
    tmux.text("@cc last");
    tmux.keys(&["Enter"]);
    leave_bar(&tmux);
    let last = asked_before + 1;
    tmux.wait_for("the last card", card(last as u32));
    assert_eq!(
        quit_answering_yes(&tmux, &exit_file),
        "0",
        "screen:\n{}",
        tmux.capture()
    );
    let decided = journal_decisions(d);
    let end = decided
        .iter()
        .find(|x| x["id"] == last)
        .unwrap_or_else(|| panic!("#{last} was never decided: {decided:?}"));
    assert_eq!(
        (
            end["verdict"].as_str(),
            end["by"].as_str(),
            end["reason"].as_str()
        ),
        (
            Some("deny"),
            Some("awtui"),
            Some("the instance ended while the request waited")
        ),
        "{decided:?}"
    );
}

/// A workflow whose setup fails, opened with `awtui <file>` (its host
/// starts in the background): the failure is said in plain text as it
/// would be in the foreground, without the host's log records, and the
/// exit code is the failure's.
#[test]
fn a_failing_setup_is_said_plainly_when_opening() {
    require_tmux();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("f.yaml"),
        "agents:\n  a:\n    command: sh\nsetup:\n  - shell: \"echo broken >&2; exit 3\"\nkickoff: \"@a go\"\n",
    )
    .unwrap();
    let (tmux, exit_file) = run_awtui("setupfail", d, "", "f.yaml");
    assert_eq!(wait_exit(&tmux, &exit_file), "1", "{}", tmux.capture());
    let screen = tmux.capture_history();
    assert!(
        screen.contains("setup step 1 failed with exit status: 3")
            && screen.contains("broken")
            && screen.contains("the background instance did not start"),
        "{screen}"
    );
    assert!(
        !screen.contains(" INFO "),
        "log records on the terminal:\n{screen}"
    );
}

/// Fails the test when python3 is not installed (the fake ACP agent is a
/// python script).
fn require_python3() {
    assert!(
        Command::new("python3").arg("--version").output().is_ok(),
        "python3 is not installed: the fake ACP agent needs it (apt-get install python3)"
    );
}

/// The lines the fake ACP agent logged (`tests/fakes/acp_live_agent.py`):
/// each prompt's text and each cancel, as JSON objects.
fn acp_log(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Talking to one agent: an ACP agent (the fake of
/// `tests/fakes/acp_live_agent.py`) does its first turn; `v` in the agents
/// pane opens its live view, which shows its streamed text and its tool
/// call with the diff; a line typed there reaches the agent as a prompt of
/// its own (and is in the channel's record); Esc during its long tool call
/// cancels the turn (`session/cancel`), the agent stays ready and the next
/// line continues the same session; Esc again closes the view.
#[test]
fn the_live_view_shows_an_acp_agents_turn_sends_it_a_line_and_esc_cancels() {
    require_tmux();
    require_python3();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let log = d.join("acp.log");
    let fake = root().join("tests/fakes/acp_live_agent.py");
    std::fs::write(
        d.join("live.yaml"),
        format!(
            "name: live\nagents:\n  gem:\n    backend: acp\n    command: [\"python3\", \"{}\", \"{}\"]\n    system_prompt: You help the person.\nkickoff: |\n  @gem say hello\n",
            fake.display(),
            log.display()
        ),
    )
    .unwrap();
    let _stop = StopAll(d);
    let (tmux, exit_file) = run_awtui("live", d, "", "live.yaml");
    tmux.wait_for("the agent's first answer in the channel", |s| {
        s.contains("streamed hello from the fake agent")
    });
    // The agents pane says how awtui talks to it.
    tmux.keys(&["1"]);
    tmux.wait_for("the protocol in the agents pane", |s| s.contains("acp"));

    // Its live view: the last turn's text, tool call, diff, plan, usage.
    tmux.keys(&["v"]);
    tmux.wait_for("the live view of the first turn", |s| {
        s.contains("live · gem · acp")
            && s.contains("streamed hello from the fake agent")
            && s.contains("edit `Edit notes` completed · notes.md")
            && s.contains("-old line")
            && s.contains("+new line")
            && s.contains("plan 1/3")
            && s.contains("usage: 1.2k tok $0.05")
    });

    // A line typed there is a prompt of the agent's own.
    tmux.text("please do the LONG run");
    tmux.keys(&["Enter"]);
    wait_for("the line to reach the agent as a prompt", || {
        acp_log(&log)
            .iter()
            .any(|e| {
                e["method"] == "session/prompt"
                    && e["text"]
                        .as_str()
                        .is_some_and(|t| t.contains("please do the LONG run"))
            })
            .then_some(())
    });
    tmux.wait_for("the long tool call running", |s| {
        s.contains("execute `sleep 1000` in_progress") && s.contains("starting the long run")
    });

    // Esc cancels the turn: the agent gets session/cancel and stays ready.
    tmux.escape("the cancel", |s| {
        s.contains("cancelling gem's turn") || s.contains("execute `sleep 1000` failed")
    });
    wait_for("session/cancel at the agent", || {
        acp_log(&log)
            .iter()
            .any(|e| e["method"] == "session/cancel")
            .then_some(())
    });
    tmux.wait_for("the turn over, the agent idle", |s| {
        s.contains("live · gem · acp · idle")
    });

    // The next line wakes it on the same session (no new one).
    tmux.text("after the cancel, go on");
    tmux.keys(&["Enter"]);
    wait_for("the next prompt on the same session", || {
        acp_log(&log)
            .iter()
            .any(|e| {
                e["method"] == "session/prompt"
                    && e["session"] == "live-session-1"
                    && e["text"]
                        .as_str()
                        .is_some_and(|t| t.contains("after the cancel, go on"))
            })
            .then_some(())
    });
    let sessions = acp_log(&log)
        .iter()
        .filter(|e| e["method"] == "session/new" || e["method"] == "session/load")
        .count();
    assert_eq!(
        sessions,
        1,
        "one session for every turn: {:?}",
        acp_log(&log)
    );

    // Esc with no turn running closes the view; the lines are in the
    // channel's record, addressed to the agent.
    tmux.wait_for("the turn after the cancel done", |s| {
        s.contains("live · gem · acp · idle")
            && s.contains("edit `Edit notes` completed")
            && !s.contains("sleep 1000")
    });
    tmux.escape("the view closed", |s| !s.contains("live · gem"));
    tmux.keys(&["2"]);
    tmux.wait_for("the lines in the channel", |s| {
        s.contains("please do the LONG run") && s.contains("after the cancel, go on")
    });
    let channel = std::fs::read_to_string(d.join(".workflow/live/channel.jsonl")).unwrap();
    assert!(
        channel.contains("@gem please do the LONG run")
            && channel.contains("@gem after the cancel, go on"),
        "{channel}"
    );
    assert_eq!(
        quit_answering_yes(&tmux, &exit_file),
        "0",
        "screen:\n{}",
        tmux.capture()
    );
}

/// Whether an agent's row in the Agents pane says it is stopped.
fn an_agent_stopped(screen: &str) -> bool {
    screen.lines().any(|l| {
        l.contains("stopped")
            && ["planner", "coder", "reviewer"]
                .iter()
                .any(|a| l.contains(a))
    })
}

/// Issue 36 (2): text typed in the bar, Tab with nothing to complete, then
/// `s`: the text (and the `s`) stays in the bar and no agent is stopped.
#[test]
fn tab_with_nothing_to_complete_keeps_the_text_in_the_bar() {
    require_tmux();
    let dir = tempfile::tempdir().unwrap();
    let (tmux, exit_file) = open_demo(dir.path(), "tabstop");
    tmux.wait_for("the demo's final answer", |s| {
        s.contains("the review is done")
    });
    tmux.keys(&["1"]);
    tmux.keys(&["j"]);
    tmux.keys(&["i"]);
    tmux.text("hello");
    tmux.keys(&["Tab"]);
    tmux.keys(&["s"]);
    // A last key typed after them: once it shows, every key before it
    // has been handled.
    tmux.text("!");
    let screen = tmux.wait_for("the text still in the bar", |s| s.contains("› hellos!"));
    assert!(!an_agent_stopped(&screen), "{screen}");
    leave_bar(&tmux);
    assert_eq!(quit_answering_yes(&tmux, &exit_file), "0");
}

/// Issue 36 (3): `:` opens an empty command line; `/task add foo` typed
/// there (the slash out of habit) and `task add bar` both add a task, and
/// the channel gets no message from the person.
#[test]
fn colon_runs_commands_and_posts_nothing() {
    require_tmux();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (tmux, exit_file) = open_demo(d, "colon");
    tmux.wait_for("the demo's final answer", |s| {
        s.contains("the review is done")
    });
    tmux.keys(&[":"]);
    tmux.text("/task add foo");
    tmux.wait_for("the command line", |s| s.contains(":/task add foo"));
    tmux.keys(&["Enter"]);
    tmux.keys(&[":"]);
    tmux.text("task add bar");
    tmux.keys(&["Enter"]);
    let tasks = d.join(".workflow/demo/tasks.jsonl");
    wait_for("both tasks on the board", || {
        std::fs::read_to_string(&tasks)
            .ok()
            .filter(|t| t.contains("\"foo\"") && t.contains("\"bar\""))
    });
    let channel = std::fs::read_to_string(d.join(".workflow/demo/channel.jsonl")).unwrap();
    assert!(!channel.contains("task add"), "{channel}");
    assert_eq!(quit_answering_yes(&tmux, &exit_file), "0");
}
