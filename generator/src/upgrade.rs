//! Reading messages of the previous protocol version: the declared renames and moves of a protocol, lowered once
//! from the model into an upgrade [`Plan`] that `wiregen migrate` applies and the Rust and TypeScript outputs
//! print as data for their own `upgrade` functions (all three run the same steps in the same order).
//!
//! The plan comes from NEW alone, from what its schema declares:
//! - `x-renamed-from` on an event: the previous discriminator value becomes the current one;
//! - `x-moved-from` on a property of an event: the value at that JSON Pointer of the previous version's message
//!   (from the envelope's root, e.g. `/subagent`) is moved into the property;
//! - `x-renamed-from` on a property (of the envelope, an event, or any object they hold, through arrays, maps and
//!   tagged unions): the property is renamed where it stands.
//!
//! Nothing is guessed and nothing is invented: a required moved value whose old place is empty is a [`Loss`] with
//! the rule id `field-moved` and the pointer where it is missing. What the plan cannot carry (a property NEW no
//! longer has, a value NEW constrains more tightly) is found by validating the result against NEW; `wiregen
//! migrate` does that per line.
//!
//! # Example
//!
//! ```
//! let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
//! let v2 = wiregen::load::load(&root.join("schema")).expect("the v2 schema loads");
//! let plan = wiregen::upgrade::Plan::of(&v2).expect("a protocol");
//! let mut m = serde_json::json!({"id": "m1", "time": 1, "role": "agent", "subagent": "sa1", "ev": {"t": "start"}});
//! let losses = plan.apply(&mut m);
//! assert!(losses.is_empty());
//! assert_eq!(m, serde_json::json!({"id": "m1", "time": 1, "role": "agent", "ev": {"t": "subagent-start", "agentId": "sa1"}}));
//! ```

#[path = "emit/rust/rt_upgrade.rs"]
pub(crate) mod rt;

use std::collections::BTreeSet;

use serde_json::Value;

use crate::ir::{Additional, Model, Node, ObjectShape, Shape, TypeId};

pub use rt::Loss;

/// The declared renames and moves of a protocol, in the order they are applied.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    /// The envelope property holding the event (`ev`).
    pub union_field: String,
    /// The event property holding its type (`t`).
    pub discriminator: String,
    /// Events renamed: `(previous discriminator value, current one)`.
    pub events: Vec<(String, String)>,
    /// Values moved into event properties.
    pub moves: Vec<MoveStep>,
    /// Properties renamed, parents before children.
    pub renames: Vec<RenameStep>,
}

/// A value moved into a property of an event (`x-moved-from`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveStep {
    /// The event (current discriminator value).
    pub event: String,
    /// JSON Pointer into the previous version's message, from the envelope's root.
    pub from: String,
    /// The event property that receives it.
    pub to: String,
    /// Whether the property is required (an empty old place is then a loss).
    pub required: bool,
}

/// A property renamed (`x-renamed-from`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenameStep {
    /// `None` under the envelope, else the event (current discriminator value).
    pub event: Option<String>,
    /// The path of the object holding the property: current property names, `[]` (array items), `*` (map
    /// values), `[k=v]` (the union member whose `k` is `v`).
    pub at: Vec<String>,
    /// The previous name.
    pub from: String,
    /// The current name.
    pub to: String,
}

impl Plan {
    /// The plan of a protocol (`None` for a plain type package, which has no messages to upgrade).
    pub fn of(m: &Model) -> Option<Plan> {
        let p = m.protocol.as_ref()?;
        let disc = match &m.ty(p.union).node.shape {
            Shape::Union(u) => u.discriminator.clone(),
            _ => "t".to_string(),
        };
        let renames = renames(m, p).out;
        let mut plan = Plan { union_field: p.union_field.clone(), discriminator: disc, renames, ..Plan::default() };
        for e in &p.events {
            if let Some(old) = &e.renamed_from {
                plan.events.push((old.clone(), e.tag.clone()));
            }
            if let Shape::Object(o) = &m.ty(e.ty).node.shape {
                for f in &o.fields {
                    if let Some(from) = &f.moved_from {
                        plan.moves.push(MoveStep {
                            event: e.tag.clone(),
                            from: from.clone(),
                            to: f.name.clone(),
                            required: f.required,
                        });
                    }
                }
            }
        }
        Some(plan)
    }

