//! What a package may ask of its outputs: bounds the loader holds every package to, checked on the types as built
//! (before any pass that walks references), so a small hostile schema gets a located refusal instead of a stack
//! overflow, an output that grows with the cube of its size, or a checker that runs for hours on one value.
//!
//! - [`MAX_REF_DEPTH`]: the longest chain of types, each referring to the next by `$ref` (a reference back into
//!   the chain, recursion, does not lengthen it; 128 types are 127 `$ref`s). Every output and checker follows such a chain one level at a time.
//! - [`MAX_EXPANSION`]: how many subschemas one type applies at one place in a value (the value itself, or one
//!   item or property value below it) with every reference written out in place (a recursive reference counts
//!   once). It bounds what checking each part of a value can cost: a chain of `if`/`then`, each referring twice to
//!   the next link, doubles it at every link, while object types that refer to each other through their
//!   properties apply one schema at each place however many there are.
//!
//! A recursion that applies a schema twice to the same part of a value is refused in `branching.rs`.

use std::collections::BTreeMap;

use super::build::Types;
use super::Cx;
use crate::diag::SchemaErrorKind as K;
use crate::ir::evaluation::Evaluation;
use crate::ir::{Additional, Model, Node, Shape, TypeId};

/// The longest chain of references a package may have. Real packages stay far below: a message cannot nest
/// deeper than 127 levels anyway.
pub(crate) const MAX_REF_DEPTH: usize = 128;

/// The most subschemas one type may apply at one place in a value, references written out.
pub(crate) const MAX_EXPANSION: u64 = 1_000_000;

impl Cx {
    /// Refuses a package beyond [`MAX_REF_DEPTH`] or [`MAX_EXPANSION`], at the type that goes furthest. `false`
    /// when refused: the later passes, which follow references recursively, must not run.
    pub(super) fn check_limits(&mut self, types: &Types) -> bool {
        let refs: Vec<Vec<TypeId>> = types
            .slots
            .iter()
            .map(|s| {
                let mut out = Vec::new();
                if let Some(d) = &s.def {
                    d.node.visit(&mut |n: &Node| {
                        if let Shape::Ref(id) = n.shape {
                            out.push(id);
                        }
                    });
                }
                out
            })
            .collect();
        let depth = ref_depths(&refs);
        if let Some((i, &d)) = depth.iter().enumerate().max_by_key(|(i, d)| (**d, std::cmp::Reverse(*i))) {
            if d > MAX_REF_DEPTH {
                let msg = format!(
                    "a chain of {d} types, each referring to the next by `$ref`, starts at this type (at most \
                     {MAX_REF_DEPTH}): every output and checker follows such a chain one level at a time"
                );
                self.err(&types.slots[i].origin, K::TooComplex, msg);
                return false;
            }
        }
        // The chains are short now, so the expansion may recurse along them.
        let mut memo = BTreeMap::new();
        let mut worst: Option<(usize, u64)> = None;
        for i in 0..types.slots.len() {
            let e = expansion_of(types, TypeId(i), &mut memo);
            if e > MAX_EXPANSION && worst.is_none_or(|(_, w)| e > w) {
                worst = Some((i, e));
            }
        }
        if let Some((i, e)) = worst {
            let shown = if e == u64::MAX { "more than 2^64".to_string() } else { e.to_string() };
            let msg = format!(
                "this type applies {shown} subschemas at one place in a value with its `$ref`s written out (at \
                 most {MAX_EXPANSION}): checking each part of a value could apply that many (a chain of \
                 `if`/`then`/`allOf` parts that each refer to the next link more than once doubles it at every link)"
            );
            self.err(&types.slots[i].origin, K::TooComplex, msg);
            return false;
        }
        true
    }
}

impl Cx {
    /// Refuses an `unevaluatedProperties`/`unevaluatedItems` whose evaluation tests a branch that refers back to
    /// the type holding it (see the module's documentation), at the keyword.
    pub(super) fn check_unevaluated(&mut self, m: &Model) {
        let mut found = Vec::new();
        for (i, t) in m.types.iter().enumerate() {
            t.node.visit(&mut |n: &Node| {
                if let Shape::Unevaluated { inner, items, .. } = &n.shape {
                    let plan = m.evaluation(inner);
                    let mut tested = Vec::new();
                    tested_nodes(&plan, &mut tested);
                    if tested.iter().any(|x| reaches(m, x, TypeId(i))) {
                        found.push((n.origin.join(crate::ir::unevaluated_keyword(*items)), t.names.base.clone()));
                    }
                }
            });
        }
        for (at, name) in found {
            let msg = format!(
                "this keyword's evaluation tests a branch (`anyOf`, a `oneOf` that is no tagged union, `if`, \
                 `contains`) that leads back to `{name}`: every checker would validate that branch twice at each \
                 level of a message, which doubles with every level; refer back outside the tested branches"
            );
            self.err(&at, K::TooComplex, msg);
        }
    }
}

/// The nodes whose validity an evaluation plan tests.
fn tested_nodes<'e>(plan: &'e Evaluation, out: &mut Vec<&'e Node>) {
    match plan {
        Evaluation::None | Evaluation::Keys { .. } => {}
        Evaluation::Items { contains, .. } => out.extend(contains.as_deref()),
        Evaluation::All(plans) => plans.iter().for_each(|p| tested_nodes(p, out)),
        Evaluation::Valid(branches) => {
            for (n, p) in branches {
                out.push(n);
                tested_nodes(p, out);
            }
        }
        Evaluation::Cond { cond, then, otherwise } => {
            out.push(cond);
            tested_nodes(then, out);
            tested_nodes(otherwise, out);
        }
        Evaluation::Dependent { then, .. } => tested_nodes(then, out),
    }
}

