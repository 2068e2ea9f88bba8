//! The fixed runtime of the generated crate: the [`Rule`] catalogue (taken from [`crate::rules`]), the `Error`
//! type, and the private `de` module (an order-preserving JSON tree, lazily rendered JSON Pointers and the
//! leaf decoders). Nothing here depends on the protocol's events; which leaf decoders are emitted depends on
//! which value types the model uses, so the generated crate carries no dead code.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{doc_attrs, lit};
use crate::legacy::ir::pascal_case;
use crate::rules::Rule;

/// Leaf decoders the model needs.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Uses {
    /// Names of the `de` helpers to emit (`string`, `uint`, `int`, `number`, `boolean`, `any_object`).
    pub helpers: BTreeSet<&'static str>,
}

/// The `Rule` variant for a catalogue rule, as a path expression (`Rule::MalformedJson`).
pub(crate) fn rule(r: Rule) -> TokenStream {
    let v = format_ident!("{}", pascal_case(r.id()));
    quote!(Rule::#v)
}

/// The `Rule` enum, its `id`/`summary`, `Error`, and the `de` module.
pub(crate) fn tokens(uses: &Uses) -> TokenStream {
    let variants = Rule::ALL.iter().map(|r| {
        let v = format_ident!("{}", pascal_case(r.id()));
        let docs = doc_attrs(&format!("`{}`: {}", r.id(), r.summary()));
        quote!(#docs #v)
    });
    let all = Rule::ALL.iter().map(|r| rule(*r));
    let ids = Rule::ALL.iter().map(|r| {
        let path = rule(*r);
        let id = lit(r.id());
        quote!(#path => #id)
    });
    let summaries = Rule::ALL.iter().map(|r| {
        let path = rule(*r);
        let s = lit(r.summary());
        quote!(#path => #s)
    });
    let malformed = rule(Rule::MalformedJson);
    let too_deep = rule(Rule::TooDeep);
    let blank = rule(Rule::BlankLine);
    let utf8 = rule(Rule::InvalidUtf8);
    let ty = rule(Rule::Type);
    let required = rule(Rule::Required);
    let additional = rule(Rule::AdditionalProperty);
    let removed = rule(Rule::RemovedProperty);
    let helpers = helpers(uses);
    let too_deep_msg =
        super::lit(&format!("JSON nests deeper than {} levels (at column {{}})", crate::engine::MAX_DEPTH));
    quote! {
        /// The rule a message broke: the same stable ids `wiregen validate` reports.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Rule {
            #(#variants,)*
        }

        impl Rule {
            /// Every rule, in catalogue order.
            pub const ALL: &'static [Rule] = &[#(#all),*];

            /// The stable id (`"required"`, `"role-event"`, ...).
            pub fn id(self) -> &'static str {
                match self {
                    #(#ids,)*
                }
            }

            /// One sentence on what the rule means.
            pub fn summary(self) -> &'static str {
                match self {
                    #(#summaries,)*
                }
            }

            /// The rule with this id.
            pub fn from_id(id: &str) -> ::std::option::Option<Rule> {
                Rule::ALL.iter().copied().find(|r| r.id() == id)
            }
        }

        impl ::std::fmt::Display for Rule {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.id())
            }
        }

        /// Why a message was refused: the first broken rule, located by a JSON Pointer into the message.
        ///
        /// The first error is the one every checker of the protocol agrees on: the envelope's properties in
        /// schema order, each checked in depth, then unknown properties in input order; role rules only once
        /// the shape is valid.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct Error {
            pointer: ::std::string::String,
            rule: Rule,
            message: ::std::string::String,
        }

        impl Error {
            fn new(rule: Rule, pointer: impl ::std::convert::Into<::std::string::String>, message: impl ::std::convert::Into<::std::string::String>) -> Self {
                Error { pointer: pointer.into(), rule, message: message.into() }
            }

            /// JSON Pointer to the offending value (`""` for the whole line).
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

        impl ::std::fmt::Display for Error {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::write!(f, "{} at \"{}\": {}", self.rule, self.pointer, self.message)
            }
        }

        impl ::std::error::Error for Error {}

        /// Parses one line of JSON text (without its newline) into a checked [`Envelope`].
        ///
        /// # Errors
        /// [`Rule::BlankLine`], [`Rule::TooDeep`] or [`Rule::MalformedJson`] at the root, or the first rule
        /// the message breaks, with the same rule id and pointer as `wiregen validate`.
        pub fn parse_envelope(line: &str) -> ::std::result::Result<Envelope, Error> {
            if line.trim().is_empty() {
                return ::std::result::Result::Err(Error::new(#blank, "", "blank line: expected one JSON envelope per line"));
            }
            let json: de::Json = ::serde_json::from_str(line).map_err(|e| {
                let msg = e.to_string();
                if msg.contains("recursion limit exceeded") {
                    Error::new(#too_deep, "", ::std::format!(#too_deep_msg, e.column()))
                } else if e.is_eof() {
                    Error::new(#malformed, "", ::std::format!("malformed JSON: unexpected end of input at column {}", e.column()))
                } else {
                    Error::new(#malformed, "", ::std::format!("malformed JSON: {msg}"))
                }
            })?;
            Envelope::decode(&json, de::Ptr::ROOT)
        }

        /// Like [`parse_envelope`], for bytes that may not be UTF-8.
        ///
        /// # Errors
        /// [`Rule::InvalidUtf8`] at the root, or any error of [`parse_envelope`].
        pub fn parse_envelope_bytes(line: &[u8]) -> ::std::result::Result<Envelope, Error> {
            match ::std::str::from_utf8(line) {
                ::std::result::Result::Ok(text) => parse_envelope(text),
                ::std::result::Result::Err(e) => ::std::result::Result::Err(Error::new(
                    #utf8,
                    "",
                    ::std::format!("invalid UTF-8 at byte {}", e.valid_up_to() + 1),
                )),
            }
        }

        /// Checks a JSON value as an envelope without keeping the typed result.
        ///
        /// Unknown properties are reported in the value's own key order (input order only when
        /// `serde_json`'s `preserve_order` feature is on; [`parse_envelope`] always keeps input order).
        ///
        /// # Errors
        /// The first rule the message breaks.
        pub fn validate_value(value: &::serde_json::Value) -> ::std::result::Result<(), Error> {
            Envelope::from_value(value).map(|_| ())
        }

        /// Private decoding machinery: an order-preserving JSON tree, JSON Pointers and leaf decoders.
        mod de {
            use super::{Error, Rule};

            /// A JSON value that keeps object keys in input order whatever `serde_json`'s features are.
            #[derive(Debug, Clone, PartialEq)]
            pub(crate) enum Json {
                Null,
                Bool(bool),
                Number(::serde_json::Number),
                String(::std::string::String),
                Array(::std::vec::Vec<Json>),
                Object(Object),
            }

            /// Object members in input order; a repeated key keeps its first position and its last value.
            #[derive(Debug, Clone, PartialEq, Default)]
            pub(crate) struct Object(::std::vec::Vec<(::std::string::String, Json)>);

            impl Object {
                pub(crate) fn get(&self, key: &str) -> ::std::option::Option<&Json> {
                    self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
                }

                /// The first key (in input order) that is not `known`: a removed property or an unknown one.
                pub(crate) fn check_keys(
                    &self,
                    at: Ptr<'_>,
                    known: &[&str],
                    removed: &[(&str, &str)],
                    owner: &str,
                ) -> ::std::result::Result<(), Error> {
                    for (k, _) in &self.0 {
                        if known.contains(&k.as_str()) {
                            continue;
                        }
                        if let ::std::option::Option::Some((_, rep)) = removed.iter().find(|(name, _)| name == k) {
                            return ::std::result::Result::Err(Error::new(
                                #removed,
                                at.child(k).render(),
                                ::std::format!("`{k}` was removed from `{owner}` in this version: use `{rep}` instead"),
                            ));
                        }
                        return ::std::result::Result::Err(Error::new(#additional, at.child(k).render(), ::std::format!("unknown property `{k}`")));
                    }
                    ::std::result::Result::Ok(())
                }
            }

            impl<'de> ::serde::Deserialize<'de> for Json {
                fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> ::std::result::Result<Self, D::Error> {
                    d.deserialize_any(JsonVisitor)
                }
            }

            struct JsonVisitor;

            impl<'de> ::serde::de::Visitor<'de> for JsonVisitor {
                type Value = Json;

                fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                    f.write_str("any JSON value")
                }

                fn visit_bool<E: ::serde::de::Error>(self, v: bool) -> ::std::result::Result<Json, E> {
                    ::std::result::Result::Ok(Json::Bool(v))
                }

                fn visit_i64<E: ::serde::de::Error>(self, v: i64) -> ::std::result::Result<Json, E> {
                    ::std::result::Result::Ok(Json::Number(v.into()))
                }

                fn visit_u64<E: ::serde::de::Error>(self, v: u64) -> ::std::result::Result<Json, E> {
                    ::std::result::Result::Ok(Json::Number(v.into()))
                }

                fn visit_f64<E: ::serde::de::Error>(self, v: f64) -> ::std::result::Result<Json, E> {
                    ::serde_json::Number::from_f64(v)
                        .map(Json::Number)
                        .ok_or_else(|| E::custom("not a finite JSON number"))
                }

                fn visit_str<E: ::serde::de::Error>(self, v: &str) -> ::std::result::Result<Json, E> {
                    ::std::result::Result::Ok(Json::String(v.to_owned()))
                }

                fn visit_string<E: ::serde::de::Error>(self, v: ::std::string::String) -> ::std::result::Result<Json, E> {
                    ::std::result::Result::Ok(Json::String(v))
                }

                fn visit_unit<E: ::serde::de::Error>(self) -> ::std::result::Result<Json, E> {
                    ::std::result::Result::Ok(Json::Null)
                }

                fn visit_none<E: ::serde::de::Error>(self) -> ::std::result::Result<Json, E> {
                    ::std::result::Result::Ok(Json::Null)
                }

                fn visit_some<D: ::serde::Deserializer<'de>>(self, d: D) -> ::std::result::Result<Json, D::Error> {
                    ::serde::Deserialize::deserialize(d)
                }

                fn visit_seq<A: ::serde::de::SeqAccess<'de>>(self, mut seq: A) -> ::std::result::Result<Json, A::Error> {
                    let mut out = ::std::vec::Vec::new();
                    while let ::std::option::Option::Some(v) = seq.next_element()? {
                        out.push(v);
                    }
                    ::std::result::Result::Ok(Json::Array(out))
                }

                fn visit_map<A: ::serde::de::MapAccess<'de>>(self, mut map: A) -> ::std::result::Result<Json, A::Error> {
                    let mut out: ::std::vec::Vec<(::std::string::String, Json)> = ::std::vec::Vec::new();
                    let mut index: ::std::collections::BTreeMap<::std::string::String, usize> = ::std::collections::BTreeMap::new();
                    while let ::std::option::Option::Some((k, v)) = map.next_entry::<::std::string::String, Json>()? {
                        match index.get(&k) {
                            ::std::option::Option::Some(&i) => out[i].1 = v,
                            ::std::option::Option::None => {
                                index.insert(k.clone(), out.len());
                                out.push((k, v));
                            }
                        }
                    }
                    ::std::result::Result::Ok(Json::Object(Object(out)))
                }
            }

            impl ::std::convert::From<&::serde_json::Value> for Json {
                fn from(v: &::serde_json::Value) -> Self {
                    match v {
                        ::serde_json::Value::Null => Json::Null,
                        ::serde_json::Value::Bool(b) => Json::Bool(*b),
                        ::serde_json::Value::Number(n) => Json::Number(n.clone()),
                        ::serde_json::Value::String(s) => Json::String(s.clone()),
                        ::serde_json::Value::Array(a) => Json::Array(a.iter().map(Json::from).collect()),
                        ::serde_json::Value::Object(o) => Json::Object(Object(o.iter().map(|(k, v)| (k.clone(), Json::from(v))).collect())),
                    }
                }
            }

            impl Json {
                /// The JSON type of a value, for messages.
                pub(crate) fn kind(&self) -> &'static str {
                    match self {
                        Json::Null => "null",
                        Json::Bool(_) => "a boolean",
                        Json::Number(n) if n.is_f64() => "a number",
                        Json::Number(_) => "an integer",
                        Json::String(_) => "a string",
                        Json::Array(_) => "an array",
                        Json::Object(_) => "an object",
                    }
                }
            }

            /// A JSON Pointer built on the stack and rendered only when an error is reported.
            #[derive(Debug, Clone, Copy)]
            pub(crate) struct Ptr<'a> {
                parent: ::std::option::Option<&'a Ptr<'a>>,
                token: &'a str,
            }

            impl<'a> Ptr<'a> {
                /// The whole message.
                pub(crate) const ROOT: Ptr<'static> = Ptr { parent: ::std::option::Option::None, token: "" };

                pub(crate) fn child(&'a self, token: &'a str) -> Ptr<'a> {
                    Ptr { parent: ::std::option::Option::Some(self), token }
                }

                pub(crate) fn render(&self) -> ::std::string::String {
                    let mut tokens = ::std::vec::Vec::new();
                    let mut at = ::std::option::Option::Some(self);
                    while let ::std::option::Option::Some(p) = at {
                        if p.parent.is_some() {
                            tokens.push(p.token);
                        }
                        at = p.parent;
                    }
                    let mut out = ::std::string::String::new();
                    for t in tokens.iter().rev() {
                        out.push('/');
                        out.push_str(&t.replace('~', "~0").replace('/', "~1"));
                    }
                    out
                }
            }

            pub(crate) fn type_error(at: Ptr<'_>, expected: &str, got: &Json) -> Error {
                Error::new(#ty, at.render(), ::std::format!("expected {expected}, got {}", got.kind()))
            }

            pub(crate) fn required(at: Ptr<'_>, name: &str) -> Error {
                Error::new(#required, at.render(), ::std::format!("missing required property `{name}`"))
            }

            pub(crate) fn object<'j>(v: &'j Json, at: Ptr<'_>) -> ::std::result::Result<&'j Object, Error> {
                match v {
                    Json::Object(o) => ::std::result::Result::Ok(o),
                    other => ::std::result::Result::Err(type_error(at, "an object", other)),
                }
            }

            pub(crate) fn tag<'j>(obj: &'j Object, at: Ptr<'_>, name: &str) -> ::std::result::Result<&'j str, Error> {
                let p = at.child(name);
                match obj.get(name) {
                    ::std::option::Option::None => ::std::result::Result::Err(required(p, name)),
                    ::std::option::Option::Some(Json::String(s)) => ::std::result::Result::Ok(s),
                    ::std::option::Option::Some(other) => ::std::result::Result::Err(type_error(p, "a string", other)),
                }
            }

            #helpers
        }
    }
}

