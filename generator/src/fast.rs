//! The fast path: decides whether a line is valid without building a `serde_json::Value`.
//!
//! The model is compiled into an index-based plan ([`FastPlan`]); a hand-written scanner walks the line's bytes
//! once with it. Keys are matched on their raw bytes through a perfect hash built from the model (an escaped key
//! is decoded first); values nobody constrains are skipped without being decoded, with their escapes,
//! control bytes and UTF-8 checked in the same pass that finds the closing quote ([`lex`]); integers are read
//! straight from their digits; a union picks its member from the discriminator when it comes first; the
//! protocol's role rules are bit masks checked at the end of the envelope. Outside strings only ASCII is
//! accepted, so a line the scanner accepts is valid UTF-8 without a separate pass.
//!
//! A capturing scan ([`capture`]) does the same and also records the byte ranges of the values a caller names
//! (the envelope and event properties the sequence rules read, [`crate::stream`]), with the role and the event
//! member it found: stream mode reads them from the one validating pass instead of parsing the line again.
//!
//! It answers only "certainly valid". Anything else (an error, or a shape it does not decide fast: combinators,
//! unique items, `contains`, pattern properties, a discriminator that is not the first key, a repeated key (which
//! the precise path refuses), an escaped discriminator key or undeclared key, an object of more than
//! [`NOTED_KEYS`] undeclared keys, a lone surrogate escape, nesting deeper than [`MAX_DEPTH`]) sends the line to the precise
//! path in [`crate::engine`], which parses it with serde_json and explains it. So the fast path can make
//! validation quicker but never changes a verdict; the conformance test and a fuzz test check that the two agree,
//! and the tests below hold the scanner to serde_json on the edge cases of the JSON grammar.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::engine::MAX_DEPTH;
use crate::ir::*;

mod lex;

/// The model compiled for the fast path.
#[derive(Debug, Clone)]
pub struct FastPlan {
    nodes: Vec<FNode>,
    /// Per node: whether it is a string nobody constrains (the most common value, read without the dispatch).
    plain: Vec<bool>,
    objects: Vec<ObjPlan>,
    unions: Vec<UnionPlan>,
    root: usize,
}

/// One node of the plan.
#[derive(Debug, Clone)]
enum FNode {
    Any,
    Null,
    Bool,
    Str {
        min: Option<u64>,
        max: Option<u64>,
        pattern: Option<String>,
        strict: Option<String>,
    },
    Num(NumberShape),
    Const(Value),
    Enum(Vec<Value>),
    /// A `Const` or `Enum` of strings only: the value's index among them, found like a key.
    Strs(Keys),
    Array {
        prefix: Vec<usize>,
        items: Option<usize>,
        min: Option<u64>,
        max: Option<u64>,
    },
    Obj(usize),
    Union(usize),
    Nullable(usize),
    /// A shape the fast path does not decide: the line goes to the precise path.
    Unsupported,
}

#[derive(Debug, Clone)]
struct ObjPlan {
    names: Keys,
    nodes: Vec<usize>,
    required: u64,
    /// What other keys may be: `None` rejects them, `Some(None)` skips them, `Some(Some(n))` checks them.
    other: Option<Option<usize>>,
    /// The protocol's role rules, when this object is the envelope.
    roles: Option<RolePlan>,
}

#[derive(Debug, Clone)]
struct RolePlan {
    role_field: usize,
    union_field: usize,
    /// Per role: envelope fields that role may not send.
    env_forbidden: Vec<u64>,
    /// Per member of the event union, per role: whether it may send the event, and the event fields it may not send.
    events: Vec<Vec<(bool, u64)>>,
}

#[derive(Debug, Clone)]
struct UnionPlan {
    /// The discriminator key.
    tag: Pat,
    /// The members' tags (strings).
    tags: Keys,
    objects: Vec<usize>,
    /// Per member: the index of the discriminator among the member object's fields.
    tag_fields: Vec<Option<usize>>,
}

/// An object's field names (or a union's tags, or an enum's strings), found from a key's raw bytes by a perfect
/// hash computed from the model: the key's length and first 16 bytes (as two words, see [`lex::short_key`]; the
/// first and last 8 of a longer key) pick one slot, and one comparison of those words confirms it (of the whole
/// name when it is longer than 16 bytes).
#[derive(Debug, Clone)]
struct Keys {
    names: Vec<Box<[u8]>>,
    /// Per field: its first 16 bytes as two words, and its length.
    words: Vec<(u64, u64, usize)>,
    /// Field index per slot (`u8::MAX`: empty); empty when no seed separates the names (then a linear search).
    slots: Vec<u8>,
    seed: u64,
    shift: u32,
    /// Per field: its text as it appears in plain JSON, to check a predicted key in one comparison.
    pats: Vec<Option<Pat>>,
}

/// A name of at most 15 plain bytes with its closing quote (`name"`), as two words and masks: the 16 bytes after
/// an opening quote hold exactly this key when they match (the quote ends it).
#[derive(Debug, Clone, Copy)]
struct Pat {
    /// `name"`, zero-padded.
    text: [u8; 16],
    w0: u64,
    w1: u64,
    m0: u64,
    m1: u64,
    len: usize,
}

impl Pat {
    fn new(name: &str) -> Option<Pat> {
        let plain = name.len() <= 15 && name.bytes().all(|c| (0x20..0x80).contains(&c) && c != b'"' && c != b'\\');
        if !plain {
            return None;
        }
        let mut text = [0u8; 16];
        text[..name.len()].copy_from_slice(name.as_bytes());
        text[name.len()] = b'"';
        let (w0, w1) = lex::key_words(&text);
        let (m0, m1) = lex::key_words(&[0xFF; 16][..=name.len()]);
        Some(Pat { text, w0, w1, m0, m1, len: name.len() })
    }

    /// Whether the key whose opening quote is at `i` is this name: the index past its closing quote.
    #[inline(always)]
    fn at(&self, b: &[u8], i: usize) -> Option<usize> {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let end = i + self.len + 2;
        match lex::words_at(b, i + 1) {
            Some((w0, w1)) => (w0 & self.m0 == self.w0 && w1 & self.m1 == self.w1).then_some(end),
            // Near the end of the line: compare the bytes that are there.
            None => (*b.get(i + 1..end)? == self.text[..=self.len]).then_some(end),
        }
    }
}

