//! The fast path never changes a verdict: on every fixture and on many deterministic mutations of them, a line
//! the fast path calls valid is valid for the precise engine, and most valid lines do take the fast path. The
//! precise engine's own reading of a line (its borrowed tree) gives the errors it gives on serde_json's `Value`.

use std::path::Path;

use serde_json::Value;
use wiregen::engine::{Engine, EngineOptions, Issue};

/// The precise engine on a line read into serde_json's own `Value`: the reference for the tree the engine reads
/// lines into ([`wiregen::engine::Json`]), which must give the same errors, parse errors included.
fn on_value(e: &Engine, line: &[u8]) -> Vec<Issue> {
    match wiregen::engine::parse_line(line) {
        Ok(v) => e.check_value(&v),
        Err(issue) => vec![issue],
    }
}

fn lines() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/messages");
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("fixtures") {
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(e.expect("entry").path()).expect("read")).expect("json");
        if v["strictIds"] == true {
            continue;
        }
        out.push(match (&v["message"], &v["raw"]) {
            (Value::Null, Value::String(r)) => r.clone(),
            (m, _) => serde_json::to_string(m).expect("json"),
        });
    }
    out.sort();
    out
}

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

#[path = "support/mutate.rs"]
mod mutate;
use mutate::mutate;

#[test]
fn fast_path_agrees_with_the_precise_engine() {
    let p = wiregen::load::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema")).expect("schema");
    let e = Engine::new(p, EngineOptions::default()).expect("the schema has a root type");
    let base = lines();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut checked, mut valid, mut fast_valid) = (0, 0, 0);
    for line in &base {
        let mut cur = line.clone();
        for round in 0..60 {
            if round > 0 {
                cur = mutate(&mut rng, if round % 3 == 0 { line } else { &cur });
            }
            let slow = on_value(&e, cur.as_bytes());
            assert_eq!(e.check_line(cur.as_bytes()).1, slow, "the tree must read as a Value does: {cur}");
            let fast = e.is_valid_fast(cur.as_bytes());
            assert!(!fast || slow.is_empty(), "the fast path accepted an invalid line: {cur}\n{slow:?}");
            assert_eq!(e.check_line_fast(cur.as_bytes()), slow, "fast+fallback must equal the precise engine: {cur}");
            checked += 1;
            if slow.is_empty() {
                valid += 1;
                fast_valid += usize::from(fast);
            }
        }
    }
    eprintln!("{checked} lines, {valid} valid, {fast_valid} of them on the fast path");
    assert!(checked > 10_000 && valid > 500, "the mutations must reach both verdicts");
    assert!(fast_valid * 10 >= valid * 8, "most valid lines take the fast path ({fast_valid} of {valid})");
}

/// The scanner reads raw bytes, so it is also fed byte-level damage the structural mutations never make: bytes
/// and escapes inserted, replaced or deleted anywhere (quotes, backslashes, control and non-ASCII bytes, lone and
/// paired surrogate escapes, digits and number signs, brackets). Whatever it vouches for, the precise engine
/// (serde_json underneath) accepts, and with its fallback it gives the engine's errors.
#[test]
fn byte_level_damage_never_fools_the_fast_path() {
    const PIECES: &[&[u8]] = &[
        b"\"",
        b"\\",
        b"\\\"",
        b"\\\\",
        b"\\n",
        b"\\u0041",
        b"\\u00e9",
        b"\\ud800",
        b"\\udc00",
        b"\\ud83d\\ude00",
        b"\\ud83d",
        b"\\u12",
        b"\\x",
        b"\x00",
        b"\x1f",
        b"\t",
        b"\x7f",
        b"\x80",
        b"\xc3",
        b"\xc3\xa9",
        b"\xe2\x86\x92",
        b"\xed\xa0\x80",
        b"\xf0\x9f\x98\x80",
        b"\xff",
        b"\xef\xbb\xbf",
        b"0",
        b"9",
        b"-",
        b".",
        b"e",
        b"E+",
        b"01",
        b"1e400",
        b"{",
        b"}",
        b"[",
        b"]",
        b",",
        b":",
        b" ",
        b"null",
        b"true",
    ];
    let p = wiregen::load::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema")).expect("schema");
    let e = Engine::new(p, EngineOptions::default()).expect("the schema has a root type");
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let (mut checked, mut fast_valid) = (0, 0);
    for line in lines() {
        for _ in 0..100 {
            let mut b = line.clone().into_bytes();
            for _ in 0..1 + rng.below(2) {
                let at = rng.below(b.len() as u64 + 1) as usize;
                match rng.below(3) {
                    0 => {
                        b.splice(at..at, rng.pick(PIECES).iter().copied());
                    }
                    1 if at < b.len() => {
                        let piece = rng.pick(PIECES);
                        b.splice(at..at + 1, piece.iter().copied());
                    }
                    _ if at < b.len() => {
                        b.remove(at);
                    }
                    _ => {}
                }
            }
            let slow = on_value(&e, &b);
            assert_eq!(e.check_line(&b).1, slow, "the tree must read as a Value does: {}", String::from_utf8_lossy(&b));
            let fast = e.is_valid_fast(&b);
            let shown = String::from_utf8_lossy(&b);
            assert!(!fast || slow.is_empty(), "the fast path accepted an invalid line: {shown}\n{slow:?}");
            assert_eq!(e.check_line_fast(&b), slow, "fast+fallback must equal the precise engine: {shown}");
            checked += 1;
            fast_valid += usize::from(fast);
        }
    }
    eprintln!("{checked} damaged lines, {fast_valid} vouched for by the fast path");
    assert!(checked > 15_000 && fast_valid > 500, "the damage must leave some lines valid");
}
