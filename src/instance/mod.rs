//! Instances that outlive the terminal that started them: where each keeps
//! its files ([`layout`]), the one-engine-per-instance lock ([`lock`]), the
//! per-user registry that lets any directory find it ([`registry`]), the
//! `agent@instance` namespace ([`target`]), the control endpoint remote
//! commands and `attach` speak ([`control`], [`query`]), background starts
//! ([`daemon`]) and standalone agents ([`standalone`]).
//!
//! Every front end that runs an engine persistently does the same three
//! steps, so `list`, `send`, `stop`, `peek` and `attach` see it:
//!
//! ```ignore
//! let claim = instance::claim(&workflow, &name)?;          // lock, before setup runs
//! let (engine, events) = Engine::start(workflow, options).await?;
//! let served = instance::serve(&engine, claim, mode).await?; // control socket + registry
//! // … drive the engine …
//! engine.wait().await;
//! served.close().await;                                     // unregister, release the lock
//! ```

pub mod added;
pub mod control;
pub mod daemon;
pub mod layout;
pub mod lock;
pub mod owner;
pub mod process;
pub mod query;
pub mod registry;
pub mod standalone;
pub mod target;

use std::path::{Path, PathBuf};

use crate::agents::runner::RunMode;
use crate::engine::Engine;
use crate::mcp::Endpoint;
use crate::workflow::Workflow;

pub use control::{ControlError, ControlHandle, connect};
pub use registry::InstanceInfo;

/// Why an instance could not be claimed or served.
#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    /// A folder could not be named or made.
    #[error(transparent)]
    Layout(#[from] layout::LayoutError),
    /// The instance folder could not be named (bad instance name, bad
    /// `context.config.dir`) or found.
    #[error(transparent)]
    Home(#[from] layout::HomeError),
    /// Another engine serves this instance.
    #[error(
        "instance '{instance}' is already running{}; attach to it with `awtui attach {instance}` or stop it with `awtui stop @{instance}`",
        .pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
    )]
    AlreadyRunning {
        /// The instance.
        instance: String,
        /// Its engine's process, when known.
        pid: Option<u32>,
        /// Its folder.
        home: PathBuf,
    },
    /// The lock file could not be used.
    #[error(transparent)]
    Lock(lock::LockError),
    /// The control endpoint could not be served.
    #[error(transparent)]
    Control(#[from] ControlError),
    /// The registry could not be written.
    #[error(transparent)]
    Registry(#[from] registry::RegistryError),
    /// The instance belongs to another workflow file.
    #[error(transparent)]
    Owner(#[from] owner::OwnerError),
}

/// An instance this process has locked but not yet served: taken before
/// the engine starts, so setup never runs twice for one instance.
#[derive(Debug)]
pub struct Claim {
    lock: lock::InstanceLock,
    home: PathBuf,
    /// Where the control socket goes (and the control token when there is
    /// no state dir): `home`, or its private
    /// subfolder when others can write to `home`.
    private: PathBuf,
    instance: String,
    workflow_name: String,
    workflow_file: PathBuf,
    workdir: PathBuf,
    agents: Vec<String>,
    standalone: bool,
    log: Option<PathBuf>,
}

impl Claim {
    /// The instance folder.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Records where this process's output goes (background instances).
    pub fn with_log(mut self, log: PathBuf) -> Self {
        self.log = Some(log);
        self
    }
}

/// Locks the instance `instance` of `workflow`, creating its folder (0700
/// when awtui makes it; an existing folder keeps its mode).
/// Fails with [`InstanceError::AlreadyRunning`] when another process serves it.
pub fn claim(workflow: &Workflow, instance: &str) -> Result<Claim, InstanceError> {
    let home = layout::home(workflow, instance)?;
    let private = layout::private_dir(&home)?;
    // A killed predecessor may still be releasing the lock.
    let owner_alive = || registry::read_home(&home).is_some_and(|i| process::process_alive(i.pid));
    let _ = lock::is_held_by_live(&home, owner_alive);
    let lock = lock::InstanceLock::acquire(&home).map_err(|e| match e {
        lock::LockError::Held { pid, home } => InstanceError::AlreadyRunning {
            instance: instance.to_string(),
            pid: registry::read_home(&home).map(|i| i.pid).or(pid),
            home,
        },
        other => InstanceError::Lock(other),
    })?;
    owner::check_and_record(&home, workflow, instance)?;
    Ok(Claim {
        lock,
        home,
        private,
        instance: instance.to_string(),
        workflow_name: workflow.name.clone(),
        workflow_file: workflow.file.clone(),
        workdir: workflow.base_dir.clone(),
        agents: workflow.agent_names(),
        standalone: standalone::is_standalone(&workflow.file),
        log: None,
    })
}

/// A served instance: locked, reachable on its control socket, registered.
/// Dropping it unregisters and releases the lock; [`Served::close`] also
/// lets connected clients read the last events first.
#[derive(Debug)]
pub struct Served {
    info: InstanceInfo,
    control: Option<ControlHandle>,
    _lock: lock::InstanceLock,
}

/// Serves `engine`'s control endpoint and records the instance in its
/// folder and in the registry, so other terminals can find and steer it.
pub async fn serve(engine: &Engine, claim: Claim, mode: RunMode) -> Result<Served, InstanceError> {
    let home = claim.home;
    let mcp_socket = Endpoint::read(&home).ok().flatten().and_then(|e| e.socket);
    let info = InstanceInfo {
        instance: claim.instance,
        workflow_name: claim.workflow_name,
        workflow: claim.workflow_file,
        workdir: claim.workdir,
        control: layout::control_socket(&claim.private)?,
        token_file: layout::control_token(&home, &claim.private)?,
        pid: std::process::id(),
        mode: match mode {
            RunMode::Run => "run",
            RunMode::Start => "start",
        }
        .to_string(),
        standalone: claim.standalone,
        agents: claim.agents,
        mcp_url: engine.mcp_url().to_string(),
        mcp_socket,
        log: claim.log,
        state_dir: layout::state_dir().ok(),
        started: chrono::Utc::now(),
        home,
    };
    let control = control::listen(engine, &info).await?;
    registry::register(&info)?;
    Ok(Served {
        info,
        control: Some(control),
        _lock: claim.lock,
    })
}

impl Served {
    /// The instance's record.
    pub fn info(&self) -> &InstanceInfo {
        &self.info
    }

    /// Unregisters the instance, stops the control endpoint (clients get
    /// the events already sent, then end of file) and releases the lock.
    pub async fn close(mut self) {
        registry::unregister(&self.info);
        if let Some(control) = self.control.take() {
            control.stop().await;
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        registry::unregister(&self.info);
    }
}
