//! The message validation engine behind `wiregen validate` and `wiregen serve`: interprets the [`Model`] over a
//! parsed JSON value and reports located errors with stable rule ids ([`crate::rules`]).
//!
//! This is the reference for what every generated checker reports; the order of checks is the one documented in
//! [`crate::rules`]: a node's own keywords first (its type, then the keywords of that type, in the order below),
//! then `$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`; an object's declared properties in schema order, each in
//! depth, then the other properties in input order, then its counts; an array's elements in order, then its
//! counts and uniqueness; the protocol's role rules once the envelope's shape is valid.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::diag::push_escaped;
use crate::ir::*;
use crate::rules::Rule;

pub mod deadline;
mod json;
pub use json::{Json, Object};

/// One error in one message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    /// JSON Pointer into the message (`""` for the whole line).
    pub pointer: String,
    /// Stable rule id (a [`Rule`] id or a stream rule id).
    pub rule: &'static str,
    /// Human explanation.
    pub message: String,
    /// For a sequence rule: the earlier line the violation relates to (the line that opened the turn, started the
    /// call, sent the request, first used the id, set the mark), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related: Option<usize>,
    /// For a sequence rule: the earlier *rejected* line this violation only follows from (a rejected line that
    /// would have opened or closed what this one needs), when there is one: fix that line and this one goes away.
    #[serde(rename = "causedBy", skip_serializing_if = "Option::is_none")]
    pub caused_by: Option<usize>,
}

impl Issue {
    /// An issue for a message-level rule.
    pub fn new(rule: Rule, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Issue { pointer: pointer.into(), rule: rule.id(), message: message.into(), related: None, caused_by: None }
    }

    /// The lines a sequence violation relates to, as the text outputs say them: ` (see line 3; follows from
    /// rejected line 2)`, empty when there are none. `rejected` is the word for a line left out (`rejected`,
    /// `refused`).
    pub fn links(&self, rejected: &str) -> String {
        let mut links = Vec::new();
        if let Some(l) = self.related {
            links.push(format!("see line {l}"));
        }
        if let Some(l) = self.caused_by {
            links.push(format!("follows from {rejected} line {l}"));
        }
        if links.is_empty() {
            String::new()
        } else {
            format!(" ({})", links.join("; "))
        }
    }
}

/// What `validate` and `serve` say when `--strict-ids` is given with a schema that has no strict id pattern
/// ([`crate::ir::Model::has_strict_patterns`]): the option then checks nothing more.
pub const NO_STRICT_PATTERN: &str =
    "--strict-ids: the schema declares no strict id pattern (`x-strict-pattern`), so it checks nothing more";

/// Engine settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EngineOptions {
    /// Check the cuid2 shape of ids (`x-strict-pattern`).
    pub strict_ids: bool,
    /// Report at most this many errors per message (the first ones, in the usual order); `None` reports every
    /// error. A bound keeps the memory one hostile message costs in proportion to its size, whatever it holds.
    pub max_errors: Option<usize>,
}

/// A compiled validator for one type of a model (by default its root). It owns (a shared handle to) its model,
/// so it can live as long as needed (a server keeps one for its lifetime) and is cheap to clone.
#[derive(Debug, Clone)]
pub struct Engine {
    model: Arc<Model>,
    root: TypeId,
    /// Every pattern of the model, compiled once, by ECMA-262 source.
    regexes: BTreeMap<String, regex::Regex>,
    strict_ids: bool,
    max_errors: usize,
    fast: Option<crate::fast::FastPlan>,
    /// The evaluation plan of each `unevaluatedProperties`' inner node, by the node's address in the model.
    evaluations: Arc<std::collections::HashMap<usize, Evaluation>>,
    /// The protocol's sequence declarations, compiled on first use (shared by clones).
    sequence: Arc<std::sync::OnceLock<crate::stream::Compiled>>,
}

/// The deepest nesting accepted (arrays and objects, the envelope itself included): serde_json's own recursion
/// limit, so the parser can never overflow the stack. Every checker applies the same bound.
pub const MAX_DEPTH: usize = 127;

/// How many errors `wiregen validate` and `wiregen serve` report per message at most (the first ones): enough to
/// fix a message, and a bound on what one hostile message (say, a million unknown keys) costs in memory.
pub const REPORTED_ERRORS: usize = 100;

/// Why an engine cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EngineError {
    /// The model has no root type and none was named.
    NoRoot,
    /// No type has this name.
    UnknownType(String),
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineError::NoRoot => f.write_str(
                "the schema names no root type (`x-root`; a file root that holds only `$defs` and annotations is \
                 their container, no type); say which type to check",
            ),
            EngineError::UnknownType(t) => write!(f, "the schema has no type named `{t}`"),
        }
    }
}

impl std::error::Error for EngineError {}

impl Engine {
    /// Compiles the engine for the model's root type.
    ///
    /// # Errors
    /// [`EngineError::NoRoot`] when the model has no root type.
    pub fn new(model: impl Into<Arc<Model>>, opts: EngineOptions) -> Result<Self, EngineError> {
        let model = model.into();
        let root = model.root.ok_or(EngineError::NoRoot)?;
        Ok(Self::for_type(model, root, opts))
    }

    /// Compiles the engine for the type named `name`: its base, Rust, TypeScript or Zod name, or its name in the
    /// bundled schema's `$defs` (an event's is `<base>Event`), so that the name a reader of any output sees works.
    ///
    /// # Errors
    /// [`EngineError::UnknownType`].
    pub fn for_type_named(model: impl Into<Arc<Model>>, name: &str, opts: EngineOptions) -> Result<Self, EngineError> {
        let model = model.into();
        let id = model
            .type_named(name)
            .or_else(|| {
                let defs = crate::emit::schema::def_names(&model).ok()?;
                defs.iter().position(|d| d == name).map(TypeId)
            })
            .ok_or_else(|| EngineError::UnknownType(name.to_string()))?;
        Ok(Self::for_type(model, id, opts))
    }

