//! Building the types: every schema node becomes a [`Node`]; named locations become [`TypeDef`]s.
//!
//! Named locations are the file roots (except a file that only holds `$defs`), every `$defs` entry and every
//! `$ref` target. An object, a union or an enum of strings that is not itself at a named location is *hoisted*:
//! it becomes a type of its own, named from its path ([`super::naming::derived_name`]), and the place where it
//! stood refers to it. So [`Shape::Object`], [`Shape::Union`] and string [`Shape::Enum`]s only ever appear as
//! the body of a [`TypeDef`], which gives every object and union a name in every language. A choice (`anyOf`,
//! `oneOf`, a `type` list) or a composition (`allOf`, an object with applicators beside its properties) that is
//! the whole schema at its location (or all of it but `null`) is hoisted the same way, so the Rust output can
//! make it an enum or a struct; as a part of an `allOf` it stays where it is.
//!
//! A schema object is the conjunction of its parts, in this order (which is also the order errors are
//! reported in): the typed part (`type`, `const`, `enum` and the keywords of each JSON kind), `$ref`, the
//! members of `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, then each `dependentSchemas` entry. One part is that part's node; several are
//! [`Shape::AllOf`].

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::{Map, Value};

use super::{naming, Cx, DEFS_KEYWORDS};
use crate::diag::SchemaErrorKind as K;
use crate::ir::*;

/// A type being built.
pub(crate) struct Slot {
    pub(crate) origin: Origin,
    /// The base name (`x-name`, or derived from the location).
    pub(crate) base: String,
    /// Whether `x-name` gave the base name.
    pub(crate) explicit: bool,
    pub(crate) def: Option<TypeDef>,
    /// The dynamic scope the type is built in ([`super::dynamic`]; 0 in a package without `$dynamicRef`).
    pub(crate) scope: usize,
    /// Whether the type is a part of the schema at its origin (hoisted with a suffix, such as the object of an
    /// object with `dependentSchemas`): the name keywords there (`x-rust-name`, `x-aliases`, ...) name the whole.
    pub(crate) part: bool,
}

/// The types of one load.
#[derive(Default)]
pub(crate) struct Types {
    pub(crate) slots: Vec<Slot>,
    /// Named location -> its type (the first built there).
    pub(crate) named: BTreeMap<Origin, TypeId>,
    /// Named location and dynamic scope -> its type: a location reached in several dynamic scopes is a type in
    /// each.
    scoped: BTreeMap<(Origin, usize), TypeId>,
    /// How many of those are not the first at their location.
    copies: usize,
    /// The locations with a type that is not a part of another there (`Slot::part`).
    wholes: BTreeSet<Origin>,
}

impl Types {
    /// Adds a type at `origin` (its body `def`, or `None` while it is to be built) in dynamic scope `scope`; `part`
    /// when it is a part of another type there.
    pub(crate) fn push(
        &mut self,
        origin: &Origin,
        base: String,
        explicit: bool,
        def: Option<TypeDef>,
        scope: usize,
        part: bool,
    ) -> TypeId {
        if !part && !self.wholes.contains(origin) {
            self.wholes.insert(origin.clone());
        }
        self.slots.push(Slot { origin: origin.clone(), base, explicit, def, scope, part });
        TypeId(self.slots.len() - 1)
    }

    /// Makes the part `id` the type at its location (no other is there).
    pub(crate) fn make_whole(&mut self, id: usize) {
        self.slots[id].part = false;
        self.wholes.insert(self.slots[id].origin.clone());
    }

    /// Whether a type that is not a part of another is at `origin` already.
    pub(crate) fn has_whole(&self, origin: &Origin) -> bool {
        self.wholes.contains(origin)
    }
}

/// The JSON kinds a `type` keyword can name, in canonical order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Null,
    Boolean,
    Integer,
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "null" => Kind::Null,
            "boolean" => Kind::Boolean,
            "integer" => Kind::Integer,
            "number" => Kind::Number,
            "string" => Kind::String,
            "array" => Kind::Array,
            "object" => Kind::Object,
            _ => return None,
        })
    }

    /// Whether a JSON value is of this kind (integers by value, as JSON Schema says: `1.0` is an integer).
    fn holds(self, v: &Value) -> bool {
        match (self, v) {
            (Kind::Null, Value::Null) | (Kind::Boolean, Value::Bool(_)) | (Kind::String, Value::String(_)) => true,
            (Kind::Array, Value::Array(_)) | (Kind::Object, Value::Object(_)) => true,
            (Kind::Number, Value::Number(_)) => true,
            (Kind::Integer, Value::Number(n)) => n.as_f64().is_some_and(|f| f.fract() == 0.0),
            _ => false,
        }
    }
}

const STRING_KEYWORDS: &[&str] = &["minLength", "maxLength", "pattern", "x-strict-pattern"];
const NUMBER_KEYWORDS: &[&str] = &["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"];
const ARRAY_KEYWORDS: &[&str] = &[
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedItems",
];
const OBJECT_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "unevaluatedProperties",
    "x-unknown-keys",
];

/// Whether `k` is a keyword of one JSON kind (a string's, a number's, an array's or an object's).
pub(crate) fn is_kind_keyword(k: &str) -> bool {
    [STRING_KEYWORDS, NUMBER_KEYWORDS, ARRAY_KEYWORDS, OBJECT_KEYWORDS].iter().any(|f| f.contains(&k))
}

/// The applicators beside which `unevaluatedProperties` reads their evaluated properties ([`Shape::Unevaluated`]);
/// without any, it means `additionalProperties`.
const IN_PLACE_APPLICATORS: &[&str] =
    &["$ref", "$dynamicRef", "allOf", "anyOf", "oneOf", "not", "if", "dependentSchemas", "dependencies"];

/// Keywords that make a file root only a container of `$defs` (or `definitions`) when nothing else is there.
const METADATA: &[&str] =
    &["$schema", "$id", "$comment", "title", "description", "$defs", "definitions", "x-naming", "x-package"];

impl Cx {
    /// Whether the kind of value `n` holds is refused already: its `type` or `enum`, or those of a type it refers
    /// to. A check of what kind of value a property holds (an `x-auto`, a role enum, a rollup) skips it then.
    pub(crate) fn kind_refused(&self, types: &Types, n: &Node) -> bool {
        let refs = super::unions::refs_of(types, n);
        std::iter::once(&n.origin)
            .chain(refs.iter().map(|id| &types.slots[id.0].origin))
            .any(|at| ["type", "enum"].iter().any(|k| self.refused_within(&at.join(k))))
    }

