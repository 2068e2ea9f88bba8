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

pub mod machine;
pub mod rules;

use std::io::{self, BufRead};
use std::ops::ControlFlow;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::engine::{Engine, Issue};
use crate::fast::{CapturePlan, Captured};
use crate::ir::{Model, Protocol};
use crate::validate::{ByteSink, Consumer, Format, Record, RecordSink, Summary};
use machine::{Machine, Msg, Spans, State};

/// Checks the protocol's sequence rules over a stream of messages.
pub struct StreamChecker<'e> {
    engine: &'e Engine,
    compiled: &'e Compiled,
    state: State,
    /// Where the values the rules read are in the current line (a capturing fast scan), and those values.
    captured: Captured,
    spans: Spans,
}

/// A protocol's sequence declarations, compiled once per engine ([`Engine`] keeps it): the interpreter's machine,
/// the rule ids, and how the fast scanner finds what the rules read in a valid line's one pass.
#[derive(Debug, Clone, Default)]
pub(crate) struct Compiled {
    /// Whether the model has a protocol (without one, no stream rules apply).
    proto: bool,
    machine: Machine,
    /// The rule ids, in check order (what [`Issue::rule`] holds).
    ids: Vec<&'static str>,
    /// Where the fast scanner records the values of [`Machine::reads`] (none: every line is parsed).
    capture: Option<CapturePlan>,
    /// The machine's symbols of the capture plan's roles and tags, and of a message without a role.
    roles: Vec<u32>,
    tags: Vec<u32>,
    no_role: u32,
}

impl Compiled {
    pub(crate) fn new(engine: &Engine) -> Compiled {
        let m: &Model = engine.model();
        let Some(p) = m.protocol.as_ref() else { return Compiled::default() };
        // The loader's own lowering always reads back.
        let machine = Machine::from_json(&declarations(m, p)).unwrap_or_default();
        let ids = p.sequence.rules.iter().map(|r| r.id).collect();
        let capture = engine.capture_plan(machine.reads());
        let syms = |names: &[String]| names.iter().map(|n| machine.sym(n)).collect();
        let (roles, tags) = capture.as_ref().map(|c| (syms(&c.roles), syms(&c.tags))).unwrap_or_default();
        let no_role = machine.sym("");
        Compiled { proto: true, machine, ids, capture, roles, tags, no_role }
    }
}

/// What `old`'s declarations read of a line its engine rejected, as [`StreamChecker::check`] reads a line it
/// rejects (`None` for a line that is not JSON every checker reads): `wiregen migrate --stream` upgrades it, and
/// NEW's rules read it in NEW's names (an event OLD's version named otherwise, under its new tag). Only what the
/// rules read is kept, never the line's whole tree.
pub(crate) fn rejected_value(old: &Engine, bytes: &[u8]) -> Option<Value> {
    read_rejected(&old.sequence().machine, bytes, crate::engine::parse_json(bytes).err().as_ref())
}

/// What `machine`'s declarations read of a rejected line, `unparsed` when it is no JSON value the checkers take
/// (read as far as every checker reads such a line).
fn read_rejected(machine: &machine::Machine, bytes: &[u8], unparsed: Option<&Issue>) -> Option<Value> {
    let readable = unparsed.is_none_or(crate::engine::read_when_rejected);
    readable.then(|| machine::read_of_value(machine, bytes)).flatten()
}

