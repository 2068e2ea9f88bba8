//! The comparison: walks OLD's and NEW's models side by side and records every change.

use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;

use super::{Breaks, Change, ChangeRule as R, Removal, RemovalItem, Report, Row, Scope, Side, Status};
use crate::engine::{json_equal, Engine, EngineOptions, ValueSet};
use crate::ir::*;

/// Where the walk is: the scope and the path inside it.
#[derive(Clone)]
struct At {
    scope: Scope,
    path: Vec<String>,
}

impl At {
    fn push(&self, seg: &str) -> At {
        let mut path = self.path.clone();
        path.push(seg.to_string());
        At { scope: self.scope.clone(), path }
    }
}

struct Walk<'a> {
    old: &'a Side,
    new: &'a Side,
    om: &'a Model,
    nm: &'a Model,
    out: Vec<Change>,
    /// Pairs of named types already compared or being compared (OLD, NEW).
    seen: BTreeSet<(TypeId, TypeId)>,
    /// Pairs of named types compared to the end, with where and what they reported: a type shared by several
    /// places (an `id` definition behind six event properties) is reported again at each of them, since each
    /// place's readers and writers are broken by it.
    done: HashMap<(TypeId, TypeId), (At, Vec<Change>)>,
    /// The pairs in `done` already reported again in a scope.
    replayed: HashSet<((TypeId, TypeId), Scope)>,
    /// Inside [`Walk::differs`], whose changes are dropped: `done` is not filled there.
    probing: usize,
    /// The discriminator of the union member about to be compared: its `const` is the tag, which the union
    /// compares (a renamed event's tag is not a const change).
    member_tag: Option<String>,
    /// The engines of OLD and NEW, built the first time a change needs to know whether a side accepts a value
    /// (an enum that becomes a string: is every old value still a valid string?).
    engines: OnceCell<(Engine, Engine)>,
    /// The pairs of nodes being compared where only one side is a named type (by address), so that a recursion
    /// that never meets a pair of named types ends: OLD's `Tree` is an array of `Tree`, NEW's an array of `Tree`
    /// or `null`, and each step down pairs OLD's `Tree` with NEW's inline nullable, then NEW's `Tree` with OLD's
    /// inline array.
    active: HashSet<(usize, usize)>,
    /// What probes found, by the addresses of the two nodes (and the member tag in force): whether they differ.
    /// Without it a chain of `anyOf` lists was probed again at every level for every pairing, twice the work a
    /// level (forty levels did not finish).
    probed: HashMap<(usize, usize, Option<String>), bool>,
    /// Differences a probe knew from `probed` instead of walking (they push no change).
    marks: usize,
    /// How many times a walk stopped at a pair it was already comparing: a probe result reached past one assumed
    /// that pair equal, so "no difference" is kept only from a walk that stopped nowhere.
    cut: usize,
    /// Whether stored OLD messages reach NEW code through an upgrade (`wiregen migrate`, the generated upcasters):
    /// only between two session protocols. Without one, stored history is read as old producers' messages are,
    /// and broken wherever they are (a declared rename in a plain package was said to spare it; helper 93).
    upgrades: bool,
}

pub(super) fn run(old: &Side, new: &Side) -> Report {
    let mut w = Walk {
        probed: HashMap::new(),
        marks: 0,
        cut: 0,
        old,
        new,
        om: &old.model,
        nm: &new.model,
        out: Vec::new(),
        seen: BTreeSet::new(),
        done: HashMap::new(),
        replayed: HashSet::new(),
        probing: 0,
        member_tag: None,
        engines: OnceCell::new(),
        active: HashSet::new(),
        upgrades: old.model.protocol.is_some() && new.model.protocol.is_some(),
    };
    let mut rows = Vec::new();
    let mut removals = Vec::new();
    match (&w.om.protocol, &w.nm.protocol) {
        (Some(op), Some(np)) => {
            let at = At { scope: Scope::Envelope, path: Vec::new() };
            w.envelope(&at, op, np);
            removals = w.removals(op, np);
            w.sequence(op, np);
            w.rollup(op, np);
            // The envelope's changes first, then each event's in NEW's order, then the removed events' (the walk
            // meets the events inside the envelope, before the envelope's own later properties).
            let rank =
                |c: &Change| match &c.scope {
                    Scope::Event(t) => {
                        1 + np.events.iter().position(|e| &e.tag == t).unwrap_or_else(|| {
                            np.events.len() + op.events.iter().position(|e| &e.tag == t).unwrap_or(0)
                        })
                    }
                    _ => 0,
                };
            w.out.sort_by_key(rank);
            rows = w.rows(op, np);
            // The package's other named types (happy-wire's hold the session protocol beside its API types):
            // by name, as in a plain package, after the messages' changes.
            let held = |m: &Model, p: &Protocol| {
                let mut h = m.reachable_types(&m.ty(p.envelope).node);
                h[p.envelope.0] = true;
                (0..m.types.len()).filter(|i| h[*i]).map(|i| m.types[i].names.base.clone()).collect::<BTreeSet<_>>()
            };
            let mut skip = held(w.om, op);
            skip.extend(held(w.nm, np));
            w.types(&skip);
        }
        _ => w.types(&BTreeSet::new()),
    }
    Report { old: old.label.clone(), new: new.label.clone(), changes: w.out, rows, removals }
}

/// A named type a plain package is compared by: a file root or a `$defs` entry (types inside them are compared
/// where they stand).
fn is_entry(t: &TypeDef) -> bool {
    crate::load::is_type_root(&t.origin.pointer) && !t.part
}

/// `x` as inline code, for messages: a span that survives backticks and line breaks inside (the reference's).
fn code(s: &str) -> String {
    crate::diag::code_span(s)
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => code(s),
        other => code(&other.to_string()),
    }
}

fn list(vals: &[String]) -> String {
    vals.join(", ")
}

/// The allowed roles of a restricted field, or every role of the protocol.
fn allowed<'p>(p: &'p Protocol, rules: &'p [(String, Vec<String>)], name: &str) -> &'p [String] {
    rules.iter().find(|(n, _)| n == name).map_or(p.roles.as_slice(), |(_, r)| r.as_slice())
}

/// How a change's message says that an object takes properties it does not declare (in OLD with `past`): open,
/// or stripping them (helper 123: a strip object was said to be open).
fn takes_undeclared(o: &ObjectShape, past: bool) -> &'static str {
    match (&o.additional, past) {
        (Additional::Strip, true) => "the object took (and dropped) properties it did not declare",
        (Additional::Strip, false) => "the object takes (and drops) properties it does not declare",
        (_, true) => "the object was open",
        (_, false) => "the object is open",
    }
}

/// Whether an object accepts a property it does not declare.
fn accepts_unknown(o: &ObjectShape) -> bool {
    matches!(o.additional, Additional::Open | Additional::Strip)
}

/// What a property's `x-renamed-from` that names nothing of OLD's object adds to its `field-added-*` message: the
/// upgrade renames nothing (a typo in it went unreported; helper 75). Empty for a rename that has its own change
/// (OLD declares the old name, or its object `kept` any property).
fn dead_rename(o: &ObjectShape, nf: &Field) -> String {
    match nf.renamed_from.as_deref() {
        Some(old) if !carries_undeclared(o, old) && !o.fields.iter().any(|f| f.name == old) => format!(
            " (declared renamed from {}, which OLD does not have here: the upgrade renames nothing; check the name)",
            code(old)
        ),
        _ => String::new(),
    }
}

/// Why OLD has no declared field at an `x-moved-from` pointer.
enum NoPlace {
    /// An object there takes the name undeclared: a message may hold anything at it.
    Carried,
    /// No object there takes it.
    Nothing,
    /// The value at this pointer (OLD's) is never an object: the upgrade, which follows objects only, stops there.
    NoObject(String),
}

/// The objects a value of `n` may be, through references, nullables, kinds, `allOf` parts and union members.
fn objects_in<'m>(m: &'m Model, n: &'m Node) -> Vec<&'m ObjectShape> {
    let mut out = Vec::new();
    let mut todo = vec![n];
    let mut seen = HashSet::new();
    while let Some(n) = todo.pop() {
        let (n, id) = m.resolve_node(n);
        if id.is_some_and(|id| !seen.insert(id)) {
            continue;
        }
        match &n.shape {
            Shape::Object(o) => out.push(o),
            Shape::Nullable(inner) => todo.push(inner),
            Shape::Kinds(ms) | Shape::AllOf(ms) | Shape::AnyOf(ms) | Shape::OneOf(ms) => todo.extend(ms.iter().rev()),
            Shape::Union(u) => todo.extend(u.members.iter().rev().map(|mb| &m.ty(mb.ty).node)),
            Shape::Unevaluated { inner, .. } => todo.push(inner),
            _ => {}
        }
    }
    out
}

/// Whether an OLD message can carry a property `o` does not declare under `name` to the upgrade: its object keeps
/// unknown properties (open, or checked by `additionalProperties`), or a pattern of `patternProperties` takes the name.
/// A stripping object's readers drop it before the upgrade sees it.
fn carries_undeclared(o: &ObjectShape, name: &str) -> bool {
    matches!(o.additional, Additional::Open | Additional::Schema(_)) || undeclared_checks(o, name).1
}

/// What checks a property `o` does not declare: the schemas of the `patternProperties` whose pattern matches
/// `name` (every one whose pattern does not compile in Rust, to be safe), else the `additionalProperties` schema
/// if there is one; and whether a pattern matched (the property is then neither refused by a closed object nor
/// free in an open one).
fn undeclared_checks<'o>(o: &'o ObjectShape, name: &str) -> (Vec<&'o Node>, bool) {
    let patterns: Vec<&Node> = (o.pattern_properties.iter())
        .filter(|(p, _)| regex::Regex::new(&p.rust).map_or(true, |re| re.is_match(name)))
        .map(|(_, n)| n)
        .collect();
    match &o.additional {
        Additional::Schema(a) if patterns.is_empty() => (vec![a], false),
        _ => {
            let matched = !patterns.is_empty();
            (patterns, matched)
        }
    }
}

/// A field pairing: OLD's field, NEW's field, and whether NEW declares it renamed from OLD's.
type Pair<'a> = (Option<&'a Field>, Option<&'a Field>, bool);

/// Pairs the fields of two objects: by name, else by NEW's declared old name (`x-renamed-from`). NEW's order,
/// then OLD's fields that NEW lacks.
fn match_fields<'a>(o: &'a ObjectShape, n: &'a ObjectShape) -> Vec<Pair<'a>> {
    // By name, looked up (an object of 64,000 properties took seconds pairwise).
    let mut old_fields: HashMap<&str, &Field> = HashMap::with_capacity(o.fields.len());
    for f in o.fields.iter().rev() {
        old_fields.insert(f.name.as_str(), f);
    }
    let new_names: HashSet<&str> = n.fields.iter().map(|f| f.name.as_str()).collect();
    let mut used = HashSet::new();
    let mut out = Vec::new();
    for nf in &n.fields {
        if let Some(&of) = old_fields.get(nf.name.as_str()) {
            used.insert(of.name.as_str());
            out.push((Some(of), Some(nf), false));
        } else if let Some(&of) =
            nf.renamed_from.as_deref().filter(|old| !new_names.contains(old)).and_then(|old| old_fields.get(old))
        {
            used.insert(of.name.as_str());
            out.push((Some(of), Some(nf), true));
        } else {
            out.push((None, Some(nf), false));
        }
    }
    for of in &o.fields {
        if !used.contains(of.name.as_str()) {
            out.push((Some(of), None, false));
        }
    }
    out
}

impl<'a> Walk<'a> {
    fn push(&mut self, rule: R, at: &At, o: Option<&Origin>, n: Option<&Origin>, message: String, breaks: Breaks) {
        let breaks = if self.upgrades { breaks } else { Breaks { stored_history: breaks.old_producers, ..breaks } };
        self.out.push(Change {
            rule,
            scope: at.scope.clone(),
            path: at.path.clone(),
            message,
            was: None,
            old: o.map(|o| self.old.location(o)),
            new: n.map(|n| self.new.location(n)),
            breaks,
        });
    }

    /// Records the previous name of the rename just pushed.
    fn was(&mut self, name: &str) {
        if let Some(c) = self.out.last_mut() {
            c.was = Some(name.to_string());
        }
    }

    // ---- entry points ---------------------------------------------------------------------------------------

    fn envelope(&mut self, at: &At, op: &Protocol, np: &Protocol) {
        let (oe, ne) = (self.om.ty(op.envelope), self.nm.ty(np.envelope));
        if let (Shape::Object(oo), Shape::Object(no)) = (&oe.node.shape, &ne.node.shape) {
            self.field_roles(at, op, np, oo, no, &op.envelope_field_roles, &np.envelope_field_roles);
        }
        self.type_pair(at, op.envelope, np.envelope);
    }