    /// Builds every type, then the unions, the protocol layer and the names.
    pub(crate) fn build_model(&mut self) -> Option<Model> {
        let mut types = Types::default();
        self.name_locations(&mut types);
        let mut i = 0;
        while i < types.slots.len() {
            if types.slots[i].def.is_none() {
                let origin = types.slots[i].origin.clone();
                self.dynamic.current = types.slots[i].scope;
                let doc = self.doc(&origin);
                let v = doc.schema(&origin);
                let node = self.node(&mut types, &origin, v, true);
                let def = self.type_def(&origin, v, node);
                types.slots[i].def = Some(def);
            }
            i += 1;
        }
        if !self.check_limits(&types) {
            return None;
        }
        self.recognize_unions(&mut types);
        self.check_ref_cycles(&types);
        let protocol = self.protocol(&mut types);
        let (package, root_file) = self.package(&types, protocol.as_ref());
        let names = naming::assign(self, &types, root_file.as_deref());
        for s in &types.slots {
            let Some(old) = s.def.as_ref().and_then(|d| d.renamed_from.as_deref()) else { continue };
            if names.iter().any(|n| n.0.base == old) {
                let msg = format!("`{old}` is still the name of a type here: a rename leaves no type behind");
                self.err(&s.origin.join("x-renamed-from"), K::InvalidValue, msg);
            }
        }
        if !self.errors.is_empty() {
            return None;
        }
        let root = self.root_type(&types, protocol.as_ref());
        let (title, description, base_uri) = self.root_text(root_file.as_deref());
        // A package whose root gives no title (a folder of plain type files) is titled by its name: the reference's
        // heading and the bundle's title were empty.
        let title = if title.trim().is_empty() { package.npm_name.clone() } else { title };
        let defs = types
            .slots
            .into_iter()
            .zip(names)
            .map(|(s, (names, aliases))| {
                let mut d = s.def.unwrap_or_else(|| TypeDef {
                    names: names.clone(),
                    aliases: Vec::new(),
                    explicit_name: false,
                    part: s.part,
                    description: None,
                    examples: Vec::new(),
                    annotations: Annotations::default(),
                    origin: s.origin.clone(),
                    renamed_from: None,
                    node: Node { origin: s.origin.clone(), description: None, shape: Shape::Any },
                });
                d.names = names;
                d.aliases = aliases;
                d.explicit_name = s.explicit;
                d.part = s.part;
                d
            })
            .collect();
        let model = Model { title, description, base_uri, package, types: defs, root, protocol };
        for (at, why) in crate::upgrade::Plan::unreached_renames(&model) {
            self.err(&at.join("x-renamed-from"), K::InvalidValue, why);
        }
        self.check_unevaluated(&model);
        self.check_stripping(&model);
        if self.errors.is_empty() && !self.builtin {
            self.check_branching(&model);
        }
        if self.errors.is_empty() && !self.builtin {
            self.check_examples(&model);
        }
        self.errors.is_empty().then_some(model)
    }

    fn type_def(&mut self, origin: &Origin, v: &Value, node: Node) -> TypeDef {
        let description = v.get("description").and_then(Value::as_str).map(String::from);
        let examples = examples(v);
        // On a file root or a `$defs` entry: the type's previous name (an event's previous tag, which the protocol
        // layer takes over). Anywhere else the placement check refuses it.
        let renamed_from = match v.get("x-renamed-from") {
            Some(Value::String(old)) if !old.is_empty() && is_type_root(&origin.pointer) => Some(old.clone()),
            Some(x) if is_type_root(&origin.pointer) && x.as_str().is_none_or(str::is_empty) => {
                let msg = "`x-renamed-from` is the previous name (a non-empty string)";
                self.err(&origin.join("x-renamed-from"), K::InvalidValue, msg);
                None
            }
            _ => None,
        };
        TypeDef {
            names: Names::UNSET,
            aliases: Vec::new(),
            explicit_name: false,
            part: false,
            description,
            examples,
            annotations: annotations(v),
            origin: origin.clone(),
            renamed_from,
            node,
        }
    }

    /// Finds the named locations, in document order: file roots, `$defs` entries, `$ref` targets.
    fn name_locations(&mut self, types: &mut Types) {
        let targets: BTreeSet<Origin> = self.refs.values().chain(self.dynamic.targets()).cloned().collect();
        let rels: Vec<String> = self.files.keys().cloned().collect();
        for rel in rels {
            let v = self.files[&rel].value.clone();
            let root = Origin { file: rel.clone(), pointer: String::new() };
            let container = v.as_object().is_some_and(|o| {
                DEFS_KEYWORDS.iter().any(|d| o.contains_key(*d)) && o.keys().all(|k| METADATA.contains(&k.as_str()))
            });
            if !container || targets.contains(&root) {
                self.alloc(types, &root, &v);
            } else if let Some(o) = v.as_object() {
                // A root that is only a container is no schema the walk builds, but its annotations are read alike
                // (helper 87: a `description` of `5` there was taken).
                self.annotation_kinds(&root, o);
            }
            self.name_below(types, &root, &v, &targets);
        }
        // Targets not met on the walk (there are none: every schema location is walked), kept for safety.
        for t in targets {
            if !types.named.contains_key(&t) {
                let doc = self.doc(&t);
                self.alloc(types, &t, doc.schema(&t));
            }
        }
    }

    fn name_below(&mut self, types: &mut Types, at: &Origin, v: &Value, targets: &BTreeSet<Origin>) {
        for (tok, child) in super::children(v) {
            let cat = at.below(&tok);
            let is_def = defs_entry(&tok).is_some();
            if is_def || targets.contains(&cat) {
                self.alloc(types, &cat, child);
            }
            self.name_below(types, &cat, child, targets);
        }
    }

    fn alloc(&mut self, types: &mut Types, at: &Origin, v: &Value) -> TypeId {
        if let Some(id) = types.named.get(at) {
            return *id;
        }
        let (base, explicit) = match self.x_name(at, v) {
            Some(n) => (n, true),
            None => (naming::derived_name(self, types, at), false),
        };
        let scope = self.entered(0, at);
        let id = types.push(at, base, explicit, None, scope, false);
        types.named.insert(at.clone(), id);
        if self.dynamic.active() {
            types.scoped.insert((at.clone(), scope), id);
        }
        id
    }

    /// The type of the named location `at` where the node being built refers to it (by `$ref`, `$dynamicRef` or
    /// by standing there): built in the current dynamic scope, entering `at`'s resource. A location reached in a
    /// scope it was not built in yet gets another type (named like the first, numbered).
    fn instance(&mut self, types: &mut Types, at: &Origin) -> TypeId {
        let first = *types.named.get(at).expect("only named locations are referred to");
        self.scoped_instance(types, at, first)
    }

    /// [`Cx::instance`] of `at`, whose first type is `first`.
    fn scoped_instance(&mut self, types: &mut Types, at: &Origin, first: TypeId) -> TypeId {
        if !self.dynamic.active() {
            return first;
        }
        let scope = self.entered(self.dynamic.current, at);
        if let Some(id) = types.scoped.get(&(at.clone(), scope)) {
            return *id;
        }
        if types.copies >= super::dynamic::MAX_SCOPED_TYPES {
            if types.copies == super::dynamic::MAX_SCOPED_TYPES {
                let msg = format!(
                    "the dynamic scopes this type is reached in need more than {} types besides the first at each \
                     place (one per scope): too many resources with their own `$dynamicAnchor` names, entered in too \
                     many orders",
                    super::dynamic::MAX_SCOPED_TYPES
                );
                self.err(at, K::InvalidValue, msg);
                types.copies += 1;
            }
            return first;
        }
        types.copies += 1;
        let base = types.slots[first.0].base.clone();
        let id = types.push(at, base, false, None, scope, false);
        types.scoped.insert((at.clone(), scope), id);
        id
    }

