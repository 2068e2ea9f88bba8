//! Which JSON kinds (null, boolean, number, string, array, object) the values a node accepts can have: a superset,
//! computed once per model ([`Kinds::of`]). The TypeScript emitters use it to type an `allOf` without multiplying
//! unions: a part without `type` is a union of the six kinds, and only the kinds every part admits can be the
//! value's.
//!
//! A kind is in a node's set when some value of that kind may pass it: `not`, `if` and `dependentSchemas` admit
//! every kind (the set is a bound, not an exact answer); `allOf` admits the kinds all its members admit, `anyOf`
//! and `oneOf` those any member admits; a reference, its target's (a recursive type's set is the largest the
//! equations allow, so it never leaves out a kind).

use super::{Model, Node, Shape, TypeId};
use serde_json::Value;

/// A set of JSON kinds, one bit each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KindSet(u8);

impl KindSet {
    /// `null`.
    pub const NULL: KindSet = KindSet(1);
    /// `true` and `false`.
    pub const BOOLEAN: KindSet = KindSet(2);
    /// Numbers, integers among them.
    pub const NUMBER: KindSet = KindSet(4);
    /// Strings.
    pub const STRING: KindSet = KindSet(8);
    /// Arrays.
    pub const ARRAY: KindSet = KindSet(16);
    /// Objects.
    pub const OBJECT: KindSet = KindSet(32);
    /// No kind: nothing passes.
    pub const NONE: KindSet = KindSet(0);
    /// Every kind.
    pub const ALL: KindSet = KindSet(63);
    /// The six kinds, each alone, in the order JSON Schema's `type` keyword lists them.
    pub const EACH: [KindSet; 6] = [Self::NULL, Self::BOOLEAN, Self::NUMBER, Self::STRING, Self::ARRAY, Self::OBJECT];

    /// The kinds in both sets.
    #[must_use]
    pub fn and(self, o: KindSet) -> KindSet {
        KindSet(self.0 & o.0)
    }

    /// The kinds in either set.
    #[must_use]
    pub fn or(self, o: KindSet) -> KindSet {
        KindSet(self.0 | o.0)
    }

    /// Whether every kind of `o` is in this set.
    #[must_use]
    pub fn contains(self, o: KindSet) -> bool {
        self.0 & o.0 == o.0
    }

    /// The kind of a JSON value.
    #[must_use]
    pub fn of_value(v: &Value) -> KindSet {
        match v {
            Value::Null => Self::NULL,
            Value::Bool(_) => Self::BOOLEAN,
            Value::Number(_) => Self::NUMBER,
            Value::String(_) => Self::STRING,
            Value::Array(_) => Self::ARRAY,
            Value::Object(_) => Self::OBJECT,
        }
    }
}

/// The kinds of every type of a model, by [`TypeId`].
#[derive(Debug, Clone)]
pub struct Kinds(Vec<KindSet>);

impl Kinds {
    /// Computes the kinds of every type: starting from every kind and narrowing until nothing changes, the
    /// largest solution of the equations the references make (each step only removes kinds, so at most six
    /// rounds a type, since the node of a type only narrows as the types it refers to do).
    #[must_use]
    pub fn of(m: &Model) -> Kinds {
        let mut k = Kinds(vec![KindSet::ALL; m.types.len()]);
        let mut changed = true;
        while changed {
            changed = false;
            for (i, t) in m.types.iter().enumerate() {
                let now = k.node(&t.node);
                if now != k.0[i] {
                    k.0[i] = now;
                    changed = true;
                }
            }
        }
        k
    }

    /// The kinds of a type (every kind for an id the model does not have).
    #[must_use]
    pub fn ty(&self, id: TypeId) -> KindSet {
        self.0.get(id.0).copied().unwrap_or(KindSet::ALL)
    }

    /// The kinds of the values a node may accept.
    #[must_use]
    pub fn node(&self, n: &Node) -> KindSet {
        node_kinds(n, &|id| self.ty(id))
    }
}

