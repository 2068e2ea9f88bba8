//! Objects of many keys against objects of many declared properties, and values against long `enum` and `anyOf`
//! lists, through the standalone validator: the module must compile (a chain of 20,000 `k === "…"` or
//! `v !== "…"` comparisons overflowed TypeScript's compiler), type-check under strict (one function checking 500
//! properties was too large for it), and check unknown keys against 20,000 names without comparing each key with
//! each name (1,000,000 keys), within a deadline.

use std::time::Duration;

use serde_json::{json, Value};

use crate::fixtures::root;

/// How long node may take (~10 s alone, mostly reading the 5 MB module; several times that beside the other
/// tests on two cores): comparing each key with each name took ~25 s for 100,000 keys and 16,000 names, so ~5
/// minutes per check for the 1,000,000 keys here.
const DEADLINE: Duration = Duration::from_secs(180);

#[test]
fn many_keys_and_long_value_lists_are_checked_without_a_chain_of_comparisons() {
    let properties: serde_json::Map<String, Value> =
        (0..20_000).map(|i| (format!("p{i}"), json!({ "type": "integer" }))).collect();
    let strings: Vec<Value> = (0..20_000).map(|i| json!(format!("v{i}"))).collect();
    let mut values = vec![json!([1]), json!({ "a": 1 }), json!(0), json!("0"), json!(null), json!(true), json!(1.5)];
    values.extend((0..40).map(|i| json!({ "n": i })));
    let any: Vec<Value> = (0..20_000).map(|i| json!({ "const": i })).collect();
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {
            "closed": { "x-name": "Closed", "type": "object", "properties": properties, "additionalProperties": false },
            "strings": { "x-name": "Strings", "enum": strings },
            "values": { "x-name": "Values", "enum": values },
            "any": { "x-name": "Any", "anyOf": any },
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
    let model = std::sync::Arc::new(wiregen::load::load(&file).unwrap_or_else(|e| panic!("the schema loads: {e}")));
    let src = wiregen::emit::Lang::TsStandalone.module(&model).expect("the standalone module");
    std::fs::write(dir.join("standalone.ts"), src).expect("write the module");
    let src = wiregen::emit::Lang::Zod.module(&model).expect("the Zod module");
    std::fs::write(dir.join("schemas.zod.ts"), src).expect("write the module");
    let package = root().join("generated/ts");
    crate::node::ensure_npm_deps(&package);
    // The Zod module imports `zod`, found beside it.
    #[cfg(unix)]
    std::os::unix::fs::symlink(package.join("node_modules"), dir.join("node_modules")).expect("link node_modules");
    let runner = root().join("tests/conformance/many-keys-runner.mjs");
    let typescript = package.join("node_modules/typescript");
    let out = crate::node::run_node_within(&[runner.as_os_str(), dir.as_os_str(), typescript.as_os_str()], DEADLINE);
    let out: Value = serde_json::from_str(&out).expect("the runner prints JSON");
    // It type-checks as its user's project would compile it (TS2563 "too large for control flow analysis" came at
    // 500 properties in one function).
    crate::node::run(
        std::process::Command::new("node")
            .current_dir(&dir)
            .arg(package.join("node_modules/typescript/bin/tsc"))
            .args(["--noEmit", "--strict", "--target", "ES2022", "--lib", "ES2022", "--module", "NodeNext"])
            .args(["--moduleResolution", "NodeNext", "--skipLibCheck"])
            .args(["--noUnusedLocals", "--noUnusedParameters", "--noPropertyAccessFromIndexSignature"])
            .args(["--exactOptionalPropertyTypes", "--noUncheckedIndexedAccess", "--noImplicitReturns"])
            .args(["--noImplicitOverride", "--noFallthroughCasesInSwitch", "standalone.ts", "schemas.zod.ts"]),
        "tsc on the modules of 20,000 properties",
    );
    // Every checker lists the first `LISTED_VALUES` of a long enum's values and how many more there are: the
    // message of an enum of 20,000 values was ~430 KB.
    let messages = out.get("messages").cloned().unwrap_or_default();
    let mut expected = Vec::new();
    for (ty, v) in [("Strings", json!("v20000")), ("Values", json!([1, 2])), ("Values", json!(false))] {
        let engine = wiregen::engine::Engine::for_type_named(model.clone(), ty, Default::default()).expect("the type");
        let said: Vec<String> = engine.check_value(&v).into_iter().map(|i| i.message).collect();
        assert_eq!(said.len(), 1, "{ty} {v}: {said:?}");
        assert!(said[0].len() < 400, "{ty} {v}: a long message: {}", said[0]);
        expected.push(json!({ "standalone": said, "zod": said }));
    }
    assert!(
        expected[0]["zod"][0].as_str().is_some_and(|m| m.ends_with("`v18`, `v19`, and 19980 more")),
        "{expected:?}"
    );
    assert!(expected[1]["zod"][0].as_str().is_some_and(|m| m.ends_with(", and 27 more")), "{expected:?}");
    assert_eq!(messages, json!(expected));
    let out = match out {
        Value::Object(mut o) => {
            o.remove("messages");
            Value::Object(o)
        }
        other => other,
    };
    assert_eq!(
        out,
        json!({
            "closedUnknown": 1_000_000,
            "closedDeclared": 0,
            "evaluatedUnknown": 1_000_000,
            "evaluatedDeclared": 0,
            "strings": [0, 0, 1, 1],
            "values": [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1],
            "any": [0, 0, 1, 1]
        })
    );
}
