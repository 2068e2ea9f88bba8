//! What `x-unknown-keys: strip` may drop.
//!
//! A strip object's parser (Zod's `z.object`) gives back the value without the properties `properties` does not
//! declare, and that value must pass the schema that accepted the input: a parse must not hand its caller a value
//! its own schema refuses. So the loader refuses `x-unknown-keys: strip`, at the keyword, where something applied
//! to the value it gives back looks at the keys it drops:
//!
//! - the object itself, when it needs an undeclared key (`required`, `dependentRequired`), keeps some
//!   (`patternProperties`) or counts them (`minProperties`);
//! - every other schema applied to the same value: the other parts of an `allOf` (a `$ref` or an applicator beside
//!   `properties` is one), `anyOf` and `oneOf` alternatives, `if`/`then`/`else`, `not`, `dependentSchemas`,
//!   `const` and `enum`, the schemas other parts give the same property, and an array's `contains` over such items.
//!   A schema that needs a dropped key (`required`, `dependentRequired`, `minProperties`, an object in `const`)
//!   then fails. One that refuses keys (`additionalProperties`, `maxProperties`, a property's schema) only lets
//!   more through when keys go, unless its verdict counts the other way: under `not`, as an `if`, as a `oneOf`
//!   alternative (passing a second one fails the whole) or as a `contains` with `maxContains`;
//! - `uniqueItems` over items that may lose keys: two that differ only there come back equal.
//!
//! Only an object whose output is the value's strips it. The value of a parse is the output of what a `$ref`
//! names, of the first part of an `allOf`, of the union or `type` member that took it, of the inner schema of
//! `unevaluatedProperties`; `anyOf`, `oneOf`, `not`, `if` and `dependentSchemas` give back their input, so a strip
//! object inside them drops nothing. Union members are alternatives: one member's schemas are not applied beside
//! another's.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use serde_json::Value;

use super::Cx;
use crate::diag::SchemaErrorKind as K;
use crate::ir::{Additional, Model, Node, ObjectShape, Origin, Shape};

/// How a schema's verdict bears on the whole: passing it is needed (`Pos`), failing it is (`Neg`, under `not`),
/// or a change either way can change the whole (`Both`: an `if`, a `oneOf` alternative).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Pol {
    Pos,
    Neg,
    Both,
}

impl Pol {
    fn flip(self) -> Pol {
        match self {
            Pol::Pos => Pol::Neg,
            Pol::Neg => Pol::Pos,
            Pol::Both => Pol::Both,
        }
    }

    /// Whether the whole can fail when this schema fails on fewer keys.
    fn needs(self) -> bool {
        self != Pol::Neg
    }

    /// Whether the whole can fail when this schema passes on fewer keys.
    fn refuses(self) -> bool {
        self != Pol::Pos
    }
}

/// A node's identity while walking (the model is not changed meanwhile).
fn addr(n: &Node) -> usize {
    n as *const Node as usize
}

/// The union members chosen on the way to a node: (the union's node, the member's index).
type Chose = Vec<(usize, usize)>;

/// Whether two ways took different members of one union (so their schemas are never applied together).
fn apart(a: &Chose, b: &Chose) -> bool {
    a.iter().any(|(u, i)| b.iter().any(|(v, j)| u == v && i != j))
}

/// A schema applied to a value.
struct Applied<'m> {
    node: &'m Node,
    pol: Pol,
    chose: Chose,
}

/// Every schema applied to the value `node` is applied to, `node` first.
fn applied<'m>(
    m: &'m Model,
    node: &'m Node,
    pol: Pol,
    chose: &Chose,
    out: &mut Vec<Applied<'m>>,
    seen: &mut HashSet<(usize, Pol, Chose)>,
) {
    if !seen.insert((addr(node), pol, chose.clone())) {
        return;
    }
    out.push(Applied { node, pol, chose: chose.clone() });
    let mut each = |n: &'m Node, p: Pol, out: &mut Vec<Applied<'m>>| applied(m, n, p, chose, out, seen);
    match &node.shape {
        Shape::Ref(id) => each(&m.ty(*id).node, pol, out),
        Shape::Nullable(x) | Shape::Dependent { then: x, .. } | Shape::Unevaluated { inner: x, .. } => {
            each(x, pol, out)
        }
        Shape::Kinds(ms) | Shape::AllOf(ms) | Shape::AnyOf(ms) => ms.iter().for_each(|x| each(x, pol, out)),
        Shape::OneOf(ms) => ms.iter().for_each(|x| each(x, Pol::Both, out)),
        Shape::Not(x) => each(x, pol.flip(), out),
        Shape::Cond { cond, then, otherwise } => {
            each(cond, Pol::Both, out);
            then.iter().chain(otherwise).for_each(|x| each(x, pol, out));
        }
        Shape::Union(u) => {
            for (i, member) in u.members.iter().enumerate() {
                let mut c = chose.clone();
                c.push((addr(node), i));
                applied(m, &m.ty(member.ty).node, pol, &c, out, seen);
            }
        }
        _ => {}
    }
}

