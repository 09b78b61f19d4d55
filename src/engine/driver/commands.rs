//! The engine's commands, each with its one handler and its declared
//! place: [`Driver::command`] is the one exhaustive match that routes a
//! command to the loop (its handler runs here, in order with everything
//! else), to a job (a blocking thread: disk, git, pages) or to the posts'
//! lane (the person's posts, written in order). A command without a place
//! does not compile.

use super::Driver;
use crate::agents::runner::{Event, RunOutcome};
use crate::context::Since;
use crate::context::mentions::{SYSTEM, USER};
use crate::engine::event::{AgentSnapshot, MessageSnapshot, Snapshot};
use crate::engine::jobs::{self, Job};
use crate::engine::link::{Envelope, ReplyTo};
use crate::engine::workspace_cmd::{self, Known};
use crate::vocab::{Command, CommandError, Reply};

/// What a handler on the loop answers.
type Answer = Result<Reply, CommandError>;

impl Driver {
    /// Routes one command to its place and its handler, and answers its
    /// sender alone: a snapshot or a document read, `Done`, or why it
    /// failed. The broadcast only sees what the command changed.
    pub(super) fn command(&mut self, envelope: Envelope) {
        let Envelope { command, reply } = envelope;
        let name = command.name();
        let answer = match command {
            // The posts' lane: answered once durable, in order.
            Command::Post { text } | Command::Send { text } => {
                return self.to_posts(name, text, reply);
            }
            // Jobs: disk, git or pages, off the loop, answered when done.
            Command::Peek { query } => {
                let job = jobs::peek(&self.cx.context, query, &self.ops.threads);
                return jobs::dispatch(name, job, reply);
            }
            Command::ReadAgentLogs { agent } => {
                return jobs::dispatch(name, self.agent_logs(agent), reply);
            }
            Command::ReadDiff { target, turn } => {
                let job = self.workspace_job(|known| workspace_cmd::read(known, target, turn));
                return jobs::dispatch(name, job, reply);
            }
            Command::Workspace { agent, op } => {
                let job = self.workspace_job(|known| workspace_cmd::apply(known, agent, op));
                return jobs::dispatch(name, job, reply);
            }
            // The loop.
            Command::Stop { agent } => self.stop(agent),
            Command::Cancel { agent } => self.cancel(agent),
            Command::Restart { agent } => self.restart(agent),
            Command::Resume => self.resume(),
            Command::Ack { agent, until } => self.ack(&agent, until),
            Command::Approve { request, answer } => self.approve(request, answer),
            Command::RevokeApproval { agent, rule } => self.revoke_approval(&agent, &rule),
            Command::AddAgent { agent } => self.add_agent(&agent),
            Command::Shutdown => self.shutdown(),
            Command::Task { task } => self.task(task),
            Command::ReadTask { task } => self.read_task(task),
            Command::Snapshot { messages } => Ok(Reply::Snapshot {
                snapshot: Box::new(self.snapshot(messages)),
            }),
            Command::ReadDocument { file } => self.read_document(file),
            Command::WriteDocument { file, content } => self.write_document(file, &content),
            Command::CreateDocument { file, content } => self.create_document(&file, &content),
            Command::DeleteDocument { file } => self.delete_document(&file),
        };
        jobs::answer(name, reply, answer);
    }

    /// `post` and `send`: queued on the posts' lane (refused once the run
    /// ended).
    fn to_posts(&self, name: &'static str, text: String, reply: ReplyTo) {
        match &self.posts {
            Some(posts) => posts.queue(name, text, reply),
            None => jobs::answer(name, reply, Err(CommandError::Stopping)),
        }
    }

    /// `read_agent_logs`: the job reading `agent`'s logs.
    fn agent_logs(&self, agent: String) -> Job {
        if self.known(&agent).is_err() {
            return Box::new(move || Err(CommandError::UnknownAgent { name: agent }));
        }
        let stderr = self.cx.agent_dir(&agent).join("stderr.log");
        jobs::agent_logs(&self.ops_files, agent, stderr)
    }

    /// `read_diff` and `workspace`: the job `make` readies from what the
    /// driver knows of the workspaces (its failure answered as the job's).
    fn workspace_job(
        &self,
        make: impl FnOnce(&Known) -> Result<workspace_cmd::Job, CommandError>,
    ) -> Job {
        let is_agent = |a: &str| self.cx.workflow.agent(a).is_some();
        let task_workspace = |t: &str| {
            self.cx
                .context
                .tasks()
                .read(|s| s.workspaces_of_task(t).last().map(|w| (*w).clone()))
        };
        let known = Known {
            workspaces: &self.cx.workspaces,
            is_agent: &is_agent,
            task_workspace: &task_workspace,
            workflow_dir: &self.cx.workflow.base_dir,
        };
        match make(&known) {
            Ok(job) => Box::new(move || job.run()),
            Err(e) => Box::new(move || Err(e)),
        }
    }

