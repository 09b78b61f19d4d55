//! One module per pane: its state, its drawing, and (through the keymap
//! sections) its commands.
pub mod add_agent;
pub mod agents;
pub mod approvals;
pub mod channel;
pub mod command_bar;
pub mod diff;
pub mod doc_events;
pub mod documents;
pub mod help;
pub mod inbox;
pub mod live;
pub mod overlay;
pub mod scroll;
pub mod tasks;
