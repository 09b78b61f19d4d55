//! What the watcher knows of the documents: one [`DocStamp`] per document
//! (which file, its size and change times), for at most [`MAX_TRACKED`]
//! documents, and how a batch of changed paths or a rescan becomes the
//! list of changes to report.
//!
//! Stamps, not contents: telling a change from the engine's own write
//! needs no reading, so a batch costs one `stat` per path and a rescan one
//! bounded listing ([`DocFolder::stamps`]), whatever the files hold. Every
//! look goes through the document folder's handle, so nothing outside the
//! document tree (a link, another agent's worktree) is ever looked at.

use std::collections::{HashMap, HashSet};

use crate::context::DocumentChange;
use crate::context::documents::{DocFolder, DocStamp};

/// Most documents the watcher follows; documents beyond are not reported.
pub const MAX_TRACKED: usize = 1_000;

/// Most folder entries a rescan looks at.
pub const MAX_SCANNED: usize = 10_000;

/// A change to report: the document's path and what happened to it.
pub type Change = (String, DocumentChange);

/// The stamps of the documents as last seen.
#[derive(Debug, Default)]
pub struct Known {
    stamps: HashMap<String, DocStamp>,
    /// Whether the "too many documents" warning was logged.
    warned: bool,
}

impl Known {
    /// The documents of `folder` as they are now (bounded), reporting
    /// nothing.
    pub fn scan(folder: &DocFolder) -> Known {
        let mut known = Known::default();
        known.rescan(folder, &mut Vec::new());
        known
    }

    /// Records document `rel` as it is now without reporting it: the
    /// engine itself just changed it.
    pub fn own_write(&mut self, folder: &DocFolder, rel: &str) {
        if let Ok(now) = folder.stamp(rel) {
            self.set(rel, now);
        }
    }

    /// Looks at `rel` again: a document, or a folder whose known documents
    /// are looked at in turn (moving or removing a folder names only it).
    pub fn check(&mut self, folder: &DocFolder, rel: &str, out: &mut Vec<Change>) {
        let now = match folder.stamp(rel) {
            Ok(now) => now,
            Err(e) => {
                tracing::debug!("not looking at {rel}: {e}");
                return;
            }
        };
        if let Some(change) = self.set(rel, now) {
            out.push((rel.to_string(), change));
        }
        if now.is_none() {
            let prefix = format!("{rel}/");
            let below: Vec<String> = self
                .stamps
                .keys()
                .filter(|k| k.starts_with(&prefix))
                .cloned()
                .collect();
            for doc in below {
                self.check(folder, &doc, out);
            }
        }
    }

