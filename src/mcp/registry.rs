//! Every MCP tool, listed once, in the order `tools/list` shows them. The
//! names, the listed specs and the dispatch of a call derive from
//! [`TOOLS`]; adding a tool is writing its type ([`super::tool::Tool`])
//! and one line here.

use serde_json::{Map, Value};

use super::tool::{Registered, Run, Scope};
use super::tools::{ToolError, ToolSpec};
use super::workspace_tools as workspace;
use super::{approval_tools as approval, task_tools as task, tools as context};

/// Every tool. The waiting ones (offered only to agents whose CLI asks
/// through awtui) come last.
pub const TOOLS: &[Registered] = &[
    Registered::now::<context::ChannelSend>(),
    Registered::now::<context::ChannelRead>(),
    Registered::now::<context::ChannelPeek>(),
    Registered::now::<context::InboxCheck>(),
    Registered::now::<context::ChannelMentions>(),
    Registered::now::<context::InboxAck>(),
    Registered::now::<context::InboxPeek>(),
    Registered::now::<context::DocumentRead>(),
    Registered::now::<context::DocumentWrite>(),
    Registered::now::<context::DocumentAppend>(),
    Registered::now::<context::DocumentList>(),
    Registered::now::<context::DocumentCreate>(),
    Registered::now::<context::DocumentDelete>(),
    Registered::now::<context::WorkflowAgents>(),
    Registered::now::<task::AgentRegister>(),
    Registered::now::<task::AgentHeartbeat>(),
    Registered::now::<task::AgentUnregister>(),
    Registered::now::<task::WorkflowCreate>(),
    Registered::now::<task::WorkflowSetPlan>(),
    Registered::now::<task::WorkflowList>(),
    Registered::now::<task::WorkflowProgress>(),
    Registered::now::<task::WorkflowNextTasks>(),
    Registered::now::<task::TaskClaim>(),
    Registered::now::<task::TaskLoadContext>(),
    Registered::now::<task::TaskSetPlan>(),
    Registered::now::<task::TaskUpdateStatus>(),
    Registered::now::<task::CheckpointAdd>(),
    Registered::now::<workspace::WorkspaceCreate>(),
    Registered::now::<workspace::WorkspaceUpdate>(),
    Registered::waiting::<approval::PermissionRequest>(),
];

/// How many tools a task board alone runs (the caw tools).
pub const fn board_tool_count() -> usize {
    let (mut i, mut n) = (0, 0);
    while i < TOOLS.len() {
        if TOOLS[i].on_board {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The names of the tools a task board alone runs, in list order.
pub const fn board_tool_names<const N: usize>() -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut n) = (0, 0);
    while i < TOOLS.len() {
        if TOOLS[i].on_board {
            out[n] = TOOLS[i].name;
            n += 1;
        }
        i += 1;
    }
    out
}

/// The specs of the tools offered to every agent (all but the waiting
/// ones), in the order `tools/list` shows them.
pub fn specs() -> Vec<ToolSpec> {
    TOOLS
        .iter()
        .filter(|t| matches!(t.run, Run::Now(_)))
        .map(Registered::spec)
        .collect()
}

/// Every tool's spec, the waiting ones last (what `awtui ctx tools` shows).
pub fn all_specs() -> Vec<ToolSpec> {
    TOOLS.iter().map(Registered::spec).collect()
}

/// The specs of the waiting tools (offered to agents whose CLI asks).
pub fn waiting_specs() -> Vec<ToolSpec> {
    TOOLS
        .iter()
        .filter(|t| matches!(t.run, Run::Waiting(_)))
        .map(Registered::spec)
        .collect()
}

/// The waiting tool named `name`, if it is one.
pub fn waiting(name: &str) -> Option<super::tool::RunWaiting> {
    TOOLS.iter().find_map(|t| match t.run {
        Run::Waiting(run) if t.name == name => Some(run),
        _ => None,
    })
}

/// Runs tool `name` for `caller` in `scope`; a name no tool of the scope
/// has is a malformed request.
pub fn call(
    scope: Scope<'_>,
    caller: &str,
    name: &str,
    args: Option<Map<String, Value>>,
) -> Result<Value, ToolError> {
    let found = TOOLS.iter().find_map(|t| match t.run {
        Run::Now(run) if t.name == name => Some(run),
        _ => None,
    });
    if let Some(result) = found.and_then(|run| run(scope, caller, args)) {
        return result;
    }
    Err(ToolError::Invalid(match scope {
        Scope::Box(_) => format!(
            "unknown tool '{name}'; the tools are: {}",
            TOOLS
                .iter()
                .filter(|t| matches!(t.run, Run::Now(_)))
                .map(|t| t.name)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Scope::Board(_) => format!("unknown task tool '{name}'"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_match_their_specs() {
        let mut names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
        for (tool, spec) in TOOLS.iter().zip(all_specs()) {
            assert_eq!(tool.name, spec.name);
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), TOOLS.len());
        assert_eq!(
            super::super::task_tools::NAMES.len(),
            TOOLS.iter().filter(|t| t.on_board).count()
        );
    }
}
