//! Discriminated unions, and `$ref` cycles.
//!
//! A `oneOf` or `anyOf` whose members are all object types that fix one common, required property with a
//! distinct `const` (a string, a boolean or an integer) is a discriminated union: exactly one member can match,
//! and which one is decided by that property alone, so checking the member the discriminator names is exact.
//! `x-discriminator` names the property (and makes it an error when the members do not fit); without it the
//! first such property of the first member is taken. `x-union` members (files of a directory) must fit too.
//!
//! A type that refers back to itself must pass through an object or an array on the way (a property, an item):
//! `a -> b -> a` with nothing between would make every checker loop, so it is refused, located at the `$ref`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::build::Types;
use super::Cx;
use crate::diag::SchemaErrorKind as K;
use crate::ir::*;

impl Cx {
    pub(crate) fn recognize_unions(&mut self, types: &mut Types) {
        let consts = object_consts(types);
        // The members reported not fitting a discriminator: another union of the same member on the same
        // property is the same mistake.
        let mut misfits = BTreeSet::new();
        let n = types.slots.len();
        for i in 0..n {
            let Some(mut def) = types.slots[i].def.take() else { continue };
            self.unions_in(types, &consts, &mut misfits, &mut def.node, true);
            types.slots[i].def = Some(def);
        }
    }

    fn unions_in(
        &mut self,
        types: &mut Types,
        consts: &Consts,
        misfits: &mut BTreeSet<(TypeId, String)>,
        node: &mut Node,
        body: bool,
    ) {
        match &mut node.shape {
            Shape::Union(u) => self.check_union(types, consts, &node.origin, u),
            Shape::AnyOf(members) | Shape::OneOf(members) => {
                for m in members.iter_mut() {
                    self.unions_in(types, consts, misfits, m, false);
                }
                let forced = self.value_at(&node.origin).and_then(|v| v.get("x-discriminator")).cloned();
                let ids: Option<Vec<TypeId>> = members.iter().map(|m| member_object(types, m)).collect();
                let found =
                    ids.as_ref().and_then(|ids| discriminator(consts, ids, forced.as_ref().and_then(Value::as_str)));
                match (found, forced) {
                    (Some((tag, tags)), _) => {
                        let ids = ids.unwrap_or_default();
                        let members = tags.into_iter().zip(ids).map(|(tag, ty)| Member { tag, ty }).collect();
                        let union = Shape::Union(UnionShape {
                            discriminator: tag,
                            members,
                            removed: Vec::new(),
                            events: false,
                        });
                        if body {
                            node.shape = union;
                        } else {
                            let inner = Node { origin: node.origin.clone(), description: None, shape: union };
                            let at = node.origin.clone();
                            node.shape = self.hoist_union(types, &at, inner);
                        }
                    }
                    (None, Some(f)) => {
                        let at = node.origin.join("x-discriminator");
                        match f.as_str() {
                            // Refused where it is read (`build`).
                            None => self.echo(&at),
                            Some(f) => {
                                let found = misfit(types, consts, members, f, &|at| self.value_at(at).cloned());
                                // Not a member whose tag is refused already, or reported not fitting another union.
                                let mut new: Vec<&Misfit> = found
                                    .iter()
                                    .filter(|Misfit { ty, .. }| {
                                        ty.is_none_or(|ty| {
                                            !self.tag_refused(&types.slots[ty.0].origin, f)
                                                && !misfits.contains(&(ty, f.to_string()))
                                        })
                                    })
                                    .collect();
                                if found.is_empty() {
                                    self.err(&at, K::InvalidValue, format!("not a discriminated union on `{f}`"));
                                } else if new.is_empty() {
                                    self.echo(&at);
                                } else {
                                    // Every member that does not fit, in one error (it named the first only;
                                    // helper 104).
                                    misfits.extend(new.iter().filter_map(|m| m.ty.map(|t| (t, f.to_string()))));
                                    // The members built of parts last, just before the advice about them.
                                    new.sort_by_key(|m| m.of_parts);
                                    let why: Vec<&str> = new.iter().map(|m| m.why.as_str()).collect();
                                    let mut why = why.join("; ");
                                    if new.iter().any(|m| m.of_parts) {
                                        why.push_str(PARTS_HINT);
                                    }
                                    self.err(
                                        &at,
                                        K::InvalidValue,
                                        format!("not a discriminated union on `{f}`: {why}"),
                                    );
                                }
                            }
                        }
                    }
                    (None, None) => {}
                }
            }
            Shape::AllOf(ms) | Shape::Kinds(ms) => {
                ms.iter_mut().for_each(|m| self.unions_in(types, consts, misfits, m, false))
            }
            Shape::Nullable(m) | Shape::Not(m) => self.unions_in(types, consts, misfits, m, false),
            Shape::Cond { cond, then, otherwise } => {
                self.unions_in(types, consts, misfits, cond, false);
                if let Some(t) = then {
                    self.unions_in(types, consts, misfits, t, false);
                }
                if let Some(e) = otherwise {
                    self.unions_in(types, consts, misfits, e, false);
                }
            }
            Shape::Dependent { then, .. } => self.unions_in(types, consts, misfits, then, false),
            Shape::Unevaluated { inner, rest, .. } => {
                self.unions_in(types, consts, misfits, inner, false);
                self.unions_in(types, consts, misfits, rest, false);
            }
            Shape::Array(a) => {
                a.prefix.iter_mut().for_each(|m| self.unions_in(types, consts, misfits, m, false));
                if let Some(it) = &mut a.items {
                    self.unions_in(types, consts, misfits, it, false);
                }
                if let Some(c) = &mut a.contains {
                    self.unions_in(types, consts, misfits, &mut c.node, false);
                }
            }
            Shape::Object(o) => {
                for f in &mut o.fields {
                    self.unions_in(types, consts, misfits, &mut f.node, false);
                }
                if let Additional::Schema(s) = &mut o.additional {
                    self.unions_in(types, consts, misfits, s, false);
                }
                for (_, s) in &mut o.pattern_properties {
                    self.unions_in(types, consts, misfits, s, false);
                }
            }
            _ => {}
        }
    }

