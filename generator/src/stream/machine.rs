//! The sequence-rule interpreter: the one piece of Rust that checks a protocol's `x-sequence` declarations over
//! a stream of messages and folds the session rollup.
//!
//! It depends on `serde`, `serde_json` and `std` only, and knows no event, field or role of any protocol: it reads the
//! declarations as JSON (the lowered `ir::Sequence` with the envelope's role, union and discriminator names), so the
//! same file serves the `wiregen` library (`wiregen::stream`) and is copied into every generated Rust crate
//! (`<crate>::stream`). Messages reach it already checked against the message-level rules.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

use serde_json::{Map, Value};

/// Where a value of a message is: an envelope or an event property, and its slot among what the rules read
/// ([`Machine::reads`]).
#[derive(Debug, Clone, PartialEq, Eq)]
struct FieldRef {
    envelope: bool,
    name: String,
    slot: usize,
}

impl FieldRef {
    fn name(&self) -> &str {
        &self.name
    }
}

/// An event tag or a role, as an index into [`Machine`]'s names (`NONE` for one the declarations never name).
type Sym = u32;

/// The symbol of a tag or role the declarations never name.
pub const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, PartialEq)]
enum AttrSource {
    Field(FieldRef),
    OpenKey(usize),
}

#[derive(Debug, Clone)]
struct Mark {
    name: String,
    by: Sym,
    role: Option<Sym>,
}

#[derive(Debug, Clone)]
struct Scope {
    key: FieldRef,
    opened_by: Option<Sym>,
    closed_by: Option<Sym>,
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
    role: Option<Sym>,
    on: Vec<Sym>,
    when: Vec<(FieldRef, Value)>,
    pointer: String,
    message: String,
}

#[derive(Debug, Clone)]
enum PartKind {
    Last(Vec<FieldRef>),
    Latest(Vec<FieldRef>),
    Count(FieldRef, Vec<String>),
    Sum(FieldRef, Vec<String>),
}

#[derive(Debug, Clone)]
struct Part {
    name: String,
    event: Sym,
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
    /// The tags and roles the declarations name, each with its symbol.
    syms: HashMap<String, Sym>,
    /// What the rules read, by slot: (an envelope property?, its name).
    reads: Vec<(bool, String)>,
    /// Per (role bucket, tag symbol) pair ([`Machine::candidates`]): the rules whose `role` and `on` filters select
    /// it. A role bucket is a role some rule names, or every other role (one bucket): a table over every pair of
    /// symbols grew with their square, times the rules (a thousand scopes took most of a minute to load).
    by_pair: Vec<Vec<usize>>,
    /// Per symbol (and last, for none): its role bucket.
    role_bucket: Vec<usize>,
    /// Per tag symbol ([`Machine::ops`]): what a message with that tag does to the state.
    by_tag: Vec<TagOps>,
    /// Per scope: the scopes within it, directly or through another (they close with it; `ir::Scope::inner`).
    inner: Vec<Vec<usize>>,
}

/// What an accepted message with one tag does, each list in declaration order.
#[derive(Debug, Clone, Default)]
struct TagOps {
    /// The scopes it closes.
    closes: Vec<usize>,
    /// The scopes it opens.
    opens: Vec<usize>,
    /// The marks it sets: (scope, mark).
    marks: Vec<(usize, usize)>,
    /// The rollup parts it folds into.
    parts: Vec<usize>,
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
    let envelope = match v.get("in")?.as_str()? {
        "envelope" => true,
        "event" => false,
        _ => return None,
    };
    Some(FieldRef { envelope, name, slot: usize::MAX })
}

fn event_ref(name: &str) -> FieldRef {
    FieldRef { envelope: false, name: name.to_string(), slot: usize::MAX }
}

/// Interns tags and roles while the declarations are read.
#[derive(Default)]
struct Names {
    names: Vec<String>,
    syms: HashMap<String, Sym>,
}

impl Names {
    fn sym(&mut self, name: String) -> Sym {
        if let Some(&s) = self.syms.get(&name) {
            return s;
        }
        let s = self.names.len() as Sym;
        self.names.push(name.clone());
        self.syms.insert(name, s);
        s
    }

    fn opt(&mut self, name: Option<String>) -> Option<Sym> {
        name.map(|n| self.sym(n))
    }
}

impl Machine {
    /// The keys [`Msg::of_value`] reads: the envelope's (its role and the envelope properties the rules read), the
    /// key of the event object, and the event's (its tag and the event properties the rules read).
    pub(crate) fn read_keys(&self) -> (Vec<&str>, &str, Vec<&str>) {
        let reads = |envelope: bool| self.reads.iter().filter(move |(e, _)| *e == envelope).map(|(_, n)| n.as_str());
        let envelope = reads(true).chain([self.role.as_str()]).collect();
        let event = reads(false).chain([self.tag.as_str()]).collect();
        (envelope, &self.union, event)
    }

