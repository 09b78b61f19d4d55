//! awtui changes only what it owns: a context folder that already exists
//! keeps its mode (even a world-writable one), awtui's private files then
//! go to a private subfolder, and secrets end 0600 whatever was there.

use crate::cli_support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use cli_support::{World, wait_for};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

#[test]
fn a_world_writable_context_folder_keeps_its_mode_and_secrets_go_private() {
    let mut w = World::demo();
    let demo = std::fs::read_to_string(w.dir.join("demo.yaml")).unwrap();
    let flow = demo.replace(
        "    document: notes.md\n",
        "    dir: shared\n    document: notes.md\n",
    );
    assert_ne!(flow, demo);
    std::fs::write(w.dir.join("flow.yaml"), flow).unwrap();
    let shared = w.dir.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    // A token file left readable by everyone (an old version, a restore).
    std::fs::create_dir(shared.join("tokens")).unwrap();
    std::fs::write(shared.join("tokens/coder"), "old").unwrap();
    std::fs::set_permissions(
        shared.join("tokens/coder"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();

    w.start_background("flow.yaml", "p1");
    let list = wait_for("the instance to be listed", || {
        let l = w.list();
        (!l.is_empty()).then_some(l)
    });

    assert_eq!(mode(&shared), 0o777, "an existing folder is never chmod'ed");
    let private = shared.join(".awtui-private");
    assert_eq!(mode(&private), 0o700);
    // The admin token is beside the agents' tokens, out of the workspace.
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(shared.join("instance.json")).unwrap()).unwrap();
    let token = std::path::PathBuf::from(record["token_file"].as_str().unwrap());
    assert!(token.starts_with(w.state.join("control")), "{list:?}");
    assert_eq!(mode(&token), 0o600);
    assert_eq!(mode(token.parent().unwrap()), 0o700);
    assert!(!shared.join("control.token").exists());
    assert!(!private.join("control.token").exists());
    // Agent tokens live outside the workspace, in the per-user state dir
    // (0700 folders, 0600 files); the stale 0644 file an older version
    // left in the workspace is gone.
    assert!(!shared.join("tokens/coder").exists());
    let root = w.state.join("tokens");
    assert_eq!(mode(&root), 0o700);
    let instance = std::fs::read_dir(&root)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert_eq!(mode(&instance), 0o700);
    let coder = instance.join("coder");
    assert_eq!(mode(&coder), 0o600);
    assert_ne!(std::fs::read_to_string(&coder).unwrap(), "old");
    for agent in ["planner", "reviewer", "user"] {
        assert_eq!(mode(&instance.join(agent)), 0o600, "{agent}");
    }

    // The commands find the control endpoint through the record.
    let r = w.run(&["stop", "@p1"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(mode(&shared), 0o777);
}

#[test]
fn a_new_instance_folder_is_made_private() {
    let mut w = World::demo();
    w.start_background("demo.yaml", "p2");
    let home = w.dir.join(".workflow/p2");
    wait_for("the instance record", || {
        home.join("instance.json").exists().then_some(())
    });
    assert_eq!(mode(&home), 0o700);
    assert!(!home.join("control.token").exists());
    assert_eq!(mode(&w.state.join("control")), 0o700);
    assert!(!home.join(".awtui-private").exists());
    // Agent tokens are not in the instance folder (the workspace).
    assert!(!home.join("tokens").exists());
    assert_eq!(mode(&w.state.join("tokens")), 0o700);
    let r = w.run(&["stop", "@p2"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}
