//! The model as JSON Schema 2020-12 keywords: the one place where a [`Shape`] becomes keywords, shared by the
//! bundled schema ([`super::bundle`], references as `$ref` into `$defs`) and the Rust crate's `JsonSchema` impls
//! (`emit/rust/schemars.rs`, references as schemars subschemas). A schema is built as [`Schema`], JSON whose
//! references to the model's types ([`J::Ref`]) each renderer writes its own way.
//!
//! How nodes are written (the construct table is in the README): a reference to a type is a `$ref`, except that a
//! plain type (a scalar with its bounds, any value, an open object that declares nothing) is written in place,
//! as a schema author would; a discriminated union checks the discriminator and then picks its member with one
//! `if`/`then` per member, so a validator reports inside the member it picked instead of every member's errors;
//! the protocol's role rules ([`Protocol::role_rules`]) are `if`/`then`s on the envelope type, wherever it is
//! used.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use crate::ir::*;

/// A schema object being written: its keywords in order, with references to types left open.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Schema(Vec<(String, J)>);

/// A value inside a [`Schema`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum J {
    /// JSON that holds no reference.
    V(Value),
    /// A schema.
    S(Schema),
    /// An array of values.
    A(Vec<J>),
    /// The target of a `$ref`: a type of the model.
    Ref(TypeId),
}

impl From<Value> for J {
    fn from(v: Value) -> J {
        J::V(v)
    }
}

impl From<Schema> for J {
    fn from(s: Schema) -> J {
        J::S(s)
    }
}

impl Schema {
    /// The keywords of a JSON object (anything else is the empty schema).
    pub(crate) fn of(v: Value) -> Schema {
        match v {
            Value::Object(m) => Schema(m.into_iter().map(|(k, v)| (k, J::V(v))).collect()),
            _ => Schema::default(),
        }
    }

    /// A reference to a type.
    fn reference(id: TypeId) -> Schema {
        Schema(vec![("$ref".into(), J::Ref(id))])
    }

    /// Sets a keyword: in place when it is there, last otherwise.
    pub(crate) fn insert(&mut self, key: &str, value: impl Into<J>) {
        let value = value.into();
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => self.0.push((key.to_string(), value)),
        }
    }

    /// Adds a keyword known not to be there yet, last.
    fn push(&mut self, key: &str, value: impl Into<J>) {
        self.0.push((key.to_string(), value.into()));
    }

    pub(crate) fn contains_key(&self, key: &str) -> bool {
        self.0.iter().any(|(k, _)| k == key)
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut J> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Removes a keyword, keeping the order of the others.
    pub(crate) fn remove(&mut self, key: &str) -> Option<J> {
        let at = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(at).1)
    }

    /// Sets every keyword of `other`, in its order.
    pub(crate) fn append(&mut self, other: Schema) {
        for (k, v) in other.0 {
            self.insert(&k, v);
        }
    }

    /// Writes a schema's annotations as its source wrote them (`title` first, where a reader looks for it).
    fn annotate(&mut self, a: &Annotations, examples: &[Value]) {
        if let Some(t) = &a.title {
            self.0.insert(0, ("title".into(), J::V(json!(t))));
        }
        if let Some(d) = &a.default {
            self.insert("default", d.clone());
        }
        for (k, on) in [("deprecated", a.deprecated), ("readOnly", a.read_only), ("writeOnly", a.write_only)] {
            if on {
                self.insert(k, json!(true));
            }
        }
        if !examples.is_empty() {
            self.insert("examples", Value::Array(examples.to_vec()));
        }
    }

    /// The keywords, in order.
    pub(crate) fn members(&self) -> &[(String, J)] {
        &self.0
    }

    /// The type this schema is only a reference to.
    pub(crate) fn only_ref(&self) -> Option<TypeId> {
        match self.0.as_slice() {
            [(k, J::Ref(id))] if k == "$ref" => Some(*id),
            _ => None,
        }
    }

    /// As JSON, each reference written by `refer` (the `$ref` string).
    pub(crate) fn into_map(self, refer: &mut dyn FnMut(TypeId) -> String) -> Map<String, Value> {
        self.0.into_iter().map(|(k, v)| (k, v.into_value(refer))).collect()
    }
}

impl J {
    /// As JSON, each reference written by `refer`.
    pub(crate) fn into_value(self, refer: &mut dyn FnMut(TypeId) -> String) -> Value {
        match self {
            J::V(v) => v,
            J::S(s) => Value::Object(s.into_map(refer)),
            J::A(items) => Value::Array(items.into_iter().map(|j| j.into_value(refer)).collect()),
            J::Ref(id) => Value::String(refer(id)),
        }
    }
}

