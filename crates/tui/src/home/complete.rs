//! Completing the path typed after `n` on the home screen: folders and
//! workflow files of the folder typed so far, as Tab offers them.

use std::path::{Path, PathBuf};

/// Lists a folder for path completion: each entry's name and whether it is
/// a folder.
pub type Lister<'a> = &'a dyn Fn(&Path) -> Vec<(String, bool)>;

/// `~/…` and relative paths made absolute.
pub fn expand(text: &str, cwd: &Path) -> PathBuf {
    if let Some(rest) = text.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home).join(rest);
    }
    cwd.join(text)
}

/// The completions of a typed path: folders (with `/`) and YAML files in
/// its folder whose names start with what follows the last `/`, sorted.
pub fn complete(text: &str, cwd: &Path, list: Lister<'_>) -> Vec<String> {
    let (dir, prefix) = match text.rfind('/') {
        Some(i) => (&text[..=i], &text[i + 1..]),
        None => ("", text),
    };
    let folder = if dir.is_empty() {
        cwd.to_path_buf()
    } else {
        expand(dir, cwd)
    };
    let mut out: Vec<String> = list(&folder)
        .into_iter()
        .filter(|(name, _)| name.starts_with(prefix))
        .filter(|(name, _)| !name.starts_with('.') || prefix.starts_with('.'))
        .filter(|(name, is_dir)| *is_dir || name.ends_with(".yaml") || name.ends_with(".yml"))
        .map(|(name, is_dir)| format!("{dir}{name}{}", if is_dir { "/" } else { "" }))
        .collect();
    out.sort();
    out
}

/// The longest start every candidate shares.
pub fn common_prefix(c: &[String]) -> String {
    let first = &c[0];
    let mut n = first.len();
    for s in &c[1..] {
        n = n.min(
            first
                .char_indices()
                .zip(s.chars())
                .take_while(|((_, a), b)| a == b)
                .map(|((i, a), _)| i + a.len_utf8())
                .last()
                .unwrap_or(0),
        );
    }
    first[..n].to_string()
}

/// Lists a real folder for [`complete`] (unreadable folders list nothing).
pub fn list_folder(dir: &Path) -> Vec<(String, bool)> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| {
                    let is_dir = e.path().is_dir();
                    (e.file_name().to_string_lossy().into_owned(), is_dir)
                })
                .collect()
        })
        .unwrap_or_default()
}
