use super::*;

/// The status as the tasks say it, going through every one.
fn derived(store: &TaskStore, wf: &str) -> &'static str {
    let tasks = store.tasks_of(wf);
    if tasks.is_empty() {
        "planning"
    } else if tasks.iter().all(|t| t.status.is_done()) {
        "completed"
    } else if tasks
        .iter()
        .any(|t| t.status != TaskStatus::Pending || t.claimed_by.is_some())
    {
        "in_progress"
    } else {
        "ready"
    }
}

fn check(store: &TaskStore, wf: &str) {
    let w = store.workflow(wf).unwrap();
    assert_eq!(store.workflow_status(w), derived(store, wf));
    let tasks = store.tasks_of(wf);
    let done = tasks.iter().filter(|t| t.status.is_done()).count();
    assert_eq!(store.counts(wf), (tasks.len(), done));
    assert_eq!(
        store.is_complete(wf),
        !tasks.is_empty() && done == tasks.len()
    );
}

/// The kept counts agree with the tasks after every kind of move, and
/// after a replay of the same records.
#[test]
fn kept_counts_follow_every_move_and_survive_a_replay() {
    let records = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Record>::new()));
    struct Keep(std::sync::Arc<std::sync::Mutex<Vec<Record>>>);
    impl TaskJournal for Keep {
        fn write(&mut self, r: &[Record]) -> std::io::Result<()> {
            self.0.lock().unwrap().extend(r.iter().cloned());
            Ok(())
        }
    }
    let mut s = TaskStore::open(Box::new(Keep(records.clone())), Replay::default());
    let now = Utc::now();
    let wf = s
        .create_workflow("user", "w", "prompt", "", None, 2, now)
        .unwrap()
        .id;
    check(&s, &wf);
    let plan: Vec<PlannedTask> = (0..6)
        .map(|i| PlannedTask {
            name: format!("t{i}"),
            depends_on: if i >= 2 {
                vec![format!("t{}", i - 2)]
            } else {
                vec![]
            },
            ..PlannedTask::default()
        })
        .collect();
    let ids: Vec<String> = s
        .set_plan(&wf, "p", &plan, now)
        .unwrap()
        .into_iter()
        .map(|t| t.id)
        .collect();
    check(&s, &wf);
    assert_eq!(s.workflow_status(s.workflow(&wf).unwrap()), "ready");
    let a = s
        .register("me", "me", "custom", None, vec![], None, Value::Null, now)
        .unwrap()
        .id;
    // Claim, release, fail, retry, skip and complete everything.
    s.claim("me", &ids[0], &a, now).unwrap().unwrap();
    check(&s, &wf);
    s.release(&ids[0], "user", "test", now).unwrap();
    check(&s, &wf);
    assert_eq!(s.workflow_status(s.workflow(&wf).unwrap()), "ready");
    s.claim("me", &ids[0], &a, now).unwrap().unwrap();
    s.update_status(
        "me",
        &ids[0],
        "failed",
        None,
        Value::Null,
        Some("x".into()),
        now,
    )
    .unwrap();
    check(&s, &wf);
    s.update_status("user", &ids[1], "skipped", None, Value::Null, None, now)
        .unwrap();
    check(&s, &wf);
    for id in [&ids[0], &ids[2], &ids[3], &ids[4], &ids[5]] {
        s.claim("me", id, &a, now).unwrap().unwrap();
        check(&s, &wf);
        s.update_status("me", id, "in_progress", None, Value::Null, None, now)
            .unwrap();
        s.update_status(
            "me",
            id,
            "completed",
            Some("ok".into()),
            Value::Null,
            None,
            now,
        )
        .unwrap();
        check(&s, &wf);
    }
    assert!(s.is_complete(&wf));
    assert_eq!(s.workflow_status(s.workflow(&wf).unwrap()), "completed");

    let replay = Replay {
        records: records.lock().unwrap().clone(),
        warnings: vec![],
    };
    let again = TaskStore::open(Box::new(super::super::journal::NoJournal), replay);
    check(&again, &wf);
    assert!(again.is_complete(&wf));
}

#[test]
fn holders_silent_for_too_long_are_stale_unless_their_turn_runs() {
    let mut s = TaskStore::in_memory();
    let t0 = Utc::now();
    let me = s
        .register("coder", "c", "custom", None, vec![], None, Value::Null, t0)
        .unwrap();
    let w = s
        .create_workflow("coder", "w", "prompt", "", None, 1, t0)
        .unwrap();
    let tasks = s
        .set_plan(
            &w.id,
            "",
            &[PlannedTask {
                name: "a".into(),
                ..Default::default()
            }],
            t0,
        )
        .unwrap();
    s.claim("coder", &tasks[0].id, &me.id, t0).unwrap().unwrap();
    let later = |ms: i64| t0 + chrono::Duration::milliseconds(ms);
    let hb = HEARTBEAT_MS as i64;
    assert!(s.stale_claims(3, later(2 * hb)).is_empty());
    assert_eq!(
        s.stale_claims(3, later(3 * hb + 1)),
        vec![(tasks[0].id.clone(), me.id.clone())]
    );
    assert!(!s.is_alive(s.agent(&me.id).unwrap(), later(3 * hb + 1)));
    // An awtui agent in a turn is alive without heartbeats.
    s.set_in_turn("coder", true);
    assert!(s.stale_claims(3, later(10 * hb)).is_empty());
    s.set_in_turn("coder", false);
    // Released: pending again, with a recovery checkpoint, claimable.
    let t = s
        .release(&tasks[0].id, "system", "missed 3 heartbeats", later(4 * hb))
        .unwrap();
    assert_eq!(t.status, TaskStatus::Pending);
    assert_eq!(s.checkpoints(&t.id).last().unwrap().kind, "recovery");
    assert_eq!(s.ready(&w.id, false).len(), 1);
}

