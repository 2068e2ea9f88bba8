//! The happy-wire example (`examples/happy-wire/`): its fixtures, whose verdicts come from happy-wire's own Zod
//! schemas, through every checker. Each fixture names the exported schema it is for (`sessionEnvelopeSchema`);
//! every checker must give the fixture's verdict, and the precise checkers the engine's first rule and pointer.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;

use wiregen::engine::{Engine, EngineOptions};

use crate::checkers::Verdict;
use crate::fixtures::root;

/// One fixture of the example.
#[derive(Debug, Clone)]
pub struct ExampleFixture {
    /// File stem.
    pub name: String,
    /// What it shows.
    pub about: String,
    /// The exported Zod schema name of the type it is checked against.
    pub ty: String,
    /// The value.
    pub value: Value,
    /// The verdict happy-wire's own schema gives.
    pub valid: bool,
    /// What happy-wire's schema returns for a valid value (unknown keys of strip objects dropped).
    pub parsed: Option<Value>,
}

/// The example's schema directory.
pub fn schema_dir() -> PathBuf {
    root().join("examples/happy-wire/schema")
}

/// Every fixture of the example, sorted by name.
pub fn fixtures() -> Vec<ExampleFixture> {
    crate::files::json_in(&root().join("examples/happy-wire/fixtures"))
        .iter()
        .map(|p| {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("JSON");
            ExampleFixture {
                name: p.file_stem().and_then(|s| s.to_str()).expect("name").to_string(),
                about: v["about"].as_str().unwrap_or_default().to_string(),
                ty: v["type"].as_str().expect("type").to_string(),
                value: v["value"].clone(),
                valid: v["valid"].as_bool().expect("valid"),
                parsed: v.get("parsed").cloned(),
            }
        })
        .collect()
}

/// A checker of the example's fixtures.
pub struct ExampleChecker {
    /// Short name for reports.
    pub name: &'static str,
    /// Whether rule and pointer must equal the engine's.
    pub precise: bool,
    /// Runs every fixture.
    pub run: fn(&[ExampleFixture]) -> Vec<Verdict>,
}

/// Every checker of the example (outputs add theirs here).
pub fn checkers() -> Vec<ExampleChecker> {
    let mut v = vec![
        ExampleChecker { name: "engine", precise: true, run: engine },
        ExampleChecker { name: "bundled", precise: false, run: crate::checkers::example_bundled },
        ExampleChecker { name: "source", precise: false, run: crate::checkers::example_source },
        ExampleChecker { name: "ajv", precise: false, run: crate::checkers::example_ajv },
        ExampleChecker { name: "zod", precise: true, run: zod },
        ExampleChecker { name: "ts-standalone", precise: true, run: ts_standalone },
    ];
    v.extend(crate::example_rust::checkers());
    v
}

/// The example's npm package.
pub fn ts_package() -> PathBuf {
    root().join("examples/happy-wire/generated/ts")
}

/// Installs (when missing) and builds the example's package once per test process; returns `dist/index.js`.
pub fn built_ts_package() -> &'static std::path::Path {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = ts_package();
        crate::node::ensure_npm_deps(&dir);
        let out = std::process::Command::new("npm")
            .current_dir(&dir)
            .args(["run", "--silent", "build"])
            .output()
            .expect("npm runs");
        assert!(
            out.status.success(),
            "npm run build in {}:\n{}{}",
            dir.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        dir.join("dist/index.js")
    })
}

/// Every fixture through the built package in one node process (`example-runner.mjs`): one answer per fixture.
fn node_answers(fx: &[ExampleFixture]) -> &'static [Value] {
    static ANSWERS: std::sync::OnceLock<Vec<Value>> = std::sync::OnceLock::new();
    ANSWERS.get_or_init(|| {
        let index = built_ts_package();
        let model = wiregen::load::load(&schema_dir()).expect("the example's schema loads");
        let mut input = String::new();
        for f in fx {
            let id = model.type_named(&f.ty).unwrap_or_else(|| panic!("{}: no type {}", f.name, f.ty));
            let ts = &model.ty(id).names.ts;
            let line = serde_json::json!({
                "schema": f.ty,
                "validate": format!("validate{ts}"),
                "guard": format!("is{ts}"),
                "value": f.value.to_string(),
                "parsed": f.parsed.as_ref().map(|p| p.to_string()),
            });
            input.push_str(&line.to_string());
            input.push('\n');
        }
        let runner = root().join("tests/conformance/example-runner.mjs");
        let index = index.to_str().expect("utf-8 path");
        crate::node::run_node_answers(&root(), &[runner.to_str().expect("utf-8 path"), index], &input, fx.len())
    })
}

