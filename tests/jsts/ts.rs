//! The generated TypeScript: each case's schema file through `wiregen types --lang zod` and `--lang
//! ts-standalone` (the library functions behind them), both modules written under `target/jsts/ts/`, and ONE node
//! process (`ts-runner.mjs`) that imports every module and checks every instance: `rootSchema.safeParse(data)` for
//! Zod, `validateRoot(data)` for the standalone validator; then one `tsc --noEmit --strict` over all the modules.
//! Zod comes from `generated/ts/node_modules` (installed
//! with `npm ci` when missing, as the conformance tests do).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use wiregen::emit::Lang;

use crate::{Case, Outcome};

/// How many modules one compiler run type-checks (~1,200 by default, the suite's and the random schemas': one run).
const TSC_BATCH: usize = 1500;

/// The generated `.ts` modules in `dir`, sorted.
fn manifest_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read target/jsts/ts")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".ts"))
        .collect();
    v.sort();
    v
}

/// Each instance's first error (rule id, JSON Pointer, message), `None` when valid, per case id: from Zod and from
/// the standalone validator.
pub type Firsts = BTreeMap<String, [Vec<Option<(String, String, String)>>; 2]>;

/// The case's valid instances as a constant of the root type, for `tsc` to hold the module's types to what its
/// checkers accept: every type must be a supertype of the values that pass. A literal of the type must name only
/// keys the type declares where it has no index signature, so a declared property the type left out is caught
/// too. Left out: a schema with an object that strips unknown keys (its type declares only its properties, so a
/// literal with another key is an excess property, or has no property in common with a type whose properties
/// are all optional, though the value passes). A `__proto__` key is written as a computed key (`["__proto__"]`),
/// which makes a property of that name as `JSON.parse` does (a literal's plain `__proto__` sets the prototype).
fn valid_instances(c: &Case, model: &wiregen::ir::Model) -> String {
    let (root, _) = root_names(model);
    let strips = strips(model);
    let valid: Vec<String> = c
        .tests
        .iter()
        .filter(|(_, _, valid)| *valid)
        .map(|(_, d, _)| format!("  {},\n", wiregen::emit::ts_literal(d)))
        .collect();
    if strips || valid.is_empty() {
        return String::new();
    }
    format!(
        "\n// The valid instances are values of the root type.\nexport const $validInstances: readonly {root}[] = [\n{}];\n",
        valid.concat()
    )
}

/// The root type's TypeScript and Zod names, which an `x-name`, `x-ts-name` or `x-zod-name` on the root sets.
fn root_names(model: &wiregen::ir::Model) -> (&str, &str) {
    model.root.map_or(("Root", "rootSchema"), |r| (model.ty(r).names.ts.as_str(), model.ty(r).names.zod.as_str()))
}

/// A case of `ts-runner.mjs`: its id, which modules it has, and the names it calls the root's checkers by
/// (`schema`: the Zod schema, `validate`: the standalone validator's function).
fn runner_entry(id: &str, model: &wiregen::ir::Model, zod: bool, standalone: bool) -> Value {
    let (ts, schema) = root_names(model);
    json!({ "id": id, "zod": zod, "standalone": standalone, "schema": schema, "validate": format!("validate{ts}") })
}

/// Whether the schema's root may drop keys of a value it takes (an object that strips unknown keys).
fn strips(model: &wiregen::ir::Model) -> bool {
    model.root.is_some_and(|r| model.may_drop_keys(&model.ty(r).node))
}

