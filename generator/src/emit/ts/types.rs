//! TypeScript types written from the model, for what cannot take its type from Zod: the standalone module (which
//! imports nothing, yet exports type guards), the Zod schemas of types in a reference cycle or nested deeper than
//! Zod's inference goes (whose constants need a declared type), and an `allOf` of parts of several kinds.
//!
//! Each type is a supertype of the values its checkers accept (a value that passes is of that type): objects
//! list their declared properties (absent-or-typed when optional) and, unless they drop or reject other keys,
//! an index signature; combinators that a type cannot state (`not`, `if`) are `unknown`, and so is an optional
//! property named after a member of `Object.prototype` (absent, the value still has the inherited member). Where
//! the model declares such a name, an object type with an index signature of `unknown` lists it too
//! ([`TypeFacts::inherited`]).
//!
//! An `allOf` whose parts admit several JSON kinds ([`Kinds`]; a part without `type` admits all six) is typed kind
//! by kind: for each kind every part admits, the intersection of the parts' types of that kind, and the union of
//! those. Intersecting the parts' unions instead makes TypeScript multiply them (`string & unknown[]` does not
//! reduce), which a chain of a dozen such parts (inheritance through `allOf: [{$ref}, {properties}]` without
//! `type`) takes past what the compiler represents (`TS2590`).

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use super::js::{json_lit, type_key, Code};
use super::zod::INHERITED;
use super::EmitError;
use crate::ir::kinds::{KindSet, Kinds};
use crate::ir::*;

/// How far a part's kinds are followed through references and `allOf`s before the part is typed whole.
const MAX_PART_DEPTH: usize = 128;

/// Whether an object's type has an index signature: unless no property beyond the declared ones can be there (a
/// closed object, or a strip object that declares some, whose value keeps only those). A strip object that declares
/// none takes any object (it drops every key), so its type is any object's. (It was `Record<string, never>`, the
/// type of the `{}` it gives back, which made a property another `allOf` part declares `never`, and said that an
/// `anyOf`, which gives back its input, held no key; helper 125.) The Zod module types its objects by this test.
pub(crate) fn has_index(o: &ObjectShape) -> bool {
    match o.additional {
        Additional::Closed => !o.pattern_properties.is_empty(),
        Additional::Strip => !o.pattern_properties.is_empty() || o.fields.is_empty(),
        Additional::Open | Additional::Schema(_) => true,
    }
}

/// Whether the `allOf` of `members` is typed kind by kind rather than as the intersection of its parts' types:
/// when a part admits more than one kind. (The Zod module then declares the type of the `allOf` instead of letting
/// Zod intersect the parts' outputs.)
pub(crate) fn by_kind(kinds: &Kinds, members: &[Node]) -> bool {
    members.len() > 1 && members.iter().any(|x| !KindSet::EACH.contains(&kinds.node(x)))
}

/// What typing a node needs to know of the whole model, worked out once per model.
pub(crate) struct TypeFacts {
    /// The kinds of every type (an `allOf` is typed kind by kind).
    pub(crate) kinds: Kinds,
    /// The names of `Object.prototype`'s members ([`INHERITED`]) that some object of the model declares as a
    /// property: an object type with an index signature of `unknown` lists them as optional `unknown` properties.
    /// Else, where a union's member declares one with a literal type (`constructor: null`), TypeScript takes it for
    /// the union's discriminant and compares an object literal with that member alone, since an open member's
    /// `constructor` is `Object`'s (a function): `{"constructor": null, "a": 1}` was refused although the open
    /// member admits it.
    inherited: Vec<&'static str>,
}

impl TypeFacts {
    /// The facts of `m`.
    pub(crate) fn of(m: &Model) -> TypeFacts {
        let mut inherited = Vec::new();
        for t in &m.types {
            t.node.visit(&mut |n| {
                if let Shape::Object(o) = &n.shape {
                    for f in &o.fields {
                        if let Some(name) = INHERITED.iter().find(|i| **i == f.name) {
                            if !inherited.contains(name) {
                                inherited.push(*name);
                            }
                        }
                    }
                }
            });
        }
        inherited.sort_unstable();
        TypeFacts { kinds: Kinds::of(m), inherited }
    }
}

