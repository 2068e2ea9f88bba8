//! Zod 4 schemas from the model: one constant and one inferred type per [`TypeDef`], in dependency order.
//!
//! Every construct keeps the engine's meaning ([`crate::engine`]); where Zod's own check means something else
//! (string lengths in UTF-16 units, `z.int()` stopping at 2^53-1, `.multipleOf()`'s tolerance, `.strict()`'s one
//! issue for all unknown keys) the schema uses a check of the runtime (`zod-support.ts`) instead. Only the runtime
//! and [`super::js`] write literals, so schema text never reaches the output unescaped.
//!
//! | model | Zod |
//! |---|---|
//! | closed object | `closed({...}, unknownKeys(owner, removed))`: each unknown key its own issue, an own `__proto__` too |
//! | object with an `additionalProperties` schema / map | `withOthers({...}, value)` / `mapOf(value)`: Zod's catchall, an own `__proto__` checked too |
//! | open object / strip object | `open({...})` (Zod's loose object, keeping an own `__proto__` too) / `z.object` |
//! | object with `required`-only names, `dependentRequired`, `patternProperties`, `propertyNames`, counts | `objectWith`/`looseObjectWith`: a loose object plus one check of the rest, in the engine's order |
//! | object declaring `__proto__` or an `Object.prototype` member (`toString`), or requiring `__proto__` | `ownObject([[key, schema, required], ...], rest)`: own properties only (Zod reads `input[key]`, `key in input`, and skips `__proto__`), typed from the model |
//! | discriminated union | `z.discriminatedUnion` (its error map names the engine's rule); `union(...)` when a member is not a plain object (or is typed from the model: it lists `Object.prototype` names the model declares elsewhere) |
//! | string | `z.string()` + `minChars`/`maxChars` (code points) + `pattern` (`u` flag) |
//! | number / integer | `z.number()` (`z.int(intBounds(..))` when bounds within ±(2^53-1) are given on both sides, else `isInt`) + `.min`/`.gt`/`.max`/`.lt` + `multipleOf` (`Number.isInteger(v / m)`) |
//! | const / enum | `z.literal` for scalars (`z.enum` for strings, its message from `stringEnumParams` when a value looks like an array index); `constValue`/`enumValues` (JSON equality) otherwise |
//! | array / tuple | `z.array` / `ordered(z.tuple([...optional], rest))` + `minItems`, `maxItems`; `uniqueInput(...)` for `uniqueItems`; `containsInput(...)` for `contains` |
//! | nullable, several JSON kinds | `.nullable()`, `kinds([...])` |
//! | `allOf`, `anyOf`, `oneOf`, `not`, `if`, `dependentSchemas` | `allOf`, `anyOf`, `oneOf`, `not`, `cond`, `dependent` (checks on the input) |
//! | `unevaluatedProperties`/`unevaluatedItems` beside applicators | `unevaluated(inner, plan, rest, items)`: the plan of [`crate::ir::Evaluation`] ([`super::evaluation`]) |
//! | a type in a reference cycle | `z.lazy` for the back references, a declared type ([`super::types`]) |

use super::js::{ident, jsdoc_marked, json_lit, matcher_lit, number_lit, prop_key, string_lit, Code};
use super::types;
use super::EmitError;
use crate::ir::*;

/// Names of `Object.prototype` (and `__proto__`): Zod reads a declared property with `input[key]` and `key in
/// input`, which find these on every object, and never reads an own `__proto__`; an object that declares one is
/// read by the runtime's `ownObject` instead.
pub(crate) const INHERITED: &[&str] = &[
    "__proto__",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
    "constructor",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toLocaleString",
    "toString",
    "valueOf",
];

/// The names the Zod runtime exports as the package's API, in the runtime's order: `schemas.ts` imports those it
/// uses and `index.ts` re-exports them all. With [`RUNTIME_PRIVATE`], every name the runtime declares, none of which
/// a name the Zod module makes from the model may be ([`super::names`]).
pub(crate) const RUNTIME_EXPORTS: &[&str] = &[
    "RULES",
    "RuleId",
    "WireError",
    "WireResult",
    "wireMessage",
    "$T",
    "$C",
    "constParams",
    "enumParams",
    "stringEnumParams",
    "rule",
    "chars",
    "isInt",
    "$TInt",
    "intBounds",
    "minChars",
    "maxChars",
    "Matcher",
    "matcher",
    "pattern",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "uniqueInput",
    "unevaluated",
    "dependent",
    "containsInput",
    "ordered",
    "jsonEqual",
    "depthWithin",
    "constValue",
    "enumValues",
    "unknownKeys",
    "closed",
    "withOthers",
    "open",
    "mapOf",
    "ObjectRest",
    "objectWith",
    "looseObjectWith",
    "ownObject",
    "allOf",
    "present",
    "anyOf",
    "oneOf",
    "constAlternatives",
    "not",
    "cond",
    "kinds",
    "UnionTags",
    "unionMessage",
    "union",
    "RoleParams",
    "roleIssue",
    "toPointer",
    "issueRule",
    "toWireErrors",
];

