//! The bundled standard schema: one self-contained JSON Schema 2020-12 document for the whole package, read from
//! the [`Model`], so that any validator (ajv strict, Python `jsonschema`, the `jsonschema` crate) gives the
//! engine's verdict without wiregen.
//!
//! - **File**: `<stem>.schema.json`, the stem being the crate name (`x-package`), except that the session
//!   protocol's package (`session-wire`) keeps its first name, `session-protocol` ([`stem`]).
//! - **Root**: the document root is the model's root type ([`Model::root`]); `$defs` holds every type by a stable
//!   name ([`def_names`]: the base name, and for an event of the protocol `<base>Event`), the root's entry being
//!   `{"$ref": "#"}`. A package without a root type has only `$defs` at its root.
//! - **Nodes** are written as the model has them (the construct table is in the README): a reference to a type
//!   is a `$ref`, except that a plain type (a scalar with its bounds, any value, an open object that declares
//!   nothing) is written in place, as a schema author would; a discriminated union checks the discriminator and
//!   then picks its member with one `if`/`then` per member, so a validator reports inside the member it picked
//!   instead of every member's errors; the protocol's role rules ([`Protocol::role_rules`]) are `if`/`then`s on
//!   the envelope type, wherever it is used.
//!
//! Validation only: what a parser does with unknown keys (`x-unknown-keys: strip`) is not a verdict, and the
//! strict-id check (`x-strict-pattern`) is a mode of wiregen's checkers that the standard schema leaves out.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::{EmitError, EmitOptions, OutFile};
use crate::ir::*;

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
    root.insert("$id".into(), json!(format!("{}{}", m.base_uri, file_name(m))));
    root.insert("$comment".into(), json!(opts.generated_by()));
    root.insert("title".into(), json!(m.title));
    match m.root {
        Some(id) => {
            let mut body = w.type_body(id);
            body.remove("title");
            root.append(&mut body);
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

/// A type written in place where it is used: a scalar with its bounds, any value, or an open object that declares
/// nothing (`{"type": "object"}`).
fn is_plain(s: &Shape) -> bool {
    match s {
        Shape::Any | Shape::Null | Shape::Boolean | Shape::String(_) | Shape::Number(_) => true,
        Shape::Object(o) => {
            o.fields.is_empty()
                && o.required_only.is_empty()
                && matches!(o.additional, Additional::Open | Additional::Strip)
                && o.pattern_properties.is_empty()
                && o.property_names.is_none()
                && o.min_properties.is_none()
                && o.max_properties.is_none()
                && o.dependent_required.is_empty()
        }
        _ => false,
    }
}

/// The JSON kind a member of [`Shape::Kinds`] takes, as the engine decides it (`None`: the engine never picks it).
fn kind_of(m: &Model, s: &Shape) -> Option<&'static str> {
    match s {
        Shape::Null => Some("null"),
        Shape::Boolean => Some("boolean"),
        Shape::Number(_) => Some("number"),
        Shape::String(_) => Some("string"),
        Shape::Array(_) => Some("array"),
        Shape::Object(_) | Shape::Union(_) => Some("object"),
        Shape::Ref(_) => match m.resolve(s) {
            Shape::Ref(_) => None,
            other => kind_of(m, other),
        },
        _ => None,
    }
}

/// Writes schemas for one document whose root is `root`.
struct Writer<'m> {
    m: &'m Model,
    names: &'m [String],
    root: Option<TypeId>,
    /// Types referred to by `$ref` so far, in the order met.
    referenced: Vec<TypeId>,
    /// Discriminators of the unions each type is a member of.
    discriminators: BTreeMap<TypeId, Vec<&'m str>>,
    /// Tags of the protocol's events, by type.
    event_tags: BTreeMap<TypeId, &'m str>,
}

impl<'m> Writer<'m> {
    fn new(m: &'m Model, names: &'m [String], root: Option<TypeId>) -> Self {
        let mut discriminators: BTreeMap<TypeId, Vec<&str>> = BTreeMap::new();
        for t in &m.types {
            if let Shape::Union(u) = &t.node.shape {
                for mem in &u.members {
                    discriminators.entry(mem.ty).or_default().push(&u.discriminator);
                }
            }
        }
        let event_tags = m.protocol.iter().flat_map(|p| p.events.iter().map(|e| (e.ty, e.tag.as_str()))).collect();
        Writer { m, names, root, referenced: Vec::new(), discriminators, event_tags }
    }