    /// The named types of a package by name, or by NEW's declared old name; but those named in `skip` (in a
    /// protocol package, the types its messages hold on either side, compared as parts of the messages).
    fn types(&mut self, skip: &BTreeSet<String>) {
        let entries = |m: &Model| -> Vec<TypeId> {
            (0..m.types.len())
                .map(TypeId)
                .filter(|i| is_entry(m.ty(*i)) && !skip.contains(&m.ty(*i).names.base))
                .collect()
        };
        let (olds, news) = (entries(self.om), entries(self.nm));
        let mut used = BTreeSet::new();
        for &n in &news {
            let nt = self.nm.ty(n);
            let by_name = olds.iter().find(|o| self.om.ty(**o).names.base == nt.names.base);
            let renamed = nt.renamed_from.as_deref().and_then(|old| {
                let taken = news.iter().any(|x| self.nm.ty(*x).names.base == old);
                olds.iter().find(|o| !taken && self.om.ty(**o).names.base == old)
            });
            let at = At { scope: Scope::Type(nt.names.base.clone()), path: Vec::new() };
            match (by_name, renamed) {
                (Some(&o), _) => {
                    used.insert(o);
                    self.type_pair(&at, o, n);
                }
                (None, Some(&o)) => {
                    used.insert(o);
                    let ot = self.om.ty(o);
                    let msg = format!("type {} renamed to {}", code(&ot.names.base), code(&nt.names.base));
                    self.push(R::TypeRenamed, &at, Some(&ot.origin), Some(&nt.origin), msg, Breaks::NONE);
                    self.was(&ot.names.base);
                    self.type_pair(&at, o, n);
                }
                (None, None) => {
                    let msg = format!("type {} added", code(&nt.names.base));
                    self.push(R::TypeAdded, &at, None, Some(&nt.origin), msg, Breaks::NONE);
                }
            }
        }
        for &o in &olds {
            if !used.contains(&o) {
                let ot = self.om.ty(o);
                let at = At { scope: Scope::Type(ot.names.base.clone()), path: Vec::new() };
                let msg = format!("type {} removed", code(&ot.names.base));
                self.push(R::TypeRemoved, &at, Some(&ot.origin), None, msg, Breaks::NARROWER);
            }
        }
    }

    // ---- nodes ----------------------------------------------------------------------------------------------

    fn type_pair(&mut self, at: &At, o: TypeId, n: TypeId) {
        let (om, nm) = (self.om, self.nm);
        self.named(at, (o, n), &om.ty(o).node, &nm.ty(n).node);
    }

    fn node(&mut self, at: &At, o: &Node, n: &Node) {
        let (om, nm) = (self.om, self.nm);
        let (o, ot) = om.resolve_node(o);
        let (n, nt) = nm.resolve_node(n);
        let key = (std::ptr::from_ref(o) as usize, std::ptr::from_ref(n) as usize);
        let probe = (key.0, key.1, self.member_tag.clone());
        if self.probing > 0 {
            if let Some(&differs) = self.probed.get(&probe) {
                self.marks += usize::from(differs);
                return;
            }
        }
        let (len, marks, cut) = (self.out.len(), self.marks, self.cut);
        match (ot, nt) {
            (Some(a), Some(b)) => self.named(at, (a, b), o, n),
            _ => {
                // The same two nodes met again inside their own comparison: that comparison reports them.
                if self.active.insert(key) {
                    self.shape(at, o, n);
                    self.active.remove(&key);
                } else {
                    self.cut += 1;
                }
            }
        }
        if self.probing > 0 {
            let differs = self.out.len() > len || self.marks > marks;
            if differs || self.cut == cut {
                self.probed.insert(probe, differs);
            }
        }
    }

    /// Compares the nodes of a pair of named types once; where the pair is met first in another scope, its
    /// changes are reported again there (inside a recursion, the pair being compared is not entered again).
    fn named(&mut self, at: &At, pair: (TypeId, TypeId), o: &Node, n: &Node) {
        if let Some((first, changes)) = self.done.get(&pair) {
            // A probe ([`Walk::differs`]) needs to know whether the pair differs at all.
            let again = if self.probing > 0 {
                !changes.is_empty()
            } else {
                first.scope != at.scope && self.replayed.insert((pair, at.scope.clone()))
            };
            if again {
                let again: Vec<Change> = changes
                    .iter()
                    .map(|c| Change {
                        scope: at.scope.clone(),
                        path: at
                            .path
                            .iter()
                            .chain(c.path.get(first.path.len()..).unwrap_or_default())
                            .cloned()
                            .collect(),
                        ..c.clone()
                    })
                    .collect();
                self.out.extend(again);
            }
            return;
        }
        if !self.seen.insert(pair) {
            self.cut += 1;
            return;
        }
        let len = self.out.len();
        self.node(at, o, n);
        if self.probing == 0 {
            self.done.insert(pair, (at.clone(), self.out[len..].to_vec()));
        }
    }

    /// Whether two nodes differ in anything the walk reports, without reporting it: for a schema whose change
    /// can break either side whichever way it goes (`not`, `contains`), which is then reported once.
    fn differs(&mut self, at: &At, o: &Node, n: &Node) -> bool {
        let (len, marks, seen) = (self.out.len(), self.marks, self.seen.clone());
        self.probing += 1;
        self.node(at, o, n);
        self.probing -= 1;
        let differs = self.out.len() > len || self.marks > marks;
        self.out.truncate(len);
        self.marks = marks;
        self.seen = seen;
        differs
    }

    /// Whether two plans of what a node evaluates ([`Evaluation`]) can evaluate other properties (items) of one
    /// value: their forms, names, counts and flags, and the nodes they test compared as the diff compares nodes.
    fn plan_differs(&mut self, at: &At, a: &Evaluation, b: &Evaluation) -> bool {
        use Evaluation as E;
        match (a, b) {
            (E::None, E::None) => false,
            (E::Items { prefix: p, rest: r, contains: c }, E::Items { prefix: q, rest: s, contains: d }) => {
                p != q
                    || r != s
                    || match (c, d) {
                        (Some(c), Some(d)) => self.differs(at, c, d),
                        (c, d) => c.is_some() != d.is_some(),
                    }
            }
            (E::Keys { names: n, patterns: p, rest: r }, E::Keys { names: m, patterns: q, rest: s }) => {
                let set = |ns: &[String]| ns.iter().cloned().collect::<BTreeSet<String>>();
                let sources = |ps: &[Pattern]| ps.iter().map(|p| p.source.clone()).collect::<BTreeSet<String>>();
                r != s || set(n) != set(m) || sources(p) != sources(q)
            }
            (E::All(xs), E::All(ys)) => {
                xs.len() != ys.len() || xs.iter().zip(ys).any(|(x, y)| self.plan_differs(at, x, y))
            }
            (E::Valid(xs), E::Valid(ys)) => {
                xs.len() != ys.len()
                    || xs.iter().zip(ys).any(|((n, x), (m, y))| self.differs(at, n, m) || self.plan_differs(at, x, y))
            }
            (E::Cond { cond: c, then: t, otherwise: e }, E::Cond { cond: d, then: u, otherwise: f }) => {
                self.differs(at, c, d) || self.plan_differs(at, t, u) || self.plan_differs(at, e, f)
            }
            (E::Dependent { property: p, then: t }, E::Dependent { property: q, then: u }) => {
                p != q || self.plan_differs(at, t, u)
            }
            _ => true,
        }
    }

