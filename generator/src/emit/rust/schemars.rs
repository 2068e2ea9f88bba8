//! `JsonSchema` impls behind the `schemars` feature: each type's schema is the exact JSON Schema of its model
//! node (standard 2020-12 keywords only, references to other types through schemars' own definitions), so a
//! standard validator holding the schema of a type gives the verdict the type's `Deserialize` gives. Unions
//! are a `oneOf` of their members (exact: each member fixes the discriminator to its own value), strip objects
//! are open (they accept what they drop), and the envelope carries the role rules as `if`/`then`, printed from
//! [`Protocol::role_rules`].

use proc_macro2::{Literal, TokenStream};
use quote::quote;
use serde_json::{json, Value};

use super::lit;
use super::types::{is_bare_map, Form, Gen};
use crate::emit::EmitError;
use crate::ir::*;

/// A schema being built: JSON, with other types' schemas interpolated.
enum J {
    V(Value),
    O(Vec<(String, J)>),
    A(Vec<J>),
    /// `generator.subschema_for::<T>()`.
    Sub(TokenStream),
}

impl J {
    fn tokens(&self, used: &mut bool) -> TokenStream {
        match self {
            J::V(v) => value_tokens(v),
            J::O(members) => {
                let ms = members.iter().map(|(k, v)| {
                    let (k, v) = (lit(k), v.tokens(used));
                    quote!(#k: #v)
                });
                quote!({ #(#ms),* })
            }
            J::A(items) => {
                let is = items.iter().map(|i| i.tokens(used));
                quote!([#(#is),*])
            }
            J::Sub(t) => {
                *used = true;
                quote!((generator.subschema_for::<#t>()))
            }
        }
    }
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

/// A bound as JSON: whole numbers as integers.
fn num(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.2e18 {
        json!(f as i64)
    } else {
        json!(f)
    }
}

fn node(g: &Gen<'_>, n: &Node) -> Result<J, EmitError> {
    Ok(match &n.shape {
        Shape::Any => J::V(json!(true)),
        Shape::Never => J::V(json!(false)),
        Shape::Ref(id) => {
            let i = g.type_ident(g.final_id(*id));
            J::Sub(quote!(#i))
        }
        Shape::Null => J::V(json!({"type": "null"})),
        Shape::Boolean => J::V(json!({"type": "boolean"})),
        Shape::String(s) => {
            let mut o = serde_json::Map::new();
            o.insert("type".into(), json!("string"));
            if let Some(m) = s.min_length {
                o.insert("minLength".into(), json!(m));
            }
            if let Some(m) = s.max_length {
                o.insert("maxLength".into(), json!(m));
            }
            if let Some(p) = &s.pattern {
                o.insert("pattern".into(), json!(p.source));
            }
            J::V(Value::Object(o))
        }
        Shape::Number(s) => {
            let mut o = serde_json::Map::new();
            o.insert("type".into(), json!(if s.integer { "integer" } else { "number" }));
            for (k, v) in [
                ("minimum", s.minimum),
                ("exclusiveMinimum", s.exclusive_minimum),
                ("maximum", s.maximum),
                ("exclusiveMaximum", s.exclusive_maximum),
                ("multipleOf", s.multiple_of),
            ] {
                if let Some(v) = v {
                    o.insert(k.into(), num(v));
                }
            }
            J::V(Value::Object(o))
        }
        Shape::Const(c) => J::V(json!({ "const": c })),
        Shape::Enum(vs) => J::V(json!({ "enum": vs })),
        Shape::Array(a) => {
            let mut o = vec![("type".to_string(), J::V(json!("array")))];
            if !a.prefix.is_empty() {
                o.push(("prefixItems".into(), J::A(a.prefix.iter().map(|p| node(g, p)).collect::<Result<_, _>>()?)));
            }
            if let Some(i) = &a.items {
                o.push(("items".into(), node(g, i)?));
            } else if a.items_written {
                // `items: true` evaluates the items (for an `unevaluatedItems` around the array).
                o.push(("items".into(), J::V(json!(true))));
            }
            if let Some(m) = a.min_items {
                o.push(("minItems".into(), J::V(json!(m))));
            }
            if let Some(m) = a.max_items {
                o.push(("maxItems".into(), J::V(json!(m))));
            }
            if a.unique {
                o.push(("uniqueItems".into(), J::V(json!(true))));
            }
            if let Some(c) = &a.contains {
                o.push(("contains".into(), node(g, &c.node)?));
                if c.min != 1 {
                    o.push(("minContains".into(), J::V(json!(c.min))));
                }
                if let Some(m) = c.max {
                    o.push(("maxContains".into(), J::V(json!(m))));
                }
            }
            J::O(o)
        }
        Shape::Object(o) if is_bare_map(o) => J::V(json!({"type": "object"})),
        Shape::Object(_) | Shape::Union(_) => {
            return Err(EmitError::at(&n.origin, "an object or a union that is not a named type"))
        }
        Shape::Nullable(inner) => {
            J::O(vec![("anyOf".into(), J::A(vec![J::V(json!({"type": "null"})), node(g, inner)?]))])
        }
        Shape::Kinds(ms) | Shape::AnyOf(ms) => {
            J::O(vec![("anyOf".into(), J::A(ms.iter().map(|m| node(g, m)).collect::<Result<_, _>>()?))])
        }
        Shape::AllOf(ms) => {
            J::O(vec![("allOf".into(), J::A(ms.iter().map(|m| node(g, m)).collect::<Result<_, _>>()?))])
        }
        Shape::OneOf(ms) => {
            J::O(vec![("oneOf".into(), J::A(ms.iter().map(|m| node(g, m)).collect::<Result<_, _>>()?))])
        }
        Shape::Not(inner) => J::O(vec![("not".into(), node(g, inner)?)]),
        Shape::Cond { cond, then, otherwise } => {
            let mut o = vec![("if".to_string(), node(g, cond)?)];
            if let Some(t) = then {
                o.push(("then".into(), node(g, t)?));
            }
            if let Some(e) = otherwise {
                o.push(("else".into(), node(g, e)?));
            }
            J::O(o)
        }
        Shape::Unevaluated { inner, rest, items } => {
            let kw = unevaluated_keyword(*items);
            J::O(vec![("allOf".into(), J::A(vec![node(g, inner)?])), (kw.into(), node(g, rest)?)])
        }
        Shape::Dependent { property, then } => {
            J::O(vec![("dependentSchemas".into(), J::O(vec![(property.clone(), node(g, then)?)]))])
        }
    })
}

fn object(g: &Gen<'_>, id: TypeId, o: &ObjectShape) -> Result<J, EmitError> {
    let mut out = vec![("type".to_string(), J::V(json!("object")))];
    let props =
        o.fields.iter().map(|f| Ok((f.name.clone(), node(g, &f.node)?))).collect::<Result<Vec<_>, EmitError>>()?;
    out.push(("properties".into(), J::O(props)));
    let required: Vec<&String> =
        o.fields.iter().filter(|f| f.required).map(|f| &f.name).chain(&o.required_only).collect();
    if !required.is_empty() {
        out.push(("required".into(), J::V(json!(required))));
    }
    match &o.additional {
        Additional::Closed => out.push(("additionalProperties".into(), J::V(json!(false)))),
        Additional::Schema(n) => out.push(("additionalProperties".into(), node(g, n)?)),
        Additional::Open | Additional::Strip if o.additional_written => {
            out.push(("additionalProperties".into(), J::V(json!(true))))
        }
        Additional::Open | Additional::Strip => {}
    }
    if !o.pattern_properties.is_empty() {
        let pp = o
            .pattern_properties
            .iter()
            .map(|(p, n)| Ok((p.source.clone(), node(g, n)?)))
            .collect::<Result<_, EmitError>>()?;
        out.push(("patternProperties".into(), J::O(pp)));
    }
    if let Some(n) = &o.property_names {
        out.push(("propertyNames".into(), node(g, n)?));
    }
    if let Some(m) = o.min_properties {
        out.push(("minProperties".into(), J::V(json!(m))));
    }
    if let Some(m) = o.max_properties {
        out.push(("maxProperties".into(), J::V(json!(m))));
    }
    if !o.dependent_required.is_empty() {
        let d: serde_json::Map<String, Value> =
            o.dependent_required.iter().map(|(k, ds)| (k.clone(), json!(ds))).collect();
        out.push(("dependentRequired".into(), J::V(Value::Object(d))));
    }
    if let Some(p) = g.m.protocol.as_ref().filter(|p| p.envelope == id) {
        let rules = role_rules(g.m, p);
        if !rules.is_empty() {
            out.push(("allOf".into(), J::V(Value::Array(rules))));
        }
    }
    Ok(J::O(out))
}

/// The role rules as `if`/`then`, one per rule that can fail, in [`Protocol::role_rules`] order.
fn role_rules(m: &Model, p: &Protocol) -> Vec<Value> {
    let (ev, t, role) = (&p.union_field, p.discriminator(m), &p.role_field);
    let all = |allowed: &[String]| p.roles.iter().all(|r| allowed.contains(r));
    let mut out = Vec::new();
    for e in &p.events {
        let when = |env_req: Option<&str>, ev_req: Option<&str>| {
            let mut ev_required = vec![t.to_string()];
            ev_required.extend(ev_req.map(String::from));
            let mut required = vec![ev.clone()];
            required.extend(env_req.map(String::from));
            json!({
                "properties": { ev: { "properties": { t: { "const": e.tag } }, "required": ev_required } },
                "required": required
            })
        };
        for rule in p.role_rules(e) {
            let (cond, allowed) = match rule {
                RoleRule::Event { allowed } => (when(None, None), allowed),
                RoleRule::EnvelopeField { name, allowed } => (when(Some(name), None), allowed),
                RoleRule::EventField { name, allowed } => (when(None, Some(name)), allowed),
            };
            if !all(allowed) {
                out.push(json!({ "if": cond, "then": { "properties": { role: { "enum": allowed } } } }));
            }
        }
    }
    out
}

/// `impl JsonSchema` for one type (not for aliases: they are their target).
pub(crate) fn json_schema_impl(g: &Gen<'_>, id: TypeId) -> Result<TokenStream, EmitError> {
    let t = g.m.ty(id);
    let ty = g.type_ident(id);
    let mut body = match (&t.node.shape, g.form(id)) {
        (Shape::Object(o), Some(Form::Struct)) => object(g, id, o)?,
        (Shape::Union(u), Some(Form::Union)) => {
            let members = u
                .members
                .iter()
                .map(|mb| {
                    let i = g.type_ident(g.final_id(mb.ty));
                    J::Sub(quote!(#i))
                })
                .collect();
            J::O(vec![("oneOf".into(), J::A(members))])
        }
        (Shape::Enum(vs), Some(Form::StrEnum)) => J::V(json!({"type": "string", "enum": vs})),
        _ => node(g, &t.node)?,
    };
    if let Some(d) = &t.description {
        match &mut body {
            J::O(members) => members.insert(0, ("description".into(), J::V(json!(d)))),
            J::V(Value::Object(o)) => {
                o.insert("description".into(), json!(d));
            }
            _ => {}
        }
    }
    let mut used = false;
    let schema = match &body {
        J::V(Value::Bool(b)) => quote!(::schemars::Schema::from(#b)),
        J::Sub(_) => {
            let tokens = body.tokens(&mut used);
            quote!(::schemars::json_schema!({ "allOf": [#tokens] }))
        }
        other => {
            let tokens = other.tokens(&mut used);
            quote!(::schemars::json_schema!(#tokens))
        }
    };
    let generator = if used { quote!(generator) } else { quote!(_generator) };
    let name = lit(&ty.to_string());
    Ok(quote! {
        #[cfg(feature = "schemars")]
        impl ::schemars::JsonSchema for #ty {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(#name)
            }

            fn json_schema(#generator: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                #schema
            }
        }
    })
}
