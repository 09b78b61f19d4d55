//! What the person does to agents and their work: stop, restart, logs,
//! the diff view and workspace operations, acks, posts, and answers to
//! tool approval requests.

use crate::action::{AckTarget, Pane, Step};
use crate::panes::diff::ask_workspace;
use crate::panes::inbox;
use crate::vocab::Command;
use crate::vocab::mentions::USER;
use crate::vocab::{DiffTarget, Since, WorkspaceOp};

use super::*;

impl App {
    /// Whether the instance has an agent of this name.
    pub(super) fn agent_known(&self, name: &str) -> bool {
        self.agents.rows.iter().any(|r| r.name == name)
    }

    /// The agent a command names, or the selected one; `None` (with an
    /// error naming `what`) when there is none.
    pub(super) fn target_agent(&mut self, name: Option<String>, what: &str) -> Option<String> {
        match name {
            Some(n) if self.agent_known(&n) => Some(n),
            Some(n) => {
                self.error(format!("{what}: there is no agent '{n}'"));
                None
            }
            None => match self.agents.selected() {
                Some(r) => Some(r.name.clone()),
                None => {
                    self.error(format!("{what}: no agent selected"));
                    None
                }
            },
        }
    }

    /// `stop`: an agent (after a question), this instance (`@` and its
    /// name) or another running instance.
    pub(super) fn stop(&mut self, target: Option<String>) -> Vec<Effect> {
        if let Some(inst) = target.as_deref().and_then(|t| t.strip_prefix('@')) {
            if inst == self.instance {
                return self.shutdown();
            }
            if !self.agent_known(inst) && self.instances.iter().any(|i| i == inst) {
                self.info(format!("stopping @{inst}…"));
                return vec![Effect::StopInstance(inst.to_string())];
            }
            if !self.agent_known(inst) {
                let why = format!(
                    "stop: '{inst}' is neither an agent, this instance ({}) nor a running instance",
                    self.instance
                );
                return self.refuse(why);
            }
        }
        let target = target.map(|t| t.trim_start_matches('@').to_string());
        match self.target_agent(target, "stop") {
            Some(agent) => self.ask_stop(agent),
            None => Vec::new(),
        }
    }

    /// `restart`: lets a stopped or failed agent work again.
    pub(super) fn restart(&mut self, target: Option<String>) -> Vec<Effect> {
        self.for_agent(target, "restart", Some("restarting"), |agent| {
            Command::Restart { agent }
        })
    }

    /// `logs`: an agent's last turns and stderr, for the pager.
    pub(super) fn logs(&mut self, target: Option<String>) -> Vec<Effect> {
        self.for_agent(target, "logs", None, |agent| Command::ReadAgentLogs {
            agent,
        })
    }

    /// The engine command `command` makes for the agent named (or the
    /// selected one), saying `doing` and its name first; an error naming
    /// `what` when there is no such agent.
    fn for_agent(
        &mut self,
        target: Option<String>,
        what: &str,
        doing: Option<&str>,
        command: impl FnOnce(String) -> Command,
    ) -> Vec<Effect> {
        let Some(agent) = self.target_agent(target, what) else {
            return Vec::new();
        };
        if let Some(doing) = doing {
            self.info(format!("{doing} {agent}"));
        }
        vec![Effect::Command(command(agent))]
    }

    /// `diff`: reads the named agent's or task's work (on the board the
    /// selected task's, else the selected agent's).
    pub(super) fn diff(&mut self, target: Option<DiffTarget>, turn: Option<u32>) -> Vec<Effect> {
        let target = match target {
            Some(t) => Some(t),
            None if self.focus == Pane::Tasks => match self.board.current(&self.tasks) {
                Some(t) => Some(DiffTarget::Task(t.id.clone())),
                None => return self.refuse("diff: no task selected"),
            },
            None => self.target_agent(None, "diff").map(DiffTarget::Agent),
        };
        match target {
            Some(DiffTarget::Agent(a)) if !self.agent_known(&a) => {
                self.refuse(format!("diff: there is no agent '{a}'"))
            }
            Some(target) => vec![Effect::Command(Command::ReadDiff { target, turn })],
            None => Vec::new(),
        }
    }

