//! Any program (`command:`): the turn prompt on stdin, its stdout is the
//! answer, its exit status decides success.

use super::invocation::Invocation;
use super::{Backend, TurnRequest};
use crate::workflow::BackendKind;

/// The `command` backend.
pub struct Command;

impl Backend for Command {
    fn kind(&self) -> BackendKind {
        BackendKind::Command
    }

    fn program(&self, command: Option<&[String]>) -> Option<String> {
        command?.first().cloned()
    }

    fn install_hint(&self) -> &'static str {
        "check the agent's 'command:' (a relative path is taken from the workflow's folder)"
    }

    fn tools_unsupported(&self) -> Option<&'static str> {
        Some("the program is the agent: awtui neither knows nor limits its tools")
    }

    fn invocation(&self, req: &TurnRequest) -> Option<Invocation> {
        let mut inv = Invocation::base(req, self.program(req.command.as_deref())?);
        inv.args
            .extend(req.command.iter().flatten().skip(1).cloned());
        if !req.system_prompt.is_empty() {
            inv.env
                .push(("AWTUI_SYSTEM_PROMPT".into(), req.system_prompt.clone()));
        }
        inv.give_prompt(req, req.prompt.clone());
        Some(inv)
    }
}