/// The names the Zod runtime declares that are not the package's API (the runtime does not export most of them; it
/// exports `firstDuplicate` and `AllOutputs`, which only its own functions use).
pub(crate) const RUNTIME_PRIVATE: &[&str] = &[
    "z",
    "RawIssue",
    "Payload",
    "RULE_SET",
    "RULE_SUFFIX",
    "isRule",
    "tagged",
    "lastKey",
    "lastProperty",
    "unwrapOptional",
    "LISTED_VALUES",
    "quotedList",
    "kind",
    "shown",
    "shownShort",
    "enumMessage",
    "EXPECTED",
    "boundMessage",
    "constMessage",
    "fail",
    "intMessage",
    "counted",
    "MatchState",
    "MAX_MATCH_STATES",
    "classHas",
    "lookHolds",
    "wordAt",
    "firstDuplicate",
    "canonical",
    "isPlainObject",
    "Evaluation",
    "evaluated",
    "sub",
    "parsedOr",
    "onInput",
    "PROTO",
    "ownProp",
    "renamedKey",
    "Run",
    "wrapRun",
    "seeingProto",
    "seesProto",
    "objectRest",
    "inputOf",
    "notingInput",
    "looseWithRest",
    "AllOutputs",
    "jsonKind",
    "STRING_TAGS",
    "unionOptions",
    "badTag",
    "roleMessage",
];

/// Every name the Zod runtime declares.
pub(crate) fn runtime_names() -> impl Iterator<Item = &'static str> {
    RUNTIME_EXPORTS.iter().chain(RUNTIME_PRIVATE).copied()
}

/// The order types are declared in, and which of them are in a reference cycle.
pub(crate) struct Order {
    /// Types in declaration order: every type after the types it refers to, except along a cycle.
    pub ids: Vec<TypeId>,
    /// Position of each type (by index) in [`Order::ids`].
    pub pos: Vec<usize>,
    /// Whether a type (by index) can reach itself through references.
    pub cyclic: Vec<bool>,
}

/// The types a node refers to directly.
pub(crate) fn refs(n: &Node) -> Vec<TypeId> {
    let mut out = Vec::new();
    n.visit(&mut |x: &Node| {
        if let Shape::Ref(id) = &x.shape {
            out.push(*id);
        }
        if let Shape::Union(u) = &x.shape {
            out.extend(u.members.iter().map(|m| m.ty));
        }
    });
    out
}

impl Order {
    /// Depth-first post-order over the references, starting from each type in model order.
    pub fn of(m: &Model) -> Order {
        let n = m.types.len();
        let edges: Vec<Vec<TypeId>> =
            m.types.iter().map(|t| refs(&t.node).into_iter().filter(|r| r.0 < n).collect()).collect();
        let mut state = vec![0u8; n];
        let mut ids = Vec::new();
        fn visit(i: usize, edges: &[Vec<TypeId>], state: &mut [u8], ids: &mut Vec<TypeId>) {
            if state[i] != 0 {
                return;
            }
            state[i] = 1;
            for r in &edges[i] {
                visit(r.0, edges, state, ids);
            }
            state[i] = 2;
            ids.push(TypeId(i));
        }
        for i in 0..n {
            visit(i, &edges, &mut state, &mut ids);
        }
        let mut pos = vec![0; n];
        for (p, id) in ids.iter().enumerate() {
            pos[id.0] = p;
        }
        let cyclic = (0..n).map(|i| crate::graph::reaches(i, |j| edges[j].iter().map(|r| r.0), |j| j == i)).collect();
        Order { ids, pos, cyclic }
    }
}

/// Plans check validity with the members' schemas (`safeParse`).
struct ZodPlan<'a, 'm> {
    z: &'a ZodEmit<'m>,
    indent: usize,
}

impl super::evaluation::PlanChecks for ZodPlan<'_, '_> {
    fn valid_fn(&mut self, n: &Node) -> Result<String, EmitError> {
        Ok(format!("(x: unknown) => {}.safeParse(x).success", self.z.node(n, self.indent)?))
    }

    fn matcher_expr(&mut self, p: &Pattern) -> String {
        matcher_lit("", p)
    }
}

/// The Zod module's body for a model.
pub(crate) struct ZodEmit<'m> {
    m: &'m Model,
    /// What typing needs of the whole model ([`types::TsTypes`]; the kinds of every type, for an `allOf`).
    facts: types::TypeFacts,
    order: Order,
    /// Position (in [`Order::ids`]) of the type being declared: a reference to it or a later one is lazy.
    current: usize,
}

/// The code of one declared type.
pub(crate) struct Decl {
    /// The declarations (constant, type, and the role check of the envelope).
    pub code: Code,
}

fn at(n: &Node, msg: impl Into<String>) -> EmitError {
    EmitError::at(&n.origin, msg)
}

/// `kind` of a JSON value as `typeof` names it.
fn typeof_name(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::String(_) => "string",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::Null | serde_json::Value::Array(_) | serde_json::Value::Object(_) => "object",
    }
}

impl<'m> ZodEmit<'m> {
    /// Prepares the module of `m`, whose names [`super::names::check`] has checked.
    pub fn new(m: &'m Model) -> Self {
        ZodEmit { m, facts: types::TypeFacts::of(m), order: Order::of(m), current: 0 }
    }

    /// The types in declaration order.
    pub fn order(&self) -> &Order {
        &self.order
    }

    fn schema_name(&self, id: TypeId) -> Code {
        Code::from_pieces(self.m.ty(id).names.zod.clone())
    }

    fn ts_name(&self, id: TypeId) -> Code {
        Code::from_pieces(self.m.ty(id).names.ts.clone())
    }

    /// The TypeScript type of a node, written from the model ([`types`]) with the module's type names.
    fn ts_type(&self, n: &Node) -> Result<Code, EmitError> {
        let name = |i| self.ts_name(i);
        types::TsTypes::new(self.m, &self.facts, &name).ty(n)
    }

    fn is_lazy(&self, id: TypeId) -> bool {
        self.order.pos.get(id.0).is_none_or(|p| *p >= self.current)
    }

