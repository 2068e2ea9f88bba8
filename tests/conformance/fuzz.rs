//! Differential fuzzing: a seeded generator of mutated v2 messages, every line through every checker
//! (`differential.rs`), and every checker must agree with the engine, except where the README documents a
//! difference.
//!
//! The lines start from real messages: every message fixture (`tests/fixtures/messages/`), every line of the stream
//! fixtures (`tests/fixtures/streams/`, which hold the seed document's realistic flow) and each event's seed example
//! from the schema (`examples`) in an envelope of every role. Each line then gets zero to three mutations: type
//! swaps, missing and extra keys (known fields of other events, unknown, integer-like, `__proto__`), `null`,
//! boundary and non-integral numbers, strings and keys with escapes and surrogates (lone `\ud800` too), nesting
//! around the depth limit, role and event swaps, events grafted from other messages, removed v1 shapes (`start`,
//! `stop`, `ready`, `usage-report`, `machineId`, the legacy `content` envelope), duplicate keys, and at the byte
//! level cuts, invalid UTF-8, a BOM, Unicode blanks and trailing text; plus the fast-path test's structural
//! mutations (`generator/tests/support/mutate.rs`).
//!
//! `cargo test -p wiregen --test conformance differential_fuzz` runs a modest count; a soak scales it up:
//!
//! ```sh
//! WIREGEN_FUZZ_LINES=1000000 WIREGEN_FUZZ_SEED=12345 \
//!   cargo test --release -p wiregen --test conformance differential_fuzz -- --nocapture
//! ```
//!
//! `WIREGEN_FUZZ_BATCH` sets the lines per node process (default 25,000). The same seed gives the same lines.

use std::time::Instant;

use serde_json::{Map, Value};

use crate::differential::{Harness, Report};
use crate::fixtures::root;
use crate::mutate;
use crate::rng::{env_number, Rng};

/// Lines in the normal test run.
const DEFAULT_LINES: usize = 12_000;
/// The seed of the normal test run.
const DEFAULT_SEED: u64 = 0x00C0_FFEE_2016;

/// What the generator draws from: the corpus and the protocol's names.
pub struct Generator {
    corpus: Vec<Value>,
    /// Lines of the corpus that are not JSON (malformed-line fixtures), used as they are.
    raw: Vec<String>,
    keys: Vec<String>,
    tags: Vec<String>,
    roles: Vec<String>,
}

/// A message being mutated: its value, with placeholders for text that a `serde_json::Value` cannot hold (raw
/// number and string texts, escaped or invalid keys, repeated keys).
struct Doc {
    value: Value,
    raws: Vec<String>,
}

impl Doc {
    /// A placeholder string that [`Doc::render`] replaces with `raw` (a JSON text, quotes included for a string).
    fn raw(&mut self, raw: String) -> String {
        self.raws.push(raw);
        format!("\u{1}R{}", self.raws.len() - 1)
    }

    fn render(&self) -> String {
        let mut text = serde_json::to_string(&self.value).expect("a value serializes");
        for (i, raw) in self.raws.iter().enumerate().rev() {
            text = text.replace(&format!("\"\\u0001R{i}\""), raw);
        }
        text
    }
}

/// One step of a path into a value.
#[derive(Debug, Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

fn paths(v: &Value) -> Vec<Vec<Seg>> {
    let mut out = vec![Vec::new()];
    let mut stack: Vec<(Vec<Seg>, &Value)> = vec![(Vec::new(), v)];
    while let Some((at, v)) = stack.pop() {
        let children: Vec<(Seg, &Value)> = match v {
            Value::Object(o) => o.iter().map(|(k, c)| (Seg::Key(k.clone()), c)).collect(),
            Value::Array(a) => a.iter().enumerate().map(|(i, c)| (Seg::Index(i), c)).collect(),
            _ => Vec::new(),
        };
        for (seg, c) in children {
            let mut p = at.clone();
            p.push(seg);
            out.push(p.clone());
            if out.len() < 400 {
                stack.push((p, c));
            }
        }
    }
    out
}