    /// Reads the declarations: `{"roleProperty", "unionProperty", "discriminator", "sequence": <the lowered
    /// ir::Sequence as JSON>}`. `None`
    /// when they are not in that form.
    pub fn from_json(v: &Value) -> Option<Machine> {
        let seq = v.get("sequence")?;
        let mut names = Names::default();
        let mut scopes = Vec::new();
        let mut inner = Vec::new();
        for sc in seq.get("scopes")?.as_array()? {
            let within_it: Vec<usize> = sc
                .get("inner")?
                .as_array()?
                .iter()
                .map(|x| x.as_u64().and_then(|i| usize::try_from(i).ok()))
                .collect::<Option<_>>()?;
            inner.push(within_it);
            let marks = sc
                .get("marks")?
                .as_array()?
                .iter()
                .map(|m| {
                    let (by, role) = (s(m, "by")?, opt_s(m, "sender")?);
                    Some(Mark { name: s(m, "mark")?, by: names.sym(by), role: names.opt(role) })
                })
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
                opened_by: names.opt(opt_s(sc, "openedBy")?),
                closed_by: names.opt(opt_s(sc, "closedBy")?),
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
                role: names.opt(opt_s(r, "sender")?),
                on: strings(r, "on")?.into_iter().map(|t| names.sym(t)).collect(),
                when,
                pointer: s(r, "pointer")?,
                message: s(r, "template")?,
            });
        }
        let mut parts = Vec::new();
        for p in seq.get("rollup")?.as_array()? {
            let k = p;
            let kind = match k.get("fold")?.as_str()? {
                "last" => PartKind::Last(strings(k, "fields")?.iter().map(|f| event_ref(f)).collect()),
                "latest" => PartKind::Latest(strings(k, "fields")?.iter().map(|f| event_ref(f)).collect()),
                "count" => PartKind::Count(field_ref(k.get("field")?)?, strings(k, "values")?),
                "sum" => PartKind::Sum(field_ref(k.get("field")?)?, strings(k, "fields")?),
                _ => return None,
            };
            parts.push(Part { name: s(p, "part")?, event: names.sym(s(p, "event")?), kind });
        }
        let mut m = Machine {
            role: s(v, "roleProperty")?,
            union: s(v, "unionProperty")?,
            tag: s(v, "discriminator")?,
            scopes,
            rules,
            parts,
            syms: names.syms,
            reads: Vec::new(),
            by_pair: Vec::new(),
            role_bucket: Vec::new(),
            by_tag: Vec::new(),
            inner,
        };
        m.assign_slots();
        if !m.indices_hold() {
            return None;
        }
        let n = m.syms.len() as Sym + 1;
        let mut named: Vec<Sym> = m.rules.iter().filter_map(|r| r.role).collect();
        named.sort_unstable();
        named.dedup();
        // The other roles' bucket is read with no role, which no rule names.
        let buckets: Vec<Sym> = named.iter().copied().chain([NONE]).collect();
        m.role_bucket = (0..n).map(|s| named.binary_search(&s).unwrap_or(named.len())).collect();
        m.by_pair = (0..buckets.len() as Sym * n)
            .map(|p| {
                let (role, t) = (buckets[(p / n) as usize], p % n);
                let t = if t + 1 == n { NONE } else { t };
                m.rules.iter().enumerate().filter(|(_, r)| m.may_break(r, role, t)).map(|(i, _)| i).collect()
            })
            .collect();
        m.by_tag = (0..n)
            .map(|t| {
                let t = if t + 1 == n { NONE } else { t };
                let scopes = |f: &dyn Fn(&Scope) -> bool| -> Vec<usize> {
                    m.scopes.iter().enumerate().filter(|(_, sc)| f(sc)).map(|(s, _)| s).collect()
                };
                TagOps {
                    closes: scopes(&|sc| sc.closed_by == Some(t)),
                    opens: scopes(&|sc| sc.opened_by == Some(t)),
                    marks: m
                        .scopes
                        .iter()
                        .enumerate()
                        .flat_map(|(s, sc)| sc.marks.iter().enumerate().map(move |(j, mk)| (s, j, mk.by)))
                        .filter(|&(_, _, by)| by == t)
                        .map(|(s, j, _)| (s, j))
                        .collect(),
                    parts: m.parts.iter().enumerate().filter(|(_, p)| p.event == t).map(|(i, _)| i).collect(),
                }
            })
            .collect();
        Some(m)
    }

    /// Every index in the declarations points at something (a hand-made document cannot make the checker panic),
    /// and only single scopes have marks (the loader's rule: the open one gets them).
    fn indices_hold(&self) -> bool {
        let n = self.scopes.len();
        let scope_ok = |sc: &Scope| {
            (sc.single || sc.marks.is_empty())
                && sc.within.is_none_or(|w| w < n)
                && sc.record.iter().all(|(_, a)| !matches!(a, AttrSource::OpenKey(o) if *o >= n))
        };
        if self.inner.iter().flatten().any(|&w| w >= n) {
            return false;
        }
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

    /// Every value the rules and the rollup read, in a fixed visiting order.
    fn refs_mut(&mut self) -> Vec<&mut FieldRef> {
        let mut refs: Vec<&mut FieldRef> = Vec::new();
        for sc in &mut self.scopes {
            refs.push(&mut sc.key);
            for (_, a) in &mut sc.record {
                if let AttrSource::Field(f) = a {
                    refs.push(f);
                }
            }
        }
        for r in &mut self.rules {
            match &mut r.kind {
                Kind::Unique { key } => refs.push(key),
                Kind::NamesOpen { at } => refs.push(at),
                Kind::CloseRequires { field, .. } => refs.push(field),
                _ => {}
            }
            for (f, _) in &mut r.when {
                refs.push(f);
            }
        }
        for p in &mut self.parts {
            match &mut p.kind {
                PartKind::Last(fs) | PartKind::Latest(fs) => refs.extend(fs.iter_mut()),
                PartKind::Count(f, _) | PartKind::Sum(f, _) => refs.push(f),
            }
        }
        refs
    }

    /// Gives every value read a slot: one per distinct (envelope or event, name), in first-read order.
    fn assign_slots(&mut self) {
        let mut reads: Vec<(bool, String)> = Vec::new();
        for f in self.refs_mut() {
            f.slot = match reads.iter().position(|(e, n)| *e == f.envelope && *n == f.name) {
                Some(i) => i,
                None => {
                    reads.push((f.envelope, f.name.clone()));
                    reads.len() - 1
                }
            };
        }
        self.reads = reads;
    }

    /// What the rules and the rollup read of a message besides its role and tag, by slot: (an envelope property?,
    /// its name). A [`Msg`] gives these values ([`Msg::of_spans`] takes them by slot) and nothing else.
    pub fn reads(&self) -> &[(bool, String)] {
        &self.reads
    }

    /// The envelope's role, union and discriminator property names.
    pub fn envelope_names(&self) -> (&str, &str, &str) {
        (&self.role, &self.union, &self.tag)
    }

    /// Whether a message of this role and tag can break rule `r`: the rule's `role` and `on` filters select it,
    /// and it is its scope's opening or closing message where only those can break the rule.
    fn may_break(&self, r: &Rule, role: Sym, t: Sym) -> bool {
        let scope = self.scopes.get(r.scope);
        let kind = match r.kind {
            Kind::OpenWithoutKey | Kind::OpenWhileOpen | Kind::OpenReused => {
                scope.is_some_and(|s| s.opened_by == Some(t))
            }
            Kind::CloseNotOpen | Kind::CloseBlocked { .. } | Kind::CloseRequires { .. } => {
                scope.is_some_and(|s| s.closed_by == Some(t))
            }
            _ => true,
        };
        kind && r.role.is_none_or(|x| x == role) && (r.on.is_empty() || r.on.contains(&t))
    }

    /// The rules a message of this role and tag may break, in check order (their `when` filters still apply).
    fn candidates(&self, role: Sym, t: Sym) -> &[usize] {
        let n = self.syms.len() + 1;
        let i = |s: Sym| if s == NONE { n - 1 } else { (s as usize).min(n - 1) };
        let bucket = self.role_bucket.get(i(role)).copied().unwrap_or(0);
        self.by_pair.get(bucket * n + i(t)).map_or(&[], Vec::as_slice)
    }

    /// What an accepted message with tag `t` does.
    fn ops(&self, t: Sym) -> &TagOps {
        static NOTHING: TagOps = TagOps { closes: Vec::new(), opens: Vec::new(), marks: Vec::new(), parts: Vec::new() };
        let n = self.by_tag.len();
        let i = if t == NONE { n.wrapping_sub(1) } else { t as usize };
        self.by_tag.get(i).unwrap_or(&NOTHING)
    }

    /// The symbol of a tag or role ([`NONE`] when the declarations never name it).
    pub fn sym(&self, name: &str) -> u32 {
        self.syms.get(name).copied().unwrap_or(NONE)
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

/// The secret keys of the state's hash tables, drawn from the standard library's per-process randomness: input
/// crafted to make keys collide cannot know them.
#[derive(Debug, Clone, Copy)]
struct Keyed(u64, u64);

impl Default for Keyed {
    fn default() -> Self {
        let r = std::hash::RandomState::new();
        Keyed(r.hash_one(0x5eed_u64), r.hash_one(0xc0de_u64))
    }
}

/// The folded 128-bit product (the mixing step of foldhash and wyhash).
fn fold(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

/// Mixes `bytes` into `h` under the secret `k`, eight bytes at a time (the last word overlapping the one before;
/// a key under eight bytes in one word, as foldhash reads them: a byte key's length is mixed in first, by `Hash`).
fn mix(mut h: u64, k: u64, b: &[u8]) -> u64 {
    let n = b.len();
    let word = |i: usize| {
        let mut x = [0u8; 8];
        x.copy_from_slice(&b[i..i + 8]);
        u64::from_le_bytes(x)
    };
    let half = |i: usize| {
        let mut x = [0u8; 4];
        x.copy_from_slice(&b[i..i + 4]);
        u64::from(u32::from_le_bytes(x))
    };
    if n >= 8 {
        let mut i = 0;
        while i + 8 < n {
            h = fold(h ^ word(i), k);
            i += 8;
        }
        fold(h ^ word(n - 8), k)
    } else if n >= 4 {
        fold(h ^ (half(0) | half(n - 4) << 32), k)
    } else if n > 0 {
        fold(h ^ (u64::from(b[0]) | u64::from(b[n / 2]) << 8 | u64::from(b[n - 1]) << 16), k)
    } else {
        h
    }
}

/// A [`Keyed`] hasher for the state's tables (a byte key hashes as its length, then its bytes).
#[derive(Debug, Clone, Copy)]
struct KeyedHasher {
    keys: Keyed,
    h: u64,
}

impl std::hash::Hasher for KeyedHasher {
    fn finish(&self) -> u64 {
        fold(self.h, self.keys.0 ^ 0x9e37_79b9_7f4a_7c15)
    }

    fn write(&mut self, bytes: &[u8]) {
        self.h = mix(self.h, self.keys.1, bytes);
    }

    fn write_usize(&mut self, n: usize) {
        self.h = fold(self.h ^ n as u64, self.keys.1);
    }
}

impl std::hash::BuildHasher for Keyed {
    type Hasher = KeyedHasher;

    fn build_hasher(&self) -> KeyedHasher {
        KeyedHasher { keys: *self, h: self.0 }
    }
}

/// Values by byte key (open scopes, closed keys, keys of rejected lines).
type Table<V> = HashMap<Box<[u8]>, V, Keyed>;

/// `key`'s value (no hashing when the table is empty, as most are most of the time).
fn find<'t, V>(t: &'t Table<V>, key: &[u8]) -> Option<&'t V> {
    if t.is_empty() {
        None
    } else {
        t.get(key)
    }
}

/// Forgets `key` (no hashing when the table is empty).
fn forget<V>(t: &mut Table<V>, key: &[u8]) {
    if !t.is_empty() {
        t.remove(key);
    }
}

/// Remembers `key` with `line` unless the table is full: `Some` of the line it replaced when it did.
fn remember(map: &mut Table<usize>, key: &[u8], line: usize) -> Option<Option<usize>> {
    (map.len() < REJECTED_KEYS || map.contains_key(key)).then(|| map.insert(key.into(), line))
}

/// The open ones of a scope, by key: a single scope's one in place (it is read by most rules on every message),
/// any other's in a table. Once more than [`LINKED`] are open, each value recorded from another scope's open key
/// is indexed, so the first-opened one recorded under a given key is found without a scan (a `close-blocked` rule
/// asks for it on every closing message: with thousands open, a scan per closing message made a crafted stream
/// quadratic); with few open, a scan of them is cheaper than keeping the index on every open and close.
#[derive(Debug, Clone)]
struct Open {
    single: bool,
    one: Option<(Box<[u8]>, Item)>,
    many: Table<Item>,
    /// Per recorded value taken from another scope's open key (its position in the record): the open ones by that
    /// value, in the order they opened (kept while `linked`).
    links: Vec<(usize, Table<ByOpening>)>,
    /// Whether `links` is kept: from when more than [`LINKED`] are open until none is.
    linked: bool,
}

/// Open ones by when they opened (their `seq`), giving their keys.
type ByOpening = BTreeMap<u64, Box<[u8]>>;

/// Up to this many open ones, the first-opened one with a recorded key is found by a scan.
const LINKED: usize = 16;

/// Adds `it` (opened under `key`) to the link indexes, or takes it out.
fn link(links: &mut [(usize, Table<ByOpening>)], key: &[u8], it: &Item, add: bool) {
    for (j, by) in links {
        let Some(Rec::Str(v)) = it.attrs.get(*j) else { continue };
        if add {
            by.entry(v.into()).or_default().insert(it.seq, key.into());
        } else if let Some(m) = by.get_mut(v) {
            m.remove(&it.seq);
            if m.is_empty() {
                by.remove(v);
            }
        }
    }
}

impl Open {
    fn is_empty(&self) -> bool {
        self.one.is_none() && self.many.is_empty()
    }

    /// The open one of a single scope.
    fn first(&self) -> Option<(&[u8], &Item)> {
        self.one.as_ref().map(|(k, it)| (&**k, it))
    }

    fn get(&self, key: &[u8]) -> Option<(&[u8], &Item)> {
        match &self.one {
            Some((k, it)) if **k == *key => Some((k, it)),
            _ if self.many.is_empty() => None,
            _ => self.many.get_key_value(key).map(|(k, it)| (&**k, it)),
        }
    }

    /// The first-opened one whose recorded value at `attr` (taken from another scope's open key) is `value`.
    fn first_linked(&self, attr: usize, value: &[u8]) -> Option<(&[u8], &Item)> {
        let (_, by) = self.links.iter().find(|(j, _)| *j == attr)?;
        if !self.linked {
            let holds = |it: &Item| matches!(it.attrs.get(attr), Some(Rec::Str(v)) if v == value);
            return self.iter().filter(|(_, it)| holds(it)).min_by_key(|(_, it)| it.seq);
        }
        let (_, key) = find(by, value)?.first_key_value()?;
        self.get(key)
    }

    /// Adds `it` (opened under `key`) to the link indexes, or takes it out, while they are kept; starts keeping
    /// them once more than [`LINKED`] are open, and stops once none is.
    fn index(&mut self, key: &[u8], it: &Item, add: bool) {
        if self.links.is_empty() {
            return;
        }
        if self.linked {
            link(&mut self.links, key, it, add);
            if !add && self.is_empty() {
                self.linked = false;
                // Empty, with the room its peak took: a scan of a few open ones must not walk that room.
                self.links.iter_mut().for_each(|(_, by)| *by = HashMap::with_hasher(*by.hasher()));
                self.many = HashMap::with_hasher(*self.many.hasher());
            }
        } else if add && self.many.len() + usize::from(self.one.is_some()) >= LINKED {
            self.linked = true;
            for (k, open) in self.one.iter().map(|(k, it)| (k, it)).chain(&self.many) {
                link(&mut self.links, k, open, true);
            }
            link(&mut self.links, key, it, true);
        }
    }

    /// Closes `key`, giving it back with what was open under it.
    fn remove_entry(&mut self, key: &[u8]) -> Option<(Box<[u8]>, Item)> {
        let (k, it) = if self.one.as_ref().is_some_and(|(k, _)| **k == *key) {
            self.one.take()?
        } else if self.many.is_empty() {
            return None;
        } else {
            self.many.remove_entry(key)?
        };
        self.index(&k, &it, false);
        Some((k, it))
    }

    /// Closes `key`, giving its key back.
    fn remove(&mut self, key: &[u8]) -> Option<Box<[u8]>> {
        self.remove_entry(key).map(|(k, _)| k)
    }

    /// Closes a single scope's open one, giving its key back.
    fn take(&mut self) -> Option<Box<[u8]>> {
        let (k, it) = self.one.take()?;
        self.index(&k, &it, false);
        Some(k)
    }

    /// Opens `key`, which is not open: a single scope's open one, or one under the same key, is closed first
    /// ([`Open::take`], [`Open::remove_entry`]).
    fn insert(&mut self, key: Box<[u8]>, item: Item) {
        debug_assert!(self.one.is_none() || !self.single, "a single scope's open one is taken first");
        debug_assert!(self.get(&key).is_none(), "an open key is removed first");
        self.index(&key, &item, true);
        if self.single {
            self.one = Some((key, item));
        } else {
            self.many.insert(key, item);
        }
    }

    fn iter(&self) -> impl Iterator<Item = (&[u8], &Item)> {
        self.one.iter().map(|(k, it)| (&**k, it)).chain(self.many.iter().map(|(k, it)| (&**k, it)))
    }
}

#[derive(Debug, Clone)]
struct ScopeState {
    open: Open,
    /// Keys of closed ones, with the line that closed each (only when a rule forbids reopening).
    closed: Table<usize>,
    /// Keys a rejected line would have opened, with that line (until an accepted line opens the key).
    rejected_open: Table<usize>,
    /// The lines of `rejected_open`, each with how many keys have it (the latest is asked for on every message
    /// that needs an open one while none is: a scan of up to [`REJECTED_KEYS`] lines each time was slow on a
    /// crafted stream).
    rejected_open_lines: BTreeMap<usize, u32>,
    /// Keys a rejected line would have closed, with that line (until an accepted line closes the key).
    rejected_close: Table<usize>,
    /// The latest rejected line that would have opened one but gave no key (absent or not a string): what it
    /// would have opened is unknown, so a line that needs any key of this scope open follows from it, until an
    /// accepted line opens one (helper 101: an opening without its key was named by none of its echoes).
    rejected_keyless: Option<usize>,
}

/// An open scope.
#[derive(Debug, Clone)]
struct Item {
    /// When it opened (a scope `within` another: when that one opened). Distinct within a scope.
    seq: u64,
    /// The line that opened it.
    line: usize,
    /// The recorded values, in the scope's record order.
    attrs: Recorded,
    /// The marks, in the scope's mark order: the line that set each.
    marks: Vec<Option<usize>>,
}

/// A value an open one recorded, as [`Recorded`] holds it.
#[derive(Debug)]
enum Rec<'a> {
    Absent,
    /// A string, as its UTF-8 bytes.
    Str(&'a [u8]),
    /// Any other value, as its JSON text.
    Json(Cow<'a, [u8]>),
}

impl Rec<'_> {
    /// The value the rollup shows: `null` for one absent or not JSON (as reading it from the message gives).
    fn value(self) -> Value {
        match self {
            Rec::Absent => Value::Null,
            Rec::Str(b) => Value::String(text_of(b).into_owned()),
            Rec::Json(t) => serde_json::from_slice(&t).map_or(Value::Null, as_doubles),
        }
    }
}

/// The values an open one recorded (its scope's `record`), in one allocation (none when it records nothing): per
/// value a kind byte (0 absent, 1 a string, 2 JSON text), its length in 4 bytes and its bytes. They are read back
/// only by the rollup and by a `close-blocked` rule's link to another scope's key, while every opening records
/// them: a `serde_json::Value` each, with its string, cost ~600 instructions an opening.
#[derive(Debug, Clone, Default)]
struct Recorded(Box<[u8]>);

impl Recorded {
    /// Adds `r` to the values being recorded in `buf`.
    fn push(buf: &mut Vec<u8>, r: &Rec<'_>) {
        let (kind, bytes): (u8, &[u8]) = match r {
            Rec::Absent => (0, &[]),
            Rec::Str(b) => (1, b),
            Rec::Json(t) => (2, t),
        };
        // A value past 4 GiB cannot be in a line (64 MiB at most).
        let n = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        buf.push(kind);
        buf.extend_from_slice(&n.to_le_bytes());
        buf.extend_from_slice(&bytes[..n as usize]);
    }

    /// The `j`th value.
    fn get(&self, j: usize) -> Option<Rec<'_>> {
        recorded(&self.0).nth(j)
    }
}

