//! Emits the TypeScript stream checker `src/stream.ts` of the `session-wire` package.
//!
//! The module's logic is a minijinja template (`generator/templates/ts/stream.ts.j2`, strict undefined
//! behaviour): one interpreter of the protocol's sequence declarations ([`crate::ir::Sequence`], lowered from
//! `x-sequence`), which the module embeds as data, the same declarations the Rust checker ([`crate::stream`])
//! interprets. The template names no event, field or role of any protocol. Data is interpolated with two filters:
//! - `lit`: any value as a JSON literal (a valid TypeScript expression), with U+2028/U+2029 escaped;
//! - `doc`: text for a `/** */` comment, with `*/` broken up and line breaks folded.
//!
//! The rollup's TypeScript type ([`RollupTypes`]) is written from the model too: each declared rollup part with the
//! schema types of the fields it folds, and each listed scope with the types of its key and recorded values.

use std::cell::RefCell;
use std::collections::BTreeSet;

use minijinja::{context, AutoEscape, Environment, UndefinedBehavior};
use serde::Serialize;

use super::ts::js::{ident, type_key, Code};
use super::ts::types::{TsTypes, TypeFacts};
use super::{EmitError, EmitOptions, OutFile};
use crate::ir::sequence::{AttrSource, FieldRef, RollupKind, Scope};
use crate::ir::{pascal_case, Field, Model, Protocol, Shape as Node, TypeId};
use crate::rules::Rule;

const TEMPLATE: &str = include_str!("../../templates/ts/stream.ts.j2");

/// Names the module exports (the package's `index.ts` re-exports them).
pub(crate) const EXPORTS: &[&str] = &[
    "STREAM_RULES",
    "StreamRuleId",
    "StreamRule",
    "StreamError",
    "StreamRecord",
    "SessionRollup",
    "SessionStreamChecker",
    "checkSessionStream",
    "rollupSession",
];

/// Names the module holds of its own besides those it exports: what it imports from the package's other modules
/// and what it declares for itself. A schema type it imports may have none of these names.
pub(crate) const OWN: &[&str] = &[
    "checkEnvelope",
    "validateSessionLine",
    "jsonEqual",
    "readRejected",
    "WireError",
    "WireResult",
    "Obj",
    "Params",
    "FieldRef",
    "Scope",
    "RuleKind",
    "Rule",
    "RollupKind",
    "RollupPart",
    "Sequence",
    "SEQUENCE",
    "ROLE",
    "EV",
    "TAG",
    "TYPE_RULE",
    "fill",
    "isObj",
    "afterBom",
    "shownValue",
    "Msg",
    "get",
    "str",
    "sameRef",
    "selected",
    "Item",
    "ScopeState",
    "REJECTED_KEYS",
    "remember",
    "UNREADABLE",
    "rememberRejectedOpen",
    "consumeRejectedOpen",
    "theOpen",
    "index",
    "openItem",
    "closeItem",
    "clearOpen",
    "firstLinked",
    "inOrder",
    "PartState",
];

#[derive(Serialize)]
struct RuleCx {
    key: String,
    id: &'static str,
    summary: String,
    seed: String,
    pointer: String,
    template: String,
}

/// The protocol's sequence rules as the template lists them.
fn rules(p: &Protocol) -> Vec<RuleCx> {
    p.sequence
        .rules
        .iter()
        .map(|r| RuleCx {
            key: pascal_case(r.id),
            id: r.id,
            summary: r.summary.clone(),
            seed: r.seed.clone(),
            pointer: r.pointer.clone(),
            template: r.message.clone(),
        })
        .collect()
}

/// One member of a rollup object type: its key, TypeScript type and doc line.
#[derive(Serialize)]
struct Member {
    key: String,
    ty: String,
    doc: String,
}

/// The TypeScript types of the rollup's parts, written from the model (each a type expression).
#[derive(Serialize)]
struct RollupTypes {
    /// The schema types these expressions name (imported from `schemas.ts`).
    imports: Vec<String>,
    /// The same types.
    #[serde(skip)]
    imported: Vec<TypeId>,
    /// The declared parts between `messages` and `open`.
    parts: Vec<Member>,
    /// The scopes listed under `open`.
    open: Vec<Member>,
}

