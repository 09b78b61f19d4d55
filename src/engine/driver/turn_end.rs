//! The end of a turn as the loop sees it: what the turn did is shown and
//! told to the runner, its output archived and its operations run, and
//! what went wrong (no tools, refused tools, AOP problems) said.

use super::Driver;
use crate::agents::backend::{BackendEvent, TurnOutcome as BackendOutcome, TurnUpdate};
use crate::agents::runner::{Event, TurnActivity, TurnId, TurnOutcome};
use crate::context::blocking;
use crate::context::mentions::{SYSTEM, USER};
use crate::engine::event::EngineEvent;
use crate::engine::ops;
use crate::engine::turns::TurnStart;
use crate::protocols::agent_ops::parse_ops;

impl Driver {
    /// Something a running turn did: shown, kept for its live view, told
    /// to the runner.
    pub(super) fn turn_update(&mut self, agent: String, turn: TurnId, update: TurnUpdate) {
        match update {
            TurnUpdate::Event(event) => {
                if let BackendEvent::Session { id } = &event {
                    // Kept at once, so a crash mid-turn still resumes the
                    // agent's own session.
                    self.save_session(&agent, id);
                }
                let activity = self.turns.activity(&agent, &event);
                self.emit(EngineEvent::Activity {
                    agent: agent.clone(),
                    activity: event,
                });
                if let Some(event) = activity {
                    self.handle(Event::Backend { agent, turn, event });
                }
            }
            TurnUpdate::Done(outcome) => self.turn_done(agent, turn, outcome, None, None),
        }
    }

    /// A turn ended (committed, or its connection lost, by its relay):
    /// the runner hears how, after everything the agent posted.
    pub(super) fn turn_done(
        &mut self,
        agent: String,
        turn: TurnId,
        outcome: BackendOutcome,
        committed: Option<String>,
        lost: Option<String>,
    ) {
        // Everything the agent posted during the turn reaches the runner
        // first: that is how it knows not to post the final answer again.
        self.sync_messages();
        let TurnStart {
            messages: delivered_at_start,
            tool_lists_at_start,
            approvals_from,
            number,
            ..
        } = self.turns.finish(&self.cx, &agent, turn);
        if let Some(id) = &outcome.session_id {
            self.save_session(&agent, id);
        }
        // Messages the agent fetched itself mid-turn (inbox_check) count as
        // delivered by this turn.
        let delivered = self.cx.context.read(|s| {
            let cursor = s.cursor(&agent).unwrap_or_default();
            s.inbox_ids(&agent)
                .unwrap_or_default()
                .into_iter()
                .filter(|id| *id <= cursor.delivered)
                .collect::<Vec<u64>>()
        });
        // What the CLI said about its MCP servers wins; else, for CLIs
        // that list awtui's tools at start, whether the server saw a
        // listing from this agent during a successful turn.
        let listed = tool_lists_at_start
            .filter(|_| outcome.success)
            .map(|before| self.cx.context.tool_lists(&agent) > before);
        let connected = outcome.tools_connected.or(listed);
        let without_tools = connected == Some(false);
        if connected == Some(true) {
            self.turns.had_tools(&agent);
        }
        // A call a person or a rule denied is in the CLI's refusals too;
        // its decision is already in the channel, and it is no matter of
        // configuration.
        let denied: Vec<String> = self
            .cx
            .context
            .approvals()
            .denied_since(&agent, approvals_from)
            .into_iter()
            .map(|d| d.tool)
            .collect();
        let refused: Vec<String> = outcome
            .refused
            .iter()
            .filter(|tool| !denied.contains(tool))
            .cloned()
            .collect();
        let usage = outcome.usage;
        self.queue.push_back(Event::Backend {
            agent: agent.clone(),
            turn,
            event: TurnActivity::Usage {
                tokens_in: usage.input_tokens,
                tokens_out: usage.output_tokens,
                cost_usd: usage.cost_usd,
            },
        });
        let cut = ops::Cut {
            truncated: outcome.truncated,
            full: outcome.full_output.as_deref(),
        };
        // The relay committed the turn off the loop (see `Relayed`).
        if let Some(n) = committed {
            // In the channel, where the person sees why the turn is not a
            // step (it mentions nobody, so it wakes nobody).
            tracing::warn!("{n}");
            self.post(SYSTEM, &n);
        }
        let mut aop_answer = None;
        let result = if outcome.success {
            self.settle_woken_again(&agent);
            // An answer cut to nothing still says where the output went.
            let answer = outcome
                .answer
                .clone()
                .or_else(|| cut.truncated.then(String::new));
            let answer =
                answer.map(|a| self.operations(&agent, number, &delivered_at_start, a, cut));
            aop_answer.clone_from(&answer);
            TurnOutcome::Success {
                delivered,
                // The runner saw the agent's own posts (synced above).
                posted: false,
                final_text: answer.filter(|a| !a.trim().is_empty()),
                session_id: outcome.session_id,
            }
        } else {
            let reason = lost
                .clone()
                .or(outcome.error)
                .unwrap_or_else(|| "the turn failed".into());
            let printed = outcome.answer.as_deref().unwrap_or_default();
            let now = chrono::Utc::now();
            let kept =
                self.ops_files
                    .keep_failed(&agent, u64::from(number), printed, &reason, cut, now);
            if let Some(notice) = kept {
                self.notice(notice);
            }
            match lost {
                Some(_) => TurnOutcome::ConnectionLost {
                    reason,
                    session_id: outcome.session_id,
                },
                None => TurnOutcome::Failure {
                    reason,
                    session_id: outcome.session_id,
                },
            }
        };
        self.handle(Event::TurnFinished {
            agent: agent.clone(),
            turn,
            outcome: result,
        });
        // After the answer is posted, so the note follows it.
        if let Some(a) = aop_answer {
            self.report_aop(&agent, &a);
        }
        if without_tools {
            self.warn_without_tools(&agent);
        }
        if !refused.is_empty() {
            self.report_refused(&agent, &refused);
        }
    }

