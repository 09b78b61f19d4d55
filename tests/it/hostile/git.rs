//! The attacker of awtui's own git (issue 34, found 1; must hold 2): an
//! agent in a worktree (sandboxed, or only allowed to write files) plants
//! a git dir of its own inside its worktree — `HEAD` on its own copy of
//! its branch, `objects/info/alternates` pointing at the real repository,
//! a config with `[filter "x"] clean = sh payload.sh`, `info/attributes`
//! with `* filter=x` — and rewrites its worktree's `.git` link to it. Or it
//! writes a `.gitattributes` selecting a filter or textconv the person
//! defined in their own global config. awtui's git (the per-turn commit,
//! diff, revert, merge, cleanup) must run none of it, commit nothing onto
//! the planted branch, and tell the person which worktree is no longer
//! its own.
//!
//! The payloads write a marker file outside every worktree: its absence is
//! the proof that nothing ran. These tests need `git`; without it they
//! fail (never skip).

use std::path::{Path, PathBuf};

use crate::cli_support::{World, git, init_repo};

/// What the attacker runs, as a file-writing agent would act (no git
/// needed): `plant.sh <worktree> <marker>`. It reads the worktree's link,
/// builds `.evil/` beside it borrowing the real objects through
/// `alternates`, puts its filter in `.evil/config` selected by
/// `.evil/info/attributes`, and points `.git` at `.evil`. The payload
/// writes the marker (outside the worktree) and passes its input through.
const PLANT: &str = r#"#!/bin/sh
set -e
wt="$1"; marker="$2"
cd "$wt"
admin=$(sed -n 's/^gitdir: //p' .git)
common=$(cd "$admin" && cd "$(cat commondir)" && pwd)
head=$(cat "$admin/HEAD" | sed -n 's/^ref: //p')
tip=$(git --git-dir="$common" rev-parse "$head")
ev="$wt/.evil"
mkdir -p "$ev/objects/info" "$ev/info" "$ev/$(dirname "$head")"
echo "$common/objects" > "$ev/objects/info/alternates"
echo "ref: $head" > "$ev/HEAD"
echo "$tip" > "$ev/$head"
printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n[filter "x"]\n\tclean = sh payload.sh\n\tsmudge = sh payload.sh\n' > "$ev/config"
echo '* filter=x' > "$ev/info/attributes"
printf '#!/bin/sh\necho pwned >> "%s"\ncat\n' "$marker" > payload.sh
printf 'gitdir: %s\n' "$ev" > .git
"#;

/// An agent whose turn plants the git dir (with [`PLANT`]) and leaves
/// work to commit.
const PLANTING_AGENT: &str = r#"#!/bin/sh
cat >/dev/null
echo "the agent's work" > work.txt
sh "$PLANT" "$(pwd)" "$MARKER"
echo done
"#;

/// [`PLANTING_AGENT`] making `.git` a symbolic link to its git dir
/// instead of a link file.
const SYMLINKING_AGENT: &str = r#"#!/bin/sh
cat >/dev/null
echo "the agent's work" > work.txt
sh "$PLANT" "$(pwd)" "$MARKER"
rm .git
ln -s "$(pwd)/.evil" .git
echo done
"#;

/// An agent that writes work and a `.gitattributes` selecting the driver
/// `x` for every file (`filter`, `diff`, `merge`).
const ATTRIBUTES_AGENT: &str = r#"#!/bin/sh
cat >/dev/null
echo "the agent's data" > data.txt
echo '* filter=x diff=x merge=x' > .gitattributes
echo done
"#;

/// An agent that only writes work.
const PLAIN_AGENT: &str = r#"#!/bin/sh
cat >/dev/null
echo "turn work" >> work.txt
echo done
"#;

/// A repository holding a workflow whose one agent `a` works in a
/// worktree and runs `script`, with `PLANT` and `MARKER` in its
/// environment; `MARKER` is outside every worktree.
fn world(script: &str) -> (World, PathBuf) {
    let w = World::new();
    let marker = w.tmp.path().join("payload-ran");
    let plant = w.tmp.path().join("plant.sh");
    std::fs::write(&plant, PLANT).unwrap();
    let workflow = format!(
        "name: team
agents:
  a:
    command: ./agent.sh
    workspace: worktree
    env:
      PLANT: \"{plant}\"
      MARKER: \"{marker}\"
kickoff: '@a: do your work'
",
        plant = plant.display(),
        marker = marker.display()
    );
    init_repo(
        &w.dir,
        &[
            ("team.yaml", &workflow),
            ("agent.sh", script),
            ("app.txt", "v1\n"),
        ],
    );
    (w, marker)
}

