//! `x-sequence` on the envelope: the protocol's sequence rules as data, lowered into [`Sequence`].
//!
//! ```json
//! "x-sequence": {
//!   "scopes": { "<name>": { "key", "opened-by", "closed-by", "single", "within", "marks", "record", "rollup" } },
//!   "rules": [ { "id", "kind", "scope", ..., "pointer", "message", "summary", "seed" } ],
//!   "rollup": { "<name>": { "kind", "event", "field" } }
//! }
//! ```
//!
//! Everything a declaration names is checked here, located at the declaration: an event tag that is no event, a
//! key or value pointer to a field that the events it is read from do not have, a scope closed but never opened,
//! an unknown kind, scope or mark, a message placeholder the kind does not fill, a rule id used twice.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::build::Types;
use super::{Cx, Entries};
use crate::diag::SchemaErrorKind as K;
use crate::ir::kinds::KindSet;
use crate::ir::sequence::*;
use crate::ir::*;

const SCOPE_KEYS: &[&str] =
    &["description", "key", "opened-by", "closed-by", "single", "within", "marks", "record", "rollup"];
const RULE_KEYS: &[&str] = &[
    "id",
    "kind",
    "scope",
    "role",
    "on",
    "when",
    "pointer",
    "message",
    "summary",
    "seed",
    "key",
    "at",
    "by",
    "unless",
    "mark",
    "field",
    "equals",
    "description",
    "$comment",
];

/// The members every rule has.
const RULE_REQUIRED: [&str; 6] = ["id", "kind", "pointer", "message", "summary", "seed"];

/// The members a rule of any kind may have.
const RULE_COMMON: &[&str] =
    &["id", "kind", "role", "on", "when", "pointer", "message", "summary", "seed", "description", "$comment"];

/// The members a rule of a kind reads beside [`RULE_COMMON`] (`None` for no kind).
fn kind_members(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "unique" => &["key"],
        "names-open" => &["scope", "at"],
        "close-blocked" => &["scope", "by", "unless"],
        "close-requires" => &["scope", "mark", "field", "equals"],
        k if RuleKind::NAMES.contains(&k) => &["scope"],
        _ => return None,
    })
}

/// Whether a rule id has the form every id has: lowercase ASCII words of letters and digits joined by `.` or `-`
/// (`turn.already-open`). Records, metrics labels and log lines print it as it is.
pub(crate) fn is_rule_id(id: &str) -> bool {
    id.split(['.', '-']).all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
}

const ROLLUP_KINDS: &[&str] = &["last", "latest", "count", "sum"];

/// Which messages a rule reads: its `on` events (all when empty), its `role`, its `when` values.
#[derive(Clone, Copy)]
struct Filters<'a> {
    on: &'a [String],
    role: Option<&'a str>,
    when: &'a [(FieldRef, Value)],
}

/// What the lowering reads from the rest of the protocol.
pub(super) struct SeqCx<'a> {
    pub(super) types: &'a Types,
    pub(super) envelope: &'a [Field],
    pub(super) union_field: &'a str,
    pub(super) discriminator: &'a str,
    pub(super) events: &'a [Event],
    pub(super) roles: &'a [String],
    /// The envelope fields only some roles may send (`x-roles`), with those roles.
    pub(super) envelope_roles: &'a [(String, Vec<String>)],
    /// Whether every member of the event union is one of `events`. A member refused already is none, and a name
    /// that is no event may be its: that is not reported again.
    pub(super) all_events: bool,
}

impl SeqCx<'_> {
    /// Whether `role` may send the event `tag` (its `x-roles`; an event whose `x-roles` were refused has none and
    /// counts as sendable, so that error is not reported again).
    fn may_send(&self, role: &str, tag: &str) -> bool {
        self.events.iter().any(|e| e.tag == tag && (e.roles.is_empty() || e.roles.iter().any(|r| r == role)))
    }

    fn event_fields(&self, tag: &str) -> Option<&[Field]> {
        let e = self.events.iter().find(|e| e.tag == tag)?;
        match self.types.slots[e.ty.0].def.as_ref().map(|d| &d.node.shape) {
            Some(Shape::Object(o)) => Some(&o.fields),
            _ => None,
        }
    }

    fn field(&self, tag: Option<&str>, f: &FieldRef) -> Option<&Field> {
        match f {
            FieldRef::Envelope(n) => self.envelope.iter().find(|x| &x.name == n),
            FieldRef::Event(n) => self.event_fields(tag?)?.iter().find(|x| &x.name == n),
        }
    }

    /// The pointer a field reference is written as.
    fn pointer(&self, f: &FieldRef) -> String {
        match f {
            FieldRef::Envelope(n) => format!("/{n}"),
            FieldRef::Event(n) => format!("/{}/{n}", self.union_field),
        }
    }

    /// Whether every value a node accepts is a string (keys are compared as strings): its kinds
    /// ([`kinds::node_kinds`]) are strings at most. A type that is not built (refused) or a cycle of references alone
    /// (refused as `schema.ref-cycle`) has no kinds here, so that its error is not echoed.
    fn strings_only(&self, n: &Node) -> bool {
        KindSet::STRING.contains(self.kinds(n, 0))
    }

    fn kinds(&self, n: &Node, depth: usize) -> KindSet {
        kinds::node_kinds(n, &|id| match self.types.slots[id.0].def.as_ref() {
            Some(d) if depth <= self.types.slots.len() => self.kinds(&d.node, depth + 1),
            _ => KindSet::NONE,
        })
    }

    fn resolve<'s>(&'s self, mut s: &'s Shape) -> Option<&'s Shape> {
        for _ in 0..=self.types.slots.len() {
            match s {
                Shape::Ref(id) => s = &self.types.slots[id.0].def.as_ref()?.node.shape,
                other => return Some(other),
            }
        }
        None
    }
}