/// A type written in place where it is used: a scalar with its bounds, any value, or an open object that declares
/// nothing (`{"type": "object"}`).
pub(crate) fn is_plain(s: &Shape) -> bool {
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

/// Writes the keywords of the model's types and nodes.
pub(crate) struct Keywords<'m> {
    m: &'m Model,
    /// The type that is always referred to, even when plain (the bundle's root, `#`).
    root: Option<TypeId>,
    /// Discriminators of the unions each type is a member of.
    discriminators: BTreeMap<TypeId, Vec<&'m str>>,
    /// Tags of the protocol's events, by type.
    event_tags: BTreeMap<TypeId, &'m str>,
    /// Whether the model has an `unevaluatedProperties` (which sees what `properties` evaluates).
    unevaluated_properties: bool,
}

impl<'m> Keywords<'m> {
    /// `root`: a type referred to even when it is plain.
    pub(crate) fn new(m: &'m Model, root: Option<TypeId>) -> Self {
        let mut discriminators: BTreeMap<TypeId, Vec<&str>> = BTreeMap::new();
        for t in &m.types {
            if let Shape::Union(u) = &t.node.shape {
                for mem in &u.members {
                    discriminators.entry(mem.ty).or_default().push(&u.discriminator);
                }
            }
        }
        let event_tags = m.protocol.iter().flat_map(|p| p.events.iter().map(|e| (e.ty, e.tag.as_str()))).collect();
        let mut unevaluated_properties = false;
        for t in &m.types {
            t.node.visit(&mut |n| {
                unevaluated_properties |= matches!(n.shape, Shape::Unevaluated { items: false, .. });
            });
        }
        Keywords { m, root, discriminators, event_tags, unevaluated_properties }
    }

    /// The whole schema of a type: its event title, description, body, role rules and examples.
    pub(crate) fn type_body(&self, id: TypeId) -> Schema {
        let t = self.m.ty(id);
        let mut out = Schema::default();
        // An event is titled by its tag unless its schema gives a title (which `annotate` writes).
        if let Some(tag) = self.event_tags.get(&id).filter(|_| t.annotations.title.is_none()) {
            out.insert("title", json!(tag));
        }
        if let Some(d) = &t.description {
            out.insert("description", json!(d));
        }
        let body = match &t.node.shape {
            Shape::Object(o) => self.object(o, Some(id)),
            _ => self.node(&t.node),
        };
        out.append(body);
        if let Some(p) = self.m.protocol.as_ref().filter(|p| p.envelope == id) {
            let rules = role_rules(self.m, p);
            if !rules.is_empty() {
                let mut rules: Vec<J> = rules.into_iter().map(J::V).collect();
                match out.get_mut("allOf") {
                    Some(J::A(a)) => a.append(&mut rules),
                    _ => out.insert("allOf", J::A(rules)),
                }
            }
        }
        out.annotate(&t.annotations, &t.examples);
        out
    }

    /// A reference to a type: the type written in place when it is plain (and not the root), else a `$ref`.
    fn reference(&self, id: TypeId) -> Schema {
        if Some(id) == self.root {
            return Schema::reference(id);
        }
        let t = self.m.ty(id);
        // A type the model does not hold accepts nothing (`Model::ty`), and is written so.
        if is_plain(&t.node.shape) || id.0 >= self.m.types.len() {
            return self.node(&t.node);
        }
        Schema::reference(id)
    }