/// The values [`Recorded::push`] put in `buf`, in order.
fn recorded(buf: &[u8]) -> impl Iterator<Item = Rec<'_>> {
    let mut rest = buf;
    std::iter::from_fn(move || {
        let (&kind, tail) = rest.split_first()?;
        let n = u32::from_le_bytes(tail.get(..4)?.try_into().ok()?) as usize;
        let bytes = tail.get(4..4 + n)?;
        rest = &tail[4 + n..];
        Some(match kind {
            1 => Rec::Str(bytes),
            2 => Rec::Json(Cow::Borrowed(bytes)),
            _ => Rec::Absent,
        })
    })
}

impl ScopeState {
    /// Remembers that rejected `line` would have opened `key` ([`remember`], keeping the line index).
    fn remember_rejected_open(&mut self, key: &[u8], line: usize) {
        if let Some(replaced) = remember(&mut self.rejected_open, key, line) {
            if let Some(old) = replaced {
                self.drop_rejected_line(old);
            }
            *self.rejected_open_lines.entry(line).or_default() += 1;
        }
    }

    /// An accepted line opened or closed `key`, or closed what it lives within: no rejected line that would have
    /// opened or closed it stands for anything a later line needs.
    fn forget_rejected(&mut self, key: &[u8]) {
        self.forget_rejected_open(key);
        forget(&mut self.rejected_close, key);
    }

