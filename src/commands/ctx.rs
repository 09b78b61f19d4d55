//! `awtui ctx …`: the context tools from the shell, for agents on the
//! `command` backend (and anyone scripting). It talks MCP to the running
//! instance as the agent whose token is in `AWTUI_TOKEN`.

use crate::errln;
use std::io::{IsTerminal, Read};

use clap::Subcommand;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value, json};

use super::exit;

/// Exit code when the instance cannot be reached.
const EXIT_UNREACHABLE: u8 = 3;

/// `awtui ctx [--json] <tool> …`: one context tool and how to print its
/// result.
#[derive(Debug, clap::Args)]
pub struct CtxArgs {
    /// Print the tool's JSON result.
    #[arg(long, global = true)]
    pub json: bool,
    /// The tool and its arguments.
    #[command(subcommand)]
    pub command: CtxCommand,
}

/// `awtui ctx …`: one context tool each.
#[derive(Debug, Subcommand)]
pub enum CtxCommand {
    /// Post to the channel (the message, or standard input).
    Send { message: Option<String> },
    /// Read the channel (the newest, after `since`, or a page with
    /// `--after` / `--before`), acknowledging your mentions.
    Read {
        #[arg(long, conflicts_with_all = ["after", "before"])]
        since: Option<String>,
        #[command(flatten)]
        page: PageArgs,
        #[arg(long)]
        limit: Option<u64>,
    },
    /// Read the channel's newest messages (or a page) without acknowledging
    /// anything.
    Peek {
        #[command(flatten)]
        page: PageArgs,
        #[arg(long)]
        limit: Option<u64>,
    },
    /// Your unread mentions (marks them delivered; `--peek` changes nothing).
    Inbox {
        #[arg(long)]
        peek: bool,
    },
    /// Acknowledge your inbox up to a message id or timestamp.
    Ack { until: String },
    /// Who is in the workflow.
    Agents,
    /// Shared documents.
    Doc {
        #[command(subcommand)]
        command: DocCommand,
    },
    /// Every context tool an agent can call, with what it does and its
    /// arguments (or only NAME's); needs no running instance.
    Tools {
        /// One tool.
        name: Option<String>,
    },
    /// Call any context tool by name with a JSON object of arguments (the
    /// task tools, for instance: `ctx call task_claim '{"task_id":…}'`);
    /// prints its JSON result.
    Call {
        tool: String,
        /// The arguments as a JSON object (default `{}`; `-` reads stdin).
        args: Option<String>,
    },
}

/// Paging through the channel's whole history; `--json` output carries
/// `next`, the position of the following page.
#[derive(Debug, clap::Args)]
pub struct PageArgs {
    /// The oldest messages after this id (0: from the start) or time.
    #[arg(long, conflicts_with = "before")]
    pub after: Option<String>,
    /// The newest messages before this id.
    #[arg(long)]
    pub before: Option<String>,
}

/// `awtui ctx doc …`. Without a file, the entry document.
#[derive(Debug, Subcommand)]
pub enum DocCommand {
    /// Print a document.
    Read { file: Option<String> },
    /// Replace a document with `--text` or standard input.
    Write {
        file: Option<String>,
        #[arg(long)]
        text: Option<String>,
    },
    /// Append `--text` or standard input to a document.
    Append {
        file: Option<String>,
        #[arg(long)]
        text: Option<String>,
    },
    /// List the documents.
    List,
    /// Create a document that does not exist yet.
    Create {
        file: String,
        #[arg(long)]
        text: Option<String>,
    },
    /// Delete a document.
    Delete { file: String },
}

/// Runs one context command; prints the result (JSON with `--json`).
pub fn run(args: CtxArgs) -> u8 {
    let CtxArgs { json, command } = args;
    if let CtxCommand::Tools { name } = &command {
        return tools(name.as_deref(), json);
    }
    let (Ok(url), Ok(token)) = (std::env::var("AWTUI_MCP_URL"), std::env::var("AWTUI_TOKEN"))
    else {
        errln!(
            "awtui ctx needs AWTUI_MCP_URL and AWTUI_TOKEN; awtui sets both for the agents it starts"
        );
        return exit::INVALID;
    };
    let (tool, args) = match request(command) {
        Ok(r) => r,
        Err(e) => {
            errln!("{e}");
            return exit::INVALID;
        }
    };
    let args = arguments(args);
    if let Err(e) = fits(&tool, &args) {
        errln!("{tool}: {e}; nothing was sent");
        return exit::INVALID;
    }
    let Some(runtime) = super::runtime(false) else {
        return exit::FAILED;
    };
    runtime.block_on(call(&url, &token, tool, args, json))
}

