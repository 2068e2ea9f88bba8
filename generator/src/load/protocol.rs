//! The session-protocol layer: `x-role-property` makes an object type the envelope, its one union-typed
//! property carries the events, and `x-roles`, `x-categories`, `x-category`, `x-order`, `x-status`,
//! `x-status-note`, `x-removed` and `x-auto` describe who may send what, how the reference groups the events,
//! what the previous version had, and what a constructor fills in; `x-flows`, `x-side-channels` and
//! `x-open-questions` on the envelope are reference material (whole example sessions, which the tests check as
//! streams; what travels outside the stream; open questions with this package's decision).
//!
//! A protocol documents itself: every type, field and event needs a `description`, and every event its
//! `examples`. None of these annotations mean anything outside their places; there they are refused.
//!
//! `x-renamed-from` says what something was called in the previous version (for `wiregen diff`): on a property
//! its old name, on an event its old discriminator value, on another file root or `$defs` entry the type's old
//! name. A renamed event is listed in an `x-removed` entry's `renamed`, which gives the Removed table its row and
//! the old tag its `removed-event` hint; the old tag is written only in `x-renamed-from`. `x-moved-from` on a
//! property says where its value was in a message of the previous version (a JSON Pointer from the old envelope's
//! root, e.g. `/subagent`): the diff reports it as `field-moved` and the upcasters move the value.

use std::collections::BTreeSet;

use serde_json::Value;

use super::build::Types;
use super::Cx;
use crate::diag::SchemaErrorKind as K;
use crate::ir::*;

/// Annotations of the protocol layer, and where each may stand.
const ENVELOPE_ONLY: &[&str] =
    &["x-role-property", "x-categories", "x-removed", "x-flows", "x-side-channels", "x-open-questions", "x-sequence"];
const EVENT_ONLY: &[&str] = &["x-category", "x-order", "x-status", "x-status-note"];
const STATUSES: &[&str] = &["existing", "modified", "renamed", "new"];

impl Cx {
    pub(crate) fn protocol(&mut self, types: &mut Types) -> Option<Protocol> {
        let envs: Vec<TypeId> = (0..types.slots.len())
            .map(TypeId)
            .filter(|id| types.named.get(&types.slots[id.0].origin) == Some(id))
            .filter(|id| self.value_at(&types.slots[id.0].origin).is_some_and(|v| v.get("x-role-property").is_some()))
            .collect();
        let protocol = match envs.as_slice() {
            [] => None,
            [env] => self.lower(types, *env),
            [first, rest @ ..] => {
                for r in rest {
                    let o = types.slots[r.0].origin.join("x-role-property");
                    let f = types.slots[first.0].origin.file.clone();
                    self.err(&o, K::InvalidValue, format!("a package has one envelope; `{f}` is already it"));
                }
                None
            }
        };
        // A protocol that failed to lower has its errors already; its annotations are not reported again.
        if protocol.is_some() || envs.is_empty() {
            self.check_placement(types, protocol.as_ref());
        }
        protocol
    }

