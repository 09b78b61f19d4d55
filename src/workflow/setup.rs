//! Turning a validated workflow into a ready-to-start instance: the instance
//! name and folder, setup commands run, and every template expanded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::interpolate::{InterpolateError, Vars};
use super::schema::{ContextConfig, Located, Workflow};
use super::yaml::Pos;

/// Why an instance could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(
        "'{0}' is not a valid instance name: use letters, digits, '.', '_' and '-', starting with a letter or digit"
    )]
    InstanceName(String),
    #[error("{file}:{pos}: {what}: {source}")]
    Interpolate {
        file: PathBuf,
        pos: Pos,
        what: String,
        source: InterpolateError,
    },
    #[error("setup step {step} ({command}): cannot start sh: {source}")]
    Spawn {
        step: usize,
        command: String,
        source: std::io::Error,
    },
    #[error("setup step {step} failed with {status}: {command}{}", stderr_suffix(.stderr))]
    Failed {
        step: usize,
        command: String,
        status: String,
        stderr: String,
    },
}

fn stderr_suffix(stderr: &str) -> String {
    let s = stderr.trim_end();
    if s.is_empty() {
        " (no output on stderr)".into()
    } else {
        format!("\n{s}")
    }
}

/// A workflow ready to start: everything the engine needs, expanded.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub instance: String,
    /// The instance folder (for the file provider; `None` when context is
    /// disabled or in memory).
    pub context_dir: Option<PathBuf>,
    /// Kickoff text after interpolation.
    pub kickoff: Option<String>,
    /// Each agent's system prompt after interpolation.
    pub system_prompts: BTreeMap<String, String>,
    /// Each agent's extra environment after interpolation.
    pub agent_env: BTreeMap<String, Vec<(String, String)>>,
    /// Every variable, including setup outputs.
    pub vars: Vars,
}

/// Whether `name` can name an instance (it becomes a folder name).
pub fn is_valid_instance_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && name.len() <= 100
}

/// The instance folder of the file provider (with `${{ workflow.instance }}`
/// expanded, relative to the workflow file's folder).
pub fn context_dir(workflow: &Workflow, instance: &str) -> Result<Option<PathBuf>, SetupError> {
    let ContextConfig::File(files) = &workflow.context else {
        return Ok(None);
    };
    let vars = identity_vars(workflow, instance);
    let dir = expand(workflow, &vars, &files.dir, "context.config.dir")?;
    Ok(Some(workflow.base_dir.join(dir)))
}

fn identity_vars(workflow: &Workflow, instance: &str) -> Vars {
    let mut vars = Vars::with_process_env();
    vars.set("workflow.name", &workflow.name);
    vars.set("workflow.instance", instance);
    vars.set("instance", instance);
    vars
}

fn expand(
    workflow: &Workflow,
    vars: &Vars,
    t: &Located<String>,
    what: &str,
) -> Result<String, SetupError> {
    vars.expand(&t.value)
        .map_err(|source| SetupError::Interpolate {
            file: workflow.file.clone(),
            pos: t.pos,
            what: what.to_string(),
            source,
        })
}

/// The variables known before setup runs: `workflow.*`, `context.*`, `env.*`.
pub fn base_vars(
    workflow: &Workflow,
    instance: &str,
) -> Result<(Vars, Option<PathBuf>), SetupError> {
    let dir = context_dir(workflow, instance)?;
    let mut vars = identity_vars(workflow, instance);
    if let Some(files) = workflow.context.files() {
        let (channel, document) = match &dir {
            Some(d) => (
                d.join(&files.channel).display().to_string(),
                d.join(&files.document).display().to_string(),
            ),
            None => (files.channel.clone(), files.document.clone()),
        };
        vars.set("context.channel", channel);
        vars.set("context.document", document);
    }
    Ok((vars, dir))
}

/// Runs the setup steps in order with `sh -c` in the workflow's folder,
/// storing each step's trimmed stdout under its `as` name.
pub fn run_setup(workflow: &Workflow, vars: &mut Vars) -> Result<(), SetupError> {
    for (i, task) in workflow.setup.iter().enumerate() {
        let step = i + 1;
        let command = expand(workflow, vars, &task.shell, &format!("setup step {step}"))?;
        let stdout = run_shell(&command, &workflow.base_dir, step)?;
        if let Some(name) = &task.output {
            vars.set(name.clone(), stdout.trim());
        }
    }
    Ok(())
}

fn run_shell(command: &str, dir: &Path, step: usize) -> Result<String, SetupError> {
    let output = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| SetupError::Spawn {
            step,
            command: command.to_string(),
            source,
        })?;
    if !output.status.success() {
        return Err(SetupError::Failed {
            step,
            command: command.to_string(),
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Runs setup and expands the kickoff, system prompts and agent environments.
pub fn prepare(workflow: &Workflow, instance: &str) -> Result<Prepared, SetupError> {
    if !is_valid_instance_name(instance) {
        return Err(SetupError::InstanceName(instance.to_string()));
    }
    let (mut vars, context_dir) = base_vars(workflow, instance)?;
    run_setup(workflow, &mut vars)?;
    let kickoff = match &workflow.kickoff {
        Some(k) => Some(expand(workflow, &vars, k, "kickoff")?),
        None => None,
    };
    let mut system_prompts = BTreeMap::new();
    let mut agent_env = BTreeMap::new();
    for agent in &workflow.agents {
        let what = format!("agent '{}': system_prompt", agent.name);
        system_prompts.insert(
            agent.name.clone(),
            expand(workflow, &vars, &agent.system_prompt, &what)?,
        );
        let mut env = Vec::new();
        for (key, value) in &agent.env {
            let what = format!("agent '{}': env.{key}", agent.name);
            env.push((key.clone(), expand(workflow, &vars, value, &what)?));
        }
        agent_env.insert(agent.name.clone(), env);
    }
    Ok(Prepared {
        instance: instance.to_string(),
        context_dir,
        kickoff,
        system_prompts,
        agent_env,
        vars,
    })
}
