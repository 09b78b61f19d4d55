//! The engine's side of the task board: what front ends see of it (a
//! snapshot, events), what the person can do to it (commands, run as
//! `user`), and waking agents when tasks become available — awtui agents
//! sleep until mentioned, caw agents pull, so the engine posts one system
//! message that mentions the agents allowed to take the new tasks.

use std::collections::BTreeSet;

use chrono::Utc;

use crate::context::mentions::USER;
use crate::tasks::{PlanWorkspace, PlannedTask, Task, TaskBoard, TaskEvent, TaskStatus};
pub use crate::vocab::tasks::{TaskCommand, TaskSnapshot};

/// Reads the whole board.
pub fn snapshot(board: &TaskBoard) -> TaskSnapshot {
    board.read(|s| TaskSnapshot {
        workflows: s.workflows().into_iter().cloned().collect(),
        tasks: s.all_tasks().into_iter().cloned().collect(),
        agents: s.agents().cloned().collect(),
        last_checkpoints: s
            .all_tasks()
            .iter()
            .filter_map(|t| s.checkpoints(&t.id).last().cloned())
            .collect(),
        workspaces: {
            let mut all: Vec<PlanWorkspace> = s.workspaces().cloned().collect();
            all.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
            all
        },
    })
}

/// Runs a task command as the person; the board announces what changed.
pub fn carry_out(board: &TaskBoard, cmd: TaskCommand, workflow_name: &str) -> Result<(), String> {
    let now = Utc::now();
    board.change(|s| {
        let result: Result<Vec<TaskEvent>, crate::tasks::TaskError> = (|| match cmd {
            TaskCommand::Add {
                workflow,
                name,
                description,
                depends_on,
                assignee,
            } => {
                let mut events = Vec::new();
                let wf = match workflow {
                    Some(w) => s
                        .workflows()
                        .into_iter()
                        .find(|x| x.id == w || x.name == w)
                        .map(|x| x.id.clone())
                        .ok_or(crate::tasks::TaskError::WorkflowNotFound { id: w })?,
                    None => match s.workflows().as_slice() {
                        [only] => only.id.clone(),
                        [] => {
                            let w =
                                s.create_workflow(USER, workflow_name, "custom", "", None, 1, now)?;
                            events.push(TaskEvent::WorkflowChanged(w.clone()));
                            w.id
                        }
                        several => {
                            return Err(crate::tasks::TaskError::Invalid(format!(
                                "there are {} workflows; name one ({})",
                                several.len(),
                                several
                                    .iter()
                                    .map(|w| format!("{} {}", w.id, w.name))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )));
                        }
                    },
                };
                let task = s.add_task(
                    &wf,
                    PlannedTask {
                        id: None,
                        name,
                        description,
                        depends_on,
                        assignee,
                        role: None,
                    },
                    now,
                )?;
                events.push(TaskEvent::TaskChanged(task));
                Ok(events)
            }
            TaskCommand::Release { task } => {
                let t = s.release(&task, USER, "released by the person", now)?;
                Ok(crate::tasks::with_last_checkpoint(s, t))
            }
            TaskCommand::Status {
                task,
                status,
                outcome,
                error,
            } => {
                let t = s.update_status(
                    USER,
                    &task,
                    &status,
                    outcome,
                    serde_json::Value::Null,
                    error,
                    now,
                )?;
                Ok(vec![TaskEvent::TaskChanged(t)])
            }
        })();
        match result {
            Ok(events) => (Ok(()), events),
            Err(e) => (Err(e.to_string()), Vec::new()),
        }
    })
}

/// The id of the workflow a workflow file's plan lives in: `wf_` and 12
/// hex digits of a hash of the workflow's name, the same at every start.
pub fn file_workflow_id(workflow_name: &str) -> String {
    format!("wf_{}", &stable_hex(workflow_name)[..12])
}

