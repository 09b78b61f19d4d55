//! Property test: kill -9 at random points over sends and turns never
//! acknowledges a mention its recipient did not answer, and never leaves an
//! answered one to be answered again.
//!
//! The test drives a real [`FileStore`] the way the engine does (each step
//! is one durable write: a send, a hand-over at a turn's start or an
//! `inbox_check`, a post during a turn, a turn's final answer, its ack),
//! "crashes" between any two steps by dropping the store and reopening the
//! folder, then runs crash recovery ([`ContextStore::answered_through`] +
//! ack, as the engine does on start). A separate model of what each agent
//! saw and said decides what counts as answered: a message is answered when
//! it was in a turn's view (its prompt or a later `inbox_check`) and that
//! turn then posted, or completed. After every recovery, for every
//! (mention, recipient): acked exactly when answered.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use awtui::context::{ContextStore, FileStore, Since, StoreLayout};
use proptest::prelude::*;

const AGENTS: [&str; 2] = ["a", "b"];

#[derive(Clone, Debug)]
enum Op {
    /// `user` (or the other agent) posts mentioning these agents.
    Send { mentions: Vec<usize> },
    /// The agent's turn starts with all its unread messages.
    Start { who: usize },
    /// The agent calls `inbox_check` during its turn.
    Check { who: usize },
    /// The agent posts during its turn (`channel_send`).
    Post { who: usize },
    /// The turn ends: final answer when it posted nothing, then the ack.
    /// With `crash_between`, the instance dies between the two writes.
    Finish { who: usize, crash_between: bool },
    /// kill -9: the store is dropped and reopened; turns are gone.
    Crash,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => prop::collection::vec(0..2usize, 1..3).prop_map(|mentions| Op::Send { mentions }),
        3 => (0..2usize).prop_map(|who| Op::Start { who }),
        1 => (0..2usize).prop_map(|who| Op::Check { who }),
        2 => (0..2usize).prop_map(|who| Op::Post { who }),
        3 => (0..2usize, any::<bool>()).prop_map(|(who, crash_between)| Op::Finish { who, crash_between }),
        1 => Just(Op::Crash),
    ]
}

fn layout() -> StoreLayout {
    StoreLayout {
        channel: "channel.md".into(),
        document: "notes.md".into(),
        documents: vec![],
        agents: AGENTS.iter().map(|s| s.to_string()).collect(),
    }
}

/// A turn in progress: what it has been handed, whether it posted.
#[derive(Default)]
struct Turn {
    seen: BTreeSet<u64>,
    posted: bool,
}

