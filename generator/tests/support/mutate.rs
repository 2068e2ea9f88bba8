//! Structural mutations of a JSON line, shared by the fast-path fuzz test (`fast_path.rs`) and the differential
//! fuzz of the conformance test (`tests/conformance/fuzz.rs`): set, delete or add a key somewhere, cut the text,
//! or move a key. Deterministic for a given [`Rng`] state.

use serde_json::Value;

use crate::rng::Rng;

/// Values a mutation sets.
pub const VALUES: &[&str] = &[
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
/// Keys a mutation adds or removes.
pub const KEYS: &[&str] = &[
    "id", "time", "role", "turn", "subagent", "ev", "t", "text", "thinking", "steer", "status", "usage", "call",
    "args", "x",
];

/// One structural mutation of a JSON line: set, delete or add a key somewhere, or cut the text.
pub fn mutate(rng: &mut Rng, line: &str) -> String {
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
            let mut cut = (rng.next() as usize) % s.len().max(1);
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
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

/// The paths of every object member in `v` (depth first), appended to `out`.
pub fn collect(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    if let Value::Object(o) = v {
        for (k, c) in o {
            at.push(k.clone());
            out.push(at.clone());
            collect(c, at, out);
            at.pop();
        }
    }
}