    /// Whether `agent` is one of the workflow's.
    fn known(&self, agent: &str) -> Result<(), CommandError> {
        match self.cx.workflow.agent(agent) {
            Some(_) => Ok(()),
            None => Err(CommandError::UnknownAgent {
                name: agent.to_string(),
            }),
        }
    }

    /// `stop`: the agent stops (its whole process group); its unread
    /// messages stay.
    fn stop(&mut self, agent: String) -> Answer {
        self.known(&agent)?;
        self.cx
            .context
            .approvals()
            .close_agent(&agent, "the agent was stopped while the request waited");
        self.handle(Event::Stop { agent });
        Ok(Reply::Done)
    }

    /// `cancel`: the agent's current turn ends, the agent stays.
    fn cancel(&mut self, agent: String) -> Answer {
        self.known(&agent)?;
        self.cx.context.approvals().close_agent(
            &agent,
            "the agent's turn was cancelled while the request waited",
        );
        // Its next prompt quotes the cancelled turn's messages as recent
        // history: they were cancelled, not left unanswered.
        if self.turns.is_running(&agent) {
            crate::agents::backend::acp::note(
                &self.cx.agent_dir(&agent),
                "The person cancelled your previous turn: do not redo it unless they ask again.",
            );
        }
        self.handle(Event::Cancel { agent });
        Ok(Reply::Done)
    }

    /// `restart`: a stopped or failed agent may work again.
    fn restart(&mut self, agent: String) -> Answer {
        self.known(&agent)?;
        self.handle(Event::Restart { agent });
        Ok(Reply::Done)
    }

    /// `resume`: the run goes on after a pause.
    fn resume(&mut self) -> Answer {
        self.handle(Event::Resume);
        Ok(Reply::Done)
    }

    /// `ack`: the person acknowledges `agent`'s inbox up to `until`.
    fn ack(&mut self, agent: &str, until: Since) -> Answer {
        self.cx
            .context
            .ack(agent, until)
            .map_err(|e| CommandError::Store(e.to_string()))?;
        Ok(Reply::Done)
    }

    /// `approve`: the person answers approval request `request`.
    fn approve(&mut self, request: u64, answer: crate::vocab::approvals::Answer) -> Answer {
        self.cx
            .context
            .approvals()
            .decide(request, answer, USER)
            .map_err(|e| CommandError::Approval(e.to_string()))?;
        Ok(Reply::Done)
    }

    /// `revoke_approval`: one of `agent`'s "always" rules goes, and the
    /// channel says so.
    fn revoke_approval(&mut self, agent: &str, rule: &str) -> Answer {
        let refused = |e: &dyn std::fmt::Display| CommandError::Approval(e.to_string());
        let rule = crate::approvals::Rule::parse(rule).map_err(|e| refused(&e))?;
        self.cx
            .context
            .approvals()
            .revoke(agent, &rule)
            .map_err(|e| refused(&e))?;
        self.post(
            SYSTEM,
            &crate::context::mentions::inert(&format!(
                "approval rule revoked: {agent} {rule} (by user)"
            )),
        );
        Ok(Reply::Done)
    }

    /// Adds the person's agent `new` to the instance's kept list (checked
    /// as a workflow file's agent) and says so in the channel. It joins the
    /// agents the next time the instance starts.
    fn add_agent(&mut self, new: &crate::vocab::agents::NewAgent) -> Answer {
        let refused = |e: &dyn std::fmt::Display| CommandError::AddAgent(e.to_string());
        let home = match &self.cx.prepared.context_dir {
            Some(dir) => dir.clone(),
            None => crate::instance::layout::home(&self.cx.workflow, &self.cx.prepared.instance)
                .map_err(|e| refused(&e))?,
        };
        let path = crate::instance::added::file(&home).map_err(|e| refused(&e))?;
        let def =
            crate::instance::added::add(&path, &self.cx.workflow, new).map_err(|e| refused(&e))?;
        let workspace = match def.workspace {
            crate::workflow::Workspace::Shared => "shared",
            crate::workflow::Workspace::Worktree { .. } => "worktree",
        };
        let text = format!(
            "agent {} added by user ({}, {workspace} workspace); it joins when the instance is next started (awtui stop, then awtui start)",
            def.name, new.backend
        );
        self.post(SYSTEM, &crate::context::mentions::inert(&text));
        Ok(Reply::Said { text })
    }

    /// `shutdown`: the run ends, leaving the instance on disk.
    fn shutdown(&mut self) -> Answer {
        let pending = self.pending();
        self.outcome = Some(RunOutcome::Incomplete { pending });
        Ok(Reply::Done)
    }