    fn lower(&mut self, types: &mut Types, env: TypeId) -> Option<Protocol> {
        let env_at = types.slots[env.0].origin.clone();
        let env_doc = self.doc(&env_at);
        let env_v = env_doc.or_null(&env_at);
        let Some(Shape::Object(env_obj)) = types.slots[env.0].def.as_ref().map(|d| d.node.shape.clone()) else {
            if !self.refused_within(&env_at.join("type")) {
                // A union at the top is a protocol of flat messages, which has no envelope: said so, since adding
                // `type: object` beside the `x-union` is refused in turn (helper 104).
                let message = if env_v.get("x-union").is_some() {
                    "the envelope (`x-role-property`) must be an object type that carries its events under one \
                     property (`\"ev\": {\"x-union\": ...}`); a union at the top is a protocol of flat messages, \
                     which has no envelope: drop `x-role-property` (and any `x-sequence`, `x-roles`, `x-category`) \
                     to make it a plain type package"
                } else {
                    "the envelope (`x-role-property`) must be an object type"
                };
                self.err(&env_at, K::InvalidValue, message);
            }
            return None;
        };
        let role_field = match env_v.get("x-role-property") {
            Some(Value::String(s)) => s.clone(),
            _ => {
                self.err(&env_at.join("x-role-property"), K::InvalidValue, "`x-role-property` must name a property");
                return None;
            }
        };
        let role_enum = env_obj.fields.iter().find(|f| f.name == role_field).and_then(|f| match f.node.shape {
            Shape::Ref(id) => match types.slots[id.0].def.as_ref().map(|d| &d.node.shape) {
                Some(Shape::Enum(vs)) if vs.iter().all(Value::is_string) => Some(id),
                _ => None,
            },
            _ => None,
        });
        let Some(role_enum) = role_enum else {
            // Not when the role property's type is refused already.
            if env_obj.fields.iter().any(|f| f.name == role_field && self.kind_refused(types, &f.node)) {
                return None;
            }
            self.err(
                &env_at.join("x-role-property"),
                K::InvalidValue,
                "`x-role-property` must name an envelope property whose type is an enum of strings",
            );
            return None;
        };
        let roles: Vec<String> = match types.slots[role_enum.0].def.as_ref().map(|d| &d.node.shape) {
            Some(Shape::Enum(vs)) => vs.iter().filter_map(|v| v.as_str().map(String::from)).collect(),
            _ => Vec::new(),
        };
        let unions: Vec<(String, TypeId)> = env_obj
            .fields
            .iter()
            .filter_map(|f| match f.node.shape {
                Shape::Ref(id)
                    if matches!(types.slots[id.0].def.as_ref().map(|d| &d.node.shape), Some(Shape::Union(_))) =>
                {
                    Some((f.name.clone(), id))
                }
                _ => None,
            })
            .collect();
        let (union_field, union) = match unions.as_slice() {
            [(f, u)] => (f.clone(), *u),
            [] => {
                // Not when a property's union is refused already (`x-discriminator`, `x-union`).
                let refused = env_obj.fields.iter().any(|f| match f.node.shape {
                    Shape::Ref(id) => ["x-discriminator", "x-union"]
                        .iter()
                        .any(|k| self.refused_within(&types.slots[id.0].origin.join(k))),
                    _ => self.refused_within(&f.node.origin.join("x-union")),
                });
                if !refused {
                    self.err(
                        &env_at.join("properties"),
                        K::Missing,
                        "the envelope needs one property whose type is a discriminated union (the events)",
                    );
                }
                return None;
            }
            [(first, _), rest @ ..] => {
                for (f, _) in rest {
                    self.err(
                        &env_at.join("properties").join(f),
                        K::InvalidValue,
                        // The envelope's one union property is its events: another is read as a second (helper 131).
                        format!(
                            "the envelope has one event union, `{first}`, and no other union property: put this \
                             union in an object property of the envelope, or in an event"
                        ),
                    );
                }
                return None;
            }
        };
        let categories = self.categories(&env_at, env_v);
        let Some(Shape::Union(mut u)) = types.slots[union.0].def.as_ref().map(|d| d.node.shape.clone()) else {
            return None;
        };
        u.events = true;
        let mut events = Vec::new();
        for m in &u.members {
            let Some(tag) = m.tag.as_str().map(String::from) else {
                let at = types.slots[m.ty.0].origin.clone();
                // A member without a tag is refused already ([`Cx::check_union`]).
                if !(m.tag.is_null() && self.refused_within(&at)) {
                    self.err(&at, K::InvalidValue, "events are discriminated by a string");
                }
                continue;
            };
            if let Some(e) = self.event(types, m.ty, &tag, &roles, &categories) {
                events.push(e);
            }
            // A tag two events hold is refused already ([`Cx::check_union`]): its examples are not held to it.
            if u.members.iter().filter(|x| x.tag == m.tag).count() == 1 {
                self.example_tags(&types.slots[m.ty.0].origin, &tag, &u.discriminator);
            }
        }
        self.event_renames(types, &mut events);
        // Whether every member of the union is an event: one refused already is none, and a name elsewhere
        // (`x-removed`, `x-sequence`) that is no event may be its, which is not reported again.
        let all_events = u.members.iter().all(|m| events.iter().any(|e| e.ty == m.ty));
        let mut envelope_field_roles = Vec::new();
        let mut auto = Vec::new();
        for f in &env_obj.fields {
            let fat = env_at.join("properties").join(&f.name);
            if let Some(r) = self.roles(&fat, Some(&roles)) {
                envelope_field_roles.push((f.name.clone(), r));
            }
            let doc = self.doc(&fat);
            let fv = doc.or_null(&fat);
            match fv.get("x-auto") {
                Some(Value::String(s)) if s == "id" || s == "now" => {
                    // A property whose `type` is refused already is not held to its `x-auto`.
                    let ok = self.kind_refused(types, &f.node)
                        || matches!(
                            (s.as_str(), self.resolved_shape(types, &f.node)),
                            ("id", Some(Shape::String(_))) | ("now", Some(Shape::Number(_)))
                        );
                    if !ok {
                        self.err(
                            &fat.join("x-auto"),
                            K::InvalidValue,
                            format!(
                                "`x-auto: {s}` needs a {} property",
                                if s == "id" { "string" } else { "number or integer" }
                            ),
                        );
                    }
                    auto.push((f.name.clone(), if s == "id" { AutoValue::Id } else { AutoValue::Now }));
                }
                Some(_) => self.err(
                    &fat.join("x-auto"),
                    K::InvalidValue,
                    "`x-auto` is `\"id\"` (a fresh id) or `\"now\"` (the time in milliseconds)",
                ),
                None => {
                    if f.required && f.name != role_field && f.name != union_field {
                        self.err(
                            &fat,
                            K::Missing,
                            format!("the constructor cannot fill the required envelope property `{}`: give it `x-auto` (`\"id\"` or `\"now\"`)", f.name),
                        );
                    }
                }
            }
        }
        let removed = self.removed(types, &env_at, env_v, &mut u, &events, all_events);
        let flows = self.flows(&env_at, env_v);
        let side_channels = self
            .string_rows(&env_at, env_v, "x-side-channels", ["thing", "mechanism", "why"])
            .into_iter()
            .map(|[thing, mechanism, why]| SideChannel { thing, mechanism, why })
            .collect();
        let open_questions = self
            .string_rows(&env_at, env_v, "x-open-questions", ["question", "decision"])
            .into_iter()
            .map(|[question, decision]| OpenQuestion { question, decision })
            .collect();
        let sequence = self.sequence(
            &super::sequence::SeqCx {
                types,
                envelope: &env_obj.fields,
                union_field: &union_field,
                discriminator: &u.discriminator,
                events: &events,
                roles: &roles,
                envelope_roles: &envelope_field_roles,
                all_events,
            },
            &env_at,
            env_v,
        );
        if let Some(d) = types.slots[union.0].def.as_mut() {
            d.node.shape = Shape::Union(u);
        }
        self.require_descriptions(types);
        Some(Protocol {
            envelope: env,
            role_field,
            role_enum,
            roles,
            union_field,
            union,
            events,
            envelope_field_roles,
            auto,
            categories,
            removed,
            flows,
            side_channels,
            open_questions,
            sequence,
        })
    }

    /// `x-renamed-from` on an event is its previous discriminator value: taken from the type into the event, and
    /// checked to name no current event and no other event's previous value.
    fn event_renames(&mut self, types: &mut Types, events: &mut [Event]) {
        let tags: BTreeSet<String> = events.iter().map(|e| e.tag.clone()).collect();
        for i in 0..events.len() {
            let ty = events[i].ty;
            let Some(old) = types.slots[ty.0].def.as_mut().and_then(|d| d.renamed_from.take()) else { continue };
            let at = types.slots[ty.0].origin.join("x-renamed-from");
            if tags.contains(&old) {
                self.err(&at, K::InvalidValue, format!("`{old}` is still an event: a rename leaves no event behind"));
            } else if let Some(other) = events[..i].iter().find(|e| e.renamed_from.as_deref() == Some(old.as_str())) {
                let msg = format!("`{}` is already renamed from `{old}`", other.tag);
                self.err(&at, K::InvalidValue, msg);
            } else {
                events[i].renamed_from = Some(old);
            }
        }
    }