    /// `step`: moves in the open diff view.
    pub(super) fn step(&mut self, step: Step) -> Vec<Effect> {
        let Some(d) = &mut self.diff else {
            return self.refuse("step: no diff view is open (/diff opens one)");
        };
        let key = d.act_on(&Action::Step(step));
        let o = d.outcome(key);
        self.apply(None, o)
    }

    /// `merge`, `revert`, `discard`: asks first; the diff view's agent
    /// (or the selected one) without a name.
    pub(super) fn workspace(&mut self, agent: Option<String>, op: WorkspaceOp) -> Vec<Effect> {
        let agent = agent.or_else(|| match self.diff.as_ref().map(|d| &d.view.target) {
            Some(DiffTarget::Agent(a)) => Some(a.clone()),
            _ => None,
        });
        if let Some(agent) = self.target_agent(agent, op.name()) {
            self.confirm = Some(ask_workspace(agent, op));
        }
        Vec::new()
    }

    /// `resume`: goes on after a loop-guard or budget pause.
    pub(super) fn resume(&mut self) -> Vec<Effect> {
        if self.paused.is_none() {
            self.info("the instance is not paused");
        }
        vec![Effect::Command(Command::Resume)]
    }

    /// `send`: posts `@to text`, to an agent that exists.
    pub(super) fn send(&mut self, to: String, text: String) -> Vec<Effect> {
        if !self.names().contains(&to) {
            return self.refuse(format!("send: there is no agent '{to}'"));
        }
        vec![Effect::Command(Command::Post {
            text: format!("@{to} {text}"),
        })]
    }

    /// `post`: posts to the channel and follows it again.
    pub(super) fn post(&mut self, text: String) -> Vec<Effect> {
        self.channel.newest();
        vec![Effect::Command(Command::Post { text })]
    }

    /// `approve` / `deny`: answers a request (the card's without a
    /// number).
    pub(super) fn decide(
        &mut self,
        request: Option<u64>,
        allow: bool,
        always: bool,
        reason: Option<String>,
    ) -> Vec<Effect> {
        let Some(request) = request.or_else(|| self.card().map(|r| r.id)) else {
            return self.refuse("no approval request waits");
        };
        use crate::vocab::{Answer, Verdict};
        let verdict = if allow { Verdict::Allow } else { Verdict::Deny };
        vec![Effect::Command(Command::Approve {
            request,
            answer: Answer {
                verdict: Some(verdict),
                always,
                rule: None,
                reason,
            },
        })]
    }

    /// `later`: puts the card away until a newer request comes.
    pub(super) fn later(&mut self) -> Vec<Effect> {
        if let Some(request) = self.card().map(|r| r.id) {
            self.card_hidden = Some(request);
        }
        Vec::new()
    }

    /// `ack`: acknowledges an inbox (in the Inbox pane the row's).
    pub(super) fn ack(&mut self, agent: Option<String>, until: AckTarget) -> Vec<Effect> {
        let items = self.inbox_items();
        let (agent, through) = match (agent, until) {
            // In the Inbox pane `a` and `A` act on the inbox of the row
            // under the cursor (an agent's or the user's), never on the
            // agent selected in the Agents pane.
            (None, until @ (AckTarget::Selected | AckTarget::All)) if self.focus == Pane::Inbox => {
                match items.get(self.inbox.selected) {
                    Some(it) if until == AckTarget::Selected => (it.recipient.clone(), it.id),
                    Some(it) => (it.recipient.clone(), self.channel.last_id()),
                    None => return self.refuse("ack: the inbox is empty"),
                }
            }
            (agent, until) => {
                let agent = match agent {
                    Some(a) if a == USER || self.agent_known(&a) => a,
                    Some(a) => return self.refuse(format!("ack: there is no agent '{a}'")),
                    None => match self.agents.selected() {
                        Some(r) => r.name.clone(),
                        None => return self.refuse("ack: no agent selected"),
                    },
                };
                let through = match until {
                    AckTarget::Id(id) => id,
                    AckTarget::All | AckTarget::Selected => self.channel.last_id(),
                };
                (agent, through)
            }
        };
        let n = inbox::unread(&self.channel, &self.cursors, &agent)
            .iter()
            .filter(|i| i.id <= through)
            .count();
        self.info(format!(
            "acked {agent}'s inbox through #{through} ({n} message{})",
            if n == 1 { "" } else { "s" }
        ));
        vec![Effect::Command(Command::Ack {
            agent,
            until: Since::Id(through),
        })]
    }
}
