//! The tag serde writes for a variant of an internally tagged enum
//! (`#[serde(tag = "…", rename_all = "…")]`), read from serde itself so a
//! variant's wire name is written once, by the derive:
//!
//! - [`variant_names`] asks the derived `Deserialize` for its list of
//!   variant names (the list it names when a tag is unknown);
//! - [`tag_of`] serializes a value until its tag and stops there, so no
//!   field (a 4 MiB document) is ever serialized.

use serde::de::{self, Deserialize};
use serde::ser::{self, Impossible, Serialize, Serializer};

/// Every variant's wire name, in declaration order, from `T`'s derived
/// `Deserialize` (read once per type; empty if `T` is not an internally
/// tagged enum with the tag field `tag`).
pub fn variant_names<'de, T: Deserialize<'de>>(tag: &'static str) -> &'static [&'static str] {
    let line = de::value::MapDeserializer::<_, Expected>::new(std::iter::once((tag, "\u{0}")));
    match T::deserialize(line) {
        Err(Expected(Some(names))) => names,
        _ => &[],
    }
}

/// The tag `value` is written with (looked up in `names`, from
/// [`variant_names`]); `None` if it has none.
pub fn tag_of<T: Serialize + ?Sized>(
    value: &T,
    tag: &'static str,
    names: &'static [&'static str],
) -> Option<&'static str> {
    match value.serialize(Finder { tag, names }) {
        Err(Stop::Found(name)) => Some(name),
        _ => None,
    }
}

/// The error a deserializer of one unknown tag ends with: the variant
/// names serde expected.
#[derive(Debug)]
struct Expected(Option<&'static [&'static str]>);

impl std::fmt::Display for Expected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "expected one of {:?}", self.0.unwrap_or_default())
    }
}

impl std::error::Error for Expected {}

impl de::Error for Expected {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        Expected(None)
    }

    fn unknown_variant(_: &str, expected: &'static [&'static str]) -> Self {
        Expected(Some(expected))
    }
}

/// How serializing for the tag ends: it always ends early.
#[derive(Debug)]
enum Stop {
    /// The tag, found among the names.
    Found(&'static str),
    /// Not an internally tagged value, or a tag not among the names.
    NotTagged,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}

impl std::error::Error for Stop {}

impl ser::Error for Stop {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        Stop::NotTagged
    }
}

/// A serializer that accepts a struct's first field named `tag` and the
/// string in it, and refuses everything else.
#[derive(Clone, Copy)]
struct Finder {
    tag: &'static str,
    names: &'static [&'static str],
}

/// Serializer methods that refuse their value.
macro_rules! refuse {
    ($($method:ident($($arg:ty),*) -> $ok:ty;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ok, Stop> {
            Err(Stop::NotTagged)
        })*
    };
}

impl Serializer for Finder {
    type Ok = ();
    type Error = Stop;
    type SerializeSeq = Impossible<(), Stop>;
    type SerializeTuple = Impossible<(), Stop>;
    type SerializeTupleStruct = Impossible<(), Stop>;
    type SerializeTupleVariant = Impossible<(), Stop>;
    type SerializeMap = Impossible<(), Stop>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), Stop>;

    fn serialize_str(self, v: &str) -> Result<(), Stop> {
        Err(self
            .names
            .iter()
            .find(|name| **name == v)
            .map_or(Stop::NotTagged, |name| Stop::Found(name)))
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Stop> {
        Ok(self)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Stop> {
        Err(Stop::NotTagged)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), Stop> {
        Err(Stop::NotTagged)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Stop> {
        Err(Stop::NotTagged)
    }

    refuse! {
        serialize_bool(bool) -> ();
        serialize_i8(i8) -> ();
        serialize_i16(i16) -> ();
        serialize_i32(i32) -> ();
        serialize_i64(i64) -> ();
        serialize_u8(u8) -> ();
        serialize_u16(u16) -> ();
        serialize_u32(u32) -> ();
        serialize_u64(u64) -> ();
        serialize_f32(f32) -> ();
        serialize_f64(f64) -> ();
        serialize_char(char) -> ();
        serialize_bytes(&[u8]) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }
}

impl ser::SerializeStruct for Finder {
    type Ok = ();
    type Error = Stop;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        // The tag comes first; whatever comes first ends the search.
        if key != self.tag {
            return Err(Stop::NotTagged);
        }
        value.serialize(*self)
    }

    fn end(self) -> Result<(), Stop> {
        Err(Stop::NotTagged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Shape {
        BigCircle { radius: u32 },
        Dot,
    }

    #[test]
    fn names_and_tags_come_from_serde() {
        let names = variant_names::<Shape>("kind");
        assert_eq!(names, ["big_circle", "dot"]);
        assert_eq!(
            tag_of(&Shape::BigCircle { radius: 2 }, "kind", names),
            Some("big_circle")
        );
        assert_eq!(tag_of(&Shape::Dot, "kind", names), Some("dot"));
        assert_eq!(tag_of(&3u8, "kind", names), None);
        assert_eq!(tag_of(&Shape::Dot, "other", names), None);
    }
}
