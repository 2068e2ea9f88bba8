//! The sequence-rule interpreter: the one piece of Rust that checks a protocol's `x-sequence` declarations over
//! a stream of messages and folds the session rollup.
//!
//! It depends on `serde_json` and `std` only, and knows no event, field or role of any protocol: it reads the
//! declarations as JSON (the lowered `ir::Sequence` with the envelope's role, union and discriminator names), so the
//! same file serves the `wiregen` library (`wiregen::stream`) and is copied into every generated Rust crate
//! (`<crate>::stream`). Messages reach it already checked against the message-level rules.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

/// Where a value of a message is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FieldRef {
    Envelope(String),
    Event(String),
}

impl FieldRef {
    fn name(&self) -> &str {
        match self {
            FieldRef::Envelope(n) | FieldRef::Event(n) => n,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum AttrSource {
    Field(FieldRef),
    OpenKey(usize),
}

#[derive(Debug, Clone)]
struct Mark {
    name: String,
    by: String,
    role: Option<String>,
}

#[derive(Debug, Clone)]
struct Scope {
    key: FieldRef,
    opened_by: Option<String>,
    closed_by: Option<String>,
    single: bool,
    within: Option<usize>,
    marks: Vec<Mark>,
    record: Vec<(String, AttrSource)>,
    rollup: Option<String>,
    remember_closed: bool,
}

#[derive(Debug, Clone)]
enum Kind {
    Unique { key: FieldRef },
    OpenWithoutKey,
    OpenWhileOpen,
    OpenReused,
    KeyMissing,
    KeyMismatch,
    CloseNotOpen,
    NamesOpen { at: FieldRef },
    NeedsOpen,
    CloseBlocked { by: usize, unless: Option<(usize, usize)> },
    CloseRequires { mark: usize, field: FieldRef, equals: Value },
}

#[derive(Debug, Clone)]
struct Rule {
    id: String,
    kind: Kind,
    /// The scope (every kind but `unique`).
    scope: usize,
    role: Option<String>,
    on: Vec<String>,
    when: Vec<(FieldRef, Value)>,
    pointer: String,
    message: String,
}

#[derive(Debug, Clone)]
enum PartKind {
    Last(Vec<String>),
    Latest(Vec<String>),
    Count(FieldRef, Vec<String>),
    Sum(FieldRef, Vec<String>),
}

#[derive(Debug, Clone)]
struct Part {
    name: String,
    event: String,
    kind: PartKind,
}

/// A protocol's sequence declarations, ready to interpret.
#[derive(Debug, Clone, Default)]
pub struct Machine {
    role: String,
    union: String,
    tag: String,
    scopes: Vec<Scope>,
    rules: Vec<Rule>,
    parts: Vec<Part>,
}

fn s(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(String::from)
}

fn opt_s(v: &Value, k: &str) -> Option<Option<String>> {
    match v.get(k) {
        None | Some(Value::Null) => Some(None),
        Some(Value::String(x)) => Some(Some(x.clone())),
        Some(_) => None,
    }
}

fn idx(v: &Value, k: &str) -> Option<usize> {
    v.get(k).and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok())
}

fn strings(v: &Value, k: &str) -> Option<Vec<String>> {
    v.get(k)?.as_array()?.iter().map(|x| x.as_str().map(String::from)).collect()
}

fn field_ref(v: &Value) -> Option<FieldRef> {
    let name = s(v, "property")?;
    match v.get("in")?.as_str()? {
        "envelope" => Some(FieldRef::Envelope(name)),
        "event" => Some(FieldRef::Event(name)),
        _ => None,
    }
}

impl Machine {
    /// Reads the declarations: `{"roleProperty", "unionProperty", "discriminator", "sequence": <the lowered
    /// ir::Sequence as JSON>}`. `None`
    /// when they are not in that form.
    pub fn from_json(v: &Value) -> Option<Machine> {
        let seq = v.get("sequence")?;
        let mut scopes = Vec::new();
        for sc in seq.get("scopes")?.as_array()? {
            let marks = sc
                .get("marks")?
                .as_array()?
                .iter()
                .map(|m| Some(Mark { name: s(m, "mark")?, by: s(m, "by")?, role: opt_s(m, "sender")? }))
                .collect::<Option<Vec<_>>>()?;
            let record = sc
                .get("record")?
                .as_array()?
                .iter()
                .map(|a| {
                    let from = a.get("from")?;
                    let src = match from.get("source")?.as_str()? {
                        "field" => AttrSource::Field(field_ref(from.get("of")?)?),
                        "open-key" => AttrSource::OpenKey(idx(from, "of")?),
                        _ => return None,
                    };
                    Some((s(a, "attr")?, src))
                })
                .collect::<Option<Vec<_>>>()?;
            scopes.push(Scope {
                key: field_ref(sc.get("key")?)?,
                opened_by: opt_s(sc, "openedBy")?,
                closed_by: opt_s(sc, "closedBy")?,
                single: sc.get("single")?.as_bool()?,
                within: idx(sc, "within"),
                marks,
                record,
                rollup: opt_s(sc, "rollup")?,
                remember_closed: sc.get("rememberClosed")?.as_bool()?,
            });
        }
        let mut rules = Vec::new();
        for r in seq.get("rules")?.as_array()? {
            let k = r;
            let scope = idx(k, "scope").unwrap_or(0);
            let kind = match k.get("check")?.as_str()? {
                "unique" => Kind::Unique { key: field_ref(k.get("key")?)? },
                "open-without-key" => Kind::OpenWithoutKey,
                "open-while-open" => Kind::OpenWhileOpen,
                "open-reused" => Kind::OpenReused,
                "key-missing" => Kind::KeyMissing,
                "key-mismatch" => Kind::KeyMismatch,
                "close-not-open" => Kind::CloseNotOpen,
                "names-open" => Kind::NamesOpen { at: field_ref(k.get("at")?)? },
                "needs-open" => Kind::NeedsOpen,
                "close-blocked" => {
                    let unless = match k.get("unless") {
                        None | Some(Value::Null) => None,
                        Some(u) => {
                            let u = u.as_array()?;
                            let n = |i: usize| u.get(i)?.as_u64().and_then(|n| usize::try_from(n).ok());
                            Some((n(0)?, n(1)?))
                        }
                    };
                    Kind::CloseBlocked { by: idx(k, "by")?, unless }
                }
                "close-requires" => Kind::CloseRequires {
                    mark: idx(k, "mark")?,
                    field: field_ref(k.get("field")?)?,
                    equals: k.get("equals")?.clone(),
                },
                _ => return None,
            };
            let when = r
                .get("when")?
                .as_array()?
                .iter()
                .map(|w| Some((field_ref(w.get(0)?)?, w.get(1)?.clone())))
                .collect::<Option<Vec<_>>>()?;
            rules.push(Rule {
                id: s(r, "rule")?,
                kind,
                scope,
                role: opt_s(r, "sender")?,
                on: strings(r, "on")?,
                when,
                pointer: s(r, "pointer")?,
                message: s(r, "template")?,
            });
        }
        let mut parts = Vec::new();
        for p in seq.get("rollup")?.as_array()? {
            let k = p;
            let kind = match k.get("fold")?.as_str()? {
                "last" => PartKind::Last(strings(k, "fields")?),
                "latest" => PartKind::Latest(strings(k, "fields")?),
                "count" => PartKind::Count(field_ref(k.get("field")?)?, strings(k, "values")?),
                "sum" => PartKind::Sum(field_ref(k.get("field")?)?, strings(k, "fields")?),
                _ => return None,
            };
            parts.push(Part { name: s(p, "part")?, event: s(p, "event")?, kind });
        }
        let m = Machine {
            role: s(v, "roleProperty")?,
            union: s(v, "unionProperty")?,
            tag: s(v, "discriminator")?,
            scopes,
            rules,
            parts,
        };
        m.indices_hold().then_some(m)
    }

    /// Every index in the declarations points at something (a hand-made document cannot make the checker panic).
    fn indices_hold(&self) -> bool {
        let n = self.scopes.len();
        let scope_ok = |sc: &Scope| {
            sc.within.is_none_or(|w| w < n)
                && sc.record.iter().all(|(_, a)| !matches!(a, AttrSource::OpenKey(o) if *o >= n))
        };
        let rule_ok = |r: &Rule| match &r.kind {
            Kind::Unique { .. } => true,
            Kind::CloseBlocked { by, unless, .. } => {
                r.scope < n && *by < n && unless.is_none_or(|(u, m)| u < n && m < self.scopes[u].marks.len())
            }
            Kind::CloseRequires { mark, .. } => r.scope < n && *mark < self.scopes[r.scope].marks.len(),
            _ => r.scope < n,
        };
        self.scopes.iter().all(scope_ok) && self.rules.iter().all(rule_ok)
    }

    /// What the rules and the rollup read of a message: the envelope properties and the event properties (with
    /// the role, union and discriminator names). A message reduced to these ([`State::check`] reads nothing else)
    /// gets the same verdict and folds the same way.
    pub fn reads(&self) -> (Vec<&str>, Vec<&str>) {
        let mut env = vec![self.role.as_str(), self.union.as_str()];
        let mut ev = vec![self.tag.as_str()];
        let mut refs: Vec<&FieldRef> = Vec::new();
        for sc in &self.scopes {
            refs.push(&sc.key);
            for (_, a) in &sc.record {
                if let AttrSource::Field(f) = a {
                    refs.push(f);
                }
            }
        }
        for r in &self.rules {
            match &r.kind {
                Kind::Unique { key } => refs.push(key),
                Kind::NamesOpen { at } => refs.push(at),
                Kind::CloseRequires { field, .. } => refs.push(field),
                _ => {}
            }
            for (f, _) in &r.when {
                refs.push(f);
            }
        }
        let mut fields: Vec<&str> = Vec::new();
        for p in &self.parts {
            match &p.kind {
                PartKind::Last(fs) | PartKind::Latest(fs) => fields.extend(fs.iter().map(String::as_str)),
                PartKind::Count(f, _) | PartKind::Sum(f, _) => refs.push(f),
            }
        }
        for f in refs {
            match f {
                FieldRef::Envelope(n) => env.push(n.as_str()),
                FieldRef::Event(n) => ev.push(n.as_str()),
            }
        }
        ev.extend(fields);
        env.sort_unstable();
        env.dedup();
        ev.sort_unstable();
        ev.dedup();
        (env, ev)
    }

    /// The id of rule `i` (a [`Violation::rule`]).
    pub fn rule_id(&self, i: usize) -> &str {
        self.rules.get(i).map_or("", |r| r.id.as_str())
    }

    /// The rule ids, in check order.
    pub fn rule_ids(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().map(|r| r.id.as_str())
    }
}

/// A sequence rule a message breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule's index ([`Machine::rule_id`]).
    pub rule: usize,
    /// The JSON Pointer the rule reports at.
    pub pointer: String,
    /// The filled message.
    pub message: String,
    /// The earlier line the violation relates to.
    pub related: Option<usize>,
    /// The earlier rejected line the violation only follows from.
    pub caused_by: Option<usize>,
}

/// At most this many keys per scope are remembered for `caused_by` (a stream of rejected lines cannot grow the
/// state without bound; past it, later echoes simply have no `caused_by`).
const REJECTED_KEYS: usize = 4096;

fn remember(map: &mut HashMap<String, usize>, key: &str, line: usize) {
    if map.len() < REJECTED_KEYS || map.contains_key(key) {
        map.insert(key.to_string(), line);
    }
}

#[derive(Debug, Clone, Default)]
struct ScopeState {
    open: BTreeMap<String, Item>,
    /// Keys of closed ones, with the line that closed each (only when a rule forbids reopening).
    closed: HashMap<String, usize>,
    /// Keys a rejected line would have opened, with that line (until an accepted line opens the key).
    rejected_open: HashMap<String, usize>,
    /// Keys a rejected line would have closed, with that line (until an accepted line closes the key).
    rejected_close: HashMap<String, usize>,
}

/// An open scope.
#[derive(Debug, Clone)]
struct Item {
    /// When it opened (a scope `within` another: when that one opened).
    seq: u64,
    /// The line that opened it.
    line: usize,
    /// The recorded values, in the scope's record order.
    attrs: Vec<Value>,
    /// The marks, in the scope's mark order: the line that set each.
    marks: Vec<Option<usize>>,
}

impl ScopeState {
    /// The open one of a single scope (the only entry).
    fn the_open(&self) -> Option<(&String, &Item)> {
        self.open.iter().next()
    }

