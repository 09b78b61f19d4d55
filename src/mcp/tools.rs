//! The context tools agents call over MCP, as plain functions of
//! (caller, tool name, JSON arguments) so they can be tested without HTTP.
//!
//! Two kinds of failure, as MCP intends:
//! - [`ToolError::Invalid`]: the request is malformed (unknown tool, missing
//!   or mistyped or unknown arguments). It becomes a JSON-RPC error.
//! - [`ToolError::Failed`]: the request was understood but the caller can fix
//!   something (unknown document, refused path, bad `since`). It becomes a
//!   tool result with `isError: true` and a message meant for the agent.

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::schema;
use super::tool::{Scope, define_tool};
use crate::context::SharedContext;
use crate::context::{ChannelEntry, ContextError, InboxItem, Page, PageOf, Since, mentions};

/// How many channel entries `channel_read` and `channel_peek` return when
/// no `limit` is given.
pub const DEFAULT_LIMIT: usize = 50;
/// The largest `limit` accepted, so one call cannot return the whole history.
pub const MAX_LIMIT: usize = 1000;

/// Why a tool call did not succeed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// A malformed request: a protocol error (JSON-RPC invalid params).
    #[error("{0}")]
    Invalid(String),
    /// A problem the caller can fix: a tool result with `isError: true`.
    #[error("{0}")]
    Failed(String),
    /// Like `Failed`, with a protocol's error code (the caw tools' codes,
    /// such as TASK_NOT_FOUND) next to the sentence.
    #[error("{code}: {message}")]
    Coded {
        /// The code, such as `INVALID_TRANSITION`.
        code: &'static str,
        /// What went wrong and what to do, for the agent.
        message: String,
    },
}

impl From<ContextError> for ToolError {
    fn from(e: ContextError) -> Self {
        ToolError::Failed(e.to_string())
    }
}

/// A tool's public description: what `tools/list` shows.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The exact tool name agents call.
    pub name: &'static str,
    /// What the agent reads to decide when and how to call it.
    pub description: &'static str,
    /// JSON Schema of the arguments object.
    pub input_schema: Value,
    /// Changes nothing (a hint for clients that ask before running tools).
    pub read_only: bool,
    /// May remove or overwrite content.
    pub destructive: bool,
}

/// The tools offered to every agent, in the order `tools/list` shows
/// them (from the one list, [`super::registry::TOOLS`]).
pub use super::registry::specs;

/// The arguments of a tool that takes none.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Empty {}

/// `channel_send`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SendArgs {
    /// The message, with @mentions.
    message: String,
}

/// The paging arguments `channel_read` and `channel_peek` share.
#[derive(Deserialize, JsonSchema)]
pub(super) struct PageArgs {
    /// Page forward: the oldest entries after this message id (0 for the
    /// very start) or ISO 8601 timestamp.
    #[serde(default)]
    #[schemars(schema_with = "schema::id_or_time")]
    after: Option<Value>,
    /// Page back: the newest entries before this message id.
    #[serde(default)]
    #[schemars(schema_with = "schema::id_from_one_or_time")]
    before: Option<Value>,
    #[schemars(range(min = 1, max = MAX_LIMIT), description = limit_description())]
    limit: Option<u64>,
}

/// What `limit` says about itself, from the limits it is checked against.
fn limit_description() -> String {
    format!(
        "Maximum number of entries, the newest ones (default {DEFAULT_LIMIT}, at most {MAX_LIMIT})."
    )
}

/// `channel_read`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ReadArgs {
    /// The newest entries after this message id (such as 42) or ISO 8601
    /// timestamp.
    #[serde(default)]
    #[schemars(schema_with = "schema::id_or_time")]
    since: Option<Value>,
    #[serde(flatten)]
    page: PageArgs,
}

/// `channel_peek`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct PeekArgs {
    #[serde(flatten)]
    page: PageArgs,
}