impl Cx {
    /// Lowers `x-sequence` (absent: no sequence rules, an empty rollup).
    pub(super) fn sequence(&mut self, sx: &SeqCx<'_>, env_at: &Origin, env_v: &Value) -> Sequence {
        let Some(v) = env_v.get("x-sequence") else { return Sequence::default() };
        let at = env_at.join("x-sequence");
        let Some(o) = v.as_object() else {
            self.err(&at, K::InvalidValue, "`x-sequence` is an object: `{\"scopes\", \"rules\", \"rollup\"}`");
            return Sequence::default();
        };
        for k in o.keys().filter(|k| !["scopes", "rules", "rollup"].contains(&k.as_str())) {
            self.err(
                &at.join(k),
                K::InvalidValue,
                format!("`{k}` is not part of `x-sequence` (scopes, rules, rollup)"),
            );
        }
        let empty = Map::new();
        if o.get("scopes").is_some_and(|v| !v.is_object()) {
            // The rules name scopes: without them each would only repeat this.
            self.seq_object(&at, o, "scopes");
            return Sequence::default();
        }
        let scopes_v = self.seq_object(&at, o, "scopes").unwrap_or(&empty);
        if self
            .several_misfits(&at.join("scopes"), Entries::Map(scopes_v), Value::is_object, "scopes are objects")
            .is_some()
        {
            return Sequence::default();
        }
        let names: Vec<String> = scopes_v.keys().cloned().collect();
        let mut scopes = Vec::new();
        for (i, (name, def)) in scopes_v.iter().enumerate() {
            if let Some(s) = self.scope(sx, &at.join("scopes").join(name), name, def, &names, i) {
                scopes.push(s);
            }
        }
        if scopes.len() != names.len() {
            // A broken scope has its errors; the rules that name it would only repeat them.
            return Sequence::default();
        }
        let mut keys_fit = true;
        for s in &scopes {
            let Some(w) = s.within.map(|w| &scopes[w]) else { continue };
            if w.key != s.key {
                keys_fit = false;
                let (mine, theirs) = (sx.pointer(&s.key), sx.pointer(&w.key));
                self.err(
                    &at.join("scopes").join(&s.name).join("within"),
                    K::InvalidValue,
                    format!(
                        "`{}` is keyed by `{mine}` and `{}` by `{theirs}`: a scope lives within one of the same key \
                         (it opens while that key is open there)",
                        s.name, w.name
                    ),
                );
            }
        }
        if !keys_fit {
            // The rules over the scopes would echo it (a `close-blocked` whose `by` is within its scope).
            return Sequence::default();
        }
        for i in 0..scopes.len() {
            let refs: Vec<usize> = scopes[i]
                .record
                .iter()
                .filter_map(|a| match a.from {
                    AttrSource::OpenKey(s) => Some(s),
                    AttrSource::Field(_) => None,
                })
                .collect();
            for s in refs {
                if !scopes[s].single {
                    let rat = at.join("scopes").join(&names[i]).join("record");
                    self.err(
                        &rat,
                        K::InvalidValue,
                        format!("`{}` is not `single`: it has no one open key to record", names[s]),
                    );
                }
            }
        }
        // What closes with each scope: the scopes within it, and those within them (a scope lives within an earlier
        // one only, refused otherwise, so each walk up ends).
        for w in 0..scopes.len() {
            let mut at = w;
            while let Some(s) = scopes[at].within.filter(|&s| s < at) {
                scopes[s].inner.push(w);
                at = s;
            }
        }
        let mut seq = Sequence { scopes, rules: Vec::new(), rollup: Vec::new() };
        match o.get("rules") {
            None => {}
            Some(Value::Array(rules))
                if self
                    .several_misfits(&at.join("rules"), Entries::List(rules), Value::is_object, "rules are objects")
                    .is_none() =>
            {
                let mut ids = BTreeSet::new();
                for (i, r) in rules.iter().enumerate() {
                    let rat = at.join("rules").join(&i.to_string());
                    if let Some(rule) = self.rule(sx, &rat, r, &mut seq.scopes) {
                        if !ids.insert(rule.id) {
                            self.err(&rat.join("id"), K::InvalidValue, format!("rule id `{}` is used twice", rule.id));
                        }
                        seq.rules.push(rule);
                    }
                }
            }
            Some(Value::Array(_)) => {}
            Some(_) => self.err(&at.join("rules"), K::InvalidValue, "`rules` is an array of rules, in check order"),
        }
        let mut rollup_v = self.seq_object(&at, o, "rollup").unwrap_or(&empty);
        let must = "rollup parts are objects";
        if self.several_misfits(&at.join("rollup"), Entries::Map(rollup_v), Value::is_object, must).is_some() {
            rollup_v = &empty;
        }
        let taken = ["messages", "open"];
        for (name, def) in rollup_v {
            let pat = at.join("rollup").join(name);
            if taken.contains(&name.as_str()) {
                self.err(&pat, K::InvalidValue, format!("`{name}` is already a key of the rollup"));
                continue;
            }
            if !self.rollup_name(&pat, name) {
                continue;
            }
            if let Some(p) = self.rollup_part(sx, &pat, name, def) {
                seq.rollup.push(p);
            }
        }
        // The scopes' entries sit under `open`, apart from the parts.
        let mut open_keys = BTreeSet::new();
        for s in &seq.scopes {
            if let Some(r) = &s.rollup {
                let sat = at.join("scopes").join(&s.name).join("rollup");
                if !open_keys.insert(r.clone()) {
                    self.err(&sat, K::InvalidValue, format!("`{r}` is already a key of the rollup's `open`"));
                } else {
                    self.rollup_name(&sat, r);
                }
            }
        }
        seq
    }

    /// Whether a name the rollup prints as a key (a part, a scope's entry under `open`, a record, a mark) is one the
    /// TypeScript type can declare and every checker writes: an identifier (letters, digits, `_`, `$`, not starting
    /// with a digit) other than `__proto__`, which a JavaScript object assignment drops.
    fn rollup_name(&mut self, at: &Origin, name: &str) -> bool {
        if super::naming::is_identifier(name) && name != "__proto__" {
            return true;
        }
        let msg = format!(
            "`{}` is not a rollup name: the rollup writes it as a key and its TypeScript type as a property \
             (letters, digits, `_` or `$`, not starting with a digit; not `__proto__`)",
            name.escape_debug()
        );
        self.err(at, K::InvalidValue, msg);
        false
    }