/// Outcomes for Zod and for the standalone validator, and their first errors.
pub fn run(cases: &[Case]) -> (Vec<Outcome>, Vec<Outcome>, Firsts) {
    let package = crate::root().join("generated/ts");
    crate::node::ensure_npm_deps(&package);
    let dir = crate::work_dir().join("ts");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create target/jsts/ts");
    #[cfg(unix)]
    std::os::unix::fs::symlink(package.join("node_modules"), dir.join("node_modules")).expect("link node_modules");
    let mut zod: Vec<Option<Outcome>> = Vec::new();
    let mut standalone: Vec<Option<Outcome>> = Vec::new();
    let mut manifest = Vec::new();
    for c in cases {
        let model = match wiregen::load::load(&c.file) {
            Ok(m) => m,
            Err(e) => {
                zod.push(Some(Outcome::Refused(e.to_string())));
                standalone.push(Some(Outcome::Refused(e.to_string())));
                continue;
            }
        };
        let mut entry = runner_entry(&c.id, &model, false, false);
        entry["keeps"] = json!(!strips(&model));
        for (lang, file, slot, key) in [
            (Lang::Zod, format!("{}.zod.ts", c.id), &mut zod, "zod"),
            (Lang::TsStandalone, format!("{}.standalone.ts", c.id), &mut standalone, "standalone"),
        ] {
            match lang.module(&model) {
                Ok(mut src) => {
                    if let (Lang::Zod, Some(extra)) = (lang, &c.zod_types) {
                        src.push_str(&format!("\n// The case's type assertions (`zod-types`).\n{extra}\n"));
                    }
                    src.push_str(&valid_instances(c, &model));
                    std::fs::write(dir.join(file), src).expect("write a module");
                    entry[key] = json!(true);
                    slot.push(None);
                }
                Err(e) => slot.push(Some(Outcome::Refused(e.to_string()))),
            }
        }
        entry["data"] = Value::Array(c.tests.iter().map(|(_, d, _)| Value::String(d.to_string())).collect());
        manifest.push(entry);
    }
    let result = run_cases(&dir, &package, &manifest);
    let mut errors = Vec::new();
    let mut finish = |slots: Vec<Option<Outcome>>, key: &str| -> Vec<Outcome> {
        slots
            .into_iter()
            .zip(cases)
            .map(|(s, c)| match s {
                Some(o) => o,
                None => {
                    let r = &result[&c.id];
                    for e in r["errors"].as_array().into_iter().flatten() {
                        errors.push(format!("{}: {}", c.id, e.as_str().unwrap_or_default()));
                    }
                    match r[key].as_array() {
                        Some(v) => Outcome::Verdicts(v.iter().map(|b| b.as_bool() == Some(true)).collect()),
                        // A module that does not load is an emitter bug: every instance counts as wrong.
                        None => Outcome::Verdicts(c.tests.iter().map(|(_, _, valid)| !valid).collect()),
                    }
                }
            })
            .collect()
    };
    // The modules are TypeScript: every one must also type-check under `strict` and the other checks of
    // `@tsconfig/strictest` (a module is source in its user's project, compiled with their settings). Every module carries the runtime's
    // types: several hundred of them need more than node's default heap, and a soak's thousands more than any, so
    // the compiler runs once per batch of modules (once for the default count).
    for batch in manifest_files(&dir).chunks(TSC_BATCH) {
        let tsc = Command::new("node")
            .current_dir(&dir)
            .arg("--max-old-space-size=8192")
            .arg(package.join("node_modules/typescript/bin/tsc"))
            .args(["--noEmit", "--strict", "--target", "ES2022", "--lib", "ES2022", "--module", "NodeNext"])
            .args(["--moduleResolution", "NodeNext", "--skipLibCheck"])
            .args(["--noUnusedLocals", "--noUnusedParameters", "--noPropertyAccessFromIndexSignature"])
            .args(["--exactOptionalPropertyTypes", "--noUncheckedIndexedAccess", "--noImplicitReturns"])
            .args(["--noImplicitOverride", "--noFallthroughCasesInSwitch"])
            .args(batch)
            .output()
            .expect("tsc runs");
        let stderr = String::from_utf8_lossy(&tsc.stderr);
        let tail: String = stderr.chars().rev().take(2000).collect::<Vec<_>>().into_iter().rev().collect();
        assert!(
            tsc.status.success(),
            "the generated modules do not type-check:\n{}{tail}",
            String::from_utf8_lossy(&tsc.stdout)
        );
    }
    // Whatever a value holds, the standalone validator answers with an error list: it never throws.
    let thrown: Vec<String> = cases
        .iter()
        .flat_map(|c| {
            let failures = result[&c.id]["hostile"].as_array().cloned().unwrap_or_default();
            failures.into_iter().map(move |f| format!("{}: {}", c.id, f.as_str().unwrap_or_default()))
        })
        .collect();
    assert!(thrown.is_empty(), "the standalone validator failed on values no line can hold:\n{}", thrown.join("\n"));
    // The instances the runner listed under `key` for each case, with the case.
    let listed = |key: &str| -> Vec<String> {
        cases
            .iter()
            .flat_map(|c| {
                let listed = result[&c.id][key].as_array().cloned().unwrap_or_default();
                listed.into_iter().map(move |i| {
                    let data =
                        c.tests.get(i.as_u64().unwrap_or(0) as usize).map(|t| t.1.to_string()).unwrap_or_default();
                    format!("{} ({}): {data}", c.id, c.description)
                })
            })
            .collect()
    };
    // Zod's value of an instance it takes is that instance (own `__proto__` keys included), unless the schema strips
    // keys.
    let changed = listed("zodChanged");
    assert!(
        changed.is_empty(),
        "the Zod module's value of an instance it takes is not the instance:\n{}",
        changed.join("\n")
    );
    // What Zod gives back for an instance it takes passes the same schema: the loader refuses stripping where a
    // schema applied to the value needs what it drops.
    let refused = listed("zodAgain");
    assert!(
        refused.is_empty(),
        "the Zod module refuses the value it gave back for an instance it took:\n{}",
        refused.join("\n")
    );
    let z = finish(zod, "zod");
    let s = finish(standalone, "standalone");
    for e in &errors {
        eprintln!("module failed to load: {e}");
    }
    let firsts_of = |v: &Value| -> Vec<Option<(String, String, String)>> {
        let text = |x: &Value| x.as_str().unwrap_or("").to_string();
        v.as_array()
            .into_iter()
            .flatten()
            .map(|e| e.as_array().map(|p| (text(&p[0]), text(&p[1]), text(&p[2]))))
            .collect()
    };
    let firsts = cases
        .iter()
        .map(|c| {
            let r = &result[&c.id];
            (c.id.clone(), [firsts_of(&r["zodFirst"]), firsts_of(&r["standaloneFirst"])])
        })
        .collect();
    (z, s, firsts)
}

