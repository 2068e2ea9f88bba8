//! Recursion that applies a schema twice to the same part of a value, again at every level: refused.
//!
//! `{"type": "array", "items": {"allOf": [{"$ref": "#"}, {"$ref": "#"}]}}` checks every item of an array twice,
//! each of their items four times, and so on: a 60-byte line of 30 nested arrays took the engine 35 s, and every
//! generated checker does the same work. It needs no `unevaluated*` ([`super::limits`] refuses that case at its
//! keyword): two `oneOf` members that both hold `items: {"$ref": "#"}`, or `allOf` parts that both refer back for
//! the same property, are enough.
//!
//! The schema is read as an automaton over the path into a value: a node *descends* to a child node for a
//! property, a pattern of properties, the other properties, an item, the items from an index, every item
//! (`contains`), or what `unevaluated*` leaves; and it applies other nodes *in place* (`allOf`, `anyOf`, `oneOf`,
//! `not`, `if`/`then`/`else`, `dependentSchemas`, a `$ref`, a union's members, a `type` list's kinds). The number of
//! times a checker applies a node at one place of a value is the number of runs of this automaton along the path
//! to it. That number grows exponentially with the depth exactly when, in a cycle, two runs can part and meet again
//! (the automaton is *exponentially ambiguous*: Weber and Seidl's criterion, decided on the product of the
//! automaton with itself). Two runs cannot part at a union member, a kind of a `type` list or between `then` and
//! `else`, since one value picks one; nor for two properties of different names, an item and a property, or a
//! declared property and the same object's `additionalProperties`, nor for two patterns anchored on different
//! literal prefixes (`^a`, `^b`). Other pairs of patterns are taken to overlap (deciding whether two regular
//! expressions share a match is not attempted), which may refuse a schema that only looks ambiguous; none of the
//! JSON-Schema-Test-Suite's does.
//!
//! Only the recursive parts of a schema (strongly connected through descents) are examined, so a schema without
//! recursion costs one walk over its nodes.

use std::collections::HashMap;

use super::Cx;
use crate::diag::SchemaErrorKind as K;
use crate::ir::{Additional, Model, Node, ObjectShape, Pattern, Shape};

/// The most states (nodes of one recursive part that a descent leads to) the product is built for; past it the
/// schema is refused as too complex to bound.
const MAX_STATES: usize = 2_000;

/// The most in-place applications the closures of one recursive part may hold.
const MAX_CLOSURE: usize = 1_000_000;

/// The part of a value a descent applies its child node to.
#[derive(Clone, Copy)]
enum Label<'m> {
    /// One property.
    Prop(&'m str),
    /// The properties `owner` (an object node) neither declares nor matches by a pattern.
    Other { owner: usize },
    /// The properties a pattern of `owner` matches.
    Pattern { owner: usize, re: &'m Pattern },
    /// The properties an `unevaluatedProperties` at `owner` is left with.
    UnevaluatedProps { owner: usize },
    /// One item.
    Item(usize),
    /// The items from this index on.
    ItemsFrom(usize),
    /// Every item (`contains`).
    AnyItem,
    /// The items an `unevaluatedItems` at `owner` is left with.
    UnevaluatedItems { owner: usize },
}

/// One application of a node in place: the node, the members picked on the way (union, `type` list or
/// `if`/`else` node and the member), and the `unevaluated*` nodes whose evaluated part it is in.
#[derive(Clone)]
struct Applied {
    node: usize,
    picks: Vec<(usize, usize)>,
    inside: Vec<usize>,
}

/// A descent from a state: its label, the application it descends from, where it leads.
struct Step<'m> {
    label: Label<'m>,
    from: Applied,
    to: usize,
}

/// The schema's nodes, indexed, with their in-place and descending edges.
struct Graph<'m> {
    nodes: Vec<&'m Node>,
    /// In place: (node, the pick it takes if any, whether it enters an `unevaluated*` node's evaluated part).
    apply: Vec<Vec<(usize, Option<usize>, bool)>>,
    descend: Vec<Vec<(Label<'m>, usize)>>,
    /// Each pattern of the schema, compiled once (`None`: Rust cannot compile it, so it may match anything).
    regexes: HashMap<*const Pattern, Option<regex::Regex>>,
}