/// Which page `since` / `after` / `before` (at most one) ask for.
fn parse_page(tool: &str, since: Option<&Value>, page: &PageArgs) -> Result<Page, ToolError> {
    match (since, page.after.as_ref(), page.before.as_ref()) {
        (since, None, None) => Ok(Page::Newest(
            since
                .map(|v| parse_position(tool, "since", v))
                .transpose()?,
        )),
        (None, Some(after), None) => Ok(Page::After(parse_position(tool, "after", after)?)),
        (None, None, Some(before)) => match parse_position(tool, "before", before)? {
            Since::Id(id) => Ok(Page::Before(id)),
            Since::Time(_) => Err(ToolError::Failed(
                "before must be a message id (such as 42), not a timestamp".into(),
            )),
        },
        _ => Err(ToolError::Failed(
            "give at most one of since, after and before".into(),
        )),
    }
}

/// `inbox_ack`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct AckArgs {
    /// The last message id (such as 42) or timestamp to acknowledge.
    #[schemars(schema_with = "schema::id_or_time")]
    until: Value,
}

/// `document_read`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct FileArgs {
    /// Path inside the document folder, such as findings/auth.md (default:
    /// the entry point).
    file: Option<String>,
}

/// `document_write`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct WriteArgs {
    /// The new content.
    content: String,
    /// Path inside the document folder (default: the entry point).
    file: Option<String>,
}

/// `document_append`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct AppendArgs {
    /// The text to append.
    content: String,
    /// Path inside the document folder (default: the entry point).
    file: Option<String>,
}

/// `document_create`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateArgs {
    /// Path inside the document folder, such as findings/auth.md; folders
    /// are created.
    file: String,
    /// The initial content.
    content: String,
}

/// `document_delete`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct DeleteArgs {
    /// Path inside the document folder.
    file: String,
}

/// A tool's arguments as `T`, or an invalid-arguments error naming it.
pub(super) fn parse<T: DeserializeOwned>(
    tool: &str,
    args: Option<Map<String, Value>>,
) -> Result<T, ToolError> {
    serde_json::from_value(Value::Object(args.unwrap_or_default()))
        .map_err(|e| ToolError::Invalid(format!("{tool}: invalid arguments: {e}")))
}

/// Reads a `since`/`until` argument: an id as a number or a string, or a
/// timestamp. A value of the wrong JSON type is a malformed request; a
/// string that is neither an id nor a timestamp is the caller's to fix.
fn parse_position(tool: &str, name: &str, value: &Value) -> Result<Since, ToolError> {
    match value {
        Value::Number(n) => n.as_u64().map(Since::Id).ok_or_else(|| {
            ToolError::Failed(format!(
                "{name} = {n} is not a message id: ids are whole numbers from 1 up"
            ))
        }),
        Value::String(s) => Ok(Since::parse(s).map_err(ContextError::from)?),
        other => Err(ToolError::Invalid(format!(
            "{tool}: invalid arguments: {name} must be a message id or a timestamp string, not {other}"
        ))),
    }
}

fn parse_limit(limit: Option<u64>) -> Result<usize, ToolError> {
    match limit {
        None => Ok(DEFAULT_LIMIT),
        Some(n) if (1..=MAX_LIMIT as u64).contains(&n) => Ok(n as usize),
        Some(n) => Err(ToolError::Failed(format!(
            "limit = {n} is out of range: use 1 to {MAX_LIMIT} (default {DEFAULT_LIMIT})"
        ))),
    }
}

fn entry_json(e: &ChannelEntry) -> Value {
    json!({
        "id": e.id,
        "timestamp": e.timestamp_text(),
        "from": e.from,
        "message": e.message,
        "mentions": e.mentions,
    })
}

