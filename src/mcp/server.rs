//! The rmcp handler: MCP requests in, [`ToolBox`] and resource calls out.
//! The caller's identity comes from the [`Caller`] the transport attached to
//! the HTTP request after checking its bearer token.

use std::sync::Arc;

use axum::http::request::Parts;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Extensions,
    Implementation, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, Tool, ToolAnnotations, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::json;

use super::identity::Caller;
use super::notify::Hub;
use super::registry;
use super::resources;
use super::tools::{self, ToolBox, ToolError};

/// Header carrying the session id of protocol versions with sessions.
const SESSION_HEADER: &str = "mcp-session-id";

const INSTRUCTIONS: &str = "awtui workflow context. Call workflow_agents to learn who is here \
and how to @mention them. Talk with channel_send / channel_read; check your @mentions with \
inbox_check and acknowledge them with inbox_ack once handled. Shared notes live in documents \
(document_read, document_write, document_append, document_list, document_create, document_delete). \
Split work with tasks: agent_register once, then workflow_next_tasks, task_claim (atomic: one \
winner), task_load_context, checkpoint_add and task_update_status (completed needs an outcome).";

/// One MCP service for every session: cheap to clone, all state shared.
#[derive(Clone)]
pub struct ContextServer {
    tools: ToolBox,
    hub: Arc<Hub>,
    tool_list: Arc<Vec<Tool>>,
    /// How long a tool call may run before its caller is answered.
    tool_timeout: std::time::Duration,
}

impl std::fmt::Debug for ContextServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextServer").finish_non_exhaustive()
    }
}

fn to_tool(spec: tools::ToolSpec) -> Tool {
    let schema = match spec.input_schema {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    Tool::new(spec.name, spec.description, Arc::new(schema)).with_annotations(
        ToolAnnotations::new()
            .read_only(spec.read_only)
            .destructive(spec.destructive)
            .open_world(false),
    )
}

fn http_parts(extensions: &Extensions) -> Option<&Parts> {
    extensions.get::<Parts>()
}

/// The authenticated caller of a request.
fn caller_of(extensions: &Extensions) -> Result<String, ErrorData> {
    http_parts(extensions)
        .and_then(|p| p.extensions.get::<Caller>())
        .map(|c| c.0.clone())
        .ok_or_else(|| {
            ErrorData::invalid_request("this request carries no authenticated caller", None)
        })
}

fn session_of(extensions: &Extensions) -> Option<String> {
    http_parts(extensions)?
        .headers
        .get(SESSION_HEADER)?
        .to_str()
        .ok()
        .map(str::to_string)
}

impl ContextServer {
    /// A server for `tools`, announcing changes through `hub`.
    pub fn new(tools: ToolBox, hub: Arc<Hub>, tool_timeout: std::time::Duration) -> Self {
        let tool_list = tools::specs().into_iter().map(to_tool).collect();
        ContextServer {
            tools,
            hub,
            tool_list: Arc::new(tool_list),
            tool_timeout,
        }
    }

    fn check_uri(&self, uri: &str) -> Result<(), ErrorData> {
        resources::parse(uri, self.tools.agents())
            .map(|_| ())
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))
    }
}

/// A tool result carrying its JSON once, as compact text: what every
/// client reads (Claude Code, Codex, Gemini CLI and opencode read text
/// content). No `structuredContent` copy: no tool declares an output
/// schema, and the copy doubled large results (an inbox of 5,000).
fn one_payload(value: &serde_json::Value, is_error: bool) -> CallToolResponse {
    let content = vec![ContentBlock::text(value.to_string())];
    if is_error {
        CallToolResult::error(content).into()
    } else {
        CallToolResult::success(content).into()
    }
}

fn internal(e: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(e.to_string(), None)
}

