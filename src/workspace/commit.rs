//! Every turn is a step: at the end of a successful turn in a worktree,
//! what the agent left uncommitted is committed on its branch, with a
//! message naming the agent, its turn and the message ids it answered.
//!
//! A step is numbered with the agent's own turn number (the engine's
//! count, shown in its pane and in its output logs, kept across reopening
//! and `stop --clean`), so a turn is called the same everywhere; turns
//! that changed nothing leave gaps. It is written as the `Awtui-Turn:`
//! trailer, so the branch's history is the record (no separate file to
//! keep in step). When the agent committed everything itself, an empty
//! marker commit still closes the step; a turn that changed nothing makes
//! none.

use super::{AgentWorkspace, Git, WorkspaceError};

/// The trailer naming the step a commit closes.
pub const TURN_TRAILER: &str = "Awtui-Turn";

/// One turn's commit on an agent's branch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The agent's step number on its branch (1-based).
    pub turn: u32,
    pub commit: String,
}

/// The commit message of `agent`'s step `turn`, answering `messages`.
pub fn message(agent: &str, turn: u32, messages: &[u64]) -> String {
    let ids = if messages.is_empty() {
        "none".to_string()
    } else {
        messages
            .iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "awtui: {agent} turn {turn}\n\nAwtui-Agent: {agent}\n{TURN_TRAILER}: {turn}\nAwtui-Messages: {ids}\n"
    )
}

/// The step number a commit message closes, from its trailer.
pub fn parse_turn(message: &str) -> Option<u32> {
    message.lines().find_map(|l| {
        l.strip_prefix(TURN_TRAILER)?
            .strip_prefix(':')?
            .trim()
            .parse()
            .ok()
    })
}

/// The steps between `base` and `rev`, oldest first.
pub fn steps(git: &Git, base: &str, rev: &str) -> Result<Vec<Step>, WorkspaceError> {
    let log = git.run(&[
        "log",
        "--reverse",
        "--format=%H%x00%B%x1e",
        &format!("{base}..{rev}"),
    ])?;
    Ok(log
        .split('\x1e')
        .filter_map(|rec| {
            let (commit, body) = rec.trim_start_matches('\n').split_once('\0')?;
            Some(Step {
                turn: parse_turn(body)?,
                commit: commit.to_string(),
            })
        })
        .collect())
}

/// Commits what `ws.agent` left in its worktree as its next step, after a
/// successful turn that answered `messages`. `None` when the turn changed
/// nothing.
pub fn commit_turn(ws: &AgentWorkspace, messages: &[u64]) -> Result<Option<Step>, WorkspaceError> {
    commit_turn_as(ws, messages, None)
}

/// [`commit_turn`] as the agent's own turn `number` (the engine's count,
/// which its pane and logs show and which goes on across reopening and
/// `stop --clean`), so every place names a turn alike; never lower than
/// the branch's last step + 1, so steps only go up. `None`: the next step.
pub fn commit_turn_as(
    ws: &AgentWorkspace,
    messages: &[u64],
    number: Option<u32>,
) -> Result<Option<Step>, WorkspaceError> {
    // Before anything is staged: git for the worktree from the
    // repository's record, and only while it is the agent's own (its
    // `.git` link naming that record, `HEAD` on its branch); never the
    // git dir its `.git` file names, nor a repository above the folder.
    let git = own_git(ws, &super::Repo::at(&ws.repo))?;
    git.run(&["add", "--all"])?;
    let staged = !git.check(&["diff", "--cached", "--quiet", "--no-ext-diff"])?;
    let head = git.run(&["rev-parse", "HEAD"])?.trim().to_string();
    let done = steps(&git, &ws.base, "HEAD")?;
    let last = done.last().map_or(ws.base.as_str(), |s| s.commit.as_str());
    if !staged && head == last {
        return Ok(None);
    }
    let turn = (done.last().map_or(0, |s| s.turn) + 1).max(number.unwrap_or(0));
    let email = format!("{}@awtui.invalid", ws.agent);
    let mut env = vec![
        ("GIT_AUTHOR_NAME", ws.agent.as_str()),
        ("GIT_AUTHOR_EMAIL", email.as_str()),
    ];
    // The user's identity commits when set; awtui's otherwise.
    if !git.check(&["var", "GIT_COMMITTER_IDENT"])? {
        env.extend([
            ("GIT_COMMITTER_NAME", "awtui"),
            ("GIT_COMMITTER_EMAIL", "awtui@awtui.invalid"),
        ]);
    }
    let msg = message(&ws.agent, turn, messages);
    git.run_env(
        &[
            "-c",
            "commit.gpgsign=false",
            "commit",
            "--quiet",
            "--no-verify",
            "--allow-empty",
            "-m",
            &msg,
        ],
        &env,
    )?;
    let commit = git.run(&["rev-parse", "HEAD"])?.trim().to_string();
    Ok(Some(Step { turn, commit }))
}