    /// The dynamic scope `scope` after entering the resource `at` is in.
    fn entered(&mut self, scope: usize, at: &Origin) -> usize {
        if !self.dynamic.active() {
            return scope;
        }
        let base_uri = self.base_at(at);
        self.dynamic.enter(scope, &base_uri)
    }

    /// A new type for a node built at a location that is not named.
    fn hoist(&mut self, types: &mut Types, at: &Origin, suffix: &str, node: Node) -> Node {
        let doc = self.doc(at);
        let v = doc.schema(at);
        let (base, explicit) = match (suffix.is_empty(), self.x_name(at, v)) {
            (true, Some(n)) => (n, true),
            _ => (format!("{}{suffix}", naming::derived_name(self, types, at)), false),
        };
        let origin = node.origin.clone();
        let description = node.description.clone();
        let mut def = self.type_def(at, v, node);
        if !suffix.is_empty() {
            // A part's schema is its whole's: the whole's annotations are not the part's.
            def.examples.clear();
            def.annotations = Annotations::default();
        }
        let id = types.push(at, base, explicit, Some(def), self.dynamic.current, !suffix.is_empty());
        Node { origin, description, shape: Shape::Ref(id) }
    }

    /// Whether a node that is the whole schema at a location that is not named becomes a type of its own, though
    /// its shape may also stand inside a node (as a part of an `allOf`), where it stays: a choice the schema writes
    /// between alternatives (`anyOf`, `oneOf`, a `type` list; not the kinds an untyped schema's keywords split it
    /// into), or an `allOf` the schema writes or an object with applicators beside its properties (`anyOf`, `$ref`,
    /// `if`, ...). The Rust output can type them (an enum, a struct of the object parts) only as types of their own.
    fn hoisted_whole(&self, at: &Origin, node: &Node) -> bool {
        match &node.shape {
            Shape::AnyOf(_) | Shape::OneOf(_) => return true,
            Shape::Kinds(_) | Shape::AllOf(_) => {}
            _ => return false,
        }
        // The schema at `at` writes the choice or the composition itself (not a `$ref` target's, not a split
        // its keywords imply).
        let doc = self.doc(at);
        let v = doc.schema(at);
        node.origin == *at
            && match node.shape {
                Shape::Kinds(_) => v.get("type").is_some_and(Value::is_array),
                _ => ["allOf", "properties", "patternProperties", "additionalProperties"]
                    .iter()
                    .any(|k| v.get(*k).is_some()),
            }
    }

    pub(crate) fn x_name(&mut self, at: &Origin, v: &Value) -> Option<String> {
        match v.get("x-name") {
            Some(Value::String(s)) if naming::is_type_name(s) => Some(s.clone()),
            Some(Value::String(s)) if s == "Self" => {
                self.err(&at.join("x-name"), K::InvalidValue, naming::SELF_NAME);
                None
            }
            Some(_) => {
                self.err(&at.join("x-name"), K::InvalidValue, "`x-name` must be a PascalCase identifier");
                None
            }
            None => None,
        }
    }

    /// The node of the schema `v` at `at`. `own` is true when building the body of the type named at `at`.
    pub(crate) fn node(&mut self, types: &mut Types, at: &Origin, v: &Value, own: bool) -> Node {
        if let Some(first) = types.named.get(at).copied().filter(|_| !own) {
            let id = self.scoped_instance(types, at, first);
            let description = v.get("description").and_then(Value::as_str).map(String::from);
            return Node { origin: at.clone(), description, shape: Shape::Ref(id) };
        }
        // A subschema with `$id` enters its resource while it applies.
        let outer = self.dynamic.current;
        if !own && self.dynamic.active() && v.get("$id").is_some() {
            self.dynamic.current = self.entered(outer, at);
        }
        let node = match v {
            Value::Bool(true) => Node { origin: at.clone(), description: None, shape: Shape::Any },
            Value::Object(o) => self.schema(types, at, o),
            Value::Bool(false) => Node { origin: at.clone(), description: None, shape: Shape::Never },
            other => {
                // Only a `$ref` leads here (a keyword's own value is checked where it stands): into a value that
                // is no schema, such as a `minLength` or a `title`.
                let kind = crate::engine::kind(&crate::engine::Json::from_value(other));
                let msg = format!("a `$ref` leads here, to {kind}, which is not a schema (an object or a boolean)");
                self.err(at, K::UnresolvableRef, msg);
                Node { origin: at.clone(), description: None, shape: Shape::Never }
            }
        };
        self.dynamic.current = outer;
        self.settle(types, at, node, own)
    }

    /// Hoists objects, unions and string enums that would otherwise stand inside another node, and a choice
    /// or a composition ([`Cx::hoisted_whole`]) that is the whole node at a location that is not named.
    fn settle(&mut self, types: &mut Types, at: &Origin, mut node: Node, own: bool) -> Node {
        let first_new = types.slots.len();
        if is_named_shape(&node.shape) {
            return if own { node } else { self.hoist(types, at, "", node) };
        }
        let suffix = |s: &Shape| match s {
            Shape::Object(_) => "Object",
            Shape::Union(_) => "Union",
            Shape::AnyOf(_) | Shape::OneOf(_) | Shape::Kinds(_) => "Choice",
            _ => "Enum",
        };
        match &mut node.shape {
            Shape::Nullable(inner) if is_named_shape(&inner.shape) || self.hoisted_whole(at, inner) => {
                let mut inner_node = std::mem::replace(&mut **inner, Node::any(at));
                if !is_named_shape(&inner_node.shape) && inner_node.origin == *at {
                    inner_node = self.settle(types, at, inner_node, true);
                }
                let sfx = suffix(&inner_node.shape);
                **inner = self.hoist(types, at, sfx, inner_node);
            }
            Shape::Unevaluated { inner, .. } if inner.origin == *at => {
                // The inner node may be another `Unevaluated` (both keywords): settled the same way.
                let n = std::mem::replace(&mut **inner, Node::any(at));
                **inner = if is_named_shape(&n.shape) {
                    let sfx = suffix(&n.shape);
                    self.hoist(types, at, sfx, n)
                } else {
                    self.settle(types, at, n, true)
                };
            }
            Shape::Kinds(members) | Shape::AllOf(members) => {
                for m in members.iter_mut() {
                    if is_named_shape(&m.shape) && m.origin == *at {
                        let n = std::mem::replace(m, Node::any(at));
                        let sfx = suffix(&n.shape);
                        *m = self.hoist(types, at, sfx, n);
                    }
                }
                // Any other member built at this location (a Nullable, Kinds or AllOf: `$ref` beside `const` and
                // `properties`) may hold an object of it too: settled the same way, at any depth.
                for m in members.iter_mut().filter(|m| m.origin == *at) {
                    let n = std::mem::replace(m, Node::any(at));
                    *m = self.settle(types, at, n, true);
                }
            }
            _ => {}
        }
        if !own && self.hoisted_whole(at, &node) {
            return self.hoist(types, at, "", node);
        }
        // (Not an `allOf` of a `$ref` and its refinements: the part there is not the value's type.)
        if !own && matches!(node.shape, Shape::Nullable(_) | Shape::Kinds(_)) {
            self.name_the_part(types, at, first_new);
        }
        node
    }