/// The seed's liveness, on by default: a registration silent for
/// three heartbeat periods is marked offline (an awtui agent in a
/// turn never is), must register again before it claims or beats, and
/// its claims count as stale after [`RELEASE_AFTER_MISSED`] periods;
/// an unregistered agent cannot claim either.
#[test]
fn silent_registrations_go_offline_and_must_register_again() {
    let mut s = TaskStore::in_memory();
    let t0 = Utc::now();
    let hb = HEARTBEAT_MS as i64;
    let later = |ms: i64| t0 + chrono::Duration::milliseconds(ms);
    let me = s
        .register("coder", "c", "custom", None, vec![], None, Value::Null, t0)
        .unwrap();
    let busy = s
        .register("lead", "l", "custom", None, vec![], None, Value::Null, t0)
        .unwrap();
    let w = s
        .create_workflow("coder", "w", "prompt", "", None, 1, t0)
        .unwrap();
    let plan: Vec<PlannedTask> = ["a", "b"]
        .iter()
        .map(|n| PlannedTask {
            name: n.to_string(),
            ..Default::default()
        })
        .collect();
    let tasks = s.set_plan(&w.id, "", &plan, t0).unwrap();
    s.claim("coder", &tasks[0].id, &me.id, t0).unwrap().unwrap();
    s.set_in_turn("lead", true);
    assert!(s.mark_silent_offline(later(2 * hb)).unwrap().is_empty());
    let marked = s.mark_silent_offline(later(3 * hb + 1)).unwrap();
    assert_eq!(
        marked.iter().map(|a| a.id.as_str()).collect::<Vec<_>>(),
        [me.id.as_str()],
        "the agent in a turn stays online"
    );
    assert_eq!(s.agent(&me.id).unwrap().status, "offline");
    assert_eq!(s.agent(&busy.id).unwrap().status, "online");
    let refused = s
        .claim("coder", &tasks[1].id, &me.id, later(3 * hb + 2))
        .unwrap_err();
    assert_eq!(refused.code(), "AGENT_OFFLINE", "{refused}");
    assert!(
        refused.to_string().contains("call agent_register again"),
        "{refused}"
    );
    let beat = s
        .heartbeat("coder", &me.id, None, None, later(3 * hb + 2))
        .unwrap_err();
    assert_eq!(beat.code(), "AGENT_OFFLINE");
    // Its claim is stale after the default number of missed beats.
    let missed = u64::from(RELEASE_AFTER_MISSED);
    assert!(s.stale_claims(missed, later(5 * hb)).is_empty());
    assert_eq!(
        s.stale_claims(missed, later(6 * hb + 1)),
        vec![(tasks[0].id.clone(), me.id.clone())]
    );
    // Registering again brings it back.
    let again = s
        .register(
            "coder",
            "c",
            "custom",
            None,
            vec![],
            None,
            Value::Null,
            later(7 * hb),
        )
        .unwrap();
    assert_eq!(again.id, me.id);
    assert_eq!(again.status, "online");
    s.claim("coder", &tasks[1].id, &me.id, later(7 * hb))
        .unwrap()
        .unwrap();
    // An unregistered agent cannot claim.
    s.unregister("coder", &me.id, later(7 * hb)).unwrap();
    let gone = s
        .claim("coder", &tasks[1].id, &me.id, later(7 * hb + 1))
        .unwrap_err();
    assert_eq!(gone.code(), "AGENT_OFFLINE");
}

/// What a stopped or failed awtui agent held: the claims of the
/// registrations it made, nobody else's.
#[test]
fn the_claims_of_an_owner_are_its_registrations_own() {
    let mut s = TaskStore::in_memory();
    let t0 = Utc::now();
    let a = s
        .register("a", "a", "custom", None, vec![], None, Value::Null, t0)
        .unwrap();
    let b = s
        .register("b", "b", "custom", None, vec![], None, Value::Null, t0)
        .unwrap();
    let w = s.create_workflow("a", "w", "p", "", None, 1, t0).unwrap();
    let plan: Vec<PlannedTask> = ["x", "y"]
        .iter()
        .map(|n| PlannedTask {
            name: n.to_string(),
            ..Default::default()
        })
        .collect();
    let tasks = s.set_plan(&w.id, "", &plan, t0).unwrap();
    s.claim("a", &tasks[0].id, &a.id, t0).unwrap().unwrap();
    s.claim("b", &tasks[1].id, &b.id, t0).unwrap().unwrap();
    assert_eq!(
        s.claims_of_owner("a"),
        vec![(tasks[0].id.clone(), a.id.clone())]
    );
    assert!(s.claims_of_owner("c").is_empty());
}