/// What the agents really saw and said, kept apart from the store.
#[derive(Default)]
struct World {
    turns: BTreeMap<&'static str, Turn>,
    /// (message, recipient) pairs that were answered.
    answered: BTreeSet<(u64, &'static str)>,
}

fn unread(store: &FileStore, who: &str) -> Vec<u64> {
    let mut ids: Vec<u64> = store
        .inbox(who)
        .unwrap()
        .into_iter()
        .map(|i| i.entry.id)
        .collect();
    ids.sort_unstable();
    ids
}

/// Hands every unread message to the running turn, as the engine does at a
/// turn's start and `inbox_check` does mid-turn.
fn hand_over(store: &mut FileStore, world: &mut World, who: &'static str) {
    let ids = unread(store, who);
    if let Some(last) = ids.last() {
        store.mark_delivered(who, *last).unwrap();
    }
    world.turns.get_mut(who).unwrap().seen.extend(ids);
}

/// The engine's recovery on start, then the check of every pair.
fn recover_and_check(dir: &Path, world: &mut World) -> Result<FileStore, TestCaseError> {
    world.turns.clear();
    let mut store = FileStore::open(dir, &layout()).unwrap();
    for who in AGENTS {
        if let Some(through) = store.answered_through(who).unwrap() {
            store.ack(who, Since::Id(through)).unwrap();
        }
    }
    for entry in store.read(None, None).unwrap() {
        for who in AGENTS {
            if !entry.mentions.iter().any(|m| m == who) {
                continue;
            }
            let acked = entry.id <= store.cursor(who).unwrap().acked;
            let answered = world.answered.contains(&(entry.id, who));
            prop_assert!(
                !acked || answered,
                "#{} was acknowledged for {who} but never answered",
                entry.id
            );
            prop_assert!(
                acked || !answered,
                "#{} was answered by {who} but would be delivered again",
                entry.id
            );
        }
    }
    Ok(store)
}

fn play(ops: &[Op]) -> Result<(usize, usize), TestCaseError> {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("inst");
    let mut store = FileStore::open(&dir, &layout()).unwrap();
    let mut world = World::default();
    let mut crashes = 0;
    for op in ops {
        match op {
            Op::Send { mentions } => {
                let text: Vec<String> = mentions
                    .iter()
                    .map(|i| format!("@{}", AGENTS[*i]))
                    .collect();
                store
                    .append("user", &format!("{} please", text.join(" ")))
                    .unwrap();
            }
            Op::Start { who } => {
                let who = AGENTS[*who];
                if !world.turns.contains_key(who) && !unread(&store, who).is_empty() {
                    world.turns.insert(who, Turn::default());
                    hand_over(&mut store, &mut world, who);
                }
            }
            Op::Check { who } => {
                let who = AGENTS[*who];
                if world.turns.contains_key(who) {
                    hand_over(&mut store, &mut world, who);
                }
            }
            Op::Post { who } => {
                let who = AGENTS[*who];
                if let Some(turn) = world.turns.get_mut(who) {
                    store.append(who, "on it").unwrap();
                    turn.posted = true;
                    world.answered.extend(turn.seen.iter().map(|id| (*id, who)));
                }
            }
            Op::Finish { who, crash_between } => {
                let who = AGENTS[*who];
                let Some(turn) = world.turns.get(who) else {
                    continue;
                };
                if !turn.posted {
                    // The final answer answers everything the turn saw.
                    store.append(who, "final answer").unwrap();
                    world.answered.extend(turn.seen.iter().map(|id| (*id, who)));
                }
                if *crash_between {
                    drop(store);
                    crashes += 1;
                    store = recover_and_check(&dir, &mut world)?;
                    continue;
                }
                // The ack is the turn's completion: what it saw is answered.
                world.answered.extend(turn.seen.iter().map(|id| (*id, who)));
                let through = *turn.seen.iter().max().unwrap();
                store.ack(who, Since::Id(through)).unwrap();
                world.turns.remove(who);
            }
            Op::Crash => {
                drop(store);
                crashes += 1;
                store = recover_and_check(&dir, &mut world)?;
            }
        }
    }
    drop(store);
    recover_and_check(&dir, &mut world)?;
    let pairs = world.answered.len();
    Ok((crashes + 1, pairs))
}

/// Plays 160 random histories (up to 60 steps each) and prints how many
/// recoveries and answered (mention, recipient) pairs they covered.
#[test]
fn kill_9_anywhere_never_acks_an_unanswered_mention() {
    use proptest::test_runner::{Config, TestRunner};
    let mut runner = TestRunner::new(Config {
        cases: 160,
        ..Config::default()
    });
    let totals = std::cell::Cell::new((0usize, 0usize));
    runner
        .run(&prop::collection::vec(op(), 1..60), |ops| {
            let (recoveries, pairs) = play(&ops)?;
            let (r, p) = totals.get();
            totals.set((r + recoveries, p + pairs));
            Ok(())
        })
        .unwrap();
    let (recoveries, pairs) = totals.get();
    eprintln!(
        "{recoveries} recoveries over {pairs} answered (mention, recipient) pairs: 0 lost, 0 answered twice"
    );
}

/// The repro, step by step: `one` handed, `two` arrives during
/// that turn, the answer to `one` is posted, the next turn is handed `two`,
/// kill -9. `two` must still be unread after recovery.
#[test]
fn an_answer_to_an_earlier_message_does_not_answer_a_later_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("inst");
    let mut store = FileStore::open(&dir, &layout()).unwrap();
    let one = store.append("user", "@a one").unwrap().id;
    store.mark_delivered("a", one).unwrap();
    let two = store.append("user", "@a two").unwrap().id;
    store.append("a", "answer").unwrap();
    store.ack("a", Since::Id(one)).unwrap();
    store.mark_delivered("a", two).unwrap();
    drop(store);

    let store = FileStore::open(&dir, &layout()).unwrap();
    assert_eq!(store.answered_through("a").unwrap(), None);
    assert_eq!(unread(&store, "a"), vec![two]);

    // Once `a` answers after the hand-over, `two` counts as answered.
    let mut store = store;
    store.append("a", "answer to two").unwrap();
    drop(store);
    let store = FileStore::open(&dir, &layout()).unwrap();
    assert_eq!(store.answered_through("a").unwrap(), Some(two));
}
