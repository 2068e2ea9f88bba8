//! The message validation engine behind `wiregen validate` and `wiregen serve`: interprets the [`Protocol`]
//! model over a parsed JSON value and reports located errors with stable rule ids ([`crate::rules`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::diag::push_ptr;
use crate::ir::{Field, Protocol, Ty};
use crate::rules::Rule;

/// One error in one message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    /// JSON Pointer into the message (`""` for the whole line).
    pub pointer: String,
    /// Stable rule id (a [`Rule`] id or a stream rule id).
    pub rule: &'static str,
    /// Human explanation.
    pub message: String,
}

impl Issue {
    /// An issue for a message-level rule.
    pub fn new(rule: Rule, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Issue { pointer: pointer.into(), rule: rule.id(), message: message.into() }
    }
}

/// Engine settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EngineOptions {
    /// Check the cuid2 shape of ids (`x-strict-pattern`).
    pub strict_ids: bool,
}

/// A compiled validator for one protocol. It owns (a shared handle to) its protocol, so it can live as long as
/// needed (a server keeps one for its lifetime) and is cheap to clone.
#[derive(Debug, Clone)]
pub struct Engine {
    proto: Arc<Protocol>,
    strict: BTreeMap<String, regex::Regex>,
    fast: Option<crate::fast::FastPlan>,
}

/// The deepest nesting accepted (arrays and objects, the envelope itself included): serde_json's own recursion
/// limit, so the parser can never overflow the stack. Every checker applies the same bound.
pub const MAX_DEPTH: usize = 127;

impl Engine {
    /// Compiles the engine for `proto` (a [`Protocol`], or an `Arc` of one to share it).
    pub fn new(proto: impl Into<Arc<Protocol>>, opts: EngineOptions) -> Self {
        let proto = proto.into();
        let mut strict = BTreeMap::new();
        if opts.strict_ids {
            let mut visit = |f: &Field| {
                if let Ty::String(s) = &f.ty {
                    if let Some(pat) = &s.strict_pattern {
                        if let Ok(re) = regex::Regex::new(pat) {
                            strict.insert(pat.clone(), re);
                        }
                    }
                }
            };
            proto.envelope.fields.iter().for_each(&mut visit);
            proto.union.variants.iter().flat_map(|v| &v.fields).for_each(&mut visit);
            proto.objects.values().flat_map(|o| &o.fields).for_each(&mut visit);
        }
        let fast = crate::fast::FastPlan::new(&proto);
        Engine { proto, strict, fast }
    }

    /// Checks one line, taking the fast path (an IR-compiled `DeserializeSeed` that vouches for valid lines) and explaining with the precise path only when
    /// the fast path cannot vouch for the line. Same verdict and errors as [`Engine::check_line`].
    pub fn check_line_fast(&self, line: &[u8]) -> Vec<Issue> {
        if self.is_valid_fast(line) {
            return Vec::new();
        }
        self.check_line(line).1
    }

    /// The fast verdict alone: `true` only when the line is certainly valid (the fast path alone).
    pub fn is_valid_fast(&self, line: &[u8]) -> bool {
        let (Some(plan), Ok(text)) = (&self.fast, std::str::from_utf8(line)) else { return false };
        let strict = |pat: &str, v: &str| self.strict.get(pat).is_none_or(|re| re.is_match(v));
        crate::fast::is_valid(plan, &strict, text)
    }

    /// The protocol this engine checks.
    pub fn protocol(&self) -> &Protocol {
        &self.proto
    }

    /// Parses one line (without its newline) and checks it. Returns the parsed value when the line is JSON.
    pub fn check_line(&self, line: &[u8]) -> (Option<Value>, Vec<Issue>) {
        match parse_line(line) {
            Ok(v) => {
                let issues = self.check_value(&v);
                (Some(v), issues)
            }
            Err(issue) => (None, vec![issue]),
        }
    }

    /// Checks a parsed message: shape first, then role rules once the shape is valid.
    pub fn check_value(&self, v: &Value) -> Vec<Issue> {
        let mut out = Vec::new();
        let Some(obj) = v.as_object() else {
            out.push(Issue::new(Rule::Type, "", format!("expected a JSON object (an envelope), got {}", kind(v))));
            return out;
        };
        self.object(obj, &self.proto.envelope.fields, &Ptr::ROOT, None, &mut out);
        if out.is_empty() {
            self.roles(obj, &mut out);
        }
        out
    }

