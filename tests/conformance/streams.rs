//! Stream conformance: every stream fixture in `tests/fixtures/streams/` goes through the Rust checker
//! (`wiregen::stream`), the real CLI (`wiregen validate --stream`), the emitted TypeScript checker (the built
//! `session-wire` package, one node process for every stream) and the generated Rust crate's checker
//! (`session_wire::stream`). All must reject the same lines with the same
//! first error (rule id and pointer; for stream rules the message too) and fold the same rollup.
//!
//! A stream fixture is `NAME.jsonl` (one envelope per line) with a sidecar `NAME.expect.json`:
//! `{"about": "...", "valid": true}` or `{"about": "...", "valid": false, "invalid": [{"line": 3, "rule":
//! "turn.already-open", "pointer": "/ev/t"}, ...]}` listing every rejected line with its first error, in order
//! (the first entry is the stream's first violation). A valid fixture's rollup is pinned in `NAME.rollup.json`;
//! update those goldens with `WIREGEN_UPDATE_GOLDEN=1` (ignored when `CI` is set).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufReader;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use wiregen::engine::{Engine, EngineOptions};

use crate::fixtures::root;

/// One stream fixture.
struct StreamFixture {
    name: String,
    path: PathBuf,
    valid: bool,
    /// Every rejected line with its first error: (line, rule, pointer).
    invalid: Vec<(u64, String, String)>,
}

/// A checker's answer on one stream: the first error of every rejected line, and the rollup.
#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    /// (line, rule, pointer, message)
    invalid: Vec<(u64, String, String, String)>,
    /// Per rejected line: the `related` and `causedBy` lines of its first error.
    links: Vec<(Option<u64>, Option<u64>)>,
    rollup: Value,
}

fn dir() -> PathBuf {
    root().join("tests/fixtures/streams")
}

fn fixtures() -> Vec<StreamFixture> {
    fixtures_in(&dir())
}

fn fixtures_in(dir: &Path) -> Vec<StreamFixture> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the stream fixture folder exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let name = path.file_stem().and_then(|s| s.to_str()).expect("utf-8 name").to_string();
            let exp_path = path.with_extension("expect.json");
            let text = std::fs::read_to_string(&exp_path).unwrap_or_else(|e| panic!("{}: {e}", exp_path.display()));
            let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", exp_path.display()));
            assert!(v["about"].as_str().is_some_and(|s| !s.is_empty()), "{name}: `about` is required");
            let valid = v["valid"].as_bool().unwrap_or_else(|| panic!("{name}: `valid` is required"));
            let invalid: Vec<(u64, String, String)> = v
                .get("invalid")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|i| {
                            let s =
                                |k: &str| i[k].as_str().unwrap_or_else(|| panic!("{name}: invalid[].{k}")).to_string();
                            (
                                i["line"].as_u64().unwrap_or_else(|| panic!("{name}: invalid[].line")),
                                s("rule"),
                                s("pointer"),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            assert_eq!(valid, invalid.is_empty(), "{name}: `valid` must say whether `invalid` is empty");
            StreamFixture { name, path, valid, invalid }
        })
        .collect()
}

fn protocol() -> wiregen::ir::Model {
    wiregen::load::load(&root().join("schema")).expect("schema/ loads")
}

fn rust(fx: &[StreamFixture]) -> Vec<Outcome> {
    rust_with(protocol(), fx)
}

fn rust_with(p: wiregen::ir::Model, fx: &[StreamFixture]) -> Vec<Outcome> {
    let engine = Engine::new(p, EngineOptions::default()).expect("the schema has a root type");
    fx.iter()
        .map(|f| {
            let mut invalid = Vec::new();
            let mut links = Vec::new();
            let reader = BufReader::new(File::open(&f.path).expect("open stream"));
            let (_, rollup) = wiregen::stream::check_reader(&engine, reader, |rec: wiregen::validate::Record| {
                if let Some(e) = rec.errors.first() {
                    invalid.push((rec.line as u64, e.rule.to_string(), e.pointer.clone(), e.message.clone()));
                    links.push((e.related.map(|l| l as u64), e.caused_by.map(|l| l as u64)));
                }
            })
            .expect("read stream");
            Outcome { invalid, links, rollup: serde_json::to_value(rollup).expect("rollup serializes") }
        })
        .collect()
}

