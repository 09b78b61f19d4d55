//! awtui attacked the way a hostile agent, a sandboxed agent, a web page on
//! another loopback port, another local user or a crash would attack it
//! (issue 34). Every test here injects what the attacker controls and
//! asserts that awtui's own actions — git on a worktree, the sandbox's
//! mounts, the web session, rule matching, the approval card, SSH
//! connections, page sizes — take no configuration, path or authority from
//! it. `docs/threat-model.md` names each guard and the test here that
//! attacks it.
//!
//! One module for every surface, so the next surface gets its attacker
//! beside the others: add a module below.

mod card;
mod git;
mod journal;
mod pages;
mod records;
mod rules;
mod sandbox;
mod ssh;
mod terminal;
mod web;
