//! Property tests: under any interleaving of append / deliver / ack / peek,
//! both stores agree with a simple reference model on ids, order, cursors and
//! inbox contents.

use std::collections::BTreeMap;

use awtui::context::{ContextStore, Cursor, FileStore, MemoryStore, Since, StoreLayout};
use proptest::prelude::*;

const AGENTS: [&str; 3] = ["a", "b", "c"];
const SENDERS: [&str; 5] = ["a", "b", "c", "user", "system"];

#[derive(Clone, Debug)]
enum Op {
    Append {
        from: usize,
        mentions: Vec<usize>,
        urgent: bool,
    },
    Deliver {
        who: usize,
        back: u64,
    },
    AckId {
        who: usize,
        back: u64,
    },
    AckTime {
        who: usize,
        back: u64,
    },
    Peek {
        who: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..5usize, prop::collection::vec(0..4usize, 0..3), any::<bool>())
            .prop_map(|(from, mentions, urgent)| Op::Append { from, mentions, urgent }),
        1 => (0..4usize, 0..4u64).prop_map(|(who, back)| Op::Deliver { who, back }),
        2 => (0..4usize, 0..4u64).prop_map(|(who, back)| Op::AckId { who, back }),
        1 => (0..4usize, 0..4u64).prop_map(|(who, back)| Op::AckTime { who, back }),
        1 => (0..4usize).prop_map(|who| Op::Peek { who }),
    ]
}

fn recipient(i: usize) -> &'static str {
    if i < AGENTS.len() { AGENTS[i] } else { "user" }
}

fn layout() -> StoreLayout {
    StoreLayout {
        channel: "channel.md".into(),
        document: "notes.md".into(),
        documents: vec![],
        agents: AGENTS.iter().map(|s| s.to_string()).collect(),
    }
}

/// The reference: a list of (id, mentions) and cursors.
#[derive(Default)]
struct Model {
    mentions: Vec<Vec<String>>,
    cursors: BTreeMap<String, Cursor>,
}

impl Model {
    fn last(&self) -> u64 {
        self.mentions.len() as u64
    }
    fn cursor(&self, who: &str) -> Cursor {
        self.cursors.get(who).copied().unwrap_or_default()
    }
    fn unread(&self, who: &str) -> Vec<u64> {
        let acked = self.cursor(who).acked;
        (acked + 1..=self.last())
            .filter(|id| self.mentions[*id as usize - 1].iter().any(|m| m == who))
            .collect()
    }
}

fn run(store: &mut dyn ContextStore, ops: &[Op]) {
    let mut model = Model::default();
    for op in ops {
        match op {
            Op::Append {
                from,
                mentions,
                urgent,
            } => {
                let mut text: String = mentions
                    .iter()
                    .map(|m| format!("@{} ", recipient(*m)))
                    .collect();
                text.push_str(if *urgent { "URGENT" } else { "fyi" });
                let e = store.append(SENDERS[*from], &text).unwrap();
                assert_eq!(e.id, model.last() + 1, "ids are consecutive and increasing");
                let mut expected: Vec<String> = Vec::new();
                for m in mentions {
                    let r = recipient(*m).to_string();
                    // One's own messages never enter one's own inbox.
                    if r != SENDERS[*from] && !expected.contains(&r) {
                        expected.push(r);
                    }
                }
                assert_eq!(e.mentions, expected);
                model.mentions.push(expected);
            }
            Op::Deliver { who, back } => {
                let target = model.last().saturating_sub(*back);
                let who = recipient(*who);
                let c = store.mark_delivered(who, target).unwrap();
                let old = model.cursor(who);
                let new = Cursor {
                    delivered: old.delivered.max(target),
                    ..old
                };
                assert_eq!(c, new);
                model.cursors.insert(who.into(), new);
            }
            Op::AckId { who, back } | Op::AckTime { who, back } => {
                let target = model.last().saturating_sub(*back);
                let who = recipient(*who);
                let since = match op {
                    Op::AckTime { .. } if target > 0 => {
                        // All entries sharing the target's millisecond are covered.
                        let t = store.entry(target).unwrap().timestamp;
                        let covered = store
                            .read(None, None)
                            .unwrap()
                            .iter()
                            .filter(|e| e.timestamp <= t)
                            .map(|e| e.id)
                            .max()
                            .unwrap();
                        let c = store.ack(who, Since::Time(t)).unwrap();
                        let old = model.cursor(who);
                        let new = Cursor {
                            acked: old.acked.max(covered),
                            delivered: old.delivered.max(covered),
                        };
                        assert_eq!(c, new);
                        model.cursors.insert(who.into(), new);
                        continue;
                    }
                    _ => Since::Id(target),
                };
                let c = store.ack(who, since).unwrap();
                let old = model.cursor(who);
                let new = Cursor {
                    acked: old.acked.max(target),
                    delivered: old.delivered.max(target),
                };
                assert_eq!(c, new, "cursors only move forward");
                model.cursors.insert(who.into(), new);
            }
            Op::Peek { who } => {
                let who = recipient(*who);
                let before = store.cursor(who).unwrap();
                let _ = store.inbox(who).unwrap();
                assert_eq!(store.cursor(who).unwrap(), before, "peek changes nothing");
            }
        }
        // After every step: order, and each inbox matches the model.
        let all = store.read(None, None).unwrap();
        assert!(
            all.windows(2)
                .all(|w| w[0].id < w[1].id && w[0].timestamp <= w[1].timestamp)
        );
        for who in AGENTS.iter().copied().chain(["user"]) {
            let mut ids: Vec<u64> = store
                .inbox(who)
                .unwrap()
                .iter()
                .map(|i| i.entry.id)
                .collect();
            ids.sort();
            assert_eq!(ids, model.unread(who), "inbox of {who}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn memory_store_matches_the_model(ops in prop::collection::vec(op(), 1..60)) {
        let mut store = MemoryStore::new(&layout()).unwrap();
        run(&mut store, &ops);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn file_store_matches_the_model_and_survives_reopen(ops in prop::collection::vec(op(), 1..40)) {
        let dir = tempfile::tempdir().unwrap();
        let entries;
        let cursors: Vec<Cursor>;
        {
            let mut store = FileStore::open(dir.path(), &layout()).unwrap();
            run(&mut store, &ops);
            entries = store.read(None, None).unwrap();
            cursors = ["a", "b", "c", "user"].iter().map(|w| store.cursor(w).unwrap()).collect();
        }
        let store = FileStore::open(dir.path(), &layout()).unwrap();
        prop_assert_eq!(store.read(None, None).unwrap(), entries);
        let reopened: Vec<Cursor> = ["a", "b", "c", "user"].iter().map(|w| store.cursor(w).unwrap()).collect();
        prop_assert_eq!(reopened, cursors);
    }
}