    /// No rejected line stands for opening `key` any more.
    fn forget_rejected_open(&mut self, key: &[u8]) {
        if self.rejected_open.is_empty() {
            return;
        }
        if let Some(old) = self.rejected_open.remove(key) {
            self.drop_rejected_line(old);
        }
    }

    /// A closing line rejected only because nothing it closes is open, following from a rejected opening: it
    /// would have closed what that opening opened, so the lines after it do not follow from the opening (helper
    /// 127: a rejected opening explained every later line that needed one open, however many closed it in
    /// between). A single scope's closing closes whatever one is open: every rejected opening is done with.
    /// Another scope's closing of a key ends the rejected opening of that key, else the one without a key.
    fn consume_rejected_open(&mut self, single: bool, key: Option<&[u8]>) {
        if single {
            self.rejected_open.clear();
            self.rejected_open_lines.clear();
            self.rejected_keyless = None;
        } else if let Some(k) = key.filter(|k| find(&self.rejected_open, k).is_some()) {
            self.forget_rejected_open(k);
        } else {
            self.rejected_keyless = None;
        }
    }

    fn drop_rejected_line(&mut self, line: usize) {
        if let Some(n) = self.rejected_open_lines.get_mut(&line) {
            *n -= 1;
            if *n == 0 {
                self.rejected_open_lines.remove(&line);
            }
        }
    }

    fn new(sc: &Scope, keys: Keyed) -> ScopeState {
        let links = sc
            .record
            .iter()
            .enumerate()
            .filter(|(_, (_, a))| matches!(a, AttrSource::OpenKey(_)))
            .map(|(j, _)| (j, HashMap::with_hasher(keys)))
            .collect();
        ScopeState {
            open: Open { single: sc.single, one: None, many: HashMap::with_hasher(keys), links, linked: false },
            closed: HashMap::with_hasher(keys),
            rejected_open: HashMap::with_hasher(keys),
            rejected_open_lines: BTreeMap::new(),
            rejected_close: HashMap::with_hasher(keys),
            rejected_keyless: None,
        }
    }

    /// The latest rejected line that would have opened one, whatever its key.
    fn latest_rejected_open(&self) -> Option<usize> {
        self.rejected_open_lines.last_key_value().map(|(l, _)| *l).max(self.rejected_keyless)
    }

    /// The open one of a single scope.
    fn the_open(&self) -> Option<(&[u8], &Item)> {
        self.open.first()
    }

    fn has(&self, key: &[u8]) -> bool {
        self.open.get(key).is_some()
    }

    fn in_order(&self) -> Vec<(&[u8], &Item)> {
        let mut v: Vec<_> = self.open.iter().collect();
        v.sort_by_key(|(_, i)| i.seq);
        v
    }
}

#[derive(Debug, Clone)]
enum PartState {
    /// The fields' values of the last such event (in the part's field order).
    Last(Option<Vec<u8>>),
    /// Per field, the latest value given ([`Recorded::push`]; empty until one is).
    Latest(Vec<Vec<u8>>),
    Count(Vec<u64>),
    Sum(Vec<f64>),
}

/// A value's byte range in a line: `start..end` (`(0, 0)` when the message does not hold it).
pub type Span = (u32, u32);

/// One value a rule reads, of a parsed message.
enum Got<'v> {
    Str(&'v str),
    Other(&'v Value),
}

/// One value a rule reads, of a message read from its bytes ([`Spans`]).
#[derive(Debug, Clone, Copy)]
enum At {
    Absent,
    /// A string without escapes: its content's range in the line (no copy).
    Line(u32, u32),
    /// A string with escapes, decoded into [`Spans`]'s text: its range there.
    Text(u32, u32),
    /// Another value: its JSON text's range in the line.
    Raw(u32, u32),
}

/// The values of a message read from its bytes ([`Msg::of_spans`]), in buffers kept from one message to the next
/// (reading a message allocates nothing once they have grown).
#[derive(Debug, Clone, Default)]
pub struct Spans {
    /// Per slot: its value's range in the line (`(0, 0)` when absent).
    spans: Vec<Span>,
    /// The slots holding strings with escapes, each with its decoded text's range in `text`.
    escaped: Vec<(u32, u32, u32)>,
    /// The strings with escapes, decoded.
    text: String,
}

impl Spans {
    /// Reads the values at `spans` (per slot of [`Machine::reads`], the range in `line` of exactly one JSON value;
    /// `(0, 0)` when absent) of a line a scanner accepted (so its strings are valid UTF-8): only strings with
    /// escapes are decoded, the others are read in place. `false` when a value is not what such a scanner would
    /// give.
    pub fn read(&mut self, line: &[u8], spans: &[Span]) -> bool {
        // Most slots are absent from a given message: the spans are copied as they are (`(0, 0)` is absent), and
        // only the strings with escapes are set apart, decoded.
        self.spans.clear();
        self.spans.extend_from_slice(spans);
        self.escaped.clear();
        self.text.clear();
        for (slot, &(start, end)) in spans.iter().enumerate() {
            if end <= start {
                continue;
            }
            let Some(b) = line.get(start as usize..end as usize) else { return false };
            if b.first() != Some(&b'"') {
                continue;
            }
            if b.len() < 2 || b[b.len() - 1] != b'"' {
                return false;
            }
            if has_backslash(&b[1..b.len() - 1]) {
                let Ok(s) = serde_json::from_slice::<String>(b) else { return false };
                let from = self.text.len();
                self.text.push_str(&s);
                // A line is at most 64 MiB, its strings decoded no longer.
                let (Ok(slot), Ok(a), Ok(b)) =
                    (u32::try_from(slot), u32::try_from(from), u32::try_from(self.text.len()))
                else {
                    return false;
                };
                self.escaped.push((slot, a, b));
            }
        }
        true
    }

    /// Where the value of `slot` is.
    fn at(&self, line: &[u8], slot: usize) -> At {
        let Some(&(start, end)) = self.spans.get(slot) else { return At::Absent };
        if end <= start {
            At::Absent
        } else if line.get(start as usize) != Some(&b'"') {
            At::Raw(start, end)
        } else if let Some(&(_, a, b)) = self.escaped.iter().find(|(s, _, _)| *s as usize == slot) {
            At::Text(a, b)
        } else {
            At::Line(start + 1, end - 1)
        }
    }
}

/// Whether `b` holds a backslash: eight bytes at a time in a word (the values read here are mostly short ids, tags
/// and titles, where a `memchr` call costs more than it saves), then the few bytes left.
pub(crate) fn has_backslash(b: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        // A byte of `x` is zero where `w` has a backslash: the classic test for a zero byte in a word.
        let x = u64::from_le_bytes(w.try_into().unwrap_or_default()) ^ (ONES * u64::from(b'\\'));
        if x.wrapping_sub(ONES) & !x & HIGHS != 0 {
            return true;
        }
    }
    words.remainder().contains(&b'\\')
}

/// Where a [`Msg`]'s values are.
enum Src<'v> {
    /// Per slot of [`Machine::reads`], in a parsed message.
    Tree(Vec<Option<Got<'v>>>),
    /// Read from the message's bytes.
    Raw { line: &'v [u8], spans: &'v Spans },
}

/// A message, as the rules read it: its role, its tag and the values the declarations name (per slot of
/// [`Machine::reads`], each found once). Only built for a message that passed the message-level rules.
pub struct Msg<'v> {
    role: Sym,
    t: Sym,
    src: Src<'v>,
}

