//! The model's types as Rust: the form each type takes, the Rust type of each node, and the generated decoders,
//! checks and serializers (all built on the runtime in `rt.rs`).
//!
//! Forms (one Rust item per [`TypeDef`]):
//! - an object is a struct: a field per declared property (a required `const` property is no field: it is
//!   written on output and checked on input; an optional one is a `bool`, "present"), and an `extra` map when
//!   the object keeps properties it does not declare (open, a map, or pattern properties);
//! - an `allOf` whose parts include objects (through references and nested `allOf`s) that declare different
//!   properties is a struct of all their properties ([`merged_object`]); its decoder checks the whole `allOf`
//!   first, so its errors are the `allOf`'s, then reads the fields;
//! - an `anyOf` or `oneOf` that is no discriminated union, and a `type` list, is an enum with a variant per
//!   alternative (named after its type, else its kind: `String`, `Integer`, ...); its decoder checks the whole
//!   node first, so its errors are the node's, then keeps the first alternative the value matches;
//! - a union is an enum with one newtype variant per member (the member's struct), dispatched on the
//!   discriminator;
//! - a string enum is a fieldless enum;
//! - an alias (a type that is only a `$ref`) is a `type` alias of its target;
//! - anything else is a newtype over the Rust type of its node. A reference to it is *inlined* (the field has
//!   the inner type, e.g. `String` for an id) unless the type is part of a reference cycle.
//!
//! Node types: a string is `String`, a boolean `bool`, `null` `()`, an integer whose bounds stay within
//! ±(2^53-1) `u64` (lower bound >= 0) or `i64`, other numbers `f64` (the engine compares doubles), an array of one
//! item type `Vec<T>`, a nullable value `Option<T>` (an optional nullable property `Option<Option<T>>`), an
//! object with no declared property and no constraint a `serde_json::Map`, and everything else (`const`,
//! `enum` of non-strings, `prefixItems`, another `allOf`, an `anyOf`, `oneOf` or `type` list that is no type,
//! `not`, `if`, `{}`) a
//! `serde_json::Value` that passed a generated check. A field whose type contains its own struct (through
//! other types, not through a `Vec` or a map) is boxed, and so is a tuple position whose type holds itself
//! through tuple positions alone (an `allOf` holds what its typed part holds).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};
use serde_json::Value;

use super::{doc_attrs, doc_code_block, field_name, ident, lit, variant_name, Names, Opts, Runtime};
use crate::emit::schema::keywords::Keywords;
use crate::emit::EmitError;
use crate::ir::*;

/// The Rust form of a model type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// An object: a struct.
    Struct,
    /// An `allOf` whose parts include objects: a struct of the objects' properties ([`merged_object`]),
    /// decoded after the whole `allOf` is checked.
    Merged,
    /// A discriminated union: an enum of its members.
    Union,
    /// An `anyOf` or `oneOf` that is no discriminated union, or a `type` list: an enum with a variant per
    /// alternative, holding the first alternative the value matches, decoded after the whole node is checked.
    Choice,
    /// A string enum: a fieldless enum.
    StrEnum,
    /// Only a `$ref`: a type alias of the type it names.
    Alias(TypeId),
    /// Anything else: a newtype over the node's Rust type.
    Newtype,
}

/// The Rust type of integers and numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NumTy {
    U64,
    I64,
    F64,
}

/// The largest integer a double holds exactly, with all below it (2^53-1).
const SAFE: f64 = 9_007_199_254_740_991.0;

fn num_ty(n: &NumberShape) -> NumTy {
    if !n.integer {
        return NumTy::F64;
    }
    let lower = n.minimum.is_some_and(|m| m >= -SAFE) || n.exclusive_minimum.is_some_and(|m| m >= -SAFE);
    let upper = n.maximum.is_some_and(|m| m <= SAFE) || n.exclusive_maximum.is_some_and(|m| m <= SAFE);
    if !(lower && upper) {
        return NumTy::F64;
    }
    if n.minimum.is_some_and(|m| m >= 0.0) || n.exclusive_minimum.is_some_and(|m| m >= 0.0) {
        NumTy::U64
    } else {
        NumTy::I64
    }
}

/// The Rust type of an `enum` whose values are all of one kind besides strings (string enums are named Rust
/// enums): numbers as [`num_ty`] types them, booleans as `bool`; `None` for a mix of kinds, arrays, objects, `null`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ValueTy {
    Num(NumTy),
    Bool,
}

fn enum_ty(values: &[Value]) -> Option<ValueTy> {
    if !values.is_empty() && values.iter().all(Value::is_boolean) {
        return Some(ValueTy::Bool);
    }
    let nums: Vec<f64> = values.iter().map(Value::as_f64).collect::<Option<_>>()?;
    let whole = nums.iter().all(|n| n.fract() == 0.0);
    let lowest = nums.iter().copied().fold(f64::INFINITY, f64::min);
    let highest = nums.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let shape = NumberShape { integer: whole, minimum: Some(lowest), maximum: Some(highest), ..NumberShape::default() };
    (!nums.is_empty()).then(|| ValueTy::Num(num_ty(&shape)))
}

/// The most positions a Rust tuple has whose `Debug`, `Clone` and `PartialEq` the standard library implements.
const TUPLE_MAX: u64 = 12;

/// The positions of an array that always has exactly its `prefixItems` (a Rust tuple): `minItems` at least
/// their number, and no item after them (`items: false`, or `maxItems` at most their number). Longer arrays than
/// [`TUPLE_MAX`] stay checked `serde_json::Value`s (a longer tuple has none of the traits the types derive).
pub(crate) fn tuple_positions(a: &ArrayShape) -> Option<&[Node]> {
    let n = a.prefix.len() as u64;
    let closed =
        matches!(a.items.as_deref(), Some(Node { shape: Shape::Never, .. })) || a.max_items.is_some_and(|m| m <= n);
    (n > 0 && n <= TUPLE_MAX && closed && a.min_items.is_some_and(|m| m >= n)).then_some(a.prefix.as_slice())
}

/// Whether a Rust type (from [`Gen::ty`]) is the checked `serde_json::Value`.
pub(crate) fn is_value(t: &TokenStream) -> bool {
    t.to_string() == quote!(::serde_json::Value).to_string()
}

/// Whether a Rust type is a container that says nothing of its parts: a bare `Map` or a `Vec<Value>`.
fn is_untyped_container(t: &TokenStream) -> bool {
    let t = t.to_string();
    t == quote!(::serde_json::Map<::std::string::String, ::serde_json::Value>).to_string()
        || t == quote!(::std::vec::Vec<::serde_json::Value>).to_string()
}

/// An object that holds any members and nothing else: a `serde_json::Map`.
pub(crate) fn is_bare_map(o: &ObjectShape) -> bool {
    o.fields.is_empty()
        && o.required_only.is_empty()
        && o.additional == Additional::Open
        && o.pattern_properties.is_empty()
        && o.property_names.is_none()
        && o.min_properties.is_none()
        && o.max_properties.is_none()
        && o.dependent_required.is_empty()
}

/// A decoder or a check: a path to a function (`rt::null`), or a body over `v` (the `&rt::Json`) and `at`
/// (the `rt::Ptr`), which becomes a closure where a function is needed.
#[derive(Clone)]
pub(crate) enum Code {
    Path(TokenStream),
    Body(TokenStream),
}

impl Code {
    /// As a function value (a path, or a non-capturing closure).
    pub(crate) fn func(&self) -> TokenStream {
        match self {
            Code::Path(p) => p.clone(),
            Code::Body(b) => quote!(|v, at| #b),
        }
    }

    /// As an expression over `v` and `at`.
    pub(crate) fn body(&self) -> TokenStream {
        match self {
            Code::Path(p) => quote!(#p(v, at)),
            Code::Body(b) => b.clone(),
        }
    }
}

/// What an object keeps of the properties it does not declare.
#[derive(Clone, Copy)]
enum ExtraKind<'m> {
    /// Nothing (closed without pattern properties, or stripped).
    None,
    /// The values as they are.
    Values,
    /// The values of a map, decoded.
    Typed(&'m Node),
}

fn extra_kind(o: &ObjectShape) -> ExtraKind<'_> {
    match &o.additional {
        Additional::Strip => ExtraKind::None,
        Additional::Closed if o.pattern_properties.is_empty() => ExtraKind::None,
        Additional::Closed | Additional::Open => ExtraKind::Values,
        Additional::Schema(_) if !o.pattern_properties.is_empty() => ExtraKind::Values,
        Additional::Schema(n) => ExtraKind::Typed(n),
    }
}

/// One stored or checked property of a struct.
pub(crate) struct FieldPlan<'m> {
    pub(crate) field: &'m Field,
    pub(crate) ident: Ident,
    pub(crate) kind: FieldKind,
}

/// How a property is held.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FieldKind {
    /// A required `const`: no field; written on output.
    ConstRequired(Value),
    /// An optional `const`: a `bool` saying whether it is present.
    ConstOptional(Value),
    /// A value (boxed when the type contains its own struct).
    Value { boxed: bool },
}

/// The generator's state for one model.
pub(crate) struct Gen<'m> {
    pub(crate) m: &'m Model,
    pub(crate) opts: Opts,
    forms: Vec<Form>,
    /// Per type of form [`Form::Merged`]: the object its struct decodes.
    merged: Vec<Option<Rc<ObjectShape>>>,
    inline: Vec<bool>,
    idents: Vec<Ident>,
    /// Per type: the types it holds without indirection (through fields, variants, tuple positions and inlined
    /// types).
    reach: Vec<BTreeSet<usize>>,
    /// Per type: whether it holds itself without indirection and without a struct field on the way (a field that
    /// holds its own struct is boxed, which breaks every cycle through it): through tuple positions, which are
    /// then boxed ([`Gen::boxed_position`]).
    tuple_cycle: Vec<bool>,
    lits: BTreeMap<String, Ident>,
    lit_items: Vec<TokenStream>,
    patterns: BTreeMap<String, Ident>,
    pattern_items: Vec<TokenStream>,
    /// The types' JSON Schema keywords (for the `JsonSchema` impls).
    pub(crate) keywords: Keywords<'m>,
    /// The Rust type of each inlined type, once computed: a type referred to from many places (through the
    /// parts of `allOf`s) is typed once, not once per path to it.
    inlined_ty: RefCell<BTreeMap<usize, TokenStream>>,
    /// The JSON kinds each type's values may have (an `allOf`'s typed part drops `null` where another part
    /// refuses it).
    kinds: kinds::Kinds,
}

/// Type names the output defines itself.
pub(crate) const RESERVED: &[&str] = &["Rule", "Error", "Extra"];

