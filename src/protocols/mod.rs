//! Pure parsers for what agents write: AOP blocks, agent operations in turn
//! frontmatter, and Agent Mail status messages. No I/O; they never panic.
pub mod agent_mail;
pub mod agent_ops;
pub mod aop;
