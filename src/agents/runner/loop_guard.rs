//! The cycle detector: notices agents waking each other in a repeating
//! pattern (a pair ping-ponging, a ring of three or more) with nobody else
//! taking part.

use std::collections::{BTreeSet, VecDeque};

use super::config::CycleConfig;

/// One agent message that wakes other agents: sender and woken agents (sorted).
pub(crate) type Wake = (String, Vec<String>);

/// A detected loop.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Cycle {
    /// The agents taking part, sorted.
    pub agents: Vec<String>,
    /// One period of the pattern, oldest first.
    pub pattern: Vec<Wake>,
    pub repeats: usize,
}

/// Remembers the latest wakes since the last reset.
///
/// A loop is the last `period * repeats` wakes being one pattern of
/// `period` (2 ..= `max_period`) wakes repeated, in which at least two agents
/// send and every sender is also woken within the pattern: they keep each
/// other busy. One agent pinging another that never answers is not a loop.
#[derive(Clone, Debug)]
pub(crate) struct CycleDetector {
    config: CycleConfig,
    history: VecDeque<Wake>,
}

impl CycleDetector {
    pub fn new(config: CycleConfig) -> Self {
        CycleDetector {
            config,
            history: VecDeque::new(),
        }
    }

    /// Forgets everything (a person spoke, a document changed, a resume).
    pub fn reset(&mut self) {
        self.history.clear();
    }

    /// Records that `from` woke `to`; returns the loop it completes, if any.
    /// The history is cleared when a loop is reported.
    pub fn record(&mut self, from: &str, to: &[String]) -> Option<Cycle> {
        let mut woken = to.to_vec();
        woken.sort();
        woken.dedup();
        let repeats = self.config.repeats.max(2);
        let capacity = self.config.max_period.max(2) * repeats;
        self.history.push_back((from.to_string(), woken));
        while self.history.len() > capacity {
            self.history.pop_front();
        }
        let cycle = (2..=self.config.max_period).find_map(|p| self.cycle_of_period(p, repeats))?;
        self.history.clear();
        Some(cycle)
    }

    fn cycle_of_period(&self, period: usize, repeats: usize) -> Option<Cycle> {
        let len = self.history.len();
        if len < period * repeats {
            return None;
        }
        let start = len - period * repeats;
        let repeating = (start + period..len).all(|i| self.history[i] == self.history[i - period]);
        if !repeating {
            return None;
        }
        let pattern: Vec<Wake> = self.history.range(len - period..).cloned().collect();
        let senders: BTreeSet<&str> = pattern.iter().map(|(s, _)| s.as_str()).collect();
        let woken: BTreeSet<&str> = pattern
            .iter()
            .flat_map(|(_, w)| w.iter().map(String::as_str))
            .collect();
        if senders.len() < 2 || !senders.iter().all(|s| woken.contains(s)) {
            return None;
        }
        let agents = senders
            .union(&woken)
            .map(|s| s.to_string())
            .collect::<Vec<_>>();
        Some(Cycle {
            agents,
            pattern,
            repeats,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detector(repeats: usize) -> CycleDetector {
        CycleDetector::new(CycleConfig {
            repeats,
            max_period: 6,
        })
    }

    fn to(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn pair_ping_pong_is_a_loop_after_the_configured_repeats() {
        let mut d = detector(3);
        let mut found = None;
        for i in 0..6 {
            assert!(found.is_none(), "reported too early at {i}");
            let (from, other) = if i % 2 == 0 { ("a", "b") } else { ("b", "a") };
            found = d.record(from, &to(&[other]));
        }
        let cycle = found.expect("a loop");
        assert_eq!(cycle.agents, to(&["a", "b"]));
        assert_eq!(cycle.pattern.len(), 2);
    }

    #[test]
    fn ring_of_three_is_a_loop() {
        let mut d = detector(3);
        let ring = [("a", "b"), ("b", "c"), ("c", "a")];
        let results: Vec<_> = ring
            .iter()
            .cycle()
            .take(9)
            .map(|(f, t)| d.record(f, &to(&[t])))
            .collect();
        assert!(results[..8].iter().all(Option::is_none));
        let cycle = results[8].clone().expect("a loop");
        assert_eq!(cycle.agents, to(&["a", "b", "c"]));
        assert_eq!(cycle.pattern.len(), 3);
    }

    #[test]
    fn one_sided_pinging_and_reset_history_are_not_loops() {
        let mut d = detector(2);
        for _ in 0..10 {
            assert!(d.record("a", &to(&["b"])).is_none());
        }
        // Two senders both pinging c, who never wakes them, is no loop either.
        for i in 0..10 {
            let from = if i % 2 == 0 { "a" } else { "b" };
            assert!(d.record(from, &to(&["c"])).is_none());
        }
        d.reset();
        assert!(d.record("a", &to(&["b"])).is_none());
        assert!(d.record("b", &to(&["a"])).is_none());
        assert!(d.record("a", &to(&["b"])).is_none());
        d.reset();
        assert!(d.record("b", &to(&["a"])).is_none());
    }

    #[test]
    fn a_broken_pattern_is_not_a_loop() {
        let mut d = detector(3);
        let seq = [
            ("a", "b"),
            ("b", "a"),
            ("a", "b"),
            ("b", "c"),
            ("a", "b"),
            ("b", "a"),
        ];
        for (f, t) in seq {
            assert!(d.record(f, &to(&[t])).is_none());
        }
    }
}