/// Writes the TypeScript types of a model's nodes.
pub(crate) struct TsTypes<'a> {
    m: &'a Model,
    kinds: &'a Kinds,
    inherited: &'a [&'static str],
    name: &'a dyn Fn(TypeId) -> Code,
    /// The part of one kind of a type ([`Self::part`]), once worked out.
    parts: RefCell<HashMap<(TypeId, KindSet), Part>>,
    /// The nodes (by address) [`Self::part`] is writing the whole type of: one met again holds itself.
    writing: RefCell<HashSet<usize>>,
}

/// The part of one kind of a type: the types whose intersection it is (none: every value of the kind), or `None`
/// when the type cannot be split by kind.
type Part = Option<Vec<String>>;

impl<'a> TsTypes<'a> {
    /// A writer that names a referenced type with `name`.
    pub(crate) fn new(m: &'a Model, facts: &'a TypeFacts, name: &'a dyn Fn(TypeId) -> Code) -> Self {
        TsTypes {
            m,
            kinds: &facts.kinds,
            inherited: &facts.inherited,
            name,
            parts: RefCell::new(HashMap::new()),
            writing: RefCell::new(HashSet::new()),
        }
    }

    /// The index signature's type of an object's type, if it has one.
    fn index(&self, o: &ObjectShape) -> Result<Option<String>, EmitError> {
        Ok(match &o.additional {
            _ if !has_index(o) => None,
            Additional::Schema(v) if o.fields.is_empty() && o.pattern_properties.is_empty() => {
                Some(self.ty(v)?.to_string())
            }
            _ => Some("unknown".to_string()),
        })
    }