impl<'v> Msg<'v> {
    /// A parsed message; `None` when it is not an object whose union property is an object.
    pub fn of_value(m: &Machine, v: &'v Value) -> Option<Msg<'v>> {
        let env = v.as_object()?;
        let ev = env.get(&m.union)?.as_object()?;
        let name = |o: &Map<String, Value>, k: &str| m.sym(o.get(k).and_then(Value::as_str).unwrap_or_default());
        let vals = m
            .reads
            .iter()
            .map(|(envelope, n)| {
                if *envelope { env } else { ev }.get(n).map(|v| match v {
                    Value::String(s) => Got::Str(s),
                    other => Got::Other(other),
                })
            })
            .collect();
        Some(Msg { role: name(env, &m.role), t: name(ev, &m.tag), src: Src::Tree(vals) })
    }

    /// A message read from its bytes: its role and tag as symbols ([`Machine::sym`]; the role of a message
    /// without one is `sym("")`), and its values as [`Spans::read`] found them in `line`.
    pub fn of_spans(role: u32, t: u32, line: &'v [u8], spans: &'v Spans) -> Msg<'v> {
        Msg { role, t, src: Src::Raw { line, spans } }
    }

    fn get(&self, f: &FieldRef) -> Option<Cow<'_, Value>> {
        match &self.src {
            Src::Tree(vals) => match vals.get(f.slot)?.as_ref()? {
                Got::Str(s) => Some(Cow::Owned(Value::String(s.to_string()))),
                Got::Other(v) => Some(Cow::Borrowed(*v)),
            },
            Src::Raw { line, spans } => match spans.at(line, f.slot) {
                At::Absent => None,
                At::Line(..) | At::Text(..) => self.str(f).map(|s| Cow::Owned(Value::String(text_of(s).into_owned()))),
                At::Raw(a, b) => serde_json::from_slice(line.get(a as usize..b as usize)?).ok().map(Cow::Owned),
            },
        }
    }

    /// A string value, as its UTF-8 bytes.
    fn str(&self, f: &FieldRef) -> Option<&[u8]> {
        match &self.src {
            Src::Tree(vals) => match vals.get(f.slot)?.as_ref()? {
                Got::Str(s) => Some(s.as_bytes()),
                Got::Other(_) => None,
            },
            Src::Raw { line, spans } => match spans.at(line, f.slot) {
                At::Line(a, b) => line.get(a as usize..b as usize),
                At::Text(a, b) => spans.text.as_bytes().get(a as usize..b as usize),
                _ => None,
            },
        }
    }

    /// A value as an open one records it ([`Recorded`]): a string as its UTF-8 bytes, anything else as its JSON text.
    fn rec(&self, f: &FieldRef) -> Rec<'_> {
        match &self.src {
            Src::Tree(vals) => match vals.get(f.slot).and_then(Option::as_ref) {
                None => Rec::Absent,
                Some(Got::Str(s)) => Rec::Str(s.as_bytes()),
                Some(Got::Other(v)) => Rec::Json(Cow::Owned(serde_json::to_vec(v).unwrap_or_default())),
            },
            Src::Raw { line, spans } => match spans.at(line, f.slot) {
                At::Absent => Rec::Absent,
                At::Line(..) | At::Text(..) => self.str(f).map_or(Rec::Absent, Rec::Str),
                At::Raw(a, b) => line.get(a as usize..b as usize).map_or(Rec::Absent, |t| Rec::Json(Cow::Borrowed(t))),
            },
        }
    }

    /// Adds to `sums` the numbers at `names` of an object value (0 for one that is absent or not a number; nothing
    /// when the value is not an object), reading a captured object without building it.
    fn add_numbers(&self, f: &FieldRef, names: &[String], sums: &mut [f64]) {
        let add = |o: &Map<String, Value>, sums: &mut [f64]| {
            for (n, sum) in names.iter().zip(sums.iter_mut()) {
                *sum += o.get(n).and_then(Value::as_f64).unwrap_or(0.0);
            }
        };
        let raw = match &self.src {
            Src::Tree(vals) => match vals.get(f.slot) {
                Some(Some(Got::Other(Value::Object(o)))) => return add(o, sums),
                _ => return,
            },
            Src::Raw { line, spans } => match spans.at(line, f.slot) {
                At::Raw(a, b) => line.get(a as usize..b as usize),
                _ => None,
            },
        };
        if let Some(found) = raw.and_then(|b| numbers_at(b, names)) {
            for (v, sum) in found.iter().zip(sums.iter_mut()) {
                *sum += v.unwrap_or(0.0);
            }
        }
    }

    fn equals(&self, f: &FieldRef, v: &Value) -> bool {
        match v {
            Value::String(x) => self.str(f) == Some(x.as_bytes()),
            _ => self.get(f).is_some_and(|g| json_equal(&g, v)),
        }
    }

    fn is(&self, tag: Option<Sym>) -> bool {
        tag == Some(self.t)
    }

    /// Whether the rule's `when` filters select this message (asked of every candidate rule, most without one).
    #[inline]
    fn when(&self, r: &Rule) -> bool {
        r.when.is_empty() || r.when.iter().all(|(f, v)| self.equals(f, v))
    }
}

/// JSON equality as JSON Schema (and the TypeScript checker's `jsonEqual`) has it: numbers by value (`12` equals
/// `12.0`, which serde_json's `==` tells apart), objects whatever their key order.
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// The numbers at `names` in the JSON object `text` (per name: the last occurrence's number, `None` when absent or
/// not a number), as the same object parsed into a `Value` gives them; `None` when `text` is not an object.
pub(crate) fn numbers_at(text: &[u8], names: &[String]) -> Option<Vec<Option<f64>>> {
    use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Key<'n>(&'n [String]);
    impl<'de> DeserializeSeed<'de> for Key<'_> {
        type Value = Option<usize>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<usize>, D::Error> {
            d.deserialize_str(self)
        }
    }
    impl Visitor<'_> for Key<'_> {
        type Value = Option<usize>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a key")
        }
        fn visit_str<E>(self, k: &str) -> Result<Option<usize>, E> {
            Ok(self.0.iter().position(|n| n == k))
        }
    }
    struct Obj<'n>(&'n [String]);
    impl<'de> Visitor<'de> for Obj<'_> {
        type Value = Vec<Option<f64>>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut found = vec![None; self.0.len()];
            while let Some(k) = map.next_key_seed(Key(self.0))? {
                match k {
                    Some(i) => found[i] = Some(map.next_value::<Value>()?.as_f64()),
                    None => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(found.into_iter().map(Option::flatten).collect())
        }
    }
    let mut de = serde_json::Deserializer::from_slice(text);
    let found = de.deserialize_map(Obj(names)).ok()?;
    de.end().ok()?;
    Some(found)
}

/// What [`Msg::of_value`] reads of the JSON text of a rejected message, as a `Value` that holds nothing else: the
/// envelope's role, its event object with the tag, and the properties the rules read, each a scalar as it is and
/// an array or object as `null` (a rejected line is only asked what it would have opened or closed, by keys that
/// are strings), the rest skipped unparsed (`None` when the text is no object). Nothing is parsed into a tree: a
/// line of millions of values held them all in a `Value` before (a 64 MiB line took twice the memory in `--stream`
/// that `validate` takes), and skipping does not recurse, so a line rejected as too deep is read too. Of a key
/// given twice, the last is kept, as in a `Value`. A line rejected for the byte order mark it starts with is read
/// after it: the rest is a message, whose lines after it follow from it. A text that is not JSON every checker
/// reads ([`every_checker_reads`]) reads as nothing, wherever that is in it.
pub(crate) fn read_of_value(m: &Machine, text: &[u8]) -> Option<Value> {
    let text = text.strip_prefix("\u{feff}".as_bytes()).unwrap_or(text);
    if !every_checker_reads(text) {
        return None;
    }
    use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
    /// A scalar as its `Value`; an array or object skipped, as `null`.
    struct Scalar;
    impl<'de> DeserializeSeed<'de> for Scalar {
        type Value = Value;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Scalar {
        type Value = Value;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Value::Null)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Value::Null)
        }
        fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
            Ok(Value::Bool(b))
        }
        fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
            Ok(Value::from(n))
        }
        fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
            Ok(Value::from(n))
        }
        fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
            Ok(serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number))
        }
        fn visit_str<E>(self, s: &str) -> Result<Value, E> {
            Ok(Value::String(s.to_owned()))
        }
        fn visit_string<E>(self, s: String) -> Result<Value, E> {
            Ok(Value::String(s))
        }
        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
    }
    /// The keys to keep at one level, and the key whose object is read one level down with `inner`.
    struct Pick<'a> {
        keep: Vec<&'a str>,
        down: Option<(&'a str, Vec<&'a str>)>,
    }
    impl<'de> DeserializeSeed<'de> for &Pick<'_> {
        type Value = Option<Map<String, Value>>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for &Pick<'_> {
        type Value = Option<Map<String, Value>>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Map::new();
            while let Some(k) = map.next_key::<Cow<'de, str>>()? {
                if let Some((_, keep)) = self.down.as_ref().filter(|(d, _)| *d == k) {
                    match map.next_value_seed(&Pick { keep: keep.clone(), down: None })? {
                        Some(o) => out.insert(k.into_owned(), Value::Object(o)),
                        None => out.remove(k.as_ref()),
                    };
                } else if self.keep.contains(&k.as_ref()) {
                    out.insert(k.into_owned(), map.next_value_seed(Scalar)?);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(Some(out))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    }
    let (keep, union, ev) = m.read_keys();
    let pick = Pick { keep, down: Some((union, ev)) };
    let mut de = serde_json::Deserializer::from_slice(text);
    let found = (&pick).deserialize(&mut de).ok()??;
    de.end().ok()?;
    Some(Value::Object(found))
}