    fn has(&self, key: &str) -> bool {
        self.open.contains_key(key)
    }

    fn in_order(&self) -> Vec<(&String, &Item)> {
        let mut v: Vec<_> = self.open.iter().collect();
        v.sort_by_key(|(_, i)| i.seq);
        v
    }
}

#[derive(Debug, Clone)]
enum PartState {
    Last(Option<Map<String, Value>>),
    Latest(Vec<Option<Value>>),
    Count(Vec<u64>),
    Sum(Vec<f64>),
}

/// A message, as the rules read it.
struct Msg<'v> {
    role: &'v str,
    t: &'v str,
    env: &'v Map<String, Value>,
    ev: &'v Map<String, Value>,
}

impl<'v> Msg<'v> {
    fn of(m: &Machine, v: &'v Value) -> Option<Msg<'v>> {
        let env = v.as_object()?;
        let ev = env.get(&m.union)?.as_object()?;
        Some(Msg {
            role: env.get(&m.role).and_then(Value::as_str).unwrap_or_default(),
            t: ev.get(&m.tag).and_then(Value::as_str).unwrap_or_default(),
            env,
            ev,
        })
    }

    fn get(&self, f: &FieldRef) -> Option<&'v Value> {
        match f {
            FieldRef::Envelope(n) => self.env.get(n),
            FieldRef::Event(n) => self.ev.get(n),
        }
    }