    /// `x-flows`: `[{title, description, messages: [{note?, message}]}]`.
    fn flows(&mut self, at: &Origin, v: &Value) -> Vec<Flow> {
        let Some(list) = v.get("x-flows") else { return Vec::new() };
        let at = at.join("x-flows");
        let mut out = Vec::new();
        for (i, f) in list.as_array().map(Vec::as_slice).unwrap_or_default().iter().enumerate() {
            let fat = at.join(&i.to_string());
            let text = |k: &str| f.get(k).and_then(Value::as_str).map(String::from);
            let steps: Option<Vec<FlowStep>> = f.get("messages").and_then(Value::as_array).and_then(|ms| {
                ms.iter()
                    .map(|m| {
                        let note = match m.get("note") {
                            None => None,
                            Some(n) => Some(n.as_str()?.to_string()),
                        };
                        let message = m.get("message").filter(|x| x.is_object())?.clone();
                        let known = m.as_object()?.keys().all(|k| k == "note" || k == "message");
                        known.then_some(FlowStep { note, message })
                    })
                    .collect()
            });
            match (text("title"), text("description"), steps) {
                (Some(title), Some(description), Some(steps)) if !steps.is_empty() => {
                    out.push(Flow { title, description, steps })
                }
                _ => self.err(
                    &fat,
                    K::InvalidValue,
                    "an `x-flows` entry is `{\"title\", \"description\", \"messages\": [{\"note\"?, \"message\": {envelope}}]}`",
                ),
            }
        }
        if !list.is_array() {
            self.err(&at, K::InvalidValue, "`x-flows` must be an array");
        }
        out
    }

    /// An envelope annotation holding an array of objects with the given string members, all required.
    fn string_rows<const N: usize>(&mut self, at: &Origin, v: &Value, key: &str, cols: [&str; N]) -> Vec<[String; N]> {
        let Some(list) = v.get(key) else { return Vec::new() };
        let rows: Option<Vec<[String; N]>> = list.as_array().and_then(|a| {
            a.iter()
                .map(|x| {
                    let o = x.as_object().filter(|o| o.len() == N)?;
                    let mut row: [String; N] = std::array::from_fn(|_| String::new());
                    for (cell, c) in row.iter_mut().zip(cols) {
                        *cell = o.get(c)?.as_str()?.to_string();
                    }
                    Some(row)
                })
                .collect()
        });
        rows.unwrap_or_else(|| {
            let shape = cols.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ");
            self.err(&at.join(key), K::InvalidValue, format!("`{key}` is an array of `{{{shape}}}` (strings)"));
            Vec::new()
        })
    }

    /// The shape a node stands for, through references.
    fn resolved_shape<'t>(&self, types: &'t Types, n: &'t Node) -> Option<&'t Shape> {
        let mut s = &n.shape;
        for _ in 0..=types.slots.len() {
            match s {
                Shape::Ref(id) => s = &types.slots[id.0].def.as_ref()?.node.shape,
                other => return Some(other),
            }
        }
        None
    }

    /// Each example of the event at `at` holds its tag.
    fn example_tags(&mut self, at: &Origin, tag: &str, discriminator: &str) {
        let examples = self.doc(at).or_null(at).get("examples").and_then(Value::as_array).cloned().unwrap_or_default();
        for (i, ex) in examples.iter().enumerate() {
            if ex.get(discriminator).and_then(Value::as_str) != Some(tag) {
                self.err(
                    &at.join("examples").join(&i.to_string()),
                    K::InvalidValue,
                    format!("the example's `{discriminator}` must be `{tag}`"),
                );
            }
        }
    }

