//! The API backends (`anthropic`, `openai`, and OpenAI-compatible servers
//! such as Ollama): a streaming model loop in-process, with the context tools
//! given to the model as functions and executed as the agent.

mod anthropic;
mod openai;
pub mod sse;

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::event::{BackendEvent, Usage, UsageMode};
use super::outcome::{Exit, OutcomeBuilder};
use super::turn::{RunningTurn, TurnUpdate};
use crate::workflow::BackendKind;

/// A tool the model may call.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments.
    pub input_schema: Value,
}

/// What a tool call returned.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResult {
    pub content: String,
    pub is_error: bool,
}

/// Runs tools for an API agent, as that agent (the context tools).
pub trait ToolExecutor: Send + Sync {
    /// The tools offered to the model.
    fn specs(&self) -> Vec<ToolSpec>;
    /// Runs one call.
    fn call(&self, name: &str, arguments: &Value) -> ToolResult;
}

/// No tools at all: for API agents of a workflow without a shared context
/// (and the benches that run a backend without one).
pub struct NoTools;

impl ToolExecutor for NoTools {
    fn specs(&self) -> Vec<ToolSpec> {
        Vec::new()
    }

    fn call(&self, name: &str, _arguments: &Value) -> ToolResult {
        ToolResult {
            content: format!("there is no tool '{name}': this workflow has no shared context"),
            is_error: true,
        }
    }
}

/// Where and how to reach a model API.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiConfig {
    pub kind: BackendKind,
    /// e.g. `https://api.anthropic.com` or `http://localhost:11434/v1`.
    pub base_url: String,
    /// The key, read from the configured variable; `None` for keyless local servers.
    pub api_key: Option<String>,
    /// Model name as the API knows it (provider prefix removed).
    pub model: String,
    /// Model calls allowed in one turn (each tool round is one).
    pub max_steps: u32,
    pub max_tokens: u32,
}

/// Default model calls per turn.
pub const DEFAULT_MAX_STEPS: u32 = 20;

impl ApiConfig {
    /// The configuration for `model` on backend `kind`: the provider prefix
    /// picks the default server (`ollama/` → `http://localhost:11434/v1`);
    /// `base_url` and `api_key_env` override.
    pub fn new(
        kind: BackendKind,
        model: &str,
        base_url: Option<&str>,
        api_key_env: Option<&str>,
    ) -> Self {
        Self::with_env(kind, model, base_url, api_key_env, &[])
    }

    /// Like [`ApiConfig::new`], the key read from the agent's own `env:`
    /// first, then from awtui's environment.
    pub fn with_env(
        kind: BackendKind,
        model: &str,
        base_url: Option<&str>,
        api_key_env: Option<&str>,
        env: &[(String, String)],
    ) -> Self {
        let (prefix, name) = model.split_once('/').unwrap_or(("", model));
        let (default_url, default_key) = match (kind, prefix) {
            (_, "ollama") => ("http://localhost:11434/v1", None),
            (BackendKind::Anthropic, _) => ("https://api.anthropic.com", Some("ANTHROPIC_API_KEY")),
            _ => ("https://api.openai.com/v1", Some("OPENAI_API_KEY")),
        };
        let key_var = api_key_env.or(default_key);
        let from_agent = |var: &str| {
            env.iter()
                .rev()
                .find(|(k, _)| k == var)
                .map(|(_, v)| v.clone())
        };
        ApiConfig {
            kind,
            base_url: base_url
                .unwrap_or(default_url)
                .trim_end_matches('/')
                .to_string(),
            api_key: key_var
                .and_then(|v| from_agent(v).or_else(|| std::env::var(v).ok()))
                .filter(|k| !k.is_empty()),
            model: if matches!(prefix, "anthropic" | "openai" | "ollama") {
                name
            } else {
                model
            }
            .to_string(),
            max_steps: DEFAULT_MAX_STEPS,
            max_tokens: 8192,
        }
    }
}

/// Per-turn reporting shared by both API dialects.
struct Reporter<'a> {
    tx: &'a mpsc::UnboundedSender<TurnUpdate>,
    builder: &'a mut OutcomeBuilder,
}

impl Reporter<'_> {
    fn emit(&mut self, event: BackendEvent) {
        self.builder.apply(&event);
        let _ = self.tx.send(TurnUpdate::Event(event));
    }
}

