//! Approvals: an agent's CLI asks before running a tool (Claude Code's
//! `--permission-prompt-tool`), awtui answers from rules or asks the
//! person, and the answer can stick ("always").
//!
//! [`Approvals`] is the hub one instance shares between its MCP server
//! (which asks), its engine (which shows requests and passes decisions
//! on) and its front ends. Every request and decision is appended to
//! `approvals.jsonl` in the instance folder and synced before it counts;
//! a request still open when awtui ends (quit, crash, `kill -9`) is
//! recorded as denied the next time the instance opens, so nothing is
//! ever shown as pending that nobody waits for.
//!
//! Waiting is a oneshot channel per request, with the approval timeout
//! around it: no polling.

pub mod journal;
pub use crate::vocab::approval_view as view;
pub use crate::vocab::approvals::rules;
pub use crate::vocab::approvals::shell;
pub use crate::vocab::approvals::workspace;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use chrono::Utc;
use serde_json::Value;
use tokio::sync::oneshot;

pub use crate::vocab::approvals::{
    Answer, ApprovalEvent, ApprovalsSnapshot, Decision, Request, Rule, RuleSet, Standing, Verdict,
};
pub use crate::vocab::approvals::{BY_AWTUI, BY_RULE, BY_TIMEOUT, EXPIRED};
pub use rules::Source;

use crate::context::Publisher;
use journal::{Journal, Record};

/// How long a request waits for a person before it is denied, unless the
/// workflow says otherwise (`limits: approval_timeout`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// How many answered requests are remembered, so answering one again
/// says how it ended instead of "no such request".
const REMEMBERED: usize = 1000;

/// Why a decision could not be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ApprovalError {
    /// No such request is waiting.
    #[error("no approval request #{0} is waiting (it was answered, timed out or never existed)")]
    NotPending(u64),
    /// The request ended before this answer: it was answered, or it
    /// expired ([`EXPIRED`]).
    #[error("approval #{id} {how}")]
    Closed {
        /// The request.
        id: u64,
        /// How it ended.
        how: String,
    },
    /// `ask` is not an answer.
    #[error("answer a request with allow or deny")]
    NoVerdict,
    /// Revoking a rule that is not there.
    #[error("@{agent} has no \"always\" rule {rule}")]
    NoSuchRule {
        /// The agent.
        agent: String,
        /// The rule.
        rule: String,
    },
    /// The journal could not be written.
    #[error("cannot record in {path}: {error}")]
    Journal {
        /// The journal file.
        path: String,
        /// What went wrong.
        error: String,
    },
}

struct Pending {
    request: Request,
    reply: oneshot::Sender<Decision>,
}

struct State {
    /// The agents whose CLI asks (`permissions: ask`).
    asking: std::collections::HashSet<String>,
    rules: HashMap<String, RuleSet>,
    /// Each agent's workspace as awtui made or chose it (never as a
    /// request says): where an allowed command may redirect to.
    workspaces: HashMap<String, PathBuf>,
    standing: Vec<Standing>,
    pending: BTreeMap<u64, Pending>,
    /// The last [`REMEMBERED`] requests that ended, by id.
    ended: BTreeMap<u64, Decision>,
    next_id: u64,
    timeout: Duration,
    journal: Option<Journal>,
}

struct Inner {
    state: Mutex<State>,
    /// Where changes are announced: the instance's one stream of state
    /// facts, handed over by the state these approvals are part of.
    publisher: Publisher,
}

/// The approvals of one instance: rules, "always" decisions, requests
/// waiting for a person. Cheap to clone; all clones share one state.
#[derive(Clone)]
pub struct Approvals {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approvals").finish_non_exhaustive()
    }
}

impl Default for Approvals {
    /// Approvals in memory, alone: their changes reach nobody (see
    /// [`Approvals::in_memory`] for a state's).
    fn default() -> Self {
        Approvals::in_memory(Publisher::unheard())
    }
}