    /// An `x-name` at a location that is no type of its own but made one part (a nullable object's object, an
    /// untyped schema's object): it names the part, which then stands for the schema there (its name keywords
    /// apply; helper 113: it was silently dropped). With several parts it names none of them, which
    /// [`naming`]'s check of stray name keywords refuses.
    fn name_the_part(&mut self, types: &mut Types, at: &Origin, from: usize) {
        let parts: Vec<usize> =
            (from..types.slots.len()).filter(|&i| types.slots[i].origin == *at && types.slots[i].part).collect();
        let [one] = parts.as_slice() else { return };
        if types.has_whole(at) {
            return;
        }
        let doc = self.doc(at);
        let v = doc.schema(at);
        if !naming::NAME_KEYWORDS.iter().any(|k| v.get(*k).is_some()) {
            return;
        }
        let name = v.get("x-name").and_then(Value::as_str).filter(|n| naming::is_type_name(n));
        let s = &mut types.slots[*one];
        if let Some(name) = name {
            s.base = name.to_string();
            s.explicit = true;
            if let Some(d) = &mut s.def {
                d.explicit_name = true;
            }
        }
        types.make_whole(*one);
    }

    /// Refuses an annotation of the wrong kind: the outputs print the text ones (doc comments, the reference) and
    /// carry the others (the bundled schema).
    fn annotation_kinds(&mut self, at: &Origin, o: &Map<String, Value>) {
        const ANNOTATIONS: [(&str, bool); 6] = [
            ("description", true),
            ("title", true),
            ("$comment", true),
            ("deprecated", false),
            ("readOnly", false),
            ("writeOnly", false),
        ];
        for (k, text) in ANNOTATIONS {
            match o.get(k) {
                Some(v) if (text && !v.is_string()) || (!text && !v.is_boolean()) => {
                    let what = if text { "a string" } else { "a boolean" };
                    self.err(&at.join(k), K::InvalidValue, format!("`{k}` must be {what}"));
                }
                Some(Value::String(t)) => {
                    // Printed into text files (markdown, doc comments), where a NUL or an escape byte makes a
                    // file binary to git and diff (helper 87: `\u0000` reached three outputs raw).
                    if let Some(c) = t.chars().find(|c| crate::diag::hidden_control(*c)) {
                        self.err(
                            &at.join(k),
                            K::InvalidValue,
                            format!(
                                "`{k}` holds the control character U+{:04X}, which the generated text files (markdown, \
                                 doc comments) cannot show; write it as text",
                                u32::from(c)
                            ),
                        );
                    }
                }
                _ => {}
            }
        }
    }

