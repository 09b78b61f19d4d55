//! The Cursor agent CLI (`cursor-agent -p --output-format stream-json`):
//! the prompt as an argument (it takes none on stdin). Cursor reads MCP
//! servers only from the project's `.cursor/mcp.json`: awtui merges its
//! server (and the agents' `mcp:` servers) into that file and keeps a
//! backup that is always restored: when the instance stops, and on the
//! next start after a crash.
//!
//! The token is not written into the project: the entry reads it from each
//! agent's environment (`${env:AWTUI_TOKEN}`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::acp::AcpProgram;
use super::invocation::{Invocation, MCP_SERVER_NAME, cli_model, combined_prompt, mcp_entry};
use super::parse::{StreamJsonParser, StreamParser};
use super::{Backend, BackendError, PromptTransport, TurnRequest};
use crate::fsutil::atomic_write;
use crate::workflow::{BackendKind, McpServer, Permissions};

/// Marks that the project had no `.cursor/mcp.json` before awtui.
const ABSENT_MARKER: &str = "{\"awtui\": \"no mcp.json existed before\"}\n";

fn paths(project: &Path) -> (PathBuf, PathBuf) {
    let dir = project.join(".cursor");
    (dir.join("mcp.json"), dir.join("mcp.json.awtui-backup"))
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BackendError + '_ {
    move |source| BackendError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A project file's text; `None` when missing. A special file or one over
/// the config limit is an error, never replaced.
fn read_existing(path: &Path) -> Result<Option<String>, BackendError> {
    match crate::fsutil::read_text_capped(path, crate::fsutil::MAX_CONFIG_BYTES) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(io(path)(std::io::Error::other(e.reason()))),
    }
}

/// The project's config with awtui's server and the agents' `mcp:` servers
/// added (the project's own servers kept).
pub fn merged(existing: Option<&str>, url: &str, extra: &[McpServer]) -> String {
    let mut root: Map<String, Value> = existing
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default();
    let servers = root.entry("mcpServers").or_insert_with(|| json!({}));
    if !servers.is_object() {
        *servers = json!({});
    }
    if let Some(map) = servers.as_object_mut() {
        map.insert(
            MCP_SERVER_NAME.to_string(),
            json!({ "url": url, "headers": { "Authorization": "Bearer ${env:AWTUI_TOKEN}" } }),
        );
        for s in extra {
            map.insert(s.name.clone(), mcp_entry(&s.transport));
        }
    }
    serde_json::to_string_pretty(&Value::Object(root)).unwrap_or_default() + "\n"
}

/// Adds awtui's server to `<project>/.cursor/mcp.json`, backing up the
/// original first (once: an existing backup is the true original).
pub fn install(project: &Path, url: &str, extra: &[McpServer]) -> Result<(), BackendError> {
    let (config, backup) = paths(project);
    let dir = config.parent().unwrap_or(project);
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let existing = read_existing(&config)?;
    if !backup.exists() {
        let original = existing
            .clone()
            .unwrap_or_else(|| ABSENT_MARKER.to_string());
        atomic_write(&backup, original.as_bytes()).map_err(io(&backup))?;
    }
    atomic_write(&config, merged(existing.as_deref(), url, extra).as_bytes()).map_err(io(&config))
}

/// Puts the original `.cursor/mcp.json` back (or removes ours when there was
/// none). Returns whether a backup was found.
pub fn restore(project: &Path) -> Result<bool, BackendError> {
    let (config, backup) = paths(project);
    let Some(original) = read_existing(&backup)? else {
        return Ok(false);
    };
    if original == ABSENT_MARKER {
        match std::fs::remove_file(&config) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(&config)(e)),
        }
    } else {
        atomic_write(&config, original.as_bytes()).map_err(io(&config))?;
    }
    std::fs::remove_file(&backup).map_err(io(&backup))?;
    if original == ABSENT_MARKER {
        // Leave no empty .cursor folder behind that we created.
        let _ = std::fs::remove_dir(config.parent().unwrap_or(project));
    }
    Ok(true)
}

/// The Cursor agent CLI backend.
pub struct Cursor;

impl Backend for Cursor {
    /// `~/.cursor`.
    fn state_dirs(&self, env: &[(String, String)]) -> Vec<PathBuf> {
        super::in_home(env, ".cursor").into_iter().collect()
    }

    fn kind(&self) -> BackendKind {
        BackendKind::Cursor
    }

    fn program(&self, _command: Option<&[String]>) -> Option<String> {
        Some("cursor-agent".into())
    }

