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

const VALUES: &[&str] = &[
    "null",
    "0",
    "-1",
    "1.5",
    "1e3",
    "9007199254740992",
    "\"\"",
    "\"x\"",
    "\"user\"",
    "\"agent\"",
    "true",
    "[]",
    "{}",
    "\"text\"",
    "\"abort\"",
    "\"completed\"",
    "{\"width\":1,\"height\":2,\"thumbhash\":\"h\"}",
];
const KEYS: &[&str] = &[
    "id", "time", "role", "turn", "subagent", "ev", "t", "text", "thinking", "steer", "status", "usage", "call",
    "args", "x",
];

/// One structural mutation of a JSON line: set, delete or add a key somewhere, or cut the text.
fn mutate(rng: &mut Rng, line: &str) -> String {
    let Ok(mut v) = serde_json::from_str::<Value>(line) else {
        return line.to_string();
    };
    let mut paths = vec![Vec::<String>::new()];
    collect(&v, &mut Vec::new(), &mut paths);
    let path = rng.pick(&paths).clone();
    let target = path.iter().try_fold(&mut v, |cur, k| cur.get_mut(k.as_str()));
    let Some(target) = target else {
        return line.to_string();
    };
    match rng.next() % 5 {
        0 => *target = serde_json::from_str::<Value>(rng.pick::<&str>(VALUES)).expect("value"),
        1 => {
            if let Some(o) = target.as_object_mut() {
                let k = rng.pick(KEYS).to_string();
                o.insert(k, serde_json::from_str::<Value>(rng.pick::<&str>(VALUES)).expect("value"));
            }
        }
        2 => {
            if let Some(o) = target.as_object_mut() {
                let k = rng.pick(KEYS).to_string();
                o.shift_remove(&k);
            }
        }
        3 => {
            let s = serde_json::to_string(&v).expect("json");
            let cut = (rng.next() as usize) % s.len().max(1);
            return s[..cut].to_string();
        }
        _ => {
            // Reorder: move the first key to the end.
            if let Some(o) = target.as_object_mut() {
                if let Some(k) = o.keys().next().cloned() {
                    let val = o.shift_remove(&k).expect("present");
                    o.insert(k, val);
                }
            }
        }
    }
    serde_json::to_string(&v).expect("json")
}

fn collect(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    if let Value::Object(o) = v {
        for (k, c) in o {
            at.push(k.clone());
            out.push(at.clone());
            collect(c, at, out);
            at.pop();
        }
    }
}

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