    /// Compiles the engine for one type of the model.
    pub fn for_type(model: impl Into<Arc<Model>>, root: TypeId, opts: EngineOptions) -> Self {
        let model = model.into();
        let mut regexes = BTreeMap::new();
        model.visit_patterns(&mut |p: &Pattern, strict: bool| {
            if strict && !opts.strict_ids {
                return;
            }
            if !regexes.contains_key(&p.source) {
                // The loader compiled every pattern already; one that fails here matches nothing.
                let re = regex::Regex::new(&p.rust).unwrap_or_else(|_| never_regex());
                regexes.insert(p.source.clone(), re);
            }
        });
        let fast = crate::fast::FastPlan::new(&model, root, opts.strict_ids);
        let max_errors = opts.max_errors.unwrap_or(usize::MAX).max(1);
        let mut evaluations = std::collections::HashMap::new();
        for t in &model.types {
            t.node.visit(&mut |n: &Node| {
                if let Shape::Unevaluated { inner, .. } = &n.shape {
                    evaluations.insert(node_key(inner), model.evaluation(inner));
                }
            });
        }
        let evaluations = Arc::new(evaluations);
        Engine {
            model,
            root,
            regexes,
            strict_ids: opts.strict_ids,
            max_errors,
            fast,
            evaluations,
            sequence: Arc::default(),
        }
    }

    /// The model this engine checks.
    pub fn model(&self) -> &Arc<Model> {
        &self.model
    }

    /// The type this engine checks.
    pub fn root(&self) -> TypeId {
        self.root
    }

    /// Checks one line, taking the fast path (the `fast` module) and explaining with the precise path only when
    /// the fast path cannot vouch for the line. Same verdict and errors as [`Engine::check_line`].
    pub fn check_line_fast(&self, line: &[u8]) -> Vec<Issue> {
        if self.is_valid_fast(line) {
            return Vec::new();
        }
        self.check_text(line).unwrap_or_else(|issue| vec![issue])
    }

    /// The precise path on one line: its errors, or the one issue that it is not JSON.
    pub(crate) fn check_text(&self, line: &[u8]) -> Result<Vec<Issue>, Issue> {
        Ok(self.check_json(&parse_json(line)?))
    }

    /// The fast verdict alone: `true` only when the line is certainly valid (see the `fast` module).
    pub fn is_valid_fast(&self, line: &[u8]) -> bool {
        let Some(plan) = &self.fast else { return false };
        crate::fast::is_valid(plan, &|src: &str, v: &str| self.matches(src, v), line)
    }

    /// The fast verdict of a line, recording where the values `cap` asks for are when it is certainly valid.
    pub(crate) fn capture_fast(
        &self,
        line: &[u8],
        cap: &crate::fast::CapturePlan,
        out: &mut crate::fast::Captured,
    ) -> bool {
        let Some(plan) = &self.fast else { return false };
        crate::fast::capture(plan, &|src: &str, v: &str| self.matches(src, v), line, cap, out)
    }

    /// Whether `v` matches the model's pattern with ECMA-262 source `src` (the fast path's pattern check).
    fn matches(&self, src: &str, v: &str) -> bool {
        self.regexes.get(src).is_none_or(|re| re.is_match(v))
    }

    /// The capture plan of the fast path for these values ([`crate::fast::FastPlan::capture_plan`]).
    pub(crate) fn capture_plan(&self, reads: &[(bool, String)]) -> Option<crate::fast::CapturePlan> {
        self.fast.as_ref()?.capture_plan(reads)
    }

    /// The protocol's sequence declarations, compiled once for this engine (and its clones).
    pub(crate) fn sequence(&self) -> &crate::stream::Compiled {
        self.sequence.get_or_init(|| crate::stream::Compiled::new(self))
    }

    /// Parses one line (without its newline) and checks it. Returns the parsed value when the line is JSON.
    pub fn check_line(&self, line: &[u8]) -> (Option<Value>, Vec<Issue>) {
        match self.check_text(line) {
            // The checked tree is gone before the `Value` is built: a line costs one tree at a time.
            Ok(issues) => (serde_json::from_slice(line).ok(), issues),
            Err(issue) => (None, vec![issue]),
        }
    }

    /// Checks a parsed value against the engine's type: every error, the canonical first error first. A value
    /// nesting deeper than [`MAX_DEPTH`] levels, which no line may hold (one built in code, or parsed without
    /// serde_json's recursion limit), is `too-deep` at the root, as a line is: its depth is measured without
    /// recursion before anything else, so no value can exhaust the stack.
    pub fn check_value(&self, v: &Value) -> Vec<Issue> {
        if !json::depth_within(v, MAX_DEPTH) {
            return vec![Issue::new(Rule::TooDeep, "", too_deep_message())];
        }
        self.check_json(&Json::from_value(v))
    }

    /// [`Engine::check_value`] on the tree the precise path parses lines into ([`parse_json`]).
    pub fn check_json(&self, v: &Json<'_>) -> Vec<Issue> {
        let mut out = Vec::new();
        self.check_type(self.root, v, &Ptr::ROOT, &mut out);
        out.truncate(self.max_errors);
        out
    }

    /// Whether the error list is as long as it may get: the rest of the value need not be looked at.
    fn full(&self, out: &[Issue]) -> bool {
        out.len() >= self.max_errors
    }

    /// Whether a value is valid for a node (no error list is built).
    fn valid(&self, n: &Node, v: &Json<'_>) -> bool {
        let mut out = Vec::new();
        self.check(n, v, &Ptr::ROOT, &mut out);
        out.is_empty()
    }

    /// Checks a parsed value against another type of this engine's model: its errors, the first first.
    pub(crate) fn check_value_as(&self, id: TypeId, v: &Value) -> Vec<Issue> {
        let mut out = Vec::new();
        self.check_type(id, &Json::from_value(v), &Ptr::ROOT, &mut out);
        out.truncate(self.max_errors);
        out
    }

    /// Whether a value is valid for a node of this engine's model (what `wiregen diff` asks of a side).
    pub(crate) fn accepts(&self, n: &Node, v: &Value) -> bool {
        self.valid(n, &Json::from_value(v))
    }

    fn check_type(&self, id: TypeId, v: &Json<'_>, ptr: &Ptr<'_>, out: &mut Vec<Issue>) {
        let t = self.model.ty(id);
        let before = out.len();
        self.check(&t.node, v, ptr, out);
        if out.len() == before {
            if let Some(p) = self.model.protocol.as_ref().filter(|p| p.envelope == id) {
                self.roles(p, v, ptr, out);
            }
        }
    }