    fn seq_object<'v>(&mut self, at: &Origin, o: &'v Map<String, Value>, key: &str) -> Option<&'v Map<String, Value>> {
        match o.get(key) {
            None => None,
            Some(Value::Object(m)) => Some(m),
            Some(_) => {
                self.err(&at.join(key), K::InvalidValue, format!("`{key}` is an object keyed by name"));
                None
            }
        }
    }

    fn seq_str(&mut self, at: &Origin, o: &Map<String, Value>, key: &str, required: bool) -> Option<String> {
        match o.get(key) {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            None if !required => None,
            None => {
                self.err(at, K::Missing, format!("`{key}` is required here"));
                None
            }
            Some(_) => {
                self.err(&at.join(key), K::InvalidValue, format!("`{key}` must be a non-empty string"));
                None
            }
        }
    }

    fn seq_event(&mut self, sx: &SeqCx<'_>, at: &Origin, o: &Map<String, Value>, key: &str) -> Option<String> {
        let tag = self.seq_str(at, o, key, false)?;
        if sx.events.iter().any(|e| e.tag == tag) {
            Some(tag)
        } else {
            if sx.all_events {
                self.err(&at.join(key), K::InvalidValue, format!("`{tag}` is not an event of this protocol"));
            }
            None
        }
    }

    /// A pointer to a value of a message: `/<envelope property>` or `/<union property>/<event property>`, which
    /// must exist on the envelope or on every one of `tags` (some event when `tags` is empty).
    fn seq_field(&mut self, sx: &SeqCx<'_>, at: &Origin, v: Option<&Value>, tags: &[&str]) -> Option<FieldRef> {
        let u = sx.union_field;
        let p = match v {
            Some(Value::String(p)) => p.as_str(),
            None => {
                let msg = format!("a pointer is required here: `/<envelope property>` or `/{u}/<event property>`");
                self.err(at, K::Missing, msg);
                return None;
            }
            Some(_) => {
                let msg = format!("a pointer is a string: `/<envelope property>` or `/{u}/<event property>`");
                self.err(at, K::InvalidValue, msg);
                return None;
            }
        };
        let toks: Vec<&str> = p.split('/').skip(1).collect();
        let f = match (p.starts_with('/'), toks.as_slice()) {
            (true, [f]) if !f.is_empty() => FieldRef::Envelope((*f).to_string()),
            (true, [u, f]) if *u == sx.union_field && !f.is_empty() => FieldRef::Event((*f).to_string()),
            _ => {
                self.err(
                    at,
                    K::InvalidValue,
                    format!("`{p}` is not `/<envelope property>` or `/{u}/<event property>`"),
                );
                return None;
            }
        };
        let missing: Vec<&str> = match &f {
            FieldRef::Envelope(_) if sx.field(None, &f).is_none() => vec!["the envelope"],
            FieldRef::Envelope(_) => Vec::new(),
            FieldRef::Event(_) if tags.is_empty() => {
                if sx.events.iter().any(|e| sx.field(Some(&e.tag), &f).is_some()) || !sx.all_events {
                    Vec::new()
                } else {
                    vec!["any event"]
                }
            }
            FieldRef::Event(_) => tags.iter().copied().filter(|t| sx.field(Some(t), &f).is_none()).collect(),
        };
        if missing.is_empty() {
            Some(f)
        } else {
            let list = missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ").replace("``", "`");
            self.err(at, K::InvalidValue, format!("`{p}`: no such field in {list}"));
            None
        }
    }

    /// A pointer to a key (a scope's key, the value a `unique` or `names-open` rule reads): a field as
    /// [`Cx::seq_field`] reads it, whose values are strings wherever it is read (the checkers compare keys as
    /// strings: a number there would be no key at all).
    fn seq_key(&mut self, sx: &SeqCx<'_>, at: &Origin, v: Option<&Value>, tags: &[&str]) -> Option<FieldRef> {
        let f = self.seq_field(sx, at, v, tags)?;
        let fields: Vec<(Option<&str>, &Field)> = match &f {
            FieldRef::Envelope(_) => sx.field(None, &f).map(|x| (None, x)).into_iter().collect(),
            FieldRef::Event(_) if tags.is_empty() => {
                sx.events.iter().filter_map(|e| sx.field(Some(&e.tag), &f).map(|x| (Some(e.tag.as_str()), x))).collect()
            }
            FieldRef::Event(_) => tags.iter().filter_map(|t| sx.field(Some(t), &f).map(|x| (Some(*t), x))).collect(),
        };
        let others: Vec<String> = fields
            .iter()
            .filter(|(_, x)| !sx.strings_only(&x.node) && !self.kind_refused(sx.types, &x.node))
            .map(|(t, _)| t.map_or_else(|| "the envelope".to_string(), |t| format!("`{t}`")))
            .collect();
        if others.is_empty() {
            return Some(f);
        }
        let p = sx.pointer(&f);
        let msg = format!(
            "`{p}` is read as a key, and keys are strings: in {} it may hold another kind of value",
            crate::diag::and_list(&others)
        );
        self.err(at, K::InvalidValue, msg);
        None
    }

    fn scope(
        &mut self,
        sx: &SeqCx<'_>,
        at: &Origin,
        name: &str,
        def: &Value,
        names: &[String],
        index: usize,
    ) -> Option<Scope> {
        let Some(o) = def.as_object() else {
            self.err(at, K::InvalidValue, "a scope is an object: `{\"key\", \"opened-by\", \"closed-by\", ...}`");
            return None;
        };
        let mut ok = self.unknown_keys(at, o, SCOPE_KEYS, "a scope");
        let description = self.seq_str(at, o, "description", true).unwrap_or_default();
        let opened_by = self.seq_event(sx, at, o, "opened-by");
        let closed_by = self.seq_event(sx, at, o, "closed-by");
        if o.get("opened-by").is_none() {
            let what = if o.get("closed-by").is_some() { "a scope closed by an event" } else { "a scope" };
            self.err(at, K::Missing, format!("{what} needs `opened-by` (the event that opens it)"));
            ok = false;
        }
        if opened_by.is_some() && opened_by == closed_by {
            let msg = "a scope opened and closed by the same event: each would close the one it opens (or open \
                       one again), so no rule over it could hold";
            self.err(&at.join("closed-by"), K::InvalidValue, msg);
            ok = false;
        }
        let tags: Vec<&str> = opened_by.iter().chain(closed_by.iter()).map(String::as_str).collect();
        let key = self.seq_key(sx, &at.join("key"), o.get("key"), &tags);
        // A key on the envelope that no role sending the opening event may send: no opening carries it, and the
        // scope never opens (helper 117: accepted, and every close was then refused).
        if let (Some(FieldRef::Envelope(k)), Some(ob)) = (&key, &opened_by) {
            if let Some((_, allowed)) = sx.envelope_roles.iter().find(|(n, _)| n == k) {
                let senders: Vec<&String> = sx.roles.iter().filter(|r| sx.may_send(r, ob)).collect();
                if !senders.is_empty() && !senders.iter().any(|r| allowed.contains(r)) {
                    let quoted =
                        |v: &[&String]| crate::diag::and_list(&v.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>());
                    let allowed: Vec<&String> = allowed.iter().collect();
                    let msg = format!(
                        "`/{k}` may be sent only by {} (its `x-roles`), and `{ob}` only by {}: no `{ob}` carries the key, so the scope would never open",
                        quoted(&allowed),
                        quoted(&senders)
                    );
                    self.err(&at.join("key"), K::InvalidValue, msg);
                    ok = false;
                }
            }
        }
        let single = match o.get("single") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                // Whether the scope is single decides what its rules may read: the scope is refused whole, so they
                // do not report echoes of this.
                self.err(&at.join("single"), K::InvalidValue, "`single` is a boolean");
                ok = false;
                false
            }
        };
        let scope_index = |cx: &mut Cx, at: &Origin, v: Option<&Value>| -> Option<usize> {
            let n = v.and_then(Value::as_str).unwrap_or_default();
            let i = names.iter().position(|x| x == n);
            if i.is_none() {
                cx.err(at, K::InvalidValue, format!("`{n}` is not a scope (scopes: {})", names.join(", ")));
            }
            i
        };
        let within = match o.get("within") {
            None => None,
            Some(v) => {
                let w = scope_index(self, &at.join("within"), Some(v));
                if let Some(w) = w.filter(|w| *w >= index) {
                    let msg = if w == index {
                        "a scope cannot be `within` itself: `within` names a scope declared before this one".to_string()
                    } else {
                        format!(
                            "`within` names `{}`, declared after this one: it must name a scope declared before \
                             (so no two scopes are within each other)",
                            names[w]
                        )
                    };
                    self.err(&at.join("within"), K::InvalidValue, msg);
                    ok = false;
                }
                if w.is_none() {
                    ok = false;
                }
                w
            }
        };
        let mut marks = Vec::new();
        if let Some(m) = o.get("marks") {
            let mat = at.join("marks");
            match m.as_object() {
                Some(m) if single => {
                    for (mname, d) in m {
                        let dat = mat.join(mname);
                        let Some(d) = d.as_object() else {
                            self.err(&dat, K::InvalidValue, "a mark is `{\"by\": <event>, \"role\"?: <role>}`");
                            ok = false;
                            continue;
                        };
                        self.unknown_keys(&dat, d, &["by", "role"], "a mark");
                        let by = self.seq_event(sx, &dat, d, "by");
                        let role = self.seq_role(sx, &dat, d);
                        if let (Some(b), Some(r)) = (&by, &role) {
                            if !sx.may_send(r, b) {
                                let msg =
                                    format!("`{r}` may not send `{b}` (its `x-roles`): the mark would never be set");
                                self.err(&dat.join("role"), K::InvalidValue, msg);
                                ok = false;
                            }
                        }
                        // Rules read a mark on the open one before the message's own effect: one set by the
                        // opening event is on every open one, one set by the closing event on none (helper 79).
                        let own = [
                            ("opened-by", opened_by.as_deref(), "every open one would have it from the start"),
                            (
                                "closed-by",
                                closed_by.as_deref(),
                                "it would be set as the scope closes, where no rule sees it",
                            ),
                        ];
                        if let Some((which, Some(b), why)) =
                            own.into_iter().find(|(_, e, _)| e.is_some() && *e == by.as_deref())
                        {
                            let msg = format!("`{b}` is the scope's `{which}`: {why}");
                            self.err(&dat.join("by"), K::InvalidValue, msg);
                            ok = false;
                        }
                        match by {
                            Some(by) => marks.push(Mark { name: mname.clone(), by, role }),
                            None => {
                                if d.get("by").is_none() {
                                    self.err(&dat, K::Missing, "`by` (the event that sets the mark) is required");
                                }
                                ok = false;
                            }
                        }
                    }
                }
                // Whether it is single is not known when `single` is refused (reported already).
                Some(_) if self.refused_within(&at.join("single")) => ok = false,
                Some(_) => {
                    self.err(&mat, K::InvalidValue, "only a `single` scope has marks (the open one gets them)");
                    ok = false;
                }
                None => {
                    self.err(&mat, K::InvalidValue, "`marks` is an object keyed by mark name");
                    ok = false;
                }
            }
        }
        let mut record = Vec::new();
        if let Some(r) = o.get("record") {
            let rat = at.join("record");
            match r.as_object() {
                Some(r) => {
                    let opener: Vec<&str> = opened_by.iter().map(String::as_str).collect();
                    for (aname, src) in r {
                        let aat = rat.join(aname);
                        let from = match src {
                            Value::Object(s) if s.len() == 1 && s.contains_key("scope") => {
                                scope_index(self, &aat.join("scope"), s.get("scope")).map(AttrSource::OpenKey)
                            }
                            _ => self.seq_field(sx, &aat, Some(src), &opener).map(AttrSource::Field),
                        };
                        match from {
                            Some(from) => record.push(Attr { name: aname.clone(), from }),
                            None => ok = false,
                        }
                    }
                }
                None => {
                    self.err(&rat, K::InvalidValue, "`record` is an object: name -> pointer or `{\"scope\": <name>}`");
                    ok = false;
                }
            }
        }
        let rollup = self.seq_str(at, o, "rollup", false);
        // One open entry holds the key (under its field's name), the marks and the records: one name each.
        let mut entry: Vec<&str> = key.iter().map(FieldRef::name).collect();
        for (n, what, at_) in marks
            .iter()
            .map(|m| (m.name.as_str(), "mark", at.join("marks").join(&m.name)))
            .chain(record.iter().map(|a| (a.name.as_str(), "record", at.join("record").join(&a.name))))
            .collect::<Vec<_>>()
        {
            if entry.contains(&n) {
                let msg = format!(
                    "the {what} `{n}` takes a name the scope's open entry already has (its key is `{}`; marks and \
                     records are listed beside it)",
                    key.as_ref().map_or("", FieldRef::name)
                );
                self.err(&at_, K::InvalidValue, msg);
                ok = false;
            } else if !self.rollup_name(&at_, n) {
                ok = false;
            }
            entry.push(n);
        }
        (ok && key.is_some() && opened_by.is_some() && (o.get("closed-by").is_none() || closed_by.is_some())).then(
            || Scope {
                name: name.to_string(),
                description,
                key: key.unwrap_or(FieldRef::Envelope(String::new())),
                opened_by,
                closed_by,
                single,
                within,
                marks,
                record,
                rollup,
                remember_closed: false,
                inner: Vec::new(),
            },
        )
    }

    /// Whether some message can break the rule (a rule none can is a mistake, reported as one): the kind's own
    /// event (the scope's `opened-by` for the `open-*` kinds, its `closed-by` for the `close-*` ones) must be among
    /// `on`, and some event the rule reads must be one `role` may send.
    fn applies(
        &mut self,
        sx: &SeqCx<'_>,
        at: &Origin,
        kind: &RuleKind,
        scopes: &[Scope],
        filters: Filters<'_>,
    ) -> bool {
        let Filters { on, role, when } = filters;
        let sc = kind.scope().map(|s| &scopes[s]);
        // An `open-without-key` rule over a key its opening event requires: an opening without it breaks the
        // message rules first (helper 117: accepted).
        if let (RuleKind::OpenWithoutKey { .. }, Some(sc)) = (kind, sc) {
            if let Some(ob) =
                sc.opened_by.as_deref().filter(|ob| sx.field(Some(ob), &sc.key).is_some_and(|f| f.required))
            {
                let msg = format!(
                    "`{}` is required in `{ob}` (the scope's `opened-by`): an opening without it breaks the message rules first, so this rule would never apply",
                    sx.pointer(&sc.key)
                );
                self.err(&at.join("scope"), K::InvalidValue, msg);
                return false;
            }
        }
        // A `when` on an envelope field the rule's role may not send (its `x-roles`) never holds (helper 117).
        if let Some(r) = role {
            for (f, _) in when {
                let FieldRef::Envelope(n) = f else { continue };
                if sx.envelope_roles.iter().any(|(k, allowed)| k == n && !allowed.iter().any(|a| a == r)) {
                    let msg = format!("`{r}` may not send `/{n}` (its `x-roles`): the rule would never apply");
                    self.err(&at.join("when").join(&format!("/{n}")), K::InvalidValue, msg);
                    return false;
                }
            }
        }
        let (own, which) = kind.own_event(scopes).unzip();
        // A rule that never reads the opening event (`key-missing`, `key-mismatch`, `needs-open`, `names-open` at
        // the scope's key) is about messages other than that one.
        let opener = sc.and_then(|s| s.opened_by.as_deref());
        if kind.skips_opener(scopes) && !on.is_empty() && on.iter().all(|o| Some(o.as_str()) == opener) {
            let msg = format!(
                "{} `{}` rule reads messages other than the scope's `opened-by` (`{}`), which `on` alone lists: \
                 it would never apply",
                crate::diag::article(kind.name()),
                kind.name(),
                opener.unwrap_or_default()
            );
            self.err(&at.join("on"), K::InvalidValue, msg);
            return false;
        }
        if let Some(e) = own.filter(|e| !on.is_empty() && !on.iter().any(|o| o == e)) {
            let msg = format!(
                "{} `{}` rule is broken only by `{e}` (the scope's `{}`), which `on` leaves out: it would never apply",
                crate::diag::article(kind.name()),
                kind.name(),
                which.unwrap_or_default()
            );
            self.err(&at.join("on"), K::InvalidValue, msg);
            return false;
        }
        let Some(role) = role else { return true };
        let reads = match breakers(kind, scopes, on) {
            r if r.is_empty() => sx.events.iter().map(|e| e.tag.as_str()).collect(),
            r => r,
        };
        if reads.iter().any(|t| sx.may_send(role, t)) || !sx.all_events {
            return true;
        }
        let list: Vec<String> = reads.iter().map(|t| format!("`{t}`")).collect();
        let msg = format!(
            "`{role}` may send none of the events this rule reads ({}: their `x-roles`): it would never apply",
            crate::diag::and_list(&list)
        );
        self.err(&at.join("role"), K::InvalidValue, msg);
        false
    }

    fn seq_role(&mut self, sx: &SeqCx<'_>, at: &Origin, o: &Map<String, Value>) -> Option<String> {
        let r = self.seq_str(at, o, "role", false)?;
        if sx.roles.contains(&r) {
            Some(r)
        } else {
            self.err(
                &at.join("role"),
                K::InvalidValue,
                format!("`{r}` is not a role (roles: {})", sx.roles.join(", ")),
            );
            None
        }
    }

    fn rule(&mut self, sx: &SeqCx<'_>, at: &Origin, r: &Value, scopes: &mut [Scope]) -> Option<SeqRule> {
        let Some(o) = r.as_object() else {
            self.err(at, K::InvalidValue, "a rule is an object: `{\"id\", \"kind\", ..., \"pointer\", \"message\"}`");
            return None;
        };
        let mut ok = self.unknown_keys(at, o, RULE_KEYS, "a rule");
        // The keys every rule has, missing ones in one error.
        let missing: Vec<String> =
            RULE_REQUIRED.iter().filter(|k| !o.contains_key(**k)).map(|k| format!("`{k}`")).collect();
        match missing.as_slice() {
            [] => {}
            [one] => self.err(at, K::Missing, format!("{one} is required here")),
            several => self.err(at, K::Missing, format!("{} are required here", crate::diag::and_list(several))),
        }
        let id = self.seq_str(at, o, "id", false);
        if let Some(id) = id.as_deref().filter(|id| !is_rule_id(id)) {
            let shown: String = id
                .chars()
                .map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() })
                .collect();
            let msg = format!(
                "`{shown}` is not a rule id: lowercase letters and digits in words joined by `.` or `-` \
                 (`turn.already-open`); every record, metric and log line prints it"
            );
            self.err(&at.join("id"), K::InvalidValue, msg);
            ok = false;
        }
        if let Some(id) = &id {
            if crate::rules::Rule::from_id(id).is_some() {
                self.err(&at.join("id"), K::InvalidValue, format!("`{id}` is a message-level rule id"));
                ok = false;
            }
        }
        let kind_name = self.seq_str(at, o, "kind", false).unwrap_or_default();
        let pointer = self.seq_str(at, o, "pointer", false);
        let message = self.seq_str(at, o, "message", false);
        let summary = self.seq_str(at, o, "summary", false);
        let seed = self.seq_str(at, o, "seed", false);
        let role = self.seq_role(sx, at, o);
        if o.get("role").is_some() && role.is_none() {
            ok = false;
        }
        let mut on = Vec::new();
        match o.get("on") {
            None => {}
            Some(Value::Array(a)) if !a.is_empty() => {
                for (i, t) in a.iter().enumerate() {
                    match t.as_str().filter(|t| sx.events.iter().any(|e| &e.tag == t)) {
                        Some(t) if on.iter().any(|o| o == t) => {
                            let at = at.join("on").join(&i.to_string());
                            self.err(&at, K::InvalidValue, format!("`{t}` is listed twice"));
                            ok = false;
                        }
                        Some(t) => on.push(t.to_string()),
                        None => {
                            if sx.all_events {
                                let at = at.join("on").join(&i.to_string());
                                self.err(&at, K::InvalidValue, "not an event of this protocol");
                            }
                            ok = false;
                        }
                    }
                }
            }
            Some(_) => {
                self.err(&at.join("on"), K::InvalidValue, "`on` is a non-empty array of events");
                ok = false;
            }
        }
        let on_tags: Vec<&str> = on.iter().map(String::as_str).collect();
        let mut when = Vec::new();
        match o.get("when") {
            None => {}
            Some(Value::Object(w)) if w.is_empty() => {
                self.err(&at.join("when"), K::InvalidValue, "`when` is an object of at least one pointer -> value");
                ok = false;
            }
            Some(Value::Object(w)) => {
                for (p, v) in w {
                    match self.seq_field(sx, &at.join("when").join(p), Some(&Value::String(p.clone())), &on_tags) {
                        Some(f) => when.push((f, v.clone())),
                        None => ok = false,
                    }
                }
            }
            Some(_) => {
                self.err(&at.join("when"), K::InvalidValue, "`when` is an object: pointer -> value");
                ok = false;
            }
        }
        let scope_of = |cx: &mut Cx, key: &str| -> Option<usize> {
            let Some(n) = o.get(key).and_then(Value::as_str) else {
                cx.err(
                    at,
                    K::Missing,
                    format!(
                        "`{key}` (a scope) is required for {} `{kind_name}` rule",
                        crate::diag::article(&kind_name)
                    ),
                );
                return None;
            };
            scope_named(cx, scopes, &at.join(key), n)
        };
        let kind = match kind_name.as_str() {
            "unique" => self.seq_key(sx, &at.join("key"), o.get("key"), &on_tags).map(|key| RuleKind::Unique { key }),
            "open-without-key" => scope_of(self, "scope").map(|scope| RuleKind::OpenWithoutKey { scope }),
            "open-while-open" => scope_of(self, "scope").map(|scope| RuleKind::OpenWhileOpen { scope }),
            "open-reused" => scope_of(self, "scope").map(|scope| RuleKind::OpenReused { scope }),
            "key-missing" => scope_of(self, "scope").map(|scope| RuleKind::KeyMissing { scope }),
            "key-mismatch" => scope_of(self, "scope").map(|scope| RuleKind::KeyMismatch { scope }),
            "close-not-open" => scope_of(self, "scope").map(|scope| RuleKind::CloseNotOpen { scope }),
            "needs-open" => scope_of(self, "scope").map(|scope| RuleKind::NeedsOpen { scope }),
            "names-open" => {
                let scope = scope_of(self, "scope");
                let field = self.seq_key(sx, &at.join("at"), o.get("at"), &on_tags);
                scope.zip(field).map(|(scope, at)| RuleKind::NamesOpen { scope, at })
            }
            "close-blocked" => {
                let scope = scope_of(self, "scope");
                let by = scope_of(self, "by");
                let unless = match o.get("unless") {
                    None => Some(None),
                    Some(u) => {
                        let uat = at.join("unless");
                        if let Some(uo) = u.as_object() {
                            self.unknown_keys(&uat, uo, &["scope", "mark"], "`unless`");
                        }
                        // A wrong name is told where it stands, with the names there are, as a rule's own `scope`
                        // and `mark` are (helper 109: only the shape was said, at `unless`).
                        let m = match (u.get("scope").and_then(Value::as_str), u.get("mark").and_then(Value::as_str)) {
                            (Some(sn), Some(mk)) => scope_named(self, scopes, &uat.join("scope"), sn)
                                .and_then(|s| mark_named(self, &scopes[s], &uat.join("mark"), mk).map(|m| (s, m))),
                            _ => {
                                let shape = "`unless` is `{\"scope\": <single scope>, \"mark\": <one of its marks>}`";
                                self.err(&uat, K::InvalidValue, shape);
                                None
                            }
                        };
                        m.map(Some)
                    }
                };
                match (scope, by, unless) {
                    (Some(scope), Some(by), Some(unless)) => {
                        let linked = scopes[by].within == Some(scope)
                            || scopes[by].record.iter().any(|a| a.from == AttrSource::OpenKey(scope));
                        if !linked {
                            self.err(
                                &at.join("by"),
                                K::InvalidValue,
                                format!(
                                    "`{}` is not opened in `{}`: give it `within: \"{}\"` or a record `{{\"scope\": \"{}\"}}`",
                                    scopes[by].name, scopes[scope].name, scopes[scope].name, scopes[scope].name
                                ),
                            );
                            None
                        } else if scopes[by].closed_by.is_none() && scopes[by].within.is_none_or(|w| w == scope) {
                            // One open would block every close of its scope for good (helper 117: accepted).
                            let (b, sn) = (&scopes[by].name, &scopes[scope].name);
                            let how = if scopes[by].within == Some(scope) {
                                format!("it closes only with the `{sn}` it is within")
                            } else {
                                "no event closes one".to_string()
                            };
                            let msg = format!(
                                "`{b}` has no `closed-by`, so {how}: once one is open in {} `{sn}`, that `{sn}` could never close",
                                crate::diag::article(sn)
                            );
                            self.err(&at.join("by"), K::InvalidValue, msg);
                            None
                        } else {
                            Some(RuleKind::CloseBlocked { scope, by, unless })
                        }
                    }
                    _ => None,
                }
            }
            "close-requires" => {
                let scope = scope_of(self, "scope");
                let mark = scope.and_then(|s| {
                    let m = o.get("mark").and_then(Value::as_str).unwrap_or_default();
                    mark_named(self, &scopes[s], &at.join("mark"), m)
                });
                let closer: Vec<&str> = scope.and_then(|s| scopes[s].closed_by.as_deref()).into_iter().collect();
                let field = self.seq_field(sx, &at.join("field"), o.get("field"), &closer);
                let equals = o.get("equals").cloned();
                if equals.is_none() {
                    self.err(at, K::Missing, "`equals` (the value the closing event must hold) is required");
                }
                match (scope, mark, field, equals) {
                    (Some(scope), Some(mark), Some(field), Some(equals)) => {
                        Some(RuleKind::CloseRequires { scope, mark, field, equals })
                    }
                    _ => None,
                }
            }
            other => {
                if !other.is_empty() {
                    self.err(
                        &at.join("kind"),
                        K::InvalidValue,
                        format!("`{other}` is not a kind of sequence rule ({})", RuleKind::NAMES.join(", ")),
                    );
                }
                None
            }
        };
        if let Some(reads) = kind_members(&kind_name) {
            for k in o.keys().filter(|k| !RULE_COMMON.contains(&k.as_str()) && RULE_KEYS.contains(&k.as_str())) {
                if !reads.contains(&k.as_str()) {
                    let list = reads.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>();
                    self.err(
                        &at.join(k),
                        K::InvalidValue,
                        format!(
                            "`{k}` means nothing in {} `{kind_name}` rule (it reads {})",
                            crate::diag::article(&kind_name),
                            crate::diag::and_list(&list)
                        ),
                    );
                    ok = false;
                }
            }
        }
        let kind = kind?;
        // What the kind needs of its scope (the values its message may name depend on it: when the scope does not
        // fit, they are not checked, as they would only echo that mistake).
        let mut scope_fits = true;
        if let Some(s) = kind.scope() {
            let sc = &scopes[s];
            let need = match &kind {
                RuleKind::OpenWithoutKey { .. } | RuleKind::OpenWhileOpen { .. } | RuleKind::OpenReused { .. } => None,
                RuleKind::CloseNotOpen { .. } | RuleKind::CloseBlocked { .. } | RuleKind::CloseRequires { .. }
                    if sc.closed_by.is_none() =>
                {
                    Some("a scope with `closed-by`")
                }
                RuleKind::KeyMissing { .. } | RuleKind::KeyMismatch { .. } | RuleKind::NeedsOpen { .. }
                    if !sc.single =>
                {
                    Some("a `single` scope")
                }
                _ => None,
            };
            if let Some(need) = need {
                self.err(
                    &at.join("scope"),
                    K::InvalidValue,
                    format!("{} `{kind_name}` rule needs {need}", crate::diag::article(&kind_name)),
                );
                ok = false;
                scope_fits = false;
            }
        }
        // A rule that cannot apply is one mistake: its pointer is not checked against its events too.
        let filters = Filters { on: &on, role: role.as_deref(), when: &when };
        let applies = scope_fits && self.applies(sx, at, &kind, scopes, filters);
        if scope_fits && !applies {
            ok = false;
        }
        if let RuleKind::OpenReused { scope } = kind {
            scopes[scope].remember_closed = true;
        }
        let message = message?;
        let params = params(&kind, scopes);
        // Only a value the rule fills: `{like this` is text (it was told to write `{like}`, which is then refused
        // as a placeholder the kind does not fill; helper 81).
        let unclosed =
            crate::stream::rules::unclosed_placeholder(&message).filter(|p| params.iter().any(|x| x == &p[1..]));
        if let Some(p) = unclosed {
            let msg =
                format!("`{p}` is not closed: write `{p}}}` for the value (the text is printed as it is otherwise)");
            self.err(&at.join("message"), K::InvalidValue, msg);
            ok = false;
        }
        let an = crate::diag::article(&kind_name);
        for p in crate::stream::rules::placeholders(&message) {
            if scope_fits && !params.iter().any(|x| x == p) {
                self.err(
                    &at.join("message"),
                    K::InvalidValue,
                    match params.is_empty() {
                        true => format!("`{{{p}}}` is not filled by {an} `{kind_name}` rule (it fills none)"),
                        false => {
                            format!(
                                "`{{{p}}}` is not filled by {an} `{kind_name}` rule (it fills: {})",
                                params.join(", ")
                            )
                        }
                    },
                );
                ok = false;
            }
        }
        let pointer = pointer?;
        // Where every checker reports the violation: a value the message may hold (the event itself, or a field of
        // the envelope or of the events the rule reads).
        if applies && pointer != format!("/{}", sx.union_field) {
            let reads = breakers(&kind, scopes, &on);
            let p = Value::String(pointer.clone());
            ok &= self.seq_field(sx, &at.join("pointer"), Some(&p), &reads).is_some();
            // A `when` value was checked against `on` (any event without one): without `on`, against the kind's own
            // event too.
            if on_tags.is_empty() && !reads.is_empty() {
                for (f, _) in &when {
                    if let FieldRef::Event(n) = f {
                        let p = Value::String(format!("/{}/{n}", sx.union_field));
                        ok &= self.seq_field(sx, &at.join("when").join(&sx.pointer(f)), Some(&p), &reads).is_some();
                    }
                }
            }
        }
        (ok && id.is_some() && summary.is_some() && seed.is_some()).then(|| SeqRule {
            id: crate::stream::rules::intern(&id.unwrap_or_default()),
            kind,
            role,
            on,
            when,
            pointer,
            message,
            summary: summary.unwrap_or_default(),
            seed: seed.unwrap_or_default(),
            origin: at.clone(),
        })
    }

    fn rollup_part(&mut self, sx: &SeqCx<'_>, at: &Origin, name: &str, def: &Value) -> Option<RollupPart> {
        let Some(o) = def.as_object() else {
            self.err(at, K::InvalidValue, "a rollup part is `{\"kind\", \"event\", \"field\"?}`");
            return None;
        };
        self.unknown_keys(at, o, &["kind", "event", "field", "description"], "a rollup part");
        let kind = self.seq_str(at, o, "kind", true)?;
        if o.get("event").is_none() {
            self.err(at, K::Missing, "`event` (the event this part folds) is required");
        }
        let event = self.seq_event(sx, at, o, "event")?;
        let fields = |f: Option<&[Field]>| -> Vec<String> {
            f.unwrap_or_default().iter().filter(|f| f.name != sx.discriminator).map(|f| f.name.clone()).collect()
        };
        if matches!(kind.as_str(), "last" | "latest") && o.contains_key("field") {
            let msg = format!("`field` means nothing in a `{kind}` part (it folds every field of `{event}`)");
            self.err(&at.join("field"), K::InvalidValue, msg);
            return None;
        }
        let kind = match kind.as_str() {
            "last" => RollupKind::Last { fields: fields(sx.event_fields(&event)) },
            "latest" => RollupKind::Latest { fields: fields(sx.event_fields(&event)) },
            "count" | "sum" => {
                let field = self.seq_field(sx, &at.join("field"), o.get("field"), &[event.as_str()])?;
                let shape = sx.field(Some(&event), &field).and_then(|f| sx.resolve(&f.node.shape));
                match (kind.as_str(), shape) {
                    ("count", Some(Shape::Enum(vs))) if vs.iter().all(Value::is_string) => RollupKind::Count {
                        field,
                        values: vs.iter().filter_map(|v| v.as_str().map(String::from)).collect(),
                    },
                    ("sum", Some(Shape::Object(ob))) => {
                        let fields: Vec<String> = ob
                            .fields
                            .iter()
                            .filter(|f| matches!(sx.resolve(&f.node.shape), Some(Shape::Number(_))))
                            .map(|f| f.name.clone())
                            .collect();
                        if fields.is_empty() {
                            // It would always be `{}` (helper 79).
                            let msg = "a `sum` part reads an object of numbers, and this object declares no \
                                       property that is a number: the part would always be `{}`";
                            self.err(&at.join("field"), K::InvalidValue, msg);
                            return None;
                        }
                        RollupKind::Sum { field, fields }
                    }
                    _ => {
                        // Not when the field's type is refused already.
                        if !sx.field(Some(&event), &field).is_some_and(|f| self.kind_refused(sx.types, &f.node)) {
                            let need = if kind == "count" { "an enum of strings" } else { "an object of numbers" };
                            self.err(&at.join("field"), K::InvalidValue, format!("a `{kind}` part reads {need}"));
                        }
                        return None;
                    }
                }
            }
            other => {
                self.err(
                    &at.join("kind"),
                    K::InvalidValue,
                    format!("`{other}` is not a kind of rollup part ({})", ROLLUP_KINDS.join(", ")),
                );
                return None;
            }
        };
        let description = self.seq_str(at, o, "description", false).unwrap_or_default();
        Some(RollupPart { name: name.to_string(), event, description, kind })
    }
}

