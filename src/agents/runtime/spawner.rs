//! Every turn's process is started from one thread that lives as long as
//! awtui.
//!
//! `bwrap --die-with-parent` (and any child's `PR_SET_PDEATHSIG`) fires
//! when the *thread* that forked the child ends, not the process. Turns
//! are started from tokio's blocking pool, whose idle threads end after
//! 10 s: every sandboxed turn was killed 10 s after it started. Forking
//! from this one thread ties that signal to awtui's own life: the sandbox
//! still ends when awtui does (even by `kill -9`), and only then.

use std::io;
use std::sync::OnceLock;
use std::sync::mpsc;

use tokio::process::{Child, Command};

/// One process to start, in the runtime that will supervise it.
struct Job {
    cmd: Command,
    runtime: tokio::runtime::Handle,
    reply: mpsc::SyncSender<io::Result<Child>>,
}

/// The way to the spawning thread, started on first use.
fn spawner() -> &'static mpsc::Sender<Job> {
    static SPAWNER: OnceLock<mpsc::Sender<Job>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        // The sender lives in the static: the loop ends only with awtui.
        let started = std::thread::Builder::new()
            .name("awtui-spawner".into())
            .spawn(move || {
                for mut job in rx {
                    let _entered = job.runtime.enter();
                    let _ = job.reply.send(job.cmd.spawn());
                }
            });
        if let Err(e) = started {
            // Without the thread every spawn answers with this error.
            let message = format!("cannot start awtui's spawning thread: {e}");
            let (tx, rx) = mpsc::channel::<Job>();
            std::thread::spawn(move || {
                for job in rx {
                    let _ = job.reply.send(Err(io::Error::other(message.clone())));
                }
            });
            return tx;
        }
        tx
    })
}

/// Starts `cmd` from awtui's spawning thread (see the module doc), in the
/// current tokio runtime. Outside a runtime (which tokio's spawn needs
/// anyway) it starts it here.
pub fn spawn(mut cmd: Command) -> io::Result<Child> {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return cmd.spawn();
    };
    let (reply, answer) = mpsc::sync_channel(1);
    spawner()
        .send(Job {
            cmd,
            runtime,
            reply,
        })
        .map_err(|_| io::Error::other("awtui's spawning thread has ended"))?;
    answer
        .recv()
        .map_err(|_| io::Error::other("awtui's spawning thread dropped the request"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sleep 600` that dies when the thread that forked it ends (as
    /// `bwrap --die-with-parent` does).
    fn dies_with_its_forking_thread() -> Command {
        let mut cmd = Command::new("sleep");
        cmd.arg("600").kill_on_drop(true);
        // SAFETY: prctl is async-signal-safe; nothing is allocated.
        unsafe {
            cmd.pre_exec(|| {
                rustix::process::set_parent_process_death_signal(Some(
                    rustix::process::Signal::KILL,
                ))
                .map_err(io::Error::from)
            });
        }
        cmd
    }

    /// Starts `cmd` with `start` on a thread that ends right after.
    fn from_a_passing_thread(cmd: Command, start: fn(Command) -> io::Result<Child>) -> Child {
        let runtime = tokio::runtime::Handle::current();
        std::thread::spawn(move || {
            let _entered = runtime.enter();
            start(cmd).unwrap()
        })
        .join()
        .unwrap()
    }

    #[tokio::test]
    async fn a_child_outlives_the_thread_that_asked_for_it() {
        let mut kept = from_a_passing_thread(dies_with_its_forking_thread(), spawn);
        // Forked by the passing thread itself, the control dies with it.
        let mut control = from_a_passing_thread(dies_with_its_forking_thread(), |mut c| c.spawn());
        let status = tokio::time::timeout(std::time::Duration::from_secs(60), control.wait())
            .await
            .expect("the control child to die with its thread")
            .unwrap();
        assert!(!status.success(), "{status:?}");
        // The thread that asked for the first child ended before that one.
        assert!(kept.try_wait().unwrap().is_none(), "the spawned child died");
        kept.kill().await.unwrap();
    }
}