    fn install_hint(&self) -> &'static str {
        "install the Cursor CLI: curl https://cursor.com/install -fsS | bash"
    }

    fn reserved_flags(&self) -> &'static [&'static str] {
        &[
            "-p",
            "--print",
            "--output-format",
            "--force",
            "-f",
            "--approve-mcps",
            "--model",
            "--resume",
        ]
    }

    /// It takes no prompt on stdin.
    fn prompt_transport(&self) -> PromptTransport {
        PromptTransport::Argument
    }

    fn expands_at_mentions(&self) -> bool {
        true
    }

    fn workdir_config(&self) -> Option<&'static str> {
        Some(".cursor/mcp.json")
    }

    fn prepare_workdir(
        &self,
        workdir: &Path,
        mcp_url: &str,
        servers: &[McpServer],
    ) -> Result<bool, BackendError> {
        install(workdir, mcp_url, servers).map(|()| true)
    }

    fn restore_workdir(&self, workdir: &Path) -> Result<bool, BackendError> {
        restore(workdir)
    }

    /// Its `init` event lists each MCP server with its status, like Claude's.
    fn parser(&self) -> Box<dyn StreamParser> {
        Box::new(StreamJsonParser::default())
    }

    fn tools_unsupported(&self) -> Option<&'static str> {
        Some(
            "cursor-agent takes tool permissions only from its cli.json, which awtui does not \
             write (permissions: full sets --force)",
        )
    }

    fn lists_tools_at_start(&self) -> bool {
        true
    }

    fn acp_program(&self) -> Option<AcpProgram> {
        Some(AcpProgram {
            program: Some("cursor-agent"),
            adapter: false,
            hint: self.install_hint(),
            modes: super::acp::no_modes,
            leaves_commands_on_cancel: false,
            session_model: None,
        })
    }

    /// `cursor-agent acp` (its servers come in `session/new`).
    fn acp_invocation(&self, req: &TurnRequest) -> Option<Invocation> {
        let mut inv = Invocation::base(req, "cursor-agent".into());
        inv.push(&["acp"]);
        if let Some(m) = cli_model(req, None) {
            inv.push(&["--model", &m]);
        }
        inv.args.extend(req.args.iter().cloned());
        Some(inv)
    }

    fn invocation(&self, req: &TurnRequest) -> Option<Invocation> {
        let mut inv = Invocation::base(req, "cursor-agent".into());
        inv.push(&["-p", "--output-format", "stream-json", "--approve-mcps"]);
        if req.permissions == Permissions::Full {
            inv.args.push("--force".into());
        }
        if let Some(m) = cli_model(req, None) {
            inv.push(&["--model", &m]);
        }
        if let Some(id) = &req.session_id {
            inv.push(&["--resume", id]);
        }
        inv.args.extend(req.args.iter().cloned());
        inv.give_prompt(req, combined_prompt(req));
        Some(inv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_keeps_other_servers() {
        let text = merged(
            Some(r#"{"mcpServers":{"github":{"command":"gh-mcp"}},"other":1}"#),
            "http://x/mcp",
            &[],
        );
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["mcpServers"]["github"]["command"], "gh-mcp");
        assert_eq!(v["mcpServers"]["awtui"]["url"], "http://x/mcp");
        assert_eq!(
            v["mcpServers"]["awtui"]["headers"]["Authorization"],
            "Bearer ${env:AWTUI_TOKEN}"
        );
        assert_eq!(v["other"], 1);
        let extra = [McpServer {
            name: "docs".into(),
            transport: crate::workflow::McpTransport::Http {
                url: "https://d/mcp".into(),
                headers: vec![],
            },
        }];
        let v: Value = serde_json::from_str(&merged(None, "http://x/mcp", &extra)).unwrap();
        assert_eq!(v["mcpServers"]["docs"]["url"], "https://d/mcp");
        assert!(merged(Some("garbage"), "u", &[]).contains("awtui"));
    }

    #[test]
    fn install_and_restore_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let original = "{\"mcpServers\":{\"mine\":{}}}";
        std::fs::create_dir_all(dir.path().join(".cursor")).unwrap();
        std::fs::write(dir.path().join(".cursor/mcp.json"), original).unwrap();
        install(dir.path(), "http://a", &[]).unwrap();
        install(dir.path(), "http://b", &[]).unwrap(); // a second install keeps the first backup
        assert!(
            std::fs::read_to_string(dir.path().join(".cursor/mcp.json"))
                .unwrap()
                .contains("http://b")
        );
        assert!(restore(dir.path()).unwrap());
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".cursor/mcp.json")).unwrap(),
            original
        );
        assert!(!restore(dir.path()).unwrap(), "nothing left to restore");
    }

    #[test]
    fn restore_removes_a_config_that_did_not_exist() {
        let dir = tempfile::tempdir().unwrap();
        install(dir.path(), "http://a", &[]).unwrap();
        assert!(restore(dir.path()).unwrap());
        assert!(!dir.path().join(".cursor").exists());
    }
}
