//! The standalone validator: a dependency-free checker per type, in the spirit of ajv's standalone code.
//!
//! Straight-line code from the model, nothing interpreted at run time: one function per type (`check$<Name>(v, p,
//! out)`) with direct property reads and `typeof` checks, bound checks, a `switch` on a union's discriminator,
//! `for ... in` over an object's other keys, and the protocol's role rules on the envelope. Each node's checks
//! follow the engine ([`crate::engine`]) keyword by keyword, so the error list (rule id and JSON Pointer of every
//! error) is the engine's, in the engine's order. Members of `anyOf`, `oneOf`, `not`, `if` and `propertyNames`,
//! which are only tested, become functions of their own (`n$3`) run into a scratch list.
//!
//! Every name and literal goes through [`super::js`]: property names, tags and enum values are string literals,
//! static pointers are escaped at generation time ([`crate::diag::push_ptr`]), dynamic keys at run time (`$esc`).

use std::collections::HashMap;

use super::js::{json_lit, matcher_lit, number_lit, string_lit, value_ident, Code};
use super::zod::{count, kind_of, INHERITED};
use super::EmitError;
use crate::diag::push_ptr;
use crate::engine::{counted, value_list};
use crate::ir::*;
use crate::rules::Rule;

/// The names the standalone runtime declares.
pub(crate) const RUNTIME_NAMES: &[&str] = &[
    "$Object",
    "$isObject",
    "$own",
    "$esc",
    "$chars",
    "$kind",
    "$e",
    "$type",
    "$jsonEqual",
    "$depthWithin",
    "$shown",
    "$shownShort",
    "$firstDuplicate",
    "$canonical",
    "$Matcher",
    "$MatchState",
    "$MAX_MATCH_STATES",
    "$matcher",
    "$classHas",
    "$lookHolds",
    "$wordAt",
    "$ok",
    "$why",
    "$Check",
    "$Evaluation",
    "$evaluated",
];

/// The most declared names a closed object's unknown-key check compares a key with one by one (`k === "a" || …`),
/// and the most values or alternatives an `enum` or `anyOf` check chains (`v !== "a" && …`, `$ok(f, v) || …`);
/// past it, a module constant answers (a `Set`, or a list walked once): a chain of thousands is slow on many keys,
/// and TypeScript's compiler overflows its stack on one of 20,000.
const KEY_CHAIN: usize = 32;

/// The most pieces of one sequence (properties, `prefixItems`, `allOf` members, ...) a check function holds in
/// place; more go to hoisted functions of this many ([`Standalone::pieces`]).
const CHUNK: usize = 64;

/// The public names of one type's validator (`validate` and `is` before its TypeScript name).
///
/// # Errors
/// When they cannot be the names of values, located where the TypeScript name was given.
pub(crate) fn names(n: &Names) -> Result<(Code, Code), EmitError> {
    let (validate, guard) = validator_names(&n.ts);
    let name = |s: &str| value_ident(s).map_err(|e| e.or_at(&n.at.ts));
    Ok((name(&validate)?, name(&guard)?))
}

/// The names of the validators of the type whose TypeScript name is `ts`, unchecked: `validate<T>` and `is<T>`.
pub(crate) fn validator_names(ts: &str) -> (String, String) {
    (format!("validate{ts}"), format!("is{ts}"))
}

/// Lines of code with indentation.
#[derive(Default)]
struct W {
    out: String,
    depth: usize,
}

impl W {
    fn line(&mut self, code: impl AsRef<str>) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push_str(code.as_ref());
        self.out.push('\n');
    }
    fn open(&mut self, code: impl AsRef<str>) {
        self.line(code);
        self.depth += 1;
    }
    fn close(&mut self, code: impl AsRef<str>) {
        self.depth = self.depth.saturating_sub(1);
        self.line(code);
    }
}

/// A pointer expression: a variable plus an escaped static suffix.
#[derive(Clone)]
struct Ptr {
    var: String,
    suffix: String,
}

impl Ptr {
    fn key(&self, name: &str) -> Ptr {
        Ptr { var: self.var.clone(), suffix: push_ptr(&self.suffix, name) }
    }
    fn expr(&self) -> String {
        if self.suffix.is_empty() {
            self.var.clone()
        } else {
            format!("{} + {}", self.var, string_lit(&self.suffix))
        }
    }
    /// The pointer of the key (held in variable `k`) below this one.
    fn dynamic(&self, k: &str) -> String {
        format!("{} + {} + $esc({k})", self.var, string_lit(&format!("{}/", self.suffix)))
    }
}

fn rule(r: Rule) -> Code {
    string_lit(r.id())
}

fn push(ptr: &str, r: Rule, message: &str) -> String {
    format!("$e(out, {ptr}, {}, {message});", rule(r))
}

fn msg(s: &str) -> String {
    string_lit(s).to_string()
}

fn at(n: &Node, m: impl Into<String>) -> EmitError {
    EmitError::at(&n.origin, m)
}

/// The module's generated part: a check function per type and the helper functions.
pub(crate) struct Standalone<'m> {
    m: &'m Model,
    /// Hoisted helper functions (`n$<i>`), emitted before the type functions.
    helpers: Vec<String>,
    /// Module constants, each once, in the order made (one refers only to those before it), as (name, declaration
    /// after the name): pattern matchers (`re$<i>`), evaluation plans (`plan$<i>`), and the lists past
    /// [`KEY_CHAIN`] (a closed object's names `keys$<i>`, `enum` values `enum$<i>`, `anyOf` checks `any$<i>`).
    constants: Vec<(String, String)>,
    /// Where each declaration is in `constants`.
    made: HashMap<String, usize>,
    var: usize,
}