/// The events that can break a rule: its kind's own event ([`RuleKind::own_event`], which `on` must then list),
/// else its `on`; empty for any event.
pub(crate) fn breakers<'a>(kind: &RuleKind, scopes: &'a [Scope], on: &'a [String]) -> Vec<&'a str> {
    match kind.own_event(scopes) {
        Some((e, _)) => vec![e],
        None => on.iter().map(String::as_str).collect(),
    }
}

/// The scope named `n` (read at `at`), else a located error listing the scopes.
fn scope_named(cx: &mut Cx, scopes: &[Scope], at: &Origin, n: &str) -> Option<usize> {
    let i = scopes.iter().position(|s| s.name == n);
    if i.is_none() {
        let names: Vec<&str> = scopes.iter().map(|s| s.name.as_str()).collect();
        cx.err(at, K::InvalidValue, format!("`{n}` is not a scope (scopes: {})", names.join(", ")));
    }
    i
}

/// The mark `m` of `scope` (read at `at`), else a located error listing its marks.
fn mark_named(cx: &mut Cx, scope: &Scope, at: &Origin, m: &str) -> Option<usize> {
    let i = scope.marks.iter().position(|x| x.name == m);
    if i.is_none() {
        let marks: Vec<&str> = scope.marks.iter().map(|x| x.name.as_str()).collect();
        let list = if marks.is_empty() { "none".to_string() } else { marks.join(", ") };
        cx.err(at, K::InvalidValue, format!("`{m}` is not a mark of `{}` (its marks: {list})", scope.name));
    }
    i
}

