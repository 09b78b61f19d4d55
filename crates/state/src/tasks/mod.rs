//! Tasks: the caw protocol (seed `caw-agent-protocol.md`). Agents register,
//! claim tasks of a plan atomically, load their context within a token
//! budget, record checkpoints, send heartbeats and report outcomes.
//!
//! - [`model`]: the records, as stored and returned.
//! - [`transitions`]: the one table of status moves.
//! - [`store`]: the rules and the claimable-task index.
//! - [`journal`]: durability (`tasks.jsonl`, fdatasync per operation).
//! - [`budget`]: `task_load_context` within `max_tokens`.
//! - [`TaskBoard`]: the store shared by the MCP server, the engine and
//!   front ends, with a broadcast of what changed.

pub mod budget;
pub mod journal;
pub use crate::vocab::tasks as model;
pub mod store;
pub use crate::vocab::transitions;

use std::sync::{Arc, Mutex, MutexGuard};

use crate::context::Publisher;
pub use crate::vocab::state::CausedEvent;
pub use crate::vocab::tasks::TaskEvent;
pub use model::{Checkpoint, PlanWorkflow, PlanWorkspace, RegisteredAgent, Task, TaskStatus};
pub use store::{PlannedTask, TaskStore};

/// A caw error: the seed's code and a sentence for the agent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TaskError {
    #[error("there is no task '{id}'; workflow_next_tasks or workflow_progress list the tasks")]
    TaskNotFound { id: String },
    #[error(
        "there is no registered agent '{id}'; call agent_register first and use the id it returns"
    )]
    AgentNotFound { id: String },
    #[error(
        "agent '{agent_id}' is offline ({why}); call agent_register again before you claim or send heartbeats"
    )]
    Offline { agent_id: String, why: String },
    #[error("there is no workflow '{id}'; workflow_list shows the workflows")]
    WorkflowNotFound { id: String },
    #[error(
        "agent '{agent_id}' was registered by {owner}, not by you ({caller}); act only as the id your own agent_register returned"
    )]
    NotYours {
        agent_id: String,
        owner: String,
        caller: String,
    },
    #[error(
        "task '{task_id}' is held by {holder} ({holder_owner}); only its holder (or the person) may change it"
    )]
    HeldByOther {
        task_id: String,
        holder: String,
        holder_owner: String,
    },
    #[error("task '{task_id}' is not claimed; claim it with task_claim first")]
    NotClaimed { task_id: String },
    #[error("task '{task_id}' cannot go from {from} to {to}: {why}")]
    InvalidTransition {
        task_id: String,
        from: TaskStatus,
        to: TaskStatus,
        why: String,
    },
    #[error("{0}")]
    InvalidState(String),
    #[error("task '{task}' depends on '{dependency}', which is not a task of the plan")]
    UnknownDependency { task: String, dependency: String },
    #[error("task '{task}' cannot depend on itself")]
    SelfDependency { task: String },
    #[error("the plan has two tasks named '{name}'")]
    DuplicateTaskName { name: String },
    #[error("the plan's dependencies form a cycle: {}", .tasks.join(" → "))]
    DependencyCycle { tasks: Vec<String> },
    #[error("{0}")]
    Invalid(String),
    #[error("the task state could not be saved: {0}")]
    Storage(String),
}

impl TaskError {
    /// The seed's error code (caw's where the seed names none).
    pub fn code(&self) -> &'static str {
        match self {
            TaskError::TaskNotFound { .. } => "TASK_NOT_FOUND",
            TaskError::AgentNotFound { .. } => "AGENT_NOT_FOUND",
            TaskError::Offline { .. } => "AGENT_OFFLINE",
            TaskError::WorkflowNotFound { .. } => "WORKFLOW_NOT_FOUND",
            TaskError::NotYours { .. } | TaskError::HeldByOther { .. } => "PERMISSION_DENIED",
            TaskError::NotClaimed { .. } | TaskError::InvalidTransition { .. } => {
                "INVALID_TRANSITION"
            }
            TaskError::InvalidState(_) => "INVALID_STATE",
            TaskError::UnknownDependency { .. } => "UNKNOWN_DEPENDENCY",
            TaskError::SelfDependency { .. } => "SELF_DEPENDENCY",
            TaskError::DuplicateTaskName { .. } => "DUPLICATE_TASK_NAME",
            TaskError::DependencyCycle { .. } => "DEPENDENCY_CYCLE",
            TaskError::Invalid(_) => "INVALID_ARGUMENT",
            TaskError::Storage(_) => "STORAGE_ERROR",
        }
    }
}