impl Keys {
    fn new<'n>(names: impl Iterator<Item = &'n str>) -> Keys {
        let names: Vec<Box<[u8]>> = names.map(|n| n.as_bytes().into()).collect();
        let words = names
            .iter()
            .map(|n| {
                let (w0, w1) = Keys::hash_words(n);
                (w0, w1, n.len())
            })
            .collect();
        let pats = names.iter().map(|n| std::str::from_utf8(n).ok().and_then(Pat::new)).collect();
        let mut keys = Keys { names, words, slots: Vec::new(), seed: 0, shift: 0, pats };
        if keys.names.len() >= usize::from(u8::MAX) {
            return keys;
        }
        for bits in keys.names.len().next_power_of_two().trailing_zeros() + 1..=12 {
            for k in 0..64u64 {
                keys.seed = 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(2 * k + 1);
                keys.shift = 64 - bits;
                let mut slots = vec![u8::MAX; 1 << bits];
                let placed = keys.words.iter().enumerate().all(|(i, &(w0, w1, len))| {
                    let s = &mut slots[keys.slot(len, w0, w1)];
                    let free = *s == u8::MAX;
                    *s = i as u8;
                    free
                });
                if placed {
                    keys.slots = slots;
                    return keys;
                }
            }
        }
        keys
    }

    /// What the hash reads of a name: its first 16 bytes, or its first and last 8 when it is longer.
    fn hash_words(name: &[u8]) -> (u64, u64) {
        match name.split_last_chunk::<8>() {
            Some((_, last)) if name.len() > 16 => (lex::key_words(name).0, u64::from_le_bytes(*last)),
            _ => lex::key_words(name),
        }
    }

    #[inline(always)]
    fn slot(&self, len: usize, w0: u64, w1: u64) -> usize {
        ((w0 ^ w1.rotate_left(29) ^ len as u64).wrapping_mul(self.seed) >> self.shift) as usize
    }

    /// The index of the field whose name is at most 16 bytes long and has these length and words.
    #[inline(always)]
    fn find_short(&self, len: usize, w0: u64, w1: u64) -> Option<usize> {
        if self.slots.is_empty() {
            return self.words.iter().position(|&w| w == (w0, w1, len));
        }
        let i = usize::from(self.slots[self.slot(len, w0, w1)]);
        (self.words.get(i) == Some(&(w0, w1, len))).then_some(i)
    }

    /// The index of the field named `key`.
    #[inline]
    fn find(&self, key: &[u8]) -> Option<usize> {
        let (w0, w1) = Keys::hash_words(key);
        if key.len() <= 16 {
            return self.find_short(key.len(), w0, w1);
        }
        if self.slots.is_empty() {
            return self.names.iter().position(|n| **n == *key);
        }
        let i = usize::from(self.slots[self.slot(key.len(), w0, w1)]);
        (self.names.get(i).is_some_and(|n| **n == *key)).then_some(i)
    }
}

/// Records a captured value's range in its slot.
#[inline(always)]
fn put(out: &mut Captured, slot: u16, start: usize, end: usize) {
    if let Some(s) = out.spans.get_mut(usize::from(slot)) {
        *s = (start as u32, end as u32);
    }
}

fn mask(n: usize, pick: impl Fn(usize) -> bool) -> u64 {
    (0..n).filter(|i| pick(*i)).fold(0, |m, i| m | (1 << i))
}

struct Compiler<'m> {
    model: &'m Model,
    plan: FastPlan,
    by_type: BTreeMap<TypeId, usize>,
    strict_ids: bool,
}

impl FastPlan {
    /// Compiles the plan for one type of the model.
    pub fn new(model: &Model, root: TypeId, strict_ids: bool) -> Option<FastPlan> {
        let mut c = Compiler {
            model,
            plan: FastPlan { nodes: Vec::new(), plain: Vec::new(), objects: Vec::new(), unions: Vec::new(), root: 0 },
            by_type: BTreeMap::new(),
            strict_ids,
        };
        let root = c.ty(root);
        c.plan.root = root;
        c.plan.plain = c
            .plan
            .nodes
            .iter()
            .map(|n| matches!(n, FNode::Str { min: None, max: None, pattern: None, strict: None }))
            .collect();
        Some(c.plan)
    }
}