    /// AOP problems in an answer accepted leniently: the agent's activity
    /// and one compact system note say so during the run (not only `awtui
    /// aop check`), for agents taught AOP.
    fn report_aop(&mut self, agent: &str, answer: &str) {
        let protocols = self.cx.workflow.agent(agent).map(|a| a.protocols);
        if protocols.is_some_and(|p| p.aop_strict) && !self.turns.unmarked_noted(agent) {
            // The seed's strict receiver warns of unmarked output: once
            // per agent and run, not on every turn.
            if let Some(text) = crate::protocols::aop::unmarked_note(agent, answer) {
                self.turns.note_unmarked(agent);
                self.post_after_answers(&text);
            }
        }
        let taught = protocols.is_some_and(|p| p.aop);
        let Some(text) = taught
            .then(|| crate::protocols::aop::run_note(agent, answer))
            .flatten()
        else {
            return;
        };
        self.emit(EngineEvent::Activity {
            agent: agent.to_string(),
            activity: BackendEvent::Error {
                message: text.clone(),
            },
        });
        self.post_after_answers(&text);
    }

    /// The CLI refused tools for lack of permission: the turn did not do
    /// all it tried, and the channel and the agent's activity say so
    /// instead of letting it pass as a plain success.
    fn report_refused(&mut self, agent: &str, tools: &[String]) {
        let permissions = self
            .cx
            .workflow
            .agents
            .iter()
            .find(|a| a.name == agent)
            .map_or("workspace-write", |a| a.permissions.name());
        let text = format!(
            "{agent}'s CLI refused {} for lack of permission (permissions: {permissions}); \
             allow it with the agent's `permissions:` or `tools:`",
            tools.join(", ")
        );
        self.emit(EngineEvent::Activity {
            agent: agent.to_string(),
            activity: BackendEvent::Error {
                message: text.clone(),
            },
        });
        self.post_after_answers(&text);
    }