    /// The members of two `allOf`, `anyOf` or `oneOf` lists of one length, paired for comparison. Their order
    /// means nothing to a value, so each OLD member goes with an equal NEW one where there is one (the one at its
    /// own index first), and the others with the rest in the order they stand. Up to 32 members every pair may be
    /// compared; past that, only members of one [`member_key`] (a list of 33 reordered was 66 changes breaking
    /// everyone, helper 123; comparing every pair of 3,000 would take minutes).
    fn pair_members<'n>(&mut self, at: &At, a: &'n [Node], b: &'n [Node]) -> Vec<(&'n Node, &'n Node)> {
        let mut partner: Vec<Option<usize>> = vec![None; a.len()];
        let mut used = vec![false; b.len()];
        if a.len() <= 32 {
            for (i, x) in a.iter().enumerate() {
                let same = std::iter::once(i).chain(0..b.len()).find(|&j| !used[j] && !self.differs(at, x, &b[j]));
                if let Some(j) = same {
                    used[j] = true;
                    partner[i] = Some(j);
                }
            }
        } else {
            for (i, x) in a.iter().enumerate() {
                if i < b.len() && !self.differs(at, x, &b[i]) {
                    (used[i], partner[i]) = (true, Some(i));
                }
            }
            let mut by_key: HashMap<String, Vec<usize>> = HashMap::new();
            for (j, y) in b.iter().enumerate().filter(|(j, _)| !used[*j]) {
                by_key.entry(member_key(self.nm, y, 2)).or_default().push(j);
            }
            // At most 64 probes a member in all: members alike in their keys are compared a few each, and the
            // rest go by their places (a list of 1,000 of one key took seconds; helper 128).
            let mut probes = 64 * a.len();
            let unpaired: Vec<usize> = (0..a.len()).filter(|i| partner[*i].is_none()).collect();
            for (i, x) in unpaired.into_iter().map(|i| (i, &a[i])) {
                let Some(js) = by_key.get(&member_key(self.om, x, 2)) else { continue };
                for &j in js.iter().filter(|&&j| !used[j]) {
                    if probes == 0 {
                        break;
                    }
                    probes -= 1;
                    if !self.differs(at, x, &b[j]) {
                        (used[j], partner[i]) = (true, Some(j));
                        break;
                    }
                }
            }
        }
        let mut rest = (0..b.len()).filter(|j| !used[*j]).collect::<Vec<_>>().into_iter();
        for p in partner.iter_mut().filter(|p| p.is_none()) {
            *p = rest.next();
        }
        a.iter().zip(partner).enumerate().map(|(i, (x, p))| (x, &b[p.unwrap_or(i)])).collect()
    }

    /// An `anyOf` (`allOf`, `all`) that gained or lost members. Each is monotone in its members, so a member
    /// that is equal on both sides, or the same named type on both, is compared with its partner, and each other
    /// member is one change: an `anyOf` member removed accepts less (old producers, stored history), one added
    /// accepts more (old consumers); an `allOf` part the other way round. (Until stop 65 any such change was
    /// `constraint-changed`, breaking everyone; helper 78, on MCP's `JSONRPCMessage` losing its batch members.)
    fn members_added_or_removed(&mut self, at: &At, o: &Node, a: &[Node], n: &Node, b: &[Node], all: bool) {
        let named = |m: &Model, x: &Node| match x.shape {
            Shape::Ref(id) => Some(m.ty(id).names.base.clone()),
            _ => None,
        };
        let mut partner: Vec<Option<usize>> = vec![None; a.len()];
        let mut used = vec![false; b.len()];
        for (i, x) in a.iter().enumerate() {
            if let Some(j) = (0..b.len()).find(|&j| !used[j] && !self.differs(at, x, &b[j])) {
                (used[j], partner[i]) = (true, Some(j));
            }
        }
        for (i, x) in a.iter().enumerate() {
            let Some(name) = named(self.om, x).filter(|_| partner[i].is_none()) else { continue };
            if let Some(j) = (0..b.len()).find(|&j| !used[j] && named(self.nm, &b[j]).as_deref() == Some(&name)) {
                (used[j], partner[i]) = (true, Some(j));
            }
        }
        // One member left on each side is the same member changed (each list is monotone in its members, so any
        // pairing is sound; this one reads best).
        let left: Vec<usize> = (0..a.len()).filter(|i| partner[*i].is_none()).collect();
        let right: Vec<usize> = (0..b.len()).filter(|j| !used[*j]).collect();
        if let ([i], [j]) = (left.as_slice(), right.as_slice()) {
            (used[*j], partner[*i]) = (true, Some(*j));
        }
        let (what, rule_gone, rule_new, gone, new) = if all {
            ("`allOf` part", R::BoundLoosened, R::BoundTightened, Breaks::WIDER, Breaks::NARROWER)
        } else {
            ("`anyOf` member", R::VariantRemoved, R::VariantAdded, Breaks::NARROWER, Breaks::WIDER)
        };
        // A part that takes every value (`true` in an `allOf`) or a member that takes none (`false` in an `anyOf`)
        // changes nothing by coming or going (helper 83: `true` added to an `allOf` was a tightening).
        let neutral =
            |m: &Model, x: &Node| matches!((all, m.resolve(&x.shape)), (true, Shape::Any) | (false, Shape::Never));
        for (x, p) in a.iter().zip(&partner) {
            match p {
                Some(j) => self.node(at, x, &b[*j]),
                None if neutral(self.om, x) => {}
                None => {
                    let msg = format!("{}{} removed", member_word(what, x), self.member_name(x, self.om));
                    self.push(rule_gone, at, Some(&x.origin), Some(&n.origin), msg, gone);
                }
            }
        }
        for (y, _) in b.iter().zip(&used).filter(|(y, u)| !**u && !neutral(self.nm, y)) {
            let msg = format!("{}{} added", member_word(what, y), self.member_name(y, self.nm));
            self.push(rule_new, at, Some(&o.origin), Some(&y.origin), msg, new);
        }
    }

    /// A member of a list of schemas as a change's message names it (after a space): its type's name, else what
    /// it accepts unless that is every kind of value (a part that only bounds one kind). Its place is the change's
    /// location.
    fn member_name(&self, x: &Node, m: &Model) -> String {
        match &x.shape {
            Shape::Ref(id) => format!(" {}", code(&m.ty(*id).names.base)),
            Shape::Kinds(ks) if ks.len() > 2 => String::new(),
            s => format!(" ({})", self.describe(s, m)),
        }
    }

    fn shape(&mut self, at: &At, o: &Node, n: &Node) {
        let (oo, no) = (&o.origin, &n.origin);
        // To or from `true` (`false`) is one change whatever the other side is (a list of kinds, a nullable).
        let (o_all, n_all) =
            (matches!(o.shape, Shape::Any | Shape::Never), matches!(n.shape, Shape::Any | Shape::Never));
        if (o_all || n_all) && std::mem::discriminant(&o.shape) != std::mem::discriminant(&n.shape) {
            return self.type_changed(at, o, n);
        }
        // A nullable beside a list of kinds with `null` in it (`["integer", "null"]` to `["integer", "string",
        // "null"]`) is that list: `null` stays accepted (a false `nullable-removed` was reported; helper 77).
        let with_null = |m: &Model, list: &[Node]| list.iter().any(|x| matches!(m.resolve(&x.shape), Shape::Null));
        let as_list = |inner: &Node, at: &Node| {
            vec![inner.clone(), Node { origin: at.origin.clone(), description: None, shape: Shape::Null }]
        };
        // A list of members on one side only: the other side is a list of one (`{"minimum": 0}` to an `allOf` of it
        // and `{"maximum": 10}`); to an `anyOf`, a nullable is the list of its value and `null`, and a list of kinds
        // the list of them (helper 81: each was a `type-changed` or a false `nullable-removed` both ways).
        let members = |x: &Node| match &x.shape {
            Shape::Nullable(v) => as_list(v, x),
            Shape::Kinds(ks) => ks.clone(),
            _ => vec![x.clone()],
        };
        // A `oneOf` whose members take values of different JSON kinds is an `anyOf` (no value can match two), and
        // is compared as one: `oneOf` to `anyOf` is no change then, and a member added is only wider.
        let (o1, n1) = (any_of_when_disjoint(self.om, o), any_of_when_disjoint(self.nm, n));
        if o1.is_some() || n1.is_some() {
            return self.shape(at, o1.as_ref().unwrap_or(o), n1.as_ref().unwrap_or(n));
        }
        // A list of values written as an `anyOf` or `oneOf` of `const`s (each with its own description, say) is
        // that list, as an `enum` is: its values are compared, not its members (stop 65's list of what was left out: an
        // `enum` that became a `oneOf` of `const`s was a `type-changed`, breaking everyone).
        // So is a nullable list beside a list with `null` in it (helper 90: `enum ["a", null]` to a `oneOf` of
        // `"a"` and `null`, which the loader reads as a nullable const, was `nullable-added` and `null` removed).
        // Two `const`s are compared below (`const-changed`).
        // A list beside a short range of integers is compared as that range's values (helper 93: `integer` 1 to 3
        // that became `enum [1, 2, 3]` was a `type-changed`, breaking old producers).
        if !matches!((&o.shape, &n.shape), (Shape::Const(_), Shape::Const(_))) {
            let (ok, nk) =
                (|x: &Node, v: &Value| self.accepts(true, x, v), |x: &Node, v: &Value| self.accepts(false, x, v));
            let lists = match (values_of(self.om, &o.shape, false, &ok), values_of(self.nm, &n.shape, false, &nk)) {
                (Some(a), Some(b)) => Some((a, b)),
                (Some(a), None) => values_of(self.nm, &n.shape, true, &nk).map(|b| (a, b)),
                (None, Some(b)) => values_of(self.om, &o.shape, true, &ok).map(|a| (a, b)),
                (None, None) => None,
            };
            if let Some((a, b)) = lists {
                return self.values(at, oo, &a, no, &b);
            }
            // An `allOf` holding a list beside another shape is that list, an `enum`, compared as a plain one is
            // (helper 128: its parts were compared with the other shape, an `allOf` part added and removed).
            let listed = |m: &Model, x: &Node, k: &dyn Fn(&Node, &Value) -> bool| match x.shape {
                Shape::AllOf(_) => {
                    values_of(m, &x.shape, false, k).map(|vs| Node { shape: Shape::Enum(vs), ..x.clone() })
                }
                _ => None,
            };
            let (ol, nl) = (listed(self.om, o, &ok), listed(self.nm, n, &nk));
            if ol.is_some() || nl.is_some() {
                return self.shape(at, ol.as_ref().unwrap_or(o), nl.as_ref().unwrap_or(n));
            }
        }
        match (&o.shape, &n.shape) {
            (Shape::AllOf(a), s) if !matches!(s, Shape::AllOf(_)) => {
                return self.members_added_or_removed(at, o, a, n, std::slice::from_ref(n), true);
            }
            (s, Shape::AllOf(b)) if !matches!(s, Shape::AllOf(_)) => {
                return self.members_added_or_removed(at, o, std::slice::from_ref(o), n, b, true);
            }
            (Shape::AnyOf(a), s) if !matches!(s, Shape::AnyOf(_)) => {
                return self.members_added_or_removed(at, o, a, n, &members(n), false);
            }
            (s, Shape::AnyOf(b)) if !matches!(s, Shape::AnyOf(_)) => {
                return self.members_added_or_removed(at, o, &members(o), n, b, false);
            }
            _ => {}
        }
        match (&o.shape, &n.shape) {
            (Shape::Nullable(a), Shape::Kinds(b)) if with_null(self.nm, b) => self.kinds(at, o, &as_list(a, o), n, b),
            (Shape::Kinds(a), Shape::Nullable(b)) if with_null(self.om, a) => self.kinds(at, o, a, n, &as_list(b, n)),
            (Shape::Nullable(a), Shape::Nullable(b)) => self.node(at, a, b),
            (Shape::Nullable(a), _) => {
                self.push(
                    R::NullableRemoved,
                    at,
                    Some(oo),
                    Some(no),
                    "`null` no longer accepted".into(),
                    Breaks::NARROWER,
                );
                self.node(at, a, n);
            }
            (_, Shape::Nullable(b)) => {
                self.push(R::NullableAdded, at, Some(oo), Some(no), "`null` now accepted".into(), Breaks::WIDER);
                self.node(at, o, b);
            }
            (Shape::Object(a), Shape::Object(b)) => self.object(at, o, a, n, b),
            (Shape::Union(a), Shape::Union(b)) => self.union(at, o, a, n, b),
            (Shape::String(a), Shape::String(b)) => self.string(at, oo, a, no, b),
            (Shape::Number(a), Shape::Number(b)) => self.number(at, oo, a, no, b),
            (Shape::Array(a), Shape::Array(b)) => self.array(at, oo, a, no, b),
            (Shape::Enum(a), Shape::Enum(b)) => self.values(at, oo, a, no, b),
            (Shape::Const(a), Shape::Enum(b)) => self.values(at, oo, std::slice::from_ref(a), no, b),
            (Shape::Enum(a), Shape::Const(b)) => self.values(at, oo, a, no, std::slice::from_ref(b)),
            (Shape::Const(a), Shape::Const(b)) => {
                if !json_equal(a, b) {
                    let msg = format!("const {} is now {}", value_text(a), value_text(b));
                    self.push(R::ConstChanged, at, Some(oo), Some(no), msg, Breaks::BOTH);
                }
            }
            (Shape::Any, Shape::Any)
            | (Shape::Never, Shape::Never)
            | (Shape::Null, Shape::Null)
            | (Shape::Boolean, Shape::Boolean) => {}
            (Shape::Kinds(a), Shape::Kinds(b)) => self.kinds(at, o, a, n, b),
            (Shape::Kinds(a), _) => self.kinds(at, o, a, n, std::slice::from_ref(n)),
            (_, Shape::Kinds(b)) => self.kinds(at, o, std::slice::from_ref(o), n, b),
            // A `oneOf` is not monotone in its members (a wider member can make a value match two), so a change
            // to one breaks both sides and is reported once.
            (Shape::OneOf(a), Shape::OneOf(b)) if a.len() == b.len() => {
                if self.pair_members(at, a, b).into_iter().any(|(x, y)| self.differs(at, x, y)) {
                    let msg = "a `oneOf` member changed (a value may now match none of them, or two)".to_string();
                    self.push(R::ConstraintChanged, at, Some(oo), Some(no), msg, Breaks::BOTH);
                }
            }
            (Shape::AllOf(a), Shape::AllOf(b)) | (Shape::AnyOf(a), Shape::AnyOf(b)) if a.len() == b.len() => {
                for (x, y) in self.pair_members(at, a, b) {
                    self.node(at, x, y);
                }
            }
            (Shape::AnyOf(a), Shape::AnyOf(b)) => self.members_added_or_removed(at, o, a, n, b, false),
            (Shape::AllOf(a), Shape::AllOf(b)) => self.members_added_or_removed(at, o, a, n, b, true),
            (Shape::Not(a), Shape::Not(b)) => {
                if self.differs(at, a, b) {
                    self.push(R::ConstraintChanged, at, Some(oo), Some(no), "`not` changed".into(), Breaks::BOTH);
                }
            }
            (
                Shape::Unevaluated { inner: a, rest: x, items: i },
                Shape::Unevaluated { inner: b, rest: y, items: j },
            ) if i == j => {
                // Which properties (items) the inner schema evaluates decides which ones `rest` sees: a change to
                // either can break both sides, and so can one that only changes what it evaluates (`items: true`
                // or `additionalProperties: true` written, which no value fails).
                let plans = (self.om.evaluation(a), self.nm.evaluation(b));
                if self.differs(at, a, b) || self.differs(at, x, y) || self.plan_differs(at, &plans.0, &plans.1) {
                    let msg = format!("`{}` or the schema beside it changed", unevaluated_keyword(*i));
                    self.push(R::ConstraintChanged, at, Some(oo), Some(no), msg, Breaks::BOTH);
                }
            }
            (Shape::Dependent { property: p, then: a }, Shape::Dependent { property: q, then: b }) => {
                if p != q || self.differs(at, a, b) {
                    let msg = format!("{} changed", self.describe(&n.shape, self.nm));
                    self.push(R::ConstraintChanged, at, Some(oo), Some(no), msg, Breaks::BOTH);
                }
            }
            (Shape::Cond { .. }, Shape::Cond { .. }) | (Shape::OneOf(_), Shape::OneOf(_)) => {
                let msg = format!("{} changed", self.describe(&n.shape, self.nm));
                self.push(R::ConstraintChanged, at, Some(oo), Some(no), msg, Breaks::BOTH);
            }
            _ => self.type_changed(at, o, n),
        }
    }

    /// Records that a node accepts another kind of value now ([`Walk::kind_change`] says who that breaks).
    fn type_changed(&mut self, at: &At, o: &Node, n: &Node) {
        let breaks = self.kind_change(o, n);
        let msg = format!("{} is now {}", self.describe(&o.shape, self.om), self.describe(&n.shape, self.nm));
        self.push(R::TypeChanged, at, Some(&o.origin), Some(&n.origin), msg, breaks);
    }

    /// Who a change of kind breaks: anything to `true` accepts more, `true` to anything accepts less. A list of
    /// values (`enum`, `const`) that becomes another shape breaks old producers when NEW rejects one of the values
    /// (an enum of strings that becomes a string with a `pattern` they do not all match), and old consumers (NEW
    /// accepts other values); a shape that becomes a list of values, the other way round. Else both.
    fn kind_change(&self, o: &Node, n: &Node) -> Breaks {
        let values = |s: &Shape| match s {
            Shape::Enum(v) => Some(v.clone()),
            Shape::Const(v) => Some(vec![v.clone()]),
            _ => None,
        };
        match (&o.shape, &n.shape) {
            (_, Shape::Any) | (Shape::Never, _) => Breaks::WIDER,
            (Shape::Any, _) | (_, Shape::Never) => Breaks::NARROWER,
            _ => match (values(&o.shape), values(&n.shape)) {
                (Some(v), None) => {
                    let lost = v.iter().any(|x| !self.accepts(false, n, x));
                    Breaks { old_producers: lost, stored_history: lost, old_consumers: true }
                }
                (None, Some(v)) => {
                    let gained = v.iter().any(|x| !self.accepts(true, o, x));
                    Breaks { old_consumers: gained, ..Breaks::NARROWER }
                }
                _ => Breaks::BOTH,
            },
        }
    }

    /// Whether OLD's (`old`) or NEW's node accepts any value.
    fn is_any(&self, old: bool, n: &Node) -> bool {
        let m = if old { self.om } else { self.nm };
        matches!(m.resolve(&n.shape), Shape::Any)
    }

    /// Whether OLD's (`old`) or NEW's node accepts a value, by that side's engine (the meaning of the model).
    fn accepts(&self, old: bool, n: &Node, v: &Value) -> bool {
        let (o, n_) = self.engines.get_or_init(|| {
            let engine = |m: &Model| Engine::for_type(Arc::new(m.clone()), TypeId(0), EngineOptions::default());
            (engine(self.om), engine(self.nm))
        });
        if old { o } else { n_ }.accepts(n, v)
    }

    /// A short name for what a shape accepts.
    fn describe(&self, s: &Shape, m: &Model) -> String {
        match s {
            Shape::Any => "any value".into(),
            Shape::Never => "no value".into(),
            Shape::Ref(id) => self.describe(&m.ty(*id).node.shape, m),
            Shape::Null => "`null`".into(),
            Shape::Boolean => "a boolean".into(),
            Shape::String(_) => "a string".into(),
            Shape::Number(n) if n.integer => "an integer".into(),
            Shape::Number(_) => "a number".into(),
            Shape::Const(v) => format!("the const {}", value_text(v)),
            Shape::Enum(vs) => format!("one of {}", list(&vs.iter().map(value_text).collect::<Vec<_>>())),
            Shape::Array(_) => "an array".into(),
            Shape::Object(_) => "an object".into(),
            Shape::Union(u) => format!("a union on {}", code(&u.discriminator)),
            Shape::Nullable(n) => format!("{} or `null`", self.describe(&n.shape, m)),
            Shape::Kinds(ks) => ks.iter().map(|k| self.describe(&k.shape, m)).collect::<Vec<_>>().join(" or "),
            Shape::AllOf(_) => "`allOf`".into(),
            Shape::AnyOf(_) => "`anyOf`".into(),
            Shape::OneOf(_) => "`oneOf`".into(),
            Shape::Not(n) => format!("not {}", self.describe(&n.shape, m)),
            Shape::Cond { .. } => "`if`/`then`/`else`".into(),
            Shape::Dependent { property, .. } => format!("`dependentSchemas` of `{property}`"),
            Shape::Unevaluated { inner, items, .. } => {
                format!("{} with `{}`", self.describe(&inner.shape, m), unevaluated_keyword(*items))
            }
        }
    }

    /// `type: [...]`: the members are matched by their JSON kind (a single shape is a list of one).
    fn kinds(&mut self, at: &At, o: &Node, a: &[Node], n: &Node, b: &[Node]) {
        let (om, nm) = (self.om, self.nm);
        let ka: Vec<(&str, &Node)> = a.iter().map(|x| (kind(om.resolve(&x.shape)), x)).collect();
        let kb: Vec<(&str, &Node)> = b.iter().map(|x| (kind(nm.resolve(&x.shape)), x)).collect();
        // Matched by JSON kind, named as the schema names it (`integer`, not `number`; helper 75).
        let missing = |xs: &[(&str, &Node)], ys: &[(&str, &Node)], m: &Model| -> Vec<String> {
            (xs.iter().filter(|(k, _)| !ys.iter().any(|(j, _)| j == k)))
                .map(|(k, x)| match m.resolve(&x.shape) {
                    Shape::Number(n) if n.integer => code("integer"),
                    _ => code(k),
                })
                .collect()
        };
        let (added, removed) = (missing(&kb, &ka, nm), missing(&ka, &kb, om));
        if !added.is_empty() {
            let msg = format!("now also accepts {}", list(&added));
            self.push(R::TypeChanged, at, Some(&o.origin), Some(&n.origin), msg, Breaks::WIDER);
        }
        if !removed.is_empty() {
            let msg = format!("no longer accepts {}", list(&removed));
            self.push(R::TypeChanged, at, Some(&o.origin), Some(&n.origin), msg, Breaks::NARROWER);
        }
        // Members are single kinds, and the single side is not a list: no pair leads back here.
        for (k, x) in &ka {
            if let Some((_, y)) = kb.iter().find(|(j, _)| j == k) {
                self.node(at, x, y);
            }
        }
    }

    // ---- objects --------------------------------------------------------------------------------------------

    fn object(&mut self, at: &At, on: &Node, o: &ObjectShape, nn: &Node, n: &ObjectShape) {
        let tag = self.member_tag.take();
        let rank = |a: &Additional| match a {
            Additional::Closed => 0,
            Additional::Schema(_) => 1,
            Additional::Open | Additional::Strip => 2,
        };
        let (ro, rn) = (rank(&o.additional), rank(&n.additional));
        // Between taking any undeclared property and checking each against a schema: a bound on their values, the
        // object neither opened nor closed (helper 75: `object-closed` said "now rejects" what it still takes).
        if (ro, rn) == (2, 1) {
            let msg = "the properties it does not declare must now match its `additionalProperties` schema (any value \
                       was accepted)";
            self.push(R::BoundTightened, at, Some(&on.origin), Some(&nn.origin), msg.to_string(), Breaks::NARROWER);
        } else if (ro, rn) == (1, 2) {
            let msg = "the properties it does not declare may now hold any value (they had to match its \
                       `additionalProperties` schema)";
            self.push(R::BoundLoosened, at, Some(&on.origin), Some(&nn.origin), msg.to_string(), Breaks::WIDER);
        } else if rn > ro {
            let msg = "now accepts properties it does not declare".to_string();
            self.push(R::ObjectOpened, at, Some(&on.origin), Some(&nn.origin), msg, Breaks::WIDER);
        } else if rn < ro {
            let msg = "now rejects properties it does not declare (closed)".to_string();
            self.push(R::ObjectClosed, at, Some(&on.origin), Some(&nn.origin), msg, Breaks::NARROWER);
        } else if let (Additional::Schema(a), Additional::Schema(b)) = (&o.additional, &n.additional) {
            self.node(&at.push("*"), a, b);
        }
        for (of, nf, renamed) in match_fields(o, n) {
            match (of, nf) {
                (Some(of), Some(nf)) if tag.as_deref() == Some(nf.name.as_str()) && of.name == nf.name => {}
                (Some(of), Some(nf)) => self.field_pair(at, o, of, n, nf, renamed),
                (None, Some(nf)) => {
                    let fat = at.push(&nf.name);
                    // What checked the property until now (OLD's matching patterns, else its `additionalProperties`
                    // schema).
                    let (before, matched) = undeclared_checks(o, &nf.name);
                    let closed = matches!(o.additional, Additional::Closed) && !matched;
                    // An open OLD object let an old message carry the property with any value.
                    let any_before = accepts_unknown(o) && !matched && !self.is_any(false, &nf.node);
                    if let Some(old) = nf
                        .renamed_from
                        .as_deref()
                        .filter(|old| carries_undeclared(o, old) && !o.fields.iter().any(|f| f.name == *old))
                    {
                        // OLD does not declare the old name, but its object kept any property: the upgrade renames
                        // what stored messages carry under it, and refuses one that holds both names.
                        let b = Breaks {
                            old_producers: !accepts_unknown(n) || nf.required,
                            old_consumers: false,
                            stored_history: true,
                        };
                        // (A plain package has no upgrade to speak of: helper 95.)
                        let upgrade = if self.upgrades {
                            ": the upgrade renames what stored messages carry under it, and refuses a message that \
                             holds both"
                        } else {
                            ""
                        };
                        let msg = format!(
                            "property {} renamed to {} (declared; OLD does not declare {}, but its object takes it \
                             undeclared{upgrade})",
                            code(old),
                            code(&nf.name),
                            code(old)
                        );
                        self.push(R::FieldRenamed, &fat, None, Some(&nf.node.origin), msg, b);
                        self.was(old);
                    }
                    if let Some(from) = &nf.moved_from {
                        let place = self.old_place(from);
                        let source = place.as_ref().ok().map(|(f, _)| *f);
                        // Required here but not in every OLD message: an old message may have nothing to move.
                        let lossy = nf.required && !place.as_ref().is_ok_and(|(_, always)| *always);
                        // A sequence rule of NEW that needs the old place on this event: the upgrade empties it.
                        let needed = self.sequence_needs(at, from);
                        // Undeclared in OLD but taken there (an open envelope, a pattern): moved whatever it holds,
                        // which NEW may refuse (helper 77).
                        let carried = matches!(place, Err(NoPlace::Carried));
                        let b = Breaks {
                            old_producers: nf.required,
                            old_consumers: closed,
                            stored_history: lossy || needed.is_some() || carried,
                        };
                        let mut msg = format!(
                            "{} property {} added, its value moved from {} of the OLD message (declared)",
                            if nf.required { "required" } else { "optional" },
                            code(&nf.name),
                            code(from)
                        );
                        if let Some(rule) = needed {
                            msg.push_str(&format!(
                                "; NEW's sequence rule {} needs {} on this event, which the upgrade moves away",
                                code(rule),
                                code(from)
                            ));
                        }
                        if carried {
                            msg.push_str(&format!(
                                "; OLD does not declare {}, but takes it undeclared: the upgrade moves whatever a \
                                 message holds there, which NEW may refuse",
                                code(from)
                            ));
                        } else if let Err(NoPlace::NoObject(stop)) = &place {
                            // An array on the way (`/list/0/a`): a pointer's token is an object's key to the
                            // upgrade, never an item's index (helper 124).
                            msg.push_str(&format!(
                                "; OLD's {} is never an object, and the upgrade follows objects only (a token is a \
                                 property name, not an array index): it moves nothing",
                                code(if stop.is_empty() { "/" } else { stop })
                            ));
                        } else if source.is_none() {
                            // A pointer that names nothing OLD declares or takes moves nothing (helper 75: a typo
                            // went unnoticed by diff and migrate alike).
                            msg.push_str(&format!(
                                "; OLD has nothing at {}: the upgrade moves nothing (check the pointer)",
                                code(from)
                            ));
                        }
                        let oo = source.map(|f| &f.node.origin);
                        self.push(R::FieldMoved, &fat, oo, Some(&nf.node.origin), msg, b);
                        self.was(from);
                        self.moved_roles(at, &fat, from, nf, oo);
                        // The moved value must still be valid where it lands.
                        if let Some(f) = source {
                            self.node(&fat, &f.node, &nf.node);
                        }
                    } else if nf.required {
                        let b = Breaks { old_consumers: closed, ..Breaks::NARROWER };
                        let msg = format!("required property {} added{}", code(&nf.name), dead_rename(o, nf));
                        self.push(R::FieldAddedRequired, &fat, None, Some(&nf.node.origin), msg, b);
                    } else {
                        let (b, why) = match (closed, any_before) {
                            (true, _) => (Breaks::WIDER, String::new()),
                            (false, true) => (
                                Breaks { old_producers: true, stored_history: true, old_consumers: false },
                                format!(
                                    " ({}: an OLD message may carry it with a value NEW rejects)",
                                    takes_undeclared(o, true)
                                ),
                            ),
                            (false, false) => (Breaks::NONE, String::new()),
                        };
                        let msg = format!("optional property {} added{why}{}", code(&nf.name), dead_rename(o, nf));
                        self.push(R::FieldAddedOptional, &fat, None, Some(&nf.node.origin), msg, b);
                    }
                    // What changed from what checked it.
                    if nf.moved_from.is_none() {
                        for a in before {
                            self.node(&fat, a, &nf.node);
                        }
                    }
                }
                (Some(of), None) => {
                    let fat = at.push(&of.name);
                    // Renamed into a name OLD declares too: the upgrade renames it, and refuses a stored message
                    // that holds both.
                    if let Some(nf) = n.fields.iter().find(|f| f.renamed_from.as_deref() == Some(of.name.as_str())) {
                        let b = Breaks {
                            old_producers: !accepts_unknown(n) || nf.required,
                            old_consumers: false,
                            stored_history: true,
                        };
                        let upgrade =
                            if self.upgrades { ": the upgrade refuses a stored message that holds both" } else { "" };
                        let msg = format!(
                            "property {} renamed to {} (declared; OLD declares {} too{upgrade})",
                            code(&of.name),
                            code(&nf.name),
                            code(&nf.name)
                        );
                        self.push(
                            R::FieldRenamed,
                            &at.push(&nf.name),
                            Some(&of.node.origin),
                            Some(&nf.node.origin),
                            msg,
                            b,
                        );
                        self.was(&of.name);
                    }
                    let replaced = n.removed.iter().find(|r| r.name == of.name);
                    // What checks the property from now on (NEW's matching patterns, else its
                    // `additionalProperties` schema).
                    let (after, matched) = undeclared_checks(n, &of.name);
                    let rejected = (matches!(n.additional, Additional::Closed) && !matched) || replaced.is_some();
                    // An open NEW object lets a new message carry the property with any value.
                    let any_now = accepts_unknown(n) && !matched && !self.is_any(true, &of.node);
                    let b = Breaks {
                        old_producers: rejected,
                        stored_history: rejected,
                        old_consumers: of.required || any_now,
                    };
                    let mut msg = format!(
                        "{} property {} removed",
                        if of.required { "required" } else { "optional" },
                        code(&of.name)
                    );
                    if let Some(r) = replaced {
                        msg.push_str(&format!(" (NEW's `x-removed`: use {} instead)", code(&r.replacement)));
                    } else if any_now {
                        msg.push_str(&format!(
                            " ({}: a NEW message may carry it with a value OLD rejects)",
                            takes_undeclared(n, false)
                        ));
                    }
                    // NEW has no node for it: point at the object.
                    self.push(R::FieldRemoved, &fat, Some(&of.node.origin), Some(&nn.origin), msg, b);
                    // What changed from the property to what checks it now.
                    if replaced.is_none() {
                        for b in after {
                            self.node(&fat, &of.node, b);
                        }
                    }
                }
                (None, None) => {}
            }
        }
        self.bounds(
            at,
            &on.origin,
            &nn.origin,
            &[
                ("minProperties", o.min_properties, n.min_properties, true),
                ("maxProperties", o.max_properties, n.max_properties, false),
            ],
        );
        // What a `dependentRequired` entry requires besides its own property, in any order; an entry that requires
        // nothing more says what none says (`{"x": []}` was a change; helper 93).
        let dependent = |x: &ObjectShape| -> BTreeMap<String, BTreeSet<String>> {
            x.dependent_required
                .iter()
                .map(|(k, names)| (k.clone(), names.iter().filter(|n| *n != k).cloned().collect::<BTreeSet<_>>()))
                .filter(|(_, names)| !names.is_empty())
                .collect()
        };
        if dependent(o) != dependent(n) || o.required_only != n.required_only {
            let msg = "`dependentRequired` or properties required without a declaration changed".to_string();
            self.push(R::ConstraintChanged, at, Some(&on.origin), Some(&nn.origin), msg, Breaks::BOTH);
        }
        let pats = |x: &ObjectShape| x.pattern_properties.iter().map(|(p, _)| p.source.clone()).collect::<Vec<_>>();
        // As code, and `none` for no pattern (`^a` to the empty pattern read "^a -> "; helper 77).
        let shown = |x: &ObjectShape| match pats(x) {
            v if v.is_empty() => "none".to_string(),
            v => list(&v.iter().map(|p| code(p)).collect::<Vec<_>>()),
        };
        if pats(o) == pats(n) {
            for ((p, a), (_, b)) in o.pattern_properties.iter().zip(&n.pattern_properties) {
                self.node(&at.push(&format!("[/{}/]", p.source)), a, b);
            }
        } else {
            let msg = format!("`patternProperties` changed: {} -> {}", shown(o), shown(n));
            self.push(R::ConstraintChanged, at, Some(&on.origin), Some(&nn.origin), msg, Breaks::BOTH);
        }
        match (&o.property_names, &n.property_names) {
            (Some(a), Some(b)) => self.node(&at.push("[name]"), a, b),
            (None, Some(_)) => {
                let msg = "`propertyNames` added".to_string();
                self.push(R::BoundTightened, at, Some(&on.origin), Some(&nn.origin), msg, Breaks::NARROWER);
            }
            (Some(_), None) => {
                let msg = "`propertyNames` dropped".to_string();
                self.push(R::BoundLoosened, at, Some(&on.origin), Some(&nn.origin), msg, Breaks::WIDER);
            }
            (None, None) => {}
        }
    }

    /// What OLD has at a JSON Pointer from the envelope's root, for `x-moved-from`: the field it names, else why
    /// there is none ([`NoPlace`]), and whether every OLD message holds it (each object on the way is always an
    /// object there and requires the next step). The upgrade follows a message's objects whatever the schema says of them, so
    /// each step reads the objects a value there may be ([`objects_in`]: a nullable object, an object among kinds
    /// or union members): a nullable object's property was said to be nothing OLD has, and `migrate` moved it.
    fn old_place(&self, pointer: &str) -> Result<(&'a Field, bool), NoPlace> {
        let om: &'a Model = self.om;
        let Some(env) = om.protocol.as_ref().map(|p| p.envelope) else { return Err(NoPlace::Nothing) };
        let mut node = &om.ty(env).node;
        let mut found = Err(NoPlace::Nothing);
        let mut through = String::new();
        let mut always = true;
        for tok in pointer.split('/').skip(1) {
            let tok = crate::diag::unescape_token(tok);
            let objects = objects_in(om, node);
            if objects.is_empty() {
                return Err(NoPlace::NoObject(through));
            }
            let Some(f) = objects.iter().find_map(|o| o.fields.iter().find(|f| f.name == tok)) else {
                let carried = objects.iter().any(|o| carries_undeclared(o, &tok));
                return Err(if carried { NoPlace::Carried } else { NoPlace::Nothing });
            };
            through = crate::diag::push_ptr(&through, &tok);
            always &= f.required && matches!(om.resolve(&node.shape), Shape::Object(_));
            node = &f.node;
            found = Ok((f, always));
        }
        found
    }

    /// The event of a message's top-level object (`at` is the event itself): NEW's, and OLD's by its old tag.
    fn moved_event(&self, at: &At) -> Option<(&'a Protocol, &'a Event, &'a Protocol, &'a Event)> {
        let (om, nm): (&'a Model, &'a Model) = (self.om, self.nm);
        let (Scope::Event(t), true) = (&at.scope, at.path.is_empty()) else { return None };
        let (op, np) = (om.protocol.as_ref()?, nm.protocol.as_ref()?);
        let ne = np.event(t)?;
        let oe = op.event(ne.renamed_from.as_deref().unwrap_or(t))?;
        Some((op, oe, np, ne))
    }

    /// The first sequence rule of NEW that a message of this event breaks without the envelope property `from`
    /// (a move into the event takes it away): the opening or closing event of a scope keyed by it, or a message
    /// that must carry the open one's key.
    fn sequence_needs(&self, at: &At, from: &str) -> Option<&'static str> {
        let (_, _, np, ne) = self.moved_event(at)?;
        let name = from.strip_prefix('/').filter(|p| !p.contains('/'))?;
        let key = sequence::FieldRef::Envelope(crate::diag::unescape_token(name));
        let seq = &np.sequence;
        // The rule checks messages of this event from a role that may send it.
        let sent = |r: &sequence::SeqRule| r.role.as_ref().is_none_or(|role| ne.roles.contains(role));
        seq.rules
            .iter()
            .filter(|r| sent(r))
            .find(|r| {
                let keyed = |s: usize| seq.scopes.get(s).filter(|sc| sc.key == key);
                match &r.kind {
                    sequence::RuleKind::OpenWithoutKey { scope } => {
                        keyed(*scope).is_some_and(|sc| sc.opened_by.as_ref() == Some(&ne.tag))
                    }
                    sequence::RuleKind::CloseNotOpen { scope } => {
                        keyed(*scope).is_some_and(|sc| !sc.single && sc.closed_by.as_ref() == Some(&ne.tag))
                    }
                    sequence::RuleKind::KeyMissing { scope } => {
                        keyed(*scope).is_some() && (r.on.is_empty() || r.on.contains(&ne.tag))
                    }
                    _ => false,
                }
            })
            .map(|r| r.id)
    }

    /// Roles that may send the value at `from` on this event in OLD (the envelope property's roles) and may not
    /// send the property it moves into in NEW: their stored messages are refused once upgraded.
    fn moved_roles(&mut self, at: &At, fat: &At, from: &str, nf: &Field, oo: Option<&Origin>) {
        let Some((op, oe, np, ne)) = self.moved_event(at) else { return };
        let Some(top) = from.strip_prefix('/').map(|p| p.split('/').next().unwrap_or_default()) else { return };
        let before = allowed(op, &op.envelope_field_roles, &crate::diag::unescape_token(top));
        let after = allowed(np, &ne.field_roles, &nf.name);
        let lost: Vec<String> = before
            .iter()
            .filter(|r| oe.roles.contains(r) && ne.roles.contains(r) && !after.contains(r))
            .map(|r| code(r))
            .collect();
        if !lost.is_empty() {
            let msg = format!(
                "{} may no longer send the value moved from {} (now {})",
                list(&lost),
                code(from),
                code(&nf.name)
            );
            self.push(R::RoleRemoved, fat, oo, Some(&nf.node.origin), msg, Breaks::NARROWER);
        }
    }

    fn field_pair(&mut self, at: &At, o: &ObjectShape, of: &Field, n: &ObjectShape, nf: &Field, renamed: bool) {
        let fat = at.push(&nf.name);
        let (oo, no) = (&of.node.origin, &nf.node.origin);
        if renamed {
            // What checks the old name in NEW: an open object takes it with any value OLD may refuse.
            let (after, matched) = undeclared_checks(n, &of.name);
            let free_now = accepts_unknown(n) && !matched && !self.is_any(true, &of.node);
            // What OLD made of the new name: an object not closed to it let an old message carry it beside the old
            // name (the upgrade refuses such a message), an open one with any value.
            // A stripping object's readers drop the new name before the upgrade sees it (helper 77); a schema or a
            // pattern that took it is not compared with NEW's: reported as taking any value.
            let (before, matched_before) = undeclared_checks(o, &nf.name);
            let held_before = carries_undeclared(o, &nf.name);
            let free_before =
                !self.is_any(false, &nf.node) && ((accepts_unknown(o) && !matched_before) || !before.is_empty());
            let b = Breaks {
                old_producers: !accepts_unknown(n) || nf.required || free_before,
                old_consumers: !accepts_unknown(o) || of.required || free_now,
                stored_history: held_before,
            };
            let mut open = String::new();
            if free_now {
                open += &format!(
                    "; {}: a NEW message may carry {} with a value OLD rejects",
                    takes_undeclared(n, false),
                    code(&of.name)
                );
            }
            if free_before || held_before {
                open += &format!(
                    "; OLD's object takes {} too: an OLD message may carry it{}",
                    code(&nf.name),
                    match (free_before, held_before && self.upgrades) {
                        (true, true) => " with a value NEW rejects, and the upgrade refuses one that holds both names",
                        (true, false) => " with a value NEW rejects",
                        (false, true) => ", and the upgrade refuses one that holds both names",
                        (false, false) => "",
                    }
                );
            }
            let msg = format!("property {} renamed to {} (declared{open})", code(&of.name), code(&nf.name));
            self.push(R::FieldRenamed, &fat, Some(oo), Some(no), msg, b);
            self.was(&of.name);
            for a in after {
                self.node(&at.push(&of.name), &of.node, a);
            }
        }
        match (of.required, nf.required) {
            (false, true) => {
                let msg = format!("{} is now required", code(&nf.name));
                self.push(R::FieldMadeRequired, &fat, Some(oo), Some(no), msg, Breaks::NARROWER);
            }
            (true, false) => {
                let msg = format!("{} is now optional", code(&nf.name));
                self.push(R::FieldMadeOptional, &fat, Some(oo), Some(no), msg, Breaks::WIDER);
            }
            _ => {}
        }
        self.node(&fat, &of.node, &nf.node);
    }

    /// Role restrictions on the fields of an event or the envelope (unrestricted = every role), for the roles
    /// both protocols have.
    #[allow(clippy::too_many_arguments)]
    fn field_roles(
        &mut self,
        at: &At,
        op: &Protocol,
        np: &Protocol,
        o: &ObjectShape,
        n: &ObjectShape,
        orules: &[(String, Vec<String>)],
        nrules: &[(String, Vec<String>)],
    ) {
        for (of, nf, _) in match_fields(o, n) {
            let (Some(of), Some(nf)) = (of, nf) else { continue };
            let a = allowed(op, orules, &of.name);
            let b = allowed(np, nrules, &nf.name);
            self.role_sets(
                &at.push(&nf.name),
                op,
                np,
                a,
                b,
                &of.node.origin,
                &nf.node.origin,
                &format!("property {}", code(&nf.name)),
            );
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn role_sets(
        &mut self,
        at: &At,
        op: &Protocol,
        np: &Protocol,
        a: &[String],
        b: &[String],
        oo: &Origin,
        no: &Origin,
        what: &str,
    ) {
        let added: Vec<String> = b.iter().filter(|r| op.roles.contains(r) && !a.contains(r)).map(|r| code(r)).collect();
        let removed: Vec<String> =
            a.iter().filter(|r| np.roles.contains(r) && !b.contains(r)).map(|r| code(r)).collect();
        if !added.is_empty() {
            let msg = format!("{} may now send the {what}", list(&added));
            self.push(R::RoleAdded, at, Some(oo), Some(no), msg, Breaks::WIDER);
        }
        if !removed.is_empty() {
            let msg = format!("{} may no longer send the {what}", list(&removed));
            self.push(R::RoleRemoved, at, Some(oo), Some(no), msg, Breaks::NARROWER);
        }
    }

    // ---- unions and events ----------------------------------------------------------------------------------

    fn union(&mut self, at: &At, on: &Node, o: &UnionShape, nn: &Node, n: &UnionShape) {
        if o.discriminator != n.discriminator {
            let msg = format!("discriminated by {} instead of {}", code(&n.discriminator), code(&o.discriminator));
            self.push(R::TypeChanged, at, Some(&on.origin), Some(&nn.origin), msg, Breaks::BOTH);
            return;
        }
        let events = match (o.events, n.events, &self.om.protocol, &self.nm.protocol) {
            (true, true, Some(op), Some(np)) => Some((op, np)),
            _ => None,
        };
        let tag_text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), String::from);
        let mut used = BTreeSet::new();
        for m in &n.members {
            let nt = tag_text(&m.tag);
            let by_tag = o.members.iter().position(|x| x.tag == m.tag);
            let declared = events.and_then(|(_, np)| np.event(&nt)).and_then(|e| e.renamed_from.clone());
            let renamed = declared.as_deref().and_then(|old| {
                let taken = n.members.iter().any(|x| x.tag.as_str() == Some(old));
                o.members.iter().position(|x| !taken && x.tag.as_str() == Some(old))
            });
            let (oi, renamed) = match (by_tag, renamed) {
                (Some(i), _) => (Some(i), false),
                (None, Some(i)) => (Some(i), true),
                (None, None) => (None, false),
            };
            let (mat, rule_added) = match events {
                Some(_) => (At { scope: Scope::Event(nt.clone()), path: Vec::new() }, R::EventAdded),
                None => (at.push(&format!("[{}={nt}]", n.discriminator)), R::VariantAdded),
            };
            let norigin = self.nm.ty(m.ty).origin.clone();
            let Some(oi) = oi else {
                let what = if events.is_some() { "event" } else { "member" };
                let msg = format!("{what} {} added", code(&nt));
                self.push(rule_added, &mat, None, Some(&norigin), msg, Breaks::WIDER);
                continue;
            };
            used.insert(oi);
            let om_ = &o.members[oi];
            let ot = tag_text(&om_.tag);
            let oorigin = self.om.ty(om_.ty).origin.clone();
            if let Some((op, np)) = events {
                if renamed {
                    let msg = format!("event {} renamed to {} (declared)", code(&ot), code(&nt));
                    let b = Breaks { stored_history: false, ..Breaks::BOTH };
                    self.push(R::EventRenamed, &mat, Some(&oorigin), Some(&norigin), msg, b);
                    self.was(&ot);
                }
                if let (Some(oe), Some(ne)) = (op.event(&ot), np.event(&nt)) {
                    self.event_roles(&mat, op, np, oe, ne, &oorigin, &norigin);
                }
            }
            self.member_tag = Some(n.discriminator.clone());
            self.type_pair(&mat, om_.ty, m.ty);
            self.member_tag = None;
        }
        for (i, m) in o.members.iter().enumerate() {
            if used.contains(&i) {
                continue;
            }
            let ot = tag_text(&m.tag);
            let (mat, rule, what) = match events {
                Some(_) => (At { scope: Scope::Event(ot.clone()), path: Vec::new() }, R::EventRemoved, "event"),
                None => (at.push(&format!("[{}={ot}]", o.discriminator)), R::VariantRemoved, "member"),
            };
            let mut msg = format!("{what} {} removed", code(&ot));
            if let Some((_, rep)) = n.removed.iter().find(|(t, _)| *t == ot) {
                msg.push_str(&format!(" (NEW's `x-removed`: use {} instead)", code(rep)));
            }
            let oorigin = self.om.ty(m.ty).origin.clone();
            self.push(rule, &mat, Some(&oorigin), Some(&nn.origin), msg, Breaks::NARROWER);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn event_roles(&mut self, at: &At, op: &Protocol, np: &Protocol, oe: &Event, ne: &Event, oo: &Origin, no: &Origin) {
        // The event rule of `role_rules` (the first), then its fields' rules; the envelope's are compared once.
        for (a, b) in op.role_rules(oe).zip(np.role_rules(ne)).take(1) {
            if let (RoleRule::Event { allowed: a }, RoleRule::Event { allowed: b }) = (a, b) {
                self.role_sets(at, op, np, a, b, oo, no, "event");
            }
        }
        if let (Shape::Object(o), Shape::Object(n)) = (&self.om.ty(oe.ty).node.shape, &self.nm.ty(ne.ty).node.shape) {
            self.field_roles(at, op, np, o, n, &oe.field_roles, &ne.field_roles);
        }
    }

    // ---- scalars --------------------------------------------------------------------------------------------

    fn values(&mut self, at: &At, oo: &Origin, a: &[Value], no: &Origin, b: &[Value]) {
        // Equal as JSON Schema compares them (`1` and `1.0` are one value).
        let (in_a, in_b): (ValueSet, ValueSet) = (a.iter().collect(), b.iter().collect());
        let added: Vec<String> = b.iter().filter(|v| !in_a.contains(v)).map(value_text).collect();
        let removed: Vec<String> = a.iter().filter(|v| !in_b.contains(v)).map(value_text).collect();
        if !added.is_empty() {
            let msg = format!("{} added", list(&added));
            self.push(R::EnumValueAdded, at, Some(oo), Some(no), msg, Breaks::WIDER);
        }
        if !removed.is_empty() {
            let msg = format!("{} removed", list(&removed));
            self.push(R::EnumValueRemoved, at, Some(oo), Some(no), msg, Breaks::NARROWER);
        }
    }

    /// Count bounds `(keyword, old, new, is_lower)`: one record for what got tighter, one for what got looser.
    fn bounds(&mut self, at: &At, oo: &Origin, no: &Origin, items: &[(&str, Option<u64>, Option<u64>, bool)]) {
        let (tight, loose) = self.counts(items);
        self.tight_loose(at, oo, no, tight, loose);
    }

    /// What got tighter and what got looser among count bounds `(keyword, old, new, is_lower)`.
    fn counts(&self, items: &[(&str, Option<u64>, Option<u64>, bool)]) -> (Vec<String>, Vec<String>) {
        let mut tight = Vec::new();
        let mut loose = Vec::new();
        for &(keyword, a, b, lower) in items {
            let show = |x: Option<u64>| x.map_or_else(|| "none".to_string(), |v| v.to_string());
            // A lower count of 0 says what none says (`minLength: 0` added was a tightening; helper 93).
            let said = |x: Option<u64>| if lower { x.filter(|&v| v > 0) } else { x };
            let tighter = match (said(a), said(b)) {
                (None, Some(_)) => Some(true),
                (Some(_), None) => Some(false),
                (Some(x), Some(y)) if x != y => Some((y > x) == lower),
                _ => None,
            };
            let text = format!("`{keyword}` {} -> {}", show(a), show(b));
            match tighter {
                Some(true) => tight.push(text),
                Some(false) => loose.push(text),
                None => {}
            }
        }
        (tight, loose)
    }

    fn tight_loose(&mut self, at: &At, oo: &Origin, no: &Origin, tight: Vec<String>, loose: Vec<String>) {
        if !tight.is_empty() {
            self.push(R::BoundTightened, at, Some(oo), Some(no), tight.join("; "), Breaks::NARROWER);
        }
        if !loose.is_empty() {
            self.push(R::BoundLoosened, at, Some(oo), Some(no), loose.join("; "), Breaks::WIDER);
        }
    }

    fn string(&mut self, at: &At, oo: &Origin, a: &StringShape, no: &Origin, b: &StringShape) {
        let (mut tight, mut loose) = self.counts(&[
            ("minLength", a.min_length, b.min_length, true),
            ("maxLength", a.max_length, b.max_length, false),
        ]);
        // A pattern every string matches (`""`, `^`, `a*`: it matches the empty text at the start of any) says
        // what none says (helper 93).
        fn said(s: &StringShape) -> Option<&Pattern> {
            s.pattern.as_ref().filter(|p| !p.matches_every_string())
        }
        match (said(a), said(b)) {
            (None, Some(p)) => tight.push(format!("pattern {} added", code(&p.source))),
            (Some(p), None) => loose.push(format!("pattern {} dropped", code(&p.source))),
            (Some(p), Some(q)) if p.source != q.source => {
                let msg = format!("pattern {} is now {}", code(&p.source), code(&q.source));
                self.push(R::ConstraintChanged, at, Some(oo), Some(no), msg, Breaks::BOTH);
            }
            _ => {}
        }
        self.tight_loose(at, oo, no, tight, loose);
        // Checked only with strict ids, which nobody is held to by default: reported, breaking nobody.
        let strict = match (&a.strict_pattern, &b.strict_pattern) {
            (None, Some(p)) => Some((R::BoundTightened, format!("strict-id pattern {} added", code(&p.source)))),
            (Some(p), None) => Some((R::BoundLoosened, format!("strict-id pattern {} dropped", code(&p.source)))),
            (Some(p), Some(q)) if p.source != q.source => Some((
                R::ConstraintChanged,
                format!("strict-id pattern {} is now {}", code(&p.source), code(&q.source)),
            )),
            _ => None,
        };
        if let Some((rule, msg)) = strict {
            self.push(rule, at, Some(oo), Some(no), format!("{msg} (checked only with --strict-ids)"), Breaks::NONE);
        }
    }

    fn number(&mut self, at: &At, oo: &Origin, a: &NumberShape, no: &Origin, b: &NumberShape) {
        // `multipleOf: 1` says what `integer` says (the engine's test divides by 1, exactly): `number` with it and
        // `integer` are one schema, not a tightening (found by helper 70). Said so unless a side has another
        // `multipleOf`, which is compared with it as one.
        let other = |s: &NumberShape| s.multiple_of.is_some_and(|m| m != 1.0);
        let said_once = |s: &NumberShape| {
            let mut s = s.clone();
            if s.multiple_of == Some(1.0) && !other(a) && !other(b) {
                s.integer = true;
                s.multiple_of = None;
            }
            s
        };
        let (a, b) = (&said_once(a), &said_once(b));
        let mut tight = Vec::new();
        let mut loose = Vec::new();
        match (a.integer, b.integer) {
            (false, true) => tight.push("`number` -> `integer`".to_string()),
            (true, false) => loose.push("`integer` -> `number`".to_string()),
            _ => {}
        }
        // A bound is (value, exclusive); the tighter of `minimum` and `exclusiveMinimum` is the one in force.
        type Bound = Option<(f64, bool)>;
        let lower = |s: &NumberShape| -> Bound {
            match (s.minimum, s.exclusive_minimum) {
                (Some(m), Some(e)) => Some(if e >= m { (e, true) } else { (m, false) }),
                (Some(m), None) => Some((m, false)),
                (None, Some(e)) => Some((e, true)),
                (None, None) => None,
            }
        };
        let upper = |s: &NumberShape| -> Bound {
            match (s.maximum, s.exclusive_maximum) {
                (Some(m), Some(e)) => Some(if e <= m { (e, true) } else { (m, false) }),
                (Some(m), None) => Some((m, false)),
                (None, Some(e)) => Some((e, true)),
                (None, None) => None,
            }
        };
        let show = |b: Bound, lo: bool| match b {
            None => "none".to_string(),
            Some((v, x)) => format!(
                "{} {v}",
                if lo {
                    if x {
                        ">"
                    } else {
                        ">="
                    }
                } else if x {
                    "<"
                } else {
                    "<="
                }
            ),
        };
        // Between integers, a bound is the whole number it admits first: `minimum: 1`, `exclusiveMinimum: 0` and
        // `minimum: 0.5` are one bound. Not from 2^53 on, where every double is whole and the next one is not the
        // next integer (`exclusiveMaximum: 2^63` minus one is 2^63 again, and would equal `maximum: 2^63`).
        let whole = |bound: Bound, lo: bool| -> Bound {
            if !(a.integer && b.integer) || bound.is_some_and(|(v, _)| v.abs() >= 9_007_199_254_740_992.0) {
                return bound;
            }
            bound.map(|(v, x)| {
                let n = match (lo, x) {
                    (true, true) => v.floor() + 1.0,
                    (true, false) => v.ceil(),
                    (false, true) => v.ceil() - 1.0,
                    (false, false) => v.floor(),
                };
                (n, false)
            })
        };
        for (lo, x, y) in [(true, lower(a), lower(b)), (false, upper(a), upper(b))] {
            let tighter = match (whole(x, lo), whole(y, lo)) {
                (None, Some(_)) => Some(true),
                (Some(_), None) => Some(false),
                (Some((v, e)), Some((w, f))) if (v, e) != (w, f) => Some(if v == w {
                    f && !e
                } else if lo {
                    w > v
                } else {
                    w < v
                }),
                _ => None,
            };
            let text = format!("{} {} -> {}", if lo { "lower bound" } else { "upper bound" }, show(x, lo), show(y, lo));
            match tighter {
                Some(true) => tight.push(text),
                Some(false) => loose.push(text),
                None => {}
            }
        }
        match (a.multiple_of, b.multiple_of) {
            (None, Some(m)) => tight.push(format!("`multipleOf` none -> {m}")),
            (Some(m), None) => loose.push(format!("`multipleOf` {m} -> none")),
            (Some(m), Some(k)) if m != k => {
                let text = format!("`multipleOf` {m} -> {k}");
                // Every multiple of `m` is one of `k` when `k` divides `m`, but a checker divides doubles: that
                // holds for it between divisors it divides by exactly, whole numbers and powers of two (`21 / 7` is
                // 3, `21 / 0.7` is 30.000000000000004).
                let exact = |x: f64| {
                    (x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0)
                        || (x > 0.0 && x.to_bits() & ((1u64 << 52) - 1) == 0)
                };
                if exact(m) && exact(k) && (k / m).fract() == 0.0 {
                    tight.push(text);
                } else if exact(m) && exact(k) && (m / k).fract() == 0.0 {
                    loose.push(text);
                } else {
                    self.push(R::ConstraintChanged, at, Some(oo), Some(no), text, Breaks::BOTH);
                }
            }
            _ => {}
        }
        self.tight_loose(at, oo, no, tight, loose);
    }

    fn array(&mut self, at: &At, oo: &Origin, a: &ArrayShape, no: &Origin, b: &ArrayShape) {
        let iat = at.push("[]");
        match (&a.items, &b.items) {
            (Some(x), Some(y)) => self.node(&iat, x, y),
            (None, Some(_)) => {
                let msg = "items are now checked (were any value)".to_string();
                self.push(R::TypeChanged, &iat, Some(oo), Some(no), msg, Breaks::NARROWER);
            }
            (Some(_), None) => {
                let msg = "items may now be any value".to_string();
                self.push(R::TypeChanged, &iat, Some(oo), Some(no), msg, Breaks::WIDER);
            }
            (None, None) => {}
        }
        for (i, (x, y)) in a.prefix.iter().zip(&b.prefix).enumerate() {
            self.node(&at.push(&format!("[{i}]")), x, y);
        }
        if a.prefix.len() != b.prefix.len() {
            let msg = format!("`prefixItems`: {} -> {} positions", a.prefix.len(), b.prefix.len());
            self.push(R::ConstraintChanged, at, Some(oo), Some(no), msg, Breaks::BOTH);
        }
        self.bounds(
            at,
            oo,
            no,
            &[("minItems", a.min_items, b.min_items, true), ("maxItems", a.max_items, b.max_items, false)],
        );
        match (a.unique, b.unique) {
            (false, true) => {
                self.push(R::BoundTightened, at, Some(oo), Some(no), "items must be unique".into(), Breaks::NARROWER)
            }
            (true, false) => {
                self.push(R::BoundLoosened, at, Some(oo), Some(no), "items may repeat".into(), Breaks::WIDER)
            }
            _ => {}
        }
        match (&a.contains, &b.contains) {
            (None, Some(_)) => {
                let msg = "`contains` added".to_string();
                self.push(R::BoundTightened, at, Some(oo), Some(no), msg, Breaks::NARROWER);
            }
            (Some(_), None) => {
                let msg = "`contains` removed".to_string();
                self.push(R::BoundLoosened, at, Some(oo), Some(no), msg, Breaks::WIDER);
            }
            (Some(x), Some(y)) => {
                // A schema that more items match makes `minContains` easier and `maxContains` harder to meet.
                if self.differs(at, &x.node, &y.node) {
                    let msg = "`contains` changed".to_string();
                    self.push(R::ConstraintChanged, at, Some(oo), Some(no), msg, Breaks::BOTH);
                }
                self.bounds(
                    at,
                    oo,
                    no,
                    &[("minContains", Some(x.min), Some(y.min), true), ("maxContains", x.max, y.max, false)],
                );
            }
            (None, None) => {}
        }
    }

    // ---- the summary ----------------------------------------------------------------------------------------

    fn rows(&self, op: &Protocol, np: &Protocol) -> Vec<Row> {
        let mut rows = vec![self.row(&Scope::Envelope, None, None, Vec::new(), Status::Existing)];
        let renamed: Vec<(&Scope, &str)> = self
            .out
            .iter()
            .filter(|c| c.rule == R::EventRenamed)
            .filter_map(|c| Some((&c.scope, c.was.as_deref()?)))
            .collect();
        for e in &np.events {
            let scope = Scope::Event(e.tag.clone());
            let was = renamed.iter().find(|(s, _)| **s == scope).map(|(_, w)| w.to_string());
            let status = if was.is_some() {
                Status::Renamed
            } else if op.event(&e.tag).is_some() {
                Status::Existing
            } else {
                Status::New
            };
            rows.push(self.row(&scope, was, Some(e.category.clone()), e.roles.clone(), status));
        }
        for e in &op.events {
            if np.event(&e.tag).is_none() && !renamed.iter().any(|(_, w)| *w == e.tag) {
                rows.push(self.row(&Scope::Event(e.tag.clone()), None, None, e.roles.clone(), Status::Removed));
            }
        }
        rows
    }

    /// One summary row: the status words and note come from the changes to the scope's own properties; the other
    /// changes in the scope are listed as `also`.
    fn row(
        &self,
        scope: &Scope,
        was: Option<String>,
        category: Option<String>,
        roles: Vec<String>,
        status: Status,
    ) -> Row {
        let mut added = Vec::new();
        let mut removed = Vec::new();
        let mut renamed = Vec::new();
        let mut also = Vec::new();
        for (i, c) in self.out.iter().enumerate().filter(|(_, c)| &c.scope == scope) {
            let name = c.path.first().map(|p| code(p)).unwrap_or_default();
            match c.rule {
                R::FieldAddedOptional | R::FieldAddedRequired | R::FieldMoved if c.is_surface() => added.push(name),
                R::FieldRemoved if c.is_surface() => removed.push(name),
                R::FieldRenamed if c.is_surface() => {
                    renamed.push(format!("renamed {} to {name}", code(c.was.as_deref().unwrap_or_default())))
                }
                R::EventAdded | R::EventRemoved | R::EventRenamed => {}
                _ => also.push(i),
            }
        }
        let mut parts = Vec::new();
        if !added.is_empty() {
            parts.push(format!("added {}", list(&added)));
        }
        if !removed.is_empty() {
            parts.push(format!("removed {}", list(&removed)));
        }
        parts.extend(renamed);
        let note = (!parts.is_empty()).then(|| parts.join("; "));
        let status = if status == Status::Existing && note.is_some() { Status::Modified } else { status };
        let tag = match scope {
            Scope::Event(t) => Some(t.clone()),
            _ => None,
        };
        let note = if matches!(status, Status::New | Status::Removed) { None } else { note };
        Row { tag, was, category, roles, status, note, also }
    }

    /// NEW's `x-removed` entries, each item checked against OLD; plus `removal-declared` and `removal-dropped`
    /// records for entries OLD's events do not explain.
    fn removals(&mut self, op: &Protocol, np: &Protocol) -> Vec<Removal> {
        let mut out = Vec::new();
        for r in &np.removed {
            let mut items = Vec::new();
            let pairs: Vec<(String, String, Option<&Event>, bool)> = match &r.kind {
                RemovedKind::Events(evs) => evs
                    .iter()
                    .map(|(old, rep)| {
                        let renamed = np.event(rep).and_then(|e| e.renamed_from.as_deref()) == Some(old.as_str());
                        (format!("event {}", code(old)), rep.clone(), op.event(old), renamed)
                    })
                    .collect(),
                RemovedKind::Property { .. } => Vec::new(),
            };
            let removed_in_old = op.removed.iter().any(|x| same_items(x, r));
            for (thing, replacement, old_event, renamed) in pairs {
                let in_old = old_event.map(|e| self.old.location(&self.om.ty(e.ty).origin));
                items.push(RemovalItem { thing, replacement, renamed, in_old, removed_in_old });
            }
            if let RemovedKind::Property { event, name, replacement } = &r.kind {
                let in_old = op.event(event).and_then(|e| match &self.om.ty(e.ty).node.shape {
                    Shape::Object(o) => {
                        o.fields.iter().find(|f| &f.name == name).map(|f| self.old.location(&f.node.origin))
                    }
                    _ => None,
                });
                let thing = format!("{} on {}", code(name), code(event));
                let replacement = replacement.clone();
                items.push(RemovalItem { thing, replacement, renamed: false, in_old, removed_in_old });
            }
            let at = Some(self.new.location(&r.origin));
            for it in &items {
                if it.in_old.is_none() && !it.removed_in_old {
                    let scope = match &r.kind {
                        RemovedKind::Property { event, .. } => Scope::Event(event.clone()),
                        RemovedKind::Events(_) => Scope::Envelope,
                    };
                    let msg = format!(
                        "{} declared removed (use {} instead); OLD does not have it",
                        it.thing,
                        code(&it.replacement)
                    );
                    let at_ = At { scope, path: Vec::new() };
                    self.push(R::RemovalDeclared, &at_, None, Some(&r.origin), msg, Breaks::NONE);
                }
            }
            out.push(Removal { what: r.what.clone(), why: r.why.clone(), at, items });
        }
        for r in &op.removed {
            if !np.removed.iter().any(|x| same_items(x, r)) {
                let msg = format!("OLD's removal of {} is no longer declared", cell_what(r));
                let at = At { scope: Scope::Envelope, path: Vec::new() };
                self.push(R::RemovalDropped, &at, Some(&r.origin), None, msg, Breaks::NONE);
            }
        }
        out
    }
}

impl Walk<'_> {
    /// The sequence rules (`x-sequence`), matched by id: `sequence-rule-added`, `-removed`, `-changed`.
    fn sequence(&mut self, op: &Protocol, np: &Protocol) {
        let (os, ns) = (&op.sequence, &np.sequence);
        let renames = SeqRenames::of(self.nm, np);
        let at = |id: &str| At { scope: Scope::Envelope, path: vec!["x-sequence".to_string(), id.to_string()] };
        for n in &ns.rules {
            match os.rules.iter().find(|o| o.id == n.id) {
                None => {
                    // A rule only messages of events OLD lacks can break: no OLD message breaks it (a message of a
                    // new event is `event-added`'s).
                    let tags = crate::load::sequence::breakers(&n.kind, &ns.scopes, &n.on);
                    let in_old = |t: &str| {
                        let was = np.event(t).and_then(|e| e.renamed_from.as_deref());
                        op.event(t).is_some() || was.is_some_and(|w| op.event(w).is_some())
                    };
                    let (only_new, b) = if !tags.is_empty() && !tags.iter().any(|t| in_old(t)) {
                        let names: Vec<String> = tags.iter().map(|t| code(t)).collect();
                        (format!(", on {} only, which OLD does not have", list(&names)), Breaks::NONE)
                    } else {
                        (String::new(), Breaks::NARROWER)
                    };
                    let msg =
                        format!("sequence rule {} ({}) added{only_new}: {}", code(n.id), n.kind.name(), n.summary);
                    self.push(R::SequenceRuleAdded, &at(n.id), None, Some(&n.origin), msg, b);
                }
                Some(o) => {
                    // OLD's rule read with NEW's names: a declared rename (`x-renamed-from`) is not a change of rule.
                    let checks = renames.apply(os.meaning(o)) != ns.meaning(n);
                    let moved = renames.pointer(&o.pointer, &np.union_field) != n.pointer;
                    let reworded = renames.message(&o.message) != n.message;
                    if checks || moved || reworded {
                        let what = if checks {
                            "checks something else"
                        } else if moved {
                            "reports at another pointer"
                        } else {
                            "has another message"
                        };
                        let mut msg = format!("sequence rule {} {what}", code(n.id));
                        // What it checked and checks, in the reference's words (helper 109: it said only
                        // "checks something else").
                        let (was, now) =
                            (crate::emit::docs::rule_check_text(op, o), crate::emit::docs::rule_check_text(np, n));
                        if checks && was != now {
                            msg.push_str(&format!(": broken by {was}, now by {now}"));
                        }
                        let breaks = if checks { Breaks::BOTH } else { Breaks::NONE };
                        self.push(R::SequenceRuleChanged, &at(n.id), Some(&o.origin), Some(&n.origin), msg, breaks);
                    }
                }
            }
        }
        for o in os.rules.iter().filter(|o| !ns.rules.iter().any(|n| n.id == o.id)) {
            let msg = format!("sequence rule {} ({}) removed", code(o.id), o.kind.name());
            self.push(R::SequenceRuleRemoved, &at(o.id), Some(&o.origin), None, msg, Breaks::WIDER);
        }
    }
}