impl RollupTypes {
    /// The types, with the schema types named by `names` (`None`: only which types they name matters).
    fn of(m: &Model, p: &Protocol, names: Option<&[Code]>) -> Result<RollupTypes, EmitError> {
        let used: RefCell<BTreeSet<TypeId>> = RefCell::new(BTreeSet::new());
        let name = |id: TypeId| {
            used.borrow_mut().insert(id);
            names.and_then(|n| n.get(id.0)).cloned().unwrap_or_else(|| type_key("never"))
        };
        let facts = TypeFacts::of(m);
        let types = TsTypes::new(m, &facts, &name);
        let ty = |n: &crate::ir::Node| types.ty(n);
        let fields_of = |id: TypeId| -> Vec<&Field> {
            match &m.ty(id).node.shape {
                Node::Object(o) => o.fields.iter().collect(),
                _ => Vec::new(),
            }
        };
        let event_fields = |tag: &str| p.event(tag).map(|e| fields_of(e.ty)).unwrap_or_default();
        // A field read from the envelope or from event `tag`: its type, and whether it may be absent.
        let field = |tag: Option<&str>, f: &FieldRef| -> Result<(String, bool), EmitError> {
            let fields = match f {
                FieldRef::Envelope(_) => fields_of(p.envelope),
                FieldRef::Event(_) => tag.map(event_fields).unwrap_or_default(),
            };
            match fields.into_iter().find(|x| x.name == f.name()) {
                Some(x) => Ok((ty(&x.node)?.to_string(), !x.required)),
                None => Ok(("string".to_string(), true)),
            }
        };
        let disc = p.discriminator(m);
        // The fields of event `tag`, `| null` where one may be absent: every field of a `latest` part (null until
        // an event gives it), an optional one of a `last` part (the last event whole: a required field is always
        // there; helper 116, `clientType` was typed `| null`).
        let record = |tag: &str, whole: bool| -> Result<String, EmitError> {
            let mut parts = Vec::new();
            for f in event_fields(tag).into_iter().filter(|f| f.name != disc) {
                let null = if whole && f.required { "" } else { " | null" };
                parts.push(format!("{}: {}{null}", type_key(&f.name), ty(&f.node)?));
            }
            Ok(braces(&parts))
        };
        let numbers = |keys: &[String], ty: &str| {
            braces(&keys.iter().map(|k| format!("{}: {ty}", type_key(k))).collect::<Vec<_>>())
        };
        let mut parts = Vec::new();
        for part in &p.sequence.rollup {
            let ty = match &part.kind {
                RollupKind::Last { .. } => format!("{} | null", record(&part.event, true)?),
                RollupKind::Latest { .. } => record(&part.event, false)?,
                RollupKind::Count { values, .. } => numbers(values, "number"),
                // A sum past the double range is `null`.
                RollupKind::Sum { fields, .. } => numbers(fields, "number | null"),
            };
            parts.push(Member { key: type_key(&part.name).to_string(), ty, doc: part.description.clone() });
        }
        let scopes = &p.sequence.scopes;
        let key_ty = |s: &Scope| -> Result<String, EmitError> { Ok(field(s.opened_by.as_deref(), &s.key)?.0) };
        let mut open = Vec::new();
        for s in scopes {
            let Some(r) = &s.rollup else { continue };
            let mut members = vec![format!("{}: {}", type_key(s.key.name()), key_ty(s)?)];
            for a in &s.record {
                let t = match &a.from {
                    AttrSource::Field(f) => {
                        let (t, optional) = field(s.opened_by.as_deref(), f)?;
                        if optional {
                            format!("{t} | null")
                        } else {
                            t
                        }
                    }
                    AttrSource::OpenKey(o) => format!("{} | null", key_ty(&scopes[*o])?),
                };
                members.push(format!("{}: {t}", type_key(&a.name)));
            }
            for mk in &s.marks {
                members.push(format!("{}: boolean", type_key(&mk.name)));
            }
            let item = braces(&members);
            let ty = if s.single { format!("{item} | null") } else { format!("{item}[]") };
            open.push(Member { key: type_key(r).to_string(), ty, doc: s.description.clone() });
        }
        let imported: Vec<TypeId> = used.into_inner().into_iter().collect();
        let mut imports: Vec<String> = imported.iter().map(|id| m.ty(*id).names.ts.clone()).collect();
        imports.sort();
        Ok(RollupTypes { imports, imported, parts, open })
    }
}