/// The declarations [`machine::Machine::from_json`] reads for a protocol: its sequence with the envelope's role,
/// union and discriminator names (what the generated Rust crate embeds too).
pub(crate) fn declarations(m: &Model, p: &Protocol) -> Value {
    serde_json::json!({
        "roleProperty": p.role_field,
        "unionProperty": p.union_field,
        "discriminator": p.discriminator(m),
        "sequence": serde_json::to_value(&p.sequence).unwrap_or(Value::Null),
    })
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

impl<'e> StreamChecker<'e> {
    /// A checker at the start of a stream.
    pub fn new(engine: &'e Engine) -> Self {
        let compiled = engine.sequence();
        let state = State::new(&compiled.machine);
        StreamChecker { engine, compiled, state, captured: Captured::default(), spans: Spans::default() }
    }

    /// Checks the next record (`line` is 1-based; `bytes` is the line without its newline).
    pub fn check(&mut self, line: usize, bytes: &[u8]) -> Record {
        let c = self.compiled;
        // The fast path vouches for the message and finds the values the rules read in the same pass.
        if let Some(cap) = &c.capture {
            if self.engine.capture_fast(bytes, cap, &mut self.captured) && self.spans.read(bytes, &self.captured.spans)
            {
                let k = &self.captured;
                let role = k.role.and_then(|r| c.roles.get(r)).copied().unwrap_or(c.no_role);
                let Some(t) = k.member.and_then(|t| c.tags.get(t)).copied() else {
                    return self.not_an_envelope(line);
                };
                let msg = Msg::of_spans(role, t, bytes, &self.spans);
                let found = self.state.check_msg(&c.machine, line, &msg);
                return self.record(line, found);
            }
        }
        match self.engine.check_text(bytes) {
            Ok(errors) if errors.is_empty() => match serde_json::from_slice::<Value>(bytes) {
                Ok(v) => self.check_valid(line, &v),
                Err(_) => self.not_an_envelope(line),
            },
            // A rejected line is asked only what it would have opened or closed: that part of it is parsed, at any
            // depth (a line too deep is JSON still; one that is not JSON every checker reads reads as nothing:
            // `engine::read_when_rejected`).
            Ok(errors) => {
                self.reject_text(line, bytes, None);
                Record::new(line, errors)
            }
            Err(issue) => {
                self.reject_text(line, bytes, Some(&issue));
                Record::new(line, vec![issue])
            }
        }
    }

    /// Counts a message rejected before this checker saw it (`wiregen migrate --stream` refuses lines the
    /// upgrade or OLD's rules refuse), as [`StreamChecker::check`] counts one it rejects: what it would have
    /// opened or closed (`value`, as far as it can be read) is remembered for `caused_by`.
    pub fn reject(&mut self, line: usize, value: Option<&Value>) {
        self.state.reject(&self.compiled.machine, line, value);
    }

    /// [`StreamChecker::reject`] of a line's text, `unparsed` when it is no JSON value the checkers take: read as
    /// far as `check` reads such a line.
    fn reject_text(&mut self, line: usize, bytes: &[u8], unparsed: Option<&Issue>) {
        let v = read_rejected(&self.compiled.machine, bytes, unparsed);
        self.state.reject(&self.compiled.machine, line, v.as_ref());
    }

    /// Checks the next message, already parsed (`line` is its 1-based position).
    pub fn check_value(&mut self, line: usize, value: &Value) -> Record {
        let errors = self.engine.check_value(value);
        if errors.is_empty() {
            self.check_valid(line, value)
        } else {
            self.state.reject(&self.compiled.machine, line, Some(value));
            Record::new(line, errors)
        }
    }

    fn check_valid(&mut self, line: usize, v: &Value) -> Record {
        let c = self.compiled;
        if !c.proto {
            self.state.accept_unread();
            return Record::new(line, Vec::new());
        }
        match Msg::of_value(&c.machine, v) {
            Some(msg) => {
                let found = self.state.check_msg(&c.machine, line, &msg);
                self.record(line, found)
            }
            None => self.not_an_envelope(line),
        }
    }

    /// Unreachable for a message the engine accepted; reported rather than trusted.
    fn not_an_envelope(&mut self, line: usize) -> Record {
        self.state.reject(&self.compiled.machine, line, None);
        Record::new(line, vec![Issue::new(crate::rules::Rule::Type, "", "expected an envelope")])
    }

    fn record(&self, line: usize, found: Option<machine::Violation>) -> Record {
        match found {
            None => Record::new(line, Vec::new()),
            Some(x) => {
                let rule = self.compiled.ids.get(x.rule).copied().unwrap_or_default();
                let issue =
                    Issue { pointer: x.pointer, rule, message: x.message, related: x.related, caused_by: x.caused_by };
                Record::new(line, vec![issue])
            }
        }
    }

    /// The rollup of everything checked so far.
    pub fn rollup(&self) -> Rollup {
        let (accepted, rejected) = self.state.counts();
        let (parts, open) = self.state.rollup(&self.compiled.machine);
        Rollup { messages: MessageCounts { accepted, rejected }, parts, open }
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
    /// Only I/O errors while reading, and a line longer than [`crate::validate::MAX_LINE`].
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

/// Checks every line of `reader` as one stream (each line one message, or the whole input one pretty-printed
/// message, framed as message mode frames it), handing
/// each record to `sink` in order (a closure, or a [`RecordSink`] that can stop the run and flush while the input
/// is idle). Reads a batch of lines at a time: memory stays bounded by the stream state and one batch.
///
/// # Errors
/// Only I/O errors while reading, and a line longer than [`crate::validate::MAX_LINE`] (`InvalidData`); every
/// problem with the data is a [`Record`].
pub fn check_reader<R: BufRead>(engine: &Engine, reader: R, sink: impl RecordSink) -> io::Result<(Summary, Rollup)> {
    let (summary, checker, _) = check_lines(engine, reader, sink)?;
    Ok((summary, checker.rollup()))
}

/// Checks every line of `reader` as one stream into `sink`: the counts, the checker at the end, and the sink.
fn check_lines<'e, R: BufRead, S: RecordSink>(
    engine: &'e Engine,
    mut reader: R,
    sink: S,
) -> io::Result<(Summary, StreamChecker<'e>, S)> {
    struct Lines<'e, S> {
        checker: StreamChecker<'e>,
        summary: Summary,
        sink: S,
    }
    impl<S: RecordSink> Consumer<&[u8]> for Lines<'_, S> {
        fn consume(&mut self, bytes: &[u8]) -> ControlFlow<()> {
            let rec = self.checker.check(self.summary.records + 1, bytes);
            self.summary.add(&rec);
            self.sink.record(rec)
        }
        fn idle(&mut self) {
            self.sink.idle();
        }
    }
    let mut lines = Lines { checker: StreamChecker::new(engine), summary: Summary::default(), sink };
    // Framed as message mode frames its input: a file of one pretty-printed envelope is a stream of that message.
    let first = crate::validate::start_records(&mut reader, &mut |bytes, hint| {
        let mut rec = lines.checker.check(lines.summary.records + 1, &bytes);
        if let (Some(hint), Some(first)) = (hint, rec.errors.first_mut()) {
            first.message.push_str(&hint);
        }
        crate::validate::place_in_document(&bytes, &mut rec.errors);
        lines.summary.add(&rec);
        lines.sink.record(rec)
    })?;
    if let Some(first) = first {
        if lines.consume(&first).is_continue() {
            crate::validate::each_line_here(&mut reader, &mut lines)?;
        }
    }
    Ok((lines.summary, lines.checker, lines.sink))
}