/// The kinds of the values a node may accept, with `ty` giving the kinds of a type it refers to (the loader asks
/// before the model is whole; [`Kinds`] once it is).
pub fn node_kinds(n: &Node, ty: &dyn Fn(TypeId) -> KindSet) -> KindSet {
    let node = |x: &Node| node_kinds(x, ty);
    match &n.shape {
        Shape::Any | Shape::Not(_) | Shape::Cond { .. } | Shape::Dependent { .. } => KindSet::ALL,
        Shape::Never => KindSet::NONE,
        Shape::Ref(id) => ty(*id),
        Shape::Null => KindSet::NULL,
        Shape::Boolean => KindSet::BOOLEAN,
        Shape::Number(_) => KindSet::NUMBER,
        Shape::String(_) => KindSet::STRING,
        Shape::Array(_) => KindSet::ARRAY,
        Shape::Object(_) => KindSet::OBJECT,
        Shape::Const(v) => KindSet::of_value(v),
        Shape::Enum(vs) => vs.iter().fold(KindSet::NONE, |k, v| k.or(KindSet::of_value(v))),
        Shape::Union(u) => u.members.iter().fold(KindSet::NONE, |k, mb| k.or(ty(mb.ty))),
        Shape::Nullable(inner) => node(inner).or(KindSet::NULL),
        Shape::Kinds(ms) | Shape::AnyOf(ms) | Shape::OneOf(ms) => ms.iter().fold(KindSet::NONE, |k, x| k.or(node(x))),
        Shape::AllOf(ms) => ms.iter().fold(KindSet::ALL, |k, x| k.and(node(x))),
        Shape::Unevaluated { inner, .. } => node(inner),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kinds of the root type of a one-file schema.
    fn root_kinds(schema: &str) -> KindSet {
        let files = vec![("a.schema.json".to_string(), schema.to_string())];
        let (m, _) = crate::load::load_memory(std::path::Path::new("mem"), files, Some("a.schema.json".into()))
            .unwrap_or_else(|e| panic!("{schema}: {e:?}"));
        Kinds::of(&m).ty(m.root.expect("a root"))
    }

    #[test]
    fn each_keyword_bounds_the_kinds() {
        let k = KindSet::NULL.or(KindSet::STRING);
        assert_eq!(root_kinds(r#"{"type": ["string", "null"], "minLength": 1}"#), k);
        assert_eq!(root_kinds(r#"{"minLength": 1}"#), KindSet::ALL);
        assert_eq!(root_kinds(r#"{"allOf": [{"type": ["string", "null"]}, {"minLength": 1}]}"#), k);
        assert_eq!(root_kinds(r#"{"allOf": [{"type": "string"}, {"type": "integer"}]}"#), KindSet::NONE);
        assert_eq!(root_kinds(r#"{"anyOf": [{"type": "string"}, {"type": "null"}]}"#), k);
        assert_eq!(root_kinds(r#"{"enum": ["a", null]}"#), k);
        assert_eq!(root_kinds(r#"{"const": [1]}"#), KindSet::ARRAY);
        // `not` and `if` bound nothing: the set is an upper bound, never an exact answer.
        assert_eq!(root_kinds(r#"{"not": {"type": "string"}}"#), KindSet::ALL);
        assert_eq!(root_kinds(r#"{"if": {"type": "string"}, "then": {"minLength": 1}}"#), KindSet::ALL);
        assert_eq!(root_kinds("false"), KindSet::NONE);
    }

    #[test]
    fn references_and_recursion_take_their_targets_kinds() {
        let chain = r##"{"$defs": {"a": {"type": "object"}, "b": {"allOf": [{"$ref": "#/$defs/a"}, {"minProperties": 1}]}},
            "$ref": "#/$defs/b"}"##;
        assert_eq!(root_kinds(chain), KindSet::OBJECT);
        // A recursive type: its items refer to it, and the kinds are those of its own alternatives.
        let tree = r##"{"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#"}}]}"##;
        assert_eq!(root_kinds(tree), KindSet::STRING.or(KindSet::ARRAY));
        // Recursion through an object's property: the type is an object whatever its property holds.
        let list = r##"{"type": ["object", "null"], "properties": {"next": {"$ref": "#"}}}"##;
        assert_eq!(root_kinds(list), KindSet::OBJECT.or(KindSet::NULL));
    }
}