/// The nodes whose output is the value of a parse through `node`, each with the union members chosen on the way.
fn outputs<'m>(m: &'m Model, node: &'m Node, chose: &Chose, out: &mut Vec<(&'m Node, Chose)>, depth: usize) {
    // Chains of `$ref`s without an object or array between are refused as cycles; this only bounds the walk.
    if depth > crate::load::limits::MAX_REF_DEPTH * 2 {
        return;
    }
    match &node.shape {
        Shape::Ref(id) => outputs(m, &m.ty(*id).node, chose, out, depth + 1),
        Shape::Nullable(x) | Shape::Unevaluated { inner: x, .. } => outputs(m, x, chose, out, depth + 1),
        Shape::Kinds(ms) => ms.iter().for_each(|x| outputs(m, x, chose, out, depth + 1)),
        Shape::AllOf(ms) => ms.iter().take(1).for_each(|x| outputs(m, x, chose, out, depth + 1)),
        Shape::Union(u) => {
            for (i, member) in u.members.iter().enumerate() {
                let mut c = chose.clone();
                c.push((addr(node), i));
                outputs(m, &m.ty(member.ty).node, &c, out, depth + 1);
            }
        }
        _ => out.push((node, chose.clone())),
    }
}

/// Where a schema is, for a message about another: its pointer, and its file when that is another.
fn place(at: &Origin, from: &Origin) -> String {
    let pointer = if at.pointer.is_empty() { "the root".to_string() } else { format!("`{}`", at.pointer) };
    if at.file == from.file {
        pointer
    } else {
        format!("{pointer} of `{}`", at.file)
    }
}

/// The properties an object declares, to look up (an object may declare tens of thousands).
fn declared(x: &ObjectShape) -> HashSet<&str> {
    x.fields.iter().map(|f| f.name.as_str()).collect()
}

/// How many keys a strip object always keeps: its required declared properties.
fn kept(x: &ObjectShape) -> u64 {
    x.fields.iter().filter(|f| f.required).count() as u64
}

/// What of the object keywords `y` needs a key the strip object `x` drops: the keyword, and the keys it names
/// (none for `minProperties`, which counts them). A `dependentRequired` trigger `x` drops only switches its rule
/// off; what a kept trigger asks for is needed.
fn needs<'y>(y: &'y ObjectShape, x: &ObjectShape) -> Option<(&'static str, Vec<&'y String>)> {
    let declared = declared(x);
    let declared = |n: &String| declared.contains(n.as_str());
    let required: Vec<&String> = y
        .fields
        .iter()
        .filter(|f| f.required)
        .map(|f| &f.name)
        .chain(&y.required_only)
        .filter(|n| !declared(n))
        .collect();
    if !required.is_empty() {
        return Some(("required", required));
    }
    let dependent: Vec<&String> = y
        .dependent_required
        .iter()
        .filter(|(k, _)| declared(k))
        .flat_map(|(_, ns)| ns)
        .filter(|n| !declared(n))
        .collect();
    if !dependent.is_empty() {
        return Some(("dependentRequired", dependent));
    }
    y.min_properties.is_some_and(|n| n > kept(x)).then(|| ("minProperties", Vec::new()))
}

/// Keys as a message lists them, each once.
fn names(ns: Vec<&String>) -> String {
    let mut ns: Vec<String> = ns.into_iter().map(|n| format!("`{n}`")).collect();
    ns.dedup();
    crate::diag::and_list(&ns)
}

