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
//! `else`, since one value picks one; nor for two properties of different names, an item and a property, or a declared
//! property and the same object's `additionalProperties`, nor for two patterns anchored on different literal prefixes
//! (`^a`, `^b`) or on different first characters (`^(&|:)`, `^@`), nor into the `then`s of two `if`s whose conditions
//! exclude each other by a tag (both require one property and allow it no common `const` or `enum` value: the
//! `if`/`then` spelling of a tagged union) or by kind (`type: "array"`, `type: "object"`). Other pairs of patterns are
//! taken to overlap (deciding whether two regular expressions share a match is not attempted), and so are the `then`s
//! of `if`s that exclude each other some other way (`minimum` and `maximum`, `type` lists): either may refuse a schema
//! that only looks ambiguous; none of the JSON-Schema-Test-Suite's does. A `not` evaluates nothing, so what it descends
//! to is not excluded from an `unevaluated*` beside it.
//!
//! What it does not bound: ambiguity that only grows polynomially (a chain of k recursive parts, each referring to
//! itself and to the next, as `allOf` inheritance does, applies a node up to C(depth, k) times at one place), and
//! the size of a value times what one value may cost (`MAX_EXPANSION` in `limits.rs`).
//!
//! Only the recursive parts of a schema (strongly connected through descents) are examined, so a schema without
//! recursion costs one walk over its nodes.

use std::collections::HashMap;

use super::Cx;
use crate::diag::SchemaErrorKind as K;
use crate::graph::components;
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

/// What an application in place enters.
#[derive(Clone, Copy, PartialEq)]
enum Enter {
    /// Nothing new.
    Same,
    /// The evaluated part of an `unevaluated*` node (what it is left with excludes what this part descends to).
    Evaluated,
    /// A `not`: it evaluates nothing, so what it descends to is not excluded from any `unevaluated*`.
    Not,
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
    /// In place: (node, the pick it takes if any, what it enters).
    apply: Vec<Vec<(usize, Option<usize>, Enter)>>,
    descend: Vec<Vec<(Label<'m>, usize)>>,
    /// Each pattern of the schema, compiled once (`None`: Rust cannot compile it, so it may match anything).
    regexes: HashMap<*const Pattern, Option<regex::Regex>>,
    /// What the condition of each `if` node asks of an object's tags, where it asks something.
    tags: HashMap<usize, Tags<'m>>,
}

/// What an `if` condition asks of a value: one JSON kind, and of an object, properties it requires with the only
/// values it allows them.
struct Tags<'m> {
    /// The one kind the condition accepts (`type: "object"`, `"array"`, ...), if it accepts only one.
    kind: Option<&'static str>,
    /// Required properties restricted to a `const` or an `enum`, with their values.
    props: Vec<(&'m str, Vec<&'m serde_json::Value>)>,
}