/// Per type (by index), whether checking it can recurse as deep as the value goes: it is in a reference cycle, or
/// has `uniqueItems` (`$firstDuplicate` writes each item's canonical text, all the way down), or refers to a type
/// that does. Its `validate<Type>` first measures the value's depth, so a value nesting deeper than the engine's
/// limit (which no line may hold: `too-deep`, as the Rust crate's `from_value` says it), a cyclic one included,
/// cannot exhaust JavaScript's stack. Checking any other type reads the value only as deep as its schema goes.
pub(crate) fn unbounded(m: &Model) -> Vec<bool> {
    let mut cyclic = super::zod::Order::of(m).cyclic;
    for (c, t) in cyclic.iter_mut().zip(&m.types) {
        t.node.visit(&mut |n| *c |= matches!(&n.shape, Shape::Array(a) if a.unique));
    }
    let n = m.types.len();
    let edges: Vec<Vec<TypeId>> = m.types.iter().map(|t| super::zod::refs(&t.node)).collect();
    let out = |j: usize| edges[j].iter().map(|r| r.0).filter(move |&r| r < n);
    (0..n).map(|i| cyclic[i] || crate::graph::reaches(i, out, |j| cyclic[j])).collect()
}

fn check_fn(m: &Model, id: TypeId) -> String {
    format!("check${}", m.ty(id).names.ts)
}

/// Plans check validity with the helper check functions.
impl super::evaluation::PlanChecks for Standalone<'_> {
    fn valid_fn(&mut self, n: &Node) -> Result<String, EmitError> {
        Ok(format!("(x: unknown) => $ok({}, x)", self.helper(n)?))
    }

    fn matcher_expr(&mut self, p: &Pattern) -> String {
        self.matcher(p)
    }
}

impl<'m> Standalone<'m> {
    /// A generator for `m`.
    pub fn new(m: &'m Model) -> Self {
        Standalone { m, helpers: Vec::new(), constants: Vec::new(), made: HashMap::new(), var: 0 }
    }

    fn fresh(&mut self, base: &str) -> String {
        self.var += 1;
        format!("{base}{}", self.var)
    }

    /// The module constant (`<base>$<i>`) declared by `decl` (its type and value: `: T = v` or ` = v`), made once per
    /// declaration.
    fn constant(&mut self, base: &str, decl: String) -> String {
        if let Some(&i) = self.made.get(&decl) {
            return self.constants[i].0.clone();
        }
        let name = format!("{base}${}", self.constants.len());
        self.made.insert(decl.clone(), self.constants.len());
        self.constants.push((name.clone(), decl));
        name
    }

    /// The test that `v` is none of `values`, through a module constant: a `Set` when they are strings, numbers,
    /// booleans or `null` (its `has` is JSON equality for those: `0` and `-0` are one number), else a list compared
    /// with `$jsonEqual`.
    fn not_in(&mut self, v: &str, values: &[serde_json::Value]) -> String {
        if values.iter().any(|x| x.is_array() || x.is_object()) {
            let items: Vec<String> = values.iter().map(|x| json_lit(x).to_string()).collect();
            let list = self.constant("enum", format!(": readonly unknown[] = [{}]", items.join(", ")));
            return format!("!{list}.some((x) => $jsonEqual({v}, x))");
        }
        // A number without a literal is never equal to a value (as in `not_equal`).
        let items: Vec<String> = values
            .iter()
            .filter_map(|x| match x {
                serde_json::Value::Number(n) => n.as_f64().and_then(|f| number_lit(f).ok()).map(|l| l.to_string()),
                other => Some(json_lit(other).to_string()),
            })
            .collect();
        let set = self.constant("enum", format!(" = new Set<unknown>([{}])", items.join(", ")));
        format!("!{set}.has({v})")
    }

    /// The module constant holding `p`'s matcher (one per pattern).
    fn matcher(&mut self, p: &Pattern) -> String {
        self.constant("re", format!(" = {}", matcher_lit("$", p)))
    }

    /// A helper function checking `n` (hoisted), for a node that is only tested; returns its name.
    fn helper(&mut self, n: &Node) -> Result<String, EmitError> {
        let idx = self.helpers.len();
        let name = format!("n${idx}");
        self.helpers.push(String::new());
        let mut w = W::default();
        w.open(format!("function {name}(v: unknown, p: string, out: WireError[]): void {{"));
        self.node(&mut w, n, "v", &Ptr { var: "p".into(), suffix: String::new() })?;
        w.close("}");
        self.helpers[idx] = without_unused_locals(&w.out);
        Ok(name)
    }

    /// Emits `count` pieces of a check in order (piece `i` by `one(self, w, i, value, pointer)`): in place when they
    /// are few, else in hoisted functions of [`CHUNK`] pieces each, called one after another with the value (of
    /// TypeScript type `ty`) and its pointer. TypeScript refuses to analyse a function body past a few thousand
    /// statements (TS2563 "too large for control flow analysis": an object of 500 properties in one function).
    fn pieces(
        &mut self,
        w: &mut W,
        count: usize,
        (v, ty): (&str, &str),
        ptr: &Ptr,
        mut one: impl FnMut(&mut Self, &mut W, usize, &str, &Ptr) -> Result<(), EmitError>,
    ) -> Result<(), EmitError> {
        if count <= CHUNK {
            for i in 0..count {
                one(self, w, i, v, ptr)?;
            }
            return Ok(());
        }
        for start in (0..count).step_by(CHUNK) {
            let idx = self.helpers.len();
            let name = format!("n${idx}");
            self.helpers.push(String::new());
            let mut h = W::default();
            h.open(format!("function {name}(v: {ty}, p: string, out: WireError[]): void {{"));
            for i in start..count.min(start + CHUNK) {
                one(self, &mut h, i, "v", &Ptr { var: "p".into(), suffix: String::new() })?;
            }
            h.close("}");
            self.helpers[idx] = without_unused_locals(&h.out);
            w.line(format!("{name}({v}, {}, out);", ptr.expr()));
        }
        Ok(())
    }