    /// The plan of NEW's declarations for messages of OLD: NEW's plan ([`Plan::of`]) without the moves OLD has
    /// already taken. A declaration is relative to the version before NEW (v2's `subagent-start.agentId` moved
    /// from v1's envelope `subagent`); where OLD is not that version and its event (under NEW's tag, or the tag
    /// NEW renamed) already has the property (v2 migrated to v2, or to a later version that kept the
    /// declaration), the value is there, the envelope's property means something else (a nested start's parent),
    /// and `wiregen diff` reports no `field-moved`. Renames stay: a message without the old name is left as it is,
    /// and one holding both names is a loss (`field-renamed`), never an overwrite.
    pub fn between(old: &Model, new: &Model) -> Option<Plan> {
        let mut plan = Plan::of(new)?;
        let Some(op) = old.protocol.as_ref() else { return Some(plan) };
        let has = |tag: &str, field: &str| {
            (op.events.iter().filter(|e| e.tag == tag))
                .any(|e| matches!(old.resolve(&old.ty(e.ty).node.shape), Shape::Object(o) if o.fields.iter().any(|f| f.name == field)))
        };
        let renamed = plan.events.clone();
        plan.moves.retain(|m| {
            let before = renamed.iter().find(|(_, now)| *now == m.event).map(|(was, _)| was.as_str());
            !has(&m.event, &m.to) && !before.is_some_and(|t| has(t, &m.to))
        });
        Some(plan)
    }