impl Walk<'_> {
    /// The rollup every stream checker folds: its parts (`x-sequence.rollup`) and the scopes' open lists. One OLD's
    /// readers find gone, or folding something else (another kind, event or value, names as NEW declares them), is
    /// a change for old consumers; one added breaks nobody.
    fn rollup(&mut self, op: &Protocol, np: &Protocol) {
        let (os, ns) = (&op.sequence, &np.sequence);
        let renames = SeqRenames::of(self.nm, np);
        // Where a part or an open list is declared: under the envelope's `x-sequence`.
        let place = |m: &Model, p: &Protocol, tail: String| -> Origin {
            let env = &m.ty(p.envelope).origin;
            Origin { file: env.file.clone(), pointer: format!("{}/x-sequence/{tail}", env.pointer) }
        };
        let part_at = |name: &str| format!("rollup/{}", crate::diag::escape_token(name));
        let list_at = |scope: &str| format!("scopes/{}/rollup", crate::diag::escape_token(scope));
        let at = |name: &str| At {
            scope: Scope::Envelope,
            path: vec!["x-sequence".to_string(), "rollup".to_string(), name.to_string()],
        };
        // What a part folds, without the field lists its event's own changes already report.
        let folds = |p: &sequence::RollupPart, old: bool| -> Value {
            let event =
                if old { renames.events.get(&p.event).cloned().unwrap_or(p.event.clone()) } else { p.event.clone() };
            let field = match &p.kind {
                sequence::RollupKind::Count { field, .. } | sequence::RollupKind::Sum { field, .. } => {
                    serde_json::to_value(field).unwrap_or(Value::Null)
                }
                _ => Value::Null,
            };
            let field = if old { renames.apply(field) } else { field };
            let kind = serde_json::to_value(&p.kind).ok().and_then(|k| k.get("fold").cloned()).unwrap_or(Value::Null);
            serde_json::json!({ "fold": kind, "event": event, "field": field })
        };
        // Each open list (by its rollup name): its scope's name, and its scope's key and events and what each open
        // one records.
        let lists = |q: &Sequence, old: bool| -> Vec<(String, String, Value)> {
            q.scopes
                .iter()
                .filter_map(|sc| {
                    let name = sc.rollup.clone()?;
                    let record: Vec<(String, Value)> = sc
                        .record
                        .iter()
                        .map(|a| (a.name.clone(), serde_json::to_value(&a.from).unwrap_or(Value::Null)))
                        .collect();
                    let v = serde_json::json!({
                        "key": sc.key, "opened-by": sc.opened_by, "closed-by": sc.closed_by, "record": record,
                    });
                    // The key's name as the rollup writes it (`open.toolCalls[].call`): a declared rename of the key
                    // renames that property of the rollup's JSON too (helper 75).
                    let v = if old { renames.apply(v) } else { v };
                    Some((name, sc.name.clone(), serde_json::json!({ "meaning": v, "key-name": sc.key.name() })))
                })
                .collect()
        };
        // (name, what, OLD's place and meaning, NEW's place and meaning).
        type Declared = Option<(Origin, Value)>;
        let mut found: Vec<(String, &'static str, Declared, Declared)> = Vec::new();
        for p in &ns.rollup {
            let before = os
                .rollup
                .iter()
                .find(|o| o.name == p.name)
                .map(|o| (place(self.om, op, part_at(&o.name)), folds(o, true)));
            found.push((p.name.clone(), "part", before, Some((place(self.nm, np, part_at(&p.name)), folds(p, false)))));
        }
        for o in os.rollup.iter().filter(|o| !ns.rollup.iter().any(|p| p.name == o.name)) {
            found.push((o.name.clone(), "part", Some((place(self.om, op, part_at(&o.name)), folds(o, true))), None));
        }
        let (ol, nl) = (lists(os, true), lists(ns, false));
        for (name, scope, v) in &nl {
            let before =
                ol.iter().find(|(n, ..)| n == name).map(|(_, sc, v)| (place(self.om, op, list_at(sc)), v.clone()));
            found.push((name.clone(), "open list", before, Some((place(self.nm, np, list_at(scope)), v.clone()))));
        }
        for (name, scope, v) in ol.iter().filter(|(n, ..)| !nl.iter().any(|(m, ..)| m == n)) {
            found.push((name.clone(), "open list", Some((place(self.om, op, list_at(scope)), v.clone())), None));
        }
        for (name, what, before, after) in found {
            let (msg, breaks) = match (&before, &after) {
                (None, Some(_)) => (format!("rollup {what} {} added", code(&name)), Breaks::NONE),
                (Some(_), None) => (format!("rollup {what} {} removed", code(&name)), Breaks::WIDER),
                (Some((_, b)), Some((_, a))) if a.get("meaning").is_some_and(|m| b.get("meaning") == Some(m)) => {
                    match (b["key-name"].as_str(), a["key-name"].as_str()) {
                        (Some(was), Some(now)) if was != now => (
                            format!(
                                "rollup {what} {} writes its key as {} (was {}: the key was renamed)",
                                code(&name),
                                code(now),
                                code(was)
                            ),
                            Breaks::WIDER,
                        ),
                        _ => continue,
                    }
                }
                (Some((_, b)), Some((_, a))) if a != b => {
                    (format!("rollup {what} {} folds something else", code(&name)), Breaks::WIDER)
                }
                _ => continue,
            };
            let (oo, no) = (before.map(|(o, _)| o), after.map(|(o, _)| o));
            self.push(R::RollupChanged, &at(&name), oo.as_ref(), no.as_ref(), msg, breaks);
        }
    }
}