/// An object type from its members (`Record<string, never>` when there are none: the value is `{}`).
fn braces(parts: &[String]) -> String {
    if parts.is_empty() {
        "Record<string, never>".to_string()
    } else {
        format!("{{ {} }}", parts.join("; "))
    }
}

fn lit(v: minijinja::Value) -> Result<String, minijinja::Error> {
    let s = serde_json::to_string(&v).map_err(|e| {
        minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, "value is not JSON").with_source(e)
    })?;
    Ok(s.replace('\u{2028}', "\\u2028").replace('\u{2029}', "\\u2029"))
}

fn doc(s: &str) -> String {
    s.replace("*/", "*\\/").replace(['\n', '\r', '\u{2028}', '\u{2029}'], " ")
}

/// The schema types whose TypeScript names the module imports (those the rollup's type names).
///
/// # Errors
/// A type the rollup names that TypeScript cannot express.
pub(crate) fn imported_types(m: &Model, p: &Protocol) -> Result<Vec<TypeId>, EmitError> {
    Ok(RollupTypes::of(m, p, None)?.imported)
}

/// Emits `src/stream.ts` of the TypeScript package of a model with a protocol layer.
///
/// # Errors
/// A template error (a bug in the template).
pub(crate) fn emit(m: &Model, p: &Protocol, opts: &EmitOptions) -> Result<Vec<OutFile>, EmitError> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_keep_trailing_newline(true);
    env.add_filter("lit", lit);
    env.add_filter("doc", doc);
    env.add_template("stream.ts", TEMPLATE)?;
    let header = format!("// {}", opts.generated_by());
    let idents: Vec<Code> = m.types.iter().map(|t| ident(&t.names.ts)).collect::<Result<_, _>>()?;
    let out = env.get_template("stream.ts")?.render(context! {
        header,
        package => m.package.npm_name,
        rules => rules(p),
        sequence => serde_json::to_value(&p.sequence).map_err(|e| {
            minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, "sequence is not JSON").with_source(e)
        })?,
        role_field => p.role_field,
        union_field => p.union_field,
        tag => p.discriminator(m),
        type_rule => Rule::Type.id(),
        unreadable => [Rule::BlankLine, Rule::InvalidUtf8, Rule::MalformedJson].map(Rule::id),
        types => RollupTypes::of(m, p, Some(&idents))?,
    })?;
    Ok(vec![OutFile::new("src/stream.ts", out)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_doc_text_cannot_break_out() {
        assert_eq!(lit(minijinja::Value::from("a\"b\u{2028}`${x}`")).unwrap(), "\"a\\\"b\\u2028`${x}`\"");
        assert_eq!(doc("ends */ here\nnext"), "ends *\\/ here next");
    }

    #[test]
    fn every_rule_is_in_the_module_once() {
        let m = crate::load::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema"))
            .expect("schema loads");
        let files = emit(&m, m.protocol.as_ref().expect("a protocol"), &EmitOptions::default()).expect("emits");
        let ts = &files[0].contents;
        let p = m.protocol.as_ref().expect("a protocol");
        assert!(p.sequence.rules.len() >= 19);
        for r in &p.sequence.rules {
            assert_eq!(ts.matches(&format!("id: \"{}\",\n", r.id)).count(), 1, "{}", r.id);
            assert!(ts.contains(&format!("{}: \"{}\"", pascal_case(r.id), r.id)), "{}", r.id);
        }
        assert!(ts.starts_with("// @generated by `wiregen generate`"));
    }
}
