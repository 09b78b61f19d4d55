//! The engine owns one running instance: workflow, context store, MCP
//! server, runner and agents. Front ends send [`Command`]s, get each one's
//! [`Reply`] privately, and render the [`EngineEvent`]s everyone sees; they
//! never touch files or processes themselves.

mod announce;
mod answers;
mod behind;
mod jobs;
mod lane;
pub use crate::vocab::command;
mod driver;
pub use crate::vocab::event;
pub mod launch;
pub use crate::vocab::link;
pub mod metrics;
pub mod ops;
pub mod orphans;
mod outbox;
pub mod pause;
pub mod sessions;
pub mod spawn;
pub mod tasks;
mod turns;
pub mod watch;
mod workspace_cmd;

use std::path::PathBuf;

use tokio::sync::{broadcast, mpsc};
use tokio::task::JoinHandle;

pub use command::{Command, CommandError, CommandFailed, ErrorKind, Reply};
pub use event::EngineEvent;
pub use link::{CommandSender, Link, RequestError};

use crate::agents::backend::{self, BackendError};
use crate::agents::runner::{RunMode, RunOutcome, Runner, RunnerConfig};
use crate::context::SharedContext;
use crate::context::{ContextError, ContextStore, FileStore, MemoryStore, StoreLayout};
use crate::mcp::{McpConfig, McpError, McpServer, ToolBox};
use crate::tasks::journal::FileJournal;
use crate::tasks::{TaskBoard, TaskStore};
use crate::workflow::setup::{self, SetupError};
use crate::workflow::{ContextConfig, DEFAULT_CHANNEL, DEFAULT_DOCUMENT, Workflow};

/// How many events a slow front end may fall behind before it misses some.
const EVENT_CAPACITY: usize = 8192;

/// How an instance is started.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    pub instance: String,
    /// `Run` ends when everyone is idle; `Start` runs until stopped.
    pub mode: RunMode,
    /// Watch the document folder for edits made outside the engine (the
    /// control room turns it on; headless hosts do without — see
    /// [`watch`]).
    pub watch_documents: bool,
}