/// A task id for a workflow file's task: `tk_` and 12 hex digits of a hash
/// of the workflow's name and the task's key.
pub fn file_task_id(workflow_name: &str, key: &str) -> String {
    format!(
        "tk_{}",
        &stable_hex(&format!("{workflow_name}\u{0}{key}"))[..12]
    )
}

fn stable_hex(text: &str) -> String {
    crate::fsutil::stable_hash(text.as_bytes())
}

/// Makes the plan a workflow file declares, once: the workflow (fixed id)
/// and its tasks, dependencies resolved by key.
pub fn create_file_plan(
    board: &TaskBoard,
    workflow_name: &str,
    tasks: &[crate::workflow::FileTask],
) -> Result<(), String> {
    if tasks.is_empty() {
        return Ok(());
    }
    let now = Utc::now();
    let id = file_workflow_id(workflow_name);
    board.change(|s| {
        let run =
            |s: &mut crate::tasks::TaskStore| -> Result<Vec<TaskEvent>, crate::tasks::TaskError> {
                if !s.tasks_of(&id).is_empty() {
                    return Ok(Vec::new());
                }
                s.ensure_workflow(&id, workflow_name, now)?;
                let planned: Vec<PlannedTask> = tasks
                    .iter()
                    .map(|t| PlannedTask {
                        id: Some(file_task_id(workflow_name, &t.key)),
                        name: t.name.clone(),
                        description: t.description.clone(),
                        depends_on: t
                            .depends_on
                            .iter()
                            .map(|d| {
                                tasks
                                    .iter()
                                    .find(|x| &x.key == d || &x.name == d)
                                    .map(|x| file_task_id(workflow_name, &x.key))
                                    .unwrap_or_else(|| d.clone())
                            })
                            .collect(),
                        assignee: t.assignee.clone(),
                        role: t.role.clone(),
                    })
                    .collect();
                let made = s.set_plan(&id, "declared in the workflow file", &planned, now)?;
                let mut events: Vec<TaskEvent> =
                    made.into_iter().map(TaskEvent::TaskChanged).collect();
                events.extend(s.workflow(&id).cloned().map(TaskEvent::WorkflowChanged));
                Ok(events)
            };
        match run(s) {
            Ok(events) => (Ok(()), events),
            Err(e) => (Err(e.to_string()), Vec::new()),
        }
    })
}

/// Remembers which available tasks were announced, so each becomes news
/// once per time it becomes available.
#[derive(Debug, Default)]
pub struct Announcer {
    announced: BTreeSet<String>,
    /// Who gave each task back (its holder's unregistration, release or
    /// failure), so that agent alone is not woken by its news, whoever's
    /// change the news happens to come with.
    freed_by: std::collections::BTreeMap<String, Option<String>>,
    /// Tasks seen held (claimed or past pending) and not yet seen given
    /// back. The board is read live, so it can show a task free before its
    /// release reaches [`observe`](Announcer::observe); such a task waits
    /// for that event, which says who freed it, instead of being told as
    /// news of whatever change came first (and keeping the wrong agent
    /// from hearing of it).
    held: BTreeSet<String>,
}

impl Announcer {
    /// Takes note of one change on the board: a task that is no longer
    /// free (claimed, in progress, done, failed) is forgotten, so the next
    /// time it is free (its holder gave it back, unregistered, went stale,
    /// the person released it) it is news again. Every change must be
    /// observed, not only those that may free tasks ([`may_free_tasks`]).
    /// `by` is the agent whose call made the change, if one did.
    pub fn observe(&mut self, event: &TaskEvent, by: Option<&str>) {
        if let TaskEvent::TaskChanged(t) = event {
            if t.status != TaskStatus::Pending || t.claimed_by.is_some() {
                self.announced.remove(&t.id);
                self.freed_by.remove(&t.id);
                self.held.insert(t.id.clone());
            } else {
                if self.held.remove(&t.id) {
                    self.freed_by.insert(t.id.clone(), by.map(str::to_string));
                }
            }
        }
    }

    /// Changes were missed: what was held is not known any more, so free
    /// tasks are told as news again without waiting for their release.
    pub fn resync(&mut self) {
        self.held.clear();
    }

