//! Which channel ids the runner has been told about.

/// The channel ids the runner was told about: all up to `through`, and
/// the few above it reported out of order. A message is news once, however
/// its report is ordered against the others (a kickoff reported after the
/// task news posted behind it is still news).
#[derive(Clone, Debug, Default)]
pub(super) struct Seen {
    through: u64,
    above: std::collections::BTreeSet<u64>,
}

/// At most this many ids above a gap are remembered; beyond, the gap is
/// taken as seen (ids that never come are not waited for forever).
const MAX_SEEN_ABOVE: usize = 4096;

impl Seen {
    pub(super) fn contains(&self, id: u64) -> bool {
        id <= self.through || self.above.contains(&id)
    }

    /// Records `id`; false if it was seen before.
    pub(super) fn insert(&mut self, id: u64) -> bool {
        if self.contains(id) {
            return false;
        }
        self.above.insert(id);
        self.compact();
        if self.above.len() > MAX_SEEN_ABOVE
            && let Some(first) = self.above.pop_first()
        {
            self.through = first;
            self.compact();
        }
        true
    }

    /// Everything up to `last` is history.
    pub(super) fn history(&mut self, last: u64) {
        self.through = self.through.max(last);
        self.above = self.above.split_off(&(self.through.saturating_add(1)));
        self.compact();
    }

    pub(super) fn compact(&mut self) {
        while self.above.remove(&(self.through.saturating_add(1))) {
            self.through += 1;
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.through == 0 && self.above.is_empty()
    }
}