    /// A reference to a type's schema: its constant, or `z.lazy` when it is not declared yet.
    fn reference(&self, id: TypeId) -> Code {
        let name = self.schema_name(id);
        if self.is_lazy(id) {
            Code::from_pieces(format!("z.lazy((): z.ZodType<{}> => {name})", self.ts_name(id)))
        } else {
            name
        }
    }

    /// Declares type `id` (its constant and its type). `roles` is the envelope's role check, if it is the envelope.
    pub fn decl(&mut self, id: TypeId, roles: Option<&Code>) -> Result<Decl, EmitError> {
        self.current = self.order.pos.get(id.0).copied().unwrap_or(0);
        let t = self.m.ty(id);
        let (zname, tname) = (self.schema_name(id), self.ts_name(id));
        let text = crate::emit::described(
            self.m.own_title(id),
            t.description.as_deref(),
            format!("The `{tname}` type."),
            &t.annotations.notes(),
        );
        let doc = jsdoc_marked(&text, t.annotations.deprecated, 0);
        // An alias (`$defs` entry that only refers to another type) is the same schema under a second name.
        if let (Shape::Ref(target), None) = (&t.node.shape, roles) {
            if !self.is_lazy(*target) {
                return Ok(Decl {
                    code: Code::from_pieces(format!(
                        "{doc}\nexport const {zname} = {};\n{doc}\nexport type {tname} = {};\n",
                        self.schema_name(*target),
                        self.ts_name(*target)
                    )),
                });
            }
        }
        let aliases = self.alias_decls(id)?;
        let mut expr = self.node(&t.node, 0)?.to_string();
        if let Some(r) = roles {
            expr = format!("{expr}\n  .check({r})");
        }
        if let Some(d) = t.description.as_deref().filter(|d| !d.trim().is_empty()) {
            expr = format!("{expr}\n  .describe({})", string_lit(d));
        }
        let cyclic = self.order.cyclic.get(id.0).copied().unwrap_or(false);
        // Each schema is built in a call marked pure, so that a bundler drops the schemas an import does not reach
        // (a chain of Zod calls at the top level is kept whole: a bundler cannot tell that it has no side effects).
        let code = if cyclic || nesting(&t.node) > MAX_INFERRED_NESTING {
            let ty = self.ts_type(&t.node)?;
            format!(
                "{doc}\nexport type {tname} = {ty};\n{doc}\nexport const {zname}: z.ZodType<{tname}> = {PURE} (() => ({expr}) as unknown as z.ZodType<{tname}>)();\n{aliases}"
            )
        } else {
            format!("{doc}\nexport const {zname} = {PURE} (() => {expr})();\n{doc}\nexport type {tname} = z.infer<typeof {zname}>;\n{aliases}")
        };
        Ok(Decl { code: Code::from_pieces(code) })
    }

    /// The other names of a type (`x-aliases`): the same schema constant and type under each alias.
    fn alias_decls(&self, id: TypeId) -> Result<String, EmitError> {
        let t = self.m.ty(id);
        let (zname, tname) = (self.schema_name(id), self.ts_name(id));
        let mut out = String::new();
        for a in &t.aliases {
            let (az, at) =
                (ident(&a.zod).map_err(|e| e.or_at(&a.at.zod))?, ident(&a.ts).map_err(|e| e.or_at(&a.at.ts))?);
            out.push_str(&format!(
                "/** {{@link {zname}}} under another name (`x-aliases`: a name an earlier version of the package used). */\n\
                 export const {az} = {zname};\n\
                 /** {{@link {tname}}} under another name (`x-aliases`). */\n\
                 export type {at} = {tname};\n"
            ));
        }
        Ok(out)
    }

    fn nodes(&self, ns: &[Node], indent: usize) -> Result<Vec<String>, EmitError> {
        ns.iter().map(|n| self.node(n, indent).map(|c| c.to_string())).collect()
    }