    /// `task`: the person changes the task board.
    fn task(&mut self, task: crate::vocab::tasks::TaskCommand) -> Answer {
        crate::engine::tasks::carry_out(self.cx.context.tasks(), task, &self.cx.workflow.name)
            .map_err(CommandError::Task)?;
        Ok(Reply::Done)
    }

    /// `read_task`: one task with every checkpoint.
    fn read_task(&self, task: String) -> Answer {
        self.cx.context.tasks().read(|s| {
            let t = s
                .task(&task)
                .cloned()
                .ok_or_else(|| CommandError::UnknownTask { id: task.clone() })?;
            Ok(Reply::Task {
                checkpoints: s.checkpoints(&task).to_vec(),
                task: Box::new(t),
            })
        })
    }

    /// `read_document`: a document's content (the entry document without
    /// a name).
    fn read_document(&self, file: Option<String>) -> Answer {
        let (file, content) = self
            .cx
            .context
            .read(|s| {
                let path = file.unwrap_or_else(|| s.entry_document().to_string());
                s.read_document(Some(&path)).map(|c| (path, c))
            })
            .map_err(|e| CommandError::Store(e.to_string()))?;
        Ok(Reply::Document { file, content })
    }

    /// `write_document`: the person replaces a document's content.
    fn write_document(&mut self, file: Option<String>, content: &str) -> Answer {
        self.cx
            .context
            .transact(|tx| tx.write_document(USER, file.as_deref(), content))
            .map_err(|e| CommandError::Store(e.to_string()))?;
        Ok(Reply::Done)
    }

    /// `create_document`: the person creates a document.
    fn create_document(&mut self, file: &str, content: &str) -> Answer {
        self.cx
            .context
            .transact(|tx| tx.create_document(USER, file, content))
            .map_err(|e| CommandError::Store(e.to_string()))?;
        Ok(Reply::Done)
    }

    /// `delete_document`: the person deletes a document.
    fn delete_document(&mut self, file: &str) -> Answer {
        self.cx
            .context
            .transact(|tx| tx.delete_document(USER, file))
            .map_err(|e| CommandError::Store(e.to_string()))?;
        Ok(Reply::Done)
    }

    /// The whole state, for a front end drawing from scratch.
    fn snapshot(&self, limit: usize) -> Snapshot {
        let runner_agents = self.runner.agents();
        let agents = self
            .cx
            .workflow
            .agents
            .iter()
            .map(|def| {
                let view = runner_agents.iter().find(|v| v.name == def.name);
                AgentSnapshot {
                    protocol: crate::agents::backend::acp::protocol_name(
                        def,
                        &self.cx.workflow.base_dir,
                    ),
                    live: self.turns.live(&def.name),
                    place: self.cx.place_name(def),
                    name: def.name.clone(),
                    backend: def.backend.name().to_string(),
                    model: def.model.clone(),
                    status: view
                        .map(|v| v.status.clone())
                        .unwrap_or(crate::agents::runner::AgentStatus::Idle),
                    metrics: view.map(|v| v.metrics.clone()).unwrap_or_default(),
                }
            })
            .collect();
        let mut recipients = self.cx.workflow.agent_names();
        recipients.push(USER.to_string());
        self.cx.context.read(|s| {
            // Bounded in bytes too: one agent's huge messages must not
            // weigh on every front end's first draw (issue 34).
            let page = crate::instance::query::newest(s, None, limit);
            Snapshot {
                workflow: self.cx.workflow.name.clone(),
                instance: self.cx.prepared.instance.clone(),
                agents,
                messages: page
                    .items
                    .into_iter()
                    .map(|item| MessageSnapshot {
                        entry: item.entry,
                        annotations: item.annotations,
                        cut: item.cut,
                    })
                    .collect(),
                left_out: page.left_out,
                total_messages: s.len(),
                user_unread: s.unread_count(USER).unwrap_or(0),
                documents: s.list_documents().unwrap_or_default(),
                entry_document: s.entry_document().to_string(),
                cursors: recipients
                    .into_iter()
                    .filter_map(|r| s.cursor(&r).ok().map(|c| (r, c)))
                    .collect(),
                paused: self.runner.pause_reason().cloned(),
                ops: self.ops.clone(),
                tasks: crate::engine::tasks::snapshot(self.cx.context.tasks()),
                started: Some(self.started),
                approvals: self.cx.context.approvals().snapshot(),
                notices: self.recent_notices.borrow().iter().cloned().collect(),
            }
        })
    }

    fn pending(&self) -> Vec<crate::agents::runner::PendingWork> {
        self.runner
            .agents()
            .iter()
            .filter(|a| a.metrics.unread > 0)
            .map(|a| crate::agents::runner::PendingWork {
                agent: a.name.clone(),
                unread: a.metrics.unread,
                status: a.status.clone(),
            })
            .collect()
    }
}