/// A page as `channel_read` and `channel_peek` return it: the entries,
/// whether older ones were left out, and `next`, the argument that fetches
/// the following page in the same direction (null when there is none).
fn page_json(page: Page, found: &PageOf, last_id: u64) -> Value {
    let next = match (page, found.entries.first(), found.entries.last()) {
        (_, None, _) | (_, _, None) => Value::Null,
        _ if !found.more => Value::Null,
        (Page::After(_), _, Some(last)) => json!({"after": last.id}),
        (_, Some(first), _) => json!({"before": first.id}),
    };
    let omitted_older = match page {
        Page::After(_) => found.entries.first().is_some_and(|e| e.id > 1),
        _ => found.more,
    };
    json!({
        "entries": found.entries.iter().map(entry_json).collect::<Vec<_>>(),
        "omitted_older": omitted_older,
        "next": next,
        "last_id": last_id,
    })
}

/// Inbox items as tool results and resources show them.
pub(crate) fn inbox_json(items: &[InboxItem]) -> Vec<Value> {
    items.iter().map(InboxItem::to_json).collect()
}

/// The context tools bound to one shared context and one workflow's agents.
#[derive(Clone, Debug)]
pub struct ToolBox {
    ctx: SharedContext,
    agents: Vec<String>,
}

impl ToolBox {
    /// Tools over `ctx` for a workflow with these agents.
    pub fn new(ctx: SharedContext, agents: Vec<String>) -> Self {
        ToolBox { ctx, agents }
    }

    /// The shared context the tools act on.
    pub fn context(&self) -> &SharedContext {
        &self.ctx
    }

    /// The workflow's agents (without `user`).
    pub fn agents(&self) -> &[String] {
        &self.agents
    }

    /// Runs tool `name` for `caller` with `args` (the `arguments` object of
    /// `tools/call`) and returns its JSON result.
    pub fn call(
        &self,
        caller: &str,
        name: &str,
        args: Option<Map<String, Value>>,
    ) -> Result<Value, ToolError> {
        super::registry::call(Scope::Box(self), caller, name, args)
    }

    fn channel_send(&self, caller: &str, message: &str) -> Result<Value, ToolError> {
        crate::context::check_message(message)?;
        let entry = self.ctx.append(caller, message)?;
        Ok(json!({
            "id": entry.id,
            "timestamp": entry.timestamp_text(),
            "mentions": entry.mentions,
        }))
    }

    /// Reads, then acknowledges the caller's mentions up to the last entry
    /// returned; an unread mention older than the first entry returned was
    /// not shown, so the acknowledgement stops just before it.
    fn channel_read(&self, caller: &str, page: Page, limit: usize) -> Result<Value, ToolError> {
        self.ctx.transact(|tx| {
            let store = tx.store();
            let found = store.page(page, limit);
            let mut acked_until = None;
            if let (Some(first), Some(last)) = (found.entries.first(), found.entries.last()) {
                let until = match store.oldest_unread(caller)? {
                    Some(unseen) if unseen < first.id => unseen - 1,
                    _ => last.id,
                };
                acked_until = Some(tx.ack(caller, Since::Id(until))?.acked);
            }
            let mut result = page_json(page, &found, tx.store().last_id());
            result["acked_until"] = json!(acked_until);
            Ok(result)
        })
    }

    fn channel_peek(&self, page: Page, limit: usize) -> Result<Value, ToolError> {
        Ok(self
            .ctx
            .read(|s| page_json(page, &s.page(page, limit), s.last_id())))
    }

    fn inbox_check(&self, caller: &str) -> Result<Value, ToolError> {
        self.ctx.transact(|tx| {
            let items = tx.store().inbox(caller)?;
            if let Some(max) = items.iter().map(|i| i.entry.id).max() {
                tx.mark_delivered(caller, max)?;
            }
            Ok(json!({"messages": inbox_json(&items), "count": items.len()}))
        })
    }

    fn inbox_peek(&self, caller: &str) -> Result<Value, ToolError> {
        let items = self.ctx.read(|s| s.inbox(caller))?;
        Ok(json!({"messages": inbox_json(&items), "count": items.len()}))
    }