    /// The type of a union that is not a type's whole body. Where a type at `at` has the whole schema there (a
    /// `oneOf` beside `properties`, in the `allOf` the loader makes of them), the union is a part of it: it takes
    /// a derived name, and the name keywords and annotations at `at` stay the whole's (it took the whole's
    /// `x-name` too, and the two clashed; helper 104).
    fn hoist_union(&mut self, types: &mut Types, at: &Origin, inner: Node) -> Shape {
        let doc = self.doc(at);
        let v = doc.schema(at);
        let part = types.has_whole(at);
        let (base, explicit) = match self.x_name(at, v).filter(|_| !part) {
            Some(n) => (n, true),
            None => (super::naming::derived_name(self, types, at), false),
        };
        let def = TypeDef {
            names: Names::UNSET,
            aliases: Vec::new(),
            explicit_name: explicit,
            part,
            description: v.get("description").and_then(Value::as_str).map(String::from),
            examples: Vec::new(),
            annotations: if part { Annotations::default() } else { super::build::annotations(v) },
            origin: at.clone(),
            renamed_from: None,
            node: inner,
        };
        let id = types.push(at, base, explicit, Some(def), self.dynamic.current, part);
        Shape::Ref(id)
    }

    /// Fills in and checks the tags of an `x-union`.
    fn check_union(&mut self, types: &Types, consts: &Consts, at: &Origin, u: &mut UnionShape) {
        let mut seen: BTreeMap<String, TypeId> = BTreeMap::new();
        for m in &mut u.members {
            let origin = types.slots[m.ty.0].origin.clone();
            let tag =
                consts.get(&m.ty).and_then(|c| c.iter().find(|(k, _)| *k == u.discriminator)).map(|(_, v)| v.clone());
            match tag {
                Some(t) => {
                    let key = t.to_string();
                    if let Some(prev) = seen.get(&key) {
                        let prev_file = types.slots[prev.0].origin.file.clone();
                        self.err(
                            &origin.join("properties").join(&u.discriminator).join("const"),
                            K::DuplicateTag,
                            format!("discriminator value {key} is already used by `{prev_file}`"),
                        );
                    }
                    seen.insert(key, m.ty);
                    m.tag = t;
                }
                None if self.tag_refused(&origin, &u.discriminator) => {}
                None => self.err(
                    &origin,
                    K::InvalidValue,
                    format!(
                        "a member of the union at {}#{} must be an object with `{}` required and fixed by a `const`",
                        at.file, at.pointer, u.discriminator
                    ),
                ),
            }
        }
    }

    /// Whether what makes the tag of the union member at `origin` (its `type`, `required`, `properties` or tag
    /// property) is refused already: the member not being tagged then is not reported again.
    fn tag_refused(&self, origin: &Origin, discriminator: &str) -> bool {
        let properties = origin.join("properties");
        [origin.join("type"), origin.join("required"), properties.join(discriminator)]
            .iter()
            .any(|k| self.refused_within(k))
            || self.refused_at(&properties)
    }