    /// Where a protocol declares a property rename the plan does not follow, and why: inside `allOf`, `anyOf`,
    /// `oneOf`, `not`, `if`, `dependentSchemas`, `unevaluated*`, a `prefixItems` position or `patternProperties`, or
    /// in a type no message holds (`UNREACHED_RENAME`); below a type that contains itself, where the rename would
    /// repeat at every depth (`RECURSIVE_RENAME`); below a property whose name the plan's paths read as a step
    /// (`AMBIGUOUS_RENAME`); any, when the types that hold renames are reached by too many paths to walk
    /// (`TOO_MANY_PATHS`). The loader refuses them, so a declared rename is never silently left out of an
    /// upgrade.
    pub fn unreached_renames(m: &Model) -> Vec<(crate::ir::Origin, String)> {
        let Some(p) = m.protocol.as_ref() else { return Vec::new() };
        let w = renames(m, p);
        let mut out = Vec::new();
        // The types in and below the one the walk could not enter, if any.
        let mut beyond = vec![false; m.types.len()];
        let mut todo: Vec<TypeId> = w.over.into_iter().collect();
        while let Some(id) = todo.pop() {
            if beyond.get(id.0).is_some_and(|b| !b) {
                beyond[id.0] = true;
                m.ty(id).node.visit_refs(&mut |r| todo.push(r));
            }
        }
        for (t, beyond) in m.types.iter().zip(beyond) {
            t.node.visit(&mut |n: &Node| {
                if let Shape::Object(o) = &n.shape {
                    // A walk cut short says nothing of what it did not reach.
                    let why = match w.over {
                        Some(_) if beyond => Some(TOO_MANY_PATHS),
                        Some(_) => None,
                        None => (!w.reached.contains(&std::ptr::from_ref(o))).then_some(UNREACHED_RENAME),
                    };
                    if let Some(why) = why {
                        out.extend(
                            (o.fields.iter().filter(|f| f.renamed_from.is_some()))
                                .map(|f| (f.node.origin.clone(), why.to_string())),
                        );
                    }
                }
            });
        }
        // The types with renames met where the upgrade renames nothing, and those below them: their renames are
        // carried on one path and not on another (helper 123: an image type reached by a property and through an
        // `anyOf`; the diff called the rename safe for stored history, and `migrate` refused the `anyOf`'s).
        // Each with the place it is met first where the upgrade renames nothing, which the error names.
        let mut below_uncarried: Vec<Option<&crate::ir::Origin>> = vec![None; m.types.len()];
        let mut todo: Vec<(TypeId, &crate::ir::Origin)> =
            if w.over.is_none() { w.uncarried.iter().map(|(id, at)| (*id, at)).collect() } else { Vec::new() };
        todo.reverse();
        while let Some((id, at)) = todo.pop() {
            if w.holds.get(id.0).copied().unwrap_or(false) && below_uncarried[id.0].is_none() {
                below_uncarried[id.0] = Some(at);
                m.ty(id).node.visit_refs(&mut |r| todo.push((r, at)));
            }
        }
        for (t, at) in m.types.iter().zip(&below_uncarried) {
            let Some(at) = at else { continue };
            let why = format!("{UNCARRIED_RENAME} (it is reached at `{}` in `{}`)", at.pointer, at.file);
            t.node.visit(&mut |n: &Node| {
                match &n.shape {
                    // (One the walk never reached is refused as unreached above.)
                    Shape::Object(o) if w.reached.contains(&std::ptr::from_ref(o)) => {
                        let renamed = o.fields.iter().filter(|f| f.renamed_from.is_some());
                        out.extend(renamed.map(|f| (f.node.origin.clone(), why.clone())));
                    }
                    _ => {}
                }
            });
        }
        for f in w.found.iter().filter(|_| w.over.is_none()) {
            if f.ambiguous {
                out.push((f.origin.clone(), AMBIGUOUS_RENAME.to_string()));
            } else if f.stack.iter().any(|t| w.recursed.contains(t)) {
                out.push((f.origin.clone(), RECURSIVE_RENAME.to_string()));
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// Whether the plan does nothing (NEW declares no rename and no move).
    pub fn is_empty(&self) -> bool {
        self.events.is_empty() && self.moves.is_empty() && self.renames.is_empty()
    }

    /// Upgrades a message of the previous version in place; the values that could not be carried over.
    pub fn apply(&self, v: &mut Value) -> Vec<Loss> {
        let events: Vec<(&str, &str)> = self.events.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let moves: Vec<rt::Move<'_>> = self
            .moves
            .iter()
            .map(|m| rt::Move { event: &m.event, from: &m.from, to: &m.to, required: m.required })
            .collect();
        let ats: Vec<Vec<&str>> = self.renames.iter().map(|r| r.at.iter().map(String::as_str).collect()).collect();
        let renames: Vec<rt::Rename<'_>> = self
            .renames
            .iter()
            .zip(&ats)
            .map(|(r, at)| rt::Rename { event: r.event.as_deref(), at, from: &r.from, to: &r.to })
            .collect();
        let plan = rt::Plan {
            union_field: &self.union_field,
            discriminator: &self.discriminator,
            events: &events,
            moves: &moves,
            renames: &renames,
        };
        rt::apply(&plan, v)
    }
}

/// Why the loader refuses a rename [`Plan::unreached_renames`] finds: where the walk ([`Walker::walk`]) carries
/// renames.
pub(crate) const UNREACHED_RENAME: &str = "the upgrade does not follow this rename: renames are carried through \
     properties, arrays, maps and tagged unions, not inside `allOf`, `anyOf`, `oneOf`, `not`, `if`, \
     `dependentSchemas`, `prefixItems`, `contains` or `patternProperties` (a `$ref` beside other keywords is an \
     `allOf`)";

/// Why the loader refuses a rename in a type that is also reached where the upgrade renames nothing.
pub(crate) const UNCARRIED_RENAME: &str = "the upgrade does not follow this rename everywhere: the type holding it \
     is also reached inside `allOf`, `anyOf`, `oneOf`, `not`, `if`, `dependentSchemas`, `prefixItems`, `contains` or \
     `patternProperties` (a `$ref` beside other keywords is an `allOf`), where renames are not carried (an old \
     message there would keep the old name)";

/// Why the loader refuses a rename below a type that contains itself.
pub(crate) const RECURSIVE_RENAME: &str = "the upgrade does not follow this rename: it stands in a type that \
     contains itself, and the upgrade's paths rename at one depth only (a nested copy would keep the old name)";

/// Why the loader refuses a rename below a property named like a path step.
pub(crate) const AMBIGUOUS_RENAME: &str = "the upgrade does not follow this rename: a property on the way to it is \
     named `*`, `[]` or `[...]`, which the upgrade's paths read as every map value, every array item or a union \
     member, or a union on the way has a discriminator with `=` in its name, which its step `[name=tag]` cannot \
     tell from the tag";

/// Why the loader refuses a rename the walk gave up on: it enters at most [`WALK_BUDGET`] types.
pub(crate) const TOO_MANY_PATHS: &str = "the upgrade does not follow this rename: the types that hold it are reached \
     by more than 10,000 paths from the messages (a type with two properties of the next, level after level, \
     doubles them at every level), and the upgrade renames along each path";

/// How many types the walk enters at most ([`TOO_MANY_PATHS`]).
const WALK_BUDGET: usize = 10_000;

/// A rename the walk found, for [`Plan::unreached_renames`].
struct Found {
    origin: crate::ir::Origin,
    /// The types being walked when it was found.
    stack: Vec<TypeId>,
    /// Whether its path holds a property named like a path step.
    ambiguous: bool,
}

/// The walk over a protocol's types that collects its property renames.
struct Walker<'m> {
    m: &'m Model,
    event: Option<String>,
    at: Vec<String>,
    out: Vec<RenameStep>,
    stack: Vec<TypeId>,
    /// Every object the walk entered.
    reached: BTreeSet<*const ObjectShape>,
    /// Types met again below themselves.
    recursed: BTreeSet<TypeId>,
    found: Vec<Found>,
    /// How many property names on the current path read as a path step.
    ambiguous: usize,
    /// Per type, whether it or a type below it declares a property rename: the walk enters no other (below
    /// those, the paths to walk could double at every level and none leads to a rename).
    holds: Vec<bool>,
    /// How many more types the walk may enter.
    budget: usize,
    /// The type the walk was to enter when it ran out of its budget (the loader refuses the renames in and below
    /// it: [`TOO_MANY_PATHS`]).
    over: Option<TypeId>,
    /// Types with renames referred to from a node the walk does not enter ([`Walker::not_carried`]), each with the
    /// place of the reference.
    uncarried: Vec<(TypeId, crate::ir::Origin)>,
}

/// Per type, whether it or a type it refers to (through any node, or as a union member) declares a property
/// rename.
fn holds_renames(m: &Model) -> Vec<bool> {
    let n = m.types.len();
    let mut referrers: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut holds = vec![false; n];
    let mut todo = Vec::new();
    for (i, t) in m.types.iter().enumerate() {
        t.node.visit_refs(&mut |r| {
            if let Some(by) = referrers.get_mut(r.0) {
                by.push(i);
            }
        });
        t.node.visit(&mut |node: &Node| {
            holds[i] |= matches!(&node.shape, Shape::Object(o) if o.fields.iter().any(|f| f.renamed_from.is_some()));
        });
        if holds[i] {
            todo.push(i);
        }
    }
    while let Some(i) = todo.pop() {
        for &by in &referrers[i] {
            if !holds[by] {
                holds[by] = true;
                todo.push(by);
            }
        }
    }
    holds
}

/// Whether a property name reads as a step of a rename path (`*`, `[]`, `[k=v]`).
fn is_step(name: &str) -> bool {
    name == "*" || (name.starts_with('[') && name.ends_with(']'))
}

/// The property renames of a protocol: the envelope's, then each event's.
fn renames<'m>(m: &'m Model, p: &crate::ir::Protocol) -> Walker<'m> {
    let mut w = Walker {
        m,
        event: None,
        at: Vec::new(),
        out: Vec::new(),
        stack: vec![p.envelope],
        reached: BTreeSet::new(),
        recursed: BTreeSet::new(),
        found: Vec::new(),
        ambiguous: 0,
        holds: holds_renames(m),
        uncarried: Vec::new(),
        budget: WALK_BUDGET,
        over: None,
    };
    w.walk(&m.ty(p.envelope).node);
    for e in &p.events {
        w.event = Some(e.tag.clone());
        w.stack = vec![e.ty];
        w.walk(&m.ty(e.ty).node);
    }
    w
}