    /// The function checking type `id`, with the role rules when it is the protocol's envelope.
    pub fn type_fn(&mut self, id: TypeId) -> Result<String, EmitError> {
        let t = self.m.ty(id);
        let mut w = W::default();
        w.line(format!("/** Checks a `{}` value. */", t.names.ts));
        w.open(format!("function {}(v: unknown, p: string, out: WireError[]): void {{", check_fn(self.m, id)));
        let envelope = self.m.protocol.as_ref().filter(|p| p.envelope == id);
        if envelope.is_some() {
            w.line("const before = out.length;");
        }
        self.node(&mut w, &t.node, "v", &Ptr { var: "p".into(), suffix: String::new() })?;
        if let Some(p) = envelope {
            w.open("if (out.length === before) {");
            self.roles(&mut w, p)?;
            w.close("}");
        }
        w.close("}");
        Ok(without_unused_locals(&w.out))
    }

    /// Everything generated: module constants, helpers, type functions.
    pub fn body(&mut self) -> Result<Code, EmitError> {
        let mut fns = Vec::new();
        for i in 0..self.m.types.len() {
            fns.push(self.type_fn(TypeId(i))?);
        }
        let mut out = String::new();
        for (name, decl) in &self.constants {
            out.push_str(&format!("const {name}{decl};\n"));
        }
        if !self.constants.is_empty() {
            out.push('\n');
        }
        for h in &self.helpers {
            out.push_str(h);
            out.push('\n');
        }
        for f in fns {
            out.push_str(&f);
            out.push('\n');
        }
        Ok(Code::from_pieces(out.trim_end().to_string()))
    }

    fn type_err(ptr: &Ptr, expected: &str, v: &str) -> String {
        format!("$type(out, {}, {}, {v});", ptr.expr(), string_lit(expected))
    }

