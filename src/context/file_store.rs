//! The file provider: the channel as `channel.jsonl` (one JSON object per
//! line, the truth) plus a `channel.md` mirror for people, cursors in
//! `state.json`, documents as files in the same folder.
//!
//! Durability: an append is written with one `write` and `fdatasync`ed before
//! it returns, so an acknowledged message survives `kill -9` and power loss.
//! A torn last line left by a crash is dropped (with a warning) on reopen.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::documents::{Docs, FileDocs};
use super::index::ChannelIndex;
use super::store::{CursorState, Journal, Store};
use super::{ChannelEntry, ContextError, Cursor, Handover, Result, StoreLayout};
use crate::fsutil::atomic_write;

/// Name of the cursor file in the instance folder.
pub const STATE_FILE: &str = "state.json";

/// The channel's on-disk files and the cursor file.
#[derive(Debug)]
pub struct FileJournal {
    jsonl: File,
    jsonl_path: PathBuf,
    /// Length of the JSONL file after the last complete line.
    len: u64,
    mirror_path: PathBuf,
    state_path: PathBuf,
    warnings: Vec<String>,
}

/// A context persisted in an instance folder.
pub type FileStore = Store<FileDocs, FileJournal>;

#[derive(Serialize, Deserialize)]
struct StateFile {
    version: u32,
    cursors: BTreeMap<String, Cursor>,
    /// Messages hidden from inboxes (agent operation `delete`).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    hidden: BTreeSet<u64>,
    /// Hand-overs not yet acknowledged, per recipient (crash recovery
    /// decides from them what an agent had answered).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    handovers: BTreeMap<String, Vec<Handover>>,
}

/// The JSONL file that backs a channel mirror named `channel`.
pub fn jsonl_name(channel: &str) -> String {
    match channel.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => format!("{stem}.jsonl"),
        _ => format!("{channel}.jsonl"),
    }
}

/// The mirror's text for one entry, in the seed's `### time [from]` format.
pub fn mirror_text(entry: &ChannelEntry) -> String {
    let reply = entry
        .reply_to
        .map(|to| format!(" (reply to #{to})"))
        .unwrap_or_default();
    format!(
        "### {} [{}] #{}{reply}\n{}\n\n",
        entry.timestamp.format("%H:%M:%S"),
        entry.from,
        entry.id,
        entry.message.trim_end_matches('\n')
    )
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ContextError + '_ {
    move |source| ContextError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl FileStore {
    /// Opens (or creates) the instance folder `dir` and restores everything
    /// in it.
    pub fn open(dir: &Path, config: &StoreLayout) -> Result<FileStore> {
        // Made 0700 when missing (it will hold agent tokens); an existing
        // folder keeps its mode.
        crate::fsutil::create_dir_if_missing(dir).map_err(io_err(dir))?;
        let jsonl_file = jsonl_name(&config.channel);
        let jsonl_path = dir.join(&jsonl_file);
        let mirror_path = dir.join(&config.channel);
        let state_path = dir.join(STATE_FILE);

        let mut jsonl = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&jsonl_path)
            .map_err(io_err(&jsonl_path))?;
        let mut bytes = Vec::new();
        jsonl.read_to_end(&mut bytes).map_err(io_err(&jsonl_path))?;

        let mut index = ChannelIndex::new(config.agents.clone());
        let mut warnings = Vec::new();
        let recovered = load_lines(&bytes, &jsonl_path, &mut index, &mut warnings);
        if recovered.torn {
            jsonl.set_len(recovered.len).map_err(io_err(&jsonl_path))?;
            jsonl.sync_all().map_err(io_err(&jsonl_path))?;
        }

        if let Some(state) = read_state(&state_path)? {
            for (name, cursor) in state.cursors {
                index.set_cursor(&name, cursor);
            }
            let hidden: Vec<u64> = state.hidden.into_iter().collect();
            index.hide(&hidden);
            for (name, handovers) in state.handovers {
                index.set_handovers(&name, handovers);
            }
        }

        let mirror_missing = !mirror_path.exists() && !index.is_empty();
        if recovered.torn || mirror_missing {
            let text: String = index.entries().iter().map(mirror_text).collect();
            atomic_write(&mirror_path, text.as_bytes()).map_err(io_err(&mirror_path))?;
        }

        for w in &warnings {
            tracing::warn!("{w}");
        }
        let mut docs = FileDocs::new(dir, &config.document, config.own_files())?;
        docs.ensure(&config.documents)?;
        Ok(Store {
            index,
            docs,
            journal: FileJournal {
                jsonl,
                jsonl_path,
                len: recovered.len,
                mirror_path,
                state_path,
                warnings,
            },
        })
    }

    /// Problems found and repaired while opening (a torn last line, say).
    pub fn open_warnings(&self) -> &[String] {
        &self.journal.warnings
    }

    /// The JSONL file holding the channel.
    pub fn channel_path(&self) -> &Path {
        &self.journal.jsonl_path
    }
}

