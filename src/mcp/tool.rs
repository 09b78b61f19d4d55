//! What an MCP tool is: one type carrying its name, its description, its
//! argument struct (from which its input schema is derived) and its
//! handler. [`super::registry`] lists the types once; the names, the
//! `tools/list` specs and the dispatch of `tools/call` all come from that
//! list.

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::schema::input_schema;
use super::tools::{ToolBox, ToolError, ToolSpec, parse};
use crate::context::SharedContext;
use crate::tasks::TaskBoard;

/// A tool answered at once (on a blocking thread: store calls may fsync).
pub trait Tool: 'static {
    /// The exact name agents call.
    const NAME: &'static str;
    /// What the agent reads to decide when and how to call it.
    const DESCRIPTION: &'static str;
    /// Changes nothing (a hint for clients that ask before running tools).
    const READ_ONLY: bool = false;
    /// May remove or overwrite content.
    const DESTRUCTIVE: bool = false;
    /// An example of what it returns (the task tools': `awtui ctx tools`
    /// and docs/tasks.md show it; a test checks it against real results).
    const EXAMPLE: Option<Example> = None;
    /// The arguments object, parsed before [`Tool::call`]; its JSON schema
    /// is the tool's input schema.
    type Args: DeserializeOwned + JsonSchema;
    /// What it acts on: the whole [`ToolBox`], or the task board alone.
    type On: Reach + ?Sized;
    /// Carries out one call for `caller`.
    fn call(on: &Self::On, caller: &str, args: Self::Args) -> Result<Value, ToolError>;
}

/// What a tool returns, as an example of a successful answer (compact
/// JSON) and, when the tool has another answer that is not an error, that
/// one.
#[derive(Clone, Copy, Debug)]
pub struct Example {
    /// A successful result.
    pub returns: &'static str,
    /// Another result that is not a tool error (a claim someone else got).
    pub otherwise: Option<&'static str>,
}

/// A tool that waits (for a person's decision) and is answered
/// asynchronously; offered only to agents whose CLI asks through awtui.
pub trait WaitingTool: 'static {
    /// The exact name the CLI calls.
    const NAME: &'static str;
    /// What `tools/list` says of it.
    const DESCRIPTION: &'static str;
    /// The arguments object (its schema is the input schema).
    type Args: DeserializeOwned + JsonSchema;
    /// Refuses a caller before its arguments are read.
    fn admit(context: &SharedContext, caller: &str) -> Result<(), ToolError>;
    /// Waits for the answer; `gone` completes when the caller stops
    /// waiting.
    fn call<'a>(
        context: &'a SharedContext,
        caller: &'a str,
        args: Self::Args,
        gone: BoxFuture<'a, ()>,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send + 'a;
}

