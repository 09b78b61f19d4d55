//! The yes/no questions the control room asks before something it cannot
//! undo, and what a yes does. Panes ask them (through
//! [`Outcome::ask`](crate::component::Outcome::ask)) and the app carries
//! them out, so they live below both.

/// A question waiting for yes or no.
#[derive(Clone, Debug, PartialEq)]
pub struct Confirm {
    /// The question.
    pub question: String,
    /// What yes does.
    pub on_yes: ConfirmAction,
}

/// What a confirmed question does.
#[derive(Clone, Debug, PartialEq)]
pub enum ConfirmAction {
    /// Quit although agents are working.
    Quit,
    /// Stop this agent (its turn ends; its unread messages stay).
    StopAgent(String),
    /// Delete this document.
    Delete(String),
    /// Leave the editor, dropping unsaved changes.
    DiscardEdit,
    /// Save the edited document although what it cannot show is dropped.
    SaveAnyway,
    /// Merge, revert or discard an agent's workspace.
    Workspace {
        /// Whose workspace.
        agent: String,
        /// What to do.
        op: crate::vocab::WorkspaceOp,
    },
}