    /// The optional `unknown` properties an object's type lists for the model's [`TypeFacts::inherited`] names it
    /// does not declare (when its index signature is `unknown`).
    pub(crate) fn inherited_slots(&self, o: &ObjectShape) -> Result<Vec<&'static str>, EmitError> {
        if self.inherited.is_empty() || self.index(o)?.as_deref() != Some("unknown") {
            return Ok(Vec::new());
        }
        let declared = |n: &str| o.fields.iter().any(|f| f.name == n) || o.required_only.iter().any(|r| r == n);
        Ok(self.inherited.iter().copied().filter(|n| !declared(n)).collect())
    }

    /// The type of all values of one kind: that of the plain schema of the kind (`{"type": "object"}`).
    fn top(&self, k: KindSet) -> Result<String, EmitError> {
        Ok(match k {
            KindSet::NULL => "null".to_string(),
            KindSet::BOOLEAN => "boolean".to_string(),
            KindSet::NUMBER => "number".to_string(),
            KindSet::STRING => "string".to_string(),
            KindSet::ARRAY => "(unknown)[]".to_string(),
            _ => self.object(&ObjectShape::open(Vec::new()))?,
        })
    }

    /// The TypeScript type of an object.
    fn object(&self, o: &ObjectShape) -> Result<String, EmitError> {
        let mut parts = Vec::new();
        for f in &o.fields {
            let opt = if f.required { "" } else { "?" };
            // Absent, an optional property named after a member of `Object.prototype` (`toString`) is
            // still read as that member, a function, which its declared type would not admit.
            let t = if !f.required && INHERITED.contains(&f.name.as_str()) {
                Code::from_pieces("unknown".into())
            } else {
                self.ty(&f.node)?
            };
            // Optional, it may also hold `undefined`, which every checker takes for absent (as Zod's inferred
            // type says: the two agree under `exactOptionalPropertyTypes`).
            let t = if f.required || t.to_string() == "unknown" { t.to_string() } else { format!("{t} | undefined") };
            parts.push(format!("{}{opt}: {t}", type_key(&f.name)));
        }
        let index = self.index(o)?;
        // A name `required` lists without declaring it holds what the other properties hold: the index
        // signature's type, which TypeScript requires of every property beside one.
        for r in &o.required_only {
            if !o.fields.iter().any(|f| &f.name == r) {
                parts.push(format!("{}: {}", type_key(r), index.as_deref().unwrap_or("unknown")));
            }
        }
        for name in self.inherited_slots(o)? {
            parts.push(format!("{}?: unknown", type_key(name)));
        }
        if let Some(i) = index {
            parts.push(format!("[key: string]: {i}"));
        }
        // Nothing declared and nothing else allowed: only an empty object (`{}` is any value but `null` and
        // `undefined`), as Zod's inferred type says.
        Ok(if parts.is_empty() { "Record<string, never>".to_string() } else { format!("{{ {} }}", parts.join("; ")) })
    }

    /// The TypeScript type of a node.
    pub(crate) fn ty(&self, n: &Node) -> Result<Code, EmitError> {
        let name = self.name;
        let s = match &n.shape {
            Shape::Any | Shape::Not(_) | Shape::Cond { .. } | Shape::Dependent { .. } => "unknown".to_string(),
            Shape::Never => "never".to_string(),
            Shape::Ref(id) => name(*id).to_string(),
            Shape::Null => "null".to_string(),
            Shape::Boolean => "boolean".to_string(),
            Shape::String(_) => "string".to_string(),
            Shape::Number(_) => "number".to_string(),
            Shape::Const(v) => literal(v).map_or_else(|| "unknown".to_string(), |c| c.to_string()),
            Shape::Enum(values) => {
                let lits: Option<Vec<Code>> = values.iter().map(literal).collect();
                match lits {
                    Some(l) if !l.is_empty() => Code::join(&l, " | ").to_string(),
                    _ => "unknown".to_string(),
                }
            }
            Shape::Array(a) => {
                let rest = match a.items.as_deref() {
                    None => Some("unknown".to_string()),
                    Some(Node { shape: Shape::Never, .. }) => None,
                    Some(n) => Some(self.ty(n)?.to_string()),
                };
                if a.prefix.is_empty() {
                    match rest {
                        Some(r) => format!("({r})[]"),
                        None => "[]".to_string(),
                    }
                } else {
                    // A position before `minItems` is always there.
                    let required = a.min_items.unwrap_or(0);
                    let mut parts = Vec::new();
                    for (p, i) in a.prefix.iter().zip(0u64..) {
                        let t = self.ty(p)?;
                        parts.push(if i < required { format!("({t})") } else { format!("({t})?") });
                    }
                    if let Some(r) = rest {
                        parts.push(format!("...({r})[]"));
                    }
                    format!("[{}]", parts.join(", "))
                }
            }
            Shape::Object(o) => self.object(o)?,
            Shape::Union(u) => {
                let members: Vec<String> = u.members.iter().map(|x| name(x.ty).to_string()).collect();
                if members.is_empty() {
                    "never".to_string()
                } else {
                    members.join(" | ")
                }
            }
            Shape::Nullable(inner) => format!("({}) | null", self.ty(inner)?),
            Shape::Kinds(members) => {
                let mut out = Vec::new();
                for x in members {
                    out.push(format!("({})", self.ty(x)?));
                }
                out.join(" | ")
            }
            // The properties it does not evaluate are checked, not typed: the inner schema's type.
            Shape::Unevaluated { inner, .. } => self.ty(inner)?.to_string(),
            Shape::AllOf(members) if by_kind(self.kinds, members) => self.all_of_by_kind(members)?,
            Shape::AllOf(members) => {
                let mut out = Vec::new();
                for x in members {
                    let t = self.ty(x)?.to_string();
                    if t != "unknown" {
                        out.push(format!("({t})"));
                    }
                }
                if out.is_empty() {
                    "unknown".to_string()
                } else {
                    out.join(" & ")
                }
            }
            Shape::AnyOf(members) | Shape::OneOf(members) => {
                let mut out = Vec::new();
                for x in members {
                    let t = self.ty(x)?.to_string();
                    if t == "unknown" {
                        return Ok(Code::from_pieces("unknown".into()));
                    }
                    out.push(format!("({t})"));
                }
                if out.is_empty() {
                    "never".to_string()
                } else {
                    out.join(" | ")
                }
            }
        };
        Ok(Code::from_pieces(s))
    }

    /// The type of an `allOf` kind by kind (see the module's documentation): for each kind every part admits, the
    /// intersection of the parts' types of that kind; the union of those. A part whose kinds cannot be told apart
    /// this way (an `anyOf` of several kinds, say) leaves the intersection of the parts' types, with each part
    /// without `type` cut to the kinds every part admits.
    fn all_of_by_kind(&self, members: &[Node]) -> Result<String, EmitError> {
        let all = members.iter().fold(KindSet::ALL, |k, x| k.and(self.kinds.node(x)));
        if all == KindSet::NONE {
            return Ok("never".to_string());
        }
        let mut alternatives = Vec::new();
        let mut stated = false;
        for k in KindSet::EACH.into_iter().filter(|k| all.contains(*k)) {
            let mut list: Vec<String> = Vec::new();
            for x in members {
                let Some(p) = self.part(x, k, 0)? else { return self.all_of_narrowed(members, all) };
                for t in p {
                    if !list.contains(&t) {
                        list.push(t);
                    }
                }
            }
            stated |= !list.is_empty();
            alternatives.push(if list.is_empty() {
                self.top(k)?
            } else {
                list.iter().map(|t| format!("({t})")).collect::<Vec<_>>().join(" & ")
            });
        }
        Ok(match alternatives.as_slice() {
            _ if all == KindSet::ALL && !stated => "unknown".to_string(),
            [one] => one.clone(),
            _ => alternatives.iter().map(|t| format!("({t})")).collect::<Vec<_>>().join(" | "),
        })
    }

    /// The part of kind `k` of a node's type, as the list of types whose intersection it is (empty: every value
    /// of the kind); `None` when the node's type cannot be split by kind.
    fn part(&self, x: &Node, k: KindSet, depth: usize) -> Result<Part, EmitError> {
        let own = self.kinds.node(x);
        if own == k {
            // One kind: the node's type whole, unless it says no more than the kind does. A node met again while its
            // own type is being written holds itself (`{"properties": {"n": {"type": "object", "$ref": "#"}}}`), so
            // it says more: a reference's type is its name; an inline node's is not split by kind (the `allOf` is
            // written as the intersection of its parts). Writing the whole again recursed until the stack ran out.
            let (resolved, _) = self.m.resolve_node(x);
            let key = std::ptr::from_ref(resolved) as usize;
            if !self.writing.borrow_mut().insert(key) {
                return matches!(x.shape, Shape::Ref(_)).then(|| self.ty(x).map(|t| vec![t.to_string()])).transpose();
            }
            let whole = self.ty(resolved);
            self.writing.borrow_mut().remove(&key);
            let whole = whole?.to_string();
            return Ok(Some(if whole == self.top(k)? || whole == "unknown" {
                Vec::new()
            } else {
                vec![self.ty(x)?.to_string()]
            }));
        }
        if depth > MAX_PART_DEPTH {
            return Ok(None);
        }
        Ok(match &x.shape {
            Shape::Any | Shape::Not(_) | Shape::Cond { .. } | Shape::Dependent { .. } => Some(Vec::new()),
            Shape::Ref(id) => {
                if let Some(p) = self.parts.borrow().get(&(*id, k)) {
                    return Ok(p.clone());
                }
                let p = self.part(&self.m.ty(*id).node, k, depth + 1)?;
                self.parts.borrow_mut().insert((*id, k), p.clone());
                p
            }
            Shape::Kinds(ms) => match ms.iter().find(|m| self.kinds.node(m).contains(k)) {
                Some(m) => self.part(m, k, depth + 1)?,
                None => Some(vec!["never".to_string()]),
            },
            Shape::Nullable(_) if k == KindSet::NULL => Some(Vec::new()),
            Shape::Nullable(inner) | Shape::Unevaluated { inner, .. } => self.part(inner, k, depth + 1)?,
            Shape::AllOf(ms) => {
                let mut list = Vec::new();
                for m in ms {
                    let Some(p) = self.part(m, k, depth + 1)? else { return Ok(None) };
                    list.extend(p);
                }
                Some(list)
            }
            _ => None,
        })
    }

    /// The intersection of the parts' types, each part without `type` cut to the kinds in `all`.
    fn all_of_narrowed(&self, members: &[Node], all: KindSet) -> Result<String, EmitError> {
        let mut out = Vec::new();
        for x in members {
            let t = match &x.shape {
                Shape::Kinds(ms) => {
                    let mut kept = Vec::new();
                    for m in ms.iter().filter(|m| self.kinds.node(m).and(all) != KindSet::NONE) {
                        kept.push(format!("({})", self.ty(m)?));
                    }
                    kept.join(" | ")
                }
                _ => self.ty(x)?.to_string(),
            };
            if t != "unknown" {
                out.push(format!("({t})"));
            }
        }
        Ok(if out.is_empty() { "unknown".to_string() } else { out.join(" & ") })
    }
}