/// `awtui ctx tools [NAME]`: each tool's name, description and arguments,
/// and for task tools an example result (with `json`, `[{name,
/// description, input_schema, result_example?, result_otherwise?}]`;
/// results from [`crate::mcp::results`]), from the same
/// specs the MCP server lists, plus `permission_request` (offered only to
/// asking agents' CLIs).
fn tools(name: Option<&str>, json: bool) -> u8 {
    let mut specs = crate::mcp::registry::all_specs();
    if let Some(name) = name {
        let Some(spec) = specs.iter().position(|s| s.name == name) else {
            let hint =
                crate::workflow::diagnostic::did_you_mean(name, specs.iter().map(|s| s.name))
                    .map(|c| format!(" (did you mean {c}?)"))
                    .unwrap_or_default();
            errln!("there is no context tool {name}{hint}; `awtui ctx tools` lists them");
            return exit::INVALID;
        };
        specs = vec![specs.swap_remove(spec)];
    }
    if json {
        let list: Vec<Value> = specs
            .iter()
            .map(|s| {
                let mut v = json!({"name": s.name, "description": s.description, "input_schema": s.input_schema});
                if let Some(r) = crate::mcp::results::of(s.name) {
                    let parse = |t: &str| serde_json::from_str::<Value>(t).unwrap_or(Value::Null);
                    v["result_example"] = parse(r.returns);
                    if let Some(o) = r.otherwise {
                        v["result_otherwise"] = parse(o);
                    }
                }
                v
            })
            .collect();
        super::print::json(Value::Array(list).to_string());
        return exit::OK;
    }
    let text: Vec<String> = specs.iter().map(describe).collect();
    super::print::line(text.join("\n"));
    exit::OK
}

/// An argument's JSON type in words (`integer or string`).
fn kind_of(p: &Value) -> String {
    match (&p["type"], p.get("oneOf").or_else(|| p.get("anyOf"))) {
        (Value::String(t), _) => t.clone(),
        (Value::Array(ts), _) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        (_, Some(Value::Array(alternatives))) => alternatives
            .iter()
            .map(kind_of)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any".into(),
    }
}

/// One tool as text: its name, description and one line per argument.
fn describe(spec: &crate::mcp::tools::ToolSpec) -> String {
    let schema = &spec.input_schema;
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut out = format!("{}\n  {}\n", spec.name, spec.description);
    let properties = schema["properties"].as_object();
    if properties.is_none_or(|p| p.is_empty()) {
        out.push_str("  (no arguments)\n");
    }
    for (arg, p) in properties.into_iter().flatten() {
        let kind = kind_of(p);
        let need = if required.contains(&arg.as_str()) {
            "required"
        } else {
            "optional"
        };
        let about = p["description"].as_str().unwrap_or("");
        out.push_str(&format!("  - {arg} ({kind}, {need}) {about}\n"));
    }
    if let Some(r) = crate::mcp::results::of(spec.name) {
        out.push_str(&format!("  returns: {}\n", r.returns));
        if let Some(o) = r.otherwise {
            out.push_str(&format!("  or: {o}\n"));
        }
    }
    out
}

/// Checks a call against the instance's limit on one request before
/// connecting, so an over-long message is refused with its size and the
/// limit, not sent whole only to come back as a transport error.
fn fits(tool: &str, args: &Map<String, Value>) -> Result<(), crate::mcp::TooLarge> {
    let request = json!({
        "jsonrpc": "2.0", "id": 0, "method": "tools/call",
        "params": {"name": tool, "arguments": args}
    });
    let bytes = serde_json::to_vec(&request).map_or(0, |r| r.len());
    if bytes > crate::mcp::MAX_BODY {
        return Err(crate::mcp::TooLarge {
            bytes: Some(bytes as u64),
        });
    }
    Ok(())
}