    fn inbox_ack(&self, caller: &str, until: Since) -> Result<Value, ToolError> {
        self.ctx.transact(|tx| {
            let cursor = tx.ack(caller, until)?;
            let unread = tx.store().inbox_ids(caller)?.len();
            Ok(json!({"acked_until": cursor.acked, "unread": unread}))
        })
    }

    fn document_read(&self, file: Option<&str>) -> Result<Value, ToolError> {
        let (content, entry) = self
            .ctx
            .read(|s| (s.read_document(file), s.entry_document().to_string()));
        let path = file.map_or(entry, |f| f.trim_end_matches('/').to_string());
        Ok(json!({"file": path, "content": content?}))
    }

    /// Who is in the workflow and how to mention them.
    pub fn workflow_agents(&self, caller: &str) -> Value {
        let agents: Vec<Value> = self
            .agents
            .iter()
            .map(|a| json!({"name": a, "mention": format!("@{a}"), "you": a == caller}))
            .collect();
        json!({
            "you": caller,
            "agents": agents,
            "user": {
                "name": mentions::USER,
                "mention": "@user",
                "you": caller == mentions::USER,
                "about": "the person at the keyboard",
            },
            "everyone": {
                "mention": "@all",
                "about": "mentions every agent except the sender",
            },
        })
    }
}

define_tool! {
    /// Posts to the channel as the caller.
    ChannelSend = "channel_send", SendArgs, ToolBox,
    "Post a message to the shared channel as yourself. Mention others with \
        @name (see workflow_agents; @all reaches every agent but you, @user the person at \
        the keyboard). Returns the new message's id, timestamp and who was mentioned.",
    |t, caller, a| t.channel_send(caller, &a.message)
}

define_tool! {
    /// Reads the channel and acknowledges what it showed.
    ChannelRead = "channel_read", ReadArgs, ToolBox,
    "Read channel messages, oldest first. By default the newest `limit` \
        (default 50, at most 1000), optionally only those after `since` (a message id or \
        an ISO 8601 timestamp). Page through all history with `after` (the oldest \
        `limit` after that id or timestamp: paging forward) or `before` (the newest \
        `limit` before that id: paging back); the result's `next` holds the argument for \
        the following page (null at the end). Acknowledges your @mentions up to the last \
        entry returned, except unread mentions this read did not show you, which stay in \
        your inbox.",
    |t, caller, a| {
        let page = parse_page(ChannelRead::NAME, a.since.as_ref(), &a.page)?;
        t.channel_read(caller, page, parse_limit(a.page.limit)?)
    }
}

define_tool! {
    /// Reads the channel, changing nothing.
    ChannelPeek = "channel_peek", PeekArgs, ToolBox,
    "Channel messages without acknowledging anything: the newest `limit` \
        (default 50, at most 1000), or a page with `after` / `before` as in \
        channel_read (follow the result's `next`).",
    read_only: true,
    |t, _caller, a| {
        let page = parse_page(ChannelPeek::NAME, None, &a.page)?;
        t.channel_peek(page, parse_limit(a.page.limit)?)
    }
}

/// What `inbox_check` says of itself.
const INBOX_CHECK: &str = "Your unread @mentions (id, timestamp, from, message, priority, state; \
        never your own messages), high priority first, then oldest first. Marks them delivered but not acknowledged: \
        call inbox_ack with the last id you handled once you have dealt with them.";

define_tool! {
    /// The caller's unread mentions, marked delivered.
    InboxCheck = "inbox_check", Empty, ToolBox,
    INBOX_CHECK,
    |t, caller, _a| t.inbox_check(caller)
}

define_tool! {
    /// `inbox_check` under the name some agents look for.
    ChannelMentions = "channel_mentions", Empty, ToolBox,
    "Alias of inbox_check: your unread @mentions, marked delivered, not acknowledged.",
    |t, caller, _a| t.inbox_check(caller)
}