    fn check(&self, n: &Node, v: &Json<'_>, ptr: &Ptr<'_>, out: &mut Vec<Issue>) {
        deadline::tick();
        match &n.shape {
            Shape::Any => {}
            Shape::Never => out.push(Issue::new(Rule::Never, ptr.render(), "no value is allowed here")),
            Shape::Ref(id) => self.check_type(*id, v, ptr, out),
            Shape::Null => {
                if !v.is_null() {
                    out.push(type_issue(ptr, "null", v));
                }
            }
            Shape::Boolean => {
                if !v.is_boolean() {
                    out.push(type_issue(ptr, "a boolean", v));
                }
            }
            Shape::String(s) => {
                let Some(sv) = v.as_str() else { return out.push(type_issue(ptr, "a string", v)) };
                self.string(s, sv, ptr, out);
            }
            Shape::Number(s) => self.number(s, v, ptr, out),
            Shape::Const(c) => {
                if !equals(c, v) {
                    out.push(Issue::new(Rule::Const, ptr.render(), const_message(c)));
                }
            }
            Shape::Enum(values) => {
                if values.iter().all(Value::is_string) && !v.is_string() {
                    return out.push(type_issue(ptr, "a string", v));
                }
                if !values.iter().any(|x| equals(x, v)) {
                    // Bare among strings only: beside `3` and `null`, the string "3" is shown `"3"` ([`value_list`]).
                    let shown = match v.as_str() {
                        Some(s) if values.iter().all(Value::is_string) => format!("`{s}`"),
                        _ => short_json(v.shown_text()),
                    };
                    out.push(Issue::new(
                        Rule::Enum,
                        ptr.render(),
                        format!("{shown} is not one of {}", value_list(values)),
                    ));
                }
            }
            Shape::Array(a) => {
                let Some(items) = v.as_array() else { return out.push(type_issue(ptr, "an array", v)) };
                self.array(a, items, ptr, out);
            }
            Shape::Object(o) => {
                let Some(obj) = v.as_object() else { return out.push(type_issue(ptr, "an object", v)) };
                self.object(o, obj, ptr, out);
            }
            Shape::Union(u) => {
                let Some(obj) = v.as_object() else { return out.push(type_issue(ptr, "an object", v)) };
                self.union(u, v, obj, ptr, out);
            }
            Shape::Nullable(inner) => {
                if !v.is_null() {
                    self.check(inner, v, ptr, out);
                }
            }
            Shape::Kinds(members) => match members.iter().find(|m| kind_matches(&self.model, &m.shape, v)) {
                Some(m) => self.check(m, v, ptr, out),
                None => {
                    let expected: Vec<&str> = members.iter().map(|m| self.model.kind_word(&m.shape)).collect();
                    out.push(type_issue(ptr, &expected.join(" or "), v));
                }
            },
            Shape::AllOf(members) => members.iter().for_each(|m| self.check(m, v, ptr, out)),
            Shape::AnyOf(members) => {
                if !members.iter().any(|m| self.valid(m, v)) {
                    out.push(Issue::new(
                        Rule::AnyOf,
                        ptr.render(),
                        format!("matches none of the {} alternatives", members.len()),
                    ));
                }
            }
            Shape::OneOf(members) => {
                let matching: Vec<usize> = (0..members.len()).filter(|i| self.valid(&members[*i], v)).collect();
                match matching.as_slice() {
                    [_] => {}
                    [] => out.push(Issue::new(
                        Rule::OneOf,
                        ptr.render(),
                        format!("matches none of the {} alternatives (exactly one must match)", members.len()),
                    )),
                    [a, b, ..] => out.push(Issue::new(
                        Rule::OneOf,
                        ptr.render(),
                        format!("matches alternatives {a} and {b} (exactly one must match)"),
                    )),
                }
            }
            Shape::Not(inner) => {
                if self.valid(inner, v) {
                    out.push(Issue::new(Rule::Not, ptr.render(), "matches a schema it must not match"));
                }
            }
            Shape::Cond { cond, then, otherwise } => {
                let branch = if self.valid(cond, v) { then } else { otherwise };
                if let Some(b) = branch {
                    self.check(b, v, ptr, out);
                }
            }
            Shape::Dependent { property, then } => {
                if v.as_object().is_some_and(|o| o.contains_key(property)) {
                    self.check(then, v, ptr, out);
                }
            }
            Shape::Unevaluated { inner, rest, items } => {
                self.check(inner, v, ptr, out);
                self.unevaluated(inner, rest, *items, v, ptr, out);
            }
        }
    }

    /// The properties (with `items`, the items) of `v` that `inner` does not evaluate, each against `rest`, in
    /// input order; a property `false` refuses is an unknown property.
    fn unevaluated(&self, inner: &Node, rest: &Node, items: bool, v: &Json<'_>, ptr: &Ptr<'_>, out: &mut Vec<Issue>) {
        let len = match (items, v) {
            (false, Json::Object(o)) => o.len(),
            (true, Json::Array(a)) => a.len(),
            _ => return,
        };
        let mut seen = vec![false; len];
        match self.evaluations.get(&node_key(inner)) {
            Some(plan) => self.evaluate(plan, v, &mut seen),
            // A node copied out of the model (a plan's own nodes): its plan is made here.
            None => self.evaluate(&self.model.evaluation(inner), v, &mut seen),
        }
        match v {
            Json::Array(a) => {
                for (i, item) in a.iter().enumerate().filter(|(i, _)| !seen[*i]) {
                    if self.full(out) {
                        return;
                    }
                    self.check(rest, item, &ptr.key(&i.to_string()), out);
                }
            }
            Json::Object(o) => {
                for ((k, value), _) in o.iter().zip(&seen).filter(|(_, s)| !**s) {
                    if self.full(out) {
                        return;
                    }
                    match rest.shape {
                        Shape::Never => out.push(unknown_property(ptr, k)),
                        _ => self.check(rest, value, &ptr.key(k), out),
                    }
                }
            }
            _ => {}
        }
    }

    /// Marks in `seen` (a flag per property of `v`, an object, or per item, an array) what `plan` evaluates.
    fn evaluate(&self, plan: &Evaluation, v: &Json<'_>, seen: &mut [bool]) {
        match plan {
            Evaluation::None => {}
            Evaluation::Keys { names, patterns, rest } => {
                let Some(obj) = v.as_object() else { return };
                for ((k, _), s) in obj.iter().zip(seen.iter_mut()) {
                    if *rest || names.iter().any(|n| n == k) || patterns.iter().any(|p| self.matches(&p.source, k)) {
                        *s = true;
                    }
                }
            }
            Evaluation::Items { prefix, rest, contains } => {
                let Some(arr) = v.as_array() else { return };
                for (i, (item, s)) in arr.iter().zip(seen.iter_mut()).enumerate() {
                    if *rest || i < *prefix || contains.as_ref().is_some_and(|c| self.valid(c, item)) {
                        *s = true;
                    }
                }
            }
            Evaluation::All(plans) => plans.iter().for_each(|p| self.evaluate(p, v, seen)),
            Evaluation::Valid(plans) => {
                for (n, p) in plans {
                    if self.valid(n, v) {
                        self.evaluate(p, v, seen);
                    }
                }
            }
            Evaluation::Cond { cond, then, otherwise } => {
                let p = if self.valid(cond, v) { then } else { otherwise };
                self.evaluate(p, v, seen);
            }
            Evaluation::Dependent { property, then } => {
                if v.as_object().is_some_and(|o| o.contains_key(property)) {
                    self.evaluate(then, v, seen);
                }
            }
        }
    }