    /// The schema of a node (without its description).
    pub(crate) fn node(&self, n: &Node) -> Schema {
        match &n.shape {
            Shape::Any => Schema::default(),
            Shape::Never => Schema::of(json!({ "not": {} })),
            Shape::Ref(id) => self.reference(*id),
            Shape::Null => Schema::of(json!({ "type": "null" })),
            Shape::Boolean => Schema::of(json!({ "type": "boolean" })),
            Shape::String(s) => {
                let mut m = Schema::of(json!({ "type": "string" }));
                if let Some(n) = s.min_length {
                    m.insert("minLength", json!(n));
                }
                if let Some(n) = s.max_length {
                    m.insert("maxLength", json!(n));
                }
                if let Some(p) = &s.pattern {
                    m.insert("pattern", json!(p.source));
                }
                m
            }
            Shape::Number(s) => {
                let mut m = Schema::of(json!({ "type": if s.integer { "integer" } else { "number" } }));
                let bounds = [
                    ("minimum", s.minimum),
                    ("exclusiveMinimum", s.exclusive_minimum),
                    ("maximum", s.maximum),
                    ("exclusiveMaximum", s.exclusive_maximum),
                    ("multipleOf", s.multiple_of),
                ];
                for (k, b) in bounds {
                    if let Some(b) = b {
                        m.insert(k, number(b, s.integer));
                    }
                }
                m
            }
            Shape::Const(v) => Schema::of(json!({ "const": v })),
            Shape::Enum(values) => {
                if values.iter().all(Value::is_string) {
                    Schema::of(json!({ "type": "string", "enum": values }))
                } else {
                    Schema::of(json!({ "enum": values }))
                }
            }
            Shape::Array(a) => {
                let mut m = Schema::of(json!({ "type": "array" }));
                if !a.prefix.is_empty() {
                    m.insert("prefixItems", self.list(&a.prefix));
                }
                if a.items.as_deref().is_some_and(|n| matches!(n.shape, Shape::Never)) {
                    // `false`, not `{"not": {}}`: ajv's strictTuples takes only `items: false` for a tuple's end
                    // (helper 80).
                    m.insert("items", json!(false));
                } else if let Some(n) = &a.items {
                    m.insert("items", self.node(n));
                } else if a.items_written {
                    // `items: true` evaluates the items (for an `unevaluatedItems` around the array).
                    m.insert("items", json!(true));
                }
                if let Some(n) = a.min_items {
                    m.insert("minItems", json!(n));
                }
                if let Some(n) = a.max_items {
                    m.insert("maxItems", json!(n));
                }
                if a.unique {
                    m.insert("uniqueItems", json!(true));
                }
                if let Some(c) = &a.contains {
                    m.insert("contains", self.node(&c.node));
                    if c.min != 1 {
                        m.insert("minContains", json!(c.min));
                    }
                    if let Some(n) = c.max {
                        m.insert("maxContains", json!(n));
                    }
                }
                m
            }
            Shape::Object(o) => self.object(o, None),
            Shape::Union(u) => self.union(u),
            Shape::Nullable(inner) => {
                let mut m = Schema::default();
                m.insert("anyOf", J::A(vec![self.node(inner).into(), json!({ "type": "null" }).into()]));
                m
            }
            Shape::Kinds(members) => {
                // The engine checks a value against the first member of its kind; no member of its kind is a
                // type error. Each member's schema names its kind, so `anyOf` over one member per kind is that.
                let mut kinds = BTreeSet::new();
                let mut picked: Vec<Schema> = Vec::new();
                for mem in members {
                    if let Some(k) = self.m.kind_of(&mem.shape) {
                        if kinds.insert(k) {
                            picked.push(self.node(mem));
                        }
                    }
                }
                match picked.len() {
                    0 => Schema::of(json!({ "not": {} })),
                    1 => picked.pop().unwrap_or_default(),
                    _ => {
                        let mut m = Schema::default();
                        m.insert("anyOf", J::A(picked.into_iter().map(J::S).collect()));
                        m
                    }
                }
            }
            Shape::AllOf(ms) => self.applicator("allOf", ms),
            Shape::AnyOf(ms) => self.applicator("anyOf", ms),
            Shape::OneOf(ms) => self.applicator("oneOf", ms),
            Shape::Not(inner) => {
                let mut m = Schema::default();
                m.insert("not", self.node(inner));
                m
            }
            Shape::Cond { cond, then, otherwise } => {
                let mut m = Schema::default();
                m.insert("if", self.node(cond));
                if then.is_none() && otherwise.is_none() {
                    // `if` alone (kept for what it evaluates, for `unevaluatedProperties` or `unevaluatedItems`):
                    // ajv's strict mode refuses it without a branch, so it gets one that accepts anything.
                    m.insert("then", json!({}));
                }
                if let Some(t) = then {
                    m.insert("then", self.node(t));
                }
                if let Some(e) = otherwise {
                    m.insert("else", self.node(e));
                }
                m
            }
            Shape::Unevaluated { inner, rest, items } => {
                // Beside the inner schema's keywords (they are in place: the keyword sees into them).
                let kw = unevaluated_keyword(*items);
                let mut m = self.node(inner);
                if m.contains_key(kw) {
                    let mut wrapped = Schema::default();
                    wrapped.insert("allOf", J::A(vec![J::S(m)]));
                    m = wrapped;
                }
                m.insert(kw, self.node(rest));
                m
            }
            Shape::Dependent { property, then } => {
                let mut deps = Schema::default();
                deps.insert(property, self.node(then));
                let mut m = Schema::default();
                m.insert("dependentSchemas", deps);
                m
            }
        }
    }

    /// The schema of a node that only ever sees strings (`propertyNames`): of a node of several kinds, its string
    /// member alone, as the engine checks a name against that member only.
    fn string_node(&self, n: &Node) -> Schema {
        match &n.shape {
            Shape::Kinds(members) => {
                match members.iter().find(|m| self.m.kind_of(&m.shape) == Some(JsonKind::String)) {
                    Some(s) => self.node(s),
                    None => Schema::of(json!({ "not": {} })),
                }
            }
            _ => self.node(n),
        }
    }

    fn list(&self, ms: &[Node]) -> J {
        J::A(ms.iter().map(|n| J::S(self.node(n))).collect())
    }

