//! Scenario tests of the agent runner through its public API only: a small
//! simulated driver feeds events, writes the runner's posts back into a
//! channel, and checks the effects. No processes, no timers.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use awtui::agents::runner::{
    AgentStatus, Budget, CycleConfig, Effect, Event, Millis, PauseReason, RunMode, RunOutcome,
    Runner, RunnerConfig, TurnActivity, TurnId, TurnOutcome,
};
use awtui::context::{ChannelEntry, mentions};
use proptest::prelude::*;

/// A driver stand-in: owns the channel and the clock.
struct Sim {
    runner: Runner,
    names: Vec<String>,
    now: u64,
    channel: Vec<ChannelEntry>,
    /// Every effect so far, in order.
    log: Vec<Effect>,
}

impl Sim {
    fn new(config: RunnerConfig) -> Self {
        let names = config.agents.iter().map(|a| a.name.clone()).collect();
        Sim {
            runner: Runner::new(config),
            names,
            now: 0,
            channel: Vec::new(),
            log: Vec::new(),
        }
    }

    fn with(mode: RunMode, agents: &[&str]) -> Self {
        Sim::new(RunnerConfig::new(mode, agents.iter().copied()))
    }

    fn append(&mut self, from: &str, message: &str) -> ChannelEntry {
        let entry = ChannelEntry {
            id: self.channel.len() as u64 + 1,
            timestamp: chrono::DateTime::UNIX_EPOCH,
            from: from.into(),
            message: message.into(),
            mentions: mentions::extract(message, &self.names, from),
            reply_to: None,
        };
        self.channel.push(entry.clone());
        entry
    }

    /// Handles `event`, then writes the runner's posts to the channel and
    /// reports them back, as the real driver does. Returns every effect.
    fn send(&mut self, event: Event) -> Vec<Effect> {
        let mut all = Vec::new();
        let mut queue = vec![event];
        while let Some(event) = queue.pop() {
            let fx = self.runner.handle(Millis(self.now), event);
            for e in &fx {
                match e {
                    Effect::PostSystem { text } => {
                        let entry = self.append("system", text);
                        queue.insert(0, Event::MessagePosted(entry));
                    }
                    Effect::PostFinalAnswer { agent, text } => {
                        let entry = self.append(agent, text);
                        queue.insert(0, Event::MessagePosted(entry));
                    }
                    _ => {}
                }
            }
            all.extend(fx);
        }
        self.log.extend(all.clone());
        all
    }

    fn start(&mut self, kickoff: Option<&str>) -> Vec<Effect> {
        let kickoff = kickoff.map(|k| self.append("system", k));
        self.send(Event::Started {
            kickoff,
            backlog: vec![],
        })
    }

    fn post(&mut self, from: &str, message: &str) -> Vec<Effect> {
        let entry = self.append(from, message);
        self.send(Event::MessagePosted(entry))
    }

    fn advance(&mut self, ms: u64) -> Vec<Effect> {
        self.now += ms;
        self.send(Event::Tick)
    }

    fn finish(&mut self, agent: &str, turn: TurnId, outcome: TurnOutcome) -> Vec<Effect> {
        self.send(Event::TurnFinished {
            agent: agent.into(),
            turn,
            outcome,
        })
    }

    fn succeed(&mut self, agent: &str, turn: TurnId, answer: &str) -> Vec<Effect> {
        self.finish(agent, turn, answer_outcome(answer))
    }

    fn fail(&mut self, agent: &str, turn: TurnId, reason: &str) -> Vec<Effect> {
        self.finish(
            agent,
            turn,
            TurnOutcome::Failure {
                reason: reason.into(),
                session_id: None,
            },
        )
    }

    fn status(&self, agent: &str) -> AgentStatus {
        self.runner.agent(agent).unwrap().status
    }

    fn messages_from(&self, from: &str) -> Vec<&str> {
        self.channel
            .iter()
            .filter(|e| e.from == from)
            .map(|e| e.message.as_str())
            .collect()
    }
}

fn answer_outcome(answer: &str) -> TurnOutcome {
    TurnOutcome::Success {
        delivered: vec![],
        posted: false,
        final_text: Some(answer.into()),
        session_id: None,
    }
}

/// The turns started by these effects: agent, turn, delivered ids.
fn starts(fx: &[Effect]) -> Vec<(String, TurnId, Vec<u64>)> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::StartTurn {
                agent,
                turn,
                messages,
                ..
            } => Some((agent.clone(), *turn, messages.clone())),
            _ => None,
        })
        .collect()
}

/// The single turn started for `agent`.
fn started(fx: &[Effect], agent: &str) -> (TurnId, Vec<u64>) {
    let mine: Vec<_> = starts(fx).into_iter().filter(|s| s.0 == agent).collect();
    assert_eq!(mine.len(), 1, "expected one turn for {agent} in {fx:#?}");
    (mine[0].1, mine[0].2.clone())
}

fn acks(fx: &[Effect]) -> Vec<(String, u64)> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Ack { agent, through } => Some((agent.clone(), *through)),
            _ => None,
        })
        .collect()
}

fn finish_outcome(fx: &[Effect]) -> Option<RunOutcome> {
    fx.iter().find_map(|e| match e {
        Effect::Finish { outcome } => Some(outcome.clone()),
        _ => None,
    })
}

fn system_texts(fx: &[Effect]) -> Vec<String> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::PostSystem { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn paused(fx: &[Effect]) -> Option<PauseReason> {
    fx.iter().find_map(|e| match e {
        Effect::Paused { reason } => Some(reason.clone()),
        _ => None,
    })
}

#[test]
fn kickoff_wakes_mentioned_agents_at_once() {
    let mut sim = Sim::with(RunMode::Run, &["coder", "reviewer", "qa"]);
    let fx = sim.start(Some("@coder write it, @reviewer review it"));
    let s = starts(&fx);
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].0, "coder");
    assert_eq!(s[0].2, vec![1]);
    assert_eq!(s[1].0, "reviewer");
    assert_eq!(sim.status("coder"), AgentStatus::Starting);
    assert_eq!(sim.status("qa"), AgentStatus::Idle);
    assert!(fx.contains(&Effect::StatusChanged {
        agent: "coder".into(),
        status: AgentStatus::Starting
    }));
    assert_eq!(finish_outcome(&fx), None);
}

#[test]
fn busy_agent_queues_and_gets_the_message_after_its_turn() {
    let mut sim = Sim::with(RunMode::Run, &["coder"]);
    let (t1, _) = started(&sim.start(Some("@coder go")), "coder");
    sim.send(Event::TurnStarted {
        agent: "coder".into(),
        turn: t1,
    });
    let fx = sim.post("user", "@coder also fix the typo");
    assert!(
        starts(&fx).is_empty(),
        "a running turn is never interrupted"
    );
    assert!(!fx.iter().any(|e| matches!(e, Effect::KillTurn { .. })));
    assert_eq!(sim.status("coder"), AgentStatus::Thinking);
    assert_eq!(sim.runner.agent("coder").unwrap().metrics.unread, 2);

    let fx = sim.succeed("coder", t1, "done with go");
    assert_eq!(acks(&fx), vec![("coder".into(), 1)]);
    let (t2, delivered) = started(&fx, "coder");
    assert_eq!(delivered, vec![2]);
    assert_ne!(t1, t2);
    // The ack comes before the next turn starts.
    let ack_at = fx.iter().position(|e| matches!(e, Effect::Ack { .. }));
    let start_at = fx
        .iter()
        .position(|e| matches!(e, Effect::StartTurn { .. }));
    assert!(ack_at < start_at);
}

