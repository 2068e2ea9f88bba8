//! TypeScript types written from the model, for what cannot take its type from Zod: the standalone module (which
//! imports nothing, yet exports type guards) and the Zod schemas of types in a reference cycle (whose constants
//! need a declared type, since TypeScript cannot infer a type from its own initializer).
//!
//! Each type is a supertype of the values its checkers accept (a value that passes is of that type): objects
//! list their declared properties (absent-or-typed when optional) and, unless they drop or reject other keys,
//! an index signature; combinators that a type cannot state (`not`, `if`) are `unknown`.

use super::js::{json_lit, type_key, Code};
use super::EmitError;
use crate::ir::*;

/// The TypeScript type of a node; `name` gives a referenced type's name.
pub(crate) fn ty(n: &Node, name: &dyn Fn(TypeId) -> Code) -> Result<Code, EmitError> {
    let s = match &n.shape {
        Shape::Any | Shape::Not(_) | Shape::Cond { .. } | Shape::Dependent { .. } => "unknown".to_string(),
        Shape::Never => "never".to_string(),
        Shape::Ref(id) => name(*id).to_string(),
        Shape::Null => "null".to_string(),
        Shape::Boolean => "boolean".to_string(),
        Shape::String(_) => "string".to_string(),
        Shape::Number(_) => "number".to_string(),
        Shape::Const(v) => literal(v).map_or_else(|| "unknown".to_string(), |c| c.to_string()),
        Shape::Enum(values) => {
            let lits: Option<Vec<Code>> = values.iter().map(literal).collect();
            match lits {
                Some(l) if !l.is_empty() => Code::join(&l, " | ").to_string(),
                _ => "unknown".to_string(),
            }
        }
        Shape::Array(a) => {
            let rest = match a.items.as_deref() {
                None => Some("unknown".to_string()),
                Some(Node { shape: Shape::Never, .. }) => None,
                Some(n) => Some(ty(n, name)?.to_string()),
            };
            if a.prefix.is_empty() {
                match rest {
                    Some(r) => format!("({r})[]"),
                    None => "[]".to_string(),
                }
            } else {
                let mut parts = Vec::new();
                for p in &a.prefix {
                    parts.push(format!("({})?", ty(p, name)?));
                }
                if let Some(r) = rest {
                    parts.push(format!("...({r})[]"));
                }
                format!("[{}]", parts.join(", "))
            }
        }
        Shape::Object(o) => {
            let mut parts = Vec::new();
            for f in &o.fields {
                let opt = if f.required { "" } else { "?" };
                parts.push(format!("{}{opt}: {}", type_key(&f.name), ty(&f.node, name)?));
            }
            for r in &o.required_only {
                if !o.fields.iter().any(|f| &f.name == r) {
                    parts.push(format!("{}: unknown", type_key(r)));
                }
            }
            let index = match &o.additional {
                Additional::Closed | Additional::Strip if o.pattern_properties.is_empty() => None,
                Additional::Schema(v) if o.fields.is_empty() && o.pattern_properties.is_empty() => {
                    Some(ty(v, name)?.to_string())
                }
                _ => Some("unknown".to_string()),
            };
            if let Some(i) = index {
                parts.push(format!("[key: string]: {i}"));
            }
            if parts.is_empty() {
                "{}".to_string()
            } else {
                format!("{{ {} }}", parts.join("; "))
            }
        }
        Shape::Union(u) => {
            let members: Vec<String> = u.members.iter().map(|x| name(x.ty).to_string()).collect();
            if members.is_empty() {
                "never".to_string()
            } else {
                members.join(" | ")
            }
        }
        Shape::Nullable(inner) => format!("({}) | null", ty(inner, name)?),
        Shape::Kinds(members) => {
            let mut out = Vec::new();
            for x in members {
                out.push(format!("({})", ty(x, name)?));
            }
            out.join(" | ")
        }
        // The properties it does not evaluate are checked, not typed: the inner schema's type.
        Shape::Unevaluated { inner, .. } => ty(inner, name)?.to_string(),
        Shape::AllOf(members) => {
            let mut out = Vec::new();
            for x in members {
                let t = ty(x, name)?.to_string();
                if t != "unknown" {
                    out.push(format!("({t})"));
                }
            }
            if out.is_empty() {
                "unknown".to_string()
            } else {
                out.join(" & ")
            }
        }
        Shape::AnyOf(members) | Shape::OneOf(members) => {
            let mut out = Vec::new();
            for x in members {
                let t = ty(x, name)?.to_string();
                if t == "unknown" {
                    return Ok(Code::from_pieces("unknown".into()));
                }
                out.push(format!("({t})"));
            }
            if out.is_empty() {
                "never".to_string()
            } else {
                out.join(" | ")
            }
        }
    };
    Ok(Code::from_pieces(s))
}

/// A literal type for a JSON scalar (`"a"`, `1`, `true`, `null`); `None` for arrays, objects and numbers a literal
/// type cannot spell.
fn literal(v: &serde_json::Value) -> Option<Code> {
    match v {
        serde_json::Value::Number(n) => {
            let f = n.as_f64()?;
            // A literal type of a number is written with its shortest round-trip text (`1`, `0.5`, `1e-7`).
            (f.is_finite()).then(|| Code::from_pieces(format!("{f:?}").trim_end_matches(".0").to_string()))
        }
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => None,
        other => Some(json_lit(other)),
    }
}
