//! Backend session ids kept with the instance, so the next start after a
//! crash resumes each agent's own conversation.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::launch::agent_dir;

const FILE: &str = "session";

/// The saved session of each agent that has one.
pub fn load(state_root: &Path, agents: &[String]) -> BTreeMap<String, String> {
    agents
        .iter()
        .filter_map(|a| {
            let text =
                crate::fsutil::read_record_text(&agent_dir(state_root, a).join(FILE)).ok()?;
            let id = text.trim();
            (!id.is_empty()).then(|| (a.clone(), id.to_string()))
        })
        .collect()
}

/// Where `agent`'s session id is kept (the engine writes it behind its
/// loop, `engine::behind`).
pub fn path(state_root: &Path, agent: &str) -> PathBuf {
    agent_dir(state_root, agent).join(FILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_sessions_load_back() {
        let dir = tempfile::tempdir().unwrap();
        let file = path(dir.path(), "coder");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        crate::fsutil::atomic_write(&file, b"sess-1").unwrap();
        let agents = vec!["coder".to_string(), "qa".to_string()];
        let loaded = load(dir.path(), &agents);
        assert_eq!(loaded.get("coder").map(String::as_str), Some("sess-1"));
        assert!(!loaded.contains_key("qa"));
    }
}