    /// The checks of the value in variable `v` against `n`, at `ptr` (statements).
    fn node(&mut self, w: &mut W, n: &Node, v: &str, ptr: &Ptr) -> Result<(), EmitError> {
        let pe = ptr.expr();
        match &n.shape {
            Shape::Any => {}
            Shape::Never => w.line(push(&pe, Rule::Never, &msg("no value is allowed here"))),
            Shape::Ref(id) => {
                if id.0 >= self.m.types.len() {
                    return Err(at(n, "a reference to a type the model does not have"));
                }
                w.line(format!("{}({v}, {pe}, out);", check_fn(self.m, *id)));
            }
            Shape::Null => w.line(format!("if ({v} !== null) {}", Self::type_err(ptr, "null", v))),
            Shape::Boolean => {
                w.line(format!("if (typeof {v} !== \"boolean\") {}", Self::type_err(ptr, "a boolean", v)))
            }
            Shape::String(s) => {
                w.line(format!("if (typeof {v} !== \"string\") {}", Self::type_err(ptr, "a string", v)));
                if let Some(min) = s.min_length.filter(|m| *m > 0) {
                    let min = count(n, "minLength", min)?;
                    let cond = if min == 1 {
                        format!("{v}.length === 0")
                    } else {
                        format!("{v}.length < {} && ({v}.length < {min} || $chars({v}) < {min})", 2 * min)
                    };
                    let m = msg(&format!("must be at least {} long", counted(min, "character", "characters")));
                    w.line(format!("else if ({cond}) {}", push(&pe, Rule::MinLength, &m)));
                }
                if let Some(max) = s.max_length {
                    let max = count(n, "maxLength", max)?;
                    let m = msg(&format!("must be at most {} long", counted(max, "character", "characters")));
                    w.line(format!(
                        "else if ({v}.length > {max} && $chars({v}) > {max}) {}",
                        push(&pe, Rule::MaxLength, &m)
                    ));
                }
                if let Some(p) = &s.pattern {
                    let re = self.matcher(p);
                    let m = msg(&format!("does not match the pattern `{}`", p.source));
                    w.line(format!("else if (!{re}.test({v})) {}", push(&pe, Rule::Pattern, &m)));
                }
            }
            Shape::Number(s) => {
                let what = if s.integer { "an integer" } else { "a number" };
                // A JavaScript value may be NaN or ±Infinity, which no JSON text holds (and Zod refuses); an integer
                // test refuses them anyway.
                let finite = if s.integer { String::new() } else { format!(" || !Number.isFinite({v})") };
                w.line(format!("if (typeof {v} !== \"number\"{finite}) {}", Self::type_err(ptr, what, v)));
                if s.integer {
                    w.line(format!("else if (!Number.isInteger({v})) {}", Self::type_err(ptr, what, v)));
                }
                let lit = |f: f64| {
                    number_lit(f).map_err(|e| match e {
                        EmitError::Unsupported(m) => at(n, m),
                        o => o,
                    })
                };
                let bounds: [(Option<f64>, &str, Rule, &str); 4] = [
                    (s.minimum, "<", Rule::Minimum, "must be at least"),
                    (s.exclusive_minimum, "<=", Rule::ExclusiveMinimum, "must be greater than"),
                    (s.maximum, ">", Rule::Maximum, "must be at most"),
                    (s.exclusive_maximum, ">=", Rule::ExclusiveMaximum, "must be less than"),
                ];
                for (b, op, r, text) in bounds {
                    if let Some(b) = b {
                        let m = msg(&format!("{text} {}", crate::engine::number_text(b)));
                        w.line(format!("else if ({v} {op} {}) {}", lit(b)?, push(&pe, r, &m)));
                    }
                }
                if let Some(mo) = s.multiple_of {
                    let m = msg(&format!("must be a multiple of {}", crate::engine::number_text(mo)));
                    // The engine's test (`engine::is_multiple`): an integer quotient, or no remainder where the
                    // quotient says nothing (it overflows; for an integer `m`, it is 2^53 or more).
                    let test = if mo.fract() == 0.0 {
                        let mo = lit(mo)?;
                        format!("Math.abs({v} / {mo}) < 2 ** 53 ? Number.isInteger({v} / {mo}) : {v} % {mo} === 0")
                    } else {
                        let mo = lit(mo)?;
                        format!("Number.isFinite({v} / {mo}) ? Number.isInteger({v} / {mo}) : {v} % {mo} === 0")
                    };
                    w.line(format!("else if (!({test})) {}", push(&pe, Rule::MultipleOf, &m)));
                }
            }
            Shape::Const(c) => {
                let m = msg(&crate::engine::const_message(c));
                w.line(format!("if ({}) {}", not_equal(v, c), push(&pe, Rule::Const, &m)));
            }
            Shape::Enum(values) => {
                // Strings bare among strings only (`value_list`).
                let json = if values.iter().all(|x| x.is_string()) { "" } else { ", true" };
                let m = format!(
                    "\"`\" + $shownShort({v}{json}) + {}",
                    msg(&format!("` is not one of {}", value_list(values)))
                );
                let cond = if values.len() > KEY_CHAIN {
                    self.not_in(v, values)
                } else if values.is_empty() {
                    "true".to_string()
                } else {
                    values.iter().map(|x| not_equal(v, x)).collect::<Vec<_>>().join(" && ")
                };
                if values.iter().all(|x| x.is_string()) {
                    w.line(format!("if (typeof {v} !== \"string\") {}", Self::type_err(ptr, "a string", v)));
                    w.line(format!("else if ({cond}) {}", push(&pe, Rule::Enum, &m)));
                } else {
                    w.line(format!("if ({cond}) {}", push(&pe, Rule::Enum, &m)));
                }
            }
            Shape::Array(a) => self.array(w, n, a, v, ptr)?,
            Shape::Object(o) => self.object(w, n, o, v, ptr)?,
            Shape::Union(u) => self.union(w, n, u, v, ptr)?,
            Shape::Nullable(inner) => {
                w.open(format!("if ({v} !== null) {{"));
                self.node(w, inner, v, ptr)?;
                w.close("}");
            }
            Shape::Kinds(members) => {
                let mut words = Vec::new();
                for (i, x) in members.iter().enumerate() {
                    let (k, word) = kind_of(self.m, &x.shape);
                    words.push(word);
                    let test = match k {
                        "null" => format!("{v} === null"),
                        "array" => format!("Array.isArray({v})"),
                        "object" => format!("$isObject({v})"),
                        other => format!("typeof {v} === {}", string_lit(other)),
                    };
                    w.open(format!("{}if ({test}) {{", if i == 0 { "" } else { "} else " }));
                    self.node(w, x, v, ptr)?;
                    w.depth -= 1;
                }
                w.open("} else {");
                w.line(Self::type_err(ptr, &words.join(" or "), v));
                w.close("}");
            }
            Shape::AllOf(members) => {
                self.pieces(w, members.len(), (v, "unknown"), ptr, |this, w, i, v, ptr| {
                    this.node(w, &members[i], v, ptr)
                })?;
            }
            Shape::AnyOf(members) => {
                let mut fns = Vec::new();
                for x in members {
                    fns.push(self.helper(x)?);
                }
                let cond = if fns.len() > KEY_CHAIN {
                    let all = self.constant("any", format!(": readonly $Check[] = [{}]", fns.join(", ")));
                    format!("!{all}.some((f) => $ok(f, {v}))")
                } else if fns.is_empty() {
                    "true".to_string()
                } else {
                    let tests: Vec<String> = fns.iter().map(|f| format!("$ok({f}, {v})")).collect();
                    format!("!({})", tests.join(" || "))
                };
                let m = msg(&format!("matches none of the {} alternatives", members.len()));
                w.line(format!("if ({cond}) {}", push(&pe, Rule::AnyOf, &m)));
            }
            Shape::OneOf(members) => {
                let list = self.fresh("ok");
                let mut fns = Vec::new();
                for x in members {
                    fns.push(self.helper(x)?);
                }
                w.line(format!(
                    "const {list} = [{}].map((f, i) => ($ok(f, {v}) ? i : -1)).filter((i) => i >= 0);",
                    fns.join(", ")
                ));
                let none = msg(&format!("matches none of the {} alternatives (exactly one must match)", members.len()));
                w.line(format!("if ({list}.length === 0) {}", push(&pe, Rule::OneOf, &none)));
                let two = format!(
                    "\"matches alternatives \" + {list}[0] + \" and \" + {list}[1] + \" (exactly one must match)\""
                );
                w.line(format!("else if ({list}.length > 1) {}", push(&pe, Rule::OneOf, &two)));
            }
            Shape::Not(inner) => {
                let f = self.helper(inner)?;
                w.line(format!(
                    "if ($ok({f}, {v})) {}",
                    push(&pe, Rule::Not, &msg("matches a schema it must not match"))
                ));
            }
            Shape::Cond { cond, then, otherwise } => {
                let f = self.helper(cond)?;
                w.open(format!("if ($ok({f}, {v})) {{"));
                if let Some(t) = then {
                    self.node(w, t, v, ptr)?;
                }
                w.depth -= 1;
                w.open("} else {");
                if let Some(e) = otherwise {
                    self.node(w, e, v, ptr)?;
                }
                w.close("}");
            }
            Shape::Unevaluated { inner, rest, items } => {
                self.node(w, inner, v, ptr)?;
                let plan = super::evaluation::literal(&self.m.evaluation(inner), self)?;
                let plan = self.constant("plan", format!(": $Evaluation = {plan}"));
                let (e, k, x, pv) = (self.fresh("e"), self.fresh("k"), self.fresh("v"), self.fresh("p"));
                let guard = if *items { format!("Array.isArray({v})") } else { format!("$isObject({v})") };
                w.open(format!("if ({guard}) {{"));
                w.line(format!("const {e} = new Set<string>();"));
                w.line(format!("$evaluated({plan}, {v}, {e});"));
                if *items {
                    w.open(format!("for (let {k} = 0; {k} < {v}.length; {k}++) {{"));
                    w.line(format!("if ({e}.has(String({k}))) continue;"));
                    w.line(format!("const {pv} = {} + \"/\" + {k};", ptr.expr()));
                } else {
                    w.open(format!("for (const {k} in {v}) {{"));
                    w.line(format!("if (!Object.hasOwn({v}, {k}) || {e}.has({k})) continue;"));
                    w.line(format!("const {pv} = {};", ptr.dynamic(&k)));
                }
                if matches!(rest.shape, Shape::Never) && !items {
                    // A property `false` refuses is an unknown property; an item gets `false`'s own error.
                    let m = format!("\"unknown property `\" + {k} + \"`\"");
                    w.line(push(&pv, Rule::AdditionalProperty, &m));
                } else {
                    w.line(format!("const {x}: unknown = {v}[{k}];"));
                    self.node(w, rest, &x, &Ptr { var: pv, suffix: String::new() })?;
                }
                w.close("}");
                w.close("}");
            }
            Shape::Dependent { property, then } => {
                w.open(format!("if ($isObject({v}) && Object.hasOwn({v}, {})) {{", string_lit(property)));
                // The same value, not narrowed to an object: `then` may test any kind.
                let x = self.fresh("v");
                w.line(format!("const {x}: unknown = {v};"));
                self.node(w, then, &x, ptr)?;
                w.close("}");
            }
        }
        Ok(())
    }

