//! The fast path: decides whether a line is valid without building a `serde_json::Value`.
//!
//! The model is compiled into an index-based plan ([`FastPlan`]); a `DeserializeSeed` walks the JSON once with it:
//! keys are matched against an object's fields without allocating, values nobody constrains are skipped without
//! being built, a union picks its member from the discriminator when it comes first, and the protocol's role rules
//! are bit masks checked at the end of the envelope. It answers only "certainly valid"; anything else (an error, or
//! a shape it does not handle fast: combinators, unique items, pattern properties, a discriminator that is not the
//! first key, duplicate keys) sends the line to the precise path in [`crate::engine`], which explains it. So the
//! fast path can make validation quicker but never changes a verdict; the conformance test and a fuzz test check
//! that the two agree.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::ir::*;

/// The model compiled for the fast path.
#[derive(Debug, Clone)]
pub struct FastPlan {
    nodes: Vec<FNode>,
    objects: Vec<ObjPlan>,
    unions: Vec<UnionPlan>,
    root: usize,
}

/// One node of the plan.
#[derive(Debug, Clone)]
enum FNode {
    Any,
    Null,
    Bool,
    Str {
        min: Option<u64>,
        max: Option<u64>,
        pattern: Option<String>,
        strict: Option<String>,
    },
    Num(NumberShape),
    Const(Value),
    Enum(Vec<Value>),
    Array {
        prefix: Vec<usize>,
        items: Option<usize>,
        min: Option<u64>,
        max: Option<u64>,
    },
    Obj(usize),
    Union(usize),
    Nullable(usize),
    /// A shape the fast path does not decide: the line goes to the precise path.
    Unsupported,
}

#[derive(Debug, Clone)]
struct ObjPlan {
    names: Vec<String>,
    nodes: Vec<usize>,
    required: u64,
    /// What other keys may be: `None` rejects them, `Some(None)` skips them, `Some(Some(n))` checks them.
    other: Option<Option<usize>>,
    /// The protocol's role rules, when this object is the envelope.
    roles: Option<RolePlan>,
}

#[derive(Debug, Clone)]
struct RolePlan {
    role_field: usize,
    union_field: usize,
    roles: Vec<String>,
    /// Per role: envelope fields that role may not send.
    env_forbidden: Vec<u64>,
    /// Per member of the event union, per role: whether it may send the event, and the event fields it may not send.
    events: Vec<Vec<(bool, u64)>>,
}

#[derive(Debug, Clone)]
struct UnionPlan {
    tag: String,
    tags: Vec<Value>,
    objects: Vec<usize>,
}

fn mask(n: usize, pick: impl Fn(usize) -> bool) -> u64 {
    (0..n).filter(|i| pick(*i)).fold(0, |m, i| m | (1 << i))
}

struct Compiler<'m> {
    model: &'m Model,
    plan: FastPlan,
    by_type: BTreeMap<TypeId, usize>,
    strict_ids: bool,
}

impl FastPlan {
    /// Compiles the plan for one type of the model.
    pub fn new(model: &Model, root: TypeId, strict_ids: bool) -> Option<FastPlan> {
        let mut c = Compiler {
            model,
            plan: FastPlan { nodes: Vec::new(), objects: Vec::new(), unions: Vec::new(), root: 0 },
            by_type: BTreeMap::new(),
            strict_ids,
        };
        let root = c.ty(root);
        c.plan.root = root;
        Some(c.plan)
    }
}

