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
        let renames = renames(m, p, &mut BTreeSet::new());
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

    /// Where a protocol declares a property rename the plan does not follow (inside `allOf`, `anyOf`, `oneOf`,
    /// `not`, `if`, `dependentSchemas`, `unevaluated*`, a `prefixItems` position or `patternProperties`, or in a type
    /// no message holds): the properties' locations. The loader refuses them, so a declared rename is never
    /// silently left out of an upgrade.
    pub fn unreached_renames(m: &Model) -> Vec<crate::ir::Origin> {
        let Some(p) = m.protocol.as_ref() else { return Vec::new() };
        let mut reached = BTreeSet::new();
        renames(m, p, &mut reached);
        let mut out = Vec::new();
        for t in &m.types {
            t.node.visit(&mut |n: &Node| {
                if let Shape::Object(o) = &n.shape {
                    if !reached.contains(&std::ptr::from_ref(o)) {
                        out.extend(o.fields.iter().filter(|f| f.renamed_from.is_some()).map(|f| f.node.origin.clone()));
                    }
                }
            });
        }
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

/// Why the loader refuses a rename [`Plan::unreached_renames`] finds: where the walk ([`walk`]) carries renames.
pub(crate) const UNREACHED_RENAME: &str = "the upgrade does not follow this rename: renames are carried through \
     properties, arrays, maps and tagged unions, not inside `allOf`, `anyOf`, `oneOf`, `not`, `if`, \
     `dependentSchemas`, `prefixItems` or `patternProperties`";

/// The property renames of a protocol: the envelope's, then each event's. `reached` gets every object the walk
/// enters.
fn renames(m: &Model, p: &crate::ir::Protocol, reached: &mut BTreeSet<*const ObjectShape>) -> Vec<RenameStep> {
    let mut out = Vec::new();
    walk(m, &m.ty(p.envelope).node, None, &mut Vec::new(), &mut out, &mut vec![p.envelope], reached);
    for e in &p.events {
        walk(m, &m.ty(e.ty).node, Some(&e.tag), &mut Vec::new(), &mut out, &mut vec![e.ty], reached);
    }
    out
}

/// Collects the property renames under `node` (pre-order: an object's own renames before its children's, whose
/// paths use the current names). The events' union is not entered: each event is walked on its own.
fn walk(
    m: &Model,
    node: &Node,
    event: Option<&str>,
    at: &mut Vec<String>,
    out: &mut Vec<RenameStep>,
    stack: &mut Vec<TypeId>,
    reached: &mut BTreeSet<*const ObjectShape>,
) {
    match &node.shape {
        Shape::Ref(id) if !stack.contains(id) => {
            stack.push(*id);
            walk(m, &m.ty(*id).node, event, at, out, stack, reached);
            stack.pop();
        }
        Shape::Object(o) => {
            reached.insert(std::ptr::from_ref(o));
            for f in &o.fields {
                if let Some(old) = &f.renamed_from {
                    out.push(RenameStep {
                        event: event.map(String::from),
                        at: at.clone(),
                        from: old.clone(),
                        to: f.name.clone(),
                    });
                }
            }
            for f in &o.fields {
                at.push(f.name.clone());
                walk(m, &f.node, event, at, out, stack, reached);
                at.pop();
            }
            if let Additional::Schema(n) = &o.additional {
                at.push("*".into());
                walk(m, n, event, at, out, stack, reached);
                at.pop();
            }
        }
        Shape::Array(a) => {
            if let Some(items) = &a.items {
                at.push("[]".into());
                walk(m, items, event, at, out, stack, reached);
                at.pop();
            }
        }
        Shape::Nullable(n) => walk(m, n, event, at, out, stack, reached),
        Shape::Union(u) if !u.events => {
            for mem in &u.members {
                let Some(tag) = mem.tag.as_str() else { continue };
                at.push(format!("[{}={tag}]", u.discriminator));
                if !stack.contains(&mem.ty) {
                    stack.push(mem.ty);
                    walk(m, &m.ty(mem.ty).node, event, at, out, stack, reached);
                    stack.pop();
                }
                at.pop();
            }
        }
        _ => {}
    }
}