    fn string(&self, s: &StringShape, sv: &str, ptr: &Ptr<'_>, out: &mut Vec<Issue>) {
        if s.min_length.is_some() || s.max_length.is_some() {
            let len = sv.chars().count() as u64;
            if let Some(min) = s.min_length.filter(|m| len < *m) {
                return out.push(Issue::new(
                    Rule::MinLength,
                    ptr.render(),
                    format!("must be at least {} long", counted(min, "character", "characters")),
                ));
            }
            if let Some(max) = s.max_length.filter(|m| len > *m) {
                return out.push(Issue::new(
                    Rule::MaxLength,
                    ptr.render(),
                    format!("must be at most {} long", counted(max, "character", "characters")),
                ));
            }
        }
        if let Some(p) = &s.pattern {
            if !self.regexes.get(&p.source).is_some_and(|re| re.is_match(sv)) {
                return out.push(Issue::new(
                    Rule::Pattern,
                    ptr.render(),
                    format!("does not match the pattern `{}`", p.source),
                ));
            }
        }
        if self.strict_ids {
            if let Some(p) = &s.strict_pattern {
                if !self.regexes.get(&p.source).is_some_and(|re| re.is_match(sv)) {
                    out.push(Issue::new(
                        Rule::StrictId,
                        ptr.render(),
                        format!("`{sv}` is not a cuid2 id (pattern {})", p.source),
                    ));
                }
            }
        }
    }

    fn number(&self, s: &NumberShape, v: &Json<'_>, ptr: &Ptr<'_>, out: &mut Vec<Issue>) {
        let Some(n) = v.as_number().and_then(serde_json::Number::as_f64) else {
            return out.push(type_issue(ptr, if s.integer { "an integer" } else { "a number" }, v));
        };
        if s.integer && n.fract() != 0.0 {
            return out.push(type_issue(ptr, "an integer", v));
        }
        let r = ptr.render_lazy();
        if let Some(m) = s.minimum.filter(|m| n < *m) {
            return out.push(Issue::new(Rule::Minimum, r(), format!("must be at least {}", number_text(m))));
        }
        if let Some(m) = s.exclusive_minimum.filter(|m| n <= *m) {
            return out.push(Issue::new(
                Rule::ExclusiveMinimum,
                r(),
                format!("must be greater than {}", number_text(m)),
            ));
        }
        if let Some(m) = s.maximum.filter(|m| n > *m) {
            return out.push(Issue::new(Rule::Maximum, r(), format!("must be at most {}", number_text(m))));
        }
        if let Some(m) = s.exclusive_maximum.filter(|m| n >= *m) {
            return out.push(Issue::new(Rule::ExclusiveMaximum, r(), format!("must be less than {}", number_text(m))));
        }
        if let Some(m) = s.multiple_of.filter(|m| !is_multiple(n, *m)) {
            out.push(Issue::new(Rule::MultipleOf, r(), format!("must be a multiple of {}", number_text(m))));
        }
    }