impl Compiler<'_> {
    fn push(&mut self, n: FNode) -> usize {
        self.plan.nodes.push(n);
        self.plan.nodes.len() - 1
    }

    fn ty(&mut self, id: TypeId) -> usize {
        if let Some(&i) = self.by_type.get(&id) {
            return i;
        }
        // Reserve the slot first so a recursive type refers to itself.
        let slot = self.push(FNode::Unsupported);
        self.by_type.insert(id, slot);
        let node = self.node_of_type(id);
        self.plan.nodes[slot] = node;
        slot
    }

    fn node_of_type(&mut self, id: TypeId) -> FNode {
        let t = self.model.ty(id);
        match &t.node.shape {
            Shape::Object(o) => match self.object(id, o) {
                Some(i) => FNode::Obj(i),
                None => FNode::Unsupported,
            },
            other => self.shape(other),
        }
    }

    fn node(&mut self, n: &Node) -> usize {
        if let Shape::Ref(id) = n.shape {
            return self.ty(id);
        }
        let f = self.shape(&n.shape);
        self.push(f)
    }

    fn shape(&mut self, s: &Shape) -> FNode {
        match s {
            Shape::Any => FNode::Any,
            Shape::Null => FNode::Null,
            Shape::Boolean => FNode::Bool,
            Shape::String(st) => FNode::Str {
                min: st.min_length,
                max: st.max_length,
                pattern: st.pattern.as_ref().map(|p| p.source.clone()),
                strict: st.strict_pattern.as_ref().filter(|_| self.strict_ids).map(|p| p.source.clone()),
            },
            Shape::Number(n) => FNode::Num(n.clone()),
            Shape::Const(v) if !v.is_array() && !v.is_object() => FNode::Const(v.clone()),
            Shape::Enum(vs) if vs.iter().all(|v| !v.is_array() && !v.is_object()) => FNode::Enum(vs.clone()),
            Shape::Array(a) if !a.unique => {
                let prefix = a.prefix.iter().map(|n| self.node(n)).collect();
                let items = a.items.as_ref().map(|n| self.node(n));
                FNode::Array { prefix, items, min: a.min_items, max: a.max_items }
            }
            Shape::Union(u) => {
                let mut objects = Vec::new();
                for m in &u.members {
                    let n = self.ty(m.ty);
                    match self.plan.nodes[n] {
                        FNode::Obj(o) => objects.push(o),
                        _ => return FNode::Unsupported,
                    }
                }
                let tags = u.members.iter().map(|m| m.tag.clone()).collect();
                self.plan.unions.push(UnionPlan { tag: u.discriminator.clone(), tags, objects });
                FNode::Union(self.plan.unions.len() - 1)
            }
            Shape::Nullable(inner) => FNode::Nullable(self.node(inner)),
            Shape::Ref(id) => {
                let i = self.ty(*id);
                self.plan.nodes[i].clone()
            }
            _ => FNode::Unsupported,
        }
    }

    fn object(&mut self, id: TypeId, o: &ObjectShape) -> Option<usize> {
        let plain = o.fields.len() <= 64
            && o.required_only.is_empty()
            && o.pattern_properties.is_empty()
            && o.property_names.is_none()
            && o.min_properties.is_none()
            && o.max_properties.is_none()
            && o.dependent_required.is_empty();
        if !plain {
            return None;
        }
        let idx = self.plan.objects.len();
        self.plan.objects.push(ObjPlan {
            names: o.fields.iter().map(|f| f.name.clone()).collect(),
            nodes: Vec::new(),
            required: mask(o.fields.len(), |i| o.fields[i].required),
            other: None,
            roles: None,
        });
        let nodes: Vec<usize> = o.fields.iter().map(|f| self.node(&f.node)).collect();
        let other = match &o.additional {
            Additional::Closed => None,
            Additional::Open | Additional::Strip => Some(None),
            Additional::Schema(n) => Some(Some(self.node(n))),
        };
        let roles = self.roles(id, o);
        let p = &mut self.plan.objects[idx];
        p.nodes = nodes;
        p.other = other;
        p.roles = roles;
        Some(idx)
    }

    fn roles(&mut self, id: TypeId, o: &ObjectShape) -> Option<RolePlan> {
        let p = self.model.protocol.as_ref().filter(|p| p.envelope == id)?;
        let role_field = o.fields.iter().position(|f| f.name == p.role_field)?;
        let union_field = o.fields.iter().position(|f| f.name == p.union_field)?;
        let env_forbidden = p
            .roles
            .iter()
            .map(|r| {
                mask(o.fields.len(), |i| {
                    p.envelope_field_roles.iter().any(|(n, allowed)| *n == o.fields[i].name && !allowed.contains(r))
                })
            })
            .collect();
        let events = p
            .events
            .iter()
            .map(|e| {
                let fields: Vec<String> = match &self.model.ty(e.ty).node.shape {
                    Shape::Object(eo) => eo.fields.iter().map(|f| f.name.clone()).collect(),
                    _ => Vec::new(),
                };
                p.roles
                    .iter()
                    .map(|r| {
                        let forbidden = mask(fields.len(), |i| {
                            e.field_roles.iter().any(|(n, allowed)| *n == fields[i] && !allowed.contains(r))
                        });
                        (e.roles.contains(r), forbidden)
                    })
                    .collect()
            })
            .collect();
        Some(RolePlan { role_field, union_field, roles: p.roles.clone(), env_forbidden, events })
    }
}