    /// The whole schema of a type: its event title, description, body, role rules and examples.
    fn type_body(&mut self, id: TypeId) -> Map<String, Value> {
        let t = self.m.ty(id);
        let mut out = Map::new();
        if let Some(tag) = self.event_tags.get(&id) {
            out.insert("title".into(), json!(tag));
        }
        if let Some(d) = &t.description {
            out.insert("description".into(), json!(d));
        }
        let mut body = match &t.node.shape {
            Shape::Object(o) => self.object(o, Some(id)),
            _ => self.node(&t.node),
        };
        out.append(&mut body);
        if let Some(p) = self.m.protocol.as_ref().filter(|p| p.envelope == id) {
            let mut rules = role_rules(self.m, p);
            if !rules.is_empty() {
                match out.get_mut("allOf") {
                    Some(Value::Array(a)) => a.append(&mut rules),
                    _ => {
                        out.insert("allOf".into(), Value::Array(rules));
                    }
                }
            }
        }
        if !t.examples.is_empty() {
            out.insert("examples".into(), Value::Array(t.examples.clone()));
        }
        out
    }

    /// A reference to a type: `#` for the document's root, the type written in place when it is plain, else
    /// `#/$defs/<name>`.
    fn reference(&mut self, id: TypeId) -> Map<String, Value> {
        if Some(id) == self.root {
            return obj(json!({ "$ref": "#" }));
        }
        let t = self.m.ty(id);
        // A type the model does not hold accepts nothing (`Model::ty`), and is written so.
        if is_plain(&t.node.shape) || id.0 >= self.m.types.len() {
            return self.node(&t.node);
        }
        if !self.referenced.contains(&id) {
            self.referenced.push(id);
        }
        obj(json!({ "$ref": format!("#/$defs/{}", self.names.get(id.0).map_or("", String::as_str)) }))
    }