#[test]
fn what_an_agent_says_reaches_the_channel_exactly_once() {
    let mut sim = Sim::with(RunMode::Start, &["coder", "reviewer"]);
    let (t1, _) = started(&sim.start(Some("@coder go")), "coder");
    // Not posted during the turn: the runner posts the final answer.
    let fx = sim.succeed("coder", t1, "@reviewer please look");
    assert_eq!(
        fx.iter()
            .filter(|e| matches!(e, Effect::PostFinalAnswer { .. }))
            .count(),
        1
    );
    assert_eq!(sim.messages_from("coder"), vec!["@reviewer please look"]);
    // The posted answer wakes the reviewer.
    let (t2, ids) = started(&fx, "reviewer");
    assert_eq!(ids, vec![2]);

    // The reviewer posts itself mid-turn and reports that it did.
    let fx = sim.post("reviewer", "@coder looks good");
    assert_eq!(started(&fx, "coder").1, vec![3]);
    let fx = sim.finish(
        "reviewer",
        t2,
        TurnOutcome::Success {
            delivered: vec![],
            posted: true,
            final_text: Some("looks good".into()),
            session_id: None,
        },
    );
    assert!(
        !fx.iter()
            .any(|e| matches!(e, Effect::PostFinalAnswer { .. }))
    );
    assert_eq!(sim.messages_from("reviewer"), vec!["@coder looks good"]);
}

#[test]
fn a_post_seen_during_the_turn_suppresses_the_final_answer_even_if_unreported() {
    let mut sim = Sim::with(RunMode::Start, &["coder"]);
    let (t1, _) = started(&sim.start(Some("@coder go")), "coder");
    sim.post("coder", "progress: half done");
    let fx = sim.succeed("coder", t1, "progress: half done");
    assert!(
        !fx.iter()
            .any(|e| matches!(e, Effect::PostFinalAnswer { .. }))
    );
    assert_eq!(sim.messages_from("coder").len(), 1);
    // An empty final answer is never posted.
    let (t2, _) = started(&sim.post("user", "@coder again"), "coder");
    let fx = sim.succeed("coder", t2, "  \n");
    assert!(
        !fx.iter()
            .any(|e| matches!(e, Effect::PostFinalAnswer { .. }))
    );
}

#[test]
fn streamed_chunks_are_posted_at_once_and_the_answer_still_follows() {
    let mut sim = Sim::with(RunMode::Start, &["coder"]);
    let (t1, _) = started(&sim.start(Some("@coder go")), "coder");
    let chunk = "=== AOP-STREAM | chunk=1/2 ===\nhalf\n=== END-AOP-STREAM ===\n";
    let fx = sim.send(Event::Backend {
        agent: "coder".into(),
        turn: t1,
        event: TurnActivity::Stream { text: chunk.into() },
    });
    // Posted while the turn runs.
    assert!(fx.iter().any(
        |e| matches!(e, Effect::PostFinalAnswer { agent, text } if agent == "coder" && text == chunk)
    ));
    assert_eq!(sim.messages_from("coder"), vec![chunk]);
    // Seen back, the chunk is not a post of the agent's own: the rest of
    // its answer is posted at the end.
    let fx = sim.succeed("coder", t1, "done");
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::PostFinalAnswer { text, .. } if text == "done"))
    );
    assert_eq!(sim.messages_from("coder"), vec![chunk, "done"]);
}

#[test]
fn failures_then_success_lose_and_duplicate_nothing_across_three_agents() {
    let mut sim = Sim::with(RunMode::Run, &["a", "b", "c"]);
    let fx = sim.start(Some("@a @b @c begin"));
    let ta = started(&fx, "a").0;
    let tb = started(&fx, "b").0;
    let tc = started(&fx, "c").0;

    // a fails twice, b once, c succeeds; messages arrive during retry waits.
    let fx = sim.fail("a", ta, "api 500");
    assert!(fx.contains(&Effect::ScheduleRetry {
        agent: "a".into(),
        at: Millis(2000),
        retry: 1
    }));
    assert!(acks(&fx).is_empty(), "a failed turn acks nothing");
    assert_eq!(
        sim.status("a"),
        AgentStatus::Retrying {
            retry: 1,
            reason: "api 500".into()
        }
    );
    sim.fail("b", tb, "crash");
    let fx = sim.succeed("c", tc, "@a @b here is the plan");
    assert_eq!(acks(&fx), vec![("c".into(), 1)]);
    // Message 2 (c's answer) waits for a and b's retries.
    assert!(starts(&fx).is_empty());
    sim.post("user", "@a note this");

    let fx = sim.advance(1000);
    assert!(starts(&fx).is_empty(), "backoff not elapsed");
    let fx = sim.advance(1000);
    let (ta2, ids_a) = started(&fx, "a");
    let (tb2, ids_b) = started(&fx, "b");
    assert_eq!(ids_a, vec![1, 2, 3]);
    assert_eq!(ids_b, vec![1, 2]);
    let attempts: Vec<u32> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::StartTurn { attempt, .. } => Some(*attempt),
            _ => None,
        })
        .collect();
    assert_eq!(attempts, vec![1, 1]);

    let fx = sim.fail("a", ta2, "api 500 again");
    assert!(fx.contains(&Effect::ScheduleRetry {
        agent: "a".into(),
        at: Millis(2000 + 4000),
        retry: 2
    }));
    let fx = sim.finish(
        "b",
        tb2,
        TurnOutcome::Success {
            delivered: vec![],
            posted: true,
            final_text: None,
            session_id: None,
        },
    );
    assert_eq!(acks(&fx), vec![("b".into(), 2)]);
    let fx = sim.advance(4000);
    let (ta3, ids_a) = started(&fx, "a");
    assert_eq!(ids_a, vec![1, 2, 3]);
    let fx = sim.finish(
        "a",
        ta3,
        TurnOutcome::Success {
            delivered: vec![],
            posted: true,
            final_text: None,
            session_id: None,
        },
    );
    assert_eq!(acks(&fx), vec![("a".into(), 3)]);
    assert_eq!(finish_outcome(&fx), Some(RunOutcome::Completed));
    for agent in ["a", "b", "c"] {
        assert!(sim.runner.unread(agent).is_empty());
        assert_eq!(sim.status(agent), AgentStatus::Idle);
    }
    // Nothing lost: each agent acked every message that mentioned it, once.
    let all_acks = acks(&sim.log);
    assert_eq!(
        all_acks,
        vec![("c".into(), 1), ("b".into(), 2), ("a".into(), 3)]
    );
    // Nothing duplicated: no id was handed over again after its ack.
    let mut acked: BTreeMap<String, u64> = BTreeMap::new();
    for e in &sim.log {
        match e {
            Effect::Ack { agent, through } => {
                acked.insert(agent.clone(), *through);
            }
            Effect::StartTurn {
                agent, messages, ..
            } => {
                let done = acked.get(agent).copied().unwrap_or(0);
                assert!(
                    messages.iter().all(|id| *id > done),
                    "{agent} got #{messages:?} again"
                );
            }
            _ => {}
        }
    }
    // Exactly one post per answer: c's answer once, no answers for the
    // agents that posted themselves.
    assert_eq!(sim.messages_from("c"), vec!["@a @b here is the plan"]);
}

#[test]
fn exhausted_retries_fail_the_agent_and_keep_its_messages_unread() {
    let mut sim = Sim::with(RunMode::Run, &["coder", "reviewer"]);
    let (mut turn, _) = started(&sim.start(Some("@coder go")), "coder");
    for (retry, wait) in [(1, 2000), (2, 4000), (3, 8000)] {
        let fx = sim.fail("coder", turn, "exit code 1");
        assert!(fx.iter().any(|e| matches!(e,
            Effect::ScheduleRetry { retry: r, .. } if *r == retry)));
        turn = started(&sim.advance(wait), "coder").0;
    }
    sim.send(Event::DocumentChanged);
    let fx = sim.fail("coder", turn, "exit code 1");
    assert_eq!(
        sim.status("coder"),
        AgentStatus::Failed("exit code 1".into())
    );
    let texts = system_texts(&fx);
    assert!(
        texts[0].contains("coder failed after 4 attempt(s): exit code 1"),
        "{texts:?}"
    );
    assert_eq!(sim.runner.unread("coder"), vec![1]);
    assert!(acks(&sim.log).is_empty());
    assert_eq!(
        finish_outcome(&fx),
        Some(RunOutcome::Incomplete {
            pending: vec![awtui::agents::runner::PendingWork {
                agent: "coder".into(),
                unread: 1,
                status: AgentStatus::Failed("exit code 1".into()),
            }]
        })
    );
}