/// The fast verdict: `true` only when the line is certainly valid. `pattern(source, value)` matches a string
/// against one of the model's patterns.
pub fn is_valid(plan: &FastPlan, pattern: &dyn Fn(&str, &str) -> bool, text: &str) -> bool {
    let mut de = serde_json::Deserializer::from_str(text);
    let cx = Cx { plan, pattern };
    let seed = NodeSeed { cx: &cx, node: plan.root, out: None };
    seed.deserialize(&mut de).is_ok() && de.end().is_ok()
}

struct Cx<'a> {
    plan: &'a FastPlan,
    pattern: &'a dyn Fn(&str, &str) -> bool,
}

/// What a union member reports to the envelope around it: which member, and which of its fields were present.
#[derive(Default)]
struct Seen {
    member: Option<usize>,
    present: u64,
    /// The index of a matched string among the node's enum values (the role).
    index: Option<usize>,
}

/// A quiet failure: the precise path will explain it, so no message is built here.
fn fail<E: de::Error>() -> E {
    E::custom("")
}

/// Any node of the plan. `out` receives what an envelope needs to know about this value.
struct NodeSeed<'a, 'c> {
    cx: &'a Cx<'c>,
    node: usize,
    out: Option<&'a mut Seen>,
}

impl<'de> DeserializeSeed<'de> for NodeSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match &self.cx.plan.nodes[self.node] {
            FNode::Any => Skip.deserialize(d),
            FNode::Null => d.deserialize_any(self),
            FNode::Bool => d.deserialize_bool(self),
            FNode::Str { .. } => d.deserialize_str(self),
            FNode::Obj(_) | FNode::Union(_) => d.deserialize_map(self),
            FNode::Array { .. } => d.deserialize_seq(self),
            FNode::Num(_) | FNode::Const(_) | FNode::Enum(_) | FNode::Nullable(_) => d.deserialize_any(self),
            FNode::Unsupported => Err(fail()),
        }
    }
}

impl NodeSeed<'_, '_> {
    fn kind(&self) -> &FNode {
        &self.cx.plan.nodes[self.node]
    }

    /// Follows `Nullable` to the node a non-null value must meet.
    fn non_null(&self) -> &FNode {
        match self.kind() {
            FNode::Nullable(i) => &self.cx.plan.nodes[*i],
            k => k,
        }
    }

    fn number<E: de::Error>(&self, v: f64) -> Result<(), E> {
        let ok = match self.non_null() {
            FNode::Num(s) => {
                (!s.integer || v.fract() == 0.0)
                    && s.minimum.is_none_or(|m| v >= m)
                    && s.exclusive_minimum.is_none_or(|m| v > m)
                    && s.maximum.is_none_or(|m| v <= m)
                    && s.exclusive_maximum.is_none_or(|m| v < m)
                    && s.multiple_of.is_none_or(|m| crate::engine::is_multiple(v, m))
            }
            FNode::Const(c) => c.as_f64() == Some(v),
            FNode::Enum(vs) => vs.iter().any(|c| c.as_f64() == Some(v)),
            FNode::Any => true,
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(fail())
        }
    }
}