    /// The Zod expression of a node (`indent`: the indentation of the line it starts on, for objects).
    pub fn node(&self, n: &Node, indent: usize) -> Result<Code, EmitError> {
        let s = match &n.shape {
            Shape::Any => "z.unknown()".to_string(),
            Shape::Never => "z.never($T)".to_string(),
            Shape::Ref(id) => self.reference(*id).to_string(),
            Shape::Null => "z.null($T)".to_string(),
            Shape::Boolean => "z.boolean($T)".to_string(),
            Shape::String(s) => {
                let mut out = "z.string($T)".to_string();
                match s.min_length {
                    None | Some(0) => {}
                    Some(1) => out.push_str(".min(1, $C)"),
                    Some(k) => out.push_str(&format!(".check(minChars({}))", count(n, "minLength", k)?)),
                }
                if let Some(k) = s.max_length {
                    out.push_str(&format!(".check(maxChars({}))", count(n, "maxLength", k)?));
                }
                if let Some(p) = &s.pattern {
                    out.push_str(&format!(".check(pattern({}, {}))", matcher_lit("", p), string_lit(&p.source)));
                }
                out
            }
            Shape::Number(s) => {
                // `z.int()` is an integer within ±(2^53-1): the same as JSON Schema's integer when the schema bounds
                // it on both sides inside that range, inclusive or exclusive, since a value beyond ±(2^53-1) then
                // breaks a bound too; `intBounds` reports that value as the first bound it breaks, as the engine
                // does. It is much faster than a custom check, which slows Zod's parse of every message that
                // reaches it. Otherwise `isInt` takes any integral double.
                let safe = |b: Option<f64>| b.is_some_and(|v| v.abs() <= MAX_SAFE as f64);
                let int = s.integer
                    && (safe(s.minimum) || safe(s.exclusive_minimum))
                    && (safe(s.maximum) || safe(s.exclusive_maximum));
                let num = |f: f64| number_lit(f).map_err(|e| located_err(n, e));
                let bound =
                    |b: Option<f64>| b.map_or_else(|| Ok("null".to_string()), |v| num(v).map(|c| c.to_string()));
                let mut out = if int {
                    format!(
                        "z.int(intBounds({}, {}, {}, {}))",
                        bound(s.minimum)?,
                        bound(s.exclusive_minimum)?,
                        bound(s.maximum)?,
                        bound(s.exclusive_maximum)?
                    )
                } else if s.integer {
                    "z.number($TInt)".to_string()
                } else {
                    "z.number($T)".to_string()
                };
                if s.integer && !int {
                    out.push_str(".check(isInt)");
                }
                if let Some(v) = s.minimum.filter(|v| !int || *v > -(MAX_SAFE as f64)) {
                    out.push_str(&format!(".min({}, $C)", num(v)?));
                }
                if let Some(v) = s.exclusive_minimum {
                    out.push_str(&format!(".gt({}, $C)", num(v)?));
                }
                if let Some(v) = s.maximum.filter(|v| !int || *v < MAX_SAFE as f64) {
                    out.push_str(&format!(".max({}, $C)", num(v)?));
                }
                if let Some(v) = s.exclusive_maximum {
                    out.push_str(&format!(".lt({}, $C)", num(v)?));
                }
                if let Some(v) = s.multiple_of {
                    out.push_str(&format!(".check(multipleOf({}))", num(v)?));
                }
                out
            }
            Shape::Const(v) => match scalar(v) {
                // The runtime words the message as the engine does where JavaScript shows the value as the schema
                // writes it; else the engine's text is passed.
                Some(lit) if shown_alike(v) && crate::engine::const_message(v) == format!("must be `{v}`") => {
                    format!("z.literal({lit}, constParams({lit}))")
                }
                Some(lit) => {
                    format!("z.literal({lit}, constParams({lit}, {}))", string_lit(&crate::engine::const_message(v)))
                }
                None => typed(
                    format!("constValue({}, {})", json_lit(v), string_lit(&crate::engine::const_message(v))),
                    types::literal(v),
                ),
            },
            Shape::Enum(values) => {
                if values.is_empty() {
                    "z.never($T)".to_string()
                } else if values.iter().all(|v| v.is_string()) {
                    let list = json_lit(&serde_json::Value::Array(values.clone()));
                    // Zod lists a `z.enum`'s values from an object, where JavaScript puts index-like keys first.
                    if values.iter().any(|v| v.as_str().is_some_and(index_like)) {
                        format!("z.enum({list}, stringEnumParams({list}))")
                    } else {
                        format!("z.enum({list}, $T)")
                    }
                } else if values.iter().all(|v| scalar(v).is_some()) {
                    let list = json_lit(&serde_json::Value::Array(values.clone()));
                    if values.iter().all(shown_alike) {
                        format!("z.literal({list}, enumParams({list}))")
                    } else {
                        format!(
                            "z.literal({list}, enumParams({list}, {}))",
                            string_lit(&crate::engine::value_list(values))
                        )
                    }
                } else {
                    let list = json_lit(&serde_json::Value::Array(values.clone()));
                    let union = values.iter().map(types::literal).collect::<Option<Vec<Code>>>();
                    typed(
                        format!("enumValues({list}, {})", string_lit(&crate::engine::value_list(values))),
                        union.map(|u| Code::join(&u, " | ")),
                    )
                }
            }
            Shape::Array(a) => self.array(n, a, indent)?,
            // Zod's type would not list the model's inherited names ([`types::TypeFacts`]): declared.
            Shape::Object(o) if !reads_own(o) && self.lists_inherited(o)? => {
                typed(self.object(n, o, indent)?, Some(self.ts_type(n)?))
            }
            Shape::Object(o) => self.object(n, o, indent)?,
            Shape::Union(u) => self.union(n, u)?,
            Shape::Nullable(inner) => format!("{}.nullable()", self.node(inner, indent)?),
            Shape::Kinds(members) => {
                let mut parts = Vec::new();
                let mut words = Vec::new();
                for x in members {
                    let (k, w) = kind_of(self.m, &x.shape);
                    words.push(w);
                    parts.push(format!("[{}, {}]", string_lit(k), self.node(x, indent)?));
                }
                format!("kinds([{}], {})", parts.join(", "), string_lit(&words.join(" or ")))
            }
            Shape::AllOf(members) => {
                let all = self.nodes(members, indent)?;
                match all.split_first() {
                    None => "z.unknown()".to_string(),
                    // The value is the first part's output, of every part's type when that output is the input.
                    Some((first, rest)) if members.first().is_some_and(|f| self.m.may_drop_keys(f)) => {
                        format!("allOf({first}, [{}] as z.ZodType[])", rest.join(", "))
                    }
                    // Parts of several kinds: typed kind by kind, as Zod's intersection of their outputs would
                    // multiply the unions (the parts go as a plain array, so TypeScript does not intersect them
                    // for the call either).
                    Some((first, rest)) if types::by_kind(&self.facts.kinds, members) => format!(
                        "(allOf({first}, [{}] as z.ZodType[]) as unknown as z.ZodType<{}, unknown>)",
                        rest.join(", "),
                        self.ts_type(n)?
                    ),
                    Some((first, rest)) => format!("allOf({first}, [{}])", rest.join(", ")),
                }
            }
            Shape::AnyOf(members) | Shape::OneOf(members) => {
                let one = matches!(n.shape, Shape::OneOf(_));
                let scalars: Option<Vec<serde_json::Value>> = members
                    .iter()
                    .map(|m| match &m.shape {
                        Shape::Const(v) if scalar(v).is_some() => Some(v.clone()),
                        _ => None,
                    })
                    .collect();
                if let Some(values) = scalars.filter(|v| v.len() > 1) {
                    let values = json_lit(&serde_json::Value::Array(values));
                    return Ok(Code::from_pieces(format!("constAlternatives<{}>({values}, {one})", self.ts_type(n)?)));
                }
                let f = if one { "oneOf" } else { "anyOf" };
                let call = format!("{f}([{}])", self.nodes(members, indent)?.join(", "));
                // Zod's type of many alternatives is the union of a long tuple's outputs, which TypeScript works
                // out in time that grows faster than the tuple (2,000 constants: 9 s; 20,000: TS2590 after 185 s).
                if members.len() > MAX_INFERRED_ALTERNATIVES {
                    typed(call, Some(self.ts_type(n)?))
                } else {
                    call
                }
            }
            Shape::Not(inner) => format!("not({})", self.node(inner, indent)?),
            Shape::Cond { cond, then, otherwise } => {
                let opt = |x: &Option<Box<Node>>| -> Result<String, EmitError> {
                    Ok(match x {
                        Some(b) => self.node(b, indent)?.to_string(),
                        None => "null".to_string(),
                    })
                };
                format!("cond({}, {}, {})", self.node(cond, indent)?, opt(then)?, opt(otherwise)?)
            }
            Shape::Dependent { property, then } => {
                format!("dependent({}, {})", string_lit(property), self.node(then, indent)?)
            }
            Shape::Unevaluated { inner, rest, items } => {
                let plan = super::evaluation::literal(&self.m.evaluation(inner), &mut ZodPlan { z: self, indent })?;
                let rest = match rest.shape {
                    // A property `false` refuses is an unknown property; an item gets `false`'s own issue.
                    Shape::Never if !items => "null".to_string(),
                    _ => self.node(rest, indent)?.to_string(),
                };
                format!("unevaluated({}, {plan}, {rest}, {items})", self.node(inner, indent)?)
            }
        };
        Ok(Code::from_pieces(s))
    }

