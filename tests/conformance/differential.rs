//! Differential checking: lines that state no expected verdict go through every checker, and every checker must
//! agree with the engine (the oracle). Used by the differential fuzz (`fuzz.rs`) and the boundary-number test
//! (`numbers.rs`).
//!
//! The checkers, per line:
//!
//! - `engine`: `Engine::check_line`, the precise path; its first error is what the others are held to;
//! - `fast`: `Engine::is_valid_fast` may call a line valid only when the engine does, and `check_line_fast` (the
//!   fast path with its fallback, what `validate` and `serve` run) must give the engine's whole error list;
//! - `rust-text`: the generated crate's `parse_envelope_bytes`; `rust-value`: `Envelope::from_value` on the
//!   engine's parsed value (when the line is JSON); both held to the engine's first rule id and pointer, and an
//!   accepted message must serialize to text that `parse_envelope` gives back unchanged;
//! - `zod`: `validateSessionLine` (Zod behind the line rules) and `zod-schema` (the first raw issue of
//!   `sessionEnvelopeSchema.safeParse` on the parsed line), held to the engine's first rule id and pointer, and a
//!   valid line's value must deep-equal its `JSON.parse`;
//! - `ts-standalone`: `validateSessionLineStandalone`, first rule id and pointer;
//! - `ajv`: ajv 8 strict on the bundled schema (`generated/schema/`), held to the verdict.
//!
//! The JavaScript checkers run in ONE node process per batch (`fuzz-runner.mjs`), in a thread beside the Rust
//! checkers. The only allowed differences are the README's documented ones, each an [`Exception`].

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use session_wire::{parse_envelope, parse_envelope_bytes, Envelope};
use wiregen::engine::{Engine, EngineOptions, Issue};

use crate::fixtures::root;

/// A first error (rule id, JSON Pointer), or `None` for a valid line.
pub type First = Option<(String, String)>;

/// The documented differences, the only ones a checker may show; each names the README passage that states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exception {
    /// README, *TypeScript output*, "Known limits": JavaScript objects list integer-like keys first, so with
    /// several bad keys the first one Zod and the standalone validator report may differ from the engine's input
    /// order when one looks like an array index. On such lines they are held to the verdict, not the first error.
    IntegerLikeKeyOrder,
    /// README, *Bundled JSON Schema*, "Line rules": ajv sees `JSON.parse`'s value, and `JSON.parse` takes what
    /// serde_json's framing refuses: bytes that are not UTF-8 (read as U+FFFD), unpaired `\u` surrogate escapes,
    /// numbers beyond the double range (read as ±Infinity), a repeated key (read as its last member). On such lines
    /// ajv may call valid what the engine refuses as `invalid-utf8` or `malformed-json`.
    AjvJsonParseFraming,
}

/// What a run found.
#[derive(Debug, Default)]
pub struct Report {
    /// Lines checked.
    pub lines: usize,
    /// Lines the engine calls valid.
    pub valid: usize,
    /// Valid lines the fast path vouched for on its own.
    pub fast_valid: usize,
    /// The engine's first rule per line (`valid` for valid lines).
    pub by_rule: BTreeMap<String, usize>,
    /// How often each documented difference was used.
    pub exceptions: BTreeMap<Exception, usize>,
    /// Undocumented disagreements (the first few in full).
    pub disagreements: Vec<String>,
    /// Their number.
    pub disagreement_count: usize,
    /// The lines of the first few, whole, as given.
    pub disagreeing_lines: Vec<Vec<u8>>,
}

impl Report {
    fn disagree(&mut self, line: &[u8], what: String) {
        self.disagreement_count += 1;
        if self.disagreements.len() < 40 {
            let shown: String = String::from_utf8_lossy(line).chars().take(300).collect();
            self.disagreements.push(format!("{what}\n    line: {shown}"));
            self.disagreeing_lines.push(line.to_vec());
        }
    }

    fn except(&mut self, e: Exception) {
        *self.exceptions.entry(e).or_default() += 1;
    }

    /// A one-paragraph summary.
    pub fn summary(&self) -> String {
        let rules: Vec<String> = self.by_rule.iter().map(|(r, n)| format!("{r} {n}")).collect();
        format!(
            "{} lines, {} valid ({} on the fast path alone), {} undocumented disagreement(s); documented exceptions \
             used: {:?}; first rules: {}",
            self.lines,
            self.valid,
            self.fast_valid,
            self.disagreement_count,
            self.exceptions,
            rules.join(", ")
        )
    }