/// Whether every checker would read `text`, a JSON text, alike: no `\u` escape of an unpaired surrogate and no
/// number beyond the double range, anywhere in it. serde_json looks at neither where it skips a value, so a line
/// rejected first for another reason (its nesting, a byte order mark, a repeated key) was read in Rust where the
/// TypeScript checker, which looks at the whole line, read nothing.
fn every_checker_reads(text: &[u8]) -> bool {
    let hex = |b: &[u8]| {
        let digits = b.len() == 4 && b.iter().all(u8::is_ascii_hexdigit);
        digits.then(|| b.iter().fold(0u32, |n, &c| n * 16 + (c as char).to_digit(16).unwrap_or(0)))
    };
    let low = |u: u32| (0xDC00..0xE000).contains(&u);
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'"' => {
                i += 1;
                while i < text.len() && text[i] != b'"' {
                    if text[i] != b'\\' {
                        i += 1;
                    } else if text.get(i + 1) != Some(&b'u') {
                        i += 2;
                    } else {
                        let Some(u) = text.get(i + 2..i + 6).and_then(hex) else { return false };
                        i += 6;
                        if (0xD800..0xDC00).contains(&u) {
                            let pair = text.get(i..i + 2) == Some(&b"\\u"[..])
                                && text.get(i + 2..i + 6).and_then(hex).is_some_and(low);
                            if !pair {
                                return false;
                            }
                            i += 6;
                        } else if low(u) {
                            return false;
                        }
                    }
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < text.len() && matches!(text[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                    i += 1;
                }
                let n = std::str::from_utf8(&text[start..i]).ok().and_then(|t| t.parse::<f64>().ok());
                if !n.is_some_and(f64::is_finite) {
                    return false;
                }
            }
            _ => i += 1,
        }
    }
    true
}

/// A key or string value as text (the bytes of a JSON string: valid UTF-8).
fn text_of(b: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(b)
}

/// A value as message text: a string as it is, anything else as JSON.
fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(other) => shown(other),
        None => String::new(),
    }
}

/// Whether `c` may be in a placeholder's name (`{turn}`, `{agent_id}`, `{tool-call}`): what a property name a key
/// or field ends in is mostly made of (helper 134: `{run_id}` was printed as it is, and never refused).
pub fn is_placeholder_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '$')
}

/// A value as a message shows it: its compact JSON text with numbers as JavaScript writes them (`100` for `1e2`,
/// `0` for `-0`, a double for a big integer), as the TypeScript checker's `JSON.stringify` writes it (helper 134).
fn shown(v: &Value) -> String {
    fn put(v: &Value, out: &mut String) {
        match v {
            Value::Number(n) => out.push_str(&number_text(n.as_f64().unwrap_or(f64::NAN))),
            Value::Array(items) => {
                out.push('[');
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    put(x, out);
                }
                out.push(']');
            }
            Value::Object(o) => {
                out.push('{');
                for (i, (k, x)) in o.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    put(x, out);
                }
                out.push('}');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    put(v, &mut out);
    out
}

/// A number as JavaScript writes it (`Number.prototype.toString`, what `String(n)`, template strings and
/// `JSON.stringify` give), so every checker words a value alike: `100` (not `100.0`), `0` for `-0`, `0.0000001` as
/// `1e-7`, `1e21` as `1e+21`, the shortest digits that read back as the double.
#[must_use]
pub fn number_text(f: f64) -> String {
    if f == 0.0 {
        return "0".into();
    }
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN"
        } else if f > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        }
        .into();
    }
    // Rust writes the shortest digits that read back as the double: `1.2345e21`, `1e-7`.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i64;
    // The value is 0.`digits` × 10^n.
    let n = exp.parse::<i64>().unwrap_or(0) + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let sign = if e >= 0 { '+' } else { '-' };
        match digits.split_at(1) {
            (d, "") => format!("{d}e{sign}{}", e.abs()),
            (d, rest) => format!("{d}.{rest}e{sign}{}", e.abs()),
        }
    };
    if f < 0.0 {
        format!("-{body}")
    } else {
        body
    }
}

/// A sum as JSON, a whole one as an integer, as JavaScript prints it (past 2^53 the same value, in all its digits:
/// JavaScript rounds the last ones to zeros), while it fits 64 bits; the generated Rust types write numbers alike
/// (`rt::Wire`; `rt_tests` holds the two to one another). Past the double range it is `null`, which no JSON number
/// holds (the TypeScript checker writes `null` too).
pub(crate) fn number(sum: f64) -> Value {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if sum.fract() == 0.0 && (-TWO_63..TWO_63).contains(&sum) {
        Value::from(sum as i64)
    } else if sum.fract() == 0.0 && (0.0..2.0 * TWO_63).contains(&sum) {
        Value::from(sum as u64)
    } else {
        serde_json::Number::from_f64(sum).map_or(Value::Null, Value::Number)
    }
}

/// A recorded value as the rollup shows it: every number in it the double JavaScript reads (`1.0` is `1`, `-0` is
/// `0`, `9007199254740993` is `9007199254740992`), written as [`number`] writes a sum, so the checkers' rollups
/// agree (helper 134: the Rust checker kept `1.0`, `-0.0` and big integers as written).
fn as_doubles(v: Value) -> Value {
    match v {
        Value::Number(n) => number(n.as_f64().unwrap_or(f64::NAN)),
        Value::Array(items) => Value::Array(items.into_iter().map(as_doubles).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, x)| (k, as_doubles(x))).collect()),
        other => other,
    }
}

/// Fills a template in one pass: `{name}` becomes the value of `name` in `params`; anything else (including
/// braces in the values) is copied as it is.
pub fn format_message(template: &str, params: &[(&str, &str)]) -> String {
    let is_param = |s: &str| !s.is_empty() && s.chars().all(is_placeholder_char);
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

/// Strings remembered with a line each (what a `unique` rule has seen), built for one insert per message in little
/// memory (a stream may hold millions, and every page the table grows into costs a fault): the bytes live in one
/// buffer, found through a table keyed by 32 bits of their [`Keyed`] hash (so crafted input cannot make them
/// collide); entries with equal keys are chained and compared in full.
#[derive(Debug, Clone)]
struct Seen {
    keys: Keyed,
    /// Per key: the newest entry with that key.
    by_hash: HashMap<u32, u32, std::hash::BuildHasherDefault<HashOnce>>,
    entries: Vec<Entry>,
    text: Vec<u8>,
    /// The number of the message last checked ([`State::check_msg`]) and its value's key (so the value is inserted
    /// without hashing again).
    pending: Option<(u64, u32)>,
}

/// A [`Seen`] value: where its bytes end (they start where the previous entry's end), its line, and the previous
/// entry with the same key.
#[derive(Debug, Clone, Copy)]
struct Entry {
    end: u32,
    line: u32,
    prev: u32,
}

/// The hasher of a key that is (32 bits of) a hash already.
#[derive(Debug, Default)]
struct HashOnce(u64);

impl std::hash::Hasher for HashOnce {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n) << 32 | u64::from(n);
    }
}

impl Seen {
    fn new(keys: Keyed) -> Seen {
        Seen { keys, by_hash: HashMap::default(), entries: Vec::new(), text: Vec::new(), pending: Default::default() }
    }

    /// The table key of `key`.
    fn key(&self, key: &[u8]) -> u32 {
        (self.keys.hash_one(key) >> 32) as u32
    }

    fn find(&self, h: u32, key: &[u8]) -> Option<usize> {
        if self.entries.is_empty() {
            return None;
        }
        let mut at = *self.by_hash.get(&h)? as usize;
        while let Some(e) = self.entries.get(at) {
            let start = match at.checked_sub(1) {
                Some(p) => self.entries.get(p).map_or(0, |p| p.end as usize),
                None => 0,
            };
            if self.text.get(start..e.end as usize) == Some(key) {
                return Some(e.line as usize);
            }
            at = e.prev as usize;
        }
        None
    }

