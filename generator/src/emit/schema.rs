//! The bundled standard schema: one self-contained JSON Schema 2020-12 document for the whole package, read from
//! the [`Model`], so that any validator (ajv strict, Python `jsonschema`, the `jsonschema` crate) gives the
//! engine's verdict without wiregen.
//!
//! - **File**: `<stem>.schema.json`, the stem being the crate name (`x-package`), except that the session
//!   protocol's package (`session-wire`) keeps its first name, `session-protocol` ([`stem`]).
//! - **Root**: the document root is the model's root type ([`Model::root`]); `$defs` holds every type by a stable
//!   name ([`def_names`]: the base name, and for an event of the protocol `<base>Event`), the root's entry being
//!   `{"$ref": "#"}`. A package without a root type has only `$defs` at its root.
//! - **Nodes** are written by [`keywords`] (shared with the Rust crate's `JsonSchema` impls): a reference to a
//!   type is `#/$defs/<name>` (`#` for the document's root).
//!
//! Validation only: what a parser does with unknown keys (`x-unknown-keys: strip`) is not a verdict, and the
//! strict-id check (`x-strict-pattern`) is a mode of wiregen's checkers that the standard schema leaves out.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::{EmitError, EmitOptions, OutFile};
use crate::ir::*;

pub(crate) mod keywords;

use keywords::{is_plain, Keywords};

/// The JSON Schema dialect of every document this emitter writes.
const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// The session protocol's package keeps the file names it had before packages were general.
const FIRST_PACKAGE: (&str, &str) = ("session-wire", "session-protocol");

/// The stem of the package's file names (`<stem>.schema.json`, `<stem>.md`): the crate name (`x-package`), any
/// character other than an ASCII letter, digit, `-` or `_` replaced by `-`; the session protocol's package,
/// `session-wire`, keeps its first name, `session-protocol`.
pub(crate) fn stem(m: &Model) -> String {
    if m.package.crate_name == FIRST_PACKAGE.0 {
        return FIRST_PACKAGE.1.to_string();
    }
    let s: String = m
        .package
        .crate_name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' })
        .collect();
    if s.is_empty() {
        "schema".into()
    } else {
        s
    }
}

/// File name of the bundled schema inside `schema/`.
pub(crate) fn file_name(m: &Model) -> String {
    format!("{}.schema.json", stem(m))
}

/// Emits the bundled schema.
///
/// # Errors
/// When two types would have the same `$defs` name.
pub(crate) fn emit_model(m: &Model, opts: &EmitOptions) -> Result<Vec<OutFile>, EmitError> {
    Ok(vec![OutFile::new(file_name(m), pretty(&bundle(m, opts)?))])
}

/// A schema document as the emitter writes it: pretty-printed, with a final newline.
pub(crate) fn pretty(v: &Value) -> String {
    let mut text = serde_json::to_string_pretty(v).unwrap_or_default();
    text.push('\n');
    text
}

/// The bundled schema as a JSON value.
///
/// # Errors
/// When two types would have the same `$defs` name.
pub(crate) fn bundle(m: &Model, opts: &EmitOptions) -> Result<Value, EmitError> {
    let names = def_names(m)?;
    let mut w = Writer::new(m, &names, m.root);
    let mut root = Map::new();
    root.insert("$schema".into(), json!(DIALECT));
    // A root `$id` should be absolute (draft 2020-12, section 8.2.1; some validators refuse another): without a base
    // URI from the package root's `$id`, the document has none, and its references are fragments either way.
    if !m.base_uri.is_empty() {
        root.insert("$id".into(), json!(format!("{}{}", m.base_uri, file_name(m))));
    }
    root.insert("$comment".into(), json!(opts.generated_by()));
    root.insert("title".into(), json!(m.title));
    match m.root {
        Some(id) => {
            // The document's title is the package's.
            let mut body = w.keywords.type_body(id);
            body.remove("title");
            root.append(&mut w.render(body));
        }
        None if !m.description.is_empty() => {
            root.insert("description".into(), json!(m.description));
        }
        None => {}
    }
    let mut defs = Map::new();
    for id in def_order(m, &names) {
        let body = if Some(id) == m.root { json!({ "$ref": "#" }) } else { Value::Object(w.type_body(id)) };
        defs.insert(names.get(id.0).cloned().unwrap_or_default(), body);
    }
    root.insert("$defs".into(), Value::Object(defs));
    Ok(Value::Object(root))
}

/// One type as a standalone document: its schema at the root, and in `$defs` every type it refers to (by the
/// bundle's names). `comment` becomes the document's `$comment`.
///
/// # Errors
/// When two types would have the same `$defs` name.
#[cfg(feature = "serve")]
pub(crate) fn standalone(m: &Model, id: TypeId, comment: &str) -> Result<Value, EmitError> {
    let names = def_names(m)?;
    let mut w = Writer::new(m, &names, Some(id));
    let mut root = Map::new();
    root.insert("$schema".into(), json!(DIALECT));
    root.insert("$comment".into(), json!(comment));
    root.append(&mut w.type_body(id));
    let mut defs = Map::new();
    let mut done = BTreeSet::from([id]);
    while let Some(next) = w.referenced.iter().copied().find(|t| !done.contains(t)) {
        done.insert(next);
        let body = w.type_body(next);
        defs.insert(names.get(next.0).cloned().unwrap_or_default(), Value::Object(body));
    }
    if !defs.is_empty() {
        defs.sort_keys();
        root.insert("$defs".into(), Value::Object(defs));
    }
    Ok(Value::Object(root))
}

