//! The parsed message the precise engine walks: a JSON tree that borrows its strings from the line it was read
//! from (only a string with an escape is copied) and keeps an object's members in a plain list, in input order.
//!
//! It is what [`serde_json::Value`] (with `preserve_order`) would hold for the same text, read by the same
//! parser: the same syntax errors, numbers and recursion limit, except that a repeated key is an error (a `Value`
//! keeps its last member, other parsers the first: the text does not say one message). It only costs less to build, walk and drop: no hashing and no copy per key, one allocation per
//! array or object. An object of many members also gets a hash index, so neither a repeated-key check while
//! parsing nor a lookup afterwards turns quadratic on a hostile message.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Number, Value};

/// A JSON value borrowed from the text it was parsed from (or from a [`Value`]).
#[derive(Debug, Clone)]
pub enum Json<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as serde_json reads it.
    Number(Number),
    /// A string: borrowed unless it held an escape.
    String(Cow<'a, str>),
    /// An array.
    Array(Vec<Json<'a>>),
    /// An object, its members in input order.
    Object(Object<'a>),
}

/// An object's members in input order, each key once.
#[derive(Debug, Clone, Default)]
pub struct Object<'a> {
    members: Vec<Member<'a>>,
    /// Key -> position, kept once the object has more than [`INDEXED`] members. Boxed: it keeps an object, and
    /// so every value, at 32 bytes instead of 72.
    #[allow(clippy::box_collection)]
    index: Option<Box<HashMap<Box<str>, usize>>>,
}

/// Up to this many members an object is searched by a scan, which beats hashing at that size.
const INDEXED: usize = 16;

/// One member of an object.
#[derive(Debug, Clone)]
struct Member<'a> {
    /// The key's [`tag`]: a scan compares it before it reads the key.
    tag: u32,
    key: Cow<'a, str>,
    value: Json<'a>,
}

/// A key's length and its first and last bytes in one number: two keys that differ in any of them are told apart
/// by one compare (`time` and `turn`, `text` and `title` are).
fn tag(key: &str) -> u32 {
    let b = key.as_bytes();
    let byte = |c: Option<&u8>| u32::from(c.copied().unwrap_or(0));
    (b.len().min(0xFFFF) as u32) << 16 | byte(b.first()) << 8 | byte(b.last())
}

impl<'a> Object<'a> {
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.position(key).map(|i| &self.members[i].value)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// The members, in input order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Json<'a>)> {
        self.members.iter().map(|m| (&*m.key, &m.value))
    }

    /// The keys, in input order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.members.iter().map(|m| &*m.key)
    }

    /// How many members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether there is no member.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    fn position(&self, key: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => {
                let t = tag(key);
                self.members.iter().position(|m| m.tag == t && *m.key == *key)
            }
        }
    }

    /// Adds a member whose key is not present yet (the parser refuses a repeated key, and a `Value` has none).
    fn push(&mut self, key: Cow<'a, str>, value: Json<'a>) {
        if let Some(index) = &mut self.index {
            index.insert(Box::from(&*key), self.members.len());
        }
        self.members.push(Member { tag: tag(&key), key, value });
        if self.index.is_none() && self.members.len() > INDEXED {
            self.index =
                Some(Box::new(self.members.iter().enumerate().map(|(i, m)| (Box::from(&*m.key), i)).collect()));
        }
    }
}

/// Whether `v` nests at most `levels` levels deep (arrays and objects, `v` itself included), found without
/// recursion and without looking below `levels`.
pub(crate) fn depth_within(v: &Value, levels: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(v, 0)];
    while let Some((v, depth)) = stack.pop() {
        match v {
            Value::Array(_) | Value::Object(_) if depth == levels => return false,
            Value::Array(items) => stack.extend(items.iter().map(|c| (c, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|c| (c, depth + 1))),
            _ => {}
        }
    }
    true
}