    /// Refuses `$ref` cycles that pass through no object or array.
    pub(crate) fn check_ref_cycles(&mut self, types: &Types) {
        let mut state = vec![0u8; types.slots.len()];
        for i in 0..types.slots.len() {
            let mut stack = Vec::new();
            self.visit_type(types, TypeId(i), &mut state, &mut stack);
        }
    }

    fn visit_type(&mut self, types: &Types, id: TypeId, state: &mut [u8], stack: &mut Vec<(TypeId, Origin)>) {
        match state[id.0] {
            2 => return,
            1 => {
                let start = stack.iter().position(|(t, _)| *t == id).unwrap_or(0);
                let names: Vec<String> = stack[start..].iter().map(|(t, _)| types.slots[t.0].base.clone()).collect();
                let at = stack.last().map(|(_, o)| o.clone()).unwrap_or_default();
                self.err(
                    &at.join("$ref"),
                    K::RefCycle,
                    format!(
                        "`$ref` cycle with no object or array between: {} -> {}",
                        names.join(" -> "),
                        types.slots[id.0].base
                    ),
                );
                return;
            }
            _ => {}
        }
        state[id.0] = 1;
        if let Some(def) = &types.slots[id.0].def {
            let mut refs = Vec::new();
            unguarded_refs(&def.node, &mut refs);
            for (r, at) in refs {
                stack.push((id, at));
                self.visit_type(types, r, state, stack);
                stack.pop();
            }
        }
        state[id.0] = 2;
    }
}

/// The types a node refers to without an object or array in between.
fn unguarded_refs(n: &Node, out: &mut Vec<(TypeId, Origin)>) {
    match &n.shape {
        Shape::Ref(id) => out.push((*id, n.origin.clone())),
        Shape::AllOf(ms) | Shape::AnyOf(ms) | Shape::OneOf(ms) | Shape::Kinds(ms) => {
            ms.iter().for_each(|m| unguarded_refs(m, out))
        }
        Shape::Nullable(m) | Shape::Not(m) => unguarded_refs(m, out),
        Shape::Cond { cond, then, otherwise } => {
            unguarded_refs(cond, out);
            then.iter().chain(otherwise.iter()).for_each(|m| unguarded_refs(m, out));
        }
        // Applied to the same object, not to a value inside it.
        Shape::Dependent { then, .. } => unguarded_refs(then, out),
        // `rest` applies to the properties, inside the object.
        Shape::Unevaluated { inner, .. } => unguarded_refs(inner, out),
        _ => {}
    }
}

/// Per object type: its required properties fixed by a scalar `const` (string, boolean or integer).
type Consts = BTreeMap<TypeId, Vec<(String, Value)>>;

fn object_consts(types: &Types) -> Consts {
    let mut out = Consts::new();
    for (i, s) in types.slots.iter().enumerate() {
        let Some(Shape::Object(o)) = s.def.as_ref().map(|d| &d.node.shape) else { continue };
        let list: Vec<(String, Value)> = o
            .fields
            .iter()
            .filter(|f| f.required)
            .filter_map(|f| match &f.node.shape {
                Shape::Const(v) if is_tag(v) => Some((f.name.clone(), v.clone())),
                _ => None,
            })
            .collect();
        out.insert(TypeId(i), list);
    }
    out
}

fn is_tag(v: &Value) -> bool {
    match v {
        Value::String(_) | Value::Bool(_) => true,
        Value::Number(n) => n.as_i64().is_some() || n.as_u64().is_some(),
        _ => false,
    }
}

/// What a member built of parts is told (once for all of them): what a member must be, and what to do.
const PARTS_HINT: &str = ": a discriminated union's members are objects that declare the tag's `const` themselves \
                          (write the member as one object, put what applies to every member beside the union \
                          instead, or drop `x-discriminator` for a plain `oneOf`)";

/// A member that keeps a union from being discriminated ([`misfit`]).
struct Misfit {
    /// Its type (the one it refers to, through aliases), when it has one.
    ty: Option<TypeId>,
    /// Why, in words.
    why: String,
    /// Whether it is built of parts ([`PARTS_HINT`] says what to do).
    of_parts: bool,
}

