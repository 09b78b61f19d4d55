//! Workflow files: the YAML a user writes, loaded, validated and interpolated.
pub mod diagnostic;
pub mod interpolate;
pub mod load;
pub mod schema;
pub mod setup;
pub mod summary;
pub mod yaml;

pub use diagnostic::{Diagnostic, Diagnostics, Severity};
pub use load::{
    AddAgentError, Checked, LoadError, Loaded, added_agent, check, is_env_name, load, load_str,
};
pub use schema::*;
