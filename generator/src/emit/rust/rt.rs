//! The runtime of the generated types: the `Error` they report, the `Extra` map that keeps the properties an
//! object does not declare, an order-preserving JSON tree, lazily rendered JSON Pointers and the checks every
//! generated decoder is built from. The same for every schema: the generated code says which checks apply
//! where, this module says what each check means (exactly what the reference engine does, in the same order,
//! with the same rule ids and pointers).
// `collapsible_if`: in an edition-2024 crate nested `if let`s are "collapsible" into let chains, which edition
// 2021 lacks; this module is in both (a generated crate, `wiregen types --lang rust` pasted anywhere).
#![allow(dead_code, clippy::collapsible_if)]

use std::sync::OnceLock;

use super::Rule;

/// Why a value was refused: the first broken rule, located by a JSON Pointer into the value.
///
/// The first error is the one every checker of the schema agrees on: an object's declared properties in schema
/// order, each checked in depth, then the other properties in input order, then its counts; role rules only
/// once the shape of an envelope is valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pointer: String,
    rule: Rule,
    message: String,
}

impl Error {
    pub(crate) fn new(rule: Rule, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Error { pointer: pointer.into(), rule, message: message.into() }
    }

    /// JSON Pointer to the offending value (`""` for the whole value).
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// The rule that was broken.
    pub fn rule(&self) -> Rule {
        self.rule
    }

    /// A human explanation.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at \"{}\": {}", self.rule.id(), self.pointer, self.message)
    }
}

impl std::error::Error for Error {}

/// The properties of an object besides the ones its schema declares, in input order (whatever `serde_json`'s
/// features are). Written back after the declared properties, in this order; a key the object declares is
/// never written from here.
#[derive(Debug, Clone, PartialEq)]
pub struct Extra<T>(Vec<(String, T)>);

impl<T> Default for Extra<T> {
    fn default() -> Self {
        Extra(Vec::new())
    }
}

impl<T> Extra<T> {
    /// An empty map.
    pub fn new() -> Self {
        Extra(Vec::new())
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&T> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Sets `key` (in its place when it is there already, else at the end); returns the previous value.
    pub fn insert(&mut self, key: impl Into<String>, value: T) -> Option<T> {
        let key = key.into();
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => Some(std::mem::replace(v, value)),
            None => {
                self.0.push((key, value));
                None
            }
        }
    }

    /// Removes `key`; returns its value.
    pub fn remove(&mut self, key: &str) -> Option<T> {
        let i = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(i).1)
    }

    /// The keys and values, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// How many properties.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<T> FromIterator<(String, T)> for Extra<T> {
    fn from_iter<I: IntoIterator<Item = (String, T)>>(iter: I) -> Self {
        let mut out = Extra::new();
        for (k, v) in iter {
            out.insert(k, v);
        }
        out
    }
}

impl<T> IntoIterator for Extra<T> {
    type Item = (String, T);
    type IntoIter = std::vec::IntoIter<(String, T)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// Written as the generated types write their parts: `Extra<f64>` writes a whole number as an integer (`4`).
impl<T: Wire> serde::Serialize for Extra<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, W(v))))
    }
}

/// Writes the properties of `extra` that are not `declared` into a map being serialized.
pub(crate) fn write_extra<M: serde::ser::SerializeMap, T: Wire>(
    m: &mut M,
    extra: &Extra<T>,
    declared: &[&str],
) -> Result<(), M::Error> {
    for (k, v) in &extra.0 {
        if !declared.contains(&k.as_str()) {
            m.serialize_entry(k, &W(v))?;
        }
    }
    Ok(())
}

/// How a generated type writes its parts: as serde writes them, except a number held in an `f64` that is whole
/// and fits 64 bits, which is written as an integer (`7`, as JavaScript's `JSON.stringify` writes it), not as
/// serde_json writes an `f64` (`7.0`, which a reader of the field into an integer type refuses). Numbers stay
/// what they are: `7` and `7.0` are the same JSON Schema value.
pub(crate) trait Wire: serde::Serialize {
    fn wire<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.serialize(s)
    }
}

/// A part written through [`Wire`].
pub(crate) struct W<'a, T: ?Sized>(pub(crate) &'a T);

impl<T: Wire + ?Sized> serde::Serialize for W<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.wire(s)
    }
}

impl Wire for f64 {
    fn wire<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        const TWO_63: f64 = 9_223_372_036_854_775_808.0;
        let x = *self;
        if !x.is_finite() {
            // serde_json writes `null`, which no number field accepts: refused, not written as another value.
            return Err(serde::ser::Error::custom(format!("{x} is not a JSON number (JSON has no NaN or infinity)")));
        }
        if x.fract() != 0.0 {
            s.serialize_f64(x)
        } else if (-TWO_63..TWO_63).contains(&x) {
            // Whole and within i64: the conversion is exact (`-0.0` is written `0`, as JavaScript writes it).
            s.serialize_i64(x as i64)
        } else if (0.0..2.0 * TWO_63).contains(&x) {
            s.serialize_u64(x as u64)
        } else {
            s.serialize_f64(x)
        }
    }
}

impl Wire for u64 {}
impl Wire for i64 {}
impl Wire for bool {}
impl Wire for String {}
impl Wire for () {}
impl Wire for serde_json::Value {}
impl Wire for serde_json::Map<String, serde_json::Value> {}

impl<T: Wire + ?Sized> Wire for Box<T> {
    fn wire<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).wire(s)
    }
}

impl<T: Wire> Wire for Option<T> {
    fn wire<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Some(x) => s.serialize_some(&W(x)),
            None => s.serialize_none(),
        }
    }
}

impl<T: Wire> Wire for Vec<T> {
    fn wire<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(W))
    }
}

impl<T: Wire> Wire for Extra<T> {}

/// `Wire` for the tuples the types use (of at most 12 positions, as `types::TUPLE_MAX` says).
macro_rules! wire_tuples {
    ($(($($t:ident $i:tt),+))+) => {$(
        impl<$($t: Wire),+> Wire for ($($t,)+) {
            fn wire<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeTuple as _;
                let mut t = s.serialize_tuple([$($i),+].len())?;
                $(t.serialize_element(&W(&self.$i))?;)+
                t.end()
            }
        }
    )+};
}

wire_tuples! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11)
}

/// A JSON value that keeps object members in input order whatever `serde_json`'s features are.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Object),
}

/// Object members in input order, each key once (a text that repeats one is refused: [`REPEATED_KEY`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Object(Vec<(String, Json)>);

impl Object {
    pub(crate) fn get(&self, key: &str) -> Option<&Json> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub(crate) fn has(&self, key: &str) -> bool {
        self.0.iter().any(|(k, _)| k == key)
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &Json)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The value of a required property, decoded; `required` at the property when it is missing.
    pub(crate) fn required<T>(
        &self,
        at: Ptr<'_>,
        name: &str,
        decode: impl Fn(&Json, Ptr<'_>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        match self.get(name) {
            Some(v) => decode(v, at.key(name)),
            None => Err(required(at.key(name), name)),
        }
    }

    /// The value of an optional property, decoded.
    pub(crate) fn optional<T>(
        &self,
        at: Ptr<'_>,
        name: &str,
        decode: impl Fn(&Json, Ptr<'_>) -> Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        match self.get(name) {
            Some(v) => decode(v, at.key(name)).map(Some),
            None => Ok(None),
        }
    }
}

/// The deepest nesting a value may have (arrays and objects, the value itself included): what `serde_json`'s
/// parser accepts (its recursion limit), so every entry point takes the same values and whatever one of them
/// accepts serializes to text the parser takes back.
pub(crate) const MAX_DEPTH: usize = 127;