#[test]
fn a_failed_agent_is_not_woken_until_restarted() {
    let mut config = RunnerConfig::new(RunMode::Start, ["coder"]);
    config.retry.max_retries = 0;
    let mut sim = Sim::new(config);
    let (t1, _) = started(&sim.start(Some("@coder go")), "coder");
    sim.fail("coder", t1, "boom");
    assert!(starts(&sim.post("user", "@coder hello?")).is_empty());
    assert_eq!(sim.runner.unread("coder"), vec![1, 3]);
    let fx = sim.send(Event::Restart {
        agent: "coder".into(),
    });
    let (_, ids) = started(&fx, "coder");
    assert_eq!(ids, vec![1, 3]);
}

#[test]
fn run_finishes_when_idle_but_start_never_does() {
    for mode in [RunMode::Run, RunMode::Start] {
        let mut sim = Sim::with(mode, &["coder", "reviewer"]);
        let (t1, _) = started(&sim.start(Some("@coder go")), "coder");
        let fx = sim.succeed("coder", t1, "@reviewer check");
        assert_eq!(finish_outcome(&fx), None, "reviewer still has work");
        let (t2, _) = started(&fx, "reviewer");
        let fx = sim.succeed("reviewer", t2, "all fine, nothing more to do");
        let outcome = finish_outcome(&fx);
        match mode {
            RunMode::Run => {
                assert_eq!(outcome, Some(RunOutcome::Completed));
                assert!(matches!(fx.last(), Some(Effect::Finish { .. })));
                assert!(sim.runner.is_finished());
                assert!(sim.post("user", "@coder late").is_empty());
            }
            RunMode::Start => {
                assert_eq!(outcome, None);
                assert!(!sim.runner.is_finished());
            }
        }
    }
}

#[test]
fn kickoff_mentioning_nobody_finishes_at_once_with_a_warning() {
    let mut sim = Sim::with(RunMode::Run, &["coder", "reviewer"]);
    let fx = sim.start(Some("Review the code, everyone. @user will watch."));
    assert!(starts(&fx).is_empty());
    let texts = system_texts(&fx);
    assert_eq!(texts.len(), 1);
    assert!(texts[0].starts_with("Warning: the kickoff mentions no agent"));
    assert!(texts[0].contains("coder, reviewer"));
    assert_eq!(finish_outcome(&fx), Some(RunOutcome::NothingToDo));
    // The warning itself wakes nobody.
    assert!(sim.channel[1].mentions.iter().all(|m| m == "user"));

    let mut sim = Sim::with(RunMode::Start, &["coder"]);
    let fx = sim.start(Some("nobody here"));
    assert_eq!(system_texts(&fx).len(), 1);
    assert_eq!(finish_outcome(&fx), None);
    assert_eq!(starts(&sim.post("user", "@coder now")).len(), 1);

    let mut sim = Sim::with(RunMode::Run, &["coder"]);
    let fx = sim.start(None);
    assert_eq!(system_texts(&fx).len(), 1);
    assert_eq!(finish_outcome(&fx), Some(RunOutcome::NothingToDo));
}

#[test]
fn agent_mentioning_itself_does_not_wake_itself() {
    let mut sim = Sim::with(RunMode::Run, &["coder", "reviewer"]);
    let (t1, _) = started(&sim.start(Some("@coder go")), "coder");
    sim.post("coder", "note to @coder: remember the tests");
    let fx = sim.succeed("coder", t1, "");
    assert!(starts(&fx).is_empty());
    assert!(sim.runner.unread("coder").is_empty());
    assert_eq!(finish_outcome(&fx), Some(RunOutcome::Completed));
}

/// Drives agents that answer each message by mentioning `next(agent)`, until
/// the runner stops starting turns. Returns how many turns ran.
fn play_loop(sim: &mut Sim, first: Vec<Effect>, next: impl Fn(&str) -> String) -> usize {
    let mut pending = starts(&first);
    let mut turns = 0;
    while let Some((agent, turn, _)) = pending.pop() {
        turns += 1;
        assert!(turns < 100, "the loop was never stopped");
        let text = format!("@{} your turn", next(&agent));
        let fx = sim.succeed(&agent, turn, &text);
        pending.extend(starts(&fx));
    }
    turns
}

fn cycle_config(mode: RunMode, agents: &[&str], repeats: usize) -> RunnerConfig {
    let mut config = RunnerConfig::new(mode, agents.iter().copied());
    config.cycle = Some(CycleConfig {
        repeats,
        max_period: 6,
    });
    config
}