/// The first cycle in a dependency graph (`deps[i]` = what `i` depends
/// on), as the indices around it; `None` when the graph is acyclic.
pub fn find_cycle(deps: &[Vec<usize>]) -> Option<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut marks = vec![Mark::New; deps.len()];
    for root in 0..deps.len() {
        if marks[root] != Mark::New {
            continue;
        }
        // Iterative DFS: (node, next edge to follow).
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        marks[root] = Mark::Open;
        while let Some(&mut (node, ref mut edge)) = stack.last_mut() {
            if let Some(&next) = deps[node].get(*edge) {
                *edge += 1;
                match marks.get(next) {
                    Some(Mark::New) => {
                        marks[next] = Mark::Open;
                        stack.push((next, 0));
                    }
                    Some(Mark::Open) => {
                        let at = stack.iter().position(|(n, _)| *n == next).unwrap_or(0);
                        let mut cycle: Vec<usize> = stack[at..].iter().map(|(n, _)| *n).collect();
                        cycle.push(next);
                        return Some(cycle);
                    }
                    _ => {}
                }
            } else {
                marks[node] = Mark::Done;
                stack.pop();
            }
        }
    }
    None
}

/// A task's change followed by its newest checkpoint (what a release or a
/// status move that records one announces).
pub fn with_last_checkpoint(store: &TaskStore, task: Task) -> Vec<TaskEvent> {
    let checkpoint = store.checkpoints(&task.id).last().cloned();
    let mut events = vec![TaskEvent::TaskChanged(task)];
    events.extend(checkpoint.map(TaskEvent::CheckpointAdded));
    events
}

/// The task store behind a mutex (claims are atomic under it), shared by
/// the MCP server, the engine and front ends, with a broadcast of changes.
#[derive(Clone)]
pub struct TaskBoard {
    store: Arc<Mutex<TaskStore>>,
    /// Where its changes are announced, with who made them: the
    /// instance's one stream of state facts, handed over by the state
    /// this board is part of.
    publisher: Publisher,
    /// The instance's worktrees folder
    /// ([`crate::workspace::worktrees_root`]), where `workspace_create`
    /// puts worktrees; `None` when the instance keeps nothing on disk.
    worktree_root: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for TaskBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskBoard").finish_non_exhaustive()
    }
}

impl Default for TaskBoard {
    /// An empty board in memory, alone (see [`TaskBoard::alone`]).
    fn default() -> Self {
        TaskBoard::alone(TaskStore::in_memory())
    }
}

impl TaskBoard {
    /// Shares `store`, announcing its changes with `publisher` (of the
    /// state it will be part of: [`crate::context::Bus::publisher`]).
    pub fn new(store: TaskStore, publisher: Publisher) -> Self {
        TaskBoard {
            store: Arc::new(Mutex::new(store)),
            publisher,
            worktree_root: None,
        }
    }

    /// Shares `store` outside any state (a snapshot of a task file, a
    /// test): its changes are announced to nobody.
    pub fn alone(store: TaskStore) -> Self {
        TaskBoard::new(store, Publisher::unheard())
    }

    /// The same board, with workspace worktrees made in the instance's
    /// worktrees folder `dir`.
    pub fn with_worktree_root(mut self, dir: std::path::PathBuf) -> Self {
        self.worktree_root = Some(dir);
        self
    }

    /// The folder workspace worktrees go in, if any.
    pub fn worktree_root(&self) -> Option<&std::path::Path> {
        self.worktree_root.as_deref()
    }

    /// Whether this board announces on `bus` (a state accepts only its
    /// own parts).
    pub(crate) fn publishes_on(&self, bus: &crate::context::Bus) -> bool {
        bus.carries(&self.publisher)
    }

    fn lock(&self) -> MutexGuard<'_, TaskStore> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Read access.
    pub fn read<T>(&self, f: impl FnOnce(&TaskStore) -> T) -> T {
        f(&self.lock())
    }

    /// Runs `f` with the store locked; every event it returns is announced
    /// before the lock is released, so events follow the order of changes.
    pub fn change<T>(&self, f: impl FnOnce(&mut TaskStore) -> (T, Vec<TaskEvent>)) -> T {
        self.change_as(None, f)
    }

    /// [`TaskBoard::change`] made by agent `by`'s tool call: its events are
    /// announced as caused by it ([`CausedEvent::by`]).
    pub fn change_by<T>(
        &self,
        by: &str,
        f: impl FnOnce(&mut TaskStore) -> (T, Vec<TaskEvent>),
    ) -> T {
        self.change_as(Some(by), f)
    }

    fn change_as<T>(
        &self,
        by: Option<&str>,
        f: impl FnOnce(&mut TaskStore) -> (T, Vec<TaskEvent>),
    ) -> T {
        let mut guard = self.lock();
        let (value, events) = f(&mut guard);
        for event in events {
            let change = Box::new(CausedEvent {
                by: by.map(str::to_string),
                event,
            });
            self.publisher
                .publish(crate::context::ContextEvent::TaskChanged { change });
        }
        value
    }

    /// Tells the board whether `owner`'s turn runs (alive without heartbeats).
    pub fn set_in_turn(&self, owner: &str, running: bool) {
        self.lock().set_in_turn(owner, running);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_are_found_and_named_in_order() {
        assert_eq!(find_cycle(&[vec![], vec![0], vec![1]]), None);
        let c = find_cycle(&[vec![2], vec![0], vec![1]]).unwrap();
        assert_eq!(c.first(), c.last());
        assert_eq!(c.len(), 4);
        assert_eq!(find_cycle(&[vec![0]]), Some(vec![0, 0]));
    }
}