/// Why a strip object's own keywords need what it drops: an undeclared key it needs, keys `patternProperties`
/// keeps, keys `minProperties` counts.
fn own_need(x: &ObjectShape) -> Option<String> {
    match needs(x, x) {
        Some(("minProperties", _)) => Some("`minProperties` counts keys that stripping may drop".to_string()),
        Some((_, keys)) => Some(format!("it needs {}, which `properties` does not declare", names(keys))),
        None if !x.pattern_properties.is_empty() => {
            Some("`patternProperties` may keep keys that `properties` does not declare".to_string())
        }
        None => None,
    }
}

/// Why `a`, applied beside the strip object `x` (at `from`), could fail the value `x` gives back.
fn conflict(a: &Applied, x: &ObjectShape, from: &Origin) -> Option<String> {
    let declared = declared(x);
    let declared = |n: &str| declared.contains(n);
    let at = |kw: &str| place(&a.node.origin.join(kw), from);
    let turned = "where a verdict counts the other way (under `not`, in an `if`, as a `oneOf` alternative or a `contains` with `maxContains`)";
    match &a.node.shape {
        Shape::Object(y) => {
            if a.pol.needs() {
                match needs(y, x) {
                    Some(("minProperties", _)) => {
                        return Some(format!("{} counts keys stripping drops", at("minProperties")))
                    }
                    Some((kw, keys)) => return Some(format!("{} needs {}", at(kw), names(keys))),
                    None => {}
                }
            }
            if a.pol.refuses() {
                let checked: Vec<&String> = y
                    .fields
                    .iter()
                    .filter(|f| !declared(&f.name) && !matches!(f.node.shape, Shape::Any))
                    .map(|f| &f.name)
                    .collect();
                if !checked.is_empty() {
                    return Some(format!(
                        "{} checks {}, which stripping drops, {turned}",
                        at("properties"),
                        names(checked)
                    ));
                }
                let triggers: Vec<&String> =
                    y.dependent_required.iter().map(|(k, _)| k).filter(|k| !declared(k)).collect();
                if !triggers.is_empty() {
                    let at = at("dependentRequired");
                    return Some(format!("{at} looks at {}, which stripping drops, {turned}", names(triggers)));
                }
                let keyword = if !y.pattern_properties.is_empty() {
                    Some("patternProperties")
                } else if matches!(y.additional, Additional::Closed | Additional::Schema(_)) {
                    Some(if y.additional_written { "additionalProperties" } else { "unevaluatedProperties" })
                } else if y.property_names.is_some() {
                    Some("propertyNames")
                } else {
                    y.max_properties.map(|_| "maxProperties")
                };
                if let Some(kw) = keyword {
                    return Some(format!("{} looks at keys stripping drops, {turned}", at(kw)));
                }
            }
            None
        }
        Shape::Dependent { property, .. } if a.pol.refuses() && !declared(property) => {
            Some(format!("{} looks at `{property}`, {turned}", at("dependentSchemas")))
        }
        Shape::Unevaluated { rest, items: false, .. } if a.pol.refuses() && !matches!(rest.shape, Shape::Any) => {
            Some(format!("{} looks at keys stripping drops, {turned}", at("unevaluatedProperties")))
        }
        _ => None,
    }
}

/// Values a `const` or `enum` fixes at a place at or below it: the keyword's node, the path from there, the values.
#[derive(Clone)]
struct Fixed<'m> {
    node: &'m Node,
    path: String,
    values: Vec<&'m Value>,
    pol: Pol,
}

impl<'m> Fixed<'m> {
    /// What the values fix at `token` below them (`part` picks it from each value); `None` when no value has
    /// anything there (so a walk down a recursive type ends where the values do).
    fn below(&self, token: &str, part: impl Fn(&'m Value) -> Vec<&'m Value>) -> Option<Fixed<'m>> {
        let values: Vec<&Value> = self.values.iter().flat_map(|v| part(v)).collect();
        let path = format!("{}/{}", self.path, crate::diag::escape_token(token));
        (!values.is_empty()).then_some(Fixed { node: self.node, path, values, pol: self.pol })
    }