pub(crate) fn too_deep_message() -> String {
    format!("JSON nests deeper than {MAX_DEPTH} levels")
}

impl<'de> serde::Deserialize<'de> for Json {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor { depth: 0 })
    }
}

/// A value `depth` levels down: past [`MAX_DEPTH`] it is refused before it is walked, whatever deserializer
/// feeds it (`serde_json`'s parser stops at the same depth; a `serde_json::Value` or another format may not).
struct JsonVisitor {
    depth: usize,
}

impl JsonVisitor {
    /// The visitor of the items of the container this one visits.
    fn inner<E: serde::de::Error>(&self) -> Result<JsonVisitor, E> {
        if self.depth >= MAX_DEPTH {
            return Err(E::custom(too_deep_message()));
        }
        Ok(JsonVisitor { depth: self.depth + 1 })
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for JsonVisitor {
    type Value = Json;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        d.deserialize_any(self)
    }
}

/// The key under which serde_json hands a number over as its text (a map of that one entry) when its
/// `arbitrary_precision` feature is on, which any crate of a build turns on for every other.
pub(crate) const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// Whether serde_json hands numbers over as [`NUMBER_TOKEN`] maps in this build (asked once, of a fraction:
/// integers that fit 64 bits come as integers either way). Only then is such a map a number: otherwise it is an
/// object a message may well hold.
pub(crate) fn numbers_as_maps() -> bool {
    struct Probe;
    impl<'de> serde::de::Visitor<'de> for Probe {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a number")
        }
        fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, _: A) -> Result<bool, A::Error> {
            Ok(true)
        }
    }
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        serde::Deserializer::deserialize_any(&mut serde_json::Deserializer::from_str("0.5"), Probe).unwrap_or(false)
    })
}

/// A number given as its text, as serde_json's default features read it: an integer that fits 64 bits as one
/// (`-0` as the double it is), else the nearest double, `None` when that is not finite.
pub(crate) fn number_from_text(text: &str) -> Option<serde_json::Number> {
    if text == "-0" {
        return serde_json::Number::from_f64(-0.0);
    }
    if let Ok(u) = text.parse::<u64>() {
        return Some(u.into());
    }
    if let Ok(i) = text.parse::<i64>() {
        return Some(i.into());
    }
    text.parse::<f64>().ok().filter(|f| f.is_finite()).and_then(serde_json::Number::from_f64)
}

/// A key of an object (any deserializer's string).
struct Key;

impl<'de> serde::de::DeserializeSeed<'de> for Key {
    type Value = String;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        <String as serde::Deserialize>::deserialize(d)
    }
}

impl<'de> serde::de::Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Json, E> {
        serde_json::Number::from_f64(v).map(Json::Number).ok_or_else(|| E::custom("not a finite JSON number"))
    }

    /// An integer past 64 bits, as a `serde_json::Value` hands it over with `arbitrary_precision` on: read as the
    /// default features read its text (the nearest double). It was refused ("invalid type: integer as u128").
    fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Json, E> {
        number_from_text(&v.to_string()).map(Json::Number).ok_or_else(|| E::custom("not a finite JSON number"))
    }

    fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<Json, E> {
        number_from_text(&v.to_string()).map(Json::Number).ok_or_else(|| E::custom("not a finite JSON number"))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let inner = self.inner()?;
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(JsonVisitor { depth: inner.depth })? {
            out.push(v);
        }
        Ok(Json::Array(out))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        // With numbers handed over as maps, a map is known to be an object, and to nest, only after its first key.
        let as_maps = numbers_as_maps();
        let inner = if as_maps { None } else { Some(self.inner()?) };
        let first = map.next_key_seed(Key)?;
        if as_maps && first.as_deref() == Some(NUMBER_TOKEN) {
            let text: String = map.next_value()?;
            return number_from_text(&text)
                .map(Json::Number)
                .ok_or_else(|| serde::de::Error::custom("not a finite JSON number"));
        }
        let inner = match inner {
            Some(inner) => inner,
            None => self.inner()?,
        };
        let mut out: Vec<(String, Json)> = Vec::new();
        let mut keys: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        let mut next = first;
        while let Some(k) = next {
            // Refused before its value is read, so that the parser stops at the key.
            if keys.contains(&k) {
                return Err(serde::de::Error::custom(format!("{REPEATED_KEY} {k:?} {REPEATED_KEY_WHY}")));
            }
            let v = map.next_value_seed(JsonVisitor { depth: inner.depth })?;
            next = map.next_key_seed(Key)?;
            keys.insert(k.clone());
            out.push((k, v));
        }
        Ok(Json::Object(Object(out)))
    }
}

/// A `serde_json::Value` as a [`Json`], each number as serde_json's default features read its text. With
/// `arbitrary_precision` on (any crate of a build turns it on for every other), a `Value` holds a number as its
/// text: an integer past 64 bits is then the nearest double, as [`from_str`] reads it, and a number past the
/// double range (`1e400`) is refused as the parser refuses it (it was taken, and written back as `1e+400`, which
/// no parser of the default features reads). The caller has measured the depth ([`too_deep`]).
pub(crate) fn json_of_value(v: &serde_json::Value, at: Ptr<'_>) -> Result<Json, Error> {
    Ok(match v {
        serde_json::Value::Null => Json::Null,
        serde_json::Value::Bool(b) => Json::Bool(*b),
        serde_json::Value::Number(n) if !numbers_as_maps() => Json::Number(n.clone()),
        serde_json::Value::Number(n) => match number_from_text(&n.to_string()) {
            Some(n) => Json::Number(n),
            None => return Err(Error::new(Rule::MalformedJson, at.render(), "malformed JSON: number out of range")),
        },
        serde_json::Value::String(s) => Json::String(s.clone()),
        serde_json::Value::Array(a) => {
            let items: Result<Vec<Json>, Error> =
                a.iter().enumerate().map(|(i, x)| json_of_value(x, at.index(i))).collect();
            Json::Array(items?)
        }
        serde_json::Value::Object(o) => {
            let members: Result<Vec<(String, Json)>, Error> =
                o.iter().map(|(k, x)| Ok((k.clone(), json_of_value(x, at.key(k))?))).collect();
            Json::Object(Object(members?))
        }
    })
}

impl Json {
    /// The JSON type of a value, for messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            // A whole number is an integer however it is written (`1.0`, `1e2`, `-0`).
            Json::Number(n) if n.as_f64().is_some_and(|f| f.fract() != 0.0) => "a number",
            Json::Number(_) => "an integer",
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_object(&self) -> Option<&Object> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Number(n) => n.as_f64(),
            _ => None,
        }
    }
}

/// The `serde_json::Value` of a tree (keys in input order when `serde_json` preserves order).
pub(crate) fn value(v: &Json) -> serde_json::Value {
    match v {
        Json::Null => serde_json::Value::Null,
        Json::Bool(b) => serde_json::Value::Bool(*b),
        Json::Number(n) => serde_json::Value::Number(n.clone()),
        Json::String(s) => serde_json::Value::String(s.clone()),
        Json::Array(a) => serde_json::Value::Array(a.iter().map(value).collect()),
        Json::Object(o) => serde_json::Value::Object(o.0.iter().map(|(k, v)| (k.clone(), value(v))).collect()),
    }
}

/// A JSON Pointer built on the stack and rendered only when an error is reported.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ptr<'a> {
    parent: Option<&'a Ptr<'a>>,
    seg: Seg<'a>,
}

#[derive(Debug, Clone, Copy)]
enum Seg<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

impl<'a> Ptr<'a> {
    /// The whole value.
    pub(crate) const ROOT: Ptr<'static> = Ptr { parent: None, seg: Seg::Root };

