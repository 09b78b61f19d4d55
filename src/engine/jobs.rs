//! The commands the engine answers off its loop: what waits on the disk,
//! on git or on reading pages runs as a job on a blocking thread, answered
//! to its sender when done, while the loop goes on deciding and
//! dispatching. The driver only asks [`for_command`] and hands the job to
//! [`dispatch`]. The user's posts (`send`) go to [`Posts`] instead, which
//! keeps their order.

use std::path::PathBuf;

use super::lane::Lane;
use super::ops::OpsFiles;
use super::workspace_cmd::{self, Known};
use crate::context::SharedContext;
use crate::context::mentions::USER;
use crate::vocab::link::ReplyTo;
use crate::vocab::{Command, CommandFailed, Reply};

/// How many recent turns' raw output `ReadAgentLogs` returns.
const LOG_TURNS: usize = 3;
/// At most this much of each output and of the stderr log (their ends).
const LOG_CAP: usize = 256 * 1024;

/// One command's work, done on a blocking thread.
pub type Job = Box<dyn FnOnce() -> Result<Reply, String> + Send>;

/// What the jobs read from: the instance's state, its logs and its
/// workspaces.
pub struct Sources<'a> {
    /// The instance's state (`send`, `peek`).
    pub context: &'a SharedContext,
    /// The agents' turn logs (`ReadAgentLogs`).
    pub ops_files: &'a OpsFiles,
    /// An agent's folder (its `stderr.log`).
    pub agent_dir: &'a dyn Fn(&str) -> PathBuf,
    /// The workspaces (`ReadDiff`, `Workspace`).
    pub known: Known<'a>,
    /// Thread states by root message id (shown on the messages of a
    /// `peek`).
    pub threads: &'a std::collections::BTreeMap<u64, crate::vocab::ThreadState>,
}

/// The job that answers `command`, when it is one answered off the loop.
pub fn for_command(sources: &Sources<'_>, command: &Command) -> Option<Job> {
    match command {
        Command::Peek { query } => {
            let (context, query) = (sources.context.clone(), query.clone());
            let threads = sources.threads.clone();
            Some(Box::new(move || {
                context
                    .read(|s| crate::instance::query::peek(s, &query))
                    .map(|mut page| {
                        for item in &mut page.items {
                            item.thread = threads.get(&item.entry.id).cloned();
                        }
                        Reply::Messages {
                            items: page.items,
                            left_out: page.left_out,
                        }
                    })
            }))
        }
        Command::ReadAgentLogs { agent } => {
            let read = (sources.known.is_agent)(agent).then(|| {
                (
                    sources.ops_files.clone(),
                    (sources.agent_dir)(agent).join("stderr.log"),
                )
            });
            let agent = agent.clone();
            Some(Box::new(move || match read {
                Some((files, stderr)) => {
                    super::ops::agent_logs(&files, &agent, &stderr, LOG_TURNS, LOG_CAP)
                }
                None => Err(format!("there is no agent '{agent}'")),
            }))
        }
        _ => workspace_cmd::job(&sources.known, command)
            .map(|job| -> Job { Box::new(move || job.and_then(|j| j.run())) }),
    }
}

/// Runs `job` on a blocking thread and answers its sender when done (a
/// failure is logged and answered as [`CommandFailed`]).
pub fn dispatch(name: &'static str, job: Job, reply: ReplyTo) {
    tokio::task::spawn_blocking(move || {
        let answer = job().map_err(|error| CommandFailed {
            command: name.to_string(),
            error,
        });
        if let Err(failed) = &answer {
            tracing::info!("{failed}");
        }
        // The sender may have stopped waiting; nobody else is told.
        let _ = reply.send(answer);
    });
}

/// The person's posts (the control room's, `awtui web`'s and `attach`'s
/// `post`, `awtui send`'s and the control socket's `send`), written by one
/// thread in the order the engine got them, so a client that posts several
/// in a row sees them in the channel in its order, and the loop never
/// waits for the disk; posts queued together share one `fdatasync`. Each
/// is answered once durable (`send` with the message's id, `post` with
/// `Done`), or with why it was refused (blank, too long:
/// [`crate::context::check_message`]); a refused one is not written and
/// the others are.
#[derive(Debug)]
pub struct Posts {
    lane: Lane<Post>,
}

/// One post on its way, and how its sender is answered.
#[derive(Debug)]
struct Post {
    text: String,
    /// `send` (answered with the id) or `post` (answered with `Done`).
    command: &'static str,
    reply: ReplyTo,
}

impl Posts {
    /// Starts the writer over `context`.
    pub fn start(context: SharedContext) -> Posts {
        let lane = Lane::start("awtui-posts", move |batch: Vec<Post>| {
            let checked: Vec<_> = batch
                .iter()
                .map(|post| crate::context::check_message(&post.text))
                .collect();
            let valid: Vec<(&str, &str)> = batch
                .iter()
                .zip(&checked)
                .filter(|(_, c)| c.is_ok())
                .map(|(post, _)| (USER, post.text.as_str()))
                .collect();
            let mut written = context.append_all(&valid).into_iter();
            for (Post { command, reply, .. }, check) in batch.into_iter().zip(checked) {
                let answer = check
                    .and_then(|()| written.next().unwrap_or_else(|| unreachable!("one each")))
                    .map(|entry| match command {
                        "send" => Reply::Posted { id: entry.id },
                        _ => Reply::Done,
                    })
                    .map_err(|e| CommandFailed {
                        command: command.into(),
                        error: e.to_string(),
                    });
                if let Err(failed) = &answer {
                    tracing::info!("{failed}");
                }
                let _ = reply.send(answer);
            }
        })
        .expect("cannot start the thread that writes the user's posts");
        Posts { lane }
    }

    /// Queues the post `text` of `command` (`send` or `post`), answered on
    /// `reply`.
    pub fn queue(&self, command: &'static str, text: String, reply: ReplyTo) {
        self.lane.queue(Post {
            text,
            command,
            reply,
        });
    }
}