impl<'a> Json<'a> {
    /// Parses one JSON text as `serde_json::from_str::<Value>` would (same errors, same values), but refusing an
    /// object's repeated key, at that key: a custom error saying `diag::REPEATED_KEY`, which
    /// `diag::first_repeated_key` places ([`crate::engine::parse_json`] says where).
    ///
    /// # Errors
    /// serde_json's error for the text, or the repeated key.
    pub fn parse(text: &'a str) -> Result<Self, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(text);
        let v = Json::deserialize(&mut de)?;
        de.end()?;
        Ok(v)
    }

    /// A view of a [`Value`] (its strings borrowed).
    pub fn from_value(v: &'a Value) -> Self {
        match v {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) => Json::Number(n.clone()),
            Value::String(s) => Json::String(Cow::Borrowed(s)),
            Value::Array(items) => Json::Array(items.iter().map(Json::from_value).collect()),
            Value::Object(map) => {
                let mut o = Object { members: Vec::with_capacity(map.len()), index: None };
                for (k, v) in map {
                    o.push(Cow::Borrowed(k), Json::from_value(v));
                }
                Json::Object(o)
            }
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    /// Whether this is `true` or `false`.
    pub fn is_boolean(&self) -> bool {
        matches!(self, Json::Bool(_))
    }

    /// Whether this is a number.
    pub fn is_number(&self) -> bool {
        matches!(self, Json::Number(_))
    }

    /// Whether this is a string.
    pub fn is_string(&self) -> bool {
        matches!(self, Json::String(_))
    }

    /// Whether this is an array.
    pub fn is_array(&self) -> bool {
        matches!(self, Json::Array(_))
    }

    /// Whether this is an object.
    pub fn is_object(&self) -> bool {
        matches!(self, Json::Object(_))
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// The number, if this is one.
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Json::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The items, if this is an array.
    pub fn as_array(&self) -> Option<&[Json<'a>]> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The members, if this is an object.
    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The compact JSON text of this value, byte for byte what serde_json writes for the same `Value`.
    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The compact JSON text of this value as a message shows it: numbers with a fraction or an exponent as
    /// JavaScript writes them ([`crate::engine::number_text`]: `1e2` as `100`, `-0` as `0`), so that every checker
    /// shows a value alike; an integer written as digits that fit 64 bits as written.
    pub fn shown_text(&self) -> String {
        let mut out = String::new();
        self.write_shown(&mut out);
        out
    }

    fn write_shown(&self, out: &mut String) {
        match self {
            Json::Number(n) if n.is_f64() => out.push_str(&crate::engine::number_text(n.as_f64().unwrap_or(0.0))),
            Json::Array(items) => {
                out.push('[');
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    x.write_shown(out);
                }
                out.push(']');
            }
            Json::Object(o) => {
                out.push('{');
                for (i, (k, x)) in o.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::to_string(k).unwrap_or_default());
                    out.push(':');
                    x.write_shown(out);
                }
                out.push('}');
            }
            other => out.push_str(&other.to_json_string()),
        }
    }
}

/// JSON equality as JSON Schema defines it: numbers by value (`1` equals `1.0`), objects by their members
/// whatever the key order, arrays element by element.
pub fn equal(a: &Json<'_>, b: &Json<'_>) -> bool {
    match (a, b) {
        (Json::Null, Json::Null) => true,
        (Json::Bool(x), Json::Bool(y)) => x == y,
        (Json::Number(x), Json::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(p), Some(q)) => p == q,
            _ => false,
        },
        (Json::String(x), Json::String(y)) => x == y,
        (Json::Array(x), Json::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q)),
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => false,
    }
}

