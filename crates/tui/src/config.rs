//! The control room's configuration: keys, colours and notifications
//! (and `awtui web`'s webhook, `[notify.webhook]`). Defaults ship in
//! `assets/config.toml` (embedded); the user's `config.toml` in
//! `$XDG_CONFIG_HOME/awtui/` (else `~/.config/awtui/`) overrides entry by
//! entry. A bad file is an error naming the file and the key, reported
//! before the screen opens.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::keymap::{Keymap, KeymapError};
use super::theme::{Theme, ThemeError};

/// The defaults shipped with awtui.
pub const DEFAULT_CONFIG: &str = include_str!("../../../assets/config.toml");

/// Keys and colours.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Key bindings.
    pub keymap: Keymap,
    /// Colours.
    pub theme: Theme,
    /// The bell and desktop notifications (`[notify]`).
    pub notify: super::notify::NotifyConfig,
    /// Where `awtui web` sends new attention items (`[notify.webhook]`).
    pub webhook: Option<super::webhook::Webhook>,
}

/// Why a configuration could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but cannot be read (a special file, too large, not
    /// text); the error names the file.
    #[error(transparent)]
    Read(#[from] crate::fsutil::ReadError),
    /// The file is not valid TOML or has unknown tables.
    #[error("{path}: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The TOML error, with its position.
        message: String,
    },
    /// A binding is wrong.
    #[error("{path}: {source}")]
    Keymap {
        /// The file.
        path: PathBuf,
        /// Which binding and why.
        source: Box<KeymapError>,
    },
    /// A colour is wrong.
    #[error("{path}: {source}")]
    Theme {
        /// The file.
        path: PathBuf,
        /// Which colour and why.
        source: ThemeError,
    },
    /// A `[notify]` entry is wrong.
    #[error("{path}: {message}")]
    Notify {
        /// The file.
        path: PathBuf,
        /// Which entry and why.
        message: String,
    },
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    keys: BTreeMap<String, BTreeMap<String, String>>,
    #[serde(default)]
    theme: BTreeMap<String, toml::Value>,
    #[serde(default)]
    notify: super::notify::RawNotify,
}

/// Where the user's config file is looked for.
pub use crate::layout::user_config_path;

impl Config {
    /// The shipped defaults.
    pub fn defaults() -> Config {
        let mut config = Config {
            keymap: Keymap::default(),
            theme: Theme::default(),
            notify: Default::default(),
            webhook: None,
        };
        config
            .merge(DEFAULT_CONFIG, Path::new("assets/config.toml"))
            .expect("the shipped config is valid (tested)");
        config
    }

    /// Applies the text of a config file over this one; `path` names it in
    /// errors.
    pub fn merge(&mut self, text: &str, path: &Path) -> Result<(), ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| ConfigError::Syntax {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().to_string(),
        })?;
        self.keymap
            .apply(&raw.keys)
            .map_err(|source| ConfigError::Keymap {
                path: path.to_path_buf(),
                source,
            })?;
        self.theme
            .apply(&raw.theme)
            .map_err(|source| ConfigError::Theme {
                path: path.to_path_buf(),
                source,
            })?;
        self.notify
            .apply(&raw.notify)
            .map_err(|message| ConfigError::Notify {
                path: path.to_path_buf(),
                message,
            })?;
        if let Some(hook) = &raw.notify.webhook {
            self.webhook = Some(hook.check().map_err(|message| ConfigError::Notify {
                path: path.to_path_buf(),
                message,
            })?);
        }
        Ok(())
    }

    /// The defaults with the user's file (if any) applied.
    pub fn load() -> Result<Config, ConfigError> {
        let mut config = Config::defaults();
        if let Some(path) = user_config_path() {
            match crate::fsutil::read_text_capped(&path, crate::fsutil::MAX_CONFIG_BYTES) {
                Ok(text) => config.merge(&text, &path)?,
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::{Action, Pane};
    use crate::keymap::Key;

    #[test]
    fn defaults_parse_and_overrides_apply() {
        let mut c = Config::defaults();
        assert_eq!(
            c.keymap.lookup(Pane::Agents, &Key::char('s')),
            Some(&Action::Stop(None))
        );
        c.merge(
            "[keys.agents]\ns = \"\"\nx = \"stop\"\n[theme]\naccent = \"#102030\"\n",
            Path::new("u.toml"),
        )
        .unwrap();
        assert_eq!(c.keymap.lookup(Pane::Agents, &Key::char('s')), None);
        assert_eq!(
            c.keymap.lookup(Pane::Agents, &Key::char('x')),
            Some(&Action::Stop(None))
        );
        assert_eq!(c.theme.accent, ratatui::style::Color::Rgb(0x10, 0x20, 0x30));
    }

    #[test]
    fn errors_name_the_file_and_key() {
        let mut c = Config::defaults();
        let e = c
            .merge(
                "[keys.agents]\n\"ctrl-\" = \"stop\"\n",
                Path::new("/h/c.toml"),
            )
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/h/c.toml: [keys.agents] \"ctrl-\""), "{e}");
        let e = c
            .merge("[colors]\na = 1\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("colors"), "{e}");
        let e = c
            .merge("[theme]\nwarning = \"bright\"\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("warning"), "{e}");
        let e = c
            .merge("[notify]\nosc = \"10\"\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("c.toml: [notify] osc"), "{e}");
        c.merge(
            "[notify]\nbell = false\nosc = \"off\"\n",
            Path::new("c.toml"),
        )
        .unwrap();
        assert!(!c.notify.bell);
        assert_eq!(c.notify.osc, crate::notify::Osc::Off);
    }
}