    /// Compares the whole folder (at most [`MAX_SCANNED`] entries) with
    /// what is known.
    pub fn rescan(&mut self, folder: &DocFolder, out: &mut Vec<Change>) {
        let listing = match folder.stamps(MAX_SCANNED) {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!("cannot list {}: {e}", folder.path().display());
                return;
            }
        };
        if listing.truncated && !self.warned {
            tracing::warn!(
                "{} holds more than {MAX_SCANNED} entries; changes beyond them are not shown live",
                folder.path().display()
            );
            self.warned = true;
        }
        let mut seen = HashSet::with_capacity(listing.found.len());
        for (rel, stamp) in listing.found {
            if let Some(change) = self.set(&rel, Some(stamp)) {
                out.push((rel.clone(), change));
            }
            seen.insert(rel);
        }
        let unseen: Vec<String> = self
            .stamps
            .keys()
            .filter(|k| !seen.contains(*k))
            .cloned()
            .collect();
        for rel in unseen {
            if listing.truncated {
                // Perhaps only beyond the bound: look at it alone.
                self.check(folder, &rel, out);
            } else if let Some(change) = self.set(&rel, None) {
                out.push((rel, change));
            }
        }
    }

    /// Records `now` for `rel`; the change, if it is one.
    fn set(&mut self, rel: &str, now: Option<DocStamp>) -> Option<DocumentChange> {
        match (self.stamps.get(rel), now) {
            (Some(before), Some(now)) if *before == now => None,
            (Some(_), Some(now)) => {
                self.stamps.insert(rel.to_string(), now);
                Some(DocumentChange::Written)
            }
            (None, Some(now)) => {
                if self.stamps.len() >= MAX_TRACKED {
                    if !self.warned {
                        tracing::warn!(
                            "more than {MAX_TRACKED} documents; changes to the others are not shown live"
                        );
                        self.warned = true;
                    }
                    return None;
                }
                self.stamps.insert(rel.to_string(), now);
                Some(DocumentChange::Created)
            }
            (Some(_), None) => {
                self.stamps.remove(rel);
                Some(DocumentChange::Deleted)
            }
            (None, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(dir: &std::path::Path) -> DocFolder {
        DocFolder::open(dir, vec!["channel.md".into()]).unwrap()
    }

    #[test]
    fn changes_are_told_by_stamps_and_own_writes_are_not_changes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "a").unwrap();
        let f = folder(dir.path());
        let mut known = Known::scan(&f);
        assert_eq!(known.stamps.len(), 1);
        let mut out = Vec::new();

        known.check(&f, "a.md", &mut out);
        assert_eq!(out, vec![], "nothing changed");
        std::fs::write(dir.path().join("a.md"), "longer").unwrap();
        known.own_write(&f, "a.md");
        known.check(&f, "a.md", &mut out);
        assert_eq!(out, vec![], "the engine's own write");

        std::fs::write(dir.path().join("a.md"), "edited elsewhere").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/b.md"), "b").unwrap();
        known.check(&f, "a.md", &mut out);
        known.check(&f, "sub/b.md", &mut out);
        assert_eq!(
            out,
            vec![
                ("a.md".into(), DocumentChange::Written),
                ("sub/b.md".into(), DocumentChange::Created)
            ]
        );
        // A folder moved away names only the folder.
        out.clear();
        std::fs::rename(dir.path().join("sub"), dir.path().join(".gone")).unwrap();
        known.check(&f, "sub", &mut out);
        assert_eq!(out, vec![("sub/b.md".into(), DocumentChange::Deleted)]);
    }

    #[test]
    fn a_rescan_is_bounded_and_skips_what_is_no_document() {
        let dir = tempfile::tempdir().unwrap();
        let f = folder(dir.path());
        let mut known = Known::scan(&f);
        assert!(known.stamps.is_empty());
        std::fs::create_dir(dir.path().join("junk")).unwrap();
        for i in 0..MAX_SCANNED + 500 {
            std::fs::write(dir.path().join(format!("junk/f{i}.md")), "x").unwrap();
        }
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/config"), "x").unwrap();
        std::fs::write(dir.path().join("channel.md"), "x").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link.md")).unwrap();
        std::fs::write(dir.path().join("twice.md"), "x").unwrap();
        std::fs::hard_link(dir.path().join("twice.md"), dir.path().join("junk2")).unwrap();

        let mut out = Vec::new();
        known.rescan(&f, &mut out);
        assert_eq!(out.len(), MAX_TRACKED, "reports stop at the bound");
        assert_eq!(known.stamps.len(), MAX_TRACKED);
        assert!(out.iter().all(|(p, c)| p.starts_with("junk/f")
            && p.ends_with(".md")
            && *c == DocumentChange::Created));

        // Again: nothing new, and the followed documents are still there.
        out.clear();
        known.rescan(&f, &mut out);
        assert_eq!(out, vec![]);

        // Deleting everything is seen.
        std::fs::remove_dir_all(dir.path().join("junk")).unwrap();
        known.rescan(&f, &mut out);
        assert_eq!(out.len(), MAX_TRACKED);
        assert!(out.iter().all(|(_, c)| *c == DocumentChange::Deleted));
        assert!(known.stamps.is_empty());
    }
}