    fn schema(&mut self, types: &mut Types, at: &Origin, o: &Map<String, Value>) -> Node {
        let description = o.get("description").and_then(Value::as_str).map(String::from);
        self.annotation_kinds(at, o);
        if o.get("examples").is_some_and(|v| !v.is_array()) {
            self.err(&at.join("examples"), K::InvalidValue, "`examples` must be an array");
        }
        let mut parts: Vec<Node> = Vec::new();
        // `unevaluatedProperties` beside applicators, `unevaluatedItems` beside them or `contains`, wrap the whole
        // schema object; the typed part does not see them.
        let applied = IN_PLACE_APPLICATORS.iter().any(|k| o.contains_key(*k));
        // Per kind (`items`: false, true), the schema of the properties (items) the rest does not evaluate.
        let wrapping = [false, true].map(|items| {
            let beside = applied || (items && o.contains_key("contains"));
            o.get(unevaluated_keyword(items)).filter(|_| beside)
        });
        let typed = if wrapping.iter().any(Option::is_some) {
            let wrapped = |k: &String| {
                [false, true].into_iter().zip(&wrapping).any(|(i, u)| u.is_some() && k == unevaluated_keyword(i))
            };
            let rest: Map<String, Value> =
                o.iter().filter(|(k, _)| !wrapped(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
            self.typed(types, at, &rest)
        } else {
            self.typed(types, at, o)
        };
        if let Some(n) = typed {
            parts.push(n);
        }
        let dynamic = o.contains_key("$dynamicRef").then(|| self.dynamic.target(at)).flatten();
        for t in self.refs.get(at).cloned().into_iter().chain(dynamic) {
            let id = self.instance(types, &t);
            parts.push(Node { origin: at.clone(), description: None, shape: Shape::Ref(id) });
        }
        // A union that does not stand alone is refused, and the rest of the load sees the union alone (so that the
        // checks that need it, such as the envelope's, do not report the same mistake again); what is beside it
        // is still built, for its own errors.
        let mut union_alone = None;
        if let Some(u) = o.get("x-union") {
            let beside =
                !parts.is_empty() || o.contains_key("allOf") || o.contains_key("anyOf") || o.contains_key("oneOf");
            if beside {
                self.err(
                    &at.join("x-union"),
                    K::InvalidValue,
                    "`x-union` stands alone: no `$ref`, `type` or applicator beside it",
                );
            }
            match self.x_union(types, at, u) {
                Some(n) if beside => union_alone = Some(n),
                Some(n) => parts.push(n),
                None => {}
            }
        }
        if let Some(Value::Array(all)) = o.get("allOf") {
            for (i, s) in all.iter().enumerate() {
                parts.push(self.node(types, &at.join("allOf").join(&i.to_string()), s, false));
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(list)) = o.get(key) {
                let members: Vec<Node> = list
                    .iter()
                    .enumerate()
                    .map(|(i, s)| self.node(types, &at.join(key).join(&i.to_string()), s, false))
                    .collect();
                parts.push(self.alternatives(types, at, key == "oneOf", members));
            }
        }
        if let Some(n) = o.get("not") {
            let inner = self.node(types, &at.join("not"), n, false);
            parts.push(Node { origin: at.clone(), description: None, shape: Shape::Not(Box::new(inner)) });
        }
        if let Some(c) = o.get("if") {
            let cond = self.node(types, &at.join("if"), c, false);
            let then = o.get("then").map(|t| Box::new(self.node(types, &at.join("then"), t, false)));
            let otherwise = o.get("else").map(|e| Box::new(self.node(types, &at.join("else"), e, false)));
            // `if` alone constrains nothing, but what it evaluates counts for an `unevaluatedProperties` or
            // `unevaluatedItems` beside it or around it.
            parts.push(Node {
                origin: at.clone(),
                description: None,
                shape: Shape::Cond { cond: Box::new(cond), then, otherwise },
            });
        }
        // `dependencies` (draft 2020-12's meta-schema keeps it for schemas written for earlier drafts): an entry
        // that is a schema means a `dependentSchemas` entry, one that lists names a `dependentRequired` entry (read
        // with the object's keywords, [`Cx::object`]).
        for key in ["dependentSchemas", "dependencies"] {
            match o.get(key) {
                None => {}
                Some(Value::Object(deps)) => {
                    for (property, s) in deps {
                        if key == "dependencies" && !super::is_schema(s) {
                            if !s.is_array() {
                                let msg = "each `dependencies` entry is a schema or a list of property names";
                                self.err(&at.join(key).join(property), K::InvalidValue, msg);
                            }
                            continue;
                        }
                        let then = self.node(types, &at.join(key).join(property), s, false);
                        if !matches!(then.shape, Shape::Any) {
                            let shape = Shape::Dependent { property: property.clone(), then: Box::new(then) };
                            parts.push(Node { origin: at.clone(), description: None, shape });
                        }
                    }
                }
                Some(_) => {
                    let msg = match key {
                        "dependencies" => "`dependencies` maps property names to schemas or to lists of property names",
                        _ => "`dependentSchemas` maps property names to schemas",
                    };
                    self.err(&at.join(key), K::InvalidValue, msg);
                }
            }
        }
        if o.contains_key("x-discriminator") && !o.contains_key("oneOf") && !o.contains_key("anyOf") {
            self.err(
                &at.join("x-discriminator"),
                K::InvalidValue,
                "`x-discriminator` belongs beside `oneOf` or `anyOf`",
            );
        } else if o.get("x-discriminator").is_some_and(|v| !v.is_string()) {
            // Refused even where the members' tags say the union anyway (helper 87: OpenAPI's `{"propertyName":
            // "k"}` was taken as no annotation).
            self.err(
                &at.join("x-discriminator"),
                K::InvalidValue,
                "`x-discriminator` names the tag property (a string)",
            );
        }
        if let Some(n) = union_alone {
            parts = vec![n];
        }
        let shape = match parts.len() {
            0 => Shape::Any,
            1 => parts.pop().map(|p| p.shape).unwrap_or(Shape::Any),
            _ => Shape::AllOf(parts),
        };
        let mut shape = shape;
        for (items, u) in [false, true].into_iter().zip(wrapping) {
            if let Some(u) = u {
                let rest = self.node(types, &at.join(unevaluated_keyword(items)), u, false);
                let inner = Node { origin: at.clone(), description: None, shape };
                shape = Shape::Unevaluated { inner: Box::new(inner), rest: Box::new(rest), items };
            }
        }
        Node { origin: at.clone(), description, shape }
    }

    /// `anyOf`/`oneOf`: a nullable value when one member is `null` and the other cannot be.
    fn alternatives(&mut self, types: &Types, at: &Origin, one: bool, mut members: Vec<Node>) -> Node {
        if members.len() == 2 {
            let null_at = members.iter().position(|m| matches!(m.shape, Shape::Null));
            if let Some(i) = null_at {
                let other = &members[1 - i];
                if !one || !accepts_null(self, types, &other.shape) {
                    let inner = members.remove(1 - i);
                    return Node { origin: at.clone(), description: None, shape: Shape::Nullable(Box::new(inner)) };
                }
            }
        }
        let shape = if one { Shape::OneOf(members) } else { Shape::AnyOf(members) };
        Node { origin: at.clone(), description: None, shape }
    }

    /// The typed part of a schema: `type`, `const`, `enum` and the keywords of each JSON kind.
    fn typed(&mut self, types: &mut Types, at: &Origin, o: &Map<String, Value>) -> Option<Node> {
        let kinds: Option<Vec<Kind>> = match o.get("type") {
            None => None,
            Some(Value::String(s)) => match Kind::parse(s) {
                Some(k) => Some(vec![k]),
                None => {
                    self.err(&at.join("type"), K::InvalidValue, format!("`{s}` is not a JSON Schema type"));
                    return Some(Node::never(at));
                }
            },
            Some(Value::Array(a)) => {
                let mut ks = Vec::new();
                let mut refused = false;
                for (i, t) in a.iter().enumerate() {
                    let msg = match t.as_str().map(|s| (s, Kind::parse(s))) {
                        Some((_, Some(k))) if !ks.contains(&k) => {
                            ks.push(k);
                            continue;
                        }
                        Some((s, Some(_))) => format!("`{s}` is listed twice"),
                        Some((s, None)) => format!("`{s}` is not a JSON Schema type"),
                        None => "`type` lists distinct JSON Schema type names".to_string(),
                    };
                    self.err(&at.join("type").join(&i.to_string()), K::InvalidValue, msg);
                    refused = true;
                }
                if ks.is_empty() && !refused {
                    self.err(&at.join("type"), K::InvalidValue, "`type` must not be empty");
                }
                // Refused, the schema accepts nothing (its other keywords are not checked against a part of it).
                if ks.is_empty() || refused {
                    return Some(Node::never(at));
                }
                ks.sort();
                Some(ks)
            }
            Some(_) => {
                self.err(&at.join("type"), K::InvalidValue, "`type` must be a type name or an array of them");
                return Some(Node::never(at));
            }
        };
        let families: [(&[&str], &[Kind]); 4] = [
            (STRING_KEYWORDS, &[Kind::String]),
            (NUMBER_KEYWORDS, &[Kind::Integer, Kind::Number]),
            (ARRAY_KEYWORDS, &[Kind::Array]),
            (OBJECT_KEYWORDS, &[Kind::Object]),
        ];
        // The family keywords present, in the families' order (a scan of the object's keys: an object has a few
        // of them, where a lookup per keyword hashed every name of every family).
        let mut present: Vec<(usize, usize)> = o
            .keys()
            .filter_map(|key| {
                families.iter().enumerate().find_map(|(f, (kws, _))| kws.iter().position(|k| k == key).map(|i| (f, i)))
            })
            .collect();
        present.sort_unstable();
        // `dependencies` constrains objects as `dependentRequired` does when an entry lists names.
        let lists_names = |v: &Value| v.as_object().is_some_and(|m| m.values().any(Value::is_array));
        let dependencies = o.get("dependencies").filter(|d| lists_names(d));
        if let (Some(ks), Some(_)) = (&kinds, dependencies) {
            if !ks.contains(&Kind::Object) {
                let names: Vec<&str> = ks.iter().map(|k| kind_name(*k)).collect();
                let msg = format!("`dependencies` that list names do not apply to type `{}`", names.join("`, `"));
                self.err(&at.join("dependencies"), K::InvalidValue, msg);
            }
        }
        let constrained = !present.is_empty() || dependencies.is_some();
        // The keywords of kinds `type` leaves out: one at its place, several in one error at `type` (the one
        // mistake they share).
        if let Some(ks) = &kinds {
            let stray: Vec<String> = present
                .iter()
                .filter(|(f, _)| !ks.iter().any(|x| families[*f].1.contains(x)))
                .map(|(f, i)| format!("`{}`", families[*f].0[*i]))
                .collect();
            let types = ks.iter().map(|k| kind_name(*k)).collect::<Vec<_>>().join("`, `");
            match stray.as_slice() {
                [] => {}
                [one] => {
                    let k = one.trim_matches('`');
                    self.err(&at.join(k), K::InvalidValue, format!("{one} does not apply to type `{types}`"));
                }
                several => self.err(
                    &at.join("type"),
                    K::InvalidValue,
                    format!("{} do not apply to type `{types}`", crate::diag::and_list(several)),
                ),
            }
        }
        let value_part = self.const_or_enum(at, o, kinds.as_deref());
        if let (Some(v), false) = (&value_part, constrained) {
            return Some(v.clone());
        }
        if kinds.is_none() && !constrained {
            return value_part;
        }
        let all = [Kind::Null, Kind::Boolean, Kind::Number, Kind::String, Kind::Array, Kind::Object];
        let kinds = kinds.unwrap_or_else(|| all.to_vec());
        let integer_only = kinds.contains(&Kind::Integer) && !kinds.contains(&Kind::Number);
        let mut members: Vec<Node> = Vec::new();
        for k in &kinds {
            let shape = match k {
                Kind::Null => Shape::Null,
                Kind::Boolean => Shape::Boolean,
                Kind::Integer | Kind::Number => {
                    if members.iter().any(|m| matches!(m.shape, Shape::Number(_))) {
                        continue;
                    }
                    Shape::Number(self.number(at, o, integer_only))
                }
                Kind::String => Shape::String(self.string(at, o)),
                Kind::Array => Shape::Array(self.array(types, at, o)),
                Kind::Object => Shape::Object(self.object(types, at, o)),
            };
            members.push(Node { origin: at.clone(), description: None, shape });
        }
        let shape = if members.len() == 1 {
            members.pop().map(|m| m.shape).unwrap_or(Shape::Any)
        } else if members.len() == 2 && matches!(members[0].shape, Shape::Null) {
            Shape::Nullable(Box::new(members.pop().unwrap_or_else(|| Node::any(at))))
        } else {
            Shape::Kinds(members)
        };
        let kinds_node = Node { origin: at.clone(), description: None, shape };
        Some(match value_part {
            Some(v) => Node { origin: at.clone(), description: None, shape: Shape::AllOf(vec![kinds_node, v]) },
            None => kinds_node,
        })
    }

    /// `const` and `enum` (values of another `type` can never match, so they are dropped).
    fn const_or_enum(&mut self, at: &Origin, o: &Map<String, Value>, kinds: Option<&[Kind]>) -> Option<Node> {
        let fits = |v: &Value| kinds.is_none_or(|ks| ks.iter().any(|k| k.holds(v)));
        let mut parts = Vec::new();
        if let Some(c) = o.get("const") {
            let shape = if fits(c) { Shape::Const(c.clone()) } else { Shape::Never };
            parts.push(Node { origin: at.clone(), description: None, shape });
        }
        if let Some(e) = o.get("enum") {
            match e.as_array() {
                Some(values) => {
                    // Repeated values (under JSON equality: `1` and `1.0` are one) are dropped.
                    let mut seen = crate::engine::ValueSet::default();
                    let kept: Vec<Value> = values.iter().filter(|v| fits(v) && seen.insert(v)).cloned().collect();
                    let shape = if kept.is_empty() { Shape::Never } else { Shape::Enum(kept) };
                    parts.push(Node { origin: at.clone(), description: None, shape });
                }
                None => self.err(&at.join("enum"), K::InvalidValue, "`enum` must be an array"),
            }
        }
        match parts.len() {
            0 => None,
            1 => parts.pop(),
            _ => Some(Node { origin: at.clone(), description: None, shape: Shape::AllOf(parts) }),
        }
    }

    fn count(&mut self, at: &Origin, o: &Map<String, Value>, k: &str) -> Option<u64> {
        let v = o.get(k)?;
        // A whole number written with a fraction or an exponent (`100.0`, `1e16`) is that integer; past u64 it is
        // u64::MAX, as far out of reach of any value (`as` saturates), and the emitters say what they cannot count.
        match v.as_u64().or_else(|| v.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0).map(|f| f as u64)) {
            Some(n) => Some(n),
            None => {
                self.err(&at.join(k), K::InvalidValue, format!("`{k}` must be a non-negative integer"));
                None
            }
        }
    }

    fn bound(&mut self, at: &Origin, o: &Map<String, Value>, k: &str) -> Option<f64> {
        let v = o.get(k)?;
        match v.as_f64() {
            Some(n) => Some(n),
            None => {
                self.err(&at.join(k), K::InvalidValue, format!("`{k}` must be a number"));
                None
            }
        }
    }

    fn number(&mut self, at: &Origin, o: &Map<String, Value>, integer: bool) -> NumberShape {
        let multiple_of = self.bound(at, o, "multipleOf");
        if multiple_of.is_some_and(|m| m <= 0.0) {
            self.err(&at.join("multipleOf"), K::InvalidValue, "`multipleOf` must be greater than 0");
        }
        NumberShape {
            integer,
            minimum: self.bound(at, o, "minimum"),
            exclusive_minimum: self.bound(at, o, "exclusiveMinimum"),
            maximum: self.bound(at, o, "maximum"),
            exclusive_maximum: self.bound(at, o, "exclusiveMaximum"),
            multiple_of: multiple_of.filter(|m| *m > 0.0),
        }
    }

    fn string(&mut self, at: &Origin, o: &Map<String, Value>) -> StringShape {
        let pattern = match o.get("pattern") {
            Some(Value::String(p)) => self.pattern(&at.join("pattern"), p),
            Some(_) => {
                self.err(&at.join("pattern"), K::InvalidValue, "`pattern` must be a string");
                None
            }
            None => None,
        };
        let strict_pattern = match o.get("x-strict-pattern") {
            Some(Value::String(p)) => self.pattern(&at.join("x-strict-pattern"), p),
            Some(_) => {
                self.err(&at.join("x-strict-pattern"), K::InvalidValue, "`x-strict-pattern` must be a string");
                None
            }
            None => None,
        };
        StringShape {
            min_length: self.count(at, o, "minLength"),
            max_length: self.count(at, o, "maxLength"),
            pattern,
            strict_pattern,
        }
    }

    /// Translates an ECMA-262 pattern for Rust and compiles it for the JavaScript outputs' matcher, or refuses it
    /// with its location.
    pub(crate) fn pattern(&mut self, at: &Origin, source: &str) -> Option<Pattern> {
        let translated = match self.patterns.get(source) {
            Some(r) => r.clone(),
            None => {
                let r = crate::pattern::translate(source)
                    .map_err(|e| format!("{} (at character {})", e.message, e.at))
                    .and_then(|t| match regex::Regex::new(&t.rust) {
                        Ok(_) => Ok(t),
                        Err(e) => Err(format!("Rust's regex crate cannot compile it: {e}")),
                    })
                    .and_then(|t| match crate::pattern::backtracking::refusal(&t.rust) {
                        None => Ok(t),
                        Some(why) => Err(why),
                    })
                    .and_then(|t| {
                        let linear = crate::pattern::linear::program(&t.rust)?;
                        Ok(Pattern { source: source.to_string(), rust: t.rust, js: t.js, linear })
                    });
                self.patterns.insert(source.to_string(), r.clone());
                r
            }
        };
        match translated {
            Ok(p) => Some(p),
            Err(why) => {
                self.err(at, K::UnsupportedPattern, format!("pattern `{source}` is refused: {why}"));
                None
            }
        }
    }

    fn array(&mut self, types: &mut Types, at: &Origin, o: &Map<String, Value>) -> ArrayShape {
        let prefix = match o.get("prefixItems") {
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, s)| self.node(types, &at.join("prefixItems").join(&i.to_string()), s, false))
                .collect(),
            _ => Vec::new(),
        };
        // `unevaluatedItems` with neither applicators nor `contains` beside it (those are [`Shape::Unevaluated`]):
        // the items after the prefix, as `items` when there is none.
        let items = match (o.get("items"), o.get("unevaluatedItems")) {
            (Some(s), _) => Some(Box::new(self.node(types, &at.join("items"), s, false))),
            (None, Some(s)) => Some(Box::new(self.node(types, &at.join("unevaluatedItems"), s, false))),
            (None, None) => None,
        };
        let items_written = items.is_some();
        let unique = match o.get("uniqueItems") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                self.err(&at.join("uniqueItems"), K::InvalidValue, "`uniqueItems` must be a boolean");
                false
            }
        };
        // `minContains` and `maxContains` without `contains` mean nothing (the spec ignores them).
        let (min, max) = (self.count(at, o, "minContains"), self.count(at, o, "maxContains"));
        let contains = o.get("contains").map(|s| Contains {
            node: Box::new(self.node(types, &at.join("contains"), s, false)),
            min: min.unwrap_or(1),
            max,
        });
        ArrayShape {
            prefix,
            items: items.filter(|n| !matches!(n.shape, Shape::Any)),
            min_items: self.count(at, o, "minItems"),
            max_items: self.count(at, o, "maxItems"),
            unique,
            contains,
            items_written,
        }
    }

    fn object(&mut self, types: &mut Types, at: &Origin, o: &Map<String, Value>) -> ObjectShape {
        let required: Vec<String> = match o.get("required") {
            None => Vec::new(),
            Some(Value::Array(a)) => {
                let mut r: Vec<String> = Vec::new();
                let mut seen: HashSet<&str> = HashSet::new();
                for (i, x) in a.iter().enumerate() {
                    let why = match x.as_str() {
                        Some(s) if seen.insert(s) => {
                            r.push(s.to_string());
                            continue;
                        }
                        Some(s) => {
                            format!(
                                "{} is listed twice: `required` lists distinct property names",
                                crate::diag::code_span(s)
                            )
                        }
                        None => "`required` lists property names: this entry is not a string".to_string(),
                    };
                    self.err(&at.join("required").join(&i.to_string()), K::InvalidValue, why);
                }
                r
            }
            Some(_) => {
                self.err(&at.join("required"), K::InvalidValue, "`required` must be an array of property names");
                Vec::new()
            }
        };
        let empty = Map::new();
        let props = o.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        let required_set: HashSet<&str> = required.iter().map(String::as_str).collect();
        let mut renamed: HashSet<&str> = HashSet::new();
        let mut fields: Vec<Field> = Vec::new();
        for (name, s) in props {
            let fat = at.join("properties").join(name);
            let node = self.node(types, &fat, s, false);
            let description =
                s.get("description").and_then(Value::as_str).map(String::from).or_else(|| self.ref_description(&fat));
            let renamed_from = match s.get("x-renamed-from") {
                None => None,
                Some(Value::String(old)) if old.is_empty() || old == name => {
                    let msg = if old.is_empty() {
                        "`x-renamed-from` is empty: it names the property's previous name"
                    } else {
                        "`x-renamed-from` names the property's previous name, which differs from its name"
                    };
                    self.err(&fat.join("x-renamed-from"), K::InvalidValue, msg);
                    None
                }
                Some(Value::String(old)) if props.contains_key(old) => {
                    let msg = format!("`{old}` is still a property of this object: a rename leaves no property behind");
                    self.err(&fat.join("x-renamed-from"), K::InvalidValue, msg);
                    None
                }
                Some(Value::String(old)) if !renamed.insert(old) => {
                    let msg = format!("another property of this object is already renamed from `{old}`");
                    self.err(&fat.join("x-renamed-from"), K::InvalidValue, msg);
                    None
                }
                Some(Value::String(old)) => Some(old.clone()),
                Some(_) => {
                    let msg = "`x-renamed-from` is the property's previous name (a string)";
                    self.err(&fat.join("x-renamed-from"), K::InvalidValue, msg);
                    None
                }
            };
            let moved_from = match s.get("x-moved-from") {
                None => None,
                Some(Value::String(p)) if p.starts_with('/') && renamed_from.is_none() => Some(p.clone()),
                Some(Value::String(_)) if renamed_from.is_some() => {
                    let msg = "a property is either renamed (`x-renamed-from`) or moved (`x-moved-from`), not both";
                    self.err(&fat.join("x-moved-from"), K::InvalidValue, msg);
                    None
                }
                Some(_) => {
                    let msg =
                        "`x-moved-from` is a JSON Pointer into a message of the previous version (e.g. `/subagent`)";
                    self.err(&fat.join("x-moved-from"), K::InvalidValue, msg);
                    None
                }
            };
            let required = required_set.contains(name.as_str());
            let (examples, annotations) = (examples(s), annotations(s));
            fields.push(Field {
                name: name.clone(),
                description,
                examples,
                annotations,
                required,
                renamed_from,
                moved_from,
                node,
            });
        }
        let required_only: Vec<String> = required.iter().filter(|r| !props.contains_key(*r)).cloned().collect();
        let mut additional = match o.get("additionalProperties") {
            None | Some(Value::Bool(true)) => Additional::Open,
            Some(Value::Bool(false)) => Additional::Closed,
            Some(s) => {
                let n = self.node(types, &at.join("additionalProperties"), s, false);
                match n.shape {
                    Shape::Any => Additional::Open,
                    _ => Additional::Schema(Box::new(n)),
                }
            }
        };
        let mut additional_written = o.contains_key("additionalProperties");
        // Beside applicators, the schema object's node handles it ([`IN_PLACE_APPLICATORS`]).
        if let Some(u) = o.get("unevaluatedProperties") {
            if !o.contains_key("additionalProperties") {
                additional_written = true;
                additional = match u {
                    Value::Bool(true) => Additional::Open,
                    Value::Bool(false) => Additional::Closed,
                    s => {
                        let n = self.node(types, &at.join("unevaluatedProperties"), s, false);
                        match n.shape {
                            Shape::Any => Additional::Open,
                            _ => Additional::Schema(Box::new(n)),
                        }
                    }
                };
            }
        }
        match o.get("x-unknown-keys") {
            None => {}
            Some(Value::String(s)) if s == "strip" && additional == Additional::Open => additional = Additional::Strip,
            Some(_) => self.err(
                &at.join("x-unknown-keys"),
                K::InvalidValue,
                "`x-unknown-keys` takes `\"strip\"`, on an object whose other properties are allowed",
            ),
        }
        let mut pattern_properties = Vec::new();
        if let Some(Value::Object(pp)) = o.get("patternProperties") {
            for (p, s) in pp {
                let pat_at = at.join("patternProperties").join(p);
                let node = self.node(types, &pat_at, s, false);
                if let Some(pat) = self.pattern(&pat_at, p) {
                    pattern_properties.push((pat, node));
                }
            }
        }
        let property_names =
            o.get("propertyNames").map(|s| Box::new(self.node(types, &at.join("propertyNames"), s, false)));
        // `dependentRequired`, then the entries of `dependencies` that list names (its schemas are applicators);
        // a property both name gets the names of both.
        let mut dependent_required: Vec<(String, Vec<String>)> = Vec::new();
        let mut entry_of: HashMap<&str, usize> = HashMap::new();
        for key in ["dependentRequired", "dependencies"] {
            let Some(d) = o.get(key) else { continue };
            let Some(m) = d.as_object() else {
                if key == "dependentRequired" {
                    self.err(&at.join(key), K::InvalidValue, "`dependentRequired` must be an object");
                }
                continue;
            };
            for (k, list) in m {
                if key == "dependencies" && !list.is_array() {
                    continue;
                }
                let names: Option<Vec<String>> =
                    list.as_array().and_then(|a| a.iter().map(|x| x.as_str().map(String::from)).collect());
                let Some(names) = names else {
                    let msg = match key {
                        "dependencies" => "a `dependencies` entry that is a list lists property names",
                        _ => "each `dependentRequired` entry lists property names",
                    };
                    self.err(&at.join(key).join(k), K::InvalidValue, msg);
                    continue;
                };
                match entry_of.get(k.as_str()) {
                    Some(&i) => {
                        let listed = &mut dependent_required[i].1;
                        let known: HashSet<String> = listed.iter().cloned().collect();
                        listed.extend(names.into_iter().filter(|n| !known.contains(n)));
                    }
                    None => {
                        entry_of.insert(k, dependent_required.len());
                        dependent_required.push((k.clone(), names));
                    }
                }
            }
        }
        let min_properties = self.count(at, o, "minProperties");
        ObjectShape {
            fields,
            required_only,
            additional,
            additional_written,
            pattern_properties,
            property_names: property_names.filter(|n| !matches!(n.shape, Shape::Any)),
            min_properties,
            max_properties: self.count(at, o, "maxProperties"),
            dependent_required,
            removed: Vec::new(),
        }
    }

    /// The description of the schema a `$ref` at `at` names, for a property that has none of its own.
    fn ref_description(&self, at: &Origin) -> Option<String> {
        let t = self.refs.get(at)?;
        self.value_at(t)?.get("description")?.as_str().map(String::from)
    }

    /// `x-union`: the members are the schema files of a directory, in `x-order`.
    fn x_union(&mut self, types: &mut Types, at: &Origin, u: &Value) -> Option<Node> {
        let uat = at.join("x-union");
        if let Some(o) = u.as_object() {
            self.unknown_keys(&uat, o, &["discriminator", "members"], "`x-union`");
        }
        let (Some(tag), Some(dir)) =
            (u.get("discriminator").and_then(Value::as_str), u.get("members").and_then(Value::as_str))
        else {
            self.err(
                &uat,
                K::InvalidValue,
                "`x-union` needs string `discriminator` and `members` (a directory of member schemas)",
            );
            return None;
        };
        let base = at.file.rsplit_once('/').map(|(d, _)| format!("{d}/")).unwrap_or_default();
        let prefix = format!("{base}{}/", dir.trim_end_matches('/'));
        let files: Vec<String> =
            self.files.keys().filter(|k| k.starts_with(&prefix) && k.ends_with(".json")).cloned().collect();
        if files.is_empty() {
            self.err(&uat.join("members"), K::Missing, format!("no member schemas found in `{dir}/`"));
            return None;
        }
        let mut members: Vec<(i64, String, TypeId)> = Vec::new();
        for f in files {
            let root = Origin { file: f.clone(), pointer: String::new() };
            let Some(id) = types.named.get(&root).copied() else {
                self.err(&root, K::InvalidValue, "a union member must be an object schema");
                continue;
            };
            let v = self.files[&f].value.clone();
            let order = match v.get("x-order") {
                Some(x) => x.as_i64().unwrap_or_else(|| {
                    self.err(&root.join("x-order"), K::InvalidValue, "`x-order` must be an integer");
                    0
                }),
                None => i64::MAX,
            };
            let tag_value = v.pointer(&format!("/properties/{}/const", crate::diag::escape_token(tag)));
            let key = tag_value.and_then(Value::as_str).unwrap_or_default().to_string();
            members.push((order, key, id));
        }
        members.sort();
        let members = members.into_iter().map(|(_, _, id)| Member { tag: Value::Null, ty: id }).collect();
        Some(Node {
            origin: at.clone(),
            description: None,
            shape: Shape::Union(UnionShape {
                discriminator: tag.to_string(),
                members,
                removed: Vec::new(),
                events: false,
            }),
        })
    }
}