/// The generated Zod schemas: `<schema>.safeParse(value)`'s first issue; a valid fixture must also parse to
/// happy-wire's own output (`parsed`: unknown keys of strip objects dropped, of open objects kept).
fn zod(fx: &[ExampleFixture]) -> Vec<Verdict> {
    node_answers(fx)
        .iter()
        .map(|a| {
            if let Some(e) = a["zod"]["error"].as_str() {
                return Verdict::Invalid { rule: e.to_string(), pointer: String::new() };
            }
            let v = Verdict::answered(&a["zod"], &["rule"]);
            if v == Verdict::Valid && a["dataEqual"] != true {
                return Verdict::Invalid {
                    rule: "zod: the parsed value is not deep-equal to happy-wire's".into(),
                    pointer: String::new(),
                };
            }
            v
        })
        .collect()
}

/// The generated standalone validators: `validate<Type>(value)`'s first error, with the type guard agreeing.
fn ts_standalone(fx: &[ExampleFixture]) -> Vec<Verdict> {
    node_answers(fx)
        .iter()
        .map(|a| {
            let v = Verdict::answered(&a["standalone"], &["rule"]);
            if (a["guard"] == true) != (v == Verdict::Valid) {
                return Verdict::Invalid {
                    rule: format!("the type guard says {} but the validator says {v:?}", a["guard"]),
                    pointer: String::new(),
                };
            }
            v
        })
        .collect()
}

fn engine(fx: &[ExampleFixture]) -> Vec<Verdict> {
    let model = std::sync::Arc::new(wiregen::load::load(&schema_dir()).expect("the example's schema loads"));
    fx.iter()
        .map(|f| {
            let e = Engine::for_type_named(model.clone(), &f.ty, EngineOptions::default())
                .unwrap_or_else(|e| panic!("{}: {e}", f.name));
            match e.check_value(&f.value).first() {
                None => Verdict::Valid,
                Some(i) => Verdict::Invalid { rule: i.rule.to_string(), pointer: i.pointer.clone() },
            }
        })
        .collect()
}

#[test]
fn every_example_fixture_gets_happy_wires_verdict_from_every_checker() {
    let fx = fixtures();
    assert!(fx.len() >= 300, "the example lost fixtures: {}", fx.len());
    for f in &fx {
        assert_eq!(f.valid, f.parsed.is_some(), "{}: a valid fixture records what happy-wire parses it to", f.name);
    }
    let oracle = engine(&fx);
    let mut failures = Vec::new();
    let mut counts = Vec::new();
    for c in checkers() {
        let verdicts = (c.run)(&fx);
        assert_eq!(verdicts.len(), fx.len(), "{}: one verdict per fixture", c.name);
        let mut ran = 0;
        for ((f, v), o) in fx.iter().zip(&verdicts).zip(&oracle) {
            let why = match (f.valid, v) {
                (_, Verdict::Skipped) => continue,
                (true, Verdict::Valid) | (false, Verdict::Invalid { .. }) => match (c.precise, v, o) {
                    (true, Verdict::Invalid { rule, pointer }, Verdict::Invalid { rule: r, pointer: p })
                        if (rule, pointer) != (r, p) =>
                    {
                        Some(format!("first error {rule} at {pointer:?}, the engine's is {r} at {p:?}"))
                    }
                    _ => None,
                },
                (true, Verdict::Invalid { rule, pointer }) => {
                    Some(format!("expected valid, got {rule} at {pointer:?}"))
                }
                (false, Verdict::Valid) => Some("expected invalid, got valid".into()),
            };
            ran += 1;
            if let Some(why) = why {
                failures.push(format!("{:<13} {} ({}): {why}\n              ({})", c.name, f.name, f.ty, f.about));
            }
        }
        assert!(ran > 0, "{}: the checker ran no fixture", c.name);
        counts.push(format!("{}: {ran}", c.name));
    }
    eprintln!("example fixtures per checker: {}", counts.join(", "));
    assert!(failures.is_empty(), "{} disagreement(s):\n{}", failures.len(), failures.join("\n"));
}