/// The renames NEW declares (`x-renamed-from`) that a sequence rule's meaning can name: events, event properties,
/// envelope properties (old name -> new name).
struct SeqRenames {
    events: BTreeMap<String, String>,
    event_fields: BTreeMap<String, String>,
    envelope_fields: BTreeMap<String, String>,
}

impl SeqRenames {
    fn of(nm: &Model, np: &Protocol) -> SeqRenames {
        let renamed = |id: TypeId| -> BTreeMap<String, String> {
            match &nm.ty(id).node.shape {
                Shape::Object(o) => {
                    o.fields.iter().filter_map(|f| f.renamed_from.clone().map(|old| (old, f.name.clone()))).collect()
                }
                _ => BTreeMap::new(),
            }
        };
        SeqRenames {
            events: np.events.iter().filter_map(|e| e.renamed_from.clone().map(|old| (old, e.tag.clone()))).collect(),
            event_fields: np.events.iter().flat_map(|e| renamed(e.ty)).collect(),
            envelope_fields: renamed(np.envelope),
        }
    }

    /// A rule's pointer (`/<envelope property>` or `/<union>/<event property>`) with the property's new name.
    fn pointer(&self, p: &str, union: &str) -> String {
        let event = p.strip_prefix('/').and_then(|r| r.strip_prefix(union)).and_then(|r| r.strip_prefix('/'));
        match event {
            Some(name) => match self.event_fields.get(name) {
                Some(n) => format!("/{union}/{n}"),
                None => p.to_string(),
            },
            None => match p.strip_prefix('/').and_then(|name| self.envelope_fields.get(name)) {
                Some(n) => format!("/{n}"),
                None => p.to_string(),
            },
        }
    }