    /// The member `key` of the object here.
    pub(crate) fn key(&'a self, key: &'a str) -> Ptr<'a> {
        Ptr { parent: Some(self), seg: Seg::Key(key) }
    }

    /// The item `i` of the array here.
    pub(crate) fn index(&'a self, i: usize) -> Ptr<'a> {
        Ptr { parent: Some(self), seg: Seg::Index(i) }
    }

    pub(crate) fn render(&self) -> String {
        let mut segs = Vec::new();
        let mut at = Some(self);
        while let Some(p) = at {
            segs.push(p.seg);
            at = p.parent;
        }
        let mut out = String::new();
        for s in segs.iter().rev() {
            match s {
                Seg::Root => {}
                Seg::Key(k) => {
                    out.push('/');
                    out.push_str(&k.replace('~', "~0").replace('/', "~1"));
                }
                Seg::Index(i) => {
                    out.push('/');
                    out.push_str(&i.to_string());
                }
            }
        }
        out
    }
}

/// A type the generated code decodes from a JSON tree, checking it on the way.
pub(crate) trait Decode: Sized {
    /// The value at `at`, or the first rule it breaks.
    fn decode(v: &Json, at: Ptr<'_>) -> Result<Self, Error>;

    /// The first rule the value at `at` breaks, building nothing (the generated types check their node).
    fn check(v: &Json, at: Ptr<'_>) -> Result<(), Error> {
        Self::decode(v, at).map(drop)
    }
}

/// A check of a value that keeps nothing (the parts of a schema that are not a Rust type).
pub(crate) type Check = fn(&Json, Ptr<'_>) -> Result<(), Error>;

/// `Deserialize` through [`Decode`], so no leniency of a serde derive applies.
pub(crate) fn deserialize<'de, T: Decode, D: serde::Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    let json = <Json as serde::Deserialize>::deserialize(d)?;
    T::decode(&json, Ptr::ROOT).map_err(<D::Error as serde::de::Error>::custom)
}

/// Whether a value nests deeper than [`MAX_DEPTH`] (arrays and objects, the value itself included), found
/// without recursion: a stack of at most `MAX_DEPTH + 1` iterators, so a value of any depth is measured in
/// constant stack and bounded memory, and only as far down as the limit.
pub(crate) fn too_deep(v: &serde_json::Value) -> bool {
    enum Items<'v> {
        Array(std::slice::Iter<'v, serde_json::Value>),
        Object(serde_json::map::Values<'v>),
    }
    fn items(v: &serde_json::Value) -> Option<Items<'_>> {
        match v {
            serde_json::Value::Array(a) => Some(Items::Array(a.iter())),
            serde_json::Value::Object(o) => Some(Items::Object(o.values())),
            _ => None,
        }
    }
    let mut stack: Vec<Items<'_>> = items(v).into_iter().collect();
    while let Some(top) = stack.last_mut() {
        let next = match top {
            Items::Array(i) => i.next(),
            Items::Object(i) => i.next(),
        };
        match next {
            None => {
                stack.pop();
            }
            Some(child) => {
                if let Some(it) = items(child) {
                    if stack.len() >= MAX_DEPTH {
                        return true;
                    }
                    stack.push(it);
                }
            }
        }
    }
    false
}

/// Checks and converts a `serde_json::Value` (properties in its own key order). A value nesting deeper than
/// the parser accepts is `too-deep` at the root, as from text, measured before anything recurses into it.
pub(crate) fn from_value<T: Decode>(v: &serde_json::Value) -> Result<T, Error> {
    if too_deep(v) {
        return Err(Error::new(Rule::TooDeep, "", too_deep_message()));
    }
    T::decode(&json_of_value(v, Ptr::ROOT)?, Ptr::ROOT)
}

/// Where a parse error is: `column C` in a one-line text, `line L column C` past its first line (the engine's
/// words: `engine::parse_error_at`, held to it by `rt_tests::parse_errors_are_located_as_the_engine_locates_them`).
pub(crate) fn parse_error_at(e: &serde_json::Error) -> String {
    // Columns start at 1 (serde_json's 0 is the start of a line it read nothing of).
    let column = e.column().max(1);
    if e.line() > 1 {
        format!("line {} column {column}", e.line())
    } else {
        format!("column {column}")
    }
}

/// What a parse error is, without serde_json's `at line L column C` (the engine's words:
/// `engine::parse_error_what`).
pub(crate) fn parse_error_what(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    let place = format!(" at line {} column {}", e.line(), e.column());
    let what = msg.strip_suffix(&place).unwrap_or(&msg);
    // serde_json's words for a `\u` escape of half a surrogate pair (a high one not followed by a `\u` escape,
    // or by one that is no low one; a low one alone) say what it looked for, not what is wrong.
    match what {
        "unexpected end of hex escape" | "lone leading surrogate in hex escape" => {
            "an unpaired surrogate escape (UTF-8 cannot encode half a pair)".to_string()
        }
        _ => what.to_string(),
    }
}

/// What the tree's parser says of a key its object already has: JSON parsers differ on which member counts (a
/// `serde_json::Value` and `JSON.parse` keep the last, others the first), so the text says no one message.
pub(crate) const REPEATED_KEY: &str = "repeated key";

/// Why a repeated key is refused (the engine's words, `engine::REPEATED_KEY_WHY`).
pub(crate) const REPEATED_KEY_WHY: &str = "(JSON parsers differ on which of its members counts)";

/// The first member of `text` whose key its object already has, reading left to right (at the key, whatever
/// follows it): its JSON Pointer and the byte offset of the key's opening quote (the engine's
/// `diag::first_repeated_key`). One pass, linear in the text. The text is JSON up to there (the parser stopped at
/// that key); past it the scan may read anything, and stops.
pub(crate) fn first_repeated_key(text: &str) -> Option<(String, usize)> {
    /// An open array (its item's index) or object (its keys so far, and whether a key comes next).
    enum Open {
        Array(usize),
        Object(std::collections::BTreeSet<String>, bool),
    }
    let b = text.as_bytes();
    // Each open container with the pointer token of its member or item being read.
    let mut open: Vec<(Open, String)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let mut end = i + 1;
                while end < b.len() && b[end] != b'"' {
                    end += if b[end] == b'\\' { 2 } else { 1 };
                }
                let end = (end + 1).min(b.len());
                if let Some((Open::Object(keys, expect_key @ true), token)) = open.last_mut() {
                    *expect_key = false;
                    let key: String = serde_json::from_str(text.get(i..end)?).ok()?;
                    *token = key.replace('~', "~0").replace('/', "~1");
                    if !keys.insert(key) {
                        return Some((open.iter().fold(String::new(), |p, (_, t)| p + "/" + t), i));
                    }
                }
                i = end;
                continue;
            }
            b'{' => open.push((Open::Object(Default::default(), true), String::new())),
            b'[' => open.push((Open::Array(0), "0".into())),
            b'}' | b']' => {
                open.pop();
            }
            b',' => match open.last_mut() {
                Some((Open::Array(n), token)) => {
                    *n += 1;
                    *token = n.to_string();
                }
                Some((Open::Object(_, expect_key), _)) => *expect_key = true,
                None => {}
            },
            _ => {}
        }
        i += 1;
    }
    None
}

/// What a text with a repeated key is told: the member's pointer and where its key starts, as the engine says it
/// (`engine::repeated_key_message`).
pub(crate) fn repeated_key_message(text: &str) -> Option<String> {
    let (pointer, open) = first_repeated_key(text)?;
    let before = &text.as_bytes()[..open];
    let line = 1 + before.iter().filter(|&&c| c == b'\n').count();
    let column = open - before.iter().rposition(|&c| c == b'\n').map_or(0, |nl| nl + 1) + 1;
    let at = if line > 1 { format!("line {line} column {column}") } else { format!("column {column}") };
    Some(format!("malformed JSON: {REPEATED_KEY} {pointer} {REPEATED_KEY_WHY} at {at}"))
}