impl<'m> Gen<'m> {
    /// Plans the Rust form of every type.
    ///
    /// # Errors
    /// A type whose Rust name is reserved or taken twice.
    pub(crate) fn new(m: &'m Model, opts: Opts) -> Result<Self, EmitError> {
        let envelope = m.protocol.as_ref().map(|p| p.envelope);
        let kinds = kinds::Kinds::of(m);
        let merged: Vec<Option<Rc<ObjectShape>>> = m
            .types
            .iter()
            .enumerate()
            .map(|(i, t)| match &t.node.shape {
                // Where a part may strip keys, the checked value keeps them, as the TypeScript outputs do.
                Shape::AllOf(parts) if envelope != Some(TypeId(i)) && !parts.iter().any(|p| m.may_drop_keys(p)) => {
                    merged_object(m, &kinds, parts).map(Rc::new)
                }
                _ => None,
            })
            .collect();
        let forms: Vec<Form> = m
            .types
            .iter()
            .zip(&merged)
            .map(|(t, merged)| match &t.node.shape {
                Shape::Object(o) if !is_bare_map(o) => Form::Struct,
                Shape::AllOf(_) if merged.is_some() => Form::Merged,
                Shape::AnyOf(ms) | Shape::OneOf(ms) | Shape::Kinds(ms)
                    if !ms.is_empty() && !ms.iter().any(|n| m.may_drop_keys(n)) =>
                {
                    Form::Choice
                }
                Shape::Union(_) => Form::Union,
                Shape::Enum(vs) if vs.iter().all(Value::is_string) => Form::StrEnum,
                Shape::Ref(id) => Form::Alias(*id),
                _ => Form::Newtype,
            })
            .collect();
        let mut reserved: BTreeSet<String> = RESERVED.iter().map(|s| s.to_string()).collect();
        if let Some(p) = &m.protocol {
            reserved.insert(format!("{}Options", m.ty(p.envelope).names.rust));
        }
        let mut seen = BTreeSet::new();
        let mut idents = Vec::new();
        for t in &m.types {
            let name = &t.names.rust;
            if reserved.contains(name) {
                return Err(EmitError::at(
                    &t.names.at.rust,
                    format!(
                        "the Rust name `{name}` is reserved by the generated code; rename the type (`x-rust-name`)"
                    ),
                ));
            }
            let word = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !word {
                return Err(EmitError::at(&t.names.at.rust, format!("`{name}` is not a Rust identifier")));
            }
            if !seen.insert(name.clone()) {
                return Err(EmitError::at(&t.names.at.rust, format!("two Rust types would be named `{name}`")));
            }
            idents.push(ident(name));
        }
        for t in &m.types {
            for a in &t.aliases {
                let word = a.rust.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                    && a.rust.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !word || reserved.contains(&a.rust) || !seen.insert(a.rust.clone()) {
                    return Err(EmitError::at(
                        &a.at.rust,
                        format!("the alias `{}` (`x-aliases`) is reserved or already a Rust name", a.rust),
                    ));
                }
            }
        }
        let mut g = Gen {
            m,
            opts,
            forms,
            merged,
            inline: vec![false; m.types.len()],
            idents,
            reach: Vec::new(),
            tuple_cycle: Vec::new(),
            lits: BTreeMap::new(),
            lit_items: Vec::new(),
            patterns: BTreeMap::new(),
            pattern_items: Vec::new(),
            keywords: Keywords::new(m, None),
            inlined_ty: RefCell::default(),
            kinds,
        };
        g.plan_inlining();
        g.plan_reach();
        Ok(g)
    }

    /// A newtype is inlined at its references unless a chain of references leads from it back to itself.
    fn plan_inlining(&mut self) {
        let n = self.m.types.len();
        let edges: Vec<BTreeSet<usize>> = self
            .m
            .types
            .iter()
            .map(|t| {
                let mut out = BTreeSet::new();
                t.node.visit(&mut |node: &Node| {
                    if let Shape::Ref(id) = node.shape {
                        out.insert(id.0);
                    }
                });
                out
            })
            .collect();
        for i in 0..n {
            if self.forms[i] != Form::Newtype {
                continue;
            }
            self.inline[i] = !crate::graph::reaches(i, |j| edges.get(j).into_iter().flatten().copied(), |j| j == i);
        }
    }

    fn plan_reach(&mut self) {
        let n = self.m.types.len();
        let direct: Vec<BTreeSet<usize>> = (0..n)
            .map(|i| {
                let t = &self.m.types[i];
                let mut out = BTreeSet::new();
                match (&t.node.shape, self.forms[i]) {
                    (Shape::Object(o), Form::Struct) => {
                        for f in &o.fields {
                            self.inline_refs(&f.node, &mut out);
                        }
                    }
                    (_, Form::Merged) => {
                        for f in self.merged[i].iter().flat_map(|o| &o.fields) {
                            self.inline_refs(&f.node, &mut out);
                        }
                    }
                    (Shape::AnyOf(ms) | Shape::OneOf(ms) | Shape::Kinds(ms), Form::Choice) => {
                        for n in ms {
                            self.inline_refs(n, &mut out);
                        }
                    }
                    (Shape::Union(u), Form::Union) => {
                        out.extend(u.members.iter().map(|mb| self.final_id(mb.ty).0));
                    }
                    (_, Form::Newtype) => self.inline_refs(&t.node, &mut out),
                    _ => {}
                }
                out
            })
            .collect();
        let edges = |j: usize| direct.get(j).into_iter().flatten().copied().filter(move |&r| r < n);
        self.reach = (0..n).map(|i| crate::graph::reachable(i, edges)).collect();
        // Without the struct fields' edges: what is left of a cycle goes through tuple positions only.
        let forms = &self.forms;
        let unfielded = |j: usize| {
            direct
                .get(j)
                .filter(|_| !matches!(forms.get(j), Some(Form::Struct | Form::Merged)))
                .into_iter()
                .flatten()
                .copied()
        };
        self.tuple_cycle = (0..n).map(|i| crate::graph::reaches(i, unfielded, |j| j == i)).collect();
        // `allOf`s chose their typed part above through the Rust types of their parts, cached before the tuple
        // positions' boxing was known: those are computed again.
        self.inlined_ty.borrow_mut().clear();
    }

    /// The types a node's Rust type holds without indirection.
    fn inline_refs(&self, node: &Node, out: &mut BTreeSet<usize>) {
        match &node.shape {
            Shape::Ref(id) => {
                let f = self.final_id(*id);
                if self.is_inlined(f) {
                    self.inline_refs(&self.m.ty(f).node, out);
                } else {
                    out.insert(f.0);
                }
            }
            Shape::Nullable(inner) => self.inline_refs(inner, out),
            Shape::Array(a) => {
                for p in tuple_positions(a).unwrap_or_default() {
                    self.inline_refs(p, out);
                }
            }
            // An `allOf` is its typed part's Rust type.
            Shape::AllOf(parts) => {
                if let Some((p, _)) = self.typed_part(parts) {
                    self.inline_refs(p, out);
                }
            }
            _ => {}
        }
    }

    /// Whether a tuple position is boxed: it holds a type that holds itself through tuple positions alone (`[1,
    /// [2, null]]` as a list of pairs), which would otherwise be a Rust type of infinite size.
    pub(crate) fn boxed_position(&self, position: &Node) -> bool {
        let mut refs = BTreeSet::new();
        self.inline_refs(position, &mut refs);
        refs.iter().any(|r| self.tuple_cycle.get(*r).copied().unwrap_or(false))
    }

    /// The type an alias chain ends at.
    pub(crate) fn final_id(&self, mut id: TypeId) -> TypeId {
        for _ in 0..=self.forms.len() {
            match self.forms.get(id.0) {
                Some(Form::Alias(next)) => id = *next,
                _ => return id,
            }
        }
        id
    }

    pub(crate) fn form(&self, id: TypeId) -> Option<Form> {
        self.forms.get(id.0).copied()
    }

    fn is_inlined(&self, id: TypeId) -> bool {
        self.forms.get(id.0) == Some(&Form::Newtype) && self.inline.get(id.0).copied().unwrap_or(false)
    }

    /// The Rust identifier of a type.
    pub(crate) fn type_ident(&self, id: TypeId) -> Ident {
        self.idents.get(id.0).cloned().unwrap_or_else(|| format_ident!("Undefined"))
    }

    /// Whether the model has patterns the generated code checks (strict-id patterns are not checked).
    pub(crate) fn has_patterns(&self) -> bool {
        let mut any = false;
        self.m.visit_patterns(&mut |_, strict| any |= !strict);
        any
    }

    fn undefined(&self, id: TypeId) -> Result<(), EmitError> {
        if id.0 < self.m.types.len() {
            Ok(())
        } else {
            Err(EmitError::Unsupported(format!("a reference to type #{} that the model does not define", id.0)))
        }
    }

    // ---- Rust types of nodes ----

