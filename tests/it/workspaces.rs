//! `workspace: worktree` on real git repositories in temp folders: each
//! agent works in its own worktree on `awtui/<instance>/<agent>`, every turn
//! is a commit there, the user's checkout stays untouched and clean,
//! `validate` names every problem, and `awtui diff` shows the work.
//!
//! These tests need the `git` program; without it they fail (never skip).

use crate::cli_support;
use crate::fixture;
use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use awtui::commands::tasks::render;
use awtui::context::FileStore;
use awtui::engine::tasks::{TaskSnapshot, snapshot};
use awtui::mcp::{McpConfig, McpServer, SharedContext};
use awtui::tasks::journal::FileJournal;
use awtui::tasks::{TaskBoard, TaskStore};
use awtui::workspace::commit::{commit_turn, parse_turn};
use awtui::workspace::{Repo, WorkspaceError};
use cli_support::{World, git, init_repo, wait_for};
use serde_json::{Value, json};
use support::{call, http_client, payload, try_call};

const AGENT: &str = "#!/bin/sh
# Records where it runs, appends its name to the shared file.
cat >/dev/null
pwd > \"where-$AGENT_NAME.txt\"
echo \"$AGENT_NAME was here\" >> shared.txt
echo done
";

fn workflow(extra: &str) -> String {
    format!(
        "name: team
workspace: worktree
agents:
  a:
    command: ./agent.sh
    env:
      AGENT_NAME: a
  b:
    command: ./agent.sh
    env:
      AGENT_NAME: b
{extra}kickoff: '@a and @b: please edit shared.txt'
"
    )
}

/// A world whose folder is a repository holding the workflow and agent.
fn team_world() -> World {
    let w = World::new();
    init_repo(
        &w.dir,
        &[
            ("team.yaml", &workflow("")),
            ("agent.sh", AGENT),
            ("shared.txt", "start\n"),
        ],
    );
    w
}

fn canon(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap()
}