    fn array(&self, a: &ArrayShape, items: &[Json<'_>], ptr: &Ptr<'_>, out: &mut Vec<Issue>) {
        let mut idx = String::new();
        for (i, item) in items.iter().enumerate() {
            if self.full(out) {
                return;
            }
            let node = match a.prefix.get(i) {
                Some(n) => Some(n),
                None => a.items.as_deref(),
            };
            if let Some(n) = node {
                idx.clear();
                idx.push_str(&i.to_string());
                self.check(n, item, &ptr.key(&idx), out);
            }
        }
        let len = items.len() as u64;
        if let Some(m) = a.min_items.filter(|m| len < *m) {
            return out.push(Issue::new(
                Rule::MinItems,
                ptr.render(),
                format!("must have at least {}", counted(m, "item", "items")),
            ));
        }
        if let Some(m) = a.max_items.filter(|m| len > *m) {
            return out.push(Issue::new(
                Rule::MaxItems,
                ptr.render(),
                format!("must have at most {}", counted(m, "item", "items")),
            ));
        }
        if a.unique {
            if let Some((i, j)) = json::first_duplicate(items) {
                return out.push(Issue::new(Rule::UniqueItems, ptr.render(), format!("items {i} and {j} are equal")));
            }
        }
        if let Some(c) = &a.contains {
            let matching = items.iter().filter(|item| self.valid(&c.node, item)).count() as u64;
            if let Some(message) = contains_message(c, matching) {
                out.push(Issue::new(Rule::Contains, ptr.render(), message));
            }
        }
    }

    fn object(&self, o: &ObjectShape, obj: &Object<'_>, ptr: &Ptr<'_>, out: &mut Vec<Issue>) {
        // How many members are declared properties: when all are, the loop over the other members has none.
        let mut declared_present = 0;
        for f in &o.fields {
            if self.full(out) {
                return;
            }
            let fp = ptr.key(&f.name);
            match obj.get(&f.name) {
                None if f.required => {
                    out.push(Issue::new(Rule::Required, fp.render(), format!("missing required property `{}`", f.name)))
                }
                None => {}
                Some(v) => {
                    declared_present += 1;
                    self.check(&f.node, v, &fp, out);
                }
            }
        }
        for r in &o.required_only {
            if !obj.contains_key(r) {
                out.push(Issue::new(Rule::Required, ptr.key(r).render(), format!("missing required property `{r}`")));
            }
        }
        for (k, deps) in &o.dependent_required {
            if obj.contains_key(k) {
                for d in deps.iter().filter(|d| !obj.contains_key(d)) {
                    out.push(Issue::new(
                        Rule::DependentRequired,
                        ptr.key(d).render(),
                        format!("`{d}` is required when `{k}` is present"),
                    ));
                }
            }
        }
        let others = declared_present < obj.len() || !o.pattern_properties.is_empty();
        for (k, v) in obj.iter().filter(|_| others) {
            if self.full(out) {
                return;
            }
            let declared = o.fields.iter().any(|f| f.name == k);
            let mut matched = false;
            for (p, node) in &o.pattern_properties {
                if self.regexes.get(&p.source).is_some_and(|re| re.is_match(k)) {
                    matched = true;
                    self.check(node, v, &ptr.key(k), out);
                }
            }
            if declared || matched {
                continue;
            }
            match &o.additional {
                Additional::Open | Additional::Strip => {}
                Additional::Schema(n) => self.check(n, v, &ptr.key(k), out),
                Additional::Closed => match o.removed.iter().find(|r| r.name == k) {
                    Some(r) => out.push(Issue::new(
                        Rule::RemovedProperty,
                        ptr.key(k).render(),
                        format!(
                            "`{k}` was removed from `{}` in this version: use `{}` instead",
                            r.owner, r.replacement
                        ),
                    )),
                    None => out.push(unknown_property(ptr, k)),
                },
            }
        }
        if let Some(names) = &o.property_names {
            for k in obj.keys() {
                if self.full(out) {
                    return;
                }
                let mut inner = Vec::new();
                self.check(names, &Json::String(k.into()), &Ptr::ROOT, &mut inner);
                if let Some(first) = inner.first() {
                    out.push(Issue::new(
                        Rule::PropertyNames,
                        ptr.key(k).render(),
                        format!("the property name `{k}` is not allowed: {}", first.message),
                    ));
                }
            }
        }
        let len = obj.len() as u64;
        if let Some(m) = o.min_properties.filter(|m| len < *m) {
            out.push(Issue::new(
                Rule::MinProperties,
                ptr.render(),
                format!("must have at least {}", counted(m, "property", "properties")),
            ));
        } else if let Some(m) = o.max_properties.filter(|m| len > *m) {
            out.push(Issue::new(
                Rule::MaxProperties,
                ptr.render(),
                format!("must have at most {}", counted(m, "property", "properties")),
            ));
        }
    }

    fn union(&self, u: &UnionShape, v: &Json<'_>, obj: &Object<'_>, ptr: &Ptr<'_>, out: &mut Vec<Issue>) {
        let tp = ptr.key(&u.discriminator);
        let Some(t) = obj.get(&u.discriminator) else {
            return out.push(Issue::new(
                Rule::Required,
                tp.render(),
                format!("missing required property `{}`", u.discriminator),
            ));
        };
        if let Some(m) = u.members.iter().find(|m| equals(&m.tag, t)) {
            return self.check_type(m.ty, v, ptr, out);
        }
        // A value of the wrong JSON type for every member is a type error; else an unknown member.
        if !u.members.iter().any(|m| same_kind(&m.tag, t)) {
            return out.push(type_issue(&tp, &u.expected_tag(), t));
        }
        let text = t.as_str().map_or_else(|| t.shown_text(), String::from);
        if let Some((_, rep)) = u.removed.iter().find(|(old, _)| Some(old.as_str()) == t.as_str()) {
            return out.push(Issue::new(
                Rule::RemovedEvent,
                tp.render(),
                format!("`{text}` was removed in this version: use `{rep}` instead"),
            ));
        }
        let tags: Vec<Value> = u.members.iter().map(|m| m.tag.clone()).collect();
        if u.events {
            out.push(Issue::new(
                Rule::UnknownEvent,
                tp.render(),
                format!("`{text}` is not an event; expected one of {}", value_list(&tags)),
            ));
        } else {
            out.push(Issue::new(
                Rule::UnknownVariant,
                tp.render(),
                format!("`{text}` names no member; expected one of {}", value_list(&tags)),
            ));
        }
    }

    /// The protocol's role rules on an envelope whose shape is valid, in [`Protocol::role_rules`] order.
    fn roles(&self, p: &Protocol, v: &Json<'_>, ptr: &Ptr<'_>, out: &mut Vec<Issue>) {
        let Some(env) = v.as_object() else { return };
        let Some(role) = env.get(&p.role_field).and_then(Json::as_str) else { return };
        let Some(ev) = env.get(&p.union_field).and_then(Json::as_object) else { return };
        let disc = p.discriminator(&self.model);
        let Some(event) = ev.get(disc).and_then(Json::as_str).and_then(|t| p.event(t)) else { return };
        for rule in p.role_rules(event) {
            match rule {
                RoleRule::Event { allowed } => {
                    if !allowed.iter().any(|r| r == role) {
                        out.push(Issue::new(
                            Rule::RoleEvent,
                            ptr.key(&p.role_field).render(),
                            format!("`{}` may be sent only by {}, not by {role}", event.tag, allowed.join(" or ")),
                        ));
                    }
                }
                RoleRule::EnvelopeField { name, allowed } => {
                    if env.contains_key(name) && !allowed.iter().any(|r| r == role) {
                        out.push(field_role_issue(name, allowed, &ptr.key(name).render(), role));
                    }
                }
                RoleRule::EventField { name, allowed } => {
                    if ev.contains_key(name) && !allowed.iter().any(|r| r == role) {
                        let evp = ptr.key(&p.union_field);
                        out.push(field_role_issue(name, allowed, &evp.key(name).render(), role));
                    }
                }
            }
        }
    }
}

/// A property a closed object does not define.
fn unknown_property(ptr: &Ptr<'_>, k: &str) -> Issue {
    Issue::new(Rule::AdditionalProperty, ptr.key(k).render(), format!("unknown property `{k}`"))
}

/// A node's identity in the model (its address; the model is shared and never moves).
fn node_key(n: &Node) -> usize {
    std::ptr::from_ref(n) as usize
}

fn never_regex() -> regex::Regex {
    regex::Regex::new(r"[^\x{0}-\x{10FFFF}]").unwrap_or_else(|_| unreachable!("a valid regex"))
}

/// `n` and the noun it counts, singular for one (`1 item`, `2 items`): how every checker words a count (the
/// generated runtimes hold copies of this rule).
pub fn counted(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// What is wrong with an array of which `matching` items match its `contains` schema, if anything.
fn contains_message(c: &Contains, matching: u64) -> Option<String> {
    if matching < c.min {
        Some(format!(
            "must contain at least {} matching `contains` ({matching} found)",
            counted(c.min, "item", "items")
        ))
    } else if c.max.is_some_and(|m| matching > m) {
        Some(format!(
            "must contain at most {} matching `contains` ({matching} found)",
            counted(c.max?, "item", "items")
        ))
    } else {
        None
    }
}

/// `value / m` is an integer (IEEE division, as JavaScript computes it), unless that quotient says nothing: when
/// it overflows, or when `m` is an integer and the quotient is 2^53 or more (every double that large is whole, so
/// `1e20` would be a multiple of `7`), the exact remainder `value % m` is 0. (For a fractional `m` such as `0.1`,
/// which no double holds exactly, the quotient stays the test: `1e20` is a multiple of `0.1`.)
pub fn is_multiple(value: f64, m: f64) -> bool {
    let q = value / m;
    if q.is_finite() && (q.abs() < 9_007_199_254_740_992.0 || m.fract() != 0.0) {
        q.fract() == 0.0
    } else {
        value.is_finite() && value % m == 0.0
    }
}

/// A number as a message writes it: as JavaScript writes it (one function for the engine and the stream checker,
/// which lives with the stream checker as that file is copied into generated crates and depends on nothing here).
pub use crate::stream::machine::number_text;

/// A value's compact JSON text for a message, cut after 57 characters.
/// The message of a value that is not a `const`'s (every output words it so: the TypeScript emitters write it).
pub fn const_message(c: &Value) -> String {
    format!("must be {}", short_json(shown_value(c)))
}

/// A schema's value as a message shows it: its compact JSON text with numbers as JavaScript writes them
/// ([`number_text`]: `"const": 1.0` is `1`, `-0.0` is `0`), as an instance is shown ([`json::Json::shown_text`]).
#[must_use]
pub fn shown_value(v: &Value) -> String {
    Json::from_value(v).shown_text()
}

fn short_json(s: String) -> String {
    if s.chars().count() > 60 {
        let cut: String = s.chars().take(57).collect();
        format!("`{cut}...`")
    } else {
        format!("`{s}`")
    }
}

/// How many values a message lists at most: an `enum` of 20,000 values would otherwise make each of its errors
/// ~430 KB. The generated runtimes (`rt.rs`, `zod-support.ts`) hold the same number.
pub const LISTED_VALUES: usize = 20;

/// Values as a message lists them (`` `a`, `b` ``: strings bare when every value is one; else each as JSON, as
/// written: `` `"a"`, `3`, `null` ``, so the string `"3"` and the number `3` are not both `3`), the first
/// [`LISTED_VALUES`] of them and then how many more there are (`` `a`, `b`, and 3 more ``); the TypeScript and Rust
/// emitters write the list so.
pub fn value_list(vals: &[Value]) -> String {
    let bare = vals.iter().all(Value::is_string);
    let mut out = vals
        .iter()
        .take(LISTED_VALUES)
        .map(|v| match v.as_str() {
            Some(s) if bare => format!("`{s}`"),
            _ => format!("`{}`", shown_value(v)),
        })
        .collect::<Vec<_>>()
        .join(", ");
    if let Some(more) = vals.len().checked_sub(LISTED_VALUES).filter(|&n| n > 0) {
        out.push_str(&format!(", and {more} more"));
    }
    out
}

/// JSON equality as JSON Schema defines it (`json::equal`), between two values.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    json::equal(&Json::from_value(a), &Json::from_value(b))
}

/// A set of schema values under JSON equality ([`json_equal`]), built and queried in time linear in the values'
/// size: what the loader and `diff` use to drop or compare an `enum`'s values.
#[derive(Default)]
pub struct ValueSet<'a>(json::JsonSet<'a>);

