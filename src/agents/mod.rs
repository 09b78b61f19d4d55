//! Running agents: the turn prompt and the backends that execute turns.
pub mod backend;
pub mod prompt;