    /// A turn ran without awtui's tools (the CLI did not connect to the MCP
    /// server): the agent's activity shows it every time, the channel once.
    fn warn_without_tools(&mut self, agent: &str) {
        let text = format!(
            "{agent} ran without awtui's tools: its CLI did not connect to awtui's MCP server, so it could not read or post to the channel itself (see {}/stderr.log)",
            self.cx.agent_dir(agent).display()
        );
        self.emit(EngineEvent::Activity {
            agent: agent.to_string(),
            activity: BackendEvent::Error {
                message: text.clone(),
            },
        });
        if self.turns.first_without_tools(agent) {
            self.post_after_answers(&text);
        }
    }

    /// Archives a turn's output and runs the operations in its frontmatter;
    /// returns the answer without the frontmatter.
    fn operations(
        &mut self,
        agent: &str,
        number: u32,
        delivered: &[u64],
        output: String,
        cut: ops::Cut<'_>,
    ) -> String {
        let now = chrono::Utc::now();
        let (output, problem) = blocking(|| {
            self.ops_files
                .keep_output(agent, u64::from(number), output, cut, now)
        });
        if let Some(problem) = problem {
            self.notice(problem);
        }
        let mut peers = self.cx.workflow.agent_names();
        peers.push(USER.to_string());
        let peers: Vec<&str> = peers.iter().map(String::as_str).collect();
        let parsed = parse_ops(&output, delivered.iter().max().copied(), &peers);
        let has_frontmatter =
            !parsed.ops.is_empty() || !parsed.problems.is_empty() || parsed.refused.is_some();
        if !has_frontmatter {
            return output;
        }
        let executed = match self.ops_files.log() {
            Ok(mut log) => ops::execute(
                &parsed,
                agent,
                &self.cx.context,
                &mut self.ops,
                &mut log,
                now,
            ),
            Err(e) => {
                self.notice(format!("cannot write logs/ops.log: {e}"));
                ops::execute(
                    &parsed,
                    agent,
                    &self.cx.context,
                    &mut self.ops,
                    &mut std::io::sink(),
                    now,
                )
            }
        };
        for (id, state) in executed.threads {
            self.emit(EngineEvent::Thread { id, state });
        }
        if executed.changed {
            self.save_ops();
        }
        for text in executed.notices {
            self.post(SYSTEM, &text);
        }
        parsed.body
    }

    fn save_ops(&self) {
        if let Err(e) = blocking(|| ops::save_state(&self.ops, &self.cx.state_root)) {
            self.notice(format!("cannot save {}: {e}", ops::STATE_FILE));
        }
        self.emit(EngineEvent::Deferred {
            deferred: self.ops.deferred.clone(),
        });
    }

    /// `messages` for `agent`'s turn, with the messages it put off until
    /// its next wake (`defer: <id>`): they are new to it again, once.
    pub(super) fn with_next_wake(&mut self, agent: &str, mut messages: Vec<u64>) -> Vec<u64> {
        let again = self.ops.next_wake(agent);
        if again.is_empty() {
            self.woken_again.remove(agent);
            return messages;
        }
        self.woken_again.insert(agent.to_string(), again.clone());
        messages.extend(again);
        messages.sort_unstable();
        messages.dedup();
        messages
    }

    /// `agent`'s turn succeeded: the messages it had again (see
    /// [`Self::with_next_wake`]) are no longer deferred. Before the turn's
    /// own operations run, which may defer them once more.
    fn settle_woken_again(&mut self, agent: &str) {
        if let Some(ids) = self.woken_again.remove(agent) {
            self.ops.forget_next_wake(agent, &ids);
            self.save_ops();
        }
    }

    /// Delivers timed deferrals that are due as reminders.
    pub(super) fn deliver_deferred(&mut self) {
        let due = self.ops.take_due(chrono::Utc::now());
        if due.is_empty() {
            return;
        }
        self.save_ops();
        for d in due {
            let text = format!(
                "@{} reminder: you deferred message #{}; it is due now.",
                d.agent, d.id
            );
            if let Err(e) = self.cx.context.transact(|tx| tx.reply(SYSTEM, &text, d.id)) {
                self.notice(format!(
                    "cannot deliver deferred #{} to {}: {e}",
                    d.id, d.agent
                ));
            }
        }
    }
}