    /// Panics with the disagreements, if any; their lines are written whole to
    /// `target/tmp/differential-disagreements.jsonl` first, one per line, to rerun by hand.
    pub fn assert_agreement(&self) {
        if self.disagreement_count > 0 {
            let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("differential-disagreements.jsonl");
            let mut text = Vec::new();
            for l in &self.disagreeing_lines {
                text.extend_from_slice(l);
                text.push(b'\n');
            }
            let written = std::fs::write(&path, text).map(|()| format!("(lines in {})", path.display()));
            eprintln!("{}", written.unwrap_or_else(|e| format!("(could not write {}: {e})", path.display())));
        }
        assert!(self.disagreement_count == 0, "{}\n\n{}", self.summary(), self.disagreements.join("\n\n"));
    }
}

/// The checkers, built once.
pub struct Harness {
    engine: Engine,
}

impl Harness {
    /// The engine on `schema/` (default mode: ids are not shape-checked, as in every generated output).
    pub fn new() -> Harness {
        let model = wiregen::load::load(&root().join("schema")).expect("schema/ loads");
        let engine = Engine::new(Arc::new(model), EngineOptions::default()).expect("the schema has a root type");
        Harness { engine }
    }

    /// Checks `lines` (no line holds a `\n`) through every checker and adds what it finds to `report`.
    pub fn check(&self, lines: &[Vec<u8>], report: &mut Report) {
        let schema = root().join("generated/schema/session-protocol.schema.json");
        let node_dir = root().join("tests/node");
        crate::node::ensure_npm_deps(&node_dir);
        std::thread::scope(|s| {
            let js = s.spawn(|| {
                crate::zod::run_runner("fuzz-runner.mjs", &[schema.as_os_str(), node_dir.as_os_str()], lines)
            });
            let rust: Vec<RustSide> = lines.iter().map(|l| self.rust_side(l)).collect();
            let js = js.join().expect("the node runner thread");
            assert_eq!(js.len(), lines.len(), "one JavaScript answer per line");
            for ((line, r), j) in lines.iter().zip(rust).zip(&js) {
                compare(line, r, j, report);
            }
        });
    }

    fn rust_side(&self, line: &[u8]) -> RustSide {
        let (parsed, issues) = self.engine.check_line(line);
        let engine = first(&issues);
        let mut problems = Vec::new();
        let fast_valid = self.engine.is_valid_fast(line);
        if fast_valid && engine.is_some() {
            problems.push(format!("fast: the fast path calls valid what the engine refuses ({engine:?})"));
        }
        let fast = self.engine.check_line_fast(line);
        if fast != issues {
            problems.push(format!("fast: check_line_fast gives {fast:?}, the engine {issues:?}"));
        }
        let text = parse_envelope_bytes(line);
        let rust_text = text.as_ref().err().map(|e| (e.rule().id().to_string(), e.pointer().to_string()));
        if rust_text != engine {
            problems.push(format!("rust-text: {rust_text:?}, the engine {engine:?}"));
        }
        if let Ok(env) = &text {
            round_trip(env, &mut problems);
        }
        if let Some(v) = &parsed {
            let by_value = Envelope::from_value(v);
            let rust_value = by_value.as_ref().err().map(|e| (e.rule().id().to_string(), e.pointer().to_string()));
            if rust_value != engine {
                problems.push(format!("rust-value: {rust_value:?}, the engine {engine:?}"));
            }
            if let (Ok(a), Ok(b)) = (&by_value, &text) {
                if a != b {
                    problems.push(format!("rust-value: from_value gives {a:?}, parse_envelope_bytes {b:?}"));
                }
            }
        }
        let integer_like_key = parsed.as_ref().is_some_and(|v| has_key(v, is_array_index));
        let framing_only = matches!(issues.first(), Some(i) if json_parse_takes_it(line, i));
        RustSide { engine, fast_valid, problems, integer_like_key, framing_only }
    }
}

/// What the Rust side found on one line.
struct RustSide {
    engine: First,
    fast_valid: bool,
    problems: Vec<String>,
    /// Some object of the line has a key JavaScript lists first (an array index).
    integer_like_key: bool,
    /// The engine refuses the line for a framing reason that `JSON.parse` does not share.
    framing_only: bool,
}

fn first(issues: &[Issue]) -> First {
    issues.first().map(|i| (i.rule.to_string(), i.pointer.clone()))
}

/// An accepted message serializes to text that the text parser gives back unchanged.
fn round_trip(env: &Envelope, problems: &mut Vec<String>) {
    match serde_json::to_string(env) {
        Err(e) => problems.push(format!("rust: an accepted message does not serialize: {e}")),
        Ok(text) => match parse_envelope(&text) {
            Ok(back) if &back == env => {}
            other => problems.push(format!("rust: {text} parses back as {other:?}")),
        },
    }
}

/// Whether some object in `v` has a key for which `pred` holds (iteratively: values may nest 127 levels).
fn has_key(v: &Value, pred: impl Fn(&str) -> bool) -> bool {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(a) => stack.extend(a),
            Value::Object(o) => {
                if o.keys().any(|k| pred(k)) {
                    return true;
                }
                stack.extend(o.values());
            }
            _ => {}
        }
    }
    false
}