/// What reopening an instance's approvals found.
#[derive(Debug, Default)]
pub struct Reopened {
    /// Requests left open by the last run, now recorded as denied.
    pub closed: Vec<Decision>,
    /// Problems with the journal (each names the file and line).
    pub warnings: Vec<String>,
}

impl Approvals {
    /// Approvals kept in memory only, announcing with `publisher`.
    pub fn in_memory(publisher: Publisher) -> Self {
        Approvals::with_journal(None, Vec::new(), BTreeMap::new(), 1, publisher)
    }

    fn with_journal(
        journal: Option<Journal>,
        standing: Vec<Standing>,
        ended: BTreeMap<u64, Decision>,
        next_id: u64,
        publisher: Publisher,
    ) -> Self {
        Approvals {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    asking: Default::default(),
                    rules: HashMap::new(),
                    workspaces: HashMap::new(),
                    standing,
                    pending: BTreeMap::new(),
                    ended,
                    next_id,
                    timeout: DEFAULT_TIMEOUT,
                    journal,
                }),
                publisher,
            }),
        }
    }

    /// Opens the approvals kept in journal `path` (carrying over, once,
    /// what an older awtui kept at `legacy`, see [`Journal::open`]): the
    /// "always" rules come back, and every request the last run left open
    /// is recorded as expired. Changes are announced with `publisher` (of
    /// the state they will be part of).
    pub fn open(
        path: &Path,
        legacy: Option<&Path>,
        publisher: Publisher,
    ) -> std::io::Result<(Approvals, Reopened)> {
        let (mut journal, replay) = Journal::open(path, legacy)?;
        let mut standing: Vec<Standing> = Vec::new();
        let mut open: BTreeMap<u64, Request> = BTreeMap::new();
        let mut ended: BTreeMap<u64, Decision> = BTreeMap::new();
        let mut next_id = 1;
        for record in replay.records {
            match record {
                Record::Requested { request } => {
                    next_id = next_id.max(request.id + 1);
                    open.insert(request.id, request);
                }
                Record::Decided { decision } => {
                    next_id = next_id.max(decision.id + 1);
                    open.remove(&decision.id);
                    remember(&mut ended, decision);
                }
                Record::Always { standing: s } => {
                    if !standing.contains(&s) {
                        standing.push(s);
                    }
                }
                Record::Revoked { standing: s } => standing.retain(|x| *x != s),
            }
        }
        let mut closed = Vec::new();
        for request in open.into_values() {
            let decision = Decision {
                id: request.id,
                subject: request.subject(),
                agent: request.agent,
                tool: request.tool,
                verdict: Verdict::Deny,
                by: BY_AWTUI.into(),
                rule: None,
                reason: Some("awtui ended while the request waited".into()),
                expired: true,
                at: Utc::now(),
            };
            journal.write(&Record::Decided {
                decision: decision.clone(),
            })?;
            remember(&mut ended, decision.clone());
            closed.push(decision);
        }
        Ok((
            Approvals::with_journal(Some(journal), standing, ended, next_id, publisher),
            Reopened {
                closed,
                warnings: replay.warnings,
            },
        ))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn emit(&self, approval: ApprovalEvent) {
        let approval = Box::new(approval);
        self.inner
            .publisher
            .publish(crate::context::ContextEvent::ApprovalChanged { approval });
    }

    /// Whether these approvals announce on `bus` (a state accepts only
    /// its own parts).
    pub(crate) fn publishes_on(&self, bus: &crate::context::Bus) -> bool {
        bus.carries(&self.inner.publisher)
    }

    /// Sets which agents ask (`permissions: ask`) and their `approve:`
    /// rules: only they are offered and may call `permission_request`.
    pub fn set_rules(&self, rules: HashMap<String, RuleSet>) {
        let mut state = self.lock();
        state.asking = rules.keys().cloned().collect();
        state.rules = rules;
    }

    /// Sets each agent's workspace from awtui's own records (the folder
    /// awtui runs its turns in): a redirection in a command line is
    /// covered by an allow rule only when it stays inside it.
    pub fn set_workspaces(&self, workspaces: HashMap<String, PathBuf>) {
        self.lock().workspaces = workspaces;
    }

    /// Whether `agent`'s CLI asks through awtui (`permissions: ask`).
    pub fn asks(&self, agent: &str) -> bool {
        self.lock().asking.contains(agent)
    }

    /// Sets how long a request waits for a person before it is denied.
    pub fn set_timeout(&self, timeout: Duration) {
        self.lock().timeout = timeout;
    }

    /// The approval timeout.
    pub fn timeout(&self) -> Duration {
        self.lock().timeout
    }

    /// The requests waiting for a person, oldest first.
    pub fn pending(&self) -> Vec<Request> {
        self.lock()
            .pending
            .values()
            .map(|p| p.request.clone())
            .collect()
    }

    /// The "always" decisions, in the order they were made.
    pub fn standing(&self) -> Vec<Standing> {
        self.lock().standing.clone()
    }

    /// Everything a front end shows.
    pub fn snapshot(&self) -> ApprovalsSnapshot {
        let state = self.lock();
        ApprovalsSnapshot {
            pending: state.pending.values().map(|p| p.request.clone()).collect(),
            standing: state.standing.clone(),
            rules: state
                .rules
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            timeout_secs: state.timeout.as_secs(),
        }
    }

    /// The workflow's rules of `agent`.
    pub fn rules_of(&self, agent: &str) -> RuleSet {
        self.lock().rules.get(agent).cloned().unwrap_or_default()
    }

    /// Asks whether `agent` may run `tool` with `input`: a rule answers at
    /// once, otherwise the request waits for [`Approvals::decide`], at most
    /// the approval timeout (then it is denied). When `gone` completes
    /// (the CLI cancelled the call or its session ended) or the returned
    /// future is dropped, the request expires at once ([`EXPIRED`]).
    pub async fn ask(
        &self,
        agent: &str,
        tool: &str,
        input: Value,
        tool_use_id: Option<String>,
        context: Option<String>,
        gone: impl std::future::Future<Output = ()>,
    ) -> Decision {
        let (rx, id, timeout) = {
            let mut state = self.lock();
            let rules = state.rules.get(agent).cloned().unwrap_or_default();
            let workspace = state.workspaces.get(agent).map(PathBuf::as_path);
            let (verdict, source) =
                rules::decide(&rules, &state.standing, agent, tool, &input, workspace);
            let id = state.next_id;
            state.next_id += 1;
            let request = Request {
                id,
                agent: agent.to_string(),
                tool: tool.to_string(),
                input,
                tool_use_id,
                at: Utc::now(),
                context,
            };
            let rule = match source {
                Source::Workflow(r) | Source::Person(r) => Some(r),
                Source::Default => None,
            };
            if verdict != Verdict::Ask {
                let decision = Decision {
                    id,
                    agent: request.agent.clone(),
                    tool: request.tool.clone(),
                    subject: request.subject(),
                    verdict,
                    by: BY_RULE.into(),
                    rule,
                    reason: None,
                    expired: false,
                    at: Utc::now(),
                };
                remember(&mut state.ended, decision.clone());
                record(
                    &mut state,
                    &Record::Decided {
                        decision: decision.clone(),
                    },
                );
                drop(state);
                self.emit(ApprovalEvent::Decided {
                    decision: decision.clone(),
                });
                return decision;
            }
            if let Err(e) = write(
                &mut state,
                &Record::Requested {
                    request: request.clone(),
                },
            ) {
                let decision = Decision {
                    id,
                    subject: request.subject(),
                    agent: request.agent,
                    tool: request.tool,
                    verdict: Verdict::Deny,
                    by: BY_AWTUI.into(),
                    rule: None,
                    reason: Some(format!("the request could not be recorded ({e})")),
                    expired: false,
                    at: Utc::now(),
                };
                drop(state);
                self.emit(ApprovalEvent::Decided {
                    decision: decision.clone(),
                });
                return decision;
            }
            let (reply, rx) = oneshot::channel();
            state.pending.insert(
                id,
                Pending {
                    request: request.clone(),
                    reply,
                },
            );
            let timeout = state.timeout;
            drop(state);
            self.emit(ApprovalEvent::Requested { request });
            (rx, id, timeout)
        };
        // Expires the request if this future is dropped before an answer.
        struct Abandon<'a>(&'a Approvals, u64);
        impl Drop for Abandon<'_> {
            fn drop(&mut self) {
                self.0.expire(self.1, "the CLI hung up");
            }
        }
        let guard = Abandon(self, id);
        let answered = tokio::time::timeout(timeout, rx);
        tokio::pin!(answered);
        let waited = tokio::select! {
            waited = &mut answered => waited,
            () = gone => {
                self.expire(id, "the CLI cancelled the call (its own timeout or its turn ended)");
                // The decision the expiry made, if no answer won the race.
                answered.await
            }
        };
        let decision = match waited {
            Ok(Ok(decision)) => decision,
            Ok(Err(_)) => self.denied_by(id, BY_AWTUI, "the request was dropped"),
            Err(_) => {
                let why = format!(
                    "nobody answered within {} (the approval timeout)",
                    crate::duration::human(timeout)
                );
                self.finish(id, deny(&why, BY_TIMEOUT))
                    .unwrap_or_else(|_| self.denied_by(id, BY_TIMEOUT, &why))
            }
        };
        drop(guard);
        decision
    }

    /// A deny decision for a request no longer pending (the answer was
    /// lost), so the CLI still gets one.
    fn denied_by(&self, id: u64, by: &str, why: &str) -> Decision {
        Decision {
            id,
            agent: String::new(),
            tool: String::new(),
            subject: String::new(),
            verdict: Verdict::Deny,
            by: by.into(),
            rule: None,
            reason: Some(why.into()),
            expired: false,
            at: Utc::now(),
        }
    }

    /// Answers request `id` as `by` (a person's name).
    pub fn decide(&self, id: u64, answer: Answer, by: &str) -> Result<Decision, ApprovalError> {
        let verdict = match answer.verdict {
            Some(v @ (Verdict::Allow | Verdict::Deny)) => v,
            _ => return Err(ApprovalError::NoVerdict),
        };
        self.finish(
            id,
            Finish {
                verdict,
                by: by.to_string(),
                reason: answer.reason,
                always: answer.always.then_some(answer.rule),
                expired: false,
            },
        )
    }

    /// The requests of `agent` from id `from` on that a person or a rule
    /// denied (not the expired ones): what its CLI reports as refused.
    pub fn denied_since(&self, agent: &str, from: u64) -> Vec<Decision> {
        self.lock()
            .ended
            .range(from..)
            .map(|(_, d)| d)
            .filter(|d| d.agent == agent && d.verdict == Verdict::Deny && !d.expired)
            .cloned()
            .collect()
    }

    /// The id the next request will get (a mark for [`Approvals::denied_since`]).
    pub fn next_id(&self) -> u64 {
        self.lock().next_id
    }

    fn finish(&self, id: u64, how: Finish) -> Result<Decision, ApprovalError> {
        let mut state = self.lock();
        let Some(pending) = state.pending.remove(&id) else {
            return Err(match state.ended.get(&id) {
                Some(ended) => ApprovalError::Closed {
                    id,
                    how: ended.ended(),
                },
                None => ApprovalError::NotPending(id),
            });
        };
        let request = pending.request;
        let mut standing_changed = false;
        let rule = match how.always {
            Some(rule) => {
                let rule = rule.unwrap_or_else(|| Rule::for_call(&request.tool, &request.input));
                let s = Standing {
                    agent: request.agent.clone(),
                    rule: rule.clone(),
                    verdict: how.verdict,
                };
                if !state.standing.contains(&s) {
                    record(
                        &mut state,
                        &Record::Always {
                            standing: s.clone(),
                        },
                    );
                    state.standing.push(s);
                    standing_changed = true;
                }
                Some(rule)
            }
            None => None,
        };
        let decision = Decision {
            id,
            subject: request.subject(),
            agent: request.agent,
            tool: request.tool,
            verdict: how.verdict,
            by: how.by,
            rule,
            reason: how.reason,
            expired: how.expired,
            at: Utc::now(),
        };
        remember(&mut state.ended, decision.clone());
        record(
            &mut state,
            &Record::Decided {
                decision: decision.clone(),
            },
        );
        let standing = state.standing.clone();
        drop(state);
        let _ = pending.reply.send(decision.clone());
        if standing_changed {
            self.emit(ApprovalEvent::Standing { standing });
        }
        self.emit(ApprovalEvent::Decided {
            decision: decision.clone(),
        });
        Ok(decision)
    }

    /// Closes request `id` as [`EXPIRED`] (`why`: what ended the wait), if
    /// it still waits.
    fn expire(&self, id: u64, why: &str) {
        let _ = self.finish(
            id,
            Finish {
                expired: true,
                ..deny(why, BY_AWTUI)
            },
        );
    }

    /// Expires every request of `agent` still waiting (its turn ended or
    /// it was stopped); returns how many.
    pub fn close_agent(&self, agent: &str, why: &str) -> usize {
        let ids: Vec<u64> = self
            .lock()
            .pending
            .values()
            .filter(|p| p.request.agent == agent)
            .map(|p| p.request.id)
            .collect();
        for id in &ids {
            self.expire(*id, why);
        }
        ids.len()
    }

    /// Expires every request still waiting (the instance ends).
    pub fn close_all(&self, why: &str) {
        let ids: Vec<u64> = self.lock().pending.keys().copied().collect();
        for id in ids {
            self.expire(id, why);
        }
    }

    /// Whether `agent` has a request waiting.
    pub fn is_waiting(&self, agent: &str) -> bool {
        self.lock()
            .pending
            .values()
            .any(|p| p.request.agent == agent)
    }

    /// Removes one "always" decision of `agent`.
    pub fn revoke(&self, agent: &str, rule: &Rule) -> Result<Standing, ApprovalError> {
        let mut state = self.lock();
        let Some(at) = state
            .standing
            .iter()
            .position(|s| s.agent == agent && s.rule == *rule)
        else {
            return Err(ApprovalError::NoSuchRule {
                agent: agent.to_string(),
                rule: rule.to_string(),
            });
        };
        let removed = state.standing.remove(at);
        write(
            &mut state,
            &Record::Revoked {
                standing: removed.clone(),
            },
        )
        .map_err(|error| ApprovalError::Journal {
            path: journal::APPROVALS_FILE.into(),
            error,
        })?;
        let standing = state.standing.clone();
        drop(state);
        self.emit(ApprovalEvent::Standing { standing });
        Ok(removed)
    }
}