impl<'a> ValueSet<'a> {
    /// Adds `v`; false if an equal value is already in.
    pub fn insert(&mut self, v: &'a Value) -> bool {
        self.0.insert(Json::from_value(v))
    }

    /// Whether a value equal to `v` is in.
    pub fn contains(&self, v: &Value) -> bool {
        self.0.contains(&Json::from_value(v))
    }
}

impl<'a> FromIterator<&'a Value> for ValueSet<'a> {
    fn from_iter<I: IntoIterator<Item = &'a Value>>(values: I) -> Self {
        let mut set = ValueSet::default();
        for v in values {
            set.insert(v);
        }
        set
    }
}

/// Whether a message value equals a schema's constant ([`json::equal`]; two strings, the usual case, directly).
fn equals(c: &Value, v: &Json<'_>) -> bool {
    match (c, v) {
        (Value::String(a), Json::String(b)) => a == b,
        _ => json::equal(&Json::from_value(c), v),
    }
}

fn same_kind(a: &Value, b: &Json<'_>) -> bool {
    matches!(
        (a, b),
        (Value::String(_), Json::String(_)) | (Value::Bool(_), Json::Bool(_)) | (Value::Number(_), Json::Number(_))
    )
}

/// Whether a member of [`Shape::Kinds`] takes a value of this JSON kind.
fn kind_matches(model: &Model, s: &Shape, v: &Json<'_>) -> bool {
    match model.kind_of(s) {
        Some(JsonKind::Null) => v.is_null(),
        Some(JsonKind::Boolean) => v.is_boolean(),
        Some(JsonKind::Number) => v.is_number(),
        Some(JsonKind::String) => v.is_string(),
        Some(JsonKind::Array) => v.is_array(),
        Some(JsonKind::Object) => v.is_object(),
        None => false,
    }
}

/// A JSON Pointer built lazily, as a chain of borrowed tokens: rendered only when an error needs it, so checking
/// a valid message allocates nothing for pointers.
#[derive(Clone, Copy)]
struct Ptr<'a> {
    parent: Option<&'a Ptr<'a>>,
    token: &'a str,
}

impl<'a> Ptr<'a> {
    const ROOT: Ptr<'static> = Ptr { parent: None, token: "" };

    fn key(&'a self, token: &'a str) -> Ptr<'a> {
        Ptr { parent: Some(self), token }
    }

    /// The pointer as text, built in one string (a pointer is rendered only for an issue).
    fn render(&self) -> String {
        let mut tokens: Vec<&str> = Vec::new();
        let mut at = self;
        while let Some(parent) = at.parent {
            tokens.push(at.token);
            at = parent;
        }
        let mut out = String::with_capacity(tokens.iter().map(|t| t.len() + 1).sum());
        for t in tokens.iter().rev() {
            out.push('/');
            push_escaped(&mut out, t);
        }
        out
    }

    fn render_lazy(&self) -> impl Fn() -> String + '_ {
        move || self.render()
    }
}

fn field_role_issue(name: &str, allowed: &[String], ptr: &str, role: &str) -> Issue {
    Issue::new(Rule::RoleField, ptr, format!("`{name}` may be sent only by {}, not by {role}", allowed.join(" or ")))
}

fn type_issue(ptr: &Ptr<'_>, expected: &str, got: &Json<'_>) -> Issue {
    Issue::new(Rule::Type, ptr.render(), format!("expected {expected}, got {}", kind(got)))
}