impl Compiler<'_> {
    fn push(&mut self, n: FNode) -> usize {
        self.plan.nodes.push(n);
        self.plan.nodes.len() - 1
    }

    fn ty(&mut self, id: TypeId) -> usize {
        if let Some(&i) = self.by_type.get(&id) {
            return i;
        }
        // Reserve the slot first so a recursive type refers to itself.
        let slot = self.push(FNode::Unsupported);
        self.by_type.insert(id, slot);
        let node = self.node_of_type(id);
        self.plan.nodes[slot] = node;
        slot
    }

    fn node_of_type(&mut self, id: TypeId) -> FNode {
        let t = self.model.ty(id);
        match &t.node.shape {
            Shape::Object(o) => match self.object(id, o) {
                Some(i) => FNode::Obj(i),
                None => FNode::Unsupported,
            },
            other => self.shape(other),
        }
    }

    fn node(&mut self, n: &Node) -> usize {
        if let Shape::Ref(id) = n.shape {
            return self.ty(id);
        }
        let f = self.shape(&n.shape);
        self.push(f)
    }

    fn shape(&mut self, s: &Shape) -> FNode {
        match s {
            Shape::Any => FNode::Any,
            Shape::Null => FNode::Null,
            Shape::Boolean => FNode::Bool,
            Shape::String(st) => FNode::Str {
                min: st.min_length,
                max: st.max_length,
                pattern: st.pattern.as_ref().map(|p| p.source.clone()),
                strict: st.strict_pattern.as_ref().filter(|_| self.strict_ids).map(|p| p.source.clone()),
            },
            Shape::Number(n) => FNode::Num(n.clone()),
            Shape::Const(Value::String(v)) => FNode::Strs(Keys::new(std::iter::once(v.as_str()))),
            Shape::Enum(vs) if vs.len() < 255 && vs.iter().all(Value::is_string) => {
                FNode::Strs(Keys::new(vs.iter().filter_map(Value::as_str)))
            }
            Shape::Const(v) if !v.is_array() && !v.is_object() => FNode::Const(v.clone()),
            Shape::Enum(vs) if vs.iter().all(|v| !v.is_array() && !v.is_object()) => FNode::Enum(vs.clone()),
            Shape::Array(a) if !a.unique && a.contains.is_none() => {
                let prefix = a.prefix.iter().map(|n| self.node(n)).collect();
                let items = a.items.as_ref().map(|n| self.node(n));
                FNode::Array { prefix, items, min: a.min_items, max: a.max_items }
            }
            Shape::Union(u) => {
                if u.members.len() >= 255 || !u.members.iter().all(|m| m.tag.is_string()) {
                    return FNode::Unsupported;
                }
                let Some(tag) = Pat::new(&u.discriminator) else { return FNode::Unsupported };
                let mut objects = Vec::new();
                for m in &u.members {
                    let n = self.ty(m.ty);
                    match self.plan.nodes[n] {
                        FNode::Obj(o) => objects.push(o),
                        _ => return FNode::Unsupported,
                    }
                }
                let tags = Keys::new(u.members.iter().filter_map(|m| m.tag.as_str()));
                let tag_fields =
                    objects.iter().map(|&o| self.plan.objects[o].names.find(u.discriminator.as_bytes())).collect();
                self.plan.unions.push(UnionPlan { tag, tags, objects, tag_fields });
                FNode::Union(self.plan.unions.len() - 1)
            }
            Shape::Nullable(inner) => FNode::Nullable(self.node(inner)),
            Shape::Ref(id) => {
                let i = self.ty(*id);
                self.plan.nodes[i].clone()
            }
            _ => FNode::Unsupported,
        }
    }

    fn object(&mut self, id: TypeId, o: &ObjectShape) -> Option<usize> {
        let plain = o.fields.len() <= 64
            && o.required_only.is_empty()
            && o.pattern_properties.is_empty()
            && o.property_names.is_none()
            && o.min_properties.is_none()
            && o.max_properties.is_none()
            && o.dependent_required.is_empty();
        if !plain {
            return None;
        }
        let idx = self.plan.objects.len();
        self.plan.objects.push(ObjPlan {
            names: Keys::new(o.fields.iter().map(|f| f.name.as_str())),
            nodes: Vec::new(),
            required: mask(o.fields.len(), |i| o.fields[i].required),
            other: None,
            roles: None,
        });
        let nodes: Vec<usize> = o.fields.iter().map(|f| self.node(&f.node)).collect();
        let other = match &o.additional {
            Additional::Closed => None,
            Additional::Open | Additional::Strip => Some(None),
            Additional::Schema(n) => Some(Some(self.node(n))),
        };
        let roles = self.roles(id, o);
        let p = &mut self.plan.objects[idx];
        p.nodes = nodes;
        p.other = other;
        p.roles = roles;
        Some(idx)
    }

    fn roles(&mut self, id: TypeId, o: &ObjectShape) -> Option<RolePlan> {
        let p = self.model.protocol.as_ref().filter(|p| p.envelope == id)?;
        let role_field = o.fields.iter().position(|f| f.name == p.role_field)?;
        let union_field = o.fields.iter().position(|f| f.name == p.union_field)?;
        let env_forbidden = p
            .roles
            .iter()
            .map(|r| {
                mask(o.fields.len(), |i| {
                    p.envelope_field_roles.iter().any(|(n, allowed)| *n == o.fields[i].name && !allowed.contains(r))
                })
            })
            .collect();
        let events = p
            .events
            .iter()
            .map(|e| {
                let fields: Vec<String> = match &self.model.ty(e.ty).node.shape {
                    Shape::Object(eo) => eo.fields.iter().map(|f| f.name.clone()).collect(),
                    _ => Vec::new(),
                };
                p.roles
                    .iter()
                    .map(|r| {
                        let forbidden = mask(fields.len(), |i| {
                            e.field_roles.iter().any(|(n, allowed)| *n == fields[i] && !allowed.contains(r))
                        });
                        (e.roles.contains(r), forbidden)
                    })
                    .collect()
            })
            .collect();
        Some(RolePlan { role_field, union_field, env_forbidden, events })
    }
}

/// The fast verdict: `true` only when the line is certainly valid. `pattern(source, value)` matches a string
/// against one of the model's patterns.
pub fn is_valid(plan: &FastPlan, pattern: &dyn Fn(&str, &str) -> bool, line: &[u8]) -> bool {
    Scan::new(plan, pattern, line, None).all()
}

/// A slot number that takes no value.
const NO_SLOT: u16 = u16::MAX;

/// Which values of an envelope a capturing scan ([`capture`]) records, and where: the plan for a list of
/// envelope and event properties (a caller's slots), made with [`FastPlan::capture_plan`].
#[derive(Debug, Clone)]
pub struct CapturePlan {
    /// Per field of the envelope: the slot of its value; and whether an unknown key sends the line to the
    /// precise path (it may be a property read that the envelope does not declare).
    env: (Vec<u16>, bool),
    /// The same per member of the event union.
    ev: Vec<(Vec<u16>, bool)>,
    slots: usize,
    /// The role property's values, by the index a scan reports ([`Captured::role`]).
    pub roles: Vec<String>,
    /// The event union's tags, by member ([`Captured::member`]).
    pub tags: Vec<String>,
}

/// What a capturing scan found in a line it accepted: per slot, the byte range of that value (`(0, 0)` when the
/// line does not hold it), the role's index and the event's member.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    pub spans: Vec<(u32, u32)>,
    pub role: Option<usize>,
    pub member: Option<usize>,
}

impl FastPlan {
    /// The capture plan for `reads` (per slot: an envelope property?, its name), when the root is an envelope the
    /// scanner decides with its event union. Where an object may hold unknown keys but does not declare every
    /// property read, a line with an unknown key there goes to the precise path (the key may be one read).
    pub fn capture_plan(&self, reads: &[(bool, String)]) -> Option<CapturePlan> {
        let FNode::Obj(env) = self.nodes[self.root] else { return None };
        let eo = &self.objects[env];
        let r = eo.roles.as_ref()?;
        let FNode::Union(u) = self.nodes[eo.nodes[r.union_field]] else { return None };
        let up = &self.unions[u];
        if reads.len() >= usize::from(NO_SLOT) {
            return None;
        }
        let slots_of = |op: &ObjPlan, envelope: bool| -> (Vec<u16>, bool) {
            let mut slots = vec![NO_SLOT; op.nodes.len()];
            let mut unknown = false;
            for (k, (_, name)) in reads.iter().enumerate().filter(|(_, (e, _))| *e == envelope) {
                match op.names.find(name.as_bytes()) {
                    Some(i) => slots[i] = k as u16,
                    None => unknown |= op.other.is_some(),
                }
            }
            (slots, unknown)
        };
        let text = |k: &Keys| k.names.iter().map(|n| String::from_utf8_lossy(n).into_owned()).collect();
        let roles = match &self.nodes[eo.nodes[r.role_field]] {
            FNode::Strs(k) => text(k),
            FNode::Const(v) => vec![v.as_str().unwrap_or_default().to_string()],
            FNode::Enum(vs) => vs.iter().map(|v| v.as_str().unwrap_or_default().to_string()).collect(),
            _ => return None,
        };
        Some(CapturePlan {
            env: slots_of(eo, true),
            ev: up.objects.iter().map(|&o| slots_of(&self.objects[o], false)).collect(),
            slots: reads.len(),
            roles,
            tags: text(&up.tags),
        })
    }
}

