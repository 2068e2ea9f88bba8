//! The protocol's types: one enum per named string enum, one struct per named object and per union member,
//! the union itself (`Event`, tagged on its discriminator) and the envelope with its checked constructor.
//! Each type gets a generated `decode` that walks an order-preserving JSON tree in schema order and returns the
//! canonical first error, and a `Deserialize` impl built on it (so a derive's leniencies never apply).

use std::collections::BTreeSet;

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};
use serde_json::{json, Value};

use super::support::{rule, Uses};
use super::{doc_attrs, doc_code_block, field_ident, lit, type_ident, variant_ident, Names};
use crate::emit::EmitError;
use crate::legacy::ir::{EnumDef, Field, Object, Protocol, Ty, Variant};
use crate::rules::Rule;

/// Records which leaf decoders a type needs.
pub(crate) fn collect_uses(p: &Protocol) -> Uses {
    let mut uses = Uses::default();
    let all = p
        .envelope
        .fields
        .iter()
        .chain(p.objects.values().flat_map(|o| &o.fields))
        .chain(p.union.variants.iter().flat_map(|v| &v.fields));
    for f in all {
        let h = match &f.ty {
            Ty::String(_) => "string",
            Ty::Integer { minimum, .. } if *minimum >= 0 => "uint",
            Ty::Integer { .. } => "int",
            Ty::Number { .. } => "number",
            Ty::Boolean => "boolean",
            Ty::AnyObject => "any_object",
            Ty::Enum(_) | Ty::Object(_) | Ty::Union => continue,
        };
        uses.helpers.insert(h);
    }
    uses
}

