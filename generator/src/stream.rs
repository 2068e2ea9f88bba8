//! Stream validation: the protocol's sequence rules and the session rollup, interpreted from the protocol's
//! declarations (`x-sequence`, lowered into [`crate::ir::Sequence`]).
//!
//! Feed records in order to a [`StreamChecker`]; each call returns that record's verdict (its message-level
//! errors, or the first sequence rule it breaks); at any point [`StreamChecker::rollup`] gives the session state
//! folded from the messages accepted so far. Memory is bounded by the open scopes plus the values the declared
//! rules remember (unique values, keys of closed scopes); [`check_reader`] streams a file line by line.
//!
//! This module knows no event, field or role of any protocol: every name comes from the model. The emitted
//! TypeScript checker (`checkSessionStream` / `rollupSession` in `src/stream.ts`) interprets the same
//! declarations the same way.
//!
//! # Semantics (shared by every checker)
//! Messages are checked one by one in stream order. A message that breaks a message-level rule
//! ([`crate::rules`]) is reported with those errors; otherwise the first sequence rule it breaks, in declaration
//! order, is reported as a single error. Any rejected message (either kind) leaves the stream state unchanged,
//! as if it had not been sent. An accepted message then closes what it closes (scopes in declaration order; a
//! scope `within` another closes with it), opens what it opens, sets marks, and folds into the rollup parts.
//!
//! # Example
//! ```
//! # let proto = wiregen::load::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../schema"))).unwrap();
//! use wiregen::engine::{Engine, EngineOptions};
//! use wiregen::stream::StreamChecker;
//! let engine = Engine::new(proto, EngineOptions::default()).unwrap();
//! let mut checker = StreamChecker::new(&engine);
//! let session = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/streams/invalid-several-violations.jsonl")).unwrap();
//! let lines = session.split(|b| *b == b'\n').filter(|l| !l.is_empty());
//! let records: Vec<_> = lines.enumerate().map(|(i, l)| checker.check(i + 1, l)).collect();
//! let first = records.iter().find(|r| !r.valid).unwrap();
//! assert_eq!((first.line, first.errors[0].pointer.as_str()), (2, "/turn"));
//! assert_eq!(checker.rollup().messages.rejected, 3);
//! ```
//!
//! # Errors
//! Problems with the data are [`Record`]s, never errors; [`check_reader`] fails only on I/O.

pub mod rules;

use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufRead};
use std::ops::ControlFlow;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::engine::{Engine, Issue};
use crate::ir::sequence::{AttrSource, FieldRef, RollupKind, RuleKind, Scope, SeqRule, Sequence};
use crate::ir::{Model, Protocol};
use crate::validate::{read_line, Record, RecordSink, Summary};
use rules::format_message;

/// Checks the protocol's sequence rules over a stream of messages.
pub struct StreamChecker<'e> {
    engine: &'e Engine,
    /// The protocol (none for a package without a protocol layer: no stream rules apply).
    proto: Option<&'e Protocol>,
    /// The events' discriminator.
    tag: &'e str,
    seq: &'e Sequence,
    /// Sequence number of the next accepted message (orders open things by when they started).
    next: u64,
    /// Per rule: the values a `unique` rule has seen, with the line of each (empty for other kinds).
    seen: Vec<HashMap<String, usize>>,
    /// Per scope: what is open.
    scopes: Vec<ScopeState>,
    /// Per rollup part: its state.
    parts: Vec<PartState>,
    accepted: u64,
    rejected: u64,
}

static NO_SEQUENCE: std::sync::LazyLock<Sequence> = std::sync::LazyLock::new(Sequence::default);

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

/// At most this many keys per scope are remembered for `causedBy` (a stream of rejected lines cannot grow the
/// state without bound; past it, later echoes simply have no `causedBy`).
const REJECTED_KEYS: usize = 4096;