fn run_cli(args: &[&str], fx: &[StreamFixture]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_wiregen"))
        .current_dir(root())
        .args(args)
        .args(fx.iter().map(|f| &f.path))
        .output()
        .expect("wiregen runs");
    let any_invalid = fx.iter().any(|f| !f.valid);
    assert_eq!(
        out.status.code(),
        Some(i32::from(any_invalid)),
        "wiregen {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The real binary, twice for the whole corpus: the records (split per file by line count), then the summaries.
fn cli(fx: &[StreamFixture]) -> Vec<Outcome> {
    cli_with(&[], fx)
}

/// [`cli`] with more arguments (`--schema DIR`).
fn cli_with(more: &[&str], fx: &[StreamFixture]) -> Vec<Outcome> {
    let args = |a: &[&'static str]| -> Vec<&str> { a.iter().copied().chain(more.iter().copied()).collect() };
    let records = run_cli(&args(&["validate", "--stream", "--format", "json"]), fx);
    let mut records = records.lines().map(|l| serde_json::from_str::<Value>(l).expect("a JSON record"));
    let summaries = run_cli(&args(&["validate", "--stream", "--summary", "--format", "json"]), fx);
    let summaries: Vec<Value> = summaries.lines().map(|l| serde_json::from_str(l).expect("a JSON summary")).collect();
    assert_eq!(summaries.len(), fx.len(), "one summary per stream");
    fx.iter()
        .zip(summaries)
        .map(|(f, s)| {
            let bytes = std::fs::read(&f.path).expect("read");
            let n = bytes.iter().filter(|b| **b == b'\n').count()
                + usize::from(!bytes.is_empty() && !bytes.ends_with(b"\n"));
            assert_eq!(s["records"].as_u64(), Some(n as u64), "{}: summary counts every line", f.name);
            let mut invalid = Vec::new();
            let mut links = Vec::new();
            for i in 1..=n {
                let r = records.next().unwrap_or_else(|| panic!("{}: record for line {i}", f.name));
                assert_eq!(r["line"].as_u64(), Some(i as u64), "{}: records in order", f.name);
                assert_eq!(
                    r["valid"].as_bool(),
                    Some(r["errors"].as_array().is_some_and(Vec::is_empty)),
                    "{}: `valid` matches `errors`",
                    f.name
                );
                if let Some(e) = r["errors"].get(0) {
                    let s = |k: &str| e[k].as_str().expect("string field").to_string();
                    invalid.push((i as u64, s("rule"), s("pointer"), s("message")));
                    links.push((e["related"].as_u64(), e["causedBy"].as_u64()));
                }
            }
            let first = invalid.first().zip(links.first()).map(|((l, r, p, m), (related, caused_by))| {
                let mut e = json!({"line": l, "pointer": p, "rule": r, "message": m});
                if let Some(x) = related {
                    e["related"] = json!(x);
                }
                if let Some(x) = caused_by {
                    e["causedBy"] = json!(x);
                }
                e
            });
            assert_eq!(s["firstError"], first.unwrap_or(Value::Null), "{}: the summary's first error", f.name);
            Outcome { invalid, links, rollup: s["rollup"].clone() }
        })
        .collect()
}

/// The emitted TypeScript checker: one node process for every stream. Also checks, inside, that the array API
/// (`checkSessionStream` / `rollupSession`) agrees with the line API.
fn ts(fx: &[StreamFixture]) -> Vec<Outcome> {
    // Built once per test process, shared with the Zod checker (never two builds of one package at once).
    ts_with(crate::zod::built_package(), &root().join("generated/ts"), fx)
}

/// [`ts`] with another built package (`dist`, in its package folder `pkg`).
fn ts_with(dist: &Path, pkg: &Path, fx: &[StreamFixture]) -> Vec<Outcome> {
    let files: Vec<String> = fx.iter().map(|f| f.path.to_str().expect("utf-8 path").to_string()).collect();
    let script = root().join("tests/conformance/stream-check.mjs");
    let out = crate::node::run_node(
        pkg,
        &[script.to_str().expect("utf-8 path"), dist.to_str().expect("utf-8 path")],
        serde_json::to_string(&files).expect("json"),
    );
    let results: Vec<Value> = serde_json::from_str(&out).expect("node prints JSON");
    assert_eq!(results.len(), fx.len());
    let outcome = |v: &Value| Outcome {
        invalid: v["invalid"]
            .as_array()
            .expect("invalid[]")
            .iter()
            .map(|e| {
                let s = |k: &str| e[k].as_str().unwrap_or_else(|| panic!("{k} in {e}")).to_string();
                (e["line"].as_u64().expect("line"), s("rule"), s("pointer"), s("message"))
            })
            .collect(),
        links: v["invalid"]
            .as_array()
            .expect("invalid[]")
            .iter()
            .map(|e| (e["related"].as_u64(), e["causedBy"].as_u64()))
            .collect(),
        rollup: v["rollup"].clone(),
    };
    fx.iter()
        .zip(&results)
        .map(|(f, r)| {
            let o = outcome(r);
            // A parsed value has no repeated key (`JSON.parse` kept the last member): the array API is compared on
            // streams that repeat none.
            if !r["arrayApi"].is_null() && !crate::fixtures::repeats_a_key(&std::fs::read(&f.path).expect("read")) {
                let a = outcome(&r["arrayApi"]);
                // A parsed value has no text: a too-deep line's message says where in the line, a value's cannot.
                let mut o = o.clone();
                for e in o.invalid.iter_mut().filter(|e| e.1 == "too-deep") {
                    e.3.truncate(e.3.find(" (at ").unwrap_or(e.3.len()));
                }
                assert_eq!(
                    a, o,
                    "{}: checkSessionStream/rollupSession disagree with SessionStreamChecker.checkLine",
                    f.name
                );
            }
            o
        })
        .collect()
}

/// JSON numbers compared by value (JavaScript prints `0`, serde_json may print `0.0`).
pub fn normalize(v: &Value) -> Value {
    match v {
        Value::Number(n) => json!(n.as_f64()),
        Value::Array(a) => Value::Array(a.iter().map(normalize).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), normalize(v))).collect()),
        other => other.clone(),
    }
}

