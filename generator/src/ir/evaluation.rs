//! Which properties of an object, or items of an array, a node *evaluates*: JSON Schema's annotations, as
//! `unevaluatedProperties` and `unevaluatedItems` beside applicators read them. The rule is written here once, as
//! a plan ([`Evaluation`]) built from the model; the engine and every generated checker run the plan on a value,
//! testing validity with their own checks.
//!
//! A node evaluates: of an object, its declared properties, the properties its `patternProperties` match, and
//! every other property when `additionalProperties` is written (`x-unknown-keys: strip` alone does not); of an
//! array, the `prefixItems` positions, every later item when `items` is written, and the items `contains`
//! matches; through
//! `allOf`, every member's; through `anyOf` or `oneOf`, those of each member the value is valid against; through a
//! union, the member its tag picks; through `type: [...]` (or a schema without `type`), the one member of the
//! value's kind; through `if`, the condition's and `then`'s when the condition holds, else `else`'s; through
//! `dependentSchemas`, the entry's when the property is present; through `$ref`, the target's; an
//! `unevaluatedProperties` (`unevaluatedItems`) inside evaluates every property (item); `not` and everything
//! else, none.

use std::collections::BTreeSet;

use super::*;

/// A plan for the properties (items) a node evaluates on a value. `Keys` applies to objects, `Items` to arrays;
/// the others to both.
#[derive(Debug, Clone, PartialEq)]
pub enum Evaluation {
    /// Nothing.
    None,
    /// The items before `prefix`, every later one when `rest`, and those `contains` matches.
    Items {
        /// How many `prefixItems`.
        prefix: usize,
        /// Whether the items after them are evaluated (`items` is written).
        rest: bool,
        /// The `contains` schema.
        contains: Option<Box<Node>>,
    },
    /// The properties named here, those whose name matches one of the patterns, and every other one when `rest`.
    Keys {
        /// Declared property names.
        names: Vec<String>,
        /// `patternProperties` patterns.
        patterns: Vec<Pattern>,
        /// Whether every other property is evaluated too.
        rest: bool,
    },
    /// Each of these.
    All(Vec<Evaluation>),
    /// The plan of each node the value is valid against.
    Valid(Vec<(Node, Evaluation)>),
    /// When the value is valid against `cond`, `then` (the condition's properties and the branch's), else
    /// `otherwise`.
    Cond {
        /// The condition.
        cond: Box<Node>,
        /// The plan when it holds.
        then: Box<Evaluation>,
        /// The plan when it does not.
        otherwise: Box<Evaluation>,
    },
    /// When the object holds `property`, `then`.
    Dependent {
        /// The property.
        property: String,
        /// The plan when it is present.
        then: Box<Evaluation>,
    },
}

impl Model {
    /// The properties `n` evaluates on a value, as a plan.
    pub fn evaluation(&self, n: &Node) -> Evaluation {
        self.evaluation_in(n, &mut BTreeSet::new())
    }

