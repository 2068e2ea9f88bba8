//! Loading the fixture corpus in `tests/fixtures/`.
//!
//! A message fixture is one JSON file in `tests/fixtures/messages/`:
//! `{"about": "...", "valid": true, "message": {...}}` or
//! `{"about": "...", "valid": false, "rule": "enum", "pointer": "/ev/status", "message": {...}}`;
//! `"raw": "..."` replaces `message` for input that is not JSON; `"strictIds": true` checks it with strict ids.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("generator/ has a parent").to_path_buf()
}

/// What a fixture should give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// Valid everywhere.
    Valid,
    /// Invalid everywhere; the precise checkers report this first error.
    Invalid { rule: String, pointer: String },
}

/// One message fixture.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// File stem.
    pub name: String,
    /// What it shows.
    pub about: String,
    /// The line as sent (JSON text, or raw text for malformed input).
    pub line: String,
    /// The parsed message, when the line is JSON.
    pub message: Option<Value>,
    /// Checked with strict ids.
    pub strict_ids: bool,
    /// The expected verdict.
    pub expect: Expect,
}

/// Every message fixture, sorted by name.
pub fn messages() -> Vec<Fixture> {
    crate::files::json_in(&root().join("tests/fixtures/messages")).iter().map(|p| parse(p)).collect()
}

fn parse(p: &Path) -> Fixture {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let name = p.file_stem().and_then(|s| s.to_str()).expect("utf-8 name").to_string();
    let about = v["about"].as_str().unwrap_or_else(|| panic!("{name}: `about` is required")).to_string();
    let (line, message) = match (v.get("message"), v.get("raw")) {
        (Some(m), None) => (serde_json::to_string(m).expect("serializable"), Some(m.clone())),
        (None, Some(Value::String(raw))) => (raw.clone(), serde_json::from_str(raw).ok()),
        _ => panic!("{name}: exactly one of `message` or `raw` (a string)"),
    };
    let expect = match v["valid"].as_bool() {
        Some(true) => Expect::Valid,
        Some(false) => Expect::Invalid {
            rule: v["rule"].as_str().unwrap_or_else(|| panic!("{name}: invalid fixtures name their `rule`")).into(),
            pointer: v["pointer"]
                .as_str()
                .unwrap_or_else(|| panic!("{name}: invalid fixtures name their `pointer`"))
                .into(),
        },
        None => panic!("{name}: `valid` must be true or false"),
    };
    Fixture { name, about, line, message, strict_ids: v["strictIds"].as_bool().unwrap_or(false), expect }
}
