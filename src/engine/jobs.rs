//! The commands the engine answers off its loop: what waits on the disk,
//! on git or on reading pages runs as a job on a blocking thread, answered
//! to its sender when done, while the loop goes on deciding and
//! dispatching. The driver's one routing match makes each job (the
//! functions here and `workspace_cmd`'s) and hands it to [`dispatch`]. The
//! user's posts (`send`) go to [`Posts`] instead, which keeps their order.

use std::path::PathBuf;

use super::lane::Lane;
use super::ops::OpsFiles;
use crate::context::SharedContext;
use crate::context::mentions::USER;
use crate::vocab::link::ReplyTo;
use crate::vocab::{CommandError, CommandFailed, Reply};

/// How many recent turns' raw output `ReadAgentLogs` returns.
const LOG_TURNS: usize = 3;
/// At most this much of each output and of the stderr log (their ends).
const LOG_CAP: usize = 256 * 1024;

/// One command's work, done on a blocking thread.
pub type Job = Box<dyn FnOnce() -> Result<Reply, CommandError> + Send>;

/// The job answering `peek`: the messages `query` asks for, each with its
/// thread's state from `threads` (by root message id).
pub fn peek(
    context: &SharedContext,
    query: crate::vocab::peek::PeekQuery,
    threads: &std::collections::BTreeMap<u64, crate::vocab::ThreadState>,
) -> Job {
    let (context, threads) = (context.clone(), threads.clone());
    Box::new(move || {
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
            .map_err(|e| CommandError::Store(e.to_string()))
    })
}

/// The job answering `read_agent_logs`: the raw output of `agent`'s last
/// turns in `ops_files` and the end of its `stderr` log.
pub fn agent_logs(ops_files: &OpsFiles, agent: String, stderr: PathBuf) -> Job {
    let files = ops_files.clone();
    Box::new(move || {
        super::ops::agent_logs(&files, &agent, &stderr, LOG_TURNS, LOG_CAP)
            .map_err(CommandError::Logs)
    })
}

/// Runs `job` on a blocking thread and answers its sender when done (a
/// failure is logged and answered as [`CommandFailed`]).
pub fn dispatch(name: &'static str, job: Job, reply: ReplyTo) {
    tokio::task::spawn_blocking(move || answer(name, reply, job()));
}

/// Answers `reply` with what command `name` came to (a failure is logged
/// first). The sender may have stopped waiting; nobody else is told.
pub fn answer(name: &str, reply: ReplyTo, answer: Result<Reply, CommandError>) {
    let answer = answer.map_err(|error| CommandFailed::new(name, error));
    if let Err(failed) = &answer {
        tracing::info!("{failed}");
    }
    let _ = reply.send(answer);
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
                    .map_err(|e| CommandError::Store(e.to_string()));
                self::answer(command, reply, answer);
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
