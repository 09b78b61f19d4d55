//! Tool input schemas, derived from the argument structs the calls are
//! parsed into (`#[derive(Deserialize, JsonSchema)]`): a parameter's
//! description is its field's doc comment, so what `tools/list` shows and
//! what the parser accepts cannot drift apart.
//!
//! The derived schema is then made plain for real clients
//! (`REAL-CLIENTS.md`: Gemini CLI and others choke on `$ref`/`$defs`,
//! `null` alternatives and formats such as `uint`): every subschema is
//! inline; an optional argument is its type, not "type or null"; no
//! `format`, `default`, `title` or `$schema`; the arguments object always
//! has `properties` and `required`.

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::{JsonSchema, Schema, json_schema};
use serde_json::{Map, Value};

/// The input schema of a tool whose arguments parse into `T`.
pub fn input_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = Value::from(generator.into_root_schema_for::<T>());
    plain(&mut schema);
    if let Value::Object(root) = &mut schema {
        // The tool's own description says what it does.
        root.remove("description");
        root.entry("properties")
            .or_insert_with(|| Map::new().into());
        root.entry("required")
            .or_insert_with(|| Vec::<Value>::new().into());
    }
    schema
}

/// A message id (0 for the very start) or an ISO 8601 timestamp: what
/// `since`, `after` and `until` take (read by the tools'
/// `parse_position`, which tells a bad id from a malformed request).
pub fn id_or_time(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string"}]})
}

/// A message id from 1 up or a timestamp string: what `before` takes (a
/// timestamp there is refused with a sentence, not by the schema).
pub fn id_from_one_or_time(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"anyOf": [{"type": "integer", "minimum": 1}, {"type": "string"}]})
}

/// Makes `schema` and its subschemas plain (see the module's doc).
fn plain(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    for key in ["$schema", "title", "format", "default"] {
        map.remove(key);
    }
    if map.get("additionalProperties") == Some(&Value::Bool(true)) {
        map.remove("additionalProperties");
    }
    if let Some(Value::String(text)) = map.get_mut("description") {
        *text = text.replace('\n', " ");
    }
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            map.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(alternatives)) = map.get_mut("anyOf") {
        alternatives.retain(|a| a.get("type").is_none_or(|t| t != "null"));
        if let [only] = alternatives.as_slice() {
            // One alternative left: it is the schema.
            let Value::Object(only) = only.clone() else {
                return;
            };
            map.remove("anyOf");
            for (key, value) in only {
                map.entry(key).or_insert(value);
            }
            return plain(schema);
        }
    }
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        properties.values_mut().for_each(plain);
    }
    if let Some(Value::Array(alternatives)) = map.get_mut("anyOf") {
        alternatives.iter_mut().for_each(plain);
    }
    if let Some(items) = map.get_mut("items") {
        plain(items);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::tools;
    use serde_json::json;

    /// Arguments of every shape the tools use.
    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Sample {
        /// A name,
        /// on two lines.
        name: String,
        /// How many.
        #[schemars(range(min = 1))]
        count: Option<u64>,
        /// Yes or no.
        #[serde(default)]
        flag: bool,
        /// One or several.
        many: Option<OneOrMany>,
        /// Nested.
        inner: Option<Inner>,
    }

    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(untagged)]
    #[allow(dead_code)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }

    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        /// Ids.
        ids: Vec<String>,
    }

    #[test]
    fn derived_schemas_are_plain_and_inline() {
        assert_eq!(
            input_schema::<Sample>(),
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "A name, on two lines."},
                    "count": {"type": "integer", "minimum": 1, "description": "How many."},
                    "flag": {"type": "boolean", "description": "Yes or no."},
                    "many": {
                        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
                        "description": "One or several."
                    },
                    "inner": {
                        "type": "object",
                        "properties": {"ids": {"type": "array", "items": {"type": "string"}, "description": "Ids."}},
                        "required": ["ids"],
                        "description": "Nested."
                    }
                },
                "required": ["name"],
                "additionalProperties": false
            })
        );
    }

    /// `schema` without its descriptions (the keyword, not a property
    /// that happens to be called `description`).
    fn without_descriptions(schema: &Value) -> Value {
        match schema {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(k, v)| !(k.as_str() == "description" && v.is_string()))
                    .map(|(k, v)| {
                        let v = match (k.as_str(), v) {
                            ("properties", Value::Object(props)) => Value::Object(
                                props
                                    .iter()
                                    .map(|(name, p)| (name.clone(), without_descriptions(p)))
                                    .collect(),
                            ),
                            _ => without_descriptions(v),
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(without_descriptions).collect()),
            other => other.clone(),
        }
    }

    /// Issue 24 (7): every tool's name, description and input schema as
    /// they were when the schemas were written by hand
    /// (`tests/fixtures/tool_schemas.json`, the order of `tools/list`).
    /// What clients rely on (property names, types, required, enums,
    /// bounds, defaults) must not change; a parameter's description may.
    #[test]
    fn every_schema_matches_the_recorded_contract() {
        let recorded: Vec<Value> =
            serde_json::from_str(include_str!("../../tests/fixtures/tool_schemas.json")).unwrap();
        let now = crate::mcp::registry::all_specs();
        let names: Vec<&str> = now.iter().map(|s| s.name).collect();
        let want: Vec<&str> = recorded
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, want);
        for (spec, old) in now.iter().zip(&recorded) {
            assert_eq!(spec.description, old["description"], "{}", spec.name);
            assert_eq!(
                without_descriptions(&spec.input_schema),
                without_descriptions(&old["input_schema"]),
                "{}: {}",
                spec.name,
                spec.input_schema
            );
        }
    }

    /// `schema` and every schema inside it.
    fn all_schemas(schema: &Value) -> Vec<&Value> {
        let mut out = vec![schema];
        let properties = schema["properties"].as_object().into_iter().flatten();
        let alternatives = schema["anyOf"].as_array().into_iter().flatten();
        for inner in properties.map(|(_, p)| p).chain(alternatives) {
            out.extend(all_schemas(inner));
        }
        if let Some(items) = schema.get("items") {
            out.extend(all_schemas(items));
        }
        out
    }

    /// Issue 24 (7): schemas every real client takes (no `$ref`/`$defs`,
    /// `oneOf`, `null` types or formats such as `uint`,
    /// `REAL-CLIENTS.md`), and every argument, however deep, says what it
    /// is.
    #[test]
    fn every_schema_is_plain_and_every_argument_described() {
        let all = crate::mcp::registry::all_specs();
        for spec in &all {
            for schema in all_schemas(&spec.input_schema) {
                for banned in ["$ref", "$defs", "definitions", "$schema", "oneOf", "format"] {
                    assert!(schema.get(banned).is_none(), "{}: {schema}", spec.name);
                }
                assert!(!schema["type"].is_array(), "{}: {schema}", spec.name);
                assert_ne!(schema["type"], "null", "{}", spec.name);
                for (name, p) in schema["properties"].as_object().into_iter().flatten() {
                    let about = p["description"].as_str().unwrap_or_default();
                    assert!(!about.trim().is_empty(), "{}: {name}", spec.name);
                }
            }
        }
        // What is said about `limit` follows the limits it is checked against.
        let read = &all
            .iter()
            .find(|s| s.name == "channel_read")
            .unwrap()
            .input_schema;
        assert_eq!(read["properties"]["limit"]["maximum"], tools::MAX_LIMIT);
        let about = read["properties"]["limit"]["description"].as_str().unwrap();
        assert!(about.contains(&format!(
            "default {}, at most {}",
            tools::DEFAULT_LIMIT,
            tools::MAX_LIMIT
        )));
    }
}
