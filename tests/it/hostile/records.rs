//! The instance's record in its folder (`instance.json`) against an agent
//! that rewrites it. The folder is in the shared workspace; the record
//! names the control socket a client hands the admin token to. Before the
//! fix, the person opening the control room (`awtui wf.yaml`) on a running
//! instance connected to whatever socket the folder's record named and
//! sent it the admin token: with it, an agent approves its peer's
//! requests in the person's name.

use std::io::{BufRead, BufReader};
use std::os::unix::net::UnixListener;

use crate::cli_support::{PATIENCE, World, poll_within};
use crate::tmux_support::Tmux;

const WORKFLOW: &str = "agents:\n  w1:\n    command: ./w1.sh\n";

#[test]
fn a_rewritten_instance_record_never_gets_the_admin_token() {
    let mut w = World::new();
    w.script("w1.sh", "#!/bin/sh\ncat >/dev/null\necho ok\n");
    std::fs::write(w.dir.join("wf.yaml"), WORKFLOW).unwrap();
    w.start_background("wf.yaml", "default");

    // The agent's part: a socket of its own, and the folder's record
    // pointing the control endpoint at it (pid and all else unchanged).
    let evil = w.dir.join("evil.sock");
    let listener = UnixListener::bind(&evil).unwrap();
    listener.set_nonblocking(true).unwrap();
    let record = w.dir.join(".workflow/default/instance.json");
    let mut info: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    info["control"] = serde_json::json!(evil);
    std::fs::write(&record, serde_json::to_vec_pretty(&info).unwrap()).unwrap();

    // The person opens the control room on the running instance, with
    // the environment every command of the test gets.
    let open = w.cmd(&["wf.yaml"]);
    let env: Vec<String> = open
        .get_envs()
        .filter_map(|(k, v)| Some(format!("'{}={}'", k.to_str()?, v?.to_str()?)))
        .collect();
    let tmux = Tmux::start(
        "records",
        &format!(
            "cd '{}' && env {} '{}' wf.yaml",
            w.dir.display(),
            env.join(" "),
            env!("CARGO_BIN_EXE_awtui")
        ),
    );

    // Either the room opens on the real instance, or the attacker's
    // socket is called: whichever comes first says which record was used.
    let outcome = poll_within(PATIENCE, || {
        if let Ok((stream, _)) = listener.accept() {
            stream.set_nonblocking(false).unwrap();
            let mut hello = String::new();
            let _ = BufReader::new(stream).read_line(&mut hello);
            return Some(Err(hello));
        }
        let screen = tmux.capture();
        (screen.contains("w1") && screen.contains("default")).then_some(Ok(screen))
    });
    match outcome {
        Some(Ok(_)) => {}
        Some(Err(hello)) => {
            panic!("the control room connected to the socket the agent named and sent: {hello}")
        }
        None => panic!("the control room never opened:\n{}", tmux.capture()),
    }
    assert!(
        listener.accept().is_err(),
        "the attacker's socket was called"
    );
}