/// Values put in place of every part of the suite's instances by the probe test.
pub(crate) fn probe_values() -> Vec<Value> {
    serde_json::from_str(
        r#"[null, true, false, 0, -0.0, 1, 1.0, 1.5, -1, 10, 9007199254740992, 1e308, -1e308, 0.0075, "", "a", "ab",
            "abc", "💩", "💩💩", "\u0000", "1", [], [1], [1, 1], [1, "1"], [[]], {}, {"a": 1}, {"foo": null},
            {"constructor": 1}, {"1": 1, "b": 2}]"#,
    )
    .expect("probe values")
}

/// The instance with one part replaced: every part (in pre-order) by every probe value, keys removed, a key added
/// (`__proto__` among them: `JSON.parse` makes it an own property, which Zod's own object neither reads nor keeps).
pub(crate) fn mutations(v: &Value, probes: &[Value], out: &mut Vec<Value>) {
    for p in probes {
        out.push(p.clone());
    }
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let mut inner = Vec::new();
                mutations(item, probes, &mut inner);
                for x in inner {
                    let mut a = items.clone();
                    a[i] = x;
                    out.push(Value::Array(a));
                }
            }
            let mut longer = items.clone();
            longer.push(json!(1));
            out.push(Value::Array(longer));
            if !items.is_empty() {
                out.push(Value::Array(items[..items.len() - 1].to_vec()));
            }
        }
        Value::Object(o) => {
            for (k, item) in o {
                let mut inner = Vec::new();
                mutations(item, probes, &mut inner);
                for x in inner {
                    let mut m = o.clone();
                    m.insert(k.clone(), x);
                    out.push(Value::Object(m));
                }
                let mut m = o.clone();
                m.shift_remove(k);
                out.push(Value::Object(m));
            }
            for extra in ["x", "constructor", "foo", "bar", "__proto__"] {
                if !o.contains_key(extra) {
                    let mut m = o.clone();
                    m.insert(extra.to_string(), json!(1));
                    out.push(Value::Object(m));
                }
            }
        }
        _ => {}
    }
}