impl<'m> Graph<'m> {
    fn of(m: &'m Model) -> Graph<'m> {
        let mut index: HashMap<*const Node, usize> = HashMap::new();
        let mut nodes: Vec<&'m Node> = Vec::new();
        let mut stack: Vec<&'m Node> = m.types.iter().map(|t| &t.node).collect();
        while let Some(n) = stack.pop() {
            if index.contains_key(&(n as *const Node)) {
                continue;
            }
            index.insert(n, nodes.len());
            nodes.push(n);
            stack.extend(children(n));
        }
        let id = |n: &Node| index[&(n as *const Node)];
        let root = |t: crate::ir::TypeId| id(&m.ty(t).node);
        let mut apply = vec![Vec::new(); nodes.len()];
        let mut descend = vec![Vec::new(); nodes.len()];
        for (i, n) in nodes.iter().enumerate() {
            let (a, d) = (&mut apply[i], &mut descend[i]);
            match &n.shape {
                Shape::Ref(t) => a.push((root(*t), None, false)),
                Shape::Union(u) => {
                    a.extend(u.members.iter().enumerate().map(|(k, mem)| (root(mem.ty), Some(k), false)))
                }
                Shape::Kinds(ms) => a.extend(ms.iter().enumerate().map(|(k, x)| (id(x), Some(k), false))),
                Shape::Nullable(x) | Shape::Not(x) => a.push((id(x), None, false)),
                Shape::AllOf(ms) | Shape::AnyOf(ms) | Shape::OneOf(ms) => {
                    a.extend(ms.iter().map(|x| (id(x), None, false)))
                }
                Shape::Cond { cond, then, otherwise } => {
                    a.push((id(cond), None, false));
                    a.extend(then.iter().map(|x| (id(x), Some(0), false)));
                    a.extend(otherwise.iter().map(|x| (id(x), Some(1), false)));
                }
                Shape::Dependent { then, .. } => a.push((id(then), None, false)),
                Shape::Unevaluated { inner, rest, items } => {
                    a.push((id(inner), None, true));
                    let label = if *items {
                        Label::UnevaluatedItems { owner: i }
                    } else {
                        Label::UnevaluatedProps { owner: i }
                    };
                    d.push((label, id(rest)));
                }
                Shape::Object(o) => {
                    d.extend(o.fields.iter().map(|f| (Label::Prop(&f.name), id(&f.node))));
                    if let Additional::Schema(x) = &o.additional {
                        d.push((Label::Other { owner: i }, id(x)));
                    }
                    d.extend(o.pattern_properties.iter().map(|(p, x)| (Label::Pattern { owner: i, re: p }, id(x))));
                    // `propertyNames` applies to a key, a string: nothing below it.
                }
                Shape::Array(arr) => {
                    d.extend(arr.prefix.iter().enumerate().map(|(k, x)| (Label::Item(k), id(x))));
                    d.extend(arr.items.iter().map(|x| (Label::ItemsFrom(arr.prefix.len()), id(x))));
                    d.extend(arr.contains.iter().map(|c| (Label::AnyItem, id(&c.node))));
                }
                _ => {}
            }
        }
        let mut regexes = HashMap::new();
        for n in &nodes {
            if let Shape::Object(o) = &n.shape {
                for (p, _) in &o.pattern_properties {
                    regexes.entry(p as *const Pattern).or_insert_with(|| regex::Regex::new(&p.rust).ok());
                }
            }
        }
        Graph { nodes, apply, descend, regexes }
    }

    fn object(&self, owner: usize) -> Option<&'m ObjectShape> {
        match &self.nodes[owner].shape {
            Shape::Object(o) => Some(o),
            _ => None,
        }
    }
}