/// `awtui run team.yaml --instance i`, which must end well (a refused
/// commit is a notice, not a failure).
fn run_once(w: &World) {
    let r = w.run(&["run", "team.yaml", "--instance", "i"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
}

/// Where awtui put `a`'s worktree.
fn worktree(w: &World) -> PathBuf {
    w.dir.join(".workflow/.worktrees/i/a")
}

/// The system's messages in the channel of `@i`.
fn notices(w: &World) -> Vec<String> {
    w.channel("i")
        .iter()
        .filter(|m| m["from"] == "system")
        .filter_map(|m| m["message"].as_str().map(str::to_string))
        .collect()
}

/// The commit a ref names in the real repository.
fn rev(dir: &Path, name: &str) -> String {
    git(dir, &["rev-parse", name]).trim().to_string()
}

fn assert_nothing_ran(marker: &Path) {
    assert!(
        !marker.exists(),
        "the agent's payload ran as the person: {}",
        std::fs::read_to_string(marker).unwrap_or_default()
    );
}

/// Found 1: the per-turn commit followed the agent's `.git` link into its
/// planted git dir and `git add --all` ran its filter as the person.
#[test]
fn a_planted_git_dir_behind_a_rewritten_link_runs_nothing_and_gets_no_commit() {
    let (w, marker) = world(PLANTING_AGENT);
    let base = rev(&w.dir, "HEAD");
    run_once(&w);
    let root = worktree(&w);
    let planted = std::fs::read_to_string(root.join(".git")).unwrap();
    assert!(
        planted.contains(".evil"),
        "the attack took place: {planted}"
    );

    assert_nothing_ran(&marker);
    assert_eq!(
        rev(&w.dir, "awtui/i/a"),
        base,
        "the turn was not committed on the agent's branch"
    );
    let foreign = std::fs::read_to_string(root.join(".evil/refs/heads/awtui/i/a")).unwrap();
    assert_eq!(
        foreign.trim(),
        base,
        "nothing was committed onto the planted branch"
    );
    assert!(
        !root.join(".evil/index").exists(),
        "awtui's git never used the planted git dir"
    );
    let said = notices(&w);
    let told = said.iter().find(|m| {
        m.contains("a's turn was not committed")
            && m.contains(".workflow/.worktrees/i/a")
            && m.contains(".git link")
    });
    assert!(told.is_some(), "the person is told: {said:#?}");

    // Reopened: the planted worktree is moved aside for the person and the
    // branch checked out again; still nothing ran.
    run_once(&w);
    assert_nothing_ran(&marker);
    let said = notices(&w);
    assert!(
        said.iter().any(
            |m| m.contains("a's worktree") && m.contains("was broken (its .git link points to")
        ),
        "{said:#?}"
    );
    let aside = std::fs::read_dir(root.parent().unwrap())
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("a.broken-"));
    assert!(aside, "the planted worktree is kept aside");
    assert_eq!(rev(&w.dir, "awtui/i/a"), base);
}

/// `.git` made a symbolic link to the planted git dir: the same.
#[test]
fn a_git_link_made_a_symbolic_link_runs_nothing_and_gets_no_commit() {
    let (w, marker) = world(SYMLINKING_AGENT);
    let base = rev(&w.dir, "HEAD");
    run_once(&w);
    assert_nothing_ran(&marker);
    assert_eq!(rev(&w.dir, "awtui/i/a"), base);
    let foreign = std::fs::read_to_string(worktree(&w).join(".evil/refs/heads/awtui/i/a")).unwrap();
    assert_eq!(foreign.trim(), base);
    let said = notices(&w);
    let told = said.iter().find(|m| {
        m.contains("a's turn was not committed")
            && m.contains(".workflow/.worktrees/i/a")
            && m.contains("symbolic link")
    });
    assert!(told.is_some(), "the person is told: {said:#?}");
}

/// The same planted link after a committed turn: `awtui diff`, `revert`,
/// `merge` and `stop --clean` run no git through it (revert used to
/// fast-forward the planted branch with `git merge` in the worktree,
/// checking files out through the planted smudge filter) and name the
/// worktree.
#[test]
fn diff_revert_merge_and_clean_refuse_a_worktree_whose_link_was_moved() {
    let (w, marker) = world(PLAIN_AGENT);
    run_once(&w);
    let root = worktree(&w);
    let tip = rev(&w.dir, "awtui/i/a");
    assert_ne!(tip, rev(&w.dir, "main"), "turn 1 was committed");
    // The attacker, between turns.
    let plant = w.tmp.path().join("plant.sh");
    let out = std::process::Command::new("sh")
        .arg(&plant)
        .arg(&root)
        .arg(&marker)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // Something for the filters to see.
    std::fs::write(root.join("work.txt"), "changed after the turn\n").unwrap();
    let shown = root.display().to_string();

    let d = w.run(&["diff", "a@i"]);
    assert_nothing_ran(&marker);
    assert_ne!(d.code, 0, "{}", d.stdout);
    assert!(
        d.stderr.contains(&shown) && d.stderr.contains(".git link"),
        "{}",
        d.stderr
    );
    // The person runs it from inside the agent's worktree: the repository
    // is still the workflow's, not the one the planted link names.
    let inside = w.cmd(&["diff", "a@i"]).current_dir(&root).output().unwrap();
    let said = String::from_utf8_lossy(&inside.stderr);
    assert_nothing_ran(&marker);
    assert!(!inside.status.success(), "{inside:?}");
    assert!(
        said.contains(&shown) && said.contains(".git link"),
        "{said}"
    );

    let r = w.run(&["revert", "a@i", "--turn", "1"]);
    assert_nothing_ran(&marker);
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stderr.contains(&shown) && r.stderr.contains(".git link"),
        "{}",
        r.stderr
    );
    assert_eq!(rev(&w.dir, "awtui/i/a"), tip, "nothing was reverted");
    let foreign = std::fs::read_to_string(root.join(".evil/refs/heads/awtui/i/a")).unwrap();
    assert_eq!(foreign.trim(), tip, "the planted branch did not move");

    let m = w.run(&["merge", "a@i"]);
    assert_nothing_ran(&marker);
    assert_eq!(m.code, 0, "{}", m.stderr);
    assert!(
        m.stdout.contains("merged awtui/i/a into main"),
        "{}",
        m.stdout
    );
    assert!(
        m.stderr.contains(&shown) && m.stderr.contains(".git link"),
        "the merge says the worktree is not as awtui made it: {}",
        m.stderr
    );
    assert_eq!(rev(&w.dir, "main"), tip);

    let c = w.run(&["stop", "@i", "--clean"]);
    assert_nothing_ran(&marker);
    assert_ne!(c.code, 0, "{}", c.stdout);
    assert!(
        c.stderr.contains("kept awtui/i/a") && c.stderr.contains(".git link"),
        "{}",
        c.stderr
    );
    assert!(root.join(".evil").exists(), "kept for the person to see");
    assert_nothing_ran(&marker);
}