    /// The line `key` was seen on. `key` is message `n`'s value: [`Seen::insert`] of the same message takes its
    /// table key.
    fn get(&mut self, key: &[u8], n: u64) -> Option<usize> {
        let h = self.key(key);
        self.pending = Some((n, h));
        self.find(h, key)
    }

    /// Remembers message `n`'s `key` with `line` (it was not seen: [`Seen::get`] of that message said so, or this
    /// finds).
    fn insert(&mut self, key: &[u8], line: usize, n: u64) {
        let h = match self.pending.take() {
            Some((m, h)) if m == n => h,
            _ => {
                let h = self.key(key);
                if self.find(h, key).is_some() {
                    return;
                }
                h
            }
        };
        // Positions are 32-bit: past 4 GiB of values, 4 billion of them or line 4 billion, later ones are not
        // remembered.
        let (Ok(end), Ok(at), Ok(line)) =
            (u32::try_from(self.text.len() + key.len()), u32::try_from(self.entries.len()), u32::try_from(line))
        else {
            return;
        };
        if at == u32::MAX {
            return;
        }
        self.text.extend_from_slice(key);
        let prev = self.by_hash.insert(h, at).unwrap_or(u32::MAX);
        self.entries.push(Entry { end, line, prev });
    }
}

/// The state of one stream: what is open, what the rules remember, the rollup parts and the message counts.
#[derive(Debug, Clone)]
pub struct State {
    next: u64,
    /// Per rule (only `unique` rules fill theirs): the values seen, with the line of each.
    seen: Vec<Seen>,
    scopes: Vec<ScopeState>,
    parts: Vec<PartState>,
    accepted: u64,
    rejected: u64,
    /// Where an opening's recorded values are put together (kept from one opening to the next).
    recording: Vec<u8>,
}

impl State {
    /// The state at the start of a stream.
    pub fn new(m: &Machine) -> State {
        let keys = Keyed::default();
        State {
            next: 0,
            seen: vec![Seen::new(keys); m.rules.len()],
            scopes: m.scopes.iter().map(|sc| ScopeState::new(sc, keys)).collect(),
            parts: m
                .parts
                .iter()
                .map(|p| match &p.kind {
                    PartKind::Last(_) => PartState::Last(None),
                    PartKind::Latest(fields) => PartState::Latest(vec![Vec::new(); fields.len()]),
                    PartKind::Count(_, values) => PartState::Count(vec![0; values.len()]),
                    PartKind::Sum(_, fields) => PartState::Sum(vec![0.0; fields.len()]),
                })
                .collect(),
            accepted: 0,
            rejected: 0,
            recording: Vec::new(),
        }
    }

    /// Checks a message that passed the message-level rules (`line` is its 1-based line): the first rule it breaks,
    /// in declaration order (the message is then rejected and leaves the state alone, but for what it would have
    /// opened or closed), or `None` (it is accepted and folded into the state).
    pub fn check(&mut self, m: &Machine, line: usize, v: &Value) -> Option<Violation> {
        match Msg::of_value(m, v) {
            Some(msg) => self.check_msg(m, line, &msg),
            None => {
                self.rejected += 1;
                None
            }
        }
    }

    /// [`State::check`] of a message already reduced to what the rules read.
    pub fn check_msg(&mut self, m: &Machine, line: usize, msg: &Msg<'_>) -> Option<Violation> {
        let found = m
            .candidates(msg.role, msg.t)
            .iter()
            .map(|&i| (i, &m.rules[i]))
            .filter(|(_, r)| msg.when(r))
            .find_map(|(i, r)| self.broken(m, i, r, msg));
        if let Some(v) = &found {
            let r = &m.rules[v.rule];
            self.bind_keyless(m, r, msg, v.caused_by);
            self.note_rejected(m, line, msg);
            // A closing line rejected only for want of the opening it follows from would have closed what that
            // opening opened: the lines after it do not follow from it (a closing line rejected for another rule
            // closes nothing either way, and the opening's echoes go on past it; helper 129).
            if let (Kind::CloseNotOpen, Some(_)) = (&r.kind, v.caused_by) {
                let key = msg.str(&m.scopes[r.scope].key);
                self.scopes[r.scope].consume_rejected_open(m.scopes[r.scope].single, key);
            }
            self.rejected += 1;
        } else {
            self.apply(m, line, msg);
            self.accepted += 1;
        }
        found
    }

    /// A message that passed the message-level rules where no rule reads messages (a schema without a protocol
    /// layer): it counts as accepted, and changes nothing else.
    pub fn accept_unread(&mut self) {
        self.next += 1;
        self.accepted += 1;
    }

    /// A message the message-level rules rejected (`value` when it is at least JSON): it counts as rejected, and
    /// what it would have opened or closed is remembered for `caused_by`.
    pub fn reject(&mut self, m: &Machine, line: usize, value: Option<&Value>) {
        if let Some(msg) = value.and_then(|v| Msg::of_value(m, v)) {
            self.note_rejected(m, line, &msg);
        }
        self.rejected += 1;
    }

    /// What a rejected message would have opened or closed, remembered for `caused_by`.
    fn note_rejected(&mut self, m: &Machine, line: usize, msg: &Msg<'_>) {
        let ops = m.ops(msg.t);
        for &s in &ops.opens {
            match msg.str(&m.scopes[s].key) {
                Some(k) => self.scopes[s].remember_rejected_open(k, line),
                None => self.scopes[s].rejected_keyless = Some(line),
            }
        }
        for &s in &ops.closes {
            let st = &mut self.scopes[s];
            let k: Option<Box<[u8]>> = if m.scopes[s].single {
                st.the_open().map(|(k, _)| k.into())
            } else {
                msg.str(&m.scopes[s].key).filter(|k| st.has(k)).map(Into::into)
            };
            if let Some(k) = k {
                let _ = remember(&mut st.rejected_close, &k, line);
            }
        }
    }

    /// A rejected line whose cause was a rejected line's opening without a key (`cause`) and that needed key `v`
    /// open: that opening stands for opening `v`, and no other key's lines follow from it (helper 127: it
    /// explained the lines of three keys).
    fn bind_keyless(&mut self, m: &Machine, r: &Rule, msg: &Msg<'_>, cause: Option<usize>) {
        let Kind::NamesOpen { at } = &r.kind else { return };
        let st = &mut self.scopes[r.scope];
        if let (Some(c), Some(v), false) = (cause, msg.str(at), m.scopes[r.scope].single) {
            if st.rejected_keyless == Some(c) && find(&st.rejected_open, v).is_none() {
                st.remember_rejected_open(v, c);
                st.rejected_keyless = None;
            }
        }
    }

