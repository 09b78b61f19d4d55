//! awtui's integration tests, one test binary: each module below was once
//! its own binary linking the whole crate (issue 37). A test keeps its path
//! (`cli_instances::a_test`), so `cargo test --test it cli_instances::`
//! runs one file's tests.
//!
//! The tests share one process: none changes the working directory, the
//! environment or the panic hook (a test that must re-runs itself alone in
//! a child process, see [`test_path`]), and each finds its own processes by
//! a marker of its own, never by counting.

// Helpers, each declared once and reached as `crate::<name>`.
mod acp_live_support;
mod cli_support;
mod fixture;
#[path = "../fakes/llm_server.rs"]
mod llm_server;
mod patience;
mod real_support;
mod sshd_support;
mod support;
mod tmux_support;
mod web_support;

// The tests, one module per former test binary.
mod acp_fake;
mod acp_real;
mod agent_containment;
mod approvals_cli;
mod backend_api;
mod backend_process;
mod cli_aop;
mod cli_instances;
mod cli_pipes;
mod cli_recovery;
mod cli_run;
mod cli_validate;
mod context_props;
mod context_store;
mod crash;
mod crash_answers;
mod demo;
mod doc_paths;
mod engine_e2e;
mod engine_replies;
mod engine_watch;
mod group_commit;
mod hostile;
mod hostile_state;
mod mcp_bridge;
mod mcp_concurrency;
mod mcp_http;
mod mcp_unix;
mod private_files;
mod real_clis;
mod runner_fsm;
mod sandbox;
mod secret_redaction;
mod ssh_hosts;
mod sshd_fixture;
mod startup_once;
mod stream_live;
mod tasks_crash;
mod tasks_e2e;
mod tasks_mcp;
mod tool_deadline;
mod tool_fuzz;
mod tui;
mod tui_e2e;
mod tui_engine;
mod tui_home;
mod tui_live;
mod turn_commits;
mod web;
mod web_browser;
mod workflow;
mod workspaces;
mod worktree_isolation;

/// The name libtest gives the test `name` of the module `module` (pass
/// `module_path!()`): `crash::crash_child` for `it::crash`. A test that
/// runs a test of its own in a child process (`--exact`) names it so.
pub fn test_path(module: &str, name: &str) -> String {
    match module.split_once("::") {
        Some((_, inner)) => format!("{inner}::{name}"),
        None => name.to_string(),
    }
}
