//! Which tasks a board filter keeps, and which task a reference (a
//! number, the start of an id, a name) names.

use super::*;

fn eq_status(status: TaskStatus, text: &str) -> bool {
    status
        .as_str()
        .eq_ignore_ascii_case(&text.replace(['-', ' '], "_"))
}

fn contains_ci(haystack: &str, needle: &str) -> bool {
    haystack.to_lowercase().contains(&needle.to_lowercase())
}

/// Whether `task` passes the board's filter.
pub fn matches(board: &TaskSnapshot, task: &Task, filter: &Filter) -> bool {
    if let Some(who) = &filter.from {
        let held = holder(board, task).is_some_and(|h| h.eq_ignore_ascii_case(who));
        let meant = task
            .assignee
            .as_deref()
            .is_some_and(|a| a.eq_ignore_ascii_case(who));
        if !(held || meant) {
            return false;
        }
    }
    if let Some(kind) = &filter.kind
        && !eq_status(task.status, kind)
    {
        return false;
    }
    if let Some(bead) = &filter.bead
        && !(task.id.eq_ignore_ascii_case(bead) || task.name.eq_ignore_ascii_case(bead))
    {
        return false;
    }
    if let Some(t) = &filter.text
        && !(contains_ci(&task.name, t)
            || contains_ci(&task.id, t)
            || contains_ci(&task.description, t))
    {
        return false;
    }
    true
}

/// The tasks listed, in board order: by status, then workflow (oldest
/// first), then plan position.
pub fn listed<'a>(board: &'a TaskSnapshot, filter: &Filter) -> Vec<&'a Task> {
    let wf = |t: &Task| {
        board
            .workflows
            .iter()
            .position(|w| w.id == t.workflow_id)
            .unwrap_or(usize::MAX)
    };
    let mut tasks: Vec<&Task> = board
        .tasks
        .iter()
        .filter(|t| matches(board, t, filter))
        .collect();
    tasks.sort_by_key(|t| {
        (
            TaskStatus::ALL.iter().position(|s| *s == t.status),
            wf(t),
            t.sequence,
        )
    });
    tasks
}

/// Finds the task a person named: its id, a unique id prefix (with or
/// without `tk_`), or its name (any case). The error says what is wrong.
pub fn resolve<'a>(board: &'a TaskSnapshot, reference: &str) -> Result<&'a Task, String> {
    let r = reference.trim();
    if let Some(t) = board.tasks.iter().find(|t| t.id == r) {
        return Ok(t);
    }
    let one = |found: Vec<&'a Task>| -> Option<Result<&'a Task, String>> {
        match found.as_slice() {
            [] => None,
            [t] => Some(Ok(*t)),
            several => Some(Err(format!(
                "'{}' could be {}; name it by id",
                for_terminal(r),
                several
                    .iter()
                    .map(|t| format!("{} ({})", for_terminal(&t.name), for_terminal(&t.id)))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ))),
        }
    };
    let by_name = board
        .tasks
        .iter()
        .filter(|t| t.name.eq_ignore_ascii_case(r))
        .collect();
    if let Some(found) = one(by_name) {
        return found;
    }
    let bare = r.strip_prefix("tk_").unwrap_or(r);
    let by_prefix = board
        .tasks
        .iter()
        .filter(|t| {
            !r.is_empty()
                && (t.id.starts_with(r)
                    || t.id
                        .strip_prefix("tk_")
                        .is_some_and(|h| h.starts_with(bare)))
        })
        .collect();
    one(by_prefix).unwrap_or_else(|| {
        Err(format!(
            "there is no task '{}' on the board (ids, id prefixes and names work)",
            for_terminal(r)
        ))
    })
}