/// The JSON type name of a value, for messages.
pub fn kind(v: &Json<'_>) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        // A whole number is an integer however it is written (`1.0`, `1e2`, `-0`), as JSON Schema and JavaScript
        // have it (it was "a number" unless written as digits that fit 64 bits).
        Json::Number(n) if n.as_f64().is_some_and(|f| f.fract() != 0.0) => "a number",
        Json::Number(_) => "an integer",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// Parses one line of input into JSON, mapping every failure to a located message-level issue.
///
/// # Errors
/// [`Rule::BlankLine`], [`Rule::InvalidUtf8`], [`Rule::TooDeep`] or [`Rule::MalformedJson`] at the root pointer.
pub fn parse_line(line: &[u8]) -> Result<Value, Issue> {
    // Through the tree, which refuses what a `Value` would take: a repeated key.
    let json = parse_json(line)?;
    serde_json::to_value(&json).map_err(|e| Issue::new(Rule::MalformedJson, "", format!("malformed JSON: {e}")))
}

/// [`parse_line`] into the tree the precise path walks ([`Json`]): the same errors, a cheaper value.
///
/// # Errors
/// As [`parse_line`].
pub fn parse_json(line: &[u8]) -> Result<Json<'_>, Issue> {
    // One UTF-8 pass over the whole line first: cheaper than serde_json's reader checking string by string.
    let text = line_text(line)?;
    Json::parse(text).map_err(|e| parse_issue(text, e))
}

/// A line's text, when it is UTF-8 and not blank.
fn line_text(line: &[u8]) -> Result<&str, Issue> {
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) => {
            return Err(Issue::new(Rule::InvalidUtf8, "", format!("invalid UTF-8 at byte {}", e.valid_up_to() + 1)));
        }
    };
    if text.trim().is_empty() {
        return Err(Issue::new(Rule::BlankLine, "", "blank line: expected one JSON value per line"));
    }
    if text.starts_with('\u{feff}') {
        return Err(Issue::new(Rule::MalformedJson, "", BOM_MESSAGE));
    }
    Ok(text)
}

/// What a value nesting deeper than [`MAX_DEPTH`] is told (a line adds where): by the engine, and by the TypeScript
/// runtime and standalone validators, which are given it. The Rust runtime (`emit/rust/rt.rs`) spells it out, held
/// to it by `rt_tests::too_deep_says_what_the_engine_says`.
pub(crate) fn too_deep_message() -> String {
    let (before, after) = TOO_DEEP_WORDS;
    format!("{before}{MAX_DEPTH}{after}")
}

/// [`too_deep_message`] around its number of levels: the TypeScript line parser, which may be given another limit
/// (`parseLine(line, maxDepth)`), writes that one (it said 127 whatever it was given, helper 97).
pub(crate) const TOO_DEEP_WORDS: (&str, &str) = ("JSON nests deeper than ", " levels");

/// What a line that starts with a byte order mark is told (an editor that saves "UTF-8 with BOM" writes one at the
/// start of the file; serde_json and `JSON.parse` refuse it at column 1 without saying why). The TypeScript runtime
/// is given it; the Rust runtime (`emit/rust/rt.rs`) spells it out, held to it by its tests.
pub(crate) const BOM_MESSAGE: &str =
    "malformed JSON: the line starts with a byte order mark (U+FEFF); JSON text does not begin with one";

/// Where a parse error is, as its message says it: `column C` in a one-line text, `line L column C` past its first
/// line (a pretty-printed document). The TypeScript runtime and the Rust runtime (`emit/rust/rt.rs`) say it alike.
pub(crate) fn parse_error_at(e: &serde_json::Error) -> String {
    place(e.line(), e.column())
}

/// `column C`, or `line L column C` past the first line ([`parse_error_at`]). Columns start at 1: serde_json's 0,
/// at the start of a line it read nothing of (the end of a text that ends with a line break), is column 1 there.
fn place(line: usize, column: usize) -> String {
    let column = column.max(1);
    if line > 1 {
        format!("line {line} column {column}")
    } else {
        format!("column {column}")
    }
}

/// What a text with a repeated key is told: the member's JSON Pointer, and where the key is (its opening quote,
/// the column in bytes as serde_json counts it). The TypeScript runtime is given it; the Rust runtime
/// (`emit/rust/rt.rs`) spells it out, held to it by `rt_tests::a_repeated_key_is_told_as_the_engine_tells_it`.
pub(crate) fn repeated_key_message(text: &str) -> Option<String> {
    repeated_key_what(text).map(|what| format!("malformed JSON: {what}"))
}

/// [`repeated_key_message`] without its `malformed JSON: ` (what a pretty document's first line adds as where the
/// document breaks).
pub(crate) fn repeated_key_what(text: &str) -> Option<String> {
    let (pointer, open) = crate::diag::first_repeated_key(text)?;
    let (line, column) = crate::diag::byte_line_col(text.as_bytes(), open);
    Some(format!("{REPEATED_KEY_LEAD}{pointer} {REPEATED_KEY_WHY} at {}", place(line, column)))
}

/// How a repeated key's message starts after `malformed JSON: ` ([`repeated_key_what`]).
const REPEATED_KEY_LEAD: &str = "repeated key ";

/// Whether a line refused as no JSON value the checkers take is still read by the stream checkers for what it
/// would have opened or closed (`causedBy`), as the TypeScript one reads it: one nesting too deep, one that starts
/// with a byte order mark (read after it), one that repeats a key (its last member counting, as `JSON.parse`
/// reads it). Invalid UTF-8, an unpaired surrogate escape, a number beyond the double range and a syntax error
/// read as nothing (they were read where a parser skipping the value did not look at it).
pub(crate) fn read_when_rejected(issue: &Issue) -> bool {
    issue.rule == Rule::TooDeep.id()
        || issue.message == BOM_MESSAGE
        || issue.message.strip_prefix("malformed JSON: ").is_some_and(|m| m.starts_with(REPEATED_KEY_LEAD))
}

/// Why a repeated key is refused, as every checker says it.
pub(crate) const REPEATED_KEY_WHY: &str = "(JSON parsers differ on which of its members counts)";

/// The issue for a line serde_json cannot parse, or that repeats a key ([`Json::parse`]).
fn parse_issue(text: &str, e: serde_json::Error) -> Issue {
    let msg = e.to_string();
    let repeated = || (parse_error_what(&e) == crate::diag::REPEATED_KEY).then(|| repeated_key_message(text)).flatten();
    if let Some(message) = repeated() {
        Issue::new(Rule::MalformedJson, "", message)
    } else if msg.contains("recursion limit exceeded") {
        Issue::new(Rule::TooDeep, "", format!("{} (at {})", too_deep_message(), parse_error_at(&e)))
    } else if e.is_eof() {
        Issue::new(
            Rule::MalformedJson,
            "",
            format!("malformed JSON: unexpected end of input at {}", parse_error_at(&e)),
        )
    } else {
        Issue::new(
            Rule::MalformedJson,
            "",
            format!("malformed JSON: {} at {}", parse_error_what(&e), parse_error_at(&e)),
        )
    }
}