/// The first pair `(i, j)` of equal items ([`equal`]): the least `j`, then the least `i`, which is what comparing
/// every pair in order finds, but in time linear in the items' size ([`Groups`]).
pub fn first_duplicate(items: &[Json<'_>]) -> Option<(usize, usize)> {
    let mut groups = Groups { groups: HashMap::with_capacity(items.len()), ..Groups::default() };
    items.iter().enumerate().find_map(|(j, item)| groups.find_or_add(item, j, |i| &items[i]).map(|i| (i, j)))
}

/// A set of JSON values under [`equal`] (`1` and `1.0` are one member), in time linear in the values' size
/// ([`Groups`]; a schema's `enum` of 200,000 numbers took minutes pairwise).
#[derive(Default)]
pub struct JsonSet<'a> {
    groups: Groups,
    values: Vec<Json<'a>>,
}

impl<'a> JsonSet<'a> {
    /// Adds `v`; false if an equal value is already in.
    pub fn insert(&mut self, v: Json<'a>) -> bool {
        let JsonSet { groups, values } = self;
        if groups.find_or_add(&v, values.len(), |i| &values[i]).is_some() {
            return false;
        }
        values.push(v);
        true
    }

    /// Whether a value equal to `v` is in.
    pub fn contains(&self, v: &Json<'_>) -> bool {
        self.groups.find(v, |i| &self.values[i]).is_some()
    }
}

/// Values (by index) grouped by a hash that [`equal`] values share ([`hash_into`]), keyed per instance so a hostile
/// message cannot make them all collide: a value is compared only with the values of its group.
#[derive(Default)]
struct Groups {
    keys: std::collections::hash_map::RandomState,
    groups: HashMap<u64, Vec<usize>>,
}

impl Groups {
    fn hash(&self, v: &Json<'_>) -> u64 {
        use std::hash::BuildHasher;
        let mut h = self.keys.build_hasher();
        hash_into(v, &self.keys, &mut h);
        std::hash::Hasher::finish(&h)
    }

    /// The first index whose value (`value(i)`) equals `v`.
    fn find<'v, 'j: 'v>(&self, v: &Json<'_>, value: impl Fn(usize) -> &'v Json<'j>) -> Option<usize> {
        self.groups.get(&self.hash(v))?.iter().copied().find(|&i| equal(value(i), v))
    }

    /// The first index whose value equals `v`, or `None` after recording `v` as index `at`.
    fn find_or_add<'v, 'j: 'v>(
        &mut self,
        v: &Json<'_>,
        at: usize,
        value: impl Fn(usize) -> &'v Json<'j>,
    ) -> Option<usize> {
        let group = self.groups.entry(self.hash(v)).or_default();
        let found = group.iter().copied().find(|&i| equal(value(i), v));
        if found.is_none() {
            group.push(at);
        }
        found
    }
}

/// Feeds `v` to `h` so that [`equal`] values hash the same: a number by its double (`-0` as `0`), an object's
/// members summed in any order (each hashed on its own with `keys`).
fn hash_into(v: &Json<'_>, keys: &impl std::hash::BuildHasher, h: &mut impl std::hash::Hasher) {
    use std::hash::Hash;
    match v {
        Json::Null => h.write_u8(0),
        Json::Bool(b) => (1u8, *b).hash(h),
        Json::Number(n) => (2u8, n.as_f64().map(|f| if f == 0.0 { 0 } else { f.to_bits() })).hash(h),
        Json::String(s) => (3u8, s.as_ref()).hash(h),
        Json::Array(items) => {
            (4u8, items.len()).hash(h);
            for item in items {
                hash_into(item, keys, h);
            }
        }
        Json::Object(o) => {
            let mut sum = 0u64;
            for (k, x) in o.iter() {
                let mut m = keys.build_hasher();
                k.hash(&mut m);
                hash_into(x, keys, &mut m);
                sum = sum.wrapping_add(std::hash::Hasher::finish(&m));
            }
            (5u8, o.len(), sum).hash(h);
        }
    }
}

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(v) => s.serialize_str(v),
            Json::Array(items) => s.collect_seq(items),
            Json::Object(o) => s.collect_map(o.iter()),
        }
    }
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Json<'de>, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Json<'de>, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Json<'de>, E> {
        // As `Value` does: a non-finite float (which the parser never yields) would be null.
        Ok(Number::from_f64(v).map_or(Json::Null, Json::Number))
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(v)))
    }

    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            // Reading counts as work under a deadline too: one line of 16 MiB took the service seconds to read
            // past its `--timeout-ms` (helper 88), as the check ticks only once the tree is read.
            super::deadline::tick();
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let first = map.next_key_seed(KeySeed)?;
        if first.as_deref() == Some(NUMBER_TOKEN) && numbers_as_maps() {
            let text: Cow<'de, str> = map.next_value_seed(KeySeed)?;
            return number_from_text(&text)
                .map(Json::Number)
                .ok_or_else(|| serde::de::Error::custom("not a finite JSON number"));
        }
        // Room for a typical message object's members at once, instead of growing through 4 and 8.
        let mut o = Object { members: Vec::with_capacity(8), index: None };
        let mut next = first;
        while let Some(key) = next {
            // Refused before its value is read, so the parser stops at the key (see `Json::parse`).
            if o.contains_key(&key) {
                return Err(serde::de::Error::custom(crate::diag::REPEATED_KEY));
            }
            let value = map.next_value()?;
            super::deadline::tick();
            o.push(key, value);
            next = map.next_key_seed(KeySeed)?;
        }
        Ok(Json::Object(o))
    }
}