/// Git for `ws.root` when it is still the agent's own worktree, on the
/// branch awtui made for it: its `.git` link naming the repository's
/// record of it (not gone, not moved to a git dir of the agent's, not a
/// folder, a symbolic link or a FIFO; see [`super::link`]) and `HEAD` on
/// the agent's branch. An agent that removed or rewrote `.git`, checked
/// out another branch (`git checkout --ignore-other-worktrees main`, `git
/// switch -c side`) or replaced the folder gets its turn left uncommitted,
/// with the reason; no git runs in what it made, and the user's checkout
/// is never touched.
pub fn own_git(ws: &AgentWorkspace, repo: &super::Repo) -> Result<Git, WorkspaceError> {
    let refuse = |reason: String| WorkspaceError::NotOwnWorktree {
        agent: ws.agent.clone(),
        root: ws.root.clone(),
        reason,
    };
    let git = repo
        .worktree_git(&ws.root, Some(&ws.base))
        .map_err(|e| match e {
            WorkspaceError::LinkMoved { reason, .. } => refuse(reason),
            other => other,
        })?;
    let head = git.run(&["symbolic-ref", "-q", "HEAD"]).unwrap_or_default();
    let head = head.trim();
    let own = format!("refs/heads/{}", ws.branch);
    if head != own {
        let on = head
            .strip_prefix("refs/heads/")
            .unwrap_or("a detached HEAD");
        return Err(refuse(format!(
            "it is on {on}, not on its branch {}; switch it back (git switch {}) or keep the work yourself",
            ws.branch, ws.branch
        )));
    }
    Ok(git)
}

/// The driver's call at the end of a successful turn of `agent`: commits
/// its step when it works in a worktree. Returns a notice when that failed
/// (the turn still counts; the changes stay in the worktree for the next
/// step).
pub fn after_turn(workspaces: &super::Workspaces, agent: &str, messages: &[u64]) -> Option<String> {
    after_turn_of(workspaces.get(agent)?, messages, None)
}

/// [`after_turn`] for the workspace `ws` itself (the engine runs it off
/// its loop, in the task that relays the turn), as the agent's turn
/// `number` when known (see [`commit_turn_as`]).
pub fn after_turn_of(ws: &AgentWorkspace, messages: &[u64], number: Option<u32>) -> Option<String> {
    let agent = ws.agent.as_str();
    let repo = super::Repo::at(&ws.repo);
    let mut notes = match repo.heal_in_place(agent, &ws.root, &ws.branch) {
        Ok(notes) => notes,
        Err(e) => vec![format!("cannot check {agent}'s worktree: {e}")],
    };
    if let Some(n) = commit_notice(ws, agent, messages, number) {
        notes.push(n);
    }
    (!notes.is_empty()).then(|| notes.join("\n"))
}

/// Commits the turn; a notice when that failed.
fn commit_notice(
    ws: &AgentWorkspace,
    agent: &str,
    messages: &[u64],
    number: Option<u32>,
) -> Option<String> {
    match commit_turn_as(ws, messages, number) {
        Ok(Some(step)) => {
            tracing::info!(
                "{agent}: turn {} committed as {} on {}",
                step.turn,
                step.commit,
                ws.branch
            );
            None
        }
        Ok(None) => None,
        Err(e) => Some(format!(
            "cannot commit {agent}'s turn on {}: {e}",
            ws.branch
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_agent_turn_and_messages_and_parses_back() {
        let m = message("coder", 3, &[12, 14]);
        assert!(m.starts_with("awtui: coder turn 3\n"));
        assert!(m.contains("Awtui-Agent: coder\n"));
        assert!(m.contains("Awtui-Messages: 12, 14\n"));
        assert_eq!(parse_turn(&m), Some(3));
        assert_eq!(parse_turn("fix: something\n\nAwtui-Turnover: 2"), None);
    }
}