    fn event(
        &mut self,
        types: &Types,
        ty: TypeId,
        tag: &str,
        roles: &[String],
        categories: &[Category],
    ) -> Option<Event> {
        let at = types.slots[ty.0].origin.clone();
        let doc = self.doc(&at);
        let v = doc.or_null(&at);
        let ev_roles = self.roles(&at, Some(roles));
        // The event's roles when they are known: missing or refused, its fields' roles are not held to them.
        let roles_known = ev_roles.is_some() && !self.refused_within(&at.join("x-roles"));
        let ev_roles = ev_roles.unwrap_or_else(|| {
            if !self.refused_within(&at.join("x-roles")) {
                self.err(&at, K::Missing, "`x-roles` (who may send this event) is required on an event");
            }
            Vec::new()
        });
        let category = match v.get("x-category") {
            // With no categories (the envelope's `x-categories` is missing or refused), none is reported.
            Some(Value::String(c)) if categories.is_empty() || categories.iter().any(|x| &x.name == c) => c.clone(),
            Some(Value::String(c)) => {
                let names: Vec<&str> = categories.iter().map(|c| c.name.as_str()).collect();
                self.err(
                    &at.join("x-category"),
                    K::InvalidValue,
                    format!("`{c}` is not one of the envelope's `x-categories` ({})", names.join(", ")),
                );
                c.clone()
            }
            _ => {
                self.err(
                    &at,
                    K::Missing,
                    "`x-category` (one of the envelope's `x-categories`) is required on an event",
                );
                String::new()
            }
        };
        let status = match v.get("x-status") {
            Some(Value::String(s)) if STATUSES.contains(&s.as_str()) => s.clone(),
            _ => {
                self.err(
                    &at.join("x-status"),
                    K::InvalidValue,
                    "`x-status` must be existing, modified, renamed or new",
                );
                String::new()
            }
        };
        let status_note = match v.get("x-status-note") {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                self.err(&at.join("x-status-note"), K::InvalidValue, "`x-status-note` must be a string");
                None
            }
        };
        match v.get("examples") {
            Some(Value::Array(a)) if !a.is_empty() => {}
            // Refused already (not an array).
            Some(_) if self.refused_within(&at.join("examples")) => {}
            _ => self.err(&at, K::Missing, "every event needs `examples` (at least one example body)"),
        }
        let mut field_roles = Vec::new();
        if let Some(Shape::Object(o)) = types.slots[ty.0].def.as_ref().map(|d| &d.node.shape) {
            for f in &o.fields {
                let fat = at.join("properties").join(&f.name);
                if let Some(r) = self.roles(&fat, Some(roles)) {
                    // A role that is none is reported already.
                    if let Some(x) = r.iter().find(|x| roles_known && roles.contains(x) && !ev_roles.contains(x)) {
                        self.err(
                            &fat.join("x-roles"),
                            K::InvalidValue,
                            format!("role `{x}` may not send this event at all"),
                        );
                    } else if let Some(x) = ev_roles.iter().find(|x| f.required && !r.contains(x)) {
                        // The reference, the role matrix and the Rust constructors would offer the event to a
                        // role every message of which is refused (`required` without it, `role-field` with it).
                        self.err(
                            &fat.join("x-roles"),
                            K::InvalidValue,
                            format!(
                                "role `{x}` may send this event but not this property, which is required: `{x}` could \
                                 never send the event (take `{x}` from the event's `x-roles`, or make the property \
                                 optional)"
                            ),
                        );
                    }
                    field_roles.push((f.name.clone(), r));
                }
            }
        }
        Some(Event {
            tag: tag.to_string(),
            ty,
            roles: ev_roles,
            field_roles,
            category,
            status,
            status_note,
            renamed_from: None,
        })
    }

    /// `x-roles` at `at`, checked against the protocol's roles.
    fn roles(&mut self, at: &Origin, roles: Option<&[String]>) -> Option<Vec<String>> {
        let r = self.value_at(at)?.get("x-roles")?.clone();
        let list: Option<Vec<String>> =
            r.as_array().and_then(|a| a.iter().map(|x| x.as_str().map(String::from)).collect());
        match list {
            Some(l) if !l.is_empty() => {
                // Every name that is no role, in one error (they are at one place).
                let unknown: Vec<String> = match roles {
                    Some(roles) => l.iter().filter(|x| !roles.contains(x)).map(|x| format!("`{x}`")).collect(),
                    None => Vec::new(),
                };
                if !unknown.is_empty() {
                    let all = roles.unwrap_or_default().join(", ");
                    let verb = if unknown.len() == 1 { "is not a role" } else { "are not roles" };
                    let names = crate::diag::and_list(&unknown);
                    self.err(&at.join("x-roles"), K::InvalidValue, format!("{names} {verb} (roles: {all})"));
                }
                Some(l)
            }
            _ => {
                self.err(&at.join("x-roles"), K::InvalidValue, "`x-roles` must be a non-empty array of role names");
                None
            }
        }
    }

    fn categories(&mut self, at: &Origin, v: &Value) -> Vec<Category> {
        let Some(c) = v.get("x-categories") else {
            self.err(at, K::Missing, "the envelope needs `x-categories` (the event groups of the reference)");
            return Vec::new();
        };
        let list: Option<Vec<Category>> = c.as_array().and_then(|a| {
            a.iter()
                .map(|x| {
                    Some(Category {
                        name: x.get("name")?.as_str()?.to_string(),
                        title: x.get("title")?.as_str()?.to_string(),
                    })
                })
                .collect()
        });
        match list {
            Some(l) if !l.is_empty() => l,
            _ => {
                let msg = "`x-categories` is a non-empty array of `{\"name\", \"title\"}`";
                self.err(&at.join("x-categories"), K::InvalidValue, msg);
                Vec::new()
            }
        }
    }

    /// The envelope's `x-removed` entries (`all_events`: whether every member of the union is an event; when not,
    /// a name that is no event is not reported, as it may be the refused member's).
    fn removed(
        &mut self,
        types: &mut Types,
        at: &Origin,
        v: &Value,
        u: &mut UnionShape,
        events: &[Event],
        all_events: bool,
    ) -> Vec<Removed> {
        let empty = Vec::new();
        let list = match v.get("x-removed") {
            None => &empty,
            Some(Value::Array(a)) => a,
            Some(_) => {
                self.err(&at.join("x-removed"), K::InvalidValue, "`x-removed` must be an array");
                return Vec::new();
            }
        };
        let tags: BTreeSet<&str> = events.iter().map(|e| e.tag.as_str()).collect();
        let mut documented = BTreeSet::new();
        let mut out = Vec::new();
        for (i, r) in list.iter().enumerate() {
            let rat = at.join("x-removed").join(&i.to_string());
            if let Some(o) = r.as_object() {
                self.unknown_keys(&rat, o, &["what", "why", "events", "renamed", "property"], "an `x-removed` entry");
                if let Some(p) = o.get("property").and_then(Value::as_object) {
                    self.unknown_keys(
                        &rat.join("property"),
                        p,
                        &["event", "name", "replacement"],
                        "a removed property",
                    );
                }
            }
            let what = r.get("what").and_then(Value::as_str).map(String::from);
            let why = r.get("why").and_then(Value::as_str).map(String::from);
            let (Some(what), Some(why)) = (what, why) else {
                self.err(&rat, K::InvalidValue, "each `x-removed` entry needs `what` and `why`");
                continue;
            };
            let kind = if let Some(evs) = r.get("events").and_then(Value::as_object) {
                let mut pairs = Vec::new();
                for (old, rep) in evs {
                    if tags.contains(old.as_str()) {
                        self.err(&rat.join("events").join(old), K::InvalidValue, format!("`{old}` is still an event"));
                    }
                    if let Some(e) = events.iter().find(|e| e.renamed_from.as_deref() == Some(old.as_str())) {
                        self.err(
                            &rat.join("events").join(old),
                            K::InvalidValue,
                            format!(
                                "`{}` declares it is `{old}` renamed (`x-renamed-from`): list `{}` in this entry's `renamed` instead of stating the rename twice",
                                e.tag, e.tag
                            ),
                        );
                    }
                    let Some(rep) = rep.as_str() else {
                        self.err(&rat.join("events").join(old), K::InvalidValue, "the replacement must be a string");
                        continue;
                    };
                    if all_events && !tags.contains(rep.split('.').next().unwrap_or(rep)) {
                        self.err(&rat.join("events").join(old), K::InvalidValue, format!("`{rep}` names no event"));
                    }
                    pairs.push((old.clone(), rep.to_string()));
                    u.removed.push((old.clone(), rep.to_string()));
                }
                RemovedKind::Events(pairs)
            } else if let Some(list) = r.get("renamed") {
                // The events this entry documents; their previous tags are their `x-renamed-from`, stated once.
                let names: Option<Vec<&str>> =
                    list.as_array().filter(|a| !a.is_empty()).and_then(|a| a.iter().map(Value::as_str).collect());
                let Some(names) = names else {
                    self.err(&rat.join("renamed"), K::InvalidValue, "`renamed` is a non-empty array of event names");
                    continue;
                };
                let mut pairs = Vec::new();
                for (j, tag) in names.into_iter().enumerate() {
                    let jat = rat.join("renamed").join(&j.to_string());
                    match events.iter().find(|e| e.tag == tag) {
                        None if !all_events => {}
                        None => self.err(&jat, K::InvalidValue, format!("`{tag}` names no event")),
                        // Its `x-renamed-from` refused already is not reported missing.
                        Some(Event { renamed_from: None, ty, .. })
                            if self.refused_within(&types.slots[ty.0].origin.join("x-renamed-from")) => {}
                        Some(Event { renamed_from: None, .. }) => self.err(
                            &jat,
                            K::InvalidValue,
                            format!("`{tag}` has no `x-renamed-from`: say there what it was called"),
                        ),
                        Some(Event { renamed_from: Some(old), .. }) => {
                            if documented.contains(tag) {
                                self.err(&jat, K::InvalidValue, format!("`{tag}` is already listed in `renamed`"));
                                continue;
                            }
                            documented.insert(tag.to_string());
                            pairs.push((old.clone(), tag.to_string()));
                            u.removed.push((old.clone(), tag.to_string()));
                        }
                    }
                }
                RemovedKind::Events(pairs)
            } else if let Some(p) = r.get("property") {
                let (Some(event), Some(name), Some(replacement)) = (
                    p.get("event").and_then(Value::as_str),
                    p.get("name").and_then(Value::as_str),
                    p.get("replacement").and_then(Value::as_str),
                ) else {
                    self.err(
                        &rat.join("property"),
                        K::InvalidValue,
                        "`property` needs `event`, `name` and `replacement`",
                    );
                    continue;
                };
                match events.iter().find(|e| e.tag == event) {
                    Some(e) => {
                        if let Some(Shape::Object(o)) = types.slots[e.ty.0].def.as_mut().map(|d| &mut d.node.shape) {
                            if o.fields.iter().any(|f| f.name == name) {
                                self.err(
                                    &rat.join("property"),
                                    K::InvalidValue,
                                    format!("`{name}` is still a property of `{event}`"),
                                );
                            }
                            o.removed.push(RemovedProperty {
                                name: name.into(),
                                replacement: replacement.into(),
                                owner: event.into(),
                            });
                        }
                    }
                    None if !all_events => {}
                    None => self.err(
                        &rat.join("property").join("event"),
                        K::InvalidValue,
                        format!("`{event}` names no event"),
                    ),
                }
                RemovedKind::Property { event: event.into(), name: name.into(), replacement: replacement.into() }
            } else {
                self.err(&rat, K::InvalidValue, "an `x-removed` entry has `events`, `renamed` or `property`");
                continue;
            };
            out.push(Removed { what, why, kind, origin: rat });
        }
        // An entry refused already may be the one that lists them.
        if !self.refused_within(&at.join("x-removed")) {
            self.undocumented_renames(types, at, events, &documented);
        }
        out
    }

    /// Every renamed event is listed in an `x-removed` entry's `renamed`: the Removed table and the
    /// `removed-event` hint for its old tag come from there.
    fn undocumented_renames(
        &mut self,
        types: &Types,
        env_at: &Origin,
        events: &[Event],
        documented: &BTreeSet<String>,
    ) {
        for e in events {
            if let Some(old) = &e.renamed_from {
                if !documented.contains(&e.tag) {
                    let at = types.slots[e.ty.0].origin.join("x-renamed-from");
                    let msg = format!(
                        "no `x-removed` entry of `{}` lists `{}` in `renamed`, so `{old}` would be an unknown event rather than a renamed one",
                        env_at.file, e.tag
                    );
                    self.err(&at, K::Missing, msg);
                }
            }
        }
    }

    /// A protocol documents every type and field.
    fn require_descriptions(&mut self, types: &Types) {
        for s in &types.slots {
            let Some(d) = &s.def else { continue };
            // A `description` refused already (not a string) is not reported missing too.
            if d.description.as_deref().is_none_or(|t| t.trim().is_empty())
                && (s.explicit || matches!(d.node.shape, Shape::Object(_) | Shape::Union(_) | Shape::Enum(_)))
                && !self.refused_within(&s.origin.join("description"))
            {
                self.err(
                    &s.origin,
                    K::MissingDescription,
                    "every type, field and event needs a non-empty `description`",
                );
            }
            if let Shape::Object(o) = &d.node.shape {
                for f in &o.fields {
                    if f.description.as_deref().is_none_or(|t| t.trim().is_empty())
                        && !self.refused_within(&f.node.origin.join("description"))
                    {
                        self.err(
                            &f.node.origin,
                            K::MissingDescription,
                            "every type, field and event needs a non-empty `description`",
                        );
                    }
                }
            }
        }
    }

    /// Refuses protocol annotations where they mean nothing.
    fn check_placement(&mut self, types: &Types, p: Option<&Protocol>) {
        let mut envelope = BTreeSet::new();
        let mut events = BTreeSet::new();
        let mut fields = BTreeSet::new();
        let mut env_fields = BTreeSet::new();
        if let Some(p) = p {
            let at = types.slots[p.envelope.0].origin.clone();
            envelope.insert(at.clone());
            if let Some(Shape::Object(o)) = types.slots[p.envelope.0].def.as_ref().map(|d| &d.node.shape) {
                for f in &o.fields {
                    env_fields.insert(at.join("properties").join(&f.name));
                }
            }
            // Every member of the event union is an event's place, those refused already included (their
            // annotations are not the mistake).
            let members: Vec<TypeId> = match types.slots[p.union.0].def.as_ref().map(|d| &d.node.shape) {
                Some(Shape::Union(u)) => u.members.iter().map(|m| m.ty).collect(),
                _ => p.events.iter().map(|e| e.ty).collect(),
            };
            for ty in members {
                let eat = types.slots[ty.0].origin.clone();
                events.insert(eat.clone());
                // The properties it declares, also when its type is refused (it has no fields then).
                if let Some(Value::Object(ps)) = self.value_at(&eat).and_then(|v| v.get("properties")) {
                    fields.extend(ps.keys().map(|k| eat.join("properties").join(k)));
                }
                if let Some(Shape::Object(o)) = types.slots[ty.0].def.as_ref().map(|d| &d.node.shape) {
                    for f in &o.fields {
                        fields.insert(eat.join("properties").join(&f.name));
                    }
                }
            }
        }
        let rels: Vec<String> = self.files.keys().cloned().collect();
        // Without a protocol envelope, the protocol's annotations: one error for all of them (a protocol whose
        // envelope lost its `x-role-property` had one error per annotation of every event, 72 in all; helper 109).
        let mut orphans: Vec<(Origin, String)> = Vec::new();
        for rel in rels {
            let v = self.files[&rel].value.clone();
            // Each schema with whether it is a property's schema (`properties/<name>`).
            let mut stack = vec![(Origin { file: rel.clone(), pointer: String::new() }, &*v, false)];
            while let Some((at, node, property)) = stack.pop() {
                if let Some(o) = node.as_object() {
                    for k in o.keys() {
                        let ok = match k.as_str() {
                            "x-renamed-from" => property || super::build::is_type_root(&at.pointer),
                            "x-moved-from" => fields.contains(&at),
                            k if ENVELOPE_ONLY.contains(&k) => {
                                envelope.contains(&at) || (p.is_none() && k == "x-role-property")
                            }
                            k if EVENT_ONLY.contains(&k) => events.contains(&at),
                            "x-roles" => events.contains(&at) || fields.contains(&at) || env_fields.contains(&at),
                            "x-auto" => env_fields.contains(&at),
                            _ => true,
                        };
                        if ok && k == "x-moved-from" {
                            let src = o.get(k).and_then(Value::as_str).unwrap_or_default();
                            let tokens: Vec<String> = src.split('/').skip(1).map(crate::diag::unescape_token).collect();
                            let why = match p {
                                Some(p) if tokens.first() == Some(&p.union_field) => Some(format!(
                                    "`{src}` is inside the event: a value that stays in the event is renamed \
                                     (`x-renamed-from`), not moved"
                                )),
                                Some(p) => required_where_held(types, p.envelope, &tokens).map(|holder| {
                                    format!(
                                        "`{src}` is required on {holder} of this version: moving its value out \
                                         would leave every upgraded one without it"
                                    )
                                }),
                                None => None,
                            };
                            if let Some(why) = why {
                                self.err(&at.join(k), K::InvalidValue, why);
                            }
                        }
                        if !ok && p.is_none() && k != "x-renamed-from" {
                            orphans.push((at.join(k), k.clone()));
                            continue;
                        }
                        if !ok {
                            let place = if k == "x-moved-from" {
                                "here (it stands only on a property an event declares in its own `properties`: a value moves into the event itself)"
                            } else if k == "x-renamed-from" {
                                "here (it stands on a property, a file root or a `$defs` entry)"
                            } else {
                                "here"
                            };
                            self.err(&at.join(k), K::InvalidValue, format!("`{k}` has no meaning {place}"));
                        }
                    }
                }
                for (tok, child) in super::children(node) {
                    let property = tok.starts_with("/properties/");
                    stack.push((at.below(&tok), child, property));
                }
            }
        }
        if let Some((at, k)) = orphans.first() {
            let files: BTreeSet<&str> = orphans.iter().map(|(o, _)| o.file.as_str()).collect();
            let mut keys: Vec<&str> = Vec::new();
            for (_, k) in &orphans {
                if !keys.contains(&k.as_str()) {
                    keys.push(k);
                }
            }
            let more = match orphans.len() - 1 {
                0 => String::new(),
                n => format!(
                    "; nor have the {n} other protocol annotations in {} ({}): one `x-role-property` on the \
                     envelope, naming its role property, gives them all one",
                    crate::engine::counted(files.len() as u64, "file", "files"),
                    keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                ),
            };
            let msg = format!("`{k}` has no meaning without a protocol envelope (`x-role-property`){more}");
            self.err(at, K::InvalidValue, msg);
        }
    }

    /// The package's names and the file that states them.
    pub(crate) fn package(&mut self, types: &Types, p: Option<&Protocol>) -> (Package, Option<String>) {
        let with_package: Vec<String> =
            self.files.iter().filter(|(_, f)| f.value.get("x-package").is_some()).map(|(k, _)| k.clone()).collect();
        for extra in with_package.iter().skip(1) {
            let at = Origin { file: extra.clone(), pointer: "/x-package".into() };
            self.err(&at, K::InvalidValue, format!("`x-package` is already given in `{}`", with_package[0]));
        }
        let root_file = with_package
            .first()
            .cloned()
            .or_else(|| p.map(|p| types.slots[p.envelope.0].origin.file.clone()))
            .or_else(|| self.single.clone());
        let mut pkg = Package {
            crate_name: "wire-types".into(),
            npm_name: "wire-types".into(),
            version: DEFAULT_VERSION.into(),
            license: Package::DEFAULT_LICENSE.into(),
        };
        let Some(rf) = &root_file else { return (pkg, None) };
        let at = Origin { file: rf.clone(), pointer: String::new() };
        if let Some(x) = self.value_at(&at).and_then(|v| v.get("x-package")).cloned() {
            if let Some(o) = x.as_object() {
                self.unknown_keys(&at.join("x-package"), o, &["crate", "npm", "version", "license"], "`x-package`");
            }
            match (x.get("crate").and_then(Value::as_str), x.get("npm").and_then(Value::as_str)) {
                (Some(c), Some(n)) => {
                    let at = at.join("x-package");
                    if is_crate_name(c) {
                        pkg.crate_name = c.into();
                    } else {
                        self.err(
                            &at.join("crate"),
                            K::InvalidValue,
                            format!(
                                "`crate` is `{c}`: a Cargo package name is a lowercase letter, then lowercase letters \
                                 and digits, words joined by one `-` or `_` (`session-wire`), at most 64 characters"
                            ),
                        );
                    }
                    if is_npm_name(n) {
                        pkg.npm_name = n.into();
                    } else {
                        self.err(
                            &at.join("npm"),
                            K::InvalidValue,
                            format!(
                                "`npm` is `{n}`: an npm package name is lowercase letters, digits, `-`, `_` and `.`, \
                                 not starting with `.` or `_`, optionally after a scope (`@team/session-wire`), at \
                                 most 214 characters"
                            ),
                        );
                    }
                }
                _ => self.err(
                    &at.join("x-package"),
                    K::InvalidValue,
                    "`x-package` is `{\"crate\": \"name\", \"npm\": \"name\"}` (lowercase), with an optional `\"version\"`",
                ),
            }
            match x.get("version") {
                None => {}
                Some(Value::String(v)) if is_semver(v) => pkg.version = v.clone(),
                Some(v) => self.err(
                    &at.join("x-package").join("version"),
                    K::InvalidValue,
                    format!(
                        "`version` is {v}: a SemVer version, as Cargo and npm read it (`1.2.3`, `1.2.3-beta.1`, \
                         `1.2.3+build.5`)"
                    ),
                ),
            }
            match x.get("license") {
                None => {}
                Some(Value::String(l)) if is_spdx_expression(l) => pkg.license = l.clone(),
                Some(v) => self.err(
                    &at.join("x-package").join("license"),
                    K::InvalidValue,
                    format!(
                        "`license` is {v}: an SPDX license expression, as Cargo and npm read it (`MIT`, \
                         `Apache-2.0`, `MIT OR Apache-2.0`, `GPL-2.0-only WITH Classpath-exception-2.0`)"
                    ),
                ),
            }
        }
        (pkg, root_file)
    }

    /// The type `validate` checks by default.
    pub(crate) fn root_type(&mut self, types: &Types, p: Option<&Protocol>) -> Option<TypeId> {
        // `x-root` is `true` or `false`, on a named type (a file's root or a `$defs` entry); anywhere else, or of
        // another type, it marked nothing and was ignored without a word (helper 118).
        let mut found = Vec::new();
        self.each_schema(&mut |at, v| {
            if let Some(x) = v.get("x-root") {
                found.push((at.clone(), x.is_boolean()));
            }
        });
        for (at, boolean) in found {
            if self.refused_within(&at) {
                continue;
            }
            if !boolean {
                self.err(&at.join("x-root"), K::InvalidValue, "`x-root` is `true` (this type is the root) or `false`");
            } else if types.named.get(&at).is_none_or(|id| types.slots[id.0].part) {
                self.err(
                    &at.join("x-root"),
                    K::InvalidValue,
                    "`x-root` marks a named type (a file's root or a `$defs` entry), and this schema is none: move it there",
                );
            }
        }
        let marked: Vec<TypeId> = (0..types.slots.len())
            .map(TypeId)
            .filter(|id| types.named.get(&types.slots[id.0].origin) == Some(id))
            .filter(|id| {
                self.value_at(&types.slots[id.0].origin).and_then(|v| v.get("x-root")) == Some(&Value::Bool(true))
            })
            .collect();
        if marked.len() > 1 {
            for id in &marked[1..] {
                self.err(
                    &types.slots[id.0].origin.join("x-root"),
                    K::InvalidValue,
                    "only one type can be the root (`x-root`)",
                );
            }
        }
        marked.first().copied().or(p.map(|p| p.envelope)).or_else(|| {
            let single = self.single.clone()?;
            types.named.get(&Origin { file: single, pointer: String::new() }).copied()
        })
    }

    /// Title, description and base URI of the package root.
    pub(crate) fn root_text(&self, root_file: Option<&str>) -> (String, String, String) {
        let Some(v) = root_file.and_then(|f| self.files.get(f)).map(|f| f.value.clone()) else {
            return (String::new(), String::new(), String::new());
        };
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        let id = s("$id");
        let base = id.rsplit_once('/').map(|(b, _)| format!("{b}/")).unwrap_or_default();
        (s("title"), s("description"), base)
    }
}

