//! Running agents: backends that execute turns.
pub mod backend;
