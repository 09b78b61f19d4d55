//! Document storage: a folder on disk or a map in memory, behind the same
//! path rules ([`super::paths`]).

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::{ContextError, Result, paths};
use crate::fsutil::atomic_write;

/// Documents kept in memory (the memory provider).
#[derive(Debug, Default)]
pub struct MemoryDocs {
    entry: String,
    own_files: Vec<String>,
    files: BTreeMap<String, String>,
}

/// Documents kept as files in the instance folder (the file provider).
#[derive(Debug)]
pub struct FileDocs {
    root: PathBuf,
    entry: String,
    own_files: Vec<String>,
}

/// The operations both document stores offer, used by the context stores.
pub trait Docs {
    /// The entry document's relative path.
    fn entry(&self) -> &str;
    /// Names the document store must not touch.
    fn own_files(&self) -> &[String];
    /// Reads a validated path; `None` when it does not exist.
    fn get(&self, path: &str) -> Result<Option<String>>;
    /// Writes a validated path, creating folders.
    fn put(&mut self, path: &str, content: &str) -> Result<()>;
    /// Removes a validated, existing path.
    fn remove(&mut self, path: &str) -> Result<()>;
    /// All documents, sorted.
    fn list(&self) -> Result<Vec<String>>;

    /// Validates `file` (the entry point when `None`).
    fn resolve(&self, file: Option<&str>) -> Result<String> {
        match file {
            None => Ok(self.entry().to_string()),
            Some(f) => {
                let own: Vec<&str> = self.own_files().iter().map(String::as_str).collect();
                paths::validate(f, &own)
            }
        }
    }

    /// Reads a document; the entry point reads as empty when missing.
    fn read(&self, file: Option<&str>) -> Result<String> {
        let path = self.resolve(file)?;
        match self.get(&path)? {
            Some(text) => Ok(text),
            None if path == self.entry() => Ok(String::new()),
            None => Err(ContextError::DocumentNotFound { path }),
        }
    }

    /// Replaces a document.
    fn write(&mut self, file: Option<&str>, content: &str) -> Result<()> {
        let path = self.resolve(file)?;
        self.put(&path, content)
    }

    /// Appends to a document.
    fn append(&mut self, file: Option<&str>, content: &str) -> Result<()> {
        let path = self.resolve(file)?;
        let mut text = self.get(&path)?.unwrap_or_default();
        text.push_str(content);
        self.put(&path, &text)
    }

    /// Creates a document that must not exist yet.
    fn create(&mut self, file: &str, content: &str) -> Result<()> {
        let path = self.resolve(Some(file))?;
        if self.get(&path)?.is_some() {
            return Err(ContextError::DocumentExists { path });
        }
        self.put(&path, content)
    }

    /// Deletes an existing document.
    fn delete(&mut self, file: &str) -> Result<()> {
        let path = self.resolve(Some(file))?;
        if self.get(&path)?.is_none() {
            return Err(ContextError::DocumentNotFound { path });
        }
        self.remove(&path)
    }

    /// Creates each listed document empty unless it exists.
    fn ensure(&mut self, files: &[String]) -> Result<()> {
        for f in files {
            let path = self.resolve(Some(f))?;
            if self.get(&path)?.is_none() {
                self.put(&path, "")?;
            }
        }
        Ok(())
    }
}

impl MemoryDocs {
    /// An empty set of documents with this entry point.
    pub fn new(entry: &str, own_files: Vec<String>) -> Self {
        MemoryDocs {
            entry: entry.to_string(),
            own_files,
            files: BTreeMap::new(),
        }
    }
}

impl Docs for MemoryDocs {
    fn entry(&self) -> &str {
        &self.entry
    }
    fn own_files(&self) -> &[String] {
        &self.own_files
    }
    fn get(&self, path: &str) -> Result<Option<String>> {
        if self
            .files
            .keys()
            .any(|k| k.starts_with(&format!("{path}/")))
        {
            return Err(is_folder(path));
        }
        Ok(self.files.get(path).cloned())
    }
    fn put(&mut self, path: &str, content: &str) -> Result<()> {
        // A file and a folder cannot share a name, as on disk.
        let blocked = self
            .files
            .keys()
            .any(|k| k.starts_with(&format!("{path}/")))
            || ancestors(path).any(|a| self.files.contains_key(a));
        if blocked {
            return Err(ContextError::PathRefused {
                path: path.into(),
                reason: "a document and a folder would share this name".into(),
            });
        }
        self.files.insert(path.to_string(), content.to_string());
        Ok(())
    }
    fn remove(&mut self, path: &str) -> Result<()> {
        self.files.remove(path);
        Ok(())
    }
    fn list(&self) -> Result<Vec<String>> {
        Ok(self.files.keys().cloned().collect())
    }
}

fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(move |(i, _)| &path[..i])
}

fn is_folder(path: &str) -> ContextError {
    ContextError::PathRefused {
        path: path.into(),
        reason: "this is a folder, not a document".into(),
    }
}

impl FileDocs {
    /// Documents in `root`, which must exist.
    pub fn new(root: &Path, entry: &str, own_files: Vec<String>) -> Result<Self> {
        let root = root.canonicalize().map_err(|source| ContextError::Io {
            path: root.to_path_buf(),
            source,
        })?;
        Ok(FileDocs {
            root,
            entry: entry.to_string(),
            own_files,
        })
    }

    /// The real path of a validated relative path, refusing links that lead
    /// out of the folder.
    fn locate(&self, rel: &str) -> Result<PathBuf> {
        let full = self.root.join(rel);
        // The deepest part of the path that exists must resolve inside root.
        let mut probe = full.as_path();
        loop {
            match probe.canonicalize() {
                Ok(real) => {
                    if !real.starts_with(&self.root) {
                        return Err(ContextError::PathRefused {
                            path: rel.into(),
                            reason: "it leads out of the document folder through a link".into(),
                        });
                    }
                    break;
                }
                Err(_) => match probe.parent() {
                    Some(parent) if parent.starts_with(&self.root) => probe = parent,
                    _ => break,
                },
            }
        }
        Ok(full)
    }

    fn io(&self, rel: &str, source: io::Error) -> ContextError {
        ContextError::Io {
            path: self.root.join(rel),
            source,
        }
    }

    fn walk(&self, dir: &Path, prefix: &str, out: &mut Vec<String>) -> Result<()> {
        let entries = fs::read_dir(dir).map_err(|e| self.io(prefix, e))?;
        let own: Vec<&str> = self.own_files.iter().map(String::as_str).collect();
        for entry in entries {
            let entry = entry.map_err(|e| self.io(prefix, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            if paths::validate(&rel, &own).is_err() {
                continue;
            }
            let kind = entry.file_type().map_err(|e| self.io(&rel, e))?;
            if kind.is_dir() {
                self.walk(&entry.path(), &rel, out)?;
            } else if kind.is_file()
                || (kind.is_symlink() && self.locate(&rel).is_ok() && entry.path().is_file())
            {
                out.push(rel);
            }
        }
        Ok(())
    }
}

impl Docs for FileDocs {
    fn entry(&self) -> &str {
        &self.entry
    }
    fn own_files(&self) -> &[String] {
        &self.own_files
    }
    fn get(&self, rel: &str) -> Result<Option<String>> {
        let path = self.locate(rel)?;
        match fs::read(&path) {
            Ok(bytes) => String::from_utf8(bytes)
                .map(Some)
                .map_err(|_| ContextError::NotText { path: rel.into() }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) if path.is_dir() => {
                drop(e);
                Err(is_folder(rel))
            }
            Err(e) => Err(self.io(rel, e)),
        }
    }
    fn put(&mut self, rel: &str, content: &str) -> Result<()> {
        let path = self.locate(rel)?;
        if path.is_dir() {
            return Err(is_folder(rel));
        }
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| self.io(rel, e))?;
            // Creating folders cannot have escaped, but a link may have been
            // swapped in meanwhile: check again before writing.
            self.locate(rel)?;
        }
        atomic_write(&path, content.as_bytes()).map_err(|e| self.io(rel, e))
    }
    fn remove(&mut self, rel: &str) -> Result<()> {
        let path = self.locate(rel)?;
        fs::remove_file(&path).map_err(|e| self.io(rel, e))?;
        // Drop folders the deletion left empty, up to the root.
        let mut dir = path.parent();
        while let Some(d) = dir {
            if d == self.root || fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
        Ok(())
    }
    fn list(&self) -> Result<Vec<String>> {
        let mut out = Vec::new();
        self.walk(&self.root, "", &mut out)?;
        out.sort();
        Ok(out)
    }
}
