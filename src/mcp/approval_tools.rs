//! `permission_request`: the tool Claude Code calls with
//! `--permission-prompt-tool mcp__awtui__permission_request` whenever it
//! would ask before running a tool. Its input is
//! `{"tool_name", "input", "tool_use_id"}`; its answer, one text block of
//! JSON, is `{"behavior":"allow","updatedInput":{…}}` or
//! `{"behavior":"deny","message":"…"}` (both read from the real CLI,
//! 2.1.330). The call waits for the decision (a rule at once, or a person,
//! or the approval timeout) without polling.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use futures_util::future::BoxFuture;

use super::tool::WaitingTool;
use super::tools::ToolError;
use crate::context::SharedContext;

/// The tool's name on awtui's server (what the CLI is started with).
pub const NAME: &str = PermissionRequest::NAME;

/// `permission_request`: asks the person whether a tool call may run.
#[derive(Debug)]
pub(super) struct PermissionRequest;

/// What the CLI sends (fields it may add later are ignored).
#[derive(Deserialize, JsonSchema)]
pub(super) struct Args {
    /// The tool about to run.
    tool_name: String,
    /// Its input.
    input: Map<String, Value>,
    /// The call's id.
    #[serde(default)]
    tool_use_id: Option<String>,
}

impl WaitingTool for PermissionRequest {
    const NAME: &'static str = "permission_request";
    const DESCRIPTION: &'static str = "Used by your CLI (not by you) to ask the person at the \
        control room whether a tool call may run. Do not call it yourself.";
    type Args = Args;

    /// Only agents whose CLI asks through awtui.
    fn admit(context: &SharedContext, caller: &str) -> Result<(), ToolError> {
        if context.approvals().asks(caller) {
            return Ok(());
        }
        Err(ToolError::Failed(format!(
            "{NAME} is for the CLIs of agents with permissions: ask, and @{caller} has another setting"
        )))
    }

    /// Asks on behalf of `caller` and answers in Claude Code's format once
    /// decided. `gone` completes when the CLI stops waiting (it cancelled
    /// the call, or its session ended): the request then expires at once.
    async fn call<'a>(
        context: &'a SharedContext,
        caller: &'a str,
        args: Args,
        gone: BoxFuture<'a, ()>,
    ) -> Result<Value, ToolError> {
        let approvals = context.approvals().clone();
        let input = Value::Object(args.input);
        let last_message = context.read(|store| {
            store
                .read(None, Some(200))
                .unwrap_or_default()
                .into_iter()
                .rev()
                .find(|e| e.from == caller)
                .map(|e| e.message)
        });
        let decision = approvals
            .ask(
                caller,
                &args.tool_name,
                input.clone(),
                args.tool_use_id,
                last_message,
                gone,
            )
            .await;
        Ok(decision.answer(&input))
    }
}
