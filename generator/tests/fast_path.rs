//! The fast path never changes a verdict: on every fixture and on many deterministic mutations of them, a line
//! the fast path calls valid is valid for the precise engine, and most valid lines do take the fast path.

use std::path::Path;

use serde_json::Value;
use wiregen::engine::{Engine, EngineOptions};

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
            let slow = e.check_line(cur.as_bytes()).1;
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
