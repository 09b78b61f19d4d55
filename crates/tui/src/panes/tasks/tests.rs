use super::*;

#[test]
fn short_ids_and_fair_shares() {
    assert_eq!(short_id("tk_0123456789ab"), "012345");
    assert_eq!(short_id("ol-3"), "ol-3");
    assert_eq!(short_id("a-very-long-given-id"), "a-very-lo…");
    // Short facts keep their width; long ones share the rest.
    assert_eq!(fair_shares(&[5, 40, 40], 45), vec![5, 20, 20]);
    assert_eq!(fair_shares(&[5, 6], 45), vec![5, 6]);
    assert_eq!(fair_shares(&[30, 30], 10), vec![5, 5]);
}

#[test]
fn only_the_actions_a_status_allows() {
    use crate::vocab::TaskStatus as S;
    for s in [S::Completed, S::Skipped] {
        for c in ["task done", "task fail", "task release", "task skip"] {
            assert!(!applies(c, s), "{c} on {s}");
        }
        assert!(applies("pager", s));
    }
    assert!(applies("task done", S::InProgress) && applies("task release", S::InProgress));
    assert!(!applies("task done", S::Pending) && applies("task skip", S::Pending));
    assert!(applies("task skip", S::Failed) && !applies("task fail", S::Failed));
}