    fn array(&mut self, w: &mut W, n: &Node, a: &ArrayShape, v: &str, ptr: &Ptr) -> Result<(), EmitError> {
        w.open(format!("if (!Array.isArray({v})) {{"));
        w.line(Self::type_err(ptr, "an array", v));
        w.depth -= 1;
        w.open("} else {");
        self.pieces(w, a.prefix.len(), (v, "unknown[]"), ptr, |this, w, i, v, ptr| {
            let x = this.fresh("v");
            w.open(format!("if ({v}.length > {i}) {{"));
            w.line(format!("const {x}: unknown = {v}[{i}];"));
            this.node(w, &a.prefix[i], &x, &ptr.key(&i.to_string()))?;
            w.close("}");
            Ok(())
        })?;
        if let Some(items) = a.items.as_deref().filter(|i| !matches!(i.shape, Shape::Any)) {
            let (i, x, pv) = (self.fresh("i"), self.fresh("v"), self.fresh("p"));
            w.open(format!("for (let {i} = {}; {i} < {v}.length; {i}++) {{", a.prefix.len()));
            w.line(format!("const {x}: unknown = {v}[{i}];"));
            w.line(format!("const {pv} = {} + \"/\" + {i};", ptr.expr()));
            self.node(w, items, &x, &Ptr { var: pv, suffix: String::new() })?;
            w.close("}");
        }
        let pe = ptr.expr();
        let mut first = true;
        let mut kw = |w: &mut W, cond: String, r: Rule, m: String| {
            w.line(format!("{}if ({cond}) {}", if first { "" } else { "else " }, push(&pe, r, &m)));
            first = false;
        };
        if let Some(k) = a.min_items {
            let k = count(n, "minItems", k)?;
            kw(
                w,
                format!("{v}.length < {k}"),
                Rule::MinItems,
                msg(&format!("must have at least {}", counted(k, "item", "items"))),
            );
        }
        if let Some(k) = a.max_items {
            let k = count(n, "maxItems", k)?;
            kw(
                w,
                format!("{v}.length > {k}"),
                Rule::MaxItems,
                msg(&format!("must have at most {}", counted(k, "item", "items"))),
            );
        }
        // Uniqueness, then `contains`, only when what comes before holds (the engine stops at the first): after a
        // count, in an `else` block.
        let later = a.unique || a.contains.is_some();
        if later && !first {
            w.open("else {");
        }
        let mut opened = 0;
        if a.unique {
            let d = self.fresh("d");
            w.line(format!("const {d} = $firstDuplicate({v});"));
            let m = format!("\"items \" + {d}[0] + \" and \" + {d}[1] + \" are equal\"");
            if a.contains.is_some() {
                w.open(format!("if ({d} !== null) {{"));
                w.line(push(&pe, Rule::UniqueItems, &m));
                w.depth -= 1;
                w.open("} else {");
                opened += 1;
            } else {
                w.line(format!("if ({d} !== null) {}", push(&pe, Rule::UniqueItems, &m)));
            }
        }
        if let Some(c) = &a.contains {
            let f = self.helper(&c.node)?;
            let (k, x) = (self.fresh("n"), self.fresh("x"));
            w.line(format!("let {k} = 0;"));
            w.line(format!("for (const {x} of {v}) if ($ok({f}, {x})) {k}++;"));
            let found = |bound: &str, n: u64| {
                format!(
                    "{} + {k} + \" found)\"",
                    msg(&format!("must contain at {bound} {} matching `contains` (", counted(n, "item", "items")))
                )
            };
            let min = count(n, "minContains", c.min)?;
            let mut cond = format!("if ({k} < {min}) {}", push(&pe, Rule::Contains, &found("least", min)));
            if let Some(max) = c.max {
                let max = count(n, "maxContains", max)?;
                cond.push_str(&format!(" else if ({k} > {max}) {}", push(&pe, Rule::Contains, &found("most", max))));
            }
            w.line(cond);
        }
        for _ in 0..opened {
            w.close("}");
        }
        if later && !first {
            w.close("}");
        }
        w.close("}");
        Ok(())
    }

