//! `context:`: the provider and the names of its files.

use super::Walker;
use super::keys;
use crate::workflow::diagnostic::hint;
use crate::workflow::schema::{
    ContextConfig, ContextFiles, DEFAULT_CHANNEL, DEFAULT_CONTEXT_DIR, DEFAULT_DOCUMENT, Located,
};
use crate::workflow::yaml::{Key, Node, Pos, Value};

impl Walker<'_> {
    pub(super) fn context(&mut self, node: Option<&Node>) -> ContextConfig {
        let defaults = |pos: Pos| ContextFiles {
            dir: Located {
                value: DEFAULT_CONTEXT_DIR.into(),
                pos,
            },
            channel: DEFAULT_CHANNEL.into(),
            document: DEFAULT_DOCUMENT.into(),
            documents: Vec::new(),
        };
        let Some(node) = node else {
            return ContextConfig::File(defaults(Pos::default()));
        };
        let entries = match &node.value {
            Value::Null | Value::Bool(true) => return ContextConfig::File(defaults(node.pos)),
            Value::Bool(false) => return ContextConfig::Disabled,
            Value::Map(entries) => entries,
            other => {
                self.diags.error(
                    node.pos,
                    format!(
                        "context must be false, empty, or a mapping with 'provider', found {}",
                        other.kind()
                    ),
                );
                return ContextConfig::Disabled;
            }
        };
        let fields = self.fields(entries, &keys::CONTEXT, "context");
        let provider = match fields.get("provider") {
            Some(p) => self.string(p, "context.provider").map(|s| (s, p.pos)),
            None => Some(("file".to_string(), node.pos)),
        };
        let mut files = defaults(node.pos);
        let mut file_keys: Vec<&Key> = Vec::new();
        if let Some(config) = fields.get("config")
            && let Some(config) = self.keyed(config, &keys::CONTEXT_CONFIG, "context.config")
        {
            for (key, value) in config {
                match key.name.as_str() {
                    "dir" => {
                        file_keys.push(key);
                        if let Some(dir) = self.located(value, "context.config.dir") {
                            files.dir = dir;
                        }
                    }
                    "channel" => {
                        file_keys.push(key);
                        if let Some(c) = self.file_name(value, "context.config.channel", &[]) {
                            files.channel = c;
                        }
                    }
                    "document" => {
                        if let Some(d) = self.file_name(value, "context.config.document", &[]) {
                            files.document = d;
                        }
                    }
                    _ => files.documents = self.document_list(value),
                }
            }
        }
        self.check_document_clash(&files, node.pos);
        match provider {
            Some((p, _)) if p == "file" => ContextConfig::File(files),
            Some((p, _)) if p == "memory" => {
                for key in file_keys {
                    self.diags.error(
                        key.pos,
                        format!("the memory provider keeps no files; remove '{}'", key.name),
                    );
                }
                ContextConfig::Memory(files)
            }
            Some((p, pos)) => {
                let hint = hint(&p, ["file", "memory"]);
                self.diags.error(
                    pos,
                    format!("unknown context provider '{p}'{hint}; use 'file' or 'memory'"),
                );
                ContextConfig::Disabled
            }
            None => ContextConfig::Disabled,
        }
    }

    pub(super) fn document_list(&mut self, node: &Node) -> Vec<String> {
        let Value::Seq(items) = &node.value else {
            self.string_list(node, "context.config.documents");
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|item| self.file_name(item, "context.config.documents", &[]))
            .collect()
    }

    pub(super) fn check_document_clash(&mut self, files: &ContextFiles, pos: Pos) {
        let docs = std::iter::once(&files.document).chain(&files.documents);
        for doc in docs {
            if doc == &files.channel {
                self.diags.error(
                    pos,
                    format!("document '{doc}' is also the channel file; give them different names"),
                );
            }
        }
    }
}