impl Node {
    pub(crate) fn any(at: &Origin) -> Node {
        Node { origin: at.clone(), description: None, shape: Shape::Any }
    }

    fn never(at: &Origin) -> Node {
        Node { origin: at.clone(), description: None, shape: Shape::Never }
    }
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Null => "null",
        Kind::Boolean => "boolean",
        Kind::Integer => "integer",
        Kind::Number => "number",
        Kind::String => "string",
        Kind::Array => "array",
        Kind::Object => "object",
    }
}

/// The `examples` of a schema (an array: [`Cx::schema`] refuses any other value).
fn examples(v: &Value) -> Vec<Value> {
    v.get("examples").and_then(Value::as_array).cloned().unwrap_or_default()
}

/// The annotations of a schema besides `description` and `examples` ([`Cx::schema`] refuses one of the wrong
/// type, so a wrong one reads as absent here).
pub(crate) fn annotations(v: &Value) -> Annotations {
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(String::from);
    let flag = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
    Annotations {
        title: text("title"),
        default: v.get("default").cloned(),
        deprecated: flag("deprecated"),
        read_only: flag("readOnly"),
        write_only: flag("writeOnly"),
    }
}

/// Shapes that only stand as the body of a named type.
pub(crate) fn is_named_shape(s: &Shape) -> bool {
    match s {
        Shape::Object(_) | Shape::Union(_) => true,
        Shape::Enum(values) => values.iter().all(Value::is_string),
        _ => false,
    }
}