define_tool! {
    /// Acknowledges the caller's mentions.
    InboxAck = "inbox_ack", AckArgs, ToolBox,
    "Acknowledge your mentions up to and including `until` (a message id, or \
        an ISO 8601 timestamp covering every message at or before it). They leave your inbox.",
    |t, caller, a| t.inbox_ack(caller, parse_position(InboxAck::NAME, "until", &a.until)?)
}

define_tool! {
    /// The caller's unread mentions, changing nothing.
    InboxPeek = "inbox_peek", Empty, ToolBox,
    "Your unread @mentions, like inbox_check, but changes nothing.",
    read_only: true,
    |t, caller, _a| t.inbox_peek(caller)
}

define_tool! {
    /// Reads a document.
    DocumentRead = "document_read", FileArgs, ToolBox,
    "Read a shared document. Without `file`, reads the entry point document.",
    read_only: true,
    |t, _caller, a| t.document_read(a.file.as_deref())
}

define_tool! {
    /// Replaces a document.
    DocumentWrite = "document_write", WriteArgs, ToolBox,
    "Replace a shared document's content (creating it if needed). Without \
        `file`, writes the entry point document.",
    destructive: true,
    |t, caller, a| {
        let path = t
            .ctx
            .transact(|tx| tx.write_document(caller, a.file.as_deref(), &a.content))?;
        Ok(json!({"file": path, "written": true, "bytes": a.content.len()}))
    }
}

define_tool! {
    /// Appends to a document.
    DocumentAppend = "document_append", AppendArgs, ToolBox,
    "Append text to a shared document (creating it if needed). Without \
        `file`, appends to the entry point document. Nothing is added between the old \
        content and yours: include the newline you want.",
    |t, caller, a| {
        let path = t
            .ctx
            .transact(|tx| tx.append_document(caller, a.file.as_deref(), &a.content))?;
        Ok(json!({"file": path, "appended": true, "bytes": a.content.len()}))
    }
}

define_tool! {
    /// Lists the documents.
    DocumentList = "document_list", Empty, ToolBox,
    "Every shared document, as paths relative to the document folder, and \
        which one is the entry point (a folder of more than 20,000 entries is listed \
        as far as its first 20,000).",
    read_only: true,
    |t, _caller, _a| {
        let (documents, entry) = t
            .ctx
            .read(|s| (s.list_documents(), s.entry_document().to_string()));
        Ok(json!({"documents": documents?, "entry_point": entry}))
    }
}

define_tool! {
    /// Creates a document.
    DocumentCreate = "document_create", CreateArgs, ToolBox,
    "Create a new shared document; fails if it already exists.",
    |t, caller, a| {
        let path = t
            .ctx
            .transact(|tx| tx.create_document(caller, &a.file, &a.content))?;
        Ok(json!({"file": path, "created": true}))
    }
}

define_tool! {
    /// Deletes a document.
    DocumentDelete = "document_delete", DeleteArgs, ToolBox,
    "Delete a shared document.",
    destructive: true,
    |t, caller, a| {
        let path = t.ctx.transact(|tx| tx.delete_document(caller, &a.file))?;
        Ok(json!({"file": path, "deleted": true}))
    }
}