/// Why an instance could not start.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error("agent '{agent}' cannot run: {source}")]
    Backend {
        agent: String,
        #[source]
        source: BackendError,
    },
    #[error(transparent)]
    Context(#[from] ContextError),
    #[error(transparent)]
    Mcp(#[from] McpError),
    #[error("cannot create {path}: {source}")]
    StateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("agent '{agent}': cannot prepare its worktree: {source}")]
    Workspace {
        agent: String,
        #[source]
        source: crate::workspace::WorkspaceError,
    },
    #[error("cannot open the task journal {path}: {source}")]
    Tasks {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open the approvals journal {path}: {source}")]
    Approvals {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A running instance.
pub struct Engine {
    commands: CommandSender,
    events: broadcast::Sender<EngineEvent>,
    context: SharedContext,
    mcp_url: String,
    instance: String,
    task: JoinHandle<RunOutcome>,
    /// Outside edits to a file context's documents (dropped with the engine).
    _watch: Option<watch::Watch>,
}

/// Checks that every agent's backend can run (CLI installed, API key set).
pub fn preflight(workflow: &Workflow) -> Vec<EngineError> {
    workflow
        .agents
        .iter()
        .filter_map(|a| {
            crate::agents::runtime::preflight(a, &workflow.base_dir)
                .err()
                .map(|source| EngineError::Backend {
                    agent: a.name.clone(),
                    source,
                })
        })
        .collect()
}

/// Connects every host an agent was placed on; a host that fails is
/// reported in `notices` and its agents' turns fail with why, while the
/// others run.
async fn connect_hosts(
    workflow: &Workflow,
    places: &std::collections::HashMap<String, Option<String>>,
    state_root: &std::path::Path,
    mcp_port: Option<u16>,
    notices: &mut Vec<String>,
) -> std::collections::HashMap<
    String,
    Result<std::sync::Arc<crate::agents::runtime::ssh::Connection>, String>,
> {
    let hosts =
        crate::agents::runtime::ssh::connect_placed(workflow, places, state_root, mcp_port).await;
    for e in hosts.values().filter_map(|r| r.as_ref().err()) {
        notices.push(format!("{e}; its agents cannot run"));
    }
    hosts
}

fn layout(workflow: &Workflow) -> StoreLayout {
    let (channel, document, documents) = match workflow.context.files() {
        Some(f) => (f.channel.clone(), f.document.clone(), f.documents.clone()),
        None => (DEFAULT_CHANNEL.into(), DEFAULT_DOCUMENT.into(), Vec::new()),
    };
    StoreLayout {
        channel,
        document,
        documents,
        agents: workflow.agent_names(),
    }
}

/// A private temporary folder for agent configs when the context keeps
/// nothing on disk.
fn temporary_state_root(instance: &str) -> Result<PathBuf, EngineError> {
    let path = std::env::temp_dir().join(format!("awtui-{}-{instance}", std::process::id()));
    // A folder someone else made under that name is not used as it is.
    crate::fsutil::private_dir(&path).map_err(|e| EngineError::StateDir {
        path: path.clone(),
        source: std::io::Error::other(e.to_string()),
    })
}

impl Engine {
    /// Runs setup, opens the context, starts the MCP server and the driver.
    /// The returned receiver sees every event from the very first one (the
    /// kickoff), so nothing is missed between start and subscribe.
    pub async fn start(
        workflow: Workflow,
        options: EngineOptions,
    ) -> Result<(Engine, broadcast::Receiver<EngineEvent>), EngineError> {
        if let Some(e) = preflight(&workflow).into_iter().next() {
            return Err(e);
        }
        let wf = workflow.clone();
        let instance = options.instance.clone();
        let prepared = tokio::task::spawn_blocking(move || setup::prepare(&wf, &instance))
            .await
            .map_err(|e| SetupError::InstanceName(format!("setup panicked: {e}")))??;

        let layout = layout(&workflow);
        let mut notices = Vec::new();
        for b in backend::all() {
            if let Ok(true) = b.restore_workdir(&workflow.base_dir) {
                notices.push(format!(
                    "restored {} left behind by an earlier run",
                    b.workdir_config().unwrap_or("a config")
                ));
            }
        }
        let (store, state_root, temporary): (Box<dyn ContextStore>, PathBuf, bool) =
            match (&workflow.context, &prepared.context_dir) {
                (ContextConfig::File(_), Some(dir)) => {
                    let key = crate::instance::layout::channel_key(dir).map_err(|e| {
                        ContextError::Corrupt {
                            path: dir.clone(),
                            reason: format!("no place for the channel's seal key: {e}"),
                        }
                    })?;
                    let store = FileStore::open_sealed(dir, &layout, &key)?;
                    notices.extend(store.open_warnings().iter().cloned());
                    (Box::new(store), dir.clone(), false)
                }
                _ => (
                    Box::new(MemoryStore::new(&layout)?),
                    temporary_state_root(&prepared.instance)?,
                    true,
                ),
            };
        // The state's one stream of facts: the board and the approvals are
        // made with publishers of it, and the state below owns it.
        let bus = crate::context::Bus::new();
        let tasks = if temporary {
            TaskBoard::new(TaskStore::in_memory(), bus.publisher())
        } else {
            let (journal, replay) =
                FileJournal::open(&state_root).map_err(|source| EngineError::Tasks {
                    path: state_root.join(crate::tasks::journal::TASKS_FILE),
                    source,
                })?;
            notices.extend(replay.warnings.iter().cloned());
            TaskBoard::new(TaskStore::open(Box::new(journal), replay), bus.publisher())
                .with_worktree_root(crate::workspace::worktrees_root(
                    &workflow.base_dir,
                    &prepared.instance,
                ))
        };
        let workspaces = {
            let (wf, instance, root) = (
                workflow.clone(),
                prepared.instance.clone(),
                state_root.clone(),
            );
            tokio::task::spawn_blocking(move || {
                crate::workspace::prepare_all(&wf, &instance, &root)
            })
            .await
            .map_err(|e| SetupError::InstanceName(format!("workspace setup panicked: {e}")))?
            .map_err(|(agent, source)| EngineError::Workspace { agent, source })?
        };
        // What repairing the worktrees did goes to the channel, where the
        // person sees it with the turns it concerns.
        let (workspaces, repairs) = workspaces;
        let approvals = if temporary {
            crate::approvals::Approvals::in_memory(bus.publisher())
        } else {
            let legacy = state_root.join(crate::approvals::journal::APPROVALS_FILE);
            let path = crate::instance::layout::approvals_journal(&state_root).map_err(|e| {
                EngineError::Approvals {
                    path: legacy.clone(),
                    source: std::io::Error::other(e.to_string()),
                }
            })?;
            let (approvals, reopened) =
                crate::approvals::Approvals::open(&path, Some(&legacy), bus.publisher())
                    .map_err(|source| EngineError::Approvals { path, source })?;
            notices.extend(reopened.warnings);
            notices.extend(
                reopened
                    .closed
                    .iter()
                    .map(|d| format!("{} (left waiting by the last run)", d.summary())),
            );
            approvals
        };
        approvals.set_rules(
            workflow
                .agents
                .iter()
                .filter(|a| a.permissions == crate::workflow::Permissions::Ask)
                .map(|a| (a.name.clone(), a.approve.clone()))
                .collect(),
        );
        // Where each asking agent's commands run, from awtui's own
        // records: an allow rule covers a redirection only inside it. An
        // agent that may run on another host has none here (its files
        // there are not these), so only `/dev/null` is covered for it.
        approvals.set_workspaces(
            workflow
                .agents
                .iter()
                .filter(|a| a.host == crate::workflow::HostChoice::Local)
                .map(|a| {
                    let dir = workspaces
                        .get(&a.name)
                        .map_or_else(|| workflow.base_dir.clone(), |w| w.workdir.clone());
                    (a.name.clone(), dir)
                })
                .collect(),
        );
        approvals.set_timeout(
            workflow
                .limits
                .approval_timeout
                .unwrap_or(crate::approvals::DEFAULT_TIMEOUT),
        );
        let context = SharedContext::assemble(store, bus, tasks, approvals);
        let ctx_events = context.subscribe();
        let agents = workflow.agent_names();
        // `context: false`: agents share nothing, so there is no server to
        // reach (no tools, no AWTUI_MCP_URL, no `awtui ctx`).
        let mcp = if workflow.context == ContextConfig::Disabled {
            None
        } else {
            Some(
                McpServer::start(McpConfig {
                    context: context.clone(),
                    agents: agents.clone(),
                    instance_dir: prepared.context_dir.clone(),
                    tool_timeout: workflow.limits.tool_timeout,
                })
                .await?,
            )
        };

        if !temporary {
            let (root, names) = (state_root.clone(), agents.clone());
            if let Ok(ended) =
                tokio::task::spawn_blocking(move || orphans::reap(&root, &names)).await
            {
                notices.extend(ended);
            }
        }
        let mut config = RunnerConfig::from_workflow(&workflow, options.mode);
        let saved = sessions::load(&state_root, &agents);
        for agent in &mut config.agents {
            agent.session_id = saved.get(&agent.name).cloned();
        }
        let (events, first_receiver) = broadcast::channel(EVENT_CAPACITY);
        let watch = if temporary || !options.watch_documents {
            None
        } else {
            let (context, events) = (context.clone(), events.clone());
            tokio::task::spawn_blocking(move || watch::spawn(context, events))
                .await
                .ok()
                .flatten()
        };
        let places = crate::agents::runtime::placement::place(&workflow);
        let hosts = connect_hosts(
            &workflow,
            &places,
            &state_root,
            mcp.as_ref().map(|m| m.port()),
            &mut notices,
        )
        .await;
        let (commands, command_rx) = mpsc::unbounded_channel();
        let cx = launch::LaunchContext {
            places,
            hosts,
            tools: ToolBox::new(context.clone(), agents),
            mcp: mcp.as_ref().map(|m| launch::McpAccess {
                url: m.url().to_string(),
                tokens: m.tokens().clone(),
            }),
            context: context.clone(),
            prepared,
            workflow,
            state_root,
            workspaces,
        };
        let engine = Engine {
            commands: CommandSender::new(commands),
            events: events.clone(),
            context: context.clone(),
            mcp_url: cx.mcp.as_ref().map(|m| m.url.clone()).unwrap_or_default(),
            instance: options.instance,
            _watch: watch,
            task: tokio::spawn({
                let mut driver = driver::Driver::new(
                    Runner::new(config),
                    cx,
                    mcp,
                    events,
                    ctx_events,
                    command_rx,
                    notices,
                    temporary,
                );
                driver.repairs = repairs;
                driver.run()
            }),
        };
        Ok((engine, first_receiver))
    }

    /// Sends a command whose answer nobody waits for (ignored once the
    /// instance has ended).
    pub fn send(&self, command: Command) {
        self.commands.send(command);
    }

    /// Sends a command and returns its private answer.
    pub fn request(
        &self,
        command: Command,
    ) -> impl std::future::Future<Output = Result<Reply, RequestError>> + Send + 'static {
        self.commands.request(command)
    }

    /// A sender for commands, for front ends that run in their own task.
    pub fn commands(&self) -> CommandSender {
        self.commands.clone()
    }

    /// A front end's link to this engine, in this process: its commands
    /// and its stream of facts from now on.
    pub fn link(&self) -> Link {
        Link {
            commands: self.commands(),
            events: self.subscribe(),
        }
    }

    /// Where the engine's facts can be heard, for a front end that hands
    /// out receivers later (the control endpoint, one per connection).
    pub fn facts(&self) -> crate::vocab::Facts {
        crate::vocab::Facts::new(self.events.clone())
    }

    /// A receiver of events from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.events.subscribe()
    }

    /// The instance's state itself, for the closing report of a headless
    /// run (read after the engine ended) and for tests. Front ends do not
    /// use it: they reach the state through commands ([`Engine::link`]).
    pub fn context(&self) -> &SharedContext {
        &self.context
    }

    /// The MCP server's URL (empty with `context: false`: there is none).
    pub fn mcp_url(&self) -> &str {
        &self.mcp_url
    }

    /// The instance name.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// Waits until the instance ends and returns how.
    pub async fn wait(self) -> RunOutcome {
        self.task.await.unwrap_or(RunOutcome::Incomplete {
            pending: Vec::new(),
        })
    }
}
