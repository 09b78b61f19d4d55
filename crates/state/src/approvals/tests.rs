use super::*;
use serde_json::json;

/// `a.ask` for a call without a tool-use id or context, from a CLI
/// that never stops waiting.
async fn asked(a: &Approvals, agent: &str, tool: &str, input: Value) -> Decision {
    a.ask(agent, tool, input, None, None, std::future::pending())
        .await
}

async fn until_pending(a: &Approvals, n: usize) -> Vec<Request> {
    for _ in 0..400 {
        let p = a.pending();
        if p.len() >= n {
            return p;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no {n} pending requests");
}

#[tokio::test]
async fn a_person_allows_once_and_the_waiting_call_gets_it() {
    let bus = crate::context::Bus::new();
    let a = Approvals::in_memory(bus.publisher());
    let mut events = bus.subscribe();
    let asking = {
        let a = a.clone();
        tokio::spawn(async move { asked(&a, "coder", "Bash", json!({"command": "ls"})).await })
    };
    let pending = until_pending(&a, 1).await;
    assert_eq!(pending[0].subject(), "ls");
    assert!(a.is_waiting("coder"));
    let d = a
        .decide(
            pending[0].id,
            Answer {
                verdict: Some(Verdict::Allow),
                ..Answer::default()
            },
            "user",
        )
        .unwrap();
    let got = asking.await.unwrap();
    assert_eq!(got, d);
    assert_eq!(
        got.answer(&json!({"command": "ls"})),
        json!({"behavior": "allow", "updatedInput": {"command": "ls"}})
    );
    assert!(a.pending().is_empty());
    let approval = |e: crate::context::ContextEvent| match e {
        crate::context::ContextEvent::ApprovalChanged { approval } => *approval,
        other => panic!("not an approval: {other:?}"),
    };
    assert!(matches!(
        approval(events.recv().await.unwrap()),
        ApprovalEvent::Requested { .. }
    ));
    assert!(matches!(
        approval(events.recv().await.unwrap()),
        ApprovalEvent::Decided { .. }
    ));
    assert_eq!(
        a.decide(
            pending[0].id,
            Answer {
                verdict: Some(Verdict::Deny),
                ..Answer::default()
            },
            "user"
        ),
        Err(ApprovalError::Closed {
            id: pending[0].id,
            how: "was already answered: allowed by user".into()
        })
    );
}

/// The CLI cancels the call (its own timeout) while the person reads
/// it: the request expires at once, the waiting call returns, and an
/// answer afterwards fails saying the request expired.
#[tokio::test]
async fn a_request_the_cli_stopped_waiting_for_expires_and_refuses_answers() {
    let a = Approvals::default();
    let (cancel, cancelled) = oneshot::channel::<()>();
    let asking = {
        let a = a.clone();
        tokio::spawn(async move {
            a.ask(
                "coder",
                "Bash",
                json!({"command": "ls"}),
                None,
                None,
                async {
                    let _ = cancelled.await;
                },
            )
            .await
        })
    };
    let id = until_pending(&a, 1).await[0].id;
    cancel.send(()).unwrap();
    let got = asking.await.unwrap();
    assert!(got.expired, "{got:?}");
    assert!(a.pending().is_empty());
    assert!(
        got.summary().contains("expired: the agent stopped waiting"),
        "{}",
        got.summary()
    );
    let late = a
        .decide(
            id,
            Answer {
                verdict: Some(Verdict::Allow),
                ..Answer::default()
            },
            "user",
        )
        .unwrap_err();
    assert!(
        late.to_string()
            .starts_with(&format!("approval #{id} {EXPIRED}")),
        "{late}"
    );
    assert!(
        a.denied_since("coder", 0).is_empty(),
        "an expiry is no denial"
    );
}

/// What a person or a rule denied during a turn is told apart from
/// what the CLI refused on its own.
#[tokio::test]
async fn denials_since_a_mark_are_the_agents_own() {
    let a = Approvals::default();
    let mut rules = HashMap::new();
    rules.insert(
        "coder".to_string(),
        RuleSet {
            deny: vec![Rule::parse("Bash(rm *)").unwrap()],
            ..RuleSet::default()
        },
    );
    a.set_rules(rules);
    let mark = a.next_id();
    let d = asked(&a, "coder", "Bash", json!({"command": "rm x"})).await;
    assert_eq!(d.verdict, Verdict::Deny);
    assert_eq!(a.denied_since("coder", mark).len(), 1);
    assert!(a.denied_since("coder", mark + 1).is_empty());
    assert!(a.denied_since("other", mark).is_empty());
}

#[tokio::test]
async fn a_deny_carries_the_reason_to_the_model() {
    let a = Approvals::default();
    let asking = {
        let a = a.clone();
        tokio::spawn(async move { asked(&a, "coder", "Write", json!({"file_path": "x"})).await })
    };
    let id = until_pending(&a, 1).await[0].id;
    a.decide(
        id,
        Answer {
            verdict: Some(Verdict::Deny),
            reason: Some("write tests first".into()),
            ..Answer::default()
        },
        "user",
    )
    .unwrap();
    let got = asking.await.unwrap();
    assert_eq!(
        got.answer(&json!({})),
        json!({"behavior": "deny", "message": "Denied by user: write tests first"})
    );
    assert_eq!(
        got.summary(),
        "approval #1: denied Write \"x\" for coder (user: write tests first)"
    );
}

#[test]
fn the_channel_line_wakes_nobody() {
    let d = Decision {
        id: 7,
        agent: "coder".into(),
        tool: "Bash".into(),
        subject: "echo @reviewer @all".into(),
        verdict: Verdict::Allow,
        by: BY_RULE.into(),
        rule: Some(Rule::parse("Bash(echo *)").unwrap()),
        reason: Some("ask @user".into()),
        expired: false,
        at: Utc::now(),
    };
    let line = d.summary();
    let agents = vec!["coder".to_string(), "reviewer".to_string()];
    assert!(
        crate::context::mentions::extract(&line, &agents, "system").is_empty(),
        "{line}"
    );
    assert!(line.contains("for coder (rule Bash(echo *): ask"), "{line}");
}

#[tokio::test]
async fn always_skips_the_question_next_time_and_can_be_revoked() {
    let a = Approvals::default();
    let ask = |a: &Approvals| {
        let a = a.clone();
        tokio::spawn(async move { asked(&a, "coder", "Bash", json!({"command": "make"})).await })
    };
    let first = ask(&a);
    let id = until_pending(&a, 1).await[0].id;
    a.decide(
        id,
        Answer {
            verdict: Some(Verdict::Allow),
            always: true,
            ..Answer::default()
        },
        "user",
    )
    .unwrap();
    first.await.unwrap();
    let second = ask(&a).await.unwrap();
    assert_eq!(second.verdict, Verdict::Allow);
    assert_eq!(second.by, BY_RULE);
    assert_eq!(second.rule, Some(Rule::parse("Bash(make)").unwrap()));
    a.revoke("coder", &Rule::parse("Bash(make)").unwrap())
        .unwrap();
    let third = ask(&a);
    until_pending(&a, 1).await;
    a.close_agent("coder", "stopped");
    assert_eq!(third.await.unwrap().verdict, Verdict::Deny);
    assert!(
        a.revoke("coder", &Rule::parse("Bash(make)").unwrap())
            .is_err()
    );
}

#[tokio::test]
async fn nobody_answering_denies_after_the_timeout() {
    let a = Approvals::default();
    a.set_timeout(Duration::from_millis(100));
    let d = asked(&a, "coder", "Bash", json!({"command": "ls"})).await;
    assert_eq!(d.verdict, Verdict::Deny);
    assert_eq!(d.by, BY_TIMEOUT);
    assert!(
        d.message().contains("nobody answered within 100ms"),
        "{}",
        d.message()
    );
    assert!(a.pending().is_empty());
}

#[tokio::test]
async fn a_dropped_wait_denies_instead_of_staying_pending() {
    let a = Approvals::default();
    let asking = {
        let a = a.clone();
        tokio::spawn(async move { asked(&a, "coder", "Bash", json!({"command": "ls"})).await })
    };
    until_pending(&a, 1).await;
    asking.abort();
    let _ = asking.await;
    assert!(a.pending().is_empty());
}

#[tokio::test]
async fn reopening_denies_what_the_last_run_left_open_and_keeps_always_rules() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (a, _) = Approvals::open(
            &dir.path().join("approvals.jsonl"),
            None,
            Publisher::unheard(),
        )
        .unwrap();
        let first = {
            let a = a.clone();
            tokio::spawn(
                async move { asked(&a, "coder", "Bash", json!({"command": "make"})).await },
            )
        };
        let id = until_pending(&a, 1).await[0].id;
        a.decide(
            id,
            Answer {
                verdict: Some(Verdict::Allow),
                always: true,
                ..Answer::default()
            },
            "user",
        )
        .unwrap();
        first.await.unwrap();
        // Left waiting: the "crash" below (a forgotten hub) never answers.
        let left = {
            let a = a.clone();
            tokio::spawn(
                async move { asked(&a, "coder", "Write", json!({"file_path": "y"})).await },
            )
        };
        until_pending(&a, 1).await;
        std::mem::forget(left);
        std::mem::forget(a);
    }
    let (a, reopened) = Approvals::open(
        &dir.path().join("approvals.jsonl"),
        None,
        Publisher::unheard(),
    )
    .unwrap();
    assert!(a.pending().is_empty());
    assert_eq!(reopened.closed.len(), 1);
    assert_eq!(reopened.closed[0].id, 2);
    assert_eq!(reopened.closed[0].verdict, Verdict::Deny);
    assert_eq!(a.standing().len(), 1);
    let d = asked(&a, "coder", "Bash", json!({"command": "make"})).await;
    assert_eq!((d.verdict, d.id), (Verdict::Allow, 3));
    // A third opening finds nothing left open.
    drop(a);
    let (_, again) = Approvals::open(
        &dir.path().join("approvals.jsonl"),
        None,
        Publisher::unheard(),
    )
    .unwrap();
    assert!(again.closed.is_empty());
}