/// Whether `from` refers, through any number of references, to type `to`.
fn reaches(m: &Model, from: &Node, to: TypeId) -> bool {
    m.reachable_types(from).get(to.0).copied().unwrap_or(false)
}

/// The longest reference chain from each type (1 for a type that refers to nothing), by an iterative depth-first
/// walk: a reference to a type still on the walk's path (recursion) is not followed.
fn ref_depths(refs: &[Vec<TypeId>]) -> Vec<usize> {
    const NEW: u8 = 0;
    const OPEN: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![NEW; refs.len()];
    let mut depth = vec![1usize; refs.len()];
    for start in 0..refs.len() {
        if state[start] != NEW {
            continue;
        }
        // (type, index of its next reference to follow)
        let mut stack = vec![(start, 0usize)];
        state[start] = OPEN;
        while let Some(&mut (t, ref mut next)) = stack.last_mut() {
            if let Some(&TypeId(r)) = refs[t].get(*next) {
                *next += 1;
                match state.get(r) {
                    Some(&NEW) => {
                        state[r] = OPEN;
                        stack.push((r, 0));
                    }
                    Some(&DONE) => depth[t] = depth[t].max(depth[r] + 1),
                    _ => {}
                }
            } else {
                state[t] = DONE;
                stack.pop();
                if let Some(&(parent, _)) = stack.last() {
                    depth[parent] = depth[parent].max(depth[t] + 1);
                }
            }
        }
    }
    depth
}

/// How many subschemas type `id` applies at one place in a value with its references written out; a type reached
/// again while it is being counted (recursion) counts 1. Memoized, so shared types are counted once each.
fn expansion_of(types: &Types, id: TypeId, memo: &mut BTreeMap<TypeId, Option<u64>>) -> u64 {
    match memo.get(&id) {
        Some(Some(e)) => return *e,
        Some(None) => return 1,
        None => {}
    }
    memo.insert(id, None);
    let e = types.slots.get(id.0).and_then(|s| s.def.as_ref()).map_or(1, |d| expansion(types, &d.node, memo));
    memo.insert(id, Some(e));
    e
}

fn expansion(types: &Types, n: &Node, memo: &mut BTreeMap<TypeId, Option<u64>>) -> u64 {
    let sum = |nodes: &mut dyn Iterator<Item = &Node>, memo: &mut BTreeMap<TypeId, Option<u64>>| {
        nodes.fold(1u64, |acc, x| acc.saturating_add(expansion(types, x, memo)))
    };
    match &n.shape {
        Shape::Ref(id) => 1u64.saturating_add(expansion_of(types, *id, memo)),
        Shape::Union(u) => {
            // One member checks a value, chosen by its tag.
            let most = u.members.iter().map(|m| expansion_of(types, m.ty, memo)).max().unwrap_or(0);
            1u64.saturating_add(most)
        }
        // An item or a property value is another place in the value: what applies there is counted apart, and
        // the place that gets the most is what one place costs. An item gets its `prefixItems` entry or `items`,
        // and `contains`; a property value its property's schema or `additionalProperties`, and every pattern it
        // matches; a name `propertyNames`.
        Shape::Array(a) => {
            let item = a.prefix.iter().chain(a.items.as_deref()).map(|x| expansion(types, x, memo)).max().unwrap_or(0);
            let contains = a.contains.as_ref().map_or(0, |c| expansion(types, &c.node, memo));
            1u64.max(item.saturating_add(contains))
        }
        Shape::Object(o) => {
            let extra = match &o.additional {
                Additional::Schema(s) => Some(&**s),
                _ => None,
            };
            let own = o.fields.iter().map(|f| &f.node).chain(extra).map(|x| expansion(types, x, memo)).max();
            let patterns =
                o.pattern_properties.iter().fold(0u64, |acc, (_, p)| acc.saturating_add(expansion(types, p, memo)));
            let names = o.property_names.as_deref().map_or(0, |n| expansion(types, n, memo));
            1u64.max(own.unwrap_or(0).saturating_add(patterns)).max(names)
        }
        Shape::Nullable(m) | Shape::Not(m) => sum(&mut std::iter::once(&**m), memo),
        Shape::Kinds(ms) | Shape::AllOf(ms) | Shape::AnyOf(ms) | Shape::OneOf(ms) => sum(&mut ms.iter(), memo),
        Shape::Cond { cond, then, otherwise } => {
            sum(&mut std::iter::once(&**cond).chain(then.as_deref()).chain(otherwise.as_deref()), memo)
        }
        Shape::Dependent { then, .. } => sum(&mut std::iter::once(&**then), memo),
        // Every checker validates `inner`, then walks it again to know what it evaluated: twice.
        Shape::Unevaluated { inner, rest, .. } => sum(&mut [&**inner, &**inner, &**rest].into_iter(), memo),
        Shape::Any
        | Shape::Never
        | Shape::Null
        | Shape::Boolean
        | Shape::String(_)
        | Shape::Number(_)
        | Shape::Const(_)
        | Shape::Enum(_) => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depths_follow_chains_and_skip_recursion() {
        // 0 -> 1 -> 2, 2 -> 0 (recursion), 3 alone.
        let refs = vec![vec![TypeId(1)], vec![TypeId(2)], vec![TypeId(0)], vec![]];
        assert_eq!(ref_depths(&refs), vec![3, 2, 1, 1]);
        // A long chain takes no stack.
        let n = 200_000;
        let chain: Vec<Vec<TypeId>> = (0..n).map(|i| if i + 1 < n { vec![TypeId(i + 1)] } else { vec![] }).collect();
        assert_eq!(ref_depths(&chain)[0], n);
    }
}