/// What a line that starts with a byte order mark is told (the engine's `engine::BOM_MESSAGE`).
pub(crate) const BOM_MESSAGE: &str =
    "malformed JSON: the line starts with a byte order mark (U+FEFF); JSON text does not begin with one";

/// Parses one JSON text (one line of a stream, without its newline) and checks it.
pub(crate) fn from_str<T: Decode>(text: &str) -> Result<T, Error> {
    if text.trim().is_empty() {
        return Err(Error::new(Rule::BlankLine, "", "blank line: expected one JSON value per line"));
    }
    if text.starts_with('\u{feff}') {
        return Err(Error::new(Rule::MalformedJson, "", BOM_MESSAGE));
    }
    let json: Json = serde_json::from_str(text).map_err(|e| {
        let msg = e.to_string();
        let repeated = || parse_error_what(&e).starts_with(REPEATED_KEY).then(|| repeated_key_message(text)).flatten();
        if let Some(message) = repeated() {
            Error::new(Rule::MalformedJson, "", message)
        } else if msg.contains("recursion limit exceeded") || msg.starts_with(&too_deep_message()) {
            Error::new(Rule::TooDeep, "", format!("{} (at {})", too_deep_message(), parse_error_at(&e)))
        } else if e.is_eof() {
            Error::new(
                Rule::MalformedJson,
                "",
                format!("malformed JSON: unexpected end of input at {}", parse_error_at(&e)),
            )
        } else {
            Error::new(
                Rule::MalformedJson,
                "",
                format!("malformed JSON: {} at {}", parse_error_what(&e), parse_error_at(&e)),
            )
        }
    })?;
    T::decode(&json, Ptr::ROOT)
}

/// Like [`from_str`], for bytes that may not be UTF-8.
pub(crate) fn from_bytes<T: Decode>(bytes: &[u8]) -> Result<T, Error> {
    match std::str::from_utf8(bytes) {
        Ok(text) => from_str(text),
        Err(e) => Err(Error::new(Rule::InvalidUtf8, "", format!("invalid UTF-8 at byte {}", e.valid_up_to() + 1))),
    }
}

/// A value as JSON (what the constructors of an envelope build before checking it).
pub(crate) fn to_json<T: serde::Serialize>(x: &T) -> Result<serde_json::Value, Error> {
    serde_json::to_value(x).map_err(|e| Error::new(Rule::Type, "", e.to_string()))
}

/// Runs a check and keeps the value as it is.
pub(crate) fn checked(v: &Json, at: Ptr<'_>, check: Check) -> Result<serde_json::Value, Error> {
    check(v, at)?;
    Ok(value(v))
}

pub(crate) fn type_error(at: Ptr<'_>, expected: &str, got: &Json) -> Error {
    Error::new(Rule::Type, at.render(), format!("expected {expected}, got {}", got.kind()))
}

fn required(at: Ptr<'_>, name: &str) -> Error {
    Error::new(Rule::Required, at.render(), format!("missing required property `{name}`"))
}

/// Any value, kept as it is.
pub(crate) fn any_value(v: &Json, _: Ptr<'_>) -> Result<serde_json::Value, Error> {
    Ok(value(v))
}

/// Any value.
pub(crate) fn any(_: &Json, _: Ptr<'_>) -> Result<(), Error> {
    Ok(())
}

/// No value (the schema `false`).
pub(crate) fn never(_: &Json, at: Ptr<'_>) -> Result<(), Error> {
    Err(Error::new(Rule::Never, at.render(), "no value is allowed here"))
}

pub(crate) fn null(v: &Json, at: Ptr<'_>) -> Result<(), Error> {
    match v {
        Json::Null => Ok(()),
        other => Err(type_error(at, "null", other)),
    }
}

pub(crate) fn boolean(v: &Json, at: Ptr<'_>) -> Result<bool, Error> {
    match v {
        Json::Bool(b) => Ok(*b),
        other => Err(type_error(at, "a boolean", other)),
    }
}

/// A regular expression (ECMA-262 source, checked by the generator to mean the same in Rust).
pub(crate) trait Matcher: Sync {
    /// The ECMA-262 source, for messages.
    fn source(&self) -> &str;
    /// Whether the expression matches somewhere in `s`.
    fn is_match(&self, s: &str) -> bool;
}

/// The constraints of a string.
pub(crate) struct Str {
    pub(crate) min_length: Option<u64>,
    pub(crate) max_length: Option<u64>,
    pub(crate) pattern: Option<&'static dyn Matcher>,
}

/// A string: its type, length in code points (`min-length`, `max-length`), then its pattern.
pub(crate) fn str_checked<'j>(v: &'j Json, at: Ptr<'_>, rule: &Str) -> Result<&'j str, Error> {
    let Json::String(s) = v else { return Err(type_error(at, "a string", v)) };
    if rule.min_length.is_some() || rule.max_length.is_some() {
        let len = s.chars().count() as u64;
        if let Some(min) = rule.min_length.filter(|m| len < *m) {
            return Err(Error::new(
                Rule::MinLength,
                at.render(),
                format!("must be at least {} long", counted(min, "character", "characters")),
            ));
        }
        if let Some(max) = rule.max_length.filter(|m| len > *m) {
            return Err(Error::new(
                Rule::MaxLength,
                at.render(),
                format!("must be at most {} long", counted(max, "character", "characters")),
            ));
        }
    }
    if let Some(p) = rule.pattern {
        if !p.is_match(s) {
            return Err(Error::new(Rule::Pattern, at.render(), format!("does not match the pattern `{}`", p.source())));
        }
    }
    Ok(s)
}

pub(crate) fn string(v: &Json, at: Ptr<'_>, rule: &Str) -> Result<String, Error> {
    str_checked(v, at, rule).map(str::to_owned)
}

pub(crate) fn check_string(v: &Json, at: Ptr<'_>, rule: &Str) -> Result<(), Error> {
    str_checked(v, at, rule).map(drop)
}

/// The constraints of a number (compared as doubles).
pub(crate) struct Num {
    pub(crate) integer: bool,
    pub(crate) minimum: Option<f64>,
    pub(crate) exclusive_minimum: Option<f64>,
    pub(crate) maximum: Option<f64>,
    pub(crate) exclusive_maximum: Option<f64>,
    pub(crate) multiple_of: Option<f64>,
}

/// How a number is written in messages: as JavaScript writes it (`100`, `0` for `-0`, `1e-7`, `1e+21`: the
/// shortest digits that read back as the double), as the engine and the TypeScript checkers write it (the engine's
/// `number_text`, held to it by `rt_tests::numbers_and_values_are_shown_as_the_engine_shows_them`).
pub(crate) fn num(f: f64) -> String {
    if f == 0.0 {
        return "0".into();
    }
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN"
        } else if f > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        }
        .into();
    }
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i64;
    // The value is 0.`digits` × 10^n.
    let n = exp.parse::<i64>().unwrap_or(0) + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let sign = if e >= 0 { '+' } else { '-' };
        match digits.split_at(1) {
            (d, "") => format!("{d}e{sign}{}", e.abs()),
            (d, rest) => format!("{d}.{rest}e{sign}{}", e.abs()),
        }
    };
    if f < 0.0 {
        format!("-{body}")
    } else {
        body
    }
}

/// A schema's value as messages show it: numbers as [`num`] writes them (`"const": 1.0` is `1`).
pub(crate) fn shown_value(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Number(n) if n.is_f64() => num(n.as_f64().unwrap_or(0.0)),
        serde_json::Value::Array(items) => format!("[{}]", items.iter().map(shown_value).collect::<Vec<_>>().join(",")),
        serde_json::Value::Object(o) => {
            let members: Vec<String> =
                o.iter().map(|(k, x)| format!("{}:{}", serde_json::Value::from(k.as_str()), shown_value(x))).collect();
            format!("{{{}}}", members.join(","))
        }
        other => other.to_string(),
    }
}