    fn array(&self, n: &Node, a: &ArrayShape, indent: usize) -> Result<String, EmitError> {
        let rest = match a.items.as_deref() {
            None => "z.unknown()".to_string(),
            Some(i) => self.node(i, indent)?.to_string(),
        };
        let mut out = if a.prefix.is_empty() {
            format!("z.array({rest}, $T)")
        } else {
            // A position before `minItems` is always there: required in the tuple's type (`ordered` checks every
            // position the array has, and `minItems` the count).
            let required = a.min_items.unwrap_or(0);
            let items: Vec<String> = self
                .nodes(&a.prefix, indent)?
                .into_iter()
                .zip(0u64..)
                .map(|(c, i)| if i < required { c.to_string() } else { format!("{c}.optional()") })
                .collect();
            match a.items.as_deref().map(|i| &i.shape) {
                Some(Shape::Never) => format!("ordered(z.tuple([{}], $T), {rest})", items.join(", ")),
                _ => format!("ordered(z.tuple([{}], {rest}, $T))", items.join(", ")),
            }
        };
        if let Some(k) = a.min_items {
            out.push_str(&format!(".check(minItems({}))", count(n, "minItems", k)?));
        }
        if let Some(k) = a.max_items {
            out.push_str(&format!(".check(maxItems({}))", count(n, "maxItems", k)?));
        }
        if a.unique {
            // Compared as the input holds them: a parsed item may have dropped keys.
            out = format!("uniqueInput({out})");
        }
        if let Some(c) = &a.contains {
            // Counted on the input's items, once the array parsed (the engine counts after the items and counts).
            let max = match c.max {
                Some(m) => count(n, "maxContains", m)?.to_string(),
                None => "null".to_string(),
            };
            out = format!(
                "containsInput({out}, {}, {}, {max})",
                self.node(&c.node, indent)?,
                count(n, "minContains", c.min)?
            );
        }
        Ok(out)
    }

    fn object(&self, n: &Node, o: &ObjectShape, indent: usize) -> Result<String, EmitError> {
        let pad = " ".repeat(indent);
        if reads_own(o) {
            return self.own_object(n, o, indent);
        }
        let mut fields = String::new();
        for f in &o.fields {
            // `patternProperties` that match a declared name are checked by the object's rest, after the declared
            // properties, as the engine orders them.
            let mut expr = self.node(&f.node, indent + 4)?.to_string();
            if !f.required {
                expr.push_str(".optional()");
            } else if !self.absent_is_required(&f.node)? {
                // Its schema would judge an absent value itself (`z.unknown()` takes it, an applicator reports its
                // own rule): absent is `required` first, as for every other property.
                expr = format!("present({}, {expr})", string_lit(&f.name));
            }
            fields.push_str(&format!(
                "{pad}    {}\n{pad}    {}: {expr},\n",
                field_doc(f, indent + 4),
                prop_key(&f.name).map_err(|e| e.or_at(&f.node.origin))?
            ));
        }
        let shape = if fields.is_empty() { "{}".to_string() } else { format!("{{\n{fields}{pad}  }}") };
        let plain = o.required_only.is_empty()
            && o.dependent_required.is_empty()
            && o.pattern_properties.is_empty()
            && o.property_names.is_none()
            && o.min_properties.is_none()
            && o.max_properties.is_none();
        if plain {
            return Ok(match &o.additional {
                Additional::Closed => {
                    let (owner, removed) = self.removed(n, o);
                    format!("closed(\n{pad}  {shape},\n{pad}  unknownKeys({owner}, {removed}),\n{pad})")
                }
                Additional::Open => format!("open(\n{pad}  {shape},\n{pad})"),
                Additional::Strip => {
                    let strip = format!("z.object(\n{pad}  {shape},\n{pad}  $T,\n{pad})");
                    // Zod types `z.object({})` as `Record<string, never>`; it takes any object (`types::has_index`).
                    if types::has_index(o) {
                        typed(strip, Some(self.ts_type(n)?))
                    } else {
                        strip
                    }
                }
                // Zod types a catchall's object as its declared properties AND an index signature of the
                // catchall's type, which the declared properties need not meet: typed loose instead.
                Additional::Schema(v) if !o.fields.is_empty() => {
                    format!("withOthers(\n{pad}  {shape},\n{pad}  {},\n{pad})", self.node(v, indent)?)
                }
                Additional::Schema(v) => format!("mapOf({})", self.node(v, indent)?),
            });
        }
        let rest = self.object_rest(n, o, indent)?;
        // Typed with an index signature unless no property beyond the declared ones can be there (as in `types`).
        let f = if types::has_index(o) { "looseObjectWith" } else { "objectWith" };
        Ok(format!("{f}(\n{pad}  {shape},\n{pad}  {rest},\n{pad})"))
    }

