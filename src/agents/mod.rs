//! Running agents: the [`runner`] state machine decides who works when; the
//! [`prompt`] builder and the [`backend`]s execute what it decides.
pub mod backend;
pub mod prompt;
pub mod runner;
pub mod runtime;