    fn object(&mut self, w: &mut W, n: &Node, o: &ObjectShape, v: &str, ptr: &Ptr) -> Result<(), EmitError> {
        w.open(format!("if (!$isObject({v})) {{"));
        w.line(Self::type_err(ptr, "an object", v));
        w.depth -= 1;
        w.open("} else {");
        let ov = self.fresh("o");
        w.line(format!("const {ov}: $Object = {v};"));
        self.pieces(w, o.fields.len(), (&ov, "$Object"), ptr, |this, w, i, ov, ptr| {
            let f = &o.fields[i];
            let fp = ptr.key(&f.name);
            let x = this.fresh("v");
            w.line(format!("const {x} = {};", read(ov, &f.name)));
            if f.required {
                let m = msg(&format!("missing required property `{}`", f.name));
                w.line(format!("if ({x} === undefined) {}", push(&fp.expr(), Rule::Required, &m)));
                w.open("else {");
            } else {
                w.open(format!("if ({x} !== undefined) {{"));
            }
            this.node(w, &f.node, &x, &fp)?;
            w.close("}");
            Ok(())
        })?;
        self.pieces(w, o.required_only.len(), (&ov, "$Object"), ptr, |_, w, i, ov, ptr| {
            let r = &o.required_only[i];
            let m = msg(&format!("missing required property `{r}`"));
            // A key that holds `undefined` is absent, as for the declared properties.
            w.line(format!("if ({} === undefined) {}", read(ov, r), push(&ptr.key(r).expr(), Rule::Required, &m)));
            Ok(())
        })?;
        self.pieces(w, o.dependent_required.len(), (&ov, "$Object"), ptr, |_, w, i, ov, ptr| {
            let (k, deps) = &o.dependent_required[i];
            w.open(format!("if ({} !== undefined) {{", read(ov, k)));
            for d in deps {
                let m = msg(&format!("`{d}` is required when `{k}` is present"));
                w.line(format!(
                    "if ({} === undefined) {}",
                    read(ov, d),
                    push(&ptr.key(d).expr(), Rule::DependentRequired, &m)
                ));
            }
            w.close("}");
            Ok(())
        })?;
        let needs_loop =
            !o.pattern_properties.is_empty() || matches!(o.additional, Additional::Closed | Additional::Schema(_));
        if needs_loop {
            let k = self.fresh("k");
            w.open(format!("for (const {k} in {ov}) {{"));
            w.line(format!("if (!Object.hasOwn({ov}, {k})) continue;"));
            let known = self.fresh("known");
            if o.fields.is_empty() {
                w.line(format!("let {known} = false;"));
            } else if o.fields.len() > KEY_CHAIN {
                let names: Vec<String> = o.fields.iter().map(|f| string_lit(&f.name).to_string()).collect();
                let keys = self.constant("keys", format!(" = new Set<string>([{}])", names.join(", ")));
                w.line(format!("let {known} = {keys}.has({k});"));
            } else {
                let names: Vec<String> = o.fields.iter().map(|f| format!("{k} === {}", string_lit(&f.name))).collect();
                w.line(format!("let {known} = {};", names.join(" || ")));
            }
            for (p, pn) in &o.pattern_properties {
                let re = self.matcher(p);
                w.open(format!("if ({re}.test({k})) {{"));
                w.line(format!("{known} = true;"));
                let x = self.fresh("v");
                w.line(format!("const {x}: unknown = {ov}[{k}];"));
                let pv = self.fresh("p");
                w.line(format!("const {pv} = {};", ptr.dynamic(&k)));
                self.node(w, pn, &x, &Ptr { var: pv, suffix: String::new() })?;
                w.close("}");
            }
            w.line(format!("if ({known}) continue;"));
            match &o.additional {
                Additional::Open | Additional::Strip => {}
                Additional::Schema(an) => {
                    let x = self.fresh("v");
                    w.line(format!("const {x}: unknown = {ov}[{k}];"));
                    let pv = self.fresh("p");
                    w.line(format!("const {pv} = {};", ptr.dynamic(&k)));
                    self.node(w, an, &x, &Ptr { var: pv, suffix: String::new() })?;
                }
                Additional::Closed => {
                    if !o.removed.is_empty() {
                        w.open(format!("switch ({k}) {{"));
                        for r in &o.removed {
                            let m = msg(&format!(
                                "`{}` was removed from `{}` in this version: use `{}` instead",
                                r.name, r.owner, r.replacement
                            ));
                            w.line(format!("case {}:", string_lit(&r.name)));
                            w.line(format!("  {}", push(&ptr.key(&r.name).expr(), Rule::RemovedProperty, &m)));
                            w.line("  continue;");
                        }
                        w.close("}");
                    }
                    let m = format!("\"unknown property `\" + {k} + \"`\"");
                    w.line(push(&ptr.dynamic(&k), Rule::AdditionalProperty, &m));
                }
            }
            w.close("}");
        }
        if let Some(pn) = &o.property_names {
            let f = self.helper(pn)?;
            let k = self.fresh("k");
            w.open(format!("for (const {k} in {ov}) {{"));
            w.line(format!("if (!Object.hasOwn({ov}, {k})) continue;"));
            let why = self.fresh("why");
            w.line(format!("const {why} = $why({f}, {k});"));
            // The engine's words: the name, then why its schema refuses it.
            let m = format!("\"the property name `\" + {k} + \"` is not allowed: \" + {why}");
            w.line(format!("if ({why} !== null) {}", push(&ptr.dynamic(&k), Rule::PropertyNames, &m)));
            w.close("}");
        }
        if o.min_properties.is_some() || o.max_properties.is_some() {
            let c = self.fresh("count");
            // Keys that hold `undefined` are absent.
            let k = self.fresh("k");
            w.line(format!("let {c} = 0;"));
            w.line(format!("for (const {k} in {ov}) if (Object.hasOwn({ov}, {k}) && {ov}[{k}] !== undefined) {c}++;"));
            let pe = ptr.expr();
            let mut first = true;
            if let Some(k) = o.min_properties {
                let k = count(n, "minProperties", k)?;
                let m = msg(&format!("must have at least {}", counted(k, "property", "properties")));
                w.line(format!("if ({c} < {k}) {}", push(&pe, Rule::MinProperties, &m)));
                first = false;
            }
            if let Some(k) = o.max_properties {
                let k = count(n, "maxProperties", k)?;
                let m = msg(&format!("must have at most {}", counted(k, "property", "properties")));
                w.line(format!(
                    "{}if ({c} > {k}) {}",
                    if first { "" } else { "else " },
                    push(&pe, Rule::MaxProperties, &m)
                ));
            }
        }
        w.close("}");
        Ok(())
    }