/// What a parse error is, without serde_json's `at line L column C` ([`parse_error_at`] says where, as every
/// checker words it: a line of a stream has no line 1 to speak of).
pub(crate) fn parse_error_what(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    let place = format!(" at line {} column {}", e.line(), e.column());
    let what = msg.strip_suffix(&place).unwrap_or(&msg);
    // serde_json's words for a `\u` escape of half a surrogate pair (a high one not followed by a `\u` escape,
    // or by one that is no low one; a low one alone) say what it looked for, not what is wrong.
    match what {
        "unexpected end of hex escape" | "lone leading surrogate in hex escape" => {
            "an unpaired surrogate escape (UTF-8 cannot encode half a pair)".to_string()
        }
        _ => what.to_string(),
    }
}

#[cfg(test)]
mod tests {
    /// Numbers in messages are written as JavaScript's `String(n)` writes them (the expected texts are node's).
    #[test]
    fn numbers_are_written_as_javascript_writes_them() {
        let cases = [
            (100.0, "100"),
            (-0.0, "0"),
            (1e-7, "1e-7"),
            (1e21, "1e+21"),
            (1.5e300, "1.5e+300"),
            (123_456_789_012_345_680_000.0, "123456789012345680000"),
            (0.000_001, "0.000001"),
            (0.1, "0.1"),
            (-2.5e-8, "-2.5e-8"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (18_446_744_073_709_551_616.0, "18446744073709552000"),
            (1e16, "10000000000000000"),
            (123.456, "123.456"),
        ];
        for (f, want) in cases {
            assert_eq!(super::number_text(f), want, "{f:e}");
        }
    }

    use super::*;

    /// `parse_json` refuses every line as `parse_line` does, with the same issue: invalid UTF-8 before or after a
    /// syntax error, blank lines (Unicode whitespace included), depth, broken JSON.
    #[test]
    fn the_tree_refuses_lines_as_parse_line_does() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let lines: &[&[u8]] = &[
            b"",
            b"   ",
            "\u{a0}".as_bytes(),
            "\u{2028} ".as_bytes(),
            b"{\"a\":\"\xff\"}",
            b"\xff{",
            b"{,\xff",
            b"{\"a\":1",
            b"{\"a\":1}}",
            b"nul",
            b"\"\\ud800\"",
            deep.as_bytes(),
            b"{\"a\":[1,2,{\"b\":null}]}",
            "\u{feff}{}".as_bytes(),
        ];
        for line in lines {
            let by_value = parse_line(line).map(|v| v.to_string());
            let by_tree = parse_json(line).map(|j| j.to_json_string());
            assert_eq!(by_tree, by_value, "{}", String::from_utf8_lossy(line));
        }
    }

    /// A value built in code may nest deeper than any line: it is `too-deep` at the root, and a value 200,000 deep
    /// (the checker used to recurse into it) is answered without exhausting the stack.
    #[test]
    fn a_value_deeper_than_a_line_is_too_deep() {
        let model = crate::load::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema")).expect("v2");
        let e = Engine::new(model, EngineOptions::default()).expect("a root type");
        let nest = |n: usize| (0..n).fold(Value::Null, |v, _| Value::Array(vec![v]));
        let ok = "{\"id\":\"m1\",\"time\":1,\"role\":\"user\",\"ev\":{\"t\":\"text\",\"text\":\"hi\"}}";
        let mut v: Value = serde_json::from_str(ok).expect("JSON");
        assert_eq!(e.check_value(&v), []);
        for (n, too_deep) in [(125, false), (126, true), (200_000, true)] {
            // The envelope and its event are two levels: `n` more below `/ev/text`.
            v["ev"]["text"] = nest(n);
            let issues = e.check_value(&v);
            assert_eq!(issues.first().map(|i| i.rule == Rule::TooDeep.id()), Some(too_deep), "{n}: {issues:?}");
            assert_eq!(too_deep, issues.len() == 1 && issues[0].pointer.is_empty(), "{n}");
            // Taken apart without recursion, so dropping it is safe too.
            let mut inner = v["ev"]["text"].take();
            while let Value::Array(mut a) = inner {
                inner = a.pop().unwrap_or(Value::Null);
            }
        }
    }

    /// A line that starts with a byte order mark is told so, by both paths (the fast scanner refuses it, the precise
    /// engine names it), and a valid envelope after it stays refused.
    #[test]
    fn a_byte_order_mark_is_named() {
        let model = crate::load::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema")).expect("v2");
        let e = Engine::new(model, EngineOptions::default()).expect("a root type");
        let line = "\u{feff}{\"id\":\"m1\",\"time\":1,\"role\":\"user\",\"ev\":{\"t\":\"text\",\"text\":\"hi\"}}";
        for issues in [e.check_line_fast(line.as_bytes()), e.check_line(line.as_bytes()).1] {
            assert_eq!(issues.len(), 1, "{issues:?}");
            assert_eq!((issues[0].rule, issues[0].message.as_str()), ("malformed-json", BOM_MESSAGE));
        }
        assert!(e.check_line_fast(&line.as_bytes()[3..]).is_empty(), "valid without the mark");
    }

    /// A pointer escapes `~` and `/` in each token (RFC 6901), at the root and below it.
    #[test]
    fn pointers_escape_their_tokens() {
        let model = crate::load::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema")).expect("v2");
        let e = Engine::new(model, EngineOptions::default()).expect("a root type");
        let pointers = |line: &str| -> Vec<String> {
            e.check_line_fast(line.as_bytes()).into_iter().map(|i| format!("{} {}", i.rule, i.pointer)).collect()
        };
        let line = r#"{"id":"m1","time":1,"role":"user","a/b~c":1,"ev":{"t":"text","text":"hi","~/":2}}"#;
        assert_eq!(pointers(line), ["additional-property /ev/~0~1", "additional-property /a~1b~0c"]);
        assert_eq!(Ptr::ROOT.key("x").key("").key("~~//").render(), "/x//~0~0~1~1");
        assert_eq!(crate::diag::push_ptr("/a", "b/~"), "/a/b~1~0");
        assert_eq!(crate::diag::escape_token("plain"), "plain");
    }
}