impl<'de> Visitor<'de> for NodeSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        match self.kind() {
            FNode::Null | FNode::Nullable(_) => Ok(()),
            FNode::Const(Value::Null) => Ok(()),
            FNode::Enum(vs) if vs.iter().any(Value::is_null) => Ok(()),
            _ => Err(fail()),
        }
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        match self.non_null() {
            FNode::Bool => Ok(()),
            FNode::Const(Value::Bool(b)) if *b == v => Ok(()),
            FNode::Enum(vs) if vs.iter().any(|c| c.as_bool() == Some(v)) => Ok(()),
            _ => Err(fail()),
        }
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.number(v as f64)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.number(v as f64)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.number(v)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        match self.non_null() {
            FNode::Str { min, max, pattern, strict } => {
                if min.is_some() || max.is_some() {
                    // Byte length bounds the character count from above: count characters only when it matters.
                    let bytes = v.len() as u64;
                    let chars = || v.chars().count() as u64;
                    if min.is_some_and(|m| bytes < m || (bytes / 4 < m && chars() < m)) {
                        return Err(fail());
                    }
                    if max.is_some_and(|m| bytes > m && chars() > m) {
                        return Err(fail());
                    }
                }
                for p in pattern.iter().chain(strict.iter()) {
                    if !(self.cx.pattern)(p, v) {
                        return Err(fail());
                    }
                }
                Ok(())
            }
            FNode::Const(Value::String(c)) if c == v => Ok(()),
            FNode::Enum(vs) => match vs.iter().position(|c| c.as_str() == Some(v)) {
                Some(i) => {
                    if let Some(out) = self.out {
                        out.index = Some(i);
                    }
                    Ok(())
                }
                None => Err(fail()),
            },
            _ => Err(fail()),
        }
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let FNode::Array { prefix, items, min, max } = self.non_null() else { return Err(fail()) };
        let mut n = 0u64;
        loop {
            let node = prefix.get(n as usize).copied().or(*items);
            let more = match node {
                Some(node) => seq.next_element_seed(NodeSeed { cx: self.cx, node, out: None })?.is_some(),
                None => seq.next_element_seed(Skip)?.is_some(),
            };
            if !more {
                break;
            }
            n += 1;
        }
        if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
            return Err(fail());
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        match self.non_null() {
            FNode::Obj(o) => {
                let o = *o;
                object(self.cx, o, map, None, self.out)
            }
            FNode::Union(u) => {
                let u = *u;
                union(self.cx, u, map, self.out)
            }
            FNode::Any => {
                let mut map = map;
                while map.next_key::<IgnoredAny>()?.is_some() {
                    map.next_value_seed(Skip)?;
                }
                Ok(())
            }
            _ => Err(fail()),
        }
    }
}

/// The fields of an object (already past its first key when `first` is given).
fn object<'de, A: MapAccess<'de>>(
    cx: &Cx<'_>,
    o: usize,
    mut map: A,
    first: Option<usize>,
    out: Option<&mut Seen>,
) -> Result<(), A::Error> {
    let plan = &cx.plan.objects[o];
    let mut present = 0u64;
    let mut role = None;
    let mut event = Seen::default();
    let mut pending = first;
    loop {
        let i = match pending.take() {
            Some(i) => i,
            None => match map.next_key_seed(KeySeed(&plan.names))? {
                Some(i) => i,
                None => break,
            },
        };
        if i == usize::MAX {
            match plan.other {
                None => return Err(fail()),
                Some(None) => map.next_value_seed(Skip)?,
                Some(Some(n)) => map.next_value_seed(NodeSeed { cx, node: n, out: None })?,
            }
            continue;
        }
        if present & (1 << i) != 0 {
            return Err(fail());
        }
        present |= 1 << i;
        let node = plan.nodes[i];
        match &plan.roles {
            Some(r) if i == r.role_field => {
                let mut seen = Seen::default();
                map.next_value_seed(NodeSeed { cx, node, out: Some(&mut seen) })?;
                role = seen.index;
            }
            Some(r) if i == r.union_field => map.next_value_seed(NodeSeed { cx, node, out: Some(&mut event) })?,
            _ => map.next_value_seed(NodeSeed { cx, node, out: None })?,
        }
    }
    if present & plan.required != plan.required {
        return Err(fail());
    }
    if let Some(r) = &plan.roles {
        let (Some(role), Some(member)) = (role, event.member) else { return Err(fail()) };
        let (allowed, forbidden) = r.events[member][role];
        if !allowed || present & r.env_forbidden[role] != 0 || event.present & forbidden != 0 {
            return Err(fail());
        }
        let _ = &r.roles;
    }
    if let Some(out) = out {
        out.present = present;
    }
    Ok(())
}