fn remember(map: &mut HashMap<String, usize>, key: &str, line: usize) {
    if map.len() < REJECTED_KEYS || map.contains_key(key) {
        map.insert(key.to_string(), line);
    }
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

#[derive(Debug, Clone)]
enum PartState {
    Last(Option<Map<String, Value>>),
    Latest(Vec<Option<Value>>),
    Count(Vec<u64>),
    Sum(Vec<f64>),
}

/// The session state folded from the accepted messages of a stream: what the seed says is mirrored into
/// session metadata. The parts between `messages` and `open` and the lists under `open` are the protocol's
/// declarations (`x-sequence`'s `rollup` and the scopes' `rollup` names), in declaration order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rollup {
    /// How many messages were accepted and rejected.
    pub messages: MessageCounts,
    /// The declared rollup parts, by name.
    #[serde(flatten)]
    pub parts: Map<String, Value>,
    /// What is still open: per listed scope, the open one (or `null`) of a single scope, else a list in the
    /// order they opened.
    pub open: Map<String, Value>,
}

/// Message counts of a [`Rollup`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MessageCounts {
    /// Messages accepted (valid and breaking no stream rule).
    pub accepted: u64,
    /// Messages rejected.
    pub rejected: u64,
}

/// A message that passed the message-level rules.
struct Msg<'v> {
    role: &'v str,
    t: &'v str,
    env: &'v Map<String, Value>,
    ev: &'v Map<String, Value>,
}

