//! `JsonSchema` impls behind the `schemars` feature: each type's schema is the exact JSON Schema of its model
//! node, written by the bundled schema's [`Keywords`] (standard 2020-12 keywords only, the same keywords as the
//! bundle), so a standard validator holding the schema of a type gives the verdict the type's `Deserialize`
//! gives. A reference to another type is schemars' own subschema of its Rust type (`subschema_for`), beside the
//! other keywords of its schema through `allOf`.

use proc_macro2::{Literal, TokenStream};
use quote::quote;
use serde_json::Value;

use super::lit;
use super::types::Gen;
use crate::emit::schema::keywords::{Schema, J};
use crate::ir::*;

/// Tokens for `schemars::json_schema!` (a reference is `generator.subschema_for::<T>()`; `used` says one was
/// written).
fn schema_tokens(g: &Gen<'_>, s: &Schema, used: &mut bool) -> TokenStream {
    if let Some(id) = s.only_ref() {
        return sub(g, id, used);
    }
    let mut refs = Vec::new();
    let mut members = Vec::new();
    for (k, v) in s.members() {
        match v {
            J::Ref(id) if k == "$ref" => refs.push(sub(g, *id, used)),
            J::A(items) if k == "allOf" => refs.extend(items.iter().map(|i| j_tokens(g, i, used))),
            _ => {
                let (k, v) = (lit(k), j_tokens(g, v, used));
                members.push(quote!(#k: #v));
            }
        }
    }
    // A `$ref` beside other keywords: the referenced schema applies like an `allOf` member, and joins it.
    if !refs.is_empty() {
        members.push(quote!("allOf": [#(#refs),*]));
    }
    quote!({ #(#members),* })
}

fn j_tokens(g: &Gen<'_>, j: &J, used: &mut bool) -> TokenStream {
    match j {
        J::V(v) => value_tokens(v),
        J::S(s) => schema_tokens(g, s, used),
        J::A(items) => {
            let is = items.iter().map(|i| j_tokens(g, i, used));
            quote!([#(#is),*])
        }
        J::Ref(id) => sub(g, *id, used),
    }
}

/// schemars' subschema of a type's Rust type.
fn sub(g: &Gen<'_>, id: TypeId, used: &mut bool) -> TokenStream {
    *used = true;
    let t = g.type_ident(g.final_id(id));
    quote!((generator.subschema_for::<#t>()))
}

/// JSON as tokens for `serde_json::json!` (numbers as integers when they are whole).
fn value_tokens(v: &Value) -> TokenStream {
    match v {
        Value::Null => quote!(null),
        Value::Bool(b) => quote!(#b),
        Value::Number(n) => {
            let l = match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => Literal::u64_suffixed(u),
                (_, Some(i), _) => {
                    let l = Literal::i128_suffixed(i128::from(i).abs());
                    return if i < 0 { quote!(-#l) } else { quote!(#l) };
                }
                (_, _, Some(f)) => return super::types::f64_lit(f),
                _ => Literal::u64_suffixed(0),
            };
            quote!(#l)
        }
        Value::String(s) => {
            let l = lit(s);
            quote!(#l)
        }
        Value::Array(a) => {
            let items = a.iter().map(value_tokens);
            quote!([#(#items),*])
        }
        Value::Object(o) => {
            let items = o.iter().map(|(k, v)| {
                let (k, v) = (lit(k), value_tokens(v));
                quote!(#k: #v)
            });
            quote!({ #(#items),* })
        }
    }
}

/// `impl JsonSchema` for one type (not for aliases: they are their target).
pub(crate) fn json_schema_impl(g: &Gen<'_>, id: TypeId) -> TokenStream {
    let ty = g.type_ident(id);
    let body = g.keywords.type_body(id);
    let mut used = false;
    let tokens = schema_tokens(g, &body, &mut used);
    let schema = match body.only_ref() {
        Some(_) => quote!(::schemars::json_schema!({ "allOf": [#tokens] })),
        None => quote!(::schemars::json_schema!(#tokens)),
    };
    let generator = if used { quote!(generator) } else { quote!(_generator) };
    let name = lit(&ty.to_string());
    quote! {
        #[cfg(feature = "schemars")]
        impl ::schemars::JsonSchema for #ty {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(#name)
            }

            fn json_schema(#generator: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                #schema
            }
        }
    }
}
