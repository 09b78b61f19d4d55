//! Agents' final answers, inbox acks and hand-overs, written behind the
//! engine's loop.
//!
//! When ten agents end their turns together, each turn end posts the
//! agent's final answer (an `fdatasync`'d append) and then acknowledges
//! what the turn answered. Done on the loop, that was ten syncs in a row
//! while every front end's command waited (`benches/engine_busy`). Here
//! the loop only queues them; one thread writes them in the order they
//! were queued, and every answer queued meanwhile shares one `fdatasync`
//! ([`SharedContext::append_all`]).
//!
//! What must hold, and does:
//! - **An answer is durable before its ack.** A turn's ack rides with its
//!   answer ([`Job::Answer::then_ack`]) and is applied only once the answer
//!   is written; when the answer cannot be written its ack is not applied
//!   either, so the messages are offered again rather than acknowledged
//!   without an answer. Every other ack is queued behind the answers
//!   before it, never ahead of them.
//! - **A hand-over is recorded after the answer before it.** A turn's
//!   start records which messages it was handed ([`Job::Deliver`]) behind
//!   the agent's previous answer: after a crash, a post counts as
//!   answering only messages handed over before it was made.
//! - **A run does not end before its answers land.** The runner counts an
//!   answer as pending until it sees it back in the channel (the engine
//!   hears it like any message), or until it is told the answer was lost
//!   ([`Lost`]).
//! - **A clean stop loses nothing.** Dropping the writer writes what is
//!   still queued before it returns.

use tokio::sync::mpsc as async_mpsc;

use super::lane::Lane;

use crate::context::{ChannelEntry, SharedContext, Since};

/// One piece of work for the writer, in the loop's order.
#[derive(Debug, Clone, PartialEq)]
pub enum Job {
    /// Post `text` as `agent`, then (when given) acknowledge its inbox up
    /// to `then_ack`.
    Answer {
        /// Whose answer.
        agent: String,
        /// The final answer.
        text: String,
        /// The turn's ack, applied once the answer is durable.
        then_ack: Option<u64>,
    },
    /// Post `text` as `from` (a system note about a turn that must follow
    /// its answer in the channel: lenient AOP findings, refused tools).
    Note {
        /// Who posts it.
        from: String,
        /// The note.
        text: String,
    },
    /// Acknowledge `agent`'s inbox up to `through`.
    Ack {
        /// Whose inbox.
        agent: String,
        /// The last acknowledged id.
        through: u64,
    },
    /// Record that `agent` was handed everything up to `through` (a turn
    /// started with them). Queued behind the agent's previous answer, so
    /// the hand-over is recorded after that answer: after a crash, only a
    /// post made later counts as answering these messages.
    Deliver {
        /// Whose inbox.
        agent: String,
        /// The last id handed over.
        through: u64,
    },
}

/// An answer that could not be written, told back to the loop (a notice
/// for the person, and the runner stops waiting for it).
#[derive(Debug, Clone, PartialEq)]
pub struct Lost {
    /// Whose answer.
    pub agent: String,
    /// The answer.
    pub text: String,
    /// What went wrong (an ack that failed has no `text`).
    pub error: String,
}

/// The writer thread and its queue.
#[derive(Debug)]
pub struct Answers {
    lane: Lane<Job>,
}

impl Answers {
    /// Starts the writer over `context`; failures come back on `lost`.
    pub fn start(context: SharedContext, lost: async_mpsc::UnboundedSender<Lost>) -> Answers {
        let lane = Lane::start("awtui-answers", move |batch| {
            let channel = Channel {
                append: &|posts: &[(&str, &str)]| context.append_all(posts),
                ack: &|agent: &str, through| context.ack(agent, Since::Id(through)).map(|_| ()),
                deliver: &|agent: &str, through| context.mark_delivered(agent, through).map(|_| ()),
            };
            write(&channel, batch, &lost);
        })
        .expect("cannot start the thread that writes final answers");
        Answers { lane }
    }

    /// A writer that writes nothing (what is left once the real one was
    /// dropped at the end of a run).
    pub fn stopped() -> Answers {
        Answers {
            lane: Lane::stopped(),
        }
    }

    /// Queues `job` behind everything queued before it.
    pub fn queue(&self, job: Job) {
        self.lane.queue(job);
    }
}

/// Appends (sender, text) pairs with one sync: one result each.
type AppendAll<'a> = &'a dyn Fn(&[(&str, &str)]) -> Vec<crate::context::Result<ChannelEntry>>;

/// What the writer does to the channel (the instance's context; a failing
/// one in tests).
struct Channel<'a> {
    append: AppendAll<'a>,
    ack: &'a dyn Fn(&str, u64) -> crate::context::Result<()>,
    deliver: &'a dyn Fn(&str, u64) -> crate::context::Result<()>,
}

