//! Backend session ids kept with the instance, so the next start after a
//! crash resumes each agent's own conversation.

use std::collections::BTreeMap;
use std::path::Path;

use super::launch::agent_dir;
use crate::fsutil::atomic_write;

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

/// Saves `agent`'s session id.
pub fn save(state_root: &Path, agent: &str, id: &str) -> std::io::Result<()> {
    let dir = agent_dir(state_root, agent);
    std::fs::create_dir_all(&dir)?;
    atomic_write(&dir.join(FILE), id.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_sessions_load_back() {
        let dir = tempfile::tempdir().unwrap();
        save(dir.path(), "coder", "sess-1").unwrap();
        let agents = vec!["coder".to_string(), "qa".to_string()];
        let loaded = load(dir.path(), &agents);
        assert_eq!(loaded.get("coder").map(String::as_str), Some("sess-1"));
        assert!(!loaded.contains_key("qa"));
    }
}