    /// The schema of a node (without its description).
    fn node(&mut self, n: &Node) -> Map<String, Value> {
        match &n.shape {
            Shape::Any => Map::new(),
            Shape::Never => obj(json!({ "not": {} })),
            Shape::Ref(id) => self.reference(*id),
            Shape::Null => obj(json!({ "type": "null" })),
            Shape::Boolean => obj(json!({ "type": "boolean" })),
            Shape::String(s) => {
                let mut m = obj(json!({ "type": "string" }));
                if let Some(n) = s.min_length {
                    m.insert("minLength".into(), json!(n));
                }
                if let Some(n) = s.max_length {
                    m.insert("maxLength".into(), json!(n));
                }
                if let Some(p) = &s.pattern {
                    m.insert("pattern".into(), json!(p.source));
                }
                m
            }
            Shape::Number(s) => {
                let mut m = obj(json!({ "type": if s.integer { "integer" } else { "number" } }));
                let bounds = [
                    ("minimum", s.minimum),
                    ("exclusiveMinimum", s.exclusive_minimum),
                    ("maximum", s.maximum),
                    ("exclusiveMaximum", s.exclusive_maximum),
                    ("multipleOf", s.multiple_of),
                ];
                for (k, b) in bounds {
                    if let Some(b) = b {
                        m.insert(k.into(), number(b, s.integer));
                    }
                }
                m
            }
            Shape::Const(v) => obj(json!({ "const": v })),
            Shape::Enum(values) => {
                if values.iter().all(Value::is_string) {
                    obj(json!({ "type": "string", "enum": values }))
                } else {
                    obj(json!({ "enum": values }))
                }
            }
            Shape::Array(a) => {
                let mut m = obj(json!({ "type": "array" }));
                if !a.prefix.is_empty() {
                    let items: Vec<Value> = a.prefix.iter().map(|n| Value::Object(self.node(n))).collect();
                    m.insert("prefixItems".into(), Value::Array(items));
                }
                if let Some(n) = &a.items {
                    m.insert("items".into(), Value::Object(self.node(n)));
                } else if a.items_written {
                    // `items: true` evaluates the items (for an `unevaluatedItems` around the array).
                    m.insert("items".into(), json!(true));
                }
                if let Some(n) = a.min_items {
                    m.insert("minItems".into(), json!(n));
                }
                if let Some(n) = a.max_items {
                    m.insert("maxItems".into(), json!(n));
                }
                if a.unique {
                    m.insert("uniqueItems".into(), json!(true));
                }
                if let Some(c) = &a.contains {
                    m.insert("contains".into(), Value::Object(self.node(&c.node)));
                    if c.min != 1 {
                        m.insert("minContains".into(), json!(c.min));
                    }
                    if let Some(n) = c.max {
                        m.insert("maxContains".into(), json!(n));
                    }
                }
                m
            }
            Shape::Object(o) => self.object(o, None),
            Shape::Union(u) => self.union(u),
            Shape::Nullable(inner) => obj(json!({ "anyOf": [Value::Object(self.node(inner)), { "type": "null" }] })),
            Shape::Kinds(members) => {
                // The engine checks a value against the first member of its kind; no member of its kind is a
                // type error. Each member's schema names its kind, so `anyOf` over one member per kind is that.
                let mut kinds = BTreeSet::new();
                let mut picked: Vec<Map<String, Value>> = Vec::new();
                for mem in members {
                    if let Some(k) = kind_of(self.m, &mem.shape) {
                        if kinds.insert(k) {
                            picked.push(self.node(mem));
                        }
                    }
                }
                match picked.len() {
                    0 => obj(json!({ "not": {} })),
                    1 => picked.pop().unwrap_or_default(),
                    _ => obj(json!({ "anyOf": picked })),
                }
            }
            Shape::AllOf(ms) => self.list("allOf", ms),
            Shape::AnyOf(ms) => self.list("anyOf", ms),
            Shape::OneOf(ms) => self.list("oneOf", ms),
            Shape::Not(inner) => obj(json!({ "not": Value::Object(self.node(inner)) })),
            Shape::Cond { cond, then, otherwise } => {
                let mut m = Map::new();
                m.insert("if".into(), Value::Object(self.node(cond)));
                if then.is_none() && otherwise.is_none() {
                    // `if` alone (kept for what it evaluates, for `unevaluatedProperties` or `unevaluatedItems`):
                    // ajv's strict mode refuses it without a branch, so it gets one that accepts anything.
                    m.insert("then".into(), json!({}));
                }
                if let Some(t) = then {
                    m.insert("then".into(), Value::Object(self.node(t)));
                }
                if let Some(e) = otherwise {
                    m.insert("else".into(), Value::Object(self.node(e)));
                }
                m
            }
            Shape::Unevaluated { inner, rest, items } => {
                // Beside the inner schema's keywords (they are in place: the keyword sees into them).
                let kw = unevaluated_keyword(*items);
                let mut m = self.node(inner);
                if m.contains_key(kw) {
                    m = obj(json!({ "allOf": [Value::Object(m)] }));
                }
                m.insert(kw.into(), Value::Object(self.node(rest)));
                m
            }
            Shape::Dependent { property, then } => {
                let mut deps = Map::new();
                deps.insert(property.clone(), Value::Object(self.node(then)));
                obj(json!({ "dependentSchemas": deps }))
            }
        }
    }

    /// The schema of a node that only ever sees strings (`propertyNames`): of a node of several kinds, its string
    /// member alone, as the engine checks a name against that member only.
    fn string_node(&mut self, n: &Node) -> Map<String, Value> {
        match &n.shape {
            Shape::Kinds(members) => match members.iter().find(|m| kind_of(self.m, &m.shape) == Some("string")) {
                Some(s) => self.node(s),
                None => obj(json!({ "not": {} })),
            },
            _ => self.node(n),
        }
    }

    fn list(&mut self, key: &str, ms: &[Node]) -> Map<String, Value> {
        let items: Vec<Value> = ms.iter().map(|n| Value::Object(self.node(n))).collect();
        let mut m = Map::new();
        m.insert(key.into(), Value::Array(items));
        m
    }