/// Every node directly below `n` (in place or by a descent; a `$ref` is an edge, not a child).
fn children(n: &Node) -> Vec<&Node> {
    match &n.shape {
        Shape::Array(a) => {
            a.prefix.iter().chain(a.items.as_deref()).chain(a.contains.as_ref().map(|c| &*c.node)).collect()
        }
        Shape::Object(o) => {
            let extra = match &o.additional {
                Additional::Schema(s) => Some(&**s),
                _ => None,
            };
            o.fields
                .iter()
                .map(|f| &f.node)
                .chain(extra)
                .chain(o.pattern_properties.iter().map(|(_, p)| p))
                .chain(o.property_names.as_deref())
                .collect()
        }
        Shape::Nullable(x) | Shape::Not(x) => vec![x],
        Shape::Kinds(ms) | Shape::AllOf(ms) | Shape::AnyOf(ms) | Shape::OneOf(ms) => ms.iter().collect(),
        Shape::Cond { cond, then, otherwise } => {
            std::iter::once(&**cond).chain(then.as_deref()).chain(otherwise.as_deref()).collect()
        }
        Shape::Dependent { then, .. } => vec![then],
        Shape::Unevaluated { inner, rest, .. } => vec![inner, rest],
        _ => Vec::new(),
    }
}

/// The strongly connected components of a graph (Tarjan's algorithm without recursion): a component id per vertex.
fn components(adjacent: &[Vec<usize>]) -> Vec<usize> {
    let n = adjacent.len();
    let (mut index, mut low, mut comp) = (vec![usize::MAX; n], vec![0; n], vec![usize::MAX; n]);
    let (mut on_stack, mut stack, mut next, mut count) = (vec![false; n], Vec::new(), 0, 0);
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work = vec![(start, 0usize)];
        index[start] = next;
        low[start] = next;
        next += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&mut (v, ref mut k)) = work.last_mut() {
            if let Some(&w) = adjacent[v].get(*k) {
                *k += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp[w] = count;
                    if w == v {
                        break;
                    }
                }
                count += 1;
            }
        }
    }
    comp
}

