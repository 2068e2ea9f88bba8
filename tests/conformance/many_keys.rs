//! Objects of many keys against objects of many declared properties, through the standalone validator: the
//! module must compile (a chain of 20,000 `k === "…"` comparisons overflowed TypeScript's compiler) and check
//! 100,000 unknown keys against 20,000 names without comparing each key with each name, within a deadline.

use std::time::Duration;

use serde_json::{json, Value};

use crate::fixtures::root;

/// How long node may take (it takes ~1 s): comparing each key with each name took ~25 s for 100,000 keys and
/// 16,000 names, per check.
const DEADLINE: Duration = Duration::from_secs(20);

#[test]
fn many_keys_are_checked_against_many_names_in_linear_time() {
    let properties: serde_json::Map<String, Value> =
        (0..20_000).map(|i| (format!("p{i}"), json!({ "type": "integer" }))).collect();
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {
            "closed": { "x-name": "Closed", "type": "object", "properties": properties, "additionalProperties": false },
            "evaluated": {
                "x-name": "Evaluated",
                "type": "object",
                "allOf": [{ "properties": properties }],
                "unevaluatedProperties": false
            }
        }
    });
    let dir = root().join("target/conformance/many-keys");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the test directory");
    let file = dir.join("many.schema.json");
    std::fs::write(&file, schema.to_string()).expect("write the schema");
    let model = wiregen::load::load(&file).unwrap_or_else(|e| panic!("the schema loads: {e}"));
    let src = wiregen::emit::Lang::TsStandalone.module(&model).expect("the standalone module");
    std::fs::write(dir.join("standalone.ts"), src).expect("write the module");
    let package = root().join("generated/ts");
    crate::node::ensure_npm_deps(&package);
    let runner = root().join("tests/conformance/many-keys-runner.mjs");
    let typescript = package.join("node_modules/typescript");
    let out = crate::node::run_node_within(&[runner.as_os_str(), dir.as_os_str(), typescript.as_os_str()], DEADLINE);
    let out: Value = serde_json::from_str(&out).expect("the runner prints JSON");
    assert_eq!(
        out,
        json!({ "closedUnknown": 100_000, "closedDeclared": 0, "evaluatedUnknown": 100_000, "evaluatedDeclared": 0 })
    );
}