struct Finish {
    verdict: Verdict,
    by: String,
    reason: Option<String>,
    /// Keep as a rule: `Some(None)` the call's own, `Some(Some(r))` `r`.
    always: Option<Option<Rule>>,
    /// Closed because nobody waits any more, not decided.
    expired: bool,
}

fn deny(why: &str, by: &str) -> Finish {
    Finish {
        verdict: Verdict::Deny,
        by: by.into(),
        reason: Some(why.into()),
        always: None,
        expired: false,
    }
}

/// Keeps `decision` among the last [`REMEMBERED`] that ended.
fn remember(ended: &mut BTreeMap<u64, Decision>, decision: Decision) {
    ended.insert(decision.id, decision);
    while ended.len() > REMEMBERED {
        ended.pop_first();
    }
}

/// Appends `record` to the journal, if there is one.
fn write(state: &mut State, record: &Record) -> Result<(), String> {
    match &mut state.journal {
        Some(j) => j.write(record).map_err(|e| e.to_string()),
        None => Ok(()),
    }
}

/// [`write`], logging a failure (the decision still reaches the agent).
fn record(state: &mut State, record: &Record) {
    if let Err(e) = write(state, record) {
        tracing::warn!("cannot record an approval decision: {e}");
    }
}

#[cfg(test)]
mod tests;
