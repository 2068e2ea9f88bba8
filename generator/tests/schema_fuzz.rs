//! Broken and odd schemas never crash wiregen: seeded mutations of real schema packages (the session protocol,
//! the happy-wire example, and a sample of the JSON-Schema-Test-Suite's schemas), each through the loader, and
//! when it loads through every output, every `wiregen types` language, the engine (messages and a stream, fast
//! and precise verdicts alike), a suite schema's bundle under the `jsonschema` crate (the engine's verdict on the
//! case's instances) and `wiregen diff` both ways against the package as it was. A refusal must be located (file, line and JSON Pointer); a
//! panic or a step that takes too long fails the test, naming the seed and the mutated file.
//!
//! `WIREGEN_SCHEMA_FUZZ_CASES` (default 300) and `WIREGEN_SCHEMA_FUZZ_SEED` run a longer or another soak.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use wiregen::diff::Side;
use wiregen::emit::{EmitError, EmitOptions, Lang, Output};
use wiregen::engine::{Engine, EngineOptions};
use wiregen::ir::TypeId;

#[path = "support/files.rs"]
mod files;
#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// A schema package: its files (path relative to the directory, text) and message lines to check with it.
struct Package {
    name: String,
    files: Vec<(String, String)>,
    lines: Vec<String>,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `.json` files of a schema directory.
fn schema_files(dir: &Path) -> Vec<(String, String)> {
    files::relative(dir)
        .into_iter()
        .filter(|(rel, _)| rel.ends_with(".json"))
        .map(|(rel, p)| (rel, std::fs::read_to_string(&p).expect("schema text")))
        .collect()
}

/// Message lines: the `.json` and `.jsonl` fixtures below `dir` (one message per line or per file).
fn lines_below(dir: &Path, most: usize) -> Vec<String> {
    let mut out = Vec::new();
    for p in files::below(dir) {
        let Ok(text) = std::fs::read_to_string(&p) else { continue };
        match p.extension().and_then(|e| e.to_str()) {
            Some("jsonl") => out.extend(text.lines().map(String::from)),
            Some("json") => {
                if let Ok(v) = serde_json::from_str::<Value>(&text) {
                    out.push(v.get("message").or(v.get("value")).unwrap_or(&v).to_string());
                }
            }
            _ => {}
        }
        if out.len() >= most {
            break;
        }
    }
    out.truncate(most);
    out
}

fn packages() -> Vec<Package> {
    let r = root();
    let mut out = vec![
        Package {
            name: "schema".into(),
            files: schema_files(&r.join("schema")),
            lines: lines_below(&r.join("tests/fixtures/streams"), 60),
        },
        Package {
            name: "happy-wire".into(),
            files: schema_files(&r.join("examples/happy-wire/schema")),
            lines: lines_below(&r.join("examples/happy-wire/fixtures"), 60),
        },
    ];
    // Every 7th case of the suite's keyword files: one schema file each, with the case's instances.
    let suite = r.join("tests/jsts/suite/draft2020-12");
    let mut n = 0;
    for p in files::below(&suite).into_iter().filter(|p| p.parent() == Some(suite.as_path())) {
        let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&p).expect("suite file")).expect("json");
        for c in cases {
            n += 1;
            if n % 7 != 0 {
                continue;
            }
            let lines = c["tests"].as_array().into_iter().flatten().map(|t| t["data"].to_string()).collect();
            // The case's schema is the package's root (a boolean schema has no place for the mark: left out).
            let mut schema = c["schema"].clone();
            let Some(top) = schema.as_object_mut() else { continue };
            top.insert("x-root".into(), json!(true));
            let schema = serde_json::to_string_pretty(&schema).expect("schema");
            out.push(Package {
                name: format!("suite {}", p.display()),
                files: vec![("root.json".into(), schema)],
                lines,
            });
        }
    }
    out
}

/// Keywords a mutation adds, from the standard and from wiregen's own.
const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
    "enum",
    "const",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
    "$defs",
    "$id",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "uniqueItems",
    "contains",
    "maxContains",
    "patternProperties",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
    "unevaluatedItems",
    "minProperties",
    "description",
    "default",
    "x-name",
    "x-union",
    "x-roles",
    "x-role-property",
    "x-removed",
    "x-unknown-keys",
    "x-package",
    "x-root",
    "x-aliases",
    "x-auto",
    "x-strict-pattern",
    "x-sequence",
    "x-order",
    "x-category",
];

/// Values a mutation sets.
fn values() -> Vec<Value> {
    vec![
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(18_446_744_073_709_551_615u64),
        json!(-9_007_199_254_740_993i64),
        json!(1e300),
        json!(""),
        json!("x"),
        json!("string"),
        json!("object"),
        json!("#"),
        json!("#/$defs/nope"),
        json!("#/properties"),
        json!("other.schema.json"),
        json!("("),
        json!("^[a-z]+$"),
        json!("(?=a)"),
        json!("\\p{L}+"),
        json!([]),
        json!(["a", "a"]),
        json!([1, "a", null]),
        json!({}),
        json!({ "type": "string" }),
        json!({ "$ref": "#" }),
        json!({ "$ref": "#/$defs/nope" }),
        json!({ "type": ["string", "null"] }),
        json!({ "a": { "type": "integer" } }),
        json!({ "oneOf": [{ "const": 1 }, { "const": 1 }] }),
    ]
}