/// A number: its type (an integer is a number whose fractional part is zero), then minimum, exclusive minimum,
/// maximum, exclusive maximum and multiple (`value / m` is an integer, see the engine's `is_multiple`).
pub(crate) fn number(v: &Json, at: Ptr<'_>, rule: &Num) -> Result<f64, Error> {
    let expected = if rule.integer { "an integer" } else { "a number" };
    let Some(n) = v.as_f64() else { return Err(type_error(at, expected, v)) };
    if rule.integer && n.fract() != 0.0 {
        return Err(type_error(at, "an integer", v));
    }
    if let Some(m) = rule.minimum.filter(|m| n < *m) {
        return Err(Error::new(Rule::Minimum, at.render(), format!("must be at least {}", num(m))));
    }
    if let Some(m) = rule.exclusive_minimum.filter(|m| n <= *m) {
        return Err(Error::new(Rule::ExclusiveMinimum, at.render(), format!("must be greater than {}", num(m))));
    }
    if let Some(m) = rule.maximum.filter(|m| n > *m) {
        return Err(Error::new(Rule::Maximum, at.render(), format!("must be at most {}", num(m))));
    }
    if let Some(m) = rule.exclusive_maximum.filter(|m| n >= *m) {
        return Err(Error::new(Rule::ExclusiveMaximum, at.render(), format!("must be less than {}", num(m))));
    }
    if let Some(m) = rule.multiple_of {
        // An integer quotient, or no remainder where the quotient says nothing (it overflows, or is 2^53 or more
        // for an integer `m`): the engine's test.
        let q = n / m;
        let quotient_decides = q.is_finite() && (q.abs() < 9_007_199_254_740_992.0 || m.fract() != 0.0);
        if !(if quotient_decides { q.fract() == 0.0 } else { n.is_finite() && n % m == 0.0 }) {
            return Err(Error::new(Rule::MultipleOf, at.render(), format!("must be a multiple of {}", num(m))));
        }
    }
    Ok(n)
}

pub(crate) fn check_number(v: &Json, at: Ptr<'_>, rule: &Num) -> Result<(), Error> {
    number(v, at, rule).map(drop)
}

/// An integer whose bounds keep it in 0..=2^53-1: the double is exact, so the conversion is too.
pub(crate) fn uint(v: &Json, at: Ptr<'_>, rule: &Num) -> Result<u64, Error> {
    number(v, at, rule).map(|f| f as u64)
}

/// An integer whose bounds keep it in -(2^53-1)..=2^53-1: the double is exact, so the conversion is too.
pub(crate) fn int(v: &Json, at: Ptr<'_>, rule: &Num) -> Result<i64, Error> {
    number(v, at, rule).map(|f| f as i64)
}

/// A JSON literal of the schema (`const`, `enum`), parsed once.
pub(crate) struct Lit {
    text: &'static str,
    parsed: OnceLock<Option<serde_json::Value>>,
}

impl Lit {
    pub(crate) const fn new(text: &'static str) -> Self {
        Lit { text, parsed: OnceLock::new() }
    }

    pub(crate) fn value(&self) -> Option<&serde_json::Value> {
        self.parsed.get_or_init(|| serde_json::from_str(self.text).ok()).as_ref()
    }

    fn matches(&self, v: &Json) -> bool {
        self.value().is_some_and(|l| equal_value(v, l))
    }

    /// The literal as messages show it: a string bare among strings (`bare`), else as JSON.
    fn shown(&self, bare: bool) -> String {
        match self.value() {
            Some(serde_json::Value::String(s)) if bare => format!("`{s}`"),
            Some(v) => format!("`{}`", shown_value(v)),
            None => format!("`{}`", self.text),
        }
    }
}

impl serde::Serialize for Lit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.value() {
            Some(v) => LitValue(v).serialize(s),
            None => Err(serde::ser::Error::custom("invalid literal")),
        }
    }
}

/// A literal written as the types write their numbers ([`Wire`]): a `const: 1.0` is written `1`, as a number
/// field holding it would be (serde_json wrote `1.0`).
struct LitValue<'a>(&'a serde_json::Value);

impl serde::Serialize for LitValue<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            serde_json::Value::Number(n) if n.is_f64() => n.as_f64().unwrap_or_default().wire(s),
            serde_json::Value::Array(a) => s.collect_seq(a.iter().map(LitValue)),
            serde_json::Value::Object(o) => s.collect_map(o.iter().map(|(k, v)| (k, LitValue(v)))),
            other => other.serialize(s),
        }
    }
}

/// JSON equality as JSON Schema defines it: numbers by value (`1` equals `1.0`), objects by their members
/// whatever the key order, arrays item by item.
pub(crate) fn equal(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(p), Some(q)) => p == q,
            _ => false,
        },
        (Json::Array(x), Json::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q)),
        (Json::Object(x), Json::Object(y)) if x.len() > 16 && x.len() == y.len() => {
            // A lookup is a scan of the members: index the other object's once, so two large objects compare in
            // linear time.
            let index: std::collections::HashMap<&str, &Json> = y.iter().collect();
            x.iter().all(|(k, v)| index.get(k).is_some_and(|w| equal(v, w)))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

/// The first pair `(i, j)` of equal items ([`equal`]): the least `j`, then the least `i`, as comparing every pair
/// in order finds, in linear time: items are grouped by a hash [`equal`] items share (keyed per call, so a
/// hostile message cannot make them collide) and compared within their group.
fn first_duplicate(items: &[Json]) -> Option<(usize, usize)> {
    use std::hash::BuildHasher;
    let keys = std::collections::hash_map::RandomState::new();
    let mut seen: std::collections::HashMap<u64, Vec<usize>> = std::collections::HashMap::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        let mut h = keys.build_hasher();
        hash_into(item, &keys, &mut h);
        let group = seen.entry(std::hash::Hasher::finish(&h)).or_default();
        if let Some(&i) = group.iter().find(|&&i| equal(&items[i], item)) {
            return Some((i, j));
        }
        group.push(j);
    }
    None
}

/// Feeds `v` to `h` so that [`equal`] values hash the same: a number by its double (`-0` as `0`), an object's
/// members summed in any order (each hashed on its own with `keys`).
fn hash_into(v: &Json, keys: &impl std::hash::BuildHasher, h: &mut impl std::hash::Hasher) {
    use std::hash::Hash;
    match v {
        Json::Null => h.write_u8(0),
        Json::Bool(b) => (1u8, *b).hash(h),
        Json::Number(n) => (2u8, n.as_f64().map(|f| if f == 0.0 { 0 } else { f.to_bits() })).hash(h),
        Json::String(s) => (3u8, s.as_str()).hash(h),
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

/// [`equal`] between a tree and a `serde_json::Value`.
fn equal_value(a: &Json, b: &serde_json::Value) -> bool {
    use serde_json::Value as V;
    match (a, b) {
        (Json::Null, V::Null) => true,
        (Json::Bool(x), V::Bool(y)) => x == y,
        (Json::Number(x), V::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(p), Some(q)) => p == q,
            _ => false,
        },
        (Json::String(x), V::String(y)) => x == y,
        (Json::Array(x), V::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal_value(p, q)),
        (Json::Object(x), V::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal_value(v, w)))
        }
        _ => false,
    }
}

/// A value and its messages form: a string as itself, anything else as JSON, shortened.
fn shown(v: &Json) -> String {
    match v {
        Json::String(s) => format!("`{s}`"),
        other => short_json(other),
    }
}