    fn evaluation_in(&self, n: &Node, refs: &mut BTreeSet<TypeId>) -> Evaluation {
        let all = |plans: Vec<Evaluation>| {
            let mut plans: Vec<Evaluation> = plans.into_iter().filter(|p| *p != Evaluation::None).collect();
            match plans.len() {
                0 => Evaluation::None,
                1 => plans.pop().unwrap_or(Evaluation::None),
                _ => Evaluation::All(plans),
            }
        };
        let valid = |this: &Self, refs: &mut BTreeSet<TypeId>, ms: Vec<Node>| {
            let plans: Vec<(Node, Evaluation)> = ms
                .into_iter()
                .map(|m| {
                    let p = this.evaluation_in(&m, refs);
                    (m, p)
                })
                .filter(|(_, p)| *p != Evaluation::None)
                .collect();
            if plans.is_empty() {
                Evaluation::None
            } else {
                Evaluation::Valid(plans)
            }
        };
        match &n.shape {
            Shape::Ref(id) => {
                // A cycle back to a type on the way evaluates nothing more (the loader refuses one that no
                // object or array breaks, so this only guards).
                if !refs.insert(*id) {
                    return Evaluation::None;
                }
                let p = self.evaluation_in(&self.ty(*id).node, refs);
                refs.remove(id);
                p
            }
            Shape::Object(o) => Evaluation::Keys {
                names: o.fields.iter().map(|f| f.name.clone()).collect(),
                patterns: o.pattern_properties.iter().map(|(p, _)| p.clone()).collect(),
                rest: match o.additional {
                    Additional::Closed | Additional::Schema(_) => true,
                    Additional::Open | Additional::Strip => o.additional_written,
                },
            },
            // The member the value's tag picks, as for a type list: where the plan is read the union holds, so the
            // member of that tag does, and only the tag is tested ([`tag_test`]).
            Shape::Union(u) => {
                let plans: Vec<(Node, Evaluation)> = (u.members.iter())
                    .filter_map(|m| {
                        let member = Node { origin: n.origin.clone(), description: None, shape: Shape::Ref(m.ty) };
                        let p = self.evaluation_in(&member, refs);
                        (p != Evaluation::None).then(|| (tagged(&n.origin, &u.discriminator, &m.tag), p))
                    })
                    .collect();
                if plans.is_empty() {
                    Evaluation::None
                } else {
                    Evaluation::Valid(plans)
                }
            }
            Shape::Nullable(inner) => self.evaluation_in(inner, refs),
            Shape::AllOf(ms) => all(ms.iter().map(|m| self.evaluation_in(m, refs)).collect()),
            // The member of the value's kind: where a plan is read, the node holding it holds (the whole value is
            // valid, or the plan is inside a branch just found valid), so that member does too, and only a kind
            // is tested (testing the member itself would validate it again, and twice at every level of a
            // recursion through it).
            Shape::Kinds(ms) => {
                let plans: Vec<(Node, Evaluation)> = ms
                    .iter()
                    .filter_map(|m| {
                        let p = self.evaluation_in(m, refs);
                        (p != Evaluation::None).then(|| (self.any_of_kind(m).unwrap_or_else(|| m.clone()), p))
                    })
                    .collect();
                if plans.is_empty() {
                    Evaluation::None
                } else {
                    Evaluation::Valid(plans)
                }
            }
            Shape::AnyOf(ms) | Shape::OneOf(ms) => valid(self, refs, ms.clone()),
            Shape::Cond { cond, then, otherwise } => {
                let c = self.evaluation_in(cond, refs);
                let t = then.as_ref().map_or(Evaluation::None, |t| self.evaluation_in(t, refs));
                let e = otherwise.as_ref().map_or(Evaluation::None, |e| self.evaluation_in(e, refs));
                let then = all(vec![c, t]);
                if then == Evaluation::None && e == Evaluation::None {
                    return Evaluation::None;
                }
                Evaluation::Cond { cond: cond.clone(), then: Box::new(then), otherwise: Box::new(e) }
            }
            Shape::Dependent { property, then } => match self.evaluation_in(then, refs) {
                Evaluation::None => Evaluation::None,
                p => Evaluation::Dependent { property: property.clone(), then: Box::new(p) },
            },
            // Every property (item), and what the inner schema evaluates of the other kind.
            Shape::Unevaluated { inner, items, .. } => {
                let every = match items {
                    false => Evaluation::Keys { names: Vec::new(), patterns: Vec::new(), rest: true },
                    true => Evaluation::Items { prefix: 0, rest: true, contains: None },
                };
                all(vec![every, self.evaluation_in(inner, refs)])
            }
            Shape::Array(a) if a.prefix.is_empty() && !a.items_written && a.contains.is_none() => Evaluation::None,
            Shape::Array(a) => Evaluation::Items {
                prefix: a.prefix.len(),
                rest: a.items_written,
                contains: a.contains.as_ref().map(|c| c.node.clone()),
            },
            Shape::Any
            | Shape::Never
            | Shape::Null
            | Shape::Boolean
            | Shape::String(_)
            | Shape::Number(_)
            | Shape::Const(_)
            | Shape::Enum(_)
            | Shape::Not(_) => Evaluation::None,
        }
    }

    /// A node that accepts every value of the kind `member` accepts (any object, any array), when it is an
    /// object or an array member of a `type` list: its plan is read only when the member holds.
    fn any_of_kind(&self, member: &Node) -> Option<Node> {
        let shape = match self.resolve(&member.shape) {
            Shape::Object(_) => Shape::Object(ObjectShape::open(Vec::new())),
            Shape::Array(_) => Shape::Array(ArrayShape {
                prefix: Vec::new(),
                items: None,
                min_items: None,
                max_items: None,
                unique: false,
                items_written: false,
                contains: None,
            }),
            _ => return None,
        };
        Some(Node { origin: member.origin.clone(), description: None, shape })
    }
}

/// An object whose `discriminator` is `tag`, whatever else it holds: how a plan tests a union member.
fn tagged(origin: &Origin, discriminator: &str, tag: &Value) -> Node {
    let field = Field {
        name: discriminator.to_string(),
        description: None,
        required: true,
        renamed_from: None,
        moved_from: None,
        examples: Vec::new(),
        annotations: Default::default(),
        node: Node { origin: origin.clone(), description: None, shape: Shape::Const(tag.clone()) },
    };
    Node { origin: origin.clone(), description: None, shape: Shape::Object(ObjectShape::open(vec![field])) }
}

/// The property and value of an object node [`tagged`] built (an output that writes objects only as named types
/// writes this one as a test of the one property).
pub(crate) fn tag_test(o: &ObjectShape) -> Option<(&str, &Value)> {
    match (o.fields.as_slice(), ObjectShape::open(Vec::new()) == ObjectShape { fields: Vec::new(), ..o.clone() }) {
        ([f], true) if f.required => match &f.node.shape {
            Shape::Const(v) => Some((f.name.as_str(), v)),
            _ => None,
        },
        _ => None,
    }
}