impl Cx {
    /// Refuses a recursion that applies a node twice to the same part of a value at every level (see the module's
    /// documentation), at the node where the two runs part.
    pub(super) fn check_branching(&mut self, m: &Model) {
        let g = Graph::of(m);
        let adjacent: Vec<Vec<usize>> = (0..g.nodes.len())
            .map(|i| g.apply[i].iter().map(|e| e.0).chain(g.descend[i].iter().map(|e| e.1)).collect())
            .collect();
        let comp = components(&adjacent);
        // The recursive parts: components a descent stays inside (a cycle in place alone is a `$ref` cycle,
        // refused before).
        let mut parts: HashMap<usize, Vec<usize>> = HashMap::new();
        for (i, d) in g.descend.iter().enumerate() {
            if d.iter().any(|(_, to)| comp[*to] == comp[i]) {
                parts.entry(comp[i]).or_default();
            }
        }
        for (i, c) in comp.iter().enumerate() {
            if let Some(p) = parts.get_mut(c) {
                p.push(i);
            }
        }
        let mut found: Vec<(usize, &'static str)> = Vec::new();
        let mut keys: Vec<_> = parts.keys().copied().collect();
        keys.sort_unstable();
        for c in keys {
            match ambiguous(&g, &comp, c, &parts[&c]) {
                Ok(Some(at)) => found.push((at, "")),
                Ok(None) => {}
                Err(at) => found.push((at, "too-large")),
            }
        }
        for (at, why) in found {
            let msg = if why.is_empty() {
                "a value can reach this schema along two different paths of its parts at the same place, and again at \
                 every level below (e.g. two `allOf`, `anyOf` or `oneOf` parts that both lead back here for the same \
                 property or item): every checker would apply it twice as often at each level of a message, which \
                 doubles with every level; let one branch refer back, or tell the branches apart by a `const` tag"
            } else {
                "this recursive part of the schema is too large to show that checking a value stays linear in its size"
            };
            self.err(&g.nodes[at].origin, K::TooComplex, msg.to_string());
        }
    }
}

/// Whether the recursive part `c` (its nodes `part`) is exponentially ambiguous: `Some(node)` where two runs part.
/// `Err(node)` when it is too large to decide.
fn ambiguous(g: &Graph<'_>, comp: &[usize], c: usize, part: &[usize]) -> Result<Option<usize>, usize> {
    let inside = |n: usize| comp[n] == c;
    // States: the nodes of the part a descent leads to.
    let mut states: Vec<usize> =
        part.iter().flat_map(|&i| g.descend[i].iter().map(|(_, to)| *to)).filter(|&t| inside(t)).collect();
    states.sort_unstable();
    states.dedup();
    if states.len() > MAX_STATES {
        return Err(states[0]);
    }
    let state_of: HashMap<usize, usize> = states.iter().enumerate().map(|(k, &n)| (n, k)).collect();
    // Each state's descents, from every application in place (with its multiplicity: `allOf` of the same `$ref`
    // twice is two applications).
    let mut budget = MAX_CLOSURE;
    let mut steps: Vec<Vec<Step<'_>>> = Vec::with_capacity(states.len());
    for &s in &states {
        let mut out = Vec::new();
        let mut stack = vec![Applied { node: s, picks: Vec::new(), inside: Vec::new() }];
        while let Some(a) = stack.pop() {
            budget = budget.checked_sub(1).ok_or(s)?;
            for &(label, to) in &g.descend[a.node] {
                if inside(to) {
                    out.push(Step { label, from: a.clone(), to: state_of[&to] });
                }
            }
            for &(to, pick, enters) in &g.apply[a.node] {
                if inside(to) {
                    let mut b = a.clone();
                    b.node = to;
                    if let Some(k) = pick {
                        b.picks.push((a.node, k));
                    }
                    if enters {
                        b.inside.push(a.node);
                    }
                    stack.push(b);
                }
            }
        }
        steps.push(out);
    }
    // The product: pairs of states two runs can be in at one place of a value, from every diagonal pair.
    let n = states.len();
    let mut pair_id: HashMap<(usize, usize), usize> = HashMap::new();
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut edges: Vec<Vec<usize>> = Vec::new();
    let mut splits: Vec<(usize, usize)> = Vec::new();
    for q in 0..n {
        pair_id.insert((q, q), pairs.len());
        pairs.push((q, q));
        edges.push(Vec::new());
    }
    let mut next = 0;
    while next < pairs.len() {
        let (s1, s2) = pairs[next];
        for (i1, a) in steps[s1].iter().enumerate() {
            for (i2, b) in steps[s2].iter().enumerate() {
                if !compatible(a, b) || !overlap(g, a, b) {
                    continue;
                }
                let key = (a.to, b.to);
                let to = *pair_id.entry(key).or_insert_with(|| {
                    pairs.push(key);
                    edges.push(Vec::new());
                    pairs.len() - 1
                });
                if pairs.len() > MAX_STATES * MAX_STATES / 4 {
                    return Err(states[s1]);
                }
                edges[next].push(to);
                if s1 == s2 && i1 != i2 && a.to == b.to {
                    splits.push((next, to));
                }
            }
        }
        next += 1;
    }
    let pcomp = components(&edges);
    let mut diagonal: HashMap<usize, usize> = HashMap::new();
    for (k, &(s1, s2)) in pairs.iter().enumerate() {
        if s1 == s2 {
            diagonal.entry(pcomp[k]).or_insert(states[s1]);
        }
    }
    for (k, &(s1, s2)) in pairs.iter().enumerate() {
        if s1 != s2 {
            if let Some(&at) = diagonal.get(&pcomp[k]) {
                return Ok(Some(at));
            }
        }
    }
    for (from, to) in splits {
        if pcomp[from] == pcomp[to] {
            if let Some(&at) = diagonal.get(&pcomp[from]) {
                return Ok(Some(at));
            }
        }
    }
    Ok(None)
}

/// Two applications a single value can make together: they pick no two different members of one node.
fn compatible(a: &Step<'_>, b: &Step<'_>) -> bool {
    a.from.picks.iter().all(|(n, k)| b.from.picks.iter().all(|(m, j)| n != m || k == j))
}

/// Whether two descents can apply to one part of a value.
fn overlap(g: &Graph<'_>, a: &Step<'_>, b: &Step<'_>) -> bool {
    use Label::*;
    let declared = |owner: usize, name: &str| {
        g.object(owner).is_some_and(|o| {
            o.fields.iter().any(|f| f.name == name) || o.pattern_properties.iter().any(|(p, _)| matches(g, p, name))
        })
    };
    // What an `unevaluated*` node is left with excludes what its own evaluated part descends to.
    let left_with = |owner: usize, other: &Step<'_>| !other.from.inside.contains(&owner);
    match (a.label, b.label) {
        (Prop(x), Prop(y)) => x == y,
        (Prop(x), Other { owner }) | (Other { owner }, Prop(x)) => !declared(owner, x),
        (Prop(x), Pattern { re, .. }) | (Pattern { re, .. }, Prop(x)) => matches(g, re, x),
        (Other { owner: o1 }, Pattern { owner: o2, .. }) | (Pattern { owner: o2, .. }, Other { owner: o1 }) => o1 != o2,
        (Pattern { re: p, .. }, Pattern { re: q, .. }) => {
            // `^a…` and `^b…` share no match; anything else is taken to (see the module's documentation).
            match (literal_prefix(&p.source), literal_prefix(&q.source)) {
                (Some(x), Some(y)) => x.starts_with(&y) || y.starts_with(&x),
                _ => true,
            }
        }
        (Other { .. }, Other { .. }) => true,
        (UnevaluatedProps { owner }, Prop(_) | Other { .. } | Pattern { .. }) => left_with(owner, b),
        (Prop(_) | Other { .. } | Pattern { .. }, UnevaluatedProps { owner }) => left_with(owner, a),
        (UnevaluatedProps { .. }, UnevaluatedProps { .. }) => true,
        (Item(i), Item(j)) => i == j,
        (Item(i), ItemsFrom(k)) | (ItemsFrom(k), Item(i)) => i >= k,
        (ItemsFrom(_), ItemsFrom(_)) => true,
        (AnyItem, Item(_) | ItemsFrom(_) | AnyItem) | (Item(_) | ItemsFrom(_), AnyItem) => true,
        (UnevaluatedItems { owner }, Item(_) | ItemsFrom(_) | AnyItem) => left_with(owner, b),
        (Item(_) | ItemsFrom(_) | AnyItem, UnevaluatedItems { owner }) => left_with(owner, a),
        (UnevaluatedItems { .. }, UnevaluatedItems { .. }) => true,
        _ => false,
    }
}

/// The text every match of an anchored pattern starts with (`^x-` gives `x-`), when it is plain to see: the
/// characters after `^` up to the first one that is not a literal or is made optional by a quantifier; none for a
/// pattern with an alternative anywhere.
fn literal_prefix(source: &str) -> Option<String> {
    let rest: Vec<char> = source.strip_prefix('^')?.chars().collect();
    if source.contains('|') {
        return None;
    }
    let mut out = String::new();
    for (i, c) in rest.iter().enumerate() {
        if "\\.[](){}*+?^$|".contains(*c) || matches!(rest.get(i + 1), Some('*' | '?' | '{')) {
            break;
        }
        out.push(*c);
    }
    (!out.is_empty()).then_some(out)
}

/// Whether a pattern matches a property name (one Rust cannot compile matches everything, to be safe).
fn matches(g: &Graph<'_>, p: &Pattern, name: &str) -> bool {
    g.regexes.get(&(p as *const Pattern)).and_then(Option::as_ref).is_none_or(|re| re.is_match(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the loader refuses `schema` as branching recursion.
    fn refused(schema: &str) -> bool {
        match crate::load::load_files(std::path::Path::new("mem"), &[("root.schema.json", schema)]) {
            Ok(_) => false,
            Err(e) => {
                assert!(e.0.iter().all(|d| d.kind == K::TooComplex), "{schema}: {e}");
                true
            }
        }
    }

    #[test]
    fn two_runs_that_part_and_meet_again_are_refused() {
        for schema in [
            // Each item twice, each of its items four times, ...
            r##"{"type": "array", "items": {"allOf": [{"$ref": "#"}, {"$ref": "#"}]}}"##,
            // Two oneOf members with the same items: both are checked.
            r##"{"oneOf": [{"items": {"$ref": "#"}}, {"items": {"$ref": "#"}, "minItems": 1}]}"##,
            // One level and two levels down: a Fibonacci number of runs.
            r##"{"anyOf": [{"items": {"$ref": "#"}}, {"items": {"items": {"$ref": "#"}}}]}"##,
            // `if` and `then` both check the items.
            r##"{"if": {"items": {"$ref": "#"}}, "then": {"items": {"$ref": "#"}}}"##,
            // A property and a pattern that matches it.
            r##"{"properties": {"ab": {"$ref": "#"}}, "patternProperties": {"^a": {"$ref": "#"}}}"##,
            // Through another type, and `contains` beside `items`.
            r##"{"$defs": {"L": {"type": "array", "items": {"$ref": "#"}, "contains": {"$ref": "#/$defs/L"}}}, "$ref": "#/$defs/L"}"##,
        ] {
            assert!(refused(schema), "{schema}");
        }
    }

    #[test]
    fn recursion_that_one_value_follows_one_way_is_accepted() {
        for schema in [
            // A binary tree: two properties, two places.
            r##"{"type": "object", "properties": {"l": {"$ref": "#"}, "r": {"$ref": "#"}}}"##,
            // A tagged union whose members both recurse: one tag, one member.
            r##"{"$defs": {"N": {"oneOf": [
                {"type": "object", "properties": {"k": {"const": "a"}, "next": {"$ref": "#/$defs/N"}}, "required": ["k"]},
                {"type": "object", "properties": {"k": {"const": "b"}, "next": {"$ref": "#/$defs/N"}}, "required": ["k"]}
            ], "x-discriminator": "k"}}, "$ref": "#/$defs/N"}"##,
            // Any JSON: arrays and objects are told apart by kind.
            r##"{"type": ["array", "object", "string"], "items": {"$ref": "#"}, "additionalProperties": {"$ref": "#"}}"##,
            r##"{"anyOf": [{"type": "array", "items": {"$ref": "#"}}, {"type": "object", "additionalProperties": {"$ref": "#"}}]}"##,
            // `then` or `else`, never both.
            r##"{"if": {"type": "array"}, "then": {"items": {"$ref": "#"}}, "else": {"properties": {"a": {"$ref": "#"}}}}"##,
            // The first item, then the rest; a declared property, then the others.
            r##"{"type": "array", "prefixItems": [{"$ref": "#"}], "items": {"$ref": "#"}}"##,
            r##"{"type": "object", "properties": {"a": {"$ref": "#"}}, "additionalProperties": {"$ref": "#"}}"##,
            // Patterns on different literal prefixes.
            r##"{"type": "object", "patternProperties": {"^a": {"$ref": "#"}, "^b": {"$ref": "#"}}}"##,
            // What unevaluatedProperties is left with excludes what its own part evaluates.
            r##"{"type": "object", "properties": {"a": {"$ref": "#"}}, "unevaluatedProperties": {"$ref": "#"}}"##,
        ] {
            assert!(!refused(schema), "{schema}");
        }
    }

    #[test]
    fn literal_prefixes() {
        assert_eq!(literal_prefix("^x-").as_deref(), Some("x-"));
        assert_eq!(literal_prefix("^ab*").as_deref(), Some("a"));
        assert_eq!(literal_prefix("^a?b"), None);
        assert_eq!(literal_prefix("^a|^b"), None);
        assert_eq!(literal_prefix("a"), None);
        assert_eq!(literal_prefix("^\\d"), None);
    }
}