/// One model call's result, in either dialect.
#[derive(Debug, Default)]
struct Step {
    text: String,
    calls: Vec<Call>,
    usage: Usage,
    /// Whether the model stopped to call tools.
    wants_tools: bool,
}

#[derive(Debug, Clone)]
struct Call {
    id: String,
    name: String,
    arguments: String,
}

/// POSTs a streaming request and feeds each SSE event to `on_event`.
async fn stream_request(
    request: reqwest::RequestBuilder,
    mut on_event: impl FnMut(sse::SseEvent) -> Result<(), String>,
) -> Result<(), String> {
    let response = request
        .send()
        .await
        .map_err(|e| format!("cannot reach the model API: {e}"))?;
    let status = response.status();
    if !status.is_success() {
        let body = response.text().await.unwrap_or_default();
        let detail = serde_json::from_str::<Value>(&body)
            .ok()
            .and_then(|v| {
                v.pointer("/error/message")
                    .or_else(|| v.get("message"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or(body);
        return Err(format!(
            "the model API answered {status}: {}",
            detail.trim()
        ));
    }
    let mut decoder = sse::SseDecoder::default();
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| format!("the model API stream broke: {e}"))?;
        for event in decoder.feed(&chunk) {
            on_event(event)?;
        }
    }
    Ok(())
}

/// Runs the model loop: call, run the tools it asks for, call again, until
/// it answers or the step limit is reached.
async fn model_loop(
    http: reqwest::Client,
    cfg: ApiConfig,
    system: String,
    prompt: String,
    tools: Arc<dyn ToolExecutor>,
    reporter: &mut Reporter<'_>,
) -> Result<(), String> {
    let specs = tools.specs();
    let mut conversation = match cfg.kind {
        BackendKind::Anthropic => anthropic::Conversation::start(&prompt).into(),
        _ => openai::Conversation::start(&system, &prompt).into(),
    };
    for _ in 0..cfg.max_steps {
        reporter.emit(BackendEvent::Thinking);
        let step = match &conversation {
            Dialect::Anthropic(c) => {
                anthropic::call(&http, &cfg, &system, c, &specs, reporter).await?
            }
            Dialect::Openai(c) => openai::call(&http, &cfg, c, &specs, reporter).await?,
        };
        reporter.emit(BackendEvent::Usage { usage: step.usage });
        if !step.wants_tools || step.calls.is_empty() {
            reporter.emit(BackendEvent::Final { text: step.text });
            return Ok(());
        }
        let mut results = Vec::new();
        for call in &step.calls {
            reporter.emit(BackendEvent::ToolCall {
                name: call.name.clone(),
            });
            let args: Value =
                serde_json::from_str(&call.arguments).unwrap_or(Value::Object(Default::default()));
            let result = tools.call(&call.name, &args);
            reporter.emit(BackendEvent::ToolDone {
                name: call.name.clone(),
                ok: !result.is_error,
            });
            results.push(result);
        }
        match &mut conversation {
            Dialect::Anthropic(c) => c.push_step(&step, &results),
            Dialect::Openai(c) => c.push_step(&step, &results),
        }
    }
    Err(format!(
        "no final answer after {} model calls (the step limit of one turn)",
        cfg.max_steps
    ))
}

enum Dialect {
    Anthropic(anthropic::Conversation),
    Openai(openai::Conversation),
}

impl From<anthropic::Conversation> for Dialect {
    fn from(c: anthropic::Conversation) -> Self {
        Dialect::Anthropic(c)
    }
}

impl From<openai::Conversation> for Dialect {
    fn from(c: openai::Conversation) -> Self {
        Dialect::Openai(c)
    }
}

/// Starts an API turn. Must be called inside a tokio runtime.
pub fn spawn(
    cfg: ApiConfig,
    system: String,
    prompt: String,
    tools: Arc<dyn ToolExecutor>,
    timeout: Option<Duration>,
) -> RunningTurn {
    let (tx, rx) = mpsc::unbounded_channel();
    let (stop_tx, stop_rx) = oneshot::channel();
    tokio::spawn(async move {
        let mut builder = OutcomeBuilder::new(UsageMode::PerStep);
        let http = crate::http_client::client();
        let exit = {
            let mut reporter = Reporter {
                tx: &tx,
                builder: &mut builder,
            };
            let run = model_loop(http, cfg, system, prompt, tools, &mut reporter);
            let deadline = async {
                match timeout {
                    Some(t) => tokio::time::sleep(t).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                result = run => match result {
                    Ok(()) => Exit::Code(Some(0)),
                    Err(message) => {
                        reporter.emit(BackendEvent::Error { message });
                        Exit::Code(Some(1))
                    }
                },
                Ok(()) = stop_rx => Exit::Stopped,
                () = deadline => Exit::TimedOut(timeout.unwrap_or_default()),
            }
        };
        let _ = tx.send(TurnUpdate::Done(builder.finish(exit, "")));
    });
    RunningTurn::new(None, rx, stop_tx)
}

/// An API backend (`anthropic`, `openai`) in the backend registry.
pub struct ApiBackend {
    kind: BackendKind,
    /// The key variable when `api_key_env:` names none.
    default_key: &'static str,
}

/// The Anthropic Messages API backend.
pub const ANTHROPIC: ApiBackend = ApiBackend {
    kind: BackendKind::Anthropic,
    default_key: "ANTHROPIC_API_KEY",
};

/// The OpenAI Chat Completions (and compatible servers) backend.
pub const OPENAI: ApiBackend = ApiBackend {
    kind: BackendKind::Openai,
    default_key: "OPENAI_API_KEY",
};

impl super::Backend for ApiBackend {
    fn kind(&self) -> BackendKind {
        self.kind
    }

    fn program(&self, _command: Option<&[String]>) -> Option<String> {
        None
    }

    fn needs_model(&self) -> bool {
        true
    }

    fn in_process(&self) -> bool {
        true
    }

    /// The model sees only awtui's tools (no MCP client in-process).
    fn supports_extra_mcp(&self) -> bool {
        false
    }

    fn tools_unsupported(&self) -> Option<&'static str> {
        Some(
            "its model runs in-process and is given only awtui's context tools (no shell, no \
             file tools); use a CLI backend such as claude for those",
        )
    }

    fn invocation(&self, _req: &super::TurnRequest) -> Option<super::Invocation> {
        None
    }

    /// The key is set (the agent's `env:` or awtui's environment); a local
    /// OpenAI-compatible server (`ollama/…` or `base_url:`) needs none
    /// unless `api_key_env:` names one.
    fn preflight(
        &self,
        agent: &crate::workflow::AgentDef,
        _workdir: &std::path::Path,
    ) -> Result<(), super::BackendError> {
        let local = agent
            .model
            .as_deref()
            .is_some_and(|m| m.starts_with("ollama/"))
            || agent.base_url.is_some();
        if self.kind == BackendKind::Openai && local && agent.api_key_env.is_none() {
            return Ok(());
        }
        let variable = agent.api_key_env.as_deref().unwrap_or(self.default_key);
        let in_agent_env = agent
            .env
            .iter()
            .any(|(k, v)| k == variable && !v.value.is_empty());
        if in_agent_env || std::env::var_os(variable).is_some_and(|v| !v.is_empty()) {
            Ok(())
        } else {
            Err(super::BackendError::MissingKey {
                backend: self.kind.name(),
                variable: variable.into(),
                hint: format!("export {variable}=…"),
            })
        }
    }

    fn start(
        &self,
        req: super::TurnRequest,
        tools: Arc<dyn ToolExecutor>,
        _runtime: &dyn crate::agents::runtime::Runtime,
    ) -> Result<RunningTurn, super::BackendError> {
        let cfg = ApiConfig::with_env(
            self.kind,
            req.model.as_deref().unwrap_or_default(),
            req.base_url.as_deref(),
            req.api_key_env.as_deref(),
            &req.env,
        );
        Ok(spawn(cfg, req.system_prompt, req.prompt, tools, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_from_model_names() {
        let c = ApiConfig::new(BackendKind::Openai, "ollama/llama3", None, None);
        assert_eq!(
            (c.base_url.as_str(), c.model.as_str(), c.api_key.is_none()),
            ("http://localhost:11434/v1", "llama3", true)
        );
        let c = ApiConfig::new(
            BackendKind::Anthropic,
            "anthropic/claude-sonnet-4-5",
            Some("http://127.0.0.1:9/"),
            None,
        );
        assert_eq!(
            (c.base_url.as_str(), c.model.as_str()),
            ("http://127.0.0.1:9", "claude-sonnet-4-5")
        );
        let c = ApiConfig::new(BackendKind::Openai, "gpt-5", None, None);
        assert_eq!(
            (c.base_url.as_str(), c.model.as_str()),
            ("https://api.openai.com/v1", "gpt-5")
        );
    }
}