/// [`is_valid`], recording in `out` where the values `cap` asks for are when the line is certainly valid.
pub fn capture(
    plan: &FastPlan,
    pattern: &dyn Fn(&str, &str) -> bool,
    line: &[u8],
    cap: &CapturePlan,
    out: &mut Captured,
) -> bool {
    if u32::try_from(line.len()).is_err() {
        return false;
    }
    out.spans.clear();
    out.spans.resize(cap.slots, (0, 0));
    out.role = None;
    out.member = None;
    Scan::new(plan, pattern, line, Some((cap, out))).all()
}

/// What a union member reports to the envelope around it: which member, and which of its fields were present.
#[derive(Default)]
struct Seen {
    member: Option<usize>,
    present: u64,
    /// The index of a matched string among the node's enum values (the role).
    index: Option<usize>,
}

/// The scanner over one line. Every method returns `None` for "not certainly valid" (the precise path decides),
/// and on success leaves `i` just past the value it read.
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
    /// Open arrays and objects around `i`.
    depth: usize,
    plan: &'a FastPlan,
    pattern: &'a dyn Fn(&str, &str) -> bool,
    /// Scratch space for a constrained string that holds escapes.
    buf: Vec<u8>,
    /// A capturing scan's plan and findings.
    cap: Option<(&'a CapturePlan, &'a mut Captured)>,
    /// Set while the envelope's event union is entered by a capturing scan.
    event: bool,
    /// The depth at which an unknown key ends the scan (in a capturing scan, an object that may hide a value read
    /// under a key it does not declare); 0 for none.
    unknown_stops: usize,
    /// The ranges of the keys read so far that no plan declares, in the objects open around `i` (innermost last;
    /// each object notes where its own start), but for each object's last key, which its reader holds
    /// ([`Members`]): a key is compared with its object's ([`Scan::note_key`]). The first [`INLINE_KEYS`] are held
    /// in the scan itself, so most lines allocate nothing for them, and a chain of objects of one key each notes
    /// none; the rest in `spilled`.
    keys: [(u32, u32); INLINE_KEYS],
    spilled: Vec<(u32, u32)>,
    /// How many keys are noted (in `keys`, then `spilled`).
    noted: usize,
    /// The raw range of the last string [`Scan::str_index`] did not find, and whether it holds escapes.
    other: (usize, usize, bool),
}

/// How many noted keys a scan holds without allocating.
const INLINE_KEYS: usize = 4;

/// The most undeclared keys one object may have on the fast path (more go to the precise path, which indexes
/// them): past a few, a key's bit ([`key_bit`]) is mostly set already, and each is compared with the others.
const NOTED_KEYS: usize = 64;

/// The undeclared keys of one object being read: where its noted ones start in [`Scan::keys`], their bits
/// ([`key_bit`]), and its last key.
#[derive(Clone, Copy)]
struct Members {
    mark: usize,
    bits: u64,
    last: Option<(u32, u32)>,
}

/// A key's bit in its object's 64-bit summary of the keys it has (from its length and its first and last bytes):
/// only a key whose bit is set already is compared with the others.
#[inline(always)]
fn key_bit(key: &[u8]) -> u64 {
    let (first, last) = (key.first().copied().unwrap_or(0), key.last().copied().unwrap_or(0));
    let mix = (key.len() as u32).wrapping_mul(31) ^ u32::from(first).wrapping_mul(7) ^ u32::from(last);
    1 << (mix % 64)
}

impl<'a> Scan<'a> {
    fn new(
        plan: &'a FastPlan,
        pattern: &'a dyn Fn(&str, &str) -> bool,
        b: &'a [u8],
        cap: Option<(&'a CapturePlan, &'a mut Captured)>,
    ) -> Self {
        Scan {
            b,
            i: lex::ws(b, 0),
            depth: 0,
            plan,
            pattern,
            buf: Vec::new(),
            cap,
            event: false,
            unknown_stops: 0,
            keys: [(0, 0); INLINE_KEYS],
            spilled: Vec::new(),
            noted: 0,
            other: (0, 0, false),
        }
    }

    /// Whether the whole line is one value the plan's root certainly accepts.
    fn all(mut self) -> bool {
        self.value(self.plan.root, None).is_some() && lex::ws(self.b, self.i) == self.b.len()
    }

    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    #[inline(always)]
    fn ws(&mut self) {
        self.i = lex::ws(self.b, self.i);
    }