#[test]
fn ring_of_three_is_paused_and_a_user_message_or_resume_clears_it() {
    let mut sim = Sim::new(cycle_config(RunMode::Start, &["a", "b", "c"], 3));
    let ring = |x: &str| match x {
        "a" => "b".to_string(),
        "b" => "c".to_string(),
        _ => "a".to_string(),
    };
    let first = sim.start(Some("@a start the ring"));
    let turns = play_loop(&mut sim, first, ring);
    // Nine wakes make three rounds; the ninth answer pauses.
    assert_eq!(turns, 9);
    let reason = paused(&sim.log).expect("paused");
    match &reason {
        PauseReason::Cycle {
            agents, pattern, ..
        } => {
            assert_eq!(agents, &["a", "b", "c"]);
            assert_eq!(pattern.len(), 3);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(sim.runner.pause_reason(), Some(&reason));
    let text = system_texts(&sim.log).pop().unwrap();
    assert!(
        text.starts_with("Paused: a, b and c keep waking each other"),
        "{text}"
    );
    assert_eq!(sim.status("a"), AgentStatus::Queued(1));

    // Resume: the queued message is delivered; the detector starts over.
    let fx = sim.send(Event::Resume);
    assert!(fx.contains(&Effect::Resumed));
    assert_eq!(sim.runner.pause_reason(), None);
    let turns = play_loop(&mut sim, fx, ring);
    assert_eq!(turns, 9, "a fresh count after resume");

    // A user message does not resume a pause, but a person taking part
    // keeps the detector from firing.
    sim.send(Event::Resume);
    let mut pending = starts(&sim.log[sim.log.len() - 4..]);
    let mut turns = 0;
    while let Some((agent, turn, _)) = pending.pop() {
        turns += 1;
        if turns == 30 {
            break;
        }
        if turns % 5 == 0 {
            sim.post("user", "keep going");
        }
        let fx = sim.succeed(&agent, turn, &format!("@{} your turn", ring(&agent)));
        pending.extend(starts(&fx));
    }
    assert_eq!(turns, 30);
    assert_eq!(sim.runner.pause_reason(), None);
}

/// Rings of every size up to the number of agents are caught with the
/// default configuration (a ring of 7 used to run until the turn budget).
#[test]
fn rings_of_any_size_up_to_the_team_are_paused_by_default() {
    for size in 2..=12usize {
        let names: Vec<String> = (0..size).map(|i| format!("a{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut sim = Sim::new(RunnerConfig::new(RunMode::Start, refs.iter().copied()));
        let next = |x: &str| {
            let i: usize = x[1..].parse().unwrap();
            format!("a{}", (i + 1) % size)
        };
        let first = sim.start(Some("@a0 start the ring"));
        let turns = play_loop(&mut sim, first, next);
        // Four rounds of the ring, then the pause.
        assert_eq!(turns, size * 4, "ring of {size}");
        match paused(&sim.log) {
            Some(PauseReason::Cycle { agents, .. }) => assert_eq!(agents.len(), size),
            other => panic!("ring of {size}: {other:?}"),
        }
        let reason = paused(&sim.log).unwrap().to_string();
        assert!(
            reason.starts_with("loop guard: a0, a1") && !reason.contains('{'),
            "{reason}"
        );
    }
}

#[test]
fn pair_ping_pong_is_paused_and_document_changes_reset_the_detector() {
    let mut sim = Sim::new(cycle_config(RunMode::Run, &["coder", "reviewer"], 3));
    let other = |x: &str| if x == "coder" { "reviewer" } else { "coder" }.to_string();
    let first = sim.start(Some("@coder implement"));
    let turns = play_loop(&mut sim, first, other);
    assert_eq!(turns, 6);
    assert!(matches!(paused(&sim.log), Some(PauseReason::Cycle { .. })));
    // In run mode a paused instance has no runnable agent: the run ends.
    assert!(matches!(
        finish_outcome(&sim.log),
        Some(RunOutcome::Incomplete { .. })
    ));

    let mut sim = Sim::new(cycle_config(RunMode::Start, &["coder", "reviewer"], 3));
    let mut pending = starts(&sim.start(Some("@coder implement")));
    let mut turns = 0;
    while let Some((agent, turn, _)) = pending.pop() {
        turns += 1;
        if turns == 20 {
            break;
        }
        sim.send(Event::DocumentChanged);
        let fx = sim.succeed(&agent, turn, &format!("@{} over to you", other(&agent)));
        pending.extend(starts(&fx));
    }
    assert_eq!(sim.runner.pause_reason(), None);
}

#[test]
fn max_turns_per_agent_puts_it_out_of_budget_with_messages_unread() {
    let mut config = RunnerConfig::new(RunMode::Start, ["coder"]);
    config.agents[0].max_turns = Some(2);
    let mut sim = Sim::new(config);
    let (t1, _) = started(&sim.start(Some("@coder one")), "coder");
    sim.succeed("coder", t1, "");
    let (t2, _) = started(&sim.post("user", "@coder two"), "coder");
    sim.succeed("coder", t2, "");
    let fx = sim.post("user", "@coder three");
    assert!(starts(&fx).is_empty());
    assert_eq!(sim.status("coder"), AgentStatus::OutOfBudget);
    assert_eq!(sim.runner.unread("coder"), vec![3]);
    assert!(system_texts(&fx)[0].contains("coder reached its limit of 2 turns"));
    assert_eq!(sim.runner.agent("coder").unwrap().metrics.turns, 2);
    // Resume grants a fresh allowance.
    let fx = sim.send(Event::Resume);
    assert_eq!(started(&fx, "coder").1, vec![3]);
}

#[test]
fn workflow_max_turns_pauses_and_resume_grants_more() {
    let mut config = RunnerConfig::new(RunMode::Start, ["a", "b"]);
    config.max_total_turns = 3;
    config.cycle = None;
    let mut sim = Sim::new(config);
    let other = |x: &str| if x == "a" { "b" } else { "a" }.to_string();
    let first = sim.start(Some("@a go"));
    assert_eq!(play_loop(&mut sim, first, other), 3);
    assert_eq!(
        paused(&sim.log),
        Some(PauseReason::Budget(Budget::Turns { limit: 3 }))
    );
    assert_eq!(sim.status("b"), AgentStatus::OutOfBudget);
    assert_eq!(sim.status("a"), AgentStatus::Idle);
    assert_eq!(sim.runner.unread("b"), vec![4]);
    let fx = sim.send(Event::Resume);
    assert_eq!(play_loop(&mut sim, fx, other), 3);
}

#[test]
fn cost_and_wall_clock_budgets_pause_before_new_turns() {
    let mut config = RunnerConfig::new(RunMode::Run, ["a"]);
    config.cost_budget_usd = Some(1.0);
    let mut sim = Sim::new(config);
    let (t1, _) = started(&sim.start(Some("@a go")), "a");
    sim.send(Event::Backend {
        agent: "a".into(),
        turn: t1,
        event: TurnActivity::Usage {
            tokens_in: 1000,
            tokens_out: 200,
            cost_usd: Some(1.25),
        },
    });
    let m = sim.runner.agent("a").unwrap().metrics;
    assert_eq!((m.tokens_in, m.tokens_out, m.cost_usd), (1000, 200, 1.25));
    sim.post("user", "@a more");
    let fx = sim.succeed("a", t1, "");
    assert!(matches!(
        paused(&fx),
        Some(PauseReason::Budget(Budget::Cost { .. }))
    ));
    assert!(system_texts(&fx)[0].contains("spent $1.25 of its $1.00 budget"));
    assert!(matches!(
        finish_outcome(&fx),
        Some(RunOutcome::Incomplete { .. })
    ));

    let mut config = RunnerConfig::new(RunMode::Start, ["a"]);
    config.wall_clock_budget = Some(Duration::from_secs(60));
    let mut sim = Sim::new(config);
    let (t1, _) = started(&sim.start(Some("@a go")), "a");
    sim.now = 61_000;
    sim.post("user", "@a more");
    let fx = sim.succeed("a", t1, "");
    assert!(matches!(
        paused(&fx),
        Some(PauseReason::Budget(Budget::WallClock { limit_ms: 60_000 }))
    ));
    assert!(system_texts(&fx)[0].contains("time budget of 1m"));
}

#[test]
fn stalled_on_tick_and_back_to_work_on_the_next_event() {
    let mut config = RunnerConfig::new(RunMode::Start, ["coder"]);
    config.stall_after = Duration::from_secs(30);
    let mut sim = Sim::new(config);
    let (t1, _) = started(&sim.start(Some("@coder go")), "coder");
    sim.send(Event::TurnStarted {
        agent: "coder".into(),
        turn: t1,
    });
    sim.send(Event::Backend {
        agent: "coder".into(),
        turn: t1,
        event: TurnActivity::ToolCall {
            name: "Bash".into(),
        },
    });
    assert_eq!(sim.status("coder"), AgentStatus::CallingTool("Bash".into()));
    assert_eq!(sim.runner.next_deadline(), Some(Millis(30_000)));
    sim.advance(29_999);
    assert_eq!(sim.status("coder"), AgentStatus::CallingTool("Bash".into()));
    let fx = sim.advance(1);
    assert!(fx.contains(&Effect::StatusChanged {
        agent: "coder".into(),
        status: AgentStatus::Stalled
    }));
    sim.send(Event::Backend {
        agent: "coder".into(),
        turn: t1,
        event: TurnActivity::Thinking,
    });
    assert_eq!(sim.status("coder"), AgentStatus::Thinking);
}

#[test]
fn turn_timeout_kills_and_retries() {
    let mut config = RunnerConfig::new(RunMode::Start, ["coder"]);
    config.agents[0].turn_timeout = Some(Duration::from_secs(600));
    let mut sim = Sim::new(config);
    let (t1, _) = started(&sim.start(Some("@coder go")), "coder");
    let fx = sim.advance(600_000);
    assert!(fx.contains(&Effect::KillTurn {
        agent: "coder".into(),
        turn: t1
    }));
    assert!(matches!(sim.status("coder"),
        AgentStatus::Retrying { retry: 1, ref reason } if reason.contains("10m")));
    // The killed turn's late report is ignored.
    assert!(sim.succeed("coder", t1, "late").is_empty());
    let (t2, ids) = started(&sim.advance(2000), "coder");
    assert_ne!(t1, t2);
    assert_eq!(ids, vec![1]);
}

#[test]
fn waiting_for_approval_pauses_the_turn_timeout_and_shows_in_the_status() {
    let mut config = RunnerConfig::new(RunMode::Start, ["coder"]);
    config.agents[0].turn_timeout = Some(Duration::from_secs(600));
    let mut sim = Sim::new(config);
    let (t1, _) = started(&sim.start(Some("@coder go")), "coder");
    sim.advance(500_000);
    sim.send(Event::Approval {
        agent: "coder".into(),
        waiting: true,
    });
    assert_eq!(sim.status("coder"), AgentStatus::WaitingForApproval);
    assert_eq!(
        AgentStatus::WaitingForApproval.to_string(),
        "waiting for approval"
    );
    // Nothing falls due while it waits: not the timeout, not a stall.
    assert_eq!(sim.runner.next_deadline(), None);
    let fx = sim.advance(3_600_000);
    assert!(!fx.iter().any(|e| matches!(e, Effect::KillTurn { .. })));
    assert_eq!(sim.status("coder"), AgentStatus::WaitingForApproval);
    sim.send(Event::Approval {
        agent: "coder".into(),
        waiting: false,
    });
    assert_ne!(sim.status("coder"), AgentStatus::WaitingForApproval);
    // 500 s ran before the wait; the timeout falls due 100 s after it.
    let fx = sim.advance(99_000);
    assert!(!fx.iter().any(|e| matches!(e, Effect::KillTurn { .. })));
    let fx = sim.advance(1_000);
    assert!(fx.contains(&Effect::KillTurn {
        agent: "coder".into(),
        turn: t1
    }));
}

#[test]
fn stop_kills_and_keeps_messages_restart_wakes() {
    let mut sim = Sim::with(RunMode::Start, &["coder"]);
    let (t1, _) = started(&sim.start(Some("@coder go")), "coder");
    let fx = sim.send(Event::Stop {
        agent: "coder".into(),
    });
    assert!(fx.contains(&Effect::KillTurn {
        agent: "coder".into(),
        turn: t1
    }));
    assert_eq!(sim.status("coder"), AgentStatus::Stopped);
    // Its late failure report is ignored, its messages stay, nothing wakes it.
    assert!(sim.fail("coder", t1, "killed").is_empty());
    assert!(starts(&sim.post("user", "@coder are you there")).is_empty());
    assert_eq!(sim.runner.unread("coder"), vec![1, 2]);
    assert!(acks(&sim.log).is_empty());
    let fx = sim.send(Event::Restart {
        agent: "coder".into(),
    });
    assert_eq!(started(&fx, "coder").1, vec![1, 2]);
    // Restarting a running agent kills the turn and starts over.
    let t2 = started(&fx, "coder").0;
    let fx = sim.send(Event::Restart {
        agent: "coder".into(),
    });
    assert_eq!(
        fx[0],
        Effect::KillTurn {
            agent: "coder".into(),
            turn: t2
        }
    );
    assert_eq!(started(&fx, "coder").1, vec![1, 2]);
}

/// Issue 35: cancelling a turn ends it, not the agent: its messages count
/// as handled, a late failure report is ignored, the next message wakes
/// it with a turn of its own, and no retry follows.
#[test]
fn cancel_ends_the_turn_acks_its_messages_and_the_next_message_wakes_the_agent() {
    let mut sim = Sim::with(RunMode::Start, &["coder"]);
    let (t1, _) = started(&sim.start(Some("@coder go")), "coder");
    let fx = sim.send(Event::Cancel {
        agent: "coder".into(),
    });
    assert!(fx.contains(&Effect::KillTurn {
        agent: "coder".into(),
        turn: t1
    }));
    assert!(fx.contains(&Effect::Ack {
        agent: "coder".into(),
        through: 1
    }));
    assert_ne!(sim.status("coder"), AgentStatus::Stopped);
    assert!(sim.fail("coder", t1, "stopped").is_empty(), "no retry");
    assert!(sim.runner.unread("coder").is_empty());
    let fx = sim.post("user", "@coder now this instead");
    assert_eq!(started(&fx, "coder").1, vec![2]);
    // With no turn running it does nothing.
    let mut idle = Sim::with(RunMode::Start, &["coder"]);
    assert!(
        idle.send(Event::Cancel {
            agent: "coder".into()
        })
        .is_empty()
    );
}

#[test]
fn stopping_the_last_worker_ends_a_run() {
    let mut sim = Sim::with(RunMode::Run, &["coder"]);
    sim.start(Some("@coder go"));
    let fx = sim.send(Event::Stop {
        agent: "coder".into(),
    });
    assert!(matches!(
        finish_outcome(&fx),
        Some(RunOutcome::Incomplete { ref pending }) if pending[0].status == AgentStatus::Stopped
    ));
}

#[test]
fn session_id_is_carried_into_the_next_turn() {
    let mut sim = Sim::with(RunMode::Start, &["coder"]);
    let fx = sim.start(Some("@coder go"));
    assert!(fx.iter().any(|e| matches!(
        e,
        Effect::StartTurn {
            session_id: None,
            ..
        }
    )));
    let (t1, _) = started(&fx, "coder");
    sim.finish(
        "coder",
        t1,
        TurnOutcome::Success {
            delivered: vec![],
            posted: true,
            final_text: None,
            session_id: Some("sess-1".into()),
        },
    );
    assert_eq!(
        sim.runner.agent("coder").unwrap().session_id.as_deref(),
        Some("sess-1")
    );
    let fx = sim.post("user", "@coder next");
    let (t2, _) = started(&fx, "coder");
    assert!(fx.iter().any(|e| matches!(e,
        Effect::StartTurn { session_id: Some(s), .. } if s == "sess-1")));
    // A session learnt mid-turn survives a failure and is used by the retry.
    sim.send(Event::Backend {
        agent: "coder".into(),
        turn: t2,
        event: TurnActivity::SessionId {
            id: "sess-2".into(),
        },
    });
    sim.fail("coder", t2, "network");
    let fx = sim.advance(2000);
    assert!(fx.iter().any(|e| matches!(e,
        Effect::StartTurn { session_id: Some(s), attempt: 1, .. } if s == "sess-2")));
}

#[test]
fn messages_delivered_mid_turn_are_acked_and_external_acks_are_respected() {
    let mut sim = Sim::with(RunMode::Start, &["coder"]);
    let (t1, _) = started(&sim.start(Some("@coder go")), "coder");
    sim.post("user", "@coder two");
    sim.post("user", "@coder three");
    // The agent read message 2 with inbox_check, not 3.
    let fx = sim.finish(
        "coder",
        t1,
        TurnOutcome::Success {
            delivered: vec![2],
            posted: true,
            final_text: None,
            session_id: None,
        },
    );
    assert_eq!(acks(&fx), vec![("coder".into(), 2)]);
    let (t2, ids) = started(&fx, "coder");
    assert_eq!(ids, vec![3]);
    sim.post("user", "@coder four");
    sim.send(Event::InboxAcked {
        agent: "coder".into(),
        through: 4,
    });
    assert!(sim.runner.unread("coder").is_empty());
    let fx = sim.succeed("coder", t2, "");
    assert!(acks(&fx).is_empty(), "already acked");
    assert!(starts(&fx).is_empty());
}

#[test]
fn agent_mail_status_messages_update_progress_and_label() {
    let mut sim = Sim::with(RunMode::Start, &["worker", "lead"]);
    let (t1, _) = started(&sim.start(Some("@worker take ol-7")), "worker");
    sim.post(
        "worker",
        "@lead [ol-7] PROGRESS\nBead: ol-7\nStep: 2/5 parser\nStatus: on track\nContext usage: 40%",
    );
    let m = sim.runner.agent("worker").unwrap().metrics;
    assert_eq!(m.step.as_deref(), Some("2/5 parser"));
    assert_eq!(m.context_usage, Some(40));
    let fx = sim.post(
        "worker",
        "@lead [ol-7] OFFERING_READY\nBead: ol-7\nStatus: DONE\nCommit: abc123\nTests: PASS\nLint: PASS\nBuild: PASS",
    );
    assert!(fx.iter().any(|e| matches!(e,
        Effect::MetricsChanged { agent, metrics } if agent == "worker"
            && metrics.label.as_deref() == Some("OFFERING_READY"))));
    sim.succeed("worker", t1, "");
}

#[test]
fn stale_and_unknown_events_are_ignored() {
    let mut sim = Sim::with(RunMode::Start, &["coder"]);
    let (t1, _) = started(&sim.start(Some("@coder go")), "coder");
    let bogus = TurnId(t1.0 + 100);
    assert!(sim.succeed("coder", bogus, "x").is_empty());
    assert!(sim.succeed("ghost", t1, "x").is_empty());
    assert!(
        sim.send(Event::Backend {
            agent: "coder".into(),
            turn: bogus,
            event: TurnActivity::Thinking,
        })
        .is_empty()
    );
    assert!(sim.send(Event::Resume).is_empty(), "nothing to resume");
    assert_eq!(sim.status("coder"), AgentStatus::Starting);
}

// ---------------------------------------------------------------------------
// Property test: random event sequences.

const NAMES: [&str; 3] = ["a", "b", "c"];

#[derive(Clone, Debug)]
enum Op {
    Post {
        from: usize,
        to: Vec<usize>,
    },
    Succeed {
        who: usize,
        posted: bool,
        extra: bool,
    },
    Fail {
        who: usize,
    },
    Stale {
        who: usize,
        turn: u64,
        ok: bool,
    },
    Started {
        who: usize,
    },
    Backend {
        who: usize,
        kind: u8,
    },
    /// News of `who`'s tool call (task news), mentioning `to`.
    Caused {
        who: usize,
        to: Vec<usize>,
    },
    Stop {
        who: usize,
    },
    Restart {
        who: usize,
    },
    Resume,
    Tick {
        ms: u64,
    },
    Doc,
    ExternalAck {
        who: usize,
        back: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..5usize, prop::collection::vec(0..4usize, 0..3))
            .prop_map(|(from, to)| Op::Post { from, to }),
        5 => (0..3usize, any::<bool>(), any::<bool>())
            .prop_map(|(who, posted, extra)| Op::Succeed { who, posted, extra }),
        3 => (0..3usize).prop_map(|who| Op::Fail { who }),
        1 => (0..3usize, 0..20u64, any::<bool>())
            .prop_map(|(who, turn, ok)| Op::Stale { who, turn, ok }),
        1 => (0..3usize).prop_map(|who| Op::Started { who }),
        2 => (0..3usize, 0..4u8).prop_map(|(who, kind)| Op::Backend { who, kind }),
        2 => (0..3usize, prop::collection::vec(0..3usize, 1..3))
            .prop_map(|(who, to)| Op::Caused { who, to }),
        1 => (0..3usize).prop_map(|who| Op::Stop { who }),
        1 => (0..3usize).prop_map(|who| Op::Restart { who }),
        1 => Just(Op::Resume),
        3 => (0..20_000u64).prop_map(|ms| Op::Tick { ms }),
        1 => Just(Op::Doc),
        1 => (0..3usize, 0..3u64).prop_map(|(who, back)| Op::ExternalAck { who, back }),
    ]
}

/// What the test knows as the driver: open turns and what each agent was
/// handed.
#[derive(Default)]
struct Model {
    open: BTreeMap<String, TurnId>,
    delivered: BTreeMap<String, BTreeSet<u64>>,
    mentioned: BTreeMap<String, BTreeSet<u64>>,
    acked: BTreeMap<String, u64>,
}

impl Model {
    fn check(&mut self, fx: &[Effect]) {
        for e in fx {
            match e {
                Effect::StartTurn {
                    agent,
                    turn,
                    messages,
                    ..
                } => {
                    assert!(
                        !self.open.contains_key(agent),
                        "two concurrent turns for {agent}"
                    );
                    assert!(!messages.is_empty());
                    self.open.insert(agent.clone(), *turn);
                    self.delivered
                        .entry(agent.clone())
                        .or_default()
                        .extend(messages);
                }
                Effect::KillTurn { agent, turn } => {
                    assert_eq!(self.open.remove(agent), Some(*turn));
                }
                Effect::Ack { agent, through } => {
                    let delivered = self.delivered.entry(agent.clone()).or_default();
                    let acked = self.acked.get(agent).copied().unwrap_or(0);
                    for id in self.mentioned.get(agent).into_iter().flatten() {
                        if *id > acked && id <= through {
                            assert!(delivered.contains(id), "{agent} acked undelivered #{id}");
                        }
                    }
                    assert!(
                        delivered.contains(through),
                        "{agent} acked undelivered #{through}"
                    );
                    self.acked.insert(agent.clone(), acked.max(*through));
                }
                Effect::Finish { .. } => assert!(self.open.is_empty(), "finished while working"),
                _ => {}
            }
        }
    }
}

fn run_ops(mode: RunMode, ops: Vec<Op>) {
    let mut config = RunnerConfig::new(mode, NAMES);
    config.default_max_turns = 6;
    config.max_total_turns = 15;
    config.stall_after = Duration::from_secs(5);
    config.agents[2].turn_timeout = Some(Duration::from_secs(12));
    config.cycle = Some(CycleConfig {
        repeats: 2,
        max_period: 4,
    });
    let mut sim = Sim::new(config);
    let mut model = Model::default();
    let kickoff = sim.append("system", "@a @b kickoff");
    for name in ["a", "b"] {
        model.mentioned.entry(name.into()).or_default().insert(1);
    }
    let fx = sim.send(Event::Started {
        kickoff: Some(kickoff),
        backlog: vec![],
    });
    model.check(&fx);
    for op in ops {
        let before = sim.channel.len();
        let fx = match op {
            Op::Post { from, to } => {
                let from = ["a", "b", "c", "user", "system"][from];
                let text: String = to
                    .iter()
                    .map(|i| format!("@{} ", ["a", "b", "c", "user"][*i]))
                    .collect::<String>()
                    + "hello";
                sim.post(from, &text)
            }
            Op::Succeed { who, posted, extra } => {
                // Finish some open turn, preferably `who`'s, so runs progress.
                let who = (0..3)
                    .map(|k| (who + k) % 3)
                    .find(|w| model.open.contains_key(NAMES[*w]))
                    .unwrap_or(who);
                let agent = NAMES[who];
                match model.open.remove(agent) {
                    Some(turn) => {
                        let delivered = if extra {
                            let unread = sim.runner.unread(agent);
                            let some: Vec<u64> = unread.into_iter().step_by(2).collect();
                            model
                                .delivered
                                .entry(agent.into())
                                .or_default()
                                .extend(&some);
                            some
                        } else {
                            vec![]
                        };
                        sim.finish(
                            agent,
                            turn,
                            TurnOutcome::Success {
                                delivered,
                                posted,
                                final_text: Some(format!("@{} answer", NAMES[(who + 1) % 3])),
                                session_id: Some(format!("s{who}")),
                            },
                        )
                    }
                    None => vec![],
                }
            }
            Op::Fail { who } => match model.open.remove(NAMES[who]) {
                Some(turn) => sim.fail(NAMES[who], turn, "boom"),
                None => vec![],
            },
            Op::Stale { who, turn, ok } => {
                let agent = NAMES[who];
                if model.open.get(agent) == Some(&TurnId(turn)) {
                    vec![]
                } else if ok {
                    sim.succeed(agent, TurnId(turn), "stale")
                } else {
                    sim.fail(agent, TurnId(turn), "stale")
                }
            }
            Op::Started { who } => match model.open.get(NAMES[who]) {
                Some(turn) => sim.send(Event::TurnStarted {
                    agent: NAMES[who].into(),
                    turn: *turn,
                }),
                None => vec![],
            },
            Op::Backend { who, kind } => match model.open.get(NAMES[who]) {
                Some(turn) => {
                    let event = match kind {
                        0 => TurnActivity::Thinking,
                        1 => TurnActivity::ToolCall {
                            name: "Read".into(),
                        },
                        2 => TurnActivity::Usage {
                            tokens_in: 10,
                            tokens_out: 5,
                            cost_usd: Some(0.01),
                        },
                        _ => TurnActivity::SessionId { id: "x".into() },
                    };
                    sim.send(Event::Backend {
                        agent: NAMES[who].into(),
                        turn: *turn,
                        event,
                    })
                }
                None => vec![],
            },
            Op::Caused { who, to } => {
                let id = sim.channel.len() as u64 + 1;
                let mut fx = sim.send(Event::CausedBy {
                    agent: NAMES[who].into(),
                    id,
                });
                let text: String = to.iter().map(|i| format!("@{} ", NAMES[*i])).collect();
                fx.extend(sim.post("system", &format!("{text}task ready")));
                fx
            }
            Op::Stop { who } => sim.send(Event::Stop {
                agent: NAMES[who].into(),
            }),
            Op::Restart { who } => sim.send(Event::Restart {
                agent: NAMES[who].into(),
            }),
            Op::Resume => sim.send(Event::Resume),
            Op::Tick { ms } => sim.advance(ms),
            Op::Doc => sim.send(Event::DocumentChanged),
            Op::ExternalAck { who, back } => {
                let agent = NAMES[who];
                let last = sim.channel.len() as u64;
                let through = last.saturating_sub(back);
                let prev = model.acked.get(agent).copied().unwrap_or(0);
                // An external ack hands over what it acknowledges.
                let ids: Vec<u64> = model
                    .mentioned
                    .get(agent)
                    .into_iter()
                    .flatten()
                    .copied()
                    .filter(|id| *id <= through)
                    .collect();
                model.delivered.entry(agent.into()).or_default().extend(ids);
                model.acked.insert(agent.into(), prev.max(through));
                sim.send(Event::InboxAcked {
                    agent: agent.into(),
                    through,
                })
            }
        };
        // Record mentions of every entry appended during this step before
        // checking acks (posts are reported back within the step).
        for entry in &sim.channel[before..] {
            for m in entry.mentions.iter().filter(|m| **m != entry.from) {
                model
                    .mentioned
                    .entry(m.clone())
                    .or_default()
                    .insert(entry.id);
            }
        }
        model.check(&fx);
        // No message is lost: every mention is acked or still unread.
        for name in NAMES {
            let acked = model.acked.get(name).copied().unwrap_or(0);
            let unread: BTreeSet<u64> = sim.runner.unread(name).into_iter().collect();
            for id in model.mentioned.get(name).into_iter().flatten() {
                assert!(
                    *id <= acked || unread.contains(id),
                    "#{id} to {name} was dropped"
                );
            }
        }
        if sim.runner.is_finished() {
            break;
        }
    }
    settle(&mut sim, &mut model);
}

/// Ends every turn (and retry) until nothing runs; then nobody waits with
/// something to do unless the instance is paused: no message is held for
/// good (issue 36's held news).
fn settle(sim: &mut Sim, model: &mut Model) {
    for _ in 0..100 {
        if sim.runner.is_finished() {
            return;
        }
        let fx = match model.open.pop_first() {
            Some((agent, turn)) => sim.finish(
                &agent,
                turn,
                TurnOutcome::Success {
                    delivered: vec![],
                    posted: true,
                    final_text: None,
                    session_id: None,
                },
            ),
            None => sim.advance(600_000),
        };
        model.check(&fx);
        if model.open.is_empty() && starts(&fx).is_empty() && sim.runner.next_deadline().is_none() {
            break;
        }
    }
    if sim.runner.is_finished() || sim.runner.pause_reason().is_some() {
        return;
    }
    for name in NAMES {
        assert!(
            !matches!(sim.status(name), AgentStatus::Queued(_)),
            "{name} waits with unread messages and nothing running: {:?}",
            sim.runner.agents()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_event_sequences_keep_the_invariants(
        run in any::<bool>(),
        ops in prop::collection::vec(op(), 0..120),
    ) {
        run_ops(if run { RunMode::Run } else { RunMode::Start }, ops);
    }
}

#[test]
fn a_session_kept_from_an_earlier_run_is_resumed_by_the_first_turn() {
    let mut config = RunnerConfig::new(RunMode::Start, ["coder"]);
    config.agents[0].session_id = Some("sess-before-crash".into());
    let mut sim = Sim::new(config);
    let fx = sim.start(Some("@coder go on"));
    assert!(fx.iter().any(|e| matches!(e,
        Effect::StartTurn { session_id: Some(s), .. } if s == "sess-before-crash")));
}

/// Every (agent, id) handed over by these effects, in order.
fn deliveries(fx: &[Effect]) -> Vec<(String, u64)> {
    starts(fx)
        .into_iter()
        .flat_map(|(agent, _, ids)| ids.into_iter().map(move |id| (agent.clone(), id)))
        .collect()
}

/// Issue 23: a workflow with `tasks:` posts the kickoff (#1) and then the
/// task announcement (#2). However the announcement reaches the runner
/// (backlog, `Mentioned`, reported first or out of order), the kickoff is
/// not hidden by it: every mention is delivered exactly once, acks cover
/// only what was handed over, and the runner's unread counts stay true.
#[test]
fn an_announcement_arriving_before_the_kickoff_does_not_hide_it() {
    let kickoff = "@lead please split the work";
    let news =
        "Task ready to claim: schema “Database schema” (for worker). @worker: task_claim one";
    // How the announcement (and the kickoff) reach the runner.
    type Play = fn(&mut Sim, ChannelEntry, ChannelEntry) -> Vec<Effect>;
    let orders: [(&str, Play); 4] = [
        ("backlog, kickoff in Started", |sim, k, n| {
            let mut fx = sim.send(Event::Started {
                kickoff: Some(k.clone()),
                backlog: vec![("worker".into(), n.id)],
            });
            fx.extend(sim.send(Event::MessagePosted(k)));
            fx.extend(sim.send(Event::MessagePosted(n)));
            fx
        }),
        ("backlog, kickoff reported later", |sim, k, n| {
            let mut fx = sim.send(Event::Started {
                kickoff: None,
                backlog: vec![("worker".into(), n.id)],
            });
            fx.extend(sim.send(Event::MessagePosted(k)));
            fx.extend(sim.send(Event::MessagePosted(n)));
            fx
        }),
        ("announcement reported first", |sim, k, n| {
            let mut fx = sim.send(Event::MessagePosted(n.clone()));
            fx.extend(sim.send(Event::Started {
                kickoff: Some(k.clone()),
                backlog: vec![],
            }));
            fx.extend(sim.send(Event::MessagePosted(k)));
            fx.extend(sim.send(Event::MessagePosted(n)));
            fx
        }),
        ("mentioned, then out of order", |sim, k, n| {
            let mut fx = sim.send(Event::Mentioned {
                agent: "worker".into(),
                id: n.id,
            });
            fx.extend(sim.send(Event::Started {
                kickoff: None,
                backlog: vec![],
            }));
            fx.extend(sim.send(Event::MessagePosted(n)));
            fx.extend(sim.send(Event::MessagePosted(k)));
            fx
        }),
    ];
    for (how, play) in orders {
        let mut sim = Sim::with(RunMode::Run, &["lead", "worker"]);
        let k = sim.append("system", kickoff);
        let n = sim.append("system", news);
        let mut fx = play(&mut sim, k, n);
        for agent in ["lead", "worker"] {
            let view = sim.runner.agent(agent).unwrap();
            assert_eq!(
                view.metrics.unread,
                sim.runner.unread(agent).len(),
                "{how}: {agent}'s row and inbox agree"
            );
        }
        // Finish every turn until nothing runs.
        let mut pending = starts(&fx);
        while let Some((agent, turn, _)) = pending.pop() {
            let more = sim.succeed(&agent, turn, "");
            pending.extend(starts(&more));
            fx.extend(more);
        }
        let mut got = deliveries(&fx);
        got.sort();
        assert_eq!(
            got,
            vec![("lead".to_string(), 1), ("worker".to_string(), 2)],
            "{how}: each mention delivered exactly once"
        );
        let mut acked = acks(&fx);
        acked.sort();
        assert_eq!(
            acked,
            vec![("lead".to_string(), 1), ("worker".to_string(), 2)],
            "{how}: acks cover what was handed over"
        );
        assert!(sim.runner.unread("lead").is_empty(), "{how}");
        assert_eq!(
            finish_outcome(&sim.log),
            Some(RunOutcome::Completed),
            "{how}"
        );
    }
}

/// Issue 23: the task news a lead's plan caused (posted by `system`) counts
/// as the lead's message for the loop guard: plan → announce → report →
/// plan is paused like any ring, with the banner, and resume goes on.
#[test]
fn news_caused_by_an_agents_call_counts_as_its_message_for_the_loop_guard() {
    let mut sim = Sim::new(cycle_config(RunMode::Start, &["lead", "w1"], 3));
    let mut pending = starts(&sim.start(Some("@lead plan")));
    let mut turns = 0;
    while let Some((agent, turn, _)) = pending.pop() {
        turns += 1;
        assert!(turns < 40, "the loop was never stopped");
        let fx = if agent == "lead" {
            // The lead's plan makes a task available: the engine posts the
            // news, caused by the lead, then the lead's answer.
            let id = sim.channel.len() as u64 + 1;
            sim.send(Event::CausedBy {
                agent: "lead".into(),
                id,
            });
            let mut fx = sim.post(
                "system",
                "Task ready to claim: t “step”. @w1: task_claim one",
            );
            fx.extend(sim.succeed("lead", turn, "planned"));
            fx
        } else {
            sim.succeed("w1", turn, "@lead did step")
        };
        pending.extend(starts(&fx));
    }
    assert_eq!(turns, 6, "three rounds of lead → w1 → lead");
    match paused(&sim.log) {
        Some(PauseReason::Cycle { agents, .. }) => assert_eq!(agents, ["lead", "w1"]),
        other => panic!("{other:?}"),
    }
    let banner = system_texts(&sim.log).pop().unwrap();
    assert!(
        banner.starts_with("Paused: lead and w1 keep waking each other"),
        "{banner}"
    );
    let fx = sim.send(Event::Resume);
    assert!(fx.contains(&Effect::Resumed));
    assert_eq!(
        started(&fx, "lead").1.len(),
        1,
        "the queued report is delivered"
    );
}

/// The driver writes final answers behind its loop; one it cannot write
/// is reported back (`Event::AnswerLost`). A run waits for a final answer
/// to be seen in the channel (it may wake someone), so without that report
/// it would wait forever.
#[test]
fn a_run_whose_final_answer_could_not_be_written_still_ends() {
    let mut sim = Sim::with(RunMode::Run, &["a"]);
    let fx = sim.start(Some("@a go"));
    let (turn, _) = started(&fx, "a");
    // The answer is handed out but never written (no MessagePosted).
    let fx = sim.runner.handle(
        Millis(sim.now),
        Event::TurnFinished {
            agent: "a".into(),
            turn,
            outcome: answer_outcome("my answer"),
        },
    );
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::PostFinalAnswer { text, .. } if text == "my answer"))
    );
    assert_eq!(
        finish_outcome(&fx),
        None,
        "the answer may still wake someone"
    );
    let fx = sim.runner.handle(
        Millis(sim.now),
        Event::AnswerLost {
            agent: "a".into(),
            text: "my answer".into(),
        },
    );
    assert_eq!(finish_outcome(&fx), Some(RunOutcome::Completed));
}

/// Issue 36: one event wakes an agent once. w1 completes a task mid-turn:
/// the engine posts its news (caused by w1) mentioning w2, then w1's turn
/// ends with an answer that mentions w2 too. w2 is not started by the news
/// alone while w1's turn still runs; it gets ONE turn, handed both.
#[test]
fn news_an_agents_turn_caused_waits_for_that_turn_and_its_answer() {
    let mut sim = Sim::with(RunMode::Run, &["w1", "w2"]);
    let (turn, _) = started(&sim.start(Some("@w1 do the first task")), "w1");
    let news = sim.channel.len() as u64 + 1;
    sim.send(Event::CausedBy {
        agent: "w1".into(),
        id: news,
    });
    let fx = sim.post(
        "system",
        "Task ready to claim: t2 “second” (for w2). @w2: task_claim one",
    );
    assert!(starts(&fx).is_empty(), "not woken while w1 works: {fx:?}");
    assert_eq!(sim.status("w2"), AgentStatus::Queued(1));
    let fx = sim.succeed("w1", turn, "@w2 the first is done, the second is yours");
    let answer = sim.channel.len() as u64;
    assert_eq!(sim.channel[answer as usize - 1].from, "w1");
    assert_eq!(
        starts(&fx)
            .into_iter()
            .filter(|(a, ..)| a == "w2")
            .map(|(_, _, ids)| ids)
            .collect::<Vec<_>>(),
        vec![vec![news, answer]],
        "one turn with both: {fx:?}"
    );
}

/// The news waits for the turn that caused it, not for whatever the agent
/// does next: a causer whose turn ends without an answer (or with one
/// for someone else) releases it at once, and a stopped causer too.
#[test]
fn held_news_is_released_when_the_causing_turn_ends_however_it_ends() {
    for end in ["silent", "other", "stop", "fail"] {
        let mut sim = Sim::with(RunMode::Start, &["w1", "w2", "w3"]);
        let (turn, _) = started(&sim.start(Some("@w1 go")), "w1");
        let news = sim.channel.len() as u64 + 1;
        sim.send(Event::CausedBy {
            agent: "w1".into(),
            id: news,
        });
        assert!(starts(&sim.post("system", "Task ready to claim: t. @w2: claim")).is_empty());
        let fx = match end {
            "silent" => sim.finish(
                "w1",
                turn,
                TurnOutcome::Success {
                    delivered: vec![],
                    posted: true,
                    final_text: None,
                    session_id: None,
                },
            ),
            "other" => sim.succeed("w1", turn, "@w3 fyi"),
            "stop" => sim.send(Event::Stop { agent: "w1".into() }),
            _ => sim.fail("w1", turn, "boom"),
        };
        assert_eq!(
            started(&fx, "w2").1,
            vec![news],
            "{end}: w2 woken once w1's turn is over: {fx:?}"
        );
    }
}

/// Issue 36: a reopened instance that was paused comes back paused: no
/// turn starts for its queued messages, the agents show them queued and
/// the pause says why, until a resume.
#[test]
fn a_runner_told_it_was_paused_starts_no_turn_until_resumed() {
    let mut sim = Sim::with(RunMode::Start, &["a", "b"]);
    let reason = PauseReason::Cycle {
        agents: vec!["a".into(), "b".into()],
        pattern: vec![
            ("a".into(), vec!["b".into()]),
            ("b".into(), vec!["a".into()]),
        ],
        repeats: 4,
    };
    sim.runner.set_history(9);
    sim.runner.set_paused(reason.clone());
    let fx = sim.send(Event::Started {
        kickoff: None,
        backlog: vec![("b".into(), 9)],
    });
    assert!(starts(&fx).is_empty(), "{fx:?}");
    assert!(system_texts(&fx).is_empty(), "nothing is posted: {fx:?}");
    assert_eq!(sim.runner.pause_reason(), Some(&reason));
    assert_eq!(sim.status("b"), AgentStatus::Queued(1));
    let fx = sim.send(Event::Resume);
    assert!(fx.contains(&Effect::Resumed));
    assert_eq!(started(&fx, "b").1, vec![9]);
}