/// When the property at `path` (names from the envelope's root) is required in the object that holds it in this
/// version, what that object is ("every message", "every `/usage`"): a move out of the property would leave every
/// such object of an upgraded message without it. `None` when it is optional, or the path leaves the objects this
/// can follow (a union, a map).
fn required_where_held(types: &Types, envelope: TypeId, path: &[String]) -> Option<String> {
    let (last, holders) = path.split_last()?;
    let mut holder = object_of(types, &types.slots[envelope.0].def.as_ref()?.node.shape)?;
    for name in holders {
        let field = holder.fields.iter().find(|f| &f.name == name)?;
        holder = object_of(types, &field.node.shape)?;
    }
    holder.fields.iter().find(|f| &f.name == last).filter(|f| f.required)?;
    Some(if holders.is_empty() {
        "every message".to_string()
    } else {
        let pointer: String = holders.iter().map(|h| crate::diag::push_ptr("", h)).collect();
        format!("every `{pointer}`")
    })
}

/// The object a shape is, through references.
fn object_of<'a>(types: &'a Types, mut shape: &'a Shape) -> Option<&'a ObjectShape> {
    // A chain of references is as long as the types are many, at most.
    for _ in 0..=types.slots.len() {
        match shape {
            Shape::Object(o) => return Some(o),
            Shape::Ref(id) => shape = &types.slots.get(id.0)?.def.as_ref()?.node.shape,
            _ => return None,
        }
    }
    None
}