fn at_mut<'v>(v: &'v mut Value, path: &[Seg]) -> Option<&'v mut Value> {
    path.iter().try_fold(v, |cur, s| match s {
        Seg::Key(k) => cur.get_mut(k.as_str()),
        Seg::Index(i) => cur.get_mut(*i),
    })
}

/// Raw JSON string texts: escapes, surrogates paired and lone, invalid escapes, raw control characters.
const STRINGS: &[&str] = &[
    r#""\ud800""#,
    r#""\udc00""#,
    r#""x\ud800""#,
    r#""\ud800\u0041""#,
    r#""\ud800\ud800""#,
    r#""\udfff\ud800""#,
    r#""\ud83d\ude00""#,
    r#""\uD83D\uDE00""#,
    r#""\uDBFF\uDFFF""#,
    r#""\u0000""#,
    r#""\n\t\\\/\b\f\r""#,
    r#""\u00e9""#,
    "\"\u{e9}\u{1F600}\"",
    r#""\u2028\u2029""#,
    "\"\u{2028}\"",
    r#""x\"y""#,
    r#""\x""#,
    r#""\u12""#,
    r#""\u12g4""#,
    "\"a\tb\"",
    "\"\u{7f}\"",
    "\"\u{1}\"",
    r#""""#,
    r#"" ""#,
    r#""\u0020""#,
    r#""completed""#,
    r#""comp\u006ceted""#,
    r#""\u0074ext""#,
    r#""agent""#,
    r#""\u0061gent""#,
];

/// Keys that no object of the protocol declares, and keys that JavaScript treats specially.
const ODD_KEYS: &[&str] = &[
    "x",
    "",
    "0",
    "1",
    "42",
    "4294967294",
    "4294967295",
    "-1",
    "01",
    "__proto__",
    "constructor",
    "toString",
    "hasOwnProperty",
    "T",
    "t ",
    "content",
    "type",
    "data",
    "provider",
    "machineId",
    "a/b",
    "m~n",
    "\u{e9}",
];

/// Raw key texts: escaped spellings of real keys, and keys with surrogates.
const RAW_KEYS: &[&str] = &[
    r#""\u0074""#,
    r#""\u0069d""#,
    r#""ti\u006de""#,
    r#""\u0065v""#,
    r#""r\u006fle""#,
    r#""\ud800""#,
    r#""t\udc00""#,
    r#""\u005f_proto__""#,
    r#""\u0030""#,
];

/// Values of every JSON kind.
const VALUES: &[&str] = &[
    "null",
    "true",
    "false",
    "0",
    "-0",
    "1",
    "-1",
    "0.5",
    "1.5",
    "1e3",
    "1000.0",
    "9007199254740991",
    "9007199254740992",
    "4000000000000000.5",
    "\"\"",
    "\"x\"",
    "\"user\"",
    "\"agent\"",
    "\"text\"",
    "\"completed\"",
    "[]",
    "[1,\"a\",null]",
    "{}",
    "{\"a\":1}",
    "{\"width\":1,\"height\":2,\"thumbhash\":\"h\"}",
    "{\"inputTokens\":1,\"outputTokens\":2,\"cost\":0.1}",
    "{\"t\":\"abort\"}",
];

/// Byte sequences that are not UTF-8.
const BAD_UTF8: &[&[u8]] = &[
    b"\xff",
    b"\xfe\xff",
    b"\xc3\x28",
    b"\xc0\xaf",
    b"\xed\xa0\x80",
    b"\xed\xbf\xbf",
    b"\xf4\x90\x80\x80",
    b"\x80",
    b"\xe2\x82",
    b"\xf0\x9f\x98",
];

