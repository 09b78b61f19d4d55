//! The one table of task status moves (`task_update_status`), written out
//! in the README. Claiming (`task_claim`: pending or failed → claimed) and
//! releasing (a holder's task → pending) are their own operations.

use super::tasks::TaskStatus::{self, *};

/// Where `task_update_status` may move a task from each status.
pub const TABLE: [(TaskStatus, &[TaskStatus]); 8] = [
    (Pending, &[Skipped]),
    (Claimed, &[Planning, InProgress, Completed, Failed]),
    (Planning, &[InProgress, Completed, Failed]),
    (InProgress, &[Paused, Completed, Failed]),
    (Paused, &[InProgress, Failed]),
    (Failed, &[Pending, Skipped]),
    (Completed, &[]),
    (Skipped, &[]),
];

/// The statuses `task_update_status` may move `from` to.
pub fn allowed(from: TaskStatus) -> &'static [TaskStatus] {
    TABLE
        .iter()
        .find(|(f, _)| *f == from)
        .map(|(_, to)| *to)
        .unwrap_or(&[])
}

/// Whether `from → to` is in the table.
pub fn is_allowed(from: TaskStatus, to: TaskStatus) -> bool {
    allowed(from).contains(&to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_has_one_row_and_done_is_final() {
        for s in TaskStatus::ALL {
            assert_eq!(TABLE.iter().filter(|(f, _)| *f == s).count(), 1, "{s}");
        }
        assert!(allowed(Completed).is_empty());
        assert!(is_allowed(InProgress, Completed));
        assert!(!is_allowed(Pending, InProgress), "claim first");
        assert!(!is_allowed(Completed, Failed));
    }
}