fn short_json(v: &Json) -> String {
    short_text(&shown_value(&value(v)))
}

/// A value's text in backticks, cut to its first 57 characters and `...` when it has more than 60.
fn short_text(s: &str) -> String {
    if s.chars().count() > 60 {
        let cut: String = s.chars().take(57).collect();
        format!("`{cut}...`")
    } else {
        format!("`{s}`")
    }
}

/// `const`.
pub(crate) fn constant(v: &Json, at: Ptr<'_>, c: &Lit) -> Result<(), Error> {
    if c.matches(v) {
        return Ok(());
    }
    let text = c.value().map_or_else(|| c.text.to_string(), shown_value);
    Err(Error::new(Rule::Const, at.render(), format!("must be {}", short_text(&text))))
}

/// `enum` of JSON values (a value of another JSON type than every string of a string enum is a `type` error).
pub(crate) fn one_of_values(v: &Json, at: Ptr<'_>, values: &[&Lit], strings: bool) -> Result<(), Error> {
    if strings && !matches!(v, Json::String(_)) {
        return Err(type_error(at, "a string", v));
    }
    if values.iter().any(|l| l.matches(v)) {
        return Ok(());
    }
    // Strings bare among strings only: beside `3` and `null`, the string "3" is shown `"3"`.
    let list = listed(values.iter().map(|l| l.shown(strings)));
    let value = if strings { shown(v) } else { short_json(v) };
    Err(Error::new(Rule::Enum, at.render(), format!("{value} is not one of {list}")))
}

/// How many values a message lists at most (the generator's `engine::LISTED_VALUES`): an `enum` of 20,000 values
/// would otherwise make each of its errors ~430 KB.
pub(crate) const LISTED_VALUES: usize = 20;

/// Values as a message lists them, each already shown: the first [`LISTED_VALUES`], then how many more there are
/// (`` `a`, `b`, and 3 more ``).
pub(crate) fn listed(shown: impl ExactSizeIterator<Item = String>) -> String {
    let n = shown.len();
    let mut out = shown.take(LISTED_VALUES).collect::<Vec<_>>().join(", ");
    if n > LISTED_VALUES {
        out.push_str(&format!(", and {} more", n - LISTED_VALUES));
    }
    out
}

/// The string of a string enum (`type` when it is not a string).
pub(crate) fn str_value<'j>(v: &'j Json, at: Ptr<'_>) -> Result<&'j str, Error> {
    match v {
        Json::String(s) => Ok(s),
        other => Err(type_error(at, "a string", other)),
    }
}

/// A string that is none of a string enum's values; `allowed` lists them as messages show them.
pub(crate) fn not_one_of(at: Ptr<'_>, s: &str, allowed: &str) -> Error {
    Error::new(Rule::Enum, at.render(), format!("`{s}` is not one of {allowed}"))
}

/// The constraints of an array.
pub(crate) struct Arr {
    pub(crate) min_items: Option<u64>,
    pub(crate) max_items: Option<u64>,
    pub(crate) unique: bool,
    pub(crate) contains: Option<Contains>,
}

/// `contains`: how many items must pass `check`.
pub(crate) struct Contains {
    pub(crate) check: Check,
    pub(crate) min: u64,
    pub(crate) max: Option<u64>,
}

/// The items of an array, or the `type` error.
pub(crate) fn array_items<'j>(v: &'j Json, at: Ptr<'_>) -> Result<&'j [Json], Error> {
    match v {
        Json::Array(a) => Ok(a),
        other => Err(type_error(at, "an array", other)),
    }
}

/// `n` and the noun it counts, singular for one (`1 item`, `2 items`), as the generator's engine words a count.
fn counted(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// The counts of an array, then its uniqueness, then how many items match `contains` (checked after its items).
fn array_counts(items: &[Json], at: Ptr<'_>, rule: &Arr) -> Result<(), Error> {
    let len = items.len() as u64;
    if let Some(m) = rule.min_items.filter(|m| len < *m) {
        return Err(Error::new(
            Rule::MinItems,
            at.render(),
            format!("must have at least {}", counted(m, "item", "items")),
        ));
    }
    if let Some(m) = rule.max_items.filter(|m| len > *m) {
        return Err(Error::new(
            Rule::MaxItems,
            at.render(),
            format!("must have at most {}", counted(m, "item", "items")),
        ));
    }
    if rule.unique {
        if let Some((i, j)) = first_duplicate(items) {
            return Err(Error::new(Rule::UniqueItems, at.render(), format!("items {i} and {j} are equal")));
        }
    }
    if let Some(c) = &rule.contains {
        let matching =
            items.iter().enumerate().filter(|(i, item)| (c.check)(item, at.index(*i)).is_ok()).count() as u64;
        let (word, bound) = match c.max {
            _ if matching < c.min => ("least", c.min),
            Some(m) if matching > m => ("most", m),
            _ => return Ok(()),
        };
        return Err(Error::new(
            Rule::Contains,
            at.render(),
            format!(
                "must contain at {word} {} matching `contains` ({matching} found)",
                counted(bound, "item", "items")
            ),
        ));
    }
    Ok(())
}

/// An array of one item type: the items in order, then the counts and uniqueness.
pub(crate) fn vec<T>(
    v: &Json,
    at: Ptr<'_>,
    rule: &Arr,
    decode: impl Fn(&Json, Ptr<'_>) -> Result<T, Error>,
) -> Result<Vec<T>, Error> {
    let items = array_items(v, at)?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        out.push(decode(item, at.index(i))?);
    }
    array_counts(items, at, rule)?;
    Ok(out)
}

/// An array checked item by item: `prefix` by position, `rest` (when given) for the items after them.
pub(crate) fn tuple(v: &Json, at: Ptr<'_>, rule: &Arr, prefix: &[Check], rest: Option<Check>) -> Result<(), Error> {
    let items = array_items(v, at)?;
    for (i, item) in items.iter().enumerate() {
        if let Some(check) = prefix.get(i).copied().or(rest) {
            check(item, at.index(i))?;
        }
    }
    array_counts(items, at, rule)
}

/// `null`, or a value of the inner type.
pub(crate) fn nullable<T>(
    v: &Json,
    at: Ptr<'_>,
    decode: impl Fn(&Json, Ptr<'_>) -> Result<T, Error>,
) -> Result<Option<T>, Error> {
    match v {
        Json::Null => Ok(None),
        other => decode(other, at).map(Some),
    }
}

pub(crate) fn check_nullable(v: &Json, at: Ptr<'_>, inner: Check) -> Result<(), Error> {
    match v {
        Json::Null => Ok(()),
        other => inner(other, at),
    }
}

/// A JSON kind of `type: [...]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Null,
    Boolean,
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    fn holds(self, v: &Json) -> bool {
        matches!(
            (self, v),
            (Kind::Null, Json::Null)
                | (Kind::Boolean, Json::Bool(_))
                | (Kind::Number, Json::Number(_))
                | (Kind::String, Json::String(_))
                | (Kind::Array, Json::Array(_))
                | (Kind::Object, Json::Object(_))
        )
    }
}

/// Values of several JSON kinds, each checked by its own member; `expected` names them for the `type` error.
pub(crate) fn kinds(v: &Json, at: Ptr<'_>, members: &[(Kind, Check)], expected: &str) -> Result<(), Error> {
    match members.iter().find(|(k, _)| k.holds(v)) {
        Some((_, check)) => check(v, at),
        None => Err(type_error(at, expected, v)),
    }
}

/// `allOf`: every member, in order.
pub(crate) fn all_of(v: &Json, at: Ptr<'_>, members: &[Check]) -> Result<(), Error> {
    members.iter().try_for_each(|m| m(v, at))
}

/// `anyOf`: at least one member.
pub(crate) fn any_of(v: &Json, at: Ptr<'_>, members: &[Check]) -> Result<(), Error> {
    if members.iter().any(|m| m(v, Ptr::ROOT).is_ok()) {
        return Ok(());
    }
    Err(Error::new(Rule::AnyOf, at.render(), format!("matches none of the {} alternatives", members.len())))
}

/// `oneOf`: exactly one member.
pub(crate) fn one_of(v: &Json, at: Ptr<'_>, members: &[Check]) -> Result<(), Error> {
    let mut matching = members.iter().enumerate().filter(|(_, m)| m(v, Ptr::ROOT).is_ok()).map(|(i, _)| i);
    match (matching.next(), matching.next()) {
        (Some(_), None) => Ok(()),
        (None, _) => Err(Error::new(
            Rule::OneOf,
            at.render(),
            format!("matches none of the {} alternatives (exactly one must match)", members.len()),
        )),
        (Some(a), Some(b)) => Err(Error::new(
            Rule::OneOf,
            at.render(),
            format!("matches alternatives {a} and {b} (exactly one must match)"),
        )),
    }
}

/// `not`.
pub(crate) fn not(v: &Json, at: Ptr<'_>, inner: Check) -> Result<(), Error> {
    match inner(v, Ptr::ROOT) {
        Ok(()) => Err(Error::new(Rule::Not, at.render(), "matches a schema it must not match")),
        Err(_) => Ok(()),
    }
}

/// Which properties of an object, or items of an array, a schema evaluates (for `unevaluatedProperties` and
/// `unevaluatedItems`): the plan the generator builds from the model.
pub(crate) enum Eval<'a> {
    /// Nothing.
    None,
    /// Of an array: the items before `prefix`, every later one with `rest`, and those `contains` passes.
    Items { prefix: usize, rest: bool, contains: Option<Check> },
    /// Of an object: these names, names that match these patterns, and every other one with `rest`.
    Keys { names: &'a [&'a str], patterns: &'a [&'static dyn Matcher], rest: bool },
    /// Each of these.
    All(&'a [Eval<'a>]),
    /// The plan of each check the value passes.
    Valid(&'a [(Check, Eval<'a>)]),
    /// `then` when the value passes `cond`, else `otherwise`.
    Cond { cond: Check, then: &'a Eval<'a>, otherwise: &'a Eval<'a> },
    /// `then` when the object holds `property`.
    Dependent { property: &'a str, then: &'a Eval<'a> },
}