    /// An object; `owner` is the type whose body it is.
    fn object(&mut self, o: &ObjectShape, owner: Option<TypeId>) -> Map<String, Value> {
        let mut m = obj(json!({ "type": "object" }));
        let required: Vec<&str> = o
            .fields
            .iter()
            .filter(|f| f.required)
            .map(|f| f.name.as_str())
            .chain(o.required_only.iter().map(String::as_str))
            .collect();
        if !required.is_empty() {
            m.insert("required".into(), json!(required));
        }
        match &o.additional {
            Additional::Closed => {
                m.insert("additionalProperties".into(), json!(false));
            }
            Additional::Schema(s) => {
                m.insert("additionalProperties".into(), Value::Object(self.node(s)));
            }
            // Written, it evaluates the other properties (for an `unevaluatedProperties` around the object).
            Additional::Open | Additional::Strip if o.additional_written => {
                m.insert("additionalProperties".into(), json!(true));
            }
            Additional::Open | Additional::Strip => {}
        }
        let mut props = Map::new();
        if !o.fields.is_empty() {
            // A member's discriminator is its bare `const`: the union describes it.
            let discs = owner.and_then(|id| self.discriminators.get(&id)).cloned().unwrap_or_default();
            for f in &o.fields {
                let mut s = self.node(&f.node);
                if !discs.contains(&f.name.as_str()) {
                    if let Some(d) = &f.description {
                        s.insert("description".into(), json!(d));
                    }
                }
                props.insert(f.name.clone(), Value::Object(s));
            }
        }
        // A property that is required but not declared is declared with what the object says of it anyway (the
        // `additionalProperties` schema, or `true` where a pattern property or an open object governs it), which
        // changes nothing and keeps ajv's strict mode (`strictRequired`) content.
        for name in &o.required_only {
            if props.contains_key(name) {
                continue;
            }
            let by_pattern =
                o.pattern_properties.iter().any(|(p, _)| regex::Regex::new(&p.rust).is_ok_and(|re| re.is_match(name)));
            let s = match &o.additional {
                _ if by_pattern => json!(true),
                Additional::Closed => json!(false),
                Additional::Schema(n) => Value::Object(self.node(n)),
                Additional::Open | Additional::Strip => json!(true),
            };
            props.insert(name.clone(), s);
        }
        if !props.is_empty() {
            m.insert("properties".into(), Value::Object(props));
        }
        if !o.pattern_properties.is_empty() {
            let mut pp = Map::new();
            for (p, node) in &o.pattern_properties {
                pp.insert(p.source.clone(), Value::Object(self.node(node)));
            }
            m.insert("patternProperties".into(), Value::Object(pp));
        }
        if let Some(names) = &o.property_names {
            m.insert("propertyNames".into(), Value::Object(self.string_node(names)));
        }
        if let Some(n) = o.min_properties {
            m.insert("minProperties".into(), json!(n));
        }
        if let Some(n) = o.max_properties {
            m.insert("maxProperties".into(), json!(n));
        }
        if !o.dependent_required.is_empty() {
            let dr: Map<String, Value> = o.dependent_required.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
            m.insert("dependentRequired".into(), Value::Object(dr));
        }
        m
    }

    /// A discriminated union: the discriminator must be present and one of the members' values; then one
    /// `if`/`then` per member checks the member the value names.
    fn union(&mut self, u: &UnionShape) -> Map<String, Value> {
        let tags: Vec<&Value> = u.members.iter().map(|mem| &mem.tag).collect();
        let mut tag_schema = Map::new();
        let kind = |v: &Value| match v {
            Value::String(_) => "string",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            _ => "",
        };
        if let Some(first) = tags.first() {
            if tags.iter().all(|t| kind(t) == kind(first)) {
                tag_schema.insert("type".into(), json!(kind(first)));
            }
        }
        tag_schema.insert("enum".into(), json!(tags));
        let mut props = Map::new();
        props.insert(u.discriminator.clone(), Value::Object(tag_schema));
        let branches: Vec<Value> = u
            .members
            .iter()
            .map(|mem| {
                json!({
                    "if": { "properties": { &u.discriminator: { "const": mem.tag } } },
                    "then": Value::Object(self.reference(mem.ty)),
                })
            })
            .collect();
        let mut m = obj(json!({ "type": "object", "required": [u.discriminator] }));
        m.insert("properties".into(), Value::Object(props));
        m.insert("allOf".into(), Value::Array(branches));
        m
    }
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// A bound as JSON: a whole bound of an integer type as an integer (`0`, `9007199254740991`), any other as the
/// double the model holds (`0.0`, `0.5`); both parse back to the same double.
fn number(b: f64, integer: bool) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if integer && b.fract() == 0.0 && b.abs() <= EXACT {
        json!(b as i64)
    } else {
        serde_json::Number::from_f64(b).map_or(Value::Null, Value::Number)
    }
}