    /// An object Zod's own cannot read ([`INHERITED`] names): `ownObject`, which reads own properties only, with
    /// its declared properties as `[key, schema, required]` and its type from the model.
    fn own_object(&self, n: &Node, o: &ObjectShape, indent: usize) -> Result<String, EmitError> {
        let pad = " ".repeat(indent);
        let mut fields = String::new();
        for f in &o.fields {
            fields.push_str(&format!(
                "{pad}    {}\n{pad}    [{}, {}, {}],\n",
                field_doc(f, indent + 4),
                string_lit(&f.name),
                self.node(&f.node, indent + 4)?,
                f.required
            ));
        }
        let fields = if fields.is_empty() { "[]".to_string() } else { format!("[\n{fields}{pad}  ]") };
        let rest = self.object_rest(n, o, indent)?;
        Ok(format!(
            "(ownObject(\n{pad}  {fields},\n{pad}  {rest},\n{pad}) as unknown as z.ZodType<{}, unknown>)",
            self.ts_type(n)?
        ))
    }

    /// The name an object is called by in a `removed-property` message, and its removed properties with their
    /// replacements, as literals.
    fn removed(&self, n: &Node, o: &ObjectShape) -> (Code, Code) {
        let removed: serde_json::Map<String, serde_json::Value> =
            o.removed.iter().map(|r| (r.name.clone(), serde_json::Value::String(r.replacement.clone()))).collect();
        let owner = o.removed.first().map(|r| r.owner.clone()).unwrap_or_else(|| self.owner_name(n));
        (string_lit(&owner), json_lit(&serde_json::Value::Object(removed)))
    }

    /// The `ObjectRest` literal of an object: its keywords beyond the declared properties.
    fn object_rest(&self, n: &Node, o: &ObjectShape, indent: usize) -> Result<String, EmitError> {
        let (owner, removed) = self.removed(n, o);
        let mut patterns = Vec::new();
        for (p, pn) in &o.pattern_properties {
            patterns.push(format!("[{}, {}]", matcher_lit("", p), self.node(pn, indent + 2)?));
        }
        let additional = match &o.additional {
            Additional::Closed => string_lit("closed").to_string(),
            Additional::Open => string_lit("open").to_string(),
            Additional::Strip => string_lit("strip").to_string(),
            Additional::Schema(v) => self.node(v, indent + 2)?.to_string(),
        };
        let declared: Vec<serde_json::Value> =
            o.fields.iter().map(|f| serde_json::Value::String(f.name.clone())).collect();
        let dependent: Vec<serde_json::Value> =
            o.dependent_required.iter().map(|(k, d)| serde_json::json!([k, d])).collect();
        let names = match &o.property_names {
            Some(pn) => self.node(pn, indent + 2)?.to_string(),
            None => "null".to_string(),
        };
        let opt_count = |keyword: &str, c: Option<u64>| -> Result<String, EmitError> {
            Ok(match c {
                Some(k) => count(n, keyword, k)?.to_string(),
                None => "null".to_string(),
            })
        };
        Ok(format!(
            "{{ declared: {}, required: {}, dependent: {}, patterns: [{}], additional: {additional}, owner: {owner}, removed: {removed}, names: {names}, min: {}, max: {} }}",
            json_lit(&serde_json::Value::Array(declared)),
            json_lit(&serde_json::json!(o.required_only)),
            json_lit(&serde_json::Value::Array(dependent)),
            patterns.join(", "),
            opt_count("minProperties", o.min_properties)?,
            opt_count("maxProperties", o.max_properties)?,
        ))
    }

    /// Whether the Zod schema of `n` reports an absent value as `required` (Zod's `invalid_type` on `undefined`,
    /// which the error map names `required`): the typed schemas do; `z.unknown()`, the applicators and the checks
    /// built on them judge `undefined` themselves. A reference is what it refers to.
    fn absent_is_required(&self, n: &Node) -> Result<bool, EmitError> {
        let mut node = n;
        for _ in 0..=self.m.types.len() {
            match &node.shape {
                // A reference not declared yet is a `z.lazy`, which judges `undefined` by its target's error map.
                Shape::Ref(id) if self.is_lazy(*id) => return Ok(false),
                Shape::Ref(id) => node = &self.m.ty(*id).node,
                Shape::String(_) | Shape::Number(_) | Shape::Boolean | Shape::Null | Shape::Never => return Ok(true),
                // `ownObject` asks Zod's object about a value that is no object, outside the property's path.
                Shape::Object(o) => return Ok(!reads_own(o)),
                Shape::Nullable(inner) => node = inner,
                // A tuple is `ordered`'s, which asks Zod's tuple about a value that is no array, outside the path.
                Shape::Array(a) => return Ok(a.prefix.is_empty() && !a.unique && a.contains.is_none()),
                Shape::Const(v) => return Ok(scalar(v).is_some()),
                Shape::Enum(values) => return Ok(values.iter().all(|v| scalar(v).is_some())),
                // The runtime's `union` reports an absent value as a value that is no object.
                Shape::Union(u) => return self.direct_union(u),
                _ => return Ok(false),
            }
        }
        Ok(false)
    }