/// The Rust type of a value type.
fn rust_ty(t: &Ty, n: &Names) -> TokenStream {
    match t {
        Ty::String(_) => quote!(::std::string::String),
        Ty::Integer { minimum, .. } if *minimum >= 0 => quote!(u64),
        Ty::Integer { .. } => quote!(i64),
        Ty::Number { .. } => quote!(f64),
        Ty::Boolean => quote!(bool),
        Ty::Enum(name) | Ty::Object(name) => {
            let i = type_ident(name);
            quote!(#i)
        }
        Ty::AnyObject => quote!(::serde_json::Map<::std::string::String, ::serde_json::Value>),
        Ty::Union => {
            let i = &n.event;
            quote!(#i)
        }
    }
}

fn int_lit(v: i64) -> TokenStream {
    let abs = Literal::u64_unsuffixed(v.unsigned_abs());
    if v < 0 {
        quote!(-#abs)
    } else {
        quote!(#abs)
    }
}

/// An expression decoding `v` (a `&de::Json`) at pointer `at` into the Rust type of `t`.
fn decode_expr(t: &Ty, n: &Names, v: &TokenStream, at: &TokenStream) -> TokenStream {
    match t {
        Ty::String(s) => {
            let min = Literal::u64_unsuffixed(s.min_length.unwrap_or(0));
            quote!(de::string(#v, #at, #min))
        }
        Ty::Integer { minimum, maximum } if *minimum >= 0 => {
            let (lo, hi) = (int_lit(*minimum), int_lit(*maximum));
            quote!(de::uint(#v, #at, #lo, #hi))
        }
        Ty::Integer { minimum, maximum } => {
            let (lo, hi) = (int_lit(*minimum), int_lit(*maximum));
            quote!(de::int(#v, #at, #lo, #hi))
        }
        Ty::Number { minimum } => match minimum {
            Some(m) => {
                let m = Literal::f64_suffixed(*m);
                quote!(de::number(#v, #at, ::std::option::Option::Some(#m)))
            }
            None => quote!(de::number(#v, #at, ::std::option::Option::None)),
        },
        Ty::Boolean => quote!(de::boolean(#v, #at)),
        Ty::AnyObject => quote!(de::any_object(#v, #at)),
        Ty::Enum(_) | Ty::Object(_) | Ty::Union => {
            let ty = rust_ty(t, n);
            quote!(#ty::decode(#v, #at))
        }
    }
}

/// `#[schemars(...)]` validation keywords for a field, so the derived schema carries the schema's bounds.
fn schemars_attrs(f: &Field, n: &Names) -> TokenStream {
    let mut parts = Vec::new();
    if !f.required {
        let inner = rust_ty(&f.ty, n).to_string().replace(' ', "");
        let inner = lit(&inner);
        parts.push(quote!(with = #inner));
        parts.push(quote!(default));
    }
    match &f.ty {
        Ty::String(s) => {
            if let Some(m) = s.min_length {
                let m = Literal::u64_suffixed(m);
                parts.push(quote!(length(min = #m)));
            }
        }
        Ty::Integer { minimum, maximum } if *minimum >= 0 => {
            let (lo, hi) = (Literal::u64_suffixed(*minimum as u64), Literal::u64_suffixed(*maximum as u64));
            parts.push(quote!(range(min = #lo, max = #hi)));
        }
        Ty::Integer { minimum, maximum } => {
            let (lo, hi) = (Literal::i64_suffixed(*minimum), Literal::i64_suffixed(*maximum));
            parts.push(quote!(range(min = #lo, max = #hi)));
        }
        Ty::Number { minimum: Some(m) } => {
            let m = Literal::f64_suffixed(*m);
            parts.push(quote!(range(min = #m)));
        }
        _ => {}
    }
    if parts.is_empty() {
        return TokenStream::new();
    }
    quote!(#[cfg_attr(feature = "schemars", schemars(#(#parts),*))])
}

/// Struct fields with their serde and schemars attributes.
fn struct_fields(fields: &[Field], n: &Names, public: bool) -> Result<Vec<TokenStream>, EmitError> {
    fields
        .iter()
        .map(|f| {
            let ident = field_ident(&f.name)?;
            let docs = doc_attrs(&f.description);
            let rename = if ident == f.name {
                TokenStream::new()
            } else {
                let name = lit(&f.name);
                quote!(#[serde(rename = #name)])
            };
            let ty = rust_ty(&f.ty, n);
            let (ty, skip) = if f.required {
                (ty, TokenStream::new())
            } else {
                (
                    quote!(::std::option::Option<#ty>),
                    quote!(#[serde(skip_serializing_if = "::std::option::Option::is_none")]),
                )
            };
            let schemars = schemars_attrs(f, n);
            let vis = if public { quote!(pub) } else { TokenStream::new() };
            Ok(quote! {
                #docs
                #rename
                #skip
                #schemars
                #vis #ident: #ty
            })
        })
        .collect()
}

/// Statements binding each field (by its Rust name) from `obj`, in schema order, then the unknown-key check.
fn field_decodes(fields: &[Field], n: &Names) -> Result<(Vec<TokenStream>, Vec<Ident>), EmitError> {
    let mut stmts = Vec::new();
    let mut idents = Vec::new();
    for f in fields {
        let ident = field_ident(&f.name)?;
        let name = lit(&f.name);
        let expr = decode_expr(&f.ty, n, &quote!(v), &quote!(at.child(#name)));
        stmts.push(if f.required {
            quote! {
                let #ident = match obj.get(#name) {
                    ::std::option::Option::Some(v) => #expr?,
                    ::std::option::Option::None => return ::std::result::Result::Err(de::required(at.child(#name), #name)),
                };
            }
        } else {
            quote! {
                let #ident = match obj.get(#name) {
                    ::std::option::Option::Some(v) => ::std::option::Option::Some(#expr?),
                    ::std::option::Option::None => ::std::option::Option::None,
                };
            }
        });
        idents.push(ident);
    }
    Ok((stmts, idents))
}

/// `impl Deserialize` that decodes through the generated checker.
fn deserialize_impl(ty: &Ident, decode: TokenStream) -> TokenStream {
    quote! {
        impl<'de> ::serde::Deserialize<'de> for #ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> ::std::result::Result<Self, D::Error> {
                let json = <de::Json as ::serde::Deserialize>::deserialize(d)?;
                let at = de::Ptr::ROOT;
                #decode.map_err(<D::Error as ::serde::de::Error>::custom)
            }
        }
    }
}

/// A string enum.
pub(crate) fn enum_def(e: &EnumDef) -> Result<TokenStream, EmitError> {
    let ty = type_ident(&e.name);
    let docs = doc_attrs(&e.description);
    let mut idents = Vec::new();
    for v in &e.values {
        let i = variant_ident(v)?;
        if idents.contains(&i) {
            return Err(EmitError::Unsupported(format!("enum `{}`: values collide as Rust variant `{i}`", e.name)));
        }
        idents.push(i);
    }
    let values: Vec<Literal> = e.values.iter().map(|v| lit(v)).collect();
    let variants = idents.iter().zip(&values).map(|(i, v)| {
        let d = doc_attrs(&format!("`{}`", v.to_string().trim_matches('"')));
        quote!(#d #[serde(rename = #v)] #i)
    });
    let allowed = e.values.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ");
    let allowed_msg = fmt_lit("`", &format!("` is not one of {allowed}"));
    let enum_rule = rule(Rule::Enum);
    let de_impl = deserialize_impl(&ty, quote!(#ty::decode(&json, at)));
    Ok(quote! {
        #docs
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, ::serde::Serialize)]
        #[cfg_attr(feature = "schemars", derive(::schemars::JsonSchema))]
        pub enum #ty {
            #(#variants,)*
        }

        impl #ty {
            /// Every value, in schema order.
            pub const ALL: &'static [#ty] = &[#(#ty::#idents),*];

            /// The value as it is written on the wire.
            pub fn as_str(self) -> &'static str {
                match self {
                    #(#ty::#idents => #values,)*
                }
            }

            fn decode(v: &de::Json, at: de::Ptr<'_>) -> ::std::result::Result<Self, Error> {
                let s = match v {
                    de::Json::String(s) => s.as_str(),
                    other => return ::std::result::Result::Err(de::type_error(at, "a string", other)),
                };
                match s {
                    #(#values => ::std::result::Result::Ok(#ty::#idents),)*
                    other => ::std::result::Result::Err(Error::new(#enum_rule, at.render(), ::std::format!(#allowed_msg, other))),
                }
            }
        }

        impl ::std::fmt::Display for #ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        #de_impl
    })
}

/// A named object (not an event, not the envelope).
pub(crate) fn object_def(o: &Object, n: &Names) -> Result<TokenStream, EmitError> {
    let ty = type_ident(&o.name);
    let docs = doc_attrs(&o.description);
    let fields = struct_fields(&o.fields, n, true)?;
    let (stmts, idents) = field_decodes(&o.fields, n)?;
    let known: Vec<Literal> = o.fields.iter().map(|f| lit(&f.name)).collect();
    let owner = lit(&o.name);
    let default = default_derive(&o.fields);
    let de_impl = deserialize_impl(&ty, quote!(#ty::decode(&json, at)));
    Ok(quote! {
        #docs
        #[derive(Debug, Clone, PartialEq, ::serde::Serialize #default)]
        #[cfg_attr(feature = "schemars", derive(::schemars::JsonSchema), schemars(deny_unknown_fields))]
        pub struct #ty {
            #(#fields,)*
        }

        impl #ty {
            fn decode(v: &de::Json, at: de::Ptr<'_>) -> ::std::result::Result<Self, Error> {
                let obj = de::object(v, at)?;
                #(#stmts)*
                obj.check_keys(at, &[#(#known),*], &[], #owner)?;
                ::std::result::Result::Ok(#ty { #(#idents),* })
            }
        }

        #de_impl
    })
}

fn default_derive(fields: &[Field]) -> TokenStream {
    if fields.iter().all(|f| !f.required) {
        quote!(, ::std::default::Default)
    } else {
        TokenStream::new()
    }
}

/// A format string with one `{}` placeholder between `before` and `after` (their braces escaped).
fn fmt_lit(before: &str, after: &str) -> Literal {
    let esc = |s: &str| s.replace('{', "{{").replace('}', "}}");
    lit(&format!("{}{{}}{}", esc(before), esc(after)))
}

fn roles_text(roles: &[String]) -> String {
    roles.join(" or ")
}

/// A union member: its struct, `decode_fields`, `Deserialize` (without the discriminator) and `From` into the union.
pub(crate) fn variant_def(p: &Protocol, v: &Variant, n: &Names) -> Result<TokenStream, EmitError> {
    let ty = type_ident(&v.name);
    let event = &n.event;
    let text = format!("`{}`: {}\n\nSent by: {}.", v.tag, v.description, v.roles.join(", "));
    let mut docs = doc_attrs(&text);
    if !v.examples.is_empty() {
        docs.extend(doc_attrs("\nExample (the event body on the wire):"));
        let code: Vec<String> = v.examples.iter().map(Value::to_string).collect();
        docs.extend(doc_code_block("json", &code.join("\n")));
    }
    let fields = struct_fields(&v.fields, n, true)?;
    let (stmts, idents) = field_decodes(&v.fields, n)?;
    let tag_name = lit(&p.union.tag);
    let known: Vec<Literal> = v.fields.iter().map(|f| lit(&f.name)).collect();
    let removed: Vec<TokenStream> = p
        .removed
        .iter()
        .filter_map(|r| match &r.kind {
            crate::legacy::ir::RemovedKind::Property { event, name, replacement } if *event == v.tag => {
                let (a, b) = (lit(name), lit(replacement));
                Some(quote!((#a, #b)))
            }
            _ => None,
        })
        .collect();
    let owner = lit(&v.tag);
    let default = default_derive(&v.fields);
    let de_impl =
        deserialize_impl(&ty, quote!(de::object(&json, at).and_then(|obj| #ty::decode_fields(obj, at, false))));
    Ok(quote! {
        #docs
        #[derive(Debug, Clone, PartialEq, ::serde::Serialize #default)]
        #[cfg_attr(feature = "schemars", derive(::schemars::JsonSchema), schemars(deny_unknown_fields))]
        pub struct #ty {
            #(#fields,)*
        }

        impl #ty {
            /// Decodes the members of an event body; `tagged` when the body carries the discriminator.
            fn decode_fields(obj: &de::Object, at: de::Ptr<'_>, tagged: bool) -> ::std::result::Result<Self, Error> {
                #(#stmts)*
                let known: &[&str] = if tagged { &[#tag_name, #(#known),*] } else { &[#(#known),*] };
                obj.check_keys(at, known, &[#(#removed),*], #owner)?;
                ::std::result::Result::Ok(#ty { #(#idents),* })
            }
        }

        impl ::std::convert::From<#ty> for #event {
            fn from(ev: #ty) -> Self {
                #event::#ty(ev)
            }
        }

        #de_impl
    })
}

/// The union: an enum with one newtype variant per member, tagged on the discriminator.
pub(crate) fn union_def(p: &Protocol, n: &Names) -> Result<TokenStream, EmitError> {
    let event = &n.event;
    let u = &p.union;
    let docs = doc_attrs(&u.description);
    let tag_name = lit(&u.tag);
    let tys: Vec<Ident> = u.variants.iter().map(|v| type_ident(&v.name)).collect();
    let tags: Vec<Literal> = u.variants.iter().map(|v| lit(&v.tag)).collect();
    let variant_docs = u.variants.iter().map(|v| doc_attrs(&format!("`{}` (sent by {}).", v.tag, v.roles.join(", "))));
    let mut removed = Vec::new();
    for r in &p.removed {
        if let crate::legacy::ir::RemovedKind::Events(evs) = &r.kind {
            for (old, rep) in evs {
                let old_l = lit(old);
                let msg = lit(&format!("`{old}` was removed in this version: use `{rep}` instead"));
                let rr = rule(Rule::RemovedEvent);
                removed.push(
                    quote!(#old_l => ::std::result::Result::Err(Error::new(#rr, at.child(#tag_name).render(), #msg)),),
                );
            }
        }
    }
    let expected = u.variants.iter().map(|v| format!("`{}`", v.tag)).collect::<Vec<_>>().join(", ");
    let unknown_fmt = fmt_lit("`", &format!("` is not an event; expected one of {expected}"));
    let unknown = rule(Rule::UnknownEvent);
    let de_impl = deserialize_impl(event, quote!(#event::decode(&json, at)));
    Ok(quote! {
        #docs
        ///
        /// Each variant holds the event's struct; on the wire the variant is named by the discriminator.
        #[derive(Debug, Clone, PartialEq, ::serde::Serialize)]
        #[serde(tag = #tag_name)]
        #[cfg_attr(feature = "schemars", derive(::schemars::JsonSchema))]
        pub enum #event {
            #(#variant_docs #[serde(rename = #tags)] #tys(#tys),)*
        }

        impl #event {
            /// Every discriminator value, in schema order.
            pub const TAGS: &'static [&'static str] = &[#(#tags),*];

            /// The discriminator value of this event.
            pub fn tag(&self) -> &'static str {
                match self {
                    #(#event::#tys(_) => #tags,)*
                }
            }

            fn decode(v: &de::Json, at: de::Ptr<'_>) -> ::std::result::Result<Self, Error> {
                let obj = de::object(v, at)?;
                match de::tag(obj, at, #tag_name)? {
                    #(#tags => #tys::decode_fields(obj, at, true).map(#event::#tys),)*
                    #(#removed)*
                    other => ::std::result::Result::Err(Error::new(#unknown, at.child(#tag_name).render(), ::std::format!(#unknown_fmt, other))),
                }
            }
        }

        #de_impl
    })
}

/// `matches!(role, Role::A | Role::B)` for a list of role names.
fn role_pattern(p: &Protocol, roles: &[String]) -> Result<TokenStream, EmitError> {
    let role_ty = type_ident(&p.role_enum);
    let vs = roles.iter().map(|r| variant_ident(r)).collect::<Result<Vec<_>, _>>()?;
    Ok(quote!(#(#role_ty::#vs)|*))
}

fn ptr_literal(tokens: &[&str]) -> Literal {
    let mut s = String::new();
    for t in tokens {
        s.push('/');
        s.push_str(&t.replace('~', "~0").replace('/', "~1"));
    }
    lit(&s)
}

/// The envelope: private fields, getters, checked decoding and the constructor.
pub(crate) fn envelope_def(p: &Protocol, n: &Names) -> Result<TokenStream, EmitError> {
    let env = &n.envelope;
    let opts_ty = &n.options;
    let event = &n.event;
    let role_ty = type_ident(&p.role_enum);
    let fields = struct_fields(&p.envelope.fields, n, false)?;
    let (stmts, idents) = field_decodes(&p.envelope.fields, n)?;
    let known: Vec<Literal> = p.envelope.fields.iter().map(|f| lit(&f.name)).collect();
    let owner = lit(&p.envelope.name);
    let role_f = p
        .envelope
        .fields
        .iter()
        .find(|f| f.name == p.role_field)
        .ok_or_else(|| EmitError::Unsupported(format!("no envelope field `{}`", p.role_field)))?;
    let union_f = p
        .envelope
        .fields
        .iter()
        .find(|f| f.name == p.union_field)
        .ok_or_else(|| EmitError::Unsupported(format!("no envelope field `{}`", p.union_field)))?;
    if !role_f.required || !union_f.required {
        return Err(EmitError::Unsupported("the role and union fields of the envelope must be required".into()));
    }
    let role_i = field_ident(&role_f.name)?;
    let union_i = field_ident(&union_f.name)?;
    let into_union = format_ident!("into_{}", union_i.to_string().trim_end_matches('_'));

    // Getters.
    let mut getters = Vec::new();
    for f in &p.envelope.fields {
        let i = field_ident(&f.name)?;
        let d = doc_attrs(&f.description);
        let inner = rust_ty(&f.ty, n);
        let copy = matches!(f.ty, Ty::Integer { .. } | Ty::Number { .. } | Ty::Boolean | Ty::Enum(_));
        let (ret, body) = match (&f.ty, f.required, copy) {
            (_, true, true) => (inner.clone(), quote!(self.#i)),
            (_, false, true) => (quote!(::std::option::Option<#inner>), quote!(self.#i)),
            (Ty::String(_), true, false) => (quote!(&str), quote!(&self.#i)),
            (Ty::String(_), false, false) => (quote!(::std::option::Option<&str>), quote!(self.#i.as_deref())),
            (_, true, false) => (quote!(&#inner), quote!(&self.#i)),
            (_, false, false) => (quote!(::std::option::Option<&#inner>), quote!(self.#i.as_ref())),
        };
        getters.push(quote! {
            #d
            pub fn #i(&self) -> #ret {
                #body
            }
        });
    }

    // Role rules, in the order of the reference engine: the event's roles, envelope fields, event fields.
    let role_event = rule(Rule::RoleEvent);
    let role_field = rule(Rule::RoleField);
    let role_ptr = ptr_literal(&[&p.role_field]);
    let all_roles = p.roles();
    let mut event_arms = Vec::new();
    for v in &p.union.variants {
        if all_roles.iter().all(|r| v.roles.contains(r)) {
            continue;
        }
        let vty = type_ident(&v.name);
        let pat = role_pattern(p, &v.roles)?;
        let fmt = fmt_lit(&format!("`{}` may be sent only by {}, not by ", v.tag, roles_text(&v.roles)), "");
        event_arms.push(quote! {
            #event::#vty(_) if !::std::matches!(role, #pat) => {
                return ::std::result::Result::Err(Error::new(#role_event, #role_ptr, ::std::format!(#fmt, role.as_str())));
            }
        });
    }
    let event_check = if event_arms.is_empty() {
        TokenStream::new()
    } else {
        quote! {
            match &self.#union_i {
                #(#event_arms)*
                _ => {}
            }
        }
    };
    let mut env_checks = Vec::new();
    for f in &p.envelope.fields {
        let Some(roles) = &f.roles else { continue };
        let i = field_ident(&f.name)?;
        let pat = role_pattern(p, roles)?;
        let ptr = ptr_literal(&[&f.name]);
        let fmt = fmt_lit(&format!("`{}` may be sent only by {}, not by ", f.name, roles_text(roles)), "");
        let present = if f.required { quote!(true) } else { quote!(self.#i.is_some()) };
        env_checks.push(quote! {
            if #present && !::std::matches!(role, #pat) {
                return ::std::result::Result::Err(Error::new(#role_field, #ptr, ::std::format!(#fmt, role.as_str())));
            }
        });
    }
    let mut field_arms = Vec::new();
    for v in &p.union.variants {
        let mut checks = Vec::new();
        for f in &v.fields {
            let Some(roles) = &f.roles else { continue };
            let i = field_ident(&f.name)?;
            let pat = role_pattern(p, roles)?;
            let ptr = ptr_literal(&[&p.union_field, &f.name]);
            let fmt = fmt_lit(&format!("`{}` may be sent only by {}, not by ", f.name, roles_text(roles)), "");
            let present = if f.required { quote!(true) } else { quote!(ev.#i.is_some()) };
            checks.push(quote! {
                if #present && !::std::matches!(role, #pat) {
                    return ::std::result::Result::Err(Error::new(#role_field, #ptr, ::std::format!(#fmt, role.as_str())));
                }
            });
        }
        if !checks.is_empty() {
            let vty = type_ident(&v.name);
            field_arms.push((quote!(#event::#vty(ev)), quote!({ #(#checks)* })));
        }
    }
    let field_check = match field_arms.as_slice() {
        [] => TokenStream::new(),
        [(pat, body)] if p.union.variants.len() > 1 => quote!(if let #pat = &self.#union_i #body),
        arms => {
            let wildcard = if arms.len() < p.union.variants.len() { quote!(_ => {}) } else { TokenStream::new() };
            let arms = arms.iter().map(|(pat, body)| quote!(#pat => #body));
            quote! {
                match &self.#union_i {
                    #(#arms)*
                    #wildcard
                }
            }
        }
    };

    // Constructor: every field but role and union is an option; required ones get defaults.
    let mut opt_fields = Vec::new();
    let mut inits = Vec::new();
    let mut need_id = false;
    let mut need_now = false;
    for f in &p.envelope.fields {
        let i = field_ident(&f.name)?;
        if f.name == p.role_field || f.name == p.union_field {
            inits.push(quote!(#i));
            continue;
        }
        let inner = rust_ty(&f.ty, n);
        let mut text = f.description.clone();
        if f.required {
            match &f.ty {
                Ty::String(_) => {
                    need_id = true;
                    text.push_str("\n\nWhen `None`, a fresh id from [`new_id`].");
                    inits.push(quote!(#i: opts.#i.unwrap_or_else(new_id)));
                }
                Ty::Integer { minimum, .. } if *minimum >= 0 => {
                    need_now = true;
                    text.push_str("\n\nWhen `None`, the current time in milliseconds since the Unix epoch.");
                    inits.push(quote!(#i: opts.#i.unwrap_or_else(now_ms)));
                }
                other => {
                    return Err(EmitError::Unsupported(format!(
                        "required envelope field `{}` of type {other:?} has no default for the constructor",
                        f.name
                    )))
                }
            }
        } else {
            inits.push(quote!(#i: opts.#i));
        }
        let d = doc_attrs(&text);
        opt_fields.push(quote!(#d pub #i: ::std::option::Option<#inner>));
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
    let ty_rule = rule(Rule::Type);
    let env_docs = doc_attrs(&format!(
        "{}\n\nA value of this type is always valid: it comes from [`parse_envelope`], `Deserialize`, [`{env}::from_value`] or \
         [`{env}::create`], which all check the shape and the role rules; its fields are read through getters.",
        p.envelope.description
    ));
    let opts_docs = doc_attrs(&format!("The optional parts of a new [`{env}`], for [`{env}::create`]."));
    let de_impl = deserialize_impl(env, quote!(#env::decode(&json, at)));
    let schemars_transform =
        if need_schemars_rules(p) { quote!(, transform = schemars_role_rules) } else { TokenStream::new() };
    Ok(quote! {
        #env_docs
        #[derive(Debug, Clone, PartialEq, ::serde::Serialize)]
        #[cfg_attr(feature = "schemars", derive(::schemars::JsonSchema), schemars(deny_unknown_fields #schemars_transform))]
        pub struct #env {
            #(#fields,)*
        }

        #opts_docs
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct #opts_ty {
            #(#opt_fields,)*
        }

        impl #env {
            #(#getters)*

            /// Takes the event out of the envelope.
            pub fn #into_union(self) -> #event {
                self.#union_i
            }

            /// A new envelope with default options: see [`Self::create`].
            ///
            /// # Errors
            /// As [`Self::create`].
            pub fn new(#role_i: #role_ty, #union_i: impl ::std::convert::Into<#event>) -> ::std::result::Result<Self, Error> {
                Self::create(#role_i, #union_i, #opts_ty::default())
            }

            /// A new envelope, in the spirit of the TypeScript `createEnvelope(role, ev, opts)`: fills what `opts`
            /// leaves out (see [`#opts_ty`]), then checks the whole message exactly as [`parse_envelope`] would.
            ///
            /// # Errors
            /// A combination the protocol forbids ([`Rule::RoleEvent`], [`Rule::RoleField`]), or any other broken
            /// rule (an empty id, a number out of range, ...), with its pointer.
            pub fn create(#role_i: #role_ty, #union_i: impl ::std::convert::Into<#event>, opts: #opts_ty) -> ::std::result::Result<Self, Error> {
                let #union_i = #union_i.into();
                let draft = #env { #(#inits),* };
                let value = ::serde_json::to_value(&draft).map_err(|e| Error::new(#ty_rule, "", e.to_string()))?;
                Self::from_value(&value)
            }

            /// Checks a JSON value and converts it (see [`validate_value`] for the order of unknown properties).
            ///
            /// # Errors
            /// The first rule the message breaks.
            pub fn from_value(value: &::serde_json::Value) -> ::std::result::Result<Self, Error> {
                Self::decode(&de::Json::from(value), de::Ptr::ROOT)
            }

            fn decode(v: &de::Json, at: de::Ptr<'_>) -> ::std::result::Result<Self, Error> {
                let obj = de::object(v, at)?;
                #(#stmts)*
                obj.check_keys(at, &[#(#known),*], &[], #owner)?;
                let env = #env { #(#idents),* };
                env.check_roles()?;
                ::std::result::Result::Ok(env)
            }

            fn check_roles(&self) -> ::std::result::Result<(), Error> {
                let role = self.#role_i;
                #event_check
                #(#env_checks)*
                #field_check
                ::std::result::Result::Ok(())
            }
        }

        /// Same as [`#env::create`].
        ///
        /// # Errors
        /// As [`#env::create`].
        pub fn create_envelope(#role_i: #role_ty, #union_i: impl ::std::convert::Into<#event>, opts: #opts_ty) -> ::std::result::Result<#env, Error> {
            #env::create(#role_i, #union_i, opts)
        }

        #new_id_fn
        #now_fn
        #de_impl
    })
}

fn need_schemars_rules(p: &Protocol) -> bool {
    !role_rules_json(p).is_empty()
}

/// The role rules as JSON Schema `if`/`then` (one per restricted event and per restricted field), attached to
/// the schema schemars derives for the envelope: role rules live in code, not in the shape of the types.
pub(crate) fn role_rules_json(p: &Protocol) -> Vec<Value> {
    let (ev, t, rf) = (&p.union_field, &p.union.tag, &p.role_field);
    let all = p.roles();
    let mut out = Vec::new();
    for v in &p.union.variants {
        if !all.iter().all(|r| v.roles.contains(r)) {
            out.push(json!({
                "if": { "properties": { ev: { "properties": { t: { "const": v.tag } }, "required": [t] } }, "required": [ev] },
                "then": { "properties": { rf: { "enum": v.roles } } }
            }));
        }
    }
    for f in &p.envelope.fields {
        if let Some(roles) = &f.roles {
            out.push(json!({ "if": { "required": [f.name] }, "then": { "properties": { rf: { "enum": roles } } } }));
        }
    }
    for v in &p.union.variants {
        for f in &v.fields {
            if let Some(roles) = &f.roles {
                out.push(json!({
                    "if": { "properties": { ev: { "properties": { t: { "const": v.tag } }, "required": [t, f.name] } }, "required": [ev] },
                    "then": { "properties": { rf: { "enum": roles } } }
                }));
            }
        }
    }
    out
}

/// The transform that adds the role rules to the derived envelope schema (only with the `schemars` feature).
pub(crate) fn schemars_rules_fn(p: &Protocol) -> TokenStream {
    let rules = role_rules_json(p);
    if rules.is_empty() {
        return TokenStream::new();
    }
    let v = json_tokens(&Value::Array(rules));
    quote! {
        #[cfg(feature = "schemars")]
        fn schemars_role_rules(schema: &mut ::schemars::Schema) {
            schema.insert("allOf".to_owned(), ::serde_json::json!(#v));
        }
    }
}

/// JSON as tokens for `serde_json::json!`.
fn json_tokens(v: &Value) -> TokenStream {
    match v {
        Value::Null => quote!(null),
        Value::Bool(b) => quote!(#b),
        Value::Number(num) => {
            let l = match (num.as_u64(), num.as_i64()) {
                (Some(u), _) => Literal::u64_unsuffixed(u),
                (_, Some(i)) => Literal::i64_unsuffixed(i),
                _ => Literal::f64_unsuffixed(num.as_f64().unwrap_or(0.0)),
            };
            quote!(#l)
        }
        Value::String(s) => {
            let l = lit(s);
            quote!(#l)
        }
        Value::Array(a) => {
            let items = a.iter().map(json_tokens);
            quote!([#(#items),*])
        }
        Value::Object(o) => {
            let items = o.iter().map(|(k, v)| {
                let k = lit(k);
                let v = json_tokens(v);
                quote!(#k: #v)
            });
            quote!({ #(#items),* })
        }
    }
}

/// Type names this emitter defines besides the model's.
pub(crate) fn fixed_names(n: &Names) -> BTreeSet<String> {
    [n.event.to_string(), n.options.to_string(), "Rule".to_string(), "Error".to_string()].into_iter().collect()
}
