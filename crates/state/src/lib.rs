//! awtui's durable state, below the engine and every server: the channel
//! and its cursors, the documents, the task board and the approvals
//! (`context::SharedContext` owns them and publishes their one stream of
//! facts), the journals they are written in, the file-system helpers that
//! refuse links and special files, where an instance keeps its files
//! (`layout`), and the secrets awtui makes and redacts.
//!
//! It depends only on the vocabulary: an import of the engine, the MCP
//! server, the workflow or a front end from here does not compile.

pub use awtui_vocab as vocab;
pub use awtui_vocab::{duration, protocols, sanitize};

pub mod approvals;
pub mod batch_writer;
pub mod context;
pub mod fsutil;
#[warn(missing_docs)]
pub mod journal;
pub mod layout;
pub mod secrets;
pub mod tasks;