/// [`check_reader`] for output that is bytes: each record is written by `format` into one buffer, which goes to
/// `sink` once per batch of input, whenever the input is idle (so a live stream's records are seen as they come)
/// and at most 64 KiB at a time, byte for byte what formatting the records of [`check_reader`] one after another
/// gives. The rollup is not built (use [`check_reader`] or a [`StreamChecker`] for it).
///
/// # Errors
/// Only I/O errors while reading, and a line longer than [`crate::validate::MAX_LINE`] (`InvalidData`); every
/// problem with the data is a record.
pub fn check_reader_into<R: BufRead>(
    engine: &Engine,
    reader: R,
    format: Format<'_>,
    sink: &mut dyn ByteSink,
) -> io::Result<Summary> {
    /// Records written into one buffer, handed to the byte sink when the input is idle or the buffer is full.
    struct Buffered<'a> {
        format: Format<'a>,
        sink: &'a mut dyn ByteSink,
        buf: Vec<u8>,
        stopped: bool,
    }
    impl Buffered<'_> {
        fn flush(&mut self) -> ControlFlow<()> {
            if !self.buf.is_empty() && !self.stopped {
                self.stopped = self.sink.write(&self.buf).is_break();
                self.buf.clear();
            }
            if self.stopped {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }
    }
    impl RecordSink for Buffered<'_> {
        fn record(&mut self, rec: Record) -> ControlFlow<()> {
            (self.format)(&rec, &mut self.buf);
            if self.buf.len() >= 64 << 10 {
                return self.flush();
            }
            ControlFlow::Continue(())
        }
        fn idle(&mut self) {
            if self.flush().is_continue() {
                self.sink.idle();
            }
        }
    }
    let (summary, _, mut out) =
        check_lines(engine, reader, Buffered { format, sink, buf: Vec::new(), stopped: false })?;
    let _ = out.flush();
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineOptions;

    fn model() -> crate::ir::Model {
        crate::load::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema")).expect("schema loads")
    }

    #[test]
    fn when_and_equals_values_compare_as_json_schema_compares_them() {
        // `12` and `12.0` are one value (serde_json's `==` told them apart, so a `when` of 12 missed a message
        // holding 12.0, where the TypeScript checker's `jsonEqual` matched it).
        use machine::json_equal;
        use serde_json::json;
        assert!(json_equal(&json!(12), &json!(12.0)));
        assert!(json_equal(&json!({"a": [1, {"b": 2.0}], "c": null}), &json!({"c": null, "a": [1.0, {"b": 2}]})));
        assert!(!json_equal(&json!(12), &json!("12")));
        assert!(!json_equal(&json!([1]), &json!([1, 1])));
        assert!(!json_equal(&json!({"a": 1}), &json!({"b": 1})));
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

    /// A sum is written as the generated types write numbers: whole as an integer while it fits 64 bits (three
    /// turns of 2^53-1 tokens were `2.7021597764222972e16`), a fraction as it is.
    #[test]
    fn whole_sums_past_2_53_are_written_as_integers() {
        let e = Engine::new(model(), EngineOptions::default()).expect("a root type");
        let mut c = StreamChecker::new(&e);
        for k in 0..3 {
            let start = format!(r#"{{"id":"s{k}","time":1,"role":"agent","turn":"t{k}","ev":{{"t":"turn-start"}}}}"#);
            let end = format!(
                r#"{{"id":"e{k}","time":1,"role":"agent","turn":"t{k}","ev":{{"t":"turn-end","status":"completed","usage":{{"inputTokens":9007199254740991,"outputTokens":1,"cost":0.1}}}}}}"#
            );
            assert!(c.check(2 * k + 1, start.as_bytes()).valid);
            assert!(c.check(2 * k + 2, end.as_bytes()).valid);
        }
        let usage = serde_json::to_string(&c.rollup().parts["usage"]).expect("json");
        assert_eq!(usage, r#"{"inputTokens":27021597764222972,"outputTokens":3,"cost":0.30000000000000004}"#);
    }

    /// A package without `x-sequence` has no sequence rules and an empty rollup besides the counts.
    #[test]
    fn without_declarations_nothing_is_a_sequence_violation() {
        let mut m = model();
        if let Some(p) = m.protocol.as_mut() {
            p.sequence = crate::ir::Sequence::default();
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

    /// A kept value as `read_of_value` keeps it: a scalar as it is, an array or object as `null`.
    fn scalar(v: &Value) -> Value {
        if v.is_array() || v.is_object() {
            Value::Null
        } else {
            v.clone()
        }
    }

    /// What `read_of_value` keeps, taken from the whole parsed `Value` (the oracle).
    fn projection(m: &Machine, v: &Value) -> Option<Value> {
        let (envelope, union, event) = m.read_keys();
        let mut out = Map::new();
        for (k, x) in v.as_object()? {
            if k == union {
                if let Some(ev) = x.as_object() {
                    let kept = ev.iter().filter(|(k, _)| event.contains(&k.as_str()));
                    out.insert(k.clone(), Value::Object(kept.map(|(k, v)| (k.clone(), scalar(v))).collect()));
                }
            } else if envelope.contains(&k.as_str()) {
                out.insert(k.clone(), scalar(x));
            }
        }
        Some(Value::Object(out))
    }

    /// The word-at-a-time backslash test finds a backslash at every position of every length a word loop and its
    /// tail cover, and takes no neighbour of it (`[`, `]`, the same byte with its high bit set) for one.
    #[test]
    fn a_backslash_is_found_wherever_it_is_and_only_there() {
        for len in 0..=25 {
            for fill in [b'a', b'[', b']', 0xdc, 0x00, 0xff] {
                let plain = vec![fill; len];
                assert!(!machine::has_backslash(&plain), "{len} bytes of {fill:#x}");
                for at in 0..len {
                    let mut b = plain.clone();
                    b[at] = b'\\';
                    assert!(machine::has_backslash(&b), "{len} bytes of {fill:#x}, a backslash at {at}");
                }
            }
        }
    }

    /// A rejected line's parts read without parsing the rest are what the whole parsed line gives: the last of a
    /// repeated key (an event object, then one that is not), escaped keys decoded, values of every kind, large
    /// values skipped, and nothing for a line that is no object or not one JSON value.
    #[test]
    fn a_rejected_line_reads_as_its_parsed_value() {
        let engine = Engine::new(model(), EngineOptions::default()).expect("a root type");
        let m = &engine.sequence().machine;
        let (envelope, union, event) = m.read_keys();
        assert_eq!((envelope.contains(&"role"), union, event.contains(&"t")), (true, "ev", true));
        assert!(event.contains(&"call") && envelope.contains(&"turn"), "{event:?} {envelope:?}");
        for text in [
            r#"{"id":"m1","time":1,"role":"agent","turn":"t1","ev":{"t":"tool-call-start","call":"c1","name":"x","title":"y","description":"z","args":{"a":[1,2,{"b":3}]}}}"#,
            r#"{"id":"m1","role":"agent","ev":{"t":"turn-end","status":"done"},"extra":[1,2,3]}"#,
            r#"{"r\u006fle":"user","ev":{"\u0074":"abort","call":7},"id":{"x":1}}"#,
            r#"{"role":"agent","ev":{"t":"turn-start"},"ev":[1,2]}"#,
            r#"{"role":"agent","ev":5,"ev":{"t":"turn-start","t":"turn-end"}}"#,
            r#"{"role":null,"ev":{"t":null,"agentId":["a"]},"subagent":{"deep":[[[[]]]]}}"#,
            r#"{"ev":"text","turn":"t"}"#,
            r#"{}"#,
            r#"{"role":"agent","ev":{"t":"text","text":"\ud83d\ude00 \"\\u"},"x":["\uD83D\uDE00",-1.5e300,1e-400]}"#,
        ] {
            let v: Value = serde_json::from_str(text).expect("JSON");
            assert_eq!(machine::read_of_value(m, text.as_bytes()), projection(m, &v), "{text}");
        }
        for text in ["[1]", "3", "\"a\"", "{\"role\":\"agent\"} x", "{\"role\":", "null"] {
            assert_eq!(machine::read_of_value(m, text.as_bytes()), None, "{text}");
        }
        // Not JSON every checker reads, in a value no rule reads (serde_json skips it unchecked) or one it reads:
        // nothing, as the TypeScript checker reads such a line.
        for bad in [r#""\ud800""#, r#""\udc00x""#, r#""\ud800\u0041""#, r#""a\ud83d""#, "1e400", "-1e999", "[[1e309]]"]
        {
            for text in [
                format!(r#"{{"role":"agent","ev":{{"t":"turn-start"}},"x":{bad}}}"#),
                format!(r#"{{"role":"agent","ev":{{"t":"turn-start","y":{{"z":{bad}}}}}}}"#),
                format!(r#"{{"role":"agent","turn":{bad},"ev":{{"t":"turn-start"}}}}"#),
            ] {
                assert_eq!(machine::read_of_value(m, text.as_bytes()), None, "{text}");
            }
        }
    }

    /// The numbers a rollup sum reads from a captured object are what the parsed object gives: the last of duplicate
    /// keys, nothing for a value that is not a number, escaped keys decoded; not an object gives nothing.
    #[test]
    fn sums_read_a_captured_object_as_the_parsed_object() {
        let names: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        for text in [
            r#"{"a":1,"b":2.5,"c":-3}"#,
            r#"{"a":1,"a":7,"x":{"a":100},"b":"2"}"#,
            r#"{"\u0061":4,"b":null,"c":[1]}"#,
            r#"{}"#,
            r#"{"c":1e3,"z":[{"a":1}],"b":0}"#,
        ] {
            let v: Value = serde_json::from_str(text).expect("json");
            let want: Vec<Option<f64>> =
                names.iter().map(|n| v.as_object().and_then(|o| o.get(n)).and_then(Value::as_f64)).collect();
            assert_eq!(machine::numbers_at(text.as_bytes(), &names), Some(want), "{text}");
        }
        for text in ["[1]", "3", "\"a\"", "{\"a\":1} x"] {
            assert_eq!(machine::numbers_at(text.as_bytes(), &names), None, "{text}");
        }
    }

    /// The state's tables tell keys apart by every byte and by length (a hash reads a short key in one word and a
    /// long one in overlapping words): keys that differ only by a trailing or leading NUL, by one byte at any
    /// position, or by length are distinct; each repeated key is found, with the line it was first used on.
    #[test]
    fn keys_that_differ_by_one_byte_or_in_length_are_told_apart() {
        let e = Engine::new(model(), EngineOptions::default()).expect("a root type");
        let mut ids: Vec<String> = Vec::new();
        for n in 1..=20 {
            let base: String = "abcdefghijklmnopqrstuvwxyz".chars().take(n).collect();
            ids.push(base.clone());
            ids.push(format!("{base}\\u0000"));
            ids.push(format!("\\u0000{base}"));
            for at in [0, n / 2, n - 1] {
                let mut b: Vec<char> = base.chars().collect();
                b[at] = 'Z';
                ids.push(b.into_iter().collect());
            }
        }
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        let mut c = StreamChecker::new(&e);
        let line = |id: &str| format!(r#"{{"id":"{id}","time":1,"role":"user","ev":{{"t":"text","text":"x"}}}}"#);
        let mut first = std::collections::HashMap::new();
        for (i, id) in ids.iter().chain(unique.iter()).enumerate() {
            let r = c.check(i + 1, line(id).as_bytes());
            match first.get(id) {
                None => {
                    assert!(r.valid, "{id}: {r:?}");
                    first.insert(id.clone(), i + 1);
                }
                Some(&l) => {
                    assert_eq!((r.errors[0].rule, r.errors[0].related), ("id.duplicate", Some(l)), "{id}");
                }
            }
        }
        assert_eq!(c.rollup().messages.rejected as usize, ids.len() + unique.len() - first.len());
    }

    /// A crafted stream cannot make the checker quadratic: with 20,000 tool calls open in one turn, each of 20,000
    /// `turn-end`s finds the first-opened open call through an index (a scan and sort of the open calls per
    /// `turn-end` took minutes on such a stream), and names it.
    #[test]
    fn many_open_calls_and_as_many_turn_ends_stay_linear() {
        let e = Engine::new(model(), EngineOptions::default()).expect("a root type");
        let mut c = StreamChecker::new(&e);
        let n = 20_000;
        let start = std::time::Instant::now();
        let turn = br#"{"id":"s","time":1,"role":"agent","turn":"t1","ev":{"t":"turn-start"}}"#;
        assert!(c.check(1, turn).valid);
        for i in 0..n {
            let l = format!(
                r#"{{"id":"c{i}","time":1,"role":"agent","turn":"t1","ev":{{"t":"tool-call-start","call":"k{i}","name":"x","title":"t","description":"d","args":{{}}}}}}"#
            );
            assert!(c.check(i + 2, l.as_bytes()).valid);
        }
        let end = |i: usize| {
            format!(r#"{{"id":"e{i}","time":1,"role":"agent","turn":"t1","ev":{{"t":"tool-call-end","call":"k{i}"}}}}"#)
        };
        assert!(c.check(n + 2, end(0).as_bytes()).valid);
        for i in 0..n {
            let l = format!(
                r#"{{"id":"x{i}","time":1,"role":"agent","turn":"t1","ev":{{"t":"turn-end","status":"completed"}}}}"#
            );
            let r = c.check(n + 3 + i, l.as_bytes());
            assert_eq!((r.errors[0].rule, r.errors[0].related), ("turn.end-open-call", Some(3)), "{r:?}");
            assert!(r.errors[0].message.contains("`k1`"), "{r:?}");
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(60), "took {:?}", start.elapsed());
    }

    /// The first-opened open call a `turn-end` names is the same whether the open calls are few (a scan) or many
    /// (the index kept past 16 open): calls are closed one by one from the first while a `turn-end` after each
    /// close names the next, from 40 open down to none and again from a few after the index was dropped; and a
    /// stream that once held 20,000 open calls does not make the scan of a few open ones walk that room.
    #[test]
    fn the_first_open_call_is_found_with_few_or_many_open() {
        let e = Engine::new(model(), EngineOptions::default()).expect("a root type");
        let mut c = StreamChecker::new(&e);
        let mut line = 1;
        let mut next = |c: &mut StreamChecker<'_>, body: String| {
            line += 1;
            (line, c.check(line, body.as_bytes()))
        };
        let msg = |id: String, ev: String| format!(r#"{{"id":"{id}","time":1,"role":"agent","turn":"t1","ev":{ev}}}"#);
        let open = |i: usize| {
            msg(
                format!("o{i}"),
                format!(
                    r#"{{"t":"tool-call-start","call":"k{i}","name":"x","title":"t","description":"d","args":{{}}}}"#
                ),
            )
        };
        let close = |i: usize| msg(format!("c{i}"), format!(r#"{{"t":"tool-call-end","call":"k{i}"}}"#));
        let end = |i: usize| msg(format!("e{i}"), r#"{"t":"turn-end","status":"completed"}"#.to_string());
        assert!(c.check(1, msg("s".into(), r#"{"t":"turn-start"}"#.into()).as_bytes()).valid);
        let mut opened = std::collections::BTreeMap::new();
        let mut ends = 0;
        for round in 0..2 {
            let calls = if round == 0 { 0..40 } else { 100..105 };
            for i in calls.clone() {
                let (l, r) = next(&mut c, open(i));
                assert!(r.valid, "{r:?}");
                opened.insert(i, l);
            }
            for i in calls {
                ends += 1;
                let (_, r) = next(&mut c, end(ends));
                let want = format!("`k{i}`");
                assert_eq!((r.errors[0].rule, r.errors[0].related), ("turn.end-open-call", opened.get(&i).copied()));
                assert!(r.errors[0].message.contains(&want), "{want}: {r:?}");
                assert!(next(&mut c, close(i)).1.valid);
            }
        }
        // A peak of 20,000 open, all closed; then 20,000 times one call open while a turn-end is refused.
        let start = std::time::Instant::now();
        for i in 1000..21_000 {
            assert!(next(&mut c, open(i)).1.valid);
        }
        for i in 1000..21_000 {
            assert!(next(&mut c, close(i)).1.valid);
        }
        for i in 30_000..50_000 {
            assert!(next(&mut c, open(i)).1.valid);
            ends += 1;
            assert_eq!(next(&mut c, end(ends)).1.errors[0].rule, "turn.end-open-call");
            assert!(next(&mut c, close(i)).1.valid);
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(60), "took {:?}", start.elapsed());
    }

    /// A message that needs an open turn while none is open names the latest rejected line that would have opened
    /// one, without a scan of the (up to 4,096) remembered ones per message: 4,096 rejected `turn-start`s, then
    /// 50,000 permission requests outside a turn; the latest is still found after accepted lines take keys away.
    #[test]
    fn the_latest_rejected_opening_is_found_without_a_scan() {
        let e = Engine::new(model(), EngineOptions::default()).expect("a root type");
        let mut c = StreamChecker::new(&e);
        let k = 4096;
        let start = std::time::Instant::now();
        let bad_start = |i: usize| {
            format!(r#"{{"id":"a{i}","time":1,"role":"agent","turn":"t{i}","ev":{{"t":"turn-start","bogus":1}}}}"#)
        };
        for i in 0..k {
            assert!(!c.check(i + 1, bad_start(i).as_bytes()).valid);
        }
        let request = |i: usize| {
            format!(
                r#"{{"id":"p{i}","time":1,"role":"agent","ev":{{"t":"permission-request","call":"c1","toolName":"b","title":"x","description":"d","args":{{}}}}}}"#
            )
        };
        let mut line = k;
        for i in 0..50_000 {
            line += 1;
            let r = c.check(line, request(i).as_bytes());
            assert_eq!((r.errors[0].rule, r.errors[0].caused_by), ("permission.outside-turn", Some(k)), "{r:?}");
        }
        // The latest one's key opens and closes for real: the one before it is the latest now.
        let last = k - 1;
        for ev in [r#"{"t":"turn-start"}"#, r#"{"t":"turn-end","status":"completed"}"#] {
            line += 1;
            let l = format!(r#"{{"id":"o{line}","time":1,"role":"agent","turn":"t{last}","ev":{ev}}}"#);
            assert!(c.check(line, l.as_bytes()).valid);
        }
        let r = c.check(line + 1, request(99_999).as_bytes());
        assert_eq!(r.errors[0].caused_by, Some(k - 1), "{r:?}");
        assert!(start.elapsed() < std::time::Duration::from_secs(60), "took {:?}", start.elapsed());
    }

    /// The bytes of [`check_reader_into`] are the records of [`check_reader`] formatted one after another, over
    /// more than one batch of input and past the 64 KiB flush; a sink that says stop gets nothing more.
    #[test]
    fn written_stream_records_are_the_records_formatted_in_order() {
        let e = Engine::new(model(), EngineOptions::default()).expect("a root type");
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/streams");
        let mut input = Vec::new();
        for _ in 0..400 {
            for f in ["seed-realistic-flow.jsonl", "invalid-echoes-point-to-their-cause.jsonl"] {
                input.extend(std::fs::read(dir.join(f)).expect("fixture"));
            }
        }
        let format = |rec: &Record, out: &mut Vec<u8>| {
            let _ = serde_json::to_writer(&mut *out, rec);
            out.push(b'\n');
        };
        let mut want = Vec::new();
        let (counts, rollup) = check_reader(&e, input.as_slice(), |r: Record| format(&r, &mut want)).expect("read");
        use crate::validate::Bytes;
        let mut got = Bytes(Vec::new(), None);
        let s = check_reader_into(&e, input.as_slice(), &format, &mut got).expect("read");
        assert!(want.len() > 1 << 20, "more than one batch: {}", want.len());
        assert!(got.0 == want, "the bytes differ");
        assert_eq!(s, counts);
        assert!(rollup.messages.accepted > 0);
        let mut stopped = Bytes(Vec::new(), Some(100));
        check_reader_into(&e, input.as_slice(), &format, &mut stopped).expect("read");
        // The first write (at the 64 KiB flush) said stop: nothing after it.
        assert!(stopped.0.len() < (64 << 10) + 4096 && want.starts_with(&stopped.0), "went on after a stop");
    }

    /// Writes `v` as JSON with every character of every string value escaped (`\u00XX`), keys as they are.
    fn escaped(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push('"');
                for u in s.encode_utf16() {
                    out.push_str(&format!("\\u{u:04x}"));
                }
                out.push('"');
            }
            Value::Array(a) => {
                out.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    escaped(x, out);
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
                    escaped(x, out);
                }
                out.push('}');
            }
            other => out.push_str(&other.to_string()),
        }
    }

    /// The one-pass path (the fast scanner finds the values the rules read) and the parsed path (the rules read a
    /// `serde_json::Value`) give the same records and rollup, on every stream of both protocols and on the same
    /// streams with every string value escaped; and the one-pass path is taken for the plain lines.
    #[test]
    fn the_one_pass_path_reads_what_the_parsed_path_reads() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for (schema, streams) in
            [("schema", "tests/fixtures/streams"), ("examples/happy-wire/schema", "examples/happy-wire/streams")]
        {
            let e = Engine::new(crate::load::load(&dir.join(schema)).expect("schema loads"), EngineOptions::default())
                .expect("a root type");
            let c = e.sequence();
            assert!(c.capture.is_some(), "{schema}: the scanner can find what the rules read");
            let mut files: Vec<_> = std::fs::read_dir(dir.join(streams))
                .expect("streams")
                .map(|f| f.expect("entry").path())
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .collect();
            files.sort();
            assert!(files.len() > 3, "{streams}");
            let (mut lines, mut one_pass) = (0, 0);
            for f in files {
                let text = std::fs::read_to_string(&f).expect("stream");
                let plain: Vec<Vec<u8>> =
                    text.lines().filter(|l| !l.trim().is_empty()).map(|l| l.as_bytes().to_vec()).collect();
                let escapes: Vec<Vec<u8>> = plain
                    .iter()
                    .map(|l| match crate::engine::parse_line(l) {
                        Ok(v) => {
                            let mut s = String::new();
                            escaped(&v, &mut s);
                            s.into_bytes()
                        }
                        Err(_) => l.clone(),
                    })
                    .collect();
                let run = |lines: &[Vec<u8>], parsed: bool| {
                    let mut k = StreamChecker::new(&e);
                    let recs: Vec<Value> = lines
                        .iter()
                        .enumerate()
                        .map(|(i, l)| {
                            // A line the checkers parse (a repeated key is refused: a `Value` would hide it).
                            let r = match crate::engine::parse_line(l) {
                                Ok(v) if parsed => k.check_value(i + 1, &v),
                                _ => k.check(i + 1, l),
                            };
                            serde_json::to_value(r).expect("json")
                        })
                        .collect();
                    (recs, serde_json::to_value(k.rollup()).expect("json"))
                };
                let want = run(&plain, true);
                assert_eq!(run(&plain, false), want, "{}: one pass against parsed", f.display());
                assert_eq!(run(&escapes, false), want, "{}: escaped, one pass", f.display());
                assert_eq!(run(&escapes, true), want, "{}: escaped, parsed", f.display());
                let mut scan = Captured::default();
                for l in &plain {
                    lines += 1;
                    one_pass += usize::from(e.capture_fast(l, c.capture.as_ref().expect("plan"), &mut scan));
                }
            }
            assert!(one_pass * 10 >= lines * 8, "{schema}: {one_pass} of {lines} lines took the one pass");
        }
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
    /// stream code (the interpreter, the generated crate's checker), the TypeScript stream emitter or its template is
    /// a protocol name (of the v2 protocol and of
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
        let sources = [
            "src/stream.rs",
            "src/stream/machine.rs",
            "src/stream/rules.rs",
            "src/emit/ts_stream.rs",
            "src/emit/rust/stream.rs",
            "templates/ts/stream.ts.j2",
        ];
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