/// The version of a package whose `x-package` gives none.
const DEFAULT_VERSION: &str = "0.1.0";

/// Whether `s` reads as an SPDX license expression: license ids (`MIT`, `Apache-2.0`, `LicenseRef-x`,
/// `DocumentRef-d:LicenseRef-x`, with an optional `+`) joined by `AND`, `OR` and `WITH` (an exception id after
/// it), in balanced parentheses, separated by spaces (written into `Cargo.toml` as it is: a line break there
/// broke the crate's manifest, helper 90). The ids are not looked up in SPDX's list, but `NONE` and
/// `NOASSERTION`, which say there is no licence, are refused.
fn is_spdx_expression(s: &str) -> bool {
    if !s.chars().all(|c| c == ' ' || c.is_ascii_graphic()) {
        return false;
    }
    let spaced = s.replace('(', " ( ").replace(')', " ) ");
    let words: Vec<&str> = spaced.split(' ').filter(|w| !w.is_empty()).collect();
    let part = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    let id = |w: &str| {
        let w = w.strip_suffix('+').unwrap_or(w);
        let refs = |w: &str| match w.strip_prefix("LicenseRef-") {
            Some(rest) => part(rest),
            None => part(w) && !w.starts_with("DocumentRef-"),
        };
        let ok = match w.split_once(':') {
            Some((doc, lic)) => {
                doc.strip_prefix("DocumentRef-").is_some_and(part) && lic.starts_with("LicenseRef-") && refs(lic)
            }
            None => refs(w),
        };
        ok && !matches!(w, "AND" | "OR" | "WITH" | "NONE" | "NOASSERTION")
    };
    // Alternates a term (an id or a parenthesized expression) and an operator, ending on a term.
    let (mut depth, mut want_term, mut after_with) = (0usize, true, false);
    for w in words {
        match w {
            "(" if want_term && !after_with => depth += 1,
            ")" if !want_term && depth > 0 => depth -= 1,
            "AND" | "OR" | "WITH" if !want_term => {
                (want_term, after_with) = (true, w == "WITH");
            }
            w if want_term && id(w) => {
                (want_term, after_with) = (false, false);
            }
            _ => return false,
        }
    }
    !want_term && depth == 0
}