/// Writes the schemas of one document whose root is `root`: the types' keywords, references by `$defs` name.
struct Writer<'m> {
    keywords: Keywords<'m>,
    names: &'m [String],
    root: Option<TypeId>,
    /// Types referred to by `$ref` so far, in the order met.
    referenced: Vec<TypeId>,
}

impl<'m> Writer<'m> {
    fn new(m: &'m Model, names: &'m [String], root: Option<TypeId>) -> Self {
        Writer { keywords: Keywords::new(m, root), names, root, referenced: Vec::new() }
    }

    fn type_body(&mut self, id: TypeId) -> Map<String, Value> {
        let body = self.keywords.type_body(id);
        self.render(body)
    }

    /// A schema as JSON, its references by `$defs` name (`#` for the root), each noted in `referenced`.
    fn render(&mut self, s: keywords::Schema) -> Map<String, Value> {
        let (names, root, referenced) = (self.names, self.root, &mut self.referenced);
        s.into_map(&mut |id| {
            if Some(id) == root {
                return "#".into();
            }
            if !referenced.contains(&id) {
                referenced.push(id);
            }
            format!("#/$defs/{}", names.get(id.0).map_or("", String::as_str))
        })
    }
}

/// The `$defs` name of every type, by type index: the base name; an event of the protocol is `<base>Event`
/// (`TextEvent`), as the bundle has always named them.
///
/// # Errors
/// Two types with the same name (an event `Text` and a type `TextEvent`), located at the second.
pub(crate) fn def_names(m: &Model) -> Result<Vec<String>, EmitError> {
    let events: BTreeSet<TypeId> = m.protocol.iter().flat_map(|p| p.events.iter().map(|e| e.ty)).collect();
    let mut seen: BTreeMap<String, TypeId> = BTreeMap::new();
    let mut out = Vec::with_capacity(m.types.len());
    for (i, t) in m.types.iter().enumerate() {
        let name = if events.contains(&TypeId(i)) { format!("{}Event", t.names.base) } else { t.names.base.clone() };
        if let Some(prev) = seen.insert(name.clone(), TypeId(i)) {
            let other = m.ty(prev);
            return Err(EmitError::at(
                &t.origin,
                format!(
                    "this type and the one at {}#{} would both be `$defs/{name}` in the bundled schema; rename one \
                     with `x-name`",
                    other.origin.file, other.origin.pointer
                ),
            ));
        }
        out.push(name);
    }
    Ok(out)
}

/// The order of `$defs`: the protocol's event union and its events in union order; then objects and unions, then
/// enums, then every other type (the plain ones, and the root's entry), each group by name.
fn def_order(m: &Model, names: &[String]) -> Vec<TypeId> {
    let mut out: Vec<TypeId> = Vec::new();
    if let Some(p) = &m.protocol {
        out.push(p.union);
        out.extend(p.events.iter().map(|e| e.ty));
        // (A hand-built model may name types it does not hold.)
        out.retain(|id| id.0 < m.types.len());
        out.dedup();
    }
    let group = |id: TypeId| match &m.ty(id).node.shape {
        _ if Some(id) == m.root => 2,
        s if is_plain(s) => 2,
        Shape::Object(_) | Shape::Union(_) => 0,
        Shape::Enum(_) => 1,
        _ => 2,
    };
    let mut rest: Vec<TypeId> = (0..m.types.len()).map(TypeId).filter(|id| !out.contains(id)).collect();
    let name = |id: TypeId| names.get(id.0).map_or("", String::as_str);
    rest.sort_by(|a, b| (group(*a), name(*a)).cmp(&(group(*b), name(*b))));
    out.extend(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2() -> Model {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema");
        crate::load::load(&dir).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn events_are_named_with_their_suffix_and_a_clash_is_a_located_refusal() {
        let mut m = v2();
        let names = def_names(&m).unwrap_or_else(|e| panic!("{e}"));
        let text = m.type_named("Text").unwrap_or_else(|| panic!("a Text event"));
        assert_eq!(names[text.0], "TextEvent");
        let mut clash = m.ty(text).clone();
        clash.names.base = "TextEvent".into();
        clash.origin.pointer = "/$defs/textEvent".into();
        m.types.push(clash);
        let err = def_names(&m).map(|_| ()).unwrap_err().to_string();
        assert!(err.contains("/$defs/textEvent") && err.contains("`$defs/TextEvent`"), "{err}");
    }

    #[test]
    fn a_type_the_model_does_not_hold_accepts_nothing() {
        let mut m = v2();
        let usage = m.type_named("Usage").unwrap_or_else(|| panic!("a Usage type"));
        if let Shape::Object(o) = &mut m.types[usage.0].node.shape {
            o.fields[0].node.shape = Shape::Ref(TypeId(10_000));
        }
        let b = bundle(&m, &EmitOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            b["$defs"]["Usage"]["properties"]["inputTokens"],
            json!({ "not": {}, "description": "Input tokens consumed" })
        );
    }

    #[test]
    fn bounds_keep_their_double() {
        use keywords::number;
        assert_eq!(number(0.0, true), json!(0));
        assert_eq!(number(9007199254740991.0, true).to_string(), "9007199254740991");
        assert_eq!(number(0.0, false).to_string(), "0.0");
        assert_eq!(number(0.5, true).to_string(), "0.5");
        assert_eq!(number(1e300, true).to_string(), "1e+300");
    }
}