/// The protocol's sequence rule ids (from its declarations), in check order.
fn sequence_rule_ids() -> Vec<&'static str> {
    let m = protocol();
    m.protocol.as_ref().map(|p| p.sequence.rules.iter().map(|r| r.id).collect()).unwrap_or_default()
}

/// The lines of a stream file as the CLI reads them: split on `\n`, one trailing `\r` dropped per line, no record
/// after a final newline.
fn file_lines(path: &Path) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(path).expect("read stream");
    let mut lines: Vec<Vec<u8>> = bytes.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
    if bytes.ends_with(b"\n") || bytes.is_empty() {
        lines.pop();
    }
    for l in &mut lines {
        if l.last() == Some(&b'\r') {
            l.pop();
        }
    }
    lines
}

/// A generated crate's stream checker (`<crate>::stream`) on every fixture, as an [`Outcome`].
macro_rules! crate_outcomes {
    ($krate:ident, $fx:expr) => {
        $fx.iter()
            .map(|f| {
                let mut checker = $krate::stream::StreamChecker::new();
                let (mut invalid, mut links) = (Vec::new(), Vec::new());
                for line in file_lines(&f.path) {
                    let rec = checker.check_line(&line);
                    if let Some(e) = rec.errors.first() {
                        invalid.push((rec.line as u64, e.rule.clone(), e.pointer.clone(), e.message.clone()));
                        links.push((e.related.map(|l| l as u64), e.caused_by.map(|l| l as u64)));
                    }
                }
                Outcome { invalid, links, rollup: checker.rollup() }
            })
            .collect::<Vec<Outcome>>()
    };
}

/// The same outcome, as far as this checker can be held to it: message-level messages are each checker's own.
fn differs(reference: &Outcome, other: &Outcome) -> Option<String> {
    let (a, b) = (record_keys(reference), record_keys(other));
    if a != b {
        return Some(format!("rejected lines differ:\n  rust:  {a:?}\n  other: {b:?}"));
    }
    if reference.links != other.links {
        return Some(format!("related/causedBy differ:\n  rust:  {:?}\n  other: {:?}", reference.links, other.links));
    }
    if normalize(&reference.rollup) != normalize(&other.rollup) {
        return Some(format!("rollups differ:\n  rust:  {}\n  other: {}", reference.rollup, other.rollup));
    }
    let keys = |v: &Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>());
    if keys(&reference.rollup) != keys(&other.rollup)
        || keys(&reference.rollup["config"]) != keys(&other.rollup["config"])
    {
        return Some("rollup keys come in a different order".into());
    }
    None
}

#[test]
fn every_stream_fixture_gets_the_same_verdict_and_rollup_from_every_checker() {
    let fx = fixtures();
    let reference = rust(&fx);
    let mut failures = Vec::new();
    assert!(sequence_rule_ids().iter().all(|r| r.contains('.')), "a sequence rule id has a dot");
    assert!(wiregen::rules::Rule::ALL.iter().all(|r| !r.id().contains('.')), "a message-level rule id has none");

    // The Rust checker against the fixtures' expectations, and the pinned rollups.
    for (f, o) in fx.iter().zip(&reference) {
        let got: Vec<(u64, String, String)> = o.invalid.iter().map(|(l, r, p, _)| (*l, r.clone(), p.clone())).collect();
        if got != f.invalid {
            failures.push(format!("rust      {}: expected rejected lines {:?}, got {:?}", f.name, f.invalid, got));
        }
        if f.valid {
            let text = format!("{}\n", serde_json::to_string_pretty(&o.rollup).expect("json"));
            if let Err(e) = crate::golden::check_golden(&f.path.with_extension("rollup.json"), &text) {
                failures.push(format!("golden    {}: rollup: {e}", f.name));
            }
        }
    }

    // Every fixture's whole outcome (each rejected line's first error with its message, and the rollup) is pinned,
    // invalid fixtures included: a change to the stream checker or to the sequence declarations cannot move a record.
    let pinned: serde_json::Map<String, Value> = fx
        .iter()
        .zip(&reference)
        .map(|(f, o)| {
            let invalid: Vec<Value> = o
                .invalid
                .iter()
                .zip(&o.links)
                .map(|((l, r, p, m), (related, caused_by))| {
                    let mut e = json!({"line": l, "rule": r, "pointer": p, "message": m});
                    if let Some(x) = related {
                        e["related"] = json!(x);
                    }
                    if let Some(x) = caused_by {
                        e["causedBy"] = json!(x);
                    }
                    e
                })
                .collect();
            (f.name.clone(), json!({"invalid": invalid, "rollup": o.rollup}))
        })
        .collect();
    let text = format!("{}\n", serde_json::to_string_pretty(&pinned).expect("json"));
    if let Err(e) = crate::golden::check_golden(&dir().join("outcomes.golden.json"), &text) {
        failures.push(format!("golden    outcomes.golden.json: {e}"));
    }

    // The CLI, the TypeScript checker and the generated Rust crate's checker against the Rust checker.
    let krate = crate_outcomes!(session_wire, fx);
    for (name, outcomes) in [("cli", cli(&fx)), ("ts", ts(&fx)), ("rust-crate", krate)] {
        assert_eq!(outcomes.len(), fx.len());
        for ((f, r), o) in fx.iter().zip(&reference).zip(&outcomes) {
            if let Some(why) = differs(r, o) {
                failures.push(format!("{name:<9} {}: {why}", f.name));
            }
        }
    }

    // Coverage: every stream rule is the first violation of at least two streams.
    let mut per_rule: BTreeMap<&str, usize> = sequence_rule_ids().into_iter().map(|r| (r, 0)).collect();
    let mut message_level = 0;
    for f in &fx {
        if let Some((_, rule, _)) = f.invalid.first() {
            match per_rule.get_mut(rule.as_str()) {
                Some(n) => *n += 1,
                None => message_level += 1,
            }
        }
    }
    let valid = fx.iter().filter(|f| f.valid).count();
    eprintln!(
        "stream fixtures: {} ({valid} valid, {message_level} first rejected by a message-level rule); first violation per stream rule: {}",
        fx.len(),
        per_rule.iter().map(|(r, n)| format!("{r}={n}")).collect::<Vec<_>>().join(", ")
    );
    for (rule, n) in &per_rule {
        if *n < 2 {
            failures.push(format!("coverage  {rule}: only {n} stream(s) have it as their first violation (need 2)"));
        }
    }
    assert!(
        fx.iter().any(|f| f.name == "seed-realistic-flow" && f.valid),
        "the seed's Realistic Flow is a valid fixture"
    );
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}

