//! A YAML tree that remembers where every node came from.
//!
//! serde-based deserialisation stops at the first problem; a workflow author
//! wants every problem at once, each with `line:col`. So the file is read into
//! this span-carrying tree first, and `load` walks it, collecting diagnostics.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

/// A 1-based position in the workflow file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A YAML value with the position of its node.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub pos: Pos,
    pub value: Value,
}

/// The shapes a YAML node can take, keys kept in file order.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Key, Node)>),
}

/// A mapping key with its own position (unknown keys are reported there).
#[derive(Clone, Debug, PartialEq)]
pub struct Key {
    pub pos: Pos,
    pub name: String,
}

impl Value {
    /// A short name of the shape, for "expected a string, found a list" errors.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "nothing (null)",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "a number",
            Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

/// A YAML syntax error with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    pub pos: Pos,
    pub message: String,
}

/// Parses YAML text into a [`Node`] tree. An empty document is `Null`.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    if text.trim().is_empty() {
        return Ok(Node {
            pos: Pos { line: 1, col: 1 },
            value: Value::Null,
        });
    }
    // Duplicate keys are passed through so the loader reports them with both
    // positions, in the same words as every other problem.
    let mut options = serde_saphyr::Options::default();
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::PassThrough;
    match serde_saphyr::from_str_with_options::<Spanned<Raw>>(text, options) {
        Ok(spanned) => Ok(node_from(spanned)),
        Err(err) => {
            let pos = err
                .location()
                .map(|l| Pos {
                    line: l.line() as u32,
                    col: l.column() as u32,
                })
                .unwrap_or(Pos { line: 1, col: 1 });
            let message = err.without_snippet().to_string();
            let message = message.lines().next().unwrap_or("invalid YAML").to_string();
            Err(SyntaxError { pos, message })
        }
    }
}

fn pos_of<T>(s: &Spanned<T>) -> Pos {
    Pos {
        line: s.referenced.line() as u32,
        col: s.referenced.column() as u32,
    }
}

fn node_from(spanned: Spanned<Raw>) -> Node {
    let pos = pos_of(&spanned);
    let value = match spanned.value {
        Raw::Null => Value::Null,
        Raw::Bool(b) => Value::Bool(b),
        Raw::Int(i) => Value::Int(i),
        Raw::Float(f) => Value::Float(f),
        Raw::Str(s) => Value::Str(s),
        Raw::Seq(items) => Value::Seq(items.into_iter().map(node_from).collect()),
        Raw::Map(entries) => Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| {
                    let key = Key {
                        pos: pos_of(&k),
                        name: k.value.into_string(),
                    };
                    (key, node_from(v))
                })
                .collect(),
        ),
    };
    Node { pos, value }
}

/// Deserialisation target that keeps the span of every child.
enum Raw {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Spanned<Raw>>),
    Map(Vec<(Spanned<RawKey>, Spanned<Raw>)>),
}

/// Keys may be written as numbers or booleans in YAML; they are names to us.
struct RawKey(String);

impl RawKey {
    fn into_string(self) -> String {
        self.0
    }
}

impl<'de> Deserialize<'de> for RawKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Raw::deserialize(d)?;
        Ok(RawKey(match raw {
            Raw::Null => String::new(),
            Raw::Bool(b) => b.to_string(),
            Raw::Int(i) => i.to_string(),
            Raw::Float(f) => f.to_string(),
            Raw::Str(s) => s,
            Raw::Seq(_) | Raw::Map(_) => {
                return Err(de::Error::custom("a mapping key must be a plain name"));
            }
        }))
    }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_none<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
        Raw::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Raw, E> {
        Ok(Raw::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Raw, E> {
        Ok(Raw::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Raw, E> {
        i64::try_from(v)
            .map(Raw::Int)
            .map_err(|_| E::custom("number too large"))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Raw, E> {
        Ok(Raw::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Raw, E> {
        Ok(Raw::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Raw, E> {
        Ok(Raw::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Raw>>()? {
            items.push(item);
        }
        Ok(Raw::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Spanned<RawKey>>()? {
            let value = map.next_value::<Spanned<Raw>>()?;
            entries.push((key, value));
        }
        Ok(Raw::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_values_carry_positions() {
        let text = "name: x\nagents:\n  coder:\n    model: m\ncontext:\n";
        let root = parse(text).unwrap();
        let Value::Map(entries) = &root.value else {
            panic!("not a map: {root:?}")
        };
        assert_eq!(entries[0].0.name, "name");
        assert_eq!(entries[0].0.pos, Pos { line: 1, col: 1 });
        assert_eq!(entries[0].1.pos, Pos { line: 1, col: 7 });
        let Value::Map(agents) = &entries[1].1.value else {
            panic!()
        };
        assert_eq!(agents[0].0.pos, Pos { line: 3, col: 3 });
        let Value::Map(coder) = &agents[0].1.value else {
            panic!()
        };
        assert_eq!(coder[0].1.pos, Pos { line: 4, col: 12 });
        assert_eq!(entries[2].1.value, Value::Null);
    }

    #[test]
    fn syntax_errors_have_positions() {
        let err = parse("agents:\n  a: [1, 2\n").unwrap_err();
        assert!(err.pos.line >= 2, "{err:?}");
        assert!(!err.message.is_empty());
    }

    #[test]
    fn block_scalars_and_false() {
        let root = parse("kickoff: |\n  hello @a\n  bye\ncontext: false\n").unwrap();
        let Value::Map(e) = root.value else { panic!() };
        assert_eq!(e[0].1.value, Value::Str("hello @a\nbye\n".into()));
        assert_eq!(e[1].1.value, Value::Bool(false));
    }
}
