//! What the runner does when a turn cannot go on: kill it, count a lost
//! connection, schedule a retry, fail it; and the texts it says so with.

use super::*;

/// Kills `a`'s running turn, if any, leaving it idle.
pub(super) fn kill_running(a: &mut AgentState, fx: &mut Vec<Effect>) {
    if let Phase::Running(t) = &a.phase {
        fx.push(Effect::KillTurn {
            agent: a.name.clone(),
            turn: t.id,
        });
        a.phase = Phase::Idle;
    }
}

/// How many turns in a row a lost host connection may cut off before the
/// next loss counts as a failure (a link that keeps dropping ends in a
/// clear error, not in endless retries).
pub const MAX_CONNECTION_LOSSES: u32 = 5;

/// A turn cut off by a lost host connection: said in the channel and
/// retried after the first back-off without counting as a failure (the
/// retry waits for the host's connection to be back); past
/// [`MAX_CONNECTION_LOSSES`] in a row it is a failure like any other.
pub(super) fn lose_connection(
    a: &mut AgentState,
    reason: String,
    now: Millis,
    policy: &RetryPolicy,
    fx: &mut Vec<Effect>,
) {
    a.connection_losses += 1;
    if a.connection_losses > MAX_CONNECTION_LOSSES {
        return fail_turn(a, reason, now, policy, fx);
    }
    fx.push(Effect::PostSystem {
        text: format!(
            "{}'s turn was cut off: {reason}. It is tried again once the connection is back \
             (not counted as a failure).",
            a.name
        ),
    });
    schedule_retry(a, a.failures + 1, now.after(policy.delay(1)), reason, fx);
}

/// Waits for retry number `retry` at `at`.
pub(super) fn schedule_retry(
    a: &mut AgentState,
    retry: u32,
    at: Millis,
    reason: String,
    fx: &mut Vec<Effect>,
) {
    fx.push(Effect::ScheduleRetry {
        agent: a.name.clone(),
        at,
        retry,
    });
    a.phase = Phase::RetryWait { at, retry, reason };
}

/// A failed attempt: schedule a retry, or fail the agent when out of retries.
pub(super) fn fail_turn(
    a: &mut AgentState,
    reason: String,
    now: Millis,
    policy: &RetryPolicy,
    fx: &mut Vec<Effect>,
) {
    a.failures += 1;
    if a.failures <= policy.max_retries {
        let retry = a.failures;
        schedule_retry(a, retry, now.after(policy.delay(retry)), reason, fx);
    } else {
        fx.push(Effect::PostSystem {
            text: format!(
                "{} failed after {} attempt(s): {reason}. Its {} unread message(s) stay unread; \
                 restart it to try again.",
                a.name,
                a.failures,
                a.unread.len()
            ),
        });
        a.phase = Phase::Failed(reason);
    }
}

pub(super) fn budget_text(budget: &Budget) -> String {
    let what = match budget {
        Budget::Turns { limit } => format!("the workflow used its {limit} turns"),
        Budget::WallClock { limit_ms } => format!(
            "the workflow ran for its time budget of {}",
            human(Duration::from_millis(*limit_ms))
        ),
        Budget::Cost {
            limit_usd,
            spent_usd,
        } => format!("the workflow spent ${spent_usd:.2} of its ${limit_usd:.2} budget"),
    };
    format!(
        "Paused: {what}. Agents with unread messages are out of budget and their messages stay \
         unread; resume to grant the same budget again."
    )
}

/// `a`, `a and b`, `a, b and c`.
pub(super) fn and_list(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
