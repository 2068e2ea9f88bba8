//! The envelope API of a schema with a protocol layer: `parse_envelope`, `parse_envelope_bytes`,
//! `validate_value`, the envelope's getters and checked constructors (`new`, `create`, `from_value`,
//! `create_envelope` with `<Envelope>Options`, the `x-auto` defaults `new_id` and the current time), and the
//! role rules, printed from [`Protocol::role_rules`] over the checked JSON tree.

use std::collections::BTreeSet;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::types::{FieldKind, Gen};
use super::{doc_attrs, lit};
use crate::emit::EmitError;
use crate::ir::*;

/// The envelope's object shape.
fn envelope_object<'m>(m: &'m Model, p: &Protocol) -> Result<&'m ObjectShape, EmitError> {
    match &m.ty(p.envelope).node.shape {
        Shape::Object(o) => Ok(o),
        _ => Err(EmitError::at(&m.ty(p.envelope).origin, "the envelope is not an object")),
    }
}

/// Whether `allowed` lets every role through (such a rule can never fail once the role is valid).
fn all_roles(p: &Protocol, allowed: &[String]) -> bool {
    p.roles.iter().all(|r| allowed.contains(r))
}

/// `fn check_roles(obj, at)` for the envelope, or `None` when no rule can fail.
pub(crate) fn check_roles_fn(g: &Gen<'_>, p: &Protocol) -> Result<Option<TokenStream>, EmitError> {
    let disc = p.discriminator(g.m);
    let (role_f, ev_f, disc_l) = (lit(&p.role_field), lit(&p.union_field), lit(disc));
    let mut arms = Vec::new();
    let mut event_fields = false;
    for event in &p.events {
        let tag = lit(&event.tag);
        let mut checks = Vec::new();
        for rule in p.role_rules(event) {
            match rule {
                RoleRule::Event { allowed } if !all_roles(p, allowed) => {
                    let a = allowed.iter().map(|r| lit(r));
                    checks.push(quote!(rt::role_event(at, #role_f, role, #tag, &[#(#a),*])?;));
                }
                RoleRule::EnvelopeField { name, allowed } if !all_roles(p, allowed) => {
                    let (n, a) = (lit(name), allowed.iter().map(|r| lit(r)));
                    checks.push(quote!(rt::role_field(obj, at, #n, role, &[#(#a),*])?;));
                }
                RoleRule::EventField { name, allowed } if !all_roles(p, allowed) => {
                    event_fields = true;
                    let (n, a) = (lit(name), allowed.iter().map(|r| lit(r)));
                    checks.push(quote!(rt::role_field(ev, ev_at, #n, role, &[#(#a),*])?;));
                }
                _ => {}
            }
        }
        if !checks.is_empty() {
            arms.push((tag, quote!({ #(#checks)* })));
        }
    }
    if arms.is_empty() {
        return Ok(None);
    }
    let dispatch = match arms.as_slice() {
        [(tag, body)] => quote!(if t == #tag #body),
        _ => {
            let arms = arms.iter().map(|(tag, body)| quote!(#tag => #body));
            quote! {
                match t {
                    #(#arms)*
                    _ => {}
                }
            }
        }
    };
    let ev_at = if event_fields { quote!(let ev_at = at.key(#ev_f);) } else { TokenStream::new() };
    Ok(Some(quote! {
        /// The role rules, once the shape is valid: who may send the event, then the restricted envelope
        /// properties, then the restricted properties of the event.
        fn check_roles(obj: &rt::Object, at: rt::Ptr<'_>) -> ::std::result::Result<(), Error> {
            let ::std::option::Option::Some(role) = obj.get(#role_f).and_then(rt::Json::as_str) else {
                return ::std::result::Result::Ok(());
            };
            let ::std::option::Option::Some(ev) = obj.get(#ev_f).and_then(rt::Json::as_object) else {
                return ::std::result::Result::Ok(());
            };
            let ::std::option::Option::Some(t) = ev.get(#disc_l).and_then(rt::Json::as_str) else {
                return ::std::result::Result::Ok(());
            };
            #ev_at
            #dispatch
            ::std::result::Result::Ok(())
        }
    }))
}

/// The name of the constructor options type (`EnvelopeOptions`).
pub(crate) fn options_ident(g: &Gen<'_>, p: &Protocol) -> Ident {
    format_ident!("{}Options", g.type_ident(p.envelope))
}

/// Everything of the envelope API but the struct and its decoder (which [`Gen`] emits like any struct's).
pub(crate) fn functions(g: &mut Gen<'_>, p: &Protocol) -> Result<TokenStream, EmitError> {
    let m = g.m;
    let o = envelope_object(m, p)?;
    let env = g.type_ident(p.envelope);
    let opts_ty = options_ident(g, p);
    let plans = g.field_plans(p.envelope, o);
    let field = |name: &str| plans.iter().find(|x| x.field.name == name);
    let (Some(role_p), Some(union_p)) = (field(&p.role_field), field(&p.union_field)) else {
        return Err(EmitError::at(&m.ty(p.envelope).origin, "the envelope lacks its role or event property"));
    };
    let union_i = union_p.ident.clone();
    let role_ty = g.ty(&role_p.field.node);
    let union_ty = g.ty(&union_p.field.node);
    let union_plain = g.type_ident(g.final_id(p.union));
    let into_union = format_ident!("into_{}", union_i.to_string().trim_end_matches('_'));

    // Getters, named like the fields (a name a method already has gets a `_`).
    let reserved: BTreeSet<String> =
        ["new", "create", "from_value", "check_roles", &into_union.to_string()].into_iter().map(String::from).collect();
    let getter_name = |i: &Ident| {
        if reserved.contains(&i.to_string()) {
            format_ident!("{}_", i)
        } else {
            i.clone()
        }
    };
    let mut getters = Vec::new();
    for pl in &plans {
        let i = &pl.ident;
        let gi = getter_name(i);
        let d = doc_attrs(&crate::emit::field_text(pl.field));
        let node = &pl.field.node;
        let (ret, body) = match &pl.kind {
            FieldKind::ConstRequired(_) => continue,
            FieldKind::ConstOptional(_) => (quote!(bool), quote!(self.#i)),
            FieldKind::Value { boxed } => {
                let inner = g.ty(node);
                let (copy, string) = (g.is_copy(node) && !boxed, g.is_string(node));
                match (pl.field.required, copy, string) {
                    (true, true, _) => (inner, quote!(self.#i)),
                    (false, true, _) => (quote!(::std::option::Option<#inner>), quote!(self.#i)),
                    (true, false, true) => (quote!(&str), quote!(&self.#i)),
                    (false, false, true) => (quote!(::std::option::Option<&str>), quote!(self.#i.as_deref())),
                    (true, false, false) => (quote!(&#inner), quote!(&self.#i)),
                    (false, false, false) if *boxed => {
                        (quote!(::std::option::Option<&#inner>), quote!(self.#i.as_deref()))
                    }
                    (false, false, false) => (quote!(::std::option::Option<&#inner>), quote!(self.#i.as_ref())),
                }
            }
        };
        getters.push(quote! {
            #d
            pub fn #gi(&self) -> #ret {
                #body
            }
        });
    }
    if let Some(et) = g.extra_ty(o) {
        let i = Gen::extra_ident(&plans);
        getters.push(quote! {
            /// The properties the schema does not declare, in input order.
            pub fn #i(&self) -> &#et {
                &self.#i
            }
        });
    }

    // Constructor options and the JSON the constructor builds, in schema order.
    let auto = |name: &str| p.auto.iter().find(|(n, _)| n == name).map(|(_, a)| *a);
    let mut opt_fields = Vec::new();
    let mut opt_withs = Vec::new();
    let mut inserts = Vec::new();
    let (mut need_id, mut need_now) = (false, false);
    for pl in &plans {
        let (name, i) = (lit(&pl.field.name), &pl.ident);
        if pl.field.name == p.role_field {
            inserts.push(quote!(map.insert(#name.to_owned(), rt::to_json(&role)?);));
            continue;
        }
        if pl.field.name == p.union_field {
            inserts.push(quote!(map.insert(#name.to_owned(), rt::to_json(&event)?);));
            continue;
        }
        let mut text = crate::emit::field_text(pl.field);
        let (ty, insert) = match &pl.kind {
            FieldKind::ConstRequired(c) => {
                let l = lit(&c.to_string());
                inserts.push(quote!(map.insert(#name.to_owned(), ::serde_json::from_str(#l).map_err(|e| Error::new(Rule::Type, "", e.to_string()))?);));
                continue;
            }
            FieldKind::ConstOptional(c) => {
                let l = lit(&c.to_string());
                text.push_str(&format!("\n\nWhether to send it (it is always `{c}`)."));
                let ins = quote! {
                    if opts.#i {
                        map.insert(#name.to_owned(), ::serde_json::from_str(#l).map_err(|e| Error::new(Rule::Type, "", e.to_string()))?);
                    }
                };
                (quote!(bool), ins)
            }
            FieldKind::Value { .. } => {
                let inner = g.ty(&pl.field.node);
                let fallback = match auto(&pl.field.name) {
                    Some(AutoValue::Id) => {
                        need_id = true;
                        text.push_str("\n\nWhen `None`, a fresh id from [`new_id`].");
                        Some(quote!(::serde_json::Value::String(new_id())))
                    }
                    Some(AutoValue::Now) => {
                        need_now = true;
                        text.push_str("\n\nWhen `None`, the current time in milliseconds since the Unix epoch.");
                        Some(quote!(::serde_json::Value::from(now_ms())))
                    }
                    None => None,
                };
                let ins = match fallback {
                    Some(f) => quote! {
                        let value = match &opts.#i {
                            ::std::option::Option::Some(x) => rt::to_json(x)?,
                            ::std::option::Option::None => #f,
                        };
                        map.insert(#name.to_owned(), value);
                    },
                    None => quote! {
                        if let ::std::option::Option::Some(x) = &opts.#i {
                            map.insert(#name.to_owned(), rt::to_json(x)?);
                        }
                    },
                };
                (quote!(::std::option::Option<#inner>), ins)
            }
        };
        inserts.push(insert);
        let d = doc_attrs(&text);
        opt_fields.push(quote!(#d pub #i: #ty));
        let with = format_ident!("with_{}", i.to_string().trim_start_matches("r#"));
        let wd = doc_attrs(&crate::emit::setter_text(&pl.field.name));
        opt_withs.push(match &pl.kind {
            FieldKind::ConstOptional(_) => quote! {
                #wd
                #[must_use]
                pub fn #with(mut self, send: bool) -> Self {
                    self.#i = send;
                    self
                }
            },
            _ if g.is_string(&pl.field.node) => quote! {
                #wd
                #[must_use]
                pub fn #with(mut self, #i: impl ::std::convert::Into<::std::string::String>) -> Self {
                    self.#i = ::std::option::Option::Some(#i.into());
                    self
                }
            },
            _ => {
                let inner = g.ty(&pl.field.node);
                quote! {
                    #wd
                    #[must_use]
                    pub fn #with(mut self, #i: #inner) -> Self {
                        self.#i = ::std::option::Option::Some(#i);
                        self
                    }
                }
            }
        });
    }
    let new_id_fn = if need_id {
        quote! {
            /// A fresh cuid2-*shaped* id: a lowercase letter, then 23 lowercase letters and digits (24 in all).
            ///
            /// Built with `std` only from the clock, a process-wide counter, the process id and the random keys
            /// of [`std::collections::hash_map::RandomState`]; it is not the reference cuid2 algorithm, but it
            /// has the cuid2 shape (`--strict-ids` accepts it) and collisions are as unlikely as 119 random bits.
            pub fn new_id() -> ::std::string::String {
                use ::std::hash::{BuildHasher, Hasher};
                static COUNTER: ::std::sync::atomic::AtomicU64 = ::std::sync::atomic::AtomicU64::new(0);
                const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
                let count = COUNTER.fetch_add(1, ::std::sync::atomic::Ordering::Relaxed);
                let nanos = ::std::time::SystemTime::now()
                    .duration_since(::std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos());
                let state = ::std::collections::hash_map::RandomState::new();
                let mut out = ::std::string::String::with_capacity(24);
                let mut word = 0u64;
                let mut left = 0u32;
                let mut round = 0u64;
                while out.len() < 24 {
                    if left == 0 {
                        let mut h = state.build_hasher();
                        h.write_u128(nanos);
                        h.write_u64(count);
                        h.write_u32(::std::process::id());
                        h.write_u64(round);
                        word = h.finish();
                        round += 1;
                        left = 12;
                    }
                    let digit = if out.is_empty() { 10 + word % 26 } else { word % 36 };
                    word /= 36;
                    left -= 1;
                    out.push(char::from(DIGITS[digit as usize]));
                }
                out
            }
        }
    } else {
        TokenStream::new()
    };
    let now_fn = if need_now {
        quote! {
            fn now_ms() -> u64 {
                ::std::time::SystemTime::now()
                    .duration_since(::std::time::UNIX_EPOCH)
                    .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            }
        }
    } else {
        TokenStream::new()
    };
    let opts_docs = doc_attrs(&format!("The optional parts of a new [`{env}`], for [`{env}::create`]."));
    let create_doc = doc_attrs(&format!(
        "A new envelope, in the spirit of the TypeScript `createEnvelope(role, ev, opts)`: fills what `opts` leaves \
         out (see [`{opts_ty}`]), then checks the whole message exactly as [`parse_envelope`] would.\n\n# Errors\n\
         A combination the protocol forbids ([`Rule::RoleEvent`], [`Rule::RoleField`]), or any other broken rule \
         (an empty id, a number out of range, ...), with its pointer."
    ));
    let alias_doc = doc_attrs(&format!("Same as [`{env}::create`].\n\n# Errors\nAs [`{env}::create`]."));
    Ok(quote! {
        /// Parses one line of JSON text (without its newline) into a checked envelope.
        ///
        /// # Errors
        /// [`Rule::BlankLine`], [`Rule::TooDeep`] or [`Rule::MalformedJson`] at the root, or the first rule
        /// the message breaks, with the same rule id and pointer as `wiregen validate`.
        pub fn parse_envelope(line: &str) -> ::std::result::Result<#env, Error> {
            rt::from_str(line)
        }

        /// Like [`parse_envelope`], for bytes that may not be UTF-8.
        ///
        /// # Errors
        /// [`Rule::InvalidUtf8`] at the root, or any error of [`parse_envelope`].
        pub fn parse_envelope_bytes(line: &[u8]) -> ::std::result::Result<#env, Error> {
            rt::from_bytes(line)
        }

        /// Checks a JSON value as an envelope without keeping the typed result.
        ///
        /// Unknown properties are reported in the value's own key order (input order only when
        /// `serde_json`'s `preserve_order` feature is on; [`parse_envelope`] always keeps input order).
        ///
        /// # Errors
        /// The first rule the message breaks.
        pub fn validate_value(value: &::serde_json::Value) -> ::std::result::Result<(), Error> {
            #env::from_value(value).map(|_| ())
        }

        #opts_docs
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct #opts_ty {
            #(#opt_fields,)*
        }

        impl #opts_ty {
            #(#opt_withs)*
        }

        impl #env {
            #(#getters)*

            /// Takes the event out of the envelope.
            pub fn #into_union(self) -> #union_ty {
                self.#union_i
            }

            /// A new envelope with default options: see [`Self::create`].
            ///
            /// # Errors
            /// As [`Self::create`].
            pub fn new(role: #role_ty, event: impl ::std::convert::Into<#union_plain>) -> ::std::result::Result<Self, Error> {
                Self::create(role, event, #opts_ty::default())
            }

            #create_doc
            pub fn create(role: #role_ty, event: impl ::std::convert::Into<#union_plain>, opts: #opts_ty) -> ::std::result::Result<Self, Error> {
                let event: #union_plain = event.into();
                let mut map = ::serde_json::Map::new();
                #(#inserts)*
                Self::from_value(&::serde_json::Value::Object(map))
            }

            /// Checks a JSON value and converts it (see [`validate_value`] for the order of unknown properties).
            ///
            /// # Errors
            /// The first rule the message breaks.
            pub fn from_value(value: &::serde_json::Value) -> ::std::result::Result<Self, Error> {
                rt::from_value(value)
            }
        }

        #alias_doc
        pub fn create_envelope(role: #role_ty, event: impl ::std::convert::Into<#union_plain>, opts: #opts_ty) -> ::std::result::Result<#env, Error> {
            #env::create(role, event, opts)
        }

        #new_id_fn
        #now_fn
    })
}