/// The literal type of a JSON value (`"a"`, `1`, `true`, `null`, `[1, "a"]`, `{ "k": null }`): what a `const`
/// holds, and an `enum` holds one of. `None` when a number in it has no literal type (beyond the double range).
/// (An object type is open to more properties, as every object type of TypeScript is; the checkers are not.)
pub(crate) fn literal(v: &serde_json::Value) -> Option<Code> {
    Some(match v {
        serde_json::Value::Number(n) => {
            let f = n.as_f64().filter(|f| f.is_finite())?;
            // A literal type of a number is written with its shortest round-trip text (`1`, `0.5`, `1e-7`).
            Code::from_pieces(format!("{f:?}").trim_end_matches(".0").to_string())
        }
        serde_json::Value::Array(items) => {
            let items = items.iter().map(literal).collect::<Option<Vec<Code>>>()?;
            Code::from_pieces(format!("[{}]", Code::join(&items, ", ")))
        }
        // `{}` would be any value but `null` and `undefined`.
        serde_json::Value::Object(members) if members.is_empty() => Code::from_pieces("Record<string, never>".into()),
        serde_json::Value::Object(members) => {
            let mut parts = Vec::new();
            for (k, x) in members {
                parts.push(format!("{}: {}", type_key(k), literal(x)?));
            }
            Code::from_pieces(format!("{{ {} }}", parts.join("; ")))
        }
        other => json_lit(other),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The TypeScript type of the type named `name` in a one-file schema.
    fn type_of(schema: &str, name: &str) -> String {
        let files = vec![("a.schema.json".to_string(), schema.to_string())];
        let (m, _) = crate::load::load_memory(std::path::Path::new("mem"), files, Some("a.schema.json".into()))
            .unwrap_or_else(|e| panic!("{schema}: {e:?}"));
        let facts = TypeFacts::of(&m);
        let names = |id: TypeId| Code::from_pieces(m.ty(id).names.ts.clone());
        let id = m.type_named(name).unwrap_or_else(|| panic!("no type {name}"));
        TsTypes::new(&m, &facts, &names).ty(&m.ty(id).node).expect("a type").to_string()
    }

    /// Inheritance through a part without `type`, on a base of `base`.
    fn inheritance(base: &str) -> String {
        format!(
            r##"{{"$defs": {{"b0": {base},
                "b1": {{"allOf": [{{"$ref": "#/$defs/b0"}}, {{"properties": {{"p1": {{"type": "integer"}}}}}}]}}}},
              "$ref": "#/$defs/b1"}}"##
        )
    }

    #[test]
    fn an_all_of_of_parts_of_several_kinds_is_typed_kind_by_kind() {
        // The base is an object: the object parts intersect, and no other kind is left.
        let object = inheritance(r#"{"type": "object", "properties": {"p0": {"type": "string"}}}"#);
        assert_eq!(type_of(&object, "B1"), "(B0) & (B1Part1Object)");
        // No `type` anywhere: every kind, the object kind being both parts' objects.
        let untyped = inheritance(r#"{"properties": {"p0": {"type": "string"}}}"#);
        assert_eq!(
            type_of(&untyped, "B1"),
            "(null) | (boolean) | (number) | (string) | ((unknown)[]) | ((B0Object) & (B1Part1Object))"
        );
        // Parts that say nothing of their kind's values add nothing to it.
        assert_eq!(type_of(r#"{"allOf": [{"type": "string"}, {"minLength": 1}, {"maxItems": 2}]}"#, "Root"), "string");
        assert_eq!(type_of(r#"{"allOf": [{"minLength": 1}, {"maxItems": 2}]}"#, "Root"), "unknown");
        assert_eq!(
            type_of(r#"{"allOf": [{"type": ["string", "array"]}, {"maxItems": 2}]}"#, "Root"),
            "(string) | ((unknown)[])"
        );
        // No kind every part admits: no value passes.
        assert_eq!(type_of(r#"{"allOf": [{"type": "string"}, {"type": ["integer", "null"]}]}"#, "Root"), "never");
    }

    /// A `const` or `enum` of arrays and objects is its literal types (it was `unknown`), an empty object only `{}`.
    #[test]
    fn const_and_enum_of_arrays_and_objects_are_their_literal_types() {
        let c = r#"{"const": {"a": [1, 0.5, "x", null, true], "__proto__": {}, "b c": -2}}"#;
        assert_eq!(
            type_of(c, "Root"),
            r#"{ a: [1, 0.5, "x", null, true]; "__proto__": Record<string, never>; "b c": -2 }"#
        );
        assert_eq!(type_of(r#"{"enum": [[], {"k": 1e21}, "s", 3]}"#, "Root"), r#"[] | { k: 1e21 } | "s" | 3"#);
    }

    /// `part` tells a part that says no more than its kind by comparing its type with `top`: the two must write
    /// a plain schema of each kind alike, also in a model that declares a property named after a member of
    /// `Object.prototype` (whose open objects list it).
    #[test]
    fn the_type_of_a_whole_kind_is_the_type_of_its_plain_schema() {
        let kinds = ["null", "boolean", "number", "string", "array", "object"];
        for defs in ["", r#", "$defs": {"t": {"properties": {"toString": {"type": "string"}}}}"#] {
            for (k, name) in KindSet::EACH.into_iter().zip(kinds) {
                let schema = format!(r#"{{"type": "{name}"{defs}}}"#);
                let files = vec![("a.schema.json".to_string(), schema.clone())];
                let (m, _) = crate::load::load_memory(std::path::Path::new("mem"), files, Some("a.schema.json".into()))
                    .unwrap_or_else(|e| panic!("{schema}: {e:?}"));
                let facts = TypeFacts::of(&m);
                let names = |id: TypeId| Code::from_pieces(m.ty(id).names.ts.clone());
                let types = TsTypes::new(&m, &facts, &names);
                let top = types.top(k).expect("a type");
                assert_eq!(type_of(&schema, "Root"), top, "{schema}");
                assert_eq!(top.contains("toString?: unknown"), !defs.is_empty() && name == "object", "{top}");
            }
        }
    }

    #[test]
    fn a_part_that_cannot_be_split_by_kind_leaves_the_intersection_cut_to_the_common_kinds() {
        let schema = r#"{"allOf": [{"anyOf": [{"type": "string"}, {"type": "integer"}]}, {"minLength": 1}]}"#;
        // The `anyOf` (a type of its own) admits strings and numbers: the part without `type` keeps those two.
        assert_eq!(type_of(schema, "Root"), "(RootPart0) & ((number) | (string))");
    }
}