    fn union(&mut self, w: &mut W, n: &Node, u: &UnionShape, v: &str, ptr: &Ptr) -> Result<(), EmitError> {
        if u.members.is_empty() {
            return Err(at(n, "a union without members"));
        }
        w.open(format!("if (!$isObject({v})) {{"));
        w.line(Self::type_err(ptr, "an object", v));
        w.depth -= 1;
        w.open("} else {");
        let tp = ptr.key(&u.discriminator);
        let t = self.fresh("t");
        w.line(format!("const {t} = {};", read(v, &u.discriminator)));
        let m = msg(&format!("missing required property `{}`", u.discriminator));
        w.line(format!("if ({t} === undefined) {}", push(&tp.expr(), Rule::Required, &m)));
        for mem in &u.members {
            w.line(format!(
                "else if ({t} === {}) {}({v}, {}, out);",
                json_lit(&mem.tag),
                check_fn(self.m, mem.ty),
                ptr.expr()
            ));
        }
        // A value of the wrong JSON type for every member is a type error; else a removed or unknown member.
        let mut kinds: Vec<&str> = u
            .members
            .iter()
            .map(|m| match &m.tag {
                serde_json::Value::String(_) => "string",
                serde_json::Value::Bool(_) => "boolean",
                _ => "number",
            })
            .collect();
        kinds.dedup();
        let kind_test: Vec<String> = kinds.iter().map(|k| format!("typeof {t} !== {}", string_lit(k))).collect();
        w.line(format!("else if ({}) {}", kind_test.join(" && "), Self::type_err(&tp, &u.expected_tag(), &t)));
        for (old, rep) in &u.removed {
            if u.members.iter().any(|m| m.tag.as_str() == Some(old.as_str())) {
                continue;
            }
            let m = msg(&format!("`{old}` was removed in this version: use `{rep}` instead"));
            w.line(format!("else if ({t} === {}) {}", string_lit(old), push(&tp.expr(), Rule::RemovedEvent, &m)));
        }
        let tags: Vec<serde_json::Value> = u.members.iter().map(|m| m.tag.clone()).collect();
        let text = format!("$shown({t})");
        let (r, tail) = if u.events {
            (Rule::UnknownEvent, format!("` is not an event; expected one of {}", value_list(&tags)))
        } else {
            (Rule::UnknownVariant, format!("` names no member; expected one of {}", value_list(&tags)))
        };
        let m = format!("\"`\" + {text} + {}", msg(&tail));
        w.line(format!("else {}", push(&tp.expr(), r, &m)));
        w.close("}");
        Ok(())
    }