    /// A rule's message template with the placeholders of renamed properties renamed (`{call}` is filled with the
    /// value of the key named `call`: renamed `callId`, the same message reads `{callId}`).
    fn message(&self, m: &str) -> String {
        let mut out = m.to_string();
        for (old, new) in self.event_fields.iter().chain(&self.envelope_fields) {
            out = out.replace(&format!("{{{old}}}"), &format!("{{{new}}}"));
        }
        out
    }

    /// A rule's meaning ([`crate::ir::Sequence::meaning`]) with the old names replaced by the new.
    fn apply(&self, v: Value) -> Value {
        let event = |s: String| self.events.get(&s).cloned().unwrap_or(s);
        match v {
            Value::Object(mut o) => {
                if let (Some(Value::String(place)), Some(Value::String(p))) = (o.get("in"), o.get("property")) {
                    let map = if place == "envelope" { &self.envelope_fields } else { &self.event_fields };
                    if let Some(n) = map.get(p) {
                        o.insert("property".into(), Value::String(n.clone()));
                    }
                    return Value::Object(o);
                }
                for (k, x) in o.iter_mut() {
                    *x = match (k.as_str(), std::mem::take(x)) {
                        ("opened-by" | "closed-by" | "by", Value::String(t)) => Value::String(event(t)),
                        ("on", Value::Array(ts)) => Value::Array(
                            ts.into_iter()
                                .map(|t| match t {
                                    Value::String(t) => Value::String(event(t)),
                                    other => other,
                                })
                                .collect(),
                        ),
                        (_, other) => self.apply(other),
                    };
                }
                Value::Object(o)
            }
            Value::Array(a) => Value::Array(a.into_iter().map(|x| self.apply(x)).collect()),
            other => other,
        }
    }
}