    /// Why these values could refuse what the strip object `x` (at `from`) gives back: an object among them with
    /// a key it drops where the value must equal one, any object where it must not.
    fn conflict(&self, x: &ObjectShape, from: &Origin) -> Option<String> {
        let objects: Vec<_> = self.values.iter().filter_map(|v| v.as_object()).collect();
        let declared = declared(x);
        let missing = objects.iter().flat_map(|o| o.keys()).any(|k| !declared.contains(k.as_str()));
        if !(self.pol.needs() && missing || self.pol.refuses() && !objects.is_empty()) {
            return None;
        }
        let keyword = if matches!(self.node.shape, Shape::Const(_)) { "const" } else { "enum" };
        let below = if self.path.is_empty() { String::new() } else { format!(" (at `{}` in its values)", self.path) };
        Some(format!(
            "{}{below} holds an object with keys stripping drops",
            place(&self.node.origin.join(keyword), from)
        ))
    }
}

/// Each `patternProperties` pattern compiled once for a walk, by the pattern's identity (`None`: the `regex`
/// crate cannot take it).
type Regexes = HashMap<usize, Option<regex::Regex>>;

/// The schemas an object node applies to the value of the property `key` (`None`: a key no one names, as in a map).
fn for_key<'m>(n: &'m Node, key: Option<&str>, regexes: &mut Regexes) -> Vec<&'m Node> {
    // `unevaluatedProperties` beside applicators: its schema, for any key (what the rest evaluates only narrows
    // which).
    if let Shape::Unevaluated { rest, items: false, .. } = &n.shape {
        return vec![rest];
    }
    let Shape::Object(o) = &n.shape else { return Vec::new() };
    let mut out: Vec<&Node> = o.fields.iter().filter(|f| key.is_none_or(|k| f.name == k)).map(|f| &f.node).collect();
    for (p, node) in &o.pattern_properties {
        // A pattern the `regex` crate cannot take is counted as matching.
        let mut matches = |k: &str| {
            let re = regexes.entry(p as *const _ as usize).or_insert_with(|| regex::Regex::new(&p.rust).ok());
            re.as_ref().is_none_or(|re| re.is_match(k))
        };
        if key.is_none_or(&mut matches) {
            out.push(node);
        }
    }
    if let Additional::Schema(s) = &o.additional {
        if key.is_none() || out.is_empty() {
            out.push(s);
        }
    }
    out
}

/// The schemas an array node applies to its item at `index` (`None`: any item past the ones `prefix` names, or
/// any at all), and its `contains`.
fn for_item(n: &Node, index: Option<usize>, pol: Pol) -> Vec<(&Node, Pol)> {
    if let Shape::Unevaluated { rest, items: true, .. } = &n.shape {
        return vec![(rest, pol)];
    }
    let Shape::Array(a) = &n.shape else { return Vec::new() };
    let mut out: Vec<(&Node, Pol)> = match index.map(|i| a.prefix.get(i)) {
        Some(Some(p)) => vec![(p, pol)],
        Some(None) => a.items.iter().map(|i| (&**i, pol)).collect(),
        None => a.prefix.iter().chain(a.items.as_deref()).map(|i| (i, pol)).collect(),
    };
    if let Some(c) = &a.contains {
        // Passing on more items can break `maxContains`.
        out.push((&c.node, if c.max.is_some() { Pol::Both } else { pol }));
    }
    out
}

/// A strip object whose output is part of the value a parse through `n` gives back, if there is one.
fn dropper<'m>(m: &'m Model, n: &'m Node, seen: &mut HashSet<usize>) -> Option<&'m Node> {
    if !seen.insert(addr(n)) {
        return None;
    }
    let mut outs = Vec::new();
    outputs(m, n, &Vec::new(), &mut outs, 0);
    for (out, _) in outs {
        let below: Vec<&Node> = match &out.shape {
            Shape::Object(x) if x.additional == Additional::Strip => return Some(out),
            Shape::Object(_) => for_key(out, None, &mut Regexes::new()),
            Shape::Array(a) => a.prefix.iter().chain(a.items.as_deref()).collect(),
            _ => Vec::new(),
        };
        if let Some(d) = below.into_iter().find_map(|b| dropper(m, b, seen)) {
            return Some(d);
        }
    }
    None
}