/// Whether a shape can accept `null` (conservatively: `true` when unsure).
fn accepts_null(cx: &Cx, types: &Types, s: &Shape) -> bool {
    match s {
        Shape::String(_) | Shape::Number(_) | Shape::Boolean | Shape::Array(_) | Shape::Object(_) | Shape::Union(_) => {
            false
        }
        Shape::Const(v) => v.is_null(),
        Shape::Enum(vs) => vs.iter().any(Value::is_null),
        Shape::Never => false,
        Shape::Ref(id) => match types.slots.get(id.0) {
            Some(slot) => match &slot.def {
                Some(d) => accepts_null(cx, types, &d.node.shape),
                // Not built yet (a `$defs` entry is built after the root that refers to it): its `type`, which
                // whatever else it says only narrows, tells when it has no `null` (a `oneOf` of it and `null` was
                // left a `oneOf`, whose Zod value is its input, where the same `anyOf` was nullable; helper 120).
                None => match cx.value_at(&slot.origin).and_then(|v| v.get("type")) {
                    Some(Value::String(t)) => t == "null",
                    Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
                    _ => true,
                },
            },
            None => true,
        },
        _ => true,
    }
}

/// Whether a location is where a named type's own annotations stand: a file root or a `$defs` entry.
pub(crate) fn is_type_root(pointer: &str) -> bool {
    pointer.is_empty() || defs_entry(pointer).is_some()
}

/// The (escaped) key of a `$defs` (or `definitions`) entry when a pointer suffix is exactly one: `/$defs/key`.
pub(crate) fn defs_entry(suffix: &str) -> Option<&str> {
    let (keyword, key) = suffix.strip_prefix('/')?.split_once('/')?;
    (DEFS_KEYWORDS.contains(&keyword) && !key.contains('/')).then_some(key)
}
