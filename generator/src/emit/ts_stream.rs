//! Emits the TypeScript stream checker `src/stream.ts` of the `session-wire` package.
//!
//! The module's logic is a minijinja template (`generator/templates/ts/stream.ts.j2`, strict undefined
//! behaviour); every rule id, summary, seed sentence, pointer and message template comes from the stream rule
//! catalogue ([`crate::stream::rules`]), the vocabulary from [`crate::stream::rules::vocab`], and the rollup's
//! fields ([`crate::stream::Shape`]) and the protocol's names from the model ([`Model`], [`Protocol`]), so nothing
//! is retyped per language. Data is interpolated
//! with two filters:
//! - `lit`: any value as a JSON literal (a valid TypeScript expression), with U+2028/U+2029 escaped;
//! - `doc`: text for a `/** */` comment, with `*/` broken up and line breaks folded.
//!
//! The rollup's TypeScript type ([`RollupTypes`]) is written from the model too: the control and configuration
//! fields with their schema types, one key per `turn-end` status and usage field, and the model's types of the ids
//! and names the open state holds (`string` where the protocol has no such field).

use std::cell::RefCell;
use std::collections::BTreeSet;

use minijinja::{context, AutoEscape, Environment, UndefinedBehavior};
use serde::Serialize;

use super::ts::js::{ident, type_key, Code};
use super::ts::types::ty;
use super::{EmitError, EmitOptions, OutFile};
use crate::ir::{pascal_case, Field, Model, Protocol, Shape as Node, TypeId};
use crate::stream::rules::{vocab, StreamRule};
use crate::stream::Shape;

const TEMPLATE: &str = include_str!("../../templates/ts/stream.ts.j2");

#[derive(Serialize)]
struct RuleCx {
    key: String,
    id: &'static str,
    summary: &'static str,
    seed: &'static str,
    pointer: &'static str,
    template: &'static str,
}

/// The stream rule catalogue as the emitters see it (also what the markdown reference can list).
fn rules() -> Vec<RuleCx> {
    StreamRule::ALL
        .iter()
        .map(|r| RuleCx {
            key: pascal_case(r.id()),
            id: r.id(),
            summary: r.summary(),
            seed: r.seed(),
            pointer: r.pointer(),
            template: r.template(),
        })
        .collect()
}

/// The TypeScript types of the rollup's parts, written from the model (each a type expression).
#[derive(Serialize)]
struct RollupTypes {
    /// The schema types these expressions name (imported from `schemas.ts`).
    imports: Vec<String>,
    /// `session-control-changed`'s fields: `{ clientType: SessionClientType | null; ... }`.
    control: String,
    /// `agent-configuration-changed`'s fields, each `| null`.
    config: String,
    /// One count per `turn-end` status.
    turns: String,
    /// One sum per numeric usage field.
    usage: String,
    /// The envelope's turn id.
    turn: String,
    /// The envelope's subagent id.
    subagent: String,
    /// `tool-call-start`'s call id and tool name.
    call: String,
    name: String,
    /// `permission-request`'s tool name.
    tool_name: String,
    /// `subagent-start`'s id and title.
    agent_id: String,
    title: String,
}

impl RollupTypes {
    fn of(m: &Model, p: &Protocol) -> Result<RollupTypes, EmitError> {
        let idents: Vec<Code> = m.types.iter().map(|t| ident(&t.names.ts)).collect::<Result<_, _>>()?;
        let used: RefCell<BTreeSet<String>> = RefCell::new(BTreeSet::new());
        let name = |id: TypeId| match idents.get(id.0) {
            Some(c) => {
                used.borrow_mut().insert(c.to_string());
                c.clone()
            }
            None => type_key("never"),
        };
        let disc = p.discriminator(m);
        let fields_of = |id: TypeId| -> Vec<&Field> {
            match &m.ty(id).node.shape {
                Node::Object(o) => o.fields.iter().filter(|f| f.name != disc).collect(),
                _ => Vec::new(),
            }
        };
        let event_fields = |tag: &str| p.event(tag).map(|e| fields_of(e.ty)).unwrap_or_default();
        // The type of one field of an event (or of the envelope, `tag` None), `string` when there is none.
        let field = |tag: Option<&str>, f: &str| -> Result<String, EmitError> {
            let fields = match tag {
                Some(t) => event_fields(t),
                None => fields_of(p.envelope),
            };
            match fields.into_iter().find(|x| x.name == f) {
                Some(x) => Ok(ty(&x.node, &name)?.to_string()),
                None => Ok("string".to_string()),
            }
        };
        let record = |fields: Vec<&Field>| -> Result<String, EmitError> {
            let mut parts = Vec::new();
            for f in fields {
                parts.push(format!("{}: {} | null", type_key(&f.name), ty(&f.node, &name)?));
            }
            Ok(braces(&parts))
        };
        let shape = Shape::of(m, p);
        let counts =
            |keys: &[String]| braces(&keys.iter().map(|k| format!("{}: number", type_key(k))).collect::<Vec<_>>());
        let out = RollupTypes {
            control: record(event_fields(vocab::SESSION_CONTROL_CHANGED))?,
            config: record(event_fields(vocab::AGENT_CONFIGURATION_CHANGED))?,
            turns: counts(&shape.statuses),
            usage: counts(&shape.usage_fields),
            turn: field(None, vocab::TURN)?,
            subagent: field(None, vocab::SUBAGENT)?,
            call: field(Some(vocab::TOOL_CALL_START), vocab::CALL)?,
            name: field(Some(vocab::TOOL_CALL_START), vocab::NAME)?,
            tool_name: field(Some(vocab::PERMISSION_REQUEST), vocab::TOOL_NAME)?,
            agent_id: field(Some(vocab::SUBAGENT_START), vocab::AGENT_ID)?,
            title: field(Some(vocab::SUBAGENT_START), vocab::TITLE)?,
            imports: Vec::new(),
        };
        Ok(RollupTypes { imports: used.into_inner().into_iter().collect(), ..out })
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
    let vocab: Vec<(&str, &str)> = vocab::ALL.to_vec();
    let header = format!("// {}", opts.generated_by());
    let out = env.get_template("stream.ts")?.render(context! {
        header,
        package => m.package.npm_name,
        rules => rules(),
        vocab,
        role_field => p.role_field,
        union_field => p.union_field,
        tag => p.discriminator(m),
        shape => Shape::of(m, p),
        types => RollupTypes::of(m, p)?,
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
        for r in StreamRule::ALL {
            assert_eq!(ts.matches(&format!("id: \"{}\"", r.id())).count(), 1, "{}", r.id());
            assert!(ts.contains(&format!("{}: \"{}\"", pascal_case(r.id()), r.id())), "{}", r.id());
        }
        assert!(ts.starts_with("// @generated by `cargo run -p wiregen -- generate`"));
    }
}
