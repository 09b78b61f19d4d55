//! The real `awtui` binary in a real terminal (tmux), for tests that must
//! see what a person sees: a private tmux server per test (killed when the
//! test ends, even when it fails), `capture-pane` to read the screen,
//! polling with the common patience (never fixed sleeps). A missing tmux
//! fails the test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::cli_support::{PATIENCE, poll_within};

/// The one session of a [`Tmux`] server (for `-t`).
pub const SESSION: &str = "t";

/// A private tmux server running one session [`SESSION`] of 120×40.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `script` (run by `sh -c`) in a fresh server named after
    /// `name`; the pane stays on screen after the program exits.
    pub fn start(name: &str, script: &str) -> Tmux {
        assert!(
            Command::new("tmux").arg("-V").output().is_ok(),
            "tmux is not installed: this test needs it (apt-get install tmux)"
        );
        let tmux = Tmux {
            socket: format!("awtui-test-{name}-{}", std::process::id()),
        };
        let out = tmux.cmd(&[
            "new-session",
            "-d",
            "-s",
            "t",
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
        tmux.cmd(&["set-option", "-t", "t", "remain-on-exit", "on"]);
        tmux
    }

    /// Runs `awtui <args>` in `dir` with the test's own config and state
    /// dirs (under `dir`).
    pub fn awtui(name: &str, dir: &Path, args: &str) -> Tmux {
        let script = format!(
            "cd '{}' && XDG_CONFIG_HOME='{}' AWTUI_STATE_DIR='{}' '{}' {args}",
            dir.display(),
            dir.join("config").display(),
            dir.join("state").display(),
            env!("CARGO_BIN_EXE_awtui"),
        );
        Tmux::start(name, &script)
    }

    /// Any tmux command on this server.
    pub fn cmd(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux runs")
    }

    /// The screen as text, one line per row.
    pub fn capture(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", "t"]).stdout).into_owned()
    }

    /// The main screen while the program shows its alternate one (empty
    /// when the alternate screen is off).
    pub fn capture_main(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-a", "-t", "t"]).stdout)
            .into_owned()
    }

    /// The screen and up to 100 lines of history, wrapped lines joined.
    pub fn capture_history(&self) -> String {
        let out = self.cmd(&["capture-pane", "-p", "-J", "-S", "-100", "-t", "t"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Sends keys (tmux key names). Keys are read in order, so the next
    /// ones need no wait; only Escape does (see [`Tmux::escape`]).
    pub fn keys(&self, keys: &[&str]) {
        assert!(!keys.contains(&"Escape"), "use Tmux::escape");
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.cmd(&args);
    }

    /// Types `text` literally.
    pub fn text(&self, text: &str) {
        self.cmd(&["send-keys", "-t", "t", "-l", text]);
    }

    /// Sends Escape and waits until the screen shows `what` it did: an
    /// Escape still unread when the next key comes is read with it as one
    /// Alt-key.
    pub fn escape(&self, what: &str, done: impl Fn(&str) -> bool) {
        self.cmd(&["send-keys", "-t", "t", "Escape"]);
        self.wait_for(what, done);
    }

    /// Waits until the screen satisfies `f`; the screen then.
    pub fn wait_for(&self, what: &str, f: impl Fn(&str) -> bool) -> String {
        poll_within(PATIENCE, || Some(self.capture()).filter(|s| f(s)))
            .unwrap_or_else(|| panic!("timed out waiting for {what}; screen:\n{}", self.capture()))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

/// The fake Claude Code of the tests (`tests/fakes/fake_agent.py`),
/// linked as `claude` into `dir/bin`; that folder.
pub fn fake_claude(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fakes/fake_agent.py");
    std::os::unix::fs::symlink(fake, bin.join("claude")).unwrap();
    bin
}