    /// Consumes `c` after optional whitespace.
    #[inline(always)]
    fn expect(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// Consumes the keyword `word` (`true`, `false`, `null`).
    #[inline]
    fn word(&mut self, word: &[u8]) -> Option<()> {
        self.b.get(self.i..)?.starts_with(word).then(|| self.i += word.len())
    }

    /// Enters an array or object at `i` (its bracket), within serde_json's nesting limit.
    #[inline(always)]
    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        self.i += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// A string at `i`: its raw content's range, and whether it holds escapes.
    #[inline(always)]
    fn string(&mut self) -> Option<(usize, usize, bool)> {
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.i;
        let (end, escaped) = lex::string(self.b, start)?;
        self.i = end;
        Some((start + 1, end - 1, escaped))
    }

    /// A reader of the undeclared keys of an object from here.
    #[inline(always)]
    fn members_from_here(&self) -> Members {
        Members { mark: self.noted, bits: 0, last: None }
    }

    /// Notes the key whose raw content is `b[s..e]` among the undeclared keys of object `m`. `None` (the precise
    /// path decides) when the object has that key already, which every checker refuses, and when the key is
    /// escaped (its decoded text is what may repeat) or the object has [`NOTED_KEYS`]: a repeated declared key is
    /// found by the object's bit set.
    #[inline(always)]
    fn note_key(&mut self, m: &mut Members, (s, e, escaped): (usize, usize, bool)) -> Option<()> {
        let key = &self.b[s..e];
        let bit = key_bit(key);
        if escaped || (m.bits & bit != 0 && self.has_key(m, key)) || self.noted - m.mark == NOTED_KEYS {
            return None;
        }
        m.bits |= bit;
        // A line is at most `validate::MAX_LINE` (64 MiB) long: its offsets fit 32 bits.
        if let Some(last) = m.last.replace((s as u32, e as u32)) {
            match self.keys.get_mut(self.noted) {
                Some(slot) => *slot = last,
                None => self.spilled.push(last),
            }
            self.noted += 1;
        }
        Some(())
    }

    /// Whether object `m` has `key` among its undeclared keys (the rare case: their bits say it may).
    #[cold]
    fn has_key(&self, m: &Members, key: &[u8]) -> bool {
        let same = |&(p, q): &(u32, u32)| &self.b[p as usize..q as usize] == key;
        let noted = self.keys.iter().chain(&self.spilled).take(self.noted).skip(m.mark);
        m.last.as_ref().is_some_and(same) || noted.clone().any(same)
    }

    /// Drops the noted keys of object `m`, which is read.
    #[inline(always)]
    fn members_read(&mut self, m: Members) {
        self.noted = m.mark;
        self.spilled.truncate(m.mark.saturating_sub(INLINE_KEYS));
    }

    /// A string's content decoded: the raw bytes when it has no escape, else decoded into the scratch buffer.
    fn text(&mut self) -> Option<&[u8]> {
        let (s, e, escaped) = self.string()?;
        if !escaped {
            return Some(&self.b[s..e]);
        }
        lex::decode(&self.b[s..e], &mut self.buf)?;
        Some(&self.buf)
    }

    /// One value at `i` (no whitespace before it) against plan node `node`.
    fn value(&mut self, node: usize, out: Option<&mut Seen>) -> Option<()> {
        let plan: &'a FastPlan = self.plan;
        let c = self.peek()?;
        if c == b'"' && plan.plain[node] {
            return self.string().map(drop);
        }
        match &plan.nodes[node] {
            FNode::Any => self.skip(),
            FNode::Nullable(inner) => match c {
                b'n' => self.word(b"null"),
                _ => self.value(*inner, out),
            },
            FNode::Null => self.word(b"null"),
            FNode::Bool => match c {
                b't' => self.word(b"true"),
                _ => self.word(b"false"),
            },
            // A string nobody constrains was read above (`plain`): this one has a bound or a pattern.
            FNode::Str { min, max, pattern, strict } if c == b'"' => {
                let pat = self.pattern;
                let v = self.text()?;
                if min.is_some() || max.is_some() {
                    // Byte length bounds the character count from above: count characters only when it matters.
                    let bytes = v.len() as u64;
                    let chars = || v.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64;
                    if min.is_some_and(|m| bytes < m || (bytes / 4 < m && chars() < m)) {
                        return None;
                    }
                    if max.is_some_and(|m| bytes > m && chars() > m) {
                        return None;
                    }
                }
                if pattern.is_some() || strict.is_some() {
                    let v = std::str::from_utf8(v).ok()?;
                    if !pattern.iter().chain(strict.iter()).all(|p| pat(p, v)) {
                        return None;
                    }
                }
                Some(())
            }
            FNode::Num(s) if c == b'-' || c.is_ascii_digit() => {
                let (end, v, whole) = lex::number(self.b, self.i)?;
                self.i = end;
                let ok = (!s.integer || whole || v.fract() == 0.0)
                    && s.minimum.is_none_or(|m| v >= m)
                    && s.exclusive_minimum.is_none_or(|m| v > m)
                    && s.maximum.is_none_or(|m| v <= m)
                    && s.exclusive_maximum.is_none_or(|m| v < m)
                    && s.multiple_of.is_none_or(|m| crate::engine::is_multiple(v, m));
                ok.then_some(())
            }
            FNode::Strs(keys) => {
                let i = self.str_index(keys)??;
                if let Some(out) = out {
                    out.index = Some(i);
                }
                Some(())
            }
            FNode::Const(v) => self.one_of(std::slice::from_ref(v), out),
            FNode::Enum(vs) => self.one_of(vs, out),
            FNode::Array { prefix, items, min, max } if c == b'[' => {
                let n = self.elements(|s, n| match prefix.get(n as usize).or(items.as_ref()) {
                    Some(&node) => s.value(node, None),
                    None => s.skip(),
                })?;
                (!min.is_some_and(|m| n < m) && !max.is_some_and(|m| n > m)).then_some(())
            }
            FNode::Obj(o) if c == b'{' => {
                self.enter()?;
                self.object(*o, out)?;
                self.depth -= 1;
                Some(())
            }
            FNode::Union(u) if c == b'{' => {
                self.enter()?;
                self.union(*u, out)?;
                self.depth -= 1;
                Some(())
            }
            _ => None,
        }
    }

    /// A scalar that must equal one of `values` (JSON equality: numbers by value); reports the string's index.
    fn one_of(&mut self, values: &[Value], out: Option<&mut Seen>) -> Option<()> {
        let found = match self.peek()? {
            b'"' => {
                let v = self.text()?;
                values.iter().position(|c| c.as_str().is_some_and(|c| c.as_bytes() == v))
            }
            b'n' => self.word(b"null").and_then(|()| values.iter().position(Value::is_null)),
            b't' => self.word(b"true").and_then(|()| values.iter().position(|c| c.as_bool() == Some(true))),
            b'f' => self.word(b"false").and_then(|()| values.iter().position(|c| c.as_bool() == Some(false))),
            c if c == b'-' || c.is_ascii_digit() => {
                let (end, v, _) = lex::number(self.b, self.i)?;
                self.i = end;
                values.iter().position(|c| c.as_f64() == Some(v))
            }
            _ => None,
        }?;
        if let Some(out) = out {
            out.index = Some(found);
        }
        Some(())
    }

    /// A string at `i` looked up in `names`: `Some(Some(index))`, or `Some(None)` for a string that is not
    /// among them (its raw range is then [`Scan::other`]). An escaped string is decoded first.
    #[inline(always)]
    fn str_index(&mut self, names: &Keys) -> Option<Option<usize>> {
        if let Some((len, w0, w1)) = lex::short_key(self.b, self.i) {
            let start = self.i + 1;
            self.i += len + 2;
            let found = names.find_short(len, w0, w1);
            if found.is_none() {
                self.other = (start, start + len, false);
            }
            return Some(found);
        }
        let (s, e, escaped) = self.string()?;
        let found = if escaped {
            lex::decode(&self.b[s..e], &mut self.buf)?;
            names.find(&self.buf)
        } else {
            names.find(&self.b[s..e])
        };
        if found.is_none() {
            self.other = (s, e, escaped);
        }
        Some(found)
    }

    /// A key at `i` (after whitespace) and its colon: the index of the field it names in `names` (`Some(None)`
    /// for another key). `expect` is the field a producer that follows the schema's order sends next: it is
    /// checked first, in one comparison.
    #[inline(always)]
    fn key(&mut self, names: &Keys, expect: usize) -> Option<Option<usize>> {
        let found = match names.pats.get(expect).copied().flatten().and_then(|p| p.at(self.b, self.i)) {
            Some(end) => {
                self.i = end;
                Some(expect)
            }
            None => self.str_index(names)?,
        };
        self.colon()?;
        Some(found)
    }

    /// The colon after a key, and the whitespace after it.
    #[inline(always)]
    fn colon(&mut self) -> Option<()> {
        if self.peek() == Some(b':') {
            self.i += 1;
        } else {
            self.expect(b':')?;
        }
        self.ws();
        Some(())
    }

    /// After a member's value: `Some(true)` past a comma (and the whitespace after it), `Some(false)` past the
    /// closing brace.
    /// After an object member: `Some(true)` past a comma and the whitespace after it, `Some(false)` past the
    /// closing brace.
    #[inline(always)]
    fn next_member(&mut self) -> Option<bool> {
        self.next_in(b'}')
    }

    /// After a member or element: `Some(true)` past a comma and the whitespace after it, `Some(false)` past
    /// `close`.
    #[inline(always)]
    fn next_in(&mut self, close: u8) -> Option<bool> {
        self.ws();
        let c = self.peek()?;
        self.i += 1;
        match c {
            b',' => {
                self.ws();
                Some(true)
            }
            _ if c == close => Some(false),
            _ => None,
        }
    }

    /// An array at `i` (its bracket), each element read by `each` (given its index): how many there were.
    #[inline(always)]
    fn elements(&mut self, mut each: impl FnMut(&mut Self, u64) -> Option<()>) -> Option<u64> {
        self.enter()?;
        self.ws();
        let mut n = 0u64;
        if self.peek()? == b']' {
            self.i += 1;
        } else {
            loop {
                each(self, n)?;
                n += 1;
                if !self.next_in(b']')? {
                    break;
                }
            }
        }
        self.depth -= 1;
        Some(n)
    }

    /// The members of object `o` from just past `{`, then its required fields and (for the envelope) role rules.
    fn object(&mut self, o: usize, out: Option<&mut Seen>) -> Option<()> {
        let plan: &'a FastPlan = self.plan;
        let op = &plan.objects[o];
        let mut role = None;
        let mut event = Seen::default();
        if self.depth == 1 && op.roles.is_some() {
            if let Some((cap, _)) = &self.cap {
                self.unknown_stops = if cap.env.1 { 1 } else { 0 };
            }
        }
        self.ws();
        let present = if self.peek()? == b'}' {
            self.i += 1;
            0
        } else {
            self.members(op, 0, |s, i, node| {
                let start = s.i;
                match &op.roles {
                    Some(r) if i == r.role_field => {
                        let mut seen = Seen::default();
                        s.value(node, Some(&mut seen))?;
                        role = seen.index;
                    }
                    Some(r) if i == r.union_field => {
                        s.event = s.cap.is_some() && s.depth == 1;
                        s.value(node, Some(&mut event))?;
                        s.event = false;
                    }
                    _ => s.value(node, None)?,
                }
                if s.depth == 1 && op.roles.is_some() {
                    if let Some((cap, out)) = &mut s.cap {
                        put(out, cap.env.0[i], start, s.i);
                    }
                }
                Some(())
            })?
        };
        if present & op.required != op.required {
            return None;
        }
        if let Some(r) = &op.roles {
            let (role, member) = (role?, event.member?);
            let (allowed, forbidden) = r.events[member][role];
            if !allowed || present & r.env_forbidden[role] != 0 || event.present & forbidden != 0 {
                return None;
            }
            if let Some((_, out)) = self.cap.as_mut().filter(|_| self.depth == 1) {
                out.role = Some(role);
                out.member = Some(member);
            }
        }
        if let Some(out) = out {
            out.present = present;
        }
        Some(())
    }

    /// Reads members up to and past the closing brace, from the first key (`i` at its quote). `field(scan, index,
    /// node)` reads a declared field's value; other keys follow the object's rule for them. Returns the fields
    /// present (a duplicate declared key is refused).
    #[inline(always)]
    fn members(
        &mut self,
        op: &'a ObjPlan,
        mut present: u64,
        mut field: impl FnMut(&mut Self, usize, usize) -> Option<()>,
    ) -> Option<u64> {
        let mut expect = (present.trailing_ones() as usize).min(64);
        let mut undeclared = self.members_from_here();
        loop {
            match self.key(&op.names, expect)? {
                Some(i) => {
                    expect = i + 1;
                    let bit = 1u64 << i;
                    if present & bit != 0 {
                        return None;
                    }
                    present |= bit;
                    field(self, i, op.nodes[i])?;
                }
                None if self.unknown_stops == self.depth => return None,
                None => {
                    let other = op.other?;
                    self.note_key(&mut undeclared, self.other)?;
                    match other {
                        None => self.skip()?,
                        Some(n) => self.value(n, None)?,
                    }
                }
            }
            if !self.next_member()? {
                self.members_read(undeclared);
                return Some(present);
            }
        }
    }

    /// A union from just past `{`: the discriminator must be the first key (else the precise path decides).
    fn union(&mut self, u: usize, out: Option<&mut Seen>) -> Option<()> {
        let plan: &'a FastPlan = self.plan;
        let up = &plan.unions[u];
        self.ws();
        self.i = up.tag.at(self.b, self.i)?;
        self.colon()?;
        let start = self.i;
        let member = self.str_index(&up.tags)??;
        let op = &plan.objects[up.objects[member]];
        let tag_field = up.tag_fields[member]?;
        let present = 1u64 << tag_field;
        // The envelope's event, in a capturing scan: its members' values are recorded.
        let outer_stops = self.unknown_stops;
        let slots = match (std::mem::take(&mut self.event), &mut self.cap) {
            (true, Some((cap, out))) => {
                let (slots, unknown): &'a (Vec<u16>, bool) = &cap.ev[member];
                put(out, slots[tag_field], start, self.i);
                self.unknown_stops = if *unknown { self.depth } else { 0 };
                Some(slots.as_slice())
            }
            _ => None,
        };
        let present = if !self.next_member()? {
            present
        } else if let Some(slots) = slots {
            self.members(op, present, |s, i, node| {
                let start = s.i;
                s.value(node, None)?;
                if let Some((_, out)) = &mut s.cap {
                    put(out, slots[i], start, s.i);
                }
                Some(())
            })?
        } else {
            self.members(op, present, |s, _, node| s.value(node, None))?
        };
        self.unknown_stops = outer_stops;
        if present & op.required != op.required || op.roles.is_some() {
            return None;
        }
        if let Some(out) = out {
            out.member = Some(member);
            out.present = present;
        }
        Some(())
    }

    /// Any JSON value at `i`, checked as serde_json would parse it but not looked into.
    fn skip(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => {
                self.enter()?;
                self.ws();
                if self.peek()? == b'}' {
                    self.i += 1;
                } else {
                    let mut keys = self.members_from_here();
                    loop {
                        let key = self.string()?;
                        self.note_key(&mut keys, key)?;
                        self.expect(b':')?;
                        self.ws();
                        self.skip()?;
                        if !self.next_member()? {
                            break;
                        }
                    }
                    self.members_read(keys);
                }
                self.depth -= 1;
                Some(())
            }
            b'[' => self.elements(|s, _| s.skip()).map(drop),
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            _ => {
                self.i = lex::skip_number(self.b, self.i)?;
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{lex, Keys, Pat};
    use crate::engine::{Engine, EngineOptions};

    #[test]
    fn keys_find_exactly_their_names() {
        let names = [
            "",
            "t",
            "id",
            "ev",
            "time",
            "turn",
            "role",
            "description",
            "descriptiom",
            "fifteen_bytes_x",
            "sixteen_bytes_xy",
            "seventeen_bytes_x",
            "a_name_longer_than_sixteen_bytes_1",
            "a_name_longer_than_sixteen_bytes_2",
            "é→",
        ];
        let keys = Keys::new(names.iter().copied());
        assert!(!keys.slots.is_empty(), "a perfect hash separates these names");
        for (i, n) in names.iter().enumerate() {
            assert_eq!(keys.find(n.as_bytes()), Some(i), "{n}");
            // As a key in a line, read through the short-key load when it fits.
            let line = format!("\"{n}\":1,\"padding after the key\":2");
            let b = line.as_bytes();
            if let Some((len, w0, w1)) = lex::short_key(b, 0) {
                assert_eq!(keys.find_short(len, w0, w1), Some(i), "{n}");
            }
            if let Some(p) = Pat::new(n) {
                assert_eq!(p.at(b, 0), Some(n.len() + 2), "{n}");
                assert_eq!(p.at(format!("\"{n}\"").as_bytes(), 0), Some(n.len() + 2), "{n} at the end");
                assert_eq!(p.at(format!("\"{n}x\":1,\"padding after the key\"").as_bytes(), 0), None, "{n}x");
            }
        }
        for other in ["x", "i", "idd", "descriptio", "description_", "a_name_longer_than_sixteen_bytes_3", "Time"] {
            assert_eq!(keys.find(other.as_bytes()), None, "{other}");
        }
        assert!(Pat::new("sixteen_bytes_xy").is_none() && Pat::new("a\"b").is_none() && Pat::new("é").is_none());
    }

    fn engine() -> Engine {
        let schema = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema");
        Engine::new(crate::load::load(&schema).expect("schema"), EngineOptions::default()).expect("root")
    }

    /// An envelope with `time` and the event's fields spliced in as raw JSON text.
    fn env(time: &str, ev: &str) -> Vec<u8> {
        format!(r#"{{"id":"m1","time":{time},"role":"agent","turn":"t1","ev":{{"t":"tool-call-start","call":"c1","name":"grep","title":"T","description":"D","args":{ev}}}}}"#)
            .into_bytes()
    }

    fn text(t: &str) -> Vec<u8> {
        format!(r#"{{"id":"m1","time":1,"role":"agent","turn":"t1","ev":{{"t":"text","text":"{t}"}}}}"#).into_bytes()
    }

    /// (fast verdict, precise verdict) for each line; the fast one never says valid when the precise one does not.
    #[track_caller]
    fn check(e: &Engine, line: &[u8], fast: bool, precise: bool) {
        let shown = String::from_utf8_lossy(line);
        let got = (e.is_valid_fast(line), e.check_line(line).1.is_empty());
        assert!(!got.0 || got.1, "fast path accepted an invalid line: {shown}");
        assert_eq!(got, (fast, precise), "(fast, precise) for {shown}");
    }

    #[test]
    fn plain_lines_take_the_fast_path() {
        let e = engine();
        check(&e, &env("1", "{}"), true, true);
        check(&e, &env("1", r#"{"a":[1,-2.5e3,true,false,null,{"b":"c"}],"d":{}}"#), true, true);
        check(&e, b" \t{\"id\":\"m1\",\"time\":0,\"role\":\"user\",\"ev\":{\"t\":\"abort\"}} \r", true, true);
        check(&e, br#"{ "id" : "m1" , "time" : 0 , "role" : "user" , "ev" : { "t" : "abort" } }"#, true, true);
    }

    #[test]
    fn escapes_in_keys_and_values() {
        let e = engine();
        // An escaped key is decoded before it is looked up.
        check(&e, br#"{"i\u0064":"m1","time":1,"role":"user","ev":{"t":"abort"}}"#, true, true);
        check(&e, br#"{"id":"m1","i\u0064":"m2","time":1,"role":"user","ev":{"t":"abort"}}"#, false, false);
        check(&e, br#"{"i\u0064":"m1","time":1,"role":"user","ev":{"t":"abort"},"\u0078":1}"#, false, false);
        // An escaped discriminator key is left to the precise path.
        check(&e, br#"{"id":"m1","time":1,"role":"user","ev":{"\u0074":"abort"}}"#, false, true);
        // An escaped undeclared key too (it is compared with the others decoded).
        check(&e, &env("1", r#"{"k\"ey\u00e9":"v"}"#), false, true);
        check(&e, &text(r#"line\nbreak \"quoted\" \\ \/ \b\f\r\t \u00e9\u2192 \ud83d\ude00"#), true, true);
        // Constrained strings are decoded: `\u0061` is one character, `\u0000` too.
        check(&e, br#"{"id":"\u0061","time":1,"role":"user","ev":{"t":"abort"}}"#, true, true);
        check(&e, br#"{"id":"\u0000","time":1,"role":"user","ev":{"t":"abort"}}"#, true, true);
        check(&e, br#"{"id":"","time":1,"role":"user","ev":{"t":"abort"}}"#, false, false);
        // The role enum and the discriminator compare decoded text.
        check(&e, br#"{"id":"m1","time":1,"role":"\u0075ser","ev":{"t":"ab\u006frt"}}"#, true, true);
        check(&e, br#"{"id":"m1","time":1,"role":"user","ev":{"t":"abort\u0000"}}"#, false, false);
        check(&e, &text(r#"bad \x escape"#), false, false);
        check(&e, &text(r#"short \u12"#), false, false);
    }

    #[test]
    fn control_bytes_and_surrogates() {
        let e = engine();
        check(&e, &text("raw\ttab"), false, false);
        check(&e, &text("raw\u{1}byte"), false, false);
        check(&e, &text("del\u{7f} is allowed"), true, true);
        // serde_json refuses lone surrogate escapes when it builds a string, and so does the precise path.
        check(&e, &text(r#"\ud800"#), false, false);
        check(&e, &text(r#"\udc00"#), false, false);
        check(&e, &text(r#"\ud800\u0041"#), false, false);
        check(&e, &env("1", r#"{"k":"\ud800"}"#), false, false);
        check(&e, &env("1", r#"{"\udfff":1}"#), false, false);
    }

    #[test]
    fn invalid_utf8_and_bom() {
        let e = engine();
        let mut line = text("caf");
        let at = line.len() - 4;
        for bad in [&b"\xff"[..], b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf"] {
            let mut l = line.clone();
            l.splice(at..at, bad.iter().copied());
            check(&e, &l, false, false);
        }
        line.splice(at..at, "é→😀".bytes());
        check(&e, &line, true, true);
        let mut bom = "\u{feff}".as_bytes().to_vec();
        bom.extend_from_slice(&text("x"));
        check(&e, &bom, false, false);
        let mut outside = text("x");
        outside.insert(1, 0xC3);
        check(&e, &outside, false, false);
    }

    #[test]
    fn numbers() {
        let e = engine();
        for (time, valid) in [
            ("0", true),
            ("-0", true),
            ("1.0", true),
            ("1e2", true),
            ("1E+2", true),
            ("100e-2", true),
            ("-0.0", true),
            ("9007199254740991", true),
            ("9007199254740992", false),
            ("9007199254740993", false),
            ("18446744073709551616", false),
            ("1.5", false),
            ("-1", false),
            ("1e400", false),
            ("01", false),
            ("1.", false),
            ("-", false),
            ("\"1\"", false),
        ] {
            check(&e, &env(time, "{}"), valid, valid);
        }
        // In a value nobody constrains, any number serde_json can hold; not one out of `f64` range.
        check(
            &e,
            &env("1", r#"{"n":[0,-0,1.0,1e2,-1.5E-7,9007199254740993,123456789012345678901234567890]}"#),
            true,
            true,
        );
        check(&e, &env("1", r#"{"n":1e400}"#), false, false);
        check(&e, &env("1", &format!(r#"{{"n":1{}}}"#, "0".repeat(400))), false, false);
        check(&e, &env("1", r#"{"n":01}"#), false, false);
    }

    #[test]
    fn duplicate_keys_and_discriminator_order() {
        let e = engine();
        // A repeated key is refused, declared or not, in a value nobody constrains too, however it is spelled.
        check(&e, br#"{"id":"a","id":"b","time":1,"role":"user","ev":{"t":"abort"}}"#, false, false);
        check(&e, br#"{"id":"a","time":1,"role":"user","ev":{"t":"abort","t":"abort"}}"#, false, false);
        for args in [
            r#"{"a":1,"a":2}"#,
            r#"{"a":1,"b":{"c":[],"c":[]}}"#,
            r#"{"a":[{"x":1,"y":{},"x":1}]}"#,
            r#"{"ab":1,"a\u0062":1}"#,
            r#"{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k0":0}"#,
        ] {
            check(&e, &env("1", args), false, false);
        }
        // The same key in two objects, in an object and the one inside it, or in two items, is no repetition; an
        // escaped key and an object of many undeclared keys go to the precise path.
        check(&e, &env("1", r#"{"a":{"a":{"a":1}},"b":{"a":1},"c":[{"a":1},{"a":1}]}"#), true, true);
        check(&e, &env("1", r#"{"a\u0062":1}"#), false, true);
        // An object's last key is not noted (nothing follows it to compare); past the first few, keys are noted
        // in a second buffer, and told apart there too.
        let many: Vec<String> = (0..super::NOTED_KEYS + 2).map(|k| format!("\"k{k}\":{k}")).collect();
        check(&e, &env("1", &format!("{{{}}}", many[..super::NOTED_KEYS + 1].join(","))), true, true);
        check(&e, &env("1", &format!("{{{},{}}}", many[..40].join(","), many[3])), false, false);
        check(&e, &env("1", &format!("{{{},{}}}", many[..40].join(","), many[30])), false, false);
        check(&e, &env("1", &format!("{{{}}}", many.join(","))), false, true);
        // Keys whose bits collide are told apart by their bytes, and a repeated one among many is found.
        let keys: Vec<String> =
            (0..40).map(|k| format!("\"{}\":{k}", "ab".repeat(k % 7 + 1) + &k.to_string())).collect();
        check(&e, &env("1", &format!("{{{}}}", keys.join(","))), true, true);
        check(&e, &env("1", &format!("{{{},{}}}", keys.join(","), keys[23])), false, false);
        // An object's keys are its own: a nested object's are dropped when it closes.
        check(&e, &env("1", r#"{"a":{"b":1,"c":2},"b":{"c":1},"c":[{"b":1,"c":2}]}"#), true, true);
        // The discriminator after other keys: the precise path decides.
        check(&e, br#"{"id":"m1","time":1,"role":"user","ev":{"text":"hi","t":"text"}}"#, false, true);
    }

    #[test]
    fn nesting_depth() {
        let e = engine();
        // The envelope and `ev` are two levels, `args` the third: 127 levels in all are accepted, 128 are not.
        for (levels, valid) in [(127, true), (128, false)] {
            let inner = levels - 2;
            let args = format!("{}{}", "[".repeat(inner - 1), "]".repeat(inner - 1));
            check(&e, &env("1", &format!(r#"{{"a":{args}}}"#)), valid, valid);
            let objs = format!("{}1{}", r#"{"a":"#.repeat(inner), "}".repeat(inner));
            check(&e, &env("1", &objs), valid, valid);
        }
    }

    #[test]
    fn structure_and_trailing_bytes() {
        let e = engine();
        let good = text("x");
        for (suffix, valid) in [("", true), ("  ", true), ("\r", true), (" x", false), ("}", false), (",", false)] {
            let mut l = good.clone();
            l.extend_from_slice(suffix.as_bytes());
            check(&e, &l, valid, valid);
        }
        for bad in [
            &br#"{"id":"m1","time":1,"role":"user","ev":{"t":"abort"},}"#[..],
            br#"{"id":"m1","time":1,"role":"user","ev":{"t":"abort"}"#,
            br#"{"id":"m1" "time":1,"role":"user","ev":{"t":"abort"}}"#,
            br#"{"id":"m1","time":1,"role":"user","ev":{"t":"abort"}}}"#,
            br#"{"id":"m1","time":1,"role":"user","ev":{"t":"abort"},"x":1}"#,
            br#"{"id":"m1","time":1,"role":"user","ev":{"t":"abort","x":1}}"#,
            br#"{"id":"m1","time":tru,"role":"user","ev":{"t":"abort"}}"#,
            b"",
            b"   ",
        ] {
            check(&e, bad, false, false);
        }
        check(&e, &env("1", r#"{"a":[1,]}"#), false, false);
        check(&e, &env("1", r#"{"a":nul}"#), false, false);
        check(&e, &env("1", r#"{"a":truex}"#), false, false);
        check(&e, &env("1", r#"{"a" 1}"#), false, false);
        check(&e, &env("1", r#"{"a":1 "b":2}"#), false, false);
    }
}