/// Marks in `seen` (a flag per property of `v`, an object, or per item, an array) what `plan` evaluates.
fn evaluate(plan: &Eval<'_>, v: &Json, seen: &mut [bool]) {
    match plan {
        Eval::None => {}
        Eval::Items { prefix, rest, contains } => {
            let Json::Array(items) = v else { return };
            for (i, (item, s)) in items.iter().zip(seen.iter_mut()).enumerate() {
                if *rest || i < *prefix || contains.is_some_and(|c| c(item, Ptr::ROOT).is_ok()) {
                    *s = true;
                }
            }
        }
        Eval::Keys { names, patterns, rest } => {
            let Some(obj) = v.as_object() else { return };
            for ((k, _), s) in obj.iter().zip(seen.iter_mut()) {
                if *rest || names.contains(&k) || patterns.iter().any(|p| p.is_match(k)) {
                    *s = true;
                }
            }
        }
        Eval::All(plans) => plans.iter().for_each(|p| evaluate(p, v, seen)),
        Eval::Valid(plans) => {
            for (check, p) in *plans {
                if check(v, Ptr::ROOT).is_ok() {
                    evaluate(p, v, seen);
                }
            }
        }
        Eval::Cond { cond, then, otherwise } => {
            let p = if cond(v, Ptr::ROOT).is_ok() { then } else { otherwise };
            evaluate(p, v, seen);
        }
        Eval::Dependent { property, then } => {
            if v.as_object().is_some_and(|o| o.has(property)) {
                evaluate(then, v, seen);
            }
        }
    }
}

/// `unevaluatedProperties` (with `items`, `unevaluatedItems`) beside applicators: `inner` holds, then each
/// property of an object (item of an array) that `plan` does not evaluate meets `rest` (`None`: no such property
/// may be there), in input order.
pub(crate) fn unevaluated(
    v: &Json,
    at: Ptr<'_>,
    inner: Check,
    plan: &Eval<'_>,
    rest: Option<Check>,
    items: bool,
) -> Result<(), Error> {
    inner(v, at)?;
    if items {
        let Json::Array(all) = v else { return Ok(()) };
        let mut seen = vec![false; all.len()];
        evaluate(plan, v, &mut seen);
        for (i, (x, seen)) in all.iter().zip(seen).enumerate() {
            if let (false, Some(check)) = (seen, rest) {
                check(x, at.index(i))?;
            }
        }
        return Ok(());
    }
    let Some(obj) = v.as_object() else { return Ok(()) };
    let mut seen = vec![false; obj.len()];
    evaluate(plan, v, &mut seen);
    for ((k, x), seen) in obj.iter().zip(seen) {
        if seen {
            continue;
        }
        match rest {
            None => return Err(unknown_property(at, k)),
            Some(check) => check(x, at.key(k))?,
        }
    }
    Ok(())
}

/// One entry of `dependentSchemas`: when `v` is an object holding `property`, `then` holds.
pub(crate) fn dependent_schema(v: &Json, at: Ptr<'_>, property: &str, then: Check) -> Result<(), Error> {
    match v.as_object() {
        Some(o) if o.has(property) => then(v, at),
        _ => Ok(()),
    }
}

/// `if`/`then`/`else`.
pub(crate) fn cond(
    v: &Json,
    at: Ptr<'_>,
    cond: Check,
    then: Option<Check>,
    otherwise: Option<Check>,
) -> Result<(), Error> {
    let branch = if cond(v, Ptr::ROOT).is_ok() { then } else { otherwise };
    match branch {
        Some(b) => b(v, at),
        None => Ok(()),
    }
}

/// An object.
pub(crate) fn object<'j>(v: &'j Json, at: Ptr<'_>) -> Result<&'j Object, Error> {
    match v {
        Json::Object(o) => Ok(o),
        other => Err(type_error(at, "an object", other)),
    }
}

/// An object with any members, kept as a `serde_json` map.
pub(crate) fn any_object(v: &Json, at: Ptr<'_>) -> Result<serde_json::Map<String, serde_json::Value>, Error> {
    object(v, at).map(|o| o.0.iter().map(|(k, v)| (k.clone(), value(v))).collect())
}

/// Properties `required` names without declaring them.
pub(crate) fn require(obj: &Object, at: Ptr<'_>, names: &[&str]) -> Result<(), Error> {
    match names.iter().find(|n| !obj.has(n)) {
        Some(n) => Err(required(at.key(n), n)),
        None => Ok(()),
    }
}

/// `dependentRequired`: when a property is present, each of its dependencies must be.
pub(crate) fn dependent(obj: &Object, at: Ptr<'_>, deps: &[(&str, &[&str])]) -> Result<(), Error> {
    for (k, ds) in deps {
        if obj.has(k) {
            if let Some(d) = ds.iter().find(|d| !obj.has(d)) {
                return Err(Error::new(
                    Rule::DependentRequired,
                    at.key(d).render(),
                    format!("`{d}` is required when `{k}` is present"),
                ));
            }
        }
    }
    Ok(())
}

/// What an object's undeclared properties may be.
pub(crate) enum Rest<'r> {
    /// Refused; `removed` lists the ones an earlier version had (`removed-property`): name, replacement and
    /// what the object is called in messages.
    Closed { removed: &'r [(&'r str, &'r str, &'r str)] },
    /// Accepted and dropped.
    Strip,
    /// Accepted and kept.
    Open,
    /// Accepted and kept when the check holds (a map).
    Schema(Check),
}