/// Writes one batch in order: each run of answers with one shared sync,
/// then the acks that followed it.
fn write(channel: &Channel<'_>, batch: Vec<Job>, lost: &async_mpsc::UnboundedSender<Lost>) {
    let mut jobs = batch.into_iter().peekable();
    while jobs.peek().is_some() {
        // (sender, text, the ack that follows, whether the runner waits
        // to see it)
        let mut posts = Vec::new();
        while let Some(Job::Answer { .. } | Job::Note { .. }) = jobs.peek() {
            match jobs.next() {
                Some(Job::Answer {
                    agent,
                    text,
                    then_ack,
                }) => posts.push((agent, text, then_ack, true)),
                Some(Job::Note { from, text }) => posts.push((from, text, None, false)),
                _ => {}
            }
        }
        let pairs: Vec<(&str, &str)> = posts
            .iter()
            .map(|(from, text, ..)| (from.as_str(), text.as_str()))
            .collect();
        let written = (channel.append)(&pairs);
        for ((from, text, then_ack, answer), result) in posts.iter().zip(written) {
            match result {
                Ok(_) => {
                    if let Some(through) = then_ack {
                        ack(channel, from, *through, lost);
                    }
                }
                Err(e) if *answer => {
                    let _ = lost.send(Lost {
                        agent: from.clone(),
                        text: text.clone(),
                        error: e.to_string(),
                    });
                }
                Err(e) => {
                    let _ = lost.send(Lost {
                        agent: from.clone(),
                        text: String::new(),
                        error: format!("cannot post {from}'s message: {e}"),
                    });
                }
            }
        }
        while let Some(Job::Ack { .. } | Job::Deliver { .. }) = jobs.peek() {
            match jobs.next() {
                Some(Job::Ack { agent, through }) => ack(channel, &agent, through, lost),
                Some(Job::Deliver { agent, through }) => {
                    if let Err(e) = (channel.deliver)(&agent, through) {
                        let _ = lost.send(Lost {
                            agent: agent.clone(),
                            text: String::new(),
                            error: format!("cannot mark {agent}'s messages delivered: {e}"),
                        });
                    }
                }
                _ => {}
            }
        }
    }
}

fn ack(channel: &Channel<'_>, agent: &str, through: u64, lost: &async_mpsc::UnboundedSender<Lost>) {
    if let Err(e) = (channel.ack)(agent, through) {
        let _ = lost.send(Lost {
            agent: agent.to_string(),
            text: String::new(),
            error: format!("cannot acknowledge {agent}'s messages: {e}"),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(agent: &str, text: &str, then_ack: Option<u64>) -> Job {
        Job::Answer {
            agent: agent.into(),
            text: text.into(),
            then_ack,
        }
    }

    #[test]
    fn answers_land_in_order_before_their_acks_and_dropping_waits() {
        let ctx = SharedContext::in_memory(&["a", "b"]);
        let asked = ctx.append("user", "@a @b go").unwrap();
        let (tx, mut lost) = async_mpsc::unbounded_channel();
        let answers = Answers::start(ctx.clone(), tx);
        answers.queue(answer("a", "from a", Some(asked.id)));
        answers.queue(Job::Note {
            from: "system".into(),
            text: "a note about a's answer".into(),
        });
        answers.queue(answer("b", "from b", None));
        answers.queue(Job::Ack {
            agent: "b".into(),
            through: asked.id,
        });
        drop(answers);
        let all = ctx.read(|s| s.read(None, None).unwrap());
        let said: Vec<_> = all
            .iter()
            .map(|e| (e.from.as_str(), e.message.as_str()))
            .collect();
        assert_eq!(
            said[1..],
            [
                ("a", "from a"),
                ("system", "a note about a's answer"),
                ("b", "from b")
            ]
        );
        for agent in ["a", "b"] {
            assert_eq!(ctx.read(|s| s.cursor(agent).unwrap()).acked, asked.id);
        }
        assert!(lost.try_recv().is_err());
    }

    #[test]
    fn an_answer_that_cannot_be_written_keeps_its_messages_unacknowledged() {
        let acked = std::sync::Mutex::new(Vec::new());
        let channel = Channel {
            // The disk fails for b's answer only.
            append: &|posts: &[(&str, &str)]| {
                posts
                    .iter()
                    .map(|(from, _)| match *from {
                        "b" => Err(crate::context::ContextError::Io {
                            path: "channel.jsonl".into(),
                            source: std::io::Error::other("injected"),
                        }),
                        _ => SharedContext::in_memory(&[]).append(from, "x"),
                    })
                    .collect()
            },
            ack: &|agent: &str, through| {
                acked.lock().unwrap().push((agent.to_string(), through));
                Ok(())
            },
            deliver: &|_: &str, _| Ok(()),
        };
        let (tx, mut lost) = async_mpsc::unbounded_channel();
        let batch = vec![
            answer("a", "from a", Some(3)),
            answer("b", "from b", Some(4)),
            Job::Ack {
                agent: "c".into(),
                through: 5,
            },
        ];
        write(&channel, batch, &tx);
        // a's and c's acks, in order; not b's, whose answer was lost.
        assert_eq!(
            *acked.lock().unwrap(),
            [("a".to_string(), 3), ("c".to_string(), 5)]
        );
        let l = lost.try_recv().unwrap();
        assert_eq!((l.agent.as_str(), l.text.as_str()), ("b", "from b"));
        assert!(l.error.contains("injected"), "{}", l.error);
        assert!(lost.try_recv().is_err());
    }
}
