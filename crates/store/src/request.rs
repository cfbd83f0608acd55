//! [`RequestJson`]: the params of a task's original request, kept as compact JSON text.
//!
//! A task keeps its request for as long as it is stored (for audit, the task board and
//! tools that resume), yet reads it rarely: its tool name and arguments, now and then.
//! As a `serde_json::Value` tree every object of it is a map with its own allocations
//! (hundreds of bytes for a small `tools/call`), copied with every copy of the record;
//! as text it is one shared allocation the size of the JSON, and a copy of the record
//! copies a pointer.

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// The params of a task's original request as JSON text (always a valid JSON value;
/// normally an object). Cheap to clone. Two are equal when their JSON values are, so a
/// database that normalizes JSON (PostgreSQL's `jsonb` reorders keys) reads back an
/// equal request.
#[derive(Clone)]
pub struct RequestJson(Arc<str>);

impl RequestJson {
    /// The request `value` as text.
    pub fn from_value(value: &Value) -> Self {
        // Serializing a `Value` cannot fail (its keys are strings).
        RequestJson(Arc::from(value.to_string()))
    }

    /// Wraps JSON text read from a store, checking that it is JSON.
    ///
    /// # Errors
    /// The parser's error when `text` is not a JSON value.
    pub fn from_json(text: impl Into<String>) -> Result<Self, serde_json::Error> {
        let text = text.into();
        serde_json::from_str::<IgnoredAny>(&text)?;
        Ok(RequestJson(Arc::from(text)))
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The whole request as a value (parses it).
    pub fn to_value(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }

    /// The value of the top-level field `key`, when the request is an object that has
    /// it; parses that field only (the rest is skipped without allocating).
    pub fn field(&self, key: &str) -> Option<Value> {
        let mut de = serde_json::Deserializer::from_str(&self.0);
        FieldSeed { key }.deserialize(&mut de).ok().flatten()
    }

    /// The `name` field when it is a string: the tool of a `tools/call`. Borrows from
    /// the text unless the name has escapes.
    pub fn name(&self) -> Option<Cow<'_, str>> {
        #[derive(Deserialize)]
        struct Named<'a> {
            #[serde(borrow, default)]
            name: Option<Cow<'a, str>>,
        }
        if !self.0.trim_start().starts_with('{') {
            return None; // only an object has fields (serde would read an array too)
        }
        // A `name` that is not a string fails the whole parse: no name then, as asked.
        serde_json::from_str::<Named<'_>>(&self.0).ok()?.name
    }
}

impl Default for RequestJson {
    /// An empty object.
    fn default() -> Self {
        RequestJson(Arc::from("{}"))
    }
}

impl From<Value> for RequestJson {
    fn from(value: Value) -> Self {
        RequestJson::from_value(&value)
    }
}

impl From<&Value> for RequestJson {
    fn from(value: &Value) -> Self {
        RequestJson::from_value(value)
    }
}

impl PartialEq for RequestJson {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0 || self.to_value() == other.to_value()
    }
}

impl fmt::Debug for RequestJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for RequestJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads one top-level field of an object, skipping the others.
struct FieldSeed<'k> {
    key: &'k str,
}

impl<'de> DeserializeSeed<'de> for FieldSeed<'_> {
    type Value = Option<Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FieldSeed<'_> {
    type Value = Option<Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if found.is_none() && key == self.key {
                found = Some(map.next_value::<Value>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_fields_without_the_rest() {
        let r = RequestJson::from_value(&json!({
            "name": "deploy",
            "arguments": {"env": "prod", "n": [1, 2]},
            "_meta": {"progressToken": 7},
        }));
        assert_eq!(r.name().as_deref(), Some("deploy"));
        assert_eq!(
            r.field("arguments"),
            Some(json!({"env": "prod", "n": [1, 2]}))
        );
        assert_eq!(r.field("_meta"), Some(json!({"progressToken": 7})));
        assert_eq!(r.field("missing"), None);
        assert_eq!(r.to_value()["arguments"]["env"], "prod");
    }

    #[test]
    fn a_name_that_is_not_a_string_is_no_name() {
        assert_eq!(RequestJson::from_value(&json!({"name": 3})).name(), None);
        assert_eq!(RequestJson::from_value(&json!([1])).name(), None);
        assert_eq!(RequestJson::from_value(&json!("x")).field("name"), None);
        assert_eq!(
            RequestJson::from_value(&json!({"name": "a\"b"}))
                .name()
                .as_deref(),
            Some("a\"b")
        );
    }

    #[test]
    fn equal_when_the_json_is_whatever_the_text() {
        let a = RequestJson::from_json(r#"{"a":1,"bb":2}"#).unwrap();
        let b = RequestJson::from_json(r#"{"bb": 2, "a": 1}"#).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, RequestJson::from_value(&json!({"a": 2})));
        assert!(RequestJson::from_json("{").is_err());
    }
}