/// Whether a name is a Cargo package name wiregen writes: a lowercase ASCII letter first, then lowercase letters and
/// digits, words joined by one `-` or `_` (the crate's name in Rust is its `_` form, which rustc warns of when it holds
/// `__`), at most 64 characters (crates.io's limit).
fn is_crate_name(n: &str) -> bool {
    n.len() <= 64
        && n.starts_with(|c: char| c.is_ascii_lowercase())
        && n.split(['-', '_']).all(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()))
}

/// Whether a name is an npm package name: at most 214 characters, lowercase letters, digits, `-`, `_` and `.`, not
/// starting with `.` or `_`, optionally after a scope `@scope/` of the same characters.
fn is_npm_name(n: &str) -> bool {
    let part = |p: &str| {
        !p.is_empty()
            && !p.starts_with(['.', '_'])
            && p.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'))
    };
    let name = match n.strip_prefix('@') {
        Some(scoped) => match scoped.split_once('/') {
            Some((scope, name)) if part(scope) => name,
            _ => return false,
        },
        None => n,
    };
    n.len() <= 214 && part(name) && name != "node_modules" && name != "favicon.ico"
}

/// Whether `v` is a SemVer 2.0.0 version (what both Cargo and npm accept): `MAJOR.MINOR.PATCH`, numbers without
/// leading zeros, then an optional `-` pre-release and `+` build, dot-separated identifiers of ASCII letters,
/// digits and `-` (a numeric pre-release identifier without leading zeros).
fn is_semver(v: &str) -> bool {
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    let ident = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let (rest, build) = match v.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (v, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (rest, None),
    };
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| number(p))
        && pre.is_none_or(|p| p.split('.').all(|i| ident(i) && (!i.bytes().all(|b| b.is_ascii_digit()) || number(i))))
        && build.is_none_or(|b| b.split('.').all(ident))
}

