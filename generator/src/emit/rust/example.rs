//! The example program (`examples/basic.rs`, also the crate docs' doctest), built from the schema's own event
//! examples: parse an envelope, match on every event type, build one with the constructor, and show a refusal.

use proc_macro2::{Literal, TokenStream};
use quote::quote;
use serde_json::{Map, Value};

use super::{field_ident, lit, type_ident, variant_ident, Layout, Names};
use crate::emit::EmitError;
use crate::legacy::ir::{Field, Protocol, Ty, Variant};

/// A role that may send `v` with every field its example uses.
fn sender<'p>(p: &'p Protocol, v: &Variant, example: &Value) -> Option<&'p String> {
    p.roles().iter().find(|r| {
        v.roles.contains(r) && v.fields.iter().all(|f| example.get(&f.name).is_none() || Protocol::field_allowed(f, r))
    })
}

/// A sample value for a required envelope field.
fn sample(f: &Field) -> Value {
    match &f.ty {
        Ty::String(s) => {
            let mut v: String = f.name.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_lowercase();
            v.push('1');
            while (v.chars().count() as u64) < s.min_length.unwrap_or(0) {
                v.push('0');
            }
            Value::String(v)
        }
        Ty::Integer { minimum, maximum } => Value::from(1_739_347_200_000_i64.clamp(*minimum, *maximum)),
        Ty::Number { minimum } => Value::from(minimum.unwrap_or(0.0).max(0.0)),
        Ty::Boolean => Value::Bool(false),
        _ => Value::Object(Map::new()),
    }
}