/// What is applied at a place in a value besides the schemas through which it is parsed: those schemas themselves
/// (`Own`: how they bear on each other), one other schema (what another part gives the same property or item), or
/// the values a `const` or `enum` above fixes there. A strip object's conflicts are each with one applied schema,
/// so the walk pairs each place with each source apart, which keeps it in time of places times sources.
#[derive(Clone)]
enum Source<'m> {
    Own,
    Node(&'m Node, Pol),
    Fixed(Fixed<'m>),
}

impl Source<'_> {
    /// The source's identity, for the walk's memory.
    fn key(&self) -> (u8, usize, String, u8) {
        match self {
            Source::Own => (0, 0, String::new(), 0),
            Source::Node(n, p) => (1, addr(n), String::new(), *p as u8),
            Source::Fixed(f) => (2, addr(f.node), f.path.clone(), f.pol as u8),
        }
    }
}

/// The walk over every place in a value, from each type.
struct Walk<'m> {
    m: &'m Model,
    /// What [`applied`] gives for a node at a polarity, worked out once.
    closures: HashMap<(usize, Pol), Rc<Vec<Applied<'m>>>>,
    /// The places paired with a source already.
    done: HashSet<(usize, (u8, usize, String, u8))>,
    /// The patterns compiled so far ([`for_key`]).
    regexes: Regexes,
    /// The places and sources still to pair.
    work: Vec<(&'m Node, Source<'m>)>,
    /// The refusals: where, and the message.
    refused: Vec<(Origin, String)>,
}

impl<'m> Walk<'m> {
    fn refuse(&mut self, at: Origin, msg: String) {
        if !self.refused.iter().any(|(r, _)| *r == at) {
            self.refused.push((at, msg));
        }
    }