    /// The system message for tasks that became available since the last
    /// call, mentioning who may take them; `None` when nothing is new.
    /// `agents` are the workflow's agents; `by` is the agent whose tool call
    /// came with this news, if one did. An agent is never woken by what its
    /// own call caused: for a task given back that is who gave it back (as
    /// [`observe`](Announcer::observe) saw), for one a finished dependency
    /// unblocked it is `by`.
    pub fn news(
        &mut self,
        board: &TaskBoard,
        agents: &[String],
        by: Option<&str>,
    ) -> Option<String> {
        let ready: Vec<Task> = board.read(|s| {
            s.workflows()
                .into_iter()
                .flat_map(|w| s.ready(&w.id, false))
                .cloned()
                .collect()
        });
        let ids: BTreeSet<String> = ready.iter().map(|t| t.id.clone()).collect();
        // Tasks no longer available may be announced again later.
        self.announced.retain(|id| ids.contains(id));
        let new: Vec<&Task> = ready
            .iter()
            .filter(|t| !self.announced.contains(&t.id) && !self.held.contains(&t.id))
            .collect();
        if new.is_empty() {
            return None;
        }
        let mut who: Vec<String> = Vec::new();
        for t in &new {
            self.announced.insert(t.id.clone());
            let caused_by = match self.freed_by.remove(&t.id) {
                Some(freer) => freer,
                None => by.map(str::to_string),
            };
            for a in eligible(t, agents, board) {
                if !who.contains(&a) && Some(&a) != caused_by.as_ref() {
                    who.push(a);
                }
            }
        }
        let list: Vec<String> = new
            .iter()
            .map(|t| {
                let to = t
                    .assignee
                    .as_ref()
                    .map(|a| format!(" (for {a})"))
                    .unwrap_or_default();
                format!("{} “{}”{to}", t.id, t.name)
            })
            .collect();
        let mentions: Vec<String> = who.iter().map(|a| format!("@{a}")).collect();
        let to = if mentions.is_empty() {
            String::new()
        } else {
            format!("{}: ", mentions.join(" "))
        };
        Some(format!(
            "{} ready to claim: {}. {to}task_claim one (agent_register first), then \
             task_load_context, checkpoints, task_update_status.",
            if new.len() == 1 { "Task" } else { "Tasks" },
            list.join(", "),
        ))
    }
}

/// Who may take `task`: its assignee when that is an agent of the
/// workflow; else the agents registered with its role; else everyone but
/// the agent that planned its workflow, which would take the news of its
/// own plan's tasks for a request to plan again (issue 36: it did, and a
/// second workflow of the same tasks appeared).
fn eligible(task: &Task, agents: &[String], board: &TaskBoard) -> Vec<String> {
    // An agent that said it left (agent_unregister, or a heartbeat saying
    // `offline`) is not woken by task news: under load the news of the
    // task it gave back may be posted while its own turn still runs, and
    // would start it again for work it just walked away from.
    let here: Vec<String> = board.read(|s| {
        agents
            .iter()
            .filter(|a| {
                let mut own = s.agents().filter(|r| &r.owner == *a).peekable();
                own.peek().is_none() || own.any(|r| r.status != "offline")
            })
            .cloned()
            .collect()
    });
    let agents = here.as_slice();
    if let Some(a) = &task.assignee
        && agents.contains(a)
    {
        return vec![a.clone()];
    }
    if let Some(role) = &task.role {
        let by_role: Vec<String> = board.read(|s| {
            s.agents()
                .filter(|r| &r.role == role && agents.contains(&r.owner))
                .map(|r| r.owner.clone())
                .collect()
        });
        if !by_role.is_empty() {
            return by_role;
        }
        if agents.contains(role) {
            return vec![role.clone()];
        }
    }
    let planner = board.read(|s| s.workflow(&task.workflow_id).map(|w| w.created_by.clone()));
    agents
        .iter()
        .filter(|a| Some(*a) != planner.as_ref())
        .cloned()
        .collect()
}