/// A Rust expression of the type of `ty` holding the JSON value `v`.
fn literal(p: &Protocol, n: &Names, ty: &Ty, v: &Value) -> Result<TokenStream, EmitError> {
    let bad = || EmitError::Unsupported(format!("example value {v} does not fit {ty:?}"));
    Ok(match ty {
        Ty::String(_) => {
            let s = lit(v.as_str().ok_or_else(bad)?);
            quote!(#s.to_owned())
        }
        Ty::Integer { .. } => {
            let i = v.as_i64().ok_or_else(bad)?;
            let l = Literal::i64_unsuffixed(i.abs());
            if i < 0 {
                quote!(-#l)
            } else {
                quote!(#l)
            }
        }
        Ty::Number { .. } => {
            let l = Literal::f64_unsuffixed(v.as_f64().ok_or_else(bad)?);
            quote!(#l)
        }
        Ty::Boolean => {
            let b = v.as_bool().ok_or_else(bad)?;
            quote!(#b)
        }
        Ty::Enum(name) => {
            let t = type_ident(name);
            let i = variant_ident(v.as_str().ok_or_else(bad)?)?;
            quote!(#t::#i)
        }
        Ty::Object(name) => {
            let o =
                p.objects.get(name).ok_or_else(|| EmitError::Unsupported(format!("object `{name}` is not defined")))?;
            struct_literal(p, n, &type_ident(&o.name), &o.fields, v)?
        }
        Ty::AnyObject => {
            let entries = v.as_object().ok_or_else(bad)?.iter().map(|(k, val)| {
                let k = lit(k);
                let val = lit(&val.to_string());
                quote!((#k.to_owned(), ::serde_json::from_str(#val)?))
            });
            quote!(::serde_json::Map::from_iter([#(#entries),*]))
        }
        Ty::Union => return Err(bad()),
    })
}

fn struct_literal(
    p: &Protocol,
    n: &Names,
    ty: &proc_macro2::Ident,
    fields: &[Field],
    v: &Value,
) -> Result<TokenStream, EmitError> {
    let mut inits = Vec::new();
    for f in fields {
        let i = field_ident(&f.name)?;
        inits.push(match (v.get(&f.name), f.required) {
            (Some(x), true) => {
                let e = literal(p, n, &f.ty, x)?;
                quote!(#i: #e)
            }
            (Some(x), false) => {
                let e = literal(p, n, &f.ty, x)?;
                quote!(#i: Some(#e))
            }
            (None, false) => quote!(#i: None),
            (None, true) => return Err(EmitError::Unsupported(format!("example of `{ty}` lacks `{}`", f.name))),
        });
    }
    Ok(quote!(#ty { #(#inits),* }))
}

/// Comments of the example program, by marker number.
const COMMENTS: &[&str] = &[
    "Parse one line of a stream; a broken rule comes back as an `Error` with a rule id and a pointer.",
    "Build a message: the constructor fills in the id and the time, then checks the role rules.",
    "The constructor refuses what the protocol forbids, with the rule id `wiregen validate` reports.",
];

/// The example program as formatted source: `comment!(N)` markers become the `//` comment `COMMENTS[N]` after a
/// blank line (prettyplease keeps no comments).
pub(super) fn source(p: &Protocol, n: &Names, layout: Layout) -> Result<String, EmitError> {
    let code = super::render(main(p, n)?, layout)?;
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

fn main(p: &Protocol, n: &Names) -> Result<TokenStream, EmitError> {
    let env = &n.envelope;
    let event = &n.event;
    let role_ty = type_ident(&p.role_enum);
    let Some((v, example, role)) =
        p.union.variants.iter().find_map(|v| v.examples.first().and_then(|ex| sender(p, v, ex).map(|r| (v, ex, r))))
    else {
        return Err(EmitError::Unsupported("no event has an example to build the example program from".into()));
    };
    // One line of a stream: the required envelope fields, the role, and the event's schema example.
    let mut msg = Map::new();
    for f in &p.envelope.fields {
        if f.name == p.role_field {
            msg.insert(f.name.clone(), Value::String(role.clone()));
        } else if f.name == p.union_field {
            msg.insert(f.name.clone(), example.clone());
        } else if f.required {
            msg.insert(f.name.clone(), sample(f));
        }
    }
    let line_text = serde_json::to_string(&Value::Object(msg)).map_err(|e| EmitError::Unsupported(e.to_string()))?;
    let line: Literal = if line_text.contains("\"#") {
        lit(&line_text)
    } else {
        format!("r#\"{line_text}\"#").parse().map_err(|_| EmitError::Unsupported("raw string".into()))?
    };
    let union_getter = field_ident(&p.union_field)?;
    let arms = p.union.variants.iter().map(|v| {
        let t = type_ident(&v.name);
        let tag = lit(&format!("{}: {{ev:?}}", v.tag));
        quote!(#event::#t(ev) => println!(#tag),)
    });
    let vty = type_ident(&v.name);
    let mut obj = example.clone();
    if let Some(o) = obj.as_object_mut() {
        o.remove(&p.union.tag);
    }
    let built = struct_literal(p, n, &vty, &v.fields, &obj)?;
    let role_v = variant_ident(role)?;
    // A refusal: the first event with an example that some role may not send.
    let refusal = p.union.variants.iter().find_map(|v| {
        let ex = v.examples.first()?;
        let other = p.roles().iter().find(|r| !v.roles.contains(r))?;
        Some((v, ex, other))
    });
    let mut imports = vec![vty.clone()];
    let refusal = match refusal {
        Some((v, ex, other)) => {
            let rty = type_ident(&v.name);
            if !imports.contains(&rty) {
                imports.push(rty);
            }
            let mut obj = ex.clone();
            if let Some(o) = obj.as_object_mut() {
                o.remove(&p.union.tag);
            }
            let lit_ev = struct_literal(p, n, &type_ident(&v.name), &v.fields, &obj)?;
            let other_v = variant_ident(other)?;
            let note = lit(&format!("{other} may not send `{}`: {{err}}", v.tag));
            quote! {
                comment!(2);
                let err = #env::new(#role_ty::#other_v, #lit_ev).unwrap_err();
                assert_eq!(err.rule(), Rule::RoleEvent);
                println!(#note);
            }
        }
        None => TokenStream::new(),
    };
    let rule_import = if refusal.is_empty() { TokenStream::new() } else { quote!(, Rule) };
    Ok(quote! {
        use session_wire::{parse_envelope, #env, #event, #role_ty, #(#imports),* #rule_import};

        fn main() -> Result<(), Box<dyn std::error::Error>> {
            comment!(0);
            let env = parse_envelope(#line)?;
            match env.#union_getter() {
                #(#arms)*
            }

            comment!(1);
            let built = #env::new(#role_ty::#role_v, #built)?;
            let text = serde_json::to_string(&built)?;
            println!("{text}");
            let reparsed = parse_envelope(&text)?;
            assert_eq!(reparsed, built);

            #refusal
            Ok(())
        }
    })
}