/// Whether two `x-removed` entries remove the same things.
fn same_items(a: &Removed, b: &Removed) -> bool {
    match (&a.kind, &b.kind) {
        (RemovedKind::Events(x), RemovedKind::Events(y)) => x.iter().any(|(t, _)| y.iter().any(|(u, _)| t == u)),
        (RemovedKind::Property { event: e, name: n, .. }, RemovedKind::Property { event: f, name: m, .. }) => {
            e == f && n == m
        }
        _ => false,
    }
}

fn cell_what(r: &Removed) -> String {
    match &r.kind {
        RemovedKind::Events(evs) => list(&evs.iter().map(|(t, _)| format!("event {}", code(t))).collect::<Vec<_>>()),
        RemovedKind::Property { event, name, .. } => format!("{} on {}", code(name), code(event)),
    }
}

/// The values a shape accepts when it is a list of them: a `const`, an `enum`, `null`, a nullable list, an
/// `anyOf` of lists (the values of any), a `oneOf` of lists (the values of exactly one: a value in two matches
/// both and is refused); with `ranges`, a short range of integers too ([`range_values`]), alone or in those
/// (a nullable range beside `enum [1, 2, null]`; helper 95), and `boolean` as `true, false`. An `allOf` with a
/// part that is a list is that list's values its other parts accept (`accepts`, the side's engine): an `enum`
/// given a `minLength` its values all meet is the same list (helper 123: it was an `allOf` part added, failing
/// --policy backward). `None` for any other shape.
fn values_of(m: &Model, s: &Shape, ranges: bool, accepts: &dyn Fn(&Node, &Value) -> bool) -> Option<Vec<Value>> {
    let each = |ms: &[Node]| ms.iter().map(|x| values_of(m, &x.shape, ranges, accepts)).collect::<Option<Vec<_>>>();
    match m.resolve(s) {
        Shape::Number(_) if ranges => range_values(m, s),
        Shape::Boolean if ranges => Some(vec![Value::Bool(true), Value::Bool(false)]),
        Shape::AllOf(ms) => {
            let (i, vs) =
                ms.iter().enumerate().find_map(|(i, x)| Some((i, values_of(m, &x.shape, ranges, accepts)?)))?;
            let others = || ms.iter().enumerate().filter(move |(j, _)| *j != i).map(|(_, x)| x);
            Some(vs.into_iter().filter(|v| others().all(|x| accepts(x, v))).collect())
        }
        Shape::Const(v) => Some(vec![v.clone()]),
        Shape::Enum(vs) => Some(vs.clone()),
        Shape::Null => Some(vec![Value::Null]),
        Shape::Nullable(x) => values_of(m, &x.shape, ranges, accepts).map(|mut vs| {
            vs.push(Value::Null);
            vs
        }),
        Shape::AnyOf(ms) => each(ms).map(|vs| vs.concat()),
        Shape::OneOf(ms) => {
            let lists = each(ms)?;
            let (mut seen, mut twice) = (ValueSet::default(), ValueSet::default());
            for list in &lists {
                let mut own = ValueSet::default();
                for v in list.iter().filter(|v| own.insert(v)) {
                    if !seen.insert(v) {
                        twice.insert(v);
                    }
                }
            }
            Some(lists.concat().into_iter().filter(|v| !twice.contains(v)).collect())
        }
        _ => None,
    }
}