/// Whether two first errors differ only as [`Exception::IntegerLikeKeyOrder`] allows: both at a member of the
/// same object, the JavaScript one at a key that JavaScript lists before the others.
fn key_order_only(js: &First, engine: &First) -> bool {
    let (Some((_, js)), Some((_, engine))) = (js, engine) else { return false };
    match (js.rsplit_once('/'), engine.rsplit_once('/')) {
        (Some((parent, key)), Some((engine_parent, _))) => parent == engine_parent && is_array_index(key),
        _ => false,
    }
}

/// A key JavaScript lists before the others: a canonical array index (`0`, `1`, `42`; below 2^32 - 1).
fn is_array_index(k: &str) -> bool {
    k.parse::<u64>().is_ok_and(|n| n < u64::from(u32::MAX) && n.to_string() == k)
}

/// Whether the engine's first error is a framing error that `JSON.parse` would not raise (see
/// [`Exception::AjvJsonParseFraming`]): invalid UTF-8, an unpaired surrogate escape, a number out of range, a
/// repeated key.
fn json_parse_takes_it(line: &[u8], i: &Issue) -> bool {
    i.rule == "invalid-utf8"
        || (i.rule == "malformed-json"
            && (i.message.contains("number out of range")
                || i.message.starts_with("malformed JSON: repeated key ")
                || has_unpaired_surrogate_escape(line)))
}

/// Whether a JSON text holds a `\u` escape of a surrogate that is not half of a pair (`"\ud800"`, `"\udc00x"`).
fn has_unpaired_surrogate_escape(line: &[u8]) -> bool {
    let unit = |at: usize| -> Option<u16> {
        let hex = line.get(at..at + 6)?;
        if hex[0] != b'\\' || hex[1] != b'u' {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()
    };
    let (mut i, mut in_string) = (0, false);
    while i < line.len() {
        match (in_string, line[i]) {
            (false, b'"') => in_string = true,
            (true, b'"') => in_string = false,
            (true, b'\\') => {
                match unit(i) {
                    Some(0xD800..=0xDBFF) => match unit(i + 6) {
                        Some(0xDC00..=0xDFFF) => i += 6,
                        _ => return true,
                    },
                    Some(0xDC00..=0xDFFF) => return true,
                    _ => {}
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// A first error from the runner: `0` for valid, `[rule, pointer]` otherwise.
fn js_first(v: &Value) -> First {
    match v {
        Value::Array(a) => Some((
            a.first().and_then(Value::as_str).unwrap_or("?").to_string(),
            a.get(1).and_then(Value::as_str).unwrap_or("?").to_string(),
        )),
        _ => None,
    }
}

fn compare(line: &[u8], r: RustSide, js: &Value, report: &mut Report) {
    report.lines += 1;
    *report.by_rule.entry(r.engine.as_ref().map_or("valid", |(rule, _)| rule.as_str()).to_string()).or_default() += 1;
    if r.engine.is_none() {
        report.valid += 1;
        report.fast_valid += usize::from(r.fast_valid);
    }
    for p in r.problems {
        report.disagree(line, p);
    }
    let engine = &r.engine;
    // Zod (validateSessionLine), its raw schema, and the standalone validator: precise checkers.
    let precise = [("zod", &js[0]), ("zod-schema", &js[1]), ("ts-standalone", &js[2])];
    for (name, answer) in precise {
        if name == "zod-schema" && answer.is_null() {
            // The line is not JSON for the line rules (validateSessionLine reports those, compared above).
            if !is_line_rule(engine) {
                report.disagree(line, format!("zod-schema: parseLine refused a line the engine parsed ({engine:?})"));
            }
            continue;
        }
        let got = js_first(answer);
        if got == *engine {
            continue;
        }
        if r.integer_like_key && key_order_only(&got, engine) {
            // Same verdict; the first error is another key of the same object, one JavaScript lists first
            // (README, known limits).
            report.except(Exception::IntegerLikeKeyOrder);
            continue;
        }
        report.disagree(line, format!("{name}: {got:?}, the engine {engine:?}"));
    }
    if js[4] == 1 {
        report.disagree(line, "zod: a valid line's value is not deep-equal to its JSON.parse".into());
    }
    // ajv: the verdict.
    let ajv_valid = js[3] == "valid";
    if ajv_valid != engine.is_none() {
        if ajv_valid && r.framing_only {
            report.except(Exception::AjvJsonParseFraming);
        } else {
            report.disagree(line, format!("ajv: {}, the engine {engine:?}", js[3]));
        }
    }
}

/// Whether the engine's answer is a line rule (the line is not a JSON value the checkers parse).
fn is_line_rule(engine: &First) -> bool {
    matches!(engine, Some((rule, _)) if ["malformed-json", "invalid-utf8", "blank-line", "too-deep"].contains(&rule.as_str()))
}