fn helpers(uses: &Uses) -> TokenStream {
    let min_length = rule(Rule::MinLength);
    let minimum = rule(Rule::Minimum);
    let maximum = rule(Rule::Maximum);
    let mut out = TokenStream::new();
    let h = &uses.helpers;
    if h.contains("string") {
        out.extend(quote! {
            pub(crate) fn string(v: &Json, at: Ptr<'_>, min_length: usize) -> ::std::result::Result<::std::string::String, Error> {
                match v {
                    Json::String(s) if s.chars().count() < min_length => ::std::result::Result::Err(Error::new(
                        #min_length,
                        at.render(),
                        ::std::format!("must be at least {min_length} character(s) long"),
                    )),
                    Json::String(s) => ::std::result::Result::Ok(s.clone()),
                    other => ::std::result::Result::Err(type_error(at, "a string", other)),
                }
            }
        });
    }
    if h.contains("uint") || h.contains("int") {
        out.extend(quote! {
            /// An integer as JSON Schema sees it (`1.0` and `1e3` are integers) and its value as a double, which
            /// is how the reference engine compares it with its bounds.
            fn whole<'j>(v: &'j Json, at: Ptr<'_>) -> ::std::result::Result<(&'j ::serde_json::Number, f64), Error> {
                let n = match v {
                    Json::Number(n) => n,
                    other => return ::std::result::Result::Err(type_error(at, "an integer", other)),
                };
                match (n.as_u64(), n.as_i64(), n.as_f64()) {
                    (::std::option::Option::Some(u), _, _) => ::std::result::Result::Ok((n, u as f64)),
                    (_, ::std::option::Option::Some(i), _) => ::std::result::Result::Ok((n, i as f64)),
                    (_, _, ::std::option::Option::Some(f)) if f.is_finite() && f.fract() == 0.0 => ::std::result::Result::Ok((n, f)),
                    _ => ::std::result::Result::Err(type_error(at, "an integer", v)),
                }
            }

            fn bounds(at: Ptr<'_>, f: f64, min: f64, max: f64, shown: &dyn ::std::fmt::Display, shown_max: &dyn ::std::fmt::Display) -> ::std::result::Result<(), Error> {
                if f < min {
                    return ::std::result::Result::Err(Error::new(#minimum, at.render(), ::std::format!("must be at least {shown}")));
                }
                if f > max {
                    return ::std::result::Result::Err(Error::new(#maximum, at.render(), ::std::format!("must be at most {shown_max}")));
                }
                ::std::result::Result::Ok(())
            }
        });
    }
    if h.contains("uint") {
        out.extend(quote! {
            pub(crate) fn uint(v: &Json, at: Ptr<'_>, min: u64, max: u64) -> ::std::result::Result<u64, Error> {
                let (n, f) = whole(v, at)?;
                bounds(at, f, min as f64, max as f64, &min, &max)?;
                let u = match n.as_u64() {
                    ::std::option::Option::Some(u) => u,
                    ::std::option::Option::None => f as u64,
                };
                ::std::result::Result::Ok(u.clamp(min, max))
            }
        });
    }
    if h.contains("int") {
        out.extend(quote! {
            pub(crate) fn int(v: &Json, at: Ptr<'_>, min: i64, max: i64) -> ::std::result::Result<i64, Error> {
                let (n, f) = whole(v, at)?;
                bounds(at, f, min as f64, max as f64, &min, &max)?;
                let i = match n.as_i64() {
                    ::std::option::Option::Some(i) => i,
                    ::std::option::Option::None => f as i64,
                };
                ::std::result::Result::Ok(i.clamp(min, max))
            }
        });
    }
    if h.contains("number") {
        out.extend(quote! {
            pub(crate) fn number(v: &Json, at: Ptr<'_>, minimum: ::std::option::Option<f64>) -> ::std::result::Result<f64, Error> {
                let n = match v {
                    Json::Number(n) => n.as_f64().unwrap_or(f64::NAN),
                    other => return ::std::result::Result::Err(type_error(at, "a number", other)),
                };
                if let ::std::option::Option::Some(min) = minimum {
                    if n < min {
                        return ::std::result::Result::Err(Error::new(#minimum, at.render(), ::std::format!("must be at least {min}")));
                    }
                }
                ::std::result::Result::Ok(n)
            }
        });
    }
    if h.contains("boolean") {
        out.extend(quote! {
            pub(crate) fn boolean(v: &Json, at: Ptr<'_>) -> ::std::result::Result<bool, Error> {
                match v {
                    Json::Bool(b) => ::std::result::Result::Ok(*b),
                    other => ::std::result::Result::Err(type_error(at, "a boolean", other)),
                }
            }
        });
    }
    if h.contains("any_object") {
        out.extend(quote! {
            pub(crate) fn any_object(v: &Json, at: Ptr<'_>) -> ::std::result::Result<::serde_json::Map<::std::string::String, ::serde_json::Value>, Error> {
                match v {
                    Json::Object(o) => ::std::result::Result::Ok(o.0.iter().map(|(k, v)| (k.clone(), v.to_value())).collect()),
                    other => ::std::result::Result::Err(type_error(at, "an object", other)),
                }
            }

            impl Json {
                fn to_value(&self) -> ::serde_json::Value {
                    match self {
                        Json::Null => ::serde_json::Value::Null,
                        Json::Bool(b) => ::serde_json::Value::Bool(*b),
                        Json::Number(n) => ::serde_json::Value::Number(n.clone()),
                        Json::String(s) => ::serde_json::Value::String(s.clone()),
                        Json::Array(a) => ::serde_json::Value::Array(a.iter().map(Json::to_value).collect()),
                        Json::Object(o) => ::serde_json::Value::Object(o.0.iter().map(|(k, v)| (k.clone(), v.to_value())).collect()),
                    }
                }
            }
        });
    }
    out
}