    /// The name an object is called by in messages: its type's TypeScript name.
    fn owner_name(&self, n: &Node) -> String {
        self.m
            .types
            .iter()
            .find(|t| t.node.origin == n.origin)
            .map_or_else(|| "object".to_string(), |t| t.names.ts.clone())
    }

    /// Whether an object's type lists names of `Object.prototype`'s members it does not declare
    /// ([`types::TypeFacts`]), which Zod's type of it would not.
    fn lists_inherited(&self, o: &ObjectShape) -> Result<bool, EmitError> {
        let name = |i| self.ts_name(i);
        Ok(!types::TsTypes::new(self.m, &self.facts, &name).inherited_slots(o)?.is_empty())
    }

    /// Whether a union is a `z.discriminatedUnion`, which takes Zod objects that declare the discriminator, declared
    /// before the union, and typed as objects (a member on a reference cycle is declared as a plain `z.ZodType<T>`,
    /// one that reads own properties is `ownObject`'s, one that lists inherited names is declared too); else it
    /// is the runtime's `union`, a dispatch on the tag.
    fn direct_union(&self, u: &UnionShape) -> Result<bool, EmitError> {
        for m in &u.members {
            let direct = !self.is_lazy(m.ty)
                && !self.order.cyclic.get(m.ty.0).copied().unwrap_or(false)
                && match &self.m.ty(m.ty).node.shape {
                    Shape::Object(o) => {
                        o.fields.iter().any(|f| f.name == u.discriminator && f.required)
                            && !reads_own(o)
                            && !self.lists_inherited(o)?
                    }
                    _ => false,
                };
            if !direct {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn union(&self, n: &Node, u: &UnionShape) -> Result<String, EmitError> {
        let tag = string_lit(&u.discriminator);
        let removed: serde_json::Map<String, serde_json::Value> =
            u.removed.iter().map(|(a, b)| (a.clone(), serde_json::Value::String(b.clone()))).collect();
        let removed = json_lit(&serde_json::Value::Object(removed));
        let string_events = u.events && u.members.iter().all(|m| m.tag.is_string());
        let tags = if string_events {
            None
        } else {
            let mut kinds: Vec<&str> = u.members.iter().map(|m| typeof_name(&m.tag)).collect();
            kinds.dedup();
            Some(format!(
                "{{ kinds: {}, expected: {}, events: {} }}",
                json_lit(&serde_json::json!(kinds)),
                string_lit(&u.expected_tag()),
                u.events
            ))
        };
        if u.members.is_empty() {
            return Err(at(n, "a union without members"));
        }
        if self.direct_union(u)? {
            let members: Vec<String> = u.members.iter().map(|m| self.schema_name(m.ty).to_string()).collect();
            let map = match &tags {
                None => format!("unionMessage({tag}, {removed})"),
                Some(t) => format!("unionMessage({tag}, {removed}, {t})"),
            };
            return Ok(format!("z.discriminatedUnion({tag}, [{}], {{ error: {map} }})", members.join(", ")));
        }
        let mut members = Vec::new();
        for m in &u.members {
            members.push(format!("[{}, {}]", json_lit(&m.tag), self.reference(m.ty)));
        }
        let tags = tags.unwrap_or_else(|| "{ kinds: [\"string\"], expected: \"a string\", events: true }".to_string());
        Ok(format!("union({tag}, [{}], {removed}, {tags})", members.join(", ")))
    }
}

/// A declared property's doc comment ([`crate::emit::field_text`]), marked `@deprecated` when it is.
fn field_doc(f: &Field, indent: usize) -> Code {
    jsdoc_marked(&crate::emit::field_text(f), f.annotations.deprecated, indent)
}

/// Whether JavaScript shows a scalar as the schema writes it (`JSON.stringify`): not a number written with a
/// fraction or an exponent (`1.0` is `1` there), and not an object or array (a message shows the schema's text).
fn shown_alike(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Number(n) => !n.is_f64(),
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => false,
        _ => true,
    }
}

/// Whether JavaScript takes `s` for an array index when it is an object's key (`"0"`, `"1"`, not `"01"`), which it
/// lists before the other keys whatever their order.
fn index_like(s: &str) -> bool {
    (s == "0" || (!s.starts_with('0') && !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())))
        && s.parse::<u64>().is_ok_and(|n| n < u64::from(u32::MAX))
}

/// Whether an object is `ownObject`'s: it declares a property Zod's object cannot read ([`INHERITED`]), or its
/// `required` or `dependentRequired` names `__proto__`, which a Zod object never keeps.
fn reads_own(o: &ObjectShape) -> bool {
    o.fields.iter().any(|f| INHERITED.contains(&f.name.as_str()))
        || o.required_only
            .iter()
            .chain(o.dependent_required.iter().flat_map(|(k, d)| d.iter().chain([k])))
            .any(|r| r == "__proto__")
}

fn located_err(n: &Node, e: EmitError) -> EmitError {
    match e {
        EmitError::Unsupported(msg) => at(n, msg),
        other => other,
    }
}

/// The count keyword `keyword` (`minLength`, `minItems`, ...) of the node `n`, of value `k`, for JavaScript, which
/// counts exactly up to 2^53-1 (the Zod schemas and the standalone validator); a larger one is refused there, at the
/// keyword (a node's count keywords are those of the schema object at its origin).
pub(crate) fn count(n: &Node, keyword: &str, k: u64) -> Result<u64, EmitError> {
    if k > MAX_SAFE as u64 {
        // The loader reads a count past u64 as u64::MAX (`1e20`): not the number written, so not shown as one.
        let shown = if k == u64::MAX { "2^64-1 or more".to_string() } else { k.to_string() };
        return Err(EmitError::at(
            &n.origin.join(keyword),
            format!("`{keyword}` is {shown}, beyond what JavaScript counts exactly (2^53-1)"),
        ));
    }
    Ok(k)
}

/// A JSON scalar as a JavaScript literal; `None` for arrays and objects.
/// A schema declared of the type `ty` when there is one (a `constValue`/`enumValues` of the literal type of what it
/// accepts; a schema whose inferred type Zod would not write as the model does).
fn typed(schema: String, ty: Option<Code>) -> String {
    match ty {
        Some(t) => format!("({schema} as unknown as z.ZodType<{t}, unknown>)"),
        None => schema,
    }
}

fn scalar(v: &serde_json::Value) -> Option<Code> {
    match v {
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => None,
        serde_json::Value::Number(x) => x.as_f64().and_then(|f| number_lit(f).ok()),
        other => Some(json_lit(other)),
    }
}

/// The JSON kind a member of [`Shape::Kinds`] takes (`typeof`, with `null` and `array`), and the engine's word.
pub(crate) fn kind_of(m: &Model, s: &Shape) -> (&'static str, &'static str) {
    (m.kind_of(s).map_or("object", JsonKind::name), m.kind_word(s))
}

/// How deep a type's schema may nest inline (nodes on its longest path, the type's own included) for the Zod
/// module to infer its type: deeper, the module declares the type from the model, as for a type in a reference
/// cycle. Zod's inference instantiates a type per level, and TypeScript gives up past its instantiation depth
/// (`TS2589`: arrays nested 40 deep do; 30 pass).
const MAX_INFERRED_NESTING: usize = 24;

/// How many alternatives an `anyOf` or `oneOf` may have for the Zod module to infer its type; with more, the module
/// declares the type from the model.
const MAX_INFERRED_ALTERNATIVES: usize = 64;

/// The nodes on the longest inline path down from `n` (`n` included; references end a path).
fn nesting(n: &Node) -> usize {
    1 + n.children().into_iter().map(nesting).max().unwrap_or(0)
}

/// The largest integer JavaScript represents exactly (2^53-1).
pub(crate) const MAX_SAFE: i64 = 9_007_199_254_740_991;

/// The role check of the protocol's envelope (a Zod check), from [`Protocol::role_rules`]: it runs only when the
/// envelope's shape is valid, like the engine, and reports at pointers relative to the envelope.
pub(crate) fn role_check(m: &Model, p: &Protocol) -> Result<Code, EmitError> {
    let disc = p.discriminator(m);
    let mut w = String::new();
    w.push_str("(ctx: z.core.ParsePayload<Record<string, unknown>>): void => {\n");
    w.push_str("    if (ctx.issues.length !== 0) return;\n");
    w.push_str("    const env = ctx.value;\n");
    w.push_str(&format!("    const role = env[{}] as string;\n", string_lit(&p.role_field)));
    w.push_str(&format!("    const ev = env[{}] as Record<string, unknown>;\n", string_lit(&p.union_field)));
    w.push_str(&format!("    switch (ev[{}]) {{\n", string_lit(disc)));
    let all = &p.roles;
    for e in &p.events {
        let mut body = String::new();
        for r in p.role_rules(e) {
            let (allowed, check, path, rule, what) = match r {
                RoleRule::Event { allowed } => (allowed, None, vec![p.role_field.clone()], "role-event", e.tag.clone()),
                RoleRule::EnvelopeField { name, allowed } => (
                    allowed,
                    Some(format!("env[{}] !== undefined", string_lit(name))),
                    vec![name.to_string()],
                    "role-field",
                    name.to_string(),
                ),
                RoleRule::EventField { name, allowed } => (
                    allowed,
                    Some(format!("ev[{}] !== undefined", string_lit(name))),
                    vec![p.union_field.clone(), name.to_string()],
                    "role-field",
                    name.to_string(),
                ),
            };
            if all.iter().all(|r| allowed.contains(r)) {
                continue;
            }
            let forbidden: Vec<String> =
                all.iter().filter(|r| allowed.contains(r)).map(|r| format!("role !== {}", string_lit(r))).collect();
            let mut cond = if forbidden.is_empty() { "true".to_string() } else { forbidden.join(" && ") };
            if let Some(c) = check {
                cond = format!("{cond} && {c}");
            }
            let path: Vec<String> = path.iter().map(|x| string_lit(x).to_string()).collect();
            body.push_str(&format!(
                "        if ({cond}) ctx.issues.push(roleIssue({}, {}, {}, role, [{}]));\n",
                string_lit(rule),
                string_lit(&what),
                string_lit(&allowed.join(" or ")),
                path.join(", "),
            ));
        }
        if !body.is_empty() {
            w.push_str(&format!("      case {}:\n{body}        break;\n", string_lit(&e.tag)));
        }
    }
    w.push_str("    }\n  }");
    Ok(Code::from_pieces(w))
}

/// The annotation that tells bundlers (esbuild, Rollup, webpack's Terser) a call has no side effects, so its result
/// may be dropped when nothing uses it.
const PURE: &str = "/* @__PURE__ */";