    fn closure(&mut self, n: &'m Node, pol: Pol) -> Rc<Vec<Applied<'m>>> {
        let m = self.m;
        let made = self.closures.entry((addr(n), pol)).or_insert_with(|| {
            let mut out = Vec::new();
            applied(m, n, pol, &Vec::new(), &mut out, &mut HashSet::new());
            Rc::new(out)
        });
        Rc::clone(made)
    }

    fn push(&mut self, value: &'m Node, source: Source<'m>) {
        if self.done.insert((addr(value), source.key())) {
            self.work.push((value, source));
        }
    }

    /// Pairs every place with every source, from the places `work` holds.
    fn run(&mut self) {
        while let Some((value, source)) = self.work.pop() {
            self.pair(value, source);
        }
    }

    /// One place in a value, parsed through `value`, and one source of what is applied there beside it.
    fn pair(&mut self, value: &'m Node, source: Source<'m>) {
        let m = self.m;
        let own = matches!(source, Source::Own);
        let (group, fixed) = match &source {
            Source::Own => (self.closure(value, Pol::Pos), Vec::new()),
            Source::Node(n, p) => (self.closure(n, *p), Vec::new()),
            Source::Fixed(f) => (Rc::new(Vec::new()), vec![f.clone()]),
        };
        let mut outs = Vec::new();
        outputs(m, value, &Vec::new(), &mut outs, 0);
        for (out, chose) in outs {
            let others: Vec<&Applied> =
                group.iter().filter(|a| addr(a.node) != addr(out) && !apart(&a.chose, &chose)).collect();
            let mut fixed_here = fixed.clone();
            for a in &others {
                let values: Vec<&Value> = match &a.node.shape {
                    Shape::Const(v) => vec![v],
                    Shape::Enum(vs) => vs.iter().collect(),
                    _ => continue,
                };
                fixed_here.push(Fixed { node: a.node, path: String::new(), values, pol: a.pol });
            }
            match &out.shape {
                Shape::Object(x) => {
                    if x.additional == Additional::Strip {
                        let why = others
                            .iter()
                            .find_map(|a| conflict(a, x, &out.origin))
                            .or_else(|| fixed_here.iter().find_map(|fx| fx.conflict(x, &out.origin)));
                        if let Some(why) = why {
                            let msg = format!(
                                "`x-unknown-keys: strip` would drop keys that a schema applied to the same value looks \
                                 at, so a parse could give back a value the schema refuses: {why} (declare them in \
                                 this object's `properties`, or leave the object open)"
                            );
                            self.refuse(out.origin.join("x-unknown-keys"), msg);
                        }
                    }
                    let mut children: Vec<(&'m Node, Option<&'m str>)> =
                        x.fields.iter().map(|f| (&f.node, Some(f.name.as_str()))).collect();
                    let own_keys = for_key(out, None, &mut self.regexes);
                    children.extend(
                        own_keys
                            .into_iter()
                            .filter(|n| !x.fields.iter().any(|f| addr(&f.node) == addr(n)))
                            .map(|n| (n, None)),
                    );
                    for (child, key) in children {
                        if own {
                            self.push(child, Source::Own);
                            // The object's own `patternProperties` (and a map's schema) apply to a declared
                            // property as well.
                            let applied = for_key(out, key, &mut self.regexes);
                            for n in applied.into_iter().filter(|n| addr(n) != addr(child)) {
                                self.push(child, Source::Node(n, Pol::Pos));
                            }
                        }
                        for a in &others {
                            for n in for_key(a.node, key, &mut self.regexes) {
                                self.push(child, Source::Node(n, a.pol));
                            }
                        }
                        for fx in &fixed_here {
                            let below = match key {
                                Some(k) => fx.below(k, |v| v.get(k).into_iter().collect()),
                                None => {
                                    fx.below("*", |v| v.as_object().map(|o| o.values().collect()).unwrap_or_default())
                                }
                            };
                            if let Some(f) = below {
                                self.push(child, Source::Fixed(f));
                            }
                        }
                    }
                }
                Shape::Array(arr) => {
                    // `uniqueItems` anywhere it must hold, over items that may come back without keys.
                    let mut arrays: Vec<(&Node, Pol)> = others.iter().map(|a| (a.node, a.pol)).collect();
                    if own {
                        arrays.push((out, Pol::Pos));
                    }
                    for (n, pol) in arrays {
                        if !matches!(&n.shape, Shape::Array(b) if b.unique) || !pol.needs() {
                            continue;
                        }
                        let mut seen = HashSet::new();
                        if let Some(d) =
                            arr.prefix.iter().chain(arr.items.as_deref()).find_map(|i| dropper(m, i, &mut seen))
                        {
                            let msg = format!(
                                "`uniqueItems` over items that a parse may give back without the keys the \
                                 `x-unknown-keys: strip` at {} drops: two that differ only there would come back equal",
                                place(&d.origin, &n.origin)
                            );
                            self.refuse(n.origin.join("uniqueItems"), msg);
                        }
                    }
                    let children = arr
                        .prefix
                        .iter()
                        .enumerate()
                        .map(|(i, p)| (p, Some(i)))
                        .chain(arr.items.as_deref().map(|i| (i, None)));
                    for (child, index) in children {
                        if own {
                            self.push(child, Source::Own);
                            if let Some(c) = &arr.contains {
                                self.push(
                                    child,
                                    Source::Node(&c.node, if c.max.is_some() { Pol::Both } else { Pol::Pos }),
                                );
                            }
                        }
                        for a in &others {
                            for (n, pol) in for_item(a.node, index, a.pol) {
                                self.push(child, Source::Node(n, pol));
                            }
                        }
                        for fx in &fixed_here {
                            let below = match index {
                                Some(i) => fx.below(&i.to_string(), move |v| v.get(i).into_iter().collect()),
                                None => fx.below("*", |v| v.as_array().map(|a| a.iter().collect()).unwrap_or_default()),
                            };
                            if let Some(f) = below {
                                self.push(child, Source::Fixed(f));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

impl Cx {
    /// Refuses `x-unknown-keys: strip` where the value it gives back could fail the schema, and `uniqueItems` over
    /// items that may lose keys (see the module's documentation), at the keyword.
    pub(super) fn check_stripping(&mut self, m: &Model) {
        let mut strips = false;
        let mut refused = Vec::new();
        for t in &m.types {
            t.node.visit(&mut |n: &Node| {
                if let Shape::Object(x) = &n.shape {
                    strips |= x.additional == Additional::Strip;
                    if let Some(why) = own_need(x).filter(|_| x.additional == Additional::Strip) {
                        let msg =
                            format!("`x-unknown-keys: strip` would drop keys this object accepts and needs: {why}");
                        refused.push((n.origin.join("x-unknown-keys"), msg));
                    }
                }
            });
        }
        // Nothing drops a key: nothing to walk.
        if !strips {
            return;
        }
        let mut walk = Walk {
            m,
            closures: HashMap::new(),
            done: HashSet::new(),
            regexes: Regexes::new(),
            work: Vec::new(),
            refused,
        };
        for t in &m.types {
            walk.push(&t.node, Source::Own);
        }
        walk.run();
        for (at, msg) in walk.refused {
            self.err(&at, K::InvalidValue, msg);
        }
    }
}