    /// The open one a closing message closes: the open one of a single scope, else the message's key if open.
    fn closing<'s>(&'s self, s: usize, scope: &Scope, msg: &Msg<'_>) -> Option<(&'s [u8], &'s Item)> {
        let st = &self.scopes[s];
        if scope.single {
            st.the_open()
        } else {
            st.open.get(msg.str(&scope.key)?)
        }
    }

    /// The violation of rule `r` (index `i`) by `msg`, if it breaks it, with the earlier line it relates to and
    /// the rejected line it follows from, where there are such lines.
    fn broken(&mut self, m: &Machine, i: usize, r: &Rule, msg: &Msg<'_>) -> Option<Violation> {
        let fire = |params: &[(&str, &str)], related: Option<usize>, caused_by: Option<usize>| {
            let message = format_message(&r.message, params);
            Some(Violation { rule: i, pointer: r.pointer.clone(), message, related, caused_by })
        };
        if let Kind::Unique { key } = &r.kind {
            let v = msg.str(key)?;
            return self.seen[i]
                .get(v, self.accepted + self.rejected)
                .and_then(|l| fire(&[(key.name(), &text_of(v))], Some(l), None));
        }
        let s = r.scope;
        let (sc, st) = (&m.scopes[s], &self.scopes[s]);
        let kname = sc.key.name();
        let key = msg.str(&sc.key);
        let the_open = if sc.single { st.the_open() } else { None };
        let open = the_open.map(|(k, _)| k);
        let open_line = the_open.map(|(_, it)| it.line);
        let with = |k: Option<&[u8]>, extra: &[(&str, &str)], related: Option<usize>, caused_by: Option<usize>| {
            let (k, o) = (text_of(k.unwrap_or_default()), text_of(open.unwrap_or_default()));
            let mut params: Vec<(&str, &str)> = vec![(kname, &k), ("open", &o)];
            params.extend_from_slice(extra);
            fire(&params, related, caused_by)
        };
        // The rejected line that would have opened `k`, else one that would have opened one without a key.
        let rejected_open =
            |k: Option<&[u8]>| k.and_then(|k| find(&st.rejected_open, k).copied()).or(st.rejected_keyless);
        let opener = msg.is(sc.opened_by);
        let closer = msg.is(sc.closed_by);
        match &r.kind {
            Kind::Unique { .. } => None,
            Kind::OpenWithoutKey => (opener && key.is_none()).then(|| with(key, &[], None, None))?,
            Kind::OpenWhileOpen => {
                if !opener {
                    return None;
                }
                let held = if sc.single { the_open } else { key.and_then(|k| st.open.get(k)) };
                let (k, it) = held?;
                with(key, &[], Some(it.line), find(&st.rejected_close, k).copied())
            }
            Kind::OpenReused => {
                let ended = key.filter(|_| opener).and_then(|k| find(&st.closed, k))?;
                with(key, &[], Some(*ended), None)
            }
            // Had the rejected line that would have closed the open one been accepted, nothing would be open
            // (helper 129).
            Kind::KeyMissing => (open.is_some() && !opener && key.is_none())
                .then(|| with(key, &[], open_line, open.and_then(|o| find(&st.rejected_close, o).copied())))?,
            Kind::KeyMismatch => {
                let other = open.is_some_and(|o| key.is_some_and(|k| k != o));
                (other && !opener).then(|| with(key, &[], open_line, rejected_open(key)))?
            }
            Kind::CloseNotOpen => {
                let none = if sc.single { open.is_none() } else { !key.is_some_and(|k| st.has(k)) };
                // A closing event without its key follows from the latest rejected opening of a single scope
                // (helper 111: a keyless one named none); one with its key, from the rejected opening of that key
                // or of none (had another key's opening been accepted, the key would be the wrong one; helper 127).
                // Of a scope of many, one without its key closes nothing however the openings went (helper 129).
                let cause = match (sc.single, key) {
                    (true, None) => st.latest_rejected_open(),
                    (false, None) => None,
                    _ => rejected_open(key),
                };
                (closer && none).then(|| with(key, &[], None, cause))?
            }
            Kind::NamesOpen { at } => {
                if *at == sc.key && opener {
                    return None;
                }
                let v = msg.str(at)?;
                (!st.has(v)).then(|| with(Some(v), &[], None, rejected_open(Some(v))))?
            }
            // The scope's own opening event does not need one open (without `on`, every opening was refused
            // while nothing was open; helper 79).
            Kind::NeedsOpen if opener => None,
            Kind::NeedsOpen => st.open.is_empty().then(|| with(key, &[], None, st.latest_rejected_open()))?,
            Kind::CloseBlocked { by, unless } => {
                if !closer {
                    return None;
                }
                let bst = &self.scopes[*by];
                if bst.open.is_empty() {
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
                // The first one opened that the closing one holds: by the recorded key, or by the same key.
                let blocking = match link {
                    Some(j) if bsc.within != Some(s) => bst.open.first_linked(j, closing),
                    _ => bst.open.get(closing),
                };
                let (b, it) = blocking?;
                with(
                    Some(closing),
                    &[(bsc.key.name(), &text_of(b))],
                    Some(it.line),
                    find(&bst.rejected_close, b).copied(),
                )
            }
            Kind::CloseRequires { mark, field, equals } => {
                if !closer {
                    return None;
                }
                let (closing, it) = self.closing(s, sc, msg)?;
                let marked = it.marks.get(*mark).copied().flatten()?;
                let value = msg.get(field);
                let value = value.as_deref();
                // Equal as JSON Schema's `const` compares (`1.0` is `1`), as `when` and the TypeScript checker
                // compare (helper 134: serde_json's `==` refused `1.0` for `equals: 1`).
                (!value.is_some_and(|v| json_equal(v, equals)))
                    .then(|| with(Some(closing), &[(field.name(), &text(value))], Some(marked), None))?
            }
        }
    }

    /// Folds an accepted message into the state.
    fn apply(&mut self, m: &Machine, line: usize, msg: &Msg<'_>) {
        let seq = self.next;
        self.next += 1;
        for &i in m.candidates(msg.role, msg.t) {
            if let Kind::Unique { key } = &m.rules[i].kind {
                if let Some(v) = msg.str(key).filter(|_| msg.when(&m.rules[i])) {
                    self.seen[i].insert(v, line, self.accepted + self.rejected);
                }
            }
        }
        let ops = m.ops(msg.t);
        // Closes, in declaration order (what lives within a closed one closes with it).
        for &s in &ops.closes {
            let sc = &m.scopes[s];
            let st = &mut self.scopes[s];
            let closed: Option<Box<[u8]>> =
                if sc.single { st.open.take() } else { msg.str(&sc.key).and_then(|k| st.open.remove(k)) };
            if let Some(k) = closed {
                // What lived within it closes with it, and is remembered as closed like any close (an
                // `open-reused` rule of that scope refuses it again; helper 91).
                for &w in &m.inner[s] {
                    let inner = &mut self.scopes[w];
                    if inner.open.remove(&k).is_some() && m.scopes[w].remember_closed {
                        inner.closed.insert(k.clone(), line);
                    }
                    inner.forget_rejected(&k);
                }
                let st = &mut self.scopes[s];
                st.forget_rejected(&k);
                if sc.remember_closed {
                    st.closed.insert(k, line);
                }
            }
        }
        // Opens.
        for &s in &ops.opens {
            let sc = &m.scopes[s];
            let Some(key) = msg.str(&sc.key) else { continue };
            let at = match sc.within {
                Some(p) => match self.scopes[p].open.get(key) {
                    Some((_, parent)) => parent.seq,
                    None => continue,
                },
                None => seq,
            };
            let mut buf = std::mem::take(&mut self.recording);
            buf.clear();
            for (_, a) in &sc.record {
                match a {
                    AttrSource::Field(f) => Recorded::push(&mut buf, &msg.rec(f)),
                    AttrSource::OpenKey(o) => {
                        let k = self.scopes[*o].the_open().map_or(Rec::Absent, |(k, _)| Rec::Str(k));
                        Recorded::push(&mut buf, &k);
                    }
                }
            }
            let attrs = Recorded(buf.as_slice().into());
            self.recording = buf;
            let st = &mut self.scopes[s];
            if sc.single {
                st.open.take();
            }
            st.forget_rejected(key);
            st.rejected_keyless = None;
            // Opened again while open: the same one in its place, with the new line and recorded values.
            match st.open.remove_entry(key) {
                Some((k, it)) => st.open.insert(k, Item { line, attrs, ..it }),
                None => st.open.insert(key.into(), Item { seq: at, line, attrs, marks: vec![None; sc.marks.len()] }),
            }
        }
        // Marks (only single scopes have them: the open one gets them).
        for &(s, j) in &ops.marks {
            if m.scopes[s].marks[j].role.is_none_or(|r| r == msg.role) {
                if let Some((_, it)) = self.scopes[s].open.one.as_mut() {
                    if let Some(slot) = it.marks.get_mut(j) {
                        slot.get_or_insert(line);
                    }
                }
            }
        }
        // Rollup parts.
        for &p in &ops.parts {
            match (&m.parts[p].kind, &mut self.parts[p]) {
                (PartKind::Last(fields), PartState::Last(last)) => {
                    let buf = last.get_or_insert_with(Vec::new);
                    buf.clear();
                    fields.iter().for_each(|f| Recorded::push(buf, &msg.rec(f)));
                }
                (PartKind::Latest(fields), PartState::Latest(vals)) => {
                    for (f, v) in fields.iter().zip(vals.iter_mut()) {
                        let r = msg.rec(f);
                        if !matches!(r, Rec::Absent) {
                            v.clear();
                            Recorded::push(v, &r);
                        }
                    }
                }
                (PartKind::Count(field, values), PartState::Count(n)) => {
                    if let Some(i) = msg.str(field).and_then(|v| values.iter().position(|x| x.as_bytes() == v)) {
                        n[i] += 1;
                    }
                }
                (PartKind::Sum(field, fields), PartState::Sum(sums)) => msg.add_numbers(field, fields, sums),
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
                (PartKind::Last(fields), PartState::Last(last)) => last.as_ref().map_or(Value::Null, |vals| {
                    Value::Object(fields.iter().zip(recorded(vals)).map(|(f, r)| (f.name.clone(), r.value())).collect())
                }),
                (PartKind::Latest(fields), PartState::Latest(vals)) => Value::Object(
                    fields
                        .iter()
                        .zip(vals)
                        .map(|(f, v)| (f.name.clone(), recorded(v).next().map_or(Value::Null, Rec::value)))
                        .collect(),
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
            let item = |k: &[u8], it: &Item| -> Value {
                let mut o = Map::new();
                o.insert(sc.key.name().to_string(), Value::String(text_of(k).into_owned()));
                for ((a, _), r) in sc.record.iter().zip(recorded(&it.attrs.0)) {
                    o.insert(a.clone(), r.value());
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