struct Recovered {
    /// Byte length up to the end of the last complete line.
    len: u64,
    /// Whether an incomplete last line was found (and must be cut off).
    torn: bool,
}

fn load_lines(
    bytes: &[u8],
    path: &Path,
    index: &mut ChannelIndex,
    warnings: &mut Vec<String>,
) -> Recovered {
    let mut offset = 0usize;
    let mut line_no = 0;
    while offset < bytes.len() {
        line_no += 1;
        let Some(nl) = bytes[offset..].iter().position(|&b| b == b'\n') else {
            warnings.push(format!(
                "{}: dropped an incomplete last line ({} bytes) left by an interrupted write",
                path.display(),
                bytes.len() - offset
            ));
            return Recovered {
                len: offset as u64,
                torn: true,
            };
        };
        let line = &bytes[offset..offset + nl];
        offset += nl + 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<ChannelEntry>(line) {
            Ok(entry) => {
                if let Err(entry) = index.push(entry) {
                    warnings.push(format!(
                        "{}:{line_no}: skipped message #{} because its id is not above #{}",
                        path.display(),
                        entry.id,
                        index.last_id()
                    ));
                }
            }
            Err(e) => warnings.push(format!(
                "{}:{line_no}: skipped an unreadable line: {e}",
                path.display()
            )),
        }
    }
    Recovered {
        len: offset as u64,
        torn: false,
    }
}

fn read_state(path: &Path) -> Result<Option<StateFile>> {
    match fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| ContextError::Corrupt {
                path: path.to_path_buf(),
                reason: format!(
                    "cannot read inbox cursors ({e}); fix or remove the file to start over"
                ),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(path)(e)),
    }
}

impl Journal for FileJournal {
    fn append(&mut self, entry: &ChannelEntry) -> Result<()> {
        let mut line = serde_json::to_vec(entry).map_err(|e| ContextError::Corrupt {
            path: self.jsonl_path.clone(),
            reason: e.to_string(),
        })?;
        line.push(b'\n');
        let written = self
            .jsonl
            .write_all(&line)
            .and_then(|()| self.jsonl.sync_data());
        if let Err(e) = written {
            // Cut off whatever part of the line reached the file, so the next
            // append starts on a clean line.
            let _ = self.jsonl.set_len(self.len);
            return Err(io_err(&self.jsonl_path)(e));
        }
        self.len += line.len() as u64;
        // The mirror is for people; failing to update it loses nothing.
        let mirror = OpenOptions::new()
            .append(true)
            .create(true)
            .open(&self.mirror_path)
            .and_then(|mut f| f.write_all(mirror_text(entry).as_bytes()));
        if let Err(e) = mirror {
            tracing::warn!("cannot update {}: {e}", self.mirror_path.display());
        }
        Ok(())
    }

    fn save_cursors(&mut self, state: CursorState<'_>) -> Result<()> {
        let state = StateFile {
            version: 1,
            cursors: state.cursors.clone(),
            hidden: state.hidden.clone(),
            handovers: state.handovers.clone(),
        };
        let bytes = serde_json::to_vec_pretty(&state).unwrap_or_default();
        atomic_write(&self.state_path, &bytes).map_err(io_err(&self.state_path))
    }
}