/// The role rules as `if`/`then`, from [`Protocol::role_rules`]: the events each set of roles is limited to
/// (one rule per distinct set, in the order first met), then per role the envelope properties and event
/// properties that role may not send.
fn role_rules(m: &Model, p: &Protocol) -> Vec<Value> {
    let ev = &p.union_field;
    let tag = p.discriminator(m);
    let rf = &p.role_field;
    let in_role_order =
        |allowed: &[String]| -> Vec<String> { p.roles.iter().filter(|r| allowed.contains(r)).cloned().collect() };
    let mut sets: Vec<(Vec<String>, Vec<&str>)> = Vec::new();
    let mut envelope_fields: Vec<(&str, &[String])> = Vec::new();
    for e in &p.events {
        for rule in p.role_rules(e) {
            match rule {
                RoleRule::Event { allowed } => {
                    if p.roles.iter().all(|r| allowed.contains(r)) {
                        continue;
                    }
                    let set = in_role_order(allowed);
                    match sets.iter_mut().find(|(s, _)| *s == set) {
                        Some((_, tags)) => tags.push(&e.tag),
                        None => sets.push((set, vec![&e.tag])),
                    }
                }
                RoleRule::EnvelopeField { name, allowed } => {
                    if !envelope_fields.iter().any(|(n, _)| *n == name) {
                        envelope_fields.push((name, allowed));
                    }
                }
                RoleRule::EventField { .. } => {}
            }
        }
    }
    let mut out = Vec::new();
    for (set, tags) in sets {
        let allowed = if set.len() == 1 { json!({ "const": set[0] }) } else { json!({ "enum": set }) };
        out.push(json!({
            "if": {
                "properties": { ev: { "type": "object", "properties": { tag: { "enum": tags } }, "required": [tag] } },
                "required": [ev]
            },
            "then": { "properties": { rf: allowed } }
        }));
    }
    for role in &p.roles {
        let mut then_props = Map::new();
        for (name, allowed) in &envelope_fields {
            if !allowed.contains(role) {
                then_props.insert((*name).to_string(), json!(false));
            }
        }
        let mut ev_rules = Vec::new();
        for e in &p.events {
            let forbidden: Map<String, Value> = p
                .role_rules(e)
                .filter_map(|r| match r {
                    RoleRule::EventField { name, allowed } if !allowed.contains(role) => {
                        Some((name.to_string(), json!(false)))
                    }
                    _ => None,
                })
                .collect();
            if !forbidden.is_empty() {
                ev_rules.push(json!({
                    "if": { "properties": { tag: { "const": e.tag } }, "required": [tag] },
                    "then": { "properties": forbidden }
                }));
            }
        }
        if !ev_rules.is_empty() {
            then_props.insert(ev.clone(), json!({ "type": "object", "allOf": ev_rules }));
        }
        if !then_props.is_empty() {
            out.push(json!({
                "if": { "properties": { rf: { "const": role } }, "required": [rf] },
                "then": { "properties": then_props }
            }));
        }
    }
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
        assert_eq!(number(0.0, true), json!(0));
        assert_eq!(number(9007199254740991.0, true).to_string(), "9007199254740991");
        assert_eq!(number(0.0, false).to_string(), "0.0");
        assert_eq!(number(0.5, true).to_string(), "0.5");
        assert_eq!(number(1e300, true).to_string(), "1e+300");
    }
}