    fn roles(&self, env: &Map<String, Value>, out: &mut Vec<Issue>) {
        let p = &*self.proto;
        let Some(role) = env.get(&p.role_field).and_then(Value::as_str) else { return };
        let Some(ev) = env.get(&p.union_field).and_then(Value::as_object) else { return };
        let Some(var) = ev.get(&p.union.tag).and_then(Value::as_str).and_then(|t| p.union.variant(t)) else { return };
        if !var.roles.iter().any(|r| r == role) {
            out.push(Issue::new(
                Rule::RoleEvent,
                push_ptr("", &p.role_field),
                format!("`{}` may be sent only by {}, not by {role}", var.tag, var.roles.join(" or ")),
            ));
        }
        for f in &p.envelope.fields {
            if env.contains_key(&f.name) && !Protocol::field_allowed(f, role) {
                out.push(field_role_issue(f, &push_ptr("", &f.name), role));
            }
        }
        let evp = push_ptr("", &p.union_field);
        for f in &var.fields {
            if ev.contains_key(&f.name) && !Protocol::field_allowed(f, role) {
                out.push(field_role_issue(f, &push_ptr(&evp, &f.name), role));
            }
        }
    }

    /// Checks an object's fields in schema order, then reports unknown properties in input order.
    /// `tag` is the union member's discriminator value when the object is an event body.
    fn object(
        &self,
        obj: &Map<String, Value>,
        fields: &[Field],
        ptr: &Ptr<'_>,
        tag: Option<(&str, &str)>,
        out: &mut Vec<Issue>,
    ) {
        for f in fields {
            let fp = ptr.key(&f.name);
            match obj.get(&f.name) {
                None if f.required => {
                    out.push(Issue::new(Rule::Required, fp.render(), format!("missing required property `{}`", f.name)))
                }
                None => {}
                Some(v) => self.value(&f.ty, v, &fp, out),
            }
        }
        for k in obj.keys() {
            if fields.iter().any(|f| &f.name == k) {
                continue;
            }
            if let Some((tag_name, tag_value)) = tag {
                if k == tag_name {
                    continue;
                }
                if let Some((_, rep)) = self.proto.removed_property(tag_value, k) {
                    out.push(Issue::new(
                        Rule::RemovedProperty,
                        ptr.key(k).render(),
                        format!("`{k}` was removed from `{tag_value}` in this version: use `{rep}` instead"),
                    ));
                    continue;
                }
            }
            out.push(Issue::new(Rule::AdditionalProperty, ptr.key(k).render(), format!("unknown property `{k}`")));
        }
    }