define_tool! {
    /// Who takes part, and how to mention them.
    WorkflowAgents = "workflow_agents", Empty, ToolBox,
    "Who is in this workflow, how to @mention each of them, and which one you are.",
    read_only: true,
    |t, caller, _a| Ok(t.workflow_agents(caller))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{MemoryStore, StoreLayout};

    fn toolbox() -> ToolBox {
        let agents = vec!["coder".to_string(), "reviewer".to_string()];
        let layout = StoreLayout {
            channel: "channel.md".into(),
            document: "notes.md".into(),
            documents: vec!["goals.md".into()],
            agents: agents.clone(),
        };
        let ctx = SharedContext::new(Box::new(MemoryStore::new(&layout).unwrap()));
        ToolBox::new(ctx, agents)
    }

    fn args(v: Value) -> Option<Map<String, Value>> {
        match v {
            Value::Object(m) => Some(m),
            _ => panic!("not an object"),
        }
    }

    fn call(t: &ToolBox, caller: &str, name: &str, v: Value) -> Result<Value, ToolError> {
        t.call(caller, name, args(v))
    }

    #[test]
    fn every_spec_is_callable_and_schemas_are_objects() {
        let t = toolbox();
        for spec in specs() {
            assert_eq!(spec.input_schema["type"], "object", "{}", spec.name);
            let r = t.call("coder", spec.name, None);
            assert!(
                !matches!(&r, Err(ToolError::Invalid(m)) if m.starts_with("unknown tool")),
                "{}",
                spec.name
            );
        }
    }

    #[test]
    fn send_reports_id_timestamp_and_mentions() {
        let t = toolbox();
        let r = call(
            &t,
            "coder",
            "channel_send",
            json!({"message": "@reviewer hi @user"}),
        )
        .unwrap();
        assert_eq!(r["id"], 1);
        assert_eq!(r["mentions"], json!(["reviewer", "user"]));
        assert!(r["timestamp"].as_str().unwrap().ends_with('Z'));
        let e = call(&t, "coder", "channel_send", json!({"message": "  "})).unwrap_err();
        assert!(matches!(e, ToolError::Failed(_)));
    }

    #[test]
    fn malformed_arguments_are_protocol_errors() {
        let t = toolbox();
        for (tool, a) in [
            ("channel_send", json!({})),
            ("channel_send", json!({"message": 3})),
            ("channel_send", json!({"message": "x", "extra": 1})),
            ("channel_read", json!({"limit": -1})),
            ("channel_read", json!({"since": true})),
            ("channel_read", json!({"limit": 5, "extra": 1})),
            ("channel_peek", json!({"since": 1})),
            ("inbox_check", json!({"x": 1})),
            ("inbox_ack", json!({})),
            ("nope", json!({})),
        ] {
            let e = call(&t, "coder", tool, a.clone()).unwrap_err();
            assert!(matches!(e, ToolError::Invalid(_)), "{tool} {a}: {e:?}");
        }
    }

    #[test]
    fn bad_positions_and_limits_are_tool_errors() {
        let t = toolbox();
        for (tool, a) in [
            ("channel_read", json!({"since": "yesterday"})),
            ("channel_read", json!({"since": -3})),
            ("channel_read", json!({"limit": 0})),
            ("channel_peek", json!({"limit": 100000})),
            ("inbox_ack", json!({"until": 99})),
        ] {
            let e = call(&t, "coder", tool, a.clone()).unwrap_err();
            assert!(matches!(e, ToolError::Failed(_)), "{tool} {a}: {e:?}");
        }
    }

    #[test]
    fn read_acks_up_to_the_last_entry_and_peek_does_not() {
        let t = toolbox();
        for i in 1..=5 {
            call(
                &t,
                "coder",
                "channel_send",
                json!({"message": format!("@reviewer m{i}")}),
            )
            .unwrap();
        }
        let p = call(&t, "reviewer", "channel_peek", json!({"limit": 2})).unwrap();
        assert_eq!(p["entries"].as_array().unwrap().len(), 2);
        assert_eq!(p["omitted_older"], true);
        assert_eq!(
            call(&t, "reviewer", "inbox_peek", json!({})).unwrap()["count"],
            5
        );

        let r = call(
            &t,
            "reviewer",
            "channel_read",
            json!({"since": "2", "limit": 10}),
        )
        .unwrap();
        let ids: Vec<u64> = r["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_u64().unwrap())
            .collect();
        assert_eq!(ids, vec![3, 4, 5]);
        // Mentions #1 and #2 were not shown, so nothing is acknowledged.
        assert_eq!(r["acked_until"], 0);

        let r = call(&t, "reviewer", "channel_read", json!({})).unwrap();
        assert_eq!(r["acked_until"], 5);
        assert_eq!(r["omitted_older"], false);
        assert_eq!(
            call(&t, "reviewer", "inbox_peek", json!({})).unwrap()["count"],
            0
        );
    }

    fn ids(r: &Value) -> Vec<u64> {
        r["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_u64().unwrap())
            .collect()
    }

    /// Follows `next` from `first` until it is null; returns every id seen
    /// and the number of pages.
    fn follow(t: &ToolBox, tool: &str, first: Value) -> (Vec<u64>, usize) {
        let (mut seen, mut pages, mut args) = (Vec::new(), 0, first);
        loop {
            let r = call(t, "reviewer", tool, args.clone()).unwrap();
            pages += 1;
            let page = ids(&r);
            assert!(page.len() <= 1000, "{}", page.len());
            assert!(page.windows(2).all(|w| w[0] < w[1]), "oldest first");
            seen.push(page);
            if r["next"].is_null() {
                break;
            }
            let mut next = r["next"].clone();
            next["limit"] = args["limit"].clone();
            args = next;
        }
        (seen.concat(), pages)
    }

    #[test]
    fn every_message_is_reachable_by_paging_forward_and_back() {
        let t = toolbox();
        let layout_n = 2_500u64;
        t.ctx
            .transact(|tx| {
                for i in 1..=layout_n {
                    tx.append("coder", &format!("m{i}"))?;
                }
                Ok::<_, ContextError>(())
            })
            .unwrap();
        let all: Vec<u64> = (1..=layout_n).collect();

        // Forward from the very start, in pages of 1,000.
        for tool in ["channel_peek", "channel_read"] {
            let (seen, pages) = follow(&t, tool, json!({"after": 0, "limit": 1000}));
            assert_eq!(seen, all, "{tool}");
            assert_eq!(pages, 3);
        }
        // Back from the newest: each page is older than the one before.
        let (mut seen, pages) = follow(&t, "channel_peek", json!({"limit": 1000}));
        assert_eq!(pages, 3);
        seen.sort();
        assert_eq!(seen, all);
        let r = call(
            &t,
            "reviewer",
            "channel_peek",
            json!({"before": 1001, "limit": 2}),
        )
        .unwrap();
        assert_eq!(ids(&r), vec![999, 1000]);
        assert_eq!(r["next"], json!({"before": 999}));
        let r = call(
            &t,
            "reviewer",
            "channel_read",
            json!({"after": 2499, "limit": 5}),
        )
        .unwrap();
        assert_eq!(ids(&r), vec![2500]);
        assert!(r["next"].is_null());

        for bad in [
            json!({"since": 1, "after": 2}),
            json!({"after": 1, "before": 5}),
            json!({"before": "2026-01-15T10:05:00Z"}),
        ] {
            let e = call(&t, "reviewer", "channel_read", bad.clone()).unwrap_err();
            assert!(matches!(e, ToolError::Failed(_)), "{bad}: {e:?}");
        }
    }

    #[test]
    fn read_with_a_limit_keeps_older_unread_mentions() {
        let t = toolbox();
        call(
            &t,
            "coder",
            "channel_send",
            json!({"message": "@reviewer first"}),
        )
        .unwrap();
        for i in 0..3 {
            call(
                &t,
                "coder",
                "channel_send",
                json!({"message": format!("chatter {i}")}),
            )
            .unwrap();
        }
        let r = call(
            &t,
            "reviewer",
            "channel_read",
            json!({"since": 0, "limit": 2}),
        )
        .unwrap();
        assert_eq!(r["acked_until"], 0);
        let inbox = call(&t, "reviewer", "inbox_peek", json!({})).unwrap();
        assert_eq!(inbox["messages"][0]["id"], 1);
    }

    /// Issue 23 (6): a mention of oneself is not in one's own inbox (the
    /// engine never counts or wakes it), and an inbox item has the one
    /// documented shape `awtui peek --json` prints too.
    #[test]
    fn own_mentions_stay_out_of_inbox_check_and_items_have_one_shape() {
        let t = toolbox();
        let sent = call(
            &t,
            "coder",
            "channel_send",
            json!({"message": "@coder note to self, @reviewer fyi"}),
        )
        .unwrap();
        assert_eq!(sent["mentions"], json!(["reviewer"]));
        let own = call(&t, "coder", "inbox_check", json!({})).unwrap();
        assert_eq!(own, json!({"messages": [], "count": 0}));
        let theirs = call(&t, "reviewer", "inbox_peek", json!({})).unwrap();
        assert_eq!(theirs["count"], 1);
        let item = &theirs["messages"][0];
        assert!(crate::context::has_inbox_item_shape(item), "{item}");
    }

    #[test]
    fn inbox_check_delivers_high_priority_first_and_ack_clears() {
        let t = toolbox();
        call(
            &t,
            "coder",
            "channel_send",
            json!({"message": "@reviewer normal"}),
        )
        .unwrap();
        call(
            &t,
            "coder",
            "channel_send",
            json!({"message": "@reviewer urgent!"}),
        )
        .unwrap();
        let c = call(&t, "reviewer", "channel_mentions", json!({})).unwrap();
        assert_eq!(c["count"], 2);
        assert_eq!(c["messages"][0]["id"], 2);
        assert_eq!(c["messages"][0]["priority"], "high");
        assert_eq!(c["messages"][0]["from"], "coder");
        assert_eq!(c["messages"][0]["state"], "queued");
        let again = call(&t, "reviewer", "inbox_check", json!({})).unwrap();
        assert_eq!(again["messages"][0]["state"], "delivered");

        let a = call(&t, "reviewer", "inbox_ack", json!({"until": "1"})).unwrap();
        assert_eq!(a, json!({"acked_until": 1, "unread": 1}));
        let a = call(&t, "reviewer", "inbox_ack", json!({"until": 2})).unwrap();
        assert_eq!(a, json!({"acked_until": 2, "unread": 0}));
    }

    #[test]
    fn documents_round_trip_and_refuse_escapes() {
        let t = toolbox();
        call(&t, "coder", "document_write", json!({"content": "a"})).unwrap();
        call(&t, "coder", "document_append", json!({"content": "b"})).unwrap();
        let r = call(&t, "coder", "document_read", json!({})).unwrap();
        assert_eq!(r, json!({"file": "notes.md", "content": "ab"}));
        call(
            &t,
            "coder",
            "document_create",
            json!({"file": "f/x.md", "content": "x"}),
        )
        .unwrap();
        let l = call(&t, "coder", "document_list", json!({})).unwrap();
        assert_eq!(l["documents"], json!(["f/x.md", "goals.md", "notes.md"]));
        assert_eq!(l["entry_point"], "notes.md");
        call(&t, "coder", "document_delete", json!({"file": "f/x.md"})).unwrap();
        for (tool, a) in [
            ("document_read", json!({"file": "missing.md"})),
            ("document_read", json!({"file": "../etc/passwd"})),
            ("document_write", json!({"file": "/etc/x", "content": ""})),
            (
                "document_create",
                json!({"file": "goals.md", "content": ""}),
            ),
            ("document_delete", json!({"file": "channel.md"})),
        ] {
            let e = call(&t, "coder", tool, a.clone()).unwrap_err();
            assert!(matches!(e, ToolError::Failed(_)), "{tool} {a}: {e:?}");
        }
    }

    #[test]
    fn workflow_agents_names_the_caller() {
        let t = toolbox();
        let r = call(&t, "reviewer", "workflow_agents", json!({})).unwrap();
        assert_eq!(r["you"], "reviewer");
        assert_eq!(
            r["agents"][1],
            json!({"name": "reviewer", "mention": "@reviewer", "you": true})
        );
        assert_eq!(r["user"]["mention"], "@user");
    }
}