/// The rejected lines of an outcome as two checkers can be held to them: line, rule and pointer, and the message
/// of a sequence rule (its id has a dot, a message-level rule's never does: the fixture test checks both); a
/// message-level rule's message is each checker's own.
fn record_keys(o: &Outcome) -> Vec<(u64, String, String, Option<String>)> {
    o.invalid.iter().map(|(l, r, p, m)| (*l, r.clone(), p.clone(), r.contains('.').then(|| m.clone()))).collect()
}

/// Whether two outcomes agree: [`record_keys`], the links of each first error, and the rollup.
fn same_records(a: &Outcome, b: &Outcome) -> bool {
    record_keys(a) == record_keys(b) && a.links == b.links && normalize(&a.rollup) == normalize(&b.rollup)
}

/// happy-wire's v1 protocol declares its own sequence rules (`x-sequence` in
/// `examples/happy-wire/schema/sessionProtocol.schema.json`: `start`/`stop` with the subagent id on the envelope):
/// its streams in `examples/happy-wire/streams/` (the seed's Realistic Flow rendered in v1, and invalid v1 streams)
/// get the expected records from the Rust checker, and the same records and rollup from the CLI (`--schema`) and
/// the example's own generated TypeScript checker.
#[test]
fn happy_wire_streams_are_checked_by_its_own_sequence_rules() {
    let dir = root().join("examples/happy-wire/streams");
    let schema = crate::example::schema_dir();
    let fx = fixtures_in(&dir);
    assert!(
        fx.iter().any(|f| f.name == "seed-realistic-flow-v1" && f.valid),
        "the v1 Realistic Flow is a valid fixture"
    );
    assert!(fx.iter().filter(|f| !f.valid).count() >= 5, "invalid v1 streams");
    let model = wiregen::load::load(&schema).expect("the example's schema loads");
    assert!(!model.protocol.as_ref().expect("a protocol").sequence.rules.is_empty(), "v1 declares its rules");
    let reference = rust_with(model, &fx);
    let mut failures = Vec::new();
    for (f, o) in fx.iter().zip(&reference) {
        let got: Vec<(u64, String, String)> = o.invalid.iter().map(|(l, r, p, _)| (*l, r.clone(), p.clone())).collect();
        if got != f.invalid {
            failures.push(format!("rust      {}: expected rejected lines {:?}, got {:?}", f.name, f.invalid, got));
        }
    }
    let flow = &reference[fx.iter().position(|f| f.name == "seed-realistic-flow-v1").expect("the flow")];
    assert_eq!(flow.rollup["turns"], json!({"completed": 1, "failed": 0, "cancelled": 1}), "{}", flow.rollup);
    assert_eq!(flow.rollup["messages"], json!({"accepted": 22, "rejected": 0}));
    let schema_arg = schema.to_str().expect("utf-8 path");
    let pkg = crate::example::ts_package();
    let outcomes = [
        ("cli", cli_with(&["--schema", schema_arg], &fx)),
        ("ts", ts_with(crate::example::built_ts_package(), &pkg, &fx)),
        ("rust-crate", crate_outcomes!(happy_wire, fx)),
    ];
    for (name, outcomes) in outcomes {
        for ((f, r), o) in fx.iter().zip(&reference).zip(&outcomes) {
            if !same_records(r, o) {
                failures.push(format!(
                    "{name:<9} {}: {:?} {} / {:?} {}",
                    f.name,
                    record_keys(r),
                    r.rollup,
                    record_keys(o),
                    o.rollup
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}

/// Peak resident memory of a process, from /proc (Linux), sampled until `done`.
fn peak_rss_kib(pid: u32, done: &AtomicBool) -> u64 {
    let mut peak = 0;
    while !done.load(Ordering::Relaxed) {
        if let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            if let Some(v) = s.lines().find_map(|l| l.strip_prefix("VmHWM:")) {
                peak = peak.max(v.trim().trim_end_matches("kB").trim().parse().unwrap_or(0));
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    peak
}

/// Pipes `TURNS` turns of five messages through `wiregen validate --stream --summary -`, each text `pad` bytes
/// long; returns the bytes sent, the peak RSS in KiB and the summary.
fn run_large(turns: u32, pad: usize) -> (usize, u64, Value) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wiregen"))
        .current_dir(root())
        .args(["validate", "--stream", "--summary", "--format", "json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wiregen runs");
    let pid = child.id();
    let done = Arc::new(AtomicBool::new(false));
    let d2 = done.clone();
    let sampler = std::thread::spawn(move || peak_rss_kib(pid, &d2));
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let mut w = std::io::BufWriter::new(&mut stdin);
        let pad = "x".repeat(pad);
        let mut bytes = 0usize;
        for t in 0..turns {
            let mut lines =
                vec![format!(r#"{{"id":"s{t}","time":1,"role":"agent","turn":"t{t}","ev":{{"t":"turn-start"}}}}"#)];
            for k in 0..3 {
                lines.push(format!(
                    r#"{{"id":"x{t}-{k}","time":1,"role":"agent","turn":"t{t}","ev":{{"t":"text","text":"{pad}"}}}}"#
                ));
            }
            lines.push(format!(
                r#"{{"id":"e{t}","time":1,"role":"agent","turn":"t{t}","ev":{{"t":"turn-end","status":"completed","usage":{{"inputTokens":1,"outputTokens":2,"cost":0.5}}}}}}"#
            ));
            for l in lines {
                bytes += l.len() + 1;
                writeln!(w, "{l}").expect("write");
            }
        }
        w.flush().expect("flush");
        bytes
    });
    let bytes = writer.join().expect("writer");
    let out = child.wait_with_output().expect("wiregen finishes");
    done.store(true, Ordering::Relaxed);
    let peak = sampler.join().expect("sampler");
    assert!(out.status.success(), "wiregen failed: {}", String::from_utf8_lossy(&out.stderr));
    (bytes, peak, serde_json::from_slice(&out.stdout).expect("summary JSON"))
}

/// A 48 MB stream is checked line by line: its peak memory is within a few MiB of the same stream with short
/// texts (memory is bounded by the state and the seen ids, not by the input), and the rollup counts every turn.
#[test]
fn a_large_stream_is_checked_in_bounded_memory() {
    if !Path::new("/proc/self/status").exists() {
        return;
    }
    const TURNS: u32 = 15_000;
    let (small_bytes, small_peak, _) = run_large(TURNS, 8);
    let (bytes, peak, summary) = run_large(TURNS, 900);
    eprintln!(
        "large stream: {bytes} bytes, peak RSS {peak} KiB; same {} records in {small_bytes} bytes: {small_peak} KiB",
        TURNS * 5
    );
    assert_eq!(summary["records"], json!(TURNS * 5));
    assert_eq!(summary["invalid"], json!(0));
    assert_eq!(summary["rollup"]["turns"]["completed"], json!(TURNS));
    assert_eq!(summary["rollup"]["usage"]["inputTokens"], json!(TURNS));
    assert_eq!(summary["rollup"]["usage"]["cost"], json!(TURNS / 2));
    assert!(bytes > 45_000_000, "the stream is large: {bytes}");
    assert!(
        small_peak > 0 && peak < small_peak + 8 * 1024,
        "peak RSS {peak} KiB for {bytes} bytes vs {small_peak} KiB for {small_bytes}: the input is buffered"
    );
}

/// The text format names file, line, pointer, message and rule; `--summary` needs `--stream`; each file is its
/// own stream (a turn open at the end of one file does not carry into the next).
#[test]
fn cli_text_format_and_flags() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_wiregen")).current_dir(root()).args(args).output().expect("wiregen runs")
    };
    let f = "tests/fixtures/streams/invalid-turn-already-open.jsonl";
    let out = run(&["validate", "--stream", f]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "{f}:2: /ev/t: turn `t1` is still open: it must end before another `turn-start` [turn.already-open] (see line 1)\n"
        )
    );
    let out = run(&["validate", "--summary", f]);
    assert_eq!(out.status.code(), Some(2), "--summary without --stream is a usage error");
    // valid-live-prefix ends with t1 open; the next file starting t1 afresh is valid on its own.
    let out = run(&[
        "validate",
        "--stream",
        "--format",
        "json",
        "tests/fixtures/streams/valid-live-prefix.jsonl",
        "tests/fixtures/streams/valid-cancelled-without-abort.jsonl",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    // Without --stream the sequence rules are not applied.
    assert_eq!(run(&["validate", f]).status.code(), Some(0));
}

/// The values the sequence rules read, wherever a line holds them, gathered from every line of `streams`: a
/// mutation puts one line's value into another (a call id into another call, a turn id into another turn).
const READ_POINTERS: &[&str] =
    &["/turn", "/subagent", "/ev/call", "/ev/agentId", "/ev/status", "/role", "/id", "/ev/t"];

/// One mutation of a session, in place: delete a line, repeat one later, swap two neighbours, move one, give a
/// field another line's value, drop an optional field, or insert a line of another session. Most results still
/// pass the message-level rules, so the sequence rules decide them.
fn mutate_session(lines: &mut Vec<Value>, pool: &[Value], rng: &mut crate::rng::Rng) {
    if lines.is_empty() {
        lines.push(rng.pick(pool).clone());
        return;
    }
    let n = lines.len() as u64;
    let i = rng.below(n) as usize;
    match rng.below(7) {
        0 => {
            lines.remove(i);
        }
        1 => {
            let at = i + rng.below(n - i as u64) as usize + 1;
            let copy = lines[i].clone();
            lines.insert(at.min(lines.len()), copy);
        }
        2 if i + 1 < lines.len() => lines.swap(i, i + 1),
        3 => {
            let l = lines.remove(i);
            let at = rng.below(lines.len() as u64 + 1) as usize;
            lines.insert(at, l);
        }
        4 | 5 => {
            let held: Vec<&str> = READ_POINTERS.iter().copied().filter(|p| lines[i].pointer(p).is_some()).collect();
            if held.is_empty() {
                return;
            }
            let p = *rng.pick(&held);
            let values: Vec<&Value> = pool.iter().filter_map(|l| l.pointer(p)).collect();
            let v = (*rng.pick(&values)).clone();
            if let Some(slot) = lines[i].pointer_mut(p) {
                *slot = v;
            }
        }
        6 => {
            if rng.below(2) == 0 {
                for p in ["turn", "subagent"] {
                    if let Some(o) = lines[i].as_object_mut() {
                        o.shift_remove(p);
                    }
                }
            } else {
                let at = rng.below(n + 1) as usize;
                lines.insert(at, rng.pick(pool).clone());
            }
        }
        _ => {}
    }
}

/// Sessions made from the valid fixtures of `dir` by one to three [`mutate_session`] steps each, `per_base` from
/// every valid fixture, written to `out` as stream files (their expectations are the Rust checker's).
fn mutated_sessions(dir: &Path, out: &Path, per_base: usize, seed: u64) -> Vec<StreamFixture> {
    let _ = std::fs::remove_dir_all(out);
    std::fs::create_dir_all(out).expect("mkdir");
    let read = |f: &StreamFixture| -> Vec<Value> {
        file_lines(&f.path).iter().map(|l| serde_json::from_slice(l).expect("a valid fixture line is JSON")).collect()
    };
    let bases: Vec<Vec<Value>> = fixtures_in(dir).iter().filter(|f| f.valid).map(read).collect();
    assert!(!bases.is_empty(), "{}: valid streams to mutate", dir.display());
    let pool: Vec<Value> = bases.iter().flatten().cloned().collect();
    let mut rng = crate::rng::Rng(seed);
    let mut fx = Vec::new();
    for (b, base) in bases.iter().enumerate() {
        for k in 0..per_base {
            let mut lines = base.clone();
            for _ in 0..=rng.below(3) {
                mutate_session(&mut lines, &pool, &mut rng);
            }
            let name = format!("mutant-{b}-{k}");
            let path = out.join(format!("{name}.jsonl"));
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            std::fs::write(&path, text).expect("write a mutant");
            fx.push(StreamFixture { name, path, valid: true, invalid: Vec::new() });
        }
    }
    fx
}

/// A checker of streams, as the mutation tests call it.
type Checks<'a> = &'a dyn Fn(&[StreamFixture]) -> Vec<Outcome>;

/// Checks the mutants of the valid fixtures of a protocol through every checker: the Rust checker is the
/// reference, the CLI, the TypeScript checker and the generated crate's checker must give the same records
/// (first errors, their links) and rollups. Returns the failures and how many mutants had a sequence violation.
fn mutants_agree(
    reference: Checks<'_>,
    others: &[(&str, Checks<'_>)],
    fx: &mut [StreamFixture],
) -> (Vec<String>, usize) {
    let want = reference(fx);
    for (f, o) in fx.iter_mut().zip(&want) {
        f.valid = o.invalid.is_empty();
        f.invalid = o.invalid.iter().map(|(l, r, p, _)| (*l, r.clone(), p.clone())).collect();
    }
    let sequence = want.iter().filter(|o| o.invalid.iter().any(|(_, r, _, _)| r.contains('.'))).count();
    let mut failures = Vec::new();
    for (name, check) in others {
        let got = check(fx);
        assert_eq!(got.len(), fx.len());
        for ((f, r), o) in fx.iter().zip(&want).zip(&got) {
            if !same_records(r, o) {
                let text = std::fs::read_to_string(&f.path).unwrap_or_default();
                failures.push(format!(
                    "{name:<10} {}:\n  rust:  {:?} {:?} {}\n  other: {:?} {:?} {}\n{text}",
                    f.name,
                    record_keys(r),
                    r.links,
                    r.rollup,
                    record_keys(o),
                    o.links,
                    o.rollup
                ));
            }
        }
    }
    (failures, sequence)
}

/// Beyond the fixtures: every valid v2 stream mutated (lines dropped, repeated, swapped, moved, ids crossed
/// between lines, optional fields dropped, lines of other sessions inserted), and the CLI, the TypeScript checker
/// and the generated crate's checker give each mutant the Rust checker's records and rollup.
#[test]
fn mutated_sessions_get_the_same_records_from_every_checker() {
    let out = crate::fixtures::root().join("target/conformance/stream-mutants");
    let mut fx = mutated_sessions(&dir(), &out, 24, 0x5EED_57AE);
    let krate = |fx: &[StreamFixture]| crate_outcomes!(session_wire, fx);
    let others: [(&str, Checks<'_>); 3] = [("cli", &|fx| cli(fx)), ("ts", &|fx| ts(fx)), ("rust-crate", &krate)];
    let (failures, sequence) = mutants_agree(&|fx| rust(fx), &others, &mut fx);
    eprintln!("{} mutated v2 sessions, {sequence} with a sequence violation", fx.len());
    assert!(sequence * 2 > fx.len(), "most mutants break a sequence rule ({sequence} of {})", fx.len());
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
    let _ = std::fs::remove_dir_all(&out);
}

/// The same for the v1 example's streams, through its own sequence rules and its own generated checkers.
#[test]
fn mutated_v1_sessions_get_the_same_records_from_every_checker() {
    let out = crate::fixtures::root().join("target/conformance/stream-mutants-v1");
    let schema = crate::example::schema_dir();
    let mut fx = mutated_sessions(&root().join("examples/happy-wire/streams"), &out, 40, 0x0001_5EED);
    let schema_arg = schema.to_str().expect("utf-8 path").to_string();
    let pkg = crate::example::ts_package();
    let reference = |fx: &[StreamFixture]| rust_with(wiregen::load::load(&schema).expect("the example loads"), fx);
    let cli = |fx: &[StreamFixture]| cli_with(&["--schema", &schema_arg], fx);
    let ts = |fx: &[StreamFixture]| ts_with(crate::example::built_ts_package(), &pkg, fx);
    let krate = |fx: &[StreamFixture]| crate_outcomes!(happy_wire, fx);
    let others: [(&str, Checks<'_>); 3] = [("cli", &cli), ("ts", &ts), ("rust-crate", &krate)];
    let (failures, sequence) = mutants_agree(&reference, &others, &mut fx);
    eprintln!("{} mutated v1 sessions, {sequence} with a sequence violation", fx.len());
    assert!(sequence * 2 > fx.len(), "most mutants break a sequence rule ({sequence} of {})", fx.len());
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
    let _ = std::fs::remove_dir_all(&out);
}

/// A `needs-open` rule without `on` reads every event but the scope's opening one (it refused every opening while
/// nothing was open, so no stream could pass; helper 79). Declared by a schema edit alone, it gets the same records
/// from the Rust checker, the CLI and the TypeScript checker generated from the edited schema.
#[test]
fn a_needs_open_rule_without_on_leaves_the_opening_event_alone() {
    let scratch = std::env::temp_dir().join(format!("wiregen-needs-open-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let (schema, streams, out) = (scratch.join("schema"), scratch.join("streams"), scratch.join("out"));
    let mut todo = vec![(root().join("schema"), schema.clone())];
    while let Some((from, to)) = todo.pop() {
        std::fs::create_dir_all(&to).expect("mkdir");
        for e in std::fs::read_dir(&from).expect("read schema/") {
            let p = e.expect("entry").path();
            let t = to.join(p.file_name().expect("a name"));
            if p.is_dir() {
                todo.push((p, t));
            } else {
                std::fs::copy(&p, &t).expect("copy");
            }
        }
    }
    let envelope = schema.join("envelope.schema.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&envelope).expect("read")).expect("JSON");
    v["x-sequence"]["rules"].as_array_mut().expect("rules").push(json!({
        "id": "agent.outside-turn", "kind": "needs-open", "scope": "turn", "role": "agent", "pointer": "/ev/t",
        "message": "an agent message while no turn is open", "summary": "Agent messages only inside a turn.",
        "seed": "Turn id established by `turn-start`."
    }));
    // One whose `on` names the opening event too, which it never reads: the reference leaves it out (helper 81).
    v["x-sequence"]["rules"].as_array_mut().expect("rules").push(json!({
        "id": "user.outside-turn", "kind": "needs-open", "scope": "turn", "role": "user", "on": ["turn-start", "text"],
        "pointer": "/ev/t", "message": "a user text while no turn is open", "summary": "User text only inside a turn.",
        "seed": "Turn id established by `turn-start`."
    }));
    // (The seed's flow starts with an agent message outside a turn, which this rule refuses.)
    v.as_object_mut().expect("an object").remove("x-flows");
    std::fs::write(&envelope, serde_json::to_string_pretty(&v).expect("JSON")).expect("write");
    std::fs::create_dir_all(&streams).expect("mkdir");
    let line = |id: &str, turn: Option<&str>, ev: Value| {
        let mut m = json!({"id": id, "time": 1000, "role": "agent", "ev": ev});
        if let Some(t) = turn {
            m["turn"] = json!(t);
        }
        m.to_string()
    };
    let session = [
        line("m1", Some("t1"), json!({"t": "turn-start"})),
        line("m2", Some("t1"), json!({"t": "text", "text": "hi"})),
        line("m3", Some("t1"), json!({"t": "turn-end", "status": "completed"})),
        line("m4", None, json!({"t": "text", "text": "late"})),
        line("m5", Some("t2"), json!({"t": "turn-start"})),
    ];
    std::fs::write(streams.join("s.jsonl"), session.join("\n") + "\n").expect("write");
    let expect = json!({"about": "the opening event passes; an agent message between turns does not", "valid": false,
        "invalid": [{"line": 4, "rule": "agent.outside-turn", "pointer": "/ev/t"}]});
    std::fs::write(streams.join("s.expect.json"), expect.to_string()).expect("write");
    let fx = fixtures_in(&streams);

    let model = wiregen::load::load(&schema).expect("the edited schema loads");
    let reference = rust_with(model, &fx);
    let got: Vec<(u64, String, String)> =
        reference[0].invalid.iter().map(|(l, r, p, _)| (*l, r.clone(), p.clone())).collect();
    assert_eq!(got, fx[0].invalid, "{:?}", reference[0]);
    let schema_arg = schema.to_str().expect("utf-8 path");
    let pkg = generate_and_build_ts(&schema, &out);
    // The reference says what breaks each: every message but the opening one, and of `on` only what the rule reads.
    let md = std::fs::read_to_string(out.join("docs/session-protocol.md")).expect("the reference");
    assert!(
        md.contains(
            "| `agent.outside-turn` | a message other than `turn-start` while no `turn` is open; only from `agent` |"
        ),
        "{md}"
    );
    assert!(md.contains("| `user.outside-turn` | `text` while no `turn` is open; only from `user` |"), "{md}");
    for (name, outcome) in
        [("cli", cli_with(&["--schema", schema_arg], &fx)), ("ts", ts_with(&pkg.join("dist/index.js"), &pkg, &fx))]
    {
        assert!(same_records(&reference[0], &outcome[0]), "{name}: {:?} / {:?}", reference[0], outcome[0]);
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

/// `wiregen generate --only ts,docs` of `schema` into `out`, and the TypeScript package built there (with the
/// repository's node modules); returns the package folder.
fn generate_and_build_ts(schema: &Path, out: &Path) -> PathBuf {
    let o = Command::new(env!("CARGO_BIN_EXE_wiregen"))
        .args(["generate", "--only", "ts,docs", "--schema", schema.to_str().expect("utf-8 path")])
        .args(["--out", out.to_str().expect("utf-8 path")])
        .output()
        .expect("wiregen runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let pkg = out.join("ts");
    crate::node::ensure_npm_deps(&root().join("generated/ts"));
    #[cfg(unix)]
    std::os::unix::fs::symlink(root().join("generated/ts/node_modules"), pkg.join("node_modules"))
        .expect("link node_modules");
    let b = Command::new("npm").current_dir(&pkg).args(["run", "--silent", "build"]).output().expect("npm runs");
    assert!(b.status.success(), "{}{}", String::from_utf8_lossy(&b.stdout), String::from_utf8_lossy(&b.stderr));
    pkg
}

/// The edges of the sequence kinds, in a protocol of their own (`tests/fixtures/sequence-edges`), get the same
/// records from the Rust checker, the CLI and the TypeScript checker generated from it (helper 91):
/// - a message placeholder that two sources of a rule fill (`close-blocked`: the closing scope's key and the
///   blocking scope's key; `close-requires`: the closing scope's key and the required field) is filled by the
///   first of the kind's list: the scope's key, then `open`, then the other (the TypeScript checker let the other
///   win: `turn \`t1\`` against the CLI's `turn \`t3\``);
/// - a key closed with the scope it lives within (`within`) is remembered as closed, so `open-reused` refuses it
///   again (every checker forgot it);
/// - a scope within one that lives within a third closes with the third (it stayed open in every checker).
#[test]
fn the_edges_of_the_sequence_kinds_get_the_same_records_from_every_checker() {
    let fixture = root().join("tests/fixtures/sequence-edges");
    let fx = fixtures_in(&fixture.join("streams"));
    let model = wiregen::load::load(&fixture.join("schema")).expect("the fixture protocol loads");
    let reference = rust_with(model, &fx);
    let messages: Vec<(&str, &str)> = fx
        .iter()
        .zip(&reference)
        .filter_map(|(f, o)| o.invalid.first().map(|e| (f.name.as_str(), e.3.as_str())))
        .collect();
    assert_eq!(
        messages,
        [
            ("close-blocked", "turn `t3` blocked (open `t3`)"),
            ("close-requires", "closing k=`k2` open=`k2`"),
            ("reopened-after-closing-with-its-parent", "`k3` was closed before"),
        ]
    );
    // (A scope within one that lives within a third stayed open when the third closed.)
    let nested = fx.iter().position(|f| f.name == "closed-with-the-one-its-parent-lives-within").expect("the fixture");
    assert_eq!(reference[nested].rollup["open"], json!({"ds": []}));
    for (f, o) in fx.iter().zip(&reference) {
        let got: Vec<(u64, String, String)> = o.invalid.iter().map(|(l, r, p, _)| (*l, r.clone(), p.clone())).collect();
        assert_eq!(got, f.invalid, "{}", f.name);
    }
    let scratch = std::env::temp_dir().join(format!("wiregen-sequence-edges-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let schema = fixture.join("schema");
    let pkg = generate_and_build_ts(&schema, &scratch);
    let schema_arg = schema.to_str().expect("utf-8 path");
    for (name, outcome) in
        [("cli", cli_with(&["--schema", schema_arg], &fx)), ("ts", ts_with(&pkg.join("dist/index.js"), &pkg, &fx))]
    {
        assert_eq!(outcome, reference, "{name}");
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