    /// The Rust type of a reference.
    fn ref_ty(&self, id: TypeId) -> TokenStream {
        let f = self.final_id(id);
        if self.is_inlined(f) {
            if let Some(t) = self.inlined_ty.borrow().get(&f.0) {
                return t.clone();
            }
            // An inlined type is on no reference cycle, so computing it never asks for itself.
            let t = self.ty(&self.m.ty(f).node);
            self.inlined_ty.borrow_mut().insert(f.0, t.clone());
            return t;
        }
        let i = self.type_ident(f);
        quote!(#i)
    }

    /// The Rust type of a node.
    pub(crate) fn ty(&self, node: &Node) -> TokenStream {
        match &node.shape {
            Shape::Ref(id) => self.ref_ty(*id),
            Shape::Null => quote!(()),
            Shape::Boolean => quote!(bool),
            Shape::String(_) => quote!(::std::string::String),
            Shape::Number(n) => match num_ty(n) {
                NumTy::U64 => quote!(u64),
                NumTy::I64 => quote!(i64),
                NumTy::F64 => quote!(f64),
            },
            Shape::Array(a) if a.prefix.is_empty() => {
                let item = match &a.items {
                    Some(n) => self.ty(n),
                    None => quote!(::serde_json::Value),
                };
                quote!(::std::vec::Vec<#item>)
            }
            Shape::Array(a) if tuple_positions(a).is_some() => {
                let ts = a.prefix.iter().map(|p| {
                    let t = self.ty(p);
                    if self.boxed_position(p) {
                        quote!(::std::boxed::Box<#t>)
                    } else {
                        t
                    }
                });
                quote!((#(#ts,)*))
            }
            Shape::Nullable(inner) => {
                let t = self.ty(inner);
                quote!(::std::option::Option<#t>)
            }
            Shape::Object(o) if is_bare_map(o) => {
                quote!(::serde_json::Map<::std::string::String, ::serde_json::Value>)
            }
            Shape::AllOf(parts) => self.typed_part(parts).map_or_else(|| quote!(::serde_json::Value), |(_, t)| t),
            Shape::Enum(values) => match enum_ty(values) {
                Some(ValueTy::Bool) => quote!(bool),
                Some(ValueTy::Num(NumTy::U64)) => quote!(u64),
                Some(ValueTy::Num(NumTy::I64)) => quote!(i64),
                Some(ValueTy::Num(NumTy::F64)) => quote!(f64),
                None => quote!(::serde_json::Value),
            },
            _ => quote!(::serde_json::Value),
        }
    }

    /// The part of an `allOf` whose Rust type the whole takes (a refinement such as `{"$ref": "#/$defs/id",
    /// "minLength": 1}` is the referenced type's `String`): the first part whose type says the most, that is one
    /// other than `Value`, and other than a bare `Map` or `Vec<Value>` where another part has one (`{"type":
    /// "object", "$ref": "#/$defs/user"}` is a `User`). A nullable part is taken without its `null` where another
    /// part refuses `null` (`{"type": ["object", "null"], "$ref": "#/$defs/user"}` is a `User`, not an
    /// `Option<User>` whose `None` could not be written). Once the whole `allOf` passes, that part's decoder reads
    /// the value and cannot fail. `None` when no part has a type, or a part may drop keys (the checked value keeps
    /// them, as the TypeScript outputs do). Each part's type is computed once (nested `allOf`s would otherwise
    /// cost time exponential in their depth).
    pub(crate) fn typed_part<'n>(&self, parts: &'n [Node]) -> Option<(&'n Node, TokenStream)>
    where
        'm: 'n,
    {
        if parts.iter().any(|p| self.m.may_drop_keys(p)) {
            return None;
        }
        let no_null =
            !parts.iter().fold(kinds::KindSet::ALL, |k, p| k.and(self.kinds.node(p))).contains(kinds::KindSet::NULL);
        let mut best: Option<(&'n Node, TokenStream, u8)> = None;
        for p in parts {
            let p = if no_null { self.without_null(p) } else { p };
            let t = self.ty(p);
            let says = if is_value(&t) {
                continue;
            } else if is_untyped_container(&t) {
                1
            } else {
                2
            };
            if best.as_ref().is_none_or(|(_, _, b)| says > *b) {
                best = Some((p, t, says));
            }
        }
        best.map(|(p, t, _)| (p, t))
    }

    /// A nullable node without its `null`: the inner node of a `Nullable`, also through a reference to an inlined
    /// type (whose Rust type is the node's); any other node as it is.
    fn without_null<'n>(&self, node: &'n Node) -> &'n Node
    where
        'm: 'n,
    {
        match &node.shape {
            Shape::Nullable(inner) => inner,
            Shape::Ref(id) => {
                let f = self.final_id(*id);
                let target: &'m Node = &self.m.ty(f).node;
                match &target.shape {
                    Shape::Nullable(inner) if self.is_inlined(f) => inner,
                    _ => node,
                }
            }
            _ => node,
        }
    }

    /// Whether a node's Rust type is `Copy` (for getters).
    pub(crate) fn is_copy(&self, node: &Node) -> bool {
        match &node.shape {
            Shape::Ref(id) => {
                let f = self.final_id(*id);
                match self.form(f) {
                    Some(Form::StrEnum) => true,
                    Some(Form::Newtype) if self.is_inlined(f) => self.is_copy(&self.m.ty(f).node),
                    _ => false,
                }
            }
            Shape::Null | Shape::Boolean | Shape::Number(_) => true,
            Shape::Enum(values) => enum_ty(values).is_some(),
            Shape::AllOf(parts) => self.typed_part(parts).is_some_and(|(p, _)| self.is_copy(p)),
            Shape::Nullable(inner) => self.is_copy(inner),
            _ => false,
        }
    }

    /// Whether a node's Rust type is `String` (for getters that return `&str`).
    pub(crate) fn is_string(&self, node: &Node) -> bool {
        match &node.shape {
            Shape::Ref(id) => {
                let f = self.final_id(*id);
                self.is_inlined(f) && self.is_string(&self.m.ty(f).node)
            }
            Shape::String(_) => true,
            Shape::AllOf(parts) => self.typed_part(parts).is_some_and(|(p, _)| self.is_string(p)),
            _ => false,
        }
    }

    // ---- literals and patterns ----

    /// The static holding a JSON literal.
    fn lit(&mut self, v: &Value) -> Ident {
        let text = v.to_string();
        if let Some(i) = self.lits.get(&text) {
            return i.clone();
        }
        let i = format_ident!("LIT_{}", self.lits.len());
        let l = lit(&text);
        self.lit_items.push(quote!(static #i: rt::Lit = rt::Lit::new(#l);));
        self.lits.insert(text, i.clone());
        i
    }

    /// The static holding a pattern.
    fn pattern(&mut self, p: &Pattern) -> Ident {
        if let Some(i) = self.patterns.get(&p.source) {
            return i.clone();
        }
        let i = format_ident!("PATTERN_{}", self.patterns.len());
        let (src, rust) = (lit(&p.source), lit(&p.rust));
        self.pattern_items.push(quote!(static #i: rt_regex::Pattern = rt_regex::Pattern::new(#src, #rust);));
        self.patterns.insert(p.source.clone(), i.clone());
        i
    }

    fn str_rule(&mut self, s: &StringShape) -> TokenStream {
        let min = opt_u64(s.min_length);
        let max = opt_u64(s.max_length);
        let pattern = match &s.pattern {
            Some(p) => {
                let i = self.pattern(p);
                quote!(::std::option::Option::Some(&#i))
            }
            None => quote!(::std::option::Option::None),
        };
        quote!(rt::Str { min_length: #min, max_length: #max, pattern: #pattern })
    }

    fn num_rule(n: &NumberShape) -> TokenStream {
        let integer = n.integer;
        let (a, b, c, d, e) = (
            opt_f64(n.minimum),
            opt_f64(n.exclusive_minimum),
            opt_f64(n.maximum),
            opt_f64(n.exclusive_maximum),
            opt_f64(n.multiple_of),
        );
        quote!(rt::Num { integer: #integer, minimum: #a, exclusive_minimum: #b, maximum: #c, exclusive_maximum: #d, multiple_of: #e })
    }

    /// An evaluation plan ([`Evaluation`]) as the `rt::Eval` the runtime's `unevaluated` runs.
    fn eval_plan(&mut self, e: &Evaluation) -> Result<TokenStream, EmitError> {
        Ok(match e {
            Evaluation::None => quote!(rt::Eval::None),
            Evaluation::Items { prefix, rest, contains } => {
                let c = match contains {
                    Some(n) => {
                        let c = self.check(n)?.func();
                        quote!(::std::option::Option::Some(#c))
                    }
                    None => quote!(::std::option::Option::None),
                };
                quote!(rt::Eval::Items { prefix: #prefix, rest: #rest, contains: #c })
            }
            Evaluation::Keys { names, patterns, rest } => {
                let names = names.iter().map(|n| lit(n));
                let pis: Vec<Ident> = patterns.iter().map(|p| self.pattern(p)).collect();
                quote!(rt::Eval::Keys { names: &[#(#names),*], patterns: &[#(&#pis),*], rest: #rest })
            }
            Evaluation::All(plans) => {
                let ps = plans.iter().map(|p| self.eval_plan(p)).collect::<Result<Vec<_>, _>>()?;
                quote!(rt::Eval::All(&[#(#ps),*]))
            }
            Evaluation::Valid(plans) => {
                let mut items = Vec::new();
                for (n, p) in plans {
                    let c = self.check(n)?.func();
                    let p = self.eval_plan(p)?;
                    items.push(quote!((#c, #p)));
                }
                quote!(rt::Eval::Valid(&[#(#items),*]))
            }
            Evaluation::Cond { cond, then, otherwise } => {
                let c = self.check(cond)?.func();
                let (t, o) = (self.eval_plan(then)?, self.eval_plan(otherwise)?);
                quote!(rt::Eval::Cond { cond: #c, then: &#t, otherwise: &#o })
            }
            Evaluation::Dependent { property, then } => {
                let p = lit(property);
                let t = self.eval_plan(then)?;
                quote!(rt::Eval::Dependent { property: #p, then: &#t })
            }
        })
    }

    fn arr_rule(&mut self, a: &ArrayShape) -> Result<TokenStream, EmitError> {
        let (min, max, unique) = (opt_u64(a.min_items), opt_u64(a.max_items), a.unique);
        let contains = match &a.contains {
            Some(c) => {
                let check = self.check(&c.node)?.func();
                let (cmin, cmax) = (c.min, opt_u64(c.max));
                quote!(::std::option::Option::Some(rt::Contains { check: #check, min: #cmin, max: #cmax }))
            }
            None => quote!(::std::option::Option::None),
        };
        Ok(quote!(rt::Arr { min_items: #min, max_items: #max, unique: #unique, contains: #contains }))
    }

    // ---- decoders and checks ----

    /// The decoder of a node into its Rust type ([`Self::ty`]).
    ///
    /// # Errors
    /// An object, union or string enum that is not the body of a type (the loader never builds one).
    pub(crate) fn decode(&mut self, node: &Node) -> Result<Code, EmitError> {
        if let Some(code) = self.read_after_check(node)? {
            return Ok(code);
        }
        Ok(match &node.shape {
            Shape::Ref(id) => {
                self.undefined(*id)?;
                let f = self.final_id(*id);
                let i = self.type_ident(f);
                if self.is_inlined(f) {
                    Code::Path(quote!(#i::decode_inner))
                } else {
                    Code::Path(quote!(<#i as rt::Decode>::decode))
                }
            }
            Shape::Any => Code::Path(quote!(rt::any_value)),
            Shape::Null => Code::Path(quote!(rt::null)),
            Shape::Boolean => Code::Path(quote!(rt::boolean)),
            Shape::String(s) => {
                let r = self.str_rule(s);
                Code::Body(quote!(rt::string(v, at, &#r)))
            }
            Shape::Number(n) => {
                let r = Self::num_rule(n);
                match num_ty(n) {
                    NumTy::U64 => Code::Body(quote!(rt::uint(v, at, &#r))),
                    NumTy::I64 => Code::Body(quote!(rt::int(v, at, &#r))),
                    NumTy::F64 => Code::Body(quote!(rt::number(v, at, &#r))),
                }
            }
            Shape::Array(a) if a.prefix.is_empty() => {
                let item = match &a.items {
                    Some(n) => self.decode(n)?.func(),
                    None => quote!(rt::any_value),
                };
                let r = self.arr_rule(a)?;
                Code::Body(quote!(rt::vec(v, at, &#r, #item)))
            }
            Shape::Nullable(inner) => {
                let d = self.decode(inner)?.func();
                Code::Body(quote!(rt::nullable(v, at, #d)))
            }
            Shape::Object(o) if is_bare_map(o) => Code::Path(quote!(rt::any_object)),
            _ => {
                let c = self.check(node)?.func();
                Code::Body(quote!(rt::checked(v, at, #c)))
            }
        })
    }

    /// The decoder of a typed node that is not read directly: the whole node is checked first (so the errors are
    /// the check's, as the engine gives them), then a tuple reads each position, a refinement (`allOf`) reads the
    /// value with its typed part, an `enum` of numbers or booleans reads the value as their kind. None of these
    /// reads can fail after the check. `None` for any other node.
    fn read_after_check(&mut self, node: &Node) -> Result<Option<Code>, EmitError> {
        enum Read<'n> {
            Tuple(&'n [Node]),
            Part(&'n Node),
            Kind(ValueTy),
        }
        let read = match &node.shape {
            Shape::Array(a) => tuple_positions(a).map(Read::Tuple),
            Shape::AllOf(parts) => self.typed_part(parts).map(|(p, _)| Read::Part(p)),
            Shape::Enum(values) => enum_ty(values).map(Read::Kind),
            _ => None,
        };
        let Some(read) = read else { return Ok(None) };
        let check = self.check(node)?.body();
        let read = match read {
            Read::Tuple(positions) => {
                let mut reads = Vec::new();
                for (i, p) in positions.iter().enumerate() {
                    let d = self.decode(p)?.func();
                    let boxed = self.boxed_position(p).then(|| quote!(.map(::std::boxed::Box::new)));
                    reads.push(quote!((#d)(&items[#i], at.index(#i))#boxed?));
                }
                // The error type named: a union calls this closure where nothing else says it (`if let Ok(x)`).
                quote! {
                    let items = rt::array_items(v, at)?;
                    ::std::result::Result::<_, Error>::Ok((#(#reads,)*))
                }
            }
            Read::Part(part) => self.decode(part)?.body(),
            Read::Kind(ValueTy::Num(t)) => {
                let r = Self::num_rule(&NumberShape { integer: t != NumTy::F64, ..NumberShape::default() });
                match t {
                    NumTy::U64 => quote!(rt::uint(v, at, &#r)),
                    NumTy::I64 => quote!(rt::int(v, at, &#r)),
                    NumTy::F64 => quote!(rt::number(v, at, &#r)),
                }
            }
            Read::Kind(ValueTy::Bool) => quote!(rt::boolean(v, at)),
        };
        Ok(Some(Code::Body(quote!({ #check?; #read }))))
    }

    /// The check of a node (a `rt::Check`: it keeps nothing).
    ///
    /// # Errors
    /// As [`Self::decode`].
    pub(crate) fn check(&mut self, node: &Node) -> Result<Code, EmitError> {
        Ok(match &node.shape {
            Shape::Any => Code::Path(quote!(rt::any)),
            Shape::Never => Code::Path(quote!(rt::never)),
            Shape::Ref(id) => {
                self.undefined(*id)?;
                let f = self.final_id(*id);
                let i = self.type_ident(f);
                Code::Path(quote!(<#i as rt::Decode>::check))
            }
            Shape::Null => Code::Path(quote!(rt::null)),
            Shape::Boolean => Code::Body(quote!(rt::boolean(v, at).map(drop))),
            Shape::String(s) => {
                let r = self.str_rule(s);
                Code::Body(quote!(rt::check_string(v, at, &#r)))
            }
            Shape::Number(n) => {
                let r = Self::num_rule(n);
                Code::Body(quote!(rt::check_number(v, at, &#r)))
            }
            Shape::Const(c) => {
                let l = self.lit(c);
                Code::Body(quote!(rt::constant(v, at, &#l)))
            }
            Shape::Enum(values) => {
                let strings = values.iter().all(Value::is_string);
                let ls: Vec<Ident> = values.iter().map(|x| self.lit(x)).collect();
                Code::Body(quote!(rt::one_of_values(v, at, &[#(&#ls),*], #strings)))
            }
            Shape::Array(a) => {
                let prefix = a.prefix.iter().map(|n| self.check(n).map(|c| c.func())).collect::<Result<Vec<_>, _>>()?;
                let rest = match &a.items {
                    Some(n) => {
                        let c = self.check(n)?.func();
                        quote!(::std::option::Option::Some(#c))
                    }
                    None => quote!(::std::option::Option::None),
                };
                let r = self.arr_rule(a)?;
                Code::Body(quote!(rt::tuple(v, at, &#r, &[#(#prefix),*], #rest)))
            }
            Shape::Object(o) if is_bare_map(o) => Code::Body(quote!(rt::object(v, at).map(drop))),
            // How an evaluation plan tests a union member: its tag alone.
            Shape::Object(o) => match crate::ir::evaluation::tag_test(o) {
                Some((name, tag)) => {
                    let (name, l) = (lit(name), self.lit(tag));
                    Code::Body(quote!(rt::object(v, at).and_then(|o| match o.get(#name) {
                        ::std::option::Option::Some(x) => rt::constant(x, at, &#l),
                        ::std::option::Option::None => rt::never(v, at),
                    })))
                }
                None => return Err(EmitError::at(&node.origin, "an object or a union that is not a named type")),
            },
            Shape::Union(_) => {
                return Err(EmitError::at(&node.origin, "an object or a union that is not a named type"))
            }
            Shape::Nullable(inner) => {
                let c = self.check(inner)?.func();
                Code::Body(quote!(rt::check_nullable(v, at, #c)))
            }
            Shape::Kinds(members) => {
                let mut arms = Vec::new();
                let mut words = Vec::new();
                for mb in members {
                    words.push(self.m.kind_word(&mb.shape));
                    let Some(k) = kind_of(self.m, &mb.shape) else { continue };
                    let c = self.check(mb)?.func();
                    arms.push(quote!((rt::Kind::#k, #c)));
                }
                let expected = lit(&words.join(" or "));
                Code::Body(quote!(rt::kinds(v, at, &[#(#arms),*], #expected)))
            }
            Shape::AllOf(ms) | Shape::AnyOf(ms) | Shape::OneOf(ms) => {
                let cs = ms.iter().map(|n| self.check(n).map(|c| c.func())).collect::<Result<Vec<_>, _>>()?;
                let f = match &node.shape {
                    Shape::AllOf(_) => quote!(rt::all_of),
                    Shape::AnyOf(_) => quote!(rt::any_of),
                    _ => quote!(rt::one_of),
                };
                Code::Body(quote!(#f(v, at, &[#(#cs),*])))
            }
            Shape::Not(inner) => {
                let c = self.check(inner)?.func();
                Code::Body(quote!(rt::not(v, at, #c)))
            }
            Shape::Cond { cond, then, otherwise } => {
                let c = self.check(cond)?.func();
                let mut branch = |b: &Option<Box<Node>>| -> Result<TokenStream, EmitError> {
                    Ok(match b {
                        Some(n) => {
                            let c = self.check(n)?.func();
                            quote!(::std::option::Option::Some(#c))
                        }
                        None => quote!(::std::option::Option::None),
                    })
                };
                let (t, e) = (branch(then)?, branch(otherwise)?);
                Code::Body(quote!(rt::cond(v, at, #c, #t, #e)))
            }
            Shape::Unevaluated { inner, rest, items } => {
                let c = self.check(inner)?.func();
                let ev = self.m.evaluation(inner);
                let plan = self.eval_plan(&ev)?;
                let r = match rest.shape {
                    // A property `false` refuses is an unknown property; an item gets `false`'s own error.
                    Shape::Never if !items => quote!(::std::option::Option::None),
                    _ => {
                        let c = self.check(rest)?.func();
                        quote!(::std::option::Option::Some(#c))
                    }
                };
                Code::Body(quote!(rt::unevaluated(v, at, #c, &#plan, #r, #items)))
            }
            Shape::Dependent { property, then } => {
                let c = self.check(then)?.func();
                let p = lit(property);
                Code::Body(quote!(rt::dependent_schema(v, at, #p, #c)))
            }
        })
    }

    // ---- items ----

    /// Every item of the output: the runtime's place, the `Rule` catalogue, the envelope API, the types.
    /// The module's items, handed to `part` a part at a time (the head, each type, the statics) to be rendered at
    /// once: one token tree of a few thousand types held hundreds of megabytes once parsed.
    pub(crate) fn items(
        &mut self,
        part: &mut dyn FnMut(TokenStream) -> Result<(), EmitError>,
    ) -> Result<(), EmitError> {
        let mut out = TokenStream::new();
        let patterns = self.has_patterns();
        match self.opts.runtime {
            Runtime::CrateFiles => {
                let regex = if patterns {
                    quote!(
                        mod rt_regex;
                    )
                } else {
                    TokenStream::new()
                };
                let upgrade = if crate::upgrade::Plan::of(self.m).is_some_and(|p| !p.is_empty()) {
                    quote!(
                        pub mod upgrade;
                    )
                } else {
                    TokenStream::new()
                };
                let stream = if self.m.protocol.is_some() {
                    quote!(
                        #[allow(dead_code)]
                        mod stream_machine;
                        pub mod stream;
                    )
                } else {
                    TokenStream::new()
                };
                out.extend(quote! {
                    mod rt;
                    #regex
                    #upgrade
                    #stream
                    pub use rt::{Error, Extra};
                });
                out.extend(super::support::rule_tokens());
            }
            Runtime::Inline => {
                out.extend(quote!(
                    pub use rt::{Error, Extra};
                ));
                out.extend(super::support::rule_tokens());
            }
            Runtime::Shared => {
                out.extend(quote! {
                    #[allow(unused_imports)]
                    use super::{rt, rt_regex, Rule};
                    #[allow(unused_imports)]
                    pub use super::rt::{Error, Extra};
                });
            }
        }
        if let Some(p) = &self.m.protocol {
            out.extend(super::protocol::functions(self, p)?);
        }
        part(out)?;
        for i in 0..self.m.types.len() {
            part(self.type_item(TypeId(i))?)?;
        }
        let (lits, pats) = (&self.lit_items, &self.pattern_items);
        part(quote!(#(#lits)* #(#pats)*))
    }

    fn type_item(&mut self, id: TypeId) -> Result<TokenStream, EmitError> {
        let t = self.m.ty(id);
        let mut tokens = match (&t.node.shape, self.forms[id.0]) {
            (Shape::Object(o), Form::Struct) => self.struct_item(id, o, false)?,
            (_, Form::Merged) => {
                let o = self.merged[id.0]
                    .clone()
                    .ok_or_else(|| EmitError::Unsupported("a merged type without its object".into()))?;
                self.struct_item(id, &o, true)?
            }
            (Shape::Union(u), Form::Union) => self.union_item(id, u)?,
            (Shape::AnyOf(ms) | Shape::OneOf(ms) | Shape::Kinds(ms), Form::Choice) => self.choice_item(id, ms)?,
            (Shape::Enum(values), Form::StrEnum) => self.enum_item(id, values)?,
            (_, Form::Alias(target)) => {
                self.undefined(target)?;
                let (i, target) = (self.type_ident(id), self.type_ident(target));
                let docs = self.type_docs(id);
                quote!(#docs pub type #i = #target;)
            }
            _ => self.newtype_item(id)?,
        };
        if self.opts.schemars && !matches!(self.forms[id.0], Form::Alias(_)) {
            tokens.extend(super::schemars::json_schema_impl(self, id));
        }
        let name = self.type_ident(id);
        for a in &t.aliases {
            let alias = ident(&a.rust);
            let docs = doc_attrs(&format!(
                "[`{}`] under another name (`x-aliases`: a name an earlier version of the package used).",
                t.names.rust
            ));
            tokens.extend(quote!(#docs pub type #alias = #name;));
        }
        Ok(tokens)
    }

    /// The doc attributes of a type: its description (or where it is defined) and its examples.
    fn type_docs(&self, id: TypeId) -> TokenStream {
        let t = self.m.ty(id);
        let fallback = format!("`{}`, defined at `{}#{}`.", t.names.base, t.origin.file, t.origin.pointer);
        let text =
            crate::emit::described(self.m.own_title(id), t.description.as_deref(), fallback, &t.annotations.notes());
        let mut docs = doc_attrs(&text);
        if let Some(p) = &self.m.protocol {
            if let Some(ev) = p.events.iter().find(|e| e.ty == id) {
                docs = doc_attrs(&format!("`{}`: {text}\n\nSent by: {}.", ev.tag, ev.roles.join(", ")));
            }
        }
        if self.m.protocol.as_ref().is_some_and(|p| p.envelope == id) {
            let env = self.type_ident(id);
            docs.extend(doc_attrs(&format!(
                "\nA value of this type is always valid: it comes from [`parse_envelope`], `Deserialize`, \
                 [`{env}::from_value`] or [`{env}::create`], which all check the shape and the role rules; its \
                 fields are read through getters."
            )));
        }
        if !t.examples.is_empty() {
            docs.extend(doc_attrs("\nExample (on the wire):"));
            let code: Vec<String> = t.examples.iter().map(Value::to_string).collect();
            docs.extend(doc_code_block("json", &code.join("\n")));
        }
        docs
    }

    fn from_value_fn() -> TokenStream {
        quote! {
            /// Checks a JSON value and converts it (unknown properties in the value's own key order).
            ///
            /// # Errors
            /// The first rule the value breaks, with its pointer.
            pub fn from_value(value: &::serde_json::Value) -> ::std::result::Result<Self, Error> {
                rt::from_value(value)
            }

            /// Checks this value as its `Deserialize` checks the JSON it writes: what a value built in code must
            /// meet before it is sent (the constructors and fields take what the Rust types allow, which the
            /// schema may refine: lengths, bounds, patterns, unique items).
            ///
            /// # Errors
            /// The first rule the value breaks, with its pointer.
            pub fn validate(&self) -> ::std::result::Result<(), Error> {
                rt::from_value::<Self>(&rt::to_json(self)?).map(|_| ())
            }
        }
    }

    /// The impls every item has alike: `Deserialize` through its checks, and `rt::Wire` as its `Serialize`
    /// writes it (its parts are written through `rt::W`).
    fn shared_impls(ty: &Ident) -> TokenStream {
        quote! {
            impl<'de> ::serde::Deserialize<'de> for #ty {
                fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> ::std::result::Result<Self, D::Error> {
                    rt::deserialize(d)
                }
            }

            impl rt::Wire for #ty {}
        }
    }

    /// The plan of an object's properties: Rust field names (unique), constants, boxing.
    pub(crate) fn field_plans<'o>(&self, id: TypeId, o: &'o ObjectShape) -> Vec<FieldPlan<'o>> {
        let mut names = Names::default();
        o.fields
            .iter()
            .map(|f| {
                let ident = names.unique(field_name(&f.name));
                let kind = match self.m.resolve(&f.node.shape) {
                    Shape::Const(c) if f.required => FieldKind::ConstRequired(c.clone()),
                    Shape::Const(c) => FieldKind::ConstOptional(c.clone()),
                    _ => {
                        let mut refs = BTreeSet::new();
                        self.inline_refs(&f.node, &mut refs);
                        let boxed =
                            refs.iter().any(|r| *r == id.0 || self.reach.get(*r).is_some_and(|s| s.contains(&id.0)));
                        FieldKind::Value { boxed }
                    }
                };
                FieldPlan { field: f, ident, kind }
            })
            .collect()
    }

    /// The name of the `extra` field: `extra`, unless a property took it.
    pub(crate) fn extra_ident(plans: &[FieldPlan<'_>]) -> Ident {
        let taken: Vec<String> = plans.iter().map(|p| p.ident.to_string()).collect();
        Names::reserving(taken.iter().map(String::as_str)).unique("extra".to_string())
    }

    /// The Rust type of a stored property.
    pub(crate) fn field_ty(&self, p: &FieldPlan<'_>) -> Option<TokenStream> {
        match &p.kind {
            FieldKind::ConstRequired(_) => None,
            FieldKind::ConstOptional(_) => Some(quote!(bool)),
            FieldKind::Value { boxed } => {
                let mut t = self.ty(&p.field.node);
                if *boxed {
                    t = quote!(::std::boxed::Box<#t>);
                }
                Some(if p.field.required { t } else { quote!(::std::option::Option<#t>) })
            }
        }
    }

    /// The Rust type of the `extra` field, if the object has one.
    pub(crate) fn extra_ty(&self, o: &ObjectShape) -> Option<TokenStream> {
        match extra_kind(o) {
            ExtraKind::None => None,
            ExtraKind::Values => Some(quote!(Extra<::serde_json::Value>)),
            ExtraKind::Typed(n) => {
                let t = self.ty(n);
                Some(quote!(Extra<#t>))
            }
        }
    }

    /// The statements that read an object's properties in the engine's order (over `obj`, `at` and `v`), and the
    /// struct's field initializers: each value decoded and bound to a numbered local, not to its field's name (a
    /// property named `at`, `v`, `obj` or `kept` would shadow the decoder's own locals); with `check_only`, each
    /// value checked and nothing kept (the struct's `check`).
    fn object_reads(
        &mut self,
        plans: &[FieldPlan<'_>],
        o: &ObjectShape,
        extra_i: &Ident,
        check_only: bool,
    ) -> Result<(Vec<TokenStream>, Vec<TokenStream>), EmitError> {
        let mut stmts = Vec::new();
        let mut inits = Vec::new();
        for (n, p) in plans.iter().enumerate() {
            let name = lit(&p.field.name);
            let i = &p.ident;
            let local = format_ident!("field_{n}");
            match &p.kind {
                FieldKind::ConstRequired(c) => {
                    let l = self.lit(c);
                    stmts.push(quote!(obj.required(at, #name, |v, at| rt::constant(v, at, &#l))?;));
                }
                FieldKind::ConstOptional(c) if check_only => {
                    let l = self.lit(c);
                    stmts.push(quote!(obj.optional(at, #name, |v, at| rt::constant(v, at, &#l))?;));
                }
                FieldKind::ConstOptional(c) => {
                    let l = self.lit(c);
                    stmts.push(
                        quote!(let #local = obj.optional(at, #name, |v, at| rt::constant(v, at, &#l))?.is_some();),
                    );
                    inits.push(quote!(#i: #local));
                }
                FieldKind::Value { .. } if check_only => {
                    let c = self.check(&p.field.node)?.func();
                    let getter = if p.field.required { quote!(required) } else { quote!(optional) };
                    stmts.push(quote!(obj.#getter(at, #name, #c)?;));
                }
                FieldKind::Value { boxed } => {
                    let mut d = self.decode(&p.field.node)?;
                    if *boxed {
                        let b = d.body();
                        d = Code::Body(quote!(#b.map(::std::boxed::Box::new)));
                    }
                    let f = d.func();
                    let getter = if p.field.required { quote!(required) } else { quote!(optional) };
                    stmts.push(quote!(let #local = obj.#getter(at, #name, #f)?;));
                    inits.push(quote!(#i: #local));
                }
            }
        }
        if !o.required_only.is_empty() {
            let names = o.required_only.iter().map(|n| lit(n));
            stmts.push(quote!(rt::require(obj, at, &[#(#names),*])?;));
        }
        if !o.dependent_required.is_empty() {
            let deps = o.dependent_required.iter().map(|(k, ds)| {
                let k = lit(k);
                let ds = ds.iter().map(|d| lit(d));
                quote!((#k, &[#(#ds),*]))
            });
            stmts.push(quote!(rt::dependent(obj, at, &[#(#deps),*])?;));
        }
        let declared: Vec<Literal> = o.fields.iter().map(|f| lit(&f.name)).collect();
        let mut patterns = Vec::new();
        for (p, n) in &o.pattern_properties {
            let pi = self.pattern(p);
            let c = self.check(n)?.func();
            patterns.push(quote!((&#pi, #c)));
        }
        let rest = match &o.additional {
            Additional::Closed => {
                let removed = o.removed.iter().map(|r| {
                    let (a, b, c) = (lit(&r.name), lit(&r.replacement), lit(&r.owner));
                    quote!((#a, #b, #c))
                });
                quote!(rt::Rest::Closed { removed: &[#(#removed),*] })
            }
            Additional::Open => quote!(rt::Rest::Open),
            Additional::Strip => quote!(rt::Rest::Strip),
            Additional::Schema(n) => {
                let c = self.check(n)?.func();
                quote!(rt::Rest::Schema(#c))
            }
        };
        // A check keeps nothing: `others` has checked the values an `extra` map would keep (checking them again,
        // at every level, doubled its time with each).
        let kind = if check_only { ExtraKind::None } else { extra_kind(o) };
        let needs_others = !matches!(o.additional, Additional::Strip) || !o.pattern_properties.is_empty();
        if needs_others {
            let call = quote!(rt::others(obj, at, &[#(#declared),*], &[#(#patterns),*], &#rest)?);
            if matches!(kind, ExtraKind::None) {
                stmts.push(quote!(#call;));
            } else {
                stmts.push(quote!(let kept = #call;));
            }
        }
        if let Some(n) = &o.property_names {
            let c = self.check(n)?.func();
            stmts.push(quote!(rt::property_names(obj, at, #c)?;));
        }
        if o.min_properties.is_some() || o.max_properties.is_some() {
            let (min, max) = (opt_u64(o.min_properties), opt_u64(o.max_properties));
            stmts.push(quote!(rt::property_counts(obj, at, #min, #max)?;));
        }
        match kind {
            ExtraKind::None => {}
            ExtraKind::Values => {
                stmts.push(quote!(let field_extra = rt::extra_values(&kept);));
                inits.push(quote!(#extra_i: field_extra));
            }
            ExtraKind::Typed(n) => {
                let d = self.decode(n)?.func();
                stmts.push(quote!(let field_extra = rt::extra(&kept, at, #d)?;));
                inits.push(quote!(#extra_i: field_extra));
            }
        }
        Ok((stmts, inits))
    }

    /// The `check` of a type's `Decode`, which builds nothing. A check that reaches the type through a reference
    /// (`<T as rt::Decode>::check`) runs it, so checking a value costs one pass over it; through the decoder, a
    /// decoder that checks its whole node before it reads its parts (a choice, a merged struct, a refinement)
    /// decoded each part twice, at every level of the value, in time exponential in its depth (a 58-byte value of
    /// the schema of any JSON value took 5 s). A choice's, a merged struct's and a newtype's is their node's check
    /// (this); a struct's is its property reads with checks for decoders, a union's its dispatch to its members'
    /// checks (built beside their decoders); the envelope keeps the default, its decoder: the role rules.
    fn check_fn(&mut self, id: TypeId) -> Result<TokenStream, EmitError> {
        let m = self.m;
        let body = self.check(&m.ty(id).node)?.body();
        Ok(Self::check_method(&body))
    }

    /// `Decode::check` with `body` (over `v` and `at`).
    fn check_method(body: &TokenStream) -> TokenStream {
        quote! {
            fn check(v: &rt::Json, at: rt::Ptr<'_>) -> ::std::result::Result<(), Error> {
                #body
            }
        }
    }

    /// A struct and its decoder and serializer. `checked_first`, for a [`Form::Merged`] type: the check of the whole
    /// type runs first, and the struct's own decoder then only reads the fields (it cannot fail after it).
    fn struct_item(&mut self, id: TypeId, o: &ObjectShape, checked_first: bool) -> Result<TokenStream, EmitError> {
        let ty = self.type_ident(id);
        let docs = self.type_docs(id);
        let plans = self.field_plans(id, o);
        let envelope = self.m.protocol.as_ref().is_some_and(|p| p.envelope == id);
        let vis = if envelope { TokenStream::new() } else { quote!(pub) };
        let extra_i = Self::extra_ident(&plans);
        let extra_ty = self.extra_ty(o);

        // The struct.
        let mut fields = Vec::new();
        for p in &plans {
            let Some(fty) = self.field_ty(p) else { continue };
            let i = &p.ident;
            let mut text = crate::emit::field_text(p.field);
            if let FieldKind::ConstOptional(c) = &p.kind {
                text.push_str(&format!("\n\nWhether the property is present (it is always `{c}`)."));
            }
            if !p.field.required && matches!(p.kind, FieldKind::Value { .. }) && self.is_nullable(&p.field.node) {
                text.push_str("\n\n`None`: absent; `Some(None)`: `null`.");
            }
            let d = doc_attrs(&text);
            fields.push(quote!(#d #vis #i: #fty));
        }
        if let Some(et) = &extra_ty {
            let d = doc_attrs("The properties the schema does not declare, in input order.");
            fields.push(quote!(#d #vis #extra_i: #et));
        }
        let all_optional = plans.iter().all(|p| !p.field.required || matches!(p.kind, FieldKind::ConstRequired(_)));
        let default = if all_optional && !envelope { quote!(, ::std::default::Default) } else { TokenStream::new() };

        // The decoder, in the engine's order.
        let (stmts, inits) = self.object_reads(&plans, o, &extra_i, false)?;
        let mut roles = TokenStream::new();
        let mut role_fn = TokenStream::new();
        if envelope {
            if let Some(p) = &self.m.protocol {
                if let Some(f) = super::protocol::check_roles_fn(self, p)? {
                    roles = quote!(Self::check_roles(obj, at)?;);
                    role_fn = f;
                }
            }
        }

        // The serializer: declared properties in schema order, then the kept unknown ones.
        let mut writes = Vec::new();
        for p in &plans {
            let name = lit(&p.field.name);
            let i = &p.ident;
            writes.push(match &p.kind {
                FieldKind::ConstRequired(c) => {
                    let v = self.const_value(c);
                    quote!(map.serialize_entry(#name, #v)?;)
                }
                FieldKind::ConstOptional(c) => {
                    let v = self.const_value(c);
                    quote!(if self.#i { map.serialize_entry(#name, #v)?; })
                }
                FieldKind::Value { .. } if p.field.required => quote!(map.serialize_entry(#name, &rt::W(&self.#i))?;),
                FieldKind::Value { .. } => {
                    quote!(if let ::std::option::Option::Some(x) = &self.#i { map.serialize_entry(#name, &rt::W(x))?; })
                }
            });
        }
        if extra_ty.is_some() {
            let declared = o.fields.iter().map(|f| lit(&f.name));
            writes.push(quote!(rt::write_extra(&mut map, &self.#extra_i, &[#(#declared),*])?;));
        }
        let from_value = if envelope { TokenStream::new() } else { Self::from_value_fn() };
        let ctors =
            if envelope { TokenStream::new() } else { self.constructors(&ty, &plans, &extra_i, extra_ty.is_some()) };
        let inherent = if from_value.is_empty() && role_fn.is_empty() && ctors.is_empty() {
            TokenStream::new()
        } else {
            quote!(impl #ty { #ctors #from_value #role_fn })
        };
        let shared = Self::shared_impls(&ty);
        let obj_binding = if stmts.is_empty() && roles.is_empty() { quote!(_obj) } else { quote!(obj) };
        let check = checked_first.then(|| quote!(Self::check(v, at)?;));
        let check_fn = if envelope {
            TokenStream::new()
        } else if checked_first {
            self.check_fn(id)?
        } else {
            let (stmts, _) = self.object_reads(&plans, o, &extra_i, true)?;
            let obj = if stmts.is_empty() { quote!(_obj) } else { quote!(obj) };
            Self::check_method(&quote! {
                let #obj = rt::object(v, at)?;
                #(#stmts)*
                ::std::result::Result::Ok(())
            })
        };
        // A closed object with no properties writes nothing into its map (`mut` would be unused: a warning).
        let map_binding = if writes.is_empty() { quote!(map) } else { quote!(mut map) };
        Ok(quote! {
            #docs
            #[derive(Debug, Clone, PartialEq #default)]
            pub struct #ty {
                #(#fields,)*
            }

            #inherent

            impl rt::Decode for #ty {
                fn decode(v: &rt::Json, at: rt::Ptr<'_>) -> ::std::result::Result<Self, Error> {
                    #check
                    let #obj_binding = rt::object(v, at)?;
                    #(#stmts)*
                    #roles
                    ::std::result::Result::Ok(Self { #(#inits),* })
                }

                #check_fn
            }

            impl ::serde::Serialize for #ty {
                fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                    use ::serde::ser::SerializeMap as _;
                    let #map_binding = s.serialize_map(::std::option::Option::None)?;
                    #(#writes)*
                    map.end()
                }
            }

            #shared
        })
    }

    /// Whether a node accepts `null` as its `None` (its Rust type is an `Option`).
    /// How a constructor takes a stored value: its parameter type and the expression that stores `x`. Strings
    /// take `impl Into<String>`; a boxed value is boxed here.
    fn param(&self, p: &FieldPlan<'_>, x: &Ident) -> (TokenStream, TokenStream) {
        let boxed = matches!(p.kind, FieldKind::Value { boxed: true });
        let (ty, mut value) = if self.is_string(&p.field.node) {
            (quote!(impl ::std::convert::Into<::std::string::String>), quote!(#x.into()))
        } else {
            (self.ty(&p.field.node), quote!(#x))
        };
        if boxed {
            value = quote!(::std::boxed::Box::new(#value));
        }
        (ty, value)
    }

    /// The parameters of `new`: one per required stored property, in schema order.
    fn new_params(&self, plans: &[FieldPlan<'_>]) -> Vec<(Ident, TokenStream)> {
        plans
            .iter()
            .filter(|p| p.field.required && matches!(p.kind, FieldKind::Value { .. }))
            .map(|p| (p.ident.clone(), self.param(p, &p.ident).0))
            .collect()
    }

    /// `new` (the required properties, in schema order; everything optional absent) and one `with_<field>` per
    /// optional property, so a value is one expression: `Text::new("hi").with_thinking(true)`.
    fn constructors(&self, ty: &Ident, plans: &[FieldPlan<'_>], extra_i: &Ident, extra: bool) -> TokenStream {
        let mut params = Vec::new();
        let mut inits = Vec::new();
        let mut withs = Vec::new();
        for p in plans {
            let i = &p.ident;
            let with = format_ident!("with_{}", i.to_string().trim_start_matches("r#"));
            let doc = doc_attrs(&crate::emit::setter_text(&p.field.name));
            match &p.kind {
                FieldKind::ConstRequired(_) => {}
                FieldKind::ConstOptional(c) => {
                    inits.push(quote!(#i: false));
                    let doc = doc_attrs(&format!("Sends `{}` (always `{c}`) or leaves it out.", p.field.name));
                    withs.push(quote! {
                        #doc
                        #[must_use]
                        pub fn #with(mut self, present: bool) -> Self {
                            self.#i = present;
                            self
                        }
                    });
                }
                FieldKind::Value { .. } if p.field.required => {
                    let (pty, value) = self.param(p, i);
                    params.push(quote!(#i: #pty));
                    // `Self { x }` rather than `Self { x: x }` (clippy's redundant_field_names).
                    inits.push(if *i == value.to_string() { quote!(#i) } else { quote!(#i: #value) });
                }
                FieldKind::Value { .. } => {
                    let (pty, value) = self.param(p, i);
                    inits.push(quote!(#i: ::std::option::Option::None));
                    withs.push(quote! {
                        #doc
                        #[must_use]
                        pub fn #with(mut self, #i: #pty) -> Self {
                            self.#i = ::std::option::Option::Some(#value);
                            self
                        }
                    });
                }
            }
        }
        if extra {
            inits.push(quote!(#extra_i: ::std::default::Default::default()));
        }
        // "An `Image`", "A `Usage`" (a U is mostly said "you").
        let article = if ty.to_string().starts_with(['A', 'E', 'I', 'O']) { "An" } else { "A" };
        let doc = doc_attrs(&format!(
            "{article} `{ty}` with the required properties given and every optional one absent (set them with the \
             `with_` methods)."
        ));
        quote! {
            #doc
            #[allow(clippy::too_many_arguments)]
            pub fn new(#(#params),*) -> Self {
                Self { #(#inits),* }
            }
            #(#withs)*
        }
    }

    fn is_nullable(&self, node: &Node) -> bool {
        match &node.shape {
            Shape::Nullable(_) => true,
            Shape::Ref(id) => {
                let f = self.final_id(*id);
                self.is_inlined(f) && self.is_nullable(&self.m.ty(f).node)
            }
            _ => false,
        }
    }

    /// A constant as a `&impl Serialize` expression.
    fn const_value(&mut self, c: &Value) -> TokenStream {
        match c {
            Value::String(s) => {
                let l = lit(s);
                quote!(#l)
            }
            Value::Bool(b) => quote!(&#b),
            other => {
                let l = self.lit(other);
                quote!(&#l)
            }
        }
    }

    fn union_item(&mut self, id: TypeId, u: &UnionShape) -> Result<TokenStream, EmitError> {
        let ty = self.type_ident(id);
        let docs = self.type_docs(id);
        let protocol = self.m.protocol.as_ref().filter(|p| p.union == id);
        let mut variants = Vec::new();
        let mut names = Vec::new();
        let mut tags = Vec::new();
        let (mut arms, mut check_arms) = (Vec::new(), Vec::new());
        for (k, mb) in u.members.iter().enumerate() {
            self.undefined(mb.ty)?;
            let f = self.final_id(mb.ty);
            let v = self.type_ident(f);
            let text = match (&mb.tag, protocol.and_then(|p| p.events.iter().find(|e| e.ty == mb.ty))) {
                (_, Some(ev)) => format!("`{}` (sent by {}).", ev.tag, ev.roles.join(", ")),
                (Value::String(s), None) => format!("`{s}`."),
                (other, None) => format!("`{other}`."),
            };
            let d = doc_attrs(&text);
            variants.push(quote!(#d #v(#v)));
            tags.push(tag_tokens(&mb.tag).ok_or_else(|| {
                EmitError::at(
                    &self.m.ty(mb.ty).origin,
                    format!("discriminator value {} is not a string, a boolean or an integer", mb.tag),
                )
            })?);
            let k = Literal::usize_unsuffixed(k);
            arms.push(quote!(::std::option::Option::Some(#k) => <#v as rt::Decode>::decode(v, at).map(Self::#v),));
            check_arms.push(quote!(::std::option::Option::Some(#k) => <#v as rt::Decode>::check(v, at),));
            names.push(v);
        }
        let disc = lit(&u.discriminator);
        let removed = u.removed.iter().map(|(a, b)| {
            let (a, b) = (lit(a), lit(b));
            quote!((#a, #b))
        });
        let events = u.events;
        let expected = lit(&u.expected_tag());
        // The discriminator of a value, as the wire has it.
        // Typed by what every member's tag is: a string, a boolean, an `i64`; tags of several kinds (or integers
        // past `i64`) are JSON values.
        let all = |f: fn(&Value) -> bool| !u.members.is_empty() && u.members.iter().all(|mb| f(&mb.tag));
        let tag_fn = match () {
            _ if all(Value::is_string) => {
                let strs: Vec<Literal> = u.members.iter().map(|mb| lit(mb.tag.as_str().unwrap_or_default())).collect();
                quote! {
                    /// Every discriminator value, in schema order.
                    pub const TAGS: &'static [&'static str] = &[#(#strs),*];

                    /// The discriminator value of this member.
                    pub fn tag(&self) -> &'static str {
                        match self {
                            #(Self::#names(_) => #strs,)*
                        }
                    }
                }
            }
            _ if all(Value::is_boolean) => {
                let bs = u.members.iter().map(|mb| mb.tag.as_bool().unwrap_or_default());
                quote! {
                    /// The discriminator value of this member.
                    pub fn tag(&self) -> bool {
                        match self {
                            #(Self::#names(_) => #bs,)*
                        }
                    }
                }
            }
            _ if all(Value::is_i64) => {
                let is = u.members.iter().map(|mb| Literal::i64_suffixed(mb.tag.as_i64().unwrap_or_default()));
                quote! {
                    /// The discriminator value of this member.
                    pub fn tag(&self) -> i64 {
                        match self {
                            #(Self::#names(_) => #is,)*
                        }
                    }
                }
            }
            _ => {
                let vs = u.members.iter().map(|mb| match &mb.tag {
                    Value::Bool(b) => quote!(::serde_json::Value::Bool(#b)),
                    Value::String(t) => {
                        let t = lit(t);
                        quote!(::serde_json::Value::from(#t))
                    }
                    // A union's tags are strings, booleans and integers ([`tag_tokens`]).
                    n => match (n.as_i64(), n.as_u64()) {
                        (Some(i), _) => {
                            let i = Literal::i64_suffixed(i);
                            quote!(::serde_json::Value::from(#i))
                        }
                        (_, Some(x)) => {
                            let x = Literal::u64_suffixed(x);
                            quote!(::serde_json::Value::from(#x))
                        }
                        _ => quote!(::serde_json::Value::Null),
                    },
                });
                quote! {
                    /// The discriminator value of this member (the members' tags are of several kinds).
                    pub fn tag(&self) -> ::serde_json::Value {
                        match self {
                            #(Self::#names(_) => #vs,)*
                        }
                    }
                }
            }
        };
        // One shortcut per member: `Event::text("hi")` is `Event::Text(Text::new("hi"))`.
        let mut taken = Names::reserving(["tag", "from_value", "new", "validate"]);
        let mut shortcuts = Vec::new();
        for (mb, v) in u.members.iter().zip(&names) {
            let f = self.final_id(mb.ty);
            let (Shape::Object(o), Some(Form::Struct)) = (&self.m.ty(f).node.shape, self.form(f)) else { continue };
            if self.m.protocol.as_ref().is_some_and(|p| p.envelope == f) {
                continue;
            }
            let fname = taken.unique(field_name(&v.to_string()));
            let params = self.new_params(&self.field_plans(f, o));
            let (pi, pt): (Vec<_>, Vec<_>) = params.into_iter().unzip();
            let doc = doc_attrs(&format!("`{ty}::{v}({v}::new(..))`: the member with its required properties."));
            shortcuts.push(quote! {
                #doc
                #[allow(clippy::too_many_arguments)]
                pub fn #fname(#(#pi: #pt),*) -> Self {
                    Self::#v(#v::new(#(#pi),*))
                }
            });
        }
        let froms = names.iter().map(|v| {
            quote! {
                impl ::std::convert::From<#v> for #ty {
                    fn from(value: #v) -> Self {
                        Self::#v(value)
                    }
                }
            }
        });
        let from_value = Self::from_value_fn();
        let shared = Self::shared_impls(&ty);
        // The dispatch on the discriminator, the same for the decoder and the check.
        let which = quote! {
            const TAGS: &[rt::Tag] = &[#(#tags),*];
            let obj = rt::object(v, at)?;
            let t = rt::tag(obj, at, #disc)?;
        };
        let fallback = quote!(_ => ::std::result::Result::Err(rt::bad_tag(at, #disc, t, TAGS, #expected, &[#(#removed),*], #events)),);
        let check_fn = Self::check_method(&quote! {
            #which
            match rt::which(t, TAGS) {
                #(#check_arms)*
                #fallback
            }
        });
        Ok(quote! {
            #docs
            ///
            /// Each variant holds the member's struct, which writes its own discriminator.
            #[derive(Debug, Clone, PartialEq)]
            #[allow(clippy::large_enum_variant)]
            pub enum #ty {
                #(#variants,)*
            }

            impl #ty {
                #tag_fn
                #(#shortcuts)*
                #from_value
            }

            impl rt::Decode for #ty {
                fn decode(v: &rt::Json, at: rt::Ptr<'_>) -> ::std::result::Result<Self, Error> {
                    #which
                    match rt::which(t, TAGS) {
                        #(#arms)*
                        #fallback
                    }
                }

                #check_fn
            }

            impl ::serde::Serialize for #ty {
                fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                    match self {
                        #(Self::#names(x) => x.serialize(s),)*
                    }
                }
            }

            #(#froms)*
            #shared
        })
    }

    /// The variant identifiers of a string enum, unique.
    pub(crate) fn enum_variants(values: &[Value]) -> Vec<Ident> {
        let mut names = Names::default();
        values.iter().map(|v| names.unique(variant_name(v.as_str().unwrap_or_default()))).collect()
    }

    fn enum_item(&mut self, id: TypeId, values: &[Value]) -> Result<TokenStream, EmitError> {
        let ty = self.type_ident(id);
        let docs = self.type_docs(id);
        let idents = Self::enum_variants(values);
        let strs: Vec<Literal> = values.iter().map(|v| lit(v.as_str().unwrap_or_default())).collect();
        let variant_docs = values.iter().map(|v| doc_attrs(&format!("`{}`", v.as_str().unwrap_or_default())));
        let allowed = lit(&crate::engine::value_list(values));
        let from_value = Self::from_value_fn();
        let shared = Self::shared_impls(&ty);
        Ok(quote! {
            #docs
            #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
            pub enum #ty {
                #(#variant_docs #idents,)*
            }

            impl #ty {
                /// Every value, in schema order.
                pub const ALL: &'static [#ty] = &[#(#ty::#idents),*];

                /// The value as it is written on the wire.
                pub fn as_str(self) -> &'static str {
                    match self {
                        #(#ty::#idents => #strs,)*
                    }
                }

                #from_value
            }

            impl ::std::fmt::Display for #ty {
                fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                    f.write_str(self.as_str())
                }
            }

            impl rt::Decode for #ty {
                fn decode(v: &rt::Json, at: rt::Ptr<'_>) -> ::std::result::Result<Self, Error> {
                    match rt::str_value(v, at)? {
                        #(#strs => ::std::result::Result::Ok(#ty::#idents),)*
                        other => ::std::result::Result::Err(rt::not_one_of(at, other, #allowed)),
                    }
                }
            }

            impl ::serde::Serialize for #ty {
                fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                    s.serialize_str(self.as_str())
                }
            }

            #shared
        })
    }

    /// An enum for an `anyOf`, `oneOf` or `type` list: a variant per alternative, named after its type or its
    /// kind. The decoder checks the whole node first (so its errors are the node's) and then keeps the first
    /// alternative that decodes the value, which one does after that check (of a `type` list, the value's kind).
    fn choice_item(&mut self, id: TypeId, members: &[Node]) -> Result<TokenStream, EmitError> {
        let ty = self.type_ident(id);
        let docs = self.type_docs(id);
        let check_fn = self.check_fn(id)?;
        let mut names = Names::default();
        let (mut variants, mut tries, mut writes) = (Vec::new(), Vec::new(), Vec::new());
        for (k, n) in members.iter().enumerate() {
            let base = match &n.shape {
                Shape::Ref(r) => self.m.ty(self.final_id(*r)).names.rust.clone(),
                other => kind_name(other).to_string(),
            };
            let v = names.unique(base);
            let d = doc_attrs(&format!("Alternative {k}: the value matches it and none before it."));
            // `null` is a unit variant; any other alternative holds its value.
            let unit = matches!(n.shape, Shape::Null);
            let (variant, build, write) = if unit {
                (quote!(#d #v), quote!(|()| Self::#v), quote!(Self::#v => s.serialize_unit(),))
            } else {
                let inner = self.ty(n);
                (quote!(#d #v(#inner)), quote!(Self::#v), quote!(Self::#v(x) => rt::Wire::wire(x, s),))
            };
            variants.push(variant);
            let dec = self.decode(n)?.func();
            // After the check, the last alternative holds when none before it does.
            tries.push(if k + 1 == members.len() {
                quote!((#dec)(v, at).map(#build))
            } else {
                quote! {
                    if let ::std::result::Result::Ok(x) = (#dec)(v, at) {
                        return ::std::result::Result::Ok((#build)(x));
                    }
                }
            });
            writes.push(write);
        }
        let from_value = Self::from_value_fn();
        let shared = Self::shared_impls(&ty);
        Ok(quote! {
            #docs
            #[derive(Debug, Clone, PartialEq)]
            pub enum #ty {
                #(#variants,)*
            }

            impl #ty {
                #from_value
            }

            impl rt::Decode for #ty {
                fn decode(v: &rt::Json, at: rt::Ptr<'_>) -> ::std::result::Result<Self, Error> {
                    Self::check(v, at)?;
                    #(#tries)*
                }

                #check_fn
            }

            impl ::serde::Serialize for #ty {
                fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                    match self {
                        #(#writes)*
                    }
                }
            }

            #shared
        })
    }

    fn newtype_item(&mut self, id: TypeId) -> Result<TokenStream, EmitError> {
        let check_fn = self.check_fn(id)?;
        let t = self.m.ty(id);
        let ty = self.type_ident(id);
        let docs = self.type_docs(id);
        let inner = self.ty(&t.node);
        let body = self.decode(&t.node)?.body();
        let from_value = Self::from_value_fn();
        let shared = Self::shared_impls(&ty);
        Ok(quote! {
            #docs
            #[derive(Debug, Clone, PartialEq)]
            pub struct #ty(
                /// The value.
                pub #inner,
            );

            impl #ty {
                /// Decodes the value a reference to this type holds.
                pub(crate) fn decode_inner(v: &rt::Json, at: rt::Ptr<'_>) -> ::std::result::Result<#inner, Error> {
                    #body
                }

                #from_value
            }

            impl rt::Decode for #ty {
                fn decode(v: &rt::Json, at: rt::Ptr<'_>) -> ::std::result::Result<Self, Error> {
                    Self::decode_inner(v, at).map(Self)
                }

                #check_fn
            }

            impl ::serde::Serialize for #ty {
                fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                    rt::Wire::wire(&self.0, s)
                }
            }

            #shared
        })
    }
}

/// The name of an alternative's variant after the kind of value its node holds.
fn kind_name(shape: &Shape) -> &'static str {
    match shape {
        Shape::Null => "Null",
        Shape::Boolean => "Boolean",
        Shape::String(_) => "String",
        Shape::Number(n) if n.integer => "Integer",
        Shape::Number(_) => "Number",
        Shape::Array(_) => "Array",
        Shape::Object(_) => "Object",
        Shape::Nullable(_) => "Nullable",
        Shape::Const(_) => "Const",
        Shape::Enum(_) => "Enum",
        _ => "Value",
    }
}

/// The object an `allOf` decodes into, when its parts (through references and nested `allOf`s) include
/// objects that declare different properties: their properties in part order, each required where any object
/// requires it, closed when an object is closed, otherwise keeping what none declares. `None` when no part is
/// an object or a property is declared twice. (A part that strips keys keeps the checked value, see [`Gen::new`].)
///
/// It says what the value holds, not what it must be: the decoder checks the whole `allOf` first (every
/// part, the ones that are no object too), so after that each field's value is what its object declared and
/// reading the fields cannot fail.
fn merged_object(m: &Model, kinds: &kinds::Kinds, parts: &[Node]) -> Option<ObjectShape> {
    /// The object parts, each with whether the part is only an object (else it is the object alternative of a
    /// part that takes other kinds too: an untyped `{"properties": ...}`, a `type` list, a nullable object).
    fn objects<'m>(
        m: &'m Model,
        parts: &'m [Node],
        out: &mut Vec<(&'m ObjectShape, bool)>,
        depth: usize,
    ) -> Option<()> {
        for part in parts {
            match &m.resolve_node(part).0.shape {
                Shape::Object(o) => out.push((o, true)),
                Shape::Kinds(kinds) => out.extend(kinds.iter().filter_map(|k| match &m.resolve_node(k).0.shape {
                    Shape::Object(o) => Some((o, false)),
                    _ => None,
                })),
                Shape::Nullable(inner) => {
                    if let Shape::Object(o) = &m.resolve_node(inner).0.shape {
                        out.push((o, false));
                    }
                }
                // A reference chain is at most `MAX_REF_DEPTH` long, so this bound is never reached.
                Shape::AllOf(inner) if depth < 256 => objects(m, inner, out, depth + 1)?,
                Shape::AllOf(_) => return None,
                _ => {}
            }
        }
        Some(())
    }
    let mut parts_found = Vec::new();
    objects(m, parts, &mut parts_found, 0)?;
    // Once one part is only an object, every value that passes is an object: a part that takes other kinds too
    // holds it by its object alternative, whose properties are then declared for it.
    if !parts_found.iter().any(|(_, only)| *only) {
        return None;
    }
    let found: Vec<&ObjectShape> = parts_found.into_iter().map(|(o, _)| o).collect();
    let mut fields: Vec<Field> = Vec::new();
    let mut overlap = false;
    for o in &found {
        for f in &o.fields {
            match fields.iter_mut().find(|x| x.name == f.name) {
                // Declared by an earlier part: its type (every part's schema of the property holds once the whole
                // `allOf` passes, so the first part's decoder cannot fail), required where any part requires it,
                // and without `null` where this part refuses it (an `Option` whose `None` no checker accepts).
                Some(first) => {
                    overlap = true;
                    first.required |= f.required;
                    if !kinds.node(&f.node).contains(kinds::KindSet::NULL) {
                        if let Shape::Nullable(inner) = &first.node.shape {
                            first.node = (**inner).clone();
                        }
                    }
                }
                None => fields.push(f.clone()),
            }
        }
    }
    // Parts that only refine the first one's properties (`{"$ref": base}` and `{"properties": {"id": {"minLength":
    // 2}}}`) keep its type (a refinement, below); a part that adds properties makes the struct hold them.
    if overlap && found.first().is_some_and(|o| o.fields.len() == fields.len()) {
        return None;
    }
    let mut required_only = Vec::new();
    for name in found.iter().flat_map(|o| &o.required_only) {
        match fields.iter_mut().find(|f| &f.name == name) {
            Some(f) => f.required = true,
            None if !required_only.contains(name) => required_only.push(name.clone()),
            None => {}
        }
    }
    let closed = found.iter().any(|o| o.additional == Additional::Closed && o.pattern_properties.is_empty());
    let additional = if closed { Additional::Closed } else { Additional::Open };
    Some(ObjectShape { required_only, additional, ..ObjectShape::open(fields) })
}

fn opt_u64(v: Option<u64>) -> TokenStream {
    match v {
        Some(n) => {
            let l = Literal::u64_unsuffixed(n);
            quote!(::std::option::Option::Some(#l))
        }
        None => quote!(::std::option::Option::None),
    }
}

/// An `f64` literal (the shortest text that reads back as the same double).
pub(crate) fn f64_lit(f: f64) -> TokenStream {
    let l = Literal::f64_suffixed(f.abs());
    if f.is_sign_negative() {
        quote!(-#l)
    } else {
        quote!(#l)
    }
}

fn opt_f64(v: Option<f64>) -> TokenStream {
    match v {
        Some(f) => {
            let l = f64_lit(f);
            quote!(::std::option::Option::Some(#l))
        }
        None => quote!(::std::option::Option::None),
    }
}

/// A union member's tag as `rt::Tag`.
fn tag_tokens(v: &Value) -> Option<TokenStream> {
    Some(match v {
        Value::String(s) => {
            let l = lit(s);
            quote!(rt::Tag::Str(#l))
        }
        Value::Bool(b) => quote!(rt::Tag::Bool(#b)),
        Value::Number(n) => {
            let i: i128 = match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => i.into(),
                (_, Some(u)) => u.into(),
                _ => return None,
            };
            let l = Literal::i128_unsuffixed(i.abs());
            if i < 0 {
                quote!(rt::Tag::Int(-#l))
            } else {
                quote!(rt::Tag::Int(#l))
            }
        }
        _ => return None,
    })
}

/// The `rt::Kind` a member of [`Shape::Kinds`] takes.
fn kind_of(m: &Model, s: &Shape) -> Option<Ident> {
    Some(match m.kind_of(s)? {
        JsonKind::Null => format_ident!("Null"),
        JsonKind::Boolean => format_ident!("Boolean"),
        JsonKind::Number => format_ident!("Number"),
        JsonKind::String => format_ident!("String"),
        JsonKind::Array => format_ident!("Array"),
        JsonKind::Object => format_ident!("Object"),
    })
}