impl<'v> Msg<'v> {
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
    fn selected(&self, r: &SeqRule) -> bool {
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

impl ScopeState {
    /// The open one of a single scope (the only entry).
    fn the_open(&self) -> Option<(&String, &Item)> {
        self.open.iter().next()
    }

    /// Whether `key` is open (a single scope: whether it is the open one).
    fn has(&self, key: &str) -> bool {
        self.open.contains_key(key)
    }

    fn in_order(&self) -> Vec<(&String, &Item)> {
        let mut v: Vec<_> = self.open.iter().collect();
        v.sort_by_key(|(_, i)| i.seq);
        v
    }
}

impl<'e> StreamChecker<'e> {
    /// A checker at the start of a stream.
    pub fn new(engine: &'e Engine) -> Self {
        let m: &'e Model = engine.model();
        let proto = m.protocol.as_ref();
        let seq: &'e Sequence = proto.map_or(&*NO_SEQUENCE, |p| &p.sequence);
        StreamChecker {
            engine,
            proto,
            tag: proto.map_or("", |p| p.discriminator(m)),
            seq,
            next: 0,
            seen: vec![HashMap::new(); seq.rules.len()],
            scopes: vec![ScopeState::default(); seq.scopes.len()],
            parts: seq
                .rollup
                .iter()
                .map(|p| match &p.kind {
                    RollupKind::Last { .. } => PartState::Last(None),
                    RollupKind::Latest { fields } => PartState::Latest(vec![None; fields.len()]),
                    RollupKind::Count { values, .. } => PartState::Count(vec![0; values.len()]),
                    RollupKind::Sum { fields, .. } => PartState::Sum(vec![0.0; fields.len()]),
                })
                .collect(),
            accepted: 0,
            rejected: 0,
        }
    }

    /// Checks the next record (`line` is 1-based; `bytes` is the line without its newline).
    pub fn check(&mut self, line: usize, bytes: &[u8]) -> Record {
        // The fast path vouches for the message; the value is still needed for the stream state.
        if self.engine.is_valid_fast(bytes) {
            if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
                return self.check_valid(line, &v);
            }
        }
        let (value, errors) = self.engine.check_line(bytes);
        match value {
            Some(v) if errors.is_empty() => self.check_valid(line, &v),
            Some(v) => {
                self.note_rejected_value(line, &v);
                self.reject(line, errors)
            }
            None => self.reject(line, errors),
        }
    }

    /// Checks the next message, already parsed (`line` is its 1-based position).
    pub fn check_value(&mut self, line: usize, value: &Value) -> Record {
        let errors = self.engine.check_value(value);
        if errors.is_empty() {
            self.check_valid(line, value)
        } else {
            self.note_rejected_value(line, value);
            self.reject(line, errors)
        }
    }

    /// A message the message-level rules rejected: what it would have opened or closed, as far as it can be read.
    fn note_rejected_value(&mut self, line: usize, v: &Value) {
        let Some(p) = self.proto else { return };
        let (Some(env), Some(ev)) = (v.as_object(), v.get(&p.union_field).and_then(Value::as_object)) else { return };
        let m = Msg {
            role: env.get(&p.role_field).and_then(Value::as_str).unwrap_or_default(),
            t: ev.get(self.tag).and_then(Value::as_str).unwrap_or_default(),
            env,
            ev,
        };
        self.note_rejected(line, &m);
    }

    /// Remembers what a rejected message would have opened or closed (for `causedBy`).
    fn note_rejected(&mut self, line: usize, m: &Msg<'_>) {
        for (s, sc) in self.seq.scopes.iter().enumerate() {
            let key = m.str(&sc.key);
            let st = &mut self.scopes[s];
            if let Some(k) = key.filter(|_| m.is(sc.opened_by.as_deref())) {
                remember(&mut st.rejected_open, k, line);
            }
            if m.is(sc.closed_by.as_deref()) {
                let k = if sc.single { st.the_open().map(|(k, _)| k.clone()) } else { key.map(String::from) };
                if let Some(k) = k.filter(|k| st.has(k)) {
                    remember(&mut st.rejected_close, &k, line);
                }
            }
        }
    }

    fn reject(&mut self, line: usize, errors: Vec<Issue>) -> Record {
        self.rejected += 1;
        Record::new(line, errors)
    }

    fn check_valid(&mut self, line: usize, v: &Value) -> Record {
        let Some(p) = self.proto else {
            self.accepted += 1;
            return Record::new(line, Vec::new());
        };
        let (Some(env), Some(ev)) = (v.as_object(), v.get(&p.union_field).and_then(Value::as_object)) else {
            // Unreachable for a message the engine accepted; reported rather than trusted.
            return self.reject(line, vec![Issue::new(crate::rules::Rule::Type, "", "expected an envelope")]);
        };
        let m = Msg {
            role: env.get(&p.role_field).and_then(Value::as_str).unwrap_or_default(),
            t: ev.get(self.tag).and_then(Value::as_str).unwrap_or_default(),
            env,
            ev,
        };
        if let Some(issue) = self.first_violation(&m) {
            self.note_rejected(line, &m);
            return self.reject(line, vec![issue]);
        }
        self.apply(line, &m);
        self.accepted += 1;
        Record::new(line, Vec::new())
    }

    /// The first declared rule `m` breaks.
    fn first_violation(&self, m: &Msg<'_>) -> Option<Issue> {
        self.seq.rules.iter().enumerate().filter(|(_, r)| m.selected(r)).find_map(|(i, r)| self.broken(i, r, m))
    }

    /// The open one a closing message closes: the open one of a single scope, else the message's key if open.
    fn closing<'s>(&'s self, s: usize, scope: &Scope, m: &Msg<'_>) -> Option<(&'s String, &'s Item)> {
        let st = &self.scopes[s];
        if scope.single {
            st.the_open()
        } else {
            st.open.get_key_value(m.str(&scope.key)?)
        }
    }