    fn applicator(&self, key: &str, ms: &[Node]) -> Schema {
        let mut m = Schema::default();
        m.insert(key, self.list(ms));
        m
    }

    /// An object; `owner` is the type whose body it is.
    fn object(&self, o: &ObjectShape, owner: Option<TypeId>) -> Schema {
        let mut m = Schema::of(json!({ "type": "object" }));
        let required: Vec<&str> = o
            .fields
            .iter()
            .filter(|f| f.required)
            .map(|f| f.name.as_str())
            .chain(o.required_only.iter().map(String::as_str))
            .collect();
        if !required.is_empty() {
            m.insert("required", json!(required));
        }
        match &o.additional {
            Additional::Closed => m.insert("additionalProperties", json!(false)),
            Additional::Schema(s) => m.insert("additionalProperties", self.node(s)),
            // Written, it evaluates the other properties (for an `unevaluatedProperties` around the object).
            Additional::Open | Additional::Strip if o.additional_written => {
                m.insert("additionalProperties", json!(true))
            }
            Additional::Open | Additional::Strip => {}
        }
        let mut props = Schema::default();
        if !o.fields.is_empty() {
            // A member's discriminator is its bare `const`: the union describes it.
            let discs = owner.and_then(|id| self.discriminators.get(&id)).cloned().unwrap_or_default();
            for f in &o.fields {
                let mut s = self.node(&f.node);
                if !discs.contains(&f.name.as_str()) {
                    if let Some(d) = &f.description {
                        s.insert("description", json!(d));
                    }
                    s.annotate(&f.annotations, &f.examples);
                }
                // Property names are distinct (an object's keys): no search for one already there (with 100,000
                // properties the search was most of the time).
                props.push(&f.name, s);
            }
        }
        let mut declared: BTreeSet<&str> = o.fields.iter().map(|f| f.name.as_str()).collect();
        let patterns: Vec<regex::Regex> =
            o.pattern_properties.iter().filter_map(|(p, _)| regex::Regex::new(&p.rust).ok()).collect();
        // A property that is required but not declared is declared with what the object says of it anyway (the
        // `additionalProperties` schema, or `true` where a pattern property or an open object governs it), which
        // changes no verdict and keeps ajv's strict mode (`strictRequired`) content. Not where the object leaves
        // it to no keyword and an `unevaluatedProperties` could see it: declared, it would count as evaluated.
        for name in &o.required_only {
            if !declared.insert(name) {
                continue;
            }
            let by_pattern = patterns.iter().any(|re| re.is_match(name));
            let s: J = match &o.additional {
                _ if by_pattern => json!(true).into(),
                Additional::Closed => json!(false).into(),
                Additional::Schema(n) => self.node(n).into(),
                Additional::Open | Additional::Strip if o.additional_written => json!(true).into(),
                Additional::Open | Additional::Strip if self.unevaluated_properties => continue,
                Additional::Open | Additional::Strip => json!(true).into(),
            };
            props.push(name, s);
        }
        if !props.members().is_empty() {
            m.insert("properties", props);
        }
        if !o.pattern_properties.is_empty() {
            let mut pp = Schema::default();
            for (p, node) in &o.pattern_properties {
                pp.insert(&p.source, self.node(node));
            }
            m.insert("patternProperties", pp);
        }
        if let Some(names) = &o.property_names {
            m.insert("propertyNames", self.string_node(names));
        }
        if let Some(n) = o.min_properties {
            m.insert("minProperties", json!(n));
        }
        if let Some(n) = o.max_properties {
            m.insert("maxProperties", json!(n));
        }
        if !o.dependent_required.is_empty() {
            let dr: Map<String, Value> = o.dependent_required.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
            m.insert("dependentRequired", Value::Object(dr));
        }
        m
    }

    /// A discriminated union: the discriminator must be present and one of the members' values; then one
    /// `if`/`then` per member checks the member the value names.
    fn union(&self, u: &UnionShape) -> Schema {
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
        let branches = u
            .members
            .iter()
            .map(|mem| {
                let mut branch =
                    Schema::of(json!({ "if": { "properties": { &u.discriminator: { "const": mem.tag } } } }));
                branch.insert("then", self.reference(mem.ty));
                J::S(branch)
            })
            .collect();
        let mut m = Schema::of(json!({ "type": "object", "required": [u.discriminator] }));
        m.insert("properties", Value::Object(props));
        m.insert("allOf", J::A(branches));
        m
    }
}

/// A bound as JSON: a whole bound of an integer type as an integer (`0`, `9007199254740991`), any other as the
/// double the model holds (`0.0`, `0.5`); both parse back to the same double.
pub(crate) fn number(b: f64, integer: bool) -> Value {
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