impl ServerHandler for ContextServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_resources_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("awtui", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut list = self.tool_list.to_vec();
        if let Ok(caller) = caller_of(&context.extensions) {
            self.tools.context().note_tool_list(&caller);
            // Only agents whose CLI asks through awtui see the approval tool.
            if self.tools.context().approvals().asks(&caller) {
                list.extend(registry::waiting_specs().into_iter().map(to_tool));
            }
        }
        Ok(ListToolsResult::with_all_items(list))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = caller_of(&context.extensions)?;
        let tools = self.tools.clone();
        let name = request.name.into_owned();
        let args = request.arguments;
        let result = if let Some(wait) = registry::waiting(&name) {
            // Waits for a decision: async, never on a blocking thread, and
            // bounded by the approval timeout.
            // rmcp cancels the call's token when the client sends
            // `notifications/cancelled` (Claude Code does at its own
            // timeout) or the session ends; the handler itself runs on.
            wait(
                tools.context(),
                &caller,
                args,
                Box::pin(context.ct.cancelled()),
            )
            .await
        } else {
            let timeout = self.tool_timeout;
            let tool = name.clone();
            let call = move || tools.call(&caller, &tool, args);
            let running = if matches!(
                tokio::runtime::Handle::current().runtime_flavor(),
                tokio::runtime::RuntimeFlavor::MultiThread
            ) {
                // Store calls may fsync: the task's worker becomes a
                // blocking thread for the call (its other tasks move to
                // another worker), which spares the hand-over to the
                // blocking pool and back.
                tokio::spawn(async move { tokio::task::block_in_place(call) })
            } else {
                // A single-threaded runtime: keep its one thread free.
                tokio::task::spawn_blocking(call)
            };
            match tokio::time::timeout(timeout, running).await {
                Ok(joined) => joined.map_err(internal)?,
                // The call goes on (a thread cannot be stopped), but its
                // caller is answered and every other call is served.
                Err(_) => {
                    tracing::warn!("tool {name} did not finish within {timeout:?}");
                    Err(ToolError::Coded {
                        code: "DEADLINE_EXCEEDED",
                        message: format!(
                            "{name} did not finish within {} s (limits.tool_timeout); \
                             it may still complete: check its effect before calling it again",
                            timeout.as_secs_f64()
                        ),
                    })
                }
            }
        };
        match result {
            Ok(value) => Ok(one_payload(&value, false)),
            Err(ToolError::Failed(message)) => Ok(one_payload(&json!({ "error": message }), true)),
            Err(ToolError::Coded { code, message }) => Ok(one_payload(
                &json!({ "error": message, "code": code }),
                true,
            )),
            Err(ToolError::Invalid(message)) => Err(ErrorData::invalid_params(message, None)),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let list = resources::list(self.tools.context(), self.tools.agents()).map_err(internal)?;
        Ok(ListResourcesResult::with_all_items(
            list.into_iter()
                .map(|r| {
                    Resource::new(r.uri, r.name)
                        .with_description(r.description)
                        .with_mime_type(r.mime_type)
                })
                .collect(),
        ))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new("awtui://inbox/{agent}", "inbox")
                .with_description("Unread @mentions of one participant, as JSON")
                .with_mime_type("application/json"),
            ResourceTemplate::new("awtui://document/{+path}", "document")
                .with_description("A shared document, by its path in the document folder"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let ctx = self.tools.context().clone();
        let agents = self.tools.agents().to_vec();
        let uri = request.uri;
        let read = {
            let uri = uri.clone();
            tokio::task::spawn_blocking(move || resources::read(&ctx, &agents, &uri))
                .await
                .map_err(internal)?
        };
        match read {
            Ok(content) => Ok(ReadResourceResult::new(vec![
                ResourceContents::text(content.text, uri).with_mime_type(content.mime_type),
            ])
            .into()),
            Err(e) => Err(ErrorData::resource_not_found(
                e.to_string(),
                Some(json!({ "uri": uri })),
            )),
        }
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.check_uri(&request.uri)?;
        let caller = caller_of(&context.extensions)?;
        let session = session_of(&context.extensions).ok_or_else(|| {
            ErrorData::invalid_request("resources/subscribe needs a session", None)
        })?;
        self.hub
            .subscribe(&session, &caller, context.peer.clone(), &request.uri);
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if let Some(session) = session_of(&context.extensions) {
            self.hub.unsubscribe(&session, &request.uri);
        }
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let (Ok(caller), Some(session)) = (
            caller_of(&context.extensions),
            session_of(&context.extensions),
        ) {
            self.hub
                .register_session(&session, &caller, context.peer.clone());
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = requested.clone();
        accepted.tools_list_changed = None;
        accepted.prompts_list_changed = None;
        if let Some(uris) = accepted.resource_subscriptions.as_mut() {
            uris.retain(|uri| self.check_uri(uri).is_ok());
        }
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        struct Registered<'a>(&'a Hub, u64);
        impl Drop for Registered<'_> {
            fn drop(&mut self) {
                self.0.remove_listener(self.1);
            }
        }
        let _registered = Registered(&self.hub, self.hub.add_listener(context.sink().clone()));
        context.cancelled().await;
        Ok(())
    }
}