/// A union: the discriminator must be the first key (else the precise path decides).
fn union<'de, A: MapAccess<'de>>(cx: &Cx<'_>, u: usize, mut map: A, out: Option<&mut Seen>) -> Result<(), A::Error> {
    let plan = &cx.plan.unions[u];
    if map.next_key_seed(NameSeed(&plan.tag))? != Some(true) {
        return Err(fail());
    }
    let member = map.next_value_seed(TagSeed(&plan.tags))?;
    let o = plan.objects[member];
    // The member object has the discriminator among its fields: count it as present.
    let tag_field = cx.plan.objects[o].names.iter().position(|n| *n == plan.tag);
    let mut seen = Seen::default();
    let first_done = match tag_field {
        Some(i) => i,
        None => return Err(fail()),
    };
    object_after_tag(cx, o, map, first_done, &mut seen)?;
    if let Some(out) = out {
        out.member = Some(member);
        out.present = seen.present;
    }
    Ok(())
}

/// Like [`object`], with the discriminator field (index `tag`) already read and checked.
fn object_after_tag<'de, A: MapAccess<'de>>(
    cx: &Cx<'_>,
    o: usize,
    mut map: A,
    tag: usize,
    out: &mut Seen,
) -> Result<(), A::Error> {
    let plan = &cx.plan.objects[o];
    let mut present = 1u64 << tag;
    while let Some(i) = map.next_key_seed(KeySeed(&plan.names))? {
        if i == usize::MAX {
            match plan.other {
                None => return Err(fail()),
                Some(None) => map.next_value_seed(Skip)?,
                Some(Some(n)) => map.next_value_seed(NodeSeed { cx, node: n, out: None })?,
            }
            continue;
        }
        if present & (1 << i) != 0 {
            return Err(fail());
        }
        present |= 1 << i;
        map.next_value_seed(NodeSeed { cx, node: plan.nodes[i], out: None })?;
    }
    if present & plan.required != plan.required || plan.roles.is_some() {
        return Err(fail());
    }
    out.present = present;
    Ok(())
}

/// Matches a key against field names without allocating; yields the index, or `usize::MAX` when unknown.
struct KeySeed<'a>(&'a [String]);

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = usize;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed<'_> {
    type Value = usize;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a property name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<usize, E> {
        Ok(self.0.iter().position(|f| f == v).unwrap_or(usize::MAX))
    }
}

/// Whether a key is exactly `name`.
struct NameSeed<'a>(&'a str);

impl<'de> DeserializeSeed<'de> for NameSeed<'_> {
    type Value = bool;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for NameSeed<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a property name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        Ok(v == self.0)
    }
}

/// A discriminator value: the index of the member whose tag it is.
struct TagSeed<'a>(&'a [Value]);

impl<'de> DeserializeSeed<'de> for TagSeed<'_> {
    type Value = usize;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_any(self)
    }
}

impl Visitor<'_> for TagSeed<'_> {
    type Value = usize;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a discriminator value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<usize, E> {
        self.0.iter().position(|x| x.as_str() == Some(v)).ok_or_else(fail)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<usize, E> {
        self.0.iter().position(|x| x.as_bool() == Some(v)).ok_or_else(fail)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<usize, E> {
        self.0.iter().position(|x| x.as_f64() == Some(v as f64)).ok_or_else(fail)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<usize, E> {
        self.0.iter().position(|x| x.as_f64() == Some(v as f64)).ok_or_else(fail)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<usize, E> {
        self.0.iter().position(|x| x.as_f64() == Some(v)).ok_or_else(fail)
    }
}

/// Skips any value through `deserialize_any`, so that serde_json's nesting limit applies exactly as when the
/// precise path parses the line into a `Value` (`IgnoredAny` would skip arbitrarily deep input).
struct Skip;

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value_seed(Skip)?;
        }
        Ok(())
    }
}
