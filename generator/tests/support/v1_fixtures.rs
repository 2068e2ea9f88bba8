//! The happy-wire (v1) example's valid envelope fixtures, shared by the migrate test and the conformance test's
//! upcaster check.

use std::path::Path;

use serde_json::Value;

/// The `value` of every valid envelope fixture of the v1 example (`root` is the repository), with the fixture's
/// name, in name order.
pub fn v1_envelope_fixtures(root: &Path) -> Vec<(String, Value)> {
    let dir = root.join("examples/happy-wire/fixtures");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("sessionEnvelopeSchema.") && n.contains(".valid."))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let f: Value = serde_json::from_str(&std::fs::read_to_string(dir.join(&n)).expect("read")).expect("json");
            (n, f["value"].clone())
        })
        .collect()
}
