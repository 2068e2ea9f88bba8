//! Loading the fixture corpus in `tests/fixtures/`.
//!
//! A message fixture is one JSON file in `tests/fixtures/messages/`:
//! `{"about": "...", "valid": true, "message": {...}}` or
//! `{"about": "...", "valid": false, "rule": "enum", "pointer": "/ev/status", "message": {...}}`;
//! `"raw": "..."` replaces `message` for input that is not JSON (or that repeats a key, which a parsed value cannot
//! show); `"strictIds": true` checks it with strict ids.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("generator/ has a parent").to_path_buf()
}

/// What a fixture should give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// Valid everywhere.
    Valid,
    /// Invalid everywhere; the precise checkers report this first error.
    Invalid { rule: String, pointer: String },
}

/// One message fixture.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// File stem.
    pub name: String,
    /// What it shows.
    pub about: String,
    /// The line as sent (JSON text, or raw text for malformed input).
    pub line: String,
    /// The parsed message, when the line is JSON.
    pub message: Option<Value>,
    /// Checked with strict ids.
    pub strict_ids: bool,
    /// The expected verdict.
    pub expect: Expect,
}

/// Every message fixture, sorted by name.
pub fn messages() -> Vec<Fixture> {
    crate::files::json_in(&root().join("tests/fixtures/messages")).iter().map(|p| parse(p)).collect()
}

fn parse(p: &Path) -> Fixture {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let name = p.file_stem().and_then(|s| s.to_str()).expect("utf-8 name").to_string();
    let about = v["about"].as_str().unwrap_or_else(|| panic!("{name}: `about` is required")).to_string();
    let (line, message) = match (v.get("message"), v.get("raw")) {
        (Some(m), None) => (serde_json::to_string(m).expect("serializable"), Some(m.clone())),
        (None, Some(Value::String(raw))) => (raw.clone(), parsed(raw)),
        _ => panic!("{name}: exactly one of `message` or `raw` (a string)"),
    };
    let expect = match v["valid"].as_bool() {
        Some(true) => Expect::Valid,
        Some(false) => Expect::Invalid {
            rule: v["rule"].as_str().unwrap_or_else(|| panic!("{name}: invalid fixtures name their `rule`")).into(),
            pointer: v["pointer"]
                .as_str()
                .unwrap_or_else(|| panic!("{name}: invalid fixtures name their `pointer`"))
                .into(),
        },
        None => panic!("{name}: `valid` must be true or false"),
    };
    Fixture { name, about, line, message, strict_ids: v["strictIds"].as_bool().unwrap_or(false), expect }
}

/// A raw line as the checkers that take a parsed value are given it: `None` when it is not JSON, or when one of its
/// objects repeats a key (every line checker refuses such a text; a `Value` would hold its last member).
pub fn parsed(raw: &str) -> Option<Value> {
    use serde::de::{DeserializeSeed, Deserializer, Error, MapAccess, SeqAccess, Visitor};
    struct Strict;
    impl<'de> DeserializeSeed<'de> for Strict {
        type Value = Value;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Strict {
        type Value = Value;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
            Ok(b.into())
        }
        fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
            Ok(n.into())
        }
        fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
            Ok(n.into())
        }
        fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
            Ok(n.into())
        }
        fn visit_str<E>(self, s: &str) -> Result<Value, E> {
            Ok(s.into())
        }
        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            let mut items = Vec::new();
            while let Some(v) = seq.next_element_seed(Strict)? {
                items.push(v);
            }
            Ok(Value::Array(items))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            let mut members = serde_json::Map::new();
            while let Some(k) = map.next_key::<String>()? {
                let v = map.next_value_seed(Strict)?;
                if members.insert(k, v).is_some() {
                    return Err(A::Error::custom("repeated key"));
                }
            }
            Ok(Value::Object(members))
        }
    }
    let mut de = serde_json::Deserializer::from_str(raw);
    let v = Strict.deserialize(&mut de).ok()?;
    de.end().ok().map(|()| v)
}

/// Whether a line of `text` is JSON that repeats a key in one object (`JSON.parse` reads it, keeping the last member).
pub fn repeats_a_key(text: &[u8]) -> bool {
    text.split(|&b| b == b'\n')
        .filter_map(|l| std::str::from_utf8(l).ok())
        .any(|l| serde_json::from_str::<serde::de::IgnoredAny>(l).is_ok() && parsed(l).is_none())
}