/// Where a call is carried out: the server's tool box, or a task board
/// alone (the caw tools' tests and benchmarks).
#[derive(Clone, Copy, Debug)]
pub enum Scope<'a> {
    /// Everything the server's tools act on.
    Box(&'a ToolBox),
    /// Only the task board.
    Board(&'a TaskBoard),
}

/// What a tool acts on, reached from a [`Scope`].
pub trait Reach {
    /// Whether a task board alone reaches it (the caw tools).
    const ON_BOARD: bool;
    /// It, if `scope` reaches it.
    fn reach(scope: Scope<'_>) -> Option<&Self>;
}

impl Reach for ToolBox {
    const ON_BOARD: bool = false;
    fn reach(scope: Scope<'_>) -> Option<&Self> {
        match scope {
            Scope::Box(tools) => Some(tools),
            Scope::Board(_) => None,
        }
    }
}

impl Reach for TaskBoard {
    const ON_BOARD: bool = true;
    fn reach(scope: Scope<'_>) -> Option<&Self> {
        match scope {
            Scope::Box(tools) => Some(tools.context().tasks()),
            Scope::Board(board) => Some(board),
        }
    }
}

/// A tool's call with its type erased: `None` when the scope does not
/// reach what the tool acts on.
type RunNow = fn(Scope<'_>, &str, Option<Map<String, Value>>) -> Option<Result<Value, ToolError>>;

/// A waiting tool's call with its type erased.
pub type RunWaiting = for<'a> fn(
    &'a SharedContext,
    &'a str,
    Option<Map<String, Value>>,
    BoxFuture<'a, ()>,
) -> BoxFuture<'a, Result<Value, ToolError>>;

/// How a registered tool runs.
#[derive(Clone, Copy)]
pub enum Run {
    /// At once ([`Tool`]).
    Now(RunNow),
    /// Waiting for a decision ([`WaitingTool`]).
    Waiting(RunWaiting),
}

/// One entry of the registry: a tool type, its type erased.
#[derive(Clone, Copy)]
pub struct Registered {
    /// The tool's name.
    pub name: &'static str,
    /// Whether a task board alone runs it (a caw tool).
    pub on_board: bool,
    /// How it runs.
    pub run: Run,
    /// Its example result, if it shows one.
    pub example: Option<Example>,
    spec: fn() -> ToolSpec,
}

impl std::fmt::Debug for Registered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registered")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Registered {
    /// The entry of tool `T`.
    pub const fn now<T: Tool>() -> Registered {
        Registered {
            name: T::NAME,
            on_board: <T::On as Reach>::ON_BOARD,
            run: Run::Now(run_now::<T>),
            example: T::EXAMPLE,
            spec: spec_now::<T>,
        }
    }

    /// The entry of waiting tool `T`.
    pub const fn waiting<T: WaitingTool>() -> Registered {
        Registered {
            name: T::NAME,
            on_board: false,
            run: Run::Waiting(run_waiting::<T>),
            example: None,
            spec: spec_waiting::<T>,
        }
    }

    /// What `tools/list` shows of it.
    pub fn spec(&self) -> ToolSpec {
        (self.spec)()
    }
}

fn spec_now<T: Tool>() -> ToolSpec {
    ToolSpec {
        name: T::NAME,
        description: T::DESCRIPTION,
        input_schema: input_schema::<T::Args>(),
        read_only: T::READ_ONLY,
        destructive: T::DESTRUCTIVE,
    }
}

fn spec_waiting<T: WaitingTool>() -> ToolSpec {
    ToolSpec {
        name: T::NAME,
        description: T::DESCRIPTION,
        input_schema: input_schema::<T::Args>(),
        read_only: false,
        destructive: false,
    }
}

fn run_now<T: Tool>(
    scope: Scope<'_>,
    caller: &str,
    args: Option<Map<String, Value>>,
) -> Option<Result<Value, ToolError>> {
    let on = T::On::reach(scope)?;
    Some(parse::<T::Args>(T::NAME, args).and_then(|args| T::call(on, caller, args)))
}

fn run_waiting<'a, T: WaitingTool>(
    context: &'a SharedContext,
    caller: &'a str,
    args: Option<Map<String, Value>>,
    gone: BoxFuture<'a, ()>,
) -> BoxFuture<'a, Result<Value, ToolError>> {
    Box::pin(async move {
        T::admit(context, caller)?;
        let args = parse::<T::Args>(T::NAME, args)?;
        T::call(context, caller, args, gone).await
    })
}

/// Declares a [`Tool`]: its type (with its doc comment), name, argument
/// struct, what it acts on ([`Tool::On`]), description, hints, example
/// result and handler, side by side:
///
/// ```ignore
/// define_tool! {
///     /// Posts to the channel as the caller.
///     ChannelSend = "channel_send", SendArgs, ToolBox,
///     "Post a message to the shared channel as yourself. …",
///     |tools, caller, args| tools.channel_send(caller, &args.message)
/// }
/// ```
macro_rules! define_tool {
    (
        $(#[$doc:meta])*
        $tool:ident = $name:literal, $args:ty, $on:ty,
        $description:expr,
        $(read_only: $read_only:literal,)?
        $(destructive: $destructive:literal,)?
        $(example: $example:expr,)?
        |$on_name:ident, $caller:ident, $a:pat_param| $body:expr
    ) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub(super) struct $tool;

        impl $crate::mcp::tool::Tool for $tool {
            const NAME: &'static str = $name;
            const DESCRIPTION: &'static str = $description;
            $(const READ_ONLY: bool = $read_only;)?
            $(const DESTRUCTIVE: bool = $destructive;)?
            $(const EXAMPLE: Option<$crate::mcp::tool::Example> = Some($example);)?
            type Args = $args;
            type On = $on;
            fn call(
                $on_name: &$on,
                $caller: &str,
                $a: $args,
            ) -> Result<serde_json::Value, $crate::mcp::tools::ToolError> {
                $body
            }
        }
    };
}
pub(super) use define_tool;