#[cfg(test)]
mod version_tests {
    use super::{is_semver, is_spdx_expression};

    #[test]
    fn spdx_expressions() {
        for ok in [
            "MIT",
            "Apache-2.0",
            "MIT OR Apache-2.0",
            "GPL-2.0+",
            "(MIT OR Apache-2.0) AND BSD-3-Clause",
            "GPL-2.0-only WITH Classpath-exception-2.0",
            "LicenseRef-acme-1.1",
            "DocumentRef-spdx-tool-1.2:LicenseRef-MIT-Style-2",
            "MIT  OR  Apache-2.0",
        ] {
            assert!(is_spdx_expression(ok), "{ok}");
        }
        for bad in [
            "",
            "SEE LICENSE IN LICENSE.txt",
            "MIT OR",
            "OR MIT",
            "(MIT",
            "MIT)",
            "MIT AND (Apache-2.0",
            "MIT Apache-2.0",
            "MIT/Apache-2.0",
            "MIT WITH (Apache-2.0)",
            "\"MIT\"",
            // A line break or another space would reach `Cargo.toml` as written (helper 90).
            "MIT\nOR Apache-2.0",
            "MIT\rOR Apache-2.0",
            "MIT\tOR Apache-2.0",
            "MIT\u{a0}OR Apache-2.0",
            "NONE",
            "NOASSERTION",
            "LicenseRef-",
            "DocumentRef-x",
            "DocumentRef-x:MIT",
        ] {
            assert!(!is_spdx_expression(bad), "{bad}");
        }
    }

    #[test]
    fn semver_versions() {
        for ok in [
            "0.1.0",
            "1.2.3",
            "10.20.30",
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-0.3.7",
            "1.0.0-x-y.7",
            "1.0.0+20130313144700",
            "1.0.0-beta+exp.sha.5114f85",
        ] {
            assert!(is_semver(ok), "{ok}");
        }
        for bad in [
            "",
            "1",
            "1.2",
            "1.2.3.4",
            "01.2.3",
            "1.02.3",
            "v1.2.3",
            "1.2.3-",
            "1.2.3-01",
            "1.2.3+",
            "1.2.3-a..b",
            "1.2.3-a_b",
            " 1.2.3",
            "1.2.x",
        ] {
            assert!(!is_semver(bad), "{bad}");
        }
    }
}