/// `tsc --noEmit --strict` on `happy-wire-types.mts`: every name happy-wire exports, imported from the generated
/// package (built declarations) and used as happy-wire's callers use it.
#[test]
fn every_happy_wire_export_name_type_checks_against_the_generated_package() {
    built_ts_package();
    let dir = ts_package();
    let out = std::process::Command::new("node")
        .current_dir(&dir)
        .arg(dir.join("node_modules/typescript/bin/tsc"))
        .args(["--noEmit", "--strict", "--target", "ES2022", "--lib", "ES2022", "--module", "NodeNext"])
        .args(["--moduleResolution", "NodeNext", "--skipLibCheck"])
        .arg(root().join("tests/conformance/happy-wire-types.mts"))
        .output()
        .expect("node runs");
    assert!(out.status.success(), "the type test fails:\n{}", String::from_utf8_lossy(&out.stdout));
}

/// Every valid fixture of the example is a value of its schema's output type: each is given to a function that
/// takes only such values (its type parameter keeps the literal's own type, so the keys a strip object drops are
/// no excess properties), and `tsc` must take them all.
#[test]
fn every_valid_happy_wire_fixture_is_of_its_generated_type() {
    built_ts_package();
    let valid: Vec<ExampleFixture> = fixtures().into_iter().filter(|f| f.valid).collect();
    assert!(valid.len() > 100, "only {} valid fixtures", valid.len());
    let items: String = valid.iter().map(|f| format!("  of(hw.{})({}),\n", f.ty, f.value)).collect();
    let file = crate::zod::values_file("happy-wire-valid.mts");
    std::fs::write(
        &file,
        format!(
            "// Written by tests/conformance/example.rs: every valid fixture of the happy-wire example.\n\
             import * as hw from \"../../examples/happy-wire/generated/ts/dist/index.js\";\n\
             type Output<S> = S extends {{ _zod: {{ output: infer O }} }} ? O : never;\n\
             function of<S>(_schema: S) {{\n  return <V extends Output<S>>(v: V): V => v;\n}}\n\
             export const valid = [\n{items}];\n"
        ),
    )
    .expect("write the fixtures");
    crate::zod::type_check_values(&file, "the valid happy-wire fixtures");
}

/// Every `x-` annotation in `value`, at any depth.
fn annotations(value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k.starts_with("x-") {
                    out.insert(k.clone());
                }
                annotations(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| annotations(v, out)),
        _ => {}
    }
}

/// The oracle (`examples/happy-wire/oracle/check.mjs`) is run by hand against happy-wire's own sources, not by
/// `cargo test`, and lints the port against its own list of the `x-` annotations wiregen reads. An annotation the
/// port uses and that list lacks fails the oracle while every test here passes: `x-sequence` did, from the time
/// the v1 sequence rules were declared until this test.
#[test]
fn the_oracle_knows_every_annotation_the_port_uses() {
    let dir = root().join("examples/happy-wire");
    let check = std::fs::read_to_string(dir.join("oracle/check.mjs")).expect("read check.mjs");
    let list = check
        .split_once("const X_KEYWORDS = [")
        .and_then(|(_, rest)| rest.split_once("];"))
        .expect("check.mjs declares `const X_KEYWORDS = [...];`")
        .0;
    let known: BTreeSet<&str> = list
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .flat_map(|l| l.split('\'').skip(1).step_by(2))
        .collect();
    assert!(known.contains("x-roles") && known.contains("x-naming"), "X_KEYWORDS read as {known:?}");
    let mut used = BTreeSet::new();
    for entry in std::fs::read_dir(dir.join("schema")).expect("read the schema folder") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("read a schema file");
        annotations(&serde_json::from_str(&text).expect("a schema file is JSON"), &mut used);
    }
    assert!(used.contains("x-sequence"), "the port's annotations read as {used:?}");
    let missing: Vec<_> = used.iter().filter(|a| !known.contains(a.as_str())).collect();
    assert!(missing.is_empty(), "oracle/check.mjs X_KEYWORDS lacks {missing:?}, which schema/ uses");
}
