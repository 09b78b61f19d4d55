use super::*;
use crate::context::mentions;

const AGENTS: [&str; 2] = ["coder", "reviewer"];

fn entry(id: u64, from: &str, message: &str) -> ChannelEntry {
    let agents: Vec<String> = AGENTS.iter().map(|s| s.to_string()).collect();
    ChannelEntry {
        id,
        timestamp: chrono::DateTime::UNIX_EPOCH,
        from: from.into(),
        message: message.into(),
        mentions: mentions::extract(message, &agents, from),
        reply_to: None,
    }
}

fn started(mode: RunMode) -> (Runner, Vec<Effect>) {
    let mut r = Runner::new(RunnerConfig::new(mode, AGENTS));
    let fx = r.handle(
        Millis(0),
        Event::Started {
            kickoff: Some(entry(1, "system", "@coder start")),
            backlog: vec![],
        },
    );
    (r, fx)
}

fn success(text: &str) -> TurnOutcome {
    TurnOutcome::Success {
        delivered: vec![],
        posted: false,
        final_text: Some(text.into()),
        session_id: None,
    }
}

/// The turn `fx` starts for `agent`.
fn started_turn(fx: &[Effect], agent: &str) -> Option<TurnId> {
    fx.iter().find_map(|e| match e {
        Effect::StartTurn { agent: a, turn, .. } if a == agent => Some(*turn),
        _ => None,
    })
}

#[test]
fn a_lost_connection_is_said_and_retried_without_counting_up_to_a_bound() {
    let (mut r, fx) = started(RunMode::Start);
    let mut turn = started_turn(&fx, "coder").expect("coder works");
    let lost = "connection to host 'box' lost: Connection reset";
    let mut now = 1;
    for n in 1..=MAX_CONNECTION_LOSSES {
        let fx = r.handle(
            Millis(now),
            Event::TurnFinished {
                agent: "coder".into(),
                turn,
                outcome: TurnOutcome::ConnectionLost {
                    reason: lost.into(),
                    session_id: None,
                },
            },
        );
        let said = fx.iter().any(|e| {
            matches!(e, Effect::PostSystem { text }
                    if text.starts_with(&format!("coder's turn was cut off: {lost}")))
        });
        assert!(said, "loss {n} was not said: {fx:?}");
        assert!(
            fx.iter()
                .any(|e| matches!(e, Effect::ScheduleRetry { agent, .. } if agent == "coder"))
        );
        assert_eq!(r.agents[0].failures, 0, "loss {n} counted as a failure");
        now += 60_000;
        let fx = r.handle(Millis(now), Event::Tick);
        turn = started_turn(&fx, "coder").expect("the turn is tried again");
    }
    // One loss more than the bound is a failure like any other.
    r.handle(
        Millis(now + 1),
        Event::TurnFinished {
            agent: "coder".into(),
            turn,
            outcome: TurnOutcome::ConnectionLost {
                reason: lost.into(),
                session_id: None,
            },
        },
    );
    assert_eq!(r.agents[0].failures, 1);
    assert!(matches!(&r.agents[0].phase, Phase::RetryWait { reason, .. } if reason == lost));
}

#[test]
fn own_final_answer_seen_in_the_next_turn_is_not_a_mid_turn_post() {
    let (mut r, _) = started(RunMode::Start);
    r.handle(
        Millis(1),
        Event::MessagePosted(entry(2, "user", "@coder more")),
    );
    let fx = r.handle(
        Millis(2),
        Event::TurnFinished {
            agent: "coder".into(),
            turn: TurnId(1),
            outcome: success("first answer"),
        },
    );
    assert!(fx.contains(&Effect::PostFinalAnswer {
        agent: "coder".into(),
        text: "first answer".into()
    }));
    // Turn 2 started at once (message 2 was queued); the driver now
    // writes the first answer, which arrives while turn 2 runs.
    assert!(matches!(r.agents[0].phase, Phase::Running(ref t) if t.id == TurnId(2)));
    r.handle(
        Millis(3),
        Event::MessagePosted(entry(3, "coder", "first answer")),
    );
    let fx = r.handle(
        Millis(4),
        Event::TurnFinished {
            agent: "coder".into(),
            turn: TurnId(2),
            outcome: success("second answer"),
        },
    );
    assert!(fx.contains(&Effect::PostFinalAnswer {
        agent: "coder".into(),
        text: "second answer".into()
    }));
}

#[test]
fn next_deadline_is_the_earliest_retry_stall_or_timeout() {
    let mut config = RunnerConfig::new(RunMode::Start, AGENTS);
    config.stall_after = Duration::from_secs(60);
    config.agents[1].turn_timeout = Some(Duration::from_secs(30));
    let mut r = Runner::new(config);
    assert_eq!(r.next_deadline(), None);
    r.handle(
        Millis(1000),
        Event::Started {
            kickoff: Some(entry(1, "system", "@coder @reviewer go")),
            backlog: vec![],
        },
    );
    assert_eq!(r.next_deadline(), Some(Millis(31_000)));
    r.handle(
        Millis(2000),
        Event::TurnFinished {
            agent: "reviewer".into(),
            turn: TurnId(2),
            outcome: TurnOutcome::Failure {
                reason: "boom".into(),
                session_id: None,
            },
        },
    );
    assert_eq!(r.next_deadline(), Some(Millis(4000)));
}

#[test]
fn backlog_is_delivered_on_start_and_duplicates_are_ignored() {
    let mut r = Runner::new(RunnerConfig::new(RunMode::Run, AGENTS));
    let fx = r.handle(
        Millis(0),
        Event::Started {
            kickoff: None,
            backlog: vec![("reviewer".into(), 4), ("ghost".into(), 5)],
        },
    );
    assert!(fx.iter().any(|e| matches!(e,
            Effect::StartTurn { agent, messages, .. } if agent == "reviewer" && messages == &[4])));
    assert!(!fx.iter().any(|e| matches!(e, Effect::PostSystem { .. })));
    r.handle(
        Millis(1),
        Event::MessagePosted(entry(6, "user", "@coder hi")),
    );
    r.handle(
        Millis(1),
        Event::MessagePosted(entry(6, "user", "@coder hi")),
    );
    assert_eq!(r.unread("coder"), vec![6]);
}

#[test]
fn helpers_format_for_people() {
    assert_eq!(human(Duration::from_secs(5400)), "1h30m");
    assert_eq!(human(Duration::from_secs(600)), "10m");
    assert_eq!(human(Duration::from_millis(250)), "250ms");
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(and_list(&names(&["a", "b", "c"])), "a, b and c");
    assert_eq!(and_list(&names(&["a"])), "a");
}
