//! A protocol's own examples, held to the protocol: the reference, the bundled schema and the generated packages'
//! documentation print its types' `examples` and its `x-flows` as valid messages, so one the protocol rejects is
//! refused where it stands (at the value that breaks the rule), with the checkers' own rule and message. The values
//! its sequence rules compare fields with are checked against those fields here too. (In a plain type package,
//! `examples` stay annotations, as in JSON Schema.)

use std::sync::Arc;

use serde_json::Value;

use super::Cx;
use crate::diag::SchemaErrorKind as K;
use crate::engine::{Engine, EngineOptions, Issue};
use crate::ir::sequence::{FieldRef, RuleKind};
use crate::ir::{Model, Node, Origin, Protocol, Shape, TypeId};

impl Cx {
    /// Checks every example against its type and every flow as a session (the sequence rules included).
    pub(super) fn check_examples(&mut self, model: &Model) {
        // In a plain type package `examples` stay annotations, as JSON Schema has them (the suite refers into them:
        // `"$ref": "#/examples/0"`); a protocol's reference prints its examples as messages.
        let with_examples: Vec<usize> = (0..model.types.len())
            .filter(|&i| model.protocol.is_some() && !model.types[i].examples.is_empty())
            .collect();
        let flows = model.protocol.as_ref().is_some_and(|p| !p.flows.is_empty());
        let rules = model.protocol.as_ref().is_some_and(|p| !p.sequence.rules.is_empty());
        if with_examples.is_empty() && !flows && !rules {
            return;
        }
        let m = Arc::new(model.clone());
        // One engine for every type: its root is the envelope for a protocol (the flows' sessions).
        let root = m.protocol.as_ref().map_or(TypeId(0), |p| p.envelope);
        let engine = Engine::for_type(m.clone(), root, EngineOptions::default());
        for i in with_examples {
            let t = &m.types[i];
            for (k, ex) in t.examples.iter().enumerate() {
                if let Some(issue) = engine.check_value_as(TypeId(i), ex).into_iter().next() {
                    let at = t.origin.join("examples").join(&k.to_string());
                    self.example_err(&at, ex, &issue, &format!("example {k}"));
                }
            }
        }
        let Some(p) = m.protocol.as_ref() else { return };
        let refused = self.check_rule_values(&engine, &m, p);
        let env = m.ty(p.envelope).origin.join("x-flows");
        for (f, flow) in p.flows.iter().enumerate() {
            let mut checker = crate::stream::StreamChecker::new(&engine);
            for (s, step) in flow.steps.iter().enumerate() {
                let rec = checker.check(s + 1, step.message.to_string().as_bytes());
                if let Some(issue) = rec.errors.first() {
                    // A rule refused above would break the flow too: the same mistake, not reported again.
                    if refused.contains(&issue.rule) {
                        break;
                    }
                    let at = env.join(&f.to_string()).join("messages").join(&s.to_string()).join("message");
                    let what = format!("message {} of the flow `{}`", s + 1, flow.title);
                    self.example_err(&at, &step.message, issue, &what);
                    // The later messages of a broken session would only echo this one.
                    break;
                }
            }
        }
    }

    /// The values sequence rules compare a field with (`when`, `equals`) must be values the field can hold, or the
    /// rule would never fire (a `when` of `"yes"` on a boolean) or always fire. Returns the ids of the rules
    /// refused.
    fn check_rule_values(&mut self, engine: &Engine, m: &Model, p: &Protocol) -> Vec<&'static str> {
        let mut refused = Vec::new();
        for r in &p.sequence.rules {
            let errors = self.errors.len();
            let on: Vec<&str> = if r.on.is_empty() {
                p.events.iter().map(|e| e.tag.as_str()).collect()
            } else {
                r.on.iter().map(String::as_str).collect()
            };
            for (f, v) in &r.when {
                if !holds(engine, m, p, f, &on, v) {
                    let at = r.origin.join("when").join(&field_pointer(p, f));
                    let msg = format!("`{}` can never hold {v}: the rule would never apply", field_pointer(p, f));
                    self.err(&at, K::InvalidValue, msg);
                }
            }
            if let RuleKind::CloseRequires { scope, field, equals, .. } = &r.kind {
                let closer: Vec<&str> = p.sequence.scopes[*scope].closed_by.as_deref().into_iter().collect();
                if !holds(engine, m, p, field, &closer, equals) {
                    let msg = format!(
                        "`{}` of `{}` can never hold {equals}: the rule would refuse every close",
                        field_pointer(p, field),
                        closer.join("`, `")
                    );
                    self.err(&r.origin.join("equals"), K::InvalidValue, msg);
                }
            }
            if self.errors.len() > errors {
                refused.push(r.id);
            }
        }
        refused
    }

    /// Reports an example the package rejects, at the deepest part of the value the issue's pointer names.
    fn example_err(&mut self, at: &Origin, value: &Value, issue: &Issue, what: &str) {
        let mut pointer = String::new();
        for token in issue.pointer.split('/').skip(1) {
            let next = format!("{pointer}/{token}");
            if value.pointer(&next).is_none() {
                break;
            }
            pointer = next;
        }
        let shown = if issue.pointer.is_empty() { "(root)" } else { &issue.pointer };
        let msg = format!(
            "{what} is invalid, and the outputs print it as valid: {shown}: {} [{}]",
            issue.message, issue.rule
        );
        self.err(&at.below(&pointer), K::InvalidValue, msg);
    }
}

/// The pointer a field reference stands for (`/turn`, `/ev/status`).
fn field_pointer(p: &Protocol, f: &FieldRef) -> String {
    match f {
        FieldRef::Envelope(n) => format!("/{n}"),
        FieldRef::Event(n) => format!("/{}/{n}", p.union_field),
    }
}

/// Whether the field can hold `v` in one of the events `tags` (an envelope field: in the envelope).
fn holds(engine: &Engine, m: &Model, p: &Protocol, f: &FieldRef, tags: &[&str], v: &Value) -> bool {
    let field = |ty: TypeId, name: &str| -> Option<&Node> {
        let mut n = &m.ty(ty).node;
        while let Shape::Ref(id) = n.shape {
            n = &m.ty(id).node;
        }
        match &n.shape {
            Shape::Object(o) => o.fields.iter().find(|x| x.name == name).map(|x| &x.node),
            _ => None,
        }
    };
    match f {
        FieldRef::Envelope(n) => field(p.envelope, n).is_none_or(|node| engine.accepts(node, v)),
        FieldRef::Event(n) => {
            let nodes: Vec<&Node> = tags.iter().filter_map(|t| p.event(t)).filter_map(|e| field(e.ty, n)).collect();
            nodes.is_empty() || nodes.iter().any(|node| engine.accepts(node, v))
        }
    }
}