    /// The violation of rule `r` (index `i`) by `m`, if `m` breaks it, with the earlier line it relates to and
    /// the rejected line it follows from, where there are such lines.
    fn broken(&self, i: usize, r: &SeqRule, m: &Msg<'_>) -> Option<Issue> {
        let scopes = &self.seq.scopes;
        let fire = |params: &[(&str, &str)], related: Option<usize>, caused_by: Option<usize>| {
            let message = format_message(&r.message, params);
            Some(Issue { pointer: r.pointer.clone(), rule: r.id, message, related, caused_by })
        };
        if let RuleKind::Unique { key } = &r.kind {
            let v = m.str(key)?;
            return self.seen[i].get(v).and_then(|l| fire(&[(key.name(), v)], Some(*l), None));
        }
        let s = r.kind.scope()?;
        let (sc, st) = (&scopes[s], &self.scopes[s]);
        let kname = sc.key.name();
        let key = m.str(&sc.key);
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
        let opener = m.is(sc.opened_by.as_deref());
        let closer = m.is(sc.closed_by.as_deref());
        match &r.kind {
            RuleKind::Unique { .. } => None,
            RuleKind::OpenWithoutKey { .. } => (opener && key.is_none()).then(|| with(key, &[], None, None))?,
            RuleKind::OpenWhileOpen { .. } => {
                if !opener {
                    return None;
                }
                let held = if sc.single { the_open } else { key.and_then(|k| st.open.get_key_value(k)) };
                let (k, it) = held?;
                with(key, &[], Some(it.line), st.rejected_close.get(k).copied())
            }
            RuleKind::OpenReused { .. } => {
                let ended = key.filter(|_| opener).and_then(|k| st.closed.get(k))?;
                with(key, &[], Some(*ended), None)
            }
            RuleKind::KeyMissing { .. } => {
                (open.is_some() && !opener && key.is_none()).then(|| with(key, &[], open_line, None))?
            }
            RuleKind::KeyMismatch { .. } => {
                let other = open.is_some_and(|o| key.is_some_and(|k| k != o));
                (other && !opener).then(|| with(key, &[], open_line, rejected_open(key)))?
            }
            RuleKind::CloseNotOpen { .. } => {
                let none = if sc.single { open.is_none() } else { !key.is_some_and(|k| st.has(k)) };
                (closer && none).then(|| with(key, &[], None, rejected_open(key)))?
            }
            RuleKind::NamesOpen { at, .. } => {
                if *at == sc.key && opener {
                    return None;
                }
                let v = m.str(at)?;
                (!st.has(v)).then(|| with(Some(v), &[], None, rejected_open(Some(v))))?
            }
            RuleKind::NeedsOpen { .. } => {
                st.open.is_empty().then(|| with(key, &[], None, st.rejected_open.values().max().copied()))?
            }
            RuleKind::CloseBlocked { by, unless, .. } => {
                if !closer {
                    return None;
                }
                let (closing, _) = self.closing(s, sc, m)?;
                if let Some((u, mark)) = *unless {
                    if self.scopes[u].the_open().is_some_and(|(_, it)| it.marks.get(mark).is_some_and(Option::is_some))
                    {
                        return None;
                    }
                }
                let bsc = &scopes[*by];
                let link = bsc.record.iter().position(|a| a.from == AttrSource::OpenKey(s));
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
            RuleKind::CloseRequires { mark, field, equals, .. } => {
                if !closer {
                    return None;
                }
                let (closing, it) = self.closing(s, sc, m)?;
                let marked = it.marks.get(*mark).copied().flatten();
                let value = m.get(field);
                (marked.is_some() && value != Some(equals))
                    .then(|| with(Some(closing), &[(field.name(), &text(value))], marked, None))?
            }
        }
    }

    /// Folds an accepted message into the state.
    fn apply(&mut self, line: usize, m: &Msg<'_>) {
        let seq = self.next;
        self.next += 1;
        let decl = self.seq;
        for (i, r) in decl.rules.iter().enumerate() {
            if let RuleKind::Unique { key } = &r.kind {
                if let Some(v) = m.str(key).filter(|_| m.selected(r)) {
                    self.seen[i].entry(v.to_string()).or_insert(line);
                }
            }
        }
        // Closes, in declaration order (what lives within a closed one closes with it).
        for (s, sc) in decl.scopes.iter().enumerate() {
            if !m.is(sc.closed_by.as_deref()) {
                continue;
            }
            let closed: Option<String> = if sc.single {
                let k = self.scopes[s].the_open().map(|(k, _)| k.clone());
                self.scopes[s].open.clear();
                k
            } else {
                m.str(&sc.key).and_then(|k| self.scopes[s].open.remove_entry(k)).map(|(k, _)| k)
            };
            if let Some(k) = closed {
                for (w, wsc) in decl.scopes.iter().enumerate() {
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
        for (s, sc) in decl.scopes.iter().enumerate() {
            let Some(key) = m.str(&sc.key).filter(|_| m.is(sc.opened_by.as_deref())) else { continue };
            let attrs: Vec<Value> = sc
                .record
                .iter()
                .map(|a| match &a.from {
                    AttrSource::Field(f) => m.get(f).cloned().unwrap_or(Value::Null),
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
        for (s, sc) in decl.scopes.iter().enumerate() {
            for (j, mk) in sc.marks.iter().enumerate() {
                if m.t == mk.by && mk.role.as_deref().is_none_or(|r| r == m.role) {
                    if let Some(it) = self.scopes[s].open.values_mut().next() {
                        it.marks[j].get_or_insert(line);
                    }
                }
            }
        }
        // Rollup parts.
        for (part, st) in decl.rollup.iter().zip(&mut self.parts) {
            if m.t != part.event {
                continue;
            }
            match (&part.kind, st) {
                (RollupKind::Last { fields }, PartState::Last(last)) => {
                    *last =
                        Some(fields.iter().map(|f| (f.clone(), m.ev.get(f).cloned().unwrap_or(Value::Null))).collect());
                }
                (RollupKind::Latest { fields }, PartState::Latest(vals)) => {
                    for (f, v) in fields.iter().zip(vals.iter_mut()) {
                        if let Some(x) = m.ev.get(f) {
                            *v = Some(x.clone());
                        }
                    }
                }
                (RollupKind::Count { field, values }, PartState::Count(n)) => {
                    if let Some(i) = m.str(field).and_then(|v| values.iter().position(|x| x == v)) {
                        n[i] += 1;
                    }
                }
                (RollupKind::Sum { field, fields }, PartState::Sum(sums)) => {
                    if let Some(o) = m.get(field).and_then(Value::as_object) {
                        for (f, sum) in fields.iter().zip(sums.iter_mut()) {
                            *sum += o.get(f).and_then(Value::as_f64).unwrap_or(0.0);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// The rollup of everything checked so far.
    pub fn rollup(&self) -> Rollup {
        let decl = self.seq;
        let mut parts = Map::new();
        for (part, st) in decl.rollup.iter().zip(&self.parts) {
            let v = match (&part.kind, st) {
                (RollupKind::Last { .. }, PartState::Last(last)) => last.clone().map_or(Value::Null, Value::Object),
                (RollupKind::Latest { fields }, PartState::Latest(vals)) => Value::Object(
                    fields.iter().zip(vals).map(|(f, v)| (f.clone(), v.clone().unwrap_or(Value::Null))).collect(),
                ),
                (RollupKind::Count { values, .. }, PartState::Count(n)) => {
                    Value::Object(values.iter().zip(n).map(|(k, n)| (k.clone(), Value::from(*n))).collect())
                }
                (RollupKind::Sum { fields, .. }, PartState::Sum(sums)) => {
                    Value::Object(fields.iter().zip(sums).map(|(f, s)| (f.clone(), number(*s))).collect())
                }
                _ => Value::Null,
            };
            parts.insert(part.name.clone(), v);
        }
        let mut open = Map::new();
        for (sc, st) in decl.scopes.iter().zip(&self.scopes) {
            let Some(name) = &sc.rollup else { continue };
            let item = |k: &String, it: &Item| -> Value {
                let mut o = Map::new();
                o.insert(sc.key.name().to_string(), Value::String(k.clone()));
                for (a, v) in sc.record.iter().zip(&it.attrs) {
                    o.insert(a.name.clone(), v.clone());
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
        Rollup { messages: MessageCounts { accepted: self.accepted, rejected: self.rejected }, parts, open }
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

/// What `wiregen validate --stream --summary` prints for one stream.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamSummary {
    /// The file as named on the command line (`<stdin>` for standard input).
    pub file: String,
    /// Lines checked.
    pub records: usize,
    /// Lines rejected.
    pub invalid: usize,
    /// The first rejected line, with its first error.
    pub first_error: Option<FirstError>,
    /// The session rollup of the accepted messages.
    pub rollup: Rollup,
}

/// The first rejected line of a stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FirstError {
    /// 1-based line.
    pub line: usize,
    /// Its first error.
    #[serde(flatten)]
    pub issue: Issue,
}

impl StreamSummary {
    /// Checks every line of `reader` as one stream ([`check_reader`]) and summarizes it, passing each record on.
    ///
    /// # Errors
    /// Only I/O errors while reading.
    pub fn of_reader<R: BufRead>(
        engine: &Engine,
        file: &str,
        reader: R,
        sink: impl RecordSink,
    ) -> io::Result<StreamSummary> {
        struct First<'a, S> {
            sink: S,
            first_error: &'a mut Option<FirstError>,
        }
        impl<S: RecordSink> RecordSink for First<'_, S> {
            fn record(&mut self, rec: Record) -> ControlFlow<()> {
                if self.first_error.is_none() {
                    *self.first_error = rec.errors.first().map(|e| FirstError { line: rec.line, issue: e.clone() });
                }
                self.sink.record(rec)
            }
            fn idle(&mut self) {
                self.sink.idle();
            }
        }
        let mut first_error = None;
        let (s, rollup) = check_reader(engine, reader, First { sink, first_error: &mut first_error })?;
        Ok(StreamSummary { file: file.to_string(), records: s.records, invalid: s.invalid, first_error, rollup })
    }

    /// The counts as a [`Summary`].
    pub fn counts(&self) -> Summary {
        Summary { records: self.records, invalid: self.invalid }
    }
}

/// Checks every line of `reader` as one stream (each line one message; no pretty-printed documents), handing
/// each record to `sink` in order (a closure, or a [`RecordSink`] that can stop the run and flush while the input
/// is idle). Reads one line at a time: memory stays bounded by the stream state.
///
/// # Errors
/// Only I/O errors while reading; every problem with the data is a [`Record`].
pub fn check_reader<R: BufRead>(
    engine: &Engine,
    reader: R,
    mut sink: impl RecordSink,
) -> io::Result<(Summary, Rollup)> {
    // Our own buffer, to see when the input has nothing more to give right now (then the sink may flush).
    let mut reader = io::BufReader::with_capacity(64 << 10, reader);
    let mut checker = StreamChecker::new(engine);
    let mut summary = Summary::default();
    let mut buf = Vec::new();
    let mut line = 0;
    loop {
        if reader.buffer().is_empty() {
            sink.idle();
        }
        if read_line(&mut reader, &mut buf)? == 0 {
            break;
        }
        line += 1;
        let rec = checker.check(line, &buf);
        summary.records += 1;
        if !rec.valid {
            summary.invalid += 1;
        }
        if sink.record(rec).is_break() {
            break;
        }
    }
    Ok((summary, checker.rollup()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineOptions;

    fn model() -> crate::ir::Model {
        crate::load::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema")).expect("schema loads")
    }

    #[test]
    fn a_rejected_message_leaves_the_state_unchanged() {
        let e = Engine::new(model(), EngineOptions::default()).expect("a root type");
        let mut c = StreamChecker::new(&e);
        let ok = |r: &Record| assert!(r.valid, "{r:?}");
        ok(&c.check(1, br#"{"id":"a","time":1,"role":"agent","turn":"t1","ev":{"t":"turn-start"}}"#));
        // Stream violation: a second turn-start; the id `b` is not remembered.
        let r = c.check(2, br#"{"id":"b","time":1,"role":"agent","turn":"t2","ev":{"t":"turn-start"}}"#);
        assert_eq!((r.errors[0].rule, r.errors[0].pointer.as_str()), ("turn.already-open", "/ev/t"));
        // Message-level violation: not applied either.
        let r = c.check(3, br#"{"id":"c","time":1,"role":"agent","turn":"t1","ev":{"t":"turn-end","status":"done"}}"#);
        assert_eq!(r.errors[0].rule, "enum");
        ok(&c
            .check(4, br#"{"id":"b","time":1,"role":"agent","turn":"t1","ev":{"t":"turn-end","status":"completed"}}"#));
        let roll = c.rollup();
        assert_eq!(roll.messages, MessageCounts { accepted: 2, rejected: 2 });
        assert_eq!(roll.parts["turns"]["completed"], Value::from(1));
        assert!(roll.open["turn"].is_null());
    }

    /// A package without `x-sequence` has no sequence rules and an empty rollup besides the counts.
    #[test]
    fn without_declarations_nothing_is_a_sequence_violation() {
        let mut m = model();
        if let Some(p) = m.protocol.as_mut() {
            p.sequence = Sequence::default();
        }
        let e = Engine::new(m, EngineOptions::default()).expect("a root type");
        let mut c = StreamChecker::new(&e);
        let r = c.check(1, br#"{"id":"a","time":1,"role":"agent","ev":{"t":"turn-end","status":"completed"}}"#);
        assert!(r.valid);
        let r = c.check(2, br#"{"id":"a","time":1,"role":"agent","ev":{"t":"turn-end","status":"completed"}}"#);
        assert!(r.valid, "no unique rule is declared");
        let roll = serde_json::to_value(c.rollup()).expect("json");
        assert_eq!(roll, serde_json::json!({"messages": {"accepted": 2, "rejected": 0}, "open": {}}));
    }

    /// The protocol vocabulary of a schema: event tags, envelope and event field names, roles and enum values.
    fn vocabulary(m: &Model) -> Vec<String> {
        use crate::ir::Shape as Node;
        let mut names = Vec::new();
        for t in &m.types {
            match &t.node.shape {
                Node::Object(o) => names.extend(o.fields.iter().map(|f| f.name.clone())),
                Node::Enum(vs) => names.extend(vs.iter().filter_map(|v| v.as_str().map(String::from))),
                Node::Union(u) => names.extend(u.members.iter().filter_map(|x| x.tag.as_str().map(String::from))),
                _ => {}
            }
        }
        names.sort();
        names.dedup();
        names
    }

    /// The quoted string literals of a source text.
    fn literals(src: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let b = src.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'"' {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                out.push(&src[start..j.min(b.len())]);
                i = j + 1;
            } else {
                i += 1;
            }
        }
        out
    }

    /// The stream sources name no event, field, role or enum value of any protocol: no string literal in the Rust
    /// stream code, the TypeScript stream emitter or its template is a protocol name (of the v2 protocol and of
    /// happy-wire's v1), and no hyphenated event tag appears anywhere in them, comments included. Every name the
    /// checkers use comes from the declarations (`x-sequence`).
    #[test]
    fn the_stream_sources_hold_no_protocol_vocabulary() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let v2 = model();
        let v1 = crate::load::load(&dir.join("../examples/happy-wire/schema")).expect("happy-wire loads");
        let mut vocab = vocabulary(&v2);
        vocab.extend(vocabulary(&v1));
        let tags: Vec<String> = [&v2, &v1]
            .iter()
            .filter_map(|m| m.protocol.as_ref())
            .flat_map(|p| p.events.iter().map(|e| e.tag.clone()))
            .collect();
        assert!(
            vocab.iter().any(|n| n == "agentId") && tags.iter().any(|t| t == "turn-start"),
            "the vocabulary is read"
        );
        let sources = ["src/stream.rs", "src/stream/rules.rs", "src/emit/ts_stream.rs", "templates/ts/stream.ts.j2"];
        let mut found = Vec::new();
        for rel in sources {
            let src = std::fs::read_to_string(dir.join(rel)).expect("a stream source");
            // This test itself names what it looks for only through the schemas.
            let src = src.split("mod tests {").next().unwrap_or_default();
            for lit in literals(src) {
                if vocab.iter().any(|n| n == lit) {
                    found.push(format!("{rel}: the literal \"{lit}\""));
                }
            }
            for t in tags.iter().filter(|t| t.contains('-')) {
                if src.contains(t.as_str()) {
                    found.push(format!("{rel}: the event tag `{t}`"));
                }
            }
        }
        assert!(found.is_empty(), "protocol vocabulary in the stream sources:\n{}", found.join("\n"));
    }
}