#[test]
fn two_agents_work_in_their_own_worktrees_and_each_turn_is_a_commit() {
    let w = team_world();
    let main_head = git(&w.dir, &["rev-parse", "HEAD"]);
    let r = w.run(&["run", "team.yaml", "--instance", "i"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);

    // Each on its own branch, in its own worktree under the instance folder.
    let listed = git(&w.dir, &["worktree", "list", "--porcelain"]);
    for agent in ["a", "b"] {
        let root = canon(&w.dir.join(".workflow/.worktrees/i").join(agent));
        assert!(
            listed.contains(&format!("worktree {}\n", root.display())),
            "{listed}"
        );
        assert!(listed.contains(&format!("branch refs/heads/awtui/i/{agent}\n")));
        // Its CLI ran there.
        let branch = format!("awtui/i/{agent}");
        let wh = git(&w.dir, &["show", &format!("{branch}:where-{agent}.txt")]);
        assert_eq!(canon(Path::new(wh.trim())), root);
        // It edited the same file as the other without interfering.
        let shared = git(&w.dir, &["show", &format!("{branch}:shared.txt")]);
        assert_eq!(shared, format!("start\n{agent} was here\n"));
        // The turn is one commit naming agent, turn and the message answered.
        let msg = git(&w.dir, &["log", "-1", "--format=%B", &branch]);
        assert!(msg.starts_with(&format!("awtui: {agent} turn 1")), "{msg}");
        assert!(msg.contains(&format!("Awtui-Agent: {agent}")), "{msg}");
        assert!(msg.contains("Awtui-Messages: 1\n"), "{msg}");
        assert_eq!(parse_turn(&msg), Some(1));
        let author = git(&w.dir, &["log", "-1", "--format=%an", &branch]);
        assert_eq!(author.trim(), agent);
        let count = git(&w.dir, &["rev-list", "--count", &format!("main..{branch}")]);
        assert_eq!(count.trim(), "1");
    }
    // The user's checkout: same commit, same file, nothing to report.
    assert_eq!(git(&w.dir, &["rev-parse", "HEAD"]), main_head);
    assert_eq!(
        std::fs::read_to_string(w.dir.join("shared.txt")).unwrap(),
        "start\n"
    );
    assert_eq!(git(&w.dir, &["status", "--porcelain"]), "");
    assert!(!w.dir.join("where-a.txt").exists());

    // Reopening continues in the same worktrees (nothing new to do).
    let r = w.run(&["run", "team.yaml", "--instance", "i"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let again = git(&w.dir, &["worktree", "list", "--porcelain"]);
    assert_eq!(again.matches("worktree ").count(), 3, "{again}");
}

/// A worktree deleted by hand between two runs (it used to fail with
/// "cannot start sh: No such file or directory"): reopening checks it out
/// again from the agent's branch, with its committed turn, and says so in
/// the channel.
#[test]
fn a_worktree_deleted_by_hand_is_checked_out_again_on_reopen() {
    let w = team_world();
    let r = w.run(&["run", "team.yaml", "--instance", "i"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let root = w.dir.join(".workflow/.worktrees/i/a");
    std::fs::remove_dir_all(&root).unwrap();
    let r = w.run(&["run", "team.yaml", "--instance", "i"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        std::fs::read_to_string(root.join("shared.txt")).unwrap(),
        "start\na was here\n",
        "the committed turn is back"
    );
    assert_eq!(
        git(&root, &["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/awtui/i/a"
    );
    let said = w
        .channel("i")
        .iter()
        .filter(|m| m["from"] == "system")
        .filter_map(|m| m["message"].as_str().map(str::to_string))
        .find(|m| m.contains("was gone; checked out again from its branch awtui/i/a"));
    assert!(said.is_some(), "{:?}", w.channel("i"));
    assert_eq!(git(&w.dir, &["status", "--porcelain"]), "");
}

/// One turn number per agent, whatever shows it: after `stop --clean`
/// removed the first turn's branch and the instance is opened again, the
/// next turn is committed as turn 2 (not a second "turn 1"), and its output
/// log is named turn 2 too, as the agent's pane counts it.
#[test]
fn turn_numbers_go_on_across_clean_and_reopening() {
    let mut w = team_world();
    let r = w.run(&["run", "team.yaml", "--instance", "i"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let clean = w.run(&["stop", "--clean", "--force", "@i"]);
    assert_eq!(clean.code, 0, "{}", clean.stderr);
    assert!(
        !branches(&w.dir).contains("awtui/i/a"),
        "{}",
        branches(&w.dir)
    );
    w.start_background("team.yaml", "i");
    let sent = w.run(&["send", "@a once more", "--to", "@i"]);
    assert_eq!(sent.code, 0, "{}", sent.stderr);
    let subject = cli_support::wait_for("a's next turn commit", || {
        let log = git(&w.dir, &["log", "-1", "--format=%s", "awtui/i/a", "--"]);
        log.starts_with("awtui:").then(|| log.trim().to_string())
    });
    assert_eq!(subject, "awtui: a turn 2");
    // The turn's commit is made before the engine hears the turn ended
    // (and writes its output log): wait for the log.
    let logs = cli_support::wait_for("a's turn-2 output log", || {
        let logs: Vec<String> = std::fs::read_dir(w.dir.join(".workflow/i/logs/output"))
            .ok()?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("-a-turn"))
            .collect();
        logs.iter()
            .any(|n| n.ends_with("-a-turn2.txt"))
            .then_some(logs)
    });
    assert!(logs.iter().any(|n| n.ends_with("-a-turn2.txt")), "{logs:?}");
    assert!(logs.iter().any(|n| n.ends_with("-a-turn1.txt")), "{logs:?}");
    assert_eq!(w.run(&["stop", "@i"]).code, 0);
}

/// An agent that changed nothing: `awtui diff` says so (on stderr, so
/// stdout stays an empty patch) instead of printing nothing.
#[test]
fn an_empty_diff_says_no_changes() {
    let w = World::new();
    init_repo(
        &w.dir,
        &[
            (
                "idle.yaml",
                "agents:\n  quiet:\n    command: ./quiet.sh\n    workspace: worktree\nkickoff: '@quiet look'\n",
            ),
            (
                "quiet.sh",
                "#!/bin/sh\ncat >/dev/null\necho nothing to do\n",
            ),
        ],
    );
    let r = w.run(&["run", "idle.yaml", "--instance", "i"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let d = w.run(&["diff", "quiet@i"]);
    assert_eq!(d.code, 0, "{}", d.stderr);
    assert_eq!(d.stdout, "");
    assert!(
        d.stderr
            .contains("no changes: awtui/i/quiet is at its base"),
        "{}",
        d.stderr
    );
}

#[test]
fn diff_shows_an_agents_work_in_total_per_turn_and_as_a_stat() {
    let w = team_world();
    let r = w.run(&["run", "team.yaml", "--instance", "i"]);
    assert_eq!(r.code, 0, "{}", r.stderr);

    let d = w.run(&["diff", "a@i"]);
    assert_eq!(d.code, 0, "{}", d.stderr);
    assert!(d.stdout.contains("+a was here\n"), "{}", d.stdout);
    assert!(!d.stdout.contains("b was here"), "{}", d.stdout);
    let stat_line = |out: &str| {
        out.lines()
            .any(|l| l.trim_start().starts_with("shared.txt ") && l.ends_with("| 1 +"))
    };
    assert!(stat_line(&d.stdout), "{}", d.stdout);
    // Not a terminal: no colour.
    assert!(!d.stdout.contains('\u{1b}'), "{}", d.stdout);

    // Without the instance: the only one with a branch for the agent.
    let t = w.run(&["diff", "b", "--turn", "1"]);
    assert_eq!(t.code, 0, "{}", t.stderr);
    assert!(t.stdout.contains("+b was here\n"), "{}", t.stdout);

    let s = w.run(&["diff", "a@i", "--stat"]);
    assert_eq!(s.code, 0, "{}", s.stderr);
    assert!(stat_line(&s.stdout), "{}", s.stdout);
    assert!(!s.stdout.contains("+a was here"), "{}", s.stdout);

    let missing = w.run(&["diff", "a@i", "--turn", "2"]);
    assert_eq!(missing.code, 1);
    assert!(
        missing
            .stderr
            .contains("awtui/i/a has no turn 2 (its turns: 1)"),
        "{}",
        missing.stderr
    );
    let nobody = w.run(&["diff", "qa"]);
    assert_eq!(nobody.code, 1);
    assert!(nobody.stderr.contains("no awtui workspace branch for 'qa'"));

    // Issue 36: a target that fits several instances is invalid usage,
    // exit 2, as the README's exit codes say (it was 1).
    let r = w.run(&["run", "team.yaml", "--instance", "j"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let both = w.run(&["diff", "a"]);
    assert_eq!(both.code, 2, "{}", both.stderr);
    assert!(
        both.stderr.contains("several instances (i, j)"),
        "{}",
        both.stderr
    );
}

#[test]
fn steps_commit_what_is_left_mark_the_agents_own_commits_and_skip_idle_turns() {
    let tmp = tempfile::tempdir().unwrap();
    let repo_dir = tmp.path().join("r");
    std::fs::create_dir_all(&repo_dir).unwrap();
    init_repo(&repo_dir, &[("f.txt", "one\n")]);
    let repo = Repo::find(&repo_dir).unwrap();
    let state = repo_dir.join(".workflow/x");
    let ws = repo
        .ensure(&repo_dir, &state, "x", "coder", None)
        .unwrap()
        .0;
    assert_eq!(ws.base, git(&repo_dir, &["rev-parse", "HEAD"]).trim());

    // Turn 1: an uncommitted edit and a new file.
    std::fs::write(ws.root.join("f.txt"), "two\n").unwrap();
    std::fs::write(ws.root.join("new.txt"), "new\n").unwrap();
    let s1 = commit_turn(&ws, &[3, 5]).unwrap().expect("a step");
    assert_eq!(s1.turn, 1);
    let files = git(&ws.root, &["show", "--name-only", "--format=", &s1.commit]);
    assert_eq!(files, "f.txt\nnew.txt\n");
    assert!(git(&ws.root, &["log", "-1", "--format=%B"]).contains("Awtui-Messages: 3, 5"));

    // Turn 2: the agent commits itself; awtui only closes the step.
    std::fs::write(ws.root.join("f.txt"), "three\n").unwrap();
    git(&ws.root, &["commit", "-qam", "agent's own commit"]);
    let s2 = commit_turn(&ws, &[7]).unwrap().expect("a marker step");
    assert_eq!(s2.turn, 2);
    let files = git(&ws.root, &["show", "--name-only", "--format=", &s2.commit]);
    assert_eq!(files, "", "the marker commits nothing more");

    // Turn 3 changed nothing: no commit.
    assert_eq!(commit_turn(&ws, &[9]).unwrap(), None);

    // The step diff of turn 2 includes the agent's own commit.
    let d = Command::new(env!("CARGO_BIN_EXE_awtui"))
        .args(["diff", "coder@x", "--turn", "2", "--dir"])
        .arg(&repo_dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&d.stdout);
    assert!(d.status.success(), "{}", String::from_utf8_lossy(&d.stderr));
    assert!(out.contains("-two\n+three\n"), "{out}");
    assert!(!out.contains("new.txt"), "{out}");

    // Reopening finds the same worktree and base; a removed worktree is
    // checked out again on the same branch.
    let again = repo
        .ensure(&repo_dir, &state, "x", "coder", None)
        .unwrap()
        .0;
    assert_eq!(again, ws);
    git(
        &repo_dir,
        &["worktree", "remove", "--force", ws.root.to_str().unwrap()],
    );
    let back = repo
        .ensure(&repo_dir, &state, "x", "coder", None)
        .unwrap()
        .0;
    assert_eq!(back.base, ws.base);
    assert_eq!(
        std::fs::read_to_string(back.root.join("f.txt")).unwrap(),
        "three\n"
    );
    assert_eq!(git(&repo_dir, &["status", "--porcelain"]), "");
}

#[test]
fn an_instance_made_with_worktrees_in_its_folder_continues_there() {
    use awtui::workspace::{legacy_worktree_dir, worktree_dir, worktrees_root};
    let tmp = tempfile::tempdir().unwrap();
    let repo_dir = tmp.path().join("r");
    std::fs::create_dir_all(&repo_dir).unwrap();
    init_repo(
        &repo_dir,
        &[("f.txt", "one\n"), (".gitignore", ".workflow/\n")],
    );
    let repo = Repo::find(&repo_dir).unwrap();
    let state = repo_dir.join(".workflow/x");
    // Where awtui made it before worktrees moved out of the instance folder.
    let old = legacy_worktree_dir(&state, "coder");
    let base = git(&repo_dir, &["rev-parse", "HEAD"]).trim().to_string();
    repo.add_worktree("awtui/x/coder", &old, &base).unwrap();

    let ws = repo
        .ensure(&repo_dir, &state, "x", "coder", None)
        .unwrap()
        .0;
    assert_eq!(canon(&ws.root), canon(&old));
    assert_eq!(ws.base, base);
    assert!(!worktrees_root(&repo_dir, "x").exists());

    // Removed there, it is checked out again in the new place.
    git(
        &repo_dir,
        &["worktree", "remove", "--force", old.to_str().unwrap()],
    );
    let back = repo
        .ensure(&repo_dir, &state, "x", "coder", None)
        .unwrap()
        .0;
    assert_eq!(
        back.root,
        worktree_dir(&worktrees_root(&repo_dir, "x"), "coder")
    );
    assert_eq!(back.base, base);
    assert_eq!(git(&repo_dir, &["status", "--porcelain"]), "");
}

/// `awtui validate team.yaml --instance i` in `w`.
fn validate(w: &World) -> cli_support::Ran {
    w.run(&["validate", "team.yaml", "--instance", "i"])
}

#[test]
fn validate_names_each_git_problem() {
    // Not a repository.
    let w = World::new();
    std::fs::write(w.dir.join("team.yaml"), workflow("")).unwrap();
    w.script("agent.sh", AGENT);
    let r = validate(&w);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("is not inside a git repository"),
        "{}",
        r.stderr
    );

    // A good repository validates (and nothing is made).
    let w = team_world();
    let r = validate(&w);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("worktree awtui/i/a from the current branch"),
        "{}",
        r.stdout
    );
    assert!(!w.dir.join(".workflow").exists());

    // A dirty base.
    std::fs::write(w.dir.join("shared.txt"), "changed\n").unwrap();
    let r = validate(&w);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("agent 'a': the checkout at")
            && r.stderr
                .contains("uncommitted changes to tracked files (shared.txt)"),
        "{}",
        r.stderr
    );
    git(&w.dir, &["checkout", "-q", "shared.txt"]);

    // A detached HEAD, unless a base is written.
    git(&w.dir, &["checkout", "-q", "--detach"]);
    let r = validate(&w);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("has a detached HEAD"), "{}", r.stderr);
    std::fs::write(
        w.dir.join("team.yaml"),
        workflow("").replace("workspace: worktree", "workspace:\n  base: main"),
    )
    .unwrap();
    let r = validate(&w);
    assert_eq!(r.code, 0, "{}", r.stderr);
    std::fs::write(
        w.dir.join("team.yaml"),
        workflow("").replace("workspace: worktree", "workspace:\n  base: nosuch"),
    )
    .unwrap();
    let r = validate(&w);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("base 'nosuch' is not a branch or commit"),
        "{}",
        r.stderr
    );
    git(&w.dir, &["checkout", "-q", "main"]);
    git(&w.dir, &["checkout", "-q", "--", "team.yaml"]);

    // A branch of that name the user made.
    git(&w.dir, &["branch", "awtui/i/b"]);
    let r = validate(&w);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("agent 'b': branch 'awtui/i/b' already exists and was not made by awtui"),
        "{}",
        r.stderr
    );
    // Starting refuses the same way, changing nothing.
    let r = w.run(&["run", "team.yaml", "--instance", "i"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("already exists"), "{}", r.stderr);
}

#[test]
fn workspace_settings_are_checked_in_the_file() {
    let w = World::new();
    let bad = "agents:
  a:
    command: ./x.sh
    workspace: sandbox
  b:
    command: ./x.sh
    workspace: {mode: shared, base: main}
  c:
    backend: cursor
    protocol: headless
    workspace: worktree
context: false
";
    std::fs::write(w.dir.join("bad.yaml"), bad).unwrap();
    let r = w.run(&["validate", "bad.yaml"]);
    assert_eq!(r.code, 2);
    for needle in [
        "unknown mode 'sandbox' (expected shared or worktree)",
        "'base' is only used with mode: worktree",
        "not available for the cursor backend",
        "agent 'c': workspace: worktree needs the file context",
    ] {
        assert!(r.stderr.contains(needle), "{needle}: {}", r.stderr);
    }
}

#[test]
fn a_missing_git_is_a_clear_error() {
    let w = team_world();
    let empty = w.tmp.path().join("nobin");
    std::fs::create_dir_all(&empty).unwrap();
    let r = w
        .cmd(&["validate", "team.yaml", "--instance", "i"])
        .env("PATH", &empty)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("git was not found on PATH"), "{err}");
    // The library says the same.
    assert!(matches!(
        WorkspaceError::GitMissing.to_string().as_str(),
        s if s.contains("git installed")
    ));
}

/// A tool error's code and sentence.
async fn coded(client: &support::Client, tool: &str, args: Value) -> (String, String) {
    let r = try_call(client, tool, args.clone())
        .await
        .unwrap_or_else(|e| panic!("{tool} {args}: protocol error {e}"));
    assert_eq!(r.is_error, Some(true), "{tool} {args}: {r:?}");
    let s = payload(&r);
    (
        s["code"].as_str().unwrap().to_string(),
        s["error"].as_str().unwrap().to_string(),
    )
}

/// An in-process instance `t` of the workflow in the repository `repo`
/// (its folder `<repo>/.workflow/t`, worktrees beside it, outside its
/// document folder), with a task board and an MCP server.
struct Served {
    dir: PathBuf,
    worktrees: PathBuf,
    /// A front end's copy of the board.
    board: TaskBoard,
    /// The state's stream of facts, where the board's changes are heard.
    facts: tokio::sync::broadcast::Receiver<awtui::context::ContextEvent>,
    handle: awtui::mcp::McpHandle,
}

impl Served {
    async fn start(repo: &Path) -> Served {
        let dir = repo.join(".workflow").join("t");
        let store = FileStore::open(&dir, &support::layout()).unwrap();
        let (journal, replay) = FileJournal::open(&dir).unwrap();
        let worktrees = awtui::workspace::worktrees_root(repo, "t");
        let bus = awtui::context::Bus::new();
        let facts = bus.subscribe();
        let board = TaskBoard::new(TaskStore::open(Box::new(journal), replay), bus.publisher())
            .with_worktree_root(worktrees.clone());
        let handle = McpServer::start(McpConfig {
            context: SharedContext::with_tasks(Box::new(store), bus, board.clone()),
            agents: support::agents(),
            instance_dir: Some(dir.clone()),
            tool_timeout: None,
        })
        .await
        .unwrap();
        Served {
            dir,
            worktrees,
            board,
            facts,
            handle,
        }
    }

    /// A client with `agent`'s token.
    async fn client(&self, agent: &str) -> support::Client {
        http_client(self.handle.url(), self.handle.token(agent).unwrap())
            .await
            .0
    }
}

/// A new workflow with one task per name: its id and the task ids.
async fn plan(c: &support::Client, names: &[&str]) -> (String, Vec<String>) {
    let wf = call(c, "workflow_create", json!({"name": "oauth"})).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let tasks: Vec<Value> = names.iter().map(|n| json!({"name": n})).collect();
    let plan = call(
        c,
        "workflow_set_plan",
        json!({"id": wf, "plan": {"tasks": tasks}}),
    )
    .await;
    let ids = plan["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    (wf, ids)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_tools_make_worktrees_for_tasks_and_clean_up_only_merged_or_abandoned_work() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    init_repo(&repo, &[("app.txt", "v1\n")]);
    let served = Served::start(&repo).await;
    let (dir, worktrees) = (served.dir.clone(), served.worktrees.clone());
    // A front end's copy of the board, kept up to date by events alone.
    let front = served.board.clone();
    let mut events = served.facts.resubscribe();
    let mut seen = TaskSnapshot::default();
    let mut catch_up = |seen: &mut TaskSnapshot| {
        while let Ok(e) = events.try_recv() {
            if let awtui::context::ContextEvent::TaskChanged { change } = e {
                seen.apply(change.event);
            }
        }
    };
    let c = served.client("coder").await;
    let (wf, tasks) = plan(&c, &["google", "github"]).await;
    let task = |i: usize| tasks[i].clone();
    let repo_s = repo.display().to_string();
    let create = |branch: &str, t: String| {
        json!({"workflow_id": wf, "branch": branch, "base_branch": "main",
               "create_worktree": true, "repo_path": repo_s, "task_ids": [t]})
    };

    let ws = call(&c, "workspace_create", create("feature/google", task(0))).await;
    let id = ws["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("ws_"), "{ws}");
    assert_eq!(ws["status"], "active");
    let path = PathBuf::from(ws["worktree_path"].as_str().unwrap());
    assert_eq!(path, worktrees.join(".workspaces").join(&id));
    assert_eq!(
        std::fs::read_to_string(path.join("app.txt")).unwrap(),
        "v1\n"
    );
    assert_eq!(
        git(&path, &["branch", "--show-current"]).trim(),
        "feature/google"
    );
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
    // The task board shows where the task's work happens.
    catch_up(&mut seen);
    assert_eq!(seen.workspaces.len(), 1);
    let board_text = render(&seen, chrono::Utc::now());
    assert!(
        board_text.contains(&format!("{} google · ws: feature/google · ", task(0))),
        "{board_text}"
    );

    // Each problem has its code.
    let (code, msg) = coded(&c, "workspace_create", create("feature/google", task(0))).await;
    assert_eq!(code, "BRANCH_EXISTS", "{msg}");
    let mut elsewhere = create("feature/x", task(0));
    elsewhere["repo_path"] = json!(tmp.path().display().to_string());
    let (code, msg) = coded(&c, "workspace_create", elsewhere).await;
    assert_eq!(code, "REPO_NOT_ALLOWED", "{msg}");
    let (code, _) = coded(
        &c,
        "workspace_create",
        create("feature/y", "tk_nope".into()),
    )
    .await;
    assert_eq!(code, "TASK_NOT_FOUND");

    // Work on the branch; cleanup before merging keeps everything.
    std::fs::write(path.join("app.txt"), "v2\n").unwrap();
    git(&path, &["commit", "-qam", "google login"]);
    let (code, msg) = coded(
        &c,
        "workspace_update",
        json!({"id": id, "status": "merged", "cleanup_worktree": true}),
    )
    .await;
    assert_eq!(code, "UNMERGED_WORK", "{msg}");
    assert!(
        msg.contains("'feature/google' is not merged into main"),
        "{msg}"
    );
    assert!(path.join("app.txt").exists());

    // Merged: the worktree and branch go.
    git(&repo, &["merge", "-q", "--ff-only", "feature/google"]);
    let head = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    let done = call(
        &c,
        "workspace_update",
        json!({"id": id, "status": "merged", "merge_commit": head, "cleanup_worktree": true}),
    )
    .await;
    assert_eq!(done["workspace"]["status"], "merged");
    assert!(!path.exists());
    assert_eq!(git(&repo, &["branch", "--list", "feature/google"]), "");

    // Abandoned work is discarded on request.
    let ws2 = call(&c, "workspace_create", create("feature/github", task(1))).await;
    let path2 = PathBuf::from(ws2["worktree_path"].as_str().unwrap());
    std::fs::write(path2.join("app.txt"), "never merged\n").unwrap();
    git(&path2, &["commit", "-qam", "github login"]);
    let id2 = ws2["id"].as_str().unwrap();
    call(
        &c,
        "workspace_update",
        json!({"id": id2, "status": "abandoned", "cleanup_worktree": true}),
    )
    .await;
    assert!(!path2.exists());
    let listed = git(&repo, &["worktree", "list", "--porcelain"]);
    assert_eq!(listed.matches("worktree ").count(), 1, "{listed}");
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
    assert_eq!(
        std::fs::read_to_string(repo.join("app.txt")).unwrap(),
        "v2\n"
    );
    // Front ends followed every change: their copy equals the board.
    catch_up(&mut seen);
    assert_eq!(seen, snapshot(&front));
    let board_text = render(&seen, chrono::Utc::now());
    assert!(
        board_text.contains("ws: feature/google (merged)")
            && board_text.contains("ws: feature/github (abandoned)"),
        "{board_text}"
    );
    drop(c);
    served.handle.stop().await;

    // The records survive a reopen, linked to their tasks.
    let (_, replay) = FileJournal::open(&dir).unwrap();
    let store = TaskStore::open(Box::new(awtui::tasks::journal::NoJournal), replay);
    let saved = store.workspace(&id).expect("recorded");
    assert_eq!(saved.status, "merged");
    assert_eq!(saved.worktree_path, None);
    assert_eq!(store.workspaces_of_task(&task(0))[0].id, id);
}

/// `awtui <args> --dir <repo>` (merge, revert, discard, diff) from anywhere.
fn awtui_in(repo: &Path, args: &[&str]) -> cli_support::Ran {
    let out = Command::new(env!("CARGO_BIN_EXE_awtui"))
        .args(args)
        .arg("--dir")
        .arg(repo)
        .output()
        .unwrap();
    cli_support::Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn branches(dir: &Path) -> String {
    git(
        dir,
        &["for-each-ref", "--format=%(refname:short)", "refs/heads/"],
    )
}

#[test]
fn merge_fast_forwards_or_makes_a_merge_commit_and_a_conflict_changes_nothing() {
    let w = team_world();
    let start = git(&w.dir, &["rev-parse", "HEAD"]).trim().to_string();
    let r = w.run(&["run", "team.yaml", "--instance", "i"]);
    assert_eq!(r.code, 0, "{}", r.stderr);

    // a's branch is ahead of main: a fast-forward, the checkout follows.
    let m = w.run(&["merge", "a@i"]);
    assert_eq!(m.code, 0, "{}", m.stderr);
    assert!(
        m.stdout
            .contains("merged awtui/i/a into main (fast-forward"),
        "{}",
        m.stdout
    );
    assert_eq!(
        git(&w.dir, &["rev-parse", "main"]),
        git(&w.dir, &["rev-parse", "awtui/i/a"])
    );
    assert_eq!(
        std::fs::read_to_string(w.dir.join("shared.txt")).unwrap(),
        "start\na was here\n"
    );
    assert_eq!(git(&w.dir, &["status", "--porcelain"]), "");
    let again = w.run(&["merge", "a@i"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stdout.contains("already merged"), "{}", again.stdout);

    // b edited the same line: a conflict names the file and changes nothing.
    let main_before = git(&w.dir, &["rev-parse", "main"]);
    let c = w.run(&["merge", "b@i"]);
    assert_eq!(c.code, 1, "{}", c.stdout);
    assert!(
        c.stderr
            .contains("merging awtui/i/b into main conflicts in: shared.txt; nothing was changed"),
        "{}",
        c.stderr
    );
    assert_eq!(git(&w.dir, &["rev-parse", "main"]), main_before);
    assert_eq!(git(&w.dir, &["status", "--porcelain"]), "");
    assert!(!w.dir.join(".git/MERGE_HEAD").exists());
    assert_eq!(
        std::fs::read_to_string(w.dir.join("shared.txt")).unwrap(),
        "start\na was here\n"
    );
    assert_eq!(
        git(&w.dir, &["status", "--porcelain"]),
        "",
        "b's worktree untouched too"
    );

    // c started before a was merged and added its own file: a merge commit,
    // refused first while the user's checkout has uncommitted changes.
    let repo = Repo::find(&w.dir).unwrap();
    let ws = repo
        .ensure(&w.dir, &w.dir.join(".workflow/i"), "i", "c", Some(&start))
        .unwrap()
        .0;
    std::fs::write(ws.root.join("c.txt"), "c\n").unwrap();
    commit_turn(&ws, &[1]).unwrap().expect("a step");
    std::fs::write(w.dir.join("shared.txt"), "mine\n").unwrap();
    let dirty = awtui_in(&w.dir, &["merge", "c@i"]);
    assert_eq!(dirty.code, 1);
    assert!(
        dirty.stderr.contains("main is checked out at")
            && dirty
                .stderr
                .contains("uncommitted changes (shared.txt); nothing was changed"),
        "{}",
        dirty.stderr
    );
    assert_eq!(git(&w.dir, &["rev-parse", "main"]), main_before);
    git(&w.dir, &["checkout", "--", "shared.txt"]);
    let mc = awtui_in(&w.dir, &["merge", "c@i"]);
    assert_eq!(mc.code, 0, "{}", mc.stderr);
    assert!(mc.stdout.contains("(merge commit "), "{}", mc.stdout);
    let parents = git(&w.dir, &["log", "-1", "--format=%P", "main"]);
    assert_eq!(
        parents.split_whitespace().collect::<Vec<_>>(),
        vec![
            main_before.trim(),
            git(&w.dir, &["rev-parse", "awtui/i/c"]).trim()
        ]
    );
    assert_eq!(std::fs::read_to_string(w.dir.join("c.txt")).unwrap(), "c\n");
    assert_eq!(git(&w.dir, &["status", "--porcelain"]), "");

    // --no-ff when main is not checked out: the ref moves, no checkout does.
    git(&w.dir, &["switch", "-q", "-c", "elsewhere"]);
    std::fs::write(ws.root.join("c2.txt"), "c2\n").unwrap();
    commit_turn(&ws, &[2]).unwrap().expect("a step");
    let before = git(&w.dir, &["rev-parse", "main"]);
    let nf = awtui_in(&w.dir, &["merge", "c@i", "--no-ff"]);
    assert_eq!(nf.code, 0, "{}", nf.stderr);
    assert!(nf.stdout.contains("(merge commit "), "{}", nf.stdout);
    assert!(!nf.stdout.contains("checkout"), "{}", nf.stdout);
    assert_eq!(
        git(&w.dir, &["log", "-1", "--format=%P", "main"])
            .split_whitespace()
            .next(),
        Some(before.trim())
    );
    assert!(
        !w.dir.join("c2.txt").exists(),
        "the user's checkout is elsewhere"
    );
    assert_eq!(git(&w.dir, &["status", "--porcelain"]), "");
}

#[test]
fn revert_undoes_one_turn_as_a_step_of_its_own_and_never_half_way() {
    let tmp = tempfile::tempdir().unwrap();
    let repo_dir = tmp.path().join("r");
    std::fs::create_dir_all(&repo_dir).unwrap();
    init_repo(&repo_dir, &[("f.txt", "one\n")]);
    let repo = Repo::find(&repo_dir).unwrap();
    let ws = repo
        .ensure(&repo_dir, &repo_dir.join(".workflow/x"), "x", "coder", None)
        .unwrap()
        .0;
    std::fs::write(ws.root.join("f.txt"), "two\n").unwrap();
    commit_turn(&ws, &[1]).unwrap().expect("turn 1");
    std::fs::write(ws.root.join("g.txt"), "g\n").unwrap();
    commit_turn(&ws, &[2]).unwrap().expect("turn 2");

    // A turn running (files not committed yet): refused, nothing changes.
    let head = git(&ws.root, &["rev-parse", "HEAD"]);
    std::fs::write(ws.root.join("h.txt"), "wip\n").unwrap();
    let busy = awtui_in(&repo_dir, &["revert", "coder@x", "--turn", "1"]);
    assert_eq!(busy.code, 1);
    assert!(
        busy.stderr.contains("has uncommitted changes (h.txt)")
            && busy.stderr.contains("nothing was changed"),
        "{}",
        busy.stderr
    );
    assert_eq!(git(&ws.root, &["rev-parse", "HEAD"]), head);
    std::fs::remove_file(ws.root.join("h.txt")).unwrap();

    let r = awtui_in(&repo_dir, &["revert", "coder@x", "--turn", "1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("reverted turn 1 of awtui/x/coder") && r.stdout.contains("(its turn 3)"),
        "{}",
        r.stdout
    );
    // The worktree follows; turn 2's file stays.
    assert_eq!(
        std::fs::read_to_string(ws.root.join("f.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.root.join("g.txt")).unwrap(),
        "g\n"
    );
    assert_eq!(git(&ws.root, &["status", "--porcelain"]), "");
    let msg = git(&ws.root, &["log", "-1", "--format=%B"]);
    assert!(msg.starts_with("awtui: revert coder turn 1\n"), "{msg}");
    let d = awtui_in(&repo_dir, &["diff", "coder@x", "--turn", "3"]);
    assert!(d.stdout.contains("-two\n+one\n"), "{}", d.stdout);
    // The next turn is numbered after the revert.
    std::fs::write(ws.root.join("f.txt"), "four\n").unwrap();
    assert_eq!(commit_turn(&ws, &[3]).unwrap().unwrap().turn, 4);

    // Undoing the revert now conflicts with turn 4: nothing changes.
    let head = git(&ws.root, &["rev-parse", "HEAD"]);
    let c = awtui_in(&repo_dir, &["revert", "coder@x", "--turn", "3"]);
    assert_eq!(c.code, 1);
    assert!(
        c.stderr
            .contains("reverting turn 3 of awtui/x/coder conflicts in: f.txt; nothing was changed"),
        "{}",
        c.stderr
    );
    assert_eq!(git(&ws.root, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&ws.root, &["status", "--porcelain"]), "");
    let none = awtui_in(&repo_dir, &["revert", "coder@x", "--turn", "9"]);
    assert!(
        none.stderr
            .contains("has no turn 9 (its turns: 1, 2, 3, 4)"),
        "{}",
        none.stderr
    );
}

#[test]
fn stop_clean_removes_only_merged_or_discarded_work_unless_forced() {
    let w = team_world();
    let r = w.run(&["run", "team.yaml", "--instance", "i"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(w.run(&["merge", "a@i"]).code, 0);

    // a is merged: removed; b is not: kept, and said so.
    let c = w.run(&["stop", "@i", "--clean"]);
    assert_eq!(c.code, 1, "{}\n{}", c.stdout, c.stderr);
    assert!(c.stdout.contains("removed awtui/i/a"), "{}", c.stdout);
    assert!(
        c.stderr.contains("kept awtui/i/b: not merged into main"),
        "{}",
        c.stderr
    );
    assert_eq!(branches(&w.dir), "awtui/i/b\nmain\n");
    assert!(!w.dir.join(".workflow/.worktrees/i/a").exists());
    assert!(w.dir.join(".workflow/.worktrees/i/b/shared.txt").exists());

    // Discarded: removed although unmerged.
    let d = w.run(&["discard", "b@i"]);
    assert_eq!(d.code, 0, "{}", d.stderr);
    let c = w.run(&["stop", "@i", "--clean"]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(c.stdout.contains("removed awtui/i/b"), "{}", c.stdout);
    assert_eq!(branches(&w.dir), "main\n");
    let listed = git(&w.dir, &["worktree", "list", "--porcelain"]);
    assert_eq!(listed.matches("worktree ").count(), 1, "{listed}");
    // The folders awtui made for them go too, once empty.
    assert!(!w.dir.join(".workflow/.worktrees").exists());
    assert!(w.dir.join(".workflow/i").exists());

    // Unmerged work and uncommitted changes go only with --force.
    let r = w.run(&["run", "team.yaml", "--instance", "j"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    std::fs::write(w.dir.join(".workflow/.worktrees/j/a/wip.txt"), "x").unwrap();
    let kept = w.run(&["stop", "@j", "--clean"]);
    assert_eq!(kept.code, 1);
    assert_eq!(branches(&w.dir), "awtui/j/a\nawtui/j/b\nmain\n");
    let forced = w.run(&["stop", "@j", "--clean", "--force"]);
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    assert_eq!(branches(&w.dir), "main\n");
    assert_eq!(git(&w.dir, &["status", "--porcelain"]), "");
    let bad = w.run(&["stop", "a@i", "--clean"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}

/// An agent that starts its work (a file in its worktree), says so with a
/// marker, and is killed with the instance before finishing; run again, it
/// finds its unfinished file and completes the turn.
const SLOW_AGENT: &str = "#!/bin/sh
cat >/dev/null
if [ -e partial.txt ]; then
  echo continued >> partial.txt
  echo done
  exit 0
fi
echo started > partial.txt
touch \"$MARK\"
i=0; while [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done
echo never
";

/// Every `index.lock` under `dir` (the repository's git folder).
fn index_locks(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                todo.push(p);
            } else if e.file_name() == "index.lock" {
                found.push(p);
            }
        }
    }
    found
}

/// What git lists as worktrees, as (canonical path, branch), sorted.
fn listed_worktrees(repo: &Path) -> Vec<(PathBuf, Option<String>)> {
    let mut all: Vec<_> =
        awtui::workspace::parse_worktree_list(&git(repo, &["worktree", "list", "--porcelain"]))
            .into_iter()
            .map(|(p, b)| (canon(&p), b))
            .collect();
    all.sort();
    all
}

#[test]
fn kill_9_mid_turn_leaves_git_consistent_and_the_turn_continues_in_the_same_worktree() {
    let mut w = World::new();
    let mark = w.tmp.path().join("started");
    init_repo(
        &w.dir,
        &[
            (
                "team.yaml",
                &format!(
                    "name: team\nworkspace: worktree\nagents:\n  a:\n    command: ./slow.sh\n    env:\n      MARK: \"{}\"\nkickoff: '@a please work'\n",
                    mark.display()
                ),
            ),
            ("slow.sh", SLOW_AGENT),
        ],
    );
    let worktree = w.dir.join(".workflow/.worktrees/i/a");
    // awtui's record: the agent's branch (with its recorded base) checked
    // out in its folder under the instance, and the user's checkout.
    let expected = |w: &World| {
        let mut e = vec![
            (canon(&w.dir), Some("main".to_string())),
            (canon(&worktree), Some("awtui/i/a".to_string())),
        ];
        e.sort();
        e
    };

    let first = w.start_background("team.yaml", "i");
    wait_for("the agent to start its work", || {
        mark.exists().then_some(())
    });
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(first as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    wait_for("the killed instance to die", || {
        (!cli_support::alive(first)).then_some(())
    });

    assert_eq!(listed_worktrees(&w.dir), expected(&w));
    assert!(
        Repo::find(&w.dir)
            .unwrap()
            .recorded_base("awtui/i/a")
            .unwrap()
            .is_some()
    );
    assert_eq!(index_locks(&w.dir.join(".git")), Vec::<PathBuf>::new());
    assert_eq!(git(&w.dir, &["status", "--porcelain"]), "");
    assert_eq!(
        git(&w.dir, &["rev-list", "--count", "main..awtui/i/a"]).trim(),
        "0",
        "the unfinished turn committed nothing"
    );

    // Reopened: the same worktree, the unfinished work still there, and
    // the turn completes and is committed under the agent's own count
    // (the interrupted start was its turn 1; this one is its turn 2, as
    // its pane and logs say).
    w.start_background("team.yaml", "i");
    let msg = wait_for("the resumed turn's commit", || {
        let log = git(&w.dir, &["log", "-1", "--format=%B", "awtui/i/a"]);
        log.starts_with("awtui: a turn ").then_some(log)
    });
    assert!(msg.starts_with("awtui: a turn 2\n"), "{msg}");
    assert!(msg.contains("Awtui-Messages: 1\n"), "{msg}");
    assert_eq!(
        git(&w.dir, &["show", "awtui/i/a:partial.txt"]),
        "started\ncontinued\n"
    );
    assert_eq!(listed_worktrees(&w.dir), expected(&w));
    assert_eq!(index_locks(&w.dir.join(".git")), Vec::<PathBuf>::new());

    // Taken while the instance runs; stop --clean then stops it and
    // removes the merged workspace.
    let m = w.run(&["merge", "a@i"]);
    assert_eq!(m.code, 0, "{}", m.stderr);
    assert_eq!(
        std::fs::read_to_string(w.dir.join("partial.txt")).unwrap(),
        "started\ncontinued\n"
    );
    let c = w.run(&["stop", "@i", "--clean"]);
    assert_eq!(c.code, 0, "{}\n{}", c.stdout, c.stderr);
    assert!(
        c.stdout.contains("stopped @i") && c.stdout.contains("removed awtui/i/a"),
        "{}",
        c.stdout
    );
    assert_eq!(
        listed_worktrees(&w.dir),
        vec![(canon(&w.dir), Some("main".into()))]
    );
    assert_eq!(git(&w.dir, &["status", "--porcelain"]), "");
}

/// The control room's diff view and its operations go through the engine:
/// `ReadDiff` answers the steps and the diff (total or one step), an
/// unknown step or agent is a clear error, and `Workspace { Merge }` merges
/// into the user's checkout and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_reads_an_agents_diff_and_merges_it_for_the_control_room() {
    use awtui::engine::{Command as Cmd, Reply};
    use awtui::workspace::view::{DiffTarget, WorkspaceOp};
    use fixture::EngineStart;

    let w = team_world();
    let (engine, _events) = EngineStart {
        instance: "i",
        ..EngineStart::default()
    }
    .start_file(&w.dir.join("team.yaml"))
    .await;
    let dir = w.dir.clone();
    tokio::task::spawn_blocking(move || {
        wait_for("a's first step", || {
            let n = git(&dir, &["rev-list", "--count", "main..awtui/i/a"]);
            (n.trim() == "1").then_some(())
        })
    })
    .await
    .unwrap();

    let Ok(Reply::Diff { view }) = engine
        .request(Cmd::ReadDiff {
            target: DiffTarget::Agent("a".into()),
            turn: None,
        })
        .await
    else {
        panic!("a's diff")
    };
    assert_eq!(view.branch, "awtui/i/a");
    assert_eq!(view.steps.iter().map(|s| s.turn).collect::<Vec<_>>(), [1]);
    assert!(view.patch.contains("+a was here\n"), "{}", view.patch);
    assert!(!view.patch.contains("b was here"), "{}", view.patch);

    let Ok(Reply::Diff { view }) = engine
        .request(Cmd::ReadDiff {
            target: DiffTarget::Agent("a".into()),
            turn: Some(1),
        })
        .await
    else {
        panic!("a's turn 1")
    };
    assert_eq!(view.turn, Some(1));
    assert!(view.patch.contains("+a was here\n"), "{}", view.patch);

    let missing = engine
        .request(Cmd::ReadDiff {
            target: DiffTarget::Agent("a".into()),
            turn: Some(7),
        })
        .await
        .unwrap_err()
        .to_string();
    assert!(missing.contains("has no turn 7"), "{missing}");
    let ghost = engine
        .request(Cmd::ReadDiff {
            target: DiffTarget::Agent("ghost".into()),
            turn: None,
        })
        .await
        .unwrap_err()
        .to_string();
    assert!(ghost.contains("there is no agent 'ghost'"), "{ghost}");

    let Ok(Reply::Said { text }) = engine
        .request(Cmd::Workspace {
            agent: "a".into(),
            op: WorkspaceOp::Merge,
        })
        .await
    else {
        panic!("the merge")
    };
    assert!(
        text.starts_with("merged awtui/i/a into main (fast-forward"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(w.dir.join("shared.txt")).unwrap(),
        "start\na was here\n"
    );
    engine.request(Cmd::Shutdown).await.unwrap();
}

/// The calls' reply codes, in order.
async fn codes(c: &support::Client, tool: &str, calls: Vec<Value>) -> Vec<String> {
    let mut out = Vec::new();
    for args in calls {
        out.push(coded(c, tool, args).await.0);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_git_directory_an_agent_wrote_as_documents_is_never_run() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    init_repo(&repo, &[("app.txt", "v1\n")]);
    let served = Served::start(&repo).await;
    let c = served.client("coder").await;
    let (wf, _) = plan(&c, &["google"]).await;
    let head = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();

    // A git directory without dot names, whose config runs a command on
    // checkout (and on any index read), with the user's objects borrowed.
    let marker = tmp.path().join("ran");
    let run = format!("touch {}", marker.display());
    let objects = canon(&repo.join(".git/objects"));
    let config = format!(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = {}\n\
         \tfsmonitor = {run}\n\thooksPath = {}\n[filter \"x\"]\n\tsmudge = {run}; cat\n",
        served.dir.join("evil").display(),
        served.dir.join("evil/hooks").display(),
    );
    for (file, content) in [
        ("evil/HEAD", "ref: refs/heads/main\n".to_string()),
        ("evil/config", config),
        (
            "evil/objects/info/alternates",
            format!("{}\n", objects.display()),
        ),
        ("evil/refs/heads/main", format!("{head}\n")),
        ("evil/info/attributes", "* filter=x\n".to_string()),
        ("evil/hooks/post-checkout", format!("#!/bin/sh\n{run}\n")),
    ] {
        call(
            &c,
            "document_write",
            json!({"file": file, "content": content}),
        )
        .await;
    }
    let evil = served.dir.join("evil");
    assert!(
        evil.join("config").is_file(),
        "the documents are where git looks"
    );

    let attack = |worktree: bool, path: &Path| {
        json!({"workflow_id": wf, "branch": "x", "base_branch": head,
               "create_worktree": worktree, "repo_path": path.display().to_string()})
    };
    for args in [
        attack(true, &evil),
        attack(false, &evil),
        attack(true, &evil.join("objects")),
        attack(true, &served.dir),
    ] {
        let (code, msg) = coded(&c, "workspace_create", args.clone()).await;
        assert_eq!(code, "REPO_NOT_ALLOWED", "{args}: {msg}");
        let named = args["repo_path"].as_str().unwrap();
        assert!(msg.contains(named), "{msg}");
    }
    assert!(!marker.exists(), "awtui's git ran the agent's command");
    assert!(!served.worktrees.join(".workspaces").exists());
    assert_eq!(git(&repo, &["branch", "--list", "x"]), "");
    assert!(served.board.read(|s| s.workspaces().count()) == 0);
    drop(c);
    served.handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_workflows_own_repository_is_used_and_it_is_the_default() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let other = tmp.path().join("other");
    for (dir, file) in [(&repo, "app.txt"), (&other, "secret.txt")] {
        std::fs::create_dir_all(dir).unwrap();
        init_repo(dir, &[(file, "v1\n")]);
    }
    let served = Served::start(&repo).await;
    let c = served.client("coder").await;
    let (wf, _) = plan(&c, &["google"]).await;
    let before = |d: &Path| {
        [
            git(d, &["for-each-ref"]),
            std::fs::read_to_string(d.join(".git/config")).unwrap(),
            git(d, &["worktree", "list", "--porcelain"]),
        ]
    };
    let untouched = before(&other);

    let create = |path: Option<&Path>, worktree: bool| {
        let mut a = json!({"workflow_id": wf, "branch": "feature/a", "create_worktree": worktree});
        if let Some(p) = path {
            a["repo_path"] = json!(p.display().to_string());
        }
        a
    };
    let refused = codes(
        &c,
        "workspace_create",
        vec![
            create(Some(&other), true),
            create(Some(&other), false),
            create(Some(&tmp.path().join("nowhere")), false),
        ],
    )
    .await;
    assert_eq!(refused, ["REPO_NOT_ALLOWED"; 3]);
    assert_eq!(
        before(&other),
        untouched,
        "nothing made in another repository"
    );

    // Named by any spelling of its folder, or not at all: the workflow's own.
    let ws = call(&c, "workspace_create", create(None, true)).await;
    assert_eq!(
        Path::new(ws["repo_path"].as_str().unwrap()),
        canon(&repo),
        "{ws}"
    );
    let path = PathBuf::from(ws["worktree_path"].as_str().unwrap());
    assert_eq!(
        git(&path, &["branch", "--show-current"]).trim(),
        "feature/a"
    );
    let mut dotted = create(Some(&repo.join("../repo/.")), true);
    dotted["branch"] = json!("feature/b");
    call(&c, "workspace_create", dotted).await;
    assert_eq!(before(&other), untouched);
    drop(c);
    served.handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_awtui_did_not_make_is_never_recorded_or_deleted() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    init_repo(&repo, &[("app.txt", "v1\n")]);
    git(&repo, &["branch", "userbranch"]);
    let served = Served::start(&repo).await;
    let c = served.client("coder").await;
    let (wf, _) = plan(&c, &["google"]).await;
    let create = |branch: &str, worktree: bool| json!({"workflow_id": wf, "branch": branch, "create_worktree": worktree});

    let refused = codes(
        &c,
        "workspace_create",
        vec![create("userbranch", false), create("userbranch", true)],
    )
    .await;
    assert_eq!(refused, ["BRANCH_EXISTS"; 2]);

    // A record-only workspace whose branch the user makes afterwards: its
    // cleanup leaves the branch alone.
    let ws = call(&c, "workspace_create", create("later", false)).await;
    assert_eq!(ws["branch_created"], false, "{ws}");
    assert_eq!(ws["worktree_path"], Value::Null, "{ws}");
    assert_eq!(
        git(&repo, &["branch", "--list", "later"]),
        "",
        "without create_worktree no branch is made"
    );
    git(&repo, &["branch", "later"]);
    call(
        &c,
        "workspace_update",
        json!({"id": ws["id"], "status": "abandoned", "cleanup_worktree": true}),
    )
    .await;
    for b in ["userbranch", "later"] {
        assert_eq!(git(&repo, &["branch", "--list", b]).trim(), b);
    }

    // The branch awtui made is awtui's to delete.
    let made = call(&c, "workspace_create", create("made", true)).await;
    assert_eq!(made["branch_created"], true, "{made}");
    call(
        &c,
        "workspace_update",
        json!({"id": made["id"], "status": "abandoned", "cleanup_worktree": true}),
    )
    .await;
    assert_eq!(git(&repo, &["branch", "--list", "made"]), "");
    drop(c);
    served.handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_its_creator_or_a_holder_of_its_task_changes_a_workspace() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    init_repo(&repo, &[("app.txt", "v1\n")]);
    let served = Served::start(&repo).await;
    let coder = served.client("coder").await;
    let reviewer = served.client("reviewer").await;
    let qa = served.client("qa").await;
    let (wf, tasks) = plan(&coder, &["google"]).await;
    let ws = call(
        &coder,
        "workspace_create",
        json!({"workflow_id": wf, "branch": "feature/a", "create_worktree": true,
               "task_ids": [tasks[0]]}),
    )
    .await;
    assert_eq!(ws["created_by"], "coder");
    let id = ws["id"].clone();
    let path = PathBuf::from(ws["worktree_path"].as_str().unwrap());

    let others = [
        json!({"id": id, "status": "merged"}),
        json!({"id": id, "status": "abandoned", "cleanup_worktree": true}),
    ];
    for c in [&reviewer, &qa] {
        for args in &others {
            let (code, msg) = coded(c, "workspace_update", args.clone()).await;
            assert_eq!(code, "NOT_OWNER", "{msg}");
            assert!(msg.contains("coder"), "{msg}");
        }
    }
    assert!(path.is_dir());
    git(&repo, &["show-ref", "--verify", "refs/heads/feature/a"]);
    let saved = served
        .board
        .read(|s| s.workspace(id.as_str().unwrap()).cloned());
    assert_eq!(saved.unwrap().status, "active");

    // Holding its task makes it the reviewer's to finish.
    let agent = call(
        &reviewer,
        "agent_register",
        json!({"name": "rev", "runtime": "custom"}),
    )
    .await["id"]
        .clone();
    call(
        &reviewer,
        "task_claim",
        json!({"task_id": tasks[0], "agent_id": agent}),
    )
    .await;
    let done = call(&reviewer, "workspace_update", others[1].clone()).await;
    assert_eq!(done["workspace"]["status"], "abandoned");
    assert!(!path.exists());
    for c in [coder, reviewer, qa] {
        drop(c);
    }
    served.handle.stop().await;
}

/// Issue 36: iterating on a worktree workflow, the workflow file itself
/// being changed and not committed does not block a start (awtui reads it,
/// the agents' worktrees do not need it); any other tracked change still
/// does, naming the file.
#[test]
fn an_uncommitted_workflow_file_does_not_block_a_worktree_start() {
    let w = team_world();
    let edited = format!("# tried a new kickoff\n{}", workflow(""));
    std::fs::write(w.dir.join("team.yaml"), edited).unwrap();
    let v = w.run(&["validate", "team.yaml", "--instance", "i"]);
    assert_eq!(v.code, 0, "{}", v.stderr);
    let r = w.run(&["run", "team.yaml", "--instance", "i"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(w.dir.join(".workflow/.worktrees/i/a/where-a.txt").exists());

    std::fs::write(w.dir.join("agent.sh"), format!("{AGENT}# edited\n")).unwrap();
    let v = w.run(&["validate", "team.yaml", "--instance", "j"]);
    assert_eq!(v.code, 2, "{}", v.stdout);
    assert!(
        v.stderr
            .contains("uncommitted changes to tracked files (agent.sh)"),
        "{}",
        v.stderr
    );
}

/// Issue 36: `awtui reset` starts an instance afresh: it asks (or needs
/// `--yes`), then removes the instance folder, its worktrees and branches;
/// the next run posts the kickoff again. The attacker: links an agent
/// planted in the instance folder and in its worktree, pointing outside,
/// are removed as links, and what they point to stays; an instance folder
/// that is itself a link is refused with nothing removed.
#[test]
fn reset_starts_an_instance_afresh_and_follows_no_link_out() {
    let w = team_world();
    let r = w.run(&["run", "team.yaml", "--instance", "i"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let outside = w.tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("keep.txt"), "mine\n").unwrap();
    let home = w.dir.join(".workflow/i");
    let tree = w.dir.join(".workflow/.worktrees/i/a");
    std::os::unix::fs::symlink(&outside, home.join("escape")).unwrap();
    std::os::unix::fs::symlink(&outside, tree.join("escape")).unwrap();

    // Without a terminal and without --yes: nothing goes.
    let refused = w.run(&["reset", "team.yaml", "--instance", "i"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(refused.stderr.contains("add --yes"), "{}", refused.stderr);
    assert!(home.join("channel.jsonl").exists() || home.exists());
    assert!(tree.exists());

    let r = w.run(&["reset", "team.yaml", "--instance", "i", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!home.exists(), "the instance folder stayed");
    assert!(
        !w.dir.join(".workflow/.worktrees/i").exists(),
        "worktrees stayed"
    );
    assert_eq!(git(&w.dir, &["branch", "--list", "awtui/i/*"]), "");
    assert_eq!(
        std::fs::read_to_string(outside.join("keep.txt")).unwrap(),
        "mine\n",
        "a planted link made reset delete outside"
    );

    // Afresh: the kickoff is posted again, as message 1.
    let again = w.run(&["run", "team.yaml", "--instance", "i"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(!again.stderr.contains("resuming"), "{}", again.stderr);
    assert_eq!(w.channel("i")[0]["from"], "system");

    // An instance folder replaced by a link to a folder of the person's.
    std::fs::create_dir_all(w.dir.join(".workflow")).unwrap();
    std::os::unix::fs::symlink(&outside, w.dir.join(".workflow/k")).unwrap();
    let r = w.run(&["reset", "team.yaml", "--instance", "k", "--yes"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("is a link"), "{}", r.stderr);
    assert!(outside.join("keep.txt").exists());
}