/// Beyond the suite's own instances (and wiregen's own cases): every instance mutated part by part (every probe
/// value in every place, keys removed and added, items added and removed), and the engine's verdict is the oracle
/// for Zod and the standalone validator on each, and its errors for the same value read as a line by the byte
/// scanner. A `__proto__` key is a key like the others (the suite has properties of that name).
#[test]
fn the_typescript_outputs_agree_with_the_engine_on_mutated_instances() {
    let package = crate::root().join("generated/ts");
    crate::node::ensure_npm_deps(&package);
    let dir = crate::work_dir().join("probe");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create target/jsts/probe");
    #[cfg(unix)]
    std::os::unix::fs::symlink(package.join("node_modules"), dir.join("node_modules")).expect("link node_modules");
    let suite = crate::root().join("tests/jsts/suite/draft2020-12");
    let mut files = crate::files::json_in(&suite);
    files.push(crate::root().join(crate::WIREGEN_CASES));
    let probes = probe_values();
    let mut manifest = Vec::new();
    let mut oracle: Vec<(String, Vec<Value>, Vec<bool>)> = Vec::new();
    for f in files {
        let keyword = f.file_stem().and_then(|s| s.to_str()).expect("name").to_string();
        let groups: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&f).expect("read")).expect("JSON");
        for (i, g) in groups.iter().enumerate() {
            let id = format!("{keyword}-{i}");
            let id = if f.ends_with(crate::WIREGEN_CASES) { format!("{}-{i}", crate::WIREGEN) } else { id };
            let file = dir.join(format!("{id}.json"));
            std::fs::write(&file, serde_json::to_string_pretty(&g["schema"]).expect("JSON")).expect("write");
            let Ok(model) = wiregen::load::load(&file) else { continue };
            let (Ok(z), Ok(s)) = (Lang::Zod.module(&model), Lang::TsStandalone.module(&model)) else { continue };
            std::fs::write(dir.join(format!("{id}.zod.ts")), z).expect("write");
            std::fs::write(dir.join(format!("{id}.standalone.ts")), s).expect("write");
            let mut entry = runner_entry(&id, &model, true, true);
            let engine = wiregen::engine::Engine::new(model, wiregen::engine::EngineOptions::default())
                .expect("a single file has a root");
            let mut values = Vec::new();
            for t in g["tests"].as_array().expect("tests") {
                values.push(t["data"].clone());
                mutations(&t["data"], &probes, &mut values);
            }
            values.dedup();
            let verdicts: Vec<bool> = values
                .iter()
                .map(|v| {
                    let issues = engine.check_value(v);
                    // The byte scanner's path says the same of the value as a line.
                    let line = serde_json::to_vec(v).expect("JSON");
                    assert_eq!(engine.check_line_fast(&line), issues, "{id}: {v}");
                    issues.is_empty()
                })
                .collect();
            entry["data"] = values.iter().map(|v| Value::String(v.to_string())).collect();
            manifest.push(entry);
            oracle.push((id, values, verdicts));
        }
    }
    let result = run_cases(&dir, &package, &manifest);
    let mut failures = Vec::new();
    let mut total = 0;
    for (id, values, verdicts) in &oracle {
        let r = &result[id];
        for e in r["errors"].as_array().into_iter().flatten() {
            failures.push(format!("{id}: {}", e.as_str().unwrap_or_default()));
        }
        for key in ["zod", "standalone"] {
            let got = r[key].as_array().cloned().unwrap_or_default();
            for (i, (v, want)) in values.iter().zip(verdicts).enumerate() {
                total += 1;
                if got.get(i).and_then(Value::as_bool) != Some(*want) {
                    failures.push(format!("{key} {id}: {v} engine says {}", if *want { "valid" } else { "invalid" }));
                }
            }
        }
    }
    eprintln!("mutated instances: {total} verdicts compared, {} disagreement(s)", failures.len());
    assert!(failures.is_empty(), "{} disagreement(s):\n{}", failures.len(), failures.join("\n"));
}

/// Writes `manifest` to `dir/cases.json` and runs `ts-runner.mjs` on it (with the TypeScript compiler of the
/// `package`'s dependencies): its answer, per case id.
fn run_cases(dir: &Path, package: &Path, manifest: &[Value]) -> Value {
    std::fs::write(dir.join("cases.json"), serde_json::to_string(manifest).expect("JSON")).expect("write cases.json");
    let out = Command::new("node")
        .arg(crate::root().join("tests/jsts/ts-runner.mjs"))
        .arg(dir)
        .arg(package.join("node_modules/typescript"))
        .output()
        .expect("node runs");
    assert!(out.status.success(), "ts-runner.mjs failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("the runner prints JSON")
}
