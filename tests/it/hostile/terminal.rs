//! The person's terminal going away under the control room (an SSH drop,
//! a closed tmux server). Before the fix, the control room got SIGHUP but
//! kept polling the closed terminal, which is readable at once forever:
//! it never quit, spun at 80–90 % of a core, and left its background
//! instance running.

use crate::cli_support::{World, wait_for};
use crate::tmux_support::Tmux;

/// The pids of processes whose command line holds `needle` and whose
/// environment holds this world's state dir.
fn ours(w: &World, needle: &str) -> Vec<u32> {
    let marker = format!("AWTUI_STATE_DIR={}", w.state.display());
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            String::from_utf8_lossy(&cmd).contains(needle)
                && env.split(|b| *b == 0).any(|v| v == marker.as_bytes())
                && !stat.contains(") Z ")
        })
        .collect()
}

#[test]
fn a_control_room_whose_terminal_goes_away_quits_and_stops_its_instance() {
    let w = World::new();
    // An agent mid-turn when the terminal goes: quitting has to wait for
    // its turn to be stopped.
    w.script(
        "a.sh",
        "#!/bin/sh\ncat >/dev/null\ntouch started\nwhile [ ! -e release ]; do sleep 0.1; done\necho ok\n",
    );
    std::fs::write(
        w.dir.join("wf.yaml"),
        "agents:\n  a:\n    command: ./a.sh\nkickoff: \"@a go\"\n",
    )
    .unwrap();
    let tmux = Tmux::start(
        "terminal",
        &format!(
            "cd '{}' && AWTUI_STATE_DIR='{}' '{}' wf.yaml",
            w.dir.display(),
            w.state.display(),
            env!("CARGO_BIN_EXE_awtui")
        ),
    );
    tmux.wait_for("the control room", |s| {
        s.contains("a") && s.contains("type to post")
    });
    wait_for("a's turn", || w.dir.join("started").exists().then_some(()));
    assert!(!ours(&w, "wf.yaml").is_empty(), "the control room runs");
    drop(tmux);
    wait_for("the control room and its instance to end", || {
        ours(&w, "wf.yaml").is_empty().then_some(())
    });
}