/// Whether a change may have made tasks available.
pub fn may_free_tasks(event: &TaskEvent) -> bool {
    match event {
        TaskEvent::TaskChanged(t) => {
            matches!(
                t.status,
                TaskStatus::Pending | TaskStatus::Completed | TaskStatus::Skipped
            )
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A board whose changes are heard: its publisher's bus, subscribed.
    fn heard_board() -> (
        TaskBoard,
        tokio::sync::broadcast::Receiver<crate::context::ContextEvent>,
    ) {
        let bus = crate::context::Bus::new();
        let events = bus.subscribe();
        let board = TaskBoard::new(crate::tasks::TaskStore::in_memory(), bus.publisher());
        (board, events)
    }

    fn plan(board: &TaskBoard) -> Vec<Task> {
        let now = Utc::now();
        board.change(|s| {
            let w = s
                .create_workflow("user", "wf", "prompt", "", None, 1, now)
                .unwrap();
            let planned = vec![
                PlannedTask {
                    name: "a".into(),
                    assignee: Some("coder".into()),
                    ..Default::default()
                },
                PlannedTask {
                    name: "b".into(),
                    depends_on: vec!["a".into()],
                    ..Default::default()
                },
            ];
            (s.set_plan(&w.id, "", &planned, now).unwrap(), vec![])
        })
    }

    /// `owner` registers itself (a custom runtime, no role).
    fn register(
        s: &mut crate::tasks::TaskStore,
        owner: &str,
        now: chrono::DateTime<Utc>,
    ) -> crate::tasks::RegisteredAgent {
        s.register(
            owner,
            owner,
            "custom",
            None,
            vec![],
            None,
            serde_json::Value::Null,
            now,
        )
        .unwrap()
    }

    #[test]
    fn each_task_is_news_once_each_time_it_becomes_available() {
        let board = TaskBoard::default();
        let agents = vec!["coder".to_string(), "qa".to_string()];
        let mut ann = Announcer::default();
        assert_eq!(ann.news(&board, &agents, None), None);
        let tasks = plan(&board);
        let text = ann.news(&board, &agents, None).unwrap();
        assert!(
            text.contains(&tasks[0].id) && text.contains("@coder"),
            "{text}"
        );
        assert!(!text.contains("@qa"), "only the assignee: {text}");
        assert!(!text.contains(&tasks[1].id), "b is blocked: {text}");
        assert_eq!(ann.news(&board, &agents, None), None, "not twice");

        // a is done: b is news, for everyone.
        let now = Utc::now();
        board.change(|s| {
            let me = register(s, "coder", now);
            s.claim("coder", &tasks[0].id, &me.id, now)
                .unwrap()
                .unwrap();
            s.update_status(
                "coder",
                &tasks[0].id,
                "completed",
                Some("ok".into()),
                serde_json::Value::Null,
                None,
                now,
            )
            .unwrap();
            ((), vec![])
        });
        let text = ann.news(&board, &agents, None).unwrap();
        assert!(
            text.contains(&tasks[1].id) && text.contains("@coder @qa"),
            "{text}"
        );
    }

    /// Issue 23: the agent whose call made tasks available is not woken by
    /// their news; the others allowed to take them are.
    #[test]
    fn the_news_does_not_mention_the_agent_whose_call_caused_it() {
        let board = TaskBoard::default();
        let agents = vec!["lead".to_string(), "w1".to_string(), "w2".to_string()];
        let mut ann = Announcer::default();
        plan(&board);
        // Task a is for coder (not an agent here: everyone may take it).
        let text = ann.news(&board, &agents, Some("lead")).unwrap();
        assert!(
            text.contains("@w1 @w2:") && !text.contains("@lead"),
            "{text}"
        );
        // The only agent allowed is the one who caused it: nobody is woken.
        let board = TaskBoard::default();
        let mut ann = Announcer::default();
        plan(&board);
        let coder = vec!["coder".to_string()];
        let text = ann.news(&board, &coder, Some("coder")).unwrap();
        assert!(!text.contains('@'), "{text}");
        assert!(text.contains("ready to claim"), "{text}");
    }

    /// An agent that unregistered is not told of tasks, even when the news
    /// is another agent's doing (the tasks_e2e team under load: w2's
    /// completion announced the task w1 had just given back, and woke w1).
    #[test]
    fn an_agent_that_left_is_not_told_of_tasks() {
        let board = TaskBoard::default();
        let agents = vec!["lead".to_string(), "w1".to_string(), "w2".to_string()];
        let now = Utc::now();
        board.change(|s| {
            let me = register(s, "w1", now);
            s.unregister("w1", &me.id, now).unwrap();
            ((), vec![])
        });
        let mut ann = Announcer::default();
        plan(&board);
        let text = ann.news(&board, &agents, Some("w2")).unwrap();
        assert!(text.contains("@lead:"), "{text}");
        assert!(!text.contains("@w1"), "{text}");
    }

    /// Issue 36: the news of a workflow's tasks never mentions the agent
    /// that planned it, neither when planned (whoever's call the news
    /// comes with) nor when a claim is given back; a task assigned to it
    /// still does.
    #[test]
    fn the_planner_is_not_told_of_its_own_plans_tasks_unless_assigned() {
        let (board, heard) = heard_board();
        let agents: Vec<String> = ["lead", "w1", "w2"].map(String::from).to_vec();
        let now = Utc::now();
        let tasks = board.change(|s| {
            let w = s
                .create_workflow("lead", "wf", "prompt", "", None, 2, now)
                .unwrap();
            let planned = vec![
                PlannedTask {
                    name: "open".into(),
                    ..Default::default()
                },
                PlannedTask {
                    name: "mine".into(),
                    assignee: Some("lead".into()),
                    ..Default::default()
                },
            ];
            (s.set_plan(&w.id, "", &planned, now).unwrap(), vec![])
        });
        let mut ann = Announcer::default();
        let first = ann.news(&board, &agents, None).unwrap();
        assert!(
            first.contains("@w1 @w2 @lead:"),
            "the lead for its own task: {first}"
        );
        // Each task alone: the open one is not for the lead.
        let board2 = TaskBoard::default();
        board2.change(|s| {
            let w = s
                .create_workflow("lead", "wf", "prompt", "", None, 1, now)
                .unwrap();
            let planned = vec![PlannedTask {
                name: "open".into(),
                ..Default::default()
            }];
            (s.set_plan(&w.id, "", &planned, now).unwrap(), vec![])
        });
        let mut ann2 = Announcer::default();
        let text = ann2.news(&board2, &agents, None).unwrap();
        assert!(
            text.contains("@w1 @w2:") && !text.contains("@lead"),
            "{text}"
        );
        // w1 claims the open task of the first board and leaves holding it.
        let mut events = heard.resubscribe();
        let me = register_and_claim(&board, "w1", &tasks[0].id, now);
        board.change_by("w1", |s| {
            let freed = s.unregister("w1", &me.id, now).unwrap();
            ((), freed.into_iter().map(TaskEvent::TaskChanged).collect())
        });
        while let Ok(crate::context::ContextEvent::TaskChanged { change }) = events.try_recv() {
            ann.observe(&change.event, change.by.as_deref());
        }
        let again = ann.news(&board, &agents, Some("w1")).unwrap();
        assert!(again.contains(&tasks[0].id), "{again}");
        assert!(
            again.contains("@w2:") && !again.contains("@lead") && !again.contains("@w1"),
            "{again}"
        );
    }

    /// Registers `agent` and has it claim `task`, announcing the claim.
    fn register_and_claim(
        board: &TaskBoard,
        agent: &str,
        task: &str,
        now: chrono::DateTime<Utc>,
    ) -> crate::tasks::RegisteredAgent {
        board.change(|s| {
            let me = register(s, agent, now);
            let t = s.claim(agent, task, &me.id, now).unwrap().unwrap();
            (me, vec![TaskEvent::TaskChanged(t)])
        })
    }

    /// Issue 23: the engine only asks for news on changes that may free
    /// tasks; a claim seen in between is enough for the release to be news.
    #[test]
    fn a_task_claimed_then_released_is_news_again_once() {
        let (board, mut events) = heard_board();
        let agents = vec!["coder".to_string(), "qa".to_string()];
        let mut ann = Announcer::default();
        let tasks = plan(&board);
        let mut pump = |ann: &mut Announcer| {
            let mut news = Vec::new();
            while let Ok(crate::context::ContextEvent::TaskChanged { change }) = events.try_recv() {
                let e = change.event;
                ann.observe(&e, None);
                if may_free_tasks(&e) {
                    news.extend(ann.news(&board, &agents, None));
                }
            }
            news
        };
        assert!(
            ann.news(&board, &agents, None).is_some(),
            "announced when planned"
        );
        let now = Utc::now();
        let me = register_and_claim(&board, "qa", &tasks[0].id, now);
        assert_eq!(
            pump(&mut ann),
            Vec::<String>::new(),
            "a claim frees nothing"
        );
        carry_out(
            &board,
            TaskCommand::Release {
                task: tasks[0].id.clone(),
            },
            "wf",
        )
        .unwrap();
        let news = pump(&mut ann);
        assert_eq!(news.len(), 1, "the release is news: {news:?}");
        assert!(news[0].contains(&tasks[0].id), "{news:?}");
        assert_eq!(
            pump(&mut ann),
            Vec::<String>::new(),
            "once per availability"
        );
        // Given back by unregistering: news once more.
        board.change(|s| {
            let t = s.claim("qa", &tasks[0].id, &me.id, now).unwrap().unwrap();
            let mut events = vec![TaskEvent::TaskChanged(t)];
            events.extend(
                s.unregister("qa", &me.id, now)
                    .unwrap()
                    .into_iter()
                    .map(TaskEvent::TaskChanged),
            );
            ((), events)
        });
        assert_eq!(pump(&mut ann).len(), 1, "given back by unregistering");
    }

    /// The board is read live: a task its holder gave back can be free on
    /// the board before the release reaches the announcer, while another
    /// agent's change is being told. It is not told as that change's news
    /// (which would keep that agent, not the holder, from hearing of it):
    /// it waits for its release, which names who freed it.
    #[test]
    fn a_release_not_yet_seen_waits_for_its_own_event() {
        let (board, mut events) = heard_board();
        let agents: Vec<String> = ["w1", "w2", "w3"].map(String::from).to_vec();
        let mut ann = Announcer::default();
        let tasks = plan(&board);
        assert!(ann.news(&board, &agents, None).is_some(), "planned");
        let now = Utc::now();
        let me = register_and_claim(&board, "w1", &tasks[0].id, now);
        let seen = |events: &mut tokio::sync::broadcast::Receiver<_>| {
            let mut out = Vec::new();
            while let Ok(crate::context::ContextEvent::TaskChanged { change }) = events.try_recv() {
                out.push(*change);
            }
            out
        };
        for c in seen(&mut events) {
            ann.observe(&c.event, c.by.as_deref());
        }
        // w1 leaves holding it; its release is on the board, not yet seen.
        board.change_by("w1", |s| {
            let freed = s.unregister("w1", &me.id, now).unwrap();
            ((), freed.into_iter().map(TaskEvent::TaskChanged).collect())
        });
        assert_eq!(ann.news(&board, &agents, Some("w2")), None, "not w2's news");
        for c in seen(&mut events) {
            ann.observe(&c.event, c.by.as_deref());
        }
        let news = ann
            .news(&board, &agents, Some("w2"))
            .expect("the release is news");
        assert!(news.contains(&tasks[0].id), "{news}");
        assert!(news.contains("@w2 @w3") && !news.contains("@w1"), "{news}");
    }
}