impl<'m> Tags<'m> {
    /// Read from an `if` condition: a schema of one kind, or an untyped one whose object part names required tags.
    fn of(m: &'m Model, cond: &'m Node) -> Option<Tags<'m>> {
        // Through references (an inline object is a type of its own).
        let object = |node: &'m Node| match m.resolve(&node.shape) {
            Shape::Object(o) => Some(o),
            _ => None,
        };
        let (o, kind) = match m.resolve(&cond.shape) {
            Shape::Kinds(ms) => (ms.iter().find_map(object), None),
            Shape::Object(o) => (Some(o), Some("object")),
            Shape::Array(_) => (None, Some("array")),
            Shape::String(_) => (None, Some("string")),
            Shape::Number(_) => (None, Some("number")),
            Shape::Boolean => (None, Some("boolean")),
            Shape::Null => (None, Some("null")),
            _ => return None,
        };
        let mut props = Vec::new();
        for f in o.iter().flat_map(|o| &o.fields).filter(|f| f.required) {
            match m.resolve(&f.node.shape) {
                Shape::Const(v) => props.push((f.name.as_str(), vec![v])),
                Shape::Enum(vs) => props.push((f.name.as_str(), vs.iter().collect())),
                _ => {}
            }
        }
        (kind.is_some() || !props.is_empty()).then_some(Tags { kind, props })
    }

    /// Whether no value can meet both conditions (`object`: the value is known to be an object): they take
    /// different kinds, or both require one property and allow it no common value.
    fn exclude(&self, other: &Tags<'_>, object: bool) -> bool {
        let kinds_differ = matches!((self.kind, other.kind), (Some(a), Some(b)) if a != b);
        let objects = object || self.kind == Some("object") || other.kind == Some("object");
        kinds_differ
            || objects
                && self.props.iter().any(|(name, vs)| {
                    other.props.iter().any(|(n, ws)| {
                        n == name && {
                            let ws: crate::engine::ValueSet = ws.iter().copied().collect();
                            !vs.iter().any(|v| ws.contains(v))
                        }
                    })
                })
    }
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
            stack.extend(n.children());
        }
        let id = |n: &Node| index[&(n as *const Node)];
        let root = |t: crate::ir::TypeId| id(&m.ty(t).node);
        let mut apply = vec![Vec::new(); nodes.len()];
        let mut descend = vec![Vec::new(); nodes.len()];
        for (i, n) in nodes.iter().enumerate() {
            let (a, d) = (&mut apply[i], &mut descend[i]);
            match &n.shape {
                Shape::Ref(t) => a.push((root(*t), None, Enter::Same)),
                Shape::Union(u) => {
                    a.extend(u.members.iter().enumerate().map(|(k, mem)| (root(mem.ty), Some(k), Enter::Same)))
                }
                Shape::Kinds(ms) => a.extend(ms.iter().enumerate().map(|(k, x)| (id(x), Some(k), Enter::Same))),
                Shape::Nullable(x) => a.push((id(x), None, Enter::Same)),
                Shape::Not(x) => a.push((id(x), None, Enter::Not)),
                Shape::AllOf(ms) | Shape::AnyOf(ms) | Shape::OneOf(ms) => {
                    a.extend(ms.iter().map(|x| (id(x), None, Enter::Same)))
                }
                Shape::Cond { cond, then, otherwise } => {
                    a.push((id(cond), None, Enter::Same));
                    a.extend(then.iter().map(|x| (id(x), Some(0), Enter::Same)));
                    a.extend(otherwise.iter().map(|x| (id(x), Some(1), Enter::Same)));
                }
                Shape::Dependent { then, .. } => a.push((id(then), None, Enter::Same)),
                Shape::Unevaluated { inner, rest, items } => {
                    a.push((id(inner), None, Enter::Evaluated));
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
        // A descent that lands on a `$ref` lands on the type it names: one state for every place that refers to
        // the same type (an object of 1,000 properties that all refer back is one state, not 1,000).
        for d in &mut descend {
            for (_, to) in d.iter_mut() {
                let mut hops = 0;
                while let (Shape::Ref(t), true) = (&nodes[*to].shape, hops < nodes.len()) {
                    *to = root(*t);
                    hops += 1;
                }
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
        let tags = (nodes.iter().enumerate())
            .filter_map(|(i, n)| match &n.shape {
                Shape::Cond { cond, .. } => Some((i, Tags::of(m, cond)?)),
                _ => None,
            })
            .collect();
        Graph { nodes, apply, descend, regexes, tags }
    }

    fn object(&self, owner: usize) -> Option<&'m ObjectShape> {
        match &self.nodes[owner].shape {
            Shape::Object(o) => Some(o),
            _ => None,
        }
    }
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
                    match enters {
                        Enter::Same => {}
                        Enter::Evaluated => b.inside.push(a.node),
                        Enter::Not => b.inside.clear(),
                    }
                    stack.push(b);
                }
            }
        }
        steps.push(out);
    }
    let index: Vec<Candidates<'_>> = steps.iter().map(|st| Candidates::of(st)).collect();
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
            let (named, wild) = index[s2].candidates(a.label);
            for &i2 in named.iter().chain(wild) {
                let b = &steps[s2][i2];
                if !compatible(g, a, b) || !overlap(g, a, b) {
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

/// A state's descents by what they could share a part of a value with, so the product compares a descent only
/// with those (a property with the same name and the wildcards, not with every other property).
#[derive(Default)]
struct Candidates<'m> {
    props: HashMap<&'m str, Vec<usize>>,
    /// Descents to properties by pattern, to the other properties or to the unevaluated ones.
    any_prop: Vec<usize>,
    all_props: Vec<usize>,
    items: HashMap<usize, Vec<usize>>,
    /// Descents to items from an index on, every item or the unevaluated ones.
    any_item: Vec<usize>,
    all_items: Vec<usize>,
}

impl<'m> Candidates<'m> {
    fn of(steps: &[Step<'m>]) -> Self {
        let mut c = Candidates::default();
        for (i, st) in steps.iter().enumerate() {
            match st.label {
                Label::Prop(x) => c.props.entry(x).or_default().push(i),
                Label::Other { .. } | Label::Pattern { .. } | Label::UnevaluatedProps { .. } => c.any_prop.push(i),
                Label::Item(k) => c.items.entry(k).or_default().push(i),
                Label::ItemsFrom(_) | Label::AnyItem | Label::UnevaluatedItems { .. } => c.any_item.push(i),
            }
            match st.label {
                Label::Prop(_) | Label::Other { .. } | Label::Pattern { .. } | Label::UnevaluatedProps { .. } => {
                    c.all_props.push(i)
                }
                _ => c.all_items.push(i),
            }
        }
        c
    }

    /// The descents that could overlap one labelled `label`, in two lists.
    fn candidates(&self, label: Label<'_>) -> (&[usize], &[usize]) {
        match label {
            Label::Prop(x) => (self.props.get(x).map_or(&[][..], Vec::as_slice), &self.any_prop),
            Label::Other { .. } | Label::Pattern { .. } | Label::UnevaluatedProps { .. } => (&self.all_props, &[]),
            Label::Item(k) => (self.items.get(&k).map_or(&[][..], Vec::as_slice), &self.any_item),
            Label::ItemsFrom(_) | Label::AnyItem | Label::UnevaluatedItems { .. } => (&self.all_items, &[]),
        }
    }
}

/// Two applications a single value can make together: they pick no two different members of one node, nor the
/// `then`s of two `if`s whose conditions exclude each other (different `const` tags of one required property).
fn compatible(g: &Graph<'_>, a: &Step<'_>, b: &Step<'_>) -> bool {
    let object = matches!(
        a.label,
        Label::Prop(_) | Label::Other { .. } | Label::Pattern { .. } | Label::UnevaluatedProps { .. }
    );
    let exclusive = |n: &usize, m: &usize| match (g.tags.get(n), g.tags.get(m)) {
        (Some(x), Some(y)) => x.exclude(y, object),
        _ => false,
    };
    a.from.picks.iter().all(|(n, k)| {
        b.from.picks.iter().all(|(m, j)| if n == m { k == j } else { !(*k == 0 && *j == 0 && exclusive(n, m)) })
    })
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
            let prefixes_differ = match (literal_prefix(&p.source), literal_prefix(&q.source)) {
                (Some(x), Some(y)) => !x.starts_with(&y) && !y.starts_with(&x),
                _ => false,
            };
            let first_chars_differ = match (first_chars(&p.rust), first_chars(&q.rust)) {
                (Some(mut x), Some(y)) => {
                    x.intersect(&y);
                    x.ranges().is_empty()
                }
                _ => false,
            };
            !prefixes_differ && !first_chars_differ
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

/// The characters every match of an anchored pattern starts with (`^(&|:|\.)` gives `&`, `:` and `.`), read from
/// its Rust translation; none when a match may be empty or the start is not plain to see.
fn first_chars(rust: &str) -> Option<regex_syntax::hir::ClassUnicode> {
    use regex_syntax::hir::{Class, ClassUnicode, Hir, HirKind, Look};
    /// The characters a match of `h` can start with, and whether it can be empty; `None`: not known.
    fn first(h: &Hir) -> Option<(ClassUnicode, bool)> {
        match h.kind() {
            HirKind::Empty | HirKind::Look(_) => Some((ClassUnicode::empty(), true)),
            HirKind::Literal(l) => {
                let c = std::str::from_utf8(&l.0).ok()?.chars().next()?;
                Some((ClassUnicode::new([regex_syntax::hir::ClassUnicodeRange::new(c, c)]), false))
            }
            HirKind::Class(Class::Unicode(c)) => Some((c.clone(), false)),
            HirKind::Class(Class::Bytes(_)) => None,
            HirKind::Repetition(r) => first(&r.sub).map(|(c, empty)| (c, empty || r.min == 0)),
            HirKind::Capture(c) => first(&c.sub),
            HirKind::Concat(parts) => sequence(parts),
            HirKind::Alternation(alts) => {
                let mut all = ClassUnicode::empty();
                let mut empty = false;
                for a in alts {
                    let (c, e) = first(a)?;
                    all.union(&c);
                    empty |= e;
                }
                Some((all, empty))
            }
        }
    }
    fn sequence(parts: &[Hir]) -> Option<(ClassUnicode, bool)> {
        let mut all = ClassUnicode::empty();
        for p in parts {
            let (c, empty) = first(p)?;
            all.union(&c);
            if !empty {
                return Some((all, false));
            }
        }
        Some((all, true))
    }
    let hir = regex_syntax::parse(rust).ok()?;
    let HirKind::Concat(parts) = hir.kind() else { return None };
    if !matches!(parts.first().map(Hir::kind), Some(HirKind::Look(Look::Start))) {
        return None;
    }
    match sequence(&parts[1..])? {
        (c, false) => Some(c),
        (_, true) => None,
    }
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
            // The `then`s of two `if`s on the same tag value: an `add` is both.
            r##"{"type": "object", "allOf": [
                {"if": {"properties": {"k": {"const": "add"}}, "required": ["k"]}, "then": {"properties": {"l": {"$ref": "#"}}}},
                {"if": {"properties": {"k": {"enum": ["add", "neg"]}}, "required": ["k"]}, "then": {"properties": {"l": {"$ref": "#"}}}}
            ]}"##,
            // Tags that are not required: an object without `k` meets both conditions.
            r##"{"type": "object", "allOf": [
                {"if": {"properties": {"k": {"const": "add"}}}, "then": {"properties": {"l": {"$ref": "#"}}}},
                {"if": {"properties": {"k": {"const": "neg"}}}, "then": {"properties": {"l": {"$ref": "#"}}}}
            ]}"##,
            // Two conditions on one kind.
            r##"{"allOf": [
                {"if": {"type": "array"}, "then": {"items": {"$ref": "#"}}},
                {"if": {"type": "array", "minItems": 2}, "then": {"items": {"$ref": "#"}}}
            ]}"##,
            // Untyped conditions hold for every array, so both `then`s check its items.
            r##"{"allOf": [
                {"if": {"properties": {"k": {"const": "add"}}, "required": ["k"]}, "then": {"items": {"$ref": "#"}}},
                {"if": {"properties": {"k": {"const": "neg"}}, "required": ["k"]}, "then": {"items": {"$ref": "#"}}}
            ]}"##,
            // A property and a pattern that matches it.
            r##"{"properties": {"ab": {"$ref": "#"}}, "patternProperties": {"^a": {"$ref": "#"}}}"##,
            // `not` evaluates nothing, so `unevaluatedProperties` is left with what it descends to.
            r##"{"type": "object", "not": {"properties": {"a": {"$ref": "#"}}, "required": ["z"]}, "unevaluatedProperties": {"$ref": "#"}}"##,
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
            // `if`/`then` on a required tag: one tag, one `then` (an untyped condition on an object's properties,
            // or one that takes objects only, whatever it descends to).
            r##"{"type": "object", "required": ["k"], "allOf": [
                {"if": {"properties": {"k": {"const": "add"}}, "required": ["k"]}, "then": {"properties": {"l": {"$ref": "#"}, "r": {"$ref": "#"}}}},
                {"if": {"properties": {"k": {"const": "neg"}}, "required": ["k"]}, "then": {"properties": {"l": {"$ref": "#"}}}}
            ]}"##,
            // Conditions on two kinds.
            r##"{"allOf": [
                {"if": {"type": "array"}, "then": {"items": {"$ref": "#"}}},
                {"if": {"type": "object"}, "then": {"additionalProperties": {"$ref": "#"}}},
                {"if": {"type": "string"}, "then": {"items": {"$ref": "#"}}}
            ]}"##,
            r##"{"allOf": [
                {"if": {"type": "object", "properties": {"k": {"$ref": "#/$defs/add"}}, "required": ["k"]}, "then": {"items": {"$ref": "#"}}},
                {"if": {"type": "object", "properties": {"k": {"enum": ["neg", 1]}}, "required": ["k"]}, "then": {"items": {"$ref": "#"}}}
            ], "$defs": {"add": {"const": "add"}}}"##,
            // The first item, then the rest; a declared property, then the others.
            r##"{"type": "array", "prefixItems": [{"$ref": "#"}], "items": {"$ref": "#"}}"##,
            r##"{"type": "object", "properties": {"a": {"$ref": "#"}}, "additionalProperties": {"$ref": "#"}}"##,
            // Patterns on different literal prefixes, or that start with different characters.
            r##"{"type": "object", "patternProperties": {"^a": {"$ref": "#"}, "^b": {"$ref": "#"}}}"##,
            r##"{"type": "object", "patternProperties": {"^(&|:|\\.|#|\\[)": {"$ref": "#"}, "^@media ": {"$ref": "#"}}}"##,
            // One object of many properties that all refer back (one state).
            &format!(
                r##"{{"type": "object", "properties": {{{}}}}}"##,
                (0..1500).map(|i| format!(r##""p{i}": {{"$ref": "#"}}"##)).collect::<Vec<_>>().join(", ")
            ),
            // What unevaluatedProperties is left with excludes what its own part evaluates.
            r##"{"type": "object", "properties": {"a": {"$ref": "#"}}, "unevaluatedProperties": {"$ref": "#"}}"##,
        ] {
            assert!(!refused(schema), "{schema}");
        }
    }

    #[test]
    fn first_characters() {
        let first = |src: &str| {
            let rust = crate::pattern::translate(src).unwrap().rust;
            first_chars(&rust).map(|c| c.ranges().iter().map(|r| (r.start(), r.end())).collect::<Vec<_>>())
        };
        assert_eq!(first("^(&|:|\\.)"), Some(vec![('&', '&'), ('.', '.'), (':', ':')]));
        assert_eq!(first("^@media "), Some(vec![('@', '@')]));
        assert_eq!(first("^a*b"), Some(vec![('a', 'b')]));
        assert_eq!(first("^a*"), None);
        assert_eq!(first("a"), None);
        assert_eq!(first("^[x-z]|^q"), Some(vec![('q', 'q'), ('x', 'z')]));
        assert_eq!(first("^a|b"), None);
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