/// The key under which serde_json hands a number over as its text (a map of that one entry) when its
/// `arbitrary_precision` feature is on, which any crate of a build turns on for every other.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// Whether serde_json hands numbers over as [`NUMBER_TOKEN`] maps in this build (asked once, of a fraction:
/// integers that fit 64 bits come as integers either way). Only then is such a map a number: otherwise it is an
/// object a message may well hold.
fn numbers_as_maps() -> bool {
    struct Probe;
    impl<'de> Visitor<'de> for Probe {
        type Value = bool;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a number")
        }
        fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<bool, A::Error> {
            Ok(true)
        }
    }
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| serde_json::Deserializer::from_str("0.5").deserialize_any(Probe).unwrap_or(false))
}

/// A number given as its text, as serde_json's default features read it: an integer that fits 64 bits as one
/// (`-0` as the double it is), else the nearest double, `None` when that is not finite.
fn number_from_text(text: &str) -> Option<Number> {
    if text == "-0" {
        return Number::from_f64(-0.0);
    }
    if let Ok(u) = text.parse::<u64>() {
        return Some(u.into());
    }
    if let Ok(i) = text.parse::<i64>() {
        return Some(i.into());
    }
    text.parse::<f64>().ok().filter(|f| f.is_finite()).and_then(Number::from_f64)
}