/// The legacy (v1) wire shapes the seed document removes.
fn v1_shapes() -> Vec<Value> {
    [
        r#"{"role":"agent","content":{"type":"acp","provider":"gemini","data":{"type":"message","message":"hi"}}}"#,
        r#"{"role":"agent","content":{"type":"codex","data":{"type":"message"}}}"#,
        r#"{"role":"agent","content":{"type":"event","data":{"type":"ready"}}}"#,
        r#"{"role":"session","content":{"type":"text","text":"hi"}}"#,
        r#"{"role":"agent","content":{"type":"output","data":{"type":"assistant"}}}"#,
    ]
    .iter()
    .map(|s| serde_json::from_str(s).expect("a v1 shape"))
    .collect()
}

impl Generator {
    /// The corpus and names of `schema/` and `tests/fixtures/`.
    pub fn new() -> Generator {
        let model = wiregen::load::load(&root().join("schema")).expect("schema/ loads");
        let protocol = model.protocol.as_ref().expect("the v2 schema has a protocol");
        let mut texts: Vec<String> =
            crate::fixtures::messages().into_iter().filter(|f| !f.strict_ids).map(|f| f.line).collect();
        let streams = root().join("tests/fixtures/streams");
        let mut files: Vec<_> = std::fs::read_dir(&streams)
            .expect("stream fixtures")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        files.sort();
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            texts.extend(text.lines().map(str::to_string));
        }
        // Each event's seed example, in an envelope of every role that may send it.
        for e in &protocol.events {
            for ex in &model.ty(e.ty).examples {
                for role in &e.roles {
                    let mut env = serde_json::json!({"id": "m1", "time": 1739347200000u64, "role": role});
                    if role == "agent" {
                        env["turn"] = "t1".into();
                    }
                    env["ev"] = ex.clone();
                    texts.push(env.to_string());
                }
            }
        }
        let (mut corpus, mut raw) = (Vec::new(), Vec::new());
        for t in texts {
            match serde_json::from_str::<Value>(&t) {
                Ok(v) => corpus.push(v),
                Err(_) => raw.push(t),
            }
        }
        let mut keys: Vec<String> = ODD_KEYS.iter().map(|s| s.to_string()).collect();
        for t in &model.types {
            if let wiregen::ir::Shape::Object(o) = &t.node.shape {
                keys.extend(o.fields.iter().map(|f| f.name.clone()));
                keys.extend(o.removed.iter().map(|r| r.name.clone()));
            }
        }
        keys.sort();
        keys.dedup();
        let mut tags: Vec<String> = protocol.events.iter().map(|e| e.tag.clone()).collect();
        for r in &protocol.removed {
            if let wiregen::ir::RemovedKind::Events(evs) = &r.kind {
                tags.extend(evs.iter().map(|(old, _)| old.clone()));
            }
        }
        tags.extend(["Text", "", "text ", "turn_end", "constructor"].map(String::from));
        let mut roles = protocol.roles.clone();
        roles.extend(["session", "system", "User", ""].map(String::from));
        assert!(corpus.len() > 200, "the corpus has {} messages", corpus.len());
        Generator { corpus, raw, keys, tags, roles }
    }

    /// A line: a corpus message with zero to three mutations. `prev` (the last line) is sometimes mutated further.
    pub fn line(&self, rng: &mut Rng, prev: &mut Option<Value>) -> Vec<u8> {
        if !self.raw.is_empty() && rng.below(200) == 0 {
            return rng.pick(&self.raw).clone().into_bytes();
        }
        let base = match prev.take() {
            Some(v) if rng.below(3) == 0 => v,
            _ => rng.pick(&self.corpus).clone(),
        };
        let mut doc = Doc { value: base, raws: Vec::new() };
        let steps = match rng.below(10) {
            0 => 0,
            1..=5 => 1,
            6..=8 => 2,
            _ => 3,
        };
        for _ in 0..steps {
            self.mutate(rng, &mut doc);
        }
        if doc.raws.is_empty() {
            *prev = Some(doc.value.clone());
        }
        let mut text = doc.render();
        if rng.below(8) == 0 {
            text = mutate::mutate(rng, &text);
        }
        let mut bytes = text.into_bytes();
        if rng.below(6) == 0 {
            bytes = bytes_mutation(rng, bytes);
        }
        for b in bytes.iter_mut().filter(|b| **b == b'\n') {
            *b = b' ';
        }
        bytes
    }

    fn mutate(&self, rng: &mut Rng, doc: &mut Doc) {
        let all = paths(&doc.value);
        let path = rng.pick(&all).clone();
        match rng.below(16) {
            // Type swap.
            0 | 1 => {
                let v: Value = serde_json::from_str(rng.pick::<&str>(VALUES)).expect("a value");
                set(doc, &path, v);
            }
            2 => set(doc, &path, Value::Null),
            // A key goes missing.
            3 | 4 => {
                let p = object_path(&doc.value, &path);
                if let Some(Value::Object(o)) = at_mut(&mut doc.value, &p) {
                    if !o.is_empty() {
                        let k = o.keys().nth(rng.below(o.len() as u64) as usize).cloned().expect("a key");
                        o.shift_remove(&k);
                    }
                }
            }
            // An extra key: a field of some object of the protocol, or an odd one.
            5 | 6 => {
                let k = rng.pick(&self.keys).clone();
                let v: Value = serde_json::from_str(rng.pick::<&str>(VALUES)).expect("a value");
                let p = object_path(&doc.value, &path);
                if let Some(Value::Object(o)) = at_mut(&mut doc.value, &p) {
                    o.insert(k, v);
                }
            }
            // A boundary or non-integral number, in a numeric field or anywhere.
            7 => {
                let n = crate::numbers::number(rng);
                let numeric = if rng.below(2) == 0 { self.numeric_path(&doc.value, rng) } else { None };
                let p = numeric.unwrap_or(path);
                let r = doc.raw(n);
                set(doc, &p, Value::String(r));
            }
            // A string with escapes or surrogates.
            8 => {
                let s = rng.pick(STRINGS).to_string();
                let r = doc.raw(s);
                set(doc, &path, Value::String(r));
            }
            // A key spelled with escapes, or holding a surrogate.
            9 => {
                let raw = rng.pick(RAW_KEYS).to_string();
                let k = doc.raw(raw);
                let p = object_path(&doc.value, &path);
                if let Some(Value::Object(o)) = at_mut(&mut doc.value, &p) {
                    let v: Value = serde_json::from_str(rng.pick::<&str>(VALUES)).expect("a value");
                    o.insert(k, v);
                }
            }
            // Role and event swaps.
            10 => {
                let r = rng.pick(&self.roles).clone();
                if let Some(o) = doc.value.as_object_mut() {
                    o.insert("role".into(), Value::String(r));
                }
            }
            11 => {
                let t = rng.pick(&self.tags).clone();
                if let Some(ev) = doc.value.get_mut("ev").and_then(Value::as_object_mut) {
                    ev.insert("t".into(), Value::String(t));
                }
            }
            // An event from another message (role/event combinations the corpus does not hold).
            12 => {
                let other = rng.pick(&self.corpus);
                if let (Some(ev), Some(o)) = (other.get("ev"), doc.value.as_object_mut()) {
                    o.insert("ev".into(), ev.clone());
                }
            }
            // A removed v1 shape.
            13 => self.v1(rng, doc),
            // Nesting around the depth limit.
            14 => {
                let depth = 120 + rng.below(16) as usize;
                let k = depth.saturating_sub(path.len()).max(1);
                set(doc, &path, nested(rng, k));
            }
            // A repeated key, with another value.
            _ => {
                let p = object_path(&doc.value, &path);
                let existing = match at_mut(&mut doc.value, &p) {
                    Some(Value::Object(o)) if !o.is_empty() => {
                        o.keys().nth(rng.below(o.len() as u64) as usize).cloned()
                    }
                    _ => None,
                };
                if let Some(k) = existing {
                    let raw = serde_json::to_string(&k).expect("a key");
                    let placeholder = doc.raw(raw);
                    let v: Value = serde_json::from_str(rng.pick::<&str>(VALUES)).expect("a value");
                    if let Some(Value::Object(o)) = at_mut(&mut doc.value, &p) {
                        o.insert(placeholder, v);
                    }
                }
            }
        }
    }

    /// The path of one of the protocol's numeric fields in this message, if it has one.
    fn numeric_path(&self, v: &Value, rng: &mut Rng) -> Option<Vec<Seg>> {
        let candidates: [&[&str]; 7] = [
            &["time"],
            &["ev", "size"],
            &["ev", "image", "width"],
            &["ev", "image", "height"],
            &["ev", "usage", "inputTokens"],
            &["ev", "usage", "outputTokens"],
            &["ev", "usage", "cost"],
        ];
        let present: Vec<&[&str]> =
            candidates.into_iter().filter(|p| p.iter().try_fold(v, |cur, k| cur.get(*k)).is_some()).collect();
        if present.is_empty() {
            return None;
        }
        Some(rng.pick(&present).iter().map(|k| Seg::Key(k.to_string())).collect())
    }

    fn v1(&self, rng: &mut Rng, doc: &mut Doc) {
        let Some(o) = doc.value.as_object_mut() else { return };
        match rng.below(5) {
            // The legacy envelope: `content` instead of `ev`.
            0 => {
                let shape = rng.pick(&v1_shapes()).clone();
                o.shift_remove("ev");
                if let Value::Object(s) = shape {
                    for (k, v) in s {
                        o.insert(k, v);
                    }
                }
            }
            // `ev` renamed `content`.
            1 => {
                if let Some(ev) = o.shift_remove("ev") {
                    o.insert("content".into(), ev);
                }
            }
            // A removed event name, with the fields its replacement has.
            2 => {
                let (t, ev) = *rng.pick(&[
                    ("start", r#"{"t":"start","agentId":"sa1","title":"x"}"#),
                    ("stop", r#"{"t":"stop","agentId":"sa1"}"#),
                    ("ready", r#"{"t":"ready"}"#),
                    ("usage-report", r#"{"t":"usage-report","usage":{"inputTokens":1,"outputTokens":2,"cost":0.1}}"#),
                    ("ready", r#"{"t":"ready","status":"completed"}"#),
                ]);
                let ev: Value = serde_json::from_str(ev).unwrap_or_else(|e| panic!("{t}: {e}"));
                o.insert("ev".into(), ev);
            }
            // `machineId` on `session-control-changed`.
            3 => {
                let ev: Value =
                    serde_json::from_str(r#"{"t":"session-control-changed","clientType":"cli","machineId":"mac1"}"#)
                        .expect("an event");
                o.insert("ev".into(), ev);
            }
            // `type` instead of `t` (the v1 event field).
            _ => {
                if let Some(ev) = o.get_mut("ev").and_then(Value::as_object_mut) {
                    if let Some(t) = ev.shift_remove("t") {
                        ev.insert("type".into(), t);
                    }
                }
            }
        }
    }
}

/// The path itself when it leads to an object, else its nearest ancestor that is one.
fn object_path(v: &Value, path: &[Seg]) -> Vec<Seg> {
    let get = |p: &[Seg]| {
        p.iter().try_fold(v, |cur, s| match s {
            Seg::Key(k) => cur.get(k.as_str()),
            Seg::Index(i) => cur.get(*i),
        })
    };
    (0..=path.len()).rev().map(|n| &path[..n]).find(|p| get(p).is_some_and(Value::is_object)).unwrap_or(&[]).to_vec()
}

fn set(doc: &mut Doc, path: &[Seg], v: Value) {
    if let Some(target) = at_mut(&mut doc.value, path) {
        *target = v;
    }
}

/// `levels` nested arrays and objects (at random) around a scalar.
fn nested(rng: &mut Rng, levels: usize) -> Value {
    let mut v = Value::from(rng.below(3));
    for _ in 0..levels {
        v = if rng.below(2) == 0 {
            Value::Array(vec![v])
        } else {
            let mut m = Map::new();
            m.insert("k".into(), v);
            Value::Object(m)
        };
    }
    v
}

/// A byte-level change: a cut, bytes that are not UTF-8 inside a string, a byte-order mark, blanks, trailing text.
fn bytes_mutation(rng: &mut Rng, mut b: Vec<u8>) -> Vec<u8> {
    match rng.below(9) {
        0 => {
            let cut = rng.below(b.len() as u64 + 1) as usize;
            b.truncate(cut);
        }
        1 | 2 => {
            let quotes: Vec<usize> = b.iter().enumerate().filter(|(_, c)| **c == b'"').map(|(i, _)| i + 1).collect();
            if !quotes.is_empty() {
                let at = *rng.pick(&quotes);
                let bad = rng.pick(BAD_UTF8);
                b.splice(at..at, bad.iter().copied());
            }
        }
        3 => b.splice(0..0, "\u{feff}".bytes()).for_each(drop),
        4 => {
            let blank = *rng.pick(&["", " ", "\t", "\r", "\u{a0}", "\u{feff}", "\u{3000}", "\u{2028}", " \t "]);
            b = blank.as_bytes().to_vec();
        }
        5 => {
            let pad = *rng.pick(&[" ", "\t", "\r", "\u{a0}", "\u{85}", "\u{2028}"]);
            if rng.below(2) == 0 {
                b.splice(0..0, pad.bytes()).for_each(drop);
            } else {
                b.extend_from_slice(pad.as_bytes());
            }
        }
        6 => {
            let tail = *rng.pick(&["x", "{}", ",", "]", "}", " 1", "\"", "//c", "\u{0}"]);
            b.extend_from_slice(tail.as_bytes());
        }
        7 => {
            // Whitespace between tokens (and, harmlessly, inside some strings).
            let mut out = Vec::with_capacity(b.len() * 2);
            for c in b {
                out.push(c);
                if (c == b',' || c == b':') && rng.below(2) == 0 {
                    out.extend_from_slice(if rng.below(2) == 0 { b" " } else { b"\t\r " });
                }
            }
            b = out;
        }
        _ => {
            // A raw control character or a raw non-ASCII character inside a string.
            let quotes: Vec<usize> = b.iter().enumerate().filter(|(_, c)| **c == b'"').map(|(i, _)| i + 1).collect();
            if !quotes.is_empty() {
                let at = *rng.pick(&quotes);
                let ins = *rng.pick(&["\u{1}", "\t", "\u{7f}", "\u{e9}", "\u{1F600}", "\u{2028}", "\\"]);
                b.splice(at..at, ins.bytes());
            }
        }
    }
    b
}

#[test]
fn differential_fuzz() {
    let total = env_number("WIREGEN_FUZZ_LINES", DEFAULT_LINES as u64) as usize;
    let seed = env_number("WIREGEN_FUZZ_SEED", DEFAULT_SEED).max(1);
    let batch = env_number("WIREGEN_FUZZ_BATCH", 25_000).max(1) as usize;
    let started = Instant::now();
    let generator = Generator::new();
    let harness = Harness::new();
    let mut rng = Rng(seed);
    let mut prev = None;
    let mut report = Report::default();
    let mut done = 0;
    while done < total {
        let n = batch.min(total - done);
        let lines: Vec<Vec<u8>> = (0..n).map(|_| generator.line(&mut rng, &mut prev)).collect();
        harness.check(&lines, &mut report);
        done += n;
        if total > batch {
            eprintln!(
                "fuzz: {done}/{total} lines, {} disagreement(s), {:.0} s",
                report.disagreement_count,
                started.elapsed().as_secs_f64()
            );
        }
    }
    eprintln!("differential fuzz (seed {seed:#x}): {} in {:.1} s", report.summary(), started.elapsed().as_secs_f64());
    report.assert_agreement();
    // The mutations reach both verdicts and the line rules, and the documented exceptions are exercised.
    assert!(report.valid * 20 > report.lines, "at least 5% valid lines: {}", report.summary());
    for rule in ["malformed-json", "invalid-utf8", "too-deep", "additional-property", "type", "role-event"] {
        assert!(report.by_rule.contains_key(rule), "no line broke `{rule}`: {}", report.summary());
    }
}