/// A driver the person defined for their own use (in their global
/// config): the agent's `.gitattributes` selects it for every file. The
/// per-turn commit, `awtui diff` and `awtui merge` must not run it; the
/// turn is still committed, byte for byte.
#[test]
fn in_tree_attributes_select_no_driver_from_the_persons_config() {
    let (mut w, marker) = world(ATTRIBUTES_AGENT);
    let driver = w.tmp.path().join("driver.sh");
    std::fs::write(
        &driver,
        format!(
            "#!/bin/sh\necho \"$0 $*\" >> '{}'\ncat \"${{1:--}}\"\n",
            marker.display()
        ),
    )
    .unwrap();
    let d = driver.display();
    w.global_git_config(&format!(
        "[filter \"x\"]\n\tclean = sh {d}\n\tsmudge = sh {d}\n\
         [diff \"x\"]\n\ttextconv = sh {d}\n\
         [merge \"x\"]\n\tdriver = sh {d} %O %A %B\n"
    ));
    run_once(&w);
    assert_nothing_ran(&marker);
    assert_eq!(
        git(&w.dir, &["show", "awtui/i/a:data.txt"]),
        "the agent's data\n",
        "the turn is committed as the agent left it"
    );

    let d = w.run(&["diff", "a@i"]);
    assert_eq!(d.code, 0, "{}", d.stderr);
    assert!(d.stdout.contains("+the agent's data"), "{}", d.stdout);
    assert_nothing_ran(&marker);

    // Both sides change app.txt: merging needs a merge commit (and would
    // ask a merge driver).
    std::fs::write(w.dir.join("app.txt"), "v1\nthe person's line\n").unwrap();
    git(&w.dir, &["commit", "-qam", "person"]);
    std::fs::write(worktree(&w).join("app.txt"), "the agent's line\nv1\n").unwrap();
    git(&worktree(&w), &["commit", "-qam", "agent"]);
    let m = w.run(&["merge", "a@i"]);
    assert_eq!(m.code, 0, "{}", m.stderr);
    assert!(m.stdout.contains("merge commit"), "{}", m.stdout);
    assert_nothing_ran(&marker);
}