    fn value(&self, ty: &Ty, v: &Value, ptr: &Ptr<'_>, out: &mut Vec<Issue>) {
        match ty {
            Ty::String(s) => {
                let Some(sv) = v.as_str() else { return out.push(type_issue(ptr, "a string", v)) };
                if let Some(min) = s.min_length {
                    if (sv.chars().count() as u64) < min {
                        out.push(Issue::new(
                            Rule::MinLength,
                            ptr.render(),
                            format!("must be at least {min} character(s) long"),
                        ));
                        return;
                    }
                }
                if let Some(re) = s.strict_pattern.as_ref().and_then(|p| self.strict.get(p)) {
                    if !re.is_match(sv) {
                        out.push(Issue::new(
                            Rule::StrictId,
                            ptr.render(),
                            format!("`{sv}` is not a cuid2 id (pattern {})", re.as_str()),
                        ));
                    }
                }
            }
            Ty::Integer { minimum, maximum } => {
                let n = match integer_value(v) {
                    Some(n) => n,
                    None => return out.push(type_issue(ptr, "an integer", v)),
                };
                if n < *minimum as f64 {
                    out.push(Issue::new(Rule::Minimum, ptr.render(), format!("must be at least {minimum}")));
                } else if n > *maximum as f64 {
                    out.push(Issue::new(Rule::Maximum, ptr.render(), format!("must be at most {maximum}")));
                }
            }
            Ty::Number { minimum } => {
                let Some(n) = v.as_f64() else { return out.push(type_issue(ptr, "a number", v)) };
                if let Some(min) = minimum {
                    if n < *min {
                        out.push(Issue::new(Rule::Minimum, ptr.render(), format!("must be at least {min}")));
                    }
                }
            }
            Ty::Boolean => {
                if !v.is_boolean() {
                    out.push(type_issue(ptr, "a boolean", v));
                }
            }
            Ty::Enum(name) => {
                let Some(sv) = v.as_str() else { return out.push(type_issue(ptr, "a string", v)) };
                // A model built by hand may name an enum it does not define: then no value is allowed.
                let values = self.proto.enums.get(name).map_or(&[][..], |e| e.values.as_slice());
                if !values.iter().any(|x| x == sv) {
                    out.push(Issue::new(
                        Rule::Enum,
                        ptr.render(),
                        format!("`{sv}` is not one of {}", quoted_list(values)),
                    ));
                }
            }
            Ty::Object(name) => {
                let Some(o) = v.as_object() else { return out.push(type_issue(ptr, "an object", v)) };
                // An undefined object type (a hand-built model) has no fields: every property is unknown.
                let fields = self.proto.objects.get(name).map_or(&[][..], |o| o.fields.as_slice());
                self.object(o, fields, ptr, None, out);
            }
            Ty::AnyObject => {
                if !v.is_object() {
                    out.push(type_issue(ptr, "an object", v));
                }
            }
            Ty::Union => {
                let Some(o) = v.as_object() else { return out.push(type_issue(ptr, "an object", v)) };
                let u = &self.proto.union;
                let tp = ptr.key(&u.tag);
                let t = match o.get(&u.tag) {
                    None => {
                        return out.push(Issue::new(
                            Rule::Required,
                            tp.render(),
                            format!("missing required property `{}`", u.tag),
                        ))
                    }
                    Some(Value::String(t)) => t,
                    Some(other) => return out.push(type_issue(&tp, "a string", other)),
                };
                match u.variant(t) {
                    Some(var) => self.object(o, &var.fields, ptr, Some((&u.tag, &var.tag)), out),
                    None => match self.proto.removed_event(t) {
                        Some((_, rep)) => out.push(Issue::new(
                            Rule::RemovedEvent,
                            tp.render(),
                            format!("`{t}` was removed in this version: use `{rep}` instead"),
                        )),
                        None => {
                            let tags: Vec<String> = u.variants.iter().map(|v| v.tag.clone()).collect();
                            out.push(Issue::new(
                                Rule::UnknownEvent,
                                tp.render(),
                                format!("`{t}` is not an event; expected one of {}", quoted_list(&tags)),
                            ))
                        }
                    },
                }
            }
        }
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

    fn render(&self) -> String {
        match self.parent {
            None => String::new(),
            Some(p) => push_ptr(&p.render(), self.token),
        }
    }
}

fn field_role_issue(f: &Field, ptr: &str, role: &str) -> Issue {
    let allowed = f.roles.as_ref().map(|r| r.join(" or ")).unwrap_or_default();
    Issue::new(Rule::RoleField, ptr, format!("`{}` may be sent only by {allowed}, not by {role}", f.name))
}

fn type_issue(ptr: &Ptr<'_>, expected: &str, got: &Value) -> Issue {
    Issue::new(Rule::Type, ptr.render(), format!("expected {expected}, got {}", kind(got)))
}

/// The JSON type name of a value, for messages.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The value of an integer as JSON Schema sees it (`1.0` and `1e3` are integers), or `None`.
pub(crate) fn integer_value(v: &Value) -> Option<f64> {
    let n = v.as_number()?;
    if let Some(u) = n.as_u64() {
        return Some(u as f64);
    }
    if let Some(i) = n.as_i64() {
        return Some(i as f64);
    }
    let f = n.as_f64()?;
    (f.is_finite() && f.fract() == 0.0).then_some(f)
}

fn quoted_list(vals: &[String]) -> String {
    vals.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")
}

/// Parses one line of input into JSON, mapping every failure to a located message-level issue.
///
/// # Errors
/// [`Rule::BlankLine`], [`Rule::InvalidUtf8`], [`Rule::TooDeep`] or [`Rule::MalformedJson`] at the root pointer.
pub(crate) fn parse_line(line: &[u8]) -> Result<Value, Issue> {
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) => {
            return Err(Issue::new(Rule::InvalidUtf8, "", format!("invalid UTF-8 at byte {}", e.valid_up_to() + 1)));
        }
    };
    if text.trim().is_empty() {
        return Err(Issue::new(Rule::BlankLine, "", "blank line: expected one JSON envelope per line"));
    }
    serde_json::from_str::<Value>(text).map_err(|e| {
        let msg = e.to_string();
        if msg.contains("recursion limit exceeded") {
            Issue::new(
                Rule::TooDeep,
                "",
                format!("JSON nests deeper than {MAX_DEPTH} levels (at column {})", e.column()),
            )
        } else if e.is_eof() {
            Issue::new(
                Rule::MalformedJson,
                "",
                format!("malformed JSON: unexpected end of input at column {}", e.column()),
            )
        } else {
            Issue::new(Rule::MalformedJson, "", format!("malformed JSON: {msg}"))
        }
    })
}