/// The values of an integer shape with both bounds and at most 256 values (`integer`, `minimum: 1`,
/// `maximum: 3` is `1, 2, 3`; a whole `multipleOf` keeps its multiples), to compare it with a list of values;
/// `None` for any other shape.
fn range_values(m: &Model, s: &Shape) -> Option<Vec<Value>> {
    const MOST: f64 = 256.0;
    let Shape::Number(n) = m.resolve(s) else { return None };
    let whole = |x: f64| x.fract() == 0.0;
    let step = match n.multiple_of {
        None => 1.0,
        Some(k) if whole(k) && k >= 1.0 => k,
        Some(_) => return None,
    };
    if !n.integer && n.multiple_of.is_none() {
        return None;
    }
    let lo = [n.minimum.map(f64::ceil), n.exclusive_minimum.map(|x| x.floor() + 1.0)]
        .into_iter()
        .flatten()
        .reduce(f64::max)?;
    let hi = [n.maximum.map(f64::floor), n.exclusive_maximum.map(|x| x.ceil() - 1.0)]
        .into_iter()
        .flatten()
        .reduce(f64::min)?;
    let safe = 9_007_199_254_740_991.0;
    if !(lo.abs() <= safe && hi.abs() <= safe) || hi - lo >= MOST * step {
        return None;
    }
    let first = (lo / step).ceil() * step;
    let mut out = Vec::new();
    let mut v = first;
    while v <= hi {
        out.push(Value::from(v as i64));
        v += step;
    }
    Some(out)
}

/// A key of a list member that the diff's equal members share (what it takes, read `depth` levels down: an
/// object's property names, a list's values, a pattern; not where it stands), so that long lists pair their
/// members without comparing every pair. Members the diff finds equal but keyed apart (`integer` beside
/// `multipleOf: 1`) are only compared by their places.
fn member_key(m: &Model, n: &Node, depth: usize) -> String {
    // A type the schema declares (a file root, a `$defs` entry) by its name, as the diff pairs such types; one
    // named after its place (an `anyOf` member's object) by what it is, as its place is what moved.
    if let Shape::Ref(id) = n.shape {
        if is_entry(m.ty(id)) {
            return format!("type({})", m.ty(id).names.base);
        }
    }
    let (n, _) = m.resolve_node(n);
    let many = |tag: &str, ms: &[&Node]| {
        let mut keys: Vec<String> = ms.iter().map(|x| member_key(m, x, depth.saturating_sub(1))).collect();
        keys.sort();
        format!("{tag}({})", keys.join(","))
    };
    let sorted = |vs: &[Value]| {
        let mut t: Vec<String> = vs.iter().map(Value::to_string).collect();
        t.sort();
        t.join(",")
    };
    if depth == 0 {
        return kind(&n.shape).to_string();
    }
    match &n.shape {
        Shape::Object(o) => {
            let mut fields: Vec<String> = (o.fields.iter())
                .map(|f| {
                    format!("{}{}:{}", f.name, if f.required { "!" } else { "" }, member_key(m, &f.node, depth - 1))
                })
                .collect();
            fields.sort_unstable();
            format!("object({})", fields.join(","))
        }
        Shape::String(st) => format!(
            "string({:?},{:?},{})",
            st.min_length,
            st.max_length,
            st.pattern.as_ref().map_or("", |p| p.source.as_str())
        ),
        Shape::Number(x) => format!("number({x:?})"),
        Shape::Const(v) => format!("enum({})", sorted(std::slice::from_ref(v))),
        Shape::Enum(vs) => format!("enum({})", sorted(vs)),
        Shape::Union(u) => format!(
            "union({},{})",
            u.discriminator,
            sorted(&u.members.iter().map(|x| x.tag.clone()).collect::<Vec<_>>())
        ),
        Shape::Array(a) => many("array", &a.items.iter().map(|x| &**x).collect::<Vec<_>>()),
        Shape::Nullable(x) => many("nullable", &[x]),
        Shape::Kinds(ms) => many("kinds", &ms.iter().collect::<Vec<_>>()),
        Shape::AllOf(ms) => many("allOf", &ms.iter().collect::<Vec<_>>()),
        Shape::AnyOf(ms) => many("anyOf", &ms.iter().collect::<Vec<_>>()),
        Shape::OneOf(ms) => many("oneOf", &ms.iter().collect::<Vec<_>>()),
        Shape::Not(x) => many("not", &[x]),
        s => kind(s).to_string(),
    }
}

/// What a change calls a member of a list: `what`, or a `oneOf` member where the schema wrote one (a `oneOf`
/// compared as the `anyOf` it means, [`any_of_when_disjoint`]).
fn member_word(what: &'static str, x: &Node) -> &'static str {
    match x.origin.pointer.rsplit('/').nth(1) {
        Some("oneOf") if what == "`anyOf` member" => "`oneOf` member",
        _ => what,
    }
}

/// A `oneOf` whose members take values of pairwise different JSON kinds, as the `anyOf` it means.
fn any_of_when_disjoint(m: &Model, x: &Node) -> Option<Node> {
    let Shape::OneOf(ms) = &x.shape else { return None };
    let mut seen = 0u8;
    for k in ms.iter().map(|y| kinds_of(m, &y.shape)) {
        if seen & k != 0 {
            return None;
        }
        seen |= k;
    }
    Some(Node { shape: Shape::AnyOf(ms.clone()), ..x.clone() })
}

/// The JSON kinds a shape's values can be of, one bit each (all six where the shape does not bound them).
fn kinds_of(m: &Model, s: &Shape) -> u8 {
    const KINDS: [&str; 6] = ["null", "boolean", "number", "string", "array", "object"];
    let bit = |k: &str| KINDS.iter().position(|x| *x == k).map_or(0x3f, |i| 1 << i);
    match m.resolve(s) {
        Shape::Never => 0,
        Shape::Nullable(x) => kinds_of(m, &x.shape) | bit("null"),
        Shape::Kinds(ks) => ks.iter().fold(0, |a, k| a | kinds_of(m, &k.shape)),
        Shape::Enum(vs) => vs.iter().fold(0, |a, v| a | bit(value_kind(v))),
        s => bit(kind(s)),
    }
}

/// A JSON value's kind.
fn value_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The JSON kind a member of `type: [...]` accepts.
fn kind(s: &Shape) -> &'static str {
    let of = value_kind;
    match s {
        Shape::Null => "null",
        Shape::Boolean => "boolean",
        Shape::Number(_) => "number",
        Shape::String(_) => "string",
        Shape::Array(_) => "array",
        Shape::Object(_) | Shape::Union(_) => "object",
        Shape::Const(v) => of(v),
        Shape::Enum(vs) if vs.iter().all(|v| of(v) == vs.first().map_or("", of)) => vs.first().map_or("other", of),
        _ => "other",
    }
}