/// The tool and arguments for a command.
fn request(command: CtxCommand) -> Result<(String, Value), String> {
    let stdin = || {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map(|_| text)
            .map_err(|e| format!("cannot read standard input: {e}"))
    };
    let content = |text: Option<String>| text.map(Ok).unwrap_or_else(stdin);
    if let CtxCommand::Call { tool, args } = command {
        let text = match args.as_deref() {
            None => "{}".to_string(),
            Some("-") => stdin()?,
            Some(t) => t.to_string(),
        };
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| format!("the arguments of {tool} are not JSON: {e}"))?;
        if !value.is_object() {
            return Err(format!("the arguments of {tool} must be a JSON object"));
        }
        return Ok((tool, value));
    }
    let (tool, args) = match command {
        CtxCommand::Call { .. } | CtxCommand::Tools { .. } => unreachable!("handled above"),
        CtxCommand::Send { message } => ("channel_send", json!({ "message": content(message)? })),
        CtxCommand::Read { since, page, limit } => (
            "channel_read",
            json!({ "since": since, "after": page.after, "before": page.before, "limit": limit }),
        ),
        CtxCommand::Peek { page, limit } => (
            "channel_peek",
            json!({ "after": page.after, "before": page.before, "limit": limit }),
        ),
        CtxCommand::Inbox { peek: false } => ("inbox_check", json!({})),
        CtxCommand::Inbox { peek: true } => ("inbox_peek", json!({})),
        CtxCommand::Ack { until } => ("inbox_ack", json!({ "until": until })),
        CtxCommand::Agents => ("workflow_agents", json!({})),
        CtxCommand::Doc { command } => match command {
            DocCommand::Read { file } => ("document_read", json!({ "file": file })),
            DocCommand::Write { file, text } => (
                "document_write",
                json!({ "file": file, "content": content(text)? }),
            ),
            DocCommand::Append { file, text } => (
                "document_append",
                json!({ "file": file, "content": content(text)? }),
            ),
            DocCommand::List => ("document_list", json!({})),
            DocCommand::Create { file, text } => (
                "document_create",
                json!({ "file": file, "content": content(text)? }),
            ),
            DocCommand::Delete { file } => ("document_delete", json!({ "file": file })),
        },
    };
    Ok((tool.to_string(), args))
}

/// Drops `null` arguments (optional ones not given).
fn arguments(args: Value) -> Map<String, Value> {
    match args {
        Value::Object(m) => m.into_iter().filter(|(_, v)| !v.is_null()).collect(),
        _ => Map::new(),
    }
}

async fn call(url: &str, token: &str, tool: String, args: Map<String, Value>, json: bool) -> u8 {
    let tool = tool.as_str();
    let transport = StreamableHttpClientTransport::with_client(
        crate::http_client::client(),
        StreamableHttpClientTransportConfig::with_uri(url.to_string())
            .auth_header(token.to_string()),
    );
    let client = match ().serve(transport).await {
        Ok(c) => c,
        Err(e) => {
            errln!("cannot reach the awtui instance at {url}: {e}");
            return EXIT_UNREACHABLE;
        }
    };
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await;
    let _ = client.cancel().await;
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            errln!("{tool} failed: {e}");
            return exit::FAILED;
        }
    };
    let text: String = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    if result.is_error == Some(true) {
        errln!("{tool}: {text}");
        return exit::FAILED;
    }
    // Results carry their JSON once, as text.
    let value = serde_json::from_str(&text).unwrap_or(json!(text));
    if json {
        crate::output::json(value.to_string());
    } else {
        // Scripts get the text as it is; a terminal never gets an agent's
        // escape sequences.
        let text = human(tool, &value);
        if std::io::stdout().is_terminal() {
            crate::output::raw(crate::sanitize::for_terminal(&text));
        } else {
            crate::output::raw(text);
        }
    }
    exit::OK
}

/// A readable rendering of a tool result for scripts and people.
fn human(tool: &str, v: &Value) -> String {
    let entries = |list: &Value| -> String {
        list.as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                format!(
                    "#{} {}: {}\n",
                    e["id"],
                    e["from"].as_str().unwrap_or("?"),
                    e["message"].as_str().unwrap_or("")
                )
            })
            .collect()
    };
    match tool {
        "channel_send" => format!("#{}\n", v["id"]),
        "channel_read" | "channel_peek" => entries(v.get("entries").unwrap_or(v)),
        "inbox_check" | "inbox_peek" => entries(v.get("messages").unwrap_or(v)),
        "document_read" => v["content"].as_str().unwrap_or("").to_string(),
        "document_list" => v["documents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|d| format!("{d}\n"))
            .collect(),
        _ => format!("{v}\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn tool_call(argv: &[&str]) -> Result<(String, Map<String, Value>), String> {
        let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
        let Some(Command::Ctx(CtxArgs { command, .. })) = cli.command else {
            panic!("not a ctx command");
        };
        request(command).map(|(tool, args)| (tool, arguments(args)))
    }

    #[test]
    fn read_and_peek_page_with_after_and_before() {
        let (tool, args) =
            tool_call(&["awtui", "ctx", "read", "--after", "0", "--limit", "1000"]).unwrap();
        assert_eq!(tool, "channel_read");
        assert_eq!(Value::Object(args), json!({"after": "0", "limit": 1000}));
        let (tool, args) = tool_call(&["awtui", "ctx", "peek", "--before", "#42"]).unwrap();
        assert_eq!(tool, "channel_peek");
        assert_eq!(Value::Object(args), json!({"before": "#42"}));
        for conflicting in [
            &["awtui", "ctx", "read", "--since", "3", "--after", "4"][..],
            &["awtui", "ctx", "peek", "--after", "3", "--before", "9"][..],
        ] {
            let e = tool_call(conflicting).unwrap_err();
            assert!(e.contains("cannot be used with"), "{e}");
        }
    }
}