    fn str(&self, f: &FieldRef) -> Option<&'v str> {
        self.get(f).and_then(Value::as_str)
    }

    fn is(&self, tag: Option<&str>) -> bool {
        tag == Some(self.t)
    }

    /// Whether the rule's filters (`role`, `on`, `when`) select this message.
    fn selected(&self, r: &Rule) -> bool {
        r.role.as_deref().is_none_or(|x| x == self.role)
            && (r.on.is_empty() || r.on.iter().any(|t| t == self.t))
            && r.when.iter().all(|(f, v)| self.get(f) == Some(v))
    }
}

/// A value as message text: a string as it is, anything else as JSON.
fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// A sum as JSON, printed as JavaScript prints numbers: whole sums as integers.
fn number(sum: f64) -> Value {
    if sum.fract() == 0.0 && sum.abs() < 9_007_199_254_740_992.0 {
        Value::from(sum as i64)
    } else {
        serde_json::Number::from_f64(sum).map_or(Value::Null, Value::Number)
    }
}

/// Fills a template in one pass: `{name}` becomes the value of `name` in `params`; anything else (including
/// braces in the values) is copied as it is.
pub fn format_message(template: &str, params: &[(&str, &str)]) -> String {
    let is_param = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric());
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let param = after.find('}').filter(|&c| is_param(&after[..c])).and_then(|c| {
            let name = &after[..c];
            params.iter().find(|(k, _)| *k == name).map(|(_, v)| (c, *v))
        });
        match param {
            Some((close, value)) => {
                out.push_str(value);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The state of one stream: what is open, what the rules remember, the rollup parts and the message counts.
#[derive(Debug, Clone)]
pub struct State {
    next: u64,
    seen: Vec<HashMap<String, usize>>,
    scopes: Vec<ScopeState>,
    parts: Vec<PartState>,
    accepted: u64,
    rejected: u64,
}

impl State {
    /// The state at the start of a stream.
    pub fn new(m: &Machine) -> State {
        State {
            next: 0,
            seen: vec![HashMap::new(); m.rules.len()],
            scopes: vec![ScopeState::default(); m.scopes.len()],
            parts: m
                .parts
                .iter()
                .map(|p| match &p.kind {
                    PartKind::Last(_) => PartState::Last(None),
                    PartKind::Latest(fields) => PartState::Latest(vec![None; fields.len()]),
                    PartKind::Count(_, values) => PartState::Count(vec![0; values.len()]),
                    PartKind::Sum(_, fields) => PartState::Sum(vec![0.0; fields.len()]),
                })
                .collect(),
            accepted: 0,
            rejected: 0,
        }
    }

    /// Checks a message that passed the message-level rules (`line` is its 1-based line): the first rule it breaks,
    /// in declaration order (the message is then rejected and leaves the state alone, but for what it would have
    /// opened or closed), or `None` (it is accepted and folded into the state).
    pub fn check(&mut self, m: &Machine, line: usize, v: &Value) -> Option<Violation> {
        let Some(msg) = Msg::of(m, v) else {
            self.rejected += 1;
            return None;
        };
        let found =
            m.rules.iter().enumerate().filter(|(_, r)| msg.selected(r)).find_map(|(i, r)| self.broken(m, i, r, &msg));
        if found.is_some() {
            self.note_rejected(m, line, &msg);
            self.rejected += 1;
        } else {
            self.apply(m, line, &msg);
            self.accepted += 1;
        }
        found
    }

    /// A message the message-level rules rejected (`value` when it is at least JSON): it counts as rejected, and
    /// what it would have opened or closed is remembered for `caused_by`.
    pub fn reject(&mut self, m: &Machine, line: usize, value: Option<&Value>) {
        if let Some(msg) = value.and_then(|v| Msg::of(m, v)) {
            self.note_rejected(m, line, &msg);
        }
        self.rejected += 1;
    }

    fn note_rejected(&mut self, m: &Machine, line: usize, msg: &Msg<'_>) {
        for (s, sc) in m.scopes.iter().enumerate() {
            let key = msg.str(&sc.key);
            let st = &mut self.scopes[s];
            if let Some(k) = key.filter(|_| msg.is(sc.opened_by.as_deref())) {
                remember(&mut st.rejected_open, k, line);
            }
            if msg.is(sc.closed_by.as_deref()) {
                let k = if sc.single { st.the_open().map(|(k, _)| k.clone()) } else { key.map(String::from) };
                if let Some(k) = k.filter(|k| st.has(k)) {
                    remember(&mut st.rejected_close, &k, line);
                }
            }
        }
    }

    /// The open one a closing message closes: the open one of a single scope, else the message's key if open.
    fn closing<'s>(&'s self, s: usize, scope: &Scope, msg: &Msg<'_>) -> Option<(&'s String, &'s Item)> {
        let st = &self.scopes[s];
        if scope.single {
            st.the_open()
        } else {
            st.open.get_key_value(msg.str(&scope.key)?)
        }
    }

    /// The violation of rule `r` (index `i`) by `msg`, if it breaks it, with the earlier line it relates to and
    /// the rejected line it follows from, where there are such lines.
    fn broken(&self, m: &Machine, i: usize, r: &Rule, msg: &Msg<'_>) -> Option<Violation> {
        let fire = |params: &[(&str, &str)], related: Option<usize>, caused_by: Option<usize>| {
            let message = format_message(&r.message, params);
            Some(Violation { rule: i, pointer: r.pointer.clone(), message, related, caused_by })
        };
        if let Kind::Unique { key } = &r.kind {
            let v = msg.str(key)?;
            return self.seen[i].get(v).and_then(|l| fire(&[(key.name(), v)], Some(*l), None));
        }
        let s = r.scope;
        let (sc, st) = (&m.scopes[s], &self.scopes[s]);
        let kname = sc.key.name();
        let key = msg.str(&sc.key);
        let the_open = if sc.single { st.the_open() } else { None };
        let open = the_open.map(|(k, _)| k.as_str());
        let open_line = the_open.map(|(_, it)| it.line);
        let with = |k: Option<&str>, extra: &[(&str, &str)], related: Option<usize>, caused_by: Option<usize>| {
            let mut params: Vec<(&str, &str)> =
                vec![(kname, k.unwrap_or_default()), ("open", open.unwrap_or_default())];
            params.extend_from_slice(extra);
            fire(&params, related, caused_by)
        };
        let rejected_open = |k: Option<&str>| k.and_then(|k| st.rejected_open.get(k).copied());
        let opener = msg.is(sc.opened_by.as_deref());
        let closer = msg.is(sc.closed_by.as_deref());
        match &r.kind {
            Kind::Unique { .. } => None,
            Kind::OpenWithoutKey => (opener && key.is_none()).then(|| with(key, &[], None, None))?,
            Kind::OpenWhileOpen => {
                if !opener {
                    return None;
                }
                let held = if sc.single { the_open } else { key.and_then(|k| st.open.get_key_value(k)) };
                let (k, it) = held?;
                with(key, &[], Some(it.line), st.rejected_close.get(k).copied())
            }
            Kind::OpenReused => {
                let ended = key.filter(|_| opener).and_then(|k| st.closed.get(k))?;
                with(key, &[], Some(*ended), None)
            }
            Kind::KeyMissing => {
                (open.is_some() && !opener && key.is_none()).then(|| with(key, &[], open_line, None))?
            }
            Kind::KeyMismatch => {
                let other = open.is_some_and(|o| key.is_some_and(|k| k != o));
                (other && !opener).then(|| with(key, &[], open_line, rejected_open(key)))?
            }
            Kind::CloseNotOpen => {
                let none = if sc.single { open.is_none() } else { !key.is_some_and(|k| st.has(k)) };
                (closer && none).then(|| with(key, &[], None, rejected_open(key)))?
            }
            Kind::NamesOpen { at } => {
                if *at == sc.key && opener {
                    return None;
                }
                let v = msg.str(at)?;
                (!st.has(v)).then(|| with(Some(v), &[], None, rejected_open(Some(v))))?
            }
            Kind::NeedsOpen => {
                st.open.is_empty().then(|| with(key, &[], None, st.rejected_open.values().max().copied()))?
            }
            Kind::CloseBlocked { by, unless } => {
                if !closer {
                    return None;
                }
                let (closing, _) = self.closing(s, sc, msg)?;
                if let Some((u, mark)) = *unless {
                    let marked = |it: &Item| it.marks.get(mark).is_some_and(Option::is_some);
                    if self.scopes[u].the_open().is_some_and(|(_, it)| marked(it)) {
                        return None;
                    }
                }
                let bsc = &m.scopes[*by];
                let link = bsc.record.iter().position(|(_, a)| *a == AttrSource::OpenKey(s));
                let bst = &self.scopes[*by];
                let blocking = bst.in_order().into_iter().find(|(k, it)| match link {
                    Some(j) if bsc.within != Some(s) => {
                        it.attrs.get(j).and_then(Value::as_str) == Some(closing.as_str())
                    }
                    _ => *k == closing,
                });
                let (b, it) = blocking?;
                with(Some(closing), &[(bsc.key.name(), b)], Some(it.line), bst.rejected_close.get(b).copied())
            }
            Kind::CloseRequires { mark, field, equals } => {
                if !closer {
                    return None;
                }
                let (closing, it) = self.closing(s, sc, msg)?;
                let marked = it.marks.get(*mark).copied().flatten();
                let value = msg.get(field);
                (marked.is_some() && value != Some(equals))
                    .then(|| with(Some(closing), &[(field.name(), &text(value))], marked, None))?
            }
        }
    }

    /// Folds an accepted message into the state.
    fn apply(&mut self, m: &Machine, line: usize, msg: &Msg<'_>) {
        let seq = self.next;
        self.next += 1;
        for (i, r) in m.rules.iter().enumerate() {
            if let Kind::Unique { key } = &r.kind {
                if let Some(v) = msg.str(key).filter(|_| msg.selected(r)) {
                    self.seen[i].entry(v.to_string()).or_insert(line);
                }
            }
        }
        // Closes, in declaration order (what lives within a closed one closes with it).
        for (s, sc) in m.scopes.iter().enumerate() {
            if !msg.is(sc.closed_by.as_deref()) {
                continue;
            }
            let closed: Option<String> = if sc.single {
                let k = self.scopes[s].the_open().map(|(k, _)| k.clone());
                self.scopes[s].open.clear();
                k
            } else {
                msg.str(&sc.key).and_then(|k| self.scopes[s].open.remove_entry(k)).map(|(k, _)| k)
            };
            if let Some(k) = closed {
                for (w, wsc) in m.scopes.iter().enumerate() {
                    if wsc.within == Some(s) {
                        self.scopes[w].open.remove(&k);
                    }
                }
                self.scopes[s].rejected_close.remove(&k);
                if sc.remember_closed {
                    self.scopes[s].closed.insert(k, line);
                }
            }
        }
        // Opens.
        for (s, sc) in m.scopes.iter().enumerate() {
            let Some(key) = msg.str(&sc.key).filter(|_| msg.is(sc.opened_by.as_deref())) else { continue };
            let attrs: Vec<Value> = sc
                .record
                .iter()
                .map(|(_, a)| match a {
                    AttrSource::Field(f) => msg.get(f).cloned().unwrap_or(Value::Null),
                    AttrSource::OpenKey(o) => {
                        self.scopes[*o].the_open().map_or(Value::Null, |(k, _)| Value::String(k.clone()))
                    }
                })
                .collect();
            let at = match sc.within {
                Some(p) => match self.scopes[p].open.get(key) {
                    Some(parent) => parent.seq,
                    None => continue,
                },
                None => seq,
            };
            let st = &mut self.scopes[s];
            if sc.single {
                st.open.clear();
            }
            st.rejected_open.remove(key);
            match st.open.get_mut(key) {
                Some(it) => it.attrs = attrs,
                None => {
                    let marks = vec![None; sc.marks.len()];
                    st.open.insert(key.to_string(), Item { seq: at, line, attrs, marks });
                }
            }
        }
        // Marks.
        for (s, sc) in m.scopes.iter().enumerate() {
            for (j, mk) in sc.marks.iter().enumerate() {
                if msg.t == mk.by && mk.role.as_deref().is_none_or(|r| r == msg.role) {
                    if let Some(it) = self.scopes[s].open.values_mut().next() {
                        if let Some(slot) = it.marks.get_mut(j) {
                            slot.get_or_insert(line);
                        }
                    }
                }
            }
        }
        // Rollup parts.
        for (part, st) in m.parts.iter().zip(&mut self.parts) {
            if msg.t != part.event {
                continue;
            }
            match (&part.kind, st) {
                (PartKind::Last(fields), PartState::Last(last)) => {
                    *last = Some(
                        fields.iter().map(|f| (f.clone(), msg.ev.get(f).cloned().unwrap_or(Value::Null))).collect(),
                    );
                }
                (PartKind::Latest(fields), PartState::Latest(vals)) => {
                    for (f, v) in fields.iter().zip(vals.iter_mut()) {
                        if let Some(x) = msg.ev.get(f) {
                            *v = Some(x.clone());
                        }
                    }
                }
                (PartKind::Count(field, values), PartState::Count(n)) => {
                    if let Some(i) = msg.str(field).and_then(|v| values.iter().position(|x| x == v)) {
                        n[i] += 1;
                    }
                }
                (PartKind::Sum(field, fields), PartState::Sum(sums)) => {
                    if let Some(o) = msg.get(field).and_then(Value::as_object) {
                        for (f, sum) in fields.iter().zip(sums.iter_mut()) {
                            *sum += o.get(f).and_then(Value::as_f64).unwrap_or(0.0);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Messages accepted and rejected so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.accepted, self.rejected)
    }

    /// The declared rollup parts (by name, in declaration order) and what is open (per scope with a `rollup` name:
    /// the open one or `null` for a single scope, else a list in the order they opened).
    pub fn rollup(&self, m: &Machine) -> (Map<String, Value>, Map<String, Value>) {
        let mut parts = Map::new();
        for (part, st) in m.parts.iter().zip(&self.parts) {
            let v = match (&part.kind, st) {
                (PartKind::Last(_), PartState::Last(last)) => last.clone().map_or(Value::Null, Value::Object),
                (PartKind::Latest(fields), PartState::Latest(vals)) => Value::Object(
                    fields.iter().zip(vals).map(|(f, v)| (f.clone(), v.clone().unwrap_or(Value::Null))).collect(),
                ),
                (PartKind::Count(_, values), PartState::Count(n)) => {
                    Value::Object(values.iter().zip(n).map(|(k, n)| (k.clone(), Value::from(*n))).collect())
                }
                (PartKind::Sum(_, fields), PartState::Sum(sums)) => {
                    Value::Object(fields.iter().zip(sums).map(|(f, s)| (f.clone(), number(*s))).collect())
                }
                _ => Value::Null,
            };
            parts.insert(part.name.clone(), v);
        }
        let mut open = Map::new();
        for (sc, st) in m.scopes.iter().zip(&self.scopes) {
            let Some(name) = &sc.rollup else { continue };
            let item = |k: &String, it: &Item| -> Value {
                let mut o = Map::new();
                o.insert(sc.key.name().to_string(), Value::String(k.clone()));
                for ((a, _), v) in sc.record.iter().zip(&it.attrs) {
                    o.insert(a.clone(), v.clone());
                }
                for (mk, v) in sc.marks.iter().zip(&it.marks) {
                    o.insert(mk.name.clone(), Value::Bool(v.is_some()));
                }
                Value::Object(o)
            };
            let v = if sc.single {
                st.the_open().map_or(Value::Null, |(k, it)| item(k, it))
            } else {
                Value::Array(st.in_order().into_iter().map(|(k, it)| item(k, it)).collect())
            };
            open.insert(name.clone(), v);
        }
        (parts, open)
    }
}