/// What a host agent (`host:`, on another machine) leaves comes back into
/// its local worktree with `git read-tree -u`: the `.gitattributes` it
/// committed there must select no driver of the person's config on this
/// machine either.
#[test]
fn a_host_agents_attributes_select_no_driver_where_its_turn_comes_back() {
    let tmp = tempfile::tempdir().unwrap();
    let sshd = crate::sshd_support::Sshd::start(tmp.path());
    let mut w = World::new();
    let marker = w.tmp.path().join("payload-ran");
    let remote = w.tmp.path().join("remote/app");
    let workflow = format!(
        "name: far\nhosts:\n  box:\n    ssh: {alias}\n    dir: {remote}\nagents:\n  a:\n    \
         command: ./agent.sh\n    host: box\n    workspace: worktree\nkickoff: '@a go'\n",
        alias = sshd.host_alias(),
        remote = remote.display(),
    );
    init_repo(
        &w.dir,
        &[
            ("far.yaml", &workflow),
            ("agent.sh", ATTRIBUTES_AGENT),
            ("app.txt", "v1\n"),
        ],
    );
    let driver = w.tmp.path().join("driver.sh");
    std::fs::write(
        &driver,
        format!("#!/bin/sh\necho \"$0 $*\" >> '{}'\ncat\n", marker.display()),
    )
    .unwrap();
    let d = driver.display();
    w.env = sshd.ssh_command_env();
    w.global_git_config(&format!(
        "[filter \"x\"]\n\tclean = sh {d}\n\tsmudge = sh {d}\n"
    ));
    let r = w.run(&["run", "far.yaml", "--instance", "i"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        git(&w.dir, &["show", "awtui/i/a:data.txt"]),
        "the agent's data\n",
        "the host's turn came back and was committed"
    );
    assert_nothing_ran(&marker);
}

/// The repository's own `.git` lies in the shared workspace: an agent
/// there allowed to write files (a sandboxed one no longer can) writes
/// drivers into `.git/config`, selects them in `.git/info/attributes`, and
/// asks for signed commits with a program of its own. awtui's git for a
/// worktree agent (its checkout, per-turn commit, diff and merge) must run
/// none of them.
#[test]
fn drivers_and_signing_planted_in_the_repositorys_own_config_run_nothing() {
    let (w, marker) = world(PLAIN_AGENT);
    let payload = w.tmp.path().join("payload.sh");
    std::fs::write(
        &payload,
        format!(
            "#!/bin/sh\necho \"$0 $*\" >> '{}'\ncat \"${{1:--}}\"\n",
            marker.display()
        ),
    )
    .unwrap();
    let p = payload.display();
    let config = w.dir.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "[filter \"x\"]\n\tclean = sh {p}\n\tsmudge = sh {p}\n\
         [diff \"x\"]\n\ttextconv = sh {p}\n\
         [merge \"x\"]\n\tdriver = sh {p} %O %A %B\n\
         [commit]\n\tgpgSign = true\n\
         [gpg]\n\tprogram = {p}\n"
    ));
    std::fs::write(&config, text).unwrap();
    std::fs::create_dir_all(w.dir.join(".git/info")).unwrap();
    std::fs::write(
        w.dir.join(".git/info/attributes"),
        "* filter=x diff=x merge=x\n",
    )
    .unwrap();

    run_once(&w);
    assert_nothing_ran(&marker);
    assert!(
        git(
            &w.dir,
            &[
                "-c",
                "filter.x.clean=cat",
                "-c",
                "filter.x.smudge=cat",
                "show",
                "awtui/i/a:work.txt"
            ]
        )
        .contains("turn work"),
        "the turn is committed"
    );
    let d = w.run(&["diff", "a@i"]);
    assert_eq!(d.code, 0, "{}", d.stderr);
    assert_nothing_ran(&marker);
}