/// Reads an object key, borrowed unless it held an escape.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_given_as_text_read_as_the_default_features_read_them() {
        // What serde_json's `arbitrary_precision` (which any crate of a build may turn on) hands over as text.
        for text in ["0", "-5", "18446744073709551615", "-9223372036854775808", "1.5", "1e3", "1000.0", "-0"] {
            let want: Number = serde_json::from_str(text).expect("a number");
            assert_eq!(number_from_text(text), Some(want), "{text}");
        }
        assert_eq!(number_from_text("18446744073709551616"), Number::from_f64(18446744073709551616.0));
        assert_eq!(number_from_text("1e400"), None);
        // In this build numbers come as numbers, so an object under that key is an object a message may hold.
        assert!(!numbers_as_maps());
        same_as_value(&format!(r#"{{"{NUMBER_TOKEN}":"5"}}"#));
        assert!(matches!(Json::parse(&format!(r#"{{"{NUMBER_TOKEN}":"5"}}"#)), Ok(Json::Object(_))));
    }

    /// The texts the tree must read exactly as `Value` does: escapes, numbers at the edges, keys alike, nesting,
    /// whitespace, and broken texts whose errors must be the same.
    const TEXTS: &[&str] = &[
        r#"{"a":1,"b":[true,false,null],"c":{"d":"e\"\\\u00e9\ud83d\ude00"}}"#,
        r#"  [1, -1, 1.5, 1e400, -0, 0.1, 18446744073709551615, 18446744073709551616, -9223372036854775809, 1E2]  "#,
        r#"{"ab":1,"ac":2,"a":4,"":5,"b":{"ab":1}}"#,
        // Keys alike in length, first and last byte (one tag), told apart by their bytes.
        r#"{"tart":1,"tact":2,"tent":3,"t":5,"tt":6}"#,
        r#"[[[[[]]]]]"#,
        r#""plain""#,
        r#"{"a":1,}"#,
        r#"{"a":1} x"#,
        r#"[1,2"#,
        r#"{"a":tru}"#,
        r#"01"#,
        "\"tab\there\"",
        "",
    ];

    fn same_as_value(text: &str) {
        let value = serde_json::from_str::<Value>(text);
        let json = Json::parse(text);
        match (&value, &json) {
            (Ok(v), Ok(j)) => {
                assert_eq!(serde_json::to_string(v).unwrap(), j.to_json_string(), "{text}");
                assert!(equal(&Json::from_value(v), j), "{text}");
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{text}"),
            _ => panic!("{text}: Value gave {value:?}, the tree gave {json:?}"),
        }
    }

    #[test]
    fn reads_every_text_as_value_does() {
        for text in TEXTS {
            same_as_value(text);
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        same_as_value(&deep);
    }

    /// A repeated key stops the parser at it, whether the object is scanned (few members) or indexed (many), and
    /// whatever the spelling of the key (an escape) or its value; serde_json's error at that point says so. The
    /// same key in two objects is no repetition.
    #[test]
    fn a_repeated_key_is_refused_at_it() {
        let repeated = |text: &str| {
            let e = Json::parse(text).expect_err(text);
            assert_eq!(crate::engine::parse_error_what(&e), crate::diag::REPEATED_KEY, "{text}");
            // Stopped at the key (its closing quote), before its value: an error after it is not reached.
            e.column()
        };
        assert_eq!(repeated(r#"{"k":1,"k":"two","j":3,"k":[4]}"#), 10);
        assert_eq!(repeated(r#"{"ab":1,"ac":2,"\u0061b":3} x"#), 24);
        assert_eq!(repeated(r#"{"tart":1,"tact":2,"tent":3,"tact":{"a":tru}}"#), 34);
        assert_eq!(repeated(r#"[{"a":{}},{"b":{"c":1,"c":"#), 25);
        let many = |repeat: bool| {
            let mut text = String::from("{");
            for k in 0..300 {
                text.push_str(&format!("\"k{k}\":{k},"));
            }
            text.push_str(if repeat { "\"k7\":0}" } else { "\"last\":true}" });
            text
        };
        repeated(&many(true));
        same_as_value(&many(false));
        let text = many(false);
        let j = Json::parse(&text).unwrap();
        let o = j.as_object().unwrap();
        assert_eq!(o.len(), 301);
        assert_eq!(o.keys().next(), Some("k0"));
        assert_eq!(o.get("k7").and_then(Json::as_number).and_then(Number::as_u64), Some(7));
        assert!(o.contains_key("last") && !o.contains_key("k300"));
        assert!(Json::parse(r#"{"a":{"k":1},"b":{"k":1},"k":[{"k":0},{"k":0}]}"#).is_ok());
    }

    #[test]
    fn keys_with_one_tag_are_found_by_their_bytes() {
        let j = Json::parse(r#"{"tart":1,"tact":2,"tent":3}"#).unwrap();
        let o = j.as_object().unwrap();
        let n = |k: &str| o.get(k).and_then(Json::as_number).and_then(Number::as_u64);
        assert_eq!((n("tart"), n("tact"), n("tent"), n("test")), (Some(1), Some(2), Some(3), None));
        assert_eq!(o.keys().collect::<Vec<_>>(), ["tart", "tact", "tent"]);
    }

    #[test]
    fn unescaped_strings_and_keys_are_borrowed_escaped_ones_copied() {
        let text = r#"{"plain":"text","esc\n":"a\tb"}"#;
        let j = Json::parse(text).unwrap();
        let o = j.as_object().unwrap();
        let (k0, v0) = (&o.members[0].key, &o.members[0].value);
        assert!(matches!(k0, Cow::Borrowed(_)) && matches!(v0, Json::String(Cow::Borrowed("text"))));
        let (k1, v1) = (&o.members[1].key, &o.members[1].value);
        assert!(matches!(k1, Cow::Owned(_)) && matches!(v1, Json::String(Cow::Owned(_))));
    }

    #[test]
    fn the_first_duplicate_is_the_pairwise_ones() {
        let items = |t: &'static str| match Json::parse(t).unwrap() {
            Json::Array(a) => a,
            _ => unreachable!(),
        };
        let pairwise =
            |a: &[Json<'_>]| (1..a.len()).find_map(|j| (0..j).find(|&i| equal(&a[i], &a[j])).map(|i| (i, j)));
        for t in [
            "[]",
            "[1]",
            "[1, 2, 3]",
            "[1, 2, 1.0]",
            "[0, -0]",
            "[-0.0, 0]",
            r#"[{"a":1,"b":[2]}, 3, {"b":[2.0],"a":1}]"#,
            r#"[{"a":1}, {"a":1,"b":1}, {"b":1,"a":1.0}]"#,
            r#"["a", "b", "c", "b", "a"]"#,
            r#"[[1,2], [2,1], [1,2.0]]"#,
            "[null, false, 0, \"\", [], {}, null]",
            r#"[{"a":{"b":{"c":[1,{"d":2}]}}}, {"a":{"b":{"c":[1,{"d":2.0}]}}}]"#,
        ] {
            let a = items(t);
            assert_eq!(first_duplicate(&a), pairwise(&a), "{t}");
        }
        // 200,000 distinct items and a repeat of one of them (the pairwise loop took ~70 s on as many integers).
        let many = format!("[{},17.0]", (0..200_000).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
        let Json::Array(a) = Json::parse(&many).unwrap() else { unreachable!() };
        assert_eq!(first_duplicate(&a), Some((17, 200_000)));
    }

    #[test]
    fn equality_is_json_schemas() {
        let p = |t: &'static str| Json::parse(t).unwrap();
        assert!(equal(&p("1"), &p("1.0")));
        assert!(equal(&p(r#"{"a":1,"b":[2]}"#), &p(r#"{"b":[2.0],"a":1}"#)));
        assert!(!equal(&p(r#"{"a":1}"#), &p(r#"{"a":1,"b":1}"#)));
        assert!(!equal(&p("[1,2]"), &p("[2,1]")));
        assert!(!equal(&p("0"), &p("false")) && !equal(&p("null"), &p("\"\"")));
    }

    #[test]
    fn depth_is_measured_without_recursion() {
        let nest = |n: usize| {
            (0..n).fold(Value::Null, |v, i| {
                if i % 2 == 0 {
                    Value::Array(vec![v])
                } else {
                    Value::Object(serde_json::Map::from_iter([("a".to_string(), v)]))
                }
            })
        };
        assert!(depth_within(&nest(127), 127));
        assert!(!depth_within(&nest(128), 127));
        assert!(
            depth_within(&serde_json::json!([1, [2], {"a": [3]}]), 3)
                && !depth_within(&serde_json::json!([1, [2], {"a": [3]}]), 2)
        );
        // Far past any stack: answered, and the value is taken apart without recursion so dropping it is safe too.
        let mut deep = nest(200_000);
        assert!(!depth_within(&deep, 127));
        while let Some(inner) = match &mut deep {
            Value::Array(a) => a.pop(),
            Value::Object(o) => o.remove("a"),
            _ => None,
        } {
            deep = inner;
        }
    }
}