/// The placeholders a rule of this kind fills: its scope's key name (the value the rule is about) and `open`
/// (the open key of a single scope); `close-blocked` adds the blocking scope's key name, `close-requires` the
/// field's name, `unique` has only its key's name. Not one the kind's violation always leaves empty: the key of
/// `open-without-key` and `key-missing` (the message has none), `open` of `needs-open` and of a single scope's
/// `close-not-open` (none is open); those were printed as nothing (helper 109).
pub(crate) fn params(kind: &RuleKind, scopes: &[Scope]) -> Vec<String> {
    let mut out = Vec::new();
    match kind {
        RuleKind::Unique { key } => out.push(key.name().to_string()),
        _ => {
            if let Some(s) = kind.scope() {
                if !matches!(kind, RuleKind::OpenWithoutKey { .. } | RuleKind::KeyMissing { .. }) {
                    out.push(scopes[s].key.name().to_string());
                }
                if scopes[s].single && !matches!(kind, RuleKind::NeedsOpen { .. } | RuleKind::CloseNotOpen { .. }) {
                    out.push("open".to_string());
                }
            }
            let more = match kind {
                RuleKind::CloseBlocked { by, .. } => Some(scopes[*by].key.name()),
                RuleKind::CloseRequires { field, .. } => Some(field.name()),
                _ => None,
            };
            // Once each: a name two sources share is one placeholder, filled by the first (it was listed twice in
            // the refusal of one the rule does not fill, helper 96).
            if let Some(name) = more.filter(|n| !out.iter().any(|o| o == n)) {
                out.push(name.to_string());
            }
        }
    }
    out
}