    /// The role rules ([`Protocol::role_rules`]) on an envelope whose shape is valid, in the engine's order.
    fn roles(&mut self, w: &mut W, p: &Protocol) -> Result<(), EmitError> {
        let disc = p.discriminator(self.m);
        let base = Ptr { var: "p".into(), suffix: String::new() };
        w.line("const o = v as $Object;");
        w.line(format!("const role = {} as string;", read("o", &p.role_field)));
        w.line(format!("const ev = {} as $Object;", read("o", &p.union_field)));
        w.open(format!("switch ({}) {{", read("ev", disc)));
        let all = &p.roles;
        for e in &p.events {
            let mut lines = Vec::new();
            for r in p.role_rules(e) {
                let (allowed, present, ptr, rl, text) = match r {
                    RoleRule::Event { allowed } => (
                        allowed,
                        None,
                        base.key(&p.role_field),
                        Rule::RoleEvent,
                        format!("`{}` may be sent only by {}, not by ", e.tag, allowed.join(" or ")),
                    ),
                    RoleRule::EnvelopeField { name, allowed } => (
                        allowed,
                        Some(format!("{} !== undefined", read("o", name))),
                        base.key(name),
                        Rule::RoleField,
                        format!("`{name}` may be sent only by {}, not by ", allowed.join(" or ")),
                    ),
                    RoleRule::EventField { name, allowed } => (
                        allowed,
                        Some(format!("{} !== undefined", read("ev", name))),
                        base.key(&p.union_field).key(name),
                        Rule::RoleField,
                        format!("`{name}` may be sent only by {}, not by ", allowed.join(" or ")),
                    ),
                };
                if all.iter().all(|x| allowed.contains(x)) {
                    continue;
                }
                let forbidden: Vec<String> =
                    all.iter().filter(|x| allowed.contains(x)).map(|x| format!("role !== {}", string_lit(x))).collect();
                let mut cond = if forbidden.is_empty() { "true".to_string() } else { forbidden.join(" && ") };
                if let Some(c) = present {
                    cond = format!("{cond} && {c}");
                }
                let m = format!("{} + role", msg(&text));
                lines.push(format!("  if ({cond}) {}", push(&ptr.expr(), rl, &m)));
            }
            if !lines.is_empty() {
                w.line(format!("case {}:", string_lit(&e.tag)));
                for l in lines {
                    w.line(l);
                }
                w.line("  break;");
            }
        }
        w.close("}");
        Ok(())
    }
}

/// Reads property `name` of the object in `obj`: `o.name`, `o["a-b"]`, or an own-property read for a name
/// `Object.prototype` has.
/// One generated function without the locals nothing reads (`const v6: unknown = o1[k4];` under a schema that
/// checks nothing; each such declaration reads or computes a value and has no other effect) and with `_` before a
/// parameter its body never reads, so a module passes TypeScript's `noUnusedLocals` and `noUnusedParameters`.
fn without_unused_locals(function: &str) -> String {
    let local = |line: &str| -> Option<String> {
        let rest = line.trim_start().strip_prefix("const ").or_else(|| line.trim_start().strip_prefix("let "))?;
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$').collect();
        // Only the generator's own fresh names (`v6`, `p7`, `count3`): a letter, then digits at the end.
        let fresh = name.starts_with(|c: char| c.is_ascii_lowercase()) && name.ends_with(|c: char| c.is_ascii_digit());
        (fresh && line.ends_with(';')).then_some(name)
    };
    let lines: Vec<&str> = function.lines().collect();
    // Blanking keeps every byte in place, so the code's lines are the function's lines.
    let code = super::without_comments_and_strings(function);
    let names: Vec<Vec<&str>> = code.lines().map(identifiers).collect();
    let mut count: HashMap<&str, usize> = HashMap::new();
    for name in names.iter().flatten() {
        *count.entry(name).or_default() += 1;
    }
    let locals: Vec<Option<String>> = lines.iter().map(|l| local(l)).collect();
    let mut declared: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, name) in locals.iter().enumerate() {
        if let Some(name) = name {
            declared.entry(name.as_str()).or_default().push(i);
        }
    }
    // A declaration its own line alone names goes, and with it what it named: one pass over a work list, so a
    // function of n locals costs n lookups, not n scans of the function.
    let mut kept = vec![true; lines.len()];
    let mut work: Vec<usize> = declared.values().flatten().copied().collect();
    while let Some(i) = work.pop() {
        let Some(name) = &locals[i] else { continue };
        if !kept[i] || count.get(name.as_str()).is_some_and(|&n| n > 1) {
            continue;
        }
        kept[i] = false;
        for used in names.get(i).into_iter().flatten() {
            let n = count.entry(used).or_default();
            *n = n.saturating_sub(1);
            if *n <= 1 {
                work.extend(declared.get(used).into_iter().flatten());
            }
        }
    }
    let lines: Vec<&str> = lines.iter().zip(&kept).filter(|(_, k)| **k).map(|(l, _)| *l).collect();
    let mut out = String::with_capacity(function.len());
    let header = lines.iter().position(|l| l.starts_with("function ")).unwrap_or(0);
    let body = super::without_comments_and_strings(&lines[header + 1..].join("\n"));
    for (i, line) in lines.iter().enumerate() {
        if i == header {
            let mut h = line.to_string();
            for param in ["v", "p", "out"] {
                if !super::uses(&body, param) {
                    h = h.replacen(&format!("({param}: "), &format!("(_{param}: "), 1);
                    h = h.replacen(&format!(" {param}: "), &format!(" _{param}: "), 1);
                }
            }
            out.push_str(&h);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// The identifiers `code` names, in order (whole words, not `.name` members).
fn identifiers(code: &str) -> Vec<&str> {
    let part = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !part(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && part(b[i]) {
            i += 1;
        }
        if start == 0 || b[start - 1] != b'.' {
            out.push(&code[start..i]);
        }
    }
    out
}

fn read(obj: &str, name: &str) -> String {
    if INHERITED.contains(&name) {
        return format!("$own({obj}, {})", string_lit(name));
    }
    // Bracketed even for an identifier: `$Object` is an index signature, and TypeScript's
    // `noPropertyAccessFromIndexSignature` refuses `o.name` on one (a minifier writes it back as `o.name`).
    format!("{obj}[{}]", string_lit(name))
}

/// The condition "`v` is not the JSON value `c`".
fn not_equal(v: &str, c: &serde_json::Value) -> String {
    match c {
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => format!("!$jsonEqual({v}, {})", json_lit(c)),
        serde_json::Value::Number(x) => match x.as_f64().and_then(|f| number_lit(f).ok()) {
            Some(l) => format!("{v} !== {l}"),
            None => "true".to_string(),
        },
        other => format!("{v} !== {}", json_lit(other)),
    }
}