/// Every place in `v`: the path of keys and indices to it.
fn places(v: &Value, path: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    out.push(path.clone());
    match v {
        Value::Object(o) => {
            for (k, c) in o {
                path.push(json!(k));
                places(c, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                path.push(json!(i));
                places(c, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn at<'v>(v: &'v mut Value, path: &[Value]) -> Option<&'v mut Value> {
    path.iter().try_fold(v, |cur, k| match k {
        Value::String(k) => cur.get_mut(k.as_str()),
        Value::Number(i) => cur.get_mut(i.as_u64()? as usize),
        _ => None,
    })
}

/// One mutation of a schema document: set a value, delete, add or rename a key, copy a subtree elsewhere (in
/// place of a value or under a keyword), or change a string.
fn mutate(rng: &mut Rng, doc: &mut Value, values: &[Value]) {
    let mut all = Vec::new();
    places(doc, &mut Vec::new(), &mut all);
    let path = rng.pick(&all).clone();
    let source = {
        let p = rng.pick(&all).clone();
        at(doc, &p).map(|v| v.clone())
    };
    let Some(target) = at(doc, &path) else { return };
    match rng.below(7) {
        0 => *target = rng.pick(values).clone(),
        1 => {
            if let Some(o) = target.as_object_mut() {
                let k = rng.pick(KEYWORDS).to_string();
                o.insert(k, rng.pick(values).clone());
            }
        }
        2 => {
            if let Some(o) = target.as_object_mut() {
                if let Some(k) = o.keys().nth(rng.below(o.len().max(1) as u64) as usize).cloned() {
                    o.shift_remove(&k);
                }
            }
        }
        3 => {
            if let Some(o) = target.as_object_mut() {
                if let Some(k) = o.keys().nth(rng.below(o.len().max(1) as u64) as usize).cloned() {
                    let v = o.shift_remove(&k).unwrap_or_default();
                    o.insert(rng.pick(KEYWORDS).to_string(), v);
                }
            }
        }
        4 => {
            if let Some(s) = source {
                *target = s;
            }
        }
        5 => {
            if let Some(s) = target.as_str() {
                let mut s = s.to_string();
                match rng.below(3) {
                    0 => {
                        let mut cut = rng.below(s.len() as u64 + 1) as usize;
                        while !s.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        s.truncate(cut);
                    }
                    1 => s.push_str(["x", "/", "~", "#", "%", "é"][rng.below(6) as usize]),
                    _ => s = s.to_uppercase(),
                }
                *target = json!(s);
            }
        }
        _ => {
            if let (Some(o), Some(s)) = (target.as_object_mut(), source) {
                o.insert(rng.pick(KEYWORDS).to_string(), s);
            }
        }
    }
}

/// Writes a package's files below `dir` (emptied first); the directory as a `wiregen diff` side names it.
fn write_package(dir: &Path, files: &[(String, String)]) -> String {
    let _ = std::fs::remove_dir_all(dir);
    for (rel, text) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("create the package directory");
        std::fs::write(&p, text).expect("write a package file");
    }
    dir.to_string_lossy().into_owned()
}

/// Runs `f`, failing with `what` if it panics or takes longer than `limit`.
fn guarded<T>(what: &str, limit: Duration, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| panic!("{what}: panicked"));
    let took = start.elapsed();
    assert!(took < limit, "{what}: took {took:?}");
    out
}

#[test]
fn mutated_schemas_are_refused_with_a_location_or_handled_by_every_output() {
    let cases = rng::env_number("WIREGEN_SCHEMA_FUZZ_CASES", 300);
    let seed = rng::env_number("WIREGEN_SCHEMA_FUZZ_SEED", 0x5EED_F00D);
    let packages = packages();
    let values = values();
    let mut rng = Rng(seed << 1 | 1);
    let limit = Duration::from_secs(20);
    let dir = Path::new("fuzz");
    let tmp = std::env::temp_dir().join(format!("wiregen-schema-fuzz-{}", std::process::id()));
    let (mut loaded, mut refused, mut emit_refused) = (0, 0, Vec::new());
    let (mut engine_checked, mut bundle_checked) = (0, 0);
    for case in 0..cases {
        // A third each: the session protocol, the happy-wire example, one of the suite's cases.
        let pkg = match rng.below(3) {
            k @ (0 | 1) => &packages[k as usize],
            _ => &packages[2 + rng.below(packages.len() as u64 - 2) as usize],
        };
        let mut files = pkg.files.clone();
        let fi = rng.below(files.len() as u64) as usize;
        let mut doc: Value = serde_json::from_str(&files[fi].1).expect("package file is JSON");
        for _ in 0..=rng.below(3) {
            mutate(&mut rng, &mut doc, &values);
        }
        files[fi].1 = serde_json::to_string_pretty(&doc).expect("json");
        let what = format!("case {case} (seed {seed:#x}): {} {}: {}", pkg.name, files[fi].0, files[fi].1);
        let borrowed: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let model = match guarded(&what, limit, || wiregen::load::load_files(dir, &borrowed)) {
            Ok(m) => m,
            Err(errs) => {
                refused += 1;
                assert!(!errs.0.is_empty(), "{what}: refused without an error");
                for e in &errs.0 {
                    let file = e.file.to_string_lossy();
                    let known = files.iter().any(|(p, _)| file.ends_with(p.as_str()));
                    assert!(known && e.line > 0, "{what}: refusal without file and line: {e}");
                    assert!(e.pointer.is_empty() || e.pointer.starts_with('/'), "{what}: bad pointer: {e}");
                    assert!(!e.message.is_empty(), "{what}: refusal without a message");
                }
                continue;
            }
        };
        loaded += 1;
        guarded(&what, limit, || {
            // An output may refuse what it cannot express, at the place in the schema; anything else is a bug.
            let mut refusal = |r: Result<(), EmitError>| match r {
                Ok(()) => {}
                Err(e @ EmitError::UnsupportedAt { .. }) => emit_refused.push(e.to_string()),
                Err(e) => panic!("{what}: an output failed: {e}"),
            };
            for o in Output::ALL {
                refusal(o.emit(&model, &EmitOptions::default()).map(drop));
            }
            for l in Lang::ALL {
                refusal(l.module(&model).map(drop));
            }
        });
        guarded(&what, limit, || {
            // Every line against the root, or against every type of a package without one (happy-wire).
            let roots: Vec<TypeId> = match model.root {
                Some(r) => vec![r],
                None => (0..model.types.len()).map(TypeId).collect(),
            };
            for &r in &roots {
                let e = Engine::for_type(model.clone(), r, EngineOptions::default());
                for line in &pkg.lines {
                    let fast = e.check_line_fast(line.as_bytes());
                    let (_, precise) = e.check_line(line.as_bytes());
                    assert_eq!(fast.is_empty(), precise.is_empty(), "{what}: fast and precise verdicts of {line}");
                    engine_checked += 1;
                }
            }
            let Ok(engine) = Engine::new(model.clone(), EngineOptions::default()) else { return };
            let mut stream = wiregen::stream::StreamChecker::new(&engine);
            for (n, line) in pkg.lines.iter().enumerate() {
                let _ = stream.check(n + 1, line.as_bytes());
            }
            let _ = stream.rollup();
            // A suite schema's bundle under the `jsonschema` crate gives the engine's verdict (but where the two
            // differ by construction: `multipleOf` in exact decimals, integers past 2^53 compared exactly).
            // (A line with 16 digits or more may hold an integer past 2^53: left out.)
            let exact = |l: &String| l.chars().filter(char::is_ascii_digit).nth(15).is_none();
            if pkg.name.starts_with("suite") && !files[fi].1.contains("multipleOf") {
                let Ok(out) = Output::Schema.emit(&model, &EmitOptions::default()) else { return };
                let bundle: Value = serde_json::from_str(&out[0].contents).expect("the bundle is JSON");
                let v = jsonschema::draft202012::new(&bundle)
                    .unwrap_or_else(|e| panic!("{what}: the bundle does not compile: {e}\n{bundle:#}"));
                for line in pkg.lines.iter().filter(|l| exact(l)) {
                    let data: Value = serde_json::from_str(line).expect("an instance");
                    let engine_valid = engine.check_value(&data).is_empty();
                    assert_eq!(
                        v.is_valid(&data),
                        engine_valid,
                        "{what}: the bundle and the engine on {line}\n{bundle:#}"
                    );
                    bundle_checked += 1;
                }
            }
        });
        // `wiregen diff` both ways against the package as it was (one in five cases: it reads the files from disk).
        if case % 5 == 0 {
            let old_dir = write_package(&tmp.join("old"), &pkg.files);
            let new_dir = write_package(&tmp.join("new"), &files);
            guarded(&what, limit, || {
                let new = Side::load(&new_dir).unwrap_or_else(|e| panic!("{what}: the mutated package: {e}"));
                // (A suite case that refers to the suite's remote documents does not load alone.)
                let Ok(old) = Side::load(&old_dir) else { return };
                let _ = wiregen::diff::diff(&old, &new);
                let _ = wiregen::diff::diff(&new, &old);
            });
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    println!(
        "{cases} mutated schemas: {loaded} loaded, {refused} refused; {engine_checked} instances through the \
         engine, fast and precise, {bundle_checked} through a suite schema's bundle; {} output refusals:",
        emit_refused.len()
    );
    for e in &emit_refused {
        println!("  {e}");
    }
    assert!(loaded * 10 > cases && refused * 10 > cases, "the mutations must reach both outcomes");
    assert!(engine_checked > 10 * cases && bundle_checked > cases / 5, "the engine and the bundles must see instances");
}