/// Each member of `members` that keeps them from being a union discriminated by `f`, in order.
fn misfit(
    types: &Types,
    consts: &Consts,
    members: &[Node],
    f: &str,
    value_at: &dyn Fn(&Origin) -> Option<Value>,
) -> Vec<Misfit> {
    let mut out = Vec::new();
    let mut seen: Vec<(&Value, TypeId)> = Vec::new();
    for m in members {
        let Some(ty) = member_object(types, m) else {
            let last = refs_of(types, m).last().copied();
            let at = last.map_or(&m.origin, |id| &types.slots[id.0].origin);
            let shape = last.and_then(|id| types.slots[id.0].def.as_ref()).map_or(&m.shape, |d| &d.node.shape);
            // A member built of parts (`allOf` of a base and its own properties, as OpenAPI writes inheritance) is
            // an object, but not one object schema that declares the tag itself (found by helper 76).
            // The applicators the author wrote beside the member's properties, which make it parts (it said `allOf`
            // of a member that has an `if` beside its properties; helper 104).
            let beside: Vec<&str> = value_at(at).map_or_else(Vec::new, |v| {
                ["allOf", "anyOf", "oneOf", "not", "if", "$ref", "dependentSchemas", "unevaluatedProperties"]
                    .into_iter()
                    .filter(|k| v.get(*k).is_some())
                    .collect()
            });
            let written = match beside.as_slice() {
                ["allOf"] | [] => "an `allOf` of parts".to_string(),
                ks => format!(
                    "built of parts (its {} beside its properties)",
                    ks.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                ),
            };
            let of_parts = matches!(shape, Shape::AllOf(_));
            let why =
                if of_parts { format!("is {written}, not one object schema") } else { "is not an object type".into() };
            out.push(Misfit { ty: last, why: format!("the member at {}#{} {why}", at.file, at.pointer), of_parts });
            continue;
        };
        let at = &types.slots[ty.0].origin;
        match consts.get(&ty).and_then(|l| l.iter().find(|(k, _)| k == f)) {
            None => out.push(Misfit {
                ty: Some(ty),
                why: format!(
                    "the member at {}#{} does not have `{f}` required and fixed by a `const` (a string, a boolean or an integer)",
                    at.file, at.pointer
                ),
                of_parts: false,
            }),
            Some((_, v)) => {
                if let Some((_, other)) = seen.iter().find(|(x, _)| *x == v) {
                    let o = &types.slots[other.0].origin;
                    out.push(Misfit {
                        ty: Some(ty),
                        why: format!("the members at {}#{} and {}#{} have the same `{f}`, {v}", o.file, o.pointer, at.file, at.pointer),
                        of_parts: false,
                    });
                } else {
                    seen.push((v, ty));
                }
            }
        }
    }
    out
}

/// The types a node (a union member, a property) refers to: the one it names and, through aliases (`$defs` entries that are only a
/// `$ref`), the ones after it; empty when it is no `$ref`.
pub(super) fn refs_of(types: &Types, m: &Node) -> Vec<TypeId> {
    let mut out = Vec::new();
    let mut next = match m.shape {
        Shape::Ref(id) => Some(id),
        _ => None,
    };
    while let Some(id) = next.filter(|id| !out.contains(id)) {
        out.push(id);
        next = match types.slots.get(id.0).and_then(|s| s.def.as_ref()).map(|d| &d.node.shape) {
            Some(Shape::Ref(n)) => Some(*n),
            _ => None,
        };
    }
    out
}

/// The object type a union member names, through aliases.
fn member_object(types: &Types, m: &Node) -> Option<TypeId> {
    let last = *refs_of(types, m).last()?;
    matches!(types.slots[last.0].def.as_ref().map(|d| &d.node.shape), Some(Shape::Object(_))).then_some(last)
}

/// The discriminator of members, and each member's value: `forced`, or the first fitting property.
fn discriminator(consts: &Consts, ids: &[TypeId], forced: Option<&str>) -> Option<(String, Vec<Value>)> {
    let first = consts.get(ids.first()?)?;
    let candidates: Vec<&str> = match forced {
        Some(f) => vec![f],
        None => first.iter().map(|(k, _)| k.as_str()).collect(),
    };
    'next: for c in candidates {
        let mut tags: Vec<&Value> = Vec::new();
        let mut seen = crate::engine::ValueSet::default();
        for id in ids {
            let Some((_, v)) = consts.get(id).and_then(|l| l.iter().find(|(k, _)| k == c)) else {
                continue 'next;
            };
            if !seen.insert(v) {
                continue 'next;
            }
            tags.push(v);
        }
        return Some((c.to_string(), tags.into_iter().cloned().collect()));
    }
    None
}
