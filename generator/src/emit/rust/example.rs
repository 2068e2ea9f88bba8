//! The example program (`examples/<crate>.rs`, also the crate docs' doctest), built from the schema's own event
//! examples: parse an envelope, match on every event type, build one with the constructor, and show a refusal.
//! Every message it uses is checked with the reference engine first, so the program cannot fail; a part that
//! cannot be built from the schema's examples is left out.

use std::collections::BTreeSet;

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};
use serde_json::{Map, Value};

use super::types::{is_bare_map, is_value, tuple_positions, FieldKind, Form, Gen};
use super::{lit, Layout};
use crate::emit::EmitError;
use crate::engine::{Engine, EngineOptions};
use crate::ir::*;

/// The first error the engine reports for an envelope, if any.
fn first_error(g: &Gen<'_>, p: &Protocol, msg: &Value) -> Option<&'static str> {
    let engine = Engine::for_type(g.m.clone(), p.envelope, EngineOptions::default());
    engine.check_value(msg).first().map(|i| i.rule)
}

/// A sample value for a required envelope property that is not filled by the constructor's caller.
fn sample(m: &Model, f: &Field) -> Option<Value> {
    match m.resolve(&f.node.shape) {
        Shape::String(s) => {
            let mut v: String = f.name.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_lowercase();
            v.push('1');
            while (v.chars().count() as u64) < s.min_length.unwrap_or(0) {
                v.push('0');
            }
            Some(Value::String(v))
        }
        Shape::Number(_) => Some(Value::from(1_739_347_200_000_u64)),
        Shape::Boolean => Some(Value::Bool(false)),
        _ => None,
    }
}

/// A Rust expression of the type of `node` holding the JSON value `v`, recording the types it names.
fn literal(g: &Gen<'_>, node: &Node, v: &Value, names: &mut BTreeSet<Ident>) -> Option<TokenStream> {
    Some(match (&node.shape, v) {
        (Shape::Ref(id), _) => {
            let f = g.final_id(*id);
            let t = g.m.ty(f);
            match (g.form(f)?, &t.node.shape) {
                (Form::Struct, Shape::Object(o)) => struct_literal(g, f, o, v, names)?,
                (Form::StrEnum, Shape::Enum(values)) => {
                    let i = values.iter().position(|x| x == v)?;
                    let variant = Gen::enum_variants(values).into_iter().nth(i)?;
                    let ty = g.type_ident(f);
                    names.insert(ty.clone());
                    quote!(#ty::#variant)
                }
                (Form::Newtype, _) => {
                    let inner = literal(g, &t.node, v, names)?;
                    let ty = g.type_ident(f);
                    if ty == g.ty(node).to_string() {
                        names.insert(ty.clone());
                        quote!(#ty(#inner))
                    } else {
                        inner
                    }
                }
                _ => return None,
            }
        }
        (Shape::String(_), Value::String(s)) => {
            let l = lit(s);
            quote!(#l.to_owned())
        }
        // An `enum` of numbers or of booleans is typed as its values' kind (`Gen::ty`).
        (Shape::Boolean | Shape::Enum(_), Value::Bool(b)) if g.ty(node).to_string() == "bool" => quote!(#b),
        (Shape::Null, Value::Null) => quote!(()),
        (Shape::Number(_) | Shape::Enum(_), Value::Number(_)) if !is_value(&g.ty(node)) => {
            let ty = g.ty(node).to_string();
            match ty.as_str() {
                "u64" => {
                    let l = Literal::u64_unsuffixed(v.as_f64()? as u64);
                    quote!(#l)
                }
                "i64" => {
                    let i = v.as_f64()? as i64;
                    let l = Literal::i64_unsuffixed(i.abs());
                    if i < 0 {
                        quote!(-#l)
                    } else {
                        quote!(#l)
                    }
                }
                _ => super::types::f64_lit(v.as_f64()?),
            }
        }
        (Shape::Nullable(_), Value::Null) => quote!(None),
        (Shape::Nullable(inner), _) => {
            let x = literal(g, inner, v, names)?;
            quote!(Some(#x))
        }
        (Shape::Array(a), Value::Array(items)) if a.prefix.is_empty() => {
            let item = a.items.as_deref()?;
            let xs = items.iter().map(|x| literal(g, item, x, names)).collect::<Option<Vec<_>>>()?;
            quote!(::std::vec![#(#xs),*])
        }
        (Shape::Array(a), Value::Array(items)) if tuple_positions(a).is_some_and(|ps| ps.len() == items.len()) => {
            let xs = a
                .prefix
                .iter()
                .zip(items)
                .map(|(p, x)| {
                    let x = literal(g, p, x, names)?;
                    Some(if g.boxed_position(p) { quote!(::std::boxed::Box::new(#x)) } else { x })
                })
                .collect::<Option<Vec<_>>>()?;
            quote!((#(#xs,)*))
        }
        (Shape::AllOf(parts), _) if g.typed_part(parts).is_some() => literal(g, g.typed_part(parts)?.0, v, names)?,
        (Shape::Object(o), Value::Object(members)) if is_bare_map(o) => {
            let entries = members.iter().map(|(k, x)| {
                let (k, x) = (lit(k), lit(&x.to_string()));
                quote!((#k.to_owned(), ::serde_json::from_str(#x)?))
            });
            quote!(::serde_json::Map::from_iter([#(#entries),*]))
        }
        _ if is_value(&g.ty(node)) => {
            let x = lit(&v.to_string());
            quote!(::serde_json::from_str::<::serde_json::Value>(#x)?)
        }
        _ => return None,
    })
}

fn struct_literal(
    g: &Gen<'_>,
    id: TypeId,
    o: &ObjectShape,
    v: &Value,
    names: &mut BTreeSet<Ident>,
) -> Option<TokenStream> {
    let obj = v.as_object()?;
    let plans = g.field_plans(id, o);
    let mut inits = Vec::new();
    for p in &plans {
        let i = &p.ident;
        let x = obj.get(&p.field.name);
        match &p.kind {
            FieldKind::ConstRequired(_) => {}
            FieldKind::ConstOptional(_) => {
                let present = x.is_some();
                inits.push(quote!(#i: #present));
            }
            FieldKind::Value { boxed } => {
                let e = match x {
                    Some(x) => {
                        let mut e = literal(g, &p.field.node, x, names)?;
                        if *boxed {
                            e = quote!(::std::boxed::Box::new(#e));
                        }
                        if p.field.required {
                            e
                        } else {
                            quote!(Some(#e))
                        }
                    }
                    None if !p.field.required => quote!(None),
                    None => return None,
                };
                inits.push(quote!(#i: #e));
            }
        }
    }
    if g.extra_ty(o).is_some() {
        let declared: BTreeSet<&str> = o.fields.iter().map(|f| f.name.as_str()).collect();
        if obj.keys().any(|k| !declared.contains(k.as_str())) {
            return None;
        }
        let e = Gen::extra_ident(&plans);
        inits.push(quote!(#e: ::std::default::Default::default()));
    }
    let ty = g.type_ident(id);
    names.insert(ty.clone());
    Some(quote!(#ty { #(#inits),* }))
}

/// Comments of the example program, by marker number.
const COMMENTS: &[&str] = &[
    "Parse one line of a stream; a broken rule comes back as an `Error` with a rule id and a pointer.",
    "Build a message: the constructor fills in what the schema fills in, then checks the role rules.",
    "The constructor refuses what the protocol forbids, with the rule id `wiregen validate` reports.",
];

/// The example program as formatted source: `comment!(N)` markers become the `//` comment `COMMENTS[N]` after a
/// blank line (prettyplease keeps no comments).
pub(super) fn source(g: &Gen<'_>, p: &Protocol, layout: Layout) -> Result<String, EmitError> {
    let code = super::render(main(g, p)?, layout)?;
    let mut out = String::new();
    for line in code.lines() {
        let t = line.trim_start();
        let marker =
            t.strip_prefix("comment!(").and_then(|r| r.strip_suffix(");")).and_then(|n| n.parse::<usize>().ok());
        match marker.and_then(|i| COMMENTS.get(i)) {
            Some(text) => {
                if !out.ends_with("{\n") {
                    out.push('\n');
                }
                out.push_str(&line[..line.len() - t.len()]);
                out.push_str("// ");
                out.push_str(text);
                out.push('\n');
            }
            None => {
                out.push_str(line);
                out.push('\n');
                if line.starts_with("use ") {
                    out.push('\n');
                }
            }
        }
    }
    Ok(out)
}

/// The event struct literal of an event's example (without its discriminator), if the example can be one.
fn event_literal(g: &Gen<'_>, ev: &Event, names: &mut BTreeSet<Ident>) -> Option<(TokenStream, Value)> {
    let t = g.m.ty(ev.ty);
    let Shape::Object(o) = &t.node.shape else { return None };
    t.examples.iter().find_map(|ex| Some((struct_literal(g, g.final_id(ev.ty), o, ex, names)?, ex.clone())))
}

/// The envelope of a role and an event, with the required properties the constructor fills.
fn message(g: &Gen<'_>, p: &Protocol, role: &str, ev: &Value, auto: bool) -> Option<Value> {
    let Shape::Object(o) = &g.m.ty(p.envelope).node.shape else { return None };
    let mut msg = Map::new();
    for f in &o.fields {
        if f.name == p.role_field {
            msg.insert(f.name.clone(), Value::String(role.to_string()));
        } else if f.name == p.union_field {
            msg.insert(f.name.clone(), ev.clone());
        } else if f.required {
            let filled = p.auto.iter().any(|(n, _)| *n == f.name);
            if auto && !filled {
                return None;
            }
            msg.insert(f.name.clone(), sample(g.m, f)?);
        }
    }
    Some(Value::Object(msg))
}

fn main(g: &Gen<'_>, p: &Protocol) -> Result<TokenStream, EmitError> {
    let krate = format_ident!("{}", g.m.package.crate_name.replace('-', "_"));
    let env = g.type_ident(p.envelope);
    let event = g.type_ident(g.final_id(p.union));
    let role_ty = g.type_ident(p.role_enum);
    let mut names: BTreeSet<Ident> = BTreeSet::new();
    let union_getter = {
        let Shape::Object(o) = &g.m.ty(p.envelope).node.shape else {
            return Err(EmitError::at(&g.m.ty(p.envelope).origin, "the envelope is not an object"));
        };
        let plans = g.field_plans(p.envelope, o);
        match plans.iter().find(|x| x.field.name == p.union_field) {
            Some(x) => x.ident.clone(),
            None => {
                let at = &g.m.ty(p.envelope).origin;
                return Err(EmitError::at(at, format!("the envelope has no `{}` property", p.union_field)));
            }
        }
    };
    let role_variants = {
        let Shape::Enum(values) = &g.m.ty(p.role_enum).node.shape else {
            return Err(EmitError::at(&g.m.ty(p.role_enum).origin, "the role is not an enum"));
        };
        Gen::enum_variants(values)
    };
    let role_variant = |r: &str| p.roles.iter().position(|x| x == r).and_then(|i| role_variants.get(i).cloned());

    // Parse: the first event example some role may send in a valid envelope.
    let mut parse = TokenStream::new();
    let valid = p.events.iter().find_map(|ev| {
        let t = g.m.ty(ev.ty);
        t.examples.iter().find_map(|ex| {
            p.roles.iter().find_map(|r| {
                let msg = message(g, p, r, ex, false)?;
                first_error(g, p, &msg).is_none().then_some(msg)
            })
        })
    });
    if let Some(msg) = valid {
        let text = serde_json::to_string(&msg).map_err(|e| EmitError::Unsupported(e.to_string()))?;
        let line: Literal = if text.contains("\"#") {
            lit(&text)
        } else {
            format!("r#\"{text}\"#").parse().map_err(|_| EmitError::Unsupported("raw string".into()))?
        };
        let arms = p.events.iter().map(|ev| {
            let v = g.type_ident(g.final_id(ev.ty));
            let tag = lit(&format!("{}: {{ev:?}}", ev.tag));
            quote!(#event::#v(ev) => println!(#tag),)
        });
        names.insert(event.clone());
        parse = quote! {
            comment!(0);
            let env = parse_envelope(#line)?;
            match env.#union_getter() {
                #(#arms)*
            }
        };
    }

    // Build: an event literal the constructor accepts for some role.
    let mut build = TokenStream::new();
    let built = p.events.iter().find_map(|ev| {
        let mut used = BTreeSet::new();
        let (lit_ev, ex) = event_literal(g, ev, &mut used)?;
        let role = p
            .roles
            .iter()
            .find(|r| message(g, p, r, &ex, true).is_some_and(|msg| first_error(g, p, &msg).is_none()))?;
        Some((lit_ev, role_variant(role)?, used))
    });
    if let Some((lit_ev, rv, used)) = built {
        names.extend(used);
        names.extend([env.clone(), role_ty.clone()]);
        build = quote! {
            comment!(1);
            let built = #env::new(#role_ty::#rv, #lit_ev)?;
            let text = serde_json::to_string(&built)?;
            println!("{text}");
            let reparsed = parse_envelope(&text)?;
            assert_eq!(reparsed, built);
        };
    }

    // Refuse: an event literal a role may not send.
    let mut refusal = TokenStream::new();
    let refused = p.events.iter().find_map(|ev| {
        let mut used = BTreeSet::new();
        let (lit_ev, ex) = event_literal(g, ev, &mut used)?;
        let role = p.roles.iter().find(|r| {
            !ev.roles.contains(r)
                && message(g, p, r, &ex, true).is_some_and(|msg| first_error(g, p, &msg) == Some("role-event"))
        })?;
        Some((lit_ev, role.clone(), role_variant(role)?, ev.tag.clone(), used))
    });
    let mut rule_import = TokenStream::new();
    if let Some((lit_ev, role, rv, tag, used)) = refused {
        names.extend(used);
        names.extend([env.clone(), role_ty.clone()]);
        let note = lit(&format!("{role} may not send `{tag}`: {{err}}"));
        rule_import = quote!(, Rule);
        refusal = quote! {
            comment!(2);
            let err = #env::new(#role_ty::#rv, #lit_ev).unwrap_err();
            assert_eq!(err.rule(), Rule::RoleEvent);
            println!(#note);
        };
    }
    let parse_import = if parse.is_empty() && build.is_empty() { TokenStream::new() } else { quote!(parse_envelope,) };
    let names = names.into_iter();
    Ok(quote! {
        use #krate::{#parse_import #(#names),* #rule_import};

        fn main() -> Result<(), Box<dyn std::error::Error>> {
            #parse
            #build
            #refusal
            Ok(())
        }
    })
}