/// A property a closed object does not define.
fn unknown_property(at: Ptr<'_>, k: &str) -> Error {
    Error::new(Rule::AdditionalProperty, at.key(k).render(), format!("unknown property `{k}`"))
}

/// The properties of an object other than `declared`, in input order: each is checked against the pattern
/// properties it matches (declared ones too), then, when it matches none and is not declared, against `rest`.
/// Returns the undeclared properties the object keeps (all but the stripped and refused ones).
pub(crate) fn others<'j>(
    obj: &'j Object,
    at: Ptr<'_>,
    declared: &[&str],
    patterns: &[(&'static dyn Matcher, Check)],
    rest: &Rest<'_>,
) -> Result<Vec<(&'j str, &'j Json)>, Error> {
    let mut kept = Vec::new();
    for (k, v) in obj.iter() {
        let mut matched = false;
        for (p, check) in patterns {
            if p.is_match(k) {
                matched = true;
                check(v, at.key(k))?;
            }
        }
        if declared.contains(&k) {
            continue;
        }
        if matched {
            if !matches!(rest, Rest::Strip) {
                kept.push((k, v));
            }
            continue;
        }
        match rest {
            Rest::Open => kept.push((k, v)),
            Rest::Strip => {}
            Rest::Schema(check) => {
                check(v, at.key(k))?;
                kept.push((k, v));
            }
            Rest::Closed { removed } => {
                return Err(match removed.iter().find(|(name, _, _)| *name == k) {
                    Some((_, rep, owner)) => Error::new(
                        Rule::RemovedProperty,
                        at.key(k).render(),
                        format!("`{k}` was removed from `{owner}` in this version: use `{rep}` instead"),
                    ),
                    None => unknown_property(at, k),
                });
            }
        }
    }
    Ok(kept)
}

/// Kept properties as they are.
pub(crate) fn extra_values(kept: &[(&str, &Json)]) -> Extra<serde_json::Value> {
    Extra(kept.iter().map(|(k, v)| ((*k).to_owned(), value(v))).collect())
}

/// Kept properties decoded (each was checked already, in input order, by [`others`]).
pub(crate) fn extra<T>(
    kept: &[(&str, &Json)],
    at: Ptr<'_>,
    decode: impl Fn(&Json, Ptr<'_>) -> Result<T, Error>,
) -> Result<Extra<T>, Error> {
    let mut out = Vec::with_capacity(kept.len());
    for (k, v) in kept {
        out.push(((*k).to_owned(), decode(v, at.key(k))?));
    }
    Ok(Extra(out))
}

/// `propertyNames`: every property name is a string the check accepts (reported at the property).
pub(crate) fn property_names(obj: &Object, at: Ptr<'_>, names: Check) -> Result<(), Error> {
    for (k, _) in obj.iter() {
        if let Err(e) = names(&Json::String(k.to_owned()), Ptr::ROOT) {
            return Err(Error::new(
                Rule::PropertyNames,
                at.key(k).render(),
                format!("the property name `{k}` is not allowed: {}", e.message),
            ));
        }
    }
    Ok(())
}

/// `minProperties`, `maxProperties`.
pub(crate) fn property_counts(obj: &Object, at: Ptr<'_>, min: Option<u64>, max: Option<u64>) -> Result<(), Error> {
    let len = obj.len() as u64;
    if let Some(m) = min.filter(|m| len < *m) {
        return Err(Error::new(
            Rule::MinProperties,
            at.render(),
            format!("must have at least {}", counted(m, "property", "properties")),
        ));
    }
    if let Some(m) = max.filter(|m| len > *m) {
        return Err(Error::new(
            Rule::MaxProperties,
            at.render(),
            format!("must have at most {}", counted(m, "property", "properties")),
        ));
    }
    Ok(())
}

/// A discriminator value of a union member.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Tag {
    Str(&'static str),
    Bool(bool),
    Int(i128),
}

impl Tag {
    fn matches(self, v: &Json) -> bool {
        match (self, v) {
            (Tag::Str(t), Json::String(s)) => t == s,
            (Tag::Bool(t), Json::Bool(b)) => t == *b,
            (Tag::Int(t), Json::Number(n)) => n.as_f64() == Some(t as f64),
            _ => false,
        }
    }

    fn same_kind(self, v: &Json) -> bool {
        matches!(
            (self, v),
            (Tag::Str(_), Json::String(_)) | (Tag::Bool(_), Json::Bool(_)) | (Tag::Int(_), Json::Number(_))
        )
    }

    fn shown(self) -> String {
        match self {
            Tag::Str(s) => format!("`{s}`"),
            Tag::Bool(b) => format!("`{b}`"),
            Tag::Int(i) => format!("`{i}`"),
        }
    }
}

/// The discriminator of a union (`required` at it when it is missing).
pub(crate) fn tag<'j>(obj: &'j Object, at: Ptr<'_>, name: &str) -> Result<&'j Json, Error> {
    obj.get(name).ok_or_else(|| required(at.key(name), name))
}

/// The member whose tag the discriminator holds.
pub(crate) fn which(t: &Json, tags: &[Tag]) -> Option<usize> {
    tags.iter().position(|tag| tag.matches(t))
}

/// The error for a discriminator that names no member: `type` when it has the JSON type of no tag, else
/// `removed-event` for a value an earlier version had, else `unknown-event` (the protocol's event union) or
/// `unknown-variant`. `expected` says the tags' kinds (`UnionShape::expected_tag`).
pub(crate) fn bad_tag(
    at: Ptr<'_>,
    name: &str,
    t: &Json,
    tags: &[Tag],
    expected: &str,
    removed: &[(&str, &str)],
    events: bool,
) -> Error {
    let tp = at.key(name);
    if !tags.iter().any(|tag| tag.same_kind(t)) {
        return type_error(tp, expected, t);
    }
    let text = match t {
        Json::String(s) => s.clone(),
        other => shown_value(&value(other)),
    };
    if let Some((_, rep)) = removed.iter().find(|(old, _)| Some(*old) == t.as_str()) {
        return Error::new(
            Rule::RemovedEvent,
            tp.render(),
            format!("`{text}` was removed in this version: use `{rep}` instead"),
        );
    }
    let list = listed(tags.iter().map(|tag| tag.shown()));
    if events {
        Error::new(Rule::UnknownEvent, tp.render(), format!("`{text}` is not an event; expected one of {list}"))
    } else {
        Error::new(Rule::UnknownVariant, tp.render(), format!("`{text}` names no member; expected one of {list}"))
    }
}

/// Only `allowed` roles may send the event (`role-event`, at the role property of the envelope at `at`).
pub(crate) fn role_event(at: Ptr<'_>, role_field: &str, role: &str, tag: &str, allowed: &[&str]) -> Result<(), Error> {
    if allowed.contains(&role) {
        return Ok(());
    }
    Err(Error::new(
        Rule::RoleEvent,
        at.key(role_field).render(),
        format!("`{tag}` may be sent only by {}, not by {role}", allowed.join(" or ")),
    ))
}

/// Only `allowed` roles may send the property `name` of the object at `at` (`role-field`, at the property).
pub(crate) fn role_field(obj: &Object, at: Ptr<'_>, name: &str, role: &str, allowed: &[&str]) -> Result<(), Error> {
    if !obj.has(name) || allowed.contains(&role) {
        return Ok(());
    }
    Err(Error::new(
        Rule::RoleField,
        at.key(name).render(),
        format!("`{name}` may be sent only by {}, not by {role}", allowed.join(" or ")),
    ))
}
