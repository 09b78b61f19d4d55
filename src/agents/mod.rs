//! Running agents. For now this holds the [`runner`] state machine, which
//! decides who works when; the prompt builder, the backend trait and the
//! backends will sit next to it and execute what it decides.

pub mod runner;