impl Walker<'_> {
    /// Enters type `id` unless it is being walked already (then it contains itself).
    fn enter(&mut self, id: TypeId) {
        if self.stack.contains(&id) {
            self.recursed.insert(id);
            return;
        }
        if !self.holds.get(id.0).copied().unwrap_or(false) {
            return;
        }
        if self.budget == 0 {
            self.over.get_or_insert(id);
            return;
        }
        self.budget -= 1;
        self.stack.push(id);
        let m = self.m;
        self.walk(&m.ty(id).node);
        self.stack.pop();
    }

    /// Walks `node` below the current path.
    fn below(&mut self, seg: String, node: &Node) {
        self.at.push(seg);
        self.walk(node);
        self.at.pop();
    }

    /// Collects the property renames under `node` (pre-order: an object's own renames before its children's,
    /// whose paths use the current names). The events' union is not entered: each event is walked on its own.
    fn walk(&mut self, node: &Node) {
        match &node.shape {
            Shape::Ref(id) => self.enter(*id),
            Shape::Object(o) => {
                self.reached.insert(std::ptr::from_ref(o));
                for f in &o.fields {
                    if let Some(old) = &f.renamed_from {
                        self.out.push(RenameStep {
                            event: self.event.clone(),
                            at: self.at.clone(),
                            from: old.clone(),
                            to: f.name.clone(),
                        });
                        self.found.push(Found {
                            origin: f.node.origin.clone(),
                            stack: self.stack.clone(),
                            ambiguous: self.ambiguous > 0,
                        });
                    }
                }
                for f in &o.fields {
                    let step = is_step(&f.name);
                    self.ambiguous += usize::from(step);
                    self.below(f.name.clone(), &f.node);
                    self.ambiguous -= usize::from(step);
                }
                if let Additional::Schema(n) = &o.additional {
                    self.below("*".into(), n);
                }
                for (_, n) in &o.pattern_properties {
                    self.not_carried(n);
                }
            }
            Shape::Array(a) => {
                if let Some(items) = &a.items {
                    self.below("[]".into(), items);
                }
                for n in a.prefix.iter().chain(a.contains.as_ref().map(|c| &*c.node)) {
                    self.not_carried(n);
                }
            }
            Shape::Nullable(n) => self.walk(n),
            // The events' union is not entered here: each event is walked on its own.
            Shape::Union(u) if u.events => {}
            Shape::Union(u) => {
                for mem in &u.members {
                    let Some(tag) = mem.tag.as_str() else { continue };
                    // The step is split at its first `=`: a discriminator holding one would be cut short.
                    let step = u.discriminator.contains('=');
                    self.ambiguous += usize::from(step);
                    self.at.push(format!("[{}={tag}]", u.discriminator));
                    self.enter(mem.ty);
                    self.at.pop();
                    self.ambiguous -= usize::from(step);
                }
            }
            _ => self.not_carried(node),
        }
    }

    /// A node the upgrade does not enter (an `anyOf` member, an `allOf` part, a `prefixItems` position, a
    /// `patternProperties` value...): the types with renames it refers to are reached where the upgrade renames
    /// nothing.
    fn not_carried(&mut self, node: &Node) {
        let holds = &self.holds;
        let uncarried = &mut self.uncarried;
        let mut met = |r: TypeId, at: &crate::ir::Origin| {
            if holds.get(r.0).copied().unwrap_or(false) {
                uncarried.push((r, at.clone()));
            }
        };
        node.visit(&mut |n: &Node| match &n.shape {
            Shape::Ref(r) => met(*r, &n.origin),
            Shape::Union(u) => u.members.iter().for_each(|mb| met(mb.ty, &n.origin)),
            _ => {}
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_at_both_ends_of_a_move_or_a_rename_is_a_loss_not_overwritten() {
        let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
        let v2 = crate::load::load(&root.join("schema")).expect("v2");
        let plan = Plan::of(&v2).expect("a protocol");
        // The move: the envelope's `subagent` and the event's `agentId` both hold a value.
        let mut m = serde_json::json!({"id": "m1", "time": 1, "role": "agent", "subagent": "sa1",
            "ev": {"t": "start", "agentId": "other"}});
        let losses = plan.apply(&mut m);
        assert_eq!(losses.len(), 1, "{losses:?}");
        assert_eq!((losses[0].rule, losses[0].pointer.as_str()), ("field-moved", "/ev/agentId"));
        assert_eq!((&m["subagent"], &m["ev"]["agentId"]), (&"sa1".into(), &"other".into()), "both kept");
        // The rename: `input_tokens` and `inputTokens` both present.
        let mut m = serde_json::json!({"id": "m2", "time": 1, "role": "agent",
            "usage": {"input_tokens": 3, "inputTokens": 999, "output_tokens": 1}, "ev": {"t": "text", "text": "x"}});
        let losses = plan.apply(&mut m);
        assert_eq!(losses.len(), 1, "{losses:?}");
        assert_eq!((losses[0].rule, losses[0].pointer.as_str()), ("field-renamed", "/usage/inputTokens"));
        assert_eq!((&m["usage"]["input_tokens"], &m["usage"]["inputTokens"]), (&3.into(), &999.into()));
        assert_eq!(m["usage"]["outputTokens"], 1, "the other renames still apply");
    }
}
